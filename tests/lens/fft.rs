//! The FFT room under the memory lens (the `// ---- FFT ----` section of tests/lens.rs, kept in
//! its own file so that each stays under ~600 lines): every kernel (teaching, fast, radix, auto)
//! and every mode (complex, real, real-pair; raw and natural order) records; the recorded
//! addresses are the plan's; the coalescing and bank-conflict counts are the ones derived by hand
//! (warp 32, lavapipe).

use crate::common::gpu;
use stagewise::algo::fft::{Kernel, NaturalStore, Options, Order, Signal, model};
use stagewise::algo::{self, AlgoOptions, RunRequest, RunResult};
use stagewise::data::DType;
use stagewise::lens::analysis::{GlobalSite, PassLens};
use stagewise::lens::record::PassRecord;
use stagewise::lens::sites::{Kind, Space};
use stagewise::lens::{self, LensReport};
use std::collections::HashSet;

fn opts(n: usize, e: usize, batch: usize, kernel: Kernel, order: Order) -> Options {
    Options {
        size: Some(n),
        elements_per_invocation: Some(e),
        batch,
        kernel,
        order,
        signal: Signal::Noise,
        ..Default::default()
    }
}

/// Run `o` on its generated signal, then record the same request at warp 32.
fn fft_record(o: &Options) -> (RunResult, LensReport) {
    let a = AlgoOptions::Fft(o.clone());
    let algo = a.algo();
    let req = RunRequest {
        variant: algo.info().variant(Some("workgroup")).unwrap(),
        dtype: DType::F32,
        input: o.signal_data(o.size.unwrap()),
        trace: false,
    };
    let normal = algo::run(algo, gpu(), &req).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    assert!(normal.verified, "{o:?}: {:?}", normal.mismatch);
    let rep =
        lens::record_run(algo, gpu(), &req, &normal, 32).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    super::coverage::every_access_is_a_site(&rep);
    (normal, rep)
}

/// Every word of `buffer` that the pass's global accesses of `kind` touch.
fn words(r: &PassRecord, buffer: &str, kind: Kind) -> HashSet<u32> {
    let mut out = HashSet::new();
    for a in &r.accesses {
        let s = &r.kernel.sites[a.site as usize];
        if s.space == Space::Global && s.kind == kind && s.buffer == buffer {
            out.extend((0..s.width).map(|k| a.addr + k));
        }
    }
    out
}

/// Record `o` (run by `kernel`) and check what holds for every FFT: one pass with accesses; every
/// global site's sectors ≥ the minimum and segments ≤ sectors; the loads read exactly the input's
/// words, the stores write exactly the output's, twiddle reads stay in the table (N/2 values).
fn records_sanely(o: &Options, kernel: &str) -> (RunResult, LensReport) {
    let (normal, rep) = fft_record(o);
    let what = format!("{kernel} {o:?}");
    assert_eq!(normal.extra["kernel"], kernel, "{what}");
    assert_eq!(rep.passes.len(), 1, "{what}");
    let (p, r) = (&rep.passes[0], &rep.records[0]);
    assert!(!r.accesses.is_empty() && p.floor_bytes > 0, "{what}");
    super::counts_are_consistent(p, &what);
    for s in &p.shared {
        assert!((1..=32).contains(&s.max_ways), "{what} line {}", s.line);
    }
    let all = |len: usize| (0..len as u32).collect::<HashSet<u32>>();
    assert_eq!(
        words(r, "src", Kind::Read),
        all(normal.input.len()),
        "{what}"
    );
    assert_eq!(
        words(r, "dst", Kind::Write),
        all(normal.output.len()),
        "{what}"
    );
    let n = o.size.unwrap();
    assert!(
        words(r, "tw", Kind::Read)
            .iter()
            .all(|&w| w < n.max(2) as u32)
    );
    (normal, rep)
}

#[test]
fn every_teaching_mode_and_order_records() {
    for (n, e, batch) in [(2, 2, 3), (16, 4, 3), (256, 8, 2), (1024, 32, 2)] {
        for (real, real_pair) in [(false, false), (true, false), (false, true)] {
            for order in [Order::Raw, Order::Natural] {
                let o = Options {
                    real,
                    real_pair,
                    inverse: n == 16,
                    ..opts(n, e, batch, Kernel::Teaching, order)
                };
                let (_, rep) = records_sanely(&o, "teaching");
                // Exchanges (W > 1) and the real-pair unpacking go through workgroup memory.
                if n / e > 1 || real_pair {
                    assert!(!rep.passes[0].shared.is_empty(), "{o:?}");
                }
            }
        }
    }
}

