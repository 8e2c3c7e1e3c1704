//! CPU model of the LSD radix sort, digit by digit: the reference every GPU pass is checked against.
//! Keys are the odd-even room's order-preserving u32 keys ([`key`]), so the total order (f32:
//! -NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN) and `descending` are the same.

pub use crate::algo::oddeven::model::key;
use crate::data::DType;
use serde::{Deserialize, Serialize};

/// The digit of a key (its order-preserving u32 key) at `shift`.
pub fn digit(k: u32, shift: u32, bits: u32) -> u32 {
    (k >> shift) & ((1u32 << bits) - 1)
}

/// Scatter passes: ceil(32 / bits).
pub fn digits(bits: u32) -> u32 {
    32u32.div_ceil(bits)
}

/// Where one digit pass sends the keys, tile by tile: what a traced GPU pass records, what the
/// model predicts, and what a stage's note shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileFlow {
    /// The digit of every key, in the order of the array before the pass.
    pub key_digits: Vec<u32>,
    /// Tile t's count of bucket b at t * R + b.
    pub tile_hist: Vec<u32>,
    /// Where tile t's keys of bucket b start in the output: t * R + b.
    pub tile_offsets: Vec<u32>,
    /// Where every key of the array before the pass goes.
    pub dest: Vec<u32>,
}

/// One scatter pass, as the GPU does it with tiles of `tile` keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigitStep {
    pub digit: u32,
    pub shift: u32,
    pub flow: TileFlow,
    /// The keys and values after the pass.
    pub keys: Vec<u32>,
    pub values: Vec<u32>,
}

impl DigitStep {
    /// The classic variant's scanned counts: bucket-major (b * tiles + t).
    pub fn bucket_major(v: &[u32], radix: usize) -> Vec<u32> {
        let tiles = v.len() / radix;
        (0..radix)
            .flat_map(|b| (0..tiles).map(move |t| v[t * radix + b]))
            .collect()
    }
}

/// Every digit's bucket counts over the whole input (digit d's bucket b at d * R + b).
pub fn digit_counts(dtype: DType, desc: bool, bits: u32, input: &[u32]) -> Vec<u32> {
    let r = 1usize << bits;
    let mut c = vec![0u32; digits(bits) as usize * r];
    for &x in input {
        let k = key(dtype, desc, x);
        for d in 0..digits(bits) {
            c[d as usize * r + digit(k, d * bits, bits) as usize] += 1;
        }
    }
    c
}

/// Exclusive scan of every digit's R counts.
pub fn digit_offsets(counts: &[u32], bits: u32) -> Vec<u32> {
    let r = 1usize << bits;
    counts
        .chunks(r)
        .flat_map(|c| {
            c.iter().scan(0u32, |run, &x| {
                let o = *run;
                *run += x;
                Some(o)
            })
        })
        .collect()
}

/// The whole sort, pass by pass: a stable counting sort per digit, least significant first.
pub fn steps(
    dtype: DType,
    desc: bool,
    bits: u32,
    tile: usize,
    input: &[u32],
    values: &[u32],
) -> Vec<DigitStep> {
    let n = input.len();
    let r = 1usize << bits;
    let tiles = n.div_ceil(tile);
    let mut keys = input.to_vec();
    let mut vals = values.to_vec();
    let mut out = Vec::new();
    for d in 0..digits(bits) {
        let shift = d * bits;
        let dig: Vec<u32> = keys
            .iter()
            .map(|&x| digit(key(dtype, desc, x), shift, bits))
            .collect();
        let mut hist = vec![0u32; tiles * r];
        for (i, &g) in dig.iter().enumerate() {
            hist[(i / tile) * r + g as usize] += 1;
        }
        // Offsets: bucket b of tile t starts after every smaller bucket and bucket b of earlier tiles.
        let mut offs = vec![0u32; tiles * r];
        let mut run = 0u32;
        for b in 0..r {
            for t in 0..tiles {
                offs[t * r + b] = run;
                run += hist[t * r + b];
            }
        }
        let mut next = offs.clone();
        let mut dest = vec![0u32; n];
        for (i, &g) in dig.iter().enumerate() {
            let slot = &mut next[(i / tile) * r + g as usize];
            dest[i] = *slot;
            *slot += 1;
        }
        let mut k2 = vec![0u32; n];
        let mut v2 = vec![0u32; vals.len()];
        for i in 0..n {
            k2[dest[i] as usize] = keys[i];
            if !vals.is_empty() {
                v2[dest[i] as usize] = vals[i];
            }
        }
        keys = k2;
        vals = v2;
        out.push(DigitStep {
            digit: d,
            shift,
            flow: TileFlow {
                key_digits: dig,
                tile_hist: hist,
                tile_offsets: offs,
                dest,
            },
            keys: keys.clone(),
            values: vals.clone(),
        });
    }
    out
}

/// The reference result: a stable sort of (key, value) by key.
pub fn sort(dtype: DType, desc: bool, input: &[u32], values: &[u32]) -> (Vec<u32>, Vec<u32>) {
    // Keys alone: the key is a bijection, so an unstable sort gives the stable sort's bits. With
    // values: (key, position) packed in a u64 sorts stably without an index indirection (a sort
    // through indices took ~35 s at 2^26 keys, this ~2.5 s).
    if values.is_empty() {
        let mut k = input.to_vec();
        k.sort_unstable_by_key(|&b| key(dtype, desc, b));
        return (k, Vec::new());
    }
    let mut p: Vec<u64> = input
        .iter()
        .enumerate()
        .map(|(i, &b)| (key(dtype, desc, b) as u64) << 32 | i as u64)
        .collect();
    p.sort_unstable();
    p.iter()
        .map(|&x| (input[x as u32 as usize], values[x as u32 as usize]))
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_end_in_the_stable_sort() {
        let x: Vec<u32> = (0..1000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 97)
            .collect();
        let v: Vec<u32> = (0..1000).collect();
        for bits in 1..=8 {
            for desc in [false, true] {
                let s = steps(DType::I32, desc, bits, 37, &x, &v);
                let (k, vv) = sort(DType::I32, desc, &x, &v);
                assert_eq!(s.last().unwrap().keys, k);
                assert_eq!(s.last().unwrap().values, vv);
            }
        }
    }
}
