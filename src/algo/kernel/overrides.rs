//! A kernel's `override` constants: its tunable parameters. `--override NAME=VALUE` gives one a
//! value (typed by its declaration); the pipeline gets the given values as wgpu's
//! pipeline-overridable constants, and naga's `process_overrides` resolves the module with the
//! same values first, so Stagewise knows the workgroup size a dispatch has (an overridable
//! `@workgroup_size`), the workgroup memory it takes and whether the values compile at all, before
//! anything reaches the device. `tune kernel` walks every combination of value lists
//! ([`Grid`]).

use crate::error::{Error, Result};
use naga::valid::ModuleInfo;
use naga::{Expression, Literal, Module, Scalar, ScalarKind, TypeInner};
use std::borrow::Cow;

/// The most combinations `tune kernel` times: every one is verified and timed, a few seconds
/// each on a software adapter.
pub const MAX_COMBINATIONS: usize = 256;

/// An override's type: WGSL allows the 32-bit scalars and bool (f16 is read as f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    U32,
    I32,
    F32,
    Bool,
}

impl Kind {
    fn of(s: Scalar) -> Kind {
        match s.kind {
            ScalarKind::Uint => Kind::U32,
            ScalarKind::Sint => Kind::I32,
            ScalarKind::Bool => Kind::Bool,
            _ => Kind::F32,
        }
    }

    pub fn wgsl(self) -> &'static str {
        match self {
            Kind::U32 => "u32",
            Kind::I32 => "i32",
            Kind::F32 => "f32",
            Kind::Bool => "bool",
        }
    }

    /// `text` as a value of this type, as wgpu's pipeline constants carry it (an f64); the error
    /// names what it is not.
    pub fn parse(self, text: &str) -> std::result::Result<f64, String> {
        let t = text.trim();
        let not = |what: &str| Err(format!("not {what}"));
        match self {
            Kind::U32 => t.parse::<u32>().map(f64::from).or_else(|_| not("a u32")),
            Kind::I32 => t.parse::<i32>().map(f64::from).or_else(|_| not("an i32")),
            Kind::F32 => match t.parse::<f32>() {
                Ok(v) if v.is_finite() => Ok(f64::from(v)),
                _ => not("a finite f32"),
            },
            Kind::Bool => match t {
                "true" => Ok(1.0),
                "false" => Ok(0.0),
                _ => not("a bool (true or false)"),
            },
        }
    }

    /// A value as `--override` takes it back.
    pub fn show(self, v: f64) -> String {
        match self {
            Kind::Bool => (v != 0.0).to_string(),
            Kind::F32 => (v as f32).to_string(),
            _ => format!("{}", v as i64),
        }
    }

    /// A value for JSON: a number, or a bool.
    pub fn json(self, v: f64) -> serde_json::Value {
        match self {
            Kind::Bool => (v != 0.0).into(),
            Kind::F32 => (v as f32 as f64).into(),
            Kind::U32 => (v as u32).into(),
            Kind::I32 => (v as i32).into(),
        }
    }
}

/// One `override` declaration of the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub name: String,
    /// wgpu's key for it: its `@id` where it has one, else its name.
    pub key: String,
    pub kind: Kind,
    /// Its default evaluated (None: it has none, or the default depends on one without).
    pub default: Option<f64>,
    /// Whether the declaration has a default (`override TILE: u32 = 16;`).
    pub has_default: bool,
}

impl Override {
    /// `TILE: u32 = 16` (`TILE: u32`, no default).
    pub fn describe(&self) -> String {
        match (self.default, self.has_default) {
            (Some(v), _) => format!(
                "{}: {} = {}",
                self.name,
                self.kind.wgsl(),
                self.kind.show(v)
            ),
            (None, true) => format!("{}: {} = (an expression)", self.name, self.kind.wgsl()),
            (None, false) => format!("{}: {}", self.name, self.kind.wgsl()),
        }
    }
}

