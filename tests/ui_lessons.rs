//! The *Lessons* panel under egui_kittest, on the real GPU (lavapipe in CI): a lesson driven step
//! by step (the state each step sets), predictions checked against the run's read-back and the
//! lens's record, and the progress restored after a restart.
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::ui::StagewiseApp;
use stagewise::ui::app::Tab;
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn harness<'a>() -> Harness<'a, StagewiseApp> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set before any device exists in this test binary.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    Harness::builder()
        .with_size([1400.0, 900.0])
        .with_max_steps(10)
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| StagewiseApp::new(cc, None))
}

/// Step frames until the run (and the lens's recording, where it is on) has ended.
fn settle(h: &mut Harness<'_, StagewiseApp>) {
    let start = Instant::now();
    while h.state().is_running() || h.state().lens.is_recording() {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the run and the lens did not end"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.step();
    h.step();
}

/// eframe's storage, in memory: what the app writes on exit.
#[derive(Default)]
struct Memory(HashMap<String, String>);

impl eframe::Storage for Memory {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.into(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

/// (algorithm, variant, stage shown, tab, lens on) of the app now.
fn state(h: &Harness<'_, StagewiseApp>) -> (String, String, usize, Tab, bool) {
    let a = h.state();
    (
        a.session.algo.name().to_string(),
        a.session.variant.clone(),
        a.timeline.stage,
        a.tab,
        a.lens.on,
    )
}

fn check(h: &mut Harness<'_, StagewiseApp>, guess: &str) -> stagewise::lesson::Verdict {
    h.state_mut().lessons.guess = guess.to_string();
    h.get_by_label("Check").click();
    h.step();
    h.step();
    h.state()
        .lessons
        .verdict
        .clone()
        .expect("a verdict after Check")
}

#[test]
fn a_lesson_steps_through_its_states_and_checks_predictions_on_the_gpu() {
    let mut h = harness();
    settle(&mut h);
    // The menu's Lessons opens the panel; the first lesson opens at its first step.
    h.get_by_label("Lessons").click();
    h.run();
    h.get_by_label_contains("1. Bit-reversal").click();
    h.step();
    settle(&mut h);
    assert_eq!(
        state(&h),
        ("bitrev".into(), "naive".into(), 1, Tab::Stages, false)
    );
    h.get_by_label("Step 1 of 8");
    // Step 2: Demo B, stage 1 (a new run).
    h.get_by_label("Next step >").click();
    h.step();
    settle(&mut h);
    assert_eq!(
        state(&h),
        ("bitrev".into(), "staged".into(), 1, Tab::Stages, false)
    );
    // Step 3 keeps the run and shows stage 2 (PageDown, as Next).
    let key = h.state().result.as_ref().map(|r| r.stages.len());
    h.key_press(egui::Key::PageDown);
    h.step();
    settle(&mut h);
    assert_eq!(
        state(&h),
        ("bitrev".into(), "staged".into(), 2, Tab::Stages, false)
    );
    assert_eq!(h.state().lessons.position(), 2);
    assert_eq!(key, h.state().result.as_ref().map(|r| r.stages.len()));
    // "Where does element 6 land after stage 2?": the GPU's read-back says where.
    let r = h.state().result.clone().unwrap();
    let v = r.stages[0].data.bits[6];
    let at = r.stages[2].data.bits.iter().position(|&b| b == v).unwrap();
    assert_eq!(at, 5, "Demo B puts element 6 at 5 after stage 2");
    // A wrong prediction is marked wrong, against the real answer.
    let wrong = check(&mut h, "6");
    assert!(!wrong.right);
    assert!(
        wrong.text.contains("you said 6") && wrong.text.contains(&format!("index {at}")),
        "{}",
        wrong.text
    );
    h.get_by_label_contains("Not quite: you said 6");
    // A right one is accepted and counted.
    let right = check(&mut h, &at.to_string());
    assert!(right.right, "{}", right.text);
    h.get_by_label_contains("Right: the GPU says index 5");
    assert!(
        h.state().lessons.progress.lessons["bitrev"]
            .right
            .contains(&2)
    );
    // An answer that is not a number says so, and no verdict is made up.
    h.state_mut().lessons.verdict = None;
    h.state_mut().lessons.guess = "six".into();
    h.get_by_label("Check").click();
    h.step();
    assert!(h.state().lessons.verdict.is_none());
    assert!(
        h.state()
            .lessons
            .note
            .as_deref()
            .is_some_and(|n| n.contains("not a whole number"))
    );
    // Step 5: 1024 elements with the lens on; the write's sectors per request from its record.
    h.get_by_label("Next step >").click();
    h.step();
    settle(&mut h);
    h.get_by_label("Next step >").click();
    h.step();
    settle(&mut h);
    assert_eq!(
        state(&h),
        ("bitrev".into(), "naive".into(), 1, Tab::Stages, true)
    );
    let rep = h
        .state()
        .lens
        .report()
        .cloned()
        .expect("the lens recorded the run");
    let w: Vec<_> = rep.passes[0]
        .global
        .iter()
        .filter(|g| g.kind == stagewise::lens::sites::Kind::Write)
        .collect();
    let per = w.iter().map(|g| g.sectors).sum::<u64>() as f64
        / w.iter().map(|g| g.requests).sum::<u64>() as f64;
    let wrong = check(&mut h, "4");
    assert_eq!(wrong.right, (per - 4.0).abs() <= 0.5, "{}", wrong.text);
    assert!(
        wrong.text.contains(&format!("{per:.1} sectors")),
        "{}",
        wrong.text
    );
    let right = check(&mut h, &format!("{per}"));
    assert!(right.right, "{}", right.text);

    // Exit: the progress is saved with the session; a new app restores it.
    let mut storage = Memory::default();
    eframe::App::save(h.state_mut(), &mut storage);
    drop(h);
    let mut h = harness();
    settle(&mut h);
    assert!(h.state().lessons.current.is_none());
    h.state_mut().restore_lessons(&storage);
    h.run();
    let l = &h.state().lessons;
    assert_eq!(l.current, Some(0));
    assert!(l.open);
    assert_eq!(l.position(), 4);
    assert_eq!(
        l.progress.lessons["bitrev"]
            .right
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [2, 4]
    );
    h.get_by_label("Step 5 of 8");
    // The list (folded while a lesson is open) shows the lesson's progress.
    h.get_by_label("All lessons").click();
    h.run();
    h.get_by_label_contains("1. Bit-reversal: Demo A, Demo B and a tile  (2/6)");
}

#[test]
fn an_odd_even_phase_asks_which_pairs_swap_and_an_exercise_unlocks_hints() {
    let mut h = harness();
    settle(&mut h);
    let ctx = h.ctx.clone();
    let i = h
        .state()
        .lessons
        .lessons
        .iter()
        .position(|l| l.id == "oddeven")
        .unwrap();
    h.state_mut().open_lesson(i, &ctx);
    h.step();
    settle(&mut h);
    assert_eq!(
        state(&h),
        (
            "oddeven".into(),
            "transposition".into(),
            1,
            Tab::Stages,
            false
        )
    );
    // The pairs that swapped in phase 1, from the stage's compared pairs.
    let r = h.state().result.clone().unwrap();
    let swapped: Vec<u32> = r.stages[1]
        .oddeven()
        .and_then(|n| n.pairs.as_ref())
        .unwrap()
        .iter()
        .filter(|p| p.2)
        .map(|p| p.0)
        .collect();
    assert!(!swapped.is_empty());
    let wrong = check(&mut h, "0");
    assert!(!wrong.right, "{}", wrong.text);
    let list: Vec<String> = swapped.iter().map(|i| i.to_string()).collect();
    let right = check(&mut h, &list.join(", "));
    assert!(right.right, "{}", right.text);
    // The last place: the exercise. Checking before opening it says so; a failed check (the
    // starter) unlocks the first hint.
    let last = h.state().lessons.lesson().unwrap().len() - 1;
    h.state_mut().go_to_step(last, &ctx);
    h.run();
    h.get_by_label_contains("Exercise:");
    h.get_by_label("Hints unlock after a failed attempt.");
    h.get_by_label("Open exercise").click();
    h.step();
    settle(&mut h);
    h.get_by_label("Check my kernel").click();
    h.step();
    h.step();
    let (msg, ok) = h.state().lessons.exercise_note.clone().unwrap();
    assert!(!ok, "the starter fails: {msg}");
    h.get_by_label_contains("Hint 1:");
    assert_eq!(
        h.state().lessons.progress.lessons["oddeven"].exercises["oddeven-transposition"].failed,
        1
    );
}

#[test]
fn a_link_opens_a_run_a_lesson_step_and_copy_link_gives_it_back() {
    use stagewise::link::Link;
    let mut h = harness();
    settle(&mut h);
    let ctx = h.ctx.clone();
    // A run at its stage, with the lens on. (The code panel is off: its narration of bmmc's
    // naive variant, src/ui/narrate.rs, has a character the test fonts lack.)
    h.state_mut().show_code = false;
    let l = Link::parse("#bmmc/naive?n=16&fill=iota&preset=gray&stage=1&lens=1").unwrap();
    h.state_mut().open_link(&l, &ctx);
    h.step();
    settle(&mut h);
    assert_eq!(
        state(&h),
        ("bmmc".into(), "naive".into(), 1, Tab::Stages, true)
    );
    let r = h.state().result.clone().unwrap();
    assert_eq!(r.output.bits[7], 5, "the Gray code sends 5 to 7 on the GPU");
    // Copy link: the same run and view back.
    let back = h.state().link_now().unwrap();
    assert_eq!(
        Link::parse(&back.to_text().unwrap()).unwrap(),
        Link::parse("#bmmc/naive?n=16&fill=iota&preset=gray&seed=1&stage=1&lens=1").unwrap(),
        "{}",
        back.to_text().unwrap()
    );
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Copy link").click();
    h.run();
    let msg = h.state().message.clone().unwrap_or_default();
    assert_eq!(
        msg,
        "copied the link #bmmc/naive?n=16&fill=iota&preset=gray&stage=1&lens=1"
    );
    // A lesson's step: the panel opens there and the step's state is set.
    let l = Link::parse("#lesson=oddeven&step=3").unwrap();
    h.state_mut().open_link(&l, &ctx);
    h.step();
    settle(&mut h);
    assert_eq!(h.state().lessons.position(), 2);
    assert_eq!(
        state(&h),
        (
            "oddeven".into(),
            "transposition".into(),
            4,
            Tab::Stages,
            false
        )
    );
    assert_eq!(
        h.state().link_now().unwrap().to_text().unwrap(),
        "#lesson=oddeven&step=3"
    );
    // An unknown lesson is a message, not a panic.
    h.state_mut()
        .open_link(&Link::parse("#lesson=nope").unwrap(), &ctx);
    assert!(
        h.state()
            .message
            .as_deref()
            .is_some_and(|m| m.contains("no lesson 'nope'"))
    );
}
