//! The benchmark suite: one declarative file (`bench/suite.toml`) lists the cases that matter, one
//! command runs them all (`stagewise bench --suite FILE --out RESULT.json`) and writes one
//! machine-readable result that docs/PERFORMANCE.md is generated from (`stagewise report`).
//!
//! A case's arguments are CLI words, read by the CLI's own parser (passed in as
//! [`CommandWords`]), so a suite case is exactly a `stagewise run` / `stagewise bench` command. Each case is first run once on a fresh random input
//! and checked against the CPU model; a case that fails the check is recorded and not timed.
// In the browser the suite runs natively; the page reads its types only.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

pub mod report;

// Used by the native-only runners below.
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::bench::{self, BenchRow, BenchSpec};
use crate::data::DType;
use crate::error::{Error, Result};
use crate::request::{CommandWords, RunSpec};
// Used by the native-only runners below.
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::gpu::Gpu;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The suite file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Defaults {
    pub reps: usize,
    pub warmup: usize,
    /// Largest N a case is verified at (the CPU model runs on the host).
    pub verify_max_n: usize,
    /// Warm up every size for at least this long (ms) besides `warmup` runs.
    pub min_warmup_ms: f64,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            reps: 30,
            warmup: 100,
            verify_max_n: 1 << 24,
            min_warmup_ms: bench::DEFAULT_MIN_WARMUP_MS,
        }
    }
}

/// One case: an algorithm, its variant and options, the sizes, and what it is compared with.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique name (table rows and the plot's legend).
    pub id: String,
    /// Which table of docs/PERFORMANCE.md it belongs to.
    pub group: String,
    pub algorithm: String,
    pub variant: String,
    #[serde(default = "u32_name")]
    pub dtype: String,
    /// More CLI words (algorithm options), e.g. ["--segment", "1024"].
    #[serde(default)]
    pub args: Vec<String>,
    /// log2 of every size timed.
    pub log_n: Vec<u32>,
    /// The verification run's words instead of `args --n N --fill random` (e.g. an FFT batch);
    /// `--seed` is added.
    pub verify: Option<Vec<String>>,
    pub reps: Option<usize>,
    pub warmup: Option<usize>,
    /// A peer of bench/peers.py, e.g. "torch.sort" or "fft:256" (the faster of cuFFT and VkFFT).
    pub peer: Option<String>,
    /// The goal: a minimum ratio against the copy ("copy") or the peer ("peer").
    pub goal: Option<Goal>,
}

fn u32_name() -> String {
    "u32".into()
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    /// "copy" (fraction of the same-run copy) or "peer" (peer time / ours).
    pub vs: String,
    pub min: f64,
}

/// What one case gave.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    pub case: Case,
    pub verify: Verify,
    /// Why a verified case has no timing, if it failed there.
    pub error: Option<String>,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verify {
    /// The verification run, as a command line.
    pub run: String,
    pub n: usize,
    pub seed: u64,
    pub verified: bool,
    /// Where the GPU and the CPU model differ, or the error that stopped the case.
    pub mismatch: Option<String>,
}

/// A timed size: our row (with the same-run copy) and the peer's time at that size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    #[serde(flatten)]
    pub ours: BenchRow,
    /// The floor's bytes at the copy rate measured in this run.
    pub floor_ms: f64,
    pub peer_ms: Option<f64>,
    /// Peer time / our time (above 1: faster than the peer).
    pub vs_peer: Option<f64>,
    /// Which library the peer's time is from, where the peer is the faster of several
    /// (`fft:S`: cuFFT or VkFFT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_by: Option<String>,
}

/// The whole result file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SuiteResult {
    pub suite: String,
    pub command: String,
    pub date: String,
    pub adapter: String,
    pub driver: String,
    pub backend: String,
    /// What bench/peers.py reported about itself, if it ran.
    pub peers: Option<PeersInfo>,
    /// The options taken from wisdom (`stagewise tune`), per case and size; none: the built-in
    /// defaults everywhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wisdom: Vec<WisdomUse>,
    pub cases: Vec<CaseResult>,
}

/// One case at one size run with options from wisdom.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WisdomUse {
    pub case: String,
    pub log_n: u32,
    /// The wisdom file (or `shipped:…`).
    pub from: String,
    /// The options it filled, as `--option value` would set them.
    pub options: serde_json::Map<String, serde_json::Value>,
}

