//! The bit-matrix model: n×n matrices over GF(2) (n ≤ 32), as rows of bits.
//!
//! Convention: `rows[i]` bit `j` is the entry (i, j): output bit i depends on input bit j
//! (bit 0 the least significant). An index x moves to y = A·x ⊕ c. Text form: rows separated by
//! `;` (or newlines), row i = output bit i, its j-th character from the left = input bit j.

use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};

/// An n×n matrix over GF(2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BitMatrix {
    pub n: usize,
    /// `rows[i]` bit j = entry (i, j).
    pub rows: Vec<u32>,
}

fn mask(n: usize) -> u32 {
    if n >= 32 { u32::MAX } else { (1u32 << n) - 1 }
}

fn parity(x: u32) -> u32 {
    x.count_ones() & 1
}

/// Gaussian elimination's pivot for column `col`: the first of rows `col..n` with bit `col` set
/// (one exists: the matrix is invertible).
fn pivot(rows: &[u32], col: usize, n: usize) -> usize {
    (col..n)
        .find(|&r| rows[r] >> col & 1 == 1)
        .expect("invertible")
}

impl BitMatrix {
    pub fn identity(n: usize) -> BitMatrix {
        BitMatrix {
            n,
            rows: (0..n).map(|i| 1u32 << i).collect(),
        }
    }

    pub fn zero(n: usize) -> BitMatrix {
        BitMatrix {
            n,
            rows: vec![0; n],
        }
    }

    /// The matrix with the given columns (column j = image of input bit j).
    pub fn from_cols(cols: &[u32]) -> BitMatrix {
        let n = cols.len();
        let mut m = BitMatrix::zero(n);
        for (j, &c) in cols.iter().enumerate() {
            for i in 0..n {
                if c >> i & 1 == 1 {
                    m.rows[i] |= 1 << j;
                }
            }
        }
        m
    }

    /// The bit permutation that sends input bit j to output bit `perm[j]`.
    pub fn from_bit_perm(perm: &[usize]) -> BitMatrix {
        BitMatrix::from_cols(&perm.iter().map(|&p| 1u32 << p).collect::<Vec<_>>())
    }

    pub fn get(&self, i: usize, j: usize) -> bool {
        self.rows[i] >> j & 1 == 1
    }

    pub fn set(&mut self, i: usize, j: usize, v: bool) {
        if v {
            self.rows[i] |= 1 << j;
        } else {
            self.rows[i] &= !(1 << j);
        }
    }

    /// Column j (the image of input bit j) as a bit vector.
    pub fn col(&self, j: usize) -> u32 {
        (0..self.n).fold(0, |acc, i| acc | (self.rows[i] >> j & 1) << i)
    }

    pub fn cols(&self) -> Vec<u32> {
        (0..self.n).map(|j| self.col(j)).collect()
    }

    /// y = A·x.
    pub fn apply(&self, x: u32) -> u32 {
        self.rows
            .iter()
            .enumerate()
            .fold(0, |acc, (i, &r)| acc | parity(r & x) << i)
    }

    /// A·B (first B, then A).
    pub fn mul(&self, b: &BitMatrix) -> BitMatrix {
        assert_eq!(self.n, b.n);
        BitMatrix {
            n: self.n,
            rows: self
                .rows
                .iter()
                .map(|&r| {
                    (0..self.n)
                        .filter(|&j| r >> j & 1 == 1)
                        .fold(0, |acc, j| acc ^ b.rows[j])
                })
                .collect(),
        }
    }

    pub fn transpose(&self) -> BitMatrix {
        BitMatrix {
            n: self.n,
            rows: self.cols(),
        }
    }

    pub fn is_identity(&self) -> bool {
        *self == BitMatrix::identity(self.n)
    }

    /// A permutation matrix (a BPC's matrix): one 1 in every row and column.
    pub fn is_permutation(&self) -> bool {
        self.rows.iter().all(|r| r.count_ones() == 1)
            && self.rows.iter().fold(0u32, |a, r| a | r) == mask(self.n)
    }

    /// For a permutation matrix: `perm[j]` = the output bit of input bit j.
    pub fn bit_perm(&self) -> Option<Vec<usize>> {
        if !self.is_permutation() {
            return None;
        }
        Some(
            (0..self.n)
                .map(|j| self.col(j).trailing_zeros() as usize)
                .collect(),
        )
    }

    pub fn is_upper(&self) -> bool {
        (0..self.n).all(|i| self.rows[i] & mask(i) == 0)
    }

