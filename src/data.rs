//! Element types, input parsing (text, CSV, JSON, .npy), generated fills, and JSON output of values.
//!
//! Every element type Stagewise moves is 32 bits wide, so data is kept as raw `u32` bit patterns plus
//! a [`DType`]: permutations move bits untouched, and comparisons interpret them per type.

use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    #[default]
    U32,
    I32,
    F32,
}

impl DType {
    pub const ALL: [DType; 3] = [DType::U32, DType::I32, DType::F32];

    pub fn name(self) -> &'static str {
        match self {
            DType::U32 => "u32",
            DType::I32 => "i32",
            DType::F32 => "f32",
        }
    }

    /// The WGSL scalar type of this element type.
    pub fn wgsl(self) -> &'static str {
        self.name()
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed array of 32-bit elements stored as bit patterns.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Data {
    pub dtype: DType,
    pub bits: Vec<u32>,
}

impl Data {
    pub fn new(dtype: DType, bits: Vec<u32>) -> Self {
        Data { dtype, bits }
    }

    pub fn from_u32(v: &[u32]) -> Self {
        Data::new(DType::U32, v.to_vec())
    }

    pub fn from_i32(v: &[i32]) -> Self {
        Data::new(DType::I32, v.iter().map(|&x| x as u32).collect())
    }

    pub fn from_f32(v: &[f32]) -> Self {
        Data::new(DType::F32, v.iter().map(|x| x.to_bits()).collect())
    }

    pub fn len(&self) -> usize {
        self.bits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    pub fn f32s(&self) -> Vec<f32> {
        self.bits.iter().map(|&b| f32::from_bits(b)).collect()
    }

    /// One element as a display string (the same spelling as JSON output, without quotes).
    pub fn fmt_elem(&self, i: usize) -> String {
        fmt_bits(self.dtype, self.bits[i])
    }

    /// One element as an f64, for plots and bar views.
    pub fn as_f64(&self, i: usize) -> f64 {
        bits_to_f64(self.dtype, self.bits[i])
    }

    pub fn to_json(&self) -> Value {
        Value::Array(
            self.bits
                .iter()
                .map(|&b| bits_to_json(self.dtype, b))
                .collect(),
        )
    }
}

pub fn bits_to_f64(dtype: DType, b: u32) -> f64 {
    match dtype {
        DType::U32 => b as f64,
        DType::I32 => b as i32 as f64,
        DType::F32 => f32::from_bits(b) as f64,
    }
}

pub fn fmt_bits(dtype: DType, b: u32) -> String {
    match dtype {
        DType::U32 => b.to_string(),
        DType::I32 => (b as i32).to_string(),
        DType::F32 => fmt_f32(f32::from_bits(b)),
    }
}

/// f32 in its shortest round-trip spelling; non-finite values as "NaN", "-NaN", "inf", "-inf".
pub fn fmt_f32(x: f32) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-NaN" } else { "NaN" }.to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x}")
    }
}

