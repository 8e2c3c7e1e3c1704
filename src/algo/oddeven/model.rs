//! CPU model of the odd-even sorts (seed 002), stage by stage: the reference every GPU result and
//! every traced stage is checked against.
//!
//! Keys: every element is a 32-bit pattern; sorting compares order-preserving u32 keys ([`key`]).
//! f32 uses the total order -NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN (NaNs by payload).

use crate::data::DType;

/// The order-preserving u32 key of an element (ascending; `desc` complements it).
pub fn key(dtype: DType, desc: bool, bits: u32) -> u32 {
    let k = match dtype {
        DType::U32 => bits,
        DType::I32 => bits ^ 0x8000_0000,
        DType::F32 => {
            if bits & 0x8000_0000 != 0 {
                !bits
            } else {
                bits ^ 0x8000_0000
            }
        }
    };
    if desc { !k } else { k }
}

/// The CPU reference: a sort by key (the key is a bijection, so the sorted order is unique and any
/// correct sort gives these exact bits).
pub fn sort(dtype: DType, desc: bool, bits: &[u32]) -> Vec<u32> {
    let mut v = bits.to_vec();
    v.sort_unstable_by_key(|&b| key(dtype, desc, b));
    v
}

/// `sort` applied to every segment of length `seg`.
pub fn sort_segments(dtype: DType, desc: bool, bits: &[u32], seg: usize) -> Vec<u32> {
    bits.chunks(seg.max(1))
        .flat_map(|c| sort(dtype, desc, c))
        .collect()
}

pub fn is_sorted(dtype: DType, desc: bool, bits: &[u32], seg: usize) -> bool {
    bits.chunks(seg.max(1)).all(|c| {
        c.windows(2)
            .all(|w| key(dtype, desc, w[0]) <= key(dtype, desc, w[1]))
    })
}

/// One compare-exchange: positions (i, j), i < j, and whether it swapped.
pub type Pair = (u32, u32, bool);

/// One stage of a trace: the array after it and the compare-exchanges it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub data: Vec<u32>,
    pub pairs: Vec<Pair>,
}

fn cex(v: &mut [u32], dtype: DType, desc: bool, a: usize, b: usize) -> bool {
    let s = key(dtype, desc, v[a]) > key(dtype, desc, v[b]);
    if s {
        v.swap(a, b);
    }
    s
}

/// The pairs (a, a+1) of transposition phase `ph` inside one segment of length `seg`: even phases
/// start at 0, odd phases at 1.
pub fn phase_pairs(ph: usize, seg: usize) -> impl Iterator<Item = usize> {
    (ph % 2..seg.saturating_sub(1)).step_by(2)
}

/// The rule a network stage's compare-exchanges follow: a trace stores the rule and the swap
/// flags, and the pairs are derived from it (see `trace::Pairs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Transposition phase `phase` (0-based): pairs (a, a + 1), a ≡ phase (mod 2), inside every
    /// segment of `seg`.
    Phase { phase: usize, seg: usize },
    /// Batcher's stage (p, k): the comparators (a, a + k) of [`stage_comparators`] inside every
    /// segment of `seg` (padded to the next power of two).
    Batcher { p: usize, k: usize, seg: usize },
}

impl Rule {
    /// The stride of every pair (j − i).
    pub fn stride(self) -> usize {
        match self {
            Rule::Phase { .. } => 1,
            Rule::Batcher { k, .. } => k,
        }
    }

    pub fn seg(self) -> usize {
        match self {
            Rule::Phase { seg, .. } | Rule::Batcher { seg, .. } => seg.max(1),
        }
    }

    /// The lower positions a of one segment's pairs (a, a + stride), ascending.
    pub fn offsets(self) -> Vec<usize> {
        match self {
            Rule::Phase { phase, seg } => phase_pairs(phase, seg).collect(),
            Rule::Batcher { p, k, seg } => stage_comparators(p, k, seg).collect(),
        }
    }

