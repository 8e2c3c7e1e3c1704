// Tuned copy: the bandwidth roofline. Each thread moves PER vec4<u32> (16 bytes each) with all its
// loads issued before its stores, so many bytes are in flight; consecutive threads touch
// consecutive vec4s, so every warp reads and writes whole 128-byte lines.
// {{WG}} threads per workgroup, {{PER}} vec4 per thread; 2D grid for more than 65535 workgroups.

struct Params { n_vec4: u32, _a: u32, _b: u32, _c: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

const WG: u32 = {{WG}}u;
const PER: u32 = {{PER}}u;

@compute @workgroup_size({{WG}})
fn copy_vec4(@builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let group = wid.x + wid.y * nwg.x;
    let base = group * WG * PER + lid;
    let n = params.n_vec4;
    var v: array<vec4<u32>, PER>;
    for (var j = 0u; j < PER; j++) {
        let i = base + j * WG;
        if (i < n) { v[j] = src[i]; }
    }
    for (var j = 0u; j < PER; j++) {
        let i = base + j * WG;
        if (i < n) { dst[i] = v[j]; }
    }
}
