// Never ends in practice: three nested loops of 2^30 steps around an atomic (no compiler may drop
// it; a software GPU that caps one loop's trips still runs the nest for days).
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
var<workgroup> flag: atomic<u32>;

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    for (var a = 0u; a < 0x40000000u; a++) {
        for (var b = 0u; b < 0x40000000u; b++) {
            for (var c = 0u; c < 0x40000000u; c++) {
                if (atomicAdd(&flag, 1u) == 0xffffffffu) { dst[0] = c; }
            }
        }
    }
    dst[lid.x] = src[lid.x];
}
