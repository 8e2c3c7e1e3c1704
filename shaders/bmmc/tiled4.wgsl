// tiled4: the tiled kernel (tiled.wgsl) with 16-byte global loads and stores. Tile index
// k = 4·v + i: v names a vector of four consecutive input words (the tile's bits 0 and 1 are input
// bits 0 and 1) and, on the write side, of four consecutive output words (W's columns 0 and 1 are
// output bits 0 and 1). Workgroup memory is written and read a word at a time; the swizzle P puts
// both sides' lanes (vectors 0..31 of a warp) on 32 distinct banks. Each thread handles ITER
// vectors of a tile, v = lid | j·WG, walked in Gray-code order; a workgroup walks 2^TPB
// consecutive tiles, the next tile's loads issued before this tile's stores.
// Table (constants.wgsl): Rk[TB] Rg[GB] P[TB] W[TB] Wg[GB] Lm[TB] c.
// Tile bit of the thread's lowest vector bit (above the two word bits), and the first of j's.
const VB: u32 = 2u;
const JB: u32 = H + 2u;

var<workgroup> tile: array<u32, {{TILE}}>;

// Lm applied to a word's position i (0..3) inside its vector.
fn lm_word(i: u32) -> u32 {
    return (TAB[LM] & (0u - (i & 1u))) ^ (TAB[LM + 1u] & (0u - (i >> 1u)));
}

@compute @workgroup_size({{WG}})
fn tiled4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    // The grid is exact (2^(GB − TPB) workgroups), so every workgroup is real: no early return.
    let g0 = (wid.x + wid.y * nwg.x) << TPB;
    let kv = lid << VB;
    let xk = cols(RK, JB, kv);
    let pr = cols(PK, JB, kv);
    let p1 = TAB[PK];
    let p2 = TAB[PK + 1u];
    let yk = cols(WK, JB, kv) ^ TAB[CC];
    let ls = cols(LM, JB, kv);
    var r: array<vec4<u32>, ITER>;
    let x0 = xk ^ cols(RG, GB, g0);
    var xo = 0u;
    for (var j = 0u; j < ITER; j++) {
        if (j > 0u) {
            xo ^= TAB[RK + JB + countTrailingZeros(j)];
        }
        r[j] = src[(x0 ^ xo) >> 2u];
    }
    for (var t = 0u; t < (1u << TPB); t++) {
        let g = g0 | t;
        var po = 0u;
        for (var j = 0u; j < ITER; j++) {
            if (j > 0u) {
                po ^= TAB[PK + JB + countTrailingZeros(j)];
            }
            let q = pr ^ po;
            tile[q] = r[j].x;
            tile[q ^ p1] = r[j].y;
            tile[q ^ p2] = r[j].z;
            tile[q ^ p1 ^ p2] = r[j].w;
        }
        workgroupBarrier();
        // t is uniform: every thread takes the same branch.
        if (t + 1u < (1u << TPB)) {
            let xn = xk ^ cols(RG, GB, g + 1u);
            var xq = 0u;
            for (var j = 0u; j < ITER; j++) {
                if (j > 0u) {
                    xq ^= TAB[RK + JB + countTrailingZeros(j)];
                }
                r[j] = src[(xn ^ xq) >> 2u];
            }
        }
        // The tile's output words land d = (Wg·g ⊕ c) mod 4 apart from their place in k: the
        // vector's word e is the tile's word e ⊕ d.
        let yw = yk ^ cols(WGT, GB, g);
        let d = yw & 3u;
        let m0 = lm_word(d);
        let m1 = lm_word(1u ^ d);
        let m2 = lm_word(2u ^ d);
        let m3 = lm_word(3u ^ d);
        var yo = 0u;
        var lo = 0u;
        for (var j = 0u; j < ITER; j++) {
            if (j > 0u) {
                let b = JB + countTrailingZeros(j);
                yo ^= TAB[WK + b];
                lo ^= TAB[LM + b];
            }
            let q = ls ^ lo;
            dst[(yw ^ yo) >> 2u] = vec4<u32>(tile[q ^ m0], tile[q ^ m1], tile[q ^ m2], tile[q ^ m3]);
        }
        workgroupBarrier();
    }
}
