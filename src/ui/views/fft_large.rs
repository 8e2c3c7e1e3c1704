//! The large FFT's view (src/algo/fft/large.rs): the array after every pass drawn as the N1 × N2
//! grid of the four-step decomposition (cells coloured by magnitude or phase), above it the plan's
//! passes with the current one lit (the fused twiddles and transpose as their own boxes), beside it
//! the twiddle phases (columns pass) or the transposed store's BMMC matrix (rows pass), and below it
//! one sub-FFT picked by a click: its values before and after the pass and, on demand, the seed's
//! thread-ownership diagram for a sub-FFT of that size.

use super::{ViewState, bmmc, fft};
use crate::algo::RunResult;
use crate::algo::fft::Kernel;
use crate::algo::fft::facts::PlanEntry;
use crate::algo::fft::model::C64;
use crate::algo::fft::trace::{PassKind, PassNotes};
use eframe::egui::{self, Color32, RichText, Stroke, TextureHandle, TextureOptions, pos2, vec2};
use std::collections::HashMap;

#[path = "fft_grid.rs"]
mod grid;
#[path = "fft_sub.rs"]
mod sub;
use grid::{CellMap, Colour};

/// The view's state (in [`ViewState::fft_large`]).
#[derive(Default)]
pub struct LargeState {
    colour: Colour,
    /// Draw the transposed store in memory order (k2 rows of N1) instead of the (k1, k2) grid.
    memory: bool,
    /// The picked sub-FFT: a column (columns pass, input) or a row (rows pass).
    pick: usize,
    /// Show the seed's ownership diagram for the picked sub-FFT, at this step.
    diagram: bool,
    step: Option<usize>,
    key: u64,
    textures: HashMap<(usize, u8), TextureHandle>,
}

/// A result of the large plan (traced stages carry pass notes; untraced runs say so in `extra`).
pub fn is_large(result: &RunResult) -> bool {
    result.stages.iter().any(|s| s.fft_pass().is_some())
        || fft::facts(result).is_some_and(|f| f.kernel == Kernel::Large)
}

/// One box of the pass strip.
struct Item {
    /// The pass it belongs to (None: the input).
    pass: Option<usize>,
    title: String,
    detail: String,
    /// A fused step (twiddles, transpose) inside its pass.
    fused: bool,
}

fn plan(result: &RunResult) -> Vec<PlanEntry> {
    fft::facts(result).and_then(|f| f.plan).unwrap_or_default()
}

/// The strip's boxes from the run's plan (the fused twiddle and permutation entries included).
fn items(result: &RunResult, split: (usize, usize)) -> Vec<Item> {
    let (n1, n2) = split;
    let mut out = vec![Item {
        pass: None,
        title: "input".into(),
        detail: if n2 > 1 {
            format!("x[col + {n2}·n1]")
        } else {
            "x[n]".into()
        },
        fused: false,
    }];
    for e in plan(result) {
        let (pass, title, detail, fused) = match e {
            PlanEntry::Fft(f) => {
                let arrow = match f.dimension.as_str() {
                    "columns" => ", down the columns",
                    "rows" => ", along the rows",
                    _ => "",
                };
                let phase = f.phase.map_or(String::new(), |p| format!(" · phase {p}"));
                (
                    f.pass,
                    format!("pass {}{phase} · {}", f.pass, f.dimension),
                    format!("{} × {}-point FFTs{arrow}", f.count, f.sub_size),
                    false,
                )
            }
            PlanEntry::Twiddle {
                pass, phase, rule, ..
            } => (
                pass,
                match phase {
                    0 if rule.contains("inner") => "× W_M^(nb·ka)".into(),
                    1 => "× W_N^(col·k)".into(),
                    _ => "× W_N^(col·k1)".into(),
                },
                format!("fused into pass {pass}'s stores"),
                true,
            ),
            PlanEntry::L2Exchange {
                pass,
                bytes_per_workgroup,
                ..
            } => (
                pass,
                "through L2".into(),
                format!(
                    "phase 0 → 1 in the pass's output, {} KiB a workgroup",
                    bytes_per_workgroup / 1024
                ),
                true,
            ),
            PlanEntry::Chain {
                pass,
                lag,
                bytes_in_flight,
                ..
            } => (
                pass,
                "chained through L2".into(),
                format!(
                    "phase 1's workgroups {lag} FFTs behind phase 0's in one dispatch, {} KiB between them",
                    bytes_in_flight / 1024
                ),
                true,
            ),
            PlanEntry::Permute {
                pass,
                units: Some(c),
                ..
            } => (
                pass,
                format!("units of {c} columns (BMMC)"),
                format!(
                    "fused into pass {pass}'s stores: each unit's {n1} rows contiguous, so the columns reach DRAM in runs of {} KiB",
                    c * n1 * 8 / 1024
                ),
                true,
            ),
            PlanEntry::Permute { pass, .. } => (
                pass,
                format!("transpose {n1} × {n2} (BMMC)"),
                format!("fused into pass {pass}'s stores"),
                true,
            ),
            PlanEntry::Unpack { pass, mode, fused } => (
                pass,
                format!("pass {pass} · unpack"),
                mode.name().into(),
                fused,
            ),
        };
        let pass = Some(pass);
        out.push(Item {
            pass,
            title,
            detail,
            fused,
        });
    }
    out
}

