//! `tune kernel`: every combination of a workbench kernel's override values (a grid, at most
//! [`MAX_COMBINATIONS`]), each verified against the expected op on a fresh random input before it
//! is timed — a wrong one is marked wrong and never timed, so it is never best; one past the
//! adapter's limits or that does not compile is refused, never dispatched — then timed in timed
//! mode (warm-up, medians of timestamped repetitions) beside the same-run copy and the built-in
//! kernel for the op. The CLI prints the rows; the app's *Your kernel* room draws them.
//!
//! [`MAX_COMBINATIONS`]: crate::algo::kernel::overrides::MAX_COMBINATIONS

use super::kernel::{KernelEntry, content_hash};
use crate::algo::kernel::{self, overrides::Grid};
use crate::algo::{AlgoOptions, Algorithm};
use crate::data::Fill;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::request::{InputSpec, RunSpec};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Elements a candidate is verified on at most (its timing size, where smaller).
pub const VERIFY_N: usize = 1 << 20;
/// The size a tuning times at unless told (`--n`).
pub const DEFAULT_N: usize = 1 << 20;
/// Wall-time warm-up before each candidate (ms). The candidates run back to back, so the GPU
/// is busy already; the copy, timed first, gets the full default warm-up.
pub const CANDIDATE_WARMUP_MS: f64 = 100.0;

/// What to tune: the kernel with its other options (`opts.overrides`: values held fixed for the
/// overrides not tuned), the value lists, the size and repetitions.
#[derive(Clone, Debug)]
pub struct Setup {
    pub opts: kernel::Options,
    /// `NAME=v1,v2,…`, one an override.
    pub lists: Vec<String>,
    pub n: usize,
    pub reps: usize,
    /// The same-run copy's shape (auto fields filled from this GPU's wisdom by the front end).
    pub roofline: crate::algo::copy::Options,
}

/// A candidate's fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Verified, then timed.
    Timed,
    /// Its output differs from the expected op's: not timed.
    Wrong,
    /// Past the adapter's limits, or it does not compile: never dispatched.
    Refused,
}

/// One combination's row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The tuned overrides' values: (name, value as `--override` takes it); JSON: an object of
    /// numbers and bools.
    #[serde(serialize_with = "as_object")]
    pub overrides: Vec<(String, String)>,
    pub status: Status,
    /// Why it was wrong or refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub ms: Option<f64>,
    pub gbps: Option<f64>,
    /// Its GB/s over the same-run copy's.
    pub fraction_of_copy: Option<f64>,
    /// The built-in kernel's median over this one's (above 1: this one is faster).
    pub vs_builtin: Option<f64>,
}

impl Row {
    pub fn verified(&self) -> bool {
        self.status == Status::Timed
    }

    /// `TILE=16 WG=64`.
    pub fn choice(&self) -> String {
        let v: Vec<String> = self
            .overrides
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        v.join(" ")
    }

    /// The value of override `name` as a number (the app's plot; a bool is 0 or 1).
    pub fn value(&self, name: &str) -> Option<f64> {
        let v = &self.overrides.iter().find(|o| o.0 == name)?.1;
        match v.as_str() {
            "true" => Some(1.0),
            "false" => Some(0.0),
            v => v.parse().ok(),
        }
    }
}

/// `[(name, "16")]` as `{"name": 16}` (a value that is no JSON number or bool stays text).
fn as_object<S: serde::Serializer>(
    v: &[(String, String)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    typed(v).serialize(s)
}

/// Override values as JSON values: numbers and bools typed.
fn typed(v: &[(String, String)]) -> Map<String, Value> {
    v.iter()
        .map(|(k, v)| {
            let j = serde_json::from_str::<Value>(v)
                .ok()
                .filter(|j| j.is_number() || j.is_boolean())
                .unwrap_or_else(|| json!(v));
            (k.clone(), j)
        })
        .collect()
}

/// A reference row: the same-run copy, or the built-in kernel for the op.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reference {
    /// `copy vec4`, `bitrev tiled`, …
    pub name: String,
    pub ms: f64,
    pub gbps: f64,
    pub fraction_of_copy: f64,
}

