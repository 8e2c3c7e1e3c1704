//! Pass plans for a BMMC permutation y = A·x ⊕ c (pure CPU: the GPU runner, the CPU model, the
//! stats and the view all use them). Each pass is an affine map with the kernel that performs it:
//!
//! - `naive`: one thread per element, scattered writes (any map).
//! - `tiled`: the one-pass tiled kernel. A workgroup reads a tile of 2^T elements whose input
//!   indices vary in the bit set T_in ⊇ {0..t−1} (t = 5: 32 consecutive words = one 128-byte
//!   segment per 32 lanes) and writes them so that 32 lanes write one aligned 32-word segment of
//!   the output. A map M fits when span(M·e_j : j ∈ T_in) ⊇ span(e_0..e_{t−1}), i.e. when the input
//!   vectors that land in the low t output bits, S = M⁻¹·span(e_0..e_{t−1}), lie in span(e_T_in).
//!   Every BPC fits with |T_in| ≤ 2t; every BMMC splits into two maps that fit (see [`tiled`]).
//! - `block` (the seed's kernel 1): (A B; 0 C) at split k, K = 2^k elements per workgroup.
//! - `blockmove` (the seed's kernel 2): (Id 0; 0 X) at split k.

use super::Variant;
use super::facts::Bound;
use super::matrix::{Affine, BitMatrix};
use crate::error::{Error, Result};
use serde_json::{Value, json};

/// Coalescing width in bits: 2^5 words = 128 bytes.
pub const T_LOW: usize = 5;
/// The seed's Cormen parameters.
pub const SEED_M: usize = 10;
pub const SEED_B: usize = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kernel {
    Naive,
    /// Input bits that vary inside a tile (sorted ascending); `threads_log`: this pass's cap on
    /// the kernel's threads (log2) below the options' (None: the options' alone).
    Tiled {
        tin: Vec<usize>,
        threads_log: Option<usize>,
    },
    Block {
        k: usize,
    },
    BlockMove {
        k: usize,
    },
}

impl Kernel {
    pub fn kind(&self) -> &'static str {
        match self {
            Kernel::Naive => "naive",
            Kernel::Tiled { .. } => "tiled",
            Kernel::Block { .. } => "block",
            Kernel::BlockMove { .. } => "blockmove",
        }
    }
}

#[derive(Clone, Debug)]
pub struct PassSpec {
    pub label: String,
    pub kernel: Kernel,
    pub map: Affine,
}

impl PassSpec {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "label": self.label,
            "kind": self.kernel.kind(),
            "matrix": self.map.a.row_strings(),
            "complement": self.map.c,
        });
        match &self.kernel {
            Kernel::Tiled { tin, .. } => v["tile_bits"] = json!(tin),
            Kernel::Block { k } | Kernel::BlockMove { k } => v["k"] = json!(k),
            Kernel::Naive => {}
        }
        v
    }
}

/// log2 of the tiles a workgroup of the tiled kernel walks by default: the word kernel 4, the
/// vector kernel 2 (the H200's best at 2^28 for each).
pub const DEFAULT_TILES_LOG: usize = 2;
pub const DEFAULT_VECTOR_TILES_LOG: usize = 1;
/// ... but only while at least 2^this workgroups remain: on the H200 4 tiles a workgroup with
/// fewer (1024 at 2^24, 64 at 2^20) left SMs idle, 2.6 % and 12 % slower than one tile.
pub const MIN_GROUPS_LOG: usize = 13;

/// Tile parameters of the adapter: the largest tile (bits), the tiled kernel's threads (log2, at
/// most this) and tiles per workgroup (log2), and the Cormen m, b.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub tile_bits: usize,
    pub threads_log: usize,
    /// None: the default, [`DEFAULT_TILES_LOG`] while enough workgroups remain.
    pub tiles_log: Option<usize>,
    /// How a bit permutation's tiles are numbered.
    pub group_order: super::GroupOrder,
    /// Words the tiled kernel moves with one load or store (1 or 4); None: 4 where the tile
    /// allows.
    pub vector: Option<u32>,
    pub m: usize,
    pub b: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            tile_bits: 12,
            threads_log: 8,
            tiles_log: None,
            group_order: super::GroupOrder::Auto,
            vector: None,
            m: SEED_M,
            b: SEED_B,
        }
    }
}

