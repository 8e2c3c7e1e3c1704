// Prefix sums (seed 004), `decoupled` with subgroup operations (adapters with Features::SUBGROUP).
// Same protocol as decoupled.wgsl (tile counter, two 16-bit-half atomics per tile status, windowed
// look-back, fallback that reduces a stuck predecessor itself: no forward-progress assumption);
// only the tile-local scan differs:
// - A tile is WG * PER vec4. Subgroup s owns the contiguous segment of PER * L vec4 at
//   s * PER * L (L = lanes per subgroup = min(subgroup_size, WG)); lane l loads vec4
//   j * L + l of it for j = 0..PER: each load of a subgroup is L consecutive vec4 (coalesced),
//   and the vec4 stay in registers (no round trip through workgroup memory).
// - The aggregate first: each lane sums its vec4, a subgroupAdd gives the subgroup's total, the
//   totals go through workgroup memory once (one barrier), and the tile publishes. Only then is
//   row j scanned with one subgroupInclusiveAdd of the vec4 sums (a carry runs over the rows):
//   the successors' look-back, the scan's critical path, no longer waits on the row scans. The
//   row offsets are folded into the tile's registers (row_scan), so only those stay live across
//   the look-back.
// - The loops over a thread's PER vec4 are written out (`//#unroll` blocks, repeated PER times
//   with j = 0, 1, … by the host): every index into r is a constant, so the tile stays in
//   registers (NVIDIA's compiler kept the loops' array in local memory for some types and PER:
//   f32 at 7, every type at 8, at 0.40-0.45x the copy rate).
// - src and dst are padded to whole tiles (the plan takes the workgroup-memory kernel where the
//   padded size would not fit a binding): none of the tile's loads and stores depends on the
//   lane's index, so no lane-dependent branch surrounds the subgroup operations (on the H200 such
//   branches next to the look-back window left subgroup 0 split in some shapes once the loops
//   were written out: docs/perf/scan.md). Only the fallback's loads (tile_reduce, no subgroup
//   operations) keep their bounds test.
// The fallback reduces a tile without subgroup operations (tile_reduce says why) and streams it
// (no second register array live beside the owner's: registers decide how many workgroups an SM
// holds); unlike decoupled.wgsl's, it keeps what it found to itself: only a tile's owner publishes.
// No clear pass: the statuses come in two halves used by alternate runs. Every workgroup (spares
// too) takes a ticket; ticket / workgroups = the run's parity. A tile publishes in its run's half
// and zeroes its own entry in the other half (the previous run's, finished: a dispatch boundary),
// so the next run finds it clean. The holder of the last ticket of an odd run resets the ticket
// count (all tickets of this run are taken, the next run has not started).
// status: [0] tickets, [1 + 2k + h] half 0, [1 + 2T + 2k + h] half 1 (tile k, 16-bit half h).
// Subgroup size comes from the `subgroup_size` builtin (8 on lavapipe, 32 on NVIDIA).
// {{T}} element type, {{WG}} threads, {{PER}} vec4 per thread, {{EXCL}}, {{SPIN}}, {{DISPATCH_ORDER}}.

alias T = {{T}};
const WG: u32 = {{WG}}u;
const PER: u32 = {{PER}}u;
const TILE_V: u32 = {{WG}}u * {{PER}}u;
const EXCLUSIVE: bool = {{EXCL}};

