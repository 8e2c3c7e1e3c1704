//! `impl Algorithm`: plan, run, check the output against the model (the stages are checked as
//! they arrive, in traced.rs), the run's facts and counters.

use super::traced::tile_depth;
use super::*;
use facts::{Facts, Form, Tile};

/// Parallel steps of an untraced run (a traced run counts them stage by stage).
fn untraced_steps(variant: Variant, n: usize) -> usize {
    let lg = |mut p: usize, up: bool| {
        let mut c = 0;
        if up {
            while p < n {
                c += 1;
                p <<= 1;
            }
        } else {
            while p >= 1 {
                c += 1;
                p /= 2;
            }
        }
        c
    };
    match variant {
        Variant::Ladder | Variant::HillisSteele => lg(1, true),
        Variant::Folded => lg(model::pow2_ceil(n) / 2, false),
        Variant::Blelloch => 2 * model::pow2_ceil(n).trailing_zeros() as usize + 1,
        Variant::ReduceThenScan => 3,
        Variant::Sequential => n,
        _ => 1,
    }
}

impl Options {
    /// The run's top-level JSON facts known before the GPU runs: the form, the tile shape.
    fn plan_facts(&self, gpu: &Gpu, variant: Variant, built: &Built) -> Map<String, Value> {
        let suffix = variant == Variant::Folded && !self.mirror;
        let decoupled = variant == Variant::Decoupled;
        Facts {
            exclusive: self.exclusive,
            form: if suffix { Form::Suffix } else { Form::Prefix },
            tile: built.tile.map(|s| Tile {
                tile_elements: s.elements(),
                workgroup_size: s.wg,
                per_thread_vec4: s.per,
                tiles: built.tiles,
                tile_scan: decoupled.then(|| {
                    if s.subgroups {
                        "subgroup"
                    } else {
                        "workgroup-memory"
                    }
                    .into()
                }),
                tile_order: decoupled.then(|| {
                    if self.dispatch_order(gpu) && s.subgroups {
                        "dispatch"
                    } else {
                        "counter"
                    }
                    .into()
                }),
            }),
        }
        .to_map()
    }
}

impl Algorithm for Options {
    info_and_example!(INFO, EXAMPLE);

    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let variant = Variant::of(req.variant);
            let dtype = req.dtype;
            if self.mirror && variant != Variant::Folded {
                return Err(crate::input_err!(
                    "--mirror applies to --variant folded only (it turns folded's suffix sums into prefix sums)"
                ));
            }
            self.check_tile_options(variant)?;
            let x = &req.input.bits;
            let n = x.len();
            let suffix = variant == Variant::Folded && !self.mirror;
            let built = self.build(gpu, variant, dtype, &Init::Data(x), req.trace)?;
            let mut head = RunResult::head(
                Algo::Scan,
                variant.name(),
                gpu,
                &req.input,
                dtype,
                &built.plan,
            );
            head.extra = self.plan_facts(gpu, variant, &built);
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                self.trace(req, &built, head, run, out).await
            };
            let check = |ex: &crate::gpu::Execution, traced: Option<super::traced::Traced>| {
                // The whole-result check.
                let log_n = model::pow2_ceil(n).trailing_zeros() as usize;
                let tile_depth = tile_depth(&built);
                let depth = |i: usize| -> usize {
                    let d = match variant {
                        Variant::Sequential => i + 1,
                        Variant::Ladder | Variant::Folded | Variant::HillisSteele => log_n + 1,
                        Variant::Blelloch => 2 * log_n + 2,
                        _ => tile_depth,
                    };
                    d.min(if suffix { n - i } else { i + 1 })
                };
                let mut extra = Map::new();
                let mismatch = if gpu.is_instrumented() {
                    // The lens compares the recording run with the normal run (crate::algo::verdict).
                    None
                } else if dtype == DType::F32 {
                    let (exact, abs) = model::exact_f64(x, self.exclusive, suffix);
                    let c = check_f32(&ex.output, &exact, &abs, &depth);
                    extra.insert("max_abs_error".into(), json!(c.max_abs_error));
                    extra.insert("max_rel_error".into(), json!(c.max_rel_error));
                    extra.insert(
                "f32_tolerance".into(),
                json!("|gpu_i - exact_i| <= 1.01 (d_i + 2) 2^-24 sum_j |x_j| + (d_i + 2) 2^-126, exact = f64 sum, d_i = summation-tree height"),
            );
                    c.mismatch
                } else {
                    let want = if suffix {
                        model::suffix(dtype, x, self.exclusive)
                    } else {
                        model::sequential(dtype, x, self.exclusive)
                    };
                    first_mismatch(dtype, &ex.output, &want)
                };
                let (steps, mismatch) = match traced {
                    Some(t) => {
                        extra.extend(t.extra);
                        extra.insert("work".into(), json!(t.work));
                        (t.steps, mismatch.or(t.mismatch))
                    }
                    None => (untraced_steps(variant, n), mismatch),
                };
                extra.insert("steps".into(), json!(steps));
                extra.insert("n_log2_n".into(), json!(n * log_n));
                Ok((mismatch, extra))
            };
            r.drive(&built.plan, head, trace, check).await
        })
    }

    fn bench_case(&self, gpu: &Gpu, v: &VariantInfo, n: usize, dtype: DType) -> Result<BenchCase> {
        if Variant::of(v) == Variant::Sequential && n > SEQUENTIAL_BENCH_MAX {
            return Err(Error::Limit(format!(
                "scan sequential (one GPU thread) is benchmarked up to N = 2^24; got N = {n}"
            )));
        }
        let opts = Options {
            mirror: self.mirror && Variant::of(v) == Variant::Folded,
            ..self.clone()
        };
        let built = opts.build(gpu, Variant::of(v), dtype, &Init::Zeroed(n), false)?;
        if built.plan.passes.is_empty() {
            return Err(crate::input_err!(
                "scan {}: N = {n} needs no pass; nothing to time",
                v.name
            ));
        }
        let mut plan = built.plan;
        plan.output = None;
        Ok(BenchCase::read_write_once(plan, n))
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (16, 24)
    }
}