#[derive(Clone, Debug)]
pub struct PlanSpec {
    pub passes: Vec<PassSpec>,
    /// The seed plans: the BPC part's ranks and Cormen's bound.
    pub bound: Option<Bound>,
}

impl PlanSpec {
    /// The composition of all passes.
    pub fn composed(&self, n: usize) -> Affine {
        self.passes.iter().fold(
            Affine {
                a: BitMatrix::identity(n),
                c: 0,
            },
            |acc, p| p.map.after(&acc),
        )
    }

    /// Check the plan performs `target` and every pass fits its kernel.
    pub fn check(&self, target: &Affine, p: &Params) -> Result<()> {
        let n = target.a.n;
        if self.composed(n) != *target {
            return Err(Error::Gpu(
                "internal error: the plan's passes do not compose to the matrix".into(),
            ));
        }
        for pass in &self.passes {
            let ok = match &pass.kernel {
                Kernel::Naive => true,
                Kernel::Tiled { tin, .. } => {
                    tin.len() <= p.tile_bits.min(n) && fits_tile(&pass.map.a, tin)
                }
                Kernel::Block { k } => (0..*k).all(|j| pass.map.a.col(j) >> k == 0),
                Kernel::BlockMove { k } => {
                    (0..*k).all(|j| pass.map.a.col(j) == 1 << j)
                        && (*k..n).all(|j| pass.map.a.col(j) & ((1u32 << k) - 1) == 0)
                }
            };
            if !ok {
                return Err(Error::Gpu(format!(
                    "internal error: pass '{}' does not fit the {} kernel",
                    pass.label,
                    pass.kernel.kind()
                )));
            }
        }
        Ok(())
    }
}

fn low_mask(k: usize) -> u32 {
    if k >= 32 { u32::MAX } else { (1u32 << k) - 1 }
}

/// S = M⁻¹·span(e_0..e_{t−1}): the input vectors that land in the low t output bits.
fn low_preimage(m: &BitMatrix, t: usize) -> Vec<u32> {
    let inv = m.inverse().expect("plans are built for invertible maps");
    (0..t).map(|i| inv.col(i)).collect()
}

/// Does `m` fit the tiled kernel with input tile bits `tin`?
pub fn fits_tile(m: &BitMatrix, tin: &[usize]) -> bool {
    let t = T_LOW.min(m.n);
    let tin_mask = tin.iter().fold(0u32, |a, &j| a | 1 << j);
    tin_mask & low_mask(t) == low_mask(t) && low_preimage(m, t).iter().all(|v| v & !tin_mask == 0)
}

/// The smallest tile for `m` ({0..t−1} ∪ supp S), filled up to `tile_bits` with the lowest free
/// bits; `None` when it needs more than `tile_bits` bits.
pub fn tile_bits_for(m: &BitMatrix, tile_bits: usize) -> Option<Vec<usize>> {
    let n = m.n;
    let t = T_LOW.min(n);
    let need = low_preimage(m, t).iter().fold(low_mask(t), |a, v| a | v);
    let cap = tile_bits.min(n);
    if need.count_ones() as usize > cap {
        return None;
    }
    // Fill up to the cap. For a BPC, alternate between the lowest free input bit (longer read
    // runs) and the source of the lowest output bit not yet in the tile (longer write runs);
    // otherwise the lowest free input bits.
    let mut set = need;
    let perm = m.bit_perm();
    let mut from_output = false;
    while (set.count_ones() as usize) < cap {
        let next = match (&perm, from_output) {
            (Some(p), true) => (0..n)
                .map(|q| p.iter().position(|&o| o == q).expect("a permutation"))
                .find(|&j| set >> j & 1 == 0),
            _ => (0..n).find(|&j| set >> j & 1 == 0),
        };
        match next {
            Some(j) => set |= 1 << j,
            None => break,
        }
        from_output = !from_output;
    }
    Some((0..n).filter(|&j| set >> j & 1 == 1).collect())
}

