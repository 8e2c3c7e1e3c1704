//! The register kernel: Batcher's network on a tile with E keys per invocation in registers
//! (E = 32 for whole arrays on GPUs, 16 for segments ≤ 2048 and on CPU adapters;
//! `--keys-per-invocation` 8, 16 or 32; the text below says 16),
//! generated as straight-line WGSL for one tile pass (untraced runs; traces use batcher.wgsl,
//! one stage per step). Same tiles, same comparators, far fewer trips through workgroup memory.
//!
//! Tile coordinates: z = r + R·row (R residues of the network, rows k_lo apart, see batcher.wgsl).
//! A network stage (p, k) becomes the tile stage (p_z, k_z) with k_z = R·k/k_lo; p_z = R·p/k_lo
//! when every merge block lies inside the tile, else the block test runs per comparator on the
//! network row (`Block::Masked`: halo tiles). A halo tile starts on its first stage's pair blocks
//! (network row ≡ d mod 2d for that stage's d rows), so that stage's pairs lie inside the tile and
//! inside each thread; the later stages straddle and spoil fewer than d rows at each edge.
//!
//! The stages go in *groups*; during a group thread t holds the 16 tile positions
//!   z(t, j) = (t mod c) + c·(16·⌊t / c⌋ + j),   j = 0..16
//! — 16 consecutive rows of one residue class mod c. A stage at distance k_z = d·c (d ≤ 8) then
//! compares rows j and j + d of the class:
//! - the first stages of a merge (k = p, p/2, p/4, p/8; c = p/8) stay inside one thread: the
//!   16 rows are the class's whole 2p block;
//! - later stages (k < p: pairs (a, a + k) with bit k of a set) stay inside a thread except the
//!   top d rows, whose partners are the next thread's bottom d rows (thread t + c): those go by
//!   subgroup shuffle when the whole block's threads share a subgroup, else through workgroup
//!   memory with one barrier. This carry into the next group is why no set of positions is closed
//!   under two such stages (unlike bitonic butterflies): up to 4 of them per group.
//!
//! Between groups of different c the keys change hands through workgroup memory (one barrier with
//! two buffers; two with one). Word z lives at z + ⌊z/16⌋: with that padding every layout above
//! reads and writes without bank conflicts, and the offsets of a thread's 16 words from its first
//! are constants (tested below), so the kernel does no index arithmetic per key.
//!
//! Loads and stores use layout c = T (z = t + T·i: neighbouring invocations, neighbouring words),
//! or straight the first / last group's layout when every instruction there still covers runs of
//! ≥ 8 keys (c ≥ 8 on contiguous tiles; rows of ≥ 8 residues): one trip through workgroup memory
//! less (H100 2^28 52.8 → 50.9 ms). Interior tiles of a whole array or of power-of-two segments
//! address the array directly; only edge tiles map every key through `index_of`. Masked groups are
//! emitted twice, the copy without the block test running on tiles that lie inside one merge block
//! (a uniform branch).
//!
//! A workgroup may run S neighbouring tiles one after the other (`tiles_per_wg`): once a tile's
//! keys are in workgroup memory for the store layout, the registers are free and the next tile's
//! loads are issued before this tile's stores, so loads and stores overlap inside one workgroup
//! (passes that store straight from registers issue the next loads after their stores). The
//! defaults come from H100 per-pass times (`default_tiles_per_wg` in mod.rs); H100 2^28 46.2 →
//! 42.1 ms. Measured on an H100 and dropped (docs/PERFORMANCE.md): 16-byte global accesses,
//! in-place loads of 16 consecutive keys, 64 keys per invocation, shuffles with only the subgroup
//! edges through workgroup memory (one barrier per stage: no gain).

use super::model;
use std::fmt::Write;

/// How a tile stage decides "same merge block".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// Merge blocks of 2·p_z tile positions, aligned in the tile.
    Local(usize),
    /// Blocks larger than the tile (or not aligned with it): test the network rows, 2^lblk rows per block.
    Masked,
}

