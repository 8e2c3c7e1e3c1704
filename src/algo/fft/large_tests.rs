//! Unit tests of the large plan's choices (src/algo/fft/large.rs): the H100 defaults and the
//! exchange parts' bijections.

use super::*;

/// The H100's limits as wgpu reports them (48 KiB of workgroup memory, 1024 invocations).
fn h100() -> wgpu::Limits {
    wgpu::Limits {
        max_compute_workgroup_storage_size: 49152,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..Default::default()
    }
}

fn h100_config(n: usize) -> LargeConfig {
    let o = Options::default();
    configure(&o, n, (1 << 27) / n, true, false, None, &h100()).unwrap()
}

/// `reals` real values a FFT, 2^28 a run, natural order.
fn h100_real(reals: usize) -> LargeConfig {
    let o = Options::default();
    configure(
        &o,
        reals / 2,
        (1 << 28) / reals,
        true,
        false,
        Some(Mode::Real),
        &h100(),
    )
    .unwrap()
}

fn shape(n: usize) -> Vec<(usize, usize, usize, usize)> {
    let lc = h100_config(n);
    lc.passes.iter().map(|p| (p.m, p.c, p.parts, p.s)).collect()
}

/// The defaults the H100 sweeps chose (docs/perf/fft.md): one pass to 2^14 (S = 4 in two
/// parts, S = 1 in four: S > 1 spills there), then 16/8/4 lanes in at most two parts with S = 2,
/// and 4 lanes in four parts only for the 4096-point passes.
#[test]
fn h100_defaults() {
    assert_eq!(shape(8192), [(8192, 1, 4, 1)]);
    assert_eq!(shape(16384), [(16384, 1, 4, 1)]);
    assert_eq!(shape(1 << 20), [(1024, 8, 2, 2), (1024, 8, 2, 2)]);
    // 2^15 – 2^18: both phases chained in one dispatch, 16 lanes in phase 1, S = 4 in both,
    // phase 1 8 MiB of FFTs behind phase 0.
    for (n, lag) in [(1 << 15, 32), (1 << 16, 16), (1 << 17, 8), (1 << 18, 4)] {
        let lc = h100_config(n);
        assert_eq!(lc.chain.map(|c| c.lag), Some(lag), "{n}");
        assert_eq!(lc.dispatches(), 1, "{n}");
        assert!(lc.passes.iter().all(|p| p.s == 4), "{n}");
        assert_eq!(lc.passes[1].c, 16, "{n}");
        let wgsl = super::large_wgsl::shader(&lc.passes, None, "src", lc.chain);
        assert!(wgsl.contains("atomicAdd(&sync[0], 1u)"), "{n}");
    }
    assert!(h100_config(1 << 19).chain.is_none());
    assert!(h100_config(1 << 14).chain.is_none());
    assert_eq!(shape(1 << 22), [(2048, 4, 2, 2), (2048, 4, 2, 2)]);
    // 2^24: 16384 × 1024, the columns pass chained (units of 16 columns, each 16384-point
    // column as 128 × 128, 16 lanes in phase 1, 8 MiB of units apart), then the rows pass.
    assert_eq!(
        shape(1 << 24),
        [(128, 16, 1, 4), (128, 16, 1, 4), (1024, 8, 2, 2)]
    );
    let lc = h100_config(1 << 24);
    assert_eq!((lc.dispatches(), lc.split), (2, (16384, 1024)));
    let ch = lc.chain.unwrap();
    assert_eq!((ch.unit, ch.lag, ch.whole(1 << 24)), (16 * 16384, 4, false));
    assert!(h100_config(1 << 23).chain.is_none());
    // Columns above 8192 points only chained (two phases of at most 8192); --chain 0 at 2^24
    // is the plain 4096 × 4096.
    let with = |split, chain| Options {
        split,
        chain,
        ..Options::default()
    };
    let cfg = |o: &Options| configure(o, 1 << 24, 8, true, false, None, &h100());
    assert!(cfg(&with(Some(16384), Some(0))).is_err());
    assert!(cfg(&with(Some(16384), Some(2))).is_ok_and(|lc| lc.chain.is_some()));
    let plain = cfg(&with(None, Some(0))).unwrap();
    assert_eq!((plain.split, plain.chain), ((4096, 4096), None));
    // With the columns chained, --ffts-per-workgroup is the unit's columns; the rows keep 8.
    let lc = cfg(&Options {
        ffts_per_workgroup: Some(32),
        ..Options::default()
    })
    .unwrap();
    assert_eq!(lc.chain.map(|c| (c.unit, c.lag)), Some((32 * 16384, 2)));
    assert_eq!(lc.passes[2].c, 8);
    let e = |n: usize| {
        h100_config(n)
            .passes
            .iter()
            .map(|p| p.e)
            .collect::<Vec<_>>()
    };
    assert_eq!(e(1 << 24), [16, 16, 16]);
    assert_eq!(e(1 << 23), [64, 16]);
    assert_eq!(e(1 << 22), [16, 16]);
    // Real input (2^28 reals a run), the unpacking in the store: 4096 reals in two parts at
    // S = 4, 8192 reals likewise, 16384 and 32768 reals in four parts at S = 1.
    let real = |reals: usize| {
        let lc = h100_real(reals);
        assert!(lc.unpack_fused, "{reals} reals");
        // In the store, not a phase through L2 after a storage barrier.
        let wgsl = super::large_wgsl::shader(&lc.passes, lc.unpack_phase(), "src", lc.chain);
        assert!(!wgsl.contains("storageBarrier"), "{reals} reals");
        lc.passes
            .iter()
            .map(|p| (p.m, p.c, p.parts, p.s))
            .collect::<Vec<_>>()
    };
    // Complex 1024 – 4096 points on the large plan (`--kernel large`): in halves, S = 4 from
    // 2048.
    assert_eq!(shape(1024), [(1024, 1, 2, 1)]);
    assert_eq!(shape(2048), [(2048, 1, 2, 4)]);
    assert_eq!(shape(4096), [(4096, 1, 2, 4)]);
    assert_eq!(real(4096), [(2048, 1, 2, 4)]);
    assert_eq!(real(8192), [(4096, 1, 2, 4)]);
    assert_eq!(real(16384), [(8192, 1, 4, 1)]);
    assert_eq!(real(32768), [(16384, 1, 4, 1)]);
    // Past one pass: 256-point rows with the unpacking in their store, up to 4096-point columns;
    // past that the even split, the unpacking fused while the rows pass has 8 lanes or more.
    let splits = [
        (1usize << 16, (128, 256), true),
        (1 << 20, (2048, 256), true),
        (1 << 21, (4096, 256), true),
        (1 << 22, (1024, 2048), false),
    ];
    for (reals, split, fused) in splits {
        let lc = h100_real(reals);
        // Chained (the unpacking in phase 1's store) to 2^17 reals, 6 MiB of FFTs apart.
        assert_eq!(lc.chain.is_some(), reals <= 1 << 17, "{reals} reals");
        if let Some(c) = lc.chain {
            assert_eq!(c.lag * reals * 4, 6 << 20, "{reals} reals");
        }
        assert_eq!(lc.split, split, "{reals} reals");
        assert_eq!(lc.unpack_fused, fused, "{reals} reals");
        assert_eq!(lc.unpack_phase().and_then(|u| u.rows).is_some(), fused);
    }
    for p in configure(
        &Options::default(),
        1 << 20,
        128,
        true,
        false,
        None,
        &h100(),
    )
    .unwrap()
    .passes
    {
        assert!(p.c * 8 >= 64 && p.parts <= 2, "{p:?}");
    }
}

