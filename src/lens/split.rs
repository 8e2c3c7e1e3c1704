//! A run the record log cannot hold even at its fewest workgroups, recorded a few consecutive
//! passes a run (the others run their body as written).

use super::record::{self, Recorder};
use super::sample::Sampling;
use crate::algo::{self, Algorithm, RunRequest, RunResult};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use std::sync::Arc;

/// A run the log cannot hold in [`SPLIT_LOGS`] runs is refused: its accesses take the host 20
/// bytes each (about 1.8 GB a log of 1 GiB).
pub(super) const SPLIT_LOGS: u64 = 2;

/// The error for a run (or one pass) that needs `total` records of the log, which holds `cap`.
pub(super) fn too_large(gpu: &Gpu, total: u64, cap: u64) -> Error {
    Error::Limit(format!(
        "lens: this run needs {} words of the record log, {:.1}× the {} it holds ({} MiB, the \
         adapter's storage-binding limit, at most 1 GiB); {SPLIT_LOGS} runs could hold it at most: \
         record a smaller sample (--lens-sample with a fraction) or use a smaller N",
        3 * total,
        total as f64 / cap.max(1) as f64,
        3 * cap,
        record::log_bytes(gpu) >> 20
    ))
}

/// Record `req` at `sampling` a few consecutive passes a run, each run's passes within the log by
/// what they took in a run that overflowed it (`took`, per pass); a run that overflows again is
/// halved. The passes in order, the last run's output and the runs made.
pub(super) async fn record_split(
    algo: &dyn Algorithm,
    gpu: &Gpu,
    req: &RunRequest,
    normal: &RunResult,
    sampling: Sampling,
    took: &[u64],
    cap: u64,
) -> Result<(RunResult, Vec<record::PassRecord>, u32)> {
    let mut groups = std::collections::VecDeque::new();
    let (mut from, mut size) = (0, 0);
    for (i, &t) in took.iter().enumerate() {
        if i > from && size + t > cap / 10 * 9 {
            groups.push_back(from..i);
            (from, size) = (i, 0);
        }
        size += t;
    }
    groups.push_back(from..took.len());
    let (mut passes, mut runs, mut last) = (Vec::new(), 0, None);
    while let Some(only) = groups.pop_front() {
        runs += 1;
        let rec = Arc::new(Recorder::new(sampling, None).only(only.clone()));
        let lgpu = gpu.with_instrument(rec.clone());
        let recorded = algo::run_streamed(algo, &lgpu, req, &mut algo::Stages::keep()).await?;
        super::verify(&recorded, normal)?;
        match rec.overflow() {
            Some(_) if only.len() > 1 => {
                let mid = only.start + only.len() / 2;
                groups.push_front(mid..only.end);
                groups.push_front(only.start..mid);
            }
            Some(o) => return Err(too_large(gpu, o.passes[only.start], cap)),
            None => {
                passes.extend(rec.take());
                last = Some(recorded);
            }
        }
    }
    let last = last.ok_or_else(|| Error::Gpu("lens: no pass was recorded".into()))?;
    Ok((last, passes, runs))
}
