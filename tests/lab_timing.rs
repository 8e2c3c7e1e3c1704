//! The performance lab's timings are `stagewise bench`'s. The app (egui_kittest, on the device
//! eframe creates and draws with) sweeps bit-reversal; then the CLI's bench code times the same
//! cases on a headless device in this process, as `stagewise bench bitrev --n N` does. Each
//! variant's fraction of the same-run copy must agree, and a scattered permutation can never beat
//! the copy that moves the same bytes.
//!
//! On any adapter (CI: lavapipe, noisy on 2 shared cores) at 2^20: within a factor of 1.5 (each
//! side's median over twelve rounds taken in turn), and naive < tiled <= copy. The same where the
//! app's device reads timestamps a thousandth of the work's time (a test hook; lavapipe's did so
//! in the app's window, where the lab then showed a copy at 66 GB/s): the lab finds its clock
//! wrong and times by the wall clock.
//! Ignored, for a real GPU: the lab at its defaults (20 reps, 300 ms of warm-up) at 2^28 within
//! 5 %: `cargo test --release --test lab_timing -- --ignored --nocapture`.
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use stagewise::algo::AlgoOptions;
use stagewise::bench::{self, BenchRow, BenchSpec};
use stagewise::data::DType;
use stagewise::gpu::Gpu;
use stagewise::ui::StagewiseApp;
use std::time::{Duration, Instant};

const VARIANTS: [&str; 2] = ["naive", "tiled"];

/// One timing test at a time: on lavapipe two of them share the cores they measure.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn app<'a>() -> Harness<'a, StagewiseApp> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set before any device exists in this test binary.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    if std::env::var_os("LP_NUM_THREADS").is_none() {
        // lavapipe's only (other drivers ignore it): one thread, so its timings do not step 2×
        // with whether a second thread gets one of 2 shared cores. SAFETY: as above.
        unsafe { std::env::set_var("LP_NUM_THREADS", "1") };
    }
    let mut h = Harness::builder()
        .with_size([1280.0, 800.0])
        .wgpu_setup(stagewise::ui::wgpu_options(None).wgpu_setup)
        .build_eframe(|cc| StagewiseApp::new(cc, None));
    let start = Instant::now();
    while h.state().is_running() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the opening run"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    h
}

