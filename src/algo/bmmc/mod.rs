//! BMMC / BPC permutations (seed 001): the element at index x moves to y = A·x ⊕ c, A an
//! invertible n×n bit matrix over GF(2), c a complement; N = 2^n. Variants are pass plans:
//! `naive` (one scattered pass), `seed-plu` / `seed-ulp` (the seed's factorisations, Cormen's
//! alternation for the BPC part), `tiled` (≤ 2 coalesced tiled passes, 1 for any BPC) and `auto`.

pub mod facts;
pub mod kernels;
pub mod matrix;
pub mod plan;
pub mod stats;
pub mod trace;
mod tune;

use super::prelude::*;
use matrix::{Affine, BitMatrix};
use plan::{Params, PlanSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

variants! {
    room "bmmc" (seed "001"): "BMMC / BPC permutation",
        "Element x moves to y = A·x XOR c (A an invertible bit matrix over GF(2), c a complement); \
         N = 2^n.";
    Auto = "auto": "the cheapest plan that applies (fewest coalesced passes: tiled unless a seed \
        plan is shorter)",
    Naive = "naive": "one thread per element computes y = A·x XOR c and writes there (scattered \
        writes)",
    SeedPlu = "seed-plu": "the seed's A = P·L·U plan: U (kernel 1), L (one tiled pass), P by \
        Cormen's alternation (<= 7 passes)",
    SeedUlp = "seed-ulp": "the seed's A = U·L·P plan: P by Cormen's alternation with L fused in, U \
        in one tiled pass (<= 6 passes)",
    Tiled = "tiled": "coalesced tiled passes through workgroup memory: 1 for any BPC, at most 2 \
        for any BMMC",
}

const POISON: u32 = 0xDEAD_BEEF;

/// The presets, as `--preset` takes them.
pub const PRESETS: &[&str] = &[
    "identity",
    "bit-reverse",
    "transpose:R,C",
    "shuffle",
    "unshuffle",
    "gray",
    "gray-inverse",
    "random-bpc:SEED",
    "random:SEED",
];

/// The options' help, as the CLI's flags and the app's tooltips show it.
pub mod help {
    pub const MATRIX: &str = "The bit matrix: n rows separated by ';' (row i = output bit i, its j-th character from the left = input bit j), or a file with one row per line";
    pub const PRESET: &str = "A preset matrix: identity, bit-reverse, transpose:R,C (2^R×2^C row-major → its transpose; bare `transpose`: R = n/2), shuffle, unshuffle, gray, gray-inverse, random-bpc:SEED, random:SEED. Default (no --matrix): bit-reverse";
    pub const COMPLEMENT: &str = "The complement c, an integer below N: y = A·x ⊕ c";
    pub const TILE_BITS: &str = "Largest tile of the tiled kernel, as log2(words per workgroup), 5..=13 (default 12, capped by the adapter's workgroup memory)";
    pub const TILE_THREADS: &str = "Threads of the tiled kernel's workgroup, a power of two in 32..=1024 (default 256, capped by the adapter and the tile)";
    pub const TILES_PER_WORKGROUP: &str = "Consecutive tiles one workgroup of the tiled kernel walks, a power of two in 1..=16 (default 2, or 4 with --tile-vector 1, while 2^13 workgroups remain, else 1): the next tile's loads are issued before this tile's stores";
    pub const TILE_VECTOR: &str = "Words each invocation of the tiled kernel moves with one load or store: 4 (16-byte accesses, the default; a tile of fewer than 2^7 words moves words) or 1";
    pub const GROUP_ORDER: &str = "How a bit permutation's tiles are numbered, i.e. which tiles run side by side: by their input bits (neighbouring workgroups read neighbouring runs), by their output bits (they write neighbouring runs), or auto (output, but input for the bit reversal). Other maps always number by input";

    /// The values of each closed-set option.
    pub const VALUE_SETS: crate::algo::OptionValues = &[(
        "group_order",
        <super::GroupOrder as crate::algo::Choice>::CHOICES,
    )];

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("matrix", MATRIX),
        ("preset", PRESET),
        ("complement", COMPLEMENT),
        ("tile_bits", TILE_BITS),
        ("tile_threads", TILE_THREADS),
        ("tiles_per_workgroup", TILES_PER_WORKGROUP),
        ("tile_vector", TILE_VECTOR),
        ("group_order", GROUP_ORDER),
    ];
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub matrix: Option<String>,
    pub preset: Option<String>,
    pub complement: u64,
    pub tile_bits: Option<u32>,
    pub tile_threads: Option<u32>,
    pub tiles_per_workgroup: Option<u32>,
    pub tile_vector: Option<u32>,
    pub group_order: GroupOrder,
}

