//! The recording build of a kernel, made by a pass over naga's IR.
//!
//! The kernel's WGSL is parsed after the recorder ([`super::sites::recorder`]). In every
//! function, each load (`Expression::Load`), store, atomic and `workgroupUniformLoad` of a
//! `storage` or `workgroup` variable — through any chain of indices, struct members and vector
//! components — becomes an access site: a call `lens_rec(site, word address)` is inserted in the
//! same block, right after the `Emit` that evaluates a load and just before a store or atomic, so
//! only executed accesses are recorded, once per execution. The word address is the one naga's
//! layout gives (array strides, member offsets). Every entry point stores its linear workgroup id
//! and local index (adding the builtins where it lacks them) into the recorder's private globals
//! first. The module is validated and written back by naga's WGSL writer; the normal build is
//! never touched. Uniform, private and function variables are no memory traffic; textures are
//! refused.

use super::entry::{entry_ids, entry_names, size_seen};
use super::sites::{Kind, LensKernel, MAX_SITES, RESERVED, Site, Space, recorder};
use crate::error::{Error, Result};
use naga::{
    AddressSpace, BinaryOperator, Block, Expression, Function, Handle, Literal, Module, ScalarKind,
    Span, Statement, TypeInner, VectorSize, valid::FunctionInfo,
};

/// Build the recording version of `source` (named `label` in errors).
pub fn instrument(label: &str, source: &str) -> Result<LensKernel> {
    let err = |why: String| Error::Input(format!("lens: kernel '{label}': {why}"));
    // The recorder first: a function must be declared before its callers in naga's IR. Spans in
    // the kernel are shifted by its length.
    let head = recorder();
    let text = format!("{head}{source}");
    let module = match naga::front::wgsl::parse_str(&text) {
        Ok(m) => m,
        Err(e) => {
            parse(label, source)?;
            return Err(err(format!(
                "declares a name the lens's recorder uses ({}): {}",
                RESERVED.join(", "),
                e.message()
            )));
        }
    };
    let mut module = module;
    refuse_textures(&module).map_err(err)?;
    // Which loads are used: a load nothing uses (`_ = a[0];`) is dropped by every compiler.
    let before = validate(&module, &text).map_err(|e| err(format!("does not validate: {e}")))?;
    let mut pass = Pass {
        source,
        shift: head.len(),
        rec: None,
        sites: Vec::new(),
    };
    let rec = module
        .functions
        .iter()
        .find(|(_, f)| f.name.as_deref() == Some("lens_rec"))
        .map(|(h, _)| h)
        .ok_or_else(|| err("the recorder is missing".into()))?;
    pass.rec = Some(rec);
    let handles: Vec<_> = module.functions.iter().map(|(h, _)| h).collect();
    for h in handles {
        if h == rec {
            continue;
        }
        let mut f = std::mem::take(&mut module.functions[h]);
        let r = pass.function(&module, &mut f, &before[h]);
        module.functions[h] = f;
        r.map_err(err)?;
    }
    for i in 0..module.entry_points.len() {
        let mut f = std::mem::take(&mut module.entry_points[i].function);
        let r = pass.function(&module, &mut f, before.get_entry_point(i));
        if r.is_ok() {
            entry_ids(&mut module, &mut f);
        }
        module.entry_points[i].function = f;
        r.map_err(err)?;
    }
    let sites = pass.sites;
    if sites.len() > MAX_SITES {
        return Err(err(format!(
            "has {} access sites (at most {MAX_SITES})",
            sites.len()
        )));
    }
    size_seen(&mut module, sites.len().max(1) as u32);
    let info = validate(&module, &text)
        .map_err(|e| err(format!("the recording build does not validate: {e}")))?;
    let out =
        naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
            .map_err(|e| err(format!("cannot write the recording build: {e}")))?;
    let entries = entry_names(&module, &out);
    Ok(LensKernel {
        original: source.to_string(),
        source: out,
        sites,
        entries,
    })
}

