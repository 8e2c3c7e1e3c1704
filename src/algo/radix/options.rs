//! The radix room's options (the CLI's `run radix` flags, the UI's controls, a session's fields)
//! and the tile shape they give on an adapter.

pub use crate::algo::scan::TileOrder;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use serde::{Deserialize, Serialize};

/// The payload carried with every key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Values {
    #[default]
    None,
    Iota,
    Input,
}

impl crate::algo::Choice for Values {
    const ALL: &'static [Values] = &[Values::None, Values::Iota, Values::Input];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        ("none", "Keys only"),
        (
            "iota",
            "Value i for the key at index i: the output values are the stable sorting permutation",
        ),
        (
            "input",
            "A copy of the key's own bits: the output values must equal the output keys",
        ),
    ];
}

/// The options' help: the CLI's for each flag (src/cli) and the app's tooltip for each control.
pub mod help {
    pub const DESCENDING: &str = "Sort in descending order (equal keys keep their input order)";
    pub const VALUES: &str = "A u32 payload carried with each key (stable): none, iota (the sorting permutation) or \
         input (a copy of the key's bits)";
    pub const DIGIT_BITS: &str =
        "Bits per digit, 1..=8: ceil(32 / bits) scatter passes of 2^bits buckets each";
    pub const WORKGROUP_SIZE: &str = "Threads per workgroup: a multiple of 32 up to the adapter's limit. 0 = auto: 640 on GPUs \
         (or the adapter's limit, if lower), 64 on CPU adapters";
    pub const KEYS_PER_THREAD: &str = "Keys per thread, 1..=32; a tile is workgroup-size × this keys. 0 = auto: the largest of \
         20, 16, 12, 8, 4, 2, 1 on GPUs (8, 4, 2, 1 on CPU adapters) whose tile fits the \
         adapter's workgroup memory: 16 at 640 threads in 48 KiB (tiles of 10240 keys)";
    pub const SPIN: &str = "onesweep: look-back reads that find a predecessor tile not ready before the tile counts \
         the predecessor's keys itself (the fallback). 0 = never read, always fall back (tests \
         the path)";
    pub const SHARED_RANK: &str = "Rank keys with workgroup memory only (warps of 32 threads exchanging digits through it) \
         even where the adapter has subgroup operations; by default warps are subgroups and use \
         ballots";
    pub const TILE_ORDER: &str = "onesweep: how tiles are numbered. counter = a ticket counter in the order workgroups \
         start; dispatch = the workgroup id (no atomic before the loads; a predecessor that has \
         not started is spun on, then counted by the fallback). auto = dispatch on GPUs, counter \
         on CPU adapters (lavapipe runs the grid in chunks per thread: in dispatch order late \
         chunks fall back a lot)";
    pub const PREFETCH: &str = "onesweep: halfway through its ranking a tile loads one key of every 64-byte sector of \
         the tile this many tiles ahead, so that tile finds its keys in L2 (keys only: \
         prefetching the values too ran slower). 0 = off. Default: 128 on GPUs (about one wave of \
         tiles: the H100's 132 SMs hold one tile each), 0 on CPU adapters";
    pub const LOOK_BACK_WINDOW: &str = "onesweep: predecessors' statuses a bucket's look-back reads at once, 1..=32. 0 = auto: 8 \
         (the H100's best); `stagewise tune` tries 4, 6 and 12";

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("descending", DESCENDING),
        ("values", VALUES),
        ("digit_bits", DIGIT_BITS),
        ("workgroup_size", WORKGROUP_SIZE),
        ("keys_per_thread", KEYS_PER_THREAD),
        ("spin", SPIN),
        ("shared_rank", SHARED_RANK),
        ("tile_order", TILE_ORDER),
        ("prefetch", PREFETCH),
        ("look_back_window", LOOK_BACK_WINDOW),
    ];

    /// The values of each closed-set option.
    pub const VALUE_SETS: crate::algo::OptionValues = &[
        ("values", <super::Values as crate::algo::Choice>::CHOICES),
        (
            "tile_order",
            <super::TileOrder as crate::algo::Choice>::CHOICES,
        ),
    ];
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub descending: bool,
    pub values: Values,
    pub digit_bits: u32,
    pub workgroup_size: u32,
    pub keys_per_thread: u32,
    pub spin: u32,
    pub shared_rank: bool,
    pub tile_order: TileOrder,
    pub prefetch: Option<u32>,
    pub look_back_window: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            descending: false,
            values: Values::None,
            digit_bits: 8,
            workgroup_size: 0,
            keys_per_thread: 0,
            spin: 256,
            shared_rank: false,
            tile_order: TileOrder::Auto,
            prefetch: None,
            look_back_window: 0,
        }
    }
}