/// Every round trip's exchange parts: each (part, place) holds exactly one position on both
/// sides; every thread has E / parts of its slots in each part; on the H100 configurations
/// the part of a slot is the same for all 32 lanes of a warp, and where the plan says so,
/// the same on both sides of the trip.
#[test]
fn exchange_parts_are_bijective_and_warp_uniform() {
    use super::super::codegen::{place, round_los};
    let mut configs: Vec<PassConfig> = [1 << 14, 1 << 23, 1 << 24]
        .into_iter()
        .flat_map(|n| h100_config(n).passes)
        .collect();
    for parts in [4, 8] {
        let o = Options {
            exchange_parts: Some(parts),
            ..Options::default()
        };
        for (n, split) in [(4096, Some(64)), (16384, None), (1 << 20, None)] {
            let o = Options { split, ..o.clone() };
            configs.extend(
                configure(&o, n, 4, true, false, None, &h100())
                    .unwrap()
                    .passes,
            );
        }
    }
    let mut uniform = 0;
    for c in configs.iter().filter(|c| c.position_parts() > 1) {
        let r = c.radix();
        let los = round_los(&r);
        let lc = c.c.trailing_zeros();
        for ri in 1..los.len() {
            let f = c.part_fn(ri);
            let pp = c.position_parts();
            assert_eq!(1 << f.bits, pp, "{c:?}");
            let side = |rr: usize| {
                let last = rr + 1 == los.len();
                let mut seen = std::collections::HashMap::new();
                let mut parts = vec![vec![0usize; pp]; c.threads()];
                for (l, counts) in parts.iter_mut().enumerate() {
                    let (t, g) = c.role(l, rr == 0);
                    for j in 0..c.e {
                        let p = place(&r, los[rr], last, t, j);
                        let key = (f.part(p), (f.compress(p) << lc) | g);
                        assert!(key.1 < c.c * c.m / pp, "{c:?}");
                        assert!(seen.insert(key, (p, g)).is_none(), "{c:?} trip {ri}");
                        counts[key.0] += 1;
                        if f.uniform && l % 32 != 0 {
                            let (t0, _) = c.role(l - l % 32, rr == 0);
                            let p0 = place(&r, los[rr], last, t0, j);
                            assert_eq!(f.part(p0), key.0, "{c:?} lanes of a warp");
                        }
                    }
                }
                assert_eq!(seen.len(), c.c * c.m, "{c:?}");
                if f.uniform {
                    assert!(parts.iter().flatten().all(|&k| k == c.e / pp), "{c:?}");
                }
                seen
            };
            let (w, rd) = (side(ri - 1), side(ri));
            // The same value lands where it is read from.
            for (key, v) in &w {
                assert_eq!(rd.get(key), Some(v), "{c:?} trip {ri}");
            }
            uniform += usize::from(f.uniform);
        }
    }
    assert!(uniform >= 4, "{uniform}");
    // 2^14 in one pass: the first trip keeps every slot's part (no second set of registers),
    // the second splits by a slot bit alone.
    let p = h100_config(1 << 14).passes[0];
    assert!(p.part_fn(1).same_slot);
    assert_eq!(p.part_fn(2).masks[0].count_ones(), 1);
}

