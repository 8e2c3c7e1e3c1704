//! `stagewise bmmc-stats`: the seed's open question "how likely is rank_m(P) ≤ 5 across all P?"
//! Distributions of rank_m, rank_b and of the pass count per plan over uniformly random bit
//! permutations of n bits: exact by enumerating all n! permutations for n ≤ 10, else sampled; the
//! exact rank distributions (hypergeometric: rank_k counts the k low bits that land among the
//! n − k high ones) are given for every n.

use super::Variant;
use super::matrix::{Affine, BitMatrix};
use super::plan::{self, Params, SEED_B, SEED_M, cormen_passes, rank_k};
use crate::error::{Error, Result};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest n enumerated exactly (10! = 3 628 800 permutations).
pub const MAX_ENUM: usize = 10;

fn binom(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |a, i| a * (n - i) as f64 / (i + 1) as f64)
}

/// P(rank_k = r) for a uniformly random permutation of n bits.
pub fn rank_pmf(n: usize, k: usize) -> BTreeMap<usize, f64> {
    let k = k.min(n);
    (0..=k.min(n - k))
        .map(|r| (r, binom(k, r) * binom(n - k, r) / binom(n, k)))
        .collect()
}

#[derive(Default)]
struct Hist(BTreeMap<usize, u64>);

impl Hist {
    fn add(&mut self, v: usize) {
        *self.0.entry(v).or_default() += 1;
    }
    fn bins(&self, total: u64) -> Vec<Bin> {
        self.0
            .iter()
            .map(|(&value, &count)| Bin {
                count,
                fraction: count as f64 / total as f64,
                value,
            })
            .collect()
    }
}

/// What `bmmc-stats` prints (`--json`: this, fields in JSON's sorted order) and the view draws.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stats {
    pub b: usize,
    pub m: usize,
    pub method: Method,
    pub n: usize,
    /// P(rank_m ≤ m − b) among the permutations counted, and by the hypergeometric law.
    pub p_rank_m_le_window: f64,
    pub p_rank_m_le_window_exact: f64,
    /// Pass counts per plan (`seed-plu`, `seed-ulp`, `tiled`, `naive`).
    pub passes: BTreeMap<String, Vec<Bin>>,
    pub permutations: u64,
    pub rank_b: Vec<Bin>,
    pub rank_b_exact: Vec<Exact>,
    pub rank_m: Vec<Bin>,
    pub rank_m_exact: Vec<Exact>,
    /// The sampling's seed (None when enumerated).
    pub seed: Option<u64>,
    /// m − b: one Cormen iteration covers rank_m up to it.
    pub window: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Enumeration,
    Sampling,
}

/// One bar of a histogram.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Bin {
    pub count: u64,
    pub fraction: f64,
    pub value: usize,
}

/// One value of the exact law.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Exact {
    pub probability: f64,
    pub value: usize,
}

impl Stats {
    /// The exact probability of `value` in `law` (rank_m_exact or rank_b_exact).
    pub fn exact(law: &[Exact], value: usize) -> Option<f64> {
        law.iter().find(|q| q.value == value).map(|q| q.probability)
    }
}

/// The statistics (also what the view's histogram draws).
pub fn stats(n: usize, samples: usize, seed: u64) -> Result<Stats> {
    stats_with(n, samples, seed, SEED_M, SEED_B)
}

