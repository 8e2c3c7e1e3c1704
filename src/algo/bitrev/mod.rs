//! Bit-reversal permutation (seed 000): `naive` (one kernel, Demo A's loop per element) and
//! `staged` (Demo B: per stage kernel1 splits every block into evens and odds, kernel2 copies back).

pub mod model;
pub mod trace;

use super::prelude::*;
use crate::gpu::grid;
use serde::{Deserialize, Serialize};
use serde_json::json;

variants! {
    room "bitrev" (seed "000"): "Bit-reversal permutation",
        "Element i moves to the index whose bits are i's bits reversed; N is a power of two.";
    Naive = "naive": "one kernel: each thread computes its target by Demo A's loop and writes \
        there",
    Staged = "staged": "Demo B: log2(N) stages of kernel1 (split blocks into evens | odds) + \
        kernel2 (copy back)",
    // --- bmmc room: one-pass tiled BPC kernel (coalesced reads and writes) ---
    Tiled = "tiled": "one pass of the bmmc room's tiled BPC kernel: coalesced reads and writes \
        through workgroup memory",
}

/// The seed's 16-value example and its result.
pub const EXAMPLE: [i64; 16] = [41, 67, 34, 0, 69, 24, 78, 58, 62, 64, 5, 45, 81, 27, 61, 91];
pub const EXAMPLE_RESULT: [i64; 16] =
    [41, 62, 69, 81, 34, 5, 78, 61, 67, 64, 24, 27, 0, 45, 58, 91];

const SHADER: &str = include_str!("../../../shaders/bitrev/bitrev.wgsl");
const POISON: u32 = 0xDEAD_BEEF;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {}

fn params(gpu: &Gpu, n: usize, log_n: u32, k: usize) -> Result<wgpu::Buffer> {
    gpu.uniform("bitrev params", &[n as u32, log_n, k as u32])
}

/// The GPU plan. `a` holds the input; the result ends in the returned region. Staged stages are
/// captured (after kernel2) when `capture` is set.
fn plan(
    gpu: &Gpu,
    variant: Variant,
    a: &wgpu::Buffer,
    b: &wgpu::Buffer,
    n: usize,
    capture: bool,
) -> Result<(Plan, Region)> {
    let log_n = n.trailing_zeros(); // a power of two (check_len)
    let groups = grid((n as u32).div_ceil(256));
    // --- bmmc room: the tiled variant is the bit-reversal matrix on the tiled BPC kernel ---
    if variant == Variant::Tiled {
        let perm: Vec<usize> = (0..log_n as usize)
            .map(|j| log_n as usize - 1 - j)
            .collect();
        let m = crate::algo::bmmc::matrix::BitMatrix::from_bit_perm(&perm);
        return crate::algo::bmmc::tiled_bpc_plan(gpu, &m, a, b, capture);
    }
    let mut plan = Plan::default();
    if variant == Variant::Naive {
        let p = gpu.pipeline("bitrev naive", SHADER, "naive")?;
        let u = params(gpu, n, log_n, 0)?;
        let bg = gpu.bind(&p, &[a, b, &u])?;
        plan.push("naive: out[rev(i)] = in[i]", &p, bg, groups)
            .capture = if capture {
            vec![Region::words(b, n)]
        } else {
            vec![]
        };
        plan.keep.push(u);
        return Ok((plan, Region::words(b, n)));
    }
    let split = gpu.pipeline("bitrev stage_split", SHADER, "stage_split")?;
    let copy = gpu.pipeline("bitrev copy_back", SHADER, "copy_back")?;
    for s in 1..=log_n {
        let k = n >> s;
        let u = params(gpu, n, log_n, k)?;
        let bg1 = gpu.bind(&split, &[a, b, &u])?;
        let bg2 = gpu.bind(&copy, &[b, a, &u])?;
        plan.push(
            format!("stage {s}: kernel1 (split blocks of {})", 2 * k),
            &split,
            bg1,
            groups,
        );
        plan.push(
            format!("stage {s}: kernel2 (copy back)"),
            &copy,
            bg2,
            groups,
        )
        .capture = if capture {
            vec![Region::words(a, n)]
        } else {
            vec![]
        };
        plan.keep.push(u);
    }
    Ok((plan, Region::words(a, n)))
}