    /// Every pair (i, j) of the stage on `n` elements, in trace order (segment by segment).
    pub fn pairs(self, n: usize) -> impl Iterator<Item = (usize, usize)> {
        let (d, offs) = (self.stride(), self.offsets());
        (0..n).step_by(self.seg()).flat_map(move |base| {
            offs.clone()
                .into_iter()
                .map(move |a| (base + a, base + a + d))
        })
    }

    /// How many pairs the stage has on `n` elements.
    pub fn count(self, n: usize) -> usize {
        self.offsets().len() * n.div_ceil(self.seg())
    }

    /// Apply the stage to `v`: the swap flag of every pair, in [`Rule::pairs`] order.
    pub fn apply(self, dtype: DType, desc: bool, v: &mut [u32]) -> Vec<bool> {
        let (d, offs) = (self.stride(), self.offsets());
        let mut swapped = Vec::with_capacity(offs.len() * v.len().div_ceil(self.seg()));
        for base in (0..v.len()).step_by(self.seg()) {
            for &a in &offs {
                swapped.push(cex(v, dtype, desc, base + a, base + a + d));
            }
        }
        swapped
    }
}

/// The network's stages applied one by one: the array after each and its pairs.
fn network(dtype: DType, desc: bool, input: &[u32], rules: &[Rule]) -> Vec<Phase> {
    let mut v = input.to_vec();
    rules
        .iter()
        .map(|&r| {
            let swapped = r.apply(dtype, desc, &mut v);
            let pairs = r
                .pairs(v.len())
                .zip(swapped)
                .map(|((i, j), s)| (i as u32, j as u32, s))
                .collect();
            Phase {
                data: v.clone(),
                pairs,
            }
        })
        .collect()
}

/// The `seg` phases of odd-even transposition on segments of `seg`.
pub fn transposition_rules(seg: usize) -> Vec<Rule> {
    (0..seg).map(|phase| Rule::Phase { phase, seg }).collect()
}

/// Odd-even transposition sort: `seg` phases (every segment of length `seg` on its own; `seg` = n
/// for the whole array). Phase 0 compares the even pairs.
pub fn transposition(dtype: DType, desc: bool, input: &[u32], seg: usize) -> Vec<Phase> {
    network(dtype, desc, input, &transposition_rules(seg))
}

/// The stages (p, k) of Batcher's odd-even merge sort network on `pad` (a power of two) positions.
pub fn batcher_stages(pad: usize) -> Vec<(usize, usize)> {
    let mut st = Vec::new();
    let mut p = 1;
    while p < pad {
        let mut k = p;
        while k >= 1 {
            st.push((p, k));
            k /= 2;
        }
        p *= 2;
    }
    st
}

/// Is (a, a + k) a comparator of stage (p, k)? (Positions inside one padded segment.)
pub fn is_comparator(p: usize, k: usize, a: usize) -> bool {
    if k == p {
        a & p == 0
    } else {
        a & k != 0 && a / (2 * p) == (a + k) / (2 * p)
    }
}

/// The comparators (a, a + k) of stage (p, k) inside a segment of `len` real elements (padded to
/// `pad`): those whose upper position exists (the others face a +inf sentinel: no-ops). Ascending;
/// enumerated run by run (the positions [`is_comparator`] accepts, without testing each one).
pub fn stage_comparators(p: usize, k: usize, len: usize) -> impl Iterator<Item = usize> {
    let end = len.saturating_sub(k);
    // Runs of k consecutive lower positions: k = p, every run at the start of a 2p block;
    // k < p, from k past the block's start every 2k, while the upper ends stay in the block.
    let (first, last) = if k == p { (0, p) } else { (k, 2 * p - k) };
    (0..end)
        .step_by(2 * p)
        .flat_map(move |b| (b + first..b + last).step_by(2 * k))
        .flat_map(move |s| s..(s + k).min(end))
}

