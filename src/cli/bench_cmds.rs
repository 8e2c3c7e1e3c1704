//! `stagewise bench` (a sweep, or a whole suite) and `stagewise report`.

use super::{BenchArgs, Cli, gpu, out};
use crate::algo::{self, Algo, AlgoOptions};
use crate::bench::{self, BenchSpec, CSV_HEADER, Event};
use crate::error::{Error, Result};
use serde_json::json;

pub(super) fn bench_cmd(cli: &Cli, args: &BenchArgs) -> Result<i32> {
    let algo = args.options();
    let cases: Vec<(AlgoOptions, Vec<&'static algo::VariantInfo>)> = match (&algo, args.all) {
        (Some(_), true) => return Err(Error::input("give an algorithm or --all, not both")),
        (None, false) => {
            return Err(Error::input(
                "bench needs an algorithm (see `stagewise list`) or --all",
            ));
        }
        (None, true) => {
            if args.variant.is_some() {
                return Err(Error::input("--variant needs one algorithm, not --all"));
            }
            AlgoOptions::all_defaults()
                .into_iter()
                .map(|a| (a, vec![]))
                .collect()
        }
        (Some(a), false) => {
            let vs = match &args.variant {
                Some(v) => vec![a.algo().info().variant(Some(v))?],
                None => vec![],
            };
            vec![(a.clone(), vs)]
        }
    };
    // One algorithm's element type as `run` takes it (the FFT's own, a kernel's declared one);
    // --all: the one asked for.
    let dtype = match &algo {
        Some(a) => crate::request::checked_element_type(a, args.dtype)?,
        None => args.dtype.unwrap_or_default(),
    };
    let mut cases = cases;
    // The workbench: the kernel's contract is checked before any GPU work, and the built-in
    // kernel for its --expect op runs beside it.
    let workbench = match &algo {
        Some(AlgoOptions::Kernel(k)) => Some(workbench_case(k, &mut cases)?),
        _ => None,
    };
    if args.reps == 0 {
        return Err(Error::input("--reps must be at least 1"));
    }
    if args.n == Some(0) {
        return Err(Error::input("--n 0: n must be at least 1"));
    }
    let warmup_ms = args.warmup_ms.unwrap_or(bench::DEFAULT_MIN_WARMUP_MS);
    if !(0.0..=bench::MAX_MIN_WARMUP_MS).contains(&warmup_ms) {
        return Err(Error::input(format!(
            "--warmup-ms {warmup_ms}: expected 0 ..= {} (ms of wall time)",
            bench::MAX_MIN_WARMUP_MS
        )));
    }
    let gpu = gpu(cli.adapter.as_deref())?;
    if !gpu.has_timestamps() {
        return Err(Error::TimestampsUnavailable);
    }
    let sizes: Vec<usize> = if let Some(n) = args.n {
        vec![n]
    } else {
        let (a, b) = match &args.log_n {
            Some(s) => bench::parse_log_range(s)?,
            None => {
                // Defaults: the algorithm's range, clipped to what this adapter can bind.
                let max_log = (gpu.max_binding_bytes() / 4).ilog2();
                let (a, b) = if args.all {
                    (16, 24)
                } else {
                    cases[0].0.algo().bench_log_n()
                };
                (a.min(max_log), b.min(max_log))
            }
        };
        (a..=b).map(|k| 1usize << k).collect()
    };
    let mut spec = BenchSpec {
        cases,
        sizes,
        reps: args.reps,
        warmup: args.warmup,
        dtype,
        // Without --variant, sizes one variant refuses are skipped rather than ending the sweep
        // (not the user's kernel: its errors are the point).
        skip_refused: (args.all || args.variant.is_none()) && workbench.is_none(),
        min_warmup_ms: warmup_ms,
        roofline: Default::default(),
    };
    let quiet = args.json;
    if !quiet {
        out(&format!("adapter: {}", gpu.adapter_name()));
        out(&format!(
            "warm-up: {warmup_ms} ms back to back, then {} runs, before every case and its copy",
            args.warmup
        ));
        out(&format!(
            "{:<8} {:<14} {:>11} {:>11} {:>9} {:>9} {:>7}  note",
            "algo", "variant", "n", "median ms", "GB/s", "copy GB/s", "×copy"
        ));
    }
    // The rooms' wisdom is for the built-in rooms; the user's kernel takes its file's own
    // (`tune kernel --save`: override values) for overrides not given.
    let wisdom = super::tune::load(cli, &gpu).filter(|_| workbench.is_none());
    let mut applied = Vec::new();
    if workbench.is_some()
        && let AlgoOptions::Kernel(k) = &spec.cases[0].0
    {
        let (k, a) = super::tune_kernel::kernel_wisdom(cli, &gpu, k);
        if !a.is_empty() {
            for &n in &spec.sizes {
                if !quiet {
                    out(&format!(
                        "wisdom ({}): kernel wgsl n={n}: {}",
                        a.from,
                        a.describe()
                    ));
                }
                applied.push(bench::Filled {
                    algorithm: "kernel",
                    variant: "wgsl",
                    n,
                    applied: a.clone(),
                });
            }
            spec.cases[0].0 = AlgoOptions::Kernel(k);
        }
    }
    let mut skipped = 0usize;
    let mut on_event = |e: Event| match e {
        Event::Row(r) if !quiet => out(format!(
            "{:<8} {:<14} {:>11} {:>11.4} {:>9.1} {:>9.1} {:>7.3}  {}",
            r.algorithm,
            r.variant,
            r.n,
            r.median_ms,
            r.gbps,
            r.copy_gbps,
            r.fraction_of_copy,
            r.note()
        )
        .trim_end()),
        Event::Skipped(m) => {
            skipped += 1;
            eprintln!("stagewise: skipped {m}")
        }
        Event::Wisdom(f) => {
            if !quiet {
                out(&format!(
                    "wisdom ({}): {} {} n={}: {}",
                    f.applied.from,
                    f.algorithm,
                    f.variant,
                    f.n,
                    f.applied.describe()
                ));
            }
            applied.push(f);
        }
        Event::WisdomRefused(m) => eprintln!("warning: {m}"),
        _ => {}
    };
    let rows = pollster::block_on(bench::run_with_wisdom(
        &gpu,
        &spec,
        wisdom.as_ref(),
        &mut on_event,
        &|| false,
    ))?;
    if rows.is_empty() && skipped > 0 {
        // A sweep that measured nothing is not a result: say so and fail.
        return Err(Error::input(format!(
            "nothing was measured: all {skipped} case(s) were skipped (the lines above say why)"
        )));
    }
    if let Some(why) = gpu.clock_distrusted() {
        eprintln!("stagewise: timed by the wall clock: {why}");
    }
    let compare = workbench.map(|builtin| compare(&rows, builtin.as_deref()));
    if let Some(c) = &compare
        && !quiet
    {
        for line in c.iter().filter_map(|r| r["text"].as_str()) {
            out(line);
        }
    }
    if let Some(path) = &args.csv {
        let mut s = String::from(CSV_HEADER);
        s.push('\n');
        for r in &rows {
            s.push_str(&r.csv());
            s.push('\n');
        }
        std::fs::write(path, s)
            .map_err(|e| Error::Io(format!("cannot write '{}': {e}", path.display())))?;
    }
    if args.json {
        let mut v = json!({
            "adapter": gpu.adapter_name(),
            "driver": format!("{} {}", gpu.info.driver, gpu.info.driver_info),
            "reps": args.reps,
            "warmup": args.warmup,
            "min_warmup_ms": warmup_ms,
            "dtype": dtype.name(),
            "rows": rows,
        });
        if let Some(c) = compare {
            v["compare"] = json!(c);
        }
        if !applied.is_empty() {
            let rows = applied.iter().map(|f| {
                let mut j = f.applied.to_json();
                j["algorithm"] = json!(f.algorithm);
                j["variant"] = json!(f.variant);
                j["n"] = json!(f.n);
                j
            });
            v["wisdom"] = json!(rows.collect::<Vec<_>>());
        }
        out(&v.to_string());
    }
    Ok(0)
}

