//! The recording build of a kernel, made by a pass over naga's IR.
//!
//! The kernel's WGSL is parsed after the recorder ([`super::sites::recorder`]). In every
//! function, each load (`Expression::Load`), store, atomic and `workgroupUniformLoad` of a
//! `storage` or `workgroup` variable — through any chain of indices, struct members and vector
//! components — becomes an access site: a recording call is inserted in the same block, right
//! after the `Emit` that evaluates a load and just before a store or atomic, so only executed
//! accesses are recorded, once per execution. The word address is the one naga's layout gives
//! (array strides, member offsets). A site in a function an entry point calls calls
//! `lens_rec(site, counter, address)`; in an entry point, a straight-line site calls
//! `lens_at(place, address)` and a site in a loop `lens_in(address)` in the chunk `lens_chunk` took for its loop's round, and the entry point
//! becomes a call of its recording copy in recorded workgroups and of its body as written in the
//! others. Every entry point first calls `lens_start` with its linear
//! workgroup id and local index (adding the builtins where it lacks them). The module is
//! validated and written back by naga's WGSL writer; the normal build is never touched.
//! Uniform, private and function variables are no memory traffic; textures are refused.

use super::entry::{
    chunk_head, emit_new, entry_ids, entry_names, refuse_textures, size_seen, unbound,
};
use super::sites::{
    Block as LogBlock, Kind, LensEntry, LensKernel, MAX_SITES, RESERVED, Site, Space, recorder,
};
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
    let find = |name: &str| {
        module
            .functions
            .iter()
            .find(|(_, f)| f.name.as_deref() == Some(name))
            .map(|(h, _)| h)
            .ok_or_else(|| err(format!("the recorder's {name} is missing")))
    };
    let mut pass = Pass {
        source,
        shift: head.len(),
        rec: find("lens_rec")?,
        chunk: find("lens_chunk")?,
        word: find("lens_in")?,
        u32_ty: module
            .types
            .iter()
            .find(|(_, t)| t.inner == TypeInner::Scalar(naga::Scalar::U32))
            .map(|(h, _)| h)
            .ok_or_else(|| err("the recorder's u32 is missing".into()))?,
        open: Vec::new(),
        loop_sites: Vec::new(),
        at: find("lens_at")?,
        sites: Vec::new(),
        entry: false,
        loops: 0,
        counted: 0,
        block: Vec::new(),
        invocations: 0,
    };
    let start = find("lens_start")?;
    let handles: Vec<_> = module
        .functions
        .iter()
        .filter(|(_, f)| !f.name.as_deref().is_some_and(|n| RESERVED.contains(&n)))
        .map(|(h, _)| h)
        .collect();
    for h in handles {
        let mut f = std::mem::take(&mut module.functions[h]);
        let r = pass.function(&module, &mut f, &before[h], false);
        module.functions[h] = f;
        r.map_err(err)?;
    }
    let mut blocks = Vec::with_capacity(module.entry_points.len());
    for i in 0..module.entry_points.len() {
        let ep = &module.entry_points[i];
        // A workgroup size set by pipeline constants is not known here: no block then.
        let fixed = ep.workgroup_size_overrides.is_none() && ep.function.result.is_none();
        pass.invocations = ep.workgroup_size.iter().product();
        let uses = before.get_entry_point(i);
        let workgroup_bytes: u32 = module
            .global_variables
            .iter()
            .filter(|(h, g)| g.space == AddressSpace::WorkGroup && !uses[*h].is_empty())
            .map(|(_, g)| module.types[g.ty].inner.size(module.to_ctx()))
            .sum();
        pass.block.clear();
        let loops_before = pass.loop_sites.len();
        let original = ep.function.clone();
        let mut f = std::mem::take(&mut module.entry_points[i].function);
        pass.function(&module, &mut f, before.get_entry_point(i), fixed)
            .map_err(err)?;
        let block = std::mem::take(&mut pass.block);
        let f = if block.is_empty() && pass.loop_sites.len() == loops_before {
            entry_ids(&mut module, f, start, 0, None)
        } else {
            let words = block.len() as u32 * pass.invocations;
            let calls = [
                module
                    .functions
                    .append(unbound(f, "lens_body"), Span::UNDEFINED),
                module
                    .functions
                    .append(unbound(original.clone(), "lens_plain"), Span::UNDEFINED),
            ];
            let shim = Function {
                name: original.name,
                arguments: original.arguments,
                ..Default::default()
            };
            entry_ids(&mut module, shim, start, words, Some(calls))
        };
        module.entry_points[i].function = f;
        blocks.push((
            (pass.invocations, workgroup_bytes),
            (!block.is_empty()).then_some(LogBlock {
                sites: block,
                invocations: pass.invocations,
            }),
        ));
    }
    let sites = std::mem::take(&mut pass.sites);
    let loops = std::mem::take(&mut pass.loop_sites);
    if sites.len() + loops.len() > MAX_SITES {
        return Err(err(format!(
            "has {} access sites and {} loops with sites (at most {MAX_SITES} together)",
            sites.len(),
            loops.len()
        )));
    }
    size_seen(&mut module, pass.counted.max(1));
    let info = validate(&module, &text)
        .map_err(|e| err(format!("the recording build does not validate: {e}")))?;
    let out =
        naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
            .map_err(|e| err(format!("cannot write the recording build: {e}")))?;
    let entries = entry_names(&module, &out)
        .into_iter()
        .zip(blocks)
        .map(
            |((name, built), ((invocations, workgroup_bytes), block))| LensEntry {
                name,
                built,
                invocations,
                workgroup_bytes,
                block,
            },
        )
        .collect();
    Ok(LensKernel {
        original: source.to_string(),
        source: out,
        sites,
        entries,
        loops,
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
    /// The recorder's calls: a site recorded through the counter (in a function), a loop's
    /// chunk and a site's word in it, a straight-line site.
    rec: Handle<Function>,
    chunk: Handle<Function>,
    word: Handle<Function>,
    at: Handle<Function>,
    u32_ty: Handle<naga::Type>,
    /// The entry point's loops around the statement: each one's chunk base (a local variable)
    /// and its sites so far.
    open: Vec<(Handle<naga::LocalVariable>, Vec<u32>)>,
    /// The sites of every loop that has some ([`LensKernel::loops`]).
    loop_sites: Vec<Vec<u32>>,
    sites: Vec<Site>,
    /// In an entry point (not a function it may call more than once) whose workgroup size is
    /// known.
    entry: bool,
    /// Loops around the statement being instrumented.
    loops: u32,
    /// Sites recorded through the counter (`lens_seen`'s length).
    counted: u32,
    /// The entry point's straight-line sites so far, and its invocations a workgroup.
    block: Vec<u32>,
    invocations: u32,
}

impl Pass<'_> {
    fn function(
        &mut self,
        m: &Module,
        f: &mut Function,
        info: &FunctionInfo,
        entry: bool,
    ) -> std::result::Result<(), String> {
        self.entry = entry;
        self.loops = 0;
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
                    self.loops += 1;
                    if self.entry {
                        let base = f.local_variables.append(
                            naga::LocalVariable {
                                name: Some("lens_c".into()),
                                ty: self.u32_ty,
                                init: None,
                            },
                            span,
                        );
                        self.open.push((base, Vec::new()));
                    }
                    let body = self.block(m, f, info, body);
                    let continuing = self.block(m, f, info, continuing);
                    self.loops -= 1;
                    let (mut body, continuing) = (body?, continuing?);
                    if let Some((base, sites)) = self.entry.then(|| self.open.pop()).flatten()
                        && !sites.is_empty()
                    {
                        let tag = (MAX_SITES - 1 - self.loop_sites.len()) as u32;
                        let mut head = chunk_head(f, self.chunk, base, [tag, sites.len() as u32]);
                        head.extend_block(body);
                        body = head;
                        self.loop_sites.push(sites);
                    }
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
        // A straight-line site of an entry point runs at most once per invocation: its word has
        // a fixed place in the workgroup's block.
        let (function, arguments) = if self.entry && self.loops == 0 {
            let at = lit(e, self.block.len() as u32 * self.invocations);
            self.block.push(site);
            (self.at, vec![at, addr])
        } else if let Some((base, sites)) = self.entry.then(|| self.open.last_mut()).flatten() {
            // A site in a loop of the entry point: its word in the loop's chunk.
            let j = lit(e, sites.len() as u32);
            sites.push(site);
            let pointer = e.append(Expression::LocalVariable(*base), span);
            let base = e.append(Expression::Load { pointer }, span);
            let at = e.append(
                Expression::Binary {
                    op: BinaryOperator::Add,
                    left: base,
                    right: j,
                },
                span,
            );
            (self.word, vec![at, addr])
        } else {
            let (id, k) = (lit(e, site), lit(e, self.counted));
            self.counted += 1;
            (self.rec, vec![id, k, addr])
        };
        emit_new(f, first, out, span);
        out.push(
            Statement::Call {
                function,
                arguments,
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
