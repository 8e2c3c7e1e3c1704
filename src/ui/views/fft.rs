//! The FFT view (seed 003): the thread-ownership diagram — columns = steps, rows = logical
//! positions with their binary and `local|thread` labels, colour = thread, lo/hi marked, exchanges as
//! arrows, "X holds Y" at the end — plus the FFT's own controls (size, elements per invocation,
//! signal, order, mode) and magnitude/phase plots of the input and the spectrum.

use super::ViewState;
use crate::algo::fft::facts::Facts;
use crate::algo::fft::{Kernel, Mode, Options, Order, Signal, model, model::StepKind};
use crate::algo::{AlgoOptions, RunResult, Stage};
use crate::ui::colors;
use eframe::egui::{self, Color32, Pos2, Rect, Stroke, StrokeKind, vec2};
use egui_plot::{Legend, Line, Plot, PlotPoints};

/// The view's own controls (kept between frames).
#[derive(Clone, Debug)]
pub struct FftControls {
    pub log_n: u32,
    pub log_e: u32,
    pub signal: Signal,
    pub order: Order,
    /// 0 complex, 1 real-only, 2 real pair.
    pub mode: u8,
    pub inverse: bool,
    /// `--kernel large` (the N1 × N2 passes) with N1 = 2^log_split.
    pub large: bool,
    pub log_split: u32,
    pub init: bool,
}

impl Default for FftControls {
    fn default() -> Self {
        FftControls {
            log_n: 4,
            log_e: 1,
            signal: Signal::Sines,
            order: Order::Raw,
            mode: 0,
            inverse: false,
            large: false,
            log_split: 2,
            init: false,
        }
    }
}

/// The run's FFT facts (None: not an FFT result, e.g. a stale one while a run starts).
pub(super) fn facts(r: &RunResult) -> Option<Facts> {
    r.facts::<Facts>()
}

/// Each invocation's elements E of a workgroup kernel's run (at least 2).
fn elements(r: &RunResult) -> usize {
    facts(r)
        .and_then(|f| f.elements_per_invocation)
        .unwrap_or(2)
        .max(2)
}

/// Per logical position of `st`: the thread holding it.
fn owners(st: &Stage) -> Vec<usize> {
    st.fft()
        .map(|n| n.owner.iter().map(|&t| t as usize).collect())
        .unwrap_or_default()
}

/// Per logical position of `st`: whether it is its thread's lo value.
fn los(st: &Stage) -> Vec<bool> {
    st.fft().map(|n| n.lo.clone()).unwrap_or_default()
}

/// The step's kind and stride (None for a stage without FFT notes).
fn step_of(st: &Stage) -> (Option<StepKind>, usize) {
    st.fft().map_or((None, 0), |n| (Some(n.kind), n.stride))
}

fn bin(x: usize, bits: u32) -> String {
    if bits == 0 {
        return String::new();
    }
    format!("{x:0w$b}", w = bits as usize)
}

