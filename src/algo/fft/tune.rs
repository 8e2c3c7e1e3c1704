//! The FFT's search space, by plan. One workgroup (complex FFTs whose values fit workgroup
//! memory): the kernel, FFTs per workgroup, FFTs in turn and elements per invocation. The large
//! plan (bigger sizes, real input): the first pass's size N1 around √N and the exchange's parts.
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

/// Complex sizes whose values fit the smallest workgroup memory a GPU gives (48 KiB).
const ONE_WORKGROUP_MAX: usize = 4096;

impl Options {
    pub(crate) fn space(&self, variant: &str, _n: usize) -> Space {
        let Some(size) = self.size else {
            return Space::default();
        };
        if variant.parse() != Ok(Variant::Workgroup) || !size.is_power_of_two() || size < 4 {
            return Space::default();
        }
        const KEY: &[&str] = &["size", "real", "real_pair", "order", "inverse"];
        if !self.real && !self.real_pair && size <= ONE_WORKGROUP_MAX {
            return Space {
                key: KEY,
                knobs: vec![
                    Knob::new("kernel", ["radix", "fast"]),
                    Knob::new("ffts_per_workgroup", [1, 2, 4, 8]),
                    Knob::new("sequential_ffts", [1, 2, 4, 8, 16]),
                    Knob::new("elements_per_invocation", [8, 16, 4]),
                ],
            };
        }
        let k = size.trailing_zeros() as usize;
        let mut split = vec![
            1usize << (k / 2),
            1 << (k / 2 + 1),
            1 << (k / 2).saturating_sub(1),
        ];
        if self.real {
            split.push((size / 256).max(2));
        }
        split.retain(|&n1| (2..=8192).contains(&n1) && size / n1 >= 2);
        split.dedup();
        Space {
            key: KEY,
            knobs: vec![
                Knob::new("split", split),
                Knob::new("exchange_parts", [1, 2, 4]),
            ],
        }
    }
}
