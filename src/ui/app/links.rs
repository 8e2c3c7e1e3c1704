//! Links in the app (src/link.rs): open one (the web page's address, `stagewise open`), and the
//! link of what is on screen (*Copy link*).

use super::*;
use crate::lesson::StepView;
use crate::link::Link;

impl StagewiseApp {
    /// The app opened at `link`: a run starts on its request at its view; a lesson or an exercise
    /// opens after the default start. A bad link is a message, never a panic.
    pub fn with_link(cc: &eframe::CreationContext<'_>, link: Option<Result<Link>>) -> Self {
        let session = match &link {
            Some(Ok(Link::Run { spec, view })) => crate::ui::lessons::session_for(
                spec,
                &StepView {
                    stage: view.stage,
                    tab: view.tab,
                    lens: view.lens,
                    code: None,
                },
            )
            .map(Some),
            _ => Ok(None),
        };
        let (session, err) = match session {
            Ok(s) => (s, None),
            Err(e) => (None, Some(e.to_string())),
        };
        let mut app = StagewiseApp::new(cc, session);
        match link {
            Some(Ok(l @ (Link::Lesson { .. } | Link::Exercise { .. }))) => {
                app.open_link(&l, &cc.egui_ctx)
            }
            Some(Err(e)) => app.message = Some(e.to_string()),
            _ => {}
        }
        if err.is_some() {
            app.message = err;
        }
        app
    }

    /// Go where `link` says.
    pub fn open_link(&mut self, link: &Link, ctx: &egui::Context) {
        match link {
            Link::Run { spec, view } => {
                let v = StepView {
                    stage: view.stage,
                    tab: view.tab,
                    lens: view.lens,
                    code: None,
                };
                match crate::ui::lessons::session_for(spec, &v) {
                    Ok(s) => {
                        self.session = s;
                        self.apply_view();
                        self.start_run(ctx);
                    }
                    Err(e) => self.message = Some(e.to_string()),
                }
            }
            Link::Lesson { id, step } => {
                let Some(i) = self.lessons.lessons.iter().position(|l| &l.id == id) else {
                    let ids: Vec<&str> =
                        self.lessons.lessons.iter().map(|l| l.id.as_str()).collect();
                    self.message = Some(format!("no lesson '{id}'; lessons: {}", ids.join(", ")));
                    return;
                };
                self.lessons.current = Some(i);
                self.lessons.open = true;
                self.go_to_step(step.saturating_sub(1), ctx);
            }
            Link::Exercise { name } => {
                let list = match workbench_list() {
                    Ok(l) => l,
                    Err(e) => {
                        self.message = Some(e.to_string());
                        return;
                    }
                };
                match list.iter().find(|e| &e.name() == name) {
                    Some(ex) => self.open_exercise(ex, false, ctx),
                    None => {
                        let names: Vec<String> = list.iter().map(|e| e.name()).collect();
                        self.message = Some(format!(
                            "no exercise '{name}'; exercises: {}",
                            names.join(", ")
                        ));
                    }
                }
            }
        }
    }

    /// The link of what is on screen: the lesson's step while the panel shows one, the open
    /// exercise in the room *Your kernel*, else the run and its view.
    pub fn link_now(&self) -> Result<Link> {
        if self.lessons.open
            && let Some(l) = self.lessons.lesson()
        {
            return Ok(Link::Lesson {
                id: l.id.clone(),
                step: self.lessons.position() + 1,
            });
        }
        if let AlgoOptions::Kernel(_) = &self.session.algo {
            return match &self.workbench.exercise {
                Some(e) => Ok(Link::Exercise {
                    name: e.exercise.name(),
                }),
                None => Err(Error::input(
                    "your own kernel cannot be linked (its file is on this machine)",
                )),
            };
        }
        let s = self.session_now();
        Ok(Link::Run {
            spec: Box::new(s.spec()),
            view: s.view,
        })
    }

    /// *Copy link*: the link to the clipboard (in the browser the page's address with it).
    pub fn copy_link(&mut self, ctx: &egui::Context) {
        match self.link_now().and_then(|l| l.to_text()) {
            Ok(hash) => {
                let full = page_address().map_or(hash.clone(), |a| format!("{a}{hash}"));
                ctx.copy_text(full.clone());
                self.message = Some(format!("copied the link {full}"));
            }
            Err(e) => self.message = Some(e.to_string()),
        }
    }
}

/// The exercises: the folder where there is one (natively), else those built in.
fn workbench_list() -> Result<Vec<crate::algo::kernel::exercise::Exercise>> {
    use crate::algo::kernel::exercise::Exercise;
    match crate::ui::workbench::exercises_root() {
        Some(root) => Exercise::all(&root),
        None => Exercise::shipped(),
    }
}

/// The page's address without its `#…` (the browser); natively none.
fn page_address() -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    {
        let l = web_sys::window()?.location();
        let href = l.href().ok()?;
        return Some(href.split('#').next().unwrap_or("").to_string());
    }
    #[cfg(not(target_arch = "wasm32"))]
    None
}
