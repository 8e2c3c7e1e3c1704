// Batcher's odd-even merge sort network on tiles in workgroup memory (also the block sort and the
// merge-split step of `merge-split`). The network for P = 2^m positions is the stage list
//   for p = 1, 2, 4, ..., P/2:  for k = p, p/2, ..., 1:  compare-exchange (a, a + k) for every a with
//     k == p: bit p of a clear                       (the two sorted halves of each 2p block)
//     k <  p: bit k of a set, a and a + k in the same 2p block
// Positions past the end of the data (or of a segment) hold the key 0xffffffff, which sorts last;
// positions before the start (merge-split's odd phases, halo rows before 0) hold the key 0, which
// sorts first: either way a comparator that touches such a position leaves it where it is, so any n
// and any segment length run the power-of-two network with no padding in memory.
//
// One dispatch runs `nstages` stages starting at (p, k) = (2^lp_lo, 2^lk_first), stepping k down
// to 2^lk_lo and then to the next p. Those stages never mix residues mod k_lo = 2^lk_lo, so a tile
// is 2^lres residues (consecutive, for coalesced loads) x `rows` positions of each residue class
// (rows are k_lo apart). When a pass does not start with k == p its comparators straddle any tile
// boundary, so a tile also loads `halo` rows on each side, recomputes them and writes only its middle
// rows: every written value depends only on rows inside the tile. With halo = d rows for a first
// stage of d rows the tiles start on that stage's pair blocks (it is exact) and the later
// distances sum to < d.
// Reads `src`, writes `dst` (tiles overlap in what they read). All sizes are powers of two: the
// index arithmetic is shifts and masks.
//
// index_of (tile.wgsl, prepended): network position y -> array position pos = y - shift -> segment s = pos >> lseg_pad, offset
// o = pos & (seg_pad - 1); the element exists iff 0 <= pos, o < seg_len and s * seg_len + o < n.
// `// @step NAME` … `// @end` mark what the app highlights for a stage (src/ui/code.rs).

const WG: u32 = {{WG}}u;
const SIZE: u32 = {{TILE}}u;
var<workgroup> sm: array<u32, {{TILE}}>;

fn cx(e: ptr<function, array<u32, 8>>, i: u32, j: u32) {
    let a = (*e)[i];
    let b = (*e)[j];
    (*e)[i] = min(a, b);
    (*e)[j] = max(a, b);
}