/// One generated tile pass.
#[derive(Clone, Debug)]
pub struct RegsPass {
    /// Keys per tile: a power of two ≥ 256.
    pub tile: usize,
    /// Keys per invocation E (8, 16 or 32): groups of up to log2 E stages.
    pub keys: usize,
    /// log2 of the residues per row (R) and of the network distance between rows (k_lo).
    pub lres: u32,
    pub lk_lo: u32,
    /// Rows recomputed on each side and not written.
    pub halo: usize,
    /// Tile stages (block, k_z).
    pub stages: Vec<(Block, usize)>,
    /// log2 of a merge block in network rows (Block::Masked stages).
    pub lblk: u32,
    /// The first stage's k_z when the tiles start on that stage's pair blocks (halo ≡ d mod 2d
    /// rows): its pairs (z, z + k_z) have bit k_z of z *clear* and lie inside each thread's rows.
    pub aligned_first: Option<usize>,
    /// Neighbour exchanges inside blocks of at most this many threads go by subgroup shuffle (the
    /// adapter's minimum subgroup size; 0: never).
    pub shuffle_within: usize,
    /// Two workgroup buffers (one barrier per change of hands) or one (two barriers).
    pub double: bool,
    /// Tiles per workgroup S: workgroup g runs tiles g·S … g·S + S − 1 one after the other and
    /// issues the next tile's loads before this tile's stores (see the module doc).
    pub tiles_per_wg: usize,
}

impl RegsPass {
    pub fn threads(&self) -> usize {
        self.tile / self.keys
    }

    /// Workgroup memory in bytes.
    pub fn smem_bytes(tile: usize, keys: usize, double: bool) -> usize {
        4 * padded(tile, keys) * if double { 2 } else { 1 }
    }
}

/// Word z of the tile lives at z + ⌊z/E⌋ in workgroup memory.
fn padded(z: usize, keys: usize) -> usize {
    z + z / keys
}

/// The constant offset of z(t, j + m) from z(t, j = 0) after padding, for layout c (m may be
/// negative or ≥ E: rows of the neighbouring threads t ∓ c).
fn off(c: usize, m: i64, keys: usize) -> i64 {
    let x = c as i64 * m;
    x + x.div_euclid(keys as i64)
}

/// A group of stages sharing one layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Class modulus (tile positions): thread t holds rows of class t mod c.
    pub c: usize,
    /// Threads per merge block along the class (1: the block is the thread's 16 rows), or None
    /// when the block test is per comparator (Masked).
    pub threads_per_block: Option<usize>,
    pub stages: Vec<(Block, usize)>,
}

/// Split the tile stages into groups (see the module doc).
pub fn groups(tile: usize, keys: usize, stages: &[(Block, usize)]) -> Vec<Group> {
    let half = keys / 2;
    let mut out: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < stages.len() {
        let (b, k) = stages[i];
        // The run of stages of this merge (same block).
        let run_end = (i..stages.len())
            .find(|&x| stages[x].0 != b)
            .unwrap_or(stages.len());
        let last_k = stages[run_end - 1].1;
        if let Block::Local(p) = b
            && p <= half
        {
            // Whole merges of 2p ≤ E positions: one chunk of E per thread, all in registers.
            let end = (i..stages.len())
                .find(|&x| !matches!(stages[x].0, Block::Local(q) if q <= half))
                .unwrap_or(stages.len());
            out.push(Group {
                c: 1,
                threads_per_block: Some(1),
                stages: stages[i..end].to_vec(),
            });
            i = end;
            continue;
        }
        let c = match b {
            Block::Local(p) if k == p => (p / half).max(last_k),
            _ => (k / half).max(last_k).max(1),
        };
        let end = (i..run_end).find(|&x| stages[x].1 < c).unwrap_or(run_end);
        let threads_per_block = match b {
            Block::Local(p) => Some((2 * p / (keys * c)).max(1)),
            Block::Masked => None,
        };
        debug_assert!(keys * c <= tile);
        out.push(Group {
            c,
            threads_per_block,
            stages: stages[i..end].to_vec(),
        });
        i = end;
    }
    out
}

