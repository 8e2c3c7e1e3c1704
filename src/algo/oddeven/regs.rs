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
//! Between groups of different c the keys change hands through workgroup memory: two barriers
//! with one buffer (the default: more workgroups an SM), one with two (`--exchange-buffers 2`).
//! Word z lives at z + ⌊z/16⌋: with that padding a warp's access to
//! register j of layout c ≤ 16 hits 32 distinct banks, and the offsets of a thread's 16 words from
//! its first are constants (tested below), so the kernel does no index arithmetic per key. Layouts
//! c ≥ 32 (the load/store layout c = T from T = 32 invocations on) cost 2 ways: the warp's 32 lanes
//! are 32 consecutive words of one row, and the pad after the 16th pushes the 32nd onto the first's
//! bank. In general the padding is conflict-free for c ≤ E and for every c when E = 32, 2-way
//! otherwise (measured by the memory lens: tests/lens.rs).
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
//! 42.1 ms. Measured on an H100 and dropped (docs/perf/oddeven.md): 16-byte global accesses,
//! in-place loads of 16 consecutive keys, 64 keys per invocation, shuffles with only the subgroup
//! edges through workgroup memory (one barrier per stage: no gain).
//!
//! This file holds the pass's shape: its stages, their groups and layouts, the padded offsets. The
//! WGSL is emitted by regs_shader.rs (the pass: tile loop, loads, stores) and regs_emit.rs (hand-overs
//! through workgroup memory, one group's stages).

pub use super::regs_shader::shader;

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
pub(super) fn padded(z: usize, keys: usize) -> usize {
    z + z / keys
}

/// The constant offset of z(t, j + m) from z(t, j = 0) after padding, for layout c (m may be
/// negative or ≥ E: rows of the neighbouring threads t ∓ c).
pub(super) fn off(c: usize, m: i64, keys: usize) -> i64 {
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

/// Loads and stores: layout c = T, or the first / last group's layout (see the module doc).
pub(super) fn io_layout(rp: &RegsPass, c: usize) -> usize {
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

#[cfg(test)]
mod tests {
    use super::super::model;
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
                // Every warp's access to register j: one word per bank where c ≤ E or E = 32, else
                // two (see the module doc).
                let want = if c <= keys || keys == 32 { 1 } else { 2 };
                for w in (0..threads).step_by(32) {
                    for j in 0..keys {
                        let mut banks = [0; 32];
                        for t in w..w + 32 {
                            banks[padded(layout_base(c, t, keys) + c * j, keys) % 32] += 1;
                        }
                        assert_eq!(
                            banks.iter().max(),
                            Some(&want),
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