/// [`stats`] with other Cormen parameters m > b (e.g. to make small-n enumerations meaningful).
pub fn stats_with(n: usize, samples: usize, seed: u64, m: usize, b: usize) -> Result<Stats> {
    if !(2..=32).contains(&n) {
        return Err(Error::Input(format!(
            "bmmc-stats: --n {n} must be 2..=32 (index bits)"
        )));
    }
    if b >= m || m > 16 {
        return Err(Error::Input(format!(
            "bmmc-stats: need b < m <= 16, got m = {m}, b = {b}"
        )));
    }
    let p = Params {
        m,
        b,
        ..Params::default()
    };
    let m = p.m.min(n);
    let b = p.b.min(m.saturating_sub(1));
    let exact = n <= MAX_ENUM;
    if !exact && samples == 0 {
        return Err(Error::input("bmmc-stats: --samples must be at least 1"));
    }
    let (mut rm, mut rb) = (Hist::default(), Hist::default());
    let mut passes: BTreeMap<&str, Hist> = BTreeMap::new();
    let mut total = 0u64;
    let mut record = |perm: &[usize], seed_passes: (usize, usize)| {
        total += 1;
        rm.add(rank_k(perm, m));
        rb.add(rank_k(perm, b));
        passes.entry("seed-plu").or_default().add(seed_passes.0);
        passes.entry("seed-ulp").or_default().add(seed_passes.1);
        passes.entry("tiled").or_default().add(1);
        passes.entry("naive").or_default().add(1);
    };
    if exact {
        // Heap's algorithm over all n! permutations. For a BPC, both seed plans are exactly
        // Cormen's alternation on P (L = U = I), so the count comes from the ranks.
        let mut perm: Vec<usize> = (0..n).collect();
        let mut c = vec![0usize; n];
        let k = cormen_passes(&perm, p.m, p.b);
        record(&perm, (k, k));
        let mut i = 0;
        while i < n {
            if c[i] < i {
                if i % 2 == 0 {
                    perm.swap(0, i);
                } else {
                    perm.swap(c[i], i);
                }
                let k = cormen_passes(&perm, p.m, p.b);
                record(&perm, (k, k));
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
    } else {
        // Sampling: the real plans are built, so the counts are the plans' own.
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut perm: Vec<usize> = (0..n).collect();
        for _ in 0..samples {
            perm.shuffle(&mut rng);
            let t = Affine {
                a: BitMatrix::from_bit_perm(&perm),
                c: 0,
            };
            let plu = plan::build(Variant::SeedPlu, &t, &p)?.passes.len();
            let ulp = plan::build(Variant::SeedUlp, &t, &p)?.passes.len();
            record(&perm, (plu, ulp));
        }
    }
    let pm = rank_pmf(n, m);
    let pb = rank_pmf(n, b);
    let le = |h: &Hist, lim: usize| {
        h.0.iter()
            .filter(|(k, _)| **k <= lim)
            .map(|(_, c)| *c)
            .sum::<u64>() as f64
            / total as f64
    };
    let window = m - b.min(m);
    let law = |pmf: &BTreeMap<usize, f64>| -> Vec<Exact> {
        pmf.iter()
            .map(|(&value, &probability)| Exact { probability, value })
            .collect()
    };
    Ok(Stats {
        b,
        m,
        method: if exact {
            Method::Enumeration
        } else {
            Method::Sampling
        },
        n,
        p_rank_m_le_window: le(&rm, window),
        p_rank_m_le_window_exact: pm
            .iter()
            .filter(|(r, _)| **r <= window)
            .map(|(_, q)| q)
            .sum(),
        passes: passes
            .iter()
            .map(|(k, h)| (k.to_string(), h.bins(total)))
            .collect(),
        permutations: total,
        rank_b: rb.bins(total),
        rank_b_exact: law(&pb),
        rank_m: rm.bins(total),
        rank_m_exact: law(&pm),
        seed: (!exact).then_some(seed),
        window,
    })
}

/// The text report.
pub fn text(v: &Stats) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "bmmc-stats: n = {} index bits, m = {}, b = {}; {} over {} bit permutations\n",
        v.n,
        v.m,
        v.b,
        match v.method {
            Method::Enumeration => "exact enumeration",
            Method::Sampling => "random sampling",
        },
        v.permutations
    ));
    let hist = |s: &mut String, title: &str, h: &[Bin], exact: Option<&[Exact]>| {
        s.push_str(&format!("{title}\n"));
        for e in h {
            let ex = exact.and_then(|law| Stats::exact(law, e.value));
            s.push_str(&format!(
                "  {:>3}  {:>10}  {:>9.6}{}\n",
                e.value,
                e.count,
                e.fraction,
                ex.map_or(String::new(), |p| format!("   (exact {p:.6})"))
            ));
        }
    };
    hist(
        &mut s,
        "rank_m  count  fraction",
        &v.rank_m,
        Some(&v.rank_m_exact),
    );
    hist(
        &mut s,
        "rank_b  count  fraction",
        &v.rank_b,
        Some(&v.rank_b_exact),
    );
    for (k, h) in &v.passes {
        hist(&mut s, &format!("passes {k}"), h, None);
    }
    s.push_str(&format!(
        "P(rank_m <= m - b = {}) = {:.6} here, {:.6} exact: one Cormen iteration (3 BPC passes)\n",
        v.window, v.p_rank_m_le_window, v.p_rank_m_le_window_exact
    ));
    s
}
