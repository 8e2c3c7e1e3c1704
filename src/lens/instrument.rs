//! The recording build of a kernel: the same WGSL with its `// @lens` markers turned into calls.
//!
//! A marker is a comment at the end of a line: `// @lens SPEC; SPEC…`, each SPEC one of
//! - `wg EXPR`, `lid EXPR`: the invocation's linear workgroup id and local index (every entry
//!   point states both before its first access);
//! - `read BUF EXPR`, `write BUF EXPR` (global memory), `wg-read BUF EXPR`, `wg-write BUF EXPR`
//!   (workgroup memory): one access of buffer BUF at element index EXPR. A width suffix (`read4`)
//!   says the element is 4 words (a `vec4<u32>`): the word address is 4·EXPR.
//!
//! In the normal build the markers are comments: the compiled kernel is the file as written. The
//! recording build replaces each marker with code on the *same line* — after the line's statement,
//! or, when the line ends with `}`, just before that brace (inside a one-line `if`), or, when the
//! line is a `return` statement, just before it (after it the call would never run) — and appends
//! the recorder at the end of the module, so every line number stays the normal build's.

use crate::error::{Error, Result};

/// What one access site does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Read,
    Write,
}

/// Global (device) memory or workgroup (shared) memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Workgroup,
}

/// One access site of a kernel: a marker's SPEC.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub kind: Kind,
    pub space: Space,
    pub buffer: String,
    /// Words per element (1, or 4 for `vec4<u32>`).
    pub width: u32,
    /// 1-based line in the kernel's (specialised, normal-build) WGSL.
    pub line: u32,
    /// The index expression as written.
    pub expr: String,
    /// The whole line of the normal build (for finding it in the code panel).
    pub text: String,
}

/// A kernel's recording build: its WGSL and its access sites (a record's site id indexes `sites`).
#[derive(Clone, Debug)]
pub struct LensKernel {
    pub source: String,
    pub sites: Vec<Site>,
}

/// The most sites one kernel may have (12 bits of a record word).
pub const MAX_SITES: usize = 4096;
/// Per-site dynamic instance counts are kept in 20 bits.
pub const INSTANCE_BITS: u32 = 20;

const MARK: &str = "// @lens";

/// True when `source` carries lens markers.
pub fn has_markers(source: &str) -> bool {
    source.contains(MARK)
}

