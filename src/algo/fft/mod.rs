//! Nabla-style workgroup FFT (seed 003): one workgroup per FFT of N = WorkgroupSize ×
//! ElementsPerInvocation complex f32 points, radix-2 butterflies in registers, exchanges by xor
//! through workgroup memory, output in raw (Nabla) order or in natural order through F(n) =
//! bitreverse(e⁻¹(n)); real-pair unpacking and a real-only FFT by the seed's rules.

pub mod codegen;
pub mod facts;
pub mod fast;
/// The most elements one invocation holds (8 KiB of complex f32 in private memory). At 2048 an
/// H200's driver (580.159) fails to build the kernel and the device is lost.
pub const MAX_ELEMENTS_PER_INVOCATION: usize = 1024;

pub mod large;
pub mod large_chain;
pub mod large_gen;
mod large_l2;
mod large_layout;
pub mod large_plan;
pub mod large_unpack;
pub mod large_wgsl;
pub mod model;
pub mod radix;
pub mod trace;
pub mod trig;

mod large_run;
mod options;
mod plan;
mod run;
mod tune;

use self::plan::*;
pub use self::plan::{plan, shader_source};
pub use run::reference;

use super::{
    AlgoInfo, Algorithm, BenchCase, RoomNotes, Run, RunFacts, RunRequest, RunResult, Stage, Task,
    VariantInfo, pass_infos,
};
use crate::data::{DType, Data, f32_to_json};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan, Region, execute, grid, specialize};
use facts::Nyquist;
use model::{C64, StepKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

variants! {
    Workgroup = "workgroup": "one workgroup per FFT: registers + xor exchanges through workgroup memory",
}

static INFO: AlgoInfo = AlgoInfo {
    name: "fft",
    title: "FFT (Nabla workgroup FFT)",
    summary: "Complex f32 FFT of size 2^k in one workgroup: WorkgroupSize threads × ElementsPerInvocation elements, xor exchanges, raw (Nabla) or natural order, real-pair and real-only modes.",
    variants: Variant::INFO,
    dtypes: &[DType::F32],
    seed: "003",
};

const SHADER: &str = include_str!("../../../shaders/fft/fft.wgsl");
/// A NaN with a recognisable payload: unwritten outputs show.
pub const POISON: u32 = 0x7FC0_DEAD;
/// Default FFT size when neither --size nor an input length says otherwise.
pub const DEFAULT_SIZE: usize = 16;

/// Output order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Raw,
    #[default]
    Natural,
}

impl crate::algo::Choice for Order {
    const ALL: &'static [Order] = &[Order::Raw, Order::Natural];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "raw",
            "The order the GPU writes: every thread writes to the indices it read (output[x] = \
             DFT[F(x)])",
        ),
        (
            "natural",
            "The DFT's order, written by the GPU through F(x) = bitreverse(e⁻¹(x))",
        ),
    ];
}

/// Which kernel runs the FFT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    #[default]
    Auto,
    Fast,
    Teaching,
    Radix,
    Large,
}

impl crate::algo::Choice for Kernel {
    const ALL: &'static [Kernel] = &[
        Kernel::Auto,
        Kernel::Fast,
        Kernel::Teaching,
        Kernel::Radix,
        Kernel::Large,
    ];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "auto",
            "Not tracing, complex: radix in natural order, fast in raw order (where the \
             configuration fits); else teaching",
        ),
        (
            "fast",
            "The generated straight-line kernel (src/algo/fft/fast.rs): complex FFTs only",
        ),
        (
            "teaching",
            "The teaching kernel (shaders/fft/fft.wgsl): every mode, writes the trace",
        ),
        (
            "radix",
            "Not the seed's schedule: rounds of log2(E) stages in registers, written back in place \
             to workgroup memory between rounds (src/algo/fft/radix.rs); complex FFTs in natural \
             order",
        ),
        (
            "large",
            "The large-FFT passes (src/algo/fft/large.rs) at any size: what `auto` runs past one \
             workgroup; here also below it (e.g. to see a small FFT as columns then rows)",
        ),
    ];
}

