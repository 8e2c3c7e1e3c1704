//! A pass of the large plan as two phases through L2 (`--phase-split`, and the chained
//! dispatches of src/algo/fft/large_chain.rs): the layouts and shapes of its phases.

use super::large::Fit;
use super::large_gen::{Field, Layout, PassConfig, Twiddle};
use super::*;

/// Whether consecutive lanes of a layout are neighbours in memory (its lowest run stays put).
fn lanes_adjacent(l: &Layout) -> bool {
    l.runs.iter().find(|r| r.0 > 0).is_some_and(|r| r.1 == 0)
}

/// Pass `dispatch` of M-point sub-FFTs (outer layouts `inp` → `out`, `lanes` of them per
/// workgroup) as two phases through the pass's output (L2), M = Ma·Mb, Ma = `ma`. Phase 0 runs
/// the Mb inner columns (Ma points at stride Mb) of each sub-FFT, multiplies output ka of column
/// nb by W_M^(nb·ka) and stores it where phase 1 stores its output (ka, kb = nb); phase 1 runs
/// the Ma inner rows in place (output ka + Ma·kb), with the outer twiddles W_N^(col·k) if the
/// pass has them. Phase 1's lanes are `--phase-lanes` (else 512 threads' worth, or one sub-FFT
/// where one needs more, halved until they fit in two parts); phase 0 takes the same threads.
#[allow(clippy::too_many_arguments)]
pub(super) fn l2_pass(
    o: &Options,
    n: usize,
    m: usize,
    ma: usize,
    lanes: usize,
    (inp, out): (Layout, Layout),
    outer_twiddle: bool,
    inverse: bool,
    dispatch: usize,
    fit: Fit,
) -> Result<[PassConfig; 2]> {
    let refuse = |why: String| {
        Error::Input(format!(
            "fft: --phase-split {ma} of the {m}-point sub-FFTs: {why}"
        ))
    };
    if !ma.is_power_of_two() || ma < 2 || ma >= m {
        return Err(refuse(format!("needs a power of two with 2 ≤ Ma < {m}")));
    }
    let mb = m / ma;
    let (la, lb, lc) = (
        ma.trailing_zeros(),
        mb.trailing_zeros(),
        lanes.trailing_zeros(),
    );
    let ((a, in_s), in_m, out_s, out_m) = (inp.runs[0], inp.m_shift, out.runs[0].1, out.m_shift);
    if lc > a || !lanes.is_power_of_two() {
        return Err(refuse(format!(
            "{lanes} sub-FFTs per workgroup must be a power of two of at most {}",
            1 << a
        )));
    }
    // Where the sub-FFT index's bits above the lanes go in the output: after them (one run), or
    // where its second run puts them (columns stored in units of the lanes: Layout::units).
    let out_hi = match out.runs {
        [(w, _), (0, _), _] if w == a => out_s + lc,
        [(w, _), (w2, hi), (0, _)] if w == lc && w + w2 == a => hi,
        _ => {
            return Err(refuse(format!(
                "the output layout {out:?} is not one of its units"
            )));
        }
    };
    if inp.runs[1].0 > 0 || inp.m_split.is_some() || out.m_split.is_some() {
        return Err(refuse(format!(
            "the layouts {inp:?} → {out:?} are not one run in, positions unsplit"
        )));
    }
    // Where the lanes lie apart in the input (the rows pass), neighbouring inner columns go
    // side by side instead, so the loads stay contiguous.
    let nb_first = in_s != 0 && lc > 0;
    let order = |nb: (u32, u32), g: (u32, u32)| if nb_first { [nb, g] } else { [g, nb] };
    let [r0, r1] = order((lb, in_m), (lc, in_s));
    let in0 = Layout {
        runs: [r0, r1, (a - lc, in_s + lc)],
        m_shift: in_m + lb,
        m_split: None,
    };
    let [r0, r1] = order((lb, out_m + la), (lc, out_s));
    let out0 = Layout {
        runs: [r0, r1, (a - lc, out_hi)],
        m_shift: out_m,
        m_split: None,
    };
    let l1 = Layout {
        runs: [(lc, out_s), (la, out_m), (a - lc, out_hi)],
        m_shift: out_m + la,
        m_split: None,
    };
    let e = o.elements_per_invocation.unwrap_or(16);
    let (e0, e1) = (e.min(ma), e.min(mb));
    let (w0, w1) = (ma / e0, mb / e1);
    #[allow(clippy::too_many_arguments)]
    let phase = |m, e, c, s: usize, parts, input, output, twiddle| PassConfig {
        n,
        m,
        e,
        c,
        s: s.max(1),
        parts,
        input,
        output,
        load_lanes: lanes_adjacent(&input),
        store_lanes: lanes_adjacent(&output),
        twiddle,
        inverse,
        pad_shift: None,
        swizzle: None,
        trip_pad: [None; 8],
        dispatch,
    };
    let outer = outer_twiddle.then_some(Twiddle {
        u: Field([(0, lc), (lc + la, a - lc)]),
        v: Field([(lc, la), (0, 0)]),
        mult: ma,
    });
    let inner = Some(Twiddle {
        u: Field([(if nb_first { 0 } else { lc }, lb), (0, 0)]),
        v: Field::default(),
        mult: n / m,
    });
    let mk1 = |c1: usize, parts| phase(mb, e1, c1, lanes * ma / c1, parts, l1, l1, outer);
    let mk0 = |c0: usize, parts| phase(ma, e0, c0, lanes * mb / c0, parts, in0, out0, inner);
    // Default: 512 threads in phase 1 (fewer, larger workgroups keep fewer FFTs' data in flight
    // in L2; one sub-FFT may take more), halved until it fits in two parts.
    let tries: Vec<usize> = o.phase_lanes.map_or_else(
        || {
            let top = (512 / w1).clamp(1, lanes * ma);
            (0..=top.trailing_zeros()).map(|k| top >> k).collect()
        },
        |c| vec![c],
    );
    let two = Fit {
        parts: Some(fit.parts.unwrap_or(2).min(2)),
        ..fit
    };
    for c1 in tries {
        // By default at least one of phase 0's sub-FFTs' threads (its W may exceed phase 1's).
        let c1 = if o.phase_lanes.is_none() {
            c1.max(w0 / w1)
        } else {
            c1
        };
        let threads = w1 * c1;
        if c1 > lanes * ma || threads % w0 != 0 || threads / w0 > lanes * mb {
            continue;
        }
        if o.phase_lanes.is_none() && threads > 512 && c1 > 1 && threads > w0 {
            continue;
        }
        let c0 = threads / w0;
        let p1 = if o.phase_lanes.is_some() {
            fit.parts(&|parts| mk1(c1, parts))
        } else {
            fit.check(mk1(c1, 1)).or_else(|| two.check(mk1(c1, 2)))
        };
        let Some(mut p1) = p1 else { continue };
        let Some(mut p0) = fit.parts(&|parts| mk0(c0, parts)) else {
            continue;
        };
        // One workgroup array serves both phases: complex values, or floats in parts.
        if p0.shared_len() > 0 && p1.shared_len() > 0 && (p0.parts >= 2) != (p1.parts >= 2) {
            let halves = |p: PassConfig| PassConfig {
                parts: p.parts.max(2),
                ..p
            };
            match (fit.check(halves(p0)), fit.check(halves(p1))) {
                (Some(a0), Some(a1)) => (p0, p1) = (a0, a1),
                _ => continue,
            }
        }
        return Ok([p0, p1]);
    }
    Err(Error::Limit(format!(
        "fft: the {m}-point sub-FFTs as {ma} × {mb} through L2 do not fit this adapter ({} invocations, {} bytes of workgroup memory){}",
        fit.max_threads,
        fit.max_bytes,
        o.phase_lanes
            .map_or(String::new(), |c| format!(" with --phase-lanes {c}"))
    )))
}
