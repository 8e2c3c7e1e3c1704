//! The run every room shares: start the plan, trace it when asked (the room's stages checked and
//! handed on as each pass is read back), finish, check the output against the CPU model and
//! assemble the result. A room states only its plan, its head, its tracer and its check.

use super::{RunRequest, RunResult, Stages};
use crate::error::Result;
use crate::gpu::{Execution, Gpu, Plan, Running, start};
use serde_json::{Map, Value};

/// What a room's run is given: the device, the checked request and where its stages go.
pub struct Run<'a, 's> {
    pub gpu: &'a Gpu,
    pub req: &'a RunRequest,
    pub out: &'a mut Stages<'s>,
    /// Read back every pass's captures (the trace's; radix's values also without one).
    pub capture: bool,
}

/// A room's verdict on its output: the first disagreement with its model (`None`: equal) and
/// the JSON fields it adds at the top level.
pub type Checked = (Option<String>, Map<String, Value>);

impl<'a, 's> Run<'a, 's> {
    pub fn new(gpu: &'a Gpu, req: &'a RunRequest, out: &'a mut Stages<'s>) -> Self {
        let capture = req.trace;
        Run {
            gpu,
            req,
            out,
            capture,
        }
    }

    /// Run `plan` (its output region set), announced by `head`. Traced, `trace` gets the head, the
    /// running plan and the stages: it announces the stage count ([`Stages::begin`]) and pushes
    /// each stage as its pass is read back; what it returns goes to `check` with the execution.
    pub async fn drive<T>(
        self,
        plan: &Plan,
        head: RunResult,
        trace: impl AsyncFnOnce(&RunResult, &mut Running<'_>, &mut Stages<'s>) -> Result<T>,
        check: impl FnOnce(&Execution, Option<T>) -> Result<Checked>,
    ) -> Result<RunResult> {
        let mut run = start(self.gpu, plan, self.capture)?;
        let traced = match self.req.trace {
            true => Some(trace(&head, &mut run, self.out).await?),
            false => None,
        };
        let ex = run.finish().await?;
        let (mismatch, extra) = check(&ex, traced)?;
        Ok(head.ran(plan, ex).checked(mismatch, self.out.take(), extra))
    }
}
