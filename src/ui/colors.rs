//! Colours shared by the views: one hue per original index or per thread.

use eframe::egui::{Color32, ecolor::Hsva};

/// A colour for item `i` of `n`, spread around the hue circle.
pub fn index_color(i: usize, n: usize) -> Color32 {
    let h = if n <= 1 { 0.0 } else { i as f32 / n as f32 };
    Hsva::new(h * 0.85, 0.55, 0.85, 1.0).into()
}

/// A distinct colour per thread id (golden-ratio hue steps keep neighbours apart).
pub fn thread_color(t: usize) -> Color32 {
    let h = (t as f32 * 0.618_034).fract();
    Hsva::new(h, 0.6, 0.9, 1.0).into()
}

/// Black or white text, whichever reads better on `bg`.
pub fn text_on(bg: Color32) -> Color32 {
    let l = 0.299 * bg.r() as f32 + 0.587 * bg.g() as f32 + 0.114 * bg.b() as f32;
    if l > 140.0 {
        Color32::BLACK
    } else {
        Color32::WHITE
    }
}
