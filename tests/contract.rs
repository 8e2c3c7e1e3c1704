//! The CLI's promise that every option does what it says: `--save-output` / `--save-trace` write
//! what the run computed (with and without `--json`), and a write that fails is one line and a
//! non-zero exit after the result was printed.
mod common;

use common::{Scratch, bin};

/// The tile order this adapter does not pick by itself (auto: `dispatch` on GPUs, `counter` on
/// CPU adapters), so that giving it changes what the run reports.
fn other_tile_order() -> &'static str {
    if common::gpu().info.device_type == wgpu::DeviceType::Cpu {
        "dispatch"
    } else {
        "counter"
    }
}
use serde_json::Value;
use stagewise::data::{DType, read_input};
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> Scratch {
    Scratch::new(&format!("contract-{name}"))
}

fn stagewise(args: &[&str]) -> std::process::Output {
    bin().args(args).output().expect("run stagewise")
}

/// The values of the JSON `output` field, flattened (FFT pairs and real-pair objects included).
fn flat(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flat(x, out)),
        Value::Object(m) => ["x", "y"].iter().for_each(|k| flat(&m[*k], out)),
        // FFT pairs print f32 values through f64 (6.123234000000001e-17): compare them as f32.
        Value::Number(x) if x.is_f64() => out.push((x.as_f64().unwrap() as f32).to_string()),
        other => out.push(other.to_string()),
    }
}

/// The values of a saved array, formatted as the JSON output formats them.
fn saved(path: &Path, dtype: DType) -> Vec<String> {
    let d = read_input(path.to_str().unwrap(), dtype).unwrap();
    let mut v = Vec::new();
    flat(&d.to_json(), &mut v);
    v
}

/// One algorithm's saves: `.npy` + trace `.json` with `--json`, `.txt` + trace `.csv` without it,
/// and `.json` output (the run's exact `output` field).
fn saves_what_it_computed(algo_args: &[&str], dtype: DType) {
    let dir = tmpdir(algo_args[0]);
    let p = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let (npy, tjson, txt, tcsv, ojson) = (
        p("out.npy"),
        p("trace.json"),
        p("out.txt"),
        p("trace.csv"),
        p("out.json"),
    );

    let mut args = vec!["run"];
    args.extend_from_slice(algo_args);
    let mut a1 = args.clone();
    a1.extend(["--json", "--save-output", &npy, "--save-trace", &tjson]);
    let o = stagewise(&a1);
    assert!(
        o.status.success(),
        "{a1:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut want = Vec::new();
    flat(&run["output"], &mut want);
    assert!(!want.is_empty());
    assert_eq!(saved(Path::new(&npy), dtype), want, "{a1:?}: .npy");

    // The saved trace is the run's JSON with its stages (as --trace --json prints them).
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&tjson).unwrap()).unwrap();
    assert_eq!(trace["output"], run["output"], "{a1:?}: trace output");
    let stages = trace["stages"]
        .as_array()
        .expect("stages in the saved trace");
    assert!(!stages.is_empty(), "{a1:?}: stages");
    // --save-trace implies --trace, so stdout carries the same stages.
    assert_eq!(&run["stages"], &trace["stages"], "{a1:?}: the saved stages");

    let mut a2 = args.clone();
    a2.extend(["--save-output", &txt, "--save-trace", &tcsv]);
    let o = stagewise(&a2);
    assert!(
        o.status.success(),
        "{a2:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("verified against the CPU model: true"));
    assert_eq!(saved(Path::new(&txt), dtype), want, "{a2:?}: text");
    let csv = std::fs::read_to_string(&tcsv).unwrap();
    let rows: usize = stages
        .iter()
        .map(|s| {
            let mut v = Vec::new();
            flat(&s["data"], &mut v);
            v.len()
        })
        .sum();
    assert_eq!(csv.lines().next(), Some("stage,label,index,value"));
    assert_eq!(
        csv.lines().count(),
        rows + 1,
        "{a2:?}: one CSV row per stage element"
    );

    let mut a3 = args.clone();
    a3.extend(["--json", "--save-output", &ojson]);
    let o = stagewise(&a3);
    assert!(o.status.success());
    let run3: Value = serde_json::from_slice(&o.stdout).unwrap();
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&ojson).unwrap()).unwrap();
    assert_eq!(file, run3["output"], "{a3:?}: .json is the output field");
}

#[test]
fn save_options_write_every_algorithms_result() {
    saves_what_it_computed(&["bitrev", "--variant", "staged", "--n", "64"], DType::U32);
    saves_what_it_computed(
        &[
            "bmmc",
            "--preset",
            "transpose:3,3",
            "--variant",
            "tiled",
            "--dtype",
            "i32",
        ],
        DType::I32,
    );
    saves_what_it_computed(
        &[
            "oddeven",
            "--variant",
            "batcher",
            "--n",
            "300",
            "--dtype",
            "f32",
        ],
        DType::F32,
    );
    saves_what_it_computed(
        &["scan", "--variant", "decoupled", "--n", "777"],
        DType::U32,
    );
    saves_what_it_computed(&["fft", "--size", "32", "--batch", "2"], DType::F32);
    saves_what_it_computed(&["fft", "--size", "16", "--real-pair"], DType::F32);
    saves_what_it_computed(&["copy", "--n", "100", "--fill", "iota"], DType::U32);
}

