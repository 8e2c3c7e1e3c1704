//! The lab's exports: the shown mode's measurements as CSV or JSON (the sort family's JSON with
//! the loaded suite result's overlay), and the plot as PNG. Dialogs run off the UI thread.

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
        // The dialog runs off the UI thread; the frame keeps drawing.
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

    /// Ask for a suite result off the UI thread and read it there; the overlay (or why not)
    /// comes back through the channel.
    pub(super) fn request_suite(&mut self, ctx: &egui::Context) {
        let Some((tx, _)) = &self.tx_saved else {
            return;
        };
        let tx = tx.clone();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            if let Some(p) = rfd::FileDialog::new()
                .add_filter("suite result", &["json"])
                .pick_file()
            {
                let _ = tx.send(Msg::Suite(super::peers::load(&p)));
                ctx.request_repaint();
            }
        });
    }
}
