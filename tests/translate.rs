//! Portability: every kernel Stagewise compiles — each algorithm's variants run and planned on
//! lavapipe, and planned for an H100's limits and for WebGPU's defaults — translated by naga (the
//! naga of wgpu 30) to SPIR-V (checked by `spirv-val`), MSL, HLSL and GLSL ES 3.1, as wgpu's
//! Vulkan, Metal, DX12 and GL backends would. `cargo test --test translate -- --nocapture` prints
//! the kernels covered. Every kernel also keeps WGSL's operator-mixing rules (naga does not check
//! them; browsers do), and the FFT's large plans (complex and real, 2^13 to 2^24) are planned too.

mod common;
use common::Scratch;

#[path = "common/strict_wgsl.rs"]
mod strict_wgsl;
use naga::back::{glsl, hlsl, msl, spv};
use naga::valid::{Capabilities, ValidationFlags, Validator};
use stagewise::algo::{self, AlgoOptions, RunRequest};
use stagewise::data::{self, DType};
use stagewise::gpu::Gpu;
use stagewise::gpu::collect::{CompiledKernel, Shape};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The MSL version wgpu 30's Metal backend asks naga for on current systems (macOS / iOS 26: the
/// newest the OS supports, wgpu-hal metal/adapter.rs).
const MSL_VERSION: (u8, u8) = (4, 0);
/// Vulkan 1.3 (lavapipe, the H100): wgpu-hal writes SPIR-V 1.6.
const SPIRV_VERSION: (u8, u8) = (1, 6);
const SPIRV_ENV: &str = "vulkan1.3";
/// The lowest shader model with wave (subgroup) operations, which wgpu's DX12 backend needs for them.
const HLSL_MODEL: hlsl::ShaderModel = hlsl::ShaderModel::V6_0;

/// A kernel set: which adapter's limits its plans were built for.
struct Set {
    name: &'static str,
    limits: wgpu::Limits,
    subgroups: bool,
    /// (algorithm, variant, how) → kernels; how: "run N" or "plan N".
    kernels: Vec<(String, CompiledKernel)>,
}

fn dtypes(a: &dyn algo::Algorithm) -> Vec<DType> {
    match a.fixed_dtype() {
        Some(d) => vec![d],
        None => a.info().dtypes.to_vec(),
    }
}

/// Every algorithm's variants at their default options: planned (`bench_case`) at `log_ns`, and on a
/// device that runs them (`runs`), run traced and untraced at small sizes.
fn collect(
    gpu: &Gpu,
    log_ns: impl Fn(u32, u32) -> Vec<u32>,
    runs: bool,
) -> Vec<(String, CompiledKernel)> {
    let mut out = Vec::new();
    let mut take = |origin: String, log: &stagewise::gpu::collect::KernelLog| {
        for k in log.lock().unwrap().drain(..) {
            out.push((origin.clone(), k));
        }
    };
    for opts in AlgoOptions::all_defaults() {
        let a = opts.algo();
        let info = a.info();
        for variant in info.variants {
            for dtype in dtypes(a) {
                let (g, log) = gpu.collecting();
                let (lo, hi) = a.bench_log_n();
                for l in log_ns(lo, hi) {
                    // A size a variant refuses (e.g. past one workgroup) builds nothing.
                    let _ = a.bench_case(&g, variant, 1 << l, dtype);
                    take(format!("{} {} plan 2^{l}", info.name, variant.name), &log);
                }
                if !runs {
                    continue;
                }
                for (n, trace) in [(16usize, true), (4096, false)] {
                    let input = data::generate(data::Fill::Random, n, dtype, 7);
                    let req = RunRequest {
                        variant,
                        dtype,
                        input,
                        trace,
                    };
                    let r = algo::run(a, &g, &req);
                    if let Ok(r) = &r {
                        assert!(
                            r.verified,
                            "{} {} n={n}: {:?}",
                            info.name, variant.name, r.mismatch
                        );
                    }
                    take(format!("{} {} run {n}", info.name, variant.name), &log);
                }
            }
        }
    }
    // Generated kernels no default reaches at these sizes: the FFT's large plans (complex, real;
    // one pass, two passes, columns chained) at sizes past one workgroup.
    let fft = |size: usize, real: bool| {
        AlgoOptions::Fft(stagewise::algo::fft::Options {
            size: Some(size),
            real,
            ..Default::default()
        })
    };
    for l in [13u32, 15, 17, 20, 23, 24] {
        for real in [false, true] {
            let opts = fft(1 << l, real);
            let a = opts.algo();
            let variant = &a.info().variants[0];
            let (g, log) = gpu.collecting();
            let _ = a.bench_case(&g, variant, 1 << l, DType::F32);
            take(format!("fft size 2^{l} real {real} plan"), &log);
        }
    }
    out
}