/// How the fast kernel writes natural order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NaturalStore {
    Direct,
    #[default]
    Staged,
}

impl crate::algo::Choice for NaturalStore {
    const ALL: &'static [NaturalStore] = &[NaturalStore::Direct, NaturalStore::Staged];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "direct",
            "Straight from registers: each thread's outputs are runs of E/2 consecutive values, \
             stored as 16-byte pairs (no staging memory, no extra barrier). Slower on the H100 \
             (1024: 1.19 ms against 0.84 ms staged): 16-byte stores spread over a warp cost more \
             than staging",
        ),
        (
            "staged",
            "Through padded workgroup memory (G·N values), so consecutive threads store \
             consecutive values. The default (the H100's faster)",
        ),
    ];
}

/// Where the large plan keeps a pass's values in workgroup memory between rounds
/// (src/algo/fft/large_layout.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExchangeLayout {
    #[default]
    Auto,
    Padded,
    Swizzled,
}

impl crate::algo::Choice for ExchangeLayout {
    const ALL: &'static [ExchangeLayout] = &[
        ExchangeLayout::Auto,
        ExchangeLayout::Padded,
        ExchangeLayout::Swizzled,
    ];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "auto",
            "The bank-conflict model's choice: padding, or a swizzle where it conflicts less \
             (passes that exchange in parts through 2048 points or more, at two lanes or more; \
             on the H100 it paid at four). The default",
        ),
        (
            "padded",
            "A word of padding every 2^k values (the array a little over its values): the \
             padding's offset folds into each access",
        ),
        (
            "swizzled",
            "Bank bits XORed with higher index bits, conflict-free, in an array of exactly its \
             values (one XOR an access), in every pass that exchanges in parts through 2048 \
             points or more; refused where no pass does. Where padding pushes the array past a \
             share of the SM's workgroup memory this keeps one more workgroup resident if \
             registers allow: 4096 points in halves, one FFT at a time, on the H200 0.524 ms \
             against 0.609 padded (docs/perf/fft.md)",
        ),
    ];
}

/// The generated signal (used when no --input/--n is given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Signal {
    Impulse,
    #[default]
    Sines,
    Square,
    Noise,
    TwoReal,
}

impl crate::algo::Choice for Signal {
    const ALL: &'static [Signal] = &[
        Signal::Impulse,
        Signal::Sines,
        Signal::Square,
        Signal::Noise,
        Signal::TwoReal,
    ];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        ("impulse", "1 at n = 0"),
        (
            "sines",
            "cos(2π·3n/N) + 0.5·sin(2π·5n/N) (+ i·0.25·cos(2π·2n/N) for complex input)",
        ),
        ("square", "±1 with period N/4"),
        ("noise", "Uniform noise in [-1, 1) from a fixed seed"),
        (
            "two-real",
            "Two real signals (x = sines, y = square) packed as x + iy (for --real-pair)",
        ),
    ];
}

