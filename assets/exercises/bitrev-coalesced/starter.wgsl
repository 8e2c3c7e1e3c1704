// Bit-reversal with coalesced reads AND writes (seed 000): one TILE×TILE tile at a time
// (TILE = 2^B, an override: 32 unless tuned). Index bits (a | m | b): a the top B bits, m the
// middle, b the low B. Its target is (rev(b) | rev(m) | rev(a)). Run with --items-per-thread 4.
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
// The tile's side, a power of two: `stagewise tune kernel --override TILE=8,16,32,64` times each.
override TILE: u32 = 32u;
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
        // Read: TILE neighbouring threads read TILE neighbouring words (b = lid.x).
        for (var k = 0u; k < TILE / 8u; k++) {
            let a = lid.y + 8u * k;
            tile[a * (TILE + 1u) + lid.x] = src[(a << hi) | (m << bits) | lid.x];
        }
        workgroupBarrier();
        // TODO: write so that TILE neighbouring threads write TILE neighbouring words: thread
        // lid.x writes the low bits rev(a) = lid.x of row rev(b). Which tile entry holds it?
        for (var k = 0u; k < TILE / 8u; k++) {
            let a = lid.y + 8u * k;
            dst[(a << hi) | (m << bits) | lid.x] = tile[a * (TILE + 1u) + lid.x];
        }
        // The next tile overwrites this one.
        workgroupBarrier();
    }
}