/// The lab's sweep of the naive and tiled bit-reversal at 2^log_n, driven through its controls,
/// with frames drawn all the while. `reps` as the lab's slider sets it.
fn lab_rows(
    h: &mut Harness<'_, StagewiseApp>,
    log_n: u32,
    reps: usize,
    warmup_ms: f64,
) -> Vec<BenchRow> {
    h.get_by_label("Performance").click();
    h.run();
    {
        let lab = &mut h.state_mut().perf;
        lab.log_lo = log_n;
        lab.log_hi = log_n;
        lab.reps = reps;
        lab.warmup_ms = warmup_ms;
        for (v, on) in lab.variants.iter_mut() {
            *on = VARIANTS.contains(v);
        }
    }
    h.run();
    // Frames are drawn on the app's device before and during the sweep, as in a window: some
    // drivers' timestamps stop measuring compute once the device has drawn (lavapipe's did).
    h.render().expect("a frame");
    h.get_by_label("Run sweep").click();
    h.step();
    let t0 = Instant::now();
    let mut drawn = Instant::now();
    while h.state().perf.is_running() {
        assert!(t0.elapsed() < Duration::from_secs(600), "the sweep");
        h.step();
        // A frame a second, about what the lab's progress redraws while it measures.
        if drawn.elapsed() > Duration::from_secs(1) {
            h.render().expect("a frame");
            drawn = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    h.run();
    let lab = &h.state().perf;
    assert_eq!(lab.rows.len(), VARIANTS.len(), "{}", lab.status);
    lab.rows.clone()
}

/// What `stagewise bench bitrev --n 2^log_n --reps R` runs: the same spec (every variant, sizes it
/// refuses skipped, 3 counted warm-up runs after the default warm-up time, the adapter's wisdom)
/// on the CLI's device.
fn bench_rows(gpu: &Gpu, log_n: u32, reps: usize, warmup_ms: f64) -> Vec<BenchRow> {
    let algo = AlgoOptions::Bitrev(Default::default());
    let info = algo.algo().info();
    let variants = VARIANTS.map(|v| info.variant(Some(v)).unwrap()).to_vec();
    let spec = BenchSpec {
        cases: vec![(algo, variants)],
        sizes: vec![1 << log_n],
        reps,
        warmup: 3,
        dtype: DType::U32,
        skip_refused: true,
        min_warmup_ms: warmup_ms,
        roofline: Default::default(),
    };
    // As the CLI, with this adapter's wisdom (the roofline's copy shape among it), as the lab.
    let (w, _) = stagewise::wisdom::load(gpu, &stagewise::wisdom::Source::from_env());
    pollster::block_on(bench::run_with_wisdom(
        gpu,
        &spec,
        w.as_ref(),
        &mut |_| {},
        &|| false,
    ))
    .unwrap()
}

fn print(who: &str, rows: &[BenchRow]) {
    for r in rows {
        println!(
            "{who}: {} 2^{} median {:.4} ms, {:.2} GB/s, copy {:.2} GB/s, {:.4} of copy",
            r.variant,
            r.n.trailing_zeros(),
            r.median_ms,
            r.gbps,
            r.copy_gbps,
            r.fraction_of_copy
        );
    }
}

/// The fraction of copy of variant `v`'s row.
fn fraction(rows: &[BenchRow], v: &str) -> f64 {
    rows.iter()
        .find(|r| r.variant == v)
        .unwrap_or_else(|| panic!("no {v} row"))
        .fraction_of_copy
}

/// Each variant's fraction of copy in the lab against the CLI's: their ratio.
fn ratios(lab: &[BenchRow], cli: &[BenchRow]) -> Vec<(String, f64)> {
    VARIANTS
        .iter()
        .map(|v| (v.to_string(), fraction(lab, v) / fraction(cli, v)))
        .collect()
}

/// Rounds of a lab sweep and a CLI bench at 2^20, taken in turn.
const ROUNDS: usize = 12;
/// Their warm-up, lab and CLI alike: a CPU adapter has no clocks to ramp, so rounds are
/// spent on more rounds instead (the defaults' 300 ms took a third of each).
const WARMUP_MS: f64 = 50.0;

/// The median over `rounds` of `x` (one value a round's rows).
fn median_of(rounds: &[Vec<BenchRow>], x: impl Fn(&[BenchRow]) -> f64) -> f64 {
    let mut v: Vec<f64> = rounds.iter().map(|rows| x(rows)).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The lab's rows and the CLI's at 2^20, [`ROUNDS`] times in turn; each side's median over the
/// rounds of every variant's fraction of copy must agree within `band`, and of the copy's GB/s
/// within 2·`band`. One round is no test on lavapipe: a kernel's median there steps 2× from run
/// to run, a mode held for the whole run (the buffers' placement, the host's other load on 2
/// shared cores, whether lavapipe's second thread gets a core: it runs one here, see [`app`]);
/// over twelve rounds the median is the common mode. (The fastest round of each side failed when
/// only one side met the fast mode in a slow hour.) The 1000× of a wrong clock fails every
/// round. Returns each variant's median fraction of copy and the last round's rows.
fn lab_and_cli_within(h: &mut Harness<'_, StagewiseApp>, band: f64) -> Agreed {
    const LOG_N: u32 = 20;
    let (mut labs, mut clis) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        let lab = lab_rows(h, LOG_N, 10, WARMUP_MS);
        let cli = bench_rows(&Gpu::headless(None).unwrap(), LOG_N, 10, WARMUP_MS);
        println!("round {round}");
        print("lab", &lab);
        print("cli", &cli);
        labs.push(lab);
        clis.push(cli);
    }
    let copy_gbps = |rows: &[BenchRow]| rows[0].copy_gbps;
    let (lab_copy, cli_copy) = (median_of(&labs, copy_gbps), median_of(&clis, copy_gbps));
    let mut off = Vec::new();
    let mut fractions = Vec::new();
    for v in VARIANTS {
        let (l, c) = (
            median_of(&labs, |rows| fraction(rows, v)),
            median_of(&clis, |rows| fraction(rows, v)),
        );
        let r = l / c;
        println!("{v}: median fraction of copy lab {l:.4}, cli {c:.4}: {r:.3}x");
        if !(1.0 / band..=band).contains(&r) {
            off.push(format!(
                "{v}: the lab's fraction of copy is {r:.3}x the CLI's"
            ));
        }
        fractions.push((v.to_string(), l, c));
    }
    // A clock that reads short scales every row alike, fractions of copy included: the
    // throughput itself must agree too (within 2×; the bug read 1000×).
    let copy = lab_copy / cli_copy;
    println!("copy: median lab {lab_copy:.3} GB/s, cli {cli_copy:.3}: {copy:.3}x");
    if !(0.5 / band..=2.0 * band).contains(&copy) {
        off.push(format!("the lab's copy is {copy:.3}x the CLI's GB/s"));
    }
    assert!(off.is_empty(), "over {ROUNDS} rounds: {}", off.join("; "));
    Agreed {
        fractions,
        lab: labs.pop().unwrap(),
        cli: clis.pop().unwrap(),
    }
}

/// What [`lab_and_cli_within`] found: per variant its median fraction of copy in the lab and in
/// the CLI, and the last round's rows.
struct Agreed {
    fractions: Vec<(String, f64, f64)>,
    lab: Vec<BenchRow>,
    cli: Vec<BenchRow>,
}

#[test]
fn the_labs_fractions_of_copy_are_the_clis() {
    let _one = one_at_a_time();
    let mut h = app();
    let got = lab_and_cli_within(&mut h, 1.5);
    let frac = |v: &str, lab: bool| {
        let m = got.fractions.iter().find(|m| m.0 == v).unwrap();
        if lab { m.1 } else { m.2 }
    };
    for (who, lab) in [("lab", true), ("cli", false)] {
        // A scattered permutation moves no more bytes than a copy, and no faster.
        for v in VARIANTS {
            assert!(
                frac(v, lab) <= 1.05,
                "{who}: {v} at {:.3} of copy",
                frac(v, lab)
            );
        }
        assert!(
            frac("naive", lab) < frac("tiled", lab),
            "{who}: naive beats tiled"
        );
    }
}

#[test]
fn a_lab_whose_timestamps_read_short_times_by_the_wall_clock() {
    let _one = one_at_a_time();
    let mut h = app();
    h.state().gpu().unwrap().inject_clock_scale(1e-3);
    // The wall clock on lavapipe adds the frames' work and the cores' other load to the batches:
    // agreement within 2× (4× for the copy's GB/s) is what it can promise; the bug read 1000×.
    let got = lab_and_cli_within(&mut h, 2.0);
    assert!(got.lab.iter().all(|r| r.wall_clock), "{:?}", got.lab);
    assert!(got.cli.iter().all(|r| !r.wall_clock));
    assert!(h.state().perf.status.contains("timed by the wall clock"));
}

#[test]
#[ignore = "2^28-word buffers: for a real GPU, in release"]
fn the_lab_at_its_defaults_is_the_cli_at_2_28() {
    let _one = one_at_a_time();
    const LOG_N: u32 = 28;
    let mut h = app();
    let defaults = stagewise::ui::perf::PerfLab::default();
    assert_eq!(h.state().perf.warmup_ms, bench::DEFAULT_MIN_WARMUP_MS);
    let lab = lab_rows(&mut h, LOG_N, defaults.reps, defaults.warmup_ms);
    // The app's device first: the CLI's is opened only once the app's is gone (one device a GPU
    // at 2^28 words a buffer).
    let adapter = h.state().gpu().unwrap().adapter_name();
    drop(h);
    let cli = bench_rows(
        &Gpu::headless(None).unwrap(),
        LOG_N,
        defaults.reps,
        defaults.warmup_ms,
    );
    println!("adapter: {adapter}");
    print("lab", &lab);
    print("cli", &cli);
    for (v, r) in ratios(&lab, &cli) {
        println!("{v}: lab / cli fraction of copy {r:.4}");
        assert!((r - 1.0).abs() <= 0.05, "{v}: {r:.4}");
    }
    for rows in [&lab, &cli] {
        let frac = |v: &str| fraction(rows, v);
        assert!(frac("naive") < frac("tiled") && frac("tiled") <= 1.05);
    }
}
