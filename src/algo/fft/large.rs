//! FFTs past one workgroup: the plan. A size that fits one workgroup's memory only in halves
//! (real parts, then imaginary parts) is one pass; larger sizes are the four-step decomposition
//! N = N1·N2 in two passes, each made of the radix kernel's sub-FFTs (src/algo/fft/large_gen.rs):
//!
//! 1. *columns*: the N2 FFTs of size N1 over x[col + N2·n1], each output k1 times W_N^(col·k1)
//!    (the twiddles, fused), written in place: Y[col + N2·k1];
//! 2. *rows*: the N1 FFTs of size N2 over Y[N2·k1 + n2] (contiguous), X[k1 + N1·k2] written
//!    through the transpose (natural order), or row by row (`--order raw`: output[N2·k1 + k2]).
//!
//! The permutations between passes are BMMC (bit-rotation) matrices fused into the loads and
//! stores: each pass reads and writes C neighbouring sub-FFTs at once, so every row it touches is
//! C·8 contiguous bytes. Real input (`--real`) is the packed form: N reals as N/2 complex values,
//! their FFT, then one unpacking pass; `--real-pair` unpacks a complex FFT into two spectra.

use super::large_gen::{Layout, PassConfig};
use super::*;
use crate::algo::bmmc::matrix::BitMatrix;

/// The largest sub-FFT one workgroup runs (in halves), and so the largest factor of a split.
pub const MAX_SUB: usize = 8192;
/// The largest FFT run as one pass by default (E = 32: 512 threads hold 2^14 values).
pub const MAX_SINGLE: usize = 16384;

/// What a large FFT runs: the complex FFT's passes, then (real modes) the unpacking pass.
#[derive(Clone, Debug)]
pub struct LargeConfig {
    /// The complex FFT's size (N, or N/2 for --real).
    pub fft_n: usize,
    /// (N1, N2): the column and row sub-sizes; (N, 1) for one pass.
    pub split: (usize, usize),
    pub passes: Vec<PassConfig>,
    pub unpack: Option<Mode>,
}

impl LargeConfig {
    /// JSON `"plan"`: the passes, in order, with what each transforms and the fused permutations.
    pub fn plan_json(&self, natural: bool) -> Value {
        let (n1, n2) = self.split;
        let ln = self.fft_n.trailing_zeros();
        let mut out = Vec::new();
        for (i, p) in self.passes.iter().enumerate() {
            let dim = if self.passes.len() == 1 {
                "whole"
            } else if i == 0 {
                "columns"
            } else {
                "rows"
            };
            out.push(json!({
                "pass": i,
                "kind": "fft",
                "dimension": dim,
                "sub_size": p.m,
                "count": self.fft_n / p.m,
                "stride": if i == 0 && self.passes.len() > 1 { n2 } else { 1 },
                "elements_per_invocation": p.e,
                "lanes": p.c,
                "sequential": p.s,
                "parts": p.parts,
                "workgroup_bytes": p.shared_bytes(),
                "input_layout": p.input,
                "output_layout": p.output,
            }));
            if p.twiddle {
                out.push(json!({
                    "pass": i,
                    "kind": "twiddle",
                    "fused": true,
                    "rule": format!("Y[col + {n2}·k1] ·= exp(∓2πi·col·k1/{})", self.fft_n),
                }));
            }
            if i + 1 == self.passes.len() && self.passes.len() > 1 && natural {
                // The store's index map (k1, k2) ↦ k1 + N1·k2 from the row layout N2·k1 + k2:
                // a rotation of the index bits by log2 N1.
                let l1 = n1.trailing_zeros() as usize;
                let ln = ln as usize;
                // Source bit b (k2 bits below log2 N2, k1 bits above) goes to bit b + log2 N1,
                // k1's bits to the bottom.
                let perm: Vec<usize> = (0..ln)
                    .map(|b| if b < ln - l1 { b + l1 } else { b - (ln - l1) })
                    .collect();
                let a = BitMatrix::from_bit_perm(&perm);
                out.push(json!({
                    "pass": i,
                    "kind": "permute",
                    "fused": true,
                    "rule": format!("transpose {n1}×{n2}: output[k1 + {n1}·k2] ← rows[{n2}·k1 + k2]"),
                    "matrix": a.row_strings(),
                }));
            }
        }
        if let Some(m) = self.unpack {
            out.push(json!({
                "pass": self.passes.len(),
                "kind": "unpack",
                "mode": if m == Mode::Real { "real" } else { "real-pair" },
            }));
        }
        Value::Array(out)
    }
}

