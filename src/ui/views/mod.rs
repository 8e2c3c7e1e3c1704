//! One view per algorithm, drawing a [`RunResult`]'s stages. Views read trace data only.

pub mod bitrev;
pub mod fft;
pub mod generic;

use crate::algo::RunResult;
use eframe::egui;

/// State the views keep between frames (caches, picked elements).
#[derive(Default)]
pub struct ViewState {
    pub strip: super::strip::StripCache,
    /// Demo A: the index whose reversal is shown.
    pub demo_a_index: u32,
    /// The FFT view's own controls (size, E, signal, order, mode).
    pub fft: fft::FftControls,
    /// Set by a view to ask the app to run these options (with the algorithm's generated input).
    pub rerun: Option<crate::algo::AlgoOptions>,
}

/// Draw the result's current stage with the algorithm's own view.
pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    match result.algorithm.as_str() {
        "bitrev" => bitrev::show(ui, result, stage, key, state),
        "fft" => fft::show(ui, result, stage, key, state),
        _ => generic::show(ui, result, stage, key, state),
    }
}

/// Cells no narrower than this are drawn with their values; below it, the colour strip.
pub const MIN_CELL: f32 = 26.0;
