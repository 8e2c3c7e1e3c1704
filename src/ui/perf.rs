//! The performance lab: sweeps and live measurements in timed mode on a worker thread, streamed
//! into a throughput plot beside the copy roofline measured on the same adapter. Two modes: the
//! variants of one algorithm, and the sort family (perf/sorts.rs: every whole-array sort in one
//! sweep, with a suite result's peers overlaid by perf/peers.rs). The plot is perf/plot.rs, the
//! CSV/JSON/PNG exports and the suite file read in perf/io.rs.

mod algorithm;
mod io;
pub mod peers;
pub mod plot;
pub mod sorts;

use crate::algo::AlgoOptions;
use crate::bench::{self, BenchRow, BenchSpec, Event, Filled};
use crate::data::DType;
use crate::gpu::Gpu;
use crate::ui::task::Worker;
use eframe::egui;
use peers::Overlay;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

/// What the one-algorithm plot's y axis shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum YAxis {
    /// GB/s of the floor's bytes (keys/s for sorts), beside the same-run copy roofline.
    #[default]
    Throughput,
    /// The point's time against the same-run copy of its floor's bytes (1 = at the roofline).
    FractionOfCopy,
}

/// What the lab sweeps and plots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// The variants of one algorithm.
    #[default]
    Algorithm,
    /// Every sort of whole arrays, and the peers of a suite result.
    Sorts,
}

enum Msg {
    Bench(Event),
    Done(Result<(), String>),
    Saved(String),
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    PngPath(std::path::PathBuf),
    Suite(Result<Overlay, String>),
}

/// A sweep on its worker, and the mode whose rows it fills.
struct Running {
    worker: Worker<Msg>,
    mode: Mode,
}

pub struct PerfLab {
    pub mode: Mode,
    pub algo: AlgoOptions,
    /// Which variants of `algo` to sweep.
    pub variants: BTreeMap<&'static str, bool>,
    pub log_lo: u32,
    pub log_hi: u32,
    pub reps: usize,
    /// Warm-up before every point and its copy: this long back to back (ms), then 3 runs.
    pub warmup_ms: f64,
    /// Re-measure the current point whenever a slider moves.
    pub live: bool,
    /// The one-algorithm plot's y axis, and whether it is logarithmic.
    pub y_axis: YAxis,
    pub log_y: bool,
    pub live_log_n: u32,
    pub rows: Vec<BenchRow>,
    /// The room "Your kernel"'s options where it has a kernel file (the app sets it every frame):
    /// the lab times that kernel beside the built-in one for its `--expect` op.
    pub workbench: Option<AlgoOptions>,
    /// The sort family's members, rows and loaded suite result.
    pub sorts: sorts::SortFamily,
    /// Fill the options left unset from this GPU's wisdom, as `stagewise bench` does (off: the
    /// built-in defaults, to compare). Options set in the lab always win.
    pub use_wisdom: bool,
    /// The app's wisdom (set by the app every frame).
    pub wisdom: Option<Arc<crate::wisdom::Loaded>>,
    /// What the last sweep took from wisdom, and the file (None: it used none).
    pub filled: Vec<Filled>,
    pub filled_from: Option<String>,
    /// A choice of wisdom this adapter refused in the last sweep (its sizes ran the defaults).
    pub wisdom_refused: Option<String>,
    pub status: String,
    running: Option<Running>,
    progress: (usize, usize),
    live_dirty: bool,
    tx_saved: Option<(Sender<Msg>, Receiver<Msg>)>,
    plot_rect: Option<egui::Rect>,
    png_target: Option<std::path::PathBuf>,
}

