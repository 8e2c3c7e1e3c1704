//! The workbench's exercises (`assets/exercises/<name>/`): a starter kernel with TODOs, a short
//! statement, the op it must compute (`--expect`), the run's arguments and a goal the check or
//! the lens confirms. The reference solutions live in tests/exercises/ (tests/kernel.rs runs them).

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// How the starter fails before the student's work: its output is wrong (exit 3), or Stagewise
/// refuses to compile it and the error is the lesson (exit 1).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StarterFails {
    Verify,
    Compile,
}

/// One exercise's `exercise.toml`, and where it lies.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exercise {
    pub title: String,
    /// The design note in shared/seeds it comes from.
    pub seed: String,
    /// The `--expect` op.
    pub expect: String,
    /// The run's other arguments (`--n`, `--passes`, `--param`, …).
    pub args: Vec<String>,
    pub goal: String,
    /// With `--lens --lens-warp 32`: every global access site at most this many sectors a request.
    pub lens_max_sectors: Option<f64>,
    pub starter_fails: StarterFails,
    /// A phrase of the starter's compile error (with `starter_fails = "compile"`).
    pub starter_error: Option<String>,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Exercise {
    pub fn load(dir: &Path) -> Result<Exercise> {
        let path = dir.join("exercise.toml");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Io(format!("cannot read '{}': {e}", path.display())))?;
        let mut ex: Exercise = toml::from_str(&text).map_err(|e| {
            Error::Input(format!(
                "{}: {}",
                path.display(),
                e.message().split_whitespace().collect::<Vec<_>>().join(" ")
            ))
        })?;
        ex.dir = dir.to_path_buf();
        Ok(ex)
    }

    /// Every exercise under `root`, by name.
    pub fn all(root: &Path) -> Result<Vec<Exercise>> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .map_err(|e| Error::Io(format!("cannot read '{}': {e}", root.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("exercise.toml").is_file())
            .collect();
        dirs.sort();
        dirs.iter().map(|d| Exercise::load(d)).collect()
    }

    /// The folder's name.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    }

    pub fn starter(&self) -> PathBuf {
        self.dir.join("starter.wgsl")
    }

    pub fn statement(&self) -> PathBuf {
        self.dir.join("statement.md")
    }
}
