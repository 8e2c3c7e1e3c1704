//! Kernel wisdom: the override values `tune kernel --save` (or the app's *Save as this file's
//! wisdom*) chose for a workbench kernel, per adapter, keyed by the kernel text's content hash: the
//! same text on the same GPU takes the choice wherever it lies; any edit is another kernel (its
//! overrides may mean something else now). `run kernel` and `bench kernel` fill the overrides not
//! given on the command line from it and say so, as rooms do with their wisdom.
//!
//! The file is `wisdom/kernels/<adapter slug>.json` in the data directory, beside the rooms'
//! wisdom and not inside it: a file holding only kernel choices must never stand in for a shipped
//! room wisdom of the same adapter (a local room file shadows the shipped one). `--no-wisdom` and
//! `STAGEWISE_WISDOM=off` leave it unread; `--wisdom FILE` names the rooms' file only.

use super::{AdapterId, Applied, Source, plain};
use crate::algo::kernel;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The file format's version; another version is ignored with a warning.
pub const VERSION: u32 = 1;

/// One tuned kernel: its text's hash, and the override values chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelEntry {
    /// [`content_hash`] of the kernel's text.
    pub hash: String,
    /// The file's name when it was tuned (for people; the hash decides).
    pub file: String,
    /// The op it was verified against.
    pub expect: Option<String>,
    /// Elements it was timed at.
    pub n: usize,
    /// Override name → value (a number or a bool), as `--override` would give it.
    pub choice: Map<String, Value>,
    /// Median ms of the choice, beside the same-run copy's.
    pub ms: f64,
    pub copy_ms: f64,
    /// When (UTC).
    pub date: String,
}

/// A kernel wisdom file: one adapter's tuned kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelWisdom {
    pub version: u32,
    pub adapter: AdapterId,
    pub entries: Vec<KernelEntry>,
}

/// FNV-1a (64 bits) of the text's bytes, as `fnv1a64:` and 16 hex digits: stable across builds
/// and platforms (std's hasher is not promised to be), and no dependency for a cache key.
pub fn content_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// This adapter's kernel wisdom file (it may not exist yet).
pub fn path(gpu: &Gpu) -> PathBuf {
    super::dir()
        .join("kernels")
        .join(format!("{}.json", AdapterId::of(gpu).slug()))
}

impl KernelWisdom {
    pub fn read(path: &Path) -> Result<KernelWisdom> {
        let name = path.display();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Io(format!("kernel wisdom '{name}': {e}")))?;
        let w: KernelWisdom = serde_json::from_str(&text).map_err(|e| {
            Error::Input(format!(
                "kernel wisdom '{name}': line {} column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        if w.version != VERSION {
            return Err(Error::Input(format!(
                "kernel wisdom '{name}': version {} (this Stagewise reads {VERSION})",
                w.version
            )));
        }
        Ok(w)
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::Io(format!("kernel wisdom: {}: {e}", d.display())))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Io(e.to_string()))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::Io(format!("kernel wisdom '{}': {e}", path.display())))
    }

    pub fn entry(&self, hash: &str) -> Option<&KernelEntry> {
        self.entries.iter().find(|e| e.hash == hash)
    }
}

/// Add (or replace: same hash) `e` in this adapter's file; returns the file.
pub fn save(gpu: &Gpu, e: KernelEntry) -> Result<PathBuf> {
    save_to(&path(gpu), gpu, e)
}

/// [`save`] into the file `p` (the app's tests keep their own).
pub fn save_to(p: &Path, gpu: &Gpu, e: KernelEntry) -> Result<PathBuf> {
    let me = AdapterId::of(gpu);
    // A file of another GPU or version, or a broken one, is replaced: it was of no use here.
    let mut w = match KernelWisdom::read(p) {
        Ok(w) if w.adapter.same_gpu(&me) => w,
        _ => KernelWisdom {
            version: VERSION,
            adapter: me,
            entries: Vec::new(),
        },
    };
    w.entries.retain(|o| o.hash != e.hash);
    w.entries.push(e);
    w.write(p)?;
    Ok(p.to_path_buf())
}

/// `opts` with this adapter's choice for its kernel's text filled into the overrides not given
/// (`--override` wins), what was filled, and a warning line for a file that could not be used.
/// Nothing is read with `source` off.
pub fn apply(
    gpu: &Gpu,
    source: &Source,
    opts: &kernel::Options,
) -> (kernel::Options, Applied, Option<String>) {
    apply_from(&path(gpu), gpu, source, opts)
}

/// [`apply`] from the file `p` (the app's tests keep their own).
pub fn apply_from(
    p: &Path,
    gpu: &Gpu,
    source: &Source,
    opts: &kernel::Options,
) -> (kernel::Options, Applied, Option<String>) {
    let none = (opts.clone(), Applied::default(), None);
    if *source == Source::Off {
        return none;
    }
    if !p.exists() {
        return none;
    }
    let w = match KernelWisdom::read(p) {
        Ok(w) if w.adapter.same_gpu(&AdapterId::of(gpu)) => w,
        Ok(w) => {
            let warn = format!(
                "warning: kernel wisdom '{}' was measured on {}, not this {}; not used",
                p.display(),
                w.adapter.name,
                gpu.info.name
            );
            return (opts.clone(), Applied::default(), Some(warn));
        }
        Err(e) => {
            return (
                opts.clone(),
                Applied::default(),
                Some(format!("warning: {e}; not used")),
            );
        }
    };
    // An unreadable kernel is the run's error to report, not wisdom's.
    let Ok((_, text)) = opts.kernel_text() else {
        return none;
    };
    let hash = content_hash(&text);
    let Some(e) = w.entry(&hash) else {
        return none;
    };
    let given = |name: &str| {
        opts.overrides
            .iter()
            .any(|g| g.split_once('=').is_some_and(|(k, _)| k.trim() == name))
    };
    let mut o = opts.clone();
    let mut fields = Map::new();
    for (k, v) in &e.choice {
        if !given(k) {
            o.overrides.push(format!("{k}={}", plain(v)));
            fields.insert(k.clone(), v.clone());
        }
    }
    if fields.is_empty() {
        return none;
    }
    let applied = Applied {
        fields,
        from: p.display().to_string(),
        case: format!("kernel {hash}"),
        log_n: None,
    };
    (o, applied, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_hash_is_fnv1a() {
        // FNV-1a's published test vectors.
        assert_eq!(content_hash(""), "fnv1a64:cbf29ce484222325");
        assert_eq!(content_hash("a"), "fnv1a64:af63dc4c8601ec8c");
        assert_ne!(content_hash("x\n"), content_hash("x"));
    }
}
