// The memory model's residency probe (src/lens/probe.rs): how many workgroups that each hold
// {{WORDS}} words of workgroup memory the adapter runs at once. Each workgroup counts itself in,
// keeps the most counted in at once, holds on for `spins` round trips to one word (far longer
// than the launch of a whole GPU's worth of workgroups) and counts itself out, so `live` ends at 0.

struct Count { live: atomic<u32>, most: atomic<u32>, sink: atomic<u32>, spins: u32 }

@group(0) @binding(0) var<storage, read_write> count: Count;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

var<workgroup> held: array<u32, {{WORDS}}>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_index) l: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let w = wid.x + wid.y * nwg.x;
    held[l] = l ^ w;
    workgroupBarrier();
    if (l == 0u) {
        let n = atomicAdd(&count.live, 1u) + 1u;
        atomicMax(&count.most, n);
        var acc = 0u;
        for (var i = 0u; i < count.spins; i++) {
            acc += atomicAdd(&count.sink, 0u);
        }
        atomicSub(&count.live, 1u);
        // An index the compiler cannot know keeps the whole array.
        out[w] = acc + held[(acc * 37u + w) % {{WORDS}}u];
    }
}
