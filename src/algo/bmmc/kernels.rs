//! From a [`PassSpec`] to a GPU pass: the kernel's specialisation constants and its table of
//! GF(2) columns (every index map inside a kernel is "XOR the columns of the set bits").

use super::GroupOrder;
use super::matrix::BitMatrix;
use super::plan::{Kernel, Params, PassSpec, T_LOW};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan, grid, specialize};

/// The WGSL source of one kernel (its buffers, the shared prelude, its file).
pub fn shader(entry: &str) -> String {
    let body = match entry {
        "naive" => include_str!("../../../shaders/bmmc/naive.wgsl"),
        "tiled" => include_str!("../../../shaders/bmmc/tiled.wgsl"),
        "tiled4" => include_str!("../../../shaders/bmmc/tiled4.wgsl"),
        "block" => include_str!("../../../shaders/bmmc/block.wgsl"),
        _ => include_str!("../../../shaders/bmmc/blockmove.wgsl"),
    };
    let buffers = if entry == "tiled4" {
        include_str!("../../../shaders/bmmc/vectors.wgsl")
    } else {
        include_str!("../../../shaders/bmmc/words.wgsl")
    };
    let table = if table_in_kernel(entry) {
        include_str!("../../../shaders/bmmc/constants.wgsl")
    } else {
        include_str!("../../../shaders/bmmc/table.wgsl")
    };
    format!("{buffers}\n{table}\n{body}")
}

/// Whether a kernel holds its table as constants (no table buffer bound).
fn table_in_kernel(entry: &str) -> bool {
    entry.starts_with("tiled")
}

/// Threads per workgroup for one-thread-per-element kernels.
const WG: u32 = 256;

