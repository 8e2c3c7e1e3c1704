//! The tiled scans' search space: threads per workgroup and vec4 per thread (a tile is
//! 4 × per_thread × workgroup_size elements). Inclusive and exclusive are tuned apart.
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str) -> Space {
        let per_thread = match variant.parse() {
            Ok(Variant::Decoupled) => vec![7, 6, 5, 8, 4],
            Ok(Variant::ReduceThenScan) => vec![8, 4, 2],
            _ => return Space::default(),
        };
        Space {
            key: &["exclusive"],
            knobs: vec![
                Knob::new("workgroup_size", [256, 512, 128, 1024]),
                Knob::new("per_thread", per_thread),
            ],
        }
    }
}