fn tiled_pass(label: String, map: Affine, p: &Params) -> Option<PassSpec> {
    let tin = tile_bits_for(&map.a, p.tile_bits)?;
    Some(PassSpec {
        label,
        kernel: Kernel::Tiled {
            tin,
            threads_log: None,
        },
        map,
    })
}

/// A seed plan's tiled pass of the linear map `a`; an error naming `plan` when the tile (as asked,
/// or as the adapter's workgroup memory allows) is too small for it.
fn seed_tiled_pass(label: &str, a: BitMatrix, p: &Params, plan: &str) -> Result<PassSpec> {
    tiled_pass(label.into(), Affine { a, c: 0 }, p).ok_or_else(|| {
        Error::Limit(format!(
            "the {plan} plan needs a tile larger than 2^{} words (--tile-bits, within the \
             adapter's workgroup memory)",
            p.tile_bits
        ))
    })
}

/// rotl by k on n bits: input bit j → output bit (j + k) mod n.
pub fn rotl(n: usize, k: usize) -> BitMatrix {
    BitMatrix::from_bit_perm(&(0..n).map(|j| (j + k % n.max(1)) % n).collect::<Vec<_>>())
}

/// The `naive` plan: one pass.
pub fn naive(target: &Affine) -> PlanSpec {
    PlanSpec {
        passes: vec![PassSpec {
            label: "naive: out[A·x XOR c] = in[x]".into(),
            kernel: Kernel::Naive,
            map: target.clone(),
        }],
        bound: None,
    }
}

/// The `tiled` plan: one tiled pass when the map fits (every BPC does), else two:
/// A = A2·A1 where A1 brings S = A⁻¹·span(e_0..e_{t−1}) onto coordinate bits (the pivots of S's
/// reduced echelon basis, highest bit first) and A2 = A·A1⁻¹ (tile = low t bits ∪ those pivots,
/// ≤ 2t bits) sends them to the low output bits. t is as large as the tile allows (6 in a 2^12
/// tile): A2's tile then spans the low t bits on both sides, runs of 2^t words read and written
/// (at t = 5 one side would move 128-byte runs). A1 is the identity off the pivots, so its tiles of
/// contiguous words land on contiguous words: on large arrays it runs [`GATHER_TILE_BITS`]-bit
/// tiles at 2^3 words a thread, the copy's shape.
pub fn tiled(target: &Affine, p: &Params) -> PlanSpec {
    let n = target.a.n;
    if let Some(pass) = tiled_pass("tiled (one pass)".into(), target.clone(), p) {
        return PlanSpec {
            passes: vec![pass],
            bound: None,
        };
    }
    let widest = (p.tile_bits / 2).max(T_LOW).min(n);
    let passes = (T_LOW.min(n)..=widest)
        .rev()
        .find_map(|t| two_tiled_passes(target, t, p))
        // Only when the adapter's tile is below 2t bits: fall back to a naive pass.
        .unwrap_or_else(|| {
            vec![PassSpec {
                label: "naive (tile too small)".into(),
                kernel: Kernel::Naive,
                map: target.clone(),
            }]
        });
    PlanSpec {
        passes,
        bound: None,
    }
}

/// The tile (log2 words) of a two-pass BMMC's first pass, run at 2^3 words a thread where the
/// grid has 2^[`MIN_GROUPS_LOG`] such tiles or more (2^23 words): on the H200 that pass ran
/// 2^12-word tiles (256 threads) at 0.95× copy at 2^28, 2^10 (128 threads) at the copy's rate, and
/// 2^10 at 256 threads at 0.7×; at 2^22 the small tiles made the BMMC 7 % slower, at 2^23 2 %
/// faster.
pub const GATHER_TILE_BITS: usize = 10;

