//! The memory lens's own correctness: recorded addresses equal each kernel's known access pattern,
//! and the analysis's counts equal values derived by hand (warp 32, lavapipe).
mod common;

use common::{bin, gpu, random_data, record, record_on, run_ok};
use stagewise::algo::bmmc::{self, plan};
use stagewise::algo::{self, AlgoOptions, RunRequest};
use stagewise::data::{DType, Data};
use stagewise::gpu::Gpu;
use stagewise::lens::analysis::PassLens;
use stagewise::lens::record::PassRecord;
use stagewise::lens::sites::{Kind, Space};
use stagewise::lens::{self, LensReport};
use std::collections::HashMap;

/// Every global site of `p` that ran: requests made, at least the minimum sectors, and no more
/// segments than sectors (`at` names the case in a failure).
fn counts_are_consistent(p: &PassLens, at: &str) {
    for g in &p.global {
        assert!(g.requests > 0, "{at} line {}", g.line);
        assert!(g.sectors >= g.min_sectors, "{at} line {}", g.line);
        assert!(g.segments <= g.sectors, "{at} line {}", g.line);
    }
}

/// The element buffers (a kernel's tables, flags and statuses are recorded too, in other buffers).
pub fn is_data(buffer: &str) -> bool {
    matches!(buffer, "src" | "dst" | "data")
}

/// (sectors, min sectors, segments) per request of the global sites of `kind` in `p` on the
/// element buffers, together (the tiled kernel reads its first tile at one site and the tiles it
/// walks after that at another).
fn per_request(p: &PassLens, kind: Kind) -> (f64, f64, f64, u64) {
    let g: Vec<_> = p
        .global
        .iter()
        .filter(|g| g.kind == kind && is_data(&g.buffer))
        .collect();
    assert!(!g.is_empty(), "{}: a {kind:?} site", p.label);
    let sum = |f: &dyn Fn(&&stagewise::lens::analysis::GlobalSite) -> u64| {
        g.iter().map(f).sum::<u64>() as f64
    };
    let r = sum(&|g| g.requests);
    (
        sum(&|g| g.sectors) / r,
        sum(&|g| g.min_sectors) / r,
        sum(&|g| g.segments) / r,
        r as u64,
    )
}

/// Global (read, write) address of every (workgroup, lane, instance) in a pass without
/// workgroup memory.
fn direct_pairs(r: &PassRecord) -> Vec<(u32, u32, u32, u32)> {
    let mut reads = HashMap::new();
    let mut out = Vec::new();
    for a in &r.accesses {
        let s = &r.kernel.sites[a.site as usize];
        assert_eq!(s.space, Space::Global);
        let key = (a.wg, a.lid, a.instance);
        match s.kind {
            Kind::Read => {
                reads.insert(key, a.addr);
            }
            Kind::Write => out.push((a.wg, a.lid, reads[&key], a.addr)),
        }
    }
    out
}

#[test]
fn copy_records_i_and_counts_four_sectors_per_u32_request() {
    let n = 1 << 16;
    let rep = record(&AlgoOptions::Copy(Default::default()), "scalar", n);
    assert_eq!(rep.records.len(), 1);
    let pairs = direct_pairs(&rep.records[0]);
    assert_eq!(pairs.len(), n);
    for (wg, lid, r, w) in pairs {
        assert_eq!((r, w), (wg * 256 + lid, wg * 256 + lid));
    }
    let p = &rep.passes[0];
    assert_eq!(per_request(p, Kind::Read), (4.0, 4.0, 1.0, (n / 32) as u64));
    assert_eq!(
        per_request(p, Kind::Write),
        (4.0, 4.0, 1.0, (n / 32) as u64)
    );
    assert_eq!(p.floor_bytes, 8 * n as u64);
    assert!(p.shared.is_empty());

    // vec4: 32 lanes × 16 bytes = 512 bytes = 16 sectors over 4 segments, n/128 requests each way.
    // n − 2 words are copied as n/4 whole vec4s (the buffers are padded to a whole vec4).
    let rep = record(&AlgoOptions::Copy(Default::default()), "vec4", n - 2);
    let p = &rep.passes[0];
    assert_eq!(
        per_request(p, Kind::Read),
        (16.0, 16.0, 4.0, (n / 128) as u64)
    );
    assert_eq!(
        per_request(p, Kind::Write),
        (16.0, 16.0, 4.0, (n / 128) as u64)
    );
    assert_eq!(p.global[0].bytes, 4 * n as u64);
    assert_eq!(p.floor_bytes, 8 * n as u64);
}

