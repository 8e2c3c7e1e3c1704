//! WGSL's rules on mixing binary operators, which naga's parser does not enforce and browsers'
//! WGSL compilers (Chrome's Tint) do: `a | b + c`, `a & b == c`, `a << b + c`, `a && b || c`
//! need parentheses (WGSL §8.19: a bitwise expression's operands are unary expressions and one
//! operator repeats; a shift's operands are unary; `&&` and `||` do not mix; no chained
//! relationals). A token-level check of every kernel Stagewise compiles.

const TEMPLATED: &[&str] = &[
    "vec2", "vec3", "vec4", "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4", "mat4x2",
    "mat4x3", "mat4x4", "array", "ptr", "atomic", "bitcast", "var",
];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Operand(String),
    Op(&'static str),
    Open,
    Close,
    /// Ends an expression: `,` `;` `{` `}` `:` `=` and compound assignments, `->`, keywords.
    Break,
}

const OPS: &[&str] = &[
    "<<=", ">>=", "&&", "||", "<<", ">>", "<=", ">=", "==", "!=", "->", "+=", "-=", "*=", "/=",
    "%=", "&=", "|=", "^=", "++", "--", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "!", "~",
    "=",
];

fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if src[i..].starts_with("/*") {
            let end = src[i + 2..].find("*/").map_or(b.len(), |e| i + 4 + e);
            line += src[i..end].matches('\n').count();
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &src[s..i];
            // A template list (vec2<f32>, array<u32, 4>, var<storage, read>): skipped whole.
            let rest = src[i..].trim_start();
            if TEMPLATED.contains(&word) && rest.starts_with('<') {
                i = src.len() - rest.len() + 1;
                let mut depth = 1;
                while i < b.len() && depth > 0 {
                    match b[i] {
                        b'<' => depth += 1,
                        b'>' => depth -= 1,
                        _ => {}
                    }
                    i += 1;
                }
                out.push((Tok::Operand(word.into()), line));
            } else if matches!(
                word,
                "return"
                    | "let"
                    | "var"
                    | "const"
                    | "if"
                    | "else"
                    | "for"
                    | "while"
                    | "switch"
                    | "case"
                    | "loop"
                    | "fn"
                    | "struct"
                    | "override"
            ) {
                out.push((Tok::Break, line));
            } else {
                out.push((Tok::Operand(word.into()), line));
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let s = i;
            while i < b.len() {
                let d = b[i];
                let exp_sign = (d == b'-' || d == b'+')
                    && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')
                    && !src[s..i].starts_with("0x");
                let hex_exp_sign = (d == b'-' || d == b'+') && matches!(b[i - 1], b'p' | b'P');
                if d.is_ascii_alphanumeric() || d == b'.' || exp_sign || hex_exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push((Tok::Operand(src[s..i].into()), line));
        } else if c == b'(' || c == b'[' {
            out.push((Tok::Open, line));
            i += 1;
        } else if c == b')' || c == b']' {
            out.push((Tok::Close, line));
            i += 1;
        } else if matches!(c, b',' | b';' | b'{' | b'}' | b':' | b'@') {
            out.push((Tok::Break, line));
            i += 1;
        } else if let Some(op) = OPS.iter().find(|o| src[i..].starts_with(**o)) {
            i += op.len();
            let t = if op.ends_with('=') && !matches!(*op, "<=" | ">=" | "==" | "!=")
                || matches!(*op, "->" | "++" | "--")
            {
                Tok::Break
            } else {
                Tok::Op(op)
            };
            out.push((t, line));
        } else {
            i += 1;
        }
    }
    out
}

fn class(op: &str) -> &'static str {
    match op {
        "|" | "&" | "^" => "bitwise",
        "<<" | ">>" => "shift",
        "<" | ">" | "<=" | ">=" | "==" | "!=" => "relational",
        "&&" | "||" => "logical",
        _ => "arithmetic",
    }
}

