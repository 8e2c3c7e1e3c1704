//! Nabla-style workgroup FFT (seed 003): one workgroup per FFT of N = WorkgroupSize ×
//! ElementsPerInvocation complex f32 points, radix-2 butterflies in registers, exchanges by xor
//! through workgroup memory, output in raw (Nabla) order or in natural order through F(n) =
//! bitreverse(e⁻¹(n)); real-pair unpacking and a real-only FFT by the seed's rules.

pub mod fast;
pub mod model;
pub mod radix;
pub mod trace;

use super::{
    AlgoInfo, Algorithm, BenchCase, RoomNotes, RunRequest, RunResult, Stage, Variant, pass_infos,
};
use crate::data::{DType, Data, f32_to_json};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan, Region, execute, grid, specialize};
use model::{C64, StepKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

const VARIANTS: &[Variant] = &[Variant {
    name: "workgroup",
    summary: "one workgroup per FFT: registers + xor exchanges through workgroup memory",
}];

static INFO: AlgoInfo = AlgoInfo {
    name: "fft",
    title: "FFT (Nabla workgroup FFT)",
    summary: "Complex f32 FFT of size 2^k in one workgroup: WorkgroupSize threads × ElementsPerInvocation elements, xor exchanges, raw (Nabla) or natural order, real-pair and real-only modes.",
    variants: VARIANTS,
    dtypes: &[DType::F32],
    seed: "003",
};

const SHADER: &str = include_str!("../../../shaders/fft/fft.wgsl");
/// A NaN with a recognisable payload: unwritten outputs show.
pub const POISON: u32 = 0x7FC0_DEAD;
/// Default FFT size when neither --size nor an input length says otherwise.
pub const DEFAULT_SIZE: usize = 16;

/// Output order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// The order the GPU writes: every thread writes to the indices it read (output[x] = DFT[F(x)]).
    Raw,
    /// The DFT's order, written by the GPU through F(x) = bitreverse(e⁻¹(x)).
    #[default]
    Natural,
}

/// Which kernel runs the FFT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// Not tracing, complex: radix in natural order, fast in raw order (where the configuration
    /// fits); else teaching.
    #[default]
    Auto,
    /// The generated straight-line kernel (src/algo/fft/fast.rs): complex FFTs only.
    Fast,
    /// The teaching kernel (shaders/fft/fft.wgsl): every mode, writes the trace.
    Teaching,
    /// Not the seed's schedule: rounds of log2(E) stages in registers, written back in place to
    /// workgroup memory between rounds (src/algo/fft/radix.rs); complex FFTs in natural order.
    Radix,
}

/// How the fast kernel writes natural order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum NaturalStore {
    /// Straight from registers: each thread's outputs are runs of E/2 consecutive values, stored
    /// as 16-byte pairs (no staging memory, no extra barrier). Slower on the H100 (1024: 1.19 ms
    /// against 0.84 ms staged): 16-byte stores spread over a warp cost more than staging.
    Direct,
    /// Through padded workgroup memory (G·N values), so consecutive threads store consecutive
    /// values. The default (the H100's faster).
    #[default]
    Staged,
}

