//! The tile passes of Batcher's network (`batcher`, `merge-split`): which passes run on which tiles,
//! merges split by the cost model fitted to H100 per-pass times.

use super::*;

// tiles of Batcher's network (batcher, merge-split)

/// One dispatch of `batcher.wgsl`'s `tile` kernel.
#[derive(Clone, Debug)]
pub(super) struct TilePass {
    pub(super) label: String,
    pub(super) p_lo: usize,
    pub(super) p_hi: usize,
    pub(super) k_first: usize,
    pub(super) k_last: usize,
    pub(super) k_lo: usize,
    pub(super) res: usize,
    pub(super) rows: usize,
    pub(super) halo: usize,
    pub(super) shift: usize,
    pub(super) stage_id: usize,
}

impl TilePass {
    /// A contiguous, aligned tile of `rows` positions running stages (p_lo, k_first) … (p_hi, k_last).
    pub(super) fn local(
        label: String,
        rows: usize,
        p: (usize, usize),
        k: (usize, usize),
    ) -> TilePass {
        TilePass {
            label,
            p_lo: p.0,
            p_hi: p.1,
            k_first: k.0,
            k_last: k.1,
            k_lo: 1,
            res: 1,
            rows: rows.max(2),
            halo: 0,
            shift: 0,
            stage_id: 0,
        }
    }

    /// Stages k = k_first … k_lo of merge p on tiles of `rows` rows of `res` residues k_lo apart,
    /// with `halo` rows recomputed on each side (0 for a head, which starts at k = p).
    pub(super) fn merge(
        p: usize,
        k_first: usize,
        k_lo: usize,
        res: usize,
        rows: usize,
        halo: usize,
    ) -> Self {
        let label = if halo == 0 {
            format!("merge p = {p}: k = {k_first} … {k_lo}")
        } else {
            format!("merge p = {p}: k = {k_first} … {k_lo} (halo {halo})")
        };
        TilePass {
            label,
            p_lo: p,
            p_hi: p,
            k_first,
            k_last: k_lo,
            k_lo,
            res,
            rows,
            halo,
            shift: 0,
            stage_id: 0,
        }
    }

    /// The network stages (p, k) this pass runs, in order.
    pub(super) fn stage_list(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        if self.p_lo > self.p_hi {
            return v;
        }
        let (mut p, mut k) = (self.p_lo, self.k_first);
        loop {
            v.push((p, k));
            if p == self.p_hi && k == self.k_last {
                return v;
            }
            if k == 1 || k == self.k_lo {
                p *= 2;
                k = p;
            } else {
                k /= 2;
            }
        }
    }

    pub(super) fn stages(&self) -> usize {
        self.stage_list().len()
    }
}

/// Network geometry of the tile kernel.
#[derive(Clone, Copy, Debug)]
pub(super) struct Net {
    pub(super) n: usize,
    pub(super) seg_len: usize,
    pub(super) seg_pad: usize,
}

impl Net {
    pub(super) fn whole(n: usize) -> Net {
        Net {
            n,
            seg_len: n,
            seg_pad: 1 << 31,
        }
    }

    pub(super) fn span(&self, shift: usize) -> usize {
        if self.seg_len == self.n {
            self.n + shift
        } else {
            (self.n / self.seg_len) * self.seg_pad + shift
        }
    }
}

/// The subgroup size the register kernel may shuffle within: the adapter's minimum, or 0 (every
/// exchange through workgroup memory) without subgroup operations — and on llvmpipe when its
/// subgroups are wider than the host's vectors (16 lanes, `LP_NATIVE_VECTOR_WIDTH=512`, on a CPU
/// without AVX-512): LLVM 15 crashes (SIGSEGV in `SelectionDAG::LegalizeTypes`) compiling the
/// kernel's shuffles there, while 4 and 8 lanes and the other rooms' shuffles compile.
pub(super) fn sg_min(gpu: &Gpu) -> usize {
    let lanes = gpu.info.subgroup_min_size as usize;
    if !gpu.has_subgroups()
        || (gpu.info.device_type == wgpu::DeviceType::Cpu && lanes * 32 > host_vector_bits())
    {
        0
    } else {
        lanes
    }
}