/// One expression level's binary operators: where WGSL refuses them unparenthesised.
fn check_level(ops: &[(&'static str, usize)]) -> Option<String> {
    let bad = |line: usize, why: &str| Some(format!("line {line}: {why}"));
    let bitwise: Vec<_> = ops.iter().filter(|o| class(o.0) == "bitwise").collect();
    if let Some(&&(b, line)) = bitwise.first()
        && let Some(o) = ops.iter().find(|o| o.0 != b)
    {
        return bad(
            line,
            &format!("'{b}' mixed with '{}' needs parentheses", o.0),
        );
    }
    let logical: Vec<_> = ops.iter().filter(|o| class(o.0) == "logical").collect();
    if let Some(&&(l, line)) = logical.first()
        && logical.iter().any(|o| o.0 != l)
    {
        return bad(line, "'&&' mixed with '||' needs parentheses");
    }
    // Between logical operators: at most one relational, and a shift only alone on its side.
    for part in ops.split(|o| class(o.0) == "logical") {
        if part.iter().filter(|o| class(o.0) == "relational").count() > 1 {
            return bad(part[0].1, "chained relational operators");
        }
        for side in part.split(|o| class(o.0) == "relational") {
            if let Some(s) = side.iter().find(|o| class(o.0) == "shift")
                && side.len() > 1
            {
                return bad(
                    s.1,
                    &format!("'{}' with another operator needs parentheses", s.0),
                );
            }
        }
    }
    None
}

/// The first place `src` breaks WGSL's operator-mixing rules (None: it keeps them).
pub fn mixing_error(src: &str) -> Option<String> {
    // A stack of expression levels, each the binary operators seen at that level.
    let mut levels: Vec<Vec<(&'static str, usize)>> = vec![Vec::new()];
    let mut prev_operand = false;
    for (t, line) in tokens(src) {
        match t {
            Tok::Operand(_) => prev_operand = true,
            Tok::Open => {
                levels.push(Vec::new());
                prev_operand = false;
            }
            Tok::Close => {
                let done = levels.pop().unwrap_or_default();
                if let Some(e) = check_level(&done) {
                    return Some(e);
                }
                if levels.is_empty() {
                    levels.push(Vec::new());
                }
                prev_operand = true;
            }
            Tok::Break => {
                let top = levels.last_mut().expect("a level");
                if let Some(e) = check_level(top) {
                    return Some(e);
                }
                top.clear();
                prev_operand = false;
            }
            Tok::Op(op) => {
                // After an operand it is binary; else unary (-x, !x, ~x, &x, *p).
                if prev_operand && !matches!(op, "!" | "~") {
                    levels.last_mut().expect("a level").push((op, line));
                }
                prev_operand = false;
            }
        }
    }
    levels.iter().find_map(|l| check_level(l))
}

#[test]
fn the_rules_catch_what_tint_refuses_and_pass_the_rest() {
    for bad in [
        "let x = a | b + c;",
        "let x = ((ls >> 6u) << 12u) | (((ls >> 0u) & 63u) << 0u) + (t0 << 6u);",
        "if (a & 1u == 0u) {}",
        "let y = a << b + 1u;",
        "let y = a + b << 2u;",
        "let z = a && b || c;",
        "let z = a | b & c;",
        "x = f(a, b ^ c * 2u);",
    ] {
        assert!(mixing_error(bad).is_some(), "{bad}");
    }
    for good in [
        "let x = a | (b + c);",
        "let x = a | b | c;",
        "if ((a & 1u) == 0u && b < c) {}",
        "let y = (a << 2u) + 1u;",
        "let y = x << 2u == y;",
        "let v = vec2<f32>(-a, -b * 2.0);",
        "var<workgroup> sh: array<vec2<f32>, 256>;",
        "let p = atomicAdd(&status[0], 1u) + 1u;",
        "for (var i = 0u; i < n; i++) { s += 1e-5 * f32(i); }",
        "let q = select(a, b, x > y) * -1.0;",
        "let m = bitcast<u32>(x) >> 31u;",
        "fn f(a: u32) -> u32 { return a & 3u; }",
    ] {
        assert_eq!(mixing_error(good), None, "{good}");
    }
}
