//! The Nabla workgroup FFT on the GPU against rustfft and the CPU model (seed 003).
mod common;

use common::{cplx, gpu, random_f32 as random, try_run, unless_past_limits, webgpu_limits};
use stagewise::algo::AlgoOptions;
use stagewise::algo::fft::model::{self, C64};
use stagewise::algo::fft::{Kernel, NaturalStore, Options, Order};
use stagewise::data::Data;

fn opts(n: usize, e: usize, order: Order) -> Options {
    Options {
        size: Some(n),
        elements_per_invocation: Some(e),
        order,
        ..Default::default()
    }
}

fn run(o: &Options, input: Vec<f32>, trace: bool) -> stagewise::algo::RunResult {
    try_run(
        &AlgoOptions::Fft(o.clone()),
        "workgroup",
        Data::from_f32(&input),
        trace,
    )
    .unwrap_or_else(|e| panic!("{o:?}: {e}"))
}

/// [`run`], except that under `STAGEWISE_LIMITS=webgpu` a shape past its limits must be refused
/// with a limit error: then `None`.
fn try_fft(o: &Options, input: Vec<f32>) -> Option<stagewise::algo::RunResult> {
    let r = try_run(
        &AlgoOptions::Fft(o.clone()),
        "workgroup",
        Data::from_f32(&input),
        false,
    );
    unless_past_limits(r, &format!("{o:?}"))
}

fn out(r: &stagewise::algo::RunResult) -> Vec<C64> {
    cplx(&r.output.f32s())
}

#[test]
fn every_e_w_both_orders_match_rustfft() {
    let _ = gpu();
    for log_n in 1..=11u32 {
        let n = 1usize << log_n;
        for log_e in 1..=log_n {
            let e = 1usize << log_e;
            let x = random(2 * n, (log_n * 100 + log_e) as u64);
            let want = model::dft(&cplx(&x), false);
            for order in [Order::Raw, Order::Natural] {
                let mut o = opts(n, e, order);
                o.kernel = Kernel::Teaching;
                if e > stagewise::algo::fft::MAX_ELEMENTS_PER_INVOCATION {
                    let r = try_run(&AlgoOptions::Fft(o), "workgroup", Data::from_f32(&x), false);
                    let e = r.map(|_| ()).unwrap_err().to_string();
                    assert!(e.contains("at most 1024"), "{e}");
                    continue;
                }
                let Some(r) = try_fft(&o, x.clone()) else {
                    continue;
                };
                assert_eq!(r.extra["kernel"], "teaching");
                assert!(r.verified, "N={n} E={e} {order:?}: {:?}", r.mismatch);
                let expect = if order == Order::Natural {
                    want.clone()
                } else {
                    model::to_raw(&want, e)
                };
                let err = model::rel_error(&out(&r), &expect);
                assert!(
                    err <= model::tolerance(n),
                    "N={n} E={e} {order:?}: error {err}"
                );
            }
        }
    }
}

#[test]
fn f_matches_the_formula_and_the_simulated_schedule() {
    for log_n in 1..=11u32 {
        let n = 1usize << log_n;
        for log_e in 1..=log_n {
            let e = 1usize << log_e;
            let w = n / e;
            let l = log_n - log_e + 1;
            // e by strings: rotate the lower l bits right by one.
            for x in 0..n {
                let bits: Vec<char> = format!("{x:0width$b}", width = log_n as usize)
                    .chars()
                    .collect();
                let (hi, lo) = bits.split_at(bits.len() - l as usize);
                let mut rot = vec![lo[lo.len() - 1]];
                rot.extend_from_slice(&lo[..lo.len() - 1]);
                let s: String = hi.iter().chain(rot.iter()).collect();
                let want_e = usize::from_str_radix(&s, 2).unwrap_or(0);
                assert_eq!(model::e_map(x, log_n, log_e), want_e, "e N={n} E={e} x={x}");
                assert_eq!(model::e_inv(model::e_map(x, log_n, log_e), log_n, log_e), x);
                let f = model::f_map(x, log_n, log_e);
                assert_eq!(f, model::bitrev(model::e_inv(x, log_n, log_e), log_n));
                assert_eq!(model::f_inv(f, log_n, log_e), x);
                // e ∘ bitreverse = bitreverse ∘ g
                assert_eq!(
                    model::e_map(model::bitrev(x, log_n), log_n, log_e),
                    model::bitrev(model::g_map(x, log_n, log_e), log_n)
                );
            }
            // The schedule's final state: thread t's slot j is written to t + j·W and holds
            // DFT[bitreverse(logical position)] — that must be F(t + j·W).
            let steps = model::schedule(n, e);
            assert_eq!(steps.len(), 2 * log_n as usize);
            let last = steps.last().unwrap();
            for p in 0..n {
                let x = last.owner[p] as usize + last.slot[p] as usize * w;
                assert_eq!(model::f_map(x, log_n, log_e), model::bitrev(p, log_n));
                assert_eq!(model::e_map(p, log_n, log_e), x, "X = e(n) holds bitrev(n)");
            }
            // Every step: each thread holds E positions, its pairs are stride apart, lo on top.
            for st in &steps {
                for p in 0..n {
                    assert_eq!(st.lo[p], p & st.stride == 0, "N={n} E={e} {:?}", st.kind);
                    let q = p ^ st.stride;
                    assert_eq!(st.owner[p], st.owner[q], "pair ({p},{q}) in one thread");
                }
                let mut count = vec![0usize; w];
                for &o in &st.owner {
                    count[o as usize] += 1;
                }
                assert!(count.iter().all(|&c| c == e), "E positions per thread");
            }
        }
    }
}