/// The generated signal (used when no --input/--n is given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Signal {
    /// 1 at n = 0.
    Impulse,
    /// cos(2π·3n/N) + 0.5·sin(2π·5n/N) (+ i·0.25·cos(2π·2n/N) for complex input).
    #[default]
    Sines,
    /// ±1 with period N/4.
    Square,
    /// Uniform noise in [-1, 1) from a fixed seed.
    Noise,
    /// Two real signals (x = sines, y = square) packed as x + iy (for --real-pair).
    TwoReal,
}

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct Options {
    /// FFT size N (complex points), a power of two ≥ 2. Default: the input length / batch (2 numbers per point; 1 with --real), or 16 for generated input.
    #[arg(long)]
    pub size: Option<usize>,
    /// ElementsPerInvocation E: a power of two ≥ 2 with E · WorkgroupSize = N. Default: N / --workgroup-size, else max(2, min(N/32, 8 below N = 1024, 16 from it)) raised until N/E fits the adapter (256: 8, 1024: 16, 4096: 16).
    #[arg(long)]
    pub elements_per_invocation: Option<usize>,
    /// WorkgroupSize W (threads per FFT). Default: N / E.
    #[arg(long)]
    pub workgroup_size: Option<usize>,
    /// Output order: raw (as the GPU writes, Nabla order) or natural (DFT order).
    #[arg(long, value_enum, default_value_t = Order::Natural)]
    pub order: Order,
    /// Unnormalised inverse FFT: x[n] = Σ X[k] e^{+2πikn/N} (inverse(forward(x)) = N·x).
    #[arg(long)]
    pub inverse: bool,
    /// Real-only FFT: N real inputs; keeps the seed's "even" elements (N/2 bins), DC + i·Nyquist packed into element 0.
    #[arg(long, conflicts_with = "real_pair")]
    pub real: bool,
    /// Two real signals packed as x + iy (input pairs [x, y]); outputs {"x": spectrum, "y": spectrum}.
    #[arg(long)]
    pub real_pair: bool,
    /// B independent FFTs in one dispatch (one workgroup each; input = B signals one after another).
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// Generated signal when no --input/--n is given.
    #[arg(long, value_enum, default_value_t = Signal::Sines)]
    pub signal: Signal,
    /// Kernel: auto (untraced complex FFTs: radix in natural order, fast in raw order; else teaching), fast (the seed's schedule, straight-line), teaching (every mode, writes the trace), radix (natural order only: rounds of log2 E stages in registers with workgroup-memory round trips between them, not the seed's exchanges).
    #[arg(long, value_enum, default_value_t = Kernel::Auto)]
    pub kernel: Kernel,
    /// Fast and radix kernels: G FFTs per workgroup (W·G threads). Default: fast 128 / W, radix 1024 / N (at least 1), at most the batch rounded up to a power of two, halved until it fits the adapter.
    #[arg(long)]
    pub ffts_per_workgroup: Option<usize>,
    /// Radix kernel: S FFTs every thread group runs one after another (a loop; the next FFT's loads fly while the current one computes), so a workgroup does G·S FFTs. Default: 4 from size 2048 when the batch has at least 4096 FFTs (measured on an H100), else 1.
    #[arg(long)]
    pub sequential_ffts: Option<usize>,
    /// Fast kernel: every exchange through workgroup memory (no subgroupShuffleXor).
    #[arg(long)]
    pub no_shuffle: bool,
    /// Fast kernel, natural order: direct (16-byte stores of each thread's runs straight from registers) or staged (through workgroup memory, coalesced across threads).
    #[arg(long, value_enum, default_value_t = NaturalStore::Staged)]
    pub natural_store: NaturalStore,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            size: None,
            elements_per_invocation: None,
            workgroup_size: None,
            order: Order::Natural,
            inverse: false,
            real: false,
            real_pair: false,
            batch: 1,
            signal: Signal::Sines,
            kernel: Kernel::Auto,
            ffts_per_workgroup: None,
            sequential_ffts: None,
            no_shuffle: false,
            natural_store: NaturalStore::Staged,
        }
    }
}

/// What runs: resolved and checked parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Complex,
    Real,
    Pair,
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub n: usize,
    pub e: usize,
    pub w: usize,
    pub log_n: u32,
    pub log_e: u32,
    pub batch: usize,
    pub mode: Mode,
    pub natural: bool,
    pub inverse: bool,
}

impl Config {
    /// f32 input numbers per FFT.
    pub fn in_floats(&self) -> usize {
        if self.mode == Mode::Real {
            self.n
        } else {
            2 * self.n
        }
    }

    /// Complex output values per FFT.
    pub fn out_complex(&self) -> usize {
        match self.mode {
            Mode::Complex => self.n,
            Mode::Real => self.n / 2,
            Mode::Pair if self.natural => 2 * (self.n / 2 + 1),
            Mode::Pair => 2 * self.n,
        }
    }

    /// Length of the workgroup arrays (re and im, f32 each).
    pub fn shared_len(&self) -> usize {
        match self.mode {
            Mode::Pair => self.n,
            _ if self.w == 1 => 1,
            _ => self.n / 2,
        }
    }

    /// Workgroup memory the kernel declares, in bytes.
    pub fn shared_bytes(&self, trace: bool) -> usize {
        let sh = self.shared_len();
        sh * 8 + if trace { sh * 4 } else { 0 }
    }

    /// Steps of the trace: input + log2 N butterflies + (log2 E − 1) regroups + log2 W exchanges.
    pub fn trace_stages(&self) -> usize {
        2 * self.log_n as usize
    }
}

