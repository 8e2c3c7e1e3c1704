//! The room "Your kernel" in the app: its parameters panel (the CLI's `run kernel` options), the
//! watch that re-runs the file on save, the Exercises menu, and the check after a run.

use super::*;
use crate::algo::kernel::{self, exercise::Exercise};
use crate::ui::workbench::{self, EXPECT_OPS, Workbench};
use std::path::PathBuf;

pub(super) const RED: egui::Color32 = egui::Color32::from_rgb(230, 90, 90);
/// A run longer than this is said to be long (seconds).
const LONG_RUN_S: u64 = 5;
pub(super) const GREEN: egui::Color32 = egui::Color32::from_rgb(80, 180, 80);

fn entry_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(String::from)
        .collect()
}

fn param_list(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn path_of(s: &str) -> Option<PathBuf> {
    let t = s.trim();
    (!t.is_empty()).then(|| PathBuf::from(t))
}

/// The options of `stagewise run kernel` with nothing given: the CLI's defaults.
fn kernel_defaults() -> kernel::Options {
    let argv = ["stagewise", "run", "kernel"];
    let parsed = crate::cli::parse_words(argv)
        .ok()
        .and_then(|c| match c.cmd {
            Some(crate::cli::Cmd::Run(a)) => match a.options() {
                Some(AlgoOptions::Kernel(o)) => Some(o),
                _ => None,
            },
            _ => None,
        });
    parsed.unwrap_or_else(|| kernel::Options {
        passes: "1".into(),
        items_per_thread: 1,
        ..Default::default()
    })
}

/// A text or number typed and confirmed (Enter), or a number dragged and let go: run it.
fn committed(ui: &egui::Ui, r: &egui::Response) -> bool {
    (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter))) || r.drag_stopped()
}

/// A labelled row of the parameters grid; the label names the control for accessibility.
fn row(
    ui: &mut egui::Ui,
    label: &str,
    tip: &str,
    add: impl FnOnce(&mut egui::Ui) -> egui::Response,
) -> egui::Response {
    let l = ui.label(label).on_hover_text(tip);
    let r = add(ui).labelled_by(l.id).on_hover_text(tip);
    ui.end_row();
    r
}

impl StagewiseApp {
    /// Whether the session is the room "Your kernel".
    pub fn in_kernel_room(&self) -> bool {
        matches!(self.session.algo, AlgoOptions::Kernel(_))
    }

    /// The room's options (the last ones used when the session is in another room).
    pub(super) fn kernel_options(&self) -> AlgoOptions {
        if let Some(o) = &self.workbench.kept {
            return AlgoOptions::Kernel(o.clone());
        }
        let mut o = kernel_defaults();
        if let Some(e) = &self.workbench.exercise {
            o.wgsl = Some(e.file.clone());
            o.expect = Some(e.exercise.expect.clone());
        } else {
            o.wgsl = path_of(&self.workbench.path);
        }
        if cfg!(target_arch = "wasm32") && o.source.is_none() {
            // The browser has no files: the kernel is the editor's text.
            o.wgsl = Some("kernel.wgsl".into());
            o.source = Some(workbench::TEMPLATE.to_string());
        }
        AlgoOptions::Kernel(o)
    }

    /// Run the kernel file when it changed on disk (its watch reads it every
    /// [`workbench::POLL`]); a change during a run runs once that one is done.
    pub(super) fn watch_kernel(&mut self, ctx: &egui::Context) {
        let AlgoOptions::Kernel(o) = &self.session.algo else {
            return;
        };
        // A run asked for during the tuning: now that it is over.
        if self.workbench.after_tuning && !self.is_running() && !self.workbench.tune.is_running() {
            self.workbench.after_tuning = false;
            self.start_run(ctx);
            return;
        }
        if o.source.is_some() {
            // The editor's text (the browser): runs on Run or Ctrl+Enter, no file to watch.
            return;
        }
        let Some(path) = o.wgsl.clone() else {
            return;
        };
        if self.workbench.poll(&path, ctx) {
            self.workbench.due = true;
        }
        // A run during a tuning would be timed with it: the tuning goes first.
        if self.workbench.due && !self.is_running() && !self.workbench.tune.is_running() {
            self.workbench.due = false;
            self.workbench.reruns += 1;
            self.start_run(ctx);
        }
    }

