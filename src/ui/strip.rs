//! A colour strip for arrays too long for readable cells: one pixel column per element (up to 2^16
//! columns, sampled beyond), one row per stage, in a horizontally scrolling area. Textures are built
//! once per trace and cached.

use eframe::egui::{self, Color32, ColorImage, TextureHandle, TextureOptions};

const TILE: usize = 4096;
/// Beyond this many elements a column stands for several (sampled).
pub const MAX_COLUMNS: usize = 1 << 16;

#[derive(Default)]
pub struct StripCache {
    key: u64,
    tiles: Vec<TextureHandle>,
    columns: usize,
    rows: usize,
    n: usize,
}

impl StripCache {
    /// Draw `rows` (built by `colors` only when `key` changes). `current` is highlighted.
    // Every view calls this with its own closures; a parameter struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        key: u64,
        n: usize,
        row_count: usize,
        colors: &dyn Fn(usize, usize) -> Color32,
        labels: &dyn Fn(usize) -> String,
        current: usize,
    ) {
        if self.key != key || self.tiles.is_empty() || self.rows != row_count || self.n != n {
            self.build(ui.ctx(), key, n, row_count, colors);
        }
        let row_h = 14.0f32;
        let label_w = 90.0;
        ui.label(if n > MAX_COLUMNS {
            format!(
                "{n} elements: one column per {} elements (sampled); scroll sideways",
                n / MAX_COLUMNS
            )
        } else {
            format!("{n} elements: one pixel column per element; scroll sideways")
        });
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.set_width(label_w);
                for r in 0..self.rows {
                    let text = egui::RichText::new(labels(r)).size(10.0);
                    let text = if r == current {
                        text.strong().color(ui.visuals().strong_text_color())
                    } else {
                        text
                    };
                    ui.add_sized([label_w, row_h], egui::Label::new(text));
                }
            });
            egui::ScrollArea::horizontal()
                .id_salt(("strip", key))
                .show(ui, |ui| {
                    ui.horizontal_top(|ui| {
                        ui.spacing_mut().item_spacing.x = 0.0;
                        for t in &self.tiles {
                            let size = egui::vec2(t.size()[0] as f32, row_h * self.rows as f32);
                            let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
                            ui.painter().image(
                                t.id(),
                                rect,
                                egui::Rect::from_min_max(
                                    egui::pos2(0.0, 0.0),
                                    egui::pos2(1.0, 1.0),
                                ),
                                Color32::WHITE,
                            );
                            let y = rect.top() + row_h * current as f32;
                            ui.painter().rect_stroke(
                                egui::Rect::from_min_size(
                                    egui::pos2(rect.left(), y),
                                    egui::vec2(rect.width(), row_h),
                                ),
                                0.0,
                                egui::Stroke::new(1.5, ui.visuals().strong_text_color()),
                                egui::StrokeKind::Inside,
                            );
                        }
                    });
                });
        });
    }

    fn build(
        &mut self,
        ctx: &egui::Context,
        key: u64,
        n: usize,
        rows: usize,
        colors: &dyn Fn(usize, usize) -> Color32,
    ) {
        let columns = n.min(MAX_COLUMNS);
        self.tiles.clear();
        let mut start = 0;
        while start < columns {
            let w = TILE.min(columns - start);
            let mut img = ColorImage::new([w, rows], vec![Color32::BLACK; w * rows]);
            for r in 0..rows {
                for c in 0..w {
                    let elem = (start + c) * n / columns;
                    img.pixels[r * w + c] = colors(r, elem);
                }
            }
            self.tiles.push(ctx.load_texture(
                format!("strip-{key}-{start}"),
                img,
                TextureOptions::NEAREST,
            ));
            start += w;
        }
        self.key = key;
        self.columns = columns;
        self.rows = rows;
        self.n = n;
    }
}
