// The seed's kernel 2: (Id 0; 0 X) at split k: blocks of K = 2^k words move whole,
// out[(X·(x >> k)) << k | (x mod K)) ⊕ c] = in[x]. Table: X[GB] (high parts), c.
const KB: u32 = {{KB}}u;
const GB: u32 = {{GB}}u;
const N: u32 = {{N}}u;

@compute @workgroup_size(256)
fn blockmove(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let x = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (x >= N) { return; }
    let low = x & ((1u << KB) - 1u);
    let y = ((cols(0u, GB, x >> KB) << KB) | low) ^ tab[GB];
    dst[y] = src[x];
}
