//! Lessons (`assets/lessons/*.json`, docs/LESSONS.md): an ordered path through the seeds. A lesson
//! is a list of steps; a step sets the app's state (a [`RunSpec`], the stage, the tab, the lens),
//! shows a short text and may ask a prediction [`Question`]. A question's answer is never written
//! in the lesson: it is read from the step's real traced run ([`Question::answer`]: the stage's
//! read-back buffer, its annotations, or the memory lens's record). A lesson ends with exercises
//! of the workbench (assets/exercises), in course order, with hints that unlock after a failed
//! attempt.

use crate::algo::RunResult;
use crate::data::{DType, fmt_bits};
use crate::error::{Error, Result};
use crate::lens::LensReport;
use crate::request::{Mode, RunSpec};
use crate::view::Tab;
use serde::{Deserialize, Serialize};

#[cfg(not(target_arch = "wasm32"))]
pub mod check;

/// The lesson format's version (a lesson's `version`; a newer one is refused).
pub const LESSON_VERSION: u32 = 1;

/// One lesson file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// The format's version ([`LESSON_VERSION`]; absent: 1).
    #[serde(default = "one")]
    pub version: u32,
    /// A short name: progress is kept under it.
    pub id: String,
    pub title: String,
    /// Its place in the path (lessons are listed by it).
    #[serde(default)]
    pub order: u32,
    /// The design note in shared/seeds it follows (e.g. "000").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// One sentence for the list.
    #[serde(default)]
    pub summary: String,
    pub steps: Vec<Step>,
    /// Workbench exercises (assets/exercises) that end the lesson, shown in their course order.
    #[serde(default)]
    pub exercises: Vec<ExerciseRef>,
}

fn one() -> u32 {
    1
}

/// One step: what the app shows, a text, maybe a question.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub title: String,
    pub text: String,
    /// The run to show (always traced); absent: the previous step's run (the first step needs one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSpec>,
    #[serde(default)]
    pub view: StepView,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Question>,
}

/// What is on screen at a step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepView {
    /// The stage shown (0: the input); absent: the first pass's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<usize>,
    /// `stages` or `performance`.
    #[serde(default)]
    pub tab: Tab,
    /// The memory lens under the stage view.
    #[serde(default)]
    pub lens: bool,
    /// The narration and code panel (absent: as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<bool>,
}

/// A global access of a pass, as the lens sorts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Read,
    Write,
}

/// A prediction asked before the answer is shown; its answer comes from the step's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Question {
    /// The value at `index` after `stage` (the stage's read-back).
    Value {
        ask: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stage: Option<usize>,
        index: usize,
    },
    /// Where the element that starts at index `element` of the input is after `stage` (found by
    /// its value in the stage's read-back: the input's values must be distinct).
    Position {
        ask: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stage: Option<usize>,
        element: usize,
    },
    /// Which pairs swapped at `stage` (odd-even sorts): the lower index of each.
    Swaps {
        ask: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stage: Option<usize>,
    },
    /// Which thread holds element `element` after `stage` (the FFT's exchanges).
    Owner {
        ask: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stage: Option<usize>,
        element: usize,
    },
    /// Sectors per request of pass `pass`'s global reads or writes (the memory lens, warp of the
    /// lens panel); a guess within `tolerance` (default 0.5) is right.
    Sectors {
        ask: String,
        pass: usize,
        access: AccessKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tolerance: Option<f64>,
    },
}

/// An exercise at the end of a lesson, with hints shown one per failed attempt.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciseRef {
    /// The exercise's folder name in assets/exercises.
    pub name: String,
    #[serde(default)]
    pub hints: Vec<String>,
}

/// The real answer to a question, read from a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// As shown to the student.
    pub text: String,
    expect: Expect,
}

#[derive(Clone, Debug, PartialEq)]
enum Expect {
    /// One element's bits, of this type.
    Bits(DType, u32),
    /// A whole number (an index, a thread).
    Whole(u64),
    /// A set of indices.
    Set(Vec<u64>),
    /// A measured number and how far a guess may be.
    Near(f64, f64),
}

/// A checked guess.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub right: bool,
    /// "right: …" or "not quite: you said …, the GPU's read-back says …".
    pub text: String,
}

impl Question {
    pub fn ask(&self) -> &str {
        match self {
            Question::Value { ask, .. }
            | Question::Position { ask, .. }
            | Question::Swaps { ask, .. }
            | Question::Owner { ask, .. }
            | Question::Sectors { ask, .. } => ask,
        }
    }

