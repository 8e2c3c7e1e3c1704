// Shared by `decoupled` and `reduce-then-scan` (prepended to their modules). A tile is
// TILE_V = WG * PER vec4 = 4 * WG * PER elements. Loads are coalesced (thread lid reads vec4
// lid, lid + WG, ...) into workgroup memory; every thread then owns PER consecutive vec4
// (4 * PER consecutive elements), sums them serially, and a Kogge-Stone scan over the WG thread
// totals in workgroup memory gives each thread its offset. No subgroup operations: correct for any
// subgroup size. The same functions compute a tile's aggregate for its owner and for a fallback,
// so both produce the same bits (f32 included).
// Workgroup memory is padded by one vec4 after every PER (sidx): a thread's chunk then starts
// (PER + 1) vec4 after its neighbour's, so the chunk reads and writes are free of bank conflicts.
// Needs: `src: array<vec4<u32>>`, `params.nv` (vec4 count) declared by the module.

alias T = {{T}};
const WG: u32 = {{WG}}u;
const PER: u32 = {{PER}}u;
const TILE_V: u32 = {{WG}}u * {{PER}}u;
const EXCLUSIVE: bool = {{EXCL}};

var<workgroup> s_data: array<vec4<u32>, {{WG}}u * ({{PER}}u + 1u)>;

fn sidx(i: u32) -> u32 {
    return i + i / PER;
}
var<workgroup> s_tot: array<T, WG>;

// Coalesced load of tile `tile` into s_data (zeros past the end: the identity).
fn load_tile(tile: u32, lid: u32) {
    let base = tile * TILE_V;
    for (var j = 0u; j < PER; j++) {
        let i = base + j * WG + lid;
        var v = vec4<u32>(0u);
        if (i < params.nv) { v = src[i]; }
        s_data[sidx(j * WG + lid)] = v;
    }
    workgroupBarrier();
}

// This thread's PER consecutive vec4 from the tile in workgroup memory.
fn chunk(lid: u32) -> array<vec4<u32>, PER> {
    var r: array<vec4<u32>, PER>;
    for (var j = 0u; j < PER; j++) { r[j] = s_data[sidx(lid * PER + j)]; }
    return r;
}

// The serial sum of a thread's chunk, in element order (owner and fallback alike: same bits).
fn chunk_sum(r: ptr<function, array<vec4<u32>, PER>>) -> T {
    var acc = T(0);
    for (var j = 0u; j < PER; j++) {
        let v = bitcast<vec4<T>>((*r)[j]);
        acc = acc + v.x;
        acc = acc + v.y;
        acc = acc + v.z;
        acc = acc + v.w;
    }
    return acc;
}

// Kogge-Stone inclusive scan of the thread totals; afterwards s_tot holds the scan and
// s_tot[WG - 1] the tile's aggregate (every thread may read it).
fn scan_totals(lid: u32, x: T) {
    s_tot[lid] = x;
    workgroupBarrier();
    for (var o = 1u; o < WG; o = o << 1u) {
        var y = s_tot[lid];
        if (lid >= o) { y = s_tot[lid - o] + y; }
        workgroupBarrier();
        s_tot[lid] = y;
        workgroupBarrier();
    }
}

// Scan this thread's registers starting from `start` (inclusive or exclusive) and write them to
// its chunk of s_data; then a coalesced store of the tile.
fn store_scanned(tile: u32, lid: u32, r: ptr<function, array<vec4<u32>, PER>>, start: T) {
    var run = start;
    for (var j = 0u; j < PER; j++) {
        let x = bitcast<vec4<T>>((*r)[j]);
        var o: vec4<T>;
        if (EXCLUSIVE) {
            o.x = run; run = run + x.x;
            o.y = run; run = run + x.y;
            o.z = run; run = run + x.z;
            o.w = run; run = run + x.w;
        } else {
            run = run + x.x; o.x = run;
            run = run + x.y; o.y = run;
            run = run + x.z; o.z = run;
            run = run + x.w; o.w = run;
        }
        s_data[sidx(lid * PER + j)] = bitcast<vec4<u32>>(o);
    }
    workgroupBarrier();
    let base = tile * TILE_V;
    for (var j = 0u; j < PER; j++) {
        let i = base + j * WG + lid;
        if (i < params.nv) { dst[i] = s_data[sidx(j * WG + lid)]; }
    }
}
