//! The memory system the lens predicts with: the copy kernel's rate from DRAM, its rate where the
//! working set stays in the last-level cache (L2), and that cache's size. Stagewise measures them
//! once per adapter and driver with a copy sweep across sizes (the knee where the rate falls is the
//! cache's size) and keeps the result in the user's cache folder; a table of known GPUs gives
//! the size where the sweep shows no knee.
//!
//! Past the cache a scattered request (every lane in its own sector and segment) costs DRAM far more
//! than its sectors at the copy rate (a partial sector each, a DRAM page each): the model prices
//! such sites' sectors at the rate a scatter and a gather of one word a thread reach, measured
//! with the sweep ([`SCATTER_WGSL`](super::probe::SCATTER_WGSL)). A sparse request (whole sectors, each in its own segment)
//! costs its sectors at the gather's rate, read or written.
//!
//! A pass takes at least its grid at the rate idle workgroups launch (measured too): a pass
//! whose threads mostly sleep (a ladder's later phases) is bound by launching them, not by bytes.
//! And at least its working warps at the rate warps of one word a thread make their round trip to
//! memory (a scalar copy, measured): a workgroup whose warps half sleep holds its place on the SM
//! all the same, so it keeps half the loads in flight a copy would.
//!
//! Every pass costs a fixed time besides: the sweep's times are fitted as that time plus bytes at
//! the copy's rate (the DRAM rate is that fit's, past the cache), so a pass of 2^24 words is not
//! priced at a rate only larger copies reach.
//!
//! Idle workgroups (those that touch no global memory) cost their launches on top: they hold the
//! SMs' places while they launch as the working ones do while they wait.
//!
//! A pass's predicted time: the fixed time, plus the idle workgroups' launches, plus the largest
//! of the working workgroups' launches, the round trips and the memory's time: the bytes that must come from DRAM at the DRAM copy rate, the rest of
//! the requested sectors at the L2 rate, and every bank-conflict replay of workgroup memory (one
//! 128-byte wavefront each) at [`SHARED_SPEEDUP`](super::analysis::SHARED_SPEEDUP)× the DRAM
//! rate. DRAM bytes: where the pass's footprint (distinct sectors) fits the L2, its compulsory
//! misses (each sector once); where it does not, every requested sector of the buffers whose own
//! footprint does not fit half the L2, and the footprint of those that do (tables every
//! workgroup reads stay in L2); a buffer of at most [`L1_BYTES`] costs only its footprint (each
//! SM's L1 serves its other requests).

use super::analysis::{PassLens, SECTOR, SEGMENT, SHARED_SPEEDUP};
use serde::{Deserialize, Serialize};

/// Buffers this small are L1-resident after their first touch (NVIDIA's L1 is 128-256 KiB an SM;
/// a table's sectors are a few of them).
pub const L1_BYTES: u64 = 32 << 10;

/// The adapter's memory system as the lens models it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MemoryModel {
    pub adapter: String,
    pub driver: String,
    /// The copy kernel's rate past the cache (GB/s, bytes read + written).
    pub dram_gbps: f64,
    /// Its best rate where the copy's working set fits the cache.
    pub l2_gbps: f64,
    pub l2_bytes: u64,
    /// Where `l2_bytes` comes from: "measured" (the sweep's knee) or "table".
    pub l2_source: String,
    /// The sweep: (words copied, GB/s).
    pub sweep: Vec<(u64, f64)>,
    /// Rates of scattered sectors past the cache (GB/s of whole 32-byte sectors): one word a
    /// thread written (`scatter`) or read (`gather`) at a pseudo-random word of a buffer ten
    /// times the largest caches, the coalesced other side priced at `dram_gbps`.
    pub scatter_gbps: f64,
    pub gather_gbps: f64,
    /// Workgroups of 256 threads that do nothing launched per microsecond: a pass takes at least
    /// its grid at this rate.
    pub launch_per_us: f64,
    /// Warps (of 256-thread workgroups) that copy one word a thread, per microsecond: a pass takes
    /// at least its working warps at this rate.
    pub warps_per_us: f64,
    /// What every pass costs besides its work (ms): the sweep's fitted time at zero bytes.
    pub fixed_ms: f64,
    /// Workgroups of 64 threads that the adapter runs at once, each holding the first number's
    /// bytes of workgroup memory (the residency probe, [`RESIDENCY_WGSL`](super::probe::RESIDENCY_WGSL)), smallest first; empty
    /// where it was not measured. wgpu reports a workgroup's limit, not how much an SM holds.
    #[serde(default)]
    pub residency: Vec<(u32, u32)>,
}