    /// What the answer box takes.
    pub fn form(&self) -> &'static str {
        match self {
            Question::Value { .. } => "a value",
            Question::Position { .. } => "an index",
            Question::Swaps { .. } => "indices separated by commas (none: empty)",
            Question::Owner { .. } => "a thread number",
            Question::Sectors { .. } => "sectors per request",
        }
    }

    /// Whether the answer needs the memory lens's record.
    pub fn needs_lens(&self) -> bool {
        matches!(self, Question::Sectors { .. })
    }

    /// The stage the question is about (`shown`: the step's stage where the question names none).
    pub fn stage(&self, shown: Option<usize>) -> Option<usize> {
        match self {
            Question::Value { stage, .. }
            | Question::Position { stage, .. }
            | Question::Swaps { stage, .. }
            | Question::Owner { stage, .. } => stage.or(shown).or(Some(1)),
            Question::Sectors { .. } => None,
        }
    }

    /// The real answer, from the step's traced run `r` (and the lens's record of it): an error
    /// says why this run cannot answer the question.
    pub fn answer(
        &self,
        r: &RunResult,
        shown: Option<usize>,
        lens: Option<&LensReport>,
    ) -> std::result::Result<Answer, String> {
        let stage = |k: Option<usize>| {
            let k = k.unwrap_or(1);
            r.stages.get(k).ok_or_else(|| {
                format!(
                    "stage {k} is past the run's last stage ({})",
                    r.stages.len().saturating_sub(1)
                )
            })
        };
        let k = self.stage(shown);
        match self {
            Question::Value { index, .. } => {
                let st = stage(k)?;
                let b = *st.data.bits.get(*index).ok_or_else(|| {
                    format!(
                        "index {index} is past stage {}'s {} elements",
                        k.unwrap_or(1),
                        st.data.len()
                    )
                })?;
                Ok(Answer {
                    text: fmt_bits(st.data.dtype, b),
                    expect: Expect::Bits(st.data.dtype, b),
                })
            }
            Question::Position { element, .. } => {
                let first = stage(Some(0))?;
                let st = stage(k)?;
                let v = *first.data.bits.get(*element).ok_or_else(|| {
                    format!(
                        "element {element} is past the input's {} elements",
                        first.data.len()
                    )
                })?;
                for (name, d) in [("input", &first.data), ("stage", &st.data)] {
                    let same = d.bits.iter().filter(|&&b| b == v).count();
                    if same != 1 {
                        return Err(format!(
                            "the {name} holds the value {} {same} times: an element is found by \
                             its value, so the input's values must be distinct",
                            fmt_bits(d.dtype, v)
                        ));
                    }
                }
                let at = st.data.bits.iter().position(|&b| b == v).unwrap_or(0);
                Ok(Answer {
                    text: format!("index {at} (the value {})", fmt_bits(st.data.dtype, v)),
                    expect: Expect::Whole(at as u64),
                })
            }
            Question::Swaps { .. } => {
                let st = stage(k)?;
                let pairs = st
                    .oddeven()
                    .and_then(|n| n.pairs.as_ref())
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "stage {} has no compared pairs (a phase of an odd-even sort has)",
                            k.unwrap_or(1)
                        )
                    })?;
                let swapped: Vec<(u32, u32)> = pairs
                    .iter()
                    .filter(|p| p.2)
                    .map(|(i, j, _)| (i, j))
                    .collect();
                let text = if swapped.is_empty() {
                    "no pair swapped".to_string()
                } else {
                    swapped
                        .iter()
                        .map(|(i, j)| format!("({i}, {j})"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                Ok(Answer {
                    text,
                    expect: Expect::Set(swapped.iter().map(|p| p.0 as u64).collect()),
                })
            }
            Question::Owner { element, .. } => {
                let st = stage(k)?;
                let owner = st
                    .fft()
                    .map(|n| &n.owner)
                    .filter(|o| !o.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "stage {} says nothing of threads (an FFT stage does)",
                            k.unwrap_or(1)
                        )
                    })?;
                let t = *owner.get(*element).ok_or_else(|| {
                    format!(
                        "element {element} is past the stage's {} positions",
                        owner.len()
                    )
                })?;
                Ok(Answer {
                    text: format!("thread {t}"),
                    expect: Expect::Whole(t as u64),
                })
            }
            Question::Sectors {
                pass,
                access,
                tolerance,
                ..
            } => {
                let rep = lens.ok_or("the memory lens has not recorded this run yet")?;
                let p = rep.passes.get(*pass).ok_or_else(|| {
                    format!(
                        "pass {pass} is past the run's {} passes (0-based)",
                        rep.passes.len()
                    )
                })?;
                let want = match access {
                    AccessKind::Read => crate::lens::sites::Kind::Read,
                    AccessKind::Write => crate::lens::sites::Kind::Write,
                };
                let (req, sec) = p
                    .global
                    .iter()
                    .filter(|g| g.kind == want)
                    .fold((0, 0), |(r, s), g| (r + g.requests, s + g.sectors));
                if req == 0 {
                    return Err(format!(
                        "pass {pass} ({}) makes no global {} the lens recorded",
                        p.label,
                        if want == crate::lens::sites::Kind::Read {
                            "read"
                        } else {
                            "write"
                        }
                    ));
                }
                let v = sec as f64 / req as f64;
                Ok(Answer {
                    text: format!(
                        "{v:.1} sectors per request ({sec} sectors for {req} requests of a warp of {})",
                        rep.warp
                    ),
                    expect: Expect::Near(v, tolerance.unwrap_or(0.5)),
                })
            }
        }
    }
}

