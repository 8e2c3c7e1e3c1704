//! Where a large-FFT phase keeps its values in workgroup memory between rounds
//! (src/algo/fft/large_gen.rs describes the phase): the index (p << log2 C) | g of position p of
//! lane g, padded by one word every 2^shift (one shift for the pass, or one a round trip where the
//! exchange goes in parts of the positions), or swizzled (bank bits XORed with parities of the
//! higher index bits). A bank-conflict model of every round trip ([`PassConfig::exchange_cost`])
//! chooses among them; which candidates a pass may take is what the H100 timed.

use super::ExchangeLayout;
use super::codegen::{bank_max, place, round_los};
use super::large_gen::PassConfig;

impl PassConfig {
    pub(super) fn pad(&self, a: usize) -> usize {
        a + self.pad_shift.map_or(0, |p| a >> p)
    }
    /// Round trip i's padding shift.
    pub(super) fn trip_shift(&self, i: usize) -> Option<u32> {
        match self.trip_pad.get(i).copied().flatten() {
            Some(0) => None,
            Some(s) => Some(s as u32),
            None => self.pad_shift,
        }
    }
    /// Where round trip i keeps workgroup index `a`.
    pub(super) fn trip_index(&self, i: usize, a: usize) -> usize {
        match self.swizzle {
            Some(sw) => a ^ swizzle_bank(sw, a >> 5),
            None => a + self.trip_shift(i).map_or(0, |p| a >> p),
        }
    }
    /// Where the pass's `pad_shift` (or swizzle) keeps workgroup index `x`, a WGSL expression
    /// (the fused unpacking's trips).
    pub(super) fn index_wgsl(&self, x: &str) -> String {
        match (self.swizzle, self.pad_shift) {
            (Some(sw), _) => {
                let terms: Vec<String> = (0..5)
                    .filter(|i| (sw >> (12 * i)) & 0xfff != 0)
                    .map(|i| {
                        format!(
                            "((countOneBits(({x}) & {}u) & 1u) << {i}u)",
                            ((sw >> (12 * i)) & 0xfff) << 5
                        )
                    })
                    .collect();
                if terms.is_empty() {
                    x.to_string()
                } else {
                    format!("({x}) ^ ({})", terms.join(" | "))
                }
            }
            (None, Some(ps)) => format!("({x}) + (({x}) >> {ps}u)"),
            (None, None) => x.to_string(),
        }
    }
    /// `swizzled`, `padded` (in any round trip) or `plain`: the plan's word for the layout.
    pub fn layout_name(&self) -> &'static str {
        if self.swizzle.is_some() {
            "swizzled"
        } else if (0..self.rounds().saturating_sub(1)).any(|i| self.trip_shift(i).is_some()) {
            "padded"
        } else {
            "plain"
        }
    }
    /// How a thread's base index and a slot's constant offset (disjoint bits) combine.
    pub(super) fn join(&self) -> &'static str {
        if self.swizzle.is_some() { "^" } else { "+" }
    }
    /// Workgroup array length (elements of vec2, or f32 with two parts); 0 with one round.
    pub fn shared_len(&self) -> usize {
        if self.rounds() > 1 {
            let top = self.c * self.m / self.position_parts() - 1;
            (0..self.rounds() - 1)
                .map(|i| self.trip_index(i, top))
                .fold(self.pad(top), usize::max)
                + 1
        } else {
            0
        }
    }
    pub fn shared_bytes(&self) -> usize {
        self.shared_len() * if self.parts >= 2 { 4 } else { 8 }
    }
    /// Workgroup-memory bank conflicts of every round trip (32 banks of 4 bytes, warps of 32):
    /// the sum over warp requests of the most distinct words one bank serves.
    pub fn exchange_cost(&self) -> usize {
        (0..self.rounds().saturating_sub(1))
            .map(|i| self.trip_cost(i))
            .sum()
    }
    /// [`PassConfig::exchange_cost`] of round trip i alone: round i writes it, round i + 1 reads
    /// it, each through the trip's parts.
    pub fn trip_cost(&self, i: usize) -> usize {
        let mut cost = 0;
        let mut words = Vec::with_capacity(64);
        for side in self.trip_sides(i) {
            for warp in (0..self.threads()).step_by(32) {
                for j in 0..self.e {
                    words.clear();
                    for l in warp..(warp + 32).min(self.threads()) {
                        let a = self.trip_index(i, side(l, j));
                        if self.parts >= 2 {
                            words.push(a);
                        } else {
                            words.extend([2 * a, 2 * a + 1]);
                        }
                    }
                    cost += bank_max(&mut words) * self.parts;
                }
            }
        }
        cost
    }
    /// Round trip i's two sides (round i writes it, round i + 1 reads it): thread l's slot j's
    /// workgroup index before padding or swizzling, through the trip's parts.
    fn trip_sides(&self, i: usize) -> [impl Fn(usize, usize) -> usize + '_; 2] {
        let r = self.radix();
        let los = round_los(&r);
        let lc = self.c.trailing_zeros();
        let f = self.part_fn(i + 1);
        [i, i + 1].map(move |rr| {
            let (lo, last) = (los[rr], rr + 1 == los.len());
            move |l: usize, j: usize| {
                let (t, g) = self.role(l, rr == 0);
                (f.compress(place(&r, lo, last, t, j)) << lc) | g
            }
        })
    }
    /// Each round trip's two sides (the rounds that write and read it): the index deltas of a
    /// warp's lane bits (lanes of different parts, whose delta is a dropped bit, left out).
    fn lane_deltas(&self) -> Vec<Vec<usize>> {
        let lanes = self.threads().min(32).trailing_zeros();
        (0..self.rounds() - 1)
            .flat_map(|i| self.trip_sides(i))
            .map(|at| {
                (0..lanes)
                    .map(|b| at(1 << b, 0) ^ at(0, 0))
                    .filter(|&d| d != 0)
                    .collect()
            })
            .collect()
    }
    /// A swizzle under which every side of every round trip sends a warp's lanes to distinct
    /// banks (f32 exchanges), if a deterministic search finds one (where a pass exchanges in
    /// parts through 2048 points or more).
    fn find_swizzle(&self) -> Option<u64> {
        if self.parts < 2 || self.rounds() < 2 || self.m < 2048 {
            return None;
        }
        let len = self.c * self.m / self.position_parts();
        let high = len
            .trailing_zeros()
            .checked_sub(5)
            .filter(|&h| h > 0 && h <= 12)?;
        let sides = self.lane_deltas();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..4096 {
            let mut sw = 0;
            for i in 0..5 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                sw |= (x & ((1 << high) - 1)) << (12 * i);
            }
            let full = sides.iter().all(|d| {
                gf2_rank(d.iter().map(|&a| (a ^ swizzle_bank(sw, a >> 5)) & 31)) == d.len()
            });
            if full {
                return Some(sw);
            }
        }
        None
    }
    /// The padding (or swizzle) with the fewest conflicts that fits `max_bytes` (ties: less
    /// memory), or as `layout` asks: padding only, or a swizzle wherever one is as free of
    /// conflicts as the padding.
    pub fn choose_pad(mut self, max_bytes: usize, layout: ExchangeLayout) -> Option<PassConfig> {
        self.pad_shift = None;
        self.swizzle = None;
        self.trip_pad = [None; 8];
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
        // Then each trip its own shift, where that conflicts strictly less: in passes whose trips
        // go in parts of the positions (4 or 8 parts), which put a barrier between one trip's
        // reads and the next trip's writes anyway (in place, with the same layout, a trip needs
        // none: each thread writes back the places it read). H100, 2^27 values, ms, one shift →
        // a shift a trip: 2^14 0.808 → 0.792, 16384 reals 0.840 → 0.818 (2^28 reals), 2^13
        // 0.739 either way; in 2 parts it did not pay (2^19 1.477 → 1.480, 2^21 – 2^24 within
        // 0.15 %, before the barrier it would have needed).
        let trips = if self.position_parts() > 1 {
            (self.rounds() - 1).min(8)
        } else {
            0
        };
        for i in 0..trips {
            let mut trip = (self.trip_cost(i), self.shared_len(), None);
            for p in (3..bits).map(|p| p as u8).chain([0]) {
                let cand = PassConfig {
                    trip_pad: {
                        let mut t = self.trip_pad;
                        t[i] = Some(p);
                        t
                    },
                    ..self
                };
                if cand.shared_bytes() > max_bytes {
                    continue;
                }
                let key = (cand.trip_cost(i), cand.shared_len());
                if key.0 < trip.0 || (key.0 == trip.0 && trip.2.is_some() && key.1 < trip.1) {
                    trip = (key.0, key.1, Some(p));
                }
            }
            self.trip_pad[i] = trip.2;
        }
        // Which layouts may take a swizzle, and whether one as free of conflicts as the padding
        // wins (it needs no more memory than the values). The search runs only where it may.
        // `auto` swizzles only where that paid on the H100 (2^27 values, ms, padding → swizzle):
        // passes of 2048 points at 4 lanes (2^21 1.585 → 1.573, 2^22 1.675 → 1.663, 2^23 1.791
        // → 1.776). It lost where a thread's slots are contiguous (one lane: 2^14 0.807 → 0.857,
        // 16384 reals 0.839 → 1.084), and slightly at 1024 points and 8 lanes (2^19 1.478 →
        // 1.481, 2^20 1.531 → 1.533) and in 2^18's chain (1.448 → 1.482): an XOR a workgroup
        // access, where padding's offset folds into the load, outweighs the conflicts it saves
        // unless it keeps one more workgroup an SM (`swizzled`, docs/perf/fft.md).
        let (swizzle, ties) = match layout {
            ExchangeLayout::Auto => (self.c >= 2, false),
            ExchangeLayout::Padded => (false, false),
            ExchangeLayout::Swizzled => (true, true),
        };
        if let Some(sw) = swizzle.then(|| self.find_swizzle()).flatten() {
            let cand = PassConfig {
                pad_shift: None,
                swizzle: Some(sw),
                trip_pad: [None; 8],
                ..self
            };
            let (cost, best) = (cand.exchange_cost(), self.exchange_cost());
            if cost < best || (ties && cost == best) {
                return Some(cand);
            }
        }
        Some(self)
    }
}

/// The bank bits a swizzle XORs into an index whose bits from 5 on are `high`.
fn swizzle_bank(sw: u64, high: usize) -> usize {
    (0..5)
        .map(|i| ((((sw >> (12 * i)) & 0xfff) as usize & high).count_ones() as usize & 1) << i)
        .sum()
}

/// The rank over GF(2) of a few bit vectors.
fn gf2_rank(v: impl Iterator<Item = usize>) -> usize {
    let mut basis: Vec<usize> = Vec::new();
    for mut x in v {
        for b in &basis {
            x = x.min(x ^ b);
        }
        if x != 0 {
            basis.push(x);
            basis.sort_unstable_by(|a, b| b.cmp(a));
        }
    }
    basis.len()
}
