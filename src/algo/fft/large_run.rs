//! A large FFT's run (src/algo/fft/large.rs): the passes, every FFT of the batch checked against
//! rustfft, and with `--trace` the array after every pass, checked against the f64 model.

use super::facts::Facts;
use super::large::{self, LargeConfig};
use super::large_chain;
use super::large_plan::{self, StageInfo};
use super::trace::{PassKind, PassNotes};
use super::*;
use crate::algo::Stages;
use crate::gpu::start;

impl Options {
    /// The large plan's passes for `cfg` on `gpu`. Where the adapter does not chain
    /// ([`large_chain::refused_on`]) the default is two passes and `--chain` is refused.
    pub fn large_config(&self, cfg: &Config, gpu: &Gpu) -> Result<LargeConfig> {
        let (fft_n, unpack) = match cfg.mode {
            Mode::Complex => (cfg.n, None),
            Mode::Real => (cfg.n / 2, Some(Mode::Real)),
            Mode::Pair => (cfg.n, Some(Mode::Pair)),
        };
        let natural = cfg.natural || unpack.is_some();
        let mut o = self.clone();
        if let Some(why) = large_chain::refused_on(gpu) {
            if o.chain.is_some_and(|l| l > 0) {
                return Err(Error::Limit(format!("fft: --chain {why}")));
            }
            o.chain = Some(0);
        }
        let limits = &gpu.limits;
        large::configure(&o, fft_n, cfg.batch, natural, cfg.inverse, unpack, limits)
    }
}

/// The reference of one FFT in the large plan's output layout.
fn reference_large(cfg: &Config, lc: &LargeConfig, floats: &[f32]) -> Vec<C64> {
    let nat = Config {
        natural: true,
        ..*cfg
    };
    let want = reference(&nat, floats);
    if cfg.mode == Mode::Complex && !cfg.natural {
        large_plan::to_rows(&want, lc.raw_split())
    } else {
        want
    }
}

pub(super) async fn run(
    o: &Options,
    gpu: &Gpu,
    req: &RunRequest,
    (cfg, floats, input): (&Config, &[f32], Data),
    out: &mut Stages<'_>,
) -> Result<RunResult> {
    let lc = o.large_config(cfg, gpu)?;
    let b = cfg.batch;
    gpu.check_elements(2 * lc.fft_n * b, "fft")?;
    let src = gpu.storage_init("fft input", &input.bits)?;
    let out_words = 2 * cfg.out_complex() * b;
    let dst = gpu.storage_poisoned("fft output", out_words, POISON)?;
    let (mut plan, infos) =
        large_plan::plan_large(gpu, &lc, b, &src, &dst, cfg.natural, req.trace)?;
    plan.output = Some(Region::words(&dst, out_words));
    plan.keep.push(src);

    let (n1, n2) = lc.split;
    let mut facts = facts(cfg, Kernel::Large);
    facts.split = Some([n1, n2]);
    facts.plan = Some(lc.plan_entries(cfg.natural));
    let mut extra = facts.to_map();
    extra.insert(
        "workgroup_bytes".into(),
        json!(lc.passes.iter().map(|p| p.shared_bytes()).max()),
    );
    let mut head = run::fft_result(
        req,
        gpu,
        cfg.n,
        input.clone(),
        (Vec::new(), None),
        &plan,
        &None,
    );
    head.extra = extra;

    let notes = |info: Option<StageInfo>, complex: bool| {
        let p = info.and_then(|i| i.phase).and_then(|i| lc.passes.get(i));
        RoomNotes::FftPass(PassNotes {
            pass: info.map(|_| p.map_or(lc.dispatches(), |p| p.dispatch)),
            kind: info.map_or(PassKind::Input, |i| i.kind),
            n1,
            n2,
            sub_size: p.map_or(0, |p| p.m),
            count: p.map_or(0, |p| lc.fft_n / p.m),
            twiddled: p.is_some_and(|p| p.twiddle.is_some()),
            transposed: info.is_some_and(|i| i.transposed),
            units: lc
                .column_unit()
                .filter(|_| p.is_some_and(|p| p.dispatch == 0)),
            complex,
        })
    };
    let tol = model::tolerance(cfg.n);
    let mut run = start(gpu, &plan, req.trace)?;
    // Traced: every pass's array handed on as soon as it is read back (the columns pass checked
    // against its f64 model first).
    let mut trace_mismatch = None;
    if req.trace {
        let captured = plan.passes.iter().filter(|p| !p.capture.is_empty()).count();
        out.head(&head, captured + 1)?;
        out.push(Stage::with(
            "input",
            input.clone(),
            notes(None, cfg.mode != Mode::Real),
        ))?;
        // The complex FFT's input (batch element 0), for the columns pass's model.
        let x0 = complexes(&input.bits[..2 * lc.fft_n]);
        while let Some((i, caps)) = run.next_capture().await? {
            let Some(words) = caps.into_iter().next() else {
                continue;
            };
            let info = infos.get(i).copied();
            let in_columns_pass = info
                .and_then(|i| i.phase)
                .is_some_and(|ph| lc.passes.get(ph).is_some_and(|p| p.dispatch == 0));
            let words = if in_columns_pass {
                lc.columns_in_grid_order(words)
            } else {
                words
            };
            if let Some(inf) = info.filter(|i| i.kind == PassKind::Columns)
                && trace_mismatch.is_none()
            {
                let want = large_plan::columns_model(&x0, lc.split, cfg.inverse, inf.transposed);
                let got = complexes(&words[..2 * lc.fft_n]);
                let err = model::rel_error(&got, &want);
                if err.is_nan() || err > tol {
                    trace_mismatch = Some(format!(
                        "trace: the columns pass differs from the model by {err:.3e} (tolerance {tol:.1e})"
                    ));
                }
            }
            let label = plan
                .passes
                .get(i)
                .map_or(String::new(), |p| p.label.clone());
            out.push(Stage::with(
                label,
                Data::new(DType::F32, words),
                notes(info, true),
            ))?;
        }
    }
    let ex = run.finish().await?;
    let out_bits = ex.output;
    let per_in = cfg.in_floats();
    let gpu_c = complexes(&out_bits);
    let (max_err, mismatch) = run::check_batch(gpu, &gpu_c, cfg.out_complex(), b, tol, |k| {
        reference_large(cfg, &lc, &floats[k * per_in..(k + 1) * per_in])
    });
    let output_json = trace::output_json(*cfg);
    let mut result = run::fft_result(
        req,
        gpu,
        cfg.n,
        input,
        (out_bits, output_json),
        &plan,
        &ex.pass_ms,
    );
    result.extra = head.extra;
    Ok(result.checked(
        mismatch.or(trace_mismatch),
        out.take(),
        errors(max_err, tol),
    ))
}

