//! The phase variants' plans: `transposition` (every phase inside one dispatch per segment) and
//! `global` (one dispatch per phase).

use super::*;

const TRANSPOSITION: &str = include_str!("../../../shaders/oddeven/transposition.wgsl");
const GLOBAL: &str = include_str!("../../../shaders/oddeven/global.wgsl");

// transposition: one workgroup per segment

pub(super) fn check_transposition(caps: &Caps, s: &Shape, trace: bool) -> Result<()> {
    if s.seg > caps.words {
        return Err(Error::Limit(format!(
            "transposition keeps the whole array in one workgroup's memory: N = {} needs {} bytes, this adapter has {} (max_compute_workgroup_storage_size), i.e. at most {} keys; use --segment, merge-split or batcher",
            s.seg,
            s.seg * 4,
            caps.words * 4,
            caps.words
        )));
    }
    if trace && s.seg * s.n > 1 << 22 {
        return Err(Error::Limit(format!(
            "a transposition trace writes the array after each of its {} phases: {} × {} words is above the 4 Mi-word trace limit; use a smaller N (or --segment) or drop --trace",
            s.seg, s.seg, s.n
        )));
    }
    Ok(())
}

/// The transposition kernel's unroll factor U and the loop iterations one invocation runs (every
/// loop of the shader counted, as llvmpipe counts them: every entry of a loop costs one more than
/// its iterations, so a phase costs (⌈owners / (U·W)⌉ + 1) + 2, plus ⌈L / (U·W)⌉ + 1 when traced;
/// measured on lavapipe: L = 8192 with 13 or 14 invocations, let through at one less a phase,
/// ended wrong).
pub(super) fn transposition_loops(seg: usize, wg: usize, trace: bool) -> (usize, u64) {
    let owners = seg.div_ceil(2);
    let unroll = owners.div_ceil(wg).clamp(1, MAX_UNROLL);
    let per = |items: usize| items.div_ceil(unroll * wg) as u64 + 1;
    let phase = per(owners) + 2 + if trace { per(seg) } else { 0 };
    let copies = 2 * (seg.div_ceil(wg) as u64 + 1);
    (unroll, seg as u64 * phase + copies + 1)
}

pub(super) struct Traced {
    pub(super) plan: Plan,
    pub(super) out: Region,
    /// (data, flags) buffers the kernels write per stage (transposition), else empty.
    pub(super) trace: Option<(wgpu::Buffer, wgpu::Buffer)>,
}

