//! The copy's search space: vec4 per thread, then threads per workgroup. The roofline is this
//! kernel, so its shape is measured per GPU like any room's: on the H200 one vec4 a thread copies
//! 3.5 % faster than the H100's four (docs/perf/copy.md).
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

impl Options {
    pub(crate) fn space(&self, variant: &str) -> Space {
        match variant.parse() {
            Ok(Variant::Vec4) => Space {
                key: &[],
                knobs: vec![
                    Knob::new("per_thread", [2, 1, 8, 16]),
                    Knob::new("workgroup_size", [128, 512, 1024, 64]),
                ],
            },
            _ => Space::default(),
        }
    }
}
