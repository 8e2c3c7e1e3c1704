//! One view per algorithm, drawing a [`RunResult`]'s stages. Views read trace data only.

pub mod bitrev;
pub mod bmmc;
pub mod fft;
pub mod fft_large;
pub mod generic;
pub mod kernel;
pub mod oddeven;
pub mod radix;
pub mod scan;

use crate::algo::{Algo, RunResult};
use crate::ui::colors;
use eframe::egui::{self, Color32};

/// State the views keep between frames (caches, picked elements).
#[derive(Default)]
pub struct ViewState {
    pub strip: super::strip::StripCache,
    /// Bit-reversal: the original index at every position after each stage, for the result key
    /// (recomputed per frame it cost 2^20 · 21 words at the largest N).
    pub bitrev_origins: Option<(u64, std::rc::Rc<Vec<Vec<u32>>>)>,
    /// Demo A: the index whose reversal is shown.
    pub demo_a_index: u32,
    /// bmmc: tab, editor matrix, image textures, stats; `apply` asks the app to run a matrix.
    pub bmmc: bmmc::BmmcState,
    /// Odd-even: show the bar view of the current stage.
    pub oddeven_bars: bool,
    /// scan: the picked cell whose dependencies are highlighted.
    pub scan_pick: Option<usize>,
    /// The FFT view's own controls (size, E, signal, order, mode).
    pub fft: fft::FftControls,
    /// The large FFT view's colouring, pick and diagram.
    pub fft_large: fft_large::LargeState,
    /// The user's kernel: the expected op's permutation for the result key (None: no permutation).
    pub kernel_gather: Option<(u64, Option<std::rc::Rc<Vec<u32>>>)>,
    /// Set by a view to ask the app to run these options (with the algorithm's generated input).
    pub rerun: Option<crate::algo::AlgoOptions>,
}

/// Draw the result's current stage with the algorithm's own view.
pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    match result.algorithm {
        Algo::Bitrev => bitrev::show(ui, result, stage, key, state),
        Algo::Bmmc => bmmc::show(ui, result, stage, key, state),
        Algo::Oddeven => oddeven::show(ui, result, stage, key, state),
        Algo::Scan => scan::show(ui, result, stage, key, state),
        Algo::Radix => radix::show(ui, result, stage, key, state),
        Algo::Fft => fft::show(ui, result, stage, key, state),
        Algo::Kernel => kernel::show(ui, result, stage, key, state),
        Algo::Copy => generic::show(ui, result, stage, key, state),
    }
}

/// Cells no narrower than this are drawn with their values; below it, the colour strip.
pub const MIN_CELL: f32 = 26.0;

/// A value cell: `rect` less a one-point margin filled with `bg` (corners of `radius`), and its
/// `text` ([`cell_text`]).
pub fn value_cell(
    p: &egui::Painter,
    rect: egui::Rect,
    radius: f32,
    bg: Color32,
    text: String,
    size: f32,
) {
    p.rect_filled(rect.shrink(1.0), radius, bg);
    cell_text(p, rect, bg, text, size);
}

/// A cell's text: centred on `rect` in a monospace font of `size`, readable on `bg`.
pub fn cell_text(p: &egui::Painter, rect: egui::Rect, bg: Color32, text: String, size: f32) {
    p.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        text,
        egui::FontId::monospace(size),
        colors::text_on(bg),
    );
}

/// Summary statistics of a stage for arrays too large to inspect element by element.
pub fn summary(ui: &mut egui::Ui, data: &crate::data::Data) {
    let n = data.len();
    let (mut lo, mut hi, mut sum, mut nonfinite) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize);
    for i in 0..n {
        let v = data.as_f64(i);
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
            sum += v;
        } else {
            nonfinite += 1;
        }
    }
    let ascending = (1..n)
        .filter(|&i| data.as_f64(i - 1) <= data.as_f64(i))
        .count();
    ui.label(format!(
        "N = {n} · min {lo} · max {hi} · mean {:.4} · non-finite {nonfinite} · {:.1}% of neighbours ascending",
        sum / (n - nonfinite).max(1) as f64,
        100.0 * ascending as f64 / (n.max(2) - 1) as f64
    ));
}
