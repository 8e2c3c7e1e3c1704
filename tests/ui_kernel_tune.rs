//! UI tests of the room "Your kernel"'s tuning: the Tune section times the kernel's overrides and
//! shows the table; a run takes the file's kernel wisdom for the overrides not typed (not with
//! wisdom off) and says so; Run waits while a tuning runs.
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::ui::StagewiseApp;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "common/app.rs"]
mod app;
#[path = "common/scratch.rs"]
mod scratch;
use app::{harness, kernel_session, scratch, step_until, wait_for_run};

/// The room's Tune section: a kernel with two overrides gets value lists around their defaults;
/// Tune runs on the app's device off the UI frame, the table comes with the references and the
/// best row (verified) marked, a wrong value is marked wrong and never best, and "Use for runs"
/// makes the best the runs' overrides.
#[test]
fn the_tune_section_tunes_the_overrides_and_shows_the_table() {
    let dir = scratch("tune");
    let file = dir.join("shifted.wgsl");
    // SHIFT=0 is a copy; any other value is wrong: tuning it must keep SHIFT=0.
    std::fs::write(
        &file,
        "override WG: u32 = 64;\n\
         override SHIFT: u32 = 0;\n\
         @group(0) @binding(0) var<storage, read> src: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n\
         @compute @workgroup_size(WG)\n\
         fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n\
         \x20   let i = g.x + g.y * nwg.x * WG;\n\
         \x20   if (i < arrayLength(&src)) { dst[i] = src[i] + SHIFT; }\n\
         }\n",
    )
    .unwrap();
    let mut h = harness();
    wait_for_run(&mut h);
    kernel_session(&mut h.state_mut().session, &file, "copy");
    h.run();
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(&mut h);
    h.run();
    // Lists around the defaults: WG 32,64,128; SHIFT 0,1,2.
    {
        let t = &h.state().workbench.tune;
        let lists: Vec<(&str, &str)> = t
            .lists
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(lists, [("WG", "32,64,128"), ("SHIFT", "0,1,2")]);
    }
    // Small and quick: two sizes of workgroup, two shifts, at 2^12 elements.
    set_text(&mut h, "SHIFT", "0,1");
    set_text(&mut h, "WG", "32,64");
    h.state_mut().workbench.tune.log_n = 12;
    h.state_mut().workbench.tune.reps = 2;
    h.run();
    h.get_by_label("Tune").click();
    h.step();
    assert!(
        h.state().workbench.tune.is_running(),
        "{:?}",
        h.state().workbench.tune.error
    );
    let start = Instant::now();
    while h.state().workbench.tune.is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the tuning never finished"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    let t = &h.state().workbench.tune;
    let rep = t.report.as_ref().unwrap_or_else(|| panic!("{:?}", t.error));
    assert_eq!(rep.rows.len(), 4);
    let best = rep.best_row().expect("a best row");
    assert!(best.verified());
    assert_eq!(
        best.value("SHIFT"),
        Some(0.0),
        "a wrong shift is never best"
    );
    let best_choice = best.choice();
    h.get_by_label_contains("(same-run copy)");
    h.get_by_label("yes (best)");
    assert_eq!(h.query_all_by_label_contains("WRONG: ").count(), 2);
    h.get_by_label_contains(&format!("best: {best_choice}"));
    h.get_by_label("Save as this file's wisdom");
    if let Ok(img) = h.render() {
        img.save("/tmp/kt/tune_ui.png").ok();
    }
    // The best as the runs' overrides: the room runs with them.
    h.get_by_label("Use for runs").click();
    h.step();
    wait_for_run(&mut h);
    let s = h.state();
    let stagewise::algo::AlgoOptions::Kernel(o) = &s.session.algo else {
        panic!("the kernel room")
    };
    let mut want: Vec<String> = best_choice.split(' ').map(String::from).collect();
    want.sort();
    let mut got = o.overrides.clone();
    got.sort();
    assert_eq!(got, want);
    let r = s.result.as_ref().unwrap();
    assert!(r.verified, "{:?}", r.mismatch);
    std::fs::remove_dir_all(&dir).ok();
}

/// Replace the text of the input labelled `label` with `text`.
fn set_text(h: &mut Harness<'_, StagewiseApp>, label: &str, text: &str) {
    use eframe::egui::accesskit::Role;
    h.get_by_role_and_label(Role::TextInput, label).click();
    h.run();
    for _ in 0..16 {
        h.key_press(eframe::egui::Key::Backspace);
    }
    h.get_by_role_and_label(Role::TextInput, label)
        .type_text(text);
    h.run();
}

/// A copy whose SHIFT (default 1) makes it wrong unless it is 0: which value a run took shows
/// in its verdict.
const SHIFTED: &str = "override SHIFT: u32 = 1;
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * nwg.x * 64u;
    if (i < arrayLength(&src)) { dst[i] = src[i] + SHIFT; }
}
";

/// A scratch folder holding SHIFTED as shifted.wgsl, and the app after its first run.
fn shifted_app<'a>(tag: &str) -> (scratch::Scratch, PathBuf, Harness<'a, StagewiseApp>) {
    let dir = scratch(tag);
    let file = dir.join("shifted.wgsl");
    std::fs::write(&file, SHIFTED).unwrap();
    let mut h = harness();
    wait_for_run(&mut h);
    (dir, file, h)
}

