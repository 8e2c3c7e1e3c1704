//! The pass runner. An algorithm run is a [`Plan`]: a list of compute passes. Two ways to run it
//! here, a third in timed.rs:
//! - [`start`] / [`execute`] with `trace = true` (*trace mode*): after every pass that names
//!   capture regions, those regions are copied out and read back, so the caller can build one
//!   stage per pass; the passes run in chunks, and [`Running::next_capture`] hands out each pass's
//!   regions as soon as its chunk is back (the app streams a trace this way);
//! - [`execute`] with `trace = false`: one run, per-pass GPU times, the output read back;
//! - timed mode ([`super::timed`]): timestamps around every pass, nothing else read back.
//!
//! Everything that waits for the GPU is async: read-backs are `map_async` awaited, so in the
//! browser a trace yields to the page between chunks. Natively the same code is driven by
//! `pollster::block_on` on the thread that waits (the CLI, tests, the UI's worker thread), never
//! the UI frame, and the device is polled until the work is done.

use super::context::Gpu;
use super::hook::RunHook;
use crate::error::{Error, Result};

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
    /// For every pass, the regions captured after it (empty where the pass captures nothing, or
    /// where the caller took them with [`Running::next_capture`]).
    pub captures: Vec<Vec<Vec<u32>>>,
    /// GPU milliseconds per pass, `None` when the adapter has no timestamps.
    pub pass_ms: Option<Vec<f64>>,
}

/// The most bytes one trace may read back.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// wgpu caps a query set at 4096 queries; larger plans use several.
const QUERIES_PER_SET: usize = 4096;

pub(super) struct Timestamps {
    sets: Vec<wgpu::QuerySet>,
    resolve: Vec<wgpu::Buffer>,
    count: usize,
    /// `Some(last)`: two queries only, the first pass's start and pass `last`'s end.
    span: Option<usize>,
}

impl Timestamps {
    pub(super) fn new(gpu: &Gpu, passes: usize) -> Timestamps {
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
            span: None,
        }
    }

    /// Two timestamps for a run of `passes`: the first pass's start and the last one's end,
    /// nothing between (the run as a user records it).
    pub(super) fn span(gpu: &Gpu, passes: usize) -> Timestamps {
        Timestamps {
            span: Some(passes.saturating_sub(1)),
            ..Timestamps::new(gpu, 1)
        }
    }

    fn writes(&self, pass: usize) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        if let Some(last) = self.span {
            let (begin, end) = (pass == 0, pass == last);
            return (begin || end).then(|| wgpu::ComputePassTimestampWrites {
                query_set: &self.sets[0],
                beginning_of_pass_write_index: begin.then_some(0),
                end_of_pass_write_index: end.then_some(1),
            });
        }
        let q = pass * 2;
        let set = q / QUERIES_PER_SET;
        let idx = (q % QUERIES_PER_SET) as u32;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.sets[set],
            beginning_of_pass_write_index: Some(idx),
            end_of_pass_write_index: Some(idx + 1),
        })
    }

    /// Resolve into `dst` at `dst_offset` (bytes), one u64 per query.
    pub(super) fn resolve_into(
        &self,
        enc: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        dst_offset: u64,
    ) {
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

pub(crate) fn readback_buffer(gpu: &Gpu, size: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: size.max(4).div_ceil(4) * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Record `passes`, numbered from `first` (for the timestamps, the instrument and `after`).
pub(super) fn record(
    enc: &mut wgpu::CommandEncoder,
    passes: &[Pass],
    first: usize,
    ts: Option<&Timestamps>,
    hook: Option<&dyn RunHook>,
    mut after: impl FnMut(&mut wgpu::CommandEncoder, usize),
) {
    for (i, p) in (first..).zip(passes) {
        {
            let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&p.label),
                timestamp_writes: ts.and_then(|t| t.writes(i)),
            });
            cp.set_pipeline(&p.pipeline);
            cp.set_bind_group(0, &p.bind_group, &[]);
            if let Some(h) = hook {
                h.bind(&mut cp, i);
            }
            cp.dispatch_workgroups(p.workgroups[0], p.workgroups[1], p.workgroups[2]);
        }
        if let Some(h) = hook {
            h.after(enc, i);
        }
        after(enc, i);
    }
}

