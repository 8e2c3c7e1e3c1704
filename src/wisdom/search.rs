//! The tuner: for each case, the built-in default first, then each knob's values in the room's
//! order (one knob at a time, keeping the best so far: a bounded walk, not a grid). Every
//! candidate is verified against the CPU model on a fresh random input before it is timed, so a
//! fast wrong configuration never wins; one the adapter refuses is skipped. A choice replaces the
//! default only when it is faster beyond noise, confirmed by timing both twice more ([`confirmed`]).

use super::{Entry, Tried};
use crate::algo::AlgoOptions;
use crate::data::DType;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::request::{InputSpec, RunSpec};
use serde_json::{Map, Value};
use web_time::Instant;

/// How much faster a candidate must be to become the best so far in the walk. Only a screen:
/// [`confirmed`] decides whether the best replaces the default.
pub const SCREEN: f64 = 0.005;

/// The least gain a confirmed choice brings (its best timing against the default's best).
pub const MIN_GAIN: f64 = 0.005;

/// Whether a choice beats the default beyond noise: every timing of it (the walk's and two more,
/// taken in turn with the default's) is faster than every timing of the default, and its best
/// by at least [`MIN_GAIN`]. The spread of each side's timings is the noise, measured on this
/// machine now rather than assumed: a quiet GPU (medians within 0.1–0.3 % run to run on the
/// H200) keeps gains of 1 % that a fixed 2 % rule threw away; a busy one keeps the default.
pub fn confirmed(default: &[f64], choice: &[f64]) -> bool {
    let slowest = choice.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    !default.is_empty()
        && !choice.is_empty()
        && slowest < fastest(default)
        && fastest(choice) < fastest(default) * (1.0 - MIN_GAIN)
}

/// The smallest of `times` (infinity for none).
fn fastest(times: &[f64]) -> f64 {
    times.iter().copied().fold(f64::INFINITY, f64::min)
}

/// One case to tune: a room's options (what the user would give), the variant and type, the size
/// it is timed at, and the size it is verified at.
#[derive(Clone, Debug)]
pub struct Case {
    pub id: String,
    pub algo: AlgoOptions,
    pub variant: String,
    pub dtype: DType,
    pub n: usize,
    /// The verification run (its options are replaced by each candidate's).
    pub verify: RunSpec,
}

impl Case {
    /// A case verified on `verify_n` random elements (an FFT: odd batches of its size, so that
    /// partial workgroups are checked too).
    pub fn new(
        id: &str,
        algo: AlgoOptions,
        variant: &str,
        dtype: DType,
        n: usize,
        verify_n: usize,
    ) -> Case {
        let mut checked = algo.clone();
        let verify_n = match &mut checked {
            AlgoOptions::Fft(o) => {
                let size = o.size.unwrap_or(1024);
                let per = if o.real { 1 } else { 2 };
                // Odd batches of workgroup sizes check partial workgroups; a large FFT's
                // plan does not depend on its batch (and its CPU model costs seconds).
                o.batch = if size <= 4096 {
                    (verify_n / size).max(3) | 1
                } else {
                    (verify_n / size).max(1)
                };
                o.batch * size * per
            }
            _ => verify_n.min(n),
        };
        let mut verify = RunSpec::new(checked);
        verify.variant = Some(variant.to_string());
        verify.dtype = Some(dtype);
        verify.input = InputSpec::Generate {
            n: Some(verify_n),
            fill: Some(crate::data::Fill::Random),
            seed: 1,
        };
        Case {
            id: id.to_string(),
            algo,
            variant: variant.to_string(),
            dtype,
            n,
            verify,
        }
    }
}

/// The rooms that declare parameters to tune.
pub const ROOMS: &[&str] = &["copy", "bmmc", "scan", "fft", "radix", "oddeven"];

/// The suite the tuner takes its cases from (the one `bench --suite` runs), built in.
const SUITE: &str = include_str!("../../bench/suite.toml");

