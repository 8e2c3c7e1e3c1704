//! Every look-back kernel with its fallback path forced, against the room's CPU model: scan
//! `decoupled` (subgroup and workgroup-memory tile scans) and radix `onesweep` (keys only and
//! key-value), for every dtype × tile order × `--spin` 0 / 1 / default (the full product), with
//! workgroup sizes, per-thread counts, exclusive/descending and digit widths taken in turn over the
//! product (every value appears), on sizes 1, tile − 1, tile + 1 and several tiles plus an odd
//! remainder, with negatives, duplicates and (f32) ±0, ±inf and NaN.
//!
//! Issue #46: `scan --variant decoupled --n 6145 --spin 0` gave wrong sums from the second tile on,
//! on an H100 only; lavapipe passed and no test forced the fallback at the default tile shape.
mod common;

use common::{gpu, run, try_run};
use stagewise::algo::AlgoOptions;
use stagewise::algo::radix::{self, Values};
use stagewise::algo::scan::{self, TileOrder};
use stagewise::data::{DType, Data};

const DTYPES: [DType; 3] = [DType::U32, DType::I32, DType::F32];
const ORDERS: [TileOrder; 2] = [TileOrder::Dispatch, TileOrder::Counter];
/// 0: always fall back; 1: fall back at once; 256: the default.
const SPINS: [u32; 3] = [0, 1, 256];

/// `n` values: random bits (negatives for i32) with every third a small repeated value; f32 finite
/// values with ±0 and duplicates, and with `specials` one ±inf or NaN in the last tenth (a NaN
/// earlier would make every later sum NaN and hide a wrong one).
fn input(n: usize, dtype: DType, seed: u64, specials: bool) -> Data {
    let mut x = common::random_data(n, dtype, seed, false);
    let small = |i: usize| -> u32 {
        let v = (i % 5) as i32 - 2;
        match dtype {
            DType::F32 => (v as f32).to_bits(),
            _ => v as u32,
        }
    };
    for i in (0..n).step_by(3) {
        x.bits[i] = small(i);
    }
    if dtype == DType::F32 {
        for i in (1..n).step_by(7) {
            x.bits[i] = if i % 2 == 0 { 0 } else { 0x8000_0000 }; // +0, -0
        }
        if specials && n > 1 {
            let at = n - 1 - (seed as usize % n.div_ceil(10));
            x.bits[at] = [0x7f80_0000, 0xff80_0000, 0x7fc0_0000][seed as usize % 3];
        }
    }
    x
}

/// 1, tile − 1, tile + 1 and `tiles` tiles plus an odd remainder.
fn sizes(tile: usize, tiles: usize) -> [usize; 4] {
    [1, tile - 1, tile + 1, tiles * tile + ((tile / 3) | 1)]
}

fn scan_check(o: &scan::Options, x: &Data, what: &str) {
    let r = run(&AlgoOptions::Scan(o.clone()), "decoupled", x.clone(), false);
    assert!(r.verified, "{what}: {:?}", r.mismatch);
    if x.dtype != DType::F32 {
        let want = scan::model::sequential(x.dtype, &x.bits, o.exclusive);
        assert_eq!(r.output.bits, want, "{what}");
    }
}