fn pass_strip(ui: &mut egui::Ui, items: &[Item], current: Option<usize>) {
    ui.horizontal_wrapped(|ui| {
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                ui.label(if it.fused { "+" } else { "»" });
            }
            let on = it.pass == current;
            let visuals = ui.visuals().clone();
            let fill = if on {
                visuals.selection.bg_fill
            } else {
                visuals.faint_bg_color
            };
            let stroke = if on {
                Stroke::new(2.0, visuals.selection.stroke.color)
            } else {
                Stroke::new(1.0, visuals.weak_text_color())
            };
            egui::Frame::new()
                .fill(fill)
                .stroke(stroke)
                .corner_radius(4.0)
                .inner_margin(egui::Margin::symmetric(6, 3))
                .show(ui, |ui| {
                    ui.vertical(|ui| {
                        let t = RichText::new(&it.title);
                        ui.label(if on { t.strong() } else { t });
                        ui.small(&it.detail);
                    });
                })
                .response
                .on_hover_text(if it.fused {
                    "Fused: done by the pass's loads or stores, not a pass of its own"
                } else {
                    "A pass of the plan (its output is the stage of the same number + 1)"
                });
        }
    });
}

/// What the stage shows, in one sentence.
fn heading(n: &PassNotes, result: &RunResult) -> String {
    let (n1, n2) = (n.n1, n.n2);
    let fft_n = n1 * n2;
    let p = n.pass.unwrap_or(0);
    match n.kind {
        PassKind::Input if n2 > 1 => format!(
            "Input: x as the {n1} × {n2} grid — element col + {n2}·n1 in row n1, column col{}",
            if n.complex {
                ""
            } else {
                " (the N reals read as N/2 complex values: the packed form)"
            }
        ),
        PassKind::Input => "Input: one FFT in one pass".into(),
        PassKind::Columns | PassKind::Rows => {
            let (what, rest) = match (n.kind, n.transposed) {
                (PassKind::Columns, true) => (
                    "columns (phase 0, through L2)",
                    format!(
                        "down the columns; every output k1 × W_N^(col·k1) (N = {fft_n}), stored at k1 + {n1}·col for the rows phase"
                    ),
                ),
                (PassKind::Columns, false) => (
                    "columns",
                    match n.units {
                        Some(c) => format!(
                            "down the columns (stride {n2}); every output k1 × W_N^(col·k1) (N = {fft_n}), stored in units of {c} columns, each unit's {n1} rows contiguous (drawn here as the grid)"
                        ),
                        None => format!(
                            "down the columns (stride {n2}); every output k1 × W_N^(col·k1) (N = {fft_n}), stored in place: Y[col + {n2}·k1]"
                        ),
                    },
                ),
                (_, true) => (
                    "rows",
                    format!(
                        "along the rows, stored through the transpose: X[k1 + {n1}·k2] (natural order)"
                    ),
                ),
                _ => (
                    "rows",
                    format!(
                        "along the rows, stored row by row (raw order): output[{n2}·k1 + k2] = X[k1 + {n1}·k2]"
                    ),
                ),
            };
            format!(
                "Pass {p} — {what}: {} FFTs of {} points {rest}",
                n.count, n.sub_size
            )
        }
        PassKind::Inner => format!(
            "Pass {p}, phase 0 — {} × {}-point inner-column FFTs with their twiddles: the pass's sub-FFTs half done, left in its output for phase 1 (through L2); drawn row-major",
            n.count, n.sub_size
        ),
        PassKind::Whole => format!(
            "Pass {p} — whole: the {fft_n}-point FFT in one workgroup (in halves); one pass, no grid: drawn row-major"
        ),
        PassKind::Unpack => format!(
            "Pass {p} — unpack ({}): the {}-point complex FFT turned into the real spectrum; drawn row-major",
            fft::facts(result).map_or("", |f| f.mode.name()),
            fft_n
        ),
    }
}