/// The shape of a tile on this adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub bits: u32,
    pub wg: u32,
    pub kpt: u32,
    /// Warps are subgroups (ballots) rather than virtual warps in workgroup memory.
    pub subgroups: bool,
    /// Rows of the per-warp digit counters: WG / the smallest warp width.
    pub warp_rows: u32,
}

/// Buckets each thread of a tile owns (sort.wgsl's BPT).
pub fn buckets_per_thread(shape: Shape) -> u32 {
    (1u32 << shape.bits).div_ceil(shape.wg)
}

impl Shape {
    pub fn radix(self) -> usize {
        1 << self.bits
    }
    pub fn tile(self) -> usize {
        (self.wg * self.kpt) as usize
    }
    pub fn digits(self) -> u32 {
        32u32.div_ceil(self.bits)
    }
    /// Workgroup memory of the scatter kernels, in bytes (see shaders/radix/sort.wgsl): one array
    /// for the warp counters, then the keys, then the values, in turn; the bucket arrays.
    pub fn shared_bytes(self) -> u32 {
        let r = 1u32 << self.bits;
        let tile = self.wg * self.kpt;
        let words = tile.max(self.warp_rows * r)
            + 4 * r
            + self.wg
            + if self.subgroups {
                self.warp_rows
            } else {
                self.wg
            }
            + 4;
        4 * words
    }
}

impl Options {
    /// Whether onesweep takes tile ids from workgroup ids on this adapter.
    pub fn dispatch_order(&self, gpu: &Gpu) -> bool {
        self.tile_order.is_dispatch(gpu)
    }

    /// Tiles ahead that onesweep prefetches (`--prefetch`; auto: 128 on GPUs, 0 on CPU adapters,
    /// where lavapipe runs a thread's workgroups one after another: no wave to run ahead of).
    /// At most 2^30, more than any sort's tiles, so that tile + ahead cannot wrap in the kernel.
    pub fn prefetch_ahead(&self, gpu: &Gpu) -> u32 {
        self.prefetch
            .unwrap_or(if gpu.info.device_type == wgpu::DeviceType::Cpu {
                0
            } else {
                128
            })
            .min(1 << 30)
    }

    /// onesweep's bound on the loop iterations a thread spends re-reading statuses (sort.wgsl's
    /// SPIN_BUDGET): none (0) on adapters that run loops to the end; where the driver ends an
    /// invocation's loops after a limit ([`Gpu::loop_limit`]: lavapipe), a quarter of it, shared by
    /// the thread's buckets (a loop runs while any of its lanes spins, so lanes spinning on
    /// different buckets add up).
    pub fn spin_budget(&self, gpu: &Gpu, shape: Shape) -> u32 {
        gpu.loop_limit()
            .map_or(0, |l| (l / 4 / buckets_per_thread(shape)).max(1))
    }

    /// onesweep's look-back within the driver's loop limit ([`crate::algo::look_back_within_loop_limit`]).
    pub fn check_loop_limit(&self, gpu: &Gpu, shape: Shape, tiles: usize) -> Result<()> {
        // Loop iterations of one fallback: the walk's round, the tile's histogram, then (unless
        // --spin 0) one read a bucket (sort.wgsl's SPIN_COST = 2 + 2 × LBW).
        let bpt = buckets_per_thread(shape) as usize;
        let reads = if self.spin > 0 {
            bpt * (2 + 2 * self.window() as usize)
        } else {
            0
        };
        crate::algo::look_back_within_loop_limit(
            gpu,
            self.dispatch_order(gpu),
            self.spin,
            tiles,
            1 + shape.kpt as usize + 3 * bpt + reads,
            &format!("{} keys", shape.tile()),
        )
    }

