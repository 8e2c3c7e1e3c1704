//! The app shell: the controls on the left, the current algorithm's view in the centre, the
//! timeline under it, the adapter and GPU times in the status bar.

use super::timeline::Timeline;
use super::views::{self, ViewState};
use crate::algo::{self, AlgoOptions, RunRequest, RunResult};
use crate::data::{self, DType, Data, Fill};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use eframe::egui;
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{Receiver, channel};

/// Everything needed to reproduce a run: saved in sessions and restored on start.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    pub algo: AlgoOptions,
    pub variant: String,
    pub dtype: DType,
    pub fill: Fill,
    pub log_n: u32,
    pub seed: u64,
    /// Used when `typed` is true.
    pub text: String,
    pub typed: bool,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            algo: AlgoOptions::Bitrev(Default::default()),
            variant: "staged".into(),
            dtype: DType::U32,
            fill: Fill::Example,
            log_n: 4,
            seed: 1,
            text: String::new(),
            typed: false,
        }
    }
}

impl Session {
    pub fn load(path: &std::path::Path) -> Result<Session> {
        let s = std::fs::read_to_string(path)
            .map_err(|e| Error::Io(format!("cannot read session '{}': {e}", path.display())))?;
        serde_json::from_str(&s).map_err(|e| {
            Error::Input(format!(
                "session '{}': line {}: {e}",
                path.display(),
                e.line()
            ))
        })
    }

    /// The input this session describes.
    /// The element type runs use: the algorithm's own when it has one (the FFT's f32).
    pub fn dtype(&self) -> DType {
        self.algo.algo().fixed_dtype().unwrap_or(self.dtype)
    }

    pub fn input(&self) -> Result<Data> {
        let algo = self.algo.algo();
        let dtype = self.dtype();
        if self.typed {
            return data::parse_text(&self.text, dtype);
        }
        if self.fill == Fill::Example {
            return algo.example(dtype).ok_or_else(|| {
                Error::Input(format!(
                    "{} has no seed example: pick another input",
                    algo.info().name
                ))
            });
        }
        Ok(data::generate(
            self.fill,
            algo.default_len().unwrap_or(1usize << self.log_n),
            dtype,
            self.seed,
        ))
    }
}

const STORAGE_KEY: &str = "stagewise-session";

pub struct StagewiseApp {
    pub session: Session,
    gpu: Option<Gpu>,
    gpu_error: Option<String>,
    pub result: Option<RunResult>,
    /// Bumped per result, so cached textures are rebuilt.
    result_key: u64,
    pending: Option<Receiver<Result<RunResult>>>,
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
}

/// Results of file dialogs, which run off the UI thread.
enum IoMsg {
    Input(Result<Data>),
    Session(Result<Session>),
    Note(String),
    /// Where to save a PNG of the current diagram.
    DiagramPng(std::path::PathBuf),
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Stages,
    Performance,
}

