//! Radix sort view. A scatter stage draws the array before the pass with every key's digit as a
//! colour (and the digit under it), arrows from where each key is to where it goes, and the array
//! after it: keys of one digit keep their order (their arrows never cross). Beside it the tile
//! histograms with every (tile, bucket)'s global offset, and the look-back per tile. The histogram
//! and scan stages show counts and offsets per bucket as the scan view shows its phases: the counts
//! row, the exclusive offsets row, an arrow from each count to the offset it starts. Large arrays
//! fall back to the generic view (a colour strip).

use super::ViewState;
use crate::algo::RunResult;
use crate::algo::radix::Variant;
use crate::algo::radix::trace::{RadixNote, StepKind};
use crate::ui::colors;
use eframe::egui::{self, Color32, RichText, Sense, Stroke};

const ROW_H: f32 = 24.0;

fn digit_color(d: u32, radix: u32) -> Color32 {
    colors::index_color(d as usize, radix as usize)
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    let Some(st) = result
        .stages
        .get(stage.min(result.stages.len().saturating_sub(1)))
    else {
        ui.label("Run with a trace to see every digit's histogram, offsets and scatter.");
        return;
    };
    let Some(note) = RadixNote::of(st) else {
        return super::generic::show(ui, result, stage, key, state);
    };
    ui.heading(format!("radix {} — {}", result.variant, st.label));
    ui.label(format!(
        "{} digits of {} bits ({} buckets) · tiles of {} keys · {} tile(s) · N = {}",
        note.digits, note.bits, note.radix, note.tile, note.tiles, note.n
    ));
    ui.separator();
    match note.kind {
        StepKind::Input => {
            ui.label("The keys. Each scatter pass sorts them stably by one digit, least significant first.");
            super::generic::show(ui, result, stage, key, state);
        }
        StepKind::Histogram | StepKind::DigitOffsets => {
            let offsets = note.kind == StepKind::DigitOffsets;
            ui.label(if offsets {
                "Exclusive scan of each digit's counts: where that digit's bucket starts in the output."
            } else {
                "One pass over the keys counts every digit's buckets at once."
            });
            let r = note.radix as usize;
            let counts = (stage > 0)
                .then(|| &result.stages[stage - 1])
                .filter(|_| offsets)
                .map(|s| s.data.bits.clone());
            egui::ScrollArea::both()
                .id_salt("radix-hist")
                .show(ui, |ui| {
                    for d in 0..note.digits as usize {
                        let row = st.data.bits.get(d * r..(d + 1) * r).unwrap_or(&[]);
                        let c = counts.as_ref().and_then(|c| c.get(d * r..(d + 1) * r));
                        bucket_rows(ui, &format!("digit {d}"), row, c, note.radix, 1);
                    }
                });
        }
        StepKind::TileHistogram | StepKind::TileScan => {
            ui.label(if note.kind == StepKind::TileScan {
                "One exclusive scan over the counts, bucket-major (bucket 0 of every tile, then bucket 1 …): \
                 every (tile, bucket) gets its global offset."
            } else {
                "Every tile counts its keys per bucket (stored bucket-major for the scan)."
            });
            let counts = (note.kind == StepKind::TileScan && stage > 0)
                .then(|| result.stages[stage - 1].data.bits.clone());
            egui::ScrollArea::horizontal()
                .id_salt("radix-tile-rows")
                .show(ui, |ui| {
                    bucket_rows(
                        ui,
                        "tiles",
                        &st.data.bits,
                        counts.as_deref(),
                        note.radix,
                        note.tiles,
                    )
                });
            tile_table(ui, &note);
        }
        StepKind::Scatter => {
            if !note.detailed() {
                ui.label(
                    "Large N: per-key detail is kept up to 16384 keys; the array after the pass:",
                );
                return super::generic::show(ui, result, stage, key, state);
            }
            ui.label(format!(
                "Digit {} = bits {}..{} of the key. Each key goes to its bucket's offset for its tile + \
                 the keys of its digit before it in the tile: equal digits keep their order.",
                note.digit.unwrap_or(0),
                note.shift,
                (note.shift + note.bits).min(32) - 1
            ));
            egui::ScrollArea::both().id_salt("radix-scatter").show(ui, |ui| {
                scatter_rows(ui, result, stage, &note);
                ui.add_space(8.0);
                tile_table(ui, &note);
                if !note.lookback.is_empty() && result.variant_as() == Some(Variant::Onesweep) {
                    ui.add_space(4.0);
                    let falls: u32 = note.lookback.iter().map(|p| p[1]).sum();
                    ui.label(format!(
                        "look-back: bucket 0 of the {} tiles took {} predecessor counts in all; {} fallback(s) (a tile counted a stuck predecessor itself)",
                        note.tiles,
                        note.lookback.iter().map(|p| p[0]).sum::<u32>(),
                        falls
                    ));
                }
            });
        }
    }
}

