//! The sort family: one sweep (one N range, dtype and repetition count) over every sort of whole
//! arrays — the odd-even variants, radix keys only and key-value — plotted in keys/s beside the
//! same-run copy roofline, with a suite result's peers and rows overlaid (peers.rs).

use super::nominal_bandwidth;
use super::peers::{FileSeries, Overlay};
use super::plot::{self, Series, Style, rooflines, suspect_marks, x_of};
use crate::algo::{AlgoOptions, VariantInfo};
use crate::bench::{BenchRow, BenchSpec};
use crate::data::DType;
use crate::gpu::Gpu;
use eframe::egui::{self, Color32};

/// One sweep case of the family: an algorithm with the options its variants run under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Oddeven,
    Radix,
    /// Radix with a u32 value per key (`--values iota`): torch.sort's problem.
    RadixValues,
}

impl Group {
    pub const ALL: [Group; 3] = [Group::Oddeven, Group::Radix, Group::RadixValues];

    pub fn options(self) -> AlgoOptions {
        match self {
            Group::Oddeven => AlgoOptions::Oddeven(Default::default()),
            Group::Radix => AlgoOptions::Radix(Default::default()),
            Group::RadixValues => AlgoOptions::Radix(crate::algo::radix::Options {
                values: crate::algo::radix::Values::Iota,
                ..Default::default()
            }),
        }
    }

    /// What the options add to a variant's name, as CLI words.
    pub fn suffix(self) -> &'static str {
        match self {
            Group::RadixValues => " --values iota",
            _ => "",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Group::Oddeven => "odd-even:",
            Group::Radix => "radix, keys only:",
            Group::RadixValues => "radix, key-value:",
        }
    }

    fn variants(self) -> &'static [VariantInfo] {
        self.options().algo().info().variants
    }
}

/// The bytes one copy of a sort's data moves per key: the keys read and written once (8), and the
/// values with them (16); the floor of any sort, whatever its own passes add.
pub fn per_key(r: &BenchRow) -> u64 {
    if r.variant.ends_with(Group::RadixValues.suffix()) {
        16
    } else {
        8
    }
}

/// A member of the family: a group's variant, e.g. "radix onesweep --values iota".
#[derive(Clone, Debug)]
pub struct Member {
    pub group: Group,
    pub variant: &'static VariantInfo,
    pub on: bool,
}

impl Member {
    pub fn label(&self) -> String {
        let algo = self.group.options().name();
        format!("{algo} {}", self.row_variant())
    }

    /// The variant name its rows carry: the variant's, with its group's suffix.
    pub fn row_variant(&self) -> String {
        format!("{}{}", self.variant.name, self.group.suffix())
    }
}

pub struct SortFamily {
    pub dtype: DType,
    pub members: Vec<Member>,
    /// Rows of the family sweeps, their variant names carrying their group's suffix.
    pub rows: Vec<BenchRow>,
    /// The dtype and adapter `rows` were measured at (a new dtype starts a new plot).
    pub rows_dtype: DType,
    pub rows_adapter: String,
    /// Points a sweep skipped, with the reason (refused sizes, too many passes, too slow).
    pub skipped: Vec<String>,
    pub overlay: Option<Overlay>,
    /// The suite result's path as typed.
    pub path: String,
    /// Why the last file did not load.
    pub file_error: Option<String>,
    /// A log y axis: a sweep on a slow adapter beside a file from a fast GPU (or 2^10 beside
    /// 2^28) stays readable.
    pub log_y: bool,
    /// The groups of the running sweep's cases, in spec order (a row's `case` indexes it).
    running_groups: Vec<Group>,
}

impl Default for SortFamily {
    fn default() -> Self {
        let members = Group::ALL
            .iter()
            .flat_map(|&g| {
                g.variants().iter().map(move |v| Member {
                    group: g,
                    variant: v,
                    // Key-value sorts on request: keys only is the family's common problem.
                    on: g != Group::RadixValues,
                })
            })
            .collect();
        SortFamily {
            dtype: DType::U32,
            members,
            rows: Vec::new(),
            rows_dtype: DType::U32,
            rows_adapter: String::new(),
            skipped: Vec::new(),
            overlay: None,
            path: String::new(),
            file_error: None,
            log_y: false,
            running_groups: Vec::new(),
        }
    }
}

impl SortFamily {
    /// Switch a member on or off by its label; false if there is none.
    pub fn set(&mut self, label: &str, on: bool) -> bool {
        match self.members.iter_mut().find(|m| m.label() == label) {
            Some(m) => {
                m.on = on;
                true
            }
            None => false,
        }
    }

