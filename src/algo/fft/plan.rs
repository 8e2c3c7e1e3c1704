//! The teaching kernel's WGSL (with its trace) and the plan of one run, on whichever kernel.

use super::*;

/// Twiddles w[k] = exp(∓2πik/N), k < N/2, in f64 rounded to f32 (conjugated for the inverse).
pub(super) fn twiddles(n: usize, inverse: bool) -> Vec<u32> {
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut v = Vec::with_capacity(n);
    for k in 0..(n / 2).max(1) {
        let a = sign * std::f64::consts::TAU * k as f64 / n as f64;
        v.push((a.cos() as f32).to_bits());
        v.push((a.sin() as f32).to_bits());
    }
    v
}

/// The WGSL for a configuration.
pub fn shader_source(cfg: &Config, trace: bool) -> String {
    let load = if cfg.mode == Mode::Real {
        "v[j] = vec2<f32>(src[b * N + x], 0.0);"
    } else {
        "v[j] = src[b * N + x];"
    };
    let store = match cfg.mode {
        Mode::Complex => {
            "for (var j = 0u; j < E; j++) {
        let x = t + j * W;
        var k = x;
        if (NATURAL) { k = F(x); }
        dst[b * N + k] = v[j];
    }"
        }
        Mode::Real => {
            "// Keep the even elements (slots 0, 2, 4, …): compact index c = t + m*W. Thread 0's
    // second element (raw position W) is the Nyquist term: packed into element 0.
    for (var m = 0u; m < HALF_E; m++) {
        let c = t + m * W;
        var val = v[2u * m];
        if (c == 0u) { val = vec2<f32>(v[0].x, v[1].x); }
        var k = c;
        if (NATURAL) { k = rev(c, LOGN - 1u); }
        dst[b * (N / 2u) + k] = val;
    }"
        }
        Mode::Pair => {
            "// Unpack x + iy in raw order: out_x[T] = (z[T] + conj z[P]) / 2,
    // out_y[T] = (z[T] - conj z[P]) / 2i with P = F_inv(-F(T)).
    for (var j = 0u; j < E; j++) {
        sre[t + j * W] = v[j].x;
        sim[t + j * W] = v[j].y;
    }
    workgroupBarrier();
    for (var j = 0u; j < E; j++) {
        let x = t + j * W;
        let f = F(x);
        let p = F_inv((N - f) & (N - 1u));
        let zp = vec2<f32>(sre[p], -sim[p]);
        let z = v[j];
        let xs = 0.5 * (z + zp);
        let d = z - zp;
        let ys = 0.5 * vec2<f32>(d.y, -d.x);
        if (NATURAL) {
            if (f <= N / 2u) {
                let l = N / 2u + 1u;
                dst[b * 2u * l + f] = xs;
                dst[b * 2u * l + l + f] = ys;
            }
        } else {
            dst[b * 2u * N + x] = xs;
            dst[b * 2u * N + N + x] = ys;
        }
    }"
        }
    };
    let sh = cfg.shared_len();
    let (decl, pos_out, pos_in) = if trace {
        (
            format!(
                "@group(0) @binding(4) var<storage, read_write> trace_buf: array<u32>;
var<workgroup> spos: array<u32, {sh}>;
var<private> tracing: bool;
// One record per (step, logical position): re, im, owner thread, lo (1) / hi (0).
fn tr(stage: u32, p: u32, val: vec2<f32>, owner: u32, lo: bool) {{
    if (!tracing) {{ return; }}
    let i = (stage * N + p) * 4u;
    trace_buf[i] = bitcast<u32>(val.x);
    trace_buf[i + 1u] = bitcast<u32>(val.y);
    trace_buf[i + 2u] = owner;
    trace_buf[i + 3u] = select(0u, 1u, lo);
}}"
            ),
            "spos[m * W + t] = pos[out_slot];",
            "pos[in_slot] = spos[m * W + partner];",
        )
    } else {
        (
            "fn tr(stage: u32, p: u32, val: vec2<f32>, owner: u32, lo: bool) {}".to_string(),
            "",
            "",
        )
    };
    let mut src = specialize(
        SHADER,
        &[
            ("N", cfg.n.to_string()),
            ("E", cfg.e.to_string()),
            ("W", cfg.w.to_string()),
            ("LOGN", cfg.log_n.to_string()),
            ("LOGE", cfg.log_e.to_string()),
            ("HALF_E", (cfg.e / 2).to_string()),
            (
                "MODE",
                match cfg.mode {
                    Mode::Complex => "0",
                    Mode::Real => "1",
                    Mode::Pair => "2",
                }
                .to_string(),
            ),
            ("NATURAL", cfg.natural.to_string()),
            ("SH", sh.to_string()),
            (
                "SRC_T",
                if cfg.mode == Mode::Real {
                    "f32"
                } else {
                    "vec2<f32>"
                }
                .to_string(),
            ),
            ("TRACE_DECL", decl),
            ("TRACE_POS_OUT", pos_out.to_string()),
            ("TRACE_POS_IN", pos_in.to_string()),
            ("LOAD", load.to_string()),
            ("STORE", store.to_string()),
        ],
    );
    if trace {
        src = src.replace(
            "if (b >= params.batch) { return; }",
            "if (b >= params.batch) { return; }\n    tracing = b == 0u;",
        );
    }
    src.replace("{{TRACE}}", "tr")
}

