// Radix sort (LSD), one digit of BITS bits per scatter pass: what every pass shares, the histogram,
// the scan of the counts and classic's histogram and scan. Prepended: shaders/oddeven/keys.wgsl (the
// order-preserving key map: to_key / from_key) and one of rank_sg.wgsl / rank_wg.wgsl (how a warp
// finds the keys of its row that share a digit, and how the bucket counts are scanned). Appended:
// the scatter passes' entry points, generated straight-line by src/algo/radix/kernel.rs.
//
// A tile is TILE = WG * KPT keys. Warp w (a subgroup, or a virtual warp of G threads without
// subgroup operations) owns the contiguous segment of KPT * L keys at w * KPT * L; lane l loads key
// j * L + l of it for j = 0..KPT (coalesced), so a warp walks its segment in key order and the
// per-warp digit counts give every key a STABLE rank: (keys of smaller digit in the tile) + (keys
// of its digit in earlier warps) + (keys of its digit earlier in its warp). Keys are then
// scattered inside workgroup memory into tile order by digit and written out from there, so equal
// digits leave as runs of consecutive addresses (coalesced writes).
// Positions past the end hold key 0xFFFFFFFF: the largest digit, after every real key of the tile,
// never written and never counted in a published count.
//
// state (atomic words): onesweep: [0, D*R) digit counts; [D*R, 2*D*R) their scan, the global
// digit offsets; [2*D*R, 2*D*R + D) tile tickets per digit pass; 2*D*R + D the histogram's
// workgroups done (DONE); then per digit pass, per tile, per bucket a look-back status
// (flag << 30) | count: flag 1 = AGGREGATE (this tile's count), 2 = INCLUSIVE (this and every
// earlier tile). Counts stay below 2^30 (a binding holds < 2^30 words). Every write is atomicMax,
// so a status never goes back and every writer of a flag writes the same count. No pass clears the
// state before a run: it is created zeroed, and every run leaves it so — the histogram's last
// workgroup zeroes the counts, tickets and DONE once it has scanned the counts, and each digit
// pass zeroes the previous pass's statuses of its tile (digit 0: the last pass's, of the run
// before).
// classic: [0, R * tiles) the tile counts bucket-major (bucket b of tile t at b * tiles + t), so
// one exclusive scan of the whole array gives every (tile, bucket) its global offset.

const BITS: u32 = {{BITS}}u;
const R: u32 = 1u << BITS;
const WG: u32 = {{WG}}u;
const KPT: u32 = {{KPT}}u;
const TILE: u32 = {{WG}}u * {{KPT}}u;
const D: u32 = {{D}}u;            // digits: ceil(32 / BITS)
const NW: u32 = {{NW}}u;          // warp-histogram rows: WG / (smallest warp)
const BPT: u32 = (R + WG - 1u) / WG;   // buckets per thread
const VALUES: bool = {{VALUES}};
const TRACE: bool = {{TRACE}};
const MAX_SPIN: u32 = {{SPIN}}u;
// Look-back window: statuses read at once. H100, 2^28 keys, tiles of 10240: a digit pass took
// 2.30 ms reading one at a time, 2.15 / 2.07 / 2.05 / 2.04 with 2 / 4 / 8 / 16; with the ranking's
// plain counter update, 1.764 / 1.735 / 2.20 / 1.92 with 4 / 8 / 16 / 32; with the walk before the
// ranking (now), 1.617 / 1.624 / 1.606 / 1.799 / 1.755 with 4 / 6 / 8 / 12 / 16. H200, the sort
// at 2^26 / 2^28: 1.697 / 6.524 ms with 4, 1.707 / 6.556 with 8, 1.825 / 7.054 with 12 (4 is
// within tune's noise rule of 8 there). `--look-back-window`; `stagewise tune` tries 4, 6, 12.
const LBW: u32 = {{LBW}}u;
// Loop iterations a thread may spend re-reading not-ready statuses: 0 = no bound (GPUs). lavapipe
// (llvmpipe) silently ends every loop of an invocation once it has run 65535 loop iterations in
// all, so there a thread past the budget reads each status once and counts a not-ready
// predecessor at once (the fallback). A read costs up to SPIN_COST iterations (the window's loops).
const SPIN_BUDGET: u32 = {{SPIN_BUDGET}}u;
const SPIN_COST: u32 = 2u + 2u * LBW;
const DISPATCH_ORDER: bool = {{DISPATCH_ORDER}};
const PREFETCH: u32 = {{PREFETCH}}u;   // onesweep: tiles ahead whose keys a tile prefetches (0: none)
const AGG: u32 = 1u;
const INCL: u32 = 2u;
const MASK30: u32 = 0x3fffffffu;