impl Answer {
    /// Check a typed guess against the real answer.
    pub fn check(&self, guess: &str) -> std::result::Result<Verdict, String> {
        let g = guess.trim();
        let right = match &self.expect {
            Expect::Bits(dtype, b) => {
                let d = crate::data::parse_text(g, *dtype).map_err(|e| e.to_string())?;
                if d.len() != 1 {
                    return Err("enter one value".into());
                }
                match dtype {
                    DType::F32 => {
                        let (x, y) = (f32::from_bits(d.bits[0]), f32::from_bits(*b));
                        (x - y).abs() <= 1e-3 * y.abs().max(1.0)
                    }
                    _ => d.bits[0] == *b,
                }
            }
            Expect::Whole(n) => whole(g)? == *n,
            Expect::Set(want) => {
                let mut got: Vec<u64> = g
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .map(whole)
                    .collect::<std::result::Result<_, _>>()?;
                got.sort_unstable();
                got.dedup();
                let mut want = want.clone();
                want.sort_unstable();
                got == want
            }
            Expect::Near(v, tol) => {
                let x: f64 = g.parse().map_err(|_| format!("'{g}' is not a number"))?;
                (x - v).abs() <= *tol
            }
        };
        Ok(Verdict {
            right,
            text: if right {
                format!("Right: the GPU says {}", self.text)
            } else {
                format!("Not quite: you said {g}; the GPU says {}", self.text)
            },
        })
    }
}

fn whole(s: &str) -> std::result::Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("'{}' is not a whole number", s.trim()))
}

/// The 1-based line where `needle` first occurs in `text` (1 when it does not).
pub fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |at| text[..at].matches('\n').count() + 1)
}