fn sets() -> Vec<Set> {
    let gpu = common::gpu();
    let mut sets = vec![Set {
        name: "lavapipe",
        limits: gpu.limits.clone(),
        subgroups: gpu.has_subgroups(),
        kernels: collect(gpu, |lo, hi| vec![lo, (lo + hi) / 2], true),
    }];
    for (name, shape) in [("h100", Shape::h100()), ("webgpu", Shape::webgpu())] {
        let (g, _) = gpu.shaped_like(&shape);
        sets.push(Set {
            name,
            limits: shape.limits.clone(),
            subgroups: shape.subgroups.is_some(),
            kernels: collect(
                &g,
                |lo, hi| (lo..=hi).step_by(2).chain([hi]).collect(),
                false,
            ),
        });
    }
    sets
}

/// What one kernel became: its shape and each backend's verdict (None: translated and valid).
struct Translated {
    shape: String,
    uses_subgroups: bool,
    wg_invocations: u32,
    wg_bytes: u32,
    backends: BTreeMap<&'static str, Option<String>>,
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

fn translate(k: &CompiledKernel, dir: &std::path::Path) -> Result<Translated, String> {
    // naga accepts operator mixes WGSL forbids; browsers' compilers refuse them.
    if let Some(e) = strict_wgsl::mixing_error(&k.source) {
        return Err(format!("WGSL operator mixing, refused by browsers: {e}"));
    }
    // The text the kernel has on adapters whose sin and cos are not known accurate
    // (src/algo/fft/trig.rs) parses and validates too.
    if k.source.contains("vec2<f32>(cos(") {
        let acc = stagewise::algo::fft::trig::accurate(&k.source);
        let m = naga::front::wgsl::parse_str(&acc).map_err(|e| {
            format!(
                "with cis_acc: WGSL parse: {}",
                first_line(&e.emit_to_string(&acc))
            )
        })?;
        Validator::new(ValidationFlags::all(), Capabilities::all())
            .validate(&m)
            .map_err(|e| format!("with cis_acc: {}", first_line(&e.emit_to_string(&acc))))?;
    }
    let module = naga::front::wgsl::parse_str(&k.source)
        .map_err(|e| format!("WGSL parse: {}", first_line(&e.emit_to_string(&k.source))))?;
    let subgroup_caps = Capabilities::SUBGROUP | Capabilities::SUBGROUP_BARRIER;
    let uses_subgroups = Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .is_err();
    let info = Validator::new(ValidationFlags::all(), subgroup_caps)
        .validate(&module)
        .map_err(|e| {
            format!(
                "naga validation: {}",
                first_line(&e.emit_to_string(&k.source))
            )
        })?;
    let (ep_index, ep) = module
        .entry_points
        .iter()
        .enumerate()
        .find(|(_, e)| e.name == k.entry)
        .ok_or_else(|| format!("no entry point {}", k.entry))?;
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| format!("layout: {e}"))?;
    let ep_info = info.get_entry_point(ep_index);
    let wg_bytes: u32 = module
        .global_variables
        .iter()
        .filter(|(h, v)| v.space == naga::AddressSpace::WorkGroup && !ep_info[*h].is_empty())
        .map(|(_, v)| layouter[v.ty].size)
        .sum();
    let [x, y, z] = ep.workgroup_size;
    let shape = format!("wg {x}x{y}x{z}, {wg_bytes} B shared");
    let policies = naga::proc::BoundsCheckPolicies {
        index: naga::proc::BoundsCheckPolicy::Unchecked,
        buffer: naga::proc::BoundsCheckPolicy::Unchecked,
        image_load: naga::proc::BoundsCheckPolicy::Unchecked,
        binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
    };
    let mut backends = BTreeMap::new();

    // SPIR-V, then spirv-val.
    let spv_result = spv::write_vec(
        &module,
        &info,
        &spv::Options {
            lang_version: SPIRV_VERSION,
            bounds_check_policies: policies,
            flags: spv::WriterFlags::empty(),
            ..Default::default()
        },
        Some(&spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: k.entry.clone(),
        }),
    );
    backends.insert(
        "spirv",
        match spv_result {
            Err(e) => Some(format!("naga: {e}")),
            Ok(words) => {
                let path = dir.join(format!("{}.spv", hash(k)));
                std::fs::write(&path, bytemuck::cast_slice(&words)).unwrap();
                let out = std::process::Command::new("spirv-val")
                    .args(["--target-env", SPIRV_ENV])
                    .arg(&path)
                    .output()
                    .expect("spirv-val runs (apt-get install spirv-tools)");
                (!out.status.success()).then(|| {
                    format!(
                        "spirv-val: {}",
                        first_line(&String::from_utf8_lossy(&out.stderr))
                    )
                })
            }
        },
    );

    let msl_result = msl::write_string(
        &module,
        &info,
        &msl::Options {
            lang_version: MSL_VERSION,
            bounds_check_policies: policies,
            ..Default::default()
        },
        &msl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, k.entry.clone())),
            ..Default::default()
        },
    );
    backends.insert("msl", msl_result.err().map(|e| format!("naga: {e}")));

    let mut hlsl_out = String::new();
    let hlsl_options = hlsl::Options {
        shader_model: HLSL_MODEL,
        restrict_indexing: false,
        ..Default::default()
    };
    let hlsl_pipeline = hlsl::PipelineOptions {
        entry_point: Some((naga::ShaderStage::Compute, k.entry.clone())),
    };
    let hlsl_result =
        hlsl::Writer::new(&mut hlsl_out, &hlsl_options, &hlsl_pipeline).write(&module, &info, None);
    backends.insert("hlsl", hlsl_result.err().map(|e| format!("naga: {e}")));

    let mut glsl_out = String::new();
    let glsl_options = glsl::Options {
        version: glsl::Version::new_gles(310),
        ..Default::default()
    };
    let glsl_pipeline = glsl::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: k.entry.clone(),
        multiview: None,
    };
    let glsl_result = glsl::Writer::new(
        &mut glsl_out,
        &module,
        &info,
        &glsl_options,
        &glsl_pipeline,
        policies,
    )
    .and_then(|mut w| w.write());
    backends.insert("glsl", glsl_result.err().map(|e| format!("naga: {e}")));

    Ok(Translated {
        shape,
        uses_subgroups,
        wg_invocations: x * y * z,
        wg_bytes,
        backends,
    })
}

