//! The lab's throughput plot, shared by both modes: named series against log2 N, each point with
//! its own hover text, drawn in a style that says where the numbers come from.

use crate::bench::BenchRow;
use eframe::egui::{self, Color32};
use egui_plot::{Corner, HLine, Legend, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};
use std::collections::BTreeMap;

/// Where a series' numbers come from, which decides how it is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Measured in this run on this adapter: solid line, filled dots.
    Measured,
    /// The copy roofline of this run: a thick dashed line.
    Roofline,
    /// A peer's medians read from a suite result: dotted line, diamonds.
    Peer,
    /// Our own rows read from a suite result: dashed line, hollow squares.
    File,
    /// The suite result's copy roofline: a thin dotted line.
    FileRoofline,
    /// Measured points flagged suspect ([`crate::bench::is_suspect`]): red crosses, no line.
    Suspect,
}

/// The name of the suspect points' series (its legend entry).
pub const SUSPECT: &str = "suspect: faster than the same-run copy past the caches";

/// The sentence under a plot with suspect points: how many, and what the flag means.
pub fn suspect_note(rows: &[BenchRow]) -> Option<String> {
    let k = rows.iter().filter(|r| r.suspect).count();
    (k > 0).then(|| {
        format!(
            "⚠ {k} suspect point{} (red crosses): over {:.2}× the same-run copy where the copy moves ≥ {} MiB, past the caches — likelier a copy timed at idle clocks than a result. A longer warm-up may help.",
            if k == 1 { "" } else { "s" },
            crate::bench::SUSPECT_FRACTION,
            crate::bench::SUSPECT_MIN_COPY_BYTES >> 20
        )
    })
}

/// The suspect rows among `rows` as one series of crosses at `y` of each, if any.
pub fn suspect_marks(rows: &[BenchRow], y: &dyn Fn(&BenchRow) -> f64) -> Option<Series> {
    let pts: Vec<([f64; 2], String)> = rows
        .iter()
        .filter(|r| r.suspect)
        .map(|r| {
            let hover = format!(
                "{} {} at N = 2^{:.0}: suspect\n{:.2}× the same-run copy, at a size past the caches",
                r.algorithm,
                r.variant,
                x_of(r.n),
                r.fraction_of_copy
            );
            ([x_of(r.n), y(r)], hover)
        })
        .collect();
    (!pts.is_empty()).then(|| {
        Series::new(SUSPECT.into(), Style::Suspect, pts).color(Color32::from_rgb(230, 40, 40))
    })
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    /// (log2 N, y), sorted by x.
    pub points: Vec<[f64; 2]>,
    /// One text per point, shown on hover.
    pub hover: Vec<String>,
    pub style: Style,
    /// None: egui_plot's automatic colour.
    pub color: Option<Color32>,
}

impl Series {
    /// A series from (x, y, hover) triples in any order.
    pub fn new(name: String, style: Style, mut pts: Vec<([f64; 2], String)>) -> Series {
        pts.sort_by(|a, b| a.0[0].total_cmp(&b.0[0]));
        let (points, hover) = pts.into_iter().unzip();
        Series {
            name,
            points,
            hover,
            style,
            color: None,
        }
    }

    pub fn color(mut self, c: Color32) -> Series {
        self.color = Some(c);
        self
    }
}

/// log2 of N as the plot's x.
pub fn x_of(n: u64) -> f64 {
    (n as f64).log2()
}

/// The same-run copy roofline in the plot's unit: GB/s, or (`per_key` given) keys/s of a copy of
/// the problem's bytes per key — 8 for keys (one read, one write), 16 with a u32 value — the floor
/// of any sort, whatever its own passes add; one line per distinct floor.
pub fn rooflines(rows: &[BenchRow], per_key: Option<&dyn Fn(&BenchRow) -> u64>) -> Vec<Series> {
    let mut by_floor: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    for r in rows {
        let bpk = per_key.map_or(1, |f| f(r).max(1));
        by_floor
            .entry(bpk)
            .or_default()
            .insert(r.n, r.copy_gbps / bpk as f64);
    }
    let unit = if per_key.is_some() { "Gkeys/s" } else { "GB/s" };
    by_floor
        .into_iter()
        .map(|(bpk, pts)| {
            let name = match per_key {
                None => "copy roofline (same run)".to_string(),
                Some(_) => format!("copy roofline, {bpk} B/key (same run)"),
            };
            let pts = pts
                .into_iter()
                .map(|(n, y)| {
                    let hover = format!(
                        "{name}\nN = 2^{:.0}\n{y:.2} {unit} ({:.1} GB/s)",
                        x_of(n),
                        y * bpk as f64
                    );
                    ([x_of(n), y], hover)
                })
                .collect();
            // Keys only and key-value rooflines in two greys.
            let grey = if bpk == 16 { 110 } else { 160 };
            Series::new(name, Style::Roofline, pts).color(Color32::from_gray(grey))
        })
        .collect()
}

