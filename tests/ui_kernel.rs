//! UI tests of the room "Your kernel" (the workbench in the app): an exercise opened from the
//! menu and run, its file edited on disk and re-run by the app's watch, a compile error shown at
//! its line while the last good result stays, a kernel opened by a typed path (its Tune section
//! and kernel wisdom: tests/ui_kernel_tune.rs).
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::ui::StagewiseApp;
use std::time::{Duration, Instant};

#[path = "common/app.rs"]
mod app;
#[path = "common/scratch.rs"]
mod scratch;
use app::{harness, kernel_session, scratch, step_until, wait_for_run};

/// Step frames until the run and the lens it turned on are both done (the lens records after
/// the run, showing a spinner).
fn wait_for_lens(h: &mut Harness<'_, StagewiseApp>) {
    let start = Instant::now();
    while h.state().is_running() || h.state().lens.report().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the lens never reported"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(50));
    }
    h.run();
}

/// Open the exercise "bit-reversal with coalesced reads and writes" with its copy in `home`
/// already holding the reference solution (an exercise's existing copy is kept), and let it run.
fn open_solved_coalescing_exercise(h: &mut Harness<'_, StagewiseApp>, home: &std::path::Path) {
    std::fs::create_dir_all(home.join("bitrev-coalesced")).unwrap();
    std::fs::write(
        home.join("bitrev-coalesced").join("kernel.wgsl"),
        solution("bitrev-coalesced"),
    )
    .unwrap();
    h.state_mut().workbench.home = Some(home.to_path_buf());
    h.get_by_label("Exercises").click();
    h.run();
    h.get_by_label("Bit-reversal with coalesced reads and writes")
        .click();
    wait_for_lens(h);
}

