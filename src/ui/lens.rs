//! The memory lens on the stage view: the current pass's recorded accesses — the site's address
//! space coloured by the warp that touched each word, each warp request's sectors as a strip of
//! 128-byte segments (touched sectors lit), workgroup-memory requests as 32 bank columns with
//! conflicting words stacked — the per-pass table, and a sentence saying what it means.
//! Recording runs on a worker thread; the frame only polls.

use crate::algo::{AlgoOptions, RunRequest, RunResult};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::lens::analysis::{self, PassLens};
use crate::lens::record::PassRecord;
use crate::lens::sites::{Kind, Space};
use crate::lens::{self, LensReport};
use eframe::egui::{self, Color32, RichText, Sense, Stroke, vec2};
use std::sync::mpsc::{Receiver, channel};

/// Temp-data key: (0-based line, its text) of the access site the lens shows, for the code panel.
pub const LENS_LINE: &str = "lens-site-line";
/// How many warp requests the strips draw.
const SHOWN_REQUESTS: usize = 8;
/// How many words of a buffer the address map draws.
const SHOWN_WORDS: u32 = 512;

#[derive(Default)]
pub struct LensPanel {
    pub on: bool,
    /// Warp size; 0 = the adapter's default.
    pub warp: u32,
    pending: Option<(u64, Receiver<Result<LensReport>>)>,
    /// (result key, warp) → the report or the error.
    report: Option<(u64, u32, std::result::Result<LensReport, String>)>,
    /// The picked access site of the current pass (its index in the kernel's sites).
    site: Option<u32>,
    /// Another variant beside this one.
    pub compare: super::lens_compare::Compare,
    /// The app's wisdom (set every frame). The lens never applies it: it records the traced run
    /// on screen, pass for pass (wisdom's options may change the passes), as `stagewise run
    /// --trace --lens` does; it says what an untraced run would take instead.
    pub wisdom: Option<std::sync::Arc<crate::wisdom::Loaded>>,
}

impl LensPanel {
    pub fn is_recording(&self) -> bool {
        self.pending.is_some() || self.compare.is_recording()
    }

    pub fn report(&self) -> Option<&LensReport> {
        self.report.as_ref().and_then(|(_, _, r)| r.as_ref().ok())
    }

    /// The report of the run with result key `key` (None: the lens is off, recording, or has
    /// another run's).
    pub fn report_of(&self, key: u64) -> Option<&LensReport> {
        self.report
            .as_ref()
            .filter(|(k, _, _)| *k == key && self.on && self.pending.is_none())
            .and_then(|(_, _, r)| r.as_ref().ok())
    }

    fn start(
        &mut self,
        ctx: &egui::Context,
        gpu: &Gpu,
        algo: &AlgoOptions,
        r: &RunResult,
        key: u64,
    ) {
        // The rates against the copy `bench` would time here (the wisdom's shape).
        let o = lens::LensOptions::auto(self.effective_warp(gpu))
            .with_wisdom(self.wisdom.as_deref(), r.input.len());
        let (gpu, algo, normal) = (gpu.clone(), algo.clone(), r.clone());
        let (tx, rx) = channel();
        let ctx = ctx.clone();
        super::task::spawn(move || async move {
            let a = algo.algo();
            let res = match a.info().variant(Some(&normal.variant)) {
                Ok(variant) => {
                    let req = RunRequest {
                        variant,
                        dtype: normal.dtype,
                        input: normal.input.clone(),
                        trace: true,
                    };
                    lens::record_run_async(a, &gpu, &req, &normal, &o).await
                }
                Err(e) => Err(e),
            };
            let _ = tx.send(res);
            ctx.request_repaint();
        });
        self.pending = Some((key, rx));
    }

    fn effective_warp(&self, gpu: &Gpu) -> u32 {
        if self.warp == 0 {
            lens::default_warp(gpu)
        } else {
            self.warp
        }
    }

    fn poll(&mut self, warp: u32) {
        let Some((key, rx)) = &self.pending else {
            return;
        };
        match rx.try_recv() {
            Ok(r) => {
                self.report = Some((*key, warp, r.map_err(|e| e.to_string())));
                self.pending = None;
                self.site = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.report = Some((*key, warp, Err("the lens worker stopped".into())));
                self.pending = None;
            }
        }
    }

