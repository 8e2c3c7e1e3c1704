//! Timed mode: nothing read back but timestamps, warm-up runs first, then the median over R
//! repetitions, each timed twice — once with timestamps at the run's two ends only (the total: a
//! timestamp between passes costs the GPU several microseconds of idle each), once around every
//! pass (the pass times); and the wall-clock probes a sweep uses before it
//! commits to repetitions.
//!
//! Timestamps are trusted only while they agree with the wall clock ([`clock_check`]): before
//! the repetitions, a batch of back-to-back runs is timed both ways. lavapipe's timestamps, in a
//! process that also draws a window on the same device (the app), read a thousandth of the
//! work's time; a device whose clock disagrees is timed by the wall clock until a check agrees
//! again ([`Gpu::clock_distrusted`]), the same way in the app and the CLI. Repetitions whose
//! median run reads under a tenth of the agreeing check's are not reported either: the device is
//! distrusted from then and the case timed by the wall clock.

use super::context::Gpu;
use super::runner::{Plan, Timestamps, read_all, readback_buffer, record, ticks_to_ms, wait};
use crate::error::{Error, Result};

/// Whether a device's timestamps measure the work ([`clock_check`]), and a test hook's factor
/// on them.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Why timed mode times the device by the wall clock and traces show no pass times.
    pub distrusted: Option<String>,
    /// Timestamps read this many times the work's time (`STAGEWISE_FAULT=clock:F`; 1 normally).
    pub scale: f64,
    /// The timed repetitions' timestamps only (not the clock check's) read this many times the
    /// work's time (`STAGEWISE_FAULT=clock-reps:F`; 1 normally).
    pub rep_scale: f64,
}

impl Clock {
    /// From `STAGEWISE_FAULT` (comma-separated): `clock:F`, F > 0, scales every timestamp delta;
    /// `clock-reps:F` those of timed repetitions only.
    pub fn from_fault(fault: &str) -> Clock {
        let factor = |key: &str| {
            fault
                .split(',')
                .find_map(|f| f.trim().strip_prefix(key)?.parse::<f64>().ok())
                .filter(|f| *f > 0.0 && f.is_finite())
                .unwrap_or(1.0)
        };
        Clock {
            distrusted: None,
            scale: factor("clock:"),
            rep_scale: factor("clock-reps:"),
        }
    }
}

/// Timed-mode result: medians over the repetitions.
#[derive(Clone, Debug)]
pub struct Timing {
    pub pass_ms: Vec<f64>,
    /// First pass start to last pass end with no timestamp between, median over repetitions.
    pub total_ms: f64,
    pub min_ms: f64,
    pub reps: usize,
    /// Timed by the wall clock: the device's timestamps disagree with it ([`clock_check`]).
    pub wall_clock: bool,
}

impl Timing {
    /// The timing of the repetitions' `totals` (one sample each; not empty): their median and
    /// minimum, beside the passes' times.
    fn of(mut totals: Vec<f64>, pass_ms: Vec<f64>, wall_clock: bool) -> Timing {
        let min_ms = totals.iter().cloned().fold(f64::INFINITY, f64::min);
        Timing {
            pass_ms,
            total_ms: median(&mut totals),
            min_ms,
            reps: totals.len(),
            wall_clock,
        }
    }
}

/// The wall time of a batch of runs that gives the clocks' comparison a verdict (seconds).
const CHECK_SECONDS: f64 = 0.03;
/// Shorter batches give no verdict (latency may dominate them).
const MIN_VERDICT_SECONDS: f64 = 0.01;
/// The timestamps must cover at least this share of the batch's wall time. On a GPU the batch's
/// span is its wall time less one submission's latency (tens of µs against 30 ms).
const MIN_CLOCK_SHARE: f64 = 0.5;
/// Under this share in every try, the timestamps do not measure the work.
const MAX_BROKEN_SHARE: f64 = 0.1;
/// At most this many passes in one wall-timed batch.
const MAX_BATCH_PASSES: usize = 8192;
/// At most this many passes in one batch of the clock check (a 2^18-element copy on an H200 is
/// about 2 µs a run: 8192 runs would not fill the 10 ms a verdict needs).
const MAX_CHECK_PASSES: usize = 1 << 16;
/// Wall-timed samples aim at this long each (seconds): well above a submission's latency.
const WALL_SAMPLE_SECONDS: f64 = 0.01;

