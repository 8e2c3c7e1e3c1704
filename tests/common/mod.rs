//! Shared test helpers. GPU tests fail (never skip) when no adapter exists.
#![allow(dead_code)]

use stagewise::algo::{self, AlgoOptions, RunRequest, RunResult};
use stagewise::data::{DType, Data};
use stagewise::gpu::Gpu;
use std::sync::OnceLock;

mod scratch;
#[allow(unused_imports)] // not every test binary writes files
pub use scratch::Scratch;

/// One headless device for the whole test binary. Panics (fails the test) without an adapter.
pub fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
            // SAFETY: set once, before the device (and its driver threads) exist.
            unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
        }
        Gpu::headless(None)
            .expect("GPU tests need an adapter (apt-get install mesa-vulkan-drivers)")
    })
}

/// Run `algo` / `variant` on `input` and return the result (panics on error).
pub fn run(algo: &AlgoOptions, variant: &str, input: Data, trace: bool) -> RunResult {
    try_run(algo, variant, input, trace)
        .unwrap_or_else(|e| panic!("{} {variant}: {e}", algo.name()))
}

pub fn try_run(
    algo: &AlgoOptions,
    variant: &str,
    input: Data,
    trace: bool,
) -> stagewise::Result<RunResult> {
    let a = algo.algo();
    let variant = a.info().variant(Some(variant))?;
    let req = RunRequest::new(a, variant, input.dtype, input, trace)?;
    algo::run(a, gpu(), &req)
}

/// Under `STAGEWISE_LIMITS=webgpu` (CI runs the rooms' tests so) a fixed test shape past WebGPU's
/// default limits is refused with a limit error, which is right: `None`. Anywhere else every
/// error fails the test.
pub fn unless_past_limits<T>(r: stagewise::Result<T>, what: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(stagewise::Error::Limit(e)) if webgpu_limits() => {
            eprintln!("{what}: refused under WebGPU's limits: {e}");
            None
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

pub fn webgpu_limits() -> bool {
    std::env::var("STAGEWISE_LIMITS").is_ok_and(|v| v == "webgpu")
}

/// Random bits of `n` elements for `dtype` (f32: finite values plus some NaN/inf/-0 when `specials`).
pub fn random_data(n: usize, dtype: DType, seed: u64, specials: bool) -> Data {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let bits = (0..n)
        .map(|_| match dtype {
            DType::F32 if specials && rng.random_range(0..16) == 0 => [
                0x7fc0_0000,
                0xffc0_0000,
                0x7f80_0000,
                0xff80_0000,
                0x8000_0000,
                0,
            ][rng.random_range(0..6)],
            DType::F32 => rng.random_range(-1.0e6f32..1.0e6).to_bits(),
            _ => rng.random::<u32>(),
        })
        .collect();
    Data::new(dtype, bits)
}

/// The stagewise binary built for integration tests.
pub fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_stagewise"));
    // The tests check what each option does; wisdom measured on this GPU (shipped for the H200)
    // would fill the options they leave unset. tests/wisdom.rs names its files itself.
    c.env("STAGEWISE_WISDOM", "off");
    c.env(
        "WGPU_BACKEND",
        std::env::var("WGPU_BACKEND").unwrap_or_else(|_| "vulkan".into()),
    );
    c
}

/// Runs the binary with `args`, which must succeed and print one JSON object; returns it.
pub fn run_ok(args: &[&str]) -> serde_json::Value {
    let out = bin().args(args).output().expect("run stagewise");
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON object ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The error an FFT run of `len` zeros with `o` ends in ("no error" when it runs).
pub fn fft_error(o: stagewise::algo::fft::Options, len: usize) -> String {
    try_run(
        &AlgoOptions::Fft(o),
        "workgroup",
        Data::from_f32(&vec![0.0; len]),
        false,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_else(|| "no error".into())
}

/// `len` f32 numbers uniform in [-1, 1) from `seed` (FFT signals: interleaved re, im).
pub fn random_f32(len: usize, seed: u64) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// Interleaved (re, im) f32 numbers as f64 complex values.
pub fn cplx(v: &[f32]) -> Vec<stagewise::algo::fft::model::C64> {
    v.chunks_exact(2)
        .map(|c| stagewise::algo::fft::model::C64::new(c[0] as f64, c[1] as f64))
        .collect()
}

/// Run `a` / `variant` on `n` random u32 and record it under the memory lens (32-lane warps).
pub fn try_record(
    a: &AlgoOptions,
    variant: &str,
    n: usize,
) -> stagewise::Result<stagewise::lens::LensReport> {
    record_on(gpu(), a, variant, n)
}

/// [`try_record`] on the device `g`.
pub fn record_on(
    g: &Gpu,
    a: &AlgoOptions,
    variant: &str,
    n: usize,
) -> stagewise::Result<stagewise::lens::LensReport> {
    let algo = a.algo();
    let req = RunRequest {
        variant: algo.info().variant(Some(variant)).unwrap(),
        dtype: DType::U32,
        input: random_data(n, DType::U32, n as u64, false),
        trace: false,
    };
    let normal = algo::run(algo, g, &req).unwrap();
    assert!(normal.verified);
    stagewise::lens::record_run(algo, g, &req, &normal, 32)
}

/// [`try_record`], panicking on error.
pub fn record(a: &AlgoOptions, variant: &str, n: usize) -> stagewise::lens::LensReport {
    try_record(a, variant, n).unwrap_or_else(|e| panic!("{} {variant}: {e}", a.name()))
}

/// A wisdom file for `gpu` (its adapter, so it is used, not refused as another GPU's): for each
/// (algorithm, variant, key, choice), an entry at 2^16 for every element type the room takes.
pub fn wisdom_for(
    gpu: &Gpu,
    rows: &[(&str, &str, serde_json::Value, serde_json::Value)],
) -> stagewise::wisdom::Wisdom {
    let mut w = stagewise::wisdom::Wisdom::new(gpu, "2026-01-01T00:00:00Z".into());
    for (algorithm, variant, key, choice) in rows {
        let a = AlgoOptions::by_name(algorithm).expect("a room");
        for &dtype in a.algo().info().dtypes {
            w.put(stagewise::wisdom::Entry {
                case: format!("{algorithm}-{variant}-{}-{key}", dtype.name()),
                algorithm: algorithm.to_string(),
                variant: variant.to_string(),
                dtype,
                log_n: 16,
                key: key.as_object().cloned().unwrap_or_default(),
                choice: choice.as_object().cloned().unwrap_or_default(),
                ms: 1.0,
                default_ms: 2.0,
                runner_up: None,
                timed: 2,
                refused: 0,
                wrong: 0,
            });
        }
    }
    w
}
