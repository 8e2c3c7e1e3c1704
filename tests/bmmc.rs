//! BMMC / BPC permutations on the GPU against the CPU model; plans, presets, errors, CLI.
mod common;

use common::{bin, gpu, random_data, run, run_ok, try_run};
use stagewise::algo::AlgoOptions;
use stagewise::algo::bmmc::matrix::{Affine, BitMatrix};
use stagewise::algo::bmmc::plan::{self, Params};
use stagewise::algo::bmmc::{self, GroupOrder, Options, preset, stats};
use stagewise::data::{DType, Data};

const VARIANTS: [&str; 5] = ["naive", "tiled", "seed-plu", "seed-ulp", "auto"];

fn bmmc(matrix: &BitMatrix, complement: u32) -> AlgoOptions {
    AlgoOptions::Bmmc(Options {
        matrix: Some(matrix.format()),
        complement: complement as u64,
        ..Default::default()
    })
}

fn with_preset(p: &str) -> AlgoOptions {
    AlgoOptions::Bmmc(Options {
        preset: Some(p.into()),
        ..Default::default()
    })
}

/// The model straight from the definition: out[A·x ⊕ c] = in[x] (row parities per index).
fn direct(a: &BitMatrix, c: u32, input: &[u32]) -> Vec<u32> {
    let mut out = vec![0xFFFF_FFFFu32; input.len()];
    let mut seen = vec![false; input.len()];
    for (x, &v) in input.iter().enumerate() {
        let y = (a.apply(x as u32) ^ c) as usize;
        assert!(!seen[y], "not a permutation");
        seen[y] = true;
        out[y] = v;
    }
    out
}

#[test]
fn matrix_model_factorisations_and_parsing() {
    for n in 1..=16 {
        for s in 0..12 {
            let a = BitMatrix::random_invertible(n, s);
            let (p, l, u) = a.plu().unwrap();
            assert!(p.is_permutation() && l.is_lower() && u.is_upper(), "n={n}");
            assert_eq!(p.mul(&l).mul(&u), a);
            let (u, l, p) = a.ulp().unwrap();
            assert!(p.is_permutation() && l.is_lower() && u.is_upper(), "n={n}");
            assert_eq!(u.mul(&l).mul(&p), a);
            let inv = a.inverse().unwrap();
            assert!(a.mul(&inv).is_identity() && inv.mul(&a).is_identity());
            assert_eq!(a.transpose().transpose(), a);
            assert_eq!(a.rank(), n);
            assert_eq!(BitMatrix::parse(&a.format()).unwrap(), a);
            let x = (s as u32).wrapping_mul(2654435761) & ((1u32 << n) - 1);
            assert_eq!(inv.apply(a.apply(x)), x);
        }
    }
    let m = BitMatrix::parse("001;010;100").unwrap();
    assert_eq!(
        m.apply(0b001),
        0b100,
        "row i = output bit i, column j = input bit j"
    );
    assert_eq!(
        BitMatrix::parse("10\n01\n").unwrap(),
        BitMatrix::identity(2)
    );
    let s = BitMatrix::parse("110;011;101").unwrap();
    assert_eq!(s.rank(), 2);
    let e = s.inverse().unwrap_err().to_string();
    assert!(e.contains("row 2 = row 0 + row 1"), "{e}");
    let e = BitMatrix::parse("10;00")
        .unwrap()
        .inverse()
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 1") && e.contains("all zeros"), "{e}");
}

