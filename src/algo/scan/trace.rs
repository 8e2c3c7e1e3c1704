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
    pub phase: Option<usize>,
    pub active: Option<usize>,
    pub sleeping_count: Option<usize>,
    pub adds: Option<usize>,
    /// (destination thread, source index) of every read (small N only).
    pub reads: Option<Vec<(usize, usize)>>,
    pub sleeping: Option<Vec<usize>>,
    /// Folded: "suffix sums" or "mirrored: prefix sums".
    pub form: Option<&'static str>,
    /// Blelloch: "up", "clear", "down", "add-input"; the exclusive shift: "shift".
    pub direction: Option<&'static str>,
    pub level: Option<u32>,
    pub half: Option<usize>,
    pub padded_to: Option<usize>,
    pub n: Option<usize>,
    /// Blelloch's working nodes: (thread, heap index, l_child, r_child, left pos, right pos).
    pub nodes: Option<Vec<[usize; 6]>>,
    /// Sequential: one thread.
    pub threads: Option<usize>,
    /// Tiled variants: which array the stage shows and the elements per tile.
    pub array: Option<&'static str>,
    pub tile: Option<usize>,
    /// Decoupled look-back: totals, and per tile (tile, look-back steps, fallbacks).
    pub fallbacks: Option<u64>,
    pub lookback_steps: Option<u64>,
    pub lookback: Option<Vec<[u64; 3]>>,
}

impl Notes {
    pub fn reads(&self) -> Option<&[(usize, usize)]> {
        self.reads.as_deref()
    }
}
