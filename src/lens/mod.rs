//! The memory lens: every pass's global- and workgroup-memory accesses, recorded on the GPU by the
//! kernels' recording builds ([`ir`], [`record`]) — all of them where the record log holds the
//! run, else those of a sample of workgroups ([`sample`]) — analysed for coalescing and bank
//! conflicts ([`analysis`]), with a time predicted from the adapter's memory system ([`memory`])
//! beside the measured one.

pub mod analysis;
mod entry;
mod estimate;
pub mod ir;
pub mod memory;
pub mod probe;
pub mod record;
pub mod sample;
pub mod sites;
mod split;

use crate::algo::{self, Algorithm, RunRequest, RunResult};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use analysis::PassLens;
use memory::MemoryModel;
use record::{PassRecord, Recorder};
use sample::{SampleSpec, Sampling};
use serde_json::{Value, json};
use std::sync::Arc;

/// Records a sampled run aims at: enough for every pass's sample, few enough to analyse in
/// seconds.
pub const SAMPLE_BUDGET: u64 = 1 << 23;

/// How to record: the warp the accesses are grouped by, which workgroups, the random sample's seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LensOptions {
    pub warp: u32,
    pub sample: SampleSpec,
    pub seed: u64,
    /// The copy the rates are measured with (the roofline: the wisdom's shape where there is one,
    /// as `bench` times it; else the built-in).
    pub roofline: algo::copy::Options,
}

impl LensOptions {
    /// Warp `warp`, the sample chosen by the record log's size, seed 1, the built-in copy.
    pub fn auto(warp: u32) -> Self {
        LensOptions {
            warp,
            sample: SampleSpec::Auto,
            seed: 1,
            roofline: Default::default(),
        }
    }

    /// The same with the copy the wisdom `w` gives for `n` words (see [`crate::bench::roofline`]).
    pub fn with_wisdom(self, w: Option<&crate::wisdom::Loaded>, n: usize) -> Self {
        LensOptions {
            roofline: crate::bench::roofline(&Default::default(), w, n).0,
            ..self
        }
    }
}

/// Elements every adapter may record; more where the record log is larger than 128 MiB.
pub const BASE_ELEMENTS: usize = 1 << 16;

/// The largest input the lens records on this adapter.
pub fn max_elements(gpu: &Gpu) -> usize {
    BASE_ELEMENTS * (record::log_bytes(gpu) >> 27).max(1) as usize
}

/// The default warp: the adapter's largest subgroup (32 on NVIDIA); 32 where it reports none
/// and on a CPU adapter, whose subgroups are its vector width, not a GPU's warps (the lens models
/// a GPU's memory system).
pub fn default_warp(gpu: &Gpu) -> u32 {
    match gpu.info.subgroup_max_size {
        _ if gpu.info.device_type == wgpu::DeviceType::Cpu => 32,
        0 => 32,
        w => w,
    }
}

/// A recorded and analysed run.
#[derive(Clone, Debug)]
pub struct LensReport {
    pub warp: u32,
    /// The copy kernel's bandwidth at this N on this adapter (None without timestamps).
    pub copy_gbps: Option<f64>,
    /// The copy it was measured with (and the memory model swept).
    pub roofline: algo::copy::Options,
    /// The adapter's memory system (None without timestamps).
    pub memory: Option<MemoryModel>,
    /// What was asked and the fraction of every grid recorded.
    pub spec: SampleSpec,
    pub sampling: Sampling,
    pub passes: Vec<PassLens>,
    pub records: Vec<PassRecord>,
    /// Wall time of the recording runs (every attempt: the recording build's run, its log read
    /// back) and how many there were; wall time of the analysis of every pass.
    pub recording_s: f64,
    pub attempts: u32,
    pub analysis_s: f64,
}

impl LensReport {
    /// Options that record another run beside this one: the same warp and copy, the auto sample.
    pub fn comparable(&self) -> LensOptions {
        LensOptions {
            roofline: self.roofline,
            ..LensOptions::auto(self.warp)
        }
    }