/// An f32 as a JSON value: a number in its shortest f32 spelling (so it parses back to the same
/// f32), or one of the strings "NaN", "-NaN", "inf", "-inf".
pub fn f32_to_json(x: f32) -> Value {
    if !x.is_finite() {
        return Value::String(fmt_f32(x));
    }
    // Going through the f32's own shortest spelling avoids printing 0.1f32 as 0.10000000149011612.
    let s = format!("{x}");
    let f: f64 = s.parse().unwrap_or(x as f64);
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

pub fn bits_to_json(dtype: DType, b: u32) -> Value {
    match dtype {
        DType::U32 => Value::from(b),
        DType::I32 => Value::from(b as i32),
        DType::F32 => f32_to_json(f32::from_bits(b)),
    }
}

/// Parse one token as `dtype`, returning its bit pattern or a message saying why not.
pub fn parse_token(tok: &str, dtype: DType) -> std::result::Result<u32, String> {
    let t = tok.trim();
    match dtype {
        DType::U32 => parse_int(t)
            .and_then(|v| u32::try_from(v).map_err(|_| "out of range"))
            .map_err(|why| format!("'{t}' is not a u32 ({why})")),
        DType::I32 => parse_int(t)
            .and_then(|v| i32::try_from(v).map_err(|_| "out of range"))
            .map(|v| v as u32)
            .map_err(|why| format!("'{t}' is not an i32 ({why})")),
        DType::F32 => parse_f32(t)
            .map(f32::to_bits)
            .ok_or_else(|| format!("'{t}' is not an f32")),
    }
}

fn parse_int(t: &str) -> std::result::Result<i128, &'static str> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if body.is_empty() {
        return Err("not a number");
    }
    let parsed = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(hex, 16)
    } else if body.bytes().all(|c| c.is_ascii_digit()) {
        body.parse::<i128>()
    } else {
        return Err("not an integer");
    };
    // Digits that overflow even i128 are simply out of range.
    let v = parsed.map_err(|_| "out of range")?;
    Ok(if neg { -v } else { v })
}

fn parse_f32(t: &str) -> Option<f32> {
    let lower = t.to_ascii_lowercase();
    let (neg, body) = match lower.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lower.strip_prefix('+').unwrap_or(&lower)),
    };
    let sign = if neg { 0x8000_0000u32 } else { 0 };
    match body {
        "nan" => return Some(f32::from_bits(0x7fc0_0000 | sign)),
        "inf" | "infinity" => return Some(f32::from_bits(0x7f80_0000 | sign)),
        _ => {}
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || b".e+-".contains(&c))
    {
        return None;
    }
    t.parse::<f32>().ok()
}

/// Parse text input: numbers separated by whitespace, commas or newlines, or a JSON array (nested
/// arrays are flattened, so `[[re, im], ...]` gives interleaved pairs). Errors name the line.
pub fn parse_text(text: &str, dtype: DType) -> Result<Data> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return parse_json(text, dtype);
    }
    let mut bits = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
            if tok.is_empty() {
                continue;
            }
            let b = parse_token(tok, dtype)
                .map_err(|m| Error::Input(format!("input line {}: {m}", lineno + 1)))?;
            bits.push(b);
        }
    }
    if bits.is_empty() {
        return Err(Error::input("input is empty: no numbers found"));
    }
    Ok(Data::new(dtype, bits))
}

fn parse_json(text: &str, dtype: DType) -> Result<Data> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::Input(format!("input line {}: invalid JSON ({e})", e.line())))?;
    let mut bits = Vec::new();
    flatten_json(&v, dtype, &mut bits, &mut String::from("input"))?;
    if bits.is_empty() {
        return Err(Error::input(
            "input is empty: the JSON array has no numbers",
        ));
    }
    Ok(Data::new(dtype, bits))
}

fn flatten_json(v: &Value, dtype: DType, out: &mut Vec<u32>, path: &mut String) -> Result<()> {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                flatten_json(item, dtype, out, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Number(n) => {
            let b = parse_token(&n.to_string(), dtype)
                .map_err(|m| Error::Input(format!("{path}: {m}")))?;
            out.push(b);
            Ok(())
        }
        Value::String(s) => {
            let b = parse_token(s, dtype).map_err(|m| Error::Input(format!("{path}: {m}")))?;
            out.push(b);
            Ok(())
        }
        other => Err(Error::Input(format!(
            "{path}: expected a number, found {}",
            match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                _ => "an object",
            }
        ))),
    }
}

/// Read an input file by extension: `.npy` through npyz, anything else as text/CSV/JSON; `-` is stdin.
pub fn read_input(path: &str, dtype: DType) -> Result<Data> {
    if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Error::Io(format!("cannot read stdin: {e}")))?;
        return parse_text(&s, dtype);
    }
    let bytes = std::fs::read(Path::new(path))
        .map_err(|e| Error::Io(format!("cannot read '{path}': {e}")))?;
    parse_input(path, bytes, dtype)
}

