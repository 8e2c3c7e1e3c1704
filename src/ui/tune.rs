//! Help ▸ Tune this GPU…: `stagewise tune` on the app's own device (no second device is opened),
//! on a worker as Help ▸ Self-test… runs: the rooms and a time budget to choose, its progress
//! (case i of n, the candidate, elapsed and left), a Stop that keeps every case finished, and at
//! the end this adapter's wisdom written (merged with what was measured before, as the CLI does:
//! [`crate::wisdom::record`]) and a table of what changed and by how much. Also the wisdom the
//! app's runs use ([`InUse`]): where it came from, and Forget.
//!
//! In the browser the tuner runs as natively, but the page has no data directory: its wisdom is
//! kept for the page's runs and is gone on reload.

use crate::gpu::Gpu;
use crate::ui::task::Worker;
use crate::wisdom::search::{self, Event, Outcome};
use crate::wisdom::{self, Entry, Loaded, Origin, Wisdom};
use eframe::egui;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use web_time::Instant;

/// What the page's wisdom says it came from (in the browser nothing is written).
pub const PAGE: &str = "this page (the browser keeps no files)";

mod in_use;
pub use in_use::InUse;

/// How far a tuning round has come.
#[derive(Clone, Debug)]
pub struct Progress {
    pub case: String,
    pub n: usize,
    /// 1-based.
    pub index: usize,
    pub total: usize,
    /// The last candidate and how it fared.
    pub candidate: String,
    /// Candidates tried in this case.
    pub tried: usize,
}

/// A round that ended: the cases finished (all of them, or those before Stop), the cases skipped
/// and why, and where the wisdom went.
#[derive(Clone, Debug)]
pub struct Finished {
    pub entries: Vec<Entry>,
    pub skipped: Vec<(String, String)>,
    pub stopped: bool,
    pub cases: usize,
    pub elapsed_s: f64,
    /// The file written (None: the page keeps it), or why nothing was.
    pub saved: Result<Option<PathBuf>, String>,
    /// A file of another GPU (or unreadable) that was replaced.
    pub warning: Option<String>,
}

enum Msg {
    Case {
        id: String,
        n: usize,
        index: usize,
        total: usize,
    },
    Tried(String),
    Skipped(String, String),
    /// A case tuned short of time: its id and what was left.
    OutOfTime(String, String),
    Finished(Box<Finished>, Option<Wisdom>),
}

struct Running {
    worker: Worker<Msg>,
    started: Instant,
    budget_s: f64,
}

pub struct TuneWindow {
    pub open: bool,
    /// The rooms to tune ([`search::ROOMS`]).
    pub rooms: BTreeMap<&'static str, bool>,
    /// The whole round's budget, shared among the cases left.
    pub minutes: f64,
    /// log2 of the size every case is timed at; None: the suite's (a CPU adapter: at most 2^20).
    pub log_n: Option<u32>,
    /// Timed repetitions per candidate.
    pub reps: usize,
    /// Write here instead of this adapter's file in the data directory (tests).
    pub out: Option<PathBuf>,
    running: Option<Running>,
    pub progress: Option<Progress>,
    pub skipped: Vec<(String, String)>,
    /// Cases whose share of the time ran out before their search did: (id, what was left).
    pub out_of_time: Vec<(String, String)>,
    pub finished: Option<Finished>,
    /// Why the last Start or Forget did nothing, or what it did.
    pub message: Option<String>,
    /// Other GPU work of the app in flight (set every frame): a round waits for it, since it
    /// would share the device with the candidates being timed.
    pub busy: Option<&'static str>,
}

impl Default for TuneWindow {
    fn default() -> Self {
        TuneWindow {
            open: false,
            rooms: search::ROOMS.iter().map(|r| (*r, true)).collect(),
            minutes: 5.0,
            log_n: None,
            reps: search::Rules::default().reps,
            out: None,
            running: None,
            progress: None,
            skipped: Vec::new(),
            out_of_time: Vec::new(),
            finished: None,
            message: None,
            busy: None,
        }
    }
}

/// Keep a round's entries: natively in the file (merged with what it held), in the browser in the
/// page's wisdom (`base`, merged the same way).
#[cfg(not(target_arch = "wasm32"))]
fn keep(
    gpu: &Gpu,
    out: Option<PathBuf>,
    entries: &[Entry],
    _base: Option<Wisdom>,
) -> (
    Result<Option<PathBuf>, String>,
    Option<String>,
    Option<Wisdom>,
) {
    let path = out.unwrap_or_else(|| wisdom::local_path(gpu));
    match wisdom::record(gpu, &path, entries) {
        Ok((_, warning)) => (Ok(Some(path)), warning, None),
        Err(e) => (Err(e.to_string()), None, None),
    }
}

