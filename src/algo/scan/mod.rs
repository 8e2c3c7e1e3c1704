//! Prefix sums (seed 004). Seven variants, every one a real GPU kernel checked against the CPU
//! model (`model.rs`) — phase by phase in trace mode:
//! - `ladder` (the seed's): phases p = 1, 2, 4, …; thread t with bit p set adds a[(t & !(p-1)) - 1],
//!   the others sleep; one dispatch per phase, in place over one global buffer;
//! - `folded` (the seed's): p = N/2 … 1, a[i] += a[i+p] where i+p < n — SUFFIX sums; `--mirror`
//!   gives the mirrored PREFIX form a[i] += a[i-p];
//! - `hillis-steele` (ping-pong buffers), `blelloch` (up-sweep / down-sweep over the implicit heap
//!   tree, l_child = 2i+1, r_child = 2i+2), `reduce-then-scan` (3 passes);
//! - `decoupled`: single pass, decoupled look-back with fallback (no forward-progress assumption);
//! - `sequential`: the seed's loop on one GPU thread, for contrast.

pub mod model;
pub mod trace;

use super::{
    AlgoInfo, Algorithm, BenchCase, RoomNotes, RunRequest, RunResult, Stage, Variant,
    first_mismatch, pass_infos,
};
use crate::data::{DType, Data, example_data, fmt_bits};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan, Region, execute, grid, specialize};
use model::Phase;
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};

const VARIANTS: &[Variant] = &[
    Variant {
        name: "ladder",
        summary: "the seed's: phases p = 1, 2, 4, …; thread t with bit p set adds a[(t & ~(p-1)) - 1], others sleep; one dispatch per phase",
    },
    Variant {
        name: "folded",
        summary: "the seed's: p = N/2 … 1, a[i] += a[i+p] (i+p < n): SUFFIX sums; --mirror: a[i] += a[i-p], prefix sums",
    },
    Variant {
        name: "hillis-steele",
        summary: "p = 1, 2, 4, …: b[i] = a[i] + a[i-p], ping-pong buffers; n log n work",
    },
    Variant {
        name: "blelloch",
        summary: "work-efficient: up-sweep and down-sweep over the implicit heap tree (l_child = 2i+1, r_child = 2i+2)",
    },
    Variant {
        name: "reduce-then-scan",
        summary: "3 passes: tile sums, one-workgroup scan of the sums, rescan of every tile (3n words of traffic)",
    },
    Variant {
        name: "decoupled",
        summary: "single pass, decoupled look-back with fallback (Merrill & Garland; no forward-progress assumption): 2n words",
    },
    Variant {
        name: "sequential",
        summary: "the seed's loop on ONE GPU thread, for contrast",
    },
];

static INFO: AlgoInfo = AlgoInfo {
    name: "scan",
    title: "Prefix sums (scan)",
    summary: "out[i] = a[0] + … + a[i] (inclusive; --exclusive stops before a[i]); u32/i32 wrap, f32 checked against an f64 sum.",
    variants: VARIANTS,
    dtypes: &[DType::U32, DType::I32, DType::F32],
    seed: "004",
};

const INPLACE: &str = include_str!("../../../shaders/scan/inplace.wgsl");
const PINGPONG: &str = include_str!("../../../shaders/scan/pingpong.wgsl");
const SEQUENTIAL: &str = include_str!("../../../shaders/scan/sequential.wgsl");
const TILE_COMMON: &str = include_str!("../../../shaders/scan/tile_common.wgsl");
const DECOUPLED: &str = include_str!("../../../shaders/scan/decoupled.wgsl");
const DECOUPLED_SG: &str = include_str!("../../../shaders/scan/decoupled_sg.wgsl");
const RTS: &str = include_str!("../../../shaders/scan/rts.wgsl");
const POISON: u32 = 0xDEAD_BEEF;
/// Threads per workgroup of the phase kernels.
const PHASE_WG: u32 = 256;
/// Stages list their (thread, source) pairs and sleeping threads up to this many elements.
pub const MAX_PAIRS_N: usize = 4096;
/// The largest N the one-thread `sequential` variant is benchmarked at.
pub const SEQUENTIAL_BENCH_MAX: usize = 1 << 24;

/// The seed's ladder example: 30 twos (its result is 2, 4, …, 60).
pub const EXAMPLE: [i64; 30] = [2; 30];

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct Options {
    /// Exclusive scan: out[i] sums the elements before i (folded: after i); default inclusive.
    #[arg(long)]
    pub exclusive: bool,
    /// folded only: the mirrored form a[i] += a[i-p] (i >= p), which gives PREFIX sums; without it
    /// folded gives the seed's SUFFIX sums (33 ones -> 33, 32, …, 1).
    #[arg(long)]
    pub mirror: bool,
    /// decoupled / reduce-then-scan: threads per workgroup (a power of two up to the adapter's
    /// limit). 0 = auto: 256 (with 6 vec4 per thread on the subgroup decoupled path: the fastest
    /// measured on an H100).
    #[arg(long, default_value_t = 0)]
    pub workgroup_size: u32,
    /// decoupled / reduce-then-scan: vec4 (4 elements) per thread, 1..=16; a tile is
    /// 4 × this × workgroup-size elements. 0 = auto: 6 for the subgroup decoupled path (H100, 2^28,
    /// dispatch order: 256×6 and 256×7 ran 0.972× of copy, 512×5 0.968×, 512×4 0.959×, 256×4
    /// 0.949×; 8 or more vec4 per thread drop below 0.43×), else the largest of 8, 4, 2, 1 that
    /// fits workgroup memory.
    #[arg(long, default_value_t = 0)]
    pub per_thread: u32,
    /// decoupled: look-back window reads that find the nearest predecessor still not ready before
    /// the workgroup reduces that tile itself (the fallback). 0 = never read, always fall back (a
    /// test of the fallback path; the work grows with tiles²).
    #[arg(long, default_value_t = 256)]
    pub spin: u32,
    /// decoupled: scan each tile in workgroup memory (Kogge-Stone over the thread totals) even where
    /// the adapter has subgroup operations; by default decoupled keeps the tile in registers and
    /// scans it with subgroupInclusiveAdd when the adapter has Features::SUBGROUP.
    #[arg(long)]
    pub shared_scan: bool,
    /// decoupled (subgroup path): how tiles are numbered. counter = an atomic counter in the order
    /// workgroups start; dispatch = the workgroup id (no atomic round trip before the loads; still
    /// correct without forward-progress guarantees: a predecessor that has not started is spun on,
    /// then reduced by the fallback). auto = dispatch on GPUs, counter on CPU adapters (lavapipe runs
    /// the grid in chunks per thread, so in dispatch order late chunks would fall back a lot).
    #[arg(long, value_enum, default_value_t = TileOrder::Auto)]
    pub tile_order: TileOrder,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            exclusive: false,
            mirror: false,
            workgroup_size: 0,
            per_thread: 0,
            spin: 256,
            shared_scan: false,
            tile_order: TileOrder::Auto,
        }
    }
}

