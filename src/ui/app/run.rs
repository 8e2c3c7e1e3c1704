//! A run on the GPU, streamed in. The worker thread runs the session's job and sends its trace as
//! it is read back: the head (what the run is), every stage once its pass is back and checked,
//! then the result (output, verification, pass times). The app grows the result it shows as the
//! stages arrive, so a large trace is viewable long before its last pass; a run that fails or is
//! stopped keeps the stages that arrived.

use super::*;
use crate::algo::stream::Event;

/// What the worker sends the UI.
pub enum RunMsg {
    /// The head, or the next stage.
    Trace(Event),
    /// The adapter refused the overrides kernel wisdom filled in (why): the run goes on with the
    /// kernel's own values.
    WisdomRefused(String),
    /// The run's end: its result (whose stages are those not streamed), or why it failed.
    Done(Box<Result<RunResult>>),
}

/// One run, taken from the session when it starts.
#[derive(Clone, Debug)]
pub struct RunJob {
    pub algo: AlgoOptions,
    pub variant: String,
    pub dtype: DType,
    pub input: Data,
    /// The options as the user gave them, when wisdom filled some into `algo`: run instead when
    /// the adapter refuses wisdom's choice.
    pub plain: Option<AlgoOptions>,
}

impl RunJob {
    /// Run it on `gpu` (traced, as the app always runs) and send everything to `send`, which
    /// returns false once nobody listens (the run then stops at its next stage).
    pub async fn run(self, gpu: &Gpu, send: &mut dyn FnMut(RunMsg) -> bool) {
        let RunJob {
            algo,
            variant,
            dtype,
            input,
            plain,
        } = self;
        let again = plain.map(|p| (p, input.clone()));
        let mut r = run_as(&algo, &variant, dtype, input, gpu, send).await;
        // Wisdom's choice refused (limits, or a value the kernel rejects): said once, then the
        // kernel's own values, as `run kernel` does.
        if let (Err(e @ (Error::Input(_) | Error::Limit(_))), Some((plain, input))) = (&r, again) {
            send(RunMsg::WisdomRefused(e.to_string()));
            r = run_as(&plain, &variant, dtype, input, gpu, send).await;
        }
        send(RunMsg::Done(Box::new(r)));
    }
}

/// Run `algo` traced on `gpu`, its trace sent to `send` as it arrives.
async fn run_as(
    algo: &AlgoOptions,
    variant: &str,
    dtype: DType,
    input: Data,
    gpu: &Gpu,
    send: &mut dyn FnMut(RunMsg) -> bool,
) -> Result<RunResult> {
    let algo = algo.algo();
    let req = algo
        .info()
        .variant(Some(variant))
        .and_then(|variant| RunRequest::new(algo, variant, dtype, input, true));
    match req {
        Ok(req) => {
            let mut trace = |e| send(RunMsg::Trace(e));
            let mut out = algo::Stages::send_to(&mut trace);
            let mut r = algo::run_streamed(algo, gpu, &req, &mut out).await;
            // Pass times only from timestamps that measure the work (lavapipe's stop doing
            // so once the window is drawn). Checked after the run, so that the run's own
            // allocations (and injected faults) come first; a failed check changes nothing.
            if let Ok(res) = &mut r {
                let _ = crate::bench::check_clock(gpu).await;
                if !gpu.trusts_timestamps() {
                    res.passes.iter_mut().for_each(|p| p.gpu_ms = None);
                }
            }
            r
        }
        Err(e) => Err(e),
    }
}

/// Where the shown trace stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceState {
    /// Nothing in flight: the result, if any, is whole.
    Complete,
    /// Stages are arriving; `of` will come (the input included).
    Arriving { of: usize },
    /// The run ended (an error, or Stop) before its last stage: the stages that arrived stay.
    Stopped { of: usize },
}

impl StagewiseApp {
    /// Start a GPU run of the session off the UI frame ([`crate::ui::task`]); its trace streams in
    /// through a channel.
    pub fn start_run(&mut self, ctx: &egui::Context) {
        let mut note = None;
        if let Some(why) = self.gpu.as_ref().and_then(Gpu::check_lost) {
            note = Some(self.recreate_device(&why));
        }
        let Some(gpu) = self.gpu.clone() else {
            self.message = self.gpu_error.clone();
            return;
        };
        if !self.run_may_start() {
            self.message = Some("the run starts when the kernel's tuning ends".into());
            return;
        }
        let mut job = match self.session.job() {
            Ok(j) => j,
            Err(e) => {
                self.message = Some(e.to_string());
                return;
            }
        };
        self.kernel_wisdom(&gpu, &mut job);
        let (tx, rx) = channel();
        let ctx = ctx.clone();
        crate::ui::task::spawn(move || async move {
            job.run(&gpu, &mut |m| {
                let listening = tx.send(m).is_ok();
                ctx.request_repaint();
                listening
            })
            .await
        });
        self.follow(rx);
        self.workbench.started = Some(web_time::Instant::now());
        self.message = note;
    }

    /// Show the run whose messages arrive on `rx` (the worker's channel; tests feed their own).
    /// A trace still streaming in stops there (its worker stops at its next stage).
    pub fn follow(&mut self, rx: Receiver<RunMsg>) {
        if let TraceState::Arriving { of } = self.trace {
            self.trace = TraceState::Stopped { of };
        }
        self.pending = Some(rx);
    }

