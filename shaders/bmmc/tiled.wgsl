// tiled: one pass for any map that fits a tile (every BPC; each half of any BMMC). A workgroup
// owns 2^TB elements: input x = Rk·k ⊕ Rg·g (k = in-tile index, g = workgroup), so lanes 0..31
// read 32 consecutive words. They go to workgroup memory at P·k (P: a bank swizzle). Then lanes
// enumerate the tile's outputs y = W·k ⊕ Wg·g ⊕ c, whose low 5 bits are the lane's: 32 lanes write
// one aligned 128-byte segment; the source word is at Lm·k (Lm = P·extract(A⁻¹·W)).
// Each thread handles ITER elements: k = lid | j·WG, walked in Gray-code order (one XOR per step).
// Table: Rk[TB] Rg[GB] P[TB] W[TB] Wg[GB] Lm[TB] c.
const TB: u32 = {{TB}}u;
const H: u32 = {{H}}u;
const ITER: u32 = {{ITER}}u;
const GB: u32 = {{GB}}u;
const RK: u32 = 0u;
const RG: u32 = TB;
const PK: u32 = TB + GB;
const WK: u32 = 2u * TB + GB;
const WGT: u32 = 3u * TB + GB;
const LM: u32 = 3u * TB + 2u * GB;
const CC: u32 = 4u * TB + 2u * GB;

var<workgroup> tile: array<u32, {{TILE}}>;

@compute @workgroup_size({{WG}})
fn tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    // The grid is exact (2^GB workgroups), so every workgroup is real: no early return.
    let g = wid.x + wid.y * nwg.x;
    let xr = cols(RK, H, lid) ^ cols(RG, GB, g);
    let pr = cols(PK, H, lid);
    var xo = 0u;
    var po = 0u;
    for (var j = 0u; j < ITER; j++) {
        if (j > 0u) {
            let b = H + countTrailingZeros(j);
            xo ^= tab[RK + b];
            po ^= tab[PK + b];
        }
        tile[pr ^ po] = src[xr ^ xo];
    }
    workgroupBarrier();
    let yw = cols(WK, H, lid) ^ cols(WGT, GB, g) ^ tab[CC];
    let ls = cols(LM, H, lid);
    var yo = 0u;
    var lo = 0u;
    for (var j = 0u; j < ITER; j++) {
        if (j > 0u) {
            let b = H + countTrailingZeros(j);
            yo ^= tab[WK + b];
            lo ^= tab[LM + b];
        }
        dst[yw ^ yo] = tile[ls ^ lo];
    }
}