fn pow2(name: &str, v: usize) -> Result<u32> {
    if v == 0 || !v.is_power_of_two() {
        return Err(Error::Input(format!(
            "fft: {name} must be a power of two; got {v}"
        )));
    }
    Ok(v.trailing_zeros())
}

impl Options {
    fn mode(&self) -> Mode {
        if self.real {
            Mode::Real
        } else if self.real_pair {
            Mode::Pair
        } else {
            Mode::Complex
        }
    }

    fn points_per_float(&self) -> usize {
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
        if self.sequential_ffts == Some(0) {
            return Err(Error::input("fft: --sequential-ffts must be at least 1"));
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
                // Fastest natural-order shapes measured on the H100 (radix kernel,
                // bench/h100-radix.sh): 256: E8, 1024: E16, 4096: E16.
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
        let cfg = Config {
            n,
            e,
            w,
            log_n,
            log_e,
            batch: self.batch,
            mode,
            natural: self.order == Order::Natural,
            inverse: self.inverse,
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
            let groups = cfg.batch as u64;
            if groups > 32768 * 65535 {
                return Err(Error::Limit(format!(
                    "fft: --batch {} is above the dispatch limit of {} workgroups",
                    cfg.batch,
                    32768u64 * 65535
                )));
            }
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
    ) -> Result<Option<fast::FastConfig>> {
        if trace || self.kernel == Kernel::Teaching {
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

    fn try_radix(&self, cfg: &Config, gpu: &Gpu) -> Result<fast::FastConfig> {
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
            |g, max_bytes| fast::FastConfig::radix(cfg.n, cfg.e, g, s, cfg.inverse, max_bytes),
            |g| cfg.n * g * 8,
        )
    }

    fn try_fast(&self, cfg: &Config, gpu: &Gpu) -> Result<fast::FastConfig> {
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
            fast::FastConfig::new(
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
                fast::FastConfig {
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
    fn fit_groups(
        &self,
        cfg: &Config,
        gpu: &Gpu,
        kernel: &str,
        default_g: usize,
        build: impl Fn(usize, usize) -> Option<fast::FastConfig>,
        need: impl Fn(usize) -> usize,
    ) -> Result<fast::FastConfig> {
        if cfg.e > fast::MAX_E {
            return Err(Error::Input(format!(
                "fft: --kernel {kernel} unrolls at most E = {} elements per invocation; got {}",
                fast::MAX_E,
                cfg.e
            )));
        }
        let l = &gpu.limits;
        let max_threads = (l.max_compute_invocations_per_workgroup as usize)
            .min(l.max_compute_workgroup_size_x as usize);
        let max_bytes = l.max_compute_workgroup_storage_size as usize;
        let make = |g: usize| -> Result<fast::FastConfig> {
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
        let groups = cfg.batch.div_ceil(f.g * f.s) as u64;
        if groups > 32768 * 65535 {
            return Err(Error::Limit(format!(
                "fft: --batch {} needs {groups} workgroups, above the dispatch limit of {}",
                cfg.batch,
                32768u64 * 65535
            )));
        }
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

/// Twiddles w[k] = exp(∓2πik/N), k < N/2, in f64 rounded to f32 (conjugated for the inverse).
fn twiddles(n: usize, inverse: bool) -> Vec<u32> {
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut v = Vec::with_capacity(n);
    for k in 0..(n / 2).max(1) {
        let a = sign * std::f64::consts::TAU * k as f64 / n as f64;
        v.push((a.cos() as f32).to_bits());
        v.push((a.sin() as f32).to_bits());
    }
    v
}

/// The WGSL for a configuration.
pub fn shader_source(cfg: &Config, trace: bool) -> String {
    let load = if cfg.mode == Mode::Real {
        "v[j] = vec2<f32>(src[b * N + x], 0.0);"
    } else {
        "v[j] = src[b * N + x];"
    };
    let store = match cfg.mode {
        Mode::Complex => {
            "for (var j = 0u; j < E; j++) {
        let x = t + j * W;
        var k = x;
        if (NATURAL) { k = F(x); }
        dst[b * N + k] = v[j];
    }"
        }
        Mode::Real => {
            "// Keep the even elements (slots 0, 2, 4, …): compact index c = t + m*W. Thread 0's
    // second element (raw position W) is the Nyquist term: packed into element 0.
    for (var m = 0u; m < HALF_E; m++) {
        let c = t + m * W;
        var val = v[2u * m];
        if (c == 0u) { val = vec2<f32>(v[0].x, v[1].x); }
        var k = c;
        if (NATURAL) { k = rev(c, LOGN - 1u); }
        dst[b * (N / 2u) + k] = val;
    }"
        }
        Mode::Pair => {
            "// Unpack x + iy in raw order: out_x[T] = (z[T] + conj z[P]) / 2,
    // out_y[T] = (z[T] - conj z[P]) / 2i with P = F_inv(-F(T)).
    for (var j = 0u; j < E; j++) {
        sre[t + j * W] = v[j].x;
        sim[t + j * W] = v[j].y;
    }
    workgroupBarrier();
    for (var j = 0u; j < E; j++) {
        let x = t + j * W;
        let f = F(x);
        let p = F_inv((N - f) & (N - 1u));
        let zp = vec2<f32>(sre[p], -sim[p]);
        let z = v[j];
        let xs = 0.5 * (z + zp);
        let d = z - zp;
        let ys = 0.5 * vec2<f32>(d.y, -d.x);
        if (NATURAL) {
            if (f <= N / 2u) {
                let l = N / 2u + 1u;
                dst[b * 2u * l + f] = xs;
                dst[b * 2u * l + l + f] = ys;
            }
        } else {
            dst[b * 2u * N + x] = xs;
            dst[b * 2u * N + N + x] = ys;
        }
    }"
        }
    };
    let sh = cfg.shared_len();
    let (decl, pos_out, pos_in) = if trace {
        (
            format!(
                "@group(0) @binding(4) var<storage, read_write> trace_buf: array<u32>;
var<workgroup> spos: array<u32, {sh}>;
var<private> tracing: bool;
// One record per (step, logical position): re, im, owner thread, lo (1) / hi (0).
fn tr(stage: u32, p: u32, val: vec2<f32>, owner: u32, lo: bool) {{
    if (!tracing) {{ return; }}
    let i = (stage * N + p) * 4u;
    trace_buf[i] = bitcast<u32>(val.x);
    trace_buf[i + 1u] = bitcast<u32>(val.y);
    trace_buf[i + 2u] = owner;
    trace_buf[i + 3u] = select(0u, 1u, lo);
}}"
            ),
            "spos[m * W + t] = pos[out_slot];",
            "pos[in_slot] = spos[m * W + partner];",
        )
    } else {
        (
            "fn tr(stage: u32, p: u32, val: vec2<f32>, owner: u32, lo: bool) {}".to_string(),
            "",
            "",
        )
    };
    let mut src = specialize(
        SHADER,
        &[
            ("N", cfg.n.to_string()),
            ("E", cfg.e.to_string()),
            ("W", cfg.w.to_string()),
            ("LOGN", cfg.log_n.to_string()),
            ("LOGE", cfg.log_e.to_string()),
            ("HALF_E", (cfg.e / 2).to_string()),
            (
                "MODE",
                match cfg.mode {
                    Mode::Complex => "0",
                    Mode::Real => "1",
                    Mode::Pair => "2",
                }
                .to_string(),
            ),
            ("NATURAL", cfg.natural.to_string()),
            ("SH", sh.to_string()),
            (
                "SRC_T",
                if cfg.mode == Mode::Real {
                    "f32"
                } else {
                    "vec2<f32>"
                }
                .to_string(),
            ),
            ("TRACE_DECL", decl),
            ("TRACE_POS_OUT", pos_out.to_string()),
            ("TRACE_POS_IN", pos_in.to_string()),
            ("LOAD", load.to_string()),
            ("STORE", store.to_string()),
        ],
    );
    if trace {
        src = src.replace(
            "if (b >= params.batch) { return; }",
            "if (b >= params.batch) { return; }\n    tracing = b == 0u;",
        );
    }
    src.replace("{{TRACE}}", "tr")
}

/// The plan: one dispatch of `batch` workgroups. Returns the plan and the trace buffer (if any).
pub fn plan(
    gpu: &Gpu,
    cfg: &Config,
    fast: Option<&fast::FastConfig>,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
    trace: bool,
) -> Result<(Plan, Option<wgpu::Buffer>)> {
    if let Some(f) = fast {
        return Ok((plan_fast(gpu, cfg, f, src, dst)?, None));
    }
    let source = shader_source(cfg, trace);
    let p = gpu.pipeline("fft", &source, "main")?;
    let tw = gpu.storage_init("fft twiddles", &twiddles(cfg.n, cfg.inverse))?;
    let u = gpu.uniform("fft params", &[cfg.batch as u32])?;
    let tbuf = if trace {
        Some(gpu.storage_poisoned("fft trace", cfg.trace_stages() * cfg.n * 4, u32::MAX)?)
    } else {
        None
    };
    let mut bufs: Vec<&wgpu::Buffer> = vec![src, dst, &tw, &u];
    if let Some(t) = &tbuf {
        bufs.push(t);
    }
    let bg = gpu.bind(&p, &bufs)?;
    let mut plan = Plan::default();
    let label = format!(
        "fft N={} E={} W={} ×{}{}{}",
        cfg.n,
        cfg.e,
        cfg.w,
        cfg.batch,
        match cfg.mode {
            Mode::Complex => "",
            Mode::Real => " real",
            Mode::Pair => " real-pair",
        },
        if cfg.inverse { " inverse" } else { "" }
    );
    let pass = plan.push(label, &p, bg, grid(cfg.batch as u32));
    if let Some(t) = &tbuf {
        pass.capture = vec![Region::whole(t)];
    }
    plan.keep.extend([tw, u]);
    Ok((plan, tbuf))
}

/// The fast or radix kernel's plan: one dispatch of ⌈batch / (G·S)⌉ workgroups.
fn plan_fast(
    gpu: &Gpu,
    cfg: &Config,
    f: &fast::FastConfig,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
) -> Result<Plan> {
    let p = gpu.pipeline("fft fast", &fast::shader(f), "main")?;
    let tw = gpu.storage_init("fft twiddles", &twiddles(cfg.n, cfg.inverse))?;
    let groups = cfg.batch.div_ceil(f.g * f.s);
    let u = gpu.uniform(
        "fft params",
        &[cfg.batch as u32, groups as u32, (cfg.batch * cfg.n) as u32],
    )?;
    let bg = gpu.bind(&p, &[src, dst, &tw, &u])?;
    let mut plan = Plan::default();
    let label = format!(
        "fft {} N={} E={} W={} G={}{} ×{}{}",
        if f.radix { "radix" } else { "fast" },
        cfg.n,
        cfg.e,
        cfg.w,
        f.g,
        if f.s > 1 {
            format!(" S={}", f.s)
        } else {
            String::new()
        },
        cfg.batch,
        if cfg.inverse { " inverse" } else { "" }
    );
    plan.push(label, &p, bg, grid(groups as u32));
    plan.keep.extend([tw, u]);
    Ok(plan)
}

fn complexes(bits: &[u32]) -> Vec<C64> {
    bits.chunks_exact(2)
        .map(|c| C64::new(f32::from_bits(c[0]) as f64, f32::from_bits(c[1]) as f64))
        .collect()
}

/// The reference output of one FFT (batch element) in the kernel's output layout.
pub fn reference(cfg: &Config, input_floats: &[f32]) -> Vec<C64> {
    let n = cfg.n;
    let x: Vec<C64> = if cfg.mode == Mode::Real {
        input_floats
            .iter()
            .map(|&r| C64::new(r as f64, 0.0))
            .collect()
    } else {
        input_floats
            .chunks_exact(2)
            .map(|c| C64::new(c[0] as f64, c[1] as f64))
            .collect()
    };
    match cfg.mode {
        Mode::Complex => {
            let d = model::dft(&x, cfg.inverse);
            if cfg.natural {
                d
            } else {
                model::to_raw(&d, cfg.e)
            }
        }
        Mode::Real => {
            let d = model::dft(&x, cfg.inverse);
            if cfg.natural {
                model::real_natural(&d)
            } else {
                model::real_raw(&d, cfg.e)
            }
        }
        Mode::Pair => {
            let (mut dx, mut dy) = model::pair_spectra(&x);
            if cfg.inverse {
                // The inverse of a real signal is the conjugate-reversed forward transform.
                let (ix, iy): (Vec<C64>, Vec<C64>) = {
                    let xs: Vec<C64> = x.iter().map(|z| C64::new(z.re, 0.0)).collect();
                    let ys: Vec<C64> = x.iter().map(|z| C64::new(z.im, 0.0)).collect();
                    (model::dft(&xs, true), model::dft(&ys, true))
                };
                dx = ix;
                dy = iy;
            }
            if cfg.natural {
                let l = n / 2 + 1;
                dx.truncate(l);
                dy.truncate(l);
            } else {
                dx = model::to_raw(&dx, cfg.e);
                dy = model::to_raw(&dy, cfg.e);
            }
            dx.extend(dy);
            dx
        }
    }
}

impl Algorithm for Options {
    fn info(&self) -> &'static AlgoInfo {
        &INFO
    }

    /// The generated signal (--signal) of --size points (× --batch).
    fn example(&self, _dtype: DType) -> Option<Data> {
        let n = self.size.unwrap_or(DEFAULT_SIZE);
        Some(self.signal_data(n))
    }

    fn fixed_dtype(&self) -> Option<DType> {
        Some(DType::F32)
    }

    fn default_len(&self) -> Option<usize> {
        let n = self.size.unwrap_or(DEFAULT_SIZE);
        Some(n * self.points_per_float() * self.batch.max(1))
    }

    /// Checks the parameters only: the input length is checked against them in `run` (and in
    /// `bench`, `n` counts complex values, not input numbers).
    fn check_len(&self, _len: usize) -> Result<()> {
        self.config(None, None, false).map(|_| ())
    }

    fn run(&self, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
        // Input numbers as f32 whatever their dtype (u32/i32 values converted numerically).
        let floats: Vec<f32> = (0..req.input.len())
            .map(|i| req.input.as_f64(i) as f32)
            .collect();
        let input = Data::from_f32(&floats);
        let cfg = self.config(Some(floats.len()), Some(&gpu.limits), req.trace)?;
        let (n, b) = (cfg.n, cfg.batch);
        let src = gpu.storage_init("fft input", &input.bits)?;
        let out_words = 2 * cfg.out_complex() * b;
        let dst = gpu.storage_poisoned("fft output", out_words, POISON)?;
        let fast_cfg = self.fast_config(&cfg, gpu, req.trace)?;
        let (mut plan, tbuf) = plan(gpu, &cfg, fast_cfg.as_ref(), &src, &dst, req.trace)?;
        plan.output = Some(Region::words(&dst, out_words));
        plan.keep.push(src);
        drop(tbuf);
        let ex = execute(gpu, &plan, req.trace)?;
        let out_bits = ex.output;

        // Check every FFT of the batch against rustfft (f64), in the kernel's output layout.
        let tol = model::tolerance(n);
        let per_in = cfg.in_floats();
        let per_out = cfg.out_complex();
        let gpu_c = complexes(&out_bits);
        let mut max_err: f64 = 0.0;
        let mut mismatch = None;
        for k in 0..b {
            let want = reference(&cfg, &floats[k * per_in..(k + 1) * per_in]);
            let got = &gpu_c[k * per_out..(k + 1) * per_out];
            let err = model::rel_error(got, &want);
            max_err = max_err.max(err);
            if (err.is_nan() || err > tol) && mismatch.is_none() {
                let bad = got
                    .iter()
                    .zip(&want)
                    .enumerate()
                    .max_by(|a, b2| (a.1.0 - a.1.1).norm().total_cmp(&(b2.1.0 - b2.1.1).norm()))
                    .map(|(i, (g, w))| format!("worst at index {i}: GPU {g} vs reference {w}"))
                    .unwrap_or_default();
                mismatch = Some(format!(
                    "FFT {k} of the batch: relative error {err:.3e} above the tolerance {tol:.1e}; {bad}"
                ));
            }
        }

        // Trace: one stage per step, values by logical position, owner + lo written by the GPU.
        let mut stages = Vec::new();
        let steps = model::schedule(n, cfg.e);
        if req.trace {
            let words = ex
                .captures
                .iter()
                .flat_map(|c| c.first())
                .next()
                .cloned()
                .unwrap_or_default();
            let x0: Vec<C64> = if cfg.mode == Mode::Real {
                floats[..n]
                    .iter()
                    .map(|&r| C64::new(r as f64, 0.0))
                    .collect()
            } else {
                complexes(&input.bits[..2 * n])
            };
            let values = model::stage_values(&x0, cfg.e, cfg.inverse);
            for (s, step) in steps.iter().enumerate() {
                let rec = words.get(s * n * 4..(s + 1) * n * 4).unwrap_or(&[]);
                let mut data = Vec::with_capacity(2 * n);
                let mut owner = Vec::with_capacity(n);
                let mut lo = Vec::with_capacity(n);
                for p in 0..n {
                    let r =
                        rec.get(p * 4..p * 4 + 4)
                            .unwrap_or(&[POISON, POISON, u32::MAX, u32::MAX]);
                    data.extend([r[0], r[1]]);
                    owner.push(r[2]);
                    lo.push(r[3] == 1);
                }
                if mismatch.is_none() {
                    if owner != step.owner || rec.chunks_exact(4).any(|r| r[3] > 1) {
                        let p = (0..n).find(|&p| owner[p] != step.owner[p]).unwrap_or(0);
                        mismatch = Some(format!(
                            "trace step {s} ({}): position {p} held by thread {} on the GPU, {} in the model",
                            step.kind.name(),
                            owner[p] as i64,
                            step.owner[p]
                        ));
                    } else if lo != step.lo {
                        let p = (0..n).find(|&p| lo[p] != step.lo[p]).unwrap_or(0);
                        mismatch = Some(format!(
                            "trace step {s} ({}): position {p} is {} on the GPU, {} in the model",
                            step.kind.name(),
                            if lo[p] { "lo" } else { "hi" },
                            if step.lo[p] { "lo" } else { "hi" }
                        ));
                    } else {
                        let err = model::rel_error(&complexes(&data), &values[s]);
                        if err.is_nan() || err > tol {
                            mismatch = Some(format!(
                                "trace step {s} ({}): values differ from the model by {err:.3e} (tolerance {tol:.1e})",
                                step.kind.name()
                            ));
                        }
                    }
                }
                let label = match step.kind {
                    StepKind::Input => "input".to_string(),
                    StepKind::Butterfly => format!("butterfly, stride {}", step.stride),
                    StepKind::Regroup => format!("regroup (local), stride {}", step.stride),
                    StepKind::Exchange => format!("exchange t^{}", step.stride),
                };
                let last = s + 1 == steps.len();
                // Row p (logical position) holds DFT[bitrev(p)] and is written to e(p).
                let notes = trace::Notes {
                    step: s,
                    kind: step.kind,
                    stride: step.stride,
                    owner: owner.clone(),
                    lo: lo.clone(),
                    complex: true,
                    xor: (step.kind == StepKind::Exchange).then_some(step.stride),
                    dft_index: last.then(|| (0..n).map(|p| model::bitrev(p, cfg.log_n)).collect()),
                    written_to: last.then(|| {
                        (0..n)
                            .map(|p| model::e_map(p, cfg.log_n, cfg.log_e))
                            .collect()
                    }),
                };
                let st = Stage::with(
                    label,
                    Data::new(DType::F32, data.clone()),
                    RoomNotes::Fft(notes),
                );
                stages.push(st);
            }
        }

        let output_json = match cfg.mode {
            Mode::Pair => {
                let half = per_out / 2;
                let objs: Vec<Value> = (0..b)
                    .map(|k| {
                        let base = 2 * k * per_out;
                        json!({
                            "x": trace::complex_json(&out_bits[base..base + 2 * half]),
                            "y": trace::complex_json(&out_bits[base + 2 * half..base + 4 * half]),
                        })
                    })
                    .collect();
                if b == 1 {
                    objs.into_iter().next().unwrap_or(Value::Null)
                } else {
                    Value::Array(objs)
                }
            }
            _ => trace::complex_json(&out_bits),
        };
        let holds: Vec<usize> = (0..n)
            .map(|x| model::f_map(x, cfg.log_n, cfg.log_e))
            .collect();
        let nyq_value = match (cfg.mode, cfg.natural) {
            (Mode::Complex, false) => Some(cfg.w),
            (Mode::Complex, true) => Some(n / 2),
            _ => None,
        }
        .map(|i| trace::complex_json(&out_bits[2 * i..2 * i + 2])[0].clone());
        let mut nyquist = json!({
            "frequency": n / 2,
            "thread": 0,
            "element": 1,
            "raw_position": cfg.w,
            "rule": "F(W) = bitreverse(e⁻¹(W)) = bitreverse(1) = N/2: thread 0's second element",
        });
        if let Some(v) = nyq_value {
            nyquist["value"] = v;
        }
        if cfg.mode == Mode::Real {
            nyquist["packed_into"] = json!("output[0] = DC + i*Nyquist (both real)");
            nyquist["value"] = json!([f32_to_json(f32::from_bits(out_bits[1])), 0.0]);
        }
        let mut extra = Map::new();
        extra.insert("size".into(), json!(n));
        extra.insert("elements_per_invocation".into(), json!(cfg.e));
        extra.insert("workgroup_size".into(), json!(cfg.w));
        extra.insert("batch".into(), json!(b));
        extra.insert(
            "order".into(),
            json!(if cfg.natural { "natural" } else { "raw" }),
        );
        extra.insert("inverse".into(), json!(cfg.inverse));
        extra.insert(
            "mode".into(),
            json!(match cfg.mode {
                Mode::Complex => "complex",
                Mode::Real => "real",
                Mode::Pair => "real-pair",
            }),
        );
        extra.insert("max_rel_error".into(), json!(max_err));
        extra.insert("tolerance".into(), json!(tol));
        extra.insert("holds".into(), json!(holds));
        extra.insert("nyquist".into(), nyquist);
        extra.insert(
            "scaling".into(),
            json!(if cfg.inverse {
                "unnormalised inverse: x[n] = Σ X[k]·e^{+2πikn/N}; inverse(forward(x)) = N·x"
            } else {
                "forward: X[k] = Σ x[n]·e^{−2πikn/N} (no scaling)"
            }),
        );
        extra.insert(
            "workgroup_bytes".into(),
            json!(match &fast_cfg {
                Some(f) => f.shared_bytes(),
                None => cfg.shared_bytes(req.trace),
            }),
        );
        extra.insert(
            "kernel".into(),
            json!(match fast_cfg {
                Some(f) if f.radix => "radix",
                Some(_) => "fast",
                None => "teaching",
            }),
        );
        extra.insert(
            "ffts_per_workgroup".into(),
            json!(fast_cfg.map_or(1, |f| f.g)),
        );
        extra.insert("sequential_ffts".into(), json!(fast_cfg.map_or(1, |f| f.s)));
        extra.insert(
            "natural_store".into(),
            json!(match fast_cfg {
                Some(f) if f.radix => None,
                Some(f) if f.natural && f.staged => Some("staged"),
                Some(f) if f.natural => Some("direct"),
                _ => None,
            }),
        );
        extra.insert(
            "shuffle_below".into(),
            json!(fast_cfg.map_or(0, |f| f.shuffle_below)),
        );
        Ok(RunResult {
            algorithm: "fft".into(),
            variant: req.variant.name.into(),
            dtype: DType::F32,
            n,
            adapter: gpu.adapter_name(),
            input,
            output: Data::new(DType::F32, out_bits),
            output_json: Some(output_json),
            passes: pass_infos(&plan, &ex.pass_ms),
            verified: mismatch.is_none(),
            mismatch,
            stages,
            extra,
        })
    }

    /// `n` is the total number of complex values; --size (default 1024) is the FFT size, so the
    /// batch is n / size. Forward, --order as given; the floor is one read and one write of every
    /// 8-byte complex value: 16·n bytes.
    fn bench_case(
        &self,
        gpu: &Gpu,
        _variant: &Variant,
        n: usize,
        _dtype: DType,
    ) -> Result<BenchCase> {
        let size = self.size.unwrap_or(1024);
        if n < size || !n.is_multiple_of(size) {
            return Err(Error::Input(format!(
                "fft bench: {n} complex values is not a whole number of FFTs of --size {size}"
            )));
        }
        let mut o = self.clone();
        o.size = Some(size);
        o.batch = n / size;
        o.real = false;
        o.real_pair = false;
        let cfg = o.config(Some(2 * n), Some(&gpu.limits), false)?;
        let src = gpu.storage_zeroed("fft input", 2 * n)?;
        let dst = gpu.storage_zeroed("fft output", 2 * n)?;
        let fast_cfg = o.fast_config(&cfg, gpu, false)?;
        let (mut plan, _) = plan(gpu, &cfg, fast_cfg.as_ref(), &src, &dst, false)?;
        plan.keep.extend([src, dst]);
        Ok(BenchCase {
            plan,
            bytes: 16 * n as u64,
            items: n as u64,
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (16, 22)
    }
}
