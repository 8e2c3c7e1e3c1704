//! Odd-even sorting on the GPU against the CPU model: every variant, every key type, both orders.
mod common;

use common::{gpu, random_data, try_run, unless_past_limits, webgpu_limits};
use stagewise::algo::oddeven::{EXAMPLE, EXAMPLE_RESULT, Options, TileKernel, model};
use stagewise::algo::{AlgoOptions, RunResult};
use stagewise::data::{DType, Data, example_data};

fn oddeven(segment: Option<usize>, descending: bool) -> AlgoOptions {
    AlgoOptions::Oddeven(Options {
        segment,
        descending,
        ..Default::default()
    })
}

fn run_opts(opts: &AlgoOptions, variant: &str, input: Data, trace: bool) -> RunResult {
    try_run(opts, variant, input, trace).unwrap_or_else(|e| panic!("oddeven {variant}: {e}"))
}

/// The register kernel's run of `o`, or `None` under `STAGEWISE_LIMITS=webgpu` where its tile is
/// past the limits (the default 4096 keys need 17408 bytes of workgroup memory, or 512 invocations
/// at 8 keys each), which must be refused with a limit error. (Its smaller tiles run under those
/// limits in the tests with --tile 256 and 512.)
fn run_regs(o: &Options, input: &Data, what: &str) -> Option<RunResult> {
    let a = AlgoOptions::Oddeven(o.clone());
    unless_past_limits(try_run(&a, "batcher", input.clone(), false), what)
}

/// The GPU output is the CPU total-order sort (bit for bit), hence a permutation of the input.
fn check(r: &RunResult, input: &Data, seg: usize, desc: bool, what: &str) {
    assert!(r.verified, "{what}: {:?}", r.mismatch);
    let want = model::sort_segments(input.dtype, desc, &input.bits, seg);
    assert_eq!(r.output.bits, want, "{what}");
    // Multiset check, independent of the key order.
    let mut a = r.output.bits.clone();
    let mut b = input.bits.clone();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "{what}: output is not a permutation of the input");
}

const PRIMES: [usize; 8] = [2, 3, 5, 13, 97, 1021, 4093, 8191];

fn lengths(max: usize) -> Vec<usize> {
    let mut v = vec![
        1, 4, 10, 16, 31, 64, 100, 255, 256, 1000, 2048, 3001, 8192, 9000,
    ];
    v.extend(PRIMES);
    v.retain(|&n| n <= max);
    v.sort_unstable();
    v
}

#[test]
fn every_variant_sorts_random_inputs_of_many_lengths() {
    let _ = gpu();
    let words = (gpu().limits.max_compute_workgroup_storage_size / 4) as usize;
    for (variant, max) in [
        ("transposition", words.min(9000)),
        ("global", 300),
        ("merge-split", 9000),
        ("batcher", 9000),
    ] {
        for (i, n) in lengths(max).into_iter().enumerate() {
            // The transposition kernel is O(n^2) work: skip the middle sizes on a CPU adapter.
            if variant == "transposition" && n > 1100 && n != 8191 {
                continue;
            }
            let dtype = DType::ALL[i % 3];
            let desc = i % 4 == 1;
            let input = random_data(n, dtype, (i * 31 + n) as u64, true);
            let r = run_opts(&oddeven(None, desc), variant, input.clone(), false);
            check(
                &r,
                &input,
                n,
                desc,
                &format!("{variant} n={n} {dtype} desc={desc}"),
            );
        }
    }
}

#[test]
fn batcher_and_merge_split_sort_large_arrays() {
    // Past one tile: fused global merges with halo tiles (batcher), many blocks (merge-split).
    for (variant, n, dtype) in [
        ("batcher", 100_003, DType::U32),
        ("batcher", 1 << 17, DType::F32),
        ("batcher", 300_007, DType::I32),
        // p = 2^19: a merge with a strided halo pass (k = 2048 … 64) before the contiguous one.
        ("batcher", 1_000_003, DType::U32),
        ("merge-split", 50_021, DType::I32),
    ] {
        let input = random_data(n, dtype, n as u64, true);
        let r = run_opts(&oddeven(None, false), variant, input.clone(), false);
        check(&r, &input, n, false, &format!("{variant} n={n}"));
    }
    // merge-split with explicit blocks, down to single elements.
    for block in [1usize, 2, 8, 64, 1024] {
        let input = random_data(2500, DType::I32, block as u64, false);
        let opts = AlgoOptions::Oddeven(Options {
            descending: block == 8,
            block: Some(block),
            ..Default::default()
        });
        let r = run_opts(&opts, "merge-split", input.clone(), false);
        check(
            &r,
            &input,
            2500,
            block == 8,
            &format!("merge-split block={block}"),
        );
        assert_eq!(r.extra["blocks"], 2500usize.div_ceil(block));
    }
}

