//! The Your kernel room's Tune section: value lists for the kernel's `override` constants,
//! a tuning on a worker on the app's device, its table and a plot of time against each override.

use super::kernel::{GREEN, RED};
use super::*;
use crate::ui::workbench;
use crate::wisdom::kernel_tune::Status;
use egui_plot::{HLine, Line, Plot, Points};

impl StagewiseApp {
    /// The Tune section: value lists for the kernel's overrides, Tune / Stop on a worker on the
    /// app's device, the rows and a plot of time against each override, the best as the runs'
    /// overrides or as the file's wisdom. True when a run is asked for (Use for runs).
    pub(super) fn tune_section(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) -> bool {
        let AlgoOptions::Kernel(o) = &self.session.algo else {
            return false;
        };
        let opts = o.clone();
        let exercise = self
            .workbench
            .exercise
            .as_ref()
            .map(|e| e.exercise.tune.clone())
            .unwrap_or_default();
        let busy = self.is_running();
        let gpu = self.gpu.clone();
        #[cfg(not(target_arch = "wasm32"))]
        let wisdom_file = self.workbench.wisdom_file.clone();
        let wisdom = self.wisdom.loaded.clone();
        let t = &mut self.workbench.tune;
        t.poll();
        t.refresh(&opts, &exercise);
        let mut use_best = None;
        ui.separator();
        egui::CollapsingHeader::new("Tune the overrides")
            .id_salt("kernel-tune")
            .default_open(true)
            .show(ui, |ui| {
                if t.declared.is_empty() {
                    ui.small(
                        "The kernel declares no `override` constants. Declare its parameters as \
                         overrides (`override TILE: u32 = 32;`, also in @workgroup_size) to tune them.",
                    );
                    return;
                }
                ui.small(
                    "Every combination is verified against expect on a fresh random input, then \
                     timed beside the copy and the built-in kernel (`stagewise tune kernel`).",
                );
                egui::Grid::new("kernel-tune-lists")
                    .num_columns(2)
                    .show(ui, |ui| {
                        for (name, list) in t.lists.iter_mut() {
                            let what = t
                                .declared
                                .iter()
                                .find(|d| &d.name == name)
                                .map_or(name.clone(), |d| d.describe());
                            let tip = format!(
                                "Values of {what} to try, comma-separated (empty: not tuned)"
                            );
                            let l = ui.label(name.as_str()).on_hover_text(&tip);
                            ui.add(
                                egui::TextEdit::singleline(list)
                                    .desired_width(150.0)
                                    .hint_text("not tuned"),
                            )
                            .labelled_by(l.id)
                            .on_hover_text(&tip);
                            ui.end_row();
                        }
                        let tip = "Elements each combination is timed at (verified at up to 2^20)";
                        let l = ui.label("tune N = 2^").on_hover_text(tip);
                        ui.add(egui::DragValue::new(&mut t.log_n).range(8..=26))
                            .labelled_by(l.id)
                            .on_hover_text(tip);
                        ui.end_row();
                        let tip = "Timed repetitions per combination (median kept)";
                        let l = ui.label("reps").on_hover_text(tip);
                        ui.add(egui::DragValue::new(&mut t.reps).range(1..=200))
                            .labelled_by(l.id)
                            .on_hover_text(tip);
                        ui.end_row();
                    });
                ui.horizontal(|ui| {
                    if t.is_running() {
                        if ui
                            .button("Stop tuning")
                            .on_hover_text("Stop after the combination being timed")
                            .clicked()
                        {
                            t.stop();
                        }
                        ui.label(format!("{} of {} combinations", t.rows.len(), t.total));
                    } else {
                        let can = gpu.is_some() && !busy;
                        let b = ui
                            .add_enabled(can, egui::Button::new("Tune"))
                            .on_hover_text("Verify and time every combination of the values")
                            .on_disabled_hover_text("Wait for the run to finish");
                        if b.clicked()
                            && let Some(g) = &gpu
                        {
                            t.start(g, &opts, wisdom.as_deref(), ctx);
                        }
                    }
                });
                if let Some(e) = &t.error {
                    ui.colored_label(RED, workbench::drawable(ctx, e, false));
                }
                if let Some(b) = t.best().cloned() {
                    let choice = b.choice();
                    ui.label(format!(
                        "best: {choice} ({:.4} ms, {:.2}× copy)",
                        b.ms.unwrap_or(f64::NAN),
                        b.fraction_of_copy.unwrap_or(f64::NAN)
                    ));
                    ui.horizontal(|ui| {
                        if ui
                            .button("Use for runs")
                            .on_hover_text(format!("Run with --override {choice}"))
                            .clicked()
                        {
                            use_best = Some(b.overrides.clone());
                        }
                        #[cfg(not(target_arch = "wasm32"))]
                        if t.report.is_some()
                            && ui
                                .button("Save as this file's wisdom")
                                .on_hover_text(
                                    "Keep it for this file's text on this GPU: `stagewise run \
                                     kernel` and `bench kernel` then take it for overrides not given",
                                )
                                .clicked()
                            && let Some(g) = &gpu
                        {
                            t.save(g, wisdom_file.as_deref());
                        }
                    });
                }
                if let Some(p) = &t.saved {
                    ui.small(format!("saved: {p}"));
                }
                tune_results(ui, t);
            })
            .header_response
            .on_hover_text(
                "Verify and time every combination of the kernel's `override` values \
                 (`stagewise tune kernel`)",
            );
        let Some(best) = use_best else {
            return false;
        };
        let AlgoOptions::Kernel(o) = &mut self.session.algo else {
            return false;
        };
        for (k, v) in best {
            o.overrides
                .retain(|g| g.split_once('=').is_none_or(|(n, _)| n.trim() != k));
            o.overrides.push(format!("{k}={v}"));
        }
        true
    }
}