/// The FFT's own controls (shared with the large view); a change asks the app for a run.
pub(super) fn controls(ui: &mut egui::Ui, result: &RunResult, state: &mut ViewState) {
    let c = &mut state.fft;
    if !c.init {
        let n = result.n.max(2);
        c.log_n = n.trailing_zeros();
        c.log_e = elements(result).trailing_zeros();
        let f = facts(result);
        c.order = f.as_ref().map_or(Order::Raw, |f| f.order);
        c.mode = match f.as_ref().map(|f| f.mode) {
            Some(Mode::Real) => 1,
            Some(Mode::Pair) => 2,
            _ => 0,
        };
        c.large = f.as_ref().is_some_and(|f| f.kernel == Kernel::Large);
        c.log_split = f
            .and_then(|f| f.split)
            .map_or(c.log_n / 2, |[n1, _]| n1.max(2).trailing_zeros());
        c.init = true;
    }
    let mut run = false;
    ui.horizontal_wrapped(|ui| {
        ui.label("FFT size 2^");
        let max_log = if c.large { 16 } else { 12 };
        run |= ui
            .add(egui::Slider::new(&mut c.log_n, 1..=max_log).text("log2 N"))
            .on_hover_text("FFT size N = 2^k (the trace needs N <= 8192 on a 32 KiB adapter)")
            .changed();
        run |= ui
            .checkbox(&mut c.large, "large plan")
            .on_hover_text(
                "--kernel large: the four-step passes (N1-point column FFTs with fused twiddles, then N2-point row FFTs stored through a transpose) at any size",
            )
            .changed();
        // The second slider (the split, or E) and what the sizes come to.
        let (v, hi, text, hover) = if c.large {
            c.log_n = c.log_n.max(2);
            (
                &mut c.log_split,
                c.log_n - 1,
                "log2 N1 (split)",
                "--split N1: the column FFTs' size; N2 = N / N1 is the row FFTs' size",
            )
        } else {
            c.log_n = c.log_n.min(12);
            (
                &mut c.log_e,
                c.log_n,
                "log2 E",
                "Elements per invocation E = 2^e; WorkgroupSize W = N / E",
            )
        };
        *v = (*v).clamp(1, hi);
        run |= ui
            .add(egui::Slider::new(v, 1..=hi).text(text))
            .on_hover_text(hover)
            .changed();
        let (n, k) = (1usize << c.log_n, c.log_n);
        ui.label(if c.large {
            format!("N = {n} = N1 {} × N2 {}", 1usize << c.log_split, 1usize << (k - c.log_split))
        } else {
            format!("N = {n}  E = {}  W = {}", 1usize << c.log_e, 1usize << (k - c.log_e))
        });
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("Signal");
        for (s, name) in [
            (Signal::Impulse, "impulse"),
            (Signal::Sines, "sines"),
            (Signal::Square, "square"),
            (Signal::Noise, "noise"),
            (Signal::TwoReal, "two real"),
        ] {
            if ui
                .selectable_label(c.signal == s, name)
                .on_hover_text("The input signal")
                .clicked()
            {
                c.signal = s;
                if s == Signal::TwoReal {
                    c.mode = 2;
                }
                run = true;
            }
        }
        ui.separator();
        for (m, name, tip) in [
            (0u8, "complex", "A complex FFT of N points"),
            (
                1,
                "real-only",
                "A real signal: the FFT keeps half the spectrum",
            ),
            (
                2,
                "real pair",
                "Two real signals packed into one complex FFT",
            ),
        ] {
            if ui
                .selectable_label(c.mode == m, name)
                .on_hover_text(tip)
                .clicked()
            {
                c.mode = m;
                run = true;
            }
        }
        ui.separator();
        for (o, name, tip) in [
            (
                Order::Raw,
                "raw (Nabla)",
                "Output in the kernel's raw order: output[x] = DFT[F(x)]",
            ),
            (
                Order::Natural,
                "natural",
                "Output in natural order: output[k] = DFT[k]",
            ),
        ] {
            if ui
                .selectable_value(&mut c.order, o, name)
                .on_hover_text(tip)
                .clicked()
            {
                run = true;
            }
        }
        run |= ui
            .checkbox(&mut c.inverse, "inverse")
            .on_hover_text(
                "The unnormalised inverse FFT (conjugate twiddles; inverse(forward(x)) = N·x)",
            )
            .changed();
        run |= ui
            .button("Run FFT")
            .on_hover_text("Run the FFT on the GPU with these settings")
            .clicked();
    });
    if run {
        state.rerun = Some(AlgoOptions::Fft(Options {
            size: Some(1 << c.log_n),
            elements_per_invocation: (!c.large).then_some(1 << c.log_e),
            workgroup_size: None,
            order: c.order,
            inverse: c.inverse,
            real: c.mode == 1,
            real_pair: c.mode == 2,
            batch: 1,
            signal: c.signal,
            kernel: if c.large { Kernel::Large } else { Kernel::Auto },
            split: c.large.then_some(1 << c.log_split),
            ..Default::default()
        }));
    }
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    if super::fft_large::is_large(result) {
        return super::fft_large::show(ui, result, stage, key, state);
    }
    controls(ui, result, state);
    ui.separator();
    let n = result.n;
    let e = elements(result);
    let w = (n / e).max(1);
    if result.stages.is_empty() {
        ui.label("Run with a trace to see the thread-ownership diagram.");
        plots(ui, result);
        return;
    }
    let stage = stage.min(result.stages.len() - 1);
    let st = &result.stages[stage];
    let (kind, stride) = step_of(st);
    let what = match kind {
        Some(StepKind::Input) => {
            format!("Input: thread t holds t + j*{w} (j < {e}); pairs at stride {stride}")
        }
        Some(StepKind::Butterfly) => {
            format!("Butterfly at stride {stride}: lo' = lo + hi, hi' = (lo - hi)*w")
        }
        Some(StepKind::Regroup) => format!(
            "Stride {stride} >= W = {w}: no exchange, each thread re-pairs its own lo and hi"
        ),
        Some(StepKind::Exchange) => format!(
            "Exchange with thread t ^ {stride}: the lower thread trades its hi for the higher thread's lo"
        ),
        _ => st.label.clone(),
    };
    ui.heading(format!("Step {stage}: {what}"));
    ui.label(format!(
        "N = {n}, ElementsPerInvocation = {e}, WorkgroupSize = {w}; rows: logical position (binary, local|thread); colour: thread; filled dot = lo, ring = hi; verified: {}",
        result.verified
    ));
    let avail = ui.available_height();
    egui::ScrollArea::both()
        .id_salt("fft-diagram")
        .max_height(avail * 0.6)
        .show(ui, |ui| {
            if n <= 128 {
                diagram(ui, &result.stages, stage, n, w);
            } else {
                let owners: Vec<Vec<usize>> = result.stages.iter().map(owners).collect();
                let los: Vec<Vec<bool>> = result.stages.iter().map(los).collect();
                state.strip.show(
                    ui,
                    key,
                    n,
                    result.stages.len(),
                    &|r, i| {
                        let c = colors::thread_color(owners[r].get(i).copied().unwrap_or(0));
                        if los[r].get(i).copied().unwrap_or(true) {
                            c
                        } else {
                            c.gamma_multiply(0.6)
                        }
                    },
                    &|r| result.stages[r].label.clone(),
                    stage,
                );
            }
        });
    if let Some(ny) = facts(result).and_then(|f| f.nyquist) {
        ui.label(format!(
            "Nyquist (frequency {}) sits at raw position {} = thread 0, its second element{}",
            ny.frequency,
            ny.raw_position,
            ny.packed_into
                .map(|s| format!(" - {s}"))
                .unwrap_or_default()
        ));
    }
    plots(ui, result);
}