/// The thread holding each logical position, per step, from the GPU trace.
fn owners(r: &stagewise::algo::RunResult) -> Vec<Vec<u64>> {
    r.stages
        .iter()
        .map(|s| {
            s.to_json()["owner"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect()
        })
        .collect()
}

fn los(r: &stagewise::algo::RunResult, s: usize) -> Vec<bool> {
    r.stages[s].to_json()["lo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_bool().unwrap())
        .collect()
}

fn holds(r: &stagewise::algo::RunResult) -> Vec<u64> {
    r.extra["holds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn seed_diagram_16_points_ept2_wg8() {
    let x = random(32, 7);
    let r = run(&opts(16, 2, Order::Raw), x, true);
    assert!(r.verified, "{:?}", r.mismatch);
    let kinds: Vec<&str> = r
        .stages
        .iter()
        .map(|s| s.fft().expect("fft notes").kind.name())
        .collect();
    assert_eq!(
        kinds,
        [
            "input",
            "butterfly",
            "exchange",
            "butterfly",
            "exchange",
            "butterfly",
            "exchange",
            "butterfly"
        ]
    );
    let own = owners(&r);
    // Thread t starts with t and t + 8.
    assert_eq!(own[0], [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]);
    // After the first exchange (t ^ 4): thread 0 traded its hi (8) for thread 4's lo (4).
    assert_eq!(own[2], [0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7]);
    assert_eq!(own[4], [0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7]);
    // At the end thread t holds two consecutive elements 2t, 2t + 1.
    assert_eq!(own[7], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
    assert_eq!(los(&r, 0), (0..16).map(|p| p < 8).collect::<Vec<_>>());
    assert_eq!(los(&r, 7), (0..16).map(|p| p % 2 == 0).collect::<Vec<_>>());
    // X holds Y: the MSB stays, the lower three bits are reversed (thread 1 wrote positions 1
    // and 9, holding outputs 2 and 3 = DFT 4 and 12).
    assert_eq!(
        holds(&r),
        [0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15]
    );
    let last = r.stages[7].to_json();
    let written: Vec<u64> = last["written_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(
        written[2], 1,
        "output 2 (thread 1) is written to position 1"
    );
    assert_eq!(
        written[3], 9,
        "output 3 (thread 1) is written to position 9"
    );
}

#[test]
fn seed_diagram_16_points_ept4_wg4() {
    let x = random(32, 8);
    let r = run(&opts(16, 4, Order::Raw), x, true);
    assert!(r.verified, "{:?}", r.mismatch);
    let kinds: Vec<&str> = r
        .stages
        .iter()
        .map(|s| s.fft().expect("fft notes").kind.name())
        .collect();
    assert_eq!(
        kinds,
        [
            "input",
            "butterfly",
            "regroup",
            "butterfly",
            "exchange",
            "butterfly",
            "exchange",
            "butterfly"
        ]
    );
    let own = owners(&r);
    assert_eq!(own[0], [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    // Columns 2 → 3: no exchange between threads, only a local lo/hi regroup.
    assert_eq!(own[2], own[0]);
    assert_eq!(los(&r, 1), (0..16).map(|p| p & 8 == 0).collect::<Vec<_>>());
    assert_eq!(los(&r, 2), (0..16).map(|p| p & 4 == 0).collect::<Vec<_>>());
    assert_eq!(own[4], [0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3]);
    // Two consecutive elements per thread, looping over the threads twice.
    assert_eq!(own[7], [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3]);
    // Storage indices local|thread: 0|00, 1|00, 0|01, 1|01 … = 0, 4, 1, 5, …; X holds Y.
    assert_eq!(
        holds(&r),
        [0, 4, 2, 6, 8, 12, 10, 14, 1, 5, 3, 7, 9, 13, 11, 15]
    );
    let e_seq: Vec<usize> = (0..16).map(|p| model::e_map(p, 4, 2)).collect();
    assert_eq!(
        e_seq,
        [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]
    );
}

#[test]
fn traces_match_the_model_on_random_input() {
    for (n, e) in [
        (2, 2),
        (8, 2),
        (32, 4),
        (64, 64),
        (128, 8),
        (256, 2),
        (1024, 16),
    ] {
        for inverse in [false, true] {
            let mut o = opts(n, e, Order::Natural);
            o.inverse = inverse;
            let r = run(&o, random(2 * n, n as u64), true);
            assert!(r.verified, "N={n} E={e}: {:?}", r.mismatch);
            let steps = model::schedule(n, e);
            assert_eq!(r.stages.len(), steps.len());
            let vals = model::stage_values(&cplx(&r.input.f32s()), e, inverse);
            for (s, (st, m)) in r.stages.iter().zip(&steps).enumerate() {
                let own: Vec<u32> = owners(&r)[s].iter().map(|&v| v as u32).collect();
                assert_eq!(own, m.owner, "N={n} E={e} step {s}");
                assert_eq!(los(&r, s), m.lo, "N={n} E={e} step {s}");
                let err = model::rel_error(&cplx(&st.data.f32s()), &vals[s]);
                assert!(err <= model::tolerance(n), "N={n} E={e} step {s}: {err}");
                assert_eq!(st.to_json()["data"].as_array().unwrap().len(), n);
            }
        }
    }
}

#[test]
fn nyquist_is_thread_0_second_element() {
    for (n, e) in [
        (2usize, 2usize),
        (16, 2),
        (16, 4),
        (64, 8),
        (512, 4),
        (2048, 16),
    ] {
        let w = n / e;
        let ln = n.trailing_zeros();
        assert_eq!(model::f_map(w, ln, e.trailing_zeros()), n / 2);
        assert_eq!(model::e_map(1, ln, e.trailing_zeros()), w, "e(1) = 1|0");
        let x = random(2 * n, 3);
        let r = run(&opts(n, e, Order::Raw), x.clone(), false);
        let want = model::dft(&cplx(&x), false);
        let got = out(&r)[w];
        assert!((got - want[n / 2]).norm() <= 1e-4 * want[n / 2].norm().max(1.0));
        assert_eq!(r.extra["nyquist"]["raw_position"], w);
        assert_eq!(r.extra["nyquist"]["thread"], 0);
        assert_eq!(r.extra["nyquist"]["element"], 1);
    }
}

#[test]
fn real_pair_unpacks_both_spectra() {
    for (n, e) in [(2, 2), (16, 2), (16, 4), (256, 8), (2048, 8)] {
        let xy = random(2 * n, n as u64 + 11);
        let packed = cplx(&xy);
        let (dx, dy) = model::pair_spectra(&packed);
        // The seed's rule on the CPU model, in raw order.
        let z = model::to_raw(&model::dft(&packed, false), e);
        let (ux, uy) = model::unpack_raw(&z, e);
        assert!(model::rel_error(&ux, &model::to_raw(&dx, e)) < 1e-12);
        assert!(model::rel_error(&uy, &model::to_raw(&dy, e)) < 1e-12);
        for order in [Order::Natural, Order::Raw] {
            let mut o = opts(n, e, order);
            o.real_pair = true;
            let r = run(&o, xy.clone(), false);
            assert!(r.verified, "N={n} E={e}: {:?}", r.mismatch);
            let j = r.output_value().unwrap();
            let parse = |k: &str| -> Vec<C64> {
                j[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|p| C64::new(p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
                    .collect()
            };
            let (gx, gy) = (parse("x"), parse("y"));
            let (wx, wy) = if order == Order::Natural {
                (dx[..=n / 2].to_vec(), dy[..=n / 2].to_vec())
            } else {
                (model::to_raw(&dx, e), model::to_raw(&dy, e))
            };
            assert_eq!(gx.len(), wx.len());
            let tol = model::tolerance(n) * 2.0;
            assert!(model::rel_error(&gx, &wx) <= tol, "x N={n} {order:?}");
            assert!(model::rel_error(&gy, &wy) <= tol, "y N={n} {order:?}");
        }
    }
}

#[test]
fn real_only_keeps_the_even_elements() {
    for (n, e) in [(2usize, 2usize), (16, 2), (16, 4), (128, 16), (1024, 4)] {
        let w = n / e;
        let x = random(n, n as u64 + 5);
        let full = model::dft(
            &x.iter()
                .map(|&v| C64::new(v as f64, 0.0))
                .collect::<Vec<_>>(),
            false,
        );
        for order in [Order::Raw, Order::Natural] {
            let mut o = opts(n, e, order);
            o.real = true;
            let r = run(&o, x.clone(), false);
            assert!(r.verified, "N={n} E={e}: {:?}", r.mismatch);
            let g = out(&r);
            assert_eq!(g.len(), n / 2);
            let tol = model::tolerance(n) * full.iter().map(|c| c.norm()).fold(0.0, f64::max);
            // Element 0: DC + i·Nyquist.
            assert!((g[0].re - full[0].re).abs() <= tol);
            assert!((g[0].im - full[n / 2].re).abs() <= tol, "Nyquist packed");
            #[allow(clippy::needless_range_loop)]
            // c is a bin number in the assertions, not just an index
            for c in 1..n / 2 {
                let k = if order == Order::Raw {
                    // c = t + m·W holds output[t + 2m·W] = DFT[bitreverse_{N−1}(c)].
                    assert_eq!(
                        model::f_map(
                            (c % w) + 2 * (c / w) * w,
                            n.trailing_zeros(),
                            e.trailing_zeros()
                        ),
                        model::bitrev(c, n.trailing_zeros() - 1)
                    );
                    model::bitrev(c, n.trailing_zeros() - 1)
                } else {
                    c
                };
                assert!((g[c] - full[k]).norm() <= tol, "N={n} c={c} {order:?}");
            }
        }
    }
}

#[test]
fn inverse_of_forward_is_n_times_x() {
    for (n, e) in [(2, 2), (16, 4), (256, 4), (2048, 8)] {
        let x = random(2 * n, 99);
        let fwd = run(&opts(n, e, Order::Natural), x.clone(), false);
        let mut o = opts(n, e, Order::Natural);
        o.inverse = true;
        let back = run(&o, fwd.output.f32s(), false);
        assert!(back.verified, "{:?}", back.mismatch);
        let want: Vec<C64> = cplx(&x).iter().map(|c| c * n as f64).collect();
        let err = model::rel_error(&out(&back), &want);
        assert!(err <= 2.0 * model::tolerance(n), "N={n}: {err}");
    }
}

#[test]
fn batches_run_independent_ffts() {
    let (n, e, b) = (64, 4, 7);
    let x = random(2 * n * b, 4);
    let mut o = opts(n, e, Order::Natural);
    o.batch = b;
    let r = run(&o, x.clone(), false);
    assert!(r.verified, "{:?}", r.mismatch);
    let g = out(&r);
    for k in 0..b {
        let want = model::dft(&cplx(&x[k * 2 * n..(k + 1) * 2 * n]), false);
        assert!(model::rel_error(&g[k * n..(k + 1) * n], &want) <= model::tolerance(n));
    }
    // Past 65535 workgroups: a 2D grid.
    let b = 70_001;
    let x = random(4 * b, 5);
    let mut o = opts(2, 2, Order::Raw);
    o.batch = b;
    let r = run(&o, x.clone(), false);
    assert!(r.verified, "{:?}", r.mismatch);
    let g = out(&r);
    let last = cplx(&x[4 * (b - 1)..]);
    assert!((g[2 * (b - 1)] - (last[0] + last[1])).norm() < 1e-5);
}

#[test]
fn largest_sizes_that_fit_workgroup_memory() {
    let g = gpu();
    let max_w = g.limits.max_compute_invocations_per_workgroup as usize;
    for log_n in [12u32, 13] {
        let n = 1usize << log_n;
        if n * 4 > g.limits.max_compute_workgroup_storage_size as usize {
            continue;
        }
        let e = (n / max_w.min(256)).max(2);
        let x = random(2 * n, log_n as u64);
        let r = run(&opts(n, e, Order::Natural), x, false);
        assert!(r.verified, "N={n}: {:?}", r.mismatch);
    }
}

#[test]
fn nan_and_zero_inputs() {
    let n = 16;
    let r = run(&opts(n, 2, Order::Natural), vec![0.0; 2 * n], false);
    assert!(r.verified);
    assert!(r.output.f32s().iter().all(|&v| v == 0.0));
    let mut x = random(2 * n, 1);
    x[6] = f32::NAN;
    let r = run(&opts(n, 2, Order::Natural), x, false);
    assert!(r.verified, "{:?}", r.mismatch);
    assert!(r.output.f32s().iter().any(|v| v.is_nan()), "NaN propagates");
}

#[test]
fn errors_name_the_constraint() {
    let err = common::fft_error;
    let e = err(opts(12, 2, Order::Raw), 24);
    assert!(e.contains("power of two"), "{e}");
    let e = err(opts(16, 3, Order::Raw), 32);
    assert!(e.contains("power of two"), "{e}");
    let e = err(opts(16, 32, Order::Raw), 32);
    assert!(e.contains("2 ≤ E ≤ N"), "{e}");
    let mut o = opts(16, 2, Order::Raw);
    o.workgroup_size = Some(4);
    let e = err(o, 32);
    assert!(e.contains("must equal the size"), "{e}");
    let e = err(opts(16, 2, Order::Raw), 30);
    assert!(e.contains("needs 32 input numbers"), "{e}");
    // Past one workgroup `auto` runs the large plan (tests/fft_large.rs); the teaching kernel
    // names the limit.
    let teaching = |n: usize, e: usize| Options {
        kernel: Kernel::Teaching,
        ..opts(n, e, Order::Raw)
    };
    let big = 1usize << 16;
    let max_w = gpu().limits.max_compute_invocations_per_workgroup as usize;
    let e = err(teaching(big, (big / max_w).max(64)), 2 * big);
    assert!(e.contains("max_compute_workgroup_storage_size"), "{e}");
    let n = 4 * max_w;
    let e = err(teaching(n, 2), 2 * n);
    assert!(e.contains("max_compute_invocations_per_workgroup"), "{e}");
    let mut o = opts(16, 2, Order::Raw);
    o.real = true;
    o.real_pair = true;
    let e = err(o, 32);
    assert!(e.contains("exclude"), "{e}");
}

/// The view draws a traced run (ownership diagram, plots) without panicking; with
/// FFT_VIEW_PNG=path it also writes a rendering for the README.
#[test]
fn view_draws_the_ownership_diagram() {
    use eframe::egui;
    use stagewise::ui::views::{ViewState, fft as view};
    for (n, e) in [(16, 2), (16, 4), (128, 4)] {
        let r = run(&opts(n, e, Order::Raw), random(2 * n, 2), true);
        let last = r.stages.len() - 1;
        let mut state = ViewState::default();
        let mut harness = egui_kittest::Harness::builder()
            .with_size(egui::vec2(1500.0, 1000.0))
            .wgpu()
            .build_ui(|ui| view::show(ui, &r, last, 1, &mut state));
        harness.run();
        if let Ok(path) = std::env::var("FFT_VIEW_PNG")
            && let Ok(img) = harness.render()
        {
            let _ = img.save(format!("{path}_{n}_{e}.png"));
        }
    }
}

// ---- The fast kernel (src/algo/fft/fast.rs) ----

fn fast(n: usize, e: usize, g: Option<usize>, order: Order) -> Options {
    Options {
        size: Some(n),
        elements_per_invocation: Some(e),
        order,
        kernel: Kernel::Fast,
        ffts_per_workgroup: g,
        ..Default::default()
    }
}

/// Every FFT of a batch against rustfft in the output's layout (raw: the teaching layout).
fn check_batch(r: &stagewise::algo::RunResult, x: &[f32], n: usize, e: usize, what: &str) {
    assert!(r.verified, "{what}: {:?}", r.mismatch);
    let g = out(r);
    let b = x.len() / (2 * n);
    assert_eq!(g.len(), b * n, "{what}");
    let natural = r.extra["order"] == "natural";
    let inverse = r.extra["inverse"] == true;
    for k in 0..b {
        let want = model::dft(&cplx(&x[k * 2 * n..(k + 1) * 2 * n]), inverse);
        let want = if natural {
            want
        } else {
            model::to_raw(&want, e)
        };
        let err = model::rel_error(&g[k * n..(k + 1) * n], &want);
        assert!(err <= model::tolerance(n), "{what} FFT {k}: error {err}");
    }
}

/// Run `o` on `x`; None when a forced G (`--ffts-per-workgroup`) does not fit the adapter, which
/// must then be the reason given (workgroup memory or invocations).
fn run_or_misfit(o: &Options, x: &[f32], what: &str) -> Option<stagewise::algo::RunResult> {
    match try_run(
        &AlgoOptions::Fft(o.clone()),
        "workgroup",
        Data::from_f32(x),
        false,
    ) {
        Ok(r) => Some(r),
        Err(stagewise::Error::Limit(m)) if webgpu_limits() => {
            eprintln!("{what}: refused under WebGPU's limits: {m}");
            None
        }
        Err(err) => {
            let m = err.to_string();
            assert!(
                o.ffts_per_workgroup.is_some()
                    && (m.contains("max_compute_workgroup_storage_size")
                        || m.contains("invocations per workgroup")),
                "{what}: {m}"
            );
            None
        }
    }
}

/// Several E per size: the smallest the adapter allows, 8 or 16, and the largest (≤ 64).
fn fast_es(n: usize) -> Vec<usize> {
    let max_w = gpu().limits.max_compute_invocations_per_workgroup as usize;
    let lo = (n / max_w).max(2);
    let mut es = vec![lo, 8.min(n).max(lo), 16.min(n).max(lo), n.min(64)];
    es.sort_unstable();
    es.dedup();
    es
}

#[test]
fn fast_kernel_every_size_e_g_and_order_matches_rustfft() {
    for log_n in 1..=12u32 {
        let n = 1usize << log_n;
        for e in fast_es(n) {
            // (G, batch): one FFT per workgroup; a batch that is not a multiple of G (tail
            // workgroup); the default G.
            for (g, b) in [(Some(1), 2), (Some(3), 5), (None, 7)] {
                for (order, store) in [
                    (Order::Raw, NaturalStore::Direct),
                    (Order::Natural, NaturalStore::Direct),
                    (Order::Natural, NaturalStore::Staged),
                ] {
                    let mut o = fast(n, e, g, order);
                    o.batch = b;
                    o.natural_store = store;
                    let x = random(2 * n * b, (log_n * 1000 + e as u32) as u64);
                    let what = format!("N={n} E={e} G={g:?} B={b} {order:?} {store:?}");
                    let Some(r) = run_or_misfit(&o, &x, &what) else {
                        continue;
                    };
                    assert_eq!(r.extra["kernel"], "fast", "{what}");
                    if let Some(g) = g {
                        assert_eq!(r.extra["ffts_per_workgroup"], g, "{what}");
                    }
                    let want_store = match (order, store) {
                        (Order::Raw, _) => serde_json::Value::Null,
                        (_, NaturalStore::Direct) => "direct".into(),
                        (_, NaturalStore::Staged) => "staged".into(),
                    };
                    assert_eq!(r.extra["natural_store"], want_store, "{what}");
                    check_batch(&r, &x, n, e, &what);
                }
            }
        }
    }
}

#[test]
fn fast_kernel_raw_layout_is_the_teaching_kernels() {
    for (n, e) in [
        (16, 2),
        (16, 4),
        (256, 8),
        (1024, 16),
        (4096, 16),
        (512, 64),
    ] {
        let x = random(2 * n * 3, n as u64 + e as u64);
        let mut t = opts(n, e, Order::Raw);
        t.kernel = Kernel::Teaching;
        t.batch = 3;
        let mut f = fast(n, e, None, Order::Raw);
        f.batch = 3;
        let (Some(rt), Some(rf)) = (try_fft(&t, x.clone()), try_fft(&f, x)) else {
            continue;
        };
        assert_eq!(rt.extra["kernel"], "teaching");
        assert_eq!(rf.extra["kernel"], "fast");
        let err = model::rel_error(&out(&rf), &out(&rt));
        assert!(err <= model::tolerance(n), "N={n} E={e}: {err}");
    }
}

#[test]
fn fast_kernel_inverse_and_no_shuffle() {
    let g = gpu();
    for (n, e, gg) in [
        (2, 2, None),
        (32, 4, Some(2)),
        (256, 8, None),
        (1024, 16, Some(4)),
        (4096, 32, None),
    ] {
        for no_shuffle in [false, true] {
            for (order, store) in [
                (Order::Natural, NaturalStore::Direct),
                (Order::Natural, NaturalStore::Staged),
                (Order::Raw, NaturalStore::Direct),
            ] {
                let mut o = fast(n, e, gg, order);
                o.inverse = true;
                o.no_shuffle = no_shuffle;
                o.natural_store = store;
                o.batch = 3;
                let x = random(2 * n * 3, n as u64 + 77);
                let what =
                    format!("N={n} E={e} inverse no_shuffle={no_shuffle} {order:?} {store:?}");
                let Some(r) = try_fft(&o, x.clone()) else {
                    continue;
                };
                let below = r.extra["shuffle_below"].as_u64().unwrap();
                if no_shuffle || !g.has_subgroups() {
                    assert_eq!(below, 0, "{what}");
                } else {
                    assert_eq!(below, g.info.subgroup_min_size as u64, "{what}");
                }
                check_batch(&r, &x, n, e, &what);
            }
        }
    }
    // inverse(forward(x)) = N·x through the fast kernel both ways.
    let n = 1024;
    let x = random(2 * n, 5);
    let fwd = run(&fast(n, 16, None, Order::Natural), x.clone(), false);
    let mut o = fast(n, 16, None, Order::Natural);
    o.inverse = true;
    let back = run(&o, fwd.output.f32s(), false);
    let want: Vec<C64> = cplx(&x).iter().map(|c| c * n as f64).collect();
    assert!(model::rel_error(&out(&back), &want) <= 2.0 * model::tolerance(n));
}

/// The tail workgroup (batch not a multiple of G) must write nothing past the batch: the output
/// buffer is larger than needed and poisoned; everything past the batch must stay poison.
#[test]
fn fast_kernel_tail_writes_nothing_past_the_batch() {
    use stagewise::algo::fft::{POISON, plan};
    use stagewise::gpu::{Region, execute_blocking as execute};
    let gp = gpu();
    use NaturalStore::{Direct, Staged};
    for (n, e, g, b, order, store) in [
        (256, 8, 8, 13, Order::Natural, Staged),
        (256, 8, 8, 13, Order::Natural, Direct),
        (256, 8, 8, 13, Order::Raw, Direct),
        (64, 4, 5, 7, Order::Natural, Staged),
        (64, 4, 5, 7, Order::Natural, Direct),
        (16, 2, 16, 1, Order::Raw, Direct),
        (16, 2, 3, 2, Order::Natural, Direct),
        (1024, 16, 2, 3, Order::Natural, Staged),
        (1024, 16, 2, 3, Order::Natural, Direct),
        (4096, 16, 1, 2, Order::Natural, Direct),
        (4096, 32, 1, 2, Order::Natural, Direct),
    ] {
        let mut o = fast(n, e, Some(g), order);
        o.batch = b;
        o.natural_store = store;
        let x = random(2 * n * b, 9);
        let what = format!("N={n} E={e} G={g} B={b} {order:?} {store:?}");
        let cfg = o.config(Some(x.len()), Some(&gp.limits), false).unwrap();
        let Some(fc) = unless_past_limits(o.fast_config(&cfg, gp, false), &what) else {
            continue;
        };
        let fc = fc.expect("fast");
        assert_eq!(fc.g, g);
        let src = gp.storage_init("x", &Data::from_f32(&x).bits).unwrap();
        let extra = 2 * n * g; // room for a whole extra workgroup's worth
        let words = 2 * n * b + extra;
        let dst = gp.storage_poisoned("y", words, POISON).unwrap();
        let (mut p, _) = plan(gp, &cfg, Some(&fc), &src, &dst, false).unwrap();
        p.output = Some(Region::words(&dst, words));
        let ex = execute(gp, &p, false).unwrap();
        assert!(
            ex.output[2 * n * b..].iter().all(|&w| w == POISON),
            "{what}: wrote past the batch"
        );
        let got = cplx(
            &ex.output[..2 * n * b]
                .iter()
                .map(|&w| f32::from_bits(w))
                .collect::<Vec<_>>(),
        );
        for k in 0..b {
            let want = model::dft(&cplx(&x[k * 2 * n..(k + 1) * 2 * n]), false);
            let want = if order == Order::Natural {
                want
            } else {
                model::to_raw(&want, e)
            };
            let err = model::rel_error(&got[k * n..(k + 1) * n], &want);
            assert!(err <= model::tolerance(n), "{what} FFT {k}: {err}");
        }
    }
}

#[test]
fn auto_picks_radix_or_fast_for_complex_and_teaching_otherwise() {
    // Complex, no trace: radix in natural order, fast in raw order.
    let r = run(&opts(256, 8, Order::Natural), random(512, 1), false);
    assert_eq!(r.extra["kernel"], "radix");
    assert!(r.verified);
    let r = run(&opts(256, 8, Order::Raw), random(512, 1), false);
    assert_eq!(r.extra["kernel"], "fast");
    assert!(r.verified);
    // Options of the fast kernel keep it.
    let mut o = opts(256, 8, Order::Natural);
    o.natural_store = NaturalStore::Direct;
    let r = run(&o, random(512, 1), false);
    assert_eq!(r.extra["kernel"], "fast");
    assert!(r.verified);
    // Traced runs: teaching (it writes the trace), even with --kernel fast.
    let r = run(&fast(16, 2, None, Order::Raw), random(32, 2), true);
    assert_eq!(r.extra["kernel"], "teaching");
    assert_eq!(r.extra["ffts_per_workgroup"], 1);
    assert!(r.verified && !r.stages.is_empty());
    // Real and real-pair modes fall back to teaching under auto.
    let mut o = opts(64, 4, Order::Natural);
    o.real = true;
    let r = run(&o, random(64, 3), false);
    assert_eq!(r.extra["kernel"], "teaching");
    assert!(r.verified, "{:?}", r.mismatch);
    let mut o = opts(64, 4, Order::Raw);
    o.real_pair = true;
    let r = run(&o, random(128, 4), false);
    assert_eq!(r.extra["kernel"], "teaching");
    assert!(r.verified, "{:?}", r.mismatch);
    // E above the unroll limit: auto falls back, fast names the limit.
    let r = run(&opts(256, 128, Order::Natural), random(512, 5), false);
    assert_eq!(r.extra["kernel"], "teaching");
    assert!(r.verified);
    let err = |o: Options, len: usize| {
        try_run(
            &AlgoOptions::Fft(o),
            "workgroup",
            Data::from_f32(&vec![0.0; len]),
            false,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "no error".into())
    };
    let e = err(fast(256, 128, None, Order::Natural), 512);
    assert!(e.contains("at most E = 64"), "{e}");
    let mut o = fast(64, 4, None, Order::Natural);
    o.real = true;
    let e = err(o, 64);
    assert!(e.contains("complex FFTs only"), "{e}");
    let max_w = gpu().limits.max_compute_invocations_per_workgroup as usize;
    let e = err(fast(256, 2, Some(2 * max_w), Order::Natural), 512);
    assert!(e.contains("invocations per workgroup"), "{e}");
    let e = err(fast(16, 2, Some(0), Order::Natural), 32);
    assert!(e.contains("at least 1"), "{e}");
}

#[test]
fn default_shapes_are_the_fastest_measured() {
    // (N, E, G) picked from the H100 sweep of bench/h100-radix.sh (natural order).
    let max_w = gpu().limits.max_compute_invocations_per_workgroup as usize;
    for (n, e, g) in [(256, 8, 4), (1024, 16, 1), (4096, 16, 1)] {
        if n / e > max_w {
            continue;
        }
        let o = Options {
            size: Some(n),
            batch: 5,
            ..Default::default()
        };
        let x = random(2 * n * 5, n as u64);
        let r = run(&o, x.clone(), false);
        let smem = gpu().limits.max_compute_workgroup_storage_size as usize;
        if webgpu_limits() && 8 * n * g > smem {
            // The radix kernel would need 8 bytes per point in one workgroup; past WebGPU's
            // 16 KiB the default is the large plan.
            assert_eq!(r.extra["kernel"], "large", "N={n}");
            check_batch(&r, &x, n, e, &format!("default N={n}"));
            continue;
        }
        assert_eq!(r.extra["kernel"], "radix", "N={n}");
        assert_eq!(r.extra["elements_per_invocation"], e, "N={n}");
        assert_eq!(r.extra["ffts_per_workgroup"], g, "N={n}");
        check_batch(&r, &x, n, e, &format!("default N={n}"));
    }
}

// ---- The radix kernel (src/algo/fft/radix.rs) ----

/// Every size, several E, forced and default G (with tail workgroups), forward and inverse.
#[test]
fn radix_kernel_every_size_e_g_matches_rustfft() {
    for log_n in 1..=12u32 {
        let n = 1usize << log_n;
        for e in fast_es(n) {
            // The inverse with the default G only (straight-line kernels compile slowly on lavapipe).
            // S FFTs in a loop per thread group, with tails: 5 FFTs over G·S = 6 per workgroup,
            // 7 over S = 3.
            for (g, sq, b, inverse) in [
                (Some(1), None, 2, false),
                (Some(3), Some(2), 5, false),
                (None, Some(3), 7, false),
                (None, None, 3, true),
            ] {
                let o = Options {
                    kernel: Kernel::Radix,
                    batch: b,
                    inverse,
                    sequential_ffts: sq,
                    ..fast(n, e, g, Order::Natural)
                };
                let x = random(2 * n * b, (log_n * 1000 + e as u32 + 7) as u64);
                let what = format!("radix N={n} E={e} G={g:?} S={sq:?} B={b} inverse={inverse}");
                let Some(r) = run_or_misfit(&o, &x, &what) else {
                    continue;
                };
                assert_eq!(r.extra["kernel"], "radix", "{what}");
                assert_eq!(r.extra["natural_store"], serde_json::Value::Null, "{what}");
                if let Some(g) = g {
                    assert_eq!(r.extra["ffts_per_workgroup"], g, "{what}");
                }
                assert_eq!(r.extra["sequential_ffts"], sq.unwrap_or(1), "{what}");
                check_batch(&r, &x, n, e, &what);
            }
        }
    }
}

#[test]
fn radix_kernel_refuses_what_it_cannot_do() {
    let err = |o: Options| {
        try_run(
            &AlgoOptions::Fft(o),
            "workgroup",
            Data::from_f32(&[0.0; 64]),
            false,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "no error".into())
    };
    let radix = |order| Options {
        kernel: Kernel::Radix,
        ..fast(32, 4, None, order)
    };
    let e = err(radix(Order::Raw));
    assert!(e.contains("natural order only"), "{e}");
    let mut o = radix(Order::Natural);
    o.no_shuffle = true;
    let e = err(o);
    assert!(e.contains("apply to --kernel fast"), "{e}");
    let mut o = radix(Order::Natural);
    o.real_pair = true;
    let e = err(o);
    assert!(e.contains("natural order only"), "{e}");
    let mut o = fast(32, 4, None, Order::Natural);
    o.kernel = Kernel::Fast;
    o.sequential_ffts = Some(2);
    let e = err(o);
    assert!(
        e.contains("--sequential-ffts applies to the radix kernel"),
        "{e}"
    );
}

/// The default S: 4 FFTs per thread group in a loop from size 2048 when the batch is large
/// (≥ 4096 FFTs), else 1; the result is right either way. (4096 × 4096 values would exceed
/// lavapipe's 128 MiB binding limit; the sweep above runs size 4096 with S = 3.)
#[test]
fn radix_sequential_default_follows_size_and_batch() {
    for (n, b, want) in [
        (2048usize, 4099usize, 4u64),
        (4096, 4095, 1),
        (4096, 9, 1),
        (1024, 8192, 1),
    ] {
        let o = Options {
            kernel: Kernel::Radix,
            batch: b,
            ..fast(n, 16, None, Order::Natural)
        };
        let x = random(2 * n * b, n as u64 + b as u64);
        let what = format!("radix N={n} B={b}");
        let Some(r) = run_or_misfit(&o, &x, &what) else {
            continue;
        };
        assert_eq!(r.extra["sequential_ffts"], want, "{what}");
        check_batch(&r, &x, n, 16, &what);
    }
}
