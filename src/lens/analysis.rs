//! What the recorded accesses mean for the memory system. A *warp request* is one access site's
//! dynamic instance executed by one warp: the accesses of one workgroup's invocations
//! `lid / W == w` (W = the warp size) that are their k-th execution of that site. Then:
//! - global memory: the 32-byte sectors and 128-byte segments a request touches, against the
//!   fewest sectors its distinct bytes could fill;
//! - workgroup memory: 32 banks of 4 bytes; a request's conflict degree ("ways") is the most
//!   distinct words it touches in one bank (lanes reading one word share a broadcast);
//! - a predicted time: the sectors' bytes at the copy bandwidth measured on the same adapter,
//!   plus every workgroup-memory wavefront (one per way) at [`SHARED_SPEEDUP`]× that bandwidth.

use super::estimate::{Spread, footprints, reached_by_one};
use super::record::PassRecord;
use super::sites::{Kind, Space};
use serde::Serialize;

pub const SECTOR: u64 = 32;
pub const SEGMENT: u64 = 128;
pub const BANKS: u32 = 32;
/// Workgroup memory's bandwidth as a multiple of the copy bandwidth, for the prediction: on an
/// H100, 132 SMs × 128 B/clock × 1.755 GHz ≈ 29.6 TB/s against a ~3 TB/s copy, about 10×.
pub const SHARED_SPEEDUP: f64 = 10.0;

/// One global-memory access site of a pass.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GlobalSite {
    pub site: u32,
    pub line: u32,
    pub kind: Kind,
    pub buffer: String,
    pub requests: u64,
    pub sectors: u64,
    pub min_sectors: u64,
    pub segments: u64,
    pub bytes: u64,
    /// Where the pass was sampled: the relative standard error of these counts (the largest of
    /// them) from the spread between the sampled workgroups; 0 where every workgroup made the
    /// same accesses, absent where every workgroup was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_error: Option<f64>,
}

/// One workgroup-memory access site of a pass.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SharedSite {
    pub site: u32,
    pub line: u32,
    pub kind: Kind,
    pub requests: u64,
    pub max_ways: u32,
    pub mean_ways: f64,
    /// As [`GlobalSite::sample_error`], of the requests and wavefronts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_error: Option<f64>,
    /// Wavefronts workgroup memory serves for these requests (ways summed over phases).
    #[serde(skip)]
    pub wavefronts: u64,
    /// Of those, the ones past the first of each phase (conflicts' replays).
    #[serde(skip)]
    pub replays: u64,
    #[serde(skip)]
    ways_sum: f64,
}

/// One buffer's share of a pass's global traffic.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BufferTraffic {
    pub buffer: String,
    pub requests: u64,
    pub sectors: u64,
    /// Distinct sectors touched (the buffer's footprint in this pass).
    pub footprint_sectors: u64,
}

/// The lens's view of one pass. Where the pass was sampled ([`PassRecord::sample`]), every count
/// is the sample's weighed up to the whole grid.
#[derive(Clone, Debug, Serialize)]
pub struct PassLens {
    pub pass: usize,
    pub label: String,
    /// Workgroups in the pass's grid.
    pub workgroups: u64,
    /// Warps of the workgroups that touch global memory (all their warps, the sleeping ones too:
    /// a workgroup holds its place on the SM until its last warp is done), weighed up to the grid.
    pub working_warps: u64,
    /// Those workgroups, weighed up to the grid (the others are idle).
    pub working_workgroups: u64,
    /// Bytes of workgroup memory a workgroup uses.
    pub workgroup_bytes: u32,
    pub global: Vec<GlobalSite>,
    pub shared: Vec<SharedSite>,
    /// Each distinct global word read once and each distinct word written once.
    pub floor_bytes: u64,
    /// Distinct 32-byte sectors the pass touches, times 32.
    pub footprint_bytes: u64,
    pub buffers: Vec<BufferTraffic>,
    /// The memory model's time (see [`super::memory`]).
    pub predicted_ms: Option<f64>,
    pub prediction: Option<super::memory::Prediction>,
    pub gpu_ms: Option<f64>,
}

impl PassLens {
    /// Workgroups that touch no global memory, weighed up to the grid.
    pub fn idle_workgroups(&self) -> u64 {
        self.workgroups.saturating_sub(self.working_workgroups)
    }

    pub fn sectors(&self) -> u64 {
        self.global.iter().map(|g| g.sectors).sum()
    }

