//! Benchmarks in timed mode, shared by `stagewise bench` and the app's performance lab. Every row
//! carries the copy roofline measured on the same adapter, at the same N, in the same run.

use crate::algo::{Algo, AlgoOptions, VariantInfo};
use crate::data::DType;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, time_with};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchRow {
    pub algorithm: Algo,
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
    /// The warm-up done before this row's timed runs: wall time (ms) and runs; the same-run copy's
    /// warm-up at this N in `copy_warmup_ms`.
    #[serde(default)]
    pub warmup_ms: f64,
    #[serde(default)]
    pub warmup_runs: usize,
    #[serde(default)]
    pub copy_warmup_ms: f64,
    /// Faster than the same-run copy by more than [`SUSPECT_FRACTION`] where that copy's traffic
    /// is past the caches ([`is_suspect`]): likelier a copy timed at idle clocks than a result.
    #[serde(default)]
    pub suspect: bool,
    /// Timed by the wall clock: the device's timestamps disagreed with it
    /// ([`crate::gpu::timed::clock_check`]). Absent from JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wall_clock: bool,
    /// Which of the spec's cases measured it: one algorithm may be swept with different options
    /// (the lab's sort family: radix keys only and key-value). Not serialized.
    #[serde(skip)]
    pub case: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PassTime {
    pub label: String,
    pub median_ms: f64,
}

#[derive(Clone, Debug)]
pub struct BenchSpec {
    /// (algorithm, variants to run; empty = all of its variants)
    pub cases: Vec<(AlgoOptions, Vec<&'static VariantInfo>)>,
    pub sizes: Vec<usize>,
    pub reps: usize,
    pub warmup: usize,
    pub dtype: DType,
    /// Skip cases an algorithm refuses at a size (for `--all`) instead of failing.
    pub skip_refused: bool,
    /// Warm up for at least this long first (ms of wall time; 0: just `warmup` runs). The GPU
    /// idles at low clocks during CPU-bound work between cases; a count of runs that is enough at
    /// 2^28 is a few microseconds of work at 2^20. Every timed path defaults to
    /// [`DEFAULT_MIN_WARMUP_MS`].
    pub min_warmup_ms: f64,
    /// The roofline's copy (`copy vec4`) shape: auto fields are filled from wisdom by
    /// [`run_with_wisdom`], as a case's are, so every ratio is to this GPU's fastest copy.
    pub roofline: crate::algo::copy::Options,
}

pub use crate::gpu::timed::DEFAULT_MIN_WARMUP_MS;
/// The longest warm-up asked for that is accepted (ms).
pub const MAX_MIN_WARMUP_MS: f64 = 60_000.0;

/// A ratio to the same-run copy above this is suspect where the copy is past the caches.
pub const SUSPECT_FRACTION: f64 = 1.05;
/// The copy's traffic (bytes read + written) from which it cannot run from the L2: 256 MiB, over
/// 4x the L2 of an H100 or H200 (50 MiB). wgpu reports no cache sizes, so one floor for all.
pub const SUSPECT_MIN_COPY_BYTES: u64 = 256 << 20;

/// Whether a row `fraction` of the copy is a suspect result: faster than a copy of the same N by
/// more than 5 % where that copy moves `copy_bytes` >= 256 MiB. Past the caches nothing moves its
/// floor's bytes faster than a copy; such a ratio says the copy was timed cold (idle clocks).
pub fn is_suspect(copy_bytes: u64, fraction: f64) -> bool {
    copy_bytes >= SUSPECT_MIN_COPY_BYTES && fraction > SUSPECT_FRACTION
}

/// Check that `gpu`'s timestamps measure the work (a batch of copies of 2^18 words timed by them
/// and by the wall clock, [`crate::gpu::timed::clock_check`]); where they do not, the device
/// shows no pass times and timed mode uses the wall clock until a check agrees again. The app
/// checks after every traced run: lavapipe's timestamps go wrong only once a window is drawn.
pub async fn check_clock(gpu: &Gpu) -> Result<()> {
    if !gpu.has_timestamps() {
        return Ok(());
    }
    let copy = crate::algo::copy::Options::default();
    let variant = &crate::algo::Algorithm::info(&copy).variants[0];
    let case = crate::algo::Algorithm::bench_case(&copy, gpu, variant, 1 << 18, DType::U32)?;
    let (verdict, _) = crate::gpu::timed::clock_check(gpu, &case.plan).await?;
    crate::gpu::timed::judge(gpu, verdict);
    Ok(())
}

/// The warm-up done before a case was timed.
#[derive(Clone, Copy, Debug, Default)]
struct Warmup {
    ms: f64,
    runs: usize,
}

/// Warm the GPU on `plan`: back to back for `min_ms` of wall time (its clocks ramp up only under
/// sustained load), then `runs` counted runs. Returns what was done.
async fn warm_up(gpu: &Gpu, plan: &crate::gpu::Plan, min_ms: f64, runs: usize) -> Result<Warmup> {
    let t0 = web_time::Instant::now();
    let timed = if min_ms > 0.0 {
        crate::gpu::timed::warm_for(gpu, plan, min_ms).await?
    } else {
        0
    };
    crate::gpu::timed::run_times(gpu, plan, runs).await?;
    Ok(Warmup {
        ms: t0.elapsed().as_secs_f64() * 1e3,
        runs: timed + runs,
    })
}

/// `STAGEWISE_FAULT=copy-time:F`, a test hook: the same-run copy's measured time is multiplied by
/// F (> 0), so rows read F times their ratio to the copy. 1 when unset.
fn copy_time_scale() -> Result<f64> {
    let fault = std::env::var("STAGEWISE_FAULT").unwrap_or_default();
    for f in fault.split(',') {
        if let Some(v) = f.trim().strip_prefix("copy-time:") {
            return match v.trim().parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err(Error::input(format!(
                    "STAGEWISE_FAULT=copy-time:{v}: expected a factor > 0, e.g. copy-time:4"
                ))),
            };
        }
    }
    Ok(1.0)
}

pub const CSV_HEADER: &str = "algorithm,variant,n,bytes,median_ms,gbps,copy_gbps,fraction_of_copy,min_ms,reps,gitems_per_s,warmup_ms,note";

impl BenchRow {
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{:.6},{:.3},{:.3},{:.4},{:.6},{},{:.4},{:.1},{}",
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
            self.gitems_per_s,
            self.warmup_ms,
            self.note()
        )
    }

    /// `suspect` for a suspect row ([`is_suspect`]), `wall clock` for a row timed by the wall
    /// clock, else empty: the text and CSV outputs' word.
    pub fn note(&self) -> &'static str {
        match (self.suspect, self.wall_clock) {
            (true, true) => "suspect; wall clock",
            (true, false) => "suspect",
            (false, true) => "wall clock",
            (false, false) => "",
        }
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
    Progress {
        done: usize,
        total: usize,
    },
    /// [`run_with_wisdom`]: options a case took from wisdom at a size (all before the first row).
    Wisdom(Filled),
    /// [`run_with_wisdom`]: a choice of wisdom refused at a size (a limit of this adapter); that
    /// size runs again with the built-in defaults. The line says so.
    WisdomRefused(String),
}