/// What one GPU pass needs: entry point, constants, tables, workgroups.
#[derive(Clone, Debug)]
pub struct GpuPass {
    pub entry: &'static str,
    pub consts: Vec<(&'static str, String)>,
    pub table: Vec<u32>,
    pub groups: u32,
    /// Elements per workgroup tile (for notes).
    pub tile: usize,
}

/// log2 of the most threads a one-dimensional workgroup may have on this adapter.
fn adapter_threads_log(gpu_limits: &wgpu::Limits) -> usize {
    let inv = gpu_limits
        .max_compute_invocations_per_workgroup
        .min(gpu_limits.max_compute_workgroup_size_x);
    inv.max(1).ilog2() as usize
}

fn max_threads_log(gpu_limits: &wgpu::Limits) -> usize {
    adapter_threads_log(gpu_limits).min(WG.ilog2() as usize)
}

/// log2 of the threads of a kernel that holds 2^`bits` words in workgroup memory; an error naming
/// `what` when they do not fit this adapter's workgroup memory.
fn threads_log(limits: &wgpu::Limits, bits: usize, what: &str) -> Result<usize> {
    let bytes = 4usize << bits;
    let max = limits.max_compute_workgroup_storage_size;
    if bytes > max as usize {
        return Err(Error::Limit(format!(
            "{what} needs {} KiB of workgroup memory; this adapter has {} KiB",
            bytes / 1024,
            max / 1024
        )));
    }
    Ok(max_threads_log(limits).min(bits))
}

/// The largest tile (bits) this adapter's workgroup memory holds, capped at `cap`.
pub fn max_tile_bits(limits: &wgpu::Limits, cap: usize) -> usize {
    let words = (limits.max_compute_workgroup_storage_size / 4).max(1);
    (words.ilog2() as usize).min(cap)
}

fn extract(x: u32, bits: &[usize]) -> u32 {
    bits.iter()
        .enumerate()
        .fold(0, |a, (q, &b)| a | (x >> b & 1) << q)
}

/// The bank swizzle for a tile of `tb` bits: phys = P·local with P = I ⊕ R·high, chosen so that
/// both the read lanes (local bits 0..4) and the write lanes (`write_lanes`, the local indices of
/// the 5 lowest output bits) fall in 32 distinct banks (phys mod 32). Returns P's columns.
pub fn bank_swizzle(tb: usize, write_lanes: &[u32]) -> Vec<u32> {
    let mut p: Vec<u32> = (0..tb).map(|i| 1u32 << i).collect();
    let lb = T_LOW;
    if tb <= lb {
        return p;
    }
    let low = (1u32 << lb) - 1;
    // Reduced echelon on the high part (pivot = highest high bit).
    let mut hv: Vec<u32> = Vec::new();
    let mut lows: Vec<u32> = Vec::new();
    for &v0 in write_lanes {
        let mut v = v0;
        for &b in &hv {
            let piv = 31 - (b & !low).leading_zeros();
            if v >> piv & 1 == 1 {
                v ^= b;
            }
        }
        if v & !low == 0 {
            if v != 0 {
                lows.push(v);
            }
            continue;
        }
        let piv = 31 - (v & !low).leading_zeros();
        for b in hv.iter_mut() {
            if *b >> piv & 1 == 1 {
                *b ^= v;
            }
        }
        hv.push(v);
    }
    // A complement of span(lows) in GF(2)^5.
    let mut span: Vec<u32> = Vec::new();
    let add = |span: &mut Vec<u32>, v: u32| -> bool {
        let mut x = v;
        for &s in span.iter() {
            x = x.min(x ^ s);
        }
        if x == 0 {
            return false;
        }
        span.push(x);
        span.sort_unstable_by(|a, b| b.cmp(a));
        true
    };
    for &l in &lows {
        add(&mut span, l);
    }
    let mut comp = Vec::new();
    for i in 0..lb {
        if add(&mut span, 1 << i) {
            comp.push(1u32 << i);
        }
    }
    for (v, z) in hv.iter().zip(comp) {
        let piv = (31 - (v & !low).leading_zeros()) as usize;
        p[piv] = (1u32 << piv) | (z ^ (v & low));
    }
    p
}

/// Rank over GF(2) of the low 5 bits (the bank) of `v`'s vectors.
fn bank_rank(v: impl Iterator<Item = u32>) -> usize {
    let mut basis: Vec<u32> = Vec::new();
    for x in v {
        let x = basis.iter().fold(x & 31, |x, &b| x.min(x ^ b));
        if x != 0 {
            basis.push(x);
        }
    }
    basis.len()
}

/// The bank swizzle of the vector kernel (`tiled4`): P = I ⊕ R·high as in [`bank_swizzle`], so
/// that both the warp's stores (tile bits 2..6: 32 consecutive vectors, a word of each at a time)
/// and its loads (`write_lanes`, the local indices of output bits 2..6) fall in 32 distinct banks.
/// R is found by a seeded search, the same for the same pass; where none is conflict-free in
/// both, the one with the fewest conflicts. Returns P's columns.
pub fn vector_swizzle(tb: usize, write_lanes: &[u32]) -> Vec<u32> {
    let identity: Vec<u32> = (0..tb).map(|i| 1u32 << i).collect();
    let read_lanes: Vec<u32> = (2..7).map(|i| 1u32 << i).collect();
    let score = |p: &[u32]| {
        let on = |lanes: &[u32]| bank_rank(lanes.iter().map(|&l| apply_cols(p, l)));
        on(&read_lanes) + on(write_lanes)
    };
    let mut best = (score(&identity), identity.clone());
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..1 << 16 {
        if best.0 == 10 {
            break;
        }
        let mut p = identity.clone();
        for col in p.iter_mut().skip(T_LOW) {
            // xorshift64: a fixed sequence, so a pass's kernel (and its hash) never changes.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *col |= (state & 31) as u32;
        }
        let s = score(&p);
        if s > best.0 {
            best = (s, p);
        }
    }
    best.1
}

/// A table as WGSL's list of u32 literals.
fn wgsl_words(table: &[u32]) -> String {
    let words: Vec<String> = table.iter().map(|v| format!("{v}u")).collect();
    words.join(", ")
}

fn apply_cols(cols: &[u32], v: u32) -> u32 {
    cols.iter()
        .enumerate()
        .fold(0, |a, (i, &c)| if v >> i & 1 == 1 { a ^ c } else { a })
}

/// Whether the tiled kernel numbers the tiles of `a` by their output bits: only a bit permutation
/// can (each tile bit lands on one output bit); `auto` does, but for the bit reversal. On the H200
/// at 2^28 the output order ran the 2^14 × 2^14 transpose 3.3 % and random BPCs 1–3 % faster
/// (2^26: 2–4 %), the bit reversal as fast, and at 2^24–2^26 the bit reversal 1–6 % slower.
pub fn by_output(a: &BitMatrix, order: GroupOrder) -> bool {
    let Some(perm) = a.bit_perm() else {
        return false;
    };
    match order {
        GroupOrder::Input => false,
        GroupOrder::Output => true,
        GroupOrder::Auto => perm.iter().enumerate().any(|(j, &o)| o + j + 1 != a.n),
    }
}

/// The tiled kernel's shape for one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledShape {
    /// log2 of the workgroup's threads.
    pub threads_log: usize,
    /// log2 of the tiles a workgroup walks.
    pub tiles_log: usize,
    /// Whether it moves 16-byte vectors (`tiled4`) rather than words.
    pub vector: bool,
}

