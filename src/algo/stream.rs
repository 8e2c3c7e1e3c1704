//! Streamed traces. A room that builds its stages pass by pass (from [`crate::gpu::Running`]) hands
//! each one to a [`Stages`] as soon as it is read back and checked: the CLI and the tests keep them
//! for the result, the app sends them on to the UI while later passes still run.

use super::{RunResult, Stage};
use crate::error::{Error, Result};

/// What a streamed run sends before its result.
pub enum Event {
    /// What the run is, before its first pass: names, input, the plan's passes (no times yet) and
    /// the facts known before the run in `extra`; no stages, no output. `stages`: how many the
    /// trace will have (the input included).
    Head { head: Box<RunResult>, stages: usize },
    /// The next stage, read back and checked against the CPU model.
    Stage(Box<Stage>),
}

/// Where a run's stages go: kept for the result, or sent on as each one is ready.
pub struct Stages<'a> {
    kept: Vec<Stage>,
    /// Returns false once nobody listens any more (the run then stops).
    send: Option<&'a mut dyn FnMut(Event) -> bool>,
}

impl<'a> Stages<'a> {
    /// Keep every stage for the result (the CLI, the tests).
    pub fn keep() -> Stages<'static> {
        Stages {
            kept: Vec::new(),
            send: None,
        }
    }

    /// Send the head and every stage to `send`; the result then holds no stages.
    pub fn send_to(send: &'a mut dyn FnMut(Event) -> bool) -> Stages<'a> {
        Stages {
            kept: Vec::new(),
            send: Some(send),
        }
    }

    /// Announce the run (sent only when streaming): `head` as it stands before the first pass,
    /// and the number of stages to come.
    pub fn head(&mut self, head: &RunResult, stages: usize) -> Result<()> {
        match &mut self.send {
            Some(send) => deliver(
                send,
                Event::Head {
                    head: Box::new(head.clone()),
                    stages,
                },
            ),
            None => Ok(()),
        }
    }

    /// [`Stages::head`] with `stages` stages (the input's included), then the input's stage.
    pub fn begin(&mut self, head: &RunResult, stages: usize, input: Stage) -> Result<()> {
        self.head(head, stages)?;
        self.push(input)
    }

    /// The next stage: kept, or sent on. Fails with [`Error::Cancelled`] when nobody listens.
    pub fn push(&mut self, stage: Stage) -> Result<()> {
        match &mut self.send {
            Some(send) => deliver(send, Event::Stage(Box::new(stage))),
            None => {
                self.kept.push(stage);
                Ok(())
            }
        }
    }

    /// The stages kept for the result (none when they were sent on).
    pub fn take(&mut self) -> Vec<Stage> {
        std::mem::take(&mut self.kept)
    }
}

fn deliver(send: &mut &mut dyn FnMut(Event) -> bool, e: Event) -> Result<()> {
    if send(e) {
        Ok(())
    } else {
        Err(Error::Cancelled)
    }
}
