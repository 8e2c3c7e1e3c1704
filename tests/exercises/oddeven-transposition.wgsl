// Reference solution: the seed's sort with every barrier reached by every invocation: the odd
// pair's bound is a condition on the swap, not a `continue` past the barrier.
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
var<workgroup> sh: array<u32, 512>;

@compute @workgroup_size(256)
fn sort(@builtin(local_invocation_index) idx: u32) {
    let n = params.n;
    let f_even = idx * 2u;
    let s_even = f_even + 1u;
    let f_odd = idx * 2u + 1u;
    let s_odd = f_odd + 1u;
    if (f_even < n) { sh[f_even] = src[f_even]; }
    if (s_even < n) { sh[s_even] = src[s_even]; }
    workgroupBarrier();
    for (var i = 0u; i < (n + 1u) / 2u; i++) {
        if (s_even < n && sh[s_even] < sh[f_even]) {
            let t = sh[s_even]; sh[s_even] = sh[f_even]; sh[f_even] = t;
        }
        workgroupBarrier();
        if (s_odd < n && sh[s_odd] < sh[f_odd]) {
            let t = sh[s_odd]; sh[s_odd] = sh[f_odd]; sh[f_odd] = t;
        }
        workgroupBarrier();
    }
    if (f_even < n) { dst[f_even] = sh[f_even]; }
    if (s_even < n) { dst[s_even] = sh[s_even]; }
}