// keep: always 0 (the compiler cannot know it): a store behind it keeps the prefetch's loads.
struct Params { n: u32, shift: u32, digit: u32, tiles: u32, chunk: u32, wgs: u32, status: u32, keep: u32 }

@group(0) @binding(0) var<storage, read> keys_in: array<u32>;
@group(0) @binding(1) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(2) var<storage, read> vals_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> trace: array<u32>;
@group(0) @binding(6) var<uniform> params: Params;
// The keys again, four to an element: the histogram's loads (the plan binds a 16-byte dummy
// when N < 4, where no element is whole).
@group(0) @binding(7) var<storage, read> keys_in4: array<vec4<u32>>;

// A thread's place: its warp, its lane, the warp width L and the number of warps.
struct Me { lid: u32, w: u32, lane: u32, L: u32, nw: u32 }

// The scatter passes' one big array, used in turn: per warp and digit a counter (count, then
// exclusive prefix, then running rank: s_mem[w * R + b]) while the tile is ranked; then the tile's
// keys in tile order; then (key-value sorts) its values. Atomic because the counters are; the key
// and value exchange use atomicLoad/atomicStore (plain loads and stores on GPUs).
var<workgroup> s_mem: array<atomic<u32>, {{SMEM}}>;
var<workgroup> s_cnt: array<u32, R>;      // the tile's digit counts (pads included)
var<workgroup> s_base: array<u32, R>;     // exclusive scan of s_cnt: where a digit starts in the tile
var<workgroup> s_goff: array<u32, R>;     // global index of tile position x with digit b: s_goff[b] + x
var<workgroup> s_fb: array<atomic<u32>, R>;
var<workgroup> s_scan: array<u32, WG>;
var<workgroup> s_u: u32;
var<workgroup> s_zero: u32;     // a zero the compiler cannot see through (the key map's)
var<workgroup> s_state: u32;
var<workgroup> s_lb: atomic<u32>;

// Between digit passes the keys stay in key form: the order-preserving map is applied once, on the
// first pass's loads (KEY_IN), and undone once, on the last pass's stores (KEY_OUT); the histogram
// maps its own loads. Traced runs map in every pass, so every stage shows the keys' own bits.
// (H100, 2^28 keys: a digit pass that maps both ways took 2.32 ms for i32 or descending u32, one
// that maps neither 2.03.)
const KEY_IN: bool = {{KEY_IN}};
const KEY_OUT: bool = {{KEY_OUT}};
const MAPS: bool = DTYPE != 0u || DESC;   // the map is not the identity

fn load_key(x: u32) -> u32 {
    if (KEY_IN) { return to_key(x); }
    return x;
}

fn store_key(k: u32) -> u32 {
    if (KEY_OUT) { return from_key(k); }
    return k;
}

fn digit_of(k: u32) -> u32 {
    return (k >> params.shift) & (R - 1u);
}

// s_fb[b] = how many real keys of tile `tile` have digit b (any layout: only counts).
fn tile_hist(tile: u32, lid: u32) {
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) { atomicStore(&s_fb[b], 0u); }
    }
    workgroupBarrier();
    let base = tile * TILE;
    for (var j = 0u; j < KPT; j++) {
        let i = base + j * WG + lid;
        if (i < params.n) { atomicAdd(&s_fb[digit_of(load_key(keys_in[i]))], 1u); }
    }
    workgroupBarrier();
}

// The per-warp digit counts in s_mem become per-warp exclusive prefixes (keys of digit b in earlier
// warps); s_cnt = the tile's counts (pads included), s_base = their exclusive scan.
fn warp_prefixes(me: Me) {
    for (var q = 0u; q < BPT; q++) {
        let b = me.lid + q * WG;
        if (b < R) {
            // Every warp's count read before the first prefix is written: NW reads in flight at
            // once, not NW round trips one after another.
            var c: array<u32, NW>;
            for (var w = 0u; w < NW; w++) {
                c[w] = 0u;
                if (w < me.nw) { c[w] = atomicLoad(&s_mem[w * R + b]); }
            }
            var run = 0u;
            for (var w = 0u; w < NW; w++) {
                if (w < me.nw) { atomicStore(&s_mem[w * R + b], run); }
                run += c[w];
            }
            s_cnt[b] = run;
        }
    }
    workgroupBarrier();
    scan_buckets(me);
}

