//! The WGSL of one pass of a large FFT (src/algo/fft/large.rs): C sub-FFTs of size M per
//! workgroup, each on the radix kernel's schedule (rounds of log2 E stages in registers, round
//! trips through workgroup memory; src/algo/fft/radix.rs), read from and written to global memory
//! through a [`Layout`] — the index permutation between passes (a bit rotation, i.e. a BPC matrix)
//! fused into the pass's loads and stores — and, in the first pass of a plan, the twiddle factors
//! W_N^(column·k) of the four-step decomposition fused into the last round.
//!
//! Coalescing: the C sub-FFTs of a workgroup are neighbours in memory where the layout strides
//! (a column pass reads row by row), so a thread's role in a round is either *lanes first*
//! (consecutive threads take the C sub-FFTs, then the next row: C·8 contiguous bytes per row) or
//! *positions first* (consecutive threads take consecutive elements of one sub-FFT). Threads can
//! take different roles in different rounds: a round reads what the previous one wrote to
//! workgroup memory, whoever holds it.
//!
//! Workgroup memory holds position p of lane g at (p << log2 C) | g (padded). With `parts` ≥ 2
//! the exchange goes in parts: real parts, then imaginary parts (and with 4 or 8 parts, each of
//! those for one half or quarter of the positions at a time, chosen by the top position bits), so
//! C·M values need only C·M·8 / parts bytes: a 2^14-point FFT stays one pass, and a 4096-point
//! pass still reads 4 neighbouring columns (32-byte rows), on a 48 KiB adapter.

use super::codegen::{FastConfig, bank_max, butterflies, place, round_factors, round_los};
use super::model;
use serde::Serialize;
use std::fmt::Write;

/// Where element m of sub-FFT s lives in an array of FFTs of size N:
/// `((s >> a) << log2 N) | ((s mod 2^a) << s_shift) | (m << m_shift)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// log2 of the sub-FFTs per FFT of size N.
    pub a: u32,
    pub s_shift: u32,
    pub m_shift: u32,
}

impl Layout {
    pub fn addr(&self, log_n: u32, s: usize, m: usize) -> usize {
        ((s >> self.a) << log_n) | ((s & ((1 << self.a) - 1)) << self.s_shift) | (m << self.m_shift)
    }
}

/// One pass: every sub-FFT of size `m` the layouts describe, C per workgroup, S one after another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassConfig {
    /// The whole FFT's size (the batch stride and the twiddles' N).
    pub n: usize,
    pub m: usize,
    pub e: usize,
    /// Sub-FFTs side by side per workgroup (lanes).
    pub c: usize,
    /// Sub-FFTs every lane runs one after another (the next one's loads fly meanwhile).
    pub s: usize,
    /// 1: exchanges of vec2 values; 2: real parts, then imaginary parts; 4, 8: each of those by
    /// halves or quarters of the positions (the memory need divided by `parts`).
    pub parts: usize,
    pub input: Layout,
    pub output: Layout,
    /// Round 0 (the loads): lanes first; else positions first.
    pub load_lanes: bool,
    /// Later rounds (and the stores): lanes first.
    pub store_lanes: bool,
    /// Multiply output k of sub-FFT s by W_N^((s mod 2^a)·k) (a of the input layout).
    pub twiddle: bool,
    pub inverse: bool,
    pub pad_shift: Option<u32>,
}

