// The tile kernels' shared interface (batcher.wgsl and the generated register kernel,
// src/algo/oddeven/regs.rs): parameters, bindings and the network-position -> array-index map.

struct Params {
    n: u32, seg_len: u32, lseg_pad: u32, shift: u32,
    lk_lo: u32, lres: u32, rows: u32, halo: u32,
    lp_lo: u32, lk_first: u32, nstages: u32, trace: u32,
    stage_id: u32, groups: u32, tiles: u32, _pad: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;

const MISSING_LOW: u32 = 0xfffffffeu;
const MISSING_HIGH: u32 = 0xffffffffu;

// The array index of network position y (an i32 that may be negative), or MISSING_LOW (before the
// start) / MISSING_HIGH (past the end of the array or of its segment).
fn index_of(y: i32) -> u32 {
    let pos = y - i32(params.shift);
    if (pos < 0) { return MISSING_LOW; }
    let s = u32(pos) >> params.lseg_pad;
    let o = u32(pos) & ((1u << params.lseg_pad) - 1u);
    let i = s * params.seg_len + o;
    if (o >= params.seg_len || i >= params.n) { return MISSING_HIGH; }
    return i;
}