    /// The toggle and, when on, the lens for `stage` of `result` (whose options are `algo`).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        gpu: Option<&Gpu>,
        algo: &AlgoOptions,
        result: &RunResult,
        stage: usize,
        key: u64,
    ) {
        ui.horizontal(|ui| {
            ui.checkbox(&mut self.on, "Memory lens").on_hover_text(
                "Record every memory access of every pass on the GPU (the kernels' recording \
                 build) and show coalescing, bank conflicts and a predicted time",
            );
            if self.on {
                ui.label("warp");
                ui.add(
                    egui::DragValue::new(&mut self.warp)
                        .range(0..=1024)
                        .custom_formatter(|v, _| {
                            if v == 0.0 {
                                "auto".into()
                            } else {
                                format!("{v}")
                            }
                        })
                        .custom_parser(|s| match s.trim() {
                            "auto" => Some(0.0),
                            t => t.parse().ok(),
                        }),
                )
                    .on_hover_text("Warp size the accesses are grouped by (0: the adapter's subgroup size; 32 as on NVIDIA)");
                if ui
                    .button("32")
                    .on_hover_text("Group by 32 lanes, as on NVIDIA GPUs (lavapipe's subgroups are 8)")
                    .clicked()
                {
                    self.warp = 32;
                }
                self.compare.picker(ui, algo, result);
            }
        });
        if self.on
            && let Some(w) = &self.wisdom
        {
            let (_, a) = w.apply(algo, &result.variant, result.dtype, result.n);
            if !a.is_empty() {
                ui.small(format!(
                    "Recorded as traced, with the options on screen: wisdom would set {} in an \
                     untraced run (the lab's, the CLI's)",
                    a.describe()
                ));
            }
        }
        ui.data_mut(|d| {
            d.insert_temp::<Option<(usize, String)>>(egui::Id::unique(LENS_LINE), None)
        });
        let Some(gpu) = gpu.filter(|_| self.on) else {
            return;
        };
        let warp = self.effective_warp(gpu);
        self.poll(warp);
        let fresh = matches!(&self.report, Some((k, w, _)) if *k == key && *w == warp);
        if !fresh && self.pending.is_none() && algo.id() == result.algorithm {
            self.start(ui.ctx(), gpu, algo, result, key);
        }
        if self.pending.is_some() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Recording memory accesses on the GPU…");
            });
            return;
        }
        let Some((_, _, report)) = &self.report else {
            return;
        };
        let rep = match report {
            Ok(r) => r,
            Err(e) => {
                ui.colored_label(Color32::LIGHT_RED, format!("Memory lens: {e}"));
                return;
            }
        };
        let passes = super::code::passes_of(result, stage);
        let Some(&p) = passes.first().filter(|&&p| p < rep.passes.len()) else {
            ui.label("Memory lens: this stage is the input (no pass ran yet).");
            table(ui, rep, None, "lens table");
            self.compare
                .ui(ui, gpu, algo, result, stage, key, rep.comparable());
            return;
        };
        let (pl, rec) = (&rep.passes[p], &rep.records[p]);
        if self.compare.variant.is_some() {
            ui.columns(2, |c| {
                c[0].label(
                    RichText::new(format!("{}: {}", result.variant, narrate(pl, rep.warp)))
                        .strong(),
                );
                table(&mut c[0], rep, Some(p), "lens table");
                self.compare
                    .ui(&mut c[1], gpu, algo, result, stage, key, rep.comparable());
            });
        } else {
            ui.label(RichText::new(narrate(pl, rep.warp)).strong());
            table(ui, rep, Some(p), "lens table");
        }
        ui.label(RichText::new(recorded(rep)).small());
        let sites: Vec<u32> = pl
            .global
            .iter()
            .map(|g| g.site)
            .chain(pl.shared.iter().map(|s| s.site))
            .collect();
        // By default the site that costs most against its ideal: the one worth looking at.
        let worst = pl
            .global
            .iter()
            .map(|g| (g.sectors as f64 / g.min_sectors.max(1) as f64, g.site))
            .chain(pl.shared.iter().map(|s| (s.max_ways as f64, s.site)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|w| w.1);
        let Some(site) = self.site.filter(|s| sites.contains(s)).or(worst) else {
            return;
        };
        // "line 12 read workgroup s_mem: s_mem[x]": where, what, which variable, the source text.
        let name = |s: u32| {
            let k = &rec.kernel.sites[s as usize];
            format!(
                "line {} {} {}{}: {}",
                k.line,
                kind_word(k.kind),
                if k.space == Space::Workgroup {
                    "workgroup "
                } else {
                    ""
                },
                k.buffer,
                k.expr
            )
        };
        let mut pick = site;
        egui::ComboBox::from_label("access site")
            .selected_text(name(site))
            .show_ui(ui, |ui| {
                for &s in &sites {
                    ui.selectable_value(&mut pick, s, name(s));
                }
            })
            .response
            .on_hover_text("The access in the kernel's WGSL whose requests are drawn below");
        if pick != site {
            self.site = Some(pick);
        }
        // The code panel marks the picked site's line (next frame).
        let s = &rec.kernel.sites[pick as usize];
        let mark = (s.line as usize - 1, s.text.clone());
        ui.data_mut(|d| d.insert_temp(egui::Id::unique(LENS_LINE), Some(mark)));
        requests(ui, rec, pick, rep.warp);
        address_map(ui, rec, pick, rep.warp);
    }
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Read => "read",
        Kind::Write => "write",
    }
}