/// Bounds on how many workgroups of one size the adapter runs at once, each (workgroups, the
/// probed size they were counted at): at least the count at the smallest probed size of at least
/// it, at most the count at the largest of at most it (none below the smallest probed size).
/// Equal where the size was probed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtOnce {
    pub at_least: (u32, u32),
    pub at_most: Option<(u32, u32)>,
}

/// Whether a global site's requests are scattered: each touches at least 4× the sectors its bytes
/// need, nearly every one in its own 128-byte segment.
pub fn scattered(g: &super::analysis::GlobalSite) -> bool {
    g.sectors >= 4 * g.min_sectors.max(1) && 4 * g.segments >= 3 * g.sectors
}

/// Whether a global site's requests are sparse: whole sectors (not scattered), at least 4 a
/// request, each in a 128-byte segment of its own (under 1.5 a segment). DRAM then moves a
/// sector where a coalesced request moves two or more: past the cache such sectors, read or
/// written, go at the rate the gather (one sector a segment) measures. The default FFT's
/// column reads and transposed stores at 2^24 are such: priced at the copy rate they were 0.41
/// and 0.56 of the clock on the H200.
pub fn sparse(g: &super::analysis::GlobalSite) -> bool {
    !scattered(g) && g.sectors >= 4 * g.requests.max(1) && 3 * g.segments > 2 * g.sectors
}

/// One pass's prediction and what it is made of.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Prediction {
    /// "fits L2" (compulsory misses) or "past L2" (requested sectors).
    pub case: String,
    pub dram_bytes: u64,
    pub l2_bytes: u64,
    /// Bank-conflict replays of workgroup memory, in bytes (128 a wavefront).
    pub replay_bytes: u64,
    /// Of `dram_bytes`, the scattered sites' sectors (past L2), priced at the scatter and gather
    /// rates, and the sparse sites' ([`sparse`]), at the gather rate.
    pub scattered_bytes: u64,
    pub dram_ms: f64,
    /// The scattered sectors' time (within `dram_ms`).
    pub scattered_ms: f64,
    /// The grid at the launch rate.
    pub launch_ms: f64,
    /// Of `launch_ms`, the idle workgroups' (those that touch no global memory): added to the
    /// rest, not overlapped with it.
    pub idle_ms: f64,
    /// The working warps at the rate of one-word round trips.
    pub latency_ms: f64,
    /// The fixed time every pass costs; the prediction is it, plus `idle_ms`, plus the largest of
    /// the memory's time, the working workgroups' launches and `latency_ms`.
    pub fixed_ms: f64,
    pub l2_ms: f64,
    pub replay_ms: f64,
    pub total_ms: f64,
    /// Where the measured time is more than 1.25× or less than 0.8× the prediction: what the model
    /// leaves out, instead of a number it cannot stand behind.
    pub verdict: Option<String>,
}

impl Prediction {
    /// The memory's time: DRAM, L2 and replays.
    pub fn memory_ms(&self) -> f64 {
        self.dram_ms + self.l2_ms + self.replay_ms
    }

    /// What bounds the prediction: the launches, the round trips or the bytes.
    pub fn limit(&self) -> Limit {
        if self.launch_bound() {
            Limit::Launches
        } else if self.latency_bound() {
            Limit::RoundTrips
        } else {
            Limit::Bytes
        }
    }

    /// Whether launching the working workgroups takes longer than their memory traffic and
    /// round trips (so the grid's launches are the prediction).
    pub fn launch_bound(&self) -> bool {
        let work = self.launch_ms - self.idle_ms;
        work >= self.memory_ms() && work >= self.latency_ms
    }

    /// Whether the working warps' round trips take longer than the memory traffic and the
    /// working workgroups' launches.
    pub fn latency_bound(&self) -> bool {
        self.latency_ms > self.memory_ms() && self.latency_ms > self.launch_ms - self.idle_ms
    }
}

