//! The GPU engine: one shared device ([`Gpu`]) and the pass runner (trace and timed modes).
//! It knows no instrument: one plugs in through [`hook::Instrument`].

pub mod adapter;
pub mod collect;
pub mod context;
pub mod hook;
pub mod pipeline;
pub mod runner;
pub mod timed;

pub use context::{Gpu, grid, specialize, unroll};
#[cfg(not(target_arch = "wasm32"))]
pub use runner::execute_blocking;
pub use runner::{Execution, Pass, Plan, Region, Running, execute, start};
pub use timed::{Timing, time, time_with};
