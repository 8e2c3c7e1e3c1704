// Prefix sums (seed 004), `decoupled`: single-pass scan with decoupled look-back (Merrill &
// Garland 2016) that needs NO forward-progress guarantee ("decoupled fallback"): when a
// predecessor's status stays NOT_READY for MAX_SPIN window reads, the waiting workgroup reduces the
// predecessor's tile itself (same code, same bits), publishes that aggregate, and looks further
// back. Nothing ever waits unboundedly on another workgroup.
//
// status[0]              : tile counter; workgroups take tile ids with atomicAdd, in launch order.
// status[1 + 2k + h]     : tile k's status, half h of the 32-bit value: (flag << 16) | bits16.
//   flag 0 = NOT_READY, 1 = AGGREGATE (the tile's own sum), 2 = INCLUSIVE (sum of tiles 0..=k).
//   Values travel inside the atomics (no separate data + fence), split in two 16-bit halves; a
//   reader accepts a status only when both halves carry the same flag. Every write is atomicMax,
//   so a status never goes back (a fallback's AGGREGATE cannot overwrite an INCLUSIVE), and every
//   writer of a given flag writes the same bits.
// info[2k], info[2k + 1] : tile k's look-back steps and fallbacks (trace and diagnostics).
// {{T}} element type, {{WG}} threads, {{PER}} vec4 per thread, {{EXCL}}, {{SPIN}}.
// `// @step NAME` … `// @end` mark what the app highlights for a stage (src/ui/code.rs).

struct Params { n: u32, nv: u32, tiles: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> info: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

const FLAG_AGGREGATE: u32 = 1u;
const FLAG_INCLUSIVE: u32 = 2u;
const MAX_SPIN: u32 = {{SPIN}}u;
const LB: u32 = {{LB}}u;   // look-back window: min(32, WG)
// Loop iterations the look-back may spend re-reading not-ready statuses: 0 = no bound (GPUs).
// lavapipe (llvmpipe) silently ends every loop of an invocation once it has run 65535 loop
// iterations in all, so there, past the budget, a tile not ready at the first read is reduced at
// once (the fallback). A read costs up to SPIN_COST iterations.
const SPIN_BUDGET: u32 = {{SPIN_BUDGET}}u;
const SPIN_COST: u32 = 2u + LB;

var<workgroup> s_u: u32;
var<workgroup> s_k: u32;
var<workgroup> s_prefix: T;
var<workgroup> s_lb_flag: array<u32, LB>;
var<workgroup> s_lb_val: array<u32, LB>;

fn publish(t: u32, flag: u32, v: T) {
    let b = bitcast<u32>(v);
    atomicMax(&status[1u + 2u * t], (flag << 16u) | (b & 0xffffu));
    atomicMax(&status[2u + 2u * t], (flag << 16u) | (b >> 16u));
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
fn decoupled(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) { s_u = atomicAdd(&status[0], 1u); }
    let tile = workgroupUniformLoad(&s_u);
    if (tile >= params.tiles) { return; }

    // @step reduce
    // 1. Load, reduce: the tile's aggregate; each thread keeps its elements in registers.
    load_tile(tile, lid);
    var r = chunk(lid);
    scan_totals(lid, chunk_sum(&r));
    let agg = s_tot[WG - 1u];
    var thread_excl = T(0);
    if (lid > 0u) { thread_excl = s_tot[lid - 1u]; }
    // @end

    // @step publish
    // 2. Publish the aggregate (tile 0: already inclusive).
    if (lid == 0u) {
        if (tile == 0u) { publish(0u, FLAG_INCLUSIVE, agg); } else { publish(tile, FLAG_AGGREGATE, agg); }
    }
    // @end

    // @step look-back
    // 3. Look back through a window of LB predecessors at a time: threads 0..LB-1 read the status
    //    of tiles k-1 … k-LB at once, thread 0 adds AGGREGATEs from the nearest on until an
    //    INCLUSIVE. Stopped by a NOT_READY tile, it re-reads the window from there; after MAX_SPIN
    //    reads without progress the whole workgroup reduces that tile itself (the fallback).
    var acc = T(0);
    var steps = 0u;
    var falls = 0u;
    var spins = 0u;
    var spent = 0u;   // counted only with SPIN_BUDGET
    if (tile > 0u) {
        if (lid == 0u) { s_k = tile; }
        loop {
            let k = workgroupUniformLoad(&s_k);   // tiles k.. are summed into acc
            if (lid < LB) {
                var f = 0u;
                var b = 0u;
                if (MAX_SPIN > 0u && lid < k) {
                    let p = k - 1u - lid;
                    let lo = atomicLoad(&status[1u + 2u * p]);
                    let hi = atomicLoad(&status[2u + 2u * p]);
                    if ((lo >> 16u) == (hi >> 16u)) { f = lo >> 16u; }
                    b = (lo & 0xffffu) | (hi << 16u);
                }
                s_lb_flag[lid] = f;
                s_lb_val[lid] = b;
            }
            workgroupBarrier();
            if (lid == 0u) {
                var state = 1u;   // 0 = done, 1 = read again from s_k, 2 = fall back on s_k - 1
                var kk = k;
                let m = min(LB, k);
                for (var t = 0u; t < m; t++) {
                    let f = s_lb_flag[t];
                    if (f == 0u) { break; }
                    acc = bitcast<T>(s_lb_val[t]) + acc;
                    steps += 1u;
                    kk -= 1u;
                    if (f == FLAG_INCLUSIVE || kk == 0u) { state = 0u; break; }
                }
                if (SPIN_BUDGET > 0u) { spent += SPIN_COST; }
                if (state == 1u) {
                    if (kk == k) {
                        spins += 1u;
                        if (spins >= MAX_SPIN || (SPIN_BUDGET > 0u && spent >= SPIN_BUDGET)) {
                            state = 2u;
                            spins = 0u;
                        }
                    } else {
                        spins = 0u;
                    }
                }
                s_u = state;
                s_k = kk;
            }
            let st = workgroupUniformLoad(&s_u);
            if (st == 0u) { break; }
            if (st == 2u) {
                // Fallback: reduce predecessor tile p with the owner's own code.
                let p = workgroupUniformLoad(&s_k) - 1u;
                load_tile(p, lid);
                var rp = chunk(lid);
                scan_totals(lid, chunk_sum(&rp));
                let pagg = s_tot[WG - 1u];
                if (lid == 0u) {
                    if (p == 0u) { publish(0u, FLAG_INCLUSIVE, pagg); } else { publish(p, FLAG_AGGREGATE, pagg); }
                    acc = pagg + acc;
                    steps += 1u;
                    falls += 1u;
                    s_k = p;
                }
                if (p == 0u) { break; }
            }
        }
    }
    // @end

    // @step prefix
    // 4. Publish the inclusive prefix, broadcast the exclusive one.
    if (lid == 0u) {
        if (tile > 0u) { publish(tile, FLAG_INCLUSIVE, acc + agg); }
        info[2u * tile] = steps;
        info[2u * tile + 1u] = falls;
        s_prefix = acc;
    }
    let prefix = workgroupUniformLoad(&s_prefix);
    // @end

    // @step store
    // 5. Scan the registers from the thread's offset; coalesced store.
    store_scanned(tile, lid, &r, prefix + thread_excl);
    // @end
}
