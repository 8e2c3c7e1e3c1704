// Odd-even transposition, one dispatch per phase over a global buffer: thread i is the seed's owner
// i and compares pair (2i + parity, 2i + parity + 1) in place (pairs of one phase are disjoint).

struct Params { n: u32, parity: u32, trace: u32, phase: u32 }

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read_write> flags: array<u32>;

@compute @workgroup_size(256)
fn phase(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    let a = 2u * i + params.parity;
    if (a + 1u >= params.n) { return; }
    let xa = data[a];
    let xb = data[a + 1u];
    let swapped = to_key(xa) > to_key(xb);
    if (swapped) {
        data[a] = xb;
        data[a + 1u] = xa;
    }
    if (params.trace != 0u) {
        flags[a] = (params.phase << 1u) | u32(swapped);
    }
}
