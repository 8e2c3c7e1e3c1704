//! How long the memory lens takes to record and analyse a 2^16-element run. A binary of its own:
//! in tests/lens.rs the other tests' GPU work shares the device and its queue, and a recording
//! timed beside them once took 13.5 s instead of 0.3 (CI on 2 cores).
mod common;

use common::record;
use stagewise::algo::AlgoOptions;

#[test]
fn recording_2_16_elements_takes_under_5_seconds_in_every_room_timed() {
    let cases = [
        (AlgoOptions::Bitrev(Default::default()), "naive"),
        (AlgoOptions::Bmmc(Default::default()), "seed-plu"),
        (AlgoOptions::Scan(Default::default()), "ladder"),
        (AlgoOptions::Scan(Default::default()), "reduce-then-scan"),
        (AlgoOptions::Copy(Default::default()), "vec4"),
    ];
    for (a, v) in cases {
        // Warm the pipelines once; the limit is for a run, not for the driver's first compile.
        record(&a, v, 1 << 16);
        let t = std::time::Instant::now();
        record(&a, v, 1 << 16);
        let s = t.elapsed().as_secs_f64();
        eprintln!("record + analyse 2^16 {} {v}: {s:.2} s", a.name());
        assert!(s < 5.0, "{} {v}: {s:.2} s", a.name());
    }
}