/// The widest vector registers of the host CPU, in bits (what llvmpipe legalises its lanes to).
fn host_vector_bits() -> usize {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 512;
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return 256;
        }
    }
    128
}

/// An upper bound on the loop iterations one invocation of batcher.wgsl's `tile` kernel runs for a
/// tile of `size` keys, `wg` invocations and `stages` network stages, counted as llvmpipe counts
/// them (every loop entry costs its iterations + 1): per stage the plain step's task loop, or a
/// register step's task loop with its two 8-key loops (charged to each stage it covers, ÷ 3), plus
/// the outer loop, the load and the store.
pub(super) fn batcher_loops(size: usize, wg: usize, stages: usize) -> u64 {
    let per = |items: usize| items.div_ceil(wg) as u64 + 1;
    let plain = per(size / 2);
    let regs = per(size / 8) * 19 / 3 + 1;
    stages as u64 * (plain.max(regs) + 1) + 2 * per(size) + 1
}

/// The passes of Batcher's network: fused (few passes) or one pass per stage (trace).
pub(super) fn batcher_passes(caps: &Caps, s: &Shape, fused: bool) -> Result<(Net, Vec<TilePass>)> {
    let b = caps.tile;
    if b < 256 {
        return Err(Error::Limit(format!(
            "batcher needs 1 KiB of workgroup memory; this adapter has {} bytes",
            caps.words * 4
        )));
    }
    let pad = s.seg.next_power_of_two();
    let net = if s.segmented {
        Net {
            n: s.n,
            seg_len: s.seg,
            seg_pad: pad,
        }
    } else {
        Net::whole(s.n)
    };
    let mut passes = Vec::new();
    let local_rows = if s.segmented {
        (pad * s.nseg().next_power_of_two()).min(b).max(pad)
    } else {
        pad.min(b)
    };
    if pad > b && s.segmented {
        return Err(Error::Limit(format!(
            "a segment of {} needs a tile of {pad} keys; this adapter's workgroup tile is {b}",
            s.seg
        )));
    }
    if pad == 1 {
        // Nothing to compare: one pass that only loads and stores (keeps the plan non-empty).
        let mut tp = TilePass::local("no stages (segments of 1)".into(), 2, (1, 0), (1, 1));
        tp.p_lo = 1;
        tp.p_hi = 0;
        passes.push(tp);
        return Ok((net, passes));
    }
    let local_top = (pad.min(b)) / 2; // the largest p sorted in tiles
    if fused {
        passes.push(TilePass::local(
            format!("sort tiles of {}: p = 1 … {local_top}", local_rows.min(pad)),
            local_rows,
            (1, local_top),
            (1, 1),
        ));
    } else {
        for (p, k) in model::batcher_stages(local_top * 2) {
            passes.push(TilePass::local(
                format!("p = {p}, k = {k}"),
                local_rows,
                (p, p),
                (k, k),
            ));
        }
    }
    let mut p = local_top * 2;
    while p < pad {
        if fused {
            passes.extend(merge_passes(p, b));
        } else {
            let mut k = p;
            while k >= 1 {
                // A tile of `res` residue classes mod k, `rows` positions of each: no taller
                // than a class is long (+ the halos), and as many classes as then fill the tile
                // (at large k a class has a few rows: tiles of 32 classes would be mostly empty).
                let (halo, min_rows) = if k == p { (0, 2) } else { (2, 8) };
                let class_rows = net.span(0).div_ceil(k) + 2 * halo;
                let rows = class_rows
                    .next_power_of_two()
                    .clamp(min_rows, b / k.min(32));
                let res = (b / rows).min(k);
                let mut tp = TilePass::merge(p, k, k, res, rows, halo);
                tp.label = format!("p = {p}, k = {k}");
                passes.push(tp);
                k /= 2;
            }
        }
        p *= 2;
    }
    for (i, tp) in passes.iter_mut().enumerate() {
        tp.stage_id = i + 1;
    }
    Ok((net, passes))
}

