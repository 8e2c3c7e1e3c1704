//! Narration and code: what the current stage did, in a sentence or two, and the WGSL of the
//! kernel(s) that produced it with the lines of this stage highlighted: the lines between the
//! kernel's `// @step NAME` / `// @end` (or `// @section NAME`) markers for stages that are a part of
//! one dispatch (a phase, a butterfly, the look-back), else the entry point's lines.

use super::app::TraceState;
use crate::algo::fft::model::StepKind;
use crate::algo::{PassInfo, RoomNotes, RunResult, Stage, oddeven, scan};
use eframe::egui::{self, Color32, RichText};
use std::sync::Arc;

/// The passes that produced `stage`: the stage's own list, else an even split of the passes over
/// the stages after the input.
pub fn passes_of(result: &RunResult, stage: usize) -> Vec<usize> {
    passes_in(result, stage, result.stages.len())
}

/// [`passes_of`] in a trace of `stages` stages (a trace streaming in has fewer so far).
pub fn passes_in(result: &RunResult, stage: usize, stages: usize) -> Vec<usize> {
    if let Some(v) = result
        .stages
        .get(stage)
        .and_then(|s| s.notes.passes.clone())
    {
        return v;
    }
    let np = result.passes.len();
    let ns = stages.saturating_sub(1);
    if stage == 0 || ns == 0 || np == 0 {
        return Vec::new();
    }
    if np.is_multiple_of(ns) {
        let k = np / ns;
        return ((stage - 1) * k..stage * k).collect();
    }
    (0..np).collect()
}

/// Lines [start, end) of `fn entry(` in `src`, by brace depth.
pub fn entry_lines(src: &str, entry: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let pat = format!("fn {entry}(");
    let start = lines.iter().position(|l| l.contains(&pat))?;
    // Include the attribute lines right above (@compute @workgroup_size).
    let mut first = start;
    while first > 0 && lines[first - 1].trim_start().starts_with('@') {
        first -= 1;
    }
    let mut depth = 0i32;
    let mut opened = false;
    for (i, l) in lines.iter().enumerate().skip(start) {
        for c in l.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some((first, i + 1));
        }
    }
    Some((first, lines.len()))
}

/// A marked region of a kernel's WGSL, lines `[start, end)` (0-based, the marker lines excluded):
/// `// @step NAME` … `// @end`, or `// @section NAME`, which runs to the next marker or to the end
/// of the block it sits in. Markers are comments: the kernels compile the same with or without them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub name: String,
    pub start: usize,
    pub end: usize,
}

fn marker_of(line: &str) -> Option<(&'static str, &str)> {
    let t = line.trim_start().strip_prefix("//")?.trim_start();
    for kind in ["@step", "@section", "@end"] {
        if let Some(rest) = t.strip_prefix(kind) {
            return Some((kind, rest.trim()));
        }
    }
    None
}

/// Every `@step` and `@section` region of `src`.
pub fn markers(src: &str) -> Vec<Marker> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some((kind, name)) = marker_of(l) else {
            continue;
        };
        if kind == "@end" || name.is_empty() {
            continue;
        }
        let mut end = lines.len();
        let mut depth = 0i32;
        'scan: for (j, lj) in lines.iter().enumerate().skip(i + 1) {
            if let Some((k2, _)) = marker_of(lj) {
                // A step ends at its @end; a section at any marker.
                if k2 == "@end" || kind == "@section" {
                    end = j;
                    break;
                }
                continue;
            }
            if kind == "@section" {
                let code = lj.split("//").next().unwrap_or("");
                for c in code.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth < 0 {
                                end = j;
                                break 'scan;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        // Trailing blank lines are not part of the region.
        while end > i + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        out.push(Marker {
            name: name.to_string(),
            start: i + 1,
            end,
        });
    }
    out
}

