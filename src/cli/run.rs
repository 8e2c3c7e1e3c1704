//! `stagewise run`: the flags (or `--spec FILE`) made into a [`RunSpec`], resolved before any GPU
//! work, run, checked against the CPU model and printed (docs/CLI.md's `run --json`).

use super::*;

impl RunArgs {
    /// The request these options make (the CLI's one translation from flags to a [`RunSpec`]).
    pub fn spec(&self) -> Result<RunSpec> {
        if let Some(file) = &self.spec {
            return self.spec_file(file);
        }
        let Some(algo) = self.options() else {
            return Err(Error::input(
                "run needs an algorithm (see `stagewise list`) or --spec FILE",
            ));
        };
        if self.input.is_some() && (self.n.is_some() || self.fill.is_some()) {
            return Err(Error::input(
                "--input cannot be combined with --n or --fill",
            ));
        }
        let input = match &self.input {
            Some(path) => InputSpec::File { path: path.clone() },
            None => InputSpec::Generate {
                n: self.n,
                fill: self.fill,
                seed: self.seed,
            },
        };
        Ok(RunSpec {
            algo,
            variant: self.variant.clone(),
            dtype: self.dtype,
            input,
            // --save-trace implies --trace: the stages it writes must exist.
            mode: if self.trace || self.save_trace.is_some() {
                Mode::Trace
            } else {
                Mode::Run
            },
        })
    }

    /// `--spec FILE`: the run it describes. A flag that describes the run too is refused, naming
    /// itself: the spec is the whole run, as the flags would give it.
    fn spec_file(&self, file: &str) -> Result<RunSpec> {
        let given = [
            ("an algorithm", self.algo.is_some()),
            ("--variant", self.variant.is_some()),
            ("--dtype", self.dtype.is_some()),
            ("--input", self.input.is_some()),
            ("--n", self.n.is_some()),
            ("--fill", self.fill.is_some()),
            ("--seed", self.seed != 1),
            ("--trace", self.trace),
            ("--save-trace", self.save_trace.is_some()),
            ("--lens", self.lens),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            return Err(Error::Input(format!(
                "{flag} cannot be combined with --spec: the spec describes the whole run (only \
                 --json and --save-output go beside it)"
            )));
        }
        let text = if file == "-" {
            std::io::read_to_string(std::io::stdin())
        } else {
            std::fs::read_to_string(file)
        }
        .map_err(|e| Error::Input(format!("run spec '{file}': {e}")))?;
        RunSpec::from_json(file, &text)
    }
}

/// Check a `run` command's options and resolve its input into a request, before any GPU work
/// (a typo costs no device start): the algorithm and the request.
pub fn prepare(args: &RunArgs) -> Result<(AlgoOptions, RunRequest)> {
    let spec = args.spec()?;
    let req = spec.resolve()?;
    Ok((spec.algo, req))
}

