//! The session: everything needed to reproduce a run, saved on exit and in session files.

use super::*;
use crate::request::{InputSpec, Mode, RunSpec};

/// Everything needed to reproduce a run: saved in sessions and restored on start.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    pub algo: AlgoOptions,
    pub variant: String,
    pub dtype: DType,
    pub fill: Fill,
    pub log_n: u32,
    pub seed: u64,
    /// Used when `typed` is true.
    pub text: String,
    pub typed: bool,
    /// The room "Your kernel"'s element count (its `--n`; other rooms use `log_n`).
    pub n: Option<usize>,
    /// The session format's version ([`SESSION_VERSION`]; 0: written before it had one).
    #[serde(default)]
    pub version: u32,
    /// What was on screen: the stage, the tab, the lens.
    pub view: SessionView,
}

/// The format written now. Older files open (missing fields take their defaults); a newer one is
/// refused, naming both versions.
pub const SESSION_VERSION: u32 = 1;

impl Default for Session {
    fn default() -> Self {
        Session {
            algo: AlgoOptions::Bitrev(Default::default()),
            variant: "staged".into(),
            dtype: DType::U32,
            fill: Fill::Example,
            log_n: 4,
            seed: 1,
            text: String::new(),
            typed: false,
            n: None,
            version: SESSION_VERSION,
            view: SessionView::default(),
        }
    }
}

impl Session {
    pub fn load(path: &std::path::Path) -> Result<Session> {
        let s = std::fs::read(path)
            .map_err(|e| Error::Io(format!("cannot read session '{}': {e}", path.display())))?;
        Self::from_json(&path.display().to_string(), &s)
    }

    /// A session from a file's contents (`name`: the file, for errors).
    pub fn from_json(name: &str, bytes: &[u8]) -> Result<Session> {
        let s: Session = serde_json::from_slice(bytes)
            .map_err(|e| Error::Input(format!("session '{name}': line {}: {e}", e.line())))?;
        if s.version > SESSION_VERSION {
            return Err(Error::Input(format!(
                "session '{name}': version {} is newer than this Stagewise reads ({SESSION_VERSION})",
                s.version
            )));
        }
        Ok(s)
    }

    /// The session as saved: the room *Your kernel*'s text goes in with its path, so the file
    /// opens on a machine that lacks that path (an unreadable file keeps the path alone).
    pub fn with_kernel_text(mut self) -> Session {
        if let AlgoOptions::Kernel(o) = &mut self.algo
            && o.source.is_none()
            && let Some(text) = o
                .wgsl
                .as_ref()
                .and_then(|p| std::fs::read_to_string(p).ok())
        {
            o.source = Some(text);
        }
        self
    }

    /// A session as opened here: where its kernel's path exists, that file is the kernel (the
    /// room watches it) and the saved copy is dropped; where it does not, the saved text is used
    /// and the returned note says so.
    pub fn localize_kernel(&mut self) -> Option<String> {
        let AlgoOptions::Kernel(o) = &mut self.algo else {
            return None;
        };
        let path = o.wgsl.clone()?;
        o.source.as_ref()?;
        if cfg!(not(target_arch = "wasm32")) && path.is_file() {
            o.source = None;
            return None;
        }
        Some(format!(
            "{} is not on this machine: the session's copy of the kernel is used",
            path.display()
        ))
    }

    /// The element type runs use: the algorithm's own when it has one (the FFT's f32).
    /// The user's kernel's is that of its src and dst arrays.
    pub fn dtype(&self) -> DType {
        if let AlgoOptions::Kernel(o) = &self.algo
            && let Ok(e) = crate::algo::kernel::element_of(o)
        {
            return e.dtype();
        }
        self.algo.algo().fixed_dtype().unwrap_or(self.dtype)
    }

    /// The request this session makes (the app always traces).
    pub fn spec(&self) -> RunSpec {
        let input = if self.typed {
            InputSpec::Text {
                text: self.text.clone(),
            }
        } else {
            let n = match (&self.algo, self.n) {
                (_, _) if self.fill == Fill::Example => None,
                (AlgoOptions::Kernel(_), Some(n)) => Some(n),
                _ => Some(
                    self.algo
                        .algo()
                        .default_len()
                        .unwrap_or(1usize << self.log_n),
                ),
            };
            InputSpec::Generate {
                n,
                fill: Some(self.fill),
                seed: self.seed,
            }
        };
        RunSpec {
            algo: self.algo.clone(),
            variant: Some(self.variant.clone()),
            dtype: Some(self.dtype()),
            input,
            mode: Mode::Trace,
        }
    }

    /// The run this session describes, checked (an option a traced run would ignore is said,
    /// not dropped).
    pub fn job(&self) -> Result<RunJob> {
        let req = self.spec().resolve()?;
        Ok(RunJob {
            algo: self.algo.clone(),
            variant: req.variant.name.to_string(),
            dtype: req.dtype,
            input: req.input,
            plain: None,
        })
    }

    /// The input this session describes.
    pub fn input(&self) -> Result<Data> {
        self.spec().input_data()
    }
}
