//! Prefix sums on the GPU against the CPU model: every variant, many lengths (powers of two and
//! not), wrapping u32/i32, f32 within the documented tolerance, exclusive mode, the seed's ladder
//! pairs and folded suffix sums, Blelloch's tree, the decoupled look-back's fallback path.
mod common;

use common::{gpu, random_data, run, run_ok, try_run, unless_past_limits};
use serde_json::Value;
use stagewise::algo::scan::{Options, TileOrder, model};
use stagewise::algo::{AlgoOptions, RunResult};
use stagewise::data::{DType, Data};

const ALL: [&str; 7] = [
    "ladder",
    "folded",
    "hillis-steele",
    "blelloch",
    "reduce-then-scan",
    "decoupled",
    "sequential",
];

fn scan(o: Options) -> AlgoOptions {
    AlgoOptions::Scan(o)
}

fn small_tiles() -> Options {
    // 4 × 2 × 32 = 256-element tiles: many tiles, so look-back and the spine really work.
    Options {
        workgroup_size: 32,
        per_thread: 2,
        ..Default::default()
    }
}

/// What the variant must produce (folded without --mirror: suffix sums).
fn want(variant: &str, o: &Options, x: &Data) -> Vec<u32> {
    if variant == "folded" && !o.mirror {
        model::suffix(x.dtype, &x.bits, o.exclusive)
    } else {
        model::sequential(x.dtype, &x.bits, o.exclusive)
    }
}

/// `o` for `variant`: the tile options only where they apply (elsewhere they are an error).
fn for_variant(variant: &str, o: &Options) -> Options {
    let mut o = o.clone();
    if !matches!(variant, "decoupled" | "reduce-then-scan") {
        o.workgroup_size = 0;
        o.per_thread = 0;
    }
    o
}

fn check(variant: &str, o: &Options, x: Data, trace: bool) -> RunResult {
    try_check(variant, o, x, trace).expect("refused under WebGPU's limits")
}

/// [`check`], where a shape past WebGPU's limits may be refused (`None`) under them.
fn try_check(variant: &str, o: &Options, x: Data, trace: bool) -> Option<RunResult> {
    let o = &for_variant(variant, o);
    let n = x.len();
    let dtype = x.dtype;
    let w = want(variant, o, &x);
    let r = unless_past_limits(
        try_run(&scan(o.clone()), variant, x, trace),
        &format!("scan {variant} {o:?}"),
    )?;
    assert!(
        r.verified,
        "{variant} n={n} {dtype} {o:?}: {:?}",
        r.mismatch
    );
    if dtype != DType::F32 {
        assert_eq!(r.output.bits, w, "{variant} n={n} {dtype}");
    }
    Some(r)
}

const SIZES: [usize; 22] = [
    1, 2, 3, 4, 5, 7, 8, 13, 30, 31, 33, 63, 64, 65, 97, 127, 257, 1000, 1021, 4095, 4097, 65537,
];

#[test]
fn every_variant_matches_the_model_for_many_lengths() {
    let _ = gpu();
    for (k, &n) in SIZES.iter().enumerate() {
        let x = random_data(n, DType::U32, k as u64, false);
        for v in ALL {
            check(v, &Options::default(), x.clone(), false);
            if matches!(v, "decoupled" | "reduce-then-scan") {
                check(v, &small_tiles(), x.clone(), false);
            }
        }
    }
}

#[test]
fn large_lengths_for_the_scalable_variants() {
    for (k, n) in [131_071usize, 262_145, 300_000].into_iter().enumerate() {
        let x = random_data(n, DType::I32, 100 + k as u64, false);
        for v in ALL {
            check(v, &Options::default(), x.clone(), false);
        }
        check("decoupled", &small_tiles(), x.clone(), false);
        check("reduce-then-scan", &small_tiles(), x, false);
    }
}

