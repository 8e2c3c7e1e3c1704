//! The workbench (`stagewise run|bench kernel --wgsl FILE`, docs/CLI.md "kernel"): a correct kernel
//! verifies, a wrong one exits 3 with the first differing index, a compile or contract error is
//! one line, a kernel with a known access pattern is lensed with the right counts and benched
//! beside the copy and the built-in kernel; every exercise's solution verifies and its starter
//! fails.
mod common;

use common::{Scratch, bin, run_ok};
use serde_json::Value;
use stagewise::algo::kernel::exercise::{Exercise, StarterFails};
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> Scratch {
    Scratch::new(&format!("kernel-{name}"))
}

/// `body` after the standard bindings (src, dst: array<u32>; params: Params), written to a file.
fn kernel(dir: &Path, name: &str, params: &str, body: &str) -> String {
    let text = format!(
        "struct Params {{ {params} }}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
{body}"
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const COPY: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i < params.n) { dst[i] = src[i]; }
}
";

/// (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let o = bin().args(args).output().expect("run stagewise");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// A run that must fail with exit 1 and one line on stderr; returns the line.
fn one_line_error(args: &[&str]) -> String {
    let (code, _, err) = run(args);
    assert_eq!(code, 1, "{args:?}: exit {code}: {err}");
    let line = err.trim_end();
    assert_eq!(line.lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(line.starts_with("stagewise: error: "), "{line}");
    assert!(!line.contains("panicked"), "{line}");
    line.to_string()
}

#[test]
fn a_correct_kernel_verifies() {
    let d = tmpdir("correct");
    let k = kernel(&d, "copy.wgsl", "n: u32", COPY);
    let v = run_ok(&[
        "run", "kernel", "--wgsl", &k, "--n", "1000", "--expect", "copy", "--json",
    ]);
    assert_eq!(v["algorithm"], "kernel");
    assert_eq!(v["verified"], true);
    assert_eq!(v["n"], 1000);
    assert_eq!(v["kernel"]["dispatches"][0]["workgroups"], 16);
    assert!(v.get("mismatch").is_none_or(Value::is_null));
    // Without --expect the output is unchecked, and says so.
    let v = run_ok(&["run", "kernel", "--wgsl", &k, "--n", "100", "--json"]);
    assert_eq!(v["verified"], false);
    assert!(v["unverified"].as_str().unwrap().contains("not checked"));
    // Without --dtype the kernel's own element type is used (here f32 by its declaration).
    let f = d.join("copyf.wgsl");
    let text = std::fs::read_to_string(&k)
        .unwrap()
        .replace("array<u32>", "array<f32>");
    std::fs::write(&f, text).unwrap();
    let f = f.to_str().unwrap();
    let v = run_ok(&[
        "run", "kernel", "--wgsl", f, "--n", "100", "--expect", "copy", "--json",
    ]);
    assert_eq!((&v["verified"], &v["dtype"]), (&true.into(), &"f32".into()));
    let v = run_ok(&[
        "bench",
        "kernel",
        "--wgsl",
        f,
        "--n",
        "4096",
        "--expect",
        "copy",
        "--reps",
        "2",
        "--warmup-ms",
        "0",
        "--json",
    ]);
    assert_eq!(v["dtype"], "f32", "{v}");
}

#[test]
fn a_wrong_kernel_exits_3_with_the_first_differing_index() {
    let d = tmpdir("wrong");
    let body = COPY.replace(
        "dst[i] = src[i];",
        "dst[i] = src[i] + select(0u, 1u, i == 37u || i == 90u);",
    );
    let k = kernel(&d, "wrong.wgsl", "n: u32", &body);
    let (code, out, err) = run(&[
        "run", "kernel", "--wgsl", &k, "--n", "1000", "--expect", "copy", "--json",
    ]);
    assert_eq!(code, 3, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verified"], false);
    let m = v["mismatch"].as_str().unwrap();
    assert!(
        m.starts_with("2 element(s) differ; first at index 37"),
        "{m}"
    );
    assert!(err.contains("first at index 37"), "{err}");
    // No loop in it: nothing about loop limits.
    assert!(!m.contains("loop"), "{m}");
}

/// lavapipe (llvmpipe) silently ends an invocation's loops after 65535 iterations in all
/// ([`stagewise::gpu::Gpu::loop_limit`]): a kernel that loops longer is wrong there, and the
/// mismatch says why. Other adapters run it to the end.
#[test]
fn a_kernel_looping_past_the_drivers_limit_is_wrong_there_and_says_why() {
    let d = tmpdir("loops");
    let body = "override ITERS: u32 = 1u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var c = 0u;
    for (var i = 0u; i < ITERS; i++) { c += 1u; }
    if (gid.x < params.n) { dst[gid.x] = src[gid.x] + (c - ITERS); }
}
";
    let k = kernel(&d, "loops.wgsl", "n: u32", body);
    let limit = common::gpu().loop_limit();
    for iters in [65_535u32, 65_536] {
        let o = format!("ITERS={iters}");
        let args = [
            "run",
            "kernel",
            "--wgsl",
            &k,
            "--n",
            "256",
            "--expect",
            "copy",
            "--override",
            &o,
            "--json",
        ];
        if limit.is_some_and(|l| iters > l) {
            let (code, out, err) = run(&args);
            assert_eq!(code, 3, "{err}");
            let v: Value = serde_json::from_str(&out).unwrap();
            let m = v["mismatch"].as_str().unwrap();
            assert!(
                m.contains("llvmpipe") && m.contains("65535 loop iterations"),
                "{m}"
            );
        } else {
            assert_eq!(run_ok(&args)["verified"], true, "{iters}");
        }
    }
}

#[test]
fn a_compile_error_is_file_line_col_and_nagas_message() {
    let d = tmpdir("compile");
    let k = kernel(
        &d,
        "broken.wgsl",
        "n: u32",
        &COPY.replace("src[i]; }", "src[i] }"),
    );
    let line = one_line_error(&["run", "kernel", "--wgsl", &k, "--n", "64"]);
    assert!(line.contains(&format!("{k}:8:41: expected `;`")), "{line}");
    // A validation error (naga's, past the parser) has its place too.
    let k = kernel(
        &d,
        "types.wgsl",
        "n: u32",
        &COPY.replace("dst[i] = src[i];", "dst[i] = 1.5;"),
    );
    let line = one_line_error(&["run", "kernel", "--wgsl", &k, "--n", "64"]);
    assert!(line.contains(&format!("{k}:8:")), "{line}");
}

#[test]
fn contract_errors_are_one_line() {
    let d = tmpdir("contract");
    let k = kernel(&d, "copy.wgsl", "n: u32", COPY);
    // (option, value, what the one line says)
    let cases = [
        (
            "--expect",
            "reverse",
            "--expect 'reverse': unknown operation",
        ),
        ("--passes", "5000", "--passes 5000: must be 1..=4096"),
        ("--passes", "many", "--passes 'many'"),
        ("--param", "tile=4", "no field 'tile'"),
        (
            "--entry",
            "nope",
            "--entry nope: no such compute entry point",
        ),
        ("--dtype", "f32", "the kernel's src and dst hold u32"),
        ("--scratch", "64", "declares no 'scratch'"),
        ("--expect", "fft:64", "needs complex elements"),
        (
            "--override",
            "TILE=4",
            "no override 'TILE' (it declares none)",
        ),
    ];
    for (opt, value, want) in cases {
        let a = ["run", "kernel", "--n", "64", "--wgsl", &k, opt, value];
        let line = one_line_error(&a);
        assert!(line.contains(want), "{a:?}: {line}");
    }
    // Bindings: a missing dst, an unknown name, params fields Stagewise cannot fill.
    let nodst = d.join("nodst.wgsl");
    std::fs::write(
        &nodst,
        "@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { src[g.x] = 1u; }",
    )
    .unwrap();
    let line = one_line_error(&["run", "kernel", "--wgsl", nodst.to_str().unwrap()]);
    assert!(line.contains("no binding 'dst'"), "{line}");
    let other = kernel(
        &d,
        "other.wgsl",
        "n: u32",
        &format!("@group(0) @binding(3) var<storage, read_write> foo: array<u32>;\n{COPY}"),
    );
    let line = one_line_error(&["run", "kernel", "--wgsl", &other]);
    assert!(
        line.contains("binding 'foo' (@group(0) @binding(3)) is not one Stagewise fills"),
        "{line}"
    );
    let tile = kernel(&d, "tile.wgsl", "n: u32, tile: u32", COPY);
    let line = one_line_error(&["run", "kernel", "--wgsl", &tile]);
    assert!(
        line.contains("params.tile: Stagewise fills n, log_n, pass_index and passes"),
        "{line}"
    );
    // ... which --param fills.
    run_ok(&[
        "run", "kernel", "--wgsl", &tile, "--param", "tile=4", "--expect", "copy", "--json",
    ]);
    let line = one_line_error(&["run", "kernel", "--n", "64"]);
    assert!(line.contains("kernel needs --wgsl FILE"), "{line}");
}

#[test]
fn entry_points_run_in_order_and_passes_ping_pong() {
    let d = tmpdir("entries");
    let body = "@compute @workgroup_size(64)
fn add1(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { dst[gid.x] = src[gid.x] + 1u; }
}
@compute @workgroup_size(64)
fn double(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { dst[gid.x] = src[gid.x] * 2u + params.pass_index * 0u; }
}
";
    let k = kernel(&d, "two.wgsl", "n: u32, pass_index: u32", body);
    let out = |args: &[&str]| -> Vec<u64> {
        let mut a = vec![
            "run", "kernel", "--wgsl", &k, "--n", "8", "--fill", "iota", "--json",
        ];
        a.extend(args);
        let v = run_ok(&a);
        v["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    // Default: every entry point in file order: (x + 1) * 2.
    assert_eq!(out(&[]), (0..8).map(|x| (x + 1) * 2).collect::<Vec<_>>());
    assert_eq!(
        out(&["--entry", "double,add1"]),
        (0..8).map(|x| x * 2 + 1).collect::<Vec<_>>()
    );
    // Three passes of double, two of add1, each reading the last one's output: 8x + 2.
    let v = run_ok(&[
        "run", "kernel", "--wgsl", &k, "--n", "8", "--fill", "iota", "--entry", "double",
        "--passes", "log_n", "--trace", "--json",
    ]);
    let got: Vec<u64> = v["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(got, (0..8).map(|x| x * 8).collect::<Vec<_>>());
    // Every pass read back: the input and one stage a pass.
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 4);
    assert_eq!(stages[1]["data"][1], 2);
    assert_eq!(stages[2]["data"][1], 4);
    assert!(
        stages[3]["narration"]
            .as_str()
            .unwrap()
            .contains("Pass 3 of 3 of 'double'")
    );
}

/// Sectors per request of every global site of pass 0: (kind, buffer, sectors / requests).
fn sectors(v: &Value) -> Vec<(String, String, f64)> {
    v["lens"][0]["global"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["kind"].as_str().unwrap().to_string(),
                g["buffer"].as_str().unwrap().to_string(),
                g["sectors"].as_f64().unwrap() / g["requests"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_stride_two_read_is_lensed_as_8_sectors_a_request() {
    let d = tmpdir("lens");
    let body = "@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < params.n) {
        dst[i] = src[(2u * i) % params.n];
    }
}
";
    let k = kernel(&d, "stride2.wgsl", "n: u32", body);
    let v = run_ok(&[
        "run",
        "kernel",
        "--wgsl",
        &k,
        "--n",
        "1024",
        "--lens",
        "--lens-warp",
        "32",
        "--json",
    ]);
    let s = sectors(&v);
    assert_eq!(
        s,
        vec![
            ("read".into(), "src".into(), 8.0),
            ("write".into(), "dst".into(), 4.0)
        ]
    );
    // The sites are the user's lines, named with what stands there.
    assert_eq!(v["lens"][0]["global"][0]["line"], 9);
    let sites = v["lens_sites"].as_array().unwrap();
    let read = sites.iter().find(|s| s["kind"] == "read").unwrap();
    assert_eq!(read["expr"], "src[(2u * i) % params.n]");
    assert_eq!(
        (read["line"].as_u64(), read["memory"].as_str()),
        (Some(9), Some("global"))
    );
    // The text names the line too.
    let (code, out, _) = run(&[
        "run",
        "kernel",
        "--wgsl",
        &k,
        "--n",
        "1024",
        "--lens",
        "--lens-warp",
        "32",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("line 9    read  src"), "{out}");
}

#[test]
fn bench_puts_the_kernel_beside_copy_and_the_builtin() {
    let d = tmpdir("bench");
    let k = kernel(&d, "copy.wgsl", "n: u32", COPY);
    let v = run_ok(&[
        "bench",
        "kernel",
        "--wgsl",
        &k,
        "--expect",
        "bitrev",
        "--n",
        "4096",
        "--reps",
        "2",
        "--warmup",
        "1",
        "--warmup-ms",
        "0",
        "--json",
    ]);
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["algorithm"].as_str().unwrap(),
                r["variant"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, vec![("kernel", "wgsl"), ("bitrev", "tiled")]);
    let c = &v["compare"][0];
    assert_eq!(c["n"], 4096);
    assert_eq!(c["builtin"], "bitrev tiled");
    assert!(c["yours"].as_f64().unwrap() > 0.0);
    assert!(c["builtin_fraction_of_copy"].as_f64().unwrap() > 0.0);
    let text = c["text"].as_str().unwrap();
    assert!(
        text.contains("yours") && text.contains("× copy; the built-in bitrev tiled"),
        "{text}"
    );
    // A kernel that does not compile fails before any timing.
    let bad = kernel(&d, "bad.wgsl", "n: u32", "fn");
    one_line_error(&["bench", "kernel", "--wgsl", &bad, "--n", "4096"]);
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_solution_verifies_and_every_starter_fails() {
    let all = Exercise::all(&root().join("assets/exercises")).unwrap();
    let seeds: std::collections::BTreeSet<&str> = all.iter().map(|e| e.seed.as_str()).collect();
    assert_eq!(
        seeds.into_iter().collect::<Vec<_>>(),
        ["000", "001", "002", "003", "004"]
    );
    for ex in &all {
        let name = ex.name();
        assert!(ex.statement().is_file(), "{name}: statement.md");
        let solution = root().join(format!("tests/exercises/{name}.wgsl"));
        let args = |wgsl: &Path| -> Vec<String> {
            let mut a: Vec<String> = ["run", "kernel", "--wgsl"].map(String::from).to_vec();
            a.push(wgsl.to_str().unwrap().into());
            a.extend(["--expect".into(), ex.expect.clone()]);
            a.extend(ex.args.iter().cloned());
            a.push("--json".into());
            a
        };
        let a = args(&solution);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let v = run_ok(&a);
        assert_eq!(v["verified"], true, "{name}: the solution verifies");
        if let Some(max) = ex.lens_max_sectors {
            let mut l = a.clone();
            l.extend(["--lens", "--lens-warp", "32"]);
            let v = run_ok(&l);
            for (kind, buffer, s) in sectors(&v) {
                assert!(
                    s <= max,
                    "{name}: {kind} {buffer}: {s} sectors a request (goal ≤ {max})"
                );
            }
        }
        if !ex.tune.is_empty() {
            // The tuning step: every value verified, then timed; the best one verified.
            let mut t: Vec<String> = ["tune", "kernel", "--wgsl"].map(String::from).to_vec();
            t.push(solution.to_str().unwrap().into());
            t.extend(["--expect".into(), ex.expect.clone()]);
            t.extend(ex.args.iter().cloned());
            for l in &ex.tune {
                t.extend(["--override".into(), l.clone()]);
            }
            t.extend(["--reps", "2", "--json"].map(String::from));
            let t: Vec<&str> = t.iter().map(String::as_str).collect();
            let v = run_ok(&t);
            let rows = v["rows"].as_array().unwrap();
            assert!(rows.len() >= 3, "{name}: {v}");
            let best = &rows[v["best"].as_u64().expect("a best row") as usize];
            assert_eq!(best["status"], "timed", "{name}: {best}");
            // Every side is right: a row is timed, or refused by this adapter's limits.
            for r in rows {
                assert_ne!(r["status"], "wrong", "{name}: {r}");
            }
        }
        let a = args(&ex.starter());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, _, err) = run(&a);
        match ex.starter_fails {
            StarterFails::Verify => {
                assert_eq!(
                    code, 3,
                    "{name}: the starter compiles and fails verification: {err}"
                );
                assert!(err.contains("first at index"), "{name}: {err}");
            }
            StarterFails::Compile => {
                let line = one_line_error(&a);
                let want = ex.starter_error.as_deref().unwrap_or("");
                assert!(
                    line.contains("starter.wgsl:") && line.contains(want),
                    "{name}: {line}"
                );
            }
        }
    }
}

#[test]
fn scratch_expect_file_and_items_per_thread() {
    let d = tmpdir("scratch");
    let body = "@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    for (var k = 0u; k < 4u; k++) {
        let i = gid.x * 4u + k;
        if (i < params.n) {
            scratch[i % 64u] += 1u;
            dst[i] = src[i] * 3u + scratch[i % 64u] * 0u;
        }
    }
}
";
    let k = kernel(&d, "scratch.wgsl", "n: u32", body);
    let want = d.join("want.txt");
    std::fs::write(
        &want,
        (0..100)
            .map(|x| (x * 3).to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let w = want.to_str().unwrap();
    let base = [
        "run",
        "kernel",
        "--wgsl",
        &k,
        "--n",
        "100",
        "--fill",
        "iota",
        "--scratch",
        "64",
        "--json",
    ];
    // Four elements a thread: 2 workgroups of 16 threads cover 100 elements.
    let mut a = base.to_vec();
    a.extend(["--items-per-thread", "4", "--expect-file", w]);
    let v = run_ok(&a);
    assert_eq!(v["verified"], true);
    assert_eq!(v["kernel"]["dispatches"][0]["workgroups"], 2);
    // One element a thread: 7 workgroups; the kernel still covers all (it loops 4), which the
    // check sees as the same output.
    let mut a = base.to_vec();
    a.extend(["--expect-file", w]);
    assert_eq!(run_ok(&a)["kernel"]["dispatches"][0]["workgroups"], 7);
    // A file that disagrees: exit 3 with the first index.
    std::fs::write(&want, "0 3 6 10").unwrap();
    let (code, _, err) = run(&[
        "run",
        "kernel",
        "--wgsl",
        &k,
        "--n",
        "4",
        "--fill",
        "iota",
        "--scratch",
        "64",
        "--expect-file",
        w,
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("first at index 3"), "{err}");
    // The scratch binding declared but not sized.
    let line = one_line_error(&["run", "kernel", "--wgsl", &k, "--n", "4"]);
    assert!(
        line.contains("give its size with --scratch WORDS"),
        "{line}"
    );
}

/// Every option of `run kernel` is exercised by a test in this file.
#[test]
fn every_kernel_option_is_exercised() {
    use clap::CommandFactory;
    let cli = stagewise::cli::Cli::command();
    let kernel = cli
        .find_subcommand("run")
        .and_then(|r| r.find_subcommand("kernel"))
        .unwrap();
    let own: Vec<String> = kernel
        .get_arguments()
        .filter(|a| !a.is_global_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let this = include_str!("kernel.rs");
    for o in &own {
        assert!(
            this.contains(&format!("\"{o}\"")),
            "{o} is not exercised in tests/kernel.rs"
        );
    }
    assert_eq!(own.len(), 9, "{own:?}");
}

/// `grade` on a class of eight kernels (tests/class/ and the exercise's files): one row each
/// with the right verdict whatever the others do, the goal measured by the lens, the passing
/// kernel timed beside the built-in one and the copy; the exit status says not all passed; and a
/// file past the time limit is stopped and reported.
#[test]
fn grade_gives_every_file_of_a_class_its_row() {
    let d = tmpdir("class");
    let class = root().join("tests/class");
    for f in std::fs::read_dir(&class).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, d.join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(
        root().join("tests/exercises/bitrev-coalesced.wgsl"),
        d.join("right.wgsl"),
    )
    .unwrap();
    std::fs::copy(
        root().join("assets/exercises/bitrev-coalesced/starter.wgsl"),
        d.join("wrong.wgsl"),
    )
    .unwrap();
    std::fs::write(d.join("empty.wgsl"), "").unwrap();
    std::fs::write(d.join("huge.wgsl"), "// padding\n".repeat(1_000_000)).unwrap();
    let csv = d.join("grades.csv");
    let (code, out, err) = run(&[
        "grade",
        "--exercise",
        "bitrev-coalesced",
        d.to_str().unwrap(),
        "--timeout",
        "60",
        "--reps",
        "2",
        "--json",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "not every kernel passes: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["passed"].as_u64(), v["total"].as_u64()),
        (Some(1), Some(8))
    );
    let row = |name: &str| -> Value {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["file"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("no row for {name}: {v}"))
            .clone()
    };
    let r = row("right.wgsl");
    assert_eq!(
        (r["result"].as_str(), r["passed"].as_bool()),
        (Some("passed"), Some(true))
    );
    assert!(r["goal"].as_str().unwrap().starts_with("goal met"), "{r}");
    assert!(r["fraction_of_copy"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["builtin_fraction_of_copy"].as_f64().unwrap() > 0.0, "{r}");
    let check = |name: &str, result: &str, says: &str| {
        let r = row(name);
        assert_eq!(r["result"], result, "{name}: {r}");
        assert_eq!(r["passed"], false, "{name}: {r}");
        let text = format!("{} {}", r["check"], r["goal"]);
        assert!(text.contains(says), "{name}: want '{says}' in {r}");
    };
    check("wrong.wgsl", "wrong", "first at index");
    check("compile_error.wgsl", "error", "compile_error.wgsl:8:");
    check("unknown_binding.wgsl", "error", "'mystery'");
    check("uncoalesced.wgsl", "goal missed", "yours 32.00 at line");
    check("empty.wgsl", "refused", "empty");
    check("huge.wgsl", "refused", "at most 1 MiB");
    // A real GPU runs it until the time limit (or loses the device); lavapipe caps a loop's trips
    // and it ends in an error: never a pass, and the rows after it still come.
    let r = row("endless.wgsl");
    assert_eq!(r["passed"], false, "{r}");
    assert_ne!(r["result"], "passed", "{r}");
    let lines = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(lines.lines().count(), 9, "{lines}");
    assert!(
        lines.starts_with("file,result,passed,check,goal,"),
        "{lines}"
    );
    // A file past the time limit is stopped, and said so.
    let (code, out, _) = run(&[
        "grade",
        "--exercise",
        "bitrev-coalesced",
        d.join("right.wgsl").to_str().unwrap(),
        "--timeout",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 3);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["result"], "timed out", "{v}");
    // Bad use: one line, exit 1.
    let (code, _, err) = run(&["grade", "--exercise", "no-such", d.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no such exercise") && err.lines().count() == 1,
        "{err}"
    );
}
