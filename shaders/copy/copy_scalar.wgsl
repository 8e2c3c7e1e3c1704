// One u32 per thread: the copy most first GPU programs write, kept for contrast with copy_vec4.

struct Params { n: u32, _a: u32, _b: u32, _c: u32 }

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn copy_scalar(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < params.n) { dst[i] = src[i]; }
}
