//! The lab's file I/O: the shown mode's measurements as CSV or JSON (the sort family's JSON with
//! the loaded suite result's overlay), the plot as PNG, and the sort family's suite result read
//! in. Dialogs and file reads run off the UI thread.

use super::{Mode, Msg, PerfLab};
use crate::bench::CSV_HEADER;
use eframe::egui;

impl PerfLab {
    /// The shown mode's measurements as `csv` or `json` text.
    pub fn export_text(&self, kind: &str) -> String {
        let rows = match self.mode {
            Mode::Algorithm => &self.rows,
            Mode::Sorts => &self.sorts.rows,
        };
        if kind == "csv" {
            let mut s = String::from(CSV_HEADER);
            s.push('\n');
            for r in rows {
                s.push_str(&r.csv());
                s.push('\n');
            }
            return s;
        }
        let v = match self.mode {
            Mode::Algorithm => serde_json::json!({ "rows": rows }),
            Mode::Sorts => {
                let f = &self.sorts;
                serde_json::json!({
                    "family": "sorts",
                    "adapter": f.rows_adapter,
                    "dtype": f.rows_dtype.name(),
                    "rows": rows,
                    "skipped": f.skipped,
                    "overlay": f.overlay,
                    "overlay_note": f.overlay.as_ref().map(|o| o.comparison_note(&f.rows_adapter)),
                })
            }
        };
        v.to_string()
    }

    pub(super) fn export(&mut self, ctx: &egui::Context, kind: &'static str) {
        let Some((tx, _)) = &self.tx_saved else {
            return;
        };
        let tx = tx.clone();
        let text = self.export_text(kind);
        let stem = match self.mode {
            Mode::Algorithm => "stagewise-bench",
            Mode::Sorts => "stagewise-sorts",
        };
        let ctx = ctx.clone();
        #[cfg(target_arch = "wasm32")]
        {
            let name = format!("{stem}.{kind}");
            let note = crate::ui::files::download(&name, Ok(text.into_bytes()));
            let _ = tx.send(Msg::Saved(note));
            ctx.request_repaint();
        }
        // The dialog runs off the UI thread; the frame keeps drawing.
        #[cfg(not(target_arch = "wasm32"))]
        std::thread::spawn(move || {
            let Some(path) = rfd::FileDialog::new()
                .set_file_name(format!("{stem}.{kind}"))
                .save_file()
            else {
                return;
            };
            let msg = match std::fs::write(&path, text) {
                Ok(()) => format!("saved {}", path.display()),
                Err(e) => format!("cannot save {}: {e}", path.display()),
            };
            let _ = tx.send(Msg::Saved(msg));
            ctx.request_repaint();
        });
    }

    pub(super) fn request_png(&mut self, ctx: &egui::Context) {
        // Ask for the path off the UI thread; when it arrives, take a screenshot and crop it to the plot.
        let Some((tx, _)) = &self.tx_saved else {
            return;
        };
        let tx = tx.clone();
        let ctx = ctx.clone();
        let name = match self.mode {
            Mode::Algorithm => "stagewise-plot.png",
            Mode::Sorts => "stagewise-sorts.png",
        };
        #[cfg(target_arch = "wasm32")]
        if let Some(rect) = self.plot_rect {
            crate::ui::files::download_region_png(&ctx, rect, name, move |msg| {
                let _ = tx.send(Msg::Saved(msg));
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        std::thread::spawn(move || {
            if let Some(p) = rfd::FileDialog::new().set_file_name(name).save_file() {
                let _ = tx.send(Msg::PngPath(p));
                ctx.request_repaint();
            }
        });
    }

    /// Crop a screenshot of the window to the plot and save it (in the screenshot callback, off
    /// the frame).
    pub(super) fn shoot_plot(&mut self, ctx: &egui::Context, path: std::path::PathBuf) {
        let (Some(rect), Some((tx, _))) = (self.plot_rect, &self.tx_saved) else {
            return;
        };
        let tx = tx.clone();
        crate::ui::save_region_png(ctx, rect, path, move |msg| {
            let _ = tx.send(Msg::Saved(msg));
        });
    }

    /// The sort family's suite result: a path to type (Enter or Load), the file dialog, and the
    /// overlay's removal. The file is read off the UI thread; the overlay (or why not) comes back
    /// through the channel.
    pub(super) fn suite_row(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        ui.horizontal_wrapped(|ui| {
            ui.label("Suite result:");
            let edit = ui
                .add(
                    egui::TextEdit::singleline(&mut self.sorts.path)
                        .hint_text("docs/perf/h100.json")
                        .desired_width(260.0),
                )
                .on_hover_text(
                    "Path of a `stagewise bench --suite … --out R.json` result: its peers (cupy.sort, torch.sort) and its rows of our sorts are overlaid",
                );
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui
                .button("Load")
                .on_hover_text("Read the suite result at this path")
                .clicked()
                || enter)
                && !self.sorts.path.trim().is_empty()
            {
                let path = std::path::PathBuf::from(self.sorts.path.trim());
                self.read_suite(ctx, move || Some(path));
            }
            if ui
                .button("Browse…")
                .on_hover_text("Pick the suite result in a file dialog")
                .clicked()
            {
                #[cfg(not(target_arch = "wasm32"))]
                self.read_suite(ctx, || {
                    rfd::FileDialog::new()
                        .add_filter("suite result", &["json"])
                        .pick_file()
                });
                #[cfg(target_arch = "wasm32")]
                if let Some((tx, _)) = &self.tx_saved {
                    crate::ui::files::open(
                        ctx,
                        &[("suite result", &["json"])],
                        tx.clone(),
                        |name, bytes| Msg::Suite(super::peers::parse(&name, &bytes)),
                    );
                }
            }
            if self.sorts.overlay.is_some()
                && ui
                    .button("Remove overlay")
                    .on_hover_text("Stop drawing the suite result's series")
                    .clicked()
            {
                self.sorts.overlay = None;
            }
        });
    }

    /// Read the suite result at the path `pick` gives (a dialog, or a typed path) on a thread.
    fn read_suite(
        &mut self,
        ctx: &egui::Context,
        pick: impl FnOnce() -> Option<std::path::PathBuf> + Send + 'static,
    ) {
        let Some((tx, _)) = &self.tx_saved else {
            return;
        };
        let tx = tx.clone();
        let ctx = ctx.clone();
        // In the browser there is no file system to read a typed path from.
        #[cfg(target_arch = "wasm32")]
        let _ = (
            tx.send(Msg::Suite(Err(
                "the browser reads no typed paths: use Browse…".into(),
            ))),
            ctx,
            pick,
        );
        #[cfg(not(target_arch = "wasm32"))]
        std::thread::spawn(move || {
            if let Some(p) = pick() {
                let _ = tx.send(Msg::Suite(super::peers::load(&p)));
                ctx.request_repaint();
            }
        });
    }
}