/// `NAME: T = V, …` of every override, or that there is none (for error messages).
pub fn listing(decl: &[Override]) -> String {
    if decl.is_empty() {
        return "it declares none".into();
    }
    let all: Vec<String> = decl.iter().map(Override::describe).collect();
    format!("overrides: {}", all.join(", "))
}

/// The value of a fully evaluated global expression (a literal, or a constant holding one).
fn value_of(m: &Module, e: naga::Handle<Expression>) -> Option<f64> {
    let mut e = e;
    for _ in 0..8 {
        match m.global_expressions[e] {
            Expression::Literal(l) => {
                return Some(match l {
                    Literal::U32(v) => v.into(),
                    Literal::I32(v) => v.into(),
                    Literal::F32(v) => v.into(),
                    Literal::F64(v) => v,
                    Literal::Bool(b) => f64::from(u8::from(b)),
                    Literal::AbstractInt(v) => v as f64,
                    Literal::AbstractFloat(v) => v,
                    _ => return None,
                });
            }
            Expression::Constant(c) => e = m.constants[c].init,
            _ => return None,
        }
    }
    None
}

/// The named overrides of `module` (an array sized by an override expression adds an unnamed
/// one: not a parameter), their defaults evaluated where they can be.
pub fn declared(module: &Module, info: &ModuleInfo) -> Vec<Override> {
    // Defaults may be expressions of other overrides: naga evaluates them all at once, where
    // every override the entry points reach has a default.
    let evaluated =
        naga::back::pipeline_constants::process_overrides(module, info, None, &Default::default())
            .ok();
    module
        .overrides
        .iter()
        .filter_map(|(_, o)| {
            let name = o.name.clone()?;
            let TypeInner::Scalar(s) = module.types[o.ty].inner else {
                return None;
            };
            let default = o.init.and_then(|i| value_of(module, i)).or_else(|| {
                let (m, _) = evaluated.as_ref()?;
                let r = m
                    .overrides
                    .iter()
                    .find(|(_, r)| r.name.as_ref() == Some(&name))?;
                value_of(m, r.1.init?)
            });
            Some(Override {
                key: o.id.map_or_else(|| name.clone(), |id| id.to_string()),
                name,
                kind: Kind::of(s),
                default,
                has_default: o.init.is_some(),
            })
        })
        .collect()
}

/// `NAME=VALUE` split, the name trimmed.
fn split(flag: &str, s: &str) -> Result<(String, String)> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(Error::Input(format!("{flag} '{s}': expected NAME=VALUE"))),
    }
}

/// The declaration `name` names, or an error listing the kernel's overrides.
fn find<'a>(flag: &str, decl: &'a [Override], name: &str) -> Result<&'a Override> {
    decl.iter().find(|o| o.name == name).ok_or_else(|| {
        Error::Input(format!(
            "{flag} {name}: the kernel has no override '{name}' ({})",
            listing(decl)
        ))
    })
}

/// The given `--override NAME=VALUE`s as (declaration index, value); a later one of the same name
/// wins (as with `--param`).
pub fn parse_given(decl: &[Override], given: &[String]) -> Result<Vec<(usize, f64)>> {
    let mut out: Vec<(usize, f64)> = Vec::new();
    for g in given {
        let (name, v) = split("--override", g)?;
        let o = find("--override", decl, &name)?;
        let value = o.kind.parse(&v).map_err(|why| {
            let lists = if v.contains(',') {
                " (one value; lists of values are for `tune kernel`)"
            } else {
                ""
            };
            Error::Input(format!("--override {name}={v}: {why}{lists}"))
        })?;
        let i = decl.iter().position(|d| d.name == name).unwrap_or(0);
        out.retain(|(j, _)| *j != i);
        out.push((i, value));
    }
    out.sort_by_key(|(i, _)| *i);
    Ok(out)
}

/// The override values a run resolved to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resolved {
    /// (wgpu key, value) of every override given: the pipeline's constants.
    pub constants: Vec<(String, f64)>,
    /// (name, type, value) of every override as the kernel runs: given, else its default.
    pub values: Vec<(String, Kind, f64)>,
}