    pub fn wavefronts(&self) -> u64 {
        self.shared.iter().map(|s| s.wavefronts).sum()
    }

    /// Wavefronts beyond one per phase: the replays bank conflicts cost.
    pub fn replays(&self) -> u64 {
        self.shared.iter().map(|s| s.replays).sum()
    }
}

/// The words of one warp request.
pub struct Request<'a> {
    pub site: u32,
    /// The workgroup that made it.
    pub wg: u32,
    /// (local index, first word) of every lane's access.
    pub lanes: &'a [(u32, u32)],
}

/// Distinct sectors, segments and minimum sectors of one global request (`width` words per access).
pub fn global_counts(words: &[(u32, u32)], width: u32) -> (u64, u64, u64) {
    let mut w: Vec<u64> = words
        .iter()
        .flat_map(|&(_, a)| (0..width as u64).map(move |k| a as u64 + k))
        .collect();
    w.sort_unstable();
    w.dedup();
    let mut sectors: Vec<u64> = w.iter().map(|a| a * 4 / SECTOR).collect();
    sectors.dedup();
    let mut segments: Vec<u64> = w.iter().map(|a| a * 4 / SEGMENT).collect();
    segments.dedup();
    let min = (w.len() as u64 * 4).div_ceil(SECTOR);
    (sectors.len() as u64, segments.len() as u64, min)
}

/// One workgroup-memory request's (conflict degree, wavefronts). Banks serve 32 words per
/// wavefront; wide accesses (`width` words per lane) go in phases of 32 / width lanes. A phase's
/// degree is the most distinct words it touches in one bank (lanes reading one word share a
/// broadcast); the request's degree is its worst phase's, its wavefronts the phases' sum.
pub fn bank_ways(lanes: &[(u32, u32)], width: u32) -> (u32, u64) {
    let per_phase = (BANKS / width.max(1)).max(1) as usize;
    let (mut ways, mut wavefronts) = (1u32, 0u64);
    for phase in lanes.chunks(per_phase) {
        let mut w: Vec<u32> = phase
            .iter()
            .flat_map(|&(_, a)| (0..width).map(move |k| a.wrapping_add(k)))
            .collect();
        w.sort_unstable();
        w.dedup();
        let mut per_bank = [0u32; BANKS as usize];
        for a in w {
            per_bank[(a % BANKS) as usize] += 1;
        }
        let d = per_bank.into_iter().max().unwrap_or(0).max(1);
        ways = ways.max(d);
        wavefronts += d as u64;
    }
    (ways, wavefronts)
}