/// A finished (or stopped) tuning.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub adapter: String,
    pub file: String,
    /// The kernel text's [`content_hash`]: what a saved choice is keyed by.
    pub hash: String,
    pub expect: String,
    pub n: usize,
    pub reps: usize,
    /// The tuned overrides, in the order given.
    pub axes: Vec<String>,
    pub copy: Reference,
    /// None: no room computes the op, or its kernel refused this size (`builtin_refused`).
    pub builtin: Option<Reference>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin_refused: Option<String>,
    pub rows: Vec<Row>,
    /// The fastest verified row (index into `rows`).
    pub best: Option<usize>,
    /// Combinations in the grid (a stopped tuning has fewer rows).
    pub total: usize,
}

impl Report {
    pub fn best_row(&self) -> Option<&Row> {
        self.best.and_then(|i| self.rows.get(i))
    }

    /// The best row as this file's kernel wisdom entry.
    pub fn entry(&self) -> Option<KernelEntry> {
        let b = self.best_row()?;
        let choice = typed(&b.overrides);
        Some(KernelEntry {
            hash: self.hash.clone(),
            file: self.file.clone(),
            expect: Some(self.expect.clone()),
            n: self.n,
            choice,
            ms: b.ms?,
            copy_ms: self.copy.ms,
            date: crate::suite::utc_now(),
        })
    }

