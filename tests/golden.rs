//! The traced JSON of every algorithm and variant at small N, compared with the corpus in
//! tests/golden/ (recorded on lavapipe, the CI adapter). This keeps `run … --trace --json`
//! compatible through refactors of the rooms and of their stage annotations, on any adapter: what
//! the algorithm decides (every integer, every key and string, the order of everything) must match
//! exactly; what the adapter decides is normalised ([`normalise`]: its name, the pass times, the
//! tile and tile order it picks from its limits and kind, whether subgroups scan a tile) or, for
//! the FFT's floats (each device's `sin`/`cos` and fused multiply-adds), compared within a
//! tolerance ([`same`]). On lavapipe every byte still matches.
//! `UPDATE_GOLDEN=true cargo test --test golden` rewrites the corpus (review the diff).
mod common;

use clap::Parser;
use serde_json::Value;
use stagewise::algo;
use stagewise::cli::{Cli, Cmd, prepare};
use std::path::PathBuf;

/// `stagewise run` arguments (`--trace --json` added). Small N: the whole corpus is a few hundred KB.
const CASES: &[&str] = &[
    "copy --variant vec4 --n 16",
    "copy --variant scalar --n 13 --dtype f32",
    "bitrev --variant staged --fill example",
    "bitrev --variant naive --fill example",
    "bitrev --variant tiled --n 64",
    "bitrev --variant staged --n 32 --dtype f32",
    "bitrev --variant staged --n 8 --dtype i32 --fill reverse",
    "bmmc --preset transpose:2,2 --variant tiled",
    "bmmc --preset transpose:3,2 --variant naive",
    "bmmc --preset random:5 --n 64 --variant seed-plu",
    "bmmc --preset random:5 --n 64 --variant seed-ulp",
    "bmmc --preset random:3 --n 256 --variant auto",
    "bmmc --preset shuffle --n 32 --variant tiled --tile-bits 5",
    "bmmc --preset gray --n 16 --complement 5",
    "bmmc --matrix 01;10 --complement 1",
    "oddeven --fill example",
    "oddeven --variant transposition --n 13 --dtype f32",
    "oddeven --variant transposition --n 16 --segment 4 --descending",
    "oddeven --variant global --n 10 --dtype i32",
    "oddeven --variant merge-split --n 12 --block 4",
    "oddeven --variant merge-split --n 37 --block 2 --dtype f32",
    "oddeven --variant batcher --n 16 --segment 8",
    "oddeven --variant batcher --n 37 --dtype f32 --descending",
    "oddeven --variant batcher --n 64 --dtype i32 --fill reverse",
    "oddeven --variant batcher --n 20 --fill small",
    "fft",
    "fft --order raw",
    "fft --size 8 --elements-per-invocation 2 --signal impulse",
    "fft --size 16 --inverse --signal square",
    "fft --size 16 --real",
    "fft --size 16 --real-pair",
    "fft --size 8 --batch 2 --signal noise",
    "fft --size 32 --order raw --elements-per-invocation 4",
    "scan --variant ladder --n 16",
    "scan --variant ladder --n 13 --exclusive",
    "scan --variant folded --n 16",
    "scan --variant hillis-steele --n 11 --dtype i32",
    "scan --variant blelloch --n 16",
    "scan --variant blelloch --n 13 --exclusive --dtype f32",
    "scan --variant reduce-then-scan --n 40 --workgroup-size 8",
    "scan --variant decoupled --n 40 --workgroup-size 8",
    "scan --variant decoupled --n 16 --exclusive",
    "scan --variant sequential --n 9",
];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn file_name(case: &str) -> String {
    let words: Vec<&str> = case
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    format!("{}.json", words.join("_"))
}

/// Top-level fields the adapter decides, not the algorithm: the adapter's name; the batcher's tile
/// (from the device's workgroup memory); the decoupled scan's tile order (`dispatch` on GPUs,
/// `counter` on CPU adapters) and tile scan (`subgroup` where the device has subgroups); the FFT's
/// error against the CPU model (checked by `verified`).
const ADAPTER_DECIDED: &[&str] = &["tile", "tile_order", "tile_scan", "max_rel_error"];

/// Blank what the run's adapter and clock decide on every adapter: its name, the pass times.
fn normalise(mut v: Value) -> Value {
    let o = v.as_object_mut().expect("one JSON object");
    o.insert("adapter".into(), Value::from("-"));
    o.remove("timing");
    for p in o
        .get_mut("passes")
        .and_then(Value::as_array_mut)
        .expect("passes")
    {
        p["gpu_ms"] = Value::Null;
    }
    v
}

