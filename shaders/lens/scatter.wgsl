// The memory model's scattered accesses (src/lens/probe.rs): one word a thread, every lane of a
// warp in its own sector and DRAM page. i -> (i * 0x9E3779B1) mod n is a bijection for n a power
// of two (the multiplier is odd); consecutive threads land ~14 MiB apart at n = 2^26.
//   scatter: dst[perm(i)] = src[i]   (coalesced reads, partial-sector writes)
//   gather : dst[i] = src[perm(i)]   (partial-sector reads, coalesced writes)
//   scalar : dst[i] = src[i]         (one word a thread: how many warps' round trips a µs)
//   launch : nothing (below)

struct Params { n: u32, _a: u32, _b: u32, _c: u32 }

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn perm(i: u32) -> u32 {
    return (i * 0x9E3779B1u) & (params.n - 1u);
}

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < params.n) { dst[perm(i)] = src[i]; }
}

@compute @workgroup_size(256)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < params.n) { dst[i] = src[perm(i)]; }
}

@compute @workgroup_size(256)
fn scalar(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < params.n) { dst[i] = src[i]; }
}

// launch: every thread returns at once (params.n is past every index): what a grid of idle
// workgroups costs, the floor of a pass whose threads mostly sleep.
@compute @workgroup_size(256)
fn launch(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i == params.n) { dst[0] = src[0]; }
}
