//! Prefix-sum views: the phase view (the array before and after the current phase, arrows from
//! source to destination cells, active threads coloured and sleeping ones grey, the (thread,
//! prev_rung) table beside it), work and step counters against n log n and n, the Blelloch tree,
//! and picking: click a cell to highlight every input element and every cell it depends on.

use super::ViewState;
use crate::algo::scan::Variant;
use crate::algo::scan::facts::Facts;
use crate::algo::scan::trace::Notes;
use crate::algo::{RunResult, Stage};
use crate::ui::colors;
use eframe::egui::{self, Color32, RichText, Sense, Stroke};
use std::sync::LazyLock;

#[path = "scan_large.rs"]
mod large;
use large::{big, tiles_table, tree};

const ROW_H: f32 = 26.0;
const SLEEP: Color32 = Color32::from_rgb(70, 70, 78);
const PICK: Color32 = Color32::from_rgb(255, 200, 40);

/// The stage's annotations (empty for a stage without them).
fn nt(st: &Stage) -> &Notes {
    static NONE: LazyLock<Notes> = LazyLock::new(Notes::default);
    st.scan().unwrap_or(&NONE)
}

fn pairs(st: &Stage) -> Option<Vec<(usize, usize)>> {
    nt(st).reads.clone()
}

/// For every stage up to `upto`, which input elements each cell's value depends on (bitsets over
/// the input). Built from the stages' reads: an add (dst += src), a move (Blelloch's left <-
/// node, the exclusive shift), a clear (the root).
fn dependencies(result: &RunResult, upto: usize) -> Option<Vec<Vec<bool>>> {
    let n0 = result.stages.first()?.data.len();
    let width = result.stages[..=upto].iter().map(|s| s.data.len()).max()?;
    let mut cur: Vec<Vec<bool>> = (0..width)
        .map(|i| {
            let mut v = vec![false; n0];
            if i < n0 {
                v[i] = true;
            }
            v
        })
        .collect();
    for st in &result.stages[1..=upto] {
        let reads = pairs(st)?;
        let dir = nt(st).direction.unwrap_or("");
        let prev = cur.clone();
        match dir {
            "clear" => {
                let last = st.data.len() - 1;
                cur[last] = vec![false; n0];
            }
            "shift" => {
                for c in cur.iter_mut() {
                    c.iter_mut().for_each(|b| *b = false);
                }
                for &(d, s) in &reads {
                    cur[d] = prev[s].clone();
                }
            }
            "add-input" => {
                for &(d, s) in &reads {
                    if s < n0 {
                        cur[d][s] = true;
                    }
                }
            }
            "down" => {
                for &(d, s) in &reads {
                    if d < s {
                        cur[d] = prev[s].clone(); // left <- node
                    } else {
                        let mut u = prev[d].clone(); // right <- node + old left
                        for (a, b) in u.iter_mut().zip(&prev[s]) {
                            *a |= *b;
                        }
                        cur[d] = u;
                    }
                }
            }
            _ => {
                for &(d, s) in &reads {
                    if d < cur.len() && s < prev.len() {
                        for (a, b) in cur[d].iter_mut().zip(&prev[s]) {
                            *a |= *b;
                        }
                    }
                }
            }
        }
    }
    Some(cur)
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    if result.stages.is_empty() {
        ui.label("Run with a trace to see the phases.");
        return;
    }
    let stage = stage.min(result.stages.len() - 1);
    let st = &result.stages[stage];
    let n = result.n;
    ui.heading(format!("{} — {}", result.variant, st.label));
    counters(ui, result, stage);
    ui.separator();

    let len = st.data.len();
    // The (thread, prev_rung) table goes beside the cells when there is room, else below them.
    let avail = ui.available_width();
    let beside = (avail - 380.0) / len as f32 >= super::MIN_CELL;
    let cell = ((if beside { avail - 380.0 } else { avail - 110.0 }) / len as f32).min(48.0);
    let min_cell = 18.0;
    let tile_array = nt(st).array.unwrap_or("").starts_with("tile");
    if cell < min_cell || tile_array || (stage > 0 && pairs(st).is_none()) {
        if cell < min_cell {
            big(ui, result, stage, key, state);
        } else {
            // A stage of another shape (tile sums, tile prefixes): its values as cells.
            let w = (0..st.data.len().min(64))
                .map(|i| st.data.fmt_elem(i).len())
                .max()
                .unwrap_or(1) as f32
                * 7.0
                + 10.0;
            egui::ScrollArea::horizontal()
                .id_salt("scan-tile-row")
                .show(ui, |ui| values_row(ui, st, w.max(cell), None));
            if tile_array {
                ui.label(format!(
                    "{} of {} tiles of {} elements",
                    nt(st).array.unwrap_or(""),
                    st.data.len(),
                    nt(st).tile.unwrap_or(0)
                ));
            }
        }
        tiles_table(ui, st);
        return;
    }
    let rows = |ui: &mut egui::Ui, state: &mut ViewState| {
        phase_rows(ui, result, stage, cell, state);
        if result.variant_as() == Some(Variant::Blelloch) && stage > 0 {
            ui.add_space(8.0);
            tree(ui, result, stage, state);
        }
    };
    if beside {
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| rows(ui, state));
            ui.separator();
            ui.vertical(|ui| table(ui, result, st));
        });
    } else {
        rows(ui, state);
        ui.separator();
        table(ui, result, st);
    }
    let _ = n;
}