/// A = A2·A1 for the low `t` output bits (see [`tiled`]); None when either pass misses the tile.
fn two_tiled_passes(target: &Affine, t: usize, p: &Params) -> Option<Vec<PassSpec>> {
    let n = target.a.n;
    let s = low_preimage(&target.a, t);
    // Reduced echelon basis of S, pivot = highest set bit.
    let mut basis: Vec<u32> = Vec::new();
    for mut v in s {
        for &b in &basis {
            if v >> (31 - b.leading_zeros()) & 1 == 1 {
                v ^= b;
            }
        }
        if v == 0 {
            continue;
        }
        let piv = 31 - v.leading_zeros();
        for b in basis.iter_mut() {
            if *b >> piv & 1 == 1 {
                *b ^= v;
            }
        }
        basis.push(v);
    }
    // A1 = A1⁻¹: column p_i = s_i, others e_j.
    let mut cols: Vec<u32> = (0..n).map(|j| 1u32 << j).collect();
    for &v in &basis {
        cols[(31 - v.leading_zeros()) as usize] = v;
    }
    let a1 = BitMatrix::from_cols(&cols);
    let a2 = target.a.mul(&a1.inverse().expect("A1 is invertible"));
    let small = n >= GATHER_TILE_BITS + MIN_GROUPS_LOG;
    let gather = Params {
        tile_bits: if small {
            p.tile_bits.min(GATHER_TILE_BITS)
        } else {
            p.tile_bits
        },
        ..*p
    };
    let mut first = tiled_pass(
        "tiled pass 1: gather the rows' low-bit sources".into(),
        Affine { a: a1, c: 0 },
        &gather,
    )?;
    if small && let Kernel::Tiled { tin, threads_log } = &mut first.kernel {
        *threads_log = Some(tin.len().saturating_sub(3));
    }
    // A2's tile: the low input bits and every pivot (A2 sends pivot p_i to A·s_i, so the tile's
    // image holds the low t output bits), filled with the lowest free input bits. The kernel's
    // own test (the preimage of the low 5 output bits) can leave a pivot out.
    let mut set = basis.iter().fold(low_mask(T_LOW.min(n)), |a, v| {
        a | 1 << (31 - v.leading_zeros())
    });
    let cap = p.tile_bits.min(n);
    while (set.count_ones() as usize) < cap {
        set |= 1 << set.trailing_ones();
    }
    let tin: Vec<usize> = (0..n).filter(|&j| set >> j & 1 == 1).collect();
    if tin.len() > cap || !fits_tile(&a2, &tin) {
        return None;
    }
    let second = PassSpec {
        label: "tiled pass 2: finish".into(),
        kernel: Kernel::Tiled {
            tin,
            threads_log: None,
        },
        map: Affine { a: a2, c: target.c },
    };
    Some(vec![first, second])
}

/// rank_k of a bit permutation: input bits below k that go to k or above.
pub fn rank_k(perm: &[usize], k: usize) -> usize {
    perm.iter().take(k).filter(|&&p| p >= k).count()
}

/// Cormen's alternation for the bit permutation `perm` (input bit j → output bit perm[j]):
/// an M-pass (permute within the low m bits and within the high n−m bits), then (B-pass: permute
/// the high n−b bits, low b fixed; M-pass) until every bit has crossed the line at m. Returns the
/// passes as bit permutations (position p → new position) with their kernels.
pub fn cormen(perm: &[usize], m: usize, b: usize) -> Vec<(Kernel, Vec<usize>)> {
    let n = perm.len();
    let m = m.min(n);
    let b = b.min(m.saturating_sub(1));
    let mut cur: Vec<usize> = (0..n).collect(); // cur[p] = original bit at position p
    let mut out = Vec::new();
    let apply = |cur: &mut Vec<usize>, tau: &[usize]| {
        let mut next = vec![0; n];
        for p in 0..n {
            next[tau[p]] = cur[p];
        }
        *cur = next;
    };
    loop {
        let up: Vec<usize> = (0..m).filter(|&p| perm[cur[p]] >= m).collect();
        if up.is_empty() {
            let tau: Vec<usize> = (0..n).map(|p| perm[cur[p]]).collect();
            out.push((Kernel::Block { k: m }, tau));
            return out;
        }
        let chosen: Vec<usize> = up.iter().copied().take(m - b).collect();
        // M-pass: chosen up-movers to b.., the other low bits fill the rest in order.
        let mut tau: Vec<usize> = (0..n).collect();
        let mut slots: Vec<usize> = (0..b).chain(b + chosen.len()..m).collect();
        slots.reverse();
        for (p, t) in tau.iter_mut().enumerate().take(m) {
            *t = match chosen.iter().position(|&c| c == p) {
                Some(i) => b + i,
                None => slots.pop().expect("m slots"),
            };
        }
        apply(&mut cur, &tau);
        out.push((Kernel::Block { k: m }, tau));
        // B-pass: swap them with bits above m that must come down.
        let downs: Vec<usize> = (m..n).filter(|&h| perm[cur[h]] < m).collect();
        let mut tau: Vec<usize> = (0..n).collect();
        for (i, &h) in downs.iter().take(chosen.len()).enumerate() {
            tau[b + i] = h;
            tau[h] = b + i;
        }
        apply(&mut cur, &tau);
        out.push((Kernel::BlockMove { k: b }, tau));
    }
}

