//! The pass runner. An algorithm run is a [`Plan`]: a list of compute passes. Three ways to run it:
//! - [`execute`] with `trace = true` (*trace mode*): after every pass that names capture regions,
//!   those regions are copied out and read back, so the caller can build one stage per pass;
//! - [`execute`] with `trace = false`: one run, per-pass GPU times, the output read back;
//! - [`time`] (*timed mode*): timestamps around every pass, nothing read back but the timestamps,
//!   warm-up runs first, then the median over R repetitions.
//!
//! Everything is recorded into one command encoder per run and read back with `map_async`; the
//! calling thread waits (CLI, tests, the UI's worker thread), never the UI frame.

use super::context::Gpu;
use crate::error::{Error, Result};
use crate::lens::record::LensRun;

/// A slice of a GPU buffer, in bytes.
#[derive(Clone, Debug)]
pub struct Region {
    pub buffer: wgpu::Buffer,
    pub offset: u64,
    pub size: u64,
}

impl Region {
    pub fn whole(buffer: &wgpu::Buffer) -> Region {
        Region {
            buffer: buffer.clone(),
            offset: 0,
            size: buffer.size(),
        }
    }

    /// The first `words` u32 words of `buffer`.
    pub fn words(buffer: &wgpu::Buffer, words: usize) -> Region {
        Region {
            buffer: buffer.clone(),
            offset: 0,
            size: (words as u64 * 4).max(4),
        }
    }
}

/// One compute dispatch.
#[derive(Clone, Debug)]
pub struct Pass {
    pub label: String,
    pub pipeline: wgpu::ComputePipeline,
    pub bind_group: wgpu::BindGroup,
    pub workgroups: [u32; 3],
    /// Regions read back after this pass in trace mode (empty: no stage ends here).
    pub capture: Vec<Region>,
}

/// What an algorithm asks the GPU to do.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub passes: Vec<Pass>,
    /// Read back after the last pass (not in timed mode).
    pub output: Option<Region>,
    /// Buffers the plan owns and keeps alive (inputs, temporaries, uniforms).
    pub keep: Vec<wgpu::Buffer>,
}

impl Plan {
    pub fn push(
        &mut self,
        label: impl Into<String>,
        pipeline: &wgpu::ComputePipeline,
        bind_group: wgpu::BindGroup,
        workgroups: [u32; 3],
    ) -> &mut Pass {
        self.passes.push(Pass {
            label: label.into(),
            pipeline: pipeline.clone(),
            bind_group,
            workgroups,
            capture: Vec::new(),
        });
        self.passes.last_mut().expect("just pushed")
    }
}

/// The result of one run.
#[derive(Clone, Debug, Default)]
pub struct Execution {
    pub output: Vec<u32>,
    /// For every pass, the regions captured after it (empty where the pass captures nothing).
    pub captures: Vec<Vec<Vec<u32>>>,
    /// GPU milliseconds per pass, `None` when the adapter has no timestamps.
    pub pass_ms: Option<Vec<f64>>,
}

/// Timed-mode result: medians over the repetitions.
#[derive(Clone, Debug)]
pub struct Timing {
    pub pass_ms: Vec<f64>,
    /// First pass start to last pass end, median over repetitions.
    pub total_ms: f64,
    pub min_ms: f64,
    pub reps: usize,
}

/// The most bytes one trace may read back.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// wgpu caps a query set at 4096 queries; larger plans use several.
const QUERIES_PER_SET: usize = 4096;

struct Timestamps {
    sets: Vec<wgpu::QuerySet>,
    resolve: Vec<wgpu::Buffer>,
    count: usize,
}

impl Timestamps {
    fn new(gpu: &Gpu, passes: usize) -> Timestamps {
        let count = passes * 2;
        let mut sets = Vec::new();
        let mut resolve = Vec::new();
        let mut left = count;
        while left > 0 {
            let n = left.min(QUERIES_PER_SET);
            sets.push(gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: n as u32,
            }));
            resolve.push(gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: (n * 8) as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }));
            left -= n;
        }
        Timestamps {
            sets,
            resolve,
            count,
        }
    }

    fn writes(&self, pass: usize) -> wgpu::ComputePassTimestampWrites<'_> {
        let q = pass * 2;
        let set = q / QUERIES_PER_SET;
        let idx = (q % QUERIES_PER_SET) as u32;
        wgpu::ComputePassTimestampWrites {
            query_set: &self.sets[set],
            beginning_of_pass_write_index: Some(idx),
            end_of_pass_write_index: Some(idx + 1),
        }
    }

    /// Resolve into `dst` at `dst_offset` (bytes), one u64 per query.
    fn resolve_into(&self, enc: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, dst_offset: u64) {
        let mut off = dst_offset;
        let mut left = self.count;
        for (set, buf) in self.sets.iter().zip(&self.resolve) {
            let n = left.min(QUERIES_PER_SET);
            enc.resolve_query_set(set, 0..n as u32, buf, 0);
            enc.copy_buffer_to_buffer(buf, 0, dst, off, (n * 8) as u64);
            off += (n * 8) as u64;
            left -= n;
        }
    }
}

