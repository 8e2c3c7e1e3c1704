//! The FFT's stage annotations: per step of the schedule, which thread holds each logical position
//! and whether it is that thread's lo or hi value; the last step says which DFT bin each row holds.

use super::model::StepKind;
use super::{Config, Mode};
use crate::data::f32_to_json;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

#[derive(Clone, Debug, Serialize)]
pub struct Notes {
    pub step: usize,
    #[serde(serialize_with = "kind_name")]
    pub kind: StepKind,
    pub stride: usize,
    /// Per logical position: the thread holding it.
    pub owner: Vec<u32>,
    /// Per logical position: true where it is the thread's lo value.
    pub lo: Vec<bool>,
    /// The stage's data are complex pairs (printed as [re, im]).
    pub complex: bool,
    /// Exchanges: the partner thread is t ^ xor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xor: Option<usize>,
    /// The last step: row p holds DFT[dft_index[p]] and is written to written_to[p].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dft_index: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_to: Option<Vec<usize>>,
}

fn kind_name<S: Serializer>(k: &StepKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.name())
}

/// Interleaved (re, im) f32 bits as JSON [re, im] pairs.
pub fn complex_json(v: &[u32]) -> Value {
    Value::Array(
        v.chunks_exact(2)
            .map(|c| {
                json!([
                    f32_to_json(f32::from_bits(c[0])),
                    f32_to_json(f32::from_bits(c[1]))
                ])
            })
            .collect(),
    )
}

/// A large FFT's stage (src/algo/fft/large.rs): the array after one pass, seen as the N1 × N2
/// grid of the four-step decomposition (element col + N2·row).
#[derive(Clone, Debug, Serialize)]
pub struct PassNotes {
    /// The pass that wrote this stage (None: the input).
    pub pass: Option<usize>,
    /// input | columns | rows | whole | inner | unpack
    pub kind: PassKind,
    /// N1 (rows of the grid: the column FFTs' size) and N2 (columns: the row FFTs' size).
    pub n1: usize,
    pub n2: usize,
    /// The sub-FFTs this pass ran and their size.
    pub sub_size: usize,
    pub count: usize,
    /// The columns pass multiplied each output by W_N^(col·k1).
    pub twiddled: bool,
    /// Element k1 + N1·k2 holds grid cell (k1, k2): the rows pass stored through the transpose
    /// (X[k1 + N1·k2]), or the columns as one dispatch through L2 stores them for its rows.
    pub transposed: bool,
    /// The columns pass stored its output in units of this many columns (each unit's N1 rows
    /// contiguous); the stage is shown in grid order (cell (k1, col) at col + N2·k1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<usize>,
    pub complex: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PassKind {
    Input,
    Columns,
    Rows,
    Whole,
    /// The first phase of a pass through L2: its sub-FFTs half done (the inner columns).
    Inner,
    Unpack,
}

/// The run's `"output"`: [re, im] pairs; real pairs as {"x": …, "y": …} per FFT (one object for
/// a batch of 1). Made when the JSON is written (crate::algo::OutputJson).
pub fn output_json(cfg: Config) -> Option<crate::algo::OutputJson> {
    Some(crate::algo::OutputJson(std::sync::Arc::new(move |bits| {
        pairs_json(&cfg, bits)
    })))
}

fn pairs_json(cfg: &Config, out_bits: &[u32]) -> Value {
    if cfg.mode != Mode::Pair {
        return complex_json(out_bits);
    }
    let per_out = cfg.out_complex();
    let half = per_out / 2;
    let objs: Vec<Value> = (0..cfg.batch)
        .map(|k| {
            let base = 2 * k * per_out;
            json!({
                "x": complex_json(&out_bits[base..base + 2 * half]),
                "y": complex_json(&out_bits[base + 2 * half..base + 4 * half]),
            })
        })
        .collect();
    if cfg.batch == 1 {
        objs.into_iter().next().unwrap_or(Value::Null)
    } else {
        Value::Array(objs)
    }
}