/// The thread-ownership diagram of `stages` (each with the FFT's step notes) up to `stage`.
pub(super) fn diagram(ui: &mut egui::Ui, stages: &[Stage], stage: usize, n: usize, w: usize) {
    let log_n = n.trailing_zeros();
    let log_w = w.trailing_zeros();
    let log_e = log_n - log_w;
    let cols = stages.len();
    let row_h = 22.0;
    let col_w = 46.0;
    let gap = 26.0;
    let left = 110.0;
    let right = 170.0;
    let head = 20.0;
    let width = left + cols as f32 * (col_w + gap) + right;
    let height = head + n as f32 * row_h + 6.0;
    let (rect, _) = ui.allocate_exact_size(vec2(width, height), egui::Sense::hover());
    let p = ui.painter_at(rect);
    let text_col = ui.visuals().text_color();
    let font = egui::FontId::monospace(11.0);
    let x0 = rect.left() + left;
    let y0 = rect.top() + head;
    let cell = |c: usize, r: usize| {
        Rect::from_min_size(
            Pos2::new(x0 + c as f32 * (col_w + gap), y0 + r as f32 * row_h),
            vec2(col_w, row_h - 3.0),
        )
    };
    // Row labels: p in binary and as local|thread.
    for r in 0..n {
        let y = y0 + r as f32 * row_h + (row_h - 3.0) / 2.0;
        let lt = format!("{}|{}", bin(r >> log_w, log_e), bin(r & (w - 1), log_w));
        p.text(
            Pos2::new(rect.left() + 2.0, y),
            egui::Align2::LEFT_CENTER,
            format!("{} {}", bin(r, log_n), lt),
            font.clone(),
            text_col,
        );
    }
    let owners: Vec<Vec<usize>> = stages.iter().map(owners).collect();
    let los: Vec<Vec<bool>> = stages.iter().map(los).collect();
    for c in 0..cols {
        let s = &stages[c];
        let (kind, stride) = step_of(s);
        let head_txt = match kind {
            Some(StepKind::Input) => "in".to_string(),
            Some(StepKind::Butterfly) => format!("bf {stride}"),
            Some(StepKind::Regroup) => format!("rg {stride}"),
            Some(StepKind::Exchange) => format!("^{stride}"),
            _ => String::new(),
        };
        let hx = x0 + c as f32 * (col_w + gap) + col_w / 2.0;
        p.text(
            Pos2::new(hx, rect.top() + 2.0),
            egui::Align2::CENTER_TOP,
            head_txt,
            egui::FontId::proportional(11.0),
            if c == stage {
                ui.visuals().strong_text_color()
            } else {
                text_col
            },
        );
        let shown = c <= stage;
        for r in 0..n {
            let t = owners[c].get(r).copied().unwrap_or(0);
            let lo = los[c].get(r).copied().unwrap_or(true);
            let rc = cell(c, r);
            let mut bg = colors::thread_color(t);
            if !shown {
                bg = bg.gamma_multiply(0.15);
            }
            p.rect_filled(rc, 3.0, bg);
            if c == stage {
                p.rect_stroke(rc, 3.0, Stroke::new(1.5, text_col), StrokeKind::Outside);
            }
            if shown {
                let fg = colors::text_on(bg);
                let dot = Pos2::new(rc.left() + 7.0, rc.center().y);
                if lo {
                    p.circle_filled(dot, 3.5, fg);
                } else {
                    p.circle_stroke(dot, 3.5, Stroke::new(1.2, fg));
                }
                p.text(
                    Pos2::new(rc.left() + 14.0, rc.center().y),
                    egui::Align2::LEFT_CENTER,
                    format!("t{t}"),
                    font.clone(),
                    fg,
                );
            }
            // Arrows between columns: a position that changes thread.
            if c > 0 && shown {
                let prev = owners[c - 1].get(r).copied().unwrap_or(0);
                let a = Pos2::new(cell(c - 1, r).right() + 2.0, rc.center().y);
                let b = Pos2::new(rc.left() - 2.0, rc.center().y);
                if prev != t {
                    let col = colors::thread_color(t);
                    p.arrow(a, b - a, Stroke::new(2.5, col));
                } else {
                    p.line_segment([a, b], Stroke::new(1.0, Color32::from_gray(120)));
                }
            }
        }
    }
    // "X holds Y" at the end.
    if stage + 1 == cols
        && let Some(last) = stages.last()
    {
        let holds = last
            .fft()
            .and_then(|n| n.dft_index.clone())
            .unwrap_or_default();
        let written = last
            .fft()
            .and_then(|n| n.written_to.clone())
            .unwrap_or_default();
        let xr = x0 + cols as f32 * (col_w + gap) - gap + 8.0;
        for r in 0..n.min(holds.len()).min(written.len()) {
            let x = written[r];
            let y = y0 + r as f32 * row_h + (row_h - 3.0) / 2.0;
            p.text(
                Pos2::new(xr, y),
                egui::Align2::LEFT_CENTER,
                format!(
                    "{}|{} ({x:>2}) holds {:>2}",
                    bin(x >> log_w, log_e),
                    bin(x & (w - 1), log_w),
                    holds[r]
                ),
                font.clone(),
                colors::thread_color(owners[cols - 1].get(r).copied().unwrap_or(0)),
            );
        }
    }
}

