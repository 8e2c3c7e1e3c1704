//! `impl Algorithm`: plan, run, check every stage against the CPU model as it is read back
//! (traced.rs) and the output at the end; the plan summaries the app and the CLI print.

use super::*;
use facts::Facts;
use model::Rule;

/// A run's plan before it starts, with what its trace follows.
struct Planned {
    plan: Plan,
    /// The run's JSON facts known before it runs.
    facts: Facts,
    follows: Follows,
    /// What the CPU model costs (elements × stages) to find `first_sorted_phase` untraced.
    model_cost: usize,
}

/// What a variant's stages follow.
enum Follows {
    /// Transposition and global: one phase per rule, stage ids from 0; `in_workgroup`: the
    /// phases are steps of one workgroup between barriers (transposition), not dispatches.
    Phases {
        rules: Vec<Rule>,
        in_workgroup: bool,
    },
    /// Batcher: one stage per rule and its (p, k), stage ids from 1.
    Batcher(Vec<(Rule, (usize, usize))>),
    /// Merge-split: the block sort, then one phase of merges per block.
    MergeSplit { block: usize },
}

impl Follows {
    /// The trace's stages after the input.
    fn stages(&self, n: usize) -> usize {
        match self {
            Follows::Phases { rules, .. } => rules.len(),
            Follows::Batcher(stages) => stages.len(),
            Follows::MergeSplit { block } => n.div_ceil(*block) + 1,
        }
    }
}

impl Options {
    /// Batcher's or merge-split's tile passes (Batcher's stages fused unless traced) and
    /// merge-split's block (0 for Batcher).
    fn tile_passes(
        &self,
        caps: &Caps,
        s: &Shape,
        variant: Variant,
        trace: bool,
    ) -> Result<(Net, Vec<TilePass>, usize)> {
        if variant == Variant::Batcher {
            let (net, tps) = batcher_passes(caps, s, !trace)?;
            Ok((net, tps, 0))
        } else {
            let block = self.block_size(caps, s.n)?;
            Ok((Net::whole(s.n), merge_split_passes(s, block), block))
        }
    }