#[test]
fn naive_bitrev_writes_rev_i_and_scatters_every_lane() {
    let log_n = 16;
    let n = 1usize << log_n;
    let rep = record(&AlgoOptions::Bitrev(Default::default()), "naive", n);
    let rev = |i: u32| i.reverse_bits() >> (32 - log_n);
    let pairs = direct_pairs(&rep.records[0]);
    assert_eq!(pairs.len(), n);
    for (wg, lid, r, w) in pairs {
        assert_eq!(r, wg * 256 + lid);
        assert_eq!(w, rev(r));
    }
    let p = &rep.passes[0];
    // Reads: 32 consecutive words. Writes: lanes differ in the low 5 bits of i, i.e. in the top 5
    // bits of rev(i): 32 words 2^11 apart, each its own sector and segment.
    assert_eq!(per_request(p, Kind::Read), (4.0, 4.0, 1.0, (n / 32) as u64));
    assert_eq!(
        per_request(p, Kind::Write),
        (32.0, 4.0, 32.0, (n / 32) as u64)
    );
}

#[test]
fn tiled_bitrev_reads_and_writes_whole_segments() {
    let n = 1usize << 16;
    let rep = record(&AlgoOptions::Bitrev(Default::default()), "tiled", n);
    assert_eq!(rep.passes.len(), 1);
    let p = &rep.passes[0];
    let (rs, rmin, rseg, _) = per_request(p, Kind::Read);
    let (ws, wmin, wseg, _) = per_request(p, Kind::Write);
    // The vector kernel: a warp moves 32 vectors of 16 bytes, four whole 128-byte segments.
    assert_eq!((rs, rmin, rseg), (16.0, 16.0, 4.0));
    assert_eq!((ws, wmin, wseg), (16.0, 16.0, 4.0));
    // A word of each vector at a time: four stores and four loads, each on 32 distinct banks.
    assert_eq!(p.shared.len(), 8);
    assert!(p.shared.iter().all(|s| s.max_ways == 1), "{:?}", p.shared);
    // 2^16 words in tiles of 2^12 (16 tiles: one a workgroup by default).
    let params = plan::Params::default();
    let spec = plan::tiled(
        &bmmc::matrix::Affine {
            a: bmmc::preset("bit-reverse", 16).unwrap(),
            c: 0,
        },
        &params,
    );
    let r = rounds(&spec.passes[0], 16, &params);
    check_bmmc_pass(&rep.records[0], r, &|x| x.reverse_bits() >> 16);
}

