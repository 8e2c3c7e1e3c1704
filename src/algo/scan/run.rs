//! `impl Algorithm`: plan, run, read every stage back, check it and annotate it.

use super::*;

pub(super) fn phase_stage(
    dtype: DType,
    ph: &Phase,
    data: Vec<u32>,
    n: usize,
    step: usize,
    work: usize,
    what: &str,
) -> Stage {
    let mut notes = trace::Notes {
        phase: Some(ph.p),
        step,
        active: Some(ph.reads.len()),
        sleeping_count: Some(n - ph.reads.len()),
        adds: Some(ph.reads.len()),
        work,
        ..Default::default()
    };
    if n <= MAX_PAIRS_N {
        let mut active = vec![false; n];
        for &(t, _) in &ph.reads {
            active[t] = true;
        }
        notes.sleeping = Some((0..n).filter(|&t| !active[t]).collect());
        notes.reads = Some(ph.reads.clone());
    }
    Stage::with(
        format!("{what} p={}", ph.p),
        Data::new(dtype, data),
        RoomNotes::Scan(notes),
    )
}

/// A stage of the tiled variants: which array it shows, the elements per tile, the counters.
pub(super) fn tile_notes(
    array: &'static str,
    tile: Option<usize>,
    step: usize,
    work: usize,
) -> trace::Notes {
    trace::Notes {
        array: Some(array),
        tile,
        step,
        work,
        ..Default::default()
    }
}

impl Algorithm for Options {
    info_and_example!(INFO, EXAMPLE);