/// Thread t's first tile position in layout c.
pub fn layout_base(c: usize, t: usize, keys: usize) -> usize {
    (t % c) + c * keys * (t / c)
}

struct Emit {
    o: String,
    double: bool,
    /// The buffer the next hand-over writes.
    cur: usize,
    /// Reads since the last barrier (one buffer: a barrier before the next write).
    reads: bool,
    /// The layout (c) the registers are in.
    c: usize,
    /// Keys per invocation E.
    keys: usize,
}

impl Emit {
    fn barrier(&mut self) {
        self.o.push_str("    workgroupBarrier();\n");
        self.reads = false;
    }

    fn buf(&self) -> String {
        format!("s{}", if self.double { self.cur } else { 0 })
    }

    fn before_write(&mut self) {
        if !self.double && self.reads {
            self.barrier();
        }
    }

    fn after_read(&mut self) {
        if self.double {
            self.cur ^= 1;
        } else {
            self.reads = true;
        }
    }

    fn base(&mut self, c: usize, name: &str) {
        self.o.push_str(&base_line(c, self.keys, name));
    }

    /// Write the registers (layout self.c) to workgroup memory, then a barrier.
    fn spill(&mut self) {
        self.before_write();
        let b = self.buf();
        self.o.push_str("    {\n");
        self.base(self.c, "zw");
        let le = self.keys.trailing_zeros();
        let _ = writeln!(self.o, "        let pw = zw + (zw >> {le}u);");
        for j in 0..self.keys {
            let _ = writeln!(
                self.o,
                "        {b}[pw + {}u] = e{j};",
                off(self.c, j as i64, self.keys)
            );
        }
        self.o.push_str("    }\n");
        self.barrier();
    }

    /// Hand the registers over from layout self.c to layout c through workgroup memory.
    fn relayout(&mut self, c: usize) {
        if c == self.c {
            return;
        }
        // before_write first: the comment stays after a barrier it may emit (spill's own call is
        // then a no-op).
        self.before_write();
        let b = self.buf();
        let le = self.keys.trailing_zeros();
        let _ = writeln!(self.o, "    // layout c = {} -> c = {c}", self.c);
        self.spill();
        self.o.push_str("    {\n");
        self.base(c, "zr");
        let _ = writeln!(self.o, "        let pr = zr + (zr >> {le}u);");
        for j in 0..self.keys {
            let _ = writeln!(
                self.o,
                "        e{j} = {b}[pr + {}u];",
                off(c, j as i64, self.keys)
            );
        }
        self.o.push_str("    }\n");
        self.after_read();
        self.c = c;
    }
}

fn cx(o: &mut String, i: usize, j: usize, keep: Option<&str>) {
    match keep {
        None => {
            let _ = writeln!(
                o,
                "        {{ let a = e{i}; e{i} = min(a, e{j}); e{j} = max(a, e{j}); }}"
            );
        }
        Some(k) => {
            let _ = writeln!(
                o,
                "        {{ let a = e{i}; let b = e{j}; e{i} = select(a, min(a, b), {k}); e{j} = select(b, max(a, b), {k}); }}"
            );
        }
    }
}