/// The bench case of a large size: `n` values (complex, or real with --real) as FFTs of
/// `cfg.n`, forward. The floor counts every pass over memory: one read and one write of the
/// complex FFT's 8-byte values each.
pub(super) fn bench_case(o: &Options, gpu: &Gpu, cfg: &Config, n: usize) -> Result<BenchCase> {
    let lc = o.large_config(cfg, gpu)?;
    let words = 2 * lc.fft_n * cfg.batch;
    gpu.check_elements(words, "fft")?;
    let src = gpu.storage_zeroed("fft input", words)?;
    let dst = gpu.storage_zeroed("fft output", 2 * cfg.out_complex() * cfg.batch)?;
    let (mut plan, _) =
        large_plan::plan_large(gpu, &lc, cfg.batch, &src, &dst, cfg.natural, false)?;
    plan.keep.extend([src, dst]);
    let passes = plan.passes.len() as u64;
    Ok(BenchCase {
        plan,
        bytes: 8 * words as u64 * passes,
        items: n as u64,
    })
}

/// The facts every FFT run prints, whichever kernel ran (the kernel's own fields unset).
pub(super) fn facts(cfg: &Config, kernel: Kernel) -> Facts {
    Facts {
        size: cfg.n,
        batch: cfg.batch,
        order: if cfg.natural {
            Order::Natural
        } else {
            Order::Raw
        },
        inverse: cfg.inverse,
        mode: cfg.mode,
        scaling: scaling(cfg.inverse).into(),
        kernel,
        elements_per_invocation: None,
        split: None,
        plan: None,
        nyquist: None,
    }
}

/// The check's figures: the largest relative error over the batch and the tolerance.
pub(super) fn errors(max_err: f64, tol: f64) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert("max_rel_error".into(), json!(max_err));
    extra.insert("tolerance".into(), json!(tol));
    extra
}

fn scaling(inverse: bool) -> &'static str {
    if inverse {
        "unnormalised inverse: x[n] = Σ X[k]·e^{+2πikn/N}; inverse(forward(x)) = N·x"
    } else {
        "forward: X[k] = Σ x[n]·e^{−2πikn/N} (no scaling)"
    }
}