    /// The CLI's top-level `"lens"` array.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.passes).unwrap_or(Value::Null)
    }

    /// How the prediction was made: the CLI's `"lens_model"`.
    pub fn model_json(&self) -> Value {
        let m = self.memory.as_ref();
        json!({
            "warp": self.warp,
            "copy_gbps": self.copy_gbps,
            "copy_shape": {
                "workgroup_size": self.roofline.shape().0,
                "vec4_per_thread": self.roofline.shape().1,
            },
            "dram_gbps": m.map(|m| m.dram_gbps),
            "l2_gbps": m.map(|m| m.l2_gbps),
            "l2_bytes": m.map(|m| m.l2_bytes),
            "l2_source": m.map(|m| m.l2_source.clone()),
            "scatter_gbps": m.map(|m| m.scatter_gbps),
            "gather_gbps": m.map(|m| m.gather_gbps),
            "launch_per_us": m.map(|m| m.launch_per_us),
            "warps_per_us": m.map(|m| m.warps_per_us),
            "fixed_ms": m.map(|m| m.fixed_ms),
            "residency": m.map(|m| {
                m.residency
                    .iter()
                    .map(|&(b, n)| json!({"workgroup_bytes": b, "workgroups": n}))
                    .collect::<Vec<_>>()
            }),
            "workgroup_memory_at_once": m.and_then(|m| m.workgroup_memory_at_once()),
            "sector_bytes": analysis::SECTOR,
            "segment_bytes": analysis::SEGMENT,
            "banks": analysis::BANKS,
            "shared_speedup": analysis::SHARED_SPEEDUP,
        })
    }

    /// Which workgroups were recorded: the CLI's `"lens_sample"`.
    pub fn sample_json(&self) -> Value {
        let spec = match self.spec {
            SampleSpec::Auto => "auto".to_string(),
            SampleSpec::All => "all".to_string(),
            SampleSpec::Fraction(f) => format!("{f}"),
        };
        json!({
            "spec": spec,
            "fraction": self.sampling.fraction,
            "seed": self.sampling.seed,
            "all": self.records.iter().all(|r| r.sample.is_all()),
            "recording_s": self.recording_s,
            "attempts": self.attempts,
            "analysis_s": self.analysis_s,
            "passes": self.records.iter().map(|r| serde_json::to_value(&*r.sample).unwrap_or(Value::Null)).collect::<Vec<_>>(),
        })
    }

    /// One line on what was recorded.
    pub fn sample_text(&self) -> String {
        let took = format!(
            "; recorded in {:.1} s ({} run{}), analysed in {:.1} s",
            self.recording_s,
            self.attempts,
            if self.attempts == 1 { "" } else { "s" },
            self.analysis_s
        );
        if self.records.iter().all(|r| r.sample.is_all()) {
            return format!("every workgroup recorded{took}");
        }
        let (g, s): (u64, u64) = self.records.iter().fold((0, 0), |a, r| {
            (a.0 + r.sample.workgroups, a.1 + r.sample.sampled)
        });
        format!(
            "a sample of {s} of {g} workgroups ({:.3} %): in every pass the first {} and the last, \
             the rest one from each block of an even stride, at offsets shifted by seed {}; counts weighed up to the \
             whole grid{took}",
            100.0 * s as f64 / g.max(1) as f64,
            sample::FIRST,
            self.sampling.seed
        )
    }

    /// The compact per-pass table of `stagewise run … --lens`.
    pub fn text(&self) -> String {
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |t| format!("{t:.4}"));
        let mut s = format!(
            "lens (warp {}, copy {} GB/s at this N{}; {}):\n",
            self.warp,
            self.copy_gbps
                .map_or("unmeasured".to_string(), |b| format!("{b:.1}")),
            self.memory.as_ref().map_or(String::new(), |m| format!(
                "; DRAM {:.0} GB/s after {:.4} ms a pass, {}",
                m.dram_gbps,
                m.fixed_ms,
                m.cache_and_rates()
            )),
            self.sample_text()
        );
        for p in &self.passes {
            s.push_str(&format!(
                "  pass {} {}: floor {} B, footprint {} B, predicted {} ms{}, measured {} ms\n",
                p.pass,
                p.label,
                p.floor_bytes,
                p.footprint_bytes,
                ms(p.predicted_ms),
                p.prediction.as_ref().map_or(String::new(), |x| format!(
                    " ({}: fixed {:.4} + DRAM {:.4}{} + L2 {:.4} + conflicts {:.4}{})",
                    x.case,
                    x.fixed_ms,
                    x.dram_ms,
                    if x.scattered_bytes > 0 {
                        format!(" (scattered or sparse {:.4})", x.scattered_ms)
                    } else {
                        String::new()
                    },
                    x.l2_ms,
                    x.replay_ms,
                    {
                        let idle = if x.idle_ms > 0.0 {
                            format!(
                                "; {} idle workgroups' launches add {:.4}",
                                p.idle_workgroups(),
                                x.idle_ms
                            )
                        } else {
                            String::new()
                        };
                        match x.limit() {
                            memory::Limit::Launches => format!(
                                "; launch-bound: {} workgroups take {:.4}",
                                p.workgroups, x.launch_ms
                            ),
                            memory::Limit::RoundTrips => format!(
                                "; bound by round trips: {} working warps take {:.4}{idle}",
                                p.working_warps, x.latency_ms
                            ),
                            memory::Limit::Bytes => idle,
                        }
                    }
                )),
                ms(p.gpu_ms)
            ));
            if let Some(v) = p.prediction.as_ref().and_then(|x| x.verdict.as_ref()) {
                s.push_str(&format!("    {v}\n"));
            }
            // "line L kind ": where a site stands and what it does.
            let site =
                |line: u32, kind: String| format!("    line {line:<4} {:<5} ", kind.to_lowercase());
            for g in &p.global {
                let per_request = |count: u64| count as f64 / g.requests.max(1) as f64;
                s.push_str(&site(g.line, format!("{:?}", g.kind)));
                s.push_str(&format!(
                    "{:<8} {:>8} requests  {:>6.2} sectors/request (ideal {:.2})  {:>6.2} segments/request{}\n",
                    g.buffer,
                    g.requests,
                    per_request(g.sectors),
                    per_request(g.min_sectors),
                    per_request(g.segments),
                    spread(g.sample_error),
                ));
            }
            for w in &p.shared {
                s.push_str(&site(w.line, format!("{:?}", w.kind)));
                s.push_str(&format!(
                    "workgroup {:>8} requests  conflict ways max {} mean {:.2}{}\n",
                    w.requests,
                    w.max_ways,
                    w.mean_ways,
                    spread(w.sample_error)
                ));
            }
        }
        s
    }
}

