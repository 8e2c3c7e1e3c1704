//! Which workgroups a recording run records. Where every access of a run fits the record log,
//! all of them; past that, a sample of each pass's workgroups, every access of each sampled
//! workgroup recorded exactly on the GPU, and the analysis weights them up to the whole grid.
//!
//! A pass's sample has two strata: the *fixed* workgroups (the first [`FIRST`] and the last), which
//! are often of another kind (a look-back's first tile, a histogram's or a tail's last
//! workgroup) and stand for themselves (weight 1); and the *rest*, at an even stride: the grid
//! between them cut into blocks of a power of two (the largest that gives at least the fraction
//! asked for), one workgroup recorded from each, standing for its block. Block j records the
//! workgroup at offset (u + j) mod its length, u drawn from `--seed`: consecutive blocks take
//! consecutive offsets, so any 2^k consecutive blocks cover the residues mod 2^k alike and a grid
//! whose workgroups alternate in kind (every other one idle in a ladder phase: patterns of period
//! 2, 4, …) is sampled in proportion; longer periods fall on whole blocks. (Picks half of them drawn
//! independently at random missed such a grid's requests by 5 % at a quarter of the grid.)

use crate::error::{Error, Result};
use serde::Serialize;

/// The first workgroups of every pass that are always recorded.
pub const FIRST: u32 = 4;
/// The fewest workgroups a sample records at first: grids up to this size are recorded whole (a few
/// workgroups of different kinds would weigh too much in a smaller sample).
pub const MIN_SAMPLED: u64 = 64;
/// The fewest a sample may go down to where a workgroup makes so many accesses that
/// [`MIN_SAMPLED`] of them overflow the log (a sorting network's 8192-key tile: 1.6 million).
pub const MIN_FLOOR: u64 = 8;
/// Workgroup ids fit 22 bits of a record (local indices take 10: at most 1024 invocations).
pub const MAX_WORKGROUPS: u64 = 1 << 22;

/// What `--lens-sample` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SampleSpec {
    /// Every workgroup where the log holds the run, else a sample that fits it.
    Auto,
    /// Every workgroup (an error where the log cannot hold the run).
    All,
    /// This fraction of each pass's grid (0 < f ≤ 1), the fixed workgroups besides.
    Fraction(f64),
}

impl SampleSpec {
    /// `auto`, `all`, a fraction `0.01` or `1/256`.
    pub fn parse(s: &str) -> Result<SampleSpec> {
        let bad = || {
            Error::input(format!(
                "--lens-sample must be auto, all, a fraction like 0.01 or 1/256 (0 < f <= 1); got '{s}'"
            ))
        };
        let f = match s.trim() {
            "auto" => return Ok(SampleSpec::Auto),
            "all" => return Ok(SampleSpec::All),
            t => match t.split_once('/') {
                Some((a, b)) => {
                    let (a, b): (f64, f64) = (
                        a.trim().parse().map_err(|_| bad())?,
                        b.trim().parse().map_err(|_| bad())?,
                    );
                    a / b
                }
                None => t.parse::<f64>().map_err(|_| bad())?,
            },
        };
        if !(f > 0.0 && f <= 1.0) {
            return Err(bad());
        }
        Ok(SampleSpec::Fraction(f))
    }
}

/// One pass's sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PassSample {
    /// Workgroups in the pass's grid.
    pub workgroups: u64,
    /// Workgroups recorded.
    pub sampled: u64,
    /// The fixed stratum (weight 1), sorted.
    pub fixed: Vec<u32>,
    /// The rest: one workgroup from each block of `stride` workgroups (a power of two), block j
    /// at offset (shift + j) mod stride, `shift` drawn from the seed.
    pub stride: u64,
    pub shift: u64,
    /// What one recorded workgroup of the rest stands for (1 where every workgroup is recorded):
    /// its block's length, `stride`, or `tail_weight` from workgroup `tail_from` on (the last,
    /// shorter block).
    pub weight: f64,
    pub tail_from: u64,
    pub tail_weight: f64,
    /// The bitmap the recording build tests (bit w of word w / 32: workgroup w is recorded).
    #[serde(skip)]
    pub bits: Vec<u32>,
}

impl PassSample {
    /// Every workgroup of a grid of `g`.
    pub fn all(g: u64) -> PassSample {
        let mut bits = vec![u32::MAX; g.div_ceil(32) as usize];
        if !g.is_multiple_of(32)
            && let Some(last) = bits.last_mut()
        {
            *last = (1u32 << (g % 32)) - 1;
        }
        PassSample {
            workgroups: g,
            sampled: g,
            fixed: Vec::new(),
            stride: 1,
            shift: 0,
            weight: 1.0,
            tail_from: g,
            tail_weight: 1.0,
            bits,
        }
    }