/// Follow every element through the pass: a global read at x, (in tiled and block kernels) a
/// workgroup-memory write and the read of that word, then a global write at y; y must be `map(x)`.
/// A workgroup walks `rounds` tiles one after another, reusing its workgroup memory: an
/// invocation's accesses of each kind, in program order (sites in source order, each by instance),
/// split evenly into the rounds. A vector access (the vector kernel's 4 words) counts as its words,
/// word i paired with the i-th of the workgroup-memory sites that store or load the vector's words.
fn check_bmmc_pass(r: &PassRecord, rounds: usize, map: &dyn Fn(u32) -> u32) {
    // Per invocation: [global reads, shared writes, shared reads, global writes] as (word of the
    // vector, site, instance, address).
    type Kinds = [Vec<(u32, u32, u32, u32)>; 4];
    let mut per: HashMap<(u32, u32), Kinds> = HashMap::new();
    let mut width = 1;
    for a in &r.accesses {
        let s = &r.kernel.sites[a.site as usize];
        if s.space == Space::Global && !is_data(&s.buffer) {
            continue; // the kernel's table of matrix columns
        }
        let k = match (s.space, s.kind) {
            (Space::Global, Kind::Read) => 0,
            (Space::Workgroup, Kind::Write) => 1,
            (Space::Workgroup, Kind::Read) => 2,
            (Space::Global, Kind::Write) => 3,
        };
        let words = if s.space == Space::Global { s.width } else { 1 };
        width = width.max(words);
        for w in 0..words {
            per.entry((a.wg, a.lid)).or_default()[k].push((w, a.site, a.instance, a.addr + w));
        }
    }
    let mut lanes: Vec<_> = per.into_iter().collect();
    lanes.sort_unstable_by_key(|(k, _)| *k);
    for (_, l) in lanes.iter_mut() {
        l.iter_mut().for_each(|v| v.sort_unstable());
    }
    // Each kind's list holds `width` blocks (a vector's word i, or a word site i), each in rounds.
    let round = |v: &Vec<(u32, u32, u32, u32)>, i: usize| {
        let block = (v.len() / width as usize).max(1);
        (i % block) / (block / rounds).max(1)
    };
    // (wg, round, shared word) → the global read address stored there.
    let mut shared = HashMap::new();
    for ((wg, _), [reads, sw, _, _]) in &lanes {
        for (i, w) in sw.iter().enumerate() {
            shared.insert((*wg, round(sw, i), w.3), reads[i].3);
        }
    }
    let (mut seen, mut read) = (0usize, 0usize);
    for ((wg, lid), [reads, sw, sr, writes]) in &lanes {
        read += reads.len();
        for (i, w) in writes.iter().enumerate() {
            let x = if sw.is_empty() {
                reads[i].3
            } else {
                shared[&(*wg, round(sr, i), sr[i].3)]
            };
            assert_eq!(w.3, map(x), "{}: wg {wg} lane {lid}: x = {x}", r.label);
            seen += 1;
        }
    }
    assert_eq!(seen, read, "{}: every element written once", r.label);
}

/// The tiles a workgroup of `pass` walks on 2^`n` words (1 for a kernel that is not tiled).
fn rounds(pass: &plan::PassSpec, n: usize, params: &plan::Params) -> usize {
    match &pass.kernel {
        plan::Kernel::Tiled { tin, threads_log } => {
            let shape = bmmc::kernels::tiled_shape(
                tin.len(),
                n - tin.len(),
                *threads_log,
                &gpu().limits,
                params,
            );
            1 << shape.tiles_log
        }
        _ => 1,
    }
}

#[test]
fn every_bmmc_plan_pass_moves_elements_by_its_map() {
    let n_bits = 14usize;
    // The default shape, workgroups that walk 4 tiles each (workgroup memory reused), and the
    // word kernel.
    for (preset, tiles, vector) in [
        ("bit-reverse", None, None),
        ("random:3", None, None),
        ("transpose:7,7", None, None),
        ("bit-reverse", Some(4), None),
        ("random:3", Some(4), None),
        ("transpose:7,7", Some(4), None),
        ("bit-reverse", None, Some(1)),
        ("random:3", Some(4), Some(1)),
    ] {
        let opts = bmmc::Options {
            preset: Some(preset.into()),
            tiles_per_workgroup: tiles,
            tile_vector: vector,
            ..Default::default()
        };
        let target = opts.target(n_bits).unwrap();
        let params = opts.params(gpu());
        for variant in ["naive", "seed-plu", "seed-ulp", "tiled"] {
            let Ok(spec) = plan::build(variant.parse().unwrap(), &target, &params) else {
                continue;
            };
            let rep = record(&AlgoOptions::Bmmc(opts.clone()), variant, 1 << n_bits);
            assert_eq!(rep.records.len(), spec.passes.len(), "{preset} {variant}");
            for (r, ps) in rep.records.iter().zip(&spec.passes) {
                check_bmmc_pass(r, rounds(ps, n_bits, &params), &|x| ps.map.apply(x));
            }
            if variant == "tiled" {
                for p in &rep.passes {
                    for g in &p.global {
                        assert_eq!(g.sectors, g.min_sectors, "{preset} tiled {}", p.label);
                    }
                }
            }
        }
    }
}