#[test]
fn every_variant_matches_the_model_for_random_bmmc_and_bpc() {
    let _ = gpu();
    let mut case = 0u64;
    for n in [4usize, 5, 7, 10, 13, 16, 20] {
        for kind in ["random", "bpc"] {
            for v in VARIANTS {
                case += 1;
                let a = if kind == "random" {
                    BitMatrix::random_invertible(n, case)
                } else {
                    BitMatrix::random_bpc(n, case)
                };
                let c = (case as u32).wrapping_mul(0x9E37_79B9) & ((1u32 << n) - 1);
                let dtype = DType::ALL[case as usize % 3];
                let input = random_data(1 << n, dtype, case, true);
                let want = direct(&a, c, &input.bits);
                let r = run(&bmmc(&a, c), v, input, false);
                assert!(r.verified, "{v} {kind} n={n}: {:?}", r.mismatch);
                assert_eq!(r.output.bits, want, "{v} {kind} n={n}");
                let pc = r.extra["pass_count"].as_u64().unwrap();
                assert_eq!(pc as usize, r.passes.len());
                match v {
                    "tiled" | "auto" => {
                        assert!(pc <= 2, "{v} n={n}: {pc} passes");
                        if kind == "bpc" {
                            assert_eq!(pc, 1, "{v}: one pass for any BPC");
                        }
                    }
                    "seed-plu" => assert!(pc <= 7),
                    "seed-ulp" => assert!(pc <= 6),
                    _ => assert_eq!(pc, 1),
                }
            }
        }
    }
    // n = 22 once (4M elements): the two-pass tiled plan on a random BMMC.
    let a = BitMatrix::random_invertible(22, 99);
    let input = random_data(1 << 22, DType::U32, 99, false);
    let want = direct(&a, 12345, &input.bits);
    let r = run(&bmmc(&a, 12345), "tiled", input, false);
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.output.bits, want);
    assert_eq!(r.passes.len(), 2);
}

/// The tiled kernel at every shape it takes (threads, tiles a workgroup walks, tile size, words or
/// vectors) on random BMMCs and BPCs of several sizes, against the model: shapes the adapter
/// cannot run are capped, never wrong.
#[test]
fn every_tiled_shape_matches_the_model() {
    let _ = gpu();
    let mut case = 1000u64;
    for n in [5usize, 9, 13, 16, 18] {
        for i in 0..8u32 {
            case += 1;
            let a = if i % 2 == 0 {
                BitMatrix::random_invertible(n, case)
            } else {
                BitMatrix::random_bpc(n, case)
            };
            let c = (case as u32).wrapping_mul(0x9E37_79B9) & ((1u32 << n) - 1);
            let o = AlgoOptions::Bmmc(Options {
                matrix: Some(a.format()),
                complement: c as u64,
                tile_bits: Some([9, 12, 10, 11][i as usize % 4]),
                tile_threads: Some(32 << (i % 5)),
                tiles_per_workgroup: Some(1 << (i % 5)),
                tile_vector: Some([4, 1, 4][i as usize % 3]),
                group_order: [GroupOrder::Auto, GroupOrder::Output, GroupOrder::Input]
                    [i as usize % 3],
                ..Default::default()
            });
            let input = random_data(1 << n, DType::ALL[case as usize % 3], case, true);
            let want = direct(&a, c, &input.bits);
            let r = run(&o, "tiled", input, false);
            assert!(r.verified, "n={n} shape {i}: {:?}", r.mismatch);
            assert_eq!(r.output.bits, want, "n={n} shape {i}");
        }
    }
}

/// A BMMC that is not a BPC takes two tiled passes: the first moves tiles of contiguous words
/// (from 2^23 words on, 2^10-word tiles at 2^3 words a thread), the second reads and writes runs of
/// 2^6 words (the low 6 bits of both sides in its 2^12-word tile).
#[test]
fn a_two_pass_bmmc_gathers_small_tiles_then_moves_runs_of_64_words() {
    for n in [13usize, 16, 20, 22, 23, 28] {
        for s in 0..20u64 {
            let t = Affine {
                a: BitMatrix::random_invertible(n, s),
                c: 0,
            };
            let p = plan::build(bmmc::Variant::Tiled, &t, &Params::default()).unwrap();
            if n == 13 && p.passes.len() == 1 {
                continue; // one 2^12 tile of 2^13 words can hold the whole map
            }
            assert_eq!(p.passes.len(), 2, "n={n} s={s}");
            let (
                plan::Kernel::Tiled {
                    tin: t1,
                    threads_log: h1,
                },
                plan::Kernel::Tiled {
                    tin: t2,
                    threads_log: h2,
                },
            ) = (&p.passes[0].kernel, &p.passes[1].kernel)
            else {
                panic!("two tiled passes");
            };
            if n >= 23 {
                assert_eq!(t1.len(), plan::GATHER_TILE_BITS, "n={n} s={s}");
                assert_eq!(*h1, Some(plan::GATHER_TILE_BITS - 3));
            } else {
                assert_eq!((t1.len(), *h1), (12, None), "n={n} s={s}");
            }
            assert!((0..t1.len()).all(|j| t1.contains(&j)), "contiguous tiles");
            assert_eq!((t2.len(), *h2), (12, None), "n={n} s={s}");
            assert!((0..6).all(|j| t2.contains(&j)), "reads: runs of 64 words");
            // The tile's image spans e_0..e_5: runs of 64 words written.
            let a2 = &p.passes[1].map.a;
            let mut span: Vec<u32> = Vec::new();
            for &j in t2 {
                let mut v = a2.col(j);
                for &b in &span {
                    v = v.min(v ^ b);
                }
                if v != 0 {
                    span.push(v);
                    span.sort_unstable_by(|a, b| b.cmp(a));
                }
            }
            for e in 0..6 {
                let mut v = 1u32 << e;
                for &b in &span {
                    v = v.min(v ^ b);
                }
                assert_eq!(v, 0, "n={n} s={s}: output bit {e} in the tile");
            }
        }
    }
}