#[test]
fn special_inputs() {
    let n = 777;
    let cases: Vec<(&str, Data)> = vec![
        ("all equal", Data::from_u32(&vec![42; n])),
        ("sorted", Data::from_u32(&(0..n as u32).collect::<Vec<_>>())),
        (
            "reversed",
            Data::from_u32(&(0..n as u32).rev().collect::<Vec<_>>()),
        ),
        (
            "duplicates",
            Data::from_u32(&(0..n as u32).map(|i| (i * 7919) % 5).collect::<Vec<_>>()),
        ),
        (
            "negatives",
            Data::from_i32(
                &(0..n as i32)
                    .map(|i| (i * 37) % 101 - 50)
                    .collect::<Vec<_>>(),
            ),
        ),
        (
            "extremes",
            Data::from_u32(
                &(0..n)
                    .map(|i| [0, u32::MAX, 1, u32::MAX - 1][i % 4])
                    .collect::<Vec<_>>(),
            ),
        ),
    ];
    for (what, input) in cases {
        for variant in ["transposition", "global", "merge-split", "batcher"] {
            for desc in [false, true] {
                let r = run_opts(&oddeven(None, desc), variant, input.clone(), false);
                check(
                    &r,
                    &input,
                    n,
                    desc,
                    &format!("{variant} {what} desc={desc}"),
                );
            }
        }
    }
}

#[test]
fn floats_sort_in_the_total_order_bit_exactly() {
    let specials = [
        0x7fc0_0000u32, // NaN
        0xffc0_0000,    // -NaN
        0x7f80_0001,    // NaN with a payload
        0x7f80_0000,    // inf
        0xff80_0000,    // -inf
        0x8000_0000,    // -0
        0,              // +0
        0x0000_0001,    // smallest subnormal
        0x8000_0001,    // -smallest subnormal
        1.0f32.to_bits(),
        (-1.0f32).to_bits(),
    ];
    let mut bits: Vec<u32> = Vec::new();
    for i in 0..1500 {
        bits.push(specials[i % specials.len()]);
        bits.push(((i as f32 - 700.0) * 0.37).to_bits());
    }
    let input = Data::new(DType::F32, bits);
    for variant in ["transposition", "merge-split", "batcher"] {
        for desc in [false, true] {
            let r = run_opts(&oddeven(None, desc), variant, input.clone(), false);
            check(
                &r,
                &input,
                input.len(),
                desc,
                &format!("{variant} f32 desc={desc}"),
            );
            let out = &r.output.bits;
            let (first, last) = (out[0], out[out.len() - 1]);
            if desc {
                assert_eq!((first, last), (0x7fc0_0000, 0xffc0_0000), "{variant}");
            } else {
                assert_eq!((first, last), (0xffc0_0000, 0x7fc0_0000), "{variant}");
            }
            // -0 sorts before +0.
            let z = out.iter().position(|&b| b == 0x8000_0000).unwrap();
            let p = out.iter().position(|&b| b == 0).unwrap();
            assert_eq!(z < p, !desc, "{variant}");
        }
    }
    let small = random_data(200, DType::F32, 5, true);
    let r = run_opts(&oddeven(None, false), "global", small.clone(), false);
    check(&r, &small, 200, false, "global f32");
}

#[test]
fn seed_example_phases() {
    for variant in ["transposition", "global"] {
        for dtype in DType::ALL {
            let r = run_opts(
                &oddeven(None, false),
                variant,
                example_data(&EXAMPLE, dtype),
                true,
            );
            assert!(r.verified, "{variant} {dtype}: {:?}", r.mismatch);
            assert_eq!(r.output, example_data(&EXAMPLE_RESULT, dtype));
            assert_eq!(r.stages.len(), 11, "input + 10 phases");
            let s1 = &r.stages[1];
            assert_eq!(
                s1.to_json()["parity"],
                "even",
                "the first phase is on even pairs"
            );
            assert_eq!(
                s1.data,
                example_data(&[3, 7, 10, 11, 4, 20, 2, 8, 1, 12], dtype)
            );
            let s1_json = s1.to_json();
            let pairs = s1_json["pairs"].as_array().unwrap();
            let want = [[0, 1, 0], [2, 3, 1], [4, 5, 0], [6, 7, 0], [8, 9, 1]];
            assert_eq!(pairs.len(), 5);
            for (p, w) in pairs.iter().zip(want) {
                assert_eq!(
                    p.as_array().unwrap(),
                    &w.map(serde_json::Value::from).to_vec()
                );
            }
            let s2 = &r.stages[2];
            assert_eq!(s2.to_json()["parity"], "odd");
            assert_eq!(s2.to_json()["pairs"].as_array().unwrap().len(), 4);
            assert_eq!(
                s2.data,
                example_data(&[3, 7, 10, 4, 11, 2, 20, 1, 8, 12], dtype)
            );
            assert_eq!(r.extra["first_sorted_phase"], 9);
            assert_eq!(r.extra["phases"], 10);
            assert_eq!(r.extra["compare_exchanges"], 45);
            assert_eq!(r.extra["seed_work"], 45);
            assert_eq!(r.stages[10].data, example_data(&EXAMPLE_RESULT, dtype));
        }
    }
}