    /// The sweep over the selected members, or why there is none.
    pub fn spec(
        &mut self,
        sizes: Vec<usize>,
        reps: usize,
        warmup_ms: f64,
        adapter: String,
    ) -> Result<BenchSpec, String> {
        let mut cases = Vec::new();
        self.running_groups.clear();
        for g in Group::ALL {
            let vs: Vec<&'static VariantInfo> = self
                .members
                .iter()
                .filter(|m| m.group == g && m.on)
                .map(|m| m.variant)
                .collect();
            if !vs.is_empty() {
                cases.push((g.options(), vs));
                self.running_groups.push(g);
            }
        }
        if cases.is_empty() {
            return Err("pick at least one sort".into());
        }
        if self.dtype != self.rows_dtype || adapter != self.rows_adapter {
            // Sorts of another element type, or on another adapter, are another plot.
            self.rows.clear();
        }
        self.rows_dtype = self.dtype;
        self.rows_adapter = adapter;
        self.skipped.clear();
        Ok(BenchSpec {
            cases,
            sizes,
            reps,
            warmup: 3,
            dtype: self.dtype,
            // Members that refuse a size (transposition past one workgroup) or take too long at
            // it (global's dispatch per phase) are skipped and said so; the others go on.
            skip_refused: true,
            min_warmup_ms: warmup_ms,
            roofline: Default::default(),
        })
    }

    /// A row of the running sweep: named after its member, replacing an older one.
    pub fn add_row(&mut self, mut r: BenchRow) {
        if let Some(g) = self.running_groups.get(r.case) {
            r.variant.push_str(g.suffix());
        }
        self.rows
            .retain(|x| !(x.algorithm == r.algorithm && x.variant == r.variant && x.n == r.n));
        self.rows.push(r);
    }

    /// A member's colour, by its place in the list (its file rows get the same one).
    fn color_of(&self, label: &str) -> Option<Color32> {
        self.members
            .iter()
            .position(|m| m.label() == label)
            .map(crate::ui::colors::thread_color)
    }

    /// Everything the family plot draws, in Gkeys/s: our members, the same-run roofline, and the
    /// loaded file's peers, rows and roofline at the plotted dtype.
    pub fn series(&self) -> Vec<Series> {
        let dtype = self.plotted_dtype();
        let mut out = Vec::new();
        for m in &self.members {
            let label = m.label();
            let (algo, variant) = (m.group.options().id(), m.row_variant());
            let pts: Vec<([f64; 2], String)> = self
                .rows
                .iter()
                .filter(|r| r.algorithm == algo && r.variant == variant)
                .map(|r| {
                    let floor = r.bytes / r.n.max(1);
                    let copy = r.copy_gbps / per_key(r) as f64;
                    let hover = format!(
                        "{label} ({})\nN = 2^{:.0}\n{:.3} Gkeys/s, {:.4} ms\n{:.2}× copy of its own floor ({floor} B/key over its passes)\n{:.3}× a copy of the keys{} ({} B/key; same run)",
                        dtype.name(),
                        x_of(r.n),
                        r.gitems_per_s,
                        r.median_ms,
                        r.fraction_of_copy,
                        r.gitems_per_s / copy,
                        if per_key(r) == 16 { " and values" } else { "" },
                        per_key(r)
                    );
                    ([x_of(r.n), r.gitems_per_s], hover)
                })
                .collect();
            if !pts.is_empty() {
                let mut s = Series::new(label, Style::Measured, pts);
                s.color = self.color_of(&s.name);
                out.push(s);
            }
        }
        out.extend(suspect_marks(&self.rows, &|r| r.gitems_per_s));
        out.extend(rooflines(&self.rows, Some(&per_key)));
        if let Some(o) = &self.overlay {
            out.extend(self.file_series(o, dtype));
        }
        out
    }

    fn file_series(&self, o: &Overlay, dtype: DType) -> Vec<Series> {
        let mut out = Vec::new();
        for s in o.at(dtype.name()) {
            let gpu = if s.peer { &o.peer_device } else { &o.adapter };
            let name = if s.peer {
                format!("{} on {gpu}", s.name)
            } else {
                format!("{} on {gpu} ({})", s.name, o.file)
            };
            let note = match (s.name.as_str(), dtype) {
                ("torch.sort", DType::U32) => {
                    "\ntorch has no unsigned sort: u32 keys timed as int32"
                }
                ("torch.sort", _) => "\nsorts values and returns int64 indices",
                ("cupy.sort", _) => "\nCUB's keys-only radix sort",
                _ => "",
            };
            let pts = s
                .points
                .iter()
                .map(|&(n, ms)| {
                    let g = FileSeries::gkeys(n, ms);
                    let hover = format!(
                        "{name} ({}; from {}, not this run)\nN = 2^{:.0}\n{g:.3} Gkeys/s, {ms:.4} ms{note}",
                        dtype.name(),
                        o.file,
                        x_of(n)
                    );
                    ([x_of(n), g], hover)
                })
                .collect();
            let (style, color) = if s.peer {
                let c = if s.name == "cupy.sort" {
                    Color32::from_rgb(235, 70, 70)
                } else {
                    Color32::from_rgb(245, 160, 40)
                };
                (Style::Peer, Some(c))
            } else {
                (Style::File, self.color_of(&s.name))
            };
            let mut series = Series::new(name, style, pts);
            series.color = color;
            out.push(series);
        }
        if !o.copy.is_empty() && !out.is_empty() {
            let name = format!("copy roofline, 8 B/key on {} ({})", o.adapter, o.file);
            let pts = o
                .copy
                .iter()
                .map(|&(n, gbps)| {
                    let y = gbps / 8.0;
                    let hover = format!(
                        "{name}\nN = 2^{:.0}\n{y:.2} Gkeys/s ({gbps:.1} GB/s)",
                        x_of(n)
                    );
                    ([x_of(n), y], hover)
                })
                .collect();
            out.push(Series::new(name, Style::FileRoofline, pts).color(Color32::DARK_GRAY));
        }
        out
    }