impl PassConfig {
    pub fn w(&self) -> usize {
        self.m / self.e
    }
    pub fn threads(&self) -> usize {
        self.w() * self.c
    }
    fn radix(&self) -> FastConfig {
        FastConfig {
            n: self.m,
            e: self.e,
            w: self.w(),
            g: 1,
            natural: true,
            staged: false,
            inverse: self.inverse,
            shuffle_below: 0,
            pad_shift: None,
            radix: true,
            s: 1,
        }
    }
    pub fn rounds(&self) -> usize {
        round_los(&self.radix()).len()
    }
    fn pad(&self, a: usize) -> usize {
        a + self.pad_shift.map_or(0, |p| a >> p)
    }
    /// Workgroup array length (elements of vec2, or f32 with two parts); 0 with one round.
    pub fn shared_len(&self) -> usize {
        if self.rounds() > 1 {
            self.pad(self.c * self.m / self.position_parts() - 1) + 1
        } else {
            0
        }
    }
    pub fn shared_bytes(&self) -> usize {
        self.shared_len() * if self.parts >= 2 { 4 } else { 8 }
    }
    /// Parts of the positions (by their top bits) each component is exchanged in.
    pub fn position_parts(&self) -> usize {
        (self.parts / 2).max(1)
    }
    /// Positions of one part (the low bits kept in workgroup memory).
    fn part_mask(&self) -> usize {
        self.m / self.position_parts() - 1
    }
    /// Thread `l`'s (position index t, lane g) in round 0 (`first`) or later.
    pub fn role(&self, l: usize, first: bool) -> (usize, usize) {
        let lanes = if first {
            self.load_lanes
        } else {
            self.store_lanes
        };
        if lanes {
            (l / self.c, l % self.c)
        } else {
            (l % self.w(), l / self.w())
        }
    }
    /// Workgroup-memory bank conflicts of every round trip (32 banks of 4 bytes, warps of 32):
    /// the sum over warp requests of the most distinct words one bank serves.
    pub fn exchange_cost(&self) -> usize {
        let r = self.radix();
        let los = round_los(&r);
        if los.len() < 2 {
            return 0;
        }
        let lc = self.c.trailing_zeros();
        let mut cost = 0;
        let mut words = Vec::with_capacity(64);
        for (ri, &lo) in los.iter().enumerate() {
            let last = ri + 1 == los.len();
            for warp in (0..self.threads()).step_by(32) {
                for j in 0..self.e {
                    words.clear();
                    for l in warp..(warp + 32).min(self.threads()) {
                        let (t, g) = self.role(l, ri == 0);
                        let p = place(&r, lo, last, t, j) & self.part_mask();
                        let a = self.pad((p << lc) | g);
                        if self.parts >= 2 {
                            words.push(a);
                        } else {
                            words.extend([2 * a, 2 * a + 1]);
                        }
                    }
                    let m = bank_max(&mut words);
                    cost += m * if ri > 0 && !last { 2 } else { 1 } * self.parts;
                }
            }
        }
        cost
    }
    /// The padding with the fewest conflicts that fits `max_bytes` (ties: less memory).
    pub fn choose_pad(mut self, max_bytes: usize) -> Option<PassConfig> {
        self.pad_shift = None;
        if self.shared_bytes() > max_bytes {
            return None;
        }
        if self.rounds() < 2 {
            return Some(self);
        }
        let bits = (self.c * self.m).trailing_zeros();
        let mut best = (self.exchange_cost(), self.shared_len(), None);
        for p in 3..bits {
            let cand = PassConfig {
                pad_shift: Some(p),
                ..self
            };
            if cand.shared_bytes() > max_bytes {
                continue;
            }
            let key = (cand.exchange_cost(), cand.shared_len());
            if key < (best.0, best.1) {
                best = (key.0, key.1, Some(p));
            }
        }
        self.pad_shift = best.2;
        Some(self)
    }
}

fn layout_base(l: &Layout, log_n: u32, s: &str) -> String {
    let mut v = Vec::new();
    if log_n > l.a {
        v.push(format!("(({s} >> {}u) << {log_n}u)", l.a));
    }
    if l.a > 0 {
        v.push(format!(
            "(({s} & {}u) << {}u)",
            (1u32 << l.a) - 1,
            l.s_shift
        ));
    }
    if v.is_empty() {
        "0u".into()
    } else {
        v.join(" | ")
    }
}

