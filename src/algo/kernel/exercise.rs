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
    /// Its place in the course (docs/ALGORITHMS.md's order, the easier of a seed's first): menus
    /// and the grader list exercises by it.
    #[serde(default)]
    pub order: u32,
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
    /// The tuning step, where the exercise has one: `NAME=V1,V2,…` lists of its kernel's
    /// `override` constants for `tune kernel --override` (the app prefills its Tune section).
    #[serde(default)]
    pub tune: Vec<String>,
    #[serde(skip)]
    pub dir: PathBuf,
}

/// (name, exercise.toml, statement.md, starter.wgsl) of every exercise in assets/exercises, built
/// in (a unit test keeps the list equal to the folder).
macro_rules! shipped {
    ($($name:literal),* $(,)?) => {
        &[$((
            $name,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/exercises/", $name, "/exercise.toml")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/exercises/", $name, "/statement.md")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/exercises/", $name, "/starter.wgsl")),
        )),*]
    };
}

const SHIPPED: &[(&str, &str, &str, &str)] = shipped!(
    "bitrev-coalesced",
    "bitrev-naive",
    "bpc-tiles",
    "fft-exchange",
    "oddeven-transposition",
    "scan-ladder",
);

impl Exercise {
    pub fn load(dir: &Path) -> Result<Exercise> {
        let path = dir.join("exercise.toml");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Io(format!("cannot read '{}': {e}", path.display())))?;
        Self::parse(&path, &text, dir)
    }

    fn parse(path: &Path, text: &str, dir: &Path) -> Result<Exercise> {
        let mut ex: Exercise = toml::from_str(text).map_err(|e| {
            Error::Input(format!(
                "{}: {}",
                path.display(),
                e.message().split_whitespace().collect::<Vec<_>>().join(" ")
            ))
        })?;
        ex.dir = dir.to_path_buf();
        Ok(ex)
    }

    /// The exercises built into the binary (the browser has no folder to read), by name; each
    /// one's `dir` is its name.
    pub fn shipped() -> Result<Vec<Exercise>> {
        SHIPPED
            .iter()
            .map(|(name, toml, _, _)| {
                let dir = Path::new(name);
                Self::parse(&dir.join("exercise.toml"), toml, dir)
            })
            .collect::<Result<Vec<_>>>()
            .map(in_course_order)
    }

    fn shipped_files(
        &self,
    ) -> Option<&'static (&'static str, &'static str, &'static str, &'static str)> {
        SHIPPED.iter().find(|f| f.0 == self.name())
    }

    /// The starter kernel: the folder's file, else the built-in copy.
    pub fn starter_text(&self) -> Result<String> {
        std::fs::read_to_string(self.starter()).or_else(|e| {
            self.shipped_files()
                .map(|f| f.3.to_string())
                .ok_or_else(|| {
                    Error::Io(format!("cannot read '{}': {e}", self.starter().display()))
                })
        })
    }

    /// The statement: the folder's file, else the built-in copy (empty where there is neither).
    pub fn statement_text(&self) -> String {
        std::fs::read_to_string(self.statement())
            .ok()
            .or_else(|| self.shipped_files().map(|f| f.2.to_string()))
            .unwrap_or_default()
    }

    /// Every exercise under `root`, by name.
    pub fn all(root: &Path) -> Result<Vec<Exercise>> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .map_err(|e| Error::Io(format!("cannot read '{}': {e}", root.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("exercise.toml").is_file())
            .collect();
        dirs.sort();
        dirs.iter()
            .map(|d| Exercise::load(d))
            .collect::<Result<Vec<_>>>()
            .map(in_course_order)
    }

    /// The folder's name.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    }

    /// The goal against a run: met, how far from it, or what to do to see. `worst`: the lens's
    /// warp and its worst global site (sectors a request, [`site_name`]), where it ran. The app
    /// and the grader say the same.
    pub fn goal_line(&self, verified: bool, worst: Option<(u32, f64, String)>) -> (String, bool) {
        if !verified {
            return (format!("goal: {}", self.goal), false);
        }
        let Some(max) = self.lens_max_sectors else {
            return ("goal met".into(), true);
        };
        match worst {
            Some((32, s, _)) if s <= max + 1e-9 => (
                format!("goal met: at most {s:.2} sectors a request (goal: at most {max})"),
                true,
            ),
            Some((32, s, site)) => (
                format!("goal: {max} sectors a request, yours {s:.2} at {site}"),
                false,
            ),
            Some((w, _, _)) => (
                format!(
                    "goal: at most {max} sectors a request at warp 32; the lens ran at warp {w}"
                ),
                false,
            ),
            None => (
                format!(
                    "goal: at most {max} sectors a request: the memory lens (warp 32) measures it"
                ),
                false,
            ),
        }
    }

    pub fn starter(&self) -> PathBuf {
        self.dir.join("starter.wgsl")
    }

    pub fn statement(&self) -> PathBuf {
        self.dir.join("statement.md")
    }
}

/// Exercises by their place in the course, then by name.
fn in_course_order(mut v: Vec<Exercise>) -> Vec<Exercise> {
    v.sort_by_key(|e| (e.order, e.name()));
    v
}

/// A global access site as the goal names it: `line 12 (read src)`.
pub fn site_name(line: u32, kind: &str, buffer: &str) -> String {
    format!("line {line} ({kind} {buffer})")
}

/// A finished run's check in one line, and whether it passed: verified, wrong (where), or not
/// checked.
pub fn check_line(verified: bool, mismatch: Option<&str>) -> (String, bool) {
    if verified {
        ("verified: the output equals the expected op".into(), true)
    } else if let Some(m) = mismatch {
        (format!("wrong: {m}"), false)
    } else {
        (
            "not checked: give an expected op (--expect) to verify the output".into(),
            false,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_exercises_are_the_folders() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/exercises");
        let on_disk = Exercise::all(&root).unwrap();
        let shipped = Exercise::shipped().unwrap();
        let names = |v: &[Exercise]| v.iter().map(Exercise::name).collect::<Vec<_>>();
        assert_eq!(names(&on_disk), names(&shipped));
        // The course's order: a seed's easier exercise first ("the next exercise fixes that").
        assert_eq!(
            names(&shipped),
            [
                "bitrev-naive",
                "bitrev-coalesced",
                "bpc-tiles",
                "oddeven-transposition",
                "scan-ladder",
                "fft-exchange"
            ]
        );
        for (d, b) in on_disk.iter().zip(&shipped) {
            assert_eq!(
                (&d.title, &d.expect, &d.args),
                (&b.title, &b.expect, &b.args)
            );
            // The built-in texts are the files' (a shipped exercise has no folder to read).
            let f = b.shipped_files().unwrap();
            assert_eq!(d.starter_text().unwrap(), f.3);
            assert_eq!(d.statement_text(), f.2);
            assert!(!b.starter().exists() && b.starter_text().unwrap() == f.3);
        }
    }
}