/// A chained columns pass stores units of C columns (Layout::units): every cell once, where the
/// rows pass reads it, phase 0 where phase 1 reads, and the plan names the permutation; the
/// trace's grid order undoes it.
#[test]
fn chained_columns_store_units_the_rows_pass_reads() {
    for (n, split, c) in [
        (1usize << 24, 16384, 16),
        (1 << 20, 1024, 32),
        (1 << 16, 256, 4),
    ] {
        let o = Options {
            split: Some(split),
            chain: Some(2),
            ffts_per_workgroup: Some(c),
            ..Options::default()
        };
        let lc = configure(&o, n, 2, true, false, None, &h100()).unwrap();
        assert_eq!(lc.column_unit(), Some(c));
        let (n1, n2) = lc.split;
        let ln = n.trailing_zeros();
        let (p0, p1, rows) = (lc.passes[0], lc.passes[1], lc.passes[2]);
        assert_eq!((p1.input, p1.output), (p1.output, p1.output));
        let mut seen = vec![false; 2 * n];
        for col in 0..2 * n2 {
            for k1 in 0..n1 {
                // Phase 1's sub-FFT (col, inner row ka) holds k1 = ka + Ma·kb at position kb.
                let ma = p0.m;
                let s1 = (col % c) + (k1 % ma) * c + (col / c) * c * ma;
                let a = p1.output.addr(ln, s1, k1 / ma);
                assert!(!seen[a], "cell stored twice");
                seen[a] = true;
                // The rows pass's sub-FFT k1 reads position col there.
                let s = (col / n2) * n1 + k1;
                assert_eq!(rows.input.addr(ln, s, col % n2), a, "{n} {k1} {col}");
                // Phase 0 stored it there too: its sub-FFT (col, inner column kb) position ka.
                let lanes_first = (col % c) + (k1 / ma) * c + (col / c) * c * (n1 / ma);
                let nb_first = (k1 / ma) + (col % c) * (n1 / ma) + (col / c) * c * (n1 / ma);
                let s0 = if p0.input.runs[0].1 != 0 {
                    nb_first
                } else {
                    lanes_first
                };
                assert_eq!(p0.output.addr(ln, s0, k1 % ma), a);
            }
        }
        let words: Vec<u32> = (0..4 * n as u32).collect();
        let grid = lc.columns_in_grid_order(words);
        for (col, k1) in [(0, 0), (n2 - 1, 1), (3 % n2, n1 - 1)] {
            let a = p1.output.addr(
                ln,
                (col % c) + (k1 % p0.m) * c + (col / c) * c * p0.m,
                k1 / p0.m,
            );
            assert_eq!(grid[2 * (col + n2 * k1)], 2 * a as u32);
        }
        let plan = serde_json::to_value(lc.plan_entries(true)).unwrap();
        assert!(plan.as_array().unwrap().iter().any(|e| {
            e["kind"] == "permute"
                && e["pass"] == 0
                && e["units"] == c
                && e["rule"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("units of {c} columns"))
        }));
        // Its matrix: column bits below log2 C stay, the column's unit moves above the rows,
        // the rows' bits move down to log2 C.
        let (l1, l2, lc) = (
            n1.trailing_zeros() as usize,
            n2.trailing_zeros() as usize,
            c.trailing_zeros() as usize,
        );
        let perm: Vec<usize> = (0..ln as usize)
            .map(|b| match b {
                _ if b < lc => b,
                _ if b < l2 => b + l1,
                _ => b - l2 + lc,
            })
            .collect();
        let want = crate::algo::bmmc::matrix::BitMatrix::from_bit_perm(&perm).row_strings();
        let entry = plan
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["units"] == c)
            .unwrap();
        assert_eq!(entry["matrix"], serde_json::json!(want));
        let rows_json = serde_json::to_value(rows.input).unwrap();
        assert_eq!(
            rows_json["m_split"],
            serde_json::json!([c.trailing_zeros(), (n1 * c).trailing_zeros()])
        );
    }
}

