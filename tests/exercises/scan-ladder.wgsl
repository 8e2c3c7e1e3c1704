// Reference solution: the seed's ladder, one phase a pass (--passes log_n): a thread whose index
// has bit `pass_index` set adds the last element of the block of 2^pass_index before its own.
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
    if ((i & phase) != 0u) {
        v += src[(i & ~(phase - 1u)) - 1u];
    }
    dst[i] = v;
}