/// Validate `m`; the error is naga's message with its place in `text`.
fn validate(m: &Module, text: &str) -> std::result::Result<naga::valid::ModuleInfo, String> {
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(m)
    .map_err(|e| e.emit_to_string(text))
}

/// Parse `source` as the compiler would; the error names the kernel and naga's message.
pub fn parse(label: &str, source: &str) -> Result<Module> {
    naga::front::wgsl::parse_str(source).map_err(|e| {
        Error::Input(format!(
            "lens: kernel '{label}' does not parse: {}",
            e.message()
        ))
    })
}

fn refuse_textures(m: &Module) -> std::result::Result<(), String> {
    for (_, g) in m.global_variables.iter() {
        if let TypeInner::Image { .. }
        | TypeInner::Sampler { .. }
        | TypeInner::BindingArray { .. } = m.types[g.ty].inner
        {
            return Err(format!(
                "uses the texture, sampler or binding array '{}'; the lens records storage buffers \
                 and workgroup memory only",
                g.name.as_deref().unwrap_or("?")
            ));
        }
    }
    Ok(())
}

/// Where an access lands: a variable, a constant byte offset and (index, byte stride) terms.
struct Place {
    global: Handle<naga::GlobalVariable>,
    space: Space,
    offset: u32,
    terms: Vec<(Handle<Expression>, u32)>,
    /// Bytes of the accessed value.
    size: u32,
}

struct Pass<'s> {
    source: &'s str,
    /// Where the kernel starts in the parsed text.
    shift: usize,
    rec: Option<Handle<Function>>,
    sites: Vec<Site>,
}

