//! What a sampled pass's counts stand for: a site one recorded workgroup alone reaches, the
//! spread between the weighed workgroups (each site's standard error), and the distinct words and
//! sectors (floor and footprint) weighed up from a sample.

use super::analysis::{BufferTraffic, GlobalSite, SECTOR};
use super::record::PassRecord;
use super::sites::{Kind, Space};
use std::collections::HashMap;

/// Sites of a sampled pass that one recorded workgroup alone reached. Such a site is one
/// workgroup's work in the whole grid (the last workgroup to arrive scans the counts, the first
/// tile publishes without looking back): counted once, not weighed up. A finishing workgroup the
/// sample missed leaves its sites out of the report (its work is one workgroup's in the grid).
pub(super) fn reached_by_one(rec: &PassRecord) -> Vec<bool> {
    let n = rec.kernel.sites.len();
    if rec.sample.is_all() {
        return vec![false; n];
    }
    let mut by: Vec<Option<Option<u32>>> = vec![None; n];
    for a in &rec.accesses {
        if let Some(b) = by.get_mut(a.site as usize) {
            *b = match *b {
                None => Some(Some(a.wg)),
                Some(Some(w)) if w == a.wg => Some(Some(w)),
                _ => Some(None),
            };
        }
    }
    by.into_iter()
        .map(|b| matches!(b, Some(Some(w)) if rec.sample.weight_of(w) > 1.0))
        .collect()
}

/// Per site, the unweighed counts of each sampled workgroup that stands for others, to estimate
/// how far a sample's total may be from the grid's: the rest of the grid is sampled one workgroup
/// per block, so the estimate is treated as a random sample whose units `i` of weight `w_i` stand
/// for `w_i` workgroups each: Var(total) ≈ s² Σ w_i (w_i − 1), s² the counts' sample variance.
#[derive(Default)]
pub(super) struct Spread {
    /// (site, workgroup) -> counts.
    counts: HashMap<(u32, u32), [u64; 5]>,
    /// Every weighed workgroup seen in the pass (one that skips a site counts 0 there).
    weights: HashMap<u32, f64>,
}

impl Spread {
    pub(super) fn add(&mut self, site: u32, wg: u32, w: f64, c: [u64; 5]) {
        if w <= 1.0 {
            return;
        }
        self.weights.insert(wg, w);
        let e = self.counts.entry((site, wg)).or_default();
        for (e, c) in e.iter_mut().zip(c) {
            *e += c;
        }
    }

    /// The largest relative standard error among the counts whose totals are `totals`.
    pub(super) fn error(&self, site: u32, totals: [f64; 5]) -> f64 {
        let m = self.weights.len() as f64;
        if m < 2.0 {
            return 0.0;
        }
        let ww: f64 = self.weights.values().map(|w| w * (w - 1.0)).sum();
        (0..5)
            .filter(|&k| totals[k] > 0.0)
            .map(|k| {
                let y = |wg: &u32| self.counts.get(&(site, *wg)).map_or(0.0, |c| c[k] as f64);
                let mean = self.weights.keys().map(y).sum::<f64>() / m;
                let s2 = self
                    .weights
                    .keys()
                    .map(|wg| (y(wg) - mean).powi(2))
                    .sum::<f64>()
                    / (m - 1.0);
                (s2 * ww).sqrt() / totals[k]
            })
            .fold(0.0, f64::max)
    }
}

