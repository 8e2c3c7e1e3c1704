//! A barrier some invocations skip: after a `continue`, `break` or `return` that only some
//! invocations take (its condition non-uniform by naga's analysis), a `workgroupBarrier()`
//! later in the same loop body (or, after a `return`, in the rest of the entry point) is in
//! non-uniform control flow. WGSL forbids it; naga 30 lets the `continue`/`break` case through,
//! and on a GPU it hangs or races (seed 002's odd-even sort has exactly this `continue`). The
//! workbench refuses such a kernel with both places named.

use naga::valid::FunctionInfo;
use naga::{Block, Expression, Function, Handle, Span, Statement};

/// A non-uniform exit seen on the way: its keyword and where it is.
#[derive(Clone, Copy)]
struct Exit {
    kind: &'static str,
    span: Span,
}

/// (barrier span, exit) of the first barrier after a non-uniform exit in `body`.
pub fn divergent_barrier(f: &Function, fi: &FunctionInfo) -> Option<(Span, &'static str, Span)> {
    let mut found = None;
    walk(&f.body, f, fi, false, None, &mut found);
    found.map(|(b, e)| (b, e.kind, e.span))
}

/// Whether naga's origin of a non-uniform value is per invocation: a builtin argument (the
/// invocation ids) or a global (private or writable storage). naga calls every `var` of the
/// function non-uniform, which would flag every loop counter: a value that comes through a `var`
/// is not judged (the rule catches exits computed from the invocation ids, as in seed 002).
fn from_invocation(f: &Function, origin: Handle<Expression>) -> bool {
    matches!(
        f.expressions[origin],
        Expression::FunctionArgument(_) | Expression::GlobalVariable(_)
    )
}

/// Walk `block` in control flow that is non-uniform when `nu`, past the exit `div`; returns the
/// non-uniform exit in effect at its end.
fn walk(
    block: &Block,
    f: &Function,
    fi: &FunctionInfo,
    nu: bool,
    mut div: Option<Exit>,
    found: &mut Option<(Span, Exit)>,
) -> Option<Exit> {
    for (stmt, span) in block.span_iter() {
        if found.is_some() {
            return div;
        }
        let non_uniform = |e: Handle<Expression>| {
            fi[e]
                .uniformity
                .non_uniform_result
                .is_some_and(|origin| from_invocation(f, origin))
        };
        match stmt {
            Statement::ControlBarrier(_) | Statement::WorkGroupUniformLoad { .. } => {
                if let Some(e) = div {
                    *found = Some((*span, e));
                }
            }
            Statement::Continue | Statement::Break | Statement::Return { .. } if nu => {
                let kind = match stmt {
                    Statement::Continue => "continue",
                    Statement::Break => "break",
                    _ => "return",
                };
                div = div.or(Some(Exit { kind, span: *span }));
            }
            Statement::Block(b) => div = walk(b, f, fi, nu, div, found),
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let nu = nu || non_uniform(*condition);
                let a = walk(accept, f, fi, nu, div, found);
                let r = walk(reject, f, fi, nu, div, found);
                div = div.or(a).or(r);
            }
            Statement::Switch { selector, cases } => {
                let nu = nu || non_uniform(*selector);
                for c in cases {
                    // A `break` in a case leaves the switch only.
                    let d = walk(&c.body, f, fi, nu, div, found);
                    if d.is_some_and(|e| e.kind != "break") {
                        div = div.or(d);
                    }
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                let d = walk(body, f, fi, nu, div, found);
                let d = walk(continuing, f, fi, nu, d, found);
                // `continue` and `break` end with the loop; a `return` reaches past it.
                if d.is_some_and(|e| e.kind == "return") {
                    div = div.or(d);
                }
            }
            _ => {}
        }
    }
    div
}
