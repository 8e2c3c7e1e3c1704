//! The algorithms as `run <algorithm>` and `bench <algorithm>` take them: the CLI's subcommand per
//! room, its flags converted into the room's typed options ([`AlgoOptions`]). Each flag's help is
//! the room's `help` const (the app's tooltip reads the same), each closed set of values the
//! room's [`Choice`](crate::algo::Choice).

use crate::algo::AlgoOptions;

/// The algorithm and its options, as flags.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum AlgoArgs {
    /// Tuned copy kernel: the bandwidth roofline every other kernel is measured against.
    Copy(copy_flags::Flags),
    /// Bit-reversal permutation (seed 000): naive one kernel, staged Demo B.
    Bitrev(bitrev_flags::Flags),
    /// BMMC / BPC permutations (seed 001): y = A·x ⊕ c; naive, seed plans, tiled.
    Bmmc(bmmc_flags::Flags),
    /// Odd-even sorting (seed 002): transposition in one workgroup, per-phase dispatches, merge-split, Batcher's network.
    Oddeven(oddeven_flags::Flags),
    /// LSD radix sort (the scan's look-back + a stable scatter): onesweep, classic; keys or key-value.
    Radix(radix_flags::Flags),
    /// Prefix sums (seed 004): ladder, folded, Hillis-Steele, Blelloch, reduce-then-scan, decoupled look-back.
    Scan(scan_flags::Flags),
    /// Nabla-style workgroup FFT (seed 003): xor exchanges, raw/natural order, real FFTs.
    Fft(fft_flags::Flags),
    /// Your own WGSL kernel (the workbench): --wgsl FILE, checked with --expect, traced, lensed, timed.
    Kernel(kernel_flags::Flags),
}

impl AlgoArgs {
    /// The typed options these flags give.
    pub fn options(&self) -> AlgoOptions {
        match self.clone() {
            AlgoArgs::Copy(f) => AlgoOptions::Copy(f.into()),
            AlgoArgs::Bitrev(f) => AlgoOptions::Bitrev(f.into()),
            AlgoArgs::Bmmc(f) => AlgoOptions::Bmmc(f.into()),
            AlgoArgs::Oddeven(f) => AlgoOptions::Oddeven(f.into()),
            AlgoArgs::Radix(f) => AlgoOptions::Radix(f.into()),
            AlgoArgs::Scan(f) => AlgoOptions::Scan(f.into()),
            AlgoArgs::Fft(f) => AlgoOptions::Fft(f.into()),
            AlgoArgs::Kernel(f) => AlgoOptions::Kernel(f.into()),
        }
    }
}

/// `clap::ValueEnum` for a room's [`Choice`](crate::algo::Choice): its values, names and help.
macro_rules! value_enum {
    ($t:ty) => {
        impl clap::ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                <$t as crate::algo::Choice>::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                let (name, help) = crate::algo::Choice::choice(*self);
                Some(clap::builder::PossibleValue::new(name).help(help))
            }
        }
    };
}
use value_enum;

mod copy_flags {
    use crate::algo::copy::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, default_value_t = 0, help = help::WORKGROUP_SIZE)]
        pub workgroup_size: u32,
        #[arg(long, default_value_t = 0, help = help::PER_THREAD)]
        pub per_thread: u32,
    }

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                workgroup_size: f.workgroup_size,
                per_thread: f.per_thread,
            }
        }
    }
}

mod bmmc_flags {
    use crate::algo::bmmc::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, conflicts_with = "preset", help = help::MATRIX)]
        pub matrix: Option<String>,
        #[arg(long, help = help::PRESET)]
        pub preset: Option<String>,
        #[arg(long, default_value_t = 0, help = help::COMPLEMENT)]
        pub complement: u64,
        #[arg(long, help = help::TILE_BITS)]
        pub tile_bits: Option<u32>,
        #[arg(long, help = help::TILE_THREADS)]
        pub tile_threads: Option<u32>,
        #[arg(long, help = help::TILES_PER_WORKGROUP)]
        pub tiles_per_workgroup: Option<u32>,
        #[arg(long, help = help::TILE_VECTOR)]
        pub tile_vector: Option<u32>,
        #[arg(long, value_enum, default_value_t = GroupOrder::Auto, help = help::GROUP_ORDER)]
        pub group_order: GroupOrder,
    }

    super::value_enum!(GroupOrder);

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                matrix: f.matrix,
                preset: f.preset,
                complement: f.complement,
                tile_bits: f.tile_bits,
                tile_threads: f.tile_threads,
                tiles_per_workgroup: f.tiles_per_workgroup,
                tile_vector: f.tile_vector,
                group_order: f.group_order,
            }
        }
    }
}