    /// The plan that sorts `input`, its facts and what its trace follows.
    fn plan_run(
        &self,
        gpu: &Gpu,
        input: &Data,
        s: &Shape,
        caps: Caps,
        variant: Variant,
        trace: bool,
    ) -> Result<Planned> {
        let n = s.n;
        let mut facts = Facts {
            descending: s.desc,
            segment: self.segment,
            seed_steps: s.seg,
            seed_work: (s.seg as u64 * (s.seg as u64).saturating_sub(1) / 2) * s.nseg() as u64,
            ..Facts::default()
        };
        let (plan, follows, model_cost) = match variant {
            Variant::Transposition | Variant::Global => {
                let data = gpu.storage_init("oddeven data", &input.bits)?;
                let plan = if variant == Variant::Transposition {
                    let mut t = plan_transposition(gpu, &caps, s, &data, trace)?;
                    t.plan.output = Some(t.out.clone());
                    t.plan
                        .keep
                        .extend(t.trace.map(|(a, b)| vec![a, b]).unwrap_or_default());
                    t.plan
                } else {
                    let flags = gpu.storage_poisoned("oddeven flags", n, POISON)?;
                    let mut plan = plan_global(gpu, s, &data, &flags, trace)?;
                    plan.output = Some(Region::words(&data, n));
                    plan.keep.push(flags);
                    plan
                };
                let work: u64 = (0..s.seg)
                    .map(|ph| model::phase_pairs(ph, s.seg).count() as u64)
                    .sum::<u64>()
                    * s.nseg() as u64;
                facts.phases = s.seg;
                facts.compare_exchanges = work;
                facts.wg_size = Some(caps.wg_max.min(s.seg.div_ceil(2) as u32).max(1));
                let rules = model::transposition_rules(s.seg);
                let in_workgroup = variant == Variant::Transposition;
                (
                    plan,
                    Follows::Phases {
                        rules,
                        in_workgroup,
                    },
                    s.seg * n,
                )
            }
            Variant::Batcher | Variant::MergeSplit => {
                if variant == Variant::Batcher && trace && n > 1 << 16 {
                    return Err(Error::Limit(format!(
                        "a batcher trace reads back every stage; trace N ≤ 65536 (got {n})"
                    )));
                }
                let runner = TileRunner::new(self, gpu, caps, s, trace)?;
                let (net, tps, block) = self.tile_passes(&caps, s, variant, trace)?;
                let a = gpu.storage_init("oddeven a", &input.bits)?;
                let b = gpu.storage_poisoned("oddeven b", n, POISON)?;
                let flags =
                    gpu.storage_poisoned("oddeven flags", if trace { n } else { 1 }, POISON)?;
                let (mut plan, out) = plan_tiles(&runner, net, &tps, &a, &b, &flags)?;
                plan.output = Some(out);
                plan.keep.extend([a, b, flags]);
                if variant == Variant::Batcher {
                    let stage_list = model::batcher_stages(s.seg.next_power_of_two());
                    facts.phases = stage_list.len();
                    facts.compare_exchanges = model::batcher_work(n, s.seg);
                    facts.tile = Some(caps.tile);
                    let cost = n * stage_list.len();
                    let rules = model::batcher_rules(s.seg).into_iter().zip(stage_list);
                    (plan, Follows::Batcher(rules.collect()), cost)
                } else {
                    let m = n.div_ceil(block);
                    let bp = block.next_power_of_two();
                    let per_block = model::batcher_work(bp, bp);
                    let merge = model::batcher_stages(2 * bp)
                        .iter()
                        .filter(|(p, _)| *p == bp)
                        .map(|&(p, k)| model::stage_comparators(p, k, 2 * bp).count() as u64)
                        .sum::<u64>();
                    let merges: u64 = (0..m).map(|ph| ((m - ph % 2) / 2) as u64).sum();
                    facts.block = Some(block);
                    facts.blocks = Some(m);
                    facts.phases = m + 1;
                    facts.compare_exchanges = per_block * m as u64 + merge * merges;
                    (plan, Follows::MergeSplit { block }, n * (m + 1))
                }
            }
        };
        Ok(Planned {
            plan,
            facts,
            follows,
            model_cost,
        })
    }

    /// The traced stages, each handed to `out` as it is read back and checked.
    async fn trace(
        &self,
        s: &Shape,
        input: &Data,
        follows: &Follows,
        (head, run): (&RunResult, &mut Running<'_>),
        out: &mut Stages<'_>,
    ) -> Result<traced::Traced> {
        let notes = trace::Notes {
            pairs: Some(trace::Pairs::default()),
            ..Default::default()
        };
        let input_stage = Stage::with("input", input.clone(), RoomNotes::Oddeven(notes));
        out.begin(head, follows.stages(s.n) + 1, input_stage)?;
        let seg = Some(s.seg);
        match follows {
            Follows::Phases {
                rules,
                in_workgroup,
            } => {
                let describe = |i: usize| {
                    let odd = !i.is_multiple_of(2);
                    let parity = if odd { "odd" } else { "even" };
                    let notes = trace::Notes {
                        stage: i + 1,
                        parity: Some(parity),
                        segment: seg,
                        overflow: (*in_workgroup && odd)
                            .then(|| trace::OverflowPair::of(s.seg))
                            .flatten(),
                        ..Default::default()
                    };
                    (
                        format!("phase {} ({parity})", i + 1),
                        format!("phase {}", i + 1),
                        notes,
                    )
                };
                traced::network(s, input, (rules, 0), &describe, run, out).await
            }
            Follows::Batcher(stages) => {
                let rules: Vec<Rule> = stages.iter().map(|&(r, _)| r).collect();
                let describe = |i: usize| {
                    let (p, k) = stages[i].1;
                    let notes = trace::Notes {
                        stage: i + 1,
                        p: Some(p),
                        k: Some(k),
                        merge_block: Some(2 * p),
                        segment: seg,
                        ..Default::default()
                    };
                    let what = format!("stage {} (p = {p}, k = {k})", i + 1);
                    (format!("p = {p}, k = {k}"), what, notes)
                };
                traced::network(s, input, (&rules, 1), &describe, run, out).await
            }
            &Follows::MergeSplit { block } => {
                let cpu = model::merge_split(s.dtype, s.desc, &input.bits, block);
                traced::merge_split(s, input, (block, &cpu), run, out).await
            }
        }
    }
}

impl Algorithm for Options {
    info_and_example!(INFO, EXAMPLE);

