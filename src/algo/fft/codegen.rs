//! What the fast and radix kernel generators share: the configuration (`FastConfig`, with its
//! padding and round layout), WGSL literal and complex-constant helpers, the kernel preamble and
//! the unrolled butterflies. Both generators depend on this module, not on each other.

use super::model;
use std::fmt::Write;

/// Largest E the generator unrolls (64 complex values = 128 registers of data per thread).
pub const MAX_E: usize = 64;

/// One fast-kernel configuration (all parameters checked by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastConfig {
    pub n: usize,
    pub e: usize,
    pub w: usize,
    /// FFTs per workgroup.
    pub g: usize,
    pub natural: bool,
    /// Natural order through workgroup memory (else direct 16-byte stores from registers).
    pub staged: bool,
    pub inverse: bool,
    /// Exchanges at a stride below this use subgroupShuffleXor (0: none do).
    pub shuffle_below: usize,
    /// Staging buffer padding: index a is stored at a + (a >> p) (None: unpadded).
    pub pad_shift: Option<u32>,
    /// The radix schedule (src/algo/fft/radix.rs) instead of the seed's exchanges.
    pub radix: bool,
    /// Radix kernel: FFTs each thread group runs one after another (S; 1 for the fast kernel).
    pub s: usize,
}

impl FastConfig {
    /// A configuration with the staging padding chosen for `max_bytes` of workgroup memory; None
    /// when even the unpadded kernel needs more.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        e: usize,
        g: usize,
        natural: bool,
        staged: bool,
        inverse: bool,
        shuffle_below: usize,
        max_bytes: usize,
    ) -> Option<FastConfig> {
        let mut c = FastConfig {
            natural,
            staged,
            shuffle_below,
            ..FastConfig::plain(n, e, g, inverse)
        };
        if c.shared_bytes() > max_bytes {
            return None;
        }
        if c.staging() {
            c.pad_shift = choose_pad(&c, max_bytes, staging_cost);
        }
        Some(c)
    }

    /// A radix-kernel configuration (natural order), padding chosen for `max_bytes`; None when
    /// even the unpadded kernel needs more.
    pub fn radix(
        n: usize,
        e: usize,
        g: usize,
        s: usize,
        inverse: bool,
        max_bytes: usize,
    ) -> Option<FastConfig> {
        let mut c = FastConfig {
            natural: true,
            radix: true,
            s,
            ..FastConfig::plain(n, e, g, inverse)
        };
        if c.shared_bytes() > max_bytes {
            return None;
        }
        if c.rounds() > 1 {
            c.pad_shift = choose_pad(&c, max_bytes, exchange_cost);
        }
        Some(c)
    }

    /// The seed's schedule in raw order, unpadded: what the constructors start from.
    fn plain(n: usize, e: usize, g: usize, inverse: bool) -> FastConfig {
        FastConfig {
            n,
            e,
            w: n / e,
            g,
            natural: false,
            staged: false,
            inverse,
            shuffle_below: 0,
            pad_shift: None,
            radix: false,
            s: 1,
        }
    }

    /// Rounds of the radix schedule (1 + round trips through workgroup memory).
    pub fn rounds(&self) -> usize {
        round_los(self).len()
    }

    pub fn log_n(&self) -> u32 {
        self.n.trailing_zeros()
    }
    pub fn log_e(&self) -> u32 {
        self.e.trailing_zeros()
    }
    pub fn log_w(&self) -> u32 {
        self.w.trailing_zeros()
    }

    /// Natural order staged through workgroup memory.
    pub fn staging(&self) -> bool {
        self.natural && self.staged
    }

    /// Natural order stored straight from registers as vec4 pairs (E ≥ 4; E = 2 stores vec2s).
    pub(super) fn direct_pairs(&self) -> bool {
        self.natural && !self.staged && self.e >= 4
    }

    /// Threads per workgroup: W · G.
    pub fn threads(&self) -> usize {
        self.w * self.g
    }

    /// Whether the exchange at stride `s` goes through workgroup memory.
    pub fn in_memory(&self, s: usize) -> bool {
        self.shuffle_below == 0 || s >= self.shuffle_below
    }

    /// Exchanges through workgroup memory.
    pub fn memory_exchanges(&self) -> usize {
        (0..self.log_w())
            .filter(|&k| self.in_memory(1 << k))
            .count()
    }

    /// Exchanges by subgroup shuffle.
    pub fn shuffle_exchanges(&self) -> usize {
        self.log_w() as usize - self.memory_exchanges()
    }

    pub(crate) fn pad(&self, a: usize) -> usize {
        a + self.pad_shift.map_or(0, |p| a >> p)
    }

    /// Length of the workgroup array (vec2<f32>): the staging block of G·N values (padded) for
    /// staged natural order, else one or two exchange buffers of G·N/2.
    pub fn shared_len(&self) -> usize {
        let block = self.g * self.n;
        if self.radix {
            if self.rounds() > 1 {
                self.pad(block - 1) + 1
            } else {
                0
            }
        } else if self.staging() {
            self.pad(block - 1) + 1
        } else {
            block / 2 * self.memory_exchanges().min(2)
        }
    }

    pub fn shared_bytes(&self) -> usize {
        self.shared_len() * 8
    }

    /// F(t + j·W) = rev(t) part | per-slot constant: the constant for slot j.
    pub(super) fn f_const(&self, j: usize) -> usize {
        let lw = self.log_w();
        model::bitrev(((j >> 1) << (lw + 1)) | (j & 1), self.log_n())
    }
}

