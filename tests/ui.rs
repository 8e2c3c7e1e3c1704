//! UI tests: the real app under egui_kittest, on a wgpu device (lavapipe in CI) that the app's
//! compute pipelines share.
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scratch::Scratch;
use stagewise::ui::StagewiseApp;
use std::time::{Duration, Instant};

#[path = "common/app.rs"]
mod app;
#[path = "common/scratch.rs"]
mod scratch;
use app::wait_for_run;

fn harness<'a>() -> Harness<'a, StagewiseApp> {
    harness_sized([1280.0, 800.0])
}

fn harness_sized<'a>(size: [f32; 2]) -> Harness<'a, StagewiseApp> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set before any device exists in this test binary.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    Harness::builder()
        .with_size(size)
        // egui's theme fade can take a few more frames to settle on a loaded machine.
        .with_max_steps(10)
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| StagewiseApp::new(cc, None))
}

/// The seed example's output (the opening run: bit-reversal of the seed's 16 values).
const SEED_OUT: [u32; 16] = [41, 62, 69, 81, 34, 5, 78, 61, 67, 64, 24, 27, 0, 45, 58, 91];

/// Clicks "Run on GPU" and waits for the run to end.
fn run_again(h: &mut Harness<'_, StagewiseApp>) {
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(h);
}

/// The last run ended without a message, verified, with the seed example's output.
fn assert_seed_result(h: &Harness<'_, StagewiseApp>) {
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
    let r = h.state().result.as_ref().unwrap();
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.output.bits, SEED_OUT);
}

/// Pass times from timestamps the clock check distrusts (a test hook: they read a thousandth of
/// the work's time) are not shown, and the panel says why.
#[test]
fn distrusted_timestamps_show_no_pass_times_and_say_why() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.state().gpu().unwrap().inject_clock_scale(1e-3);
    run_again(&mut h);
    assert_seed_result(&h);
    let r = h.state().result.as_ref().unwrap();
    assert!(
        r.passes.iter().all(|p| p.gpu_ms.is_none()),
        "{:?}",
        r.passes
    );
    assert!(h.get_all_by_label("unavailable").count() > 0);
    h.get_by_label_contains("No pass times: ");
    if h.state().gpu().unwrap().has_timestamps() {
        h.get_by_label_contains("timestamps read under a tenth of the wall time");
    }
}

#[test]
fn opens_on_the_seed_example_and_steps_through_stages() {
    let mut h = harness();
    wait_for_run(&mut h);
    let r = h
        .state()
        .result
        .as_ref()
        .expect("the opening run produced a result");
    assert_eq!(r.algorithm, "bitrev");
    assert_eq!(r.variant, "staged");
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.output.bits, SEED_OUT);
    // The Demo-B diagram is on screen: its title and the stage rows.
    h.get_by_label("Stage 1 / 4");
    h.get_by_label_contains("Stage 1: 2 blocks of 8");
    h.get_by_label("Next >").click();
    h.run();
    h.get_by_label("Stage 2 / 4");
    h.get_by_label_contains("Stage 2: 4 blocks of 4");
    h.get_by_label("Last >|").click();
    h.run();
    h.get_by_label("Stage 4 / 4");
    h.get_by_label("|< First").click();
    h.run();
    h.get_by_label("Stage 0 / 4");
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
}

#[test]
fn naive_variant_shows_demo_a() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.state_mut().session.variant = "naive".into();
    h.run();
    run_again(&mut h);
    let r = h.state().result.as_ref().unwrap();
    assert_eq!(r.variant, "naive");
    assert!(r.verified);
    h.get_by_label("Stage 1 / 1");
    h.get_by_label("Demo A — the new position of index");
    h.get_by_label_contains("irev &= N − 1");
}

#[test]
fn bad_typed_input_is_a_message_not_a_panic() {
    let mut h = harness();
    wait_for_run(&mut h);
    {
        let s = &mut h.state_mut().session;
        s.typed = true;
        s.text = "1 2 x3".into();
    }
    h.run(); // lay out the text box before clicking
    h.get_by_label("Run on GPU").click();
    h.step();
    let msg = h.state().message.clone().expect("an error message");
    assert!(msg.contains("'x3' is not a u32"), "{msg}");
    // A non-power-of-two length is refused by the algorithm with a clear message, on the worker.
    h.state_mut().session.text = "1 2 3".into();
    run_again(&mut h);
    let msg = h.state().message.clone();
    let msg = msg.unwrap_or_else(|| {
        panic!(
            "an error message; result {:?}",
            h.state().result.as_ref().map(|r| &r.input)
        )
    });
    assert!(msg.contains("power of two"), "{msg}");
    // The app keeps working: the next good run succeeds.
    h.state_mut().session.text = "4 3 2 1".into();
    run_again(&mut h);
    assert_eq!(h.state().result.as_ref().unwrap().output.bits, [4, 2, 3, 1]);
}

#[test]
fn performance_lab_runs_a_sweep_and_plots_it() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.get_by_label("Performance").click();
    h.run();
    {
        let lab = &mut h.state_mut().perf;
        lab.log_lo = 10;
        lab.log_hi = 11;
        lab.reps = 3;
    }
    h.run();
    // Before any sweep: a line that says what a sweep does, not an empty plot with stray ticks.
    h.get_by_label_contains(
        "No measurements yet: Run sweep times every selected variant from 2^10 to 2^11",
    );
    h.get_by_label("Run sweep").click();
    h.step();
    let start = Instant::now();
    while h.state().perf.is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "sweep never finished"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    let rows = &h.state().perf.rows;
    assert_eq!(
        rows.len(),
        6,
        "3 variants (naive, staged, tiled) x 2 sizes: {:?}",
        h.state().perf.status
    );
    for r in rows {
        assert!(r.gbps > 0.0 && r.copy_gbps > 0.0 && r.fraction_of_copy > 0.0);
    }
    assert!(h.query_by_label_contains("No measurements yet").is_none());
    h.get_by_label("copy roofline (same run)");
    // The y axis as a fraction of the same-run copy, on a log scale.
    h.get_by_label("fraction of copy").click();
    h.run();
    h.get_by_label("log scale").click();
    h.run();
    let lab = &h.state().perf;
    assert_eq!(lab.y_axis, stagewise::ui::perf::YAxis::FractionOfCopy);
    assert!(lab.log_y);
    h.get_by_label("same-run copy = 1");
    assert!(h.query_by_label("copy roofline (same run)").is_none());
    h.get_by_label("Export CSV");
    h.get_by_label("Stages").click();
    h.run();
    h.get_by_label("Stage 1 / 4");
}

