// Right, but every write scatters: dst[rev(i)] with i contiguous across a warp.
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let m = wid.x + wid.y * nwg.x;
    for (var k = 0u; k < 4u; k++) {
        let i = m * 1024u + (lid.y + 8u * k) * 32u + lid.x;
        if (i < params.n) {
            dst[reverseBits(i) >> (32u - params.log_n)] = src[i];
        }
    }
}
