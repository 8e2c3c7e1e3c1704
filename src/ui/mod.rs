//! The app: panels and views. Views draw [`crate::algo::Stage`] data and never touch WGSL; GPU work
//! runs on a worker thread that shares eframe's device, so no frame waits on the GPU.

pub mod app;
pub mod code;
pub mod colors;
#[cfg(target_arch = "wasm32")]
pub mod files;
pub mod lens;
pub mod lens_compare;
pub mod lessons;
pub mod narrate;
pub mod params;
pub mod perf;
pub mod selftest;
pub mod strip;
pub mod task;
pub mod timeline;
pub mod tune;
pub mod views;
#[cfg(target_arch = "wasm32")]
pub mod webtest;
pub mod workbench;

pub use app::StagewiseApp;

// Used by the native-only runners below.
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::error::{Error, Result};
use eframe::egui_wgpu::{WgpuConfiguration, WgpuSetup, WgpuSetupCreateNew};
use std::sync::Arc;

/// eframe's wgpu setup that requests Stagewise's features and limits on eframe's own device (one
/// device for rendering and compute) and honours `--adapter` / `STAGEWISE_ADAPTER`.
pub fn wgpu_options(adapter: Option<&str>) -> WgpuConfiguration {
    let mut setup = WgpuSetupCreateNew::without_display_handle();
    setup.device_descriptor = Arc::new(crate::gpu::context::device_descriptor);
    // In the browser only WebGPU runs compute: without it the page says so rather than falling
    // back to WebGL.
    if cfg!(target_arch = "wasm32") {
        setup.instance_descriptor.backends = wgpu::Backends::BROWSER_WEBGPU;
    }
    if let Some(sel) = crate::gpu::context::selector_from_env(adapter) {
        setup.native_adapter_selector = Some(Arc::new(move |adapters, _surface| {
            crate::gpu::context::select_adapter(adapters, Some(&sel)).map_err(|e| e.to_string())
        }));
    }
    WgpuConfiguration {
        wgpu_setup: WgpuSetup::CreateNew(setup),
        ..Default::default()
    }
}

/// Open the app window (`stagewise` with no subcommand, `cargo run --release`). `wisdom`: the
/// CLI's `--wisdom FILE` or `--no-wisdom` (None: `STAGEWISE_WISDOM`, else this adapter's).
#[cfg(not(target_arch = "wasm32"))]
pub fn run_app(
    adapter: Option<&str>,
    session: Option<&std::path::Path>,
    wisdom: Option<crate::wisdom::Source>,
) -> Result<i32> {
    let session = match session {
        Some(p) => Some(app::Session::load(p)?),
        None => None,
    };
    run_window(adapter, wisdom, move |cc| StagewiseApp::new(cc, session))
}

/// Open the app window at a link (`stagewise open LINK`, src/link.rs).
#[cfg(not(target_arch = "wasm32"))]
pub fn run_app_at(
    adapter: Option<&str>,
    link: crate::link::Link,
    wisdom: Option<crate::wisdom::Source>,
) -> Result<i32> {
    run_window(adapter, wisdom, move |cc| {
        StagewiseApp::with_link(cc, Some(Ok(link)))
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn run_window(
    adapter: Option<&str>,
    wisdom: Option<crate::wisdom::Source>,
    make: impl FnOnce(&eframe::CreationContext<'_>) -> StagewiseApp + 'static,
) -> Result<i32> {
    let make = move |cc: &eframe::CreationContext<'_>| {
        let mut app = make(cc);
        if let Some(w) = wisdom {
            app.use_wisdom(w);
        }
        app
    };
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title("Stagewise")
            .with_inner_size([1440.0, 900.0]),
        renderer: eframe::Renderer::Wgpu,
        wgpu_options: wgpu_options(adapter),
        ..Default::default()
    };
    eframe::run_native(
        "Stagewise",
        options,
        Box::new(move |cc| Ok(Box::new(make(cc)))),
    )
    .map_err(|e| Error::Gpu(format!("cannot open the window: {e}")))?;
    Ok(0)
}

/// Screenshot the window, crop it to `rect` and hand its RGBA8 pixels (width, height, bytes) to
/// `write`, whose message goes to `done`. Runs in eframe's screenshot callback, never in a frame.
pub fn with_region_rgba(
    ctx: &eframe::egui::Context,
    rect: eframe::egui::Rect,
    write: impl FnOnce(u32, u32, &[u8]) -> String + Send + 'static,
    done: impl FnOnce(String) + Send + 'static,
) {
    let ppp = ctx.pixels_per_point();
    let c2 = ctx.clone();
    ctx.request_screenshot(move |img| {
        let region = img.region(&rect, Some(ppp));
        let [w, h] = region.size;
        let bytes: Vec<u8> = region.pixels.iter().flat_map(|c| c.to_array()).collect();
        done(write(w as u32, h as u32, &bytes));
        c2.request_repaint();
    });
}

/// [`with_region_rgba`], saved as PNG at `path` ("saved …" or why not).
pub fn save_region_png(
    ctx: &eframe::egui::Context,
    rect: eframe::egui::Rect,
    path: std::path::PathBuf,
    done: impl FnOnce(String) + Send + 'static,
) {
    let write = move |w, h, bytes: &[u8]| match image::save_buffer(
        &path,
        bytes,
        w,
        h,
        image::ColorType::Rgba8,
    ) {
        Ok(()) => format!("saved {}", path.display()),
        Err(e) => format!("cannot save {}: {e}", path.display()),
    };
    with_region_rgba(ctx, rect, write, done);
}