/// Group a pass's accesses into warp requests: `f(site, lanes)` for every request, in
/// (site, workgroup, warp, instance) order.
pub fn for_each_request(rec: &PassRecord, warp: u32, mut f: impl FnMut(Request<'_>)) {
    let warp = warp.max(1);
    let mut keyed: Vec<(u32, u32, u32, u32, u32, u32)> = rec
        .accesses
        .iter()
        .map(|a| (a.site, a.wg, a.lid / warp, a.instance, a.lid, a.addr))
        .collect();
    keyed.sort_unstable();
    let mut lanes: Vec<(u32, u32)> = Vec::with_capacity(warp as usize);
    let mut i = 0;
    while i < keyed.len() {
        let k = &keyed[i];
        lanes.clear();
        let mut j = i;
        while j < keyed.len() && same(&keyed[j], k) {
            lanes.push((keyed[j].4, keyed[j].5));
            j += 1;
        }
        f(Request {
            site: k.0,
            wg: k.1,
            lanes: &lanes,
        });
        i = j;
    }
}

fn same(a: &(u32, u32, u32, u32, u32, u32), b: &(u32, u32, u32, u32, u32, u32)) -> bool {
    a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3
}

/// Weighted sums of one global site.
#[derive(Default)]
struct GlobalAcc {
    requests: f64,
    sectors: f64,
    min: f64,
    segments: f64,
    bytes: f64,
}

/// Weighted sums of one workgroup-memory site.
#[derive(Default)]
struct SharedAcc {
    requests: f64,
    max_ways: u32,
    wavefronts: f64,
    replays: f64,
    ways: f64,
}

/// [`analyse`] every pass (`gpu_ms`: each one's measured time), several at once where the
/// platform has threads: the batcher sort's 38 passes at 2^28 hold ~80 million accesses.
pub fn analyse_all(
    records: &[PassRecord],
    warp: u32,
    memory: Option<&super::memory::MemoryModel>,
    gpu_ms: &[Option<f64>],
) -> Vec<PassLens> {
    crate::par::map(records.len(), |i| {
        analyse(
            i,
            &records[i],
            warp,
            memory,
            gpu_ms.get(i).copied().flatten(),
        )
    })
}

/// Analyse one recorded pass at warp size `warp`. `memory`: the adapter's memory system (None: no
/// prediction); `gpu_ms`: the normal build's measured time of the pass.
pub fn analyse(
    pass: usize,
    rec: &PassRecord,
    warp: u32,
    memory: Option<&super::memory::MemoryModel>,
    gpu_ms: Option<f64>,
) -> PassLens {
    let sites = &rec.kernel.sites;
    let sample = &rec.sample;
    let mut global: Vec<Option<GlobalAcc>> = (0..sites.len()).map(|_| None).collect();
    let mut shared: Vec<Option<SharedAcc>> = (0..sites.len()).map(|_| None).collect();
    let mut spread = Spread::default();
    // Workgroups that touch global memory.
    let mut working = std::collections::HashSet::new();
    let alone = reached_by_one(rec);
    for_each_request(rec, warp, |r| {
        let Some(s) = sites.get(r.site as usize) else {
            return;
        };
        let w = if alone.get(r.site as usize) == Some(&true) {
            1.0
        } else {
            sample.weight_of(r.wg)
        };
        match s.space {
            Space::Global => {
                working.insert(r.wg);
                let (sectors, segments, min) = global_counts(r.lanes, s.width);
                let bytes = r.lanes.len() as u64 * s.width as u64 * 4;
                spread.add(r.site, r.wg, w, [1, sectors, segments, min, bytes]);
                let g = global[r.site as usize].get_or_insert_with(GlobalAcc::default);
                g.requests += w;
                g.sectors += w * sectors as f64;
                g.segments += w * segments as f64;
                g.min += w * min as f64;
                g.bytes += w * bytes as f64;
            }
            Space::Workgroup => {
                let (ways, wavefronts) = bank_ways(r.lanes, s.width);
                let phases = r
                    .lanes
                    .len()
                    .div_ceil((BANKS / s.width.max(1)).max(1) as usize);
                spread.add(r.site, r.wg, w, [1, wavefronts, 0, 0, 0]);
                let a = shared[r.site as usize].get_or_insert_with(SharedAcc::default);
                a.requests += w;
                a.max_ways = a.max_ways.max(ways);
                a.wavefronts += w * wavefronts as f64;
                a.replays += w * wavefronts.saturating_sub(phases as u64) as f64;
                a.ways += w * ways as f64;
            }
        }
    });
    let n = |x: f64| x.round() as u64;
    let global: Vec<GlobalSite> = global
        .into_iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let a = a?;
            let s = &sites[i];
            Some(GlobalSite {
                site: i as u32,
                line: s.line,
                kind: s.kind,
                buffer: s.buffer.clone(),
                requests: n(a.requests),
                sectors: n(a.sectors),
                min_sectors: n(a.min),
                segments: n(a.segments),
                bytes: n(a.bytes),
                sample_error: (!sample.is_all()).then(|| {
                    spread.error(
                        i as u32,
                        [a.requests, a.sectors, a.segments, a.min, a.bytes],
                    )
                }),
            })
        })
        .collect();
    let shared: Vec<SharedSite> = shared
        .into_iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let a = a?;
            let s = &sites[i];
            Some(SharedSite {
                site: i as u32,
                line: s.line,
                kind: s.kind,
                requests: n(a.requests),
                max_ways: a.max_ways,
                mean_ways: a.ways / a.requests.max(1e-9),
                sample_error: (!sample.is_all())
                    .then(|| spread.error(i as u32, [a.requests, a.wavefronts, 0.0, 0.0, 0.0])),
                wavefronts: n(a.wavefronts),
                replays: n(a.replays),
                ways_sum: a.ways,
            })
        })
        .collect();
    let (floor_bytes, footprint, buffers) = footprints(rec, &global);
    let warps = rec.invocations.div_ceil(warp.max(1)) as f64;
    let working_wgs: f64 = working.iter().map(|&w| sample.weight_of(w)).sum();
    let working_warps = n(working_wgs * warps);
    let mut lens = PassLens {
        pass,
        label: rec.label.clone(),
        workgroups: rec.workgroups.iter().map(|&w| w as u64).product(),
        working_warps,
        working_workgroups: n(working_wgs),
        workgroup_bytes: rec.workgroup_bytes,
        global,
        shared,
        floor_bytes,
        footprint_bytes: footprint,
        buffers,
        predicted_ms: None,
        prediction: None,
        gpu_ms,
    };
    lens.prediction = memory.map(|m| m.predict(&lens));
    lens.predicted_ms = lens.prediction.as_ref().map(|p| p.total_ms);
    lens
}

