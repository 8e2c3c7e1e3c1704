//! The radix room's GPU plans: `onesweep` (one histogram of every digit, whose last workgroup scans
//! the counts, then one look-back + scatter pass per digit; the state buffer is left zeroed by
//! every run, so no pass clears it) and `classic` (per digit: histogram, scan, scatter). The input
//! buffer is only read: the digit passes ping-pong between two scratch buffers, so every
//! repetition of a timed plan sorts the same keys.

use super::Variant;
use super::options::{Options, Shape};
use crate::data::DType;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Plan, Region, grid, specialize};

const KEYS: &str = include_str!("../../../shaders/oddeven/keys.wgsl");
const SORT: &str = include_str!("../../../shaders/radix/sort.wgsl");
const RANK_SG: &str = include_str!("../../../shaders/radix/rank_sg.wgsl");
const RANK_WG: &str = include_str!("../../../shaders/radix/rank_wg.wgsl");
/// The onesweep histogram gives each workgroup at least a tile's worth of keys, and uses at most
/// this many workgroups before chunks grow: few global atomics per key. H100, ms for the histogram
/// at 2^24 / 2^28 keys: 264 workgroups 0.043 / 0.487, 396 0.041 / 0.479, 528 0.050 / 0.478, 1024
/// 0.048 / 0.487, 2048 0.047 / 0.481.
const HIST_WGS: usize = 396;

/// Where the keys (and values) come from.
pub enum Init<'a> {
    Data {
        keys: &'a [u32],
        values: &'a [u32],
    },
    /// Benchmarks: `n` pseudo-random keys (a zero-filled array would put every key in one bucket)
    /// and, with values, iota.
    Random(usize),
}

impl Init<'_> {
    fn n(&self) -> usize {
        match self {
            Init::Data { keys, .. } => keys.len(),
            Init::Random(n) => *n,
        }
    }
}

/// What one pass of the plan is, for reading its captures back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassKind {
    /// onesweep: counts of every digit, scanned into digit offsets by the last workgroup (two
    /// stages in a trace: the counts, the offsets).
    Histogram,
    /// classic: tile counts of digit d (bucket-major).
    TileHistogram(u32),
    /// classic: those counts scanned.
    TileScan(u32),
    /// The scatter of digit d (onesweep: with its look-back).
    Scatter(u32),
}

pub struct Built {
    pub plan: Plan,
    /// The keys the plan sorts (only read: new keys may be written between runs).
    pub input: wgpu::Buffer,
    pub kinds: Vec<PassKind>,
    pub shape: Shape,
    pub tiles: usize,
    pub values: Option<wgpu::Buffer>,
}

/// Words of one scatter pass's trace: digits and destinations of the n keys, every tile's
/// histogram and offsets, every tile's (look-back steps, fallbacks).
pub fn trace_words(n: usize, tiles: usize, radix: usize) -> usize {
    2 * n + 2 * tiles * radix + 2 * tiles
}

fn random_keys(n: usize) -> Vec<u32> {
    // splitmix-style hash of the index: cheap, deterministic, uniform over the 32 bits.
    (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u32
        })
        .collect()
}

fn bind(
    gpu: &Gpu,
    p: &wgpu::ComputePipeline,
    entries: &[(u32, &wgpu::Buffer)],
) -> Result<wgpu::BindGroup> {
    gpu.bind_entries(p, entries)
}

/// Which loads and stores of a digit pass apply the order-preserving key map (see sort.wgsl).
#[derive(Clone, Copy)]
pub struct KeyMap {
    pub on_load: bool,
    pub on_store: bool,
}

impl KeyMap {
    /// Digit `d` of `digits`: the first pass maps its loads, the last its stores; a traced pass
    /// maps both, so that every stage holds the keys' own bits.
    pub fn of(d: u32, digits: u32, trace: bool) -> KeyMap {
        KeyMap {
            on_load: trace || d == 0,
            on_store: trace || d + 1 == digits,
        }
    }
}