#[cfg(target_arch = "wasm32")]
fn keep(
    gpu: &Gpu,
    _out: Option<PathBuf>,
    entries: &[Entry],
    base: Option<Wisdom>,
) -> (
    Result<Option<PathBuf>, String>,
    Option<String>,
    Option<Wisdom>,
) {
    let me = wisdom::AdapterId::of(gpu);
    let mut w = base
        .filter(|w| w.adapter.same_gpu(&me))
        .unwrap_or_else(|| Wisdom::new(gpu, crate::suite::utc_now()));
    w.merge(entries, crate::suite::utc_now());
    (Ok(None), None, Some(w))
}

impl TuneWindow {
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    fn rooms_chosen(&self) -> Vec<String> {
        self.rooms
            .iter()
            .filter(|(_, on)| **on)
            .map(|(r, _)| r.to_string())
            .collect()
    }

    /// Start a round on `gpu` (the app's device, shared). `base`: the wisdom in use, which the
    /// browser's round adds to.
    pub fn start(&mut self, gpu: &Gpu, ctx: &egui::Context, base: Option<&Loaded>) {
        self.message = None;
        if !gpu.has_timestamps() {
            self.message =
                Some("this adapter has no timestamps: the tuner cannot time candidates".into());
            return;
        }
        let rooms = self.rooms_chosen();
        if rooms.is_empty() {
            self.message = Some("pick at least one room".into());
            return;
        }
        let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
        let n = self.log_n.map(|k| 1usize << k);
        let cases = match search::suite_cases(&crate::cli::Words, &rooms, &[], n, cpu) {
            Ok(c) => {
                // The FFTs a CPU adapter does not time at their size: said once, up front.
                self.message = c.left_out_line();
                c.cases
            }
            Err(e) => {
                self.message = Some(e.to_string());
                return;
            }
        };
        let (worker, reply) = Worker::new(ctx);
        let gpu = gpu.clone();
        let rules = search::Rules {
            reps: self.reps.max(1),
            ..Default::default()
        };
        let minutes = self.minutes.max(0.01);
        let out = self.out.clone();
        let base = base.map(|l| l.wisdom.clone());
        super::task::spawn(move || async move {
            let t0 = Instant::now();
            let send = |m: Msg| reply.send(m);
            let mut skipped = Vec::new();
            let mut on = |e: Event| match e {
                Event::Case { case, index, total } => send(Msg::Case {
                    id: case.id.clone(),
                    n: case.n,
                    index: index + 1,
                    total,
                }),
                Event::Tried {
                    choice, outcome, ..
                } => {
                    let how = match outcome {
                        Outcome::Timed(ms) => format!("{ms:.4} ms"),
                        Outcome::Refused(m) => format!("refused: {m}"),
                        Outcome::Wrong(m) => format!("wrong, not timed: {m}"),
                    };
                    send(Msg::Tried(format!(
                        "{}: {how}",
                        wisdom::describe_choice(choice)
                    )));
                }
                Event::Skipped { case, why } => {
                    skipped.push((case.id.clone(), why.clone()));
                    send(Msg::Skipped(case.id.clone(), why));
                }
                Event::OutOfTime {
                    case,
                    untried,
                    unconfirmed,
                } => send(Msg::OutOfTime(
                    case.id.clone(),
                    search::out_of_time(untried, unconfirmed),
                )),
                Event::Done(_) => {}
            };
            let r = search::tune(&gpu, &cases, rules, minutes, &mut on, &|| reply.stopped()).await;
            let stopped = reply.stopped();
            let (entries, saved, warning, page) = match r {
                // Nothing finished: nothing to write (a file is never rewritten for nothing).
                Ok(entries) if entries.is_empty() => (entries, Ok(None), None, None),
                Ok(entries) => {
                    let (saved, warning, page) = keep(&gpu, out, &entries, base);
                    (entries, saved, warning, page)
                }
                Err(e) => (Vec::new(), Err(e.to_string()), None, None),
            };
            send(Msg::Finished(
                Box::new(Finished {
                    entries,
                    skipped,
                    stopped,
                    cases: cases.len(),
                    elapsed_s: t0.elapsed().as_secs_f64(),
                    saved,
                    warning,
                }),
                page,
            ));
        });
        self.running = Some(Running {
            worker,
            started: Instant::now(),
            budget_s: minutes * 60.0,
        });
        self.progress = None;
        self.skipped.clear();
        self.out_of_time.clear();
        self.finished = None;
    }

    /// Stop after the candidate being timed; the cases finished are kept and written.
    pub fn stop(&self) {
        if let Some(r) = &self.running {
            r.worker.stop();
        }
    }

