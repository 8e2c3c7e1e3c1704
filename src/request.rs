//! The typed run request below every front end. The CLI turns argv into a [`RunSpec`], the app
//! its widgets, the suite and the selftest their cases; [`RunSpec::resolve`] validates it once
//! (variant, element type, options that apply, the input and its length) into the
//! [`RunRequest`] a room runs. A `RunSpec` is plain JSON (`stagewise run --spec FILE`):
//!
//! ```json
//! {"algorithm": "bitrev", "variant": "staged", "input": {"from": "generate", "n": 1024}}
//! ```

use crate::algo::{self, AlgoOptions, RunRequest};
use crate::data::{self, DType, Data, Fill};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Where a run's input comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "lowercase", deny_unknown_fields)]
pub enum InputSpec {
    /// Generated: `n` elements (unset: the seed example where the algorithm has one, else its
    /// default length) by `fill` (unset: the seed example where there is one and no `n`, else
    /// random), from `seed`.
    Generate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill: Option<Fill>,
        #[serde(default = "first_seed")]
        seed: u64,
    },
    /// A file: numbers separated by whitespace, commas or newlines, a JSON array, or .npy;
    /// `-` is stdin.
    File { path: String },
    /// Numbers written out, in the input file's text formats.
    Text { text: String },
}

fn first_seed() -> u64 {
    1
}

impl Default for InputSpec {
    fn default() -> Self {
        InputSpec::Generate {
            n: None,
            fill: None,
            seed: first_seed(),
        }
    }
}

/// What a run reads back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The output and the pass times.
    #[default]
    Run,
    /// Every pass's captured regions too: the stages.
    Trace,
}

/// One run, as every front end asks for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSpec {
    /// The algorithm (`"algorithm"`) and its typed options.
    #[serde(flatten)]
    pub algo: AlgoOptions,
    /// The variant's name; unset: the algorithm's first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The element type; unset: u32 (an algorithm with its own type uses that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<DType>,
    #[serde(default)]
    pub input: InputSpec,
    #[serde(default)]
    pub mode: Mode,
}

impl RunSpec {
    /// The algorithm's default run on its default input.
    pub fn new(algo: AlgoOptions) -> RunSpec {
        RunSpec {
            algo,
            variant: None,
            dtype: None,
            input: InputSpec::default(),
            mode: Mode::Run,
        }
    }

    /// A spec from its JSON (`name`: the file, for errors).
    pub fn from_json(name: &str, text: &str) -> Result<RunSpec> {
        serde_json::from_str(text).map_err(|e| {
            Error::Input(format!(
                "run spec '{name}': line {} column {}: {e}",
                e.line(),
                e.column()
            ))
        })
    }

    /// The element type the run uses ([`element_type`]).
    pub fn element_type(&self) -> DType {
        element_type(&self.algo, self.dtype)
    }

    /// Whether the input is the algorithm's seed example (generated, nothing else asked for).
    pub fn is_example(&self) -> bool {
        matches!(&self.input, InputSpec::Generate { n, fill, .. }
            if fill.map_or(n.is_none(), |f| f == Fill::Example))
    }

    /// Check everything once and read or make the input, before any GPU work (a typo costs no
    /// device start).
    pub fn resolve(&self) -> Result<RunRequest> {
        let algo = self.algo.algo();
        let info = algo.info();
        let variant = info.variant(self.variant.as_deref())?;
        let dtype = checked_element_type(&self.algo, self.dtype)?;
        info.check_dtype(dtype)?;
        let trace = self.mode == Mode::Trace;
        algo::applies::check(
            &self.algo,
            algo::applies::RunShape {
                variant,
                trace,
                generated_input: self.is_example(),
            },
        )?;
        RunRequest::new(algo, variant, dtype, self.input_data()?, trace)
    }

