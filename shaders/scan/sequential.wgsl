// Prefix sums (seed 004), `sequential`: the seed's loop on ONE GPU thread, for contrast. It reads
// BATCH vec4 (4 elements each) ahead into registers so the loads overlap, then walks them in order.
// {{T}} element type; {{EXCL}} true for an exclusive scan.

struct Params { n: u32, nv: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

alias T = {{T}};
const EXCLUSIVE: bool = {{EXCL}};
const BATCH: u32 = 8u;

@compute @workgroup_size(1)
fn sequential() {
    var acc = T(0);
    for (var b = 0u; b < params.nv; b += BATCH) {
        var r: array<vec4<u32>, BATCH>;
        for (var j = 0u; j < BATCH; j++) {
            if (b + j < params.nv) { r[j] = src[b + j]; }
        }
        for (var j = 0u; j < BATCH; j++) {
            if (b + j < params.nv) {
                let x = bitcast<vec4<T>>(r[j]);
                var o: vec4<T>;
                for (var c = 0u; c < 4u; c++) {
                    if (EXCLUSIVE) { o[c] = acc; acc = acc + x[c]; } else { acc = acc + x[c]; o[c] = acc; }
                }
                dst[b + j] = bitcast<vec4<u32>>(o);
            }
        }
    }
}