pub(super) fn plan_transposition(
    gpu: &Gpu,
    caps: &Caps,
    s: &Shape,
    data: &wgpu::Buffer,
    trace: bool,
) -> Result<Traced> {
    check_transposition(caps, s, trace)?;
    let wg = caps.wg_max.min(s.seg.div_ceil(2) as u32).max(1);
    let (unroll, iters) = transposition_loops(s.seg, wg as usize, trace);
    // Past the driver's loop limit the kernel would silently stop sorting: refused.
    if let Some(limit) = gpu.loop_limit().map(u64::from)
        && iters + 16 > limit
    {
        let max_wg = caps_of(gpu).wg_max.min(s.seg.div_ceil(2) as u32).max(1) as usize;
        let min_wg = (1..=max_wg)
            .find(|&w| transposition_loops(s.seg, w, trace).1 + 16 <= limit)
            .map(|w| format!("use --threads ≥ {w}"))
            .unwrap_or_else(|| "use --segment or batcher".into());
        return Err(Error::Limit(format!(
            "transposition of L = {} with {wg} invocations loops {iters} times per invocation; this driver (llvmpipe) stops a shader after {limit} loop iterations (LP_MAX_TGSI_LOOP_ITERATIONS): {min_wg}",
            s.seg
        )));
    }
    let call = |f: &str| {
        (0..unroll)
            .map(|u| format!("            {f}").replace("#", &format!("{u}u")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let src = source(
        TRANSPOSITION,
        s.dtype,
        s.desc,
        &[
            ("WG", wg.to_string()),
            ("TILE", s.seg.to_string()),
            ("UNROLL", unroll.to_string()),
            ("OWNERS", call("owner(i + # * WG, ph, L, owners, base, n);")),
            ("TRACE", call("trace_word(x + # * WG, ph, L, base, n);")),
        ],
    );
    let pipe = gpu.pipeline("oddeven transposition", &src, "transposition")?;
    let words = if trace { s.seg * s.n } else { 1 };
    let tr_data = gpu.storage_poisoned("oddeven trace data", words, POISON)?;
    let tr_swap = gpu.storage_poisoned("oddeven trace flags", words, POISON)?;
    let u = gpu.uniform(
        "oddeven transposition params",
        &[s.n as u32, s.seg as u32, trace as u32, s.nseg() as u32],
    )?;
    let bg = gpu.bind(&pipe, &[data, &u, &tr_data, &tr_swap])?;
    let mut plan = Plan::default();
    let label = if s.segmented {
        format!(
            "{} segments × {} phases, one workgroup each ({wg} invocations)",
            s.nseg(),
            s.seg
        )
    } else {
        format!(
            "{} phases in one workgroup ({wg} invocations, {} owners)",
            s.seg,
            s.seg.div_ceil(2)
        )
    };
    plan.push(label, &pipe, bg, grid(s.nseg() as u32)).capture = if trace {
        vec![Region::whole(&tr_data), Region::whole(&tr_swap)]
    } else {
        vec![]
    };
    plan.keep.push(u);
    Ok(Traced {
        plan,
        out: Region::words(data, s.n),
        trace: Some((tr_data, tr_swap)),
    })
}

// ---------------------------------------------------------------------------------------------
// global: one dispatch per phase

pub(super) fn plan_global(
    gpu: &Gpu,
    s: &Shape,
    data: &wgpu::Buffer,
    flags: &wgpu::Buffer,
    trace: bool,
) -> Result<Plan> {
    if s.n > MAX_GLOBAL {
        return Err(Error::Limit(format!(
            "global runs one dispatch per phase: N = {} would be {} dispatches; it takes N ≤ 2^20",
            s.n, s.n
        )));
    }
    if trace && s.n > 2048 {
        return Err(Error::Limit(format!(
            "a global trace reads the array back after each of its {} phases; trace N ≤ 2048",
            s.n
        )));
    }
    let src = source(GLOBAL, s.dtype, s.desc, &[]);
    let pipe = gpu.pipeline("oddeven global", &src, "phase")?;
    let groups = grid((s.n.div_ceil(2) as u32).div_ceil(256));
    let mut plan = Plan::default();
    // Untraced: two bind groups (even, odd) shared by all phases.
    let mut shared = Vec::new();
    if !trace {
        for parity in 0..2u32 {
            let u = gpu.uniform("oddeven global params", &[s.n as u32, parity, 0, 0])?;
            shared.push(gpu.bind(&pipe, &[data, &u, flags])?);
            plan.keep.push(u);
        }
    }
    for ph in 0..s.n {
        let parity = (ph % 2) as u32;
        let bg = if trace {
            let u = gpu.uniform("oddeven global params", &[s.n as u32, parity, 1, ph as u32])?;
            let bg = gpu.bind(&pipe, &[data, &u, flags])?;
            plan.keep.push(u);
            bg
        } else {
            shared[parity as usize].clone()
        };
        plan.push(
            format!(
                "phase {}: {} pairs",
                ph + 1,
                if parity == 0 { "even" } else { "odd" }
            ),
            &pipe,
            bg,
            groups,
        )
        .capture = if trace {
            vec![Region::words(data, s.n), Region::words(flags, s.n)]
        } else {
            vec![]
        };
    }
    Ok(plan)
}
