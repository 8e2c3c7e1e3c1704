//! Odd-even sorting views: the pair-swap diagram (the array as cells, one row per phase, every
//! compared pair bracketed with the thread that owns it, swapped pairs drawn as crossing arrows and
//! kept pairs as straight ticks), a bar view of the values, merge-split's blocks and Batcher's
//! stages, and the step / work counters next to the seed's O(n) steps and O(n²) work.

use super::ViewState;
use crate::algo::oddeven::Variant;
use crate::algo::oddeven::facts::Facts;
use crate::algo::oddeven::{model::Pair, trace::Notes};
use crate::algo::{RunResult, Stage};
use crate::ui::colors;
use eframe::egui::{self, Color32, Pos2, RichText, Stroke};
use std::sync::LazyLock;

const SWAP: Color32 = Color32::from_rgb(235, 110, 60);
const KEEP: Color32 = Color32::from_rgb(90, 170, 110);
/// At most this many phase rows are drawn (the ones leading to the current stage).
const MAX_ROWS: usize = 48;

/// The stage's annotations (empty for a stage without them).
fn nt(st: &Stage) -> &Notes {
    static NONE: LazyLock<Notes> = LazyLock::new(Notes::default);
    st.oddeven().unwrap_or(&NONE)
}

fn pairs(st: &Stage) -> Vec<(usize, usize, bool)> {
    widen(&nt(st).pairs())
}

fn block_pairs(st: &Stage) -> Vec<(usize, usize, bool)> {
    widen(nt(st).block_pairs())
}

fn widen(p: &[Pair]) -> Vec<(usize, usize, bool)> {
    p.iter()
        .map(|&(i, j, s)| (i as usize, j as usize, s))
        .collect()
}

/// A colour for a value by its rank among the input's values (so equal values share a colour).
fn value_shade(result: &RunResult) -> impl Fn(f64) -> Color32 {
    let mut vals: Vec<f64> = (0..result.input.len())
        .map(|i| result.input.as_f64(i))
        .filter(|v| v.is_finite())
        .collect();
    vals.sort_by(|a, b| a.total_cmp(b));
    vals.dedup();
    move |v: f64| {
        if !v.is_finite() {
            return Color32::GRAY;
        }
        let r = vals.partition_point(|&x| x < v);
        colors::index_color(r, vals.len().max(1))
    }
}

fn counters(ui: &mut egui::Ui, result: &RunResult) {
    let n = result.n;
    let Some(facts) = result.facts::<Facts>() else {
        return;
    };
    let seg = facts.segment.unwrap_or(n);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("steps: {}", facts.phases)).strong());
        ui.label(format!("(seed: {} phases, O(n))", facts.seed_steps));
        ui.separator();
        ui.label(
            RichText::new(format!(
                "work: {} compare-exchanges",
                facts.compare_exchanges
            ))
            .strong(),
        );
        ui.label(format!(
            "(seed: {} = n(n-1)/2 per segment, O(n^2))",
            facts.seed_work
        ));
        ui.separator();
        match facts.first_sorted_phase.flatten() {
            Some(0) => ui.label("the input was already sorted"),
            Some(f) => ui.label(
                RichText::new(format!(
                    "first sorted after {} {f} of {}",
                    if matches!(
                        result.variant_as(),
                        Some(Variant::Transposition | Variant::Global)
                    ) {
                        "phase"
                    } else {
                        "stage"
                    },
                    facts.phases
                ))
                .color(KEEP),
            ),
            None => ui.label("first sorted phase: not computed at this size"),
        };
        if facts.segment.is_some() {
            ui.separator();
            ui.label(format!(
                "segments of {seg}: {} independent sorts",
                n / seg.max(1)
            ));
        }
    });
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    counters(ui, result);
    if result.stages.is_empty() {
        ui.label("Run with a trace to see the phases.");
        return;
    }
    let stage = stage.min(result.stages.len() - 1);
    let st = &result.stages[stage];
    if result.variant_as() == Some(Variant::Batcher) {
        network_strip(ui, result, stage);
    }
    ui.horizontal(|ui| {
        ui.heading(stage_title(result, stage));
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            ui.checkbox(&mut state.oddeven_bars, "Bars")
                .on_hover_text("Show the values of this stage as bars");
        });
    });
    if state.oddeven_bars {
        bars(ui, result, st);
        ui.separator();
    }
    let n = result.n;
    // Wide enough for the longest value when there is room.
    let chars = (0..n.min(4096))
        .map(|i| st.data.fmt_elem(i).len())
        .max()
        .unwrap_or(1) as f32;
    let cell = ((ui.available_width() - 110.0) / n as f32).min((chars * 7.0 + 8.0).max(48.0));
    if cell < super::MIN_CELL {
        let shade = value_shade(result);
        state
            .strip
            .show_values(ui, key, n, &result.stages, &shade, stage);
        ui.label(format!(
            "Colour = value rank. {} compare-exchanges in this stage, {} swapped.",
            nt(st).compare_exchanges.unwrap_or(0),
            nt(st).swaps.unwrap_or(0)
        ));
        return;
    }
    egui::ScrollArea::vertical()
        .id_salt("oddeven-rows")
        .stick_to_bottom(true)
        .max_height(ui.available_height() - 40.0)
        .show(ui, |ui| diagram(ui, result, stage, cell));
    legend(ui, result);
}

