//! LSD radix sort of u32/i32/f32 keys (the odd-even room's order-preserving keys and total order),
//! keys only or with a u32 payload, stable, any N >= 1. Two variants over the same ranking and
//! scatter code (shaders/radix/sort.wgsl):
//! - `onesweep` (Adinets & Merrill 2022): one histogram pass over every digit (its last workgroup
//!   scans the counts into digit offsets), then per digit ONE pass in which each tile ranks its
//!   keys, finds how many keys of each bucket earlier tiles hold by a decoupled look-back over
//!   per-tile bucket counts (with the scan room's fallback: no forward-progress assumption), and
//!   scatters through workgroup memory;
//! - `classic`: per digit a tile-histogram pass, a scan of the counts, a scatter pass (for
//!   teaching: every step visible).

pub mod kernel;
pub mod model;
pub mod options;
pub mod plan;
pub mod trace;
mod tune;

pub use options::{Options, Shape, TileOrder, Values, help};

use super::prelude::*;
use crate::gpu::Execution;
use plan::Init;
use serde_json::{Map, json};

variants! {
    room "radix" (seed "004 (scan) + 000/001 (permutations)"): "Radix sort (LSD)",
        "stable LSD radix sort by digits of --digit-bits bits; u32/i32/f32 keys (f32: -NaN < -inf \
         < … < -0 < +0 < … < +inf < +NaN), --descending, --values for a u32 payload";
    Onesweep = "onesweep": "histogram of every digit in one pass (its last workgroup scans the \
        counts), then per digit one pass: rank the tile, decoupled look-back over the tiles' \
        bucket counts (with fallback), scatter through workgroup memory",
    Classic = "classic": "per digit three passes: tile histograms, one scan of the counts, stable \
        scatter (for teaching)",
}

impl Options {
    /// Options that only one variant uses are an error elsewhere.
    pub fn check_variant(&self, variant: Variant) -> Result<()> {
        if variant != Variant::Onesweep && self.tile_order != TileOrder::Auto {
            return Err(crate::input_err!(
                "--tile-order applies to --variant onesweep only (the look-back); radix {variant} has none"
            ));
        }
        if variant != Variant::Onesweep && self.prefetch.is_some() {
            return Err(crate::input_err!(
                "--prefetch applies to --variant onesweep only; radix {variant} does not prefetch"
            ));
        }
        if variant != Variant::Onesweep && self.look_back_window != 0 {
            return Err(crate::input_err!(
                "--look-back-window applies to --variant onesweep only (the look-back); radix {variant} has none"
            ));
        }
        if self.look_back_window > 32 {
            return Err(crate::input_err!(
                "--look-back-window must be 0 (auto) or 1..=32; got {}",
                self.look_back_window
            ));
        }
        if variant != Variant::Onesweep && self.spin != Options::default().spin {
            return Err(crate::input_err!(
                "--spin applies to --variant onesweep only (the look-back); radix {variant} has none"
            ));
        }
        Ok(())
    }

    /// What a run's JSON says of its plan before it runs (the shape, the order of the tiles).
    fn facts(
        &self,
        gpu: &Gpu,
        variant: Variant,
        built: &plan::Built,
    ) -> Map<String, serde_json::Value> {
        let shape = built.shape;
        let mut extra = Map::new();
        extra.insert("descending".into(), json!(self.descending));
        extra.insert("digit_bits".into(), json!(shape.bits));
        extra.insert("digits".into(), json!(shape.digits()));
        extra.insert("workgroup_size".into(), json!(shape.wg));
        extra.insert("keys_per_thread".into(), json!(shape.kpt));
        extra.insert("tile".into(), json!(shape.tile()));
        if variant == Variant::Onesweep {
            let order = if self.dispatch_order(gpu) {
                "dispatch"
            } else {
                "counter"
            };
            extra.insert("tile_order".into(), json!(order));
            extra.insert("prefetch".into(), json!(self.prefetch_ahead(gpu)));
            extra.insert("look_back_window".into(), json!(self.window()));
        }
        extra.insert("tiles".into(), json!(built.tiles));
        extra.insert(
            "rank".into(),
            json!(if shape.subgroups {
                "subgroups"
            } else {
                "workgroup memory"
            }),
        );
        extra
    }