pub(super) fn suite_cmd(cli: &Cli, args: &BenchArgs) -> Result<i32> {
    let suite = args.suite.as_deref().expect("suite_cmd runs with --suite");
    // Every other bench option belongs to the suite file's cases.
    if args.algo.is_some()
        || args.variant.is_some()
        || args.log_n.is_some()
        || args.n.is_some()
        || args.csv.is_some()
        || args.json
        || args.warmup_ms.is_some()
        || args.dtype.is_some()
    {
        return Err(Error::input(
            "--suite takes its cases, sizes, reps and warm-up (--warmup-ms: its min_warmup_ms) from the suite file: give only --out, --only and --peers",
        ));
    }
    let Some(out_path) = &args.out else {
        return Err(Error::input("--suite needs --out FILE for the result"));
    };
    crate::suite::load(suite, &super::Words)?;
    let gpu = gpu(cli.adapter.as_deref())?;
    let peers = (args.peers != "none").then_some(args.peers.as_str());
    let command: Vec<String> = std::env::args().collect();
    let wisdom = super::tune::load(cli, &gpu);
    let res = crate::suite::run(
        &gpu,
        suite,
        &args.only,
        peers,
        &command.join(" "),
        wisdom.as_ref(),
        &super::Words,
    )?;
    let text = serde_json::to_string_pretty(&res).unwrap_or_default();
    std::fs::write(out_path, text + "\n")
        .map_err(|e| Error::Io(format!("cannot write '{}': {e}", out_path.display())))?;
    let bad: Vec<&str> = res
        .cases
        .iter()
        .filter(|c| !c.verify.verified || c.error.is_some())
        .map(|c| c.case.id.as_str())
        .collect();
    out(&format!(
        "{} cases, result in {}{}",
        res.cases.len(),
        out_path.display(),
        if bad.is_empty() {
            String::new()
        } else {
            format!(
                "; FAILED (wrong on this GPU, or not timed): {}",
                bad.join(", ")
            )
        }
    ));
    Ok(if bad.is_empty() { 0 } else { 3 })
}

