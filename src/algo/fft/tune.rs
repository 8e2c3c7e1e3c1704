//! The FFT's search space, by plan. One workgroup (complex FFTs whose values fit workgroup
//! memory): the kernel (the large plan's one-pass kernel among them), FFTs per workgroup, FFTs
//! in turn, elements per invocation and that kernel's exchange parts. The large
//! plan (bigger sizes, real input): the first pass's size N1 around √N, the exchange's parts and,
//! in one pass, the elements per invocation and the FFTs in turn; where the plan chains its
//! phases through L2, how far phase 1 runs behind and the FFTs in turn.
use super::codegen::MAX_E;
use super::large;
use super::large_chain::{CHAIN_BYTES, CHAIN_BYTES_REAL};
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
            // The large plan's one-pass kernel too: its exchange in parts halves the
            // workgroup memory; on the H200 it ran 2048 points at 1.011× copy, the radix
            // kernel at 0.918×. The other kernels refuse `exchange_parts`.
            let mut knobs = vec![Knob::new("kernel", ["radix", "fast", "large"])];
            // That kernel swizzled, one FFT at a time (its fewest registers): a pair, as neither
            // pays alone where the array's padding costs a workgroup an SM. H200, 4096 points in
            // halves: S = 4 padded 0.534 ms, swizzled 0.536; S = 1 padded 0.609, swizzled 0.524.
            // Right after the kernel, so that a whole round's share of time reaches it (last, it
            // did not at 4096 points); `auto` beside it, so that the walk can go back to the
            // padding (2048 points: 0.520 ms one at a time padded, 0.523 swizzled).
            if size >= 2048 {
                knobs.push(
                    Knob::new("exchange_layout", ["swizzled", "auto"])
                        .with("kernel", "large")
                        .with("sequential_ffts", 1),
                );
            }
            knobs.extend([
                Knob::new("ffts_per_workgroup", [1, 2, 4, 8]),
                Knob::new("sequential_ffts", [1, 2, 4, 8, 16]),
                Knob::new("elements_per_invocation", [8, 16, 4]),
                Knob::new("exchange_parts", [2, 1, 4]),
            ]);
            return Space { key: KEY, knobs };
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
        // Real input's N/256 can repeat an earlier value (128 at 32768 reals): try each once.
        distinct(&mut split);
        let mut knobs = vec![
            Knob::new("split", split),
            Knob::new("exchange_parts", [1, 2, 4]),
        ];
        // FFTs in turn where the plan is one pass (its defaults are the H100's; on the H200 2048
        // reals ran 4 % faster at 8 than at 2). Past one pass they are the passes' own, and
        // the tries would not fit `tune`'s five minutes.
        let points = if self.real { size / 2 } else { size };
        if points <= LARGE_ONE_PASS_MAX {
            // The one-pass kernel's E (values an invocation holds) is its registers per thread
            // against threads per FFT; its defaults (32 from 8192 points, 16 for smaller real
            // input) are the H100's. Half and twice the default; real input names the large
            // kernel, as E alone asks for the workgroup kernel there.
            let e = large::default_e(points, self.real && !self.real_pair);
            let es: Vec<usize> = [e / 2, e * 2]
                .into_iter()
                .filter(|&x| (2..=MAX_E).contains(&x) && x <= points / 2)
                .collect();
            if !es.is_empty() {
                let knob = Knob::new("elements_per_invocation", es);
                knobs.push(if self.real || self.real_pair {
                    knob.with("kernel", "large")
                } else {
                    knob
                });
            }
            knobs.push(Knob::new("sequential_ffts", [8, 4, 16, 2, 1]));
        }
        // The lag of a whole-FFT chain (the default from 2^15 to 2^18 complex points, 2^16 real
        // ones) was set on the H100; on the H200 2^17 points ran 1.128 ms at its 8 MiB and 1.056
        // at 12 MiB. Tried after the split, so a split that wins (two plain passes) is kept and
        // the lags then try a chained columns pass.
        let chain_top = if self.real { 16 } else { 18 };
        if (15..=chain_top).contains(&points.trailing_zeros()) && !self.real_pair {
            let (default, mib): (usize, &[usize]) = if self.real {
                (CHAIN_BYTES_REAL, &[8, 4, 12])
            } else {
                (CHAIN_BYTES, &[12, 6, 16, 4])
            };
            let lag = |b: usize| (b / (8 * points)).max(1);
            let mut lags: Vec<usize> = mib.iter().map(|&m| lag(m << 20)).collect();
            lags.retain(|&l| l != lag(default));
            distinct(&mut lags);
            knobs.push(Knob::new("chain", lags));
            knobs.push(Knob::new("sequential_ffts", [2, 8]));
        }
        Space { key: KEY, knobs }
    }
}

