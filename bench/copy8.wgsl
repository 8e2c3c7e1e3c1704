// Copy with 8-byte accesses (complex values, as the FFT kernels load and store), PER a thread, all
// loads before the stores: is 8 B a load what keeps the FFT's one-pass sizes under the vec4 copy?
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: Params;
const PER: u32 = 16u;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let base = (wid.x + wid.y * nwg.x) * 256u * PER + lid;
    var v: array<vec2<f32>, PER>;
    for (var j = 0u; j < PER; j++) {
        v[j] = src[min(base + j * 256u, params.n - 1u)];
    }
    for (var j = 0u; j < PER; j++) {
        let i = base + j * 256u;
        if (i < params.n) { dst[i] = v[j]; }
    }
}