    /// `fraction` of a grid of `g` workgroups (at least `min`), the offsets shifted by `seed`.
    pub fn choose(g: u64, fraction: f64, seed: u64, min: u64) -> PassSample {
        let fixed: Vec<u32> = (0..FIRST as u64)
            .chain([g.saturating_sub(1)])
            .filter(|&w| w < g)
            .map(|w| w as u32)
            .collect::<std::collections::BTreeSet<u32>>()
            .into_iter()
            .collect();
        let want = ((fraction * g as f64).ceil() as u64).max(min.max(fixed.len() as u64 + 1));
        if want >= g {
            return PassSample::all(g);
        }
        let mut bits = vec![0u32; g.div_ceil(32) as usize];
        let set = |bits: &mut Vec<u32>, w: u64| {
            let (i, b) = ((w / 32) as usize, 1u32 << (w % 32));
            let fresh = bits[i] & b == 0;
            bits[i] |= b;
            fresh
        };
        for &w in &fixed {
            set(&mut bits, w as u64);
        }
        // The rest of the grid lies between the first FIRST and the last workgroup, cut into
        // blocks of a power of two (aligned patterns then fall alike in every block).
        let (lo, span) = (FIRST as u64, g - fixed.len() as u64);
        let per = (span / (want - fixed.len() as u64)).max(1);
        let stride = 1u64 << (63 - per.leading_zeros());
        let blocks = span.div_ceil(stride);
        let mut rng = seed ^ g.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let shift = splitmix(&mut rng) % stride;
        for j in 0..blocks {
            let len = stride.min(span - j * stride);
            set(&mut bits, lo + j * stride + (shift + j) % len);
        }
        let tail = span - (blocks - 1) * stride;
        PassSample {
            workgroups: g,
            sampled: fixed.len() as u64 + blocks,
            fixed,
            stride,
            shift,
            weight: stride as f64,
            tail_from: lo + (blocks - 1) * stride,
            tail_weight: tail as f64,
            bits,
        }
    }

    /// What the recording build reads ([`super::sites::recorder`]'s `lens_pick`): per word of
    /// the bitmap, the word and the bits set before it.
    pub fn pick_words(&self) -> Vec<u32> {
        let mut before = 0u32;
        self.bits
            .iter()
            .flat_map(|&b| {
                let w = [b, before];
                before += b.count_ones();
                w
            })
            .collect()
    }

    /// The recorded workgroups, in order (a workgroup's rank among them places its block).
    pub fn recorded(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(i, &b)| {
            (0..32u32)
                .filter(move |k| b >> k & 1 == 1)
                .map(move |k| i as u32 * 32 + k)
        })
    }

    pub fn is_all(&self) -> bool {
        self.sampled == self.workgroups
    }

    /// What the accesses of workgroup `wg` stand for.
    pub fn weight_of(&self, wg: u32) -> f64 {
        if self.is_all() || self.fixed.binary_search(&wg).is_ok() {
            1.0
        } else if wg as u64 >= self.tail_from {
            self.tail_weight
        } else {
            self.weight
        }
    }
}

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How one recording run samples: the fraction of every grid (1: all), the seed, and the fewest
/// workgroups a sampled grid records.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    pub fraction: f64,
    pub seed: u64,
    pub min: u64,
}

impl Sampling {
    /// `fraction` of every grid, at least [`MIN_SAMPLED`] workgroups.
    pub fn new(fraction: f64, seed: u64) -> Sampling {
        Sampling {
            fraction,
            seed,
            min: MIN_SAMPLED,
        }
    }

    /// This sampling scaled by `by` (< 1): the fraction, rounded down to a power of two (a
    /// sample's stride is one: 0.27 of 1/512 would still sample one workgroup in 1024, half the
    /// cut asked for, and a third run followed), and the fewest workgroups down to [`MIN_FLOOR`]
    /// (a grid at its fewest makes fewer accesses only with fewer workgroups).
    pub fn scaled(&self, by: f64) -> Sampling {
        Sampling {
            fraction: (self.fraction * by).log2().floor().exp2(),
            min: ((self.min as f64 * by).ceil() as u64).max(MIN_FLOOR),
            ..*self
        }
    }