/// How many runs of a plan with `passes` passes, `run_s` seconds each, fill `target` seconds.
fn batch_runs(run_s: f64, passes: usize, target: f64) -> usize {
    let cap = (MAX_BATCH_PASSES / passes.max(1)).max(1);
    ((target / run_s.max(1e-7)).ceil() as usize).clamp(1, cap)
}

/// Encode `runs` back-to-back runs of `passes` in one command buffer (no timestamps unless
/// `ts`, numbered across the runs), submit it and wait: the wall seconds from submit to done.
async fn timed_batch(
    gpu: &Gpu,
    passes: &[super::runner::Pass],
    runs: usize,
    ts: Option<(&Timestamps, &wgpu::Buffer)>,
) -> Result<f64> {
    let cmd = gpu.scoped(|| {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        for r in 0..runs {
            record(
                &mut enc,
                passes,
                r * passes.len(),
                ts.map(|t| t.0),
                None,
                |_, _| {},
            );
        }
        if let Some((t, buf)) = ts {
            t.resolve_into(&mut enc, buf, 0);
        }
        enc.finish()
    })?;
    let t0 = web_time::Instant::now();
    gpu.scoped(|| {
        gpu.queue.submit([cmd]);
    })?;
    wait(gpu).await?;
    Ok(t0.elapsed().as_secs_f64())
}

/// The warm-up every timed path does unless told otherwise (`stagewise bench --warmup-ms`, the
/// app's performance lab, a suite file's `min_warmup_ms`, the lens's measured times): this long
/// back to back, then the counted runs.
pub const DEFAULT_MIN_WARMUP_MS: f64 = 300.0;

/// Whether `gpu`'s timestamps measure `plan`'s work: a batch of back-to-back runs (about 30 ms,
/// encoded before the clock starts) timed by its first and last timestamps and by the wall
/// clock from submit to done. Up to three batches: one whose timestamps cover half its wall time
/// agrees; all three under a tenth disagree (lavapipe in the app: a thousandth). Anything between
/// is other work on the same GPU (its wall time waits for it), no verdict; so are batches too
/// short to tell (`None`). Beside the verdict, where it agrees, one run's time by the agreeing
/// batch's timestamps (ms).
pub async fn clock_check(gpu: &Gpu, plan: &Plan) -> Result<(Option<bool>, Option<f64>)> {
    let np = plan.passes.len();
    if np == 0 {
        return Ok((None, None));
    }
    let probe = wall_once(gpu, plan).await?;
    // One run's wall time on a fast GPU is mostly the submission's latency: a batch sized from
    // it can take a millisecond of work. Batches grow until they are long enough to judge.
    let cap = (MAX_CHECK_PASSES / np).max(1);
    let mut runs = batch_runs(probe, np, CHECK_SECONDS).min(cap);
    let mut span = Timestamps::span(gpu, runs * np);
    let buf = gpu.scoped(|| readback_buffer(gpu, 16))?;
    let mut best = 0f64;
    let (mut tries, mut grown) = (0, 0);
    while tries < 3 {
        let wall = timed_batch(gpu, &plan.passes, runs, Some((&span, &buf))).await?;
        if wall < MIN_VERDICT_SECONDS && runs < cap && grown < 4 {
            runs = ((runs as f64 * CHECK_SECONDS / wall.max(1e-6)).ceil() as usize)
                .clamp(runs + 1, cap);
            span = Timestamps::span(gpu, runs * np);
            grown += 1;
            continue;
        }
        tries += 1;
        let words = read_all(gpu, &[(&buf, 16)])
            .await?
            .pop()
            .unwrap_or_default();
        let t: Vec<u64> = bytemuck::pod_collect_to_vec(&words);
        let (Some(&t0), Some(&t1), true) = (t.first(), t.get(1), wall >= MIN_VERDICT_SECONDS)
        else {
            return Ok((None, None));
        };
        let span_s = ticks_to_ms(gpu, t1.wrapping_sub(t0)) / 1e3;
        best = best.max(span_s / wall);
        if best >= MIN_CLOCK_SHARE {
            return Ok((Some(true), Some(span_s * 1e3 / runs as f64)));
        }
    }
    Ok(((best < MAX_BROKEN_SHARE).then_some(false), None))
}

