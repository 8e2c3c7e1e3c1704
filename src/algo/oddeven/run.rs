//! `impl Algorithm`: plan, run, read the trace back and check every stage against the CPU model;
//! the plan summaries the app and the CLI print.

use super::*;

/// The GPU's swap flags for the pairs of `rule` on `n` elements: (flag >> 1) must be the stage id,
/// bit 0 the swap.
pub(super) fn gpu_pairs(
    rule: model::Rule,
    n: usize,
    flags: &[u32],
    stage_id: usize,
    base: usize,
) -> std::result::Result<trace::Pairs, String> {
    let mut swapped = Vec::with_capacity(rule.count(n));
    for (i, j) in rule.pairs(n) {
        let f = flags.get(base + i).copied().unwrap_or(POISON);
        if f >> 1 != stage_id as u32 {
            return Err(format!(
                "no GPU flag for pair ({i}, {j}) of stage {stage_id} (found {f:#x})"
            ));
        }
        swapped.push(f & 1 == 1);
    }
    Ok(trace::Pairs::new(rule, n, swapped))
}

/// One traced network stage checked against the model: `v` is the model's array before the stage
/// (stepped here), `row` the GPU's array after it, `flags` its swap flags (at `base`, tagged
/// `stage_id`). Returns the stage's pairs and the first difference, if any.
fn check_network_stage(
    (dtype, desc): (DType, bool),
    rule: model::Rule,
    v: &mut [u32],
    row: &[u32],
    (flags, stage_id, base): (&[u32], usize, usize),
    what: &str,
) -> (trace::Pairs, Option<String>) {
    let n = v.len();
    let want = trace::Pairs::new(rule, n, rule.apply(dtype, desc, v));
    let mut mismatch = first_mismatch(dtype, row, v).map(|m| format!("{what}: {m}"));
    let pairs = match gpu_pairs(rule, n, flags, stage_id, base) {
        Ok(p) => p,
        Err(e) => {
            mismatch.get_or_insert(e);
            want.clone()
        }
    };
    if pairs != want {
        mismatch.get_or_insert(format!("{what}: swap flags differ"));
    }
    (pairs, mismatch)
}

impl Algorithm for Options {
    info_and_example!(INFO, EXAMPLE);

