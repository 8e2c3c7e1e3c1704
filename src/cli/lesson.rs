//! `stagewise lesson check FILE` and `stagewise lesson list` (docs/LESSONS.md).

use crate::error::{Error, Result};
use crate::lesson::{self, check::check_lesson};
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum LessonCmd {
    /// Check a lesson file: it parses, every step's run resolves and runs traced on the GPU, every
    /// stage exists and every question has an answer in the real run. Exits 1 with one line
    /// naming the file's line on a bad file.
    Check {
        /// The lesson (JSON).
        file: std::path::PathBuf,
        /// Print each step's real answer (for the lesson's author).
        #[arg(long)]
        answers: bool,
    },
    /// List the shipped lessons in their order.
    List,
}

pub fn lesson_cmd(adapter: Option<&str>, cmd: &LessonCmd) -> Result<i32> {
    match cmd {
        LessonCmd::List => {
            for l in lesson::shipped()? {
                super::out(&format!(
                    "{:<10} {:>2} steps {:>2} exercises  {}",
                    l.id,
                    l.steps.len(),
                    l.exercises.len(),
                    l.title
                ));
            }
            Ok(0)
        }
        LessonCmd::Check { file, answers } => {
            let name = file.display().to_string();
            let text = std::fs::read_to_string(file)
                .map_err(|e| Error::Io(format!("cannot read lesson '{name}': {e}")))?;
            // Parsed and resolved before a device is opened: a typo costs no GPU start.
            lesson::Lesson::from_json(&name, &text)?;
            let gpu = super::gpu(adapter)?;
            let (l, steps) = check_lesson(&name, &text, &gpu)?;
            if *answers {
                for (i, s) in steps.iter().enumerate() {
                    super::out(&format!(
                        "step {:>2} {:<40} {} stages{}",
                        i + 1,
                        s.title,
                        s.stages,
                        s.answer
                            .as_ref()
                            .map(|a| format!("; answer: {a}"))
                            .unwrap_or_default()
                    ));
                }
            }
            let asked = steps.iter().filter(|s| s.answer.is_some()).count();
            super::out(&format!(
                "{name}: ok: '{}', {} steps ({asked} questions answered by the GPU), {} exercises",
                l.title,
                l.steps.len(),
                l.exercises.len()
            ));
            Ok(0)
        }
    }
}