/// The plan's layouts and shapes for a complex FFT of `n` points, `batch` of them.
pub fn configure(
    o: &Options,
    n: usize,
    batch: usize,
    natural: bool,
    inverse: bool,
    unpack: Option<Mode>,
    gpu_limits: &wgpu::Limits,
) -> Result<LargeConfig> {
    let max_bytes = gpu_limits.max_compute_workgroup_storage_size as usize;
    let max_threads = (gpu_limits.max_compute_invocations_per_workgroup as usize)
        .min(gpu_limits.max_compute_workgroup_size_x as usize);
    let ln = n.trailing_zeros();
    // The fewest exchange parts (1, 2, 4, 8; --exchange-parts) with which a pass fits.
    let fit_parts = |mk: &dyn Fn(usize) -> PassConfig| -> Option<PassConfig> {
        let list = match o.exchange_parts {
            Some(p) => vec![p],
            None => vec![1, 2, 4, 8],
        };
        list.into_iter().find_map(|parts| {
            let p = mk(parts);
            if p.threads() > max_threads || p.e > codegen::MAX_E || p.e > p.m {
                return None;
            }
            p.choose_pad(max_bytes)
        })
    };
    let single = || {
        let e = o
            .elements_per_invocation
            .unwrap_or(if n >= 8192 { 32 } else { 16 }.min(n / 2).max(2));
        let whole = Layout {
            a: 0,
            s_shift: 0,
            m_shift: 0,
        };
        fit_parts(&|parts| PassConfig {
            n,
            m: n,
            e,
            c: 1,
            // S = 4 in halves (2^13: 0.760 ms against 0.853 with S = 1); S = 1 in 4 or 8
            // parts (2^14: 0.977 ms; S = 2 spills registers: 2.06).
            s: o.sequential_ffts
                .unwrap_or(if batch >= 4096 && parts <= 2 { 4 } else { 1 }),
            parts,
            input: whole,
            output: whole,
            load_lanes: false,
            store_lanes: false,
            twiddle: false,
            inverse,
            pad_shift: None,
        })
    };
    let split = match o.split {
        Some(s) => Some(s),
        // One pass up to 2^14 where a whole FFT fits (in parts); else the most even split.
        None if n <= MAX_SINGLE && single().is_some() => None,
        None => Some(1usize << (ln / 2)),
    };
    let Some(n1) = split else {
        let p = single().ok_or_else(|| {
            Error::Limit(format!(
                "fft: a {n}-point FFT does not fit one workgroup of this adapter ({max_threads} invocations, {max_bytes} bytes of workgroup memory)"
            ))
        })?;
        return Ok(LargeConfig {
            fft_n: n,
            split: (n, 1),
            passes: vec![p],
            unpack,
        });
    };
    if !n1.is_power_of_two() || n1 < 2 || n1 >= n {
        return Err(Error::Input(format!(
            "fft: --split must be a power of two with 2 ≤ N1 < N = {n}; got {n1}"
        )));
    }
    let n2 = n / n1;
    if n1 > MAX_SUB || n2 > MAX_SUB {
        return Err(Error::Limit(format!(
            "fft: size {n} as {n1} × {n2} needs a sub-FFT above {MAX_SUB} points (two passes reach {}; three passes are not built)",
            MAX_SUB * MAX_SUB
        )));
    }
    let (l1, l2) = (n1.trailing_zeros(), n2.trailing_zeros());
    let cols_in = Layout {
        a: l2,
        s_shift: 0,
        m_shift: l2,
    };
    let rows_in = Layout {
        a: l1,
        s_shift: l2,
        m_shift: 0,
    };
    let rows_out = if natural {
        Layout {
            a: l1,
            s_shift: 0,
            m_shift: l1,
        }
    } else {
        rows_in
    };
    let total = |m: usize| batch * n / m;
    let pass = |m: usize,
                input: Layout,
                output: Layout,
                load_lanes: bool,
                store_lanes: bool,
                twiddle: bool|
     -> Result<PassConfig> {
        let e = o
            .elements_per_invocation
            .unwrap_or(if m >= 512 {
                16
            } else if m >= 16 {
                8
            } else {
                2
            })
            .min(m);
        // Lanes C, parts P and sequential sub-FFTs S where not given (measured on the H100 at 2^27
        // values): the most lanes up to 16 that fit in one or two parts (16 lanes = 128-byte rows
        // ran both passes of 2^18 at 1.02× the copy time; 2 lanes = 16-byte rows run at a third
        // of it), else 4 lanes in 4 parts (the 4096-point passes); S = 2 where the batch allows
        // and the parts are at most 2 (with 4 or 8 parts the reads' extra registers spill).
        let mk = |c: usize, parts: usize, s: usize| PassConfig {
            n,
            m,
            e,
            c,
            s,
            parts,
            input,
            output,
            load_lanes,
            store_lanes,
            twiddle,
            inverse,
            pad_shift: None,
        };
        let cap = total(m).next_power_of_two();
        let s_for = |parts: usize| {
            o.sequential_ffts
                .unwrap_or(if parts <= 2 && total(m) >= 2048 * 16 {
                    2
                } else {
                    1
                })
        };
        let best = match o.ffts_per_workgroup {
            Some(c) => fit_parts(&|parts| mk(c, parts, s_for(parts))),
            None => {
                let two: Vec<usize> = o.exchange_parts.map_or(vec![1, 2], |p| vec![p]);
                [16usize, 8, 4]
                    .iter()
                    .map(|&c| c.min(cap))
                    .find_map(|c| {
                        two.iter().find_map(|&parts| {
                            let p = mk(c, parts, s_for(parts));
                            if p.threads() > max_threads {
                                return None;
                            }
                            p.choose_pad(max_bytes)
                        })
                    })
                    .or_else(|| {
                        let mut c = 4.min(cap);
                        loop {
                            if let Some(p) = fit_parts(&|parts| mk(c, parts, s_for(parts))) {
                                break Some(p);
                            }
                            if c == 1 {
                                break None;
                            }
                            c /= 2;
                        }
                    })
            }
        };
        if !(2..=codegen::MAX_E).contains(&e) || !e.is_power_of_two() {
            return Err(Error::Input(format!(
                "fft: --elements-per-invocation for the {m}-point passes must be a power of two from 2 to {}; got {e}",
                codegen::MAX_E
            )));
        }
        best.ok_or_else(|| Error::Limit(format!("fft: a {m}-point pass with {} sub-FFTs per workgroup does not fit this adapter ({max_threads} invocations, {max_bytes} bytes of workgroup memory per workgroup)", o.ffts_per_workgroup.unwrap_or(1))))
    };
    let a = pass(n1, cols_in, cols_in, true, true, true)?;
    let b = pass(n2, rows_in, rows_out, false, natural, false)?;
    Ok(LargeConfig {
        fft_n: n,
        split: (n1, n2),
        passes: vec![a, b],
        unpack,
    })
}

