// A kernel meant never to end on a GPU (the loop's exit needs an input value no fill makes, and
// every round writes, so no compiler may drop it), for checking that a wait for the GPU has a
// limit: `STAGEWISE_GPU_TIMEOUT=5 stagewise run kernel --wgsl bench/never_ends.wgsl --n 1024`
// is an error after 5 s and exit 1. (lavapipe ends it after 65535 rounds.)
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var i = 0u;
    loop {
        if (src[i % params.n] == 0xfffffff7u) { break; }
        dst[g.x % params.n] = i;
        i += 1u;
    }
}
