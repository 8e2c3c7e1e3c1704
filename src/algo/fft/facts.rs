//! What an FFT run says about itself at the top level of its JSON (`RunResult::extra`), as types:
//! the room writes these fields by serialising them and the views read them back as the same
//! types, so a renamed field is a compile error on both sides, never a silently empty view.

use super::large_gen::Layout;
use super::{Kernel, Mode, Order};
use crate::algo::RunFacts;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The fields every FFT run prints, whichever kernel ran.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Facts {
    /// The FFT's size N (points per FFT).
    pub size: usize,
    pub batch: usize,
    pub order: Order,
    pub inverse: bool,
    pub mode: Mode,
    pub scaling: String,
    /// The kernel that ran (never `auto`).
    pub kernel: Kernel,
    /// Workgroup kernels: each invocation's elements E.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements_per_invocation: Option<usize>,
    /// Large plans: `[N1, N2]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<[usize; 2]>,
    /// Large plans: the passes' phases, fused steps and unpacking, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<PlanEntry>>,
    /// Workgroup kernels: where the Nyquist frequency sits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nyquist: Option<Nyquist>,
}

impl RunFacts for Facts {}

impl Facts {
    /// The plan's entry of kind fft for dispatch `pass` (its first phase).
    pub fn fft_entry(&self, pass: usize) -> Option<&FftEntry> {
        self.plan.iter().flatten().find_map(|e| match e {
            PlanEntry::Fft(f) if f.pass == pass => Some(f),
            _ => None,
        })
    }
}

/// Where the Nyquist frequency N/2 sits in a workgroup kernel's output.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Nyquist {
    pub frequency: usize,
    pub thread: usize,
    pub element: usize,
    pub raw_position: usize,
    pub rule: String,
    /// The value there, `[re, im]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Real FFTs: where the packed form keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed_into: Option<String>,
}

/// One entry of a large plan's JSON `"plan"`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PlanEntry {
    /// A phase of sub-FFTs.
    Fft(FftEntry),
    /// Twiddles fused into a phase's stores.
    Twiddle {
        pass: usize,
        phase: usize,
        fused: bool,
        rule: String,
    },
    /// A transposed store, or the columns stored in units (a BMMC permutation), fused into a pass.
    Permute {
        pass: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<usize>,
        fused: bool,
        /// The columns a unit holds, where this is the columns pass's store in units.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        units: Option<usize>,
        rule: String,
        /// The BMMC matrix's rows, as `run bmmc` prints them.
        matrix: Vec<String>,
    },
    /// Between the two phases of a pass through L2.
    L2Exchange {
        pass: usize,
        bytes_per_workgroup: usize,
        rule: String,
    },
    /// Between the two phases of a whole FFT chained in one dispatch (`--chain`): phase 0's
    /// workgroups and phase 1's, `lag` FFTs behind, synchronised per FFT by a counter.
    Chain {
        pass: usize,
        lag: usize,
        phase0_workgroups: usize,
        phase1_workgroups: usize,
        bytes_in_flight: usize,
        rule: String,
    },
    /// The real modes' unpacking.
    Unpack {
        pass: usize,
        mode: Mode,
        fused: bool,
    },
}

/// A phase of sub-FFTs in a large plan.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FftEntry {
    pub pass: usize,
    /// `whole`, `columns` or `rows`.
    pub dimension: String,
    pub sub_size: usize,
    /// Sub-FFTs per FFT.
    pub count: usize,
    pub stride: usize,
    pub elements_per_invocation: usize,
    pub lanes: usize,
    pub sequential: usize,
    pub parts: usize,
    pub workgroup_bytes: usize,
    /// Its values in workgroup memory between rounds: `padded`, `swizzled` or `plain`
    /// (`--exchange-layout`).
    #[serde(default)]
    pub exchange_layout: String,
    pub input_layout: Layout,
    pub output_layout: Layout,
    /// In a pass through L2: which phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<usize>,
    /// Where the pass is one of two through L2: `columns` or `rows`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner: Option<String>,
}