/// Distinct words and sectors, weighed up from a sample: a word (sector) that one workgroup alone
/// touches stands for as many as that workgroup does; one that several touch is one (a table
/// every workgroup reads is counted once, not once per workgroup). Returns the floor (distinct
/// words read + distinct words written, in bytes), the footprint (distinct sectors, in bytes)
/// and each buffer's traffic.
pub(super) fn footprints(
    rec: &PassRecord,
    global: &[GlobalSite],
) -> (u64, u64, Vec<BufferTraffic>) {
    let sites = &rec.kernel.sites;
    let mut names: Vec<&str> = Vec::new();
    // (buffer << 33 | written << 32 | word, workgroup)
    let mut words: Vec<(u64, u32)> = Vec::new();
    for a in &rec.accesses {
        let Some(s) = sites.get(a.site as usize) else {
            continue;
        };
        if s.space != Space::Global {
            continue;
        }
        let b = match names.iter().position(|&x| x == s.buffer) {
            Some(b) => b,
            None => {
                names.push(&s.buffer);
                names.len() - 1
            }
        } as u64;
        let wr = (s.kind == Kind::Write) as u64;
        for k in 0..s.width {
            let word = a.addr.wrapping_add(k) as u64;
            words.push((b << 33 | wr << 32 | word, a.wg));
        }
    }
    words.sort_unstable();
    words.dedup();
    let weigh = |items: &[(u64, u32)], mut each: Box<dyn FnMut(u64, f64) + '_>| {
        let mut i = 0;
        while i < items.len() {
            let mut j = i + 1;
            while j < items.len() && items[j].0 == items[i].0 {
                j += 1;
            }
            // One workgroup alone: its weight; several: once.
            let w = if j - i == 1 {
                rec.sample.weight_of(items[i].1)
            } else {
                1.0
            };
            each(items[i].0, w);
            i = j;
        }
    };
    // A sample sees a word or sector that several workgroups share (a scatter's target sector)
    // from one of them: no estimate exceeds the span the sample saw, per buffer and kind.
    let span = |items: &[(u64, u32)], key: &dyn Fn(u64) -> u64| {
        let mut out: HashMap<u64, (u64, u64)> = HashMap::new();
        for &(k, _) in items {
            let e = out.entry(key(k)).or_insert((u64::MAX, 0));
            e.0 = e.0.min(k & 0xffff_ffff);
            e.1 = e.1.max(k & 0xffff_ffff);
        }
        out
    };
    let word_span = span(&words, &|k| k >> 32);
    let mut per_kind: HashMap<u64, f64> = HashMap::new();
    weigh(
        &words,
        Box::new(|k, w| *per_kind.entry(k >> 32).or_default() += w),
    );
    let floor: f64 = per_kind
        .iter()
        .map(|(k, &w)| w.min((word_span[k].1 - word_span[k].0 + 1) as f64))
        .sum();
    // Sectors: the same, with both kinds together.
    let mut sectors: Vec<(u64, u32)> = words
        .iter()
        .map(|&(k, wg)| ((k >> 33) << 32 | ((k & 0xffff_ffff) * 4 / SECTOR), wg))
        .collect();
    sectors.sort_unstable();
    sectors.dedup();
    let mut per_buffer = vec![0.0f64; names.len()];
    weigh(
        &sectors,
        Box::new(|k, w| per_buffer[(k >> 32) as usize] += w),
    );
    // From a sample, a buffer's distinct sectors are taken as at least its requested sectors, up
    // to its span: a scatter's target sector takes words from workgroups a structured sample picks
    // together or not at all, which the weighing above would count once for all of them. (Where a
    // buffer is read again and again this over-estimates, up to the span: the prediction uses the
    // footprint only to say whether a buffer stays in L2.)
    for (b, (lo, hi)) in span(&sectors, &|k| k >> 32) {
        let b = b as usize;
        if !rec.sample.is_all() {
            let name = names[b];
            let asked: u64 = global
                .iter()
                .filter(|g| g.buffer == name)
                .map(|g| g.sectors)
                .sum();
            per_buffer[b] = per_buffer[b].max(asked as f64);
        }
        per_buffer[b] = per_buffer[b].min((hi - lo + 1) as f64);
    }
    let buffers = names
        .iter()
        .enumerate()
        .map(|(b, name)| {
            let of = global.iter().filter(|g| g.buffer == *name);
            BufferTraffic {
                buffer: name.to_string(),
                requests: of.clone().map(|g| g.requests).sum(),
                sectors: of.map(|g| g.sectors).sum(),
                footprint_sectors: per_buffer[b].round() as u64,
            }
        })
        .collect::<Vec<_>>();
    let footprint = buffers.iter().map(|b| b.footprint_sectors).sum::<u64>() * SECTOR;
    ((4.0 * floor).round() as u64, footprint, buffers)
}