/// How `decoupled` numbers its tiles (see [`Options::tile_order`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TileOrder {
    /// dispatch on GPUs, counter on CPU adapters.
    #[default]
    Auto,
    /// An atomic counter: tile ids in the order workgroups start.
    Counter,
    /// The workgroup id.
    Dispatch,
}

impl Options {
    /// Whether `decoupled` takes tile ids from workgroup ids on this adapter.
    pub fn dispatch_order(&self, gpu: &Gpu) -> bool {
        match self.tile_order {
            TileOrder::Auto => gpu.info.device_type != wgpu::DeviceType::Cpu,
            TileOrder::Counter => false,
            TileOrder::Dispatch => true,
        }
    }
}

/// The tile shape of `decoupled` and `reduce-then-scan`.
#[derive(Clone, Copy, Debug)]
pub struct TileShape {
    pub wg: u32,
    pub per: u32,
    /// decoupled with subgroup operations (tile in registers, decoupled_sg.wgsl).
    pub subgroups: bool,
}

impl TileShape {
    pub fn elements(self) -> usize {
        (self.wg * self.per * 4) as usize
    }
    fn shared_bytes(wg: u32, per: u32, subgroups: bool) -> u32 {
        if subgroups {
            // s_sg (one total per subgroup, sized for W) + s_u, s_k, s_prefix.
            wg * 4 + 12
        } else {
            wg * (per + 1) * 16 + wg * 4 + 2 * 4 * wg.min(32) + 16
        }
    }
}

impl Options {
    /// `--workgroup-size` and `--per-thread` shape the tiles of `decoupled` and `reduce-then-scan`
    /// only, `--tile-order` numbers the tiles of `decoupled` only; given to another variant they
    /// would be silently ignored, so they are an error.
    pub fn check_tile_options(&self, variant: &str) -> Result<()> {
        if self.tile_order != TileOrder::Auto && variant != "decoupled" {
            return Err(crate::input_err!(
                "--tile-order applies to --variant decoupled only (it picks how tiles are numbered)"
            ));
        }
        if matches!(variant, "decoupled" | "reduce-then-scan") {
            return Ok(());
        }
        for (flag, v) in [
            ("--workgroup-size", self.workgroup_size),
            ("--per-thread", self.per_thread),
        ] {
            if v != 0 {
                return Err(crate::input_err!(
                    "{flag} {v} applies to --variant decoupled or reduce-then-scan only; scan {variant} does not use it"
                ));
            }
        }
        Ok(())
    }

    /// The tile shape for this adapter, or a clear error naming the limit.
    pub fn tile_shape(&self, gpu: &Gpu, variant: &str) -> Result<TileShape> {
        let sg = variant == "decoupled" && !self.shared_scan && gpu.has_subgroups();
        let l = &gpu.limits;
        let max_wg = l
            .max_compute_invocations_per_workgroup
            .min(l.max_compute_workgroup_size_x);
        let wg = match self.workgroup_size {
            // The H100's best, verified there: 256x6 in dispatch order ran 0.972x copy at 2^28.
            0 => 256.min(max_wg),
            w => w,
        };
        if wg == 0 || !wg.is_power_of_two() || wg > max_wg {
            return Err(crate::input_err!(
                "--workgroup-size must be a power of two up to {max_wg} (this adapter's limit); got {wg}"
            ));
        }
        let mem = l.max_compute_workgroup_storage_size;
        let per = if self.per_thread == 0 && sg {
            6
        } else if self.per_thread == 0 {
            [8, 4, 2, 1]
                .into_iter()
                .find(|&p| TileShape::shared_bytes(wg, p, sg) <= mem)
                .ok_or_else(|| {
                    Error::Limit(format!(
                        "a {wg}-thread workgroup does not fit this adapter's {mem} bytes of workgroup memory \
                         (max_compute_workgroup_storage_size); use a smaller --workgroup-size"
                    ))
                })?
        } else {
            self.per_thread
        };
        if !(1..=16).contains(&per) {
            return Err(crate::input_err!(
                "--per-thread must be 0 (auto) or 1..=16; got {per}"
            ));
        }
        let need = TileShape::shared_bytes(wg, per, sg);
        if need > mem {
            return Err(Error::Limit(format!(
                "--workgroup-size {wg} with --per-thread {per} needs {need} bytes of workgroup memory, above this \
                 adapter's {mem} (max_compute_workgroup_storage_size)"
            )));
        }
        Ok(TileShape {
            wg,
            per,
            subgroups: sg,
        })
    }

