// Batcher's odd-even merge sort network on tiles in workgroup memory (also the block sort and the
// merge-split step of `merge-split`). The network for P = 2^m positions is the stage list
//   for p = 1, 2, 4, ..., P/2:  for k = p, p/2, ..., 1:  compare-exchange (a, a + k) for every a with
//     k == p: bit p of a clear                       (the two sorted halves of each 2p block)
//     k <  p: bit k of a set, a and a + k in the same 2p block
// Positions past the end of the data act as +inf-like sentinels: a comparator whose upper position
// is missing is a no-op, so any n (and any segment length) needs no padding in memory.
//
// One dispatch runs the stages (p, k) for p in [p_lo, p_hi], k from k_first (at p_lo) down to
// k_last (at p_hi), all of them with distance >= k_lo. Those stages never mix residues mod k_lo, so a
// tile is `res` residues (consecutive, for coalesced loads) x `rows` positions of each residue class
// (rows are k_lo apart). When a pass does not start with k == p its comparators straddle any tile
// boundary, so a tile also loads `halo` rows on each side, recomputes them and writes only its middle
// rows: every written value depends only on rows inside the tile (distances sum to < halo).
// Reads `src`, writes `dst` (tiles overlap in what they read).
//
// Network coordinate y -> padded position y - shift (missing when negative) -> segment s = pos / P, offset o = pos % P; the
// element exists iff o < seg_len and s * seg_len + o < n; it lives at data[s * seg_len + o].

struct Params {
    n: u32, seg_len: u32, seg_pad: u32, shift: u32,
    k_lo: u32, res: u32, rows: u32, halo: u32,
    p_lo: u32, p_hi: u32, k_first: u32, k_last: u32,
    trace: u32, stage_id: u32, groups: u32, tiles: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;

const WG: u32 = {{WG}}u;
const SENTINEL: u32 = 0xffffffffu;
var<workgroup> sm: array<u32, {{TILE}}>;

// The array index of network coordinate y, or 0xffffffff when no element lives there.
fn index_of(y: u32) -> u32 {
    if (y < params.shift) { return 0xffffffffu; }
    let pos = y - params.shift;
    let s = pos / params.seg_pad;
    let o = pos % params.seg_pad;
    let i = s * params.seg_len + o;
    if (o >= params.seg_len || i >= params.n) { return 0xffffffffu; }
    return i;
}

@compute @workgroup_size({{WG}})
fn tile(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = wid.x + wid.y * nwg.x;        // uniform across the workgroup
    if (w >= params.tiles) { return; }    // whole workgroups past the end only
    let R = params.res;
    let T = params.rows;
    let H = params.halo;
    let k_lo = params.k_lo;
    let g = w % params.groups;            // residue group: residues g*R .. g*R + R - 1 (mod k_lo)
    let c = w / params.groups;            // row chunk
    let W = T - 2u * H;                   // rows written
    let q0 = i32(c * W) - i32(H);         // first row (class position) of the tile, may be < 0
    let r0 = g * R;
    let size = R * T;

    for (var x = lid; x < size; x += WG) {
        let q = q0 + i32(x / R);
        var v = SENTINEL;
        if (q >= 0) {
            let i = index_of(u32(q) * k_lo + r0 + (x % R));
            if (i != 0xffffffffu) { v = to_key(src[i]); }
        }
        sm[x] = v;
    }
    workgroupBarrier();

    let half = size / 2u;
    var p = params.p_lo;
    var k = params.k_first;
    // p_lo > p_hi: no stages (segments of one element), the pass only moves the keys.
    if (params.p_lo <= params.p_hi) { loop {
        let d = k / k_lo;                 // distance in rows
        let straddle = select(0u, d, k < p);
        for (var t = lid; t < half; t += WG) {
            let r = t % R;
            let u = t / R;
            let j = 2u * d * (u / d) + (u % d) + straddle;   // lower row, local
            if (j + d >= T) { continue; }
            let qa = q0 + i32(j);
            if (qa < 0) { continue; }
            let ya = u32(qa) * k_lo + r0 + r;
            let yb = ya + k;
            if (ya / (2u * p) != yb / (2u * p)) { continue; }
            // A missing upper position (past the end) acts as +inf, a missing lower one (before the
            // start, merge-split's odd phases) as -inf: either way the comparator is a no-op.
            let ia = index_of(ya);
            if (ia == 0xffffffffu || index_of(yb) == 0xffffffffu) { continue; }
            let xa = j * R + r;
            let xb = xa + d * R;
            let va = sm[xa];
            let vb = sm[xb];
            let swapped = va > vb;
            if (swapped) {
                sm[xa] = vb;
                sm[xb] = va;
            }
            if (params.trace != 0u && j >= H && j < H + W) {
                flags[ia] = (params.stage_id << 1u) | u32(swapped);
            }
        }
        workgroupBarrier();
        if (p == params.p_hi && k == params.k_last) { break; }
        if (k == 1u || k == k_lo) {
            p = p * 2u;
            k = p;
        } else {
            k = k / 2u;
        }
    } }

    for (var x = lid; x < size; x += WG) {
        let row = x / R;
        if (row < H || row >= H + W) { continue; }
        let q = q0 + i32(row);
        if (q < 0) { continue; }
        let i = index_of(u32(q) * k_lo + r0 + (x % R));
        if (i != 0xffffffffu) { dst[i] = from_key(sm[x]); }
    }
}
