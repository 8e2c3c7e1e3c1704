// Nabla-style workgroup FFT (seed 003). One workgroup per FFT of N = W * E complex points:
// W threads ("invocations"), each holding E elements in registers. Thread t starts with the
// elements at t + j*W (slot j). Radix-2 decimation-in-frequency butterflies on lo/hi pairs, the
// stride halving every step:
//   stride s >= W : both elements of a pair are in the same thread (slots j and j + s/W);
//   stride s <  W : before the butterfly the thread exchanges with thread t ^ s: the lower thread
//                   (t & s == 0) trades its hi (slot 2m+1) for the higher thread's lo (slot 2m),
//                   through workgroup memory.
// Every thread writes its results back to the indices it read (raw "Nabla" order), or through the
// seed's F(n) = bitreverse(e^-1(n)) to the DFT's natural order.
//
// Specialised by text substitution: N, E, W, LOGN, LOGE, MODE (0 complex, 1 real-only, 2 real
// pair), NATURAL, SH (workgroup array length), the source element type, and the trace code.

const N: u32 = {{N}}u;
const E: u32 = {{E}}u;
const W: u32 = {{W}}u;
const LOGN: u32 = {{LOGN}}u;
const LOGE: u32 = {{LOGE}}u;
const HALF_E: u32 = {{HALF_E}}u;
const MODE: u32 = {{MODE}}u;
const NATURAL: bool = {{NATURAL}};

struct Params { batch: u32, _a: u32, _b: u32, _c: u32 }

@group(0) @binding(0) var<storage, read> src: array<{{SRC_T}}>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
// w[k] = exp(-+2 pi i k / N), k < N/2 (computed in f64 on the CPU; conjugated for the inverse).
@group(0) @binding(2) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> params: Params;
{{TRACE_DECL}}

var<workgroup> sre: array<f32, {{SH}}>;
var<workgroup> sim: array<f32, {{SH}}>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// The lowest `bits` bits of x reversed.
fn rev(x: u32, bits: u32) -> u32 {
    if (bits == 0u) { return 0u; }
    return reverseBits(x) >> (32u - bits);
}

// e: circular right shift by one of the lower LOGN - LOGE + 1 bits; e_inv: the left shift.
fn e_fwd(n: u32) -> u32 {
    let l = LOGN - LOGE + 1u;
    let mask = (1u << l) - 1u;
    let low = n & mask;
    return (n & ~mask) | (low >> 1u) | ((low & 1u) << (l - 1u));
}

fn e_inv(n: u32) -> u32 {
    let l = LOGN - LOGE + 1u;
    let mask = (1u << l) - 1u;
    let low = n & mask;
    return (n & ~mask) | ((low << 1u) & mask) | (low >> (l - 1u));
}

// output[x] = DFT[F(x)] in raw order; DFT[k] = output[F_inv(k)].
fn F(x: u32) -> u32 { return rev(e_inv(x), LOGN); }
fn F_inv(k: u32) -> u32 { return e_fwd(rev(k, LOGN)); }

fn twiddle(k: u32, s: u32) -> vec2<f32> {
    // exp(-+2 pi i k / (2 s)) = w[k * N / (2 s)]
    return tw[k * (N / (2u * s))];
}

@compute @workgroup_size({{W}})
fn main(@builtin(local_invocation_index) t: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = wid.x + wid.y * nwg.x;          // which FFT of the batch (= the linear workgroup id)
    if (b >= params.batch) { return; }
    var v: array<vec2<f32>, E>;
    var pos: array<u32, E>;                 // logical position of every slot (for the trace)
    for (var j = 0u; j < E; j++) {
        let x = t + j * W;
        {{LOAD}}
        pos[j] = x;
    }
    var stage = 0u;
    // Stage 0: the input, paired for the first butterfly (stride N/2 = slots j and j + E/2).
    for (var j = 0u; j < E; j++) {
        {{TRACE}}(stage, pos[j], v[j], t, (j & HALF_E) == 0u);
    }
    stage++;
    // `// @section NAME` lines mark what the app highlights for a stage (src/ui/code.rs); a section
    // runs to the next marker or to the end of its block.
    // Local phase: strides N/2 .. W, pairs inside the thread (h = stride / W, in slots).
    for (var h = HALF_E; h >= 1u; h = h / 2u) {
        let s = h * W;
        // @section regroup
        if (h < HALF_E) {
            // Regroup: no data moves, the thread pairs its slots at the new stride.
            for (var j = 0u; j < E; j++) {
                {{TRACE}}(stage, pos[j], v[j], t, (j & h) == 0u);
            }
            stage++;
        }
        // @section local-butterfly
        for (var q = 0u; q < HALF_E; q++) {
            let j = ((q & ~(h - 1u)) << 1u) | (q & (h - 1u));
            let k = j + h;
            let p = t + j * W;              // logical position of the lo element
            let a = v[j];
            let c = v[k];
            v[j] = a + c;
            v[k] = cmul(a - c, twiddle(p & (s - 1u), s));
        }
        for (var j = 0u; j < E; j++) {
            {{TRACE}}(stage, pos[j], v[j], t, (j & h) == 0u);
        }
        stage++;
    }
    // Exchange phase: strides W/2 .. 1; pairs are slots (2m, 2m+1).
    for (var s = W / 2u; s >= 1u; s = s / 2u) {
        // @section exchange
        let partner = t ^ s;
        let upper = (t & s) != 0u;
        for (var m = 0u; m < HALF_E; m++) {
            let out_slot = select(2u * m + 1u, 2u * m, upper);
            sre[m * W + t] = v[out_slot].x;
            sim[m * W + t] = v[out_slot].y;
            {{TRACE_POS_OUT}}
        }
        workgroupBarrier();
        for (var m = 0u; m < HALF_E; m++) {
            let in_slot = select(2u * m + 1u, 2u * m, upper);
            v[in_slot] = vec2<f32>(sre[m * W + partner], sim[m * W + partner]);
            {{TRACE_POS_IN}}
        }
        workgroupBarrier();
        for (var j = 0u; j < E; j++) {
            {{TRACE}}(stage, pos[j], v[j], t, (j & 1u) == 0u);
        }
        stage++;
        // @section exchange-butterfly
        // The lo of every pair sits at 2*W*m + (t with a 0 inserted at bit log2(s)); its offset
        // inside the butterfly block is t & (s - 1), the same for every pair of the thread.
        let w = twiddle(t & (s - 1u), s);
        for (var m = 0u; m < HALF_E; m++) {
            let a = v[2u * m];
            let c = v[2u * m + 1u];
            v[2u * m] = a + c;
            v[2u * m + 1u] = cmul(a - c, w);
        }
        for (var j = 0u; j < E; j++) {
            {{TRACE}}(stage, pos[j], v[j], t, (j & 1u) == 0u);
        }
        stage++;
    }
    // @section store
    {{STORE}}
}