    /// Template parameters: element type, exclusive, look-back spins, workgroup size, vec4 per thread.
    fn params(
        &self,
        dtype: DType,
        wg: u32,
        per: u32,
        dispatch: bool,
    ) -> Vec<(&'static str, String)> {
        vec![
            ("T", dtype.wgsl().to_string()),
            ("EXCL", self.exclusive.to_string()),
            ("SPIN", self.spin.to_string()),
            ("WG", wg.to_string()),
            ("PER", per.to_string()),
            ("LB", wg.min(32).to_string()),
            ("DISPATCH_ORDER", dispatch.to_string()),
        ]
    }
}

/// Where the input comes from: data (run) or zeroed buffers of n words (bench).
enum Init<'a> {
    Data(&'a [u32]),
    Zeroed(usize),
}

impl Init<'_> {
    fn n(&self) -> usize {
        match self {
            Init::Data(d) => d.len(),
            Init::Zeroed(n) => *n,
        }
    }
    /// A buffer holding the input, padded with zeros to `words`.
    fn buffer(&self, gpu: &Gpu, label: &str, words: usize) -> Result<wgpu::Buffer> {
        match self {
            Init::Data(d) => {
                let mut v = d.to_vec();
                v.resize(words.max(d.len()), 0);
                gpu.storage_init(label, &v)
            }
            Init::Zeroed(_) => gpu.storage_zeroed(label, words),
        }
    }
    fn scratch(&self, gpu: &Gpu, label: &str, words: usize) -> Result<wgpu::Buffer> {
        match self {
            Init::Data(_) => gpu.storage_poisoned(label, words, POISON),
            Init::Zeroed(_) => gpu.storage_zeroed(label, words),
        }
    }
}

/// A built plan plus what the run needs to read it.
struct Built {
    plan: Plan,
    tile: Option<TileShape>,
    tiles: usize,
}

/// Words of the decoupled status buffer: the ticket counter, then one half (2 words per tile) for
/// the workgroup-memory kernel (cleared by a pass before each run), two halves for the subgroup
/// kernel (alternate runs use alternate halves, each tile cleaning its entry of the other).
fn status_words(shape: TileShape, tiles: usize) -> usize {
    if shape.subgroups {
        1 + 4 * tiles
    } else {
        1 + 2 * tiles
    }
}

fn capture_if(trace: bool, r: Region) -> Vec<Region> {
    if trace { vec![r] } else { vec![] }
}

fn phase_groups(threads: usize) -> [u32; 3] {
    grid((threads as u32).div_ceil(PHASE_WG))
}