    pub fn is_lower(&self) -> bool {
        (0..self.n).all(|i| self.rows[i] >> i >> 1 == 0)
    }

    pub fn rank(&self) -> usize {
        let mut basis: Vec<u32> = Vec::new();
        for &r in &self.rows {
            let mut v = r;
            for &b in &basis {
                v = v.min(v ^ b);
            }
            if v != 0 {
                basis.push(v);
                basis.sort_unstable_by(|a, b| b.cmp(a));
            }
        }
        basis.len()
    }

    /// Why the matrix is singular (a row that is the XOR of earlier rows), or `None` if invertible.
    pub fn singular_reason(&self) -> Option<String> {
        // Basis vectors with the set of original rows they combine; pivot = highest bit.
        let mut basis: Vec<(u32, u64)> = Vec::new();
        for (i, &r) in self.rows.iter().enumerate() {
            if r & mask(self.n) == 0 {
                return Some(format!(
                    "the matrix is singular: row {i} (output bit {i}) is all zeros"
                ));
            }
            let (mut v, mut comb) = (r, 1u64 << i);
            while let Some(&(b, c)) = basis
                .iter()
                .find(|(b, _)| v != 0 && 31 - b.leading_zeros() == 31 - v.leading_zeros())
            {
                v ^= b;
                comb ^= c;
            }
            if v == 0 {
                let others: Vec<String> = (0..i)
                    .filter(|&k| comb >> k & 1 == 1)
                    .map(|k| format!("row {k}"))
                    .collect();
                return Some(format!(
                    "the matrix is singular: row {i} = {} (sum over GF(2), i.e. XOR); rank {} < {}",
                    others.join(" + "),
                    self.rank(),
                    self.n
                ));
            }
            basis.push((v, comb));
        }
        None
    }

    pub fn is_invertible(&self) -> bool {
        self.singular_reason().is_none()
    }

    /// The inverse, or an error saying which row depends on which others.
    pub fn inverse(&self) -> Result<BitMatrix> {
        if let Some(why) = self.singular_reason() {
            return Err(Error::Input(why));
        }
        let n = self.n;
        let mut a = self.rows.clone();
        let mut inv = BitMatrix::identity(n).rows;
        for col in 0..n {
            let p = pivot(&a, col, n);
            a.swap(col, p);
            inv.swap(col, p);
            for r in 0..n {
                if r != col && a[r] >> col & 1 == 1 {
                    a[r] ^= a[col];
                    inv[r] ^= inv[col];
                }
            }
        }
        Ok(BitMatrix { n, rows: inv })
    }

    /// A = P·L·U with P a permutation, L unit lower triangular, U upper triangular (unit diagonal).
    pub fn plu(&self) -> Result<(BitMatrix, BitMatrix, BitMatrix)> {
        if let Some(why) = self.singular_reason() {
            return Err(Error::Input(why));
        }
        let n = self.n;
        // Row-pivoted elimination: Pᵀ·A = L·U. `order[i]` = original row now at position i.
        let mut u = self.rows.clone();
        let mut order: Vec<usize> = (0..n).collect();
        let mut l = BitMatrix::identity(n);
        for col in 0..n {
            let p = pivot(&u, col, n);
            u.swap(col, p);
            order.swap(col, p);
            // swap the already computed multipliers (columns < col) of L's rows
            let lm = mask(col);
            let (lc, lp) = (l.rows[col] & lm, l.rows[p] & lm);
            l.rows[col] = (l.rows[col] & !lm) | lp;
            l.rows[p] = (l.rows[p] & !lm) | lc;
            for r in col + 1..n {
                if u[r] >> col & 1 == 1 {
                    u[r] ^= u[col];
                    l.rows[r] |= 1 << col;
                }
            }
        }
        // Pᵀ·A = L·U with (Pᵀ·A) row i = A row order[i]  ⇒  P sends e_i to e_order[i].
        let p = BitMatrix::from_bit_perm(&order);
        let u = BitMatrix { n, rows: u };
        debug_assert_eq!(p.mul(&l).mul(&u), *self);
        Ok((p, l, u))
    }

    /// A = U·L·P (from the P·L·U of A⁻¹: A⁻¹ = P·L·U ⇒ A = U⁻¹·L⁻¹·Pᵀ).
    pub fn ulp(&self) -> Result<(BitMatrix, BitMatrix, BitMatrix)> {
        let (p, l, u) = self.inverse()?.plu()?;
        Ok((u.inverse()?, l.inverse()?, p.transpose()))
    }

