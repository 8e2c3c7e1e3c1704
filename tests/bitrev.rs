//! Bit-reversal on the GPU against the CPU model.
mod common;

use common::{gpu, random_data, run, try_run};
use stagewise::algo::AlgoOptions;
use stagewise::algo::bitrev::{EXAMPLE, EXAMPLE_RESULT, model};
use stagewise::data::{DType, Data, example_data};

fn bitrev() -> AlgoOptions {
    AlgoOptions::Bitrev(Default::default())
}

#[test]
fn every_variant_matches_the_cpu_model_for_every_k_and_type() {
    let _ = gpu();
    for variant in ["naive", "staged", "tiled"] {
        for k in 0..=20u32 {
            for (t, dtype) in DType::ALL.into_iter().enumerate() {
                let input = random_data(
                    1 << k,
                    dtype,
                    (k as u64) * 7 + t as u64 + variant.len() as u64 * 1000,
                    true,
                );
                let want = model::naive(&input.bits);
                let r = run(&bitrev(), variant, input, false);
                assert!(r.verified, "{variant} k={k} {dtype}: {:?}", r.mismatch);
                assert_eq!(r.output.bits, want, "{variant} k={k} {dtype}");
            }
        }
    }
}

#[test]
fn seed_table() {
    for variant in ["naive", "staged"] {
        for dtype in DType::ALL {
            let r = run(&bitrev(), variant, example_data(&EXAMPLE, dtype), false);
            assert_eq!(
                r.output,
                example_data(&EXAMPLE_RESULT, dtype),
                "{variant} {dtype}"
            );
            assert!(r.verified);
        }
    }
}

#[test]
fn staged_trace_is_demo_b() {
    let iota = Data::from_u32(&(0..16).collect::<Vec<u32>>());
    let r = run(&bitrev(), "staged", iota, true);
    let rows: Vec<Vec<u32>> = r.stages.iter().map(|s| s.data.bits.clone()).collect();
    assert_eq!(rows.len(), 5, "stage 0 (input) + 4 stages");
    assert_eq!(rows[0], (0..16).collect::<Vec<u32>>());
    assert_eq!(rows[1..4], model::DEMO_B_16, "the seed's Demo B table");
    assert_eq!(rows[4], rows[3]);
    let blocks: Vec<u64> = r
        .stages
        .iter()
        .map(|s| s.to_json()["block_size"].as_u64().unwrap())
        .collect();
    assert_eq!(blocks, [16, 8, 4, 2, 1]);
    assert_eq!(r.passes.len(), 8, "kernel1 + kernel2 per stage");
    assert!(r.verified);
}

#[test]
fn traced_stages_match_the_model_on_random_input() {
    for k in [1u32, 3, 6, 10] {
        let input = random_data(1 << k, DType::I32, k as u64, false);
        let cpu = model::staged(&input.bits);
        let r = run(&bitrev(), "staged", input, true);
        assert_eq!(r.stages.len(), k as usize + 1);
        for (s, want) in r.stages[1..].iter().zip(&cpu) {
            assert_eq!(&s.data.bits, want, "k={k} {}", s.label);
        }
    }
}

#[test]
fn f32_bits_move_untouched() {
    let bits = vec![
        0x7fc0_0001,
        0xffc0_0000,
        0x7f80_0000,
        0x8000_0000,
        0x0000_0001,
        0xff80_0000,
        0x3f80_0000,
        0x7fff_ffff,
    ];
    let input = Data::new(DType::F32, bits.clone());
    for variant in ["naive", "staged"] {
        let r = run(&bitrev(), variant, input.clone(), false);
        assert_eq!(
            r.output.bits,
            model::naive(&bits),
            "{variant}: NaN payloads and -0 survive"
        );
    }
}

#[test]
fn errors_are_clear() {
    let e = try_run(&bitrev(), "naive", Data::from_u32(&[1, 2, 3]), false).unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
    let e = try_run(&bitrev(), "naive", Data::from_u32(&[]), false).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = try_run(&bitrev(), "nope", Data::from_u32(&[1, 2]), false).unwrap_err();
    assert!(e.to_string().contains("unknown variant 'nope'"), "{e}");
    // N above the binding limit is refused before any allocation, naming the limit.
    let too_big = (gpu().max_binding_bytes() / 4 + 1) as usize;
    let e = gpu()
        .check_elements(too_big.next_power_of_two(), "bitrev")
        .unwrap_err();
    assert!(
        e.to_string().contains("max_storage_buffer_binding_size"),
        "{e}"
    );
}

#[test]
fn more_than_65535_workgroups_use_a_2d_grid() {
    // 2^24 elements at 256 threads per workgroup is 65536 workgroups: one more than a dimension holds.
    let input = random_data(1 << 24, DType::U32, 99, false);
    let want = model::naive(&input.bits);
    let r = run(&bitrev(), "naive", input.clone(), false);
    assert!(r.output.bits == want, "naive at 2^24");
    let r = run(
        &AlgoOptions::Copy(Default::default()),
        "scalar",
        input.clone(),
        false,
    );
    assert!(r.output.bits == input.bits, "scalar copy at 2^24");
}