impl StagewiseApp {
    pub fn new(cc: &eframe::CreationContext<'_>, session: Option<Session>) -> Self {
        let restored = cc
            .storage
            .and_then(|s| eframe::get_value::<Session>(s, STORAGE_KEY));
        let session = session.or(restored).unwrap_or_default();
        let (gpu, gpu_error) = match &cc.wgpu_render_state {
            Some(rs) => (Some(Gpu::from_render_state(rs)), None),
            None => (
                None,
                Some("no wgpu render state: Stagewise needs eframe's wgpu renderer".to_string()),
            ),
        };
        let mut app = StagewiseApp {
            session,
            gpu,
            gpu_error,
            result: None,
            result_key: 0,
            pending: None,
            message: None,
            timeline: Timeline::default(),
            view: ViewState::default(),
            tab: Tab::Stages,
            perf: Default::default(),
            io: channel(),
            show_help: false,
            show_code: true,
            diagram_rect: None,
        };
        app.start_run(&cc.egui_ctx);
        app
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

    /// Start a GPU run on a worker thread; the result arrives through a channel.
    pub fn start_run(&mut self, ctx: &egui::Context) {
        let mut note = None;
        if let Some(why) = self.gpu.as_ref().and_then(Gpu::check_lost) {
            note = Some(self.recreate_device(&why));
        }
        let Some(gpu) = self.gpu.clone() else {
            self.message = self.gpu_error.clone();
            return;
        };
        let s = self.session.clone();
        // The app always traces; an option this run would ignore is said, not dropped.
        let shape = algo::applies::RunShape {
            variant: &s.variant,
            trace: true,
            generated_input: !s.typed && s.fill == Fill::Example,
        };
        let input = match algo::applies::check(&s.algo, shape).and_then(|_| s.input()) {
            Ok(d) => d,
            Err(e) => {
                self.message = Some(e.to_string());
                return;
            }
        };
        let (tx, rx) = channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let algo = s.algo.algo();
            let r = algo.info().variant(Some(&s.variant)).and_then(|variant| {
                algo::run(
                    algo,
                    &gpu,
                    &RunRequest {
                        variant,
                        dtype: s.dtype(),
                        input,
                        trace: true,
                    },
                )
            });
            let _ = tx.send(r);
            ctx.request_repaint();
        });
        self.pending = Some(rx);
        self.message = note;
    }

    fn poll(&mut self) {
        let Some(rx) = &self.pending else { return };
        match rx.try_recv() {
            Ok(Ok(r)) => {
                let last = r.stages.len().saturating_sub(1);
                // Open on the first pass's result: the input row and stage 1 side by side.
                self.timeline.stage = 1.min(last);
                self.timeline.playing = false;
                if let Some(m) = &r.mismatch {
                    self.message = Some(format!("GPU differs from the CPU model: {m}"));
                }
                self.result = Some(r);
                self.result_key += 1;
                self.pending = None;
            }
            Ok(Err(e)) => {
                self.pending = None;
                // A lost device (reported by the run, or by the device-lost callback): replace it.
                let lost = match &e {
                    Error::DeviceLost(why) => Some(why.clone()),
                    _ => self.gpu.as_ref().and_then(Gpu::check_lost),
                };
                self.message = Some(match lost {
                    Some(why) => self.recreate_device(&why),
                    None => e.to_string(),
                });
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.message = Some("the GPU worker stopped unexpectedly".into());
                self.pending = None;
            }
        }
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let mut rerun = false;
        ui.heading("Stagewise");
        ui.label("Algorithm");
        let current = self.session.algo.name();
        egui::ComboBox::from_id_salt("algorithm")
            .selected_text(self.session.algo.algo().info().title)
            .show_ui(ui, |ui| {
                for a in AlgoOptions::all_defaults() {
                    let name = a.name();
                    let title = a.algo().info().title;
                    if ui
                        .selectable_label(name == current, title)
                        .on_hover_text(a.algo().info().summary)
                        .clicked()
                        && name != current
                    {
                        self.session.variant = a.algo().info().variants[0].name.to_string();
                        if a.algo().example(self.session.dtype).is_none()
                            && self.session.fill == Fill::Example
                        {
                            self.session.fill = Fill::Small;
                        }
                        self.session.algo = a;
                        rerun = true;
                    }
                }
            })
            .response
            .on_hover_text("Which algorithm to run on the GPU");
        let info = self.session.algo.algo().info();
        ui.label(info.summary);
        ui.add_space(6.0);
        ui.label("Variant");
        egui::ComboBox::from_id_salt("variant")
            .selected_text(self.session.variant.clone())
            .show_ui(ui, |ui| {
                for v in info.variants {
                    if ui
                        .selectable_label(self.session.variant == v.name, v.name)
                        .on_hover_text(v.summary)
                        .clicked()
                    {
                        self.session.variant = v.name.to_string();
                        rerun = true;
                    }
                }
            })
            .response
            .on_hover_text("The kernel or plan that runs");
        if let Ok(v) = info.variant(Some(&self.session.variant)) {
            ui.small(v.summary);
        }
        rerun |= super::params::edit(ui, &mut self.session.algo, "controls");
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            ui.label("Type");
            for d in info.dtypes {
                if ui
                    .selectable_label(self.session.dtype == *d, d.name())
                    .on_hover_text("Element type")
                    .clicked()
                {
                    self.session.dtype = *d;
                    rerun = true;
                }
            }
        });
        ui.add_space(6.0);
        ui.label("Input");
        let has_example = self
            .session
            .algo
            .algo()
            .example(self.session.dtype)
            .is_some();
        ui.horizontal_wrapped(|ui| {
            let mut choice = |ui: &mut egui::Ui, fill: Fill, label: &str, tip: &str| {
                let on = !self.session.typed && self.session.fill == fill;
                if ui.selectable_label(on, label).on_hover_text(tip).clicked() {
                    self.session.fill = fill;
                    self.session.typed = false;
                    rerun = true;
                }
            };
            if has_example {
                choice(
                    ui,
                    Fill::Example,
                    "seed example",
                    "The design note's example",
                );
            }
            choice(ui, Fill::Iota, "iota", "0, 1, 2, …");
            choice(
                ui,
                Fill::Small,
                "random",
                "Random values 0..100 from the seed",
            );
            choice(
                ui,
                Fill::Random,
                "random (full range)",
                "Random over the whole type's range",
            );
            choice(ui, Fill::Reverse, "reversed", "N−1, …, 1, 0");
            if ui
                .selectable_label(self.session.typed, "typed")
                .on_hover_text("Type or paste numbers below")
                .clicked()
            {
                self.session.typed = true;
                if self.session.text.is_empty() {
                    self.session.text = self
                        .result
                        .as_ref()
                        .map(|r| {
                            (0..r.input.len().min(64))
                                .map(|i| r.input.fmt_elem(i))
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_default();
                }
            }
        });
        if !self.session.typed && self.session.fill != Fill::Example {
            let max_log = self
                .gpu
                .as_ref()
                .map_or(20, |g| (g.max_binding_bytes() / 4).ilog2().min(20));
            ui.add(
                egui::Slider::new(&mut self.session.log_n, 0..=max_log)
                    .text("log2 N")
                    .custom_formatter(|v, _| format!("{v} (N = {})", 1u64 << v as u32)),
            )
            .on_hover_text("Number of elements, as a power of two");
            if matches!(self.session.fill, Fill::Small | Fill::Random) {
                ui.add(egui::DragValue::new(&mut self.session.seed).prefix("seed "))
                    .on_hover_text("Random seed: the same seed gives the same input");
            }
        }
        if self.session.typed {
            ui.add(
                egui::TextEdit::multiline(&mut self.session.text)
                    .desired_rows(3)
                    .hint_text("numbers, e.g. 3 1 2"),
            )
            .on_hover_text("Numbers separated by spaces, commas or newlines, or a JSON array");
        }
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            let run = ui
                .add_enabled(!self.is_running(), egui::Button::new("Run on GPU"))
                .on_hover_text(
                    "Run every pass on the GPU and read the buffers back after each (Ctrl+R)",
                );
            if run.clicked() || ctx.input(|i| i.modifiers.command && i.key_pressed(egui::Key::R)) {
                rerun = true;
            }
            if self.is_running() {
                ui.spinner();
            }
        });
        if rerun && !self.is_running() {
            self.start_run(&ctx);
        }
        if let Some(r) = &self.result {
            ui.separator();
            ui.strong("Last run");
            ui.label(format!(
                "{} / {} · N = {} · {}",
                r.algorithm, r.variant, r.n, r.dtype
            ));
            let (txt, col) = if r.verified {
                (
                    "OK: GPU output equals the CPU model",
                    egui::Color32::from_rgb(80, 180, 80),
                )
            } else {
                (
                    "MISMATCH: GPU output differs from the CPU model",
                    egui::Color32::from_rgb(220, 80, 80),
                )
            };
            ui.colored_label(col, txt);
            ui.label("GPU time per pass:");
            egui::ScrollArea::vertical()
                .id_salt("passes")
                .max_height(220.0)
                .show(ui, |ui| {
                    egui::Grid::new("pass-times").striped(true).show(ui, |ui| {
                        for p in &r.passes {
                            ui.small(&p.label);
                            ui.small(
                                p.gpu_ms.map_or("unavailable".into(), |t| {
                                    format!("{:.3} µs", t * 1000.0)
                                }),
                            );
                            ui.end_row();
                        }
                    });
                });
        }
    }

    fn status_bar(&self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            match &self.gpu {
                Some(g) => {
                    ui.label(format!("GPU: {}", g.adapter_name()));
                    if !g.has_timestamps() {
                        ui.label("· timestamps unavailable");
                    }
                }
                None => {
                    ui.label("GPU: none");
                }
            }
            if let Some(total) = self.result.as_ref().and_then(|r| r.total_gpu_ms()) {
                ui.separator();
                ui.label(format!("last run: {:.3} ms on the GPU", total));
            }
            if let Some(m) = &self.message {
                ui.separator();
                ui.colored_label(egui::Color32::from_rgb(230, 90, 90), m);
            }
        });
    }
}

