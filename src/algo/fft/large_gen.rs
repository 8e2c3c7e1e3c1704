//! The shape of one phase of a large FFT's pass (src/algo/fft/large.rs; its WGSL:
//! src/algo/fft/large_wgsl.rs): C sub-FFTs of size M per workgroup, each on the radix kernel's schedule (rounds of log2 E stages in registers, round
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
//! Workgroup memory holds position p of lane g at (p << log2 C) | g (padded or swizzled:
//! src/algo/fft/large_layout.rs). With `parts` ≥ 2
//! the exchange goes in parts: real parts, then imaginary parts (and with 4 or 8 parts, each of
//! those for one half or quarter of the positions at a time, by the parity of position bits chosen
//! per round trip so that every warp has values in every part: [`PassConfig::part_fn`]), so
//! C·M values need only C·M·8 / parts bytes: a 2^14-point FFT stays one pass, and a 4096-point
//! pass still reads 4 neighbouring columns (32-byte rows), on a 48 KiB adapter.

use super::codegen::{FastConfig, round_los};
use serde::{Deserialize, Serialize};

/// Where element m of sub-FFT s lives in an array of FFTs of size N: the bits of s from the bottom
/// in runs `(width, shift)`, each moved to its shift, the bits above them picking the FFT of the
/// batch (`<< log2 N`), and `m << m_shift` — or, with `m_split = Some((b, hi))`, the low b bits
/// of m at `m_shift` and the rest at `hi`. One run is the four-step's layouts (columns
/// `col + N2·m`, rows `N2·row + m`); the phases of a pass through L2 split a sub-FFT's index over
/// three, and the columns pass of a two-pass complex plan stores its columns in units
/// (`Layout::units`), which the rows pass reads with m split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub runs: [(u32, u32); 3],
    pub m_shift: u32,
    pub m_split: Option<(u32, u32)>,
}

impl Layout {
    /// One run: the low `a` bits of s at `s_shift`.
    pub fn simple(a: u32, s_shift: u32, m_shift: u32) -> Layout {
        Layout {
            runs: [(a, s_shift), (0, 0), (0, 0)],
            m_shift,
            m_split: None,
        }
    }
    /// The array of `n1`-point columns `col + n2·k1` (log2 sizes `l1`, `l2`) stored in units of
    /// 2^`lc` neighbouring columns, each unit's `n1` rows contiguous: cell (k1, col) at
    /// `(col >> lc) << (l1 + lc) | k1 << lc | col mod 2^lc`. The columns pass of a two-pass
    /// complex plan stores so (L2 writes it back in whole units: 2 MiB runs at 2^24) and the rows
    /// pass reads so; returns (the columns' output, the rows' input).
    pub fn units(l1: u32, l2: u32, lc: u32) -> (Layout, Layout) {
        let cols = Layout {
            runs: [(lc, 0), (l2 - lc, l1 + lc), (0, 0)],
            m_shift: lc,
            m_split: None,
        };
        let rows = Layout {
            runs: [(l1, lc), (0, 0), (0, 0)],
            m_shift: 0,
            m_split: Some((lc, l1 + lc)),
        };
        (cols, rows)
    }
    /// Where position `m` lies (its bits as `m_shift` and `m_split` place them).
    pub fn pos(&self, m: usize) -> usize {
        match self.m_split {
            Some((b, hi)) => (m & ((1 << b) - 1)) << self.m_shift | (m >> b) << hi,
            None => m << self.m_shift,
        }
    }
    /// [`Layout::pos`] in WGSL. A position t + j·W of a thread t < W (W a power of two) lies at
    /// pos(t) + pos(j·W): the two have no bits in common, and pos moves bits.
    pub fn pos_wgsl(&self, m: &str) -> String {
        match self.m_split {
            Some((b, hi)) => format!(
                "(((({m}) & {}u) << {}u) | ((({m}) >> {b}u) << {hi}u))",
                (1u32 << b) - 1,
                self.m_shift
            ),
            None => format!("({m} << {}u)", self.m_shift),
        }
    }
    /// Bits of s the runs place (log2 of the sub-FFTs per FFT of size N).
    pub fn width(&self) -> u32 {
        self.runs.iter().map(|r| r.0).sum()
    }
    pub fn addr(&self, log_n: u32, s: usize, m: usize) -> usize {
        let mut a = (s >> self.width()) << log_n | self.pos(m);
        let mut lo = 0;
        for &(w, sh) in &self.runs {
            a |= ((s >> lo) & ((1 << w) - 1)) << sh;
            lo += w;
        }
        a
    }
    /// The WGSL terms, ORed, of sub-FFT `s`'s base address.
    fn base_terms(&self, log_n: u32, s: &str) -> Vec<String> {
        let wd = self.width();
        let mut moves = Vec::new();
        let mut lo = 0;
        for &(w, sh) in &self.runs {
            moves.push((lo, w, sh));
            lo += w;
        }
        let batch = (log_n > wd).then(|| format!("(({s} >> {wd}u) << {log_n}u)"));
        bit_moves(s, batch, &moves)
    }
    /// Sub-FFT `s`'s base address plus the WGSL `add`, added to the last OR term: `t1 | … | (tk + add)`.
    /// WGSL refuses `|` and `+` mixed without parentheses (Chrome's Tint does; naga read
    /// `a | b + c` as `a | (b + c)`, which these parentheses keep); the bits are disjoint, so
    /// it is the base's address plus `add`.
    pub fn base_plus(&self, log_n: u32, s: &str, add: &str) -> String {
        let mut terms = self.base_terms(log_n, s);
        match terms.pop() {
            Some(last) if !terms.is_empty() => format!("{} | ({last} + {add})", terms.join(" | ")),
            Some(last) => format!("{last} + {add}"),
            None => format!("0u + {add}"),
        }
    }
}

