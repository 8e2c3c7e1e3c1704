//! Onesweep's search space: keys per thread, threads per workgroup (the tile is their product),
//! how far ahead the L2 prefetch reaches, and the look-back's window. The digit width changes the
//! passes, not the tile, and stays the user's.
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str) -> Space {
        match variant.parse() {
            Ok(Variant::Onesweep) => Space {
                key: &["values", "descending"],
                knobs: vec![
                    Knob::new("keys_per_thread", [16, 20, 12, 8]),
                    Knob::new("workgroup_size", [640, 512, 768, 384, 1024]),
                    Knob::new("prefetch", [128, 64, 256]),
                    Knob::new("look_back_window", [8, 4, 6, 12]),
                ],
            },
            _ => Space::default(),
        }
    }
}
