//! Benchmarks in timed mode, shared by `stagewise bench` and the app's performance lab. Every row
//! carries the copy roofline measured on the same adapter, at the same N, in the same run.

use crate::algo::{AlgoOptions, Variant};
use crate::data::DType;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, time_with};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchRow {
    pub algorithm: String,
    pub variant: String,
    pub n: u64,
    /// The bytes one run must move at least (read + write), the floor's numerator.
    pub bytes: u64,
    pub median_ms: f64,
    pub gbps: f64,
    pub copy_gbps: f64,
    pub fraction_of_copy: f64,
    pub min_ms: f64,
    pub reps: usize,
    /// Elements processed per second, in billions (keys/s for sorts).
    pub gitems_per_s: f64,
    /// Every pass's own median (its label and GPU ms, timestamps at its start and end); what
    /// `median_ms` adds beyond their sum is the gaps between passes.
    #[serde(default)]
    pub passes: Vec<PassTime>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PassTime {
    pub label: String,
    pub median_ms: f64,
}

#[derive(Clone, Debug)]
pub struct BenchSpec {
    /// (algorithm, variants to run; empty = all of its variants)
    pub cases: Vec<(AlgoOptions, Vec<&'static Variant>)>,
    pub sizes: Vec<usize>,
    pub reps: usize,
    pub warmup: usize,
    pub dtype: DType,
    /// Skip cases an algorithm refuses at a size (for `--all`) instead of failing.
    pub skip_refused: bool,
    /// Warm up for at least this long as well (ms; 0: just `warmup` runs). The GPU idles at low
    /// clocks during CPU-bound work between cases; a count of runs that is enough at 2^28 is a
    /// few microseconds of work at 2^20.
    pub min_warmup_ms: f64,
}

/// Warm the GPU on `plan` for `spec.min_warmup_ms` of wall time (its clocks ramp up under load);
/// the `spec.warmup` counted runs follow in [`time_with`].
fn warm_up(gpu: &Gpu, spec: &BenchSpec, plan: &crate::gpu::Plan) -> Result<usize> {
    if spec.min_warmup_ms <= 0.0 {
        return Ok(spec.warmup);
    }
    crate::gpu::timed::warm_for(gpu, plan, spec.min_warmup_ms)?;
    Ok(spec.warmup)
}

pub const CSV_HEADER: &str =
    "algorithm,variant,n,bytes,median_ms,gbps,copy_gbps,fraction_of_copy,min_ms,reps,gitems_per_s";

impl BenchRow {
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{:.6},{:.3},{:.3},{:.4},{:.6},{},{:.4}",
            self.algorithm,
            self.variant,
            self.n,
            self.bytes,
            self.median_ms,
            self.gbps,
            self.copy_gbps,
            self.fraction_of_copy,
            self.min_ms,
            self.reps,
            self.gitems_per_s
        )
    }
}

/// In sweeps over every algorithm, plans with more passes than this are skipped (they are timed
/// when benchmarked on their own).
pub const MAX_SWEEP_PASSES: usize = 4096;
/// ... and cases whose one run takes longer than this (seconds); cases over 0.1 s get 5 reps.
pub const MAX_SWEEP_SECONDS: f64 = 2.0;

/// Messages a running benchmark sends (the UI streams them; the CLI prints rows).
pub enum Event {
    Row(BenchRow),
    Skipped(String),
    Progress { done: usize, total: usize },
}