/// A row of bucket cells (counts or offsets); with `counts`, the counts row above and arrows.
/// `per` cells share a bucket's colour (1 for per-digit rows, the tile count for bucket-major rows).
fn bucket_rows(
    ui: &mut egui::Ui,
    label: &str,
    row: &[u32],
    counts: Option<&[u32]>,
    radix: u32,
    per: usize,
) {
    let cell = ((ui.available_width() - 90.0) / row.len().max(1) as f32).clamp(6.0, 44.0);
    let text = cell >= 22.0;
    let draw = |ui: &mut egui::Ui, name: &str, vals: &[u32]| {
        ui.horizontal(|ui| {
            ui.add_sized([84.0, ROW_H], egui::Label::new(name));
            let (rect, _) =
                ui.allocate_exact_size(egui::vec2(cell * vals.len() as f32, ROW_H), Sense::hover());
            for (b, &v) in vals.iter().enumerate() {
                let c = egui::Rect::from_min_size(
                    rect.min + egui::vec2(cell * b as f32, 0.0),
                    egui::vec2(cell, ROW_H),
                );
                let bg = digit_color((b / per.max(1)) as u32, radix);
                ui.painter().rect_filled(c.shrink(0.5), 2.0, bg);
                if text {
                    super::cell_text(ui.painter(), c, bg, v.to_string(), 10.0);
                }
            }
            rect
        })
        .inner
    };
    if let Some(c) = counts {
        let top = draw(ui, &format!("{label} counts"), c);
        ui.add_space(16.0);
        let bottom = draw(ui, &format!("{label} offsets"), row);
        // Offset b = offset b-1 + count b-1: an arrow from count b-1 to offset b.
        let p = ui.painter();
        for b in 1..row.len() {
            let from = egui::pos2(top.min.x + cell * (b as f32 - 0.5), top.max.y);
            let to = egui::pos2(bottom.min.x + cell * (b as f32 + 0.5), bottom.min.y);
            p.arrow(from, to - from, Stroke::new(1.0, Color32::from_gray(150)));
        }
        ui.add_space(6.0);
    } else {
        draw(ui, label, row);
    }
}

/// Before / digit / arrows / after (/ values), one cell per key, painted in one allocated rect.
fn scatter_rows(ui: &mut egui::Ui, result: &RunResult, stage: usize, note: &RadixNote) {
    let st = &result.stages[stage];
    let n = note.n;
    let cell = ((ui.available_width() - 90.0) / n.max(1) as f32).clamp(super::MIN_CELL, 56.0);
    let before = crate::data::Data::new(st.data.dtype, note.before.clone());
    let kd = &note.flow.key_digits;
    let mut digit_after = vec![0u32; n];
    for (i, &d) in note.flow.dest.iter().enumerate() {
        if (d as usize) < n {
            digit_after[d as usize] = kd[i];
        }
    }
    const LABEL_W: f32 = 84.0;
    const GAP: f32 = 60.0;
    let rows = if note.values.is_empty() { 3 } else { 4 };
    let height = rows as f32 * (ROW_H + 4.0) + GAP;
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(LABEL_W + cell * n as f32, height),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let x0 = rect.min.x + LABEL_W;
    let text_col = ui.visuals().text_color();
    let row = |y: f32, name: &str, text: &dyn Fn(usize) -> String, dig: &dyn Fn(usize) -> u32| {
        p.text(
            egui::pos2(rect.min.x, y + ROW_H / 2.0),
            egui::Align2::LEFT_CENTER,
            name,
            egui::FontId::proportional(13.0),
            text_col,
        );
        for i in 0..n {
            let c = egui::Rect::from_min_size(
                egui::pos2(x0 + cell * i as f32, y),
                egui::vec2(cell, ROW_H),
            );
            let bg = digit_color(dig(i), note.radix);
            super::value_cell(&p, c, 3.0, bg, text(i), 10.0);
        }
    };
    let y_before = rect.min.y;
    let y_digit = y_before + ROW_H + 4.0;
    let y_after = y_digit + ROW_H + GAP;
    row(y_before, "before", &|i| before.fmt_elem(i), &|i| kd[i]);
    row(y_digit, "digit", &|i| kd[i].to_string(), &|i| kd[i]);
    row(y_after, "after", &|i| st.data.fmt_elem(i), &|i| {
        digit_after[i]
    });
    if !note.values.is_empty() {
        let v = &note.values;
        row(
            y_after + ROW_H + 4.0,
            "values",
            &|i| v[i].to_string(),
            &|i| digit_after[i],
        );
    }
    // One arrow per key, from its cell to its destination, with a small fixed head.
    for (i, &d) in note.flow.dest.iter().enumerate() {
        let from = egui::pos2(x0 + cell * (i as f32 + 0.5), y_digit + ROW_H);
        let to = egui::pos2(x0 + cell * (d as f32 + 0.5), y_after - 1.0);
        let stroke = Stroke::new(1.5, digit_color(kd[i], note.radix));
        p.line_segment([from, to], stroke);
        let dir = (to - from).normalized();
        let side = egui::vec2(-dir.y, dir.x) * 3.5;
        p.line_segment([to, to - dir * 7.0 + side], stroke);
        p.line_segment([to, to - dir * 7.0 - side], stroke);
    }
}

/// Tiles × buckets: each tile's count, and its global offset where the run has them.
fn tile_table(ui: &mut egui::Ui, note: &RadixNote) {
    let r = note.radix as usize;
    if note.flow.tile_hist.is_empty() {
        ui.label("(tile detail is kept for small runs only)");
        return;
    }
    ui.label(RichText::new("tile histograms: count @ global offset").strong());
    egui::Grid::new("radix-tiles").striped(true).show(ui, |ui| {
        ui.label("tile \\ bucket");
        for b in 0..r.min(64) {
            ui.label(RichText::new(b.to_string()).color(digit_color(b as u32, note.radix)));
        }
        ui.end_row();
        for t in 0..note.tiles.min(64) {
            ui.label(format!("tile {t}"));
            for b in 0..r.min(64) {
                let c = note.flow.tile_hist.get(t * r + b).copied().unwrap_or(0);
                let o = note.flow.tile_offsets.get(t * r + b).copied().unwrap_or(0);
                let s = if c == 0 {
                    RichText::new("·").color(Color32::GRAY)
                } else {
                    RichText::new(format!("{c} @ {o}")).monospace()
                };
                ui.label(s);
            }
            ui.end_row();
        }
    });
    if note.tiles > 64 || r > 64 {
        ui.label("(first 64 tiles and buckets)");
    }
}