/// The fused passes of merge p (stages k = p, p/2, …, 1) on tiles of `b` keys, chosen by a small
/// dynamic program over the stage list with a cost model fitted to H100 per-pass medians (E = 32,
/// 8192-key tiles, 2^28 keys; docs/perf/oddeven.md). In ms per pass at 2^28:
/// - a *head* (k = p … k_lo, no halo) reads rows of R residues k_lo apart: rows of 64 B (R = 16)
///   cost 0.93 … 1.06 ms (a little more with the stride), rows of 32 B (R = 8) 1.01 … 1.8 ms
///   (worse with the stride) but cover one stage more;
/// - a *tail* (k = K … K/D, K < p) reads rows of res residues with a halo of D rows on each side
///   (its tiles start on stage K's pair blocks, so only the later stages, whose distances sum to
///   < D rows, spoil the edges): cost = rows / written × a stage term (0.99 for ≤ 4 stages …
///   1.135 from 11) × a row term (contiguous tiles 1.0; rows of 64 B ~0.95, of 32 B 1.07 … with
///   the stride).
///
/// The last pass is contiguous (res 1). Same stages in the same order as the network, whatever the
/// split.
pub(super) fn merge_passes(p: usize, b: usize) -> Vec<TilePass> {
    merge_plan(p, b).1
}

