//! One sub-FFT of a large FFT's pass, picked in the grid: its values before and after the pass,
//! and on demand the seed's thread-ownership diagram for a sub-FFT of that size (derived on the
//! CPU from the seed's schedule; the large plan's passes are not traced inside).

use super::{LargeState, complexes};
use crate::algo::fft::model::{self, C64};
use crate::algo::fft::trace::{Notes, PassKind, PassNotes};
use crate::algo::{RoomNotes, RunResult, Stage};
use crate::data::{DType, Data};
use crate::ui::views::fft;
use eframe::egui::{self, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints};

/// The largest sub-FFT whose ownership diagram is drawn (one row per point).
pub const MAX_DIAGRAM: usize = 128;

fn at(v: &[C64], i: usize) -> C64 {
    v.get(i).copied().unwrap_or(C64::new(f64::NAN, f64::NAN))
}

/// A sub-FFT of `len` values: what it is, its input and its output.
fn before_after(
    what: String,
    len: usize,
    before: &dyn Fn(usize) -> C64,
    after: &dyn Fn(usize) -> C64,
) -> (String, Vec<C64>, Option<Vec<C64>>) {
    (
        what,
        (0..len).map(before).collect(),
        Some((0..len).map(after).collect()),
    )
}

/// The picked sub-FFT: (what it is, its input, its output after this pass).
fn picked(
    result: &RunResult,
    stage: usize,
    n: &PassNotes,
    pick: usize,
) -> Option<(String, Vec<C64>, Option<Vec<C64>>)> {
    let (n1, n2) = (n.n1, n.n2);
    let cur = complexes(&result.stages[stage].data.bits);
    let prev = stage
        .checked_sub(1)
        .map(|i| complexes(&result.stages[i].data.bits))
        .unwrap_or_default();
    let fft_n = n1 * n2;
    Some(match n.kind {
        PassKind::Input if n2 > 1 => (
            format!(
                "column {pick}: x[{pick} + {n2}·n1], n1 = 0…{} (pass 0 transforms it)",
                n1 - 1
            ),
            (0..n1).map(|r| at(&cur, pick + n2 * r)).collect(),
            None,
        ),
        PassKind::Input => (
            "the whole input".into(),
            cur[..fft_n.min(cur.len())].to_vec(),
            None,
        ),
        PassKind::Columns | PassKind::Rows => {
            let col = n.kind == PassKind::Columns;
            // Element i of the picked sub-FFT before the pass, and output k after it.
            let before = |i: usize| if col { pick + n2 * i } else { n2 * pick + i };
            let after = |k: usize| match (col, n.transposed) {
                (true, true) => k + n1 * pick,
                (true, false) => pick + n2 * k,
                (false, true) => pick + n1 * k,
                (false, false) => n2 * pick + k,
            };
            let what = match (col, n.transposed) {
                (true, t) => format!(
                    "column {pick}: before x[{pick} + {n2}·n1], after W_N^({pick}·k1)·FFT_{n1}(column)[k1] at {}",
                    if t {
                        format!("k1 + {n1}·{pick}")
                    } else {
                        format!("{pick} + {n2}·k1")
                    }
                ),
                (false, t) => format!(
                    "row k1 = {pick}: before Y[{n2}·{pick} + n2], after X[{pick} + {n1}·k2] (at {})",
                    if t {
                        format!("{pick} + {n1}·k2: the transposed store")
                    } else {
                        format!("{n2}·{pick} + k2: raw order")
                    }
                ),
            };
            let len = if col { n1 } else { n2 };
            before_after(what, len, &|i| at(&prev, before(i)), &|k| {
                at(&cur, after(k))
            })
        }
        PassKind::Whole => (
            "the whole FFT".into(),
            (0..fft_n).map(|i| at(&prev, i)).collect(),
            Some((0..fft_n).map(|i| at(&cur, i)).collect()),
        ),
        PassKind::Unpack | PassKind::Inner => return None,
    })
}

