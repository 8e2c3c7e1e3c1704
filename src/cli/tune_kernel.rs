//! `stagewise tune kernel`: every combination of a workbench kernel's override values verified,
//! timed beside the same-run copy and the built-in kernel for its op, printed as a table
//! ([`crate::wisdom::kernel_tune`]); `--save` keeps the best as the file's kernel wisdom, which
//! `run kernel` and `bench kernel` then take for the overrides not given ([`kernel_wisdom`]).

use super::algo_args::kernel_flags;
use super::{Cli, gpu, out};
use crate::algo::kernel;
use crate::error::Result;
use crate::wisdom::kernel_tune::{self, Event, Report, Row, Setup, Status};
use clap::Args;

#[derive(Args, Debug)]
#[command(mut_arg("overrides", |a| a.value_name("NAME=V1,V2,…").help(
    "An override constant to tune and its values (repeatable; every combination is tried, at \
     most 256); an override given one value is held at it"
)))]
pub struct TuneKernelArgs {
    #[command(flatten)]
    pub kernel: kernel_flags::Flags,
    /// Elements every candidate is timed at (verified at this size, at most 2^20).
    #[arg(long, default_value_t = kernel_tune::DEFAULT_N)]
    pub n: usize,
    /// Timed repetitions per candidate (median kept).
    #[arg(long, default_value_t = 20)]
    pub reps: usize,
    /// Keep the best as this file's kernel wisdom (keyed by its content hash, this adapter).
    #[arg(long)]
    pub save: bool,
    /// Print one JSON object: the rows, the references and the best.
    #[arg(long)]
    pub json: bool,
}

