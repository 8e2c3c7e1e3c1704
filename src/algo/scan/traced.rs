//! A traced scan: every variant's stages, read back pass by pass, checked against the CPU model
//! and handed on as they come (the input first).

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
    scan_stage(format!("{what} p={}", ph.p), dtype, data, notes)
}

/// A stage of this room: the array the GPU read back and its notes.
fn scan_stage(
    label: impl Into<String>,
    dtype: DType,
    data: Vec<u32>,
    notes: trace::Notes,
) -> Stage {
    Stage::with(label, Data::new(dtype, data), RoomNotes::Scan(notes))
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

/// The summation-tree height of the tiled variants' outputs (0 for the others).
pub(super) fn tile_depth(built: &Built) -> usize {
    built.tile.map_or(0, |s| {
        8 * s.per as usize + 2 * s.wg.trailing_zeros() as usize + built.tiles + 4
    })
}

/// What the trace adds to the run: the step and work counters, the first stage that differs from
/// the model, and facts only the trace gives.
pub(super) struct Traced {
    pub(super) steps: usize,
    pub(super) work: usize,
    pub(super) mismatch: Option<String>,
    pub(super) extra: Map<String, serde_json::Value>,
}

impl Options {
    /// The model's stages with the GPU's arrays, each handed to `out` as its pass is read back
    /// (`head`: the run before its first pass).
    pub(super) async fn trace(
        &self,
        req: &RunRequest,
        built: &Built,
        head: &RunResult,
        run: &mut Running<'_>,
        out: &mut Stages<'_>,
    ) -> Result<Traced> {
        let (variant, dtype, x) = (Variant::of(req.variant), req.dtype, &req.input.bits);
        let n = x.len();
        let log_n = model::pow2_ceil(n).trailing_zeros() as usize;
        let suffix = variant == Variant::Folded && !self.mirror;
        let tile_depth = tile_depth(built);
        let mut extra = Map::new();
        let mut mismatch = None;
        let mut work = 0usize;
        let mut steps = 0usize;
        let scale: f64 = x.iter().map(|&b| bits_abs(dtype, b)).sum();
        let check = |label: &str, g: &[u32], c: &[u32], mismatch: &mut Option<String>| {
            if mismatch.is_none()
                && let Some(m) = stage_mismatch(dtype, g, c, scale, 2 * log_n + tile_depth + 2)
            {
                *mismatch = Some(format!("{label}: {m}"));
            }
        };
        // Announce `count` stages after the input, and hand on the input.
        let begin = |out: &mut Stages, count: usize| -> Result<()> {
            let notes = trace::Notes {
                phase: Some(0),
                ..Default::default()
            };
            let input = Stage::with("input", req.input.clone(), RoomNotes::Scan(notes));
            out.begin(head, count + 1, input)
        };
        match variant {
            Variant::Ladder | Variant::Folded | Variant::HillisSteele => {
                // The model's phases one at a time, beside the GPU's.
                let phases: Box<dyn ExactSizeIterator<Item = model::Phase>> = match variant {
                    Variant::Ladder => Box::new(model::ladder(dtype, x)),
                    Variant::Folded => Box::new(model::folded(dtype, x, self.mirror)),
                    _ => Box::new(model::hillis_steele(dtype, x)),
                };
                begin(out, phases.len() + usize::from(self.exclusive))?;
                let mut last = x.to_vec();
                for ph in phases {
                    let g = next(run).await?.into_iter().next().unwrap_or_default();
                    steps += 1;
                    work += ph.reads.len();
                    let label = format!("phase p={}", ph.p);
                    check(&label, &g, &ph.data, &mut mismatch);
                    let what = if variant == Variant::Ladder {
                        "ladder"
                    } else {
                        "phase"
                    };
                    let mut st = phase_stage(dtype, &ph, g, n, steps, work, what);
                    st.label = label;
                    if variant == Variant::Folded
                        && let RoomNotes::Scan(notes) = &mut st.notes.room
                    {
                        notes.form = Some(if self.mirror {
                            "mirrored: prefix sums"
                        } else {
                            "suffix sums"
                        });
                    }
                    out.push(st)?;
                    last = ph.data;
                }
                if self.exclusive {
                    let want = model::shift(&last, suffix);
                    let g = next(run).await?.into_iter().next().unwrap_or_default();
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
                    out.push(scan_stage("exclusive: shift by one", dtype, g, notes))?;
                }
            }
            Variant::Blelloch => {
                let big = model::pow2_ceil(n);
                let tree = model::blelloch(dtype, x, !self.exclusive);
                begin(out, tree.len())?;
                for ts in tree {
                    let g = next(run).await?.into_iter().next().unwrap_or_default();
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
                    out.push(scan_stage(label, dtype, g, notes))?;
                }
                extra.insert("padded_to".into(), json!(big));
            }
            Variant::Sequential => {
                begin(out, 1)?;
                let want = model::sequential(dtype, x, self.exclusive);
                let g = next(run).await?.into_iter().next().unwrap_or_default();
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
                out.push(scan_stage("one thread, i = 1 … n-1", dtype, g, notes))?;
            }
            Variant::ReduceThenScan => {
                begin(out, 3)?;
                let te = built.tile.map_or(1, |s| s.elements());
                let (sums, pre) = model::tile_sums(dtype, x, te);
                let want = model::sequential(dtype, x, self.exclusive);
                let g1 = next(run).await?.into_iter().next().unwrap_or_default();
                check("reduce", &g1, &sums, &mut mismatch);
                let g2 = next(run).await?.into_iter().next().unwrap_or_default();
                check("spine", &g2, &pre, &mut mismatch);
                let g3 = next(run).await?.into_iter().next().unwrap_or_default();
                check("scan", &g3, &want, &mut mismatch);
                work = 2 * n + built.tiles;
                out.push(scan_stage(
                    "reduce: one sum per tile",
                    dtype,
                    g1,
                    tile_notes("tile sums", Some(te), 1, n),
                ))?;
                out.push(scan_stage(
                    "spine: exclusive tile prefixes",
                    dtype,
                    g2,
                    tile_notes("tile prefixes", Some(te), 2, n + built.tiles),
                ))?;
                out.push(scan_stage(
                    "scan: every tile from its prefix",
                    dtype,
                    g3,
                    tile_notes("output", Some(te), 3, work),
                ))?;
                steps = 3;
            }
            Variant::Decoupled => {
                begin(out, 2)?;
                let te = built.tile.map_or(1, |s| s.elements());
                let c = next(run).await?;
                let (status, info, output) = (
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
                check("output", &output, &want, &mut mismatch);
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
                let st = scan_stage(
                    "tile status: inclusive prefix of every tile",
                    dtype,
                    got,
                    notes,
                )
                .passes(vec![lb_pass]);
                out.push(st)?;
                out.push(
                    scan_stage("output", dtype, output, tile_notes("output", None, 1, work))
                        .passes(vec![lb_pass]),
                )?;
            }
        }
        Ok(Traced {
            steps,
            work,
            mismatch,
            extra,
        })
    }
}

/// The next capturing pass's regions.
async fn next(run: &mut Running<'_>) -> Result<Vec<Vec<u32>>> {
    Ok(run
        .next_capture()
        .await?
        .map(|(_, c)| c)
        .unwrap_or_default())
}
