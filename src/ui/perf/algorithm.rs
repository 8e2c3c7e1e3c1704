//! The lab's one-algorithm mode: the algorithm, its variants and parameters, the live readout,
//! and its plot (GB/s of the floor's bytes, or keys/s for sorts) beside the same-run copy.

use super::plot::{self, Series, Style, rooflines, suspect_marks, x_of};
use super::{PerfLab, YAxis, nominal_bandwidth};
use crate::algo::{Algo, AlgoOptions, VariantInfo};
use crate::bench::BenchRow;
use crate::gpu::Gpu;
use eframe::egui;
use std::collections::BTreeMap;

impl PerfLab {
    pub(crate) fn reset_variants(&mut self) {
        self.variants = self
            .algo
            .algo()
            .info()
            .variants
            .iter()
            .map(|v| (v.name, true))
            .collect();
    }

    pub(super) fn selected(&self) -> Vec<&'static VariantInfo> {
        let info = self.algo.algo().info();
        info.variants
            .iter()
            .filter(|v| self.variants.get(v.name).copied().unwrap_or(false))
            .collect()
    }

    /// The algorithm, its variants and its parameters; true if a live point should be re-measured.
    pub(super) fn algorithm_controls(&mut self, ui: &mut egui::Ui) -> bool {
        let mut changed = false;
        // The user's kernel follows the room's file and options.
        if let (AlgoOptions::Kernel(_), Some(w)) = (&self.algo, &self.workbench) {
            self.algo = w.clone();
        }
        ui.horizontal_wrapped(|ui| {
            let current = self.algo.id();
            egui::ComboBox::from_label("algorithm")
                .selected_text(self.algo.algo().info().title)
                .show_ui(ui, |ui| {
                    for a in AlgoOptions::all_defaults() {
                        if ui
                            .selectable_label(a.id() == current, a.algo().info().title)
                            .on_hover_text(a.algo().info().summary)
                            .clicked()
                            && a.id() != current
                        {
                            self.algo = a;
                            self.reset_variants();
                            changed = true;
                        }
                    }
                    if let Some(w) = &self.workbench
                        && ui
                            .selectable_label(current == Algo::Kernel, "Your kernel (workbench)")
                            .on_hover_text(
                                "The kernel file open in the room Your kernel, beside the built-in \
                                 kernel for its --expect op",
                            )
                            .clicked()
                        && current != Algo::Kernel
                    {
                        self.algo = w.clone();
                        self.reset_variants();
                        changed = true;
                    }
                })
                .response
                .on_hover_text("Which algorithm to time");
            for (name, on) in self.variants.iter_mut() {
                changed |= ui
                    .checkbox(on, *name)
                    .on_hover_text("Include this variant")
                    .changed();
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.label("Parameters:");
            changed |= crate::ui::params::edit(ui, &mut self.algo, "perf");
        });
        changed
    }

    pub(super) fn live_readout(&self, ui: &mut egui::Ui) {
        let n = 1u64 << self.live_log_n;
        let pts: Vec<&BenchRow> = self
            .rows
            .iter()
            .filter(|r| r.n == n && r.algorithm == self.algo.id())
            .collect();
        if self.live && !pts.is_empty() {
            ui.horizontal_wrapped(|ui| {
                for r in pts {
                    ui.strong(format!(
                        "{} @ 2^{}: {:.1} GB/s = {:.2}× copy ({:.3} ms){}",
                        r.variant,
                        self.live_log_n,
                        r.gbps,
                        r.fraction_of_copy,
                        r.median_ms,
                        if r.suspect { " — suspect" } else { "" }
                    ));
                }
            });
        }
    }

    pub(super) fn plot_algorithm(&mut self, ui: &mut egui::Ui, gpu: &Gpu) {
        ui.horizontal_wrapped(|ui| {
            ui.label("y axis");
            ui.selectable_value(&mut self.y_axis, YAxis::Throughput, "throughput")
                .on_hover_text("GB/s of the bytes the problem moves at least (keys/s for sorts), beside the same-run copy roofline");
            ui.selectable_value(&mut self.y_axis, YAxis::FractionOfCopy, "fraction of copy")
                .on_hover_text("Each point against the same-run copy of its floor's bytes: 1 = at the roofline");
            ui.checkbox(&mut self.log_y, "log scale")
                .on_hover_text("The y axis on a log scale (variants orders of magnitude apart)");
        });
        if self.rows.is_empty() {
            // An empty egui plot has arbitrary bounds (its ticks read 2^-1, 2^0 … and -0.5 … 0.4).
            ui.label(format!(
                "No measurements yet: Run sweep times every selected variant from 2^{} to 2^{} (timed mode, medians of {} reps), each beside a copy of the same bytes.",
                self.log_lo, self.log_hi, self.reps
            ));
            self.plot_rect = None;
            return;
        }
        // Sorts read in keys per second, beside a copy of their keys (and values): 8 or 16 bytes
        // per key. Everything else in GB/s of the floor's bytes.
        let per_key = match &self.algo {
            AlgoOptions::Oddeven(_) => Some(8u64),
            AlgoOptions::Radix(o) => Some(if o.has_values() { 16 } else { 8 }),
            _ => None,
        };
        let fraction = self.y_axis == YAxis::FractionOfCopy;
        let unit = if per_key.is_some() { "Gkeys/s" } else { "GB/s" };
        let mut by_name: BTreeMap<String, Vec<([f64; 2], String)>> = BTreeMap::new();
        let y_of = |r: &BenchRow| {
            if fraction {
                r.fraction_of_copy
            } else if per_key.is_some() {
                r.gitems_per_s
            } else {
                r.gbps
            }
        };
        for r in &self.rows {
            let name = format!("{} {}", r.algorithm, r.variant);
            let y = y_of(r);
            let rate = if per_key.is_some() {
                r.gitems_per_s
            } else {
                r.gbps
            };
            let hover = format!(
                "{name}\nN = 2^{:.0}\n{rate:.2} {unit} = {:.2}× copy of its floor ({:.4} ms){}",
                x_of(r.n),
                r.fraction_of_copy,
                r.median_ms,
                if r.suspect {
                    "\nsuspect (see the note above the plot)"
                } else {
                    ""
                }
            );
            by_name
                .entry(name)
                .or_default()
                .push(([x_of(r.n), y], hover));
        }
        let mut series: Vec<Series> = by_name
            .into_iter()
            .enumerate()
            .map(|(k, (name, pts))| {
                // One explicit colour per series, so its line, points and legend entry agree.
                Series::new(name, Style::Measured, pts).color(crate::ui::colors::thread_color(k))
            })
            .collect();
        series.extend(suspect_marks(&self.rows, &y_of));
        let (y_label, hlines) = if fraction {
            (
                "fraction of the same-run copy (1 = the roofline)".to_string(),
                vec![("same-run copy = 1".to_string(), 1.0)],
            )
        } else {
            let floor = |_: &BenchRow| per_key.unwrap_or(1);
            series.extend(rooflines(
                &self.rows,
                per_key.map(|_| &floor as &dyn Fn(&BenchRow) -> u64),
            ));
            let hlines: Vec<(String, f64)> = nominal_bandwidth(&gpu.info.name)
                .map(|bw| {
                    let bw = bw / per_key.unwrap_or(1) as f64;
                    (format!("nominal {bw:.0} {unit}"), bw)
                })
                .into_iter()
                .collect();
            let label = if per_key.is_some() {
                "Gkeys/s (keys / median time)"
            } else {
                "GB/s (bytes moved at least / median time)"
            };
            (label.to_string(), hlines)
        };
        let y_label = if self.log_y {
            format!("{y_label}, log scale")
        } else {
            y_label
        };
        self.plot_rect = Some(plot::draw(
            ui,
            "throughput",
            &y_label,
            &series,
            &hlines,
            self.log_y,
        ));
    }
}