/// Options a sweep took from wisdom: the case at one size and what was filled.
#[derive(Clone, Debug)]
pub struct Filled {
    pub algorithm: &'static str,
    pub variant: &'static str,
    pub n: usize,
    pub applied: crate::wisdom::Applied,
}

/// The roofline's copy at `n` words: `base` with its auto fields filled from `w` (None: no
/// wisdom), and what was.
pub fn roofline(
    base: &crate::algo::copy::Options,
    w: Option<&crate::wisdom::Loaded>,
    n: usize,
) -> (crate::algo::copy::Options, crate::wisdom::Applied) {
    let applied = w.map(|w| w.apply(&AlgoOptions::Copy(*base), "vec4", DType::U32, n));
    match applied {
        Some((AlgoOptions::Copy(o), applied)) => (o, applied),
        _ => (*base, Default::default()),
    }
}

/// The sweep with wisdom: one spec per size whose cases are each one variant with its options
/// filled from the wisdom for that variant at that size (the rows come in the same order as from
/// `spec`), each with the index in `spec.cases` of each of its cases; and what was filled.
/// Where nothing applies: `spec` itself.
pub fn with_wisdom(
    spec: &BenchSpec,
    w: &crate::wisdom::Loaded,
) -> (Vec<(BenchSpec, Vec<usize>)>, Vec<Filled>) {
    let mut filled = Vec::new();
    let mut specs = Vec::new();
    for &n in &spec.sizes {
        let (mut cases, mut index) = (Vec::new(), Vec::new());
        let (roofline, applied) = roofline(&spec.roofline, Some(w), n);
        if !applied.is_empty() {
            filled.push(Filled {
                algorithm: "copy",
                variant: "roofline",
                n,
                applied,
            });
        }
        for (k, (opts, vs)) in spec.cases.iter().enumerate() {
            let info = opts.algo().info();
            let vs: Vec<&'static VariantInfo> = if vs.is_empty() {
                info.variants.iter().collect()
            } else {
                vs.clone()
            };
            for v in vs {
                let (o, applied) = w.apply(opts, v.name, spec.dtype, n);
                if !applied.is_empty() {
                    filled.push(Filled {
                        algorithm: info.name,
                        variant: v.name,
                        n,
                        applied,
                    });
                }
                cases.push((o, vec![v]));
                index.push(k);
            }
        }
        specs.push((
            BenchSpec {
                cases,
                sizes: vec![n],
                roofline,
                ..spec.clone()
            },
            index,
        ));
    }
    if filled.is_empty() {
        let all = (0..spec.cases.len()).collect();
        return (vec![(spec.clone(), all)], filled);
    }
    (specs, filled)
}

