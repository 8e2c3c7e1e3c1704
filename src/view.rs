//! What is on screen, below the front ends: the central panel's tab and what a session or a link
//! shows when it opens. The app (`ui::app` re-exports both), the links and the lessons share them.

use serde::{Deserialize, Serialize};

/// The central panel's tab (a session's `view.tab`: `stages` or `performance`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tab {
    #[default]
    Stages,
    Performance,
}

/// What a session shows when it opens.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionView {
    /// The stage shown once the run's trace has it (0: the input); unset: the first pass's result.
    pub stage: Option<usize>,
    /// The tab: `stages` or `performance` (the lab).
    pub tab: Tab,
    /// The memory lens under the stage view.
    pub lens: bool,
}
