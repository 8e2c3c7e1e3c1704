//! `impl Algorithm`: the reference output, the run, the trace read back step by step and checked.

use super::*;

/// The reference output of one FFT (batch element) in the kernel's output layout.
pub fn reference(cfg: &Config, input_floats: &[f32]) -> Vec<C64> {
    let n = cfg.n;
    let x: Vec<C64> = if cfg.mode == Mode::Real {
        input_floats
            .iter()
            .map(|&r| C64::new(r as f64, 0.0))
            .collect()
    } else {
        input_floats
            .chunks_exact(2)
            .map(|c| C64::new(c[0] as f64, c[1] as f64))
            .collect()
    };
    match cfg.mode {
        Mode::Complex => {
            let d = model::dft(&x, cfg.inverse);
            if cfg.natural {
                d
            } else {
                model::to_raw(&d, cfg.e)
            }
        }
        Mode::Real => {
            let d = model::dft(&x, cfg.inverse);
            if cfg.natural {
                model::real_natural(&d)
            } else {
                model::real_raw(&d, cfg.e)
            }
        }
        Mode::Pair => {
            let (mut dx, mut dy) = model::pair_spectra(&x);
            if cfg.inverse {
                // The inverse of a real signal is the conjugate-reversed forward transform.
                let (ix, iy): (Vec<C64>, Vec<C64>) = {
                    let xs: Vec<C64> = x.iter().map(|z| C64::new(z.re, 0.0)).collect();
                    let ys: Vec<C64> = x.iter().map(|z| C64::new(z.im, 0.0)).collect();
                    (model::dft(&xs, true), model::dft(&ys, true))
                };
                dx = ix;
                dy = iy;
            }
            if cfg.natural {
                let l = n / 2 + 1;
                dx.truncate(l);
                dy.truncate(l);
            } else {
                dx = model::to_raw(&dx, cfg.e);
                dy = model::to_raw(&dy, cfg.e);
            }
            dx.extend(dy);
            dx
        }
    }
}

/// Every FFT of a batch (`per_out` values each in `gpu_c`) against `reference(k)`: the largest
/// relative error, and the first FFT above `tol` with its worst element.
pub(super) fn check_batch(
    gpu: &Gpu,
    gpu_c: &[C64],
    per_out: usize,
    batch: usize,
    tol: f64,
    reference: impl Fn(usize) -> Vec<C64>,
) -> (f64, Option<String>) {
    let mut max_err: f64 = 0.0;
    let mut mismatch = None;
    // The lens's recording run is compared with the normal run instead (crate::algo::verdict).
    let batch = if gpu.is_instrumented() { 0 } else { batch };
    for k in 0..batch {
        let want = reference(k);
        let got = &gpu_c[k * per_out..(k + 1) * per_out];
        let err = model::rel_error(got, &want);
        max_err = max_err.max(err);
        if (err.is_nan() || err > tol) && mismatch.is_none() {
            let bad = got
                .iter()
                .zip(&want)
                .enumerate()
                .max_by(|a, b2| (a.1.0 - a.1.1).norm().total_cmp(&(b2.1.0 - b2.1.1).norm()))
                .map(|(i, (g, w))| format!("worst at index {i}: GPU {g} vs reference {w}"))
                .unwrap_or_default();
            mismatch = Some(format!(
                "FFT {k} of the batch: relative error {err:.3e} above the tolerance {tol:.1e}; {bad}"
            ));
        }
    }
    (max_err, mismatch)
}

/// An FFT run's result: f32 output bits and their JSON ([re, im] pairs or spectra), the passes.
pub(super) fn fft_result(
    req: &RunRequest,
    gpu: &Gpu,
    n: usize,
    input: Data,
    (out_bits, output_json): (Vec<u32>, Option<crate::algo::OutputJson>),
    plan: &Plan,
    pass_ms: &Option<Vec<f64>>,
) -> RunResult {
    let mut result = RunResult::new(
        crate::algo::Algo::Fft,
        req.variant.name,
        n,
        gpu,
        input,
        Data::new(DType::F32, out_bits),
        pass_infos(gpu, plan, pass_ms),
    );
    result.output_json = output_json;
    result
}

