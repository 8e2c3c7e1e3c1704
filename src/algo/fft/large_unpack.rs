//! A real FFT's unpacking in the large plan (src/algo/fft/large.rs): N reals as the N/2-point
//! complex FFT Z, then X[k] = A + w^k·B with A = (Z[k] + conj Z[M−k]) / 2,
//! B = (Z[k] − conj Z[M−k]) / 2i (M = N/2), fused where it can be into the last dispatch of
//! src/algo/fft/large_wgsl.rs:
//! - in the store of a pass whose lanes hold whole FFTs, the partners through workgroup memory
//!   (class by class where the pass exchanges in four parts);
//! - in the store of the two-pass plan's rows pass, its lanes holding rows k1 and N1 − k1;
//! - else as a last phase reading the pass's output back through L2.

use super::codegen::lit;
use super::large_gen::PassConfig;
use super::model;
use std::fmt::Write;

/// A real FFT's unpacking as the dispatch's last phase: the workgroup's `ffts` FFTs of `m` points
/// (natural order, FFT b at b·m of dst) become in place the spectra of their 2m reals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unpack {
    pub m: usize,
    pub ffts: usize,
    pub inverse: bool,
    /// The workgroup size (the phases'; a traced run dispatches the unpacking alone).
    pub threads: usize,
    /// N1 where the unpacking is fused into the rows pass of a two-pass plan (see
    /// [`rows_unpack`]).
    pub rows: Option<usize>,
}

/// How the last phase's store is fused with the unpacking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fused {
    /// Each lane holds a whole FFT of this many points.
    Whole(usize),
    /// The lanes hold rows of the two-pass plan, paired row k1 with row N1 − k1 (N1, M).
    Rows(usize, usize),
}

/// How the unpacking joins the dispatch of `phases` (its last phase's store), if it does.
pub(super) fn fused(phases: &[PassConfig], unpack: Option<Unpack>) -> Option<Fused> {
    in_registers(phases, unpack).map(Fused::Whole).or_else(|| {
        let (u, [p]) = (unpack?, phases) else {
            return None;
        };
        let n1 = u.rows?;
        rows_unpack(p, n1).then_some(Fused::Rows(n1, u.m))
    })
}

/// Where the unpacking is fused into the store of a dispatch's only phase, whose lanes each hold
/// a whole FFT (in at most two exchange parts, or in four where W ≤ M / (2 · the unpacking's
/// classes)): its M, else None (a phase through L2 of its own).
pub(super) fn in_registers(phases: &[PassConfig], unpack: Option<Unpack>) -> Option<usize> {
    let (u, [p]) = (unpack?, phases) else {
        return None;
    };
    let k = unpack_classes(p);
    let fits = p.w() == 1 || p.parts <= 2 || (k > 1 && p.w() <= p.m / (2 * k));
    (p.m == u.m && p.input.width() == 0 && fits).then_some(p.m)
}

/// The unpacking can be fused into the store of this rows pass (sub-FFTs of N2 points, rows of
/// an N1 × N2 plan): its C lanes split into rows and their mirrors, both halves in one
/// workgroup, exchanged through workgroup memory (at most two parts, more than one round). The
/// mirrors' stores are runs of C/2 values one element off their aligned place, so C ≥ 8 (runs
/// of 4 values, 32 bytes, over two sectors each, already cost the 1024-point rows of 2^20 reals
/// 1.41 ms against 0.865 aligned). H100, 2^28 reals: 2^16 reals 1.61 ms against 2.23 with the
/// unpacking a pass of its own, 2^17 1.67 against 2.26.
pub fn rows_unpack(p: &PassConfig, n1: usize) -> bool {
    p.c >= 8
        && n1.is_multiple_of(p.c)
        && p.parts <= 2
        && p.rounds() > 1
        && p.twiddle.is_none()
        && p.w() > 1
}

/// The classes of positions the unpacking in the store exchanges one after another: 1 where the
/// workgroup memory holds a component of every position (at most two parts), except 2 for 4096
/// points in two parts (8192 reals: 0.733 ms against 0.785 in one class); in four parts 4 at 512
/// threads, 8 below; both components of a class in one trip where they fit (H100, 2^28 reals:
/// 32768 reals 0.932 ms in 4 classes, 0.939 in 8, 1.008 in 2 with a trip per component; 16384
/// reals 0.840 in 8, 1.101 in 4, 1.090 in 2 — and 0.847 in 4 with a trip per component).
fn unpack_classes(p: &PassConfig) -> usize {
    match (p.parts, p.threads()) {
        (2, _) if p.m == 4096 => 2,
        (..=2, _) => 1,
        (_, 512..) => 4,
        _ => 8,
    }
}

