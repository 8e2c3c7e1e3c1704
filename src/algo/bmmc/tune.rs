//! The tiled kernel's search space: the tile (log2 words per workgroup; default 12).
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str) -> Space {
        match variant.parse() {
            Ok(Variant::Tiled) => Space {
                key: &[],
                knobs: vec![Knob::new("tile_bits", [12, 11, 13, 10])],
            },
            _ => Space::default(),
        }
    }
}
