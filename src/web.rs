//! The web app's entry (web/build): eframe's WebRunner on the page's `#stagewise` canvas, on the
//! browser's WebGPU device. The page's `#status` line says loading until the app runs, then goes;
//! a start that fails (no WebGPU) is said there.

use std::cell::RefCell;
use wasm_bindgen::JsCast;

thread_local! {
    /// A link the address changed to while the page was open (`hashchange`), for the app.
    static LINK: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The app's context, to wake it when a link arrives.
    static CTX: RefCell<Option<eframe::egui::Context>> = const { RefCell::new(None) };
}

/// The link the page's address changed to since the last call, if any.
pub fn take_link() -> Option<String> {
    LINK.with(|l| l.borrow_mut().take())
}

/// Follow the address's `#…` while the page is open: a link clicked on the same page changes
/// only the hash (no reload), so the app is told and woken.
fn follow_hash_changes() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let on_change = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(|| {
        let hash = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .filter(|h| h.len() > 1);
        if let Some(h) = hash {
            LINK.with(|l| *l.borrow_mut() = Some(h));
            CTX.with(|c| {
                if let Some(c) = &*c.borrow() {
                    c.request_repaint();
                }
            });
        }
    });
    let _ =
        window.add_event_listener_with_callback("hashchange", on_change.as_ref().unchecked_ref());
    // The listener lives as long as the page.
    on_change.forget();
}

/// Start the app on the page (the wasm binary's `main`).
pub fn start() {
    wasm_bindgen_futures::spawn_local(async {
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let status = document.get_element_by_id("status");
        let say = |text: &str| {
            if let Some(s) = &status {
                s.set_text_content(Some(text));
            }
        };
        let Some(canvas) = document
            .get_element_by_id("stagewise")
            .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            say("Stagewise: the page has no <canvas id=\"stagewise\">");
            return;
        };
        // The address's `#…`: a run, a lesson's step or an exercise (src/link.rs).
        let link = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .filter(|h| h.len() > 1)
            .map(|h| crate::link::Link::parse(&h));
        let options = eframe::WebOptions {
            wgpu_options: crate::ui::wgpu_options(None),
            ..Default::default()
        };
        let started = eframe::WebRunner::new()
            .start(
                canvas,
                options,
                Box::new(move |cc| {
                    CTX.with(|c| *c.borrow_mut() = Some(cc.egui_ctx.clone()));
                    Ok(Box::new(crate::ui::StagewiseApp::with_link(cc, link)))
                }),
            )
            .await;
        match started {
            Ok(()) => {
                follow_hash_changes();
                if let Some(s) = &status {
                    s.remove();
                }
            }
            Err(e) => say(&format!(
                "Stagewise cannot start here: {}",
                e.as_string().unwrap_or_else(|| format!("{e:?}"))
            )),
        }
    });
}