/// Keeps the first of equal values, in order.
fn distinct(v: &mut Vec<usize>) {
    let mut seen = Vec::with_capacity(v.len());
    v.retain(|&x| {
        let new = !seen.contains(&x);
        seen.push(x);
        new
    });
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

    /// FFTs in turn and E are searched where the large plan is one pass, not past it.
    #[test]
    fn the_large_plans_one_pass_searches_ffts_in_turn() {
        for (size, real) in [(8192, false), (16384, false), (2048, true), (32768, true)] {
            assert_eq!(
                fields(size, real),
                [
                    "split",
                    "exchange_parts",
                    "elements_per_invocation",
                    "sequential_ffts"
                ],
                "{size} real={real}"
            );
        }
        for (size, real) in [(1 << 19, false), (1 << 18, true)] {
            assert_eq!(
                fields(size, real),
                ["split", "exchange_parts"],
                "{size} real={real}"
            );
        }
        assert!(fields(4096, false).contains(&"sequential_ffts"));
    }

    /// One-workgroup sizes search the large plan's one-pass kernel and its exchange parts beside
    /// the workgroup kernels (the H200 runs 1024 – 4096 points fastest on it, in halves).
    #[test]
    fn one_workgroup_sizes_search_the_large_kernel() {
        for size in [256, 1024, 4096] {
            let o = Options {
                size: Some(size),
                ..Options::default()
            };
            let space = o.space("workgroup", 1 << 27);
            let mut want = vec![
                "kernel",
                "ffts_per_workgroup",
                "sequential_ffts",
                "elements_per_invocation",
                "exchange_parts",
            ];
            if size >= 2048 {
                want.insert(1, "exchange_layout");
            }
            assert_eq!(
                space.knobs.iter().map(|k| k.field).collect::<Vec<_>>(),
                want,
                "{size}"
            );
            assert!(space.knobs[0].values.contains(&"large".into()), "{size}");
        }
    }

    /// The one-pass kernel's E: half and twice its default; with real input beside
    /// `kernel = large` (E alone asks for the workgroup kernel there), and every choice accepted.
    #[test]
    fn the_one_pass_kernels_e_is_searched_around_its_default() {
        for (size, real, es, with) in [
            (8192, false, [16, 64], false),
            (16384, false, [16, 64], false),
            (2048, true, [8, 32], true),
            (8192, true, [8, 32], true),
            (16384, true, [16, 64], true),
            (32768, true, [16, 64], true),
        ] {
            let o = Options {
                size: Some(size),
                real,
                ..Options::default()
            };
            let space = o.space("workgroup", 1 << 27);
            let k = space
                .knobs
                .iter()
                .find(|k| k.field == "elements_per_invocation")
                .unwrap();
            assert_eq!(
                k.values,
                es.map(serde_json::Value::from),
                "{size} real={real}"
            );
            assert_eq!(k.with.iter().any(|w| w.0 == "kernel"), with, "{size}");
            let algo = crate::algo::AlgoOptions::Fft(o);
            for v in &k.values {
                let mut choice = serde_json::Map::new();
                k.set(&mut choice, v);
                let (c, set) = algo.with_choice(&choice, true).unwrap();
                assert_eq!(set.len(), choice.len(), "{size}: {set:?}");
                let crate::algo::AlgoOptions::Fft(c) = c else {
                    unreachable!()
                };
                assert_eq!(c.elements_per_invocation, v.as_u64().map(|e| e as usize));
            }
        }
    }

    /// Every split is tried once, real input's N/256 included.
    #[test]
    fn splits_are_distinct() {
        for size in [1 << 15, 1 << 16, 1 << 17, 1 << 20] {
            let o = Options {
                size: Some(size),
                real: true,
                ..Options::default()
            };
            let v = &o.space("workgroup", 1 << 28).knobs[0].values;
            let mut u = v.clone();
            u.sort_by_key(|x| x.as_u64());
            u.dedup();
            assert_eq!(u.len(), v.len(), "{size}: {v:?}");
        }
    }

    /// Where the plan chains whole FFTs, the lag (in FFTs, never the default's) and the FFTs in
    /// turn are searched after the split.
    #[test]
    fn chained_plans_search_the_lag() {
        for (size, real, default_lag) in [
            (1 << 15, false, 32),
            (1 << 17, false, 8),
            (1 << 18, false, 4),
            (1 << 16, true, 24),
            (1 << 17, true, 12),
        ] {
            let o = Options {
                size: Some(size),
                real,
                ..Options::default()
            };
            let space = o.space("workgroup", 1 << 27);
            let names: Vec<_> = space.knobs.iter().map(|k| k.field).collect();
            assert_eq!(
                names,
                ["split", "exchange_parts", "chain", "sequential_ffts"],
                "{size} real={real}"
            );
            let lags: Vec<u64> = space.knobs[2]
                .values
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert!(!lags.is_empty() && !lags.contains(&default_lag), "{lags:?}");
            assert!(lags.iter().all(|&l| l >= 1), "{lags:?}");
        }
        // 2^17 points: 12 MiB of FFTs behind (the H200's best) is 12 FFTs.
        let o = Options {
            size: Some(1 << 17),
            ..Options::default()
        };
        assert_eq!(o.space("workgroup", 1 << 27).knobs[2].values[0], 12);
    }
}
