//! `stagewise tune` (measure this GPU's defaults: wisdom) and `stagewise wisdom` (show, export,
//! import, forget). The cases are the benchmark suite's (bench/suite.toml, built in) whose room
//! declares a search space; the tuner is [`crate::wisdom::search`].

use super::{Cli, gpu, out};
use crate::error::{Error, Result};
use crate::wisdom::search::{self, Event, Outcome};
use crate::wisdom::{self, Source, Wisdom};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Your kernel's override constants instead of the rooms: `tune kernel --wgsl FILE --expect
    /// OP --override NAME=V1,V2,…`.
    #[command(subcommand)]
    pub what: Option<TuneWhat>,
    /// Rooms to tune (copy, bmmc, scan, fft, radix, oddeven); default: every room with parameters.
    pub algorithms: Vec<String>,
    /// Only the suite cases whose id contains one of these (comma-separated), e.g. fft-256.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The whole search's time budget in minutes, shared equally among the cases left; what
    /// finished is kept.
    #[arg(long, default_value_t = 5.0)]
    pub minutes: f64,
    /// Time every case at N elements (an FFT: N values) instead of the suite's largest size
    /// (CPU adapters: at most 2^20); a case whose one FFT is larger is left out.
    #[arg(long)]
    pub n: Option<usize>,
    /// Timed repetitions per candidate (median kept).
    #[arg(long, default_value_t = 20)]
    pub reps: usize,
    /// Write the wisdom here instead of this adapter's file in the data directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the wisdom as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum TuneWhat {
    /// Tune your WGSL kernel's `override` constants: every combination verified against --expect,
    /// then timed beside the same-run copy and the built-in kernel; --save keeps the best.
    Kernel(super::tune_kernel::TuneKernelArgs),
}

#[derive(Subcommand, Debug)]
pub enum WisdomCmd {
    /// What this adapter's wisdom holds, and where it came from.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Copy this adapter's wisdom to FILE.
    Export { file: PathBuf },
    /// Make FILE this adapter's wisdom (it must have been measured on this GPU).
    Import { file: PathBuf },
    /// Delete this adapter's local wisdom (shipped files stay).
    Forget,
}

/// The wisdom a command uses: `--wisdom FILE`, none with `--no-wisdom`, else
/// `STAGEWISE_WISDOM` (`off` or a file), else this adapter's.
pub(super) fn source(cli: &Cli) -> Source {
    match (&cli.wisdom, cli.no_wisdom) {
        (_, true) => Source::Off,
        (Some(f), false) => Source::File(f.clone()),
        (None, false) => Source::from_env(),
    }
}

/// Load it, warning (stderr) about a file that cannot be used.
pub(super) fn load(cli: &Cli, gpu: &crate::gpu::Gpu) -> Option<wisdom::Loaded> {
    let (w, warn) = wisdom::load(gpu, &source(cli));
    if let Some(warn) = warn {
        eprintln!("{warn}");
    }
    w
}

fn cases(args: &TuneArgs, cpu: bool) -> Result<search::Cases> {
    search::suite_cases(&super::Words, &args.algorithms, &args.only, args.n, cpu)
}

