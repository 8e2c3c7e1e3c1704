//! CPU model of the prefix sums (seed 004), phase by phase, with the exact order of operations of
//! every GPU kernel (so u32/i32 match bit for bit and f32 rounds the same way wherever the GPU's
//! order is deterministic). Integers wrap; f32 follows IEEE addition.

use crate::data::DType;

/// `a + b` in `dtype`, on bit patterns: u32/i32 wrap (two's complement), f32 rounds.
pub fn add(dtype: DType, a: u32, b: u32) -> u32 {
    match dtype {
        DType::U32 | DType::I32 => a.wrapping_add(b),
        DType::F32 => (f32::from_bits(a) + f32::from_bits(b)).to_bits(),
    }
}

/// The additive identity's bits (0, 0, +0.0).
pub const ZERO: u32 = 0;

/// Smallest power of two >= n (n >= 1).
pub fn pow2_ceil(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// The seed's `partial_sum_seq`: inclusive (or exclusive) prefix sums, left to right.
pub fn sequential(dtype: DType, x: &[u32], exclusive: bool) -> Vec<u32> {
    let mut acc = ZERO;
    x.iter()
        .map(|&v| {
            if exclusive {
                let o = acc;
                acc = add(dtype, acc, v);
                o
            } else {
                acc = add(dtype, acc, v);
                acc
            }
        })
        .collect()
}

/// Suffix sums (what `folded` computes): out[i] = x[i] + ... + x[n-1] (exclusive: from x[i+1]).
pub fn suffix(dtype: DType, x: &[u32], exclusive: bool) -> Vec<u32> {
    let rev: Vec<u32> = x.iter().rev().copied().collect();
    let mut s = sequential(dtype, &rev, exclusive);
    s.reverse();
    s
}

/// One phase of a phase-by-phase model: the array after it, and who read what.
#[derive(Clone, Debug, Default)]
pub struct Phase {
    pub p: usize,
    pub data: Vec<u32>,
    /// (thread = destination element, source element) for every active thread, in thread order.
    pub reads: Vec<(usize, usize)>,
}

/// A phase-by-phase model: for every distance p of `ps`, `phase` updates the array and records who
/// read what; each phase keeps a copy of the array after it. The phases are computed as the
/// iterator reaches them: a traced run checks one at a time and never holds every phase's reads
/// (at 2^20 elements, 16 MiB a phase).
fn phases<F: FnMut(&mut [u32], usize, &mut Vec<(usize, usize)>)>(
    x: &[u32],
    ps: Vec<usize>,
    mut phase: F,
) -> impl ExactSizeIterator<Item = Phase> + use<F> {
    let mut a = x.to_vec();
    ps.into_iter().map(move |p| {
        let mut reads = Vec::new();
        phase(&mut a, p, &mut reads);
        Phase {
            p,
            data: a.clone(),
            reads,
        }
    })
}

/// The distances 1, 2, 4, … below `n`.
fn doubling(n: usize) -> impl Iterator<Item = usize> {
    std::iter::successors(Some(1usize), |p| Some(p << 1)).take_while(move |&p| p < n)
}

/// The seed's ladder: phases p = 1, 2, 4, … < n; thread t with bit p set adds a[(t & !(p-1)) - 1].
pub fn ladder(dtype: DType, x: &[u32]) -> impl ExactSizeIterator<Item = Phase> + use<> {
    let n = x.len();
    phases(x, doubling(n).collect(), move |a, p, reads| {
        // The rungs read have bit p clear, so nothing read is written in this phase.
        for t in 0..n {
            if t & p != 0 {
                let prev_rung = (t & !(p - 1)) - 1;
                a[t] = add(dtype, a[t], a[prev_rung]);
                reads.push((t, prev_rung));
            }
        }
    })
}

/// The seed's folded method: p = N/2 … 1 (N = n rounded up to a power of two), all threads read the
/// previous phase: a[i] += a[i+p] where i+p < n — SUFFIX sums. `mirror`: a[i] += a[i-p] where
/// i >= p — the mirrored (prefix) form.
pub fn folded(
    dtype: DType,
    x: &[u32],
    mirror: bool,
) -> impl ExactSizeIterator<Item = Phase> + use<> {
    let n = x.len();
    let halving = std::iter::successors(Some(pow2_ceil(n) / 2), |p| Some(p / 2));
    let ps = halving.take_while(|&p| p >= 1).collect();
    phases(x, ps, move |a, p, reads| {
        let prev = a.to_vec();
        for i in 0..n {
            let src = if mirror {
                i.checked_sub(p)
            } else {
                (i + p < n).then_some(i + p)
            };
            if let Some(s) = src {
                a[i] = add(dtype, prev[i], prev[s]);
                reads.push((i, s));
            }
        }
    })
}

/// Hillis-Steele with ping-pong buffers: p = 1, 2, 4, … < n; b[i] = a[i] + a[i-p] (i >= p).
pub fn hillis_steele(dtype: DType, x: &[u32]) -> impl ExactSizeIterator<Item = Phase> + use<> {
    let n = x.len();
    phases(x, doubling(n).collect(), move |a, p, reads| {
        let prev = a.to_vec();
        for i in p..n {
            a[i] = add(dtype, prev[i], prev[i - p]);
            reads.push((i, i - p));
        }
    })
}

/// The shift that turns inclusive into exclusive: prefix (dst[i] = src[i-1]) or suffix
/// (dst[i] = src[i+1]), the identity at the open end.
pub fn shift(src: &[u32], suffix: bool) -> Vec<u32> {
    let n = src.len();
    (0..n)
        .map(|i| {
            if suffix {
                if i + 1 < n { src[i + 1] } else { ZERO }
            } else if i > 0 {
                src[i - 1]
            } else {
                ZERO
            }
        })
        .collect()
}

/// One Blelloch step over the implicit tree of N = pow2 leaves.
#[derive(Clone, Debug)]
pub struct TreeStep {
    /// "up", "clear", "down" or "add-input".
    pub direction: &'static str,
    /// Tree level of the nodes working (1 = parents of the leaves … log2 N = the root); 0 otherwise.
    pub level: u32,
    /// half = 2^(level-1): the distance between a node's left and right array positions.
    pub half: usize,
    pub data: Vec<u32>,
    /// (destination, source) array positions.
    pub reads: Vec<(usize, usize)>,
    /// For every working node: (thread, heap index h, l_child = 2h+1, r_child = 2h+2, left array
    /// position, right array position).
    pub nodes: Vec<[usize; 6]>,
}

/// The heap index (root 0, l_child = 2h+1, r_child = 2h+2) of the node at tree `level` (1 =
/// parents of leaves) whose subtree starts at leaf `k`, in a tree of `log_n` levels.
pub fn heap_index(level: u32, k: usize, log_n: u32) -> usize {
    let depth = log_n - level;
    (1usize << depth) - 1 + (k >> level)
}

/// One level of Blelloch's tree over `a` (2^`log_n` elements): `visit` updates every working node's
/// left and right array positions (l, r) and records its reads; the step is the array after it.
fn tree_level(
    a: &mut [u32],
    direction: &'static str,
    level: u32,
    log_n: u32,
    mut visit: impl FnMut(&mut [u32], usize, usize, &mut Vec<(usize, usize)>),
) -> TreeStep {
    let half = 1usize << (level - 1);
    let count = a.len() / (2 * half);
    let mut reads = Vec::new();
    let mut nodes = Vec::new();
    for j in 0..count {
        let k = j * 2 * half;
        let h = heap_index(level, k, log_n);
        let (l, r) = (k + half - 1, k + 2 * half - 1);
        visit(a, l, r, &mut reads);
        nodes.push([j, h, 2 * h + 1, 2 * h + 2, l, r]);
    }
    TreeStep {
        direction,
        level,
        half,
        data: a.to_vec(),
        reads,
        nodes,
    }
}

/// Blelloch's work-efficient scan on x padded with zeros to N = 2^⌈log2 n⌉: up-sweep (levels 1 …
/// log2 N), clear the root, down-sweep (levels log2 N … 1) — an exclusive scan; with `inclusive`,
/// a last step adds the input.
pub fn blelloch(dtype: DType, x: &[u32], inclusive: bool) -> Vec<TreeStep> {
    let n_pad = pow2_ceil(x.len());
    let log_n = n_pad.trailing_zeros();
    let mut a = x.to_vec();
    a.resize(n_pad, ZERO);
    let mut out = Vec::new();
    for level in 1..=log_n {
        out.push(tree_level(&mut a, "up", level, log_n, |a, l, r, reads| {
            a[r] = add(dtype, a[l], a[r]);
            reads.push((r, l));
        }));
    }
    a[n_pad - 1] = ZERO;
    out.push(TreeStep {
        direction: "clear",
        level: log_n,
        half: 0,
        data: a.clone(),
        reads: vec![],
        nodes: vec![],
    });
    for level in (1..=log_n).rev() {
        out.push(tree_level(
            &mut a,
            "down",
            level,
            log_n,
            |a, l, r, reads| {
                let left = a[l];
                let nodev = a[r];
                a[l] = nodev;
                a[r] = add(dtype, nodev, left);
                reads.push((l, r));
                reads.push((r, l));
            },
        ));
    }
    if inclusive {
        for (i, &v) in x.iter().enumerate() {
            a[i] = add(dtype, a[i], v);
        }
        out.push(TreeStep {
            direction: "add-input",
            level: 0,
            half: 0,
            data: a.clone(),
            reads: (0..x.len()).map(|i| (i, i)).collect(),
            nodes: vec![],
        });
    }
    out
}

/// Reduce-then-scan's tile sums and exclusive tile prefixes (tiles of `tile` elements).
pub fn tile_sums(dtype: DType, x: &[u32], tile: usize) -> (Vec<u32>, Vec<u32>) {
    let sums: Vec<u32> = x
        .chunks(tile)
        .map(|c| c.iter().fold(ZERO, |a, &v| add(dtype, a, v)))
        .collect();
    let prefixes = sequential(dtype, &sums, true);
    (sums, prefixes)
}

/// The exact (f64) prefix or suffix sums of f32 bits, and the matching sums of |x| (the scale of
/// the rounding-error bound).
pub fn exact_f64(x: &[u32], exclusive: bool, suffix: bool) -> (Vec<f64>, Vec<f64>) {
    let n = x.len();
    let v: Vec<f64> = x.iter().map(|&b| f32::from_bits(b) as f64).collect();
    let mut sum = vec![0.0; n];
    let mut abs = vec![0.0; n];
    let (mut s, mut a) = (0.0f64, 0.0f64);
    let order: Vec<usize> = if suffix {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    for i in order {
        if exclusive {
            sum[i] = s;
            abs[i] = a;
            s += v[i];
            a += v[i].abs();
        } else {
            s += v[i];
            a += v[i].abs();
            sum[i] = s;
            abs[i] = a;
        }
    }
    (sum, abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_pairs_match_the_seed() {
        let ph: Vec<Phase> = ladder(DType::U32, &[2; 30]).collect();
        assert_eq!(ph.iter().map(|p| p.p).collect::<Vec<_>>(), [1, 2, 4, 8, 16]);
        assert_eq!(&ph[1].reads[..4], &[(2, 1), (3, 1), (6, 5), (7, 5)]);
        assert_eq!(ph[4].reads[0], (16, 15));
        assert_eq!(ph[4].reads.len(), 14);
        assert_eq!(ph[4].data, (1..=30).map(|i| 2 * i).collect::<Vec<u32>>());
    }

    #[test]
    fn folded_gives_suffix_sums_and_its_mirror_prefix_sums() {
        let ph: Vec<Phase> = folded(DType::U32, &[1; 33], false).collect();
        assert_eq!(
            ph.iter().map(|p| p.p).collect::<Vec<_>>(),
            [32, 16, 8, 4, 2, 1]
        );
        assert_eq!(ph[0].data[..3], [2, 1, 1]);
        assert_eq!(ph[5].data, (1..=33).rev().collect::<Vec<u32>>());
        let m: Vec<Phase> = folded(DType::U32, &[1; 33], true).collect();
        assert_eq!(m[5].data, (1..=33).collect::<Vec<u32>>());
    }

    #[test]
    fn every_model_agrees_with_sequential() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        for n in [1usize, 2, 3, 5, 7, 8, 9, 30, 33, 64, 100] {
            let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
            let want = sequential(DType::U32, &x, false);
            let last = |v: &mut dyn Iterator<Item = Phase>| v.last().map_or(x.clone(), |p| p.data);
            assert_eq!(last(&mut ladder(DType::U32, &x)), want, "ladder {n}");
            assert_eq!(last(&mut hillis_steele(DType::U32, &x)), want, "hs {n}");
            assert_eq!(last(&mut folded(DType::U32, &x, true)), want, "mirror {n}");
            assert_eq!(
                last(&mut folded(DType::U32, &x, false)),
                suffix(DType::U32, &x, false),
                "folded {n}"
            );
            let b = blelloch(DType::U32, &x, true);
            assert_eq!(&b.last().unwrap().data[..n], &want[..], "blelloch {n}");
            let e = blelloch(DType::U32, &x, false);
            assert_eq!(
                &e.last().unwrap().data[..n],
                &sequential(DType::U32, &x, true)[..],
                "blelloch excl {n}"
            );
            assert_eq!(shift(&want, false), sequential(DType::U32, &x, true));
        }
    }

    #[test]
    fn heap_indexing() {
        // N = 8: level 3 is the root (0), level 2 nodes 1, 2, level 1 nodes 3..=6.
        assert_eq!(heap_index(3, 0, 3), 0);
        assert_eq!(heap_index(2, 0, 3), 1);
        assert_eq!(heap_index(2, 4, 3), 2);
        assert_eq!(heap_index(1, 6, 3), 6);
        let st = blelloch(DType::U32, &[1; 8], false);
        let root = st[2].nodes[0];
        assert_eq!(root[1..4], [0, 1, 2]);
    }
}
