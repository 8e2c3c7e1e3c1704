//! Prefix sums (seed 004). Seven variants, every one a real GPU kernel checked against the CPU
//! model (`model.rs`) — phase by phase in trace mode:
//! - `ladder` (the seed's): phases p = 1, 2, 4, …; thread t with bit p set adds a[(t & !(p-1)) - 1],
//!   the others sleep; one dispatch per phase, in place over one global buffer;
//! - `folded` (the seed's): p = N/2 … 1, a[i] += a[i+p] where i+p < n — SUFFIX sums; `--mirror`
//!   gives the mirrored PREFIX form a[i] += a[i-p];
//! - `hillis-steele` (ping-pong buffers), `blelloch` (up-sweep / down-sweep over the implicit heap
//!   tree, l_child = 2i+1, r_child = 2i+2), `reduce-then-scan` (3 passes);
//! - `decoupled`: single pass, decoupled look-back with fallback (no forward-progress assumption);
//! - `sequential`: the seed's loop on one GPU thread, for contrast.

pub mod facts;
pub mod model;
pub mod trace;

mod check;
mod options;
mod plan;
mod run;
mod traced;
mod tune;

use check::*;
pub use check::{F32Check, check_f32};
pub use plan::DecoupledRun;
use plan::*;

use super::prelude::*;
use crate::data::fmt_bits;
use crate::gpu::{grid, specialize, unroll};
use model::Phase;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

variants! {
    room "scan" (seed "004"): "Prefix sums (scan)",
        "out[i] = a[0] + … + a[i] (inclusive; --exclusive stops before a[i]); u32/i32 wrap, f32 \
         checked against an f64 sum.";
    Ladder = "ladder": "the seed's: phases p = 1, 2, 4, …; thread t with bit p set adds a[(t & \
        ~(p-1)) - 1], others sleep; one dispatch per phase",
    Folded = "folded": "the seed's: p = N/2 … 1, a[i] += a[i+p] (i+p < n): SUFFIX sums; --mirror: \
        a[i] += a[i-p], prefix sums",
    HillisSteele = "hillis-steele": "p = 1, 2, 4, …: b[i] = a[i] + a[i-p], ping-pong buffers; n \
        log n work",
    Blelloch = "blelloch": "work-efficient: up-sweep and down-sweep over the implicit heap tree \
        (l_child = 2i+1, r_child = 2i+2)",
    ReduceThenScan = "reduce-then-scan": "3 passes: tile sums, one-workgroup scan of the sums, \
        rescan of every tile (3n words of traffic)",
    Decoupled = "decoupled": "single pass, decoupled look-back with fallback (Merrill & Garland; \
        no forward-progress assumption): 2n words",
    Sequential = "sequential": "the seed's loop on ONE GPU thread, for contrast",
}

/// Stages list their (thread, source) pairs and sleeping threads up to this many elements.
pub const MAX_PAIRS_N: usize = 4096;
/// The largest N the one-thread `sequential` variant is benchmarked at.
pub const SEQUENTIAL_BENCH_MAX: usize = 1 << 24;

/// The seed's ladder example: 30 twos (its result is 2, 4, …, 60).
pub const EXAMPLE: [i64; 30] = [2; 30];

