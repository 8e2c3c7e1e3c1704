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

/// The CPU reference: a stable sort by key (the sorted order of keys is unique, so any correct sort
/// gives these exact bits).
pub fn sort(dtype: DType, desc: bool, bits: &[u32]) -> Vec<u32> {
    let mut v = bits.to_vec();
    v.sort_by_key(|&b| key(dtype, desc, b));
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

/// Odd-even transposition sort: `seg` phases (every segment of length `seg` on its own; `seg` = n
/// for the whole array). Phase 0 compares the even pairs.
pub fn transposition(dtype: DType, desc: bool, input: &[u32], seg: usize) -> Vec<Phase> {
    let mut v = input.to_vec();
    let mut out = Vec::with_capacity(seg);
    for ph in 0..seg {
        let mut pairs = Vec::new();
        for base in (0..v.len()).step_by(seg) {
            for a in phase_pairs(ph, seg) {
                let s = cex(&mut v, dtype, desc, base + a, base + a + 1);
                pairs.push(((base + a) as u32, (base + a + 1) as u32, s));
            }
        }
        out.push(Phase {
            data: v.clone(),
            pairs,
        });
    }
    out
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
/// `pad`): those whose upper position exists (the others face a +inf sentinel: no-ops).
pub fn stage_comparators(p: usize, k: usize, len: usize) -> impl Iterator<Item = usize> {
    (0..len.saturating_sub(k)).filter(move |&a| is_comparator(p, k, a))
}

/// Batcher's odd-even merge sort, stage by stage, on every segment of length `seg` (`seg` = n for
/// the whole array).
pub fn batcher(dtype: DType, desc: bool, input: &[u32], seg: usize) -> Vec<Phase> {
    let pad = seg.next_power_of_two();
    let mut v = input.to_vec();
    let mut out = Vec::new();
    for (p, k) in batcher_stages(pad) {
        let mut pairs = Vec::new();
        for base in (0..v.len()).step_by(seg) {
            for a in stage_comparators(p, k, seg) {
                let s = cex(&mut v, dtype, desc, base + a, base + a + k);
                pairs.push(((base + a) as u32, (base + a + k) as u32, s));
            }
        }
        out.push(Phase {
            data: v.clone(),
            pairs,
        });
    }
    out
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