/// What bounds a pass's predicted time ([`Prediction::limit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Launching the working workgroups takes longer than their bytes and round trips.
    Launches,
    /// The working warps' round trips, one load in flight each, take longer than the bytes.
    RoundTrips,
    /// The bytes moved.
    Bytes,
}

impl MemoryModel {
    /// The L2 and the rates past DRAM, in words (the CLI's lens header and the app's lens panel).
    pub fn cache_and_rates(&self) -> String {
        format!(
            "L2 {} MiB ({}) at {:.0} GB/s, scattered sectors written at {:.0} and read at {:.0} \
             GB/s, {:.0} idle workgroups launched and {:.0} warps' round trips a µs",
            self.l2_bytes >> 20,
            self.l2_source,
            self.l2_gbps,
            self.scatter_gbps,
            self.gather_gbps,
            self.launch_per_us,
            self.warps_per_us
        ) + &self
            .workgroup_memory_at_once()
            .map(|b| {
                format!(
                    ", {:.1} MiB of workgroup memory held at once",
                    b as f64 / f64::from(1 << 20)
                )
            })
            .unwrap_or_default()
    }

    /// How many workgroups holding `bytes` of workgroup memory each the adapter runs at once, as
    /// bounds from the probe; None past the largest probed size.
    pub fn at_once(&self, bytes: u32) -> Option<AtOnce> {
        let above = self.residency.iter().find(|(b, _)| *b >= bytes)?;
        let below = self.residency.iter().rev().find(|(b, _)| *b <= bytes);
        Some(AtOnce {
            at_least: (above.1, above.0),
            at_most: below.map(|&(b, n)| (n, b)),
        })
    }

    /// The most workgroup memory the probe found held at once (bytes), over every probed size.
    pub fn workgroup_memory_at_once(&self) -> Option<u64> {
        self.residency
            .iter()
            .map(|&(b, n)| b as u64 * n as u64)
            .max()
    }