#[test]
fn unmarked_kernels_and_oversized_runs_are_refused() {
    let g = gpu();
    let a = AlgoOptions::Bitrev(Default::default());
    let algo = a.algo();
    let big = lens::max_elements(g) * 2;
    let req = RunRequest {
        variant: algo.info().variant(Some("naive")).unwrap(),
        dtype: DType::U32,
        input: random_data(big, DType::U32, 1, false),
        trace: false,
    };
    let normal = algo::run(algo, g, &req).unwrap();
    // The recording run is checked against the normal run's output: a normal run of another
    // input is refused.
    let other = algo::run(
        algo,
        g,
        &RunRequest {
            input: random_data(big, DType::U32, 2, false),
            ..req.clone()
        },
    )
    .unwrap();
    let e = lens::record_run(algo, g, &req, &other, 32).unwrap_err();
    assert!(
        e.to_string().contains("differs from the normal run's"),
        "{e}"
    );
    // Every workgroup of a run past the log: refused, naming the limit.
    let all = lens::LensOptions {
        warp: 32,
        sample: lens::sample::SampleSpec::All,
        ..lens::LensOptions::auto(32)
    };
    let e = pollster::block_on(lens::record_run_async(algo, g, &req, &normal, &all)).unwrap_err();
    assert!(e.to_string().contains("too large to record"), "{e}");
    assert!(
        e.to_string().contains(&lens::max_elements(g).to_string()),
        "{e}"
    );
    // By default, a sample: its counts weighed up to the grid are the whole run's.
    let rep = lens::record_run(algo, g, &req, &normal, 32).unwrap();
    assert!(!rep.records[0].sample.is_all());
    let p = &rep.passes[0];
    for (kind, sectors) in [(Kind::Read, 4.0), (Kind::Write, 32.0)] {
        let s = p.global.iter().find(|s| s.kind == kind).unwrap();
        let want = (big / 32) as f64;
        assert!(
            (s.requests as f64 / want - 1.0).abs() < 0.01,
            "{kind:?} {s:?}"
        );
        assert!(
            (s.sectors as f64 / s.requests as f64 - sectors).abs() < 0.01,
            "{s:?}"
        );
    }
    let e = lens::record_run(algo, g, &req, &normal, 0).unwrap_err();
    assert!(e.to_string().contains("--lens-warp"), "{e}");
    let oe = AlgoOptions::Oddeven(Default::default());
    // 4096 phases × 2048 owners × 4 accesses (a word each at least) overflow two logs of 128 MiB
    // (lavapipe's storage-binding limit; a device capped there where the adapter's log is larger):
    // refused with both numbers.
    let small = Gpu::headless_capped(None, 128 << 20).unwrap();
    let e = record_on(&small, &oe, "transposition", 4096)
        .unwrap_err()
        .to_string();
    let words: u64 = e
        .split("needs ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    assert!(words >= 33562624, "{e}");
    assert!(
        e.contains("words of the record log") && e.contains("× the"),
        "{e}"
    );
}

#[test]
fn sites_point_at_the_kernel_as_written() {
    for src in [
        include_str!("../shaders/copy/copy_scalar.wgsl"),
        include_str!("../shaders/bitrev/bitrev.wgsl"),
    ] {
        let k = lens::ir::instrument("t", src).unwrap();
        assert_eq!(k.original, src);
        let lines: Vec<&str> = src.lines().collect();
        assert!(!k.sites.is_empty());
        for s in &k.sites {
            // The whole line as written, the access's text on it, its column inside the line.
            assert_eq!(lines[s.line as usize - 1], s.text, "{s:?}");
            assert!(s.text.contains(&s.expr) && !s.expr.is_empty(), "{s:?}");
            assert!(
                (s.col as usize) <= s.text.find(&s.expr).unwrap() + 1,
                "{s:?}"
            );
        }
        // The recording build is naga's rewrite; the normal build is never instrumented.
        assert!(k.source.contains("fn lens_rec(") && !src.contains("lens_rec"));
    }
}

/// The residency probe runs at every size up to the adapter's workgroup-memory limit, every
/// workgroup counts itself in and out, and at least one is ever in; on a GPU, no more fit as the
/// size grows.
#[test]
fn the_residency_probe_counts_every_workgroup_out_at_every_size() {
    let g = gpu();
    let limit = g.limits.max_compute_workgroup_storage_size;
    let found = pollster::block_on(lens::probe::residency(g)).unwrap();
    let sizes: Vec<u32> = found.iter().map(|&(b, _)| b).collect();
    assert_eq!(sizes.first(), Some(&1024));
    assert!(*sizes.last().unwrap() <= limit && *sizes.last().unwrap() + 2048 > limit);
    // 1 KiB apart to 8 KiB, then 2 KiB: no size left out.
    assert!(
        sizes
            .windows(2)
            .all(|w| w[1] - w[0] == if w[0] < 8192 { 1024 } else { 2048 }),
        "{sizes:?}"
    );
    assert!(found.iter().all(|&(_, n)| n >= 1), "{found:?}");
    if g.info.device_type != wgpu::DeviceType::Cpu {
        assert!(found.windows(2).all(|w| w[0].1 >= w[1].1), "{found:?}");
    }
}

#[test]
fn cli_lens_json_has_one_entry_per_pass() {
    let v = run_ok(&[
        "run",
        "bitrev",
        "--variant",
        "staged",
        "--n",
        "256",
        "--lens",
        "--lens-warp",
        "32",
        "--json",
    ]);
    let lens = v["lens"].as_array().unwrap();
    let passes = v["passes"].as_array().unwrap();
    assert_eq!(lens.len(), passes.len());
    for (i, p) in lens.iter().enumerate() {
        assert_eq!(p["pass"], i);
        assert_eq!(p["label"], passes[i]["label"]);
        assert_eq!(p["gpu_ms"], passes[i]["gpu_ms"]);
        for key in ["global", "shared", "floor_bytes", "predicted_ms"] {
            assert!(p.get(key).is_some(), "{key}");
        }
        for g in p["global"].as_array().unwrap() {
            for key in [
                "site",
                "line",
                "kind",
                "buffer",
                "requests",
                "sectors",
                "min_sectors",
                "segments",
                "bytes",
            ] {
                assert!(g.get(key).is_some(), "{key}");
            }
            // 256 elements = 8 requests of 32 lanes per site; every stage's reads are contiguous.
            assert_eq!(g["requests"], 8);
            if g["kind"] == "read" {
                assert_eq!(g["sectors"], 32);
            }
        }
    }
    assert_eq!(v["lens_model"]["warp"], 32);
    // The residency probe's table: present (empty on a CPU adapter), every row a size and a count.
    for r in v["lens_model"]["residency"].as_array().unwrap() {
        assert!(
            r["workgroup_bytes"].as_u64().unwrap() >= 1024
                && r["workgroups"].as_u64().unwrap() >= 1
        );
    }
    // --lens-warp needs --lens: refused with a one-line error.
    let out = bin()
        .args(["run", "bitrev", "--n", "16", "--lens-warp", "32"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Too large to record every workgroup, or a bad warp: exit 1, one line, before any GPU work.
    for (args, want) in [
        (
            &["--n", "4194304", "--lens", "--lens-sample", "all"][..],
            "too large to record",
        ),
        (
            &["--n", "16", "--lens", "--lens-warp", "0"][..],
            "--lens-warp must be 1..=1024",
        ),
    ] {
        let out = bin().args(["run", "bitrev"]).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(want), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

fn shared_site<'a>(
    p: &'a PassLens,
    expr: &str,
    kind: Kind,
    rec: &PassRecord,
) -> Vec<&'a stagewise::lens::analysis::SharedSite> {
    p.shared
        .iter()
        .filter(|s| {
            let site = &rec.kernel.sites[s.site as usize];
            s.kind == kind && site.expr == expr
        })
        .collect()
}

#[test]
fn transposition_sort_pairs_conflict_two_ways() {
    // Owner i compares words a = 2i + parity and a + 1: 32 lanes touch 64 consecutive words with
    // stride 2, i.e. 16 banks twice each: every compare-exchange access is a 2-way conflict. The
    // load and store (x = lid + k·WG) are conflict-free.
    let n = 1024;
    let rep = record(
        &AlgoOptions::Oddeven(Default::default()),
        "transposition",
        n,
    );
    assert_eq!(rep.passes.len(), 1);
    let (p, r) = (&rep.passes[0], &rep.records[0]);
    for (expr, kind) in [
        ("sm[a]", Kind::Read),
        ("sm[a + 1u]", Kind::Read),
        ("sm[a]", Kind::Write),
        ("sm[a + 1u]", Kind::Write),
    ] {
        let s = shared_site(p, expr, kind, r);
        assert_eq!(s.len(), 1, "{expr} {kind:?}");
        assert_eq!(s[0].max_ways, 2, "{expr} {kind:?}");
        assert!(
            (s[0].mean_ways - 2.0).abs() < 1e-9,
            "{expr}: {}",
            s[0].mean_ways
        );
        // n phases × (n/2 owners / 32 lanes) requests; the odd phase's last owner has no pair,
        // so its write sites run one lane short but still every warp.
        assert_eq!(s[0].requests, (n * n / 2 / 32) as u64, "{expr} {kind:?}");
    }
    for kind in [Kind::Read, Kind::Write] {
        let s = shared_site(p, "sm[x]", kind, r);
        assert_eq!((s.len(), s[0].max_ways), (1, 1));
    }
    // Global: one coalesced load and store of the segment.
    assert_eq!(per_request(p, Kind::Read), (4.0, 4.0, 1.0, (n / 32) as u64));
    assert_eq!(
        per_request(p, Kind::Write),
        (4.0, 4.0, 1.0, (n / 32) as u64)
    );
}

#[test]
fn reduce_then_scan_padding_leaves_only_the_coalesced_copy_two_way() {
    // PER = 4 vec4 per thread, padded by one vec4 after every 4 (sidx(i) = i + i/4). vec4 accesses
    // go in phases of 8 lanes. The coalesced copy (vec4 j·WG + lid): 8 consecutive vec4 straddle one
    // pad, words {0..15, 20..35}: banks 0–3 twice, 2-way. The chunk walk (vec4 lid·4 + j → words
    // 20·lid + 4j …): lanes start at banks 0, 20, 8, 28, 16, 4, 24, 12 and cover all 32 once, 1-way.
    // The Kogge-Stone totals (s_tot[lid], s_tot[lid − o]) are consecutive words, 1-way.
    let opts = stagewise::algo::scan::Options {
        workgroup_size: 256,
        per_thread: 4,
        ..Default::default()
    };
    let rep = record(&AlgoOptions::Scan(opts), "reduce-then-scan", 1 << 14);
    let (p, r) = (&rep.passes[2], &rep.records[2]);
    assert!(p.label.contains("scan"), "{}", p.label);
    let ways = |expr: &str, kind| shared_site(p, expr, kind, r)[0].max_ways;
    assert_eq!(ways("s_data[sidx(j * WG + lid)]", Kind::Write), 2);
    assert_eq!(ways("s_data[sidx(j * WG + lid)]", Kind::Read), 2);
    assert_eq!(ways("s_data[sidx(lid * PER + j)]", Kind::Read), 1);
    assert_eq!(ways("s_data[sidx(lid * PER + j)]", Kind::Write), 1);
    assert_eq!(ways("s_tot[lid]", Kind::Write), 1);
    assert_eq!(ways("s_tot[lid - o]", Kind::Read), 1);
    // Global: vec4 loads and stores, 16 sectors (512 bytes) per request, the minimum.
    for g in &p.global {
        if g.buffer != "sums" {
            assert_eq!(g.sectors, g.min_sectors, "{}", g.line);
            assert_eq!(g.sectors, 16 * g.requests, "{}", g.line);
        }
    }
}

#[test]
fn ladder_rungs_are_broadcasts_and_hillis_steele_reads_stay_coalesced() {
    let n = 1 << 12;
    let rep = record(&AlgoOptions::Scan(Default::default()), "ladder", n);
    for (k, (p, r)) in rep.passes.iter().zip(&rep.records).enumerate() {
        let step = 1u32 << k;
        // Every recorded read of the rung is a[(t & ~(p − 1)) − 1] for an active thread t.
        for a in &r.accesses {
            let s = &r.kernel.sites[a.site as usize];
            let t = a.wg * 256 + a.lid;
            assert_ne!(t & step, 0, "sleeping thread {t} recorded");
            if s.expr == "a[prev_rung]" {
                assert_eq!(a.addr, (t & !(step - 1)) - 1);
            } else {
                assert_eq!(a.addr, t);
            }
        }
        if step >= 32 {
            // A warp's 32 active threads share one rung: one sector per request.
            let g = p
                .global
                .iter()
                .find(|g| r.kernel.sites[g.site as usize].expr == "a[prev_rung]");
            let g = g.unwrap();
            assert_eq!(
                (g.sectors, g.min_sectors),
                (g.requests, g.requests),
                "{}",
                p.label
            );
        }
    }
    let rep = record(&AlgoOptions::Scan(Default::default()), "hillis-steele", n);
    for p in &rep.passes {
        for g in &p.global {
            // src[i − p] is shifted by a multiple of 32 words from phase 32 on: aligned again.
            assert!(
                g.sectors <= g.min_sectors + g.requests,
                "{} line {}",
                p.label,
                g.line
            );
        }
    }
}

#[test]
fn app_lens_toggle_records_on_a_worker_and_narrates_the_pass() {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use std::time::{Duration, Instant};
    let _ = gpu(); // sets XDG_RUNTIME_DIR before the app's device exists
    let mut h: Harness<'_, stagewise::ui::StagewiseApp> = Harness::builder()
        .with_size([1280.0, 900.0])
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| stagewise::ui::StagewiseApp::new(cc, None));
    let wait = |h: &mut Harness<'_, stagewise::ui::StagewiseApp>, what: &str| {
        let start = Instant::now();
        while h.state().is_running() || h.state().lens.is_recording() {
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "{what} never finished"
            );
            h.step();
            std::thread::sleep(Duration::from_millis(10));
        }
        h.run();
    };
    wait(&mut h, "the opening run");
    h.state_mut().lens.warp = 32;
    h.get_by_label("Memory lens").click();
    h.step();
    h.step();
    wait(&mut h, "the recording");
    let rep = h.state().lens.report().expect("a lens report");
    // Staged bit-reversal of the seed's 16 values: 4 stages × (split, copy back).
    assert_eq!(rep.passes.len(), 8);
    assert_eq!(rep.warp, 32);
    h.get_by_label_contains("Pass 0 (warp 32)");
    h.get_by_label_contains("are coalesced");
    // What was recorded and the memory system the prediction uses.
    h.get_by_label_contains("Recorded: every workgroup recorded");
    h.get_by_label_contains("memory model: a pass's fixed");
    h.get_by_label_contains("scattered sectors written at");
    h.get_by_label_contains("idle workgroups launched and");
    h.get_by_label_contains("warps' round trips a µs");
    h.get_by_label("access site");
    // Compare: naive beside staged on the same input, its own narration and both times.
    h.state_mut().lens.compare.variant = Some("naive".into());
    h.step();
    h.step();
    wait(&mut h, "the compare recording");
    h.get_by_label_contains("naive — stage 1");
    // 16 elements fit one segment: even the naive writes need no more sectors than they touch.
    assert_eq!(h.get_all_by_label_contains("are coalesced").count(), 2);
    h.get_by_label_contains(" passes · naive: ");
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
}

