//! A plain view for any trace: the array of every stage as cells (small N) or a colour strip.

use super::ViewState;
use crate::algo::RunResult;
use crate::ui::colors;
use eframe::egui::{self, Color32};

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    let Some(st) = result.stages.get(stage) else {
        ui.label("Run with a trace to see the stages.");
        return;
    };
    ui.heading(&st.label);
    let n = st.data.len();
    let (lo, hi) = (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
        let v = st.data.as_f64(i);
        if v.is_finite() {
            (lo.min(v), hi.max(v))
        } else {
            (lo, hi)
        }
    });
    let shade = |v: f64| -> Color32 {
        if !v.is_finite() || hi <= lo {
            return Color32::GRAY;
        }
        let t = ((v - lo) / (hi - lo)) as f32;
        colors::index_color((t * 1000.0) as usize, 1001)
    };
    let cell = (ui.available_width() - 100.0) / n as f32;
    if cell >= super::MIN_CELL {
        for (r, s) in result.stages.iter().enumerate().take(stage + 1) {
            ui.horizontal(|ui| {
                ui.add_sized([96.0, 22.0], egui::Label::new(&s.label));
                for i in 0..n {
                    let bg = shade(s.data.as_f64(i));
                    let (rect, _) =
                        ui.allocate_exact_size(egui::vec2(cell, 22.0), egui::Sense::hover());
                    super::value_cell(ui.painter(), rect, 2.0, bg, s.data.fmt_elem(i), 11.0);
                }
                if r == stage {
                    ui.label("<- current");
                }
            });
        }
    } else {
        super::summary(ui, &st.data);
        state
            .strip
            .show_values(ui, key, n, &result.stages, &shade, stage);
    }
}
