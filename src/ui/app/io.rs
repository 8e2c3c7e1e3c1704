//! The I/O worker: file dialogs run on their own threads and answer through a channel, which
//! `poll_io` drains every frame (inputs, sessions, exports, diagram PNGs).

use super::*;

/// Results of file dialogs, which run off the UI thread.
pub(super) enum IoMsg {
    Input(Result<Data>),
    /// Boxed: a session holds every room's options.
    Session(Box<Result<Session>>),
    Note(String),
    /// Where to save a PNG of the current diagram.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    DiagramPng(std::path::PathBuf),
    /// A kernel file for the room "Your kernel".
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Kernel(std::path::PathBuf),
    /// A kernel's name and text for the room's editor (the browser's file picker).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    KernelText(String, String),
}

impl StagewiseApp {
    /// Run a file dialog on its own thread; `then` turns the chosen path into a message.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn dialog(
        &self,
        ctx: &egui::Context,
        save: bool,
        name: &str,
        filters: &'static [(&'static str, &'static [&'static str])],
        then: impl FnOnce(std::path::PathBuf) -> IoMsg + Send + 'static,
    ) {
        let tx = self.io.0.clone();
        let ctx = ctx.clone();
        let name = name.to_string();
        std::thread::spawn(move || {
            let mut d = rfd::FileDialog::new().set_file_name(&name);
            for (label, exts) in filters {
                d = d.add_filter(*label, exts);
            }
            let picked = if save { d.save_file() } else { d.pick_file() };
            if let Some(p) = picked {
                let _ = tx.send(then(p));
                ctx.request_repaint();
            }
        });
    }

    pub(super) fn open_input(&self, ctx: &egui::Context) {
        let dtype = self.session.dtype;
        #[cfg(target_arch = "wasm32")]
        return crate::ui::files::open(
            ctx,
            &[("data", &["txt", "csv", "json", "npy"])],
            self.io.0.clone(),
            move |name, bytes| IoMsg::Input(data::parse_input(&name, bytes, dtype)),
        );
        #[cfg(not(target_arch = "wasm32"))]
        self.dialog(
            ctx,
            false,
            "",
            &[("data", &["txt", "csv", "json", "npy"])],
            move |p| IoMsg::Input(data::read_input(&p.to_string_lossy(), dtype)),
        );
    }

    pub(super) fn save_session(&self, ctx: &egui::Context) {
        let s = self.session_now();
        #[cfg(target_arch = "wasm32")]
        {
            let _ = ctx;
            let bytes = serde_json::to_vec_pretty(&s).map_err(|e| Error::Io(e.to_string()));
            let note = crate::ui::files::download("session.json", bytes);
            let _ = self.io.0.send(IoMsg::Note(note));
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.dialog(
            ctx,
            true,
            "session.json",
            &[("session", &["json"])],
            move |p| {
                IoMsg::Note(
                    match serde_json::to_string_pretty(&s)
                        .map_err(|e| e.to_string())
                        .and_then(|t| std::fs::write(&p, t).map_err(|e| e.to_string()))
                    {
                        Ok(()) => format!("saved session {}", p.display()),
                        Err(e) => format!("cannot save session {}: {e}", p.display()),
                    },
                )
            },
        );
    }

    /// Open a session file (a dialog natively, the browser's file picker on the web).
    pub(super) fn open_session(&self, ctx: &egui::Context) {
        #[cfg(target_arch = "wasm32")]
        return crate::ui::files::open(
            ctx,
            &[("session", &["json"])],
            self.io.0.clone(),
            |name, bytes| IoMsg::Session(Box::new(Session::from_json(&name, &bytes))),
        );
        #[cfg(not(target_arch = "wasm32"))]
        self.dialog(ctx, false, "", &[("session", &["json"])], |p| {
            IoMsg::Session(Box::new(Session::load(&p)))
        });
    }

    /// Save the central view as a PNG: natively to a chosen path, on the web as a download.
    pub(super) fn save_diagram(&self, ctx: &egui::Context) {
        #[cfg(target_arch = "wasm32")]
        if let Some(rect) = self.diagram_rect {
            let tx = self.io.0.clone();
            crate::ui::files::download_region_png(ctx, rect, "diagram.png", move |msg| {
                let _ = tx.send(IoMsg::Note(msg));
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.dialog(
            ctx,
            true,
            "diagram.png",
            &[("PNG", &["png"])],
            IoMsg::DiagramPng,
        );
    }

    /// Screenshot the window, crop it to the central view and save it (in the callback, off the frame).
    pub(super) fn shoot_diagram(&self, ctx: &egui::Context, path: std::path::PathBuf) {
        let Some(rect) = self.diagram_rect else {
            return;
        };
        let tx = self.io.0.clone();
        crate::ui::save_region_png(ctx, rect, path, move |msg| {
            let _ = tx.send(IoMsg::Note(msg));
        });
    }

    pub(super) fn poll_io(&mut self, ctx: &egui::Context) {
        let msgs: Vec<IoMsg> = self.io.1.try_iter().collect();
        for m in msgs {
            match m {
                IoMsg::Input(Ok(d)) => {
                    self.session.typed = true;
                    self.session.dtype = d.dtype;
                    self.session.text = (0..d.len())
                        .map(|i| d.fmt_elem(i))
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.start_run(ctx);
                }
                IoMsg::Session(s) => match *s {
                    Ok(mut s) => {
                        let note = s.localize_kernel();
                        self.session = s;
                        self.apply_view();
                        self.start_run(ctx);
                        if note.is_some() {
                            self.message = note;
                        }
                    }
                    Err(e) => self.message = Some(e.to_string()),
                },
                IoMsg::Input(Err(e)) => self.message = Some(e.to_string()),
                IoMsg::Note(n) => self.message = Some(n),
                IoMsg::DiagramPng(p) => self.shoot_diagram(ctx, p),
                IoMsg::Kernel(p) => self.open_kernel(p, ctx),
                IoMsg::KernelText(name, text) => self.open_kernel_text(name, text, ctx),
            }
        }
    }
}