/// Wait for the GPU to finish the work submitted so far; a failure on a lost device is reported
/// as the loss. Natively the device is polled until then; the browser runs the callback itself.
pub(super) async fn wait(gpu: &Gpu) -> Result<()> {
    let (tx, rx) = async_channel::bounded(1);
    gpu.queue.on_submitted_work_done(move || {
        let _ = tx.try_send(());
    });
    poll_until_done(gpu)?;
    let _ = rx.recv().await;
    gpu.settle().await
}

/// Natively: block until the submitted work is done (the callbacks of `wait` and `read_all` run
/// in here), at most [`wait_limit`]: a kernel that never ends (a user's, or a fault in a look-back)
/// becomes an error instead of a hang. In the browser there is nothing to poll.
fn poll_until_done(gpu: &Gpu) -> Result<()> {
    if cfg!(target_arch = "wasm32") {
        return Ok(());
    }
    let limit = wait_limit(gpu);
    let wait = wgpu::PollType::Wait {
        submission_index: None,
        timeout: Some(limit),
    };
    gpu.device.poll(wait).map(|_| ()).map_err(|e| match e {
        wgpu::PollError::Timeout => {
            // The device stays busy with that kernel, and dropping it waits for the GPU to go
            // idle. Keep it alive to the process's end, so that the error reaches the user, and
            // say so to the process's exit (gpu_hung).
            std::mem::forget(gpu.device.clone());
            std::mem::forget(gpu.queue.clone());
            GPU_HUNG.store(true, std::sync::atomic::Ordering::Relaxed);
            Error::Gpu(format!(
                "the GPU has not finished after {} s: a kernel that never ends? \
                 (STAGEWISE_GPU_TIMEOUT sets this limit)",
                limit.as_secs_f64()
            ))
        }
        e => match gpu.check_lost() {
            Some(why) => Error::DeviceLost(why),
            None => Error::Gpu(format!("waiting for the GPU failed: {e}")),
        },
    })
}

static GPU_HUNG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a wait for the GPU ran past its limit in this process: the GPU may still run that
/// kernel. On the H200 (NVIDIA's Vulkan driver) the process then did not end after the error
/// line (still waiting 30 s later), so the caller ends the process without the exit handlers.
pub fn gpu_hung() -> bool {
    GPU_HUNG.load(std::sync::atomic::Ordering::Relaxed)
}

/// How long one wait for the GPU may last: far beyond any plan Stagewise runs (a lens recording at
/// 2^28 takes seconds, a CPU adapter's large FFT about a minute), or `STAGEWISE_GPU_TIMEOUT`
/// seconds (a bad value: a warning and the default).
fn wait_limit(gpu: &Gpu) -> std::time::Duration {
    use std::time::Duration;
    static SET: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    let set = *SET.get_or_init(|| {
        let v = std::env::var("STAGEWISE_GPU_TIMEOUT").ok()?;
        let d = v.trim().parse::<f64>().ok().filter(|s| *s > 0.0);
        let d = d.and_then(|s| Duration::try_from_secs_f64(s).ok());
        if d.is_none() {
            eprintln!(
                "stagewise: warning: STAGEWISE_GPU_TIMEOUT={v}: not a duration in seconds above 0; \
                 using the default"
            );
        }
        d
    });
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    set.unwrap_or(Duration::from_secs(if cpu { 1800 } else { 300 }))
}

