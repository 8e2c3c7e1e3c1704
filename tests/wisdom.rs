//! Wisdom: `stagewise tune` on this adapter (a short, bounded round), the file it writes used by
//! `run` and `bench` where the user left an option unset and never where they gave it; corrupt
//! and foreign files give one warning and the built-in defaults; a planted wrong candidate is never
//! chosen; a candidate past the adapter's limits is refused, never run.
mod common;

use common::{Scratch, bin};
use serde_json::Value;
use std::path::Path;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn stagewise(args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut cmd = bin();
    cmd.args(args);
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

fn temp(name: &str) -> Scratch {
    Scratch::new(&format!("wisdom-{name}"))
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// One short tuning round of the tiled transpose at 2^16 (a few seconds on lavapipe).
fn tune(out: &Path, env: &[(&str, &str)]) -> Out {
    tune_case("bmmc", "bmmc-transpose", out, env)
}

/// One short tuning round of a room's suite cases whose id contains `only`, at 2^16.
fn tune_case(room: &str, only: &str, out: &Path, env: &[(&str, &str)]) -> Out {
    let o = out.to_str().unwrap();
    stagewise(
        &[
            "tune",
            room,
            "--only",
            only,
            "--n",
            "65536",
            "--minutes",
            "3",
            "--reps",
            "3",
            "--out",
            o,
        ],
        env,
    )
}

const RUN: &[&str] = &[
    "run",
    "bmmc",
    "--variant",
    "tiled",
    "--preset",
    "transpose",
    "--n",
    "65536",
    "--fill",
    "random",
    "--json",
];

fn run_with(wisdom: &Path, more: &[&str]) -> (Value, String) {
    let mut a: Vec<&str> = RUN.to_vec();
    a.extend(more);
    a.extend(["--wisdom", wisdom.to_str().unwrap()]);
    let o = stagewise(&a, &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["verified"], true);
    (v, o.stderr)
}

#[test]
fn tuned_wisdom_is_used_where_no_option_is_given() {
    let d = temp("use");
    let w = d.join("w.json");
    let o = tune(&w, &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("bmmc-transpose"), "{}", o.stdout);
    let mut file = read(&w);
    assert_eq!(file["version"], 1);
    let e = &file["entries"][0];
    assert_eq!(e["case"], "bmmc-transpose");
    assert_eq!(e["algorithm"], "bmmc");
    assert_eq!(e["log_n"], 16);
    // The default and each of the tile's other values: verified and timed, or refused.
    let tried = e["timed"].as_u64().unwrap() + e["refused"].as_u64().unwrap();
    assert!(tried >= 2, "{e}");
    assert_eq!(e["wrong"], 0, "{e}");
    assert!(e["ms"].as_f64().unwrap() > 0.0 && e["default_ms"].as_f64().unwrap() > 0.0);

    // Whatever the tuner chose, a file that chooses tile_bits 11 is used ...
    file["entries"][0]["choice"] = serde_json::json!({"tile_bits": 11});
    std::fs::write(&w, file.to_string()).unwrap();
    let (v, _) = run_with(&w, &[]);
    assert_eq!(v["wisdom"]["options"]["tile_bits"], 11, "{}", v["wisdom"]);
    assert_eq!(v["wisdom"]["case"], "bmmc-transpose");
    assert_eq!(v["wisdom"]["log_n"], 16, "the size of the entry taken");
    // ... unless the option is given, or wisdom is off.
    let (v, _) = run_with(&w, &["--tile-bits", "10"]);
    assert!(v.get("wisdom").is_none());
    let mut a: Vec<&str> = RUN.to_vec();
    a.push("--no-wisdom");
    let o = stagewise(&a, &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stdout.contains("\"wisdom\""));
    // A trace shows the kernels as they are: no wisdom.
    let o = stagewise(
        &[
            "run",
            "bmmc",
            "--variant",
            "tiled",
            "--preset",
            "transpose",
            "--n",
            "256",
            "--fill",
            "iota",
            "--trace",
            "--json",
            "--wisdom",
            w.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stdout.contains("\"wisdom\""));
    // bench says which rows took it.
    let o = stagewise(
        &[
            "bench",
            "bmmc",
            "--variant",
            "tiled",
            "--preset",
            "transpose",
            "--n",
            "65536",
            "--reps",
            "2",
            "--warmup-ms",
            "0",
            "--json",
            "--wisdom",
            w.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["wisdom"][0]["options"]["tile_bits"], 11, "{v}");
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    // A suite verifies and times what wisdom fills, and its result says so.
    let suite = d.join("suite.toml");
    std::fs::write(
        &suite,
        "[defaults]\nreps = 2\nwarmup = 1\nmin_warmup_ms = 0\n\n[[case]]\nid = \"t\"\n\
         group = \"g\"\nalgorithm = \"bmmc\"\nvariant = \"tiled\"\n\
         args = [\"--preset\", \"transpose\"]\nlog_n = [16]\n",
    )
    .unwrap();
    let result = d.join("suite.json");
    for (flag, used) in [
        (["--wisdom", w.to_str().unwrap()], true),
        (["--no-wisdom", ""], false),
    ] {
        let mut a = vec![
            "bench",
            "--suite",
            suite.to_str().unwrap(),
            "--peers",
            "none",
            "--out",
            result.to_str().unwrap(),
        ];
        a.extend(flag.iter().filter(|f| !f.is_empty()));
        let o = stagewise(&a, &[]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let r = read(&result);
        assert_eq!(r["cases"][0]["verify"]["verified"], true, "{r}");
        assert_eq!(r["cases"][0]["rows"].as_array().unwrap().len(), 1, "{r}");
        if used {
            assert_eq!(r["wisdom"][0]["options"]["tile_bits"], 11, "{r}");
            assert_eq!(
                (&r["wisdom"][0]["case"], &r["wisdom"][0]["log_n"]),
                (&"t".into(), &16.into())
            );
            assert!(o.stderr.contains("wisdom ("), "{}", o.stderr);
        } else {
            assert!(r.get("wisdom").is_none(), "{r}");
        }
    }
    // wisdom show reads the same file.
    let o = stagewise(&["wisdom", "show", "--wisdom", w.to_str().unwrap()], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("tile_bits=11"), "{}", o.stdout);
}

#[test]
fn corrupt_and_foreign_files_warn_and_change_nothing() {
    let d = temp("bad");
    let corrupt = d.join("corrupt.json");
    std::fs::write(&corrupt, "{\"version\": 1, \"adapter\": ").unwrap();
    let (v, err) = run_with(&corrupt, &[]);
    assert!(v.get("wisdom").is_none());
    assert_eq!(
        err.lines().filter(|l| l.contains("warning")).count(),
        1,
        "{err}"
    );
    assert!(err.contains("line"), "{err}");

    let foreign = d.join("foreign.json");
    let w = serde_json::json!({
        "version": 1,
        "adapter": {"name": "Some Other GPU", "vendor": 4318, "device": 1, "backend": "vulkan",
                    "driver": "x", "driver_info": "1"},
        "limits": {"max_invocations_per_workgroup": 1024, "max_workgroup_storage_bytes": 49152,
                   "max_storage_binding_bytes": 2147483648u64},
        "date": "2026-11-29T00:00:00Z",
        "entries": [{"case": "bmmc-transpose", "algorithm": "bmmc", "variant": "tiled",
                     "dtype": "u32", "log_n": 16, "key": {}, "choice": {"tile_bits": 11},
                     "ms": 1.0, "default_ms": 2.0, "timed": 2, "refused": 0, "wrong": 0}]
    });
    std::fs::write(&foreign, w.to_string()).unwrap();
    let (v, err) = run_with(&foreign, &[]);
    assert!(v.get("wisdom").is_none());
    assert!(
        err.contains("Some Other GPU") && err.contains("warning"),
        "{err}"
    );
    // Importing it is refused, naming both adapters.
    let o = stagewise(&["wisdom", "import", foreign.to_str().unwrap()], &[]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("Some Other GPU"), "{}", o.stderr);
}

#[test]
fn a_planted_wrong_candidate_is_never_chosen() {
    let d = temp("fault");
    let w = d.join("w.json");
    let o = tune(&w, &[("STAGEWISE_FAULT", "wrong-candidate:tile_bits=11")]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .lines()
            .any(|l| l.contains("tile_bits=11") && l.contains("WRONG")),
        "{}",
        o.stderr
    );
    let e = &read(&w)["entries"][0];
    assert_eq!(e["wrong"], 1, "{e}");
    assert_ne!(e["choice"]["tile_bits"], 11, "{e}");
}

#[test]
fn a_candidate_past_the_limits_is_refused_not_run() {
    // Under WebGPU's default limits (256 invocations per workgroup) the scan's 512 and 1024 are
    // refused before any dispatch.
    let d = temp("limits");
    let w = d.join("w.json");
    let o = tune_case(
        "scan",
        "scan-decoupled",
        &w,
        &[("STAGEWISE_LIMITS", "webgpu")],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let refused: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("workgroup_size=") && l.contains("refused"))
        .collect();
    assert!(refused.len() >= 2, "{}", o.stderr);
    for e in read(&w)["entries"].as_array().unwrap() {
        let wg = e["choice"]["workgroup_size"].as_u64().unwrap_or(0);
        assert!(wg <= 256, "{e}");
        assert!(e["refused"].as_u64().unwrap() >= 2, "{e}");
    }
}

#[test]
fn tune_refuses_what_it_cannot_do_in_one_line() {
    for args in [
        &["tune", "bitrev"][..],
        &["tune", "--minutes", "0"],
        &["tune", "fft", "--only", "no-such-case"],
        &["tune", "--n", "0"],
    ] {
        let o = stagewise(args, &[]);
        assert_ne!(o.code, 0, "{args:?}");
        assert_eq!(
            o.stderr.trim_end().lines().count(),
            1,
            "{args:?}: {}",
            o.stderr
        );
    }
    let o = stagewise(&["tune", "--n", "0"], &[]);
    assert!(o.stderr.contains("--n must be at least 1"), "{}", o.stderr);
}

/// The tuner keeps its budget: a case with no time for a candidate after its default stops
/// there and records nothing (the file keeps what it had); a round starts no try its measured
/// tries say would end past its time, so it ends within it but for one try's overrun; a case cut
/// short says so and keeps what it measured.
#[test]
fn the_budget_holds_and_a_case_says_it_stopped_for_time() {
    use stagewise::wisdom::search::{self, Event, Rules};
    use std::time::Instant;
    let gpu = common::gpu();
    let rules = Rules {
        reps: 3,
        min_warmup_ms: 0.0,
    };
    let only = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let all = search::suite_cases(
        &stagewise::cli::Words,
        &[],
        &only(&["bmmc-transpose"]),
        Some(1 << 16),
        false,
    )
    .unwrap();
    let (mut tried, mut skipped, mut cut) = (0, Vec::new(), 0);
    let e = pollster::block_on(search::tune_case(
        gpu,
        &all.cases[0],
        rules,
        0.0,
        &mut |e| match e {
            Event::Tried { .. } => tried += 1,
            Event::Skipped { why, .. } => skipped.push(why),
            Event::OutOfTime { .. } => cut += 1,
            _ => {}
        },
        &|| false,
    ))
    .unwrap();
    assert!(e.is_none(), "{e:?}");
    assert_eq!((tried, cut), (1, 0), "only the default");
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].starts_with("out of time"), "{}", skipped[0]);

    // A round of 12 s over more cases than it can finish at 2^16 on a CPU adapter.
    let all = search::suite_cases(
        &stagewise::cli::Words,
        &only(&["bmmc", "scan"]),
        &[],
        Some(1 << 16),
        false,
    )
    .unwrap();
    let minutes = 0.2;
    let t0 = Instant::now();
    let (mut last, mut longest) = (Instant::now(), 0f64);
    let (mut cases_started, mut cut, mut skipped) = (0, Vec::new(), Vec::new());
    let entries = pollster::block_on(search::tune(
        gpu,
        &all.cases,
        rules,
        minutes,
        &mut |e| {
            // Between two events: at most one try (or a case's confirming pair).
            longest = longest.max(last.elapsed().as_secs_f64());
            last = Instant::now();
            match e {
                Event::Case { .. } => cases_started += 1,
                Event::OutOfTime { case, .. } => cut.push(case.id.clone()),
                Event::Skipped { case, .. } => skipped.push(case.id.clone()),
                _ => {}
            }
        },
        &|| false,
    ))
    .unwrap();
    let took = t0.elapsed().as_secs_f64();
    assert!(
        took <= minutes * 60.0 + 2.0 * longest + 0.5,
        "{took:.1} s for a {:.0} s round (longest try {longest:.2} s)",
        minutes * 60.0
    );
    assert!(!entries.is_empty() && cases_started <= all.cases.len());
    // A case cut short keeps an entry with what it tried beside the default; a skipped one none.
    for id in &cut {
        let e = entries.iter().find(|e| &e.case == id).expect("an entry");
        assert!(e.timed + e.refused + e.wrong >= 2, "{e:?}");
    }
    assert!(entries.iter().all(|e| !skipped.contains(&e.case)));
    assert_eq!(entries.len() + skipped.len(), all.cases.len());
}

/// A case whose one FFT is more than the N a round times at is left out up front, in one line,
/// never tried; `--json` adds what the round did.
#[test]
fn ffts_larger_than_n_are_left_out_in_one_line() {
    let d = temp("left-out");
    let w = d.join("w.json");
    let o = stagewise(
        &[
            "tune",
            "fft",
            "--only",
            "fft-65536,fft-131072",
            "--n",
            "65536",
            "--minutes",
            "0.5",
            "--reps",
            "2",
            "--json",
            "--out",
            w.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.code == 0 || o.code == 3, "{}", o.stderr);
    let left: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("left out:"))
        .collect();
    assert_eq!(left.len(), 1, "{}", o.stderr);
    assert!(
        left[0].contains("fft-131072, rfft-131072") && left[0].contains("--n 65536"),
        "{}",
        left[0]
    );
    assert!(!o.stderr.contains("131072 at n"), "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let round = &v["round"];
    assert_eq!(round["cases"], 2, "{round}");
    assert_eq!(
        round["left_out"],
        serde_json::json!(["fft-131072", "rfft-131072"])
    );
    let named = |k: &str| round[k].as_array().unwrap().len();
    assert_eq!(named("tuned") + named("skipped"), 2, "{round}");
    assert!(round["seconds"].as_f64().unwrap() > 0.0);
    // The file holds only entries; the round is stdout's.
    assert!(read(&w).get("round").is_none());
    assert_eq!(v["entries"], read(&w)["entries"]);
}

#[test]
fn the_roofline_takes_the_copy_shape_from_wisdom() {
    let d = temp("roofline");
    let w = d.join("w.json");
    let o = tune_case("copy", "copy", &w, &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut file = read(&w);
    let e = &file["entries"][0];
    assert_eq!(
        (&e["case"], &e["algorithm"]),
        (&"copy".into(), &"copy".into())
    );
    assert_eq!(e["wrong"], 0, "{e}");
    // Whatever was chosen, a file that chooses two vectors a thread shapes every ratio's copy.
    file["entries"][0]["choice"] = serde_json::json!({"per_thread": 2});
    std::fs::write(&w, file.to_string()).unwrap();
    let bench = |more: &[&str]| {
        let mut a = vec![
            "bench",
            "bitrev",
            "--variant",
            "tiled",
            "--n",
            "65536",
            "--reps",
            "2",
            "--warmup-ms",
            "0",
            "--json",
        ];
        a.extend(more);
        let o = stagewise(&a, &[]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        serde_json::from_str::<Value>(&o.stdout).unwrap()
    };
    let v = bench(&["--wisdom", w.to_str().unwrap()]);
    let used = v["wisdom"].as_array().expect("wisdom rows");
    let roof = used
        .iter()
        .find(|u| u["algorithm"] == "copy" && u["variant"] == "roofline")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(roof["options"]["per_thread"], 2, "{v}");
    assert_eq!(roof["n"], 65536);
    assert!(v["rows"][0]["copy_gbps"].as_f64().unwrap() > 0.0);
    // Off: the built-in shape, and nothing said.
    let v = bench(&["--no-wisdom"]);
    assert!(v.get("wisdom").is_none(), "{v}");
    // The memory lens measures its rates with the same copy.
    let lens = |more: &[&str]| {
        let mut a = vec!["run", "bitrev", "--n", "1024", "--lens", "--json"];
        a.extend(more);
        let o = stagewise(&a, &[]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v = serde_json::from_str::<Value>(&o.stdout).unwrap();
        v["lens_model"]["copy_shape"]["vec4_per_thread"].clone()
    };
    assert_eq!(lens(&["--wisdom", w.to_str().unwrap()]), 2);
    assert_eq!(lens(&["--no-wisdom"]), 4);
}