/// Apply a verdict of [`clock_check`]: the wall clock times `gpu` after a disagreement, its
/// timestamps again after an agreement.
pub fn judge(gpu: &Gpu, verdict: Option<bool>) {
    match verdict {
        Some(false) => gpu.set_distrust(Some(format!(
            "{}'s timestamps read under a tenth of the wall time of back-to-back runs",
            gpu.adapter_name()
        ))),
        Some(true) => gpu.set_distrust(None),
        None => {}
    }
}

/// Timed mode by the wall clock, for a device whose timestamps do not measure the work: each
/// sample is a batch of runs (about 10 ms) encoded first, then submitted and waited for; its
/// time per run. Pass times by the same means, each pass alone, for plans of up to 64 passes.
/// The caller has made the warm-up runs.
async fn time_wall(
    gpu: &Gpu,
    plan: &Plan,
    reps: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<Timing> {
    let np = plan.passes.len();
    let probe = wall_once(gpu, plan).await?;
    let runs = batch_runs(probe, np, WALL_SAMPLE_SECONDS);
    let mut totals = Vec::with_capacity(reps);
    for _ in 0..reps {
        if cancelled() {
            return Err(Error::Cancelled);
        }
        let s = timed_batch(gpu, &plan.passes, runs, None).await?;
        totals.push(s * 1e3 / runs as f64);
    }
    let mut timing = Timing::of(totals, Vec::new(), true);
    let pass_ms = &mut timing.pass_ms;
    if np == 1 {
        pass_ms.push(timing.total_ms);
    } else if np <= 64 {
        for p in &plan.passes {
            let one = std::slice::from_ref(p);
            let probe = timed_batch(gpu, one, 1, None).await?;
            let runs = batch_runs(probe, 1, WALL_SAMPLE_SECONDS);
            let mut s = Vec::new();
            for _ in 0..3 {
                s.push(timed_batch(gpu, one, runs, None).await? * 1e3 / runs as f64);
            }
            pass_ms.push(median(&mut s));
        }
    }
    Ok(timing)
}

/// Wall-clock seconds of one run (submit and wait): a cheap probe before a sweep commits to reps.
pub async fn wall_once(gpu: &Gpu, plan: &Plan) -> Result<f64> {
    timed_batch(gpu, &plan.passes, 1, None).await
}

/// Runs `plan` back to back until `min_ms` of wall time have passed, in growing batches of runs
/// per submission (each batch waited for). The GPU's clocks ramp up only under sustained load: a
/// count of warm-ups sized from one run's wall time (mostly submission latency for a 50 µs kernel)
/// left the same-run copy measured at half speed. Returns the runs made.
pub async fn warm_for(gpu: &Gpu, plan: &Plan, min_ms: f64) -> Result<usize> {
    let t0 = web_time::Instant::now();
    let (mut batch, mut runs) = (1usize, 0usize);
    while t0.elapsed().as_secs_f64() * 1e3 < min_ms {
        let b0 = web_time::Instant::now();
        gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            for _ in 0..batch {
                record(&mut enc, &plan.passes, 0, None, None, |_, _| {});
            }
            gpu.queue.submit([enc.finish()]);
        })?;
        wait(gpu).await?;
        runs += batch;
        // Batches of about 20 ms keep the queue full without one huge command buffer.
        if b0.elapsed().as_secs_f64() < 0.02 {
            batch = (batch * 2).min(1 << 14);
        }
    }
    Ok(runs)
}

/// `runs` untimed runs of `plan`, one submission each, waited for (counted warm-up).
pub async fn run_times(gpu: &Gpu, plan: &Plan, runs: usize) -> Result<()> {
    gpu.scoped(|| {
        for _ in 0..runs {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, &plan.passes, 0, None, None, |_, _| {});
            gpu.queue.submit([enc.finish()]);
        }
    })?;
    wait(gpu).await
}

/// Timed mode: `warmup` untimed runs, then `reps` runs with timestamps around every pass and no
/// read-back of data. Returns medians. Fails with [`Error::TimestampsUnavailable`] rather than
/// inventing a number.
pub async fn time(gpu: &Gpu, plan: &Plan, warmup: usize, reps: usize) -> Result<Timing> {
    time_with(gpu, plan, warmup, reps, &|| false).await
}

