// Unpacking pass of the large real FFTs (src/algo/fft/large.rs), one thread per pair (k, P - k).
// `real`: z is the N/2-point FFT of N reals packed as z[n] = x[2n] + i·x[2n+1]; with
// A = (Z[k] + conj Z[h-k]) / 2, B = (Z[k] - conj Z[h-k]) / 2i (h = N/2) the spectrum is
// X[k] = A + w^k·B, w = exp(-+2 pi i / N); out[0] = X[0] + i·X[N/2] (both real), out[k] = X[k].
// `pair`: z is the N-point FFT of x + iy; x's bins (Z[k] + conj Z[N-k]) / 2 and y's
// (Z[k] - conj Z[N-k]) / 2i, k = 0 … N/2, each spectrum N/2 + 1 values.
struct Params { p: u32, batch: u32, groups_x: u32, inverse: u32 }
@group(0) @binding(0) var<storage, read> z: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: Params;

fn conj(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x, -a.y); }
// a / 2i
fn div2i(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(0.5 * a.y, -0.5 * a.x); }
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

@compute @workgroup_size(256)
fn real(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let wg = wid.x + wid.y * params.groups_x;
    let h = params.p;                 // the packed FFT's size N/2
    let per = h / 2u + 1u;
    let i = wg * 256u + l;
    if (i >= per * params.batch) { return; }
    let b = i / per;
    let k = i % per;
    let base = b * h;
    let zk = z[base + k];
    if (k == 0u) {
        dst[base] = vec2<f32>(zk.x + zk.y, zk.x - zk.y);
        return;
    }
    let p = h - k;
    let zp = z[base + p];
    let a = 0.5 * (zk + conj(zp));
    let bb = div2i(zk - conj(zp));
    // w^k = exp(-+2 pi i k / N) with N = 2h, the angle in (-pi/2, 0] or [0, pi/2).
    let s = select(-1.0, 1.0, params.inverse != 0u);
    let ang = s * 3.14159265358979 * f32(k) / f32(h);
    let wk = vec2<f32>(cos(ang), sin(ang));
    dst[base + k] = a + cmul(wk, bb);
    // X[h-k] = conj A + w^(h-k)·conj B, w^(h-k) = -conj(w^k).
    dst[base + p] = conj(a) - cmul(conj(wk), conj(bb));
}

@compute @workgroup_size(256)
fn pair(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let wg = wid.x + wid.y * params.groups_x;
    let n = params.p;
    let per = n / 2u + 1u;
    let i = wg * 256u + l;
    if (i >= per * params.batch) { return; }
    let b = i / per;
    let k = i % per;
    let zk = z[b * n + k];
    let q = (n - k) & (n - 1u);
    let zp = z[b * n + q];
    dst[b * 2u * per + k] = 0.5 * (zk + conj(zp));
    dst[b * 2u * per + per + k] = div2i(zk - conj(zp));
}