    /// Take what the worker sent; when a round ends, the app's wisdom is loaded again (it may now
    /// be the file just written).
    pub fn poll(&mut self, gpu: Option<&Gpu>, in_use: &mut InUse) {
        let Some(r) = &self.running else { return };
        for m in r.worker.take() {
            match m {
                Msg::Case {
                    id,
                    n,
                    index,
                    total,
                } => {
                    self.progress = Some(Progress {
                        case: id,
                        n,
                        index,
                        total,
                        candidate: String::new(),
                        tried: 0,
                    })
                }
                Msg::Tried(line) => {
                    if let Some(p) = &mut self.progress {
                        p.candidate = line;
                        p.tried += 1;
                    }
                }
                Msg::Skipped(id, why) => self.skipped.push((id, why)),
                Msg::OutOfTime(id, what) => self.out_of_time.push((id, what)),
                Msg::Finished(f, page) => {
                    self.running = None;
                    if let Some(w) = page {
                        in_use.loaded = Some(Arc::new(Loaded {
                            wisdom: w,
                            from: PAGE.into(),
                        }));
                        in_use.warning = None;
                    } else if let (Ok(Some(_)), Some(g)) = (&f.saved, gpu) {
                        *in_use = InUse::load(g, in_use.source.clone());
                    }
                    self.finished = Some(*f);
                }
            }
        }
    }

    /// Forget this adapter's local wisdom (the browser: the page's) and load what is left.
    pub fn forget(&mut self, gpu: &Gpu, in_use: &mut InUse) {
        if in_use.loaded.as_ref().is_some_and(|l| l.from == PAGE) {
            in_use.loaded = None;
            self.message = Some("forgot this page's wisdom".into());
            return;
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.message = Some(match wisdom::forget(gpu) {
                Ok(Some(p)) => format!("removed {}", p.display()),
                Ok(None) => format!("no local wisdom for {}", gpu.info.name),
                Err(e) => e.to_string(),
            });
            *in_use = InUse::load(gpu, in_use.source.clone());
        }
        #[cfg(target_arch = "wasm32")]
        let _ = gpu;
    }

    pub fn show(&mut self, ctx: &egui::Context, gpu: Option<&Gpu>, in_use: &mut InUse) {
        self.poll(gpu, in_use);
        if !self.open {
            return;
        }
        let mut open = self.open;
        egui::Window::new("Tune this GPU")
            .open(&mut open)
            .default_width(720.0)
            // Its height follows its content: the table arrives after the window was laid out.
            .resizable([true, false])
            .show(ctx, |ui| self.ui(ui, gpu, in_use));
        self.open = open;
    }