// Trace: tile t's histogram (real keys) and its scanned global offsets.
fn trace_tile(tile: u32, b: u32, count: u32, glob: u32) {
    if (TRACE) {
        let base = 2u * params.n;
        trace[base + tile * R + b] = count;
        trace[base + params.tiles * R + tile * R + b] = glob;
    }
}

fn status_at(tile: u32, b: u32) -> u32 {
    return params.status + (params.digit * params.tiles + tile) * R + b;
}

// The real keys of digit b in this tile (s_cnt counts the pads of a partial last tile in the pad
// key's digit: R-1, or less in a top digit of fewer bits than BITS). Where BITS divides 32 the
// pad digit is the constant R-1: computed from the shift there, the 8-bit pass took 0.25 % longer
// on the H100 (kept in a register from the kernel's start, 5 %: one register over the cap).
fn own_count(tile: u32, b: u32) -> u32 {
    let valid = min(TILE, params.n - tile * TILE);
    let pad = select(R - 1u, digit_of(0xffffffffu), 32u % BITS != 0u);
    return s_cnt[b] - select(0u, TILE - valid, b == pad);
}

// onesweep: where each of this thread's digits starts in the output (the scanned digit counts),
// read at the start of a tile so that its round trip overlaps the key loads instead of following
// the look-back.
fn digit_bases(lid: u32) -> array<u32, BPT> {
    var base: array<u32, BPT>;
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        base[q] = 0u;
        if (b < R) { base[q] = atomicLoad(&state[(D + params.digit) * R + b]); }
    }
    return base;
}

// onesweep: an atomicOr of 0 on each of this tile's statuses before its keys are loaded, so the
// status lines are on their way into L2 while the loads are out, not fetched from DRAM by the
// publish. The statuses of a digit pass (1 KiB a tile: 27 MB at 2^28 keys) have left L2 since the
// last run cleared them. H100, same-run A/B, ms a digit pass: 2^28 1.598 -> 1.588, 2^26 0.414 ->
// 0.411 (the sort -0.5 %); issued after the loads instead, 1.665 against 1.607 (the atomics queue
// behind them); on the lines of tile + 132 (whose publish comes a tile later), 1.603.
fn warm_statuses(tile: u32, lid: u32) {
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) { atomicOr(&state[status_at(tile, b)], 0u); }
    }
}

// onesweep: the key at word 16x (one word of each 64-byte sector) of the tile PREFETCH tiles
// ahead, loaded halfway through this tile's ranking, so that the lines are in L2 when that tile —
// about one wave of workgroups later — loads them: its loads then wait on L2, not DRAM. The value
// loaded is never used (only stored behind params.keep, which is 0). H100, 2^28 u32 keys, 132
// tiles ahead, ms a digit pass: 1.598 -> 1.549; issued right after the tile's own loads 1.633
// (they queue behind them), before / after the ranking 1.569 / 1.588; every 32-byte sector 1.549,
// every 128-byte line 1.600; 100 / 170 tiles ahead as 132. Key-value sorts prefetch the keys only:
// the values too made a pass 2.30 -> 2.51 ms (the keys alone: 2.27).
// Written as two branches, the tile's (uniform) around the thread's: one branch over all four
// tests took 1.560 ms against 1.549.
fn prefetch(tile: u32, x: u32) -> u32 {
    var v = 0u;
    let t = tile + PREFETCH;
    if (PREFETCH != 0u && t < params.tiles) {
        let i = t * TILE + 16u * x;
        if (16u * x < TILE && i < params.n) { v = keys_in[i]; }
    }
    return v;
}

// onesweep: publish this tile's counts (AGGREGATE; tile 0: INCLUSIVE) as soon as they are known.
fn publish_counts(tile: u32, lid: u32) {
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) {
            atomicMax(&state[status_at(tile, b)], (select(AGG, INCL, tile == 0u) << 30u) | own_count(tile, b));
        }
    }
}

