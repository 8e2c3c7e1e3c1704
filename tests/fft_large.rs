//! FFTs past one workgroup (src/algo/fft/large.rs) on the GPU against rustfft in f64: every size
//! up to 2^24, both orders, forward and inverse, complex, real and real-pair, every split of one
//! size, the lanes / elements / sequential overrides, the plan JSON and the trace pass by pass.
mod common;

use common::{cplx, gpu, random_f32 as random, try_run};
use stagewise::algo::AlgoOptions;
use stagewise::algo::fft::large_plan::{columns_model, to_rows};
use stagewise::algo::fft::model::{self, C64};
use stagewise::algo::fft::trace::PassKind;
use stagewise::algo::fft::{ExchangeLayout, Kernel, Options, Order};
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
    // Raw order is rows of N2 where the rows are a pass of their own; one dispatch is natural.
    let one = r.extra["plan"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["pass"] == 0);
    let split = if one {
        (n, 1)
    } else {
        (
            r.extra["split"][0].as_u64().unwrap() as usize,
            r.extra["split"][1].as_u64().unwrap() as usize,
        )
    };
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

/// Whether this adapter runs chained dispatches (`--chain`): not a CPU adapter (on lavapipe
/// phase 1 now and then read before phase 0's stores had landed), and with subgroups.
fn chains() -> bool {
    stagewise::algo::fft::large_chain::refused_on(gpu()).is_none()
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
        // 2^17 runs both phases chained in one dispatch where the adapter chains.
        let passes = if log_n == 17 && chains() { 1 } else { 2 };
        assert_eq!(r.passes.len(), passes, "2^{log_n}: {:?}", r.passes);
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

/// `--exchange-layout`: every layout gives the same FFTs, and the plan names the one each pass
/// took (swizzled: one FFT at a time in halves, four parts at 8192 points, real input too).
#[test]
fn exchange_layouts_give_the_same_ffts() {
    let _ = gpu();
    let layouts = |r: &stagewise::algo::RunResult| -> Vec<String> {
        r.extra["plan"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["kind"] == "fft")
            .map(|p| p["exchange_layout"].as_str().unwrap().to_string())
            .collect()
    };
    for (n, parts, s, batch) in [
        (2048, 2, 1, 5),
        (4096, 2, 1, 3),
        (4096, 2, 4, 9),
        (8192, 4, 1, 2),
    ] {
        for (layout, want) in [
            (ExchangeLayout::Swizzled, "swizzled"),
            (ExchangeLayout::Padded, "padded"),
        ] {
            let mut o = large(n);
            o.exchange_parts = Some(parts);
            o.sequential_ffts = Some(s);
            o.exchange_layout = layout;
            o.batch = batch;
            let r = check(&o, n, batch, (n + s) as u64);
            assert_eq!(layouts(&r), [want], "{n} S={s}");
        }
    }
    let o = Options {
        size: Some(16384),
        real: true,
        batch: 3,
        exchange_layout: ExchangeLayout::Swizzled,
        ..Default::default()
    };
    let r = run(&o, &random(16384 * 3, 7), false);
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!(layouts(&r), ["swizzled"]);
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
            check_real(&r, &x, n, 3, inverse);
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

/// The plan's entries' kinds, in order.
fn plan_kinds(r: &stagewise::algo::RunResult) -> Vec<String> {
    let plan = r.extra["plan"].as_array().unwrap();
    plan.iter()
        .map(|p| p["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The traced stages' kinds, in order.
fn stage_kinds(r: &stagewise::algo::RunResult) -> Vec<PassKind> {
    r.stages
        .iter()
        .map(|s| s.fft_pass().unwrap().kind)
        .collect()
}

/// A real run's N/2 bins per FFT (bin 0 = DC + i·Nyquist) against rustfft in f64.
fn check_real(r: &stagewise::algo::RunResult, x: &[f32], n: usize, batch: usize, inverse: bool) {
    let got = cplx(&r.output.f32s());
    for b in 0..batch {
        let xs: Vec<C64> = x[n * b..n * (b + 1)]
            .iter()
            .map(|&v| C64::new(v as f64, 0.0))
            .collect();
        let want = model::real_natural(&model::dft(&xs, inverse));
        let err = model::rel_error(&got[n / 2 * b..n / 2 * (b + 1)], &want);
        assert!(
            err <= model::tolerance(n),
            "real N = {n}, FFT {b}: {err:.3e}"
        );
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
    let kinds = plan_kinds(&r);
    assert_eq!(kinds, ["fft", "twiddle", "permute", "fft", "permute"]);
    // The columns stored in units of 16 columns (each unit's 32 rows contiguous), then the
    // rows' transpose: k1 (the top 5 bits of the row index) to the bottom, k2 up by 5.
    let units = &r.extra["plan"][2];
    assert!(
        units["rule"]
            .as_str()
            .unwrap()
            .starts_with("units of 16 columns")
    );
    assert_eq!(units["matrix"].as_array().unwrap().len(), 10);
    assert_eq!(units["units"], 16);
    assert!(r.extra["plan"][4].get("units").is_none());
    let m = r.extra["plan"][4]["matrix"].as_array().unwrap();
    assert_eq!(m.len(), 10);
    // Three stages: input, columns, rows; the columns stage is the model's twiddled column FFTs.
    let kinds = stage_kinds(&r);
    assert_eq!(kinds, [PassKind::Input, PassKind::Columns, PassKind::Rows]);
    let cols = columns_model(&cplx(&x), (32, 32), false, false);
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
    // Passes through L2: the split below the sub-FFTs, options that would be ignored.
    let mut o = large(4096);
    o.split = Some(64);
    o.phase_split = Some(64);
    assert!(err(o, 8192).contains("is not below the 64-point sub-FFTs"));
    let mut o = large(1024);
    o.phase_split = Some(1024);
    assert!(err(o, 2048).contains("2 ≤ Ma < 1024"));
    let mut o = large(1024);
    o.phase_lanes = Some(2);
    assert!(err(o, 2048).contains("--phase-lanes applies"));
    let mut o = large(1024);
    o.phase_split = Some(8);
    o.sequential_ffts = Some(2);
    assert!(err(o, 2048).contains("--sequential-ffts does not apply"));
    let mut o = large(1024);
    o.phase_split = Some(8);
    o.ffts_per_workgroup = Some(2);
    assert!(err(o, 2048).contains("one FFT per workgroup"));
}

/// `bench fft --real` times the packed plan over N reals: 8 bytes a real per pass, the unpacking
/// fused into the one pass of a small size, into the chained dispatch of 2^16 reals (two passes
/// where the adapter does not chain) and into the rows pass of two at 2^18.
#[test]
fn bench_real_counts_reals_and_passes() {
    let _ = gpu();
    let chained = if chains() { 1 } else { 2 };
    for (size, passes) in [(256u64, 1u64), (65536, chained), (1 << 18, 2)] {
        let v = common::run_ok(&[
            "bench",
            "fft",
            "--size",
            &size.to_string(),
            "--real",
            // One variant named: a refusal or a slow probe fails the run instead of skipping.
            "--variant",
            "workgroup",
            "--n",
            "262144",
            "--reps",
            "2",
            "--warmup",
            "1",
            "--json",
        ]);
        let row = &v["rows"][0];
        assert_eq!(
            row["passes"].as_array().map_or(0, |p| p.len()) as u64,
            passes,
            "{v}"
        );
        assert_eq!(row["bytes"].as_u64().unwrap(), 8 * 262144 * passes, "{v}");
    }
    let out = common::bin()
        .args([
            "bench",
            "fft",
            "--size",
            "256",
            "--real-pair",
            "--n",
            "65536",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--real-pair is not timed"));
}

/// Passes through L2 (`--phase-split`): a whole FFT in one dispatch (N1-point columns, then
/// N2-point rows in place in the output) at every size and three splits, the shape overrides, and
/// two-pass plans whose sub-FFTs run as two phases with 1 to 16 lanes.
#[test]
fn phases_through_l2() {
    let _ = gpu();
    let orders = [
        (Order::Natural, false),
        (Order::Raw, false),
        (Order::Natural, true),
    ];
    for log_n in 2..=16u32 {
        let n = 1usize << log_n;
        // Columns of 2 and rows of 2, as far as a sub-FFT of one phase fits one workgroup (rows of
        // at most 1024, columns of at most 16384), and half the bits each.
        let (low, high) = (log_n.saturating_sub(10).max(1), (log_n - 1).min(14));
        for (k, la) in [low, log_n / 2, high].into_iter().enumerate() {
            let mut o = large(n);
            o.phase_split = Some(1 << la);
            (o.order, o.inverse) = orders[k];
            o.batch = 3;
            let r = check(&o, n, 3, 300 + 3 * log_n as u64 + k as u64);
            assert_eq!(r.passes.len(), 1, "{o:?}");
            let plan = r.extra["plan"].as_array().unwrap();
            assert!(plan.iter().any(|p| p["kind"] == "l2-exchange"), "{o:?}");
        }
    }
    for (n, ps, e, lanes, parts) in [
        (8192, 8, 8, Some(4), Some(2)),
        (16384, 32, 16, None, None),
        (4096, 64, 4, Some(2), Some(4)),
        (32768, 16, 16, Some(8), None),
        (1024, 2, 2, Some(1), Some(8)),
    ] {
        let mut o = large(n);
        o.phase_split = Some(ps);
        o.elements_per_invocation = Some(e);
        o.phase_lanes = lanes;
        o.exchange_parts = parts;
        o.batch = 2;
        check(&o, n, 2, (n + ps + e) as u64);
    }
    for (i, (log_n, split, ps, c, pl)) in [
        (12u32, 64, 8, 1, None),
        (14, 128, 16, 8, None),
        (16, 256, 16, 16, Some(32)),
        (20, 1024, 32, 8, Some(64)),
        (22, 2048, 64, 4, Some(64)),
    ]
    .into_iter()
    .enumerate()
    {
        let n = 1usize << log_n;
        let mut o = large(n);
        o.split = Some(split);
        o.phase_split = Some(ps);
        o.ffts_per_workgroup = Some(c);
        o.phase_lanes = pl;
        (o.order, o.inverse) = orders[i % 3];
        let batch = if log_n <= 16 { 3 } else { 1 };
        o.batch = batch;
        let r = check(&o, n, batch, 700 + log_n as u64);
        assert_eq!(r.passes.len(), 2, "{o:?}");
        let phases = r.extra["plan"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["kind"] == "fft")
            .count();
        assert_eq!(phases, 4, "{o:?}");
    }
}

/// Real input in natural order runs packed by default (the N/2-point FFT, the unpacking fused as
/// the dispatch's last phase where its workgroups hold whole FFTs), at every size, both ways.
#[test]
fn real_input_packed_with_the_unpacking_fused() {
    let _ = gpu();
    for log_n in 2..=17u32 {
        let n = 1usize << log_n;
        for (inverse, ps) in [(false, None), (true, None), (false, Some(4))] {
            if ps.is_some() && !(4..=16).contains(&log_n) {
                continue;
            }
            let batch = 3;
            let x = random(n * batch, 40 + log_n as u64);
            let o = Options {
                size: Some(n),
                real: true,
                inverse,
                batch,
                phase_split: ps,
                ..Default::default()
            };
            let r = run(&o, &x, false);
            assert_eq!(r.extra["kernel"], "large", "{o:?}");
            assert!(r.verified, "real 2^{log_n} {o:?}: {:?}", r.mismatch);
            let unpack = r.extra["plan"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["kind"] == "unpack")
                .cloned()
                .unwrap();
            // Fused everywhere: into one pass's store, the rows pass's (from 2^16 reals = 2^15
            // complex: two passes), or a last phase through L2.
            assert_eq!(unpack["fused"], true, "{o:?}");
            check_real(&r, &x, n, batch, inverse);
        }
    }
    // The rows pass in two exchange parts (512-point rows: --split 512), its unpacking fused:
    // both ways.
    for inverse in [false, true] {
        let n = 1usize << 19;
        let x = random(n * 3, 90 + u64::from(inverse));
        let o = Options {
            size: Some(n),
            real: true,
            inverse,
            batch: 3,
            split: Some(512),
            ..Default::default()
        };
        let r = run(&o, &x, false);
        assert!(r.verified, "real 2^19 {o:?}: {:?}", r.mismatch);
        let kinds = plan_kinds(&r);
        assert_eq!(kinds.iter().filter(|k| *k == "fft").count(), 2);
        assert_eq!(
            r.extra["plan"].as_array().unwrap().last().unwrap()["fused"],
            true
        );
        check_real(&r, &x, n, 3, inverse);
    }
    // Four exchange parts where the default takes two or one: the unpacking in the store then
    // exchanges partners class by class (8 classes below 512 threads, one FFT a workgroup).
    for log_n in [12u32, 13, 14] {
        let n = 1usize << log_n;
        let batch = 5;
        let x = random(n * batch, 70 + log_n as u64);
        let o = Options {
            size: Some(n),
            real: true,
            inverse: log_n == 13,
            batch,
            exchange_parts: Some(4),
            ..Default::default()
        };
        let r = run(&o, &x, false);
        assert!(r.verified, "real 2^{log_n} {o:?}: {:?}", r.mismatch);
        check_real(&r, &x, n, batch, o.inverse);
    }
}

/// A pass through L2, traced: every phase is a dispatch of its own, the stages say what each left
/// in the output (the columns at k1 + N1·col for the rows phase), the plan names the exchange.
#[test]
fn traced_phases_through_l2() {
    let _ = gpu();
    let n = 1024;
    let mut o = large(n);
    o.phase_split = Some(32);
    let x = random(2 * n, 5);
    let r = run(&o, &x, true);
    assert!(r.verified, "{:?}", r.mismatch);
    let kinds = plan_kinds(&r);
    assert_eq!(kinds, ["fft", "twiddle", "permute", "l2-exchange", "fft"]);
    let stages = stage_kinds(&r);
    assert_eq!(stages, [PassKind::Input, PassKind::Columns, PassKind::Rows]);
    let cols = r.stages[1].fft_pass().unwrap();
    assert!(cols.transposed && cols.twiddled);
    let want = columns_model(&cplx(&x), (32, 32), false, true);
    assert!(model::rel_error(&cplx(&r.stages[1].data.f32s()), &want) <= model::tolerance(n));
    // Two passes, each in two phases, and a real FFT's fused unpacking: one stage per dispatch.
    let mut o = large(4096);
    o.split = Some(64);
    o.phase_split = Some(8);
    o.real = true;
    let x = random(4096, 6);
    let r = run(&o, &x, true);
    assert!(r.verified, "{:?}", r.mismatch);
    let stages = stage_kinds(&r);
    assert_eq!(
        stages,
        [
            PassKind::Input,
            PassKind::Inner,
            PassKind::Columns,
            PassKind::Inner,
            PassKind::Rows,
            PassKind::Unpack
        ]
    );
}

/// Streamed (as the app runs it), a large FFT announces itself with its plan, then hands on every
/// pass as it is read back: the same stages as the kept trace, in order, before the result; a
/// workgroup FFT hands on its steps once its one dispatch is back.
#[test]
fn a_fft_trace_streams_pass_by_pass() {
    use stagewise::algo::fft::facts::{Facts, PlanEntry};
    use stagewise::algo::stream::Event;
    use stagewise::algo::{RunRequest, Stages};
    let g = gpu();
    let split = Options {
        split: Some(64),
        ..large(4096)
    };
    for (o, n) in [(split, 4096usize), (Options::default(), 64)] {
        let mut o = o;
        o.size = Some(n);
        let x = random(2 * n, 9);
        let kept = run(&o, &x, true);
        assert!(kept.verified, "{:?}", kept.mismatch);
        let algo = AlgoOptions::Fft(o.clone());
        let a = algo.algo();
        let req = RunRequest {
            variant: a.info().variant(Some("workgroup")).unwrap(),
            dtype: stagewise::data::DType::F32,
            input: Data::from_f32(&x),
            trace: true,
        };
        let mut events = Vec::new();
        let mut send = |e: Event| {
            events.push(e);
            true
        };
        let r = pollster::block_on(stagewise::algo::run_streamed(
            a,
            g,
            &req,
            &mut Stages::send_to(&mut send),
        ))
        .expect("the streamed run");
        assert!(r.verified, "{:?}", r.mismatch);
        assert!(r.stages.is_empty(), "the stages were sent, not kept");
        assert_eq!(r.output.bits, kept.output.bits);
        let Some(Event::Head { head, stages }) = events.first() else {
            panic!("the head comes first");
        };
        assert_eq!(*stages, kept.stages.len());
        let facts = head
            .facts::<Facts>()
            .expect("the head carries the FFT's facts");
        assert_eq!(facts.kernel, kept.facts::<Facts>().unwrap().kernel);
        if facts.kernel == Kernel::Large {
            let plan = facts.plan.expect("a large head carries its plan");
            assert!(plan.iter().any(|e| matches!(e, PlanEntry::Twiddle { .. })));
        }
        let got: Vec<_> = events[1..]
            .iter()
            .map(|e| match e {
                Event::Stage(s) => (s.label.clone(), s.data.bits.clone()),
                Event::Head { .. } => panic!("one head"),
            })
            .collect();
        let want: Vec<_> = kept
            .stages
            .iter()
            .map(|s| (s.label.clone(), s.data.bits.clone()))
            .collect();
        assert_eq!(got, want, "N = {n}");
    }
}

/// Both phases of a whole FFT chained in one dispatch (`--chain`): the defaults at 2^15 and 2^16
/// points (complex and real), phase 1 right behind phase 0 (lag 1 and 2: its subgroups wait on
/// the FFT's counter), one or two sub-FFT groups in turn, other splits and lanes, both orders
/// and directions, odd batches, small sizes.
#[test]
fn chained_phases_in_one_dispatch() {
    if !chains() {
        // Refused with the reason, and the default is two passes.
        let mut o = large(1 << 15);
        o.chain = Some(1);
        let e = try_run(
            &AlgoOptions::Fft(o.clone()),
            "workgroup",
            Data::from_f32(&random(1 << 16, 1)),
            false,
        )
        .err()
        .map(|e| e.to_string());
        assert!(e.as_deref().is_some_and(|e| e.contains("--chain")), "{e:?}");
        o.chain = None;
        o.batch = 2;
        assert_eq!(check(&o, 1 << 15, 2, 990).passes.len(), 2);
        return;
    }
    let (nat, raw) = (Order::Natural, Order::Raw);
    #[allow(clippy::type_complexity)]
    let cases: [(
        usize,
        Option<usize>,
        Option<usize>,
        Option<usize>,
        Option<usize>,
        Order,
        bool,
        usize,
    ); 7] = [
        (1 << 15, None, None, None, None, nat, false, 3),
        (1 << 16, None, None, None, None, nat, true, 2),
        (1 << 15, Some(1), Some(1), None, None, raw, false, 5),
        (1 << 14, Some(2), Some(2), Some(64), Some(8), nat, true, 7),
        (1 << 12, Some(1), Some(1), Some(16), None, nat, false, 9),
        (1 << 10, Some(2), None, Some(4), Some(4), raw, true, 3),
        (64, Some(3), None, None, None, nat, false, 5),
    ];
    for (i, (n, chain, s, ps, lanes, order, inverse, batch)) in cases.into_iter().enumerate() {
        let mut o = large(n);
        (o.chain, o.sequential_ffts, o.phase_split, o.phase_lanes) = (chain, s, ps, lanes);
        (o.order, o.inverse, o.batch) = (order, inverse, batch);
        let r = check(&o, n, batch, 900 + i as u64);
        assert_eq!(r.passes.len(), 1, "{o:?}");
        let kinds = plan_kinds(&r);
        assert!(kinds.contains(&"chain".to_string()), "{o:?}: {kinds:?}");
        assert!(r.passes[0].label.contains("chained"), "{o:?}");
    }
    // Real input: the unpacking in phase 1's store (its lanes pair rows k1 and Ma − k1).
    for (i, (n, chain, inverse, batch)) in [
        (1usize << 16, None, false, 3),
        (1 << 16, Some(1), true, 5),
        (1 << 17, None, false, 2),
        (1 << 13, Some(1), false, 5),
    ]
    .into_iter()
    .enumerate()
    {
        let x = random(n * batch, 950 + i as u64);
        let o = Options {
            size: Some(n),
            real: true,
            inverse,
            batch,
            chain,
            kernel: Kernel::Large,
            ..Default::default()
        };
        let r = run(&o, &x, false);
        assert!(r.verified, "{o:?}: {:?}", r.mismatch);
        assert_eq!(r.passes.len(), 1, "{o:?}");
        let plan = r.extra["plan"].as_array().unwrap();
        assert!(
            plan.iter()
                .any(|p| p["kind"] == "unpack" && p["fused"] == true),
            "{o:?}"
        );
        check_real(&r, &x, n, batch, inverse);
    }
    // The columns pass chained (--chain with --split, or past 2^20 points): units of C
    // neighbouring columns, then the rows pass as a dispatch of its own.
    for (i, (n, split, chain, lanes, ps, pl, order, inverse, batch)) in [
        (
            1usize << 16,
            Some(256),
            Some(2),
            None,
            None,
            None,
            nat,
            false,
            3,
        ),
        (
            1 << 12,
            Some(64),
            Some(1),
            Some(8),
            None,
            None,
            raw,
            true,
            5,
        ),
        (
            1 << 18,
            Some(512),
            Some(3),
            None,
            Some(16),
            Some(32),
            nat,
            false,
            2,
        ),
        (1 << 21, None, Some(4), None, None, None, nat, true, 1),
        (
            1 << 13,
            Some(128),
            Some(1),
            Some(4),
            Some(4),
            Some(4),
            raw,
            false,
            7,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut o = large(n);
        (o.split, o.chain, o.ffts_per_workgroup) = (split, chain, lanes);
        (o.phase_split, o.phase_lanes) = (ps, pl);
        (o.order, o.inverse, o.batch) = (order, inverse, batch);
        let r = check(&o, n, batch, 920 + i as u64);
        assert_eq!(r.passes.len(), 2, "{o:?}");
        assert!(plan_kinds(&r).contains(&"chain".to_string()), "{o:?}");
        assert!(
            r.passes[0].label.contains("columns, chained"),
            "{o:?}: {}",
            r.passes[0].label
        );
    }
    // Real input with its columns chained: the unpacking stays in the rows pass's store.
    let (n, batch) = (1usize << 17, 3);
    let x = random(n * batch, 960);
    let o = Options {
        size: Some(n),
        real: true,
        batch,
        split: Some(256),
        chain: Some(2),
        kernel: Kernel::Large,
        ..Default::default()
    };
    let r = run(&o, &x, false);
    assert!(r.verified, "{o:?}: {:?}", r.mismatch);
    assert_eq!(r.passes.len(), 2, "{o:?}");
    let plan = r.extra["plan"].as_array().unwrap();
    assert!(
        plan.iter()
            .any(|p| p["kind"] == "unpack" && p["fused"] == true),
        "{o:?}"
    );
    check_real(&r, &x, n, batch, false);
    // Off by --chain 0 or by --split: two passes.
    let mut o = large(1 << 15);
    o.chain = Some(0);
    o.batch = 2;
    assert_eq!(check(&o, 1 << 15, 2, 990).passes.len(), 2);
}

/// One chained plan run again and again, as `bench` runs it: the last workgroups put the tickets
/// and every FFT's counter back to zero, so every run is right. Where the adapter does not chain,
/// the chained dispatch is built (its WGSL compiled by the driver) but not run.
#[test]
fn a_chained_plan_runs_again_and_again() {
    use stagewise::algo::fft::large::configure;
    use stagewise::algo::fft::large_plan::plan_large;
    use stagewise::gpu::{Region, execute_blocking as execute};
    let g = gpu();
    // Whole FFTs, then the columns pass of a split plan.
    for (n, split, chain, batch) in [
        (1usize << 15, None, None, 3),
        (1 << 15, None, Some(1), 3),
        (1 << 16, Some(256), Some(2), 3),
    ] {
        let mut o = large(n);
        (o.batch, o.chain, o.split) = (batch, chain, split);
        let x = random(2 * n * batch, 995);
        let lc = configure(&o, n, batch, true, false, None, &g.limits).unwrap();
        assert!(lc.chain.is_some());
        let bits: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
        let src = g.storage_init("test input", &bits).unwrap();
        let dst = g.storage_zeroed("test output", 2 * n * batch).unwrap();
        let (mut plan, _) = plan_large(g, &lc, batch, &src, &dst, true, false).unwrap();
        assert_eq!(plan.passes.len(), if split.is_some() { 2 } else { 1 });
        assert!(plan.passes[0].label.contains("chained"));
        if !chains() {
            continue;
        }
        plan.output = Some(Region::words(&dst, 2 * n * batch));
        for run in 0..4 {
            let out = execute(g, &plan, false).unwrap().output;
            let got = cplx(bytemuck::cast_slice::<u32, f32>(&out));
            for b in 0..batch {
                let want = model::dft(&cplx(&x[2 * n * b..2 * n * (b + 1)]), false);
                let err = model::rel_error(&got[n * b..n * (b + 1)], &want);
                assert!(
                    err <= model::tolerance(n),
                    "{chain:?} run {run} FFT {b}: {err:.3e}"
                );
            }
        }
    }
}

/// The kernels' accurate `cis_acc` (src/algo/fft/trig.rs: used where a device's sin and cos may
/// be 2^-11 off, as SwiftShader's are) on this GPU: within 4e-7 of f64's over the FFT's angles.
#[test]
fn accurate_cis_on_the_gpu() {
    use stagewise::algo::fft::trig;
    let n = 16385usize;
    let body = "@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&src)) {
        let a = f32(i32(i) - 8192) * (3.14159265358979 / 4096.0);
        let w = vec2<f32>(cos(a), sin(a));
        if (i % 2u == 0u) { dst[i] = bitcast<u32>(w.x); } else { dst[i] = bitcast<u32>(w.y); }
    }
}
";
    let source = trig::accurate(body);
    assert!(source.contains("cis_acc(a)") && !source.contains("cos(a)"));
    let o = AlgoOptions::Kernel(stagewise::algo::kernel::Options {
        wgsl: Some("cis.wgsl".into()),
        source: Some(source),
        passes: "1".into(),
        items_per_thread: 1,
        ..Default::default()
    });
    let r = common::run(&o, "wgsl", Data::from_u32(&vec![0; n]), false);
    let mut worst = 0f64;
    for (i, &bits) in r.output.bits.iter().enumerate() {
        let a = (i as i32 - 8192) as f32 * (std::f32::consts::PI / 4096.0);
        let want = if i % 2 == 0 {
            (a as f64).cos()
        } else {
            (a as f64).sin()
        };
        worst = worst.max((f32::from_bits(bits) as f64 - want).abs());
    }
    assert!(worst < 4e-7, "cis_acc on the GPU: worst {worst:e}");
}
