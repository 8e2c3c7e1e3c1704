// Prefix sums by the ladder (seed 004), one phase per pass: run with --passes log_n. Stagewise
// swaps src and dst between passes and fills params.pass_index = 0, 1, … (the phase is 2^pass).
struct Params { n: u32, pass_index: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) { return; }
    let phase = 1u << params.pass_index;
    var v = src[i];
    // TODO: blocks of `phase` elements; a thread in an odd block (bit `pass_index` of i set) adds the
    // value just before its block (the seed's prev_rung). Every thread writes dst[i].
    dst[i] = v;
}
