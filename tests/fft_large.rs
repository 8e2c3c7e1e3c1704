//! FFTs past one workgroup (src/algo/fft/large.rs) on the GPU against rustfft in f64: every size
//! up to 2^24, both orders, forward and inverse, complex, real and real-pair, every split of one
//! size, the lanes / elements / sequential overrides, the plan JSON and the trace pass by pass.
mod common;

use common::{cplx, gpu, random_f32 as random, try_run};
use stagewise::algo::AlgoOptions;
use stagewise::algo::fft::large::to_rows;
use stagewise::algo::fft::model::{self, C64};
use stagewise::algo::fft::trace::PassKind;
use stagewise::algo::fft::{Kernel, Options, Order};
use stagewise::data::Data;

fn run(o: &Options, x: &[f32], trace: bool) -> stagewise::algo::RunResult {
    try_run(
        &AlgoOptions::Fft(o.clone()),
        "workgroup",
        Data::from_f32(x),
        trace,
    )
    .unwrap_or_else(|e| panic!("{o:?}: {e}"))
}

/// Runs `o` on `batch` random complex signals and checks every FFT against rustfft in the
/// large plan's layout (natural, or rows for --order raw).
fn check(o: &Options, n: usize, batch: usize, seed: u64) -> stagewise::algo::RunResult {
    let x = random(2 * n * batch, seed);
    let r = run(o, &x, false);
    assert_eq!(r.extra["kernel"], "large", "{o:?}");
    assert!(r.verified, "{o:?}: {:?}", r.mismatch);
    let split = (
        r.extra["split"][0].as_u64().unwrap() as usize,
        r.extra["split"][1].as_u64().unwrap() as usize,
    );
    let got = cplx(&r.output.f32s());
    let tol = model::tolerance(n);
    for b in 0..batch {
        let want = model::dft(&cplx(&x[2 * n * b..2 * n * (b + 1)]), o.inverse);
        let want = if o.order == Order::Raw {
            to_rows(&want, split)
        } else {
            want
        };
        let err = model::rel_error(&got[n * b..n * (b + 1)], &want);
        assert!(err <= tol, "{o:?} FFT {b}: error {err:.3e} > {tol:.1e}");
    }
    r
}

fn large(n: usize) -> Options {
    Options {
        size: Some(n),
        kernel: Kernel::Large,
        ..Default::default()
    }
}

#[test]
fn every_size_both_orders_both_directions() {
    let _ = gpu();
    for log_n in 1..=16u32 {
        let n = 1usize << log_n;
        for (order, inverse) in [
            (Order::Natural, false),
            (Order::Raw, false),
            (Order::Natural, true),
        ] {
            let mut o = large(n);
            o.order = order;
            o.inverse = inverse;
            o.batch = 3;
            check(&o, n, 3, log_n as u64);
        }
    }
}

/// Past one workgroup `auto` picks the large plan by itself; the largest sizes once each.
#[test]
fn largest_sizes_run_as_large_plans() {
    let _ = gpu();
    for log_n in [17u32, 20, 22, 24] {
        let n = 1usize << log_n;
        let o = Options {
            size: Some(n),
            ..Default::default()
        };
        let r = check(&o, n, 1, 100 + log_n as u64);
        assert_eq!(r.passes.len(), 2, "2^{log_n}: {:?}", r.passes);
    }
}

#[test]
fn every_split_and_shape_override() {
    let _ = gpu();
    let n = 4096;
    for l1 in 1..12 {
        let mut o = large(n);
        o.split = Some(1 << l1);
        o.batch = 2;
        let r = check(&o, n, 2, l1 as u64);
        assert_eq!(r.extra["split"][0], 1u64 << l1);
    }
    // Exchange parts: the positions' top bits split the exchange (one pass of 4096 and two of 64).
    for (parts, split) in [
        (2, None),
        (4, None),
        (8, None),
        (4, Some(64)),
        (8, Some(64)),
    ] {
        let mut o = large(n);
        o.exchange_parts = Some(parts);
        o.split = split;
        o.sequential_ffts = Some(2);
        o.batch = 3;
        let r = check(&o, n, 3, 900 + parts as u64);
        let plan = r.extra["plan"].as_array().unwrap();
        assert!(
            plan.iter()
                .filter(|p| p["kind"] == "fft")
                .all(|p| p["parts"] == parts as u64)
        );
    }
    for (c, e, s) in [(1, 2, 1), (2, 4, 3), (4, 8, 2), (8, 16, 1), (16, 8, 4)] {
        let mut o = large(n);
        o.split = Some(64);
        o.ffts_per_workgroup = Some(c);
        o.elements_per_invocation = Some(e);
        o.sequential_ffts = Some(s);
        o.batch = 5;
        let r = check(&o, n, 5, (c * 100 + e * 10 + s) as u64);
        for p in r.extra["plan"].as_array().unwrap() {
            if p["kind"] == "fft" {
                assert_eq!(p["lanes"], c as u64);
                assert_eq!(p["sequential"], s as u64);
            }
        }
    }
}

