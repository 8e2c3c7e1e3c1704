//! The headless CLI: `list`, `adapters`, `run`, `bench`. Its output is a contract (docs/CLI.md):
//! tests and outside checkers parse it. Errors are one line on stderr and a non-zero exit.
// In the browser the CLI's helpers serve the native commands; the page uses its parser only.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use crate::algo::{AlgoOptions, RunRequest};
use crate::data::{DType, Data, Fill};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::request::{InputSpec, Mode, RunSpec};
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use std::io::Write;

#[cfg(not(target_arch = "wasm32"))]
mod bench_cmds;
#[cfg(not(target_arch = "wasm32"))]
use bench_cmds::{bench_cmd, report_cmd, suite_cmd};
mod algo_args;
#[cfg(not(target_arch = "wasm32"))]
mod grade;
#[cfg(not(target_arch = "wasm32"))]
mod lesson;
mod run;
#[cfg(not(target_arch = "wasm32"))]
mod tune;
#[cfg(not(target_arch = "wasm32"))]
mod tune_kernel;
pub use algo_args::AlgoArgs;
pub use run::prepare;

#[derive(Parser, Debug)]
#[command(
    name = "stagewise",
    version,
    about = "Run parallel GPU algorithms stage by stage on the real GPU, and time them against the copy roofline."
)]
pub struct Cli {
    /// Use the first adapter whose name contains this (case-insensitive); also env STAGEWISE_ADAPTER.
    #[arg(long, global = true)]
    pub adapter: Option<String>,
    /// Open the app on a saved session (JSON).
    #[arg(long)]
    pub session: Option<std::path::PathBuf>,
    /// Use this wisdom file (`stagewise tune`'s defaults) instead of this adapter's own.
    #[arg(long, global = true, value_name = "FILE")]
    pub wisdom: Option<std::path::PathBuf>,
    /// The built-in defaults: read no wisdom.
    #[arg(long, global = true, conflicts_with = "wisdom")]
    pub no_wisdom: bool,
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List algorithms, variants and their parameters.
    List {
        #[arg(long)]
        json: bool,
    },
    /// List GPU adapters.
    Adapters {
        #[arg(long)]
        json: bool,
    },
    /// Run one algorithm on the GPU, check it against the CPU model, optionally trace every pass.
    #[command(arg_required_else_help = true)]
    Run(RunArgs),
    /// Time algorithms in timed mode against the copy roofline.
    Bench(BenchArgs),
    /// Turn a suite result (`bench --suite … --out FILE`) into docs/PERFORMANCE.md's tables and plot.
    Report {
        /// The suite result (JSON).
        result: std::path::PathBuf,
        /// Write the tables into this Markdown file, between its suite markers (`-`: print them).
        #[arg(long)]
        markdown: Option<std::path::PathBuf>,
        /// Write the throughput plot (PNG).
        #[arg(long)]
        plot: Option<std::path::PathBuf>,
    },
    /// Random cases of every algorithm and variant on this GPU, each checked against the CPU
    /// model as `run` checks it; a table of what ran and every failure's reproducing command.
    Selftest(SelftestArgs),
    /// Grade a class's kernels against an exercise: each file in a process of its own under a
    /// time limit, checked, its goal measured, timed beside the built-in kernel and the copy.
    Grade(GradeArgs),
    /// Measure this GPU's best defaults for each room (wisdom): every candidate verified against
    /// the CPU model, then timed; written to the data directory and read by every command after.
    #[cfg(not(target_arch = "wasm32"))]
    Tune(tune::TuneArgs),
    /// Show, export, import or forget this adapter's wisdom.
    #[cfg(not(target_arch = "wasm32"))]
    Wisdom {
        #[command(subcommand)]
        action: tune::WisdomCmd,
    },
    /// Lessons (docs/LESSONS.md): check a lesson file on the GPU, list the shipped ones.
    #[cfg(not(target_arch = "wasm32"))]
    #[command(subcommand)]
    Lesson(lesson::LessonCmd),
    /// Open the app at a link (docs/LESSONS.md): `#bitrev/staged?stage=2`, `#lesson=bitrev&step=4`,
    /// `#exercise=bitrev-naive`, or a whole address ending in one.
    #[cfg(not(target_arch = "wasm32"))]
    Open { link: String },
    /// BMMC (seed 001): distributions of rank_m, rank_b and pass counts over random bit permutations.
    BmmcStats {
        /// Index bits (N = 2^n).
        #[arg(long)]
        n: usize,
        /// Random permutations to sample when n > 10 (n ≤ 10 enumerates all n!).
        #[arg(long, default_value_t = 100_000)]
        samples: usize,
        /// Seed for sampling.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Cormen's m (the seed: 10).
        #[arg(long, default_value_t = 10)]
        m: usize,
        /// Cormen's b (the seed: 5).
        #[arg(long, default_value_t = 5)]
        b: usize,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Variant (see `stagewise list`); default: the algorithm's first.
    #[arg(long, global = true)]
    pub variant: Option<String>,
    /// Element type (default u32; the FFT's is f32).
    #[arg(long, global = true, value_enum)]
    pub dtype: Option<DType>,
    /// Input file: numbers separated by whitespace, commas or newlines, a JSON array, or .npy; `-` = stdin.
    #[arg(long, global = true)]
    pub input: Option<String>,
    /// Number of elements to generate (instead of --input).
    #[arg(long, global = true)]
    pub n: Option<usize>,
    /// How to generate the input (default: the seed example when there is one and no --n, else random).
    #[arg(long, global = true, value_enum)]
    pub fill: Option<Fill>,
    /// Seed for random fills.
    #[arg(long, global = true, default_value_t = 1)]
    pub seed: u64,
    /// Read back every pass and report the stages.
    #[arg(long, global = true)]
    pub trace: bool,
    /// Print one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
    /// Write the trace (implies --trace) to FILE.json (the `stages` array) or FILE.csv
    /// (stage,label,index,value rows).
    #[arg(long, global = true)]
    pub save_trace: Option<std::path::PathBuf>,
    /// Write the output values to FILE: .npy, .json, or text (one value per line).
    #[arg(long, global = true)]
    pub save_output: Option<std::path::PathBuf>,
    /// The memory lens: record every pass's memory accesses on the GPU and report coalescing,
    /// bank conflicts and a predicted time per pass (JSON: top-level "lens").
    #[arg(long, global = true)]
    pub lens: bool,
    /// Warp size the lens groups accesses by (default: the adapter's largest subgroup).
    #[arg(long, global = true, requires = "lens")]
    pub lens_warp: Option<u32>,
    /// Which workgroups the lens records: auto (every one where the record log holds the run,
    /// else a sample that fits it), all, or a fraction of every pass's grid (0.01, 1/256); the
    /// sample's offsets follow --seed.
    #[arg(long, global = true, requires = "lens", default_value = "auto", value_parser = parse_sample)]
    pub lens_sample: crate::lens::sample::SampleSpec,
    /// Run what a run spec (JSON, docs/CLI.md) describes, `-` = stdin: the algorithm, its
    /// options, variant, dtype, input and mode; only --json and --save-output go beside it.
    #[arg(long, global = true, value_name = "FILE")]
    pub spec: Option<String>,
    /// The algorithm and its options (none with --spec).
    #[command(subcommand)]
    pub algo: Option<AlgoArgs>,
}

impl RunArgs {
    /// The algorithm's typed options (None: no algorithm given).
    pub fn options(&self) -> Option<AlgoOptions> {
        self.algo.as_ref().map(AlgoArgs::options)
    }
}

/// argv (the program's name first) as the CLI reads it: the one parser of words. The suite's case
/// files, the selftest's reproducing commands and the workbench's exercises keep their runs as
/// CLI words and read them here; the error is the CLI's message.
pub fn parse_words<I, T>(argv: I) -> std::result::Result<Cli, String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(argv).map_err(|e| e.to_string())
}