/// The WGSL function `rowmap(s)`: the row of sub-FFT s of a rows pass of C lanes whose stores the
/// unpacking is fused into (see [`unpack_rows`]).
pub(super) fn rowmap_fn(o: &mut String, c: usize, n1: usize) {
    let h = c / 2;
    let _ = writeln!(
        o,
        "
// The row of sub-FFT s (rows paired for the fused unpacking): in each block of C = {c} lanes
// the low half takes rows b·C/2 + g, the high half their mirrors N1 − (b·C/2 + g − C/2), the
// mirror of row 0 being row N1/2.
fn rowmap(s: u32) -> u32 {{
    let r = s & {}u;
    let g = r & {}u;
    let b = (r >> {}u) * {h}u;
    let mr = b + g - {h}u;
    let hi = select({n1}u - mr, {}u, mr == 0u);
    return (s - r) | select(hi, b + g, g < {h}u);
}}",
        n1 - 1,
        c - 1,
        c.trailing_zeros(),
        n1 / 2
    );
}

/// The real spectra in place of the last round's values (each lane a whole FFT Z of M points,
/// slot j of thread t holding Z[k], k = t + W·bitrev(j)): X[k] = A + w^k·B with
/// A = (Z[k] + conj Z[M−k]) / 2, B = (Z[k] − conj Z[M−k]) / 2i, w^k = tw[t]·w^(W·bitrev(j))
/// (tw the 2M table, read before the trips; tw[k] after them in four parts below M = 8192),
/// and X[0] + i·X[M] (both real) at k = 0. The partner Z[M−k] comes through workgroup memory
/// (per component where the rounds use two parts, class by class where they use four), or from
/// the thread's own registers when W = 1.
pub(super) fn unpack_in_store(o: &mut String, c: &PassConfig) {
    let (m, e, w) = (c.m, c.e, c.w());
    let (le, lc, lm) = (e.trailing_zeros(), c.c.trailing_zeros(), m.trailing_zeros());
    let k_of = |j: usize| model::bitrev(j, le) * w;
    let partner = |j: usize| model::bitrev((m - k_of(j)) % m / w, le);
    for j in 0..e {
        let _ = writeln!(o, "    let uk{j} = t1 + {}u;", k_of(j));
    }
    // w^k = w^t · w^(W·bitrev(j)): one table read a thread, issued before the partners' trips
    // (its latency hides behind them), the second factor a constant. A table read per value
    // after the trips waits on L1/L2 past the barriers: on the H200 (2^28 reals, same run) 4096
    // reals 0.631 → 0.585 ms, 2048 0.560 → 0.552, 8192 0.630 → 0.619, 256 0.547 → 0.537; and once
    // the table outgrows L1 each read costs 8 more bytes from L2 (H100: 32768 reals 1.052 ms
    // against 1.005). Passes in four parts below M = 8192 keep the read per value: 1024 reals
    // (M = 512) ran 0.524 ms with it against 0.529 factored.
    let factored = m >= 8192 || c.parts < 4;
    if factored {
        let _ = writeln!(o, "    let w1 = tw[t1];");
    }
    let wk = |j: usize| {
        if !factored {
            format!("tw[uk{j}]")
        } else if k_of(j) == 0 {
            "w1".to_string()
        } else {
            format!("cmul(w1, {})", w_const(k_of(j), m, c.inverse))
        }
    };
    let unpack = |o: &mut String, j: usize| {
        let zero = format!("uk{j} == 0u");
        unpack_value(
            o,
            j,
            &format!("z{j}"),
            &wk(j),
            (k_of(j) == 0).then_some(&zero),
        )
    };
    if w == 1 {
        for j in 0..e {
            let _ = writeln!(o, "    let z{j} = v{};", partner(j));
        }
        for j in 0..e {
            unpack(o, j);
        }
        return;
    }
    let comps: &[&str] = if c.parts >= 2 { &[".x", ".y"] } else { &[""] };
    // The positions go through workgroup memory in 2^q classes closed under k -> M - k, each
    // unpacked in place before the next (fewer partners live at once): with the top q + 1
    // position bits (slot bits) h_q … h_0, a class is h_i XOR h_0 for i = 1..q, and its members
    // are told apart by their low lm - q bits. Negation flips all q + 1 bits (so keeps the class)
    // of every k but the multiples of M / 2^(q+1); those are all thread 0's, and their
    // partners come from its own registers (kept aside where the partner's class went first).
    let q = unpack_classes(c).trailing_zeros();
    debug_assert!(q == 0 || w <= m >> (q + 1));
    let h0 = lm - 1 - q;
    let class = |k: usize| {
        (1..=q)
            .map(|i| (((k >> (h0 + i)) ^ (k >> h0)) & 1) << (i - 1))
            .sum::<usize>()
    };
    let at = |x: String| {
        if q == 0 {
            x
        } else {
            format!("({x}) & {}u", (m >> q) - 1)
        }
    };
    let special = |j: usize| q > 0 && k_of(j) % (m >> (q + 1)) == 0;
    for j in (0..e).filter(|&j| special(j) && class(k_of(partner(j))) > class(k_of(j))) {
        let _ = writeln!(o, "    var keep{j}: vec2<f32>;");
    }
    for cls in 0..1usize << q {
        let js: Vec<usize> = (0..e).filter(|&j| class(k_of(j)) == cls).collect();
        for &j in &js {
            let _ = writeln!(o, "    var z{j}: vec2<f32>;");
        }
        // Both components in one trip where a class's take at most the memory (the y parts
        // C·M/2^q places above the x parts): half the barriers.
        let both = c.parts >= 2 && 2 * c.c * (m >> q) <= c.shared_len();
        let trips: Vec<Vec<(&str, usize)>> = if both {
            vec![vec![(".x", 0), (".y", c.c * (m >> q))]]
        } else {
            comps.iter().map(|&comp| vec![(comp, 0)]).collect()
        };
        exchange(o, c, &trips, &js, &|j, off| {
            let p = at(format!("({m}u - uk{j}) & {}u", m - 1));
            (
                format!("((({}) << {lc}u) | g1) + {off}u", at(format!("uk{j}"))),
                format!("((({p}) << {lc}u) | g1) + {off}u"),
            )
        });
        for &j in js.iter().filter(|&&j| special(j)) {
            let pj = partner(j);
            let from = if class(k_of(pj)) < cls {
                format!("keep{pj}")
            } else {
                format!("v{pj}")
            };
            let _ = writeln!(o, "    if (t1 == 0u) {{ z{j} = {from}; }}");
            if class(k_of(pj)) > cls {
                let _ = writeln!(o, "    keep{j} = v{j};");
            }
        }
        for &j in &js {
            unpack(o, j);
        }
    }
}

