//! Recording on the GPU: the lens as the engine's instrument ([`crate::gpu::hook`]). A `Gpu` with
//! a [`Recorder`] ([`recording`]) compiles every kernel in its recording build ([`super::ir`]);
//! every run then binds one record log at group 1 of every pass, copies the log's counter after
//! every pass (so each pass's records are the slice between two counters), and reads the records
//! back after the run: the passes land in the [`Recorder`].

use super::sample::{MAX_WORKGROUPS, PassSample, Sampling};
use super::sites::{Block, INSTANCE_BITS, LID_BITS, LensEntry, LensKernel, MAX_SITES};
use crate::error::{Error, Result};
use crate::gpu::hook::{Built, HookFuture, Instrument, RunHook};
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
    /// Bytes of workgroup memory a workgroup uses.
    pub workgroup_bytes: u32,
    /// The workgroups recorded and what each stands for.
    pub sample: Arc<PassSample>,
    pub accesses: Vec<Access>,
}

/// A recording run past its budget or the log: nothing of it is kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Overflow {
    /// What the run needed of the log, in records (3 words: its records', chunks' and blocks'
    /// words over 3).
    pub total: u64,
    /// Per pass, what it took of the log in records: its records', chunks' and blocks' words over
    /// 3 (its blocks alone where the log could not hold the regions and nothing was recorded).
    pub passes: Vec<u64>,
    /// A smaller sample would record fewer workgroups (some pass's grid is larger than the
    /// fewest a sample takes), and the run was over its budget.
    pub shrinks: bool,
}

/// Where a recording run's passes land (shared by the clones of a recording `Gpu`).
#[derive(Debug)]
pub struct Recorder {
    passes: Mutex<Vec<PassRecord>>,
    /// Which workgroups of every pass record.
    pub sampling: Sampling,
    /// Set instead of an error where the log could not hold a run, or a smaller sample would
    /// keep it within its budget.
    overflow: Mutex<Option<Overflow>>,
    /// Records a run may make before it counts as an overflow (at most the log's capacity).
    pub budget: Option<u64>,
    /// The passes that record (all where None): a run the log cannot hold is recorded a few
    /// passes at a time.
    pub only: Option<std::ops::Range<usize>>,
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
            only: None,
        }
    }

    /// This recorder recording passes `only` alone.
    pub fn only(mut self, only: std::ops::Range<usize>) -> Recorder {
        self.only = Some(only);
        self
    }

    /// What the last run past its budget or the log made (taken).
    pub fn overflow(&self) -> Option<Overflow> {
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

/// `gpu` in recording mode (the memory lens): the same device and queue, every kernel built in
/// its recording build (every storage and workgroup access records itself), every pass's accesses
/// read back into the returned recorder.
pub fn recording(gpu: &Gpu) -> (Gpu, Arc<Recorder>) {
    let rec = Arc::new(Recorder::default());
    (gpu.with_instrument(rec.clone()), rec)
}

impl Instrument for Recorder {
    fn mode(&self) -> &'static str {
        "lens"
    }

    fn build(&self, label: &str, source: &str, entry: &str) -> Result<Built> {
        let k = super::ir::instrument(label, source)?;
        Ok(Built {
            source: k.source.clone(),
            // naga's writer may rename an entry point in the recording build (`main2` → `main2_`).
            entry: k.entry(entry).to_string(),
            data: Arc::new(k),
        })
    }

    fn begin(self: Arc<Self>, gpu: &Gpu, plan: &Plan) -> Result<Box<dyn RunHook>> {
        Ok(Box::new(LensRun::new(gpu, plan, self)?))
    }
}

/// A pipeline's recording build and its entry point, as its device built it.
fn lens_kernel(
    gpu: &Gpu,
    p: &wgpu::ComputePipeline,
) -> Option<(Arc<LensKernel>, Option<LensEntry>)> {
    let info = gpu.kernel_info(p)?;
    let k = info.built?.downcast::<LensKernel>().ok()?;
    let entry = k.entry_point(&info.entry).cloned();
    Some((k, entry))
}

