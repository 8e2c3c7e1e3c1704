//! The workbench's kernel contract, read from the user's WGSL by naga: the compute entry points and
//! their workgroup sizes, the bindings by name (`src`, `dst`, `scratch`, `params` in group 0), the
//! element type and the `params` struct's fields. Every failure is one line: a compile error as
//! `FILE:LINE:COL: naga's message`, a contract error naming the binding or field.

use super::overrides::{self, Override, Resolved};
use crate::data::DType;
use crate::error::{Error, Result};
use naga::{AddressSpace, ArraySize, Module, ScalarKind, TypeInner, VectorSize};

/// The element type of `src` and `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    U32,
    I32,
    F32,
    /// `vec2<f32>`: a complex number (re, im), two f32 words.
    Complex,
}

impl Elem {
    /// 32-bit words per element.
    pub fn words(self) -> usize {
        if self == Elem::Complex { 2 } else { 1 }
    }

    /// The `--dtype` of the element's words.
    pub fn dtype(self) -> DType {
        match self {
            Elem::U32 => DType::U32,
            Elem::I32 => DType::I32,
            Elem::F32 | Elem::Complex => DType::F32,
        }
    }

    pub fn wgsl(self) -> &'static str {
        match self {
            Elem::U32 => "u32",
            Elem::I32 => "i32",
            Elem::F32 => "f32",
            Elem::Complex => "vec2<f32>",
        }
    }
}

/// One compute entry point.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    /// As the kernel runs: an overridable size resolved with the run's override values.
    pub workgroup_size: [u32; 3],
    /// The bindings this entry point uses (an automatic layout holds only those).
    pub uses: Vec<Role>,
    /// Bytes of workgroup memory it uses, each variable rounded up to 16 as WebGPU counts them.
    pub workgroup_bytes: u32,
}

impl Entry {
    pub fn threads(&self) -> u32 {
        self.workgroup_size.iter().product()
    }

    /// Refuse a shape this adapter cannot run, before anything is compiled or dispatched (a
    /// kernel's literal sizes, or override values `tune kernel` tries); `with`: the override
    /// values, for the message.
    pub fn fits(&self, limits: &wgpu::Limits, with: &str) -> Result<()> {
        let with = if with.is_empty() {
            String::new()
        } else {
            format!(" with {with}")
        };
        let [x, y, z] = self.workgroup_size;
        let dims = [
            (x, limits.max_compute_workgroup_size_x, "x"),
            (y, limits.max_compute_workgroup_size_y, "y"),
            (z, limits.max_compute_workgroup_size_z, "z"),
        ];
        let refuse = |what: String| {
            Err(Error::Limit(format!(
                "entry point '{}'{with}: {what}; not run",
                self.name
            )))
        };
        if let Some((v, max, d)) = dims.iter().find(|(v, max, _)| v > max) {
            return refuse(format!(
                "@workgroup_size {d} = {v}, above this adapter's {max} (max_compute_workgroup_size_{d})"
            ));
        }
        let threads = x as u64 * y as u64 * z as u64;
        let max = limits.max_compute_invocations_per_workgroup;
        if threads > max as u64 {
            return refuse(format!(
                "@workgroup_size({x}, {y}, {z}) is {threads} invocations, above this adapter's {max} (max_compute_invocations_per_workgroup)"
            ));
        }
        let max = limits.max_compute_workgroup_storage_size;
        if self.workgroup_bytes > max {
            return refuse(format!(
                "{} bytes of workgroup memory, above this adapter's {max} (max_compute_workgroup_storage_size)",
                self.workgroup_bytes
            ));
        }
        Ok(())
    }
}

/// What a binding is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Src,
    Dst,
    Scratch,
    Params,
}

/// A field of the `params` uniform struct: its name, byte offset and scalar type.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub offset: u32,
    pub kind: ScalarKind,
}