#[test]
fn traces_match_the_model_stage_by_stage() {
    // The GPU writes the array and the swap flags of every stage; run() checks them against the
    // model, and the stages carry the model's pairs.
    for (variant, n) in [
        ("transposition", 37usize),
        ("transposition", 600),
        ("global", 45),
        ("batcher", 45),
        ("batcher", 20_000),
        ("merge-split", 45),
        ("merge-split", 3000),
    ] {
        for desc in [false, true] {
            let input = random_data(n, DType::I32, n as u64, false);
            let r = run_opts(&oddeven(None, desc), variant, input.clone(), true);
            assert!(r.verified, "{variant} n={n}: {:?}", r.mismatch);
            check(&r, &input, n, desc, variant);
            let cpu: Vec<model::Phase> = match variant {
                "batcher" => model::batcher(DType::I32, desc, &input.bits, n),
                "merge-split" => model::merge_split(
                    DType::I32,
                    desc,
                    &input.bits,
                    r.extra["block"].as_u64().unwrap() as usize,
                ),
                _ => model::transposition(DType::I32, desc, &input.bits, n),
            };
            assert_eq!(r.stages.len(), cpu.len() + 1, "{variant} n={n}");
            for (s, c) in r.stages[1..].iter().zip(&cpu) {
                assert_eq!(s.data.bits, c.data, "{variant} n={n} {}", s.label);
                if variant != "merge-split" {
                    let pairs: Vec<(u32, u32, bool)> = s.to_json()["pairs"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| {
                            let p = p.as_array().unwrap();
                            (
                                p[0].as_u64().unwrap() as u32,
                                p[1].as_u64().unwrap() as u32,
                                p[2].as_u64().unwrap() == 1,
                            )
                        })
                        .collect();
                    assert_eq!(pairs, c.pairs, "{variant} n={n} {}", s.label);
                } else {
                    assert!(s.to_json().get("block_pairs").is_some());
                }
            }
            let first = r.extra["first_sorted_phase"].as_u64().unwrap() as usize;
            let rows: Vec<Vec<u32>> = cpu.iter().map(|p| p.data.clone()).collect();
            assert_eq!(
                Some(first),
                model::first_sorted(DType::I32, desc, &input.bits, &rows, n)
            );
        }
    }
}

#[test]
fn segmented_mode() {
    for (variant, l, segs) in [
        ("batcher", 1usize, 50usize),
        ("batcher", 3, 40),
        ("batcher", 100, 33),
        ("batcher", 1024, 9),
        ("batcher", 1000, 7),
        ("batcher", 4096, 3),
        ("transposition", 1, 20),
        ("transposition", 7, 30),
        ("transposition", 64, 17),
        ("transposition", 300, 5),
    ] {
        for (t, dtype) in DType::ALL.into_iter().enumerate() {
            let desc = t == 1;
            let input = random_data(l * segs, dtype, (l + t) as u64, true);
            let r = run_opts(&oddeven(Some(l), desc), variant, input.clone(), false);
            check(
                &r,
                &input,
                l,
                desc,
                &format!("{variant} --segment {l} × {segs} {dtype}"),
            );
        }
    }
    // Traced segments: pairs never cross a segment boundary.
    for variant in ["batcher", "transposition"] {
        let input = random_data(96, DType::U32, 9, false);
        let r = run_opts(&oddeven(Some(12), false), variant, input.clone(), true);
        check(&r, &input, 12, false, variant);
        for s in &r.stages[1..] {
            for p in s.to_json()["pairs"].as_array().unwrap() {
                let (i, j) = (p[0].as_u64().unwrap(), p[1].as_u64().unwrap());
                assert_eq!(
                    i / 12,
                    j / 12,
                    "{variant}: pair ({i}, {j}) crosses a segment"
                );
            }
        }
    }
}

