//! The app harness the UI tests share (tests/ui.rs, tests/ui_kernel.rs, tests/ui_kernel_tune.rs).
#![allow(dead_code)]
use egui_kittest::Harness;
use stagewise::ui::StagewiseApp;
use std::path::Path;
use std::time::{Duration, Instant};

pub fn harness<'a>() -> Harness<'a, StagewiseApp> {
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
pub fn wait_for_run(h: &mut Harness<'_, StagewiseApp>) {
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

/// Step frames (the app reads the file's time every 300 ms) until `done`, then let the run end.
pub fn step_until(
    h: &mut Harness<'_, StagewiseApp>,
    what: &str,
    done: impl Fn(&StagewiseApp) -> bool,
) {
    let start = Instant::now();
    while !done(h.state()) {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_for_run(h);
}

/// A fresh folder for this test's files.
pub fn scratch(name: &str) -> crate::scratch::Scratch {
    crate::scratch::Scratch::new(&format!("ui-{name}"))
}

/// The room *Your kernel* on `file` over 16 iota values, checked against `expect`.
pub fn kernel_session(s: &mut stagewise::ui::app::Session, file: &Path, expect: &str) {
    use stagewise::algo::{AlgoOptions, kernel};
    s.algo = AlgoOptions::Kernel(kernel::Options {
        wgsl: Some(file.to_path_buf()),
        expect: Some(expect.into()),
        passes: "1".into(),
        items_per_thread: 1,
        ..Default::default()
    });
    s.variant = "wgsl".into();
    s.n = Some(16);
    s.fill = stagewise::data::Fill::Iota;
    s.typed = false;
}
