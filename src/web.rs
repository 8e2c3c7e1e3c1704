//! The web app's entry (web/build): eframe's WebRunner on the page's `#stagewise` canvas, on the
//! browser's WebGPU device. The page's `#status` line says loading until the app runs, then goes;
//! a start that fails (no WebGPU) is said there.

use wasm_bindgen::JsCast;

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
                Box::new(move |cc| Ok(Box::new(crate::ui::StagewiseApp::with_link(cc, link)))),
            )
            .await;
        match started {
            Ok(()) => {
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