/// The WGSL terms (to be ORed) of `extra` and bits [lo, lo + width) of `s` moved to bit `to`, per
/// move.
fn bit_moves(s: &str, extra: Option<String>, moves: &[(u32, u32, u32)]) -> Vec<String> {
    extra
        .into_iter()
        .chain(
            moves
                .iter()
                .filter(|m| m.1 > 0)
                .map(|&(lo, w, to)| format!("((({s} >> {lo}u) & {}u) << {to}u)", (1u32 << w) - 1)),
        )
        .collect()
}

/// The WGSL OR of `terms`; "0u" for none.
fn or(terms: Vec<String>) -> String {
    if terms.is_empty() {
        "0u".into()
    } else {
        terms.join(" | ")
    }
}

impl Serialize for Layout {
    /// `{"runs": [[width, shift], …], "m_shift"}` (empty runs left out), and `"m_split": [b, hi]`
    /// where m is split.
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let runs: Vec<[u32; 2]> = self
            .runs
            .iter()
            .filter(|r| r.0 > 0)
            .map(|r| [r.0, r.1])
            .collect();
        let mut j = serde_json::json!({"runs": runs, "m_shift": self.m_shift});
        if let Some((b, hi)) = self.m_split {
            j["m_split"] = serde_json::json!([b, hi]);
        }
        j.serialize(ser)
    }
}

impl<'de> Deserialize<'de> for Layout {
    /// The form [`Layout`]'s `Serialize` writes (at most three runs).
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Layout, D::Error> {
        #[derive(Deserialize)]
        struct Json {
            runs: Vec<[u32; 2]>,
            m_shift: u32,
            #[serde(default)]
            m_split: Option<[u32; 2]>,
        }
        let j = Json::deserialize(de)?;
        if j.runs.len() > 3 {
            return Err(serde::de::Error::custom("a layout has at most three runs"));
        }
        let mut runs = [(0, 0); 3];
        for (r, [w, s]) in runs.iter_mut().zip(j.runs) {
            *r = (w, s);
        }
        Ok(Layout {
            runs,
            m_shift: j.m_shift,
            m_split: j.m_split.map(|[b, hi]| (b, hi)),
        })
    }
}

/// A number made of bits of the sub-FFT index: runs `(lo, width)` of s, stacked from the bottom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Field(pub [(u32, u32); 2]);

impl Field {
    pub fn value(&self, s: usize) -> usize {
        let mut v = 0;
        let mut at = 0;
        for &(lo, w) in &self.0 {
            v |= ((s >> lo) & ((1 << w) - 1)) << at;
            at += w;
        }
        v
    }
    fn wgsl(&self, s: &str) -> String {
        let mut at = 0;
        let moves: Vec<(u32, u32, u32)> = self
            .0
            .iter()
            .map(|&(lo, w)| {
                at += w;
                (lo, w, at - w)
            })
            .collect();
        or(bit_moves(s, None, &moves))
    }
}