@compute @workgroup_size({{WG}})
fn tile(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = wid.x + wid.y * nwg.x;        // uniform across the workgroup
    if (w >= params.tiles) { return; }    // whole workgroups past the end only
    let lR = params.lres;
    let R = 1u << lR;
    let T = params.rows;
    let H = params.halo;
    let lk_lo = params.lk_lo;
    let g = w % params.groups;            // residue group: residues g*R .. g*R + R - 1 (mod k_lo)
    let c = w / params.groups;            // row chunk
    let W = T - 2u * H;                   // rows written
    let q0 = i32(c * W) - i32(H);         // first row (class position) of the tile, may be < 0
    let r0 = i32(g * R);

    for (var x = lid; x < SIZE; x += WG) {
        let i = index_of(((q0 + i32(x >> lR)) << lk_lo) + r0 + i32(x & (R - 1u)));
        var v = 0u;
        if (i == MISSING_HIGH) {
            v = 0xffffffffu;
        } else if (i != MISSING_LOW) {
            v = to_key(src[i]);
        }
        sm[x] = v;
    }
    workgroupBarrier();

    var lp = params.lp_lo;
    var lk = params.lk_first;
    var s = 0u;
    // Register steps (untraced contiguous tiles only): 8 keys per task in registers run several
    // stages between two barriers. They do exactly the network's compare-exchanges.
    // regs3 needs whole 2p blocks in the tile: contiguous tiles and the first pass of a merge.
    let regs = params.trace == 0u && lR == 0u && lk_lo == 0u && H == 0u && SIZE >= 8u;
    let regs3 = params.trace == 0u && H == 0u && SIZE >= 8u;
    loop {
        if (s >= params.nstages) { break; }
        if (regs && lp == 0u && lk == 0u && s + 6u <= params.nstages) {
            // Stages p = 1, 2, 4 (six of them) on 8 consecutive keys.
            for (var task = lid; task < SIZE / 8u; task += WG) {
                let base = task * 8u;
                var e: array<u32, 8>;
                for (var i = 0u; i < 8u; i++) { e[i] = sm[base + i]; }
                cx(&e, 0u, 1u); cx(&e, 2u, 3u); cx(&e, 4u, 5u); cx(&e, 6u, 7u);
                cx(&e, 0u, 2u); cx(&e, 1u, 3u); cx(&e, 4u, 6u); cx(&e, 5u, 7u);
                cx(&e, 1u, 2u); cx(&e, 5u, 6u);
                cx(&e, 0u, 4u); cx(&e, 1u, 5u); cx(&e, 2u, 6u); cx(&e, 3u, 7u);
                cx(&e, 2u, 4u); cx(&e, 3u, 5u);
                cx(&e, 1u, 2u); cx(&e, 3u, 4u); cx(&e, 5u, 6u);
                for (var i = 0u; i < 8u; i++) { sm[base + i] = e[i]; }
            }
            workgroupBarrier();
            s += 6u;
            lp = 3u;
            lk = 3u;
            continue;
        }
        if (regs3 && lk == lp && lp >= lk_lo + 2u && s + 3u <= params.nstages) {
            // Stages (p, p), (p, p/2), (p, p/4): the 8 keys of one residue class mod k0 = p/4 in
            // one 2p block (rows k0/k_lo apart, residue r of the tile's 2^lR).
            let lq = lp - 2u - lk_lo;     // k0 / k_lo = 2^lq rows
            let lblk = lp + 1u - lk_lo;   // a 2p block is 2^lblk rows
            for (var task = lid; task < SIZE / 8u; task += WG) {
                let r = task & (R - 1u);
                let u = task >> lR;
                let row = ((u >> lq) << lblk) + (u & ((1u << lq) - 1u));
                var e: array<u32, 8>;
                for (var i = 0u; i < 8u; i++) { e[i] = sm[((row + (i << lq)) << lR) | r]; }
                cx(&e, 0u, 4u); cx(&e, 1u, 5u); cx(&e, 2u, 6u); cx(&e, 3u, 7u);
                cx(&e, 2u, 4u); cx(&e, 3u, 5u);
                cx(&e, 1u, 2u); cx(&e, 3u, 4u); cx(&e, 5u, 6u);
                for (var i = 0u; i < 8u; i++) { sm[((row + (i << lq)) << lR) | r] = e[i]; }
            }
            workgroupBarrier();
            s += 3u;
            if (lp - 2u == lk_lo) {
                // k0 was the pass's smallest distance: on to the next p.
                lp = lp + 1u;
                lk = lp;
            } else {
                lk = lp - 3u;
            }
            continue;
        }
        // @step compare-exchange
        let ld = lk - lk_lo;              // distance in rows: d = 2^ld
        let d = 1u << ld;
        // k < p pairs rows with bit d set (network rows): the tile's row j is network row q0 + j,
        // and q0 is a multiple of d (a pass's first stage may start half a pair block off).
        let straddle = select(0u, d, lk < lp && (u32(q0) & d) == 0u);
        let lblk = lp + 1u - lk_lo;       // a 2p block is 2^lblk rows
        for (var t = lid; t < SIZE / 2u; t += WG) {
            let r = t & (R - 1u);
            let u = t >> lR;
            let j = (((u >> ld) << (ld + 1u)) | (u & (d - 1u))) + straddle;   // lower row
            if (j + d >= T) { continue; }
            let qa = u32(q0 + i32(j));
            if (lk < lp && ((qa ^ (qa + d)) >> lblk) != 0u) { continue; }
            let xa = (j << lR) | r;
            let xb = xa + (d << lR);
            let va = sm[xa];
            let vb = sm[xb];
            sm[xa] = min(va, vb);
            sm[xb] = max(va, vb);
            if (params.trace != 0u && j >= H && j < H + W) {
                let ya = (i32(qa) << lk_lo) + r0 + i32(r);
                let ia = index_of(ya);
                let ib = index_of(ya + i32(1u << lk));
                if (ia < MISSING_LOW && ib < MISSING_LOW) {
                    flags[ia] = (params.stage_id << 1u) | u32(va > vb);
                }
            }
        }
        workgroupBarrier();
        s += 1u;
        if (lk == lk_lo) {
            lp = lp + 1u;
            lk = lp;
        } else {
            lk = lk - 1u;
        }
        // @end
    }

    for (var x = lid; x < SIZE; x += WG) {
        let row = x >> lR;
        if (row < H || row >= H + W) { continue; }
        let i = index_of(((q0 + i32(row)) << lk_lo) + r0 + i32(x & (R - 1u)));
        if (i < MISSING_LOW) { dst[i] = from_key(sm[x]); }
    }
}