fn complexes(bits: &[u32]) -> Vec<C64> {
    bits.chunks_exact(2)
        .map(|c| C64::new(f32::from_bits(c[0]) as f64, f32::from_bits(c[1]) as f64))
        .collect()
}

/// The grid's cell map and axis names for a stage.
fn cell_map(n: &PassNotes, len: usize, memory: bool) -> (CellMap, &'static str, &'static str) {
    let (n1, n2) = (n.n1, n.n2);
    let grid = |rows, cols, transposed| CellMap {
        rows,
        cols,
        transposed,
        len: len.min(n1 * n2),
    };
    match n.kind {
        PassKind::Whole | PassKind::Unpack | PassKind::Inner => {
            (grid::square_map(len), "row", "column")
        }
        _ if n2 <= 1 => (grid::square_map(len), "row", "column"),
        PassKind::Input => (grid(n1, n2, false), "n1", "col"),
        PassKind::Columns if n.transposed && memory => (grid(n2, n1, false), "col", "k1"),
        PassKind::Columns => (grid(n1, n2, n.transposed), "k1", "col"),
        PassKind::Rows if n.transposed && memory => (grid(n2, n1, false), "k2", "k1"),
        PassKind::Rows => (grid(n1, n2, n.transposed), "k1", "k2"),
    }
}

/// Whether the picked sub-FFT is a column of the drawn grid (else a row; None: nothing to pick).
fn pick_is_column(n: &PassNotes, memory: bool) -> Option<bool> {
    match n.kind {
        _ if n.n2 <= 1 => None,
        PassKind::Input => Some(true),
        PassKind::Columns => Some(!(n.transposed && memory)),
        PassKind::Rows => Some(n.transposed && memory),
        PassKind::Whole | PassKind::Unpack | PassKind::Inner => None,
    }
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    fft::controls(ui, result, state);
    ui.separator();
    let st = &mut state.fft_large;
    if st.key != key {
        st.textures.clear();
        st.key = key;
        st.step = None;
    }
    let split = fft::facts(result)
        .and_then(|f| f.split)
        .map_or((result.n, 1), |[n1, n2]| (n1, n2));
    let stage = stage.min(result.stages.len().saturating_sub(1));
    let notes = result.stages.get(stage).and_then(|s| s.fft_pass());
    let current = notes.and_then(|n| n.pass);
    pass_strip(ui, &items(result, split), current);
    let Some(notes) = notes else {
        ui.label("Run with a trace to see the array after every pass as the N1 × N2 grid.");
        return;
    };
    egui::ScrollArea::vertical()
        .id_salt("fft-large")
        .auto_shrink([false, false])
        .show(ui, |ui| body(ui, result, stage, notes, st));
}