    pub fn predict(&self, p: &PassLens) -> Prediction {
        let requested = p.sectors() * SECTOR;
        let ms = |bytes: u64, gbps: f64| bytes as f64 / (gbps.max(1e-9) * 1e6);
        // Past L2: the scattered sites' sectors of the buffers that do not stay in L2.
        let (mut scattered_bytes, mut scattered_ms) = (0, 0.0);
        let (case, dram) = if p.footprint_bytes <= self.l2_bytes {
            ("fits L2", p.footprint_bytes)
        } else {
            let d = p
                .buffers
                .iter()
                .map(|b| {
                    if b.footprint_sectors * SECTOR <= self.l2_bytes / 2 {
                        return b.footprint_sectors * SECTOR;
                    }
                    for g in p
                        .global
                        .iter()
                        .filter(|g| g.buffer == b.buffer && (scattered(g) || sparse(g)))
                    {
                        let rate = match g.kind {
                            super::sites::Kind::Write if scattered(g) => self.scatter_gbps,
                            _ => self.gather_gbps,
                        };
                        scattered_bytes += g.sectors * SECTOR;
                        scattered_ms += ms(g.sectors * SECTOR, rate);
                    }
                    b.sectors * SECTOR
                })
                .sum();
            ("past L2", d)
        };
        // A buffer of at most L1 bytes (a parameter table every thread reads) is served by each
        // SM's L1 past its first touch: its other requests cost neither DRAM nor L2.
        let l1: u64 = p
            .buffers
            .iter()
            .filter(|b| b.footprint_sectors * SECTOR <= L1_BYTES)
            .map(|b| b.sectors.saturating_sub(b.footprint_sectors) * SECTOR)
            .sum();
        let dram = dram.min(requested.max(dram));
        let l2 = requested.saturating_sub(dram).saturating_sub(l1);
        let replay = p.replays() * SEGMENT;
        let dram_ms = ms(dram - scattered_bytes.min(dram), self.dram_gbps) + scattered_ms;
        let l2_ms = ms(l2, self.l2_gbps);
        let replay_ms = ms(replay, SHARED_SPEEDUP * self.dram_gbps);
        let per_ms = self.launch_per_us.max(1e-9) * 1e3;
        let launch_ms = p.workgroups as f64 / per_ms;
        // Idle workgroups hold the SMs' places while they launch, as the working ones do while
        // they wait: their launches add to the working workgroups' time (a ladder phase whose
        // idle and working halves come in blocks of 2^20 workgroups takes their sum).
        let idle_ms = p.idle_workgroups() as f64 / per_ms;
        let latency_ms = p.working_warps as f64 / (self.warps_per_us.max(1e-9) * 1e3);
        let fixed_ms = self.fixed_ms;
        let total_ms = fixed_ms
            + idle_ms
            + (dram_ms + l2_ms + replay_ms)
                .max(launch_ms - idle_ms)
                .max(latency_ms);
        let verdict = p.gpu_ms.and_then(|m| {
            let r = m / total_ms.max(1e-12);
            if r > 1.25 {
                // What the lens knows of the rest: the workgroups and their workgroup memory.
                let held = if p.workgroup_bytes > 0 {
                    let kib = |b: u32| b as f64 / 1024.0;
                    let at_once = match self.at_once(p.workgroup_bytes) {
                        Some(AtOnce {
                            at_least: (n, _),
                            at_most: Some((m, _)),
                        }) if n == m => format!(": this adapter runs {n} such at once (measured)"),
                        Some(AtOnce {
                            at_least: (n, a),
                            at_most: Some((m, b)),
                        }) => format!(
                            ": this adapter runs {n} to {m} such at once (measured at {:.1} and \
                             {:.1} KiB)",
                            kib(a),
                            kib(b)
                        ),
                        Some(AtOnce {
                            at_least: (n, a),
                            at_most: None,
                        }) => format!(
                            ": this adapter runs at least {n} such at once (measured at {:.1} KiB)",
                            kib(a)
                        ),
                        None => " (wgpu does not report how many an SM holds)".into(),
                    };
                    format!(
                        "; its {} workgroups hold {:.1} KiB of workgroup memory each{at_once}",
                        p.workgroups,
                        kib(p.workgroup_bytes)
                    )
                } else {
                    String::new()
                };
                Some(format!(
                    "the pass takes {r:.1}× the memory model's time: it is bound by what the model \
                     leaves out — the work between its accesses (arithmetic, barriers, atomics, \
                     dependent round trips) and how its workgroups overlap{held}; the model \
                     counts bytes moved, launches and one round trip a warp"
                ))
            } else if r < 0.8 && m >= total_ms - replay_ms && replay_ms > 0.0 {
                Some(format!(
                    "the pass takes {r:.2}× the memory model's time: its workgroup-memory replays \
                     ({replay_ms:.4} ms) overlap its DRAM traffic, where the model adds them"
                ))
            } else if r < 0.8 {
                Some(format!(
                    "the pass takes {r:.2}× the memory model's time: the caches served more than the \
                     model assumes (e.g. a previous pass's output still in L2, or writes combined)"
                ))
            } else {
                None
            }
        });
        Prediction {
            case: case.into(),
            dram_bytes: dram,
            l2_bytes: l2,
            replay_bytes: replay,
            scattered_bytes,
            dram_ms,
            scattered_ms,
            launch_ms,
            idle_ms,
            latency_ms,
            fixed_ms,
            l2_ms,
            replay_ms,
            total_ms,
            verdict,
        }
    }

