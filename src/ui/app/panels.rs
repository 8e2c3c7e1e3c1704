//! The app's panels: the controls on the left, the status bar and the menu.

use super::*;

impl StagewiseApp {
    pub(super) fn controls(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let mut rerun = false;
        ui.heading("Stagewise");
        let algo_label = ui.label("Algorithm");
        let current = self.session.algo.id();
        let kernel_info = AlgoOptions::Kernel(Default::default()).algo().info();
        egui::ComboBox::from_id_salt("algorithm")
            .selected_text(self.session.algo.algo().info().title)
            .show_ui(ui, |ui| {
                for a in AlgoOptions::all_defaults() {
                    let id = a.id();
                    let title = a.algo().info().title;
                    if ui
                        .selectable_label(id == current, title)
                        .on_hover_text(a.algo().info().summary)
                        .clicked()
                        && id != current
                    {
                        self.session.variant = a.algo().info().variants[0].name.to_string();
                        if a.algo().example(self.session.dtype).is_none()
                            && self.session.fill == Fill::Example
                        {
                            self.session.fill = Fill::Small;
                        }
                        if let AlgoOptions::Kernel(o) = &self.session.algo {
                            // Back in the room, its options are as they were left.
                            self.workbench.kept = Some(o.clone());
                        }
                        self.session.algo = a;
                        rerun = true;
                    }
                }
                // The workbench: the user's own kernel (no default one: it runs when it has a file).
                let title = kernel_info.title;
                if ui
                    .selectable_label(current == Algo::Kernel, title)
                    .on_hover_text(kernel_info.summary)
                    .clicked()
                    && current != Algo::Kernel
                {
                    let o = self.kernel_options();
                    rerun = matches!(&o, AlgoOptions::Kernel(k) if k.wgsl.is_some());
                    self.session.variant = kernel_info.variants[0].name.to_string();
                    if self.session.fill == Fill::Example {
                        self.session.fill = Fill::Small;
                    }
                    self.session.algo = o;
                }
            })
            .response
            .labelled_by(algo_label.id)
            .on_hover_text("Which algorithm to run on the GPU");
        let info = self.session.algo.algo().info();
        ui.label(info.summary);
        let kernel_room = self.in_kernel_room();
        if kernel_room {
            rerun |= self.kernel_controls(ui);
        } else {
            rerun |= self.room_controls(ui);
        }
        self.input_controls(ui, &mut rerun);
        ui.add_space(8.0);
        // The room's tuning times on this GPU: a run waits for it (see run_may_start).
        let tuning = kernel_room && self.workbench.tune.is_running();
        ui.horizontal(|ui| {
            let run = ui.add_enabled(
                !self.is_running() && !tuning,
                egui::Button::new("Run on GPU"),
            );
            let run = if tuning {
                run.on_hover_text(kernel_wisdom::WAIT_FOR_TUNING)
                    .on_disabled_hover_text(kernel_wisdom::WAIT_FOR_TUNING)
            } else {
                run.on_hover_text(
                    "Run every pass on the GPU and read the buffers back after each (Ctrl+R)",
                )
            };
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
        if self.result.is_none() {
            self.kernel_check(ui);
        }
        if let Some(r) = &self.result {
            ui.separator();
            ui.strong("Last run");
            ui.label(format!(
                "{} / {} · N = {} · {}",
                r.algorithm, r.variant, r.n, r.dtype
            ));
            let (txt, col) = match self.trace {
                TraceState::Arriving { .. } => (
                    "Streaming: checked stage by stage, verdict at the end".into(),
                    ui.visuals().text_color(),
                ),
                TraceState::Stopped { .. } => (
                    "INCOMPLETE: the run stopped before its output".into(),
                    egui::Color32::from_rgb(230, 150, 60),
                ),
                TraceState::Complete if r.verified => (
                    "OK: GPU output equals the CPU model".to_string(),
                    egui::Color32::from_rgb(80, 180, 80),
                ),
                TraceState::Complete => (
                    "MISMATCH: GPU output differs from the CPU model".into(),
                    egui::Color32::from_rgb(220, 80, 80),
                ),
            };
            if kernel_room {
                // The user's kernel: verified, wrong where, or unchecked; an exercise's goal.
                self.kernel_check(ui);
            } else {
                ui.colored_label(col, txt);
            }
            if let Some(arrived) = self.arrived() {
                ui.label(arrived);
            }
            ui.label("GPU time per pass:");
            egui::ScrollArea::vertical()
                .id_salt("passes")
                .max_height(220.0)
                .show(ui, |ui| {
                    egui::Grid::new("pass-times").striped(true).show(ui, |ui| {
                        for p in &r.passes {
                            ui.small(&p.label);
                            ui.small(match (p.gpu_ms, self.trace) {
                                (Some(t), _) => format!("{:.3} µs", t * 1000.0),
                                (None, TraceState::Complete) => "unavailable".into(),
                                // The times come with the result.
                                (None, _) => "…".into(),
                            });
                            ui.end_row();
                        }
                    });
                });
            let missing = r.passes.iter().any(|p| p.gpu_ms.is_none());
            if missing
                && self.trace == TraceState::Complete
                && let Some(why) = self.gpu.as_ref().and_then(no_pass_times)
            {
                ui.small(why);
            }
        }
    }

    /// A built-in room's variant, options and element type; true when a run is asked for.
    fn room_controls(&mut self, ui: &mut egui::Ui) -> bool {
        let mut rerun = false;
        let info = self.session.algo.algo().info();
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
        rerun |= crate::ui::params::edit(ui, &mut self.session.algo, "controls");
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
        rerun
    }

    /// The input: generated (with its size) or typed.
    fn input_controls(&mut self, ui: &mut egui::Ui, rerun: &mut bool) {
        let rerun_flag = rerun;
        let mut rerun = false;
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
            // The user's kernel takes any N (its row in the kernel's options).
            if !self.in_kernel_room() {
                ui.add(
                    egui::Slider::new(&mut self.session.log_n, 0..=max_log)
                        .text("log2 N")
                        .custom_formatter(|v, _| format!("{v} (N = {})", 1u64 << v as u32)),
                )
                .on_hover_text("Number of elements, as a power of two");
            }
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
        *rerun_flag |= rerun;
    }

    pub(super) fn status_bar(&self, ui: &mut egui::Ui) {
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
            if let Some(g) = &self.gpu {
                ui.separator();
                ui.label(format!("wisdom: {}", self.wisdom.word(g)))
                    .on_hover_text(format!(
                        "This GPU's tuned defaults ({}): the lab's timed runs and the self-test fill the options you leave unset from them (Help > Tune this GPU…)",
                        self.wisdom.origin(g)
                    ));
                if let Some(w) = &self.wisdom.warning
                    && self.message.as_ref() != Some(w)
                {
                    ui.colored_label(egui::Color32::from_rgb(230, 150, 60), w);
                }
            }
            if let Some(m) = &self.message {
                ui.separator();
                ui.colored_label(egui::Color32::from_rgb(230, 90, 90), m);
            }
        });
    }