/// Two plain passes store the columns in units of 16 too (real input, whose two passes did not
/// move, keeps the columns in place): every cell where the rows pass reads it.
#[test]
fn plain_passes_store_units_of_16_columns() {
    let lc = h100_config(1 << 22);
    assert_eq!((lc.chain, lc.column_unit()), (None, Some(16)));
    let (n1, n2) = lc.split;
    let ln = 22;
    let (cols, rows) = (lc.passes[0], lc.passes[1]);
    let mut seen = vec![false; 1 << ln];
    for col in 0..n2 {
        for k1 in 0..n1 {
            let a = cols.output.addr(ln, col, k1);
            assert!(!seen[a]);
            seen[a] = true;
            assert_eq!(rows.input.addr(ln, k1, col), a);
        }
    }
    assert_eq!(h100_real(1 << 20).column_unit(), None);
    let with_l2 = configure(
        &Options {
            split: Some(1024),
            phase_split: Some(32),
            ..Options::default()
        },
        1 << 20,
        2,
        true,
        false,
        None,
        &h100(),
    )
    .unwrap();
    assert_eq!(with_l2.column_unit(), None);
}

/// The rows pass of 2^21 – 2^23 (2048 points, 4 lanes, real and imaginary parts) swizzles its
/// workgroup indices instead of padding them: fewer bank conflicts in the model, a bijection of
/// the array; every other H100 plan keeps its padding (what the H100 timed, large_layout.rs).
#[test]
fn the_rows_pass_of_2_21_to_2_23_swizzles_its_exchanges() {
    for ln in 8..=24u32 {
        let lc = h100_config(1 << ln);
        let last = lc.passes.len() - 1;
        for (i, p) in lc.passes.iter().enumerate() {
            let want = (21..=23).contains(&ln) && i == last;
            assert_eq!(p.swizzle.is_some(), want, "2^{ln} pass {i}: {p:?}");
            if p.swizzle.is_none() {
                continue;
            }
            assert_eq!((p.m, p.c, p.parts, p.pad_shift), (2048, 4, 2, None));
            let padded = (3..11)
                .map(|s| {
                    PassConfig {
                        swizzle: None,
                        pad_shift: Some(s),
                        ..*p
                    }
                    .exchange_cost()
                })
                .min()
                .unwrap();
            assert!(
                p.exchange_cost() < padded,
                "{} vs {padded}",
                p.exchange_cost()
            );
            let len = p.shared_len();
            assert_eq!(len, p.c * p.m / p.position_parts());
            let mut seen = vec![false; len];
            for a in 0..len {
                let x = p.trip_index(0, a);
                assert!(x < len && !seen[x], "index {a} -> {x}");
                seen[x] = true;
            }
        }
    }
    for reals in [1 << 14, 1 << 18, 1 << 21] {
        assert!(h100_real(reals).passes.iter().all(|p| p.swizzle.is_none()));
    }
}