#[cfg(test)]
mod tests {
    use super::super::memory::MemoryModel;
    use super::super::record::Access;
    use super::super::sample::PassSample;
    use super::super::sites::{LensKernel, Site};
    use super::*;
    use std::sync::Arc;

    fn site(kind: Kind, space: Space, width: u32) -> Site {
        Site {
            kind,
            space,
            buffer: "b".into(),
            width,
            line: 7,
            col: 1,
            expr: "b[i]".into(),
            text: String::new(),
        }
    }

    fn pass(sites: Vec<Site>, acc: Vec<(u32, u32, u32, u32)>) -> PassRecord {
        PassRecord {
            label: "p".into(),
            kernel: Arc::new(LensKernel {
                sites,
                ..Default::default()
            }),
            workgroups: [1, 1, 1],
            invocations: 64,
            workgroup_bytes: 0,
            sample: Arc::new(PassSample::all(2)),
            accesses: acc
                .into_iter()
                .map(|(wg, lid, site, addr)| Access {
                    wg,
                    lid,
                    site,
                    instance: 0,
                    addr,
                })
                .collect(),
        }
    }

    #[test]
    fn sectors_of_contiguous_strided_and_broadcast_requests() {
        let lanes = |f: &dyn Fn(u32) -> u32| (0..32).map(|l| (l, f(l))).collect::<Vec<_>>();
        // 32 consecutive words: 128 bytes, 4 sectors, 1 segment; minimum 4.
        assert_eq!(global_counts(&lanes(&|l| l), 1), (4, 1, 4));
        // Misaligned by one word: 5 sectors over 2 segments.
        assert_eq!(global_counts(&lanes(&|l| l + 1), 1), (5, 2, 4));
        // Stride 32 words: every lane its own segment.
        assert_eq!(global_counts(&lanes(&|l| 32 * l), 1), (32, 32, 4));
        // Stride 2: 256 bytes spanned, 8 sectors for 128 bytes' worth (minimum 4).
        assert_eq!(global_counts(&lanes(&|l| 2 * l), 1), (8, 2, 4));
        // All lanes one word: one sector.
        assert_eq!(global_counts(&lanes(&|_| 5), 1), (1, 1, 1));
        // vec4 lanes: 512 bytes, 16 sectors, 4 segments.
        assert_eq!(global_counts(&lanes(&|l| 4 * l), 4), (16, 4, 16));
    }

    #[test]
    fn bank_conflict_degrees() {
        let lanes = |f: &dyn Fn(u32) -> u32| (0..32).map(|l| (l, f(l))).collect::<Vec<_>>();
        assert_eq!(bank_ways(&lanes(&|l| l), 1), (1, 1));
        assert_eq!(bank_ways(&lanes(&|l| 2 * l), 1), (2, 2));
        assert_eq!(bank_ways(&lanes(&|l| 32 * l), 1), (32, 32));
        assert_eq!(bank_ways(&lanes(&|l| 33 * l), 1), (1, 1)); // padded row
        assert_eq!(bank_ways(&lanes(&|_| 9), 1), (1, 1)); // broadcast
        assert_eq!(bank_ways(&lanes(&|l| (l / 2) * 64), 1), (16, 16)); // pairs share words
        // vec4 lanes, consecutive: 4 phases of 8 lanes, each conflict-free.
        assert_eq!(bank_ways(&lanes(&|l| 4 * l), 4), (1, 4));
        // vec4 lanes 8 vec4 apart: a phase's 8 lanes all start in bank 0.
        assert_eq!(bank_ways(&lanes(&|l| 32 * l), 4), (8, 32));
    }

