//! Both phases of a whole FFT in one dispatch (`--chain`): the plan's choice of shapes and lag,
//! and the dispatch's WGSL around the two phases (src/algo/fft/large_wgsl.rs writes each phase).

use super::large::{Fit, LargeConfig};
use super::large_gen::{Layout, PassConfig};
use super::large_l2::l2_pass;
use super::large_unpack::{self, Fused};
use super::large_wgsl::phase;
use super::*;
use std::fmt::Write;

/// The data a chained dispatch keeps between its phases by default: phase 1 runs this many
/// bytes' worth of FFTs behind phase 0 (`--chain`); real input (whose phase 1 also unpacks)
/// less. H100, 2^27 complex values, ms: 2^15 at 4 / 6 / 8 MiB 1.194 / 1.087 / 1.087, 2^16 at
/// 4 / 6 / 8 MiB 1.220 / 1.115 / 1.114, 2^17 at 6 / 8 MiB 1.381 / 1.350 (at 12 MiB 2^15 and
/// 2^16 fell to 1.41 and 1.42: past about 10 MiB the intermediate no longer stays in L2);
/// 2^28 reals: 2^16 reals at 4 / 5 / 6 / 7 / 8 MiB 1.356 / 1.298 / 1.283 / 1.328 / 1.391, 2^17
/// reals at 4 / 5 / 6 / 7 MiB 1.359 / 1.308 / 1.297 / 1.340.
pub const CHAIN_BYTES: usize = 8 << 20;
pub const CHAIN_BYTES_REAL: usize = 6 << 20;

/// Why this adapter does not run chained dispatches, if it does not: the subgroups of phase 1
/// poll the counters, and on a CPU adapter (lavapipe) phase 1 now and then read before phase 0's
/// stores had landed (docs/perf/fft.md).
pub fn refused_on(gpu: &Gpu) -> Option<&'static str> {
    if gpu.info.device_type == wgpu::DeviceType::Cpu {
        Some(
            "is not run on a CPU adapter: lavapipe let phase 1 read before phase 0's stores had landed (docs/perf/fft.md)",
        )
    } else if !gpu.has_subgroups() {
        Some(
            "needs subgroups (every subgroup of phase 1 polls the counters); this adapter has none",
        )
    } else {
        None
    }
}

/// One dispatch, two kinds of workgroup (`--chain`): each takes a ticket; tickets come in steps
/// of `groups0 + groups1`, step j holding phase 0 of FFT j and phase 1 of FFT j − `lag`. Phase
/// 0's workgroups store (transposed, where phase 1 stores its output), `storageBarrier()` (a
/// device-scope release and acquire in the SPIR-V naga writes), then count themselves into FFT
/// f's counter; phase 1's wait until all `groups0` have, then read in place. A ticket is taken
/// only by a running workgroup, so every workgroup waited on holds an earlier ticket and is
/// running or done: no deadlock without forward-progress guarantees. The last phase-1 workgroup
/// of an FFT zeroes its counter and the last workgroup out zeroes the tickets, so every run of
/// the plan starts from zeros.
///
/// What a counter waits on is a *unit*: a whole FFT, or (the columns pass of a split plan
/// chained, `--chain` with `--split`) C neighbouring columns, whose N1-point sub-FFTs are the
/// two phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chain {
    pub lag: usize,
    /// Workgroups of phase 0 (phase 1) per unit.
    pub groups0: usize,
    pub groups1: usize,
    /// Complex values in a unit: the FFT's size, or C·N1 for C columns.
    pub unit: usize,
}

impl Chain {
    /// Units in a batch of `batch` FFTs of `fft_n` points.
    pub fn units(&self, batch: usize, fft_n: usize) -> usize {
        batch * fft_n / self.unit
    }
    /// Workgroups the dispatch runs for `units` units.
    pub fn groups(&self, units: usize) -> usize {
        (units + self.lag) * (self.groups0 + self.groups1)
    }
    /// Whether a unit is a whole FFT (else C columns of the columns pass).
    pub fn whole(&self, fft_n: usize) -> bool {
        self.unit == fft_n
    }
}

