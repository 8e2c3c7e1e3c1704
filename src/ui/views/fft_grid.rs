//! The large FFT's array drawn as a grid of complex values: the cell map (which array index a cell
//! shows), colours by magnitude (dB below the largest) or phase, downsampling of big grids into
//! blocks, and the legend.

use crate::algo::fft::model::C64;
use eframe::egui::{self, Color32, ColorImage, Rect, Stroke, ecolor::Hsva, pos2, vec2};

/// Displayed cells per side at most: past this a cell is a block of array cells.
pub const MAX_SIDE: usize = 128;
/// The magnitude scale's range below the largest value.
pub const DB_RANGE: f64 = 60.0;

/// Which array index each cell (row, column) of a `rows` × `cols` grid shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellMap {
    pub rows: usize,
    pub cols: usize,
    /// false: cell (r, c) is index c + cols·r (row-major); true: r + rows·c (the transposed store).
    pub transposed: bool,
    /// Values present (a partial last row leaves the rest of the grid empty).
    pub len: usize,
}

impl CellMap {
    pub fn index(&self, r: usize, c: usize) -> Option<usize> {
        let i = if self.transposed {
            r + self.rows * c
        } else {
            c + self.cols * r
        };
        (r < self.rows && c < self.cols && i < self.len).then_some(i)
    }

    /// Array cells per displayed cell: (rows, columns) of a block.
    pub fn block(&self) -> (usize, usize) {
        (
            self.rows.div_ceil(MAX_SIDE).max(1),
            self.cols.div_ceil(MAX_SIDE).max(1),
        )
    }

    /// Displayed cells: (rows, columns).
    pub fn shown(&self) -> (usize, usize) {
        let (br, bc) = self.block();
        (self.rows.div_ceil(br), self.cols.div_ceil(bc))
    }
}

/// Row-major rows of 2^⌈log2(len)/2⌉ for arrays that are no N1 × N2 grid (one pass, unpacked).
pub fn square_map(len: usize) -> CellMap {
    let bits = len.max(1).next_power_of_two().trailing_zeros();
    let cols = 1usize << bits.div_ceil(2);
    CellMap {
        rows: len.div_ceil(cols).max(1),
        cols,
        transposed: false,
        len,
    }
}

/// How cells are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colour {
    #[default]
    Magnitude,
    Phase,
}

const VIRIDIS: [(u8, u8, u8); 5] = [
    (68, 1, 84),
    (59, 82, 139),
    (33, 145, 140),
    (94, 201, 98),
    (253, 231, 37),
];

/// The magnitude scale at t ∈ [0, 1] (dark = small).
pub fn scale_color(t: f32) -> Color32 {
    let t = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f32;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f32;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * f).round() as u8;
    Color32::from_rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The phase wheel at angle `a` (radians): hue around the circle, 0 = red.
pub fn phase_color(a: f64) -> Color32 {
    let h = (a / std::f64::consts::TAU).rem_euclid(1.0) as f32;
    Hsva::new(h, 0.75, 0.95, 1.0).into()
}

/// Cells too small for a phase (below the largest by more than the scale's range) are grey.
const NO_PHASE: Color32 = Color32::from_gray(60);

pub fn color_of(z: C64, max: f64, colour: Colour) -> Color32 {
    let m = z.norm();
    if !m.is_finite() {
        return Color32::from_rgb(255, 0, 255);
    }
    match colour {
        Colour::Magnitude => {
            if m <= 0.0 || max <= 0.0 {
                return scale_color(0.0);
            }
            let db = 20.0 * (m / max).log10();
            scale_color((1.0 + db / DB_RANGE) as f32)
        }
        Colour::Phase => {
            if m <= max * 10f64.powf(-DB_RANGE / 20.0) {
                NO_PHASE
            } else {
                phase_color(z.arg())
            }
        }
    }
}

/// The grid as an image, one pixel per displayed cell; a block shows its largest value.
pub fn image(vals: &[C64], map: &CellMap, colour: Colour) -> ColorImage {
    let max = vals
        .iter()
        .take(map.len)
        .map(|z| z.norm())
        .filter(|m| m.is_finite())
        .fold(0.0, f64::max);
    let (br, bc) = map.block();
    let (sr, sc) = map.shown();
    let mut px = vec![Color32::TRANSPARENT; sr * sc];
    for dr in 0..sr {
        for dc in 0..sc {
            let mut best: Option<C64> = None;
            for r in dr * br..((dr + 1) * br).min(map.rows) {
                for c in dc * bc..((dc + 1) * bc).min(map.cols) {
                    if let Some(z) = map.index(r, c).and_then(|i| vals.get(i))
                        && best.is_none_or(|b| z.norm() > b.norm() || !z.norm().is_finite())
                    {
                        best = Some(*z);
                    }
                }
            }
            if let Some(z) = best {
                px[dr * sc + dc] = color_of(z, max, colour);
            }
        }
    }
    ColorImage::new([sc, sr], px)
}

/// The legend of `colour` as a bar with its end labels; `max` is the largest magnitude.
pub fn legend(ui: &mut egui::Ui, colour: Colour, max: f64) {
    ui.horizontal(|ui| {
        let (rect, _) = ui.allocate_exact_size(vec2(160.0, 14.0), egui::Sense::hover());
        let p = ui.painter();
        let steps = 40;
        for i in 0..steps {
            let t = i as f32 / (steps - 1) as f32;
            let c = match colour {
                Colour::Magnitude => scale_color(t),
                Colour::Phase => {
                    phase_color(-std::f64::consts::PI + t as f64 * std::f64::consts::TAU)
                }
            };
            let x = rect.left() + rect.width() * i as f32 / steps as f32;
            p.rect_filled(
                Rect::from_min_max(
                    pos2(x, rect.top()),
                    pos2(x + rect.width() / steps as f32 + 0.5, rect.bottom()),
                ),
                0.0,
                c,
            );
        }
        p.rect_stroke(
            rect,
            0.0,
            Stroke::new(1.0, ui.visuals().weak_text_color()),
            egui::StrokeKind::Outside,
        );
        match colour {
            Colour::Magnitude => ui.label(format!(
                "|z|: −{DB_RANGE:.0} dB (dark) … 0 dB = the largest, {max:.4}"
            )),
            Colour::Phase => ui.label(format!(
                "arg z: −π … 0 (red) … π; grey: |z| more than {DB_RANGE:.0} dB below the largest"
            )),
        };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_map_reads_k1_plus_n1_k2() {
        let m = CellMap {
            rows: 4,
            cols: 8,
            transposed: true,
            len: 32,
        };
        assert_eq!(m.index(1, 2), Some(1 + 4 * 2));
        let r = CellMap {
            transposed: false,
            ..m
        };
        assert_eq!(r.index(1, 2), Some(2 + 8));
        assert_eq!(r.index(4, 0), None);
    }

    #[test]
    fn big_grids_are_shown_in_blocks() {
        let m = CellMap {
            rows: 256,
            cols: 512,
            transposed: false,
            len: 1 << 17,
        };
        assert_eq!(m.block(), (2, 4));
        assert_eq!(m.shown(), (128, 128));
        let img = image(&vec![C64::new(1.0, 0.0); 1 << 17], &m, Colour::Magnitude);
        assert_eq!(img.size, [128, 128]);
        assert_eq!(square_map(2048).cols, 64);
        assert_eq!(square_map(2048).rows, 32);
    }
}
