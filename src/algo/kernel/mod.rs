//! The workbench: the user's own WGSL kernel run stage by stage like a room's — every pass read
//! back (trace), lensed (the lens instruments any kernel from naga's IR), timed beside the copy and
//! the built-in kernel for the same op, and checked against a room's CPU model (`--expect`).
//!
//! The kernel is bad input until proven otherwise: it is compiled with wgpu's bounds checks
//! ([`Gpu::pipeline_checked`]), its passes are bounded ([`options::MAX_PASSES`]), and every
//! failure is a one-line error. The contract is in [`contract`] and docs/CLI.md ("kernel").

pub mod contract;
pub mod exercise;
pub mod expect;
pub mod options;
pub mod overrides;
mod uniform;

use super::prelude::*;
use crate::gpu::grid;
use contract::{Contract, Elem, Role};
pub use options::{Options, help};
use serde_json::json;

variants! {
    room "kernel" (seed "-"): "Your kernel (workbench)",
        "Your WGSL kernel run pass by pass: read back, checked with --expect, lensed and timed.";
    Wgsl = "wgsl": "the kernel of --wgsl FILE, its entry points in order, each --passes times",
}

/// dst starts as this, so elements a kernel never writes show.
const POISON: u32 = 0xDEAD_BEEF;

/// One dispatch of the plan: which entry point, which of its passes, how many workgroups.
struct Step {
    entry: String,
    pass: u32,
    passes: u32,
    workgroup_size: [u32; 3],
    groups: u32,
}

/// The kernel's plan over `a` (input) and `b`; the result ends in the returned buffer.
struct Built {
    plan: Plan,
    steps: Vec<Step>,
    out_is_a: bool,
}

impl Options {
    /// Build the plan: every selected entry point `--passes` times, src and dst swapping between
    /// passes; `capture`: every pass's dst read back.
    #[allow(clippy::too_many_arguments)]
    fn build(
        &self,
        gpu: &Gpu,
        (file, text, c): (&str, &str, &Contract),
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        n: usize,
        capture: bool,
    ) -> Result<Built> {
        self.validate(c)?;
        // ⌈log2 N⌉: `--passes log_n` doubles a span up to N also when N is no power of two.
        let log_n = n.max(1).next_power_of_two().trailing_zeros();
        let k = self.pass_count(log_n)?;
        let words = n * c.elem.words();
        let scratch = match self.scratch {
            Some(w) => Some(gpu.storage_zeroed("kernel scratch", w)?),
            None => None,
        };
        let mut plan = Plan::default();
        let mut steps = Vec::new();
        let (mut cur, mut other) = (a, b);
        let mut out_is_a = true;
        let with = c.resolved.describe();
        for e in c.select(&self.entry)? {
            // A shape past the adapter's limits is refused here, never compiled or dispatched.
            e.fits(&gpu.limits, &with)?;
            // The lens's recording build takes the values as text (overrides::specialize).
            let (text, constants) = match &c.specialized {
                Some(s) if gpu.is_instrumented() => (s.as_str(), &[][..]),
                _ => (text, &c.resolved.constants[..]),
            };
            let p = gpu
                .pipeline_checked_with(&format!("kernel {file}"), text, &e.name, constants)
                .map_err(|err| one_line(file, &e.name, err))?;
            let per_group = e.threads() as u64 * self.items_per_thread as u64;
            let groups = (n as u64).div_ceil(per_group).max(1);
            let max = 32768u64 * gpu.limits.max_compute_workgroups_per_dimension as u64;
            if groups > max {
                return Err(Error::Limit(format!(
                    "entry point '{}': N = {n} needs {groups} workgroups of {per_group} elements, above this adapter's {max}; raise --items-per-thread",
                    e.name
                )));
            }
            let groups = groups as u32;
            for pass in 0..k {
                let u = match (e.uses.contains(&Role::Params), c.binding(Role::Params)) {
                    (true, Some(_)) => Some(
                        gpu.uniform("kernel params", &self.param_values(c, n, log_n, pass, k)?)?,
                    ),
                    _ => None,
                };
                let mut entries: Vec<(u32, &wgpu::Buffer)> = Vec::new();
                for &role in &e.uses {
                    let Some(at) = c.binding(role) else { continue };
                    let buf = match role {
                        Role::Src => cur,
                        Role::Dst => other,
                        Role::Scratch => scratch.as_ref().expect("validated: --scratch given"),
                        Role::Params => u.as_ref().expect("made above"),
                    };
                    entries.push((at, buf));
                }
                let bg = gpu.bind_entries(&p, &entries)?;
                let label = if k == 1 {
                    e.name.clone()
                } else {
                    format!("{} pass {}/{k}", e.name, pass + 1)
                };
                plan.push(label, &p, bg, grid(groups)).capture = if capture {
                    vec![Region::words(other, words)]
                } else {
                    vec![]
                };
                plan.keep.extend(u);
                steps.push(Step {
                    entry: e.name.clone(),
                    pass,
                    passes: k,
                    workgroup_size: e.workgroup_size,
                    groups,
                });
                std::mem::swap(&mut cur, &mut other);
                out_is_a = !out_is_a;
            }
        }
        plan.keep.extend(scratch);
        Ok(Built {
            plan,
            steps,
            out_is_a,
        })
    }
}

