// Odd-even transposition sort in ONE workgroup per segment (seed 002), keys in workgroup memory.
// Phase ph compares the pairs (a, a+1) with a = ph mod 2 (mod 2): even pairs (0,1),(2,3),... first,
// then odd pairs (1,2),(3,4),... . Owner i (the seed's thread i) holds pair 2i (even) and pair 2i+1
// (odd); when there are more owners than invocations, invocation t plays owners t, t+WG, t+2WG, ...
// Every barrier is reached by all invocations: the loops that depend on the invocation id contain no
// barrier, and the phase loop runs L times in every invocation (unlike the seed's `continue`).
// Tracing (params.trace != 0, a uniform value): after every phase the workgroup writes the array
// and, for every pair compared, (phase << 1) | swapped.
// `// @step NAME` … `// @end` mark what the app highlights for a stage (src/ui/code.rs).
// Unrolled by U = {{UNROLL}}: one loop iteration plays owners i, i + WG, …, i + (U-1)·WG (straight-line
// calls, generated in Rust), so a phase costs ⌈owners / (U·WG)⌉ loop iterations. Some drivers cap the
// loop iterations of one invocation (lavapipe: 65535 over all loops of a shader, then it silently
// stops looping); the runner checks the count before dispatching.

struct Params { n: u32, seg_len: u32, trace: u32, nseg: u32 }

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read_write> tr_data: array<u32>;
@group(0) @binding(3) var<storage, read_write> tr_swap: array<u32>;

const WG: u32 = {{WG}}u;
const U: u32 = {{UNROLL}}u;
var<workgroup> sm: array<u32, {{TILE}}>;

// Owner i's pair of phase ph (a no-op past the last owner or the segment's end).
fn owner(i: u32, ph: u32, L: u32, owners: u32, base: u32, n: u32) {
    let a = 2u * i + (ph & 1u);           // pair 2i (even phase) or pair 2i+1 (odd phase)
    if (i < owners && a + 1u < L) {
        let x = sm[a];
        let y = sm[a + 1u];
        sm[a] = min(x, y);
        sm[a + 1u] = max(x, y);
        if (params.trace != 0u) {
            tr_swap[ph * n + base + a] = (ph << 1u) | u32(x > y);
        }
    }
}

fn trace_word(x: u32, ph: u32, L: u32, base: u32, n: u32) {
    if (x < L) {
        tr_data[ph * n + base + x] = from_key(sm[x]);
    }
}

@compute @workgroup_size({{WG}})
fn transposition(@builtin(local_invocation_index) lid: u32,
                 @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let seg = wid.x + wid.y * nwg.x;      // uniform across the workgroup
    if (seg >= params.nseg) { return; }   // whole workgroups only: no barrier is skipped by a few
    let L = params.seg_len;
    let base = seg * L;
    let n = params.n;
    // @step load
    for (var x = lid; x < L; x += WG) {
        sm[x] = to_key(data[base + x]);
    }
    workgroupBarrier();
    // @end
    let owners = (L + 1u) / 2u;
    for (var ph = 0u; ph < L; ph++) {
        // @step phase
        for (var i = lid; i < owners; i += U * WG) {
{{OWNERS}}
        }
        workgroupBarrier();
        if (params.trace != 0u) {
            for (var x = lid; x < L; x += U * WG) {
{{TRACE}}
            }
            workgroupBarrier();
        }
        // @end
    }
    // @step store
    for (var x = lid; x < L; x += WG) {
        data[base + x] = from_key(sm[x]);
    }
    // @end
}
