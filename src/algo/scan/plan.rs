//! The plans of every variant (phases, Blelloch's sweeps, the tiled kernels) and the decoupled
//! scan's repeated runs.

use super::*;

// The phase kernels (ladder, folded, Hillis–Steele, Blelloch, sequential) and their workgroup size.
const INPLACE: &str = include_str!("../../../shaders/scan/inplace.wgsl");
const PINGPONG: &str = include_str!("../../../shaders/scan/pingpong.wgsl");
const SEQUENTIAL: &str = include_str!("../../../shaders/scan/sequential.wgsl");
const PHASE_WG: u32 = 256;
// The tiled kernels (reduce-then-scan, decoupled).
const TILE_COMMON: &str = include_str!("../../../shaders/scan/tile_common.wgsl");
const DECOUPLED: &str = include_str!("../../../shaders/scan/decoupled.wgsl");
const DECOUPLED_SG: &str = include_str!("../../../shaders/scan/decoupled_sg.wgsl");
const RTS: &str = include_str!("../../../shaders/scan/rts.wgsl");
const POISON: u32 = 0xDEAD_BEEF;

/// Where the input comes from: data (run) or zeroed buffers of n words (bench).
pub(super) enum Init<'a> {
    Data(&'a [u32]),
    Zeroed(usize),
}

impl Init<'_> {
    pub(super) fn n(&self) -> usize {
        match self {
            Init::Data(d) => d.len(),
            Init::Zeroed(n) => *n,
        }
    }
    /// A buffer holding the input, padded with zeros to `words`.
    pub(super) fn buffer(&self, gpu: &Gpu, label: &str, words: usize) -> Result<wgpu::Buffer> {
        match self {
            Init::Data(d) => {
                let mut v = d.to_vec();
                v.resize(words.max(d.len()), 0);
                gpu.storage_init(label, &v)
            }
            Init::Zeroed(_) => gpu.storage_zeroed(label, words),
        }
    }
    pub(super) fn scratch(&self, gpu: &Gpu, label: &str, words: usize) -> Result<wgpu::Buffer> {
        match self {
            Init::Data(_) => gpu.storage_poisoned(label, words, POISON),
            Init::Zeroed(_) => gpu.storage_zeroed(label, words),
        }
    }
}

/// A built plan plus what the run needs to read it.
pub(super) struct Built {
    pub(super) plan: Plan,
    pub(super) tile: Option<TileShape>,
    pub(super) tiles: usize,
}

/// Words of the decoupled status buffer: the ticket counter, then one half (2 words per tile) for
/// the workgroup-memory kernel (cleared by a pass before each run), two halves for the subgroup
/// kernel (alternate runs use alternate halves, each tile cleaning its entry of the other).
pub(super) fn status_words(shape: TileShape, tiles: usize) -> usize {
    if shape.subgroups {
        1 + 4 * tiles
    } else {
        1 + 2 * tiles
    }
}

pub(super) fn capture_if(trace: bool, r: Region) -> Vec<Region> {
    if trace { vec![r] } else { vec![] }
}

pub(super) fn phase_groups(threads: usize) -> [u32; 3] {
    grid((threads as u32).div_ceil(PHASE_WG))
}