/// Scan `decoupled`, both tile scans: the full product of tile scan × dtype × tile order × spin;
/// the tile shape (the default among them), exclusive and the f32 specials in turn.
#[test]
fn scan_decoupled_fallback_matrix() {
    let g = gpu();
    // (workgroup size, vec4 per thread); (0, 0) is the default shape (256 × 6 or 7 where
    // the adapter has subgroups). Workgroups narrower than a subgroup included.
    let shapes = [
        (0u32, 0u32),
        (8, 1),
        (32, 2),
        (64, 3),
        (4, 2),
        (16, 6),
        (128, 1),
    ];
    let mut k = 0usize;
    for shared in [false, true] {
        for dtype in DTYPES {
            for order in ORDERS {
                for spin in SPINS {
                    let (wg, per) = shapes[k % shapes.len()];
                    let o = scan::Options {
                        workgroup_size: wg,
                        per_thread: per,
                        spin,
                        tile_order: order,
                        shared_scan: shared,
                        exclusive: k % 2 == 1,
                        ..Default::default()
                    };
                    let tile = o
                        .tile_shape(g, stagewise::algo::scan::Variant::Decoupled, 0)
                        .unwrap()
                        .elements();
                    // spin 0: tile t reduces its t predecessors itself; a few tiles suffice.
                    for (j, n) in sizes(tile, 3).into_iter().enumerate() {
                        let x = input(n, dtype, (k * 4 + j) as u64, j == 3);
                        scan_check(&o, &x, &format!("n={n} {dtype} {o:?}"));
                    }
                    if spin == 0 {
                        // Traced: the fallback really ran for every predecessor of every tile.
                        let n = 4 * tile + 1;
                        let x = input(n, dtype, k as u64, false);
                        let r = run(&AlgoOptions::Scan(o.clone()), "decoupled", x, true);
                        assert!(r.verified, "traced n={n} {o:?}: {:?}", r.mismatch);
                        assert_eq!(r.extra["fallbacks"].as_u64(), Some(10), "5 tiles: {o:?}");
                    }
                    k += 1;
                }
            }
        }
    }
}

/// The issue's own case and its neighbours: the default tile shape, the fallback forced, dispatch
/// order, the default tiles (6144 elements on subgroup adapters up to 2^21) and one more element.
#[test]
fn scan_issue_46_default_shape_spin_0() {
    let g = gpu();
    for dtype in DTYPES {
        for order in [TileOrder::Dispatch, TileOrder::Counter, TileOrder::Auto] {
            for spin in [0, 1] {
                let o = scan::Options {
                    spin,
                    tile_order: order,
                    ..Default::default()
                };
                let tile = o
                    .tile_shape(g, stagewise::algo::scan::Variant::Decoupled, 0)
                    .unwrap()
                    .elements();
                for n in [6145, tile + 1, 2 * tile + 1, 3 * tile - 1] {
                    let x = input(n, dtype, n as u64, false);
                    scan_check(&o, &x, &format!("n={n} {dtype} {o:?}"));
                }
            }
        }
    }
}

/// The default shape's rule where the adapter has subgroups: 6 vec4 a thread up to 2^21
/// elements, 9 up to 2^25 (exclusive 8), 10 above, in every type; a run just above the first line
/// verifies in each type, inclusive and exclusive.
#[test]
fn scan_default_shape_by_type_and_size() {
    let g = gpu();
    let v = stagewise::algo::scan::Variant::Decoupled;
    let o = scan::Options::default();
    let excl = scan::Options {
        exclusive: true,
        ..o.clone()
    };
    let big = (1 << 21) + 5;
    for dtype in DTYPES {
        let small = o.tile_shape(g, v, 1 << 20).unwrap();
        let large = o.tile_shape(g, v, big).unwrap();
        if g.has_subgroups() {
            assert_eq!(small.per, 6, "{dtype} 2^20");
            assert_eq!(large.per, 9, "{dtype} 2^21 + 5");
            assert_eq!(
                excl.tile_shape(g, v, big).unwrap().per,
                8,
                "{dtype} exclusive"
            );
            // Above 2^25 the padded tiles may pass a binding limit (lavapipe's 128 MiB): then
            // the workgroup-memory kernel (scan_padding_past_the_binding_limit_…).
            for (n, per) in [(1usize << 25, 9u32), ((1 << 25) + 1, 10)] {
                let s = o.tile_shape(g, v, n).unwrap();
                if s.subgroups {
                    assert_eq!(s.per, per, "{dtype} {n}");
                } else {
                    let padded = n.next_multiple_of(4 * 256 * per as usize);
                    assert!(padded as u64 * 4 > g.max_binding_bytes(), "{dtype} {n}");
                }
            }
        }
        let x = input(big, dtype, 7, false);
        scan_check(&o, &x, &format!("default shape n={big} {dtype}"));
        scan_check(
            &excl,
            &x,
            &format!("default shape n={big} {dtype} exclusive"),
        );
    }
}