    /// The input this spec describes.
    pub fn input_data(&self) -> Result<Data> {
        let algo = self.algo.algo();
        let dtype = self.element_type();
        let (n, fill, seed) = match &self.input {
            InputSpec::File { path } => return data::read_input(path, dtype),
            InputSpec::Text { text } => return data::parse_text(text, dtype),
            InputSpec::Generate { n, fill, seed } => (*n, *fill, *seed),
        };
        let fill = fill.unwrap_or(if n.is_none() && algo.example(dtype).is_some() {
            Fill::Example
        } else {
            Fill::Random
        });
        if fill == Fill::Example {
            let ex = algo.example(dtype).ok_or_else(|| {
                Error::Input(format!(
                    "{} has no seed example; generate its input with another fill",
                    algo.info().name
                ))
            })?;
            if let Some(n) = n
                && n != ex.len()
            {
                return Err(Error::Input(format!(
                    "the seed example has {} elements; n = {n} does not match",
                    ex.len()
                )));
            }
            return Ok(ex);
        }
        let n = n.or(algo.default_len()).unwrap_or(16);
        if n == 0 {
            return Err(Error::input("n must be at least 1"));
        }
        Ok(data::generate(fill, n, dtype, seed))
    }
}

/// The element type a request for `algo` uses, `asked` the one given (None: none): the room's
/// own where it has one, a user's kernel's declared `T` where none is asked for, else the one asked
/// for (u32 by default).
pub fn element_type(algo: &AlgoOptions, asked: Option<DType>) -> DType {
    if let Some(own) = algo.algo().fixed_dtype() {
        return own;
    }
    if let (None, AlgoOptions::Kernel(k)) = (asked, algo)
        && let Ok(e) = algo::kernel::element_of(k)
    {
        return e.dtype();
    }
    asked.unwrap_or_default()
}

/// [`element_type`], refusing one asked for that the room would replace with its own (the FFT's
/// f32): refused, not dropped.
pub fn checked_element_type(algo: &AlgoOptions, asked: Option<DType>) -> Result<DType> {
    let dtype = element_type(algo, asked);
    match asked {
        Some(a) if a != dtype => Err(Error::Input(format!(
            "{} takes {dtype} values only; --dtype {a} does not apply",
            algo.algo().info().name
        ))),
        _ => Ok(dtype),
    }
}

/// A reader of the command words a suite case or a selftest case is kept as (`stagewise run …`,
/// `stagewise bench …`). The front end that owns those words implements it with its parser
/// (`cli::Words`) and passes it in, so the suite and the selftest sit below every front end.
pub trait CommandWords {
    /// `stagewise run ARGS` (`args`: the words after `run`). The outer error: the parser's
    /// message (the words are not a run command); the inner result: the request the command
    /// makes, or why it makes none, as `run` itself says it.
    fn run(&self, args: &[String]) -> std::result::Result<Result<RunSpec>, String>;
    /// `stagewise bench ARGS`: the algorithm's options (None: none given) and the element type;
    /// the error is the parser's message.
    fn bench(&self, args: &[String]) -> std::result::Result<(Option<AlgoOptions>, DType), String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_reads_back_what_it_wrote() {
        let mut s = RunSpec::new(AlgoOptions::Bitrev(Default::default()));
        s.variant = Some("staged".into());
        s.input = InputSpec::Generate {
            n: Some(64),
            fill: Some(Fill::Iota),
            seed: 7,
        };
        s.mode = Mode::Trace;
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"algorithm\":\"bitrev\""), "{text}");
        let back = RunSpec::from_json("t", &text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        let req = back.resolve().unwrap();
        assert_eq!(req.variant.name, "staged");
        assert!(req.trace);
        assert_eq!(req.input.len(), 64);
        assert_eq!(req.input.bits[5], 5);
    }

    #[test]
    fn the_shortest_spec_is_the_seed_example() {
        let s = RunSpec::from_json("t", r#"{"algorithm": "bitrev"}"#).unwrap();
        let req = s.resolve().unwrap();
        assert_eq!(req.input.len(), 16);
        assert!(!req.trace);
    }

    #[test]
    fn bad_specs_say_why() {
        let e = RunSpec::from_json(
            "t",
            r#"{"algorithm": "bitrev", "input": {"from": "nowhere"}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("run spec 't': line 1"), "{e}");
        let s = RunSpec::from_json(
            "t",
            r#"{"algorithm": "bitrev", "input": {"from": "generate", "n": 0, "fill": "random"}}"#,
        )
        .unwrap();
        assert!(s.resolve().unwrap_err().to_string().contains("at least 1"));
        let s = RunSpec::from_json("t", r#"{"algorithm": "bitrev", "variant": "nope"}"#).unwrap();
        assert!(s.resolve().is_err());
    }
}