impl Pass<'_> {
    fn function(
        &mut self,
        m: &Module,
        f: &mut Function,
        info: &FunctionInfo,
    ) -> std::result::Result<(), String> {
        let body = std::mem::take(&mut f.body);
        f.body = self.block(m, f, info, body)?;
        Ok(())
    }

    fn block(
        &mut self,
        m: &Module,
        f: &mut Function,
        info: &FunctionInfo,
        block: Block,
    ) -> std::result::Result<Block, String> {
        let mut out = Block::with_capacity(block.len());
        for (stmt, span) in block.span_into_iter() {
            match stmt {
                Statement::Emit(range) => {
                    let loads: Vec<_> = range
                        .clone()
                        .filter_map(|h| match f.expressions[h] {
                            Expression::Load { pointer } if info[h].ref_count > 0 => {
                                Some((h, pointer))
                            }
                            _ => None,
                        })
                        .collect();
                    out.push(Statement::Emit(range), span);
                    for (h, pointer) in loads {
                        let at = f.expressions.get_span(h);
                        self.record(m, f, &mut out, pointer, Kind::Read, at)?;
                    }
                }
                Statement::Store { pointer, .. } | Statement::Atomic { pointer, .. } => {
                    self.record(m, f, &mut out, pointer, Kind::Write, span)?;
                    out.push(stmt, span);
                }
                Statement::WorkGroupUniformLoad { pointer, .. } => {
                    self.record(m, f, &mut out, pointer, Kind::Read, span)?;
                    out.push(stmt, span);
                }
                Statement::ImageStore { .. } | Statement::ImageAtomic { .. } => {
                    return Err("writes a texture; the lens records buffers only".into());
                }
                Statement::Block(b) => {
                    let b = self.block(m, f, info, b)?;
                    out.push(Statement::Block(b), span);
                }
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let accept = self.block(m, f, info, accept)?;
                    let reject = self.block(m, f, info, reject)?;
                    out.push(
                        Statement::If {
                            condition,
                            accept,
                            reject,
                        },
                        span,
                    );
                }
                Statement::Switch { selector, cases } => {
                    let mut new = Vec::with_capacity(cases.len());
                    for mut c in cases {
                        c.body = self.block(m, f, info, std::mem::take(&mut c.body))?;
                        new.push(c);
                    }
                    out.push(
                        Statement::Switch {
                            selector,
                            cases: new,
                        },
                        span,
                    );
                }
                Statement::Loop {
                    body,
                    continuing,
                    break_if,
                } => {
                    let body = self.block(m, f, info, body)?;
                    let continuing = self.block(m, f, info, continuing)?;
                    out.push(
                        Statement::Loop {
                            body,
                            continuing,
                            break_if,
                        },
                        span,
                    );
                }
                other => out.push(other, span),
            }
        }
        Ok(out)
    }

    /// If `pointer` reaches a storage or workgroup variable: a new site, and the call recording it
    /// appended to `out`.
    fn record(
        &mut self,
        m: &Module,
        f: &mut Function,
        out: &mut Block,
        pointer: Handle<Expression>,
        kind: Kind,
        span: Span,
    ) -> std::result::Result<(), String> {
        let Some(p) = self.place(m, f, pointer)? else {
            return Ok(());
        };
        let site = self.sites.len() as u32;
        let (line, col, text) = self.locate(span);
        let expr_span = f.expressions.get_span(pointer);
        let expr = self.snippet(if expr_span.is_defined() {
            expr_span
        } else {
            span
        });
        self.sites.push(Site {
            kind,
            space: p.space,
            buffer: m.global_variables[p.global]
                .name
                .clone()
                .unwrap_or_default(),
            width: (p.size / 4).max(1),
            line,
            col,
            expr,
            text,
        });
        // The word address: offset + Σ u32(index) · stride, in words where every stride is whole
        // words (always, for 32-bit data), else in bytes and divided by 4.
        let unit = if p.offset % 4 == 0 && p.terms.iter().all(|t| t.1 % 4 == 0) {
            4
        } else {
            1
        };
        let first = f.expressions.len();
        let e = &mut f.expressions;
        let lit = |e: &mut naga::Arena<Expression>, v: u32| {
            e.append(Expression::Literal(Literal::U32(v)), span)
        };
        let mut addr = None;
        for (index, stride) in p.terms {
            let mut t = e.append(
                Expression::As {
                    expr: index,
                    kind: ScalarKind::Uint,
                    convert: Some(4),
                },
                span,
            );
            if stride / unit != 1 {
                let s = lit(e, stride / unit);
                t = e.append(
                    Expression::Binary {
                        op: BinaryOperator::Multiply,
                        left: t,
                        right: s,
                    },
                    span,
                );
            }
            addr = Some(match addr {
                None => t,
                Some(a) => e.append(
                    Expression::Binary {
                        op: BinaryOperator::Add,
                        left: a,
                        right: t,
                    },
                    span,
                ),
            });
        }
        let mut addr = match addr {
            None => lit(e, p.offset / unit),
            Some(a) if p.offset == 0 => a,
            Some(a) => {
                let o = lit(e, p.offset / unit);
                e.append(
                    Expression::Binary {
                        op: BinaryOperator::Add,
                        left: a,
                        right: o,
                    },
                    span,
                )
            }
        };
        if unit == 1 {
            let four = lit(e, 2);
            addr = e.append(
                Expression::Binary {
                    op: BinaryOperator::ShiftRight,
                    left: addr,
                    right: four,
                },
                span,
            );
        }
        let id = lit(e, site);
        emit_new(f, first, out, span);
        out.push(
            Statement::Call {
                function: self.rec.expect("recorder"),
                arguments: vec![id, addr],
                result: None,
            },
            span,
        );
        Ok(())
    }

    /// The variable, offset and index terms `pointer` reaches; None for memory that is no traffic
    /// (uniform, private, function variables).
    fn place(
        &self,
        m: &Module,
        f: &Function,
        pointer: Handle<Expression>,
    ) -> std::result::Result<Option<Place>, String> {
        enum Step {
            Dyn(Handle<Expression>),
            Const(u32),
        }
        let mut steps = Vec::new();
        let mut h = pointer;
        let global = loop {
            match f.expressions[h] {
                Expression::Access { base, index } => {
                    steps.push(Step::Dyn(index));
                    h = base;
                }
                Expression::AccessIndex { base, index } => {
                    steps.push(Step::Const(index));
                    h = base;
                }
                Expression::GlobalVariable(g) => break g,
                Expression::FunctionArgument(i) => {
                    let ty = f.arguments[i as usize].ty;
                    return match m.types[ty].inner {
                        TypeInner::Pointer {
                            space: AddressSpace::Storage { .. } | AddressSpace::WorkGroup,
                            ..
                        } => Err(format!(
                            "function '{}' takes a storage or workgroup pointer; the lens records \
                             accesses through variables only",
                            f.name.as_deref().unwrap_or("?")
                        )),
                        _ => Ok(None),
                    };
                }
                _ => return Ok(None),
            }
        };
        let g = &m.global_variables[global];
        let space = match g.space {
            AddressSpace::Storage { .. } => Space::Global,
            AddressSpace::WorkGroup => Space::Workgroup,
            _ => return Ok(None),
        };
        let (mut offset, mut terms) = (0u32, Vec::new());
        let mut inner = m.types[g.ty].inner.clone();
        for step in steps.into_iter().rev() {
            let (stride, next) = match inner {
                TypeInner::Array { base, stride, .. } => (stride, m.types[base].inner.clone()),
                TypeInner::Vector { scalar, .. } => {
                    (scalar.width as u32, TypeInner::Scalar(scalar))
                }
                TypeInner::Matrix { rows, scalar, .. } => {
                    let col = if rows == VectorSize::Bi { 2 } else { 4 };
                    (
                        col * scalar.width as u32,
                        TypeInner::Vector { size: rows, scalar },
                    )
                }
                TypeInner::Struct { ref members, .. } => {
                    let Step::Const(i) = step else {
                        return Err("indexes a struct dynamically".into());
                    };
                    let mbr = &members[i as usize];
                    offset += mbr.offset;
                    inner = m.types[mbr.ty].inner.clone();
                    continue;
                }
                ref other => return Err(format!("cannot lay out an access into {other:?}")),
            };
            match step {
                Step::Dyn(index) => terms.push((index, stride)),
                Step::Const(i) => offset += i * stride,
            }
            inner = next;
        }
        let size = inner.size(m.to_ctx());
        Ok(Some(Place {
            global,
            space,
            offset,
            terms,
            size,
        }))
    }

    /// `span` as a byte range of the kernel as written.
    fn range(&self, span: Span) -> Option<std::ops::Range<usize>> {
        let r = span.to_range()?;
        let (a, b) = (
            r.start.checked_sub(self.shift)?,
            r.end.checked_sub(self.shift)?,
        );
        (b <= self.source.len()).then_some(a..b)
    }

    /// 1-based line and column of `span` in the kernel as written, and that whole line.
    fn locate(&self, span: Span) -> (u32, u32, String) {
        let Some(r) = self.range(span) else {
            return (0, 0, String::new());
        };
        let loc = Span::from(r).location(self.source);
        let text = self
            .source
            .lines()
            .nth(loc.line_number as usize - 1)
            .unwrap_or("")
            .to_string();
        (loc.line_number, loc.line_position, text)
    }

    fn snippet(&self, span: Span) -> String {
        self.range(span).map_or(String::new(), |r| {
            self.source[r]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
    }
}

/// `Emit` the expressions appended since `first` that need it (literals and variables need none).
pub(super) fn emit_new(f: &Function, first: usize, out: &mut Block, span: Span) {
    let mut run: Option<(Handle<Expression>, Handle<Expression>)> = None;
    let flush = |run: &mut Option<(Handle<Expression>, Handle<Expression>)>, out: &mut Block| {
        if let Some((a, b)) = run.take() {
            out.push(Statement::Emit(naga::Range::new_from_bounds(a, b)), span);
        }
    };
    for (h, e) in f.expressions.iter().skip(first) {
        if e.needs_pre_emit() {
            flush(&mut run, out);
        } else {
            run = Some(run.map_or((h, h), |(a, _)| (a, h)));
        }
    }
    flush(&mut run, out);
}
