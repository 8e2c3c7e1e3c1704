//! A room's run-level facts: what a run says about itself at the top level of its JSON
//! (`RunResult::extra`: its shape, plan and counted work). Each room keeps them as one type that
//! it serialises into `extra` and that the views read back, so a renamed field is a compile error
//! on both sides, never a view that silently shows nothing.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub trait RunFacts: Serialize + DeserializeOwned {
    /// The facts in a run's `extra` (None: another room's run, or one without them yet).
    fn of(extra: &Map<String, Value>) -> Option<Self> {
        Self::deserialize(extra).ok()
    }

    /// As JSON fields, to extend a run's `extra` with.
    fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}
