//! What a bmmc run says about itself at the top level of its JSON (`RunResult::extra`), as types:
//! the room writes these fields by serialising them and the views read them back as the same
//! types, so a renamed field is a compile error on both sides.

use crate::algo::RunFacts;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The map and its plan (known before the GPU runs).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Facts {
    /// n: the index bits.
    pub log_n: usize,
    /// A's rows, as `--matrix` takes them.
    pub matrix: Vec<String>,
    pub complement: u32,
    /// A is a permutation matrix.
    pub bpc: bool,
    /// The passes as JSON (`PassSpec::to_json`).
    pub plan: Vec<Value>,
    pub pass_count: usize,
    /// The seed plans: the BPC part's ranks and Cormen's bound.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
}

/// The ranks of a BPC part and Cormen's bound on its passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    pub m: usize,
    pub b: usize,
    pub rank_m: usize,
    pub rank_b: usize,
    pub bound_iterations: usize,
    pub bound_passes: usize,
    /// The passes the plan took for it.
    pub bpc_passes: usize,
}

impl RunFacts for Facts {}