/// Run the room's kernel with `overrides` typed and return (verified, the wisdom line shown).
fn run_with_overrides(h: &mut Harness<'_, StagewiseApp>, overrides: &[&str]) -> (bool, bool) {
    if let stagewise::algo::AlgoOptions::Kernel(o) = &mut h.state_mut().session.algo {
        o.overrides = overrides.iter().map(|s| s.to_string()).collect();
    }
    h.run();
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(h);
    let verified = h.state().result.as_ref().expect("a result").verified;
    let line = h.query_by_label_contains("wisdom (").is_some();
    (verified, line)
}

/// A run in the room takes the file's kernel wisdom for the overrides not typed, as `run kernel`
/// does, and says so; a typed override wins; with wisdom off nothing is read.
#[test]
fn a_run_takes_the_files_kernel_wisdom_unless_typed_or_off() {
    use stagewise::wisdom::{AdapterId, kernel};
    let (dir, file, mut h) = shifted_app("kwisdom");
    let adapter = AdapterId::of(h.state().gpu().expect("a GPU"));
    let entry = kernel::KernelEntry {
        hash: kernel::content_hash(SHIFTED),
        file: file.display().to_string(),
        expect: Some("copy".into()),
        n: 4096,
        choice: serde_json::json!({"SHIFT": 0}).as_object().unwrap().clone(),
        ms: 1.0,
        copy_ms: 1.0,
        date: "2026-11-29T00:00:00Z".into(),
    };
    let wisdom = dir.join("kernels.json");
    kernel::KernelWisdom {
        version: kernel::VERSION,
        adapter,
        entries: vec![entry],
    }
    .write(&wisdom)
    .unwrap();
    h.state_mut().workbench.wisdom_file = Some(wisdom.clone());
    kernel_session(&mut h.state_mut().session, &file, "copy");
    // Wisdom's SHIFT=0: a copy, verified, and the room names the file and the value.
    assert_eq!(run_with_overrides(&mut h, &[]), (true, true));
    h.get_by_label(&format!("wisdom ({}): SHIFT=0", wisdom.display()));
    let r = h.state().result.clone().unwrap();
    assert_eq!(r.extra["kernel"]["overrides"]["SHIFT"], 0, "{:?}", r.extra);
    // The session keeps what the user typed (nothing): wisdom fills the run, not the options.
    let stagewise::algo::AlgoOptions::Kernel(o) = &h.state().session.algo else {
        panic!("the kernel room")
    };
    assert!(o.overrides.is_empty(), "{:?}", o.overrides);
    // Typed SHIFT=1 wins: wrong, and no wisdom line.
    assert_eq!(run_with_overrides(&mut h, &["SHIFT=1"]), (false, false));
    // Wisdom off (--no-wisdom, STAGEWISE_WISDOM=off): the kernel's default SHIFT=1.
    h.state_mut().use_wisdom(stagewise::wisdom::Source::Off);
    assert_eq!(run_with_overrides(&mut h, &[]), (false, false));
    std::fs::remove_dir_all(&dir).ok();
}

/// While the room's tuning runs, Run on GPU is disabled and says why; a run asked for meanwhile
/// (Ctrl+R) starts once the tuning ends.
#[test]
fn run_waits_while_the_kernel_is_tuned() {
    use egui_kittest::kittest::NodeT;
    let (dir, file, mut h) = shifted_app("tuning");
    kernel_session(&mut h.state_mut().session, &file, "copy");
    h.run();
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(&mut h);
    let runs = h.state().workbench.reruns;
    // Enough work that the tuning outlasts the frames below on any GPU; stopped when done.
    set_text(&mut h, "SHIFT", "0,1,2,3,4,5,6,7");
    h.state_mut().workbench.tune.log_n = 24;
    h.state_mut().workbench.tune.reps = 200;
    h.run();
    h.get_by_label("Tune").click();
    // The click's frame starts the tuning before it draws Run on GPU: disabled from then on.
    h.step();
    assert!(h.state().workbench.tune.is_running());
    {
        let run = h.get_by_label("Run on GPU");
        let a = run.accesskit_node();
        assert!(a.is_disabled(), "Run on GPU is enabled during the tuning");
        let why = a.description().unwrap_or_default();
        assert!(why.contains("tuning of this kernel is running"), "{why}");
    }
    h.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::R);
    h.step();
    assert!(!h.state().is_running(), "a run started beside the tuning");
    assert!(h.state().workbench.after_tuning);
    h.state_mut().result = None;
    h.get_by_label("Stop tuning").click();
    step_until(&mut h, "the tuning stopped and the run started", |a| {
        !a.workbench.tune.is_running() && !a.workbench.after_tuning
    });
    assert!(h.state().result.is_some(), "the run asked for never ran");
    assert_eq!(h.state().workbench.reruns, runs, "not a re-run on save");
    assert!(!h.get_by_label("Run on GPU").accesskit_node().is_disabled());
    std::fs::remove_dir_all(&dir).ok();
}