/// The marker names (see [`markers`]) of the kernel lines that produced `stage`, for stages that
/// are part of a kernel (a step inside one dispatch); empty when the whole entry point is the stage.
pub fn stage_steps(result: &RunResult, stage: usize) -> Vec<&'static str> {
    let Some(s) = result.stages.get(stage) else {
        return Vec::new();
    };
    if stage == 0 {
        return Vec::new();
    }
    let is_exchange = |s: &Stage| s.fft().is_some_and(|n| n.kind == StepKind::Exchange);
    match &s.notes.room {
        RoomNotes::Oddeven(n) => {
            if n.parity.is_some() && result.variant_as() == Some(oddeven::Variant::Transposition) {
                vec!["phase"]
            } else if n.p.is_some() && n.k.is_some() {
                vec!["compare-exchange"]
            } else {
                Vec::new()
            }
        }
        RoomNotes::Scan(n) if result.variant_as() == Some(scan::Variant::Decoupled) => {
            match n.array {
                Some("tile inclusive prefixes") => vec!["reduce", "publish", "look-back", "prefix"],
                Some("output") => vec!["store"],
                _ => Vec::new(),
            }
        }
        RoomNotes::Fft(n) => match n.kind {
            StepKind::Regroup => vec!["regroup"],
            StepKind::Exchange => vec!["exchange"],
            StepKind::Butterfly => {
                let after_exchange = result.stages[..stage].iter().any(is_exchange);
                vec![if after_exchange {
                    "exchange-butterfly"
                } else {
                    "local-butterfly"
                }]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// One shader file of a stage: its source, the entry points of the stage's passes in it, and the
/// highlighted line ranges `[start, end)`: the marked steps of the stage inside those entry points
/// where the kernel has them (`marked`), else the entry points whole.
#[derive(Clone, Debug)]
pub struct Highlight {
    pub source: Arc<str>,
    pub entries: Vec<String>,
    pub ranges: Vec<(usize, usize)>,
    pub marked: bool,
}

/// The code of `stage`: each shader file of its passes once, with the lines of this stage.
pub fn highlights(result: &RunResult, stage: usize) -> Vec<Highlight> {
    highlights_of(result, stage, &passes_of(result, stage))
}

fn highlights_of(result: &RunResult, stage: usize, passes: &[usize]) -> Vec<Highlight> {
    let mut files: Vec<Highlight> = Vec::new();
    for k in passes
        .iter()
        .filter_map(|&i| result.passes.get(i)?.kernel.as_ref())
    {
        match files.iter_mut().find(|h| *h.source == *k.source) {
            Some(h) => {
                if !h.entries.contains(&k.entry) {
                    h.entries.push(k.entry.clone());
                }
            }
            None => files.push(Highlight {
                source: k.source.clone(),
                entries: vec![k.entry.clone()],
                ranges: Vec::new(),
                marked: false,
            }),
        }
    }
    let steps = stage_steps(result, stage);
    for h in &mut files {
        let entry: Vec<(usize, usize)> = h
            .entries
            .iter()
            .filter_map(|e| entry_lines(&h.source, e))
            .collect();
        let marked: Vec<(usize, usize)> = markers(&h.source)
            .into_iter()
            .filter(|m| steps.contains(&m.name.as_str()) && m.start < m.end)
            .filter(|m| entry.iter().any(|&(a, b)| a <= m.start && m.end <= b))
            .map(|m| (m.start, m.end))
            .collect();
        h.marked = !marked.is_empty();
        h.ranges = if h.marked { marked } else { entry };
    }
    files
}

/// The narration and code of `stage`; `trace`: whether the trace is whole, streaming in or
/// stopped early (its stages and pass times are not all there).
pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, trace: TraceState) {
    let Some(st) = result.stages.get(stage) else {
        return;
    };
    ui.heading("What happened");
    let narration = st
        .notes
        .narration
        .clone()
        .or_else(|| super::narrate::narrate(result, stage))
        .unwrap_or_else(|| {
            if stage == 0 {
                "The input, as uploaded to the GPU.".to_string()
            } else if result.passes.len() + 1 < result.stages.len() {
                format!(
                    "{}: written by the kernel itself into a trace buffer (its steps run inside one \
                     dispatch, separated by barriers) and read back after the pass.",
                    st.label
                )
            } else {
                format!("{}: the buffer as read back from the GPU after this pass.", st.label)
            }
        });
    ui.label(narration);
    let stages = match trace {
        TraceState::Arriving { of } | TraceState::Stopped { of } => of,
        TraceState::Complete => result.stages.len(),
    };
    let passes = passes_in(result, stage, stages);
    if passes.is_empty() {
        return;
    }
    ui.separator();
    let arriving = matches!(trace, TraceState::Arriving { .. });
    for &i in &passes {
        if let Some(p) = result.passes.get(i) {
            pass_header(ui, i, p, arriving);
        }
    }
    let files = highlights_of(result, stage, &passes);
    if files.iter().any(|h| h.marked) {
        ui.small(format!(
            "highlighted: the kernel's {} lines (// @step / @section markers)",
            stage_steps(result, stage).join(", ")
        ));
    }
    // Long lines wrap by default: the panel is narrow and a horizontal scroll bar hides until hovered.
    let wrap_id = egui::Id::unique("code-wrap");
    let mut wrap = ui.data_mut(|d| *d.get_persisted_mut_or(wrap_id, true));
    ui.checkbox(&mut wrap, "Wrap long lines").on_hover_text(
        "Wrap WGSL lines wider than the panel (off: one line per row, scroll sideways)",
    );
    ui.data_mut(|d| d.insert_persisted(wrap_id, wrap));
    // Scroll the highlighted code into view once per stage change.
    let key = egui::Id::unique("code-scrolled");
    let scroll_now = ui.data(|d| d.get_temp::<usize>(key)) != Some(stage);
    ui.data_mut(|d| d.insert_temp(key, stage));
    let area = if wrap {
        egui::ScrollArea::vertical()
    } else {
        egui::ScrollArea::both()
    };
    area.id_salt("code")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for (i, h) in files.iter().enumerate() {
                code(ui, &h.source, &h.ranges, scroll_now && i == 0, wrap);
            }
        });
}