/// The plan: one dispatch of `batch` workgroups. Returns the plan and the trace buffer (if any).
pub fn plan(
    gpu: &Gpu,
    cfg: &Config,
    fast: Option<&codegen::FastConfig>,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
    trace: bool,
) -> Result<(Plan, Option<wgpu::Buffer>)> {
    if let Some(f) = fast {
        return Ok((plan_fast(gpu, cfg, f, src, dst)?, None));
    }
    let source = shader_source(cfg, trace);
    let p = gpu.pipeline("fft", &source, "main")?;
    let tw = gpu.storage_init("fft twiddles", &twiddles(cfg.n, cfg.inverse))?;
    let u = gpu.uniform("fft params", &[cfg.batch as u32])?;
    let tbuf = if trace {
        Some(gpu.storage_poisoned("fft trace", cfg.trace_stages() * cfg.n * 4, u32::MAX)?)
    } else {
        None
    };
    let mut bufs: Vec<&wgpu::Buffer> = vec![src, dst, &tw, &u];
    if let Some(t) = &tbuf {
        bufs.push(t);
    }
    let bg = gpu.bind(&p, &bufs)?;
    let mut plan = Plan::default();
    let label = format!(
        "fft N={} E={} W={} ×{}{}{}",
        cfg.n,
        cfg.e,
        cfg.w,
        cfg.batch,
        match cfg.mode {
            Mode::Complex => "",
            Mode::Real => " real",
            Mode::Pair => " real-pair",
        },
        if cfg.inverse { " inverse" } else { "" }
    );
    let pass = plan.push(label, &p, bg, grid(cfg.batch as u32));
    if let Some(t) = &tbuf {
        pass.capture = vec![Region::whole(t)];
    }
    plan.keep.extend([tw, u]);
    Ok((plan, tbuf))
}

/// The fast or radix kernel's plan: one dispatch of ⌈batch / (G·S)⌉ workgroups.
pub(super) fn plan_fast(
    gpu: &Gpu,
    cfg: &Config,
    f: &codegen::FastConfig,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
) -> Result<Plan> {
    let p = gpu.pipeline(
        "fft fast",
        &if f.radix {
            radix::shader(f)
        } else {
            fast::shader(f)
        },
        "main",
    )?;
    let tw = gpu.storage_init("fft twiddles", &twiddles(cfg.n, cfg.inverse))?;
    let groups = cfg.batch.div_ceil(f.g * f.s);
    let u = gpu.uniform(
        "fft params",
        &[cfg.batch as u32, groups as u32, (cfg.batch * cfg.n) as u32],
    )?;
    let bg = gpu.bind(&p, &[src, dst, &tw, &u])?;
    let mut plan = Plan::default();
    let label = format!(
        "fft {} N={} E={} W={} G={}{} ×{}{}",
        if f.radix { "radix" } else { "fast" },
        cfg.n,
        cfg.e,
        cfg.w,
        f.g,
        if f.s > 1 {
            format!(" S={}", f.s)
        } else {
            String::new()
        },
        cfg.batch,
        if cfg.inverse { " inverse" } else { "" }
    );
    plan.push(label, &p, bg, grid(groups as u32));
    plan.keep.extend([tw, u]);
    Ok(plan)
}

pub(super) fn complexes(bits: &[u32]) -> Vec<C64> {
    bits.chunks_exact(2)
        .map(|c| C64::new(f32::from_bits(c[0]) as f64, f32::from_bits(c[1]) as f64))
        .collect()
}
