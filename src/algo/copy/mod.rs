//! The copy roofline: the fastest way this GPU can read N words and write them elsewhere. Every
//! benchmark row is reported as a fraction of this kernel measured in the same run.

use super::prelude::*;
use crate::gpu::{grid, specialize};
use serde::{Deserialize, Serialize};

mod tune;

variants! {
    room "copy" (seed "-"): "Copy (roofline)",
        "Reads N words and writes them to another buffer: the bandwidth every other kernel is \
         measured against.";
    Vec4 = "vec4": "tuned: 16-byte loads, as many a thread as this GPU's wisdom says (else 4), loads before stores",
    Scalar = "scalar": "one u32 per thread, for contrast",
}

/// The options' help: the CLI's for each flag (src/cli) and the app's tooltip for each control.
pub mod help {
    pub const WORKGROUP_SIZE: &str =
        "Threads per workgroup of the vec4 kernel (0 = auto: this GPU's wisdom, else 256)";
    pub const PER_THREAD: &str =
        "vec4 (16-byte) elements each thread copies (0 = auto: this GPU's wisdom, else 4)";

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("workgroup_size", WORKGROUP_SIZE),
        ("per_thread", PER_THREAD),
    ];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub workgroup_size: u32,
    pub per_thread: u32,
}

/// The built-in shape (the H100's best; `stagewise tune` measures this GPU's).
pub const DEFAULT_WORKGROUP_SIZE: u32 = 256;
pub const DEFAULT_PER_THREAD: u32 = 4;

impl Default for Options {
    /// Both auto: the wisdom's shape where it has one, else the built-in.
    fn default() -> Self {
        Options {
            workgroup_size: 0,
            per_thread: 0,
        }
    }
}

impl Options {
    /// (threads per workgroup, vec4 per thread), auto resolved to the built-in shape.
    pub fn shape(&self) -> (u32, u32) {
        let or = |v: u32, d: u32| if v == 0 { d } else { v };
        (
            or(self.workgroup_size, DEFAULT_WORKGROUP_SIZE),
            or(self.per_thread, DEFAULT_PER_THREAD),
        )
    }

    fn validate(&self, gpu: &Gpu) -> Result<()> {
        let max = gpu.limits.max_compute_invocations_per_workgroup;
        let (wg, per) = self.shape();
        if !wg.is_power_of_two() || wg > max {
            return Err(crate::error::Error::input_or_limit(
                wg.is_power_of_two() && wg > max,
                format!(
                    "--workgroup-size must be a power of two up to {max} (this adapter's limit); got {wg}"
                ),
            ));
        }
        if !(1..=16).contains(&per) {
            return Err(crate::input_err!("--per-thread must be 1..=16; got {per}"));
        }
        Ok(())
    }

    /// Build the copy plan from `src` to `dst` of `n` words (buffers padded to whole vec4s).
    fn plan(
        &self,
        gpu: &Gpu,
        variant: Variant,
        src: &wgpu::Buffer,
        dst: &wgpu::Buffer,
        n: usize,
    ) -> Result<Plan> {
        self.validate(gpu)?;
        let mut plan = Plan::default();
        if variant == Variant::Scalar {
            let p = gpu.pipeline(
                "copy_scalar",
                include_str!("../../../shaders/copy/copy_scalar.wgsl"),
                "copy_scalar",
            )?;
            let u = gpu.uniform("copy params", &[n as u32])?;
            let bg = gpu.bind(&p, &[src, dst, &u])?;
            plan.push("copy (scalar)", &p, bg, grid((n as u32).div_ceil(256)));
            plan.keep.push(u);
        } else {
            let (wg, per) = self.shape();
            let src_wgsl = specialize(
                include_str!("../../../shaders/copy/copy.wgsl"),
                &[("WG", wg.to_string()), ("PER", per.to_string())],
            );
            let p = gpu.pipeline("copy_vec4", &src_wgsl, "copy_vec4")?;
            let n_vec4 = n.div_ceil(4) as u32;
            let u = gpu.uniform("copy params", &[n_vec4])?;
            let bg = gpu.bind(&p, &[src, dst, &u])?;
            let groups = n_vec4.div_ceil(wg * per);
            plan.push("copy (vec4)", &p, bg, grid(groups));
            plan.keep.push(u);
        }
        Ok(plan)
    }
}

fn padded(n: usize) -> usize {
    n.div_ceil(4) * 4
}

impl Algorithm for Options {
    info_and_example!(INFO);

    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let n = req.input.len();
            let mut words = req.input.bits.clone();
            words.resize(padded(n), 0);
            let src = gpu.storage_init("copy src", &words)?;
            let dst = gpu.storage_poisoned("copy dst", padded(n), 0xDEAD_BEEF)?;
            let mut plan = self.plan(gpu, Variant::of(req.variant), &src, &dst, n)?;
            plan.output = Some(Region::words(&dst, n));
            if req.trace {
                plan.passes[0].capture.push(Region::words(&dst, n));
            }
            let head = RunResult::head(
                Algo::Copy,
                req.variant.name,
                gpu,
                &req.input,
                req.dtype,
                &plan,
            );
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                out.begin(head, 2, Stage::new("input", req.input.clone()))?;
                if let Some((_, captures)) = run.next_capture().await? {
                    let g = captures.into_iter().next().unwrap_or_default();
                    out.push(Stage::new("after copy", Data::new(req.dtype, g)))?;
                }
                Ok(())
            };
            r.drive(&plan, head, trace, |ex, _| {
                let mismatch = crate::algo::verdict(gpu, || {
                    first_mismatch(req.dtype, &ex.output, &req.input.bits)
                });
                Ok((mismatch, Default::default()))
            })
            .await
        })
    }

    fn bench_case(&self, gpu: &Gpu, v: &VariantInfo, n: usize, _: DType) -> Result<BenchCase> {
        BenchCase::between_buffers(gpu, ["copy src", "copy dst"], padded(n), n, |src, dst| {
            self.plan(gpu, Variant::of(v), src, dst, n)
        })
    }
}