/// What Stagewise needs to know to run a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Contract {
    pub entries: Vec<Entry>,
    pub elem: Elem,
    /// (role, binding number in group 0).
    pub bindings: Vec<(Role, u32)>,
    pub params: Vec<Field>,
    /// The `params` struct's size in bytes (0 without `params`).
    pub params_size: u32,
    /// The kernel's named `override` constants: its tunable parameters.
    pub overrides: Vec<Override>,
    /// Their values as this contract was read (given, else defaults), and the pipeline's
    /// constants.
    pub resolved: Resolved,
    /// The text with those values written in as `const`s, line for line (the lens's recording
    /// build compiles it: [`overrides::specialize`]); None without overrides.
    pub specialized: Option<String>,
    /// Whether a function or entry point has a loop (a wrong result on an adapter that ends
    /// loops after a limit then names that limit).
    pub loops: bool,
}

/// `FILE:LINE:COL: message` (or `FILE: message` without a location).
fn at(file: &str, loc: Option<naga::SourceLocation>, msg: &str) -> Error {
    let msg = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    Error::Input(match loc {
        Some(l) => format!("{file}:{}:{}: {msg}", l.line_number, l.line_position),
        None => format!("{file}: {msg}"),
    })
}

/// Where a span starts in `source` (None: a span naga did not record).
fn span_at(s: naga::Span, source: &str) -> Option<naga::SourceLocation> {
    (s.is_defined() && (s.to_range()?.end <= source.len())).then(|| s.location(source))
}

/// A validation error and its causes, in one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Parse and validate `source` (named `file` in errors) as wgpu would compile it.
pub fn compile(file: &str, source: &str) -> Result<(Module, naga::valid::ModuleInfo)> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| at(file, e.location(source), e.message()))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| at(file, e.location(source), &chain(e.as_inner())))?;
    Ok((module, info))
}

/// Bytes of workgroup memory each entry point of `m` uses (its `var<workgroup>`s, each rounded up
/// to 16 bytes as WebGPU counts them), by entry point name.
/// Whether a block holds a loop (`for`, `while` and `loop` are all naga's `Loop`).
fn has_loop(block: &naga::Block) -> bool {
    block.iter().any(|st| match st {
        naga::Statement::Loop { .. } => true,
        naga::Statement::Block(b) => has_loop(b),
        naga::Statement::If { accept, reject, .. } => has_loop(accept) || has_loop(reject),
        naga::Statement::Switch { cases, .. } => cases.iter().any(|c| has_loop(&c.body)),
        _ => false,
    })
}

fn workgroup_bytes(m: &Module, info: &naga::valid::ModuleInfo) -> Vec<(String, u32)> {
    m.entry_points
        .iter()
        .enumerate()
        .map(|(i, ep)| {
            let uses = info.get_entry_point(i);
            let bytes = m
                .global_variables
                .iter()
                .filter(|(h, g)| g.space == AddressSpace::WorkGroup && !uses[*h].is_empty())
                .map(|(_, g)| {
                    m.types[g.ty]
                        .inner
                        .try_size(m.to_ctx())
                        .unwrap_or(u32::MAX)
                        .saturating_add(15)
                        & !15
                })
                .fold(0u32, u32::saturating_add);
            (ep.name.clone(), bytes)
        })
        .collect()
}

impl Contract {
    /// Read the contract of `source` with its overrides' defaults; `file` names it in errors.
    pub fn read(file: &str, source: &str) -> Result<Contract> {
        Self::read_with(file, source, &[])
    }

    /// Read the contract of `source` as it runs with `given` (`--override NAME=VALUE`s): the
    /// entry points' workgroup sizes and memory are those of the module resolved with them.
    pub fn read_with(file: &str, source: &str, given: &[String]) -> Result<Contract> {
        Self::read_inner(file, source, Some(given))
    }

    /// The contract as declared, its overrides not resolved (an overridable workgroup size is
    /// naga's placeholder, no workgroup memory counted): for what values cannot change, such as
    /// the element type, where an override may lack a value. Not for running.
    pub fn declared(file: &str, source: &str) -> Result<Contract> {
        Self::read_inner(file, source, None)
    }

