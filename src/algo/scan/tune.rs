//! The tiled scans' search space: threads per workgroup and vec4 per thread (a tile is
//! 4 × per_thread × workgroup_size elements). Inclusive and exclusive are tuned apart. The
//! built-in default (256 threads; vec4 a thread by size on the subgroup `decoupled` path) is
//! timed first, so the knobs list only other values.
use super::options::subgroup_per_thread;
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str, n: usize) -> Space {
        let per_thread = match variant.parse() {
            // Outward from the default at n: d - 1, d + 1, d - 2, d + 2, d - 3.
            Ok(Variant::Decoupled) => {
                let d = subgroup_per_thread(n, self.exclusive) as i32;
                [-1, 1, -2, 2, -3]
                    .into_iter()
                    .map(|s| d + s)
                    .filter(|p| (1..=16).contains(p))
                    .map(|p| p as u32)
                    .collect()
            }
            Ok(Variant::ReduceThenScan) => vec![4, 2],
            _ => return Space::default(),
        };
        Space {
            key: &["exclusive"],
            knobs: vec![
                Knob::new("workgroup_size", [512, 128, 1024]),
                Knob::new("per_thread", per_thread),
            ],
        }
    }
}