#[test]
fn a_save_that_fails_is_one_line_after_the_result() {
    let missing = std::env::temp_dir()
        .join(format!("stagewise-no-such-dir-{}", std::process::id()))
        .join("y.npy");
    let m = missing.to_str().unwrap();
    for save in ["--save-output", "--save-trace"] {
        for json in [true, false] {
            let mut args = vec![
                "run",
                "oddeven",
                "--variant",
                "batcher",
                "--n",
                "1000",
                save,
                m,
            ];
            if json {
                args.push("--json");
            }
            let o = stagewise(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.starts_with("stagewise: error: cannot write '") && err.contains("y.npy"),
                "{args:?}: {err}"
            );
            // Nothing computed is lost: the result was printed before the write failed.
            let stdout = String::from_utf8_lossy(&o.stdout);
            if json {
                let v: Value = serde_json::from_str(&stdout).expect("the run's JSON");
                assert_eq!(v["verified"], true);
                assert_eq!(v["output"].as_array().map(Vec::len), Some(1000));
            } else {
                assert!(
                    stdout.contains("verified against the CPU model: true"),
                    "{stdout}"
                );
            }
        }
    }
    assert!(!missing.exists());
}

/// STAGEWISE_SWAP_WGSL runs an edited kernel where the dumped one ran: unedited, the run is the
/// same; edited, the run verifies the edit's result against the CPU model (and fails); a file that
/// does not parse is an error naming the kernel, not a panic.
#[test]
fn a_swapped_kernel_runs_in_place_of_the_dumped_one() {
    let dump = tmpdir("swap-dump");
    let swap = tmpdir("swap-in");
    let args = ["run", "scan", "--n", "1000", "--fill", "iota", "--json"];
    let run = |env: Option<(&str, &Path)>| {
        let mut c = bin();
        c.args(args);
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        c.output().expect("run stagewise")
    };
    let plain = run(Some(("STAGEWISE_DUMP_WGSL", &dump)));
    assert_eq!(plain.status.code(), Some(0));
    let files: Vec<PathBuf> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_owned();
    let text = std::fs::read_to_string(&files[0]).unwrap();

    std::fs::write(swap.join(&name), &text).unwrap();
    let same = run(Some(("STAGEWISE_SWAP_WGSL", &swap)));
    assert_eq!(same.status.code(), Some(0));
    let json = |o: &std::process::Output| -> Value {
        serde_json::from_slice(&o.stdout).expect("the run's JSON")
    };
    assert_eq!(json(&same)["output"], json(&plain)["output"]);
    assert_eq!(json(&same)["verified"], true);
    let err = String::from_utf8_lossy(&same.stderr);
    assert!(
        err.contains("stagewise: kernel scan ladder runs")
            && err.contains(&*name.to_string_lossy()),
        "{err}"
    );

    // Every rung adds one more: the CPU model catches it.
    let step = "a[t] = a[t] + a[prev_rung];";
    assert!(
        text.contains(step),
        "the ladder's step moved: update this test"
    );
    let edited = text.replace(step, "a[t] = a[t] + a[prev_rung] + T(1);");
    std::fs::write(swap.join(&name), edited).unwrap();
    let wrong = run(Some(("STAGEWISE_SWAP_WGSL", &swap)));
    assert_eq!(wrong.status.code(), Some(3));
    let v = json(&wrong);
    assert_eq!(v["verified"], false);
    assert_eq!(v["output"][1], 2);

    std::fs::write(swap.join(&name), "fn broken(").unwrap();
    let broken = run(Some(("STAGEWISE_SWAP_WGSL", &swap)));
    assert_eq!(broken.status.code(), Some(1));
    let err = String::from_utf8_lossy(&broken.stderr);
    assert!(
        err.contains("stagewise: error: GPU validation error") && err.contains("scan ladder"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// The option audit: every option `stagewise list --json`, `run --help` and `bench --help` list
// changes something observable (the JSON minus timings, or the WGSL of the kernels that ran,
// dumped with STAGEWISE_DUMP_WGSL) or is refused with one line that names it.

/// What a command showed: its exit code, stderr, stdout (JSON without timings where it is JSON)
/// and the kernels it compiled.
#[derive(Debug, PartialEq)]
struct Seen {
    code: i32,
    stdout: String,
    kernels: Vec<String>,
}

/// Timings and the adapter differ between identical runs; everything else must not.
fn strip_timings(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in [
                "adapter",
                "gpu_ms",
                "median_ms",
                "min_ms",
                "gbps",
                "copy_gbps",
                "fraction_of_copy",
                "gitems_per_s",
                // The warm-up done: wall time, so its runs too.
                "warmup_ms",
                "warmup_runs",
                "copy_warmup_ms",
            ] {
                m.remove(k);
            }
            m.values_mut().for_each(strip_timings);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

fn observe(args: &[&str]) -> (Seen, String) {
    // Named by a hash of the arguments: a matrix's rows would make too long a file name.
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        args.hash(&mut h);
        h.finish()
    };
    let dump = tmpdir(&format!("wgsl-{key:016x}"));
    let o = bin()
        .args(args)
        .env("STAGEWISE_DUMP_WGSL", &dump)
        .output()
        .expect("run stagewise");
    let mut stdout = String::from_utf8_lossy(&o.stdout).to_string();
    if let Ok(mut v) = serde_json::from_str::<Value>(&stdout) {
        strip_timings(&mut v);
        stdout = v.to_string();
    } else {
        // Text output: drop the timing columns' numbers.
        stdout = stdout
            .lines()
            .map(|l| {
                l.split_whitespace()
                    .filter(|w| w.parse::<f64>().map_or(true, |x| x.fract() == 0.0))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut kernels: Vec<String> = std::fs::read_dir(&dump)
        .map(|d| {
            d.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    kernels.sort();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    (
        Seen {
            code: o.status.code().unwrap_or(-1),
            stdout,
            kernels,
        },
        err,
    )
}

/// `with` must differ observably from `base`, or fail with one line naming `flag`.
fn changes_or_refused(base: &[&str], with: &[&str], flag: &str) -> Result<&'static str, String> {
    let (b, berr) = observe(base);
    if b.code != 0 {
        return Err(format!("baseline {base:?} failed: {berr}"));
    }
    let (w, werr) = observe(with);
    if w.code == 0 {
        return if w != b {
            Ok("changes")
        } else {
            Err(format!(
                "{with:?}: nothing observable changed against {base:?}"
            ))
        };
    }
    let line = werr.trim_end();
    if w.code == 1
        && line.lines().count() == 1
        && line.starts_with("stagewise: error: ")
        && line.contains(flag)
        && !line.contains("panicked")
    {
        Ok("refused")
    } else {
        Err(format!("{with:?}: exit {}: {werr}", w.code))
    }
}

/// One value to try for every algorithm option, and the base arguments of its algorithm.
fn algorithm_probes(algo: &str) -> (Vec<&'static str>, Vec<(&'static str, Vec<&'static str>)>) {
    // A rotation of 16 bits: row i (output bit i) has its 1 at input bit i − 1 (mod 16).
    let row16 = "0000000000000001;1000000000000000;0100000000000000;0010000000000000;0001000000000000;0000100000000000;0000010000000000;0000001000000000;0000000100000000;0000000010000000;0000000001000000;0000000000100000;0000000000010000;0000000000001000;0000000000000100;0000000000000010";
    match algo {
        "bitrev" => (vec!["--n", "64", "--fill", "random"], vec![]),
        // 2^16 words: tiles of 2^12, so the tiled kernel's shape shows.
        "bmmc" => (
            vec!["--n", "65536", "--fill", "random"],
            vec![
                ("--matrix", vec!["--matrix", row16]),
                ("--preset", vec!["--preset", "transpose:6,10"]),
                ("--complement", vec!["--complement", "5"]),
                ("--tile-bits", vec!["--tile-bits", "6"]),
                ("--tile-threads", vec!["--tile-threads", "64"]),
                ("--tiles-per-workgroup", vec!["--tiles-per-workgroup", "2"]),
                ("--tile-vector", vec!["--tile-vector", "1"]),
                ("--group-order", vec!["--group-order", "output"]),
            ],
        ),
        // 2048 keys: merge-split's default block (N/8) is above half of a 256-key --tile.
        "oddeven" => (
            vec!["--n", "2048", "--fill", "random"],
            vec![
                ("--segment", vec!["--segment", "64"]),
                ("--descending", vec!["--descending"]),
                ("--block", vec!["--block", "16"]),
                ("--tile", vec!["--tile", "256"]),
                ("--threads", vec!["--threads", "64"]),
                ("--kernel", vec!["--kernel", "generic"]),
                ("--keys-per-invocation", vec!["--keys-per-invocation", "8"]),
                ("--tiles-per-workgroup", vec!["--tiles-per-workgroup", "2"]),
                ("--exchange-buffers", vec!["--exchange-buffers", "2"]),
            ],
        ),
        "scan" => (
            vec!["--n", "5000", "--fill", "small"],
            vec![
                ("--exclusive", vec!["--exclusive"]),
                ("--mirror", vec!["--mirror"]),
                ("--workgroup-size", vec!["--workgroup-size", "64"]),
                ("--per-thread", vec!["--per-thread", "2"]),
                ("--spin", vec!["--spin", "0"]),
                ("--shared-scan", vec!["--shared-scan"]),
                ("--tile-order", vec!["--tile-order", other_tile_order()]),
            ],
        ),
        "copy" => (
            vec!["--n", "4096", "--fill", "random"],
            vec![
                ("--workgroup-size", vec!["--workgroup-size", "64"]),
                ("--per-thread", vec!["--per-thread", "2"]),
            ],
        ),
        // Generated input (the --signal of --size points), so --size and --signal change it.
        "fft" => (
            vec![],
            vec![
                ("--size", vec!["--size", "64"]),
                (
                    "--elements-per-invocation",
                    vec!["--elements-per-invocation", "4"],
                ),
                ("--workgroup-size", vec!["--workgroup-size", "4"]),
                ("--order", vec!["--order", "raw"]),
                ("--inverse", vec!["--inverse"]),
                ("--real", vec!["--real"]),
                ("--real-pair", vec!["--real-pair"]),
                ("--batch", vec!["--batch", "2"]),
                ("--signal", vec!["--signal", "noise"]),
                ("--kernel", vec!["--kernel", "teaching"]),
                ("--ffts-per-workgroup", vec!["--ffts-per-workgroup", "2"]),
                ("--sequential-ffts", vec!["--sequential-ffts", "2"]),
                ("--no-shuffle", vec!["--no-shuffle"]),
                ("--natural-store", vec!["--natural-store", "direct"]),
                ("--split", vec!["--kernel", "large", "--split", "4"]),
                (
                    "--exchange-parts",
                    vec!["--kernel", "large", "--exchange-parts", "4"],
                ),
                (
                    "--exchange-layout",
                    vec!["--kernel", "large", "--exchange-layout", "swizzled"],
                ),
                (
                    "--phase-split",
                    vec!["--kernel", "large", "--phase-split", "4"],
                ),
                (
                    "--phase-lanes",
                    vec![
                        "--kernel",
                        "large",
                        "--phase-split",
                        "4",
                        "--phase-lanes",
                        "2",
                    ],
                ),
                ("--chain", vec!["--kernel", "large", "--chain", "1"]),
            ],
        ),
        "radix" => (
            vec!["--n", "1000", "--fill", "random"],
            vec![
                ("--descending", vec!["--descending"]),
                ("--values", vec!["--values", "iota"]),
                ("--digit-bits", vec!["--digit-bits", "4"]),
                ("--workgroup-size", vec!["--workgroup-size", "128"]),
                ("--keys-per-thread", vec!["--keys-per-thread", "4"]),
                ("--spin", vec!["--spin", "0"]),
                ("--shared-rank", vec!["--shared-rank"]),
                ("--tile-order", vec!["--tile-order", other_tile_order()]),
                ("--prefetch", vec!["--prefetch", "3"]),
                ("--look-back-window", vec!["--look-back-window", "4"]),
            ],
        ),
        other => panic!("no probes for algorithm '{other}': add them to tests/contract.rs"),
    }
}

fn listed_algorithms() -> Vec<Value> {
    let o = stagewise(&["list", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["algorithms"].as_array().unwrap().clone()
}

/// Every algorithm option on every variant: it changes the run or is refused, never ignored.
fn audit_algorithm(name: &str) {
    let algos = listed_algorithms();
    let a = algos.iter().find(|a| a["name"] == name).unwrap();
    let (base, probes) = algorithm_probes(name);
    let listed: Vec<&str> = a["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    let probed: Vec<&str> = probes.iter().map(|p| p.0).collect();
    assert_eq!(
        listed, probed,
        "{name}: every listed option needs a probe here"
    );
    let mut failures = Vec::new();
    for v in a["variants"].as_array().unwrap() {
        let v = v["name"].as_str().unwrap();
        let mut b = vec!["run", name, "--variant", v, "--json"];
        b.extend(&base);
        for (flag, extra) in &probes {
            let mut w = b.clone();
            w.extend(extra);
            match changes_or_refused(&b, &w, flag) {
                Ok(what) => eprintln!("{name} {v:<16} {flag:<26} {what}"),
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn audit_bmmc_and_copy_options() {
    audit_algorithm("bmmc");
    audit_algorithm("copy");
    audit_algorithm("bitrev");
}

#[test]
fn audit_oddeven_options() {
    audit_algorithm("oddeven");
    // Where the kernel that a run uses ignores an option, it is refused.
    let b = [
        "run",
        "oddeven",
        "--variant",
        "batcher",
        "--n",
        "1024",
        "--json",
    ];
    for (extra, flag) in [
        (
            &["--trace", "--keys-per-invocation", "8"][..],
            "--keys-per-invocation",
        ),
        (
            &["--kernel", "generic", "--tiles-per-workgroup", "2"][..],
            "--tiles-per-workgroup",
        ),
        (
            &["--kernel", "generic", "--exchange-buffers", "2"][..],
            "--exchange-buffers",
        ),
    ] {
        let mut w = b.to_vec();
        w.extend(extra);
        assert_eq!(changes_or_refused(&b, &w, flag), Ok("refused"), "{w:?}");
    }
    let mut w = b.to_vec();
    w.extend(["--kernel", "generic", "--threads", "64"]);
    let mut g = b.to_vec();
    g.extend(["--kernel", "generic"]);
    assert_eq!(changes_or_refused(&g, &w, "--threads"), Ok("changes"));
}

#[test]
fn audit_scan_options() {
    audit_algorithm("scan");
}

#[test]
fn audit_radix_options() {
    audit_algorithm("radix");
}

#[test]
fn audit_fft_options() {
    audit_algorithm("fft");
    let b = ["run", "fft", "--json"];
    for (extra, flag) in [
        (&["--n", "32", "--signal", "noise"][..], "--signal"),
        (
            &["--trace", "--natural-store", "direct"][..],
            "--natural-store",
        ),
        (
            &["--kernel", "teaching", "--sequential-ffts", "2"][..],
            "--sequential-ffts",
        ),
        (&["--real", "--no-shuffle"][..], "--no-shuffle"),
        // Real input in raw order runs the teaching kernel: no lanes, no turns.
        (
            &["--real", "--order", "raw", "--ffts-per-workgroup", "2"][..],
            "--ffts-per-workgroup",
        ),
        (&["--split", "4"][..], "--split"),
        (&["--exchange-parts", "2"][..], "--exchange-parts"),
        (&["--phase-split", "4"][..], "--phase-split"),
        (&["--phase-lanes", "2"][..], "--phase-lanes"),
        (&["--chain", "1"][..], "--chain"),
    ] {
        let mut w = b.to_vec();
        w.extend(extra);
        assert_eq!(changes_or_refused(&b, &w, flag), Ok("refused"), "{w:?}");
    }
}

/// The options of `run` and `bench` themselves (and the global ones), from clap's own list.
#[test]
fn audit_run_and_bench_options() {
    use clap::CommandFactory;
    let dir = tmpdir("audit-run");
    let input = dir.join("in.txt");
    std::fs::write(&input, "5 3 9 1").unwrap();
    let (inp, out, trace, csv) = (
        input.to_str().unwrap().to_string(),
        dir.join("o.txt").to_str().unwrap().to_string(),
        dir.join("t.json").to_str().unwrap().to_string(),
        dir.join("b.csv").to_str().unwrap().to_string(),
    );
    let run = [
        "run",
        "oddeven",
        "--variant",
        "global",
        "--n",
        "64",
        "--json",
    ];
    let bench = [
        "bench", "copy", "--n", "4096", "--reps", "2", "--warmup", "1", "--json",
    ];
    // 256 workgroups: enough for a sample smaller than the grid.
    let lensed = ["run", "bitrev", "--n", "65536", "--lens", "--json"];
    // (flag, base, with)
    let probes: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        (
            "--variant",
            run.to_vec(),
            vec![
                "run",
                "oddeven",
                "--variant",
                "batcher",
                "--n",
                "64",
                "--json",
            ],
        ),
        (
            "--dtype",
            run.to_vec(),
            [&run[..], &["--dtype", "f32"]].concat(),
        ),
        (
            "--input",
            vec!["run", "oddeven", "--variant", "global", "--json"],
            vec![
                "run",
                "oddeven",
                "--variant",
                "global",
                "--json",
                "--input",
                &inp,
            ],
        ),
        (
            "--n",
            run.to_vec(),
            vec![
                "run",
                "oddeven",
                "--variant",
                "global",
                "--n",
                "65",
                "--json",
            ],
        ),
        (
            "--fill",
            run.to_vec(),
            [&run[..], &["--fill", "reverse"]].concat(),
        ),
        (
            "--seed",
            run.to_vec(),
            [&run[..], &["--seed", "7"]].concat(),
        ),
        ("--trace", run.to_vec(), [&run[..], &["--trace"]].concat()),
        ("--lens", run.to_vec(), [&run[..], &["--lens"]].concat()),
        (
            "--lens-warp",
            [&run[..], &["--lens"]].concat(),
            [&run[..], &["--lens", "--lens-warp", "16"]].concat(),
        ),
        (
            "--lens-sample",
            lensed.to_vec(),
            [&lensed[..], &["--lens-sample", "0.5"]].concat(),
        ),
        ("--json", run[..6].to_vec(), run.to_vec()),
        (
            "--adapter",
            run.to_vec(),
            [&run[..], &["--adapter", "no-such-adapter-anywhere"]].concat(),
        ),
        (
            "--session",
            run.to_vec(),
            [&["--session", "s.json"][..], &run[..]].concat(),
        ),
        (
            "--log-n",
            bench.to_vec(),
            vec![
                "bench", "copy", "--log-n", "10..11", "--reps", "2", "--warmup", "1", "--json",
            ],
        ),
        (
            "--reps",
            bench.to_vec(),
            vec![
                "bench", "copy", "--n", "4096", "--reps", "3", "--warmup", "1", "--json",
            ],
        ),
        (
            "--warmup",
            bench.to_vec(),
            vec![
                "bench", "copy", "--n", "4096", "--reps", "2", "--warmup", "2", "--json",
            ],
        ),
        (
            "--warmup-ms",
            bench.to_vec(),
            [&bench[..], &["--warmup-ms", "0"]].concat(),
        ),
    ];
    let mut failures = Vec::new();
    for (flag, b, w) in &probes {
        if let Err(e) = changes_or_refused(b, w, flag) {
            failures.push(e);
        }
        // Real input in natural order runs the large plan, whose lanes and turns these set.
        let real = [
            "run", "fft", "--json", "--real", "--size", "256", "--batch", "64",
        ];
        for (flag, v) in [("--ffts-per-workgroup", "2"), ("--sequential-ffts", "2")] {
            let mut w = real.to_vec();
            w.extend([flag, v]);
            assert_eq!(changes_or_refused(&real, &w, flag), Ok("changes"), "{w:?}");
        }
    }
    // Bench's own --variant, --dtype, --json and --n (the run probes above share their names).
    for (flag, w) in [
        ("--variant", [&bench[..], &["--variant", "scalar"]].concat()),
        ("--dtype", [&bench[..], &["--dtype", "f32"]].concat()),
        ("--json", bench[..8].to_vec()),
        (
            "--n",
            vec![
                "bench", "copy", "--n", "8192", "--reps", "2", "--warmup", "1", "--json",
            ],
        ),
    ] {
        if let Err(e) = changes_or_refused(&bench, &w, flag) {
            failures.push(e);
        }
    }
    // Files the save options and --csv write are checked in
    // save_options_write_every_algorithms_result and tests/cli.rs; here: they exist after the run.
    let o = stagewise(&[&run[..], &["--save-output", &out, "--save-trace", &trace]].concat());
    assert!(o.status.success());
    assert!(Path::new(&out).exists() && Path::new(&trace).exists());
    let o = stagewise(&[&bench[..8], &["--csv", &csv]].concat());
    assert!(o.status.success());
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        rows.lines().count(),
        3,
        "header and a row per variant: {rows}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Every option clap knows is probed above (a new option needs a probe).
    let cli = stagewise::cli::Cli::command();
    let mut known: Vec<String> = cli
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    for sub in ["run", "bench"] {
        let c = cli.find_subcommand(sub).unwrap();
        known.extend(
            c.get_arguments()
                .filter_map(|a| a.get_long().map(|l| format!("--{l}"))),
        );
    }
    let mut covered: Vec<&str> = probes.iter().map(|p| p.0).collect();
    // --save-* are checked above and in save_options_write_every_algorithms_result; --all in
    // tests/cli.rs (bench_all_covers_every_algorithm: a row for every algorithm and variant).
    // --suite, --out, --only, --peers: bench_suite_runs_and_reports. --spec: tests/cli.rs
    // (a_spec_runs_what_its_flags_would). --wisdom, --no-wisdom: tests/wisdom.rs (a tuned file
    // used by run and bench where no option is given, never over one; off).
    covered.extend([
        "--spec",
        "--wisdom",
        "--no-wisdom",
        "--save-output",
        "--save-trace",
        "--all",
        "--csv",
        "--suite",
        "--out",
        "--only",
        "--peers",
    ]);
    for k in &known {
        assert!(
            covered.contains(&k.as_str()),
            "{k}: no probe in audit_run_and_bench_options"
        );
    }
}

/// docs/PERFORMANCE.md shows one current suite run: its generated part is exactly what
/// `stagewise report` makes of the committed result, and that result covers every suite case.
#[test]
fn performance_md_is_the_committed_suite_result() {
    use stagewise::suite::{self, report};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let result = report::load(&root.join("docs/perf/h100.json")).unwrap();
    let doc = std::fs::read_to_string(root.join("docs/PERFORMANCE.md")).unwrap();
    let generated = report::markdown(&result, "docs/perf/h100.json");
    assert!(
        doc.contains(&generated),
        "docs/PERFORMANCE.md is not the committed result: run `stagewise report docs/perf/h100.json --markdown docs/PERFORMANCE.md --plot docs/img/perf_h100.png`"
    );
    let suite = suite::load(&root.join("bench/suite.toml"), &stagewise::cli::Words).unwrap();
    let ran: Vec<&str> = result.cases.iter().map(|c| c.case.id.as_str()).collect();
    for c in &suite.cases {
        assert!(
            ran.contains(&c.id.as_str()),
            "suite case '{}' is not in the committed run",
            c.id
        );
    }
    for c in &result.cases {
        assert!(
            c.verify.verified,
            "{}: verified on the GPU before timing",
            c.case.id
        );
        assert_eq!(
            c.rows.len(),
            c.case.log_n.len(),
            "{}: every size timed",
            c.case.id
        );
    }
    assert!(root.join("docs/img/perf_h100.png").exists());
}

/// The suite runner end to end on this adapter (lavapipe in CI): verify, time, a stand-in peers
/// script, the result file, `--only`, the report's tables and plot, and its errors.
#[test]
fn bench_suite_runs_and_reports() {
    let dir = tmpdir("suite");
    let p = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let suite = p("suite.toml");
    std::fs::write(
        &suite,
        r#"[defaults]
reps = 2
warmup = 1
min_warmup_ms = 0
verify_max_n = 4096

[[case]]
id = "copy"
group = "Copy"
algorithm = "copy"
variant = "vec4"
log_n = [10, 12]
goal = { vs = "copy", min = 0.0 }

[[case]]
id = "scan-excl"
group = "Scan"
algorithm = "scan"
variant = "decoupled"
args = ["--exclusive"]
log_n = [12]
peer = "torch.cumsum"
goal = { vs = "peer", min = 1000000.0 }
"#,
    )
    .unwrap();
    // A stand-in for bench/peers.py (no CUDA here): answers the one peer case at 1 ms.
    let fake = p("peers.py");
    std::fs::write(
        &fake,
        r#"import json, sys
a = sys.argv
out = a[a.index("--json") + 1]
assert "scan-excl" in a[a.index("--cases") + 1]
json.dump({"device": "stand-in", "torch": "0", "cuda": "0", "cupy": None, "vkfft": "9.9",
           "rows": [{"case": "scan-excl", "peer": "torch.cumsum", "n": 4096, "median_ms": 1.0,
                     "by": "libX", "candidates": {"libX": 1.0, "libY": 2.0}}]},
          open(out, "w"))
"#,
    )
    .unwrap();
    let result = p("result.json");
    let peers = format!("python3 {fake}");
    let o = stagewise(&[
        "bench", "--suite", &suite, "--out", &result, "--peers", &peers,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert!(r["adapter"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(r["driver"].is_string() && r["date"].as_str().is_some_and(|d| d.ends_with('Z')));
    assert!(r["command"].as_str().unwrap().contains("--suite"));
    assert_eq!(r["peers"]["device"], "stand-in");
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        assert_eq!(c["verify"]["verified"], true, "{c}");
        assert!(
            c["verify"]["run"]
                .as_str()
                .unwrap()
                .contains("--fill random --seed")
        );
        let rows = c["rows"].as_array().unwrap();
        assert_eq!(rows.len(), c["case"]["log_n"].as_array().unwrap().len());
        for row in rows {
            assert!(row["median_ms"].as_f64().unwrap() > 0.0);
            assert!(row["copy_gbps"].as_f64().unwrap() > 0.0);
            let floor = row["bytes"].as_f64().unwrap() / (row["copy_gbps"].as_f64().unwrap() * 1e6);
            assert!((row["floor_ms"].as_f64().unwrap() - floor).abs() <= 1e-9 * floor.max(1.0));
        }
    }
    let scan = &cases[1]["rows"][0];
    assert_eq!(scan["peer_ms"], 1.0);
    // A peer that is the faster of several libraries (the FFTs: cuFFT or VkFFT) names the one.
    assert_eq!(scan["peer_by"], "libX");
    assert_eq!(r["peers"]["vkfft"], "9.9");
    let vs = scan["vs_peer"].as_f64().unwrap();
    assert!((vs - 1.0 / scan["median_ms"].as_f64().unwrap()).abs() < 1e-9);

    // --only, and no peers.
    let only = p("only.json");
    let o = stagewise(&[
        "bench", "--suite", &suite, "--out", &only, "--only", "scan", "--peers", "none",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r2: Value = serde_json::from_str(&std::fs::read_to_string(&only).unwrap()).unwrap();
    assert_eq!(r2["cases"].as_array().unwrap().len(), 1);
    assert!(r2["peers"].is_null());

    // The report: tables between the markers (the rest of the document kept) and a PNG.
    let md = p("perf.md");
    std::fs::write(
        &md,
        format!(
            "# Perf\nbefore\n{}\nold\n{}\nafter\n",
            stagewise::suite::report::BEGIN,
            stagewise::suite::report::END
        ),
    )
    .unwrap();
    let png = p("plot.png");
    let o = stagewise(&["report", &result, "--markdown", &md, "--plot", &png]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = std::fs::read_to_string(&md).unwrap();
    assert!(
        doc.starts_with("# Perf\nbefore\n") && doc.ends_with("after\n") && !doc.contains("old")
    );
    assert!(doc.contains("### Copy") && doc.contains("### Scan"));
    assert!(
        doc.contains("| `scan decoupled --exclusive` u32 | 2^12 |"),
        "{doc}"
    );
    assert!(doc.contains("≥ 1000000 × peer | no |"), "{doc}");
    assert!(doc.contains("| torch.cumsum (libX) |"), "{doc}");
    assert!(doc.contains("VkFFT (pyvkfft 9.9)"), "{doc}");
    assert_eq!(
        doc.matches("| **yes** |").count(),
        2,
        "the copy's two sizes meet 0 × copy: {doc}"
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let img = image::load_from_memory(&bytes).unwrap();
    assert!(img.width() >= 800 && img.height() >= 300);
    // Running the report twice gives the same document (the markers stay).
    let o = stagewise(&["report", &result, "--markdown", &md]);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&md).unwrap(), doc);
    // A document that does not exist yet is the generated part, markers and all.
    let new = p("new.md");
    let o = stagewise(&["report", &result, "--markdown", &new]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fresh = std::fs::read_to_string(&new).unwrap();
    assert!(
        fresh.starts_with(stagewise::suite::report::BEGIN),
        "{fresh}"
    );
    assert!(fresh.contains(stagewise::suite::report::END) && fresh.contains("### Scan"));
    assert!(
        doc.contains(fresh.as_str()),
        "the same part as spliced into the document"
    );

    // Errors: one line each, naming the problem.
    let bad = p("bad.toml");
    std::fs::write(
        &bad,
        "[[case]]\nid = \"x\"\nalgorithm = \"copy\"\nflavour = 1\n",
    )
    .unwrap();
    for (args, want) in [
        (vec!["bench", "--suite", &bad, "--out", &only], "bad.toml"),
        (vec!["bench", "--suite", &suite], "--suite needs --out"),
        (
            vec!["bench", "--suite", &suite, "--out", &only, "--json"],
            "--suite takes its cases",
        ),
        (
            vec![
                "bench",
                "--suite",
                &suite,
                "--out",
                &only,
                "--warmup-ms",
                "10",
            ],
            "--suite takes its cases",
        ),
        (
            vec!["bench", "--suite", &suite, "--out", &only, "--only", "zzz"],
            "no case id contains",
        ),
        (
            vec!["report", &result, "--markdown", &suite],
            "no generated part",
        ),
        (vec!["report", &result], "report needs --markdown"),
    ] {
        let o = stagewise(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Every room's run-level facts (the top-level JSON fields the views read) read back as the
/// room's type from what the run printed, with the values the options asked for.
#[test]
fn run_facts_read_back_as_their_types() {
    use stagewise::algo::{AlgoOptions, bmmc, fft, oddeven, scan};
    use stagewise::data::Data;
    let iota = |n: u32| Data::from_u32(&(0..n).rev().collect::<Vec<u32>>());
    // bmmc, a seed plan: the map, the plan and Cormen's bound.
    let o = AlgoOptions::Bmmc(bmmc::Options {
        preset: Some("bit-reverse".into()),
        ..Default::default()
    });
    let r = common::run(&o, "seed-plu", iota(1 << 16), false);
    let f = r.facts::<bmmc::facts::Facts>().expect("bmmc facts");
    assert_eq!((f.log_n, f.bpc, f.pass_count), (16, true, r.passes.len()));
    assert_eq!(f.matrix.len(), 16);
    let b = f.bound.expect("a seed plan states its bound");
    assert_eq!(b.rank_m, r.extra["rank_m"].as_u64().unwrap() as usize);
    assert!(
        r.facts::<fft::facts::Facts>().is_none(),
        "another room's type"
    );
    // oddeven, segmented Batcher: the counted work and the first sorted stage.
    let o = AlgoOptions::Oddeven(oddeven::Options {
        segment: Some(16),
        ..Default::default()
    });
    let r = common::run(&o, "batcher", iota(64), true);
    let f = r.facts::<oddeven::facts::Facts>().expect("oddeven facts");
    assert_eq!(f.segment, Some(16));
    assert_eq!(f.seed_work, 4 * 16 * 15 / 2);
    assert_eq!(f.phases, r.extra["phases"].as_u64().unwrap() as usize);
    assert!(f.first_sorted_phase.flatten().is_some());
    // scan, decoupled: the form and the tile shape.
    let o = AlgoOptions::Scan(scan::Options::default());
    let r = common::run(&o, "decoupled", iota(5000), false);
    let f = r.facts::<scan::facts::Facts>().expect("scan facts");
    assert_eq!(f.form, scan::facts::Form::Prefix);
    let t = f.tile.expect("a tiled variant states its tile");
    assert!(t.tile_scan.is_some() && t.tiles >= 1);
    // fft: a workgroup kernel's Nyquist, and a large plan's split and plan.
    let o = AlgoOptions::Fft(fft::Options {
        size: Some(64),
        real: true,
        kernel: fft::Kernel::Teaching,
        ..Default::default()
    });
    let x: Vec<f32> = (0..64).map(|i| (i % 5) as f32).collect();
    let r = common::run(&o, "workgroup", Data::from_f32(&x), false);
    let f = r.facts::<fft::facts::Facts>().expect("fft facts");
    assert_eq!((f.size, f.mode), (64, fft::Mode::Real));
    assert!(f.nyquist.and_then(|n| n.packed_into).is_some());
    let o = AlgoOptions::Fft(fft::Options {
        size: Some(1024),
        kernel: fft::Kernel::Large,
        split: Some(32),
        ..Default::default()
    });
    let x: Vec<f32> = (0..2048).map(|i| (i % 7) as f32).collect();
    let r = common::run(&o, "workgroup", Data::from_f32(&x), false);
    let f = r.facts::<fft::facts::Facts>().expect("fft facts");
    assert_eq!(f.split, Some([32, 32]));
    assert_eq!(
        f.plan.expect("the plan").len(),
        r.extra["plan"].as_array().unwrap().len()
    );
}

/// `selftest`'s options: --cases, --seed and --json do what they say here; --minutes (one round at
/// 0) and the refusals of bad values are tests/selftest.rs's. A new option needs a probe.
#[test]
fn audit_selftest_options() {
    use clap::CommandFactory;
    let json = |args: &[&str]| -> Value {
        let o = stagewise(&[&["selftest", "--json"][..], args].concat());
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let one = json(&["--cases", "1"]);
    assert_eq!(one["cases"], 1, "{one}");
    assert_eq!(one["seed"], 1, "{one}");
    let two = json(&["--cases", "2", "--seed", "9"]);
    assert_eq!(two["cases"], 2, "{two}");
    assert_eq!(two["seed"], 9, "{two}");
    // --json: one object; without it, the table.
    let o = stagewise(&["selftest", "--cases", "1"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(serde_json::from_str::<Value>(&text).is_err());
    assert!(
        text.contains("algorithm") && text.contains("total"),
        "{text}"
    );

    let cli = stagewise::cli::Cli::command();
    let known: Vec<String> = cli
        .find_subcommand("selftest")
        .unwrap()
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .filter(|l| !matches!(l.as_str(), "--adapter"))
        .collect();
    for k in &known {
        assert!(
            ["--cases", "--seed", "--json", "--minutes"].contains(&k.as_str()),
            "{k}: no probe in audit_selftest_options or tests/selftest.rs"
        );
    }
}
