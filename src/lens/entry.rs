//! What the lens's IR pass (`super::ir`) adds to a module besides the recording calls: each entry
//! point's workgroup and local index, the recorder's per-site counters, and the entry points' names
//! in the written recording build.

use super::ir::emit_new;
use naga::{
    ArraySize, BinaryOperator, Binding, Block, BuiltIn, Expression, Function, Module, Scalar, Span,
    Statement, Type, TypeInner, VectorSize,
};

/// At an entry point's start: `lens_wg = wid.x + wid.y · nwg.x + wid.z · nwg.x · nwg.y` and
/// `lens_lid = local_invocation_index`, with the builtins added as arguments where missing.
pub(super) fn entry_ids(m: &mut Module, f: &mut Function) {
    let u32_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Scalar(Scalar::U32),
        },
        Span::UNDEFINED,
    );
    let vec3_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: VectorSize::Tri,
                scalar: Scalar::U32,
            },
        },
        Span::UNDEFINED,
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
    let global = |m: &Module, e: &mut naga::Arena<Expression>, name: &str| {
        let g = m
            .global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some(name))
            .map(|(h, _)| h)
            .expect("recorder global");
        e.append(Expression::GlobalVariable(g), s)
    };
    let gw = global(m, e, "lens_wg");
    let gl = global(m, e, "lens_lid");
    let mut head = Block::default();
    emit_new(f, first, &mut head, s);
    head.push(
        Statement::Store {
            pointer: gw,
            value: wg,
        },
        s,
    );
    head.push(
        Statement::Store {
            pointer: gl,
            value: lid,
        },
        s,
    );
    let body = std::mem::take(&mut f.body);
    head.extend_block(body);
    f.body = head;
}

/// Give `lens_seen` one counter per site.
pub(super) fn size_seen(m: &mut Module, n: u32) {
    let base = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Scalar(Scalar::U32),
        },
        Span::UNDEFINED,
    );
    let ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Array {
                base,
                size: ArraySize::Constant(std::num::NonZeroU32::new(n).expect("n > 0")),
                stride: 4,
            },
        },
        Span::UNDEFINED,
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