struct Params { n: u32, nv: u32, tiles: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> info: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

const FLAG_AGGREGATE: u32 = 1u;
const FLAG_INCLUSIVE: u32 = 2u;
const MAX_SPIN: u32 = {{SPIN}}u;
// Loop iterations the look-back may spend re-reading not-ready statuses: 0 = no bound (GPUs).
// lavapipe (llvmpipe) silently ends every loop of an invocation once it has run 65535 loop
// iterations in all, so there, past the budget, a tile not ready at the first read is reduced at
// once (the fallback). A read costs up to SPIN_COST iterations.
const SPIN_BUDGET: u32 = {{SPIN_BUDGET}}u;
const DISPATCH_ORDER: bool = {{DISPATCH_ORDER}};

var<workgroup> s_u: u32;
var<workgroup> s_ticket: u32;
var<workgroup> s_k: u32;
var<workgroup> s_prefix: T;
var<workgroup> s_sg: array<T, WG>;   // subgroup totals (at most WG subgroups)

struct Lane { lane: u32, sid: u32, nsg: u32, lanes: u32 }

// The status words of tile t in half `half` (0 or 1).
fn slot(half: u32, t: u32) -> u32 {
    return 1u + 2u * (half * params.tiles + t);
}

fn publish(half: u32, t: u32, flag: u32, v: T) {
    let b = bitcast<u32>(v);
    let i = slot(half, t);
    atomicMax(&status[i], (flag << 16u) | (b & 0xffffu));
    atomicMax(&status[i + 1u], (flag << 16u) | (b >> 16u));
}

// Load tile `tile` into registers `r` (zeros past the end) and reduce it: returns the tile's
// aggregate; *sg_off = the sum of the segments of the subgroups before this one. Only sums here
// (one subgroupAdd a subgroup, one barrier), so the aggregate is published before the row scans.
fn tile_load(tile: u32, me: Lane, r: ptr<function, array<vec4<u32>, PER>>, sg_off: ptr<function, T>) -> T {
    let base = tile * TILE_V + me.sid * PER * me.lanes + me.lane;
    // Every load first, so that all PER of them are in flight before the first sum waits (src is
    // padded with zeros to whole tiles: no bounds test).
    //#unroll
    {
        (*r)[{{j}}] = src[base + {{j}}u * me.lanes];
    }
    //#end
    var mine = T(0);
    //#unroll
    {
        let x = bitcast<vec4<T>>((*r)[{{j}}]);
        mine = mine + (((x.x + x.y) + x.z) + x.w);
    }
    //#end
    let seg = subgroupAdd(mine);
    if (me.lane == 0u) { s_sg[me.sid] = seg; }
    workgroupBarrier();
    var before = T(0);
    var all = T(0);
    for (var c = 0u; c < me.nsg; c += me.lanes) {
        let t = c + me.lane;
        let v = select(T(0), s_sg[min(t, WG - 1u)], t < me.nsg);
        all = all + v;
        before = before + select(T(0), v, t < me.sid);
    }
    *sg_off = subgroupAdd(before);
    let agg = subgroupAdd(all);
    workgroupBarrier();   // s_sg may be written again (fallback)
    return agg;
}

// Scan the tile inside each subgroup. Row j is one subgroupInclusiveAdd of the vec4 sums (a carry
// runs over the rows), giving pre = the sum of the subgroup's segment before vec4 j of this lane.
// pre is folded into r[j] in place, so that nothing but r stays live across the look-back:
// inclusive, r[j] becomes (pre + x, y, z, w); exclusive, (pre, x, y, z) (w is in the next vec4's
// pre). Either way the outputs are then a running sum of r[j] from the tile's offset. Runs before
// the look-back (every lane active: see tile_reduce on subgroup operations after it).
fn row_scan(me: Lane, r: ptr<function, array<vec4<u32>, PER>>) {
    var carry = T(0);
    //#unroll
    {
        let x = bitcast<vec4<T>>((*r)[{{j}}]);
        let s = ((x.x + x.y) + x.z) + x.w;
        let incl = subgroupInclusiveAdd(s);
        // Exclusive by shifting the inclusive scan (not incl - s: inf - inf would give NaN).
        let up = subgroupShuffleUp(incl, 1u);
        let pre = carry + select(up, T(0), me.lane == 0u);
        carry = carry + subgroupShuffle(incl, me.lanes - 1u);
        var y = vec4<T>(pre + x.x, x.y, x.z, x.w);
        if (EXCLUSIVE) { y = vec4<T>(pre, x.x, x.y, x.z); }
        (*r)[{{j}}] = bitcast<vec4<u32>>(y);
    }
    //#end
}

// The fallback's aggregate of tile `tile`, with workgroup memory and barriers only: no subgroup
// operation. The fallback runs after the look-back, where only subgroup 0 walked and its lane 0
// alone wrote the loop's state; Vulkan promises no reconvergence of a subgroup after divergent
// control flow (naga 30 cannot ask for maximal reconvergence), and the H100 ran the subgroup
// operations of the former fallback with lane 0 of subgroup 0 alone (a subgroupBarrier() before
// them did not help): the aggregate came out as one lane's sums and every later tile was wrong.
// Each thread sums its PER vec4; 32 threads (fewer in a smaller workgroup) sum WG / 32 of those
// each; thread 0 sums theirs.
fn tile_reduce(tile: u32, lid: u32) -> T {
    var s = T(0);
    for (var j = 0u; j < PER; j++) {
        let i = tile * TILE_V + j * WG + lid;
        var v = vec4<u32>(0u);
        if (i < params.nv) { v = src[i]; }
        let x = bitcast<vec4<T>>(v);
        s = s + (((x.x + x.y) + x.z) + x.w);
    }
    s_sg[lid] = s;
    workgroupBarrier();
    const G = min(32u, WG);
    var a = T(0);
    if (lid < G) {
        for (var t = 0u; t < WG / G; t++) { a = a + s_sg[lid * (WG / G) + t]; }
    }
    workgroupBarrier();
    if (lid < G) { s_sg[lid] = a; }
    workgroupBarrier();
    if (lid == 0u) {
        var b = T(0);
        for (var t = 0u; t < G; t++) { b = b + s_sg[t]; }
        s_prefix = b;
    }
    return workgroupUniformLoad(&s_prefix);
}

@compute @workgroup_size({{WG}})
fn decoupled(@builtin(local_invocation_index) lid: u32,
             @builtin(subgroup_invocation_id) sg_lane: u32,
             @builtin(subgroup_id) sg_id: u32,
             @builtin(num_subgroups) sg_count: u32,
             @builtin(subgroup_size) sg_size: u32,
             @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    let me = Lane(sg_lane, sg_id, sg_count, min(sg_size, WG));
    // Tile index: from a counter in the order workgroups start (the look-back then always waits on
    // tiles already running), or from the workgroup id (no atomic round trip before the loads; a
    // predecessor not yet launched is reduced by the fallback, so this stays correct).
    let wgs = nwg.x * nwg.y;
    if (lid == 0u) {
        let ticket = atomicAdd(&status[0], 1u);
        // The last ticket of an odd run: back to 0 for the next (even) run.
        if (ticket + 1u == 2u * wgs) { atomicStore(&status[0], 0u); }
        s_ticket = ticket;
    }
    var tile_id: u32;
    var ticket: u32;
    if (DISPATCH_ORDER) {
        // The ticket arrives while the tile loads (read after tile_load's barriers).
        tile_id = wid.x + wid.y * nwg.x;
    } else {
        ticket = workgroupUniformLoad(&s_ticket);
        tile_id = ticket % wgs;
    }
    let tile = tile_id;
    if (tile >= params.tiles) { return; }

    // 1. Load into registers and reduce: the tile's aggregate.
    var r: array<vec4<u32>, PER>;
    var sg_off = T(0);
    let agg = tile_load(tile, me, &r, &sg_off);
    if (DISPATCH_ORDER) { ticket = s_ticket; }   // written before tile_load's barriers
    let half = (ticket / wgs) & 1u;

    // 2. Publish the aggregate (tile 0: already inclusive); clean this tile's entry of the other half.
    if (lid == 0u) {
        if (tile == 0u) { publish(half, 0u, FLAG_INCLUSIVE, agg); } else { publish(half, tile, FLAG_AGGREGATE, agg); }
        let o = slot(half ^ 1u, tile);
        atomicStore(&status[o], 0u);
        atomicStore(&status[o + 1u], 0u);
    }
    // The row scans after the publish: successors see this tile's aggregate that much sooner.
    row_scan(me, &r);

    // 3. Look-back by subgroup 0 alone, one predecessor per lane, no workgroup barrier while it
    //    walks: lane l reads tile k-1-l; the nearest lane that sees an inclusive prefix (or a tile
    //    not ready yet) ends the window, and one subgroupAdd sums the aggregates before it. Only
    //    when it has spun MAX_SPIN times on a tile that is not ready does the whole workgroup step
    //    in and reduce that tile itself (the fallback: no forward-progress assumption).
    var acc = T(0);        // meaningful in subgroup 0 (every lane holds the same value)
    var steps = 0u;
    var falls = 0u;
    var k = tile;          // tiles k.. are summed into acc
    var spent = 0u;        // loop iterations spent reading (counted only with SPIN_BUDGET)
    if (tile > 0u) {
        loop {
            if (me.sid == 0u) {
                var spins = 0u;
                var state = 1u;   // 0 = done, 2 = fall back on tile k - 1
                loop {
                    // Branch-free: lanes past tile 0 read tile 0's status and end the window. No
                    // divergent code before the subgroup operations below: on the H200 a lane-
                    // dependent `if` here left a subgroup unreconverged in one build of this kernel
                    // (f32, exclusive, 8 vec4, a one-element last tile) and its look-back never
                    // ended.
                    let inside = me.lane < k;
                    let q = slot(half, select(0u, k - 1u - me.lane, inside));
                    var lo = 0u;
                    var hi = 0u;
                    if (MAX_SPIN > 0u) {   // a constant
                        lo = atomicLoad(&status[q]);
                        hi = atomicLoad(&status[q + 1u]);
                    }
                    let same = (lo >> 16u) == (hi >> 16u);
                    let f = select(FLAG_INCLUSIVE, select(0u, lo >> 16u, same), inside);
                    let b = (lo & 0xffffu) | (hi << 16u);
                    // The first lane that is not a plain aggregate, or `lanes` if none is.
                    let stop = subgroupMin(select(me.lanes, me.lane, f != FLAG_AGGREGATE));
                    let inclusive = stop < me.lanes && subgroupShuffle(f, stop) == FLAG_INCLUSIVE;
                    let take = select(stop, stop + 1u, inclusive);   // lanes summed
                    let v = select(T(0), bitcast<T>(b), me.lane < take);
                    acc = subgroupAdd(v) + acc;
                    steps += take;
                    if (inclusive) { state = 0u; break; }
                    k -= take;
                    if (SPIN_BUDGET > 0u) { spent += 1u; }
                    if (take == 0u) {
                        spins += 1u;
                        if (spins >= MAX_SPIN || (SPIN_BUDGET > 0u && spent >= SPIN_BUDGET)) {
                            state = 2u;
                            break;
                        }
                    } else {
                        spins = 0u;
                    }
                }
                if (me.lane == 0u) {
                    s_u = state;
                    s_k = k;
                }
            }
            let st = workgroupUniformLoad(&s_u);
            if (st == 0u) { break; }
            // Fallback: reduce predecessor tile p with the owner's arithmetic.
            let p = workgroupUniformLoad(&s_k) - 1u;
            // Kept to this tile: only a tile's owner publishes its status (a sum in this order
            // can differ from the owner's in f32's last bits, and a status's two halves must
            // come from one writer's bits).
            let pagg = tile_reduce(p, lid);
            acc = pagg + acc;
            steps += 1u;
            falls += 1u;
            k = p;
            if (p == 0u) { break; }
        }
    }

    // 4. Publish the inclusive prefix, broadcast the exclusive one.
    if (lid == 0u) {
        if (tile > 0u) { publish(half, tile, FLAG_INCLUSIVE, acc + agg); }
        info[2u * tile] = steps;
        info[2u * tile + 1u] = falls;
        s_prefix = acc;
    }
    let prefix = workgroupUniformLoad(&s_prefix) + sg_off;

    // 5. A running sum of each vec4 from its offset; coalesced stores straight from registers.
    let base = tile * TILE_V + me.sid * PER * me.lanes + me.lane;
    //#unroll
    {
        let i = base + {{j}}u * me.lanes;
        let y = bitcast<vec4<T>>(r[{{j}}]);
        var o: vec4<T>;
        o.x = prefix + y.x;
        o.y = o.x + y.y;
        o.z = o.y + y.z;
        o.w = o.z + y.w;
        dst[i] = bitcast<vec4<u32>>(o);   // dst is padded to whole tiles
    }
    //#end
}