#[test]
fn tuning_options_keep_results_exact() {
    for (tile, threads) in [(256usize, 32u32), (1024, 64), (4096, 256), (2048, 1000)] {
        let opts = AlgoOptions::Oddeven(Options {
            tile: Some(tile),
            threads: Some(threads),
            ..Default::default()
        });
        for (variant, n) in [("batcher", 70_001usize), ("merge-split", 5000)] {
            let input = random_data(n, DType::I32, tile as u64, false);
            let what = format!("{variant} tile={tile} threads={threads}");
            let Some(r) = unless_past_limits(try_run(&opts, variant, input.clone(), false), &what)
            else {
                continue;
            };
            check(
                &r,
                &input,
                n,
                false,
                &format!("{variant} tile={tile} threads={threads}"),
            );
        }
        let seg = AlgoOptions::Oddeven(Options {
            segment: Some(200),
            tile: Some(tile),
            threads: Some(threads),
            ..Default::default()
        });
        let input = random_data(200 * 37, DType::F32, 3, true);
        let what = format!("segmented batcher tile={tile} threads={threads}");
        let Some(r) = unless_past_limits(try_run(&seg, "batcher", input.clone(), false), &what)
        else {
            continue;
        };
        check(
            &r,
            &input,
            200,
            false,
            &format!("segmented batcher tile={tile}"),
        );
    }
    let bad = AlgoOptions::Oddeven(Options {
        tile: Some(100),
        ..Default::default()
    });
    let e = try_run(&bad, "batcher", Data::from_u32(&[1; 10]), false).unwrap_err();
    assert!(e.to_string().contains("--tile 100"), "{e}");
}

#[test]
fn errors_are_clear() {
    let words = (gpu().limits.max_compute_workgroup_storage_size / 4) as usize;
    let block3 = AlgoOptions::Oddeven(Options {
        block: Some(3),
        ..Default::default()
    });
    // (options, variant, input, trace, what the error names)
    let cases = [
        (
            oddeven(Some(3), false),
            "batcher",
            vec![1; 10],
            false,
            "not a multiple",
        ),
        (
            oddeven(Some(8192), false),
            "batcher",
            vec![1; 8192],
            false,
            "4096",
        ),
        (
            oddeven(Some(2), false),
            "global",
            vec![1; 4],
            false,
            "--segment is for",
        ),
        (
            oddeven(None, false),
            "transposition",
            vec![1; words + 1],
            false,
            "max_compute_workgroup_storage_size",
        ),
        (oddeven(None, false), "global", vec![1; 3000], true, "trace"),
        (block3, "merge-split", vec![1; 10], false, "power of two"),
        (oddeven(None, false), "batcher", vec![], false, "empty"),
    ];
    for (opts, variant, input, trace, want) in cases {
        let e = try_run(&opts, variant, Data::from_u32(&input), trace)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{variant}: {e}");
    }
}

#[test]
fn bench_cases_build_for_every_variant() {
    use stagewise::algo::Algorithm;
    let o = Options::default();
    for v in o.info().variants {
        let case = o.bench_case(gpu(), v, 4096, DType::U32).unwrap();
        assert_eq!(case.items, 4096);
        assert_eq!(case.bytes, 8 * 4096);
        assert!(!case.plan.passes.is_empty());
    }
    let seg = Options {
        segment: Some(1024),
        ..Default::default()
    };
    let v = seg.info().variant(Some("batcher")).unwrap();
    let case = seg.bench_case(gpu(), v, 1 << 16, DType::U32).unwrap();
    assert_eq!(
        case.plan.passes.len(),
        1,
        "segmented batcher is one dispatch"
    );
}

// CPU model checks (here rather than in the lib, so they run with this test binary).

fn lcg(n: usize, seed: u64) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as u32
        })
        .collect()
}

#[test]
fn model_keys_follow_the_total_order() {
    let order = [
        0xffc0_0000u32, // -NaN
        0xff80_0000,    // -inf
        (-1.5f32).to_bits(),
        0x8000_0000, // -0
        0,           // +0
        1.5f32.to_bits(),
        0x7f80_0000, // inf
        0x7fc0_0000, // NaN
    ];
    for w in order.windows(2) {
        assert!(model::key(DType::F32, false, w[0]) < model::key(DType::F32, false, w[1]));
        assert!(model::key(DType::F32, true, w[0]) > model::key(DType::F32, true, w[1]));
    }
    assert!(model::key(DType::I32, false, (-1i32) as u32) < model::key(DType::I32, false, 0));
}

#[test]
fn model_seed_example_takes_ten_phases() {
    let ex = [3u32, 7, 11, 10, 4, 20, 2, 8, 12, 1];
    let ph = model::transposition(DType::U32, false, &ex, 10);
    assert_eq!(ph.len(), 10);
    assert_eq!(ph[0].data, [3, 7, 10, 11, 4, 20, 2, 8, 1, 12]);
    assert_eq!(ph[0].pairs.len(), 5);
    assert_eq!(ph[1].pairs.len(), 4);
    assert_eq!(ph[9].data, [1, 2, 3, 4, 7, 8, 10, 11, 12, 20]);
}