/// `merge_passes` with the model's cost (ms at 2^28 on the H100).
pub(super) fn merge_plan(p: usize, b: usize) -> (f64, Vec<TilePass>) {
    let lp = p.trailing_zeros() as usize;
    let nst = lp + 1; // stages k = p >> i, i = 0..=lp
    let stage_term = |st: usize| match st {
        0..=4 => 0.99,
        5 => 1.03,
        6 => 1.07,
        7 => 1.085,
        8..=9 => 1.10,
        10 => 1.105,
        _ => 1.135,
    };
    let lg = |x: usize| x.trailing_zeros() as f64;
    // Rows of `res` residues `k_lo` apart: contiguous tiles when res = k_lo; rows of 32 B get
    // slower with the stride, rows of 64 B barely (narrower rows were slower still: not offered).
    let row_term = |res: usize, k_lo: usize| match res {
        _ if res == k_lo => Some(1.0),
        8 => Some(1.0 + 0.012 * (lg(k_lo) - 4.0)),
        16 => Some(0.93 + 0.005 * (lg(k_lo) - 5.0)),
        // Tiles under 512 keys only: rows of 16, 8 or 4 bytes (16 B rows measured 1.2 … 1.6).
        4 if b < 512 => Some(1.4),
        2 if b < 512 => Some(1.8),
        1 if b < 512 => Some(2.5),
        _ => None,
    };
    // Candidate passes from stage index i: (next index, cost, pass).
    let candidates = |i: usize| -> Vec<(usize, f64, TilePass)> {
        let mut v = Vec::new();
        if i == 0 {
            for r in [8usize, 16] {
                let r = r.min((b / 64).max(1));
                let k_lo = ((2 * r * p) / b).clamp(1, p);
                let rows = 2 * p / k_lo;
                let res = k_lo.min(r).min(b / rows).max(1);
                let l = lg(k_lo);
                let cost = match res {
                    8 => match k_lo.trailing_zeros() {
                        0..=4 => 1.01,
                        5 => 1.10,
                        6..=10 => 1.145,
                        11..=12 => 1.18,
                        13..=17 => 1.18 + 0.065 * (l - 12.0),
                        _ => 1.8,
                    },
                    16 => 0.935 + 0.009 * (l - 5.0).clamp(0.0, 14.0),
                    _ => stage_term(rows.trailing_zeros() as usize),
                };
                v.push((
                    lp - k_lo.trailing_zeros() as usize + 1,
                    cost,
                    TilePass::merge(p, p, k_lo, res, rows, 0),
                ));
            }
            return v;
        }
        let k = p >> i;
        let mut d = 1;
        while d <= k {
            let k_lo2 = k / d;
            for res in [1usize, 2, 4, 8, 16, 32] {
                // (res ≤ b / 64: every register kernel has an invocation per residue)
                if res > k_lo2 || res > (b / 64).max(1) {
                    continue;
                }
                let Some(row) = row_term(res, k_lo2) else {
                    continue;
                };
                let rows = b / res;
                if 4 * d > rows {
                    continue;
                }
                let st = d.trailing_zeros() as usize + 1;
                let amp = rows as f64 / (rows - 2 * d) as f64;
                v.push((
                    i + st,
                    amp * stage_term(st) * row,
                    TilePass::merge(p, k, k_lo2, res, rows, d),
                ));
            }
            d *= 2;
        }
        v
    };
    // best[i]: cheapest way to run stages i.. (cost, pass, next).
    let mut best: Vec<Option<(f64, TilePass, usize)>> = vec![None; nst + 1];
    let cost_at = |best: &Vec<Option<(f64, TilePass, usize)>>, j: usize| {
        if j == nst {
            Some(0.0)
        } else {
            best[j].as_ref().map(|b| b.0)
        }
    };
    for i in (0..nst).rev() {
        for (j, c, tp) in candidates(i) {
            if j > nst {
                continue;
            }
            if let Some(rest) = cost_at(&best, j) {
                let total = c + rest;
                if best[i].as_ref().is_none_or(|b| total < b.0 - 1e-9) {
                    best[i] = Some((total, tp, j));
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < nst {
        let (_, tp, j) = best[i]
            .clone()
            .expect("a contiguous tail covers every stage");
        out.push(tp);
        i = j;
    }
    (best[0].as_ref().map_or(0.0, |b| b.0), out)
}

/// Build a plan of tile passes ping-ponging between `a` (input) and `b`; returns the output region.
pub(super) fn plan_tiles(
    runner: &TileRunner,
    net: Net,
    passes: &[TilePass],
    a: &wgpu::Buffer,
    b: &wgpu::Buffer,
    flags: &wgpu::Buffer,
) -> Result<(Plan, Region)> {
    let mut plan = Plan::default();
    runner.prepare(net, passes)?;
    let (mut src, mut dst) = (a, b);
    for tp in passes {
        runner.push(&mut plan, net, tp, src, dst, flags)?;
        std::mem::swap(&mut src, &mut dst);
    }
    Ok((plan, Region::words(src, net.n)))
}

/// merge-split: sort blocks of `block`, then ⌈n / block⌉ phases of merge-split (Batcher's merge of
/// two sorted blocks, p = block) between neighbouring blocks.
pub(super) fn merge_split_passes(s: &Shape, block: usize) -> Vec<TilePass> {
    let m = s.n.div_ceil(block);
    let mut passes = Vec::new();
    let mut first = TilePass::local(
        format!("sort {m} blocks of {block}"),
        block.max(2),
        (1, block / 2),
        (1, 1),
    );
    if block == 1 {
        first.p_lo = 1;
        first.p_hi = 0;
    }
    passes.push(first);
    for ph in 0..m {
        let mut tp = TilePass::local(
            format!(
                "phase {}: merge-split {} block pairs",
                ph + 1,
                if ph % 2 == 0 { "even" } else { "odd" }
            ),
            2 * block,
            (block, block),
            (block, 1),
        );
        tp.shift = (ph % 2) * block;
        passes.push(tp);
    }
    for (i, tp) in passes.iter_mut().enumerate() {
        tp.stage_id = i + 1;
    }
    passes
}