    /// The model from a sweep of (words copied, GB/s). Each copy's time less a pass's fixed cost
    /// (from the two smallest copies; it hides the cache in small copies) gives its rate of work; the
    /// cache's rate is the best of those, and the knee the largest copy whose rate is still past
    /// halfway between it and the largest copy's (its working set, read and written, is the
    /// cache's size). No knee where the two rates are within 15 %: then the table's size, else
    /// none (every pass is then "past L2"). The DRAM rate and the fixed time: a line fitted to
    /// the times of the copies past twice the cache ([`fit`]). The scatter and gather rates are
    /// set to the DRAM rate and launches and round trips to no floor (a model without those
    /// measurements prices scattered sectors like any other).
    pub fn from_sweep(adapter: &str, driver: &str, sweep: Vec<(u64, f64)>) -> Option<MemoryModel> {
        let bytes = |w: u64| 8.0 * w as f64;
        let times: Vec<(u64, f64)> = sweep
            .iter()
            .map(|&(w, gbps)| (w, bytes(w) / (gbps.max(1e-9) * 1e6)))
            .collect();
        // The fixed cost: where the two smallest copies (the second twice the first) run at one
        // rate, the line through them meets zero bytes at 2·t0 − t1.
        let fixed = match times.as_slice() {
            [(w0, t0), (w1, t1), ..] if *w1 == 2 * *w0 => (2.0 * t0 - t1).clamp(0.0, *t0),
            _ => 0.0,
        };
        // Rates of work where the work is at least a quarter of the fixed cost (less is noise).
        let work: Vec<(u64, f64)> = times
            .iter()
            .filter(|t| t.1 >= 1.25 * fixed && t.1 > fixed)
            .map(|&(w, t)| (w, bytes(w) / ((t - fixed) * 1e6)))
            .collect();
        let work = if work.is_empty() { sweep.clone() } else { work };
        let &(_, last) = work.last()?;
        let l2 = work.iter().map(|s| s.1).fold(last, f64::max);
        let (l2_bytes, source) = if l2 > 1.15 * last {
            let half = (l2 + last) / 2.0;
            let knee = work.iter().filter(|s| s.1 >= half).map(|s| s.0).max()?;
            (knee * 8, "measured")
        } else {
            known_l2(adapter).map_or((0, "unknown"), |b| (b, "table"))
        };
        let (dram, fixed_ms) = fit(&sweep, l2_bytes).unwrap_or((sweep.last()?.1, 0.0));
        Some(MemoryModel {
            adapter: adapter.into(),
            driver: driver.into(),
            dram_gbps: dram,
            l2_gbps: l2,
            l2_bytes,
            l2_source: source.into(),
            sweep,
            scatter_gbps: dram,
            gather_gbps: dram,
            launch_per_us: 1e12,
            warps_per_us: 1e12,
            fixed_ms,
            residency: Vec::new(),
        })
    }
}

/// The copy's rate (GB/s) and fixed time (ms) from the sweep's points past twice the cache (at
/// least the last two): least squares of time against bytes moved. None where the line does not
/// rise or starts below zero.
fn fit(sweep: &[(u64, f64)], l2_bytes: u64) -> Option<(f64, f64)> {
    let pts: Vec<(f64, f64)> = sweep
        .iter()
        .map(|&(words, gbps)| (8.0 * words as f64, 8.0 * words as f64 / (gbps * 1e6)))
        .collect();
    let past: Vec<_> = pts
        .iter()
        .filter(|p| p.0 >= 2.0 * l2_bytes as f64)
        .collect();
    let pts: Vec<&(f64, f64)> = if past.len() >= 2 {
        past
    } else {
        pts.iter().skip(pts.len().saturating_sub(2)).collect()
    };
    let k = pts.len() as f64;
    if k < 2.0 {
        return None;
    }
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / k,
        pts.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let fixed = my - slope * mx;
    (slope > 0.0 && fixed >= 0.0).then(|| (1.0 / (slope * 1e6), fixed))
}

