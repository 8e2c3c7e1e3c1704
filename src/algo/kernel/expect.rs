//! `--expect OP`: what the user's kernel should compute, from the rooms' CPU models (the same
//! references the rooms verify against), or `--expect-file FILE.npy`; and the built-in kernel
//! `bench kernel` times beside the user's for the same op.

use super::contract::Elem;
use crate::algo::{AlgoOptions, first_mismatch};
use crate::data::{DType, Data};
use crate::error::{Error, Result};

/// The operation a kernel is checked against.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Copy,
    Bitrev,
    /// A bmmc preset (`bit-reverse`, `transpose:R,C`, …) or a matrix (`--matrix` syntax).
    Bmmc(String),
    Scan {
        exclusive: bool,
    },
    Sort {
        descending: bool,
    },
    /// Forward FFTs of `size` points over the complex input, natural order.
    Fft(usize),
    /// The expected output, read like `--input`.
    File(String),
}

pub const OPS: &str = "copy, bitrev, bmmc:<preset or matrix>, transpose:R,C, scan, scan-exclusive, \
                       sort, sort-desc, fft:<size>";

impl Expect {
    pub fn parse(op: &str) -> Result<Expect> {
        let op = op.trim();
        let (name, arg) = match op.split_once(':') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (op, None),
        };
        let bad = || {
            Error::Input(format!(
                "--expect '{op}': unknown operation; operations: {OPS}"
            ))
        };
        Ok(match (name, arg) {
            ("copy", None) => Expect::Copy,
            ("bitrev", None) => Expect::Bitrev,
            ("bmmc", Some(a)) if !a.is_empty() => Expect::Bmmc(a.to_string()),
            ("transpose", Some(_)) => Expect::Bmmc(op.to_string()),
            ("scan", None) => Expect::Scan { exclusive: false },
            ("scan-exclusive", None) => Expect::Scan { exclusive: true },
            ("sort", None) => Expect::Sort { descending: false },
            ("sort-desc", None) => Expect::Sort { descending: true },
            ("fft", Some(a)) => {
                let size: usize = a.parse().map_err(|_| {
                    Error::Input(format!(
                        "--expect {op}: '{a}' is not a size (a power of two)"
                    ))
                })?;
                if size < 2 || !size.is_power_of_two() {
                    return Err(Error::Input(format!(
                        "--expect {op}: the FFT size must be a power of two ≥ 2"
                    )));
                }
                Expect::Fft(size)
            }
            _ => return Err(bad()),
        })
    }

    /// The bmmc room's options for a `bmmc:` spec: a matrix when it has rows (`;`) or names a file.
    fn bmmc_options(spec: &str) -> crate::algo::bmmc::Options {
        let mut o = crate::algo::bmmc::Options::default();
        if spec.contains(';') || std::path::Path::new(spec).is_file() {
            o.matrix = Some(spec.to_string());
        } else {
            o.preset = Some(spec.to_string());
        }
        o
    }

    /// The permutation of element indices the op is (out[j] = in[perm[j]]), for permutations
    /// (None: the op is no permutation); the app's view of the user's kernel draws it.
    pub fn gather(&self, n: usize) -> Result<Option<Vec<u32>>> {
        let iota: Vec<u32> = (0..n as u32).collect();
        Ok(Some(match self {
            Expect::Copy => iota,
            Expect::Bitrev => {
                crate::algo::require_pow2("--expect bitrev", n)?;
                crate::algo::bitrev::model::naive(&iota)
            }
            Expect::Bmmc(spec) => {
                let bits = crate::algo::require_pow2("--expect bmmc", n)?;
                Self::bmmc_options(spec)
                    .target(bits as usize)?
                    .permute(&iota)
            }
            _ => return Ok(None),
        }))
    }

    /// Check the kernel's output words against the op applied to `input` (words, `elem`);
    /// `None`: equal (within the op's tolerance).
    pub fn check(&self, elem: Elem, input: &Data, out: &[u32]) -> Result<Option<String>> {
        let w = elem.words();
        let n = input.len() / w;
        let dtype = elem.dtype();
        if let Some(perm) = self.gather(n)? {
            let want: Vec<u32> = perm
                .iter()
                .flat_map(|&j| {
                    input.bits[j as usize * w..(j as usize + 1) * w]
                        .iter()
                        .copied()
                })
                .collect();
            return Ok(first_mismatch(dtype, out, &want).map(|m| per_elem(m, w)));
        }
        match self {
            Expect::Scan { exclusive } => {
                no_complex(elem, "scan")?;
                if dtype == DType::F32 {
                    let (exact, abs) =
                        crate::algo::scan::model::exact_f64(&input.bits, *exclusive, false);
                    // A scan's summation tree is at most log2 N deep (a sequential one deeper).
                    let depth = n.next_power_of_two().trailing_zeros() as usize;
                    let c = crate::algo::scan::check_f32(out, &exact, &abs, &|_| depth);
                    return Ok(c.mismatch);
                }
                let want = crate::algo::scan::model::sequential(dtype, &input.bits, *exclusive);
                Ok(first_mismatch(dtype, out, &want))
            }
            Expect::Sort { descending } => {
                no_complex(elem, "sort")?;
                let want = crate::algo::oddeven::model::sort(dtype, *descending, &input.bits);
                Ok(first_mismatch(dtype, out, &want))
            }
            Expect::Fft(size) => fft_check(elem, *size, input, out),
            Expect::File(path) => {
                let want = crate::data::read_input(path, dtype)?;
                if want.len() != out.len() {
                    return Err(Error::Input(format!(
                        "--expect-file {path}: {} numbers, but the output has {}",
                        want.len(),
                        out.len()
                    )));
                }
                Ok(first_mismatch(dtype, out, &want.bits))
            }
            Expect::Copy | Expect::Bitrev | Expect::Bmmc(_) => Ok(None),
        }
    }

    /// Stagewise's own kernel for this op and its variant: `bench kernel` times it beside the
    /// user's (None: no room computes it, e.g. an expected file).
    pub fn builtin(&self) -> Option<(AlgoOptions, &'static str)> {
        Some(match self {
            Expect::Copy => (AlgoOptions::Copy(Default::default()), "vec4"),
            Expect::Bitrev => (AlgoOptions::Bitrev(Default::default()), "tiled"),
            Expect::Bmmc(spec) => (AlgoOptions::Bmmc(Self::bmmc_options(spec)), "auto"),
            Expect::Scan { exclusive } => {
                let o = crate::algo::scan::Options {
                    exclusive: *exclusive,
                    ..Default::default()
                };
                (AlgoOptions::Scan(o), "decoupled")
            }
            Expect::Sort { descending } => {
                let o = crate::algo::radix::Options {
                    descending: *descending,
                    ..Default::default()
                };
                (AlgoOptions::Radix(o), "onesweep")
            }
            Expect::Fft(size) => {
                let o = crate::algo::fft::Options {
                    size: Some(*size),
                    ..Default::default()
                };
                (AlgoOptions::Fft(o), "workgroup")
            }
            Expect::File(_) => return None,
        })
    }
}

