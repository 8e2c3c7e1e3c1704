//! The probes that measure the memory model ([`MemoryModel`]) on the adapter, once per adapter,
//! driver and copy shape, kept in the user's cache folder: the copy sweep, the scatter, gather,
//! scalar and launch kernels ([`SCATTER_WGSL`]) and the residency probe ([`RESIDENCY_WGSL`]).

use super::memory::MemoryModel;
use crate::error::Result;
use crate::gpu::Gpu;

/// The scatter and gather kernels of the model's measurement.
pub const SCATTER_WGSL: &str = include_str!("../../shaders/lens/scatter.wgsl");
/// The residency probe's kernel, its array's words a `{{WORDS}}` placeholder.
pub const RESIDENCY_WGSL: &str = include_str!("../../shaders/lens/residency.wgsl");

/// Words copied at each step of the sweep: 2^14 (128 KiB moved) to 2^26 (512 MiB moved, ten times
/// the largest L2s), within the adapter's binding limit. A software adapter (lavapipe) stops at
/// 2^22: past its CPU's caches its rate is flat, and each larger step costs seconds there.
fn sweep_sizes(gpu: &Gpu) -> Vec<u64> {
    let max = gpu.max_binding_bytes() / 4;
    let top = if gpu.info.device_type == wgpu::DeviceType::Cpu {
        22
    } else {
        26
    };
    (14..=top)
        .map(|k| 1u64 << k)
        .filter(|&n| n <= max)
        .collect()
}

/// Where the model of this adapter and driver, swept with the copy of `shape`, is kept.
fn cache_path(gpu: &Gpu, shape: (u32, u32)) -> Option<std::path::PathBuf> {
    use std::hash::{Hash, Hasher};
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")))?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&gpu.info.name, &gpu.info.driver, &gpu.info.driver_info).hash(&mut h);
    // The built-in shape keeps the name it had before the shape was a choice.
    if shape != crate::algo::copy::Options::default().shape() {
        shape.hash(&mut h);
    }
    Some(
        base.join("stagewise")
            .join(format!("memory-{:016x}.json", h.finish())),
    )
}

/// The adapter's memory model, swept with the copy `roofline`: from the cache, else measured now (a
/// few seconds, once) and kept. None without timestamps.
pub async fn model(
    gpu: &Gpu,
    roofline: &crate::algo::copy::Options,
) -> Result<Option<MemoryModel>> {
    if !gpu.has_timestamps() {
        return Ok(None);
    }
    // One sweep per process and adapter, even where the cache cannot be written: a second lens
    // waits for the first one's sweep and takes its model.
    // An async lock: the browser's one thread must not block on a sweep in progress.
    static MODELS: async_lock::Mutex<Vec<(String, MemoryModel)>> =
        async_lock::Mutex::new(Vec::new());
    let key = format!(
        "{} {} {} {:?}",
        gpu.info.name,
        gpu.info.driver,
        gpu.info.driver_info,
        roofline.shape()
    );
    let mut models = MODELS.lock().await;
    if let Some((_, m)) = models.iter().find(|(k, _)| *k == key) {
        return Ok(Some(m.clone()));
    }
    let m = model_uncached(gpu, roofline).await?;
    if let Some(m) = &m {
        models.push((key, m.clone()));
    }
    Ok(m)
}

async fn model_uncached(
    gpu: &Gpu,
    roofline: &crate::algo::copy::Options,
) -> Result<Option<MemoryModel>> {
    let path = cache_path(gpu, roofline.shape());
    let cached = path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<MemoryModel>(&t).ok());
    if let Some(mut m) = cached {
        // A model cached before the residency probe gains it once.
        if m.residency.is_empty() && !cpu_adapter(gpu) {
            m.residency = residency(gpu).await?;
            keep(&m, path);
        }
        return Ok(Some(m));
    }
    let mut sweep = Vec::new();
    for n in sweep_sizes(gpu) {
        if let Some(gbps) = super::copy_bandwidth(gpu, n as usize, roofline).await? {
            sweep.push((n, gbps));
        }
    }
    let mut m = MemoryModel::from_sweep(&gpu.info.name, &gpu.info.driver, sweep);
    if let Some(m) = &mut m
        && let Some(&(n, _)) = m.sweep.last()
    {
        let n = n as usize;
        let word = 4.0 * n as f64;
        let coalesced = word / (m.dram_gbps * 1e6);
        // Each probe's time less the fixed time (at least a tenth of it left).
        let fixed = m.fixed_ms;
        let work = |t: f64, other: f64| (t - fixed - other).max(0.1 * t);
        let rate = |t: Option<f64>, dram: f64| {
            // Sectors' bytes over the time the coalesced side leaves.
            t.map_or(dram, |t| 8.0 * word / (work(t, coalesced) * 1e6))
        };
        let dram = m.dram_gbps;
        m.scatter_gbps = rate(scatter_ms(gpu, n, "scatter").await?, dram);
        m.gather_gbps = rate(scatter_ms(gpu, n, "gather").await?, dram);
        if let Some(t) = scatter_ms(gpu, n, "scalar").await? {
            m.warps_per_us = (n / 32) as f64 / (work(t, 0.0) * 1e3);
        }
        // 2^16 workgroups (2^24 threads); the probe's buffers are the scatter's.
        let g = 1usize << 16;
        if let Some(t) = scatter_ms(gpu, g * 256, "launch").await? {
            m.launch_per_us = g as f64 / (work(t, 0.0) * 1e3);
        }
        if !cpu_adapter(gpu) {
            m.residency = residency(gpu).await?;
        }
    }
    if let Some(m) = &m {
        keep(m, path);
    }
    Ok(m)
}

