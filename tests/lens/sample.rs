//! Sampled recording (src/lens/sample.rs): where full recording fits, a sample's counts weighed up
//! to the grid agree with every workgroup's within 1 % for every algorithm's default passes
//! (requests, sectors, segments, bytes, workgroup-memory wavefronts) — or, where the sampled
//! workgroups' own counts differ (a scatter whose tiles hold different digits), within five of
//! the standard errors the lens states for that site (on lavapipe at most 3 %; 8 runs there gave at most
//! 3.5 of them over ~150 sites a run); the estimates of distinct words and sectors
//! within the bounds stated below.

use crate::common::{gpu, random_data};
use stagewise::algo::{self, AlgoOptions, RunRequest, radix, scan};
use stagewise::data::DType;
use stagewise::lens::sample::SampleSpec;
use stagewise::lens::{self, LensOptions, LensReport};

fn near(a: u64, b: u64, error: Option<f64>, what: &str) -> Result<(), String> {
    let (a, b) = (a as f64, b as f64);
    // The lens states each site's sampling error; the sample must lie within five of them. On
    // lavapipe none is past 3 %; on an H200 the FFT's default at 2^16 chains two phases through
    // L2 and sites such as its twiddle reads fall in few sampled workgroups (errors near 0.5).
    let error = error.unwrap_or(0.0);
    // About 150 sites are compared a run: five errors keep a true estimate from failing by chance.
    let tol = 0.01f64.max(5.0 * error);
    if (a - b).abs() <= tol * b.max(1.0) {
        Ok(())
    } else {
        Err(format!(
            "{what}: sampled {a}, every workgroup {b} (stated error {error:?})"
        ))
    }
}

/// `s` (sampled) against `f` (every workgroup). A site whose counts differ between `f` and `g`, a
/// second recording of every workgroup, depends on timing (a look-back's polling and fallback):
/// no sample can be closer than the run to itself, so it is left out. The first difference is
/// the error.
fn agree(s: &LensReport, f: &LensReport, g: &LensReport, at: &str) -> Result<usize, String> {
    let mut compared = 0;
    assert_eq!(s.passes.len(), f.passes.len(), "{at}");
    for ((ps, pf), pg) in s.passes.iter().zip(&f.passes).zip(&g.passes) {
        let at = format!("{at} pass {} {}", pf.pass, pf.label);
        let dynamic = pf.global != pg.global;
        for b in &pf.global {
            let same = pg.global.iter().find(|x| x.site == b.site) == Some(b);
            let Some(a) = ps.global.iter().find(|x| x.site == b.site).filter(|_| same) else {
                continue;
            };
            let w = format!("{at} line {} {}", b.line, b.buffer);
            let check = |x, y, what: &str| near(x, y, a.sample_error, &format!("{w} {what}"));
            check(a.requests, b.requests, "requests")?;
            check(a.sectors, b.sectors, "sectors")?;
            check(a.min_sectors, b.min_sectors, "min sectors")?;
            check(a.segments, b.segments, "segments")?;
            check(a.bytes, b.bytes, "bytes")?;
            compared += 1;
        }
        for (a, b) in ps.shared.iter().zip(&pf.shared) {
            if pg.shared.iter().find(|x| x.site == b.site) != Some(b) {
                continue;
            }
            let w = format!("{at} line {} workgroup", b.line);
            let check = |x, y, what: &str| near(x, y, a.sample_error, &format!("{w} {what}"));
            check(a.requests, b.requests, "requests")?;
            check(a.wavefronts, b.wavefronts, "wavefronts")?;
        }
        // Distinct words are estimated from the sample (a word one sampled workgroup alone
        // touches stands for as many as that workgroup does): within 5 % where each is touched
        // by one workgroup, by every one or by a few (a ladder's rung); where a scatter's target
        // sector gets words from many workgroups the sample sees part of them (between half and
        // all of the true count). Distinct sectors from a sample are at least the sectors
        // requested, up to the span: within a factor of 2.
        if !dynamic {
            let scatter = pf.global.iter().any(|g| g.sectors > g.min_sectors);
            let r = ps.floor_bytes as f64 / pf.floor_bytes.max(1) as f64;
            let ok = if scatter { 0.5..=1.01 } else { 0.95..=1.05 };
            if !ok.contains(&r) {
                return Err(format!(
                    "{at} floor: sampled {}, every workgroup {}",
                    ps.floor_bytes, pf.floor_bytes
                ));
            }
            let r = ps.footprint_bytes as f64 / pf.footprint_bytes.max(1) as f64;
            if !(0.5..=2.0).contains(&r) {
                return Err(format!(
                    "{at} footprint: sampled {}, every workgroup {}",
                    ps.footprint_bytes, pf.footprint_bytes
                ));
            }
        }
    }
    Ok(compared)
}

