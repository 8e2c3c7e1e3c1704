//! What a scan run says about itself at the top level of its JSON (`RunResult::extra`), as a type
//! the room serialises and the view reads back (a renamed field is a compile error on both sides).

use crate::algo::RunFacts;
use serde::{Deserialize, Serialize};

/// The scan's form and, for the tiled variants, the tile shape (known before the run).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Facts {
    pub exclusive: bool,
    pub form: Form,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<Tile>,
}

impl RunFacts for Facts {}

/// What the output holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Form {
    #[serde(rename = "prefix sums")]
    Prefix,
    /// Folded without --mirror.
    #[serde(rename = "suffix sums")]
    Suffix,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Prefix => "prefix sums",
            Form::Suffix => "suffix sums",
        }
    }
}

/// The tile shape of reduce-then-scan and decoupled.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tile {
    pub tile_elements: usize,
    pub workgroup_size: u32,
    pub per_thread_vec4: u32,
    pub tiles: usize,
    /// Decoupled: `subgroup` or `workgroup-memory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile_scan: Option<String>,
    /// Decoupled: `dispatch` or `counter` (how a workgroup learns its tile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile_order: Option<String>,
}