/// The stages of Batcher's network on segments of `seg`, as rules.
pub fn batcher_rules(seg: usize) -> Vec<Rule> {
    batcher_stages(seg.next_power_of_two())
        .into_iter()
        .map(|(p, k)| Rule::Batcher { p, k, seg })
        .collect()
}

/// Batcher's odd-even merge sort, stage by stage, on every segment of length `seg` (`seg` = n for
/// the whole array).
pub fn batcher(dtype: DType, desc: bool, input: &[u32], seg: usize) -> Vec<Phase> {
    network(dtype, desc, input, &batcher_rules(seg))
}

/// The number of compare-exchanges of Batcher's network on segments of `seg` (total over `n`).
pub fn batcher_work(n: usize, seg: usize) -> u64 {
    let pad = seg.next_power_of_two();
    let per: u64 = batcher_stages(pad)
        .into_iter()
        .map(|(p, k)| stage_comparators(p, k, seg).count() as u64)
        .sum();
    per * (n / seg.max(1)) as u64
}

/// Block odd-even transposition (Baudet–Stevenson) with blocks of `block`: stage 0 sorts every
/// block, then `m` = ⌈n / block⌉ phases merge-split the block pairs (2i, 2i+1) (even phases) or
/// (2i+1, 2i+2) (odd phases): the lower half of the merged pair stays left. Pairs are block indices
/// with a flag "something moved".
pub fn merge_split(dtype: DType, desc: bool, input: &[u32], block: usize) -> Vec<Phase> {
    let n = input.len();
    let m = n.div_ceil(block);
    let mut v = sort_segments(dtype, desc, input, block);
    let mut out = vec![Phase {
        data: v.clone(),
        pairs: Vec::new(),
    }];
    for ph in 0..m {
        let mut pairs = Vec::new();
        let mut b = ph % 2;
        while b + 1 < m {
            let lo = b * block;
            let hi = ((b + 2) * block).min(n);
            let merged = sort(dtype, desc, &v[lo..hi]);
            let moved = merged[..] != v[lo..hi];
            v[lo..hi].copy_from_slice(&merged);
            pairs.push((b as u32, b as u32 + 1, moved));
            b += 2;
        }
        out.push(Phase {
            data: v.clone(),
            pairs,
        });
    }
    out
}

/// [`first_sorted`] of a network's stages, stepping one array through them (and stopping at the
/// first sorted one) instead of keeping every stage.
pub fn first_sorted_network(
    dtype: DType,
    desc: bool,
    input: &[u32],
    rules: &[Rule],
    seg: usize,
) -> Option<usize> {
    if is_sorted(dtype, desc, input, seg) {
        return Some(0);
    }
    let mut v = input.to_vec();
    rules
        .iter()
        .position(|r| {
            r.apply(dtype, desc, &mut v);
            is_sorted(dtype, desc, &v, seg)
        })
        .map(|i| i + 1)
}

/// The first stage (1-based; 0 = the input) after which every segment is sorted.
pub fn first_sorted(
    dtype: DType,
    desc: bool,
    input: &[u32],
    stages: &[Vec<u32>],
    seg: usize,
) -> Option<usize> {
    if is_sorted(dtype, desc, input, seg) {
        return Some(0);
    }
    stages
        .iter()
        .position(|s| is_sorted(dtype, desc, s, seg))
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_comparators_are_the_comparators() {
        for pad in [1usize, 2, 4, 8, 16, 64, 256] {
            for (p, k) in batcher_stages(pad) {
                for len in 0..=pad {
                    let want: Vec<usize> = (0..len.saturating_sub(k))
                        .filter(|&a| is_comparator(p, k, a))
                        .collect();
                    let got: Vec<usize> = stage_comparators(p, k, len).collect();
                    assert_eq!(got, want, "p = {p}, k = {k}, len = {len}");
                }
            }
        }
    }
}