/// A compile or bind error of the user's kernel in one line, naming the file and entry point.
fn one_line(file: &str, entry: &str, e: Error) -> Error {
    match e {
        Error::Validation(m) => Error::Input(format!(
            "{file}: entry point '{entry}' does not compile on this device: {}",
            m.split_whitespace().collect::<Vec<_>>().join(" ")
        )),
        e => e,
    }
}

/// The narration of a pass: the user's entry point, its dispatch and what was read back.
fn narrate(s: &Step, n: usize) -> String {
    let [x, y, z] = s.workgroup_size;
    format!(
        "Pass {} of {} of '{}': {} workgroup(s) of @workgroup_size({x}, {y}, {z}) over {n} elements \
         read src and wrote dst; this is dst after it (the next pass reads it as src). Elements \
         still 0xDEADBEEF were never written.",
        s.pass + 1,
        s.passes,
        s.entry,
        s.groups
    )
}

impl Algorithm for Options {
    info_and_example!(INFO);

    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let (file, text, c) = self.contract()?;
            let expect = self.expected()?;
            let elem = c.elem;
            if req.dtype != elem.dtype() {
                return Err(Error::Input(format!(
                    "--dtype {}: the kernel's src and dst hold {} (give --dtype {})",
                    req.dtype,
                    elem.wgsl(),
                    elem.dtype()
                )));
            }
            let words = req.input.len();
            if !words.is_multiple_of(elem.words()) {
                return Err(Error::Input(format!(
                    "the kernel's elements are vec2<f32> (re, im): the input needs an even count of numbers; got {words}"
                )));
            }
            let n = words / elem.words();
            let a = gpu.storage_init("kernel a", &req.input.bits)?;
            let b = gpu.storage_poisoned("kernel b", words, POISON)?;
            let built = self.build(gpu, (&file, &text, &c), &a, &b, n, req.trace)?;
            let mut plan = built.plan;
            let result_buf = if built.out_is_a { &a } else { &b };
            plan.output = Some(Region::words(result_buf, words));
            let head = RunResult::head(
                Algo::Kernel,
                Variant::Wgsl.name(),
                gpu,
                &req.input,
                req.dtype,
                &plan,
            );
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                out.begin(
                    head,
                    built.steps.len() + 1,
                    Stage::new("input", req.input.clone()),
                )?;
                for (i, s) in built.steps.iter().enumerate() {
                    let Some((_, captures)) = run.next_capture().await? else {
                        break;
                    };
                    let g = captures.into_iter().next().unwrap_or_default();
                    let label = &plan.passes[i].label;
                    out.push(
                        Stage::new(format!("after {label}"), Data::new(req.dtype, g))
                            .passes(vec![i])
                            .narration(narrate(s, n)),
                    )?;
                }
                Ok(())
            };
            let check = |ex: &crate::gpu::Execution, _| {
                // The lens's recording run is compared with the normal run (crate::algo::verdict).
                let mut mismatch = match &expect {
                    Some(e) if !gpu.is_instrumented() => e.check(elem, &req.input, &ex.output)?,
                    _ => None,
                };
                if let (Some(m), Some(limit), true) = (&mut mismatch, gpu.loop_limit(), c.loops) {
                    m.push_str(&format!(
                        " (this adapter, llvmpipe, silently ends an invocation's loops once it has run \
                         {limit} loop iterations in all: a kernel that loops longer is wrong here only)"
                    ));
                }
                let steps: Vec<_> = built
                    .steps
                    .iter()
                    .map(|s| {
                        json!({"entry": s.entry, "pass": s.pass, "passes": s.passes,
                           "workgroup_size": s.workgroup_size, "workgroups": s.groups})
                    })
                    .collect();
                let mut extra = json!({
                    "kernel": {
                        "file": file,
                        "element": elem.wgsl(),
                        "elements": n,
                        "expect": self.expect.clone().or(self.expect_file.as_ref().map(|f| format!("file:{f}"))),
                        "dispatches": steps,
                    }
                });
                if !c.overrides.is_empty() {
                    extra["kernel"]["overrides"] = c.resolved.to_json();
                }
                if expect.is_none() {
                    extra["unverified"] =
                        json!("no --expect or --expect-file: the output is not checked");
                }
                Ok((mismatch, extra.as_object().cloned().unwrap_or_default()))
            };
            let mut r = r.drive(&plan, head, trace, check).await?;
            if expect.is_none() {
                r.verified = false;
            }
            Ok(r)
        })
    }

    fn bench_case(&self, gpu: &Gpu, _: &VariantInfo, n: usize, dtype: DType) -> Result<BenchCase> {
        let (file, text, c) = self.contract()?;
        if dtype != c.elem.dtype() {
            return Err(Error::Input(format!(
                "--dtype {dtype}: the kernel's src and dst hold {} (give --dtype {})",
                c.elem.wgsl(),
                c.elem.dtype()
            )));
        }
        let w = c.elem.words();
        let a = gpu.storage_zeroed("kernel a", n * w)?;
        let b = gpu.storage_zeroed("kernel b", n * w)?;
        let mut plan = self.build(gpu, (&file, &text, &c), &a, &b, n, false)?.plan;
        plan.keep.extend([a, b]);
        Ok(BenchCase {
            plan,
            bytes: 8 * (n * w) as u64,
            items: n as u64,
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (16, 22)
    }
}

/// The element type a kernel's src and dst hold, for the app's dtype picker.
pub fn element_of(opts: &Options) -> Result<Elem> {
    let (name, text) = opts.kernel_text()?;
    Ok(Contract::declared(&name, &text)?.elem)
}
