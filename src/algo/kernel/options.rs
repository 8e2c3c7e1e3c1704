//! The workbench's options (`stagewise run kernel --wgsl FILE …`) and what they resolve to against
//! a kernel's contract: the pass count, the `params` values, the expected op.

use super::contract::{Contract, Field};
use super::expect::Expect;
use crate::error::{Error, Result};
use naga::ScalarKind;
use serde::{Deserialize, Serialize};

/// The most passes one entry point may run: a kernel that never converges still ends.
pub const MAX_PASSES: u32 = 4096;
/// The most words `--scratch` may ask for (the binding limit refuses larger ones anyway).
pub const MAX_SCRATCH: usize = 1 << 28;

/// The options' help: the CLI's for each flag (src/cli) and the app's tooltip for each control.
pub mod help {
    pub const WGSL: &str = "The kernel: a WGSL file with compute entry points and the bindings src, dst (group 0), \
         optional scratch and params (docs/CLI.md, \"kernel\")";
    pub const ENTRY: &str = "The entry points to run, in order (comma-separated); default: every compute entry point \
         in file order";
    pub const PASSES: &str =
        "Passes of each entry point: a number or `log_n`; src and dst swap between passes";
    pub const ITEMS_PER_THREAD: &str = "Elements each invocation handles: the dispatch covers N / (workgroup size × this) \
         workgroups";
    pub const SCRATCH: &str =
        "Words of the zeroed `scratch` binding (array<u32>); required when the kernel declares it";
    pub const PARAMS: &str = "A value for a field of the `params` struct (repeatable): NAME=VALUE";
    pub const OVERRIDES: &str = "A value for an `override` constant of the kernel (repeatable): NAME=VALUE, typed as \
         declared; a tuned choice (wisdom) fills those not given";
    pub const EXPECT: &str = "Check the output against a room's CPU model: copy, bitrev, bmmc:<preset or matrix>, \
         transpose:R,C, scan, scan-exclusive, sort, sort-desc, fft:<size>";
    pub const EXPECT_FILE: &str =
        "Check the output against this file (read like --input: .npy, text or JSON)";

    /// (field, help) of every option, in the order of the fields.
    pub const ALL: &[(&str, &str)] = &[
        ("wgsl", WGSL),
        ("entry", ENTRY),
        ("passes", PASSES),
        ("items_per_thread", ITEMS_PER_THREAD),
        ("scratch", SCRATCH),
        ("params", PARAMS),
        ("overrides", OVERRIDES),
        ("expect", EXPECT),
        ("expect_file", EXPECT_FILE),
    ];
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub wgsl: Option<std::path::PathBuf>,
    pub entry: Vec<String>,
    pub passes: String,
    pub items_per_thread: u32,
    pub scratch: Option<usize>,
    pub params: Vec<String>,
    /// `NAME=VALUE` for the kernel's `override` constants.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    pub expect: Option<String>,
    pub expect_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Options {
    /// (name shown in errors, text) of the kernel.
    pub fn kernel_text(&self) -> Result<(String, String)> {
        if let Some(s) = &self.source {
            let name = self
                .wgsl
                .as_ref()
                .map_or("kernel.wgsl".into(), |p| p.display().to_string());
            return Ok((name, s.clone()));
        }
        let Some(path) = &self.wgsl else {
            return Err(Error::input(
                "kernel needs --wgsl FILE (a WGSL file with compute entry points)",
            ));
        };
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Io(format!("cannot read '{name}': {e}")))?;
        Ok((name, text))
    }

    /// The kernel's contract (parsed and validated by naga), resolved with `--override`s.
    pub fn contract(&self) -> Result<(String, String, Contract)> {
        let (name, text) = self.kernel_text()?;
        let c = Contract::read_with(&name, &text, &self.overrides)?;
        Ok((name, text, c))
    }

    pub fn expected(&self) -> Result<Option<Expect>> {
        Ok(match (&self.expect, &self.expect_file) {
            (Some(op), _) => Some(Expect::parse(op)?),
            (None, Some(f)) => Some(Expect::File(f.clone())),
            (None, None) => None,
        })
    }

    /// Passes per entry point for `log_n`.
    pub fn pass_count(&self, log_n: u32) -> Result<u32> {
        let p = self.passes.trim();
        let k = if p == "log_n" {
            log_n.max(1)
        } else {
            p.parse::<u32>()
                .map_err(|_| Error::Input(format!("--passes '{p}': expected a number or log_n")))?
        };
        if !(1..=MAX_PASSES).contains(&k) {
            return Err(Error::Input(format!(
                "--passes {k}: must be 1..={MAX_PASSES} (a bound, so a kernel that never converges still ends)"
            )));
        }
        Ok(k)
    }

