//! The browser test's script (web/test): with `?test` in the page's address the app runs, frame
//! by frame, a short sweep in the performance lab, then one traced run of every seed algorithm,
//! radix, a large FFT and the tiled bit-reversal on 2^12 words, each checked against its CPU model
//! by the run itself. What it sees is written as JSON into the page's `#test-report` every frame
//! (the current stage too, so the driver can press a key and see the stage change). With `?watch` it runs nothing and only
//! reports where the app stands (the run, its stage, the lesson and step), so the driver can open a
//! link (`?watch#bitrev/staged?stage=2`, `?watch#lesson=bitrev&step=2`) and see it land.

use super::app::{StagewiseApp, Tab, TraceState};
use crate::algo::{Algo, AlgoOptions};
use crate::data::Fill;
use eframe::egui;
use serde_json::{Value, json};

/// Where the script is.
enum Phase {
    Sweep,
    Sweeping,
    Run(usize),
    Running(usize),
    Done,
    /// The driver pressed K: an exercise opened in the workbench's editor, running.
    Exercise,
    /// `?watch`: no script, only the report.
    Watch,
}

pub struct WebTest {
    phase: Phase,
    sweep: Value,
    runs: Vec<Value>,
    /// The exercise's run in the editor: its name, the room's verdict.
    exercise: Value,
}

/// The exercise K opens (its starter fails the check: the page must say so).
const EXERCISE: &str = "bitrev-naive";

/// The runs: one per seed (bitrev 000, bmmc 001, oddeven 002, fft 003, scan 004), radix, the
/// FFT's large plan, the workbench's editor kernel and the tiled bit-reversal on 2^12 words (the
/// vector kernel: the seed examples' tiles are too small for it); bitrev's staged last, so the
/// page ends on its stages. Each with log2 of its iota input, or None: the example (else small
/// values).
fn cases() -> Vec<(AlgoOptions, &'static str, Option<u32>)> {
    use crate::algo::fft::{Kernel, Options as Fft};
    let large = AlgoOptions::Fft(Fft {
        size: Some(4096),
        kernel: Kernel::Large,
        split: Some(64),
        ..Default::default()
    });
    let mut v: Vec<(AlgoOptions, &'static str, Option<u32>)> = [
        Algo::Bmmc,
        Algo::Oddeven,
        Algo::Fft,
        Algo::Scan,
        Algo::Radix,
    ]
    .into_iter()
    .filter_map(AlgoOptions::default_for)
    .map(|a| {
        let variant = a.algo().info().variants[0].name;
        (a, variant, None)
    })
    .collect();
    // The large plan is an option of the FFT's one variant.
    v.push((large, "workgroup", None));
    // The workbench: the editor's kernel (a copy), checked against the copy model.
    let kernel = AlgoOptions::Kernel(crate::algo::kernel::Options {
        wgsl: Some("kernel.wgsl".into()),
        source: Some(super::workbench::TEMPLATE.to_string()),
        expect: Some("copy".into()),
        passes: "1".into(),
        items_per_thread: 1,
        ..Default::default()
    });
    v.push((kernel, "wgsl", None));
    if let Some(b) = AlgoOptions::default_for(Algo::Bitrev) {
        v.push((b.clone(), "tiled", Some(12)));
        v.push((b, "staged", None));
    }
    v
}

impl WebTest {
    /// The script, when the page's address asks for it.
    pub fn from_page() -> Option<WebTest> {
        let search = web_sys::window()?.location().search().ok()?;
        let watch = search.contains("watch");
        (watch || search.contains("test")).then(|| WebTest {
            phase: if watch { Phase::Watch } else { Phase::Sweep },
            sweep: Value::Null,
            runs: Vec::new(),
            exercise: Value::Null,
        })
    }

