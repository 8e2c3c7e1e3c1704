// tiled: one pass for any map that fits a tile (every BPC; each half of any BMMC). A tile is 2^TB
// elements: input x = Rk·k ⊕ Rg·g (k = in-tile index, g = tile), so lanes 0..31 read 32
// consecutive words. They go to workgroup memory at P·k (P: a bank swizzle). Then lanes enumerate
// the tile's outputs y = W·k ⊕ Wg·g ⊕ c, whose low 5 bits are the lane's: 32 lanes write one
// aligned 128-byte segment; the source word is at Lm·k (Lm = P·extract(A⁻¹·W)).
// Each thread handles ITER elements of a tile: k = lid | j·WG, walked in Gray-code order (one XOR
// per step). A workgroup walks 2^TPB consecutive tiles and keeps DRAM busy across its barriers:
// a tile's loads all go to registers before any reaches workgroup memory, and the next tile's
// loads are issued before this tile's stores.
// Table (constants.wgsl): Rk[TB] Rg[GB] P[TB] W[TB] Wg[GB] Lm[TB] c.

var<workgroup> tile: array<u32, {{TILE}}>;

@compute @workgroup_size({{WG}})
fn tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    // The grid is exact (2^(GB − TPB) workgroups), so every workgroup is real: no early return.
    let g0 = (wid.x + wid.y * nwg.x) << TPB;
    let xk = cols(RK, H, lid);
    let pr = cols(PK, H, lid);
    let yk = cols(WK, H, lid) ^ TAB[CC];
    let ls = cols(LM, H, lid);
    var r: array<u32, ITER>;
    let x0 = xk ^ cols(RG, GB, g0);
    var xo = 0u;
    for (var j = 0u; j < ITER; j++) {
        if (j > 0u) {
            xo ^= TAB[RK + H + countTrailingZeros(j)];
        }
        r[j] = src[x0 ^ xo];
    }
    for (var t = 0u; t < (1u << TPB); t++) {
        let g = g0 | t;
        var po = 0u;
        for (var j = 0u; j < ITER; j++) {
            if (j > 0u) {
                po ^= TAB[PK + H + countTrailingZeros(j)];
            }
            tile[pr ^ po] = r[j];
        }
        workgroupBarrier();
        // t is uniform: every thread takes the same branch.
        if (t + 1u < (1u << TPB)) {
            let xn = xk ^ cols(RG, GB, g + 1u);
            var xq = 0u;
            for (var j = 0u; j < ITER; j++) {
                if (j > 0u) {
                    xq ^= TAB[RK + H + countTrailingZeros(j)];
                }
                r[j] = src[xn ^ xq];
            }
        }
        let yw = yk ^ cols(WGT, GB, g);
        var yo = 0u;
        var lo = 0u;
        for (var j = 0u; j < ITER; j++) {
            if (j > 0u) {
                let b = H + countTrailingZeros(j);
                yo ^= TAB[WK + b];
                lo ^= TAB[LM + b];
            }
            dst[yw ^ yo] = tile[ls ^ lo];
        }
        workgroupBarrier();
    }
}