    pub(super) fn menu(&mut self, ui: &mut egui::Ui) {
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
                // A streaming or stopped run has no output yet; its diagram can be saved.
                let whole = self.trace == TraceState::Complete;
                ui.add_enabled_ui(self.result.is_some(), |ui| {
                    if ui
                        .add_enabled(whole, egui::Button::new("Save output…"))
                        .on_hover_text("The output as .npy, .json or text")
                        .clicked()
                        && let Some(r) = &self.result
                    {
                        let (d, j) = (r.output.clone(), r.output_value());
                        #[cfg(target_arch = "wasm32")]
                        {
                            let bytes = crate::export::output_bytes(&d, j.as_ref(), "output.npy");
                            self.message = Some(crate::ui::files::download("output.npy", bytes));
                        }
                        #[cfg(not(target_arch = "wasm32"))]
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
                        self.save_diagram(&ctx);
                    }
                    if ui
                        .add_enabled(whole, egui::Button::new("Export trace…"))
                        .on_hover_text("Every stage as JSON or CSV")
                        .clicked()
                        && let Some(r) = &self.result
                    {
                        let r = r.clone();
                        #[cfg(target_arch = "wasm32")]
                        {
                            let bytes = crate::export::trace_bytes(&r, "trace.json");
                            self.message = Some(crate::ui::files::download("trace.json", bytes));
                        }
                        #[cfg(not(target_arch = "wasm32"))]
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
                    self.open_session(&ctx);
                }
                if ui
                    .button("Copy link")
                    .on_hover_text("A link to this run and view, or to the lesson's step (docs/LESSONS.md)")
                    .clicked()
                {
                    self.copy_link(&ctx);
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
            let help = ui.menu_button("Help", |ui| {
                if ui
                    .button("Self-test…")
                    .on_hover_text(
                        "Random cases of every algorithm on this GPU, checked against the CPU model",
                    )
                    .clicked()
                {
                    self.selftest.open = true;
                }
                if ui
                    .button("Tune this GPU…")
                    .on_hover_text(
                        "Measure this GPU's best defaults for each room (wisdom), every candidate checked first",
                    )
                    .clicked()
                {
                    self.tune.open = true;
                }
            });
            help.response
                .on_hover_text("Self-test every algorithm on this GPU, tune its defaults");
            let exercises = ui.menu_button("Exercises", |ui| self.exercises_menu(ui, &ctx));
            exercises.response.on_hover_text(
                "Write a kernel to a statement, in your own editor; the room \"Your kernel\" checks it",
            );
            ui.toggle_value(&mut self.lessons.open, "Lessons")
                .on_hover_text("A path through the seeds: steps that set up a run and ask what the GPU will do");
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
}

/// Why a finished run shows no pass times on `gpu`, in words (None: it has trusted timestamps).
fn no_pass_times(gpu: &Gpu) -> Option<String> {
    if !gpu.has_timestamps() {
        return Some("No pass times: this adapter has no timestamp queries.".into());
    }
    gpu.clock_distrusted().map(|why| {
        format!(
            "No pass times: {why}, so they are not shown (checked after each run). The \
             Performance lab times whole runs by the wall clock."
        )
    })
}
