//! FFTs past one workgroup: the plan. A size that fits one workgroup's memory only in halves
//! (real parts, then imaginary parts) is one pass; larger sizes are the four-step decomposition
//! N = N1·N2, each step made of the radix kernel's sub-FFTs (src/algo/fft/large_gen.rs):
//!
//! 1. *columns*: the N2 FFTs of size N1 over x[col + N2·n1], each output k1 times W_N^(col·k1)
//!    (the twiddles, fused), written in place: Y[col + N2·k1];
//! 2. *rows*: the N1 FFTs of size N2 over Y[N2·k1 + n2] (contiguous), X[k1 + N1·k2] written
//!    through the transpose (natural order), or row by row (`--order raw`: output[N2·k1 + k2]).
//!
//! The permutations between passes are BMMC (bit-rotation) matrices fused into the loads and
//! stores: each pass reads and writes C neighbouring sub-FFTs at once, so every row it touches is
//! C·8 contiguous bytes. A pass can also run in two *phases* through L2 (`--phase-split`): its
//! M-point sub-FFTs as Ma × M/Ma, the intermediate left in the pass's own output
//! (src/algo/fft/large_wgsl.rs), so one dispatch holds a whole 2^15-point FFT, or 8–16
//! neighbouring 4096-point columns. Real input (`--real`) is the packed form: N reals as N/2
//! complex values, their FFT, then the unpacking — in the store of the last dispatch (whole FFTs,
//! or the rows pass with rows k1 and N1 − k1 side by side), else a last phase or a pass of its
//! own; `--real-pair` unpacks into two spectra.

use super::large_chain::{self, Chain};
use super::large_gen::{Field, Layout, PassConfig, Twiddle};
use super::large_l2::l2_pass;
use super::large_unpack::{self, Unpack};
use super::*;

/// The largest sub-FFT one workgroup runs (in halves), and so the largest factor of a split.
pub const MAX_SUB: usize = 8192;
/// The largest FFT run as one pass by default (E = 32: 512 threads hold 2^14 values).
pub const MAX_SINGLE: usize = 16384;
/// The largest FFT one dispatch runs whole through L2 (512 KiB per workgroup between phases).
pub const MAX_WHOLE_L2: usize = 65536;
/// The largest FFT `--chain` runs whole; past it the chain is the columns pass's.
pub const MAX_CHAIN_WHOLE: usize = 1 << 20;

/// What a large FFT runs: the complex FFT's phases (grouped into dispatches), then (real modes)
/// the unpacking.
#[derive(Clone, Debug)]
pub struct LargeConfig {
    /// The complex FFT's size (N, or N/2 for --real).
    pub fft_n: usize,
    /// (N1, N2): the column and row sub-sizes; (N, 1) for one pass.
    pub split: (usize, usize),
    /// The phases in order; `dispatch` numbers the passes they belong to.
    pub passes: Vec<PassConfig>,
    pub unpack: Option<Mode>,
    /// The unpacking is fused into the last dispatch (its workgroups hold whole FFTs, or it is
    /// the rows pass and pairs rows k1 and N1 − k1).
    pub unpack_fused: bool,
    /// The two phases through L2 of a whole FFT run by workgroups of their own, chained in one
    /// dispatch (`--chain`).
    pub chain: Option<Chain>,
}

