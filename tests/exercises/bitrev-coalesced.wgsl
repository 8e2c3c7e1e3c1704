// Reference solution: a 32×32 tile per workgroup. Index bits (a | m | b): a the top 5, b the low 5.
// rev(a | m | b) = (rev(b) | rev(m) | rev(a)): the tile of all a, b for one m is read row by row
// (b contiguous) and written row by row (rev(a) contiguous), the transposition in workgroup memory.
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
// 33 words a row: a column read hits 32 different banks.
var<workgroup> tile: array<u32, 1056>;

fn rev5(x: u32) -> u32 { return reverseBits(x) >> 27u; }

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let m = wid.x + wid.y * nwg.x;
    let mid_bits = params.log_n - 10u;
    if (m >= (1u << mid_bits)) { return; }
    let hi = params.log_n - 5u;
    let rm = select(0u, reverseBits(m) >> (32u - mid_bits), mid_bits > 0u);
    for (var k = 0u; k < 4u; k++) {
        let a = lid.y + 8u * k;
        tile[a * 33u + lid.x] = src[(a << hi) | (m << 5u) | lid.x];
    }
    workgroupBarrier();
    for (var k = 0u; k < 4u; k++) {
        let bb = lid.y + 8u * k;
        dst[(bb << hi) | (rm << 5u) | lid.x] = tile[rev5(lid.x) * 33u + rev5(bb)];
    }
}