/// Roles of widgets a user operates: each must explain itself (a tooltip, which egui also gives
/// to accessibility as the node's description).
fn is_control(role: eframe::egui::accesskit::Role) -> bool {
    use eframe::egui::accesskit::Role::*;
    matches!(
        role,
        Button
            | CheckBox
            | Slider
            | SpinButton
            | ComboBox
            | TextInput
            | MultilineTextInput
            | MenuItem
            | MenuItemCheckBox
            | MenuItemRadio
            | RadioButton
            | Switch
            | Tab
            | Link
    )
}

/// Every visible control of the current frame with no description: (role, label).
///
/// Two kinds of node share another node's tooltip and are not counted: the value box of a slider
/// (egui's `Slider` response is the union of the slider and its value box, so hovering either shows
/// the tooltip, which accessibility gets on the slider node), and the entries of an egui_plot
/// legend (drawn by egui_plot, which takes no tooltips; clicking one shows or hides its line).
fn controls_without_tooltip(h: &Harness<'_, StagewiseApp>) -> (usize, Vec<String>) {
    use eframe::egui::accesskit::Role;
    use egui_kittest::kittest::NodeT;
    let described = |a: &egui_kittest::kittest::AccessKitNode<'_>| {
        a.description().is_some_and(|d| !d.trim().is_empty())
    };
    let mut seen = 0;
    let mut missing = Vec::new();
    for n in h.root().children_recursive() {
        let a = n.accesskit_node();
        if a.is_hidden() || !is_control(a.role()) {
            continue;
        }
        seen += 1;
        if described(&a) {
            continue;
        }
        let siblings: Vec<_> = n
            .parent()
            .map(|p| p.accesskit_node().children().collect())
            .unwrap_or_default();
        let slider_value = a.role() == Role::SpinButton
            && siblings
                .iter()
                .any(|s| s.role() == Role::Slider && described(s));
        let legend_entry = a.role() == Role::CheckBox
            && siblings
                .iter()
                .all(|s| s.role() == Role::CheckBox && !described(s));
        if !slider_value && !legend_entry {
            missing.push(format!(
                "{:?} '{}'",
                a.role(),
                a.label().unwrap_or_default()
            ));
        }
    }
    (seen, missing)
}

fn run_algo(h: &mut Harness<'_, StagewiseApp>, algo: stagewise::algo::AlgoOptions) {
    {
        let s = &mut h.state_mut().session;
        s.variant = algo.algo().info().variants[0].name.into();
        s.fill = if algo.algo().example(s.dtype).is_some() {
            stagewise::data::Fill::Example
        } else {
            stagewise::data::Fill::Small
        };
        s.typed = false;
        s.algo = algo;
    }
    h.run();
    // The FFT's option list reaches below an 800-pixel window: scroll the button into view.
    h.get_by_label("Run on GPU").scroll_to_me();
    h.run();
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(h);
}

#[test]
fn every_control_has_a_tooltip() {
    let mut h = harness();
    wait_for_run(&mut h);
    let mut report = Vec::new();
    let mut total = 0;
    let mut check = |h: &Harness<'_, StagewiseApp>, view: &str| {
        let (seen, missing) = controls_without_tooltip(h);
        total += seen;
        for m in missing {
            report.push(format!("{view}: {m}"));
        }
    };
    for algo in stagewise::algo::AlgoOptions::all_defaults() {
        let name = algo.name();
        run_algo(&mut h, algo);
        assert!(
            h.state().message.is_none(),
            "{name}: {:?}",
            h.state().message
        );
        check(&h, name);
        if name == "fft" {
            // The large plan's grid view, on the rows pass (its transpose and memory-order switch).
            run_algo(&mut h, fft_large_options(256, 16));
            h.get_by_label("Last >|").click();
            h.run();
            check(&h, "fft large");
        }
        if name == "bmmc" {
            for tab in ["Permuted image", "Matrix editor", "rank statistics", "Plan"] {
                h.get_by_label(tab).click();
                h.run();
                check(&h, &format!("bmmc {tab}"));
            }
        }
    }
    // The room "Your kernel", on an exercise copied to a folder of this test's own.
    let home = Scratch::new("ui-tooltips");
    h.state_mut().workbench.home = Some(home.to_path_buf());
    h.get_by_label("Exercises").click();
    h.run();
    h.get_by_label("Prefix sums by the ladder").click();
    h.step();
    wait_for_run(&mut h);
    assert!(h.state().in_kernel_room());
    check(&h, "Your kernel");
    // The menus, opened.
    for (menu, item) in [
        ("File", "Open input…"),
        ("View", "Dark / light theme"),
        ("Help", "Self-test…"),
        ("Exercises", "Bit-reversal, one thread per element"),
    ] {
        h.get_by_label(menu).click();
        h.run();
        h.get_by_label(item);
        check(&h, &format!("{menu} menu"));
        h.key_press(eframe::egui::Key::Escape);
        h.run();
    }
    h.get_by_label("Performance").click();
    h.run();
    check(&h, "Performance");
    assert!(total > 40, "only {total} controls seen");
    assert!(
        report.is_empty(),
        "controls without a tooltip:\n{}",
        report.join("\n")
    );
}

#[test]
fn hovering_shows_the_tooltip() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.get_by_label("Next >").hover();
    // Tooltips appear after egui's hover delay: keep the pointer there for a few frames.
    for _ in 0..90 {
        h.step();
    }
    h.get_by_label("Next stage (Right arrow key)");
    h.get_by_label("Run on GPU").hover();
    for _ in 0..90 {
        h.step();
    }
    h.get_by_label_contains("Run every pass on the GPU and read the buffers back");
}