/// The unpacking in the store of a rows pass (the lanes' rows paired by `rowmap`): lane g's row
/// k1 holds Z[k1 + N1·k2] at slot j of thread t, k2 = t + W·bitrev(j); its partner
/// Z[M − k] = Z[(N1 − k1) + N1·(N2 − 1 − k2)] lies in lane g XOR C/2 (the mirror row) at
/// position N2 − 1 − k2, except for rows 0 (partner k2 → N2 − k2 in the same lane) and N1/2
/// (N2 − 1 − k2 in the same lane). Every lane's values go through workgroup memory (in two parts
/// where the rounds use two); w^k = w^(k1 + N1·t) · w^(N1·W·bitrev(j)), one cos/sin a thread.
pub(super) fn unpack_rows(o: &mut String, c: &PassConfig, n1: usize, m: usize, sub: &str) {
    let (n2, e, w) = (c.m, c.e, c.w());
    let (le, lc) = (e.trailing_zeros(), c.c.trailing_zeros());
    let h = c.c / 2;
    let k_of = |j: usize| model::bitrev(j, le) * w;
    let sign = if c.inverse { 1.0 } else { -1.0 };
    let _ = writeln!(
        o,
        "    let us = {sub};
    let ur = us & {}u;
    let k1 = rowmap(us) & {}u;
    let row0 = ur == 0u;
    let pg = select(g1 ^ {h}u, g1, row0 || ur == {h}u);
    let wa = f32(k1 + {n1}u * t1) * {};
    let wb = vec2<f32>(cos(wa), sin(wa));",
        n1 - 1,
        n1 - 1,
        lit(sign * std::f64::consts::PI / m as f64),
    );
    for j in 0..e {
        let _ = writeln!(o, "    let uk{j} = t1 + {}u;", k_of(j));
        let _ = writeln!(
            o,
            "    let pk{j} = select({}u - uk{j}, ({n2}u - uk{j}) & {}u, row0);",
            n2 - 1,
            n2 - 1
        );
        let _ = writeln!(o, "    var z{j}: vec2<f32>;");
    }
    let comps: &[&str] = if c.parts >= 2 { &[".x", ".y"] } else { &[""] };
    let trips: Vec<Vec<(&str, usize)>> = comps.iter().map(|&comp| vec![(comp, 0)]).collect();
    let js: Vec<usize> = (0..e).collect();
    exchange(o, c, &trips, &js, &|j, _| {
        (
            format!("(uk{j} << {lc}u) | g1"),
            format!("(pk{j} << {lc}u) | pg"),
        )
    });
    for j in 0..e {
        let wk = if k_of(j) == 0 {
            "wb".to_string()
        } else {
            format!("cmul(wb, {})", w_const(n1 * k_of(j), m, c.inverse))
        };
        let zero = format!("row0 && uk{j} == 0u");
        unpack_value(o, j, &format!("z{j}"), &wk, (k_of(j) == 0).then_some(&zero));
    }
}