/// The WGSL of one pass. Bindings: src, dst (vec2<f32>), tw (the M-point table of
/// [`super::plan::twiddles`]), params { total sub-FFTs, workgroups }.
pub fn shader(c: &PassConfig) -> String {
    let r = c.radix();
    let (m, e, w, nc, sq) = (c.m, c.e, c.w(), c.c, c.s);
    let (lm, le, lw, lc) = (
        m.trailing_zeros(),
        e.trailing_zeros(),
        w.trailing_zeros(),
        nc.trailing_zeros(),
    );
    let ln = c.n.trailing_zeros();
    let sign = if c.inverse { 1.0 } else { -1.0 };
    let los = round_los(&r);
    let nr = los.len();
    let elem = if c.parts >= 2 { "f32" } else { "vec2<f32>" };
    let mut s = String::new();
    let o = &mut s;
    let _ = writeln!(
        o,
        "// Large-FFT pass (generated by src/algo/fft/large_gen.rs): {nc} sub-FFTs of M = {m} (E = {e}, \
         W = {w}) per workgroup, S = {sq}, of an FFT of N = {}; in {:?}, out {:?}; lanes first: load {}, \
         store {}; twiddle {}; {}; {} part(s); rounds with lo bits {los:?}; padding {:?}.",
        c.n,
        c.input,
        c.output,
        c.load_lanes,
        c.store_lanes,
        c.twiddle,
        if c.inverse { "inverse" } else { "forward" },
        c.parts,
        c.pad_shift
    );
    let _ = writeln!(
        o,
        "struct Params {{ total: u32, groups: u32, _a: u32, _b: u32 }}
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
// tw[k] = exp(-+2 pi i k / M), k < M/2 (f64 on the CPU; conjugated for the inverse).
@group(0) @binding(2) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> params: Params;"
    );
    if c.shared_len() > 0 {
        let _ = writeln!(o, "var<workgroup> sh: array<{elem}, {}>;", c.shared_len());
    }
    let _ = writeln!(
        o,
        "
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {{
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}}"
    );
    if c.twiddle {
        let _ = writeln!(
            o,
            "
// exp(-+2 pi i r / N) for r < N, the angle taken in (-pi, pi].
fn cis(r: u32) -> vec2<f32> {{
    let q = select(i32(r), i32(r) - {n}, r > {h}u);
    let a = f32(q) * {k};
    return vec2<f32>(cos(a), sin(a));
}}",
            n = c.n,
            h = c.n / 2,
            k = super::codegen::lit(sign * std::f64::consts::TAU / c.n as f64),
        );
    }
    let role = |first: bool| -> (String, String) {
        let lanes = if first { c.load_lanes } else { c.store_lanes };
        if lanes {
            (format!("l >> {lc}u"), format!("l & {}u", nc - 1))
        } else {
            (format!("l & {}u", w - 1), format!("l >> {lw}u"))
        }
    };
    let (t0, g0) = role(true);
    let (t1, g1) = role(false);
    let _ = writeln!(
        o,
        "
@compute @workgroup_size({})
fn main(@builtin(local_invocation_index) l: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
    let wg = wid.x + wid.y * nwg.x; // @lens wg wg; lid l
    if (wg >= params.groups) {{ return; }}   // uniform: the whole workgroup leaves
    let t0 = {t0};
    let g0 = {g0};
    let t1 = {t1};
    let g1 = {g1};",
        c.threads()
    );
    if w == 1 {
        let _ = writeln!(o, "    _ = tw[0];");
    }
    // Round factors B = tw[(t mod 2^lo) << (log M - top)] of the round's role.
    let mut top = lm;
    for (ri, &lo) in los.iter().enumerate() {
        if lo > 0 {
            let t = if ri == 0 { "t0" } else { "t1" };
            let i = format!("({t} & {}u) << {}u", (1u32 << lo) - 1, lm - top);
            let _ = writeln!(o, "    let tb{ri} = tw[{i}]; // @lens read2 tw {i}");
        }
        top = lo;
    }
    let sub = |it: &str, g: &str| format!("(wg * {sq}u + {it}) * {nc}u + {g}");
    let load = |o: &mut String, indent: &str, var: &str, sexpr: &str| {
        let _ = writeln!(o, "{indent}let ls = min({sexpr}, params.total - 1u);");
        let _ = writeln!(
            o,
            "{indent}let lb = {} + (t0 << {}u);",
            layout_base(&c.input, ln, "ls"),
            c.input.m_shift
        );
        for j in 0..e {
            let i = format!("lb + {}u", (j * w) << c.input.m_shift);
            let _ = writeln!(o, "{indent}{var}{j} = src[{i}]; // @lens read2 src {i}");
        }
    };
    for j in 0..e {
        let _ = writeln!(o, "    var u{j}: vec2<f32>;");
    }
    let _ = writeln!(o, "    {{");
    load(o, "    ", "u", &sub("0u", "g0"));
    let _ = writeln!(o, "    }}");
    let _ = writeln!(o, "    for (var it = 0u; it < {sq}u; it++) {{");
    for j in 0..e {
        let _ = writeln!(o, "    var v{j} = u{j};");
    }
    if c.position_parts() > 1 && nr > 1 {
        for j in 0..e {
            let _ = writeln!(o, "    var n{j}: vec2<f32>;");
        }
    }
    let mut top = lm;
    for (ri, &lo) in los.iter().enumerate() {
        let last = ri + 1 == nr;
        if ri > 0 {
            // Round trip: the previous round's positions out, this round's in (each thread
            // writes back the positions it read, so no other thread's reads are overwritten).
            let (pw, aw) = addr(c, ri - 1, los[ri - 1], false);
            let (pr, ar) = addr(c, ri, lo, last);
            let _ = writeln!(o, "    let a{}w = {aw};", ri - 1);
            let _ = writeln!(o, "    let a{ri}r = {ar};");
            let pp = c.position_parts();
            let top_shift = lm - pp.trailing_zeros();
            if pp > 1 {
                // The part of slot 0's position (its top bits); slot j adds constant bits.
                let _ = writeln!(o, "    let h{}w = {pw} >> {top_shift}u;", ri - 1);
                let _ = writeln!(o, "    let h{ri}r = {pr} >> {top_shift}u;");
            }
            let comps: &[&str] = if c.parts >= 2 { &[".x", ".y"] } else { &[""] };
            let sfx = if c.parts >= 2 { "" } else { "2" };
            let cond = |h: String, bits: usize, q: usize| -> String {
                if pp == 1 {
                    String::new()
                } else {
                    format!("if (({h} | {}u) == {q}u) ", bits >> top_shift)
                }
            };
            // With position parts a slot can be read before its old value is written out (its
            // place differs between the rounds): reads go to fresh registers n_j then.
            let dst = if pp > 1 { "n" } else { "v" };
            // Parts share workgroup places: the previous round trip's last reads must be done
            // before this one writes (one part's place is another part's too).
            let mut first = !(pp > 1 && ri > 1);
            for comp in comps {
                for q in 0..pp {
                    if !first {
                        // Every read of the previous part is done before its places are reused.
                        let _ = writeln!(o, "    workgroupBarrier();");
                    }
                    first = false;
                    let pl = los[ri - 1];
                    for j in 0..e {
                        let i = format!("a{}w + {}u", ri - 1, slot_off(c, pl, false, j));
                        let cnd = cond(format!("h{}w", ri - 1), slot_bits(pl, false, j), q);
                        let _ = writeln!(
                            o,
                            "    {cnd}{{ sh[{i}] = v{j}{comp}; }} // @lens wg-write{sfx} sh {i}"
                        );
                    }
                    let _ = writeln!(o, "    workgroupBarrier();");
                    for j in 0..e {
                        let i = format!("a{ri}r + {}u", slot_off(c, lo, last, j));
                        let cnd = cond(format!("h{ri}r"), slot_bits(lo, last, j), q);
                        let _ = writeln!(
                            o,
                            "    {cnd}{{ {dst}{j}{comp} = sh[{i}]; }} // @lens wg-read{sfx} sh {i}"
                        );
                    }
                }
            }
            if pp > 1 {
                for j in 0..e {
                    let _ = writeln!(o, "    v{j} = n{j};");
                }
            }
        }
        let _ = writeln!(
            o,
            "    // round {ri}: stages on position bits {} … {lo}",
            top - 1
        );
        let _ = writeln!(o, "    {{");
        for b in (lo..top).rev() {
            butterflies(o, e, 1usize << (b - lo), sign, None);
        }
        if lo > 0 {
            round_factors(o, e, top - lo, &format!("tb{ri}"));
        }
        let _ = writeln!(o, "    }}");
        if ri == 0 {
            // The next sub-FFTs' loads fly while these compute.
            let _ = writeln!(o, "    if (it + 1u < {sq}u) {{");
            load(o, "        ", "u", &sub("it + 1u", "g0"));
            let _ = writeln!(o, "    }}");
            if nr > 1 && sq > 1 {
                let _ = writeln!(
                    o,
                    "    workgroupBarrier();   // the previous sub-FFTs' last reads are done"
                );
            }
        }
        if last {
            // Position bitrev(t)·E + j holds X[t + W·bitrev(j)].
            let _ = writeln!(o, "    let ss = {};", sub("it", "g1"));
            let _ = writeln!(o, "    if (ss < params.total) {{");
            if c.twiddle {
                let a = c.input.a;
                let _ = writeln!(o, "        let col = ss & {}u;", (1u32 << a) - 1);
                let _ = writeln!(o, "        let f0 = cis((col * t1) & {}u);", c.n - 1);
                let _ = writeln!(o, "        let q1 = cis((col * {w}u) & {}u);", c.n - 1);
                for q in 2..e {
                    let _ = writeln!(o, "        let q{q} = cmul(q{}, q{});", q / 2, q - q / 2);
                }
            }
            let _ = writeln!(
                o,
                "        let sb = {} + (t1 << {}u);",
                layout_base(&c.output, ln, "ss"),
                c.output.m_shift
            );
            for j in 0..e {
                let q = model::bitrev(j, le);
                let i = format!("sb + {}u", (q * w) << c.output.m_shift);
                let val = if !c.twiddle {
                    format!("v{j}")
                } else if q == 0 {
                    format!("cmul(v{j}, f0)")
                } else {
                    format!("cmul(v{j}, cmul(f0, q{q}))")
                };
                let _ = writeln!(o, "        dst[{i}] = {val}; // @lens write2 dst {i}");
            }
            let _ = writeln!(o, "    }}");
        }
        top = lo;
    }
    let _ = writeln!(o, "    }}");
    let _ = writeln!(o, "}}");
    s
}

/// Slot 0's position in round `ri` (the thread's role in that round) and its padded workgroup
/// index (the position's bits below the part's, then the lane bits).
fn addr(c: &PassConfig, ri: usize, lo: u32, last: bool) -> (String, String) {
    let (lw, le, lc) = (
        c.w().trailing_zeros(),
        c.e.trailing_zeros(),
        c.c.trailing_zeros(),
    );
    let (t, g) = if ri == 0 { ("t0", "g0") } else { ("t1", "g1") };
    let pos = if last {
        format!("((reverseBits({t}) >> {}u) << {le}u)", 32 - lw)
    } else {
        format!(
            "(({t} & {}u) | (({t} >> {lo}u) << {}u))",
            (1u32 << lo) - 1,
            lo + le
        )
    };
    let base = if c.position_parts() > 1 {
        format!("((({pos} & {}u) << {lc}u) | {g})", c.part_mask())
    } else {
        format!("(({pos} << {lc}u) | {g})")
    };
    let idx = match c.pad_shift {
        Some(ps) => format!("{base} + ({base} >> {ps}u)"),
        None => base,
    };
    (pos, idx)
}

/// Slot j's position bits (slot bits and thread bits never overlap).
fn slot_bits(lo: u32, last: bool, j: usize) -> usize {
    if last { j } else { j << lo }
}

/// Slot j's padded offset from slot 0 inside its part (padding adds over disjoint bits).
fn slot_off(c: &PassConfig, lo: u32, last: bool, j: usize) -> usize {
    let lc = c.c.trailing_zeros();
    c.pad((slot_bits(lo, last, j) & c.part_mask()) << lc)
}