    #[test]
    fn requests_split_by_warp_site_and_workgroup() {
        let acc: Vec<_> = (0..2u32)
            .flat_map(|wg| (0..64u32).map(move |l| (wg, l, 0, wg * 64 + l)))
            .chain((0..64u32).map(|l| (0, l, 1, 32 * l)))
            .chain((0..64u32).map(|l| (0, l, 2, 2 * l)))
            .collect();
        let p = pass(
            vec![
                site(Kind::Read, Space::Global, 1),
                site(Kind::Write, Space::Global, 1),
                site(Kind::Write, Space::Workgroup, 1),
            ],
            acc,
        );
        let mem = |l2_bytes| MemoryModel {
            adapter: "a".into(),
            driver: "d".into(),
            dram_gbps: 100.0,
            l2_gbps: 200.0,
            l2_bytes,
            l2_source: "table".into(),
            sweep: Vec::new(),
            scatter_gbps: 50.0,
            gather_gbps: 25.0,
            launch_per_us: 1e12,
            warps_per_us: 1e12,
            fixed_ms: 0.0,
            residency: Vec::new(),
        };
        let l = analyse(0, &p, 32, Some(&mem(1 << 20)), Some(1.0));
        assert_eq!(l.global.len(), 2);
        let (r, w) = (&l.global[0], &l.global[1]);
        assert_eq!(
            (r.requests, r.sectors, r.min_sectors, r.segments),
            (4, 16, 16, 4)
        );
        assert_eq!(
            (w.requests, w.sectors, w.min_sectors, w.segments),
            (2, 64, 8, 64)
        );
        assert_eq!(r.bytes, 512);
        assert_eq!(l.shared.len(), 1);
        assert_eq!((l.shared[0].requests, l.shared[0].max_ways), (2, 2));
        // Two 2-way requests: one replay each.
        assert_eq!((l.wavefronts(), l.replays()), (4, 2));
        assert_eq!(l.floor_bytes, 4 * (128 + 64));
        // Sectors: reads 0..16, writes every 4th of 0..256, 4 of them shared: 76.
        assert_eq!(l.footprint_bytes, 76 * 32);
        // The footprint fits the L2: it comes from DRAM; the other 4 sectors are L1 hits (the
        // buffer is under L1_BYTES); the 2 replays' 256 B at 10× the DRAM rate.
        let x = l.prediction.as_ref().unwrap();
        assert_eq!(
            (x.case.as_str(), x.dram_bytes, x.l2_bytes, x.replay_bytes),
            ("fits L2", 2432, 0, 256)
        );
        let want = 2432.0 / 100e6 + 256.0 / 1000e6;
        assert!((l.predicted_ms.unwrap() - want).abs() < 1e-12);
        // Measured far above the model: the verdict says so.
        assert!(x.verdict.as_ref().unwrap().contains("leaves out"));
        // No L2: every requested sector from DRAM; the writes (a sector each, 64 segments) are
        // scattered, their 2048 bytes at the scatter rate (50), the reads' 512 at the DRAM rate.
        let l = analyse(0, &p, 32, Some(&mem(0)), None);
        let x = l.prediction.as_ref().unwrap();
        assert_eq!(
            (x.case.as_str(), x.dram_bytes, x.l2_bytes, x.scattered_bytes),
            ("past L2", 2560, 0, 2048)
        );
        let want = 512.0 / 100e6 + 2048.0 / 50e6 + 256.0 / 1000e6;
        assert!(
            (x.total_ms - want).abs() < 1e-12 && (x.scattered_ms - 2048.0 / 50e6).abs() < 1e-12
        );
        assert!(x.verdict.is_none());
        // A grid that launches slower than its bytes move: the launch is the prediction.
        let slow = MemoryModel {
            launch_per_us: 1e-3,
            ..mem(0)
        };
        let l = analyse(0, &p, 32, Some(&slow), None);
        assert_eq!(l.workgroups, 1);
        let x = l.prediction.as_ref().unwrap();
        assert!((x.launch_ms - 1.0).abs() < 1e-12 && x.total_ms == x.launch_ms);
        assert!(x.launch_bound() && !x.latency_bound());
        // Round trips: the two working workgroups' 4 warps (64 invocations each) at 1 a µs take
        // 4 µs; the fixed time is added to the largest term.
        let far = MemoryModel {
            warps_per_us: 1.0,
            fixed_ms: 0.5,
            ..mem(0)
        };
        let l = analyse(0, &p, 32, Some(&far), None);
        let x = l.prediction.as_ref().unwrap();
        assert_eq!(l.working_warps, 4);
        assert!((x.latency_ms - 0.004).abs() < 1e-12 && x.latency_bound());
        assert!((x.total_ms - 0.504).abs() < 1e-12);
        // Idle workgroups' launches add to the working ones' time: 2 working of a grid of 6
        // at 1 a µs, the working warps' 4 µs the largest of the rest.
        let idle = MemoryModel {
            launch_per_us: 1.0,
            ..far.clone()
        };
        let six = PassLens {
            workgroups: 6,
            ..l.clone()
        };
        assert_eq!(six.working_workgroups, 2);
        let x = idle.predict(&six);
        assert!((x.launch_ms - 0.006).abs() < 1e-12 && (x.idle_ms - 0.004).abs() < 1e-12);
        assert!(x.latency_bound() && !x.launch_bound());
        assert!((x.total_ms - (0.5 + 0.004 + 0.004)).abs() < 1e-12);
        assert!(analyse(0, &p, 32, None, None).predicted_ms.is_none());
    }