/// In 4 exchange parts (a barrier between trips anyway) each round trip takes its own padding
/// where that conflicts strictly less: 2^14's first trip, 8192 points' second (2^13 and 16384
/// reals); 2-part passes keep one shift (their trips share places without a barrier).
#[test]
fn four_part_passes_pad_each_trip_on_its_own() {
    let trips = |p: &PassConfig| p.trip_pad[..p.rounds() - 1].to_vec();
    let one = |p: &PassConfig| {
        PassConfig {
            trip_pad: [None; 8],
            ..*p
        }
        .exchange_cost()
    };
    let p = h100_config(1 << 14).passes[0];
    assert_eq!((p.pad_shift, trips(&p)), (Some(8), vec![Some(5), None]));
    assert_eq!((p.exchange_cost(), one(&p)), (10240, 12288));
    for p in [h100_config(1 << 13).passes[0], h100_real(1 << 14).passes[0]] {
        assert_eq!((p.pad_shift, trips(&p)), (Some(5), vec![None, Some(7)]));
        assert_eq!((p.exchange_cost(), one(&p)), (7168, 8192));
        // The array holds the larger of the two paddings.
        assert_eq!(p.shared_len(), {
            let top = p.c * p.m / p.position_parts() - 1;
            top + (top >> 5) + 1
        });
    }
    for ln in 15..=24u32 {
        for p in h100_config(1 << ln).passes {
            if p.position_parts() == 1 {
                assert!(p.trip_pad.iter().all(Option::is_none), "2^{ln}: {p:?}");
            }
        }
    }
}