/// The twiddles fused into a phase's store: output k of sub-FFT s times W_N^(u·(v + mult·k)),
/// u and v fields of s. The four-step's columns pass: u = col, v = 0, mult = 1; a pass through L2
/// adds its inner four-step's (u = the inner column, mult = N/M) and the outer one's across its
/// phases (u = col, v = the inner row, mult = the inner column size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Twiddle {
    pub u: Field,
    pub v: Field,
    pub mult: usize,
}

impl Twiddle {
    /// The exponent of output k of sub-FFT s, mod `n`.
    pub fn exponent(&self, s: usize, k: usize, n: usize) -> usize {
        (self.u.value(s) * (self.v.value(s) + self.mult * k)) % n
    }
    pub(super) fn wgsl(&self, s: &str) -> (String, String) {
        (self.u.wgsl(s), self.v.wgsl(s))
    }
}

/// Where a bit of a round's position index comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    /// Bit k of the slot index j.
    Slot(u32),
    /// Bit b of the thread's index in the workgroup.
    Thread(u32),
}

/// How one round trip through workgroup memory splits positions into parts ([`PassConfig::part_fn`]):
/// part bit i is the parity of `position & masks[i]` (i < `bits`); within its part a position's
/// place is the position without bits `drop` (one bit of each mask, highest first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartFn {
    pub bits: u32,
    pub masks: [usize; 2],
    pub drop: [u32; 2],
    /// A slot's part is the same on both sides of the trip.
    pub same_slot: bool,
    /// Every thread has values in every part, and a part is the same for a warp's 32 lanes
    /// (false: the top position bits, the fallback).
    pub uniform: bool,
}