#[cfg(not(target_arch = "wasm32"))]
pub(super) fn run(cli: &Cli, args: &RunArgs) -> Result<i32> {
    let (opts, req) = prepare(args)?;
    let trace = req.trace;
    let gpu = gpu(cli.adapter.as_deref())?;
    // Wisdom fills untraced runs' unset options (a trace shows the teaching kernels as they are).
    let wisdom = tune::load(cli, &gpu);
    let (tuned, applied) = match (&opts, wisdom.as_ref()) {
        // Your kernel: its file's tuned override values (traced too: it has no teaching form).
        (AlgoOptions::Kernel(k), _) => {
            let (k, a) = super::tune_kernel::kernel_wisdom(cli, &gpu, k);
            (AlgoOptions::Kernel(k), a)
        }
        (_, Some(w)) if !trace => w.apply(&opts, req.variant.name, req.dtype, req.input.len()),
        _ => (opts.clone(), Default::default()),
    };
    let algo = tuned.algo();
    let lo = crate::lens::LensOptions {
        warp: args
            .lens_warp
            .unwrap_or_else(|| crate::lens::default_warp(&gpu)),
        sample: args.lens_sample,
        seed: args.seed,
        roofline: Default::default(),
    }
    .with_wisdom(wisdom.as_ref(), req.input.len());
    let (res, algo, applied) = match crate::algo::run(algo, &gpu, &req) {
        Ok(r) => (r, algo, applied),
        // A choice this adapter no longer allows: the built-in defaults, said once.
        Err(e @ (Error::Input(_) | Error::Limit(_))) if !applied.is_empty() => {
            eprintln!(
                "warning: wisdom's {} was refused ({e}); using the built-in defaults",
                applied.describe()
            );
            let algo = opts.algo();
            (
                crate::algo::run(algo, &gpu, &req)?,
                algo,
                Default::default(),
            )
        }
        Err(e) => return Err(e),
    };
    let lens = if args.lens {
        Some(pollster::block_on(crate::lens::record_run_async(
            algo, &gpu, &req, &res, &lo,
        ))?)
    } else {
        None
    };
    if args.json {
        let mut more = serde_json::Map::new();
        if !applied.is_empty() {
            more.insert("wisdom".into(), applied.to_json());
        }
        if let Some(l) = &lens {
            more.insert("lens".into(), l.to_json());
            more.insert("lens_model".into(), l.model_json());
            more.insert("lens_sample".into(), l.sample_json());
            if matches!(opts, AlgoOptions::Kernel(_)) {
                more.insert("lens_sites".into(), crate::lens::kernel_sites(l).into());
            }
        }
        // Streamed: a large trace is written as it is serialized, never held as a value tree.
        let mut o = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        let _ = res
            .write_json(&mut o, trace, more, false)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(o))
            .and_then(|_| o.flush());
    } else {
        out(&format!(
            "{} / {} on {}  n = {}  dtype {}",
            res.algorithm, res.variant, res.adapter, res.n, res.dtype
        ));
        if !applied.is_empty() {
            out(&format!(
                "wisdom ({}): {}",
                applied.from,
                applied.describe()
            ));
        }
        if trace {
            for s in &res.stages {
                out(&format!("{:<28} {}", s.label, fmt_values(&s.data, 64)));
                // Stages that say who read what (e.g. scan's phases): the (thread, source) pairs.
                if let Some(reads) = s.scan().and_then(|n| n.reads())
                    && !reads.is_empty()
                {
                    let pairs: Vec<String> = reads
                        .iter()
                        .take(64)
                        .map(|(t, src)| format!("{t},{src}"))
                        .collect();
                    let more = reads.len().saturating_sub(64);
                    let more = if more > 0 {
                        format!(" … ({more} more)")
                    } else {
                        String::new()
                    };
                    out(&format!(
                        "{:<28} reads (thread,source): {}{more}",
                        "",
                        pairs.join(" ")
                    ));
                }
            }
        }
        out(&format!("output: {}", fmt_values(&res.output, 64)));
        for p in &res.passes {
            out(&format!(
                "  {:<44} {}",
                p.label,
                p.gpu_ms
                    .map_or("unavailable".to_string(), |t| format!("{t:.4} ms"))
            ));
        }
        match res.extra.get("unverified").and_then(|v| v.as_str()) {
            Some(why) => out(&format!("unverified: {why}")),
            None => out(&format!("verified against the CPU model: {}", res.verified)),
        }
        if let Some(l) = &lens {
            out(l.text().trim_end());
            if matches!(opts, AlgoOptions::Kernel(_)) {
                out("  your kernel's access sites:");
                for s in crate::lens::kernel_sites(l) {
                    out(&format!(
                        "    line {}:{} {} {} {}   | {}",
                        s["line"],
                        s["col"],
                        s["kind"].as_str().unwrap_or(""),
                        s["memory"].as_str().unwrap_or(""),
                        s["expr"].as_str().unwrap_or(""),
                        s["text"].as_str().unwrap_or("")
                    ));
                }
            }
        }
    }
    // Files are written after the result is printed, so a write that fails loses nothing computed;
    // they are written even when the GPU disagrees with the model (the output is what to look at).
    if let Some(path) = &args.save_output {
        crate::export::save_output(&res.output, res.output_value().as_ref(), path)?;
    }
    if let Some(path) = &args.save_trace {
        crate::export::save_trace(&res, path)?;
    }
    if let Some(m) = &res.mismatch {
        eprintln!("stagewise: GPU result differs from the CPU model: {m}");
        return Ok(3);
    }
    Ok(0)
}

fn fmt_values(d: &Data, max: usize) -> String {
    let mut s: Vec<String> = (0..d.len().min(max)).map(|i| d.fmt_elem(i)).collect();
    if d.len() > max {
        s.push(format!("… ({} more)", d.len() - max));
    }
    s.join(" ")
}