/// A tuning's rows as a table (the references first, the best marked) and a plot of time against
/// each tuned override.
fn tune_results(ui: &mut egui::Ui, t: &workbench::Tune) {
    if t.rows.is_empty() && t.copy.is_none() {
        return;
    }
    let axes: Vec<String> = match (&t.report, t.rows.first()) {
        (Some(r), _) => r.axes.clone(),
        (None, Some((_, r))) => r.overrides.iter().map(|o| o.0.clone()).collect(),
        _ => Vec::new(),
    };
    let best = t.best().map(|b| b.overrides.clone());
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
    egui::ScrollArea::both()
        .id_salt("kernel-tune-table")
        .max_height(220.0)
        .show(ui, |ui| {
            egui::Grid::new("kernel-tune-rows")
                .striped(true)
                .show(ui, |ui| {
                    for a in &axes {
                        ui.strong(a);
                    }
                    for h in ["ms", "× copy", "× built-in", "verified"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    let refs = [("same-run copy", &t.copy), ("built-in", &t.builtin)];
                    for (what, r) in refs {
                        let Some(r) = r else { continue };
                        for (i, _) in axes.iter().enumerate() {
                            if i == 0 {
                                ui.small(format!("({what})"));
                            } else {
                                ui.small("");
                            }
                        }
                        ui.small(format!("{:.4}", r.ms));
                        ui.small(format!("{:.3}", r.fraction_of_copy));
                        ui.small(f(t.builtin.as_ref().map(|b| b.ms / r.ms), 3));
                        ui.small(format!("reference: {}", r.name));
                        ui.end_row();
                    }
                    for (_, r) in &t.rows {
                        for (_, v) in &r.overrides {
                            ui.small(v);
                        }
                        ui.small(f(r.ms, 4));
                        ui.small(f(r.fraction_of_copy, 3));
                        ui.small(f(r.vs_builtin, 3));
                        let why = r.reason.as_deref().unwrap_or("");
                        let (txt, col) = match r.status {
                            Status::Timed if Some(&r.overrides) == best.as_ref() => {
                                ("yes (best)".to_string(), GREEN)
                            }
                            Status::Timed => ("yes".to_string(), ui.visuals().text_color()),
                            Status::Wrong => (format!("WRONG: {why}"), RED),
                            Status::Refused => (
                                format!("refused: {why}"),
                                egui::Color32::from_rgb(230, 150, 60),
                            ),
                        };
                        ui.colored_label(col, workbench::drawable(ui.ctx(), &txt, false))
                            .on_hover_text(workbench::drawable(ui.ctx(), why, false));
                        ui.end_row();
                    }
                });
        });
    for a in &axes {
        // Every timed row's time against this override's value; the line joins the fastest at
        // each value (the other overrides at their best for it).
        let mut pts: Vec<[f64; 2]> = t
            .rows
            .iter()
            .filter(|(_, r)| r.verified())
            .filter_map(|(_, r)| Some([r.value(a)?, r.ms?]))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|x, y| x[0].total_cmp(&y[0]).then(x[1].total_cmp(&y[1])));
        let mut fastest: Vec<[f64; 2]> = Vec::new();
        for p in &pts {
            if fastest.last().is_none_or(|l| l[0] != p[0]) {
                fastest.push(*p);
            }
        }
        // No legend: on a panel this narrow it would cover the points; the caption says it.
        let copy_col = egui::Color32::from_rgb(120, 200, 120);
        let builtin_col = egui::Color32::from_rgb(200, 120, 220);
        Plot::new(format!("kernel-tune-plot-{a}"))
            .height(140.0)
            .x_axis_label(a.as_str())
            .y_axis_label("ms")
            .show(ui, |p| {
                p.points(Points::new("combinations", pts.clone()).radius(3.0));
                p.line(Line::new(format!("fastest at each {a}"), fastest.clone()));
                if let Some(c) = &t.copy {
                    p.hline(HLine::new("same-run copy", c.ms).color(copy_col));
                }
                if let Some(b) = &t.builtin {
                    p.hline(HLine::new(format!("built-in {}", b.name), b.ms).color(builtin_col));
                }
            });
        ui.horizontal_wrapped(|ui| {
            ui.small(format!("ms against {a}: dots every verified combination, the line the fastest at each value;"));
            ui.colored_label(copy_col, egui::RichText::new("the copy").small());
            ui.colored_label(builtin_col, egui::RichText::new("the built-in kernel").small());
        });
    }
}