fn stage_title(result: &RunResult, stage: usize) -> String {
    let st = &result.stages[stage];
    if stage == 0 {
        return format!("The input ({} keys)", result.n);
    }
    match result.variant_as() {
        Some(Variant::Batcher) => format!(
            "Stage {stage}: merge blocks of {}, compare at distance {} - {} compare-exchanges, {} swapped",
            nt(st).merge_block.unwrap_or(0),
            nt(st).k.unwrap_or(0),
            nt(st).compare_exchanges.unwrap_or(0),
            nt(st).swaps.unwrap_or(0)
        ),
        Some(Variant::MergeSplit) => {
            if stage == 1 {
                format!(
                    "Every block of {} sorted in workgroup memory",
                    nt(st).block.unwrap_or(0)
                )
            } else {
                format!("{}: neighbouring blocks merged, lower half left", st.label)
            }
        }
        _ => format!(
            "Phase {stage} ({} pairs): {} compare-exchanges, {} swapped",
            nt(st).parity.unwrap_or(""),
            nt(st).compare_exchanges.unwrap_or(0),
            nt(st).swaps.unwrap_or(0)
        ),
    }
}

fn legend(ui: &mut egui::Ui, result: &RunResult) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("X swapped").color(SWAP));
        ui.label(RichText::new("|| kept").color(KEEP));
        match result.variant_as() {
            Some(Variant::MergeSplit) => ui.label(
                "Brackets join the two blocks of a merge-split; every workgroup merges one pair (Batcher's merge) and keeps the lower half on the left.",
            ),
            Some(Variant::Batcher) => ui.label(
                "Shaded bands are the 2p-blocks being merged; a pair is (a, a + k). Local stages run in workgroup memory, the rest as fused global passes.",
            ),
            _ => ui.label(
                "tN under a bracket: the seed's thread N owns pairs 2N (even phases) and 2N+1 (odd phases).",
            ),
        };
    });
}

