//! The sines and cosines the FFT's kernels compute themselves (the large plan's fused twiddles,
//! the real and pair unpacks; the other kernels read twiddle tables made on the CPU). WGSL's `sin`
//! and `cos` are as accurate as the device makes them: Vulkan asks only 2^-11 absolute on
//! [-π, π], and SwiftShader (Chrome's software WebGPU) gives about that — a 4096-point large FFT
//! came out 5.6e-4 off. On adapters not known to be accurate every `vec2<f32>(cos(a), sin(a))`
//! becomes `cis_acc(a)`: a reduction to [-π/4, π/4] and Cephes' single-precision polynomials,
//! a few ulp on any device. NVIDIA's and llvmpipe's builtins are accurate (the H100 figures are
//! the builtins').

use crate::gpu::Gpu;

/// `(cos a, sin a)` for any finite `a` of an FFT's angles (|a| ≤ 2π).
pub const CIS_ACC: &str = "
// cos and sin to a few ulp on any device (WGSL's builtins may be 2^-11 off): a, less the nearest
// multiple q of pi/2 (pi/2 in two parts), by Cephes' polynomials on [-pi/4, pi/4], turned by q.
fn cis_acc(a: f32) -> vec2<f32> {
    let q = round(a * 0.636619772367581);
    let x = (a - q * 1.57079637050628662) + q * 4.37113900018624e-8;
    let z = x * x;
    let s = x + x * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
    let c = 1.0 - 0.5 * z
        + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
    let k = i32(q) & 3;
    let cs = select(vec2<f32>(c, s), vec2<f32>(-s, c), (k & 1) == 1);
    return select(cs, -cs, k >= 2);
}
";

/// Whether this adapter's `sin` and `cos` are accurate to about f32's precision.
pub fn accurate_builtins(gpu: &Gpu) -> bool {
    const NVIDIA: u32 = 0x10de;
    gpu.info.vendor == NVIDIA
        || (gpu.info.device_type == wgpu::DeviceType::Cpu
            && gpu.info.name.to_lowercase().contains("llvmpipe"))
}

/// `wgsl` for this adapter: unchanged where its builtins are accurate, else with [`accurate`].
pub fn for_adapter(gpu: &Gpu, wgsl: &str) -> String {
    if accurate_builtins(gpu) {
        wgsl.to_string()
    } else {
        accurate(wgsl)
    }
}

/// `wgsl` with every `vec2<f32>(cos(A), sin(A))` computed by `cis_acc(A)` (appended).
pub fn accurate(wgsl: &str) -> String {
    const HEAD: &str = "vec2<f32>(cos(";
    let mut out = String::with_capacity(wgsl.len() + CIS_ACC.len());
    let mut rest = wgsl;
    let mut replaced = false;
    while let Some(at) = rest.find(HEAD) {
        let after = &rest[at + HEAD.len()..];
        // A, up to the parenthesis that closes cos(.
        let mut depth = 0usize;
        let close = after.char_indices().find_map(|(i, ch)| match ch {
            '(' => {
                depth += 1;
                None
            }
            ')' if depth == 0 => Some(i),
            ')' => {
                depth -= 1;
                None
            }
            _ => None,
        });
        let Some(close) = close else { break };
        let arg = &after[..close];
        let tail = format!("), sin({arg}))");
        if after[close..].starts_with(&tail) {
            out.push_str(&rest[..at]);
            out.push_str(&format!("cis_acc({arg})"));
            rest = &after[close + tail.len()..];
            replaced = true;
        } else {
            out.push_str(&rest[..at + HEAD.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    if replaced {
        out.push_str(CIS_ACC);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cos_sin_pair_becomes_cis_acc() {
        let src = "let w = vec2<f32>(cos(f32(q) * 2.0), sin(f32(q) * 2.0));\n\
                   let v = vec2<f32>(cos(a), sin(b));\nlet u = vec2<f32>(cos(ang), sin(ang));";
        let out = accurate(src);
        assert!(out.contains("let w = cis_acc(f32(q) * 2.0);"), "{out}");
        assert!(out.contains("let u = cis_acc(ang);"), "{out}");
        // Not a pair of one angle: left as it is.
        assert!(out.contains("vec2<f32>(cos(a), sin(b))"), "{out}");
        assert_eq!(out.matches("fn cis_acc").count(), 1);
        assert_eq!(accurate("no trig"), "no trig");
    }

    #[test]
    fn the_polynomials_are_accurate_in_f32() {
        // The WGSL of cis_acc, step by step in f32 (what a device without fused multiply-adds
        // computes): within 3e-7 of f64's over the FFT's angles.
        let cis = |a: f32| {
            let q = (a * std::f32::consts::FRAC_2_PI).round_ties_even();
            let x = (a - q * 1.570_796_4_f32) + q * 4.371_139e-8_f32;
            let z = x * x;
            let s = x + x * z * (-1.666_665_5e-1 + z * (8.332_161e-3 + z * -1.951_529_6e-4));
            let c = 1.0 - 0.5 * z
                + z * z * (4.166_664_6e-2 + z * (-1.388_731_6e-3 + z * 2.443_315_7e-5));
            // The WGSL's selects.
            let k = (q as i32) & 3;
            let (c, s) = if k & 1 == 1 { (-s, c) } else { (c, s) };
            if k >= 2 { (-c, -s) } else { (c, s) }
        };
        let mut worst = 0f64;
        for k in -8192..=8192 {
            let a = k as f32 * (std::f32::consts::PI / 4096.0);
            let (c, s) = cis(a);
            let a = a as f64;
            worst = worst
                .max((c as f64 - a.cos()).abs())
                .max((s as f64 - a.sin()).abs());
        }
        assert!(worst < 3e-7, "worst {worst:e}");
    }
}
