//! The lens on the odd-even rooms' kernels: every variant and kernel records; the register
//! kernel's loads and workgroup-memory layout against values derived by hand.

use super::*;

use stagewise::algo::oddeven::{self, TileKernel};

/// Odd-even options for the lens tests: small tiles keep lavapipe's compiles of the recording
/// builds short (a 4096-key tile with 16 keys per invocation takes minutes there).
fn oe_opts(kernel: TileKernel, tile: Option<usize>, keys: Option<usize>) -> oddeven::Options {
    oddeven::Options {
        kernel,
        tile,
        keys_per_invocation: keys,
        ..Default::default()
    }
}

/// Record `variant` on `n` random u32 keys (traced or not) at warp 32.
fn record_oe(o: &oddeven::Options, variant: &str, n: usize, trace: bool) -> LensReport {
    let a = AlgoOptions::Oddeven(o.clone());
    let algo = a.algo();
    let req = RunRequest {
        variant: algo.info().variant(Some(variant)).unwrap(),
        dtype: DType::U32,
        input: random_data(n, DType::U32, n as u64 + 7, false),
        trace,
    };
    let what = format!("{variant} n {n} trace {trace} {o:?}");
    let normal = algo::run(algo, gpu(), &req).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(normal.verified, "{what}");
    let rep =
        lens::record_run(algo, gpu(), &req, &normal, 32).unwrap_or_else(|e| panic!("{what}: {e}"));
    super::coverage::every_access_is_a_site(&rep);
    rep
}

/// Every pass recorded something; every global site's counts are consistent; tile passes
/// (`every_word_once`) write each of the n words exactly once and read each at least once.
fn check_oe(rep: &LensReport, n: usize, every_word_once: bool, what: &str) {
    assert!(!rep.passes.is_empty(), "{what}");
    assert_eq!(rep.passes.len(), rep.records.len(), "{what}");
    for (p, r) in rep.passes.iter().zip(&rep.records) {
        let at = format!("{what}: pass {} {}", p.pass, p.label);
        assert!(!r.accesses.is_empty(), "{at}: nothing recorded");
        assert!(!p.global.is_empty() && p.floor_bytes > 0, "{at}");
        counts_are_consistent(p, &at);
        if every_word_once {
            let (mut reads, mut writes) = (vec![0u32; n], vec![0u32; n]);
            for a in &r.accesses {
                let s = &r.kernel.sites[a.site as usize];
                if s.space == Space::Global && crate::is_data(&s.buffer) {
                    let c = if s.kind == Kind::Read {
                        &mut reads
                    } else {
                        &mut writes
                    };
                    c[a.addr as usize] += 1;
                }
            }
            assert!(
                writes.iter().all(|&w| w == 1),
                "{at}: a word not written once"
            );
            assert!(reads.iter().all(|&x| x >= 1), "{at}: a word never read");
        }
    }
}

/// Every odd-even variant, tile kernel and path records: whole arrays with heads and halo tails,
/// segments, merge-split, keys per invocation 8/16/32, tiles per workgroup, odd lengths, traced.
#[test]
fn every_oddeven_variant_and_kernel_records() {
    use TileKernel::{Auto, Generic, Registers};
    let regs = |label: &str| label.contains(", registers");
    let cases: Vec<(&str, oddeven::Options, usize, bool)> = vec![
        ("transposition", Default::default(), 37, false),
        ("transposition", Default::default(), 100, true),
        (
            "transposition",
            oddeven::Options {
                segment: Some(33),
                ..Default::default()
            },
            99,
            false,
        ),
        ("global", Default::default(), 37, false),
        ("global", Default::default(), 64, true),
        // Registers: a local sort, then per merge a head and a halo tail (n not a power of two).
        (
            "batcher",
            oe_opts(Registers, Some(256), Some(8)),
            1000,
            false,
        ),
        (
            "batcher",
            oe_opts(Registers, Some(256), Some(16)),
            777,
            false,
        ),
        (
            "batcher",
            oe_opts(Registers, Some(256), Some(32)),
            601,
            false,
        ),
        (
            "batcher",
            oddeven::Options {
                tiles_per_workgroup: Some(2),
                ..oe_opts(Registers, Some(256), Some(8))
            },
            1000,
            false,
        ),
        // Auto: registers where the tile fits (n = 300: one 512-key tile, 16 keys each).
        ("batcher", Default::default(), 300, false),
        ("batcher", oe_opts(Generic, Some(256), None), 777, false),
        ("batcher", oe_opts(Auto, Some(256), None), 300, true),
        (
            "batcher",
            oddeven::Options {
                segment: Some(100),
                ..oe_opts(Registers, Some(256), Some(8))
            },
            700,
            false,
        ),
        (
            "batcher",
            oddeven::Options {
                segment: Some(33),
                ..oe_opts(Auto, Some(256), None)
            },
            297,
            false,
        ),
        (
            "batcher",
            oddeven::Options {
                segment: Some(16),
                ..oe_opts(Generic, None, None)
            },
            592,
            false,
        ),
        // Registers need blocks of ≥ 256 (the block sort's tile; merge-split tiles are 2 blocks).
        (
            "merge-split",
            oddeven::Options {
                block: Some(256),
                ..oe_opts(Registers, Some(512), Some(8))
            },
            1000,
            false,
        ),
        // Auto, 128-key blocks: the block sort (128-key tiles) generic, the merge-splits registers.
        (
            "merge-split",
            oe_opts(Auto, Some(256), Some(16)),
            777,
            false,
        ),
        ("merge-split", oe_opts(Generic, Some(256), None), 777, false),
        ("merge-split", oe_opts(Auto, Some(256), None), 300, true),
    ];
    for (variant, o, n, trace) in cases {
        let what = format!("{variant} n {n} trace {trace} {:?}", o.kernel);
        let rep = record_oe(&o, variant, n, trace);
        let tiles = matches!(variant, "batcher" | "merge-split");
        check_oe(&rep, n, tiles || variant == "transposition", &what);
        if tiles {
            // The kernel asked for is the kernel recorded (auto untraced: registers wherever the
            // tile has ≥ 256 keys).
            for p in &rep.passes {
                let size: usize = p
                    .label
                    .rsplit("tiles of ")
                    .next()
                    .unwrap()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .unwrap();
                let want_regs = !trace && o.kernel != Generic && size >= 256;
                assert_eq!(regs(&p.label), want_regs, "{what}: {}", p.label);
            }
        }
    }
}