impl Resolved {
    /// `TILE=16 WG=64` (empty: no overrides).
    pub fn describe(&self) -> String {
        let v: Vec<String> = self
            .values
            .iter()
            .map(|(n, k, v)| format!("{n}={}", k.show(*v)))
            .collect();
        v.join(" ")
    }

    /// {"TILE": 16, …} for a run's JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let m: serde_json::Map<String, serde_json::Value> = self
            .values
            .iter()
            .map(|(n, k, v)| (n.clone(), k.json(*v)))
            .collect();
        m.into()
    }
}

/// The module as it runs with `given` (`--override NAME=VALUE`s): every override replaced by its
/// value, validated again by naga (an array or workgroup size of 0, an out-of-range index: errors
/// named here, before the device sees them).
pub fn resolve<'a>(
    file: &str,
    module: &'a Module,
    info: &'a ModuleInfo,
    decl: &[Override],
    given: &[String],
) -> Result<(Cow<'a, Module>, Cow<'a, ModuleInfo>, Resolved)> {
    let given = parse_given(decl, given)?;
    if let Some(o) = decl
        .iter()
        .enumerate()
        .find(|(i, o)| !o.has_default && !given.iter().any(|g| g.0 == *i))
        .map(|(_, o)| o)
    {
        return Err(Error::Input(format!(
            "{file}: override '{}' has no default: give it with --override {}=VALUE ({})",
            o.name,
            o.name,
            o.kind.wgsl()
        )));
    }
    let constants: Vec<(String, f64)> = given
        .iter()
        .map(|&(i, v)| (decl[i].key.clone(), v))
        .collect();
    let map: naga::back::PipelineConstants = constants.iter().cloned().collect();
    let (m, mi) = naga::back::pipeline_constants::process_overrides(module, info, None, &map)
        .map_err(|e| {
            let with: Vec<String> = given
                .iter()
                .map(|&(i, v)| format!("{}={}", decl[i].name, decl[i].kind.show(v)))
                .collect();
            let with = if with.is_empty() {
                "with the overrides' defaults".to_string()
            } else {
                format!("with --override {}", with.join(" "))
            };
            let mut msg = e.to_string();
            let mut cur = std::error::Error::source(&e);
            while let Some(c) = cur {
                msg.push_str(": ");
                msg.push_str(&c.to_string());
                cur = c.source();
            }
            Error::Input(format!(
                "{file}: {with} the kernel does not compile: {}",
                msg.split_whitespace().collect::<Vec<_>>().join(" ")
            ))
        })?;
    let values = decl
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            let v = match given.iter().find(|g| g.0 == i) {
                Some(&(_, v)) => Some(v),
                None => m
                    .overrides
                    .iter()
                    .find(|(_, r)| r.name.as_ref() == Some(&o.name))
                    .and_then(|(_, r)| value_of(&m, r.init?))
                    .or(o.default),
            };
            v.map(|v| (o.name.clone(), o.kind, v))
        })
        .collect();
    Ok((m, mi, Resolved { constants, values }))
}

/// A WGSL literal of `v` in type `kind` (`16u`, `-3i`, `0.5f`, `true`).
fn literal(kind: Kind, v: f64) -> String {
    match kind {
        Kind::U32 => format!("{}u", v as u32),
        Kind::I32 => format!("{}i", v as i32),
        Kind::F32 => format!("{}f", v as f32),
        Kind::Bool => (v != 0.0).to_string(),
    }
}