impl PartFn {
    pub fn part(&self, p: usize) -> usize {
        (0..self.bits as usize)
            .map(|i| ((p & self.masks[i]).count_ones() as usize & 1) << i)
            .sum()
    }
    fn drops(&self) -> &[u32] {
        &self.drop[..self.bits as usize]
    }
    /// The place of position p inside its part.
    pub fn compress(&self, p: usize) -> usize {
        self.drops()
            .iter()
            .fold(p, |x, &r| ((x >> (r + 1)) << r) | (x & ((1 << r) - 1)))
    }
    /// The same as a WGSL expression of `x`.
    pub fn compress_wgsl(&self, x: &str) -> String {
        self.drops().iter().fold(x.to_string(), |x, &r| {
            format!(
                "(((({x}) >> {}u) << {r}u) | (({x}) & {}u))",
                r + 1,
                (1u32 << r) - 1
            )
        })
    }
    /// The part of the position `x` (a WGSL expression) as a WGSL expression.
    pub fn part_wgsl(&self, x: &str) -> String {
        let terms: Vec<String> = (0..self.bits as usize)
            .map(|i| format!("((countOneBits(({x}) & {}u) & 1u) << {i}u)", self.masks[i]))
            .collect();
        if terms.is_empty() {
            "0u".into()
        } else {
            terms.join(" | ")
        }
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
    /// The twiddles fused into the store.
    pub twiddle: Option<Twiddle>,
    /// The dispatch this phase belongs to: phases of one dispatch exchange through the pass's
    /// output buffer (L2), one storage barrier apart.
    pub dispatch: usize,
    pub inverse: bool,
    pub pad_shift: Option<u32>,
    /// Instead of padding (f32 exchanges only): workgroup index bit i < 5 (the bank) XORed with
    /// the parity of the index's bits from 5 on under mask i (12 bits a mask, mask i at bit 12·i).
    /// XOR is linear, so a thread's base and a slot's constant still combine by one operation
    /// (`^`), and the array needs no room beyond the values.
    pub swizzle: Option<u64>,
    /// Round trip i's own padding where it differs from `pad_shift` (Some(0): none; trips past
    /// the eighth take `pad_shift`): each trip's two sides conflict least at their own shift.
    pub trip_pad: [Option<u8>; 8],
}

impl PassConfig {
    pub fn w(&self) -> usize {
        self.m / self.e
    }
    pub fn threads(&self) -> usize {
        self.w() * self.c
    }
    pub(super) fn radix(&self) -> FastConfig {
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
    /// Parts of the positions (by their top bits) each component is exchanged in.
    pub fn position_parts(&self) -> usize {
        (self.parts / 2).max(1)
    }
    /// Where position bit p of round `ri` comes from: slot bit k, or bit b of the thread's
    /// index in the workgroup (its role in that round).
    fn sources(&self, ri: usize) -> Vec<Src> {
        let r = self.radix();
        let los = round_los(&r);
        let (lo, last) = (los[ri], ri + 1 == los.len());
        let (lm, le) = (self.m.trailing_zeros(), self.e.trailing_zeros());
        let lanes = if ri == 0 {
            self.load_lanes
        } else {
            self.store_lanes
        };
        // Bit i of the position index t is bit thread(i) of the thread index.
        let thread = |i: u32| {
            Src::Thread(if lanes {
                self.c.trailing_zeros() + i
            } else {
                i
            })
        };
        (0..lm)
            .map(|p| {
                if last {
                    if p < le {
                        Src::Slot(p)
                    } else {
                        thread(lm - 1 - p)
                    }
                } else if p < lo {
                    thread(p)
                } else if p < lo + le {
                    Src::Slot(p - lo)
                } else {
                    thread(p - le)
                }
            })
            .collect()
    }
    /// How the round trip into round `ri` (≥ 1) splits positions into exchange parts.
    ///
    /// Part bit i of position p is the parity of `p & masks[i]`. A mask qualifies when, on both
    /// sides of the trip, it takes at least one slot bit (every thread has values in every part)
    /// and only thread bits above a warp's 32 lanes (a part's condition is the same for every
    /// lane of a warp: no warp waits while others work, none issues half-empty accesses). Masks
    /// whose bits come from the same slot and thread bits on both sides are preferred: then a
    /// slot's part is the same on both sides and each value is read back into the register it
    /// was written from; then masks of slot bits alone. With no qualifying mask the parts are
    /// the top position bits (where half the threads of a part's read or write may wait).
    pub fn part_fn(&self, ri: usize) -> PartFn {
        let pp = self.position_parts();
        let lm = self.m.trailing_zeros();
        if pp == 1 {
            return PartFn::default();
        }
        let (w, r) = (self.sources(ri - 1), self.sources(ri));
        let side = |src: &[Src], mask: usize| {
            let (mut k, mut t, mut lane) = (0usize, 0usize, false);
            for (p, s) in src.iter().enumerate() {
                if mask >> p & 1 == 1 {
                    match *s {
                        Src::Slot(b) => k ^= 1 << b,
                        Src::Thread(b) => {
                            t ^= 1 << b;
                            lane |= b < 5;
                        }
                    }
                }
            }
            (k, t, lane)
        };
        // Candidates: one or two position bits; (mask, same slot and thread bits on both sides,
        // slot vectors w and r, slot bits alone).
        let mut cands = Vec::new();
        for a in (0..lm).rev() {
            for b in (0..=a).rev() {
                let mask = (1usize << a) | (1 << b);
                let ((kw, tw, lw), (kr, tr, lr)) = (side(&w, mask), side(&r, mask));
                if kw != 0 && kr != 0 && !lw && !lr {
                    cands.push((mask, kw == kr && tw == tr, kw, kr, tw == 0 && tr == 0));
                }
            }
        }
        // Then masks of slot bits alone: the same parts for every thread (2^14 in one pass on
        // an H100: 0.806 ms against 0.827–0.831 with a thread bit in the mask).
        cands.sort_by_key(|c| (!c.1, !c.4));
        let top = |i: u32| 1usize << (lm - 1 - i);
        let fallback = PartFn {
            bits: pp.trailing_zeros(),
            masks: [top(0), top(1)],
            drop: [lm - 1, lm.saturating_sub(2)],
            same_slot: false,
            uniform: false,
        };
        if pp == 2 {
            return cands.first().map_or(fallback, |c| PartFn {
                bits: 1,
                masks: [c.0, 0],
                drop: [c.0.ilog2(), 0],
                same_slot: c.1,
                uniform: true,
            });
        }
        // Two part bits: slot vectors independent on both sides, a dropped bit of each mask
        // outside the other.
        for (i, x) in cands.iter().enumerate() {
            for y in &cands[i + 1..] {
                if x.2 == y.2 || x.3 == y.3 {
                    continue;
                }
                let (dx, dy) = (x.0 & !y.0, y.0 & !x.0);
                if dx == 0 || dy == 0 {
                    continue;
                }
                let (rx, ry) = (dx.ilog2(), dy.ilog2());
                return PartFn {
                    bits: 2,
                    masks: [x.0, y.0],
                    drop: [rx.max(ry), rx.min(ry)],
                    same_slot: x.1 && y.1,
                    uniform: true,
                };
            }
        }
        fallback
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
}