pub(super) fn tune_cmd(cli: &Cli, args: &TuneArgs) -> Result<i32> {
    if let Some(TuneWhat::Kernel(k)) = &args.what {
        return super::tune_kernel::tune_kernel_cmd(cli, k);
    }
    if !(args.minutes > 0.0 && args.minutes <= 600.0) {
        return Err(Error::input("--minutes: expected more than 0, at most 600"));
    }
    if args.reps == 0 {
        return Err(Error::input("--reps must be at least 1"));
    }
    if args.n == Some(0) {
        return Err(Error::input("--n must be at least 1"));
    }
    for a in &args.algorithms {
        if !search::ROOMS.contains(&a.as_str()) {
            return Err(Error::Input(format!(
                "tune: '{a}' has no tunable parameters (rooms: {})",
                search::ROOMS.join(", ")
            )));
        }
    }
    let gpu = gpu(cli.adapter.as_deref())?;
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    let all = cases(args, cpu)?;
    let left_out_line = all.left_out_line();
    let search::Cases {
        cases,
        left_out,
        left_out_why,
    } = all;
    let path = args.out.clone().unwrap_or_else(|| wisdom::local_path(&gpu));
    eprintln!(
        "tuning {} cases on {} for at most {} min; every candidate verified before it is timed",
        cases.len(),
        gpu.info.name,
        args.minutes
    );
    if let Some(l) = &left_out_line {
        eprintln!("{l}");
    }
    let rules = search::Rules {
        reps: args.reps,
        ..Default::default()
    };
    // What the round did besides its entries (for --json).
    let (mut stopped_for_time, mut skipped) = (Vec::new(), Vec::new());
    let mut on = |e: Event| match e {
        Event::Case { case, index, total } => {
            eprintln!("[{}/{total}] {} at n = {}", index + 1, case.id, case.n);
        }
        Event::Tried {
            choice, outcome, ..
        } => {
            let what = match outcome {
                Outcome::Timed(ms) => format!("{ms:.4} ms"),
                Outcome::Refused(m) => format!("refused: {m}"),
                Outcome::Wrong(m) => format!("WRONG, not timed: {m}"),
            };
            eprintln!("    {:<44} {what}", crate::wisdom::describe_choice(choice));
        }
        Event::OutOfTime {
            case,
            untried,
            unconfirmed,
        } => {
            eprintln!("    {}", search::out_of_time(untried, unconfirmed));
            stopped_for_time.push(serde_json::json!({
                "case": case.id, "untried": untried, "unconfirmed": unconfirmed
            }));
        }
        Event::Skipped { case, why } => {
            eprintln!("{}: skipped: {why}", case.id);
            skipped.push(serde_json::json!({"case": case.id, "why": why}));
        }
        Event::Done(_) => {}
    };
    let t0 = std::time::Instant::now();
    let entries = pollster::block_on(search::tune(
        &gpu,
        &cases,
        rules,
        args.minutes,
        &mut on,
        &|| false,
    ))?;
    let seconds = t0.elapsed().as_secs_f64();
    // Entries of cases not tuned this time stay (a partial run adds to what was measured).
    let (w, warning) = wisdom::record(&gpu, &path, &entries)?;
    if let Some(warning) = warning {
        eprintln!("{warning}");
    }
    if args.json {
        // The file as written, and what this round did.
        let mut v = serde_json::to_value(&w).unwrap_or_default();
        v["round"] = serde_json::json!({
            "minutes": args.minutes,
            "seconds": seconds,
            "cases": cases.len(),
            "tuned": entries.iter().map(|e| e.case.clone()).collect::<Vec<_>>(),
            "stopped_for_time": stopped_for_time,
            "skipped": skipped,
            "left_out": left_out,
            "left_out_why": left_out_line.map(|_| left_out_why),
        });
        out(&serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        out(&format!(
            "{:<22} {:<44} {:>10} {:>10} {:>7}",
            "case", "choice", "ms", "default", "speedup"
        ));
        for e in &entries {
            out(&format!(
                "{:<22} {:<44} {:>10.4} {:>10.4} {:>6.3}×",
                e.case,
                crate::wisdom::describe_choice(&e.choice),
                e.ms,
                e.default_ms,
                e.default_ms / e.ms
            ));
        }
        out(&format!(
            "{} of {} cases tuned in {seconds:.0} s",
            entries.len(),
            cases.len()
        ));
        out(&format!("wisdom written to {}", path.display()));
    }
    Ok(if entries.len() == cases.len() { 0 } else { 3 })
}

pub(super) fn wisdom_cmd(cli: &Cli, cmd: &WisdomCmd) -> Result<i32> {
    let gpu = gpu(cli.adapter.as_deref())?;
    let path = wisdom::local_path(&gpu);
    match cmd {
        WisdomCmd::Show { json } => match load(cli, &gpu) {
            None => {
                if *json {
                    out("null");
                } else {
                    out(&format!(
                        "no wisdom for {}: the built-in defaults (run `stagewise tune`)",
                        gpu.info.name
                    ));
                }
            }
            Some(l) if *json => out(&serde_json::to_string_pretty(&l.wisdom).unwrap_or_default()),
            Some(l) => {
                out(&format!(
                    "wisdom for {} ({}, {}) from {}, measured {}",
                    l.wisdom.adapter.name,
                    l.wisdom.adapter.backend,
                    l.wisdom.adapter.driver_info,
                    l.from,
                    l.wisdom.date
                ));
                for e in &l.wisdom.entries {
                    out(&format!(
                        "{:<22} 2^{:<2} {:<44} {:>6.3}× the default",
                        e.case,
                        e.log_n,
                        crate::wisdom::describe_choice(&e.choice),
                        e.default_ms / e.ms
                    ));
                }
            }
        },
        WisdomCmd::Export { file } => {
            let Some(l) = load(cli, &gpu) else {
                return Err(Error::Input(format!(
                    "no wisdom for {} to export",
                    gpu.info.name
                )));
            };
            l.wisdom.write(file)?;
            out(&format!("exported {} to {}", l.from, file.display()));
        }
        WisdomCmd::Import { file } => {
            let w = Wisdom::read(file)?;
            if !w.adapter.same_gpu(&wisdom::AdapterId::of(&gpu)) {
                return Err(Error::Input(format!(
                    "wisdom '{}' was measured on {} ({}), not this {}",
                    file.display(),
                    w.adapter.name,
                    w.adapter.backend,
                    gpu.info.name
                )));
            }
            w.write(&path)?;
            out(&format!(
                "imported {} as {}",
                file.display(),
                path.display()
            ));
        }
        WisdomCmd::Forget => match wisdom::forget(&gpu)? {
            Some(p) => out(&format!("removed {}", p.display())),
            None => out(&format!("no local wisdom for {}", gpu.info.name)),
        },
    }
    Ok(0)
}
