// Bit-reversal permutation (seed 000). One thread per element; a 2D grid past 65535 workgroups.
//   naive       : the target index by Demo A's loop, one scattered write per element.
//   stage_split : Demo B's kernel1 for one stage: inside every block of 2k elements, even positions
//                 go to the left half and odd positions to the right half.
//   copy_back   : Demo B's kernel2: the stage's output becomes the next stage's input.

struct Params { n: u32, log_n: u32, k: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn element(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 256u;
}

@compute @workgroup_size(256)
fn naive(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = element(gid, nwg);
    if (i >= params.n) { return; }
    // Demo A: shift the bits of i out to the right while shifting them into irev from the left.
    var x = i;
    var irev = i;
    for (var k = 1u; k < params.log_n; k++) {
        x = x >> 1u;
        irev = irev << 1u;
        irev = irev | (x & 1u);
    }
    irev = irev & (params.n - 1u);
    dst[irev] = src[i];
}

@compute @workgroup_size(256)
fn stage_split(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = element(gid, nwg);
    if (i >= params.n) { return; }
    let k = params.k;               // block size after this stage
    let block = i / (2u * k);       // block index before this stage
    let j = block * 2u * k + (i & 1u) * k + (i % (2u * k)) / 2u;
    dst[j] = src[i];
}

@compute @workgroup_size(256)
fn copy_back(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = element(gid, nwg);
    if (i >= params.n) { return; }
    dst[i] = src[i];
}