#[test]
fn out_of_memory_is_a_message_and_the_next_run_works() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.state().gpu().expect("a device").inject_out_of_memory();
    run_again(&mut h);
    let msg = h.state().message.clone().expect("an out-of-memory message");
    assert!(
        msg.starts_with("GPU out of memory: ") && msg.contains("use a smaller N"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "one line: {msg}");
    h.get_by_label_contains("GPU out of memory");
    // The fault was one allocation: the next run works.
    run_again(&mut h);
    assert_seed_result(&h);
}

#[test]
fn a_lost_device_is_replaced_and_the_next_run_works() {
    let mut h = harness();
    wait_for_run(&mut h);
    // Hand the app a headless device of its own, run on it, then destroy it.
    let g = stagewise::gpu::Gpu::headless(None).expect("a headless device");
    h.state_mut().use_gpu(g.clone());
    run_again(&mut h);
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
    g.device.destroy();
    drop(g);
    run_again(&mut h);
    let msg = h.state().message.clone().expect("a device-lost message");
    assert!(
        msg.contains("device lost") && msg.contains("re-created a device"),
        "{msg}"
    );
    let fresh = h.state().gpu().expect("a new device");
    assert!(fresh.lost().is_none());
    // The next run works on the new device.
    run_again(&mut h);
    assert_seed_result(&h);
}

/// Demo B at its last stage: one label under each of the 16 blocks, each as wide as its block and
/// inside the diagram (they used to drift right until "Block 15" ran under the code panel), and
/// the lines that show where every element moves.
#[test]
fn demo_b_block_labels_fit_and_moves_are_drawn() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.get_by_label("Last >|").click();
    h.run();
    h.get_by_label("Stage 4 / 4");
    h.get_by_label_contains("Lines between the rows: where every element moves");
    let rects: Vec<eframe::egui::Rect> = (0..16)
        .map(|b| {
            [format!("Block {b}"), format!("B{b}"), b.to_string()]
                .iter()
                .find_map(|t| h.query_by_label(t).map(|n| n.rect()))
                .unwrap_or_else(|| panic!("no label under block {b}"))
        })
        .collect();
    let w = rects[0].width();
    assert!(w > 0.0);
    for (b, r) in rects.iter().enumerate() {
        let want = rects[0].left() + w * b as f32;
        assert!(
            (r.left() - want).abs() < 1.0 && (r.width() - w).abs() < 1.0,
            "block {b}'s label at {r:?}, want left {want} width {w}"
        );
    }
    let panel = h.get_by_label("What happened").rect();
    assert!(
        rects[15].right() <= panel.left(),
        "the last block label ({:?}) runs under the code panel ({:?})",
        rects[15],
        panel
    );
}

/// The code panel wraps long WGSL lines (on by default) and scrolls them sideways when unwrapped.
#[test]
fn code_panel_wraps_long_lines() {
    let mut h = harness();
    wait_for_run(&mut h);
    let line = |h: &Harness<'_, StagewiseApp>| {
        h.get_by_label_contains("fn stage_split(@builtin(global_invocation_id)")
            .rect()
    };
    let panel = h.get_by_label("What happened").rect();
    let wrapped = line(&h);
    assert!(
        wrapped.right() <= 1280.0 && wrapped.left() >= panel.left() - 1.0,
        "wrapped line at {wrapped:?}"
    );
    h.get_by_label("Wrap long lines").click();
    h.run();
    let long = line(&h);
    assert!(
        long.width() > wrapped.width() && long.height() < wrapped.height(),
        "unwrapped {long:?} vs wrapped {wrapped:?}"
    );
}

fn fft_large_options(size: usize, split: usize) -> stagewise::algo::AlgoOptions {
    use stagewise::algo::fft::{Kernel, Options};
    stagewise::algo::AlgoOptions::Fft(Options {
        size: Some(size),
        kernel: Kernel::Large,
        split: Some(split),
        ..Default::default()
    })
}

/// A traced 256-point FFT on the large plan (16 × 16): the grid view with its pass strip, the
/// current pass lit through the stages, the twiddles and the fused transpose's matrix beside the
/// grid, and the seed's ownership diagram of one sub-FFT on demand.
#[test]
fn large_fft_view_draws_the_grid_and_the_pass_strip() {
    let mut h = harness_sized([1600.0, 1100.0]);
    wait_for_run(&mut h);
    run_algo(&mut h, fft_large_options(256, 16));
    let r = h.state().result.as_ref().expect("a result");
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.stages.len(), 3, "input, columns, rows");
    assert!(r.stages.iter().all(|s| s.fft_pass().is_some()));
    assert!(h.query_all_by_label("input").count() >= 1);
    for t in [
        "pass 0 · columns",
        "× W_N^(col·k1)",
        "pass 1 · rows",
        "transpose 16 × 16 (BMMC)",
    ] {
        h.get_by_label(t);
    }
    h.get_by_label("16 × 16-point FFTs, down the columns");
    h.get_by_label("|< First").click();
    h.run();
    h.get_by_label_contains("Input: x as the 16 × 16 grid");
    h.get_by_label("Next >").click();
    h.run();
    h.get_by_label_contains("Pass 0 — columns: 16 FFTs of 16 points");
    h.get_by_label("× W_N^(col·k1), fused");
    h.get_by_label("Next >").click();
    h.run();
    h.get_by_label_contains("Pass 1 — rows: 16 FFTs of 16 points");
    h.get_by_label("transpose 16 × 16, fused");
    h.get_by_label_contains("row k1 = 0: before Y[16·0 + n2]");
    // The seed's diagram for one 16-point row, derived from its schedule (not a GPU trace).
    let t = h.get_by_label("seed's ownership diagram of this sub-FFT");
    eprintln!("TOGGLE {:?} {:?}", t.rect(), t.value());
    t.click();
    h.run();
    let t = h.get_by_label("seed's ownership diagram of this sub-FFT");
    eprintln!("TOGGLE {:?} {:?}", t.rect(), t.value());
    h.get_by_label_contains("This is the seed's schedule (model::schedule) for one 16-point");
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
}

