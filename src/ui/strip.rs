//! A colour strip for arrays too long for readable cells: one pixel column per element (up to 2^16
//! columns, sampled beyond), one row per stage, in a horizontally scrolling area. Textures are built
//! once per trace and cached; while a trace streams in, only the rows of the stages that arrived
//! since are computed.

use eframe::egui::{self, Color32, ColorImage, TextureHandle, TextureOptions};

// egui_kittest (and some GPUs) cap textures at 2048 wide.
const TILE: usize = 2048;
/// Beyond this many elements a column stands for several (sampled).
pub const MAX_COLUMNS: usize = 1 << 16;

#[derive(Default)]
pub struct StripCache {
    key: u64,
    tiles: Vec<TextureHandle>,
    /// The tiles' pixels, kept to grow them by the new rows alone.
    images: Vec<ColorImage>,
    columns: usize,
    rows: usize,
    n: usize,
    /// Pixels per column; 0 = fit the whole array in the panel.
    zoom: f32,
}

impl StripCache {
    /// Draw every stage as a row labelled with its label, each element shaded by `shade` of its
    /// value ([`StripCache::show`]).
    pub fn show_values(
        &mut self,
        ui: &mut egui::Ui,
        key: u64,
        n: usize,
        stages: &[crate::algo::Stage],
        shade: &dyn Fn(f64) -> Color32,
        current: usize,
    ) {
        self.show(
            ui,
            key,
            n,
            stages.len(),
            &|r, i| shade(stages[r].data.as_f64(i)),
            &|r| stages[r].label.clone(),
            current,
        );
    }

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
        let row_h = 22.0f32;
        let label_w = 90.0;
        ui.horizontal(|ui| {
            ui.label(if n > MAX_COLUMNS {
                format!(
                    "{n} elements: one column per {} elements (sampled)",
                    n / MAX_COLUMNS
                )
            } else {
                format!("{n} elements, one column each")
            });
            ui.label("zoom:");
            for (z, name) in [
                (0.0, "fit"),
                (1.0, "1 px"),
                (2.0, "2 px"),
                (4.0, "4 px"),
                (8.0, "8 px"),
            ] {
                if ui
                    .selectable_label(self.zoom == z, name)
                    .on_hover_text("Pixels per column; scroll sideways to pan")
                    .clicked()
                {
                    self.zoom = z;
                }
            }
        });
        // Rows 0 ..= current, like the cell views: the history up to the stage being shown.
        let shown = (current + 1).min(self.rows);
        let zoom = self.zoom;
        let columns = self.columns.max(1);
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.set_width(label_w);
                for r in 0..shown {
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
                    let fit = (ui.available_width() / columns as f32).max(0.01);
                    let scale = if zoom == 0.0 { fit } else { zoom };
                    let (rect, _) = ui.allocate_exact_size(
                        egui::vec2(columns as f32 * scale, row_h * shown as f32),
                        egui::Sense::hover(),
                    );
                    let mut x = rect.left();
                    let v = shown as f32 / self.rows.max(1) as f32;
                    for t in &self.tiles {
                        let w = t.size()[0] as f32 * scale;
                        let tile = egui::Rect::from_min_size(
                            egui::pos2(x, rect.top()),
                            egui::vec2(w, rect.height()),
                        );
                        ui.painter().image(
                            t.id(),
                            tile,
                            egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, v)),
                            Color32::WHITE,
                        );
                        x += w;
                    }
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
        let options = TextureOptions {
            magnification: egui::TextureFilter::Nearest,
            minification: egui::TextureFilter::Linear,
            ..Default::default()
        };
        // The same trace with more stages: keep the rows drawn, add the new ones.
        let grown = key == self.key && n == self.n && rows > self.rows && !self.tiles.is_empty();
        let kept = if grown { self.rows } else { 0 };
        if !grown {
            self.tiles.clear();
            self.images.clear();
        }
        let (mut start, mut t) = (0, 0);
        while start < columns {
            let w = TILE.min(columns - start);
            let mut pixels = match self.images.get_mut(t) {
                Some(img) if grown => std::mem::take(&mut img.pixels),
                _ => Vec::new(),
            };
            pixels.resize(w * rows, Color32::BLACK);
            for r in kept..rows {
                for c in 0..w {
                    let elem = (start + c) * n / columns;
                    pixels[r * w + c] = colors(r, elem);
                }
            }
            let img = ColorImage::new([w, rows], pixels);
            if grown {
                self.tiles[t].set(img.clone(), options);
                self.images[t] = img;
            } else {
                let name = format!("strip-{key}-{start}");
                self.tiles
                    .push(ctx.load_texture(name, img.clone(), options));
                self.images.push(img);
            }
            start += w;
            t += 1;
        }
        self.key = key;
        self.columns = columns;
        self.rows = rows;
        self.n = n;
    }
}
