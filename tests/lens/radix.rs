//! The lens on the radix sort: every variant records; loads and scatters against values derived
//! by hand.

use super::*;

/// Record a radix run of `input` with `opts` (keys only unless `opts` says otherwise).
fn record_radix(opts: stagewise::algo::radix::Options, variant: &str, input: Data) -> LensReport {
    let a = AlgoOptions::Radix(opts);
    let algo = a.algo();
    let req = RunRequest {
        variant: algo.info().variant(Some(variant)).unwrap(),
        dtype: input.dtype,
        input,
        trace: false,
    };
    let normal = algo::run(algo, gpu(), &req).unwrap();
    assert!(normal.verified, "radix {variant}: {:?}", normal.mismatch);
    let rep = lens::record_run(algo, gpu(), &req, &normal, 32)
        .unwrap_or_else(|e| panic!("radix {variant}: {e}"));
    super::coverage::every_access_is_a_site(&rep);
    rep
}

/// The global sites of `buffer` and `kind` in pass `p`, summed: (requests, sectors, min sectors).
fn global_sum(p: &PassLens, buffer: &str, kind: Kind) -> (u64, u64, u64) {
    p.global
        .iter()
        .filter(|g| g.buffer == buffer && g.kind == kind)
        .fold((0, 0, 0), |(r, s, m), g| {
            (r + g.requests, s + g.sectors, m + g.min_sectors)
        })
}

#[test]
fn every_radix_variant_dtype_and_payload_records() {
    use stagewise::algo::radix::{Options, Values};
    for (variant, dtype, values, n) in [
        ("onesweep", DType::U32, Values::None, 4099),
        ("onesweep", DType::F32, Values::Iota, 1000),
        ("onesweep", DType::I32, Values::Input, 777),
        ("classic", DType::U32, Values::None, 4099),
        ("classic", DType::F32, Values::Iota, 1),
    ] {
        let opts = Options {
            values,
            ..Default::default()
        };
        let rep = record_radix(opts, variant, random_data(n, dtype, n as u64, true));
        assert!(!rep.passes.is_empty(), "{variant}");
        for p in &rep.passes {
            let accesses = rep.records[p.pass].accesses.len();
            assert!(accesses > 0, "{variant} {}: nothing recorded", p.label);
            counts_are_consistent(p, &format!("{variant} {}", p.label));
        }
        // Every scatter pass reads every key once and writes every key once.
        let scatters: Vec<_> = rep
            .passes
            .iter()
            .filter(|p| p.global.iter().any(|g| g.buffer == "keys_out"))
            .collect();
        assert_eq!(scatters.len(), 4, "{variant}: one scatter per 8-bit digit");
        for p in scatters {
            let rec = &rep.records[p.pass];
            let site_of = |a: &stagewise::lens::record::Access| &rec.kernel.sites[a.site as usize];
            let mut written: Vec<u32> = rec
                .accesses
                .iter()
                .filter(|a| site_of(a).buffer == "keys_out")
                .map(|a| a.addr)
                .collect();
            written.sort_unstable();
            assert_eq!(
                written,
                (0..n as u32).collect::<Vec<_>>(),
                "{variant} {}",
                p.label
            );
            let reads = rec
                .accesses
                .iter()
                .filter(|a| site_of(a).buffer == "keys_in" && site_of(a).kind == Kind::Read)
                .count();
            // Onesweep's fallback may read a predecessor's keys again; classic reads each once.
            assert!(
                reads >= n,
                "{variant} {}: {reads} reads of {n} keys",
                p.label
            );
        }
    }
}

