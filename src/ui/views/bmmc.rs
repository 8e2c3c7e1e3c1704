//! BMMC views: the plan (every pass's factor matrix beside the array after it), the permuted
//! image (a built-in test picture permuted pass by pass), the bit-matrix editor (toggles, complement,
//! presets, live status; "Run" hands the matrix to the app) and the bmmc-stats histogram.

use super::ViewState;
use crate::algo::bmmc::facts::Facts;
use crate::algo::bmmc::matrix::{Affine, BitMatrix};
use crate::algo::bmmc::plan::Params;
use crate::algo::bmmc::{Options, PRESETS, plan_summary, preset, stats};
use crate::algo::{RunResult, Stage};
use crate::ui::colors;
use eframe::egui::{self, Color32, ColorImage, RichText, Stroke, TextureHandle, TextureOptions};
use egui_plot::{Bar, BarChart, Legend, Plot};

#[path = "bmmc_editor.rs"]
mod editor;
use editor::{editor_view, stats_view};

/// The largest N drawn as a picture.
pub const MAX_IMAGE_BITS: usize = 20;

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Tab {
    #[default]
    Plan,
    Image,
    Editor,
    Stats,
}

/// The scratch matrix of the editor.
pub struct Editor {
    pub m: BitMatrix,
    pub c: u32,
    pub preset: String,
}

/// View state (in [`ViewState::bmmc`]).
#[derive(Default)]
pub struct BmmcState {
    tab: Tab,
    editor: Option<Editor>,
    /// Set by the editor's Run button: the app runs bmmc with these options at this log2 N.
    pub apply: Option<(Options, u32)>,
    images: Vec<TextureHandle>,
    image_key: u64,
    stats_n: usize,
    stats: Option<Result<stats::Stats, String>>,
    /// A picture opened with the file dialog (replaces the built-in one).
    picture: Option<image::RgbaImage>,
    picture_rx: Option<std::sync::mpsc::Receiver<Result<image::RgbaImage, String>>>,
    picture_msg: Option<String>,
}

/// Open a PNG off the UI thread (rfd blocks its caller); the result comes back by channel.
fn open_picture(ctx: &egui::Context, st: &mut BmmcState) {
    let (tx, rx) = std::sync::mpsc::channel();
    let ctx = ctx.clone();
    #[cfg(target_arch = "wasm32")]
    crate::ui::files::open(&ctx, &[("PNG image", &["png"])], tx, |name, bytes| {
        image::load_from_memory(&bytes)
            .map(|i| i.to_rgba8())
            .map_err(|e| format!("cannot open '{name}': {e}"))
    });
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::spawn(move || {
        let Some(path) = rfd::FileDialog::new()
            .add_filter("PNG image", &["png"])
            .pick_file()
        else {
            return;
        };
        let r = image::open(&path)
            .map(|i| i.to_rgba8())
            .map_err(|e| format!("cannot open '{}': {e}", path.display()));
        let _ = tx.send(r);
        ctx.request_repaint();
    });
    st.picture_rx = Some(rx);
}

/// The factor matrix of stage `s` (rows as strings), empty without BMMC notes.
fn rows_of(s: &Stage) -> Vec<String> {
    s.bmmc().map(|n| n.matrix.clone()).unwrap_or_default()
}

/// Draw a bit matrix as a grid (rows = output bits, columns = input bits), `cell` pixels a cell.
pub(crate) fn draw_matrix(
    ui: &mut egui::Ui,
    rows: &[String],
    cell: f32,
    strong: bool,
) -> egui::Response {
    let n = rows.len().max(1);
    let (rect, resp) = ui.allocate_exact_size(
        egui::vec2(cell * n as f32, cell * n as f32),
        egui::Sense::hover(),
    );
    let p = ui.painter();
    let on = if strong {
        ui.visuals().strong_text_color()
    } else {
        ui.visuals().text_color().gamma_multiply(0.7)
    };
    p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    for (i, r) in rows.iter().enumerate() {
        for (j, ch) in r.chars().enumerate() {
            if ch == '1' {
                let c = egui::Rect::from_min_size(
                    rect.min + egui::vec2(j as f32 * cell, i as f32 * cell),
                    egui::vec2(cell, cell),
                );
                p.rect_filled(c.shrink((cell * 0.12).min(1.0)), 1.0, on);
            }
        }
    }
    p.rect_stroke(
        rect,
        2.0,
        Stroke::new(1.0, ui.visuals().weak_text_color()),
        egui::StrokeKind::Outside,
    );
    resp.on_hover_text(
        "rows = output bits (bit 0 on top), columns = input bits (bit 0 on the left)",
    )
}

/// Whether `input` is 0, 1, 2, …: then a value is the index it started at.
fn is_iota(input: &crate::data::Data) -> bool {
    input.bits.iter().enumerate().all(|(i, &v)| v == i as u32)
}