impl Algorithm for Options {
    fn info(&self) -> &'static AlgoInfo {
        &INFO
    }

    /// The generated signal (--signal) of --size points (× --batch).
    fn example(&self, _dtype: DType) -> Option<Data> {
        let n = self.size.unwrap_or(DEFAULT_SIZE);
        Some(self.signal_data(n))
    }

    fn fixed_dtype(&self) -> Option<DType> {
        Some(DType::F32)
    }

    fn default_len(&self) -> Option<usize> {
        let n = self.size.unwrap_or(DEFAULT_SIZE);
        Some(n * self.points_per_float() * self.batch.max(1))
    }

    /// Checks the parameters only: the input length is checked against them in `run` (and in
    /// `bench`, `n` counts complex values, not input numbers).
    fn check_len(&self, _len: usize) -> Result<()> {
        self.config(None, None, false).map(|_| ())
    }

    /// A workgroup kernel is one dispatch: its trace steps are handed on together once it is
    /// back; a large plan hands on each pass as it is read back.
    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let Run { gpu, req, out, .. } = r;
            // Input numbers as f32 whatever their dtype (u32/i32 values converted numerically).
            let floats: Vec<f32> = (0..req.input.len())
                .map(|i| req.input.as_f64(i) as f32)
                .collect();
            let input = Data::from_f32(&floats);
            let cfg = self.config(Some(floats.len()), Some(&gpu.limits), req.trace)?;
            if cfg.large {
                return large_run::run(self, gpu, req, (&cfg, &floats, input), out).await;
            }
            let (n, b) = (cfg.n, cfg.batch);
            let src = gpu.storage_init("fft input", &input.bits)?;
            let out_words = 2 * cfg.out_complex() * b;
            let dst = gpu.storage_poisoned("fft output", out_words, POISON)?;
            let fast_cfg = self.fast_config(&cfg, gpu, req.trace)?;
            let (mut plan, tbuf) = plan(gpu, &cfg, fast_cfg.as_ref(), &src, &dst, req.trace)?;
            plan.output = Some(Region::words(&dst, out_words));
            plan.keep.push(src);
            drop(tbuf);
            let kernel = match fast_cfg {
                Some(f) if f.radix => Kernel::Radix,
                Some(_) => Kernel::Fast,
                None => Kernel::Teaching,
            };
            let mut facts = large_run::facts(&cfg, kernel);
            facts.elements_per_invocation = Some(cfg.e);
            let mut extra = facts.to_map();
            extra.insert("workgroup_size".into(), json!(cfg.w));
            extra.insert(
                "workgroup_bytes".into(),
                json!(match &fast_cfg {
                    Some(f) => f.shared_bytes(),
                    None => cfg.shared_bytes(req.trace),
                }),
            );
            extra.insert(
                "ffts_per_workgroup".into(),
                json!(fast_cfg.map_or(1, |f| f.g)),
            );
            extra.insert("sequential_ffts".into(), json!(fast_cfg.map_or(1, |f| f.s)));
            extra.insert(
                "natural_store".into(),
                json!(match fast_cfg {
                    Some(f) if f.radix => None,
                    Some(f) if f.natural && f.staged => Some("staged"),
                    Some(f) if f.natural => Some("direct"),
                    _ => None,
                }),
            );
            extra.insert(
                "shuffle_below".into(),
                json!(fast_cfg.map_or(0, |f| f.shuffle_below)),
            );
            let steps = model::schedule(n, cfg.e);
            if req.trace {
                let mut head =
                    fft_result(req, gpu, n, input.clone(), (Vec::new(), None), &plan, &None);
                head.extra = extra.clone();
                out.head(&head, steps.len())?;
            }
            let ex = execute(gpu, &plan, req.trace).await?;
            let out_bits = ex.output;

            // Check every FFT of the batch against rustfft (f64), in the kernel's output layout.
            let tol = model::tolerance(n);
            let per_in = cfg.in_floats();
            let gpu_c = complexes(&out_bits);
            let (max_err, mut mismatch) =
                check_batch(gpu, &gpu_c, cfg.out_complex(), b, tol, |k| {
                    reference(&cfg, &floats[k * per_in..(k + 1) * per_in])
                });

            // Trace: one stage per step, values by logical position, owner + lo written by the GPU.
            if req.trace {
                let words = ex
                    .captures
                    .iter()
                    .flat_map(|c| c.first())
                    .next()
                    .cloned()
                    .unwrap_or_default();
                let x0: Vec<C64> = if cfg.mode == Mode::Real {
                    floats[..n]
                        .iter()
                        .map(|&r| C64::new(r as f64, 0.0))
                        .collect()
                } else {
                    complexes(&input.bits[..2 * n])
                };
                let values = model::stage_values(&x0, cfg.e, cfg.inverse);
                for (s, step) in steps.iter().enumerate() {
                    let rec = words.get(s * n * 4..(s + 1) * n * 4).unwrap_or(&[]);
                    let mut data = Vec::with_capacity(2 * n);
                    let mut owner = Vec::with_capacity(n);
                    let mut lo = Vec::with_capacity(n);
                    for p in 0..n {
                        let r = rec.get(p * 4..p * 4 + 4).unwrap_or(&[
                            POISON,
                            POISON,
                            u32::MAX,
                            u32::MAX,
                        ]);
                        data.extend([r[0], r[1]]);
                        owner.push(r[2]);
                        lo.push(r[3] == 1);
                    }
                    if mismatch.is_none() {
                        if owner != step.owner || rec.chunks_exact(4).any(|r| r[3] > 1) {
                            let p = (0..n).find(|&p| owner[p] != step.owner[p]).unwrap_or(0);
                            mismatch = Some(format!(
                                "trace step {s} ({}): position {p} held by thread {} on the GPU, {} in the model",
                                step.kind.name(),
                                owner[p] as i64,
                                step.owner[p]
                            ));
                        } else if lo != step.lo {
                            let p = (0..n).find(|&p| lo[p] != step.lo[p]).unwrap_or(0);
                            mismatch = Some(format!(
                                "trace step {s} ({}): position {p} is {} on the GPU, {} in the model",
                                step.kind.name(),
                                if lo[p] { "lo" } else { "hi" },
                                if step.lo[p] { "lo" } else { "hi" }
                            ));
                        } else {
                            let err = model::rel_error(&complexes(&data), &values[s]);
                            if err.is_nan() || err > tol {
                                mismatch = Some(format!(
                                    "trace step {s} ({}): values differ from the model by {err:.3e} (tolerance {tol:.1e})",
                                    step.kind.name()
                                ));
                            }
                        }
                    }
                    let label = match step.kind {
                        StepKind::Input => "input".to_string(),
                        StepKind::Butterfly => format!("butterfly, stride {}", step.stride),
                        StepKind::Regroup => format!("regroup (local), stride {}", step.stride),
                        StepKind::Exchange => format!("exchange t^{}", step.stride),
                    };
                    let last = s + 1 == steps.len();
                    // Row p (logical position) holds DFT[bitrev(p)] and is written to e(p).
                    let notes = trace::Notes {
                        step: s,
                        kind: step.kind,
                        stride: step.stride,
                        owner: owner.clone(),
                        lo: lo.clone(),
                        complex: true,
                        xor: (step.kind == StepKind::Exchange).then_some(step.stride),
                        dft_index: last
                            .then(|| (0..n).map(|p| model::bitrev(p, cfg.log_n)).collect()),
                        written_to: last.then(|| {
                            (0..n)
                                .map(|p| model::e_map(p, cfg.log_n, cfg.log_e))
                                .collect()
                        }),
                    };
                    let st = Stage::with(
                        label,
                        Data::new(DType::F32, data.clone()),
                        RoomNotes::Fft(notes),
                    );
                    out.push(st)?;
                }
            }

            let output_json = trace::output_json(cfg);
            let holds: Vec<usize> = (0..n)
                .map(|x| model::f_map(x, cfg.log_n, cfg.log_e))
                .collect();
            let nyq_value = match (cfg.mode, cfg.natural) {
                (Mode::Complex, false) => Some(cfg.w),
                (Mode::Complex, true) => Some(n / 2),
                _ => None,
            }
            .map(|i| trace::complex_json(&out_bits[2 * i..2 * i + 2])[0].clone());
            let real = cfg.mode == Mode::Real;
            facts.nyquist = Some(Nyquist {
                frequency: n / 2,
                thread: 0,
                element: 1,
                raw_position: cfg.w,
                rule: "F(W) = bitreverse(e⁻¹(W)) = bitreverse(1) = N/2: thread 0's second element"
                    .into(),
                value: if real {
                    Some(json!([f32_to_json(f32::from_bits(out_bits[1])), 0.0]))
                } else {
                    nyq_value
                },
                packed_into: real.then(|| "output[0] = DC + i*Nyquist (both real)".into()),
            });
            extra.extend(facts.to_map());
            extra.extend(large_run::errors(max_err, tol));
            extra.insert("holds".into(), json!(holds));
            Ok(fft_result(
                req,
                gpu,
                n,
                input,
                (out_bits, output_json),
                &plan,
                &ex.pass_ms,
            )
            .checked(mismatch, out.take(), extra))
        })
    }

    /// An FFT bench counts values (complex points, or real ones with --real), and its size is the
    /// run's (the run infers it from the input where --size is not given).
    fn bench_case_for(&self, gpu: &Gpu, req: &RunRequest) -> Result<BenchCase> {
        let len = req.input.len();
        let mut o = self.clone();
        o.size = Some(self.size_for(Some(len))?);
        o.bench_case(gpu, req.variant, len / self.points_per_float(), req.dtype)
    }

    /// `n` is the total number of complex values (real values with --real); --size (default 1024)
    /// is the FFT size, so the batch is n / size. Forward, --order as given; the floor is one read
    /// and one write of every value: 16·n bytes (8·n real), times the passes of a large plan.
    fn bench_case(
        &self,
        gpu: &Gpu,
        _variant: &VariantInfo,
        n: usize,
        _dtype: DType,
    ) -> Result<BenchCase> {
        let size = self.size.unwrap_or(1024);
        if n < size || !n.is_multiple_of(size) {
            return Err(Error::Input(format!(
                "fft bench: {n} values is not a whole number of FFTs of --size {size}"
            )));
        }
        if self.real_pair {
            return Err(Error::input(
                "fft bench: --real-pair is not timed (complex FFTs, or --real)",
            ));
        }
        let mut o = self.clone();
        o.size = Some(size);
        o.batch = n / size;
        // f32 numbers per value: 2 complex, 1 real.
        let per = o.points_per_float();
        let floats = per * n;
        let cfg = o.config(Some(floats), Some(&gpu.limits), false)?;
        if cfg.large {
            return large_run::bench_case(&o, gpu, &cfg, n);
        }
        let src = gpu.storage_zeroed("fft input", floats)?;
        let dst = gpu.storage_zeroed("fft output", 2 * cfg.out_complex() * cfg.batch)?;
        let fast_cfg = o.fast_config(&cfg, gpu, false)?;
        let (mut plan, _) = plan(gpu, &cfg, fast_cfg.as_ref(), &src, &dst, false)?;
        plan.keep.extend([src, dst]);
        Ok(BenchCase {
            plan,
            bytes: 8 * (per * n) as u64,
            items: n as u64,
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (16, 22)
    }
}
