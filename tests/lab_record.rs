//! The performance lab against the suite's record, on the GPU the record was made on: the lab at
//! its defaults (warm-up, reps, every bit-reversal variant) swept at 2^28 only, on a fresh machine
//! as the first thing run, must give the tiled bit-reversal the record's fraction of copy within
//! 2 % (a lab that times cold clocks reads far off). Ignored by default: it needs 2^28-word
//! buffers and the record's GPU. On the lent H100, from the checkout's root:
//! `target/release/deps/lab_record-* --ignored --nocapture`.
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::ui::StagewiseApp;
use std::time::{Duration, Instant};

const LOG_N: u32 = 28;

/// The record's fraction of copy for the tiled bit-reversal at 2^LOG_N, and the record's adapter.
fn record() -> (f64, String) {
    let path = std::path::Path::new("docs/perf/h100.json");
    let path = if path.exists() {
        path.to_path_buf()
    } else {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
    };
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let case = file["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"]["id"] == "bitrev-tiled")
        .expect("the record has the tiled bit-reversal");
    let row = case["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["n"] == 1u64 << LOG_N)
        .expect("the record has 2^28");
    (
        row["fraction_of_copy"].as_f64().unwrap(),
        file["adapter"].as_str().unwrap().to_string(),
    )
}

#[test]
#[ignore = "needs the record's GPU (2^28-word buffers); run on the lent H100"]
fn the_lab_at_its_defaults_gives_the_suite_records_fraction_of_copy() {
    let (want, record_adapter) = record();
    let mut h = Harness::builder()
        .with_size([1280.0, 800.0])
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| StagewiseApp::new(cc, None));
    let start = Instant::now();
    while h.state().is_running() {
        assert!(start.elapsed() < Duration::from_secs(60), "the opening run");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let adapter = h.state().gpu().expect("a device").adapter_name();
    assert!(
        record_adapter.starts_with(&adapter),
        "the record is of {record_adapter}; this is {adapter}"
    );
    h.get_by_label("Performance").click();
    h.run();
    let defaults = stagewise::ui::perf::PerfLab::default();
    {
        let lab = &mut h.state_mut().perf;
        assert_eq!(lab.reps, defaults.reps);
        assert_eq!(lab.warmup_ms, defaults.warmup_ms);
        lab.log_lo = LOG_N;
        lab.log_hi = LOG_N;
    }
    let t0 = Instant::now();
    h.run();
    h.get_by_label("Run sweep").click();
    h.step();
    while h.state().perf.is_running() {
        assert!(t0.elapsed() < Duration::from_secs(300), "the sweep");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    let lab = &h.state().perf;
    for r in &lab.rows {
        println!(
            "lab: {} {} n=2^{} median {:.4} ms, copy {:.1} GB/s, {:.4} of copy, warmed {:.0} ms ({} runs), suspect {}",
            r.algorithm,
            r.variant,
            r.n.trailing_zeros(),
            r.median_ms,
            r.copy_gbps,
            r.fraction_of_copy,
            r.warmup_ms,
            r.warmup_runs,
            r.suspect
        );
    }
    let tiled = lab
        .rows
        .iter()
        .find(|r| r.variant == "tiled")
        .unwrap_or_else(|| panic!("no tiled row: {}", lab.status));
    let off = tiled.fraction_of_copy / want - 1.0;
    println!(
        "lab at its defaults, tiled 2^{LOG_N}: {:.4} of copy; the suite's record {want:.4}: {:+.2} % ({:.1} s)",
        tiled.fraction_of_copy,
        off * 100.0,
        t0.elapsed().as_secs_f64()
    );
    assert!(!tiled.suspect);
    assert!(off.abs() <= 0.02, "{off:+.4} off the record");
}