/// A 4096-point FFT on the large plan (64 × 64): the columns pass stores units of 16 columns,
/// and the pass strip names that store apart from the rows' transpose; the traced columns stage
/// is shown (and checked) in grid order.
#[test]
fn large_fft_pass_strip_names_the_units_store() {
    let mut h = harness_sized([1600.0, 1100.0]);
    wait_for_run(&mut h);
    run_algo(&mut h, fft_large_options(4096, 64));
    let r = h.state().result.as_ref().expect("a result");
    assert!(r.verified, "{:?}", r.mismatch);
    h.get_by_label("units of 16 columns (BMMC)");
    h.get_by_label("transpose 64 × 64 (BMMC)");
    assert!(h.state().message.is_none(), "{:?}", h.state().message);
}

/// The large plan is reachable from the app's controls: the generic option editor offers the
/// kernel as a list (with `large`) and takes `split` as a number; the FFT view has its own
/// "large plan" switch and split slider.
#[test]
fn large_fft_kernel_and_split_can_be_picked_in_the_controls() {
    use eframe::egui::accesskit::Role;
    use stagewise::algo::AlgoOptions;
    use stagewise::algo::fft::{Kernel, Options};
    let mut h = harness();
    wait_for_run(&mut h);
    run_algo(&mut h, AlgoOptions::Fft(Options::default()));
    // The FFT view's switch: a run on the large plan.
    h.get_by_label("large plan").click();
    h.step();
    h.step();
    wait_for_run(&mut h);
    h.get_by_role_and_label(Role::Slider, "log2 N1 (split)");
    let r = h.state().result.as_ref().expect("a result");
    assert_eq!(
        r.extra.get("kernel").and_then(|v| v.as_str()),
        Some("large"),
        "{:?}",
        h.state().message
    );
    // The option editor: size and split typed, kernel picked from its list.
    run_algo(&mut h, AlgoOptions::Fft(Options::default()));
    let size = h.get_by_role_and_label(Role::TextInput, "size");
    size.click();
    size.type_text("256");
    h.run();
    h.key_press(eframe::egui::Key::Enter);
    h.step();
    h.step();
    wait_for_run(&mut h);
    h.get_by_role_and_label(Role::ComboBox, "kernel").click();
    h.run();
    h.get_by_label("large").click();
    h.step();
    h.step();
    wait_for_run(&mut h);
    let split = h.get_by_role_and_label(Role::TextInput, "split");
    split.click();
    split.type_text("16");
    h.run();
    h.key_press(eframe::egui::Key::Enter);
    h.step();
    h.step();
    wait_for_run(&mut h);
    let AlgoOptions::Fft(o) = &h.state().session.algo else {
        panic!("fft options")
    };
    assert_eq!(
        (o.size, o.kernel, o.split),
        (Some(256), Kernel::Large, Some(16))
    );
    let r = h.state().result.as_ref().expect("a result");
    assert_eq!(
        r.extra["split"],
        serde_json::json!([16, 16]),
        "{:?}",
        h.state().message
    );
    // Set options (size, split) get a button back to "not set".
    assert!(h.query_all_by_label("×").count() >= 2);
}

/// Past 16384 cells the grid is drawn as a heat map of blocks, and says so on screen.
#[test]
fn large_fft_grid_past_16384_cells_is_downsampled() {
    let mut h = harness();
    wait_for_run(&mut h);
    run_algo(&mut h, fft_large_options(65536, 256));
    let r = h.state().result.as_ref().expect("a result");
    assert!(r.verified, "{:?}", r.mismatch);
    h.get_by_label("Last >|").click();
    h.run();
    h.get_by_label_contains(
        "too big to draw cell by cell: downsampled to 128 × 128 blocks of 2 × 2 cells",
    );
}

// ---------------------------------------------------------------------------------------------
// Streamed traces: stages arrive while the run goes on.

use stagewise::ui::app::TraceState;
use std::sync::mpsc::{Sender, channel};

/// The session's run on `gpu` by the app's own worker code, on its own thread, but each message
/// it sends (head, stages, result) held until the test lets one through (a token on the gate).
fn gated_run(h: &mut Harness<'_, StagewiseApp>, gpu: stagewise::gpu::Gpu) -> Sender<()> {
    let job = h.state().session.job().expect("a runnable session");
    let (tx, rx) = channel();
    let (gate, tokens) = channel::<()>();
    h.state_mut().follow(rx);
    std::thread::spawn(move || {
        pollster::block_on(job.run(&gpu, &mut |m| tokens.recv().is_ok() && tx.send(m).is_ok()));
    });
    gate
}

/// Let `k` messages through, then step frames until the app shows `stages` stages of the run on
/// 1024 elements.
fn let_through(h: &mut Harness<'_, StagewiseApp>, gate: &Sender<()>, k: usize, stages: usize) {
    for _ in 0..k {
        gate.send(()).expect("the worker waits at the gate");
    }
    let start = Instant::now();
    let shown = |h: &Harness<'_, StagewiseApp>| {
        let r = h.state().result.as_ref().filter(|r| r.n == 1024);
        r.map_or(0, |r| r.stages.len())
    };
    while shown(h) < stages {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "stage {stages} never arrived"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Bit-reversal (Demo B) on 0..1024: 10 stages after the input.
fn iota_1024(h: &mut Harness<'_, StagewiseApp>) {
    let s = &mut h.state_mut().session;
    s.typed = false;
    s.fill = stagewise::data::Fill::Iota;
    s.log_n = 10;
}

/// A run whose stages arrive one by one is viewable while it runs: the timeline grows with the
/// stages, the view draws the stage it is on, the progress line counts what arrived, and the
/// result (the verdict, the pass times) lands at the end.
#[test]
fn a_streamed_trace_is_viewable_before_the_run_ends() {
    let mut h = harness();
    wait_for_run(&mut h);
    iota_1024(&mut h);
    let gpu = h.state().gpu().expect("a device").clone();
    let gate = gated_run(&mut h, gpu);
    // The head, the input and stage 1.
    let_through(&mut h, &gate, 3, 2);
    assert!(h.state().is_running());
    assert_eq!(h.state().trace, TraceState::Arriving { of: 11 });
    h.get_by_label_contains("Streaming the trace: stage 1 of 10 arrived");
    h.get_by_label("Stage 1 / 1");
    h.get_by_label_contains("Stage 1: 2 blocks of 512");
    h.get_by_label_contains("Streaming: checked stage by stage");
    // Nothing past what arrived.
    h.get_by_label("Next >").click();
    h.step();
    h.get_by_label("Stage 1 / 1");
    // Two more: the timeline grows and the view steps onto them.
    let_through(&mut h, &gate, 2, 4);
    h.get_by_label_contains("Streaming the trace: stage 3 of 10 arrived");
    h.get_by_label("Last >|").click();
    h.step();
    h.get_by_label("Stage 3 / 3");
    h.get_by_label_contains("Stage 3: 8 blocks of 128");
    assert!(
        h.state().result.as_ref().unwrap().passes[0]
            .gpu_ms
            .is_none()
    );
    // The rest, and the result.
    for _ in 0..100 {
        let _ = gate.send(());
    }
    wait_for_run(&mut h);
    let st = h.state();
    assert_eq!(st.trace, TraceState::Complete);
    let r = st.result.as_ref().expect("the result");
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.stages.len(), 11);
    assert_eq!(r.output.len(), 1024);
    // Pass times once the run is whole, unless the clock check distrusts the device's timestamps
    // (then no trace shows any: under this binary's parallel tests an H200's check did once).
    let distrusted = st.gpu().and_then(|g| g.clock_distrusted());
    assert!(
        r.passes.iter().all(|p| p.gpu_ms.is_some()) || distrusted.is_some(),
        "{:?}",
        r.passes
    );
    assert!(st.message.is_none(), "{:?}", st.message);
    h.get_by_label("Stage 3 / 10");
    h.get_by_label("OK: GPU output equals the CPU model");
}