/// An input file's contents (`path`: its name, whose extension says `.npy`), as [`read_input`]
/// reads it: the browser's file picker hands over bytes, not a path.
pub fn parse_input(path: &str, bytes: Vec<u8>, dtype: DType) -> Result<Data> {
    let p = Path::new(path);
    if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")) {
        return parse_npy(&bytes, dtype).map_err(|e| match e {
            Error::Input(m) => Error::Input(format!("{path}: {m}")),
            other => other,
        });
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::Input(format!("'{path}' is not UTF-8 text (nor a .npy file)")))?;
    parse_text(&text, dtype)
}

/// A `.npy` array's elements of type `T`, each converted to f64 by `to_f64`.
fn npy_f64<T: npyz::Deserialize, R: std::io::Read>(
    npy: npyz::NpyFile<R>,
    to_f64: fn(T) -> f64,
) -> std::io::Result<Vec<f64>> {
    Ok(npy.into_vec::<T>()?.into_iter().map(to_f64).collect())
}

/// Parse a `.npy` array of any integer or float type, converting to `dtype` only where the value is
/// representable exactly (integers) or as the nearest f32 (floats).
pub fn parse_npy(bytes: &[u8], dtype: DType) -> Result<Data> {
    let npy =
        npyz::NpyFile::new(bytes).map_err(|e| Error::Input(format!("not a .npy file ({e})")))?;
    let descr = npy.dtype().descr();
    let bad = |e: std::io::Error| Error::Input(format!("cannot read .npy data ({e})"));
    let values: Vec<f64> = match (
        descr
            .trim_matches(['\'', '"'])
            .trim_start_matches(['<', '>', '|', '=']),
        dtype,
    ) {
        ("u4", DType::U32) => return Ok(Data::new(dtype, npy.into_vec::<u32>().map_err(bad)?)),
        ("i4", DType::I32) => {
            let v = npy.into_vec::<i32>().map_err(bad)?;
            return Ok(Data::from_i32(&v));
        }
        ("f4", DType::F32) => {
            let v = npy.into_vec::<f32>().map_err(bad)?;
            return Ok(Data::from_f32(&v));
        }
        ("f4", _) => npy_f64::<f32, _>(npy, f64::from).map_err(bad)?,
        ("f8", _) => npy.into_vec::<f64>().map_err(bad)?,
        ("i1", _) => npy_f64::<i8, _>(npy, f64::from).map_err(bad)?,
        ("i2", _) => npy_f64::<i16, _>(npy, f64::from).map_err(bad)?,
        ("i4", _) => npy_f64::<i32, _>(npy, f64::from).map_err(bad)?,
        ("i8", _) => npy_f64::<i64, _>(npy, |x| x as f64).map_err(bad)?,
        ("u1", _) => npy_f64::<u8, _>(npy, f64::from).map_err(bad)?,
        ("u2", _) => npy_f64::<u16, _>(npy, f64::from).map_err(bad)?,
        ("u4", _) => npy_f64::<u32, _>(npy, f64::from).map_err(bad)?,
        ("u8", _) => npy_f64::<u64, _>(npy, |x| x as f64).map_err(bad)?,
        (other, _) => {
            return Err(Error::Input(format!(
                "unsupported .npy dtype '{other}' (use integers or floats)"
            )));
        }
    };
    if values.is_empty() {
        return Err(Error::input(
            "input is empty: the .npy array has no elements",
        ));
    }
    let mut bits = Vec::with_capacity(values.len());
    for (i, &v) in values.iter().enumerate() {
        let b = match dtype {
            DType::F32 => (v as f32).to_bits(),
            DType::U32 if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) => v as u32,
            DType::I32 if v.fract() == 0.0 && (i32::MIN as f64..=i32::MAX as f64).contains(&v) => {
                v as i32 as u32
            }
            _ => return Err(Error::Input(format!("element {i}: {v} is not a {dtype}"))),
        };
        bits.push(b);
    }
    Ok(Data::new(dtype, bits))
}