/// The passes as a GPU plan: src → (tmp →) dst, then the unpacking pass into `out` for real
/// modes. With `trace`, every pass's output is read back.
pub fn plan_large(
    gpu: &Gpu,
    lc: &LargeConfig,
    batch: usize,
    src: &wgpu::Buffer,
    out: &wgpu::Buffer,
    natural: bool,
    trace: bool,
) -> Result<Plan> {
    let mut plan = Plan::default();
    let words = 2 * lc.fft_n * batch;
    let tmp = if lc.passes.len() > 1 {
        Some(gpu.storage_zeroed("fft large columns", words)?)
    } else {
        None
    };
    let fft_out = if lc.unpack.is_some() {
        Some(gpu.storage_zeroed("fft large packed", words)?)
    } else {
        None
    };
    let last = fft_out.as_ref().unwrap_or(out);
    for (i, p) in lc.passes.iter().enumerate() {
        let (from, to) = match (i, &tmp) {
            (0, Some(t)) => (src, t),
            (_, Some(t)) => (t, last),
            (_, None) => (src, last),
        };
        let pipe = gpu.pipeline("fft large pass", &large_gen::shader(p), "main")?;
        let tw = gpu.storage_init("fft twiddles", &twiddles(p.m, p.inverse))?;
        let total = batch * lc.fft_n / p.m;
        let groups = total.div_ceil(p.c * p.s);
        if groups as u64 > 32768 * 65535 {
            return Err(Error::Limit(format!(
                "fft: {groups} workgroups are above the dispatch limit"
            )));
        }
        let u = gpu.uniform("fft params", &[total as u32, groups as u32, 0, 0])?;
        let bg = gpu.bind(&pipe, &[from, to, &tw, &u])?;
        let label = format!(
            "fft {} {}: {} × {}-point FFTs, {} per workgroup × {} in turn, E = {}, {} exchange part{}{}{}",
            i,
            if lc.passes.len() == 1 {
                "whole"
            } else if i == 0 {
                "columns"
            } else {
                "rows"
            },
            total,
            p.m,
            p.c,
            p.s,
            p.e,
            p.parts,
            if p.parts > 1 { "s" } else { "" },
            if p.twiddle { ", twiddles fused" } else { "" },
            if i + 1 == lc.passes.len() && lc.passes.len() > 1 && natural {
                ", transposed store"
            } else {
                ""
            },
        );
        let pass = plan.push(label, &pipe, bg, grid(groups as u32));
        if trace {
            pass.capture = vec![Region::whole(to)];
        }
        plan.keep.extend([tw, u]);
    }
    if let (Some(mode), Some(z)) = (lc.unpack, &fft_out) {
        let n = lc.fft_n;
        let pipe = gpu.pipeline(
            "fft unpack",
            UNPACK,
            if mode == Mode::Real { "real" } else { "pair" },
        )?;
        // Real: pairs (k, N/2 - k) of the N/2-point FFT, k ≤ N/4; pair: (k, N - k), k ≤ N/2.
        let per = n / 2 + 1;
        let threads = per * batch;
        let groups = threads.div_ceil(256);
        let inv = lc.passes[0].inverse;
        let u = gpu.uniform(
            "fft unpack params",
            &[
                n as u32,
                batch as u32,
                grid(groups as u32)[0],
                u32::from(inv),
            ],
        )?;
        let bg = gpu.bind(&pipe, &[z, out, &u])?;
        let pass = plan.push(
            format!(
                "unpack {}",
                if mode == Mode::Real {
                    "real"
                } else {
                    "real pair"
                }
            ),
            &pipe,
            bg,
            grid(groups as u32),
        );
        if trace {
            pass.capture = vec![Region::whole(out)];
        }
        plan.keep.push(u);
    }
    plan.keep.extend(tmp);
    plan.keep.extend(fft_out);
    Ok(plan)
}