fn diagram(ui: &mut egui::Ui, result: &RunResult, stage: usize, cell: f32) {
    let n = result.n;
    let row_h = 24.0;
    let gap = if result.variant_as() == Some(Variant::MergeSplit) {
        22.0
    } else {
        36.0
    };
    let first = stage.saturating_sub(MAX_ROWS - 1);
    let rows = stage - first + 1;
    let label_w = 104.0;
    let height = rows as f32 * (row_h + gap);
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(label_w + cell * n as f32 + 8.0, height),
        egui::Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let shade = value_shade(result);
    let text = ui.visuals().text_color();
    let strong = ui.visuals().strong_text_color();
    let x0 = rect.left() + label_w;
    let chars = (0..n.min(4096))
        .map(|i| result.stages[stage].data.fmt_elem(i).len())
        .max()
        .unwrap_or(1) as f32;
    let font = (cell / (chars * 0.62)).clamp(6.0, 10.5);
    let cx = |i: usize| x0 + cell * (i as f32 + 0.5);
    for (ri, r) in (first..=stage).enumerate() {
        let st = &result.stages[r];
        let top = rect.top() + ri as f32 * (row_h + gap) + gap;
        let current = r == stage;
        // Brackets + arrows in the gap above this row: the pairs that produced it.
        if r > 0 {
            let ytop = top - gap + 2.0;
            let ybot = top - 2.0;
            if result.variant_as() == Some(Variant::MergeSplit) {
                let block = nt(st).block.unwrap_or(1);
                for (a, b, moved) in block_pairs(st) {
                    let l = x0 + cell * (a * block) as f32 + 2.0;
                    let rgt = x0 + cell * ((b + 1) * block).min(n) as f32 - 2.0;
                    let c = if moved { SWAP } else { KEEP };
                    let y = ytop + 6.0;
                    p.line_segment([Pos2::new(l, ybot), Pos2::new(l, y)], Stroke::new(1.5, c));
                    p.line_segment([Pos2::new(l, y), Pos2::new(rgt, y)], Stroke::new(1.5, c));
                    p.line_segment(
                        [Pos2::new(rgt, y), Pos2::new(rgt, ybot)],
                        Stroke::new(1.5, c),
                    );
                    p.text(
                        Pos2::new((l + rgt) / 2.0, y + 1.0),
                        egui::Align2::CENTER_TOP,
                        format!("B{a}|B{b}{}", if moved { " merged" } else { " kept" }),
                        egui::FontId::proportional(9.0),
                        c,
                    );
                }
            } else {
                let seg = nt(st).segment.unwrap_or(n);
                let label_threads = result.variant_as() != Some(Variant::Batcher) && cell >= 30.0;
                for (a, b, swapped) in pairs(st) {
                    let (xa, xb) = (cx(a), cx(b));
                    let c = if swapped { SWAP } else { KEEP };
                    let yb = ybot;
                    // the bracket (below the owner's label)
                    let yk = ytop + if label_threads { 11.0 } else { 3.0 };
                    if b - a == 1 {
                        p.line_segment(
                            [
                                Pos2::new(xa - cell * 0.3, yk),
                                Pos2::new(xb + cell * 0.3, yk),
                            ],
                            Stroke::new(1.0, c.gamma_multiply(0.8)),
                        );
                    }
                    if swapped {
                        arrow(&p, Pos2::new(xa, yk + 2.0), Pos2::new(xb, yb), c);
                        arrow(&p, Pos2::new(xb, yk + 2.0), Pos2::new(xa, yb), c);
                    } else {
                        arrow(&p, Pos2::new(xa, yk + 2.0), Pos2::new(xa, yb), c);
                        arrow(&p, Pos2::new(xb, yk + 2.0), Pos2::new(xb, yb), c);
                    }
                    if label_threads {
                        p.text(
                            Pos2::new((xa + xb) / 2.0, ytop),
                            egui::Align2::CENTER_TOP,
                            format!("t{}", (a % seg) / 2),
                            egui::FontId::proportional(8.5),
                            colors::thread_color((a % seg) / 2),
                        );
                    }
                }
            }
        }
        // Batcher: shade the 2p blocks being merged.
        if result.variant_as() == Some(Variant::Batcher)
            && let Some(mb) = nt(st).merge_block
        {
            for (bi, start) in (0..n).step_by(mb.max(1)).enumerate() {
                if bi % 2 == 1 {
                    let r = egui::Rect::from_min_max(
                        Pos2::new(x0 + cell * start as f32, top - 1.0),
                        Pos2::new(x0 + cell * (start + mb).min(n) as f32, top + row_h + 1.0),
                    );
                    p.rect_filled(
                        r.expand2(egui::vec2(0.0, 5.0)),
                        3.0,
                        Color32::from_white_alpha(28),
                    );
                }
            }
        }
        let label = RichText::new(if r == 0 {
            "input".to_string()
        } else {
            st.label.clone()
        });
        p.text(
            Pos2::new(rect.left() + 2.0, top + row_h / 2.0),
            egui::Align2::LEFT_CENTER,
            label.text(),
            egui::FontId::proportional(if current { 12.0 } else { 11.0 }),
            if current { strong } else { text },
        );
        for i in 0..n {
            let v = st.data.as_f64(i);
            let bg = shade(v);
            let c = egui::Rect::from_min_size(
                Pos2::new(x0 + cell * i as f32, top),
                egui::vec2(cell, row_h),
            );
            p.rect_filled(
                c.shrink(1.0),
                3.0,
                if current { bg } else { bg.gamma_multiply(0.6) },
            );
            super::cell_text(&p, c, bg, st.data.fmt_elem(i), font);
        }
        // merge-split block boundaries
        if result.variant_as() == Some(Variant::MergeSplit)
            && let Some(block) = nt(st).block
        {
            for bnd in (0..=n).step_by(block.max(1)) {
                let x = x0 + cell * bnd as f32;
                p.line_segment(
                    [Pos2::new(x, top - 1.0), Pos2::new(x, top + row_h + 1.0)],
                    Stroke::new(2.0, strong),
                );
            }
        }
        if current {
            p.rect_stroke(
                egui::Rect::from_min_size(
                    Pos2::new(x0 - 2.0, top - 2.0),
                    egui::vec2(cell * n as f32 + 4.0, row_h + 4.0),
                ),
                3.0,
                Stroke::new(1.5, strong),
                egui::StrokeKind::Outside,
            );
        }
    }
}

