//! Odd-even sorting (seed 002): the seed's odd-even transposition sort in one workgroup, the same
//! scheme with one dispatch per phase, block odd-even transposition (Baudet–Stevenson merge-split)
//! and Batcher's odd-even merge sort network, all on u32/i32/f32 keys, ascending or descending.

pub mod model;
pub mod regs;
pub mod trace;

use super::{
    AlgoInfo, Algorithm, BenchCase, RoomNotes, RunRequest, RunResult, Stage, Variant,
    first_mismatch, pass_infos,
};
use crate::data::{DType, Data, example_data};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan, Region, execute, grid, specialize};
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};

const VARIANTS: &[Variant] = &[
    Variant {
        name: "transposition",
        summary: "the seed: n phases of even/odd pairs in ONE workgroup, keys in workgroup memory (--segment L: one workgroup per segment)",
    },
    Variant {
        name: "global",
        summary: "the seed's phases over a global buffer, one dispatch per phase (any N up to 2^20; slow by nature)",
    },
    Variant {
        name: "merge-split",
        summary: "block odd-even transposition (Baudet–Stevenson): sort blocks in workgroup memory, then phases of merge-split between neighbouring blocks",
    },
    Variant {
        name: "batcher",
        summary: "Batcher's odd-even merge sort network: tiles in workgroup memory, fused global stages (--segment L: every segment in one dispatch)",
    },
];

static INFO: AlgoInfo = AlgoInfo {
    name: "oddeven",
    title: "Odd-even sorting",
    summary: "Odd-even transposition sort (the seed), its one-dispatch-per-phase form, block merge-split and Batcher's odd-even merge sort. f32 sorts in the total order -NaN < -inf < … < -0 < +0 < … < inf < NaN.",
    variants: VARIANTS,
    dtypes: &[DType::U32, DType::I32, DType::F32],
    seed: "002",
};

/// The seed's example (10 elements, 10 phases).
pub const EXAMPLE: [i64; 10] = [3, 7, 11, 10, 4, 20, 2, 8, 12, 1];
pub const EXAMPLE_RESULT: [i64; 10] = [1, 2, 3, 4, 7, 8, 10, 11, 12, 20];

const KEYS: &str = include_str!("../../../shaders/oddeven/keys.wgsl");
const TRANSPOSITION: &str = include_str!("../../../shaders/oddeven/transposition.wgsl");
const GLOBAL: &str = include_str!("../../../shaders/oddeven/global.wgsl");
const BATCHER: &str = include_str!("../../../shaders/oddeven/batcher.wgsl");
/// Parameters, bindings and `index_of`, shared by batcher.wgsl and the generated register kernel.
const TILE: &str = include_str!("../../../shaders/oddeven/tile.wgsl");
const POISON: u32 = 0xDEAD_BEEF;
/// The longest segment `--segment` takes.
pub const MAX_SEGMENT: usize = 4096;
/// The largest N of the `global` variant (one dispatch per phase).
pub const MAX_GLOBAL: usize = 1 << 20;
/// The transposition kernel plays up to this many owners per loop iteration (straight-line code).
const MAX_UNROLL: usize = 64;
/// lavapipe (Mesa llvmpipe) ends every loop of an invocation once the shader has run this many loop
/// iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS, shared by every loop of the shader): the kernel
/// then silently stops sorting. Configurations above it are refused on that driver.
pub const LLVMPIPE_LOOP_LIMIT: u64 = 65535;
/// `--tiles-per-workgroup` at most (the generated loop holds one tile's keys in registers).
pub const MAX_TILES_PER_WG: usize = 16;

/// Tiles per workgroup for a register pass of `tiles` tiles, fitted to H100 per-pass medians
/// (bench/h100-sort17.sh, sort18.sh; docs/PERFORMANCE.md). Passes that hand their keys through
/// workgroup memory before storing (local sorts, contiguous tails) gain most: the next tile's
/// loads fly during the stores (2^28 tails 1.27 → 1.05 ms, 2^24 0.086 → 0.069 with S = 8)
/// from 2048 tiles on (at 2^22, ~550 tiles, S = 2 made them up to 25% slower). Heads and strided tails store straight from registers and
/// prefetch only after their stores: S = 2 helps heads from 4096 tiles (S = 4 slows heads of
/// p ≥ 2^24 by 3–7%), and strided tails only with many tiles (their halo tiles multiply
/// with p: 2^28 1.52 → 1.31 ms at S = 4, 2^26 2–5% slower at S = 2). Segments: S = 4 for 4096
/// (0.2331 → 0.2288 ms at 2^24) while ~1024 workgroups remain, 1 for 2048 and 1024 (every S > 1 slower). CPU adapters: 1 (llvmpipe
/// gains nothing and compiles longer).
fn default_tiles_per_wg(gpu: &Gpu, rp: &regs::RegsPass, tiles: usize, segmented: bool) -> usize {
    if gpu.info.device_type == wgpu::DeviceType::Cpu {
        1
    } else if segmented {
        if rp.tile >= 4096 {
            (tiles / 1024).clamp(1, 4)
        } else {
            1
        }
    } else if regs::stores_through_workgroup_memory(rp) {
        if tiles >= 2048 {
            (tiles / 256).min(8)
        } else {
            1
        }
    } else if rp.halo == 0 {
        if tiles >= 4096 { 2 } else { 1 }
    } else {
        (tiles / 8192).clamp(1, 4)
    }
}