#[test]
fn model_networks_sort() {
    for n in [1usize, 2, 3, 5, 7, 8, 13, 16, 31, 64, 100, 257] {
        let v = lcg(n, n as u64);
        let want = model::sort(DType::U32, false, &v);
        assert_eq!(
            model::transposition(DType::U32, false, &v, n)
                .last()
                .unwrap()
                .data,
            want
        );
        let b = model::batcher(DType::U32, false, &v, n);
        assert_eq!(
            b.last().map_or(v.clone(), |p| p.data.clone()),
            want,
            "n={n}"
        );
        for block in [1, 2, 4, 16] {
            let ms = model::merge_split(DType::U32, false, &v, block);
            assert_eq!(ms.last().unwrap().data, want, "n={n} block={block}");
        }
    }
    // segments, descending
    let v = lcg(60, 3);
    let want = model::sort_segments(DType::U32, true, &v, 12);
    assert_eq!(
        model::batcher(DType::U32, true, &v, 12)
            .last()
            .unwrap()
            .data,
        want
    );
    assert_eq!(
        model::transposition(DType::U32, true, &v, 12)
            .last()
            .unwrap()
            .data,
        want
    );
}

#[test]
fn views_render_every_variant() {
    use stagewise::ui::views::{self, ViewState};
    let o = oddeven(None, false);
    let cases = [
        ("transposition", example_data(&EXAMPLE, DType::U32), true),
        ("global", random_data(12, DType::I32, 1, false), false),
        ("batcher", example_data(&EXAMPLE, DType::F32), false),
        (
            "merge-split",
            stagewise::data::generate(stagewise::data::Fill::Small, 24, DType::U32, 3),
            false,
        ),
        ("batcher", random_data(500, DType::U32, 3, false), true),
    ];
    for (i, (variant, input, bars)) in cases.into_iter().enumerate() {
        let r = run_opts(&o, variant, input, true);
        let stage = r.stages.len() - 1;
        let mut state = ViewState {
            oddeven_bars: bars,
            ..Default::default()
        };
        let mut h = egui_kittest::Harness::builder()
            .with_size(eframe::egui::vec2(1100.0, 800.0))
            .wgpu()
            .build_ui(move |ui| views::show(ui, &r, stage, i as u64, &mut state));
        h.run();
        // ODDEVEN_VIEW_PNG=dir writes the renders (for the README's screenshots).
        if let Ok(dir) = std::env::var("ODDEVEN_VIEW_PNG") {
            let img = h.render().expect("render");
            img.save(format!("{dir}/oddeven_{i}_{variant}.png"))
                .expect("save");
        }
    }
}

/// Small --threads (an invocation plays many owners): every N the kernel takes sorts, or — only where
/// the driver caps loop iterations (lavapipe) — the run is refused naming that limit. Regression:
/// 8 or fewer threads at N = 1024 used to stop sorting silently around phase 169 on lavapipe.
#[test]
fn transposition_with_few_threads_sorts_or_names_the_limit() {
    let words = (gpu().limits.max_compute_workgroup_storage_size / 4) as usize;
    let llvmpipe = gpu().loop_limit().is_some();
    for threads in [1u32, 2, 3, 4, 5, 8] {
        for (i, n) in [1usize, 2, 3, 10, 255, 1000, 1024, 1025, 2048, 4093]
            .into_iter()
            .enumerate()
        {
            if n > words {
                continue;
            }
            let dtype = DType::ALL[i % 3];
            let desc = i % 2 == 1;
            let opts = AlgoOptions::Oddeven(Options {
                threads: Some(threads),
                descending: desc,
                ..Default::default()
            });
            let input = random_data(n, dtype, (n * 7 + threads as usize) as u64, true);
            let what = format!("transposition threads={threads} n={n} {dtype} desc={desc}");
            match try_run(&opts, "transposition", input.clone(), false) {
                Ok(r) => check(&r, &input, n, desc, &what),
                Err(e) => {
                    let e = e.to_string();
                    assert!(llvmpipe, "{what}: {e}");
                    assert!(n > 2048, "{what}: refused below 2048: {e}");
                    assert!(
                        e.contains("65535") && e.contains("--threads ≥"),
                        "{what}: {e}"
                    );
                    assert!(!e.contains('\n'), "{what}: one line: {e}");
                }
            }
        }
    }
    // Traced, the kernel also copies the array after every phase: still exact at few threads.
    for threads in [1u32, 3, 8] {
        let input = random_data(300, DType::I32, threads as u64, false);
        let opts = AlgoOptions::Oddeven(Options {
            threads: Some(threads),
            ..Default::default()
        });
        let r = run_opts(&opts, "transposition", input.clone(), true);
        check(&r, &input, 300, false, &format!("traced threads={threads}"));
        assert_eq!(r.stages.len(), 301);
    }
}