    /// Whether half this sampling records fewer workgroups in some pass of `samples` (taken at
    /// this sampling): where it does not, every pass is at its fewest workgroups.
    pub fn can_shrink<'a>(&self, samples: impl IntoIterator<Item = &'a PassSample>) -> bool {
        let half = self.scaled(0.5);
        samples
            .into_iter()
            .any(|s| half.pass(s.workgroups).sampled < s.sampled)
    }

    pub fn pass(&self, g: u64) -> PassSample {
        if self.fraction >= 1.0 {
            PassSample::all(g)
        } else {
            PassSample::choose(g, self.fraction, self.seed, self.min)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(bits: &[u32]) -> u64 {
        bits.iter().map(|b| b.count_ones() as u64).sum()
    }

    /// The recording build's view of a sample: each bitmap word with the bits set before it (a
    /// recorded workgroup's rank places its block), and the recorded workgroups in rank order.
    #[test]
    fn pick_words_rank_the_recorded_workgroups() {
        let s = PassSample::choose(1000, 0.05, 3, 8);
        let words = s.pick_words();
        assert_eq!(words.len(), 2 * s.bits.len());
        let recorded: Vec<u32> = s.recorded().collect();
        assert_eq!(recorded.len() as u64, s.sampled);
        assert!(recorded.windows(2).all(|w| w[0] < w[1]));
        for (rank, &wg) in recorded.iter().enumerate() {
            let (bits, before) = (
                words[2 * (wg as usize / 32)],
                words[2 * (wg as usize / 32) + 1],
            );
            assert_eq!(bits >> (wg % 32) & 1, 1);
            let below = (bits & ((1u32 << (wg % 32)) - 1)).count_ones();
            assert_eq!((before + below) as usize, rank, "workgroup {wg}");
        }
        assert_eq!(
            PassSample::all(40).recorded().collect::<Vec<_>>(),
            (0..40).collect::<Vec<_>>()
        );
    }

    /// The FFT's plan at 2^24 words (grids of 512 and 1024) sampled at 1/128 with the fewest at
    /// MIN_FLOOR is at its fewest workgroups: recording it again smaller would record the same.
    #[test]
    fn a_sample_at_its_fewest_cannot_shrink() {
        let s = Sampling {
            min: MIN_FLOOR,
            ..Sampling::new(1.0 / 128.0, 1)
        };
        let fft = [s.pass(512), s.pass(1024)];
        assert!(!s.can_shrink(&fft));
        // At the first fewest (64), a grid of 512 can still go down towards MIN_FLOOR.
        assert!(Sampling::new(1.0 / 32.0, 1).can_shrink(&[Sampling::new(1.0 / 32.0, 1).pass(512)]));
        let big = [s.pass(512), s.pass(1 << 16)];
        assert!(s.can_shrink(&big));
        // Recorded whole, a grid past the fewest a sample takes can shrink; one within it cannot.
        let all = Sampling::new(1.0, 1);
        assert!(all.can_shrink(&[all.pass(256)]));
        assert!(all.can_shrink(&[all.pass(64)]));
        let floor = Sampling {
            min: MIN_FLOOR,
            ..all
        };
        assert!(!floor.can_shrink(&[floor.pass(8)]));
        // Scaled by 0.27 from 1/512, a ladder phase's grid of 2^20 records a quarter as many
        // workgroups (not half: its stride moves from 512 to 2048).
        let s = Sampling::new(1.0 / 512.0, 1);
        let (a, b) = (s.pass(1 << 20), s.scaled(0.27).pass(1 << 20));
        assert_eq!((a.stride, b.stride), (512, 2048));
    }

    #[test]
    fn specs_parse_and_bad_ones_are_refused() {
        assert_eq!(SampleSpec::parse("auto").unwrap(), SampleSpec::Auto);
        assert_eq!(SampleSpec::parse("all").unwrap(), SampleSpec::All);
        assert_eq!(
            SampleSpec::parse("1/256").unwrap(),
            SampleSpec::Fraction(1.0 / 256.0)
        );
        assert_eq!(SampleSpec::parse("0.5").unwrap(), SampleSpec::Fraction(0.5));
        for bad in ["0", "1.5", "-0.1", "x", "1/0", "nan"] {
            assert!(SampleSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn samples_keep_the_fixed_workgroups_and_weigh_up_to_the_grid() {
        for g in [1u64, 5, 13, 64, 65, 100, 4096, 1 << 20] {
            for f in [0.001, 0.1, 0.5, 1.0] {
                let s = Sampling::new(f, 3).pass(g);
                assert_eq!(count(&s.bits), s.sampled, "g {g} f {f}");
                assert_eq!(s.bits.len() as u64, g.div_ceil(32));
                // Every fixed workgroup is recorded, and the weights sum to the grid.
                for &w in &s.fixed {
                    assert_eq!(s.bits[w as usize / 32] >> (w % 32) & 1, 1);
                }
                let total: f64 = (0..g)
                    .filter(|&w| s.bits[w as usize / 32] >> (w % 32) & 1 == 1)
                    .map(|w| s.weight_of(w as u32))
                    .sum();
                assert!((total - g as f64).abs() < 1e-6, "g {g} f {f}: {total}");
                if !s.is_all() {
                    assert!(s.fixed.contains(&0) && s.fixed.contains(&(g as u32 - 1)));
                    assert!(s.sampled as f64 >= f * g as f64, "g {g} f {f}");
                }
            }
        }
        // The offsets follow the seed.
        let a = PassSample::choose(1 << 16, 0.01, 1, MIN_SAMPLED);
        let b = PassSample::choose(1 << 16, 0.01, 2, MIN_SAMPLED);
        assert_ne!(a.bits, b.bits);
        assert_eq!(
            a.bits,
            PassSample::choose(1 << 16, 0.01, 1, MIN_SAMPLED).bits
        );
    }
}
