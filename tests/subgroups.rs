//! The subgroup operations Stagewise's kernels use, each against a CPU expectation, on this device
//! and on lavapipe at other native vector widths (`LP_NATIVE_VECTOR_WIDTH`: 128 bits → 4 lanes,
//! 256 → 8, the default, 512 → 16, 1024 → reports 32 but runs 16), each probed in a child
//! process because llvmpipe reads the width once, when it loads.

mod common;

use stagewise::gpu::{Plan, Region, execute_blocking as execute};

const WG: u32 = 128;
/// Words each invocation writes.
const FIELDS: [&str; 14] = [
    "subgroup_size",
    "subgroup_invocation_id",
    "subgroup_id",
    "num_subgroups",
    "subgroupAdd(1)",
    "subgroupInclusiveAdd(1)",
    "subgroupAdd(lid)",
    "subgroupMin(lid)",
    "subgroupShuffle(lid, sid+1)",
    "subgroupShuffleXor(lid, 1)",
    "subgroupShuffleXor(lid, size/2)",
    "subgroupShuffleUp(lid, 1)",
    "subgroupShuffleDown(lid, 1)",
    "subgroupBallot(true).x",
];

const PROBE: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(128)
fn probe(
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) size: u32,
    @builtin(subgroup_invocation_id) sid: u32,
    @builtin(subgroup_id) sgid: u32,
    @builtin(num_subgroups) nsg: u32,
) {
    let b = lid * 14u;
    out[b + 0u] = size;
    out[b + 1u] = sid;
    out[b + 2u] = sgid;
    out[b + 3u] = nsg;
    out[b + 4u] = subgroupAdd(1u);
    out[b + 5u] = subgroupInclusiveAdd(1u);
    out[b + 6u] = subgroupAdd(lid);
    out[b + 7u] = subgroupMin(lid);
    out[b + 8u] = subgroupShuffle(lid, (sid + 1u) % size);
    out[b + 9u] = subgroupShuffleXor(lid, 1u);
    out[b + 10u] = subgroupShuffleXor(lid, size / 2u);
    out[b + 11u] = subgroupShuffleUp(lid, 1u);
    out[b + 12u] = subgroupShuffleDown(lid, 1u);
    out[b + 13u] = subgroupBallot(true).x;
}
"#;

/// Run the probe; for each field that differs from the CPU expectation (subgroups of `size`
/// consecutive invocations, `size` as the device reports it), the field and its first difference.
fn probe() -> (u32, Vec<String>) {
    let gpu = common::gpu();
    assert!(gpu.has_subgroups(), "the probe needs Features::SUBGROUP");
    let words = (WG as usize) * FIELDS.len();
    let out = gpu
        .storage_poisoned("probe out", words, 0xDEAD_BEEF)
        .unwrap();
    let pipe = gpu.pipeline("subgroup probe", PROBE, "probe").unwrap();
    let mut plan = Plan::default();
    plan.push("probe", &pipe, gpu.bind(&pipe, &[&out]).unwrap(), [1, 1, 1]);
    plan.output = Some(Region::words(&out, words));
    plan.keep.push(out);
    let got = execute(gpu, &plan, false).unwrap().output;
    let size = gpu.info.subgroup_min_size;
    let mut wrong = Vec::new();
    for (f, name) in FIELDS.iter().enumerate() {
        let mut first = None;
        let mut count = 0;
        for lid in 0..WG {
            let (sid, base) = (lid % size, lid - lid % size);
            let half = (size / 2).max(1);
            let ballot = if size >= 32 {
                u32::MAX
            } else {
                (1u32 << size) - 1
            };
            let want = match f {
                0 => size,
                1 => sid,
                2 => lid / size,
                3 => WG / size,
                4 => size,
                5 => sid + 1,
                6 => (base..base + size).sum(),
                7 => base,
                8 => base + (sid + 1) % size,
                9 => lid ^ 1,
                10 => base + (sid ^ half),
                // Lanes whose source is out of the subgroup get an undefined value.
                11 if sid == 0 => continue,
                11 => lid - 1,
                12 if sid + 1 == size => continue,
                12 => lid + 1,
                _ => ballot,
            };
            let g = got[lid as usize * FIELDS.len() + f];
            if g != want {
                count += 1;
                first.get_or_insert(format!("lane {lid}: {g} (want {want})"));
            }
        }
        if let Some(first) = first {
            wrong.push(format!(
                "{name}: {count} of {WG} lanes wrong, first {first}"
            ));
        }
    }
    (size, wrong)
}