/// Only a bit permutation's tiles can be numbered by output; auto does so but for the bit reversal.
#[test]
fn the_group_order_applies_to_bit_permutations_only() {
    use bmmc::kernels::by_output;
    let n = 20;
    let rev = preset("bit-reverse", n).unwrap();
    let tr = preset("transpose", n).unwrap();
    let bpc = BitMatrix::random_bpc(n, 4);
    let any = BitMatrix::random_invertible(n, 4);
    assert!(!by_output(&rev, GroupOrder::Auto) && by_output(&rev, GroupOrder::Output));
    assert!(by_output(&tr, GroupOrder::Auto) && !by_output(&tr, GroupOrder::Input));
    assert!(by_output(&bpc, GroupOrder::Auto));
    for o in [GroupOrder::Auto, GroupOrder::Input, GroupOrder::Output] {
        assert!(!by_output(&any, o), "{o:?}: a BMMC that is not a BPC");
    }
    // The transpose by output: its tile-group columns (the table's second part) ascend in output.
    let limits = gpu().limits.clone();
    let t = Affine { a: tr, c: 0 };
    for (order, ascending_out) in [(GroupOrder::Output, true), (GroupOrder::Input, false)] {
        let params = Params {
            group_order: order,
            ..Params::default()
        };
        let p = plan::build(bmmc::Variant::Tiled, &t, &params).unwrap();
        let plan::Kernel::Tiled { tin, .. } = &p.passes[0].kernel else {
            panic!("one tiled pass");
        };
        let g = bmmc::kernels::gpu_pass(&p.passes[0], n, &limits, &params).unwrap();
        let tb = tin.len();
        // The table: read columns (tb), group inputs (gb), swizzle (tb), write basis (tb), group
        // outputs (gb), ...
        let gb = n - tb;
        let groups = &g.table[3 * tb + gb..3 * tb + 2 * gb];
        let outs: Vec<u32> = groups.iter().map(|v| v.trailing_zeros()).collect();
        assert_eq!(outs.is_sorted(), ascending_out, "{order:?}: {outs:?}");
    }
}

#[test]
fn traces_are_checked_pass_by_pass() {
    for (n, seed) in [(6usize, 1u64), (11, 2), (14, 3)] {
        let a = BitMatrix::random_invertible(n, seed);
        for v in VARIANTS {
            let input = Data::from_u32(&(0..1u32 << n).collect::<Vec<_>>());
            let r = run(&bmmc(&a, 3), v, input.clone(), true);
            assert!(r.verified, "{v} n={n}: {:?}", r.mismatch);
            let plan = r.extra["plan"].as_array().unwrap();
            assert_eq!(
                r.stages.len(),
                plan.len() + 1,
                "{v}: input + one stage per pass"
            );
            // Replay the plan's factor matrices on the CPU: every stage must match.
            let mut cur = input.bits.clone();
            for (i, p) in plan.iter().enumerate() {
                let rows: Vec<&str> = p["matrix"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap())
                    .collect();
                let m = BitMatrix::parse(&rows.join(";")).unwrap();
                let c = p["complement"].as_u64().unwrap() as u32;
                cur = direct(&m, c, &cur);
                assert_eq!(r.stages[i + 1].data.bits, cur, "{v} n={n} pass {}", i + 1);
                assert_eq!(r.stages[i + 1].to_json()["kind"], p["kind"]);
            }
            assert_eq!(cur, direct(&a, 3, &input.bits));
        }
    }
}

