//! The user's kernel (the room "Your kernel"). When its expected op is a permutation (copy,
//! bitrev, bmmc, transpose) every read-back row is coloured by the original index of the element
//! it holds, as Demo B colours the bit-reversal, with lines where the elements moved (small N)
//! and the cells not yet where the op puts them outlined; a line counts them for the current pass.
//! Other ops (sort, scan, FFT) and inputs with repeated values get the strip views.

use super::{ViewState, generic};
use crate::algo::RunResult;
use crate::algo::kernel::expect::Expect;
use crate::ui::colors;
use eframe::egui::{self, Color32, Stroke};
use std::rc::Rc;

/// Rows are drawn as cells with move lines up to this N (the bit-reversal view's bound).
const MAX_CELLS_N: usize = 64;
const ROW: f32 = 22.0;
const GAP: f32 = 18.0;
/// What dst holds before the kernel writes it (the room's poison).
const NEVER_WRITTEN: u32 = 0xDEAD_BEEF;

/// The expected op's gather (out[j] = in[gather[j]]) over the result's elements, cached per key.
fn gather(result: &RunResult, key: u64, state: &mut ViewState) -> Option<Rc<Vec<u32>>> {
    if let Some((k, g)) = &state.kernel_gather
        && *k == key
    {
        return g.clone();
    }
    let op = result.extra.get("kernel")?.get("expect")?.as_str();
    let words = result
        .extra
        .get("kernel")
        .and_then(|k| k.get("element"))
        .and_then(|e| e.as_str())
        .map_or(1, |e| if e == "vec2<f32>" { 2 } else { 1 });
    let n = result.input.len() / words;
    let g = op
        .and_then(|op| Expect::parse(op).ok())
        .and_then(|e| e.gather(n).ok().flatten())
        .filter(|_| words == 1)
        .map(Rc::new);
    state.kernel_gather = Some((key, g.clone()));
    g
}

/// The original index of every value of `row`, where the input's values are distinct.
fn origins(input: &[u32], row: &[u32]) -> Option<Vec<u32>> {
    let mut at = std::collections::HashMap::with_capacity(input.len());
    for (i, &v) in input.iter().enumerate() {
        if at.insert(v, i as u32).is_some() {
            return None;
        }
    }
    // A word no input holds (never written: 0xDEADBEEF) maps past the end: drawn grey.
    Some(
        row.iter()
            .map(|v| at.get(v).copied().unwrap_or(u32::MAX))
            .collect(),
    )
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    let (Some(g), Some(st)) = (gather(result, key, state), result.stages.get(stage)) else {
        return generic::show(ui, result, stage, key, state);
    };
    let input = &result.input.bits;
    let op = result.extra["kernel"]["expect"].as_str().unwrap_or("");
    let want = |j: usize| input[g[j] as usize];
    let n = g.len().min(st.data.bits.len());
    let placed = (0..n).filter(|&j| st.data.bits[j] == want(j)).count();
    let line = if stage == 0 {
        format!("expected op: {op} — the input")
    } else {
        format!(
            "expected op: {op} — after this pass {placed} of {n} elements are where {op} puts them"
        )
    };
    let distinct = origins(input, input).is_some();
    if n > MAX_CELLS_N || !distinct {
        ui.label(line);
        if !distinct {
            ui.small("The input repeats values: run on iota to see where every element goes.");
        }
        return generic::show(ui, result, stage, key, state);
    }
    ui.heading(&st.label);
    ui.label(line);
    let cell = ((ui.available_width() - 100.0) / n as f32).min(40.0);
    let mut above: Option<(egui::Rect, Vec<u32>)> = None;
    for (r, s) in result.stages.iter().enumerate().take(stage + 1) {
        let from = origins(input, &s.data.bits).unwrap_or_default();
        let row = ui
            .horizontal(|ui| {
                ui.add_sized([96.0, ROW], egui::Label::new(&s.label));
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(cell * n as f32, ROW), egui::Sense::hover());
                let p = ui.painter();
                for j in 0..n {
                    let c = egui::Rect::from_min_size(
                        rect.min + egui::vec2(cell * j as f32, 0.0),
                        egui::vec2(cell, ROW),
                    );
                    let o = from.get(j).copied().unwrap_or(u32::MAX) as usize;
                    let bg = if o < n {
                        colors::index_color(o, n)
                    } else {
                        Color32::GRAY
                    };
                    let text = if s.data.bits[j] == NEVER_WRITTEN {
                        "·".to_string()
                    } else if cell >= super::MIN_CELL {
                        s.data.fmt_elem(j)
                    } else {
                        String::new()
                    };
                    super::value_cell(p, c, 2.0, bg, text, 11.0);
                    if r > 0 && s.data.bits[j] != want(j) {
                        p.rect_stroke(
                            c.shrink(1.0),
                            2.0,
                            Stroke::new(2.0, Color32::from_rgb(230, 60, 60)),
                            egui::StrokeKind::Inside,
                        );
                    }
                }
                if r == stage {
                    ui.label("<- current");
                }
                rect
            })
            .inner;
        if let Some((a, prev)) = &above {
            super::bitrev::draw_moves(ui.painter(), *a, row, cell, prev, &from, n);
        }
        ui.add_space(GAP);
        above = Some((row, from));
    }
    ui.small(
        "Cells coloured by the element's original index; lines: where every element moved in \
         that pass; red outline: not yet where the expected op puts it; grey ·: never written.",
    );
}