/// The loop-iteration cap of this adapter's driver, if it has one.
fn loop_limit(gpu: &Gpu) -> Option<u64> {
    gpu.adapter_name()
        .to_lowercase()
        .contains("llvmpipe")
        .then_some(LLVMPIPE_LOOP_LIMIT)
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct Options {
    /// Sort independent segments of length L (≤ 4096) in one dispatch (transposition, batcher); N must be a multiple of L.
    #[arg(long)]
    pub segment: Option<usize>,
    /// Sort in descending order.
    #[arg(long)]
    pub descending: bool,
    /// merge-split block size (a power of two ≤ half the workgroup tile; default: about N/8).
    #[arg(long)]
    pub block: Option<usize>,
    /// Tuning (batcher, merge-split): keys per workgroup tile, a power of two ≥ 256 that fits workgroup memory (default: the largest ≤ 8192; batcher: ≤ 4096, the H100's best).
    #[arg(long)]
    pub tile: Option<usize>,
    /// Tuning: invocations per workgroup at most (default: min(1024, the adapter's limit); batcher: 512, the H100's best).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Tile kernel (batcher, merge-split): auto (untraced runs: the generated register kernel wherever a tile fits it, else generic), registers (refuse what it cannot run), generic (shaders/oddeven/batcher.wgsl, one stage per barrier; traces always use it).
    #[arg(long, value_enum, default_value_t = TileKernel::Auto)]
    pub kernel: TileKernel,
    /// Register kernel: keys per invocation, 8, 16 or 32 (default 32; 16 for segments ≤ 2048 and on CPU adapters): groups of up to log2 of it stages between trips through workgroup memory, tile/E invocations.
    #[arg(long)]
    pub keys_per_invocation: Option<usize>,
    /// Register kernel: tiles per workgroup, 1 ..= 16, run one after the other with the next tile's loads issued before this tile's stores (default: per pass from H100 measurements; 1 on CPU adapters).
    #[arg(long)]
    pub tiles_per_workgroup: Option<usize>,
}

/// Which kernel runs the tile passes of batcher and merge-split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TileKernel {
    /// Registers where the pass fits them (untraced), else generic.
    #[default]
    Auto,
    /// The generated register kernel (src/algo/oddeven/regs.rs): E keys per invocation.
    Registers,
    /// shaders/oddeven/batcher.wgsl: one stage per barrier in workgroup memory; writes the trace.
    Generic,
}

/// What this adapter allows for the tiled kernels.
#[derive(Clone, Copy, Debug)]
struct Caps {
    /// Invocations per workgroup we use at most.
    wg_max: u32,
    /// The largest tile (a power of two) of u32 keys in workgroup memory.
    tile: usize,
    /// The largest array the single-workgroup transposition kernel holds.
    words: usize,
}

fn caps_of(gpu: &Gpu) -> Caps {
    let l = &gpu.limits;
    let words = (l.max_compute_workgroup_storage_size / 4) as usize;
    let tile = if words == 0 {
        0
    } else {
        (1usize << words.ilog2()).min(8192)
    };
    Caps {
        wg_max: 1024
            .min(l.max_compute_invocations_per_workgroup)
            .min(l.max_compute_workgroup_size_x)
            .max(1),
        tile,
        words,
    }
}

fn key_params(dtype: DType, desc: bool) -> Vec<(&'static str, String)> {
    vec![
        (
            "DTYPE",
            match dtype {
                DType::U32 => "0",
                DType::I32 => "1",
                DType::F32 => "2",
            }
            .to_string(),
        ),
        ("DESC", desc.to_string()),
    ]
}

