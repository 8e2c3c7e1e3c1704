// Prefix sums (seed 004), `decoupled` with subgroup operations (adapters with Features::SUBGROUP).
// Same protocol as decoupled.wgsl (tile counter, two 16-bit-half atomics per tile status, windowed
// look-back, fallback that reduces a stuck predecessor itself: no forward-progress assumption);
// only the tile-local scan differs:
// - A tile is WG * PER vec4. Subgroup s owns the contiguous segment of PER * L vec4 at
//   s * PER * L (L = lanes per subgroup = min(subgroup_size, WG)); lane l loads vec4
//   j * L + l of it for j = 0..PER: each load of a subgroup is L consecutive vec4 (coalesced),
//   and the vec4 stay in registers (no round trip through workgroup memory).
// - Row j is scanned with one subgroupInclusiveAdd of the vec4 sums; a carry runs over the rows.
// - The subgroup totals go through workgroup memory once (one barrier); every subgroup sums the
//   totals before it with a subgroupAdd.
// Owner and fallback reduce a tile with the same function, so both publish the same bits.
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
const DISPATCH_ORDER: bool = {{DISPATCH_ORDER}};

var<workgroup> s_u: u32;
var<workgroup> s_k: u32;
var<workgroup> s_prefix: T;
var<workgroup> s_sg: array<T, WG>;   // subgroup totals (at most WG subgroups)

struct Lane { lane: u32, sid: u32, nsg: u32, lanes: u32 }

fn publish(t: u32, flag: u32, v: T) {
    let b = bitcast<u32>(v);
    atomicMax(&status[1u + 2u * t], (flag << 16u) | (b & 0xffffu));
    atomicMax(&status[2u + 2u * t], (flag << 16u) | (b >> 16u));
}

// Load tile `tile` into registers `r` (zeros past the end), scan it inside each subgroup:
// pre[j] = the sum of the subgroup's segment before vec4 j of this lane. Returns the tile's
// aggregate; *sg_off = the sum of the segments of the subgroups before this one.
fn tile_scan(tile: u32, me: Lane, r: ptr<function, array<vec4<u32>, PER>>,
             pre: ptr<function, array<T, PER>>, sg_off: ptr<function, T>) -> T {
    let base = tile * TILE_V + me.sid * PER * me.lanes + me.lane;
    // Every load first, so that all PER of them are in flight before the first scan waits.
    for (var j = 0u; j < PER; j++) {
        let i = base + j * me.lanes;
        var v = vec4<u32>(0u);
        if (i < params.nv) { v = src[i]; }
        (*r)[j] = v;
    }
    var carry = T(0);
    for (var j = 0u; j < PER; j++) {
        let x = bitcast<vec4<T>>((*r)[j]);
        let s = ((x.x + x.y) + x.z) + x.w;
        let incl = subgroupInclusiveAdd(s);
        // Exclusive by shifting the inclusive scan (not incl - s: inf - inf would give NaN).
        let up = subgroupShuffleUp(incl, 1u);
        (*pre)[j] = carry + select(up, T(0), me.lane == 0u);
        carry = carry + subgroupShuffle(incl, me.lanes - 1u);
    }
    if (me.lane == 0u) { s_sg[me.sid] = carry; }
    workgroupBarrier();
    var before = T(0);
    var all = T(0);
    for (var c = 0u; c < me.nsg; c += me.lanes) {
        let t = c + me.lane;
        var v = T(0);
        if (t < me.nsg) { v = s_sg[t]; }
        all = all + v;
        if (t < me.sid) { before = before + v; }
    }
    *sg_off = subgroupAdd(before);
    let agg = subgroupAdd(all);
    workgroupBarrier();   // s_sg may be written again (fallback)
    return agg;
}

