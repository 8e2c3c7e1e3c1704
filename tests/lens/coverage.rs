//! Every memory access in a kernel's IR is a recorded site. The accesses are found here
//! independently of the pass (src/lens/ir.rs): every `Load` in each function's expression arena
//! (emitted or not) that something uses (compilers drop the rest) and every store, atomic and `workgroupUniformLoad` statement in any block,
//! whose pointer reaches a `storage` or `workgroup` variable. Every recording the lens tests make
//! is checked (each shipped kernel, each generator's shapes the tests use).

use super::*;
use naga::{AddressSpace, Block, Expression, Function, Handle, Module, Span, Statement};
use stagewise::algo::{fft, scan};
use std::collections::HashSet;

/// The storage or workgroup variable `pointer` reaches, if any.
fn memory(m: &Module, f: &Function, mut h: Handle<Expression>) -> bool {
    loop {
        match f.expressions[h] {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => h = base,
            Expression::GlobalVariable(g) => {
                return matches!(
                    m.global_variables[g].space,
                    AddressSpace::Storage { .. } | AddressSpace::WorkGroup
                );
            }
            _ => return false,
        }
    }
}

fn statements(b: &Block, out: &mut Vec<(Statement, Span)>) {
    for (s, span) in b.span_iter() {
        out.push((s.clone(), *span));
        match s {
            Statement::Block(b) => statements(b, out),
            Statement::If { accept, reject, .. } => {
                statements(accept, out);
                statements(reject, out);
            }
            Statement::Switch { cases, .. } => cases.iter().for_each(|c| statements(&c.body, out)),
            Statement::Loop {
                body, continuing, ..
            } => {
                statements(body, out);
                statements(continuing, out);
            }
            _ => {}
        }
    }
}

/// (line, column) of every memory access in `src`'s IR, sorted.
pub fn accesses(src: &str) -> Vec<(u32, u32)> {
    let m = naga::front::wgsl::parse_str(src).unwrap();
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&m)
    .unwrap();
    let mut out = Vec::new();
    let at = |s: Span| {
        let l = s.location(src);
        (l.line_number, l.line_position)
    };
    let funcs = m.functions.iter().map(|(h, f)| (f, &info[h]));
    let entries = m.entry_points.iter().enumerate();
    for (f, fi) in funcs.chain(entries.map(|(i, e)| (&e.function, info.get_entry_point(i)))) {
        for (h, e) in f.expressions.iter() {
            if let Expression::Load { pointer } = *e
                && fi[h].ref_count > 0
                && memory(&m, f, pointer)
            {
                out.push(at(f.expressions.get_span(h)));
            }
        }
        let mut all = Vec::new();
        statements(&f.body, &mut all);
        for (s, span) in all {
            if let Statement::Store { pointer, .. }
            | Statement::Atomic { pointer, .. }
            | Statement::WorkGroupUniformLoad { pointer, .. } = s
                && memory(&m, f, pointer)
            {
                out.push(at(span));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Every kernel of `rep`: its sites are exactly its IR's memory accesses.
pub fn every_access_is_a_site(rep: &LensReport) {
    let mut seen = HashSet::new();
    for r in &rep.records {
        let k = &r.kernel;
        if !seen.insert(k.original.as_str()) {
            continue;
        }
        let mut got: Vec<(u32, u32)> = k.sites.iter().map(|s| (s.line, s.col)).collect();
        got.sort_unstable();
        let want = accesses(&k.original);
        assert!(!want.is_empty(), "{}: no accesses", r.label);
        assert_eq!(got, want, "{}: sites against the IR's accesses", r.label);
    }
}

/// Every algorithm's every variant on its example input; the kernels' sites cover their IR, and
/// every static shader in shaders/ is among the kernels recorded.
#[test]
fn every_access_of_every_shipped_kernel_is_a_site() {
    let mut originals = Vec::new();
    // The defaults on their examples; the seed's plans at 2^16, where Cormen's alternation needs
    // the seed's block-move kernel (the example is too small to cross the line at m); the
    // decoupled scan's workgroup-memory kernel, which an adapter with subgroups runs only on
    // demand; the large FFT's separate unpacking pass (real-pair is never fused into a pass).
    let shared = scan::Options {
        shared_scan: true,
        ..Default::default()
    };
    let pair = fft::Options {
        size: Some(1 << 14),
        real_pair: true,
        ..Default::default()
    };
    let cases = AlgoOptions::all_defaults()
        .into_iter()
        .map(|a| (a, None))
        .chain([
            (AlgoOptions::Bmmc(Default::default()), Some(1u32 << 16)),
            (AlgoOptions::Scan(shared), None),
            (AlgoOptions::Fft(pair), None),
        ]);
    for (a, n) in cases {
        let algo = a.algo();
        for v in algo.info().variants {
            let dtype = algo.fixed_dtype().unwrap_or(DType::U32);
            let input = match n {
                Some(n) => Data::from_u32(&(0..n).collect::<Vec<_>>()),
                None => algo
                    .example(dtype)
                    .unwrap_or_else(|| Data::from_u32(&(0..4096u32).rev().collect::<Vec<_>>())),
            };
            let req = RunRequest {
                variant: algo.info().variant(Some(v.name)).unwrap(),
                dtype,
                input,
                trace: false,
            };
            let normal = algo::run(algo, gpu(), &req).unwrap();
            let rep = lens::record_run(algo, gpu(), &req, &normal, 32)
                .unwrap_or_else(|e| panic!("{} {}: {e}", a.name(), v.name));
            every_access_is_a_site(&rep);
            originals.extend(rep.records.iter().map(|r| r.kernel.original.clone()));
        }
    }
    // Each shader file's first function declaration appears in some recorded kernel.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files = 0;
    for d in std::fs::read_dir(dir).unwrap() {
        let d = d.unwrap().path();
        // The lens's own probes measure the adapter's memory system; they are never recorded.
        if d.ends_with("lens") {
            continue;
        }
        for f in std::fs::read_dir(d).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            let Some(decl) = text
                .lines()
                .find(|l| l.starts_with("fn ") && !l.contains("{{"))
            else {
                continue;
            };
            files += 1;
            assert!(
                originals.iter().any(|o| o.contains(decl)),
                "no recorded kernel has '{decl}'"
            );
        }
    }
    assert!(files >= 20, "{files} shader files");
}