type IndexMap<'a> = Box<dyn Fn(u32) -> u32 + 'a>;

#[test]
fn presets_have_their_known_mappings() {
    let n = 6usize;
    let nn = 1u32 << n;
    let rotl = |x: u32| ((x << 1) | (x >> (n - 1))) & (nn - 1);
    let rev = |x: u32| x.reverse_bits() >> (32 - n);
    let gray = |x: u32| x ^ (x >> 1);
    // (preset, y(x))
    let cases: Vec<(&str, IndexMap)> = vec![
        ("identity", Box::new(|x| x)),
        ("bit-reverse", Box::new(rev)),
        // a 2^2 × 2^4 row-major matrix → its 2^4 × 2^2 transpose
        ("transpose:2,4", Box::new(|x| (x % 16) * 4 + x / 16)),
        ("transpose:4,2", Box::new(|x| (x % 4) * 16 + x / 4)),
        ("shuffle", Box::new(rotl)),
        (
            "unshuffle",
            Box::new(move |x| (x >> 1) | ((x & 1) << (n - 1))),
        ),
        ("gray", Box::new(gray)),
        (
            "gray-inverse",
            Box::new(move |x| (0..nn).find(|&z| gray(z) == x).unwrap()),
        ),
    ];
    for (p, f) in &cases {
        let a = preset(p, n).unwrap();
        for x in 0..nn {
            assert_eq!(a.apply(x), f(x), "{p} x={x}");
        }
        let input = Data::from_u32(&(0..nn).collect::<Vec<_>>());
        for v in ["tiled", "seed-ulp"] {
            let r = run(&with_preset(p), v, input.clone(), false);
            assert!(r.verified, "{p} {v}");
            for x in 0..nn {
                assert_eq!(r.output.bits[f(x) as usize], x, "{p} {v} x={x}");
            }
        }
    }
    // The shuffle interleaves the halves: [0, N/2, 1, N/2+1, …].
    let r = run(
        &with_preset("shuffle"),
        "tiled",
        Data::from_u32(&(0..16).collect::<Vec<_>>()),
        false,
    );
    assert_eq!(
        r.output.bits,
        [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    );
    // random-bpc is a permutation matrix, random is invertible and not (usually) a BPC; both seeded.
    assert!(preset("random-bpc:5", 12).unwrap().is_permutation());
    assert_eq!(
        preset("random:5", 12).unwrap(),
        preset("random:5", 12).unwrap()
    );
    assert!(preset("random:5", 12).unwrap().is_invertible());
    assert_ne!(
        preset("random:5", 12).unwrap(),
        preset("random:6", 12).unwrap()
    );
    // Transpose 2^7 × 2^7 on the GPU, as a matrix transposition of the data.
    let input = random_data(1 << 14, DType::F32, 4, true);
    let r = run(&with_preset("transpose:7,7"), "tiled", input.clone(), false);
    for row in 0..128 {
        for col in 0..128 {
            assert_eq!(r.output.bits[col * 128 + row], input.bits[row * 128 + col]);
        }
    }
}

#[test]
fn pass_counts_stay_within_the_bounds() {
    let p = Params::default();
    let mut ulp_counts = std::collections::BTreeMap::new();
    for n in [11usize, 14, 17, 20, 24, 28] {
        for s in 0..40u64 {
            for bpc in [false, true] {
                let a = if bpc {
                    BitMatrix::random_bpc(n, s)
                } else {
                    BitMatrix::random_invertible(n, s)
                };
                let t = Affine { a, c: s as u32 & 7 };
                let plu = plan::build(bmmc::Variant::SeedPlu, &t, &p).unwrap();
                let ulp = plan::build(bmmc::Variant::SeedUlp, &t, &p).unwrap();
                let tiled = plan::build(bmmc::Variant::Tiled, &t, &p).unwrap();
                assert!(plu.passes.len() <= 7, "plu n={n}: {}", plu.passes.len());
                assert!(ulp.passes.len() <= 6, "ulp n={n}: {}", ulp.passes.len());
                assert!(tiled.passes.len() <= 2);
                if bpc {
                    assert_eq!(tiled.passes.len(), 1);
                    // The BPC part follows Cormen: 1 + 2·ceil(rank_m / (m − b)) passes, within the bound.
                    let rm = plu.bound.expect("seed plans state their bound").rank_m;
                    assert_eq!(plu.passes.len(), 1 + 2 * rm.div_ceil(p.m - p.b));
                    assert!(
                        plu.passes.len()
                            <= plu
                                .bound
                                .expect("seed plans state their bound")
                                .bound_passes
                    );
                } else {
                    *ulp_counts.entry(ulp.passes.len()).or_insert(0) += 1;
                }
                assert_eq!(plu.composed(n), t);
                assert_eq!(ulp.composed(n), t);
                assert_eq!(tiled.composed(n), t);
            }
        }
    }
    // "4 typical" for U·L·P on random matrices.
    let typical = ulp_counts.get(&4).copied().unwrap_or(0);
    assert!(
        typical * 2 > ulp_counts.values().sum::<i32>(),
        "{ulp_counts:?}"
    );
}

#[test]
fn bad_matrices_are_clear_errors() {
    let input = Data::from_u32(&(0..8).collect::<Vec<_>>());
    let err =
        |o: AlgoOptions, input: Data| try_run(&o, "tiled", input, false).unwrap_err().to_string();
    let m = |s: &str| {
        AlgoOptions::Bmmc(Options {
            matrix: Some(s.into()),
            ..Default::default()
        })
    };
    let e = err(m("110;011;101"), input.clone());
    assert!(
        e.contains("singular") && e.contains("row 2 = row 0 + row 1"),
        "{e}"
    );
    let e = err(m("1000;0100;0010;0001"), input.clone());
    assert!(e.contains("4 rows") && e.contains("log2 N = 3"), "{e}");
    let e = err(m("100;01;001"), input.clone());
    assert!(e.contains("malformed") && e.contains("row 1"), "{e}");
    let e = err(m("100;0x0;001"), input.clone());
    assert!(e.contains("malformed") && e.contains("'x'"), "{e}");
    let e = err(with_preset("nope"), input.clone());
    assert!(e.contains("unknown preset"), "{e}");
    let e = err(with_preset("transpose:2,2"), input.clone());
    assert!(e.contains("2^4 elements"), "{e}");
    let e = err(
        AlgoOptions::Bmmc(Options {
            complement: 8,
            ..Default::default()
        }),
        input.clone(),
    );
    assert!(e.contains("--complement 8"), "{e}");
    let e = err(with_preset("identity"), Data::from_u32(&[1, 2, 3]));
    assert!(e.contains("power of two"), "{e}");
}

#[test]
fn bitrev_tiled_variant_uses_the_bpc_kernel() {
    let bitrev = AlgoOptions::Bitrev(Default::default());
    for k in [0u32, 1, 3, 5, 8, 11, 16, 19] {
        let input = random_data(1 << k, DType::I32, k as u64, false);
        let want = stagewise::algo::bitrev::model::naive(&input.bits);
        let r = run(&bitrev, "tiled", input, k == 8);
        assert!(r.verified, "k={k}: {:?}", r.mismatch);
        assert_eq!(r.output.bits, want, "k={k}");
        assert_eq!(r.passes.len(), 1);
    }
}

#[test]
fn stats_answer_the_seeds_question() {
    // Exact by enumeration: n = 7 (5040 permutations); m = 7 ≥ n → everything is one pass.
    let v = serde_json::to_value(stats::stats(7, 0, 1).unwrap()).unwrap();
    assert_eq!(v["permutations"], 5040);
    let v = serde_json::to_value(stats::stats(10, 0, 1).unwrap()).unwrap();
    assert_eq!(v["permutations"], 3_628_800);
    // n = 10 = m: no crossing, 1 pass.
    assert_eq!(v["passes"]["seed-plu"][0]["value"], 1);
    // Sampling agrees with the hypergeometric law.
    let v = serde_json::to_value(stats::stats(20, 4000, 7).unwrap()).unwrap();
    let le = v["p_rank_m_le_window"].as_f64().unwrap();
    let exact = v["p_rank_m_le_window_exact"].as_f64().unwrap();
    assert!((le - exact).abs() < 0.03, "{le} vs {exact}");
    let total: u64 = v["passes"]["seed-plu"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 4000);
    assert!(stats::stats(1, 10, 1).is_err());
    // With m = 6, b = 3 the enumeration of all 9! permutations is meaningful and equals the
    // hypergeometric law exactly.
    let v = serde_json::to_value(stats::stats_with(9, 0, 1, 6, 3).unwrap()).unwrap();
    assert_eq!(v["method"], "enumeration");
    for (h, ex) in [("rank_m", "rank_m_exact"), ("rank_b", "rank_b_exact")] {
        for e in v[h].as_array().unwrap() {
            let q = v[ex]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["value"] == e["value"])
                .unwrap();
            let (a, b) = (
                e["fraction"].as_f64().unwrap(),
                q["probability"].as_f64().unwrap(),
            );
            assert!((a - b).abs() < 1e-9, "{h} {}: {a} vs {b}", e["value"]);
        }
    }
    assert!(stats::stats_with(9, 0, 1, 3, 3).is_err());
}

