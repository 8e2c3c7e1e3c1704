//! Timed mode: nothing read back but timestamps, warm-up runs first, then the median over R
//! repetitions, each timed twice — once with timestamps at the run's two ends only (the total: a
//! timestamp between passes costs the GPU several microseconds of idle each), once around every
//! pass (the pass times); and the wall-clock probes a sweep uses before it
//! commits to repetitions.

use super::context::Gpu;
use super::runner::{Plan, Timestamps, read_all, readback_buffer, record, ticks_to_ms, wait};
use crate::error::{Error, Result};

/// Timed-mode result: medians over the repetitions.
#[derive(Clone, Debug)]
pub struct Timing {
    pub pass_ms: Vec<f64>,
    /// First pass start to last pass end with no timestamp between, median over repetitions.
    pub total_ms: f64,
    pub min_ms: f64,
    pub reps: usize,
}

/// Wall-clock seconds of one run (submit and wait): a cheap probe before a sweep commits to reps.
pub async fn wall_once(gpu: &Gpu, plan: &Plan) -> Result<f64> {
    let t0 = web_time::Instant::now();
    gpu.scoped(|| {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        record(&mut enc, &plan.passes, 0, None, None, |_, _| {});
        gpu.queue.submit([enc.finish()]);
    })?;
    wait(gpu).await?;
    Ok(t0.elapsed().as_secs_f64())
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
    if gpu.lens.is_some() {
        return Err(Error::input(
            "timed mode runs the normal kernels, not a recording build",
        ));
    }
    let reps = reps.max(1);
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
            samples.push(ticks_to_ms(gpu, d));
        }
        if ok && whole < 1 << 46 {
            totals.push(ticks_to_ms(gpu, whole));
        }
    }
    if totals.is_empty() {
        return Err(Error::Gpu("every timestamp sample was invalid".into()));
    }
    let min_ms = totals.iter().cloned().fold(f64::INFINITY, f64::min);
    Ok(Timing {
        pass_ms: per_pass.iter_mut().map(|s| median(s)).collect(),
        total_ms: median(&mut totals),
        min_ms,
        reps: totals.len(),
    })
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