    /// 10 workgroups; 0 and 9 fixed, 3 and 6 stand for the other 8 (weight 4).
    fn ten_workgroups() -> PassSample {
        PassSample {
            workgroups: 10,
            sampled: 4,
            fixed: vec![0, 9],
            stride: 4,
            shift: 1,
            weight: 4.0,
            tail_from: 10,
            tail_weight: 4.0,
            bits: vec![0b10_0100_1001],
        }
    }

    #[test]
    fn a_sample_is_weighed_up_to_the_grid_and_shared_words_count_once() {
        // 10 workgroups; 0 and 9 fixed, 3 and 6 stand for the other 8 (weight 4). Each reads its
        // own 32 words and the same 32-word table.
        let sample = ten_workgroups();
        let acc: Vec<_> = [0u32, 3, 6, 9]
            .iter()
            .flat_map(|&wg| {
                (0..32u32).flat_map(move |l| [(wg, l, 0, wg * 32 + l), (wg, l, 1, 1000 + l)])
            })
            .collect();
        let table = Site {
            buffer: "tab".into(),
            ..site(Kind::Read, Space::Global, 1)
        };
        let mut p = pass(vec![site(Kind::Read, Space::Global, 1), table], acc);
        p.sample = Arc::new(sample);
        let l = analyse(0, &p, 32, None, None);
        assert_eq!((l.global[0].requests, l.global[0].sectors), (10, 40));
        assert_eq!((l.global[1].requests, l.global[1].sectors), (10, 40));
        // Private words weighed (10 × 32), the table once (32).
        assert_eq!(l.floor_bytes, 4 * (320 + 32));
        // Sectors: 4 per workgroup, the table's 4 (words 1000..1032: sectors 125..=128) once.
        assert_eq!(l.footprint_bytes, 44 * 32);
        // Every sampled workgroup did the same: no sampling error.
        assert_eq!(l.global[0].sample_error, Some(0.0));
    }

    #[test]
    fn a_sample_whose_workgroups_differ_states_its_error() {
        // 10 workgroups, 0 and 9 fixed; 3 reads 32 contiguous words (4 sectors), 6 reads 32
        // words 8 apart (32 sectors), each standing for 4.
        let sample = ten_workgroups();
        let acc: Vec<_> = [(0u32, 1u32), (3, 1), (6, 8), (9, 1)]
            .iter()
            .flat_map(|&(wg, k)| (0..32u32).map(move |l| (wg, l, 0, 4096 * wg + k * l)))
            .collect();
        let mut p = pass(vec![site(Kind::Read, Space::Global, 1)], acc);
        p.sample = Arc::new(sample);
        let g = &analyse(0, &p, 32, None, None).global[0];
        // Sectors: 4 + 4 + 4 × 4 + 4 × 32 = 152. s² of (4, 32) = 392; Σ w(w − 1) = 24; the
        // standard error sqrt(392 × 24) ≈ 97 of 152; requests and bytes agree (error 0).
        assert_eq!(g.sectors, 152);
        let want = (392.0f64 * 24.0).sqrt() / 152.0;
        assert!((g.sample_error.unwrap() - want).abs() < 1e-9, "{g:?}");
        // Every workgroup recorded: no error to state.
        p.sample = Arc::new(PassSample::all(10));
        assert_eq!(analyse(0, &p, 32, None, None).global[0].sample_error, None);
    }

    #[test]
    fn warp_size_changes_request_counts() {
        let p = pass(
            vec![site(Kind::Read, Space::Global, 1)],
            (0..32u32).map(|l| (0, l, 0, l)).collect(),
        );
        let g = &analyse(0, &p, 8, None, None).global[0];
        assert_eq!((g.requests, g.sectors, g.min_sectors), (4, 4, 4));
        let g = &analyse(0, &p, 32, None, None).global[0];
        assert_eq!((g.requests, g.sectors, g.min_sectors), (1, 4, 4));
    }
}