/// Counts a thread of the histogram's last workgroup scans: a power of two (so that it divides R
/// and a thread's counts lie in one digit) with D * R / SE ≤ WG.
fn scan_share(shape: Shape) -> usize {
    (shape.digits() as usize * shape.radix())
        .div_ceil(shape.wg as usize)
        .next_power_of_two()
}

/// How onesweep's tiles find their predecessors on this adapter (sort.wgsl's DISPATCH_ORDER,
/// PREFETCH, SPIN_BUDGET).
#[derive(Clone, Copy)]
pub struct LookBack {
    pub dispatch: bool,
    pub prefetch: u32,
    pub spin_budget: u32,
}

/// classic's scan of the counts is one workgroup walking all R × tiles of them, 4 × WG a round:
/// where the driver ends an invocation's loops after a limit (lavapipe), the rounds stay within
/// it (measured there: a round costs one loop iteration, its loops over 4 counts unrolled; 2^15
/// rounds right, 2^16 wrong; two a round are allowed for).
fn classic_loop_limit(gpu: &Gpu, shape: Shape, tiles: usize) -> Result<()> {
    let Some(limit) = gpu.loop_limit() else {
        return Ok(());
    };
    let per_round = 4 * shape.wg as usize;
    let most = (limit as usize - 64) / 2 * per_round / shape.radix();
    if tiles > most {
        return Err(Error::Limit(format!(
            "radix classic: its one-workgroup scan of the counts would loop over {} rounds, more loop iterations than \
             this adapter runs ({limit} an invocation: llvmpipe ends loops there); at most {} keys here, or use \
             --variant onesweep",
            (tiles * shape.radix()).div_ceil(per_round),
            most * shape.tile()
        )));
    }
    Ok(())
}

/// The kernel source for this shape (the key map and the ranking variant prepended).
pub fn source(
    shape: Shape,
    opts: &Options,
    dtype: DType,
    trace: bool,
    look_back: LookBack,
    map: KeyMap,
) -> String {
    let LookBack {
        dispatch,
        prefetch,
        spin_budget,
    } = look_back;
    let dt = match dtype {
        DType::U32 => "0",
        DType::I32 => "1",
        DType::F32 => "2",
    };
    let (rank, args, me) = if shape.subgroups {
        (
            RANK_SG,
            ", @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_id) sg_id: u32, \
             @builtin(subgroup_size) sg_size: u32, @builtin(num_subgroups) sg_count: u32",
            "Me(lid, sg_id, sg_lane, sg_size, sg_count)".to_string(),
        )
    } else {
        let g = 32.min(shape.wg);
        (
            RANK_WG,
            "",
            format!("Me(lid, lid / {g}u, lid % {g}u, {g}u, {}u)", shape.wg / g),
        )
    };
    let tile = shape.tile();
    let params: Vec<(&str, String)> = vec![
        ("DTYPE", dt.into()),
        ("DESC", opts.descending.to_string()),
        ("KEY_IN", map.on_load.to_string()),
        ("KEY_OUT", map.on_store.to_string()),
        ("BITS", shape.bits.to_string()),
        ("WG", shape.wg.to_string()),
        ("KPT", shape.kpt.to_string()),
        ("SE", scan_share(shape).to_string()),
        ("D", shape.digits().to_string()),
        ("NW", shape.warp_rows.to_string()),
        ("VALUES", opts.has_values().to_string()),
        (
            "SMEM",
            tile.max((shape.warp_rows as usize) << shape.bits)
                .to_string(),
        ),
        ("TRACE", trace.to_string()),
        ("SPIN", opts.spin.to_string()),
        ("SPIN_BUDGET", spin_budget.to_string()),
        ("LBW", opts.window().to_string()),
        ("DISPATCH_ORDER", dispatch.to_string()),
        ("PREFETCH", prefetch.to_string()),
        ("MATCH", super::kernel::match_bits(shape.bits)),
        ("SG_ARGS", args.into()),
        ("ME", me),
    ];
    let entries = super::kernel::entries(&super::kernel::ScatterConfig {
        kpt: shape.kpt,
        trace,
    });
    specialize(&format!("{KEYS}\n{rank}\n{SORT}{entries}"), &params)
}

