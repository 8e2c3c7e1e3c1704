//! The JSON of a run and of its stages, serialized straight from the data: `--json` and saved
//! traces stream to their writer, so a trace is never copied into a `serde_json::Value` tree (a
//! 2^16-key Batcher trace is 22 million numbers: 1 GB as values, 160 MB as text).
//!
//! The bytes are those of the `Value` the contract was written against: every object's keys in the
//! order a `serde_json::Map` sorts them (byte order), the small fields built as `Value`s, the large
//! ones (arrays, pairs, stages) serialized element by element exactly as their `Value` would be.
//! `to_json` is the same serialization into a `Value` (tests/golden.rs guards the bytes).

use super::oddeven::trace::Pairs;
use super::{RunResult, Stage};
use crate::data::{DType, Data, fmt_f32};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;

/// One value of an object: small ones as a `Value`, large ones serialized from where they live.
pub(super) enum Field<'a> {
    Value(Value),
    Data(&'a Data),
    Pairs(&'a Pairs),
    Stages(&'a [Stage]),
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Value(v) => v.serialize(s),
            Field::Data(d) => DataJson(d).serialize(s),
            Field::Pairs(p) => p.serialize(s),
            Field::Stages(st) => s.collect_seq(st.iter()),
        }
    }
}

/// A JSON object with its keys in `serde_json::Map`'s order.
#[derive(Default)]
pub(super) struct Object<'a>(BTreeMap<String, Field<'a>>);

impl<'a> Object<'a> {
    pub(super) fn insert(&mut self, key: impl Into<String>, f: Field<'a>) {
        self.0.insert(key.into(), f);
    }

    pub(super) fn value(&mut self, key: impl Into<String>, v: Value) {
        self.insert(key, Field::Value(v));
    }

    /// Every entry of a JSON object value (later keys replace earlier ones, as `Map::extend`).
    pub(super) fn extend(&mut self, v: Value) {
        if let Value::Object(m) = v {
            for (k, v) in m {
                self.value(k, v);
            }
        }
    }
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// An array in the element type's JSON spelling (as `Data::to_json`).
struct DataJson<'a>(&'a Data);

/// An f32 as `data::f32_to_json` spells it: the number of its shortest decimal, or a string.
struct F32Json(u32);

impl Serialize for F32Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = f32::from_bits(self.0);
        if !x.is_finite() {
            return s.serialize_str(&fmt_f32(x));
        }
        let f: f64 = format!("{x}").parse().unwrap_or(x as f64);
        s.serialize_f64(f)
    }
}

impl Serialize for DataJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bits = &self.0.bits;
        match self.0.dtype {
            DType::U32 => s.collect_seq(bits.iter()),
            DType::I32 => s.collect_seq(bits.iter().map(|&b| b as i32)),
            DType::F32 => s.collect_seq(bits.iter().map(|&b| F32Json(b))),
        }
    }
}

impl Serialize for Stage {
    /// `label`, `data` and the notes' fields, flattened into one object (docs/CLI.md).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = Object::default();
        m.value("label", Value::String(self.label.clone()));
        // Complex stages print their data as [re, im] pairs.
        match self.fft() {
            Some(n) if n.complex => {
                m.value("data", super::fft::trace::complex_json(&self.data.bits))
            }
            _ => m.insert("data", Field::Data(&self.data)),
        }
        if let Some(t) = &self.notes.narration {
            m.value("narration", Value::String(t.clone()));
        }
        if let Some(p) = &self.notes.passes {
            m.value("passes", Value::from(p.clone()));
        }
        m.extend(self.notes.room.to_json());
        // A network stage's pairs, derived from its rule as they are written.
        if let Some(p) = self.oddeven().and_then(|n| n.pairs.as_ref()) {
            m.insert("pairs", Field::Pairs(p));
        }
        m.serialize(s)
    }
}

impl RunResult {
    /// The run's JSON object (docs/CLI.md), plus `more` top-level fields (e.g. the lens's).
    pub(super) fn json_object(&self, with_stages: bool, more: Map<String, Value>) -> Object<'_> {
        let mut m = Object::default();
        m.value("algorithm", json!(self.algorithm));
        m.value("variant", json!(self.variant));
        m.value("dtype", json!(self.dtype.name()));
        m.value("n", json!(self.n));
        m.value("adapter", json!(self.adapter));
        match self.output_value() {
            Some(v) => m.value("output", v),
            None => m.insert("output", Field::Data(&self.output)),
        }
        m.value(
            "passes",
            Value::Array(
                self.passes
                    .iter()
                    .map(|p| json!({"label": p.label, "gpu_ms": p.gpu_ms}))
                    .collect(),
            ),
        );
        if self.passes.iter().any(|p| p.gpu_ms.is_none()) {
            m.value("timing", json!("unavailable"));
        }
        m.value("verified", json!(self.verified));
        if let Some(mm) = &self.mismatch {
            m.value("mismatch", json!(mm));
        }
        m.extend(Value::Object(self.extra.clone()));
        if with_stages {
            m.insert("stages", Field::Stages(&self.stages));
        }
        m.extend(Value::Object(more));
        m
    }

    /// The run's JSON (docs/CLI.md) as a value: for tests and small runs; output streams with
    /// [`RunResult::write_json`].
    pub fn to_json(&self, with_stages: bool) -> Value {
        serde_json::to_value(self.json_object(with_stages, Map::new()))
            .expect("a run's JSON is plain data")
    }

    /// Write the run's JSON (plus `more` top-level fields) to `w` as it is serialized, compact
    /// or `pretty`; the same bytes as `to_json`'s value would print.
    pub fn write_json(
        &self,
        w: impl Write,
        with_stages: bool,
        more: Map<String, Value>,
        pretty: bool,
    ) -> serde_json::Result<()> {
        let obj = self.json_object(with_stages, more);
        if pretty {
            serde_json::to_writer_pretty(w, &obj)
        } else {
            serde_json::to_writer(w, &obj)
        }
    }
}
