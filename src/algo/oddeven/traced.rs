//! A traced odd-even run: every stage read back as its pass comes back, checked against the CPU
//! model (which steps one array along the GPU's stages) and handed on at once.

use super::*;
use model::Rule;

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

/// How a traced run went: the first stage (1-based, 0 = the input) that is sorted, and the first
/// difference from the model.
pub(super) struct Traced {
    pub(super) sorted_at: Option<usize>,
    pub(super) mismatch: Option<String>,
}

/// One network stage's label, its name in a mismatch, and its notes.
pub(super) type Describe<'a> = &'a dyn Fn(usize) -> (String, String, trace::Notes);

/// The stages of a network variant (transposition, global, batcher), rule by rule. A capture holds
/// the rows of one or more stages (the transposition kernel writes every phase into one trace
/// buffer) and their swap flags, tagged with the stage id `i + id0`.
pub(super) async fn network(
    s: &Shape,
    input: &Data,
    (rules, id0): (&[Rule], usize),
    describe: Describe<'_>,
    run: &mut Running<'_>,
    out: &mut Stages<'_>,
) -> Result<Traced> {
    let (dtype, desc, n) = (s.dtype, s.desc, s.n);
    let mut v = input.bits.clone();
    let mut t = Traced {
        sorted_at: model::is_sorted(dtype, desc, &input.bits, s.seg).then_some(0),
        mismatch: None,
    };
    let mut i = 0;
    while i < rules.len() {
        let Some((_, mut c)) = run.next_capture().await? else {
            break;
        };
        let rows = std::mem::take(&mut c[0]);
        let flags = c.get(1).map_or(&[][..], |f| &f[..]);
        if rows.len() < n {
            let m = format!("{}: {} words read back, not {n}", describe(i).1, rows.len());
            t.mismatch = t.mismatch.or(Some(m));
            break;
        }
        for (r, row) in rows
            .chunks_exact(n.max(1))
            .enumerate()
            .take(rules.len() - i)
        {
            let (label, what, notes) = describe(i);
            let (pairs, mm) = check_network_stage(
                (dtype, desc),
                rules[i],
                &mut v,
                row,
                (flags, i + id0, r * n),
                &what,
            );
            t.mismatch = t.mismatch.or(mm);
            if t.sorted_at.is_none() && model::is_sorted(dtype, desc, row, s.seg) {
                t.sorted_at = Some(i + 1);
            }
            out.push(trace::network_stage(
                label,
                dtype,
                row.to_vec(),
                pairs,
                notes,
            ))?;
            i += 1;
        }
    }
    Ok(t)
}

/// The stages of merge-split: the block sort, then the phases of block merges, against the
/// model's `cpu` stages; a block pair "moved" where the GPU's blocks changed.
pub(super) async fn merge_split(
    s: &Shape,
    input: &Data,
    (block, cpu): (usize, &[model::Phase]),
    run: &mut Running<'_>,
    out: &mut Stages<'_>,
) -> Result<Traced> {
    let (dtype, desc, n) = (s.dtype, s.desc, s.n);
    let m = n.div_ceil(block);
    let blocks: Vec<(usize, usize)> = (0..m)
        .map(|i| (i * block, ((i + 1) * block).min(n)))
        .collect();
    let mut t = Traced {
        sorted_at: model::is_sorted(dtype, desc, &input.bits, n).then_some(0),
        mismatch: None,
    };
    let mut prev = input.bits.clone();
    for (i, c) in cpu.iter().enumerate() {
        let Some((_, mut captures)) = run.next_capture().await? else {
            break;
        };
        let row = std::mem::take(&mut captures[0]);
        t.mismatch = t.mismatch.or_else(|| {
            first_mismatch(dtype, &row, &c.data).map(|mm| format!("stage {}: {mm}", i + 1))
        });
        if t.sorted_at.is_none() && model::is_sorted(dtype, desc, &row, n) {
            t.sorted_at = Some(i + 1);
        }
        // Block pairs with "moved" read off the GPU's arrays.
        let pairs: Vec<model::Pair> = c
            .pairs
            .iter()
            .map(|&(x, y, _)| {
                let lo = x as usize * block;
                let hi = ((y as usize + 1) * block).min(n);
                (x, y, prev.get(lo..hi) != row.get(lo..hi))
            })
            .collect();
        let label = if i == 0 {
            format!("sort {m} blocks of {block}")
        } else {
            let parity = if (i - 1) % 2 == 0 { "even" } else { "odd" };
            format!("phase {i} ({parity})")
        };
        let notes = trace::Notes {
            stage: i + 1,
            block: Some(block),
            blocks: Some(blocks.clone()),
            block_pairs: Some(pairs),
            pairs: (i == 0).then(trace::Pairs::default),
            ..Default::default()
        };
        prev = row.clone();
        out.push(Stage::with(
            label,
            Data::new(dtype, row),
            RoomNotes::Oddeven(notes),
        ))?;
    }
    Ok(t)
}