/// Derived by hand, warp 32, u32 keys: a thread's key j of a tile sits at
/// tile·TILE + w·KPT·L + j·L + lane (src_index), so the 32 lanes of one load instruction read L
/// consecutive words in each of 32/L subgroups, every run starting on a multiple of L words: 4
/// sectors (128 bytes) per request, the minimum, whatever L is. When every key has the same
/// digit, the scatter's position x of tile t goes to t·TILE + x: the writes are as coalesced as
/// the reads. With 256 random digits a 32-key run of tile order holds keys of ~2 digits per
/// 15-key bucket run, so a warp's writes land in several places: more sectors than the minimum.
#[test]
fn radix_loads_are_coalesced_and_scatter_writes_follow_the_digit_runs() {
    use stagewise::algo::radix::Options;
    let n = 8192;
    let opts = Options {
        workgroup_size: 64,
        keys_per_thread: 8,
        ..Default::default()
    };
    let same = record_radix(
        opts.clone(),
        "onesweep",
        Data::new(DType::U32, vec![0x5a5a_5a5a; n]),
    );
    let random = record_radix(opts, "onesweep", random_data(n, DType::U32, 7, false));
    for rep in [&same, &random] {
        for p in rep.passes.iter().filter(|p| p.label.contains("scatter")) {
            let (req, sec, min) = global_sum(p, "keys_in", Kind::Read);
            if req == 0 {
                continue;
            }
            assert_eq!(sec, min, "{}: key loads coalesced", p.label);
            assert_eq!(sec, 4 * req, "{}: 4 sectors per request", p.label);
        }
    }
    let scatter = |rep: &LensReport| -> Vec<(u64, u64, u64)> {
        rep.passes
            .iter()
            .map(|p| global_sum(p, "keys_out", Kind::Write))
            .filter(|t| t.0 > 0)
            .collect()
    };
    for (req, sec, min) in scatter(&same) {
        assert_eq!(sec, min, "one digit: the tile leaves as one run");
        assert_eq!(sec, 4 * req);
    }
    for (req, sec, min) in scatter(&random) {
        assert!(
            sec > min,
            "random digits: {sec} sectors for {req} requests (ideal {min})"
        );
    }
}

/// `--prefetch P`: halfway through its ranking, tile t (with t + P < tiles) reads one key of each
/// 64-byte sector of tile t + P that lies below n — 16-key steps, ceil(K / 16) a thread — at the
/// prefetch's own site, in every digit pass; with P past the last tile that site reads nothing.
#[test]
fn radix_prefetch_reads_one_key_a_sector_of_the_tile_ahead() {
    use stagewise::algo::radix::Options;
    let (wg, kpt, n) = (64usize, 20usize, 10_000usize);
    let tile = wg * kpt;
    let tiles = n.div_ceil(tile);
    for ahead in [3usize, tiles] {
        let opts = Options {
            workgroup_size: wg as u32,
            keys_per_thread: kpt as u32,
            prefetch: Some(ahead as u32),
            ..Default::default()
        };
        let rep = record_radix(opts, "onesweep", random_data(n, DType::U32, 5, false));
        let mut want: Vec<u32> = (0..tiles.saturating_sub(ahead))
            .flat_map(|t| (0..wg * kpt.div_ceil(16)).map(move |x| ((t + ahead) * tile, 16 * x)))
            .filter(|&(base, x)| x < tile && base + x < n)
            .map(|(base, x)| (base + x) as u32)
            .collect();
        want.sort_unstable();
        let mut passes = 0;
        for p in rep.passes.iter().filter(|p| p.label.contains("scatter")) {
            let rec = &rep.records[p.pass];
            let site = |a: &stagewise::lens::record::Access| &rec.kernel.sites[a.site as usize];
            let mut got: Vec<u32> = rec
                .accesses
                .iter()
                .filter(|a| site(a).buffer == "keys_in" && site(a).text.contains("v = keys_in[i]"))
                .map(|a| a.addr)
                .collect();
            got.sort_unstable();
            assert_eq!(got, want, "ahead {ahead}, {}", p.label);
            passes += 1;
        }
        assert_eq!(passes, 4, "ahead {ahead}: four digit passes");
    }
}