/// Batcher with few --threads: every tile pass either sorts exactly or — only on lavapipe, whose
/// loops stop silently after 65535 iterations — is refused naming that limit. Regression: 2 threads
/// at N = 8192 returned a half-sorted array on lavapipe.
#[test]
fn batcher_with_few_threads_sorts_or_names_the_limit() {
    let llvmpipe = gpu().loop_limit().is_some();
    let mut sorted = 0;
    for threads in [1u32, 2, 4, 5, 8, 16] {
        for (i, n) in [1000usize, 4097, 8192, 20_011].into_iter().enumerate() {
            let dtype = DType::ALL[i % 3];
            let desc = i % 2 == 1;
            let opts = AlgoOptions::Oddeven(Options {
                threads: Some(threads),
                descending: desc,
                ..Default::default()
            });
            let input = random_data(n, dtype, (n + threads as usize) as u64, true);
            let what = format!("batcher threads={threads} n={n} {dtype} desc={desc}");
            match try_run(&opts, "batcher", input.clone(), false) {
                Ok(r) => {
                    check(&r, &input, n, desc, &what);
                    sorted += 1;
                }
                Err(e) => {
                    let e = e.to_string();
                    assert!(llvmpipe && threads < 8, "{what}: {e}");
                    assert!(
                        e.contains("65535") && e.contains("--threads ≥"),
                        "{what}: {e}"
                    );
                    assert!(!e.contains('\n'), "{what}: one line: {e}");
                }
            }
        }
    }
    assert!(sorted >= 12, "most configurations run: {sorted}");
}

/// The register kernel (src/algo/oddeven/regs.rs) against the generic one and the CPU sort: whole
/// arrays past one tile (head and halo passes, tiles inside and across merge blocks), segments of
/// every shape (one per tile, several per tile, not powers of two), both orders, floats with
/// specials. On lavapipe this covers one and two workgroup buffers and both exchange paths
/// (subgroup shuffles inside 8-lane subgroups, workgroup memory across them).
#[test]
fn register_kernel_matches_the_generic_kernel_and_the_cpu() {
    let cases: [(Option<usize>, usize, DType, bool); 9] = [
        (None, 100_003, DType::U32, false),
        (None, 1 << 18, DType::F32, false),
        (None, 300_007, DType::I32, true),
        (None, 5000, DType::F32, true),
        (Some(4096), 4096 * 5, DType::U32, false),
        (Some(2048), 2048 * 7, DType::I32, true),
        (Some(1000), 1000 * 9, DType::F32, false),
        (Some(300), 300 * 41, DType::U32, true),
        (Some(16), 16 * 300, DType::I32, false),
    ];
    for (i, (segment, n, dtype, desc)) in cases.into_iter().enumerate() {
        let input = random_data(n, dtype, 100 + i as u64, true);
        let seg = segment.unwrap_or(n);
        let mut outs = Vec::new();
        for kernel in [TileKernel::Registers, TileKernel::Generic] {
            let o = Options {
                segment,
                descending: desc,
                kernel,
                ..Default::default()
            };
            let what = format!("{kernel:?} segment {segment:?} n {n} {dtype:?} desc {desc}");
            let r = if kernel == TileKernel::Registers {
                let Some(r) = run_regs(&o, &input, &what) else {
                    continue;
                };
                r
            } else {
                run_opts(&AlgoOptions::Oddeven(o), "batcher", input.clone(), false)
            };
            check(&r, &input, seg, desc, &what);
            let regs = r
                .passes
                .iter()
                .filter(|p| p.label.contains("registers"))
                .count();
            if kernel == TileKernel::Registers {
                assert_eq!(regs, r.passes.len(), "{what}: every pass in registers");
            } else {
                assert_eq!(regs, 0, "{what}");
            }
            outs.push(r.output.bits);
        }
        if let [regs, generic] = &outs[..] {
            assert_eq!(regs, generic, "case {i}: kernels disagree");
        }
    }
}

/// Whole arrays on small tiles run many merges: the planned heads (rows of 8 or 16 residues),
/// strided tails with halos and contiguous tails, with loads and stores in the first / last
/// group's layout, all bit-equal to the CPU sort.
#[test]
fn merge_plans_with_strided_and_contiguous_tails_sort_exactly() {
    let n = 40_001;
    let input = random_data(n, DType::F32, 300, true);
    // The generic kernel runs the same plan (halo tiles on their first stage's pair blocks too).
    for kernel in [TileKernel::Registers, TileKernel::Generic] {
        let opts = AlgoOptions::Oddeven(Options {
            tile: Some(512),
            descending: true,
            kernel,
            keys_per_invocation: Some(32),
            ..Default::default()
        });
        let r = run_opts(&opts, "batcher", input.clone(), false);
        check(
            &r,
            &input,
            n,
            true,
            &format!("tile 512, f32 descending, {kernel:?}"),
        );
        // A tail that stops above k = 1 reads strided rows with a halo.
        let strided = r
            .passes
            .iter()
            .filter(|p| p.label.contains("(halo") && !p.label.contains("… 1 (halo"))
            .count();
        assert!(strided > 0, "no strided tail in {:?}", r.passes);
    }
}