/// A software adapter (lavapipe) runs a workgroup a thread, and has no SM to fill.
fn cpu_adapter(gpu: &Gpu) -> bool {
    gpu.info.device_type == wgpu::DeviceType::Cpu
}

/// Keep the model at `path`; a cache that cannot be written only costs the next run the sweep
/// again.
fn keep(m: &MemoryModel, path: Option<std::path::PathBuf>) {
    if let Some(p) = path {
        let _ = std::fs::create_dir_all(p.parent().unwrap_or(&p))
            .and_then(|_| std::fs::write(&p, serde_json::to_string_pretty(m).unwrap_or_default()));
    }
}

/// Bytes of workgroup memory a probe workgroup holds: every KiB to 8 KiB, then every 2 KiB, up to
/// the adapter's limit.
fn residency_sizes(limit: u32) -> Vec<u32> {
    (1..=8)
        .map(|k| k << 10)
        .chain((5..).map(|k| k << 11).take_while(|&b| b <= limit))
        .filter(|&b| b <= limit)
        .collect()
}

/// How many workgroups of 64 threads run at once, each holding each of `residency_sizes` bytes
/// of workgroup memory ([`RESIDENCY_WGSL`]): (bytes, workgroups) for every size at which every
/// workgroup counted itself out. A GPU gets 16384 workgroups, over three times what 144 SMs hold
/// at 32 an SM; a CPU adapter fewer and shorter ones, and its counts say only how its threads
/// happened to overlap (the model leaves them out).
pub async fn residency(gpu: &Gpu) -> Result<Vec<(u32, u32)>> {
    let (groups, spins) = if cpu_adapter(gpu) {
        (256u32, 16u32)
    } else {
        (16384, 300)
    };
    let out = gpu.storage_zeroed("residency out", groups as usize)?;
    let mut found = Vec::new();
    for bytes in residency_sizes(gpu.limits.max_compute_workgroup_storage_size) {
        let words = (bytes / 4).to_string();
        let source = crate::gpu::specialize(RESIDENCY_WGSL, &[("WORDS", words)]);
        let p = gpu.pipeline(&format!("residency {bytes}"), &source, "main")?;
        let count = gpu.storage_init("residency count", &[0, 0, 0, spins])?;
        let bg = gpu.bind(&p, &[&count, &out])?;
        let mut plan = crate::gpu::Plan::default();
        plan.push("residency", &p, bg, crate::gpu::grid(groups));
        plan.output = Some(crate::gpu::Region::words(&count, 4));
        plan.keep.push(count);
        let words = crate::gpu::execute(gpu, &plan, false).await?.output;
        // Every workgroup counted itself out, or the count means nothing.
        if let [0, most, ..] = words[..] {
            found.push((bytes, most));
        }
    }
    Ok(found)
}

/// Milliseconds of one probe `entry` ([`probe_plan`]) over `n` words (a power of two), warmed
/// like every timed path; None without timestamps.
async fn scatter_ms(gpu: &Gpu, n: usize, entry: &str) -> Result<Option<f64>> {
    let case = crate::algo::BenchCase::between_buffers(
        gpu,
        ["scatter src", "scatter dst"],
        n,
        n,
        |src, dst| probe_plan(gpu, entry, src, dst, n),
    )?;
    crate::gpu::timed::warm_for(gpu, &case.plan, crate::gpu::timed::DEFAULT_MIN_WARMUP_MS).await?;
    let t = crate::gpu::time(gpu, &case.plan, 3, 15).await?;
    Ok((t.total_ms > 0.0).then_some(t.total_ms))
}

/// One probe of [`SCATTER_WGSL`] (`scatter`, `gather`, `scalar` or `launch`) over `n` words, a power of two,
/// from `src` to `dst`.
pub fn probe_plan(
    gpu: &Gpu,
    entry: &str,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
    n: usize,
) -> Result<crate::gpu::Plan> {
    let p = gpu.pipeline(entry, SCATTER_WGSL, entry)?;
    let u = gpu.uniform("scatter params", &[n as u32, 0, 0, 0])?;
    let bg = gpu.bind(&p, &[src, dst, &u])?;
    let mut plan = crate::gpu::Plan::default();
    plan.push(entry, &p, bg, crate::gpu::grid((n as u32).div_ceil(256)));
    plan.keep.push(u);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residency_sizes_every_kib_to_8_then_every_2() {
        assert_eq!(
            residency_sizes(16 << 10),
            [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16].map(|k| k << 10)
        );
        assert_eq!(residency_sizes(4 << 10), [1, 2, 3, 4].map(|k| k << 10));
        assert_eq!(residency_sizes(49152).len(), 28);
    }
}
