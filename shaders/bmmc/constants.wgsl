// The tiled kernels' table, written into the kernel as constants: each pass compiles its own
// kernel, and its index maps fold into immediates instead of loads from a table buffer (on the
// H200 that made the vector kernel 1–11 % faster, most where a workgroup walks one tile).
const TAB = array<u32, {{TABLEN}}>({{TAB}});

// XOR of TAB[off + i] over the set bits i < nbits of v.
fn cols(off: u32, nbits: u32, v: u32) -> u32 {
    var acc = 0u;
    for (var i = 0u; i < nbits; i++) {
        acc ^= TAB[off + i] & (0u - ((v >> i) & 1u));
    }
    return acc;
}
