//! The room's Tune section's state: value lists for the kernel's `override` constants, the
//! tuning on a worker on the app's device, its rows and report (`stagewise tune kernel`).

use super::POLL;
use crate::algo::kernel::overrides::{Kind, Override};
use crate::error::{Error, Result};
use crate::ui::task::Worker;
use crate::wisdom::kernel_tune::{Event, Reference, Report, Row, Setup};
use eframe::egui;

/// What the tuning worker sends.
enum TuneMsg {
    Started(usize),
    Copy(Reference),
    Builtin(Reference),
    Row(usize, Row),
    Done(Result<Report>),
}

/// The room's Tune section (`stagewise tune kernel` in the app): value lists per override of the
/// kernel, prefilled; the tuning on a worker on the app's own device (its rows as they finish, a
/// Stop); the report with its best row, which can become the runs' overrides or the file's
/// kernel wisdom.
pub struct Tune {
    /// The kernel's overrides as last read, and the text's hash they were read from.
    pub declared: Vec<Override>,
    read_for: Option<String>,
    read_at: Option<web_time::Instant>,
    /// Per override: the values to try, comma-separated, as typed.
    pub lists: Vec<(String, String)>,
    /// Timed at 2^log_n elements.
    pub log_n: u32,
    pub reps: usize,
    running: Option<Worker<TuneMsg>>,
    pub total: usize,
    pub copy: Option<Reference>,
    pub builtin: Option<Reference>,
    /// (grid index, row) as they finished.
    pub rows: Vec<(usize, Row)>,
    pub report: Option<Report>,
    /// Why the last tuning did not finish (stopped, or an error).
    pub error: Option<String>,
    /// Where the best was saved.
    pub saved: Option<String>,
}

impl Default for Tune {
    fn default() -> Self {
        Tune {
            declared: Vec::new(),
            read_for: None,
            read_at: None,
            lists: Vec::new(),
            log_n: 20,
            reps: 10,
            running: None,
            total: 0,
            copy: None,
            builtin: None,
            rows: Vec::new(),
            report: None,
            error: None,
            saved: None,
        }
    }
}