/// Elements verified per candidate (an FFT: odd batches of about this many values).
pub const VERIFY_N: usize = 1 << 20;

/// The largest size a CPU adapter times a case at (the suite's 2^28 would take minutes a run).
pub const CPU_MAX_N: usize = 1 << 20;

/// The cases a round tunes, and those left out by design: their smallest run (one FFT) is more
/// than the size they would be timed at.
#[derive(Clone, Debug)]
pub struct Cases {
    pub cases: Vec<Case>,
    pub left_out: Vec<String>,
    /// Why, in words: "one FFT is more than …".
    pub left_out_why: String,
}

impl Cases {
    /// One line naming the cases left out and why (None: none was).
    pub fn left_out_line(&self) -> Option<String> {
        (!self.left_out.is_empty()).then(|| {
            format!(
                "left out: {}: {}",
                self.left_out.join(", "),
                self.left_out_why
            )
        })
    }
}

/// The smallest size a case runs at: an FFT's one transform, else one element.
fn smallest_n(algo: &AlgoOptions) -> usize {
    match algo {
        AlgoOptions::Fft(o) => o.size.unwrap_or(1024),
        _ => 1,
    }
}

/// What to tune: the suite's cases whose room declares a search space, narrowed to `rooms` (empty:
/// all of [`ROOMS`]) and to ids containing one of `only` (empty: all), each timed at `n` (None: the
/// case's largest suite size, at most [`CPU_MAX_N`] on a CPU adapter). A case that cannot run at
/// that size (an FFT larger than it) is left out, not tried. `words` reads the suite's CLI words
/// (the front end's parser).
pub fn suite_cases(
    words: &dyn crate::request::CommandWords,
    rooms: &[String],
    only: &[String],
    n: Option<usize>,
    cpu: bool,
) -> Result<Cases> {
    let suite = crate::suite::parse("bench/suite.toml (built in)", SUITE, words)?;
    let mut cases = Vec::new();
    let mut left_out = Vec::new();
    for c in &suite.cases {
        if !only.is_empty() && !only.iter().any(|o| c.id.contains(o.as_str())) {
            continue;
        }
        let (algo, dtype) = c.bench(words)?;
        let Some(algo) = algo else { continue };
        let name = algo.algo().info().name;
        if !rooms.is_empty() && !rooms.iter().any(|a| a == name) {
            continue;
        }
        let max = 1usize << c.log_n.iter().copied().max().unwrap_or(20);
        let n = n.unwrap_or(if cpu { max.min(CPU_MAX_N) } else { max });
        if algo.space(&c.variant, n).knobs.is_empty() {
            continue;
        }
        if smallest_n(&algo) > n {
            left_out.push(c.id.clone());
            continue;
        }
        cases.push(Case::new(&c.id, algo, &c.variant, dtype, n, VERIFY_N));
    }
    let left_out_why = match n {
        Some(n) => format!("one FFT is more than --n {n}"),
        None if cpu => format!(
            "one FFT is more than the 2^{} values a CPU adapter times a case at (--n N times \
             them at N)",
            CPU_MAX_N.trailing_zeros()
        ),
        None => "one FFT is more than the case's size".into(),
    };
    let cases = Cases {
        cases,
        left_out,
        left_out_why,
    };
    if cases.cases.is_empty() {
        return Err(Error::Input(match cases.left_out_line() {
            Some(l) => format!("tune: no case to tune; {l}"),
            None => "tune: no suite case with tunable parameters matches (rooms: copy, bmmc, \
                     scan, fft, radix, oddeven)"
                .into(),
        }));
    }
    Ok(cases)
}

