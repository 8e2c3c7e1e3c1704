// A binding Stagewise does not fill.
struct Params { n: u32, log_n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(9) var<storage, read_write> mystery: array<f32>;
@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    dst[lid.x] = src[lid.x];
    mystery[0] = 1.0;
}