/// [`time`] with a cancel check between repetitions.
pub async fn time_with(
    gpu: &Gpu,
    plan: &Plan,
    warmup: usize,
    reps: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<Timing> {
    if !gpu.has_timestamps() {
        return Err(Error::TimestampsUnavailable);
    }
    if gpu.is_instrumented() {
        return Err(Error::input(
            "timed mode runs the normal kernels, not a recording build",
        ));
    }
    let reps = reps.max(1);
    let (verdict, check_ms) = clock_check(gpu, plan).await?;
    judge(gpu, verdict);
    if gpu.clock_distrusted().is_some() {
        run_times(gpu, plan, warmup).await?;
        return time_wall(gpu, plan, reps, cancelled).await;
    }
    let np = plan.passes.len();
    let ts = Timestamps::new(gpu, np);
    let span = Timestamps::span(gpu, np);
    // Per repetition: the run with its two span timestamps, then the run with every pass's.
    let stride = ((np + 1) * 2 * 8) as u64;
    let readback = gpu.scoped(|| readback_buffer(gpu, stride * reps as u64))?;
    run_times(gpu, plan, warmup).await?;
    for r in 0..reps {
        if cancelled() {
            return Err(Error::Cancelled);
        }
        gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, &plan.passes, 0, Some(&span), None, |_, _| {});
            span.resolve_into(&mut enc, &readback, stride * r as u64);
            record(&mut enc, &plan.passes, 0, Some(&ts), None, |_, _| {});
            ts.resolve_into(&mut enc, &readback, stride * r as u64 + 16);
            gpu.queue.submit([enc.finish()]);
        })?;
        // Keep at most a few repetitions in flight so a cancel is quick (and, in the browser,
        // yield to the page).
        if r % 8 == 7 {
            wait(gpu).await?;
        }
    }
    let words = read_all(gpu, &[(&readback, readback.size())])
        .await?
        .pop()
        .unwrap_or_default();
    let t: Vec<u64> = bytemuck::pod_collect_to_vec(&words);
    let rep_scale = gpu.rep_clock_scale();
    let rep_ms = |ticks| ticks_to_ms(gpu, ticks) * rep_scale;
    let mut per_pass: Vec<Vec<f64>> = vec![Vec::with_capacity(reps); np];
    let mut totals = Vec::with_capacity(reps);
    for r in 0..reps {
        let base = r * (np + 1) * 2;
        let whole = t[base + 1].wrapping_sub(t[base]);
        let q = &t[base + 2..base + 2 + np * 2];
        let mut ok = true;
        for (i, samples) in per_pass.iter_mut().enumerate() {
            let d = q[2 * i + 1].wrapping_sub(q[2 * i]);
            // A wrapped or absurd delta (over a minute) is a broken sample, not a time.
            if d > 1 << 46 {
                ok = false;
                continue;
            }
            samples.push(rep_ms(d));
        }
        if ok && whole < 1 << 46 {
            totals.push(rep_ms(whole));
        }
    }
    if totals.is_empty() {
        return Err(Error::Gpu("every timestamp sample was invalid".into()));
    }
    // The check agreed moments ago; repetitions whose timestamps read under a tenth of its run
    // time stopped measuring the work since (lavapipe's, while the app drew a frame mid-sweep,
    // read a 2^20 copy at 180 GB/s). One run alone is never that much faster than one of a
    // back-to-back batch: the device is timed by the wall clock from here.
    let pass_ms = per_pass.iter_mut().map(|s| median(s)).collect();
    let timing = Timing::of(totals, pass_ms, false);
    let run_ms = timing.total_ms;
    if let Some(check_ms) = check_ms
        && run_ms < MAX_BROKEN_SHARE * check_ms
    {
        gpu.set_distrust(Some(format!(
            "{}'s timestamps read {run_ms:.4} ms a run, under a tenth of the {check_ms:.4} ms \
             they read in the clock check just before",
            gpu.adapter_name()
        )));
        return time_wall(gpu, plan, reps, cancelled).await;
    }
    Ok(timing)
}

pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}
