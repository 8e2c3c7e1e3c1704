//! FFT options: the configuration they give (size, elements per invocation, workgroup size), checked
//! against the adapter, and which kernel runs it.

use super::*;

impl Options {
    pub(super) fn mode(&self) -> Mode {
        if self.real {
            Mode::Real
        } else if self.real_pair {
            Mode::Pair
        } else {
            Mode::Complex
        }
    }

    pub(super) fn points_per_float(&self) -> usize {
        if self.real { 1 } else { 2 }
    }

    /// The FFT size: --size, else inferred from an input of `len` f32 numbers, else 16.
    pub fn size_for(&self, len: Option<usize>) -> Result<usize> {
        if let Some(n) = self.size {
            return Ok(n);
        }
        let Some(len) = len else {
            return Ok(DEFAULT_SIZE);
        };
        let per = self.points_per_float() * self.batch.max(1);
        if len % per != 0 {
            return Err(Error::Input(format!(
                "fft: cannot infer --size from {len} input numbers: not a multiple of {per} ({} per point × batch {})",
                self.points_per_float(),
                self.batch
            )));
        }
        Ok(len / per)
    }

    /// Resolve and check every parameter. `len` is the input length in f32 numbers (None: no
    /// input yet); `limits` the adapter's (None: skip adapter checks).
    pub fn config(
        &self,
        len: Option<usize>,
        limits: Option<&wgpu::Limits>,
        trace: bool,
    ) -> Result<Config> {
        if self.real && self.real_pair {
            return Err(Error::input(
                "fft: --real and --real-pair exclude each other",
            ));
        }
        if self.batch == 0 {
            return Err(Error::input("fft: --batch must be at least 1"));
        }
        if self.ffts_per_workgroup == Some(0) {
            return Err(Error::input("fft: --ffts-per-workgroup must be at least 1"));
        }
        if let Some(s) = self.sequential_ffts
            && !(1..=MAX_SEQUENTIAL_FFTS).contains(&s)
        {
            return Err(Error::Input(format!(
                "fft: --sequential-ffts must be 1..={MAX_SEQUENTIAL_FFTS} (a workgroup's FFTs run one after another in a \
                 loop, and lavapipe ends an invocation's loops after 65535 iterations); got {s}"
            )));
        }
        let n = self.size_for(len)?;
        if n < 2 || !n.is_power_of_two() {
            return Err(Error::Input(format!(
                "fft: --size must be a power of two ≥ 2; got {n}"
            )));
        }
        let log_n = n.trailing_zeros();
        let max_w = limits
            .map(|l| {
                (l.max_compute_invocations_per_workgroup as usize)
                    .min(l.max_compute_workgroup_size_x as usize)
            })
            .unwrap_or(256);
        let e = match (self.elements_per_invocation, self.workgroup_size) {
            (Some(e), _) => e,
            (None, Some(w)) => {
                pow2("--workgroup-size", w)?;
                if w > n / 2 {
                    return Err(Error::Input(format!(
                        "fft: --workgroup-size {w} leaves fewer than 2 elements per invocation for --size {n} (need E = N / W ≥ 2)"
                    )));
                }
                n / w
            }
            (None, None) => {
                // Fastest natural-order shapes measured on the H100 (radix kernel): 256: E8,
                // 1024: E16, 4096: E16.
                let cap = if n >= 1024 { 16 } else { 8 };
                let mut e = (n / 32).clamp(2, cap).min(n);
                while n / e > max_w && e < n {
                    e *= 2;
                }
                e
            }
        };
        let log_e = pow2("--elements-per-invocation", e)?;
        if e < 2 || e > n {
            return Err(Error::Input(format!(
                "fft: --elements-per-invocation must be a power of two with 2 ≤ E ≤ N = {n}; got {e}"
            )));
        }
        let w = self.workgroup_size.unwrap_or(n / e);
        pow2("--workgroup-size", w)?;
        if e * w != n {
            return Err(Error::Input(format!(
                "fft: elements per invocation × workgroup size must equal the size: {e} × {w} = {} ≠ {n}",
                e * w
            )));
        }
        let mode = self.mode();
        let mut cfg = Config {
            n,
            e,
            w,
            log_n,
            log_e,
            batch: self.batch,
            mode,
            natural: self.order == Order::Natural,
            inverse: self.inverse,
            large: false,
        };
        if let Some(len) = len {
            let want = cfg.in_floats() * cfg.batch;
            if len != want {
                let what = if mode == Mode::Real {
                    format!("{n} real numbers")
                } else {
                    format!("{n} [re, im] pairs = {} numbers", 2 * n)
                };
                return Err(Error::Input(format!(
                    "fft: --size {n} × --batch {} needs {want} input numbers ({what} per FFT); got {len}",
                    cfg.batch
                )));
            }
        }
        if let Some(l) = limits {
            // Past one workgroup: sizes the teaching kernel cannot hold, and untraced complex
            // sizes whose N values outgrow workgroup memory (no fast kernel runs them).
            let max_bytes = l.max_compute_workgroup_storage_size as usize;
            let fits = w <= max_w && cfg.shared_bytes(trace) <= max_bytes;
            let fast_fits = trace || mode != Mode::Complex || n * 8 <= max_bytes;
            // Real input in natural order: the packed N/2-point FFT with the unpacking fused
            // (half the teaching kernel's work), unless E asks for the workgroup kernel's shape.
            let packed_real = !trace
                && mode == Mode::Real
                && cfg.natural
                && n >= 4
                && self.elements_per_invocation.is_none();
            if self.kernel == Kernel::Large
                || (self.kernel == Kernel::Auto
                    && self.workgroup_size.is_none()
                    && (!(fits && fast_fits) || packed_real))
            {
                cfg.large = true;
                return self.check_large(cfg);
            }
            if self.split.is_some()
                || self.exchange_parts.is_some()
                || self.exchange_layout != ExchangeLayout::Auto
                || self.phase_split.is_some()
                || self.phase_lanes.is_some()
                || self.chain.is_some()
            {
                return Err(Error::Input(format!(
                    "fft: --split, --exchange-parts, --exchange-layout, --phase-split, --phase-lanes and --chain apply to the large plan (sizes past one workgroup, --real, or --kernel large); size {n} runs in one workgroup"
                )));
            }
            // The workgroup kernels: an invocation holds its E elements.
            if e > MAX_ELEMENTS_PER_INVOCATION {
                return Err(Error::Limit(format!(
                    "fft: --elements-per-invocation {e}: at most {MAX_ELEMENTS_PER_INVOCATION} (an invocation \
                     keeps its elements in private memory, {} KiB at {e}: NVIDIA's driver loses the device \
                     building such a kernel); use a larger --workgroup-size",
                    e * 8 / 1024
                )));
            }

            // Real input in one workgroup runs the teaching kernel, which has none of these knobs.
            let lanes = "the fast and radix kernels and the large plan";
            if mode != Mode::Complex
                && let Some((name, kernels)) = [
                    (
                        "--ffts-per-workgroup",
                        self.ffts_per_workgroup.is_some(),
                        lanes,
                    ),
                    ("--sequential-ffts", self.sequential_ffts.is_some(), lanes),
                    ("--no-shuffle", self.no_shuffle, "the fast kernel"),
                    (
                        "--natural-store",
                        self.natural_store != NaturalStore::Staged,
                        "the fast kernel",
                    ),
                ]
                .into_iter()
                .find_map(|(name, set, kernels)| set.then_some((name, kernels)))
            {
                return Err(Error::Input(format!(
                    "fft: {name} applies to {kernels}; real input of size {n} in {} order runs the teaching kernel",
                    if cfg.natural { "natural" } else { "raw" }
                )));
            }
            if w > max_w {
                return Err(Error::Limit(format!(
                    "fft: workgroup size W = {w} (N/E = {n}/{e}) is above this adapter's limit of {max_w} invocations per workgroup (max_compute_invocations_per_workgroup): use E ≥ {}",
                    n / max_w
                )));
            }
            let bytes = cfg.shared_bytes(trace);
            let max = l.max_compute_workgroup_storage_size as usize;
            if bytes > max {
                return Err(Error::Limit(format!(
                    "fft: size {n} needs {bytes} bytes of workgroup memory{} (max_compute_workgroup_storage_size = {max} on this adapter)",
                    if trace { " with --trace" } else { "" }
                )));
            }
            check_groups(cfg.batch, cfg.batch)?;
        }
        Ok(cfg)
    }