/// The partners' trips through workgroup memory: per trip (components, each at an offset), the
/// slots `js` write v_j at `idx(j, off).0`, a barrier, and read z_j from `idx(j, off).1` (indices
/// before padding); a barrier first, so the last round's reads (or the previous trip's) are done.
fn exchange(
    o: &mut String,
    c: &PassConfig,
    trips: &[Vec<(&str, usize)>],
    js: &[usize],
    idx: &dyn Fn(usize, usize) -> (String, String),
) {
    let pad = |x: String| c.index_wgsl(&x);
    for trip in trips {
        let _ = writeln!(o, "    workgroupBarrier();");
        for &(comp, off) in trip {
            for &j in js {
                let i = pad(idx(j, off).0);
                let _ = writeln!(o, "    sh[{i}] = v{j}{comp};");
            }
        }
        let _ = writeln!(o, "    workgroupBarrier();");
        for &(comp, off) in trip {
            for &j in js {
                let i = pad(idx(j, off).1);
                let _ = writeln!(o, "    z{j}{comp} = sh[{i}];");
            }
        }
    }
}

/// exp(∓πi·k/M) (− forward) as a WGSL vec2 literal.
fn w_const(k: usize, m: usize, inverse: bool) -> String {
    let sign = if inverse { 1.0 } else { -1.0 };
    let a = sign * std::f64::consts::PI * k as f64 / m as f64;
    format!("vec2<f32>({}, {})", lit(a.cos()), lit(a.sin()))
}

/// X[k] in place of v_j = Z[k], its partner Z[M − k] in `z`, w^k in `wk` (see
/// [`unpack_in_store`]); where `zero` holds, k = 0, which takes X[0] + i·X[M].
fn unpack_value(o: &mut String, j: usize, z: &str, wk: &str, zero: Option<&str>) {
    let _ = writeln!(
        o,
        "    {{
        let a = 0.5 * (v{j} + vec2<f32>({z}.x, -{z}.y));
        let d = v{j} - vec2<f32>({z}.x, -{z}.y);
        let wk = {wk};
        let x = a + cmul(wk, vec2<f32>(0.5 * d.y, -0.5 * d.x));"
    );
    if let Some(cond) = zero {
        let _ = writeln!(
            o,
            "        v{j} = select(x, vec2<f32>(v{j}.x + v{j}.y, v{j}.x - v{j}.y), {cond});"
        );
    } else {
        let _ = writeln!(o, "        v{j} = x;");
    }
    let _ = writeln!(o, "    }}");
}

/// The unpacking phase: pairs (k, M − k) of each FFT Z of the workgroup, one per thread and turn,
/// X[k] = A + w^k·B with A = (Z[k] + conj Z[M−k]) / 2, B = (Z[k] − conj Z[M−k]) / 2i,
/// w = exp(∓πi / M); k = 0 writes X[0] + i·X[M] (both real) and X[M/2] = Re Z + w^(M/2)·Im Z.
pub(super) fn unpack_phase(o: &mut String, u: Unpack, threads: usize) {
    let (m, f) = (u.m, u.ffts);
    let half = (m / 2).max(1);
    let sign = if u.inverse { 1.0 } else { -1.0 };
    let _ = writeln!(
        o,
        "    for (var i = l; i < {count}u; i += {threads}u) {{
        let b = wg * {f}u + i / {half}u;
        let k = i % {half}u;
        if (b < params.batch) {{
        let base = b * {m}u;
        let zk = dst[base + k];
        if (k == 0u) {{
            dst[base] = vec2<f32>(zk.x + zk.y, zk.x - zk.y);",
        count = f * half,
    );
    let _ = writeln!(
        o,
        "            let zh = dst[base + {h}u];
            dst[base + {h}u] = vec2<f32>(zh.x, {s} * zh.y);",
        h = m / 2,
        s = lit(sign),
    );
    let _ = writeln!(
        o,
        "        }} else {{
            let p = {m}u - k;
            let zp = dst[base + p];
            let a = 0.5 * (zk + vec2<f32>(zp.x, -zp.y));
            let d = zk - vec2<f32>(zp.x, -zp.y);
            let bb = vec2<f32>(0.5 * d.y, -0.5 * d.x);
            let ang = f32(k) * {k};
            let wk = vec2<f32>(cos(ang), sin(ang));
            dst[base + k] = a + cmul(wk, bb);
            // X[M−k] = conj A + w^(M−k)·conj B, w^(M−k) = −conj(w^k).
            dst[base + p] = vec2<f32>(a.x, -a.y) - cmul(vec2<f32>(wk.x, -wk.y), vec2<f32>(bb.x, -bb.y));
        }}
        }}
    }}",
        k = lit(sign * std::f64::consts::PI / m as f64),
    );
}
