// naive: one thread per element, y = A·x ⊕ c, one scattered write. Table: A's n columns, c.
const NB: u32 = {{NB}}u;
const N: u32 = {{N}}u;

@compute @workgroup_size(256)
fn naive(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let x = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (x >= N) { return; }
    dst[cols(0u, NB, x) ^ tab[NB]] = src[x];
}