/// `arriving`: the run is still going, its pass times come with its result.
fn pass_header(ui: &mut egui::Ui, i: usize, p: &PassInfo, arriving: bool) {
    let time = match (p.gpu_ms, arriving) {
        (Some(t), _) => format!("{:.2} µs", t * 1000.0),
        (None, true) => "time at the end".to_string(),
        (None, false) => "time unavailable".to_string(),
    };
    let entry = p
        .kernel
        .as_ref()
        .map_or(String::new(), |k| format!(" · fn {}", k.entry));
    ui.label(RichText::new(format!("pass {i}: {}{entry} · {time}", p.label)).strong());
}

fn code(ui: &mut egui::Ui, src: &str, ranges: &[(usize, usize)], scroll: bool, wrap: bool) {
    let first = ranges.iter().map(|r| r.0).min();
    let bg = if ui.visuals().dark_mode {
        Color32::from_rgb(40, 60, 40)
    } else {
        Color32::from_rgb(215, 240, 215)
    };
    // The memory lens's picked access site, when this kernel has that line.
    let lens: Option<(usize, String)> = ui
        .data(|d| d.get_temp::<Option<(usize, String)>>(egui::Id::unique(super::lens::LENS_LINE)))
        .flatten();
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.spacing_mut().item_spacing.y = 0.0;
        for (n, line) in src.lines().enumerate() {
            // The user's kernel (the workbench) may hold characters the fonts cannot draw.
            let line = &super::workbench::drawable(ui.ctx(), line, true);
            if lens.as_ref().is_some_and(|(l, t)| *l == n && t == line) {
                let text = RichText::new(format!("{:>3}  {line}", n + 1))
                    .monospace()
                    .size(11.0)
                    .strong()
                    .background_color(Color32::from_rgb(120, 90, 20));
                ui.add(egui::Label::new(text).wrap_mode(egui::TextWrapMode::Extend))
                    .on_hover_text("the access site the memory lens shows");
                continue;
            }
            let on = ranges.iter().any(|&(a, b)| (a..b).contains(&n));
            let text = RichText::new(format!("{:>3}  {line}", n + 1))
                .monospace()
                .size(11.0);
            let text = if on {
                text.background_color(bg)
            } else {
                text.weak()
            };
            let mode = if wrap {
                egui::TextWrapMode::Wrap
            } else {
                egui::TextWrapMode::Extend
            };
            let r = ui.add(egui::Label::new(text).wrap_mode(mode));
            if scroll && first == Some(n) {
                r.scroll_to_me(Some(egui::Align::TOP));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_entry_function() {
        let src = "fn helper() {\n}\n@compute @workgroup_size(1)\nfn main(@builtin(x) y: u32) {\n  if (a) {\n  }\n}\nfn after() {}\n";
        assert_eq!(super::entry_lines(src, "main"), Some((2, 7)));
        assert_eq!(super::entry_lines(src, "nope"), None);
    }

    #[test]
    fn finds_steps_and_sections() {
        let src = "fn main() {\n  // @step a\n  x();\n\n  // @end\n  for (;;) {\n    // @section b\n    y();\n    if (z) { w(); }\n  }\n  // @section c\n  v();\n}\n";
        let m = super::markers(src);
        let r: Vec<(&str, usize, usize)> = m
            .iter()
            .map(|m| (m.name.as_str(), m.start, m.end))
            .collect();
        assert_eq!(r, [("a", 2, 3), ("b", 7, 9), ("c", 11, 12)]);
    }
}