pub(super) fn inspector(
    ui: &mut egui::Ui,
    result: &RunResult,
    stage: usize,
    notes: &PassNotes,
    st: &mut LargeState,
) {
    ui.separator();
    let Some((what, before, after)) = picked(result, stage, notes, st.pick) else {
        ui.label(
            "The unpacking combines bins k and N − k of the packed FFT, and a pass's first phase through L2 leaves its sub-FFTs half done: no sub-FFTs to pick.",
        );
        return;
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Sub-FFT").strong());
        let limit = match notes.kind {
            PassKind::Rows => notes.n1,
            _ if notes.n2 > 1 => notes.n2,
            _ => 1,
        };
        if limit > 1 {
            let name = if notes.kind == PassKind::Rows {
                "row k1"
            } else {
                "column"
            };
            ui.add(egui::Slider::new(&mut st.pick, 0..=limit - 1).text(name))
                .on_hover_text("Which sub-FFT to inspect (or click a column / row in the grid)");
        }
        ui.label(what);
    });
    let h = 150.0;
    Plot::new(("fft-large-sub", stage))
        .legend(Legend::default())
        .height(h)
        .allow_scroll(false)
        .show(ui, |p| {
            let line = |v: &[C64], f: fn(&C64) -> f64| -> PlotPoints {
                v.iter()
                    .enumerate()
                    .map(|(i, z)| [i as f64, f(z)])
                    .collect()
            };
            p.line(Line::new("before re", line(&before, |z| z.re)));
            p.line(Line::new("before im", line(&before, |z| z.im)));
            if let Some(a) = &after {
                p.line(Line::new("after re", line(a, |z| z.re)));
                p.line(Line::new("after im", line(a, |z| z.im)));
            }
        });
    ui.horizontal_wrapped(|ui| {
        ui.toggle_value(&mut st.diagram, "seed's ownership diagram of this sub-FFT")
            .on_hover_text(
                "The seed's thread-ownership diagram (as the FFT view draws it) for one sub-FFT of this size, on these values",
            );
    });
    if st.diagram {
        diagram(ui, result, notes, &before, st);
    }
}

/// The seed's schedule for the picked sub-FFT, drawn with the FFT view's diagram.
fn diagram(
    ui: &mut egui::Ui,
    result: &RunResult,
    notes: &PassNotes,
    input: &[C64],
    st: &mut LargeState,
) {
    let m = input.len();
    let pass = notes.pass.unwrap_or(0);
    let e = super::fft::facts(result)
        .and_then(|f| f.fft_entry(pass).map(|e| e.elements_per_invocation))
        .unwrap_or(2)
        .clamp(2, m.max(2));
    ui.small(format!(
        "Not read back from the GPU: the large plan's passes run the radix kernel's sub-FFTs (rounds of log2 E stages in registers, through workgroup memory between rounds), not the seed's xor exchanges, and the trace holds only each pass's input and output. This is the seed's schedule (model::schedule) for one {m}-point sub-FFT with E = {e} (W = {} threads), derived on the CPU. To see the seed's kernel trace it on the GPU, run one {m}-point FFT without the large plan.",
        m / e
    ));
    if !m.is_power_of_two() || m < 2 {
        return;
    }
    if m > MAX_DIAGRAM {
        ui.label(format!(
            "The diagram has one row per point: drawn for sub-FFTs up to {MAX_DIAGRAM} points; this pass's are {m}. Pick a split with smaller factors (e.g. 1024 = 32 × 32)."
        ));
        return;
    }
    let inverse = super::fft::facts(result).is_some_and(|f| f.inverse);
    let steps = model::schedule(m, e);
    let values = model::stage_values(input, e, inverse);
    let (log_m, log_e) = (m.trailing_zeros(), e.trailing_zeros());
    let last = steps.len() - 1;
    let stages: Vec<Stage> = steps
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(i, (step, v))| {
            let bits = v
                .iter()
                .flat_map(|z| [(z.re as f32).to_bits(), (z.im as f32).to_bits()])
                .collect();
            Stage::with(
                step.kind.name(),
                Data::new(DType::F32, bits),
                RoomNotes::Fft(Notes {
                    step: i,
                    kind: step.kind,
                    stride: step.stride,
                    owner: step.owner.clone(),
                    lo: step.lo.clone(),
                    complex: true,
                    xor: None,
                    dft_index: (i == last)
                        .then(|| (0..m).map(|p| model::bitrev(p, log_m)).collect()),
                    written_to: (i == last)
                        .then(|| (0..m).map(|p| model::e_map(p, log_m, log_e)).collect()),
                }),
            )
        })
        .collect();
    let mut step = st.step.unwrap_or(last).min(last);
    ui.add(egui::Slider::new(&mut step, 0..=last).text("step"))
        .on_hover_text("The step of the seed's schedule drawn (columns up to it are lit)");
    st.step = Some(step);
    egui::ScrollArea::both()
        .id_salt("fft-large-diagram")
        .max_height(460.0)
        .show(ui, |ui| fft::diagram(ui, &stages, step, m, m / e));
}
