//! `stagewise bmmc-stats`: the seed's open question "how likely is rank_m(P) ≤ 5 across all P?"
//! Distributions of rank_m, rank_b and of the pass count per plan over uniformly random bit
//! permutations of n bits: exact by enumerating all n! permutations for n ≤ 10, else sampled; the
//! exact rank distributions (hypergeometric: rank_k counts the k low bits that land among the
//! n − k high ones) are given for every n.

use super::matrix::{Affine, BitMatrix};
use super::plan::{self, Params, SEED_B, SEED_M, cormen_passes, rank_k};
use crate::error::{Error, Result};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde_json::{Value, json};
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
    fn json(&self, total: u64) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|(k, c)| json!({"value": k, "count": c, "fraction": *c as f64 / total as f64}))
                .collect(),
        )
    }
}

/// The statistics as JSON (also what the view's histogram draws).
pub fn stats(n: usize, samples: usize, seed: u64) -> Result<Value> {
    stats_with(n, samples, seed, SEED_M, SEED_B)
}

/// [`stats`] with other Cormen parameters m > b (e.g. to make small-n enumerations meaningful).
pub fn stats_with(n: usize, samples: usize, seed: u64, m: usize, b: usize) -> Result<Value> {
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
            let plu = plan::build("seed-plu", &t, &p)?.passes.len();
            let ulp = plan::build("seed-ulp", &t, &p)?.passes.len();
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
    Ok(json!({
        "n": n,
        "m": m,
        "b": b,
        "method": if exact { "enumeration" } else { "sampling" },
        "permutations": total,
        "seed": if exact { Value::Null } else { json!(seed) },
        "rank_m": rm.json(total),
        "rank_b": rb.json(total),
        "rank_m_exact": pm.iter().map(|(r, q)| json!({"value": r, "probability": q})).collect::<Vec<_>>(),
        "rank_b_exact": pb.iter().map(|(r, q)| json!({"value": r, "probability": q})).collect::<Vec<_>>(),
        "passes": passes.iter().map(|(k, h)| (k.to_string(), h.json(total))).collect::<serde_json::Map<_, _>>(),
        "p_rank_m_le_window": le(&rm, window),
        "p_rank_m_le_window_exact": pm.iter().filter(|(r, _)| **r <= window).map(|(_, q)| q).sum::<f64>(),
        "window": window,
    }))
}

/// The text report.
pub fn text(v: &Value) -> String {
    let mut s = String::new();
    let n = v["n"].as_u64().unwrap_or(0);
    s.push_str(&format!(
        "bmmc-stats: n = {n} index bits, m = {}, b = {}; {} over {} bit permutations\n",
        v["m"],
        v["b"],
        if v["method"] == "enumeration" {
            "exact enumeration"
        } else {
            "random sampling"
        },
        v["permutations"]
    ));
    let hist = |s: &mut String, title: &str, h: &Value, exact: Option<&Value>| {
        s.push_str(&format!("{title}\n"));
        for e in h.as_array().into_iter().flatten() {
            let ex = exact
                .and_then(|x| x.as_array())
                .and_then(|a| a.iter().find(|q| q["value"] == e["value"]))
                .and_then(|q| q["probability"].as_f64());
            s.push_str(&format!(
                "  {:>3}  {:>10}  {:>9.6}{}\n",
                e["value"],
                e["count"],
                e["fraction"].as_f64().unwrap_or(0.0),
                ex.map_or(String::new(), |p| format!("   (exact {p:.6})"))
            ));
        }
    };
    hist(
        &mut s,
        "rank_m  count  fraction",
        &v["rank_m"],
        Some(&v["rank_m_exact"]),
    );
    hist(
        &mut s,
        "rank_b  count  fraction",
        &v["rank_b"],
        Some(&v["rank_b_exact"]),
    );
    for (k, h) in v["passes"].as_object().into_iter().flatten() {
        hist(&mut s, &format!("passes {k}"), h, None);
    }
    s.push_str(&format!(
        "P(rank_m <= m - b = {}) = {:.6} here, {:.6} exact: one Cormen iteration (3 BPC passes)\n",
        v["window"],
        v["p_rank_m_le_window"].as_f64().unwrap_or(0.0),
        v["p_rank_m_le_window_exact"].as_f64().unwrap_or(0.0)
    ));
    s
}