fn body(
    ui: &mut egui::Ui,
    result: &RunResult,
    stage: usize,
    notes: &PassNotes,
    st: &mut LargeState,
) {
    ui.heading(heading(notes, result));
    let batch = fft::facts(result).map_or(1, |f| f.batch).max(1);
    let data = &result.stages[stage].data;
    let all = complexes(&data.bits);
    let per_fft = (all.len() / batch).max(1);
    let vals = &all[..per_fft.min(all.len())];
    let (map, rname, cname) = cell_map(notes, vals.len(), st.memory);
    ui.horizontal_wrapped(|ui| {
        ui.label("Colour");
        for (c, name, tip) in [
            (
                Colour::Magnitude,
                "magnitude",
                "Cells coloured by |z| in dB below the stage's largest value",
            ),
            (
                Colour::Phase,
                "phase",
                "Cells coloured by arg z around the colour wheel",
            ),
        ] {
            ui.selectable_value(&mut st.colour, c, name)
                .on_hover_text(tip);
        }
        if notes.transposed {
            ui.checkbox(&mut st.memory, "memory order")
                .on_hover_text("Draw the transposed store as it lies in memory: row k2 holds X[k1 + N1·k2] for k1 = 0…N1−1");
        }
        let max = vals
            .iter()
            .map(|z| z.norm())
            .filter(|m| m.is_finite())
            .fold(0.0, f64::max);
        grid::legend(ui, st.colour, max);
    });
    let (br, bc) = map.block();
    let mut caption = format!(
        "{} × {} grid: rows {rname} = 0…{} top to bottom, columns {cname} = 0…{} left to right",
        map.rows,
        map.cols,
        map.rows - 1,
        map.cols - 1
    );
    if batch > 1 {
        caption += &format!("; FFT 0 of the batch of {batch}");
    }
    if br * bc > 1 {
        let (sr, sc) = map.shown();
        caption += &format!(
            "; too big to draw cell by cell: downsampled to {sr} × {sc} blocks of {br} × {bc} cells, each showing its largest |z|"
        );
    }
    ui.label(caption);
    let col_pick = pick_is_column(notes, st.memory);
    let limit = match col_pick {
        Some(true) => map.cols,
        Some(false) => map.rows,
        None => 1,
    };
    st.pick = st.pick.min(limit.saturating_sub(1));
    ui.horizontal_top(|ui| {
        let side = 250.0;
        let aw = (ui.available_width() - side - 20.0).max(160.0);
        let ah = (ui.ctx().content_rect().height() * 0.45).max(200.0);
        let (sr, sc) = map.shown();
        let cell = (aw / sc as f32).min(ah / sr as f32).min(28.0);
        let tex_id = (stage, st.colour as u8 * 2 + u8::from(st.memory));
        let tex = st
            .textures
            .entry(tex_id)
            .or_insert_with(|| {
                ui.ctx().load_texture(
                    format!("fft-large-{stage}"),
                    grid::image(vals, &map, st.colour),
                    TextureOptions::NEAREST,
                )
            })
            .clone();
        let size = vec2(cell * sc as f32, cell * sr as f32);
        let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::click());
        let p = ui.painter_at(rect.expand(2.0));
        p.image(
            tex.id(),
            rect,
            egui::Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
            Color32::WHITE,
        );
        if cell >= 6.0 {
            let line = Stroke::new(0.5, Color32::from_black_alpha(90));
            for r in 1..sr {
                let y = rect.top() + r as f32 * cell;
                p.line_segment([pos2(rect.left(), y), pos2(rect.right(), y)], line);
            }
            for c in 1..sc {
                let x = rect.left() + c as f32 * cell;
                p.line_segment([pos2(x, rect.top()), pos2(x, rect.bottom())], line);
            }
        }
        // Which dimension this pass transformed: an arrow along every sub-FFT.
        let arrow = Stroke::new(1.3, Color32::from_white_alpha(170));
        let every = (12.0 / cell).ceil().max(1.0) as usize;
        match (notes.kind, col_pick) {
            (PassKind::Columns, Some(vertical)) | (PassKind::Rows, Some(vertical)) => {
                let lines = if vertical { sc } else { sr };
                for i in (0..lines).step_by(every) {
                    let m = (i as f32 + 0.5) * cell;
                    let (a, d) = if vertical {
                        (pos2(rect.left() + m, rect.top() + 2.0), vec2(0.0, size.y - 4.0))
                    } else {
                        (pos2(rect.left() + 2.0, rect.top() + m), vec2(size.x - 4.0, 0.0))
                    };
                    // A line with a small head (painter.arrow's head grows with the length).
                    let b = a + d;
                    let back = -d.normalized() * 4.0;
                    let side = vec2(-back.y, back.x) * 0.8;
                    p.line_segment([a, b], arrow);
                    p.line_segment([b, b + back + side], arrow);
                    p.line_segment([b, b + back - side], arrow);
                }
            }
            _ => {}
        }
        // The picked sub-FFT.
        if let Some(vertical) = col_pick {
            let (bsz, along) = if vertical { (bc, 0) } else { (br, 1) };
            let i = (st.pick / bsz) as f32 * cell;
            let r = if along == 0 {
                egui::Rect::from_min_size(rect.min + vec2(i, 0.0), vec2(cell, size.y))
            } else {
                egui::Rect::from_min_size(rect.min + vec2(0.0, i), vec2(size.x, cell))
            };
            p.rect_stroke(
                r,
                1.0,
                Stroke::new(2.0, ui.visuals().strong_text_color()),
                egui::StrokeKind::Outside,
            );
        }
        if let Some(pos) = resp.hover_pos() {
            let dr = (((pos.y - rect.top()) / cell) as usize).min(sr - 1);
            let dc = (((pos.x - rect.left()) / cell) as usize).min(sc - 1);
            let (r, c) = (dr * br, dc * bc);
            if resp.clicked()
                && let Some(vertical) = col_pick
            {
                st.pick = if vertical { c } else { r };
            }
            let txt = match map.index(r, c).and_then(|i| vals.get(i).map(|z| (i, z))) {
                Some((i, z)) if br * bc == 1 => format!(
                    "{rname} = {r}, {cname} = {c} · index {i}\n{:.5} {:+.5}i · |z| {:.5} · arg {:.3} rad",
                    z.re,
                    z.im,
                    z.norm(),
                    z.arg()
                ),
                _ => format!(
                    "block: {rname} {r}…{}, {cname} {c}…{}",
                    r + br - 1,
                    c + bc - 1
                ),
            };
            resp.on_hover_text_at_pointer(txt);
        }
        ui.vertical(|ui| {
            ui.set_width(side);
            side_panel(ui, result, notes, &map, st, stage);
        });
    });
    sub::inspector(ui, result, stage, notes, st);
}

