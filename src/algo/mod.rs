//! One room per algorithm. Each room has its CPU model (the reference, stage by stage), its GPU
//! runner and its parameters; the small [`Algorithm`] trait connects it to the engine, the CLI and
//! the UI. An algorithm's options struct *is* the algorithm instance: the CLI's flags convert into
//! it (src/cli), the UI edits it, serde saves it in sessions.

// Before the rooms: a macro_rules! macro is visible only below its definition.
/// `Algorithm::info` and `Algorithm::example` of a room whose design note gives an example input:
/// its `AlgoInfo` and that input (`info_and_example!(INFO, EXAMPLE);` inside the impl); of a room
/// without one, `Algorithm::info` alone (`info_and_example!(INFO);`).
macro_rules! info_and_example {
    ($info:ident) => {
        fn info(&self) -> &'static AlgoInfo {
            &$info
        }
    };
    ($info:ident, $example:ident) => {
        info_and_example!($info);

        fn example(&self, dtype: DType) -> Option<Data> {
            Some($crate::data::example_data(&$example, dtype))
        }
    };
}

/// A room's `Variant` enum, each variant spelled as the CLI, the JSON and `stagewise list` spell
/// it (`Display`, `FromStr`, serde), with its summary; the first is the default.
/// `Variant::INFO` is the room's list for its `AlgoInfo`, `Variant::of` the variant a checked
/// request names (its name was parsed against that list by `RunSpec::resolve`).
///
/// Headed by `room "name" (seed "…"): "title", "summary";` it also declares the room's `static
/// INFO` ([`AlgoInfo::new`]: 32-bit elements of every type).
macro_rules! variants {
    (room $room:literal (seed $seed:literal): $title:literal, $about:literal; $($rest:tt)+) => {
        static INFO: $crate::algo::AlgoInfo = $crate::algo::AlgoInfo::new($room, $seed, Variant::INFO)
            .title($title)
            .summary($about);

        variants! { $($rest)+ }
    };
    ($($v:ident = $name:literal: $summary:expr,)+) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Variant {
            $($v,)+
        }

        impl Variant {
            pub const ALL: &'static [Variant] = &[$(Variant::$v,)+];
            pub const INFO: &'static [$crate::algo::VariantInfo] =
                &[$($crate::algo::VariantInfo { name: $name, summary: $summary },)+];

            pub fn name(self) -> &'static str {
                match self {
                    $(Variant::$v => $name,)+
                }
            }

            /// The variant `info` describes (a checked request's; the default for another room's).
            pub fn of(info: &$crate::algo::VariantInfo) -> Variant {
                info.name.parse().unwrap_or(Variant::ALL[0])
            }
        }

        impl std::fmt::Display for Variant {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for Variant {
            type Err = String;
            fn from_str(s: &str) -> std::result::Result<Variant, String> {
                Variant::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| format!("unknown variant '{s}'"))
            }
        }

        impl serde::Serialize for Variant {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for Variant {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Variant, D::Error> {
                let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                name.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub mod applies;
pub mod bitrev;
pub mod bmmc;
pub mod copy;
pub mod drive;
pub mod facts;
pub mod fft;
mod json;
pub mod kernel;
pub mod oddeven;
pub mod radix;
mod result;
pub mod scan;
pub mod stage;
pub mod stream;
pub mod tune;

use crate::data::{DType, Data};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan};
pub use drive::Run;
pub use facts::RunFacts;
pub use result::{OutputJson, PassInfo, RunResult, first_mismatch, pass_infos, verdict};
use serde::{Deserialize, Serialize};
pub use stage::{RoomNotes, Stage, StageNotes};
pub use stream::Stages;

/// What the rooms use from the engine, the data and the errors (`use super::prelude::*;`).
mod prelude {
    pub(super) use super::drive::Run;
    pub(super) use super::{
        Algo, AlgoInfo, Algorithm, BenchCase, RoomNotes, RunFacts, RunRequest, RunResult, Stage,
        Stages, Task, VariantInfo, first_mismatch, require_pow2,
    };
    pub(super) use crate::data::{DType, Data};
    pub(super) use crate::error::{Error, Result};
    pub(super) use crate::gpu::{Gpu, Plan, Region, Running};
}

/// Which room a request or a result belongs to: the typed algorithm name, parsed once from its
/// spelling (`FromStr`, serde) and matched on by the views; written as that name (`Display`,
/// serde), so the JSON's `"algorithm"` string is the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algo {
    Copy,
    Bitrev,
    Bmmc,
    Oddeven,
    Radix,
    Scan,
    Fft,
    Kernel,
}

impl Algo {
    pub const ALL: [Algo; 8] = [
        Algo::Copy,
        Algo::Bitrev,
        Algo::Bmmc,
        Algo::Oddeven,
        Algo::Radix,
        Algo::Scan,
        Algo::Fft,
        Algo::Kernel,
    ];

    /// The name the CLI, the JSON and `stagewise list` use.
    pub const fn name(self) -> &'static str {
        match self {
            Algo::Copy => "copy",
            Algo::Bitrev => "bitrev",
            Algo::Bmmc => "bmmc",
            Algo::Oddeven => "oddeven",
            Algo::Radix => "radix",
            Algo::Scan => "scan",
            Algo::Fft => "fft",
            Algo::Kernel => "kernel",
        }
    }

    /// The name (as [`Algo::name`]; tests and format strings read a result's algorithm so).
    pub const fn as_str(self) -> &'static str {
        self.name()
    }
}

