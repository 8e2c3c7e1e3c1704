//! The tiled kernel's search space: the tile (log2 words), its threads, the tiles a workgroup
//! walks and the order of the tiles.
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str) -> Space {
        match variant.parse() {
            Ok(Variant::Tiled) => Space {
                key: &[],
                knobs: vec![
                    Knob::new("tile_bits", [12, 11, 13, 10]),
                    Knob::new("tile_threads", [256, 128, 512]),
                    Knob::new("tiles_per_workgroup", [4, 2, 8, 1]),
                    Knob::new("tile_vector", [4, 1]),
                    Knob::new("group_order", ["auto", "output", "input"]),
                ],
            },
            _ => Space::default(),
        }
    }
}
