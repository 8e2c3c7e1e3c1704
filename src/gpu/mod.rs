//! The GPU engine: one shared device ([`Gpu`]) and the pass runner (trace and timed modes).

pub mod adapter;
pub mod context;
pub mod runner;

pub use context::{Gpu, grid, specialize};
pub use runner::{Execution, Pass, Plan, Region, Timing, execute, time, time_with};