/// The probe at this process's width: every operation as expected.
#[test]
fn subgroup_operations_match_the_cpu() {
    let (size, wrong) = probe();
    assert!(
        wrong.is_empty(),
        "{size}-lane subgroups:\n{}",
        wrong.join("\n")
    );
}

/// The probe in a child process at `LP_NATIVE_VECTOR_WIDTH=bits` (lavapipe only): its report.
fn probe_at(bits: u32) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_probe", "--nocapture", "--include-ignored"])
        .env("LP_NATIVE_VECTOR_WIDTH", bits.to_string())
        .env("STAGEWISE_PROBE_CHILD", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The child's half of [`probe_at`]: prints the probe's report between markers.
#[test]
#[ignore = "run by probe_at in a child process"]
fn child_probe() {
    if std::env::var_os("STAGEWISE_PROBE_CHILD").is_none() {
        return;
    }
    let (size, wrong) = probe();
    println!("PROBE size={size}\n{}\nEND", wrong.join("\n"));
}

fn report(text: &str) -> (u32, Vec<String>) {
    let body = text
        .split("PROBE ")
        .nth(1)
        .and_then(|s| s.split("\nEND").next())
        .unwrap_or_else(|| panic!("no probe report in:\n{text}"));
    let mut lines = body.lines();
    let size = lines
        .next()
        .unwrap()
        .trim_start_matches("size=")
        .parse()
        .unwrap();
    (
        size,
        lines
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

fn on_lavapipe() -> bool {
    common::gpu().info.name.contains("llvmpipe")
}

/// lavapipe's 4-, 8- and 16-lane subgroups are right in every operation Stagewise uses.
#[test]
fn lavapipe_widths_4_8_16_are_right() {
    if !on_lavapipe() {
        return;
    }
    for (bits, lanes) in [(128, 4), (256, 8), (512, 16)] {
        let (size, wrong) = report(&probe_at(bits));
        assert_eq!(size, lanes, "LP_NATIVE_VECTOR_WIDTH={bits}");
        assert!(wrong.is_empty(), "{lanes} lanes:\n{}", wrong.join("\n"));
    }
}

/// lavapipe at LP_NATIVE_VECTOR_WIDTH=1024 (Mesa's llvmpipe, as installed here) reports 32-lane
/// subgroups (the adapter's subgroup_min/max_size and the `subgroup_size` builtin) but runs 16:
/// `subgroup_invocation_id` wraps at 16, `num_subgroups` is 8 for 128 invocations, reductions,
/// scans and ballots span 16 lanes, and shuffles to lanes 16..31 read undefined values. Every
/// kernel that trusts `subgroup_size` is then wrong, so Stagewise's CI does not run this width.
/// This asserts that behaviour, so a lavapipe that fixes it fails here and is noticed.
#[test]
fn lavapipe_width_32_reports_32_lanes_but_runs_16() {
    if !on_lavapipe() {
        return;
    }
    let (size, wrong) = report(&probe_at(1024));
    println!(
        "LP_NATIVE_VECTOR_WIDTH=1024: size {size}\n{}",
        wrong.join("\n")
    );
    assert_eq!(size, 32);
    let fields: Vec<&str> = wrong.iter().filter_map(|l| l.split(": ").next()).collect();
    // Everything but the reported size and the one shuffle that stays inside 16 lanes.
    let expected: Vec<&str> = FIELDS
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "subgroup_size" | "subgroupShuffleXor(lid, 1)"))
        .collect();
    assert_eq!(
        fields,
        expected,
        "the 32-lane behaviour changed:\n{}",
        wrong.join("\n")
    );
    for line in [
        "num_subgroups: 128 of 128 lanes wrong, first lane 0: 8 (want 4)",
        "subgroupAdd(1): 128 of 128 lanes wrong, first lane 0: 16 (want 32)",
        "subgroupBallot(true).x: 128 of 128 lanes wrong, first lane 0: 65535 (want 4294967295)",
    ] {
        assert!(
            wrong.iter().any(|l| l == line),
            "expected {line:?} in:\n{}",
            wrong.join("\n")
        );
    }
}