impl LargeConfig {
    /// Passes over memory of the complex FFT (dispatches).
    pub fn dispatches(&self) -> usize {
        self.passes.last().map_or(0, |p| p.dispatch + 1)
    }
    /// The columns the columns pass stores together (`Layout::units`), if it stores units.
    pub fn column_unit(&self) -> Option<usize> {
        let rows = self.passes.iter().find(|p| p.dispatch == 1)?;
        rows.input.m_split.map(|(b, _)| 1 << b)
    }
    /// The columns pass's layouts: in grid order (cell (k1, col) at col + N2·k1) and as stored
    /// in units, if it stores units.
    pub fn column_layouts(&self) -> Option<(Layout, Layout)> {
        let c = self.column_unit()?;
        let (n1, n2) = self.split;
        let (l1, l2) = (n1.trailing_zeros(), n2.trailing_zeros());
        let (stored, _) = Layout::units(l1, l2, c.trailing_zeros());
        Some((Layout::simple(l2, 0, l2), stored))
    }
    /// The columns pass's array (`words`, interleaved complex, whole FFTs) in grid order, from
    /// the units it is stored in: what a traced run shows and checks.
    pub fn columns_in_grid_order(&self, words: Vec<u32>) -> Vec<u32> {
        let Some((grid, stored)) = self.column_layouts() else {
            return words;
        };
        let n1 = self.split.0;
        let ln = self.fft_n.trailing_zeros();
        let mut out = vec![0u32; words.len()];
        for s in 0..words.len() / 2 / n1 {
            for k1 in 0..n1 {
                let (from, to) = (stored.addr(ln, s, k1), grid.addr(ln, s, k1));
                out[2 * to..2 * to + 2].copy_from_slice(&words[2 * from..2 * from + 2]);
            }
        }
        out
    }
    /// The phases of dispatch `d`.
    pub fn phases(&self, d: usize) -> Vec<PassConfig> {
        self.passes
            .iter()
            .filter(|p| p.dispatch == d)
            .copied()
            .collect()
    }
    /// The layout `--order raw` writes (output[N2·k1 + k2]) exists where the rows are a pass of
    /// their own; one dispatch writes natural order.
    pub fn raw_split(&self) -> (usize, usize) {
        if self.dispatches() > 1 {
            self.split
        } else {
            (self.fft_n, 1)
        }
    }
    /// The fused unpacking phase: every FFT the last dispatch's workgroups hold.
    pub fn unpack_phase(&self) -> Option<Unpack> {
        let last = self.passes.last()?;
        (self.unpack_fused && self.unpack == Some(Mode::Real)).then(|| Unpack {
            m: self.fft_n,
            ffts: (last.c * last.s * last.m / self.fft_n).max(1),
            inverse: last.inverse,
            threads: last.threads(),
            rows: (self.dispatches() > 1 || self.chain.is_some()).then_some(self.split.0),
        })
    }
}

/// What a workgroup may hold on the adapter, and the exchange parts asked for.
#[derive(Clone, Copy)]
pub(super) struct Fit {
    pub(super) max_threads: usize,
    pub(super) max_bytes: usize,
    pub(super) parts: Option<usize>,
    pub(super) layout: ExchangeLayout,
}

impl Fit {
    /// The fewest exchange parts (1, 2, 4, 8; `--exchange-parts`) with which a phase fits.
    pub(super) fn parts(&self, mk: &dyn Fn(usize) -> PassConfig) -> Option<PassConfig> {
        let list = self.parts.map_or(vec![1, 2, 4, 8], |p| vec![p]);
        list.into_iter().find_map(|parts| self.check(mk(parts)))
    }
    pub(super) fn check(&self, p: PassConfig) -> Option<PassConfig> {
        if p.threads() > self.max_threads || p.e > codegen::MAX_E || p.e > p.m || p.c == 0 {
            return None;
        }
        p.choose_pad(self.max_bytes, self.layout)
    }
}