pub fn show(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    let st = &mut state.bmmc;
    ui.horizontal(|ui| {
        for (t, name, tip) in [
            (
                Tab::Plan,
                "Plan",
                "The plan's passes: each pass's matrix and the array after it",
            ),
            (
                Tab::Image,
                "Permuted image",
                "A picture permuted by every pass, as an image",
            ),
            (Tab::Editor, "Matrix editor", "Edit a bit matrix and run it"),
            (
                Tab::Stats,
                "rank statistics",
                "Distributions of rank_m, rank_b and pass counts over random bit permutations",
            ),
        ] {
            ui.selectable_value(&mut st.tab, t, name).on_hover_text(tip);
        }
        ui.separator();
        let facts = result.facts::<Facts>();
        let pc = facts.as_ref().map_or(0, |f| f.pass_count);
        let bpc = facts.as_ref().is_some_and(|f| f.bpc);
        ui.label(format!(
            "{} · {} pass{} · {}",
            result.variant,
            pc,
            if pc == 1 { "" } else { "es" },
            if bpc { "BPC" } else { "BMMC" }
        ));
        if let Some(b) = facts.and_then(|f| f.bound) {
            ui.label(format!(
                "rank_m = {}, rank_b = {}, Cormen bound {} passes",
                b.rank_m, b.rank_b, b.bound_passes
            ));
        }
    });
    ui.separator();
    match st.tab {
        Tab::Plan => plan_view(ui, result, stage, key, state),
        Tab::Image => image_view(ui, result, stage, key, &mut state.bmmc),
        Tab::Editor => editor_view(ui, result, &mut state.bmmc),
        Tab::Stats => stats_view(ui, result, &mut state.bmmc),
    }
}

fn plan_view(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, state: &mut ViewState) {
    if result.stages.is_empty() {
        ui.label("Run with a trace to see the passes.");
        return;
    }
    let stage = stage.min(result.stages.len() - 1);
    let n = result.n;
    let nbits = result.facts::<Facts>().map_or(0, |f| f.log_n);
    let iota = is_iota(&result.input);
    let color = |v: u32, i: usize| -> Color32 {
        if iota {
            colors::index_color(v as usize, n)
        } else {
            colors::index_color(i, n)
        }
    };
    let mcell = (120.0 / nbits.max(1) as f32).clamp(4.0, 14.0);
    let cell = (ui.available_width() - 140.0 - mcell * nbits as f32) / n as f32;
    egui::ScrollArea::vertical()
        .id_salt("bmmc-plan")
        .show(ui, |ui| {
            for (r, s) in result.stages.iter().enumerate() {
                let current = r == stage;
                ui.horizontal(|ui| {
                    let rows = rows_of(s);
                    ui.vertical(|ui| {
                        draw_matrix(ui, &rows, mcell, current);
                        let c = s.bmmc().map_or(0, |n| n.complement);
                        if c != 0 {
                            ui.small(format!("xor {c:#b}"));
                        }
                    });
                    ui.vertical(|ui| {
                        let kind = s.bmmc().and_then(|n| n.kind).map_or("input (the whole A)", |k| k.name());
                        let text = RichText::new(format!("{} — {kind}", s.label));
                        ui.label(if current { text.strong() } else { text });
                        if let Some(t) = s.bmmc().and_then(|n| n.tile_bits.as_ref()) {
                            ui.small(format!("tile: input bits {}", serde_json::json!(t)));
                        }
                        if cell >= super::MIN_CELL {
                            ui.horizontal(|ui| {
                                for i in 0..n {
                                    let v = s.data.bits[i];
                                    let bg = color(v, i);
                                    let bg = if current { bg } else { bg.gamma_multiply(0.6) };
                                    let (rect, _) = ui.allocate_exact_size(egui::vec2(cell, 22.0), egui::Sense::hover());
                                    let text = s.data.fmt_elem(i);
                                    super::value_cell(ui.painter(), rect, 2.0, bg, text, 10.0);
                                }
                            });
                        }
                    });
                });
                ui.add_space(4.0);
            }
            if cell < super::MIN_CELL {
                let stages = &result.stages;
                state.strip.show(
                    ui,
                    key,
                    n,
                    stages.len(),
                    &|r, i| color(stages[r].data.bits[i], i),
                    &|r| stages[r].label.chars().take(14).collect(),
                    stage,
                );
                if !iota {
                    ui.small("Colours show positions; run on 0, 1, 2, … (fill iota) to colour by origin.");
                }
            }
        });
}