    fn values_for(&self, keys: &[u32]) -> Vec<u32> {
        match self.values {
            Values::None => Vec::new(),
            Values::Iota => (0..keys.len() as u32).collect(),
            Values::Input => keys.to_vec(),
        }
    }
}

impl Algorithm for Options {
    fn info(&self) -> &'static AlgoInfo {
        &INFO
    }

    fn check_len(&self, n: usize) -> Result<()> {
        // Look-back counts travel in 30 bits of a status word.
        if n >= 1 << 30 {
            return Err(crate::input_err!(
                "radix sorts up to 2^30 - 1 keys; got N = {n}"
            ));
        }
        Ok(())
    }

    fn run_streamed<'a>(&'a self, mut r: Run<'a, '_>) -> Task<'a, RunResult> {
        Box::pin(async move {
            let (gpu, req) = (r.gpu, r.req);
            let variant = Variant::of(req.variant);
            self.check_variant(variant)?;
            let dtype = req.dtype;
            let x = &req.input.bits;
            let n = x.len();
            let vals = self.values_for(x);
            let built = self.build_sort(gpu, variant, dtype, x, &vals, req.trace)?;
            let shape = built.shape;
            let mut head = RunResult::head(
                Algo::Radix,
                variant.name(),
                gpu,
                &req.input,
                dtype,
                &built.plan,
            );
            head.extra = self.facts(gpu, variant, &built);
            // The values are read back from the last pass's captures, traced or not.
            r.capture |= self.has_values();
            // Traced: every pass's stage handed on as soon as it is read back and checked.
            let trace = async |head: &RunResult, run: &mut Running<'_>, out: &mut Stages<'_>| {
                let steps =
                    model::steps(dtype, self.descending, shape.bits, shape.tile(), x, &vals);
                let tracer = trace::Tracer {
                    frame: trace::Frame {
                        bits: shape.bits,
                        tile: shape.tile(),
                        tiles: built.tiles,
                        n,
                    },
                    dtype,
                    input: x,
                    steps: &steps,
                    counts: model::digit_counts(dtype, self.descending, shape.bits, x),
                    with_values: self.has_values(),
                };
                let stages: usize = built
                    .kinds
                    .iter()
                    .map(|&k| trace::Tracer::stage_count(k))
                    .sum();
                out.begin(head, stages + 1, tracer.input())?;
                let (mut mismatch, mut fallbacks, mut values) = (None, 0u64, None);
                while let Some((i, caps)) = run.next_capture().await? {
                    let kind = built.kinds[i];
                    if self.has_values() && i + 1 == built.kinds.len() {
                        values = caps.get(2).cloned();
                    }
                    for st in tracer.stages(i, kind, &caps, &mut mismatch) {
                        fallbacks += trace::RadixNote::of(&st).map_or(0, |nt| nt.fallbacks);
                        out.push(st)?;
                    }
                }
                Ok((mismatch, fallbacks, values))
            };
            let check =
                |ex: &Execution, traced: Option<(Option<String>, u64, Option<Vec<u32>>)>| {
                    let (trace_mismatch, fallbacks, traced_values) = traced.unwrap_or_default();
                    let got_v = if self.has_values() {
                        traced_values.unwrap_or_else(|| sorted_values(ex))
                    } else {
                        Vec::new()
                    };
                    let mismatch = crate::algo::verdict(gpu, || {
                        let (want_k, want_v) = model::sort(dtype, self.descending, x, &vals);
                        first_mismatch(dtype, &ex.output, &want_k)
                            .map(|m| format!("keys: {m}"))
                            .or_else(|| {
                                // Keys only: both lists are empty.
                                first_mismatch(DType::U32, &got_v, &want_v)
                                    .map(|m| format!("values: {m}"))
                            })
                    });
                    let mut extra = Map::new();
                    if self.has_values() {
                        extra.insert("values".into(), json!(got_v));
                    }
                    if req.trace && variant == Variant::Onesweep {
                        extra.insert("fallbacks".into(), json!(fallbacks));
                    }
                    Ok((mismatch.or(trace_mismatch), extra))
                };
            r.drive(&built.plan, head, trace, check).await
        })
    }

    fn bench_case(&self, gpu: &Gpu, v: &VariantInfo, n: usize, dtype: DType) -> Result<BenchCase> {
        let variant = Variant::of(v);
        self.check_variant(variant)?;
        let built = plan::build(gpu, self, variant, dtype, &Init::Random(n), false)?;
        let mut p = built.plan;
        p.output = None;
        for pass in &mut p.passes {
            pass.capture.clear();
        }
        Ok(BenchCase {
            plan: p,
            bytes: floor_bytes(self, variant, n, built.shape),
            items: n as u64,
        })
    }

    fn bench_log_n(&self) -> (u32, u32) {
        (16, 24)
    }
}

