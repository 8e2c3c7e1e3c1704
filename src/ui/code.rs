//! Narration and code: what the current stage did, in a sentence or two, and the WGSL of the
//! kernel(s) that produced it with the entry point's lines highlighted.

use crate::algo::{PassInfo, RunResult};
use eframe::egui::{self, Color32, RichText};

/// The passes that produced `stage`: the stage's "passes" note, else an even split of the passes
/// over the stages after the input.
pub fn passes_of(result: &RunResult, stage: usize) -> Vec<usize> {
    if let Some(v) = result
        .stages
        .get(stage)
        .and_then(|s| s.notes.get("passes"))
        .and_then(|v| v.as_array())
    {
        return v
            .iter()
            .filter_map(|x| x.as_u64())
            .map(|x| x as usize)
            .collect();
    }
    let np = result.passes.len();
    let ns = result.stages.len().saturating_sub(1);
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

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize) {
    let Some(st) = result.stages.get(stage) else {
        return;
    };
    ui.heading("What happened");
    let narration = st
        .notes
        .get("narration")
        .and_then(|v| v.as_str())
        .map(str::to_string)
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
    let passes = passes_of(result, stage);
    if passes.is_empty() {
        return;
    }
    ui.separator();
    for &i in &passes {
        if let Some(p) = result.passes.get(i) {
            pass_header(ui, i, p);
        }
    }
    // Each shader file once, with the entry points of this stage's passes highlighted.
    let mut files: Vec<(std::sync::Arc<str>, Vec<String>)> = Vec::new();
    for k in passes
        .iter()
        .filter_map(|&i| result.passes.get(i)?.kernel.as_ref())
    {
        match files.iter_mut().find(|(s, _)| **s == *k.source) {
            Some((_, entries)) => {
                if !entries.contains(&k.entry) {
                    entries.push(k.entry.clone());
                }
            }
            None => files.push((k.source.clone(), vec![k.entry.clone()])),
        }
    }
    // Scroll the highlighted code into view once per stage change.
    let key = egui::Id::unique("code-scrolled");
    let scroll_now = ui.data(|d| d.get_temp::<usize>(key)) != Some(stage);
    ui.data_mut(|d| d.insert_temp(key, stage));
    egui::ScrollArea::both()
        .id_salt("code")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for (i, (src, entries)) in files.iter().enumerate() {
                code(ui, src, entries, scroll_now && i == 0);
            }
        });
}

fn pass_header(ui: &mut egui::Ui, i: usize, p: &PassInfo) {
    let time = p.gpu_ms.map_or("time unavailable".to_string(), |t| {
        format!("{:.2} µs", t * 1000.0)
    });
    let entry = p
        .kernel
        .as_ref()
        .map_or(String::new(), |k| format!(" · fn {}", k.entry));
    ui.label(RichText::new(format!("pass {i}: {}{entry} · {time}", p.label)).strong());
}

fn code(ui: &mut egui::Ui, src: &str, entries: &[String], scroll: bool) {
    let ranges: Vec<(usize, usize)> = entries.iter().filter_map(|e| entry_lines(src, e)).collect();
    let first = ranges.iter().map(|r| r.0).min();
    let bg = if ui.visuals().dark_mode {
        Color32::from_rgb(40, 60, 40)
    } else {
        Color32::from_rgb(215, 240, 215)
    };
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.spacing_mut().item_spacing.y = 0.0;
        for (n, line) in src.lines().enumerate() {
            let on = ranges.iter().any(|&(a, b)| (a..b).contains(&n));
            let text = RichText::new(format!("{:>3}  {line}", n + 1))
                .monospace()
                .size(11.0);
            let text = if on {
                text.background_color(bg)
            } else {
                text.weak()
            };
            let r = ui.add(egui::Label::new(text).wrap_mode(egui::TextWrapMode::Extend));
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
}