fn counters(ui: &mut egui::Ui, result: &RunResult, stage: usize) {
    let n = result.n as f64;
    let st = &result.stages[stage];
    let work = nt(st).work as f64;
    let total_work = result.stages.iter().map(|s| nt(s).work).max().unwrap_or(0) as f64;
    let nlogn = n * (n.log2().ceil().max(1.0));
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "step {} of {}",
            nt(st).step,
            result.stages.len() - 1
        ));
        if let Some(a) = nt(st).active {
            ui.label(format!("· active threads {a}"));
        }
        if let Some(s) = nt(st).sleeping_count {
            ui.label(RichText::new(format!("· sleeping {s}")).color(Color32::GRAY));
        }
        if let Some(a) = nt(st).adds {
            ui.label(format!("· adds this step {a}"));
        }
        if let Some(f) = result.facts::<Facts>() {
            ui.label(RichText::new(format!("· result: {}", f.form.name())).strong());
        }
    });
    // Work so far against n log n and n.
    let w = ui.available_width().min(520.0);
    let maxv = nlogn.max(total_work).max(n).max(1.0);
    for (label, v, c) in [
        ("work so far", work, Color32::from_rgb(90, 170, 250)),
        ("n·log2 n", nlogn, Color32::from_rgb(230, 120, 90)),
        ("n", n, Color32::from_rgb(110, 200, 120)),
    ] {
        ui.horizontal(|ui| {
            ui.add_sized(
                [90.0, 14.0],
                egui::Label::new(RichText::new(label).size(11.0)),
            );
            let (rect, _) = ui.allocate_exact_size(egui::vec2(w, 12.0), Sense::hover());
            let frac = (v / maxv) as f32;
            ui.painter().rect_filled(
                egui::Rect::from_min_size(rect.min, egui::vec2(w * frac, 12.0)),
                2.0,
                c,
            );
            ui.label(RichText::new(format!("{v:.0}")).size(11.0));
        });
    }
}

fn values_row(ui: &mut egui::Ui, st: &Stage, cell: f32, colour: Option<&dyn Fn(usize) -> Color32>) {
    let len = st.data.len();
    let (rect, _) = ui.allocate_exact_size(egui::vec2(cell * len as f32, ROW_H), Sense::hover());
    for i in 0..len {
        let c = egui::Rect::from_min_size(
            rect.min + egui::vec2(cell * i as f32, 0.0),
            egui::vec2(cell, ROW_H),
        );
        let bg = colour.map_or(Color32::from_rgb(60, 90, 130), |f| f(i));
        super::value_cell(ui.painter(), c, 3.0, bg, st.data.fmt_elem(i), 10.0);
    }
}