/// Number of passes Cormen's alternation takes (without building matrices).
pub fn cormen_passes(perm: &[usize], m: usize, b: usize) -> usize {
    let n = perm.len();
    let m = m.min(n);
    if m >= n {
        return 1;
    }
    let b = b.min(m - 1);
    1 + 2 * rank_k(perm, m).div_ceil(m - b)
}

fn perm_matrix(tau: &[usize]) -> BitMatrix {
    BitMatrix::from_bit_perm(tau)
}

/// The BPC part's ranks and Cormen's bound.
fn bpc_bound(perm: &[usize], p: &Params, taken: usize) -> Bound {
    let n = perm.len();
    let m = p.m.min(n);
    let b = p.b.min(m.saturating_sub(1));
    let rm = rank_k(perm, m);
    let rb = rank_k(perm, b);
    let iters = if m > b { rm.max(rb).div_ceil(m - b) } else { 0 };
    Bound {
        m,
        b,
        rank_m: rm,
        rank_b: rb,
        bound_iterations: iters,
        bound_passes: 1 + 2 * iters,
        bpc_passes: taken,
    }
}

/// Cormen's passes for bit permutation matrix `pm` as PassSpecs.
fn cormen_specs(pm: &BitMatrix, p: &Params, what: &str) -> Vec<PassSpec> {
    let perm = pm.bit_perm().expect("a permutation matrix");
    cormen(&perm, p.m, p.b)
        .into_iter()
        .enumerate()
        .map(|(i, (kernel, tau))| PassSpec {
            label: format!(
                "{what} {}: {}",
                i + 1,
                match kernel {
                    Kernel::Block { .. } => "sort the m first bits (kernel 1)",
                    _ => "sort the n-b last bits (kernel 2)",
                }
            ),
            kernel,
            map: Affine {
                a: perm_matrix(&tau),
                c: 0,
            },
        })
        .collect()
}

fn finish(mut passes: Vec<PassSpec>, target: &Affine, bound: Option<Bound>) -> PlanSpec {
    if passes.is_empty() {
        let id = BitMatrix::identity(target.a.n);
        passes.push(PassSpec {
            label: "identity (one tiled copy pass)".into(),
            kernel: Kernel::Tiled {
                tin: tile_bits_for(&id, T_LOW).unwrap_or_default(),
                threads_log: None,
            },
            map: Affine { a: id, c: 0 },
        });
    }
    if let Some(last) = passes.last_mut() {
        last.map.c = target.c;
    }
    PlanSpec { passes, bound }
}

/// The seed's A = P·L·U plan: U (kernel 1, k = m), then R·L (one tiled pass, R = rotl by t: the
/// seed's U'·T2), then P·R⁻¹ by Cormen's alternation (the seed's T1 fused into P).
pub fn seed_plu(target: &Affine, p: &Params) -> Result<PlanSpec> {
    let n = target.a.n;
    let (pm, l, u) = target.a.plu()?;
    let mut passes = Vec::new();
    if n <= p.m {
        // n ≤ m: one kernel-1 pass covers the whole array (one workgroup).
        return Ok(finish(
            vec![PassSpec {
                label: "kernel 1 over the whole array (n <= m)".into(),
                kernel: Kernel::Block { k: n },
                map: Affine {
                    a: target.a.clone(),
                    c: 0,
                },
            }],
            target,
            None,
        ));
    }
    if !u.is_identity() {
        passes.push(PassSpec {
            label: "U (kernel 1, upper triangular)".into(),
            kernel: Kernel::Block { k: p.m },
            map: Affine { a: u, c: 0 },
        });
    }
    let mut pbits = pm.clone();
    if !l.is_identity() {
        let r = rotl(n, T_LOW);
        let rl = r.mul(&l);
        let label = "L' = R·L (one tiled pass: the seed's U'·T2)";
        passes.push(seed_tiled_pass(label, rl, p, "seed-plu")?);
        pbits = pm.mul(&r.inverse()?);
    }
    let cs = if pbits.is_identity() && !passes.is_empty() {
        Vec::new()
    } else {
        cormen_specs(&pbits, p, "P")
    };
    let perm = pbits.bit_perm().expect("permutation");
    let bound = bpc_bound(&perm, p, cs.len());
    passes.extend(cs);
    Ok(finish(passes, target, Some(bound)))
}

