//! Your kernel's runs take the file's kernel wisdom as `stagewise run kernel` does: overrides the
//! user did not type come from this adapter's tuned choice for the kernel's text (its hash), the
//! room says which, and a choice the adapter refuses runs again with the kernel's own values.
//! Wisdom off (`--no-wisdom`, `STAGEWISE_WISDOM=off`) reads none; the browser keeps no files.
//! While the room's tuning runs, runs wait for it: they would be timed with it.

use super::*;
use crate::ui::workbench::RunWisdom;

/// Why the room's Run is disabled while its tuning runs.
pub(super) const WAIT_FOR_TUNING: &str = "A tuning of this kernel is running: a run now would share the GPU with its timings. Stop \
     it or let it finish (a run asked for meanwhile starts then)";

impl StagewiseApp {
    /// Fill `job`'s kernel overrides not typed from the file's kernel wisdom (what was filled
    /// kept for the room to say); the options as typed go with the job, for a refused choice.
    pub(super) fn kernel_wisdom(&mut self, gpu: &Gpu, job: &mut RunJob) {
        self.workbench.wisdom = RunWisdom::default();
        let AlgoOptions::Kernel(o) = &job.algo else {
            return;
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            let file = self
                .workbench
                .wisdom_file
                .clone()
                .unwrap_or_else(|| crate::wisdom::kernel::path(gpu));
            let (k, applied, warning) =
                crate::wisdom::kernel::apply_from(&file, gpu, &self.wisdom.source, o);
            self.workbench.wisdom.warning = warning;
            if !applied.is_empty() {
                self.workbench.wisdom.options = Some(k.clone());
                self.workbench.wisdom.applied = applied;
                job.plain = Some(std::mem::replace(&mut job.algo, AlgoOptions::Kernel(k)));
            }
        }
        #[cfg(target_arch = "wasm32")]
        let _ = (gpu, o);
    }

    /// The adapter refused wisdom's choice (`why`): the run goes on with the kernel's values.
    pub(super) fn kernel_wisdom_refused(&mut self, why: &str) {
        let w = &mut self.workbench.wisdom;
        w.warning = Some(format!(
            "warning: wisdom's {} was refused ({why}); the kernel's own values ran",
            w.applied.describe()
        ));
        w.applied = Default::default();
        w.options = None;
    }

    /// The options the shown result ran with: the session's, with wisdom's overrides if it took
    /// any (the lens records what ran).
    pub(super) fn ran_options(&self) -> AlgoOptions {
        match (&self.workbench.wisdom.options, &self.result) {
            (Some(k), Some(r)) if r.algorithm == Algo::Kernel => AlgoOptions::Kernel(k.clone()),
            _ => self.session.algo.clone(),
        }
    }

    /// The room's line on kernel wisdom: what the run took from it, or why a file went unused.
    pub(super) fn kernel_wisdom_line(&self, ui: &mut egui::Ui) {
        let w = &self.workbench.wisdom;
        if !w.applied.is_empty() {
            ui.label(format!(
                "wisdom ({}): {}",
                w.applied.from,
                w.applied.describe()
            ))
            .on_hover_text(
                "Overrides you did not type, from this file's saved tuning on this GPU (Save as \
                 this file's wisdom, or `stagewise tune kernel --save`); a typed override wins",
            );
        }
        if let Some(m) = &w.warning {
            ui.colored_label(egui::Color32::from_rgb(230, 150, 60), m);
        }
    }

    /// A run asked for while the room's tuning runs waits for it; true when one may start now.
    pub(super) fn run_may_start(&mut self) -> bool {
        if self.in_kernel_room() && self.workbench.tune.is_running() {
            self.workbench.after_tuning = true;
            return false;
        }
        true
    }
}