/// 8 and 32 keys per invocation (other layouts, group sizes and exchange widths) sort exactly too.
/// 32 is the default for whole arrays on GPUs; CPU adapters such as llvmpipe default to 16.
#[test]
fn register_kernel_with_8_and_32_keys_per_invocation() {
    let cases: [(Option<usize>, usize, DType, bool); 3] = [
        (None, 100_003, DType::U32, false),
        (None, 300_007, DType::I32, true),
        (Some(1000), 1000 * 9, DType::F32, false),
    ];
    for keys in [8, 32] {
        for (i, (segment, n, dtype, desc)) in cases.into_iter().enumerate() {
            let input = random_data(n, dtype, 200 + i as u64, true);
            let o = Options {
                segment,
                descending: desc,
                kernel: TileKernel::Registers,
                keys_per_invocation: Some(keys),
                ..Default::default()
            };
            let what = format!("E {keys} segment {segment:?} n {n} {dtype:?} desc {desc}");
            let Some(r) = run_regs(&o, &input, &what) else {
                continue;
            };
            check(&r, &input, segment.unwrap_or(n), desc, &what);
        }
    }
    let bad = AlgoOptions::Oddeven(Options {
        keys_per_invocation: Some(12),
        ..Default::default()
    });
    let e = try_run(&bad, "batcher", Data::from_u32(&[3, 1, 2]), false).unwrap_err();
    assert!(e.to_string().contains("--keys-per-invocation 12"), "{e}");
}

