//! The app shell: the controls on the left, the current algorithm's view in the centre, the
//! timeline under it, the adapter and GPU times in the status bar.

use super::timeline::Timeline;
use super::views::{self, ViewState};
use crate::algo::{self, Algo, AlgoOptions, RunRequest, RunResult};
use crate::data::{self, DType, Data, Fill};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use eframe::egui;
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{Receiver, channel};

mod io;
mod kernel;
mod kernel_editor;
mod kernel_tune;
mod kernel_wisdom;
mod lessons;
mod links;
mod panels;
mod run;
mod session;

pub use crate::view::{SessionView, Tab};
use io::IoMsg;
pub use run::{RunJob, RunMsg, TraceState};
pub use session::{SESSION_VERSION, Session};

const STORAGE_KEY: &str = "stagewise-session";

pub struct StagewiseApp {
    pub session: Session,
    gpu: Option<Gpu>,
    gpu_error: Option<String>,
    /// The run shown: growing while its trace streams in (see `trace`), else the last result.
    pub result: Option<RunResult>,
    /// Bumped per run and when its result lands, so cached textures are rebuilt.
    result_key: u64,
    /// The worker of the run in flight.
    pending: Option<Receiver<RunMsg>>,
    pub trace: TraceState,
    pub message: Option<String>,
    pub timeline: Timeline,
    view: ViewState,
    pub tab: Tab,
    pub perf: super::perf::PerfLab,
    io: (std::sync::mpsc::Sender<IoMsg>, Receiver<IoMsg>),
    pub show_help: bool,
    /// The narration + code panel on the right.
    pub show_code: bool,
    /// Where the central view was drawn last frame (for diagram PNGs).
    diagram_rect: Option<egui::Rect>,
    /// The memory lens under the stage view.
    pub lens: super::lens::LensPanel,
    /// Help ▸ Self-test…
    pub selftest: super::selftest::SelftestWindow,
    /// Help ▸ Tune this GPU…
    pub tune: super::tune::TuneWindow,
    /// The wisdom (this GPU's tuned defaults) the lab's and the self-test's untraced runs take
    /// their unset options from. Traced runs never do: a trace shows the kernels as they are.
    pub wisdom: super::tune::InUse,
    /// The browser test's script (`?test` in the page's address).
    #[cfg(target_arch = "wasm32")]
    webtest: Option<super::webtest::WebTest>,
    /// The room "Your kernel": the watched file, its compile error, the open exercise.
    pub workbench: super::workbench::Workbench,
    /// A session's stage, shown once the run's trace has it.
    want_stage: Option<usize>,
    /// The *Lessons* panel (docs/LESSONS.md).
    pub lessons: super::lessons::LessonsPanel,
}

const HELP: &[(&str, &str)] = &[
    ("Right / Left arrow", "next / previous stage"),
    ("Home / End", "first / last stage"),
    ("Space", "play / pause"),
    ("Ctrl+R", "run on the GPU"),
    ("Ctrl+O", "open input data (text, CSV, JSON, .npy)"),
    ("Ctrl+S", "save the session"),
    ("F1", "this help"),
    ("F2", "show / hide the narration and code panel"),
];

impl StagewiseApp {
    pub fn new(cc: &eframe::CreationContext<'_>, session: Option<Session>) -> Self {
        let restored = cc
            .storage
            .and_then(|s| eframe::get_value::<Session>(s, STORAGE_KEY));
        let mut session = session.or(restored).unwrap_or_default();
        let note = session.localize_kernel();
        let (gpu, gpu_error) = match &cc.wgpu_render_state {
            Some(rs) => (Some(Gpu::from_render_state(rs)), None),
            None => (
                None,
                Some("no wgpu render state: Stagewise needs eframe's wgpu renderer".to_string()),
            ),
        };
        // Wisdom for this device, as the CLI reads it (a bad file: a warning, the defaults).
        let wisdom = gpu
            .as_ref()
            .map(|g| super::tune::InUse::load(g, crate::wisdom::Source::from_env()))
            .unwrap_or_default();
        let mut app = StagewiseApp {
            session,
            gpu,
            gpu_error,
            result: None,
            result_key: 0,
            pending: None,
            trace: TraceState::Complete,
            message: None,
            timeline: Timeline::default(),
            view: ViewState::default(),
            tab: Tab::Stages,
            perf: Default::default(),
            io: channel(),
            show_help: false,
            show_code: true,
            diagram_rect: None,
            lens: Default::default(),
            selftest: Default::default(),
            tune: Default::default(),
            wisdom,
            #[cfg(target_arch = "wasm32")]
            webtest: super::webtest::WebTest::from_page(),
            workbench: Default::default(),
            want_stage: None,
            lessons: super::lessons::LessonsPanel::load(),
        };
        if let Some(s) = cc.storage {
            app.restore_lessons(s);
        }
        app.apply_view();
        app.start_run(&cc.egui_ctx);
        if note.is_some() {
            app.message = note;
        } else if let Some(w) = &app.wisdom.warning {
            app.message = Some(w.clone());
        }
        app
    }