const UNPACK: &str = include_str!("../../../shaders/fft/unpack.wgsl");

/// The complex FFT's output order with `--order raw` past one pass: output[N2·k1 + k2] = X[k1 + N1·k2].
pub fn to_rows(x: &[C64], split: (usize, usize)) -> Vec<C64> {
    let (n1, n2) = split;
    if n2 == 1 {
        return x.to_vec();
    }
    let mut out = vec![C64::new(0.0, 0.0); x.len()];
    for k1 in 0..n1 {
        for k2 in 0..n2 {
            out[n2 * k1 + k2] = x[k1 + n1 * k2];
        }
    }
    out
}

/// The columns pass's output in f64 (the trace's model): Y[col + N2·k1] = W_N^(col·k1)·FFT_N1(x[col + N2·n1])[k1].
pub fn columns_model(x: &[C64], split: (usize, usize), inverse: bool) -> Vec<C64> {
    let (n1, n2) = split;
    let n = n1 * n2;
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut y = vec![C64::new(0.0, 0.0); n];
    for col in 0..n2 {
        let c: Vec<C64> = (0..n1).map(|i| x[col + n2 * i]).collect();
        let f = model::dft(&c, inverse);
        for (k1, v) in f.into_iter().enumerate() {
            let a = sign * std::f64::consts::TAU * ((col * k1) % n) as f64 / n as f64;
            y[col + n2 * k1] = v * C64::new(a.cos(), a.sin());
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H100's limits as wgpu reports them (48 KiB of workgroup memory, 1024 invocations).
    fn h100() -> wgpu::Limits {
        wgpu::Limits {
            max_compute_workgroup_storage_size: 49152,
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            ..Default::default()
        }
    }

    fn shape(n: usize) -> Vec<(usize, usize, usize, usize)> {
        let lc = configure(
            &Options::default(),
            n,
            (1 << 27) / n,
            true,
            false,
            None,
            &h100(),
        )
        .unwrap();
        lc.passes.iter().map(|p| (p.m, p.c, p.parts, p.s)).collect()
    }

    /// The defaults the H100 sweeps chose (docs/PERFORMANCE.md): one pass to 2^14 (S = 4 in two
    /// parts, S = 1 in four: S > 1 spills there), then 16/8/4 lanes in at most two parts with S = 2,
    /// and 4 lanes in four parts only for the 4096-point passes.
    #[test]
    fn h100_defaults() {
        assert_eq!(shape(8192), [(8192, 1, 2, 4)]);
        assert_eq!(shape(16384), [(16384, 1, 4, 1)]);
        assert_eq!(shape(1 << 18), [(512, 16, 2, 2), (512, 16, 2, 2)]);
        assert_eq!(shape(1 << 22), [(2048, 4, 2, 2), (2048, 4, 2, 2)]);
        assert_eq!(shape(1 << 24), [(4096, 4, 4, 1), (4096, 4, 4, 1)]);
        for p in configure(
            &Options::default(),
            1 << 20,
            128,
            true,
            false,
            None,
            &h100(),
        )
        .unwrap()
        .passes
        {
            assert!(p.c * 8 >= 64 && p.parts <= 2, "{p:?}");
        }
    }
}