/// The WGSL of one tile pass (prepend keys.wgsl and tile.wgsl).
pub fn shader(rp: &RegsPass) -> String {
    let tile = rp.tile;
    let t_count = rp.threads();
    assert!(tile.is_power_of_two() && tile >= 256, "tile {tile}");
    let lres = rp.lres;
    let res = 1usize << lres;
    let rows = tile >> lres;
    assert!(rows > 2 * rp.halo && t_count >= res);
    let written = rows - 2 * rp.halo;
    let keys = rp.keys;
    assert!(matches!(keys, 8 | 16 | 32), "keys {keys}");
    let gs = groups(tile, keys, &rp.stages);
    let mut e = Emit {
        o: String::new(),
        double: rp.double,
        cur: 0,
        reads: false,
        c: t_count,
        keys,
    };
    let pb = padded(tile, keys);
    let _ = writeln!(
        e.o,
        "// Generated register kernel (src/algo/oddeven/regs.rs): tile {tile}, R = {res}, rows {rows} \
         (halo {}), {} stages in {} groups.",
        rp.halo,
        rp.stages.len(),
        gs.len()
    );
    let _ = writeln!(e.o, "var<workgroup> s0: array<u32, {pb}>;");
    if rp.double {
        let _ = writeln!(e.o, "var<workgroup> s1: array<u32, {pb}>;");
    }
    e.o.push_str(
        "\nfn load_key(y: i32) -> u32 {\n    let i = index_of(y);\n    if (i == MISSING_HIGH) { return 0xffffffffu; }\n    if (i == MISSING_LOW) { return 0u; }\n    return to_key(src[i]);\n}\n\n",
    );
    let _ = writeln!(
        e.o,
        "fn tile_q0(w: u32) -> i32 {{ return i32((w / params.groups) * {written}u) - {}; }}",
        rp.halo
    );
    let _ = writeln!(
        e.o,
        "fn tile_yb(w: u32, q0: i32, z: u32) -> i32 {{\n    return ((q0 + i32(z >> {lres}u)) << {}u) + i32(((w % params.groups) << {lres}u) + (z & {}u));\n}}\n",
        rp.lk_lo,
        res - 1
    );
    let _ = writeln!(
        e.o,
        "@compute @workgroup_size({t_count})\nfn regs(@builtin(local_invocation_index) t: u32,\n        @builtin(workgroup_id) wid: vec3<u32>,\n        @builtin(num_workgroups) nwg: vec3<u32>) {{"
    );
    let masked_groups = gs.iter().any(|g| g.threads_per_block.is_none());
    // Interior tiles of a whole array (or of power-of-two segments): network position = array
    // index, nothing missing; the uniform test spares every key its index_of.
    let tile_vars = |w: &str, ind: &str, one_block: bool| {
        let mut o = format!(
            "{ind}let q0 = tile_q0({w});\n{ind}let r0 = i32(({w} % params.groups) << {lres}u);\n{ind}let y_lo = (q0 << {lk}u) + r0;\n{ind}let y_hi = ((q0 + {}) << {lk}u) + r0 + {};\n{ind}let plain = params.shift == 0u && (params.lseg_pad == 31u || params.seg_len == (1u << params.lseg_pad))\n        && y_lo >= 0 && u32(y_hi) < params.n;\n",
            rows - 1,
            res - 1,
            lk = rp.lk_lo
        );
        if one_block && masked_groups {
            let _ = writeln!(
                o,
                "{ind}let one_block = ((u32(q0) ^ u32(q0 + {})) >> {}u) == 0u;",
                rows - 1,
                rp.lblk
            );
        }
        o
    };
    let contiguous = res == 1 << rp.lk_lo;
    let io_layout = |c: usize| io_layout(rp, c);
    // Register j of layout c is network position yb + dy(c, j) (yb: the thread's first, z = zb).
    let dy = |c: usize, j: usize| {
        if contiguous {
            c * j
        } else {
            (j * c / res) << rp.lk_lo
        }
    };
    let c_load = io_layout(gs.first().map_or(t_count, |g| g.c));
    let le = keys.trailing_zeros();
    // The loads of tile `w` into e0 … (the tile variables in scope): the first position, then the loads.
    let load_base =
        |w: &str| base_line(c_load, keys, "zl") + &format!("    let yl = tile_yb({w}, q0, zl);\n");
    let load_keys = || {
        let mut o = String::new();
        plain_or_mapped(
            &mut o,
            "yl",
            |i| format!("        e{i} = to_key(src[ib + {}u]);\n", dy(c_load, i)),
            |i| format!("        e{i} = load_key(yl + {});\n", dy(c_load, i)),
            keys,
        );
        o
    };
    let s_tiles = rp.tiles_per_wg.max(1);
    e.o.push_str("    let wg = wid.x + wid.y * nwg.x;\n");
    if s_tiles == 1 {
        e.o.push_str("    if (wg >= params.tiles) { return; }\n");
    } else {
        // Neighbouring tiles: their rows interleave in memory (heads, strided tails), so a
        // workgroup's next tile continues where this one's reads left off (H100: faster than
        // tiles g, g + G, … at 2^28, 42.1 against 42.8 ms).
        let _ = writeln!(
            e.o,
            "    var w = wg * {s_tiles}u;\n    let w_end = min(w + {s_tiles}u, params.tiles);\n    if (w >= w_end) {{ return; }}"
        );
    }
    // The flags binding belongs to the shared layout; untraced runs never write it.
    e.o.push_str("    if (params.trace == 0xffffffffu) { flags[0] = 0u; }\n");
    if s_tiles == 1 {
        e.o.push_str("    let w = wg;\n");
        e.o.push_str(&tile_vars("w", "    ", true));
        e.o.push_str(&load_base("w"));
        for i in 0..keys {
            let _ = writeln!(e.o, "    var e{i}: u32;");
        }
        e.o.push_str(&load_keys());
    } else {
        for i in 0..keys {
            let _ = writeln!(e.o, "    var e{i}: u32;");
        }
        e.o.push_str("    {\n");
        e.o.push_str(&tile_vars("w", "    ", false));
        e.o.push_str(&load_base("w"));
        e.o.push_str(&load_keys());
        e.o.push_str("    }\n    loop {\n");
        e.o.push_str(&tile_vars("w", "    ", true));
    }
    e.c = c_load;
    for g in &gs {
        e.relayout(g.c);
        let _ = writeln!(
            e.o,
            "    // group c = {}: stages k_z = {:?}",
            g.c,
            g.stages.iter().map(|s| s.1).collect::<Vec<_>>()
        );
        if g.threads_per_block.is_none() {
            // Most halo tiles lie inside one merge block: no per-comparator test there.
            e.o.push_str("    if (one_block) {\n");
            let saved = (e.cur, e.reads);
            emit_group(&mut e, g, rp, t_count, false);
            let after = (e.cur, e.reads);
            (e.cur, e.reads) = saved;
            e.o.push_str("    } else {\n");
            emit_group(&mut e, g, rp, t_count, true);
            debug_assert_eq!((e.cur, e.reads), after);
            e.o.push_str("    }\n");
        } else {
            emit_group(&mut e, g, rp, t_count, false);
        }
    }
    // Store the rows this tile owns (halo rows are not written).
    let c_store = io_layout(e.c);
    let owned = |i: usize| {
        if rp.halo == 0 {
            "true".to_string()
        } else {
            format!(
                "((zs + {}u) >> {lres}u) - {}u < {written}u",
                c_store * i,
                rp.halo
            )
        }
    };
    let prefetch = |o: &mut String| {
        o.push_str("    let wn = w + 1u;\n    if (wn < w_end) {\n");
        o.push_str(&tile_vars("wn", "    ", false));
        o.push_str(&load_base("wn"));
        o.push_str(&load_keys());
        o.push_str("    }\n");
    };
    // Stored values: the registers, or (prefetching) workgroup memory in layout c_store.
    let mut from_smem = None;
    if s_tiles > 1 && c_store != e.c {
        // Keys to workgroup memory first: the registers are free for the next tile's loads,
        // which fly while this tile's stores are issued.
        e.spill();
        from_smem = Some(e.buf());
        prefetch(&mut e.o);
        e.c = c_store;
    } else {
        e.relayout(c_store);
    }
    e.base(c_store, "zs");
    e.o.push_str("    let ys = tile_yb(w, q0, zs);\n");
    if from_smem.is_some() {
        let _ = writeln!(e.o, "    let ps = zs + (zs >> {le}u);");
    }
    let val = |i: usize| match &from_smem {
        Some(b) => format!("{b}[ps + {}u]", off(c_store, i as i64, keys)),
        None => format!("e{i}"),
    };
    plain_or_mapped(
        &mut e.o,
        "ys",
        |i| {
            format!(
                "        if ({}) {{ dst[ib + {}u] = from_key({}); }}\n",
                owned(i),
                dy(c_store, i),
                val(i)
            )
        },
        |i| {
            format!(
                "        {{\n            let ix = index_of(ys + {});\n            if ({} && ix < MISSING_LOW) {{ dst[ix] = from_key({}); }}\n        }}\n",
                dy(c_store, i),
                owned(i),
                val(i)
            )
        },
        keys,
    );
    if s_tiles > 1 {
        if from_smem.is_none() {
            prefetch(&mut e.o);
        }
        // The next tile's first write to workgroup memory follows this one's reads.
        e.o.push_str(
            "    w = wn;\n    if (w >= w_end) { break; }\n    workgroupBarrier();\n    }\n",
        );
    }
    e.o.push_str("}\n");
    e.o
}

