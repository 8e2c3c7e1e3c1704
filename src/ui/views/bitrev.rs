//! Bit-reversal views: Demo B's block diagram (every stage as a row of cells coloured by the
//! element's original index, with the stage's block boundaries) and, for `naive`, Demo A's loop.

use super::ViewState;
use crate::algo::RunResult;
use crate::algo::bitrev::Variant;
use crate::algo::bitrev::model;
use crate::ui::colors;
use eframe::egui::{self, Color32, RichText, Stroke};

/// The original index held at every position after each stage, from the CPU model on 0..N.
fn origins(result: &RunResult) -> Vec<Vec<u32>> {
    let n = result.n;
    let iota: Vec<u32> = (0..n as u32).collect();
    let mut rows = vec![iota.clone()];
    if result.variant_as() != Some(Variant::Staged) {
        rows.push(model::naive(&iota));
    } else {
        rows.extend(model::staged(&iota));
    }
    rows
}

/// Lines between two Demo-B rows are drawn up to this N (beyond it they are a grey blur).
const MAX_MOVES_N: usize = 64;
/// The gap between rows that holds those lines.
const MOVES_GAP: f32 = 18.0;

/// Where every element goes between two rows: a line from its cell in `above` to its cell in
/// `below`, in the element's colour (`from`/`to`: the original index at each position).
pub(super) fn draw_moves(
    p: &egui::Painter,
    above: egui::Rect,
    below: egui::Rect,
    cell: f32,
    from: &[u32],
    to: &[u32],
    n: usize,
) {
    let mut pos = vec![usize::MAX; n];
    for (i, &o) in from.iter().enumerate() {
        if let Some(slot) = pos.get_mut(o as usize) {
            *slot = i;
        }
    }
    for (i, &o) in to.iter().enumerate() {
        let Some(&j) = pos.get(o as usize).filter(|&&j| j < n) else {
            continue;
        };
        let x0 = above.left() + cell * (j as f32 + 0.5);
        let x1 = below.left() + cell * (i as f32 + 0.5);
        let c = colors::index_color(o as usize, n);
        let width = if i == j { 0.8 } else { 1.6 };
        p.line_segment(
            [
                egui::pos2(x0, above.bottom() + 1.0),
                egui::pos2(x1, below.top() - 1.0),
            ],
            Stroke::new(width, c),
        );
    }
}

/// One label under every block of the current row, each exactly as wide as its block (so the
/// last never runs past the row), shortened to "B7" or "7" where "Block 7" does not fit.
fn block_labels(ui: &mut egui::Ui, row: Option<egui::Rect>, width: f32, blocks: usize) {
    let Some(row) = row else { return };
    let (rect, _) = ui.allocate_exact_size(egui::vec2(row.width(), 14.0), egui::Sense::hover());
    // About 6 px per character at size 10 in the proportional font.
    let fits = |text: &str| text.chars().count() as f32 * 6.0 + 4.0 <= width;
    for b in 0..blocks {
        let text = [format!("Block {b}"), format!("B{b}"), b.to_string()]
            .into_iter()
            .find(|t| fits(t))
            .unwrap_or_else(|| b.to_string());
        let r = egui::Rect::from_min_size(
            egui::pos2(row.left() + width * b as f32, rect.top()),
            egui::vec2(width, 14.0),
        );
        ui.put(
            r,
            egui::Label::new(RichText::new(text).size(10.0)).truncate(),
        )
        .on_hover_text(format!("block {b}"));
    }
}

