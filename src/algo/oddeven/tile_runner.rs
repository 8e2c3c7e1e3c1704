//! Tile passes made GPU passes: the generic kernel (batcher.wgsl, writes the trace) or a register
//! kernel generated per pass (regs.rs).

use super::*;

const BATCHER: &str = include_str!("../../../shaders/oddeven/batcher.wgsl");
/// Parameters, bindings and `index_of`, shared by batcher.wgsl and the generated register kernel.
const TILE: &str = include_str!("../../../shaders/oddeven/tile.wgsl");

/// A tile pass's kernel ([`TileRunner::kernel`]).
struct PassKernel {
    rp: Option<regs::RegsPass>,
    tiles: usize,
    groups: usize,
    label: &'static str,
    code: String,
    entry: &'static str,
}

/// Makes tile passes GPU passes, with the options' kernel choice and tuning.
pub(super) struct TileRunner<'a> {
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
    /// Register kernel: workgroup buffers for the hand-overs (None: one).
    buffers: Option<usize>,
}

impl<'a> TileRunner<'a> {
    pub(super) fn new(
        o: &Options,
        gpu: &'a Gpu,
        caps: Caps,
        s: &Shape,
        trace: bool,
    ) -> Result<TileRunner<'a>> {
        Ok(TileRunner {
            gpu,
            caps,
            dtype: s.dtype,
            desc: s.desc,
            trace,
            kernel: o.kernel,
            keys: o.keys(gpu)?,
            tiles_per_wg: o.tiles_per_workgroup()?,
            buffers: o.exchange_buffers()?,
        })
    }
}

impl TileRunner<'_> {
    /// The register kernel's form of `tp`, or why it cannot run it (a `Limit` where the tile is past
    /// this adapter's invocations or workgroup memory, else `Input`).
    pub(super) fn regs_pass(
        &self,
        tp: &TilePass,
        tiles: usize,
        segmented: bool,
    ) -> Result<regs::RegsPass> {
        if self.trace {
            return Err(Error::input("traces are written by the generic kernel"));
        }
        let size = tp.res * tp.rows;
        let adapter = caps_of(self.gpu);
        let keys = self.keys;
        if !size.is_power_of_two() || size < 256 || size / keys < tp.res {
            return Err(Error::Input(format!(
                "a tile of {size} keys (the register kernel needs a power of two ≥ 256)"
            )));
        }
        if size / keys > adapter.wg_max as usize {
            return Err(Error::Limit(format!(
                "a tile of {size} keys needs {} invocations per workgroup ({keys} keys each); this adapter allows {}",
                size / keys,
                adapter.wg_max
            )));
        }
        let limit = self.gpu.limits.max_compute_workgroup_storage_size as usize;
        // One buffer by default: a second saves a barrier a hand-over but halves the workgroups an
        // SM holds (H200: segments of 4096 0.233 → 0.182 ms, 4096-key tiles of a whole 2^24
        // array 3.28 → 2.37 ms; docs/perf/oddeven.md).
        let double = self.buffers == Some(2);
        let bytes = regs::RegsPass::smem_bytes(size, keys, double);
        if bytes > limit {
            return Err(Error::Limit(format!(
                "{}a tile of {size} keys needs {bytes} bytes of workgroup memory{}; this adapter has {limit}",
                if double { "--exchange-buffers 2: " } else { "" },
                if double { " for two" } else { "" }
            )));
        }
        let list = tp.stage_list();
        if list.is_empty() {
            return Err(Error::input("no stages"));
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
                    return Err(Error::Input(format!("stage (p {p}, k {k}) of a halo tile")));
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

    /// Compile the kernels of `passes` before their passes are pushed, several at once
    /// ([`Gpu::prepare_pipelines`]): the register kernels are generated per pass, and their
    /// recording builds take the H200's compiler seconds each. A pass whose kernel cannot be made
    /// is left to [`TileRunner::push`] to refuse.
    pub(super) fn prepare(&self, net: Net, passes: &[TilePass]) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        let kernels: Vec<_> = passes
            .iter()
            .filter_map(|tp| self.kernel(net, tp).ok())
            .filter(|k| seen.insert(k.code.clone()))
            .map(|k| (k.label, k.code, k.entry))
            .collect();
        self.gpu.prepare_pipelines(&kernels)
    }

    /// A tile pass's kernel: its register form (None: the generic kernel), tiles, workgroup
    /// groups, and the WGSL to compile.
    fn kernel(&self, net: Net, tp: &TilePass) -> Result<PassKernel> {
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
                Error::input_or_limit(
                    matches!(why, Error::Limit(_)),
                    format!("--kernel registers cannot run {}: {why}", tp.label),
                )
            })?),
        };
        let wg = match &rp {
            Some(rp) => rp.threads() as u32,
            None => self.caps.wg_max.min((size / 2).max(1) as u32),
        };
        if rp.is_none()
            && let Some(limit) = self.gpu.loop_limit().map(u64::from)
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
        let (label, code, entry) = match &rp {
            Some(rp) => (
                "oddeven batcher registers",
                source(
                    &format!("{TILE}\n{}", regs::shader(rp)),
                    self.dtype,
                    self.desc,
                    &[],
                ),
                "regs",
            ),
            None => (
                "oddeven batcher tile",
                source(
                    &format!("{TILE}\n{BATCHER}"),
                    self.dtype,
                    self.desc,
                    &[("WG", wg.to_string()), ("TILE", size.to_string())],
                ),
                "tile",
            ),
        };
        Ok(PassKernel {
            rp,
            tiles,
            groups,
            label,
            code,
            entry,
        })
    }

    pub(super) fn push(
        &self,
        plan: &mut Plan,
        net: Net,
        tp: &TilePass,
        src: &wgpu::Buffer,
        dst: &wgpu::Buffer,
        flags: &wgpu::Buffer,
    ) -> Result<()> {
        let size = tp.res * tp.rows;
        let k = self.kernel(net, tp)?;
        let pipe = self.gpu.pipeline(k.label, &k.code, k.entry)?;
        let (rp, tiles, groups) = (k.rp, k.tiles, k.groups);
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
                    Some(r) => format!(
                        ", registers{}{}",
                        if r.tiles_per_wg > 1 {
                            format!(", {} tiles per workgroup", r.tiles_per_wg)
                        } else {
                            String::new()
                        },
                        if r.double { ", 2 buffers" } else { "" }
                    ),
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