pub fn build(
    gpu: &Gpu,
    opts: &Options,
    variant: Variant,
    dtype: DType,
    init: &Init,
    trace: bool,
) -> Result<Built> {
    let shape = opts.shape(gpu)?;
    let n = init.n();
    let r = shape.radix();
    let tile = shape.tile();
    let tiles = n.div_ceil(tile);
    let nd = shape.digits() as usize;
    let onesweep = variant == Variant::Onesweep;
    if onesweep {
        opts.check_loop_limit(gpu, shape, tiles)?;
    } else {
        classic_loop_limit(gpu, shape, tiles)?;
    }
    let (input, vals_in) = match init {
        Init::Data { keys, values } => (
            gpu.storage_init("radix keys", keys)?,
            if values.is_empty() {
                None
            } else {
                Some(gpu.storage_init("radix values", values)?)
            },
        ),
        Init::Random(n) => (
            gpu.storage_init("radix keys", &random_keys(*n))?,
            if opts.has_values() {
                Some(gpu.storage_init("radix values", &(0..*n as u32).collect::<Vec<u32>>())?)
            } else {
                None
            },
        ),
    };
    let scratch = [
        gpu.storage_zeroed("radix keys ping", n)?,
        gpu.storage_zeroed("radix keys pong", n)?,
    ];
    // Keys only: stand-ins, three distinct buffers (a buffer may not be bound read-only and
    // read-write in one dispatch). The read-only one is 16 bytes: it also stands in for the
    // histogram's vec4 view of fewer than 4 keys.
    let dummy = gpu.storage_zeroed("radix stand-in", 4)?;
    let words = if vals_in.is_some() { n } else { 1 };
    let vscratch = [
        gpu.storage_zeroed("radix values ping", words)?,
        gpu.storage_zeroed("radix values pong", words)?,
    ];
    let vin = vals_in.clone().unwrap_or_else(|| dummy.clone());
    // Counts, offsets, tickets, the histogram's done count, then the look-back statuses (sort.wgsl).
    let status = 2 * nd * r + nd + 1;
    let state_words = if onesweep {
        (status + nd * tiles * r).div_ceil(4) * 4
    } else {
        (r * tiles).div_ceil(4) * 4
    };
    let state = gpu.storage_zeroed("radix state", state_words)?;
    let tw = if trace {
        trace_words(n, tiles, r).max(nd * r)
    } else {
        1
    };
    let tbuf = gpu.storage_zeroed("radix trace", tw)?;
    let dispatch = opts.dispatch_order(gpu);
    let prefetch = opts.prefetch_ahead(gpu);
    let look_back = LookBack {
        dispatch,
        prefetch,
        spin_budget: opts.spin_budget(gpu, shape),
    };
    let src_of = |d: u32| {
        source(
            shape,
            opts,
            dtype,
            trace,
            look_back,
            KeyMap::of(d, nd as u32, trace),
        )
    };
    let src = src_of(0);
    let mut plan = Plan::default();
    let mut kinds = Vec::new();
    // Where the driver ends an invocation's loops after a limit (lavapipe), a thread's share of a
    // chunk stays within half of it: a key costs up to 2 + D loop iterations there.
    let most_chunk = gpu.loop_limit().map_or(usize::MAX, |l| {
        l as usize / 2 / (2 + nd) * shape.wg as usize
    });
    let hist_chunk = (n.div_ceil(HIST_WGS).max(tile).min(most_chunk)).div_ceil(shape.wg as usize)
        * shape.wg as usize;
    let hist_wgs = n.div_ceil(hist_chunk);
    let uniform = |shift: u32, digit: u32| {
        gpu.uniform(
            "radix params",
            &[
                n as u32,
                shift,
                digit,
                tiles as u32,
                hist_chunk as u32,
                hist_wgs as u32,
                status as u32,
                0, // keep: always 0 (sort.wgsl's Params: the prefetch's loads are stored behind it)
            ],
        )
    };
    let cap = |on: bool, r: Region| if on { vec![r] } else { vec![] };
    let u0 = uniform(0, 0)?;
    if onesweep {
        let hp = gpu.pipeline("radix histogram", &src, "histogram")?;
        let keys4 = if n >= 4 { &input } else { &dummy };
        let bg = bind(
            gpu,
            &hp,
            &[(0, &input), (4, &state), (5, &tbuf), (6, &u0), (7, keys4)],
        )?;
        // Traced: the counts (kept in the trace buffer by the last workgroup, which zeroes them in
        // the state) and the digit offsets.
        let offsets = Region {
            offset: (nd * r * 4) as u64,
            ..Region::words(&state, nd * r)
        };
        plan.push(
            "histogram + scan: digit counts and offsets",
            &hp,
            bg,
            grid(hist_wgs as u32),
        )
        .capture = if trace {
            vec![Region::words(&tbuf, nd * r), offsets]
        } else {
            vec![]
        };
        kinds.push(PassKind::Histogram);
    }
    let scatter_entry = if onesweep {
        "onesweep"
    } else {
        "classic_scatter"
    };
    let mut cur = input.clone();
    let mut vcur = vin.clone();
    for d in 0..nd as u32 {
        // Passes with the same key map share one source, so one compiled pipeline (cached).
        let src = src_of(d);
        let scat = gpu.pipeline(&format!("radix {scatter_entry}"), &src, scatter_entry)?;
        let (ch, cs) = if onesweep {
            (None, None)
        } else {
            (
                Some(gpu.pipeline("radix classic histogram", &src, "classic_hist")?),
                Some(gpu.pipeline("radix classic scan", &src, "classic_scan")?),
            )
        };
        let u = uniform(d * shape.bits, d)?;
        let (dst, vdst) = (&scratch[d as usize % 2], &vscratch[d as usize % 2]);
        if let (Some(ch), Some(cs)) = (&ch, &cs) {
            let bg = bind(gpu, ch, &[(0, &cur), (4, &state), (6, &u)])?;
            plan.push(
                format!("digit {d}: tile histograms"),
                ch,
                bg,
                grid(tiles as u32),
            )
            .capture = cap(trace, Region::words(&state, r * tiles));
            kinds.push(PassKind::TileHistogram(d));
            let bg = bind(gpu, cs, &[(4, &state), (6, &u)])?;
            plan.push(format!("digit {d}: scan the counts"), cs, bg, [1, 1, 1])
                .capture = cap(trace, Region::words(&state, r * tiles));
            kinds.push(PassKind::TileScan(d));
        }
        let bg = bind(
            gpu,
            &scat,
            &[
                (0, &cur),
                (1, dst),
                (2, &vcur),
                (3, vdst),
                (4, &state),
                (5, &tbuf),
                (6, &u),
            ],
        )?;
        let label = if onesweep {
            format!("digit {d}: look-back + scatter")
        } else {
            format!("digit {d}: scatter")
        };
        let last = d as usize == nd - 1;
        let pass = plan.push(label, &scat, bg, grid(tiles as u32));
        if trace {
            pass.capture = vec![Region::words(dst, n), Region::words(&tbuf, tw)];
        }
        if vals_in.is_some() && (trace || last) {
            pass.capture.push(Region::words(vdst, n));
        }
        kinds.push(PassKind::Scatter(d));
        plan.keep.push(u);
        cur = dst.clone();
        vcur = vdst.clone();
    }
    plan.output = Some(Region::words(&cur, n));
    plan.keep.extend([input.clone(), state, tbuf, dummy, u0]);
    plan.keep.extend(scratch);
    plan.keep.extend(vscratch);
    Ok(Built {
        plan,
        input,
        kinds,
        shape,
        tiles,
        values: vals_in,
    })
}
