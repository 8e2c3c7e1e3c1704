// Radix sort: zero the state buffer (digit counts, tile tickets, look-back statuses) before a run,
// so repeated runs of one plan start clean. Four words per thread.

struct Params { words4: u32, _a: u32, _b: u32, _c: u32 }

@group(0) @binding(0) var<storage, read_write> state: array<vec4<u32>>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u; // @lens wg i / 256u; lid i % 256u
    if (i < params.words4) { state[i] = vec4<u32>(0u); } // @lens write4 state i
}