/// Cases times sizes: the rows a sweep of `spec` measures at most.
fn points(spec: &BenchSpec) -> usize {
    spec.cases
        .iter()
        .map(|(a, v)| {
            if v.is_empty() {
                a.algo().info().variants.len()
            } else {
                v.len()
            }
        })
        .sum::<usize>()
        * spec.sizes.len()
}

/// [`run`], with the options each case left unset filled from `wisdom` for its variant at each
/// size, as `stagewise bench`, the suite and the app's lab time what users get. What was filled
/// comes first as [`Event::Wisdom`]; a size whose choice this adapter refuses runs again with the
/// built-in defaults ([`Event::WisdomRefused`]). Rows and progress read as one sweep's.
pub async fn run_with_wisdom(
    gpu: &Gpu,
    spec: &BenchSpec,
    wisdom: Option<&crate::wisdom::Loaded>,
    on_event: &mut dyn FnMut(Event),
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<BenchRow>> {
    let Some(w) = wisdom else {
        return run(gpu, spec, on_event, cancelled).await;
    };
    let (specs, filled) = with_wisdom(spec, w);
    let took = !filled.is_empty();
    for f in filled {
        on_event(Event::Wisdom(f));
    }
    let total = points(spec);
    let mut rows = Vec::new();
    let mut base = 0;
    for (one, index) in &specs {
        // Each spec's rows and progress as the whole sweep's: its case index, its count.
        let remap = |r: &mut BenchRow, index: &[usize]| {
            r.case = index.get(r.case).copied().unwrap_or(r.case)
        };
        let mut forward = |e: Event, index: &[usize]| match e {
            Event::Row(mut r) => {
                remap(&mut r, index);
                on_event(Event::Row(r));
            }
            Event::Progress { done, .. } => on_event(Event::Progress {
                done: base + done,
                total,
            }),
            e => on_event(e),
        };
        let got = run(gpu, one, &mut |e| forward(e, index), cancelled).await;
        match got {
            Ok(mut r) => {
                r.iter_mut().for_each(|r| remap(r, index));
                rows.extend(r);
            }
            // A choice this adapter no longer allows: the built-in defaults, said once.
            Err(e @ (Error::Input(_) | Error::Limit(_))) if took => {
                forward(
                    Event::WisdomRefused(format!(
                        "a wisdom choice was refused ({e}); using the built-in defaults"
                    )),
                    index,
                );
                let plain = BenchSpec {
                    sizes: one.sizes.clone(),
                    ..spec.clone()
                };
                let all: Vec<usize> = (0..spec.cases.len()).collect();
                rows.extend(run(gpu, &plain, &mut |e| forward(e, &all), cancelled).await?);
            }
            Err(e) => return Err(e),
        }
        base += points(one);
    }
    Ok(rows)
}

/// Run the sweep. `on_event` sees rows as they are measured; `cancelled` is polled between reps.
pub async fn run(
    gpu: &Gpu,
    spec: &BenchSpec,
    on_event: &mut dyn FnMut(Event),
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<BenchRow>> {
    let copy = spec.roofline;
    let copy_variant = &crate::algo::Algorithm::info(&copy).variants[0];
    // Per N: the copy's GB/s, its bytes and its warm-up (ms).
    let mut copy_at: HashMap<usize, (f64, u64, f64)> = HashMap::new();
    let copy_scale = copy_time_scale()?;
    let mut rows = Vec::new();
    let total = points(spec);
    let mut done = 0;
    for &n in &spec.sizes {
        if n == 0 {
            return Err(Error::input("n must be at least 1"));
        }
        gpu.check_elements(n, "bench")?;
        for (case_index, (algo_opts, variants)) in spec.cases.iter().enumerate() {
            let algo = algo_opts.algo();
            let info = algo.info();
            let vs: Vec<&VariantInfo> = if variants.is_empty() {
                info.variants.iter().collect()
            } else {
                variants.clone()
            };
            for v in vs {
                if cancelled() {
                    return Err(Error::Cancelled);
                }
                let (roof, copy_bytes, copy_warm_ms) = match copy_at.get(&n) {
                    Some(&c) => c,
                    None => {
                        let case = crate::algo::Algorithm::bench_case(
                            &copy,
                            gpu,
                            copy_variant,
                            n,
                            spec.dtype,
                        )?;
                        let w = warm_up(gpu, &case.plan, spec.min_warmup_ms, spec.warmup).await?;
                        let t = time_with(gpu, &case.plan, 0, spec.reps, cancelled).await?;
                        let g = case.bytes as f64 / (t.total_ms * copy_scale * 1e6);
                        let c = (g, case.bytes, w.ms);
                        copy_at.insert(n, c);
                        c
                    }
                };
                let shape = crate::algo::applies::RunShape {
                    variant: v,
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
                let (mut warmup, mut reps, mut warm_ms) =
                    (spec.warmup, spec.reps, spec.min_warmup_ms);
                if spec.skip_refused {
                    let mut secs = crate::gpu::timed::wall_once(gpu, &case.plan).await?;
                    if secs > MAX_SWEEP_SECONDS {
                        // A first run can include the driver's compilation (lavapipe compiles
                        // a kernel at its first dispatch): a second run decides.
                        secs = crate::gpu::timed::wall_once(gpu, &case.plan).await?;
                    }
                    if secs > MAX_SWEEP_SECONDS {
                        on_event(Event::Skipped(format!(
                            "{} {} n={n}: {secs:.1} s per run; bench it alone",
                            info.name, v.name
                        )));
                        done += 1;
                        continue;
                    }
                    if secs > 0.1 {
                        // The probe and one more run: over 0.1 s of load each.
                        (warmup, reps, warm_ms) = (warmup.min(1), reps.min(5), 0.0);
                    }
                }
                let w = warm_up(gpu, &case.plan, warm_ms, warmup).await?;
                let t = time_with(gpu, &case.plan, 0, reps, cancelled).await?;
                let gbps = case.bytes as f64 / (t.total_ms * 1e6);
                let row = BenchRow {
                    algorithm: algo_opts.id(),
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
                    warmup_ms: w.ms,
                    warmup_runs: w.runs,
                    copy_warmup_ms: copy_warm_ms,
                    suspect: is_suspect(copy_bytes, gbps / roof),
                    wall_clock: t.wall_clock,
                    case: case_index,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suspect_is_a_ratio_over_copy_past_the_caches() {
        let past = SUSPECT_MIN_COPY_BYTES;
        assert!(is_suspect(past, 1.06));
        assert!(is_suspect(8 << 30, 2.0));
        // At 1.05 or below, or where the copy fits 256 MiB, a ratio is a result.
        assert!(!is_suspect(past, 1.05));
        assert!(!is_suspect(past, 0.5));
        assert!(!is_suspect(past - 1, 3.0));
    }
}
