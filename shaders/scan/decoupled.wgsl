// Prefix sums (seed 004), `decoupled`: single-pass scan with decoupled look-back (Merrill &
// Garland 2016) that needs NO forward-progress guarantee ("decoupled fallback"): when a
// predecessor's status stays NOT_READY for MAX_SPIN reads, the waiting workgroup reduces the
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

struct Params { n: u32, nv: u32, tiles: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> info: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

const FLAG_AGGREGATE: u32 = 1u;
const FLAG_INCLUSIVE: u32 = 2u;
const MAX_SPIN: u32 = {{SPIN}}u;

var<workgroup> s_u: u32;
var<workgroup> s_k: u32;
var<workgroup> s_prefix: T;

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

    // 1. Load, reduce: the tile's aggregate; each thread keeps its elements in registers.
    load_tile(tile, lid);
    var r = chunk(lid);
    scan_totals(lid, chunk_sum(&r));
    let agg = s_tot[WG - 1u];
    var thread_excl = T(0);
    if (lid > 0u) { thread_excl = s_tot[lid - 1u]; }

    // 2. Publish the aggregate (tile 0: already inclusive).
    if (lid == 0u) {
        if (tile == 0u) { publish(0u, FLAG_INCLUSIVE, agg); } else { publish(tile, FLAG_AGGREGATE, agg); }
    }

    // 3. Look back. Thread 0 walks predecessors while their status is ready; when one stays
    //    NOT_READY the whole workgroup reduces that tile itself (the fallback) and goes on.
    var acc = T(0);
    var k = tile;
    var steps = 0u;
    var falls = 0u;
    if (tile > 0u) {
        loop {
            if (lid == 0u) {
                var need = 0u;
                loop {
                    let p = k - 1u;
                    var flag = 0u;
                    var bits = 0u;
                    for (var s = 0u; s < MAX_SPIN; s++) {
                        let lo = atomicLoad(&status[1u + 2u * p]);
                        let hi = atomicLoad(&status[2u + 2u * p]);
                        let f = lo >> 16u;
                        if (f != 0u && f == (hi >> 16u)) {
                            flag = f;
                            bits = (lo & 0xffffu) | (hi << 16u);
                            break;
                        }
                    }
                    if (flag == 0u) { need = 1u; break; }
                    steps += 1u;
                    acc = bitcast<T>(bits) + acc;
                    k = p;
                    if (flag == FLAG_INCLUSIVE || k == 0u) { break; }
                }
                s_u = need;
                s_k = k;
            }
            if (workgroupUniformLoad(&s_u) == 0u) { break; }
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
                k = p;
            }
            if (p == 0u) { break; }
            workgroupBarrier();
        }
    }

    // 4. Publish the inclusive prefix, broadcast the exclusive one.
    if (lid == 0u) {
        if (tile > 0u) { publish(tile, FLAG_INCLUSIVE, acc + agg); }
        info[2u * tile] = steps;
        info[2u * tile + 1u] = falls;
        s_prefix = acc;
    }
    let prefix = workgroupUniformLoad(&s_prefix);

    // 5. Scan the registers from the thread's offset; coalesced store.
    store_scanned(tile, lid, &r, prefix + thread_excl);
}