/// What the lens shows, in words.
pub fn narrate(p: &PassLens, warp: u32) -> String {
    let mut parts = Vec::new();
    let ideal: u64 = p.global.iter().map(|g| g.min_sectors).sum();
    for g in &p.global {
        let r = g.requests.max(1) as f64;
        let (spr, seg) = (g.sectors as f64 / r, g.segments as f64 / r);
        let lanes = g.bytes as f64 / r / 4.0;
        if g.sectors <= g.min_sectors {
            parts.push(format!(
                "line {}: each warp's {} of {} are coalesced ({spr:.1} sectors per request, the minimum)",
                g.line,
                kind_word(g.kind).to_string() + "s",
                g.buffer
            ));
        } else {
            let x = g.sectors as f64 / g.min_sectors.max(1) as f64;
            parts.push(format!(
                "line {}: each warp's {lanes:.0} {} land in {seg:.0} different segments: {x:.1}× the traffic they need",
                g.line,
                kind_word(g.kind).to_string() + "s",
            ));
        }
    }
    for s in &p.shared {
        parts.push(if s.max_ways <= 1 {
            format!("line {}: workgroup memory without bank conflicts", s.line)
        } else {
            format!(
                "line {}: {}-way bank conflicts in workgroup memory (mean {:.2} ways per request)",
                s.line, s.max_ways, s.mean_ways
            )
        });
    }
    // Which buffers the traffic goes to, where it is more than one (a look-back's statuses, a
    // twiddle table, a histogram beside the data).
    let total = p.sectors().max(1) as f64;
    if p.buffers.len() > 1 {
        let shares: Vec<String> = p
            .buffers
            .iter()
            .map(|b| {
                format!(
                    "{} {:.1} % ({} requests)",
                    b.buffer,
                    100.0 * b.sectors as f64 / total,
                    b.requests
                )
            })
            .collect();
        parts.push(format!("sectors by buffer: {}", shares.join(", ")));
    }
    let time = match (&p.prediction, p.gpu_ms) {
        (Some(x), Some(b)) => format!(
            "; predicted {:.4} ms from {} sectors (ideal {ideal}; {}: a pass's fixed time {:.0} %, \
             DRAM {:.0} %{}, L2 {:.0} %, bank-conflict replays {:.0} %{}), measured {b:.4} ms{}",
            x.total_ms,
            p.sectors(),
            x.case,
            100.0 * x.fixed_ms / x.total_ms.max(1e-12),
            100.0 * x.dram_ms / x.total_ms.max(1e-12),
            if x.scattered_bytes > 0 {
                format!(
                    " (scattered or sparse sectors {:.0} %)",
                    100.0 * x.scattered_ms / x.total_ms.max(1e-12)
                )
            } else {
                String::new()
            },
            100.0 * x.l2_ms / x.total_ms.max(1e-12),
            100.0 * x.replay_ms / x.total_ms.max(1e-12),
            {
                let idle = if x.idle_ms > 0.0 {
                    format!(
                        "; its {} idle workgroups' launches add {:.4} ms",
                        p.idle_workgroups(),
                        x.idle_ms
                    )
                } else {
                    String::new()
                };
                match x.limit() {
                    crate::lens::memory::Limit::Launches => format!(
                        "; launch-bound: {} workgroup{} at the idle launch rate take longer than \
                         the bytes",
                        p.workgroups,
                        if p.workgroups == 1 { "" } else { "s" }
                    ),
                    crate::lens::memory::Limit::RoundTrips => format!(
                        "; bound by round trips: {} working warps, one load in flight each as in \
                         a scalar copy, take longer than the bytes{idle}",
                        p.working_warps
                    ),
                    crate::lens::memory::Limit::Bytes => idle,
                }
            },
            x.verdict
                .as_ref()
                .map_or(String::new(), |v| format!(": {v}"))
        ),
        _ => String::new(),
    };
    format!("Pass {} (warp {warp}): {}{time}.", p.pass, parts.join("; "))
}