/// Shared-memory bank conflicts of the natural-order staging (32 banks of 4 bytes, warps of 32):
/// the sum over all warp requests of the largest number of distinct words one bank serves.
pub(super) fn staging_cost(c: &FastConfig) -> usize {
    let threads = c.threads();
    let (ln, le) = (c.log_n(), c.log_e());
    let mut cost = 0;
    let mut words = Vec::with_capacity(64);
    let mut request = |addrs: &mut dyn Iterator<Item = usize>| {
        words.clear();
        for a in addrs {
            words.push(2 * a);
            words.push(2 * a + 1);
        }
        cost += bank_max(&mut words);
    };
    for warp in (0..threads).step_by(32) {
        let lanes = warp..(warp + 32).min(threads);
        for j in 0..c.e {
            request(&mut lanes.clone().map(|l| {
                let (g, t) = (l / c.w, l % c.w);
                c.pad(g * c.n + model::f_map(t + j * c.w, ln, le))
            }));
        }
        for i in 0..c.e {
            request(&mut lanes.clone().map(|l| c.pad(l + i * threads)));
        }
    }
    cost
}

/// The padding shift with the fewest bank conflicts by `cost` (the fast kernel's staging or the
/// radix kernel's rounds) that fits `max_bytes` (ties: less memory; None: unpadded).
pub(super) fn choose_pad(
    c: &FastConfig,
    max_bytes: usize,
    cost: fn(&FastConfig) -> usize,
) -> Option<u32> {
    let block_bits = (c.g * c.n).next_power_of_two().trailing_zeros();
    let mut best = (cost(c), c.shared_len(), None);
    for p in 3..block_bits {
        let cand = FastConfig {
            pad_shift: Some(p),
            ..*c
        };
        if cand.shared_bytes() > max_bytes {
            continue;
        }
        let key = (cost(&cand), cand.shared_len(), Some(p));
        if (key.0, key.1) < (best.0, best.1) {
            best = key;
        }
    }
    best.2
}

/// A WGSL f32 literal.
pub(super) fn lit(v: f64) -> String {
    let f = v as f32;
    if f == f.trunc() && f.abs() < 1e6 {
        format!("{f:.1}f")
    } else {
        format!("{f:?}f")
    }
}

/// exp(i·angle) with components snapped to 0 / ±1 where exact.
pub(crate) fn unit(angle: f64) -> (f64, f64) {
    let snap = |v: f64| {
        if v.abs() < 1e-12 {
            0.0
        } else if (v - 1.0).abs() < 1e-12 {
            1.0
        } else if (v + 1.0).abs() < 1e-12 {
            -1.0
        } else {
            v
        }
    };
    (snap(angle.cos()), snap(angle.sin()))
}

/// `x` times the constant `c`, exact for 1, −1, ±i.
pub(crate) fn cmul_const(x: &str, c: (f64, f64)) -> String {
    match c {
        (1.0, 0.0) => x.to_string(),
        (-1.0, 0.0) => format!("(-{x})"),
        (0.0, -1.0) => format!("vec2<f32>({x}.y, -{x}.x)"),
        (0.0, 1.0) => format!("vec2<f32>(-{x}.y, {x}.x)"),
        (re, im) => format!("cmul({x}, vec2<f32>({}, {}))", lit(re), lit(im)),
    }
}

