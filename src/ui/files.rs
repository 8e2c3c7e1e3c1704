//! Files in the browser: inputs and sessions come from the browser's file picker (rfd), outputs,
//! traces, sessions and PNGs leave as downloads. (Natively the app's dialogs read and write paths.)

use eframe::egui;
use std::sync::mpsc::Sender;
use wasm_bindgen::JsCast;

/// Pick a file with the browser's file picker; `then` turns its name and contents into the
/// message sent on `tx`. Nothing is sent when the picker is dismissed.
pub fn open<M: 'static>(
    ctx: &egui::Context,
    filters: &'static [(&'static str, &'static [&'static str])],
    tx: Sender<M>,
    then: impl FnOnce(String, Vec<u8>) -> M + 'static,
) {
    let ctx = ctx.clone();
    super::task::spawn(move || async move {
        let mut d = rfd::AsyncFileDialog::new();
        for (label, exts) in filters {
            d = d.add_filter(*label, exts);
        }
        if let Some(h) = d.pick_file().await {
            let bytes = h.read().await;
            let _ = tx.send(then(h.file_name(), bytes));
            ctx.request_repaint();
        }
    });
}

/// Hand `bytes` to the browser as a download named `name`; the message to show.
pub fn download(name: &str, bytes: crate::Result<Vec<u8>>) -> String {
    match bytes
        .map_err(|e| e.to_string())
        .and_then(|b| save(name, &b))
    {
        Ok(()) => format!("downloaded {name}"),
        Err(e) => format!("cannot save {name}: {e}"),
    }
}

fn save(name: &str, bytes: &[u8]) -> Result<(), String> {
    let js = |e: wasm_bindgen::JsValue| format!("{e:?}");
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).map_err(js)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js)?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(js)?
        .dyn_into()
        .map_err(|_| "no anchor element")?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url).map_err(js)
}

/// Screenshot the app, crop it to `rect` and download it as the PNG `name`; `done` gets the
/// message. Runs in eframe's screenshot callback, never in a frame.
pub fn download_region_png(
    ctx: &egui::Context,
    rect: egui::Rect,
    name: &'static str,
    done: impl FnOnce(String) + Send + 'static,
) {
    let write = move |w, h, rgba: &[u8]| {
        let mut png = Vec::new();
        let encoded = image::ImageEncoder::write_image(
            image::codecs::png::PngEncoder::new(&mut png),
            rgba,
            w,
            h,
            image::ExtendedColorType::Rgba8,
        )
        .map(|_| png)
        .map_err(|e| crate::Error::Io(e.to_string()));
        download(name, encoded)
    };
    crate::ui::with_region_rgba(ctx, rect, write, done);
}
