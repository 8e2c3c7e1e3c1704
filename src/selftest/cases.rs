//! The selftest's random cases: each one the argument list of a `stagewise run` command, so that
//! what runs is exactly what the CLI runs and the reproducing command is the case itself. Sizes
//! stay small enough that a case's CPU model runs in well under a second; odd sizes, sizes around
//! whole tiles and the look-back's forced-fallback modes (`--spin 0/1`, both tile orders) come up
//! often, since that is where such kernels break.

use crate::algo::{AlgoOptions, VariantInfo, bmmc, copy, oddeven, radix, scan};
use crate::data::DType;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::request::{CommandWords, RunSpec};
use rand::Rng;
use rand::rngs::StdRng;

/// One case: a `stagewise run` command's arguments (after `run`).
#[derive(Clone, Debug)]
pub struct Case {
    pub algorithm: &'static str,
    pub variant: &'static str,
    pub args: Vec<String>,
}

impl Case {
    /// The command that reproduces the case (shell-quoted where needed).
    pub fn command(&self, adapter: Option<&str>) -> String {
        let mut words = vec!["stagewise".to_string(), "run".to_string()];
        words.extend(self.args.iter().cloned());
        if let Some(a) = adapter {
            words.push("--adapter".into());
            words.push(a.into());
        }
        words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    }

    /// The case as the CLI's parser (`words`) reads it: the request it makes (the outer error:
    /// the parser's message; the inner: why it makes none).
    pub fn parse(&self, words: &dyn CommandWords) -> std::result::Result<Result<RunSpec>, String> {
        words.run(&self.args)
    }
}

