//! The *Lessons* panel in the app (docs/LESSONS.md): the list of lessons with their progress, a
//! step's text, the state it sets (the run, the stage, the tab, the lens, the code panel), its
//! question checked against the step's real run, and the lesson's exercises with their hints.
//! Previous / Next, or PageUp / PageDown while no text field has the keyboard.

use super::*;
use crate::lesson::Question;
use crate::ui::lessons::{self, Progress};
use crate::ui::workbench;

const GREEN: egui::Color32 = egui::Color32::from_rgb(80, 170, 90);
const RED: egui::Color32 = egui::Color32::from_rgb(220, 80, 70);

/// Whether the question can be checked now, and if not why.
pub enum Readiness {
    Ready,
    Waiting(String),
}

impl StagewiseApp {
    /// Read the saved progress (`new` passes eframe's storage; tests a storage of their own).
    pub fn restore_lessons(&mut self, storage: &dyn eframe::Storage) {
        if let Some(p) = eframe::get_value::<Progress>(storage, lessons::STORAGE_KEY) {
            self.lessons.restore(p);
        }
    }

    /// Save the progress (with the session, on exit).
    pub fn save_lessons(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, lessons::STORAGE_KEY, &self.lessons.progress_now());
    }

    /// Open lesson `i` at its saved position.
    pub fn open_lesson(&mut self, i: usize, ctx: &egui::Context) {
        if i >= self.lessons.lessons.len() {
            return;
        }
        self.lessons.current = Some(i);
        self.lessons.open = true;
        let at = self.lessons.position();
        self.go_to_step(at, ctx);
    }

    /// Go to place `pos` of the current lesson (a step, or an exercise after the steps) and set
    /// the app's state the step asks for.
    pub fn go_to_step(&mut self, pos: usize, ctx: &egui::Context) {
        let Some(lesson) = self.lessons.lesson().cloned() else {
            return;
        };
        let pos = pos.min(lesson.len().saturating_sub(1));
        self.lessons.clear_question();
        if let Some(p) = self.lessons.mine() {
            p.position = pos;
            p.seen.insert(pos);
        }
        let Some(step) = lesson.steps.get(pos) else {
            return;
        };
        let Some(spec) = lesson.run_of(pos) else {
            return;
        };
        let session = match lessons::session_for(spec, &step.view) {
            Ok(s) => s,
            Err(e) => {
                self.lessons.note = Some(format!("this step's run: {e}"));
                return;
            }
        };
        if let Some(c) = step.view.code {
            self.show_code = c;
        }
        let same = lessons::same_run(&self.session, &session)
            && self.result.is_some()
            && !self.is_running()
            && self.trace == TraceState::Complete;
        self.session = session;
        self.apply_view();
        if same {
            // The run on screen is this step's: only the stage changes.
            if let (Some(r), Some(k)) = (&self.result, self.want_stage.take()) {
                self.timeline.stage = k.min(r.stages.len().saturating_sub(1));
            } else if self.result.as_ref().is_some_and(|r| r.stages.len() > 1) {
                self.timeline.stage = 1;
            }
            self.timeline.playing = false;
        } else {
            self.start_run(ctx);
        }
    }

    /// Whether the run on screen is the current step's, whole, with the lens's record where the
    /// question needs it.
    pub fn question_readiness(&self) -> Readiness {
        let Some(l) = self.lessons.lesson() else {
            return Readiness::Waiting("no lesson open".into());
        };
        let pos = self.lessons.position();
        let (Some(step), Some(spec)) = (l.steps.get(pos), l.run_of(pos)) else {
            return Readiness::Waiting("not a step".into());
        };
        if self.is_running() || self.trace != TraceState::Complete || self.result.is_none() {
            return Readiness::Waiting("the GPU is running this step's trace…".into());
        }
        match lessons::session_for(spec, &step.view) {
            Ok(s) if lessons::same_run(&self.session, &s) => {}
            _ => {
                return Readiness::Waiting(
                    "the run on screen is not this step's: press Set up again".into(),
                );
            }
        }
        if step.question.as_ref().is_some_and(Question::needs_lens)
            && self.lens.report_of(self.result_key).is_none()
        {
            return Readiness::Waiting(if self.lens.is_recording() {
                "the memory lens is recording this run…".into()
            } else {
                "turn the memory lens on: this question reads its record".into()
            });
        }
        Readiness::Ready
    }

    /// The real answer to the current step's question, from the run on screen.
    fn real_answer(&self) -> std::result::Result<crate::lesson::Answer, String> {
        if let Readiness::Waiting(why) = self.question_readiness() {
            return Err(why);
        }
        let l = self.lessons.lesson().ok_or("no lesson")?;
        let step = &l.steps[self.lessons.position()];
        let q = step.question.as_ref().ok_or("no question")?;
        let r = self.result.as_ref().ok_or("no run")?;
        q.answer(r, step.view.stage, self.lens.report_of(self.result_key))
    }

    /// Check the guess in the answer box against the run (the verdict shows the real answer).
    pub fn check_guess(&mut self) {
        let a = match self.real_answer() {
            Ok(a) => a,
            Err(why) => {
                self.lessons.note = Some(why);
                return;
            }
        };
        match a.check(&self.lessons.guess) {
            Ok(v) => {
                let pos = self.lessons.position();
                if v.right
                    && let Some(p) = self.lessons.mine()
                {
                    p.right.insert(pos);
                }
                self.lessons.verdict = Some(v);
                self.lessons.note = None;
            }
            Err(why) => self.lessons.note = Some(format!("cannot read your answer: {why}")),
        }
    }

    /// Show the real answer without a guess.
    pub fn reveal_answer(&mut self) {
        match self.real_answer() {
            Ok(a) => {
                self.lessons.verdict = Some(crate::lesson::Verdict {
                    right: false,
                    text: format!("The GPU says {}", a.text),
                });
                self.lessons.note = None;
            }
            Err(why) => self.lessons.note = Some(why),
        }
    }

    /// Check the kernel on screen against exercise `name`'s goal: a failure unlocks a hint.
    pub fn check_exercise(&mut self, name: &str) {
        let open = self
            .workbench
            .exercise
            .as_ref()
            .filter(|e| e.exercise.name() == name)
            .map(|e| e.exercise.clone());
        let Some(ex) = open else {
            self.lessons.exercise_note =
                Some(("open the exercise first (Open exercise)".into(), false));
            return;
        };
        let r = self
            .result
            .as_ref()
            .filter(|r| r.algorithm == Algo::Kernel && self.trace == TraceState::Complete);
        let (txt, ok) = match (r, &self.workbench.error) {
            (_, Some(e)) => (
                format!("compile error at line {}: {}", e.line, e.message),
                false,
            ),
            (None, None) => {
                self.lessons.exercise_note = Some((
                    "your kernel has not run yet (save it, or Run)".into(),
                    false,
                ));
                return;
            }
            (Some(r), None) => {
                if r.verified && ex.lens_max_sectors.is_some() && self.lens.is_recording() {
                    self.lessons.exercise_note =
                        Some(("the memory lens is still measuring…".into(), false));
                    return;
                }
                workbench::goal_line(&ex, r, self.lens.report_of(self.result_key))
            }
        };
        if let Some(p) = self.lessons.mine() {
            let e = p.exercises.entry(name.to_string()).or_default();
            if ok {
                e.done = true;
            } else {
                e.failed += 1;
            }
        }
        self.lessons.exercise_note = Some((txt, ok));
    }

    /// The panel (right side), when open.
    pub(super) fn lessons_panel(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if self.lessons.current.is_some() && !ctx.egui_wants_keyboard_input() {
            let (back, fwd) = ctx.input(|i| {
                (
                    i.key_pressed(egui::Key::PageUp),
                    i.key_pressed(egui::Key::PageDown),
                )
            });
            let pos = self.lessons.position();
            if fwd {
                self.go_to_step(pos + 1, &ctx);
            } else if back && pos > 0 {
                self.go_to_step(pos - 1, &ctx);
            }
        }
        egui::Panel::right("lessons")
            .resizable(true)
            .default_size(340.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("lessons scroll")
                    .show(ui, |ui| self.lessons_body(ui, &ctx));
            });
    }

    fn lessons_body(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        ui.horizontal(|ui| {
            ui.heading("Lessons");
            if ui
                .small_button("Close")
                .on_hover_text("Hide the panel")
                .clicked()
            {
                self.lessons.open = false;
            }
        });
        if let Some(e) = &self.lessons.error {
            ui.colored_label(RED, e);
        }
        let mut open = None;
        egui::CollapsingHeader::new("All lessons")
            .default_open(self.lessons.current.is_none())
            .show(ui, |ui| {
                for (i, l) in self.lessons.lessons.iter().enumerate() {
                    let p = self.lessons.progress.lessons.get(&l.id);
                    let asked = l.steps.iter().filter(|s| s.question.is_some()).count();
                    let right = p.map_or(0, |p| p.right.len());
                    let title = workbench::drawable(ui.ctx(), &l.title, false);
                    let label = format!("{}. {title}  ({right}/{asked})", i + 1);
                    if ui
                        .selectable_label(self.lessons.current == Some(i), label)
                        .on_hover_text(&l.summary)
                        .clicked()
                    {
                        open = Some(i);
                    }
                }
            });
        if let Some(i) = open {
            self.open_lesson(i, ctx);
        }
        let Some(lesson) = self.lessons.lesson().cloned() else {
            ui.label("Pick a lesson: each step sets up a run on the GPU and asks what it will do.");
            return;
        };
        ui.separator();
        let pos = self.lessons.position();
        ui.horizontal(|ui| {
            if ui
                .add_enabled(pos > 0, egui::Button::new("< Previous step"))
                .on_hover_text("The previous step (PageUp)")
                .clicked()
            {
                self.go_to_step(pos - 1, ctx);
            }
            ui.label(format!("Step {} of {}", pos + 1, lesson.len()));
            if ui
                .add_enabled(pos + 1 < lesson.len(), egui::Button::new("Next step >"))
                .on_hover_text("The next step (PageDown)")
                .clicked()
            {
                self.go_to_step(pos + 1, ctx);
            }
        });
        let pos = self.lessons.position();
        // Lesson files may hold characters the UI's fonts cannot draw (a '?' then).
        let text = |s: &str| workbench::drawable(ctx, s, false);
        ui.strong(text(&lesson.title));
        if let Some(step) = lesson.steps.get(pos) {
            ui.heading(text(&step.title));
            ui.label(text(&step.text));
            if ui
                .small_button("Set up")
                .on_hover_text("Put the app back in this step's state (run, stage, tab, lens)")
                .clicked()
            {
                self.go_to_step(pos, ctx);
            }
            if let Some(q) = &step.question {
                self.question_ui(ui, q, pos);
            }
            if let Some(n) = &self.lessons.note {
                ui.colored_label(RED, n);
            }
        } else if let Some((r, ex)) = lesson
            .exercises_in_order()
            .get(pos - lesson.steps.len())
            .cloned()
        {
            self.exercise_ui(ui, &r, &ex, ctx);
        }
    }

    fn question_ui(&mut self, ui: &mut egui::Ui, q: &Question, pos: usize) {
        ui.separator();
        ui.strong("Predict");
        ui.label(workbench::drawable(ui.ctx(), q.ask(), false));
        let answered = self
            .lessons
            .lesson()
            .and_then(|l| self.lessons.progress.lessons.get(&l.id))
            .is_some_and(|p| p.right.contains(&pos));
        let mut check = false;
        ui.horizontal(|ui| {
            let r = ui.add(
                egui::TextEdit::singleline(&mut self.lessons.guess)
                    .hint_text(q.form())
                    .desired_width(140.0),
            );
            r.widget_info(|| egui::WidgetInfo::text_edit(true, "", "Your answer", q.form()));
            check |= r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            check |= ui
                .button("Check")
                .on_hover_text("Compare with what the GPU's run did")
                .clicked();
            if ui
                .button("Show answer")
                .on_hover_text("Reveal the GPU's answer")
                .clicked()
            {
                self.reveal_answer();
            }
        });
        if check {
            self.check_guess();
        }
        if let Readiness::Waiting(why) = self.question_readiness() {
            ui.small(why);
        }
        if let Some(v) = &self.lessons.verdict {
            ui.colored_label(if v.right { GREEN } else { RED }, &v.text);
        } else if answered {
            ui.small("(answered right before)");
        }
    }

    fn exercise_ui(
        &mut self,
        ui: &mut egui::Ui,
        r: &crate::lesson::ExerciseRef,
        ex: &crate::algo::kernel::exercise::Exercise,
        ctx: &egui::Context,
    ) {
        let text = |s: &str| workbench::drawable(ctx, s, false);
        ui.heading(format!("Exercise: {}", text(&ex.title)));
        ui.label(format!("Goal: {}", text(&ex.goal)));
        ui.label(text(&ex.statement_text()));
        ui.horizontal(|ui| {
            if ui
                .button("Open exercise")
                .on_hover_text("Open its starter kernel in the room \"Your kernel\"")
                .clicked()
            {
                self.open_exercise(ex, false, ctx);
            }
            if ui
                .button("Check my kernel")
                .on_hover_text("Check the kernel's last run against the goal")
                .clicked()
            {
                self.check_exercise(&r.name);
            }
        });
        if let Some((t, ok)) = &self.lessons.exercise_note {
            ui.colored_label(if *ok { GREEN } else { RED }, text(t));
        }
        let p = self
            .lessons
            .lesson()
            .and_then(|l| self.lessons.progress.lessons.get(&l.id))
            .and_then(|p| p.exercises.get(&r.name))
            .cloned()
            .unwrap_or_default();
        if p.done {
            ui.colored_label(GREEN, "Done.");
        }
        let shown = (p.failed as usize).min(r.hints.len());
        for (i, h) in r.hints[..shown].iter().enumerate() {
            ui.label(format!("Hint {}: {}", i + 1, text(h)));
        }
        if shown < r.hints.len() {
            ui.small(if shown == 0 {
                "Hints unlock after a failed attempt."
            } else {
                "Another failed attempt unlocks the next hint."
            });
        }
    }
}