/// The CLI's parser as the suite and the selftest read their cases' words with it.
pub struct Words;

impl Words {
    fn parse(sub: &str, args: &[String]) -> std::result::Result<Option<Cmd>, String> {
        let argv = ["stagewise", sub]
            .into_iter()
            .map(String::from)
            .chain(args.iter().cloned());
        parse_words(argv).map(|cli| cli.cmd)
    }
}

impl crate::request::CommandWords for Words {
    fn run(&self, args: &[String]) -> std::result::Result<Result<RunSpec>, String> {
        match Self::parse("run", args)? {
            Some(Cmd::Run(r)) => Ok(r.spec()),
            _ => Err("not a run command".into()),
        }
    }

    fn bench(&self, args: &[String]) -> std::result::Result<(Option<AlgoOptions>, DType), String> {
        match Self::parse("bench", args)? {
            Some(Cmd::Bench(b)) => Ok((b.options(), b.dtype.unwrap_or_default())),
            _ => Err("not a bench command".into()),
        }
    }
}

#[derive(Args, Debug)]
pub struct GradeArgs {
    /// The exercise: a built-in one's name (the app's Exercises menu) or a folder with an
    /// exercise.toml.
    #[arg(long)]
    pub exercise: String,
    /// Kernel files (.wgsl), or folders whose .wgsl files are graded in name order.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Seconds each file's run (and its timing) may take before it is stopped.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Timed repetitions for each kernel that passes its check.
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    /// Check and measure the goal only; no timing.
    #[arg(long)]
    pub no_time: bool,
    /// Write the rows as CSV to FILE.
    #[arg(long)]
    pub csv: Option<std::path::PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SelftestArgs {
    /// Minutes to spend (at least one case of every variant runs, however short).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub minutes: f64,
    /// Run exactly this many cases instead (the first round covers every variant).
    #[arg(long, conflicts_with = "minutes")]
    pub cases: Option<usize>,
    /// Seed for the cases' sizes, options and inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

impl BenchArgs {
    /// The algorithm's typed options (None: no algorithm given).
    pub fn options(&self) -> Option<AlgoOptions> {
        self.algo.as_ref().map(AlgoArgs::options)
    }
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Every algorithm and variant.
    #[arg(long)]
    pub all: bool,
    /// Run a benchmark suite (bench/suite.toml): verify every case, time it with the same-run
    /// copy, run the peers; needs --out.
    #[arg(long, conflicts_with = "all")]
    pub suite: Option<std::path::PathBuf>,
    /// With --suite: write the result (JSON) to FILE.
    #[arg(long, requires = "suite")]
    pub out: Option<std::path::PathBuf>,
    /// With --suite: only the cases whose id contains one of these (comma-separated).
    #[arg(long, requires = "suite", value_delimiter = ',')]
    pub only: Vec<String>,
    /// With --suite: the command that runs the peers script, or `none`.
    #[arg(long, requires = "suite", default_value = "python3 bench/peers.py")]
    pub peers: String,
    /// Only this variant.
    #[arg(long, global = true)]
    pub variant: Option<String>,
    /// Sizes as log2 range A..B (inclusive), e.g. 20..28.
    #[arg(long = "log-n", global = true)]
    pub log_n: Option<String>,
    /// One size.
    #[arg(long, global = true, conflicts_with = "log_n")]
    pub n: Option<usize>,
    /// Timed repetitions per case (median reported).
    #[arg(long, global = true, default_value_t = 50)]
    pub reps: usize,
    /// Untimed warm-up runs per case (and its copy), after --warmup-ms.
    #[arg(long, global = true, default_value_t = 5)]
    pub warmup: usize,
    /// Run every case (and its copy) back to back this long first, in ms of wall time (default
    /// 300; 0: only the --warmup runs).
    #[arg(
        long = "warmup-ms",
        global = true,
        value_name = "MS",
        allow_negative_numbers = true
    )]
    pub warmup_ms: Option<f64>,
    /// Element type (default u32; the FFT's is f32).
    #[arg(long, global = true, value_enum)]
    pub dtype: Option<DType>,
    /// Print one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
    /// Write the rows as CSV to FILE.
    #[arg(long, global = true)]
    pub csv: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub algo: Option<AlgoArgs>,
}