impl Default for PerfLab {
    fn default() -> Self {
        let mut lab = PerfLab {
            mode: Mode::Algorithm,
            algo: AlgoOptions::Bitrev(Default::default()),
            variants: BTreeMap::new(),
            log_lo: 10,
            log_hi: 20,
            reps: 20,
            warmup_ms: bench::DEFAULT_MIN_WARMUP_MS,
            live: false,
            y_axis: YAxis::Throughput,
            log_y: false,
            live_log_n: 20,
            rows: Vec::new(),
            workbench: None,
            sorts: Default::default(),
            use_wisdom: true,
            wisdom: None,
            filled: Vec::new(),
            filled_from: None,
            wisdom_refused: None,
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
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    fn sizes(&self) -> Vec<usize> {
        (self.log_lo..=self.log_hi).map(|k| 1usize << k).collect()
    }

    /// Start a sweep of the shown mode at `sizes` (or a single live point) on a worker thread.
    pub fn start(&mut self, gpu: &Gpu, ctx: &egui::Context, sizes: Vec<usize>) {
        let spec = match self.mode {
            Mode::Algorithm => {
                let variants = self.selected();
                if variants.is_empty() {
                    self.status = "pick at least one variant".into();
                    return;
                }
                let mut cases = vec![(self.algo.clone(), variants)];
                // The user's kernel: its contract checked first, the built-in kernel for its
                // op beside it, and its refusals shown (they are the point).
                if let AlgoOptions::Kernel(k) = &self.algo {
                    match k.builtin_case() {
                        Ok(b) => cases.extend(b.map(|(a, v)| (a, vec![v]))),
                        Err(e) => {
                            self.status = e.to_string();
                            return;
                        }
                    }
                }
                BenchSpec {
                    skip_refused: !matches!(self.algo, AlgoOptions::Kernel(_)),
                    cases,
                    sizes,
                    reps: self.reps,
                    warmup: 3,
                    dtype: DType::U32,
                    min_warmup_ms: self.warmup_ms,
                    roofline: Default::default(),
                }
            }
            Mode::Sorts => {
                match self
                    .sorts
                    .spec(sizes, self.reps, self.warmup_ms, gpu.adapter_name())
                {
                    Ok(s) => s,
                    Err(e) => {
                        self.status = e;
                        return;
                    }
                }
            }
        };
        // Wisdom fills what the lab leaves unset, as in `stagewise bench`; not the user's kernel,
        // which runs as written.
        let wisdom = self
            .wisdom
            .clone()
            .filter(|_| self.use_wisdom && !matches!(self.algo, AlgoOptions::Kernel(_)));
        self.filled.clear();
        self.filled_from = wisdom.as_ref().map(|w| w.from.clone());
        self.wisdom_refused = None;
        let (worker, reply) = Worker::new(ctx);
        let gpu = gpu.clone();
        super::task::spawn(move || async move {
            let r = bench::run_with_wisdom(
                &gpu,
                &spec,
                wisdom.as_deref(),
                &mut |e| reply.send(Msg::Bench(e)),
                &|| reply.stopped(),
            )
            .await;
            reply.send(Msg::Done(r.map(|_| ()).map_err(|e| e.to_string())));
        });
        self.running = Some(Running {
            worker,
            mode: self.mode,
        });
        self.progress = (0, 0);
        self.status = "measuring…".into();
    }

    /// Read a suite result for the sort family's overlay (a test hook; the UI's button reads it
    /// off the UI thread). A bad file leaves a message, and the overlay loaded before, if any.
    pub fn load_suite(&mut self, path: &std::path::Path) {
        self.apply_suite(peers::load(path));
    }

    fn apply_suite(&mut self, r: Result<Overlay, String>) {
        match r {
            Ok(o) => {
                self.status = format!("loaded {} ({} series)", o.file, o.series.len());
                self.sorts.overlay = Some(o);
                self.sorts.file_error = None;
            }
            Err(e) => self.sorts.file_error = Some(e),
        }
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
                Msg::Suite(r) => self.apply_suite(r),
                _ => {}
            }
        }
        let Some(run) = &self.running else { return };
        let mode = run.mode;
        let msgs = run.worker.take();
        let mut done = None;
        for m in msgs {
            match m {
                Msg::Bench(Event::Row(r)) if mode == Mode::Sorts => self.sorts.add_row(r),
                Msg::Bench(Event::Row(mut r)) => {
                    // A point measured with wisdom's options is its own series beside the
                    // built-in defaults' (the Use wisdom toggle compares them).
                    if self.took_wisdom(&r) {
                        r.variant = format!("{} + wisdom", r.variant);
                    }
                    // A new measurement replaces an older one of the same case.
                    self.rows.retain(|x| {
                        !(x.algorithm == r.algorithm && x.variant == r.variant && x.n == r.n)
                    });
                    self.rows.push(r);
                }
                Msg::Bench(Event::Progress { done, total }) => self.progress = (done, total),
                Msg::Bench(Event::Skipped(s)) if mode == Mode::Sorts => self.sorts.skipped.push(s),
                Msg::Bench(Event::Skipped(s)) => self.status = format!("skipped {s}"),
                Msg::Bench(Event::Wisdom(f)) => self.filled.push(f),
                Msg::Bench(Event::WisdomRefused(m)) => self.wisdom_refused = Some(m),
                Msg::Done(r) => done = Some(r),
                Msg::Saved(s) => self.status = s,
                Msg::PngPath(_) | Msg::Suite(_) => {}
            }
        }
        if let Some(r) = done {
            self.running = None;
            let rows = match mode {
                Mode::Algorithm => &self.rows,
                Mode::Sorts => &self.sorts.rows,
            };
            let n = rows.len();
            let wall = if rows.iter().any(|r| r.wall_clock) {
                " (timed by the wall clock: this adapter's timestamps disagree with it)"
            } else {
                ""
            };
            self.status = match r {
                Ok(()) => format!("{n} measurements{wall}"),
                Err(e) => e,
            };
        }
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
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.mode, Mode::Algorithm, "One algorithm")
                .on_hover_text("Time the variants of one algorithm");
            ui.selectable_value(&mut self.mode, Mode::Sorts, "Sort family")
                .on_hover_text(
                    "Time every sort of whole arrays in one sweep (odd-even, radix), with the peers of a suite result",
                );
        });
        match self.mode {
            Mode::Algorithm => live_changed |= self.algorithm_controls(ui),
            Mode::Sorts => {
                self.sorts.controls(ui);
                self.suite_row(ui, &ctx);
            }
        }
        ui.horizontal_wrapped(|ui| {
            ui.add(egui::Slider::new(&mut self.log_lo, 10..=max_log).text("from log2 N"))
                .on_hover_text("Smallest N of the sweep");
            ui.add(egui::Slider::new(&mut self.log_hi, 10..=max_log).text("to log2 N"))
                .on_hover_text("Largest N of the sweep");
            self.log_hi = self.log_hi.max(self.log_lo);
            ui.add(egui::Slider::new(&mut self.reps, 3..=200).text("reps"))
                .on_hover_text("Timed repetitions per point (median shown)");
            ui.add(egui::Slider::new(&mut self.warmup_ms, 0.0..=2000.0).text("warm-up ms"))
                .on_hover_text(
                    "Before every point and its same-run copy: run it back to back this long (wall time) so the GPU's clocks ramp up, then 3 counted runs",
                );
        });
        ui.horizontal_wrapped(|ui| live_changed |= self.action_row(ui, gpu, &ctx, max_log));
        if live_changed {
            self.live_dirty = true;
        }
        if self.mode == Mode::Algorithm && self.live && self.live_dirty && !self.is_running() {
            self.live_dirty = false;
            self.start(gpu, &ctx, vec![1usize << self.live_log_n]);
        }
        ui.label(&self.status);
        self.wisdom_lines(ui);
        let rows = match self.mode {
            Mode::Algorithm => &self.rows,
            Mode::Sorts => &self.sorts.rows,
        };
        if let Some(note) = plot::suspect_note(rows) {
            ui.colored_label(egui::Color32::from_rgb(230, 60, 60), note);
        }
        match self.mode {
            Mode::Algorithm => {
                self.live_readout(ui);
                self.plot_algorithm(ui, gpu);
            }
            Mode::Sorts => self.plot_rect = Some(self.sorts.show(ui, gpu)),
        }
        if let Some(p) = self.png_target.take() {
            self.shoot_plot(&ctx, p);
        }
    }

    /// Whether the running sweep measured `r` with options from wisdom.
    fn took_wisdom(&self, r: &BenchRow) -> bool {
        self.filled.iter().any(|f| {
            f.algorithm == r.algorithm.name() && f.variant == r.variant && f.n as u64 == r.n
        })
    }

    /// The Use wisdom toggle (in the action row, both modes).
    fn wisdom_toggle(&mut self, ui: &mut egui::Ui) {
        let tip = match &self.wisdom {
            Some(w) => format!(
                "Fill the options you leave unset with this GPU's tuned defaults ({}), as stagewise bench does; off: the built-in defaults, to compare",
                w.from
            ),
            None => "No wisdom for this GPU (Help > Tune this GPU… measures it): the built-in defaults either way".into(),
        };
        ui.checkbox(&mut self.use_wisdom, "Use wisdom")
            .on_hover_text(tip);
    }

    /// What the last sweep took from wisdom: "wisdom: bmmc tiled at 2^20–2^22: tile_bits=13
    /// (from FILE)", a line per choice; or that there is none.
    fn wisdom_lines(&self, ui: &mut egui::Ui) {
        if self.use_wisdom && self.wisdom.is_none() {
            ui.small(
                "no wisdom for this GPU: the built-in defaults (Help > Tune this GPU… measures it)",
            );
        }
        if let Some(m) = &self.wisdom_refused {
            ui.colored_label(
                egui::Color32::from_rgb(230, 150, 60),
                format!("wisdom: {m}"),
            );
        }
        let Some(from) = &self.filled_from else {
            return;
        };
        if self.filled.is_empty() {
            if !self.is_running() {
                ui.small(format!(
                    "wisdom ({from}): nothing to fill for these variants and sizes"
                ));
            }
            return;
        }
        for line in filled_lines(&self.filled) {
            ui.label(format!("wisdom: {line} (from {from})"));
        }
    }

    /// Run / cancel, live (one algorithm), clear, exports.
    fn action_row(
        &mut self,
        ui: &mut egui::Ui,
        gpu: &Gpu,
        ctx: &egui::Context,
        max_log: u32,
    ) -> bool {
        let mut live_changed = false;
        if let Some(run) = &self.running {
            if ui
                .button("Cancel")
                .on_hover_text("Stop after the current repetition")
                .clicked()
            {
                run.worker.stop();
            }
            let (d, t) = self.progress;
            ui.add(
                egui::ProgressBar::new(if t > 0 { d as f32 / t as f32 } else { 0.0 })
                    .desired_width(160.0)
                    .show_percentage(),
            );
            // No spinner: it redraws the window every frame, and those frames share the device
            // (on a CPU adapter, the cores) with the kernels being timed. Each result redraws.
        } else if ui
            .button("Run sweep")
            .on_hover_text(match self.mode {
                Mode::Algorithm => "Time every selected variant at every N (timed mode, medians)",
                Mode::Sorts => "Time every selected sort at every N, one dtype, one repetition count (timed mode, medians)",
            })
            .clicked()
        {
            let sizes = self.sizes();
            self.start(gpu, ctx, sizes);
        }
        self.wisdom_toggle(ui);
        if self.mode == Mode::Algorithm {
            ui.checkbox(&mut self.live, "Live")
                .on_hover_text("Re-measure at the N below whenever a control moves");
            live_changed |= ui
                .add(egui::Slider::new(&mut self.live_log_n, 10..=max_log).text("live log2 N"))
                .on_hover_text("N for live measurements")
                .changed();
        }
        if ui
            .button("Clear")
            .on_hover_text("Forget all measurements")
            .clicked()
        {
            match self.mode {
                Mode::Algorithm => self.rows.clear(),
                Mode::Sorts => {
                    self.sorts.rows.clear();
                    self.sorts.skipped.clear();
                }
            }
        }
        let empty = match self.mode {
            Mode::Algorithm => self.rows.is_empty(),
            Mode::Sorts => self.sorts.rows.is_empty() && self.sorts.overlay.is_none(),
        };
        ui.add_enabled_ui(!empty, |ui| {
            if ui
                .button("Export CSV")
                .on_hover_text("Save the measurements as CSV")
                .clicked()
            {
                self.export(ctx, "csv");
            }
            if ui
                .button("Export JSON")
                .on_hover_text(match self.mode {
                    Mode::Algorithm => "Save the measurements as JSON",
                    Mode::Sorts => {
                        "Save the measurements as JSON, with the loaded suite result's overlay"
                    }
                })
                .clicked()
            {
                self.export(ctx, "json");
            }
            if ui
                .button("Export PNG")
                .on_hover_text("Save the plot as a PNG image")
                .clicked()
            {
                self.request_png(ctx);
            }
        });
        live_changed
    }
}

/// What a sweep took from wisdom, one line per algorithm, variant and choice, its sizes joined
/// into ranges: "bmmc tiled at 2^10–2^12: tile_bits=13".
pub fn filled_lines(filled: &[Filled]) -> Vec<String> {
    let mut by: BTreeMap<(&str, &str, String), Vec<u32>> = BTreeMap::new();
    for f in filled {
        by.entry((f.algorithm, f.variant, f.applied.describe()))
            .or_default()
            .push(f.n.max(1).ilog2());
    }
    by.into_iter()
        .map(|((a, v, what), mut ks)| {
            ks.sort_unstable();
            ks.dedup();
            let mut runs: Vec<(u32, u32)> = Vec::new();
            for k in ks {
                match runs.last_mut() {
                    Some((_, hi)) if *hi + 1 == k => *hi = k,
                    _ => runs.push((k, k)),
                }
            }
            let sizes: Vec<String> = runs
                .iter()
                .map(|&(lo, hi)| {
                    if lo == hi {
                        format!("2^{lo}")
                    } else {
                        format!("2^{lo}–2^{hi}")
                    }
                })
                .collect();
            format!("{a} {v} at {}: {what}", sizes.join(", "))
        })
        .collect()
}
