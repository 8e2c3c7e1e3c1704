//! What an oddeven run says about itself at the top level of its JSON (`RunResult::extra`), as a
//! type: the room writes these fields by serialising it and the view reads them back as the same
//! type, so a renamed field is a compile error on both sides.

use crate::algo::RunFacts;
use serde::{Deserialize, Serialize};

/// The sort's shape and its counted work (known before the run), and where the trace (or the
/// CPU model) first saw the array sorted.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Facts {
    pub descending: bool,
    /// `--segment` (null: the whole array is one segment).
    pub segment: Option<usize>,
    /// The seed's steps for one segment: its length.
    pub seed_steps: usize,
    /// The seed's compare-exchanges: n(n-1)/2 per segment.
    pub seed_work: u64,
    /// The variant's phases (transposition, global, merge-split) or network stages (batcher).
    pub phases: usize,
    pub compare_exchanges: u64,
    /// Transposition and global: the workgroup size used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wg_size: Option<u32>,
    /// Batcher: the keys one workgroup sorts in its memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<usize>,
    /// Merge-split: the block size and the number of blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<usize>,
    /// The first phase (or stage) after which the array is sorted (0: the input was); absent
    /// where not computed, null where the array never was (read back as not computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sorted_phase: Option<Option<usize>>,
}

impl RunFacts for Facts {}
