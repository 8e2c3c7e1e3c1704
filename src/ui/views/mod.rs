//! One view per algorithm, drawing a [`RunResult`]'s stages. Views read trace data only.

pub mod bitrev;
pub mod generic;
pub mod scan;

use crate::algo::RunResult;
use eframe::egui;

/// State the views keep between frames (caches, picked elements).
#[derive(Default)]
pub struct ViewState {
    pub strip: super::strip::StripCache,
    /// Demo A: the index whose reversal is shown.
    pub demo_a_index: u32,
    /// scan: the picked cell whose dependencies are highlighted.
    pub scan_pick: Option<usize>,
}

/// Draw the result's current stage with the algorithm's own view.
pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    match result.algorithm.as_str() {
        "bitrev" => bitrev::show(ui, result, stage, key, state),
        "scan" => scan::show(ui, result, stage, key, state),
        _ => generic::show(ui, result, stage, key, state),
    }
}

/// Cells no narrower than this are drawn with their values; below it, the colour strip.
pub const MIN_CELL: f32 = 26.0;