impl TiledShape {
    /// log2 of the words one load or store moves.
    pub fn access_log(&self) -> usize {
        access_log(self.vector)
    }
}

fn access_log(vector: bool) -> usize {
    if vector { VECTOR.ilog2() as usize } else { 0 }
}

/// Words a vector of the vector kernel holds, and the smallest tile (log2 words) it takes: a warp's
/// 32 vectors must lie in one tile.
pub const VECTOR: u32 = 4;
const VECTOR_MIN_TILE_BITS: usize = 7;

/// The tiled kernel's shape for a tile of 2^`tb` words among 2^`gb` tiles: log2 of its threads
/// (as asked, within the adapter, the tile and a warp), of the tiles a workgroup walks (as asked,
/// never more than there are; by default several only on large grids) and whether it moves vectors
/// (as asked; by default where the tile holds a warp's 32 vectors).
pub fn tiled_shape(
    tb: usize,
    gb: usize,
    cap: Option<usize>,
    limits: &wgpu::Limits,
    p: &Params,
) -> TiledShape {
    let vector = p.vector.unwrap_or(VECTOR) == VECTOR && tb >= VECTOR_MIN_TILE_BITS;
    let h = adapter_threads_log(limits)
        .min(tb - access_log(vector))
        .min(p.threads_log)
        .min(cap.unwrap_or(usize::MAX))
        .max(T_LOW.min(tb));
    let tiles_log = match p.tiles_log {
        Some(t) => t.min(gb),
        None => {
            let d = if vector {
                super::plan::DEFAULT_VECTOR_TILES_LOG
            } else {
                super::plan::DEFAULT_TILES_LOG
            };
            d.min(gb.saturating_sub(super::plan::MIN_GROUPS_LOG))
        }
    };
    TiledShape {
        threads_log: h,
        tiles_log,
        vector,
    }
}

