//! Wisdom in the app: Help ▸ Tune this GPU… runs a short round on the app's own device and shows
//! what changed, Stop keeps the cases finished; the lab fills the options it leaves unset from
//! wisdom and says what it filled (an option set in the lab wins, Use wisdom off compares with the
//! built-in defaults); a corrupt or foreign file is a warning and the defaults, never a crash.
mod common;
use common::Scratch;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::algo::AlgoOptions;
use stagewise::ui::StagewiseApp;
use stagewise::wisdom::{Source, Wisdom};
use std::path::Path;
use std::time::{Duration, Instant};

fn harness<'a>() -> Harness<'a, StagewiseApp> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set before any device exists in this test binary.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    let mut h = Harness::builder()
        .with_size([1400.0, 1000.0])
        .with_max_steps(10)
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| StagewiseApp::new(cc, None));
    // The opening run, then no wisdom but what a test gives (not this machine's own file).
    let start = Instant::now();
    while h.state().is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the opening run never finished"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.state_mut().use_wisdom(Source::Off);
    h.run();
    h
}

/// Step frames while `busy` holds (at most `secs`).
fn wait_while(
    h: &mut Harness<'_, StagewiseApp>,
    secs: u64,
    what: &str,
    busy: impl Fn(&StagewiseApp) -> bool,
) {
    let start = Instant::now();
    while busy(h.state()) {
        assert!(start.elapsed() < Duration::from_secs(secs), "{what}");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.step();
}

/// Help ▸ Tune this GPU…, one room (the tiled BMMC's two suite cases) at 2^12, 2 reps: `false`
/// where the adapter cannot time (the window says so instead).
fn open_tune(h: &mut Harness<'_, StagewiseApp>, minutes: f64, out: &Path) -> bool {
    h.get_by_label("Help").click();
    h.run();
    h.get_by_label("Tune this GPU…").click();
    h.run();
    {
        let t = &mut h.state_mut().tune;
        assert!(t.open);
        for (room, on) in t.rooms.iter_mut() {
            *on = *room == "bmmc";
        }
        t.log_n = Some(12);
        t.minutes = minutes;
        t.reps = 2;
        t.out = Some(out.to_path_buf());
    }
    h.run();
    h.get_by_label_contains("Wisdom in use: none");
    h.get_by_label("Start tuning").click();
    h.step();
    if !h.state().gpu().unwrap().has_timestamps() {
        h.run();
        h.get_by_label_contains("no timestamps");
        return false;
    }
    assert!(h.state().tune.is_running(), "Start did not start it");
    true
}

#[test]
fn help_tune_runs_a_short_round_and_shows_what_changed() {
    let mut h = harness();
    let out_dir = Scratch::new("ui-wisdom");
    let out = out_dir.join("round.json");
    if !open_tune(&mut h, 0.05, &out) {
        return;
    }
    // Frames keep coming while it tunes, and say where it is.
    let start = Instant::now();
    let mut saw_progress = false;
    while h.state().tune.is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the round never ended"
        );
        h.step();
        saw_progress |= h.query_by_label_contains("case 1 of 2: bmmc-").is_some();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    assert!(saw_progress, "no progress line while tuning");
    let f = h.state().tune.finished.clone().expect("a finished round");
    assert!(!f.stopped);
    assert_eq!(f.cases, 2);
    assert_eq!(f.saved, Ok(Some(out.clone())));
    assert!(!f.entries.is_empty(), "{:?}", h.state().tune.skipped);
    for e in &f.entries {
        assert!(e.case.starts_with("bmmc-"), "{e:?}");
        assert_eq!(e.log_n, 12);
        assert!(e.ms > 0.0 && e.default_ms > 0.0 && e.wrong == 0, "{e:?}");
    }
    // The table: a row per case tuned, its speed-up against the built-in default.
    h.get_by_label("speed-up");
    h.get_by_label("changed from the built-in default");
    h.get_by_label(&format!("{} (2^12)", f.entries[0].case));
    let speedup = format!("{:.2}×", f.entries[0].speedup());
    assert!(h.query_all_by_label(&speedup).count() >= 1, "{speedup}");
    h.get_by_label_contains(&format!("wisdom written to {}", out.display()));
    // The file is what `stagewise tune` writes, for this adapter; the app can use it.
    let w = Wisdom::read(&out).unwrap();
    assert_eq!(w.entries.len(), f.entries.len());
    h.state_mut().use_wisdom(Source::File(out.clone()));
    h.run();
    let app = h.state();
    assert!(app.wisdom.loaded.is_some(), "{:?}", app.wisdom.warning);
    assert_eq!(app.wisdom.word(app.gpu().unwrap()), "file");
    h.get_by_label_contains("Wisdom in use: file");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn help_tune_stop_keeps_the_cases_finished() {
    let mut h = harness();
    let out_dir = Scratch::new("ui-wisdom");
    let out = out_dir.join("stopped.json");
    if !open_tune(&mut h, 5.0, &out) {
        return;
    }
    // Stop once the first case is done and the second has begun.
    wait_while(&mut h, 120, "the first case never finished", |a| {
        a.tune.progress.as_ref().is_none_or(|p| p.index < 2)
    });
    h.get_by_label("Stop").click();
    let stopped = Instant::now();
    wait_while(&mut h, 60, "Stop did not end the round", |a| {
        a.tune.is_running()
    });
    h.run();
    assert!(stopped.elapsed() < Duration::from_secs(30));
    let f = h.state().tune.finished.clone().expect("a finished round");
    assert!(f.stopped);
    assert_eq!(f.entries.len(), 1, "the first case is kept: {f:?}");
    assert_eq!(f.saved, Ok(Some(out.clone())));
    assert_eq!(Wisdom::read(&out).unwrap().entries.len(), 1);
    h.get_by_label_contains("stopped: the cases finished are kept");
    h.get_by_label("Start tuning");
    let _ = std::fs::remove_file(&out);
}

/// The lab on the tiled BMMC at 2^10 (one point, no warm-up): `false` where it cannot time.
fn lab_on_bmmc(h: &mut Harness<'_, StagewiseApp>, algo: AlgoOptions) -> bool {
    h.get_by_label("Performance").click();
    h.run();
    if !h.state().gpu().unwrap().has_timestamps() {
        return false;
    }
    {
        let lab = &mut h.state_mut().perf;
        lab.variants = algo
            .algo()
            .info()
            .variants
            .iter()
            .map(|v| (v.name, v.name == "tiled"))
            .collect();
        lab.algo = algo;
        lab.log_lo = 10;
        lab.log_hi = 10;
        lab.reps = 3;
        lab.warmup_ms = 0.0;
    }
    h.run();
    true
}

fn sweep(h: &mut Harness<'_, StagewiseApp>) {
    h.get_by_label("Run sweep").click();
    h.step();
    wait_while(h, 60, "the sweep never finished", |a| a.perf.is_running());
    h.run();
}

#[test]
fn the_lab_fills_unset_options_from_wisdom_and_says_so() {
    let mut h = harness();
    let file_dir = Scratch::new("ui-wisdom");
    let file = file_dir.join("lab.json");
    common::wisdom_for(
        h.state().gpu().unwrap(),
        &[(
            "bmmc",
            "tiled",
            serde_json::json!({}),
            serde_json::json!({"tile_bits": 10, "tile_threads": 128}),
        )],
    )
    .write(&file)
    .unwrap();
    h.state_mut().use_wisdom(Source::File(file.clone()));
    h.run();
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
    h.get_by_label("wisdom: file");
    if !lab_on_bmmc(&mut h, AlgoOptions::Bmmc(Default::default())) {
        return;
    }
    sweep(&mut h);
    let lab = &h.state().perf;
    assert_eq!(lab.rows.len(), 1, "{}", lab.status);
    assert_eq!(lab.rows[0].variant, "tiled + wisdom");
    assert_eq!(lab.filled.len(), 1);
    assert_eq!(
        lab.filled[0].applied.describe(),
        "tile_bits=10 tile_threads=128"
    );
    h.get_by_label(&format!(
        "wisdom: bmmc tiled at 2^10: tile_bits=10 tile_threads=128 (from {})",
        file.display()
    ));

    // An option set in the lab wins: wisdom fills only the threads.
    h.state_mut().perf.algo = AlgoOptions::Bmmc(stagewise::algo::bmmc::Options {
        tile_bits: Some(11),
        ..Default::default()
    });
    h.run();
    sweep(&mut h);
    assert_eq!(
        h.state().perf.filled[0].applied.describe(),
        "tile_threads=128"
    );
    h.get_by_label_contains("wisdom: bmmc tiled at 2^10: tile_threads=128 (from");

    // Use wisdom off: the built-in defaults, a series of their own beside wisdom's.
    h.get_by_label("Use wisdom").click();
    h.run();
    sweep(&mut h);
    let lab = &h.state().perf;
    assert!(!lab.use_wisdom && lab.filled.is_empty() && lab.filled_from.is_none());
    let mut names: Vec<&str> = lab.rows.iter().map(|r| r.variant.as_str()).collect();
    names.sort();
    assert_eq!(names, ["tiled", "tiled + wisdom"]);
    assert!(h.query_by_label_contains("wisdom: bmmc tiled").is_none());
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_corrupt_or_foreign_wisdom_file_is_a_warning_and_the_defaults() {
    let mut h = harness();
    let corrupt_dir = Scratch::new("ui-wisdom");
    let corrupt = corrupt_dir.join("corrupt.json");
    std::fs::write(&corrupt, "{\"version\": 1, \"adapter\": ").unwrap();
    h.state_mut().use_wisdom(Source::File(corrupt.clone()));
    h.run();
    let msg = h.state().message.clone().expect("a warning");
    assert!(
        msg.starts_with("warning: wisdom") && msg.contains("line"),
        "{msg}"
    );
    assert!(h.state().wisdom.loaded.is_none());
    h.get_by_label(&msg);
    h.get_by_label("wisdom: none");

    // Another GPU's file: named, and not used.
    let mut w = common::wisdom_for(
        h.state().gpu().unwrap(),
        &[(
            "bmmc",
            "tiled",
            serde_json::json!({}),
            serde_json::json!({"tile_bits": 10}),
        )],
    );
    w.adapter.name = "Some Other GPU".into();
    let foreign_dir = Scratch::new("ui-wisdom");
    let foreign = foreign_dir.join("foreign.json");
    w.write(&foreign).unwrap();
    h.state_mut().use_wisdom(Source::File(foreign.clone()));
    h.run();
    let msg = h.state().message.clone().expect("a warning");
    assert!(
        msg.contains("Some Other GPU") && msg.contains("built-in defaults"),
        "{msg}"
    );
    assert!(h.state().wisdom.loaded.is_none());

    // The lab runs the built-in defaults and says there is no wisdom.
    if !lab_on_bmmc(&mut h, AlgoOptions::Bmmc(Default::default())) {
        return;
    }
    h.get_by_label_contains("no wisdom for this GPU");
    sweep(&mut h);
    let lab = &h.state().perf;
    assert_eq!(lab.rows.len(), 1, "{}", lab.status);
    assert_eq!(lab.rows[0].variant, "tiled");
    assert!(lab.filled.is_empty());
    let _ = std::fs::remove_file(&corrupt);
    let _ = std::fs::remove_file(&foreign);
}
