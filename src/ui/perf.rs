//! The performance lab: sweeps and live measurements in timed mode on a worker thread, streamed into
//! a throughput plot beside the copy roofline measured on the same adapter, with CSV/JSON/PNG export.

use crate::algo::{AlgoOptions, Variant};
use crate::bench::{self, BenchRow, BenchSpec, CSV_HEADER, Event};
use crate::data::DType;
use crate::gpu::Gpu;
use eframe::egui;
use egui_plot::{HLine, Legend, Line, Plot, PlotPoints, Points};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

enum Msg {
    Bench(Event),
    Done(Result<(), String>),
    Saved(String),
    PngPath(std::path::PathBuf),
}

pub struct PerfLab {
    pub algo: AlgoOptions,
    /// Which variants of `algo` to sweep.
    pub variants: BTreeMap<&'static str, bool>,
    pub log_lo: u32,
    pub log_hi: u32,
    pub reps: usize,
    /// Re-measure the current point whenever a slider moves.
    pub live: bool,
    pub live_log_n: u32,
    pub rows: Vec<BenchRow>,
    pub status: String,
    running: Option<(Receiver<Msg>, Arc<AtomicBool>)>,
    progress: (usize, usize),
    live_dirty: bool,
    tx_saved: Option<(Sender<Msg>, Receiver<Msg>)>,
    plot_rect: Option<egui::Rect>,
    png_target: Option<std::path::PathBuf>,
}

impl Default for PerfLab {
    fn default() -> Self {
        let mut lab = PerfLab {
            algo: AlgoOptions::Bitrev(Default::default()),
            variants: BTreeMap::new(),
            log_lo: 10,
            log_hi: 20,
            reps: 20,
            live: false,
            live_log_n: 20,
            rows: Vec::new(),
            status: String::new(),
            running: None,
            progress: (0, 0),
            live_dirty: false,
            tx_saved: Some(channel()),
            plot_rect: None,
            png_target: None,
        };
        lab.reset_variants();
        lab
    }
}

/// Nominal memory bandwidth of well-known GPUs (GB/s), for the plot's reference line.
pub fn nominal_bandwidth(name: &str) -> Option<f64> {
    let n = name.to_lowercase();
    let table: [(&str, f64); 10] = [
        ("h200", 4800.0),
        ("h100 pcie", 2000.0),
        ("h100", 3350.0),
        ("a100-sxm4-80gb", 2039.0),
        ("a100", 1555.0),
        ("rtx 4090", 1008.0),
        ("rtx 3090", 936.0),
        ("l40s", 864.0),
        ("rtx 4080", 717.0),
        ("a10", 600.0),
    ];
    table.iter().find(|(k, _)| n.contains(k)).map(|&(_, v)| v)
}

impl PerfLab {
    fn reset_variants(&mut self) {
        self.variants = self
            .algo
            .algo()
            .info()
            .variants
            .iter()
            .map(|v| (v.name, true))
            .collect();
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    fn selected(&self) -> Vec<&'static Variant> {
        let info = self.algo.algo().info();
        info.variants
            .iter()
            .filter(|v| self.variants.get(v.name).copied().unwrap_or(false))
            .collect()
    }