/// A device lost in the middle of a trace: the stages that arrived stay viewable, the error is a
/// message that says where the trace stopped, and the next run works on a new device.
#[test]
fn a_trace_that_fails_midway_keeps_the_stages_that_arrived() {
    let mut h = harness();
    wait_for_run(&mut h);
    iota_1024(&mut h);
    let g = stagewise::gpu::Gpu::headless(None).expect("a headless device");
    h.state_mut().use_gpu(g.clone());
    let gate = gated_run(&mut h, g.clone());
    let_through(&mut h, &gate, 3, 2);
    g.device.destroy();
    drop(g);
    for _ in 0..100 {
        let _ = gate.send(());
    }
    wait_for_run(&mut h);
    let got = h.state().result.as_ref().map_or(0, |r| r.stages.len());
    assert!((2..11).contains(&got), "{got} stages");
    assert_eq!(h.state().trace, TraceState::Stopped { of: 11 });
    let msg = h.state().message.clone().expect("a message");
    assert!(
        msg.contains("device lost") && msg.contains(&format!("stage {} of 10 arrived", got - 1)),
        "{msg}"
    );
    h.get_by_label_contains("Incomplete trace");
    h.get_by_label_contains("INCOMPLETE: the run stopped before its output");
    h.get_by_label("|< First").click();
    h.run();
    h.get_by_label(&format!("Stage 0 / {}", got - 1));
    h.get_by_label("Last >|").click();
    h.run();
    h.get_by_label(&format!("Stage {0} / {0}", got - 1));
    // The next run works on the new device.
    run_again(&mut h);
    assert_eq!(h.state().trace, TraceState::Complete);
    assert!(h.state().result.as_ref().unwrap().verified);
}

/// The app's own run of a 2^20-element trace (bit-reversal, Demo B: 20 stages of 4 MiB): stages
/// are on screen while later passes still run (unless all arrive within a frame), and no frame
/// waits for the GPU. Prints what it
/// measured (docs/ARCHITECTURE.md, "What a trace costs").
#[test]
fn a_2_20_trace_streams_into_the_app() {
    let mut h = harness();
    wait_for_run(&mut h);
    {
        let s = &mut h.state_mut().session;
        s.typed = false;
        s.fill = stagewise::data::Fill::Iota;
        s.log_n = 20;
    }
    h.run();
    let t0 = Instant::now();
    h.get_by_label("Run on GPU").click();
    h.step();
    let (mut first, mut seen, mut frames) = (None, Vec::new(), Vec::new());
    while h.state().is_running() {
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the trace never ended"
        );
        let f0 = Instant::now();
        h.step();
        let shown = h.state().result.as_ref().filter(|r| r.n == 1 << 20);
        let got = shown.map_or(0, |r| r.stages.len());
        if got >= 2 && h.state().is_running() {
            first.get_or_insert(t0.elapsed());
            frames.push(f0.elapsed());
            seen.push(got - 1);
        }
    }
    wait_for_run(&mut h);
    let total = t0.elapsed();
    let r = h.state().result.as_ref().expect("the result");
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.stages.len(), 21);
    // Frames drew the trace while the run was still going: a part of it while the rest was
    // coming (lavapipe), or, where the GPU delivers all 20 stages within a frame (an H200: 2^20 is
    // the app's largest trace), the whole of it while the run finished; or the run ended before
    // any frame could (an H200 alone: 0.6 s).
    let partial = seen.iter().any(|&k| (1..20).contains(&k));
    assert!(
        partial || !seen.is_empty() || total < Duration::from_secs(1),
        "last stage drawn in each frame before the run ended: {seen:?}; the run took {total:?}"
    );
    frames.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM")).map(String::from))
        .unwrap_or_default();
    println!(
        "2^20 bitrev staged trace: first stage after {:.0} ms, whole run {:.0} ms; {} frames while \
         stages arrived (the last stage each drew: {seen:?}): median {:.0} ms, max {:.0} ms; {hwm}",
        ms(first.unwrap_or_default()),
        ms(total),
        frames.len(),
        frames.get(frames.len() / 2).map_or(0.0, |&d| ms(d)),
        frames.last().map_or(0.0, |&d| ms(d)),
    );
}

/// The performance lab in its sort-family mode, on the Performance tab.
fn sort_family(h: &mut Harness<'_, StagewiseApp>) {
    h.get_by_label("Performance").click();
    h.run();
    h.get_by_label("Sort family").click();
    h.run();
}

fn wait_for_sweep(h: &mut Harness<'_, StagewiseApp>) {
    let start = Instant::now();
    while h.state().perf.is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "sweep never finished"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
}