impl Options {
    fn build(
        &self,
        gpu: &Gpu,
        variant: &str,
        dtype: DType,
        init: &Init,
        trace: bool,
    ) -> Result<Built> {
        let n = init.n();
        let mut plan = Plan::default();
        let base = self.params(dtype, PHASE_WG, 1, false);
        let mut built = Built {
            plan: Plan::default(),
            tile: None,
            tiles: 0,
        };
        match variant {
            "ladder" | "folded" | "hillis-steele" => {
                let mut cur = init.buffer(gpu, "scan a", n)?;
                let mut other = init.scratch(gpu, "scan b", n)?;
                let suffix = variant == "folded" && !self.mirror;
                if variant == "ladder" {
                    let p_ =
                        gpu.pipeline("scan ladder", &specialize(INPLACE, &base), "ladder_step")?;
                    let mut p = 1usize;
                    while p < n {
                        let u = gpu.uniform("scan params", &[n as u32, p as u32])?;
                        let bg = gpu.bind(&p_, &[&cur, &u])?;
                        plan.push(format!("ladder phase p={p}"), &p_, bg, phase_groups(n))
                            .capture = capture_if(trace, Region::words(&cur, n));
                        plan.keep.push(u);
                        p <<= 1;
                    }
                } else {
                    let entry = if variant == "folded" {
                        "fold_step"
                    } else {
                        "hs_step"
                    };
                    let p_ = gpu.pipeline("scan pingpong", &specialize(PINGPONG, &base), entry)?;
                    let phases: Vec<usize> = if variant == "folded" {
                        let mut v = Vec::new();
                        let mut p = model::pow2_ceil(n) / 2;
                        while p >= 1 {
                            v.push(p);
                            p /= 2;
                        }
                        v
                    } else {
                        let mut v = Vec::new();
                        let mut p = 1;
                        while p < n {
                            v.push(p);
                            p <<= 1;
                        }
                        v
                    };
                    for p in phases {
                        let u =
                            gpu.uniform("scan params", &[n as u32, p as u32, self.mirror as u32])?;
                        let bg = gpu.bind(&p_, &[&cur, &other, &u])?;
                        plan.push(format!("{variant} phase p={p}"), &p_, bg, phase_groups(n))
                            .capture = capture_if(trace, Region::words(&other, n));
                        plan.keep.push(u);
                        std::mem::swap(&mut cur, &mut other);
                    }
                }
                if self.exclusive {
                    let p_ =
                        gpu.pipeline("scan pingpong", &specialize(PINGPONG, &base), "shift")?;
                    let u = gpu.uniform("scan params", &[n as u32, 0, suffix as u32])?;
                    let bg = gpu.bind(&p_, &[&cur, &other, &u])?;
                    plan.push("exclusive: shift by one", &p_, bg, phase_groups(n))
                        .capture = capture_if(trace, Region::words(&other, n));
                    plan.keep.push(u);
                    std::mem::swap(&mut cur, &mut other);
                }
                plan.output = Some(Region::words(&cur, n));
                plan.keep.extend([cur, other]);
            }
            "blelloch" => {
                let big = model::pow2_ceil(n);
                let log_n = big.trailing_zeros();
                let a = init.buffer(gpu, "scan tree", big)?;
                let src = specialize(INPLACE, &base);
                let up = gpu.pipeline("scan blelloch", &src, "blelloch_up")?;
                let clear = gpu.pipeline("scan blelloch", &src, "blelloch_clear")?;
                let down = gpu.pipeline("scan blelloch", &src, "blelloch_down")?;
                let cap = |plan: &mut Plan| {
                    if let Some(p) = plan.passes.last_mut() {
                        p.capture = capture_if(trace, Region::words(&a, big));
                    }
                };
                for level in 1..=log_n {
                    let half = 1usize << (level - 1);
                    let count = big / (2 * half);
                    let u = gpu.uniform("scan params", &[count as u32, half as u32])?;
                    let bg = gpu.bind(&up, &[&a, &u])?;
                    plan.push(
                        format!("blelloch up level {level}"),
                        &up,
                        bg,
                        phase_groups(count),
                    );
                    cap(&mut plan);
                    plan.keep.push(u);
                }
                let u = gpu.uniform("scan params", &[big as u32, 0])?;
                let bg = gpu.bind(&clear, &[&a, &u])?;
                plan.push("blelloch clear root", &clear, bg, [1, 1, 1]);
                cap(&mut plan);
                plan.keep.push(u);
                for level in (1..=log_n).rev() {
                    let half = 1usize << (level - 1);
                    let count = big / (2 * half);
                    let u = gpu.uniform("scan params", &[count as u32, half as u32])?;
                    let bg = gpu.bind(&down, &[&a, &u])?;
                    plan.push(
                        format!("blelloch down level {level}"),
                        &down,
                        bg,
                        phase_groups(count),
                    );
                    cap(&mut plan);
                    plan.keep.push(u);
                }
                if !self.exclusive {
                    let x = init.buffer(gpu, "scan input", n)?;
                    let p_ =
                        gpu.pipeline("scan pingpong", &specialize(PINGPONG, &base), "add_src")?;
                    let u = gpu.uniform("scan params", &[n as u32, 0, 0])?;
                    let bg = gpu.bind(&p_, &[&x, &a, &u])?;
                    plan.push(
                        "blelloch inclusive: add the input",
                        &p_,
                        bg,
                        phase_groups(n),
                    );
                    cap(&mut plan);
                    plan.keep.extend([u, x]);
                }
                plan.output = Some(Region::words(&a, n));
                plan.keep.push(a);
            }
            "sequential" => {
                let nv = n.div_ceil(4);
                let src = init.buffer(gpu, "scan input", nv * 4)?;
                let dst = init.scratch(gpu, "scan output", nv * 4)?;
                let p_ = gpu.pipeline(
                    "scan sequential",
                    &specialize(SEQUENTIAL, &base),
                    "sequential",
                )?;
                let u = gpu.uniform("scan params", &[n as u32, nv as u32])?;
                let bg = gpu.bind(&p_, &[&src, &dst, &u])?;
                plan.push("sequential: one thread", &p_, bg, [1, 1, 1])
                    .capture = capture_if(trace, Region::words(&dst, n));
                plan.output = Some(Region::words(&dst, n));
                plan.keep.extend([u, src, dst]);
            }
            "reduce-then-scan" | "decoupled" => {
                let shape = self.tile_shape(gpu, variant)?;
                let te = shape.elements();
                let nv = n.div_ceil(4);
                let tiles = n.div_ceil(te);
                let params = self.params(dtype, shape.wg, shape.per, self.dispatch_order(gpu));
                let src = init.buffer(gpu, "scan input", nv * 4)?;
                let dst = init.scratch(gpu, "scan output", nv * 4)?;
                let u = gpu.uniform("scan params", &[n as u32, nv as u32, tiles as u32])?;
                if variant == "reduce-then-scan" {
                    let code = specialize(&format!("{TILE_COMMON}\n{RTS}"), &params);
                    let sums = init.scratch(gpu, "scan tile sums", tiles)?;
                    let reduce = gpu.pipeline("scan rts", &code, "rts_reduce")?;
                    let spine = gpu.pipeline("scan rts", &code, "rts_spine")?;
                    let scan = gpu.pipeline("scan rts", &code, "rts_scan")?;
                    let bg = gpu.bind(&reduce, &[&src, &dst, &sums, &u])?;
                    plan.push("reduce: tile sums", &reduce, bg, grid(tiles as u32))
                        .capture = capture_if(trace, Region::words(&sums, tiles));
                    let bg = gpu.bind(&spine, &[&src, &dst, &sums, &u])?;
                    plan.push("spine: scan the tile sums", &spine, bg, [1, 1, 1])
                        .capture = capture_if(trace, Region::words(&sums, tiles));
                    let bg = gpu.bind(&scan, &[&src, &dst, &sums, &u])?;
                    plan.push("scan: rescan every tile", &scan, bg, grid(tiles as u32))
                        .capture = capture_if(trace, Region::words(&dst, n));
                    plan.keep.push(sums);
                } else {
                    let code = if shape.subgroups {
                        specialize(DECOUPLED_SG, &params)
                    } else {
                        specialize(&format!("{TILE_COMMON}\n{DECOUPLED}"), &params)
                    };
                    // The subgroup kernel keeps two halves of statuses, used by alternate runs
                    // (no clear pass); the workgroup-memory kernel clears them in a pass first.
                    let sw = status_words(shape, tiles);
                    let status = gpu.storage_zeroed("scan tile status", sw)?;
                    let info = init.scratch(gpu, "scan look-back info", 2 * tiles)?;
                    let scan = gpu.pipeline("scan decoupled", &code, "decoupled")?;
                    if !shape.subgroups {
                        let clear = gpu.pipeline("scan decoupled", &code, "clear")?;
                        let bg = gpu.bind(&clear, &[&src, &dst, &status, &info, &u])?;
                        plan.push(
                            "clear tile status",
                            &clear,
                            bg,
                            grid((sw as u32).div_ceil(256)),
                        );
                    }
                    let bg = gpu.bind(&scan, &[&src, &dst, &status, &info, &u])?;
                    let caps = if trace {
                        vec![
                            Region::words(&status, sw),
                            Region::words(&info, 2 * tiles),
                            Region::words(&dst, n),
                        ]
                    } else {
                        vec![]
                    };
                    plan.push("decoupled look-back scan", &scan, bg, grid(tiles as u32))
                        .capture = caps;
                    plan.keep.extend([status, info]);
                }
                plan.output = Some(Region::words(&dst, n));
                plan.keep.extend([u, src, dst]);
                built.tile = Some(shape);
                built.tiles = tiles;
            }
            other => {
                return Err(crate::input_err!("unknown scan variant '{other}'"));
            }
        }
        built.plan = plan;
        Ok(built)
    }
}

