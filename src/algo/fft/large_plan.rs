//! A large FFT's configuration (src/algo/fft/large.rs) as a GPU plan and as JSON `"plan"`: its
//! dispatches (one per pass; a traced run dispatches every phase of a pass through L2 on its own,
//! so the trace shows what that pass leaves in its output between phases), the separate or fused
//! unpacking, and the f64 models the trace is checked against.

use super::facts::{FftEntry, PlanEntry};
use super::large::LargeConfig;
use super::large_gen::PassConfig;
use super::large_wgsl;
use super::trace::PassKind;
use super::*;
use crate::algo::bmmc::matrix::BitMatrix;

/// What one dispatch of the plan wrote (for the trace's stage notes).
#[derive(Clone, Copy, Debug)]
pub struct StageInfo {
    pub kind: PassKind,
    /// The phase (index into `LargeConfig::passes`) whose store ends the dispatch.
    pub phase: Option<usize>,
    /// Element k1 + N1·k2 holds grid cell (k1, k2) (the rows' natural order, or the columns
    /// stored for an L2 pass's rows).
    pub transposed: bool,
}

impl LargeConfig {
    /// JSON `"plan"`: the passes' phases in order, what each transforms, the fused twiddles and
    /// permutations, the exchanges through L2 and the unpacking.
    pub fn plan_entries(&self, natural: bool) -> Vec<PlanEntry> {
        let (n1, n2) = self.split;
        let ln = self.fft_n.trailing_zeros() as usize;
        let nd = self.dispatches();
        let mut out = Vec::new();
        let rotation = |l1: usize| {
            // (k1, k2) at N2·k1 + k2 (or col + N2·k1) to k1 + N1·k2: the index bits rotated by
            // log2 N1 (the low log2 N2 bits up, the top log2 N1 bits to the bottom).
            let perm: Vec<usize> = (0..ln)
                .map(|b| if b < ln - l1 { b + l1 } else { b - (ln - l1) })
                .collect();
            BitMatrix::from_bit_perm(&perm).row_strings()
        };
        for (i, p) in self.passes.iter().enumerate() {
            let d = p.dispatch;
            let phases = self.phases(d);
            let ph = phases.iter().position(|q| q == p).unwrap_or(0);
            let whole_l2 = nd == 1 && phases.len() > 1;
            let dim = if nd == 1 && !whole_l2 {
                "whole"
            } else if (whole_l2 && ph == 0) || (!whole_l2 && d == 0) {
                "columns"
            } else {
                "rows"
            };
            let split_phases = phases.len() > 1;
            out.push(PlanEntry::Fft(FftEntry {
                pass: d,
                dimension: dim.into(),
                sub_size: p.m,
                count: self.fft_n / p.m,
                stride: 1usize << p.input.m_shift,
                elements_per_invocation: p.e,
                lanes: p.c,
                sequential: p.s,
                parts: p.parts,
                workgroup_bytes: p.shared_bytes(),
                exchange_layout: p.layout_name().to_string(),
                input_layout: p.input,
                output_layout: p.output,
                phase: split_phases.then_some(ph),
                inner: (split_phases && !whole_l2)
                    .then(|| if ph == 0 { "columns" } else { "rows" }.into()),
            }));
            if let Some(t) = p.twiddle {
                let rule = if split_phases && ph == 0 {
                    format!(
                        "output k of inner column nb ·= exp(∓2πi·nb·k/{})",
                        self.fft_n / t.mult
                    )
                } else if split_phases {
                    format!(
                        "output ka + {m}·kb of sub-FFT col ·= exp(∓2πi·col·(ka + {m}·kb)/{})",
                        self.fft_n,
                        m = t.mult
                    )
                } else {
                    format!("Y[col + {n2}·k1] ·= exp(∓2πi·col·k1/{})", self.fft_n)
                };
                out.push(PlanEntry::Twiddle {
                    pass: d,
                    phase: ph,
                    fused: true,
                    rule,
                });
            }
            if whole_l2 && ph == 0 {
                out.push(PlanEntry::Permute {
                    pass: d,
                    phase: Some(0),
                    fused: true,
                    units: None,
                    rule: format!("transpose {n1}×{n2}: Z[k1 + {n1}·col] ← Y[col + {n2}·k1], so that phase 1 runs in place and stores natural order"),
                    matrix: rotation(n1.trailing_zeros() as usize),
                });
            }
            if let (Some(ch), true, 0) = (self.chain, ph + 1 < phases.len(), d) {
                let unit = if ch.whole(self.fft_n) {
                    "FFT".to_string()
                } else {
                    format!("group of {} columns", ch.unit / n1)
                };
                out.push(PlanEntry::Chain {
                    pass: d,
                    lag: ch.lag,
                    phase0_workgroups: ch.groups0,
                    phase1_workgroups: ch.groups1,
                    bytes_in_flight: ch.lag * ch.unit * 8,
                    rule: format!("one dispatch: workgroups take tickets in steps of {g}, step j running phase 0 of {unit} j ({g0} workgroups) and phase 1 of {unit} j − {lag} ({g1}); phase 0 stores where phase 1 stores its result, storageBarrier, counts itself into the {unit}'s counter; phase 1 waits for {g0}, storageBarrier, reads in place: the intermediate stays in L2", g = ch.groups0 + ch.groups1, g0 = ch.groups0, g1 = ch.groups1, lag = ch.lag),
                });
            } else if split_phases && ph + 1 < phases.len() {
                out.push(PlanEntry::L2Exchange {
                    pass: d,
                    bytes_per_workgroup: p.c * p.s * p.m * 8,
                    rule: "phase 0 stores each value where phase 1 will store its result (in the pass's output buffer); storageBarrier; phase 1 reads them back and stores in place: the intermediate stays in L2".into(),
                });
            }
            if let (Some(c), Some((grid, stored)), 0, true) = (
                self.column_unit(),
                self.column_layouts(),
                d,
                ph + 1 == phases.len(),
            ) {
                // Cell (k1, col) from the grid's address bits to the units' (Layout::units):
                // each grid bit, as column bit or row bit, to where the stored layout puts it.
                let (l2, lg) = (n2.trailing_zeros() as usize, ln as u32);
                let perm: Vec<usize> = (0..ln)
                    .map(|b| {
                        let (s, k1) = if b < l2 {
                            (1 << b, 0)
                        } else {
                            (0, 1 << (b - l2))
                        };
                        debug_assert_eq!(grid.addr(lg, s, k1), 1 << b);
                        stored.addr(lg, s, k1).trailing_zeros() as usize
                    })
                    .collect();
                out.push(PlanEntry::Permute {
                    pass: d,
                    phase: split_phases.then_some(ph),
                    fused: true,
                    units: Some(c),
                    rule: format!("units of {c} columns: cell (k1, col) at (col / {c})·{} + {c}·k1 + col mod {c}, each unit's {n1} rows contiguous (the rows pass reads them so)", c * n1),
                    matrix: BitMatrix::from_bit_perm(&perm).row_strings(),
                });
            }
            if d + 1 == nd && nd > 1 && natural && i + 1 == self.passes.len() {
                out.push(PlanEntry::Permute {
                    pass: d,
                    phase: None,
                    fused: true,
                    units: None,
                    rule: format!("transpose {n1}×{n2}: output[k1 + {n1}·k2] ← rows[{n2}·k1 + k2]"),
                    matrix: rotation(n1.trailing_zeros() as usize),
                });
            }
        }
        if let Some(m) = self.unpack {
            out.push(PlanEntry::Unpack {
                pass: if self.unpack_fused { nd - 1 } else { nd },
                mode: m,
                fused: self.unpack_fused,
            });
        }
        out
    }
}