impl std::fmt::Display for Algo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algo {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Algo, String> {
        Algo::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown algorithm '{s}'"))
    }
}

impl PartialEq<str> for Algo {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Algo {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// An option whose values are a closed set: every value with its name (as the CLI, serde and the
/// app spell it) and its help (the CLI's `--help` and the app's menu read both).
pub trait Choice: Copy + PartialEq + 'static {
    const ALL: &'static [Self];
    /// (name, help) of each of [`Choice::ALL`], in its order.
    const CHOICES: &'static [(&'static str, &'static str)];

    /// This value's (name, help).
    fn choice(self) -> (&'static str, &'static str) {
        let i = Self::ALL.iter().position(|v| *v == self).unwrap_or(0);
        Self::CHOICES[i]
    }
}

/// (option, its values' (name, help)) of a room's closed-set options.
pub type OptionValues = &'static [(&'static str, &'static [(&'static str, &'static str)])];

/// A variant of an algorithm (a different kernel or plan).
#[derive(Clone, Copy, Debug)]
pub struct VariantInfo {
    pub name: &'static str,
    pub summary: &'static str,
}

/// What `stagewise list` prints about an algorithm.
#[derive(Debug)]
pub struct AlgoInfo {
    pub name: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    /// The first variant is the default.
    pub variants: &'static [VariantInfo],
    pub dtypes: &'static [DType],
    /// Which design note in `shared/seeds` it comes from.
    pub seed: &'static str,
}

impl AlgoInfo {
    /// A room over 32-bit elements of every type (u32, i32, f32), its title and summary set by
    /// [`AlgoInfo::title`] and [`AlgoInfo::summary`] (a `static` is built in const context).
    pub const fn new(
        name: &'static str,
        seed: &'static str,
        variants: &'static [VariantInfo],
    ) -> Self {
        AlgoInfo {
            name,
            title: "",
            summary: "",
            variants,
            dtypes: &[DType::U32, DType::I32, DType::F32],
            seed,
        }
    }

    pub const fn title(self, title: &'static str) -> Self {
        AlgoInfo { title, ..self }
    }

    pub const fn summary(self, summary: &'static str) -> Self {
        AlgoInfo { summary, ..self }
    }