mod bitrev_flags {
    use crate::algo::bitrev::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {}

    impl From<Flags> for Options {
        fn from(_: Flags) -> Options {
            Options {}
        }
    }
}

pub(super) mod kernel_flags {
    use crate::algo::kernel::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, value_name = "FILE", help = help::WGSL)]
        pub wgsl: Option<std::path::PathBuf>,
        #[arg(long, value_delimiter = ',', value_name = "A,B,…", help = help::ENTRY)]
        pub entry: Vec<String>,
        #[arg(long, default_value = "1", value_name = "K|log_n", help = help::PASSES)]
        pub passes: String,
        #[arg(long, default_value_t = 1, help = help::ITEMS_PER_THREAD)]
        pub items_per_thread: u32,
        #[arg(long, value_name = "WORDS", help = help::SCRATCH)]
        pub scratch: Option<usize>,
        #[arg(long = "param", value_name = "NAME=VALUE", help = help::PARAMS)]
        pub params: Vec<String>,
        #[arg(long = "override", value_name = "NAME=VALUE", help = help::OVERRIDES)]
        pub overrides: Vec<String>,
        #[arg(long, value_name = "OP", conflicts_with = "expect_file", help = help::EXPECT)]
        pub expect: Option<String>,
        #[arg(long, value_name = "FILE", help = help::EXPECT_FILE)]
        pub expect_file: Option<String>,
    }

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                wgsl: f.wgsl,
                entry: f.entry,
                passes: f.passes,
                items_per_thread: f.items_per_thread,
                scratch: f.scratch,
                params: f.params,
                overrides: f.overrides,
                expect: f.expect,
                expect_file: f.expect_file,
                ..Default::default()
            }
        }
    }
}

mod oddeven_flags {
    use crate::algo::oddeven::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, help = help::SEGMENT)]
        pub segment: Option<usize>,
        #[arg(long, help = help::DESCENDING)]
        pub descending: bool,
        #[arg(long, help = help::BLOCK)]
        pub block: Option<usize>,
        #[arg(long, help = help::TILE)]
        pub tile: Option<usize>,
        #[arg(long, help = help::THREADS)]
        pub threads: Option<u32>,
        #[arg(long, value_enum, default_value_t = TileKernel::Auto, help = help::KERNEL)]
        pub kernel: TileKernel,
        #[arg(long, help = help::KEYS_PER_INVOCATION)]
        pub keys_per_invocation: Option<usize>,
        #[arg(long, help = help::TILES_PER_WORKGROUP)]
        pub tiles_per_workgroup: Option<usize>,
        #[arg(long, help = help::EXCHANGE_BUFFERS)]
        pub exchange_buffers: Option<usize>,
    }

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                segment: f.segment,
                descending: f.descending,
                block: f.block,
                tile: f.tile,
                threads: f.threads,
                kernel: f.kernel,
                keys_per_invocation: f.keys_per_invocation,
                tiles_per_workgroup: f.tiles_per_workgroup,
                exchange_buffers: f.exchange_buffers,
            }
        }
    }

    super::value_enum!(TileKernel);
}

mod scan_flags {
    use crate::algo::scan::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, help = help::EXCLUSIVE)]
        pub exclusive: bool,
        #[arg(long, help = help::MIRROR)]
        pub mirror: bool,
        #[arg(long, default_value_t = 0, help = help::WORKGROUP_SIZE)]
        pub workgroup_size: u32,
        #[arg(long, default_value_t = 0, help = help::PER_THREAD)]
        pub per_thread: u32,
        #[arg(long, default_value_t = 256, help = help::SPIN)]
        pub spin: u32,
        #[arg(long, help = help::SHARED_SCAN)]
        pub shared_scan: bool,
        #[arg(long, value_enum, default_value_t = TileOrder::Auto, help = help::TILE_ORDER)]
        pub tile_order: TileOrder,
    }

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                exclusive: f.exclusive,
                mirror: f.mirror,
                workgroup_size: f.workgroup_size,
                per_thread: f.per_thread,
                spin: f.spin,
                shared_scan: f.shared_scan,
                tile_order: f.tile_order,
            }
        }
    }

    super::value_enum!(TileOrder);
}