/// How to fill an input that is not read from a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Fill {
    /// 0, 1, 2, …
    Iota,
    /// Uniformly random over the type's range (f32: uniform in [-1000, 1000)), from --seed.
    #[default]
    Random,
    /// Random small values 0..100 (easy to read in diagrams), from --seed.
    Small,
    /// n-1, n-2, …, 0
    Reverse,
    /// The algorithm's seed example (its length is fixed).
    Example,
}

/// Generate `n` elements of `dtype`. `Example` is resolved by the caller (it belongs to an algorithm).
pub fn generate(fill: Fill, n: usize, dtype: DType, seed: u64) -> Data {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let bits: Vec<u32> = match fill {
        Fill::Iota | Fill::Example => (0..n).map(|i| num_bits(dtype, i as i64)).collect(),
        Fill::Reverse => (0..n)
            .map(|i| num_bits(dtype, (n - 1 - i) as i64))
            .collect(),
        Fill::Small => (0..n)
            .map(|_| num_bits(dtype, rng.random_range(0..100)))
            .collect(),
        Fill::Random => match dtype {
            DType::U32 | DType::I32 => (0..n).map(|_| rng.random::<u32>()).collect(),
            DType::F32 => (0..n)
                .map(|_| rng.random_range(-1000.0f32..1000.0).to_bits())
                .collect(),
        },
    };
    Data::new(dtype, bits)
}

/// A small integer as the bit pattern of `dtype` (wrapping for u32/i32).
pub fn num_bits(dtype: DType, v: i64) -> u32 {
    match dtype {
        DType::U32 | DType::I32 => v as u32,
        DType::F32 => (v as f32).to_bits(),
    }
}

/// Interpret a list of small integers (a seed example) as `dtype`.
pub fn example_data(values: &[i64], dtype: DType) -> Data {
    Data::new(dtype, values.iter().map(|&v| num_bits(dtype, v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_separators_and_json() {
        let d = parse_text("1, 2 3\n4;5", DType::U32).unwrap();
        assert_eq!(d.bits, vec![1, 2, 3, 4, 5]);
        let d = parse_text("[[1.5, -2], [3, \"NaN\"]]", DType::F32).unwrap();
        assert_eq!(d.f32s()[..3], [1.5, -2.0, 3.0]);
        assert!(d.f32s()[3].is_nan());
    }

    #[test]
    fn names_the_line_and_token() {
        let e = parse_text("1 2\n3 4\n5 x3", DType::U32).unwrap_err();
        assert_eq!(
            e.to_string(),
            "input line 3: 'x3' is not a u32 (not an integer)"
        );
        let e = parse_text("-1", DType::U32).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = parse_text("2147483648", DType::I32).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(
            parse_text("  \n ", DType::U32)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }

    #[test]
    fn f32_specials_round_trip() {
        let d = parse_text("nan -nan inf -inf -0 0.1", DType::F32).unwrap();
        let json: Vec<String> = d
            .bits
            .iter()
            .map(|&b| bits_to_json(DType::F32, b).to_string())
            .collect();
        assert_eq!(
            json,
            ["\"NaN\"", "\"-NaN\"", "\"inf\"", "\"-inf\"", "-0.0", "0.1"]
        );
        assert_eq!(d.bits[1] >> 31, 1, "-nan keeps its sign bit");
    }

    #[test]
    fn npy_round_trip() {
        let buf = crate::export::npy_bytes([7i32, -1, 3].into_iter()).unwrap();
        assert_eq!(
            parse_npy(&buf, DType::I32).unwrap(),
            Data::from_i32(&[7, -1, 3])
        );
        assert!(
            parse_npy(&buf, DType::U32)
                .unwrap_err()
                .to_string()
                .contains("-1")
        );
        assert!(parse_npy(b"junk", DType::U32).is_err());
    }
}