/// Map every buffer, await the maps, and return their contents as u32 words.
pub(crate) async fn read_all(gpu: &Gpu, buffers: &[(&wgpu::Buffer, u64)]) -> Result<Vec<Vec<u32>>> {
    let (tx, rx) = async_channel::unbounded();
    for (b, size) in buffers {
        let tx = tx.clone();
        b.slice(..*size).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.try_send(r);
        });
    }
    drop(tx);
    poll_until_done(gpu)?;
    // Every callback sends once; the channel closes after the last.
    while let Ok(r) = rx.recv().await {
        r.map_err(|e| match gpu.check_lost() {
            Some(why) => Error::DeviceLost(why),
            None => Error::Gpu(format!("read-back failed: {e}")),
        })?;
    }
    gpu.settle().await?;
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

pub(super) fn ticks_to_ms(gpu: &Gpu, ticks: u64) -> f64 {
    ticks as f64 * gpu.queue.get_timestamp_period() as f64 * gpu.clock_scale() / 1e6
}

/// Run the plan once. With `trace`, every pass's capture regions are read back.
pub async fn execute(gpu: &Gpu, plan: &Plan, trace: bool) -> Result<Execution> {
    start(gpu, plan, trace)?.finish().await
}

/// [`execute`], waited for on this thread (native only: the CLI and tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn execute_blocking(gpu: &Gpu, plan: &Plan, trace: bool) -> Result<Execution> {
    pollster::block_on(execute(gpu, plan, trace))
}

/// A trace chunk is sized to take about this long: the app renders on the same queue, so its
/// frames wait behind the chunk in flight, and a stage can be shown only once its chunk is back.
const CHUNK_MS: f64 = 50.0;
/// A chunk reads back at most this much (plus one pass's captures), so the read-back buffers of a
/// large trace are never all alive at once.
const CHUNK_BYTES: u64 = 64 << 20;

/// A plan running on the GPU ([`start`]). In trace mode it runs in chunks of passes, each read
/// back before the next is submitted, so the caller takes every capturing pass's regions
/// ([`Running::next_capture`]) while later passes have not run yet: a room checks and hands on a
/// stage as soon as it is read back. [`Running::finish`] runs what is left and reads the output
/// and the pass times. Without trace the whole plan is one chunk.
pub struct Running<'a> {
    gpu: &'a Gpu,
    plan: &'a Plan,
    trace: bool,
    ts: Option<Timestamps>,
    /// An instrumented device's hook for this run ([`Gpu::with_instrument`]).
    hook: Option<Box<dyn RunHook>>,
    /// The first pass not submitted yet.
    next: usize,
    /// Read back and not taken yet: (pass, its captures), in pass order.
    ready: std::collections::VecDeque<(usize, Vec<Vec<u32>>)>,
    /// Capturing passes in the next chunk: grown (at most doubled) or shrunk towards CHUNK_MS.
    per_chunk: usize,
    /// The output and the timestamps, read back with the last chunk.
    tail: Option<(Vec<u32>, Option<Vec<u32>>)>,
}

/// Start a run of `plan` (its first chunk runs when the first capture or the result is asked for).
pub fn start<'a>(gpu: &'a Gpu, plan: &'a Plan, trace: bool) -> Result<Running<'a>> {
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
    let hook = match &gpu.instrument {
        Some(i) => Some(i.clone().begin(gpu, plan)?),
        None => None,
    };
    Ok(Running {
        gpu,
        plan,
        trace,
        ts: gpu
            .trusts_timestamps()
            .then(|| Timestamps::new(gpu, plan.passes.len())),
        hook,
        next: 0,
        ready: Default::default(),
        per_chunk: 1,
        tail: None,
    })
}