/// Build the GPU pass for `spec` on an array of 2^n words (`p`: the tiled kernel's threads and
/// tiles per workgroup).
pub fn gpu_pass(spec: &PassSpec, n: usize, limits: &wgpu::Limits, p: &Params) -> Result<GpuPass> {
    let a = &spec.map.a;
    let c = spec.map.c;
    let cols = a.cols();
    let total = 1u64 << n;
    Ok(match &spec.kernel {
        Kernel::Naive => {
            let mut table = cols.clone();
            table.push(c);
            GpuPass {
                entry: "naive",
                consts: vec![("NB", n.to_string()), ("N", total.to_string())],
                table,
                groups: (total.div_ceil(WG as u64)) as u32,
                tile: 1,
            }
        }
        Kernel::Tiled {
            tin,
            threads_log: cap,
        } => {
            let tb = tin.len();
            let words = 1usize << tb;
            // The workgroups' tile bits, lowest first: consecutive workgroups take the tiles of
            // neighbouring indices on the side the group order names.
            let mut rest: Vec<usize> = (0..n).filter(|j| !tin.contains(j)).collect();
            if by_output(a, p.group_order) {
                rest.sort_by_key(|&j| cols[j].trailing_zeros());
            }
            let gb = rest.len();
            let shape = tiled_shape(tb, gb, *cap, limits, p);
            let (h, tpb) = (shape.threads_log, shape.tiles_log);
            threads_log(limits, tb, &format!("a tile of 2^{tb} words"))?;
            let rk: Vec<u32> = tin.iter().map(|&j| 1u32 << j).collect();
            let rg: Vec<u32> = rest.iter().map(|&j| 1u32 << j).collect();
            // Output basis of V = A·span(e_tin): e_0..e_{t-1}, then the rest reduced above bit t.
            let t = T_LOW.min(n);
            let mut w: Vec<u32> = (0..t).map(|i| 1u32 << i).collect();
            let mut ech: Vec<u32> = Vec::new();
            for &j in tin {
                let mut v = cols[j] & !((1u32 << t) - 1);
                for &b in &ech {
                    v = v.min(v ^ b);
                }
                if v != 0 {
                    ech.push(v);
                    ech.sort_unstable_by(|a, b| b.cmp(a));
                    w.push(v);
                }
            }
            if w.len() != tb {
                return Err(Error::Gpu(format!(
                    "internal error: pass '{}' does not fit a tile of bits {tin:?}",
                    spec.label
                )));
            }
            if shape.vector {
                // A warp's 32 vectors write the output's lowest runs: W's columns above the low
                // 5 bits in ascending order (output bit 5 first where the tile holds it).
                w[t..].sort_unstable();
            }
            let inv = a.inverse()?;
            let local: Vec<u32> = w.iter().map(|&y| extract(inv.apply(y), tin)).collect();
            let pk = if shape.vector {
                vector_swizzle(tb, &local[2..7])
            } else {
                bank_swizzle(tb, &local[..t.min(tb)])
            };
            let lm: Vec<u32> = local.iter().map(|&l| apply_cols(&pk, l)).collect();
            let wg: Vec<u32> = rest.iter().map(|&j| cols[j]).collect();
            let mut table = Vec::new();
            for part in [&rk, &rg, &pk, &w, &wg, &lm] {
                table.extend_from_slice(part);
            }
            table.push(c);
            let per_thread = tb - shape.access_log() - h;
            GpuPass {
                entry: if shape.vector { "tiled4" } else { "tiled" },
                consts: vec![
                    ("TABLEN", table.len().to_string()),
                    ("TAB", wgsl_words(&table)),
                    ("TB", tb.to_string()),
                    ("TILE", words.to_string()),
                    ("H", h.to_string()),
                    ("WG", (1u32 << h).to_string()),
                    ("ITER", (1u32 << per_thread).to_string()),
                    ("GB", gb.to_string()),
                    ("TPB", tpb.to_string()),
                ],
                table,
                groups: 1u32 << (gb - tpb),
                tile: words,
            }
        }
        Kernel::Block { k } => {
            let k = *k;
            let kk = 1usize << k;
            let h = threads_log(limits, k, &format!("kernel 1 with K = 2^{k}"))?;
            let lowm = ((1u64 << k) - 1) as u32;
            // [A (k cols), B (n-k cols, low parts), C (n-k cols, high parts >> k), c_lo, c_hi]
            let mut table: Vec<u32> = cols[..k].to_vec();
            table.extend(cols[k..].iter().map(|&v| v & lowm));
            table.extend(cols[k..].iter().map(|&v| (v as u64 >> k) as u32));
            table.push(c & lowm);
            table.push((c as u64 >> k) as u32);
            GpuPass {
                entry: "block",
                consts: vec![
                    ("KB", k.to_string()),
                    ("K", kk.to_string()),
                    ("WG", (1u32 << h).to_string()),
                    ("ITER", (1u32 << (k - h)).to_string()),
                    ("GB", (n - k).to_string()),
                ],
                table,
                groups: 1u32 << (n - k),
                tile: kk,
            }
        }
        Kernel::BlockMove { k } => {
            let k = *k;
            let mut table: Vec<u32> = cols[k..].iter().map(|&v| (v as u64 >> k) as u32).collect();
            table.push(c);
            GpuPass {
                entry: "blockmove",
                consts: vec![
                    ("KB", k.to_string()),
                    ("GB", (n - k).to_string()),
                    ("N", total.to_string()),
                ],
                table,
                groups: (total.div_ceil(WG as u64)) as u32,
                tile: 1 << k,
            }
        }
    })
}

/// Push the pass into a GPU plan: reads `src`, writes `dst`.
pub fn push(
    gpu: &Gpu,
    plan: &mut Plan,
    label: &str,
    gp: &GpuPass,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
) -> Result<()> {
    let source = specialize(&shader(gp.entry), &gp.consts);
    let pipeline = gpu.pipeline(&format!("bmmc {}", gp.entry), &source, gp.entry)?;
    if table_in_kernel(gp.entry) {
        let bg = gpu.bind(&pipeline, &[src, dst])?;
        plan.push(label, &pipeline, bg, grid(gp.groups));
        return Ok(());
    }
    let table = gpu.storage_init("bmmc table", &gp.table)?;
    let bg = gpu.bind(&pipeline, &[src, dst, &table])?;
    plan.push(label, &pipeline, bg, grid(gp.groups));
    plan.keep.push(table);
    Ok(())
}