/// The options' help: the CLI's for each flag (src/cli) and the app's tooltip for each control.
pub mod help {
    pub const SIZE: &str = "FFT size N (complex points), a power of two ≥ 2. Default: the input length / batch (2 \
         numbers per point; 1 with --real), or 16 for generated input";
    pub const ELEMENTS_PER_INVOCATION: &str = "ElementsPerInvocation E: a power of two ≥ 2 with E · WorkgroupSize = N. Default: N / \
         --workgroup-size, else max(2, min(N/32, 8 below N = 1024, 16 from it)) raised until N/E \
         fits the adapter (256: 8, 1024: 16, 4096: 16)";
    pub const WORKGROUP_SIZE: &str = "WorkgroupSize W (threads per FFT). Default: N / E";
    pub const ORDER: &str =
        "Output order: raw (as the GPU writes, Nabla order) or natural (DFT order)";
    pub const INVERSE: &str =
        "Unnormalised inverse FFT: x[n] = Σ X[k] e^{+2πikn/N} (inverse(forward(x)) = N·x)";
    pub const REAL: &str = "Real-only FFT: N real inputs; keeps the seed's \"even\" elements (N/2 bins), DC + \
         i·Nyquist packed into element 0";
    pub const REAL_PAIR: &str = "Two real signals packed as x + iy (input pairs [x, y]); outputs {\"x\": spectrum, \"y\": \
         spectrum}";
    pub const BATCH: &str = "B independent FFTs in one dispatch (one workgroup each; input = B signals one after \
         another)";
    pub const SIGNAL: &str = "Generated signal when no --input/--n is given";
    pub const KERNEL: &str = "Kernel: auto (untraced complex FFTs: radix in natural order, fast in raw order; else \
         teaching), fast (the seed's schedule, straight-line), teaching (every mode, writes the \
         trace), radix (natural order only: rounds of log2 E stages in registers with \
         workgroup-memory round trips between them, not the seed's exchanges), large (the passes \
         past one workgroup, at any size)";
    pub const FFTS_PER_WORKGROUP: &str = "Fast and radix kernels: G FFTs per workgroup (W·G threads). Default: fast 128 / W, radix \
         1024 / N (at least 1), at most the batch rounded up to a power of two, halved until it \
         fits the adapter";
    pub const SEQUENTIAL_FFTS: &str = "Radix kernel: S FFTs every thread group runs one after another (a loop; the next FFT's \
         loads fly while the current one computes), so a workgroup does G·S FFTs. Default: 4 from \
         size 2048 when the batch has at least 4096 FFTs (measured on an H100), else 1; at most 1024";
    pub const NO_SHUFFLE: &str =
        "Fast kernel: every exchange through workgroup memory (no subgroupShuffleXor)";
    pub const NATURAL_STORE: &str = "Fast kernel, natural order: direct (16-byte stores of each thread's runs straight from \
         registers) or staged (through workgroup memory, coalesced across threads)";
    pub const SPLIT: &str = "Large FFTs: N1, the size of the first pass's column FFTs (N = N1 · N2, both at most \
         8192; chained columns up to 8192²). Default: one pass where a whole FFT fits a workgroup \
         (in halves), else N1 = 2^⌊log2 N / 2⌋ (2^23: 4096; 2^24 with its columns chained, the \
         default on a GPU: 16384; real input whose complex FFT has 2^16 – 2^20 points: N1 = \
         N/256, for 256-point rows)";
    pub const EXCHANGE_PARTS: &str = "Large FFTs: exchange through workgroup memory in P parts (1: complex values; 2: real, \
         then imaginary parts; 4, 8: each of those by halves or quarters of the positions), \
         dividing the memory a workgroup needs by P. Default: the fewest that fit. With the \
         columns pass chained, P is the rows pass's";
    pub const EXCHANGE_LAYOUT: &str = "Large FFTs: how a pass lays out its values in workgroup memory between rounds \
         (bank conflicts against memory a workgroup)";
    pub const PHASE_SPLIT: &str = "Large FFTs: every pass's M-point sub-FFTs (the whole FFT where one pass runs it) as two \
         phases Ma × M/Ma in one dispatch, the intermediate left in the pass's output buffer (in \
         L2) between them instead of passing through workgroup memory. Opt-in: no default uses it \
         (slower on the H100 so far; docs/perf/fft.md)";
    pub const PHASE_LANES: &str = "Large FFTs through L2 (--phase-split): sub-FFTs side by side in the second phase (its \
         lanes; both phases take the same threads). Default: 512 threads (one sub-FFT where one \
         alone needs more), halved until phase 1 fits in two exchange parts";
    pub const CHAIN: &str = "Large FFTs through L2 over whole FFTs: both phases in one dispatch but in workgroups of \
         their own — phase 0's of FFT f take tickets L FFTs ahead of phase 1's, which wait on f's \
         counter — so each phase keeps its normal shape (16 lanes, S in turn) and the \
         intermediate stays in L2. L = 0 turns it off. With --split, or past 2^20 points, the \
         columns pass is chained instead: units of --ffts-per-workgroup C neighbouring columns \
         (default 16), L units behind. Default: chained at 2^15 – 2^18 points (real input: 2^16 \
         and 2^17 reals) with L = 8 MiB of FFTs (real: 6 MiB), and the columns pass at 2^24 (8 \
         MiB of units), else off; CPU adapters (lavapipe) and adapters without subgroups do not \
         chain and refuse it (docs/perf/fft.md)";

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("size", SIZE),
        ("elements_per_invocation", ELEMENTS_PER_INVOCATION),
        ("workgroup_size", WORKGROUP_SIZE),
        ("order", ORDER),
        ("inverse", INVERSE),
        ("real", REAL),
        ("real_pair", REAL_PAIR),
        ("batch", BATCH),
        ("signal", SIGNAL),
        ("kernel", KERNEL),
        ("ffts_per_workgroup", FFTS_PER_WORKGROUP),
        ("sequential_ffts", SEQUENTIAL_FFTS),
        ("no_shuffle", NO_SHUFFLE),
        ("natural_store", NATURAL_STORE),
        ("split", SPLIT),
        ("exchange_parts", EXCHANGE_PARTS),
        ("exchange_layout", EXCHANGE_LAYOUT),
        ("phase_split", PHASE_SPLIT),
        ("phase_lanes", PHASE_LANES),
        ("chain", CHAIN),
    ];

    /// The values of each closed-set option.
    pub const VALUE_SETS: crate::algo::OptionValues = &[
        ("order", <super::Order as crate::algo::Choice>::CHOICES),
        ("signal", <super::Signal as crate::algo::Choice>::CHOICES),
        ("kernel", <super::Kernel as crate::algo::Choice>::CHOICES),
        (
            "natural_store",
            <super::NaturalStore as crate::algo::Choice>::CHOICES,
        ),
        (
            "exchange_layout",
            <super::ExchangeLayout as crate::algo::Choice>::CHOICES,
        ),
    ];
}

