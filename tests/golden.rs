//! The traced JSON of every algorithm and variant at small N, compared byte for byte with the corpus
//! in tests/golden/ (recorded on lavapipe, the CI adapter). This keeps `run … --trace --json`
//! byte-compatible through refactors of the rooms and of their stage annotations. Only what the
//! adapter decides is blanked: its name, the pass times and the "timing" flag.
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

/// Blank what depends on the adapter rather than on the algorithm.
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

/// The arguments split on spaces; an argument of `--matrix` keeps its `;` (no shell here).
fn run_args(case: &str) -> Vec<String> {
    let mut a: Vec<String> = ["stagewise", "run"].map(String::from).to_vec();
    a.extend(case.split(' ').map(String::from));
    a.extend(["--trace", "--json"].map(String::from));
    a
}

fn traced_json(case: &str) -> String {
    let cli = Cli::try_parse_from(run_args(case)).unwrap_or_else(|e| panic!("{case}: {e}"));
    let Some(Cmd::Run(args)) = &cli.cmd else {
        panic!("{case}: not a run command")
    };
    let req = prepare(args).unwrap_or_else(|e| panic!("{case}: {e}"));
    let res =
        algo::run(args.algo.algo(), common::gpu(), &req).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(res.verified, "{case}: {:?}", res.mismatch);
    assert!(!res.stages.is_empty(), "{case}: no stages");
    normalise(res.to_json(true)).to_string()
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
        if want.trim_end() != got {
            let at = want
                .bytes()
                .zip(got.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(got.len()));
            let lo = at.saturating_sub(80);
            bad.push(format!(
                "{case}: differs at byte {at}\n  want …{}\n  got  …{}",
                &want[lo..(at + 80).min(want.len())],
                &got[lo..(at + 80).min(got.len())]
            ));
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