/// Input row, the array before the phase, the array after it, with arrows and picking.
fn phase_rows(
    ui: &mut egui::Ui,
    result: &RunResult,
    stage: usize,
    cell: f32,
    state: &mut ViewState,
) {
    let st = &result.stages[stage];
    let len = st.data.len();
    let n0 = result.stages[0].data.len();
    let before = &result.stages[stage.saturating_sub(1)];
    let reads = pairs(st).unwrap_or_default();
    let mut active = vec![false; len];
    for &(d, _) in &reads {
        if d < len {
            active[d] = true;
        }
    }
    let pick = state.scan_pick.filter(|&p| p < len);
    let deps = pick.and_then(|p| dependencies(result, stage).map(|d| d[p].clone()));
    let deps_before = pick.and_then(|p| {
        // Cells of the previous array that feed the picked cell in this phase.
        let mut v = vec![false; before.data.len()];
        let mut any = false;
        for &(d, s) in &reads {
            if d == p && s < v.len() {
                v[s] = true;
                any = true;
            }
        }
        if p < v.len()
            && nt(st).direction.unwrap_or("") != "shift"
            && !(nt(st).direction.unwrap_or("") == "down"
                && reads.iter().any(|&(d, s)| d == p && d < s))
        {
            v[p] = true;
            any = true;
        }
        any.then_some(v)
    });
    let label_w = 70.0;
    let mut clicked: Option<usize> = None;
    let mut row = |ui: &mut egui::Ui,
                   name: &str,
                   s: &Stage,
                   colour: &dyn Fn(usize) -> Color32,
                   hl: Option<&Vec<bool>>,
                   click: bool|
     -> egui::Rect {
        let mut out = egui::Rect::NOTHING;
        ui.horizontal(|ui| {
            ui.add_sized(
                [label_w, ROW_H],
                egui::Label::new(RichText::new(name).size(11.0)),
            );
            let sense = if click {
                Sense::click()
            } else {
                Sense::hover()
            };
            let (rect, resp) =
                ui.allocate_exact_size(egui::vec2(cell * s.data.len() as f32, ROW_H), sense);
            for i in 0..s.data.len() {
                let c = egui::Rect::from_min_size(
                    rect.min + egui::vec2(cell * i as f32, 0.0),
                    egui::vec2(cell, ROW_H),
                );
                let bg = colour(i);
                ui.painter().rect_filled(c.shrink(1.0), 3.0, bg);
                if hl.is_some_and(|h| h.get(i).copied().unwrap_or(false)) {
                    ui.painter().rect_stroke(
                        c.shrink(1.0),
                        3.0,
                        Stroke::new(2.5, PICK),
                        egui::StrokeKind::Inside,
                    );
                }
                super::cell_text(ui.painter(), c, bg, s.data.fmt_elem(i), 10.0);
            }
            if resp.clicked()
                && let Some(pos) = resp.interact_pointer_pos()
            {
                clicked = Some(((pos.x - rect.left()) / cell) as usize);
            }
            out = rect;
        });
        out
    };
    let input_deps = deps.clone();
    row(
        ui,
        "input",
        &result.stages[0],
        &|i| {
            if i < n0 {
                Color32::from_rgb(55, 65, 80)
            } else {
                SLEEP
            }
        },
        input_deps.as_ref(),
        false,
    );
    ui.add_space(4.0);
    let top = row(
        ui,
        if stage > 0 { "before" } else { "" },
        before,
        &|_| Color32::from_rgb(60, 90, 130),
        deps_before.as_ref(),
        false,
    );
    ui.add_space(30.0);
    let bottom = row(
        ui,
        "after",
        st,
        &|i| {
            if stage == 0 {
                Color32::from_rgb(60, 90, 130)
            } else if i < active.len() && active[i] {
                colors::thread_color(i)
            } else {
                SLEEP
            }
        },
        pick.map(|p| {
            let mut v = vec![false; len];
            v[p] = true;
            v
        })
        .as_ref(),
        true,
    );
    if let Some(c) = clicked {
        state.scan_pick = if state.scan_pick == Some(c) {
            None
        } else {
            Some(c)
        };
    }
    // Arrows from source (before) to destination (after).
    if stage > 0 && reads.len() <= 2048 {
        let p = ui.painter();
        for &(d, s) in &reads {
            if nt(st).direction.unwrap_or("") == "add-input" {
                continue;
            }
            let from = egui::pos2(top.left() + cell * (s as f32 + 0.5), top.bottom());
            let to = egui::pos2(bottom.left() + cell * (d as f32 + 0.5), bottom.top());
            let hot = pick == Some(d);
            let col = if hot {
                PICK
            } else {
                colors::thread_color(d).gamma_multiply(0.8)
            };
            arrow(p, from, to, Stroke::new(if hot { 2.5 } else { 1.2 }, col));
        }
    }
    ui.label(
        RichText::new(
            "Coloured cells: threads that add this phase (arrows from the cell they read); grey: sleeping. \
             Click a cell of the 'after' row to highlight everything it depends on (click again to clear).",
        )
        .size(11.0),
    );
    if let (Some(p), Some(d)) = (pick, deps.as_ref()) {
        let count = d.iter().filter(|b| **b).count();
        let list: Vec<String> = d
            .iter()
            .enumerate()
            .filter(|(_, b)| **b)
            .map(|(i, _)| i.to_string())
            .take(40)
            .collect();
        ui.label(format!(
            "cell {p} = {} depends on {count} input element(s): {}{}",
            st.data.fmt_elem(p),
            list.join(", "),
            if count > 40 { ", …" } else { "" }
        ));
    }
}