/// The seed's A = U·L·P plan: P' = R·P by Cormen's alternation with its last M-pass fused with
/// U' = R·L·R⁻¹ (R = rotl by m; U' is (A B; 0 C) at k = m), then U·R⁻¹ in one tiled pass.
pub fn seed_ulp(target: &Affine, p: &Params) -> Result<PlanSpec> {
    let n = target.a.n;
    if n <= p.m {
        return seed_plu(target, p);
    }
    // For a BPC there is nothing to fuse: R = I. Otherwise R = rotl by m, and the pivoting is
    // done on A·R (A·R = U·L·Q ⇒ A = U·L·P with P = Q·R⁻¹), so that R·P = R·Q·R⁻¹ stays close
    // to the identity (low rank_m) instead of close to R.
    // Both are tried (R = I is valid too, fusing nothing when L = I); the shorter plan wins.
    let plain = seed_ulp_with(target, p, &BitMatrix::identity(n))?;
    if let Some(plain) = &plain
        && target.a.is_permutation()
    {
        return Ok(plain.clone());
    }
    let rotated = seed_ulp_with(target, p, &rotl(n, p.m))?.expect("R != I always applies");
    Ok(match plain {
        Some(pl) if pl.passes.len() < rotated.passes.len() => pl,
        _ => rotated,
    })
}

/// The U·L·P plan with rotation `r`; `None` when r = I but L ≠ I (nothing to fuse L with).
fn seed_ulp_with(target: &Affine, p: &Params, r: &BitMatrix) -> Result<Option<PlanSpec>> {
    let (u, l, q) = target.a.mul(r).ulp()?;
    let pm = q.mul(&r.inverse()?);
    if r.is_identity() && !l.is_identity() {
        return Ok(None);
    }
    let rinv = r.inverse()?;
    let pbits = r.mul(&pm);
    let mut passes = if pbits.is_identity() && l.is_identity() {
        Vec::new()
    } else {
        cormen_specs(&pbits, p, "P'")
    };
    let perm = pbits.bit_perm().expect("permutation");
    let bound = bpc_bound(&perm, p, passes.len());
    if !l.is_identity() {
        let u2 = r.mul(&l).mul(&rinv);
        let last = passes.last_mut().expect("at least one pass");
        last.map.a = u2.mul(&last.map.a);
        last.label = format!("{} fused with U' = R·L·R^-1", last.label);
    }
    let ur = u.mul(&rinv);
    if !ur.is_identity() {
        let label = "U·R^-1 (one tiled pass: the seed's U·T1)";
        passes.push(seed_tiled_pass(label, ur, p, "seed-ulp")?);
    }
    Ok(Some(finish(passes, target, Some(bound))))
}

/// Build the plan for a variant.
pub fn build(variant: Variant, target: &Affine, p: &Params) -> Result<PlanSpec> {
    let plan = match variant {
        Variant::Naive => naive(target),
        Variant::Tiled => tiled(target, p),
        Variant::SeedPlu => seed_plu(target, p)?,
        Variant::SeedUlp => seed_ulp(target, p)?,
        Variant::Auto => {
            // The cheapest: fewest passes; ties go to the tiled plan (coalesced on both sides).
            let mut best = tiled(target, p);
            for cand in [seed_ulp(target, p)?, seed_plu(target, p)?] {
                if cand.passes.len() < best.passes.len() {
                    best = cand;
                }
            }
            best
        }
    };
    plan.check(target, p)?;
    Ok(plan)
}