/// One sweep over the sort family gives every member its own line (or says why a size was
/// skipped), key-value radix apart from keys only, beside the same-run roofline.
#[test]
fn sort_family_sweep_draws_a_line_per_sort() {
    let mut h = harness_sized([1600.0, 1000.0]);
    wait_for_run(&mut h);
    sort_family(&mut h);
    {
        let lab = &mut h.state_mut().perf;
        lab.log_lo = 10;
        lab.log_hi = 12;
        lab.reps = 3;
        assert!(lab.sorts.set("radix onesweep --values iota", true));
    }
    h.run();
    h.get_by_label("Run sweep").click();
    h.step();
    wait_for_sweep(&mut h);
    let lab = &h.state().perf;
    let f = &lab.sorts;
    let members: Vec<String> = f
        .members
        .iter()
        .filter(|m| m.on)
        .map(|m| m.label())
        .collect();
    assert_eq!(members.len(), 7, "{members:?}");
    let series = f.series();
    let skipped = f.skipped_summary();
    eprintln!("skipped: {skipped:?}");
    for m in &members {
        let pts = series
            .iter()
            .find(|s| &s.name == m)
            .map_or(0, |s| s.points.len());
        let skips = skipped.iter().filter(|s| s.starts_with(m.as_str())).count();
        assert!(
            pts == 3 || (pts < 3 && skips > 0),
            "{m}: {pts} points; skipped {skipped:?}; status {}",
            lab.status
        );
        if pts > 0 {
            // Its line is in the plot's legend.
            h.get_by_label(m);
        }
    }
    for m in [
        "oddeven batcher",
        "oddeven merge-split",
        "radix onesweep",
        "radix classic",
        "radix onesweep --values iota",
    ] {
        let s = series.iter().find(|s| s.name == m).expect(m);
        // Never refused here; a point is only left out when its probe run took too long (the
        // test binary's other tests load lavapipe's two cores; seen once).
        let slow = skipped
            .iter()
            .any(|k| k.starts_with(m) && k.contains("s per run; bench it alone"));
        assert!(s.points.len() == 3 || slow, "{m}: {skipped:?}");
        assert!(s.points.iter().all(|p| p[1] > 0.0), "{m}: {:?}", s.points);
    }
    // Key-value rows are told apart from keys only (their floor moves the values too), and
    // get a roofline of their own: a copy of 16 bytes per key.
    for r in &f.rows {
        let kv = r.variant.ends_with("--values iota");
        assert!(r.bytes >= r.n * if kv { 16 } else { 8 }, "{r:?}");
        if kv {
            let keys = f
                .rows
                .iter()
                .find(|k| k.variant == "onesweep" && k.n == r.n);
            assert!(keys.is_some_and(|k| k.bytes < r.bytes), "{r:?}");
        }
    }
    for roof in [
        "copy roofline, 8 B/key (same run)",
        "copy roofline, 16 B/key (same run)",
    ] {
        assert!(series.iter().any(|s| s.name == roof), "{roof}");
        h.get_by_label(roof);
    }
    for s in &skipped {
        h.get_by_label(s);
    }
    // The export is the family's rows.
    let csv = lab.export_text("csv");
    assert_eq!(csv.lines().count(), 1 + f.rows.len());
    assert!(csv.contains("radix,onesweep --values iota,4096,"), "{csv}");
}

/// Members that refuse a size (transposition past one workgroup's memory) or would take too long
/// at it (global: a dispatch per phase) are skipped, and the lab says which and why.
#[test]
fn sort_family_says_which_sorts_it_skipped() {
    let mut h = harness_sized([1600.0, 1000.0]);
    wait_for_run(&mut h);
    sort_family(&mut h);
    {
        let lab = &mut h.state_mut().perf;
        (lab.log_lo, lab.log_hi, lab.reps) = (14, 14, 3);
        for m in lab.sorts.members.iter_mut() {
            m.on = matches!(m.variant.name, "transposition" | "global");
        }
    }
    h.run();
    h.get_by_label("Run sweep").click();
    h.step();
    wait_for_sweep(&mut h);
    let f = &h.state().perf.sorts;
    assert!(f.rows.is_empty(), "{:?}", f.rows);
    let skipped = f.skipped_summary();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    for (who, why) in [
        (
            "oddeven transposition skipped at 2^14 (at 2^14: ",
            "one workgroup",
        ),
        (
            "oddeven global skipped at 2^14 (at 2^14: ",
            "passes per run",
        ),
    ] {
        let line = skipped.iter().find(|s| s.starts_with(who)).expect(who);
        assert!(line.contains(why), "{line}");
        h.get_by_label(line);
    }
}

fn h100_json() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/perf/h100.json")
}

/// Loading a suite result overlays its peers' medians for the whole-array sorts, at the sweep's
/// element type, named with the GPU they ran on, and says that this is not this adapter.
#[test]
fn sort_family_overlays_the_peers_of_a_suite_result() {
    let mut h = harness_sized([1600.0, 1000.0]);
    wait_for_run(&mut h);
    sort_family(&mut h);
    h.state_mut().perf.load_suite(&h100_json());
    h.run();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(h100_json()).unwrap()).unwrap();
    let device = file["peers"]["device"].as_str().unwrap().to_string();
    // What the file says each sort peer took at u32, by N: the plotted point must be n / ms.
    let peer_times = |peer: &str, dtype: &str| {
        let mut t: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
        for c in file["cases"].as_array().unwrap() {
            let k = &c["case"];
            let segmented = k["args"].to_string().contains("--segment");
            if k["peer"] == peer && k["dtype"] == dtype && !segmented {
                for r in c["rows"].as_array().unwrap() {
                    if let Some(ms) = r["peer_ms"].as_f64() {
                        t.entry(r["n"].as_u64().unwrap()).or_default().push(ms);
                    }
                }
            }
        }
        t
    };
    let f = &h.state().perf.sorts;
    assert!(f.file_error.is_none(), "{:?}", f.file_error);
    let series = f.series();
    for peer in ["cupy.sort", "torch.sort"] {
        let name = format!("{peer} on {device}");
        let s = series
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", series.iter().map(|s| &s.name)));
        let want = peer_times(peer, "u32");
        assert!(!want.is_empty(), "{peer}: the file has u32 times");
        assert_eq!(s.points.len(), want.len(), "{peer}: {:?}", s.points);
        for (p, (n, ms)) in s.points.iter().zip(&want) {
            assert_eq!(p[0], (*n as f64).log2());
            let ys: Vec<f64> = ms.iter().map(|m| *n as f64 / (m * 1e6)).collect();
            let (lo, hi) = (
                ys.iter().cloned().fold(f64::MAX, f64::min),
                ys.iter().cloned().fold(0.0, f64::max),
            );
            assert!(
                p[1] >= lo * 0.999 && p[1] <= hi * 1.001,
                "{peer} 2^{}: {} not in {ys:?}",
                p[0],
                p[1]
            );
        }
        h.get_by_label(&name);
    }
    // The file's own rows of our sorts, labelled as from the file.
    let ours = format!("radix onesweep on {device} (h100.json)");
    assert!(series.iter().any(|s| s.name == ours), "{ours}");
    h.get_by_label(&ours);
    // lavapipe is not an H100: said plainly.
    h.get_by_label_contains("NOT on this adapter");
    h.get_by_label_contains("a comparison across GPUs, not a same-run ratio");
    // At f32 the file has cupy.sort only.
    h.state_mut().perf.sorts.dtype = stagewise::data::DType::F32;
    h.run();
    let series = h.state().perf.sorts.series();
    assert!(
        series
            .iter()
            .any(|s| s.name == format!("cupy.sort on {device}"))
    );
    assert!(!series.iter().any(|s| s.name.starts_with("torch.sort")));
    let json = h.state().perf.export_text("json");
    assert!(
        json.contains("\"overlay\"") && json.contains("cupy.sort"),
        "{json}"
    );
}