/// A line from `from` to `to` with a small fixed-size head.
fn arrow(p: &egui::Painter, from: egui::Pos2, to: egui::Pos2, stroke: Stroke) {
    p.line_segment([from, to], stroke);
    let dir = (to - from).normalized();
    let side = egui::vec2(-dir.y, dir.x);
    for s in [-1.0, 1.0] {
        p.line_segment([to, to - dir * 7.0 + side * s * 3.5], stroke);
    }
}

/// The (thread, reads-from) table: the seed's printout, with the sleeping threads.
fn table(ui: &mut egui::Ui, result: &RunResult, st: &Stage) {
    let ladder = result.variant_as() == Some(Variant::Ladder);
    ui.strong(if ladder {
        "thread, prev_rung"
    } else {
        "thread, reads from"
    });
    let Some(reads) = pairs(st) else {
        ui.label("(input)");
        return;
    };
    egui::ScrollArea::vertical()
        .id_salt("scan-table")
        .max_height(300.0)
        .show(ui, |ui| {
            egui::Grid::new("scan-reads").striped(true).show(ui, |ui| {
                ui.strong("thread");
                ui.strong(if ladder { "prev_rung" } else { "source" });
                ui.end_row();
                for (t, s) in reads.iter().take(1024) {
                    ui.monospace(RichText::new(t.to_string()).color(colors::thread_color(*t)));
                    ui.monospace(s.to_string());
                    ui.end_row();
                }
            });
        });
    if let Some(sl) = &nt(st).sleeping {
        let s: Vec<String> = sl.iter().take(64).map(|v| v.to_string()).collect();
        ui.label(
            RichText::new(format!(
                "sleeping: {}{}",
                s.join(" "),
                if sl.len() > 64 { " …" } else { "" }
            ))
            .color(Color32::GRAY),
        );
    }
    if result.variant_as() == Some(Variant::Folded) {
        ui.label(RichText::new(nt(st).form.unwrap_or("")).strong());
    }
}