/// The first FFT's input and spectrum (natural frequency order), magnitude and phase.
fn plots(ui: &mut egui::Ui, result: &RunResult) {
    let n = result.n;
    let e = elements(result);
    let f = facts(result);
    let mode = f.as_ref().map_or(Mode::Complex, |f| f.mode);
    let natural = f.is_some_and(|f| f.order == Order::Natural);
    let (ln, le) = (n.trailing_zeros(), e.trailing_zeros());
    let inp = result.input.f32s();
    let input: Vec<(f64, f64)> = if mode == Mode::Real {
        inp.iter().take(n).map(|&x| (x as f64, 0.0)).collect()
    } else {
        inp.chunks_exact(2)
            .take(n)
            .map(|c| (c[0] as f64, c[1] as f64))
            .collect()
    };
    let out: Vec<(f64, f64)> = result
        .output
        .f32s()
        .chunks_exact(2)
        .map(|c| (c[0] as f64, c[1] as f64))
        .collect();
    // Spectra in natural order: (name, values).
    let mut spectra: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let to_natural = |raw: &[(f64, f64)]| -> Vec<(f64, f64)> {
        (0..n.min(raw.len()))
            .map(|k| raw[model::f_inv(k, ln, le)])
            .collect()
    };
    match mode {
        Mode::Pair => {
            // One FFT's output is X's spectrum, then Y's (n/2 + 1 values each in natural order,
            // n in raw order): the first FFT's two halves.
            let half = if natural { n / 2 + 1 } else { n };
            for (name, part) in [("x", 0), ("y", 1)] {
                let v = out
                    .get(part * half..(part + 1) * half)
                    .unwrap_or(&[])
                    .to_vec();
                let v = if natural || v.is_empty() {
                    v
                } else {
                    to_natural(&v)[..n / 2 + 1].to_vec()
                };
                spectra.push((format!("|DFT {name}|"), v));
            }
        }
        Mode::Real => {
            let mut v: Vec<(f64, f64)> = out.iter().take(n / 2).copied().collect();
            if !natural {
                v = (0..n / 2)
                    .map(|k| v[model::bitrev(k, ln.saturating_sub(1))])
                    .collect();
            }
            if let Some(first) = v.first_mut() {
                *first = (first.0, 0.0); // DC only (Nyquist is packed in the imaginary part)
            }
            spectra.push(("|X| (bins 0...N/2-1)".into(), v));
        }
        Mode::Complex => {
            let v: Vec<(f64, f64)> = out.iter().take(n).copied().collect();
            let v = if natural { v } else { to_natural(&v) };
            spectra.push(("|X|".into(), v));
        }
    }
    let h = (ui.available_height() - 10.0).max(140.0);
    ui.columns(2, |cols| {
        Plot::new("fft-input")
            .legend(Legend::default())
            .height(h)
            .show(&mut cols[0], |p| {
                let re: PlotPoints = input
                    .iter()
                    .enumerate()
                    .map(|(i, c)| [i as f64, c.0])
                    .collect();
                let im: PlotPoints = input
                    .iter()
                    .enumerate()
                    .map(|(i, c)| [i as f64, c.1])
                    .collect();
                p.line(Line::new("input re", re));
                p.line(Line::new("input im", im));
            });
        Plot::new("fft-spectrum")
            .legend(Legend::default())
            .height(h)
            .show(&mut cols[1], |p| {
                for (name, v) in &spectra {
                    let mag: PlotPoints = v
                        .iter()
                        .enumerate()
                        .map(|(k, c)| [k as f64, c.0.hypot(c.1)])
                        .collect();
                    let phase: PlotPoints = v
                        .iter()
                        .enumerate()
                        .map(|(k, c)| {
                            let m = c.0.hypot(c.1);
                            [k as f64, if m > 1e-6 { c.1.atan2(c.0) } else { 0.0 }]
                        })
                        .collect();
                    p.line(Line::new(name.clone(), mag));
                    p.line(Line::new(
                        format!("phase {}", &name[1..name.len() - 1]),
                        phase,
                    ));
                }
            });
    });
}
