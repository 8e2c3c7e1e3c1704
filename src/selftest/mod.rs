//! `stagewise selftest` (and the app's Help ▸ Self-test…): random cases of every algorithm and
//! variant on this GPU for a chosen time, each run exactly as `stagewise run` runs it
//! (its words read by the CLI's parser, passed in as [`CommandWords`], the request resolved, then
//! [`crate::algo::run`], which checks the GPU against the CPU model), and a report: per variant how many cases passed, failed or were refused, and every
//! failure with the command that reproduces it.
//!
//! A refusal (an option or size this adapter's limits refuse) is not a failure; a GPU result that
//! differs from the model is, and so are GPU validation errors, device loss and panics.
//!
//! With wisdom (`stagewise tune`'s defaults for this GPU) every case takes its choices for the
//! options it leaves unset, as `stagewise run` does for an untraced run (a choice refused at the
//! case's size: the built-in defaults, as `run` falls back), so what users get is what is checked.
//! The reproducing command spells the filled options out as flags.

pub mod cases;

use crate::error::Error;
use crate::gpu::Gpu;
use crate::request::CommandWords;
use crate::wisdom::{Applied, Loaded};
pub use cases::Case;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use web_time::Instant;

/// The text report lists this many refused cases (the JSON all of them).
const MAX_REFUSALS_SHOWN: usize = 20;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Time to spend; at least one case of every variant runs whatever it is.
    pub minutes: f64,
    /// Exactly this many cases instead of a time (one round covers every variant).
    pub cases: Option<usize>,
    pub seed: u64,
    /// Added to the reproducing commands (`--adapter`).
    pub adapter: Option<String>,
    /// The wisdom the cases take their unset options from (None: the built-in defaults).
    pub wisdom: Option<Loaded>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            minutes: 1.0,
            cases: None,
            seed: 1,
            adapter: None,
            wisdom: None,
        }
    }
}

/// How one case ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Passed,
    /// The GPU disagreed with the model, or the run hit a GPU error or a panic.
    Failed(String),
    /// Refused before or while planning: an option, size or limit this adapter does not take.
    Refused(String),
}

/// One variant's counts.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub algorithm: &'static str,
    pub variant: &'static str,
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
    pub refused: usize,
    /// Cases that took options from wisdom.
    pub wisdom: usize,
}

/// A case that ran with options from wisdom: what it filled, and how the case ended.
#[derive(Clone, Debug)]
pub struct WisdomNote {
    pub algorithm: &'static str,
    pub variant: &'static str,
    /// The reproducing command, the filled options written as flags.
    pub command: String,
    pub applied: Applied,
    /// Wisdom's choice was refused at this size and the built-in defaults ran (why).
    pub refused: Option<String>,
    /// "passed", "failed" or "refused".
    pub outcome: &'static str,
}

/// A case that did not pass, with why and how to run it again.
#[derive(Clone, Debug)]
pub struct Note {
    pub algorithm: &'static str,
    pub variant: &'static str,
    pub command: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub adapter: String,
    pub seed: u64,
    pub elapsed_s: f64,
    pub rows: Vec<Row>,
    pub failures: Vec<Note>,
    pub refusals: Vec<Note>,
    /// Stopped before its time or count (the Stop button, or the device was lost).
    pub stopped: bool,
    /// The wisdom file in use (None: the built-in defaults), and every case that took from it.
    pub wisdom_from: Option<String>,
    pub wisdom: Vec<WisdomNote>,
}

/// Where a running selftest is.
#[derive(Clone, Debug)]
pub struct Progress {
    pub done: usize,
    pub passed: usize,
    pub failed: usize,
    pub refused: usize,
    pub elapsed_s: f64,
    /// The time budget (seconds), or the case count when a count was asked for.
    pub budget: String,
    /// The case about to run.
    pub current: String,
}

impl Progress {
    pub fn line(&self) -> String {
        format!(
            "selftest: {} cases ({} passed, {} failed, {} refused), {:.0} s of {}; now: {}",
            self.done,
            self.passed,
            self.failed,
            self.refused,
            self.elapsed_s,
            self.budget,
            self.current
        )
    }
}