// Zero the counter and every tile's status (one pass before the scan).
@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < 1u + 2u * params.tiles) { atomicStore(&status[i], 0u); }
    // Never true; keeps src, dst and info in this entry point's bind group layout.
    if (params.n == 0xffffffffu) { dst[0] = src[0]; info[0] = 0u; }
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
    var tile_id: u32;
    if (DISPATCH_ORDER) {
        tile_id = wid.x + wid.y * nwg.x;
    } else {
        if (lid == 0u) { s_u = atomicAdd(&status[0], 1u); }
        tile_id = workgroupUniformLoad(&s_u);
    }
    let tile = tile_id;
    if (tile >= params.tiles) { return; }

    // 1. Load into registers, scan inside the tile: the tile's aggregate.
    var r: array<vec4<u32>, PER>;
    var pre: array<T, PER>;
    var sg_off = T(0);
    let agg = tile_scan(tile, me, &r, &pre, &sg_off);

    // 2. Publish the aggregate (tile 0: already inclusive).
    if (lid == 0u) {
        if (tile == 0u) { publish(0u, FLAG_INCLUSIVE, agg); } else { publish(tile, FLAG_AGGREGATE, agg); }
    }

    // 3. Look-back by subgroup 0 alone, one predecessor per lane, no workgroup barrier while it
    //    walks: lane l reads tile k-1-l; the nearest lane that sees an inclusive prefix (or a tile
    //    not ready yet) ends the window, and one subgroupAdd sums the aggregates before it. Only
    //    when it has spun MAX_SPIN times on a tile that is not ready does the whole workgroup step
    //    in and reduce that tile itself (the fallback: no forward-progress assumption).
    var acc = T(0);        // meaningful in subgroup 0 (every lane holds the same value)
    var steps = 0u;
    var falls = 0u;
    var k = tile;          // tiles k.. are summed into acc
    if (tile > 0u) {
        loop {
            if (me.sid == 0u) {
                var spins = 0u;
                var state = 1u;   // 0 = done, 2 = fall back on tile k - 1
                loop {
                    var f = FLAG_INCLUSIVE;   // lanes past tile 0 end the window
                    var b = 0u;
                    if (me.lane < k) {
                        f = 0u;
                        if (MAX_SPIN > 0u) {
                            let p = k - 1u - me.lane;
                            let lo = atomicLoad(&status[1u + 2u * p]);
                            let hi = atomicLoad(&status[2u + 2u * p]);
                            if ((lo >> 16u) == (hi >> 16u)) { f = lo >> 16u; }
                            b = (lo & 0xffffu) | (hi << 16u);
                        }
                    }
                    // The first lane that is not a plain aggregate, or `lanes` if none is.
                    let stop = subgroupMin(select(me.lanes, me.lane, f != FLAG_AGGREGATE));
                    let inclusive = stop < me.lanes && subgroupShuffle(f, stop) == FLAG_INCLUSIVE;
                    let take = select(stop, stop + 1u, inclusive);   // lanes summed
                    let v = select(T(0), bitcast<T>(b), me.lane < take);
                    acc = subgroupAdd(v) + acc;
                    steps += take;
                    if (inclusive) { state = 0u; break; }
                    k -= take;
                    if (take == 0u) {
                        spins += 1u;
                        if (spins >= MAX_SPIN) { state = 2u; break; }
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
            // Fallback: reduce predecessor tile p with the owner's own code.
            let p = workgroupUniformLoad(&s_k) - 1u;
            var rp: array<vec4<u32>, PER>;
            var prep: array<T, PER>;
            var offp = T(0);
            let pagg = tile_scan(p, me, &rp, &prep, &offp);
            if (lid == 0u) {
                if (p == 0u) { publish(0u, FLAG_INCLUSIVE, pagg); } else { publish(p, FLAG_AGGREGATE, pagg); }
            }
            acc = pagg + acc;
            steps += 1u;
            falls += 1u;
            k = p;
            if (p == 0u) { break; }
        }
    }

    // 4. Publish the inclusive prefix, broadcast the exclusive one.
    if (lid == 0u) {
        if (tile > 0u) { publish(tile, FLAG_INCLUSIVE, acc + agg); }
        info[2u * tile] = steps;
        info[2u * tile + 1u] = falls;
        s_prefix = acc;
    }
    let prefix = workgroupUniformLoad(&s_prefix) + sg_off;

    // 5. Scan each vec4 from its offset; coalesced stores straight from registers.
    let base = tile * TILE_V + me.sid * PER * me.lanes + me.lane;
    for (var j = 0u; j < PER; j++) {
        let i = base + j * me.lanes;
        let x = bitcast<vec4<T>>(r[j]);
        var run = prefix + pre[j];
        var o: vec4<T>;
        if (EXCLUSIVE) {
            o.x = run; run = run + x.x;
            o.y = run; run = run + x.y;
            o.z = run; run = run + x.z;
            o.w = run;
        } else {
            run = run + x.x; o.x = run;
            run = run + x.y; o.y = run;
            run = run + x.z; o.z = run;
            run = run + x.w; o.w = run;
        }
        if (i < params.nv) { dst[i] = bitcast<vec4<u32>>(o); }
    }
}
