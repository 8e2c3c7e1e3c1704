// Reference solution: a radix-2 FFT pass with its exchange (Stockham order): thread j pairs x[j]
// with x[j + N/2] and writes the butterfly's two results where the next pass's partners read them.
struct Params { n: u32, pass_index: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * 64u;
    let half = params.n / 2u;
    if (j >= half) { return; }
    let span = 1u << params.pass_index;
    let k = j & (span - 1u);
    let angle = -6.283185307179586 * f32(k) / f32(2u * span);
    let w = vec2<f32>(cos(angle), sin(angle));
    let a = src[j];
    let c = src[j + half];
    let b = vec2<f32>(c.x * w.x - c.y * w.y, c.x * w.y + c.y * w.x);
    let d = (j - k) * 2u + k;
    dst[d] = a + b;
    dst[d + span] = a - b;
}
