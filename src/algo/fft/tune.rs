//! The FFT's search space, by plan. One workgroup (complex FFTs whose values fit workgroup
//! memory): the kernel, FFTs per workgroup, FFTs in turn and elements per invocation. The large
//! plan (bigger sizes, real input): the first pass's size N1 around √N, the exchange's parts and,
//! in one pass, the FFTs in turn.
use super::{Options, Variant};
use crate::algo::tune::{Knob, Space};

/// Complex sizes whose values fit the smallest workgroup memory a GPU gives (48 KiB).
const ONE_WORKGROUP_MAX: usize = 4096;
/// Complex points the large plan runs in one pass.
const LARGE_ONE_PASS_MAX: usize = 16384;

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
        let mut knobs = vec![
            Knob::new("split", split),
            Knob::new("exchange_parts", [1, 2, 4]),
        ];
        // FFTs in turn where the plan is one pass (its defaults are the H100's; on the H200 2048
        // reals ran 4 % faster at 8 than at 2). Past one pass they are the passes' own, and
        // the tries would not fit `tune`'s five minutes.
        let points = if self.real { size / 2 } else { size };
        if points <= LARGE_ONE_PASS_MAX {
            knobs.push(Knob::new("sequential_ffts", [8, 4, 16, 2, 1]));
        }
        Space { key: KEY, knobs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(size: usize, real: bool) -> Vec<&'static str> {
        let o = Options {
            size: Some(size),
            real,
            ..Options::default()
        };
        o.space("workgroup", 1 << 27)
            .knobs
            .iter()
            .map(|k| k.field)
            .collect()
    }

    /// FFTs in turn are searched where the large plan is one pass, not past it.
    #[test]
    fn the_large_plans_one_pass_searches_ffts_in_turn() {
        for (size, real) in [(8192, false), (16384, false), (2048, true), (32768, true)] {
            assert_eq!(
                fields(size, real),
                ["split", "exchange_parts", "sequential_ffts"],
                "{size} real={real}"
            );
        }
        for (size, real) in [(32768, false), (65536, true)] {
            assert_eq!(
                fields(size, real),
                ["split", "exchange_parts"],
                "{size} real={real}"
            );
        }
        assert!(fields(4096, false).contains(&"sequential_ffts"));
    }
}