fn readback_buffer(gpu: &Gpu, size: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: size.max(4).div_ceil(4) * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn record(
    enc: &mut wgpu::CommandEncoder,
    plan: &Plan,
    ts: Option<&Timestamps>,
    lens: Option<&LensRun>,
    mut after: impl FnMut(&mut wgpu::CommandEncoder, usize),
) {
    for (i, p) in plan.passes.iter().enumerate() {
        {
            let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&p.label),
                timestamp_writes: ts.map(|t| t.writes(i)),
            });
            cp.set_pipeline(&p.pipeline);
            cp.set_bind_group(0, &p.bind_group, &[]);
            if let Some(l) = lens {
                l.bind(&mut cp, i);
            }
            cp.dispatch_workgroups(p.workgroups[0], p.workgroups[1], p.workgroups[2]);
        }
        if let Some(l) = lens {
            l.after(enc, i);
        }
        after(enc, i);
    }
}

/// Wait for the GPU; a failure on a lost device is reported as the loss.
fn wait(gpu: &Gpu) -> Result<()> {
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| match gpu.check_lost() {
            Some(why) => Error::DeviceLost(why),
            None => Error::Gpu(format!("waiting for the GPU failed: {e}")),
        })
}

/// Map every buffer, wait for the GPU, and return their contents as u32 words.
fn read_all(gpu: &Gpu, buffers: &[(&wgpu::Buffer, u64)]) -> Result<Vec<Vec<u32>>> {
    let (tx, rx) = std::sync::mpsc::channel();
    for (i, (b, size)) in buffers.iter().enumerate() {
        let tx = tx.clone();
        b.slice(..*size).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send((i, r));
        });
    }
    drop(tx);
    wait(gpu)?;
    for (_, r) in rx.iter() {
        r.map_err(|e| match gpu.check_lost() {
            Some(why) => Error::DeviceLost(why),
            None => Error::Gpu(format!("read-back failed: {e}")),
        })?;
    }
    if let Some(why) = gpu.lost() {
        return Err(Error::DeviceLost(why));
    }
    let mut out = Vec::with_capacity(buffers.len());
    for (b, size) in buffers {
        let view = b
            .slice(..*size)
            .get_mapped_range()
            .map_err(|e| Error::Gpu(format!("read-back failed: {e}")))?;
        // One copy (a mapped range is word-aligned; pod_collect_to_vec would zero the Vec first).
        out.push(match bytemuck::try_cast_slice::<u8, u32>(&view) {
            Ok(words) => words.to_vec(),
            Err(_) => bytemuck::pod_collect_to_vec::<u8, u32>(&view),
        });
        drop(view);
        b.unmap();
    }
    Ok(out)
}

fn ticks_to_ms(gpu: &Gpu, ticks: u64) -> f64 {
    ticks as f64 * gpu.queue.get_timestamp_period() as f64 / 1e6
}

/// Run the plan once. With `trace`, every pass's capture regions are read back.
pub fn execute(gpu: &Gpu, plan: &Plan, trace: bool) -> Result<Execution> {
    if trace {
        let bytes: u64 = plan
            .passes
            .iter()
            .flat_map(|p| &p.capture)
            .map(|r| r.size)
            .sum();
        if bytes > MAX_TRACE_BYTES {
            return Err(Error::Limit(format!(
                "this trace would read back {} MiB (limit {} MiB): use a smaller N or drop --trace",
                bytes >> 20,
                MAX_TRACE_BYTES >> 20
            )));
        }
    }
    let ts = gpu
        .has_timestamps()
        .then(|| Timestamps::new(gpu, plan.passes.len()));
    // A recording run (Gpu::with_lens): every pass appends its accesses to one log.
    let lens = match &gpu.lens {
        Some(_) => Some(LensRun::new(gpu, plan)?),
        None => None,
    };
    let (reads, layout, ts_buf) = gpu.scoped(|| {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        let mut reads: Vec<(wgpu::Buffer, u64)> = Vec::new();
        // layout[pass] = indices into `reads` for that pass's captures
        let mut layout: Vec<Vec<usize>> = vec![Vec::new(); plan.passes.len()];
        record(&mut enc, plan, ts.as_ref(), lens.as_ref(), |enc, i| {
            if trace {
                for r in &plan.passes[i].capture {
                    let dst = readback_buffer(gpu, r.size);
                    enc.copy_buffer_to_buffer(&r.buffer, r.offset, &dst, 0, r.size);
                    layout[i].push(reads.len());
                    reads.push((dst, r.size));
                }
            }
        });
        if let Some(out) = &plan.output {
            let dst = readback_buffer(gpu, out.size);
            enc.copy_buffer_to_buffer(&out.buffer, out.offset, &dst, 0, out.size);
            reads.push((dst, out.size));
        }
        let ts_buf = ts.as_ref().map(|t| {
            let b = readback_buffer(gpu, (t.count * 8) as u64);
            t.resolve_into(&mut enc, &b, 0);
            b
        });
        gpu.queue.submit([enc.finish()]);
        (reads, layout, ts_buf)
    })?;
    let mut all: Vec<(&wgpu::Buffer, u64)> = reads.iter().map(|(b, s)| (b, *s)).collect();
    let counters = lens
        .as_ref()
        .map(|l| readback_buffer(gpu, l.counters().size()));
    if let (Some(l), Some(b)) = (&lens, &counters) {
        gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(l.counters(), 0, b, 0, b.size());
            gpu.queue.submit([enc.finish()]);
        })?;
        all.push((b, b.size()));
    }
    if let Some(b) = &ts_buf {
        all.push((b, b.size()));
    }
    let mut data = read_all(gpu, &all)?;
    let pass_ms = ts_buf.as_ref().map(|_| {
        let words = data.pop().unwrap_or_default();
        let t: Vec<u64> = bytemuck::pod_collect_to_vec(&words);
        (0..plan.passes.len())
            .map(|i| ticks_to_ms(gpu, t[2 * i + 1].wrapping_sub(t[2 * i])))
            .collect()
    });
    if let (Some(l), Some(rec)) = (&lens, &gpu.lens) {
        let counts = data.pop().unwrap_or_default();
        l.finish(
            gpu,
            plan,
            &counts,
            |b, size| Ok(read_all(gpu, &[(b, size)])?.pop().unwrap_or_default()),
            rec,
        )?;
    }
    let output = if plan.output.is_some() {
        data.pop().unwrap_or_default()
    } else {
        Vec::new()
    };
    let captures = layout
        .iter()
        .map(|idx| idx.iter().map(|&k| std::mem::take(&mut data[k])).collect())
        .collect();
    Ok(Execution {
        output,
        captures,
        pass_ms,
    })
}