/// The options' help: the CLI's for each flag (src/cli) and the app's tooltip for each control.
pub mod help {
    pub const EXCLUSIVE: &str =
        "Exclusive scan: out[i] sums the elements before i (folded: after i); default inclusive";
    pub const MIRROR: &str = "folded only: the mirrored form a[i] += a[i-p] (i >= p), which gives PREFIX sums; without \
         it folded gives the seed's SUFFIX sums (33 ones -> 33, 32, …, 1)";
    pub const WORKGROUP_SIZE: &str = "decoupled / reduce-then-scan: threads per workgroup (a power of two up to the adapter's \
         limit). 0 = auto: 256 (the fastest measured on the H100 and the H200)";
    pub const PER_THREAD: &str = "decoupled / reduce-then-scan: vec4 (4 elements) per thread, 1..=16; a tile is 4 × this × \
         workgroup-size elements. 0 = auto: on the subgroup decoupled path 6 up to 2^21 elements, \
         9 up to 2^25 (exclusive 8), 10 above. 2^28 in dispatch order on the H200: 256×10 u32 0.996× of copy, f32 0.991×, \
         exclusive u32 0.997×, f32 0.990×; 256×9 0.990× / 0.982× / 0.990× / 0.925×; at 2^20 6 is 4-6 % faster \
         than 9. Elsewhere the largest of 8, 4, 2, 1 that fits \
         workgroup memory";
    pub const SPIN: &str = "decoupled: look-back window reads that find the nearest predecessor still not ready \
         before the workgroup reduces that tile itself (the fallback). 0 = never read, always \
         fall back (a test of the fallback path; the work grows with tiles²)";
    pub const SHARED_SCAN: &str = "decoupled: scan each tile in workgroup memory (Kogge-Stone over the thread totals) even \
         where the adapter has subgroup operations; by default decoupled keeps the tile in \
         registers and scans it with subgroupInclusiveAdd when the adapter has Features::SUBGROUP (and its \
         buffers, padded to whole tiles, fit a storage binding)";
    pub const TILE_ORDER: &str = "decoupled (subgroup path): how tiles are numbered. counter = an atomic counter in the \
         order workgroups start; dispatch = the workgroup id (no atomic round trip before the \
         loads; still correct without forward-progress guarantees: a predecessor that has not \
         started is spun on, then reduced by the fallback). auto = dispatch on GPUs, counter on \
         CPU adapters (lavapipe runs the grid in chunks per thread, so in dispatch order late \
         chunks would fall back a lot)";

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("exclusive", EXCLUSIVE),
        ("mirror", MIRROR),
        ("workgroup_size", WORKGROUP_SIZE),
        ("per_thread", PER_THREAD),
        ("spin", SPIN),
        ("shared_scan", SHARED_SCAN),
        ("tile_order", TILE_ORDER),
    ];

    /// The values of each closed-set option.
    pub const VALUE_SETS: crate::algo::OptionValues = &[(
        "tile_order",
        <super::TileOrder as crate::algo::Choice>::CHOICES,
    )];
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub exclusive: bool,
    pub mirror: bool,
    pub workgroup_size: u32,
    pub per_thread: u32,
    pub spin: u32,
    pub shared_scan: bool,
    pub tile_order: TileOrder,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            exclusive: false,
            mirror: false,
            workgroup_size: 0,
            per_thread: 0,
            spin: 256,
            shared_scan: false,
            tile_order: TileOrder::Auto,
        }
    }
}

/// How `decoupled` numbers its tiles (see [`Options::tile_order`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TileOrder {
    #[default]
    Auto,
    Counter,
    Dispatch,
}

impl crate::algo::Choice for TileOrder {
    const ALL: &'static [TileOrder] = &[TileOrder::Auto, TileOrder::Counter, TileOrder::Dispatch];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        ("auto", "dispatch on GPUs, counter on CPU adapters"),
        (
            "counter",
            "An atomic counter: tile ids in the order workgroups start",
        ),
        ("dispatch", "The workgroup id"),
    ];
}

impl TileOrder {
    /// Whether tile ids are workgroup ids on this adapter (else an atomic counter's tickets).
    pub fn is_dispatch(self, gpu: &Gpu) -> bool {
        match self {
            TileOrder::Auto => gpu.info.device_type != wgpu::DeviceType::Cpu,
            TileOrder::Counter => false,
            TileOrder::Dispatch => true,
        }
    }
}

impl Options {
    /// Whether `decoupled` takes tile ids from workgroup ids on this adapter.
    pub fn dispatch_order(&self, gpu: &Gpu) -> bool {
        self.tile_order.is_dispatch(gpu)
    }
}

/// The tile shape of `decoupled` and `reduce-then-scan`.
#[derive(Clone, Copy, Debug)]
pub struct TileShape {
    pub wg: u32,
    pub per: u32,
    /// decoupled with subgroup operations (tile in registers, decoupled_sg.wgsl).
    pub subgroups: bool,
}

impl TileShape {
    pub fn elements(self) -> usize {
        (self.wg * self.per * 4) as usize
    }
    /// Words of the src and dst buffers for `n` elements: whole tiles for the subgroup kernel
    /// (none of its tile loads and stores has a bounds test), whole vec4 otherwise.
    pub fn buffer_words(self, n: usize) -> usize {
        if self.subgroups {
            n.div_ceil(self.elements()) * self.elements()
        } else {
            n.div_ceil(4) * 4
        }
    }
    fn shared_bytes(wg: u32, per: u32, subgroups: bool) -> u32 {
        if subgroups {
            // s_sg (one total per subgroup, sized for W) + s_u, s_k, s_prefix.
            wg * 4 + 12
        } else {
            wg * (per + 1) * 16 + wg * 4 + 2 * 4 * wg.min(32) + 16
        }
    }
}