/// What was recorded and the memory system the prediction uses, in words.
pub fn recorded(rep: &LensReport) -> String {
    let mem = rep
        .memory
        .as_ref()
        .map_or("no timestamps here: no prediction".to_string(), |m| {
            format!(
                "memory model: a pass's fixed {:.4} ms, DRAM {:.0} GB/s, {}",
                m.fixed_ms,
                m.dram_gbps,
                m.cache_and_rates()
            )
        });
    format!("Recorded: {}. {mem}.", rep.sample_text())
}

/// The per-pass table; `current` is highlighted.
pub(super) fn table(ui: &mut egui::Ui, rep: &LensReport, current: Option<usize>, id: &str) {
    let ms = |v: Option<f64>| v.map_or("–".to_string(), |t| format!("{t:.4}"));
    // Scrolls sideways rather than spilling into the compare column beside it.
    egui::ScrollArea::horizontal().id_salt(id).show(ui, |ui| {
        egui::Grid::new(id).striped(true).show(ui, |ui| {
            for h in [
                "pass",
                "requests",
                "sectors/req",
                "ideal",
                "conflict ways",
                "bytes / floor",
                "footprint",
                "predicted ms",
                "measured ms",
            ] {
                ui.label(RichText::new(h).small().strong());
            }
            ui.end_row();
            for p in &rep.passes {
                let req: u64 = p.global.iter().map(|g| g.requests).sum();
                let ideal: u64 = p.global.iter().map(|g| g.min_sectors).sum();
                let bytes = p.sectors() * analysis::SECTOR;
                let ways = p.shared.iter().map(|s| s.max_ways).max();
                let cells = [
                    format!("{} {}", p.pass, p.label),
                    req.to_string(),
                    format!("{:.2}", p.sectors() as f64 / req.max(1) as f64),
                    format!("{:.2}", ideal as f64 / req.max(1) as f64),
                    ways.map_or("–".into(), |w| w.to_string()),
                    format!("{bytes} / {}", p.floor_bytes),
                    p.footprint_bytes.to_string(),
                    ms(p.predicted_ms),
                    ms(p.gpu_ms),
                ];
                for c in cells {
                    let t = RichText::new(c).small();
                    ui.label(if Some(p.pass) == current {
                        t.strong().color(Color32::YELLOW)
                    } else {
                        t
                    });
                }
                ui.end_row();
            }
        });
    });
}

/// The site's first words of address space, each coloured by the warp that touched it; hover for
/// the invocation, the WGSL line and the address.
fn address_map(ui: &mut egui::Ui, rec: &PassRecord, site: u32, warp: u32) {
    let s = &rec.kernel.sites[site as usize];
    let mut owner: Vec<Option<(u32, u32)>> = vec![None; SHOWN_WORDS as usize];
    for a in rec.accesses.iter().filter(|a| a.site == site) {
        for k in 0..s.width {
            let w = a.addr.wrapping_add(k);
            if w < SHOWN_WORDS && owner[w as usize].is_none() {
                owner[w as usize] = Some((a.wg, a.lid));
            }
        }
    }
    let used = owner.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    if used == 0 {
        return;
    }
    ui.label(format!(
        "{} words {}–{} (cells coloured by warp; a row is one 128-byte segment)",
        s.buffer,
        0,
        used - 1
    ));
    let cols = 32usize;
    let rows = used.div_ceil(cols);
    let cell = ((ui.available_width() - 8.0) / cols as f32).clamp(4.0, 12.0);
    let (rect, resp) =
        ui.allocate_exact_size(vec2(cell * cols as f32, cell * rows as f32), Sense::hover());
    let painter = ui.painter_at(rect);
    let wpw = |wg: u32, lid: u32| wg as usize * 1024 + (lid / warp.max(1)) as usize;
    for (i, o) in owner.iter().take(used).enumerate() {
        let r = egui::Rect::from_min_size(
            rect.min + vec2((i % cols) as f32 * cell, (i / cols) as f32 * cell),
            vec2(cell - 1.0, cell - 1.0),
        );
        let c = o.map_or(Color32::from_gray(50), |(wg, lid)| {
            super::colors::thread_color(wpw(wg, lid))
        });
        painter.rect_filled(r, 1.0, c);
    }
    if let Some(pos) = resp.hover_pos() {
        let (cx, cy) = ((pos - rect.min).x / cell, (pos - rect.min).y / cell);
        let i = cy as usize * cols + cx as usize;
        if let Some(Some((wg, lid))) = owner.get(i).filter(|_| i < used) {
            resp.on_hover_text(format!(
                "{} word {i}: workgroup {wg}, invocation {lid} (warp {}), WGSL line {}: {}",
                s.buffer,
                lid / warp.max(1),
                s.line,
                s.expr
            ));
        }
    }
}

