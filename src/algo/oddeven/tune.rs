//! The tiled sorts' search space: the workgroup tile, its threads, and the register kernel's
//! keys per invocation, tiles per workgroup and workgroup buffers. Segmented sorts are keyed by
//! their segment.
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str) -> Space {
        match variant.parse() {
            Ok(Variant::Batcher | Variant::MergeSplit) => Space {
                key: &["segment", "descending"],
                knobs: vec![
                    Knob::new("tile", [8192, 4096, 2048]),
                    Knob::new("threads", [512, 256, 1024]),
                    Knob::new("keys_per_invocation", [32, 16]),
                    Knob::new("tiles_per_workgroup", [1, 2, 4, 8]),
                    Knob::new("exchange_buffers", [1, 2]),
                ],
            },
            _ => Space::default(),
        }
    }
}