/// The register kernel's memory traffic, derived by hand: a 512-key tile sorted by T = 32
/// invocations with E = 16 keys each (one warp, one workgroup, n = 512: one pass, interior tile).
/// - Global: the first group's layout is c = 1 (< 8), so loads and stores use layout c = T:
///   lane t holds z = t + 32·i, and its i-th load/store is word t + 32·i. A warp request is 32
///   consecutive aligned words = 128 bytes: 4 sectors (the minimum), 1 segment; 16 load and 16
///   store sites, one request each.
/// - Workgroup memory, word z at p = z + ⌊z/16⌋, lane t's register j of layout c at
///   z = (t mod c) + c·(16·⌊t/c⌋ + j):
///   c = 1: p = 17t + j: bank ≡ 17t + j, 17 odd, so 32 lanes hit 32 banks (1 way);
///   c = 2, 4, 8: ⌊z/16⌋ = c·⌊t/c⌋ + ⌊c·j/16⌋, so p = (t mod c) + 17c·⌊t/c⌋ + g(j) with
///   g(j) = c·j + ⌊c·j/16⌋; 16c ≡ 0 (mod 32), so p ≡ (t mod c) + c·⌊t/c⌋ + g(j) = t + g(j): 1 way;
///   c = 16: p = (t mod 16) + 272·⌊t/16⌋ + 17j ≡ t + 17j: 1 way;
///   c = 32 (= T): p = t + ⌊t/16⌋ + 34j, banks 2j + {0..15} for lanes 0..15 and 2j + {17..32} for
///   lanes 16..31: lane 31 shares lane 0's bank, 2 ways (max and mean).
///   Neighbour exchanges need another thread of the class (c < T), so they run at c ≤ 16: their
///   writes are full layout accesses and their reads subsets of another thread set's, 1 way.
#[test]
fn register_kernel_loads_coalesce_and_padding_conflicts_only_at_c_32() {
    let o = oe_opts(TileKernel::Registers, Some(512), Some(16));
    let rep = record_oe(&o, "batcher", 512, false);
    assert_eq!(rep.passes.len(), 1);
    let (p, r) = (&rep.passes[0], &rep.records[0]);
    assert!(p.label.contains("registers"), "{}", p.label);
    for kind in [Kind::Read, Kind::Write] {
        let g: Vec<_> = p.global.iter().filter(|g| g.kind == kind).collect();
        assert_eq!(g.len(), 16, "{kind:?}: one site per register");
        for g in g {
            assert_eq!(
                (g.requests, g.sectors, g.min_sectors, g.segments),
                (1, 4, 4, 1),
                "{kind:?} line {}",
                g.line
            );
        }
    }
    // The layout of a workgroup-memory site: its base (pw, pr, pg or ps) comes from the nearest
    // `let zw = (t & C-1u) + …` above it.
    let lines: Vec<&str> = r.kernel.original.lines().collect();
    let layout = |site: u32| -> usize {
        let s = &r.kernel.sites[site as usize];
        // `buf[pw + …]`: the base's letter follows the bracket.
        let at = s.expr.split_once('[').map_or("", |x| x.1);
        let base = format!("let z{} = (t & ", &at[1..2]);
        let l = lines[..s.line as usize]
            .iter()
            .rev()
            .find_map(|l| l.split_once(&base))
            .unwrap_or_else(|| panic!("no base for {s:?}"))
            .1;
        l.split('u').next().unwrap().parse::<usize>().unwrap() + 1
    };
    let mut seen = [0usize; 2];
    for w in &p.shared {
        let c = layout(w.site);
        let want = if c >= 32 { 2 } else { 1 };
        assert_eq!(w.requests, 1, "line {}", w.line);
        assert_eq!(w.max_ways, want, "line {} c {c}", w.line);
        assert_eq!(w.mean_ways, want as f64, "line {} c {c}", w.line);
        seen[want as usize - 1] += 1;
    }
    // Both kinds occur: the hand-overs at c = 32 (after the loads, before the stores, the merge of
    // 2·256 keys) and every other layout.
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
}
