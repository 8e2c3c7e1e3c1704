//! A suite result (`stagewise bench --suite … --out R.json`) read for the sort family. The app
//! cannot run PyTorch or CuPy, so the peers come from such a file: the medians of the whole-array
//! sort peers (cupy.sort, torch.sort), the file's own rows of our sorts and its copy roofline, all
//! labelled with the GPU they were measured on.

use crate::algo::Algo;
use crate::suite::SuiteResult;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The peers that sort whole arrays (torch.sort-rows:L sorts segments: another problem).
pub const SORT_PEERS: [&str; 2] = ["cupy.sort", "torch.sort"];

#[derive(Clone, Debug, Serialize)]
pub struct Overlay {
    /// The file's name, for labels.
    pub file: String,
    /// The GPU our rows in the file ran on (the suite's adapter, backend stripped).
    pub adapter: String,
    /// The GPU the peers ran on (bench/peers.py's device; the adapter if the file has none).
    pub peer_device: String,
    pub date: String,
    pub series: Vec<FileSeries>,
    /// The file's copy roofline: (N, GB/s).
    pub copy: Vec<(u64, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FileSeries {
    /// A peer's name ("cupy.sort"), or our case as CLI words ("radix onesweep --values iota").
    pub name: String,
    pub peer: bool,
    pub dtype: String,
    /// (N, median ms), by N.
    pub points: Vec<(u64, f64)>,
}

impl FileSeries {
    pub fn gkeys(n: u64, ms: f64) -> f64 {
        n as f64 / (ms * 1e6)
    }
}

/// Read and parse a suite result (off the UI thread: the caller's).
pub fn load(path: &Path) -> Result<Overlay, String> {
    let r = crate::suite::report::load(path).map_err(|e| e.to_string())?;
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into(),
    );
    from_result(&r, &file)
}

/// A suite result from a file's contents (the browser's file picker hands over bytes).
pub fn parse(name: &str, bytes: &[u8]) -> Result<Overlay, String> {
    let r: SuiteResult =
        serde_json::from_slice(bytes).map_err(|e| format!("{name}: not a suite result ({e})"))?;
    from_result(&r, name)
}

/// The GPU's name without a trailing "(Vulkan)"-style backend.
pub fn gpu_name(s: &str) -> &str {
    match s.rfind(" (") {
        Some(i) if s.ends_with(')') => &s[..i],
        _ => s,
    }
}

/// Whether two adapter names name the same GPU model (names differ in backend suffixes).
pub fn same_gpu(a: &str, b: &str) -> bool {
    let (a, b) = (gpu_name(a).to_lowercase(), gpu_name(b).to_lowercase());
    !a.is_empty() && a == b
}

/// A whole-array sort of ours: radix, or odd-even without `--segment`.
fn whole_array_sort(algorithm: Option<Algo>, args: &[String]) -> bool {
    match algorithm {
        Some(Algo::Radix) => true,
        Some(Algo::Oddeven) => !args.iter().any(|a| a == "--segment"),
        _ => false,
    }
}

pub fn from_result(r: &SuiteResult, file: &str) -> Result<Overlay, String> {
    let adapter = gpu_name(&r.adapter).to_string();
    let peer_device = r
        .peers
        .as_ref()
        .and_then(|p| p.device.clone())
        .unwrap_or_else(|| adapter.clone());
    // (name, dtype) -> N -> times: two cases may time the same peer at the same N (torch.sort
    // beside the Batcher sort and beside the key-value radix sort); the plot shows their mean.
    let mut peers: BTreeMap<(String, String), BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    let mut ours = Vec::new();
    let mut copy = Vec::new();
    for c in &r.cases {
        let k = &c.case;
        let algorithm = k.algorithm.parse::<Algo>().ok();
        if algorithm == Some(Algo::Copy) && k.args.is_empty() {
            copy.extend(c.rows.iter().map(|row| (row.ours.n, row.ours.copy_gbps)));
        }
        if !whole_array_sort(algorithm, &k.args) {
            continue;
        }
        if let Some(p) = k.peer.as_deref().filter(|p| SORT_PEERS.contains(p)) {
            let e = peers.entry((p.to_string(), k.dtype.clone())).or_default();
            for row in &c.rows {
                if let Some(ms) = row.peer_ms.filter(|m| m.is_finite() && *m > 0.0) {
                    e.entry(row.ours.n).or_default().push(ms);
                }
            }
        }
        let pts: Vec<(u64, f64)> = c
            .rows
            .iter()
            .filter(|row| row.ours.median_ms.is_finite() && row.ours.median_ms > 0.0)
            .map(|row| (row.ours.n, row.ours.median_ms))
            .collect();
        if c.verify.verified && !pts.is_empty() {
            let args = k.args.iter().map(|a| format!(" {a}")).collect::<String>();
            ours.push(FileSeries {
                name: format!("{} {}{args}", k.algorithm, k.variant),
                peer: false,
                dtype: k.dtype.clone(),
                points: pts,
            });
        }
    }
    let mut series: Vec<FileSeries> = peers
        .into_iter()
        .filter(|(_, pts)| !pts.is_empty())
        .map(|((name, dtype), pts)| FileSeries {
            name,
            peer: true,
            dtype,
            points: pts
                .into_iter()
                .map(|(n, t)| (n, t.iter().sum::<f64>() / t.len() as f64))
                .collect(),
        })
        .collect();
    if series.is_empty() && ours.is_empty() {
        return Err(format!(
            "{file}: no whole-array sort cases in this suite result (peers {} or our oddeven/radix sorts)",
            SORT_PEERS.join(", ")
        ));
    }
    series.extend(ours);
    copy.sort_by_key(|c| c.0);
    Ok(Overlay {
        file: file.to_string(),
        adapter,
        peer_device,
        date: r.date.clone(),
        series,
        copy,
    })
}

impl Overlay {
    /// The series at one element type.
    pub fn at(&self, dtype: &str) -> impl Iterator<Item = &FileSeries> {
        self.series.iter().filter(move |s| s.dtype == dtype)
    }

    /// The element types the file has sort peers for.
    pub fn peer_dtypes(&self) -> Vec<&str> {
        let mut d: Vec<&str> = self
            .series
            .iter()
            .filter(|s| s.peer)
            .map(|s| s.dtype.as_str())
            .collect();
        d.dedup();
        d.sort();
        d.dedup();
        d
    }

    /// What the overlay is beside a sweep on `adapter`, said plainly: a file's numbers are never a
    /// same-run ratio, and across GPUs not a like-for-like one either.
    pub fn comparison_note(&self, adapter: &str) -> String {
        let here = gpu_name(adapter);
        let on = if self.peer_device == self.adapter {
            format!(
                "peers and our sorts in {} measured on {}",
                self.file, self.adapter
            )
        } else {
            format!(
                "{}: peers measured on {}, our sorts on {}",
                self.file, self.peer_device, self.adapter
            )
        };
        if same_gpu(&self.peer_device, here) && same_gpu(&self.adapter, here) {
            format!(
                "{on} ({}): the GPU model this sweep runs on, but another run — not a same-run ratio.",
                self.date
            )
        } else {
            format!(
                "{on} ({}), NOT on this adapter ({here}): a comparison across GPUs, not a same-run ratio.",
                self.date
            )
        }
    }
}