fn solution(name: &str) -> String {
    let p = format!("{}/tests/exercises/{name}.wgsl", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn an_exercise_opens_runs_and_reruns_when_its_file_is_saved() {
    let mut h = harness();
    wait_for_run(&mut h);
    let home = scratch("exercise");
    h.state_mut().workbench.home = Some(home.to_path_buf());
    h.get_by_label("Exercises").click();
    h.run();
    h.get_by_label("Bit-reversal, one thread per element")
        .click();
    h.step();
    wait_for_run(&mut h);
    // The starter, copied to the home folder, ran: it compiles and its output is wrong.
    let file = home.join("bitrev-naive").join("kernel.wgsl");
    assert!(
        file.is_file(),
        "the starter was copied to {}",
        file.display()
    );
    {
        let s = h.state();
        assert!(s.in_kernel_room());
        let r = s.result.as_ref().expect("the starter ran");
        assert_eq!((r.algorithm.as_str(), r.n), ("kernel", 4096));
        assert!(!r.verified);
        assert!(
            r.mismatch
                .as_deref()
                .unwrap_or("")
                .contains("first at index")
        );
    }
    h.get_by_label_contains("Exercise: Bit-reversal, one thread per element");
    h.get_by_label_contains("wrong: ");
    h.get_by_label_contains(&format!("Your copy: {}", file.display()));

    // The solution saved over the copy, as an editor would: the app's watch re-runs it.
    let good = solution("bitrev-naive");
    std::fs::write(&file, &good).unwrap();
    step_until(&mut h, "a re-run after the save", |s| {
        s.workbench.reruns >= 1
    });
    {
        let r = h.state().result.as_ref().unwrap();
        assert!(r.verified, "{:?}", r.mismatch);
        assert_eq!(r.stages.len(), 2, "the input and the one pass, read back");
    }
    h.get_by_label_contains("verified: the output");
    h.get_by_label_contains("goal met");
    h.get_by_label_contains("re-ran on save 1 time(s)");

    // A compile error: naga's message with its line in the room and the code panel; the last
    // good result stays.
    let bad = format!("{good}\nfn broken(x: u32 {{}}\n");
    let line = good.lines().count() + 2;
    std::fs::write(&file, &bad).unwrap();
    step_until(&mut h, "the compile error", |s| s.workbench.error.is_some());
    let e = h.state().workbench.error.clone().unwrap();
    assert_eq!(e.line, line, "{}", e.message);
    assert!(
        e.message
            .starts_with(&format!("{}:{line}:", file.display())),
        "{}",
        e.message
    );
    h.get_by_label_contains(&format!("compile error at line {line}"));
    h.get_by_label("Your kernel does not compile");
    h.get_by_label_contains("fn broken(x: u32 {}");
    let r = h.state().result.as_ref().unwrap();
    assert!(
        r.verified && r.algorithm == "kernel",
        "the last good result stays"
    );

    // Fixed again: the error goes, the check comes back.
    std::fs::write(&file, &good).unwrap();
    step_until(&mut h, "the error cleared", |s| s.workbench.error.is_none());
    h.get_by_label_contains("verified: the output");
    assert!(h.query_by_label("Your kernel does not compile").is_none());
    std::fs::remove_dir_all(&home).ok();
}

#[test]
fn a_typed_path_opens_a_kernel_in_the_room() {
    use eframe::egui::accesskit::Role;
    let mut h = harness();
    wait_for_run(&mut h);
    let dir = scratch("typed");
    let file = dir.join("double.wgsl");
    std::fs::write(
        &file,
        "@group(0) @binding(0) var<storage, read> src: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n\
         @compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n\
         \x20   if (g.x < arrayLength(&src)) { dst[g.x] = 2u * src[g.x]; }\n\
         }\n",
    )
    .unwrap();
    h.get_by_role_and_label(Role::ComboBox, "Algorithm").click();
    h.run();
    h.get_by_label("Your kernel (workbench)").click();
    h.run();
    assert!(h.state().in_kernel_room());
    let path = h.get_by_role_and_label(Role::TextInput, "Kernel file (.wgsl)");
    path.click();
    path.type_text(&file.display().to_string());
    h.run();
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(&mut h);
    let r = h.state().result.as_ref().expect("the typed kernel ran");
    assert_eq!(r.algorithm, "kernel", "{:?}", h.state().message);
    let want: Vec<u32> = r.input.bits.iter().map(|x| 2 * x).collect();
    assert_eq!(r.output.bits, want, "dst = 2 · src");
    // No --expect: run, read back, and said to be unchecked.
    h.get_by_label_contains("not checked");
    // Two passes typed and confirmed with Enter: dst and src swap, the kernel doubles twice.
    let passes = h.get_by_role_and_label(Role::TextInput, "passes");
    passes.click();
    h.run();
    h.key_press(eframe::egui::Key::Backspace);
    h.get_by_role_and_label(Role::TextInput, "passes")
        .type_text("2");
    h.run();
    h.key_press(eframe::egui::Key::Enter);
    h.step();
    h.step();
    wait_for_run(&mut h);
    let r = h.state().result.as_ref().unwrap();
    assert_eq!(
        r.stages.len(),
        3,
        "the input and two passes: {:?}",
        h.state().message
    );
    let want: Vec<u32> = r.input.bits.iter().map(|x| 4 * x).collect();
    assert_eq!(r.output.bits, want, "dst = 4 · src after two passes");
    // A run that takes long (a worker that never answers stands in for a kernel that never
    // ends): the room says how long and what a kernel that never ends does to the GPU.
    let (tx, rx) = std::sync::mpsc::channel();
    h.state_mut().follow(rx);
    h.state_mut().workbench.started = Some(Instant::now() - Duration::from_secs(6));
    h.step();
    h.get_by_label_contains("running for 6 s: a kernel that never ends holds the GPU");
    drop(tx);
    h.step();
    assert!(!h.state().is_running());
    // Another room and back: the room's options are as they were left, and it runs them.
    h.get_by_role_and_label(Role::ComboBox, "Algorithm").click();
    h.run();
    h.get_by_label("Bit-reversal permutation").click();
    h.step();
    wait_for_run(&mut h);
    assert_eq!(h.state().result.as_ref().unwrap().algorithm, "bitrev");
    h.get_by_role_and_label(Role::ComboBox, "Algorithm").click();
    h.run();
    h.get_by_label("Your kernel (workbench)").click();
    h.step();
    wait_for_run(&mut h);
    let stagewise::algo::AlgoOptions::Kernel(o) = &h.state().session.algo else {
        panic!("back in the room")
    };
    assert_eq!((o.wgsl.as_ref(), o.passes.as_str()), (Some(&file), "2"));
    let r = h.state().result.as_ref().unwrap();
    assert_eq!((r.algorithm.as_str(), r.stages.len()), ("kernel", 3));
    std::fs::remove_dir_all(&dir).ok();
}

/// A permutation's view: on iota, every row coloured by where its elements came from, and the
/// line that counts the elements already where the expected op puts them.
#[test]
fn a_permutation_kernel_is_drawn_with_its_expected_op() {
    let mut h = harness();
    wait_for_run(&mut h);
    let dir = scratch("view");
    let file = dir.join("bitrev.wgsl");
    std::fs::write(&file, solution("bitrev-naive")).unwrap();
    kernel_session(&mut h.state_mut().session, &file, "bitrev");
    h.run();
    h.get_by_label("Run on GPU").click();
    h.step();
    wait_for_run(&mut h);
    assert!(
        h.state().result.as_ref().unwrap().verified,
        "{:?}",
        h.state().message
    );
    h.get_by_label_contains("after this pass 16 of 16 elements are where bitrev puts them");
    // The starter writes every element where it was: 4 of 16 (0, 6, 9, 15) are palindromes.
    std::fs::write(
        &file,
        solution("bitrev-naive").replace("dst[r] = src[i];", "dst[i] = src[i];"),
    )
    .unwrap();
    step_until(&mut h, "the re-run", |s| s.workbench.reruns >= 1);
    h.get_by_label_contains("after this pass 4 of 16 elements are where bitrev puts them");
    h.get_by_label_contains("wrong: ");
    std::fs::remove_dir_all(&dir).ok();
}

/// An exercise with a coalescing goal: the lens turns on at warp 32, names the user's lines, and
/// the room says the goal is met (the solution placed where the app keeps the user's copy).
#[test]
fn an_exercise_goal_is_measured_by_the_lens() {
    let mut h = harness();
    wait_for_run(&mut h);
    let home = scratch("goal");
    open_solved_coalescing_exercise(&mut h, &home);
    let r = h.state().result.as_ref().unwrap();
    assert!(r.verified, "the copy there is kept");
    assert!(h.state().lens.on && h.state().lens.warp == 32);
    h.get_by_label_contains("goal met: at most 4.00 sectors a request");
    h.get_by_label_contains("line 32: each warp's writes of dst are coalesced");
    std::fs::remove_dir_all(&home).ok();
}

/// The performance lab times the room's kernel beside the built-in kernel for its `--expect` op
/// and the same-run copy: an exercise's solution (coalesced bit-reversal) against the tiled
/// bit-reversal.
#[test]
fn the_lab_times_your_kernel_beside_the_built_in_one() {
    let mut h = harness();
    wait_for_run(&mut h);
    let home = scratch("lab");
    open_solved_coalescing_exercise(&mut h, &home);
    h.get_by_label("Performance").click();
    h.run();
    h.get_by_role_and_label(eframe::egui::accesskit::Role::ComboBox, "algorithm")
        .click();
    h.run();
    h.get_by_label("Your kernel (workbench)").click();
    h.run();
    {
        let lab = &mut h.state_mut().perf;
        assert_eq!(lab.algo.name(), "kernel");
        lab.log_lo = 12;
        lab.log_hi = 13;
        lab.reps = 3;
    }
    h.run();
    h.get_by_label("Run sweep").click();
    h.step();
    let start = Instant::now();
    while h.state().perf.is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "sweep never ended"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    let lab = &h.state().perf;
    let names: Vec<String> = lab
        .rows
        .iter()
        .map(|r| format!("{} {} {}", r.algorithm, r.variant, r.n))
        .collect();
    assert_eq!(
        names,
        [
            "kernel wgsl 4096",
            "bitrev tiled 4096",
            "kernel wgsl 8192",
            "bitrev tiled 8192"
        ],
        "{}",
        lab.status
    );
    for r in &lab.rows {
        assert!(r.gbps > 0.0 && r.copy_gbps > 0.0, "{r:?}");
    }
    h.get_by_label("copy roofline (same run)");
    std::fs::remove_dir_all(&home).ok();
}

/// A session of the room carries its kernel's text: saved beside the path, it opens on a machine
/// without that file (the app says so and runs the saved copy); where the file exists, the file is
/// the kernel.
#[test]
fn a_kernel_session_carries_its_text() {
    use stagewise::algo::AlgoOptions;
    let dir = scratch("session");
    let file = dir.join("bitrev.wgsl");
    std::fs::write(&file, solution("bitrev-naive")).unwrap();
    let mut h = harness();
    wait_for_run(&mut h);
    kernel_session(&mut h.state_mut().session, &file, "bitrev");
    let saved = h.state().session_now();
    let AlgoOptions::Kernel(o) = &saved.algo else {
        panic!("a kernel session")
    };
    assert_eq!(o.source.as_deref(), Some(solution("bitrev-naive").as_str()));
    assert_eq!(o.wgsl.as_ref(), Some(&file));
    let json = serde_json::to_vec(&saved).unwrap();
    // Here the file exists: it is the kernel again (the room watches it), the copy is dropped.
    let mut here = stagewise::ui::app::Session::from_json("s.json", &json).unwrap();
    assert_eq!(here.localize_kernel(), None);
    let AlgoOptions::Kernel(o) = &here.algo else {
        panic!("a kernel session")
    };
    assert!(o.source.is_none());
    // Elsewhere: no such file. The app opens the session on the saved text and says so.
    std::fs::remove_dir_all(&dir).ok();
    let away = stagewise::ui::app::Session::from_json("s.json", &json).unwrap();
    let mut h = Harness::builder()
        .with_size([1400.0, 1000.0])
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(move |cc| StagewiseApp::new(cc, Some(away.clone())));
    wait_for_run(&mut h);
    let msg = h.state().message.clone().unwrap_or_default();
    assert!(
        msg.contains("is not on this machine: the session's copy of the kernel is used"),
        "{msg}"
    );
    let r = h.state().result.as_ref().expect("the saved kernel ran");
    assert_eq!(r.algorithm, "kernel");
    assert!(r.verified, "{:?}", r.mismatch);
}