#[test]
fn every_fast_and_radix_configuration_records() {
    use NaturalStore::{Direct, Staged};
    let fast = |n, e, b, order, store, g: Option<usize>, no_shuffle| Options {
        natural_store: store,
        ffts_per_workgroup: g,
        no_shuffle,
        ..opts(n, e, b, Kernel::Fast, order)
    };
    // (options, kernel): raw, staged and direct natural order (E = 2 stores vec2, E ≥ 4 vec4),
    // shuffles or not, G > 1 with a tail workgroup, E = 64 (W = 1 and 2), inverse.
    let mut cases = vec![
        (fast(16, 2, 3, Order::Raw, Staged, None, false), "fast"),
        (fast(16, 2, 3, Order::Natural, Direct, None, false), "fast"),
        (fast(16, 2, 3, Order::Natural, Staged, None, true), "fast"),
        (fast(256, 8, 3, Order::Raw, Staged, Some(2), false), "fast"),
        (
            fast(256, 8, 3, Order::Natural, Staged, Some(2), true),
            "fast",
        ),
        (
            fast(256, 8, 3, Order::Natural, Direct, Some(2), false),
            "fast",
        ),
        (
            fast(1024, 16, 2, Order::Natural, Staged, None, false),
            "fast",
        ),
        (fast(64, 64, 2, Order::Raw, Staged, None, false), "fast"),
        (fast(128, 64, 2, Order::Natural, Direct, None, true), "fast"),
        (
            Options {
                inverse: true,
                ..fast(64, 4, 5, Order::Natural, Staged, Some(2), false)
            },
            "fast",
        ),
    ];
    let radix = |n, e, b, g: Option<usize>, s: Option<usize>| Options {
        ffts_per_workgroup: g,
        sequential_ffts: s,
        ..opts(n, e, b, Kernel::Radix, Order::Natural)
    };
    cases.extend([
        (radix(2, 2, 3, None, None), "radix"),
        (radix(256, 8, 3, Some(2), None), "radix"),
        (radix(256, 4, 5, Some(2), Some(2)), "radix"),
        (radix(2048, 16, 2, None, Some(2)), "radix"),
        // E = 64: the 33rd load is named `u32` (the recorder converts through an alias).
        (radix(64, 64, 2, None, None), "radix"),
        (radix(256, 64, 3, Some(2), Some(2)), "radix"),
        (
            Options {
                inverse: true,
                ..radix(512, 8, 2, None, None)
            },
            "radix",
        ),
        // Auto: radix in natural order, fast in raw order.
        (opts(256, 8, 2, Kernel::Auto, Order::Natural), "radix"),
        (opts(256, 8, 2, Kernel::Auto, Order::Raw), "fast"),
    ]);
    for (o, kernel) in cases {
        records_sanely(&o, kernel);
    }
}

/// The global sites of `buffer` in `p`.
fn sites<'a>(p: &'a PassLens, buffer: &str) -> Vec<&'a GlobalSite> {
    p.global.iter().filter(|g| g.buffer == buffer).collect()
}

/// (requests, sectors, min sectors, segments) summed over the sites.
fn totals(s: &[&GlobalSite]) -> (u64, u64, u64, u64) {
    s.iter().fold((0, 0, 0, 0), |t, g| {
        (
            t.0 + g.requests,
            t.1 + g.sectors,
            t.2 + g.min_sectors,
            t.3 + g.segments,
        )
    })
}