    fn check_len(&self, n: usize) -> Result<()> {
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

    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let (input, variant) = (&req.input, Variant::of(req.variant));
            let s = self.shape(variant, req.dtype, input.len())?;
            let caps = self.caps(gpu, variant)?;
            let p = self.plan_run(gpu, input, &s, caps, variant, req.trace)?;
            let mut head =
                RunResult::head(Algo::Oddeven, variant.name(), gpu, input, s.dtype, &p.plan);
            head.extra = p.facts.to_map();
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                self.trace(&s, input, &p.follows, (head, run), out).await
            };
            let check = |ex: &crate::gpu::Execution, traced: Option<traced::Traced>| {
                let (dtype, desc) = (s.dtype, s.desc);
                // The first sorted stage: from the trace, else from the CPU model where affordable.
                let (sorted_at, stage_mismatch) = match traced {
                    Some(t) => (Some(t.sorted_at), t.mismatch),
                    None if p.model_cost <= 1 << 27 => {
                        let at = match &p.follows {
                            Follows::Phases { rules, .. } => {
                                model::first_sorted_network(dtype, desc, &input.bits, rules, s.seg)
                            }
                            Follows::Batcher(stages) => {
                                let rules: Vec<Rule> = stages.iter().map(|&(r, _)| r).collect();
                                model::first_sorted_network(dtype, desc, &input.bits, &rules, s.seg)
                            }
                            &Follows::MergeSplit { block } => {
                                let rows: Vec<Vec<u32>> =
                                    model::merge_split(dtype, desc, &input.bits, block)
                                        .into_iter()
                                        .map(|p| p.data)
                                        .collect();
                                model::first_sorted(dtype, desc, &input.bits, &rows, s.n)
                            }
                        };
                        (Some(at), None)
                    }
                    None => (None, None),
                };
                let extra = Facts {
                    first_sorted_phase: sorted_at,
                    ..p.facts
                }
                .to_map();
                let mismatch = stage_mismatch.or_else(|| {
                    crate::algo::verdict(gpu, || {
                        let want = model::sort_segments(dtype, desc, &input.bits, s.seg);
                        first_mismatch(dtype, &ex.output, &want)
                    })
                });
                Ok((mismatch, extra))
            };
            r.drive(&p.plan, head, trace, check).await
        })
    }

    fn bench_case(
        &self,
        gpu: &Gpu,
        info: &VariantInfo,
        n: usize,
        dtype: DType,
    ) -> Result<BenchCase> {
        let variant = Variant::of(info);
        let s = self.shape(variant, dtype, n)?;
        let caps = self.caps(gpu, variant)?;
        let plan = match variant {
            Variant::Transposition => {
                let data = gpu.storage_zeroed("oddeven data", n)?;
                let mut t = plan_transposition(gpu, &caps, &s, &data, false)?;
                t.plan.keep.push(data);
                t.plan
                    .keep
                    .extend(t.trace.map(|(a, b)| vec![a, b]).unwrap_or_default());
                t.plan
            }
            Variant::Global => {
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
                let runner = TileRunner::new(self, gpu, caps, &s, false)?;
                let (net, tps, _) = self.tile_passes(&caps, &s, variant, false)?;
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
pub fn plan_summary(gpu: &Gpu, opts: &Options, variant: Variant, n: usize) -> Result<Vec<String>> {
    let s = opts.shape(variant, DType::U32, n)?;
    let caps = opts.caps(gpu, variant)?;
    Ok(match variant {
        Variant::Batcher => batcher_passes(&caps, &s, true)?
            .1
            .into_iter()
            .map(|t| format!("{} ({} stages)", t.label, t.stages()))
            .collect(),
        Variant::MergeSplit => merge_split_passes(&s, opts.block_size(&caps, n)?)
            .into_iter()
            .map(|t| t.label)
            .collect(),
        _ => vec![],
    })
}
