//! Wisdom: defaults measured on the user's GPU. `stagewise tune` searches each room's declared
//! parameters ([`crate::algo::tune`]), verifying every candidate before timing it, and writes one
//! JSON file per adapter and driver into the data directory. Front ends read it at start and fill
//! the options the user left unset; an option given explicitly always wins. Files shipped in
//! assets/wisdom/ stand in where an adapter matches and nothing was measured locally.
//!
//! A file that cannot be read, is from another version, or names another adapter gives one
//! warning and the built-in defaults: wisdom never stops a run.

pub mod kernel;
pub mod kernel_tune;
pub mod search;

use crate::algo::AlgoOptions;
use crate::data::DType;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The file format's version; a file of another version is ignored with a warning.
pub const VERSION: u32 = 1;

/// Measured files shipped with Stagewise, used when their adapter matches and no local file exists.
const SHIPPED: &[(&str, &str)] = &[(
    "assets/wisdom/nvidia-h200.json",
    include_str!("../../assets/wisdom/nvidia-h200.json"),
)];

/// Which adapter and driver a file was measured on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterId {
    pub name: String,
    pub vendor: u32,
    pub device: u32,
    pub backend: String,
    pub driver: String,
    pub driver_info: String,
}

impl AdapterId {
    pub fn of(gpu: &Gpu) -> AdapterId {
        let i = &gpu.info;
        AdapterId {
            name: i.name.clone(),
            vendor: i.vendor,
            device: i.device,
            backend: format!("{:?}", i.backend).to_lowercase(),
            driver: i.driver.clone(),
            driver_info: i.driver_info.clone(),
        }
    }

    /// The same GPU model on the same backend (a driver update may move the best choice, but
    /// every choice is still checked against the adapter's limits when it runs).
    pub fn same_gpu(&self, other: &AdapterId) -> bool {
        self.name == other.name
            && self.vendor == other.vendor
            && self.device == other.device
            && self.backend == other.backend
    }

    /// A file name for this adapter and driver: lowercase words joined by dashes.
    pub fn slug(&self) -> String {
        let s = format!("{} {} {}", self.name, self.backend, self.driver_info);
        let mut out = String::new();
        for c in s.chars() {
            if c.is_ascii_alphanumeric() {
                out.push(c.to_ascii_lowercase());
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        out.trim_matches('-').to_string()
    }
}

/// The adapter's limits when the file was measured (a choice they no longer allow is skipped).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSeen {
    pub max_invocations_per_workgroup: u32,
    pub max_workgroup_storage_bytes: u32,
    pub max_storage_binding_bytes: u64,
}

/// One tuned case: what it is, the choice, and what it was measured against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The case's name (the suite's id).
    pub case: String,
    pub algorithm: String,
    pub variant: String,
    pub dtype: DType,
    /// log2 of the size it was timed at (elements; an FFT's complex values).
    pub log_n: u32,
    /// The options the case is keyed by (e.g. an FFT's size): a run uses this entry only where
    /// they are equal.
    #[serde(default)]
    pub key: Map<String, Value>,
    /// The options chosen; empty: nothing beat the built-in default beyond noise.
    pub choice: Map<String, Value>,
    /// Median ms of the choice and of the built-in default, in the same tuning run.
    pub ms: f64,
    pub default_ms: f64,
    /// The second-best verified candidate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<Tried>,
    /// Candidates verified and timed, and those refused (limits) or wrong (failed verification).
    pub timed: usize,
    pub refused: usize,
    pub wrong: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tried {
    pub choice: Map<String, Value>,
    pub ms: f64,
}

/// A wisdom file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wisdom {
    pub version: u32,
    pub adapter: AdapterId,
    pub limits: LimitsSeen,
    /// When it was measured (UTC).
    pub date: String,
    pub entries: Vec<Entry>,
}

/// Where a run's wisdom came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub wisdom: Wisdom,
    /// The file (a shipped file: its path in the source tree).
    pub from: String,
}

/// Options a run took from wisdom: the fields and values, and the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    pub fields: Map<String, Value>,
    pub from: String,
    pub case: String,
    /// The size of the entry taken (the nearest to the run's); none for a kernel's wisdom.
    pub log_n: Option<u32>,
}

