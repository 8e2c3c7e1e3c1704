//! The wisdom the app's runs use: where it came from, in a word or a few.

use super::PAGE;
use crate::gpu::Gpu;
use crate::wisdom::{self, Loaded, Origin, Source};
use std::sync::Arc;

/// The wisdom the app's timed runs fill unset options from: loaded for the app's device at start
/// (`STAGEWISE_WISDOM`, or `--wisdom FILE` / `--no-wisdom` when the binary opens the app), again
/// after a tune or Forget. A file that cannot be used leaves a warning and the built-in defaults.
#[derive(Clone, Debug, Default)]
pub struct InUse {
    pub source: Source,
    pub loaded: Option<Arc<Loaded>>,
    pub warning: Option<String>,
}

impl InUse {
    /// Load `source`'s wisdom for `gpu` (never fails: see [`wisdom::load`]).
    pub fn load(gpu: &Gpu, source: Source) -> InUse {
        let (loaded, warning) = wisdom::load(gpu, &source);
        InUse {
            source,
            loaded: loaded.map(Arc::new),
            warning,
        }
    }

    /// Where it came from, in a word: local, shipped, file, page, off or none.
    pub fn word(&self, gpu: &Gpu) -> &'static str {
        match &self.loaded {
            None if self.source == Source::Off => "off",
            None => "none",
            Some(l) if l.from == PAGE => "this page",
            Some(l) => match l.origin(gpu) {
                Origin::Local => "local",
                Origin::Shipped => "shipped",
                Origin::File => "file",
            },
        }
    }

    /// Where it came from, in a few words: "local: FILE", "shipped: FILE", "file: FILE", or none.
    pub fn origin(&self, gpu: &Gpu) -> String {
        match &self.loaded {
            None if self.source == Source::Off => {
                "none: off (--no-wisdom or STAGEWISE_WISDOM=off)".into()
            }
            None => "none: the built-in defaults".into(),
            Some(l) if l.from == PAGE => format!("tuned on {PAGE}"),
            Some(l) => {
                let word = match l.origin(gpu) {
                    Origin::Local => "local",
                    Origin::Shipped => "shipped",
                    Origin::File => "file",
                };
                format!("{word}: {}", l.from)
            }
        }
    }
}
