// Copy with 8-byte accesses (complex values, as the FFT kernels load and store), 16 a thread, all
// loads before the stores, written out (a loop's array went to local memory on the H200): is 8 B
// a load what keeps the FFT's one-pass sizes under the vec4 copy?
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: Params;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let base = (wid.x + wid.y * nwg.x) * 256u * 16u + lid;
    let last = params.n - 1u;
    let v0 = src[min(base + 0u, last)];
    let v1 = src[min(base + 256u, last)];
    let v2 = src[min(base + 512u, last)];
    let v3 = src[min(base + 768u, last)];
    let v4 = src[min(base + 1024u, last)];
    let v5 = src[min(base + 1280u, last)];
    let v6 = src[min(base + 1536u, last)];
    let v7 = src[min(base + 1792u, last)];
    let v8 = src[min(base + 2048u, last)];
    let v9 = src[min(base + 2304u, last)];
    let v10 = src[min(base + 2560u, last)];
    let v11 = src[min(base + 2816u, last)];
    let v12 = src[min(base + 3072u, last)];
    let v13 = src[min(base + 3328u, last)];
    let v14 = src[min(base + 3584u, last)];
    let v15 = src[min(base + 3840u, last)];
    if (base + 0u < params.n) { dst[base + 0u] = v0; }
    if (base + 256u < params.n) { dst[base + 256u] = v1; }
    if (base + 512u < params.n) { dst[base + 512u] = v2; }
    if (base + 768u < params.n) { dst[base + 768u] = v3; }
    if (base + 1024u < params.n) { dst[base + 1024u] = v4; }
    if (base + 1280u < params.n) { dst[base + 1280u] = v5; }
    if (base + 1536u < params.n) { dst[base + 1536u] = v6; }
    if (base + 1792u < params.n) { dst[base + 1792u] = v7; }
    if (base + 2048u < params.n) { dst[base + 2048u] = v8; }
    if (base + 2304u < params.n) { dst[base + 2304u] = v9; }
    if (base + 2560u < params.n) { dst[base + 2560u] = v10; }
    if (base + 2816u < params.n) { dst[base + 2816u] = v11; }
    if (base + 3072u < params.n) { dst[base + 3072u] = v12; }
    if (base + 3328u < params.n) { dst[base + 3328u] = v13; }
    if (base + 3584u < params.n) { dst[base + 3584u] = v14; }
    if (base + 3840u < params.n) { dst[base + 3840u] = v15; }
}