/// `--sequential-ffts` at most: FFTs a workgroup runs one after another.
pub const MAX_SEQUENTIAL_FFTS: usize = 1024;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub size: Option<usize>,
    pub elements_per_invocation: Option<usize>,
    pub workgroup_size: Option<usize>,
    pub order: Order,
    pub inverse: bool,
    pub real: bool,
    pub real_pair: bool,
    pub batch: usize,
    pub signal: Signal,
    pub kernel: Kernel,
    pub ffts_per_workgroup: Option<usize>,
    pub sequential_ffts: Option<usize>,
    pub no_shuffle: bool,
    pub natural_store: NaturalStore,
    pub split: Option<usize>,
    pub exchange_parts: Option<usize>,
    pub exchange_layout: ExchangeLayout,
    pub phase_split: Option<usize>,
    pub phase_lanes: Option<usize>,
    pub chain: Option<usize>,
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
            split: None,
            exchange_parts: None,
            exchange_layout: ExchangeLayout::Auto,
            phase_split: None,
            phase_lanes: None,
            chain: None,
        }
    }
}

/// What runs: resolved and checked parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Complex,
    Real,
    #[serde(rename = "real-pair")]
    Pair,
}

impl Mode {
    /// As JSON `"mode"` names it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Complex => "complex",
            Mode::Real => "real",
            Mode::Pair => "real-pair",
        }
    }
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
    /// Runs as a large FFT (src/algo/fft/large.rs): past one workgroup, or --kernel large.
    pub large: bool,
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
