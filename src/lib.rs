//! Stagewise: parallel GPU algorithms run stage by stage on the real GPU, read back after every
//! pass and drawn, and timed at large N against the copy roofline.

pub mod algo;
pub mod bench;
pub mod cli;
pub mod data;
pub mod error;
pub mod export;
pub mod gpu;
pub mod lens;
pub mod lesson;
pub mod link;
pub mod par;
pub mod request;
pub mod selftest;
pub mod suite;
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod web;
pub mod wisdom;

pub use error::{Error, Result};
