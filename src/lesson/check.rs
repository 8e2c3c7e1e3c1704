//! `stagewise lesson check FILE`: a lesson file parsed, its runs resolved, then every step's run
//! traced on the GPU to show that its stage exists and its question has an answer (the lens
//! records the runs whose questions ask it).

use super::{Lesson, line_of};
use crate::algo::{self, RunResult};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::lens::{self, LensReport};
use crate::request::Mode;

/// What a checked step's question answers (for the CLI's listing).
#[derive(Clone, Debug)]
pub struct CheckedStep {
    pub title: String,
    /// The stages its run has (the input included).
    pub stages: usize,
    /// The real answer to its question, if it asks one.
    pub answer: Option<String>,
}

/// Check `text` (the file `name`) on `gpu`: every error is one line naming the file and a line.
pub fn check_lesson(name: &str, text: &str, gpu: &Gpu) -> Result<(Lesson, Vec<CheckedStep>)> {
    let l = Lesson::from_json(name, text)?;
    let mut out = Vec::new();
    // One run per distinct request (steps that keep the previous run share it).
    let mut runs: Vec<(String, RunResult, Option<LensReport>)> = Vec::new();
    for (i, s) in l.steps.iter().enumerate() {
        let title = serde_json::to_string(&s.title).unwrap_or_default();
        let at = |why: String| {
            Error::Input(format!(
                "lesson '{name}': line {}: step {} ('{}'): {why}",
                line_of(text, &title),
                i + 1,
                s.title
            ))
        };
        let mut spec = l
            .run_of(i)
            .cloned()
            .expect("the first step has a run (checked)");
        spec.mode = Mode::Trace;
        let key = serde_json::to_string(&spec).unwrap_or_default();
        if !runs.iter().any(|(k, _, _)| *k == key) {
            let req = spec.resolve().map_err(|e| at(format!("its run: {e}")))?;
            let a = spec.algo.algo();
            let r = algo::run(a, gpu, &req).map_err(|e| at(format!("its run on the GPU: {e}")))?;
            if !r.verified {
                return Err(at(format!(
                    "its run does not match the CPU model: {}",
                    r.mismatch.clone().unwrap_or_default()
                )));
            }
            runs.push((key.clone(), r, None));
        }
        let slot = runs.iter_mut().find(|(k, _, _)| *k == key).unwrap();
        let stages = slot.1.stages.len();
        if let Some(k) = s.view.stage
            && k >= stages
        {
            return Err(at(format!(
                "stage {k} is past the run's last stage ({})",
                stages.saturating_sub(1)
            )));
        }
        let mut answer = None;
        if let Some(q) = &s.question {
            if q.needs_lens() && slot.2.is_none() {
                let req = spec.resolve().map_err(|e| at(e.to_string()))?;
                let warp = lens::default_warp(gpu);
                let rep = lens::record_run(spec.algo.algo(), gpu, &req, &slot.1, warp)
                    .map_err(|e| at(format!("the lens: {e}")))?;
                slot.2 = Some(rep);
            }
            let a = q
                .answer(&slot.1, s.view.stage, slot.2.as_ref())
                .map_err(|why| at(format!("its question cannot be answered: {why}")))?;
            answer = Some(a.text);
        }
        out.push(CheckedStep {
            title: s.title.clone(),
            stages,
            answer,
        });
    }
    Ok((l, out))
}
