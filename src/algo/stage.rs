//! A trace stage and its typed annotations. Every room describes its stages with its own `Notes`
//! type (in `<room>/trace.rs`); views and the CLI match on [`RoomNotes`] instead of reading JSON keys,
//! so a renamed field is a compile error. The JSON of a stage is unchanged by the types: `label`,
//! `data` and the notes' fields, flattened (serde), in the order a `serde_json::Map` sorts them
//! (written by `Stage`'s `Serialize` in src/algo/json.rs).
//!
//! Adding a room's annotations: define `pub struct Notes` (derive `Serialize`, one field per JSON
//! key, `Option` for keys only some stages have) in the room, add one variant
//! `RoomNotes::Name(name::Notes)` below and its arm in [`RoomNotes::to_json`] (`sparse`: a `None`
//! field is left out) and the accessor the views use (one line in `room_accessors!`).

use super::{bitrev, bmmc, fft, oddeven, radix, scan};
use crate::data::Data;
use serde::Serialize;
use serde_json::Value;

/// One stage of a trace: the array after a pass (or a step inside a pass), plus annotations that
/// the views draw (block sizes, pairs compared, who reads what, thread ownership…).
#[derive(Clone, Debug)]
pub struct Stage {
    pub label: String,
    pub data: Data,
    pub notes: StageNotes,
}

/// What every stage may carry, plus the room's own annotations.
#[derive(Clone, Debug, Default)]
pub struct StageNotes {
    /// The stage told in a sentence or two, where the room writes it (else src/ui/narrate.rs).
    pub narration: Option<String>,
    /// Indices of the plan's passes that produced this stage (else the code panel splits the
    /// passes evenly over the stages).
    pub passes: Option<Vec<usize>>,
    pub room: RoomNotes,
}

/// The room's annotations of one stage: one variant per room that annotates its stages.
#[derive(Clone, Debug, Default)]
pub enum RoomNotes {
    #[default]
    None,
    Bitrev(bitrev::trace::Notes),
    Bmmc(bmmc::trace::Notes),
    Oddeven(oddeven::trace::Notes),
    Fft(fft::trace::Notes),
    FftPass(fft::trace::PassNotes),
    Scan(scan::trace::Notes),
    Radix(radix::trace::Notes),
}

impl RoomNotes {
    pub(super) fn to_json(&self) -> Value {
        fn v(x: &impl Serialize) -> Value {
            serde_json::to_value(x).expect("stage notes are plain data")
        }
        // One notes struct holds the keys of all its room's variants: a key a stage does not have
        // (a `None` field) is left out, not written as null.
        fn sparse(x: &impl Serialize) -> Value {
            let mut v = v(x);
            if let Value::Object(m) = &mut v {
                m.retain(|_, x| !x.is_null());
            }
            v
        }
        match self {
            RoomNotes::None => Value::Null,
            RoomNotes::Bitrev(n) => sparse(n),
            RoomNotes::Bmmc(n) => sparse(n),
            RoomNotes::Oddeven(n) => sparse(n),
            RoomNotes::Fft(n) => v(n),
            RoomNotes::FftPass(n) => v(n),
            RoomNotes::Scan(n) => sparse(n),
            RoomNotes::Radix(n) => v(n),
        }
    }
}

/// `Stage::room()` for each room: its notes, when the stage carries that room's annotations.
macro_rules! room_accessors {
    ($($room:ident: $variant:ident),* $(,)?) => {
        impl Stage {
            $(
                pub fn $room(&self) -> Option<&$room::trace::Notes> {
                    match &self.notes.room {
                        RoomNotes::$variant(n) => Some(n),
                        _ => None,
                    }
                }
            )*
        }
    };
}

room_accessors! {
    bitrev: Bitrev,
    bmmc: Bmmc,
    oddeven: Oddeven,
    fft: Fft,
    radix: Radix,
    scan: Scan,
}

impl Stage {
    /// A large FFT's stage (the second note type of the fft room).
    pub fn fft_pass(&self) -> Option<&fft::trace::PassNotes> {
        match &self.notes.room {
            RoomNotes::FftPass(n) => Some(n),
            _ => None,
        }
    }

    /// A stage without annotations.
    pub fn new(label: impl Into<String>, data: Data) -> Self {
        Stage {
            label: label.into(),
            data,
            notes: StageNotes::default(),
        }
    }

    /// A stage with its room's annotations.
    pub fn with(label: impl Into<String>, data: Data, room: RoomNotes) -> Self {
        let mut st = Stage::new(label, data);
        st.notes.room = room;
        st
    }

    pub fn passes(mut self, passes: Vec<usize>) -> Self {
        self.notes.passes = Some(passes);
        self
    }

    pub fn narration(mut self, text: impl Into<String>) -> Self {
        self.notes.narration = Some(text.into());
        self
    }

    /// The stage's JSON (docs/CLI.md) as a value; it is `Stage`'s `Serialize` (src/algo/json.rs),
    /// which `--json` streams.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a stage is plain data")
    }
}