/// A sampled site's standard error, where it is worth stating.
fn spread(e: Option<f64>) -> String {
    match e {
        Some(e) if e >= 0.001 => format!("  (sampled: ±{:.1}%)", 100.0 * e),
        _ => String::new(),
    }
}

/// Refuse a warp size, or an input `--lens-sample all` cannot record, before any GPU work.
pub fn check(gpu: &Gpu, n: usize, o: &LensOptions) -> Result<()> {
    if o.warp == 0 || o.warp > 1024 {
        return Err(Error::input(format!(
            "--lens-warp must be 1..=1024; got {}",
            o.warp
        )));
    }
    let max = max_elements(gpu);
    if o.sample == SampleSpec::All && n > max {
        return Err(Error::Limit(format!(
            "lens: N = {n} is too large to record every workgroup; the limit on this adapter is {max} \
             elements (2^16 per 128 MiB of the record log, which is the storage-binding limit, at most \
             1 GiB): drop --lens-sample all to record a sample"
        )));
    }
    Ok(())
}

/// Record `req` in the kernels' recording builds and analyse it at warp size `warp`, every
/// workgroup where the log holds the run, else a sample. `normal` is the same request's normal
/// run, whose per-pass GPU times stand beside the prediction. Waited for on this thread (native:
/// the CLI, tests); the app awaits [`record_run_async`].
#[cfg(not(target_arch = "wasm32"))]
pub fn record_run(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    normal: &RunResult,
    warp: u32,
) -> Result<LensReport> {
    let o = LensOptions::auto(warp);
    pollster::block_on(record_run_async(algo, gpu, req, normal, &o))
}

