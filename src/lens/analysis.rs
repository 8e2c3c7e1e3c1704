//! What the recorded accesses mean for the memory system. A *warp request* is one access site's
//! dynamic instance executed by one warp: the accesses of one workgroup's invocations
//! `lid / W == w` (W = the warp size) that are their k-th execution of that site. Then:
//! - global memory: the 32-byte sectors and 128-byte segments a request touches, against the
//!   fewest sectors its distinct bytes could fill;
//! - workgroup memory: 32 banks of 4 bytes; a request's conflict degree ("ways") is the most
//!   distinct words it touches in one bank (lanes reading one word share a broadcast);
//! - a predicted time: the sectors' bytes at the copy bandwidth measured on the same adapter,
//!   plus every workgroup-memory wavefront (one per way) at [`SHARED_SPEEDUP`]× that bandwidth.

use super::record::PassRecord;
use super::sites::{Kind, Space};
use serde::Serialize;
use std::collections::HashSet;

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
    /// Wavefronts workgroup memory serves for these requests (ways summed over phases).
    #[serde(skip)]
    pub wavefronts: u64,
    #[serde(skip)]
    ways_sum: u64,
}

/// The lens's view of one pass.
#[derive(Clone, Debug, Serialize)]
pub struct PassLens {
    pub pass: usize,
    pub label: String,
    pub global: Vec<GlobalSite>,
    pub shared: Vec<SharedSite>,
    /// Each distinct global word read once and each distinct word written once.
    pub floor_bytes: u64,
    pub predicted_ms: Option<f64>,
    pub gpu_ms: Option<f64>,
}

impl PassLens {
    pub fn sectors(&self) -> u64 {
        self.global.iter().map(|g| g.sectors).sum()
    }

    pub fn wavefronts(&self) -> u64 {
        self.shared.iter().map(|s| s.wavefronts).sum()
    }
}

/// The words of one warp request.
pub struct Request<'a> {
    pub site: u32,
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
            lanes: &lanes,
        });
        i = j;
    }
}

fn same(a: &(u32, u32, u32, u32, u32, u32), b: &(u32, u32, u32, u32, u32, u32)) -> bool {
    a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3
}

/// Analyse one recorded pass at warp size `warp`. `copy_gbps`: the copy kernel's bandwidth on this
/// adapter (None: no prediction); `gpu_ms`: the normal build's measured time of the pass.
pub fn analyse(
    pass: usize,
    rec: &PassRecord,
    warp: u32,
    copy_gbps: Option<f64>,
    gpu_ms: Option<f64>,
) -> PassLens {
    let sites = &rec.kernel.sites;
    let mut global: Vec<Option<GlobalSite>> = vec![None; sites.len()];
    let mut shared: Vec<Option<SharedSite>> = vec![None; sites.len()];
    for_each_request(rec, warp, |r| {
        let Some(s) = sites.get(r.site as usize) else {
            return;
        };
        match s.space {
            Space::Global => {
                let (sectors, segments, min) = global_counts(r.lanes, s.width);
                let g = global[r.site as usize].get_or_insert_with(|| GlobalSite {
                    site: r.site,
                    line: s.line,
                    kind: s.kind,
                    buffer: s.buffer.clone(),
                    requests: 0,
                    sectors: 0,
                    min_sectors: 0,
                    segments: 0,
                    bytes: 0,
                });
                g.requests += 1;
                g.sectors += sectors;
                g.segments += segments;
                g.min_sectors += min;
                g.bytes += r.lanes.len() as u64 * s.width as u64 * 4;
            }
            Space::Workgroup => {
                let (ways, wavefronts) = bank_ways(r.lanes, s.width);
                let w = shared[r.site as usize].get_or_insert(SharedSite {
                    site: r.site,
                    line: s.line,
                    kind: s.kind,
                    requests: 0,
                    max_ways: 0,
                    mean_ways: 0.0,
                    wavefronts: 0,
                    ways_sum: 0,
                });
                w.requests += 1;
                w.max_ways = w.max_ways.max(ways);
                w.wavefronts += wavefronts;
                w.ways_sum += ways as u64;
            }
        }
    });
    let shared: Vec<SharedSite> = shared
        .into_iter()
        .flatten()
        .map(|mut s| {
            s.mean_ways = s.ways_sum as f64 / s.requests.max(1) as f64;
            s
        })
        .collect();
    let global: Vec<GlobalSite> = global.into_iter().flatten().collect();
    // The floor: every distinct word of every global buffer, read once and written once.
    let mut read: HashSet<(&str, u32)> = HashSet::new();
    let mut written: HashSet<(&str, u32)> = HashSet::new();
    for a in &rec.accesses {
        let Some(s) = sites.get(a.site as usize) else {
            continue;
        };
        if s.space != Space::Global {
            continue;
        }
        let set = if s.kind == Kind::Read {
            &mut read
        } else {
            &mut written
        };
        for k in 0..s.width {
            set.insert((s.buffer.as_str(), a.addr.wrapping_add(k)));
        }
    }
    let floor_bytes = 4 * (read.len() + written.len()) as u64;
    let mut lens = PassLens {
        pass,
        label: rec.label.clone(),
        global,
        shared,
        floor_bytes,
        predicted_ms: None,
        gpu_ms,
    };
    lens.predicted_ms = copy_gbps.map(|bw| predict_ms(lens.sectors(), lens.wavefronts(), bw));
    lens
}

/// Milliseconds for `sectors` global sectors at `copy_gbps` plus `wavefronts` workgroup-memory
/// wavefronts (128 bytes each) at [`SHARED_SPEEDUP`]× that bandwidth.
pub fn predict_ms(sectors: u64, wavefronts: u64, copy_gbps: f64) -> f64 {
    let global = (sectors * SECTOR) as f64 / (copy_gbps * 1e6);
    let shared = (wavefronts * SEGMENT) as f64 / (SHARED_SPEEDUP * copy_gbps * 1e6);
    global + shared
}

#[cfg(test)]
mod tests {
    use super::super::record::Access;
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
        let l = analyse(0, &p, 32, Some(100.0), Some(1.0));
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
        assert_eq!(l.floor_bytes, 4 * (128 + 64));
        // 16 + 64 sectors of 32 B and 2 × 2 wavefronts of 128 B: 2560 B at 100 GB/s, 512 B at 1 TB/s.
        let want = 2560.0 / 100e6 + 512.0 / 1000e6;
        assert!((l.predicted_ms.unwrap() - want).abs() < 1e-12);
        assert!(analyse(0, &p, 32, None, None).predicted_ms.is_none());
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