fn quote(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,:/=+".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Every (algorithm, variant) pair, in `stagewise list` order.
pub fn pairs() -> Vec<(&'static str, &'static str)> {
    AlgoOptions::all_defaults()
        .iter()
        .flat_map(|a| {
            let info = a.algo().info();
            info.variants.iter().map(move |v| (info.name, v.name))
        })
        .collect()
}

fn pick<T: Copy>(rng: &mut StdRng, xs: &[T]) -> T {
    xs[rng.random_range(0..xs.len())]
}

fn chance(rng: &mut StdRng, p: f64) -> bool {
    rng.random_bool(p)
}

/// A size up to `max`: tiny, odd, a power of two or one off it.
fn size(rng: &mut StdRng, max: usize) -> usize {
    let max = max.max(1);
    let n = match rng.random_range(0..4) {
        0 => rng.random_range(1..=8),
        1 => rng.random_range(1..=max) | 1,
        _ => {
            let p = 1usize << rng.random_range(0..=max.ilog2());
            match rng.random_range(0..3) {
                0 => p - 1,
                1 => p,
                _ => p + 1,
            }
        }
    };
    n.clamp(1, max)
}

/// A size around whole tiles: `k` tiles and one more, one fewer, or an odd remainder.
fn tiled_size(rng: &mut StdRng, tile: usize, max_tiles: usize, max: usize) -> usize {
    let k = rng.random_range(0..=max_tiles.max(1));
    let n = match rng.random_range(0..5) {
        0 => k * tile + 1,
        1 => (k * tile).saturating_sub(1),
        2 => k * tile,
        _ => k * tile + (rng.random_range(0..tile.max(1)) | 1),
    };
    n.clamp(1, max.max(1))
}

fn opt(args: &mut Vec<String>, flag: &str, v: impl ToString) {
    args.push(flag.to_string());
    args.push(v.to_string());
}

/// Powers of two from `lo` up to `hi` (inclusive).
fn pow2s(lo: u32, hi: u32) -> Vec<u32> {
    (lo.ilog2()..=hi.max(lo).ilog2()).map(|k| 1 << k).collect()
}

/// A random case of `algorithm` / `variant` on this adapter. `big` lets the cheap models (copy,
/// bitrev, the scans) take a larger size.
pub fn generate(
    gpu: &Gpu,
    words: &dyn CommandWords,
    rng: &mut StdRng,
    algorithm: &'static str,
    variant: &'static str,
    big: bool,
) -> Case {
    let algo = AlgoOptions::by_name(algorithm).expect("a listed algorithm");
    let a = algo.algo();
    let v = a.info().variant(Some(variant)).expect("a listed variant");
    let mut args = vec![algorithm.to_string(), "--variant".into(), variant.into()];
    if a.fixed_dtype().is_none() {
        let dt: DType = pick(rng, a.info().dtypes);
        opt(&mut args, "--dtype", dt.name());
    }
    let fill = pick(rng, &["random", "random", "small", "reverse", "iota"]);
    let l = &gpu.limits;
    let max_wg = l
        .max_compute_invocations_per_workgroup
        .min(l.max_compute_workgroup_size_x);
    // The options first, then a size that may depend on the tile they give.
    let n = match algo {
        AlgoOptions::Copy(_) => {
            if copy::Variant::of(v) == copy::Variant::Vec4 && chance(rng, 0.5) {
                opt(&mut args, "--workgroup-size", pick(rng, &pow2s(32, max_wg)));
                opt(&mut args, "--per-thread", rng.random_range(1..=8));
            }
            size(rng, if big { 1 << 22 } else { 1 << 16 })
        }
        AlgoOptions::Bitrev(_) => 1 << rng.random_range(1..=if big { 20 } else { 14 }),
        AlgoOptions::Bmmc(_) => bmmc(rng, bmmc::Variant::of(v), &mut args),
        AlgoOptions::Oddeven(_) => oddeven(rng, oddeven::Variant::of(v), &mut args),
        AlgoOptions::Radix(_) => radix(gpu, words, rng, v, &mut args),
        AlgoOptions::Scan(_) => scan(gpu, words, rng, v, max_wg, big, &mut args),
        AlgoOptions::Fft(_) => fft(rng, &mut args),
        _ => size(rng, 1 << 12),
    };
    // Sizes the room refuses (powers of two only) move to the next power of two.
    let n = if a.check_len(n).is_err() && a.check_len(n.next_power_of_two()).is_ok() {
        n.next_power_of_two()
    } else {
        n
    };
    opt(&mut args, "--n", n);
    opt(&mut args, "--fill", fill);
    opt(&mut args, "--seed", rng.random_range(1..100_000u32));
    Case {
        algorithm,
        variant,
        args,
    }
}

fn bmmc(rng: &mut StdRng, variant: bmmc::Variant, args: &mut Vec<String>) -> usize {
    let bits = rng.random_range(1..=16u32);
    let seed = rng.random_range(1..1000u32);
    let preset = match rng.random_range(0..9) {
        0 => "identity".to_string(),
        1 => "bit-reverse".to_string(),
        2 => "transpose".to_string(),
        3 => "shuffle".to_string(),
        4 => "unshuffle".to_string(),
        5 => "gray".to_string(),
        6 => "gray-inverse".to_string(),
        7 => format!("random-bpc:{seed}"),
        _ => format!("random:{seed}"),
    };
    opt(args, "--preset", preset);
    if chance(rng, 0.3) {
        opt(args, "--complement", rng.random_range(0..1u64 << bits));
    }
    if matches!(variant, bmmc::Variant::Tiled | bmmc::Variant::Auto) {
        if chance(rng, 0.3) {
            opt(args, "--tile-bits", rng.random_range(5..=12));
        }
        if chance(rng, 0.3) {
            opt(args, "--group-order", pick(rng, &["input", "output"]));
        }
    }
    1 << bits
}

fn oddeven(rng: &mut StdRng, variant: oddeven::Variant, args: &mut Vec<String>) -> usize {
    if chance(rng, 0.4) {
        args.push("--descending".into());
    }
    let tiled = matches!(
        variant,
        oddeven::Variant::Batcher | oddeven::Variant::MergeSplit
    );
    if tiled {
        let kernel = pick(rng, &["auto", "auto", "generic", "registers"]);
        opt(args, "--kernel", kernel);
        if chance(rng, 0.3) {
            opt(args, "--tile", pick(rng, &[256, 512, 1024, 2048]));
        }
    }
    let max = match variant {
        oddeven::Variant::Transposition => 2048,
        oddeven::Variant::Global => 1024,
        _ => 1 << 16,
    };
    if matches!(
        variant,
        oddeven::Variant::Transposition | oddeven::Variant::Batcher
    ) && chance(rng, 0.3)
    {
        let seg = size(rng, 1024);
        opt(args, "--segment", seg);
        return seg * rng.random_range(1..=(max / seg).clamp(1, 16));
    }
    size(rng, max)
}

/// The tile a case's options give on this adapter (`None`: the options are refused).
fn tile_of(
    gpu: &Gpu,
    words: &dyn CommandWords,
    variant: &VariantInfo,
    args: &[String],
) -> Option<usize> {
    let spec = words.run(args).ok()?.ok()?;
    match spec.algo {
        AlgoOptions::Scan(o) => o
            // The sizes drawn around it stay below 2^21: the small-array shape.
            .tile_shape(gpu, scan::Variant::of(variant), 0)
            .ok()
            .map(|t| t.elements()),
        AlgoOptions::Radix(o) => o.shape(gpu).ok().map(|s| s.tile()),
        _ => None,
    }
}

/// `--spin` 0 (always fall back), 1 (fall back at once) or the default, and a tile order.
fn look_back(rng: &mut StdRng, args: &mut Vec<String>) -> bool {
    let spin = pick(rng, &[Some(0), Some(1), None, None]);
    if let Some(s) = spin {
        opt(args, "--spin", s);
    }
    let order = pick(rng, &["auto", "counter", "dispatch"]);
    if order != "auto" {
        opt(args, "--tile-order", order);
    }
    spin == Some(0)
}

fn radix(
    gpu: &Gpu,
    words: &dyn CommandWords,
    rng: &mut StdRng,
    variant: &VariantInfo,
    args: &mut Vec<String>,
) -> usize {
    opt(
        args,
        "--values",
        pick(rng, &["none", "none", "iota", "input"]),
    );
    if chance(rng, 0.3) {
        args.push("--descending".into());
    }
    if chance(rng, 0.3) {
        opt(args, "--digit-bits", rng.random_range(1..=8));
    }
    if chance(rng, 0.6) {
        opt(args, "--workgroup-size", pick(rng, &[32, 64, 96, 128, 256]));
        opt(args, "--keys-per-thread", rng.random_range(1..=8));
    }
    if chance(rng, 0.2) {
        args.push("--shared-rank".into());
    }
    let mut spin0 = false;
    if radix::Variant::of(variant) == radix::Variant::Onesweep {
        spin0 = look_back(rng, args);
        if chance(rng, 0.2) {
            opt(args, "--prefetch", pick(rng, &[0, 1, 2, 7]));
        }
        if chance(rng, 0.2) {
            opt(args, "--look-back-window", pick(rng, &[1, 3, 4, 16]));
        }
    }
    match tile_of(gpu, words, variant, args) {
        // spin 0 costs tiles² fallback work: a few dozen tiles.
        Some(t) => tiled_size(rng, t, if spin0 { 24 } else { 64 }, 1 << 18),
        None => size(rng, 1 << 16),
    }
}

fn scan(
    gpu: &Gpu,
    words: &dyn CommandWords,
    rng: &mut StdRng,
    info: &VariantInfo,
    max_wg: u32,
    big: bool,
    args: &mut Vec<String>,
) -> usize {
    if chance(rng, 0.3) {
        args.push("--exclusive".into());
    }
    let variant = scan::Variant::of(info);
    if variant == scan::Variant::Folded && chance(rng, 0.5) {
        args.push("--mirror".into());
    }
    let tiled = matches!(
        variant,
        scan::Variant::Decoupled | scan::Variant::ReduceThenScan
    );
    if tiled && chance(rng, 0.6) {
        opt(
            args,
            "--workgroup-size",
            pick(rng, &pow2s(4, max_wg.min(512))),
        );
        opt(args, "--per-thread", pick(rng, &[1, 2, 3, 4, 6, 8]));
    }
    let mut spin0 = false;
    if variant == scan::Variant::Decoupled {
        if chance(rng, 0.5) {
            args.push("--shared-scan".into());
        }
        spin0 = look_back(rng, args);
    }
    let max = match variant {
        scan::Variant::Sequential => 1 << 14,
        _ if big => 1 << 22,
        _ => 1 << 18,
    };
    match tiled.then(|| tile_of(gpu, words, info, args)).flatten() {
        // spin 0: tile k reduces its k predecessors itself; lavapipe ends long shader loops.
        Some(t) => tiled_size(rng, t, if spin0 { 40 } else { 64 }, max),
        None => size(rng, max),
    }
}

fn fft(rng: &mut StdRng, args: &mut Vec<String>) -> usize {
    let size = 1usize << rng.random_range(1..=12);
    let batch = pick(rng, &[1, 1, 2, 3, 4]);
    opt(args, "--size", size);
    if batch > 1 {
        opt(args, "--batch", batch);
    }
    opt(args, "--order", pick(rng, &["natural", "raw"]));
    if chance(rng, 0.3) {
        args.push("--inverse".into());
    }
    let real = chance(rng, 0.2);
    if real {
        args.push("--real".into());
    }
    let kernel = pick(rng, &["auto", "auto", "fast", "teaching", "radix", "large"]);
    opt(args, "--kernel", kernel);
    // The large plan's one-pass kernel and its knobs: exchange parts, FFTs in turn, and how the
    // exchange lays out workgroup memory (a swizzle needs 2048 points or more).
    if kernel == "large" {
        if chance(rng, 0.5) {
            opt(args, "--exchange-parts", pick(rng, &[1, 2, 4, 8]));
        }
        if chance(rng, 0.5) {
            opt(args, "--sequential-ffts", pick(rng, &[1, 2, 4]));
        }
        let layouts: &[&str] = if size >= 2048 {
            &["auto", "padded", "swizzled"]
        } else {
            &["auto", "padded"]
        };
        opt(args, "--exchange-layout", pick(rng, layouts));
    }
    // Interleaved (re, im) numbers of every signal; real input: one number a point.
    if real { size * batch } else { 2 * size * batch }
}
