//! Recording on the GPU. A `Gpu` made by [`Gpu::with_lens`](crate::gpu::Gpu::with_lens) compiles
//! every kernel in its recording build ([`super::ir`]); the pass runner then binds one
//! record log at group 1 of every pass, copies the log's counter after every pass (so each pass's
//! records are the slice between two counters), and reads the records back after the run: the
//! passes land in the [`Recorder`].

use super::sample::{MAX_WORKGROUPS, PassSample, Sampling};
use super::sites::{INSTANCE_BITS, LID_BITS, LensKernel};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One recorded access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Linear workgroup id.
    pub wg: u32,
    /// Local invocation index.
    pub lid: u32,
    /// Index into the kernel's sites.
    pub site: u32,
    /// How many times this invocation had executed this site before.
    pub instance: u32,
    /// Word address in the site's buffer.
    pub addr: u32,
}

/// One pass's recording.
#[derive(Clone, Debug)]
pub struct PassRecord {
    pub label: String,
    pub kernel: Arc<LensKernel>,
    pub workgroups: [u32; 3],
    /// The workgroups recorded and what each stands for.
    pub sample: Arc<PassSample>,
    pub accesses: Vec<Access>,
}

/// Where a recording run's passes land (shared by the clones of a recording `Gpu`).
#[derive(Debug)]
pub struct Recorder {
    passes: Mutex<Vec<PassRecord>>,
    /// Which workgroups of every pass record.
    pub sampling: Sampling,
    /// Set instead of an error where the log could not hold a run and a smaller sample would
    /// record less (some pass's grid is larger than the fewest workgroups a sample takes): the
    /// accesses it made.
    overflow: Mutex<Option<u64>>,
    /// Records a run may make before it counts as an overflow (at most the log's capacity).
    pub budget: Option<u64>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new(Sampling::new(1.0, 1), None)
    }
}

impl Recorder {
    /// A recorder sampling by `sampling`; with a `budget`, a run that makes more accesses than
    /// that leaves its count in [`Recorder::overflow`] instead of failing.
    pub fn new(sampling: Sampling, budget: Option<u64>) -> Recorder {
        Recorder {
            passes: Mutex::default(),
            sampling,
            overflow: Mutex::default(),
            budget,
        }
    }

    /// The accesses of the last run that overflowed its budget (taken).
    pub fn overflow(&self) -> Option<u64> {
        self.overflow.lock().ok().and_then(|mut o| o.take())
    }

    /// The passes recorded so far, in order; the recorder is left empty.
    pub fn take(&self) -> Vec<PassRecord> {
        self.passes
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }
}

/// Recording pipelines → their kernel's recording build.
fn registry() -> &'static Mutex<HashMap<wgpu::ComputePipeline, Arc<LensKernel>>> {
    static REG: std::sync::OnceLock<Mutex<HashMap<wgpu::ComputePipeline, Arc<LensKernel>>>> =
        std::sync::OnceLock::new();
    REG.get_or_init(Default::default)
}

pub(crate) fn register(p: &wgpu::ComputePipeline, k: Arc<LensKernel>) {
    if let Ok(mut m) = registry().lock() {
        m.insert(p.clone(), k);
    }
}

pub fn lens_kernel(p: &wgpu::ComputePipeline) -> Option<Arc<LensKernel>> {
    registry().lock().ok().and_then(|m| m.get(p).cloned())
}

/// The largest record log: the adapter's storage-binding limit, at most 1 GiB.
pub fn log_bytes(gpu: &Gpu) -> u64 {
    gpu.max_binding_bytes().min(1 << 30)
}

/// Bytes of one record: (workgroup << 10 | local index, site << 20 | instance, word address).
pub const RECORD: u64 = 12;

/// Records one log can hold on this adapter (12 bytes each, after a 16-byte header).
pub fn capacity(gpu: &Gpu) -> u64 {
    (log_bytes(gpu) - HEADER) / RECORD
}

const HEADER: u64 = 16;

/// The GPU side of one recording run: the log, its bind group for every pass, the counters.
pub(crate) struct LensRun {
    log: wgpu::Buffer,
    groups: Vec<wgpu::BindGroup>,
    counters: wgpu::Buffer,
    kernels: Vec<Arc<LensKernel>>,
    samples: Vec<Arc<PassSample>>,
    cap: u64,
}

