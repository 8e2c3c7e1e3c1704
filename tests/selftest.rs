//! `stagewise selftest`: one round covers every algorithm and variant and exits 0; a planted wrong
//! output (STAGEWISE_FAULT=wrong-output) is reported as a failure with a `stagewise run …` command
//! the CLI accepts, and the selftest exits 1. With wisdom the cases take its choices, say so,
//! and still verify; with `--no-wisdom` nothing is filled.
mod common;

use common::{Scratch, bin, run_ok};
use serde_json::Value;

/// Every (algorithm, variant) of `stagewise list --json`.
fn listed() -> Vec<(String, String)> {
    let l = run_ok(&["list", "--json"]);
    let mut v = Vec::new();
    for a in l["algorithms"].as_array().unwrap() {
        for var in a["variants"].as_array().unwrap() {
            v.push((
                a["name"].as_str().unwrap().to_string(),
                var["name"].as_str().unwrap().to_string(),
            ));
        }
    }
    v
}

fn selftest(args: &[&str], fault: bool) -> std::process::Output {
    let mut c = bin();
    c.arg("selftest").args(args);
    if fault {
        c.env("STAGEWISE_FAULT", "wrong-output");
    } else {
        c.env_remove("STAGEWISE_FAULT");
    }
    c.output().expect("run stagewise")
}

/// The words of a reproducing command after `stagewise` (the commands quote nothing they need).
fn words(cmd: &str) -> Vec<String> {
    let w: Vec<String> = cmd.split_whitespace().map(String::from).collect();
    assert_eq!(w[0], "stagewise", "{cmd}");
    assert_eq!(w[1], "run", "{cmd}");
    assert!(!cmd.contains('\''), "a quoted word in {cmd}");
    w[1..].to_vec()
}

#[test]
fn one_round_covers_every_variant_and_passes() {
    let o = selftest(&["--minutes", "0", "--seed", "3"], false);
    let text = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{text}\nstderr:\n{err}");
    assert!(text.contains("no failures"), "{text}");
    assert!(
        err.lines().any(|l| l.starts_with("selftest: ")),
        "no progress line on stderr: {err}"
    );
    let pairs = listed();
    assert!(pairs.len() >= 20, "{pairs:?}");
    // --minutes 0: exactly one case of every variant, each a row of the table.
    for (a, v) in &pairs {
        let row = text
            .lines()
            .find(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() == 6 && w[0] == a && w[1] == v
            })
            .unwrap_or_else(|| panic!("no row for {a}/{v} in\n{text}"));
        let n: Vec<usize> = row
            .split_whitespace()
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(n[0], 1, "{row}");
        assert_eq!(n[0], n[1] + n[2] + n[3], "{row}");
        assert_eq!(n[2], 0, "{row}");
    }
    let total = text.lines().find(|l| l.starts_with("total")).unwrap();
    let want = pairs.len().to_string();
    assert_eq!(
        total.split_whitespace().nth(1),
        Some(want.as_str()),
        "{total}"
    );
}

#[test]
fn a_planted_wrong_output_fails_with_its_command() {
    // JSON: the failure, its reason and its command.
    let o = selftest(&["--cases", "3", "--seed", "5", "--json"], true);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["cases"], 3);
    assert_eq!(v["failed"], 1, "{v}");
    let f = &v["failures"][0];
    let reason = f["reason"].as_str().unwrap();
    assert!(reason.contains("differs from the CPU model"), "{reason}");
    let cmd = f["command"].as_str().unwrap();
    let w = words(cmd);
    assert_eq!(w[1], f["algorithm"].as_str().unwrap(), "{cmd}");
    assert!(cmd.contains(&format!("--variant {}", f["variant"].as_str().unwrap())));
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algorithm"] == f["algorithm"] && r["variant"] == f["variant"])
        .unwrap();
    assert_eq!(row["failed"], 1);

    // The command is accepted by the CLI and passes without the fault ...
    let ok = bin()
        .args(&w)
        .env_remove("STAGEWISE_FAULT")
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{cmd}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // ... and with it fails as the selftest saw it (exit 3: differs from the model).
    let bad = bin()
        .args(&w)
        .env("STAGEWISE_FAULT", "wrong-output")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(3), "{cmd}");

    // Text: the table's failed count, the FAILED line and the command under it.
    let o = selftest(&["--cases", "3", "--seed", "5"], true);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("FAILED "))
        .unwrap_or_else(|| panic!("no FAILED line in\n{text}"));
    assert!(lines[i].contains("differs from the CPU model"), "{text}");
    assert_eq!(lines[i + 1].trim(), cmd, "{text}");
    assert!(text.contains("1 failure(s):"), "{text}");
}