/// Last-level cache sizes of GPUs whose sweep may show no knee.
pub fn known_l2(adapter: &str) -> Option<u64> {
    const MB: u64 = 1 << 20;
    let a = adapter.to_lowercase();
    [
        ("h200", 50 * MB),
        ("h100", 50 * MB),
        ("a100", 40 * MB),
        ("l40", 96 * MB),
        ("rtx 4090", 72 * MB),
        ("rtx 4080", 64 * MB),
        ("rtx 3090", 6 * MB),
        ("mi300", 256 * MB),
    ]
    .iter()
    .find(|(k, _)| a.contains(k))
    .map(|&(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per request: (sectors, ideal sectors, segments) → scattered, sparse.
    #[test]
    fn scattered_and_sparse_requests() {
        let site = |sectors: u64, min: u64, segments: u64| super::super::analysis::GlobalSite {
            site: 0,
            line: 0,
            kind: super::super::sites::Kind::Read,
            buffer: "b".into(),
            requests: 10,
            sectors: 10 * sectors,
            min_sectors: 10 * min,
            segments: 10 * segments,
            bytes: 0,
            sample_error: None,
        };
        let cases = [
            // A u32 scatter: a sector a lane, each in its own segment.
            ((32, 4, 32), (true, false)),
            // The FFT's column reads: whole sectors, one a segment.
            ((8, 8, 8), (false, true)),
            // Coalesced: 8 sectors in 2 segments, or 2 a segment.
            ((8, 8, 2), (false, false)),
            ((8, 8, 4), (false, false)),
            // Too few sectors a request to tell.
            ((2, 2, 2), (false, false)),
        ];
        for ((sectors, min, segments), want) in cases {
            let g = site(sectors, min, segments);
            assert_eq!(
                (scattered(&g), sparse(&g)),
                want,
                "{sectors} {min} {segments}"
            );
        }
    }

    #[test]
    fn what_the_residency_probe_says_of_a_size() {
        // The H200's probe (132 SMs, 48 KiB an SM), a part of it: a size between two probed ones
        // lies between their counts.
        let mut m =
            MemoryModel::from_sweep("a", "d", vec![(1 << 14, 1.0), (1 << 15, 2.0)]).unwrap();
        assert_eq!(
            (m.at_once(1024), m.workgroup_memory_at_once()),
            (None, None)
        );
        m.residency = vec![
            (1 << 10, 4224),
            (16 << 10, 396),
            (18 << 10, 264),
            (48 << 10, 132),
        ];
        let at = |least, most| {
            Some(AtOnce {
                at_least: least,
                at_most: most,
            })
        };
        assert_eq!(m.at_once(1024), at((4224, 1024), Some((4224, 1024))));
        assert_eq!(m.at_once(512), at((4224, 1024), None));
        assert_eq!(
            m.at_once(16 << 10),
            at((396, 16 << 10), Some((396, 16 << 10)))
        );
        assert_eq!(m.at_once(16896), at((264, 18 << 10), Some((396, 16 << 10))));
        assert_eq!(m.at_once(49153), None);
        assert_eq!(m.workgroup_memory_at_once(), Some(132 * (48 << 10)));
        assert!(
            m.cache_and_rates()
                .ends_with("6.2 MiB of workgroup memory held at once")
        );
    }

    #[test]
    fn the_knee_of_a_sweep_is_the_cache_size() {
        // 8 TB/s up to 2^21 words (16 MiB moved), then 3 TB/s: a 16 MiB cache.
        let sweep: Vec<(u64, f64)> = (14..=24)
            .map(|k| (1u64 << k, if k <= 21 { 8000.0 } else { 3000.0 }))
            .collect();
        let m = MemoryModel::from_sweep("some gpu", "d", sweep).unwrap();
        assert_eq!((m.l2_bytes, m.l2_source.as_str()), (16 << 20, "measured"));
        assert!((m.dram_gbps - 3000.0).abs() < 1e-6 && m.fixed_ms.abs() < 1e-9);
        assert_eq!(m.l2_gbps, 8000.0);
        // Flat: the table where the name is known, else no cache.
        let flat: Vec<(u64, f64)> = (14..=24).map(|k| (1u64 << k, 3000.0)).collect();
        let m = MemoryModel::from_sweep("NVIDIA H100 80GB HBM3", "d", flat.clone()).unwrap();
        assert_eq!((m.l2_bytes, m.l2_source.as_str()), (50 << 20, "table"));
        let m = MemoryModel::from_sweep("unknown", "d", flat).unwrap();
        assert_eq!((m.l2_bytes, m.l2_source.as_str()), (0, "unknown"));
    }

    #[test]
    fn the_sweep_past_the_cache_gives_the_rate_and_the_fixed_time() {
        // 5 µs a copy plus bytes at 4000 GB/s past a 16 MiB cache, 10000 GB/s within it.
        let ms = |words: u64, gbps: f64| 0.005 + 8.0 * words as f64 / (gbps * 1e6);
        let sweep: Vec<(u64, f64)> = (14..=26)
            .map(|k| {
                let w = 1u64 << k;
                let t = ms(w, if k <= 21 { 10000.0 } else { 4000.0 });
                (w, 8.0 * w as f64 / (t * 1e6))
            })
            .collect();
        let m = MemoryModel::from_sweep("some gpu", "d", sweep).unwrap();
        assert_eq!(
            (m.l2_bytes, m.l2_source.as_str()),
            (16 << 20, "measured"),
            "{m:?}"
        );
        assert!((m.dram_gbps - 4000.0).abs() < 1e-6, "{}", m.dram_gbps);
        assert!((m.fixed_ms - 0.005).abs() < 1e-9, "{}", m.fixed_ms);
        // The rate at 2^26 words, the fixed time included, is below the fit's.
        assert!(m.sweep.last().unwrap().1 < 3900.0);
    }
}