    /// The built-in kernel for this kernel's `--expect` op, timed beside it (`bench kernel`, the
    /// performance lab), after the contract and options are checked; None where the op has none.
    pub fn builtin_case(
        &self,
    ) -> Result<Option<(crate::algo::AlgoOptions, &'static crate::algo::VariantInfo)>> {
        let (_, _, c) = self.contract()?;
        self.validate(&c)?;
        let Some((builtin, variant)) = self.expected()?.and_then(|e| e.builtin()) else {
            return Ok(None);
        };
        let v = builtin.algo().info().variant(Some(variant))?;
        Ok(Some((builtin, v)))
    }

    /// Check what can be checked before any GPU work.
    pub fn validate(&self, c: &Contract) -> Result<()> {
        self.pass_count(1)?;
        self.expected()?;
        c.select(&self.entry)?;
        if self.items_per_thread == 0 || self.items_per_thread > 1 << 16 {
            return Err(Error::Input(format!(
                "--items-per-thread must be 1..=65536; got {}",
                self.items_per_thread
            )));
        }
        match (c.binding(super::contract::Role::Scratch), self.scratch) {
            (Some(_), None) => {
                return Err(Error::input(
                    "the kernel declares 'scratch': give its size with --scratch WORDS",
                ));
            }
            (None, Some(_)) => {
                return Err(Error::input(
                    "--scratch: the kernel declares no 'scratch' binding",
                ));
            }
            (_, Some(w)) if w == 0 || w > MAX_SCRATCH => {
                return Err(Error::Input(format!(
                    "--scratch must be 1..={MAX_SCRATCH} words; got {w}"
                )));
            }
            _ => {}
        }
        self.param_values(c, 1, 0, 0, 1).map(|_| ())
    }

    /// The `params` buffer's words for pass `pass` of `passes`, over `n` elements.
    pub fn param_values(
        &self,
        c: &Contract,
        n: usize,
        log_n: u32,
        pass: u32,
        passes: u32,
    ) -> Result<Vec<u32>> {
        let mut given: Vec<(&str, &str)> = Vec::new();
        for p in &self.params {
            let Some((k, v)) = p.split_once('=') else {
                return Err(Error::Input(format!("--param '{p}': expected NAME=VALUE")));
            };
            let k = k.trim();
            if !c.params.iter().any(|f| f.name == k) {
                let names: Vec<&str> = c.params.iter().map(|f| f.name.as_str()).collect();
                return Err(Error::Input(format!(
                    "--param {k}: the kernel's params struct has no field '{k}' (fields: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                )));
            }
            given.push((k, v.trim()));
        }
        let mut words = vec![0u32; c.params_size.div_ceil(4) as usize];
        for f in &c.params {
            let bits = match (f.name.as_str(), given.iter().rev().find(|g| g.0 == f.name)) {
                (_, Some((_, v))) => scalar(f, v)?,
                ("n", None) => n as u32,
                ("log_n", None) => log_n,
                ("pass_index", None) => pass,
                ("passes", None) => passes,
                (other, None) => {
                    return Err(Error::Input(format!(
                        "params.{other}: Stagewise fills n, log_n, pass_index and passes; give the others with --param {other}=VALUE"
                    )));
                }
            };
            let bits = match (f.kind, f.name.as_str()) {
                // The built-in values are counts: an f32 field gets them as numbers.
                (ScalarKind::Float, "n" | "log_n" | "pass_index" | "passes")
                    if !given.iter().any(|g| g.0 == f.name) =>
                {
                    (bits as f32).to_bits()
                }
                _ => bits,
            };
            words[f.offset as usize / 4] = bits;
        }
        Ok(words)
    }
}

/// A `--param` value in the field's type.
fn scalar(f: &Field, v: &str) -> Result<u32> {
    let bad = |t: &str| Error::Input(format!("--param {}={v}: not {t}", f.name));
    Ok(match f.kind {
        ScalarKind::Uint => v.parse::<u32>().map_err(|_| bad("a u32"))?,
        ScalarKind::Sint => v.parse::<i32>().map_err(|_| bad("an i32"))? as u32,
        _ => v.parse::<f32>().map_err(|_| bad("an f32"))?.to_bits(),
    })
}
