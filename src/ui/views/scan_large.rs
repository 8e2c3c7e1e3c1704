//! Prefix-sum views beside the phase view: the Blelloch tree, large arrays as colour strips, and
//! the decoupled scan's per-tile look-back table.

use super::*;

/// Blelloch's implicit tree in heap order (root 0, l_child = 2i+1, r_child = 2i+2): every node with
/// its value (the array cell at its right end), the working level highlighted.
pub(super) fn tree(ui: &mut egui::Ui, result: &RunResult, stage: usize, _state: &mut ViewState) {
    let st = &result.stages[stage];
    let big = nt(st).padded_to.unwrap_or(st.data.len());
    let log_n = big.trailing_zeros() as usize;
    if log_n == 0 || big > 64 {
        ui.label(format!(
            "Tree: {log_n} levels over {big} leaves (drawn up to 64 leaves)."
        ));
        return;
    }
    let level = nt(st).level.unwrap_or(0) as usize;
    let dir = nt(st).direction.unwrap_or("");
    ui.label(
        RichText::new(format!(
            "Implicit tree, heap indexing: l_child = 2i+1, r_child = 2i+2 · {dir} level {level}"
        ))
        .strong(),
    );
    let w = ui.available_width().min(900.0);
    let h = 34.0 * (log_n + 1) as f32;
    let (rect, _) = ui.allocate_exact_size(egui::vec2(w, h), Sense::hover());
    let p = ui.painter();
    let pos = |lvl: usize, j: usize| {
        // Level `lvl` (0 = leaves) has big >> lvl nodes.
        let count = big >> lvl;
        let x = rect.left() + w * (j as f32 + 0.5) / count as f32;
        let y = rect.top() + 14.0 + 34.0 * (log_n - lvl) as f32;
        egui::pos2(x, y)
    };
    for lvl in 1..=log_n {
        for j in 0..big >> lvl {
            for child in [2 * j, 2 * j + 1] {
                let down = dir == "down" && lvl == level;
                let up = dir == "up" && lvl == level;
                let col = if up || down {
                    colors::thread_color(j)
                } else {
                    Color32::DARK_GRAY
                };
                p.line_segment(
                    [pos(lvl, j), pos(lvl - 1, child)],
                    Stroke::new(if up || down { 2.0 } else { 1.0 }, col),
                );
            }
        }
    }
    for lvl in 0..=log_n {
        let count = big >> lvl;
        for j in 0..count {
            let c = pos(lvl, j);
            let heap = (1usize << (log_n - lvl)) - 1 + j;
            let arr = j * (1 << lvl) + (1 << lvl) - 1;
            let working = lvl == level && (dir == "up" || dir == "down");
            let bg = if working {
                colors::thread_color(j)
            } else {
                Color32::from_rgb(55, 65, 80)
            };
            let r = egui::Rect::from_center_size(c, egui::vec2(30.0, 22.0));
            p.rect_filled(r, 4.0, bg);
            let v = if arr < st.data.len() {
                st.data.fmt_elem(arr)
            } else {
                String::new()
            };
            p.text(
                c - egui::vec2(0.0, 3.0),
                egui::Align2::CENTER_CENTER,
                v,
                egui::FontId::monospace(9.0),
                colors::text_on(bg),
            );
            p.text(
                c + egui::vec2(0.0, 7.0),
                egui::Align2::CENTER_CENTER,
                format!("h{heap}"),
                egui::FontId::monospace(7.0),
                colors::text_on(bg),
            );
        }
    }
}

/// Large arrays: a colour strip (value shading) of every stage, and the counters.
pub(super) fn big(
    ui: &mut egui::Ui,
    result: &RunResult,
    stage: usize,
    key: u64,
    state: &mut ViewState,
) {
    let stages = &result.stages;
    let n = stages.iter().map(|s| s.data.len()).max().unwrap_or(0);
    let (lo, hi) = stages
        .iter()
        .flat_map(|s| (0..s.data.len()).map(move |i| s.data.as_f64(i)))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            if v.is_finite() {
                (lo.min(v), hi.max(v))
            } else {
                (lo, hi)
            }
        });
    let shade = move |v: f64| -> Color32 {
        if !v.is_finite() || hi <= lo {
            return Color32::GRAY;
        }
        colors::index_color((((v - lo) / (hi - lo)) * 1000.0) as usize, 1001)
    };
    state.strip.show(
        ui,
        key,
        n,
        stages.len(),
        &|r, i| {
            let d = &stages[r].data;
            if i < d.len() {
                shade(d.as_f64(i))
            } else {
                Color32::BLACK
            }
        },
        &|r| stages[r].label.clone(),
        stage,
    );
    ui.label("Colour = value (low to high). Pick cells and see arrows at small N (up to ~40 elements wide).");
}

/// Decoupled look-back: per tile, the look-back steps and fallbacks.
pub(super) fn tiles_table(ui: &mut egui::Ui, st: &Stage) {
    let Some(lb) = &nt(st).lookback else {
        return;
    };
    ui.label(format!(
        "look-back: {} steps, {} fallbacks (a waiting workgroup reduced a predecessor's tile itself)",
        nt(st).lookback_steps.unwrap_or(0),
        nt(st).fallbacks.unwrap_or(0)
    ));
    egui::ScrollArea::vertical()
        .id_salt("scan-tiles")
        .max_height(200.0)
        .show(ui, |ui| {
            egui::Grid::new("scan-lookback")
                .striped(true)
                .show(ui, |ui| {
                    ui.strong("tile");
                    ui.strong("look-back steps");
                    ui.strong("fallbacks");
                    ui.end_row();
                    for row in lb.iter().take(512) {
                        for k in 0..3 {
                            ui.monospace(row.get(k).map_or(String::new(), |v| v.to_string()));
                        }
                        ui.end_row();
                    }
                });
        });
}