#[test]
fn cli_contract() {
    let v = run_ok(&[
        "run",
        "bmmc",
        "--preset",
        "transpose:2,3",
        "--variant",
        "seed-ulp",
        "--json",
        "--trace",
    ]);
    assert_eq!(
        v["n"], 32,
        "the length comes from the matrix (iota example)"
    );
    assert_eq!(v["verified"], true);
    let pc = v["pass_count"].as_u64().unwrap();
    assert_eq!(v["plan"].as_array().unwrap().len() as u64, pc);
    assert_eq!(v["stages"].as_array().unwrap().len() as u64, pc + 1);
    for p in v["plan"].as_array().unwrap() {
        assert!(p["label"].is_string() && p["kind"].is_string());
        assert_eq!(p["matrix"].as_array().unwrap().len(), 5);
    }
    let out = bin()
        .args([
            "run",
            "bmmc",
            "--matrix",
            "01;10",
            "--complement",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // x → swap bits, then ⊕ 1: 0→1, 1→3, 2→0, 3→2  ⇒ out = [2, 0, 3, 1]
    assert_eq!(v["output"], serde_json::json!([2, 0, 3, 1]));
    let out = bin()
        .args(["run", "bmmc", "--matrix", "11;11", "--n", "4"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("row 1 = row 0"), "{err}");
    let out = bin()
        .args(["bmmc-stats", "--n", "6", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["permutations"], 720);
    assert_eq!(v["method"], "enumeration");
}

#[test]
fn view_draws_every_tab() {
    use eframe::egui;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use stagewise::ui::views::{self, ViewState};
    // 2^11: the strip's textures stay within the test renderer's 2048-pixel limit.
    let input = Data::from_u32(&(0..1u32 << 11).collect::<Vec<_>>());
    let result = run(&with_preset("random:3"), "seed-ulp", input, true);
    let last = result.stages.len() - 1;
    let mut state = ViewState::default();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1200.0, 800.0))
        .wgpu()
        .build_ui(move |ui| views::show(ui, &result, last, 7, &mut state));
    harness.run();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    for tab in ["Plan", "Permuted image", "Matrix editor", "rank statistics"] {
        harness.get_by_label(tab).click();
        harness.run();
        let img = harness.render().expect("render");
        assert!(img.width() > 0);
        let _ = img.save(dir.join(format!("bmmc-{}.png", tab.replace(' ', "-"))));
    }
    // The editor's status for the loaded matrix.
    harness.get_by_label("Matrix editor").click();
    harness.run();
    assert!(harness.query_by_label("invertible").is_some());
}

/// The tiled kernel's access pattern, checked on its tables (invisible on lavapipe, decisive on a
/// real GPU): every 32 lanes of the word kernel read 32 consecutive words and write 32 consecutive
/// words, every 8 lanes of the vector kernel read and write 8 consecutive vectors (both: whole
/// 128-byte segments), and the workgroup-memory stores and loads of 32 lanes hit 32 distinct banks
/// (the XOR swizzle; the vector kernel's a word of each vector at a time).
#[test]
fn tiled_tables_are_coalesced_and_bank_conflict_free() {
    use stagewise::algo::bmmc::kernels::gpu_pass;
    use stagewise::algo::bmmc::plan::Kernel;
    let limits = wgpu::Limits {
        max_compute_workgroup_storage_size: 49152,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..Default::default()
    };
    let apply = |cols: &[u32], v: u32| {
        cols.iter()
            .enumerate()
            .fold(0, |a, (i, &c)| if v >> i & 1 == 1 { a ^ c } else { a })
    };
    let banks = |cols: &[u32], lane: &dyn Fn(u32) -> u32| {
        let mut b: Vec<u32> = (0..32).map(|l| apply(cols, lane(l)) & 31).collect();
        b.sort_unstable();
        b.dedup();
        b.len()
    };
    let mut checked = [0; 2];
    for n in [12usize, 16, 20, 23, 28] {
        for s in 0..30u64 {
            let mut targets = vec![
                BitMatrix::random_invertible(n, s),
                BitMatrix::random_bpc(n, s),
            ];
            if s == 0 {
                targets.push(preset("bit-reverse", n).unwrap());
                targets.push(preset("transpose", n).unwrap());
            }
            for a in targets {
                let t = Affine { a, c: 0 };
                for vector in [1, 4] {
                    let params = Params {
                        vector: Some(vector),
                        ..Params::default()
                    };
                    let plan = plan::build(bmmc::Variant::Tiled, &t, &params).unwrap();
                    for p in &plan.passes {
                        let Kernel::Tiled { tin, .. } = &p.kernel else {
                            panic!("tiled plan with a {} pass", p.kernel.kind())
                        };
                        let tb = tin.len();
                        let gb = n - tb;
                        let g = gpu_pass(p, n, &limits, &params).unwrap();
                        assert_eq!(g.entry, if vector == 4 { "tiled4" } else { "tiled" });
                        let tab = &g.table;
                        let (rk, pk, wk, lm) = (
                            &tab[0..tb],
                            &tab[tb + gb..2 * tb + gb],
                            &tab[2 * tb + gb..3 * tb + gb],
                            &tab[3 * tb + 2 * gb..4 * tb + 2 * gb],
                        );
                        let what = format!("n={n} s={s} {} vector {vector}", p.label);
                        if vector == 1 {
                            for lane in 0..32u32 {
                                assert_eq!(apply(rk, lane), lane, "reads: 32 consecutive words");
                                assert_eq!(apply(wk, lane), lane, "writes: 32 consecutive words");
                            }
                            assert_eq!(banks(pk, &|l| l), 32, "stores: 32 banks ({what})");
                            assert_eq!(banks(lm, &|l| l), 32, "loads: 32 banks ({what})");
                        } else {
                            for lane in 0..32u32 {
                                let (k, seg) = (lane << 2, (lane >> 3) << 5);
                                assert_eq!(apply(rk, k) & 31, k & 31, "reads: 128-byte segments");
                                assert_eq!(apply(rk, k) & !31, apply(rk, seg), "({what})");
                                assert_eq!(apply(wk, k) & 31, k & 31, "writes: 128-byte segments");
                                assert_eq!(apply(wk, k) & !31, apply(wk, seg), "({what})");
                            }
                            for i in 0..4 {
                                let lane = |l: u32| l << 2 | i;
                                assert_eq!(banks(pk, &lane), 32, "stores: 32 banks ({what})");
                                assert_eq!(banks(lm, &lane), 32, "loads: 32 banks ({what})");
                            }
                        }
                        checked[(vector == 4) as usize] += 1;
                    }
                }
            }
        }
    }
    assert!(checked.iter().all(|&c| c > 300), "{checked:?}");
}

/// From 2^23 words a two-pass BMMC's first pass runs small tiles with its own thread cap: that
/// path against the model, on two types with a complement.
#[test]
fn a_large_two_pass_bmmc_matches_the_model() {
    let _ = gpu();
    let n = 23usize;
    for (seed, dtype) in [(31u64, DType::U32), (32, DType::F32)] {
        let a = BitMatrix::random_invertible(n, seed);
        let c = 0x5A5A5 & ((1u32 << n) - 1);
        let t = Affine { a: a.clone(), c };
        let p = plan::build(bmmc::Variant::Tiled, &t, &Params::default()).unwrap();
        assert!(
            matches!(
                p.passes[0].kernel,
                plan::Kernel::Tiled {
                    threads_log: Some(_),
                    ..
                }
            ),
            "the small-tile first pass"
        );
        let input = random_data(1 << n, dtype, seed, true);
        let want = direct(&a, c, &input.bits);
        let r = run(&bmmc(&a, c), "tiled", input, false);
        assert!(r.verified, "seed {seed}: {:?}", r.mismatch);
        assert_eq!(r.output.bits, want, "seed {seed}");
    }
}
