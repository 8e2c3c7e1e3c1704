// Radix sort: a warp is a subgroup (adapters with Features::SUBGROUP and at most 32 lanes, so a
// ballot fits its .x word). The lanes with the same digit (the peers) are found with BITS ballots,
// one per digit bit; the highest peer adds the peer count to the warp's digit counter and shuffles
// the old count to the others. No barrier: the subgroup is the unit of execution.

fn rank_step(me: Me, d: u32) -> u32 {
    var peers = subgroupBallot(true).x;
    for (var b = 0u; b < BITS; b++) {
        let bit = ((d >> b) & 1u) != 0u;
        let m = subgroupBallot(bit).x;
        peers &= select(~m, m, bit);
    }
    let below = countOneBits(peers & ((1u << me.lane) - 1u));
    let lead = firstLeadingBit(peers);
    var old = 0u;
    if (me.lane == lead) { old = atomicAdd(&s_wh[me.w * R + d], countOneBits(peers)); }
    return subgroupShuffle(old, lead) + below;
}
