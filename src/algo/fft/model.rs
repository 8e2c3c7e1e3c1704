//! The CPU model of the Nabla-style workgroup FFT (seed 003): the index maps (e, g, F), the
//! ownership schedule (which thread holds which logical position after every step, and whether it
//! is that thread's lo or hi), the butterfly values stage by stage (f64), and the references
//! (rustfft) for every output mode.

use rustfft::FftPlanner;
use rustfft::num_complex::Complex64;

pub type C64 = Complex64;

/// The lowest `bits` bits of `x` reversed.
pub fn bitrev(x: usize, bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    x.reverse_bits() >> (usize::BITS - bits)
}

/// Number of bits rotated by `e`: N − E + 1 (N = log2 size, E = log2 elements per invocation).
fn rot_bits(log_n: u32, log_e: u32) -> u32 {
    log_n - log_e + 1
}

/// e: circular right shift by one of the lower N − E + 1 bits of `n` (the seed's enumeration).
pub fn e_map(n: usize, log_n: u32, log_e: u32) -> usize {
    let l = rot_bits(log_n, log_e);
    let mask = (1usize << l) - 1;
    let low = n & mask;
    (n & !mask) | (low >> 1) | ((low & 1) << (l - 1))
}

/// e⁻¹: circular left shift by one of the lower N − E + 1 bits.
pub fn e_inv(n: usize, log_n: u32, log_e: u32) -> usize {
    let l = rot_bits(log_n, log_e);
    let mask = (1usize << l) - 1;
    let low = n & mask;
    (n & !mask) | ((low << 1) & mask) | (low >> (l - 1))
}

/// g: circular left shift by one of the higher N − E + 1 bits (conjugate to e⁻¹ via bitreverse).
pub fn g_map(n: usize, log_n: u32, log_e: u32) -> usize {
    let l = rot_bits(log_n, log_e);
    let shift = log_n - l;
    let hi = n >> shift;
    let mask = (1usize << l) - 1;
    let rot = ((hi << 1) & mask) | (hi >> (l - 1));
    (rot << shift) | (n & ((1usize << shift) - 1))
}

/// F(x) = bitreverse(e⁻¹(x)): output[x] = DFT[F(x)] in raw (Nabla) order.
pub fn f_map(x: usize, log_n: u32, log_e: u32) -> usize {
    bitrev(e_inv(x, log_n, log_e), log_n)
}

/// F⁻¹(k) = e(bitreverse(k)): DFT[k] = output[F⁻¹(k)].
pub fn f_inv(k: usize, log_n: u32, log_e: u32) -> usize {
    e_map(bitrev(k, log_n), log_n, log_e)
}

/// What a step of the schedule is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Input,
    Butterfly,
    /// Stride ≥ WorkgroupSize: no data moves, the thread pairs its own slots at the new stride.
    Regroup,
    /// Stride < WorkgroupSize: the lower thread trades its hi for the higher thread's lo.
    Exchange,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Input => "input",
            StepKind::Butterfly => "butterfly",
            StepKind::Regroup => "regroup",
            StepKind::Exchange => "exchange",
        }
    }
}

/// One column of the ownership diagram: indexed by logical position (the row of the seed's
/// diagrams, i.e. the index in the radix-2 decimation-in-frequency flow graph).
#[derive(Clone, Debug)]
pub struct Step {
    pub kind: StepKind,
    /// The stride of the pairs at this step (distance between a lo and its hi).
    pub stride: usize,
    pub owner: Vec<u32>,
    pub lo: Vec<bool>,
    /// The slot (local element index) of the owner that holds the position.
    pub slot: Vec<u32>,
}

/// Simulate the schedule thread by thread: slots, exchanges by xor, lo/hi by slot pairing.
pub fn schedule(n: usize, e: usize) -> Vec<Step> {
    let w = n / e;
    let half = e / 2;
    // pos[t][j]: logical position in thread t's slot j.
    let mut pos: Vec<Vec<usize>> = (0..w)
        .map(|t| (0..e).map(|j| t + j * w).collect())
        .collect();
    let mut steps = Vec::new();
    let snap = |pos: &Vec<Vec<usize>>, kind, stride, is_lo: &dyn Fn(usize, usize) -> bool| {
        let mut owner = vec![u32::MAX; n];
        let mut lo = vec![false; n];
        let mut slot = vec![u32::MAX; n];
        for (t, slots) in pos.iter().enumerate() {
            for (j, &p) in slots.iter().enumerate() {
                owner[p] = t as u32;
                lo[p] = is_lo(t, j);
                slot[p] = j as u32;
            }
        }
        Step {
            kind,
            stride,
            owner,
            lo,
            slot,
        }
    };
    steps.push(snap(&pos, StepKind::Input, n / 2, &|_, j| j & half == 0));
    let mut h = half;
    while h >= 1 {
        if h < half {
            steps.push(snap(&pos, StepKind::Regroup, h * w, &|_, j| j & h == 0));
        }
        steps.push(snap(&pos, StepKind::Butterfly, h * w, &|_, j| j & h == 0));
        h /= 2;
    }
    let mut s = w / 2;
    while s >= 1 {
        let old = pos.clone();
        for (t, slots) in pos.iter_mut().enumerate() {
            let partner = t ^ s;
            let upper = t & s != 0;
            for m in 0..half {
                let (give, take) = if upper {
                    (2 * m, 2 * m + 1)
                } else {
                    (2 * m + 1, 2 * m)
                };
                // I receive into `give` the partner's slot of the opposite role.
                slots[give] = old[partner][take];
            }
        }
        steps.push(snap(&pos, StepKind::Exchange, s, &|_, j| j % 2 == 0));
        steps.push(snap(&pos, StepKind::Butterfly, s, &|_, j| j % 2 == 0));
        s /= 2;
    }
    steps
}