/// [`record_run`] with the sample chosen by `o`, async (native callers: `pollster::block_on`).
pub async fn record_run_async(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    normal: &RunResult,
    o: &LensOptions,
) -> Result<LensReport> {
    let n = req.input.len();
    check(gpu, n, o)?;
    let cap = record::capacity(gpu);
    let mut last_resort = false;
    let mut sampling = Sampling::new(
        match o.sample {
            SampleSpec::All => 1.0,
            SampleSpec::Fraction(f) => f,
            SampleSpec::Auto => (max_elements(gpu) as f64 / n.max(1) as f64).min(1.0),
        },
        o.seed,
    );
    let mut attempts = 0;
    let started = web_time::Instant::now();
    let (recorded, records) = loop {
        attempts += 1;
        let fraction = sampling.fraction;
        // Auto: a run past the budget is recorded again with a smaller sample.
        let budget = (o.sample == SampleSpec::Auto).then(|| {
            if fraction >= 1.0 || last_resort {
                cap
            } else {
                SAMPLE_BUDGET.min(cap)
            }
        });
        let rec = Arc::new(Recorder::new(sampling, budget));
        let lgpu = gpu.with_instrument(rec.clone());
        let t = web_time::Instant::now();
        let recorded = algo::run_streamed(algo, &lgpu, req, &mut algo::Stages::keep()).await?;
        let overflow = rec.overflow();
        if std::env::var_os("STAGEWISE_LENS_TIMES").is_some() {
            // Debugging aid: where a recording's time goes.
            eprintln!(
                "lens: run {attempts} at {fraction:.5}: {:.2} s, overflow {overflow:?}",
                t.elapsed().as_secs_f64()
            );
        }
        match overflow {
            // Three smaller samples aim at the budget (an overflow is reported only where a
            // smaller sample records fewer workgroups: a run already at its fewest is kept if
            // the whole log holds it); the whole log may take the fourth. A grid at its fewest
            // workgroups goes down to fewer (Sampling::scaled).
            Some(o) if o.shrinks && attempts < 4 => {
                let target = SAMPLE_BUDGET.min(cap) as f64 * 0.7;
                sampling = sampling.scaled((target / o.total as f64).min(0.5));
                last_resort = attempts == 3;
            }
            // The log cannot hold the run at this sample: a few passes a run.
            Some(o) => {
                if o.total > split::SPLIT_LOGS * cap {
                    return Err(split::too_large(gpu, o.total, cap));
                }
                let (recorded, passes, runs) =
                    split::record_split(algo, gpu, req, normal, sampling, &o.passes, cap).await?;
                attempts += runs;
                break (recorded, (passes, sampling));
            }
            None => break (recorded, (rec.take(), sampling)),
        }
    };
    verify(&recorded, normal)?;
    let recording_s = started.elapsed().as_secs_f64();
    let (records, sampling) = records;
    let copy_gbps = copy_bandwidth(gpu, n, &o.roofline).await?;
    let memory = probe::model(gpu, &o.roofline).await?;
    let times = measured(algo, gpu, req, normal, records.len()).await?;
    let started = web_time::Instant::now();
    let passes = analysis::analyse_all(&records, o.warp, memory.as_ref(), &times);
    Ok(LensReport {
        warp: o.warp,
        copy_gbps,
        roofline: o.roofline,
        memory,
        spec: o.sample,
        sampling,
        passes,
        records,
        recording_s,
        attempts,
        analysis_s: started.elapsed().as_secs_f64(),
    })
}