    /// Start a sweep (or a single live point) on a worker thread.
    pub fn start(&mut self, gpu: &Gpu, ctx: &egui::Context, sizes: Vec<usize>) {
        let variants = self.selected();
        if variants.is_empty() {
            self.status = "pick at least one variant".into();
            return;
        }
        let spec = BenchSpec {
            cases: vec![(self.algo.clone(), variants)],
            sizes,
            reps: self.reps,
            warmup: 3,
            dtype: DType::U32,
            skip_refused: true,
            min_warmup_ms: 0.0,
        };
        let (tx, rx) = channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let c2 = cancel.clone();
        let gpu = gpu.clone();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let r = bench::run(
                &gpu,
                &spec,
                &mut |e| {
                    let _ = tx.send(Msg::Bench(e));
                    ctx.request_repaint();
                },
                &|| c2.load(Ordering::Relaxed),
            );
            let _ = tx.send(Msg::Done(r.map(|_| ()).map_err(|e| e.to_string())));
            ctx.request_repaint();
        });
        self.running = Some((rx, cancel));
        self.progress = (0, 0);
        self.status = "measuring…".into();
    }

    fn poll(&mut self) {
        let side: Vec<Msg> = match &self.tx_saved {
            Some((_, rx)) => rx.try_iter().collect(),
            None => Vec::new(),
        };
        for m in side {
            match m {
                Msg::Saved(s) => self.status = s,
                Msg::PngPath(p) => self.png_target = Some(p),
                _ => {}
            }
        }
        let Some((rx, _)) = &self.running else { return };
        let mut done = None;
        while let Ok(m) = rx.try_recv() {
            match m {
                Msg::Bench(Event::Row(r)) => {
                    // A new measurement replaces an older one of the same case.
                    self.rows.retain(|x| {
                        !(x.algorithm == r.algorithm && x.variant == r.variant && x.n == r.n)
                    });
                    self.rows.push(r);
                }
                Msg::Bench(Event::Progress { done, total }) => self.progress = (done, total),
                Msg::Bench(Event::Skipped(s)) => self.status = format!("skipped {s}"),
                Msg::Done(r) => done = Some(r),
                Msg::Saved(s) => self.status = s,
                Msg::PngPath(_) => {}
            }
        }
        if let Some(r) = done {
            self.running = None;
            self.status = match r {
                Ok(()) => format!("{} measurements", self.rows.len()),
                Err(e) => e,
            };
        }
    }

    fn export(&mut self, ctx: &egui::Context, kind: &'static str) {
        let Some((tx, _)) = &self.tx_saved else {
            return;
        };
        let tx = tx.clone();
        let rows = self.rows.clone();
        let ctx = ctx.clone();
        // The dialog runs off the UI thread; the frame keeps drawing.
        std::thread::spawn(move || {
            let Some(path) = rfd::FileDialog::new()
                .set_file_name(format!("stagewise-bench.{kind}"))
                .save_file()
            else {
                return;
            };
            let text = if kind == "csv" {
                let mut s = String::from(CSV_HEADER);
                s.push('\n');
                for r in &rows {
                    s.push_str(&r.csv());
                    s.push('\n');
                }
                s
            } else {
                serde_json::json!({ "rows": rows }).to_string()
            };
            let msg = match std::fs::write(&path, text) {
                Ok(()) => format!("saved {}", path.display()),
                Err(e) => format!("cannot save {}: {e}", path.display()),
            };
            let _ = tx.send(Msg::Saved(msg));
            ctx.request_repaint();
        });
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, gpu: Option<&Gpu>) {
        self.poll();
        let ctx = ui.ctx().clone();
        let Some(gpu) = gpu else {
            ui.label("No GPU.");
            return;
        };
        if !gpu.has_timestamps() {
            ui.colored_label(
                egui::Color32::from_rgb(230, 90, 90),
                "Timestamps unavailable on this adapter: no timings.",
            );
            return;
        }
        let max_log = (gpu.max_binding_bytes() / 4).ilog2().min(28);
        let mut live_changed = false;
        ui.horizontal_wrapped(|ui| {
            let current = self.algo.name();
            egui::ComboBox::from_label("algorithm")
                .selected_text(self.algo.algo().info().title)
                .show_ui(ui, |ui| {
                    for a in AlgoOptions::all_defaults() {
                        if ui
                            .selectable_label(a.name() == current, a.algo().info().title)
                            .on_hover_text(a.algo().info().summary)
                            .clicked()
                            && a.name() != current
                        {
                            self.algo = a;
                            self.reset_variants();
                            live_changed = true;
                        }
                    }
                })
                .response
                .on_hover_text("Which algorithm to time");
            for (name, on) in self.variants.iter_mut() {
                live_changed |= ui
                    .checkbox(on, *name)
                    .on_hover_text("Include this variant")
                    .changed();
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.add(egui::Slider::new(&mut self.log_lo, 10..=max_log).text("from log2 N"))
                .on_hover_text("Smallest N of the sweep");
            ui.add(egui::Slider::new(&mut self.log_hi, 10..=max_log).text("to log2 N"))
                .on_hover_text("Largest N of the sweep");
            self.log_hi = self.log_hi.max(self.log_lo);
            ui.add(egui::Slider::new(&mut self.reps, 3..=200).text("reps"))
                .on_hover_text("Timed repetitions per point (median shown)");
        });
        ui.horizontal_wrapped(|ui| {
            ui.label("Parameters:");
            live_changed |= super::params::edit(ui, &mut self.algo, "perf");
        });
        ui.horizontal_wrapped(|ui| {
            if self.is_running() {
                if ui
                    .button("Cancel")
                    .on_hover_text("Stop after the current repetition")
                    .clicked()
                    && let Some((_, c)) = &self.running
                {
                    c.store(true, Ordering::Relaxed);
                }
                let (d, t) = self.progress;
                ui.add(
                    egui::ProgressBar::new(if t > 0 { d as f32 / t as f32 } else { 0.0 })
                        .desired_width(160.0)
                        .show_percentage(),
                );
                ui.spinner();
            } else if ui
                .button("Run sweep")
                .on_hover_text("Time every selected variant at every N (timed mode, medians)")
                .clicked()
            {
                let sizes = (self.log_lo..=self.log_hi).map(|k| 1usize << k).collect();
                self.start(gpu, &ctx, sizes);
            }
            ui.checkbox(&mut self.live, "Live")
                .on_hover_text("Re-measure at the N below whenever a control moves");
            live_changed |= ui
                .add(egui::Slider::new(&mut self.live_log_n, 10..=max_log).text("live log2 N"))
                .on_hover_text("N for live measurements")
                .changed();
            if ui
                .button("Clear")
                .on_hover_text("Forget all measurements")
                .clicked()
            {
                self.rows.clear();
            }
            ui.add_enabled_ui(!self.rows.is_empty(), |ui| {
                if ui
                    .button("Export CSV")
                    .on_hover_text("Save the measurements as CSV")
                    .clicked()
                {
                    self.export(&ctx, "csv");
                }
                if ui
                    .button("Export JSON")
                    .on_hover_text("Save the measurements as JSON")
                    .clicked()
                {
                    self.export(&ctx, "json");
                }
                if ui
                    .button("Export PNG")
                    .on_hover_text("Save the plot as a PNG image")
                    .clicked()
                {
                    self.request_png(&ctx);
                }
            });
        });
        if live_changed {
            self.live_dirty = true;
        }
        if self.live && self.live_dirty && !self.is_running() {
            self.live_dirty = false;
            self.start(gpu, &ctx, vec![1usize << self.live_log_n]);
        }
        ui.label(&self.status);
        self.live_readout(ui);
        self.plot(ui, gpu);
        if let Some(p) = self.png_target.take() {
            self.shoot_plot(&ctx, p);
        }
    }

    fn live_readout(&self, ui: &mut egui::Ui) {
        let n = 1u64 << self.live_log_n;
        let pts: Vec<&BenchRow> = self
            .rows
            .iter()
            .filter(|r| r.n == n && r.algorithm == self.algo.name())
            .collect();
        if self.live && !pts.is_empty() {
            ui.horizontal_wrapped(|ui| {
                for r in pts {
                    ui.strong(format!(
                        "{} @ 2^{}: {:.1} GB/s = {:.2}× copy ({:.3} ms)",
                        r.variant, self.live_log_n, r.gbps, r.fraction_of_copy, r.median_ms
                    ));
                }
            });
        }
    }

    fn plot(&mut self, ui: &mut egui::Ui, gpu: &Gpu) {
        // Sorts read in keys per second; everything else in GB/s of the floor's bytes. The copy
        // roofline converts at the sort's 8 bytes per key (one read, one write).
        let keys = self.algo.name() == "oddeven";
        let (unit, scale) = if keys {
            ("Gkeys/s", 1.0 / 8.0)
        } else {
            ("GB/s", 1.0)
        };
        let mut series: BTreeMap<String, Vec<[f64; 2]>> = BTreeMap::new();
        let mut copy: BTreeMap<u64, f64> = BTreeMap::new();
        for r in &self.rows {
            let y = if keys { r.gitems_per_s } else { r.gbps };
            series
                .entry(format!("{} {}", r.algorithm, r.variant))
                .or_default()
                .push([(r.n as f64).log2(), y]);
            copy.insert(r.n, r.copy_gbps * scale);
        }
        let nominal = nominal_bandwidth(&gpu.info.name).map(|b| b * scale);
        let resp = Plot::new("throughput")
            .legend(Legend::default())
            .x_axis_label("log2 N")
            .y_axis_label(if keys {
                "Gkeys/s (keys / median time)"
            } else {
                "GB/s (bytes moved at least / median time)"
            })
            .x_axis_formatter(|m, _| format!("2^{}", m.value.round() as i64))
            .label_formatter(|h| match h {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\nN = 2^{:.0}\n{:.2} {unit}",
                    position.x, position.y
                )),
                egui_plot::HoverPosition::Elsewhere { .. } => None,
            })
            .height((ui.available_height() - 8.0).max(200.0))
            .show(ui, |p| {
                for (k, (name, mut pts)) in series.into_iter().enumerate() {
                    pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
                    // One explicit colour per series, so its line, points and legend entry agree.
                    let c = crate::ui::colors::thread_color(k);
                    p.line(
                        Line::new(name.clone(), PlotPoints::from(pts.clone()))
                            .width(2.0)
                            .color(c),
                    );
                    p.points(
                        Points::new(name, PlotPoints::from(pts))
                            .radius(3.0)
                            .color(c),
                    );
                }
                if !copy.is_empty() {
                    let pts: Vec<[f64; 2]> =
                        copy.iter().map(|(&n, &g)| [(n as f64).log2(), g]).collect();
                    p.line(
                        Line::new("copy roofline (same run)", PlotPoints::from(pts))
                            .width(3.0)
                            .style(egui_plot::LineStyle::dashed_loose()),
                    );
                }
                if let Some(bw) = nominal {
                    p.hline(HLine::new(format!("nominal {bw:.0} {unit}"), bw));
                }
            });
        self.plot_rect = Some(resp.response.rect);
    }

    fn request_png(&mut self, ctx: &egui::Context) {
        // Ask for the path off the UI thread; when it arrives, take a screenshot and crop it to the plot.
        let Some((tx, _)) = &self.tx_saved else {
            return;
        };
        let tx = tx.clone();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            if let Some(p) = rfd::FileDialog::new()
                .set_file_name("stagewise-plot.png")
                .save_file()
            {
                let _ = tx.send(Msg::PngPath(p));
                ctx.request_repaint();
            }
        });
    }

    /// Crop a screenshot of the window to the plot and save it (in the screenshot callback, off
    /// the frame).
    fn shoot_plot(&mut self, ctx: &egui::Context, path: std::path::PathBuf) {
        let (Some(rect), Some((tx, _))) = (self.plot_rect, &self.tx_saved) else {
            return;
        };
        let tx = tx.clone();
        super::save_region_png(ctx, rect, path, move |msg| {
            let _ = tx.send(Msg::Saved(msg));
        });
    }
}
