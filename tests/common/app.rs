//! The app harness the "Your kernel" UI tests share (tests/ui_kernel.rs, tests/ui_kernel_tune.rs).
use egui_kittest::Harness;
use stagewise::ui::StagewiseApp;
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