/// Print to stdout; a closed pipe (e.g. `| head`) is not an error worth a panic.
pub(super) fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{s}");
}

pub(super) fn gpu(cli_adapter: Option<&str>) -> Result<Gpu> {
    Gpu::headless(cli_adapter)
}

/// Run a parsed CLI command (not the app); returns the exit code.
#[cfg(not(target_arch = "wasm32"))]
pub fn dispatch(cli: &Cli, cmd: &Cmd) -> Result<i32> {
    if cli.session.is_some() {
        return Err(Error::input(
            "--session opens the app on a saved session; it cannot be combined with a subcommand",
        ));
    }
    match cmd {
        Cmd::List { json } => list(*json),
        Cmd::Adapters { json } => adapters(*json),
        Cmd::Run(args) => run::run(cli, args),
        Cmd::Bench(args) if args.suite.is_some() => suite_cmd(cli, args),
        Cmd::Bench(args) => bench_cmd(cli, args),
        Cmd::Selftest(args) => selftest_cmd(cli, args),
        Cmd::Grade(args) => grade::grade_cmd(cli.adapter.as_deref(), args),
        Cmd::Tune(args) => tune::tune_cmd(cli, args),
        Cmd::Wisdom { action } => tune::wisdom_cmd(cli, action),
        Cmd::Lesson(c) => lesson::lesson_cmd(cli.adapter.as_deref(), c),
        // The binary opens the app (the CLI knows no app): src/main.rs.
        Cmd::Open { .. } => Err(Error::input(
            "open starts the app: it is the stagewise binary's to run",
        )),
        Cmd::Report {
            result,
            markdown,
            plot,
        } => report_cmd(result, markdown.as_deref(), plot.as_deref()),
        Cmd::BmmcStats {
            n,
            samples,
            seed,
            m,
            b,
            json,
        } => {
            let v = crate::algo::bmmc::stats::stats_with(*n, *samples, *seed, *m, *b)?;
            out(&if *json {
                serde_json::to_string(&v).map_err(|e| crate::error::Error::Io(e.to_string()))?
            } else {
                crate::algo::bmmc::stats::text(&v)
            });
            Ok(0)
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn selftest_cmd(cli: &Cli, args: &SelftestArgs) -> Result<i32> {
    if !(args.minutes.is_finite() && args.minutes >= 0.0) {
        return Err(Error::Input(format!(
            "--minutes must be a number of minutes ≥ 0; got {}",
            args.minutes
        )));
    }
    if args.cases == Some(0) {
        return Err(Error::input("--cases must be at least 1"));
    }
    let gpu = gpu(cli.adapter.as_deref())?;
    let cfg = crate::selftest::Config {
        minutes: args.minutes,
        cases: args.cases,
        seed: args.seed,
        adapter: cli.adapter.clone(),
        // Untraced runs take wisdom (as `run`): the selftest checks what users get.
        wisdom: tune::load(cli, &gpu),
    };
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal();
    let mut last = std::time::Instant::now();
    let report = pollster::block_on(crate::selftest::run(
        &gpu,
        &cfg,
        &Words,
        &|| false,
        &mut |p| {
            // A terminal gets one line rewritten in place; a log a line every few seconds.
            if tty {
                let line: String = p.line().chars().take(150).collect();
                eprint!("\r\x1b[K{line}");
                if p.current == "done" {
                    eprintln!();
                }
            } else if p.current == "done" || last.elapsed().as_secs_f64() >= 5.0 {
                eprintln!("{}", p.line());
                last = std::time::Instant::now();
            }
        },
    ));
    if args.json {
        out(&report.to_json().to_string());
    } else {
        out(report.text().trim_end());
    }
    Ok(report.exit_code())
}

fn options_of(cmd: clap::Command) -> Vec<Value> {
    cmd.get_arguments()
        .filter(|a| a.get_long().is_some())
        .map(|a| {
            let default: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            json!({
                "name": format!("--{}", a.get_long().unwrap_or_default()),
                "help": a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                "default": default.first(),
            })
        })
        .collect()
}

#[cfg(not(target_arch = "wasm32"))]
fn list(as_json: bool) -> Result<i32> {
    let root = <Cli as clap::CommandFactory>::command();
    let run_cmd = root.find_subcommand("run").cloned();
    let mut algos = Vec::new();
    for a in AlgoOptions::all_defaults() {
        let info = a.algo().info();
        let opts = run_cmd
            .as_ref()
            .and_then(|r| r.find_subcommand(info.name).cloned())
            .map(options_of)
            .unwrap_or_default();
        algos.push(json!({
            "name": info.name,
            "title": info.title,
            "summary": info.summary,
            "seed": info.seed,
            "variants": info.variants.iter().map(|v| json!({"name": v.name, "summary": v.summary})).collect::<Vec<_>>(),
            "default_variant": info.variants[0].name,
            "dtypes": info.dtypes.iter().map(|d| d.name()).collect::<Vec<_>>(),
            "options": opts,
        }));
    }
    if as_json {
        out(&json!({ "algorithms": algos }).to_string());
    } else {
        for a in &algos {
            out(&format!(
                "{}  — {}",
                a["name"].as_str().unwrap_or(""),
                a["title"].as_str().unwrap_or("")
            ));
            out(&format!("    {}", a["summary"].as_str().unwrap_or("")));
            for v in a["variants"].as_array().into_iter().flatten() {
                out(&format!(
                    "    --variant {:<16} {}",
                    v["name"].as_str().unwrap_or(""),
                    v["summary"].as_str().unwrap_or("")
                ));
            }
            for o in a["options"].as_array().into_iter().flatten() {
                out(&format!(
                    "    {:<26} {}",
                    o["name"].as_str().unwrap_or(""),
                    o["help"].as_str().unwrap_or("")
                ));
            }
        }
    }
    Ok(0)
}

#[cfg(not(target_arch = "wasm32"))]
fn adapters(as_json: bool) -> Result<i32> {
    let inst = crate::gpu::context::instance();
    let list: Vec<_> = crate::gpu::context::enumerate(&inst)
        .iter()
        .enumerate()
        .map(|(i, a)| crate::gpu::context::AdapterSummary::of(i, a))
        .collect();
    if as_json {
        out(&json!({ "adapters": list }).to_string());
    } else if list.is_empty() {
        out("no adapters (on a headless Linux machine: apt-get install mesa-vulkan-drivers)");
    } else {
        for a in &list {
            out(&format!(
                "[{}] {} ({}, {}, driver {} {}) timestamps={} subgroups={} size {}..{} storage-binding {} MiB workgroup-memory {} KiB",
                a.index,
                a.name,
                a.backend,
                a.device_type,
                a.driver,
                a.driver_info,
                a.timestamps,
                a.subgroups,
                a.subgroup_size[0],
                a.subgroup_size[1],
                a.max_storage_binding_mib,
                a.max_workgroup_storage_kib
            ));
        }
    }
    Ok(0)
}

fn parse_sample(s: &str) -> std::result::Result<crate::lens::sample::SampleSpec, String> {
    crate::lens::sample::SampleSpec::parse(s).map_err(|e| e.to_string())
}