impl Report {
    pub fn cases(&self) -> usize {
        self.rows.iter().map(|r| r.cases).sum()
    }
    pub fn passed(&self) -> usize {
        self.rows.iter().map(|r| r.passed).sum()
    }
    pub fn refused(&self) -> usize {
        self.rows.iter().map(|r| r.refused).sum()
    }

    /// The exit code: 1 when anything failed.
    pub fn exit_code(&self) -> i32 {
        i32::from(!self.failures.is_empty())
    }

    /// The table and the failures, as `stagewise selftest` prints them.
    pub fn text(&self) -> String {
        let mut s = format!(
            "stagewise selftest on {}: seed {}, {} cases in {:.1} s{}\n",
            self.adapter,
            self.seed,
            self.cases(),
            self.elapsed_s,
            if self.stopped { " (stopped)" } else { "" }
        );
        s += &format!(
            "{:<10} {:<18} {:>6} {:>7} {:>7} {:>8}\n",
            "algorithm", "variant", "cases", "passed", "failed", "refused"
        );
        for r in &self.rows {
            s += &format!(
                "{:<10} {:<18} {:>6} {:>7} {:>7} {:>8}\n",
                r.algorithm, r.variant, r.cases, r.passed, r.failed, r.refused
            );
        }
        s += &format!(
            "{:<10} {:<18} {:>6} {:>7} {:>7} {:>8}\n",
            "total",
            "",
            self.cases(),
            self.passed(),
            self.failures.len(),
            self.refused()
        );
        if self.failures.is_empty() {
            s += "no failures\n";
        } else {
            s += &format!("{} failure(s):\n", self.failures.len());
            for f in &self.failures {
                s += &format!(
                    "FAILED {}/{}: {}\n  {}\n",
                    f.algorithm, f.variant, f.reason, f.command
                );
            }
        }
        match &self.wisdom_from {
            None => s += "wisdom: none (the built-in defaults)\n",
            Some(from) => {
                s += &format!(
                    "wisdom ({from}): {} of {} cases took its choices\n",
                    self.wisdom.len(),
                    self.cases()
                );
                for w in self.wisdom.iter().take(MAX_REFUSALS_SHOWN) {
                    let fell = match &w.refused {
                        Some(why) => format!(" (refused: {why}; the built-in defaults ran)"),
                        None => String::new(),
                    };
                    s += &format!(
                        "wisdom {}/{}: {} {}{fell}\n  {}\n",
                        w.algorithm,
                        w.variant,
                        w.applied.describe(),
                        w.outcome,
                        w.command
                    );
                }
                if self.wisdom.len() > MAX_REFUSALS_SHOWN {
                    s += &format!(
                        "… {} more took wisdom (--json lists them all)\n",
                        self.wisdom.len() - MAX_REFUSALS_SHOWN
                    );
                }
            }
        }
        if !self.refusals.is_empty() {
            s += &format!("{} refused (not failures):\n", self.refusals.len());
            for f in self.refusals.iter().take(MAX_REFUSALS_SHOWN) {
                s += &format!(
                    "refused {}/{}: {}\n  {}\n",
                    f.algorithm, f.variant, f.reason, f.command
                );
            }
            if self.refusals.len() > MAX_REFUSALS_SHOWN {
                s += &format!(
                    "… {} more refused (--json lists them all)\n",
                    self.refusals.len() - MAX_REFUSALS_SHOWN
                );
            }
        }
        s
    }