fn arrow(p: &egui::Painter, from: Pos2, to: Pos2, c: Color32) {
    p.arrow(from, to - from, Stroke::new(1.4, c));
}

fn bars(ui: &mut egui::Ui, result: &RunResult, st: &Stage) {
    let n = st.data.len();
    let h = 120.0;
    let (rect, _) =
        ui.allocate_exact_size(egui::vec2(ui.available_width(), h), egui::Sense::hover());
    let p = ui.painter_at(rect);
    let vals: Vec<f64> = (0..n).map(|i| st.data.as_f64(i)).collect();
    let (lo, hi) = vals
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let lo = lo.min(0.0);
    let span = (hi - lo).max(1e-30);
    let shade = value_shade(result);
    let mut hot = vec![None; n];
    if n <= 1 << 16 {
        for (a, b, s) in pairs(st) {
            if a < n && b < n {
                hot[a] = Some(s);
                hot[b] = Some(s);
            }
        }
    }
    let w = rect.width() / n.max(1) as f32;
    // Sample when there are more bars than pixels.
    let step = ((n as f32 / rect.width()).ceil() as usize).max(1);
    for i in (0..n).step_by(step) {
        let v = vals[i];
        let t = if v.is_finite() {
            ((v - lo) / span) as f32
        } else if v > 0.0 {
            1.0
        } else {
            0.0
        };
        let x = rect.left() + w * i as f32;
        let bar = egui::Rect::from_min_max(
            Pos2::new(x, rect.bottom() - t.max(0.02) * h),
            Pos2::new(
                x + (w * step as f32 - if w > 3.0 { 1.0 } else { 0.0 }).max(1.0),
                rect.bottom(),
            ),
        );
        let c = match hot[i] {
            Some(true) => SWAP,
            Some(false) => shade(v),
            None => shade(v).gamma_multiply(0.7),
        };
        p.rect_filled(bar, 1.0, c);
    }
}

/// Batcher's network as a strip of its stages (p, k), merges grouped, the current one highlighted,
/// and the GPU passes that ran them.
fn network_strip(ui: &mut egui::Ui, result: &RunResult, stage: usize) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Network:").strong());
        let mut last_p = 0;
        for (i, st) in result.stages.iter().enumerate().skip(1) {
            let (p, k) = (nt(st).p.unwrap_or(0), nt(st).k.unwrap_or(0));
            if p != last_p {
                ui.label(RichText::new(format!("merge {}:", 2 * p)).small().weak());
                last_p = p;
            }
            let text = RichText::new(format!("k{k}")).small().monospace();
            let text = if i == stage {
                text.strong().background_color(SWAP.gamma_multiply(0.6))
            } else if i < stage {
                text.color(KEEP)
            } else {
                text
            };
            ui.label(text).on_hover_text(format!(
                "stage {i}: p = {p}, k = {k}, {} compare-exchanges, {} swapped",
                nt(st).compare_exchanges.unwrap_or(0),
                nt(st).swaps.unwrap_or(0)
            ));
        }
    });
    egui::CollapsingHeader::new(format!("{} GPU passes", result.passes.len()))
        .id_salt("oddeven-passes")
        .show(ui, |ui| {
            for p in &result.passes {
                ui.monospace(format!(
                    "{:<60} {}",
                    p.label,
                    p.gpu_ms.map_or("-".to_string(), |t| format!("{t:.4} ms"))
                ));
            }
            ui.label("A trace runs every stage as its own pass; untraced runs fuse stages into tiles in workgroup memory.");
        });
}
