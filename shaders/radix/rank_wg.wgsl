// Radix sort without subgroup operations: a warp is G consecutive threads that exchange their
// digits through workgroup memory; each thread counts the peers before it and the last peer
// advances the warp's digit counter. Two barriers per key row: correct on any adapter.

var<workgroup> s_dig: array<u32, WG>;

fn rank_step(me: Me, d: u32) -> u32 {
    s_dig[me.lid] = d;
    workgroupBarrier();
    let g0 = me.lid - me.lane;
    var below = 0u;
    var lead = me.lane;
    var cnt = 0u;
    for (var l = 0u; l < me.L; l++) {
        let dl = s_dig[g0 + l];
        if (dl == d) {
            cnt += 1u;
            if (l < me.lane) { below += 1u; }
            lead = l;
        }
    }
    let old = atomicLoad(&s_mem[me.w * R + d]);
    workgroupBarrier();
    if (me.lane == lead) { atomicStore(&s_mem[me.w * R + d], old + cnt); }
    return old + below;
}

// The exclusive sum of `v` over the threads before this one: a Kogge-Stone scan in workgroup
// memory. Call in uniform control flow.
fn scan_threads(me: Me, v: u32) -> u32 {
    let lid = me.lid;
    s_scan[lid] = v;
    workgroupBarrier();
    for (var o = 1u; o < WG; o = o << 1u) {
        var y = s_scan[lid];
        if (lid >= o) { y += s_scan[lid - o]; }
        workgroupBarrier();
        s_scan[lid] = y;
        workgroupBarrier();
    }
    return s_scan[lid] - v;
}

// s_base[b] = s_cnt[0] + … + s_cnt[b-1]: thread t owns BPT consecutive buckets.
fn scan_buckets(me: Me) {
    let lid = me.lid;
    var tot = 0u;
    for (var q = 0u; q < BPT; q++) {
        let b = lid * BPT + q;
        if (b < R) { tot += s_cnt[b]; }
    }
    var run = scan_threads(me, tot);
    for (var q = 0u; q < BPT; q++) {
        let b = lid * BPT + q;
        if (b < R) { s_base[b] = run; run += s_cnt[b]; }
    }
    workgroupBarrier();
}
