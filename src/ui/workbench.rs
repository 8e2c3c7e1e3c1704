//! The room "Your kernel": the workbench's state in the app. The user's `.wgsl` file is watched
//! (its modification time read every [`POLL`] off the UI thread) and re-run on save; a compile error keeps its
//! place in the file (shown with the line highlighted) while the last good trace stays on screen;
//! the exercises of assets/exercises are copied to a user-writable folder and opened from there.

use crate::algo::RunResult;
use crate::algo::kernel::exercise::Exercise;
use crate::error::{Error, Result};
use crate::lens::LensReport;
use eframe::egui::{self, Color32, RichText};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

mod tune;
pub use tune::Tune;

/// How often the kernel file's modification time is read.
pub const POLL: Duration = Duration::from_millis(300);

/// The `--expect` ops the room's combo offers (free text takes any other, e.g. `bmmc:<matrix>`).
pub const EXPECT_OPS: &[(&str, &str)] = &[
    ("copy", "dst = src"),
    ("bitrev", "every element at its bit-reversed index"),
    (
        "bmmc:bitrev",
        "a BMMC permutation: a preset name or a matrix",
    ),
    (
        "transpose:6,7",
        "transpose a 2^6 × 2^7 matrix (R,C as log2)",
    ),
    ("scan", "inclusive prefix sums"),
    ("scan-exclusive", "exclusive prefix sums"),
    ("sort", "ascending"),
    ("sort-desc", "descending"),
    ("fft:256", "FFTs of 256 complex points (vec2<f32>)"),
];

/// A failure of the user's kernel at a place in their file: `FILE:LINE:COL: message`.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelError {
    /// 1-based, as naga counts.
    pub line: usize,
    pub col: usize,
    /// The whole one-line message (with its FILE:LINE:COL).
    pub message: String,
    /// The file as it was when it failed.
    pub source: String,
}

impl KernelError {
    /// The place in `message` of the form `{file}:LINE:COL: …` (None: no place in the file).
    pub fn locate(file: &str, message: &str) -> Option<(usize, usize)> {
        let at = message.find(&format!("{file}:"))? + file.len() + 1;
        let mut it = message[at..].splitn(3, ':');
        let line = it.next()?.trim().parse().ok()?;
        let col = it.next()?.trim().parse().ok()?;
        it.next()?;
        Some((line, col))
    }
}

/// The file's identity on disk for the watch: modification time and length (None: unreadable).
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// A thread that reads the file's stamp every [`POLL`] and wakes the UI when it changed (so an
/// idle app needs no repaint loop to notice a save). Dropped: the thread ends at its next read.
struct Watch {
    path: PathBuf,
    changed: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    fn start(path: &Path, ctx: egui::Context) -> Watch {
        let (changed, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (c, s, p) = (changed.clone(), stop.clone(), path.to_path_buf());
        // The baseline is read now: a save right after the file was chosen is a change.
        let mut last = stamp(path);
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(POLL);
                let now = stamp(&p);
                if now != last {
                    last = now;
                    c.store(true, Ordering::Relaxed);
                    ctx.request_repaint();
                }
            }
        });
        Watch {
            path: path.to_path_buf(),
            changed,
            stop,
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Where exercise copies go: the platform's data folder, else the temp folder.
pub fn default_home() -> PathBuf {
    crate::data_dir().join("exercises")
}

/// The exercises shipped with Stagewise: `STAGEWISE_EXERCISES`, else assets/exercises of the source
/// tree it was built from, beside the executable, or in the working folder.
pub fn exercises_root() -> Option<PathBuf> {
    let mut c: Vec<PathBuf> = std::env::var_os("STAGEWISE_EXERCISES")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    c.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/exercises"));
    if let Some(d) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        c.push(d.join("assets/exercises"));
    }
    c.push(PathBuf::from("assets/exercises"));
    c.into_iter().find(|p| p.is_dir())
}

/// The exercise open in the room, with its statement and the copy the user edits.
#[derive(Clone, Debug)]
pub struct OpenExercise {
    pub exercise: Exercise,
    pub statement: String,
    pub file: PathBuf,
}