/// The floor: what the passes must move at least. Every scatter pass reads and writes every key
/// (and value): 8 bytes per key, 16 with values. onesweep adds one histogram read of the keys (4
/// bytes per key); classic adds a histogram read of the keys per digit. Counts, statuses and the
/// clear are left out (they shrink with the tile).
pub fn floor_bytes(o: &Options, variant: Variant, n: usize, shape: Shape) -> u64 {
    let per_key = if o.has_values() { 16 } else { 8 };
    let d = shape.digits() as u64;
    let hist = if variant == Variant::Onesweep { 1 } else { d };
    n as u64 * (d * per_key + 4 * hist)
}

impl Options {
    /// Build one plan for `inputs[0]` and execute it once per input, each written into the
    /// plan's key (and value) buffers first: the sorted keys and values of every run. Runs on new
    /// keys check that a run leaves no state behind (stale look-back statuses of equal keys would
    /// go unnoticed). Every input has the same length.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn repeated_runs(
        &self,
        gpu: &Gpu,
        variant: Variant,
        dtype: DType,
        inputs: &[&[u32]],
    ) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        self.check_variant(variant)?;
        let first = inputs.first().copied().unwrap_or(&[]);
        if inputs.iter().any(|k| k.len() != first.len()) {
            return Err(Error::input(
                "radix: every input of repeated runs has the same length",
            ));
        }
        let built = self.build_sort(gpu, variant, dtype, first, &self.values_for(first), false)?;
        inputs
            .iter()
            .enumerate()
            .map(|(i, keys)| {
                if i > 0 {
                    gpu.queue
                        .write_buffer(&built.input, 0, bytemuck::cast_slice(keys));
                    if let Some(v) = &built.values {
                        let vals = self.values_for(keys);
                        gpu.queue.write_buffer(v, 0, bytemuck::cast_slice(&vals));
                    }
                }
                let ex = crate::gpu::execute_blocking(gpu, &built.plan, self.has_values())?;
                let v = sorted_values(&ex);
                Ok((ex.output, if self.has_values() { v } else { Vec::new() }))
            })
            .collect()
    }

    /// The plan that sorts `keys` (and `values`, if the options carry them).
    fn build_sort(
        &self,
        gpu: &Gpu,
        variant: Variant,
        dtype: DType,
        keys: &[u32],
        values: &[u32],
        trace: bool,
    ) -> Result<plan::Built> {
        let init = Init::Data { keys, values };
        plan::build(gpu, self, variant, dtype, &init, trace)
    }
}

/// A key-value sort's sorted values: the last capture of the last pass.
fn sorted_values(ex: &Execution) -> Vec<u32> {
    ex.captures
        .last()
        .and_then(|c| c.last())
        .cloned()
        .unwrap_or_default()
}