#[test]
fn half_of_the_workgroups_counts_what_all_of_them_do() {
    let mut sampled_passes = 0;
    // The look-backs never read a status (`--spin 0`): every tile counts or reduces each
    // predecessor itself, so their accesses do not depend on timing. Polling instead, a tile
    // falls back or not as its predecessors' pace decides (lavapipe bounds the polls by its loop
    // limit), and a recording of a sample runs at another pace than one of every workgroup.
    let patient = |a: AlgoOptions| match a {
        AlgoOptions::Radix(o) => AlgoOptions::Radix(radix::Options { spin: 0, ..o }),
        AlgoOptions::Scan(o) => AlgoOptions::Scan(scan::Options { spin: 0, ..o }),
        a => a,
    };
    for a in AlgoOptions::all_defaults().into_iter().map(patient) {
        let algo = a.algo();
        let variant = algo.info().variant(None).unwrap();
        let dtype = algo.fixed_dtype().unwrap_or(DType::U32);
        let o = |sample| LensOptions {
            sample,
            seed: 7,
            ..LensOptions::auto(32)
        };
        // The largest of 2^16 and 2^14 elements the default takes and records whole (its grid
        // is then worth sampling), else the room's example.
        let inputs = [1 << 16, 1 << 14].map(|n| random_data(n, dtype, 5, false));
        let (req, normal, full) = inputs
            .into_iter()
            .chain(algo.example(dtype))
            .find_map(|input| {
                let req = RunRequest {
                    variant,
                    dtype,
                    input,
                    trace: false,
                };
                let normal = algo::run(algo, gpu(), &req).ok()?;
                let full = pollster::block_on(lens::record_run_async(
                    algo,
                    gpu(),
                    &req,
                    &normal,
                    &o(SampleSpec::All),
                ));
                Some((req, normal, full.ok()?))
            })
            .unwrap_or_else(|| panic!("{}: nothing recorded whole", a.name()));
        // A look-back's polls are recorded each time they read: a predecessor slowed by the
        // tests beside this one can make a run of them overflow the log. Such a run is recorded
        // again; three that overflow fail.
        let record = |spec: SampleSpec, what: &str| {
            (0..3)
                .map(|_| {
                    pollster::block_on(lens::record_run_async(algo, gpu(), &req, &normal, &o(spec)))
                })
                .find(|r| !matches!(r, Err(stagewise::error::Error::Limit(_))))
                .unwrap_or_else(|| {
                    panic!(
                        "{} {}: three {what}s overflowed the log",
                        a.name(),
                        variant.name
                    )
                })
                .unwrap_or_else(|e| panic!("{} {}: a {what}: {e}", a.name(), variant.name))
        };
        assert!(full.records.iter().all(|r| r.sample.is_all()));
        let at = format!("{} {}", a.name(), variant.name);
        // A site whose counts depend on timing can differ between recordings unseen by the two
        // whole recordings when they happen to agree: a difference is recorded again (a new
        // sample and whole recording), and only one found three times fails.
        let mut last = String::new();
        let compared = (0..3).find_map(|_| {
            let part = record(SampleSpec::Fraction(0.5), "half sample");
            let again = record(SampleSpec::All, "whole recording");
            match agree(&part, &full, &again, &at) {
                Ok(n) => {
                    sampled_passes += part.records.iter().filter(|r| !r.sample.is_all()).count();
                    Some(n)
                }
                Err(e) => {
                    eprintln!("{e}: recorded again");
                    last = e;
                    None
                }
            }
        });
        let compared = compared.unwrap_or_else(|| panic!("three times: {last}"));
        assert!(compared > 0, "{at}: no site compared");
    }
    // The check means something only where passes were sampled.
    assert!(sampled_passes >= 5, "{sampled_passes} sampled passes");
}
