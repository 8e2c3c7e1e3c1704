//! `stagewise grade`: a class's kernels against one exercise. Every file runs in a process of its
//! own (`stagewise run kernel …`, then `stagewise bench kernel …` where it verified) under a time
//! limit, so an endless loop, a crash or a lost device costs that student's row and nothing else.
//! The verdict and the goal are the app's words ([`Exercise::goal_line`], [`check_line`]).

use super::{GradeArgs, out};
use crate::algo::kernel::exercise::{Exercise, check_line, site_name};
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A kernel file larger than this is refused before it runs (every shipped kernel is under 40 KiB).
const MAX_KERNEL_BYTES: u64 = 1 << 20;

/// What became of one file (written as [`Outcome::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// The output differs from the exercise's op.
    Wrong,
    /// Verified, but the goal (the lens's sectors a request) is not met.
    GoalMissed,
    /// Stagewise refused or could not run it: compile errors, bindings, limits.
    Error,
    TimedOut,
    Crashed,
    /// Not run: empty, too large or not text.
    Refused,
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Wrong => "wrong",
            Outcome::GoalMissed => "goal missed",
            Outcome::Error => "error",
            Outcome::TimedOut => "timed out",
            Outcome::Crashed => "crashed",
            Outcome::Refused => "refused",
        }
    }
}

/// One student's row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub file: String,
    pub result: Outcome,
    /// `result` is `passed`.
    pub passed: bool,
    /// The check of the output, or why there is none.
    pub check: String,
    /// The exercise's goal against the run.
    pub goal: String,
    /// The kernel's fraction of the copy, and the built-in kernel's for the same op, same run.
    pub fraction_of_copy: Option<f64>,
    pub builtin_fraction_of_copy: Option<f64>,
    /// Wall time of the student's processes.
    pub seconds: f64,
}

pub(super) fn grade_cmd(adapter: Option<&str>, args: &GradeArgs) -> Result<i32> {
    let ex = find_exercise(&args.exercise)?;
    if args.timeout <= 0.0 || !args.timeout.is_finite() {
        return Err(Error::input("--timeout must be a number of seconds > 0"));
    }
    let files = kernel_files(&args.files)?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::Io(format!("cannot find the stagewise binary: {e}")))?;
    let mut rows = Vec::with_capacity(files.len());
    for f in &files {
        let mut row = grade_one(&exe, adapter, &ex, f, args);
        row.passed = row.result == Outcome::Passed;
        if !args.json {
            out(&text_row(&row));
        }
        rows.push(row);
    }
    let passed = rows.iter().filter(|r| r.passed).count();
    if let Some(path) = &args.csv {
        let mut s = String::from(
            "file,result,passed,check,goal,fraction_of_copy,builtin_fraction_of_copy,seconds\n",
        );
        let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.4}"));
        for r in &rows {
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{:.2}\n",
                csv_field(&r.file),
                r.result.name(),
                r.passed,
                csv_field(&r.check),
                csv_field(&r.goal),
                num(r.fraction_of_copy),
                num(r.builtin_fraction_of_copy),
                r.seconds
            ));
        }
        std::fs::write(path, s)
            .map_err(|e| Error::Io(format!("cannot write '{}': {e}", path.display())))?;
    }
    if args.json {
        let v = serde_json::json!({
            "exercise": ex.name(),
            "title": ex.title,
            "goal": ex.goal,
            "passed": passed,
            "total": rows.len(),
            "rows": rows,
        });
        out(&v.to_string());
    } else {
        out(&format!(
            "{passed} of {} passed ({}: {})",
            rows.len(),
            ex.name(),
            ex.goal
        ));
    }
    // 3, as for a run that fails its check: some kernel did not pass.
    Ok(if passed == rows.len() { 0 } else { 3 })
}