    pub fn to_json(&self) -> Value {
        let notes = |v: &[Note]| -> Vec<Value> {
            v.iter()
                .map(|f| {
                    json!({"algorithm": f.algorithm, "variant": f.variant,
                           "reason": f.reason, "command": f.command})
                })
                .collect()
        };
        json!({
            "adapter": self.adapter,
            "seed": self.seed,
            "elapsed_s": self.elapsed_s,
            "stopped": self.stopped,
            "cases": self.cases(),
            "passed": self.passed(),
            "failed": self.failures.len(),
            "refused": self.refused(),
            "rows": self.rows.iter().map(|r| json!({
                "algorithm": r.algorithm, "variant": r.variant, "cases": r.cases,
                "passed": r.passed, "failed": r.failed, "refused": r.refused,
                "wisdom": r.wisdom,
            })).collect::<Vec<_>>(),
            "failures": notes(&self.failures),
            "refusals": notes(&self.refusals),
            "wisdom": self.wisdom_from.as_ref().map(|from| json!({
                "from": from,
                "cases": self.wisdom.iter().map(|w| json!({
                    "algorithm": w.algorithm, "variant": w.variant, "case": w.applied.case,
                    "options": w.applied.fields, "outcome": w.outcome,
                    "refused": w.refused, "command": w.command,
                })).collect::<Vec<_>>(),
            })),
        })
    }
}

/// What wisdom fills into a case: the options it runs with, what was filled, and the case's words
/// with the filled options as flags (or, where flags cannot say it, `--wisdom FILE`).
pub struct Fill {
    pub options: crate::algo::AlgoOptions,
    pub applied: Applied,
    pub args: Vec<String>,
}

/// Wisdom's fill for `case`, as `stagewise run` computes it for an untraced run (None: nothing to
/// fill, or the case makes no request).
pub fn fill(words: &dyn CommandWords, case: &Case, w: &Loaded) -> Option<Fill> {
    let spec = case.parse(words).ok()?.ok()?;
    let req = spec.resolve().ok()?;
    if req.trace {
        return None;
    }
    let (options, applied) = w.apply(&spec.algo, req.variant.name, req.dtype, req.input.len());
    if applied.is_empty() {
        return None;
    }
    let mut args = case.args.clone();
    for (k, v) in &applied.fields {
        args.push(format!("--{}", k.replace('_', "-")));
        args.push(match v {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        });
    }
    // The flags must give exactly the filled options; else the command names the file instead.
    let same = matches!(words.run(&args), Ok(Ok(s)) if s.algo.fields() == options.fields());
    if !same {
        args = case.args.clone();
        args.extend(["--wisdom".to_string(), w.from.clone()]);
    }
    Some(Fill {
        options,
        applied,
        args,
    })
}

/// Run one case as `stagewise run` would: parse, prepare, run and check against the model. With
/// `filled` (see [`fill`]) the case runs with those options, and where this adapter refuses them
/// with its own (`run`'s fallback): the second value says why they were refused.
pub async fn run_case(
    gpu: &Gpu,
    words: &dyn CommandWords,
    case: &Case,
    filled: Option<&crate::algo::AlgoOptions>,
) -> (Outcome, Option<String>) {
    let spec = match case.parse(words) {
        Ok(s) => s,
        Err(e) => {
            let e = e.lines().next().unwrap_or("");
            return (
                Outcome::Failed(format!("the CLI does not accept the case: {e}")),
                None,
            );
        }
    };
    let mut fell_back = None;
    let run = async {
        let spec = spec?;
        let req = spec.resolve()?;
        let algo = filled.unwrap_or(&spec.algo);
        let mut keep = crate::algo::Stages::keep();
        let res = match crate::algo::run_streamed(algo.algo(), gpu, &req, &mut keep).await {
            Err(e @ (Error::Input(_) | Error::Limit(_))) if filled.is_some() => {
                fell_back = Some(e.to_string());
                let mut keep = crate::algo::Stages::keep();
                crate::algo::run_streamed(spec.algo.algo(), gpu, &req, &mut keep).await?
            }
            r => r?,
        };
        Ok::<_, Error>(res.mismatch)
    };
    // Natively a panic is caught and reported as the case's failure; in the browser a panic
    // aborts (wasm has no unwinding), so there is nothing to catch.
    #[cfg(not(target_arch = "wasm32"))]
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pollster::block_on(run)));
    #[cfg(target_arch = "wasm32")]
    let caught: std::thread::Result<Result<Option<String>, Error>> = Ok(run.await);
    let outcome = match caught {
        Ok(Ok(None)) => Outcome::Passed,
        Ok(Ok(Some(m))) => Outcome::Failed(format!("GPU result differs from the CPU model: {m}")),
        Ok(Err(e @ (Error::Input(_) | Error::Limit(_) | Error::OutOfMemory(_)))) => {
            Outcome::Refused(e.to_string())
        }
        Ok(Err(e)) => Outcome::Failed(e.to_string()),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Outcome::Failed(format!("internal error (panic): {msg}"))
        }
    };
    (outcome, fell_back)
}