/// The largest record log: the adapter's storage-binding limit, at most 1 GiB.
pub fn log_bytes(gpu: &Gpu) -> u64 {
    gpu.max_binding_bytes().min(1 << 30)
}

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
struct LensRun {
    rec: Arc<Recorder>,
    log: wgpu::Buffer,
    groups: Vec<wgpu::BindGroup>,
    counters: wgpu::Buffer,
    kernels: Vec<Arc<LensKernel>>,
    samples: Vec<Arc<PassSample>>,
    /// Per pass: invocations and bytes of workgroup memory a workgroup.
    invocations: Vec<(u32, u32)>,
    /// Per pass: its straight-line sites' block and the word its region starts at.
    blocks: Vec<Option<(Block, u64)>>,
    /// The log's words from the first region on (the records below it).
    top: u64,
    /// Words every region takes together.
    block_words: u64,
    cap: u64,
    /// Words above the records that a chunk past them may take.
    spare: u64,
    /// Per pass: it records in this run ([`Recorder::only`]).
    on: Vec<bool>,
}

impl LensRun {
    fn new(gpu: &Gpu, plan: &Plan, rec: Arc<Recorder>) -> Result<LensRun> {
        let mut kernels = Vec::with_capacity(plan.passes.len());
        let mut blocks = Vec::with_capacity(plan.passes.len());
        let mut invocations = Vec::with_capacity(plan.passes.len());
        for p in &plan.passes {
            let (kernel, entry) = lens_kernel(gpu, &p.pipeline).ok_or_else(|| {
                Error::Input(format!(
                    "lens: pass '{}' was not built in the recording build",
                    p.label
                ))
            })?;
            kernels.push(kernel);
            invocations.push(
                entry
                    .as_ref()
                    .map_or((0, 0), |e| (e.invocations, e.workgroup_bytes)),
            );
            blocks.push(entry.and_then(|e| e.block));
        }
        let words = log_words(gpu);
        // One sample per grid size: passes of one size record the same workgroups.
        let sampling = rec.sampling;
        let only = rec.only.clone();
        let on: Vec<bool> = (0..plan.passes.len())
            .map(|i| only.as_ref().is_none_or(|r| r.contains(&i)))
            .collect();
        for (b, &on) in blocks.iter_mut().zip(&on) {
            if !on {
                *b = None;
            }
        }
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
        // Records and chunks start below `cap` (words); a chunk taken past it lands on the spare
        // words above it, as long as the longest chunk.
        let spare = kernels
            .iter()
            .flat_map(|k| k.loops.iter().map(|l| l.len() as u64 + 2))
            .max()
            .unwrap_or(0)
            .max(3);
        let cap = top.saturating_sub(spare);
        let log = gpu.storage_zeroed("lens record log", ((HEADER / 4) + words + 1) as usize)?;
        gpu.queue
            .write_buffer(&log, 0, bytemuck::cast_slice(&[0u32, cap as u32, 0, 0]));
        let mut picks: HashMap<(u64, bool), wgpu::Buffer> = HashMap::new();
        let mut groups = Vec::with_capacity(plan.passes.len());
        for (((p, sample), block), &on) in plan.passes.iter().zip(&samples).zip(&blocks).zip(&on) {
            let pick = match picks.entry((sample.workgroups, on)) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let words = if fits && on {
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
            rec,
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
            spare,
            on,
        })
    }