/// The exercise: a folder with an exercise.toml, or the name of a built-in one.
fn find_exercise(name: &str) -> Result<Exercise> {
    let dir = Path::new(name);
    if dir.join("exercise.toml").is_file() {
        return Exercise::load(dir);
    }
    let all = Exercise::shipped()?;
    let names: Vec<String> = all.iter().map(Exercise::name).collect();
    all.into_iter().find(|e| e.name() == name).ok_or_else(|| {
        Error::Input(format!(
            "--exercise '{name}': no such exercise (built in: {}; or a folder with an exercise.toml)",
            names.join(", ")
        ))
    })
}

/// The files to grade: each argument a file, or a folder's `.wgsl` files in name order.
fn kernel_files(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if args.is_empty() {
        return Err(Error::input("grade needs kernel files or folders of them"));
    }
    let mut files = Vec::new();
    for a in args {
        if a.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(a)
                .map_err(|e| Error::Io(format!("cannot read '{}': {e}", a.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "wgsl"))
                .collect();
            if v.is_empty() {
                return Err(Error::Input(format!(
                    "'{}' holds no .wgsl file",
                    a.display()
                )));
            }
            v.sort();
            files.extend(v);
        } else if a.is_file() {
            files.push(a.clone());
        } else {
            return Err(Error::Io(format!(
                "cannot read '{}': no such file",
                a.display()
            )));
        }
    }
    Ok(files)
}

fn grade_one(exe: &Path, adapter: Option<&str>, ex: &Exercise, f: &Path, args: &GradeArgs) -> Row {
    let t0 = Instant::now();
    let mut row = Row {
        file: f.display().to_string(),
        result: Outcome::Error,
        passed: false,
        check: String::new(),
        goal: format!("goal: {}", ex.goal),
        fraction_of_copy: None,
        builtin_fraction_of_copy: None,
        seconds: 0.0,
    };
    let refused = match std::fs::metadata(f) {
        Ok(m) if m.len() == 0 => Some("the file is empty".to_string()),
        Ok(m) if m.len() > MAX_KERNEL_BYTES => Some(format!(
            "the file is {:.1} MiB; a kernel is at most {} MiB",
            m.len() as f64 / (1 << 20) as f64,
            MAX_KERNEL_BYTES >> 20
        )),
        Ok(_) => std::fs::read(f)
            .ok()
            .filter(|b| std::str::from_utf8(b).is_err())
            .map(|_| "the file is not UTF-8 text (WGSL)".to_string()),
        Err(e) => Some(format!("cannot read it: {e}")),
    };
    if let Some(why) = refused {
        row.result = Outcome::Refused;
        row.check = why;
        return row;
    }
    let kernel_args = |cmd: &str| -> Vec<String> {
        let mut a: Vec<String> = vec![cmd.into(), "kernel".into(), "--wgsl".into()];
        a.push(f.display().to_string());
        a.extend(["--expect".into(), ex.expect.clone()]);
        a.extend(ex.args.iter().cloned());
        a.push("--json".into());
        if let Some(ad) = adapter {
            a.extend(["--adapter".into(), ad.into()]);
        }
        a
    };
    let limit = Duration::from_secs_f64(args.timeout);
    let mut run = kernel_args("run");
    if ex.lens_max_sectors.is_some() {
        run.extend(["--lens".into(), "--lens-warp".into(), "32".into()]);
    }
    let ran = child(exe, &run, limit);
    row.seconds = t0.elapsed().as_secs_f64();
    let (code, stdout, stderr) = match ran {
        Child::Exited(code, o, e) => (code, o, e),
        Child::TimedOut => {
            row.result = Outcome::TimedOut;
            row.check = format!("stopped after {:.0} s (the time limit)", args.timeout);
            return row;
        }
        Child::Signalled(why) => {
            row.result = Outcome::Crashed;
            row.check = why;
            return row;
        }
    };
    let first_line = |s: &str| {
        s.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim_start_matches("stagewise: ")
            .trim_start_matches("error: ")
            .to_string()
    };
    let v: Option<Value> = serde_json::from_str(&stdout).ok();
    match (code, &v) {
        (0 | 3, Some(v)) => {
            let verified = v["verified"] == true;
            let mismatch = v["mismatch"].as_str();
            row.check = check_line(verified, mismatch).0;
            let (goal, met) = ex.goal_line(verified, worst_site(v));
            row.goal = goal;
            row.result = match (verified, met) {
                (true, true) => Outcome::Passed,
                (true, false) => Outcome::GoalMissed,
                (false, _) => Outcome::Wrong,
            };
        }
        (3, None) => {
            row.result = Outcome::Wrong;
            row.check = format!("wrong: {}", first_line(&stderr));
        }
        _ => {
            row.check = first_line(&stderr);
            if row.check.is_empty() {
                row.check = format!("exit status {code}");
            }
            return row;
        }
    }
    if row.result != Outcome::Wrong && !args.no_time {
        let mut bench = kernel_args("bench");
        bench.extend(["--reps".into(), args.reps.to_string()]);
        if let Child::Exited(0, o, _) = child(exe, &bench, limit)
            && let Ok(b) = serde_json::from_str::<Value>(&o)
        {
            row.fraction_of_copy = b["compare"][0]["yours"].as_f64();
            row.builtin_fraction_of_copy = b["compare"][0]["builtin_fraction_of_copy"].as_f64();
        }
        row.seconds = t0.elapsed().as_secs_f64();
    }
    row
}