    /// What the large passes cannot do, refused with the reason.
    fn check_large(&self, cfg: Config) -> Result<Config> {
        if self.split.is_some_and(|s| s < 2 || !s.is_power_of_two()) {
            return Err(Error::Input(format!(
                "fft: --split must be a power of two ≥ 2; got {}",
                self.split.unwrap_or(0)
            )));
        }
        for (name, v) in [
            ("--phase-split", self.phase_split),
            ("--phase-lanes", self.phase_lanes),
        ] {
            if v.is_some_and(|v| v < 1 || !v.is_power_of_two()) {
                return Err(Error::Input(format!(
                    "fft: {name} must be a power of two; got {}",
                    v.unwrap_or(0)
                )));
            }
        }
        let chain = self.chain.is_some_and(|l| l > 0);
        if self.phase_split.is_none() && self.phase_lanes.is_some() && !chain {
            return Err(Error::input(
                "fft: --phase-lanes applies to passes through L2 (--phase-split or --chain)",
            ));
        }
        if self.phase_split.is_some() && self.sequential_ffts.is_some() && !chain {
            return Err(Error::input(
                "fft: --sequential-ffts does not apply to passes through L2 (--phase-split) unless chained (--chain): their turns follow from the lanes",
            ));
        }
        if let Some(p) = self.exchange_parts
            && ![1, 2, 4, 8].contains(&p)
        {
            return Err(Error::Input(format!(
                "fft: --exchange-parts must be 1, 2, 4 or 8; got {p}"
            )));
        }
        if cfg.mode != Mode::Complex && !cfg.natural {
            return Err(Error::Input(format!(
                "fft: --order raw with --real or --real-pair is the workgroup kernel's order; size {} runs as a large FFT, whose unpacking pass writes natural order only",
                cfg.n
            )));
        }
        if cfg.mode == Mode::Real && cfg.n < 4 {
            return Err(Error::input("fft: a large real FFT needs --size ≥ 4"));
        }
        if self.no_shuffle || self.natural_store != NaturalStore::Staged {
            return Err(Error::input(
                "fft: --no-shuffle and --natural-store apply to --kernel fast, not to the large passes",
            ));
        }
        Ok(cfg)
    }