#[test]
fn every_scan_variant_records_and_every_pass_touches_global_memory() {
    let info = AlgoOptions::Scan(Default::default());
    let variants: Vec<&str> = info.algo().info().variants.iter().map(|v| v.name).collect();
    let shared = stagewise::algo::scan::Options {
        shared_scan: true,
        ..Default::default()
    };
    let cases = variants
        .iter()
        .map(|v| (AlgoOptions::Scan(Default::default()), *v))
        .chain([(AlgoOptions::Scan(shared), "decoupled")]);
    for (a, v) in cases {
        let rep = record(&a, v, 5000);
        assert!(!rep.passes.is_empty(), "{v}");
        for p in &rep.passes {
            assert!(p.floor_bytes > 0, "{v} {}", p.label);
            counts_are_consistent(p, &format!("{v} {}", p.label));
        }
    }
}

// ---- FFT ----
// Every FFT kernel and mode records; addresses, coalescing and bank conflicts derived by hand.
// The tests live in tests/lens/fft.rs (run them with `cargo test --test lens fft`).
#[path = "lens/fft.rs"]
mod fft;

// ---- radix sort ----
#[path = "lens/radix.rs"]
mod radix;

// ---- odd-even register kernels ----
#[path = "lens/oddeven.rs"]
mod oddeven;

