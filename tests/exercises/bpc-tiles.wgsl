// Reference solution: the 2^R × 2^C transposition (a BPC permutation: the index's R row bits and
// C column bits swap places) by 32×32 tiles, both global sides coalesced.
struct Params { n: u32, rows_log: u32, cols_log: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
var<workgroup> tile: array<u32, 1056>;

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = wid.x + wid.y * nwg.x;
    if (t >= params.n / 1024u) { return; }
    let tiles_c = 1u << (params.cols_log - 5u);
    let tr = t / tiles_c;
    let tc = t % tiles_c;
    for (var k = 0u; k < 4u; k++) {
        let i = lid.y + 8u * k;
        tile[i * 33u + lid.x] = src[((tr * 32u + i) << params.cols_log) + tc * 32u + lid.x];
    }
    workgroupBarrier();
    for (var k = 0u; k < 4u; k++) {
        let j = lid.y + 8u * k;
        dst[((tc * 32u + j) << params.rows_log) + tr * 32u + lid.x] = tile[lid.x * 33u + j];
    }
}
