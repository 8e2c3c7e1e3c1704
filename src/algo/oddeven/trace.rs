//! Odd-even sorting's stage annotations: the pairs each stage compared (and which swapped), and
//! where the stage sits in its network (phase parity, Batcher's p and k, merge-split's blocks).

use super::model::Pair;
use crate::algo::{RoomNotes, Stage};
use crate::data::{DType, Data};
use serde::{Serialize, Serializer};

/// Pair lists longer than this are left out of a stage's notes (the counts stay).
pub const MAX_PAIRS_NOTE: usize = 1 << 16;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Notes {
    /// 0 = the input.
    pub stage: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare_exchanges: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swaps: Option<usize>,
    /// The element pairs compared, with whether they swapped (JSON: [i, j, 0|1]).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "pairs")]
    pub pairs: Option<Vec<Pair>>,
    /// Transposition phases: "even" or "odd".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parity: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<usize>,
    /// Batcher: the merge's half size p and the step's stride k; merge_block = 2p.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_block: Option<usize>,
    /// Merge-split: the block size, every block's [start, end), and the block pairs merged (with
    /// whether either block changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<(usize, usize)>>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "pairs")]
    pub block_pairs: Option<Vec<Pair>>,
}

fn pairs<S: Serializer>(v: &Option<Vec<Pair>>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        v.iter()
            .flatten()
            .map(|&(i, j, swapped)| (i, j, swapped as u32)),
    )
}

impl Notes {
    /// The pairs as (i, j, swapped), empty where the stage has none (or too many to keep).
    pub fn pairs(&self) -> &[Pair] {
        self.pairs.as_deref().unwrap_or_default()
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
    pairs: &[Pair],
    notes: Notes,
) -> Stage {
    let notes = Notes {
        compare_exchanges: Some(pairs.len()),
        swaps: Some(pairs.iter().filter(|p| p.2).count()),
        pairs: (pairs.len() <= MAX_PAIRS_NOTE).then(|| pairs.to_vec()),
        ..notes
    };
    Stage::with(label, Data::new(dtype, data), RoomNotes::Oddeven(notes))
}