/// A file that is not a suite result, or has no sorts, or is missing, is a message, not a panic;
/// the overlay loaded before stays.
#[test]
fn sort_family_bad_suite_file_is_a_message() {
    let mut h = harness_sized([1600.0, 1000.0]);
    wait_for_run(&mut h);
    sort_family(&mut h);
    let dir = Scratch::new("sorts");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ \"suite\": 3, oops").unwrap();
    let mut no_sorts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(h100_json()).unwrap()).unwrap();
    no_sorts["cases"]
        .as_array_mut()
        .unwrap()
        .retain(|c| c["case"]["algorithm"] == "copy");
    let copy_only = dir.join("copy-only.json");
    std::fs::write(&copy_only, no_sorts.to_string()).unwrap();
    for (path, says) in [
        (bad.clone(), "not a suite result"),
        (copy_only, "no whole-array sort cases"),
        (dir.join("missing.json"), "cannot read"),
    ] {
        h.state_mut().perf.load_suite(&path);
        h.run();
        let e = h.state().perf.sorts.file_error.clone().expect("a message");
        assert!(e.contains(says), "{e}");
        h.get_by_label(&e);
        assert!(h.state().perf.sorts.overlay.is_none());
    }
    h.state_mut().perf.load_suite(&h100_json());
    h.run();
    assert!(h.state().perf.sorts.file_error.is_none());
    // Through the controls: the typed path, read on a thread.
    h.state_mut().perf.sorts.path = bad.display().to_string();
    h.run();
    h.get_by_label("Load").click();
    let start = Instant::now();
    while h.state().perf.sorts.file_error.is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "no answer");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    assert!(
        h.state().perf.sorts.overlay.is_some(),
        "the good overlay stays"
    );
    h.get_by_label_contains("not a suite result");
}

#[test]
fn sort_family_controls_have_tooltips() {
    let mut h = harness_sized([1600.0, 1000.0]);
    wait_for_run(&mut h);
    sort_family(&mut h);
    h.state_mut().perf.load_suite(&h100_json());
    h.run();
    let (seen, missing) = controls_without_tooltip(&h);
    assert!(seen > 15, "only {seen} controls seen");
    assert!(
        missing.is_empty(),
        "controls without a tooltip: {missing:?}"
    );
}

/// The views' counters come from the rooms' typed run facts: Cormen's bound of a seed plan, the
/// odd-even work, the scan's form, the FFT's Nyquist bin.
#[test]
fn views_show_the_run_facts() {
    use stagewise::algo::{AlgoOptions, bmmc};
    let mut h = harness_sized([1600.0, 1100.0]);
    wait_for_run(&mut h);
    let bit_reverse = AlgoOptions::Bmmc(bmmc::Options {
        preset: Some("bit-reverse".into()),
        ..Default::default()
    });
    for (algo, variant, log_n, want) in [
        (bit_reverse, "seed-plu", 12, "Cormen bound"),
        (
            AlgoOptions::Oddeven(Default::default()),
            "transposition",
            4,
            "work: 120 compare-exchanges",
        ),
        (
            AlgoOptions::Scan(Default::default()),
            "ladder",
            4,
            "· result: prefix sums",
        ),
        (
            AlgoOptions::Fft(Default::default()),
            "workgroup",
            4,
            "Nyquist (frequency 8)",
        ),
    ] {
        {
            let s = &mut h.state_mut().session;
            s.typed = false;
            s.fill = stagewise::data::Fill::Iota;
            s.log_n = log_n;
            s.algo = algo;
            s.variant = variant.into();
        }
        h.run();
        h.get_by_label("Run on GPU").click();
        h.step();
        wait_for_run(&mut h);
        let r = h.state().result.as_ref().expect("a result");
        assert!(r.verified, "{variant}: {:?}", r.mismatch);
        h.get_by_label_contains(want);
    }
}

