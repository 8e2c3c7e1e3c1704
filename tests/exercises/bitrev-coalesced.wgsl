// Reference solution: a TILE×TILE tile at a time. Index bits (a | m | b): a the top B bits, b the
// low B (TILE = 2^B). rev(a | m | b) = (rev(b) | rev(m) | rev(a)): the tile of all a, b for one m
// is read row by row (b contiguous) and written row by row (rev(a) contiguous), the
// transposition in workgroup memory.
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
// The tile's side, a power of two: `stagewise tune kernel --override TILE=8,16,32,64` times each.
override TILE: u32 = 32u;
// TILE + 1 words a row: a column read hits TILE different banks.
var<workgroup> tile: array<u32, TILE * (TILE + 1u)>;

fn rev(x: u32, bits: u32) -> u32 { return reverseBits(x) >> (32u - bits); }

@compute @workgroup_size(TILE, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let bits = countTrailingZeros(TILE);
    let mid_bits = params.log_n - 2u * bits;
    let hi = params.log_n - bits;
    // Every workgroup takes every (workgroups)-th tile: any tile side covers the array.
    for (var m = wid.x + wid.y * nwg.x; m < (1u << mid_bits); m += nwg.x * nwg.y) {
        let rm = select(0u, rev(m, mid_bits), mid_bits > 0u);
        for (var k = 0u; k < TILE / 8u; k++) {
            let a = lid.y + 8u * k;
            tile[a * (TILE + 1u) + lid.x] = src[(a << hi) | (m << bits) | lid.x];
        }
        workgroupBarrier();
        for (var k = 0u; k < TILE / 8u; k++) {
            let bb = lid.y + 8u * k;
            dst[(bb << hi) | (rm << bits) | lid.x] = tile[rev(lid.x, bits) * (TILE + 1u) + rev(bb, bits)];
        }
        // The next tile overwrites this one.
        workgroupBarrier();
    }
}