impl StagewiseApp {
    /// Run a file dialog on its own thread; `then` turns the chosen path into a message.
    fn dialog(
        &self,
        ctx: &egui::Context,
        save: bool,
        name: &str,
        filters: &'static [(&'static str, &'static [&'static str])],
        then: impl FnOnce(std::path::PathBuf) -> IoMsg + Send + 'static,
    ) {
        let tx = self.io.0.clone();
        let ctx = ctx.clone();
        let name = name.to_string();
        std::thread::spawn(move || {
            let mut d = rfd::FileDialog::new().set_file_name(&name);
            for (label, exts) in filters {
                d = d.add_filter(*label, exts);
            }
            let picked = if save { d.save_file() } else { d.pick_file() };
            if let Some(p) = picked {
                let _ = tx.send(then(p));
                ctx.request_repaint();
            }
        });
    }

    fn open_input(&self, ctx: &egui::Context) {
        let dtype = self.session.dtype;
        self.dialog(
            ctx,
            false,
            "",
            &[("data", &["txt", "csv", "json", "npy"])],
            move |p| IoMsg::Input(data::read_input(&p.to_string_lossy(), dtype)),
        );
    }

    fn save_session(&self, ctx: &egui::Context) {
        let s = self.session.clone();
        self.dialog(
            ctx,
            true,
            "session.json",
            &[("session", &["json"])],
            move |p| {
                IoMsg::Note(
                    match serde_json::to_string_pretty(&s)
                        .map_err(|e| e.to_string())
                        .and_then(|t| std::fs::write(&p, t).map_err(|e| e.to_string()))
                    {
                        Ok(()) => format!("saved session {}", p.display()),
                        Err(e) => format!("cannot save session {}: {e}", p.display()),
                    },
                )
            },
        );
    }

    fn menu(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        egui::MenuBar::new().ui(ui, |ui| {
            let file = ui.menu_button("File", |ui| {
                if ui
                    .button("Open input…")
                    .on_hover_text("Text, CSV, JSON or .npy (Ctrl+O)")
                    .clicked()
                {
                    self.open_input(&ctx);
                }
                ui.add_enabled_ui(self.result.is_some(), |ui| {
                    if ui
                        .button("Save output…")
                        .on_hover_text("The output as .npy, .json or text")
                        .clicked()
                        && let Some(r) = &self.result
                    {
                        let (d, j) = (r.output.clone(), r.output_json.clone());
                        self.dialog(
                            &ctx,
                            true,
                            "output.npy",
                            &[("data", &["npy", "json", "txt"])],
                            move |p| {
                                IoMsg::Note(
                                    crate::export::save_output(&d, j.as_ref(), &p).map_or_else(
                                        |e| e.to_string(),
                                        |_| format!("saved {}", p.display()),
                                    ),
                                )
                            },
                        );
                    }
                    if ui
                        .button("Save diagram as PNG…")
                        .on_hover_text("The current stage's diagram, as shown")
                        .clicked()
                    {
                        self.dialog(
                            &ctx,
                            true,
                            "diagram.png",
                            &[("PNG", &["png"])],
                            IoMsg::DiagramPng,
                        );
                    }
                    if ui
                        .button("Export trace…")
                        .on_hover_text("Every stage as JSON or CSV")
                        .clicked()
                        && let Some(r) = &self.result
                    {
                        let r = r.clone();
                        self.dialog(
                            &ctx,
                            true,
                            "trace.json",
                            &[("trace", &["json", "csv"])],
                            move |p| {
                                IoMsg::Note(crate::export::save_trace(&r, &p).map_or_else(
                                    |e| e.to_string(),
                                    |_| format!("saved {}", p.display()),
                                ))
                            },
                        );
                    }
                });
                ui.separator();
                if ui
                    .button("Save session…")
                    .on_hover_text("Algorithm, variant, parameters and input (Ctrl+S)")
                    .clicked()
                {
                    self.save_session(&ctx);
                }
                if ui
                    .button("Open session…")
                    .on_hover_text("Restore a saved session")
                    .clicked()
                {
                    self.dialog(&ctx, false, "", &[("session", &["json"])], |p| {
                        IoMsg::Session(Session::load(&p))
                    });
                }
            });
            file.response.on_hover_text(
                "Open input data, save the output, the diagram, the trace or the session",
            );
            let view = ui.menu_button("View", |ui| {
                if ui
                    .button("Dark / light theme")
                    .on_hover_text("Switch the colour theme")
                    .clicked()
                {
                    let dark = ui.visuals().dark_mode;
                    ctx.set_visuals(if dark {
                        egui::Visuals::light()
                    } else {
                        egui::Visuals::dark()
                    });
                }
                ui.checkbox(&mut self.show_code, "What happened + code panel")
                    .on_hover_text("Narration and the WGSL of the current stage (F2)");
                if ui
                    .button("Keyboard shortcuts (F1)")
                    .on_hover_text("Show the shortcuts")
                    .clicked()
                {
                    self.show_help = true;
                }
            });
            view.response
                .on_hover_text("Theme, the narration and code panel, keyboard shortcuts");
            ui.separator();
            ui.selectable_value(&mut self.tab, Tab::Stages, "Stages")
                .on_hover_text("Run stage by stage and see every pass");
            ui.selectable_value(&mut self.tab, Tab::Performance, "Performance")
                .on_hover_text("Time kernels against the copy roofline");
        });
        if !ctx.egui_wants_keyboard_input() {
            let (open, save, help) = ctx.input(|i| {
                (
                    i.modifiers.command && i.key_pressed(egui::Key::O),
                    i.modifiers.command && i.key_pressed(egui::Key::S),
                    i.key_pressed(egui::Key::F1),
                )
            });
            if open {
                self.open_input(&ctx);
            }
            if save {
                self.save_session(&ctx);
            }
            if help {
                self.show_help = !self.show_help;
            }
        }
        if self.show_help {
            let mut open = true;
            egui::Window::new("Keyboard shortcuts")
                .open(&mut open)
                .collapsible(false)
                .show(&ctx, |ui| {
                    egui::Grid::new("help").show(ui, |ui| {
                        for (k, what) in HELP {
                            ui.strong(*k);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
                });
            self.show_help = open;
        }
    }

    /// Screenshot the window, crop it to the central view and save it (in the callback, off the frame).
    fn shoot_diagram(&self, ctx: &egui::Context, path: std::path::PathBuf) {
        let Some(rect) = self.diagram_rect else {
            return;
        };
        let tx = self.io.0.clone();
        super::save_region_png(ctx, rect, path, move |msg| {
            let _ = tx.send(IoMsg::Note(msg));
        });
    }

    fn poll_io(&mut self, ctx: &egui::Context) {
        let msgs: Vec<IoMsg> = self.io.1.try_iter().collect();
        for m in msgs {
            match m {
                IoMsg::Input(Ok(d)) => {
                    self.session.typed = true;
                    self.session.dtype = d.dtype;
                    self.session.text = (0..d.len())
                        .map(|i| d.fmt_elem(i))
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.start_run(ctx);
                }
                IoMsg::Session(Ok(s)) => {
                    self.session = s;
                    self.start_run(ctx);
                }
                IoMsg::Input(Err(e)) | IoMsg::Session(Err(e)) => self.message = Some(e.to_string()),
                IoMsg::Note(n) => self.message = Some(n),
                IoMsg::DiagramPng(p) => self.shoot_diagram(ctx, p),
            }
        }
    }
}

impl eframe::App for StagewiseApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.poll();
        let ctx = ui.ctx().clone();
        self.poll_io(&ctx);
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui));
        egui::Panel::top("menu").show(ui, |ui| self.menu(ui));
        if self.tab == Tab::Performance {
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
        if let Some(r) = self.result.as_ref().filter(|_| self.show_code) {
            let stage = self.timeline.stage;
            egui::Panel::right("code")
                .resizable(true)
                .default_size(300.0)
                .show(ui, |ui| super::code::show(ui, r, stage));
        }
        egui::CentralPanel::default().show(ui, |ui| {
            self.diagram_rect = Some(ui.max_rect());
            if let Some(r) = &self.result {
                let last = r.stages.len().saturating_sub(1);
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
            } else {
                ui.label("Press Run to execute the algorithm on the GPU.");
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
        eframe::set_value(storage, STORAGE_KEY, &self.session);
    }
}
