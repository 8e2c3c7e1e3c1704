//! Snapshot tests: every algorithm's view on its seed example (or a small iota), rendered by
//! egui_kittest on the wgpu device and compared with tests/snapshots/*.png. GPU timings are cleared
//! first so the pictures do not change from run to run. `UPDATE_SNAPSHOTS=true cargo test --test
//! snapshots` rewrites them after a deliberate change. They were drawn on lavapipe, where every
//! pixel must match (kittest's default colour tolerance, 0.6); another adapter's rasteriser
//! anti-aliases the diagrams' lines differently by a few pixels (an H200: at most 4 pixels past
//! 0.6, none past 1.5), so there each pixel may differ by up to 1.5.
mod common;

use egui_kittest::Harness;
use stagewise::algo::{AlgoOptions, RunResult};
use stagewise::data::{DType, Data};
use stagewise::ui::views::{self, ViewState};

fn traced(algo: AlgoOptions, variant: &str) -> RunResult {
    let a = algo.algo();
    let input = a
        .example(DType::U32)
        .unwrap_or_else(|| Data::from_u32(&(0..16).collect::<Vec<u32>>()));
    let mut r = common::run(&algo, variant, input, true);
    for p in &mut r.passes {
        p.gpu_ms = None;
    }
    r.adapter = "snapshot".into();
    r
}

fn snapshot(name: &str, result: RunResult, stage: usize) {
    let mut state = ViewState::default();
    let mut h = Harness::builder()
        .with_size([1100.0, 640.0])
        .wgpu()
        .build_ui(move |ui| views::show(ui, &result, stage, 1, &mut state));
    h.run();
    let info = &common::gpu().info;
    let lavapipe = info.device_type == wgpu::DeviceType::Cpu && info.name.contains("llvmpipe");
    let options = egui_kittest::SnapshotOptions::new();
    let options = if lavapipe {
        options
    } else {
        options.threshold(1.5)
    };
    h.snapshot_options(name, &options);
}

#[test]
fn bitrev_demo_b() {
    snapshot(
        "view_bitrev_staged",
        traced(AlgoOptions::Bitrev(Default::default()), "staged"),
        2,
    );
}

#[test]
fn bitrev_demo_a() {
    snapshot(
        "view_bitrev_naive",
        traced(AlgoOptions::Bitrev(Default::default()), "naive"),
        1,
    );
}

#[test]
fn bmmc_plan() {
    let o: stagewise::algo::bmmc::Options =
        serde_json::from_value(serde_json::json!({"preset": "transpose:2,2"})).unwrap();
    snapshot(
        "view_bmmc_transpose",
        traced(AlgoOptions::Bmmc(o), "tiled"),
        1,
    );
}

#[test]
fn oddeven_pair_swaps() {
    snapshot(
        "view_oddeven_transposition",
        traced(AlgoOptions::Oddeven(Default::default()), "transposition"),
        3,
    );
}

#[test]
fn scan_ladder_phases() {
    snapshot(
        "view_scan_ladder",
        traced(AlgoOptions::Scan(Default::default()), "ladder"),
        2,
    );
}

#[test]
fn fft_thread_ownership() {
    snapshot(
        "view_fft_16",
        traced(AlgoOptions::Fft(Default::default()), "workgroup"),
        2,
    );
}