/// The butterfly values by logical position after every step of [`schedule`] (f64 DIF).
pub fn stage_values(input: &[C64], e: usize, inverse: bool) -> Vec<Vec<C64>> {
    let n = input.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut x = input.to_vec();
    let mut out = vec![x.clone()];
    for step in schedule(n, e).iter().skip(1) {
        if step.kind == StepKind::Butterfly {
            let s = step.stride;
            for p in 0..n {
                if p & s == 0 {
                    let ang = sign * std::f64::consts::PI * (p & (s - 1)) as f64 / s as f64;
                    let w = C64::new(ang.cos(), ang.sin());
                    let (a, c) = (x[p], x[p + s]);
                    x[p] = a + c;
                    x[p + s] = (a - c) * w;
                }
            }
        }
        out.push(x.clone());
    }
    out
}

/// The DFT in natural order (forward: e^{-2πikn/N}; inverse: unnormalised e^{+2πikn/N}).
pub fn dft(input: &[C64], inverse: bool) -> Vec<C64> {
    let mut buf = input.to_vec();
    let mut planner = FftPlanner::<f64>::new();
    let fft = if inverse {
        planner.plan_fft_inverse(buf.len())
    } else {
        planner.plan_fft_forward(buf.len())
    };
    fft.process(&mut buf);
    buf
}

/// Natural order → raw (Nabla) order: raw[x] = dft[F(x)].
pub fn to_raw(dft: &[C64], e: usize) -> Vec<C64> {
    let n = dft.len();
    let (ln, le) = (n.trailing_zeros(), e.trailing_zeros());
    (0..n).map(|x| dft[f_map(x, ln, le)]).collect()
}

/// The packed real pair's spectra: x + iy → (DFT_x, DFT_y), both full length, natural order.
pub fn pair_spectra(packed: &[C64]) -> (Vec<C64>, Vec<C64>) {
    let xs: Vec<C64> = packed.iter().map(|z| C64::new(z.re, 0.0)).collect();
    let ys: Vec<C64> = packed.iter().map(|z| C64::new(z.im, 0.0)).collect();
    (dft(&xs, false), dft(&ys, false))
}

/// The seed's unpacking rule in raw order, from the packed FFT's raw output `z`:
/// out_x[T] = ½(z[T] + conj z[F⁻¹(−F(T))]), out_y[T] = (z[T] − conj z[F⁻¹(−F(T))]) / 2i.
pub fn unpack_raw(z: &[C64], e: usize) -> (Vec<C64>, Vec<C64>) {
    let n = z.len();
    let (ln, le) = (n.trailing_zeros(), e.trailing_zeros());
    let mut x = Vec::with_capacity(n);
    let mut y = Vec::with_capacity(n);
    for t in 0..n {
        let p = f_inv((n - f_map(t, ln, le)) % n, ln, le);
        let zp = z[p].conj();
        x.push((z[t] + zp) * 0.5);
        y.push((z[t] - zp) / C64::new(0.0, 2.0));
    }
    (x, y)
}

/// The real-only FFT's raw output: the "even" elements output[t + 2mW] in the order
/// c = t + mW, element 0 packed as DFT[0].re + i·DFT[N/2].re. `dft` is the full spectrum.
pub fn real_raw(dft_full: &[C64], e: usize) -> Vec<C64> {
    let n = dft_full.len();
    let w = n / e;
    let raw = to_raw(dft_full, e);
    let mut out: Vec<C64> = (0..n / 2).map(|c| raw[(c % w) + 2 * (c / w) * w]).collect();
    out[0] = C64::new(raw[0].re, raw[w].re);
    out
}

/// The real-only FFT in natural order: bins 0 … N/2 − 1, bin 0 packed as DC + i·Nyquist.
pub fn real_natural(dft_full: &[C64]) -> Vec<C64> {
    let n = dft_full.len();
    let mut out = dft_full[..n / 2].to_vec();
    out[0] = C64::new(dft_full[0].re, dft_full[n / 2].re);
    out
}

/// max|gpu − ref| / max|ref| over the finite reference values; a position where the reference is
/// not finite must not be finite on the GPU either (else the error is infinite).
pub fn rel_error(gpu: &[C64], reference: &[C64]) -> f64 {
    if gpu.len() != reference.len() {
        return f64::INFINITY;
    }
    let mut scale: f64 = 0.0;
    let mut err: f64 = 0.0;
    for (g, r) in gpu.iter().zip(reference) {
        let finite_r = r.re.is_finite() && r.im.is_finite();
        let finite_g = g.re.is_finite() && g.im.is_finite();
        if !finite_r {
            if finite_g {
                return f64::INFINITY;
            }
            continue;
        }
        if !finite_g {
            return f64::INFINITY;
        }
        scale = scale.max(r.norm());
        err = err.max((g - r).norm());
    }
    if err == 0.0 {
        0.0
    } else {
        err / scale.max(f64::MIN_POSITIVE)
    }
}

/// The tolerance of [`rel_error`] in f32: 1e-5 · log2(N) (at least 1e-5).
pub fn tolerance(n: usize) -> f64 {
    1e-5 * (n.trailing_zeros().max(1) as f64)
}