    /// Row strings: character j of row i is entry (i, j).
    pub fn row_strings(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|&r| {
                (0..self.n)
                    .map(|j| if r >> j & 1 == 1 { '1' } else { '0' })
                    .collect()
            })
            .collect()
    }

    pub fn format(&self) -> String {
        self.row_strings().join(";")
    }

    /// Parse rows separated by `;` or newlines (spaces and `_` inside rows are ignored).
    pub fn parse(text: &str) -> Result<BitMatrix> {
        let rows: Vec<String> = text
            .split([';', '\n'])
            .map(|r| {
                r.chars()
                    .filter(|c| !c.is_whitespace() && *c != '_')
                    .collect()
            })
            .filter(|r: &String| !r.is_empty())
            .collect();
        if rows.is_empty() {
            return Err(Error::input(
                "the matrix is empty: give n rows of n bits, e.g. '01;10'",
            ));
        }
        let n = rows.len();
        if n > 32 {
            return Err(Error::Input(format!(
                "the matrix has {n} rows; at most 32 (N <= 2^32) are supported"
            )));
        }
        let mut m = BitMatrix::zero(n);
        for (i, r) in rows.iter().enumerate() {
            if r.chars().count() != n {
                return Err(Error::Input(format!(
                    "malformed matrix: row {i} ('{r}') has {} entries but there are {n} rows; \
                     the matrix must be square (n rows of n bits)",
                    r.chars().count()
                )));
            }
            for (j, ch) in r.chars().enumerate() {
                match ch {
                    '0' => {}
                    '1' => m.rows[i] |= 1 << j,
                    _ => {
                        return Err(Error::Input(format!(
                            "malformed matrix: row {i} has '{ch}' at column {j}; only 0 and 1 are allowed"
                        )));
                    }
                }
            }
        }
        Ok(m)
    }

    /// `--matrix` value: a file path (one row per line) if such a file exists, else the rows.
    pub fn parse_arg(arg: &str) -> Result<BitMatrix> {
        let p = std::path::Path::new(arg);
        if !arg.contains(';') && p.is_file() {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Error::Io(format!("cannot read matrix file '{arg}': {e}")))?;
            return BitMatrix::parse(&text);
        }
        BitMatrix::parse(arg)
    }

    /// A uniformly random invertible matrix (rejection sampling).
    pub fn random_invertible(n: usize, seed: u64) -> BitMatrix {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        loop {
            let m = BitMatrix {
                n,
                rows: (0..n).map(|_| rng.random::<u32>() & mask(n)).collect(),
            };
            if m.is_invertible() {
                return m;
            }
        }
    }

    /// A uniformly random bit permutation.
    pub fn random_bpc(n: usize, seed: u64) -> BitMatrix {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.random_range(0..=i);
            perm.swap(i, j);
        }
        BitMatrix::from_bit_perm(&perm)
    }
}

/// An affine index map y = A·x ⊕ c.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Affine {
    pub a: BitMatrix,
    pub c: u32,
}

impl Affine {
    pub fn apply(&self, x: u32) -> u32 {
        self.a.apply(x) ^ self.c
    }

    /// `self` after `first`.
    pub fn after(&self, first: &Affine) -> Affine {
        Affine {
            a: self.a.mul(&first.a),
            c: self.a.apply(first.c) ^ self.c,
        }
    }

    /// Permute `data`: out[A·x ⊕ c] = data[x] (table-driven: two lookups per element).
    pub fn permute(&self, data: &[u32]) -> Vec<u32> {
        let n = self.a.n;
        assert_eq!(data.len(), 1usize << n);
        let lo_bits = n / 2;
        let cols = self.a.cols();
        let table = |bits: std::ops::Range<usize>| -> Vec<u32> {
            let w = bits.len();
            let mut t = vec![0u32; 1 << w];
            for v in 1..(1usize << w) {
                let b = v.trailing_zeros() as usize;
                t[v] = t[v & (v - 1)] ^ cols[bits.start + b];
            }
            t
        };
        let lo = table(0..lo_bits);
        let hi = table(lo_bits..n);
        let mut out = vec![0u32; data.len()];
        for (x, &v) in data.iter().enumerate() {
            let y = lo[x & ((1 << lo_bits) - 1)] ^ hi[x >> lo_bits] ^ self.c;
            out[y as usize] = v;
        }
        out
    }
}
