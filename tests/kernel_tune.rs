//! Your kernel tuned (docs/CLI.md "kernel", `tune kernel`): a kernel's `override` constants are
//! its parameters — `run kernel --override NAME=V` changes what it computes and the workgroup size
//! it is dispatched with; `tune kernel` verifies every combination before timing it, so its best
//! row verified and a planted wrong candidate is never chosen; a combination past the adapter's
//! limits is refused, never run; bad input is one line; a saved choice is taken by a later run of
//! the same file and loses to an explicit `--override`. Small N: any adapter, lavapipe included.
mod common;

use common::{Scratch, bin};
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Run stagewise with its data (kernel wisdom) in `data`.
fn stagewise(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut cmd = bin();
    // Wisdom on (bin() turns it off), in a data folder of the test's own.
    cmd.args(args)
        .env("XDG_DATA_HOME", data)
        .env_remove("STAGEWISE_WISDOM");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("spawn stagewise");
    let out = Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into(),
        stderr: String::from_utf8_lossy(&o.stderr).into(),
    };
    assert!(!out.stderr.contains("panicked"), "{args:?}: {}", out.stderr);
    out
}

fn json(o: &Out) -> Value {
    serde_json::from_str(o.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", o.stdout, o.stderr))
}

fn tmpdir(name: &str) -> Scratch {
    Scratch::new(&format!("ktune-{name}"))
}

/// A copy with two overrides: the workgroup size and the elements an invocation copies a turn
/// of its grid-stride loop (every combination is right; their speeds differ).
const TWO: &str = "override WG: u32 = 64;
override ITEMS: u32 = 1;
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
var<workgroup> staged: array<u32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
    let n = arrayLength(&src);
    let threads = nwg.x * nwg.y * WG;
    let t = gid.x + gid.y * nwg.x * WG;
    staged[l] = 0u;
    for (var base = t * ITEMS; base < n; base += threads * ITEMS) {
        for (var k = 0u; k < ITEMS; k++) {
            if (base + k < n) { dst[base + k] = src[base + k]; }
        }
    }
}
";

/// One override changes the op: a copy, or (REVERSE) the bit-reversal; no default for BITS-free
/// use, so a missing value can be tested with NEED.
const SWITCH: &str = "override REVERSE: bool = false;
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = arrayLength(&src);
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= n) { return; }
    let bits = countTrailingZeros(n);
    var j = i;
    if (REVERSE) { j = reverseBits(i) >> (32u - bits); }
    dst[i] = src[j];
}
";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// `tune kernel … --json` at a small size.
fn tune(data: &Path, k: &str, lists: &[&str], more: &[&str], env: &[(&str, &str)]) -> Out {
    let mut args = vec!["tune", "kernel", "--wgsl", k, "--expect", "copy"];
    for l in lists {
        args.extend(["--override", l]);
    }
    args.extend(["--n", "4096", "--reps", "3", "--json"]);
    args.extend(more);
    stagewise(data, &args, env)
}

/// A row's override value as text.
fn val(row: &Value, name: &str) -> String {
    row["overrides"][name].to_string()
}

