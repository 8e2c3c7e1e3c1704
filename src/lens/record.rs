//! Recording on the GPU. A `Gpu` made by [`Gpu::with_lens`](crate::gpu::Gpu::with_lens) compiles
//! every kernel in its recording build ([`super::ir`]); the pass runner then binds one
//! record log at group 1 of every pass, copies the log's counter after every pass (so each pass's
//! records are the slice between two counters), and reads the records back after the run: the
//! passes land in the [`Recorder`].

use super::sample::{MAX_WORKGROUPS, PassSample, Sampling};
use super::sites::{Block, INSTANCE_BITS, LID_BITS, LensEntry, LensKernel};
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
    /// Invocations a workgroup.
    pub invocations: u32,
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

/// A recording pipeline's kernel and entry point (its name as written).
type Registered = (Arc<LensKernel>, String);

/// Recording pipelines → their kernel's recording build and entry point.
fn registry() -> &'static Mutex<HashMap<wgpu::ComputePipeline, Registered>> {
    static REG: std::sync::OnceLock<Mutex<HashMap<wgpu::ComputePipeline, Registered>>> =
        std::sync::OnceLock::new();
    REG.get_or_init(Default::default)
}

pub(crate) fn register(p: &wgpu::ComputePipeline, k: Arc<LensKernel>, entry: &str) {
    if let Ok(mut m) = registry().lock() {
        m.insert(p.clone(), (k, entry.to_string()));
    }
}

pub fn lens_kernel(p: &wgpu::ComputePipeline) -> Option<Arc<LensKernel>> {
    registry()
        .lock()
        .ok()
        .and_then(|m| m.get(p).map(|r| r.0.clone()))
}

/// A recording pipeline's entry point.
fn lens_entry(p: &wgpu::ComputePipeline) -> Option<LensEntry> {
    let m = registry().lock().ok()?;
    let (k, entry) = m.get(p)?;
    k.entry_point(entry).cloned()
}

/// The largest record log: the adapter's storage-binding limit, at most 1 GiB.
pub fn log_bytes(gpu: &Gpu) -> u64 {
    gpu.max_binding_bytes().min(1 << 30)
}

/// Bytes of one record: (workgroup << 10 | local index, site << 20 | instance, word address).
pub const RECORD: u64 = 12;

/// Records one log can hold on this adapter (12 bytes each, after a 16-byte header and before a
/// spare word). A straight-line site's word ([`Block`]) takes a third of a record.
pub fn capacity(gpu: &Gpu) -> u64 {
    log_words(gpu) / 3
}

/// Words of the log past its header, less the spare word.
fn log_words(gpu: &Gpu) -> u64 {
    (log_bytes(gpu) - HEADER) / 4 - 1
}

const HEADER: u64 = 16;

/// The GPU side of one recording run: the log, its bind group for every pass, the counters.
pub(crate) struct LensRun {
    log: wgpu::Buffer,
    groups: Vec<wgpu::BindGroup>,
    counters: wgpu::Buffer,
    kernels: Vec<Arc<LensKernel>>,
    samples: Vec<Arc<PassSample>>,
    /// Per pass: invocations a workgroup.
    invocations: Vec<u32>,
    /// Per pass: its straight-line sites' block and the word its region starts at.
    blocks: Vec<Option<(Block, u64)>>,
    /// The log's words from the first region on (the records below it).
    top: u64,
    /// Words every region takes together.
    block_words: u64,
    cap: u64,
}