    /// Read the counters back, then the records: every pass's accesses land in the recorder.
    async fn read(&self, gpu: &Gpu, plan: &Plan) -> Result<()> {
        let b = crate::gpu::runner::readback_buffer(gpu, self.counters.size());
        gpu.scoped(|| {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&self.counters, 0, &b, 0, b.size());
            gpu.queue.submit([enc.finish()]);
        })?;
        let counters = crate::gpu::runner::read_all(gpu, &[(&b, b.size())])
            .await?
            .pop()
            .unwrap_or_default();
        self.finish_with(gpu, plan, &counters).await
    }

    /// With the counters read back: check the log held every access, read the records and hand
    /// the passes to the recorder.
    async fn finish_with(&self, gpu: &Gpu, plan: &Plan, counters: &[u32]) -> Result<()> {
        let rec = &self.rec;
        // Words of records and chunks (the counter grows with every pass; a counter that went
        // round 2^32 shows as one that fell).
        let used = counters.last().copied().unwrap_or(0) as u64;
        let wrapped = counters.windows(2).any(|w| w[1] < w[0]);
        // The records, chunks and regions, in records of the log.
        let total = (used + self.block_words).div_ceil(3);
        let over_log = wrapped || total > self.cap || used > self.top.saturating_sub(self.spare);
        // A run over its budget whose every sample is already at its fewest is kept where the
        // whole log holds it: running it again with a smaller fraction would record the same
        // workgroups.
        let shrinks = rec.budget.is_some_and(|b| total > b.min(self.cap))
            && rec
                .sampling
                .can_shrink(self.samples.iter().map(|s| s.as_ref()));
        if over_log || shrinks {
            let passes = (0..plan.passes.len())
                .map(|i| {
                    let before = if i == 0 { 0 } else { counters[i - 1] };
                    let blocks = self.blocks[i]
                        .as_ref()
                        .map_or(0, |(b, _)| self.samples[i].sampled * b.words());
                    (counters[i].wrapping_sub(before) as u64 + blocks).div_ceil(3)
                })
                .collect();
            if let Ok(mut o) = rec.overflow.lock() {
                *o = Some(Overflow {
                    total,
                    passes,
                    shrinks,
                });
            }
            return Ok(());
        }
        let read = web_time::Instant::now();
        // The records from the log's start, the regions from `top` to the end.
        let ranges = [(0, used), (self.top, self.block_words)];
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
        let words = if used > 0 {
            read_back.next().unwrap_or_default()
        } else {
            Vec::new()
        };
        let regions = read_back.next().unwrap_or_default();
        let decode = web_time::Instant::now();
        let mut start = 0usize;
        let mut out = Vec::with_capacity(plan.passes.len());
        for (i, p) in plan.passes.iter().enumerate() {
            let end = counters[i] as usize;
            let mut accesses = log_accesses(&self.kernels[i], &words[start..end])?;
            start = end;
            if !self.on[i] {
                continue;
            }
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
                invocations: self.invocations[i].0,
                workgroup_bytes: self.invocations[i].1,
                sample: self.samples[i].clone(),
                accesses,
            });
        }
        if std::env::var_os("STAGEWISE_LENS_TIMES").is_some() {
            eprintln!(
                "lens: {used} words of records and chunks and {} words of blocks, read back in {:.2} s, decoded in {:.2} s",
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

impl RunHook for LensRun {
    fn bind(&self, cp: &mut wgpu::ComputePass<'_>, pass: usize) {
        cp.set_bind_group(1, &self.groups[pass], &[]);
    }

    /// After pass `pass`: keep the log's counter.
    fn after(&self, enc: &mut wgpu::CommandEncoder, pass: usize) {
        enc.copy_buffer_to_buffer(&self.log, 0, &self.counters, pass as u64 * 4, 4);
    }

    fn finish<'a>(&'a self, gpu: &'a Gpu, plan: &'a Plan) -> HookFuture<'a> {
        Box::pin(self.read(gpu, plan))
    }
}