#[derive(Default)]
pub struct Workbench {
    /// Where exercise copies go (None: [`default_home`]; tests give their own).
    pub home: Option<PathBuf>,
    pub exercise: Option<OpenExercise>,
    /// The last run failed at this place in the file (the last good result stays on screen).
    pub error: Option<KernelError>,
    /// The last run failed without a place in the file (a contract or option error).
    pub failure: Option<String>,
    /// The watched file.
    watch: Option<Watch>,
    /// The file changed: run when the run in flight (if any) is done.
    pub due: bool,
    /// Runs started because the file changed on disk.
    pub reruns: u64,
    /// The room's options when the picker left it.
    pub kept: Option<crate::algo::kernel::Options>,
    /// When the run in flight started (to say how long a kernel has been running).
    pub started: Option<web_time::Instant>,
    /// The browser's edits of each exercise (by name), kept while the page is open.
    pub texts: std::collections::HashMap<String, String>,
    /// Text of the options that the CLI takes as lists (kept as typed).
    pub entry: String,
    pub params: String,
    pub overrides: String,
    pub path: String,
    /// The Tune section: the kernel's override constants tuned on the app's device.
    pub tune: Tune,
    /// A run was asked for while the tuning ran: it starts when the tuning ends.
    pub after_tuning: bool,
    /// Where kernel wisdom is read and saved (None: this adapter's file in the data folder;
    /// tests give their own).
    pub wisdom_file: Option<PathBuf>,
    /// What the shown run took from kernel wisdom.
    pub wisdom: RunWisdom,
}

/// What a run of the room took from the file's kernel wisdom (`run kernel` takes the same).
#[derive(Clone, Debug, Default)]
pub struct RunWisdom {
    /// The overrides filled in (not typed by the user) and the file they came from.
    pub applied: crate::wisdom::Applied,
    /// A kernel wisdom file that could not be used, or a choice the adapter refused.
    pub warning: Option<String>,
    /// The options the run ran with, when wisdom filled some (the lens records these).
    pub options: Option<crate::algo::kernel::Options>,
}

impl Workbench {
    /// Watch `path` (a new path starts a new watch); true when it changed on disk since the
    /// last call.
    pub fn poll(&mut self, path: &Path, ctx: &egui::Context) -> bool {
        match &self.watch {
            Some(w) if w.path == path => w.changed.swap(false, Ordering::Relaxed),
            _ => {
                self.watch = Some(Watch::start(path, ctx.clone()));
                false
            }
        }
    }

    /// Stop watching (a new file): the next [`Self::poll`] starts from its state then.
    pub fn rewatch(&mut self) {
        self.watch = None;
    }

    /// A run of `file` finished: the error is gone.
    pub fn ran(&mut self) {
        self.error = None;
        self.failure = None;
    }

    /// A run of the kernel of `o` failed with `e`: at a place in it (a compile error), or not.
    pub fn failed(&mut self, o: &crate::algo::kernel::Options, e: &Error) {
        let msg = e.to_string();
        let place = o
            .kernel_text()
            .ok()
            .and_then(|(name, text)| KernelError::locate(&name, &msg).map(|p| (p, text)));
        match place {
            Some(((line, col), source)) => {
                self.error = Some(KernelError {
                    line,
                    col,
                    message: msg,
                    source,
                });
                self.failure = None;
            }
            None => {
                self.error = None;
                self.failure = Some(msg);
            }
        }
    }

    /// The folder an exercise's copy goes to.
    pub fn home(&self) -> PathBuf {
        self.home.clone().unwrap_or_else(default_home)
    }

    /// Copy `ex`'s starter into [`Self::home`] (an existing copy is the user's work and stays,
    /// unless `reset`) and make it the open exercise; returns the copy's path.
    pub fn open(&mut self, ex: &Exercise, reset: bool) -> Result<PathBuf> {
        let dir = self.home().join(ex.name());
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Io(format!("cannot create '{}': {e}", dir.display())))?;
        let file = dir.join("kernel.wgsl");
        if reset || !file.exists() {
            std::fs::write(&file, ex.starter_text()?)
                .map_err(|e| Error::Io(format!("cannot write '{}': {e}", file.display())))?;
        }
        let statement = ex.statement_text();
        self.exercise = Some(OpenExercise {
            exercise: ex.clone(),
            statement,
            file: file.clone(),
        });
        self.error = None;
        self.failure = None;
        self.rewatch();
        Ok(file)
    }

    /// The browser's [`Self::open`]: no folder to copy to, the text is the editor's. Returns the
    /// text to edit: the page's earlier edits of `ex` unless `reset`, else its starter.
    pub fn open_text(&mut self, ex: &Exercise, reset: bool) -> Result<String> {
        let text = match self.texts.get(&ex.name()) {
            Some(t) if !reset => t.clone(),
            _ => ex.starter_text()?,
        };
        self.exercise = Some(OpenExercise {
            exercise: ex.clone(),
            statement: ex.statement_text(),
            file: PathBuf::from(ex.name()).join("kernel.wgsl"),
        });
        self.error = None;
        self.failure = None;
        Ok(text)
    }
}

/// The kernel a new page's editor starts from: a copy, one element an invocation.
pub const TEMPLATE: &str =
    "// Bindings: src, dst (group 0), optional scratch and params (docs/CLI.md).
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&src)) {
        dst[i] = src[i];
    }
}
";

