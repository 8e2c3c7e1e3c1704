//! Bad input and GPU faults: every failure is an error value with a clear message, never a panic,
//! and the engine keeps working afterwards. The parsers are fuzzed (proptest) and run over the corpus
//! in tests/corpus.
mod common;

use common::{gpu, run};
use proptest::prelude::*;
use stagewise::algo::AlgoOptions;
use stagewise::data::{self, DType, Data};
use stagewise::error::Error;
use stagewise::gpu::Gpu;

#[test]
fn corpus_inputs_parse_or_fail_cleanly() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        for dtype in DType::ALL {
            match data::read_input(path.to_str().unwrap(), dtype) {
                Ok(d) => assert!(!d.is_empty(), "{path:?}: an Ok input is never empty"),
                Err(e) => {
                    let msg = e.to_string();
                    assert!(
                        !msg.is_empty() && !msg.contains('\n'),
                        "{path:?}: one-line message: {msg}"
                    );
                }
            }
        }
        seen += 1;
    }
    assert!(seen >= 10, "the corpus is in the repo");
    // Specific verdicts.
    let p = |f: &str| format!("{dir}/{f}");
    assert!(
        data::read_input(&p("truncated.json"), DType::U32)
            .unwrap_err()
            .to_string()
            .contains("invalid JSON")
    );
    assert!(
        data::read_input(&p("huge_int.txt"), DType::U32)
            .unwrap_err()
            .to_string()
            .contains("out of range")
    );
    assert!(
        data::read_input(&p("nulls.json"), DType::U32)
            .unwrap_err()
            .to_string()
            .contains("input[0]")
    );
    assert!(
        data::read_input(&p("empty.txt"), DType::U32)
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
    assert!(
        data::read_input(&p("comment.txt"), DType::U32)
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
    assert_eq!(
        data::read_input(&p("hex.txt"), DType::I32).unwrap(),
        Data::from_i32(&[i32::MIN, i32::MAX])
    );
    let f = data::read_input(&p("floats.txt"), DType::F32)
        .unwrap()
        .f32s();
    assert!(f[0].is_nan() && f[1].is_nan() && f[1].is_sign_negative() && f[2] == f32::INFINITY);
    assert_eq!(f[4], f32::INFINITY, "1e39 rounds to inf in f32");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn text_parser_never_panics(s in "\\PC{0,64}") {
        for dtype in DType::ALL {
            let _ = data::parse_text(&s, dtype);
        }
    }

    #[test]
    fn numbers_round_trip(v in proptest::collection::vec(any::<u32>(), 1..50)) {
        for dtype in DType::ALL {
            let d = Data::new(dtype, v.clone());
            let text: Vec<String> = (0..d.len()).map(|i| d.fmt_elem(i)).collect();
            let back = data::parse_text(&text.join(","), dtype).unwrap();
            if dtype == DType::F32 {
                // NaN payloads are not spelled out; everything else is exact.
                for (a, b) in back.bits.iter().zip(&v) {
                    let (fa, fb) = (f32::from_bits(*a), f32::from_bits(*b));
                    prop_assert!(a == b || (fa.is_nan() && fb.is_nan() && fa.is_sign_negative() == fb.is_sign_negative()));
                }
            } else {
                prop_assert_eq!(&back.bits, &v);
            }
        }
    }

    #[test]
    fn npy_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend(bytes);
        let _ = data::parse_npy(&b, DType::U32);
    }

    #[test]
    fn session_parser_never_panics(s in "\\PC{0,80}") {
        let _ = serde_json::from_str::<stagewise::ui::app::Session>(&s);
    }
}

#[test]
fn a_validation_error_is_an_error_and_the_next_run_works() {
    let g = gpu();
    let e = g
        .pipeline(
            "broken",
            "@compute @workgroup_size(64) fn main() { let x: u32 = 1.5; }",
            "main",
        )
        .unwrap_err();
    assert!(matches!(e, Error::Validation(_)), "{e:?}");
    // A binding that does not match the shader: caught by the error scope too.
    let p = g.pipeline("ok", "@group(0) @binding(0) var<storage, read_write> a: array<u32>; @compute @workgroup_size(1) fn main() { a[0] = 1u; }", "main").unwrap();
    let u = g.uniform("wrong kind of buffer", &[1]).unwrap();
    let e = g.bind(&p, &[&u]).unwrap_err();
    assert!(matches!(e, Error::Validation(_)), "{e:?}");
    let r = run(
        &AlgoOptions::Bitrev(Default::default()),
        "naive",
        Data::from_u32(&[1, 2, 3, 4]),
        false,
    );
    assert_eq!(r.output.bits, [1, 3, 2, 4]);
}

#[test]
fn a_lost_device_is_reported_and_a_new_one_works() {
    let g = Gpu::headless(None).unwrap();
    g.device.destroy();
    let _ = g.device.poll(wgpu::PollType::wait_indefinitely());
    let e = stagewise::algo::run(
        AlgoOptions::Bitrev(Default::default()).algo(),
        &g,
        &stagewise::algo::RunRequest {
            variant: &stagewise::algo::bitrev::Variant::INFO[0],
            dtype: DType::U32,
            input: Data::from_u32(&[1, 2]),
            trace: false,
        },
    )
    .unwrap_err();
    assert!(matches!(e, Error::DeviceLost(_)), "{e:?}");
    assert!(e.to_string().starts_with("GPU device lost: "), "{e}");
    let fresh = Gpu::headless(None).unwrap();
    let r = stagewise::algo::run(
        AlgoOptions::Bitrev(Default::default()).algo(),
        &fresh,
        &stagewise::algo::RunRequest {
            variant: &stagewise::algo::bitrev::Variant::INFO[1],
            dtype: DType::U32,
            input: Data::from_u32(&[1, 2, 3, 4]),
            trace: true,
        },
    )
    .unwrap();
    assert!(r.verified);
}