/// The accesses of a pass's records and chunks (`words`, in the order the GPU took them).
fn log_accesses(k: &LensKernel, words: &[u32]) -> Result<Vec<Access>> {
    let mask = (1u32 << INSTANCE_BITS) - 1;
    let mut out = Vec::with_capacity(words.len() / 2);
    // Chunks an invocation took of each loop so far: its sites' instance.
    let mut taken: HashMap<u64, u32> = HashMap::new();
    let mut at = 0;
    while at < words.len() {
        let (Some(&who), Some(&what)) = (words.get(at), words.get(at + 1)) else {
            break;
        };
        let (wg, lid) = (who >> LID_BITS, who & ((1 << LID_BITS) - 1));
        let (tag, instance) = ((what >> INSTANCE_BITS) as usize, what & mask);
        // A chunk's tag counts down from the last site id ([`super::sites::recorder`]).
        let chunk = (MAX_SITES - 1)
            .checked_sub(tag)
            .and_then(|l| k.loops.get(l).filter(|_| tag >= k.sites.len()));
        match chunk {
            Some(sites) => {
                let n = taken.entry((who as u64) << 12 | tag as u64).or_insert(0);
                let instance = *n;
                *n += 1;
                let body = words.get(at + 2..at + 2 + sites.len());
                let body =
                    body.ok_or_else(|| Error::Gpu("lens: a chunk runs past the log".into()))?;
                out.extend(
                    sites
                        .iter()
                        .zip(body)
                        .filter(|w| *w.1 != 0)
                        .map(|(&site, &w)| Access {
                            wg,
                            lid,
                            site,
                            instance,
                            addr: w - 1,
                        }),
                );
                at += 2 + sites.len();
            }
            None => {
                let addr = *words
                    .get(at + 2)
                    .ok_or_else(|| Error::Gpu("lens: a record runs past the log".into()))?;
                out.push(Access {
                    wg,
                    lid,
                    site: tag as u32,
                    instance,
                    addr,
                });
                at += 3;
            }
        }
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Records and chunks as the recorder lays them out: a record is read as it is, a chunk's
    /// words by its loop's sites (holes skipped), its instance counted per invocation.
    #[test]
    fn records_and_chunks_decode_to_accesses() {
        let site = super::super::sites::Site {
            kind: super::super::sites::Kind::Read,
            space: super::super::sites::Space::Global,
            buffer: String::new(),
            width: 1,
            line: 0,
            col: 0,
            expr: String::new(),
            text: String::new(),
        };
        let k = LensKernel {
            sites: vec![site; 9],
            loops: vec![vec![5, 7], vec![8]],
            ..Default::default()
        };
        let who = |wg: u32, lid: u32| (wg << LID_BITS) | lid;
        let tag = |l: usize| ((MAX_SITES - 1 - l) as u32) << INSTANCE_BITS;
        let words = [
            // site 2, instance 3, address 10
            who(1, 2),
            (2 << INSTANCE_BITS) | 3,
            10,
            // loop 0 of invocation (1, 2): site 5 at 11, site 7 not reached
            who(1, 2),
            tag(0),
            12,
            0,
            // loop 0 of invocation (0, 1), then of (1, 2) again; loop 1 of (1, 2)
            who(0, 1),
            tag(0),
            21,
            22,
            who(1, 2),
            tag(0),
            0,
            14,
            who(1, 2),
            tag(1),
            31,
        ];
        let got: Vec<_> = log_accesses(&k, &words)
            .unwrap()
            .into_iter()
            .map(|a| (a.wg, a.lid, a.site, a.instance, a.addr))
            .collect();
        assert_eq!(
            got,
            [
                (1, 2, 2, 3, 10),
                (1, 2, 5, 0, 11),
                (0, 1, 5, 0, 20),
                (0, 1, 7, 0, 21),
                (1, 2, 7, 1, 13),
                (1, 2, 8, 0, 30),
            ]
        );
        // A chunk cut short by the end of the pass's words is an error, not a guess.
        assert!(log_accesses(&k, &words[..words.len() - 1]).is_err());
    }
}