/// Which tiles the tiled kernel's neighbouring workgroups take (see [`help::GROUP_ORDER`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupOrder {
    #[default]
    Auto,
    Input,
    Output,
}

impl crate::algo::Choice for GroupOrder {
    const ALL: &'static [GroupOrder] = &[GroupOrder::Auto, GroupOrder::Input, GroupOrder::Output];
    const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "auto",
            "output, but input for the bit reversal (the H200's best on both)",
        ),
        ("input", "neighbouring workgroups read neighbouring runs"),
        ("output", "neighbouring workgroups write neighbouring runs"),
    ];
}

fn seed_of(name: &str, arg: Option<&str>) -> Result<u64> {
    let a = arg.ok_or_else(|| Error::Input(format!("preset {name} needs a seed: {name}:SEED")))?;
    a.trim()
        .parse()
        .map_err(|_| Error::Input(format!("preset {name}: '{a}' is not a seed (an integer)")))
}

/// A preset matrix for n index bits.
pub fn preset(spec: &str, n: usize) -> Result<BitMatrix> {
    let (name, arg) = match spec.split_once(':') {
        Some((a, b)) => (a.trim(), Some(b)),
        None => (spec.trim(), None),
    };
    let perm =
        |f: &dyn Fn(usize) -> usize| BitMatrix::from_bit_perm(&(0..n).map(f).collect::<Vec<_>>());
    Ok(match name {
        "identity" => BitMatrix::identity(n),
        "bit-reverse" | "bitrev" => perm(&|j| n - 1 - j),
        "transpose" => {
            let (r, c) = match arg {
                None => (n / 2, n - n / 2),
                Some(a) => {
                    let parts: Vec<&str> = a.split(',').collect();
                    let p = |s: &str| {
                        s.trim().parse::<usize>().map_err(|_| {
                            Error::Input(format!("preset transpose:R,C: '{s}' is not a bit count"))
                        })
                    };
                    if parts.len() != 2 {
                        return Err(Error::Input(format!(
                            "preset transpose takes R,C (a 2^R × 2^C matrix), got '{a}'"
                        )));
                    }
                    (p(parts[0])?, p(parts[1])?)
                }
            };
            if r + c != n {
                return Err(Error::Input(format!(
                    "preset transpose:{r},{c} is a 2^{r} × 2^{c} matrix = 2^{} elements, but N = 2^{n}",
                    r + c
                )));
            }
            // x = row·2^C + col → y = col·2^R + row: input bit j < C → output bit R + j;
            // input bit C + i → output bit i.
            perm(&|j| if j < c { r + j } else { j - c })
        }
        "shuffle" => perm(&|j| (j + 1) % n),
        "unshuffle" => perm(&|j| (j + n - 1) % n),
        "gray" => BitMatrix {
            n,
            rows: (0..n)
                .map(|i| (1u32 << i) | if i + 1 < n { 1 << (i + 1) } else { 0 })
                .collect(),
        },
        "gray-inverse" => BitMatrix {
            n,
            rows: (0..n)
                .map(|i| (((1u64 << n) - 1) as u32) & !((1u32 << i) - 1))
                .collect(),
        },
        "random-bpc" => BitMatrix::random_bpc(n, seed_of(name, arg)?),
        "random" => BitMatrix::random_invertible(n, seed_of(name, arg)?),
        _ => {
            return Err(Error::Input(format!(
                "unknown preset '{spec}'; presets: {}",
                PRESETS.join(", ")
            )));
        }
    })
}

