// Bit-reversal with coalesced reads AND writes (seed 000): one 32×32 tile per workgroup.
// Index bits (a | m | b): a the top 5 bits, m the middle, b the low 5. Its target is
// (rev(b) | rev(m) | rev(a)). Run with --items-per-thread 4 (256 threads, 1024 elements a tile).
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
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
    // Read: 32 neighbouring threads read 32 neighbouring words (b = lid.x).
    for (var k = 0u; k < 4u; k++) {
        let a = lid.y + 8u * k;
        tile[a * 33u + lid.x] = src[(a << hi) | (m << 5u) | lid.x];
    }
    workgroupBarrier();
    // TODO: write so that 32 neighbouring threads write 32 neighbouring words: thread lid.x
    // writes the low bits rev(a) = lid.x of row rev(b). Which tile entry holds that element?
    for (var k = 0u; k < 4u; k++) {
        let a = lid.y + 8u * k;
        dst[(a << hi) | (m << 5u) | lid.x] = tile[a * 33u + lid.x];
    }
}
