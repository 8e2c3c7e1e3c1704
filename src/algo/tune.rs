//! Tunable parameters. Each room names, beside its options, the fields worth searching for a case
//! and the values to try (the built-in default's neighbours first); `stagewise tune` searches them,
//! verifying every candidate against the CPU model before timing it, and keeps the fastest as
//! wisdom. A field is unset (the built-in default decides) when its JSON value is null, 0 or
//! "auto": wisdom fills only unset fields, so an option given by the user always wins.

use super::AlgoOptions;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// One parameter: an options field (its JSON name) and the values to try, in order; `with`, the
/// fields set beside each value (a value that means what it should only beside another field's:
/// a real FFT's elements per invocation are the large kernel's only with `kernel = large`).
#[derive(Clone, Debug)]
pub struct Knob {
    pub field: &'static str,
    pub values: Vec<Value>,
    pub with: Vec<(&'static str, Value)>,
}

impl Knob {
    pub fn new<T: Into<Value>>(field: &'static str, values: impl IntoIterator<Item = T>) -> Knob {
        Knob {
            field,
            values: values.into_iter().map(Into::into).collect(),
            with: Vec::new(),
        }
    }

    /// This knob with `field` set to `value` beside each of its values.
    pub fn with(mut self, field: &'static str, value: impl Into<Value>) -> Knob {
        self.with.push((field, value.into()));
        self
    }

    /// Write `value` into `choice` for this knob, with the fields set beside it.
    pub fn set(&self, choice: &mut Map<String, Value>, value: &Value) {
        choice.insert(self.field.to_string(), value.clone());
        for (f, x) in &self.with {
            choice.insert(f.to_string(), x.clone());
        }
    }

    /// The fields this knob writes: its own, then those set beside it.
    pub fn fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.field).chain(self.with.iter().map(|w| w.0))
    }
}

/// A room's search space for one case: the knobs, and the fields a case is keyed by (wisdom
/// measured at one FFT size is not used at another).
#[derive(Clone, Debug, Default)]
pub struct Space {
    pub key: &'static [&'static str],
    pub knobs: Vec<Knob>,
}

/// Whether a field's value leaves the choice to the built-in default.
pub fn is_unset(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s == "auto",
        _ => false,
    }
}

impl AlgoOptions {
    /// The search space of `variant` at `n` elements (empty: nothing to tune).
    pub fn space(&self, variant: &str, n: usize) -> Space {
        match self {
            AlgoOptions::Copy(o) => o.space(variant),
            AlgoOptions::Bmmc(o) => o.space(variant),
            AlgoOptions::Scan(o) => o.space(variant, n),
            AlgoOptions::Fft(o) => o.space(variant, n),
            AlgoOptions::Radix(o) => o.space(variant),
            AlgoOptions::Oddeven(o) => o.space(variant),
            _ => Space::default(),
        }
    }

    /// These options as a JSON object (the algorithm's fields, without its name).
    pub fn fields(&self) -> Map<String, Value> {
        let mut m = match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        m.remove("algorithm");
        m
    }

    /// These options with `choice` written into its fields: unset ones only, or every one with
    /// `force` (the tuner's candidates). Returns the options and the fields written.
    pub fn with_choice(
        &self,
        choice: &Map<String, Value>,
        force: bool,
    ) -> Result<(AlgoOptions, Vec<String>)> {
        let mut v = serde_json::to_value(self).map_err(|e| Error::Input(e.to_string()))?;
        let obj = v
            .as_object_mut()
            .ok_or_else(|| Error::input("options are not a JSON object"))?;
        let mut set = Vec::new();
        for (k, val) in choice {
            let Some(cur) = obj.get_mut(k) else {
                return Err(Error::Input(format!(
                    "{} has no option '{k}'",
                    self.algo().info().name
                )));
            };
            if (force || is_unset(cur)) && cur != val {
                *cur = val.clone();
                set.push(k.clone());
            }
        }
        let o = serde_json::from_value(v).map_err(|e| Error::Input(format!("{e}")))?;
        Ok((o, set))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_fills_unset_fields_only() {
        let scan = crate::algo::scan::Options {
            per_thread: 4,
            ..Default::default()
        };
        let o = AlgoOptions::Scan(scan);
        let mut c = Map::new();
        c.insert("workgroup_size".into(), 512.into());
        c.insert("per_thread".into(), 7.into());
        let (t, set) = o.with_choice(&c, false).unwrap();
        assert_eq!(set, ["workgroup_size"]);
        let AlgoOptions::Scan(t) = t else { panic!() };
        assert_eq!((t.workgroup_size, t.per_thread), (512, 4));
        let (f, set) = o.with_choice(&c, true).unwrap();
        assert_eq!(set.len(), 2);
        let AlgoOptions::Scan(f) = f else { panic!() };
        assert_eq!((f.workgroup_size, f.per_thread), (512, 7));
        c.insert("no_such".into(), 1.into());
        assert!(o.with_choice(&c, false).is_err());
    }

    #[test]
    fn every_knob_names_a_field_of_its_room() {
        let cases = [
            (AlgoOptions::Copy(Default::default()), "vec4", 1 << 20),
            (AlgoOptions::Bmmc(Default::default()), "tiled", 1 << 20),
            (AlgoOptions::Scan(Default::default()), "decoupled", 1 << 20),
            (AlgoOptions::Radix(Default::default()), "onesweep", 1 << 20),
            (AlgoOptions::Oddeven(Default::default()), "batcher", 1 << 20),
        ];
        for (o, v, n) in cases {
            let fields = o.fields();
            let s = o.space(v, n);
            assert!(!s.knobs.is_empty(), "{v}");
            for k in s
                .knobs
                .iter()
                .flat_map(Knob::fields)
                .chain(s.key.iter().copied())
            {
                assert!(fields.contains_key(k), "{v}: {k}");
            }
        }
    }
}
