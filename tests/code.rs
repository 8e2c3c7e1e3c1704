//! The code panel highlights exactly the WGSL of the current stage: for every algorithm and variant,
//! every traced stage maps to a non-empty highlighted range inside the entry point of a kernel that
//! ran for that stage, and stages that are part of one dispatch (a transposition phase, an FFT
//! butterfly or exchange, the decoupled look-back) highlight their marked lines, not the whole kernel.
mod common;

use stagewise::algo::{AlgoOptions, RunResult};
use stagewise::data::{DType, Data};
use stagewise::ui::code::{self, entry_lines, highlights, markers};

fn input_for(algo: &AlgoOptions) -> Data {
    let a = algo.algo();
    let dtype = a.fixed_dtype().unwrap_or(DType::U32);
    a.example(dtype)
        .unwrap_or_else(|| Data::from_u32(&(0..16u32).rev().collect::<Vec<_>>()))
}

/// Every stage after the input highlights lines of a kernel that ran in that stage.
fn check_every_stage(r: &RunResult) {
    let what = format!("{} / {}", r.algorithm, r.variant);
    assert!(r.stages.len() > 1, "{what}: a trace");
    for stage in 1..r.stages.len() {
        let hs = highlights(r, stage);
        assert!(
            !hs.is_empty(),
            "{what} stage {stage} ({}): no kernel",
            r.stages[stage].label
        );
        let ran: Vec<_> = code::passes_of(r, stage)
            .into_iter()
            .filter_map(|i| r.passes.get(i)?.kernel.clone())
            .collect();
        for h in &hs {
            let lines = h.source.lines().count();
            assert!(
                !h.ranges.is_empty(),
                "{what} stage {stage}: nothing highlighted"
            );
            // The file is the source of a kernel that ran for this stage, and every range lies
            // inside the entry point of one of those kernels.
            let entries: Vec<(usize, usize)> = ran
                .iter()
                .filter(|k| *k.source == *h.source)
                .filter_map(|k| entry_lines(&k.source, &k.entry))
                .collect();
            assert!(
                !entries.is_empty(),
                "{what} stage {stage}: not a kernel that ran"
            );
            for &(a, b) in &h.ranges {
                assert!(
                    a < b && b <= lines,
                    "{what} stage {stage}: range {a}..{b} of {lines}"
                );
                assert!(
                    entries.iter().any(|&(ea, eb)| ea <= a && b <= eb),
                    "{what} stage {stage}: {a}..{b} outside the entry point(s) {entries:?}"
                );
                let text: Vec<&str> = h.source.lines().skip(a).take(b - a).collect();
                assert!(
                    text.iter()
                        .any(|l| !l.trim().is_empty() && !l.trim().starts_with("//")),
                    "{what} stage {stage}: the range {a}..{b} holds no code"
                );
            }
        }
    }
}

