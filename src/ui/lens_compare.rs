//! The lens's compare mode: another variant of the same algorithm on the same input, recorded on a
//! worker thread, stepped in lockstep with the stage view (same stage index), each with its lens
//! narration and table and both measured times.

use crate::algo::{self, AlgoOptions, RunRequest, RunResult};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::lens::{self, LensReport};
use eframe::egui::{self, RichText};
use std::sync::mpsc::{Receiver, channel};

type Recorded = (RunResult, LensReport);

#[derive(Default)]
pub struct Compare {
    /// The variant to compare with (None: off).
    pub variant: Option<String>,
    pending: Option<(u64, String, u32, Receiver<Result<Recorded>>)>,
    done: Option<(u64, String, u32, std::result::Result<Recorded, String>)>,
}

impl Compare {
    pub fn is_recording(&self) -> bool {
        self.pending.is_some()
    }

    /// The picker: any other variant of `result`'s algorithm.
    pub fn picker(&mut self, ui: &mut egui::Ui, algo: &AlgoOptions, result: &RunResult) {
        let variants = algo.algo().info().variants;
        let label = self.variant.clone().unwrap_or_else(|| "—".into());
        egui::ComboBox::from_label("compare with")
            .selected_text(label)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut self.variant, None, "—");
                for v in variants.iter().filter(|v| v.name != result.variant) {
                    ui.selectable_value(&mut self.variant, Some(v.name.to_string()), v.name)
                        .on_hover_text(v.summary);
                }
            })
            .response
            .on_hover_text("Record another variant on the same input and show it beside this one, stage for stage");
    }

    fn poll(&mut self) {
        let Some((key, v, warp, rx)) = &self.pending else {
            return;
        };
        match rx.try_recv() {
            Ok(r) => {
                self.done = Some((*key, v.clone(), *warp, r.map_err(|e| e.to_string())));
                self.pending = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.done = Some((*key, v.clone(), *warp, Err("the worker stopped".into())));
                self.pending = None;
            }
        }
    }

    /// The other variant's side for `stage` (recording it first if needed).
    #[allow(clippy::too_many_arguments)]
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        gpu: &Gpu,
        algo: &AlgoOptions,
        result: &RunResult,
        stage: usize,
        key: u64,
        o: lens::LensOptions,
    ) {
        let warp = o.warp;
        let Some(variant) = self.variant.clone().filter(|v| *v != result.variant) else {
            return;
        };
        self.poll();
        let fresh =
            matches!(&self.done, Some((k, v, w, _)) if *k == key && *v == variant && *w == warp);
        if !fresh && self.pending.is_none() && algo.id() == result.algorithm {
            let (tx, rx) = channel();
            let (gpu, algo, input, dtype) = (
                gpu.clone(),
                algo.clone(),
                result.input.clone(),
                result.dtype,
            );
            let v = variant.clone();
            let ctx = ui.ctx().clone();
            super::task::spawn(move || async move {
                let a = algo.algo();
                let r = async {
                    let req = RunRequest {
                        variant: a.info().variant(Some(&v))?,
                        dtype,
                        input,
                        trace: true,
                    };
                    let normal =
                        algo::run_streamed(a, &gpu, &req, &mut algo::Stages::keep()).await?;
                    let rep = lens::record_run_async(a, &gpu, &req, &normal, &o).await?;
                    Ok((normal, rep))
                }
                .await;
                let _ = tx.send(r);
                ctx.request_repaint();
            });
            self.pending = Some((key, variant.clone(), warp, rx));
        }
        if self.pending.is_some() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Recording {variant} on the GPU…"));
            });
            return;
        }
        let Some((_, _, _, done)) = &self.done else {
            return;
        };
        let (other, rep) = match done {
            Ok(d) => (&d.0, &d.1),
            Err(e) => {
                ui.colored_label(egui::Color32::LIGHT_RED, format!("{variant}: {e}"));
                return;
            }
        };
        let total = |r: &RunResult| {
            r.total_gpu_ms()
                .map_or("unmeasured".to_string(), |t| format!("{t:.4} ms"))
        };
        let passes = |r: &RunResult| match r.passes.len() {
            1 => "1 pass".to_string(),
            n => format!("{n} passes"),
        };
        ui.label(
            RichText::new(format!(
                "{}: {} in {} · {}: {} in {}",
                result.variant,
                total(result),
                passes(result),
                other.variant,
                total(other),
                passes(other)
            ))
            .strong(),
        );
        // Lockstep: the same stage index, clamped to the other variant's stages.
        let s = stage.min(other.stages.len().saturating_sub(1));
        let p = super::code::passes_of(other, s)
            .first()
            .copied()
            .filter(|&p| p < rep.passes.len());
        match p {
            Some(p) => {
                ui.label(format!(
                    "{} — stage {s}: {}",
                    other.variant, other.stages[s].label
                ));
                ui.label(super::lens::narrate(&rep.passes[p], rep.warp));
            }
            None => {
                ui.label(format!("{} — stage {s}: the input", other.variant));
            }
        }
        super::lens::table(ui, rep, p, "lens compare table");
    }
}