/// What bench/peers.py ran on (its JSON, less its rows); fields in the JSON's order.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PeersInfo {
    pub cuda: Option<String>,
    /// None where CuPy is not installed.
    pub cupy: Option<String>,
    pub device: Option<String>,
    pub reps: Option<u64>,
    /// How many (case, N) rows the peers timed.
    #[serde(default)]
    pub rows_timed: usize,
    pub torch: Option<String>,
    /// pyvkfft's version; None where it is not installed (the FFT peers are then cuFFT alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vkfft: Option<String>,
}

/// What bench/peers.py writes.
#[derive(Deserialize)]
struct PeersOut {
    rows: Vec<PeerRow>,
    #[serde(flatten)]
    info: PeersInfo,
}

/// One peer's median at one case and size.
#[derive(Deserialize)]
struct PeerRow {
    case: String,
    n: u64,
    median_ms: Option<f64>,
    by: Option<String>,
}

/// The suite file at `path`, every case's words read by `words`.
pub fn load(path: &Path, words: &dyn CommandWords) -> Result<Suite> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Io(format!("cannot read '{}': {e}", path.display())))?;
    parse(&path.display().to_string(), &text, words)
}

/// A suite from its TOML text (`name` for errors), every case's words read by `words`.
pub fn parse(name: &str, text: &str, words: &dyn CommandWords) -> Result<Suite> {
    let suite: Suite = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(String::new(), |s| {
            format!(" (line {})", text[..s.start].lines().count().max(1))
        });
        Error::Input(format!("{name}: {}{line}", e.message()))
    })?;
    for c in &suite.cases {
        // Parse every case before any GPU work: a typo fails at once, with the case named.
        // (A request the words make but that fails to resolve is said when the case is verified.)
        let _ = c.run_spec(words, 1 << c.log_n.first().copied().unwrap_or(10), 1)?;
        c.bench(words)?;
        if c.log_n.is_empty() || c.log_n.iter().any(|&k| k > 31) {
            return Err(Error::Input(format!(
                "suite case '{}': log_n must list sizes as log2, 0..=31",
                c.id
            )));
        }
        if let Some(g) = &c.goal
            && !matches!(g.vs.as_str(), "copy" | "peer")
        {
            return Err(Error::Input(format!(
                "suite case '{}': goal.vs must be \"copy\" or \"peer\", not '{}'",
                c.id, g.vs
            )));
        }
    }
    let mut ids: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::Input(format!("suite: case id '{}' twice", w[0])));
    }
    Ok(suite)
}

impl Case {
    fn words(&self, sub: &str, args: &[String]) -> Vec<String> {
        let mut w: Vec<String> = vec!["stagewise".into(), sub.into(), self.algorithm.clone()];
        w.extend(["--variant".into(), self.variant.clone()]);
        w.extend(["--dtype".into(), self.dtype.clone()]);
        w.extend(args.iter().cloned());
        w
    }

    /// `words` (the command, the program's name and its subcommand first) as `read` reads the
    /// words after the subcommand; the error names the case and its words.
    fn parse<T>(
        &self,
        words: Vec<String>,
        read: impl FnOnce(&[String]) -> std::result::Result<T, String>,
    ) -> Result<T> {
        read(&words[2..]).map_err(|e| {
            let e = e.lines().next().unwrap_or("invalid arguments");
            Error::Input(format!(
                "suite case '{}': {} (in: {})",
                self.id,
                e.strip_prefix("error: ").unwrap_or(e),
                words[1..].join(" ")
            ))
        })
    }

    /// The case as `stagewise run … --n N --fill random --seed S`: the request it makes (the
    /// inner error: why it makes none, as `run` says it).
    pub fn run_spec(
        &self,
        words: &dyn CommandWords,
        n: usize,
        seed: u64,
    ) -> Result<Result<RunSpec>> {
        self.parse(self.run_words(n, seed), |a| words.run(a))
    }

    fn run_words(&self, n: usize, seed: u64) -> Vec<String> {
        let mut w = match &self.verify {
            Some(v) => self.words("run", v),
            None => {
                let mut w = self.words("run", &self.args);
                w.extend([
                    "--n".into(),
                    n.to_string(),
                    "--fill".into(),
                    "random".into(),
                ]);
                w
            }
        };
        w.extend(["--seed".into(), seed.to_string()]);
        w
    }