/// The rooms leave a recording run to this check (algo::verdict): its output against the normal
/// run's, which was checked against the CPU model.
fn verify(recorded: &RunResult, normal: &RunResult) -> Result<()> {
    match recorded
        .mismatch
        .clone()
        .or_else(|| normal.verified.then(|| differs(recorded, normal)).flatten())
    {
        Some(m) => Err(Error::Gpu(format!(
            "lens: the recording build's result differs from the normal run's: {m}"
        ))),
        None => Ok(()),
    }
}

/// Where a recording run's output differs from the normal run's: every bit for integers (and the
/// sort's values), f32 within 1e-4 of the normal output's norm (the recording build may round
/// differently, e.g. contract a multiply-add, and a look-back's sums may associate differently).
fn differs(rec: &RunResult, normal: &RunResult) -> Option<String> {
    let (a, b) = (&rec.output.bits, &normal.output.bits);
    if a.len() != b.len() {
        return Some(format!("{} words, the normal run {}", a.len(), b.len()));
    }
    if rec.extra.get("values") != normal.extra.get("values") {
        return Some("the values differ".into());
    }
    if rec.output.dtype != crate::data::DType::F32 {
        let i = a.iter().zip(b).position(|(x, y)| x != y)?;
        let last = a.iter().zip(b).rposition(|(x, y)| x != y).unwrap_or(i);
        let count = a.iter().zip(b).filter(|(x, y)| x != y).count();
        let f = |v| crate::data::fmt_bits(rec.output.dtype, v);
        return Some(format!(
            "element {i}: {} here, {} in the normal run ({count} of {} elements differ, the last \
             at {last})",
            f(a[i]),
            f(b[i]),
            a.len()
        ));
    }
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        let (x, y) = (f32::from_bits(x) as f64, f32::from_bits(y) as f64);
        match (x.is_finite(), y.is_finite()) {
            (true, true) => {
                diff += (x - y) * (x - y);
                norm += y * y;
            }
            _ if x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()) => {}
            _ => return Some(format!("element {i}: {x} here, {y} in the normal run")),
        }
    }
    let rel = (diff / norm.max(f64::MIN_POSITIVE)).sqrt();
    (diff > 0.0 && rel > 1e-4).then(|| format!("relative difference {rel:.2e} (at most 1e-4)"))
}

/// Each pass's measured time: past [`BASE_ELEMENTS`] (where engineers bench) the median of 20
/// timed runs of the room's bench plan of the run ([`Algorithm::bench_case_for`]) after 300 ms of
/// warm-up, where its passes are the run's; else the normal run's own timestamps.
async fn measured(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    normal: &RunResult,
    passes: usize,
) -> Result<Vec<Option<f64>>> {
    if gpu.has_timestamps() && req.input.len() > BASE_ELEMENTS {
        // A room that cannot bench this run's shape (e.g. an FFT of real pairs) keeps the normal
        // run's timestamps.
        if let Ok(case) = algo.bench_case_for(gpu, req)
            && case.plan.passes.len() == passes
        {
            crate::gpu::timed::warm_for(gpu, &case.plan, crate::gpu::timed::DEFAULT_MIN_WARMUP_MS)
                .await?;
            let t = crate::gpu::time(gpu, &case.plan, 0, 20).await?;
            if t.pass_ms.len() == passes {
                return Ok(t.pass_ms.into_iter().map(Some).collect());
            }
        }
    }
    Ok(if normal.passes.len() == passes {
        normal.passes.iter().map(|p| p.gpu_ms).collect()
    } else {
        vec![None; passes]
    })
}