#[test]
fn tune_kernel_times_every_combination_and_its_best_row_verified() {
    let d = tmpdir("two");
    let k = write(&d, "two.wgsl", TWO);
    let o = tune(&d, &k, &["WG=32,64", "ITEMS=1,4"], &[], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["axes"], serde_json::json!(["WG", "ITEMS"]));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "2 × 2 combinations");
    let combos: Vec<(String, String)> = rows
        .iter()
        .map(|r| (val(r, "WG"), val(r, "ITEMS")))
        .collect();
    for want in [("32", "1"), ("32", "4"), ("64", "1"), ("64", "4")] {
        assert!(
            combos.contains(&(want.0.into(), want.1.into())),
            "{want:?} in {combos:?}"
        );
    }
    for r in rows {
        assert_eq!(r["status"], "timed", "every combination is right: {r}");
        assert!(r["ms"].as_f64().unwrap() > 0.0);
        assert!(r["fraction_of_copy"].as_f64().unwrap() > 0.0);
        // The built-in kernel for `copy` (copy vec4) was timed beside it.
        assert!(r["vs_builtin"].as_f64().unwrap() > 0.0);
    }
    let best = v["best"].as_u64().unwrap() as usize;
    assert_eq!(rows[best]["status"], "timed");
    let fastest = rows
        .iter()
        .map(|r| r["ms"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(rows[best]["ms"].as_f64().unwrap(), fastest);
    assert_eq!(v["copy"]["fraction_of_copy"], 1.0);
    assert_eq!(v["builtin"]["name"], "copy vec4");
    assert!(v["hash"].as_str().unwrap().starts_with("fnv1a64:"));
    // The text: a column per override, the references, the rows, the best.
    let o = stagewise(
        &d,
        &[
            "tune",
            "kernel",
            "--wgsl",
            &k,
            "--expect",
            "copy",
            "--override",
            "WG=32,64",
            "--override",
            "ITEMS=1,4",
            "--n",
            "4096",
            "--reps",
            "2",
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let head = o.stdout.lines().nth(1).unwrap();
    for col in [
        "WG",
        "ITEMS",
        "ms",
        "GB/s",
        "× copy",
        "× built-in",
        "verified",
    ] {
        assert!(head.contains(col), "{col} in {head}");
    }
    assert!(o.stdout.contains("(same-run copy)"), "{}", o.stdout);
    assert!(o.stdout.contains("(built-in copy vec4)"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("(best)").count(), 1, "{}", o.stdout);
    assert!(
        o.stdout.lines().any(|l| l.starts_with("best: WG=")),
        "{}",
        o.stdout
    );
}

#[test]
fn a_planted_wrong_candidate_is_never_chosen() {
    let d = tmpdir("planted");
    let k = write(&d, "two.wgsl", TWO);
    // The planted candidate's check sees one wrong element and its time would be a hundredth:
    // it would win if anything were timed before it was verified.
    for planted in ["32", "64"] {
        let fault = format!("wrong-candidate:WG={planted}");
        let o = tune(&d, &k, &["WG=32,64"], &[], &[("STAGEWISE_FAULT", &fault)]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v = json(&o);
        let rows = v["rows"].as_array().unwrap();
        let bad = rows.iter().find(|r| val(r, "WG") == planted).unwrap();
        assert_eq!(bad["status"], "wrong", "{bad}");
        assert!(
            bad["ms"].is_null(),
            "a wrong candidate is never timed: {bad}"
        );
        assert!(bad["reason"].as_str().unwrap().contains("differ"), "{bad}");
        let best = &rows[v["best"].as_u64().unwrap() as usize];
        assert_ne!(val(best, "WG"), planted);
        assert_eq!(best["status"], "timed");
    }
}

#[test]
fn a_combination_past_the_limits_is_refused_not_run() {
    let d = tmpdir("limits");
    let k = write(&d, "two.wgsl", TWO);
    // 8192 invocations a workgroup and 32 KiB of workgroup memory: past every adapter (naga's own
    // bound is 16384 a dimension).
    let o = tune(&d, &k, &["WG=64,8192"], &[], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    let rows = v["rows"].as_array().unwrap();
    let past = rows.iter().find(|r| val(r, "WG") == "8192").unwrap();
    assert_eq!(past["status"], "refused", "{past}");
    assert!(past["ms"].is_null());
    let why = past["reason"].as_str().unwrap();
    assert!(
        why.contains("max_compute_") && why.contains("not run"),
        "{why}"
    );
    assert!(why.contains("WG=8192"), "{why}");
    let best = &rows[v["best"].as_u64().unwrap() as usize];
    assert_eq!(val(best, "WG"), "64");
    // The same shape given to `run kernel` is one line, exit 1, never dispatched.
    let o = stagewise(
        &d,
        &[
            "run",
            "kernel",
            "--wgsl",
            &k,
            "--n",
            "256",
            "--override",
            "WG=8192",
        ],
        &[],
    );
    assert_eq!(o.code, 1);
    assert_eq!(o.stderr.trim_end().lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains("not run"), "{}", o.stderr);
}

#[test]
fn an_override_changes_what_the_kernel_computes_and_its_dispatch() {
    let d = tmpdir("switch");
    let k = write(&d, "switch.wgsl", SWITCH);
    let run = |more: &[&str]| {
        let mut a = vec!["run", "kernel", "--wgsl", &k, "--n", "1024", "--json"];
        a.extend(more);
        stagewise(&d, &a, &[])
    };
    let o = run(&["--expect", "copy"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["verified"], true);
    assert_eq!(
        v["kernel"]["overrides"],
        serde_json::json!({"REVERSE": false, "WG": 64})
    );
    let o = run(&["--expect", "bitrev", "--override", "REVERSE=true"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(json(&o)["verified"], true);
    // The wrong expectation for the value: exit 3.
    let o = run(&["--expect", "copy", "--override", "REVERSE=true"]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert_eq!(json(&o)["verified"], false);
    // An overridable workgroup size: the dispatch uses the resolved one.
    let o = run(&["--expect", "copy", "--override", "WG=128"]);
    let v = json(&o);
    assert_eq!(v["verified"], true);
    let disp = &v["kernel"]["dispatches"][0];
    assert_eq!(disp["workgroup_size"], serde_json::json!([128, 1, 1]));
    assert_eq!(disp["workgroups"], 8);
    // Traced and lensed: the recording build takes the values too.
    let o = run(&[
        "--expect",
        "bitrev",
        "--override",
        "REVERSE=true",
        "--override",
        "WG=32",
        "--trace",
        "--lens",
        "--lens-warp",
        "32",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["verified"], true);
    let sites = v["lens_sites"].as_array().unwrap();
    // The lines are the file's: `dst[i] = src[j];` is line 14.
    assert!(sites.iter().any(|s| s["line"] == 14), "{sites:?}");
}

/// A command that must fail with exit 1 and one line; returns it.
fn one_line(d: &Path, args: &[&str]) -> String {
    let o = stagewise(d, args, &[]);
    assert_eq!(o.code, 1, "{args:?}: exit {}: {}", o.code, o.stderr);
    let line = o.stderr.trim_end();
    assert_eq!(line.lines().count(), 1, "{args:?}: {}", o.stderr);
    assert!(line.starts_with("stagewise: error: "), "{line}");
    line.to_string()
}

#[test]
fn bad_override_input_is_one_line() {
    let d = tmpdir("bad");
    let k = write(&d, "switch.wgsl", SWITCH);
    let need = write(
        &d,
        "need.wgsl",
        &SWITCH.replace("override WG: u32 = 64;", "override WG: u32;"),
    );
    let plain = write(
        &d,
        "plain.wgsl",
        &SWITCH
            .replace(
                "override REVERSE: bool = false;\noverride WG: u32 = 64;\n",
                "",
            )
            .replace("REVERSE", "false")
            .replace("WG", "64"),
    );
    let run = |k: &str, ov: &str| {
        one_line(
            &d,
            &[
                "run",
                "kernel",
                "--wgsl",
                k,
                "--n",
                "64",
                "--expect",
                "copy",
                "--override",
                ov,
            ],
        )
    };
    let e = run(&k, "NOPE=1");
    assert!(e.contains("no override 'NOPE'"), "{e}");
    assert!(e.contains("REVERSE: bool = false, WG: u32 = 64"), "{e}");
    assert!(run(&k, "WG=abc").contains("--override WG=abc: not a u32"));
    assert!(run(&k, "WG=-4").contains("not a u32"));
    assert!(run(&k, "REVERSE=1").contains("not a bool"));
    assert!(run(&k, "WG").contains("expected NAME=VALUE"));
    assert!(run(&k, "WG=32,64").contains("lists of values are for `tune kernel`"));
    assert!(run(&k, "WG=0").contains("does not compile"));
    let e = one_line(
        &d,
        &[
            "run", "kernel", "--wgsl", &need, "--n", "64", "--expect", "copy",
        ],
    );
    assert!(
        e.contains("override 'WG' has no default: give it with --override WG=VALUE"),
        "{e}"
    );
    assert!(run(&plain, "WG=1").contains("it declares none"));
    let tune = |k: &str, more: &[&str]| {
        let mut a = vec!["tune", "kernel", "--wgsl", k, "--n", "64"];
        a.extend(more);
        one_line(&d, &a)
    };
    assert!(tune(&k, &["--override", "WG=32,64"]).contains("needs --expect OP"));
    assert!(tune(&plain, &["--expect", "copy"]).contains("declares no `override`"));
    let many: Vec<String> = (1..=300).map(|i| i.to_string()).collect();
    let list = format!("WG={}", many.join(","));
    let e = tune(&k, &["--expect", "copy", "--override", &list]);
    assert!(e.contains("300 combinations, over 256"), "{e}");
    let e = tune(
        &need,
        &["--expect", "copy", "--override", "REVERSE=true,false"],
    );
    assert!(e.contains("override 'WG' has no default"), "{e}");
    let e = tune(
        &k,
        &[
            "--expect",
            "copy",
            "--override",
            "WG=32,64",
            "--override",
            "WG=128",
        ],
    );
    assert!(e.contains("given both"), "{e}");
}

#[test]
fn saved_wisdom_is_taken_by_a_later_run_and_loses_to_an_explicit_override() {
    let d = tmpdir("wisdom");
    let k = write(&d, "two.wgsl", TWO);
    let o = tune(&d, &k, &["WG=32,128"], &["--save"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    let saved = PathBuf::from(v["saved"].as_str().expect("saved"));
    assert!(saved.starts_with(&d) && saved.exists(), "{saved:?}");
    let best = val(&v["rows"][v["best"].as_u64().unwrap() as usize], "WG");
    let other = if best == "32" { "128" } else { "32" };
    let run = |k: &str, more: &[&str]| {
        let mut a = vec![
            "run", "kernel", "--wgsl", k, "--n", "512", "--expect", "copy",
        ];
        a.extend(more);
        stagewise(&d, &a, &[])
    };
    // A later run of the same file takes the choice, and says so.
    let o = run(&k, &["--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["kernel"]["overrides"]["WG"].to_string(), best);
    assert_eq!(v["wisdom"]["options"]["WG"].to_string(), best, "{v}");
    let o = run(&k, &[]);
    assert!(
        o.stdout
            .lines()
            .any(|l| l.starts_with("wisdom (") && l.ends_with(&format!("WG={best}"))),
        "{}",
        o.stdout
    );
    // `bench kernel` too.
    let o = stagewise(
        &d,
        &[
            "bench",
            "kernel",
            "--wgsl",
            &k,
            "--expect",
            "copy",
            "--n",
            "1024",
            "--reps",
            "2",
            "--warmup-ms",
            "0",
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains(&format!("WG={best}")), "{}", o.stdout);
    // ... unless given: `bench kernel --override` times that value, and no wisdom is said.
    let o = stagewise(
        &d,
        &[
            "bench",
            "kernel",
            "--wgsl",
            &k,
            "--expect",
            "copy",
            "--n",
            "1024",
            "--reps",
            "2",
            "--warmup-ms",
            "0",
            "--override",
            &format!("WG={other}"),
            "--json",
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    assert!(v.get("wisdom").is_none(), "{v}");
    assert_eq!(v["rows"][0]["algorithm"], "kernel");
    // An explicit --override wins, and no wisdom is reported.
    let o = run(&k, &["--json", "--override", &format!("WG={other}")]);
    let v = json(&o);
    assert_eq!(v["kernel"]["overrides"]["WG"].to_string(), other);
    assert!(v.get("wisdom").is_none(), "{v}");
    // --no-wisdom reads none; another text (one comment more) is another kernel.
    let v = json(&run(&k, &["--json", "--no-wisdom"]));
    assert!(v.get("wisdom").is_none() && v["kernel"]["overrides"]["WG"] == 64);
    let edited = write(&d, "edited.wgsl", &format!("// edited\n{TWO}"));
    let v = json(&run(&edited, &["--json"]));
    assert!(v.get("wisdom").is_none() && v["kernel"]["overrides"]["WG"] == 64);
}