    pub fn variant(&self, name: Option<&str>) -> Result<&'static VariantInfo> {
        match name {
            None => Ok(&self.variants[0]),
            Some(v) => self.variants.iter().find(|x| x.name == v).ok_or_else(|| {
                let names: Vec<&str> = self.variants.iter().map(|x| x.name).collect();
                Error::Input(format!(
                    "unknown variant '{v}' for {}; variants: {}",
                    self.name,
                    names.join(", ")
                ))
            }),
        }
    }

    pub fn check_dtype(&self, dtype: DType) -> Result<()> {
        if self.dtypes.contains(&dtype) {
            Ok(())
        } else {
            Err(Error::Input(format!(
                "{} does not take dtype {dtype}",
                self.name
            )))
        }
    }
}

/// One run, as the CLI and the UI ask for it.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub variant: &'static VariantInfo,
    pub dtype: DType,
    pub input: Data,
    pub trace: bool,
}

impl RunRequest {
    /// A request for `algo`, checked before any GPU work: the element type and the input's
    /// length (not empty, then the room's [`Algorithm::check_len`]). The one place a length is
    /// checked ([`crate::request::RunSpec::resolve`] and the app make requests here); a run adds
    /// only what needs the device, the binding limit.
    pub fn new(
        algo: &dyn Algorithm,
        variant: &'static VariantInfo,
        dtype: DType,
        input: Data,
        trace: bool,
    ) -> Result<RunRequest> {
        algo.info().check_dtype(dtype)?;
        if input.is_empty() {
            return Err(Error::input("input is empty"));
        }
        algo.check_len(input.len())?;
        Ok(RunRequest {
            variant,
            dtype,
            input,
            trace,
        })
    }
}

/// A benchmark case: a plan to time, and what one run moves.
pub struct BenchCase {
    pub plan: Plan,
    /// Bytes one run must read and write at least (the floor's numerator).
    pub bytes: u64,
    /// Elements (keys, values) one run processes.
    pub items: u64,
}

impl BenchCase {
    /// A case whose floor is one read and one write of each of `n` 32-bit elements, whatever the
    /// plan does in between (permutations, sorts, scans, the copy).
    pub fn read_write_once(plan: Plan, n: usize) -> BenchCase {
        BenchCase {
            plan,
            bytes: 8 * n as u64,
            items: n as u64,
        }
    }

    /// A case over two zeroed buffers of `words` words (`names`: their labels), planned by `build`
    /// from the first to the second; the plan keeps both. Its floor: [`BenchCase::read_write_once`].
    pub fn between_buffers(
        gpu: &Gpu,
        names: [&str; 2],
        words: usize,
        n: usize,
        build: impl FnOnce(&wgpu::Buffer, &wgpu::Buffer) -> Result<Plan>,
    ) -> Result<BenchCase> {
        let a = gpu.storage_zeroed(names[0], words)?;
        let b = gpu.storage_zeroed(names[1], words)?;
        let mut plan = build(&a, &b)?;
        plan.keep.extend([a, b]);
        Ok(BenchCase::read_write_once(plan, n))
    }
}

/// The link between an algorithm room and the engine, CLI and UI.
pub trait Algorithm {
    fn info(&self) -> &'static AlgoInfo;
    /// The seed example, if the design note has one.
    fn example(&self, _dtype: DType) -> Option<Data> {
        None
    }
    /// Check a length before any GPU work (e.g. powers of two only).
    fn check_len(&self, _n: usize) -> Result<()> {
        Ok(())
    }
    /// An element type the algorithm always uses, whatever `--dtype` says (e.g. f32 for the FFT).
    fn fixed_dtype(&self) -> Option<DType> {
        None
    }
    /// How many input numbers `--fill` generates when `--n` is not given (default 16).
    fn default_len(&self) -> Option<usize> {
        None
    }
    /// A run, every stage kept for the result, waited for on this thread (native: the CLI, tests).
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
        pollster::block_on(self.run_streamed(Run::new(gpu, req, &mut Stages::keep())))
    }
    /// A run that hands its stages to `run.out` as they are read back and checked (the app
    /// streams a trace this way); the result holds the stages `out` kept. Async: in the browser
    /// it yields to the page at every read-back. Rooms state their plan, tracer and check and
    /// leave the rest to [`Run::drive`].
    fn run_streamed<'a>(&'a self, run: Run<'a, '_>) -> Task<'a, RunResult>;
    /// A plan for timed mode at size `n` (inputs filled, no read-back).
    fn bench_case(
        &self,
        gpu: &Gpu,
        variant: &VariantInfo,
        n: usize,
        dtype: DType,
    ) -> Result<BenchCase>;
    /// The bench plan of this request's run, same shape and size (the lens times a run's passes
    /// with it): [`Algorithm::bench_case`] at the input's length, where its `n` counts elements.
    fn bench_case_for(&self, gpu: &Gpu, req: &RunRequest) -> Result<BenchCase> {
        self.bench_case(gpu, req.variant, req.input.len(), req.dtype)
    }
    /// The sizes `bench` sweeps by default, as log2(n).
    fn bench_log_n(&self) -> (u32, u32) {
        (10, 24)
    }
}

