//! The *Lessons* panel's state: the shipped lessons, where the student is, their progress (saved
//! with eframe's storage beside the session: the app's data folder natively, the browser's local
//! storage on the web) and the open question's guess and verdict. The panel itself, which sets the
//! app's state and reads the run, is `app/lessons.rs`.

use crate::error::Result;
use crate::lesson::{self, Lesson, StepView, Verdict};
use crate::request::{InputSpec, RunSpec};
use crate::ui::app::{Session, SessionView};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The storage key of the progress.
pub const STORAGE_KEY: &str = "stagewise-lessons";

/// What a student has done, saved between runs of the app.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// The lesson open in the panel (its id), if any.
    pub current: Option<String>,
    /// Whether the panel was open.
    pub open: bool,
    pub lessons: BTreeMap<String, LessonProgress>,
}

/// One lesson's progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LessonProgress {
    /// The step (then the exercises, after the steps) the student is at.
    pub position: usize,
    /// Steps whose question was answered right.
    pub right: BTreeSet<usize>,
    /// Steps seen.
    pub seen: BTreeSet<usize>,
    /// Exercises by name.
    pub exercises: BTreeMap<String, ExerciseProgress>,
}

/// An exercise's attempts: each failed check unlocks one more hint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExerciseProgress {
    pub failed: u32,
    pub done: bool,
}

/// The panel's state.
#[derive(Default)]
pub struct LessonsPanel {
    pub open: bool,
    pub lessons: Vec<Lesson>,
    /// Why the shipped lessons did not load (shown in the panel).
    pub error: Option<String>,
    /// The lesson shown (index into `lessons`).
    pub current: Option<usize>,
    pub progress: Progress,
    /// The answer box.
    pub guess: String,
    /// The last check of the current step's question, or the revealed answer.
    pub verdict: Option<Verdict>,
    /// Why the current step's question could not be checked (bad input, run not ready).
    pub note: Option<String>,
    /// The last exercise check's message.
    pub exercise_note: Option<(String, bool)>,
}

impl LessonsPanel {
    /// The shipped lessons (a broken one is a message in the panel, never a panic).
    pub fn load() -> LessonsPanel {
        let (lessons, error) = match lesson::shipped() {
            Ok(l) => (l, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        LessonsPanel {
            lessons,
            error,
            ..Default::default()
        }
    }

    /// Take saved progress: the lesson and position it names, the panel open as it was.
    pub fn restore(&mut self, p: Progress) {
        self.current = p
            .current
            .as_ref()
            .and_then(|id| self.lessons.iter().position(|l| &l.id == id));
        self.open = p.open;
        self.progress = p;
        self.clear_question();
    }

    /// The progress to save.
    pub fn progress_now(&self) -> Progress {
        let mut p = self.progress.clone();
        p.current = self.current.map(|i| self.lessons[i].id.clone());
        p.open = self.open;
        p
    }

    pub fn lesson(&self) -> Option<&Lesson> {
        self.current.map(|i| &self.lessons[i])
    }

    /// The current lesson's progress (made on first use).
    pub fn mine(&mut self) -> Option<&mut LessonProgress> {
        let id = self.lesson()?.id.clone();
        Some(self.progress.lessons.entry(id).or_default())
    }

    /// The position in the current lesson.
    pub fn position(&self) -> usize {
        self.lesson()
            .and_then(|l| self.progress.lessons.get(&l.id))
            .map_or(0, |p| p.position)
    }

    pub fn clear_question(&mut self) {
        self.guess.clear();
        self.verdict = None;
        self.note = None;
        self.exercise_note = None;
    }
}

/// The session that shows `spec` with `view`: the request as the app's controls hold it, the
/// input written out as text where the controls cannot make it (checked: the session's input is
/// the spec's).
pub fn session_for(spec: &RunSpec, view: &StepView) -> Result<Session> {
    let req = spec.resolve()?;
    let mut s = Session {
        algo: spec.algo.clone(),
        variant: req.variant.name.to_string(),
        dtype: spec.element_type(),
        ..Session::default()
    };
    if let InputSpec::Generate { n, fill, seed } = &spec.input {
        s.seed = *seed;
        let example = spec.algo.algo().example(s.dtype).is_some();
        s.fill = fill.unwrap_or(if n.is_none() && example {
            crate::data::Fill::Example
        } else {
            crate::data::Fill::Random
        });
        if let Some(n) = n.filter(|n| n.is_power_of_two()) {
            s.log_n = n.trailing_zeros();
        }
    }
    if s.input().ok().as_ref() != Some(&req.input) {
        s.typed = true;
        s.text = (0..req.input.len())
            .map(|i| req.input.fmt_elem(i))
            .collect::<Vec<_>>()
            .join(" ");
    }
    s.view = SessionView {
        stage: view.stage,
        tab: view.tab,
        lens: view.lens,
    };
    Ok(s)
}

/// Whether the app's session runs the same request as `s` (same spec, as JSON).
pub fn same_run(a: &Session, b: &Session) -> bool {
    let j = |s: &Session| serde_json::to_string(&s.spec()).unwrap_or_default();
    j(a) == j(b)
}