/// One run of [`Options::decoupled_runs`]: the output and the whole status buffer after it.
#[derive(Clone, Debug)]
pub struct DecoupledRun {
    pub output: Vec<u32>,
    pub status: Vec<u32>,
    /// Workgroups in the grid (every one takes a ticket) and tiles.
    pub workgroups: usize,
    pub tiles: usize,
}

impl Options {
    /// Build the `decoupled` plan for `x` once and run it `runs` times, as timed mode does: the
    /// subgroup kernel has no clear pass (alternate runs use alternate halves of the statuses),
    /// so every run must be right and leave the other half clean.
    pub fn decoupled_runs(
        &self,
        gpu: &Gpu,
        dtype: DType,
        x: &[u32],
        runs: usize,
    ) -> Result<Vec<DecoupledRun>> {
        self.check_tile_options("decoupled")?;
        let built = self.build(gpu, "decoupled", dtype, &Init::Data(x), true)?;
        let look_back = built
            .plan
            .passes
            .last()
            .expect("decoupled has a look-back pass");
        let workgroups = look_back.workgroups.iter().product::<u32>() as usize;
        let mut out = Vec::with_capacity(runs);
        for _ in 0..runs {
            let ex = execute(gpu, &built.plan, true)?;
            let c = ex.captures.last().cloned().unwrap_or_default();
            out.push(DecoupledRun {
                output: c.get(2).cloned().unwrap_or_default(),
                status: c.first().cloned().unwrap_or_default(),
                workgroups,
                tiles: built.tiles,
            });
        }
        Ok(out)
    }
}

/// The f32 check: element i within (d_i + 2)·2⁻²⁴·Σ|x| (d_i: the variant's summation-tree height
/// for i) of the f64 sum, plus d_i·2⁻¹²⁶ for flushed subnormals; non-finite where the exact sum
/// is non-finite or beyond f32's range.
pub struct F32Check {
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    pub mismatch: Option<String>,
}

pub fn check_f32(
    gpu: &[u32],
    exact: &[f64],
    abs: &[f64],
    depth: &dyn Fn(usize) -> usize,
) -> F32Check {
    let u = f64::from(f32::EPSILON) / 2.0;
    let tiny = f64::from(f32::MIN_POSITIVE);
    let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
    let mut bad: Option<(usize, String)> = None;
    let mut count = 0usize;
    for i in 0..gpu.len().min(exact.len()) {
        let g = f32::from_bits(gpu[i]) as f64;
        let e = exact[i];
        let ok = if !e.is_finite() || e.abs() > f64::from(f32::MAX) {
            !g.is_finite() || e.is_finite()
        } else if !g.is_finite() {
            false
        } else {
            let err = (g - e).abs();
            max_abs = max_abs.max(err);
            max_rel = max_rel.max(err / e.abs().max(tiny));
            let d = depth(i) as f64 + 2.0;
            err <= 1.01 * d * u * abs[i] + d * tiny
        };
        if !ok {
            count += 1;
            if bad.is_none() {
                bad = Some((
                    i,
                    format!("GPU {} vs exact {e}", fmt_bits(DType::F32, gpu[i])),
                ));
            }
        }
    }
    F32Check {
        max_abs_error: max_abs,
        max_rel_error: max_rel,
        mismatch: bad.map(|(i, m)| {
            format!("{count} element(s) outside the f32 tolerance; first at index {i}: {m}")
        }),
    }
}

/// A stage check: integers bit for bit; f32 within 2(d+2)·2⁻²⁴·Σ|x| of the model's f32 stage.
fn stage_mismatch(dtype: DType, g: &[u32], c: &[u32], scale: f64, depth: usize) -> Option<String> {
    if dtype != DType::F32 || g.len() != c.len() {
        return first_mismatch(dtype, g, c);
    }
    let tol = 2.0 * (depth as f64 + 2.0) * f64::from(f32::EPSILON) * scale
        + depth as f64 * f64::from(f32::MIN_POSITIVE);
    let bad = g.iter().zip(c).position(|(&a, &b)| {
        let (x, y) = (f32::from_bits(a) as f64, f32::from_bits(b) as f64);
        if x.is_finite() && y.is_finite() {
            (x - y).abs() > tol
        } else {
            x.is_finite() != y.is_finite() || (x.is_nan() != y.is_nan())
        }
    })?;
    Some(format!(
        "index {bad}: GPU {} vs CPU {} (f32 tolerance {tol:e})",
        fmt_bits(dtype, g[bad]),
        fmt_bits(dtype, c[bad])
    ))
}