/// `let name = …;`: thread t's first tile position z in layout c (E = keys per thread).
fn base_line(c: usize, keys: usize, name: &str) -> String {
    let lc = c.trailing_zeros();
    format!(
        "    let {name} = (t & {}u) + ((t >> {lc}u) << {}u);\n",
        c - 1,
        lc + keys.trailing_zeros()
    )
}

/// Loads and stores: layout c = T, or the first / last group's layout (see the module doc).
fn io_layout(rp: &RegsPass, c: usize) -> usize {
    let res = 1usize << rp.lres;
    let contiguous = rp.lres == rp.lk_lo;
    if c >= 8 && (contiguous || (res >= 8 && c.is_multiple_of(res))) {
        c
    } else {
        rp.threads()
    }
}

/// Does the pass hand its keys through workgroup memory before storing them?
pub fn stores_through_workgroup_memory(rp: &RegsPass) -> bool {
    let gs = groups(rp.tile, rp.keys, &rp.stages);
    let c_last = gs.last().map_or(rp.threads(), |g| g.c);
    io_layout(rp, c_last) != c_last
}

/// `if (plain) { plain(0..keys) } else { mapped(0..keys) }`: interior tiles address the array
/// directly (`ib`), the others map every position through `index_of`.
fn plain_or_mapped(
    o: &mut String,
    yb: &str,
    plain: impl Fn(usize) -> String,
    mapped: impl Fn(usize) -> String,
    keys: usize,
) {
    let _ = writeln!(o, "    if (plain) {{\n        let ib = u32({yb});");
    (0..keys).for_each(|i| o.push_str(&plain(i)));
    o.push_str("    } else {\n");
    (0..keys).for_each(|i| o.push_str(&mapped(i)));
    o.push_str("    }\n");
}