    /// The parameters panel of the room; true when a run is asked for.
    pub(super) fn kernel_controls(&mut self, ui: &mut egui::Ui) -> bool {
        let ctx = ui.ctx().clone();
        let mut rerun = false;
        let mut open = false;
        let Session { algo, n, .. } = &mut self.session;
        let AlgoOptions::Kernel(o) = algo else {
            return false;
        };
        let wb: &mut Workbench = &mut self.workbench;
        // The typed texts follow the options when these change elsewhere (an exercise, a session).
        if path_of(&wb.path) != o.wgsl {
            wb.path = o
                .wgsl
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string());
        }
        if entry_list(&wb.entry) != o.entry {
            wb.entry = o.entry.join(",");
        }
        if param_list(&wb.params) != o.params {
            wb.params = o.params.join(" ");
        }
        if param_list(&wb.overrides) != o.overrides {
            wb.overrides = o.overrides.join(" ");
        }
        ui.add_space(4.0);
        if o.source.is_some() {
            let (run, open_it) = super::kernel_editor::editor(ui, o, wb);
            rerun |= run;
            open |= open_it;
        } else {
            let file_label = ui.label("Kernel file (.wgsl)");
            ui.horizontal(|ui| {
                let r = ui
                    .add(
                        egui::TextEdit::singleline(&mut wb.path)
                            .desired_width(190.0)
                            .hint_text("path/to/kernel.wgsl"),
                    )
                    .labelled_by(file_label.id)
                    .on_hover_text(
                        "Your WGSL file (Enter runs it); the app watches it and re-runs on save",
                    );
                if r.changed() {
                    o.wgsl = path_of(&wb.path);
                }
                if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                    rerun = true;
                }
                open = ui
                    .button("Open…")
                    .on_hover_text(
                        "Pick a .wgsl file; edit it in your own editor, saving re-runs it",
                    )
                    .clicked();
            });
            ui.small(
                "Watched: every save runs it again. Bindings: src, dst, scratch, params (docs/CLI.md).",
            );
        }
        egui::Grid::new("kernel-options")
            .num_columns(2)
            .show(ui, |ui| {
                let tip = crate::ui::params::option_help(Algo::Kernel, "expect");
                let l = ui.label("expect").on_hover_text(&tip);
                ui.horizontal(|ui| {
                    let mut s = o.expect.clone().unwrap_or_default();
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut s)
                                .desired_width(120.0)
                                .hint_text("(not checked)"),
                        )
                        .labelled_by(l.id)
                        .on_hover_text(&tip);
                    if r.changed() {
                        o.expect = (!s.trim().is_empty()).then_some(s);
                    }
                    rerun |= committed(ui, &r);
                    egui::ComboBox::from_id_salt("kernel-expect-ops")
                        .selected_text("ops")
                        .width(50.0)
                        .show_ui(ui, |ui| {
                            for (op, what) in EXPECT_OPS {
                                let on = o.expect.as_deref() == Some(*op);
                                if ui.selectable_label(on, *op).on_hover_text(*what).clicked() {
                                    o.expect = Some(op.to_string());
                                    rerun = true;
                                }
                            }
                            if ui
                                .selectable_label(o.expect.is_none(), "(none)")
                                .on_hover_text("Run without a check")
                                .clicked()
                            {
                                o.expect = None;
                                rerun = true;
                            }
                        })
                        .response
                        .on_hover_text("The rooms' CPU models the output can be checked against");
                });
                ui.end_row();
                let r = row(
                    ui,
                    "entry",
                    &crate::ui::params::option_help(Algo::Kernel, "entry"),
                    |ui| {
                        ui.add(
                            egui::TextEdit::singleline(&mut wb.entry)
                                .desired_width(160.0)
                                .hint_text("every one, in file order"),
                        )
                    },
                );
                if r.changed() {
                    o.entry = entry_list(&wb.entry);
                }
                rerun |= committed(ui, &r);
                let r = row(
                    ui,
                    "passes",
                    &crate::ui::params::option_help(Algo::Kernel, "passes"),
                    |ui| ui.add(egui::TextEdit::singleline(&mut o.passes).desired_width(60.0)),
                );
                rerun |= committed(ui, &r);
                let r = row(
                    ui,
                    "items per thread",
                    &crate::ui::params::option_help(Algo::Kernel, "items_per_thread"),
                    |ui| ui.add(egui::DragValue::new(&mut o.items_per_thread).range(1..=65536)),
                );
                rerun |= committed(ui, &r);
                let mut words = o.scratch.unwrap_or(0);
                let r = row(
                    ui,
                    "scratch words",
                    "Words of the zeroed `scratch` binding (0: the kernel declares none)",
                    |ui| {
                        ui.add(
                            egui::DragValue::new(&mut words)
                                .range(0..=kernel::options::MAX_SCRATCH),
                        )
                    },
                );
                if r.changed() {
                    o.scratch = (words > 0).then_some(words);
                }
                rerun |= committed(ui, &r);
                let r = row(
                    ui,
                    "params",
                    &crate::ui::params::option_help(Algo::Kernel, "params"),
                    |ui| {
                        ui.add(
                            egui::TextEdit::singleline(&mut wb.params)
                                .desired_width(160.0)
                                .hint_text("NAME=VALUE …"),
                        )
                    },
                );
                if r.changed() {
                    o.params = param_list(&wb.params);
                }
                rerun |= committed(ui, &r);
                let r = row(
                    ui,
                    "overrides",
                    &crate::ui::params::option_help(Algo::Kernel, "overrides"),
                    |ui| {
                        ui.add(
                            egui::TextEdit::singleline(&mut wb.overrides)
                                .desired_width(160.0)
                                .hint_text("NAME=VALUE … (defaults)"),
                        )
                    },
                );
                if r.changed() {
                    o.overrides = param_list(&wb.overrides);
                }
                rerun |= committed(ui, &r);
                let mut elems = n.unwrap_or(1024);
                let r = row(
                    ui,
                    "elements (N)",
                    "Input elements (words; vec2<f32> kernels take two words an element)",
                    |ui| ui.add(egui::DragValue::new(&mut elems).range(1..=1usize << 26)),
                );
                if r.changed() || n.is_none() {
                    *n = Some(elems);
                }
                rerun |= committed(ui, &r);
            });
        ui.small("The element type is the kernel's: the type of its src and dst arrays.");
        if open {
            #[cfg(not(target_arch = "wasm32"))]
            self.dialog(&ctx, false, "", &[("WGSL", &["wgsl"])], IoMsg::Kernel);
            #[cfg(target_arch = "wasm32")]
            crate::ui::files::open(
                &ctx,
                &[("WGSL", &["wgsl"])],
                self.io.0.clone(),
                |name, bytes| IoMsg::KernelText(name, String::from_utf8_lossy(&bytes).into_owned()),
            );
        }
        rerun |= self.tune_section(ui, &ctx);
        self.exercise_panel(ui, &ctx);
        rerun
    }

    /// The open exercise: its statement, the copy's place, Reset.
    fn exercise_panel(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        let Some(ex) = self.workbench.exercise.clone() else {
            return;
        };
        ui.separator();
        let text = |s: &str| workbench::drawable(ctx, s, false);
        ui.strong(format!("Exercise: {}", text(&ex.exercise.title)));
        egui::ScrollArea::vertical()
            .id_salt("statement")
            .max_height(180.0)
            .show(ui, |ui| ui.label(text(&ex.statement)));
        ui.small(format!("Goal: {}", text(&ex.exercise.goal)));
        if matches!(&self.session.algo, AlgoOptions::Kernel(o) if o.source.is_none()) {
            ui.small(format!("Your copy: {}", ex.file.display()));
        }
        if ui
            .button("Reset to the starter")
            .on_hover_text("Overwrite your copy with the exercise's starter kernel")
            .clicked()
        {
            self.open_exercise(&ex.exercise, true, ctx);
        }
    }

    /// The room's check of the shown run (or its compile error), under "Last run".
    pub(super) fn kernel_check(&self, ui: &mut egui::Ui) {
        if !self.in_kernel_room() {
            return;
        }
        let wb = &self.workbench;
        if let Some(t) = wb.started.filter(|_| self.is_running()) {
            let s = t.elapsed().as_secs();
            if s >= LONG_RUN_S {
                // Passes are bounded (at most options::MAX_PASSES an entry point); a loop inside
                // one is not: wgpu has no way to stop a dispatch. Say what the GPU does.
                ui.colored_label(
                    egui::Color32::from_rgb(230, 150, 60),
                    format!(
                        "running for {s} s: a kernel that never ends holds the GPU until the \
                         driver resets it (where the driver has a watchdog); the lost device is \
                         then reported and a new one made"
                    ),
                );
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_secs(1));
            }
        }
        if let Some(e) = &wb.error {
            ui.colored_label(
                RED,
                format!(
                    "compile error at line {}, column {} (the code panel shows it); the result below is the last good one",
                    e.line, e.col
                ),
            );
        } else if let Some(f) = &wb.failure {
            ui.colored_label(RED, workbench::drawable(ui.ctx(), f, false));
        }
        self.kernel_wisdom_line(ui);
        let Some(r) = self.result.as_ref().filter(|r| r.algorithm == Algo::Kernel) else {
            return;
        };
        if self.trace != TraceState::Complete {
            return;
        }
        let (txt, ok) = workbench::verdict(r);
        ui.colored_label(if ok { GREEN } else { RED }, txt);
        if let Some(ex) = &wb.exercise {
            let lens = self.lens.report_of(self.result_key);
            if r.verified && ex.exercise.lens_max_sectors.is_some() && self.lens.is_recording() {
                ui.label("goal: the memory lens (warp 32) is measuring the accesses…");
            } else {
                let (txt, ok) = workbench::goal_line(&ex.exercise, r, lens);
                let txt = workbench::drawable(ui.ctx(), &txt, false);
                ui.colored_label(if ok { GREEN } else { RED }, txt);
            }
        }
        if wb.reruns > 0 {
            ui.small(format!("re-ran on save {} time(s)", wb.reruns));
        }
    }

    /// Help the user's file `p` into the room and run it.
    pub(super) fn open_kernel(&mut self, p: PathBuf, ctx: &egui::Context) {
        let mut o = match &self.session.algo {
            AlgoOptions::Kernel(o) => o.clone(),
            _ => kernel_defaults(),
        };
        o.wgsl = Some(p);
        // The file is the kernel now, not a session's editor text.
        o.source = None;
        self.workbench.exercise = None;
        self.workbench.rewatch();
        self.enter_kernel_room(o);
        self.start_run(ctx);
    }

    /// A kernel's text (the browser's file picker) into the room's editor, and run it.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(super) fn open_kernel_text(&mut self, name: String, text: String, ctx: &egui::Context) {
        let mut o = match &self.session.algo {
            AlgoOptions::Kernel(o) => o.clone(),
            _ => kernel_defaults(),
        };
        o.wgsl = Some(name.into());
        o.source = Some(text);
        self.workbench.exercise = None;
        self.enter_kernel_room(o);
        self.start_run(ctx);
    }

    fn enter_kernel_room(&mut self, o: kernel::Options) {
        self.session.algo = AlgoOptions::Kernel(o);
        self.session.variant = "wgsl".into();
        self.session.typed = false;
        if self.session.fill == Fill::Example {
            self.session.fill = Fill::Small;
        }
        self.tab = Tab::Stages;
    }

    /// The Exercises menu: every exercise of assets/exercises.
    pub(super) fn exercises_menu(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        // The folder where there is one (natively), else the copies built in (the browser).
        let list = match workbench::exercises_root() {
            Some(root) => Exercise::all(&root),
            None => Exercise::shipped(),
        };
        let list = match list {
            Ok(l) => l,
            Err(e) => {
                ui.colored_label(RED, e.to_string());
                return;
            }
        };
        for ex in list {
            let text = |s: &str| workbench::drawable(ctx, s, false);
            if ui
                .button(text(&ex.title))
                .on_hover_text(format!("{}: goal: {}", ex.name(), text(&ex.goal)))
                .clicked()
            {
                self.open_exercise(&ex, false, ctx);
                ui.close();
            }
        }
        ui.separator();
        if cfg!(target_arch = "wasm32") {
            ui.small("Opening one puts its starter in the editor (your edits stay until Reset)");
        } else {
            ui.small(format!(
                "Opening one copies its starter to {} (your copy stays until Reset)",
                self.workbench.home().display()
            ));
        }
    }

    /// Open `ex`: its starter copied to a writable folder (kept if there, unless `reset`), the
    /// room's options from the exercise's arguments (parsed as the CLI parses them), and run it.
    pub fn open_exercise(&mut self, ex: &Exercise, reset: bool, ctx: &egui::Context) {
        // Natively a copy in a folder the user's editor edits; in the browser the editor's text.
        let opened = if cfg!(target_arch = "wasm32") {
            self.workbench
                .open_text(ex, reset)
                .map(|t| (PathBuf::from(ex.name()).join("kernel.wgsl"), Some(t)))
        } else {
            self.workbench.open(ex, reset).map(|f| (f, None))
        };
        let (file, text) = match opened {
            Ok(f) => f,
            Err(e) => {
                self.message = Some(e.to_string());
                return;
            }
        };
        let mut argv: Vec<String> = ["stagewise", "run", "kernel", "--wgsl"]
            .map(String::from)
            .to_vec();
        argv.push(file.display().to_string());
        argv.extend(["--expect".to_string(), ex.expect.clone()]);
        argv.extend(ex.args.iter().cloned());
        let args = match crate::cli::parse_words(&argv) {
            Ok(crate::cli::Cli {
                cmd: Some(crate::cli::Cmd::Run(a)),
                ..
            }) => a,
            Ok(_) => return,
            Err(first) => {
                self.message = Some(format!(
                    "exercise '{}': {}",
                    ex.name(),
                    first.lines().next().unwrap_or("")
                ));
                return;
            }
        };
        let Some(AlgoOptions::Kernel(mut o)) = args.options() else {
            return;
        };
        let in_editor = text.is_some();
        o.source = text;
        self.enter_kernel_room(o);
        self.session.n = args.n;
        self.session.fill = args.fill.unwrap_or(Fill::Random);
        self.session.seed = args.seed;
        self.session.dtype = args.dtype.unwrap_or_default();
        if ex.lens_max_sectors.is_some() {
            // The goal is measured at warp 32, as tests/kernel.rs measures the solutions.
            self.lens.on = true;
            self.lens.warp = 32;
        }
        self.workbench.reruns = 0;
        self.start_run(ctx);
        self.message = Some(if in_editor {
            format!(
                "exercise '{}': edit it in the editor; Run (Ctrl+Enter) checks it",
                ex.name()
            )
        } else {
            format!(
                "exercise '{}': edit {} in your editor; every save runs it again",
                ex.name(),
                file.display()
            )
        });
    }
}
