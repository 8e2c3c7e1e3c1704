// BMMC permutations (seed 001): out[A·x ⊕ c] = in[x]. Every index map inside a kernel is
// "XOR the GF(2) columns of the set bits", read from the pass's table: a buffer here, constants
// in the tiled kernels (constants.wgsl); other constants come by text substitution ({{NAME}}) per
// pass. The buffers' bindings 0 and 1 (src, dst) come before this.

@group(0) @binding(2) var<storage, read> tab: array<u32>;

// XOR of tab[off + i] over the set bits i < nbits of v.
fn cols(off: u32, nbits: u32, v: u32) -> u32 {
    var acc = 0u;
    for (var i = 0u; i < nbits; i++) {
        acc ^= tab[off + i] & (0u - ((v >> i) & 1u));
    }
    return acc;
}