// ---- a kernel written for the tests, counts by hand ----
#[path = "lens/handmade.rs"]
mod handmade;

// ---- every access in the IR is a site ----
#[path = "lens/coverage.rs"]
mod coverage;

// ---- sampled recording agrees with every workgroup's ----
#[path = "lens/sample.rs"]
mod sample;

/// The decoupled scan's look-back is traffic like any other: its status words and tile scratch are
/// sites, and the narration gives the statuses' share of the pass's sectors (small: a few words a
/// tile against the tile's data).
#[test]
fn the_look_back_is_in_the_lens_and_its_share_is_narrated() {
    let rep = record(&AlgoOptions::Scan(Default::default()), "decoupled", 1 << 16);
    let p = rep
        .passes
        .iter()
        .find(|p| p.buffers.iter().any(|b| b.buffer == "status"))
        .expect("a pass with status traffic");
    let r = &rep.records[p.pass];
    let reads = |buffer: &str, kind: Kind| {
        r.kernel
            .sites
            .iter()
            .any(|s| s.buffer == buffer && s.kind == kind)
    };
    assert!(reads("status", Kind::Read) && reads("status", Kind::Write));
    let status = p.buffers.iter().find(|b| b.buffer == "status").unwrap();
    let share = status.sectors as f64 / p.sectors() as f64;
    assert!(share > 0.0 && share < 0.1, "status share {share}");
    assert!(
        r.kernel
            .sites
            .iter()
            .any(|s| s.space == Space::Workgroup && s.buffer.starts_with("s_")),
        "tile scratch"
    );
    let text = stagewise::ui::lens::narrate(p, rep.warp);
    assert!(
        text.contains("sectors by buffer: ") && text.contains("status "),
        "{text}"
    );
}