fn source(kernel: &str, dtype: DType, desc: bool, extra: &[(&'static str, String)]) -> String {
    let mut p = key_params(dtype, desc);
    p.extend_from_slice(extra);
    specialize(&format!("{KEYS}\n{kernel}"), &p)
}

/// The problem as the kernels see it.
#[derive(Clone, Copy, Debug)]
struct Shape {
    dtype: DType,
    desc: bool,
    n: usize,
    /// Segment length (n when the whole array is one segment).
    seg: usize,
    segmented: bool,
}

impl Shape {
    fn nseg(&self) -> usize {
        self.n / self.seg
    }
}

impl Options {
    /// The adapter's caps, narrowed by --tile / --threads.
    fn caps(&self, gpu: &Gpu, variant: &str) -> Result<Caps> {
        let adapter = caps_of(gpu);
        let mut c = adapter;
        if variant == "batcher" {
            // Defaults from the H100 sweeps (docs/PERFORMANCE.md). Generic kernel: 4096-key tiles
            // with 512 threads beat 8192 with 1024 in every batcher case. Register kernel, whole
            // arrays: 8192-key tiles where they fit (one workgroup buffer; full sort 2^28: 95 ms
            // against 157 with 4096: fewer global passes).
            let keys = self.keys(gpu)?;
            let fits_8192 = self.kernel != TileKernel::Generic
                && self.segment.is_none()
                && adapter.wg_max as usize >= 8192 / keys
                && regs::RegsPass::smem_bytes(8192, keys, false)
                    <= gpu.limits.max_compute_workgroup_storage_size as usize;
            c.tile = c.tile.min(if fits_8192 { 8192 } else { 4096 });
            c.wg_max = c.wg_max.min(512);
            // Segments of 1024..4096: one segment per tile and 8–16 keys per invocation (H100,
            // 2^24 keys: 1024 → tile 1024 × 128 threads 30.9 Gkeys/s against 28.4 at 4096 × 512;
            // 2048 → 2048 × 128 24.8 against 23.4; 4096 → 4096 × 256 19.9 against 19.7).
            if let Some(l) = self.segment
                && (1024..=4096).contains(&l)
            {
                c.tile = c.tile.min(l.next_power_of_two());
                c.wg_max = c.wg_max.min((c.tile / 16).max(128) as u32);
            }
        }
        if let Some(t) = self.tile {
            if !t.is_power_of_two() || t < 256 || t > adapter.tile {
                return Err(Error::Input(format!(
                    "--tile {t}: a power of two from 256 to {} (this adapter's workgroup memory holds {} keys)",
                    adapter.tile, c.words
                )));
            }
            c.tile = t;
        }
        if let Some(w) = self.threads {
            if w == 0 || w > adapter.wg_max {
                return Err(Error::Input(format!(
                    "--threads {w}: from 1 to {} (max_compute_invocations_per_workgroup)",
                    adapter.wg_max
                )));
            }
            c.wg_max = w;
        }
        Ok(c)
    }

    fn shape(&self, variant: &str, dtype: DType, n: usize) -> Result<Shape> {
        if n == 0 {
            return Err(Error::input("input is empty"));
        }
        let seg = match self.segment {
            None => n,
            Some(l) => {
                if !matches!(variant, "transposition" | "batcher") {
                    return Err(Error::Input(format!(
                        "--segment is for the transposition and batcher variants, not {variant}"
                    )));
                }
                if l == 0 || l > MAX_SEGMENT {
                    return Err(Error::Input(format!(
                        "--segment {l}: the segment length must be 1 ..= {MAX_SEGMENT}"
                    )));
                }
                if !n.is_multiple_of(l) {
                    return Err(Error::Input(format!(
                        "--segment {l}: N = {n} is not a multiple of the segment length (N mod L = {})",
                        n % l
                    )));
                }
                l
            }
        };
        if !matches!(variant, "batcher" | "merge-split") {
            let flag = if self.kernel != TileKernel::Auto {
                Some("--kernel")
            } else if self.keys_per_invocation.is_some() {
                Some("--keys-per-invocation")
            } else if self.tiles_per_workgroup.is_some() {
                Some("--tiles-per-workgroup")
            } else {
                None
            };
            if let Some(flag) = flag {
                return Err(Error::Input(format!(
                    "{flag} is for the batcher and merge-split variants, not {variant}"
                )));
            }
        }
        if self.block.is_some() && variant != "merge-split" {
            return Err(Error::Input(format!(
                "--block is for the merge-split variant, not {variant}"
            )));
        }
        Ok(Shape {
            dtype,
            desc: self.descending,
            n,
            seg,
            segmented: self.segment.is_some(),
        })
    }

    fn keys(&self, gpu: &Gpu) -> Result<usize> {
        match self.keys_per_invocation {
            // H100, 2^24 keys (bench/h100-sort11.sh): segments of 1024 / 2048 run best with 16 keys
            // per invocation (0.139 / 0.178 ms against 0.141 / 0.194 with 32), 4096 and whole
            // arrays with 32 (0.234 against 0.257; full sort 2^28 55.2 ms against 63.6; 64 keys,
            // measured at 64.6 ms and slowest everywhere, is not offered). CPU adapters (llvmpipe)
            // keep 16: LLVM compiles the 32-key kernels about twice as long, which a CPU run never
            // wins back.
            None => Ok(match self.segment {
                Some(l) if l <= 2048 => 16,
                _ if gpu.info.device_type == wgpu::DeviceType::Cpu => 16,
                _ => 32,
            }),
            Some(e @ (8 | 16 | 32)) => Ok(e),
            Some(e) => Err(Error::Input(format!(
                "--keys-per-invocation {e}: 8, 16 or 32"
            ))),
        }
    }

    fn tiles_per_workgroup(&self) -> Result<Option<usize>> {
        match self.tiles_per_workgroup {
            Some(s) if !(1..=MAX_TILES_PER_WG).contains(&s) => Err(Error::Input(format!(
                "--tiles-per-workgroup {s}: 1 ..= {MAX_TILES_PER_WG}"
            ))),
            s => Ok(s),
        }
    }

    fn block_size(&self, caps: &Caps, n: usize) -> Result<usize> {
        let max = caps.tile / 2;
        match self.block {
            Some(b) => {
                if b == 0 || !b.is_power_of_two() || b > max {
                    Err(Error::Input(format!(
                        "--block {b}: the merge-split block must be a power of two from 1 to {max} (half the workgroup tile on this adapter)"
                    )))
                } else {
                    Ok(b)
                }
            }
            None => Ok(n.div_ceil(8).next_power_of_two().clamp(1, max.max(1))),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// transposition: one workgroup per segment

fn check_transposition(caps: &Caps, s: &Shape, trace: bool) -> Result<()> {
    if s.seg > caps.words {
        return Err(Error::Limit(format!(
            "transposition keeps the whole array in one workgroup's memory: N = {} needs {} bytes, this adapter has {} (max_compute_workgroup_storage_size), i.e. at most {} keys; use --segment, merge-split or batcher",
            s.seg,
            s.seg * 4,
            caps.words * 4,
            caps.words
        )));
    }
    if trace && s.seg * s.n > 1 << 22 {
        return Err(Error::Limit(format!(
            "a transposition trace writes the array after each of its {} phases: {} × {} words is above the 4 Mi-word trace limit; use a smaller N (or --segment) or drop --trace",
            s.seg, s.seg, s.n
        )));
    }
    Ok(())
}

/// The transposition kernel's unroll factor U and the loop iterations one invocation runs (every
/// loop of the shader counted, as llvmpipe counts them: every entry of a loop costs its iterations
/// + 1, so a phase costs (⌈owners / (U·W)⌉ + 1) + 1, plus ⌈L / (U·W)⌉ + 1 when traced).
fn transposition_loops(seg: usize, wg: usize, trace: bool) -> (usize, u64) {
    let owners = seg.div_ceil(2);
    let unroll = owners.div_ceil(wg).clamp(1, MAX_UNROLL);
    let per = |items: usize| items.div_ceil(unroll * wg) as u64 + 1;
    let phase = per(owners) + 1 + if trace { per(seg) } else { 0 };
    let copies = 2 * (seg.div_ceil(wg) as u64 + 1);
    (unroll, seg as u64 * phase + copies + 1)
}

struct Traced {
    plan: Plan,
    out: Region,
    /// (data, flags) buffers the kernels write per stage (transposition), else empty.
    trace: Option<(wgpu::Buffer, wgpu::Buffer)>,
}

fn plan_transposition(
    gpu: &Gpu,
    caps: &Caps,
    s: &Shape,
    data: &wgpu::Buffer,
    trace: bool,
) -> Result<Traced> {
    check_transposition(caps, s, trace)?;
    let wg = caps.wg_max.min(s.seg.div_ceil(2) as u32).max(1);
    let (unroll, iters) = transposition_loops(s.seg, wg as usize, trace);
    if let Some(limit) = loop_limit(gpu)
        && iters + 16 > limit
    {
        let max_wg = caps_of(gpu).wg_max.min(s.seg.div_ceil(2) as u32).max(1) as usize;
        let min_wg = (1..=max_wg)
            .find(|&w| transposition_loops(s.seg, w, trace).1 <= limit)
            .map(|w| format!("use --threads ≥ {w}"))
            .unwrap_or_else(|| "use --segment or batcher".into());
        return Err(Error::Limit(format!(
            "transposition of L = {} with {wg} invocations loops {iters} times per invocation; this driver (llvmpipe) stops a shader after {limit} loop iterations (LP_MAX_TGSI_LOOP_ITERATIONS): {min_wg}",
            s.seg
        )));
    }
    let call = |f: &str| {
        (0..unroll)
            .map(|u| format!("            {f}").replace("#", &format!("{u}u")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let src = source(
        TRANSPOSITION,
        s.dtype,
        s.desc,
        &[
            ("WG", wg.to_string()),
            ("TILE", s.seg.to_string()),
            ("UNROLL", unroll.to_string()),
            ("OWNERS", call("owner(i + # * WG, ph, L, owners, base, n);")),
            ("TRACE", call("trace_word(x + # * WG, ph, L, base, n);")),
        ],
    );
    let pipe = gpu.pipeline("oddeven transposition", &src, "transposition")?;
    let words = if trace { s.seg * s.n } else { 1 };
    let tr_data = gpu.storage_poisoned("oddeven trace data", words, POISON)?;
    let tr_swap = gpu.storage_poisoned("oddeven trace flags", words, POISON)?;
    let u = gpu.uniform(
        "oddeven transposition params",
        &[s.n as u32, s.seg as u32, trace as u32, s.nseg() as u32],
    )?;
    let bg = gpu.bind(&pipe, &[data, &u, &tr_data, &tr_swap])?;
    let mut plan = Plan::default();
    let label = if s.segmented {
        format!(
            "{} segments × {} phases, one workgroup each ({wg} invocations)",
            s.nseg(),
            s.seg
        )
    } else {
        format!(
            "{} phases in one workgroup ({wg} invocations, {} owners)",
            s.seg,
            s.seg.div_ceil(2)
        )
    };
    plan.push(label, &pipe, bg, grid(s.nseg() as u32)).capture = if trace {
        vec![Region::whole(&tr_data), Region::whole(&tr_swap)]
    } else {
        vec![]
    };
    plan.keep.push(u);
    Ok(Traced {
        plan,
        out: Region::words(data, s.n),
        trace: Some((tr_data, tr_swap)),
    })
}

// ---------------------------------------------------------------------------------------------
// global: one dispatch per phase

fn plan_global(
    gpu: &Gpu,
    s: &Shape,
    data: &wgpu::Buffer,
    flags: &wgpu::Buffer,
    trace: bool,
) -> Result<Plan> {
    if s.n > MAX_GLOBAL {
        return Err(Error::Limit(format!(
            "global runs one dispatch per phase: N = {} would be {} dispatches; it takes N ≤ 2^20",
            s.n, s.n
        )));
    }
    if trace && s.n > 2048 {
        return Err(Error::Limit(format!(
            "a global trace reads the array back after each of its {} phases; trace N ≤ 2048",
            s.n
        )));
    }
    let src = source(GLOBAL, s.dtype, s.desc, &[]);
    let pipe = gpu.pipeline("oddeven global", &src, "phase")?;
    let groups = grid((s.n.div_ceil(2) as u32).div_ceil(256));
    let mut plan = Plan::default();
    // Untraced: two bind groups (even, odd) shared by all phases.
    let mut shared = Vec::new();
    if !trace {
        for parity in 0..2u32 {
            let u = gpu.uniform("oddeven global params", &[s.n as u32, parity, 0, 0])?;
            shared.push(gpu.bind(&pipe, &[data, &u, flags])?);
            plan.keep.push(u);
        }
    }
    for ph in 0..s.n {
        let parity = (ph % 2) as u32;
        let bg = if trace {
            let u = gpu.uniform("oddeven global params", &[s.n as u32, parity, 1, ph as u32])?;
            let bg = gpu.bind(&pipe, &[data, &u, flags])?;
            plan.keep.push(u);
            bg
        } else {
            shared[parity as usize].clone()
        };
        plan.push(
            format!(
                "phase {}: {} pairs",
                ph + 1,
                if parity == 0 { "even" } else { "odd" }
            ),
            &pipe,
            bg,
            groups,
        )
        .capture = if trace {
            vec![Region::words(data, s.n), Region::words(flags, s.n)]
        } else {
            vec![]
        };
    }
    Ok(plan)
}

// ---------------------------------------------------------------------------------------------
// tiles of Batcher's network (batcher, merge-split)

/// One dispatch of `batcher.wgsl`'s `tile` kernel.
#[derive(Clone, Debug)]
struct TilePass {
    label: String,
    p_lo: usize,
    p_hi: usize,
    k_first: usize,
    k_last: usize,
    k_lo: usize,
    res: usize,
    rows: usize,
    halo: usize,
    shift: usize,
    stage_id: usize,
}

impl TilePass {
    /// A contiguous, aligned tile of `rows` positions running stages (p_lo, k_first) … (p_hi, k_last).
    fn local(label: String, rows: usize, p: (usize, usize), k: (usize, usize)) -> TilePass {
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
    fn merge(p: usize, k_first: usize, k_lo: usize, res: usize, rows: usize, halo: usize) -> Self {
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
    fn stage_list(&self) -> Vec<(usize, usize)> {
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

    fn stages(&self) -> usize {
        self.stage_list().len()
    }
}

/// Network geometry of the tile kernel.
#[derive(Clone, Copy, Debug)]
struct Net {
    n: usize,
    seg_len: usize,
    seg_pad: usize,
}

impl Net {
    fn whole(n: usize) -> Net {
        Net {
            n,
            seg_len: n,
            seg_pad: 1 << 31,
        }
    }

    fn span(&self, shift: usize) -> usize {
        if self.seg_len == self.n {
            self.n + shift
        } else {
            (self.n / self.seg_len) * self.seg_pad + shift
        }
    }
}

struct TileRunner<'a> {
    gpu: &'a Gpu,
    caps: Caps,
    dtype: DType,
    desc: bool,
    trace: bool,
    kernel: TileKernel,
    /// Register kernel: keys per invocation.
    keys: usize,
    /// Register kernel: tiles per workgroup (None: `default_tiles_per_wg`).
    tiles_per_wg: Option<usize>,
}

impl TileRunner<'_> {
    /// The register kernel's form of `tp`, or why it cannot run it.
    fn regs_pass(
        &self,
        tp: &TilePass,
        tiles: usize,
        segmented: bool,
    ) -> std::result::Result<regs::RegsPass, String> {
        if self.trace {
            return Err("traces are written by the generic kernel".into());
        }
        let size = tp.res * tp.rows;
        let adapter = caps_of(self.gpu);
        let keys = self.keys;
        if !size.is_power_of_two() || size < 256 || size / keys < tp.res {
            return Err(format!(
                "a tile of {size} keys (the register kernel needs a power of two ≥ 256)"
            ));
        }
        if size / keys > adapter.wg_max as usize {
            return Err(format!(
                "a tile of {size} keys needs {} invocations per workgroup ({keys} keys each); this adapter allows {}",
                size / keys,
                adapter.wg_max
            ));
        }
        let limit = self.gpu.limits.max_compute_workgroup_storage_size as usize;
        let double = regs::RegsPass::smem_bytes(size, keys, true) <= limit;
        if !double && regs::RegsPass::smem_bytes(size, keys, false) > limit {
            return Err(format!(
                "a tile of {size} keys needs {} bytes of workgroup memory; this adapter has {limit}",
                regs::RegsPass::smem_bytes(size, keys, false)
            ));
        }
        let list = tp.stage_list();
        if list.is_empty() {
            return Err("no stages".into());
        }
        let written = tp.rows - 2 * tp.halo;
        let mut stages = Vec::with_capacity(list.len());
        let mut lblk = 0;
        let mut flip = None;
        for &(p, k) in &list {
            let block_rows = 2 * p / tp.k_lo;
            let k_z = k / tp.k_lo * tp.res;
            if tp.halo == 0 && block_rows <= tp.rows {
                stages.push((regs::Block::Local(block_rows * tp.res / 2), k_z));
            } else {
                // Tiles start at row -halo + a multiple of `written`: a halo of d mod 2d puts the
                // stage's pairs inside the tile (the pass's first stage), 0 mod 2d straddles.
                let d = k / tp.k_lo;
                let aligned = k == tp.k_first && tp.halo % (2 * d) == d;
                if k == p
                    || tp.p_lo != tp.p_hi
                    || !(aligned || tp.halo.is_multiple_of(2 * d))
                    || !written.is_multiple_of(2 * d)
                {
                    return Err(format!("stage (p {p}, k {k}) of a halo tile"));
                }
                if aligned {
                    flip = Some(k_z);
                }
                lblk = block_rows.ilog2();
                stages.push((regs::Block::Masked, k_z));
            }
        }
        let mut rp = regs::RegsPass {
            tile: size,
            keys,
            lres: tp.res.ilog2(),
            lk_lo: tp.k_lo.ilog2(),
            halo: tp.halo,
            stages,
            lblk,
            aligned_first: flip,
            shuffle_within: sg_min(self.gpu),
            double,
            tiles_per_wg: 1,
        };
        rp.tiles_per_wg = self
            .tiles_per_wg
            .unwrap_or_else(|| default_tiles_per_wg(self.gpu, &rp, tiles, segmented));
        Ok(rp)
    }

    fn push(
        &self,
        plan: &mut Plan,
        net: Net,
        tp: &TilePass,
        src: &wgpu::Buffer,
        dst: &wgpu::Buffer,
        flags: &wgpu::Buffer,
    ) -> Result<()> {
        let size = tp.res * tp.rows;
        let written = tp.rows - 2 * tp.halo;
        let groups = tp.k_lo / tp.res;
        let rows_total = net.span(tp.shift).div_ceil(tp.k_lo);
        let tiles = groups * rows_total.div_ceil(written).max(1);
        if tiles > u32::MAX as usize / 2 {
            return Err(Error::Limit(format!("{tiles} tiles are too many")));
        }
        let segmented = net.seg_len != net.n;
        let rp = match self.kernel {
            TileKernel::Generic => None,
            TileKernel::Auto => self.regs_pass(tp, tiles, segmented).ok(),
            TileKernel::Registers => Some(self.regs_pass(tp, tiles, segmented).map_err(|why| {
                Error::Input(format!("--kernel registers cannot run {}: {why}", tp.label))
            })?),
        };
        let wg = match &rp {
            Some(rp) => rp.threads() as u32,
            None => self.caps.wg_max.min((size / 2).max(1) as u32),
        };
        if rp.is_none()
            && let Some(limit) = loop_limit(self.gpu)
            && batcher_loops(size, wg as usize, tp.stages()) + 16 > limit
        {
            let max_wg = caps_of(self.gpu).wg_max.min((size / 2).max(1) as u32) as usize;
            let hint = (1..=max_wg)
                .find(|&w| batcher_loops(size, w, tp.stages()) + 16 <= limit)
                .map_or_else(
                    || "use a smaller --tile".into(),
                    |w| format!("use --threads ≥ {w}"),
                );
            return Err(Error::Limit(format!(
                "batcher tile of {size} keys with {wg} invocations may loop {} times per invocation; this driver (llvmpipe) stops a shader after {limit} loop iterations (LP_MAX_TGSI_LOOP_ITERATIONS): {hint}",
                batcher_loops(size, wg as usize, tp.stages())
            )));
        }
        let pipe = match &rp {
            Some(rp) => {
                let code = source(
                    &format!("{TILE}\n{}", regs::shader(rp)),
                    self.dtype,
                    self.desc,
                    &[],
                );
                self.gpu
                    .pipeline("oddeven batcher registers", &code, "regs")?
            }
            None => {
                let code = source(
                    &format!("{TILE}\n{BATCHER}"),
                    self.dtype,
                    self.desc,
                    &[("WG", wg.to_string()), ("TILE", size.to_string())],
                );
                self.gpu.pipeline("oddeven batcher tile", &code, "tile")?
            }
        };
        let lg = |x: usize| x.max(1).ilog2();
        let u = self.gpu.uniform(
            "oddeven tile params",
            &[
                net.n as u32,
                net.seg_len as u32,
                lg(net.seg_pad),
                tp.shift as u32,
                lg(tp.k_lo),
                lg(tp.res),
                tp.rows as u32,
                tp.halo as u32,
                lg(tp.p_lo),
                lg(tp.k_first),
                tp.stages() as u32,
                self.trace as u32,
                tp.stage_id as u32,
                groups as u32,
                tiles as u32,
                0,
            ],
        )?;
        let bg = self.gpu.bind(&pipe, &[src, dst, &u, flags])?;
        plan.push(
            format!(
                "{} [{} tiles of {size}{}]",
                tp.label,
                tiles,
                match &rp {
                    Some(r) if r.tiles_per_wg > 1 =>
                        format!(", registers, {} tiles per workgroup", r.tiles_per_wg),
                    Some(_) => ", registers".into(),
                    None => String::new(),
                }
            ),
            &pipe,
            bg,
            grid(tiles.div_ceil(rp.as_ref().map_or(1, |r| r.tiles_per_wg)) as u32),
        )
        .capture = if self.trace {
            vec![Region::words(dst, net.n), Region::words(flags, net.n)]
        } else {
            vec![]
        };
        plan.keep.push(u);
        Ok(())
    }
}

/// The adapter's minimum subgroup size, or 0 without subgroup operations.
fn sg_min(gpu: &Gpu) -> usize {
    if gpu.has_subgroups() {
        gpu.info.subgroup_min_size as usize
    } else {
        0
    }
}

/// An upper bound on the loop iterations one invocation of batcher.wgsl's `tile` kernel runs for a
/// tile of `size` keys, `wg` invocations and `stages` network stages, counted as llvmpipe counts
/// them (every loop entry costs its iterations + 1): per stage the plain step's task loop, or a
/// register step's task loop with its two 8-key loops (charged to each stage it covers, ÷ 3), plus
/// the outer loop, the load and the store.
fn batcher_loops(size: usize, wg: usize, stages: usize) -> u64 {
    let per = |items: usize| items.div_ceil(wg) as u64 + 1;
    let plain = per(size / 2);
    let regs = per(size / 8) * 19 / 3 + 1;
    stages as u64 * (plain.max(regs) + 1) + 2 * per(size) + 1
}

/// The passes of Batcher's network: fused (few passes) or one pass per stage (trace).
fn batcher_passes(caps: &Caps, s: &Shape, fused: bool) -> Result<(Net, Vec<TilePass>)> {
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
                let res = k.min(32);
                let (rows, halo) = if k == p { (2, 0) } else { (b / res, 2) };
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
/// 8192-key tiles, 2^28 keys; docs/PERFORMANCE.md, bench/h100-sort14.sh). In ms per pass at 2^28:
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
fn merge_passes(p: usize, b: usize) -> Vec<TilePass> {
    merge_plan(p, b).1
}

/// `merge_passes` with the model's cost (ms at 2^28 on the H100).
fn merge_plan(p: usize, b: usize) -> (f64, Vec<TilePass>) {
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
fn plan_tiles(
    runner: &TileRunner,
    net: Net,
    passes: &[TilePass],
    a: &wgpu::Buffer,
    b: &wgpu::Buffer,
    flags: &wgpu::Buffer,
) -> Result<(Plan, Region)> {
    let mut plan = Plan::default();
    let (mut src, mut dst) = (a, b);
    for tp in passes {
        runner.push(&mut plan, net, tp, src, dst, flags)?;
        std::mem::swap(&mut src, &mut dst);
    }
    Ok((plan, Region::words(src, net.n)))
}

/// merge-split: sort blocks of `block`, then ⌈n / block⌉ phases of merge-split (Batcher's merge of
/// two sorted blocks, p = block) between neighbouring blocks.
fn merge_split_passes(s: &Shape, block: usize) -> Vec<TilePass> {
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

// ---------------------------------------------------------------------------------------------

/// GPU swap flags for `want`'s pairs: (flag >> 1) must be the stage id, bit 0 the swap.
fn gpu_pairs(
    want: &[model::Pair],
    flags: &[u32],
    stage_id: usize,
    base: usize,
) -> std::result::Result<Vec<model::Pair>, String> {
    let mut out = Vec::with_capacity(want.len());
    for &(i, j, _) in want {
        let f = flags.get(base + i as usize).copied().unwrap_or(POISON);
        if f >> 1 != stage_id as u32 {
            return Err(format!(
                "no GPU flag for pair ({i}, {j}) of stage {stage_id} (found {f:#x})"
            ));
        }
        out.push((i, j, f & 1 == 1));
    }
    Ok(out)
}

impl Algorithm for Options {
    fn info(&self) -> &'static AlgoInfo {
        &INFO
    }

    fn example(&self, dtype: DType) -> Option<Data> {
        Some(example_data(&EXAMPLE, dtype))
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Err(Error::input("input is empty"));
        }
        if let Some(l) = self.segment
            && l > 0
            && !n.is_multiple_of(l)
        {
            return Err(Error::Input(format!(
                "--segment {l}: N = {n} is not a multiple of the segment length (N mod L = {})",
                n % l
            )));
        }
        Ok(())
    }

    fn run(&self, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
        let input = &req.input;
        let variant = req.variant.name;
        let s = self.shape(variant, req.dtype, input.len())?;
        let caps = self.caps(gpu, variant)?;
        let (dtype, desc, n) = (s.dtype, s.desc, s.n);
        let want = model::sort_segments(dtype, desc, &input.bits, s.seg);
        let mut stages = vec![Stage::with(
            "input",
            input.clone(),
            RoomNotes::Oddeven(trace::Notes {
                pairs: Some(Vec::new()),
                ..Default::default()
            }),
        )];
        let mut extra = Map::new();
        extra.insert("descending".into(), json!(desc));
        extra.insert("segment".into(), json!(self.segment));
        let mut mismatch = None;
        let note_mismatch = |m: Option<String>, mm: &mut Option<String>| {
            if mm.is_none() {
                *mm = m;
            }
        };
        let output;
        let passes;
        // CPU model stages (for the trace check and first_sorted_phase), when affordable.
        let model_ok = |cost: usize| req.trace || cost <= 1 << 27;
        match variant {
            "transposition" | "global" => {
                let data = gpu.storage_init("oddeven data", &input.bits)?;
                let (plan, ex) = if variant == "transposition" {
                    let mut t = plan_transposition(gpu, &caps, &s, &data, req.trace)?;
                    t.plan.output = Some(t.out.clone());
                    t.plan
                        .keep
                        .extend(t.trace.map(|(a, b)| vec![a, b]).unwrap_or_default());
                    let ex = execute(gpu, &t.plan, req.trace)?;
                    (t.plan, ex)
                } else {
                    let flags = gpu.storage_poisoned("oddeven flags", n, POISON)?;
                    let mut plan = plan_global(gpu, &s, &data, &flags, req.trace)?;
                    plan.output = Some(Region::words(&data, n));
                    plan.keep.push(flags);
                    let ex = execute(gpu, &plan, req.trace)?;
                    (plan, ex)
                };
                let phases = if model_ok(s.seg * n) {
                    Some(model::transposition(dtype, desc, &input.bits, s.seg))
                } else {
                    None
                };
                let mut gpu_rows: Vec<Vec<u32>> = Vec::new();
                if req.trace {
                    let phases = phases.as_ref().expect("traced runs build the model");
                    for (ph, cpu) in phases.iter().enumerate() {
                        let (row, flags, base) = if variant == "transposition" {
                            let c = &ex.captures[0];
                            (c[0][ph * n..(ph + 1) * n].to_vec(), &c[1], ph * n)
                        } else {
                            let c = &ex.captures[ph];
                            (c[0].clone(), &c[1], 0)
                        };
                        note_mismatch(
                            first_mismatch(dtype, &row, &cpu.data)
                                .map(|m| format!("phase {}: {m}", ph + 1)),
                            &mut mismatch,
                        );
                        let pairs = match gpu_pairs(&cpu.pairs, flags, ph, base) {
                            Ok(p) => p,
                            Err(e) => {
                                note_mismatch(Some(e), &mut mismatch);
                                cpu.pairs.clone()
                            }
                        };
                        if pairs != cpu.pairs {
                            note_mismatch(
                                Some(format!("phase {}: swap flags differ", ph + 1)),
                                &mut mismatch,
                            );
                        }
                        let parity = if ph % 2 == 0 { "even" } else { "odd" };
                        stages.push(trace::network_stage(
                            format!("phase {} ({parity})", ph + 1),
                            dtype,
                            row.clone(),
                            &pairs,
                            trace::Notes {
                                stage: ph + 1,
                                parity: Some(parity),
                                segment: Some(s.seg),
                                ..Default::default()
                            },
                        ));
                        gpu_rows.push(row);
                    }
                }
                let rows: Vec<Vec<u32>> = if req.trace {
                    gpu_rows
                } else {
                    phases
                        .as_ref()
                        .map(|p| p.iter().map(|x| x.data.clone()).collect())
                        .unwrap_or_default()
                };
                if phases.is_some() {
                    extra.insert(
                        "first_sorted_phase".into(),
                        json!(model::first_sorted(dtype, desc, &input.bits, &rows, s.seg)),
                    );
                }
                let work: u64 = (0..s.seg)
                    .map(|ph| model::phase_pairs(ph, s.seg).count() as u64)
                    .sum::<u64>()
                    * s.nseg() as u64;
                extra.insert("phases".into(), json!(s.seg));
                extra.insert("compare_exchanges".into(), json!(work));
                extra.insert(
                    "wg_size".into(),
                    json!(caps.wg_max.min(s.seg.div_ceil(2) as u32).max(1)),
                );
                output = ex.output;
                passes = pass_infos(&plan, &ex.pass_ms);
            }
            "batcher" | "merge-split" => {
                let runner = TileRunner {
                    gpu,
                    caps,
                    dtype,
                    desc,
                    trace: req.trace,
                    kernel: self.kernel,
                    keys: self.keys(gpu)?,
                    tiles_per_wg: self.tiles_per_workgroup()?,
                };
                let (net, tps, block) = if variant == "batcher" {
                    if req.trace && n > 1 << 16 {
                        return Err(Error::Limit(format!(
                            "a batcher trace reads back every stage; trace N ≤ 65536 (got {n})"
                        )));
                    }
                    let (net, tps) = batcher_passes(&caps, &s, !req.trace)?;
                    (net, tps, 0)
                } else {
                    let block = self.block_size(&caps, n)?;
                    (Net::whole(n), merge_split_passes(&s, block), block)
                };
                let a = gpu.storage_init("oddeven a", &input.bits)?;
                let b = gpu.storage_poisoned("oddeven b", n, POISON)?;
                let flags =
                    gpu.storage_poisoned("oddeven flags", if req.trace { n } else { 1 }, POISON)?;
                let (mut plan, out) = plan_tiles(&runner, net, &tps, &a, &b, &flags)?;
                plan.output = Some(out);
                let ex = execute(gpu, &plan, req.trace)?;
                let pad = s.seg.next_power_of_two();
                if variant == "batcher" {
                    let stage_list = model::batcher_stages(pad);
                    let model_stages = if model_ok(n * stage_list.len()) {
                        Some(model::batcher(dtype, desc, &input.bits, s.seg))
                    } else {
                        None
                    };
                    let mut rows = Vec::new();
                    if req.trace {
                        let cpu = model_stages.as_ref().expect("traced runs build the model");
                        for (i, ((p, k), c)) in stage_list.iter().zip(cpu).enumerate() {
                            let cap = &ex.captures[i];
                            note_mismatch(
                                first_mismatch(dtype, &cap[0], &c.data)
                                    .map(|m| format!("stage {} (p = {p}, k = {k}): {m}", i + 1)),
                                &mut mismatch,
                            );
                            let pairs = match gpu_pairs(&c.pairs, &cap[1], i + 1, 0) {
                                Ok(p) => p,
                                Err(e) => {
                                    note_mismatch(Some(e), &mut mismatch);
                                    c.pairs.clone()
                                }
                            };
                            if pairs != c.pairs {
                                note_mismatch(
                                    Some(format!("stage {}: swap flags differ", i + 1)),
                                    &mut mismatch,
                                );
                            }
                            stages.push(trace::network_stage(
                                format!("p = {p}, k = {k}"),
                                dtype,
                                cap[0].clone(),
                                &pairs,
                                trace::Notes {
                                    stage: i + 1,
                                    p: Some(*p),
                                    k: Some(*k),
                                    merge_block: Some(2 * p),
                                    segment: Some(s.seg),
                                    ..Default::default()
                                },
                            ));
                            rows.push(cap[0].clone());
                        }
                    } else if let Some(m) = &model_stages {
                        rows = m.iter().map(|p| p.data.clone()).collect();
                    }
                    if model_stages.is_some() {
                        extra.insert(
                            "first_sorted_phase".into(),
                            json!(model::first_sorted(dtype, desc, &input.bits, &rows, s.seg)),
                        );
                    }
                    extra.insert("phases".into(), json!(stage_list.len()));
                    extra.insert(
                        "compare_exchanges".into(),
                        json!(model::batcher_work(n, s.seg)),
                    );
                    extra.insert("tile".into(), json!(caps.tile));
                } else {
                    let m = n.div_ceil(block);
                    let model_stages = if model_ok(n * (m + 1)) {
                        Some(model::merge_split(dtype, desc, &input.bits, block))
                    } else {
                        None
                    };
                    let blocks: Vec<(usize, usize)> = (0..m)
                        .map(|i| (i * block, ((i + 1) * block).min(n)))
                        .collect();
                    let mut rows = Vec::new();
                    if req.trace {
                        let cpu = model_stages.as_ref().expect("traced runs build the model");
                        let mut prev = input.bits.clone();
                        for (i, c) in cpu.iter().enumerate() {
                            let cap = &ex.captures[i];
                            note_mismatch(
                                first_mismatch(dtype, &cap[0], &c.data)
                                    .map(|mm| format!("stage {}: {mm}", i + 1)),
                                &mut mismatch,
                            );
                            // Block pairs with "moved" read off the GPU's arrays.
                            let pairs: Vec<model::Pair> = c
                                .pairs
                                .iter()
                                .map(|&(x, y, _)| {
                                    let lo = x as usize * block;
                                    let hi = ((y as usize + 1) * block).min(n);
                                    (x, y, prev[lo..hi] != cap[0][lo..hi])
                                })
                                .collect();
                            let label = if i == 0 {
                                format!("sort {m} blocks of {block}")
                            } else {
                                format!(
                                    "phase {i} ({})",
                                    if (i - 1) % 2 == 0 { "even" } else { "odd" }
                                )
                            };
                            let notes = trace::Notes {
                                stage: i + 1,
                                block: Some(block),
                                blocks: Some(blocks.clone()),
                                block_pairs: Some(pairs),
                                pairs: (i == 0).then(Vec::new),
                                ..Default::default()
                            };
                            stages.push(Stage::with(
                                label,
                                Data::new(dtype, cap[0].clone()),
                                RoomNotes::Oddeven(notes),
                            ));
                            prev = cap[0].clone();
                            rows.push(cap[0].clone());
                        }
                    } else if let Some(mst) = &model_stages {
                        rows = mst.iter().map(|p| p.data.clone()).collect();
                    }
                    if model_stages.is_some() {
                        extra.insert(
                            "first_sorted_phase".into(),
                            json!(model::first_sorted(dtype, desc, &input.bits, &rows, n)),
                        );
                    }
                    let bp = block.next_power_of_two();
                    let per_block = model::batcher_work(bp, bp);
                    let merge = model::batcher_stages(2 * bp)
                        .iter()
                        .filter(|(p, _)| *p == bp)
                        .map(|&(p, k)| model::stage_comparators(p, k, 2 * bp).count() as u64)
                        .sum::<u64>();
                    extra.insert("block".into(), json!(block));
                    extra.insert("blocks".into(), json!(m));
                    extra.insert("phases".into(), json!(m + 1));
                    let merges: u64 = (0..m).map(|ph| ((m - ph % 2) / 2) as u64).sum();
                    extra.insert(
                        "compare_exchanges".into(),
                        json!(per_block * m as u64 + merge * merges),
                    );
                }
                output = ex.output;
                passes = pass_infos(&plan, &ex.pass_ms);
            }
            other => return Err(Error::Input(format!("unknown variant {other}"))),
        }
        extra.insert("seed_steps".into(), json!(s.seg));
        extra.insert(
            "seed_work".into(),
            json!((s.seg as u64 * (s.seg as u64).saturating_sub(1) / 2) * s.nseg() as u64),
        );
        if mismatch.is_none() {
            mismatch = first_mismatch(dtype, &output, &want);
        }
        if !req.trace {
            stages.clear();
        }
        Ok(RunResult {
            algorithm: "oddeven".into(),
            variant: variant.into(),
            dtype,
            n,
            adapter: gpu.adapter_name(),
            input: input.clone(),
            output: Data::new(dtype, output),
            output_json: None,
            passes,
            verified: mismatch.is_none(),
            mismatch,
            stages,
            extra,
        })
    }

    fn bench_case(
        &self,
        gpu: &Gpu,
        variant: &Variant,
        n: usize,
        dtype: DType,
    ) -> Result<BenchCase> {
        let s = self.shape(variant.name, dtype, n)?;
        let caps = self.caps(gpu, variant.name)?;
        let plan = match variant.name {
            "transposition" => {
                let data = gpu.storage_zeroed("oddeven data", n)?;
                let mut t = plan_transposition(gpu, &caps, &s, &data, false)?;
                t.plan.keep.push(data);
                t.plan
                    .keep
                    .extend(t.trace.map(|(a, b)| vec![a, b]).unwrap_or_default());
                t.plan
            }
            "global" => {
                if n > 1 << 16 {
                    return Err(Error::Limit(format!(
                        "bench global runs N dispatches per repetition; bench it at N ≤ 65536 (got {n})"
                    )));
                }
                let data = gpu.storage_zeroed("oddeven data", n)?;
                let flags = gpu.storage_zeroed("oddeven flags", 1)?;
                let mut plan = plan_global(gpu, &s, &data, &flags, false)?;
                plan.keep.extend([data, flags]);
                plan
            }
            _ => {
                let runner = TileRunner {
                    gpu,
                    caps,
                    dtype,
                    desc: s.desc,
                    trace: false,
                    kernel: self.kernel,
                    keys: self.keys(gpu)?,
                    tiles_per_wg: self.tiles_per_workgroup()?,
                };
                let (net, tps) = if variant.name == "batcher" {
                    batcher_passes(&caps, &s, true)?
                } else {
                    let block = self.block_size(&caps, n)?;
                    (Net::whole(n), merge_split_passes(&s, block))
                };
                let a = gpu.storage_zeroed("oddeven a", n)?;
                let b = gpu.storage_zeroed("oddeven b", n)?;
                let flags = gpu.storage_zeroed("oddeven flags", 1)?;
                let (mut plan, _) = plan_tiles(&runner, net, &tps, &a, &b, &flags)?;
                plan.keep.extend([a, b, flags]);
                plan
            }
        };
        // The floor: read every key once and write it once.
        Ok(BenchCase {
            plan,
            bytes: 8 * n as u64,
            items: n as u64,
        })
    }

    /// Small by default so that every variant takes every size (transposition holds N in one
    /// workgroup, global is N dispatches); time batcher with --log-n 24..28.
    fn bench_log_n(&self) -> (u32, u32) {
        (10, 13)
    }
}

/// The tile passes of a run (labels), for docs and tests.
pub fn plan_summary(gpu: &Gpu, opts: &Options, variant: &str, n: usize) -> Result<Vec<String>> {
    let s = opts.shape(variant, DType::U32, n)?;
    let caps = opts.caps(gpu, variant)?;
    Ok(match variant {
        "batcher" => batcher_passes(&caps, &s, true)?
            .1
            .into_iter()
            .map(|t| format!("{} ({} stages)", t.label, t.stages()))
            .collect(),
        "merge-split" => merge_split_passes(&s, opts.block_size(&caps, n)?)
            .into_iter()
            .map(|t| t.label)
            .collect(),
        _ => vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every merge's passes run its stages k = p … 1 once, in order; heads have no halo and the
    /// last pass is contiguous.
    #[test]
    fn merge_passes_cover_every_stage_once() {
        for lb in 8..=13 {
            let b = 1usize << lb;
            let mut p = b;
            while p <= 1 << 27 {
                let passes = merge_passes(p, b);
                let flat: Vec<_> = passes.iter().flat_map(|t| t.stage_list()).collect();
                let want: Vec<_> = (0..=p.trailing_zeros()).map(|i| (p, p >> i)).collect();
                assert_eq!(flat, want, "b {b} p {p}");
                assert_eq!(passes[0].halo, 0);
                assert!(
                    passes
                        .iter()
                        .all(|t| t.res * t.rows == b && t.rows >= 4 * t.halo)
                );
                assert_eq!(passes.last().map(|t| t.k_lo), Some(1));
                // Tails start on their first stage's pair blocks: a halo of that distance in rows.
                for t in &passes[1..] {
                    assert_eq!(t.halo, t.k_first / t.k_lo, "b {b} p {p} {}", t.label);
                }
                p *= 2;
            }
        }
    }
}