impl Running<'_> {
    /// The next capturing pass's regions, read back (running the passes up to it first); `None`
    /// after the last.
    pub async fn next_capture(&mut self) -> Result<Option<(usize, Vec<Vec<u32>>)>> {
        while self.ready.is_empty() && self.tail.is_none() {
            self.chunk().await?;
        }
        Ok(self.ready.pop_front())
    }

    /// Run the rest of the plan and read back the output and the pass times; `captures` holds
    /// what the caller did not take.
    pub async fn finish(mut self) -> Result<Execution> {
        while self.tail.is_none() {
            self.chunk().await?;
        }
        let (gpu, plan) = (self.gpu, self.plan);
        let mut captures = vec![Vec::new(); plan.passes.len()];
        for (i, c) in self.ready.drain(..) {
            captures[i] = c;
        }
        let (mut output, ts) = self.tail.take().unwrap_or_default();
        gpu.corrupt_output(&mut output);
        let pass_ms = ts.map(|words| {
            let t: Vec<u64> = bytemuck::pod_collect_to_vec(&words);
            (0..plan.passes.len())
                .map(|i| ticks_to_ms(gpu, t[2 * i + 1].wrapping_sub(t[2 * i])))
                .collect()
        });
        if let Some(h) = &self.hook {
            h.finish(gpu, plan).await?;
        }
        Ok(Execution {
            output,
            captures,
            pass_ms,
        })
    }

    /// Submit the next chunk of passes, wait for it and read its captures back (the last chunk
    /// also copies the output and resolves the timestamps).
    async fn chunk(&mut self) -> Result<()> {
        let (gpu, plan) = (self.gpu, self.plan);
        let n = plan.passes.len();
        let captured = |i: usize| -> u64 {
            match self.trace {
                true => plan.passes[i].capture.iter().map(|r| r.size).sum(),
                false => 0,
            }
        };
        let (first, mut end, mut stages, mut bytes) = (self.next, self.next, 0, 0);
        while end < n && stages < self.per_chunk && bytes < CHUNK_BYTES {
            let b = captured(end);
            stages += usize::from(b > 0);
            bytes += b;
            end += 1;
        }
        // Passes after the last capture (or every pass, untraced) go with the output.
        if (end..n).all(|i| captured(i) == 0) {
            end = n;
        }
        let last = end == n;
        let t0 = web_time::Instant::now();
        let (reads, tail) = gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            let mut reads: Vec<(usize, wgpu::Buffer, u64)> = Vec::new();
            let passes = &plan.passes[first..end];
            record(
                &mut enc,
                passes,
                first,
                self.ts.as_ref(),
                self.hook.as_deref(),
                |enc, i| {
                    if self.trace {
                        for r in &plan.passes[i].capture {
                            let dst = readback_buffer(gpu, r.size);
                            enc.copy_buffer_to_buffer(&r.buffer, r.offset, &dst, 0, r.size);
                            reads.push((i, dst, r.size));
                        }
                    }
                },
            );
            let mut tail = Vec::new();
            if last {
                if let Some(out) = &plan.output {
                    let dst = readback_buffer(gpu, out.size);
                    enc.copy_buffer_to_buffer(&out.buffer, out.offset, &dst, 0, out.size);
                    tail.push((dst, out.size));
                }
                if let Some(t) = &self.ts {
                    let b = readback_buffer(gpu, (t.count * 8) as u64);
                    t.resolve_into(&mut enc, &b, 0);
                    tail.push((b, (t.count * 8) as u64));
                }
            }
            gpu.queue.submit([enc.finish()]);
            (reads, tail)
        })?;
        let all: Vec<(&wgpu::Buffer, u64)> = reads
            .iter()
            .map(|(_, b, s)| (b, *s))
            .chain(tail.iter().map(|(b, s)| (b, *s)))
            .collect();
        let mut data = read_all(gpu, &all).await?.into_iter();
        for (i, _, _) in &reads {
            let words = data.next().unwrap_or_default();
            match self.ready.back_mut() {
                Some((p, caps)) if p == i => caps.push(words),
                _ => self.ready.push_back((*i, vec![words])),
            }
        }
        if last {
            let output = match plan.output {
                Some(_) => data.next().unwrap_or_default(),
                None => Vec::new(),
            };
            self.tail = Some((output, data.next()));
        }
        self.next = end;
        if stages > 0 {
            let per_stage = t0.elapsed().as_secs_f64() * 1e3 / stages as f64;
            self.per_chunk = ((CHUNK_MS / per_stage.max(1e-3)) as usize).clamp(1, 2 * stages);
        }
        Ok(())
    }
}