fn radix_check(o: &radix::Options, x: &Data, trace: bool) -> stagewise::algo::RunResult {
    let what = format!("onesweep n={} {} {o:?}", x.len(), x.dtype);
    let r = try_run(&AlgoOptions::Radix(o.clone()), "onesweep", x.clone(), trace)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(r.verified, "{what}: {:?}", r.mismatch);
    let vals: Vec<u32> = match o.values {
        Values::None => Vec::new(),
        Values::Iota => (0..x.len() as u32).collect(),
        Values::Input => x.bits.clone(),
    };
    let (k, v) = radix::model::sort(x.dtype, o.descending, &x.bits, &vals);
    assert_eq!(r.output.bits, k, "{what}: keys");
    if o.has_values() {
        let got: Vec<u32> = r.extra["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(got, v, "{what}: values");
    }
    r
}

/// Radix `onesweep`, keys only and key-value: the full product of payload × dtype × tile order ×
/// spin; workgroup size, keys per thread, digit width, descending and the ranking in turn.
#[test]
fn radix_onesweep_fallback_matrix() {
    let g = gpu();
    // (threads, keys per thread, digit bits)
    let shapes = [
        (32u32, 2u32, 8u32),
        (64, 1, 4),
        (96, 3, 8),
        (32, 8, 5),
        (128, 2, 3),
        (0, 0, 8),
    ];
    let mut k = 0usize;
    for values in [Values::None, Values::Iota, Values::Input] {
        for dtype in DTYPES {
            for order in ORDERS {
                for spin in SPINS {
                    // Values::Input (keys carried as their own payload) only in part of the product.
                    if values == Values::Input && spin != 0 {
                        continue;
                    }
                    let (wg, kpt, bits) = shapes[k % shapes.len()];
                    let o = radix::Options {
                        workgroup_size: wg,
                        keys_per_thread: kpt,
                        digit_bits: bits,
                        spin,
                        tile_order: order,
                        values,
                        descending: k % 2 == 1,
                        shared_rank: k % 3 == 2,
                        ..Default::default()
                    };
                    let tile = o.shape(g).unwrap().tile();
                    for (j, n) in sizes(tile, 3).into_iter().enumerate() {
                        let mut x = common::random_data(n, dtype, (k * 4 + j) as u64, true);
                        // Duplicates: every third key repeats one of four.
                        for i in (0..n).step_by(3) {
                            x.bits[i] = x.bits[(i / 3) % 4];
                        }
                        let r = radix_check(&o, &x, spin == 0 && j == 3);
                        if spin == 0 && j == 3 {
                            let f = r.extra["fallbacks"].as_u64().unwrap();
                            assert!(f > 0, "spin 0 over 4 tiles fell back {f} times: {o:?}");
                        }
                    }
                    k += 1;
                }
            }
        }
    }
    assert!(k >= 36 && k >= shapes.len());
}

/// The subgroup kernel reads and writes whole tiles (its buffers padded with zeros): where the
/// padded size would pass the binding limit, the workgroup-memory kernel scans instead and the
/// result is still right (the uncapped device keeps the subgroup kernel at this size).
#[test]
fn scan_padding_past_the_binding_limit_takes_the_shared_kernel() {
    use stagewise::algo::{self, RunRequest};
    let n = 100_000;
    let capped = stagewise::gpu::Gpu::headless_capped(None, n as u64 * 4).unwrap();
    let roomy = gpu();
    let v = scan::Variant::Decoupled;
    let o = scan::Options::default();
    let shape = o.tile_shape(&capped, v, n).unwrap();
    assert!(!shape.subgroups, "{shape:?}");
    if roomy.has_subgroups() {
        assert!(o.tile_shape(roomy, v, n).unwrap().subgroups);
    }
    for dtype in DTYPES {
        let x = input(n, dtype, 11, true);
        let a = AlgoOptions::Scan(o.clone());
        let req = RunRequest::new(
            a.algo(),
            a.algo().info().variant(Some("decoupled")).unwrap(),
            dtype,
            x,
            false,
        )
        .unwrap();
        let r = algo::run(a.algo(), &capped, &req).unwrap();
        assert!(r.verified, "{dtype}: {:?}", r.mismatch);
    }
}