/// The head the fast and radix generators share: Params and bindings (`dst` of `dst_ty`), the
/// workgroup array where the configuration needs one, cmul, and the entry point down to thread t
/// of FFT slot g; with `loads`, also FFT b and its E loads v_j = src[b·N + t + j·W] (a tail
/// workgroup's FFTs past the batch load the last FFT and must store nothing).
pub(crate) fn preamble(o: &mut String, c: &FastConfig, dst_ty: &str, loads: bool) {
    let (n, e, w, g) = (c.n, c.e, c.w, c.g);
    let _ = writeln!(
        o,
        "struct Params {{ batch: u32, groups: u32, total: u32, _c: u32 }}
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<{dst_ty}>;
// tw[k] = exp(-+2 pi i k / N), k < N/2 (f64 on the CPU; conjugated for the inverse).
@group(0) @binding(2) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> params: Params;"
    );
    if c.shared_len() > 0 {
        let _ = writeln!(
            o,
            "var<workgroup> sh: array<vec2<f32>, {}>;",
            c.shared_len()
        );
    }
    entry(o, c.threads());
    let _ = writeln!(
        o,
        "    let t = l & {}u;\n    let g = l >> {}u;",
        w - 1,
        c.log_w()
    );
    if w == 1 {
        // No twiddle is loaded (every twiddle is a constant); the binding stays in the layout
        // (a phony read the compiler drops: not a lens access site).
        let _ = writeln!(o, "    _ = tw[0];");
    }
    if !loads {
        return;
    }
    let _ = writeln!(
        o,
        "    let fft = wg * {g}u + g;
    // A tail workgroup's FFTs past the batch compute on the last FFT's data and store nothing.
    let b = min(fft, params.batch - 1u);
    let base = b * {n}u + t;"
    );
    for j in 0..e {
        let i = format!("base + {}u", j * w);
        let _ = writeln!(o, "    var v{j} = src[{i}];");
    }
}

/// cmul, then the entry point of `threads` invocations down to the workgroup's index `wg` (2D
/// grids past 65535 workgroups); workgroups past `params.groups` leave.
pub(crate) fn entry(o: &mut String, threads: usize) {
    entry_with(o, threads, "");
}