/// The first warp requests of the site: global ones as strips of segments with touched sectors
/// lit, workgroup-memory ones as 32 bank columns with the words of each bank stacked.
fn requests(ui: &mut egui::Ui, rec: &PassRecord, site: u32, warp: u32) {
    let s = &rec.kernel.sites[site as usize];
    let mut reqs: Vec<Vec<(u32, u32)>> = Vec::new();
    analysis::for_each_request(rec, warp, |r| {
        if r.site == site && reqs.len() < SHOWN_REQUESTS {
            reqs.push(r.lanes.to_vec());
        }
    });
    let painter_row = |ui: &mut egui::Ui, h: f32| {
        let w = ui.available_width();
        ui.allocate_exact_size(vec2(w, h), Sense::hover())
    };
    if s.space == Space::Global {
        ui.label("Warp requests: each box a 128-byte segment of 4 sectors, touched sectors lit");
        for lanes in &reqs {
            let mut segs: Vec<u64> = lanes
                .iter()
                .flat_map(|&(_, a)| (0..s.width as u64).map(move |k| (a as u64 + k) * 4 / 128))
                .collect();
            segs.sort_unstable();
            segs.dedup();
            let (rect, resp) = painter_row(ui, 16.0);
            let p = ui.painter_at(rect);
            let sw = (rect.width() / 33.0).min(40.0);
            for (j, seg) in segs.iter().take(32).enumerate() {
                let x0 = rect.min.x + j as f32 * sw;
                for sec in 0..4u64 {
                    let lit = lanes.iter().any(|&(_, a)| {
                        (0..s.width as u64).any(|k| (a as u64 + k) * 4 / 32 == seg * 4 + sec)
                    });
                    let r = egui::Rect::from_min_size(
                        egui::pos2(x0 + sec as f32 * sw / 4.0, rect.min.y),
                        vec2(sw / 4.0 - 1.0, 14.0),
                    );
                    let c = if lit {
                        Color32::from_rgb(250, 200, 60)
                    } else {
                        Color32::from_gray(60)
                    };
                    p.rect_filled(r, 0.0, c);
                }
                p.rect_stroke(
                    egui::Rect::from_min_size(egui::pos2(x0, rect.min.y), vec2(sw - 1.0, 14.0)),
                    0.0,
                    Stroke::new(1.0, Color32::GRAY),
                    egui::StrokeKind::Inside,
                );
            }
            resp.on_hover_text(format!(
                "{} lanes touch {} segments (lane 0: word {})",
                lanes.len(),
                segs.len(),
                lanes.first().map_or(0, |l| l.1)
            ));
        }
    } else {
        ui.label("Warp requests: 32 banks (columns); words of one bank stack up — each extra row is a replay");
        for lanes in &reqs {
            let mut words: Vec<(u32, u32)> = lanes
                .iter()
                .flat_map(|&(l, a)| (0..s.width).map(move |k| (a.wrapping_add(k), l)))
                .collect();
            words.sort_unstable();
            words.dedup_by_key(|w| w.0);
            let mut depth = [0u32; 32];
            let (ways, _) = analysis::bank_ways(lanes, s.width);
            let mut stack = [0u32; 32];
            for &(w, _) in &words {
                stack[(w % 32) as usize] += 1;
            }
            let h = 8.0 * stack.iter().copied().max().unwrap_or(1).min(32) as f32 + 4.0;
            let (rect, resp) = painter_row(ui, h);
            let p = ui.painter_at(rect);
            let bw = (rect.width() / 32.0).min(24.0);
            for &(w, l) in &words {
                let b = (w % 32) as usize;
                let d = depth[b];
                depth[b] += 1;
                if d >= 32 {
                    continue;
                }
                let r = egui::Rect::from_min_size(
                    egui::pos2(rect.min.x + b as f32 * bw, rect.min.y + d as f32 * 8.0),
                    vec2(bw - 1.0, 7.0),
                );
                p.rect_filled(r, 0.0, super::colors::thread_color(l as usize));
            }
            resp.on_hover_text(format!("{} words, {ways}-way", words.len()));
        }
    }
}