/// The setup: lists (`NAME=a,b`) are tuned, single values held fixed.
fn setup(args: &TuneKernelArgs) -> Setup {
    let mut opts: kernel::Options = args.kernel.clone().into();
    let (lists, fixed): (Vec<String>, Vec<String>) = opts
        .overrides
        .drain(..)
        .partition(|o| o.split_once('=').is_some_and(|(_, v)| v.contains(',')));
    // A single value is a list of one where nothing else is tuned (`--override TILE=16`).
    let (lists, fixed) = if lists.is_empty() {
        (fixed, Vec::new())
    } else {
        (lists, fixed)
    };
    opts.overrides = fixed;
    Setup {
        opts,
        lists,
        n: args.n,
        reps: args.reps,
        roofline: Default::default(),
    }
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The row's last column: `yes`, `WRONG: …`, `refused: …`.
fn verdict(r: &Row) -> String {
    let why = r.reason.as_deref().unwrap_or("");
    match r.status {
        Status::Timed => "yes".into(),
        Status::Wrong => format!("WRONG: {why}"),
        Status::Refused => format!("refused: {why}"),
    }
}

/// The table: a column per tuned override, then ms, GB/s, × copy, × built-in, verified.
fn table(rep: &Report) -> Vec<String> {
    let labels = [
        Some("(same-run copy)".to_string()),
        rep.builtin
            .as_ref()
            .map(|b| format!("(built-in {})", b.name)),
    ];
    let mut w: Vec<usize> = rep.axes.iter().map(|a| a.len().max(6)).collect();
    // The reference rows' names stand in the override columns: widen the first to hold them.
    let area = w.iter().sum::<usize>() + w.len().saturating_sub(1);
    let widest = labels
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    if let Some(first) = w.first_mut() {
        *first += widest.saturating_sub(area);
    }
    let area = area.max(widest);
    let mut lines = Vec::new();
    let head: Vec<String> = rep
        .axes
        .iter()
        .zip(&w)
        .map(|(a, w)| format!("{a:>w$}"))
        .collect();
    lines.push(format!(
        "{}  {:>10} {:>8} {:>7} {:>10}  verified",
        head.join(" "),
        "ms",
        "GB/s",
        "× copy",
        "× built-in"
    ));
    let reference = |label: &str, r: &kernel_tune::Reference, vs: Option<f64>| {
        format!(
            "{label:>area$}  {:>10.4} {:>8.2} {:>7.3} {:>10}  reference",
            r.ms,
            r.gbps,
            r.fraction_of_copy,
            cell(vs, 3)
        )
    };
    let copy_vs = rep.builtin.as_ref().map(|b| b.ms / rep.copy.ms);
    lines.push(reference("(same-run copy)", &rep.copy, copy_vs));
    if let (Some(b), Some(label)) = (&rep.builtin, &labels[1]) {
        lines.push(reference(label, b, Some(1.0)));
    }
    for (i, r) in rep.rows.iter().enumerate() {
        let vals: Vec<String> = r
            .overrides
            .iter()
            .zip(&w)
            .map(|((_, v), w)| format!("{v:>w$}"))
            .collect();
        let mark = if rep.best == Some(i) { " (best)" } else { "" };
        lines.push(format!(
            "{}  {:>10} {:>8} {:>7} {:>10}  {}{mark}",
            vals.join(" "),
            cell(r.ms, 4),
            cell(r.gbps, 2),
            cell(r.fraction_of_copy, 3),
            cell(r.vs_builtin, 3),
            verdict(r)
        ));
    }
    lines
}

/// The best row in one line.
fn best_line(rep: &Report) -> String {
    match rep.best_row() {
        Some(b) => {
            let vs = match (&rep.builtin, b.vs_builtin) {
                (Some(bi), Some(x)) => format!(", {x:.2}× the built-in {}", bi.name),
                _ => String::new(),
            };
            format!(
                "best: {} ({:.4} ms, {:.2}× copy{vs})",
                b.choice(),
                b.ms.unwrap_or(f64::NAN),
                b.fraction_of_copy.unwrap_or(f64::NAN)
            )
        }
        None => "best: none: no combination verified".into(),
    }
}

pub(super) fn tune_kernel_cmd(cli: &Cli, args: &TuneKernelArgs) -> Result<i32> {
    let mut setup = setup(args);
    // The kernel, the op and the grid are checked before a device starts.
    kernel_tune::prepare(&setup)?;
    let gpu = gpu(cli.adapter.as_deref())?;
    let wisdom = super::tune::load(cli, &gpu);
    setup.roofline = crate::bench::roofline(&setup.roofline, wisdom.as_ref(), setup.n).0;
    let mut total = 0;
    let mut on = |e: Event| match e {
        Event::Started { total: t } => {
            total = t;
            eprintln!(
                "tuning {t} combination(s) on {}: each verified on a fresh random input, then timed",
                gpu.info.name
            );
        }
        Event::Copy(r) | Event::Builtin(r) => {
            eprintln!("    {:<28} {:.4} ms (reference)", r.name, r.ms)
        }
        Event::Row { index, row } => {
            let what = match row.ms {
                Some(ms) => format!("{ms:.4} ms"),
                None => verdict(row),
            };
            eprintln!("[{}/{total}] {:<24} {what}", index + 1, row.choice());
        }
    };
    let rep = pollster::block_on(kernel_tune::tune(&gpu, &setup, &mut on, &|| false))?;
    let saved = match (args.save, rep.entry()) {
        (true, Some(e)) => Some(crate::wisdom::kernel::save(&gpu, e)?),
        _ => None,
    };
    if args.json {
        let mut v = serde_json::to_value(&rep).unwrap_or_default();
        v["saved"] = serde_json::json!(saved.as_ref().map(|p| p.display().to_string()));
        out(&v.to_string());
    } else {
        out(&format!(
            "{}: {} at n = {} on {} ({} reps, medians)",
            rep.file, rep.expect, rep.n, rep.adapter, rep.reps
        ));
        for l in table(&rep) {
            out(l.trim_end());
        }
        if let Some(why) = &rep.builtin_refused {
            out(&format!("built-in kernel: not timed: {why}"));
        }
        out(&best_line(&rep));
        if let Some(p) = &saved {
            out(&format!("saved as this file's wisdom: {}", p.display()));
        } else if args.save {
            out("nothing saved: no combination verified");
        }
    }
    if let Some(why) = gpu.clock_distrusted() {
        eprintln!("stagewise: timed by the wall clock: {why}");
    }
    Ok(if rep.best.is_some() { 0 } else { 3 })
}

/// `opts` with this file's kernel wisdom filled into the overrides not given (a warning on
/// stderr for a file that cannot be used).
pub(super) fn kernel_wisdom(
    cli: &Cli,
    gpu: &crate::gpu::Gpu,
    opts: &kernel::Options,
) -> (kernel::Options, crate::wisdom::Applied) {
    let (o, applied, warn) = crate::wisdom::kernel::apply(gpu, &super::tune::source(cli), opts);
    if let Some(w) = warn {
        eprintln!("{w}");
    }
    (o, applied)
}
