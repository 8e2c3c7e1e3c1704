//! One or two sentences per stage, derived from the stage's notes, for algorithms whose runner does
//! not write the stage's narration itself.

use crate::algo::{Algo, RunResult, Stage, scan};

/// Sentences for `stage` of `result`, or None to fall back to the generic text.
pub fn narrate(result: &RunResult, stage: usize) -> Option<String> {
    let s = result.stages.get(stage)?;
    if stage == 0 {
        return None;
    }
    match result.algorithm {
        Algo::Oddeven => oddeven(result, s),
        Algo::Scan => scan(result, s),
        Algo::Bmmc => bmmc(s),
        Algo::Fft => fft(s),
        Algo::Copy | Algo::Bitrev | Algo::Radix | Algo::Kernel => None,
    }
}

fn oddeven(result: &RunResult, s: &Stage) -> Option<String> {
    let nt = s.oddeven()?;
    let swaps = nt.swaps;
    let cmp = nt
        .compare_exchanges
        .or_else(|| nt.pairs.as_ref().map(|p| p.len()));
    if let Some(parity) = nt.parity {
        let first = if parity == "even" {
            "(0,1), (2,3), …"
        } else {
            "(1,2), (3,4), …"
        };
        let mut text = format!(
            "{}: every thread compares its {parity} pair {first} and swaps it when out of order — {} of {} pairs swapped. \
             A barrier ends the phase for all threads, including those without a pair.",
            s.label,
            swaps.unwrap_or(0),
            cmp.unwrap_or(0)
        );
        if let Some(o) = nt.overflow {
            text.push_str("\n\n");
            text.push_str(&overflow_barrier(o));
        }
        return Some(text);
    }
    if let (Some(p), Some(k)) = (nt.p, nt.k) {
        return Some(format!(
            "Batcher's network, merge of blocks of {} (p = {p}), step k = {k}: {} compare-exchanges, {} swapped. \
             Small strides run in workgroup memory; strides across tiles are passes over the whole buffer.",
            nt.merge_block.unwrap_or(2 * p),
            cmp.unwrap_or(0),
            swaps.unwrap_or(0)
        ));
    }
    if let Some(b) = nt.block_pairs.as_ref().map(Vec::len) {
        let size = nt.block.unwrap_or(0);
        return Some(if b == 0 {
            format!(
                "{}: every workgroup sorts its block of {size} keys in workgroup memory.",
                s.label
            )
        } else {
            format!(
                "{}: {b} neighbouring block pairs merge-split — each pair merges its 2×{size} keys and keeps the lower half \
                 left, the upper half right (Baudet–Stevenson).",
                s.label
            )
        });
    }
    let _ = result;
    None
}

/// Seed 002's barrier in divergent control flow, at an odd phase of the one-workgroup kernel: the
/// seed's line, what goes wrong, and what the kernel does instead.
pub fn overflow_barrier(o: crate::algo::oddeven::trace::OverflowPair) -> String {
    let (a, b) = o.pair();
    format!(
        "The overflow odd pair: the last owner ({}, of owners 0 … {}) holds pair ({a}, {b}), past the last key ({}). Seed 002's odd step \
         skips it with\n    if (s_odd >= n) continue;    //Case of final OVERFLOW odd pair\n\
         before its __syncthreads(); //BARRIER — so that thread (the seed's last one whenever N is even) jumps to the \
         next even step while the others wait at the barrier: a barrier in divergent control flow, undefined \
         behaviour that can hang the block or let it read its next pair while its neighbours still swap. \
         Stagewise's kernel guards only the compare-exchange (owner(): if (i < owners && a + 1u < L)) and keeps \
         workgroupBarrier() outside every branch: all invocations run the phase loop {} times and reach every barrier.",
        o.owner,
        o.owners - 1,
        o.seg_len - 1,
        o.seg_len
    )
}

fn scan(result: &RunResult, s: &Stage) -> Option<String> {
    let nt = s.scan()?;
    let active = nt.active;
    let sleeping = nt.sleeping_count;
    if let Some(dir) = nt.direction {
        return Some(match dir {
            "up" => format!(
                "Up-sweep, tree level {}: {} threads each add a left child into its right sibling's slot (a[r] += a[l]), \
                 building partial sums up the implicit tree (heap: l_child = 2i+1, r_child = 2i+2).",
                nt.level.unwrap_or(0),
                active.unwrap_or(0)
            ),
            "clear" => {
                "The root is cleared: its slot becomes 0, the sum of nothing before it.".to_string()
            }
            "down" => format!(
                "Down-sweep, tree level {}: {} threads swap and add — the left child takes its parent's prefix, the right \
                 child the parent's prefix plus the left child's sum.",
                nt.level.unwrap_or(0),
                active.unwrap_or(0)
            ),
            _ => format!(
                "{}: the input is added to the exclusive sums, giving inclusive ones.",
                s.label
            ),
        });
    }
    if let (Some(p), Some(a)) = (nt.phase, active) {
        let rule = match result.variant_as() {
            Some(scan::Variant::Ladder) => {
                format!("thread t with bit {p} set adds a[(t & ~({p}-1)) − 1], its prev_rung")
            }
            Some(scan::Variant::HillisSteele) => {
                format!("every thread i ≥ {p} adds a[i − {p}] into the other buffer")
            }
            Some(scan::Variant::Folded) => format!("a[i] += a[i + {p}] wherever i + {p} < n"),
            _ => format!("phase {p}"),
        };
        return Some(format!(
            "Phase p = {p}: {rule}. {a} threads add, {} sleep; work so far {}.",
            sleeping.unwrap_or(0),
            nt.work
        ));
    }
    None
}