    /// The dtype of the plotted rows, or the chosen one before any sweep.
    pub fn plotted_dtype(&self) -> DType {
        if self.rows.is_empty() {
            self.dtype
        } else {
            self.rows_dtype
        }
    }

    /// The member checkboxes and the element type.
    pub fn controls(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            for g in Group::ALL {
                ui.label(g.title());
                for m in self.members.iter_mut().filter(|m| m.group == g) {
                    ui.checkbox(&mut m.on, m.variant.name)
                        .on_hover_text(format!("Sweep {}: {}", m.label(), m.variant.summary));
                }
                ui.separator();
            }
            egui::ComboBox::from_label("keys")
                .selected_text(self.dtype.name())
                .show_ui(ui, |ui| {
                    for d in DType::ALL {
                        ui.selectable_value(&mut self.dtype, d, d.name())
                            .on_hover_text("Sort keys of this type");
                    }
                })
                .response
                .on_hover_text(
                    "Element type of every sort in the sweep (a sweep at another type starts a new plot)",
                );
            ui.checkbox(&mut self.log_y, "log scale")
                .on_hover_text("Throughput on a log axis (sweeps and files from GPUs far apart)");
        });
    }

    /// The skipped points, one line per member with the first size's reason: "oddeven global
    /// skipped at 2^13, 2^14 (at 2^13: 8192 passes per run …)".
    pub fn skipped_summary(&self) -> Vec<String> {
        let mut out: Vec<(String, Vec<String>, String)> = Vec::new();
        for s in &self.skipped {
            // bench::run's format: "{algorithm} {variant} n={n}: {reason}".
            let (head, reason) = s.split_once(": ").unwrap_or((s, ""));
            let (who, n) = head.rsplit_once(" n=").unwrap_or((head, "?"));
            let n = n
                .parse::<u64>()
                .ok()
                .filter(|n| n.is_power_of_two())
                .map_or(n.to_string(), |n| format!("2^{}", n.trailing_zeros()));
            match out.iter_mut().find(|(w, _, _)| w == who) {
                Some((_, ns, _)) => ns.push(n),
                None => out.push((
                    who.to_string(),
                    vec![n.clone()],
                    format!("at {n}: {reason}"),
                )),
            }
        }
        out.into_iter()
            .map(|(who, ns, why)| format!("{who} skipped at {} ({why})", ns.join(", ")))
            .collect()
    }

    /// The notes (skipped points, the file's GPU, a bad file) and the plot; returns its rect.
    pub fn show(&self, ui: &mut egui::Ui, gpu: &Gpu) -> egui::Rect {
        let f = self;
        for s in f.skipped_summary() {
            ui.weak(s);
        }
        if let Some(e) = &f.file_error {
            ui.colored_label(egui::Color32::from_rgb(230, 90, 90), e);
        }
        let adapter = if f.rows.is_empty() {
            gpu.adapter_name()
        } else {
            f.rows_adapter.clone()
        };
        if let Some(o) = &f.overlay {
            let here = f.plotted_dtype().name();
            let mut note = o.comparison_note(&adapter);
            if o.at(here).next().is_none() {
                note.push_str(&format!(
                    " It has no sorts of {here} keys (peers at: {}).",
                    o.peer_dtypes().join(", ")
                ));
            }
            ui.colored_label(egui::Color32::from_rgb(230, 160, 60), note);
        }
        ui.label(format!(
            "{} keys on {adapter}; solid: this sweep, dashed squares: the file's rows, diamonds: peers (hover a point for its numbers)",
            f.plotted_dtype().name()
        ));
        let series = f.series();
        let hlines: Vec<(String, f64)> = nominal_bandwidth(&gpu.info.name)
            .map(|bw| (format!("nominal {bw:.0} GB/s at 8 B/key"), bw / 8.0))
            .into_iter()
            .collect();
        plot::draw(
            ui,
            "sorts",
            if self.log_y {
                "Gkeys/s (keys / median time), log scale"
            } else {
                "Gkeys/s (keys / median time)"
            },
            &series,
            &hlines,
            self.log_y,
        )
    }
}
