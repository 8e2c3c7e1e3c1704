//! Checks against the CPU model: exact for integers, within a bound for f32 sums.

use super::*;

/// The f32 check: element i within (d_i + 2)·2⁻²⁴·Σ|x| (d_i: the variant's summation-tree height
/// for i) of the f64 sum, plus d_i·2⁻¹²⁶ for flushed subnormals; non-finite where the exact sum
/// is non-finite or beyond f32's range.
pub struct F32Check {
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    pub mismatch: Option<String>,
}

pub fn check_f32(
    gpu: &[u32],
    exact: &[f64],
    abs: &[f64],
    depth: &dyn Fn(usize) -> usize,
) -> F32Check {
    let u = f64::from(f32::EPSILON) / 2.0;
    let tiny = f64::from(f32::MIN_POSITIVE);
    let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
    let mut bad: Option<(usize, String)> = None;
    let mut count = 0usize;
    for i in 0..gpu.len().min(exact.len()) {
        let g = f32::from_bits(gpu[i]) as f64;
        let e = exact[i];
        let ok = if !e.is_finite() || e.abs() > f64::from(f32::MAX) {
            !g.is_finite() || e.is_finite()
        } else if !g.is_finite() {
            false
        } else {
            let err = (g - e).abs();
            max_abs = max_abs.max(err);
            max_rel = max_rel.max(err / e.abs().max(tiny));
            let d = depth(i) as f64 + 2.0;
            err <= 1.01 * d * u * abs[i] + d * tiny
        };
        if !ok {
            count += 1;
            if bad.is_none() {
                bad = Some((
                    i,
                    format!("GPU {} vs exact {e}", fmt_bits(DType::F32, gpu[i])),
                ));
            }
        }
    }
    F32Check {
        max_abs_error: max_abs,
        max_rel_error: max_rel,
        mismatch: bad.map(|(i, m)| {
            format!("{count} element(s) outside the f32 tolerance; first at index {i}: {m}")
        }),
    }
}

/// A stage check: integers bit for bit; f32 within 2(d+2)·2⁻²⁴·Σ|x| of the model's f32 stage.
pub(super) fn stage_mismatch(
    dtype: DType,
    g: &[u32],
    c: &[u32],
    scale: f64,
    depth: usize,
) -> Option<String> {
    if dtype != DType::F32 || g.len() != c.len() {
        return first_mismatch(dtype, g, c);
    }
    let tol = 2.0 * (depth as f64 + 2.0) * f64::from(f32::EPSILON) * scale
        + depth as f64 * f64::from(f32::MIN_POSITIVE);
    let bad = g.iter().zip(c).position(|(&a, &b)| {
        let (x, y) = (f32::from_bits(a) as f64, f32::from_bits(b) as f64);
        if x.is_finite() && y.is_finite() {
            (x - y).abs() > tol
        } else {
            x.is_finite() != y.is_finite() || (x.is_nan() != y.is_nan())
        }
    })?;
    Some(format!(
        "index {bad}: GPU {} vs CPU {} (f32 tolerance {tol:e})",
        fmt_bits(dtype, g[bad]),
        fmt_bits(dtype, c[bad])
    ))
}

pub(super) fn bits_abs(dtype: DType, b: u32) -> f64 {
    match dtype {
        DType::F32 => {
            let v = f32::from_bits(b) as f64;
            if v.is_finite() { v.abs() } else { 0.0 }
        }
        _ => 0.0,
    }
}
