//! Prefix sums' stage annotations: who read what in each phase (the (thread, source) pairs), the
//! step and work counters, Blelloch's tree nodes, the tiled variants' arrays and look-back counts.

use serde::Serialize;

/// Every field but `step` and `work` belongs to some variants only (absent elsewhere).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Notes {
    /// Parallel steps so far, and additions so far.
    pub step: usize,
    pub work: usize,
    /// Ladder / Hillis–Steele / folded: the phase's distance p (0 = the input, the exclusive shift).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sleeping_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adds: Option<usize>,
    /// (destination thread, source index) of every read (small N only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads: Option<Vec<(usize, usize)>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sleeping: Option<Vec<usize>>,
    /// Folded: "suffix sums" or "mirrored: prefix sums".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<&'static str>,
    /// Blelloch: "up", "clear", "down", "add-input"; the exclusive shift: "shift".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub half: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub padded_to: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    /// Blelloch's working nodes: (thread, heap index, l_child, r_child, left pos, right pos).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<[usize; 6]>>,
    /// Sequential: one thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Tiled variants: which array the stage shows and the elements per tile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tile: Option<usize>,
    /// Decoupled look-back: totals, and per tile (tile, look-back steps, fallbacks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookback_steps: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookback: Option<Vec<[u64; 3]>>,
}

impl Notes {
    pub fn reads(&self) -> Option<&[(usize, usize)]> {
        self.reads.as_deref()
    }
}
