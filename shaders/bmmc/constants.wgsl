// The tiled kernels' table, written into the kernel as constants: each pass compiles its own
// kernel, and its index maps fold into immediates instead of loads from a table buffer (on the
// H200 that made the vector kernel 1–11 % faster, most where a workgroup walks one tile).
const TAB = array<u32, {{TABLEN}}>({{TAB}});

// The tile of 2^TB words, WG = 2^H threads, ITER words (or vectors) a thread, 2^GB tiles, 2^TPB a
// workgroup; where each part of the table starts: Rk[TB] Rg[GB] P[TB] W[TB] Wg[GB] Lm[TB] c.
const TB: u32 = {{TB}}u;
const H: u32 = {{H}}u;
const ITER: u32 = {{ITER}}u;
const GB: u32 = {{GB}}u;
const TPB: u32 = {{TPB}}u;
const RK: u32 = 0u;
const RG: u32 = TB;
const PK: u32 = TB + GB;
const WK: u32 = 2u * TB + GB;
const WGT: u32 = 3u * TB + GB;
const LM: u32 = 3u * TB + 2u * GB;
const CC: u32 = 4u * TB + 2u * GB;

// XOR of TAB[off + i] over the set bits i < nbits of v.
fn cols(off: u32, nbits: u32, v: u32) -> u32 {
    var acc = 0u;
    for (var i = 0u; i < nbits; i++) {
        acc ^= TAB[off + i] & (0u - ((v >> i) & 1u));
    }
    return acc;
}
