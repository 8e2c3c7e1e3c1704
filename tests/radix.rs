//! Radix sort on the GPU against the CPU sort: both variants, every dtype and order, random,
//! duplicate-heavy, all-equal, sorted, reversed and special f32 keys, odd lengths from 1 to 10^6,
//! key-value stability, classic == onesweep bit for bit, every --digit-bits, the look-back's
//! fallback and its reset between runs of one plan, traces checked stage by stage, bad options.
mod common;

use common::{bin, gpu, random_data, run, run_ok, try_run};
use stagewise::algo::radix::trace::{RadixNote, StepKind};
use stagewise::algo::radix::{self, Options, TileOrder, Values, model};
use stagewise::algo::{AlgoOptions, RunResult};
use stagewise::data::{DType, Data};

const VARIANTS: [&str; 2] = ["onesweep", "classic"];

/// The adapter's largest workgroup that radix accepts: a multiple of 32, at most 1024.
fn max_workgroup() -> u32 {
    let l = &gpu().limits;
    let max = l
        .max_compute_invocations_per_workgroup
        .min(l.max_compute_workgroup_size_x)
        .min(1024);
    max / 32 * 32
}

fn radix(o: Options) -> AlgoOptions {
    AlgoOptions::Radix(o)
}

/// Small tiles (32 threads × 2 keys) so that even short inputs span many tiles.
fn small() -> Options {
    Options {
        workgroup_size: 32,
        keys_per_thread: 2,
        ..Default::default()
    }
}

fn values_of(o: &Options, x: &Data) -> Vec<u32> {
    match o.values {
        Values::None => Vec::new(),
        Values::Iota => (0..x.len() as u32).collect(),
        Values::Input => x.bits.clone(),
    }
}