/// GB/s of the tuned copy kernel moving `n` words on this adapter (median of a few timed runs);
/// None when the adapter has no timestamps.
pub async fn copy_bandwidth(
    gpu: &Gpu,
    n: usize,
    copy: &algo::copy::Options,
) -> Result<Option<f64>> {
    if !gpu.has_timestamps() {
        return Ok(None);
    }
    let case = copy.bench_case(gpu, copy.info().variant(None)?, n, crate::data::DType::U32)?;
    // Past 2^16 elements, warm by time first, as long as every timed path does: after the
    // recording's seconds of CPU work the GPU has idled (with 100 ms the lens read the H100's copy
    // at 2^24 words at 1292-1312 GB/s, the suite after 500 ms at 2645).
    if n > BASE_ELEMENTS {
        crate::gpu::timed::warm_for(gpu, &case.plan, crate::gpu::timed::DEFAULT_MIN_WARMUP_MS)
            .await?;
    }
    let t = crate::gpu::time(gpu, &case.plan, 3, 15).await?;
    Ok((t.total_ms > 0.0).then(|| case.bytes as f64 / (t.total_ms * 1e6)))
}

/// The user's access sites the lens recorded, each with its place and source text: the lens's
/// table names lines, this names what stands there. One JSON object a site, first pass first.
pub fn kernel_sites(report: &LensReport) -> Vec<serde_json::Value> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for r in &report.records {
        for s in &r.kernel.sites {
            if seen.insert((s.line, s.col, s.buffer.clone())) {
                out.push(json!({
                    "line": s.line, "col": s.col, "kind": s.kind, "buffer": s.buffer,
                    "memory": if s.space == sites::Space::Global { "global" } else { "workgroup" },
                    "expr": s.expr, "text": s.text.trim(),
                }));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Data;

    fn result(output: Data) -> RunResult {
        RunResult {
            algorithm: crate::algo::Algo::Copy,
            variant: "v".into(),
            dtype: output.dtype,
            n: output.len(),
            adapter: "a".into(),
            input: output.clone(),
            output,
            output_json: None,
            passes: Vec::new(),
            verified: true,
            mismatch: None,
            stages: Vec::new(),
            extra: Default::default(),
        }
    }

    #[test]
    fn a_recording_differs_from_the_normal_run_by_bits_or_past_the_f32_tolerance() {
        let ints = result(Data::from_u32(&[1, 2, 3]));
        assert!(differs(&ints, &ints).is_none());
        let e = differs(&result(Data::from_u32(&[1, 2, 4])), &ints).unwrap();
        assert!(e.contains("element 2: 4 here, 3 in the normal run"), "{e}");
        let e = differs(&result(Data::from_u32(&[9, 2, 8])), &ints).unwrap();
        assert!(
            e.contains(
                "element 0: 9 here, 1 in the normal run (2 of 3 elements differ, the last at 2)"
            ),
            "{e}"
        );
        let e = differs(&result(Data::from_u32(&[1, 2])), &ints).unwrap();
        assert!(e.contains("2 words"), "{e}");
        // The sort's values are compared too.
        let mut with = ints.clone();
        with.extra
            .insert("values".into(), serde_json::json!([0, 1, 2]));
        assert!(differs(&ints, &with).is_some());
        // f32: rounding within 1e-4 of the norm passes, NaN against NaN and ±inf as they are.
        let x: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
        let near: Vec<f32> = x.iter().map(|v| v * (1.0 + 1e-6)).collect();
        let normal = result(Data::from_f32(&x));
        assert!(differs(&result(Data::from_f32(&near)), &normal).is_none());
        let mut bad = x.clone();
        bad[500] += 100.0;
        let e = differs(&result(Data::from_f32(&bad)), &normal).unwrap();
        assert!(e.contains("relative difference"), "{e}");
        let special = [f32::NAN, f32::INFINITY, -0.0, 1.0];
        let s = result(Data::from_f32(&special));
        assert!(differs(&s, &s).is_none());
        let e = differs(&result(Data::from_f32(&[f32::NAN, 1.0, -0.0, 1.0])), &s).unwrap();
        assert!(e.contains("element 1"), "{e}");
    }
}