#[test]
fn u32_and_i32_wrap_on_overflow() {
    let n = 1000;
    let u = Data::from_u32(&vec![u32::MAX - 7; n]);
    let i = Data::from_i32(
        &(0..n)
            .map(|k| {
                if k % 3 == 0 {
                    i32::MIN + 5
                } else {
                    i32::MAX - 3
                }
            })
            .collect::<Vec<_>>(),
    );
    for v in ALL {
        for o in [Options::default(), small_tiles()] {
            let r = check(v, &o, u.clone(), false);
            if v != "folded" {
                // (MAX - 7) * 2 wraps to MAX - 15.
                assert_eq!(r.output.bits[1], u32::MAX - 15, "{v}");
            }
            check(v, &o, i.clone(), false);
        }
    }
}

#[test]
fn f32_within_the_tolerance_with_errors_reported() {
    for (k, n) in [1usize, 2, 33, 1000, 4097, 65537].into_iter().enumerate() {
        let x = random_data(n, DType::F32, 7 + k as u64, false);
        for v in ALL {
            let r = check(v, &Options::default(), x.clone(), false);
            let abs = r.extra["max_abs_error"].as_f64().unwrap();
            assert!(r.extra.contains_key("max_rel_error"), "{v}");
            assert!(abs.is_finite(), "{v} n={n}");
            assert!(abs <= 1e-7 * 1e6 * n as f64, "{v} n={n}: {abs}");
        }
    }
    // Ones are exact in f32 up to 2^24: every variant must give them exactly.
    let ones = Data::from_f32(&vec![1.0; 3001]);
    for v in ALL {
        let r = check(v, &Options::default(), ones.clone(), false);
        assert_eq!(r.extra["max_abs_error"].as_f64(), Some(0.0), "{v}");
    }
    // A NaN poisons every sum that includes it.
    let mut y = vec![1.5f32; 40];
    y[7] = f32::NAN;
    for v in ALL {
        let r = check(v, &Options::default(), Data::from_f32(&y), false);
        let out = r.output.f32s();
        if v == "folded" {
            assert!(
                out[..=7].iter().all(|z| z.is_nan()) && out[8] == 32.0 * 1.5,
                "{v}"
            );
        } else {
            assert!(out[..7].iter().all(|z| !z.is_nan()), "{v}");
            assert!(out[7..].iter().all(|z| z.is_nan()), "{v}");
        }
    }
}

#[test]
fn exclusive_mode() {
    let ex = Options {
        exclusive: true,
        ..Default::default()
    };
    let ex_small = Options {
        exclusive: true,
        ..small_tiles()
    };
    for (k, n) in [1usize, 2, 30, 33, 1000, 4097, 20_000]
        .into_iter()
        .enumerate()
    {
        let x = random_data(n, DType::U32, 50 + k as u64, false);
        for v in ALL {
            let r = check(v, &ex, x.clone(), false);
            if v == "folded" {
                assert_eq!(r.output.bits[n - 1], 0, "{v}: exclusive suffix ends in 0");
            } else {
                assert_eq!(r.output.bits[0], 0, "{v}: exclusive prefix starts at 0");
            }
            if matches!(v, "decoupled" | "reduce-then-scan") {
                check(v, &ex_small, x.clone(), false);
            }
        }
        let f = random_data(n, DType::F32, 60 + k as u64, false);
        for v in ALL {
            check(v, &ex, f.clone(), false);
        }
    }
    // The mirrored folded form, exclusive: a prefix scan again.
    let m = Options {
        exclusive: true,
        mirror: true,
        ..Default::default()
    };
    let x = random_data(77, DType::I32, 3, false);
    check("folded", &m, x, false);
}

