//! A large FFT's run (src/algo/fft/large.rs): the passes, every FFT of the batch checked against
//! rustfft, and with `--trace` the array after every pass, checked against the f64 model.

use super::large::{self, LargeConfig};
use super::large_plan::{self, StageInfo};
use super::trace::{PassKind, PassNotes};
use super::*;

impl Options {
    /// The large plan's passes for `cfg` on `gpu`.
    pub fn large_config(&self, cfg: &Config, limits: &wgpu::Limits) -> Result<LargeConfig> {
        let (fft_n, unpack) = match cfg.mode {
            Mode::Complex => (cfg.n, None),
            Mode::Real => (cfg.n / 2, Some(Mode::Real)),
            Mode::Pair => (cfg.n, Some(Mode::Pair)),
        };
        let natural = cfg.natural || unpack.is_some();
        large::configure(self, fft_n, cfg.batch, natural, cfg.inverse, unpack, limits)
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

pub(super) fn run(
    o: &Options,
    gpu: &Gpu,
    req: &RunRequest,
    cfg: &Config,
    floats: &[f32],
    input: Data,
) -> Result<RunResult> {
    let lc = o.large_config(cfg, &gpu.limits)?;
    let b = cfg.batch;
    gpu.check_elements(2 * lc.fft_n * b, "fft")?;
    let src = gpu.storage_init("fft input", &input.bits)?;
    let out_words = 2 * cfg.out_complex() * b;
    let dst = gpu.storage_poisoned("fft output", out_words, POISON)?;
    let (mut plan, infos) =
        large_plan::plan_large(gpu, &lc, b, &src, &dst, cfg.natural, req.trace)?;
    plan.output = Some(Region::words(&dst, out_words));
    plan.keep.push(src);
    let ex = execute(gpu, &plan, req.trace)?;
    let out_bits = ex.output;

    let tol = model::tolerance(cfg.n);
    let per_in = cfg.in_floats();
    let gpu_c = complexes(&out_bits);
    let (max_err, mut mismatch) = run::check_batch(&gpu_c, cfg.out_complex(), b, tol, |k| {
        reference_large(cfg, &lc, &floats[k * per_in..(k + 1) * per_in])
    });

    let (n1, n2) = lc.split;
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
            complex,
        })
    };
    let mut stages = Vec::new();
    if req.trace {
        stages.push(Stage::with(
            "input",
            input.clone(),
            notes(None, cfg.mode != Mode::Real),
        ));
        // The complex FFT's input (batch element 0), for the columns pass's model.
        let x0 = complexes(&input.bits[..2 * lc.fft_n]);
        for (i, words) in ex.captures.iter().enumerate() {
            let Some(words) = words.first() else { continue };
            let info = infos.get(i).copied();
            if let Some(inf) = info.filter(|i| i.kind == PassKind::Columns)
                && mismatch.is_none()
            {
                let want = large_plan::columns_model(&x0, lc.split, cfg.inverse, inf.transposed);
                let got = complexes(&words[..2 * lc.fft_n]);
                let err = model::rel_error(&got, &want);
                if err.is_nan() || err > tol {
                    mismatch = Some(format!(
                        "trace: the columns pass differs from the model by {err:.3e} (tolerance {tol:.1e})"
                    ));
                }
            }
            let label = plan
                .passes
                .get(i)
                .map_or(String::new(), |p| p.label.clone());
            stages.push(Stage::with(
                label,
                Data::new(DType::F32, words.clone()),
                notes(info, true),
            ));
        }
    }

    let output_json = trace::output_json(cfg, &out_bits);
    let mut extra = common_extra(cfg, max_err, tol);
    extra.insert("kernel".into(), json!("large"));
    extra.insert("split".into(), json!([n1, n2]));
    extra.insert("plan".into(), lc.plan_json(cfg.natural));
    extra.insert(
        "workgroup_bytes".into(),
        json!(lc.passes.iter().map(|p| p.shared_bytes()).max()),
    );
    let result = run::fft_result(
        req,
        gpu,
        cfg.n,
        input,
        (out_bits, output_json),
        &plan,
        &ex.pass_ms,
    );
    Ok(result.checked(mismatch, stages, extra))
}

/// The bench case of a large size: `n` values (complex, or real with --real) as FFTs of
/// `cfg.n`, forward. The floor counts every pass over memory: one read and one write of the
/// complex FFT's 8-byte values each.
pub(super) fn bench_case(o: &Options, gpu: &Gpu, cfg: &Config, n: usize) -> Result<BenchCase> {
    let lc = o.large_config(cfg, &gpu.limits)?;
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

/// The JSON fields every FFT run prints, whichever kernel ran.
pub(super) fn common_extra(cfg: &Config, max_err: f64, tol: f64) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert("size".into(), json!(cfg.n));
    extra.insert("batch".into(), json!(cfg.batch));
    extra.insert(
        "order".into(),
        json!(if cfg.natural { "natural" } else { "raw" }),
    );
    extra.insert("inverse".into(), json!(cfg.inverse));
    extra.insert("mode".into(), json!(mode_name(cfg.mode)));
    extra.insert("max_rel_error".into(), json!(max_err));
    extra.insert("tolerance".into(), json!(tol));
    extra.insert("scaling".into(), json!(scaling(cfg.inverse)));
    extra
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Complex => "complex",
        Mode::Real => "real",
        Mode::Pair => "real-pair",
    }
}

fn scaling(inverse: bool) -> &'static str {
    if inverse {
        "unnormalised inverse: x[n] = Σ X[k]·e^{+2πikn/N}; inverse(forward(x)) = N·x"
    } else {
        "forward: X[k] = Σ x[n]·e^{−2πikn/N} (no scaling)"
    }
}