/// Every algorithm with its options: the registry. Adding a room means one variant here (and
/// its flags in the CLI's `AlgoArgs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "lowercase")]
pub enum AlgoOptions {
    Copy(copy::Options),
    Bitrev(bitrev::Options),
    Bmmc(bmmc::Options),
    Oddeven(oddeven::Options),
    Radix(radix::Options),
    Scan(scan::Options),
    Fft(fft::Options),
    Kernel(kernel::Options),
}

impl AlgoOptions {
    pub fn algo(&self) -> &dyn Algorithm {
        match self {
            AlgoOptions::Copy(o) => o,
            AlgoOptions::Bitrev(o) => o,
            AlgoOptions::Bmmc(o) => o,
            AlgoOptions::Oddeven(o) => o,
            AlgoOptions::Radix(o) => o,
            AlgoOptions::Scan(o) => o,
            AlgoOptions::Fft(o) => o,
            AlgoOptions::Kernel(o) => o,
        }
    }

    /// One default instance of every algorithm, in display order. The workbench (`kernel`) is
    /// not one: it runs the user's kernel and has no default.
    pub fn all_defaults() -> Vec<AlgoOptions> {
        vec![
            AlgoOptions::Bitrev(Default::default()),
            AlgoOptions::Bmmc(Default::default()),
            AlgoOptions::Oddeven(Default::default()),
            AlgoOptions::Radix(Default::default()),
            AlgoOptions::Fft(Default::default()),
            AlgoOptions::Scan(Default::default()),
            AlgoOptions::Copy(Default::default()),
        ]
    }

    pub fn by_name(name: &str) -> Option<AlgoOptions> {
        Self::default_for(name.parse().ok()?)
    }

    /// The default instance of `algo` (None: the workbench, which has none).
    pub fn default_for(algo: Algo) -> Option<AlgoOptions> {
        Self::all_defaults().into_iter().find(|a| a.id() == algo)
    }