    fn check_len(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Err(Error::input("input is empty"));
        }
        if let Some(l) = self.segment
            && l > 0
            && !n.is_multiple_of(l)
        {
            return Err(Error::Input(format!(
                "--segment {l}: N = {n} is not a multiple of the segment length (N mod L = {})",
                n % l
            )));
        }
        Ok(())
    }

    fn run(&self, gpu: &Gpu, req: &RunRequest) -> Result<RunResult> {
        let input = &req.input;
        let variant = req.variant.name;
        let s = self.shape(variant, req.dtype, input.len())?;
        let caps = self.caps(gpu, variant)?;
        let (dtype, desc, n) = (s.dtype, s.desc, s.n);
        let want = model::sort_segments(dtype, desc, &input.bits, s.seg);
        let mut stages = vec![Stage::with(
            "input",
            input.clone(),
            RoomNotes::Oddeven(trace::Notes {
                pairs: Some(trace::Pairs::default()),
                ..Default::default()
            }),
        )];
        let mut extra = Map::new();
        extra.insert("descending".into(), json!(desc));
        extra.insert("segment".into(), json!(self.segment));
        let mut mismatch = None;
        let note_mismatch = |m: Option<String>, mm: &mut Option<String>| {
            if mm.is_none() {
                *mm = m;
            }
        };
        let output;
        let passes;
        // CPU model stages (for the trace check and first_sorted_phase), when affordable.
        let model_ok = |cost: usize| req.trace || cost <= 1 << 27;
        match variant {
            "transposition" | "global" => {
                let data = gpu.storage_init("oddeven data", &input.bits)?;
                let (plan, ex) = if variant == "transposition" {
                    let mut t = plan_transposition(gpu, &caps, &s, &data, req.trace)?;
                    t.plan.output = Some(t.out.clone());
                    t.plan
                        .keep
                        .extend(t.trace.map(|(a, b)| vec![a, b]).unwrap_or_default());
                    let ex = execute(gpu, &t.plan, req.trace)?;
                    (t.plan, ex)
                } else {
                    let flags = gpu.storage_poisoned("oddeven flags", n, POISON)?;
                    let mut plan = plan_global(gpu, &s, &data, &flags, req.trace)?;
                    plan.output = Some(Region::words(&data, n));
                    plan.keep.push(flags);
                    let ex = execute(gpu, &plan, req.trace)?;
                    (plan, ex)
                };
                let rules = model::transposition_rules(s.seg);
                let mut ex = ex;
                if req.trace {
                    let mut v = input.bits.clone();
                    let mut sorted_at =
                        model::is_sorted(dtype, desc, &input.bits, s.seg).then_some(0);
                    for (ph, &rule) in rules.iter().enumerate() {
                        let (row, flags, base) = if variant == "transposition" {
                            let c = &ex.captures[0];
                            (c[0][ph * n..(ph + 1) * n].to_vec(), &c[1], ph * n)
                        } else {
                            let c = &mut ex.captures[ph];
                            (std::mem::take(&mut c[0]), &c[1], 0)
                        };
                        let (pairs, mm) = check_network_stage(
                            (dtype, desc),
                            rule,
                            &mut v,
                            &row,
                            (flags, ph, base),
                            &format!("phase {}", ph + 1),
                        );
                        note_mismatch(mm, &mut mismatch);
                        if sorted_at.is_none() && model::is_sorted(dtype, desc, &row, s.seg) {
                            sorted_at = Some(ph + 1);
                        }
                        let parity = if ph % 2 == 0 { "even" } else { "odd" };
                        stages.push(trace::network_stage(
                            format!("phase {} ({parity})", ph + 1),
                            dtype,
                            row,
                            pairs,
                            trace::Notes {
                                stage: ph + 1,
                                parity: Some(parity),
                                segment: Some(s.seg),
                                ..Default::default()
                            },
                        ));
                    }
                    extra.insert("first_sorted_phase".into(), json!(sorted_at));
                } else if model_ok(s.seg * n) {
                    extra.insert(
                        "first_sorted_phase".into(),
                        json!(model::first_sorted_network(
                            dtype,
                            desc,
                            &input.bits,
                            &rules,
                            s.seg
                        )),
                    );
                }
                let work: u64 = (0..s.seg)
                    .map(|ph| model::phase_pairs(ph, s.seg).count() as u64)
                    .sum::<u64>()
                    * s.nseg() as u64;
                extra.insert("phases".into(), json!(s.seg));
                extra.insert("compare_exchanges".into(), json!(work));
                extra.insert(
                    "wg_size".into(),
                    json!(caps.wg_max.min(s.seg.div_ceil(2) as u32).max(1)),
                );
                output = ex.output;
                passes = pass_infos(&plan, &ex.pass_ms);
            }
            "batcher" | "merge-split" => {
                let runner = TileRunner {
                    gpu,
                    caps,
                    dtype,
                    desc,
                    trace: req.trace,
                    kernel: self.kernel,
                    keys: self.keys(gpu)?,
                    tiles_per_wg: self.tiles_per_workgroup()?,
                };
                let (net, tps, block) = if variant == "batcher" {
                    if req.trace && n > 1 << 16 {
                        return Err(Error::Limit(format!(
                            "a batcher trace reads back every stage; trace N ≤ 65536 (got {n})"
                        )));
                    }
                    let (net, tps) = batcher_passes(&caps, &s, !req.trace)?;
                    (net, tps, 0)
                } else {
                    let block = self.block_size(&caps, n)?;
                    (Net::whole(n), merge_split_passes(&s, block), block)
                };
                let a = gpu.storage_init("oddeven a", &input.bits)?;
                let b = gpu.storage_poisoned("oddeven b", n, POISON)?;
                let flags =
                    gpu.storage_poisoned("oddeven flags", if req.trace { n } else { 1 }, POISON)?;
                let (mut plan, out) = plan_tiles(&runner, net, &tps, &a, &b, &flags)?;
                plan.output = Some(out);
                let mut ex = execute(gpu, &plan, req.trace)?;
                if variant == "batcher" {
                    let stage_list = model::batcher_stages(s.seg.next_power_of_two());
                    let rules = model::batcher_rules(s.seg);
                    if req.trace {
                        // The model steps along the GPU's stages: one array, not one per stage.
                        let mut v = input.bits.clone();
                        let mut sorted_at =
                            model::is_sorted(dtype, desc, &input.bits, s.seg).then_some(0);
                        for (i, (&rule, &(p, k))) in rules.iter().zip(&stage_list).enumerate() {
                            let cap = &mut ex.captures[i];
                            let row = std::mem::take(&mut cap[0]);
                            let flags = std::mem::take(&mut cap[1]);
                            let (pairs, mm) = check_network_stage(
                                (dtype, desc),
                                rule,
                                &mut v,
                                &row,
                                (&flags, i + 1, 0),
                                &format!("stage {} (p = {p}, k = {k})", i + 1),
                            );
                            note_mismatch(mm, &mut mismatch);
                            if sorted_at.is_none() && model::is_sorted(dtype, desc, &row, s.seg) {
                                sorted_at = Some(i + 1);
                            }
                            stages.push(trace::network_stage(
                                format!("p = {p}, k = {k}"),
                                dtype,
                                row,
                                pairs,
                                trace::Notes {
                                    stage: i + 1,
                                    p: Some(p),
                                    k: Some(k),
                                    merge_block: Some(2 * p),
                                    segment: Some(s.seg),
                                    ..Default::default()
                                },
                            ));
                        }
                        extra.insert("first_sorted_phase".into(), json!(sorted_at));
                    } else if model_ok(n * stage_list.len()) {
                        extra.insert(
                            "first_sorted_phase".into(),
                            json!(model::first_sorted_network(
                                dtype,
                                desc,
                                &input.bits,
                                &rules,
                                s.seg
                            )),
                        );
                    }
                    extra.insert("phases".into(), json!(stage_list.len()));
                    extra.insert(
                        "compare_exchanges".into(),
                        json!(model::batcher_work(n, s.seg)),
                    );
                    extra.insert("tile".into(), json!(caps.tile));
                } else {
                    let m = n.div_ceil(block);
                    let model_stages = if model_ok(n * (m + 1)) {
                        Some(model::merge_split(dtype, desc, &input.bits, block))
                    } else {
                        None
                    };
                    let blocks: Vec<(usize, usize)> = (0..m)
                        .map(|i| (i * block, ((i + 1) * block).min(n)))
                        .collect();
                    let mut rows = Vec::new();
                    if req.trace {
                        let cpu = model_stages.as_ref().expect("traced runs build the model");
                        let mut prev = input.bits.clone();
                        for (i, c) in cpu.iter().enumerate() {
                            let cap = &ex.captures[i];
                            note_mismatch(
                                first_mismatch(dtype, &cap[0], &c.data)
                                    .map(|mm| format!("stage {}: {mm}", i + 1)),
                                &mut mismatch,
                            );
                            // Block pairs with "moved" read off the GPU's arrays.
                            let pairs: Vec<model::Pair> = c
                                .pairs
                                .iter()
                                .map(|&(x, y, _)| {
                                    let lo = x as usize * block;
                                    let hi = ((y as usize + 1) * block).min(n);
                                    (x, y, prev[lo..hi] != cap[0][lo..hi])
                                })
                                .collect();
                            let label = if i == 0 {
                                format!("sort {m} blocks of {block}")
                            } else {
                                format!(
                                    "phase {i} ({})",
                                    if (i - 1) % 2 == 0 { "even" } else { "odd" }
                                )
                            };
                            let notes = trace::Notes {
                                stage: i + 1,
                                block: Some(block),
                                blocks: Some(blocks.clone()),
                                block_pairs: Some(pairs),
                                pairs: (i == 0).then(trace::Pairs::default),
                                ..Default::default()
                            };
                            stages.push(Stage::with(
                                label,
                                Data::new(dtype, cap[0].clone()),
                                RoomNotes::Oddeven(notes),
                            ));
                            prev = cap[0].clone();
                            rows.push(cap[0].clone());
                        }
                    } else if let Some(mst) = &model_stages {
                        rows = mst.iter().map(|p| p.data.clone()).collect();
                    }
                    if model_stages.is_some() {
                        extra.insert(
                            "first_sorted_phase".into(),
                            json!(model::first_sorted(dtype, desc, &input.bits, &rows, n)),
                        );
                    }
                    let bp = block.next_power_of_two();
                    let per_block = model::batcher_work(bp, bp);
                    let merge = model::batcher_stages(2 * bp)
                        .iter()
                        .filter(|(p, _)| *p == bp)
                        .map(|&(p, k)| model::stage_comparators(p, k, 2 * bp).count() as u64)
                        .sum::<u64>();
                    extra.insert("block".into(), json!(block));
                    extra.insert("blocks".into(), json!(m));
                    extra.insert("phases".into(), json!(m + 1));
                    let merges: u64 = (0..m).map(|ph| ((m - ph % 2) / 2) as u64).sum();
                    extra.insert(
                        "compare_exchanges".into(),
                        json!(per_block * m as u64 + merge * merges),
                    );
                }
                output = ex.output;
                passes = pass_infos(&plan, &ex.pass_ms);
            }
            other => return Err(Error::Input(format!("unknown variant {other}"))),
        }
        extra.insert("seed_steps".into(), json!(s.seg));
        extra.insert(
            "seed_work".into(),
            json!((s.seg as u64 * (s.seg as u64).saturating_sub(1) / 2) * s.nseg() as u64),
        );
        if mismatch.is_none() {
            mismatch = first_mismatch(dtype, &output, &want);
        }
        if !req.trace {
            stages.clear();
        }
        let result = RunResult::new(
            "oddeven",
            variant,
            n,
            gpu,
            input.clone(),
            Data::new(dtype, output),
            passes,
        );
        Ok(result.checked(mismatch, stages, extra))
    }

    fn bench_case(
        &self,
        gpu: &Gpu,
        variant: &Variant,
        n: usize,
        dtype: DType,
    ) -> Result<BenchCase> {
        let s = self.shape(variant.name, dtype, n)?;
        let caps = self.caps(gpu, variant.name)?;
        let plan = match variant.name {
            "transposition" => {
                let data = gpu.storage_zeroed("oddeven data", n)?;
                let mut t = plan_transposition(gpu, &caps, &s, &data, false)?;
                t.plan.keep.push(data);
                t.plan
                    .keep
                    .extend(t.trace.map(|(a, b)| vec![a, b]).unwrap_or_default());
                t.plan
            }
            "global" => {
                if n > 1 << 16 {
                    return Err(Error::Limit(format!(
                        "bench global runs N dispatches per repetition; bench it at N ≤ 65536 (got {n})"
                    )));
                }
                let data = gpu.storage_zeroed("oddeven data", n)?;
                let flags = gpu.storage_zeroed("oddeven flags", 1)?;
                let mut plan = plan_global(gpu, &s, &data, &flags, false)?;
                plan.keep.extend([data, flags]);
                plan
            }
            _ => {
                let runner = TileRunner {
                    gpu,
                    caps,
                    dtype,
                    desc: s.desc,
                    trace: false,
                    kernel: self.kernel,
                    keys: self.keys(gpu)?,
                    tiles_per_wg: self.tiles_per_workgroup()?,
                };
                let (net, tps) = if variant.name == "batcher" {
                    batcher_passes(&caps, &s, true)?
                } else {
                    let block = self.block_size(&caps, n)?;
                    (Net::whole(n), merge_split_passes(&s, block))
                };
                let a = gpu.storage_zeroed("oddeven a", n)?;
                let b = gpu.storage_zeroed("oddeven b", n)?;
                let flags = gpu.storage_zeroed("oddeven flags", 1)?;
                let (mut plan, _) = plan_tiles(&runner, net, &tps, &a, &b, &flags)?;
                plan.keep.extend([a, b, flags]);
                plan
            }
        };
        // The floor: read every key once and write it once.
        Ok(BenchCase::read_write_once(plan, n))
    }

    /// Small by default so that every variant takes every size (transposition holds N in one
    /// workgroup, global is N dispatches); time batcher with --log-n 24..28.
    fn bench_log_n(&self) -> (u32, u32) {
        (10, 13)
    }
}

/// The tile passes of a run (labels), for docs and tests.
pub fn plan_summary(gpu: &Gpu, opts: &Options, variant: &str, n: usize) -> Result<Vec<String>> {
    let s = opts.shape(variant, DType::U32, n)?;
    let caps = opts.caps(gpu, variant)?;
    Ok(match variant {
        "batcher" => batcher_passes(&caps, &s, true)?
            .1
            .into_iter()
            .map(|t| format!("{} ({} stages)", t.label, t.stages()))
            .collect(),
        "merge-split" => merge_split_passes(&s, opts.block_size(&caps, n)?)
            .into_iter()
            .map(|t| t.label)
            .collect(),
        _ => vec![],
    })
}