/// What the tuner reports as it goes.
pub enum Event<'a> {
    Case {
        case: &'a Case,
        index: usize,
        total: usize,
    },
    /// A candidate: its choice, and its median ms or why it was not timed.
    Tried {
        case: &'a Case,
        choice: &'a Map<String, Value>,
        outcome: &'a Outcome,
    },
    /// The case's share of the round ran out: `untried` candidates of its walk were not tried;
    /// `unconfirmed`: a faster choice could not be timed again beside the default, which stays.
    OutOfTime {
        case: &'a Case,
        untried: usize,
        unconfirmed: bool,
    },
    Done(&'a Entry),
    Skipped {
        case: &'a Case,
        why: String,
    },
}

/// What [`Event::OutOfTime`] says, in words.
pub fn out_of_time(untried: usize, unconfirmed: bool) -> String {
    match (untried, unconfirmed) {
        (0, _) => "stopped for time: a faster choice was not confirmed; the default stays".into(),
        (n, false) => format!("stopped for time: {n} candidate(s) not tried"),
        (n, true) => format!(
            "stopped for time: {n} candidate(s) not tried, a faster choice not confirmed; the \
             default stays"
        ),
    }
}

/// One candidate's fate.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Timed(f64),
    /// The adapter or the room refused the configuration.
    Refused(String),
    /// It ran but its output differs from the CPU model's.
    Wrong(String),
}

/// The timing rules: wall-time warm-up, then medians of `reps` timestamped runs.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    pub reps: usize,
    pub min_warmup_ms: f64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            reps: 20,
            min_warmup_ms: 200.0,
        }
    }
}

/// A planted wrong candidate (`STAGEWISE_FAULT=wrong-candidate:FIELD=VALUE`, a test hook): its
/// verification gets one wrong element and its time is divided by 100, so it would win if the
/// tuner ever timed what it had not verified.
pub(crate) fn planted(choice: &Map<String, Value>) -> bool {
    let fault = std::env::var("STAGEWISE_FAULT").unwrap_or_default();
    fault.split(',').any(|f| {
        f.strip_prefix("wrong-candidate:")
            .and_then(|kv| kv.split_once('='))
            .is_some_and(|(k, v)| choice.get(k).is_some_and(|c| super::plain(c) == v))
    })
}