    /// Use `source`'s wisdom from now on (the CLI's `--wisdom` / `--no-wisdom`; tests): loaded for
    /// this device; a file that cannot be used is a message, and the built-in defaults.
    pub fn use_wisdom(&mut self, source: crate::wisdom::Source) {
        let Some(g) = &self.gpu else { return };
        self.wisdom = super::tune::InUse::load(g, source);
        if let Some(w) = &self.wisdom.warning {
            self.message = Some(w.clone());
        }
    }

    /// Show what the session's view says: its tab and lens now, its stage once it arrives.
    fn apply_view(&mut self) {
        let v = &self.session.view;
        self.tab = v.tab;
        self.lens.on = v.lens;
        self.want_stage = v.stage;
    }

    /// The session as it stands, with what is on screen (saved on exit and by *Save session*).
    pub fn session_now(&self) -> Session {
        let mut s = self.session.clone().with_kernel_text();
        s.version = SESSION_VERSION;
        s.view = SessionView {
            stage: self.result.as_ref().map(|_| self.timeline.stage),
            tab: self.tab,
            lens: self.lens.on,
        };
        s
    }

    pub fn is_running(&self) -> bool {
        self.pending.is_some()
    }

    /// The device GPU runs use (eframe's, or a headless one after a device loss).
    pub fn gpu(&self) -> Option<&Gpu> {
        self.gpu.as_ref()
    }

    /// Run on this device from now on (tests hand the app a headless device they can destroy).
    pub fn use_gpu(&mut self, gpu: Gpu) {
        self.gpu = None;
        self.gpu = Some(gpu);
        self.gpu_error = None;
    }

    /// After a device loss: drop the lost device first (one device at a time), then open a headless
    /// one on the same adapter so the next run works. Returns the message to show.
    fn recreate_device(&mut self, why: &str) -> String {
        let name = self.gpu.as_ref().map(|g| g.info.name.clone());
        self.gpu = None;
        match Gpu::headless(name.as_deref()).or_else(|_| Gpu::headless(None)) {
            Ok(g) => {
                let msg = format!(
                    "GPU device lost ({why}); re-created a device on {} — run again",
                    g.adapter_name()
                );
                self.gpu = Some(g);
                self.gpu_error = None;
                msg
            }
            Err(e) => {
                let msg = format!("GPU device lost ({why}) and no new device: {e}");
                self.gpu_error = Some(msg.clone());
                msg
            }
        }
    }
}