/// A whole FFT's two phases through L2 chained in one dispatch ([`Chain`]): Ma-point columns
/// (`--phase-split`, default 2^⌊log2 N / 2⌋) then the rows, 16 lanes in phase 1 unless
/// `--phase-lanes` says otherwise, each phase's workgroups S sub-FFT groups in turn
/// (`--sequential-ffts`, default 4), phase 1 `--chain` L FFTs behind phase 0 (default: 8 MiB of
/// FFTs, 6 MiB for real input). Real input unpacks in phase 1's store (its lanes pair rows k1
/// and Ma − k1), else in a pass of its own. H100, 2^27 values, 8 MiB apart, one poll a
/// workgroup then: 2^15 at S = 1 / 2 / 4 / 8 1.739 / 1.269 / 1.075 / 1.420 ms.
pub(super) fn configure(
    o: &Options,
    n: usize,
    batch: usize,
    inverse: bool,
    unpack: Option<Mode>,
    fit: Fit,
) -> Result<LargeConfig> {
    let bytes = if unpack.is_some() {
        CHAIN_BYTES_REAL
    } else {
        CHAIN_BYTES
    };
    let whole = Layout::simple(0, 0, 0);
    let io = (whole, whole);
    let ([p0, p1], chain) = chained(o, (n, n, 1), io, false, inverse, fit, bytes, batch)?;
    let ma = p0.m;
    Ok(LargeConfig {
        fft_n: n,
        split: (ma, n / ma),
        passes: vec![p0, p1],
        unpack,
        unpack_fused: unpack == Some(Mode::Real) && large_unpack::rows_unpack(&p1, ma),
        chain: Some(chain),
    })
}

/// The columns pass of a split plan chained ([`Chain`] over units of C neighbouring columns,
/// `--ffts-per-workgroup`, default 16; the rows pass keeps its default lanes then): each column's `m`-point FFT as Ma × m/Ma
/// (`--phase-split`, default 2^⌊log2 m / 2⌋), so that both phases read and write rows of C
/// values (128 bytes at C = 16) where a whole column pass fits only 4 lanes (the 4096-point
/// columns of 2^23 and 2^24, and 16384-point columns, which a plain pass cannot hold at all).
/// Phase 1 applies the pass's twiddles and runs C sub-FFTs side by side (`--phase-lanes`); S
/// and L as for whole FFTs, L default 8 MiB of units. H100, 2^27 values, ms for the whole FFT
/// (two plain passes 2.21–2.23): 2^24 as 16384 × 1024 (columns 128 × 128, 8-lane rows pass) at
/// 16 / 32 / 64 phase-1 lanes 1.984 / 1.992 / 2.231, L = 2 / 3 / 4 / 5 units (2 MiB each) 2.048†
/// / 1.980 / 1.984 / 2.084 (†32 lanes), S = 2 / 8 2.140 / 2.419, columns as 64 × 256 1.999,
/// 256 × 64 2.412, units of 8 columns 2.40–2.49, of 32 1.978–1.979, all parts in 4 2.538; as 32768 × 512 2.230; as
/// 8192 × 2048 2.038; as 4096 × 4096 (columns 64 × 64; rows 0.92 of it, 4 lanes) at 16 / 32 /
/// 64 lanes 2.174 / 2.063 / 2.164, L = 12 / 16 / 20 2.086 / 2.063 / 2.129, S = 1 / 2 / 8 2.470 /
/// 3.187 / 4.199, E = 8 4.233, 16 × 256 2.236, 32 × 128 2.172, 128 × 32 2.277. 2^23 chained
/// loses: 1.930–2.036 (16384 × 512, 8192 × 1024, 4096 × 2048) against 1.830 plain.
pub(super) fn configure_columns(
    o: &Options,
    n: usize,
    m: usize,
    batch: usize,
    io: (Layout, Layout),
    inverse: bool,
    fit: Fit,
) -> Result<([PassConfig; 2], Chain)> {
    chained(
        o,
        (n, m, columns_per_unit(o, n, m)),
        io,
        true,
        inverse,
        fit,
        CHAIN_BYTES,
        batch,
    )
}

/// The columns in a unit of the chained columns pass of `m`-point columns of an `n`-point FFT
/// (`--ffts-per-workgroup`, default 16).
pub(super) fn columns_per_unit(o: &Options, n: usize, m: usize) -> usize {
    o.ffts_per_workgroup.unwrap_or(16).min(n / m)
}

