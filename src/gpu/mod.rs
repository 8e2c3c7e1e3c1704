//! The GPU engine: one shared device ([`Gpu`]) and the pass runner (trace and timed modes).

pub mod adapter;
pub mod collect;
pub mod context;
pub mod runner;
pub mod timed;

pub use context::{Gpu, grid, specialize};
#[cfg(not(target_arch = "wasm32"))]
pub use runner::execute_blocking;
pub use runner::{Execution, Pass, Plan, Region, Running, execute, start};
pub use timed::{Timing, time, time_with};
