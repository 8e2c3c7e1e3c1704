// Prefix sums (seed 004), in-place phase kernels over one global buffer: one dispatch per phase.
// One thread per element (ladder) or per tree node (blelloch); a 2D grid past 65535 workgroups.
//   ladder_step   : phase p: thread t with bit p set adds a[(t & ~(p-1)) - 1]; the others sleep.
//                   The rungs read (bit p clear) are never written in the same phase: no race.
//   blelloch_up   : up-sweep level d (half = 2^d): node j adds its left child's sum into its right.
//   blelloch_clear: the root (a[N-1]) becomes 0 (the identity) before the down-sweep.
//   blelloch_down : down-sweep level d: left <- node value, right <- node value + old left.
// {{T}} element type (u32/i32 wrap, f32), {{WG}} threads per workgroup.

struct Params { n: u32, p: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read_write> a: array<{{T}}>;
@group(0) @binding(1) var<uniform> params: Params;

alias T = {{T}};
const WG: u32 = {{WG}}u;

fn thread_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size({{WG}})
fn ladder_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_id(gid, nwg);
    let p = params.p;
    if (t >= params.n || (t & p) == 0u) { return; }   // sleeping thread
    let prev_rung = (t & ~(p - 1u)) - 1u;
    a[t] = a[t] + a[prev_rung];
}

// params.n = number of nodes at this level, params.p = half = 2^d.
@compute @workgroup_size({{WG}})
fn blelloch_up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = thread_id(gid, nwg);
    if (j >= params.n) { return; }
    let half = params.p;
    let k = j * 2u * half;
    let l = k + half - 1u;
    let r = k + 2u * half - 1u;
    a[r] = a[l] + a[r];
}

@compute @workgroup_size({{WG}})
fn blelloch_clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = thread_id(gid, nwg);
    if (j == 0u) { a[params.n - 1u] = T(0); }
}

@compute @workgroup_size({{WG}})
fn blelloch_down(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = thread_id(gid, nwg);
    if (j >= params.n) { return; }
    let half = params.p;
    let k = j * 2u * half;
    let l = k + half - 1u;
    let r = k + 2u * half - 1u;
    let left = a[l];
    let node = a[r];
    a[l] = node;
    a[r] = node + left;
}
