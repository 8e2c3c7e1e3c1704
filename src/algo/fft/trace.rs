//! The FFT's stage annotations: per step of the schedule, which thread holds each logical position
//! and whether it is that thread's lo or hi value; the last step says which DFT bin each row holds.

use super::model::StepKind;
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