impl Options {
    /// The matrix for n index bits (errors: malformed, wrong size, singular).
    pub fn matrix_for(&self, n: usize) -> Result<BitMatrix> {
        let m = match (&self.matrix, &self.preset) {
            (Some(_), Some(_)) => return Err(Error::input("give --matrix or --preset, not both")),
            (Some(m), None) => BitMatrix::parse_arg(m)?,
            (None, p) => preset(p.as_deref().unwrap_or("bit-reverse"), n)?,
        };
        if m.n != n {
            return Err(Error::Input(format!(
                "the matrix has {} rows, so it permutes 2^{} = {} elements, but N = {} (log2 N = {n}): \
                 give an input of 2^{} elements or --n {}",
                m.n,
                m.n,
                1u64 << m.n,
                1u64 << n,
                m.n,
                1u64 << m.n
            )));
        }
        if let Some(why) = m.singular_reason() {
            return Err(Error::Input(why));
        }
        Ok(m)
    }

    /// The affine map y = A·x ⊕ c for N = 2^n.
    pub fn target(&self, n: usize) -> Result<Affine> {
        let a = self.matrix_for(n)?;
        if n < 64 && self.complement >= 1u64 << n {
            return Err(Error::Input(format!(
                "--complement {} is not below N = {}",
                self.complement,
                1u64 << n
            )));
        }
        Ok(Affine {
            a,
            c: self.complement as u32,
        })
    }

    /// The number of index bits the options themselves fix (a matrix's rows, transpose:R,C).
    pub fn natural_bits(&self) -> Option<usize> {
        if let Some(m) = &self.matrix {
            return BitMatrix::parse_arg(m).ok().map(|m| m.n);
        }
        let p = self.preset.as_deref()?;
        let (name, arg) = p.split_once(':')?;
        if name.trim() != "transpose" {
            return None;
        }
        let v: Vec<usize> = arg
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        (v.len() == 2).then(|| v[0] + v[1])
    }

    /// `--tile-bits` must be in 5..=13 (a tile of 2^5 to 2^13 words).
    pub fn check_tile_bits(&self) -> Result<()> {
        match self.tile_bits {
            Some(t) if !(5..=13).contains(&t) => Err(Error::Input(format!(
                "--tile-bits must be in 5..=13 (log2 of the words in one workgroup's tile); got {t}"
            ))),
            _ => Ok(()),
        }
    }

    /// `--tile-threads` a power of two in 32..=1024, `--tiles-per-workgroup` one in 1..=16.
    pub fn check_tile_shape(&self) -> Result<()> {
        if let Some(t) = self.tile_threads
            && !(t.is_power_of_two() && (32..=1024).contains(&t))
        {
            return Err(Error::Input(format!(
                "--tile-threads must be a power of two in 32..=1024; got {t}"
            )));
        }
        if let Some(t) = self.tiles_per_workgroup
            && !(t.is_power_of_two() && (1..=16).contains(&t))
        {
            return Err(Error::Input(format!(
                "--tiles-per-workgroup must be a power of two in 1..=16; got {t}"
            )));
        }
        if let Some(v) = self.tile_vector
            && v != 1
            && v != kernels::VECTOR
        {
            return Err(Error::Input(format!(
                "--tile-vector must be 1 or {}; got {v}",
                kernels::VECTOR
            )));
        }
        Ok(())
    }

    pub fn params(&self, gpu: &Gpu) -> Params {
        let d = Params::default();
        let cap = self.tile_bits.unwrap_or(d.tile_bits as u32).clamp(5, 13) as usize;
        Params {
            tile_bits: kernels::max_tile_bits(&gpu.limits, cap),
            threads_log: self
                .tile_threads
                .map_or(d.threads_log, |t| t.max(1).ilog2() as usize),
            tiles_log: self.tiles_per_workgroup.map(|t| t.max(1).ilog2() as usize),
            group_order: self.group_order,
            vector: self.tile_vector,
            ..d
        }
    }
}