/// Values to try around a default: half, it, twice (a bool: both; no default: none).
fn around(o: &Override) -> String {
    let Some(d) = o.default else {
        return String::new();
    };
    let vs: Vec<f64> = match o.kind {
        Kind::Bool => vec![0.0, 1.0],
        Kind::U32 if d < 2.0 => vec![d, d + 1.0, d + 2.0],
        Kind::U32 | Kind::I32 => vec![(d / 2.0).trunc(), d, d * 2.0],
        Kind::F32 => vec![d / 2.0, d, d * 2.0],
    };
    let mut out: Vec<String> = Vec::new();
    for v in vs {
        let t = o.kind.show(v);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out.join(",")
}

impl Tune {
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Read the kernel's overrides again where its text changed (at most every [`POLL`]); new
    /// overrides get value lists: the exercise's (`NAME=V1,V2` of its tuning step), else around
    /// their defaults.
    pub fn refresh(&mut self, opts: &crate::algo::kernel::Options, exercise: &[String]) {
        if self.read_at.is_some_and(|t| t.elapsed() < POLL) {
            return;
        }
        self.read_at = Some(web_time::Instant::now());
        let Ok((name, text)) = opts.kernel_text() else {
            self.declared.clear();
            self.read_for = None;
            return;
        };
        let hash = crate::wisdom::kernel::content_hash(&text);
        if self.read_for.as_deref() == Some(hash.as_str()) {
            return;
        }
        self.read_for = Some(hash);
        self.declared = match crate::algo::kernel::contract::compile(&name, &text) {
            Ok((m, info)) => crate::algo::kernel::overrides::declared(&m, &info),
            // A kernel that does not compile keeps the lists it had (its error shows above).
            Err(_) => return,
        };
        let given = |n: &str| {
            exercise
                .iter()
                .find_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == n))
                .map(|(_, v)| v.trim().to_string())
        };
        let old = std::mem::take(&mut self.lists);
        for o in &self.declared {
            let kept = old.iter().find(|(n, _)| n == &o.name).map(|l| l.1.clone());
            let text = kept.or_else(|| given(&o.name)).unwrap_or_else(|| around(o));
            self.lists.push((o.name.clone(), text));
        }
    }

    /// The value lists as `--override NAME=V1,V2` (empty lists: the override is not tuned).
    pub fn list_words(&self) -> Vec<String> {
        self.lists
            .iter()
            .filter(|(_, v)| !v.trim().is_empty())
            .map(|(n, v)| format!("{n}={}", v.split_whitespace().collect::<String>()))
            .collect()
    }

    /// Start tuning `opts`'s kernel on `gpu` (the app's device: no second one is opened). The
    /// overrides `opts` gives and the lists leave out are held at their values; the same-run
    /// copy takes its shape from `wisdom`, as `stagewise tune kernel` does.
    pub fn start(
        &mut self,
        gpu: &crate::gpu::Gpu,
        opts: &crate::algo::kernel::Options,
        wisdom: Option<&crate::wisdom::Loaded>,
        ctx: &egui::Context,
    ) {
        let lists = self.list_words();
        let mut opts = opts.clone();
        let tuned: Vec<String> = lists
            .iter()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
            .collect();
        opts.overrides.retain(|g| {
            !g.split_once('=')
                .is_some_and(|(k, _)| tuned.iter().any(|t| t == k.trim()))
        });
        let setup = Setup {
            opts,
            lists,
            n: 1usize << self.log_n,
            reps: self.reps.max(1),
            roofline: crate::bench::roofline(&Default::default(), wisdom, 1usize << self.log_n).0,
        };
        self.total = 0;
        self.copy = None;
        self.builtin = None;
        self.rows.clear();
        self.report = None;
        self.saved = None;
        self.error = None;
        // Refused before any GPU work, as the CLI refuses it.
        if let Err(e) = crate::wisdom::kernel_tune::prepare(&setup) {
            self.error = Some(e.to_string());
            return;
        }
        let (worker, reply) = Worker::new(ctx);
        let gpu = gpu.clone();
        crate::ui::task::spawn(move || async move {
            let mut on = |e: Event| {
                reply.send(match e {
                    Event::Started { total } => TuneMsg::Started(total),
                    Event::Copy(r) => TuneMsg::Copy(r.clone()),
                    Event::Builtin(r) => TuneMsg::Builtin(r.clone()),
                    Event::Row { index, row } => TuneMsg::Row(index, row.clone()),
                })
            };
            let stopped = || reply.stopped();
            let r = crate::wisdom::kernel_tune::tune(&gpu, &setup, &mut on, &stopped).await;
            reply.send(TuneMsg::Done(r));
        });
        self.running = Some(worker);
    }

    /// Stop after the candidate being timed.
    pub fn stop(&self) {
        if let Some(w) = &self.running {
            w.stop();
        }
    }

    /// Take what the worker sent.
    pub fn poll(&mut self) {
        let Some(w) = &self.running else { return };
        for m in w.take() {
            match m {
                TuneMsg::Started(t) => self.total = t,
                TuneMsg::Copy(r) => self.copy = Some(r),
                TuneMsg::Builtin(r) => self.builtin = Some(r),
                TuneMsg::Row(i, row) => self.rows.push((i, row)),
                TuneMsg::Done(res) => {
                    self.running = None;
                    match res {
                        Ok(rep) => self.report = Some(rep),
                        Err(Error::Cancelled) => {
                            self.error = Some(format!(
                                "stopped after {} of {} combinations",
                                self.rows.len(),
                                self.total
                            ))
                        }
                        Err(e) => self.error = Some(e.to_string()),
                    }
                }
            }
        }
    }

    /// The best row so far (verified, fastest): the report's, else the rows'.
    pub fn best(&self) -> Option<&Row> {
        if let Some(r) = &self.report {
            return r.best_row();
        }
        self.rows
            .iter()
            .map(|(_, r)| r)
            .filter(|r| r.verified())
            .min_by(|a, b| {
                a.ms.unwrap_or(f64::MAX)
                    .total_cmp(&b.ms.unwrap_or(f64::MAX))
            })
    }

    /// Keep the report's best as the file's kernel wisdom on `gpu`'s adapter, in `file` (None:
    /// this adapter's file in the data folder).
    pub fn save(&mut self, gpu: &crate::gpu::Gpu, file: Option<&std::path::Path>) {
        let Some(e) = self.report.as_ref().and_then(Report::entry) else {
            return;
        };
        let saved = match file {
            Some(f) => crate::wisdom::kernel::save_to(f, gpu, e),
            None => crate::wisdom::kernel::save(gpu, e),
        };
        match saved {
            Ok(p) => self.saved = Some(p.display().to_string()),
            Err(e) => self.error = Some(e.to_string()),
        }
    }
}
