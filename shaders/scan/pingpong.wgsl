// Prefix sums (seed 004), out-of-place phase kernels: every thread reads the previous phase's
// array (src) and writes the next one (dst), so reads never race with writes.
//   hs_step   : Hillis-Steele phase p: dst[i] = src[i] + src[i-p] (i >= p), else a copy (sleeping).
//   fold_step : folded phase p (p = N/2 ... 1): dst[i] = src[i] + src[i+p] where i+p < n — SUFFIX
//               sums; with params.mirror = 1 the mirrored form dst[i] = src[i] + src[i-p] (i >= p):
//               PREFIX sums.
//   shift     : exclusive from inclusive: dst[i] = src[i-1] (prefix) / src[i+1] (suffix), 0 at the end.
//   add_src   : dst[i] = dst[i] + src[i] (Blelloch's exclusive result plus the input = inclusive).
// {{T}} element type, {{WG}} threads per workgroup, 2D grid past 65535 workgroups.

struct Params { n: u32, p: u32, mirror: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> src: array<{{T}}>;
@group(0) @binding(1) var<storage, read_write> dst: array<{{T}}>;
@group(0) @binding(2) var<uniform> params: Params;

alias T = {{T}};
const WG: u32 = {{WG}}u;

fn thread_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size({{WG}})
fn hs_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_id(gid, nwg);
    if (i >= params.n) { return; }
    let p = params.p;
    var v = src[i];
    if (i >= p) { v = v + src[i - p]; }
    dst[i] = v;
}

@compute @workgroup_size({{WG}})
fn fold_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_id(gid, nwg);
    if (i >= params.n) { return; }
    let p = params.p;
    var v = src[i];
    if (params.mirror == 0u) {
        if (i + p < params.n) { v = v + src[i + p]; }
    } else {
        if (i >= p) { v = v + src[i - p]; }
    }
    dst[i] = v;
}

@compute @workgroup_size({{WG}})
fn shift(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_id(gid, nwg);
    if (i >= params.n) { return; }
    var v = T(0);
    if (params.mirror == 0u) {
        if (i > 0u) { v = src[i - 1u]; }
    } else {
        if (i + 1u < params.n) { v = src[i + 1u]; }
    }
    dst[i] = v;
}

@compute @workgroup_size({{WG}})
fn add_src(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_id(gid, nwg);
    if (i >= params.n) { return; }
    dst[i] = dst[i] + src[i];
}