/// Stage `s` of a trace (`data`: the array the GPU read back after it), labelled and narrated.
fn traced_stage(variant: Variant, n: usize, log_n: u32, s: usize, data: Data) -> Stage {
    let (label, block) = if variant != Variant::Staged {
        (format!("after {variant} kernel"), 1)
    } else {
        (format!("stage {s}"), n >> s)
    };
    let (passes, narration) = if variant == Variant::Naive {
        (
            vec![0],
            format!(
                "One pass: each of the {n} threads computes its index reversed over {log_n} bits with Demo A's loop \
             and writes its element there. Reads are coalesced; neighbouring threads write far apart."
            ),
        )
    } else {
        (
            vec![2 * s - 2, 2 * s - 1],
            format!(
                "Stage {s}: kernel1 splits each of the {} block(s) of {} into its even positions (left half) and \
             odd positions (right half), into the second buffer; kernel2 copies it back as the next stage's \
             input. Now {} blocks of {block}.{}",
                n / (2 * block),
                2 * block,
                n / block,
                if s + 1 == log_n as usize {
                    " Every element is already in its final place: the last stage changes nothing."
                } else {
                    ""
                }
            ),
        )
    };
    Stage::with(label, data, trace::Notes::room(s, block, n / block))
        .passes(passes)
        .narration(narration)
}

impl Algorithm for Options {
    info_and_example!(INFO, EXAMPLE);

    fn check_len(&self, n: usize) -> Result<()> {
        require_pow2("bitrev", n).map(|_| ())
    }

    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let (input, variant, dtype) = (&req.input, Variant::of(req.variant), req.dtype);
            let n = input.len();
            let log_n = n.trailing_zeros();
            let a = gpu.storage_init("bitrev a", &input.bits)?;
            let b = gpu.storage_poisoned("bitrev b", n, POISON)?;
            let (mut plan, output) = plan(gpu, variant, &a, &b, n, req.trace)?;
            plan.output = Some(output);
            let head = RunResult::head(Algo::Bitrev, variant.name(), gpu, input, dtype, &plan);
            let count = if variant == Variant::Staged {
                log_n as usize
            } else {
                1
            };
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                let input_stage = Stage::with(
                    "stage 0 (input)",
                    input.clone(),
                    trace::Notes::room(0, n, 1),
                );
                out.begin(head, count + 1, input_stage)?;
                // The CPU model steps along the GPU's stages (one stage for naive and tiled).
                let (mut cpu, mut mismatch) = (input.bits.clone(), None);
                for s in 1..=count {
                    let Some((_, captures)) = run.next_capture().await? else {
                        break;
                    };
                    let g = captures.into_iter().next().unwrap_or_default();
                    cpu = match variant {
                        Variant::Staged => model::stage(&cpu, n >> s),
                        _ => model::naive(&input.bits),
                    };
                    if mismatch.is_none()
                        && let Some(m) = first_mismatch(dtype, &g, &cpu)
                    {
                        mismatch = Some(format!("stage {s}: {m}"));
                    }
                    out.push(traced_stage(variant, n, log_n, s, Data::new(dtype, g)))?;
                }
                Ok(mismatch)
            };
            r.drive(&plan, head, trace, |ex, stage_mismatch| {
                let mismatch = crate::algo::verdict(gpu, || {
                    first_mismatch(dtype, &ex.output, &model::naive(&input.bits))
                });
                let extra = json!({"log_n": log_n}).as_object().cloned();
                Ok((
                    mismatch.or(stage_mismatch.flatten()),
                    extra.unwrap_or_default(),
                ))
            })
            .await
        })
    }

    fn bench_case(&self, gpu: &Gpu, v: &VariantInfo, n: usize, _: DType) -> Result<BenchCase> {
        // The floor is one read and one write of every element, whatever the variant does.
        BenchCase::between_buffers(gpu, ["bitrev a", "bitrev b"], n, n, |a, b| {
            Ok(plan(gpu, Variant::of(v), a, b, n, false)?.0)
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (20, 28)
    }
}