/// The lens's warp and its worst global site in a run's JSON (`--lens`).
fn worst_site(v: &Value) -> Option<(u32, f64, String)> {
    let warp = v["lens_model"]["warp"]
        .as_u64()
        .or_else(|| v["lens"][0]["warp"].as_u64())
        .unwrap_or(32) as u32;
    v["lens"]
        .as_array()?
        .iter()
        .flat_map(|p| p["global"].as_array().into_iter().flatten())
        .filter_map(|g| {
            let s = g["sectors"].as_f64()? / g["requests"].as_f64()?.max(1.0);
            let site = site_name(
                g["line"].as_u64()? as u32,
                g["kind"].as_str()?,
                g["buffer"].as_str()?,
            );
            Some((warp, s, site))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

enum Child {
    Exited(i32, String, String),
    TimedOut,
    Signalled(String),
}

/// Run `exe args`, killed past `limit`; its output is read on threads (a full pipe never stalls it).
fn child(exe: &Path, args: &[String], limit: Duration) -> Child {
    let mut c = match Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return Child::Signalled(format!("could not start: {e}")),
    };
    let read = |p: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = p {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let so = read(c.stdout.take().map(|p| Box::new(p) as _));
    let se = read(c.stderr.take().map(|p| Box::new(p) as _));
    let t0 = Instant::now();
    let status = loop {
        match c.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if t0.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = c.kill();
                let _ = c.wait();
                break None;
            }
        }
    };
    let (o, e) = (so.join().unwrap_or_default(), se.join().unwrap_or_default());
    match status {
        None => Child::TimedOut,
        Some(s) => match s.code() {
            Some(code) => Child::Exited(code, o, e),
            None => Child::Signalled(format!("ended by {s}")),
        },
    }
}

fn text_row(r: &Row) -> String {
    let time = match (r.fraction_of_copy, r.builtin_fraction_of_copy) {
        (Some(y), Some(b)) => format!("{y:.2}× copy (built-in {b:.2}×)"),
        (Some(y), None) => format!("{y:.2}× copy"),
        _ => "—".into(),
    };
    let name = Path::new(&r.file)
        .file_name()
        .map_or(r.file.clone(), |n| n.to_string_lossy().into_owned());
    // The goal is said where the output verified (else the check says what is wrong).
    let goal = match r.result {
        Outcome::Passed | Outcome::GoalMissed => format!("; {}", r.goal),
        _ => String::new(),
    };
    format!(
        "{name:<28} {:<11} {:<28} {}{goal}",
        r.result.name(),
        time,
        r.check
    )
}

/// A CSV field, quoted where it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