/// The highlighted text of `stage` when it is marked (panics if the stage is not marked).
fn marked_text(r: &RunResult, stage: usize) -> String {
    let hs = highlights(r, stage);
    let h = hs.iter().find(|h| h.marked).unwrap_or_else(|| {
        panic!(
            "{} / {} stage {stage} ({}): not a marked step; steps {:?}",
            r.algorithm,
            r.variant,
            r.stages[stage].label,
            code::stage_steps(r, stage)
        )
    });
    let entry: usize = h
        .entries
        .iter()
        .filter_map(|e| entry_lines(&h.source, e))
        .map(|(a, b)| b - a)
        .sum();
    let lit: usize = h.ranges.iter().map(|(a, b)| b - a).sum();
    assert!(
        lit < entry,
        "a marked step is part of the kernel, not all of it"
    );
    h.ranges
        .iter()
        .flat_map(|&(a, b)| h.source.lines().skip(a).take(b - a))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_stage_of_every_variant_maps_to_its_kernel_lines() {
    let mut cases = 0;
    for algo in AlgoOptions::all_defaults() {
        for v in algo.algo().info().variants {
            let r = common::run(&algo, v.name, input_for(&algo), true);
            check_every_stage(&r);
            cases += 1;
        }
    }
    assert!(cases >= 20, "{cases} algorithm/variant pairs");
    // Variants with other kernels: decoupled's workgroup-memory tile scan, a larger FFT (regroup and
    // exchange steps), Batcher's network on more keys than one pass.
    let scan: stagewise::algo::scan::Options =
        serde_json::from_value(serde_json::json!({"shared_scan": true})).unwrap();
    check_every_stage(&common::run(
        &AlgoOptions::Scan(scan),
        "decoupled",
        Data::from_u32(&(0..3000).collect::<Vec<u32>>()),
        true,
    ));
}

#[test]
fn transposition_phases_highlight_the_compare_exchange() {
    let algo = AlgoOptions::Oddeven(Default::default());
    let r = common::run(&algo, "transposition", input_for(&algo), true);
    let phases: Vec<usize> = (1..r.stages.len())
        .filter(|&s| r.stages[s].to_json().get("parity").is_some())
        .collect();
    assert!(!phases.is_empty(), "phase stages in the trace");
    for s in phases {
        let t = marked_text(&r, s);
        // The phase loop: every owner's compare-exchange (straight-line calls of `owner`).
        assert!(t.contains("owner(i + 0u * WG, ph"), "{t}");
        assert!(
            !t.contains("to_key(data"),
            "the load is not part of a phase: {t}"
        );
    }
}

#[test]
fn fft_steps_highlight_their_sections() {
    let o: stagewise::algo::fft::Options =
        serde_json::from_value(serde_json::json!({"size": 32, "elements_per_invocation": 4}))
            .unwrap();
    let algo = AlgoOptions::Fft(o);
    let input = Data::new(
        DType::F32,
        (0..64)
            .map(|i| ((i as f32) * 0.37).sin().to_bits())
            .collect(),
    );
    let r = common::run(&algo, "workgroup", input, true);
    check_every_stage(&r);
    let mut seen = std::collections::BTreeSet::new();
    for s in 1..r.stages.len() {
        let kind = r.stages[s].to_json()["kind"].as_str().unwrap().to_string();
        let t = marked_text(&r, s);
        match kind.as_str() {
            "butterfly" => assert!(t.contains("cmul(a - c"), "{t}"),
            "exchange" => {
                assert!(
                    t.contains("partner") && t.contains("workgroupBarrier"),
                    "{t}"
                );
                assert!(!t.contains("cmul"), "an exchange has no butterfly: {t}");
            }
            "regroup" => assert!(!t.contains("cmul"), "{t}"),
            other => panic!("unexpected step kind {other}"),
        }
        seen.insert(kind);
    }
    assert_eq!(
        seen.len(),
        3,
        "butterfly, regroup and exchange stages: {seen:?}"
    );
}

#[test]
fn decoupled_stages_highlight_the_look_back_and_the_store() {
    let o: stagewise::algo::scan::Options =
        serde_json::from_value(serde_json::json!({"shared_scan": true})).unwrap();
    let r = common::run(
        &AlgoOptions::Scan(o),
        "decoupled",
        Data::from_u32(&vec![1; 5000]),
        true,
    );
    let status = (1..r.stages.len())
        .find(|&s| r.stages[s].label.starts_with("tile status"))
        .expect("a tile-status stage");
    let t = marked_text(&r, status);
    assert!(t.contains("atomicLoad") && t.contains("publish("), "{t}");
    assert!(!t.contains("store_scanned"), "{t}");
    let out = r.stages.len() - 1;
    let t = marked_text(&r, out);
    assert!(
        t.contains("store_scanned") && !t.contains("atomicLoad"),
        "{t}"
    );
}

#[test]
fn markers_are_comments_in_every_shader() {
    // Every marker of every shipped shader names a non-empty region, and steps are closed.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    let mut n = 0;
    for d in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            let src = std::fs::read_to_string(f.unwrap().path()).unwrap();
            let steps = src.matches("// @step ").count();
            let ends = src.matches("// @end").count();
            assert_eq!(steps, ends, "every @step has its @end");
            for m in markers(&src) {
                assert!(m.start < m.end, "{m:?} is empty");
                n += 1;
            }
        }
    }
    assert!(n >= 12, "{n} markers");
}
