//! What a run returns: [`RunResult`] (output, pass times, the check against the CPU model, the
//! trace), its pass facts, and the checks every room makes against its model.

use super::{Algo, RunFacts, Stage};
use crate::data::{DType, Data};
use crate::gpu::{Gpu, Plan};
use serde_json::{Map, Value};

#[derive(Clone, Debug)]
pub struct PassInfo {
    pub label: String,
    /// None when the adapter has no timestamps.
    pub gpu_ms: Option<f64>,
    /// The kernel that ran (for the app's code view; not part of the JSON contract).
    pub kernel: Option<crate::gpu::context::KernelInfo>,
}

/// The result of a run: output, per-pass GPU times, the check against the CPU model, the trace.
/// Its JSON is `to_json` (docs/CLI.md).
#[derive(Clone, Debug)]
pub struct RunResult {
    pub algorithm: Algo,
    pub variant: String,
    pub dtype: DType,
    pub n: usize,
    pub adapter: String,
    pub input: Data,
    pub output: Data,
    /// Replaces the default `output` formatting (e.g. complex pairs).
    pub output_json: Option<OutputJson>,
    pub passes: Vec<PassInfo>,
    pub verified: bool,
    /// Where the GPU and the CPU model first disagree.
    pub mismatch: Option<String>,
    pub stages: Vec<Stage>,
    /// Algorithm-specific top-level JSON fields (plans, counters…).
    pub extra: Map<String, Value>,
}

impl RunResult {
    /// What every room fills alike: the names, the adapter, the input and output (`dtype` is the
    /// output's), the pass times; checked and traced by [`RunResult::checked`].
    pub fn new(
        algorithm: Algo,
        variant: &str,
        n: usize,
        gpu: &Gpu,
        input: Data,
        output: Data,
        passes: Vec<PassInfo>,
    ) -> RunResult {
        RunResult {
            algorithm,
            variant: variant.into(),
            dtype: output.dtype,
            n,
            adapter: gpu.adapter_name(),
            input,
            output,
            output_json: None,
            passes,
            verified: true,
            mismatch: None,
            stages: Vec::new(),
            extra: Map::new(),
        }
    }

    /// A run before its first pass ([`stream::Event::Head`]): the names, the input, the plan's
    /// passes without times and an empty output of type `dtype`; [`RunResult::ran`] completes it.
    pub fn head(
        algorithm: Algo,
        variant: &str,
        gpu: &Gpu,
        input: &Data,
        dtype: DType,
        plan: &Plan,
    ) -> RunResult {
        let output = Data::new(dtype, Vec::new());
        let passes = pass_infos(gpu, plan, &None);
        RunResult::new(
            algorithm,
            variant,
            input.len(),
            gpu,
            input.clone(),
            output,
            passes,
        )
    }

    /// What the run of `plan` (the plan [`RunResult::head`] was given) read back: the output and
    /// the pass times.
    pub fn ran(mut self, plan: &Plan, ex: crate::gpu::Execution) -> RunResult {
        debug_assert_eq!(self.passes.len(), plan.passes.len());
        for (i, p) in self.passes.iter_mut().enumerate() {
            p.gpu_ms = ex.pass_ms.as_ref().and_then(|t| t.get(i).copied());
        }
        RunResult {
            output: Data::new(self.dtype, ex.output),
            ..self
        }
    }

    /// The CPU model's verdict (`None`: equal), the stages and the room's extra JSON fields (added
    /// to those the result has).
    pub fn checked(
        mut self,
        mismatch: Option<String>,
        stages: Vec<Stage>,
        extra: Map<String, Value>,
    ) -> RunResult {
        self.extra.extend(extra);
        RunResult {
            verified: mismatch.is_none(),
            mismatch,
            stages,
            ..self
        }
    }

    /// The run's variant as its room's `Variant` (None: a name that room does not have).
    pub fn variant_as<V: std::str::FromStr>(&self) -> Option<V> {
        self.variant.parse().ok()
    }

    /// The room's run-level facts in `extra`, as its type (None: another room's run).
    pub fn facts<T: RunFacts>(&self) -> Option<T> {
        T::of(&self.extra)
    }

    /// The JSON `output` where the room formats it ([`OutputJson`]).
    pub fn output_value(&self) -> Option<Value> {
        self.output_json.as_ref().map(|f| (f.0)(&self.output.bits))
    }

    pub fn total_gpu_ms(&self) -> Option<f64> {
        self.passes.iter().map(|p| p.gpu_ms).sum()
    }
}

/// How a room writes its output as JSON where the list of values is not it (an FFT's complex
/// pairs): made from the output's bits when the JSON is written, not with every run (2^27 complex
/// values as JSON values took minutes and ~13 GB).
#[derive(Clone)]
pub struct OutputJson(pub std::sync::Arc<FormatOutput>);

/// [`OutputJson`]'s function: the output's bits to its JSON.
pub type FormatOutput = dyn Fn(&[u32]) -> Value + Send + Sync;

impl std::fmt::Debug for OutputJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputJson")
    }
}

/// `check()`, the CPU model's verdict on a run, except in the lens's recording run: the lens
/// compares that run's output with the same request's normal run, checked already (at 2^28 the
/// model takes most of a run's time).
pub fn verdict(gpu: &Gpu, check: impl FnOnce() -> Option<String>) -> Option<String> {
    if gpu.is_instrumented() { None } else { check() }
}

/// Compare GPU output with the CPU model bit for bit; `None` when equal, else the first difference.
pub fn first_mismatch(dtype: DType, gpu: &[u32], cpu: &[u32]) -> Option<String> {
    if gpu.len() != cpu.len() {
        return Some(format!(
            "length {} on the GPU, {} in the CPU model",
            gpu.len(),
            cpu.len()
        ));
    }
    let bad = gpu.iter().zip(cpu).position(|(a, b)| a != b)?;
    let count = gpu.iter().zip(cpu).filter(|(a, b)| a != b).count();
    Some(format!(
        "{count} element(s) differ; first at index {bad}: GPU {} vs CPU {}",
        crate::data::fmt_bits(dtype, gpu[bad]),
        crate::data::fmt_bits(dtype, cpu[bad])
    ))
}

/// Pair the runner's per-pass times with the plan's labels.
pub fn pass_infos(gpu: &Gpu, plan: &Plan, pass_ms: &Option<Vec<f64>>) -> Vec<PassInfo> {
    plan.passes
        .iter()
        .enumerate()
        .map(|(i, p)| PassInfo {
            label: p.label.clone(),
            gpu_ms: pass_ms.as_ref().map(|t| t[i]),
            kernel: gpu.kernel_info(&p.pipeline),
        })
        .collect()
}