/// Run and compare keys (and values) with the CPU's stable sort.
fn check(variant: &str, o: &Options, x: &Data, trace: bool) -> RunResult {
    let what = format!("{variant} n={} {} {o:?}", x.len(), x.dtype);
    let r = run(&radix(o.clone()), variant, x.clone(), trace);
    assert!(r.verified, "{what}: {:?}", r.mismatch);
    let vals = values_of(o, x);
    let (k, v) = model::sort(x.dtype, o.descending, &x.bits, &vals);
    assert_eq!(r.output.bits, k, "{what}: keys");
    if o.values != Values::None {
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

fn dup_heavy(n: usize, seed: u64) -> Data {
    let x = random_data(n, DType::U32, seed, false);
    Data::new(DType::U32, x.bits.iter().map(|b| b % 7).collect())
}

#[test]
fn many_small_lengths_both_variants_every_dtype() {
    let _ = gpu();
    let sizes = [
        1usize, 2, 3, 5, 7, 16, 31, 33, 63, 64, 65, 127, 129, 255, 257, 1000, 1021,
    ];
    for (k, &n) in sizes.iter().enumerate() {
        for dtype in [DType::U32, DType::I32, DType::F32] {
            let x = random_data(n, dtype, 10 * k as u64 + dtype as u64, true);
            for v in VARIANTS {
                check(v, &small(), &x, false);
            }
        }
    }
}

#[test]
fn shapes_of_input() {
    let n = 3001;
    let sorted = Data::new(
        DType::I32,
        (0..n as i32).map(|i| (i - 1500) as u32).collect(),
    );
    let reversed = Data::new(DType::I32, sorted.bits.iter().rev().copied().collect());
    let inputs = [
        dup_heavy(n, 1),
        Data::new(DType::U32, vec![42; n]),
        sorted,
        reversed,
        random_data(n, DType::U32, 2, false),
    ];
    for x in &inputs {
        for v in VARIANTS {
            for desc in [false, true] {
                let o = Options {
                    descending: desc,
                    values: Values::Iota,
                    ..small()
                };
                check(v, &o, x, false);
                check(
                    v,
                    &Options {
                        descending: desc,
                        ..Default::default()
                    },
                    x,
                    false,
                );
            }
        }
    }
}

#[test]
fn f32_specials_total_order() {
    let specials: [u32; 10] = [
        0x7fc0_0000, // +NaN
        0xffc0_0000, // -NaN
        0x7f80_0001, // +NaN, other payload
        0x7f80_0000, // +inf
        0xff80_0000, // -inf
        0x8000_0000, // -0
        0,           // +0
        1.5f32.to_bits(),
        (-1.5f32).to_bits(),
        f32::MIN_POSITIVE.to_bits(),
    ];
    let bits: Vec<u32> = (0..997).map(|i| specials[(i * 7) % 10]).collect();
    let x = Data::new(DType::F32, bits);
    for v in VARIANTS {
        for desc in [false, true] {
            let o = Options {
                descending: desc,
                values: Values::Iota,
                ..small()
            };
            let r = check(v, &o, &x, false);
            if !desc {
                assert_eq!(r.output.bits[0], 0xffc0_0000, "-NaN first");
                assert_eq!(
                    *r.output.bits.last().unwrap(),
                    0x7fc0_0000,
                    "largest +NaN last"
                );
            }
        }
        check(v, &small(), &random_data(5000, DType::F32, 9, true), false);
    }
}

#[test]
fn prefetching_tiles_ahead_sorts_the_same() {
    // CPU adapters do not prefetch by default: the path runs here when asked for. Two prefetch
    // loads a thread (20 keys: the second past the tile for some threads) and one (2 keys), tiles
    // ahead from 1 to past the last tile, keys only and key-value, every dtype (the lens test
    // counts what the prefetch reads).
    let inputs = [
        (1usize, DType::U32, Values::None),
        (5_000, DType::U32, Values::None),
        (20_011, DType::F32, Values::Iota),
        (9_999, DType::I32, Values::Input),
    ];
    for (wg, kpt, ahead, take) in [(32, 20, 1, 4), (32, 20, 1000, 2), (64, 2, 3, 4)] {
        for (k, &(n, dtype, values)) in inputs.iter().take(take).enumerate() {
            let o = Options {
                workgroup_size: wg,
                keys_per_thread: kpt,
                prefetch: Some(ahead),
                values,
                ..Default::default()
            };
            check(
                "onesweep",
                &o,
                &random_data(n, dtype, 40 + k as u64, true),
                false,
            );
        }
    }
}

#[test]
fn large_odd_lengths() {
    // Default tiles; a few large sizes (lavapipe is slow), up to 10^6.
    for (k, &n) in [65_537usize, 333_333, 1_000_000].iter().enumerate() {
        let x = random_data(n, DType::U32, 100 + k as u64, false);
        let a = check("onesweep", &Options::default(), &x, false);
        if n == 1_000_000 {
            let f = random_data(n, DType::F32, 7, true);
            check(
                "onesweep",
                &Options {
                    descending: true,
                    ..Default::default()
                },
                &f,
                false,
            );
        } else {
            let b = check("classic", &Options::default(), &x, false);
            assert_eq!(a.output.bits, b.output.bits);
        }
    }
}

#[test]
fn key_value_is_stable() {
    // Few distinct keys: stability decides where every value goes.
    for v in VARIANTS {
        for bits in [1u32, 3, 8] {
            for desc in [false, true] {
                let x = dup_heavy(4099, bits as u64);
                let o = Options {
                    digit_bits: bits,
                    descending: desc,
                    values: Values::Iota,
                    ..small()
                };
                let r = check(v, &o, &x, false);
                let vals: Vec<u64> = r.extra["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect();
                for i in 1..vals.len() {
                    if r.output.bits[i] == r.output.bits[i - 1] {
                        assert!(vals[i] > vals[i - 1], "{v} bits {bits}: unstable at {i}");
                    }
                }
            }
        }
        let x = random_data(2000, DType::I32, 5, false);
        let o = Options {
            values: Values::Input,
            ..small()
        };
        check(v, &o, &x, false);
    }
}

#[test]
fn every_digit_width_and_variants_agree_bit_for_bit() {
    let x = random_data(2500, DType::F32, 77, true);
    for bits in 1..=8 {
        let o = Options {
            digit_bits: bits,
            values: Values::Iota,
            ..small()
        };
        let a = check("onesweep", &o, &x, false);
        let b = check("classic", &o, &x, false);
        assert_eq!(a.output.bits, b.output.bits, "bits {bits}");
        assert_eq!(a.extra["values"], b.extra["values"], "bits {bits}");
    }
}

#[test]
fn workgroup_memory_ranking_matches_subgroups() {
    let x = random_data(3000, DType::U32, 3, false);
    for v in VARIANTS {
        for bits in [2, 5, 8] {
            let o = Options {
                digit_bits: bits,
                values: Values::Iota,
                ..small()
            };
            let a = check(v, &o, &x, false);
            let b = check(
                v,
                &Options {
                    shared_rank: true,
                    ..o
                },
                &x,
                false,
            );
            assert_eq!(a.output.bits, b.output.bits);
            assert_eq!(b.extra["rank"], "workgroup memory");
        }
    }
}

#[test]
fn lookback_fallback_and_reset_between_runs() {
    let g = gpu();
    let x = random_data(20_011, DType::U32, 11, false);
    // spin 0: every tile counts its predecessors itself (the fallback path). Keys only and
    // key-value sorts start the walk at different places (before the ranking / after the
    // exchange): both.
    for values in [Values::None, Values::Iota] {
        let o = Options {
            spin: 0,
            values,
            ..small()
        };
        let r = check("onesweep", &o, &x, true);
        assert!(r.extra["fallbacks"].as_u64().unwrap() > 0, "{values:?}");
    }
    // One plan run on new keys each time (and on the first keys again): no run may leave counts,
    // tickets or look-back statuses behind (nothing clears the state between runs). Few distinct
    // keys in one input, so the counts differ from run to run.
    let y = random_data(20_011, DType::U32, 12, false);
    let few: Vec<u32> = random_data(20_011, DType::U32, 13, false)
        .bits
        .iter()
        .map(|b| b % 5 * 0x0101_0101)
        .collect();
    let inputs: [&[u32]; 4] = [&x.bits, &y.bits, &few, &x.bits];
    let iota: Vec<u32> = (0..20_011).collect();
    let want: Vec<_> = inputs
        .iter()
        .map(|k| model::sort(DType::U32, false, k, &iota))
        .collect();
    for o in [
        Options {
            values: Values::Iota,
            ..small()
        },
        Options {
            spin: 1,
            values: Values::Iota,
            ..small()
        },
        Options { spin: 1, ..small() },
        // Tiles of 128 keys: within what lavapipe's loop limit allows in dispatch order.
        Options {
            tile_order: TileOrder::Dispatch,
            keys_per_thread: 4,
            ..small()
        },
        Options::default(),
        Options {
            values: Values::Iota,
            ..Default::default()
        },
    ] {
        let runs = o
            .repeated_runs(g, radix::Variant::Onesweep, DType::U32, &inputs)
            .unwrap();
        for (i, ((k, v), (wk, wv))) in runs.iter().zip(&want).enumerate() {
            assert_eq!(k, wk, "{o:?} run {i}: keys");
            if o.has_values() {
                assert_eq!(v, wv, "{o:?} run {i}: values");
            } else {
                assert!(v.is_empty(), "{o:?} run {i}: values of a keys-only sort");
            }
        }
    }
    let runs = small()
        .repeated_runs(g, radix::Variant::Classic, DType::U32, &inputs)
        .unwrap();
    for (i, ((k, _), (wk, _))) in runs.iter().zip(&want).enumerate() {
        assert_eq!(k, wk, "classic run {i}");
    }
}

#[test]
fn traces_match_the_model_and_carry_typed_notes() {
    for v in VARIANTS {
        let x = random_data(16, DType::U32, 4, false);
        let x = Data::new(DType::U32, x.bits.iter().map(|b| b % 16).collect());
        let o = Options {
            digit_bits: 2,
            workgroup_size: 32,
            keys_per_thread: 1,
            values: Values::Iota,
            ..Default::default()
        };
        let r = check(v, &o, &x, true);
        let notes: Vec<RadixNote> = r.stages.iter().map(|s| RadixNote::of(s).unwrap()).collect();
        let scatters: Vec<&RadixNote> = notes
            .iter()
            .filter(|n| n.kind == StepKind::Scatter)
            .collect();
        assert_eq!(scatters.len(), 16, "{v}: 32 / 2 digits");
        let steps = model::steps(
            DType::U32,
            false,
            2,
            32,
            &x.bits,
            &(0..16).collect::<Vec<u32>>(),
        );
        for (s, m) in scatters.iter().zip(&steps) {
            assert_eq!(s.flow, m.flow);
        }
        let per_digit = if v == "classic" { 3 } else { 1 };
        let head = if v == "classic" { 1 } else { 3 };
        assert_eq!(r.stages.len(), head + 16 * per_digit, "{v}");
        // Many tiles: the per-tile arrays and the look-back come back from the GPU too.
        let x = random_data(700, DType::I32, 8, false);
        let r = check(
            v,
            &Options {
                digit_bits: 4,
                ..small()
            },
            &x,
            true,
        );
        let last = RadixNote::of(r.stages.last().unwrap()).unwrap();
        assert_eq!(last.tiles, 11);
        assert_eq!(last.flow.tile_hist.len(), 11 * 16);
        // Digit widths that do not divide 32: the top digit has fewer bits, so the pads of the
        // partial last tile fall in a bucket below R - 1 (its traced counts once came out wrong).
        for bits in [3, 5, 7] {
            let x = random_data(1001, DType::U32, bits as u64, false);
            let o = Options {
                digit_bits: bits,
                ..small()
            };
            check(v, &o, &x, true);
        }
    }
}

#[test]
fn errors_are_clear() {
    let x = Data::from_u32(&[3, 1, 2]);
    // (variant, options, what the error names); onesweep's own options are refused by classic.
    for (variant, o, what) in [
        (
            "onesweep",
            Options {
                look_back_window: 33,
                ..Default::default()
            },
            "--look-back-window",
        ),
        (
            "classic",
            Options {
                look_back_window: 4,
                ..Default::default()
            },
            "--look-back-window",
        ),
        (
            "onesweep",
            Options {
                digit_bits: 0,
                ..Default::default()
            },
            "--digit-bits",
        ),
        (
            "onesweep",
            Options {
                digit_bits: 9,
                ..Default::default()
            },
            "--digit-bits",
        ),
        (
            "onesweep",
            Options {
                workgroup_size: 48,
                ..Default::default()
            },
            "--workgroup-size",
        ),
        (
            "onesweep",
            Options {
                workgroup_size: 16,
                ..Default::default()
            },
            "--workgroup-size",
        ),
        (
            "onesweep",
            Options {
                keys_per_thread: 33,
                ..Default::default()
            },
            "--keys-per-thread",
        ),
        (
            // The adapter's largest workgroup with 32 keys and a value each: 256 KiB at 1024
            // threads, past any adapter's workgroup memory (32 KiB on lavapipe, 48 on an H200).
            "onesweep",
            Options {
                workgroup_size: max_workgroup(),
                keys_per_thread: 32,
                values: Values::Iota,
                ..Default::default()
            },
            "max_compute_workgroup_storage_size",
        ),
        (
            "classic",
            Options {
                spin: 3,
                ..Default::default()
            },
            "--spin",
        ),
        (
            "classic",
            Options {
                prefetch: Some(128),
                ..Default::default()
            },
            "--prefetch",
        ),
    ] {
        let e = try_run(&radix(o), variant, x.clone(), false).unwrap_err();
        assert!(e.to_string().contains(what), "{variant}: {e}");
    }
    let e = try_run(&radix(Options::default()), "nope", x.clone(), false).unwrap_err();
    assert!(e.to_string().contains("unknown variant"), "{e}");
    let e = try_run(
        &radix(Options::default()),
        "onesweep",
        Data::from_u32(&[]),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
}

#[test]
fn cli_runs_and_benches() {
    let j = run_ok(&[
        "run",
        "radix",
        "--n",
        "1001",
        "--dtype",
        "f32",
        "--descending",
        "--values",
        "iota",
        "--json",
    ]);
    assert_eq!(j["verified"], true);
    assert_eq!(j["values"].as_array().unwrap().len(), 1001);
    let out = bin()
        .args([
            "bench",
            "radix",
            "--variant",
            "onesweep",
            "--log-n",
            "12..13",
            "--reps",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = bin()
        .args(["run", "radix", "--digit-bits", "9", "--n", "5"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--digit-bits"), "{err}");
    assert!(err.lines().count() <= 2, "{err}");
}

#[test]
fn the_view_draws_every_kind_of_stage() {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use stagewise::ui::views::{self, ViewState};
    for v in VARIANTS {
        let x = Data::from_u32(&[13, 2, 7, 2, 9, 0, 15, 4, 4, 11, 6, 1, 8, 3, 12, 5]);
        let o = Options {
            digit_bits: 2,
            workgroup_size: 32,
            keys_per_thread: 1,
            ..Default::default()
        };
        let r = check(v, &o, &x, true);
        for stage in 0..r.stages.len().min(8) {
            let rr = r.clone();
            let mut state = ViewState::default();
            let mut h = Harness::builder()
                .with_size([1500.0, 900.0])
                .wgpu()
                .build_ui(move |ui| views::show(ui, &rr, stage, 1, &mut state));
            h.run();
            let label = &r.stages[stage].label;
            h.get_by_label_contains(&format!("— {label}"));
            if let Ok(p) = std::env::var("RADIX_VIEW_PNG") {
                let img = h.render().expect("render");
                img.save(format!("{p}/radix_{v}_{stage}.png")).unwrap();
            }
        }
    }
}

#[test]
fn workgroups_of_any_multiple_of_32_threads_sort() {
    // The generated kernels assume no power of two: 96, 160 and 192 threads (12, 20 and 24 warps
    // of 8 on lavapipe), odd keys per thread, both variants, with values, partial last tiles.
    for (wg, kpt) in [(96, 3), (160, 5), (192, 7)] {
        for variant in VARIANTS {
            let o = Options {
                workgroup_size: wg,
                keys_per_thread: kpt,
                values: Values::Iota,
                ..Default::default()
            };
            let r = check(
                variant,
                &o,
                &random_data(20_011, DType::F32, wg as u64, true),
                false,
            );
            assert_eq!(r.extra["tile"], wg * kpt);
        }
    }
}

#[test]
fn auto_keys_per_thread_shrinks_to_fit_workgroup_memory() {
    // Auto picks the largest tile of its list that fits the adapter's workgroup memory (on
    // lavapipe, 32 KiB with 8-lane subgroups, the warp counters take most of it) and it sorts.
    let o = Options {
        workgroup_size: 96,
        values: Values::Iota,
        ..Default::default()
    };
    let shape = o.shape(gpu()).unwrap();
    assert!(shape.shared_bytes() <= gpu().limits.max_compute_workgroup_storage_size);
    let r = check(
        "onesweep",
        &o,
        &random_data(5000, DType::U32, 21, false),
        false,
    );
    assert_eq!(r.extra["keys_per_thread"], shape.kpt);
}

#[test]
fn more_than_65535_tiles_use_a_2d_grid() {
    // 32-key tiles: 65538 tiles, a 2D grid whose spare workgroups take tickets past the last tile
    // and return. 4-bit digits keep the look-back state within lavapipe's binding limit.
    let x = random_data(65_537 * 32 + 5, DType::U32, 31, false);
    let o = Options {
        workgroup_size: 32,
        keys_per_thread: 1,
        digit_bits: 4,
        ..Default::default()
    };
    let r = check("onesweep", &o, &x, false);
    assert_eq!(r.extra["tiles"], 65_538);
}

#[test]
fn dispatch_tile_order_matches_the_model_and_runs_again() {
    // Tile ids from workgroup ids: a tile may spin on a predecessor that has not started, then
    // count it itself. Few tiles: lavapipe runs the grid in chunks per thread.
    let g = gpu();
    let x = random_data(3001, DType::F32, 41, true);
    let o = Options {
        tile_order: TileOrder::Dispatch,
        values: Values::Iota,
        ..small()
    };
    for v in [
        &o,
        &Options {
            spin: 0,
            ..o.clone()
        },
        &Options {
            spin: 0,
            values: Values::None,
            ..o.clone()
        },
    ] {
        let r = check("onesweep", v, &x, false);
        assert_eq!(r.extra["tile_order"], "dispatch");
    }
    let (want, want_v) = model::sort(DType::F32, false, &x.bits, &(0..3001).collect::<Vec<u32>>());
    for (i, (k, vv)) in o
        .repeated_runs(
            g,
            radix::Variant::Onesweep,
            DType::F32,
            &[x.bits.as_slice(); 3],
        )
        .unwrap()
        .iter()
        .enumerate()
    {
        assert_eq!(k, &want, "run {i}");
        assert_eq!(vv, &want_v, "run {i}");
    }
    let e = try_run(
        &radix(Options {
            tile_order: TileOrder::Counter,
            ..Default::default()
        }),
        "classic",
        x,
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("--tile-order"), "{e}");
}

#[test]
fn long_spins_stay_within_the_drivers_loop_limit() {
    // lavapipe (llvmpipe) ends every loop of an invocation once it has run 65535 iterations in
    // all, silently. With 64 threads owning four buckets each and --spin 65536, a walk spun past
    // that and the sort came out wrong (2^18 keys, dispatch order: every run on 2 threads; the
    // counter order with 8 lavapipe threads at 2^20). There a spin budget now bounds the walk,
    // and dispatch order (a tile may count every predecessor itself) is refused past the tiles
    // the limit covers. Adapters without such a limit run every case.
    let g = gpu();
    let o = |tile_order, spin| Options {
        workgroup_size: 64,
        keys_per_thread: 8,
        spin,
        tile_order,
        ..Default::default()
    };
    for (i, (order, spin, n)) in [
        (TileOrder::Counter, 1 << 16, 1 << 18),
        (TileOrder::Counter, 1 << 20, 1 << 17),
        (TileOrder::Counter, 0, 200_000),
        // At and past the most tiles the limit covers in dispatch order (353 tiles of 512 keys).
        (TileOrder::Dispatch, 1 << 16, 353 * 512),
        (TileOrder::Dispatch, 1 << 16, 1 << 18),
    ]
    .into_iter()
    .enumerate()
    {
        let x = random_data(n, DType::U32, 70 + i as u64, false);
        let opts = o(order, spin);
        if g.loop_limit().is_some() && n > 353 * 512 && order == TileOrder::Dispatch {
            let e = try_run(&radix(opts), "onesweep", x, false).unwrap_err();
            let e = e.to_string();
            assert!(
                e.contains("llvmpipe") && e.contains("--tile-order counter"),
                "{e}"
            );
        } else {
            check("onesweep", &opts, &x, false);
        }
    }
    // Classic's one-workgroup scan of the counts is refused where it would pass the limit.
    if let Some(limit) = g.loop_limit() {
        assert_eq!(limit, 65_535);
        let x = random_data(1 << 25, DType::U32, 77, false);
        let e = try_run(&radix(Options::default()), "classic", x, false).unwrap_err();
        assert!(e.to_string().contains("--variant onesweep"), "{e}");
    }
}

#[test]
fn every_look_back_window_sorts_the_same() {
    // The window (statuses a bucket reads at once) changes only how far a read reaches: 1 reads
    // one predecessor at a time, 32 more than most walks need; small tiles, so many tiles walk
    // back, with values and descending keys in turn.
    for (i, w) in [1u32, 3, 4, 6, 12, 32].into_iter().enumerate() {
        let o = Options {
            look_back_window: w,
            values: if i % 2 == 0 {
                Values::Iota
            } else {
                Values::None
            },
            descending: i % 3 == 0,
            ..small()
        };
        let x = random_data(20_011, DType::ALL[i % 3], 80 + i as u64, true);
        let r = check("onesweep", &o, &x, false);
        assert_eq!(r.extra["look_back_window"], w);
    }
}