/// Help ▸ Self-test… runs `stagewise selftest` on the app's own device on a worker thread: frames
/// keep coming while it runs, its progress shows, Stop ends it with a report whose table has every
/// algorithm and variant.
#[test]
fn help_self_test_runs_off_the_ui_thread_and_stops() {
    let mut h = harness();
    wait_for_run(&mut h);
    h.get_by_label("Help").click();
    h.run();
    h.get_by_label("Self-test…").click();
    h.run();
    h.get_by_label("Start").click();
    h.step();
    assert!(h.state().selftest.is_running(), "Start did not start it");
    let start = Instant::now();
    while h
        .state()
        .selftest
        .progress
        .as_ref()
        .is_none_or(|p| p.done < 1)
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no case finished"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.step();
    h.get_by_label_contains("passed,");
    h.get_by_label("Stop").click();
    while h.state().selftest.is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "Stop did not end the selftest"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    let rep = h.state().selftest.report.clone().expect("a report");
    assert!(rep.stopped);
    assert!(rep.cases() >= 1);
    assert!(rep.failures.is_empty(), "{}", rep.text());
    let pairs = stagewise::selftest::cases::pairs();
    assert_eq!(rep.rows.len(), pairs.len());
    // A row per variant: the algorithm's name at least as often as it has variants.
    for (a, _) in &pairs {
        let rows = pairs.iter().filter(|(b, _)| b == a).count();
        let shown = h.query_all_by_label(a).count();
        assert!(shown >= rows, "{a}: {shown} labels for {rows} rows");
    }
    h.get_by_label_contains("no failures");
    h.get_by_label("Start");
}

/// Seed 002's barrier, taught: an odd phase of the transposition sort narrates the seed's
/// `continue` before `__syncthreads()`, what goes wrong, and what the kernel does instead.
#[test]
fn transposition_odd_phase_narrates_the_seeds_barrier() {
    let mut h = harness_sized([1400.0, 1000.0]);
    wait_for_run(&mut h);
    {
        let s = &mut h.state_mut().session;
        s.algo = stagewise::algo::AlgoOptions::Oddeven(Default::default());
        s.variant = "transposition".into();
        s.typed = true;
        s.text = "9 3 7 1 8 2 6 4 5".into();
    }
    h.run();
    run_again(&mut h);
    let r = h.state().result.as_ref().expect("a result");
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(r.stages.len(), 10, "the input and 9 phases");
    h.get_by_label("|< First").click();
    h.run();
    h.get_by_label("Next >").click();
    h.run();
    // Phase 1 (even): no overflow pair to talk about.
    h.get_by_label("Stage 1 / 9");
    assert!(h.query_by_label_contains("continue;").is_none());
    h.get_by_label("Next >").click();
    h.run();
    h.get_by_label("Stage 2 / 9");
    // The seed's line, what goes wrong, what the kernel does instead.
    for want in [
        "if (s_odd >= n) continue;",
        "the last owner (4, of owners 0 … 4) holds pair (9, 10), past the last key (8)",
        "__syncthreads(); //BARRIER",
        "a barrier in divergent control flow, undefined behaviour",
        "if (i < owners && a + 1u < L)",
        "workgroupBarrier() outside every branch",
        "reach every barrier",
    ] {
        // The narration, and for the kernel's line the code panel too.
        assert!(
            h.query_all_by_label_contains(want).next().is_some(),
            "{want:?} is not on screen"
        );
    }
}

/// A session holds what was on screen: saved with the stage shown, the tab and the lens, it opens
/// (as `stagewise --session FILE` does) on that stage once the run has it; a session written
/// before the format had a version opens too, one from a newer Stagewise is refused.
#[test]
fn a_session_reopens_at_its_stage_tab_and_lens() {
    use stagewise::ui::app::{SESSION_VERSION, Session};
    let saved = {
        let mut h = harness();
        wait_for_run(&mut h);
        // The seed example (Demo B on 16 elements): the input and four stages.
        assert_eq!(h.state().result.as_ref().unwrap().stages.len(), 5);
        h.state_mut().timeline.stage = 3;
        h.state().session_now()
    };
    assert_eq!(saved.version, SESSION_VERSION);
    assert_eq!(saved.view.stage, Some(3));
    let mut text: serde_json::Value = serde_json::to_value(&saved).unwrap();
    assert_eq!(
        (text["view"]["tab"].as_str(), saved.view.lens),
        (Some("stages"), false)
    );
    text["view"]["lens"] = true.into();
    let back = Session::from_json("s", text.to_string().as_bytes()).unwrap();
    let mut h = Harness::builder()
        .with_size([1280.0, 800.0])
        .with_max_steps(10)
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(move |cc| StagewiseApp::new(cc, Some(back)));
    // The lens records after the run (its spinner keeps frames coming): step, do not settle.
    let start = Instant::now();
    while h.state().is_running() || h.state().lens.is_recording() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the run and the lens did not end"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.step();
    assert_eq!(h.state().timeline.stage, 3);
    assert!(h.state().lens.on);
    // The documented example opens (docs/SESSION.md).
    let ex = Session::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/session-example.json"),
    )
    .unwrap();
    assert_eq!(
        (ex.version, ex.view.stage, ex.variant.as_str()),
        (1, Some(2), "staged")
    );
    assert!(ex.job().is_ok());
    // Older and newer files.
    let old = Session::from_json("old", br#"{"variant": "naive", "log_n": 5}"#).unwrap();
    assert_eq!((old.version, old.view.stage), (0, None));
    let e = Session::from_json("new", br#"{"version": 99}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("version 99 is newer"), "{e}");
}

/// An option whose 0 means "the room picks" reads `auto`; set, it has a button back to auto.
#[test]
fn auto_options_read_auto_and_go_back_to_it() {
    use egui_kittest::kittest::NodeT;
    use stagewise::algo::AlgoOptions;
    use stagewise::algo::radix::Options;
    let mut h = Harness::new_ui_state(
        |ui, o: &mut AlgoOptions| {
            stagewise::ui::params::edit(ui, o, "t");
        },
        AlgoOptions::Radix(Options {
            workgroup_size: 256,
            ..Default::default()
        }),
    );
    h.run();
    let shown = |h: &Harness<'_, AlgoOptions>, label: &str| {
        h.query_all_by(|n| n.label().as_deref() == Some(label))
            .find_map(|n| n.accesskit_node().value())
            .unwrap_or_else(|| panic!("a value for {label}"))
    };
    assert_eq!(shown(&h, "keys per thread"), "auto");
    assert_eq!(shown(&h, "look back window"), "auto");
    assert_eq!(shown(&h, "workgroup size"), "256");
    h.get_by_label("×").click();
    h.run();
    let AlgoOptions::Radix(o) = h.state() else {
        panic!("radix options")
    };
    assert_eq!(o.workgroup_size, 0);
    assert_eq!(shown(&h, "workgroup size"), "auto");
    assert!(h.query_by_label("×").is_none());
}