#[test]
fn bad_options_are_one_line_errors() {
    for (args, code, names) in [
        (&["--minutes", "-1"][..], 1, "--minutes"),
        (&["--minutes", "1", "--cases", "2"][..], 2, "--cases"),
        (&["--cases", "x"][..], 2, "--cases"),
        (&["--cases", "0"][..], 1, "--cases must be at least 1"),
    ] {
        let o = selftest(args, false);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("stagewise: error: "), "{err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

/// A wisdom file for this adapter: the tiled BMMC's tile and threads, the decoupled scan's
/// workgroup (choices every adapter takes, WebGPU's default limits included), in its folder.
fn wisdom_file() -> (Scratch, std::path::PathBuf) {
    let w = common::wisdom_for(
        common::gpu(),
        &[
            (
                "bmmc",
                "tiled",
                serde_json::json!({}),
                serde_json::json!({"tile_bits": 10, "tile_threads": 128}),
            ),
            (
                "scan",
                "decoupled",
                serde_json::json!({"exclusive": false}),
                serde_json::json!({"workgroup_size": 128, "per_thread": 2}),
            ),
        ],
    );
    let d = Scratch::new("selftest");
    let p = d.join("wisdom.json");
    w.write(&p).unwrap();
    (d, p)
}

#[test]
fn wisdom_fills_the_cases_which_still_verify_and_say_so() {
    let (_dir, file) = wisdom_file();
    let f = file.to_str().unwrap();
    // One round: every variant, the tiled BMMC with wisdom's threads (its cases never set them).
    let o = selftest(
        &["--minutes", "0", "--seed", "3", "--json", "--wisdom", f],
        false,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["failed"], 0, "{v}");
    assert_eq!(v["wisdom"]["from"], f, "{v}");
    let took = v["wisdom"]["cases"].as_array().unwrap();
    let tiled = took
        .iter()
        .find(|c| c["algorithm"] == "bmmc" && c["variant"] == "tiled")
        .unwrap_or_else(|| panic!("the tiled BMMC took no wisdom: {}", v["wisdom"]));
    assert_eq!(tiled["options"]["tile_threads"], 128, "{tiled}");
    for c in took {
        assert_ne!(c["outcome"], "failed", "{c}");
        let row = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["algorithm"] == c["algorithm"] && r["variant"] == c["variant"])
            .unwrap();
        assert!(row["wisdom"].as_u64().unwrap() >= 1, "{row}");
    }
    // The command spells wisdom's choice out: it reproduces the case with no wisdom at all.
    let cmd = tiled["command"].as_str().unwrap();
    assert!(cmd.contains("--tile-threads 128"), "{cmd}");
    if tiled["refused"].is_null() {
        let mut w = words(cmd);
        w.extend(["--json".into(), "--no-wisdom".into()]);
        let r: Value = serde_json::from_slice(&bin().args(&w).output().unwrap().stdout).unwrap();
        assert_eq!(r["verified"], true, "{cmd}");
    }

    // The text says it too.
    let o = selftest(&["--cases", "8", "--wisdom", f], false);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("wisdom ({f}): ")), "{text}");
    assert!(text.contains("wisdom bmmc/tiled: "), "{text}");

    // --no-wisdom: nothing filled, the JSON says none was used.
    let o = selftest(&["--cases", "8", "--json", "--no-wisdom"], false);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["wisdom"].is_null(), "{v}");
    assert!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["wisdom"] == 0)
    );
    let _ = std::fs::remove_file(&file);
}