// onesweep: the decoupled look-back. Tiles take ids from a ticket counter in the order workgroups
// start (or, with DISPATCH_ORDER, from the workgroup id: no atomic round trip before the loads), so
// a tile mostly waits on tiles that have started; that is not enough without a forward-progress
// guarantee (WGSL gives none), so a tile that finds its predecessor not ready MAX_SPIN times in a row
// counts the predecessor's keys itself (the same counts its owner publishes), publishes them and
// looks further back: nothing waits unboundedly on another workgroup (the scan room's decoupled
// fallback, applied to R counts at once).
//
// In two parts: `walk_start` (no barrier) right after the tile's counts are published, before the
// ranking, so the warps that own buckets walk while the other warps rank — the walk's round trips
// hide behind the ranking, and the inclusive counts go out as early as they can; then, after the
// ranking, `walk_end` (barriers: call in uniform control flow) runs the fallback for any bucket that
// gave up, and leaves s_goff[b] + x = the global index of tile position x of digit b.
struct Walk {
    excl: array<u32, BPT>,
    own: array<u32, BPT>,
    p: array<u32, BPT>,
    done: array<bool, BPT>,
    steps: u32,
    falls: u32,
    spent: u32,   // loop iterations spent reading statuses (counted only with SPIN_BUDGET)
}

fn publish_incl(tile: u32, b: u32, v: u32) {
    if (tile > 0u) { atomicMax(&state[status_at(tile, b)], (INCL << 30u) | v); }
}

fn walk_start(tile: u32, lid: u32) -> Walk {
    var w: Walk;
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        w.excl[q] = 0u;
        w.own[q] = 0u;
        if (b < R) { w.own[q] = own_count(tile, b); }
        w.p[q] = max(tile, 1u) - 1u;
        w.done[q] = tile == 0u;   // tile 0 published INCLUSIVE with its counts
    }
    walk_round(&w, tile, lid);
    return w;
}

// Every thread walks back on its own for each of its buckets, as CUB's OneSweep does: read the
// bucket's status in tile p; NOT_READY: read again; AGGREGATE: add, go on to p - 1; INCLUSIVE: add,
// done (and publish this tile's inclusive count at once). No barrier while walking. A bucket that
// finds tile p not ready MAX_SPIN times in a row gives up for this round (s_lb: the nearest tile a
// bucket gave up on).
fn walk_round(w: ptr<function, Walk>, tile: u32, lid: u32) {
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R && !(*w).done[q]) {
            var tries = 0u;
            loop {
                var limit = MAX_SPIN;
                if (SPIN_BUDGET > 0u) {
                    if ((*w).spent >= SPIN_BUDGET) { limit = min(limit, 1u); }
                    (*w).spent += SPIN_COST;
                }
                if (tries >= limit) {
                    atomicMax(&s_lb, (*w).p[q] + 1u);   // gave up on tile p (0 = nobody did)
                    break;
                }
                // LBW statuses at once (tiles p, p - 1, …: one memory latency for LBW tiles of
                // the walk), then taken in order up to the first not ready.
                let p0 = (*w).p[q];
                var st: array<u32, LBW>;
                for (var k = 0u; k < LBW; k++) {
                    st[k] = 0u;
                    if (k <= p0) { st[k] = atomicLoad(&state[status_at(p0 - k, b)]); }
                }
                var moved = false;
                var fin = false;
                for (var k = 0u; k < LBW; k++) {
                    let f = st[k] >> 30u;
                    if (f == 0u) { break; }
                    moved = true;
                    (*w).excl[q] += st[k] & MASK30;
                    if (q == 0u) { (*w).steps += 1u; }
                    if (f == INCL) {
                        fin = true;
                        break;
                    }
                    (*w).p[q] -= 1u;   // tile 0 is INCLUSIVE once ready: p never passes 0
                }
                if (fin) {
                    (*w).done[q] = true;
                    publish_incl(tile, b, (*w).excl[q] + (*w).own[q]);
                    break;
                }
                tries = select(tries + 1u, 0u, moved);
            }
        }
    }
}