fn no_complex(elem: Elem, op: &str) -> Result<()> {
    if elem == Elem::Complex {
        return Err(Error::Input(format!(
            "--expect {op} takes u32, i32 or f32 elements; this kernel's are vec2<f32>"
        )));
    }
    Ok(())
}

/// A word-level mismatch message of complex elements, with element indices.
fn per_elem(m: String, w: usize) -> String {
    if w == 1 {
        m
    } else {
        format!("{m} (word index; element = word / {w})")
    }
}

/// Forward FFTs of `size` points, natural order: every element within the FFT room's tolerance
/// (`fft::model::tolerance`) of rustfft's, relative to the largest reference magnitude.
fn fft_check(elem: Elem, size: usize, input: &Data, out: &[u32]) -> Result<Option<String>> {
    use crate::algo::fft::model::{C64, dft, tolerance};
    if elem != Elem::Complex {
        return Err(Error::Input(format!(
            "--expect fft:{size} needs complex elements: src and dst as array<vec2<f32>>"
        )));
    }
    let c = |b: &[u32]| -> Vec<C64> {
        b.chunks_exact(2)
            .map(|p| C64::new(f32::from_bits(p[0]) as f64, f32::from_bits(p[1]) as f64))
            .collect()
    };
    let (x, got) = (c(&input.bits), c(out));
    if x.len() % size != 0 {
        return Err(Error::Input(format!(
            "--expect fft:{size}: N = {} complex elements is not a whole number of {size}-point FFTs",
            x.len()
        )));
    }
    let want: Vec<C64> = x.chunks(size).flat_map(|b| dft(b, false)).collect();
    let tol = tolerance(size);
    let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max).max(1e-30);
    let bad: Vec<usize> = (0..want.len())
        .filter(|&i| {
            got.get(i)
                .is_none_or(|g| (g - want[i]).norm().is_nan() || (g - want[i]).norm() > tol * scale)
        })
        .collect();
    Ok(bad.first().map(|&i| {
        format!(
            "{} element(s) outside the FFT tolerance ({tol:.1e} of max |X|); first at index {i}: GPU {} vs expected {}",
            bad.len(),
            got.get(i).map_or("missing".into(), |g| format!("({}, {})", g.re as f32, g.im as f32)),
            format_args!("({}, {})", want[i].re as f32, want[i].im as f32)
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[u32]) -> Data {
        Data::new(DType::U32, v.to_vec())
    }

    #[test]
    fn ops_parse_and_bad_ones_are_refused() {
        assert_eq!(Expect::parse("copy").unwrap(), Expect::Copy);
        assert_eq!(
            Expect::parse("transpose:2,3").unwrap(),
            Expect::Bmmc("transpose:2,3".into())
        );
        assert_eq!(
            Expect::parse("bmmc:gray").unwrap(),
            Expect::Bmmc("gray".into())
        );
        assert_eq!(Expect::parse("fft:64").unwrap(), Expect::Fft(64));
        for bad in ["reverse", "fft:3", "fft:x", "bmmc:", "scan:2"] {
            let e = Expect::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("--expect"), "{bad}: {e}");
        }
    }

    #[test]
    fn references_are_the_rooms_models() {
        let x = words(&[5, 1, 4, 2]);
        let check = |op: &str, out: &[u32]| {
            Expect::parse(op)
                .unwrap()
                .check(Elem::U32, &x, out)
                .unwrap()
        };
        assert_eq!(check("scan", &[5, 6, 10, 12]), None);
        assert_eq!(check("scan-exclusive", &[0, 5, 6, 10]), None);
        assert_eq!(check("sort", &[1, 2, 4, 5]), None);
        assert_eq!(check("sort-desc", &[5, 4, 2, 1]), None);
        assert_eq!(check("bitrev", &[5, 4, 1, 2]), None);
        // transpose:1,1 of [[5, 1], [4, 2]] is [[5, 4], [1, 2]].
        assert_eq!(check("transpose:1,1", &[5, 4, 1, 2]), None);
        let m = check("sort", &[1, 2, 5, 4]).unwrap();
        assert!(
            m.starts_with("2 element(s) differ; first at index 2"),
            "{m}"
        );
        // Complex permutations move (re, im) pairs: bit-reversal of 4 swaps elements 1 and 2.
        let f = |v: [f32; 8]| v.map(f32::to_bits).to_vec();
        let c = Data::new(DType::F32, f([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]));
        let e = Expect::parse("bitrev").unwrap();
        let want = f([0.0, 0.5, 2.0, 2.5, 1.0, 1.5, 3.0, 3.5]);
        assert_eq!(e.check(Elem::Complex, &c, &want).unwrap(), None);
        assert!(e.check(Elem::Complex, &c, &c.bits).unwrap().is_some());
    }
}