/// Build the recording version of `source` (named `label` in errors).
pub fn instrument(label: &str, source: &str) -> Result<LensKernel> {
    let err = |line: usize, why: String| {
        Error::Input(format!("lens: kernel '{label}' line {}: {why}", line + 1))
    };
    let mut sites = Vec::new();
    let mut out = String::with_capacity(source.len() + 2048);
    let (mut wg_marks, mut lid_marks) = (0usize, 0usize);
    for (ln, line) in source.lines().enumerate() {
        let Some(pos) = line.find(MARK) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        // The code before the marker, without any other comment on the line.
        let code = line[..pos].split("//").next().unwrap_or("").trim_end();
        let mut calls = String::new();
        for spec in line[pos + MARK.len()..].split(';') {
            let spec = spec.trim();
            if spec.is_empty() {
                continue;
            }
            let (word, rest) = spec
                .split_once(char::is_whitespace)
                .ok_or_else(|| err(ln, format!("marker '{spec}' has no expression")))?;
            let rest = rest.trim();
            match word {
                "wg" => {
                    wg_marks += 1;
                    calls.push_str(&format!(" lens_wg = lens_u32({rest});"));
                }
                "lid" => {
                    lid_marks += 1;
                    calls.push_str(&format!(" lens_lid = lens_u32({rest});"));
                }
                _ => {
                    let digits = word.trim_start_matches(|c: char| !c.is_ascii_digit());
                    let base = &word[..word.len() - digits.len()];
                    let width: u32 = if digits.is_empty() {
                        1
                    } else {
                        digits
                            .parse()
                            .map_err(|_| err(ln, format!("bad width in '{word}'")))?
                    };
                    let (kind, space) = match base {
                        "read" => (Kind::Read, Space::Global),
                        "write" => (Kind::Write, Space::Global),
                        "wg-read" => (Kind::Read, Space::Workgroup),
                        "wg-write" => (Kind::Write, Space::Workgroup),
                        _ => return Err(err(ln, format!("unknown marker '{word}'"))),
                    };
                    if !matches!(width, 1 | 2 | 4) {
                        return Err(err(ln, format!("width {width} (want 1, 2 or 4)")));
                    }
                    let (buffer, expr) = rest
                        .split_once(char::is_whitespace)
                        .ok_or_else(|| err(ln, format!("'{spec}' needs BUFFER EXPR")))?;
                    let id = sites.len();
                    calls.push_str(&format!(
                        " lens_rec({id}u, lens_u32({}) * {width}u);",
                        expr.trim()
                    ));
                    sites.push(Site {
                        kind,
                        space,
                        buffer: buffer.to_string(),
                        width,
                        line: ln as u32 + 1,
                        expr: expr.trim().to_string(),
                        text: line.to_string(),
                    });
                }
            }
        }
        let stmt = code.trim_start();
        let is_return = stmt
            .strip_prefix("return")
            .is_some_and(|r| r.starts_with([' ', ';', '(']));
        // Inside a one-line block (`if (c) { x = a[i]; }`), before its closing brace; before a
        // `return` (`return f(a[i]);`), which ends the function.
        if is_return {
            out.push_str(&code[..code.len() - stmt.len()]);
            out.push_str(calls.trim_start());
            out.push(' ');
            out.push_str(stmt);
        } else if let Some(body) = code.strip_suffix('}') {
            out.push_str(body.trim_end());
            out.push_str(&calls);
            out.push_str(" }");
        } else {
            out.push_str(code);
            out.push_str(&calls);
        }
        out.push('\n');
    }
    if sites.is_empty() {
        return Err(Error::Input(format!(
            "lens: kernel '{label}' marks no memory access (no '// @lens' markers)"
        )));
    }
    if sites.len() > MAX_SITES {
        return Err(Error::Input(format!(
            "lens: kernel '{label}' has {} access sites (at most {MAX_SITES})",
            sites.len()
        )));
    }
    let entries = source.matches("@compute").count();
    if wg_marks < entries || lid_marks < entries {
        return Err(Error::Input(format!(
            "lens: kernel '{label}' has {entries} entry points but {wg_marks} 'wg' and {lid_marks} \
             'lid' markers (each entry point names both)"
        )));
    }
    out.push_str(&recorder(sites.len()));
    Ok(LensKernel { source: out, sites })
}

/// The recorder appended to a recording build: an atomic counter and 3 words per access —
/// workgroup << 12 | local index, site << 20 | the site's dynamic instance in this invocation,
/// word address. (Recordable runs have under 2^20 workgroups: at most 2^19 elements.)
/// The calls convert through the alias `lens_u32`: a kernel's local may shadow `u32` itself (the
/// radix FFT kernel at E = 64 names its 33rd load `u32`).
fn recorder(nsites: usize) -> String {
    format!(
        "
// ---- lens recorder (recording build only) ----
alias lens_u32 = u32;
struct LensLog {{ count: atomic<u32>, cap: u32, _a: u32, _b: u32, rec: array<u32> }}
@group(1) @binding(0) var<storage, read_write> lens_log: LensLog;
var<private> lens_wg: u32;
var<private> lens_lid: u32;
var<private> lens_seen: array<u32, {nsites}>;
fn lens_rec(site: u32, addr: u32) {{
    let slot = atomicAdd(&lens_log.count, 1u);
    if (slot < lens_log.cap) {{
        let b = slot * 3u;
        lens_log.rec[b] = (lens_wg << 12u) | lens_lid;
        lens_log.rec[b + 1u] = (site << {INSTANCE_BITS}u) | min(lens_seen[site], {max}u);
        lens_log.rec[b + 2u] = addr;
    }}
    lens_seen[site] += 1u;
}}
",
        max = (1u32 << INSTANCE_BITS) - 1
    )
}