fn phase_stage(
    dtype: DType,
    ph: &Phase,
    data: Vec<u32>,
    n: usize,
    step: usize,
    work: usize,
    what: &str,
) -> Stage {
    let mut notes = trace::Notes {
        phase: Some(ph.p),
        step,
        active: Some(ph.reads.len()),
        sleeping_count: Some(n - ph.reads.len()),
        adds: Some(ph.reads.len()),
        work,
        ..Default::default()
    };
    if n <= MAX_PAIRS_N {
        let mut active = vec![false; n];
        for &(t, _) in &ph.reads {
            active[t] = true;
        }
        notes.sleeping = Some((0..n).filter(|&t| !active[t]).collect());
        notes.reads = Some(ph.reads.clone());
    }
    Stage::with(
        format!("{what} p={}", ph.p),
        Data::new(dtype, data),
        RoomNotes::Scan(notes),
    )
}

/// A stage of the tiled variants: which array it shows, the elements per tile, the counters.
fn tile_notes(array: &'static str, tile: Option<usize>, step: usize, work: usize) -> trace::Notes {
    trace::Notes {
        array: Some(array),
        tile,
        step,
        work,
        ..Default::default()
    }
}

impl Algorithm for Options {
    fn info(&self) -> &'static AlgoInfo {
        &INFO
    }

    fn example(&self, dtype: DType) -> Option<Data> {
        Some(example_data(&EXAMPLE, dtype))
    }

    fn run(&self, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
        let variant = req.variant.name;
        let dtype = req.dtype;
        if self.mirror && variant != "folded" {
            return Err(crate::input_err!(
                "--mirror applies to --variant folded only (it turns folded's suffix sums into prefix sums)"
            ));
        }
        self.check_tile_options(variant)?;
        let x = &req.input.bits;
        let n = x.len();
        let suffix = variant == "folded" && !self.mirror;
        let built = self.build(gpu, variant, dtype, &Init::Data(x), req.trace)?;
        let ex = execute(gpu, &built.plan, req.trace)?;

        // The whole-result check.
        let log_n = model::pow2_ceil(n).trailing_zeros() as usize;
        let tile_depth = built.tile.map_or(0, |s| {
            8 * s.per as usize + 2 * s.wg.trailing_zeros() as usize + built.tiles + 4
        });
        let depth = |i: usize| -> usize {
            let d = match variant {
                "sequential" => i + 1,
                "ladder" | "folded" | "hillis-steele" => log_n + 1,
                "blelloch" => 2 * log_n + 2,
                _ => tile_depth,
            };
            d.min(if suffix { n - i } else { i + 1 })
        };
        let mut extra = Map::new();
        extra.insert("exclusive".into(), json!(self.exclusive));
        extra.insert(
            "form".into(),
            json!(if suffix { "suffix sums" } else { "prefix sums" }),
        );
        let mut mismatch = if dtype == DType::F32 {
            let (exact, abs) = model::exact_f64(x, self.exclusive, suffix);
            let c = check_f32(&ex.output, &exact, &abs, &depth);
            extra.insert("max_abs_error".into(), json!(c.max_abs_error));
            extra.insert("max_rel_error".into(), json!(c.max_rel_error));
            extra.insert(
                "f32_tolerance".into(),
                json!("|gpu_i - exact_i| <= 1.01 (d_i + 2) 2^-24 sum_j |x_j| + (d_i + 2) 2^-126, exact = f64 sum, d_i = summation-tree height"),
            );
            c.mismatch
        } else {
            let want = if suffix {
                model::suffix(dtype, x, self.exclusive)
            } else {
                model::sequential(dtype, x, self.exclusive)
            };
            first_mismatch(dtype, &ex.output, &want)
        };
        if let Some(s) = built.tile {
            extra.insert("tile_elements".into(), json!(s.elements()));
            extra.insert("workgroup_size".into(), json!(s.wg));
            extra.insert("per_thread_vec4".into(), json!(s.per));
            if variant == "decoupled" {
                extra.insert(
                    "tile_scan".into(),
                    json!(if s.subgroups {
                        "subgroup"
                    } else {
                        "workgroup-memory"
                    }),
                );
            }
            extra.insert("tiles".into(), json!(built.tiles));
            if variant == "decoupled" {
                extra.insert(
                    "tile_order".into(),
                    json!(if self.dispatch_order(gpu) && s.subgroups {
                        "dispatch"
                    } else {
                        "counter"
                    }),
                );
            }
        }

        // The trace: the model's stages with the GPU's arrays.
        let mut stages = Vec::new();
        let mut work = 0usize;
        let mut steps = 0usize;
        let scale: f64 = x.iter().map(|&b| bits_abs(dtype, b)).sum();
        let caps: Vec<&Vec<Vec<u32>>> = ex.captures.iter().filter(|c| !c.is_empty()).collect();
        let check = |label: &str, g: &[u32], c: &[u32], mismatch: &mut Option<String>| {
            if mismatch.is_none()
                && let Some(m) = stage_mismatch(dtype, g, c, scale, 2 * log_n + tile_depth + 2)
            {
                *mismatch = Some(format!("{label}: {m}"));
            }
        };
        if req.trace {
            stages.push(Stage::with(
                "input",
                req.input.clone(),
                RoomNotes::Scan(trace::Notes {
                    phase: Some(0),
                    ..Default::default()
                }),
            ));
            let mut ci = 0usize;
            let mut next = || {
                let c = caps.get(ci).map(|c| (*c).clone()).unwrap_or_default();
                ci += 1;
                c
            };
            match variant {
                "ladder" | "folded" | "hillis-steele" => {
                    let phases = match variant {
                        "ladder" => model::ladder(dtype, x),
                        "folded" => model::folded(dtype, x, self.mirror),
                        _ => model::hillis_steele(dtype, x),
                    };
                    let mut last = x.to_vec();
                    for ph in &phases {
                        let g = next().into_iter().next().unwrap_or_default();
                        steps += 1;
                        work += ph.reads.len();
                        let label = format!("phase p={}", ph.p);
                        check(&label, &g, &ph.data, &mut mismatch);
                        let what = if variant == "ladder" {
                            "ladder"
                        } else {
                            "phase"
                        };
                        let mut st = phase_stage(dtype, ph, g, n, steps, work, what);
                        st.label = label;
                        if variant == "folded"
                            && let RoomNotes::Scan(notes) = &mut st.notes.room
                        {
                            notes.form = Some(if self.mirror {
                                "mirrored: prefix sums"
                            } else {
                                "suffix sums"
                            });
                        }
                        stages.push(st);
                        last = ph.data.clone();
                    }
                    if self.exclusive {
                        let want = model::shift(&last, suffix);
                        let g = next().into_iter().next().unwrap_or_default();
                        check("exclusive shift", &g, &want, &mut mismatch);
                        steps += 1;
                        let mut notes = trace::Notes {
                            phase: Some(0),
                            step: steps,
                            direction: Some("shift"),
                            work,
                            ..Default::default()
                        };
                        if n <= MAX_PAIRS_N {
                            let reads: Vec<(usize, usize)> = (0..n)
                                .filter_map(|i| {
                                    if suffix {
                                        (i + 1 < n).then_some((i, i + 1))
                                    } else {
                                        i.checked_sub(1).map(|s| (i, s))
                                    }
                                })
                                .collect();
                            notes.reads = Some(reads);
                        }
                        stages.push(Stage::with(
                            "exclusive: shift by one",
                            Data::new(dtype, g),
                            RoomNotes::Scan(notes),
                        ));
                    }
                }
                "blelloch" => {
                    let big = model::pow2_ceil(n);
                    for ts in model::blelloch(dtype, x, !self.exclusive) {
                        let g = next().into_iter().next().unwrap_or_default();
                        let label = match ts.direction {
                            "up" => format!("up-sweep level {}", ts.level),
                            "down" => format!("down-sweep level {}", ts.level),
                            "clear" => "clear the root".to_string(),
                            _ => "inclusive: add the input".to_string(),
                        };
                        check(&label, &g, &ts.data, &mut mismatch);
                        steps += 1;
                        let adds = match ts.direction {
                            "up" | "down" => ts.nodes.len(),
                            "add-input" => n,
                            _ => 0,
                        };
                        work += adds;
                        let keep = big <= MAX_PAIRS_N;
                        let notes = trace::Notes {
                            direction: Some(ts.direction),
                            level: Some(ts.level),
                            half: Some(ts.half),
                            step: steps,
                            adds: Some(adds),
                            work,
                            active: Some(ts.nodes.len()),
                            padded_to: Some(big),
                            n: Some(n),
                            reads: keep.then(|| ts.reads.clone()),
                            nodes: keep.then(|| ts.nodes.clone()),
                            ..Default::default()
                        };
                        stages.push(Stage::with(
                            label,
                            Data::new(dtype, g),
                            RoomNotes::Scan(notes),
                        ));
                    }
                    extra.insert("padded_to".into(), json!(big));
                }
                "sequential" => {
                    let want = model::sequential(dtype, x, self.exclusive);
                    let g = next().into_iter().next().unwrap_or_default();
                    check("sequential", &g, &want, &mut mismatch);
                    steps = n;
                    work = n.saturating_sub(1);
                    let notes = trace::Notes {
                        step: 1,
                        active: Some(1),
                        threads: Some(1),
                        adds: Some(work),
                        work,
                        // The single thread writes element i reading element i-1's running sum.
                        reads: (n <= MAX_PAIRS_N).then(|| (1..n).map(|i| (i, i - 1)).collect()),
                        ..Default::default()
                    };
                    stages.push(Stage::with(
                        "one thread, i = 1 … n-1",
                        Data::new(dtype, g),
                        RoomNotes::Scan(notes),
                    ));
                }
                "reduce-then-scan" => {
                    let te = built.tile.map_or(1, |s| s.elements());
                    let (sums, pre) = model::tile_sums(dtype, x, te);
                    let want = model::sequential(dtype, x, self.exclusive);
                    let g1 = next().into_iter().next().unwrap_or_default();
                    check("reduce", &g1, &sums, &mut mismatch);
                    let g2 = next().into_iter().next().unwrap_or_default();
                    check("spine", &g2, &pre, &mut mismatch);
                    let g3 = next().into_iter().next().unwrap_or_default();
                    check("scan", &g3, &want, &mut mismatch);
                    work = 2 * n + built.tiles;
                    stages.push(Stage::with(
                        "reduce: one sum per tile",
                        Data::new(dtype, g1),
                        RoomNotes::Scan(tile_notes("tile sums", Some(te), 1, n)),
                    ));
                    stages.push(Stage::with(
                        "spine: exclusive tile prefixes",
                        Data::new(dtype, g2),
                        RoomNotes::Scan(tile_notes("tile prefixes", Some(te), 2, n + built.tiles)),
                    ));
                    stages.push(Stage::with(
                        "scan: every tile from its prefix",
                        Data::new(dtype, g3),
                        RoomNotes::Scan(tile_notes("output", Some(te), 3, work)),
                    ));
                    steps = 3;
                }
                "decoupled" => {
                    let te = built.tile.map_or(1, |s| s.elements());
                    let c = next();
                    let (status, info, out) = (
                        c.first().cloned().unwrap_or_default(),
                        c.get(1).cloned().unwrap_or_default(),
                        c.get(2).cloned().unwrap_or_default(),
                    );
                    let incl = model::sequential(dtype, x, false);
                    let tiles = built.tiles;
                    let want_status: Vec<u32> = (0..tiles)
                        .map(|k| incl[((k + 1) * te).min(n) - 1])
                        .collect();
                    let mut got = Vec::with_capacity(tiles);
                    let mut flags = Vec::with_capacity(tiles);
                    let sg = built.tile.is_some_and(|t| t.subgroups);
                    // The look-back pass is the plan's last (after "clear tile status" where the
                    // kernel has one).
                    let lb_pass = built.plan.passes.len() - 1;
                    // Subgroup kernel: the ticket count is back at 0 after an odd run, whose
                    // statuses are in the second half.
                    let half = if sg && status.first() == Some(&0) {
                        2 * tiles
                    } else {
                        0
                    };
                    for k in 0..tiles {
                        let lo = status.get(1 + half + 2 * k).copied().unwrap_or(0);
                        let hi = status.get(2 + half + 2 * k).copied().unwrap_or(0);
                        got.push((lo & 0xffff) | (hi << 16));
                        flags.push(if lo >> 16 == hi >> 16 { lo >> 16 } else { 99 });
                    }
                    if mismatch.is_none()
                        && let Some(k) = flags.iter().position(|&f| f != 2)
                    {
                        mismatch = Some(format!(
                            "tile status: tile {k} ended with flag {} instead of INCLUSIVE (2)",
                            flags[k]
                        ));
                    }
                    // Every workgroup takes one ticket (the tile id in counter order); the grid
                    // may launch a few spare groups. The subgroup kernel's count is back at 0
                    // after an odd run.
                    if !(sg && half > 0)
                        && status.first().copied() != Some(tiles as u32)
                        && mismatch.is_none()
                    {
                        let ctr = status.first().copied().unwrap_or(0) as usize;
                        if ctr < tiles {
                            mismatch = Some(format!(
                                "tile counter ended at {ctr}, fewer than the {tiles} tiles"
                            ));
                        }
                    }
                    check("tile status", &got, &want_status, &mut mismatch);
                    let want = model::sequential(dtype, x, self.exclusive);
                    check("output", &out, &want, &mut mismatch);
                    let falls: u64 = (0..tiles)
                        .map(|k| info.get(2 * k + 1).copied().unwrap_or(0) as u64)
                        .sum();
                    let look: u64 = (0..tiles)
                        .map(|k| info.get(2 * k).copied().unwrap_or(0) as u64)
                        .sum();
                    extra.insert("fallbacks".into(), json!(falls));
                    extra.insert("lookback_steps".into(), json!(look));
                    work = 2 * n + tiles;
                    steps = 1;
                    let notes = trace::Notes {
                        fallbacks: Some(falls),
                        lookback_steps: Some(look),
                        lookback: (tiles <= MAX_PAIRS_N).then(|| {
                            (0..tiles)
                                .map(|k| {
                                    [
                                        k as u64,
                                        info.get(2 * k).copied().unwrap_or(0) as u64,
                                        info.get(2 * k + 1).copied().unwrap_or(0) as u64,
                                    ]
                                })
                                .collect()
                        }),
                        ..tile_notes("tile inclusive prefixes", Some(te), 1, work)
                    };
                    // Both stages come from the look-back pass.
                    let st = Stage::with(
                        "tile status: inclusive prefix of every tile",
                        Data::new(dtype, got),
                        RoomNotes::Scan(notes),
                    )
                    .passes(vec![lb_pass]);
                    stages.push(st);
                    stages.push(
                        Stage::with(
                            "output",
                            Data::new(dtype, out),
                            RoomNotes::Scan(tile_notes("output", None, 1, work)),
                        )
                        .passes(vec![lb_pass]),
                    );
                }
                _ => {}
            }
        } else {
            // Counters without the trace.
            let lg = |mut p: usize, up: bool| {
                let mut c = 0;
                if up {
                    while p < n {
                        c += 1;
                        p <<= 1;
                    }
                } else {
                    while p >= 1 {
                        c += 1;
                        p /= 2;
                    }
                }
                c
            };
            steps = match variant {
                "ladder" | "hillis-steele" => lg(1, true),
                "folded" => lg(model::pow2_ceil(n) / 2, false),
                "blelloch" => 2 * log_n + 1,
                "reduce-then-scan" => 3,
                "sequential" => n,
                _ => 1,
            };
        }
        extra.insert("steps".into(), json!(steps));
        if req.trace {
            extra.insert("work".into(), json!(work));
        }
        extra.insert("n_log2_n".into(), json!(n * log_n));
        Ok(RunResult {
            algorithm: "scan".into(),
            variant: variant.into(),
            dtype,
            n,
            adapter: gpu.adapter_name(),
            input: req.input.clone(),
            output: Data::new(dtype, ex.output.clone()),
            output_json: None,
            passes: pass_infos(&built.plan, &ex.pass_ms),
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
        if variant.name == "sequential" && n > SEQUENTIAL_BENCH_MAX {
            return Err(Error::Limit(format!(
                "scan sequential (one GPU thread) is benchmarked up to N = 2^24; got N = {n}"
            )));
        }
        let opts = Options {
            mirror: self.mirror && variant.name == "folded",
            ..self.clone()
        };
        let built = opts.build(gpu, variant.name, dtype, &Init::Zeroed(n), false)?;
        if built.plan.passes.is_empty() {
            return Err(crate::input_err!(
                "scan {}: N = {n} needs no pass; nothing to time",
                variant.name
            ));
        }
        let mut plan = built.plan;
        plan.output = None;
        Ok(BenchCase {
            plan,
            bytes: 8 * n as u64,
            items: n as u64,
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (16, 24)
    }
}

fn bits_abs(dtype: DType, b: u32) -> f64 {
    match dtype {
        DType::F32 => {
            let v = f32::from_bits(b) as f64;
            if v.is_finite() { v.abs() } else { 0.0 }
        }
        _ => 0.0,
    }
}