/// [`entry`] with more builtins (`extra`: ", @builtin(…) name: type" each).
pub(crate) fn entry_with(o: &mut String, threads: usize, extra: &str) {
    let _ = writeln!(
        o,
        "
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {{
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}}

@compute @workgroup_size({threads})
fn main(@builtin(local_invocation_index) l: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>{extra}) {{
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {{ return; }}   // uniform: the whole workgroup leaves"
    );
}

/// The radix schedule's round factors B of every round with lo > 0, read from `tw` (a table of
/// 2^`table_log` / 2 values) beside the data loads: tb_r = tw[(t mod 2^lo) << (table_log − top)],
/// `t(r)` naming the thread's position index in round r; `top` starts at log2 of the sub-FFT.
pub(crate) fn round_factor_loads(
    o: &mut String,
    los: &[u32],
    mut top: u32,
    table_log: u32,
    t: &dyn Fn(usize) -> &'static str,
) {
    for (r, &lo) in los.iter().enumerate() {
        if lo > 0 {
            let i = format!("({} & {}u) << {}u", t(r), (1u32 << lo) - 1, table_log - top);
            let _ = writeln!(o, "    let tb{r} = tw[{i}];");
        }
        top = lo;
    }
}

/// Round `r` of the radix schedule in registers: a comment naming its position bits, then the
/// stages on bits top − 1 … lo (constant twiddles only).
pub(crate) fn round_stages(o: &mut String, e: usize, r: usize, top: u32, lo: u32, sign: f64) {
    let _ = writeln!(
        o,
        "    // round {r}: stages on position bits {} … {lo}",
        top - 1
    );
    for b in (lo..top).rev() {
        butterflies(o, e, 1usize << (b - lo), sign, None);
    }
}

/// The position thread `t`'s slot 0 holds in a round of the radix schedule on M = 2^`log_m`
/// points (slot j adds j << lo; in the last round j): the thread's bits around the round's slot
/// bits, or in the last round bit-reversed above them.
pub(crate) fn slot0_position(t: &str, lo: u32, last: bool, log_m: u32, le: u32) -> String {
    if last {
        format!("(reverseBits({t}) >> {}u)", 32 - log_m)
    } else {
        format!(
            "(({t} & {}u) | (({t} >> {lo}u) << {}u))",
            (1u32 << lo) - 1,
            lo + le
        )
    }
}

/// `var v_j = u_j;` for every slot: the FFT loop's working copy of the prefetched values.
pub(crate) fn take_prefetched(o: &mut String, e: usize) {
    for j in 0..e {
        let _ = writeln!(o, "    var v{j} = u{j};");
    }
}

/// One radix-2 DIF stage inside a thread, as a WGSL block: pairs (j, j + h) for the slots j with
/// bit h clear; the pair's twiddle is w0 · exp(∓πi·(j mod h)/h), with w0 = `tw[w0]` (a table
/// read at the WGSL index expression `w0`, once per stage) or 1 (None: constants only).
pub(crate) fn butterflies(o: &mut String, e: usize, h: usize, sign: f64, w0: Option<&str>) {
    let _ = writeln!(o, "    {{");
    let cst = |kk: usize| unit(sign * std::f64::consts::PI * kk as f64 / h as f64);
    if let Some(w0) = w0 {
        let _ = writeln!(o, "        let w0 = tw[{w0}];");
        for kk in 1..h {
            let _ = writeln!(o, "        let w{kk} = {};", cmul_const("w0", cst(kk)));
        }
    }
    for j in (0..e).filter(|j| j & h == 0) {
        let k = j + h;
        let kk = j & (h - 1);
        let tw = if w0.is_some() {
            format!("cmul(d, w{kk})")
        } else {
            cmul_const("d", cst(kk))
        };
        let _ = writeln!(
            o,
            "        {{ let a = v{j}; let d = a - v{k}; v{j} = a + v{k}; v{k} = {tw}; }}"
        );
    }
    let _ = writeln!(o, "    }}");
}

/// The end of a radix round: slot j times B^bitrev(j) over the round's k slot bits, B = `tb`;
/// powers of B from two smaller ones (short dependency chains).
pub(crate) fn round_factors(o: &mut String, e: usize, k: u32, tb: &str) {
    let _ = writeln!(o, "    let pw1 = {tb};");
    for q in 2..(1usize << k) {
        let _ = writeln!(o, "    let pw{q} = cmul(pw{}, pw{});", q / 2, q - q / 2);
    }
    for j in 1..e {
        let q = model::bitrev(j & ((1 << k) - 1), k);
        if q > 0 {
            let _ = writeln!(o, "    v{j} = cmul(v{j}, pw{q});");
        }
    }
}

/// The most distinct 4-byte words one of 32 banks serves in one warp request (`words`: the
/// request's word addresses; sorted and deduplicated here).
pub(crate) fn bank_max(words: &mut Vec<usize>) -> usize {
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0usize; 32];
    for w in words.iter() {
        per_bank[w % 32] += 1;
    }
    per_bank.iter().max().copied().unwrap_or(0)
}

/// The lo bit of each round: log2 W, then down by log2 E to 0.
pub fn round_los(c: &FastConfig) -> Vec<u32> {
    let (lw, le) = (c.log_w(), c.log_e());
    let mut v = vec![lw];
    let mut lo = lw;
    while lo > 0 {
        lo = lo.saturating_sub(le);
        v.push(lo);
    }
    v
}

/// The position thread t's slot j holds in the round whose lo bit is `lo` (`last`: the round
/// that stores).
pub fn place(c: &FastConfig, lo: u32, last: bool, t: usize, j: usize) -> usize {
    let (le, lw) = (c.log_e(), c.log_w());
    if last {
        return (model::bitrev(t, lw) << le) | j;
    }
    let low = t & ((1 << lo) - 1);
    let high = t >> lo;
    low | (j << lo) | (high << (lo + le))
}

/// Workgroup-memory bank conflicts of every transpose (32 banks of 4 bytes, warps of 32): the sum
/// over warp requests of the most distinct words one bank serves.
pub fn exchange_cost(c: &FastConfig) -> usize {
    let los = round_los(c);
    let threads = c.threads();
    let mut cost = 0;
    let mut words = Vec::with_capacity(64);
    for (r, &lo) in los.iter().enumerate() {
        // Round r is written (r < last) and read (r > 0).
        let last = r + 1 == los.len();
        if los.len() == 1 {
            break;
        }
        for warp in (0..threads).step_by(32) {
            for j in 0..c.e {
                words.clear();
                for l in warp..(warp + 32).min(threads) {
                    let (g, t) = (l / c.w, l % c.w);
                    let a = c.pad(g * c.n + place(c, lo, last, t, j));
                    words.extend([2 * a, 2 * a + 1]);
                }
                let m = bank_max(&mut words);
                // Rounds in the middle are both read and written.
                cost += if r > 0 && !last { 2 * m } else { m };
            }
        }
    }
    cost
}