    /// The case as `stagewise bench …`: the algorithm's options (None: none given) and the
    /// element type.
    pub fn bench(
        &self,
        words: &dyn CommandWords,
    ) -> Result<(Option<crate::algo::AlgoOptions>, DType)> {
        self.parse(self.words("bench", &self.args), |a| words.bench(a))
    }
}

/// A seed that differs from run to run (the input is fresh each time), recorded in the result.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// UTC date and time as ISO 8601, from the system clock (days to civil date: H. Hinnant's method).
/// `web_time`'s clock: std's panics in the browser, where the app's tuner dates its wisdom too.
pub fn utc_now() -> String {
    let s = web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, secs) = (s.div_euclid(86_400), s.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Progress lines go to stderr; stdout stays for the caller's JSON.
fn say(s: &str) {
    eprintln!("{s}");
}

/// Verify every case, time it with the same-run copy, run the peers, and return the result.
/// `peers`: the command that runs bench/peers.py (None: no peers).
#[cfg(not(target_arch = "wasm32"))]
pub fn run(
    gpu: &Gpu,
    path: &Path,
    only: &[String],
    peers: Option<&str>,
    command: &str,
    wisdom: Option<&crate::wisdom::Loaded>,
    words: &dyn CommandWords,
) -> Result<SuiteResult> {
    let suite = load(path, words)?;
    if !gpu.has_timestamps() {
        return Err(Error::TimestampsUnavailable);
    }
    let cases: Vec<&Case> = suite
        .cases
        .iter()
        .filter(|c| only.is_empty() || only.iter().any(|o| c.id.contains(o.as_str())))
        .collect();
    if cases.is_empty() {
        return Err(Error::Input(format!(
            "suite: no case id contains any of {only:?}"
        )));
    }
    let mut results = Vec::new();
    let mut used = Vec::new();
    for c in cases {
        let max_n = 1usize << c.log_n.iter().copied().max().unwrap_or(10);
        let vn = max_n.min(suite.defaults.verify_max_n);
        let seed = fresh_seed();
        let spec = c.run_spec(words, vn, seed)?;
        let run_line = c.run_words(vn, seed)[1..].join(" ");
        // The options each size runs with: the case's, filled from wisdom where it has a choice.
        let (base, dtype) = c.bench(words)?;
        let base = base.expect("a suite case names its algorithm");
        let per_size: Vec<(usize, crate::algo::AlgoOptions)> = c
            .log_n
            .iter()
            .map(|&k| {
                let n = 1usize << k;
                let Some(w) = wisdom else {
                    return (n, base.clone());
                };
                let (o, a) = w.apply(&base, &c.variant, dtype, n);
                if !a.is_empty() {
                    say(&format!(
                        "{:<28} 2^{k}: wisdom ({}): {}",
                        c.id,
                        a.from,
                        a.describe()
                    ));
                    used.push(WisdomUse {
                        case: c.id.clone(),
                        log_n: k,
                        from: a.from.clone(),
                        options: a.fields.clone(),
                    });
                }
                (n, o)
            })
            .collect();
        // A case that fails is recorded and the suite goes on: nothing measured is lost. Every
        // distinct choice wisdom makes for the timed sizes is verified, on the verification's own
        // options (its words may differ from the timed ones: an FFT's batch).
        let outcome = spec.and_then(|spec| {
            let run_opts = spec.algo.clone();
            let req = spec.resolve()?;
            let mut sets: Vec<crate::algo::AlgoOptions> = Vec::new();
            for &k in &c.log_n {
                let o = match wisdom {
                    Some(w) => w.apply(&run_opts, &c.variant, req.dtype, 1usize << k).0,
                    None => run_opts.clone(),
                };
                let j = serde_json::to_value(&o).ok();
                if !sets.iter().any(|s| serde_json::to_value(s).ok() == j) {
                    sets.push(o);
                }
            }
            // The first set's run, or the first that differs or fails.
            let mut last = Err(Error::Input(format!("suite: case {} has no sizes", c.id)));
            for o in &sets {
                last = crate::algo::run(o.algo(), gpu, &req);
                if !matches!(&last, Ok(r) if r.verified) {
                    break;
                }
            }
            last
        });
        let verify = match outcome {
            Ok(res) => Verify {
                run: run_line,
                n: res.n,
                seed,
                verified: res.verified,
                mismatch: res.mismatch.clone(),
            },
            Err(e) => Verify {
                run: run_line,
                n: 0,
                seed,
                verified: false,
                mismatch: Some(e.to_string()),
            },
        };
        say(&format!(
            "{:<28} verified at n = {}: {}",
            c.id, verify.n, verify.verified
        ));
        let mut rows = Vec::new();
        let mut error = None;
        if verify.verified {
            let variant = base.algo().info().variant(Some(&c.variant))?;
            let mut timed = Vec::new();
            for (n, o) in per_size {
                let spec = BenchSpec {
                    cases: vec![(o, vec![variant])],
                    sizes: vec![n],
                    reps: c.reps.unwrap_or(suite.defaults.reps),
                    warmup: c.warmup.unwrap_or(suite.defaults.warmup),
                    dtype,
                    skip_refused: false,
                    min_warmup_ms: suite.defaults.min_warmup_ms,
                    roofline: bench::roofline(&Default::default(), wisdom, n).0,
                };
                match pollster::block_on(bench::run(gpu, &spec, &mut |_| {}, &|| false)) {
                    Ok(rows) => timed.extend(rows),
                    Err(e) => {
                        say(&format!("{:<28} not timed: {e}", c.id));
                        error = Some(e.to_string());
                        break;
                    }
                }
            }
            for r in timed {
                let line = format!(
                    "{:<28} 2^{:<2} {:>10.4} ms  {:>7.1} GB/s  ×copy {:.3} {}",
                    c.id,
                    r.n.trailing_zeros(),
                    r.median_ms,
                    r.gbps,
                    r.fraction_of_copy,
                    r.note()
                );
                say(line.trim_end());
                rows.push(Row {
                    floor_ms: r.bytes as f64 / (r.copy_gbps * 1e6),
                    ours: r,
                    peer_ms: None,
                    vs_peer: None,
                    peer_by: None,
                });
            }
        }
        results.push(CaseResult {
            case: c.clone(),
            verify,
            error,
            rows,
        });
    }
    let peer_info = match peers {
        Some(cmd) => Some(run_peers(cmd, path, &mut results)?),
        None => None,
    };
    Ok(SuiteResult {
        suite: path.display().to_string(),
        command: command.to_string(),
        date: utc_now(),
        adapter: gpu.adapter_name(),
        driver: format!("{} {}", gpu.info.driver, gpu.info.driver_info),
        backend: format!("{:?}", gpu.info.backend).to_lowercase(),
        peers: peer_info,
        wisdom: used,
        cases: results,
    })
}

/// Run the peers script over the cases that name a peer; attach its medians to our rows.
fn run_peers(cmd: &str, suite: &Path, results: &mut [CaseResult]) -> Result<PeersInfo> {
    let out = std::env::temp_dir().join(format!("stagewise-peers-{}.json", std::process::id()));
    let ids: Vec<&str> = results.iter().map(|r| r.case.id.as_str()).collect();
    let line = format!(
        "{cmd} --suite '{}' --cases '{}' --json '{}'",
        suite.display(),
        ids.join(","),
        out.display()
    );
    say(&format!("peers: {line}"));
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .stdout(std::process::Stdio::inherit())
        .status()
        .map_err(|e| Error::Io(format!("cannot start the peers ({line}): {e}")))?;
    if !status.success() {
        return Err(Error::Io(format!("the peers failed ({line}): {status}")));
    }
    let text = std::fs::read_to_string(&out)
        .map_err(|e| Error::Io(format!("cannot read the peers' result: {e}")))?;
    let _ = std::fs::remove_file(&out);
    let out: PeersOut = serde_json::from_str(&text).map_err(|e| {
        Error::Io(format!(
            "the peers' result is not what bench/peers.py writes: {e}"
        ))
    })?;
    for r in results.iter_mut() {
        for row in &mut r.rows {
            let found = out
                .rows
                .iter()
                .find(|p| p.case == r.case.id && p.n == row.ours.n);
            if let Some(p) = found
                && let Some(ms) = p.median_ms
            {
                row.peer_ms = Some(ms);
                row.vs_peer = Some(ms / row.ours.median_ms);
                row.peer_by = p.by.clone();
            }
        }
    }
    Ok(PeersInfo {
        rows_timed: out.rows.len(),
        ..out.info
    })
}
