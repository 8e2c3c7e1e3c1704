//! Odd-even sorting (seed 002): the seed's odd-even transposition sort in one workgroup, the same
//! scheme with one dispatch per phase, block odd-even transposition (Baudet–Stevenson merge-split)
//! and Batcher's odd-even merge sort network, all on u32/i32/f32 keys, ascending or descending.

pub mod facts;
pub mod model;
pub mod regs;
mod regs_emit;
mod regs_shader;
pub mod trace;

mod options;
mod phases;
mod run;
mod tile_runner;
mod tiles;
mod traced;
mod tune;

use phases::*;
pub use run::plan_summary;
use tile_runner::*;
use tiles::*;

use super::prelude::*;
use crate::gpu::{grid, specialize};
use serde::{Deserialize, Serialize};

variants! {
    room "oddeven" (seed "002"): "Odd-even sorting",
        "Odd-even transposition sort (the seed), its one-dispatch-per-phase form, block \
         merge-split and Batcher's odd-even merge sort. f32 sorts in the total order -NaN < -inf < \
         … < -0 < +0 < … < inf < NaN.";
    Transposition = "transposition": "the seed: n phases of even/odd pairs in ONE workgroup, keys \
        in workgroup memory (--segment L: one workgroup per segment)",
    Global = "global": "the seed's phases over a global buffer, one dispatch per phase (any N up \
        to 2^20; slow by nature)",
    MergeSplit = "merge-split": "block odd-even transposition (Baudet–Stevenson): sort blocks in \
        workgroup memory, then phases of merge-split between neighbouring blocks",
    Batcher = "batcher": "Batcher's odd-even merge sort network: tiles in workgroup memory, fused \
        global stages (--segment L: every segment in one dispatch)",
}

/// The seed's example (10 elements, 10 phases).
pub const EXAMPLE: [i64; 10] = [3, 7, 11, 10, 4, 20, 2, 8, 12, 1];
pub const EXAMPLE_RESULT: [i64; 10] = [1, 2, 3, 4, 7, 8, 10, 11, 12, 20];

const KEYS: &str = include_str!("../../../shaders/oddeven/keys.wgsl");
const POISON: u32 = 0xDEAD_BEEF;
/// The longest segment `--segment` takes.
pub const MAX_SEGMENT: usize = 4096;
/// The largest N of the `global` variant (one dispatch per phase).
pub const MAX_GLOBAL: usize = 1 << 20;
/// The transposition kernel plays up to this many owners per loop iteration (straight-line code).
const MAX_UNROLL: usize = 64;
/// `--tiles-per-workgroup` at most (the generated loop holds one tile's keys in registers).
pub const MAX_TILES_PER_WG: usize = 16;

/// Tiles per workgroup for a register pass of `tiles` tiles, fitted to H100 per-pass medians
/// (docs/perf/oddeven.md). Passes that hand their keys through
/// workgroup memory before storing (local sorts, contiguous tails) gain most: the next tile's
/// loads fly during the stores (2^28 tails 1.27 → 1.05 ms, 2^24 0.086 → 0.069 with S = 8)
/// from 2048 tiles on (at 2^22, ~550 tiles, S = 2 made them up to 25% slower). Heads and strided tails store straight from registers and
/// prefetch only after their stores: S = 2 helps heads from 4096 tiles (S = 4 slows heads of
/// p ≥ 2^24 by 3–7%), and strided tails only with many tiles (their halo tiles multiply
/// with p: 2^28 1.52 → 1.31 ms at S = 4, 2^26 2–5% slower at S = 2). Segments: S = 4 for 4096
/// (0.2331 → 0.2288 ms at 2^24) while ~1024 workgroups remain, 1 for 2048 and 1024 (every S > 1 slower). CPU adapters: 1 (llvmpipe
/// gains nothing and compiles longer).
fn default_tiles_per_wg(gpu: &Gpu, rp: &regs::RegsPass, tiles: usize, segmented: bool) -> usize {
    if gpu.info.device_type == wgpu::DeviceType::Cpu {
        1
    } else if segmented {
        // H200, one workgroup buffer, segments of 4096: S = 1 / 2 / 4 / 8 0.182 / 0.186 / 0.190 /
        // 0.192 ms (each segment is one tile; its workgroups hide each other's latency).
        1
    } else if regs::stores_through_workgroup_memory(rp) {
        if tiles >= 2048 {
            (tiles / 256).min(8)
        } else {
            1
        }
    } else if rp.halo == 0 {
        if tiles >= 4096 { 2 } else { 1 }
    } else {
        (tiles / 8192).clamp(1, 4)
    }
}