/// Run the selftest on `gpu` until the time (or count) is spent or `stop` says so; `progress`
/// hears about every case before it runs and once at the end.
pub async fn run(
    gpu: &Gpu,
    cfg: &Config,
    words: &dyn CommandWords,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&Progress),
) -> Report {
    let t0 = Instant::now();
    let budget_s = cfg.minutes.max(0.0) * 60.0;
    let pairs = cases::pairs();
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let mut report = Report {
        adapter: gpu.adapter_name(),
        seed: cfg.seed,
        rows: pairs
            .iter()
            .map(|&(algorithm, variant)| Row {
                algorithm,
                variant,
                ..Default::default()
            })
            .collect(),
        wisdom_from: cfg.wisdom.as_ref().map(|w| w.from.clone()),
        ..Default::default()
    };
    let budget = match cfg.cases {
        Some(c) => format!("{c} cases"),
        None => format!("{budget_s:.0} s"),
    };
    let mut p = Progress {
        done: 0,
        passed: 0,
        failed: 0,
        refused: 0,
        elapsed_s: 0.0,
        budget,
        current: String::new(),
    };
    let mut i = 0usize;
    loop {
        let more = match cfg.cases {
            Some(c) => i < c,
            // Every variant runs at least once, then cases until the time is spent.
            None => i < pairs.len() || t0.elapsed().as_secs_f64() < budget_s,
        };
        if !more {
            break;
        }
        if stop() {
            report.stopped = true;
            break;
        }
        let k = i % pairs.len();
        let (algorithm, variant) = pairs[k];
        // Every fourth round lets the cheap models take larger sizes.
        let big = (i / pairs.len()) % 4 == 3;
        let case = cases::generate(gpu, words, &mut rng, algorithm, variant, big);
        let filled = cfg.wisdom.as_ref().and_then(|w| fill(words, &case, w));
        let command = match &filled {
            Some(f) => Case {
                args: f.args.clone(),
                ..case.clone()
            }
            .command(cfg.adapter.as_deref()),
            None => case.command(cfg.adapter.as_deref()),
        };
        p.current = command.clone();
        p.elapsed_s = t0.elapsed().as_secs_f64();
        progress(&p);
        let (outcome, fell_back) =
            run_case(gpu, words, &case, filled.as_ref().map(|f| &f.options)).await;
        let row = &mut report.rows[k];
        row.cases += 1;
        p.done += 1;
        // Where wisdom's choice was refused the defaults ran: a failure is the plain case's.
        let note_command = match &fell_back {
            Some(_) => case.command(cfg.adapter.as_deref()),
            None => command.clone(),
        };
        let word = match &outcome {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "failed",
            Outcome::Refused(_) => "refused",
        };
        if let Some(f) = filled {
            row.wisdom += 1;
            report.wisdom.push(WisdomNote {
                algorithm,
                variant,
                command: command.clone(),
                applied: f.applied,
                refused: fell_back,
                outcome: word,
            });
        }
        let note = |reason: String| Note {
            algorithm,
            variant,
            command: note_command,
            reason,
        };
        match outcome {
            Outcome::Passed => {
                row.passed += 1;
                p.passed += 1;
            }
            Outcome::Failed(why) => {
                row.failed += 1;
                p.failed += 1;
                report.failures.push(note(why));
            }
            Outcome::Refused(why) => {
                row.refused += 1;
                p.refused += 1;
                report.refusals.push(note(why));
            }
        }
        i += 1;
        // A lost device fails every case after it: the report says so once.
        if gpu.check_lost().is_some() {
            report.stopped = true;
            break;
        }
    }
    report.elapsed_s = t0.elapsed().as_secs_f64();
    p.elapsed_s = report.elapsed_s;
    p.current = "done".into();
    progress(&p);
    report
}