/// `source` without comments, whitespace collapsed: what the compiler sees of the normal build.
pub fn strip_comments(source: &str) -> String {
    source
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &str = "@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) l: u32) {
    let i = l; // @lens wg 0u; lid l
    if (i < 4u) { b[i] = a[i]; } // @lens read a i; write b i
    t[3u - i] = 1u; // @lens wg-write4 t 3u - i
}
";

    #[test]
    fn markers_become_calls_on_their_own_lines() {
        let k = instrument("k", K).unwrap();
        let lines: Vec<&str> = k.source.lines().collect();
        assert_eq!(lines[0], "@compute @workgroup_size(4)");
        assert_eq!(
            lines[2],
            "    let i = l; lens_wg = lens_u32(0u); lens_lid = lens_u32(l);"
        );
        assert_eq!(
            lines[3],
            "    if (i < 4u) { b[i] = a[i]; lens_rec(0u, lens_u32(i) * 1u); lens_rec(1u, lens_u32(i) * 1u); }"
        );
        assert_eq!(
            lines[4],
            "    t[3u - i] = 1u; lens_rec(2u, lens_u32(3u - i) * 4u);"
        );
        assert_eq!(k.sites.len(), 3);
        assert_eq!(k.sites[0].kind, Kind::Read);
        assert_eq!(k.sites[1].kind, Kind::Write);
        assert_eq!(k.sites[2].space, Space::Workgroup);
        assert_eq!(k.sites[2].width, 4);
        assert_eq!(k.sites[1].line, 4);
        assert!(k.source.contains("array<u32, 3>"));
        // The normal build is the marked file; stripped of comments it equals the unmarked kernel.
        let unmarked: String = K
            .lines()
            .map(|l| l.split("// @lens").next().unwrap().to_string() + "\n")
            .collect();
        assert_eq!(strip_comments(K), strip_comments(&unmarked));
    }

    #[test]
    fn recording_build_compiles_where_a_local_shadows_u32() {
        let src = "@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) l: u32) {
    let u32 = l + 1u; // @lens wg 0u; lid l
    a[u32] = l; // @lens write a u32
}
";
        let k = instrument("shadow", src).unwrap();
        let m = wgpu::naga::front::wgsl::parse_str(&k.source)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&k.source)));
        wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::all(),
        )
        .validate(&m)
        .unwrap();
    }

    #[test]
    fn a_return_line_records_before_it_returns() {
        let src = "fn get(i: u32) -> u32 {\n    return f(a[i]); // @lens read a i\n}\n\
                   @compute @workgroup_size(1)\nfn m() {\n    let x = get(0u); // @lens wg 0u; lid 0u\n}\n";
        let k = instrument("r", src).unwrap();
        let lines: Vec<&str> = k.source.lines().collect();
        assert_eq!(
            lines[1],
            "    lens_rec(0u, lens_u32(i) * 1u); return f(a[i]);"
        );
        assert_eq!(k.sites[0].line, 2);
        // `returned` is no return statement: the call goes after it.
        let k = instrument("r", &src.replace("return f", "returned = f")).unwrap();
        assert_eq!(
            k.source.lines().nth(1),
            Some("    returned = f(a[i]); lens_rec(0u, lens_u32(i) * 1u);")
        );
    }

    #[test]
    fn unmarked_and_malformed_kernels_are_refused() {
        let e = instrument("plain", "@compute @workgroup_size(1) fn m() {}").unwrap_err();
        assert!(e.to_string().contains("marks no memory access"), "{e}");
        let e = instrument("bad", "x = 1; // @lens fetch a i\n").unwrap_err();
        assert!(e.to_string().contains("unknown marker 'fetch'"), "{e}");
        let e = instrument(
            "nowg",
            "@compute @workgroup_size(1)\nfn m() {\n a[0] = 1u; // @lens write a 0u\n}\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("'wg'"), "{e}");
    }
}