    /// Stop following the run in flight: its worker stops at its next stage, and the stages that
    /// arrived stay.
    pub fn stop_run(&mut self) {
        if self.pending.take().is_some() {
            self.stopped(Error::Cancelled);
        }
    }

    /// How far the shown trace has come, while it streams in or after it stopped: "stage k of K
    /// arrived", counted as the timeline counts (0 = the input).
    pub fn arrived(&self) -> Option<String> {
        let (TraceState::Arriving { of } | TraceState::Stopped { of }) = self.trace else {
            return None;
        };
        let last = of.saturating_sub(1);
        Some(match self.result.as_ref().map_or(0, |r| r.stages.len()) {
            0 => format!("no stage of {last} arrived yet"),
            got => format!("stage {} of {last} arrived", got - 1),
        })
    }

    /// The line above the timeline while a trace streams in (with Stop: true when clicked), or
    /// after it stopped early.
    pub(super) fn progress(&self, ui: &mut egui::Ui) -> bool {
        let Some(arrived) = self.arrived() else {
            return false;
        };
        if let TraceState::Stopped { .. } = self.trace {
            ui.colored_label(
                egui::Color32::from_rgb(230, 150, 60),
                format!("Incomplete trace: {arrived} before the run stopped"),
            );
            return false;
        }
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!(
                "Streaming the trace: {arrived}; the GPU runs the rest"
            ));
            ui.button("Stop")
                .on_hover_text("Stop the run here; the stages that arrived stay")
                .clicked()
        })
        .inner
    }

    /// Take every message the worker has sent.
    pub(super) fn poll(&mut self) {
        while let Some(rx) = &self.pending {
            let msg = match rx.try_recv() {
                Ok(m) => m,
                Err(std::sync::mpsc::TryRecvError::Empty) => return,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => RunMsg::Done(Box::new(Err(
                    Error::Gpu("the GPU worker stopped unexpectedly".into()),
                ))),
            };
            match msg {
                RunMsg::Trace(Event::Head { head, stages }) => {
                    self.result = Some(*head);
                    self.result_key += 1;
                    self.trace = TraceState::Arriving { of: stages };
                    self.timeline.stage = 0;
                    self.timeline.playing = false;
                }
                RunMsg::Trace(Event::Stage(st)) => {
                    if let Some(r) = &mut self.result {
                        r.stages.push(*st);
                        // Open on the first pass's result, as a whole trace does.
                        if r.stages.len() == 2 && self.timeline.stage == 0 {
                            self.timeline.stage = 1;
                        }
                        // A session's stage, as soon as it is here.
                        if let Some(k) = self.want_stage
                            && k < r.stages.len()
                        {
                            self.timeline.stage = k;
                            self.want_stage = None;
                        }
                    }
                }
                RunMsg::WisdomRefused(why) => self.kernel_wisdom_refused(&why),
                RunMsg::Done(r) => {
                    self.pending = None;
                    match *r {
                        Ok(r) => self.finished(r),
                        Err(e) => self.stopped(e),
                    }
                }
            }
        }
    }

    /// The run's result: after a streamed trace, the stages that arrived are its stages.
    fn finished(&mut self, mut r: RunResult) {
        if let (TraceState::Arriving { .. }, Some(shown)) = (self.trace, self.result.take()) {
            let mut stages = shown.stages;
            stages.append(&mut r.stages);
            r.stages = stages;
        } else {
            // Open on the first pass's result: the input row and stage 1 side by side.
            self.timeline.stage = 1.min(r.stages.len().saturating_sub(1));
            self.timeline.playing = false;
        }
        if let Some(k) = self.want_stage.take() {
            self.timeline.stage = k.min(r.stages.len().saturating_sub(1));
        }
        if r.algorithm == Algo::Kernel {
            self.workbench.ran();
        }
        if let Some(m) = &r.mismatch {
            self.message = Some(format!("GPU differs from the CPU model: {m}"));
        }
        self.result = Some(r);
        self.result_key += 1;
        self.trace = TraceState::Complete;
    }

    /// The run ended with `e`. A lost device is replaced; a trace that had begun keeps the stages
    /// that arrived and says where it stopped.
    fn stopped(&mut self, e: Error) {
        // A session's stage belongs to the run that failed, not to the next one.
        self.want_stage = None;
        // A lost device (reported by the run, or by the device-lost callback): replace it.
        let lost = match &e {
            Error::DeviceLost(why) => Some(why.clone()),
            _ => self.gpu.as_ref().and_then(Gpu::check_lost),
        };
        let msg = match (&e, lost) {
            (_, Some(why)) => self.recreate_device(&why),
            (Error::Cancelled, None) => "stopped".to_string(),
            (_, None) => e.to_string(),
        };
        if let (AlgoOptions::Kernel(o), false) = (&self.session.algo, matches!(e, Error::Cancelled))
        {
            self.workbench.failed(o, &e);
        }
        if let TraceState::Arriving { of } = self.trace {
            self.trace = TraceState::Stopped { of };
        }
        self.message = Some(match self.arrived() {
            Some(arrived) => format!("{msg}: {arrived}, and those stay viewable"),
            None => msg,
        });
    }
}