/// [`normalise`], and blank the fields another adapter may decide otherwise ([`ADAPTER_DECIDED`]).
fn adapter_blind(mut v: Value) -> Value {
    let o = v.as_object_mut().expect("one JSON object");
    for key in ADAPTER_DECIDED {
        if let Some(x) = o.get_mut(*key) {
            *x = Value::from("-");
        }
    }
    v
}

/// Whether the device is lavapipe, the corpus's adapter: there every byte must match.
fn is_corpus_adapter() -> bool {
    let info = &common::gpu().info;
    info.device_type == wgpu::DeviceType::Cpu && info.name.contains("llvmpipe")
}

/// The largest magnitude of any number inside `v`.
fn max_abs(v: &Value) -> f64 {
    match v {
        Value::Number(x) => x.as_f64().map_or(0.0, f64::abs),
        Value::Array(a) => a.iter().map(max_abs).fold(0.0, f64::max),
        Value::Object(o) => o.values().map(max_abs).fold(0.0, f64::max),
        _ => 0.0,
    }
}

/// Relative tolerance of the FFT's floats against the largest magnitude of the array they are in
/// (f32 transforms of at most 32 points are good to a few ulps of it).
const FFT_TOLERANCE: f64 = 1e-5;

/// Whether `got` is `want`: keys, strings, booleans, the order of everything and every integer
/// exactly; with `tol`, floats within `tol` of the largest magnitude in the outermost array that
/// holds them (`scale`). Returns where they first differ.
fn same(
    want: &Value,
    got: &Value,
    at: &str,
    tol: Option<f64>,
    scale: Option<f64>,
) -> Result<(), String> {
    let differ = || Err(format!("{at}: want {}, got {}", short(want), short(got)));
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            if w.keys().ne(g.keys()) {
                return Err(format!(
                    "{at}: keys differ: want {:?}, got {:?}",
                    w.keys().collect::<Vec<_>>(),
                    g.keys().collect::<Vec<_>>()
                ));
            }
            for (k, wv) in w {
                same(wv, &g[k], &format!("{at}.{k}"), tol, scale)?;
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                return Err(format!("{at}: {} items, got {}", w.len(), g.len()));
            }
            let scale = scale.or_else(|| tol.map(|_| max_abs(want).max(max_abs(got))));
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                same(wv, gv, &format!("{at}[{i}]"), tol, scale)?;
            }
            Ok(())
        }
        (Value::Number(w), Value::Number(g)) => {
            let integers = !w.is_f64() && !g.is_f64();
            match (tol, w.as_f64(), g.as_f64()) {
                _ if w == g => Ok(()),
                (Some(t), Some(a), Some(b)) if !integers => {
                    let bound = t * scale.unwrap_or(a.abs().max(b.abs())).max(1.0);
                    if (a - b).abs() <= bound {
                        Ok(())
                    } else {
                        differ()
                    }
                }
                _ => differ(),
            }
        }
        _ if want == got => Ok(()),
        _ => differ(),
    }
}