    /// Statuses a bucket's look-back reads at once (sort.wgsl's LBW; `--look-back-window`).
    pub fn window(&self) -> u32 {
        if self.look_back_window == 0 {
            8
        } else {
            self.look_back_window
        }
    }

    pub fn has_values(&self) -> bool {
        self.values != Values::None
    }

    /// The tile shape for this adapter, or one line naming the option or limit at fault.
    pub fn shape(&self, gpu: &Gpu) -> Result<Shape> {
        if !(1..=8).contains(&self.digit_bits) {
            return Err(crate::input_err!(
                "--digit-bits must be 1..=8; got {}",
                self.digit_bits
            ));
        }
        let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
        let l = &gpu.limits;
        let max_wg = l
            .max_compute_invocations_per_workgroup
            .min(l.max_compute_workgroup_size_x);
        let wg = match self.workgroup_size {
            0 if cpu => 64,
            // H100, 2^28 u32, ms a digit pass (tiles near 10240 keys): 640 × 16 1.81, 512 × 20
            // 1.86, 576 × 18 1.88, 672 × 15 1.89, 896 × 11 1.90, 832 × 12 1.91, 768 × 12 1.93,
            // 1024 × 9 2.02; 512 × 16 2.07, 384 × 24 2.08.
            0 => 640.min(max_wg),
            w => w,
        };
        if wg % 32 != 0 || wg < 32 || wg > max_wg {
            return Err(crate::error::Error::input_or_limit(
                wg % 32 == 0 && wg > max_wg,
                format!(
                    "--workgroup-size must be a multiple of 32 from 32 to {max_wg} (this adapter's limit); got {wg}"
                ),
            ));
        }
        // Ballot masks are one u32 word: subgroups of at most 32 lanes (and at least 4, so the
        // warp rows stay few); other adapters rank in workgroup memory.
        let (lo, hi) = (gpu.info.subgroup_min_size, gpu.info.subgroup_max_size);
        let subgroups =
            !self.shared_rank && gpu.has_subgroups() && (4..=32).contains(&lo) && hi <= 32;
        let warp = if subgroups { lo.min(wg) } else { 32.min(wg) };
        // Auto: the largest tile that fits workgroup memory, from 20 keys per thread on GPUs (8 on
        // CPU adapters) down. Larger tiles mean fewer look-backs: H100, 2^28 keys, ms per digit
        // pass at 512 threads × 12 / 16 / 18 / 20 keys: 3.05 / 2.57 / 2.41 / 2.28 (one status read
        // at a time); 256 × 15 / 32: 2.93 / 2.90; 384 × 23 (CUB's tile): 2.30; 1024 × 9: 2.48.
        let candidates: &[u32] = match self.keys_per_thread {
            0 if cpu => &[8, 4, 2, 1],
            0 => &[20, 16, 12, 8, 4, 2, 1],
            k if (1..=32).contains(&k) => &[k],
            k => {
                return Err(crate::input_err!(
                    "--keys-per-thread must be 0 (auto) or 1..=32; got {k}"
                ));
            }
        };
        let mem = l.max_compute_workgroup_storage_size;
        let shape = |kpt: u32| Shape {
            bits: self.digit_bits,
            wg,
            kpt,
            subgroups,
            warp_rows: wg / warp,
        };
        let fits = |kpt: u32| shape(kpt).shared_bytes() <= mem;
        let Some(&kpt) = candidates.iter().find(|&&k| fits(k)) else {
            let kpt = candidates[0];
            let need = shape(kpt).shared_bytes();
            return Err(Error::Limit(format!(
                "a tile of {wg} threads × {kpt} keys with {}-bit digits needs {need} bytes of workgroup memory, above this \
                 adapter's {mem} (max_compute_workgroup_storage_size); use a smaller --keys-per-thread or --workgroup-size",
                self.digit_bits
            )));
        };
        Ok(shape(kpt))
    }
}