/// A value with three significant digits (the log axis' labels: 0.00123, 0.5, 39.2).
fn sig3(x: f64) -> String {
    if !x.is_normal() {
        return format!("{x}");
    }
    let d = (2 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.d$}")
}

/// Draw the series (and horizontal reference lines) in one plot, on a log10 y axis if `log_y`
/// (egui_plot has none: the points are mapped and the labels say the values); returns the plot's
/// rect (for the PNG export).
pub fn draw(
    ui: &mut egui::Ui,
    id: &str,
    y_label: &str,
    series: &[Series],
    hlines: &[(String, f64)],
    log_y: bool,
) -> egui::Rect {
    let y = |v: f64| if log_y { v.log10() } else { v };
    let mut plot = Plot::new(id);
    // A sweep of one or two sizes would otherwise span 2^-10 … 2^50: keep a size either side.
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p[0]));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if lo.is_finite() && hi - lo < 2.0 {
        plot = plot.include_x(lo - 1.0).include_x(hi + 1.0);
    }
    if log_y {
        plot = plot.y_axis_formatter(|m, _| sig3(10f64.powf(m.value)));
    }
    let resp = plot
        // Throughput grows with N: the bottom right is where a plot has least to hide.
        .legend(Legend::default().position(Corner::RightBottom))
        .x_axis_label("log2 N")
        .y_axis_label(y_label)
        .x_axis_formatter(|m, _| {
            // Only whole powers of two: a fractional mark would read as a repeated 2^k.
            if (m.value - m.value.round()).abs() < 1e-6 {
                format!("2^{}", m.value.round() as i64)
            } else {
                String::new()
            }
        })
        .label_formatter(|h| match h {
            egui_plot::HoverPosition::NearDataPoint {
                plot_name, index, ..
            } => series.iter().find(|s| s.name == *plot_name).and_then(|s| {
                // `index` counts the points drawn (on a log axis, those above zero).
                let drawn = s.points.iter().zip(&s.hover);
                drawn
                    .filter(|(p, _)| !log_y || p[1] > 0.0)
                    .nth(*index)
                    .map(|(_, h)| h.clone())
            }),
            egui_plot::HoverPosition::Elsewhere { .. } => None,
        })
        .height((ui.available_height() - 8.0).max(200.0))
        .show(ui, |p| {
            for s in series {
                // Points at or below zero have no place on a log axis.
                let pts = || {
                    PlotPoints::from(
                        s.points
                            .iter()
                            .filter(|p| !log_y || p[1] > 0.0)
                            .map(|p| [p[0], y(p[1])])
                            .collect::<Vec<_>>(),
                    )
                };
                let mut line = Line::new(s.name.clone(), pts());
                let mut dots = Points::new(s.name.clone(), pts());
                if let Some(c) = s.color {
                    line = line.color(c);
                    dots = dots.color(c);
                }
                match s.style {
                    Style::Measured => {
                        p.line(line.width(2.0));
                        p.points(dots.radius(3.0));
                    }
                    Style::Roofline => {
                        p.line(line.width(3.0).style(LineStyle::dashed_loose()));
                        p.points(dots.radius(1.5));
                    }
                    Style::Peer => {
                        p.line(line.width(1.5).style(LineStyle::dotted_dense()));
                        p.points(dots.radius(6.0).shape(MarkerShape::Diamond));
                    }
                    Style::File => {
                        p.line(line.width(1.5).style(LineStyle::dashed_dense()));
                        p.points(dots.radius(5.0).shape(MarkerShape::Square).filled(false));
                    }
                    Style::FileRoofline => {
                        p.line(line.width(1.5).style(LineStyle::dotted_loose()));
                        p.points(dots.radius(1.5));
                    }
                    Style::Suspect => {
                        p.points(dots.radius(8.0).shape(MarkerShape::Cross));
                    }
                }
            }
            for (name, v) in hlines {
                p.hline(HLine::new(name.clone(), y(*v)));
            }
        });
    resp.response.rect
}
