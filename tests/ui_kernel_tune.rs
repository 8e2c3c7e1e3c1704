//! UI tests of the room "Your kernel"'s tuning: the Tune section times the kernel's overrides and
//! shows the table.
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::ui::StagewiseApp;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn harness<'a>() -> Harness<'a, StagewiseApp> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set before any device exists in this test binary.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    Harness::builder()
        .with_size([1400.0, 1000.0])
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| StagewiseApp::new(cc, None))
}

/// Step frames until the GPU run started by the app has delivered its result.
fn wait_for_run(h: &mut Harness<'_, StagewiseApp>) {
    let start = Instant::now();
    while h.state().is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the GPU run never finished"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
}

/// A fresh folder for this test's files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stagewise-ui-ktune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The room *Your kernel* on `file`, checked as a bit-reversal of 16 iota values.
fn bitrev_kernel_session(s: &mut stagewise::ui::app::Session, file: &std::path::Path) {
    use stagewise::algo::{AlgoOptions, kernel};
    s.algo = AlgoOptions::Kernel(kernel::Options {
        wgsl: Some(file.to_path_buf()),
        expect: Some("bitrev".into()),
        passes: "1".into(),
        items_per_thread: 1,
        ..Default::default()
    });
    s.variant = "wgsl".into();
    s.n = Some(16);
    s.fill = stagewise::data::Fill::Iota;
    s.typed = false;
}

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
    bitrev_kernel_session(&mut h.state_mut().session, &file);
    if let stagewise::algo::AlgoOptions::Kernel(o) = &mut h.state_mut().session.algo {
        o.expect = Some("copy".into());
    }
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
