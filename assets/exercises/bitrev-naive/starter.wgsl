// Bit-reversal, one thread per element (seed 000, Demo A). Stagewise fills params by name.
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // Past 65535 workgroups the grid is 2-D: rows of num_workgroups.x workgroups.
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) { return; }
    // TODO: r = i with its lowest params.log_n bits in reverse order
    // (Demo A's shifting loop, or WGSL's reverseBits and a shift).
    let r = i;
    dst[r] = src[i];
}