/// The worst global access of a lens report: sectors a request of the site with the most.
pub fn worst_sectors(rep: &LensReport) -> Option<(f64, String)> {
    rep.passes
        .iter()
        .flat_map(|p| p.global.iter())
        .map(|g| {
            (
                g.sectors as f64 / g.requests.max(1) as f64,
                crate::algo::kernel::exercise::site_name(
                    g.line,
                    &format!("{:?}", g.kind).to_lowercase(),
                    &g.buffer,
                ),
            )
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The check of a finished run, in one line, and whether it passed (the grader's words).
pub fn verdict(r: &RunResult) -> (String, bool) {
    crate::algo::kernel::exercise::check_line(r.verified, r.mismatch.as_deref())
}

/// An exercise's goal against the run and the lens (the grader's words).
pub fn goal_line(ex: &Exercise, r: &RunResult, lens: Option<&LensReport>) -> (String, bool) {
    ex.goal_line(
        r.verified,
        lens.and_then(|l| worst_sectors(l).map(|w| (l.warp, w.0, w.1))),
    )
}

/// `s` with every character the UI's fonts cannot draw as `?`: the text comes from the user's and
/// the exercises' files (a missing glyph is a box in the app, and a panic under kittest).
pub fn drawable(ctx: &egui::Context, s: &str, mono: bool) -> String {
    if s.is_ascii() {
        return s.to_string();
    }
    let id = if mono {
        egui::FontId::monospace(11.0)
    } else {
        egui::FontId::proportional(14.0)
    };
    ctx.fonts_mut(|f| {
        s.chars()
            .map(|c| {
                if c.is_control() || f.has_glyph(&id, c) {
                    c
                } else {
                    '?'
                }
            })
            .collect()
    })
}

/// The user's file with the failing line highlighted, scrolled to it.
pub fn error_code(ui: &mut egui::Ui, e: &KernelError) {
    ui.heading("Your kernel does not compile");
    ui.colored_label(
        Color32::from_rgb(230, 90, 90),
        drawable(ui.ctx(), &e.message, false),
    );
    ui.small("The last good result stays on screen; save the file to run it again.");
    ui.separator();
    let bg = Color32::from_rgb(120, 40, 40);
    // Scroll to the failing line once per error, not every frame.
    let key = egui::Id::unique("kernel-error-scrolled");
    let scroll = ui.data(|d| d.get_temp::<String>(key)).as_deref() != Some(e.message.as_str());
    ui.data_mut(|d| d.insert_temp(key, e.message.clone()));
    egui::ScrollArea::both()
        .id_salt("kernel-error-code")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.spacing_mut().item_spacing.y = 0.0;
            for (n, line) in e.source.lines().enumerate() {
                let line = drawable(ui.ctx(), line, true);
                let text = RichText::new(format!("{:>3}  {line}", n + 1))
                    .monospace()
                    .size(11.0);
                if n + 1 == e.line {
                    let r = ui.add(
                        egui::Label::new(text.background_color(bg).color(Color32::WHITE))
                            .wrap_mode(egui::TextWrapMode::Extend),
                    );
                    let caret = format!("{}^ column {}", " ".repeat(e.col + 4), e.col);
                    ui.label(RichText::new(caret).monospace().size(11.0));
                    if scroll {
                        r.scroll_to_me(Some(egui::Align::Center));
                    }
                } else {
                    ui.add(egui::Label::new(text.weak()).wrap_mode(egui::TextWrapMode::Extend));
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compile_error_is_located_in_its_file() {
        let m = "/tmp/x/k.wgsl:12:7: expected ';', found 'let'";
        assert_eq!(KernelError::locate("/tmp/x/k.wgsl", m), Some((12, 7)));
        assert_eq!(KernelError::locate("/tmp/x/other.wgsl", m), None);
        assert_eq!(
            KernelError::locate("k.wgsl", "k.wgsl: no entry point"),
            None
        );
    }

    #[test]
    fn the_watch_sees_a_change_and_not_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("k.wgsl");
        std::fs::write(&f, "a").unwrap();
        let ctx = egui::Context::default();
        let mut w = Workbench::default();
        assert!(!w.poll(&f, &ctx), "a new file is the baseline");
        std::thread::sleep(POLL * 2);
        assert!(!w.poll(&f, &ctx), "unchanged");
        std::fs::write(&f, "ab").unwrap();
        std::thread::sleep(POLL * 3);
        assert!(w.poll(&f, &ctx), "changed on disk");
        assert!(!w.poll(&f, &ctx), "told once");
        std::fs::remove_dir_all(&dir).ok();
    }
}