    fn ui(&mut self, ui: &mut egui::Ui, gpu: Option<&Gpu>, in_use: &mut InUse) {
        ui.label(
            "Measure this GPU's best defaults for each room: every candidate is checked against \
             the CPU model, then timed; a choice replaces the built-in default only when it is \
             faster beyond noise. Runs, the lab and the self-test then fill the options you leave \
             unset from it (stagewise tune does the same).",
        );
        if let Some(g) = gpu {
            self.in_use_row(ui, g, in_use);
        }
        ui.separator();
        let running = self.is_running();
        ui.add_enabled_ui(!running, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.label("rooms");
                for (room, on) in self.rooms.iter_mut() {
                    ui.checkbox(on, *room)
                        .on_hover_text(format!("Tune the {room} room's cases of the benchmark suite"));
                }
            });
            ui.horizontal_wrapped(|ui| {
                ui.label("minutes");
                ui.add(
                    egui::DragValue::new(&mut self.minutes)
                        .range(0.01..=600.0)
                        .speed(0.1),
                )
                .on_hover_text(
                    "The whole round's time, shared equally among the cases left; what finished is kept",
                );
                ui.add(egui::Slider::new(&mut self.reps, 1..=100).text("reps"))
                    .on_hover_text("Timed repetitions per candidate (the median is kept)");
            });
            ui.horizontal_wrapped(|ui| {
                let mut own = self.log_n.is_some();
                if ui
                    .checkbox(&mut own, "one size")
                    .on_hover_text(
                        "Time every case at one N instead of the suite's largest size (a CPU adapter: at most 2^20)",
                    )
                    .changed()
                {
                    self.log_n = own.then_some(20);
                }
                match &mut self.log_n {
                    Some(k) => {
                        ui.add(egui::Slider::new(k, 10..=28).text("log2 N"))
                            .on_hover_text("log2 of the size every case is timed at");
                    }
                    None => {
                        ui.small("the suite's sizes (a CPU adapter: at most 2^20)");
                    }
                }
            });
        });
        ui.horizontal(|ui| {
            if running {
                if ui
                    .button("Stop")
                    .on_hover_text("Stop after the candidate being timed; the cases finished are kept and written")
                    .clicked()
                {
                    self.stop();
                }
                // No spinner: its frames every few ms would share the device (on a CPU adapter,
                // the cores) with the candidates being timed. Each candidate's message redraws.
            } else if ui
                .add_enabled(
                    gpu.is_some() && self.busy.is_none(),
                    egui::Button::new("Start tuning"),
                )
                .on_hover_text("Tune the chosen rooms on the app's GPU")
                .clicked()
                && let Some(g) = gpu
            {
                let base = in_use.loaded.clone();
                self.start(g, ui.ctx(), base.as_deref());
            }
            if let Some(what) = self.busy.filter(|_| !running) {
                ui.label(format!(
                    "waiting for {what}: it would share the GPU with the timings"
                ));
            }
        });
        if let Some(m) = &self.message {
            ui.label(m);
        }
        if let (Some(r), Some(p)) = (&self.running, &self.progress) {
            let elapsed = r.started.elapsed().as_secs_f64();
            ui.label(format!(
                "case {} of {}: {} at n = {} · {elapsed:.0} s elapsed, about {:.0} s left",
                p.index,
                p.total,
                p.case,
                p.n,
                (r.budget_s - elapsed).max(0.0)
            ));
            if !p.candidate.is_empty() {
                ui.small(format!("candidate {}: {}", p.tried, p.candidate));
            }
        }
        let orange = egui::Color32::from_rgb(230, 150, 60);
        for (id, why) in &self.skipped {
            ui.colored_label(orange, format!("{id}: skipped: {why}"));
        }
        for (id, what) in &self.out_of_time {
            ui.colored_label(orange, format!("{id}: {what}"));
        }
        if let Some(f) = &self.finished {
            ui.separator();
            finished(ui, f);
        }
    }

    /// Where the wisdom in use came from, and Forget.
    fn in_use_row(&mut self, ui: &mut egui::Ui, gpu: &Gpu, in_use: &mut InUse) {
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("Wisdom in use: {}", in_use.origin(gpu)));
            let local = in_use
                .loaded
                .as_ref()
                .is_some_and(|l| l.from == PAGE || l.origin(gpu) == Origin::Local);
            if ui
                .add_enabled(
                    local && !self.is_running(),
                    egui::Button::new("Forget this GPU's wisdom"),
                )
                .on_hover_text(
                    "Delete this adapter's tuned defaults (shipped ones stay); runs use the built-in defaults again",
                )
                .clicked()
            {
                self.forget(gpu, in_use);
            }
        });
        if let Some(w) = &in_use.warning {
            ui.colored_label(egui::Color32::from_rgb(230, 150, 60), w);
        }
    }
}

/// The round's verdict and its table: case, what changed, default ms, chosen ms, speed-up.
fn finished(ui: &mut egui::Ui, f: &Finished) {
    let head = format!(
        "{} of {} cases tuned in {:.0} s{}",
        f.entries.len(),
        f.cases,
        f.elapsed_s,
        if f.stopped {
            " (stopped: the cases finished are kept)"
        } else {
            ""
        }
    );
    ui.strong(head);
    match &f.saved {
        Ok(Some(p)) => {
            ui.label(format!("wisdom written to {}", p.display()));
        }
        Ok(None) if f.entries.is_empty() => {
            ui.label("nothing finished: no wisdom written");
        }
        Ok(None) => {
            ui.label(format!("wisdom kept for {PAGE}"));
        }
        Err(e) => {
            ui.colored_label(egui::Color32::from_rgb(230, 90, 90), e);
        }
    }
    if let Some(w) = &f.warning {
        ui.colored_label(egui::Color32::from_rgb(230, 150, 60), w);
    }
    if f.entries.is_empty() {
        return;
    }
    // No scroll area: the window grows with the table (a scroll area would keep the height the
    // window had before the table arrived). A round tunes a few dozen cases at most.
    egui::Grid::new("tune table").striped(true).show(ui, |ui| {
        for h in [
            "case",
            "changed from the built-in default",
            "default ms",
            "chosen ms",
            "speed-up",
        ] {
            ui.strong(h);
        }
        ui.end_row();
        for e in &f.entries {
            ui.label(format!("{} (2^{})", e.case, e.log_n));
            ui.label(if e.choice.is_empty() {
                "nothing: the default stays".to_string()
            } else {
                wisdom::describe_choice(&e.choice)
            });
            ui.label(format!("{:.4}", e.default_ms));
            ui.label(format!("{:.4}", e.ms));
            ui.label(format!("{:.2}×", e.speedup()));
            ui.end_row();
        }
    });
}