/// The passes as a GPU plan: src → (tmp →) dst, then for real modes the unpacking (the last
/// dispatch's last phase, or a pass into `out`). With `trace`, every dispatch's output is read
/// back and every phase of a pass through L2 is a dispatch of its own.
pub fn plan_large(
    gpu: &Gpu,
    lc: &LargeConfig,
    batch: usize,
    src: &wgpu::Buffer,
    out: &wgpu::Buffer,
    natural: bool,
    trace: bool,
) -> Result<(Plan, Vec<StageInfo>)> {
    let mut plan = Plan::default();
    let mut infos = Vec::new();
    let words = 2 * lc.fft_n * batch;
    let nd = lc.dispatches();
    let tmp = if nd > 1 {
        Some(gpu.storage_zeroed("fft large columns", words)?)
    } else {
        None
    };
    let separate = lc.unpack.is_some() && !lc.unpack_fused;
    let fft_out = if separate {
        Some(gpu.storage_zeroed("fft large packed", words)?)
    } else {
        None
    };
    let last = fft_out.as_ref().unwrap_or(out);
    let fused = lc.unpack_phase();
    for d in 0..nd {
        let (from, to) = match (d, &tmp) {
            (0, Some(t)) => (src, t),
            (_, Some(t)) => (t, last),
            (_, None) => (src, last),
        };
        let phases = lc.phases(d);
        let first = lc.passes.iter().position(|p| p.dispatch == d).unwrap_or(0);
        let unpack = fused.filter(|_| d + 1 == nd);
        // Untraced: the pass in one dispatch. Traced: each phase alone (a later phase reading
        // what the earlier one left in `to`), the fused unpacking too.
        let mut runs: Vec<(Vec<PassConfig>, Option<large_unpack::Unpack>, usize)> = Vec::new();
        if trace {
            for (k, p) in phases.iter().enumerate() {
                runs.push((vec![*p], None, first + k));
            }
            if let Some(u) = unpack {
                runs.push((vec![], Some(u), first + phases.len() - 1));
            }
        } else {
            runs.push((phases.clone(), unpack, first + phases.len() - 1));
        }
        for (k, (ps, up, idx)) in runs.into_iter().enumerate() {
            let later = trace && k > 0;
            let src_name = if later { "dst" } else { "src" };
            // The chained dispatch is always the first (a whole FFT, or the columns pass).
            let chain = lc.chain.filter(|_| !trace && d == 0);
            let pipe = gpu.pipeline(
                "fft large pass",
                &super::trig::for_adapter(gpu, &large_wgsl::shader(&ps, up, src_name, chain)),
                "main",
            )?;
            let table = large_wgsl::table_size(&ps, up);
            let inverse = lc.passes[0].inverse;
            let tw = gpu.storage_init("fft twiddles", &twiddles(table, inverse))?;
            // A chained dispatch's `batch` is its units (FFTs, or groups of columns).
            let units = chain.map_or(batch, |ch| ch.units(batch, lc.fft_n));
            let (total, groups) = match ps.first() {
                Some(p) => {
                    let total = batch * lc.fft_n / p.m;
                    let groups = chain.map_or(total.div_ceil(p.c * p.s), |ch| ch.groups(units));
                    (total, groups)
                }
                None => (batch, batch.div_ceil(up.map_or(1, |u| u.ffts))),
            };
            options::check_groups(batch, groups)?;
            let u = gpu.uniform(
                "fft params",
                &[total as u32, groups as u32, units as u32, 0],
            )?;
            let bg = match chain {
                // The tickets and the units' counters start at zero; every run leaves them so.
                Some(_) => {
                    let sync = gpu.storage_zeroed("fft chain counters", 2 + units)?;
                    let bg = gpu.bind(&pipe, &[from, to, &tw, &u, &sync])?;
                    plan.keep.push(sync);
                    bg
                }
                None => gpu.bind(&pipe, &[from, to, &tw, &u])?,
            };
            let label = dispatch_label(lc, batch, d, &ps, up.is_some(), natural);
            let pass = plan.push(label, &pipe, bg, grid(groups as u32));
            if trace {
                pass.capture = vec![Region::whole(to)];
            }
            plan.keep.extend([tw, u]);
            let ph = idx - first;
            let kind = if ps.is_empty() {
                PassKind::Unpack
            } else if nd == 1 && phases.len() == 1 {
                PassKind::Whole
            } else if nd == 1 {
                [PassKind::Columns, PassKind::Rows][ph.min(1)]
            } else if ph + 1 < phases.len() {
                PassKind::Inner
            } else {
                [PassKind::Columns, PassKind::Rows][d.min(1)]
            };
            // An L2 pass over whole FFTs stores its columns at k1 + N1·col and its rows in
            // natural order; a rows pass stores natural order through the transpose.
            let transposed = match kind {
                PassKind::Rows => natural || nd == 1,
                PassKind::Columns => nd == 1,
                _ => false,
            };
            infos.push(StageInfo {
                kind,
                phase: Some(idx),
                transposed,
            });
        }
    }
    if let (Some(mode), Some(z)) = (lc.unpack.filter(|_| separate), &fft_out) {
        let n = lc.fft_n;
        let pipe = gpu.pipeline(
            "fft unpack",
            &super::trig::for_adapter(gpu, UNPACK),
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
        let label = format!(
            "unpack {}",
            if mode == Mode::Real {
                "real"
            } else {
                "real pair"
            }
        );
        let pass = plan.push(label, &pipe, bg, grid(groups as u32));
        if trace {
            pass.capture = vec![Region::whole(out)];
        }
        plan.keep.push(u);
        infos.push(StageInfo {
            kind: PassKind::Unpack,
            phase: None,
            transposed: false,
        });
    }
    plan.keep.extend(tmp);
    plan.keep.extend(fft_out);
    Ok((plan, infos))
}

/// A dispatch's label: what each of its phases runs, and what is fused into it.
fn dispatch_label(
    lc: &LargeConfig,
    batch: usize,
    d: usize,
    ps: &[PassConfig],
    unpack: bool,
    natural: bool,
) -> String {
    let nd = lc.dispatches();
    let all = lc.phases(d);
    let name = if nd == 1 && all.len() == 1 {
        "whole"
    } else if lc.chain.is_some() && ps.len() > 1 && nd == 1 {
        "whole, chained through L2"
    } else if lc.chain.is_some() && ps.len() > 1 {
        "columns, chained through L2"
    } else if nd == 1 {
        "whole through L2"
    } else if d == 0 {
        "columns"
    } else {
        "rows"
    };
    let mut parts: Vec<String> = ps
        .iter()
        .map(|p| {
            let ph = all.iter().position(|q| q == p).unwrap_or(0);
            format!(
                "{}{} × {}-point FFTs, {} per workgroup × {} in turn, E = {}, {} exchange part{}{}",
                if all.len() > 1 {
                    format!("phase {ph}: ")
                } else {
                    String::new()
                },
                batch * lc.fft_n / p.m,
                p.m,
                p.c,
                p.s,
                p.e,
                p.parts,
                if p.parts > 1 { "s" } else { "" },
                if p.twiddle.is_some() {
                    ", twiddles fused"
                } else {
                    ""
                },
            )
        })
        .collect();
    if d + 1 == nd && nd > 1 && natural && ps.last() == all.last() {
        parts.push("transposed store".into());
    }
    if unpack {
        parts.push("real spectra unpacked in place".into());
    }
    format!("fft {d} {name}: {}", parts.join("; "))
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

/// The columns pass's output in f64 (the trace's model): Y[col + N2·k1] = W_N^(col·k1)·FFT_N1(x[col + N2·n1])[k1]
/// (`transposed`: at k1 + N1·col, as an L2 pass's first phase stores it).
pub fn columns_model(
    x: &[C64],
    split: (usize, usize),
    inverse: bool,
    transposed: bool,
) -> Vec<C64> {
    let (n1, n2) = split;
    let n = n1 * n2;
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut y = vec![C64::new(0.0, 0.0); n];
    for col in 0..n2 {
        let c: Vec<C64> = (0..n1).map(|i| x[col + n2 * i]).collect();
        let f = model::dft(&c, inverse);
        for (k1, v) in f.into_iter().enumerate() {
            let a = sign * std::f64::consts::TAU * ((col * k1) % n) as f64 / n as f64;
            let at = if transposed {
                k1 + n1 * col
            } else {
                col + n2 * k1
            };
            y[at] = v * C64::new(a.cos(), a.sin());
        }
    }
    y
}