fn bmmc(s: &Stage) -> Option<String> {
    use crate::algo::bmmc::trace::KernelKind;
    let what = match s.bmmc()?.kind? {
        KernelKind::Tiled => {
            "the tiled kernel: each workgroup reads whole 128-byte lines of a tile into workgroup memory and writes whole lines of the permuted tile"
        }
        KernelKind::Naive => {
            "one thread per element writes it to A·x XOR c: coalesced reads, scattered writes"
        }
        KernelKind::Block => {
            "the seed's kernel 1, (A B; 0 C): a block permuted through workgroup memory"
        }
        KernelKind::BlockMove => {
            "the seed's kernel 2, (Id 0; 0 X): whole blocks move, elements inside stay"
        }
    };
    Some(format!(
        "{}: {what}. The factor matrix of this pass is drawn beside the array.",
        s.label
    ))
}

/// A large FFT's pass (src/algo/fft/large.rs), from its typed notes.
fn fft_pass(s: &Stage, n: &crate::algo::fft::trace::PassNotes) -> String {
    use crate::algo::fft::trace::PassKind;
    let (n1, n2) = (n.n1, n.n2);
    match n.kind {
        PassKind::Input => format!(
            "The input, seen as the {n1} × {n2} grid of the four-step FFT: element col + {n2}·n1 sits in row n1, column col."
        ),
        PassKind::Columns if n.transposed => format!(
            "{}: each workgroup holds whole FFTs; it runs a {}-point FFT down every column, multiplies output k1 of \
             column col by W_N^(col·k1) and stores it at k1 + {n1}·col of its own output, where the rows phase will \
             store X[k1 + {n1}·col]: that phase then works in place, reading this back from L2.",
            s.label, n.sub_size
        ),
        PassKind::Columns => format!(
            "{}: every workgroup loads neighbouring columns (stride {n2} in memory), runs a {}-point FFT down each, multiplies \
             output k1 of column col by the twiddle W_N^(col·k1) and stores it {}.",
            s.label,
            n.sub_size,
            match n.units {
                Some(c) => format!(
                    "in units of {c} columns: each unit's {n1} rows side by side in memory, so L2 writes the pass back to DRAM \
                     in runs of {} KiB instead of {}-byte rows {n2}·8 bytes apart; the rows pass reads them so (the grid shows \
                     cell (k1, col))",
                    c * n1 * 8 / 1024,
                    8 * c
                ),
                None => "in place".into(),
            }
        ),
        PassKind::Inner => format!(
            "{}: the first phase of a pass through L2 — the {}-point FFTs down the inner columns of its sub-FFTs, with \
             their twiddles, left where the second phase stores its results; one dispatch runs both phases when not traced.",
            s.label, n.sub_size
        ),
        PassKind::Rows => format!(
            "{}: a {}-point FFT along each of the {} contiguous rows; {}",
            s.label,
            n.sub_size,
            n.count,
            if n.transposed {
                format!(
                    "the store goes through the transpose, so X[k1 + {n1}·k2] lands in natural order."
                )
            } else {
                "the rows are stored where they were read (raw order).".into()
            }
        ),
        PassKind::Whole => format!(
            "{}: the whole FFT in one workgroup, its values in workgroup memory in two halves.",
            s.label
        ),
        PassKind::Unpack => format!(
            "{}: the packed complex FFT's bins k and N − k are combined into the real spectrum.",
            s.label
        ),
    }
}

fn fft(s: &Stage) -> Option<String> {
    if let Some(n) = s.fft_pass() {
        return Some(fft_pass(s, n));
    }
    let l = s.label.to_lowercase();
    if l.contains("exchange") {
        Some(format!(
            "{}: partner threads t and t ^ stride swap values through workgroup memory — the lower thread gives its hi \
             and takes the higher thread's lo — so that after the barrier every thread again holds lo/hi pairs one \
             stride apart.",
            s.label
        ))
    } else if l.contains("butterfly") {
        Some(format!(
            "{}: every thread combines each of its lo/hi pairs, lo' = lo + hi and hi' = (lo − hi)·w with the pair's \
             twiddle w; nothing leaves the thread.",
            s.label
        ))
    } else if l.contains("regroup") {
        Some(format!(
            "{}: the stride is still at least the workgroup size, so the next pairs are already inside each thread: it \
             only re-pairs its own slots.",
            s.label
        ))
    } else {
        None
    }
}
