//! The memory lens: every pass's global- and workgroup-memory accesses, recorded on the GPU by the
//! kernels' recording builds ([`ir`], [`record`]), analysed for coalescing and bank
//! conflicts ([`analysis`]), with a predicted time beside the measured one.

pub mod analysis;
mod entry;
pub mod ir;
pub mod record;
pub mod sites;

use crate::algo::{self, Algorithm, RunRequest, RunResult};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use analysis::PassLens;
use record::PassRecord;
use serde_json::{Value, json};

/// Elements every adapter may record; more where the record log is larger than 128 MiB.
pub const BASE_ELEMENTS: usize = 1 << 16;

/// The largest input the lens records on this adapter.
pub fn max_elements(gpu: &Gpu) -> usize {
    BASE_ELEMENTS * (record::log_bytes(gpu) >> 27).max(1) as usize
}

/// The default warp: the adapter's largest subgroup (32 on NVIDIA), 32 where it reports none.
pub fn default_warp(gpu: &Gpu) -> u32 {
    match gpu.info.subgroup_max_size {
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
    pub passes: Vec<PassLens>,
    pub records: Vec<PassRecord>,
}

impl LensReport {
    /// The CLI's top-level `"lens"` array.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.passes).unwrap_or(Value::Null)
    }

    /// How the prediction was made: the CLI's `"lens_model"`.
    pub fn model_json(&self) -> Value {
        json!({
            "warp": self.warp,
            "copy_gbps": self.copy_gbps,
            "sector_bytes": analysis::SECTOR,
            "segment_bytes": analysis::SEGMENT,
            "banks": analysis::BANKS,
            "shared_speedup": analysis::SHARED_SPEEDUP,
        })
    }

    /// The compact per-pass table of `stagewise run … --lens`.
    pub fn text(&self) -> String {
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |t| format!("{t:.4}"));
        let mut s = format!(
            "lens (warp {}, copy {} GB/s at this N):\n",
            self.warp,
            self.copy_gbps
                .map_or("unmeasured".to_string(), |b| format!("{b:.1}"))
        );
        for p in &self.passes {
            s.push_str(&format!(
                "  pass {} {}: floor {} B, predicted {} ms, measured {} ms\n",
                p.pass,
                p.label,
                p.floor_bytes,
                ms(p.predicted_ms),
                ms(p.gpu_ms)
            ));
            // "line L kind ": where a site stands and what it does.
            let site =
                |line: u32, kind: String| format!("    line {line:<4} {:<5} ", kind.to_lowercase());
            for g in &p.global {
                let per_request = |count: u64| count as f64 / g.requests.max(1) as f64;
                s.push_str(&site(g.line, format!("{:?}", g.kind)));
                s.push_str(&format!(
                    "{:<8} {:>8} requests  {:>6.2} sectors/request (ideal {:.2})  {:>6.2} segments/request\n",
                    g.buffer,
                    g.requests,
                    per_request(g.sectors),
                    per_request(g.min_sectors),
                    per_request(g.segments),
                ));
            }
            for w in &p.shared {
                s.push_str(&site(w.line, format!("{:?}", w.kind)));
                s.push_str(&format!(
                    "workgroup {:>8} requests  conflict ways max {} mean {:.2}\n",
                    w.requests, w.max_ways, w.mean_ways
                ));
            }
        }
        s
    }
}

/// Refuse a warp size or an input the lens cannot record, before any GPU work.
pub fn check(gpu: &Gpu, n: usize, warp: u32) -> Result<()> {
    if warp == 0 || warp > 1024 {
        return Err(Error::input(format!(
            "--lens-warp must be 1..=1024; got {warp}"
        )));
    }
    let max = max_elements(gpu);
    if n > max {
        return Err(Error::Limit(format!(
            "lens: N = {n} is too large to record; the limit on this adapter is {max} elements \
             (2^16 per 128 MiB of the record log, which is the storage-binding limit, at most 1 GiB)"
        )));
    }
    Ok(())
}

/// Record `req` in the kernels' recording builds and analyse it at warp size `warp`. `normal` is the
/// same request's normal run, whose per-pass GPU times stand beside the prediction. Waited for on
/// this thread (native: the CLI, tests); the app awaits [`record_run_async`].
#[cfg(not(target_arch = "wasm32"))]
pub fn record_run(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    normal: &RunResult,
    warp: u32,
) -> Result<LensReport> {
    pollster::block_on(record_run_async(algo, gpu, req, normal, warp))
}

/// [`record_run`], async.
pub async fn record_run_async(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    normal: &RunResult,
    warp: u32,
) -> Result<LensReport> {
    check(gpu, req.input.len(), warp)?;
    let (lgpu, rec) = gpu.with_lens();
    let recorded = algo::run_streamed(algo, &lgpu, req, &mut algo::Stages::keep()).await?;
    if let Some(m) = &recorded.mismatch {
        return Err(Error::Gpu(format!(
            "lens: the recording build's result differs from the CPU model: {m}"
        )));
    }
    let records = rec.take();
    let copy_gbps = copy_bandwidth(gpu, req.input.len()).await?;
    let times: Vec<Option<f64>> = if normal.passes.len() == records.len() {
        normal.passes.iter().map(|p| p.gpu_ms).collect()
    } else {
        vec![None; records.len()]
    };
    let passes = records
        .iter()
        .enumerate()
        .map(|(i, r)| analysis::analyse(i, r, warp, copy_gbps, times[i]))
        .collect();
    Ok(LensReport {
        warp,
        copy_gbps,
        passes,
        records,
    })
}

/// GB/s of the tuned copy kernel moving `n` words on this adapter (median of a few timed runs);
/// None when the adapter has no timestamps.
pub async fn copy_bandwidth(gpu: &Gpu, n: usize) -> Result<Option<f64>> {
    if !gpu.has_timestamps() {
        return Ok(None);
    }
    let copy = algo::copy::Options::default();
    let case = copy.bench_case(gpu, copy.info().variant(None)?, n, crate::data::DType::U32)?;
    let t = crate::gpu::time(gpu, &case.plan, 3, 15).await?;
    Ok((t.total_ms > 0.0).then(|| case.bytes as f64 / (t.total_ms * 1e6)))
}