    /// One step of the script, at the top of a frame.
    pub fn step(&mut self, app: &mut StagewiseApp, ctx: &egui::Context) {
        let cases = cases();
        match self.phase {
            Phase::Watch => {}
            // After the run the app starts with.
            Phase::Sweep if app.is_running() => {}
            Phase::Sweep => {
                let Some(gpu) = app.gpu().cloned() else {
                    self.sweep = json!({"error": "no GPU"});
                    self.phase = Phase::Run(0);
                    return;
                };
                app.tab = Tab::Performance;
                if !gpu.has_timestamps() {
                    self.sweep = json!({"timestamps": false});
                    self.phase = Phase::Run(0);
                    return;
                }
                let lab = &mut app.perf;
                lab.algo = AlgoOptions::Copy(Default::default());
                lab.reset_variants();
                (lab.log_lo, lab.log_hi, lab.reps, lab.warmup_ms) = (10, 14, 5, 20.0);
                lab.start(&gpu, ctx, (10..=14).map(|k| 1usize << k).collect());
                self.phase = Phase::Sweeping;
            }
            Phase::Sweeping => {
                if !app.perf.is_running() {
                    self.sweep = json!({
                        "timestamps": true,
                        "points": app.perf.rows.len(),
                        "status": app.perf.status,
                    });
                    app.tab = Tab::Stages;
                    self.phase = Phase::Run(0);
                }
            }
            Phase::Run(i) if i >= cases.len() => self.phase = Phase::Done,
            Phase::Run(i) => {
                let (algo, variant, log_n) = cases[i].clone();
                let s = &mut app.session;
                s.fill = match log_n {
                    Some(k) => {
                        s.log_n = k;
                        Fill::Iota
                    }
                    None if algo.algo().example(s.dtype).is_some() => Fill::Example,
                    None => Fill::Small,
                };
                s.variant = variant.into();
                s.typed = false;
                s.algo = algo;
                app.start_run(ctx);
                self.phase = Phase::Running(i);
            }
            Phase::Running(i) => {
                // Done: whole, or stopped by an error (then the message says why).
                if app.is_running() || matches!(app.trace, TraceState::Arriving { .. }) {
                    return;
                }
                let (algo, variant, _) = &cases[i];
                // A run that failed leaves the previous result shown: only this run's counts.
                let this = app
                    .result
                    .as_ref()
                    .filter(|r| r.algorithm == algo.id() && r.variant == *variant);
                self.runs.push(match this {
                    Some(r) => json!({
                        "algorithm": algo.name(),
                        "large": matches!(algo, AlgoOptions::Fft(f) if f.kernel == crate::algo::fft::Kernel::Large),
                        "variant": variant,
                        "n": r.input.len(),
                        "stages": r.stages.len(),
                        "verified": r.verified && r.mismatch.is_none(),
                        "mismatch": r.mismatch,
                        "message": app.message,
                    }),
                    None => json!({
                        "algorithm": algo.name(),
                        "variant": variant,
                        "verified": false,
                        "message": app.message,
                    }),
                });
                self.phase = Phase::Run(i + 1);
            }
            Phase::Done => {
                if ctx.input(|i| i.key_pressed(egui::Key::K)) {
                    let shipped = crate::algo::kernel::exercise::Exercise::shipped();
                    match shipped.map(|l| l.into_iter().find(|e| e.name() == EXERCISE)) {
                        Ok(Some(ex)) => {
                            app.open_exercise(&ex, true, ctx);
                            self.phase = Phase::Exercise;
                        }
                        other => self.exercise = json!({"error": format!("{other:?}")}),
                    }
                }
            }
            Phase::Exercise => {
                if app.is_running() || matches!(app.trace, TraceState::Arriving { .. }) {
                    return;
                }
                let editor = match &app.session.algo {
                    AlgoOptions::Kernel(o) => o.source.as_ref().map_or(0, |t| t.len()),
                    _ => 0,
                };
                let r = app.result.as_ref().filter(|r| r.algorithm == Algo::Kernel);
                let (verdict, ok) = r.map_or((String::new(), false), super::workbench::verdict);
                self.exercise = json!({
                    "exercise": EXERCISE,
                    "editor_chars": editor,
                    "verdict": verdict,
                    "verified": ok,
                    "message": app.message,
                });
                self.phase = Phase::Done;
            }
        }
    }

    /// The report so far, with the stage shown now.
    pub fn report(&self, app: &StagewiseApp) -> Value {
        let landed = !app.is_running() && app.trace == TraceState::Complete;
        let lesson = app.lessons.lesson().map(|l| l.id.clone());
        json!({
            "done": match self.phase {
                Phase::Watch => landed,
                _ => matches!(self.phase, Phase::Done),
            },
            "watch": {
                "algorithm": app.result.as_ref().map(|r| r.algorithm.clone()),
                "variant": app.result.as_ref().map(|r| r.variant.clone()),
                "n": app.result.as_ref().map(|r| r.input.len()),
                "verified": app.result.as_ref().map(|r| r.verified && r.mismatch.is_none()),
                "tab": format!("{:?}", app.tab),
                "lesson": lesson,
                "lesson_step": lesson.as_ref().map(|_| app.lessons.position() + 1),
            },
            "adapter": app.gpu().map(|g| g.adapter_name()),
            "timestamps": app.gpu().map(|g| g.has_timestamps()),
            "sweep": self.sweep,
            "runs": self.runs,
            "exercise": self.exercise,
            "message": app.message,
            "lost": app.gpu().and_then(|g| g.lost()),
            "stage": app.timeline.stage,
            "stages": app.result.as_ref().map(|r| r.stages.len()),
            "stage_label": app.result.as_ref().and_then(|r| r.stages.get(app.timeline.stage)).map(|s| s.label.clone()),
        })
    }
}

/// Write `report` into the page's `#test-report` (made on first use).
pub fn publish(report: &Value) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let el = match doc.get_element_by_id("test-report") {
        Some(e) => e,
        None => {
            let Ok(e) = doc.create_element("pre") else {
                return;
            };
            e.set_id("test-report");
            let _ = e.set_attribute("style", "display:none");
            if let Some(b) = doc.body() {
                let _ = b.append_child(&e);
            }
            e
        }
    };
    el.set_text_content(Some(&report.to_string()));
}