/// Verify then time `opts`.
async fn try_one(
    gpu: &Gpu,
    case: &Case,
    choice: &Map<String, Value>,
    rules: Rules,
    cancelled: &dyn Fn() -> bool,
) -> Result<Outcome> {
    let (opts, _) = match case.algo.with_choice(choice, true) {
        Ok(o) => o,
        Err(e) => return Ok(Outcome::Refused(e.to_string())),
    };
    let plant = planted(choice);
    let mut spec = case.verify.clone();
    if let InputSpec::Generate { seed, .. } = &mut spec.input {
        *seed = rand::random();
    }
    spec.algo = match (&opts, &case.verify.algo) {
        // The verification batch stays the verification's own.
        (AlgoOptions::Fft(o), AlgoOptions::Fft(v)) => {
            let mut o = o.clone();
            o.batch = v.batch;
            AlgoOptions::Fft(o)
        }
        _ => opts.clone(),
    };
    let refused = |e: Error| match e {
        Error::Input(m) | Error::Limit(m) => Ok(Outcome::Refused(m)),
        e => Err(e),
    };
    let req = match spec.resolve() {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    if plant {
        gpu.inject_wrong_output();
    }
    let res = match crate::algo::run_streamed(
        spec.algo.algo(),
        gpu,
        &req,
        &mut crate::algo::stream::Stages::keep(),
    )
    .await
    {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    if !res.verified {
        return Ok(Outcome::Wrong(
            res.mismatch
                .unwrap_or_else(|| "output differs from the CPU model".into()),
        ));
    }
    let algo = opts.algo();
    let variant = algo.info().variant(Some(&case.variant))?;
    let bench = match algo
        .check_len(case.n)
        .and_then(|_| algo.bench_case(gpu, variant, case.n, case.dtype))
    {
        Ok(b) => b,
        Err(e) => return refused(e),
    };
    crate::gpu::timed::warm_for(gpu, &bench.plan, rules.min_warmup_ms).await?;
    let t = crate::gpu::timed::time_with(gpu, &bench.plan, 0, rules.reps, cancelled).await?;
    Ok(Outcome::Timed(if plant {
        t.total_ms / 100.0
    } else {
        t.total_ms
    }))
}

/// Tune one case within `budget_s` seconds: the default always runs; no later try starts that
/// the case's measured tries say would end past the budget, with time kept for the confirming
/// timings. `None` (the case is reported skipped): the default itself failed, or no candidate
/// fit after it.
pub async fn tune_case(
    gpu: &Gpu,
    case: &Case,
    rules: Rules,
    budget_s: f64,
    on: &mut dyn FnMut(Event),
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<Entry>> {
    let t0 = Instant::now();
    let space = case.algo.space(&case.variant, case.n);
    let none = Map::new();
    let default_ms = match try_one(gpu, case, &none, rules, cancelled).await? {
        Outcome::Timed(ms) => ms,
        o => {
            let why = match o {
                Outcome::Refused(m) => format!("the default was refused: {m}"),
                Outcome::Wrong(m) => format!("the default failed verification: {m}"),
                Outcome::Timed(_) => unreachable!(),
            };
            on(Event::Skipped { case, why });
            return Ok(None);
        }
    };
    // Wall seconds of a timed try: the default's, then the slowest seen (a candidate's cost is
    // its verification, warm-up and repetitions, all at the case's sizes).
    let default_s = t0.elapsed().as_secs_f64();
    let mut try_s = default_s;
    let mut best_s = default_s;
    on(Event::Tried {
        case,
        choice: &none,
        outcome: &Outcome::Timed(default_ms),
    });
    let (mut best, mut best_ms) = (none.clone(), default_ms);
    let mut runner_up: Option<Tried> = None;
    let (mut timed, mut refused, mut wrong) = (1, 0, 0);
    let mut untried = 0;
    'knobs: for (k, knob) in space.knobs.iter().enumerate() {
        let base = best.clone();
        for (i, v) in knob.values.iter().enumerate() {
            if cancelled() {
                return Err(Error::Cancelled);
            }
            let mut choice = base.clone();
            knob.set(&mut choice, v);
            if choice == best {
                continue;
            }
            // This try, then the default and a new best timed twice more.
            if t0.elapsed().as_secs_f64() + try_s + 2.0 * (default_s + try_s) > budget_s {
                let later: usize = space.knobs[k + 1..].iter().map(|k| k.values.len()).sum();
                untried = knob.values.len() - i + later;
                break 'knobs;
            }
            let t = Instant::now();
            let outcome = try_one(gpu, case, &choice, rules, cancelled).await?;
            let took = t.elapsed().as_secs_f64();
            on(Event::Tried {
                case,
                choice: &choice,
                outcome: &outcome,
            });
            match outcome {
                Outcome::Timed(ms) => {
                    timed += 1;
                    try_s = try_s.max(took);
                    if ms < best_ms * (1.0 - SCREEN) {
                        runner_up = Some(Tried {
                            choice: std::mem::replace(&mut best, choice),
                            ms: best_ms,
                        });
                        best_ms = ms;
                        best_s = took;
                    } else if runner_up.as_ref().is_none_or(|r| ms < r.ms) {
                        runner_up = Some(Tried { choice, ms });
                    }
                }
                Outcome::Refused(_) => refused += 1,
                Outcome::Wrong(_) => wrong += 1,
            }
        }
    }
    // Nothing but the default measured: no entry (it would claim the default won, and replace
    // what an earlier round found for the case).
    if timed + refused + wrong == 1 && untried > 0 {
        let why = format!(
            "out of time (--minutes): no candidate fit its {budget_s:.0} s share after the \
             default ({default_s:.1} s a try)"
        );
        on(Event::Skipped { case, why });
        return Ok(None);
    }
    // Confirm: the default and the choice twice more, in turn ([`confirmed`]); noise never
    // replaces the default, nor does a choice there is no time left to confirm.
    let mut default_ms = default_ms;
    let confirm = !best.is_empty();
    let unconfirmed = confirm && t0.elapsed().as_secs_f64() + 2.0 * (default_s + best_s) > budget_s;
    if confirm {
        let (mut ds, mut bs) = (vec![default_ms], vec![best_ms]);
        if !unconfirmed {
            for _ in 0..2 {
                for (choice, times) in [(&none, &mut ds), (&best, &mut bs)] {
                    if let Outcome::Timed(ms) = try_one(gpu, case, choice, rules, cancelled).await?
                    {
                        times.push(ms);
                    }
                }
            }
        }
        default_ms = fastest(&ds);
        if ds.len() == 3 && bs.len() == 3 && confirmed(&ds, &bs) {
            best_ms = fastest(&bs);
        } else {
            runner_up = Some(Tried {
                choice: std::mem::take(&mut best),
                ms: best_ms,
            });
            best_ms = default_ms;
        }
    }
    if untried > 0 || unconfirmed {
        on(Event::OutOfTime {
            case,
            untried,
            unconfirmed,
        });
    }
    let name = case.algo.algo().info().name.to_string();
    let fields = case.algo.fields();
    let key = space
        .key
        .iter()
        .filter_map(|k| fields.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    let entry = Entry {
        case: case.id.clone(),
        algorithm: name,
        variant: case.variant.clone(),
        dtype: case.dtype,
        log_n: case.n.trailing_zeros(),
        key,
        choice: best,
        ms: best_ms,
        default_ms,
        runner_up,
        timed,
        refused,
        wrong,
    };
    on(Event::Done(&entry));
    Ok(Some(entry))
}

/// Tune `cases` within `minutes`: each case gets an equal share of what is left when it starts,
/// so a case that finishes early leaves its time to the later ones; a case starts only while the
/// round has time left. Entries come back as they finish; a cancelled run keeps what it finished.
pub async fn tune(
    gpu: &Gpu,
    cases: &[Case],
    rules: Rules,
    minutes: f64,
    on: &mut dyn FnMut(Event),
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<Entry>> {
    if !gpu.has_timestamps() {
        return Err(Error::TimestampsUnavailable);
    }
    let t0 = Instant::now();
    let mut out = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let left = minutes * 60.0 - t0.elapsed().as_secs_f64();
        if left <= 0.0 {
            on(Event::Skipped {
                case,
                why: "out of time (--minutes)".into(),
            });
            continue;
        }
        on(Event::Case {
            case,
            index: i,
            total: cases.len(),
        });
        match tune_case(
            gpu,
            case,
            rules,
            left / (cases.len() - i) as f64,
            on,
            cancelled,
        )
        .await
        {
            Ok(Some(e)) => out.push(e),
            Ok(None) => {}
            Err(Error::Cancelled) => break,
            Err(e) => on(Event::Skipped {
                case,
                why: e.to_string(),
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::confirmed;

    #[test]
    fn a_choice_is_confirmed_only_when_every_timing_beats_every_default_timing() {
        // 1 % faster, both sides within 0.1 %: confirmed.
        assert!(confirmed(&[1.000, 1.001, 1.000], &[0.990, 0.991, 0.990]));
        // The same gain at the best, but one timing of the choice slower than the default's
        // best: noise, not confirmed.
        assert!(!confirmed(&[1.000, 1.001, 1.000], &[0.990, 1.002, 0.990]));
        // Every timing faster, by less than MIN_GAIN: not confirmed.
        assert!(!confirmed(&[1.000, 1.000, 1.000], &[0.998, 0.998, 0.997]));
        // A busy machine (2 % spread) hides a 1 % gain.
        assert!(!confirmed(&[1.000, 1.020, 1.010], &[0.990, 1.005, 0.995]));
        // Nothing timed: nothing confirmed.
        assert!(!confirmed(&[], &[0.5]));
        assert!(!confirmed(&[1.0], &[]));
    }
}