impl Options {
    pub(super) fn build(
        &self,
        gpu: &Gpu,
        variant: Variant,
        dtype: DType,
        init: &Init,
        trace: bool,
    ) -> Result<Built> {
        let n = init.n();
        let mut plan = Plan::default();
        let base = self.params(dtype, PHASE_WG, 1, false, 0);
        let mut built = Built {
            plan: Plan::default(),
            tile: None,
            tiles: 0,
        };
        match variant {
            Variant::Ladder | Variant::Folded | Variant::HillisSteele => {
                let mut cur = init.buffer(gpu, "scan a", n)?;
                let mut other = init.scratch(gpu, "scan b", n)?;
                let suffix = variant == Variant::Folded && !self.mirror;
                if variant == Variant::Ladder {
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
                    let entry = if variant == Variant::Folded {
                        "fold_step"
                    } else {
                        "hs_step"
                    };
                    let p_ = gpu.pipeline("scan pingpong", &specialize(PINGPONG, &base), entry)?;
                    let phases: Vec<usize> = if variant == Variant::Folded {
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
            Variant::Blelloch => {
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
                // One pass of the sweep `dir` per tree level: N / 2^level nodes work.
                let level_pass =
                    |plan: &mut Plan, p: &wgpu::ComputePipeline, dir: &str, level: u32| {
                        let half = 1usize << (level - 1);
                        let count = big / (2 * half);
                        let u = gpu.uniform("scan params", &[count as u32, half as u32])?;
                        let bg = gpu.bind(p, &[&a, &u])?;
                        let label = format!("blelloch {dir} level {level}");
                        plan.push(label, p, bg, phase_groups(count));
                        cap(plan);
                        plan.keep.push(u);
                        Ok::<_, Error>(())
                    };
                for level in 1..=log_n {
                    level_pass(&mut plan, &up, "up", level)?;
                }
                let u = gpu.uniform("scan params", &[big as u32, 0])?;
                let bg = gpu.bind(&clear, &[&a, &u])?;
                plan.push("blelloch clear root", &clear, bg, [1, 1, 1]);
                cap(&mut plan);
                plan.keep.push(u);
                for level in (1..=log_n).rev() {
                    level_pass(&mut plan, &down, "down", level)?;
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
            Variant::Sequential => {
                let nv = n.div_ceil(4);
                // One thread walks 8 vec4 a round (sequential.wgsl): lavapipe ends its loop after
                // `limit` rounds (measured: 65535 rounds right, 65536 wrong).
                if let Some(limit) = gpu.loop_limit()
                    && nv.div_ceil(8) > limit as usize
                {
                    return Err(Error::Limit(format!(
                        "scan sequential: one thread loops {} times over the input, more loop iterations than this \
                         adapter runs ({limit} an invocation: llvmpipe ends loops there); at most {} elements here",
                        nv.div_ceil(8),
                        limit as usize * 32
                    )));
                }
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
            Variant::ReduceThenScan | Variant::Decoupled => {
                let shape = self.tile_shape(gpu, variant, n)?;
                let te = shape.elements();
                let nv = n.div_ceil(4);
                let tiles = n.div_ceil(te);
                if variant == Variant::Decoupled {
                    self.check_loop_limit(gpu, shape, tiles)?;
                } else if let Some(limit) = gpu.loop_limit() {
                    // rts_spine: one workgroup walks the tile sums twice, ⌈tiles / WG⌉ a thread.
                    let loops =
                        2 * tiles.div_ceil(shape.wg as usize) + 2 * shape.wg.ilog2() as usize + 16;
                    if loops > limit as usize {
                        return Err(Error::Limit(format!(
                            "scan reduce-then-scan: its one-workgroup pass over the {tiles} tile sums loops {loops} times \
                             a thread, more loop iterations than this adapter runs ({limit} an invocation: llvmpipe ends \
                             loops there); use a larger --workgroup-size or --per-thread"
                        )));
                    }
                }
                let params = self.params(
                    dtype,
                    shape.wg,
                    shape.per,
                    self.dispatch_order(gpu),
                    Self::spin_budget(gpu),
                );
                // Whole tiles for the subgroup kernel (tile_shape checked that they fit a binding).
                let words = shape.buffer_words(n);
                let src = init.buffer(gpu, "scan input", words)?;
                let dst = init.scratch(gpu, "scan output", words)?;
                let u = gpu.uniform("scan params", &[n as u32, nv as u32, tiles as u32])?;
                if variant == Variant::ReduceThenScan {
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
                        // Written-out loops over the thread's vec4 (the template's `//#unroll`).
                        unroll(&specialize(DECOUPLED_SG, &params), shape.per)
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
    #[cfg(not(target_arch = "wasm32"))]
    pub fn decoupled_runs(
        &self,
        gpu: &Gpu,
        dtype: DType,
        x: &[u32],
        runs: usize,
    ) -> Result<Vec<DecoupledRun>> {
        self.check_tile_options(Variant::Decoupled)?;
        let built = self.build(gpu, Variant::Decoupled, dtype, &Init::Data(x), true)?;
        let look_back = built
            .plan
            .passes
            .last()
            .expect("decoupled has a look-back pass");
        let workgroups = look_back.workgroups.iter().product::<u32>() as usize;
        let mut out = Vec::with_capacity(runs);
        for _ in 0..runs {
            let ex = crate::gpu::execute_blocking(gpu, &built.plan, true)?;
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