/// Beside the grid: where the twiddles entered (columns pass) or the fused transpose (rows pass).
fn side_panel(
    ui: &mut egui::Ui,
    result: &RunResult,
    notes: &PassNotes,
    map: &CellMap,
    st: &mut LargeState,
    stage: usize,
) {
    let (n1, n2) = (notes.n1, notes.n2);
    let inverse = fft::facts(result).is_some_and(|f| f.inverse);
    if notes.kind == PassKind::Columns && notes.twiddled {
        ui.label(RichText::new("× W_N^(col·k1), fused").strong());
        ui.small(format!(
            "The twiddles entered here: pass {}'s stores multiply output k1 of column col by exp({}2πi·col·k1/{}). They turn phases only: |Y| is the columns' FFT magnitude.",
            notes.pass.unwrap_or(0),
            if inverse { "+" } else { "−" },
            n1 * n2
        ));
        let sign = if inverse { 1.0 } else { -1.0 };
        let n = (n1 * n2) as f64;
        let tw_map = CellMap {
            len: n1 * n2,
            ..*map
        };
        let tex = st
            .textures
            .entry((stage, 100))
            .or_insert_with(|| {
                let w: Vec<C64> = (0..n1 * n2)
                    .map(|i| {
                        let (col, k1) = (i % n2, i / n2);
                        C64::from_polar(
                            1.0,
                            sign * std::f64::consts::TAU * ((col * k1) as f64 % n) / n,
                        )
                    })
                    .collect();
                ui.ctx().load_texture(
                    "fft-large-twiddles",
                    grid::image(&w, &tw_map, Colour::Phase),
                    TextureOptions::NEAREST,
                )
            })
            .clone();
        let (sr, sc) = tw_map.shown();
        let cell = (200.0 / sc.max(sr) as f32).min(12.0);
        ui.add(
            egui::Image::new(&tex).fit_to_exact_size(vec2(cell * sc as f32, cell * sr as f32)),
        )
        .on_hover_text("The twiddle W_N^(col·k1) of every cell, coloured by phase (row k1, column col): row 0 and column 0 are 1");
        ui.small("phase of W_N^(col·k1): row k1, column col");
    } else if notes.kind == PassKind::Rows && notes.transposed {
        ui.label(RichText::new(format!("transpose {n1} × {n2}, fused")).strong());
        let permute = plan(result).into_iter().find_map(|e| match e {
            PlanEntry::Permute {
                pass,
                matrix,
                units: None,
                ..
            } if Some(pass) == notes.pass => Some(matrix),
            _ => None,
        });
        if let Some(rows) = permute {
            ui.small(format!(
                "output[k1 + {n1}·k2] = rows[{n2}·k1 + k2]: row k1 of the rows pass becomes column k1"
            ));
            if !rows.is_empty() {
                let cell = (200.0 / rows.len() as f32).clamp(6.0, 16.0);
                bmmc::draw_matrix(ui, &rows, cell, true);
                ui.small(format!(
                    "The store's index map as a BMMC bit matrix (rows = output bits, columns = input bits): a rotation by log2 N1 = {} bits; the row index k1 goes to the low bits.",
                    n1.trailing_zeros()
                ));
            }
        }
    } else if notes.kind == PassKind::Rows {
        ui.label(RichText::new("raw order").strong());
        ui.small("No transpose: the rows are stored where they were read, so X[k1 + N1·k2] sits at N2·k1 + k2. Run in natural order to see the fused transpose.");
    } else if notes.kind == PassKind::Input && n2 > 1 {
        ui.label(RichText::new("next: the columns").strong());
        ui.small(format!(
            "Pass 0 runs an FFT down each of the {n2} columns (stride {n2} in memory), then the rows pass one along each of the {n1} rows."
        ));
    }
}