/// Run the sweep. `on_event` sees rows as they are measured; `cancelled` is polled between reps.
pub fn run(
    gpu: &Gpu,
    spec: &BenchSpec,
    on_event: &mut dyn FnMut(Event),
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<BenchRow>> {
    let copy = crate::algo::copy::Options::default();
    let copy_variant = &crate::algo::Algorithm::info(&copy).variants[0];
    let mut copy_gbps: HashMap<usize, f64> = HashMap::new();
    let mut rows = Vec::new();
    let total: usize = spec
        .cases
        .iter()
        .map(|(a, v)| {
            if v.is_empty() {
                a.algo().info().variants.len()
            } else {
                v.len()
            }
        })
        .sum::<usize>()
        * spec.sizes.len();
    let mut done = 0;
    for &n in &spec.sizes {
        gpu.check_elements(n, "bench")?;
        for (algo_opts, variants) in &spec.cases {
            let algo = algo_opts.algo();
            let info = algo.info();
            let vs: Vec<&Variant> = if variants.is_empty() {
                info.variants.iter().collect()
            } else {
                variants.clone()
            };
            for v in vs {
                if cancelled() {
                    return Err(Error::Cancelled);
                }
                let roof = match copy_gbps.get(&n) {
                    Some(&g) => g,
                    None => {
                        let case = crate::algo::Algorithm::bench_case(
                            &copy,
                            gpu,
                            copy_variant,
                            n,
                            spec.dtype,
                        )?;
                        let w = warm_up(gpu, spec, &case.plan)?;
                        let t = time_with(gpu, &case.plan, w, spec.reps, cancelled)?;
                        let g = case.bytes as f64 / (t.total_ms * 1e6);
                        copy_gbps.insert(n, g);
                        g
                    }
                };
                let shape = crate::algo::applies::RunShape {
                    variant: v.name,
                    trace: false,
                    generated_input: false,
                };
                let case = match crate::algo::applies::check(algo_opts, shape)
                    .and_then(|_| algo.check_len(n))
                    .and_then(|_| algo.bench_case(gpu, v, n, spec.dtype))
                {
                    Ok(c) => c,
                    Err(e @ (Error::Input(_) | Error::Limit(_))) if spec.skip_refused => {
                        on_event(Event::Skipped(format!(
                            "{} {} n={n}: {e}",
                            info.name, v.name
                        )));
                        done += 1;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                if spec.skip_refused && case.plan.passes.len() > MAX_SWEEP_PASSES {
                    // e.g. one dispatch per phase at large N: minutes per point, not a sweep.
                    on_event(Event::Skipped(format!(
                        "{} {} n={n}: {} passes per run (over {MAX_SWEEP_PASSES}); bench it alone",
                        info.name,
                        v.name,
                        case.plan.passes.len()
                    )));
                    done += 1;
                    continue;
                }
                // Sweeps over everything keep slow cases short: one probe run decides.
                let (mut warmup, mut reps, mut warm) = (spec.warmup, spec.reps, true);
                if spec.skip_refused {
                    let secs = crate::gpu::timed::wall_once(gpu, &case.plan)?;
                    if secs > MAX_SWEEP_SECONDS {
                        on_event(Event::Skipped(format!(
                            "{} {} n={n}: {secs:.1} s per run; bench it alone",
                            info.name, v.name
                        )));
                        done += 1;
                        continue;
                    }
                    if secs > 0.1 {
                        (warmup, reps, warm) = (warmup.min(1), reps.min(5), false);
                    }
                }
                if warm {
                    warmup = warm_up(gpu, spec, &case.plan)?;
                }
                let t = time_with(gpu, &case.plan, warmup, reps, cancelled)?;
                let gbps = case.bytes as f64 / (t.total_ms * 1e6);
                let row = BenchRow {
                    algorithm: info.name.to_string(),
                    variant: v.name.to_string(),
                    n: n as u64,
                    bytes: case.bytes,
                    median_ms: t.total_ms,
                    gbps,
                    copy_gbps: roof,
                    fraction_of_copy: gbps / roof,
                    min_ms: t.min_ms,
                    reps: t.reps,
                    gitems_per_s: case.items as f64 / (t.total_ms * 1e6),
                    passes: pass_times(&case.plan, &t.pass_ms),
                };
                on_event(Event::Row(row.clone()));
                rows.push(row);
                done += 1;
                on_event(Event::Progress { done, total });
            }
        }
    }
    Ok(rows)
}

/// Per-pass medians for the JSON row; plans of many passes (one per phase) list the first 64.
fn pass_times(plan: &crate::gpu::Plan, ms: &[f64]) -> Vec<PassTime> {
    plan.passes
        .iter()
        .zip(ms)
        .take(64)
        .map(|(p, &m)| PassTime {
            label: p.label.clone(),
            median_ms: m,
        })
        .collect()
}

/// Parse `A..B` (inclusive log2 range) or a single `A`.
pub fn parse_log_range(s: &str) -> Result<(u32, u32)> {
    let bad = || {
        Error::Input(format!(
            "--log-n '{s}': expected A..B (e.g. 20..28) or a single A"
        ))
    };
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (
            a.trim().parse().map_err(|_| bad())?,
            b.trim()
                .trim_start_matches('=')
                .parse()
                .map_err(|_| bad())?,
        ),
        None => {
            let a: u32 = s.trim().parse().map_err(|_| bad())?;
            (a, a)
        }
    };
    if a > b || b > 31 {
        return Err(Error::Input(format!("--log-n '{s}': need A <= B <= 31")));
    }
    Ok((a, b))
}