    /// The fastest verified row among `rows` (ties: the first).
    fn pick(rows: &[Row]) -> Option<usize> {
        rows.iter()
            .enumerate()
            .filter(|(_, r)| r.verified())
            .filter_map(|(i, r)| Some((i, r.ms?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }
}

/// What a running tuning reports.
pub enum Event<'a> {
    /// The grid's size, before anything runs.
    Started { total: usize },
    /// The same-run copy timed (first).
    Copy(&'a Reference),
    /// The built-in kernel for the op timed (where there is one).
    Builtin(&'a Reference),
    /// A combination done: its index in the grid and its row.
    Row { index: usize, row: &'a Row },
}

/// A planted wrong candidate (`STAGEWISE_FAULT=wrong-candidate:NAME=VALUE`, the rooms' test hook,
/// [`super::search`]): its verification gets one wrong element and its time would be divided by
/// 100, so it would win if a candidate were ever timed unverified.
fn planted(combo: &[(String, String)]) -> bool {
    let choice: Map<String, Value> = combo
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    super::search::planted(&choice)
}

/// A run or a build the kernel refused: the row's reason. Anything else (a lost device) ends the
/// tuning.
fn refusal(e: Error) -> Result<String> {
    match e {
        Error::Input(m) | Error::Limit(m) | Error::Validation(m) => Ok(m),
        Error::OutOfMemory(m) => Ok(format!("out of memory: {m}")),
        e => Err(e),
    }
}

/// Warm up, then the median of `reps` timed runs of `case` (ms).
async fn time_case(
    gpu: &Gpu,
    case: &crate::algo::BenchCase,
    warm_ms: f64,
    reps: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<f64> {
    crate::gpu::timed::warm_for(gpu, &case.plan, warm_ms).await?;
    Ok(
        crate::gpu::timed::time_with(gpu, &case.plan, 2, reps, cancelled)
            .await?
            .total_ms,
    )
}

/// Verify, then time one combination.
async fn candidate(
    gpu: &Gpu,
    setup: &Setup,
    combo: &[(String, String)],
    copy_gbps: f64,
    builtin_ms: Option<f64>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Row> {
    let mut opts = setup.opts.clone();
    opts.overrides
        .extend(combo.iter().map(|(k, v)| format!("{k}={v}")));
    let mut row = Row {
        overrides: combo.to_vec(),
        status: Status::Refused,
        reason: None,
        ms: None,
        gbps: None,
        fraction_of_copy: None,
        vs_builtin: None,
    };
    let elem = match opts.contract() {
        Ok((_, _, c)) => c.elem,
        Err(e) => {
            row.reason = Some(refusal(e)?);
            return Ok(row);
        }
    };
    // A fresh random input every candidate: a kernel right for one input only does not pass.
    let mut spec = RunSpec::new(AlgoOptions::Kernel(opts.clone()));
    spec.variant = Some("wgsl".into());
    spec.dtype = Some(elem.dtype());
    spec.input = InputSpec::Generate {
        n: Some(setup.n.min(VERIFY_N) * elem.words()),
        fill: Some(Fill::Random),
        seed: rand::random(),
    };
    let req = match spec.resolve() {
        Ok(r) => r,
        Err(e) => {
            row.reason = Some(refusal(e)?);
            return Ok(row);
        }
    };
    let plant = planted(combo);
    if plant {
        gpu.inject_wrong_output();
    }
    let res =
        crate::algo::run_streamed(&opts, gpu, &req, &mut crate::algo::stream::Stages::keep()).await;
    let res = match res {
        Ok(r) => r,
        Err(e) => {
            row.reason = Some(refusal(e)?);
            return Ok(row);
        }
    };
    if !res.verified {
        row.status = Status::Wrong;
        row.reason = Some(
            res.mismatch
                .unwrap_or_else(|| "output differs from the expected op".into()),
        );
        return Ok(row);
    }
    let variant = opts.info().variant(Some("wgsl"))?;
    let case = match opts.bench_case(gpu, variant, setup.n, elem.dtype()) {
        Ok(c) => c,
        Err(e) => {
            row.reason = Some(refusal(e)?);
            return Ok(row);
        }
    };
    let mut ms = time_case(gpu, &case, CANDIDATE_WARMUP_MS, setup.reps, cancelled).await?;
    if plant {
        ms /= 100.0;
    }
    let gbps = case.bytes as f64 / (ms * 1e6);
    row.status = Status::Timed;
    row.ms = Some(ms);
    row.gbps = Some(gbps);
    row.fraction_of_copy = Some(gbps / copy_gbps);
    row.vs_builtin = builtin_ms.map(|b| b / ms);
    Ok(row)
}

/// Check what can be checked before any GPU work: the kernel, its expected op and the grid.
pub fn prepare(setup: &Setup) -> Result<(String, String, Grid)> {
    if setup.opts.expect.is_none() {
        return Err(Error::input(
            "tune kernel needs --expect OP: every candidate is verified on a fresh random input before it is timed",
        ));
    }
    if setup.reps == 0 {
        return Err(Error::input("--reps must be at least 1"));
    }
    if setup.n == 0 {
        return Err(Error::input("--n must be at least 1"));
    }
    let (file, text) = setup.opts.kernel_text()?;
    let (module, info) = kernel::contract::compile(&file, &text)?;
    let decl = kernel::overrides::declared(&module, &info);
    let grid = Grid::parse(&decl, &setup.lists)?;
    // Values held fixed must not be tuned too: the grid's would be overridden.
    for g in &setup.opts.overrides {
        let name = g.split_once('=').map_or(g.as_str(), |(k, _)| k.trim());
        if grid.axes.iter().any(|a| a.0 == name) {
            return Err(Error::Input(format!(
                "--override {name}: given both as a value and as a list to tune"
            )));
        }
    }
    // The fixed values typed, every override without a default given a value, the kernel's
    // other options (none of which depend on the values) checked: errors before any GPU work.
    kernel::overrides::parse_given(&decl, &setup.opts.overrides)?;
    let fixed = |name: &str| {
        setup
            .opts
            .overrides
            .iter()
            .any(|g| g.split_once('=').is_some_and(|(k, _)| k.trim() == name))
    };
    if let Some(o) = decl
        .iter()
        .find(|o| !o.has_default && !fixed(&o.name) && !grid.axes.iter().any(|a| a.0 == o.name))
    {
        return Err(Error::Input(format!(
            "{file}: override '{}' has no default: give it with --override {}=VALUE ({}), or a list to tune",
            o.name,
            o.name,
            o.kind.wgsl()
        )));
    }
    setup
        .opts
        .validate(&kernel::contract::Contract::declared(&file, &text)?)?;
    Ok((file, text, grid))
}

/// Tune `setup` on `gpu`: the copy and the built-in kernel first, then every combination in order
/// (rows as they finish through `on`). Stopped (`cancelled`): `Error::Cancelled`; the rows sent
/// so far are what there is.
pub async fn tune(
    gpu: &Gpu,
    setup: &Setup,
    on: &mut dyn FnMut(Event),
    cancelled: &dyn Fn() -> bool,
) -> Result<Report> {
    let (file, text, grid) = prepare(setup)?;
    if !gpu.has_timestamps() {
        return Err(Error::TimestampsUnavailable);
    }
    gpu.check_elements(setup.n, "tune kernel")?;
    let total = grid.len();
    on(Event::Started { total });
    // The element type does not depend on the values (a combination may not compile at all).
    let dtype = kernel::contract::Contract::declared(&file, &text)?
        .elem
        .dtype();
    // The same-run copy at this N.
    let copy = setup.roofline;
    let copy_variant = &copy.info().variants[0];
    let copy_case = copy.bench_case(gpu, copy_variant, setup.n, crate::data::DType::U32)?;
    let copy_ms = time_case(
        gpu,
        &copy_case,
        crate::gpu::timed::DEFAULT_MIN_WARMUP_MS,
        setup.reps,
        cancelled,
    )
    .await?;
    let copy_gbps = copy_case.bytes as f64 / (copy_ms * 1e6);
    let copy_ref = Reference {
        name: format!("copy {}", copy_variant.name),
        ms: copy_ms,
        gbps: copy_gbps,
        fraction_of_copy: 1.0,
    };
    on(Event::Copy(&copy_ref));
    // The built-in kernel for the op, where a room computes it and takes this size.
    let (mut builtin, mut builtin_refused) = (None, None);
    let builtin_case =
        setup
            .opts
            .expected()?
            .and_then(|e| e.builtin())
            .map(|(algo, v)| -> Result<_> {
                let a = algo.algo();
                let variant = a.info().variant(Some(v))?;
                a.check_len(setup.n)?;
                let case = a.bench_case(gpu, variant, setup.n, dtype)?;
                Ok((format!("{} {v}", algo.name()), case))
            });
    match builtin_case {
        Some(Ok((name, case))) => {
            let ms = time_case(gpu, &case, CANDIDATE_WARMUP_MS, setup.reps, cancelled).await?;
            let gbps = case.bytes as f64 / (ms * 1e6);
            let r = Reference {
                name,
                ms,
                gbps,
                fraction_of_copy: gbps / copy_gbps,
            };
            on(Event::Builtin(&r));
            builtin = Some(r);
        }
        Some(Err(e)) => builtin_refused = Some(refusal(e)?),
        None => {}
    }
    let mut rows = Vec::with_capacity(total);
    for i in 0..total {
        if cancelled() {
            return Err(Error::Cancelled);
        }
        let combo: Vec<(String, String)> = grid
            .combination(i)
            .into_iter()
            .filter_map(|w| {
                w.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
        let row = candidate(
            gpu,
            setup,
            &combo,
            copy_gbps,
            builtin.as_ref().map(|b| b.ms),
            cancelled,
        )
        .await?;
        on(Event::Row {
            index: i,
            row: &row,
        });
        rows.push(row);
    }
    let best = Report::pick(&rows);
    Ok(Report {
        adapter: gpu.adapter_name(),
        hash: content_hash(&text),
        file,
        expect: setup.opts.expect.clone().unwrap_or_default(),
        n: setup.n,
        reps: setup.reps,
        axes: grid.axes.iter().map(|a| a.0.clone()).collect(),
        copy: copy_ref,
        builtin,
        builtin_refused,
        rows,
        best,
        total,
    })
}