/// A value for a message: its JSON, cut to 120 characters.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// Where two byte strings first differ, with 80 bytes of context.
fn first_difference(case: &str, want: &str, got: &str) -> String {
    let at = want
        .bytes()
        .zip(got.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let lo = at.saturating_sub(80);
    let cut = |s: &str| s.get(lo..(at + 80).min(s.len())).unwrap_or("").to_string();
    format!(
        "{case}: differs at byte {at}\n  want …{}\n  got  …{}",
        cut(want),
        cut(got)
    )
}

/// The arguments split on spaces; an argument of `--matrix` keeps its `;` (no shell here).
fn run_args(case: &str) -> Vec<String> {
    let mut a: Vec<String> = ["stagewise", "run"].map(String::from).to_vec();
    a.extend(case.split(' ').map(String::from));
    a.extend(["--trace", "--json"].map(String::from));
    a
}

fn traced_json(case: &str) -> Value {
    let cli = Cli::try_parse_from(run_args(case)).unwrap_or_else(|e| panic!("{case}: {e}"));
    let Some(Cmd::Run(args)) = &cli.cmd else {
        panic!("{case}: not a run command")
    };
    let (opts, req) = prepare(args).unwrap_or_else(|e| panic!("{case}: {e}"));
    let res = algo::run(opts.algo(), common::gpu(), &req).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(res.verified, "{case}: {:?}", res.mismatch);
    assert!(!res.stages.is_empty(), "{case}: no stages");
    normalise(res.to_json(true))
}

#[test]
fn traced_json_matches_the_corpus() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "true" || v == "1");
    let dir = corpus_dir();
    let mut bad = Vec::new();
    for case in CASES {
        let got = traced_json(case);
        let path = dir.join(file_name(case));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, format!("{got}\n")).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=true records it)", path.display()));
        if is_corpus_adapter() {
            let got = got.to_string();
            if want.trim_end() != got {
                bad.push(first_difference(case, want.trim_end(), &got));
            }
            continue;
        }
        let want: Value =
            serde_json::from_str(&want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let tol = case.starts_with("fft").then_some(FFT_TOLERANCE);
        if let Err(e) = same(&adapter_blind(want), &adapter_blind(got), "", tol, None) {
            bad.push(format!("{case}: {e}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The binary prints the same bytes as the library (one case through the real CLI), and its text
/// trace lists the scan's reads.
#[test]
fn the_binary_prints_the_corpus_bytes() {
    let case = "scan --variant ladder --n 13 --exclusive";
    let out = common::bin().args(&run_args(case)[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = std::fs::read_to_string(corpus_dir().join(file_name(case))).unwrap();
    assert_eq!(normalise(v).to_string(), want.trim_end());

    let text = common::bin()
        .args([
            "run",
            "scan",
            "--variant",
            "ladder",
            "--n",
            "8",
            "--fill",
            "iota",
        ])
        .arg("--trace")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    // Phase p = 2 of the ladder: threads 2, 3, 6, 7 read 1, 1, 5, 5 (docs/CLI.md).
    assert!(
        text.lines()
            .any(|l| l.trim_start() == "reads (thread,source): 2,1 3,1 6,5 7,5"),
        "{text}"
    );
}

/// The comparison other adapters get: what the adapter decides is blind, the FFT's floats are
/// within the tolerance, everything else exact.
#[test]
fn off_lavapipe_only_what_the_adapter_decides_may_differ() {
    let load = |case: &str| -> Value {
        let text = std::fs::read_to_string(corpus_dir().join(file_name(case))).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let check = |want: &Value, got: &Value, tol| {
        same(
            &adapter_blind(want.clone()),
            &adapter_blind(got.clone()),
            "",
            tol,
            None,
        )
    };
    // The batcher's tile and the scan's tile order are the adapter's; the sorted keys are not.
    let batcher = load("oddeven --variant batcher --n 16 --segment 8");
    let mut other = batcher.clone();
    other["tile"] = Value::from(8192);
    assert_eq!(check(&batcher, &other, None), Ok(()));
    let mut wrong = batcher.clone();
    let out = wrong["output"].as_array_mut().unwrap();
    out.swap(0, 1);
    assert!(check(&batcher, &wrong, None).is_err());
    let scan = load("scan --variant decoupled --n 40 --workgroup-size 8");
    let mut other = scan.clone();
    other["tile_order"] = Value::from("dispatch");
    assert_eq!(check(&scan, &other, None), Ok(()));
    let mut wrong = scan.clone();
    wrong["tiles"] = Value::from(2);
    assert!(check(&scan, &wrong, None).is_err());

    // The FFT's floats: a few ulps of the largest value pass, a wrong value or a changed integer
    // (a thread's ownership) does not.
    let fft = load("fft --size 16 --real");
    let perturb = |v: &Value, by: f64| -> Value {
        let mut v = v.clone();
        let x = &mut v["output"][3][0];
        *x = Value::from(x.as_f64().unwrap() + by);
        v
    };
    let tol = Some(FFT_TOLERANCE);
    assert_eq!(check(&fft, &perturb(&fft, 1e-6), tol), Ok(()));
    assert!(check(&fft, &perturb(&fft, 1e-2), tol).is_err());
    assert!(check(&fft, &perturb(&fft, 1e-6), None).is_err());
    let mut owner = fft.clone();
    owner["stages"][0]["owner"][1] = Value::from(2);
    assert!(check(&fft, &owner, tol).is_err());
    let mut renamed = fft.clone();
    let o = renamed.as_object_mut().unwrap();
    let v = o.remove("holds").unwrap();
    o.insert("held".into(), v);
    assert!(check(&fft, &renamed, tol).is_err());
}