    fn run(&self, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
        let variant = req.variant.name;
        let dtype = req.dtype;
        if self.mirror && variant != "folded" {
            return Err(crate::input_err!(
                "--mirror applies to --variant folded only (it turns folded's suffix sums into prefix sums)"
            ));
        }
        self.check_tile_options(variant)?;
        let x = &req.input.bits;
        let n = x.len();
        let suffix = variant == "folded" && !self.mirror;
        let built = self.build(gpu, variant, dtype, &Init::Data(x), req.trace)?;
        let ex = execute(gpu, &built.plan, req.trace)?;

        // The whole-result check.
        let log_n = model::pow2_ceil(n).trailing_zeros() as usize;
        let tile_depth = built.tile.map_or(0, |s| {
            8 * s.per as usize + 2 * s.wg.trailing_zeros() as usize + built.tiles + 4
        });
        let depth = |i: usize| -> usize {
            let d = match variant {
                "sequential" => i + 1,
                "ladder" | "folded" | "hillis-steele" => log_n + 1,
                "blelloch" => 2 * log_n + 2,
                _ => tile_depth,
            };
            d.min(if suffix { n - i } else { i + 1 })
        };
        let mut extra = Map::new();
        extra.insert("exclusive".into(), json!(self.exclusive));
        extra.insert(
            "form".into(),
            json!(if suffix { "suffix sums" } else { "prefix sums" }),
        );
        let mut mismatch = if dtype == DType::F32 {
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
        if let Some(s) = built.tile {
            extra.insert("tile_elements".into(), json!(s.elements()));
            extra.insert("workgroup_size".into(), json!(s.wg));
            extra.insert("per_thread_vec4".into(), json!(s.per));
            if variant == "decoupled" {
                extra.insert(
                    "tile_scan".into(),
                    json!(if s.subgroups {
                        "subgroup"
                    } else {
                        "workgroup-memory"
                    }),
                );
            }
            extra.insert("tiles".into(), json!(built.tiles));
            if variant == "decoupled" {
                extra.insert(
                    "tile_order".into(),
                    json!(if self.dispatch_order(gpu) && s.subgroups {
                        "dispatch"
                    } else {
                        "counter"
                    }),
                );
            }
        }

        // The trace: the model's stages with the GPU's arrays.
        let mut stages = Vec::new();
        let mut work = 0usize;
        let mut steps = 0usize;
        let scale: f64 = x.iter().map(|&b| bits_abs(dtype, b)).sum();
        let caps: Vec<&Vec<Vec<u32>>> = ex.captures.iter().filter(|c| !c.is_empty()).collect();
        let check = |label: &str, g: &[u32], c: &[u32], mismatch: &mut Option<String>| {
            if mismatch.is_none()
                && let Some(m) = stage_mismatch(dtype, g, c, scale, 2 * log_n + tile_depth + 2)
            {
                *mismatch = Some(format!("{label}: {m}"));
            }
        };
        if req.trace {
            stages.push(Stage::with(
                "input",
                req.input.clone(),
                RoomNotes::Scan(trace::Notes {
                    phase: Some(0),
                    ..Default::default()
                }),
            ));
            let mut ci = 0usize;
            let mut next = || {
                let c = caps.get(ci).map(|c| (*c).clone()).unwrap_or_default();
                ci += 1;
                c
            };
            match variant {
                "ladder" | "folded" | "hillis-steele" => {
                    let phases = match variant {
                        "ladder" => model::ladder(dtype, x),
                        "folded" => model::folded(dtype, x, self.mirror),
                        _ => model::hillis_steele(dtype, x),
                    };
                    let mut last = x.to_vec();
                    for ph in &phases {
                        let g = next().into_iter().next().unwrap_or_default();
                        steps += 1;
                        work += ph.reads.len();
                        let label = format!("phase p={}", ph.p);
                        check(&label, &g, &ph.data, &mut mismatch);
                        let what = if variant == "ladder" {
                            "ladder"
                        } else {
                            "phase"
                        };
                        let mut st = phase_stage(dtype, ph, g, n, steps, work, what);
                        st.label = label;
                        if variant == "folded"
                            && let RoomNotes::Scan(notes) = &mut st.notes.room
                        {
                            notes.form = Some(if self.mirror {
                                "mirrored: prefix sums"
                            } else {
                                "suffix sums"
                            });
                        }
                        stages.push(st);
                        last = ph.data.clone();
                    }
                    if self.exclusive {
                        let want = model::shift(&last, suffix);
                        let g = next().into_iter().next().unwrap_or_default();
                        check("exclusive shift", &g, &want, &mut mismatch);
                        steps += 1;
                        let mut notes = trace::Notes {
                            phase: Some(0),
                            step: steps,
                            direction: Some("shift"),
                            work,
                            ..Default::default()
                        };
                        if n <= MAX_PAIRS_N {
                            let reads: Vec<(usize, usize)> = (0..n)
                                .filter_map(|i| {
                                    if suffix {
                                        (i + 1 < n).then_some((i, i + 1))
                                    } else {
                                        i.checked_sub(1).map(|s| (i, s))
                                    }
                                })
                                .collect();
                            notes.reads = Some(reads);
                        }
                        stages.push(Stage::with(
                            "exclusive: shift by one",
                            Data::new(dtype, g),
                            RoomNotes::Scan(notes),
                        ));
                    }
                }
                "blelloch" => {
                    let big = model::pow2_ceil(n);
                    for ts in model::blelloch(dtype, x, !self.exclusive) {
                        let g = next().into_iter().next().unwrap_or_default();
                        let label = match ts.direction {
                            "up" => format!("up-sweep level {}", ts.level),
                            "down" => format!("down-sweep level {}", ts.level),
                            "clear" => "clear the root".to_string(),
                            _ => "inclusive: add the input".to_string(),
                        };
                        check(&label, &g, &ts.data, &mut mismatch);
                        steps += 1;
                        let adds = match ts.direction {
                            "up" | "down" => ts.nodes.len(),
                            "add-input" => n,
                            _ => 0,
                        };
                        work += adds;
                        let keep = big <= MAX_PAIRS_N;
                        let notes = trace::Notes {
                            direction: Some(ts.direction),
                            level: Some(ts.level),
                            half: Some(ts.half),
                            step: steps,
                            adds: Some(adds),
                            work,
                            active: Some(ts.nodes.len()),
                            padded_to: Some(big),
                            n: Some(n),
                            reads: keep.then(|| ts.reads.clone()),
                            nodes: keep.then(|| ts.nodes.clone()),
                            ..Default::default()
                        };
                        stages.push(Stage::with(
                            label,
                            Data::new(dtype, g),
                            RoomNotes::Scan(notes),
                        ));
                    }
                    extra.insert("padded_to".into(), json!(big));
                }
                "sequential" => {
                    let want = model::sequential(dtype, x, self.exclusive);
                    let g = next().into_iter().next().unwrap_or_default();
                    check("sequential", &g, &want, &mut mismatch);
                    steps = n;
                    work = n.saturating_sub(1);
                    let notes = trace::Notes {
                        step: 1,
                        active: Some(1),
                        threads: Some(1),
                        adds: Some(work),
                        work,
                        // The single thread writes element i reading element i-1's running sum.
                        reads: (n <= MAX_PAIRS_N).then(|| (1..n).map(|i| (i, i - 1)).collect()),
                        ..Default::default()
                    };
                    stages.push(Stage::with(
                        "one thread, i = 1 … n-1",
                        Data::new(dtype, g),
                        RoomNotes::Scan(notes),
                    ));
                }
                "reduce-then-scan" => {
                    let te = built.tile.map_or(1, |s| s.elements());
                    let (sums, pre) = model::tile_sums(dtype, x, te);
                    let want = model::sequential(dtype, x, self.exclusive);
                    let g1 = next().into_iter().next().unwrap_or_default();
                    check("reduce", &g1, &sums, &mut mismatch);
                    let g2 = next().into_iter().next().unwrap_or_default();
                    check("spine", &g2, &pre, &mut mismatch);
                    let g3 = next().into_iter().next().unwrap_or_default();
                    check("scan", &g3, &want, &mut mismatch);
                    work = 2 * n + built.tiles;
                    stages.push(Stage::with(
                        "reduce: one sum per tile",
                        Data::new(dtype, g1),
                        RoomNotes::Scan(tile_notes("tile sums", Some(te), 1, n)),
                    ));
                    stages.push(Stage::with(
                        "spine: exclusive tile prefixes",
                        Data::new(dtype, g2),
                        RoomNotes::Scan(tile_notes("tile prefixes", Some(te), 2, n + built.tiles)),
                    ));
                    stages.push(Stage::with(
                        "scan: every tile from its prefix",
                        Data::new(dtype, g3),
                        RoomNotes::Scan(tile_notes("output", Some(te), 3, work)),
                    ));
                    steps = 3;
                }
                "decoupled" => {
                    let te = built.tile.map_or(1, |s| s.elements());
                    let c = next();
                    let (status, info, out) = (
                        c.first().cloned().unwrap_or_default(),
                        c.get(1).cloned().unwrap_or_default(),
                        c.get(2).cloned().unwrap_or_default(),
                    );
                    let incl = model::sequential(dtype, x, false);
                    let tiles = built.tiles;
                    let want_status: Vec<u32> = (0..tiles)
                        .map(|k| incl[((k + 1) * te).min(n) - 1])
                        .collect();
                    let mut got = Vec::with_capacity(tiles);
                    let mut flags = Vec::with_capacity(tiles);
                    let sg = built.tile.is_some_and(|t| t.subgroups);
                    // The look-back pass is the plan's last (after "clear tile status" where the
                    // kernel has one).
                    let lb_pass = built.plan.passes.len() - 1;
                    // Subgroup kernel: the ticket count is back at 0 after an odd run, whose
                    // statuses are in the second half.
                    let half = if sg && status.first() == Some(&0) {
                        2 * tiles
                    } else {
                        0
                    };
                    for k in 0..tiles {
                        let lo = status.get(1 + half + 2 * k).copied().unwrap_or(0);
                        let hi = status.get(2 + half + 2 * k).copied().unwrap_or(0);
                        got.push((lo & 0xffff) | (hi << 16));
                        flags.push(if lo >> 16 == hi >> 16 { lo >> 16 } else { 99 });
                    }
                    if mismatch.is_none()
                        && let Some(k) = flags.iter().position(|&f| f != 2)
                    {
                        mismatch = Some(format!(
                            "tile status: tile {k} ended with flag {} instead of INCLUSIVE (2)",
                            flags[k]
                        ));
                    }
                    // Every workgroup takes one ticket (the tile id in counter order); the grid
                    // may launch a few spare groups. The subgroup kernel's count is back at 0
                    // after an odd run.
                    if !(sg && half > 0)
                        && status.first().copied() != Some(tiles as u32)
                        && mismatch.is_none()
                    {
                        let ctr = status.first().copied().unwrap_or(0) as usize;
                        if ctr < tiles {
                            mismatch = Some(format!(
                                "tile counter ended at {ctr}, fewer than the {tiles} tiles"
                            ));
                        }
                    }
                    check("tile status", &got, &want_status, &mut mismatch);
                    let want = model::sequential(dtype, x, self.exclusive);
                    check("output", &out, &want, &mut mismatch);
                    let falls: u64 = (0..tiles)
                        .map(|k| info.get(2 * k + 1).copied().unwrap_or(0) as u64)
                        .sum();
                    let look: u64 = (0..tiles)
                        .map(|k| info.get(2 * k).copied().unwrap_or(0) as u64)
                        .sum();
                    extra.insert("fallbacks".into(), json!(falls));
                    extra.insert("lookback_steps".into(), json!(look));
                    work = 2 * n + tiles;
                    steps = 1;
                    let notes = trace::Notes {
                        fallbacks: Some(falls),
                        lookback_steps: Some(look),
                        lookback: (tiles <= MAX_PAIRS_N).then(|| {
                            (0..tiles)
                                .map(|k| {
                                    [
                                        k as u64,
                                        info.get(2 * k).copied().unwrap_or(0) as u64,
                                        info.get(2 * k + 1).copied().unwrap_or(0) as u64,
                                    ]
                                })
                                .collect()
                        }),
                        ..tile_notes("tile inclusive prefixes", Some(te), 1, work)
                    };
                    // Both stages come from the look-back pass.
                    let st = Stage::with(
                        "tile status: inclusive prefix of every tile",
                        Data::new(dtype, got),
                        RoomNotes::Scan(notes),
                    )
                    .passes(vec![lb_pass]);
                    stages.push(st);
                    stages.push(
                        Stage::with(
                            "output",
                            Data::new(dtype, out),
                            RoomNotes::Scan(tile_notes("output", None, 1, work)),
                        )
                        .passes(vec![lb_pass]),
                    );
                }
                _ => {}
            }
        } else {
            // Counters without the trace.
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
            steps = match variant {
                "ladder" | "hillis-steele" => lg(1, true),
                "folded" => lg(model::pow2_ceil(n) / 2, false),
                "blelloch" => 2 * log_n + 1,
                "reduce-then-scan" => 3,
                "sequential" => n,
                _ => 1,
            };
        }
        extra.insert("steps".into(), json!(steps));
        if req.trace {
            extra.insert("work".into(), json!(work));
        }
        extra.insert("n_log2_n".into(), json!(n * log_n));
        let result = RunResult::new(
            "scan",
            variant,
            n,
            gpu,
            req.input.clone(),
            Data::new(dtype, ex.output.clone()),
            pass_infos(&built.plan, &ex.pass_ms),
        );
        Ok(result.checked(mismatch, stages, extra))
    }

    fn bench_case(&self, gpu: &Gpu, v: &Variant, n: usize, dtype: DType) -> Result<BenchCase> {
        if v.name == "sequential" && n > SEQUENTIAL_BENCH_MAX {
            return Err(Error::Limit(format!(
                "scan sequential (one GPU thread) is benchmarked up to N = 2^24; got N = {n}"
            )));
        }
        let opts = Options {
            mirror: self.mirror && v.name == "folded",
            ..self.clone()
        };
        let built = opts.build(gpu, v.name, dtype, &Init::Zeroed(n), false)?;
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