impl Applied {
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// `tile_bits=11 sequential_ffts=4`.
    pub fn describe(&self) -> String {
        self.fields
            .iter()
            .map(|(k, v)| format!("{k}={}", plain(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// For a run's JSON: {"from": FILE, "case": ID, "log_n": K (an algorithm's), "options": {…}}.
    pub fn to_json(&self) -> Value {
        let mut v =
            serde_json::json!({"from": self.from, "case": self.case, "options": self.fields});
        if let Some(k) = self.log_n {
            v["log_n"] = k.into();
        }
        v
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

impl Wisdom {
    /// An empty file for `gpu`, dated `date` (UTC, ISO 8601).
    pub fn new(gpu: &Gpu, date: String) -> Wisdom {
        let l = &gpu.limits;
        Wisdom {
            version: VERSION,
            adapter: AdapterId::of(gpu),
            limits: LimitsSeen {
                max_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
                max_workgroup_storage_bytes: l.max_compute_workgroup_storage_size,
                max_storage_binding_bytes: l.max_storage_buffer_binding_size,
            },
            date,
            entries: Vec::new(),
        }
    }

    /// Parse a file's text (`name` for errors: line and column of what is wrong).
    pub fn parse(name: &str, text: &str) -> Result<Wisdom> {
        let w: Wisdom = serde_json::from_str(text).map_err(|e| {
            Error::Input(format!(
                "wisdom '{name}': line {} column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        if w.version != VERSION {
            return Err(Error::Input(format!(
                "wisdom '{name}': version {} (this Stagewise reads {VERSION})",
                w.version
            )));
        }
        Ok(w)
    }

    pub fn read(path: &Path) -> Result<Wisdom> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Io(format!("wisdom '{}': {e}", path.display())))?;
        Wisdom::parse(&path.display().to_string(), &text)
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::Io(format!("wisdom: {}: {e}", d.display())))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Io(e.to_string()))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::Io(format!("wisdom '{}': {e}", path.display())))
    }

    /// Add or replace the entry of the same case and size: a round at another `--n` adds its
    /// entry beside it, and a run takes the nearest size's ([`Wisdom::entry_for`]).
    pub fn put(&mut self, e: Entry) {
        self.entries
            .retain(|o| o.case != e.case || o.log_n != e.log_n);
        self.entries.push(e);
    }

    /// The entry for a run of `algo`/`variant`/`dtype` at `n` elements: same algorithm, variant,
    /// type and key options, the nearest size.
    pub fn entry_for(
        &self,
        algo: &AlgoOptions,
        variant: &str,
        dtype: DType,
        n: usize,
    ) -> Option<&Entry> {
        let name = algo.algo().info().name;
        // An algorithm with its own element type (the FFT's f32) ignores the one asked for.
        let dtype = algo.algo().fixed_dtype().unwrap_or(dtype);
        let fields = algo.fields();
        let log_n = usize::BITS - n.max(1).leading_zeros() - 1;
        self.entries
            .iter()
            .filter(|e| e.algorithm == name && e.variant == variant && e.dtype == dtype)
            .filter(|e| e.key.iter().all(|(k, v)| fields.get(k) == Some(v)))
            // Halfway between two sizes, the larger's (the size `tune` times by default).
            .min_by_key(|e| (e.log_n.abs_diff(log_n), std::cmp::Reverse(e.log_n)))
    }
}

/// The data directory's wisdom folder: `$XDG_DATA_HOME/stagewise/wisdom`, else
/// `~/.local/share/stagewise/wisdom`.
pub fn dir() -> PathBuf {
    crate::data_dir().join("wisdom")
}

/// This adapter's local file (it may not exist yet).
pub fn local_path(gpu: &Gpu) -> PathBuf {
    dir().join(format!("{}.json", AdapterId::of(gpu).slug()))
}

/// Which wisdom a front end uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Source {
    /// The local file for this adapter, else a shipped one that matches.
    #[default]
    Auto,
    /// None: the built-in defaults.
    Off,
    /// This file (it must match the adapter).
    File(PathBuf),
}

impl Source {
    /// What `STAGEWISE_WISDOM` asks for: `off`, a file, or (unset or empty) [`Source::Auto`]. The
    /// CLI's `--wisdom FILE` and `--no-wisdom` take precedence over it; the app reads it at start.
    pub fn from_env() -> Source {
        match std::env::var_os("STAGEWISE_WISDOM") {
            Some(v) if v == "off" => Source::Off,
            Some(v) if !v.is_empty() => Source::File(v.into()),
            _ => Source::Auto,
        }
    }
}

/// Where a loaded wisdom came from, in one word: this adapter's file in the data directory
/// (`stagewise tune`, Help ▸ Tune this GPU…), a file shipped with Stagewise, or another file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Local,
    Shipped,
    File,
}

impl Loaded {
    pub fn origin(&self, gpu: &Gpu) -> Origin {
        if SHIPPED.iter().any(|(name, _)| *name == self.from) {
            Origin::Shipped
        } else if cfg!(not(target_arch = "wasm32"))
            && Path::new(&self.from) == local_path(gpu).as_path()
        {
            Origin::Local
        } else {
            Origin::File
        }
    }
}

/// A choice as a line: `tile_bits=11 tile_threads=128`, or "(built-in default)" when empty.
pub fn describe_choice(c: &Map<String, Value>) -> String {
    if c.is_empty() {
        return "(built-in default)".into();
    }
    Applied {
        fields: c.clone(),
        ..Default::default()
    }
    .describe()
}

impl Entry {
    /// The built-in default's time over the choice's (1: nothing beat the default).
    pub fn speedup(&self) -> f64 {
        if self.ms > 0.0 {
            self.default_ms / self.ms
        } else {
            1.0
        }
    }
}

/// The file a tuning round adds its entries to at `path`: the one there when it is `gpu`'s (the
/// cases not tuned this time keep what was measured before), else a new one, with a warning
/// line when a file that cannot be read or names another adapter is about to be replaced.
pub fn to_update(gpu: &Gpu, path: &Path, date: String) -> (Wisdom, Option<String>) {
    match Wisdom::read(path) {
        Ok(w) if w.adapter.same_gpu(&AdapterId::of(gpu)) => (w, None),
        Ok(_) | Err(_) if path.exists() => (
            Wisdom::new(gpu, date),
            Some(format!(
                "warning: '{}' is not this GPU's wisdom or cannot be read; it is replaced",
                path.display()
            )),
        ),
        _ => (Wisdom::new(gpu, date), None),
    }
}

impl Wisdom {
    /// A tuning round's entries added (each replacing the entry of its case), dated `date`.
    pub fn merge(&mut self, entries: &[Entry], date: String) {
        self.date = date;
        for e in entries {
            self.put(e.clone());
        }
    }
}

/// Add a tuning round's `entries` to the file at `path` ([`to_update`]) and write it: the file as
/// written, and the warning line when another file was replaced. `stagewise tune` and the app's
/// Help ▸ Tune this GPU… keep their rounds alike.
pub fn record(gpu: &Gpu, path: &Path, entries: &[Entry]) -> Result<(Wisdom, Option<String>)> {
    let (mut w, warning) = to_update(gpu, path, crate::suite::utc_now());
    w.merge(entries, crate::suite::utc_now());
    w.write(path)?;
    Ok((w, warning))
}

/// Delete this adapter's local file: its path, or `None` when there was none (shipped files
/// stay: they are part of Stagewise).
pub fn forget(gpu: &Gpu) -> Result<Option<PathBuf>> {
    let path = local_path(gpu);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(Some(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io(format!("{}: {e}", path.display()))),
    }
}

/// The wisdom for `gpu` from `source`, and a warning line for anything that could not be used
/// (a corrupt file, another adapter's): never an error, the built-in defaults stand in.
pub fn load(gpu: &Gpu, source: &Source) -> (Option<Loaded>, Option<String>) {
    let me = AdapterId::of(gpu);
    let check = |w: Wisdom, from: String| -> (Option<Loaded>, Option<String>) {
        if w.adapter.same_gpu(&me) {
            (Some(Loaded { wisdom: w, from }), None)
        } else {
            let warn = format!(
                "warning: wisdom '{from}' was measured on {} ({}), not this {} ({}); using the built-in defaults",
                w.adapter.name, w.adapter.backend, me.name, me.backend
            );
            (None, Some(warn))
        }
    };
    let warn = |e: Error| {
        (
            None,
            Some(format!("warning: {e}; using the built-in defaults")),
        )
    };
    match source {
        Source::Off => (None, None),
        Source::File(p) => match Wisdom::read(p) {
            Ok(w) => check(w, p.display().to_string()),
            Err(e) => warn(e),
        },
        Source::Auto => {
            // The browser has no data directory (std's would panic there): shipped files only.
            #[cfg(not(target_arch = "wasm32"))]
            {
                let p = local_path(gpu);
                if p.exists() {
                    return match Wisdom::read(&p) {
                        Ok(w) => check(w, p.display().to_string()),
                        Err(e) => warn(e),
                    };
                }
            }
            for (name, text) in SHIPPED {
                if let Ok(w) = Wisdom::parse(name, text)
                    && w.adapter.same_gpu(&me)
                {
                    return (
                        Some(Loaded {
                            wisdom: w,
                            from: (*name).to_string(),
                        }),
                        None,
                    );
                }
            }
            (None, None)
        }
    }
}

impl Loaded {
    /// `algo` with this wisdom's choice for the run filled into its unset options, and what was
    /// filled (empty: no entry, or every field was given).
    pub fn apply(
        &self,
        algo: &AlgoOptions,
        variant: &str,
        dtype: DType,
        n: usize,
    ) -> (AlgoOptions, Applied) {
        let Some(e) = self.wisdom.entry_for(algo, variant, dtype, n) else {
            return (algo.clone(), Applied::default());
        };
        match algo.with_choice(&e.choice, false) {
            Ok((o, set)) => {
                let fields = set
                    .into_iter()
                    .filter_map(|k| e.choice.get(&k).map(|v| (k, v.clone())))
                    .collect();
                (
                    o,
                    Applied {
                        fields,
                        from: self.from.clone(),
                        case: e.case.clone(),
                        log_n: Some(e.log_n),
                    },
                )
            }
            Err(_) => (algo.clone(), Applied::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> AdapterId {
        AdapterId {
            name: name.into(),
            vendor: 0x10de,
            device: 0x2335,
            backend: "vulkan".into(),
            driver: "NVIDIA".into(),
            driver_info: "580.95.05".into(),
        }
    }

    fn entry(case: &str, log_n: u32, size: Option<usize>, choice: Value) -> Entry {
        let mut key = Map::new();
        if let Some(s) = size {
            key.insert("size".into(), s.into());
        }
        Entry {
            case: case.into(),
            algorithm: if size.is_some() { "fft" } else { "bmmc" }.into(),
            variant: if size.is_some() { "workgroup" } else { "tiled" }.into(),
            dtype: if size.is_some() {
                DType::F32
            } else {
                DType::U32
            },
            log_n,
            key,
            choice: choice.as_object().unwrap().clone(),
            ms: 1.0,
            default_ms: 1.1,
            runner_up: None,
            timed: 4,
            refused: 0,
            wrong: 0,
        }
    }

    fn loaded() -> Loaded {
        let w = Wisdom {
            version: VERSION,
            adapter: id("NVIDIA H200"),
            limits: LimitsSeen {
                max_invocations_per_workgroup: 1024,
                max_workgroup_storage_bytes: 49152,
                max_storage_binding_bytes: 1 << 31,
            },
            date: "2026-11-29T00:00:00Z".into(),
            entries: vec![
                entry("bmmc-24", 24, None, serde_json::json!({"tile_bits": 11})),
                entry("bmmc-28", 28, None, serde_json::json!({"tile_bits": 13})),
                entry(
                    "fft-256",
                    27,
                    Some(256),
                    serde_json::json!({"ffts_per_workgroup": 1}),
                ),
            ],
        };
        Loaded {
            wisdom: w,
            from: "test.json".into(),
        }
    }

    #[test]
    fn a_file_reads_back_what_was_written() {
        let l = loaded();
        let text = serde_json::to_string_pretty(&l.wisdom).unwrap();
        assert_eq!(Wisdom::parse("t", &text).unwrap(), l.wisdom);
        let bad = text.replace("\"version\": 1", "\"version\": 9");
        let e = Wisdom::parse("t", &bad).unwrap_err().to_string();
        assert!(e.contains("version 9"), "{e}");
        let e = Wisdom::parse("t", &text[..text.len() / 2])
            .unwrap_err()
            .to_string();
        assert!(e.contains("line"), "{e}");
    }

    #[test]
    fn the_nearest_size_and_equal_keys_decide() {
        let l = loaded();
        let bmmc = AlgoOptions::Bmmc(Default::default());
        let (o, a) = l.apply(&bmmc, "tiled", DType::U32, 1 << 27);
        assert_eq!(a.describe(), "tile_bits=13");
        let AlgoOptions::Bmmc(b) = o else { panic!() };
        assert_eq!(b.tile_bits, Some(13));
        let (_, a) = l.apply(&bmmc, "tiled", DType::U32, 1 << 20);
        assert_eq!(a.describe(), "tile_bits=11");
        // Given by the user: wisdom leaves it.
        let mine = AlgoOptions::Bmmc(crate::algo::bmmc::Options {
            tile_bits: Some(10),
            ..Default::default()
        });
        let (o, a) = l.apply(&mine, "tiled", DType::U32, 1 << 28);
        assert!(a.is_empty());
        let AlgoOptions::Bmmc(b) = o else { panic!() };
        assert_eq!(b.tile_bits, Some(10));
        // Another variant, type or FFT size: nothing.
        assert!(l.apply(&bmmc, "naive", DType::U32, 1 << 28).1.is_empty());
        assert!(l.apply(&bmmc, "tiled", DType::F32, 1 << 28).1.is_empty());
        let fft = |size| {
            AlgoOptions::Fft(crate::algo::fft::Options {
                size: Some(size),
                ..Default::default()
            })
        };
        let a = l.apply(&fft(256), "workgroup", DType::F32, 1 << 27).1;
        assert_eq!(a.describe(), "ffts_per_workgroup=1");
        // `bench fft` leaves --dtype at u32: the FFT's own f32 decides.
        let a = l.apply(&fft(256), "workgroup", DType::U32, 1 << 27).1;
        assert_eq!(a.describe(), "ffts_per_workgroup=1");
        assert!(
            l.apply(&fft(1024), "workgroup", DType::F32, 1 << 27)
                .1
                .is_empty()
        );
    }

    #[test]
    fn a_round_at_another_size_keeps_the_first() {
        let mut l = loaded();
        let bmmc = AlgoOptions::Bmmc(Default::default());
        // bmmc-24 tuned at 2^20 joins its 2^24 entry; bmmc-28 tuned at 2^28 again replaces its.
        l.wisdom.merge(
            &[entry(
                "bmmc-24",
                20,
                None,
                serde_json::json!({"tile_bits": 10}),
            )],
            "d1".into(),
        );
        l.wisdom.merge(
            &[entry(
                "bmmc-28",
                28,
                None,
                serde_json::json!({"tile_bits": 12}),
            )],
            "d2".into(),
        );
        assert_eq!(l.wisdom.entries.len(), 4);
        assert_eq!(l.wisdom.date, "d2");
        for (n, want) in [(19, "10"), (21, "10"), (23, "11"), (26, "12"), (28, "12")] {
            let (_, a) = l.apply(&bmmc, "tiled", DType::U32, 1 << n);
            assert_eq!(a.describe(), format!("tile_bits={want}"), "2^{n}");
        }
    }

    #[test]
    fn a_slug_is_a_plain_file_name() {
        assert_eq!(id("NVIDIA H200").slug(), "nvidia-h200-vulkan-580-95-05");
    }

    #[test]
    fn the_shipped_files_parse() {
        for (name, text) in SHIPPED {
            let w = Wisdom::parse(name, text).unwrap();
            assert!(!w.entries.is_empty(), "{name}");
        }
    }
}