/// One group's stages (see the module doc). `use_mask`: test the merge block per comparator
/// (Masked groups on a tile that a block boundary crosses).
fn emit_group(e: &mut Emit, g: &Group, rp: &RegsPass, t_count: usize, use_mask: bool) {
    let c = g.c;
    let lc = c.trailing_zeros();
    let lres = rp.lres;
    let keys = rp.keys;
    let le = keys.trailing_zeros();
    let masked = g.threads_per_block.is_none();
    let tpb = g.threads_per_block.unwrap_or(t_count / c);
    // Does this group need the neighbours? (A stage with k < p and more than one thread per block.)
    let inside = |b: Block, k: usize| match b {
        Block::Local(p) => p == k,
        Block::Masked => rp.aligned_first == Some(k),
    };
    let crosses = tpb > 1 && g.stages.iter().any(|&(b, k)| !inside(b, k));
    e.o.push_str("    {\n");
    if crosses || masked {
        e.base(c, "zg");
        let _ = writeln!(e.o, "        let u = t >> {lc}u;");
    }
    if masked {
        // Network row of register j: qg + (c / R)·j.
        let _ = writeln!(e.o, "        let qg = q0 + i32(zg >> {lres}u);");
    }
    if crosses {
        let _ = writeln!(e.o, "        let pg = zg + (zg >> {le}u);");
        if masked {
            let _ = writeln!(
                e.o,
                "        let has_next = u + 1u < {}u;\n        let has_prev = u > 0u;",
                t_count / c
            );
        } else {
            let _ = writeln!(
                e.o,
                "        let has_next = (u & {}u) != {}u;\n        let has_prev = (u & {}u) != 0u;",
                tpb - 1,
                tpb - 1,
                tpb - 1
            );
        }
    }
    let shuffle = crosses && !masked && rp.shuffle_within > 0 && c * tpb <= rp.shuffle_within;
    for &(b, k) in &g.stages {
        let d = k / c;
        debug_assert!((1..=keys / 2).contains(&d) && k % c == 0);
        let rowd = (k >> lres) as i64; // network rows between the pair (Masked)
        let rows_per_reg = (c >> lres) as i64;
        let first = inside(b, k);
        let _ = writeln!(e.o, "        // stage k_z = {k} (d = {d})\n        {{");
        // `name` = the pair whose lower end is network row qg + lo stays in one merge block.
        let keep = |o: &mut String, lo: i64, name: &str| {
            let _ = writeln!(
                o,
                "        let {name} = ((u32(qg + {lo}) ^ u32(qg + {})) >> {}u) == 0u;",
                lo + rowd,
                rp.lblk
            );
        };
        let cross_here = crosses && !first;
        // Cross rows ([0, d) and [E - d, E)) and in-thread pairs are disjoint within a stage: each
        // neighbour value is fetched where it is used (2 live temporaries, not 2d).
        let bname = e.buf();
        let top_cond = |o: &mut String, j: usize| {
            if masked && use_mask {
                keep(o, rows_per_reg * j as i64, &format!("kt{j}"));
                format!("has_next && kt{j}")
            } else {
                "has_next".into()
            }
        };
        let bottom_cond = |o: &mut String, j: usize| {
            if masked && use_mask {
                keep(o, rows_per_reg * j as i64 - rowd, &format!("kb{j}"));
                format!("has_prev && kb{j}")
            } else {
                "has_prev".into()
            }
        };
        // Neighbour value j (next thread's row j) / (previous thread's row E - d + j).
        let fetch_next = |j: usize| {
            if shuffle {
                format!("subgroupShuffleDown(e{j}, {c}u)")
            } else {
                format!("{bname}[pg + {}u]", off(c, (keys + j) as i64, keys))
            }
        };
        let fetch_prev = |j: usize| {
            if shuffle {
                format!("subgroupShuffleUp(e{j}, {c}u)")
            } else {
                format!("{bname}[pg - {}u]", -off(c, j as i64 - keys as i64, keys))
            }
        };
        if cross_here && !shuffle {
            // Through workgroup memory: bottom and top d rows out, the neighbours' in after the
            // barrier (guarded: the first and last threads of a block have no neighbour).
            e.before_write();
            for j in (0..d).chain(keys - d..keys) {
                let _ = writeln!(
                    e.o,
                    "        {bname}[pg + {}u] = e{j};",
                    off(c, j as i64, keys)
                );
            }
            e.barrier();
        }
        // Pairs inside the thread.
        for j in 0..keys - d {
            let own = match b {
                Block::Local(p) => model::is_comparator(p / c, d, j),
                Block::Masked => (j & d != 0) != first,
            };
            if !own {
                continue;
            }
            if masked && use_mask {
                keep(&mut e.o, rows_per_reg * j as i64, &format!("k{j}"));
                cx(&mut e.o, j, j + d, Some(&format!("k{j}")));
            } else {
                cx(&mut e.o, j, j + d, None);
            }
        }
        if cross_here {
            // Top row t = E - d + j: the lower end of a pair with the next thread's row j; bottom
            // row j: the upper end of a pair with the previous thread's row E - d + j.
            for j in 0..d {
                let t = keys - d + j;
                let _ = writeln!(e.o, "        {{");
                if shuffle {
                    let _ = writeln!(e.o, "        let nb = {};", fetch_next(j));
                    let _ = writeln!(e.o, "        let pv = {};", fetch_prev(t));
                } else {
                    let _ = writeln!(
                        e.o,
                        "        var nb = 0u;\n        if (has_next) {{ nb = {}; }}",
                        fetch_next(j)
                    );
                    let _ = writeln!(
                        e.o,
                        "        var pv = 0u;\n        if (has_prev) {{ pv = {}; }}",
                        fetch_prev(t)
                    );
                }
                let cond = top_cond(&mut e.o, t);
                let _ = writeln!(e.o, "        e{t} = select(e{t}, min(e{t}, nb), {cond});");
                let cond = bottom_cond(&mut e.o, j);
                let _ = writeln!(e.o, "        e{j} = select(e{j}, max(e{j}, pv), {cond});");
                let _ = writeln!(e.o, "        }}");
            }
            if !shuffle {
                e.after_read();
            }
        }
        e.o.push_str("        }\n");
    }
    e.o.push_str("    }\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_offsets_are_constants_per_layout() {
        for keys in [8, 16, 32] {
            for lt in 8..=12 {
                let tile = 1usize << lt;
                let threads = tile / keys;
                let mut c = 1;
                while c <= threads {
                    for t in 0..threads {
                        let zb = layout_base(c, t, keys);
                        for m in -(keys as i64)..2 * keys as i64 {
                            let z = zb as i64 + c as i64 * m;
                            if z < 0 || z >= tile as i64 {
                                continue;
                            }
                            let want = padded(z as usize, keys) as i64;
                            assert_eq!(
                                padded(zb, keys) as i64 + off(c, m, keys),
                                want,
                                "E {keys} c {c} t {t} m {m}"
                            );
                        }
                    }
                    c *= 2;
                }
            }
        }
    }

    #[test]
    fn layouts_cover_the_tile_and_hit_distinct_banks() {
        for keys in [8, 16, 32] {
            let tile = 4096;
            let threads = tile / keys;
            let mut c = 1;
            while c <= threads {
                let mut seen = vec![false; tile];
                for t in 0..threads {
                    for j in 0..keys {
                        let z = layout_base(c, t, keys) + c * j;
                        assert!(!seen[z]);
                        seen[z] = true;
                    }
                }
                // Every warp's access to register j: at most 2 words per bank.
                for w in (0..threads).step_by(32) {
                    for j in 0..keys {
                        let mut banks = [0; 32];
                        for t in w..w + 32 {
                            banks[padded(layout_base(c, t, keys) + c * j, keys) % 32] += 1;
                        }
                        assert!(
                            banks.iter().all(|&b| b <= 2),
                            "E {keys} c {c} j {j} {banks:?}"
                        );
                    }
                }
                c *= 2;
            }
        }
    }

    /// The groups run exactly the pass's stages, each at a row distance the group's layout holds.
    #[test]
    fn groups_cover_every_stage_once() {
        for keys in [8, 16, 32] {
            for lt in 8..=12 {
                let tile = 1usize << lt;
                let stages: Vec<(Block, usize)> = model::batcher_stages(tile)
                    .into_iter()
                    .map(|(p, k)| (Block::Local(p), k))
                    .collect();
                let gs = groups(tile, keys, &stages);
                let flat: Vec<_> = gs.iter().flat_map(|g| g.stages.clone()).collect();
                assert_eq!(flat, stages);
                for g in &gs {
                    for &(b, k) in &g.stages {
                        assert!(k % g.c == 0 && k / g.c <= keys / 2, "{g:?}");
                        if let Block::Local(p) = b
                            && k == p
                        {
                            assert_eq!(g.threads_per_block, Some(1), "{g:?}");
                        }
                    }
                }
            }
        }
    }
}