pub(super) fn report_cmd(
    result: &std::path::Path,
    markdown: Option<&std::path::Path>,
    plot: Option<&std::path::Path>,
) -> Result<i32> {
    use crate::suite::report;
    if markdown.is_none() && plot.is_none() {
        return Err(Error::input(
            "report needs --markdown FILE (or -) and/or --plot FILE.png",
        ));
    }
    let r = report::load(result)?;
    if let Some(md) = markdown {
        let generated = report::markdown(&r, &result.display().to_string());
        if md.as_os_str() == "-" {
            print!("{generated}");
        } else {
            let doc = match std::fs::read_to_string(md) {
                Ok(doc) => report::splice(&doc, &generated)
                    .map_err(|e| Error::Input(format!("{}: {e}", md.display())))?,
                // A new document: the generated part alone, markers included.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => generated,
                Err(e) => {
                    return Err(Error::Io(format!("cannot read '{}': {e}", md.display())));
                }
            };
            std::fs::write(md, doc)
                .map_err(|e| Error::Io(format!("cannot write '{}': {e}", md.display())))?;
        }
    }
    if let Some(p) = plot {
        report::plot(&r, p)?;
    }
    Ok(0)
}

/// Check the workbench kernel's contract and options, and add the built-in kernel for its
/// `--expect` op as a second case; returns that kernel's name (None: no room computes the op).
fn workbench_case(
    k: &algo::kernel::Options,
    cases: &mut Vec<(AlgoOptions, Vec<&'static algo::VariantInfo>)>,
) -> Result<Option<String>> {
    let Some((builtin, v)) = k.builtin_case()? else {
        return Ok(None);
    };
    let name = format!("{} {}", builtin.name(), v.name);
    cases.push((builtin, vec![v]));
    Ok(Some(name))
}

/// Per size: the user's kernel and the built-in one as fractions of the same-run copy
/// ("yours 0.31× copy; the built-in bitrev tiled 0.95×").
fn compare(rows: &[crate::bench::BenchRow], builtin: Option<&str>) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.algorithm == Algo::Kernel) {
        let b = rows
            .iter()
            .find(|b| b.n == r.n && b.algorithm != Algo::Kernel && b.case == 1);
        let text = match (builtin, b) {
            (Some(name), Some(b)) => format!(
                "n = {}: yours {:.2}× copy; the built-in {name} {:.2}× copy",
                r.n, r.fraction_of_copy, b.fraction_of_copy
            ),
            _ => format!(
                "n = {}: yours {:.2}× copy (no built-in kernel for this --expect)",
                r.n, r.fraction_of_copy
            ),
        };
        out.push(json!({
            "n": r.n,
            "yours": r.fraction_of_copy,
            "builtin": builtin,
            "builtin_fraction_of_copy": b.map(|b| b.fraction_of_copy),
            "text": text,
        }));
    }
    out
}
