//! The CLI contract (docs/CLI.md): exact JSON shapes, exit codes, one-line errors.
mod common;

use common::{Scratch, bin, run_ok};

/// Runs a command that must fail; returns (exit code, stderr).
fn run_err(args: &[&str], stdin: Option<&str>) -> (i32, String) {
    use std::io::Write;
    let mut cmd = bin();
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn stagewise");
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let code = out.status.code().unwrap_or(-1);
    assert_ne!(code, 0, "{args:?} should fail");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{args:?}: {err}"
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line on stderr, got: {err}"
    );
    (code, err)
}

#[test]
fn staged_example_prints_demo_b_and_the_seed_result() {
    let v = run_ok(&[
        "run",
        "bitrev",
        "--variant",
        "staged",
        "--n",
        "16",
        "--fill",
        "example",
        "--trace",
        "--json",
    ]);
    assert_eq!(v["algorithm"], "bitrev");
    assert_eq!(v["variant"], "staged");
    assert_eq!(v["dtype"], "u32");
    assert_eq!(v["n"], 16);
    assert!(v["adapter"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(v["verified"], true);
    let want = [41, 62, 69, 81, 34, 5, 78, 61, 67, 64, 24, 27, 0, 45, 58, 91];
    assert_eq!(v["output"], serde_json::json!(want));
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 5);
    assert_eq!(
        stages[0]["data"],
        serde_json::json!([41, 67, 34, 0, 69, 24, 78, 58, 62, 64, 5, 45, 81, 27, 61, 91])
    );
    assert_eq!(stages[3]["data"], serde_json::json!(want));
    for (s, block) in stages.iter().zip([16, 8, 4, 2, 1]) {
        assert!(s["label"].is_string());
        assert_eq!(s["block_size"], block);
    }
    let passes = v["passes"].as_array().unwrap();
    assert_eq!(passes.len(), 8);
    for p in passes {
        assert!(p["label"].is_string());
        assert!(
            p["gpu_ms"].as_f64().is_some_and(|t| t >= 0.0),
            "lavapipe has timestamps: {p}"
        );
    }
}

#[test]
fn json_has_no_stages_without_trace_and_reads_files() {
    let dir = Scratch::new("cli");
    let f = dir.join("in.json");
    std::fs::write(&f, "[1.5, \"-NaN\", \"inf\", -0.0]").unwrap();
    let v = run_ok(&[
        "run",
        "bitrev",
        "--dtype",
        "f32",
        "--input",
        f.to_str().unwrap(),
        "--json",
    ]);
    assert!(v.get("stages").is_none());
    assert_eq!(v["output"], serde_json::json!([1.5, "inf", "-NaN", -0.0]));
    assert_eq!(v["verified"], true);
    let f = dir.join("in.csv");
    std::fs::write(&f, "-1,2\n-3,4\n").unwrap();
    let v = run_ok(&[
        "run",
        "bitrev",
        "--variant",
        "naive",
        "--dtype",
        "i32",
        "--input",
        f.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["output"], serde_json::json!([-1, -3, 2, 4]));
}

/// A length is checked once (`RunRequest::new`, the binding limit when the run starts): each bad
/// N gives exactly one error, the message it always gave.
#[test]
fn a_bad_length_is_one_error() {
    let too_large = "bitrev: N = 67108864 needs a 256 MiB storage buffer, above this adapter's \
                     binding limit of 128 MiB (max_storage_buffer_binding_size), i.e. at most \
                     33554432 32-bit elements";
    for (n, limits, want) in [
        ("0", None, "n must be at least 1"),
        (
            "12",
            None,
            "bitrev needs N to be a power of two; got N = 12 (nearest: 8 or 16)",
        ),
        ("67108864", Some("webgpu"), too_large),
    ] {
        let mut cmd = bin();
        if let Some(l) = limits {
            cmd.env("STAGEWISE_LIMITS", l);
        }
        let out = cmd
            .args(["run", "bitrev", "--n", n, "--fill", "iota"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "N = {n}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err, format!("stagewise: error: {want}\n"), "N = {n}");
        assert!(out.stdout.is_empty(), "N = {n}");
    }
}

/// `run --spec FILE` (or `-`, stdin) runs exactly what the flags it stands for run; a flag that
/// describes the run too is refused with one line naming it.
#[test]
fn a_spec_runs_what_its_flags_would() {
    let dir = Scratch::new("spec");
    // The pass times differ from run to run; everything else must not.
    let untimed = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("passes");
        v
    };
    let cases: [(&str, &[&str]); 2] = [
        (
            r#"{"algorithm": "bitrev", "variant": "staged", "input": {"from": "generate", "n": 64, "fill": "iota"}, "mode": "trace"}"#,
            &[
                "bitrev",
                "--variant",
                "staged",
                "--n",
                "64",
                "--fill",
                "iota",
                "--trace",
            ],
        ),
        (
            r#"{"algorithm": "oddeven", "descending": true, "variant": "merge-split", "dtype": "i32", "input": {"from": "generate", "n": 300, "seed": 9}}"#,
            &[
                "oddeven",
                "--descending",
                "--variant",
                "merge-split",
                "--dtype",
                "i32",
                "--n",
                "300",
                "--seed",
                "9",
            ],
        ),
    ];
    for (i, (spec, flags)) in cases.iter().enumerate() {
        let file = dir.join(format!("spec{i}.json"));
        std::fs::write(&file, spec).unwrap();
        let by_flags = untimed(run_ok(&[&["run"], *flags, &["--json"]].concat()));
        let by_file = untimed(run_ok(&["run", "--spec", file.to_str().unwrap(), "--json"]));
        assert_eq!(by_file, by_flags, "{spec}");
        let mut cmd = bin();
        cmd.args(["run", "--spec", "-", "--json"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), spec.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{spec} on stdin");
        let by_stdin = untimed(serde_json::from_slice(&out.stdout).unwrap());
        assert_eq!(by_stdin, by_flags, "{spec} on stdin");
    }
    let file = dir.join("spec0.json");
    let file = file.to_str().unwrap();
    for (args, flag) in [
        (vec!["run", "--spec", file, "--n", "8"], "--n"),
        (vec!["run", "bitrev", "--spec", file], "an algorithm"),
        (vec!["run", "--spec", file, "--trace"], "--trace"),
    ] {
        let (code, e) = run_err(&args, None);
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(
            e.trim_end(),
            format!(
                "stagewise: error: {flag} cannot be combined with --spec: the spec describes the \
                 whole run (only --json and --save-output go beside it)"
            ),
            "{args:?}"
        );
    }
    let (_, e) = run_err(&["run", "--spec", "-"], Some("{\"algorithm\": \"nosuch\"}"));
    assert!(
        e.starts_with("stagewise: error: run spec '-': line 1"),
        "{e}"
    );
}

#[test]
fn errors_are_one_clear_line() {
    let (_, e) = run_err(&["run", "bitrev", "--n", "12"], None);
    assert!(e.contains("power of two") && e.contains("12"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--input", "-"], Some("1 2\n3 x3\n"));
    assert!(e.contains("input line 2: 'x3' is not a u32"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--input", "-"], Some("  \n"));
    assert!(e.contains("empty"), "{e}");
    let (_, e) = run_err(&["run", "nosuch"], None);
    assert!(e.contains("nosuch"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--variant", "nope"], None);
    assert!(e.contains("unknown variant 'nope'"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--input", "/no/such/file.txt"], None);
    assert!(e.contains("/no/such/file.txt"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--n", "1073741824"], None);
    assert!(e.contains("max_storage_buffer_binding_size"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--adapter", "no-such-gpu"], None);
    assert!(e.contains("no-such-gpu"), "{e}");
    let (_, e) = run_err(&["run", "bitrev", "--dtype", "f64"], None);
    assert!(e.contains("f64"), "{e}");
    // The FFT's element type is its own: another is refused, not dropped (f32 itself runs).
    for cmd in ["run", "bench"] {
        let (code, e) = run_err(&[cmd, "fft", "--size", "8", "--dtype", "u32"], None);
        assert_eq!(code, 1);
        assert!(
            e.contains("fft takes f32 values only; --dtype u32 does not apply"),
            "{e}"
        );
    }
    let v = run_ok(&["run", "fft", "--size", "8", "--dtype", "f32", "--json"]);
    assert_eq!(v["dtype"], "f32");
    let (_, e) = run_err(
        &[
            "bench",
            "--suite",
            "bench/suite.toml",
            "--out",
            "x.json",
            "--dtype",
            "f32",
        ],
        None,
    );
    assert!(e.contains("from the suite file"), "{e}");
}

#[test]
fn a_bench_that_measures_nothing_fails() {
    // n = 0 is refused before any GPU work, as `run` refuses it.
    let (code, e) = run_err(&["bench", "copy", "--n", "0"], None);
    assert_eq!(code, 1);
    assert!(e.contains("n must be at least 1"), "{e}");
    // Every variant refuses 3 elements: each skip is reported, then the sweep fails.
    let out = bin()
        .args([
            "bench",
            "bitrev",
            "--n",
            "3",
            "--reps",
            "1",
            "--warmup-ms",
            "0",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.matches("stagewise: skipped bitrev").count(), 3, "{err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("stagewise: error: nothing was measured: all 3 case(s) were skipped"),
        "{err}"
    );
}

#[test]
fn list_and_adapters() {
    let v = run_ok(&["list", "--json"]);
    let algos = v["algorithms"].as_array().unwrap();
    let bitrev = algos
        .iter()
        .find(|a| a["name"] == "bitrev")
        .expect("bitrev listed");
    let variants: Vec<&str> = bitrev["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(variants.contains(&"naive") && variants.contains(&"staged"));
    assert!(algos.iter().any(|a| a["name"] == "copy"));
    let v = run_ok(&["adapters", "--json"]);
    assert!(
        !v["adapters"].as_array().unwrap().is_empty(),
        "CI has lavapipe"
    );
}

#[test]
fn bench_rows_are_sane() {
    let v = run_ok(&[
        "bench", "bitrev", "--log-n", "15..17", "--reps", "10", "--warmup", "2", "--json",
    ]);
    assert!(v["adapter"].is_string());
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "3 variants (naive, staged, tiled) x 3 sizes");
    for r in rows {
        let n = r["n"].as_u64().unwrap();
        assert_eq!(r["algorithm"], "bitrev");
        assert_eq!(r["bytes"].as_u64().unwrap(), 8 * n);
        for k in ["median_ms", "gbps", "copy_gbps"] {
            assert!(r[k].as_f64().unwrap() > 0.0, "{k}: {r}");
        }
        let f = r["fraction_of_copy"].as_f64().unwrap();
        assert!(f > 0.0 && f <= 1.5, "{r}");
        let g = r["gbps"].as_f64().unwrap();
        let t = r["median_ms"].as_f64().unwrap();
        assert!((g - r["bytes"].as_f64().unwrap() / (t * 1e6)).abs() / g < 1e-6);
    }
    let v = run_ok(&[
        "bench",
        "copy",
        "--variant",
        "vec4",
        "--n",
        "262144",
        "--reps",
        "25",
        "--json",
    ]);
    // The same kernel twice: near 1 on an idle GPU; on lavapipe the CPU is shared with the tests
    // running beside this one, so only a loose band (it once measured 1.67 under load).
    let f = v["rows"][0]["fraction_of_copy"].as_f64().unwrap();
    assert!((0.1..=10.0).contains(&f), "copy vs itself: {f}");
}

/// Every timed path warms up by wall time first (the suite's rule): by default 300 ms before the
/// copy and before every case, then the counted `--warmup` runs; each row says what was done.
#[test]
fn bench_warms_up_by_time_by_default() {
    let base = [
        "bench",
        "copy",
        "--variant",
        "vec4",
        "--n",
        "4096",
        "--reps",
        "3",
        "--json",
    ];
    let v = run_ok(&base);
    assert_eq!(v["min_warmup_ms"], 300.0, "{v}");
    assert_eq!(v["warmup"], 5);
    let r = &v["rows"][0];
    for k in ["warmup_ms", "copy_warmup_ms"] {
        let ms = r[k].as_f64().unwrap();
        assert!(ms >= 300.0, "{k} = {ms}: under the default 300 ms");
    }
    // At least one run by time, then the 5 counted ones.
    assert!(r["warmup_runs"].as_u64().unwrap() > 5, "{r}");

    // --warmup-ms sets it; 0 leaves only the counted runs.
    let v = run_ok(&[&base[..], &["--warmup-ms", "50", "--warmup", "2"]].concat());
    assert_eq!(v["min_warmup_ms"], 50.0);
    let ms = v["rows"][0]["warmup_ms"].as_f64().unwrap();
    assert!((50.0..300.0).contains(&ms), "{ms}");
    let v = run_ok(&[&base[..], &["--warmup-ms", "0", "--warmup", "2"]].concat());
    assert_eq!(v["rows"][0]["warmup_runs"], 2, "{v}");

    for bad in ["-1", "60001", "nan", "ms"] {
        let (code, err) = run_err(&[&base[..], &["--warmup-ms", bad]].concat(), None);
        assert_eq!(code, if bad == "ms" { 2 } else { 1 }, "{bad}: {err}");
        assert!(err.contains("--warmup-ms"), "{bad}: {err}");
    }
}

/// `stagewise bench copy --variant vec4 --n N` with `more`, under `STAGEWISE_FAULT=fault`: its
/// stdout (it must succeed).
fn bench_copy(n: &str, fault: Option<&str>, more: &[&str]) -> String {
    let mut c = bin();
    c.args(["bench", "copy", "--variant", "vec4", "--n", n])
        .args(more);
    if let Some(f) = fault {
        c.env("STAGEWISE_FAULT", f);
    }
    let o = c.output().expect("run stagewise");
    assert!(
        o.status.success(),
        "{n} {fault:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// A ratio to the same-run copy above 1.05 where the copy moves >= 256 MiB is flagged suspect in
/// the JSON, the text and the CSV; planted with STAGEWISE_FAULT=copy-time:F (the copy's time x F).
#[test]
fn a_ratio_over_copy_past_the_caches_is_suspect() {
    let bench = |n: &str, fault: Option<&str>, more: &[&str]| {
        let quick = ["--reps", "2", "--warmup", "1", "--warmup-ms", "0"];
        bench_copy(n, fault, &[&quick[..], more].concat())
    };
    let json = |s: String| -> serde_json::Value { serde_json::from_str(&s).unwrap() };
    // 2^25 u32: the copy reads and writes 256 MiB.
    let big = "33554432";
    let v = json(bench(big, Some("copy-time:4"), &["--json"]));
    let r = &v["rows"][0];
    assert!(r["fraction_of_copy"].as_f64().unwrap() > 1.05, "{r}");
    assert_eq!(r["suspect"], true, "{r}");
    let dir = Scratch::new("suspect");
    let csv = dir.join("rows.csv");
    let text = bench(big, Some("copy-time:4"), &["--csv", csv.to_str().unwrap()]);
    let row = text.lines().find(|l| l.starts_with("copy")).expect("a row");
    assert!(row.ends_with("  suspect"), "{text}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    let (head, line) = rows.split_once('\n').unwrap();
    assert!(head.ends_with(",warmup_ms,note"), "{head}");
    assert!(line.trim_end().ends_with(",suspect"), "{rows}");

    // Not suspect: the same ratio where the copy fits the caches (2^24: 128 MiB), a ratio below
    // 1.05 past them, and a plain run.
    let v = json(bench("16777216", Some("copy-time:4"), &["--json"]));
    assert!(v["rows"][0]["fraction_of_copy"].as_f64().unwrap() > 1.05);
    assert_eq!(v["rows"][0]["suspect"], false, "{v}");
    let v = json(bench(big, Some("copy-time:0.25"), &["--json"]));
    assert!(v["rows"][0]["fraction_of_copy"].as_f64().unwrap() < 1.05);
    assert_eq!(v["rows"][0]["suspect"], false, "{v}");
    let text = bench("65536", None, &[]);
    assert!(!text.contains("suspect"), "{text}");

    let (code, err) = run_err_env(
        &["bench", "copy", "--n", "4096", "--reps", "2"],
        &[("STAGEWISE_FAULT", "copy-time:0")],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("STAGEWISE_FAULT=copy-time:0: expected a factor > 0"),
        "{err}"
    );
}

/// Repetitions whose timestamps read under a tenth of what the clock check measured just before
/// (STAGEWISE_FAULT=clock-reps:F: the repetitions' timestamps x F, the check's as they are) are
/// not reported: the case is timed by the wall clock and says so.
#[test]
fn repetitions_timed_short_of_the_clock_check_are_timed_by_the_wall_clock() {
    let bench = |fault: Option<&str>| {
        let out = bench_copy("1048576", fault, &["--reps", "5", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["rows"][0].clone()
    };
    let plain = bench(None);
    let short = bench(Some("clock-reps:0.001"));
    assert!(plain.get("wall_clock").is_none(), "{plain}");
    assert_eq!(short["wall_clock"], true, "{short}");
    // The wall clock's GB/s is the work's (the bug read 1000x): not past a few x of the plain
    // run's. Below it by more is no bug: a wall clock on a busy host also counts the waits (an
    // H200 beside three other test binaries read a 6 µs copy at 0.19 ms).
    let r = short["gbps"].as_f64().unwrap() / plain["gbps"].as_f64().unwrap();
    assert!((0.001..5.0).contains(&r), "{r}: {short} against {plain}");
}

#[test]
fn bench_all_covers_every_algorithm() {
    let v = run_ok(&[
        "bench", "--all", "--n", "4096", "--reps", "3", "--warmup", "1", "--json",
    ]);
    let rows = v["rows"].as_array().unwrap();
    for algo in ["copy", "bitrev", "bmmc", "oddeven", "fft", "scan"] {
        assert!(
            rows.iter().any(|r| r["algorithm"] == algo),
            "{algo} has a row"
        );
    }
    for r in rows {
        assert!(
            r["median_ms"].as_f64().unwrap() > 0.0 && r["copy_gbps"].as_f64().unwrap() > 0.0,
            "{r}"
        );
        assert!(r["fraction_of_copy"].as_f64().unwrap() > 0.0, "{r}");
    }
}

#[test]
fn oddeven_sorts_nan_keys_by_the_documented_total_order() {
    // f32 keys sort by the total order -NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN.
    let dir = Scratch::new("nan");
    let f = dir.join("nan.txt");
    std::fs::write(&f, "nan 1 -nan -inf inf -0 0 -1 2.5 nan -7 3\n").unwrap();
    for variant in ["transposition", "global", "merge-split", "batcher"] {
        let v = run_ok(&[
            "run",
            "oddeven",
            "--variant",
            variant,
            "--dtype",
            "f32",
            "--input",
            f.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(v["verified"], true, "{variant}");
        assert_eq!(
            v["output"],
            serde_json::json!([
                "-NaN", "-inf", -7.0, -1.0, -0.0, 0.0, 1.0, 2.5, 3.0, "inf", "NaN", "NaN"
            ]),
            "{variant}"
        );
    }
}

#[test]
fn options_a_variant_ignores_are_one_line_errors() {
    let (code, err) = run_err(
        &[
            "run",
            "scan",
            "--variant",
            "ladder",
            "--workgroup-size",
            "128",
        ],
        None,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "--workgroup-size 128 applies to --variant decoupled or reduce-then-scan only"
        ),
        "{err}"
    );
    let (code, err) = run_err(
        &["run", "scan", "--variant", "blelloch", "--per-thread", "2"],
        None,
    );
    assert_eq!(code, 1);
    assert!(err.contains("--per-thread 2 applies to"), "{err}");
    // Where they apply, they are accepted.
    let v = run_ok(&[
        "run",
        "scan",
        "--variant",
        "reduce-then-scan",
        "--workgroup-size",
        "64",
        "--per-thread",
        "2",
        "--json",
    ]);
    assert_eq!(v["verified"], true);
    for bad in ["4", "14", "40"] {
        let (code, err) = run_err(
            &["run", "bmmc", "--variant", "tiled", "--tile-bits", bad],
            None,
        );
        assert_eq!(code, 1);
        assert!(
            err.contains("--tile-bits must be in 5..=13") && err.contains(bad),
            "{err}"
        );
    }
}

/// `run` with environment variables; must fail: (exit code, stderr).
fn run_err_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = bin();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run stagewise");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let code = out.status.code().unwrap_or(-1);
    assert_ne!(code, 0, "{args:?} {env:?} should fail");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    (code, err)
}

#[test]
fn out_of_memory_is_one_line_and_a_nonzero_exit() {
    // The injected fault: the first allocation fails as wgpu reports running out of memory.
    let (code, err) = run_err_env(
        &["run", "bitrev", "--n", "1024", "--fill", "iota"],
        &[("STAGEWISE_FAULT", "oom")],
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("stagewise: error: GPU out of memory: ") && err.contains("use a smaller N"),
        "{err}"
    );
    assert!(
        err.contains("allocating ") && err.contains("KiB"),
        "names the buffer and size: {err}"
    );
    // A memory budget of 16 MiB on any adapter (the percentage of its max_buffer_size that is
    // 16 MiB): allocations above it fail before wgpu is asked.
    let max = common::gpu().limits.max_buffer_size as f64;
    let pct = format!("{}", 16.0 * 1048576.0 * 100.0 / max);
    let (code, err) = run_err_env(
        &[
            "run",
            "scan",
            "--variant",
            "decoupled",
            "--n",
            "8388608",
            "--fill",
            "iota",
        ],
        &[("STAGEWISE_MEMORY_BUDGET", pct.as_str())],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("GPU out of memory: ")
            && err.contains(&format!(
                "STAGEWISE_MEMORY_BUDGET = {pct}% of max_buffer_size"
            ))
            && err.contains("use a smaller N"),
        "{err}"
    );
    // Under the budget the same run works.
    let out = bin()
        .args([
            "run",
            "scan",
            "--variant",
            "decoupled",
            "--n",
            "4096",
            "--fill",
            "iota",
            "--json",
        ])
        .env("STAGEWISE_MEMORY_BUDGET", &pct)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A wait for the GPU longer than STAGEWISE_GPU_TIMEOUT is one error line and exit 1, not a hang
/// (a kernel that never ends); a bad value is a warning and the default.
#[test]
fn a_gpu_wait_past_the_limit_is_an_error() {
    // 22 ladder passes over 2^22 words outlast a microsecond on any adapter.
    let args = [
        "run",
        "scan",
        "--variant",
        "ladder",
        "--n",
        "4194304",
        "--fill",
        "iota",
    ];
    let (code, err) = run_err_env(&args, &[("STAGEWISE_GPU_TIMEOUT", "0.000001")]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("stagewise: error: GPU: the GPU has not finished after ")
            && err.contains("a kernel that never ends?"),
        "{err}"
    );
    let out = bin()
        .args(["run", "scan", "--n", "1000", "--fill", "iota", "--json"])
        .env("STAGEWISE_GPU_TIMEOUT", "soon")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("STAGEWISE_GPU_TIMEOUT=soon: not a duration in seconds above 0"),
        "{err}"
    );
}