fn reads(stage: &Value) -> Vec<(u64, u64)> {
    stage["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
        .collect()
}

#[test]
fn ladder_reproduces_the_seed_for_size_30() {
    let x = Data::from_u32(&[2; 30]);
    let r = check("ladder", &Options::default(), x, true);
    let j = r.to_json(true);
    let stages = j["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 6, "input + phases p = 1, 2, 4, 8, 16");
    let phases: Vec<u64> = stages[1..]
        .iter()
        .map(|s| s["phase"].as_u64().unwrap())
        .collect();
    assert_eq!(phases, [1, 2, 4, 8, 16]);
    // The seed's printout, phase by phase.
    let p1: Vec<(u64, u64)> = (0..15).map(|k| (2 * k + 1, 2 * k)).collect();
    assert_eq!(reads(&stages[1]), p1);
    let p2 = reads(&stages[2]);
    assert_eq!(&p2[..4], &[(2, 1), (3, 1), (6, 5), (7, 5)]);
    assert_eq!(p2.len(), 14);
    assert_eq!(p2[13], (27, 25));
    let p4 = reads(&stages[3]);
    assert_eq!(&p4[..5], &[(4, 3), (5, 3), (6, 3), (7, 3), (12, 11)]);
    assert_eq!(*p4.last().unwrap(), (29, 27));
    let p8 = reads(&stages[4]);
    assert_eq!(p8.len(), 14);
    assert_eq!(
        &p8[8..],
        &[(24, 23), (25, 23), (26, 23), (27, 23), (28, 23), (29, 23)]
    );
    let p16 = reads(&stages[5]);
    assert_eq!(p16, (16..30).map(|t| (t, 15)).collect::<Vec<_>>());
    // Sleeping threads: the ones with bit p clear.
    let sleeping: Vec<u64> = stages[1]["sleeping"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(sleeping, (0..30).step_by(2).collect::<Vec<u64>>());
    assert_eq!(r.output.bits, (1..=30).map(|i| 2 * i).collect::<Vec<u32>>());
    // The GPU's array after every phase is the model's.
    let model = model::ladder(DType::U32, &[2; 30]);
    for (s, m) in r.stages[1..].iter().zip(model) {
        assert_eq!(s.data.bits, m.data, "{}", s.label);
    }
}

#[test]
fn folded_gives_suffix_sums_for_33_ones_and_mirror_gives_prefix_sums() {
    let ones = Data::from_u32(&[1; 33]);
    let r = check("folded", &Options::default(), ones.clone(), true);
    assert_eq!(r.output.bits, (1..=33).rev().collect::<Vec<u32>>());
    assert_eq!(r.extra["form"], "suffix sums");
    let phases: Vec<u64> = r.stages[1..]
        .iter()
        .map(|s| s.to_json()["phase"].as_u64().unwrap())
        .collect();
    assert_eq!(phases, [32, 16, 8, 4, 2, 1]);
    // The seed's printout after fphase 32 and fphase 16.
    let mut after32 = vec![1u32; 33];
    after32[0] = 2;
    assert_eq!(r.stages[1].data.bits, after32);
    assert_eq!(&r.stages[2].data.bits[..3], &[3, 2, 2]);
    assert_eq!(r.stages[2].data.bits[17], 1);
    let mirror = Options {
        mirror: true,
        ..Default::default()
    };
    let m = check("folded", &mirror, ones, true);
    assert_eq!(m.output.bits, (1..=33).collect::<Vec<u32>>());
    assert_eq!(m.extra["form"], "prefix sums");
    // Random inputs, traced: every phase checked against the model on the GPU side too.
    for n in [2usize, 5, 16, 33, 100, 1000] {
        for o in [Options::default(), mirror.clone()] {
            let x = random_data(n, DType::I32, n as u64, false);
            let r = check("folded", &o, x.clone(), true);
            let model = model::folded(DType::I32, &x.bits, o.mirror);
            assert_eq!(r.stages.len(), model.len() + 1);
            for (s, ph) in r.stages[1..].iter().zip(model) {
                assert_eq!(s.data.bits, ph.data);
            }
        }
    }
}

#[test]
fn traces_match_the_model_stage_by_stage() {
    for n in [1usize, 3, 30, 33, 100, 1000, 5000] {
        for dtype in DType::ALL {
            let x = random_data(n, dtype, n as u64 + 9, false);
            for v in ALL {
                for o in [
                    Options::default(),
                    Options {
                        exclusive: true,
                        ..small_tiles()
                    },
                ] {
                    let r = check(v, &o, x.clone(), true);
                    assert!(!r.stages.is_empty(), "{v}");
                    assert_eq!(r.stages[0].data, x, "stage 0 is the input");
                }
            }
        }
    }
}

#[test]
fn blelloch_trace_has_the_tree() {
    let x = Data::from_u32(&(1..=13).collect::<Vec<u32>>());
    let r = check("blelloch", &Options::default(), x, true);
    let j = r.to_json(true);
    let st = j["stages"].as_array().unwrap();
    let dirs: Vec<&str> = st[1..]
        .iter()
        .map(|s| s["direction"].as_str().unwrap())
        .collect();
    assert_eq!(
        dirs,
        [
            "up",
            "up",
            "up",
            "up",
            "clear",
            "down",
            "down",
            "down",
            "down",
            "add-input"
        ]
    );
    let levels: Vec<u64> = st[1..5]
        .iter()
        .map(|s| s["level"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [1, 2, 3, 4]);
    assert_eq!(st[6]["level"], 4);
    assert_eq!(st[1]["padded_to"], 16);
    // The root's node at the top level: heap index 0, children 1 and 2; array positions 7 and 15.
    assert_eq!(st[4]["nodes"][0], serde_json::json!([0, 0, 1, 2, 7, 15]));
    // Level 1, node j = 3: heap index 7 + 3 = 10, children 21, 22.
    assert_eq!(st[1]["nodes"][3], serde_json::json!([3, 10, 21, 22, 6, 7]));
    assert_eq!(reads(&st[1])[0], (1, 0));
    // After the down-sweep: the exclusive scan of the padded array.
    let excl = model::sequential(DType::U32, &r.input.bits, true);
    assert_eq!(&r.stages[9].data.bits[..13], &excl[..]);
}

#[test]
fn decoupled_fallback_path_is_correct() {
    // spin = 0: every predecessor that is not looked up is reduced by the waiting workgroup.
    let o = Options {
        spin: 0,
        ..small_tiles()
    };
    for (k, n) in [257usize, 5000, 12_345].into_iter().enumerate() {
        for dtype in DType::ALL {
            let x = random_data(n, dtype, 30 + k as u64, false);
            let r = check("decoupled", &o, x.clone(), true);
            let tiles = r.extra["tiles"].as_u64().unwrap();
            assert_eq!(
                r.extra["fallbacks"].as_u64(),
                Some(tiles * (tiles - 1) / 2),
                "with spin 0 tile k reduces all k predecessors itself"
            );
            let ex = Options {
                exclusive: true,
                ..o.clone()
            };
            check("decoupled", &ex, x, false);
        }
    }
    // spin = 1: a predecessor window that shows no progress once triggers the fallback at once.
    let quick = Options {
        spin: 1,
        ..small_tiles()
    };
    for dtype in DType::ALL {
        let x = random_data(60_000, dtype, 77, false);
        check("decoupled", &quick, x, true);
    }
    // A normal run with many tiles: look-back steps recorded for every tile after the first.
    let x = random_data(100_000, DType::U32, 5, false);
    let r = check("decoupled", &small_tiles(), x, true);
    let tiles = r.extra["tiles"].as_u64().unwrap();
    assert_eq!(tiles, 100_000u64.div_ceil(256));
    assert!(r.extra["lookback_steps"].as_u64().unwrap() >= tiles - 1);
}

#[test]
fn errors_are_clear() {
    let mirror = Options {
        mirror: true,
        ..Default::default()
    };
    let e = try_run(&scan(mirror), "ladder", Data::from_u32(&[1, 2]), false).unwrap_err();
    assert!(e.to_string().contains("--mirror"), "{e}");
    for (wg, per, what) in [
        (3, 1, "power of two"),
        (1 << 20, 1, "power of two"),
        (32, 17, "per-thread"),
    ] {
        let o = Options {
            workgroup_size: wg,
            per_thread: per,
            ..Default::default()
        };
        let e = try_run(&scan(o), "decoupled", Data::from_u32(&[1, 2]), false).unwrap_err();
        assert!(e.to_string().contains(what), "{e}");
    }
    // The workgroup-memory tile scan holds the tile in workgroup memory (the subgroup one does not).
    let big = Options {
        workgroup_size: 256,
        per_thread: 16,
        shared_scan: true,
        ..Default::default()
    };
    if (gpu().limits.max_compute_workgroup_storage_size as usize) < 256 * 16 * 16 {
        let e = try_run(&scan(big), "decoupled", Data::from_u32(&[1, 2]), false).unwrap_err();
        assert!(
            e.to_string().contains("max_compute_workgroup_storage_size"),
            "{e}"
        );
    }
    let e = try_run(
        &scan(Options::default()),
        "nope",
        Data::from_u32(&[1]),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown variant"), "{e}");
}

#[test]
fn cli_runs_the_seed_example() {
    let j = run_ok(&["run", "scan", "--variant", "ladder", "--trace", "--json"]);
    assert_eq!(j["n"], 30);
    assert_eq!(j["verified"], true);
    assert_eq!(j["output"][29], 60);
    assert_eq!(j["stages"].as_array().unwrap().len(), 6);
    let j = run_ok(&[
        "run",
        "scan",
        "--variant",
        "folded",
        "--mirror",
        "--exclusive",
        "--n",
        "33",
        "--fill",
        "iota",
        "--json",
    ]);
    assert_eq!(j["output"][32], 31 * 32 / 2);
}

#[test]
fn the_view_draws_every_variant_and_picks() {
    use egui_kittest::Harness;
    use stagewise::ui::views::{self, ViewState};
    let cases: Vec<(&str, Options, Data)> = vec![
        ("ladder", Options::default(), Data::from_u32(&[2; 30])),
        ("folded", Options::default(), Data::from_u32(&[1; 33])),
        (
            "hillis-steele",
            Options::default(),
            Data::from_u32(&[1; 16]),
        ),
        (
            "blelloch",
            Options::default(),
            Data::from_u32(&(1..=13).collect::<Vec<_>>()),
        ),
        (
            "reduce-then-scan",
            small_tiles(),
            random_data(2000, DType::U32, 1, false),
        ),
        (
            "decoupled",
            small_tiles(),
            random_data(2000, DType::U32, 2, false),
        ),
        ("sequential", Options::default(), Data::from_u32(&[3; 20])),
        (
            "ladder",
            Options {
                exclusive: true,
                ..Default::default()
            },
            random_data(1500, DType::F32, 3, false),
        ),
    ];
    for (k, (v, o, x)) in cases.into_iter().enumerate() {
        let r = run(&scan(o), v, x, true);
        for stage in [1, r.stages.len() / 2, r.stages.len() - 1] {
            let mut state = ViewState {
                scan_pick: Some(5),
                ..Default::default()
            };
            let rr = r.clone();
            let mut h = Harness::builder()
                .with_size([1400.0, 900.0])
                .wgpu()
                .build_ui(move |ui| views::show(ui, &rr, stage, k as u64, &mut state));
            h.run();
            if std::env::var_os("SCAN_VIEW_PNG").is_some() {
                let img = h.render().expect("render");
                img.save(format!("target/scan_view_{v}_{k}_{stage}.png"))
                    .unwrap();
            }
        }
    }
}

#[test]
fn grids_beyond_65535_workgroups() {
    // Phase kernels: 2^24 + 5 threads = 65537 workgroups of 256 -> a 2D grid.
    let x = random_data((1 << 24) + 5, DType::U32, 11, false);
    check("ladder", &Options::default(), x, false);
    // Tiled kernels: 64-element tiles, 70 000 tiles -> a 2D grid; spare workgroups exit.
    let tiny = Options {
        workgroup_size: 16,
        per_thread: 1,
        ..Default::default()
    };
    let x = random_data(70_000 * 64 - 3, DType::I32, 12, false);
    let r = check("decoupled", &tiny, x.clone(), true);
    assert_eq!(r.extra["tiles"], 70_000);
    check("reduce-then-scan", &tiny, x, false);
}

/// Both decoupled tile scans: the subgroup one (registers, subgroupInclusiveAdd; used where the
/// adapter has Features::SUBGROUP) and the workgroup-memory one (--shared-scan), against the model,
/// for odd sizes, several tile shapes (including workgroups narrower than a subgroup), exclusive,
/// every dtype, integer wraparound, and the fallback path.
#[test]
fn decoupled_subgroup_and_shared_tile_scans_match_the_model() {
    let g = gpu();
    let has_sg = g.has_subgroups();
    for shared in [false, true] {
        let r = check(
            "decoupled",
            &Options {
                shared_scan: shared,
                ..Default::default()
            },
            random_data(1000, DType::U32, 1, false),
            false,
        );
        let want = if has_sg && !shared {
            "subgroup"
        } else {
            "workgroup-memory"
        };
        assert_eq!(r.extra["tile_scan"].as_str(), Some(want));
        for (k, (wg, per, n)) in [
            (256u32, 8u32, 100_003usize),
            (256, 16, 70_001),
            (64, 3, 9_999),
            (32, 1, 4_097),
            (8, 2, 1_001),
            (4, 1, 333),
            (2, 5, 257),
            (128, 7, 1),
            (128, 7, 3),
        ]
        .into_iter()
        .enumerate()
        {
            if shared && wg == 256 {
                continue; // the workgroup-memory tile of 256 threads fits only with fewer vec4
            }
            for dtype in DType::ALL {
                let x = random_data(n, dtype, 500 + k as u64, false);
                for exclusive in [false, true] {
                    let o = Options {
                        workgroup_size: wg,
                        per_thread: per,
                        exclusive,
                        shared_scan: shared,
                        ..Default::default()
                    };
                    try_check("decoupled", &o, x.clone(), false);
                }
            }
        }
        // u32 wraparound: every element near the top, sums wrap many times.
        let big: Vec<u32> = (0..50_000u32).map(|i| u32::MAX - (i % 7)).collect();
        let o = Options {
            workgroup_size: 32,
            per_thread: 2,
            shared_scan: shared,
            ..Default::default()
        };
        check("decoupled", &o, Data::from_u32(&big), false);
        // The fallback path with each tile scan.
        let o = Options {
            spin: 0,
            workgroup_size: 16,
            per_thread: 2,
            shared_scan: shared,
            ..Default::default()
        };
        let r = check(
            "decoupled",
            &o,
            random_data(3_000, DType::F32, 9, false),
            true,
        );
        let tiles = r.extra["tiles"].as_u64().unwrap();
        assert_eq!(r.extra["fallbacks"].as_u64(), Some(tiles * (tiles - 1) / 2));
    }
}

/// `--tile-order dispatch` (subgroup path): tile indices from the workgroup id instead of the counter.
/// Correct whatever order the workgroups run in: with spin 0 every predecessor is reduced by the
/// fallback, with the default spin the look-back waits or falls back.
/// Sizes stay below lavapipe's loop limit: llvmpipe silently ends a shader's loops after ~65535
/// iterations in all (found here: with spin 0, tile 16385 — 16385 fallbacks of ~4 loop iterations
/// each — came out wrong; the H100 has no such limit). lavapipe runs the grid in chunks per CPU
/// thread, so in dispatch order a tile may spin on and fall back on hundreds of predecessors.
#[test]
fn decoupled_in_dispatch_order_matches_the_model() {
    // Without subgroups the workgroup-memory tile scan ignores the option: still checked.
    for (k, (wg, per, n, spin)) in [
        (512u32, 4u32, 300_001usize, 256u32),
        (64, 2, 100_003, 256),
        (8, 1, 40_000, 1),
        (16, 2, 2_000, 0),
        (32, 1, 40_000, 256),
    ]
    .into_iter()
    .enumerate()
    {
        for dtype in DType::ALL {
            let x = random_data(n, dtype, 900 + k as u64, false);
            let o = Options {
                workgroup_size: wg,
                per_thread: per,
                spin,
                tile_order: TileOrder::Dispatch,
                ..Default::default()
            };
            let Some(r) = try_check("decoupled", &o, x.clone(), spin == 0) else {
                continue;
            };
            if spin == 0 {
                let tiles = r.extra["tiles"].as_u64().unwrap();
                assert_eq!(r.extra["fallbacks"].as_u64(), Some(tiles * (tiles - 1) / 2));
            }
            let ex = Options {
                exclusive: true,
                ..o
            };
            check("decoupled", &ex, x, false);
        }
    }
}

/// The subgroup kernel has no clear pass: alternate runs publish in alternate halves of the
/// status buffer, each tile zeroing its entry of the other half, and the ticket count goes back
/// to 0 after every second run. One plan run again and again (as timed mode does) must be right
/// every time, in both tile orders, with spare workgroups in the grid, and leave the other half
/// clean for the next run.
#[test]
fn decoupled_runs_again_and_again_without_a_clear_pass() {
    let g = gpu();
    for (k, (wg, per, n, order)) in [
        (512u32, 4u32, 200_003usize, TileOrder::Dispatch),
        (32, 2, 30_001, TileOrder::Counter),
        (16, 1, 70_000 * 64 - 3, TileOrder::Counter), // a 2D grid with spare workgroups
        (64, 1, 4_096, TileOrder::Counter),
        (8, 1, 1, TileOrder::Dispatch),
    ]
    .into_iter()
    .enumerate()
    {
        let x = random_data(n, DType::U32, 1200 + k as u64, false);
        let want = model::sequential(DType::U32, &x.bits, false);
        let o = Options {
            workgroup_size: wg,
            per_thread: per,
            tile_order: order,
            ..Default::default()
        };
        let Some(runs) = unless_past_limits(
            o.decoupled_runs(g, DType::U32, &x.bits, 5),
            &format!("{wg}x{per} n={n}"),
        ) else {
            continue;
        };
        for (i, r) in runs.iter().enumerate() {
            let what = format!("{wg}x{per} n={n} {order:?} run {i}");
            assert_eq!(r.output.len(), n, "{what}");
            if let Some(j) = (0..n).find(|&j| r.output[j] != want[j]) {
                panic!(
                    "{what}: element {j} is {} instead of {}",
                    r.output[j], want[j]
                );
            }
            if !g.has_subgroups() {
                continue; // the workgroup-memory kernel clears its one half in a pass
            }
            let t = r.tiles;
            assert_eq!(r.status.len(), 1 + 4 * t, "{what}");
            let tickets = if i % 2 == 0 { r.workgroups as u32 } else { 0 };
            assert_eq!(r.status[0], tickets, "{what}: ticket count");
            let te = (wg * per * 4) as usize;
            let (mine, other) = if i % 2 == 0 {
                (1, 1 + 2 * t)
            } else {
                (1 + 2 * t, 1)
            };
            for tile in 0..t {
                let (lo, hi) = (r.status[mine + 2 * tile], r.status[mine + 2 * tile + 1]);
                assert_eq!(
                    (lo >> 16, hi >> 16),
                    (2, 2),
                    "{what}: tile {tile} not INCLUSIVE"
                );
                let v = (lo & 0xffff) | (hi << 16);
                assert_eq!(v, want[((tile + 1) * te).min(n) - 1], "{what}: tile {tile}");
                let o2 = &r.status[other + 2 * tile..other + 2 * tile + 2];
                assert_eq!(
                    o2,
                    [0, 0],
                    "{what}: tile {tile} of the other half not cleaned"
                );
            }
        }
    }
}

#[test]
fn loops_stay_within_the_drivers_loop_limit() {
    // lavapipe (llvmpipe) ends every loop of an invocation once it has run 65535 iterations in
    // all, silently. There the decoupled look-back's spinning is bounded by a budget, and what
    // one invocation would loop past the limit is refused: the sequential scan's one thread
    // (8 vec4 a round: 65535 rounds right, 65536 wrong) and reduce-then-scan's one-workgroup pass
    // over the tile sums. Adapters without such a limit run every case.
    let g = gpu();
    for (k, shared) in [false, true].into_iter().enumerate() {
        let o = Options {
            spin: 1 << 20,
            shared_scan: shared,
            tile_order: TileOrder::Counter,
            ..Default::default()
        };
        check(
            "decoupled",
            &o,
            random_data(1 << 20, DType::U32, 60 + k as u64, false),
            false,
        );
    }
    let limited = g.loop_limit().is_some();
    let seq_most = 65_535 * 32;
    let rts = Options {
        workgroup_size: 1,
        per_thread: 1,
        ..Default::default()
    };
    for (variant, o, n, refused) in [
        ("sequential", Options::default(), seq_most, false),
        ("sequential", Options::default(), seq_most + 1, limited),
        ("reduce-then-scan", rts.clone(), 120_000, false),
        ("reduce-then-scan", rts, 131_072, limited),
    ] {
        let x = random_data(n, DType::I32, n as u64, false);
        if refused {
            let e = try_run(&scan(o), variant, x, false)
                .unwrap_err()
                .to_string();
            assert!(e.contains("llvmpipe"), "{variant} n={n}: {e}");
        } else {
            check(variant, &o, x, false);
        }
    }
}
