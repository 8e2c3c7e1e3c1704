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
pub mod view;
#[cfg(target_arch = "wasm32")]
pub mod web;
pub mod wisdom;

pub use error::{Error, Result};

/// Stagewise's folder in the platform's data directory (`$XDG_DATA_HOME/stagewise`, else
/// `~/.local/share/stagewise`, else the temp folder): exercise copies, wisdom.
pub fn data_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("stagewise")
}
