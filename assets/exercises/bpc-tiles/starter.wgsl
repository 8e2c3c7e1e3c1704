// A BPC permutation by tiles (seed 001): the transposition of a 2^R × 2^C row-major matrix,
// element (r, c) to (c, r). Give R and C: --param rows_log=R --param cols_log=C (each ≥ 5).
// One 32×32 tile per workgroup, --items-per-thread 4.
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
    let tr = t / tiles_c;       // the tile's row of tiles
    let tc = t % tiles_c;       // and column of tiles
    for (var k = 0u; k < 4u; k++) {
        let i = lid.y + 8u * k;
        tile[i * 33u + lid.x] = src[((tr * 32u + i) << params.cols_log) + tc * 32u + lid.x];
    }
    workgroupBarrier();
    // TODO: write the tile transposed: the element of tile row i, column j goes to row
    // tc*32 + j, column tr*32 + i of the 2^C × 2^R result. Keep the writes coalesced: let
    // lid.x run along the result's row.
    for (var k = 0u; k < 4u; k++) {
        let i = lid.y + 8u * k;
        dst[((tr * 32u + i) << params.cols_log) + tc * 32u + lid.x] = tile[i * 33u + lid.x];
    }
}