impl eframe::App for StagewiseApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.poll();
        let ctx = ui.ctx().clone();
        // A link opened on the page while it was open (only its `#…` changed).
        #[cfg(target_arch = "wasm32")]
        if let Some(h) = crate::web::take_link() {
            match crate::link::Link::parse(&h) {
                Ok(l) => self.open_link(&l, &ctx),
                Err(e) => self.message = Some(e.to_string()),
            }
        }
        #[cfg(target_arch = "wasm32")]
        if let Some(mut t) = self.webtest.take() {
            t.step(self, &ctx);
            super::webtest::publish(&t.report(self));
            self.webtest = Some(t);
            ctx.request_repaint();
        }
        self.poll_io(&ctx);
        self.watch_kernel(&ctx);
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui));
        egui::Panel::top("menu").show(ui, |ui| self.menu(ui));
        if self.lessons.open {
            self.lessons_panel(ui);
        }
        self.selftest
            .show(&ctx, self.gpu.as_ref(), self.wisdom.loaded.as_deref());
        self.tune.busy = if self.perf.is_running() {
            Some("the performance lab's sweep")
        } else if self.selftest.is_running() {
            Some("the self-test")
        } else if self.is_running() || self.lens.is_recording() {
            Some("the run on screen")
        } else {
            None
        };
        self.tune.show(&ctx, self.gpu.as_ref(), &mut self.wisdom);
        self.perf.wisdom = self.wisdom.loaded.clone();
        self.lens.wisdom = self.wisdom.loaded.clone();
        if self.tab == Tab::Performance {
            let k = if self.in_kernel_room() {
                self.session.algo.clone()
            } else {
                self.kernel_options()
            };
            self.perf.workbench =
                matches!(&k, AlgoOptions::Kernel(o) if o.wgsl.is_some()).then_some(k);
            egui::CentralPanel::default().show(ui, |ui| self.perf.ui(ui, self.gpu.as_ref()));
            return;
        }
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.controls(ui));
            });
        if ctx.input(|i| i.key_pressed(egui::Key::F2)) {
            self.show_code = !self.show_code;
        }
        // The shown run's stages: none yet while its head waits for the input stage.
        let staged = |r: &&RunResult| !r.stages.is_empty();
        // The user's kernel that does not compile: its file, the failing line highlighted.
        let kernel_error = self
            .workbench
            .error
            .as_ref()
            .filter(|_| self.in_kernel_room());
        if let Some(e) = kernel_error.filter(|_| self.show_code) {
            egui::Panel::right("code")
                .resizable(true)
                .default_size(300.0)
                .show(ui, |ui| super::workbench::error_code(ui, e));
        } else if let Some(r) = self
            .result
            .as_ref()
            .filter(staged)
            .filter(|_| self.show_code)
        {
            let stage = self.timeline.stage;
            egui::Panel::right("code")
                .resizable(true)
                .default_size(300.0)
                .show(ui, |ui| super::code::show(ui, r, stage, self.trace));
        }
        // The memory lens records a whole run beside this one: once this one is whole.
        let whole = self.trace == TraceState::Complete;
        if let Some(r) = self.result.as_ref().filter(|_| whole) {
            // The memory lens: its toggle, and when on the current pass's accesses.
            let (stage, key) = (self.timeline.stage, self.result_key);
            let ran = self.ran_options();
            // Two ids: the open lens gets its own (larger) remembered height.
            egui::Panel::bottom(if self.lens.on { "lens" } else { "lens toggle" })
                .resizable(self.lens.on)
                .default_size(if self.lens.on { 420.0 } else { 24.0 })
                .min_size(if self.lens.on { 240.0 } else { 0.0 })
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        self.lens.ui(ui, self.gpu.as_ref(), &ran, r, stage, key)
                    })
                });
        }
        egui::CentralPanel::default().show(ui, |ui| {
            self.diagram_rect = Some(ui.max_rect());
            let mut stop = false;
            if let Some(r) = self.result.as_ref().filter(staged) {
                stop = self.progress(ui);
                let last = r.stages.len() - 1;
                self.timeline.ui(ui, last);
                ui.separator();
                views::show(ui, r, self.timeline.stage, self.result_key, &mut self.view);
                // The bmmc matrix editor's Run: its matrix on 0, 1, 2, … of 2^n elements.
                if let Some((o, log_n)) = self.view.bmmc.apply.take() {
                    self.session.algo = AlgoOptions::Bmmc(o);
                    self.session.log_n = log_n;
                    self.session.fill = Fill::Iota;
                    self.session.typed = false;
                    self.start_run(ui.ctx());
                }
            } else if self.is_running() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Running on the GPU…");
                });
            } else if self.trace != TraceState::Complete {
                self.progress(ui);
            } else {
                ui.label("Press Run to execute the algorithm on the GPU.");
            }
            if stop {
                self.stop_run();
            }
        });
        // A view asked for a run with new options (e.g. the FFT view's own controls).
        if let Some(a) = self.view.rerun.take() {
            self.session.algo = a;
            self.session.fill = Fill::Example;
            self.session.typed = false;
            if !self.is_running() {
                let ctx = ui.ctx().clone();
                self.start_run(&ctx);
            }
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STORAGE_KEY, &self.session_now());
        self.save_lessons(storage);
    }
}