/// The two phases and the [`Chain`] of units of `lanes` neighbouring `m`-point sub-FFTs of an
/// `n`-point FFT (`lanes` = 1, `m` = `n`: whole FFTs), L = `bytes` of units by default.
#[allow(clippy::too_many_arguments)]
fn chained(
    o: &Options,
    (n, m, lanes): (usize, usize, usize),
    io: (Layout, Layout),
    outer_twiddle: bool,
    inverse: bool,
    fit: Fit,
    bytes: usize,
    batch: usize,
) -> Result<([PassConfig; 2], Chain)> {
    let unit = lanes * m;
    let lag = o.chain.unwrap_or((bytes / (8 * unit)).max(1));
    let ma = o.phase_split.unwrap_or(1 << (m.trailing_zeros() / 2));
    let (per0, per1) = (lanes * (m / ma), lanes * ma);
    // Phase 1's lanes: 16 for whole FFTs (at most Ma), C for columns.
    let lo = Options {
        phase_lanes: o
            .phase_lanes
            .or(Some(if lanes == 1 { 16.min(ma) } else { lanes })),
        ..o.clone()
    };
    let [mut p0, mut p1] = l2_pass(&lo, n, m, ma, lanes, io, outer_twiddle, inverse, 0, fit)?;
    let s = o.sequential_ffts.unwrap_or(4);
    p0.s = s.min(per0 / p0.c).max(1);
    p1.s = s.min(per1 / p1.c).max(1);
    let chain = Chain {
        lag,
        groups0: per0 / (p0.c * p0.s),
        groups1: per1 / (p1.c * p1.s),
        unit,
    };
    if chain.groups0 * p0.c * p0.s != per0 || chain.groups1 * p1.c * p1.s != per1 {
        return Err(Error::Input(format!(
            "fft: --chain with --sequential-ffts {s}: S sub-FFT groups in turn must divide each phase's sub-FFTs ({per0} columns of {} lanes, {per1} rows of {})",
            p0.c, p1.c
        )));
    }
    options::check_groups(batch, chain.groups(chain.units(batch, n)))?;
    Ok(([p0, p1], chain))
}

/// The chained dispatch's body ([`Chain`]): a ticket, then phase 0 of FFT j or phase 1 of FFT
/// j − lag (j the ticket's step), or nothing past the batch's ends.
pub(super) fn wgsl(
    o: &mut String,
    phases: &[PassConfig],
    ch: Chain,
    tw_log: u32,
    unpack: Option<Fused>,
) {
    let (p0, p1) = (&phases[0], &phases[1]);
    let (g0, g1, lag) = (ch.groups0, ch.groups1, ch.lag);
    let _ = writeln!(
        o,
        "    _ = src[0];
    if (l == 0u) {{ ticket = atomicAdd(&sync[0], 1u); }}
    let job = workgroupUniformLoad(&ticket);
    let cj = job / {g}u;
    let cr = job % {g}u;
    if (cr < {g0}u) {{
    if (cj < params.batch) {{
    let wg = cj * {g0}u + cr;",
        g = g0 + g1
    );
    phase(o, p0, "src", "params.total", tw_log, None);
    // Every subgroup of a phase-1 workgroup polls the counter itself (on lavapipe, with only
    // invocation 0 polling, phase 1 read early in about one run in five under load; per subgroup
    // that became rare but did not stop, so CPU adapters do not chain: large_run.rs). The H100
    // pays 1-3 % for the per-subgroup polls and is verified with them.
    let _ = writeln!(
        o,
        "    // This workgroup's stores are seen device-wide before its count is.
    storageBarrier();
    if (l == 0u) {{ atomicAdd(&sync[2u + cj], 1u); }}
    }}
    }} else if (cj >= {lag}u && cj - {lag}u < params.batch) {{
    let f = cj - {lag}u;
    // Polled with a read-modify-write.
    if (sg_lane == 0u) {{
        while (atomicAdd(&sync[2u + f], 0u) < {g0}u) {{}}
    }}
    // Every phase-0 store of FFT f is seen by this workgroup's loads.
    storageBarrier();
    let wg = f * {g1}u + cr - {g0}u;"
    );
    // params.batch counts units here; phase 1 has groups1·C·S sub-FFTs a unit.
    let total = format!("(params.batch * {}u)", g1 * p1.c * p1.s);
    phase(o, p1, "dst", &total, tw_log, unpack);
    let _ = writeln!(
        o,
        "    if (l == 0u && atomicAdd(&sync[2u + f], 1u) == {last}u) {{ atomicStore(&sync[2u + f], 0u); }}
    }}
    if (l == 0u && atomicAdd(&sync[1], 1u) + 1u == params.groups) {{
        atomicStore(&sync[0], 0u);
        atomicStore(&sync[1], 0u);
    }}",
        last = g0 + g1 - 1
    );
}