    /// The fast kernel's configuration for `cfg` on `gpu`, or None for the teaching kernel:
    /// `--kernel teaching`, traced runs (the trace is written by the teaching kernel), and with
    /// `auto` whatever the fast kernel cannot run (real modes, E > 64, workgroup limits).
    /// `--kernel fast` names the reason instead of falling back.
    pub fn fast_config(
        &self,
        cfg: &Config,
        gpu: &Gpu,
        trace: bool,
    ) -> Result<Option<codegen::FastConfig>> {
        if trace || cfg.large || self.kernel == Kernel::Teaching {
            return Ok(None);
        }
        if self.kernel == Kernel::Radix {
            return self.try_radix(cfg, gpu).map(Some);
        }
        if self.kernel == Kernel::Auto
            && cfg.natural
            && !self.no_shuffle
            && self.natural_store == NaturalStore::Staged
            && let Ok(f) = self.try_radix(cfg, gpu)
        {
            return Ok(Some(f));
        }
        match self.try_fast(cfg, gpu) {
            Ok(f) => Ok(Some(f)),
            Err(_) if self.kernel == Kernel::Auto => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(super) fn try_radix(&self, cfg: &Config, gpu: &Gpu) -> Result<codegen::FastConfig> {
        if cfg.mode != Mode::Complex || !cfg.natural {
            return Err(Error::input(
                "fft: --kernel radix runs complex FFTs in natural order only (no --order raw, --real, --real-pair)",
            ));
        }
        if self.no_shuffle || self.natural_store != NaturalStore::Staged {
            return Err(Error::input(
                "fft: --no-shuffle and --natural-store apply to --kernel fast; --kernel radix uses no shuffles and stores natural order from registers",
            ));
        }
        // About 8 KiB of data per workgroup side by side: the fastest measured on the H100 (256:
        // G4, 1024: G1 — G2 was 18% slower —, 4096: G1); from 2048, 4 FFTs in a loop (4096: S4
        // 0.726 ms, S8 0.733, S1 0.913; 2048: S8 0.733, S1 0.879 — the next FFT's loads hide
        // the barriers' waits) where the batch still leaves at least 1024 workgroups.
        let seq = if cfg.n >= 2048 && cfg.batch >= 4 * 1024 {
            4
        } else {
            1
        };
        let s = self.sequential_ffts.unwrap_or(seq);
        self.fit_groups(
            cfg,
            gpu,
            "radix",
            1024 / cfg.n,
            |g, max_bytes| codegen::FastConfig::radix(cfg.n, cfg.e, g, s, cfg.inverse, max_bytes),
            |g| cfg.n * g * 8,
        )
    }

    pub(super) fn try_fast(&self, cfg: &Config, gpu: &Gpu) -> Result<codegen::FastConfig> {
        if self.kernel == Kernel::Fast && self.sequential_ffts.is_some() {
            return Err(Error::input(
                "fft: --sequential-ffts applies to the radix kernel; --kernel fast has no FFT loop",
            ));
        }
        if cfg.mode != Mode::Complex {
            return Err(Error::input(
                "fft: --kernel fast runs complex FFTs only (--real and --real-pair use --kernel teaching or auto)",
            ));
        }
        let min_sg = gpu.info.subgroup_min_size as usize;
        let shuffle_below = if !self.no_shuffle && gpu.has_subgroups() && min_sg >= 2 {
            min_sg
        } else {
            0
        };
        let staged = self.natural_store == NaturalStore::Staged;
        let build = |g: usize, max_bytes: usize| {
            codegen::FastConfig::new(
                cfg.n,
                cfg.e,
                g,
                cfg.natural,
                staged,
                cfg.inverse,
                shuffle_below,
                max_bytes,
            )
        };
        // 128 threads per workgroup: the fastest G measured on the H100 (256, E8: G4;
        // 1024, E8: G1; 4096, E16: G1).
        self.fit_groups(cfg, gpu, "fast", 128 / cfg.w, build, |g| {
            // The unpadded need: the least any padding choice could ask for.
            build(g, usize::MAX).map_or(0, |c| {
                codegen::FastConfig {
                    pad_shift: None,
                    ..c
                }
                .shared_bytes()
            })
        })
    }

    /// The checks both generated kernels share, and their G: `--ffts-per-workgroup` as given, else
    /// `default_g` (at least 1, at most the batch rounded up to a power of two) halved until the
    /// workgroup fits. `build(g, max_bytes)` is None when G FFTs need more workgroup memory than
    /// `max_bytes` (`need(g)` bytes).
    pub(super) fn fit_groups(
        &self,
        cfg: &Config,
        gpu: &Gpu,
        kernel: &str,
        default_g: usize,
        build: impl Fn(usize, usize) -> Option<codegen::FastConfig>,
        need: impl Fn(usize) -> usize,
    ) -> Result<codegen::FastConfig> {
        if cfg.e > codegen::MAX_E {
            return Err(Error::Input(format!(
                "fft: --kernel {kernel} unrolls at most E = {} elements per invocation; got {}",
                codegen::MAX_E,
                cfg.e
            )));
        }
        let l = &gpu.limits;
        let max_threads = (l.max_compute_invocations_per_workgroup as usize)
            .min(l.max_compute_workgroup_size_x as usize);
        let max_bytes = l.max_compute_workgroup_storage_size as usize;
        let make = |g: usize| -> Result<codegen::FastConfig> {
            let threads = cfg.w * g;
            if threads > max_threads {
                return Err(Error::Limit(format!(
                    "fft: --kernel {kernel} with W = {} × G = {g} FFTs per workgroup = {threads} threads is above this adapter's limit of {max_threads} invocations per workgroup",
                    cfg.w,
                )));
            }
            build(g, max_bytes).ok_or_else(|| {
                Error::Limit(format!(
                    "fft: --kernel {kernel} with size {} × {g} FFTs per workgroup needs {} bytes of workgroup memory (max_compute_workgroup_storage_size = {max_bytes} on this adapter)",
                    cfg.n,
                    need(g)
                ))
            })
        };
        let f = match self.ffts_per_workgroup {
            Some(g) => make(g)?,
            None => {
                let mut g = default_g.max(1).min(cfg.batch.next_power_of_two());
                loop {
                    match make(g) {
                        Ok(f) => break f,
                        Err(e) if g == 1 => return Err(e),
                        Err(_) => g /= 2,
                    }
                }
            }
        };
        check_groups(cfg.batch, cfg.batch.div_ceil(f.g * f.s))?;
        Ok(f)
    }

    /// The generated signal of `size × batch` points (f32 numbers: interleaved unless --real).
    pub fn signal_data(&self, n: usize) -> Data {
        let batch = self.batch.max(1);
        let mut out = Vec::with_capacity(2 * n * batch);
        let mut rng_state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut noise = || {
            rng_state ^= rng_state << 13;
            rng_state ^= rng_state >> 7;
            rng_state ^= rng_state << 17;
            ((rng_state >> 40) as f64 / (1u64 << 24) as f64) * 2.0 - 1.0
        };
        let tau = std::f64::consts::TAU;
        for _ in 0..batch {
            for i in 0..n {
                let ph = i as f64 / n as f64;
                let square = if (i * 4 / n.max(4)).is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                };
                let sines = (tau * 3.0 * ph).cos() + 0.5 * (tau * 5.0 * ph).sin();
                let (re, im) = match self.signal {
                    Signal::Impulse => (if i == 0 { 1.0 } else { 0.0 }, 0.0),
                    Signal::Sines => (sines, 0.25 * (tau * 2.0 * ph).cos()),
                    Signal::Square => (square, 0.0),
                    Signal::Noise => (noise(), noise()),
                    Signal::TwoReal => (sines, square),
                };
                out.push(re as f32);
                if !self.real {
                    out.push(im as f32);
                }
            }
        }
        Data::from_f32(&out)
    }
}

/// Refuses a dispatch of more workgroups than a 2D grid of 32768 × 65535 holds.
pub(super) fn check_groups(batch: usize, groups: usize) -> Result<()> {
    const MAX: usize = 32768 * 65535;
    if groups > MAX {
        return Err(Error::Limit(format!(
            "fft: --batch {batch} needs {groups} workgroups, above the dispatch limit of {MAX}"
        )));
    }
    Ok(())
}