/// The unpacking reads its twiddle w^t before the partners' trips (a read per value after their
/// barriers waited on L1/L2 there: docs/perf/fft.md), except in four parts below M = 8192.
#[test]
fn the_unpacking_reads_its_twiddle_before_its_trips() {
    let mut seen = (0, 0);
    for reals in [256usize, 1024, 4096, 8192, 16384, 32768] {
        for parts in [None, Some(1), Some(2), Some(4)] {
            let o = Options {
                exchange_parts: parts,
                ..Options::default()
            };
            let Ok(lc) = configure(&o, reals / 2, 4096, true, false, Some(Mode::Real), &h100())
            else {
                continue; // more parts than the pass has, or a whole FFT past the memory
            };
            let [p] = lc.passes[..] else {
                continue; // two passes: the unpacking goes with the rows pass
            };
            let wgsl = super::large_wgsl::shader(&lc.passes, lc.unpack_phase(), "src", lc.chain);
            let Some(at) = wgsl.find("let uk0 = ") else {
                // Unpacked in a phase of its own, through L2.
                assert!(wgsl.contains("storageBarrier();"), "{reals} reals, {p:?}");
                continue;
            };
            let unpack = &wgsl[at..];
            let first_trip = unpack.find("workgroupBarrier();").expect("a trip");
            let (before, after) = unpack.split_at(first_trip);
            if p.parts < 4 || p.m >= 8192 {
                assert!(before.contains("let w1 = tw[t1];"), "{reals} reals, {p:?}");
                assert!(!unpack.contains("tw[uk"), "{reals} reals, {p:?}");
                seen.0 += 1;
            } else {
                assert!(!unpack.contains("w1"), "{reals} reals, {p:?}");
                assert!(after.contains("let wk = tw[uk"), "{reals} reals, {p:?}");
                seen.1 += 1;
            }
        }
    }
    assert!(seen.0 >= 10 && seen.1 >= 1, "{seen:?}");
}

/// `--exchange-layout`: `swizzled` keeps 4096 points in halves in exactly their 16 KiB (padded:
/// 16508 bytes), as free of bank conflicts as the padding; `padded` keeps 2^21's rows pass padded
/// where `auto` swizzles it; `swizzled` is refused where no pass can take a swizzle.
#[test]
fn exchange_layout_option() {
    let one = |n: usize, layout: ExchangeLayout| {
        let o = Options {
            exchange_parts: Some(2),
            sequential_ffts: Some(1),
            exchange_layout: layout,
            ..Options::default()
        };
        configure(&o, n, (1 << 27) / n, true, false, None, &h100())
    };
    let auto = one(4096, ExchangeLayout::Auto).unwrap().passes[0];
    let sw = one(4096, ExchangeLayout::Swizzled).unwrap().passes[0];
    assert_eq!((auto.layout_name(), auto.shared_bytes()), ("padded", 16508));
    assert_eq!((sw.layout_name(), sw.shared_bytes()), ("swizzled", 16384));
    assert!(sw.exchange_cost() <= auto.exchange_cost());
    let mut seen = vec![false; sw.shared_len()];
    for i in 0..sw.rounds() - 1 {
        seen.fill(false);
        for a in 0..sw.shared_len() {
            let x = sw.trip_index(i, a);
            assert!(x < seen.len() && !seen[x], "trip {i}: {a} -> {x}");
            seen[x] = true;
        }
    }
    let e = one(1024, ExchangeLayout::Swizzled).unwrap_err().to_string();
    assert!(e.contains("--exchange-layout swizzled"), "{e}");
    let padded = Options {
        exchange_layout: ExchangeLayout::Padded,
        ..Options::default()
    };
    let lc = configure(&padded, 1 << 21, 64, true, false, None, &h100()).unwrap();
    assert!(lc.passes.iter().all(|p| p.swizzle.is_none()));
    assert!(
        h100_config(1 << 21)
            .passes
            .iter()
            .any(|p| p.swizzle.is_some())
    );
}