fn block_size(result: &RunResult, stage: usize) -> usize {
    result
        .stages
        .get(stage)
        .and_then(|s| s.bitrev())
        .map_or(result.n, |b| b.block_size)
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    let n = result.n;
    if result.stages.is_empty() {
        ui.label("Run with a trace to see the stages.");
        return;
    }
    let stage = stage.min(result.stages.len() - 1);
    let bs = block_size(result, stage);
    let title = if result.variant_as() == Some(Variant::Naive) {
        if stage == 0 {
            "Input".to_string()
        } else {
            "After the naive kernel: out[rev(i)] = in[i]".to_string()
        }
    } else if stage == 0 {
        format!("Stage 0: the input, one block of {n}")
    } else {
        format!(
            "Stage {stage}: {} blocks of {bs} — evens to the left half, odds to the right half of every block",
            n / bs
        )
    };
    ui.heading(title);
    let origin = match &state.bitrev_origins {
        Some((k, o)) if *k == key => o.clone(),
        _ => std::rc::Rc::new(origins(result)),
    };
    state.bitrev_origins = Some((key, origin.clone()));
    let cell = ((ui.available_width() - 130.0) / n as f32).min(48.0);
    egui::ScrollArea::vertical()
        .id_salt("bitrev-rows")
        .max_height(ui.available_height() * 0.62)
        .show(ui, |ui| {
            if cell >= super::MIN_CELL {
                let mut prev_row: Option<egui::Rect> = None;
                for r in 0..=stage {
                    if r > 0 && n <= MAX_MOVES_N {
                        ui.add_space(MOVES_GAP);
                    }
                    let s = &result.stages[r];
                    let bsz = block_size(result, r);
                    let current = r == stage;
                    ui.horizontal(|ui| {
                        let label = RichText::new(
                            if result.variant_as() == Some(Variant::Naive) && r == 1 {
                                "after".to_string()
                            } else {
                                format!("Stage {r}")
                            },
                        );
                        ui.add_sized(
                            [100.0, 24.0],
                            egui::Label::new(if current { label.strong() } else { label }),
                        );
                        let (rect, _) = ui.allocate_exact_size(
                            egui::vec2(cell * n as f32, 26.0),
                            egui::Sense::hover(),
                        );
                        let p = ui.painter();
                        for i in 0..n {
                            let o = origin.get(r).map_or(i as u32, |row| row[i]) as usize;
                            let bg = colors::index_color(o, n);
                            let c = egui::Rect::from_min_size(
                                rect.min + egui::vec2(cell * i as f32, 0.0),
                                egui::vec2(cell, 26.0),
                            );
                            p.rect_filled(
                                c.shrink(1.0),
                                3.0,
                                if current { bg } else { bg.gamma_multiply(0.8) },
                            );
                            super::cell_text(p, c, bg, s.data.fmt_elem(i), 11.0);
                        }
                        if let (Some(prev), Some(from), Some(to)) =
                            (prev_row, origin.get(r.wrapping_sub(1)), origin.get(r))
                            && n <= MAX_MOVES_N
                        {
                            draw_moves(p, prev, rect, cell, from, to, n);
                        }
                        prev_row = Some(rect);
                        // Block boundaries of this stage.
                        let stroke = Stroke::new(
                            if current { 3.0 } else { 2.0 },
                            ui.visuals().strong_text_color(),
                        );
                        for b in 0..=n / bsz {
                            let x = rect.left() + cell * (b * bsz) as f32;
                            p.line_segment(
                                [
                                    egui::pos2(x, rect.top() - 1.0),
                                    egui::pos2(x, rect.bottom() + 1.0),
                                ],
                                stroke,
                            );
                        }
                    });
                    if current && n / bsz <= 32 && result.variant_as() != Some(Variant::Naive) {
                        block_labels(ui, prev_row, cell * bsz as f32, n / bsz);
                    }
                }
            } else {
                super::summary(ui, &result.stages[stage].data);
                let stages = &result.stages;
                let origin = &origin;
                state.strip.show(
                    ui,
                    key,
                    n,
                    stages.len(),
                    &|r, i| {
                        colors::index_color(
                            origin.get(r).map_or(i as u32, |row| row[i]) as usize,
                            n,
                        )
                    },
                    &|r| stages[r].label.clone(),
                    stage,
                );
                ui.label(format!(
                    "Colour = the element's original index. Current blocks: {} of {bs}.",
                    n / bs
                ));
            }
        });
    ui.separator();
    if n <= MAX_MOVES_N && stage > 0 && cell >= super::MIN_CELL {
        ui.small(
            "Lines between the rows: where every element moves (bold: it moved, thin: it stayed).",
        );
    }
    if result.variant_as() == Some(Variant::Naive) {
        demo_a(ui, result, state);
    } else {
        ui.label(
            "Each stage is two passes on the GPU: kernel1 moves every element to its new place inside \
             its block (even positions to the left half, odd to the right), kernel2 copies the result back \
             as the next stage's input. The elements reach their final place one stage before the end.",
        );
    }
}

fn bits(x: u32, w: u32) -> String {
    if w == 0 {
        "(no bits)".into()
    } else {
        format!(
            "{:0width$b}",
            x & ((1u64 << w) - 1) as u32,
            width = w as usize
        )
    }
}

fn demo_a(ui: &mut egui::Ui, result: &RunResult, state: &mut ViewState) {
    let n = result.n as u32;
    let log_n = n.trailing_zeros();
    ui.horizontal(|ui| {
        ui.strong("Demo A — the new position of index");
        ui.add(egui::DragValue::new(&mut state.demo_a_index).range(0..=n.saturating_sub(1)))
            .on_hover_text("Pick the index whose bit reversal is shown");
    });
    let i = state.demo_a_index.min(n.saturating_sub(1));
    let steps = model::demo_a_steps(i, log_n);
    egui::Grid::new("demo-a").striped(true).show(ui, |ui| {
        ui.strong("step");
        ui.strong("i");
        ui.strong("irev");
        ui.end_row();
        for s in &steps {
            ui.label(if s.k == 0 {
                "init: irev = i".to_string()
            } else {
                format!("k = {}: i >>= 1; irev = (irev << 1) | (i & 1)", s.k)
            });
            ui.monospace(bits(s.i, log_n));
            ui.monospace(format!("{:b}", s.irev));
            ui.end_row();
        }
        let fin = model::demo_a(i, log_n);
        ui.label(format!(
            "irev &= N − 1 = {}",
            bits(n.wrapping_sub(1), log_n)
        ));
        ui.monospace("");
        ui.monospace(RichText::new(bits(fin, log_n)).color(Color32::LIGHT_GREEN));
        ui.end_row();
    });
    let fin = model::demo_a(i, log_n) as usize;
    if (i as usize) < result.input.len() {
        ui.label(format!(
            "{i} = ({})₂ reversed is {fin} = ({})₂: the value {} moves from position {i} to position {fin}.",
            bits(i, log_n),
            bits(fin as u32, log_n),
            result.input.fmt_elem(i as usize),
        ));
    }
}