fn walk_end(w: ptr<function, Walk>, tile: u32, lid: u32, dbase: array<u32, BPT>) {
    loop {
        workgroupBarrier();
        if (lid == 0u) { s_state = atomicExchange(&s_lb, 0u); }
        let stuck = workgroupUniformLoad(&s_state);
        if (stuck == 0u) { break; }
        // The fallback: count tile f's keys here (the counts its owner publishes).
        let f = stuck - 1u;
        tile_hist(f, lid);
        for (var q = 0u; q < BPT; q++) {
            let b = lid + q * WG;
            if (b < R) {
                let c = atomicLoad(&s_fb[b]);
                atomicMax(&state[status_at(f, b)], (select(AGG, INCL, f == 0u) << 30u) | c);
                if (!(*w).done[q] && (*w).p[q] == f) {
                    (*w).excl[q] += c;
                    if (q == 0u) { (*w).steps += 1u; }
                    if (f == 0u) {
                        (*w).done[q] = true;
                        publish_incl(tile, b, (*w).excl[q] + (*w).own[q]);
                    } else {
                        (*w).p[q] = f - 1u;
                    }
                }
            }
        }
        (*w).falls += 1u;
        walk_round(w, tile, lid);
    }

    // Global offset of (tile, digit) = the digit's offset + the counts of earlier tiles.
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) {
            let glob = dbase[q] + (*w).excl[q];
            s_goff[b] = glob - s_base[b];
            trace_tile(tile, b, (*w).own[q], glob);
        }
    }
    if (TRACE && lid == 0u) {
        let base = 2u * params.n + 2u * params.tiles * R;
        trace[base + 2u * tile] = (*w).steps;
        trace[base + 2u * tile + 1u] = (*w).falls;
    }
}

// onesweep: zero the previous digit pass's statuses of this tile (that pass has finished; digit 0
// zeroes the last digit's, left by the run before), so the next run starts from a clean state
// without a clearing pass (H100: the sort 0.541 -> 0.531 ms at 2^24 keys, 6.97 -> 6.94 at 2^28).
// D ≥ 4 (BITS ≤ 8): the previous pass is never this one.
fn clear_previous(tile: u32, lid: u32) {
    let prev = params.status + (((params.digit + D - 1u) % D) * params.tiles + tile) * R;
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) { atomicStore(&state[prev + b], 0u); }
    }
}

// classic: the scanned (tile, bucket) counts give s_goff.
fn tile_offsets(tile: u32, lid: u32) {
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) {
            let glob = atomicLoad(&state[b * params.tiles + tile]);
            s_goff[b] = glob - s_base[b];
            trace_tile(tile, b, own_count(tile, b), glob);
        }
    }
}

// ---- onesweep ----------------------------------------------------------------------------------

// Counts of every digit of every key in one read of the array: workgroup histograms, then one
// atomicAdd per (digit, bucket) per workgroup. Workgroup g counts keys [g * chunk, (g+1) * chunk).
// The last workgroup to finish scans the counts into the digit offsets, so the offsets need no
// pass of their own (H100: a 6 µs pass and the gap before the first digit pass). "Last": every
// workgroup releases its additions (storageBarrier: a device-scope release and acquire) before it
// takes a ticket from state[DONE]; the one that draws the last ticket acquires them all.
var<workgroup> s_h: array<atomic<u32>, D * R>;
const DONE: u32 = 2u * D * R + D;

fn count_digits(k: u32) {
    for (var d = 0u; d < D; d++) {
        atomicAdd(&s_h[d * R + ((k >> (d * BITS)) & (R - 1u))], 1u);
    }
}