/// The built-in test picture: a hue gradient with rings, a diagonal stripe and a grid.
fn test_pixel(x: usize, y: usize, w: usize, h: usize) -> Color32 {
    let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
    let hue = u;
    let (dx, dy) = (u - 0.5, v - 0.5);
    let d = (dx * dx + dy * dy).sqrt();
    let ring = ((d * 8.0).fract() < 0.18) as u8 as f32;
    let stripe = ((u - v).abs() < 0.04) as u8 as f32;
    let grid = (x.is_multiple_of((w / 8).max(1)) || y.is_multiple_of((h / 8).max(1))) as u8 as f32;
    let val = 0.35 + 0.65 * (1.0 - v);
    let c: Color32 = egui::ecolor::Hsva::new(hue, 0.75, val, 1.0).into();
    let mix = (ring * 0.8).max(stripe).max(grid * 0.5);
    let lerp = |a: u8, b: u8| (a as f32 * (1.0 - mix) + b as f32 * mix) as u8;
    let white = if stripe > 0.0 { 20 } else { 245 };
    Color32::from_rgb(lerp(c.r(), white), lerp(c.g(), white), lerp(c.b(), white))
}

fn image_view(ui: &mut egui::Ui, result: &RunResult, stage: usize, key: u64, st: &mut BmmcState) {
    let nbits = result.facts::<Facts>().map_or(0, |f| f.log_n);
    if result.stages.is_empty() {
        ui.label("Run with a trace to see the picture pass by pass.");
        return;
    }
    if nbits > MAX_IMAGE_BITS {
        ui.label(format!(
            "N = 2^{nbits}: pictures are drawn up to 2^{MAX_IMAGE_BITS} elements."
        ));
        return;
    }
    let w = 1usize << nbits.div_ceil(2);
    let h = 1usize << (nbits / 2);
    let iota = is_iota(&result.input);
    if let Some(rx) = &st.picture_rx
        && let Ok(r) = rx.try_recv()
    {
        match r {
            Ok(img) => {
                st.picture = Some(img);
                st.picture_msg = None;
                st.images.clear();
            }
            Err(e) => st.picture_msg = Some(e),
        }
        st.picture_rx = None;
    }
    ui.horizontal(|ui| {
        if ui
            .button("Open image…")
            .on_hover_text("A PNG, scaled to the array's picture size")
            .clicked()
        {
            open_picture(ui.ctx(), st);
        }
        if st.picture.is_some()
            && ui
                .button("Built-in picture")
                .on_hover_text("Back to the built-in test picture")
                .clicked()
        {
            st.picture = None;
            st.images.clear();
        }
        if let Some(m) = &st.picture_msg {
            ui.label(m);
        }
    });
    if st.image_key != key || st.images.len() != result.stages.len() {
        st.images.clear();
        st.image_key = key;
        let pic: Vec<Color32> = match &st.picture {
            Some(img) => image::imageops::resize(
                img,
                w as u32,
                h as u32,
                image::imageops::FilterType::Triangle,
            )
            .pixels()
            .map(|p| Color32::from_rgb(p[0], p[1], p[2]))
            .collect(),
            None => (0..w * h).map(|i| test_pixel(i % w, i / w, w, h)).collect(),
        };
        let mut origin: Vec<u32> = (0..(w * h) as u32).collect();
        for (r, s) in result.stages.iter().enumerate() {
            if iota {
                // The GPU's own trace: on 0, 1, 2, … every value is its element's origin.
                origin = s.data.bits.clone();
            } else if r > 0 {
                // Replay the pass's factor matrix on the CPU.
                let rows = rows_of(s);
                if let Ok(a) = BitMatrix::parse(&rows.join(";")) {
                    let c = s.bmmc().map_or(0, |n| n.complement);
                    if a.n == nbits {
                        origin = Affine { a, c }.permute(&origin);
                    }
                }
            }
            let px: Vec<Color32> = origin
                .iter()
                .map(|&o| pic.get(o as usize).copied().unwrap_or(Color32::MAGENTA))
                .collect();
            st.images.push(ui.ctx().load_texture(
                format!("bmmc-image-{r}"),
                ColorImage::new([w, h], px),
                TextureOptions::NEAREST,
            ));
        }
    }
    let stage = stage.min(st.images.len() - 1);
    ui.label(format!(
        "{} — the {w} × {h} picture, row-major, as the array after this pass ({})",
        result.stages[stage].label,
        if iota {
            "from the GPU's trace"
        } else {
            "the plan's matrices replayed on the CPU"
        }
    ));
    let avail = ui.available_size();
    let scale = ((avail.x - 20.0) / 2.0 / w as f32)
        .min((avail.y - 40.0) / h as f32)
        .max(0.05);
    let size = egui::vec2(w as f32 * scale, h as f32 * scale);
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.small("input");
            ui.add(egui::Image::new(&st.images[0]).fit_to_exact_size(size));
        });
        ui.vertical(|ui| {
            ui.small(format!("after pass {stage}"));
            ui.add(egui::Image::new(&st.images[stage]).fit_to_exact_size(size));
        });
    });
}