impl LensRun {
    pub(crate) fn new(gpu: &Gpu, plan: &Plan) -> Result<LensRun> {
        let mut kernels = Vec::with_capacity(plan.passes.len());
        let mut blocks = Vec::with_capacity(plan.passes.len());
        let mut invocations = Vec::with_capacity(plan.passes.len());
        for p in &plan.passes {
            kernels.push(lens_kernel(&p.pipeline).ok_or_else(|| {
                Error::Input(format!(
                    "lens: pass '{}' was not built in the recording build",
                    p.label
                ))
            })?);
            let entry = lens_entry(&p.pipeline);
            invocations.push(entry.as_ref().map_or(0, |e| e.invocations));
            blocks.push(entry.and_then(|e| e.block));
        }
        let words = log_words(gpu);
        // One sample per grid size: passes of one size record the same workgroups.
        let sampling = gpu
            .lens
            .as_ref()
            .map_or(Sampling::new(1.0, 1), |r| r.sampling);
        let mut by_grid: HashMap<u64, Arc<PassSample>> = HashMap::new();
        let mut samples = Vec::with_capacity(plan.passes.len());
        for p in &plan.passes {
            let g = p.workgroups.iter().map(|&w| w as u64).product::<u64>();
            if g > MAX_WORKGROUPS {
                return Err(Error::Limit(format!(
                    "lens: pass '{}' runs {g} workgroups; the lens records at most {MAX_WORKGROUPS}",
                    p.label
                )));
            }
            samples.push(
                by_grid
                    .entry(g)
                    .or_insert_with(|| Arc::new(sampling.pass(g)))
                    .clone(),
            );
        }
        // The passes' regions from the log's end down, each as large as its sample's blocks;
        // the records go below them.
        let block_words: u64 = blocks
            .iter()
            .zip(&samples)
            .map(|(b, s)| b.as_ref().map_or(0, |b| s.sampled * b.words()))
            .sum();
        // Regions the log cannot hold: nothing is recorded (every bit clear) and the run counts
        // as overflowing ([`LensRun::finish`]).
        let fits = block_words <= words;
        let mut top = words;
        let blocks: Vec<Option<(Block, u64)>> = blocks
            .into_iter()
            .zip(&samples)
            .map(|(b, s)| {
                b.map(|b| {
                    top = top.saturating_sub(s.sampled * b.words());
                    (b, top)
                })
            })
            .collect();
        let top = if fits { top } else { 0 };
        let cap = top / 3;
        let log = gpu.storage_zeroed("lens record log", ((HEADER / 4) + words + 1) as usize)?;
        gpu.queue
            .write_buffer(&log, 0, bytemuck::cast_slice(&[0u32, cap as u32, 0, 0]));
        let mut picks: HashMap<u64, wgpu::Buffer> = HashMap::new();
        let mut groups = Vec::with_capacity(plan.passes.len());
        for ((p, sample), block) in plan.passes.iter().zip(&samples).zip(&blocks) {
            let pick = match picks.entry(sample.workgroups) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let words = if fits {
                        sample.pick_words()
                    } else {
                        vec![0; 2 * sample.bits.len()]
                    };
                    e.insert(gpu.storage_init("lens sample", &words)?)
                }
            };
            let base = block.as_ref().map_or(0, |b| b.1 as u32);
            let u = gpu.uniform("lens pass", &[base, 0, 0, 0])?;
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
                            resource: pick.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: u.as_entire_binding(),
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
            invocations,
            blocks,
            top,
            block_words,
            cap: words / 3,
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
        let records = counters.last().copied().unwrap_or(0) as u64;
        // The records and the regions, as records of the log.
        let total = records + self.block_words.div_ceil(3);
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
        if total > self.cap || records > self.top / 3 {
            return Err(Error::Limit(format!(
                "lens: this run makes {total} memory accesses; the record log holds {} \
                 ({} MiB, the adapter's storage-binding limit, at most 1 GiB): record a sample \
                 (--lens-sample with a fraction) or use a smaller N",
                self.cap,
                log_bytes(gpu) >> 20
            )));
        }
        let read = web_time::Instant::now();
        // The records from the log's start, the regions from `top` to the end.
        let ranges = [(0, records * 3), (self.top, self.block_words)];
        let mut dsts = Vec::new();
        for &(from, words) in ranges.iter().filter(|r| r.1 > 0) {
            let bytes = words * 4;
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
                enc.copy_buffer_to_buffer(&self.log, HEADER + from * 4, &dst, 0, bytes);
                gpu.queue.submit([enc.finish()]);
            })?;
            dsts.push((dst, bytes));
        }
        let pairs: Vec<_> = dsts.iter().map(|(b, n)| (b, *n)).collect();
        let mut read_back = crate::gpu::runner::read_all(gpu, &pairs).await?.into_iter();
        let words = if records > 0 {
            read_back.next().unwrap_or_default()
        } else {
            Vec::new()
        };
        let regions = read_back.next().unwrap_or_default();
        let decode = web_time::Instant::now();
        let mask = (1u32 << INSTANCE_BITS) - 1;
        let mut start = 0usize;
        let mut out = Vec::with_capacity(plan.passes.len());
        for (i, p) in plan.passes.iter().enumerate() {
            let end = counters[i] as usize;
            let mut accesses: Vec<Access> = words[start * 3..end * 3]
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
            if let Some((block, base)) = &self.blocks[i] {
                let at = (base - self.top) as usize;
                let len = (self.samples[i].sampled * block.words()) as usize;
                accesses.extend(block_accesses(
                    block,
                    &self.samples[i],
                    regions.get(at..at + len).unwrap_or_default(),
                ));
            }
            out.push(PassRecord {
                label: p.label.clone(),
                kernel: self.kernels[i].clone(),
                workgroups: p.workgroups,
                invocations: self.invocations[i],
                sample: self.samples[i].clone(),
                accesses,
            });
        }
        if std::env::var_os("STAGEWISE_LENS_TIMES").is_some() {
            eprintln!(
                "lens: {records} records and {} words of blocks, read back in {:.2} s, decoded in {:.2} s",
                self.block_words,
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

/// The accesses a pass's region holds: its sample's workgroups in order, each a [`Block`].
fn block_accesses<'a>(
    block: &'a Block,
    sample: &'a PassSample,
    region: &'a [u32],
) -> impl Iterator<Item = Access> + 'a {
    let inv = block.invocations as usize;
    let per = block.words() as usize;
    sample
        .recorded()
        .zip(region.chunks_exact(per.max(1)))
        .flat_map(move |(wg, words)| {
            words
                .iter()
                .enumerate()
                .filter(|w| *w.1 != 0)
                .map(move |(k, &w)| Access {
                    wg,
                    lid: (k % inv) as u32,
                    site: block.sites[k / inv],
                    instance: 0,
                    addr: w - 1,
                })
        })
}