#[test]
fn teaching_loads_are_the_plans_and_coalesced_and_exchanges_conflict_free() {
    // N = 1024, E = 8, W = 128, B = 3: thread t of FFT b (workgroup b) loads element
    // b·N + t + j·W in its j-th loop iteration (the site's instance j). A warp is 32 consecutive
    // t: 32 consecutive complex64 = 256 bytes = 8 sectors, 2 segments (b·N + j·W + 32w is a
    // multiple of 16 elements: 128-byte aligned). Requests: B × W/32 warps × E = 96.
    let (n, e, b) = (1024usize, 8usize, 3usize);
    let w = n / e;
    for order in [Order::Raw, Order::Natural] {
        let (_, rep) = records_sanely(&opts(n, e, b, Kernel::Teaching, order), "teaching");
        let (p, r) = (&rep.passes[0], &rep.records[0]);
        let requests = (b * w / 32 * e) as u64;
        let load = sites(p, "src");
        assert_eq!(load.len(), 1);
        assert_eq!(
            totals(&load),
            (requests, 8 * requests, 8 * requests, 2 * requests)
        );
        // Every recorded access of src and dst at its (workgroup, thread, iteration): loads at
        // b·N + t + j·W; stores there too in raw order, at b·N + F(t + j·W) in natural order.
        let mut seen = 0;
        for a in &r.accesses {
            let s = &r.kernel.sites[a.site as usize];
            let x = (a.lid + a.instance * w as u32) as usize;
            let want = match (s.buffer.as_str(), order) {
                ("src", _) | ("dst", Order::Raw) => a.wg as usize * n + x,
                ("dst", Order::Natural) => a.wg as usize * n + model::f_map(x, 10, 3),
                _ => continue,
            };
            assert_eq!(a.addr as usize, 2 * want, "{order:?} {} {a:?}", s.buffer);
            seen += 1;
        }
        assert_eq!(
            seen,
            2 * n * b,
            "{order:?}: one load and one store per element"
        );
        if order == Order::Raw {
            assert_eq!(
                totals(&sites(p, "dst")),
                totals(&load),
                "raw stores as loads"
            );
        }
        // The exchange at stride s writes sre/sim[m·W + t] and reads sre/sim[m·W + (t ^ s)]
        // (f32 arrays: one word per lane). A warp's 32 lanes are 32 consecutive t of one
        // 32-aligned block; t ^ s permutes that block (s < 32) or maps it onto another 32-aligned
        // block (s ≥ 32): either way 32 consecutive words, one per bank — 1 way, every request.
        // Requests: B × W/32 warps × log2 W = 7 exchanges × E/2 = 4 iterations = 336 per site.
        assert_eq!(
            p.shared.len(),
            4,
            "{order:?}: sre and sim, written and read"
        );
        for s in &p.shared {
            assert_eq!(s.max_ways, 1, "{order:?} line {}", s.line);
            assert!((s.mean_ways - 1.0).abs() < 1e-12);
            assert_eq!(s.requests, (b * w / 32 * 7 * e / 2) as u64);
        }
    }
}

#[test]
fn real_input_loads_one_word_per_lane_and_fast_direct_stores_scatter() {
    // Real input: src is array<f32>, width 1: 32 lanes × 4 bytes = 128 bytes = 4 sectors in one
    // segment per request.
    let o = Options {
        real: true,
        ..opts(256, 4, 2, Kernel::Teaching, Order::Natural)
    };
    let (_, rep) = records_sanely(&o, "teaching");
    let load = sites(&rep.passes[0], "src");
    let (req, sec, min, seg) = totals(&load);
    assert_eq!((req, sec, min, seg), (2 * 2 * 4, 4 * req, 4 * req, req));

    // Fast kernel, natural order, direct: N = 1024, E = 8, W = 128, G = 1. Thread t stores the
    // vec4 (dst: array<vec4<f32>>, width 4) at complex index ft | c_j, ft = b·N + rev9(t). With
    // t = 32w + i, rev9(t) = rev5(i)·16 + (w's bits at 3, 2): a warp's lanes are 16 complex =
    // 128 bytes apart, each 16 bytes in its own sector and segment: 32 sectors and 32 segments
    // per request against a minimum of 32 × 16 / 32 = 16. E/2 = 4 store sites, B × W/32 = 8
    // requests each. Its loads (src[b·N + t + j·W]) are coalesced: 8 sectors per request.
    let o = Options {
        natural_store: NaturalStore::Direct,
        ..opts(1024, 8, 2, Kernel::Fast, Order::Natural)
    };
    let (_, rep) = records_sanely(&o, "fast");
    let p = &rep.passes[0];
    let store = sites(p, "dst");
    assert_eq!(store.len(), 4);
    for g in &store {
        assert_eq!(rep.records[0].kernel.sites[g.site as usize].width, 4);
        assert_eq!(
            (g.requests, g.sectors, g.min_sectors, g.segments),
            (8, 32 * 8, 16 * 8, 32 * 8),
            "line {}",
            g.line
        );
    }
    let load = sites(p, "src");
    assert_eq!(load.len(), 8);
    let (req, sec, min, _) = totals(&load);
    assert_eq!((req, sec, min), (64, 8 * 64, 8 * 64));

    // The radix kernel stores X[t + W·bitrev(j)] from the last round: consecutive threads to
    // consecutive elements, every store request at its minimum of 8 sectors.
    let (_, rep) = records_sanely(&opts(1024, 16, 2, Kernel::Radix, Order::Natural), "radix");
    for g in sites(&rep.passes[0], "dst") {
        assert_eq!((g.sectors, g.min_sectors), (8 * g.requests, 8 * g.requests));
    }
}