/// The options' help: the CLI's for each flag (src/cli) and the app's tooltip for each control.
pub mod help {
    pub const SEGMENT: &str = "Sort independent segments of length L (≤ 4096) in one dispatch (transposition, batcher); \
         N must be a multiple of L";
    pub const DESCENDING: &str = "Sort in descending order";
    pub const BLOCK: &str =
        "merge-split block size (a power of two ≤ half the workgroup tile; default: about N/8)";
    pub const TILE: &str = "Tuning (batcher, merge-split): keys per workgroup tile, a power of two ≥ 256 that fits \
         workgroup memory (default: the largest ≤ 8192 that fits; batcher: 8192 where its \
         register kernel fits that tile, else ≤ 4096, the H100's best)";
    pub const THREADS: &str = "Tuning: invocations per workgroup at most (default: min(1024, the adapter's limit); \
         batcher: 512, the H100's best)";
    pub const KERNEL: &str = "Tile kernel (batcher, merge-split): auto (untraced runs: the generated register kernel \
         wherever a tile fits it, else generic), registers (refuse what it cannot run), generic \
         (shaders/oddeven/batcher.wgsl, one stage per barrier; traces always use it)";
    pub const KEYS_PER_INVOCATION: &str = "Register kernel: keys per invocation, 8, 16 or 32 (default 32; 16 on CPU adapters): \
         groups of up to log2 of it stages between trips through workgroup memory, tile/E \
         invocations";
    pub const TILES_PER_WORKGROUP: &str = "Register kernel: tiles per workgroup, 1 ..= 16, run one after the other with the next \
         tile's loads issued before this tile's stores (default: per pass from H100 measurements, 1 \
         for segments (H200) and on CPU adapters)";
    pub const EXCHANGE_BUFFERS: &str = "Register kernel: workgroup buffers the keys change hands through, 1 or 2 (default 1): \
         two take one barrier a hand-over instead of two, at twice the workgroup memory, so fewer \
         workgroups fit an SM";

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("segment", SEGMENT),
        ("descending", DESCENDING),
        ("block", BLOCK),
        ("tile", TILE),
        ("threads", THREADS),
        ("kernel", KERNEL),
        ("keys_per_invocation", KEYS_PER_INVOCATION),
        ("tiles_per_workgroup", TILES_PER_WORKGROUP),
        ("exchange_buffers", EXCHANGE_BUFFERS),
    ];

    /// The values of each closed-set option.
    pub const VALUE_SETS: crate::algo::OptionValues = &[(
        "kernel",
        <super::TileKernel as crate::algo::Choice>::CHOICES,
    )];
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub segment: Option<usize>,
    pub descending: bool,
    pub block: Option<usize>,
    pub tile: Option<usize>,
    pub threads: Option<u32>,
    pub kernel: TileKernel,
    pub keys_per_invocation: Option<usize>,
    pub tiles_per_workgroup: Option<usize>,
    pub exchange_buffers: Option<usize>,
}

/// Which kernel runs the tile passes of batcher and merge-split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TileKernel {
    #[default]
    Auto,
    Registers,
    Generic,
}

impl crate::algo::Choice for TileKernel {
    const ALL: &'static [TileKernel] =
        &[TileKernel::Auto, TileKernel::Registers, TileKernel::Generic];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "auto",
            "Registers where the pass fits them (untraced), else generic",
        ),
        (
            "registers",
            "The generated register kernel (src/algo/oddeven/regs.rs): E keys per invocation",
        ),
        (
            "generic",
            "shaders/oddeven/batcher.wgsl: one stage per barrier in workgroup memory; writes the \
             trace",
        ),
    ];
}

/// What this adapter allows for the tiled kernels.
#[derive(Clone, Copy, Debug)]
struct Caps {
    /// Invocations per workgroup we use at most.
    wg_max: u32,
    /// The largest tile (a power of two) of u32 keys in workgroup memory.
    tile: usize,
    /// The largest array the single-workgroup transposition kernel holds.
    words: usize,
}

fn caps_of(gpu: &Gpu) -> Caps {
    let l = &gpu.limits;
    let words = (l.max_compute_workgroup_storage_size / 4) as usize;
    let tile = if words == 0 {
        0
    } else {
        (1usize << words.ilog2()).min(8192)
    };
    Caps {
        wg_max: 1024
            .min(l.max_compute_invocations_per_workgroup)
            .min(l.max_compute_workgroup_size_x)
            .max(1),
        tile,
        words,
    }
}

fn key_params(dtype: DType, desc: bool) -> Vec<(&'static str, String)> {
    vec![
        (
            "DTYPE",
            match dtype {
                DType::U32 => "0",
                DType::I32 => "1",
                DType::F32 => "2",
            }
            .to_string(),
        ),
        ("DESC", desc.to_string()),
    ]
}

fn source(kernel: &str, dtype: DType, desc: bool, extra: &[(&'static str, String)]) -> String {
    let mut p = key_params(dtype, desc);
    p.extend_from_slice(extra);
    specialize(&format!("{KEYS}\n{kernel}"), &p)
}

/// The problem as the kernels see it.
#[derive(Clone, Copy, Debug)]
struct Shape {
    dtype: DType,
    desc: bool,
    n: usize,
    /// Segment length (n when the whole array is one segment).
    seg: usize,
    segmented: bool,
}

impl Shape {
    fn nseg(&self) -> usize {
        self.n / self.seg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every merge's passes run its stages k = p … 1 once, in order; heads have no halo and the
    /// last pass is contiguous.
    #[test]
    fn merge_passes_cover_every_stage_once() {
        for lb in 8..=13 {
            let b = 1usize << lb;
            let mut p = b;
            while p <= 1 << 27 {
                let passes = merge_passes(p, b);
                let flat: Vec<_> = passes.iter().flat_map(|t| t.stage_list()).collect();
                let want: Vec<_> = (0..=p.trailing_zeros()).map(|i| (p, p >> i)).collect();
                assert_eq!(flat, want, "b {b} p {p}");
                assert_eq!(passes[0].halo, 0);
                assert!(
                    passes
                        .iter()
                        .all(|t| t.res * t.rows == b && t.rows >= 4 * t.halo)
                );
                assert_eq!(passes.last().map(|t| t.k_lo), Some(1));
                // Tails start on their first stage's pair blocks: a halo of that distance in rows.
                for t in &passes[1..] {
                    assert_eq!(t.halo, t.k_first / t.k_lo, "b {b} p {p} {}", t.label);
                }
                p *= 2;
            }
        }
    }
}