/// Build the GPU plan of `spec` on buffers: pass i reads `bufs[i]`-chain (first `input`), writes
/// alternately into `ping`/`pong`. Returns the plan and the region holding the result.
#[allow(clippy::too_many_arguments)]
fn gpu_plan(
    gpu: &Gpu,
    spec: &PlanSpec,
    params: &Params,
    n: usize,
    input: &wgpu::Buffer,
    ping: &wgpu::Buffer,
    pong: &wgpu::Buffer,
    capture: bool,
) -> Result<(Plan, Region)> {
    let mut plan = Plan::default();
    let words = 1usize << n;
    let mut src = input;
    let mut out = Region::words(input, words);
    for (i, p) in spec.passes.iter().enumerate() {
        let dst = if i % 2 == 0 { ping } else { pong };
        let gp = kernels::gpu_pass(p, n, &gpu.limits, params)?;
        kernels::push(
            gpu,
            &mut plan,
            &format!("pass {}: {}", i + 1, p.label),
            &gp,
            src,
            dst,
        )?;
        if capture {
            plan.passes.last_mut().expect("pushed").capture = vec![Region::words(dst, words)];
        }
        src = dst;
        out = Region::words(dst, words);
    }
    Ok((plan, out))
}

impl Algorithm for Options {
    fn info(&self) -> &'static AlgoInfo {
        &INFO
    }

    /// 0, 1, 2, … over the matrix's 2^n elements (16 for presets that fit any n).
    fn example(&self, dtype: DType) -> Option<Data> {
        let n = self.natural_bits().unwrap_or(4);
        if n > 24 {
            return None;
        }
        Some(crate::data::generate(
            crate::data::Fill::Iota,
            1 << n,
            dtype,
            0,
        ))
    }

    fn check_len(&self, n: usize) -> Result<()> {
        let bits = require_pow2("bmmc", n)? as usize;
        self.target(bits).map(|_| ())
    }

    fn run_streamed<'a>(&'a self, r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let input = &req.input;
            let len = input.len();
            self.check_tile_bits()?;
            self.check_tile_shape()?;
            let n = len.trailing_zeros() as usize; // a power of two (check_len)
            let target = self.target(n)?;
            let params = self.params(gpu);
            let spec = plan::build(Variant::of(req.variant), &target, &params)?;
            let a = gpu.storage_init("bmmc input", &input.bits)?;
            let b = gpu.storage_poisoned("bmmc ping", len, POISON)?;
            let c = if spec.passes.len() > 1 {
                gpu.storage_poisoned("bmmc pong", len, POISON)?
            } else {
                gpu.storage_poisoned("bmmc pong", 1, POISON)?
            };
            let (mut plan, output) = gpu_plan(gpu, &spec, &params, n, &a, &b, &c, req.trace)?;
            plan.output = Some(output);
            let mut head =
                RunResult::head(Algo::Bmmc, req.variant.name, gpu, input, req.dtype, &plan);
            head.extra = plan_facts(gpu, &params, n, &target, &spec);
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                let notes = trace::Notes::new(0, target.a.row_strings(), target.c, n);
                let input_stage = Stage::with("input", input.clone(), RoomNotes::Bmmc(notes));
                out.begin(head, spec.passes.len() + 1, input_stage)?;
                let mut pass_mismatch = None;
                // The CPU model pass by pass, beside the whole map at once (below).
                let mut cur = input.bits.clone();
                for (i, p) in spec.passes.iter().enumerate() {
                    let Some((_, captures)) = run.next_capture().await? else {
                        break;
                    };
                    cur = p.map.permute(&cur);
                    let g = captures.into_iter().next().unwrap_or_default();
                    if pass_mismatch.is_none()
                        && let Some(m) = first_mismatch(req.dtype, &g, &cur)
                    {
                        pass_mismatch = Some(format!("pass {}: {m}", i + 1));
                    }
                    let notes = trace::Notes::new(i + 1, p.map.a.row_strings(), p.map.c, n)
                        .with_kernel(&p.kernel);
                    out.push(Stage::with(
                        format!("pass {}: {}", i + 1, p.label),
                        Data::new(req.dtype, g),
                        RoomNotes::Bmmc(notes),
                    ))?;
                }
                Ok(pass_mismatch)
            };
            r.drive(&plan, head, trace, |ex, pass_mismatch| {
                let mismatch = crate::algo::verdict(gpu, || {
                    first_mismatch(req.dtype, &ex.output, &target.permute(&input.bits))
                });
                Ok((mismatch.or(pass_mismatch.flatten()), Default::default()))
            })
            .await
        })
    }

    fn bench_case(&self, gpu: &Gpu, v: &VariantInfo, len: usize, _: DType) -> Result<BenchCase> {
        self.check_tile_bits()?;
        self.check_tile_shape()?;
        let n = len.trailing_zeros() as usize; // a power of two (check_len)
        let target = self.target(n)?;
        let params = self.params(gpu);
        let spec = plan::build(Variant::of(v), &target, &params)?;
        // Ping-pong between the two buffers: a → b → a → …. The floor: one read and one write of
        // every element, whatever the plan does.
        BenchCase::between_buffers(gpu, ["bmmc a", "bmmc b"], len, len, |a, b| {
            Ok(gpu_plan(gpu, &spec, &params, n, a, b, a, false)?.0)
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (20, 28)
    }
}

/// The run's top-level JSON facts: the map and its plan (known before the GPU runs).
fn plan_facts(
    gpu: &Gpu,
    params: &Params,
    log_n: usize,
    target: &Affine,
    spec: &PlanSpec,
) -> Map<String, Value> {
    // A tiled pass also says the shape it ran with.
    let pass = |p: &plan::PassSpec| {
        let mut v = p.to_json();
        if let plan::Kernel::Tiled { tin, threads_log } = &p.kernel {
            let shape = kernels::tiled_shape(
                tin.len(),
                log_n - tin.len(),
                *threads_log,
                &gpu.limits,
                params,
            );
            v["threads"] = serde_json::json!(1u32 << shape.threads_log);
            v["tiles_per_workgroup"] = serde_json::json!(1u32 << shape.tiles_log);
            v["vector"] = serde_json::json!(if shape.vector { kernels::VECTOR } else { 1 });
            // Which tiles neighbouring workgroups take (one tile holds the whole array: none).
            if log_n > tin.len() {
                let by = kernels::by_output(&p.map.a, params.group_order);
                v["group_order"] = serde_json::json!(if by { "output" } else { "input" });
            }
        }
        v
    };
    facts::Facts {
        log_n,
        matrix: target.a.row_strings(),
        complement: target.c,
        bpc: target.a.is_permutation(),
        plan: spec.passes.iter().map(pass).collect(),
        pass_count: spec.passes.len(),
        bound: spec.bound,
    }
    .to_map()
}

/// The plan facts for the view's live status (no GPU): pass count per variant.
pub fn plan_summary(target: &Affine, params: &Params) -> Vec<(String, Result<usize>)> {
    use Variant::*;
    [Tiled, SeedUlp, SeedPlu, Naive]
        .into_iter()
        .map(|v| {
            (
                v.to_string(),
                plan::build(v, target, params).map(|p| p.passes.len()),
            )
        })
        .collect()
}

/// For other rooms (bitrev's `tiled` variant): one tiled pass performing the bit permutation
/// `a` on 2^n words, reading `src` and writing `dst` (captured when `capture`).
pub fn tiled_bpc_plan(
    gpu: &Gpu,
    a: &BitMatrix,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
    capture: bool,
) -> Result<(Plan, Region)> {
    let n = a.n;
    let params = Options::default().params(gpu);
    let spec = plan::tiled(&Affine { a: a.clone(), c: 0 }, &params);
    spec.check(&Affine { a: a.clone(), c: 0 }, &params)?;
    gpu_plan(gpu, &spec, &params, n, src, dst, dst, capture)
}
