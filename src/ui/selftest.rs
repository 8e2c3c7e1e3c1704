//! Help ▸ Self-test…: `stagewise selftest` on the app's own device, on a worker thread (as the
//! performance lab runs its sweeps), with its progress, a Stop button, and at the end the table
//! and every failure with the command that reproduces it.

use super::task::Worker;
use crate::gpu::Gpu;
use crate::selftest::{Config, Progress, Report};
use crate::wisdom::Loaded;
use eframe::egui;

enum Msg {
    Progress(Progress),
    Done(Report),
}

pub struct SelftestWindow {
    pub open: bool,
    pub minutes: f64,
    pub seed: u64,
    running: Option<Worker<Msg>>,
    pub progress: Option<Progress>,
    pub report: Option<Report>,
}

impl Default for SelftestWindow {
    fn default() -> Self {
        SelftestWindow {
            open: false,
            minutes: 1.0,
            seed: 1,
            running: None,
            progress: None,
            report: None,
        }
    }
}

impl SelftestWindow {
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Start on `gpu` (the app's device, shared: no second device is opened); its cases take
    /// their unset options from `wisdom` (the app's), as `stagewise selftest` does.
    pub fn start(&mut self, gpu: &Gpu, ctx: &egui::Context, wisdom: Option<&Loaded>) {
        let (worker, reply) = Worker::new(ctx);
        let gpu = gpu.clone();
        let cfg = Config {
            minutes: self.minutes,
            cases: None,
            seed: self.seed,
            adapter: None,
            wisdom: wisdom.cloned(),
        };
        super::task::spawn(move || async move {
            let report = crate::selftest::run(
                &gpu,
                &cfg,
                &crate::cli::Words,
                &|| reply.stopped(),
                &mut |p| reply.send(Msg::Progress(p.clone())),
            )
            .await;
            reply.send(Msg::Done(report));
        });
        self.running = Some(worker);
        self.progress = None;
        self.report = None;
    }

    pub fn stop(&self) {
        if let Some(w) = &self.running {
            w.stop();
        }
    }

    /// Take what the worker sent.
    pub fn poll(&mut self) {
        let Some(w) = &self.running else { return };
        for m in w.take() {
            match m {
                Msg::Progress(p) => self.progress = Some(p),
                Msg::Done(rep) => {
                    self.report = Some(rep);
                    self.running = None;
                }
            }
        }
    }

    pub fn show(&mut self, ctx: &egui::Context, gpu: Option<&Gpu>, wisdom: Option<&Loaded>) {
        self.poll();
        if !self.open {
            return;
        }
        let mut open = self.open;
        egui::Window::new("Self-test")
            .open(&mut open)
            .default_width(640.0)
            .show(ctx, |ui| self.ui(ui, gpu, wisdom));
        self.open = open;
    }

    fn ui(&mut self, ui: &mut egui::Ui, gpu: Option<&Gpu>, wisdom: Option<&Loaded>) {
        ui.label(
            "Random cases of every algorithm and variant on this GPU (odd sizes, every dtype, \
             the look-back's fallback modes), each checked against the CPU model.",
        );
        ui.horizontal(|ui| {
            ui.add_enabled_ui(!self.is_running(), |ui| {
                ui.label("minutes");
                ui.add(
                    egui::DragValue::new(&mut self.minutes)
                        .range(0.0..=60.0)
                        .speed(0.1),
                )
                .on_hover_text("Time to spend (every variant runs at least once)");
                ui.label("seed");
                ui.add(egui::DragValue::new(&mut self.seed))
                    .on_hover_text("Seed of the cases' sizes, options and inputs");
            });
            if self.is_running() {
                if ui
                    .button("Stop")
                    .on_hover_text("Stop after the case that is running")
                    .clicked()
                {
                    self.stop();
                }
                ui.spinner();
            } else if ui
                .add_enabled(gpu.is_some(), egui::Button::new("Start"))
                .on_hover_text("Run the self-test on the app's GPU")
                .clicked()
                && let Some(g) = gpu
            {
                self.start(g, ui.ctx(), wisdom);
            }
        });
        if let Some(p) = &self.progress
            && self.is_running()
        {
            ui.label(format!(
                "{} cases: {} passed, {} failed, {} refused — {:.0} s of {}",
                p.done, p.passed, p.failed, p.refused, p.elapsed_s, p.budget
            ));
            ui.small(&p.current);
        }
        let Some(rep) = &self.report else { return };
        ui.separator();
        let verdict = if rep.failures.is_empty() {
            egui::RichText::new(format!("{} cases, no failures", rep.cases()))
                .color(egui::Color32::from_rgb(80, 170, 90))
        } else {
            egui::RichText::new(format!(
                "{} cases, {} FAILED",
                rep.cases(),
                rep.failures.len()
            ))
            .color(egui::Color32::from_rgb(230, 90, 90))
        };
        ui.strong(verdict);
        // What wisdom filled: the configuration users get is what was checked.
        match &rep.wisdom_from {
            None => {
                ui.label("wisdom: none (the built-in defaults)");
            }
            Some(from) => {
                ui.label(format!(
                    "wisdom ({from}): {} of {} cases took its choices",
                    rep.wisdom.len(),
                    rep.cases()
                ));
            }
        }
        egui::ScrollArea::vertical()
            .max_height(420.0)
            .show(ui, |ui| {
                egui::Grid::new("selftest table")
                    .striped(true)
                    .show(ui, |ui| {
                        for h in [
                            "algorithm",
                            "variant",
                            "cases",
                            "passed",
                            "failed",
                            "refused",
                        ] {
                            ui.strong(h);
                        }
                        ui.end_row();
                        for r in &rep.rows {
                            ui.label(r.algorithm);
                            ui.label(r.variant);
                            for v in [r.cases, r.passed, r.failed, r.refused] {
                                ui.label(v.to_string());
                            }
                            ui.end_row();
                        }
                    });
                for w in &rep.wisdom {
                    let fell = match &w.refused {
                        Some(why) => format!(" — refused ({why}): the defaults ran"),
                        None => String::new(),
                    };
                    ui.small(format!(
                        "wisdom {}/{}: {} {}{fell}",
                        w.algorithm,
                        w.variant,
                        w.applied.describe(),
                        w.outcome
                    ));
                }
                for f in &rep.failures {
                    ui.colored_label(
                        egui::Color32::from_rgb(230, 90, 90),
                        format!("FAILED {}/{}: {}", f.algorithm, f.variant, f.reason),
                    );
                    // Selectable, to paste into a terminal.
                    ui.add(
                        egui::Label::new(egui::RichText::new(&f.command).monospace())
                            .selectable(true),
                    );
                }
            });
    }
}
