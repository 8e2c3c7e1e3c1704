//! What the lens's IR pass (`super::ir`) adds to a module besides the recording calls: each entry
//! point's workgroup and local index and its recording copy, a loop's chunk, the recorder's
//! per-site counters, and the entry points' names in the written recording build.

use naga::{
    ArraySize, BinaryOperator, Binding, Block, BuiltIn, Expression, Function, Handle, Literal,
    Module, Scalar, Span, Statement, Type, TypeInner, VectorSize,
};

/// The module's unnamed type `inner` (the one it has, or a new one).
fn add_type(m: &mut Module, inner: TypeInner) -> Handle<Type> {
    m.types.insert(Type { name: None, inner }, Span::UNDEFINED)
}

/// An entry point's start: `lens_start(wid.x + wid.y · nwg.x + wid.z · nwg.x · nwg.y,
/// local_invocation_index, block)` (`start`; `block`: words of a workgroup's block), with the
/// builtins added as arguments where missing. With `calls` (the recording copy of the entry
/// point's body and the body as written, each a function of its arguments), the entry point
/// becomes `if (recorded) { calls[0](…) } else { calls[1](…) }`: whether the workgroup is
/// recorded comes from the workgroup id and a read-only buffer, so the branch is uniform and the
/// copies' barriers stay in uniform control flow.
pub(super) fn entry_ids(
    m: &mut Module,
    mut f: Function,
    start: Handle<Function>,
    block: u32,
    calls: Option<[Handle<Function>; 2]>,
) -> Function {
    let u32_ty = add_type(m, TypeInner::Scalar(Scalar::U32));
    let vec3_ty = add_type(
        m,
        TypeInner::Vector {
            size: VectorSize::Tri,
            scalar: Scalar::U32,
        },
    );
    let s = Span::UNDEFINED;
    let first = f.expressions.len();
    let builtin = |f: &mut Function, b: BuiltIn, ty, name: &str| {
        for (i, a) in f.arguments.iter().enumerate() {
            if a.binding == Some(Binding::BuiltIn(b)) {
                return f
                    .expressions
                    .append(Expression::FunctionArgument(i as u32), s);
            }
            if let TypeInner::Struct { ref members, .. } = m.types[a.ty].inner
                && let Some(k) = members
                    .iter()
                    .position(|mb| mb.binding == Some(Binding::BuiltIn(b)))
            {
                let base = f
                    .expressions
                    .append(Expression::FunctionArgument(i as u32), s);
                return f.expressions.append(
                    Expression::AccessIndex {
                        base,
                        index: k as u32,
                    },
                    s,
                );
            }
        }
        f.arguments.push(naga::FunctionArgument {
            name: Some(name.into()),
            ty,
            binding: Some(Binding::BuiltIn(b)),
        });
        let i = f.arguments.len() as u32 - 1;
        f.expressions.append(Expression::FunctionArgument(i), s)
    };
    let f = &mut f;
    let args = f.arguments.len() as u32;
    let lid = builtin(f, BuiltIn::LocalInvocationIndex, u32_ty, "lens_lid_in");
    let wid = builtin(f, BuiltIn::WorkGroupId, vec3_ty, "lens_wid_in");
    let nwg = builtin(f, BuiltIn::NumWorkGroups, vec3_ty, "lens_nwg_in");
    let e = &mut f.expressions;
    let c = |e: &mut naga::Arena<Expression>, v, i| {
        e.append(Expression::AccessIndex { base: v, index: i }, s)
    };
    let bin = |e: &mut naga::Arena<Expression>, op, left, right| {
        e.append(Expression::Binary { op, left, right }, s)
    };
    let (wx, wy, wz) = (c(e, wid, 0), c(e, wid, 1), c(e, wid, 2));
    let (nx, ny) = (c(e, nwg, 0), c(e, nwg, 1));
    let ry = bin(e, BinaryOperator::Multiply, wy, nx);
    let plane = bin(e, BinaryOperator::Multiply, nx, ny);
    let rz = bin(e, BinaryOperator::Multiply, wz, plane);
    let sum = bin(e, BinaryOperator::Add, wx, ry);
    let wg = bin(e, BinaryOperator::Add, sum, rz);
    let block = e.append(Expression::Literal(Literal::U32(block)), s);
    let on = calls.map(|_| {
        // ((lens_pick[2 · (wg >> 5)] >> (wg & 31)) & 1) != 0
        let lit =
            |e: &mut naga::Arena<Expression>, v| e.append(Expression::Literal(Literal::U32(v)), s);
        let pick = m
            .global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some("lens_pick"))
            .map(|(h, _)| h)
            .expect("the recorder's lens_pick");
        let pick = e.append(Expression::GlobalVariable(pick), s);
        let (five, two, mask, one, zero) = (lit(e, 5), lit(e, 2), lit(e, 31), lit(e, 1), lit(e, 0));
        let word = bin(e, BinaryOperator::ShiftRight, wg, five);
        let index = bin(e, BinaryOperator::Multiply, word, two);
        let pointer = e.append(Expression::Access { base: pick, index }, s);
        let bits = e.append(Expression::Load { pointer }, s);
        let at = bin(e, BinaryOperator::And, wg, mask);
        let shifted = bin(e, BinaryOperator::ShiftRight, bits, at);
        let bit = bin(e, BinaryOperator::And, shifted, one);
        bin(e, BinaryOperator::NotEqual, bit, zero)
    });
    let arguments: Vec<_> = (0..args)
        .map(|i| e.append(Expression::FunctionArgument(i), s))
        .collect();
    let mut head = Block::default();
    emit_new(f, first, &mut head, s);
    head.push(
        Statement::Call {
            function: start,
            arguments: vec![wg, lid, block],
            result: None,
        },
        s,
    );
    match (calls, on) {
        (Some([rec, plain]), Some(on)) => {
            let call = |function| {
                Block::from_vec(vec![Statement::Call {
                    function,
                    arguments: arguments.clone(),
                    result: None,
                }])
            };
            head.push(
                Statement::If {
                    condition: on,
                    accept: call(rec),
                    reject: call(plain),
                },
                s,
            );
        }
        _ => {
            let body = std::mem::take(&mut f.body);
            head.extend_block(body);
        }
    }
    f.body = head;
    std::mem::take(f)
}