impl Lesson {
    /// A lesson from its file's text (`name`: the file, for errors): parsed, then checked without
    /// a GPU (every run resolves, the first step has one, the exercises exist). An error is one
    /// line naming the file and the line.
    pub fn from_json(name: &str, text: &str) -> Result<Lesson> {
        let l: Lesson = serde_json::from_str(text).map_err(|e| {
            Error::Input(format!(
                "lesson '{name}': line {} column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        l.check_static(name, text)?;
        Ok(l)
    }

    fn check_static(&self, name: &str, text: &str) -> Result<()> {
        let at = |needle: &str, why: String| {
            Error::Input(format!(
                "lesson '{name}': line {}: {why}",
                line_of(text, needle)
            ))
        };
        if self.version > LESSON_VERSION {
            return Err(at(
                "\"version\"",
                format!(
                    "version {} is newer than this Stagewise reads ({LESSON_VERSION})",
                    self.version
                ),
            ));
        }
        if self.id.is_empty()
            || !self
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(at(
                "\"id\"",
                format!("id '{}' must be letters, digits, - or _", self.id),
            ));
        }
        if self.steps.is_empty() {
            return Err(at("\"steps\"", "a lesson needs at least one step".into()));
        }
        // Each step's title names its line in the messages below.
        let step_at = |i: usize, s: &Step, why: String| {
            let title = serde_json::to_string(&s.title).unwrap_or_default();
            at(&title, format!("step {} ('{}'): {why}", i + 1, s.title))
        };
        if self.steps[0].run.is_none() {
            return Err(step_at(
                0,
                &self.steps[0],
                "the first step needs a \"run\"".into(),
            ));
        }
        for (i, s) in self.steps.iter().enumerate() {
            if let Some(run) = &s.run {
                unknown_keys(run, text, &s.title).map_err(|why| step_at(i, s, why))?;
                let mut run = run.clone();
                run.mode = Mode::Trace;
                run.resolve()
                    .map_err(|e| step_at(i, s, format!("its run: {e}")))?;
            }
            if let Some(q) = &s.question {
                if q.ask().trim().is_empty() {
                    return Err(step_at(i, s, "the question's \"ask\" is empty".into()));
                }
                if q.needs_lens() && !s.view.lens {
                    return Err(step_at(
                        i,
                        s,
                        "a sectors question needs the lens on (\"view\": {\"lens\": true})".into(),
                    ));
                }
                if let Question::Sectors {
                    tolerance: Some(t), ..
                } = q
                    && !(t.is_finite() && *t >= 0.0)
                {
                    return Err(step_at(i, s, format!("tolerance {t} must be 0 or more")));
                }
            }
        }
        let known = crate::algo::kernel::exercise::Exercise::shipped()?;
        for e in &self.exercises {
            if !known.iter().any(|k| k.name() == e.name) {
                let names: Vec<String> = known.iter().map(|k| k.name()).collect();
                return Err(at(
                    &format!("\"{}\"", e.name),
                    format!("no exercise '{}'; exercises: {}", e.name, names.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// The run step `i` shows: its own, else the last one before it.
    pub fn run_of(&self, i: usize) -> Option<&RunSpec> {
        self.steps[..=i.min(self.steps.len().saturating_sub(1))]
            .iter()
            .rev()
            .find_map(|s| s.run.as_ref())
    }

    /// Its exercises in course order (the exercises' `order`), those that exist.
    pub fn exercises_in_order(
        &self,
    ) -> Vec<(ExerciseRef, crate::algo::kernel::exercise::Exercise)> {
        let known = crate::algo::kernel::exercise::Exercise::shipped().unwrap_or_default();
        let mut v: Vec<_> = self
            .exercises
            .iter()
            .filter_map(|r| {
                known
                    .iter()
                    .find(|k| k.name() == r.name)
                    .map(|k| (r.clone(), k.clone()))
            })
            .collect();
        v.sort_by_key(|(_, e)| e.order);
        v
    }

    /// Steps, then exercises: the places a student can be at.
    pub fn len(&self) -> usize {
        self.steps.len() + self.exercises.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A run's keys that the run does not know: serde drops them (the options are flattened), so a
/// typo would silently change nothing. Found by writing the run back and comparing its keys with
/// the step's in the file.
fn unknown_keys(run: &RunSpec, text: &str, title: &str) -> std::result::Result<(), String> {
    let Ok(Value::Object(back)) = serde_json::to_value(run) else {
        return Ok(());
    };
    let Ok(file) = serde_json::from_str::<Value>(text) else {
        return Ok(());
    };
    let steps = file.get("steps").and_then(Value::as_array);
    let written = steps.into_iter().flatten().find_map(|s| {
        (s.get("title").and_then(Value::as_str) == Some(title))
            .then(|| s.get("run").and_then(Value::as_object).cloned())
            .flatten()
    });
    for k in written.iter().flat_map(|m| m.keys()) {
        if !back.contains_key(k) {
            return Err(format!("its run has an unknown field '{k}'"));
        }
    }
    Ok(())
}

use serde_json::Value;

/// The lessons shipped with Stagewise (assets/lessons), built in so the browser has them too, in
/// their `order`.
macro_rules! shipped {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/lessons/", $name, ".json")))),*]
    };
}

/// (file stem, text) of every shipped lesson (a unit test keeps the list equal to the folder).
pub const SHIPPED: &[(&str, &str)] = shipped!["bitrev", "bmmc", "oddeven", "scan", "fft", "radix"];

/// The shipped lessons, parsed and checked, in their order.
pub fn shipped() -> Result<Vec<Lesson>> {
    let mut v = SHIPPED
        .iter()
        .map(|(name, text)| Lesson::from_json(&format!("assets/lessons/{name}.json"), text))
        .collect::<Result<Vec<_>>>()?;
    v.sort_by_key(|l| l.order);
    Ok(v)
}

#[cfg(test)]
mod tests;