/// Wall-clock seconds of one run (submit and wait): a cheap probe before a sweep commits to reps.
pub fn wall_once(gpu: &Gpu, plan: &Plan) -> Result<f64> {
    let t0 = std::time::Instant::now();
    gpu.scoped(|| {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        record(&mut enc, plan, None, None, |_, _| {});
        gpu.queue.submit([enc.finish()]);
    })?;
    wait(gpu)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Runs `plan` back to back until `min_ms` of wall time have passed, in growing batches of runs
/// per submission (each batch waited for). The GPU's clocks ramp up only under sustained load: a
/// count of warm-ups sized from one run's wall time (mostly submission latency for a 50 µs kernel)
/// left the same-run copy measured at half speed. Returns the runs made.
pub fn warm_for(gpu: &Gpu, plan: &Plan, min_ms: f64) -> Result<usize> {
    let t0 = std::time::Instant::now();
    let (mut batch, mut runs) = (1usize, 0usize);
    while t0.elapsed().as_secs_f64() * 1e3 < min_ms {
        let b0 = std::time::Instant::now();
        gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            for _ in 0..batch {
                record(&mut enc, plan, None, None, |_, _| {});
            }
            gpu.queue.submit([enc.finish()]);
        })?;
        wait(gpu)?;
        runs += batch;
        // Batches of about 20 ms keep the queue full without one huge command buffer.
        if b0.elapsed().as_secs_f64() < 0.02 {
            batch = (batch * 2).min(1 << 14);
        }
    }
    Ok(runs)
}

/// Timed mode: `warmup` untimed runs, then `reps` runs with timestamps around every pass and no
/// read-back of data. Returns medians. Fails with [`Error::TimestampsUnavailable`] rather than
/// inventing a number.
pub fn time(gpu: &Gpu, plan: &Plan, warmup: usize, reps: usize) -> Result<Timing> {
    time_with(gpu, plan, warmup, reps, &|| false)
}

/// [`time`] with a cancel check between repetitions.
pub fn time_with(
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
    let stride = (np * 2 * 8) as u64;
    let readback = gpu.scoped(|| readback_buffer(gpu, stride * reps as u64))?;
    gpu.scoped(|| {
        for _ in 0..warmup {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, plan, None, None, |_, _| {});
            gpu.queue.submit([enc.finish()]);
        }
    })?;
    wait(gpu)?;
    for r in 0..reps {
        if cancelled() {
            return Err(Error::Cancelled);
        }
        gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, plan, Some(&ts), None, |_, _| {});
            ts.resolve_into(&mut enc, &readback, stride * r as u64);
            gpu.queue.submit([enc.finish()]);
        })?;
        // Keep at most a few repetitions in flight so a cancel is quick.
        if r % 8 == 7 {
            let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
        }
    }
    let words = read_all(gpu, &[(&readback, readback.size())])?
        .pop()
        .unwrap_or_default();
    let t: Vec<u64> = bytemuck::pod_collect_to_vec(&words);
    let mut per_pass: Vec<Vec<f64>> = vec![Vec::with_capacity(reps); np];
    let mut totals = Vec::with_capacity(reps);
    for r in 0..reps {
        let base = r * np * 2;
        let q = &t[base..base + np * 2];
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
        let span = q[np * 2 - 1].wrapping_sub(q[0]);
        if ok && span < 1 << 46 {
            totals.push(ticks_to_ms(gpu, span));
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