/// The memory model's probes move what they say: the scatter writes word i to (i · 0x9E3779B1)
/// mod n, the gather reads it from there, the launch writes nothing.
#[test]
fn the_memory_models_probes_scatter_and_gather_a_permutation() {
    let g = gpu();
    for n in [1usize << 10, 1 << 14] {
        let x = random_data(n, DType::U32, 7, false).bits;
        let perm = |i: usize| (i as u32).wrapping_mul(0x9E37_79B1) as usize & (n - 1);
        let run = |entry: &str| {
            let src = g.storage_init("src", &x).unwrap();
            let dst = g.storage_poisoned("dst", n, 0xDEAD_BEEF).unwrap();
            let mut plan = lens::probe::probe_plan(g, entry, &src, &dst, n).unwrap();
            plan.output = Some(stagewise::gpu::Region::words(&dst, n));
            plan.keep.extend([src, dst]);
            stagewise::gpu::execute_blocking(g, &plan, false)
                .unwrap()
                .output
        };
        let mut want = vec![0u32; n];
        for (i, &v) in x.iter().enumerate() {
            want[perm(i)] = v;
        }
        assert_eq!(run("scatter"), want, "scatter n {n}");
        let want: Vec<u32> = (0..n).map(|i| x[perm(i)]).collect();
        assert_eq!(run("gather"), want, "gather n {n}");
        assert_eq!(run("launch"), vec![0xDEAD_BEEF; n], "launch n {n}");
    }
}
