//! Odd-even sorting's stage annotations: the pairs each stage compared (and which swapped), and
//! where the stage sits in its network (phase parity, Batcher's p and k, merge-split's blocks).
//!
//! A network stage keeps its pairs compactly: the rule they follow ([`Rule`]: a phase's parity, a
//! Batcher stage's (p, k)) and one bit per pair for the swap; the pairs are derived when a view or
//! the JSON asks ([`Pairs::iter`]). A 2^16-key Batcher trace holds 136 stages of 32768 pairs: 4 KiB
//! of flags per stage instead of 384 KiB of (i, j, swapped) triples.

use super::model::{Pair, Rule};
use crate::algo::{RoomNotes, Stage};
use crate::data::{DType, Data};
use serde::{Serialize, Serializer};

/// Pair lists longer than this are left out of a stage's notes (the counts stay).
pub const MAX_PAIRS_NOTE: usize = 1 << 16;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Notes {
    /// 0 = the input.
    pub stage: usize,
    pub compare_exchanges: Option<usize>,
    pub swaps: Option<usize>,
    /// The element pairs compared, with whether they swapped (JSON: [i, j, 0|1]). Serialized by
    /// the stage (`Stage`'s `Serialize`), straight to the writer: never as a JSON value tree.
    #[serde(skip)]
    pub pairs: Option<Pairs>,
    /// Transposition phases: "even" or "odd".
    pub parity: Option<&'static str>,
    pub segment: Option<usize>,
    /// Batcher: the merge's half size p and the step's stride k; merge_block = 2p.
    pub p: Option<usize>,
    pub k: Option<usize>,
    pub merge_block: Option<usize>,
    /// Merge-split: the block size, every block's [start, end), and the block pairs merged (with
    /// whether either block changed).
    pub block: Option<usize>,
    pub blocks: Option<Vec<(usize, usize)>>,
    #[serde(serialize_with = "pair_list")]
    pub block_pairs: Option<Vec<Pair>>,
    /// Transposition in one workgroup, odd phases: the owner whose odd pair runs past the
    /// segment's end (the app narrates the barrier it must still reach). Not in the JSON.
    #[serde(skip)]
    pub overflow: Option<OverflowPair>,
}

/// The overflow odd pair of a transposition phase in one workgroup. Owner i (seed 002's thread i)
/// holds pairs 2i and 2i + 1; with ⌈L/2⌉ owners the last one's odd pair (2i + 1, 2i + 2) is past a
/// segment of L keys at every odd phase. It compares nothing yet must reach the phase's barrier:
/// the seed's `if (s_odd >= n) continue;` skips its `__syncthreads()` instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverflowPair {
    /// The owner without an odd pair, of `owners`.
    pub owner: usize,
    pub owners: usize,
    /// Keys per segment (one workgroup's).
    pub seg_len: usize,
}

impl OverflowPair {
    /// The overflow pair of a segment of `seg_len` keys (none below 2 keys: no odd phase).
    pub fn of(seg_len: usize) -> Option<OverflowPair> {
        let owners = seg_len.div_ceil(2);
        (seg_len >= 2).then_some(OverflowPair {
            owner: owners - 1,
            owners,
            seg_len,
        })
    }

    /// The pair's two indices; the second is past the segment (>= `seg_len`).
    pub fn pair(&self) -> (usize, usize) {
        (2 * self.owner + 1, 2 * self.owner + 2)
    }
}

fn pair_list<S: Serializer>(v: &Option<Vec<Pair>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_seq(v.iter().map(|&(i, j, swapped)| (i, j, swapped as u32))),
        None => s.serialize_none(),
    }
}

/// A network stage's pairs: the rule they follow on `n` elements and one swap bit per pair (in
/// the rule's order). No rule: no pairs (the input stage).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pairs {
    rule: Option<Rule>,
    n: usize,
    len: usize,
    swapped: Vec<u64>,
}

impl Pairs {
    /// The pairs of `rule` on `n` elements with their swap flags (in [`Rule::pairs`] order).
    pub fn new(rule: Rule, n: usize, swapped: impl IntoIterator<Item = bool>) -> Pairs {
        let mut bits = Vec::new();
        let mut len = 0;
        for s in swapped {
            if len % 64 == 0 {
                bits.push(0u64);
            }
            if s {
                bits[len / 64] |= 1 << (len % 64);
            }
            len += 1;
        }
        Pairs {
            rule: Some(rule),
            n,
            len,
            swapped: bits,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many pairs swapped.
    pub fn swaps(&self) -> usize {
        self.swapped.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The pairs as (i, j, swapped), derived from the rule.
    pub fn iter(&self) -> impl Iterator<Item = Pair> + '_ {
        self.rule
            .into_iter()
            .flat_map(|r| r.pairs(self.n))
            .take(self.len)
            .enumerate()
            .map(|(x, (i, j))| {
                (
                    i as u32,
                    j as u32,
                    self.swapped[x / 64] >> (x % 64) & 1 == 1,
                )
            })
    }
}

impl Serialize for Pairs {
    /// `[[i, j, 0|1], …]`, streamed.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|(i, j, swapped)| (i, j, swapped as u32)))
    }
}

impl Notes {
    /// The pairs as (i, j, swapped), empty where the stage has none (or too many to keep).
    pub fn pairs(&self) -> Vec<Pair> {
        self.pairs.iter().flat_map(Pairs::iter).collect()
    }

    pub fn block_pairs(&self) -> &[Pair] {
        self.block_pairs.as_deref().unwrap_or_default()
    }
}

/// A network stage: counts of `pairs` (and the pairs, up to MAX_PAIRS_NOTE), plus `notes`' fields.
pub fn network_stage(
    label: String,
    dtype: DType,
    data: Vec<u32>,
    pairs: Pairs,
    notes: Notes,
) -> Stage {
    let notes = Notes {
        compare_exchanges: Some(pairs.len()),
        swaps: Some(pairs.swaps()),
        pairs: (pairs.len() <= MAX_PAIRS_NOTE).then_some(pairs),
        ..notes
    };
    Stage::with(label, Data::new(dtype, data), RoomNotes::Oddeven(notes))
}

#[cfg(test)]
mod tests {
    use super::OverflowPair;

    /// ⌈L/2⌉ owners: the last one's odd pair is past the end for every L >= 2, odd or even.
    #[test]
    fn the_last_owners_odd_pair_overflows() {
        for (l, owner, pair) in [
            (2, 0, (1, 2)),
            (9, 4, (9, 10)),
            (10, 4, (9, 10)),
            (11, 5, (11, 12)),
        ] {
            let o = OverflowPair::of(l).unwrap();
            assert_eq!(
                (o.owner, o.owners, o.pair()),
                (owner, owner + 1, pair),
                "L = {l}"
            );
            assert!(o.pair().1 >= l);
        }
        assert_eq!(OverflowPair::of(1), None);
    }
}