/// Give `lens_seen` `n` counters (one per site that counts its instances).
pub(super) fn size_seen(m: &mut Module, n: u32) {
    let base = add_type(m, TypeInner::Scalar(Scalar::U32));
    let ty = add_type(
        m,
        TypeInner::Array {
            base,
            size: ArraySize::Constant(std::num::NonZeroU32::new(n).expect("n > 0")),
            stride: 4,
        },
    );
    for (_, g) in m.global_variables.iter_mut() {
        if g.name.as_deref() == Some("lens_seen") {
            g.ty = ty;
        }
    }
}

/// (name as written, name in the written module) of every entry point: naga's writer renames some
/// (`main2` becomes `main2_`); entry points are written in order, each after an `@compute` line.
pub(super) fn entry_names(m: &Module, out: &str) -> Vec<(String, String)> {
    let mut written = Vec::new();
    let mut rest = out;
    while let Some(i) = rest.find("@compute") {
        rest = &rest[i..];
        if let Some(j) = rest.find("fn ") {
            let name: String = rest[j + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            written.push(name);
            rest = &rest[j..];
        } else {
            break;
        }
    }
    m.entry_points
        .iter()
        .zip(written)
        .map(|(ep, w)| (ep.name.clone(), w))
        .collect()
}

/// A loop's first statements every time round: `base = lens_chunk(tag, sites)` (`chunk`, `args`).
pub(super) fn chunk_head(
    f: &mut Function,
    chunk: Handle<Function>,
    base: Handle<naga::LocalVariable>,
    args: [u32; 2],
) -> Block {
    let (e, s) = (&mut f.expressions, Span::UNDEFINED);
    let arguments = args.map(|v| e.append(Expression::Literal(Literal::U32(v)), s));
    let result = e.append(Expression::CallResult(chunk), s);
    let pointer = e.append(Expression::LocalVariable(base), s);
    Block::from_vec(vec![
        Statement::Call {
            function: chunk,
            arguments: arguments.to_vec(),
            result: Some(result),
        },
        Statement::Store {
            pointer,
            value: result,
        },
    ])
}

/// An entry point's function as one an entry point calls: named `name`, its arguments unbound.
pub(super) fn unbound(mut f: Function, name: &str) -> Function {
    f.name = Some(name.into());
    for a in &mut f.arguments {
        a.binding = None;
    }
    f
}

pub(super) fn refuse_textures(m: &Module) -> std::result::Result<(), String> {
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