/// Several tiles per workgroup (the next tile's loads in flight while this one's keys are stored):
/// tile counts that S does not divide, edge tiles of non-power-of-two arrays, heads, strided and
/// contiguous tails (small tiles run many merges), segments one and two per tile, both orders,
/// floats with specials: all exact. Small tiles and 8 keys per invocation keep llvmpipe's compile
/// time low.
#[test]
fn register_kernel_with_several_tiles_per_workgroup() {
    let cases: [(usize, Option<usize>, usize, DType, bool); 5] = [
        (3, None, 1000, DType::F32, true),
        (16, None, 1000, DType::F32, true),
        (3, None, 20_011, DType::U32, false),
        (3, Some(200), 200 * 13, DType::I32, true),
        (3, Some(100), 100 * 31, DType::F32, false),
    ];
    for (i, (s, segment, n, dtype, desc)) in cases.into_iter().enumerate() {
        let input = random_data(n, dtype, 400 + i as u64, true);
        let opts = AlgoOptions::Oddeven(Options {
            segment,
            tile: Some(256),
            descending: desc,
            kernel: TileKernel::Registers,
            keys_per_invocation: Some(8),
            tiles_per_workgroup: Some(s),
            ..Default::default()
        });
        let what = format!("S {s} segment {segment:?} n {n} {dtype:?} desc {desc}");
        let r = run_opts(&opts, "batcher", input.clone(), false);
        check(&r, &input, segment.unwrap_or(n), desc, &what);
        let labels: Vec<_> = r.passes.iter().map(|p| &p.label).collect();
        assert!(
            labels
                .iter()
                .all(|l| l.contains(&format!("registers, {s} tiles per workgroup"))),
            "{what}: {labels:?}"
        );
        if n == 20_011 {
            assert!(
                labels
                    .iter()
                    .any(|l| l.contains("(halo") && !l.contains("… 1 (halo")),
                "{what}: no strided tail in {labels:?}"
            );
        }
    }
    for (bad, variant, want) in [
        (0, "batcher", "--tiles-per-workgroup 0: 1 ..= 16"),
        (17, "merge-split", "--tiles-per-workgroup 17: 1 ..= 16"),
        (
            2,
            "transposition",
            "--tiles-per-workgroup is for the batcher and merge-split",
        ),
    ] {
        let opts = AlgoOptions::Oddeven(Options {
            tiles_per_workgroup: Some(bad),
            ..Default::default()
        });
        let e = try_run(&opts, variant, Data::from_u32(&[3, 1, 2]), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{variant} S {bad}: {e}");
    }
}

/// One workgroup buffer (the default: two barriers a hand-over) and two (one barrier): segments of
/// several lengths, odd whole arrays with halo tails, both orders, floats with specials: all exact,
/// and the pass label names two buffers. Out-of-range counts and two buffers a tile's workgroup
/// memory cannot hold are refused.
#[test]
fn register_kernel_with_one_and_two_workgroup_buffers() {
    let cases: [(Option<usize>, usize, DType, bool); 4] = [
        (Some(1024), 1024 * 5, DType::I32, false),
        (Some(300), 300 * 17, DType::F32, true),
        (None, 20_011, DType::U32, false),
        (None, 3000, DType::F32, true),
    ];
    for (i, (segment, n, dtype, desc)) in cases.into_iter().enumerate() {
        let input = random_data(n, dtype, 500 + i as u64, true);
        for buffers in [1, 2] {
            let opts = AlgoOptions::Oddeven(Options {
                segment,
                tile: Some(if segment.is_some() { 1024 } else { 256 }),
                descending: desc,
                kernel: TileKernel::Registers,
                keys_per_invocation: Some(8),
                exchange_buffers: Some(buffers),
                ..Default::default()
            });
            let what =
                format!("{buffers} buffers, segment {segment:?} n {n} {dtype:?} desc {desc}");
            let r = run_opts(&opts, "batcher", input.clone(), false);
            check(&r, &input, segment.unwrap_or(n), desc, &what);
            assert!(
                r.passes.iter().all(|p| p.label.contains("registers")
                    && p.label.contains(", 2 buffers") == (buffers == 2)),
                "{what}: {:?}",
                r.passes.iter().map(|p| &p.label).collect::<Vec<_>>()
            );
        }
    }
    let refused = |o: Options, variant: &str| {
        try_run(
            &AlgoOptions::Oddeven(o),
            variant,
            Data::from_u32(&lcg(8192, 3)),
            false,
        )
        .unwrap_err()
        .to_string()
    };
    for (bad, variant, want) in [
        (0, "batcher", "--exchange-buffers 0: 1 or 2"),
        (3, "merge-split", "--exchange-buffers 3: 1 or 2"),
        (
            2,
            "transposition",
            "--exchange-buffers is for the batcher and merge-split",
        ),
    ] {
        let e = refused(
            Options {
                exchange_buffers: Some(bad),
                ..Default::default()
            },
            variant,
        );
        assert!(e.contains(want), "{variant} buffers {bad}: {e}");
    }
    // Two buffers of the adapter's largest tile (T keys, T · 4 ≤ its workgroup memory < 2 · T · 4)
    // need 2 · T · 17/4 bytes at 16 keys an invocation (a pad word every 16 keys): more than it has.
    // The largest tile is capped at 8192 keys; an adapter with room for two of those runs them.
    let limit = gpu().limits.max_compute_workgroup_storage_size as usize;
    let words = limit / 4;
    let tile = (1usize << words.ilog2()).min(8192);
    let opts = Options {
        tile: Some(tile),
        kernel: TileKernel::Registers,
        keys_per_invocation: Some(16),
        exchange_buffers: Some(2),
        ..Default::default()
    };
    if 2 * tile * 17 / 4 > limit {
        let e = refused(opts, "batcher");
        assert!(
            e.contains("--exchange-buffers 2") && e.contains("bytes of workgroup memory for two"),
            "tile {tile}, {limit} bytes: {e}"
        );
    } else {
        let n = 3 * tile + 5;
        let input = random_data(n, DType::U32, 77, false);
        let r = run_opts(&AlgoOptions::Oddeven(opts), "batcher", input.clone(), false);
        check(&r, &input, n, false, "two buffers of 8192-key tiles");
    }
}

#[test]
fn register_kernel_is_the_untraced_default_and_names_what_it_cannot_run() {
    let input = random_data(20_000, DType::U32, 7, false);
    let r = run_opts(&oddeven(None, false), "batcher", input.clone(), false);
    check(&r, &input, 20_000, false, "default");
    let labels: Vec<_> = r.passes.iter().map(|p| &p.label).collect();
    let regs = AlgoOptions::Oddeven(Options {
        kernel: TileKernel::Registers,
        ..Default::default()
    });
    if webgpu_limits() {
        // The default tile of 4096 keys fits WebGPU's 16 KiB for the generic kernel only (the
        // register kernel's needs 17408 bytes): auto runs it generic; registers names the limit.
        assert!(
            labels.iter().all(|l| !l.contains("registers")),
            "{labels:?}"
        );
        let e = try_run(&regs, "batcher", input.clone(), false).unwrap_err();
        assert!(
            matches!(e, stagewise::Error::Limit(_))
                && e.to_string().contains("--kernel registers cannot run")
                && e.to_string().contains("bytes of workgroup memory"),
            "{e:?}"
        );
    } else {
        assert!(labels.iter().all(|l| l.contains("registers")), "{labels:?}");
    }
    // Traces are written by the generic kernel; asking for registers says so.
    let traced = run_opts(&oddeven(None, false), "batcher", input.clone(), true);
    assert!(traced.passes.iter().all(|p| !p.label.contains("registers")));
    let e = try_run(&regs, "batcher", input, true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--kernel registers cannot run") && e.contains("traces"),
        "{e}"
    );
}