#[test]
fn an_injected_out_of_memory_fails_one_run_and_the_next_works() {
    let g = Gpu::headless(None).unwrap();
    let req = |input: &[u32]| stagewise::algo::RunRequest {
        variant: &stagewise::algo::bitrev::Variant::INFO[1],
        dtype: DType::U32,
        input: Data::from_u32(input),
        trace: true,
    };
    let algo = AlgoOptions::Bitrev(Default::default());
    g.inject_out_of_memory();
    let e = stagewise::algo::run(algo.algo(), &g, &req(&[1, 2, 3, 4])).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory(_)), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("GPU out of memory: allocating ") && msg.ends_with("use a smaller N"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    let r = stagewise::algo::run(algo.algo(), &g, &req(&[1, 2, 3, 4])).unwrap();
    assert!(r.verified);
    assert_eq!(r.output.bits, [1, 3, 2, 4]);
}

#[test]
fn a_destroyed_device_reports_device_lost() {
    let g = Gpu::headless(None).unwrap();
    g.device.destroy();
    let e = g.storage_init("after destroy", &[1, 2, 3]).unwrap_err();
    assert!(matches!(e, Error::DeviceLost(_)), "{e:?}");
    assert!(g.check_lost().is_some());
}

/// The engine knows no instrument: one plugs in through `gpu::hook`, builds each kernel once (a
/// cached pipeline is never rebuilt, however many runs use it) and wraps every pass of every run;
/// the kernel it built runs and computes what the normal build does.
#[test]
fn an_instrument_builds_each_kernel_once_and_wraps_every_pass() {
    use stagewise::gpu::hook::{Built, HookFuture, Instrument, RunHook};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    #[derive(Default)]
    struct Counting {
        builds: AtomicUsize,
        passes: Arc<AtomicUsize>,
        runs: Arc<AtomicUsize>,
    }
    struct Hook {
        passes: Arc<AtomicUsize>,
        runs: Arc<AtomicUsize>,
    }
    impl Instrument for Counting {
        fn mode(&self) -> &'static str {
            "counting"
        }
        fn build(&self, _label: &str, source: &str, entry: &str) -> stagewise::Result<Built> {
            self.builds.fetch_add(1, SeqCst);
            // The same kernel with a comment: a build of its own, the same computation.
            Ok(Built {
                source: format!("// counted\n{source}"),
                entry: entry.into(),
                data: Arc::new(()),
            })
        }
        fn begin(
            self: Arc<Self>,
            _gpu: &Gpu,
            _plan: &stagewise::gpu::Plan,
        ) -> stagewise::Result<Box<dyn RunHook>> {
            Ok(Box::new(Hook {
                passes: self.passes.clone(),
                runs: self.runs.clone(),
            }))
        }
    }
    impl RunHook for Hook {
        fn bind(&self, _cp: &mut wgpu::ComputePass<'_>, _pass: usize) {}
        fn after(&self, _enc: &mut wgpu::CommandEncoder, _pass: usize) {
            self.passes.fetch_add(1, SeqCst);
        }
        fn finish<'a>(&'a self, _gpu: &'a Gpu, _plan: &'a stagewise::gpu::Plan) -> HookFuture<'a> {
            self.runs.fetch_add(1, SeqCst);
            Box::pin(async { Ok(()) })
        }
    }

    let counting = Arc::new(Counting::default());
    let g = gpu().with_instrument(counting.clone());
    assert!(g.is_instrumented() && !gpu().is_instrumented());
    let spec: stagewise::request::RunSpec = serde_json::from_str(
        r#"{"algorithm": "bitrev", "variant": "staged", "input": {"from": "generate", "n": 64}}"#,
    )
    .unwrap();
    let req = spec.resolve().unwrap();
    let algo = spec.algo.algo();
    let normal = stagewise::algo::run(algo, gpu(), &req).unwrap();
    let first = stagewise::algo::run(algo, &g, &req).unwrap();
    let builds = counting.builds.load(SeqCst);
    assert!(builds >= 1);
    assert_eq!(counting.passes.load(SeqCst), first.passes.len());
    let second = stagewise::algo::run(algo, &g, &req).unwrap();
    assert_eq!(
        counting.builds.load(SeqCst),
        builds,
        "a cached pipeline was rebuilt"
    );
    assert_eq!(counting.passes.load(SeqCst), 2 * first.passes.len());
    assert_eq!(counting.runs.load(SeqCst), 2);
    assert_eq!(first.output, normal.output);
    assert_eq!(second.output, normal.output);
    // The instrumented pipeline is the device's own, with the instrument's data beside it.
    assert!(normal.verified && normal.passes.iter().all(|p| p.kernel.is_some()));
}