#[test]
fn inverse_of_forward_is_n_times_x() {
    let _ = gpu();
    let n = 1 << 15;
    let x = random(2 * n, 7);
    let fwd = run(&large(n), &x, false);
    let mut o = large(n);
    o.inverse = true;
    let back = run(&o, &fwd.output.f32s(), false);
    let got = cplx(&back.output.f32s());
    let want: Vec<C64> = cplx(&x).iter().map(|v| v * n as f64).collect();
    let err = model::rel_error(&got, &want);
    assert!(err <= 2.0 * model::tolerance(n), "error {err:.3e}");
}

#[test]
fn real_and_real_pair_past_one_workgroup() {
    let _ = gpu();
    for log_n in [3u32, 9, 14, 17] {
        let n = 1usize << log_n;
        for inverse in [false, true] {
            // Real: N reals → N/2 bins, bin 0 = DC + i·Nyquist.
            let x = random(n * 3, log_n as u64);
            let mut o = large(n);
            o.real = true;
            o.inverse = inverse;
            o.batch = 3;
            let r = run(&o, &x, false);
            assert!(r.verified, "real 2^{log_n}: {:?}", r.mismatch);
            let got = cplx(&r.output.f32s());
            for b in 0..3 {
                let xs: Vec<C64> = x[n * b..n * (b + 1)]
                    .iter()
                    .map(|&v| C64::new(v as f64, 0.0))
                    .collect();
                let want = model::real_natural(&model::dft(&xs, inverse));
                let err = model::rel_error(&got[n / 2 * b..n / 2 * (b + 1)], &want);
                assert!(err <= model::tolerance(n), "real 2^{log_n} {b}: {err:.3e}");
            }
            // Real pair: x + iy → bins 0 … N/2 of each.
            let z = random(2 * n, 50 + log_n as u64);
            let mut o = large(n);
            o.real_pair = true;
            o.inverse = inverse;
            let r = run(&o, &z, false);
            assert!(r.verified, "pair 2^{log_n}: {:?}", r.mismatch);
            let got = cplx(&r.output.f32s());
            let part = |f: fn(&C64) -> f64| -> Vec<C64> {
                let v: Vec<C64> = cplx(&z).iter().map(|c| C64::new(f(c), 0.0)).collect();
                model::dft(&v, inverse)[..n / 2 + 1].to_vec()
            };
            let l = n / 2 + 1;
            assert!(model::rel_error(&got[..l], &part(|c| c.re)) <= model::tolerance(n));
            assert!(model::rel_error(&got[l..], &part(|c| c.im)) <= model::tolerance(n));
        }
    }
}

#[test]
fn plan_json_and_trace_pass_by_pass() {
    let _ = gpu();
    let n = 1024;
    let mut o = large(n);
    o.split = Some(32);
    let x = random(2 * n, 3);
    let r = run(&o, &x, true);
    assert!(r.verified, "{:?}", r.mismatch);
    let kinds: Vec<&str> = r.extra["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["fft", "twiddle", "fft", "permute"]);
    // The permutation: k1 (the top 5 bits of the row index) to the bottom, k2 up by 5.
    let m = r.extra["plan"][3]["matrix"].as_array().unwrap();
    assert_eq!(m.len(), 10);
    // Three stages: input, columns, rows; the columns stage is the model's twiddled column FFTs.
    let kinds: Vec<PassKind> = r
        .stages
        .iter()
        .map(|s| s.fft_pass().unwrap().kind)
        .collect();
    assert_eq!(kinds, [PassKind::Input, PassKind::Columns, PassKind::Rows]);
    let cols = stagewise::algo::fft::large::columns_model(&cplx(&x), (32, 32), false);
    let got = cplx(&r.stages[1].data.f32s());
    assert!(model::rel_error(&got, &cols) <= model::tolerance(n));
    assert!(r.stages[1].fft_pass().unwrap().twiddled);
    assert!(r.stages[2].fft_pass().unwrap().transposed);
    let want = model::dft(&cplx(&x), false);
    assert!(model::rel_error(&cplx(&r.stages[2].data.f32s()), &want) <= model::tolerance(n));
}

#[test]
fn what_the_large_plan_refuses() {
    let _ = gpu();
    let err = common::fft_error;
    let mut o = large(1024);
    o.split = Some(24);
    assert!(err(o, 2048).contains("--split must be a power of two"));
    let mut o = large(1024);
    o.split = Some(1024);
    assert!(err(o, 2048).contains("2 ≤ N1 < N"));
    let mut o = large(1024);
    o.real = true;
    o.order = Order::Raw;
    assert!(err(o, 1024).contains("natural order only"));
}