@compute @workgroup_size(WG)
fn histogram(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32> {{SG_ARGS}}) {
    let me = {{ME}};
    let g = wid.x + wid.y * nwg.x;
    if (g >= params.wgs) { return; }
    for (var x = lid; x < D * R; x += WG) { atomicStore(&s_h[x], 0u); }
    workgroupBarrier();
    // Keys four at a time (chunks are multiples of WG, so a chunk starts on a whole vec4), two
    // vec4 loads in flight per thread before the counting; the last chunk's 1-3 keys past its
    // last whole vec4 one at a time. A quarter of the load instructions beside the four atomics
    // a key (H100, the pass: 2^28 0.484 -> 0.465 ms, 2^26 0.132 -> 0.127; 4, 8 or 16 scalar
    // loads in flight a thread ran alike).
    let start = g * params.chunk;
    let end = min(params.n, start + params.chunk);
    let end4 = end / 4u;
    for (var i = start / 4u + lid; i < end4; i += 2u * WG) {
        var v: array<vec4<u32>, 2>;
        for (var e = 0u; e < 2u; e++) {
            let ii = i + e * WG;
            if (ii < end4) { v[e] = keys_in4[ii]; }
        }
        for (var e = 0u; e < 2u; e++) {
            if (i + e * WG < end4) {
                for (var c = 0u; c < 4u; c++) { count_digits(to_key(v[e][c])); }
            }
        }
    }
    let stray = end4 * 4u + lid;
    if (stray < end) { count_digits(to_key(keys_in[stray])); }
    workgroupBarrier();
    for (var x = lid; x < D * R; x += WG) {
        let c = atomicLoad(&s_h[x]);
        if (c > 0u) { atomicAdd(&state[x], c); }
    }
    storageBarrier();
    if (lid == 0u) { s_u = atomicAdd(&state[DONE], 1u); }
    if (workgroupUniformLoad(&s_u) + 1u < params.wgs) { return; }
    storageBarrier();
    scan_digits(me);
}

// The last histogram workgroup: every digit's R counts become exclusive offsets at [D*R, 2*D*R);
// the counts, the tile tickets and DONE are zeroed for the next run (every digit pass of the run
// before is done). Thread t takes counts [t*SE, (t+1)*SE) (SE a power of two dividing R, so within
// one digit); one workgroup scan of the thread sums serves every digit at once, each digit's
// offsets taken relative to its first thread's. Traced runs keep the counts at trace[0, D*R) (the
// histogram's stage).
const SE: u32 = {{SE}}u;
var<workgroup> s_dstart: array<u32, D>;

fn scan_digits(me: Me) {
    let first = me.lid * SE;
    var c: array<u32, SE>;
    var tot = 0u;
    for (var e = 0u; e < SE; e++) {
        let x = first + e;
        c[e] = 0u;
        if (x < D * R) {
            c[e] = atomicExchange(&state[x], 0u);
            if (TRACE) { trace[x] = c[e]; }
        }
        tot += c[e];
    }
    let excl = scan_threads(me, tot);
    if (first < D * R && first % R == 0u) { s_dstart[first / R] = excl; }
    workgroupBarrier();
    if (first < D * R) {
        var run = excl - s_dstart[first / R];
        for (var e = 0u; e < SE; e++) {
            atomicStore(&state[D * R + first + e], run);
            run += c[e];
        }
    }
    for (var x = me.lid; x <= D; x += WG) { atomicStore(&state[2u * D * R + x], 0u); }
}

// ---- classic: histogram, scan, scatter per digit -------------------------------------------------

@compute @workgroup_size(WG)
fn classic_hist(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = wid.x + wid.y * nwg.x;
    if (tile >= params.tiles) { return; }
    tile_hist(tile, lid);
    for (var q = 0u; q < BPT; q++) {
        let b = lid + q * WG;
        if (b < R) { atomicStore(&state[b * params.tiles + tile], atomicLoad(&s_fb[b])); }
    }
}

// One workgroup scans all R * tiles counts in chunks of 4 * WG, a carry between chunks (each
// chunk one `scan_threads`; its last thread hands the chunk's total on).
@compute @workgroup_size(WG)
fn classic_scan(@builtin(local_invocation_index) lid: u32 {{SG_ARGS}}) {
    let me = {{ME}};
    let total = R * params.tiles;
    var carry = 0u;
    for (var c0 = 0u; c0 < total; c0 += 4u * WG) {
        var x: array<u32, 4>;
        var tot = 0u;
        for (var e = 0u; e < 4u; e++) {
            let i = c0 + 4u * lid + e;
            x[e] = 0u;
            if (i < total) { x[e] = atomicLoad(&state[i]); }
            tot += x[e];
        }
        let excl = scan_threads(me, tot);
        var run = carry + excl;
        for (var e = 0u; e < 4u; e++) {
            let i = c0 + 4u * lid + e;
            if (i < total) { atomicStore(&state[i], run); }
            run += x[e];
        }
        // The uniform load's barrier also keeps the next chunk's scan from overwriting what a
        // slower thread of this one still reads.
        if (lid == WG - 1u) { s_u = excl + tot; }
        carry += workgroupUniformLoad(&s_u);
    }
}