/// The one-pass kernel's elements per invocation for `n` complex points (`real`: the packed FFT
/// of 2n reals, its unpacking in the store), unless given.
pub fn default_e(n: usize, real: bool) -> usize {
    if n >= 8192 {
        32
    } else if n >= 1024 || (real && n >= 256) {
        16
    } else {
        8
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
    let lc = plan(o, n, batch, natural, inverse, unpack, gpu_limits)?;
    if o.exchange_layout == ExchangeLayout::Swizzled
        && lc.passes.iter().all(|p| p.swizzle.is_none())
    {
        let what = if unpack == Some(Mode::Real) {
            format!("{} reals (a {n}-point complex plan)", 2 * n)
        } else {
            format!("{n} points")
        };
        return Err(Error::Input(format!(
            "fft: --exchange-layout swizzled: no pass of the plan for {what} can take a swizzle (one needs 2048 or more points exchanged in parts over several rounds)"
        )));
    }
    Ok(lc)
}

fn plan(
    o: &Options,
    n: usize,
    batch: usize,
    natural: bool,
    inverse: bool,
    unpack: Option<Mode>,
    gpu_limits: &wgpu::Limits,
) -> Result<LargeConfig> {
    let fit = Fit {
        max_bytes: gpu_limits.max_compute_workgroup_storage_size as usize,
        max_threads: (gpu_limits.max_compute_invocations_per_workgroup as usize)
            .min(gpu_limits.max_compute_workgroup_size_x as usize),
        parts: o.exchange_parts,
        layout: o.exchange_layout,
    };
    let (max_bytes, max_threads) = (fit.max_bytes, fit.max_threads);
    let ln = n.trailing_zeros();
    let whole = Layout::simple(0, 0, 0);
    let fused = unpack == Some(Mode::Real);
    // Chained through L2 by default at 2^15 – 2^18 points (H100, 2^27 values, ms, against two
    // passes: 2^15 1.087 / 1.487, 2^16 1.115 / 1.520, 2^17 1.351 / 1.511, 2^18 1.450 / 1.488;
    // 2^20 ran 3.09).
    // Real input (the unpacking in phase 1's store) only to 2^16 points: 2^18 reals chained
    // 1.890 ms against 1.666 in two passes, 2^19 1.827 / 1.678.
    // 2^24's columns pass chained (16384 × 1024, each column 128 × 128, 16 columns a unit):
    // 1.87 ms (its columns stored in units) against 2.21 in two plain passes.
    let top = if unpack.is_some() { 16 } else { 18 };
    let chain = o.chain.map_or(
        o.split.is_none()
            && o.phase_split.is_none()
            && ((15..=top).contains(&ln) || (ln == 24 && unpack.is_none())),
        |l| l > 0,
    );
    // Past 2^20 points (or with --split) a chain runs the columns pass of the split plan.
    let chain_columns = chain && (o.split.is_some() || n > MAX_CHAIN_WHOLE);
    let chain = chain && !chain_columns;
    let single = || {
        // Real input below 8192 points (the unpacking in the store) runs best with about 4 KiB
        // of data per workgroup, E = 16 from 256 points. H100, 2^28 reals, ms (torch.rfft): 256
        // reals E8 C4 0.713, C8 0.864 (0.731); 512 E16 C2 0.718, E8 C4 0.864 (0.745); 1024 E8 C1
        // 0.713, C2 0.741 (0.730); 2048 E16 S2 0.723, S1 0.781 (0.732).
        let small_real = fused && n < 8192;
        let e = o
            .elements_per_invocation
            .unwrap_or(default_e(n, fused))
            .min(n / 2)
            .max(2);
        // Small FFTs side by side as the radix kernel runs them (about 8 KiB per workgroup).
        let c = o
            .ffts_per_workgroup
            .unwrap_or((if small_real { 512 } else { 1024 } / n).max(1))
            .min(batch.next_power_of_two());
        // 2^13 in 4 parts (every warp in every part) at S = 1: 0.738 ms against 0.759 in 2
        // parts at S = 4 (H100); 16384 reals likewise, the unpacking in the store in 8 classes:
        // 0.840 ms against 0.882 in 2 parts at S = 16.
        // 4096 reals (2048 points) in 2 parts at S = 4: 0.737 ms against 0.752 whole at S = 8
        // (2 parts at S = 8 0.743, S = 16 0.759; 4 parts 1.82); 8192 reals in 2 parts at S = 4
        // (the unpacking in 2 classes) 0.733 against 0.752 whole at S = 8.
        // Complex 1024 – 4096 points (`--kernel large`) in halves too: half the workgroup
        // memory keeps more workgroups resident. H200, × copy: 2048 at S = 4 0.975 whole 0.883,
        // at S = 1 1.011; 4096 at S = 4 0.985 whole 0.889; the radix kernel 0.918 / 0.910;
        // 1024 at S = 1 1.003 (its default S; the radix kernel 0.994 at S = 4).
        let four = Fit {
            parts: fit.parts.or(if n == 8192 && unpack != Some(Mode::Pair) {
                Some(4)
            } else if ((n == 2048 || n == 4096) && fused)
                || ((1024..=4096).contains(&n) && unpack.is_none())
            {
                Some(2)
            } else {
                None
            }),
            ..fit
        };
        let mk = |parts| PassConfig {
            n,
            m: n,
            e,
            c,
            // S = 4 in halves (2^13: 0.760 ms against 0.853 with S = 1); S = 1 in 4 or 8
            // parts (2^14: 0.828 ms; S = 2 spills registers: 1.39). Real input, where the
            // unpacking in the store adds a round trip, takes more turns: 4096 reals S = 8 0.752
            // (S = 4 0.771; in 2 parts, above, S = 4), 8192 reals whole S = 8 0.753 (S = 4
            // 0.769; in 2 parts S = 4), 16384 reals in 2 parts S = 16 0.882 (S = 4 0.919; in 4
            // parts S = 1).
            s: o.sequential_ffts.unwrap_or(match n {
                1024 if fused && batch >= 4096 => 2,
                2048 if fused && batch >= 8192 && parts == 2 => 4,
                2048 if fused && batch >= 8192 => 8,
                4096 if fused && batch >= 8192 && parts == 2 => 4,
                4096 if fused && batch >= 8192 => 8,
                8192 if fused && batch >= 16384 && parts <= 2 => 16,
                _ if n >= 2048 && batch >= 4096 && parts <= 2 => 4,
                _ => 1,
            }),
            parts,
            input: whole,
            output: whole,
            load_lanes: false,
            store_lanes: false,
            twiddle: None,
            inverse,
            pad_shift: None,
            swizzle: None,
            trip_pad: [None; 8],
            dispatch: 0,
        };
        four.parts(&mk).or_else(|| fit.parts(&mk))
    };
    let split = match o.split {
        Some(s) => Some(s),
        None if chain => None,
        None if o.phase_split.is_some() && n <= MAX_WHOLE_L2 => None,
        // One pass up to 2^14 where a whole FFT fits (in parts); else the most even split,
        // except that 2^23 takes its 4096-point sub-FFTs in the columns pass: 1.834 ms as
        // 4096 × 2048 against 2.065 as 2048 × 4096 (H100, 2^27 values).
        None if n <= MAX_SINGLE && single().is_some() => None,
        None if ln == 23 => Some(4096),
        // 2^24 chained: 16384-point columns (128 × 128) and 1024-point rows (8 lanes, where
        // 4096-point rows fit 4): 1.980–1.984 ms against 2.058–2.066 as 4096 × 4096 chained
        // (H100, 2^27 values; columns stored in place, as both were then), 8192 × 2048 with
        // units 1.949.
        None if chain_columns && ln == 24 => Some(16384),
        // Real input with the unpacking in the rows pass: 256-point rows (one exchange part, 16
        // lanes) up to 4096-point columns (2^16 – 2^20 complex points, 2^17 – 2^21 reals). 2^20 reals (2^19 points) as 2048 × 256 1.777 ms
        // against 1.889 as 1024 × 512 and 2.161 as 512 × 1024 (H100, 2^28 reals).
        None if fused && (16..=20).contains(&ln) => Some(n / 256),
        None => Some(1usize << (ln / 2)),
    };
    let Some(n1) = split else {
        if chain {
            return large_chain::configure(o, n, batch, inverse, unpack, fit);
        }
        if let Some(ma) = o.phase_split {
            if o.ffts_per_workgroup.is_some() {
                return Err(Error::input(
                    "fft: --ffts-per-workgroup applies to the two-pass plan; one dispatch through L2 (--phase-split without --split) holds one FFT per workgroup",
                ));
            }
            // The whole FFT in one dispatch: N1-point columns, then N2-point rows, through L2.
            let p = l2_pass(o, n, n, ma, 1, (whole, whole), false, inverse, 0, fit)?;
            return Ok(LargeConfig {
                fft_n: n,
                split: (ma, n / ma),
                passes: p.to_vec(),
                unpack,
                unpack_fused: fused,
                chain: None,
            });
        }
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
            unpack_fused: fused,
            chain: None,
        });
    };
    if !n1.is_power_of_two() || n1 < 2 || n1 >= n {
        return Err(Error::Input(format!(
            "fft: --split must be a power of two with 2 ≤ N1 < N = {n}; got {n1}"
        )));
    }
    let n2 = n / n1;
    // A chained columns pass runs its columns as two phases, each at most MAX_SUB points.
    let max1 = if chain_columns {
        MAX_SUB * MAX_SUB
    } else {
        MAX_SUB
    };
    if n1 > max1 || n2 > MAX_SUB {
        return Err(Error::Limit(format!(
            "fft: size {n} as {n1} × {n2} needs a sub-FFT above {MAX_SUB} points (two passes reach {}; three passes are not built)",
            MAX_SUB * MAX_SUB
        )));
    }
    let (l1, l2) = (n1.trailing_zeros(), n2.trailing_zeros());
    let cols_in = Layout::simple(l2, 0, l2);
    // The columns pass stores its output in units of 16 neighbouring columns (a chained one: of
    // its unit's C), each unit's N1 rows contiguous, and the rows pass reads them so: L2 then
    // writes the columns back to DRAM in runs of a unit (128 KiB – 2 MiB) where stored in
    // place they were rows of C·8 bytes N2·8 apart. H100, 2^27 values, ms: 2^24 (chained)
    // 1.983 → 1.870; two plain passes 2^20 1.547 → 1.529, 2^21 1.607 → 1.585, 2^22 1.719 →
    // 1.676, 2^23 1.828 → 1.790 (units of 4 or 8 columns lost at 2^21 – 2^23: the rows pass
    // then reads 32- or 64-byte runs; of 32, 2^19 – 2^23 within ±0.7 %). Not with passes
    // through L2 (--phase-split), nor for real input, whose two-pass sizes (256-point rows of
    // 16 lanes) did not move (2^18 – 2^21 reals within ±0.4 %).
    let unit_bits = if chain_columns {
        large_chain::columns_per_unit(o, n, n1).trailing_zeros()
    } else if o.phase_split.is_none() && unpack.is_none() {
        4
    } else {
        0
    };
    let (cols_out, rows_in) = if unit_bits > 0 && unit_bits < l2 {
        Layout::units(l1, l2, unit_bits)
    } else {
        (cols_in, Layout::simple(l1, l2, 0))
    };
    let rows_out = if natural {
        Layout::simple(l1, 0, l1)
    } else {
        Layout::simple(l1, l2, 0)
    };
    let total = |m: usize| batch * n / m;
    let pass = |m: usize,
                (input, output): (Layout, Layout),
                load_lanes: bool,
                store_lanes: bool,
                twiddle: bool,
                dispatch: usize,
                phase_split: Option<usize>,
                lanes: Option<usize>|
     -> Result<Vec<PassConfig>> {
        let cap = total(m).next_power_of_two();
        if let Some(ma) = phase_split {
            if ma >= m {
                return Err(Error::Input(format!(
                    "fft: --phase-split {ma} is not below the {m}-point sub-FFTs of pass {dispatch} (N = {n1} × {n2})"
                )));
            }
            let lanes = lanes.unwrap_or(8).min(cap).min(n / m);
            let p = l2_pass(
                o,
                n,
                m,
                ma,
                lanes,
                (input, output),
                twiddle,
                inverse,
                dispatch,
                fit,
            )?;
            return Ok(p.to_vec());
        }
        // E = 64 for the 4096-point passes (4 lanes in 4 parts): two rounds, one trip through
        // workgroup memory instead of two (H100, 2^24: columns 1.395 → 1.252 ms, rows 1.134 →
        // 0.923); 2048-point passes keep 16 (2^23's columns at E = 64: 1.157 → 1.518 ms).
        let e = o
            .elements_per_invocation
            .unwrap_or(if m == 4096 {
                64
            } else if m >= 512 {
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
            twiddle: twiddle.then_some(Twiddle {
                u: Field([(0, input.runs[0].0), (0, 0)]),
                v: Field::default(),
                mult: 1,
            }),
            inverse,
            pad_shift: None,
            swizzle: None,
            trip_pad: [None; 8],
            dispatch,
        };
        let s_for = |parts: usize| {
            o.sequential_ffts
                .unwrap_or(if parts <= 2 && total(m) >= 2048 * 16 {
                    2
                } else {
                    1
                })
        };
        let best = match lanes {
            Some(c) => fit.parts(&|parts| mk(c, parts, s_for(parts))),
            None => {
                let two: Vec<usize> = o.exchange_parts.map_or(vec![1, 2], |p| vec![p]);
                [16usize, 8, 4]
                    .iter()
                    .map(|&c| c.min(cap))
                    .find_map(|c| {
                        two.iter()
                            .find_map(|&parts| fit.check(mk(c, parts, s_for(parts))))
                    })
                    .or_else(|| {
                        let mut c = 4.min(cap);
                        loop {
                            if let Some(p) = fit.parts(&|parts| mk(c, parts, s_for(parts))) {
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
        best.map(|p| vec![p]).ok_or_else(|| Error::Limit(format!("fft: a {m}-point pass with {} sub-FFTs per workgroup does not fit this adapter ({max_threads} invocations, {max_bytes} bytes of workgroup memory per workgroup)", lanes.unwrap_or(1))))
    };
    let (mut passes, chain) = if chain_columns {
        // --exchange-parts is the rows pass's: the chained phases take the fewest that fit.
        let cols_fit = Fit { parts: None, ..fit };
        let io = (cols_in, cols_out);
        let (p, ch) = large_chain::configure_columns(o, n, n1, batch, io, inverse, cols_fit)?;
        (p.to_vec(), Some(ch))
    } else {
        let lanes = o.ffts_per_workgroup;
        let p = pass(
            n1,
            (cols_in, cols_out),
            true,
            true,
            true,
            0,
            o.phase_split,
            lanes,
        )?;
        (p, None)
    };
    // With the columns chained, --phase-split and --ffts-per-workgroup (the unit's columns) are
    // theirs.
    let rows_split = o.phase_split.filter(|_| !chain_columns);
    let rows_lanes = o.ffts_per_workgroup.filter(|_| !chain_columns);
    passes.extend(pass(
        n2,
        (rows_in, rows_out),
        false,
        natural,
        false,
        1,
        rows_split,
        rows_lanes,
    )?);
    // Real input: the unpacking in the rows pass's store where its lanes can pair rows k1 and
    // N1 − k1 (src/algo/fft/large_wgsl.rs), else a pass of its own.
    let rows_fused = unpack == Some(Mode::Real)
        && passes.iter().filter(|p| p.dispatch == 1).count() == 1
        && passes
            .last()
            .is_some_and(|p| large_unpack::rows_unpack(p, n1));
    Ok(LargeConfig {
        fft_n: n,
        split: (n1, n2),
        passes,
        unpack,
        unpack_fused: rows_fused,
        chain,
    })
}

#[cfg(test)]
#[path = "large_tests.rs"]
mod tests;