    fn read_inner(file: &str, source: &str, given: Option<&[String]>) -> Result<Contract> {
        let (module, info) = compile(file, source)?;
        let declared = overrides::declared(&module, &info);
        let (sizes, bytes, resolved) = match given {
            Some(given) => {
                let (m, mi, resolved) = overrides::resolve(file, &module, &info, &declared, given)?;
                let sizes: Vec<(String, [u32; 3])> = m
                    .entry_points
                    .iter()
                    .map(|ep| (ep.name.clone(), ep.workgroup_size))
                    .collect();
                (sizes, workgroup_bytes(&m, &mi), resolved)
            }
            None => (Vec::new(), Vec::new(), Resolved::default()),
        };
        let err = |m: String| Error::Input(format!("{file}: {m}"));
        let mut bindings = Vec::new();
        let mut elem: Option<(Elem, &str)> = None;
        let mut params = Vec::new();
        let mut params_size = 0;
        let mut handles = Vec::new();
        for (h, g) in module.global_variables.iter() {
            let Some(rb) = &g.binding else { continue };
            let name = g.name.clone().unwrap_or_default();
            let role = match name.as_str() {
                "src" => Role::Src,
                "dst" => Role::Dst,
                "scratch" => Role::Scratch,
                "params" => Role::Params,
                _ => {
                    return Err(err(format!(
                        "binding '{name}' (@group({}) @binding({})) is not one Stagewise fills; \
                         the bindings are src, dst, scratch and params",
                        rb.group, rb.binding
                    )));
                }
            };
            if rb.group != 0 {
                return Err(err(format!(
                    "binding '{name}' is in @group({}); Stagewise binds group 0 only",
                    rb.group
                )));
            }
            let inner = &module.types[g.ty].inner;
            match role {
                Role::Params => {
                    if g.space != AddressSpace::Uniform {
                        return Err(err("'params' must be var<uniform>".into()));
                    }
                    let TypeInner::Struct { members, span } = inner else {
                        return Err(err("'params' must be a struct".into()));
                    };
                    params_size = *span;
                    for m in members {
                        let fname = m.name.clone().unwrap_or_default();
                        let TypeInner::Scalar(s) = module.types[m.ty].inner else {
                            return Err(err(format!(
                                "params.{fname} must be a u32, i32 or f32 scalar"
                            )));
                        };
                        if s.width != 4 || s.kind == ScalarKind::Bool {
                            return Err(err(format!(
                                "params.{fname} must be a u32, i32 or f32 scalar"
                            )));
                        }
                        params.push(Field {
                            name: fname,
                            offset: m.offset,
                            kind: s.kind,
                        });
                    }
                }
                _ => {
                    let AddressSpace::Storage { access } = g.space else {
                        return Err(err(format!("'{name}' must be var<storage>")));
                    };
                    if role != Role::Src && !access.contains(naga::StorageAccess::STORE) {
                        return Err(err(format!("'{name}' must be var<storage, read_write>")));
                    }
                    let TypeInner::Array {
                        base,
                        size: ArraySize::Dynamic,
                        ..
                    } = inner
                    else {
                        return Err(err(format!(
                            "'{name}' must be a runtime-sized array (array<T>)"
                        )));
                    };
                    let e = match module.types[*base].inner {
                        TypeInner::Scalar(s) if s.width == 4 => match s.kind {
                            ScalarKind::Uint => Some(Elem::U32),
                            ScalarKind::Sint => Some(Elem::I32),
                            ScalarKind::Float => Some(Elem::F32),
                            _ => None,
                        },
                        TypeInner::Vector {
                            size: VectorSize::Bi,
                            scalar,
                        } if scalar.kind == ScalarKind::Float && scalar.width == 4 => {
                            Some(Elem::Complex)
                        }
                        _ => None,
                    };
                    if role == Role::Scratch {
                        if e != Some(Elem::U32) {
                            return Err(err("'scratch' must be array<u32>".into()));
                        }
                    } else {
                        let Some(e) = e else {
                            return Err(err(format!(
                                "'{name}' must be array<T> with T u32, i32, f32 or vec2<f32>"
                            )));
                        };
                        if let Some((other, oname)) = elem
                            && other != e
                        {
                            return Err(err(format!(
                                "'{oname}' holds {} but '{name}' holds {}: src and dst hold one type",
                                other.wgsl(),
                                e.wgsl()
                            )));
                        }
                        elem = Some((e, if role == Role::Src { "src" } else { "dst" }));
                    }
                }
            }
            if bindings.iter().any(|(r, _)| *r == role) {
                return Err(err(format!("'{name}' is declared twice")));
            }
            bindings.push((role, rb.binding));
            handles.push((h, role));
        }
        for need in [Role::Src, Role::Dst] {
            if !bindings.iter().any(|(r, _)| *r == need) {
                let name = if need == Role::Src { "src" } else { "dst" };
                return Err(err(format!(
                    "no binding '{name}': a kernel reads `src` (var<storage, read> array<T>) and \
                     writes `dst` (var<storage, read_write> array<T>), both in @group(0)"
                )));
            }
        }
        let mut entries = Vec::new();
        for (i, ep) in module.entry_points.iter().enumerate() {
            if ep.stage != naga::ShaderStage::Compute {
                continue;
            }
            let fi = info.get_entry_point(i);
            if let Some((b, kind, e)) = super::uniform::divergent_barrier(&ep.function, fi) {
                let (bl, el) = (span_at(b, source), span_at(e, source));
                let exit_at = el.map_or(String::new(), |l| {
                    format!(" at {}:{}", l.line_number, l.line_position)
                });
                return Err(at(
                    file,
                    bl,
                    &format!(
                        "barrier in non-uniform control flow (entry point '{}'): the `{kind}`{exit_at} is taken by some invocations only, so they skip this barrier while the others wait at it; WGSL requires every invocation of a workgroup to reach each barrier (on a GPU: a hang or a race)",
                        ep.name
                    ),
                ));
            }
            let uses = handles
                .iter()
                .filter(|(h, _)| !fi[*h].is_empty())
                .map(|(_, r)| *r)
                .collect();
            let find = |n: &str| sizes.iter().find(|s| s.0 == n).map(|s| s.1);
            entries.push(Entry {
                name: ep.name.clone(),
                // An overridable size as the run's values resolve it.
                workgroup_size: find(&ep.name).unwrap_or(ep.workgroup_size),
                uses,
                workgroup_bytes: bytes.iter().find(|b| b.0 == ep.name).map_or(0, |b| b.1),
            });
        }
        if entries.is_empty() {
            return Err(err("no @compute entry point".into()));
        }
        Ok(Contract {
            entries,
            elem: elem.map(|e| e.0).unwrap_or(Elem::U32),
            bindings,
            params,
            params_size,
            specialized: (!module.overrides.is_empty())
                .then(|| overrides::specialize(source, &module, &resolved)),
            overrides: declared,
            resolved,
            loops: module.functions.iter().any(|(_, f)| has_loop(&f.body))
                || module
                    .entry_points
                    .iter()
                    .any(|ep| has_loop(&ep.function.body)),
        })
    }

    pub fn binding(&self, role: Role) -> Option<u32> {
        self.bindings.iter().find(|(r, _)| *r == role).map(|b| b.1)
    }

    /// The entry points `names` (empty: every one, in file order).
    pub fn select(&self, names: &[String]) -> Result<Vec<Entry>> {
        if names.is_empty() {
            return Ok(self.entries.clone());
        }
        names
            .iter()
            .map(|n| {
                self.entries
                    .iter()
                    .find(|e| &e.name == n)
                    .cloned()
                    .ok_or_else(|| {
                        let all: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
                        Error::Input(format!(
                            "--entry {n}: no such compute entry point; the kernel has {}",
                            all.join(", ")
                        ))
                    })
            })
            .collect()
    }
}
