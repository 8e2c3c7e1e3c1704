// The seed's kernel 1: (A B; 0 C) at split k, K = 2^k elements per workgroup (WG threads, ITER
// elements each):  shared[A·lid ⊕ B·gid ⊕ c_lo] = in[gid·K + lid]; sync;
//                  out[(C·gid ⊕ c_hi)·K + lid] = shared[lid].
// Table: A[KB] B[GB] (low parts) C[GB] (high parts, >> k) c_lo c_hi.
const KB: u32 = {{KB}}u;
const K: u32 = {{K}}u;
const WG: u32 = {{WG}}u;
const ITER: u32 = {{ITER}}u;
const GB: u32 = {{GB}}u;

var<workgroup> blk: array<u32, {{K}}>;

@compute @workgroup_size({{WG}})
fn block(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let bo = cols(KB, GB, g) ^ tab[KB + 2u * GB];
    for (var i = 0u; i < ITER; i++) {
        let l = lid + i * WG;
        blk[cols(0u, KB, l) ^ bo] = src[g * K + l];
    }
    workgroupBarrier();
    let ho = (cols(KB + GB, GB, g) ^ tab[KB + 2u * GB + 1u]) * K;
    for (var i = 0u; i < ITER; i++) {
        let l = lid + i * WG;
        dst[ho + l] = blk[l];
    }
}