mod radix_flags {
    use crate::algo::radix::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, help = help::DESCENDING)]
        pub descending: bool,
        #[arg(long, value_enum, default_value_t = Values::None, help = help::VALUES)]
        pub values: Values,
        #[arg(long, default_value_t = 8, help = help::DIGIT_BITS)]
        pub digit_bits: u32,
        #[arg(long, default_value_t = 0, help = help::WORKGROUP_SIZE)]
        pub workgroup_size: u32,
        #[arg(long, default_value_t = 0, help = help::KEYS_PER_THREAD)]
        pub keys_per_thread: u32,
        #[arg(long, default_value_t = 256, help = help::SPIN)]
        pub spin: u32,
        #[arg(long, help = help::SHARED_RANK)]
        pub shared_rank: bool,
        #[arg(long, value_enum, default_value_t = TileOrder::Auto, help = help::TILE_ORDER)]
        pub tile_order: TileOrder,
        #[arg(long, help = help::PREFETCH)]
        pub prefetch: Option<u32>,
        #[arg(long, default_value_t = 0, help = help::LOOK_BACK_WINDOW)]
        pub look_back_window: u32,
    }

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                descending: f.descending,
                values: f.values,
                digit_bits: f.digit_bits,
                workgroup_size: f.workgroup_size,
                keys_per_thread: f.keys_per_thread,
                spin: f.spin,
                shared_rank: f.shared_rank,
                tile_order: f.tile_order,
                prefetch: f.prefetch,
                look_back_window: f.look_back_window,
            }
        }
    }

    super::value_enum!(Values);
}

mod fft_flags {
    use crate::algo::fft::*;

    #[derive(Clone, Debug, clap::Args)]
    pub struct Flags {
        #[arg(long, help = help::SIZE)]
        pub size: Option<usize>,
        #[arg(long, help = help::ELEMENTS_PER_INVOCATION)]
        pub elements_per_invocation: Option<usize>,
        #[arg(long, help = help::WORKGROUP_SIZE)]
        pub workgroup_size: Option<usize>,
        #[arg(long, value_enum, default_value_t = Order::Natural, help = help::ORDER)]
        pub order: Order,
        #[arg(long, help = help::INVERSE)]
        pub inverse: bool,
        #[arg(long, conflicts_with = "real_pair", help = help::REAL)]
        pub real: bool,
        #[arg(long, help = help::REAL_PAIR)]
        pub real_pair: bool,
        #[arg(long, default_value_t = 1, help = help::BATCH)]
        pub batch: usize,
        #[arg(long, value_enum, default_value_t = Signal::Sines, help = help::SIGNAL)]
        pub signal: Signal,
        #[arg(long, value_enum, default_value_t = Kernel::Auto, help = help::KERNEL)]
        pub kernel: Kernel,
        #[arg(long, help = help::FFTS_PER_WORKGROUP)]
        pub ffts_per_workgroup: Option<usize>,
        #[arg(long, help = help::SEQUENTIAL_FFTS)]
        pub sequential_ffts: Option<usize>,
        #[arg(long, help = help::NO_SHUFFLE)]
        pub no_shuffle: bool,
        #[arg(long, value_enum, default_value_t = NaturalStore::Staged, help = help::NATURAL_STORE)]
        pub natural_store: NaturalStore,
        #[arg(long, help = help::SPLIT)]
        pub split: Option<usize>,
        #[arg(long, help = help::EXCHANGE_PARTS)]
        pub exchange_parts: Option<usize>,
        #[arg(long, value_enum, default_value_t = ExchangeLayout::Auto, help = help::EXCHANGE_LAYOUT)]
        pub exchange_layout: ExchangeLayout,
        #[arg(long, help = help::PHASE_SPLIT)]
        pub phase_split: Option<usize>,
        #[arg(long, help = help::PHASE_LANES)]
        pub phase_lanes: Option<usize>,
        #[arg(long, value_name = "L", help = help::CHAIN)]
        pub chain: Option<usize>,
    }

    impl From<Flags> for Options {
        fn from(f: Flags) -> Options {
            Options {
                size: f.size,
                elements_per_invocation: f.elements_per_invocation,
                workgroup_size: f.workgroup_size,
                order: f.order,
                inverse: f.inverse,
                real: f.real,
                real_pair: f.real_pair,
                batch: f.batch,
                signal: f.signal,
                kernel: f.kernel,
                ffts_per_workgroup: f.ffts_per_workgroup,
                sequential_ffts: f.sequential_ffts,
                no_shuffle: f.no_shuffle,
                natural_store: f.natural_store,
                split: f.split,
                exchange_parts: f.exchange_parts,
                exchange_layout: f.exchange_layout,
                phase_split: f.phase_split,
                phase_lanes: f.phase_lanes,
                chain: f.chain,
            }
        }
    }

    super::value_enum!(Order);

    super::value_enum!(Kernel);

    super::value_enum!(NaturalStore);
    super::value_enum!(ExchangeLayout);

    super::value_enum!(Signal);
}