    pub fn name(&self) -> &'static str {
        self.algo().info().name
    }

    /// (field, help) of the room's options: each flag's help in the CLI, each control's tooltip
    /// in the app. Empty for bmmc, whose options still derive their flags in the room.
    pub fn option_help(algo: Algo) -> &'static [(&'static str, &'static str)] {
        match algo {
            Algo::Copy => copy::help::ALL,
            Algo::Bitrev => &[],
            Algo::Bmmc => bmmc::help::ALL,
            Algo::Oddeven => oddeven::help::ALL,
            Algo::Radix => radix::help::ALL,
            Algo::Scan => scan::help::ALL,
            Algo::Fft => fft::help::ALL,
            Algo::Kernel => kernel::help::ALL,
        }
    }

    /// The values of the room's closed-set options, with their help ([`Choice`]).
    pub fn option_values(algo: Algo) -> OptionValues {
        match algo {
            Algo::Oddeven => oddeven::help::VALUE_SETS,
            Algo::Radix => radix::help::VALUE_SETS,
            Algo::Scan => scan::help::VALUE_SETS,
            Algo::Fft => fft::help::VALUE_SETS,
            Algo::Bmmc => bmmc::help::VALUE_SETS,
            Algo::Copy | Algo::Bitrev | Algo::Kernel => &[],
        }
    }

    /// Which algorithm these options are for.
    pub fn id(&self) -> Algo {
        match self {
            AlgoOptions::Copy(_) => Algo::Copy,
            AlgoOptions::Bitrev(_) => Algo::Bitrev,
            AlgoOptions::Bmmc(_) => Algo::Bmmc,
            AlgoOptions::Oddeven(_) => Algo::Oddeven,
            AlgoOptions::Radix(_) => Algo::Radix,
            AlgoOptions::Scan(_) => Algo::Scan,
            AlgoOptions::Fft(_) => Algo::Fft,
            AlgoOptions::Kernel(_) => Algo::Kernel,
        }
    }
}

/// What only the device can say about a checked request ([`RunRequest::new`]): that its input
/// fits one storage binding (the allocations check it again, as an invariant).
fn check_fits(algo: &dyn Algorithm, gpu: &Gpu, req: &RunRequest) -> Result<()> {
    gpu.check_elements(req.input.len(), algo.info().name)
}

/// Run a checked request, waited for on this thread (native: the CLI, tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn run(algo: &dyn Algorithm, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
    check_fits(algo, gpu, req)?;
    algo.run(gpu, req)
}

/// Run a checked request, the stages handed to `out` as they are ready
/// ([`Algorithm::run_streamed`]).
pub async fn run_streamed(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    out: &mut Stages<'_>,
) -> Result<RunResult> {
    check_fits(algo, gpu, req)?;
    algo.run_streamed(Run::new(gpu, req, out)).await
}

/// A GPU run in progress: awaited in the browser, driven by `pollster::block_on` natively.
pub type Task<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T>> + 'a>>;

/// `n` must be a power of two (the error says which powers are near).
pub fn require_pow2(name: &str, n: usize) -> Result<u32> {
    if n == 0 || !n.is_power_of_two() {
        let lo = if n == 0 {
            1
        } else {
            1usize << (usize::BITS - 1 - n.leading_zeros())
        };
        return Err(Error::Input(format!(
            "{name} needs N to be a power of two; got N = {n} (nearest: {lo} or {})",
            lo * 2
        )));
    }
    Ok(n.trailing_zeros())
}

/// A decoupled look-back where the driver ends an invocation's loops after a limit
/// ([`Gpu::loop_limit`]: lavapipe): when tiles take ids from workgroup ids (`dispatch`; lavapipe
/// runs the grid in blocks per CPU thread, so a tile may start long before its predecessors) or
/// no status is read (`spin` 0), a tile may fall back on every predecessor, `per_fall` loop
/// iterations each; more tiles than half the limit covers are refused. In the counter order only
/// the tiles running at once can be behind. `tile`: what a tile holds, for the message.
pub(crate) fn look_back_within_loop_limit(
    gpu: &Gpu,
    dispatch: bool,
    spin: u32,
    tiles: usize,
    per_fall: usize,
    tile: &str,
) -> Result<()> {
    let Some(limit) = gpu.loop_limit() else {
        return Ok(());
    };
    if !dispatch && spin > 0 {
        return Ok(());
    }
    let most = 1 + limit as usize / 2 / per_fall;
    if tiles <= most {
        return Ok(());
    }
    let (why, instead) = if dispatch {
        ("--tile-order dispatch", "--tile-order counter")
    } else {
        ("--spin 0", "--spin 1 or more")
    };
    Err(Error::Limit(format!(
        "{why}: a tile may fall back on all {} predecessors, more loop iterations than this adapter runs \
         ({limit} an invocation: llvmpipe ends loops there); at most {most} tiles of {tile}, or use {instead}",
        tiles - 1
    )))
}