/// `source` with every resolved override declaration rewritten in place as a `const` of its
/// value, every line where it was. The memory lens's recording build takes this text: naga 30
/// writes an override-sized array back as `array<N>` (its type lost), and the lens maps each
/// access to its line and column in the file as written, so the values go in as text, not as
/// pipeline constants. An `@id(N)` before a declaration is blanked (a `const` takes none).
pub fn specialize(source: &str, module: &Module, resolved: &Resolved) -> String {
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (h, o) in module.overrides.iter() {
        let Some(name) = &o.name else { continue };
        let Some((_, kind, v)) = resolved.values.iter().find(|r| &r.0 == name) else {
            continue;
        };
        let Some(r) = module.overrides.get_span(h).to_range() else {
            continue;
        };
        if r.end > source.len() || !source[r.clone()].starts_with("override") {
            continue;
        }
        let decl = &source[r.clone()];
        let mut text = format!("const {name}: {} = {};", kind.wgsl(), literal(*kind, *v));
        // Same lines: the declaration's newlines after it; shorter text padded with spaces.
        let newlines = decl.matches('\n').count();
        let width = decl.len() - newlines;
        if text.len() < width {
            text.push_str(&" ".repeat(width - text.len()));
        }
        text.push_str(&"\n".repeat(newlines));
        edits.push((r.clone(), text));
        // `@id(N)` before it, blanked.
        let before = source[..r.start].trim_end();
        if before.ends_with(')')
            && let Some(open) = before.rfind('(')
            && before[..open].trim_end().ends_with("id")
        {
            let at = before[..open].trim_end().len() - 2;
            let at = source[..at].trim_end();
            if at.ends_with('@') {
                let start = at.len() - 1;
                let span = start..before.len();
                let blank: String = source[span.clone()]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' })
                    .collect();
                edits.push((span, blank));
            }
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
    let mut out = source.to_string();
    for (r, t) in edits {
        out.replace_range(r, &t);
    }
    out
}

/// Value lists for `tune kernel` (`--override NAME=v1,v2,…`), typed, and their combinations.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// (name, type, values) in the order given.
    pub axes: Vec<(String, Kind, Vec<f64>)>,
}

impl Grid {
    /// Parse `NAME=v1,v2,…` lists against the kernel's overrides; at most
    /// [`MAX_COMBINATIONS`] combinations.
    pub fn parse(decl: &[Override], lists: &[String]) -> Result<Grid> {
        if decl.is_empty() {
            return Err(Error::input(
                "tune kernel: the kernel declares no `override` constants: nothing to tune",
            ));
        }
        if lists.is_empty() {
            return Err(Error::Input(format!(
                "tune kernel needs at least one --override NAME=V1,V2,… ({})",
                listing(decl)
            )));
        }
        let mut axes: Vec<(String, Kind, Vec<f64>)> = Vec::new();
        for l in lists {
            let (name, vs) = split("--override", l)?;
            let o = find("--override", decl, &name)?;
            if axes.iter().any(|a| a.0 == name) {
                return Err(Error::Input(format!(
                    "--override {name}: given twice; give one list of values"
                )));
            }
            let mut values = Vec::new();
            for v in vs.split(',').map(str::trim) {
                let x = o
                    .kind
                    .parse(v)
                    .map_err(|why| Error::Input(format!("--override {name}={v}: {why}")))?;
                if !values.contains(&x) {
                    values.push(x);
                }
            }
            axes.push((name, o.kind, values));
        }
        let g = Grid { axes };
        let count = g
            .axes
            .iter()
            .try_fold(1usize, |a, x| a.checked_mul(x.2.len()));
        if count.is_none_or(|c| c > MAX_COMBINATIONS) {
            let sizes: Vec<String> = g.axes.iter().map(|a| a.2.len().to_string()).collect();
            return Err(Error::Input(format!(
                "tune kernel: {} = {} combinations, over {MAX_COMBINATIONS}; give fewer values",
                sizes.join(" × "),
                count.map_or("too many".into(), |c| c.to_string())
            )));
        }
        Ok(g)
    }

    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.2.len()).product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Combination `i` (the last axis fastest) as `NAME=VALUE` words.
    pub fn combination(&self, i: usize) -> Vec<String> {
        let mut rest = i;
        let mut out = vec![String::new(); self.axes.len()];
        for (k, (name, kind, vs)) in self.axes.iter().enumerate().rev() {
            let v = vs[rest % vs.len()];
            rest /= vs.len();
            out[k] = format!("{name}={}", kind.show(v));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(src: &str) -> Vec<Override> {
        let m = naga::front::wgsl::parse_str(src).unwrap();
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&m)
        .unwrap();
        declared(&m, &info)
    }

    const K: &str = "override TILE: u32 = 16;
@id(7) override SCALE: f32;
override ON: bool = true;
override TWICE: u32 = TILE * 2u;
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(TILE)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (ON) { dst[g.x] = SCALE * f32(TWICE); }
}";

    #[test]
    fn overrides_are_read_with_their_types_keys_and_defaults() {
        let d = decl(K);
        let names: Vec<&str> = d.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["TILE", "SCALE", "ON", "TWICE"]);
        assert_eq!(d[0].describe(), "TILE: u32 = 16");
        assert_eq!(d[1].key, "7");
        assert_eq!(d[1].describe(), "SCALE: f32");
        assert_eq!(d[2].describe(), "ON: bool = true");
        // SCALE has no default, so naga cannot evaluate the module: TWICE's default is unknown.
        assert!(d[3].has_default);
    }

    #[test]
    fn given_values_are_typed_and_named() {
        let d = decl(K);
        let ok = parse_given(&d, &["TILE=8".into(), "SCALE=0.5".into(), "TILE=32".into()]);
        assert_eq!(ok.unwrap(), [(0, 32.0), (1, 0.5)]);
        let e = |g: &str| parse_given(&d, &[g.into()]).unwrap_err().to_string();
        assert!(
            e("TILE=-1").contains("--override TILE=-1: not a u32"),
            "{}",
            e("TILE=-1")
        );
        assert!(e("TILE=8,16").contains("lists of values are for `tune kernel`"));
        assert!(e("ON=1").contains("not a bool"));
        assert!(e("SCALE=inf").contains("not a finite f32"));
        let unknown = e("WG=64");
        assert!(unknown.contains("no override 'WG'"), "{unknown}");
        assert!(unknown.contains("TILE: u32 = 16, SCALE: f32"), "{unknown}");
        assert!(e("TILE").contains("expected NAME=VALUE"));
    }

    #[test]
    fn a_specialized_text_keeps_every_line_and_compiles() {
        let src = "// k\n@id(3) override TILE: u32 = 16u;\noverride B = TILE *\n  2u;\n\
                   var<workgroup> w: array<u32, B>;\n\
                   @compute @workgroup_size(TILE) fn main() { w[0] = B; }\n";
        let m = naga::front::wgsl::parse_str(src).unwrap();
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&m)
        .unwrap();
        let d = declared(&m, &info);
        let (_, _, r) = resolve("k", &m, &info, &d, &["TILE=8".into()]).unwrap();
        let s = specialize(src, &m, &r);
        assert_eq!(s.lines().count(), src.lines().count());
        assert!(s.contains("const TILE: u32 = 8u;"), "{s}");
        assert!(s.contains("const B: u32 = 16u;"), "{s}");
        assert!(!s.contains("@id"), "{s}");
        let m2 = naga::front::wgsl::parse_str(&s).unwrap();
        assert!(m2.overrides.is_empty());
        assert_eq!(m2.entry_points[0].workgroup_size, [8, 1, 1]);
        // Later lines keep their text at their columns.
        assert_eq!(s.lines().last(), src.lines().last());
    }

    #[test]
    fn a_grid_is_bounded_and_enumerates_every_combination() {
        let d = decl(K);
        let g = Grid::parse(&d, &["TILE=8,16,16".into(), "ON=true,false".into()]).unwrap();
        assert_eq!(g.len(), 4);
        assert_eq!(g.combination(0), ["TILE=8", "ON=true"]);
        assert_eq!(g.combination(3), ["TILE=16", "ON=false"]);
        let many: Vec<String> = (1..=300).map(|i| i.to_string()).collect();
        let e = Grid::parse(&d, &[format!("TILE={}", many.join(","))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("300 combinations, over 256"), "{e}");
        assert!(
            Grid::parse(&d, &[])
                .unwrap_err()
                .to_string()
                .contains("at least one")
        );
    }
}