fn hash(k: &CompiledKernel) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    k.source.hash(&mut h);
    k.entry.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Backends a kernel may be refused on, and why (docs/CLI.md, "Backends"): (label prefix, backend,
/// why). Empty: every kernel translates everywhere.
const REFUSED: &[(&str, &str, &str)] = &[];

fn refused(k: &CompiledKernel, backend: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(label, b, _)| k.label.starts_with(label) && *b == backend)
        .map(|(_, _, why)| *why)
}

#[test]
fn every_kernel_translates_to_every_backend() {
    let dir = Scratch::new("translate");
    let sets = sets();
    // Kernel (source, entry) → its translation, once however many sets and runs compile it.
    let mut done: BTreeMap<String, (CompiledKernel, Translated)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut report = String::new();
    let mut per_set: BTreeMap<&str, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    for set in &sets {
        let mut seen = BTreeSet::new();
        let mut origins: BTreeMap<String, String> = BTreeMap::new();
        for (origin, k) in &set.kernels {
            origins.entry(hash(k)).or_insert_with(|| origin.clone());
        }
        for (_, k) in &set.kernels {
            let h = hash(k);
            if !seen.insert(h.clone()) {
                continue;
            }
            if !done.contains_key(&h) {
                match translate(k, &dir) {
                    Ok(t) => {
                        done.insert(h.clone(), (k.clone(), t));
                    }
                    Err(e) => {
                        failures.push(format!("{} {} ({}): {e}", set.name, k.label, k.entry));
                        continue;
                    }
                }
            }
            let (_, t) = &done[&h];
            let counts = per_set.entry(set.name).or_default();
            counts.0 += 1;
            // The set's limits hold the kernel, and only sets with subgroups get subgroup kernels.
            if t.wg_invocations > set.limits.max_compute_invocations_per_workgroup
                || t.wg_bytes > set.limits.max_compute_workgroup_storage_size
            {
                failures.push(format!(
                    "{} {} ({}): {} is past the set's limits",
                    set.name, k.label, k.entry, t.shape
                ));
            }
            if t.uses_subgroups && !set.subgroups {
                failures.push(format!(
                    "{} {} ({}): uses subgroups, which this set has not",
                    set.name, k.label, k.entry
                ));
            }
            let mut ok = Vec::new();
            for (backend, verdict) in &t.backends {
                match (verdict, refused(k, backend)) {
                    (None, None) => {
                        ok.push(*backend);
                        *counts.1.entry(*backend).or_default() += 1;
                    }
                    (None, Some(_)) => failures.push(format!(
                        "{} {} ({}): refused on {backend} but translates: drop the refusal",
                        set.name, k.label, k.entry
                    )),
                    (Some(e), None) => failures.push(format!(
                        "{} {} ({}) on {backend}: {e}",
                        set.name, k.label, k.entry
                    )),
                    (Some(_), Some(_)) => {}
                }
            }
            let _ = writeln!(
                report,
                "{:<8} {:<34} {:<18} {:<28} {:<3} {:<22} first: {}",
                set.name,
                k.label,
                k.entry,
                t.shape,
                if t.uses_subgroups { "sg" } else { "" },
                ok.join(","),
                origins[&h]
            );
        }
    }
    println!("{report}");
    for (set, (n, by)) in &per_set {
        println!("{set}: {n} kernels; translated and valid: {by:?}");
    }
    println!("{} distinct kernels in all", done.len());
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every room contributes to every set, and the sets are not silently small.
    for set in &sets {
        for opts in AlgoOptions::all_defaults() {
            let name = opts.name();
            assert!(
                set.kernels
                    .iter()
                    .any(|(o, _)| o.starts_with(&format!("{name} "))),
                "{}: no kernel of {name}",
                set.name
            );
        }
    }
    // ~90% of what the run showed (164, 137, 126 distinct kernels; every one on all four backends).
    for (set, min) in [("lavapipe", 148), ("h100", 123), ("webgpu", 113)] {
        let n = per_set.get(set).map_or(0, |c| c.0);
        assert!(n >= min, "{set}: {n} kernels, expected at least {min}");
    }
}