impl LensRun {
    pub(crate) fn new(gpu: &Gpu, plan: &Plan) -> Result<LensRun> {
        let mut kernels = Vec::with_capacity(plan.passes.len());
        for p in &plan.passes {
            kernels.push(lens_kernel(&p.pipeline).ok_or_else(|| {
                Error::Input(format!(
                    "lens: pass '{}' was not built in the recording build",
                    p.label
                ))
            })?);
        }
        let cap = capacity(gpu);
        let log = gpu.storage_zeroed("lens record log", ((HEADER + cap * RECORD) / 4) as usize)?;
        gpu.queue
            .write_buffer(&log, 0, bytemuck::cast_slice(&[0u32, cap as u32, 0, 0]));
        // One sample (and bitmap) per grid size: passes of one size record the same workgroups.
        let sampling = gpu
            .lens
            .as_ref()
            .map_or(Sampling::new(1.0, 1), |r| r.sampling);
        let mut by_grid: HashMap<u64, (Arc<PassSample>, wgpu::Buffer)> = HashMap::new();
        let mut samples = Vec::with_capacity(plan.passes.len());
        let mut groups = Vec::with_capacity(plan.passes.len());
        for p in &plan.passes {
            let g = p.workgroups.iter().map(|&w| w as u64).product::<u64>();
            if g > MAX_WORKGROUPS {
                return Err(Error::Limit(format!(
                    "lens: pass '{}' runs {g} workgroups; the lens records at most {MAX_WORKGROUPS}",
                    p.label
                )));
            }
            let (sample, bits) = match by_grid.entry(g) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let s = sampling.pass(g);
                    let bits = gpu.storage_init("lens sample", &s.bits)?;
                    e.insert((Arc::new(s), bits))
                }
            };
            samples.push(sample.clone());
            groups.push(gpu.scoped(|| {
                gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("lens log"),
                    layout: &p.pipeline.get_bind_group_layout(1),
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: log.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: bits.as_entire_binding(),
                        },
                    ],
                })
            })?);
        }
        let counters = gpu.scoped(|| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("lens counters"),
                size: (plan.passes.len().max(1) * 4) as u64,
                usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(LensRun {
            log,
            groups,
            counters,
            kernels,
            samples,
            cap,
        })
    }

    pub(crate) fn bind(&self, cp: &mut wgpu::ComputePass<'_>, pass: usize) {
        cp.set_bind_group(1, &self.groups[pass], &[]);
    }

    /// After pass `pass`: keep the log's counter.
    pub(crate) fn after(&self, enc: &mut wgpu::CommandEncoder, pass: usize) {
        enc.copy_buffer_to_buffer(&self.log, 0, &self.counters, pass as u64 * 4, 4);
    }

    /// The counters buffer, to read back with the run's other results.
    pub(crate) fn counters(&self) -> &wgpu::Buffer {
        &self.counters
    }

    /// With the counters read back: check the log held every access, read the records and hand
    /// the passes to the recorder.
    pub(crate) async fn finish(
        &self,
        gpu: &Gpu,
        plan: &Plan,
        counters: &[u32],
        rec: &Recorder,
    ) -> Result<()> {
        let total = counters.last().copied().unwrap_or(0) as u64;
        if let Some(budget) = rec.budget
            && total > budget.min(self.cap)
        {
            // A run whose every sample is already at its fewest is kept where the whole log holds
            // it: running it again with a smaller fraction would record the same workgroups.
            let shrinks = rec
                .sampling
                .can_shrink(self.samples.iter().map(|s| s.as_ref()));
            if shrinks && let Ok(mut o) = rec.overflow.lock() {
                *o = Some(total);
                return Ok(());
            }
        }
        if total > self.cap {
            return Err(Error::Limit(format!(
                "lens: this run makes {total} memory accesses; the record log holds {} \
                 ({} MiB, the adapter's storage-binding limit, at most 1 GiB): record a sample \
                 (--lens-sample with a fraction) or use a smaller N",
                self.cap,
                log_bytes(gpu) >> 20
            )));
        }
        let read = web_time::Instant::now();
        let words = if total == 0 {
            Vec::new()
        } else {
            let bytes = total * RECORD;
            let dst = gpu.scoped(|| {
                gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("lens readback"),
                    size: bytes,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })?;
            gpu.scoped(|| {
                let mut enc = gpu.device.create_command_encoder(&Default::default());
                enc.copy_buffer_to_buffer(&self.log, HEADER, &dst, 0, bytes);
                gpu.queue.submit([enc.finish()]);
            })?;
            crate::gpu::runner::read_all(gpu, &[(&dst, bytes)])
                .await?
                .pop()
                .unwrap_or_default()
        };
        let decode = web_time::Instant::now();
        let mask = (1u32 << INSTANCE_BITS) - 1;
        let mut start = 0usize;
        let mut out = Vec::with_capacity(plan.passes.len());
        for (i, p) in plan.passes.iter().enumerate() {
            let end = counters[i] as usize;
            let accesses = words[start * 3..end * 3]
                .chunks_exact(3)
                .map(|r| Access {
                    wg: r[0] >> LID_BITS,
                    lid: r[0] & ((1 << LID_BITS) - 1),
                    site: r[1] >> INSTANCE_BITS,
                    instance: r[1] & mask,
                    addr: r[2],
                })
                .collect();
            start = end;
            out.push(PassRecord {
                label: p.label.clone(),
                kernel: self.kernels[i].clone(),
                workgroups: p.workgroups,
                sample: self.samples[i].clone(),
                accesses,
            });
        }
        if std::env::var_os("STAGEWISE_LENS_TIMES").is_some() {
            eprintln!(
                "lens: {total} records, read back in {:.2} s, decoded in {:.2} s",
                (decode - read).as_secs_f64(),
                decode.elapsed().as_secs_f64()
            );
        }
        if let Ok(mut all) = rec.passes.lock() {
            all.extend(out);
        }
        Ok(())
    }
}
