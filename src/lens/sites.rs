//! A kernel's recording build and its access sites, and the recorder every recording build calls.

/// What one access site does. An atomic read-modify-write (`atomicAdd`, `atomicMax`, …) and
/// `atomicStore` are writes; `atomicLoad` and `workgroupUniformLoad` are reads.
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

/// One access site of a kernel: one load, store, atomic or `workgroupUniformLoad` of a `storage`
/// or `workgroup` variable in its IR.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub kind: Kind,
    pub space: Space,
    /// The global variable accessed, by its name in the kernel.
    pub buffer: String,
    /// Words one access moves: the accessed value's size (1 for a `u32`, 2 for a `vec2<f32>`, 4 for
    /// a `vec4<u32>`). The recorded address is the first word.
    pub width: u32,
    /// 1-based line and column of the access in the kernel's WGSL as written.
    pub line: u32,
    pub col: u32,
    /// The access's source text (`keys_in[i]`, `&status[q]`), whitespace collapsed.
    pub expr: String,
    /// The whole line as written (for finding it in the code panel).
    pub text: String,
}

/// A kernel's recording build: its WGSL, its access sites (a record's site id indexes `sites`)
/// and its entry points.
#[derive(Clone, Debug, Default)]
pub struct LensKernel {
    /// The kernel as written (the normal build), which the sites' lines and columns refer to.
    pub original: String,
    /// The recording build.
    pub source: String,
    pub sites: Vec<Site>,
    pub entries: Vec<LensEntry>,
    /// Per loop of an entry point that has sites in its body: those sites, in the order of the
    /// words of its chunks (see [`recorder`]).
    pub loops: Vec<Vec<u32>>,
}

/// One entry point of a recording build.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LensEntry {
    /// Its name as written, and in the recording build (naga's WGSL writer renames some
    /// identifiers: `main2` becomes `main2_`).
    pub name: String,
    pub built: String,
    /// Invocations a workgroup (its `@workgroup_size`).
    pub invocations: u32,
    /// Bytes of workgroup memory it uses (the `var<workgroup>` it reaches).
    pub workgroup_bytes: u32,
    /// Where the entry point's straight-line sites write (see [`recorder`]); None where it has
    /// none (every site is then recorded through the counter).
    pub block: Option<Block>,
}

/// A recorded workgroup's block of the log: one word per (straight-line site, invocation),
/// site-major — the word at `(i · invocations + local index)` holds site `sites[i]`'s word
/// address + 1, or 0 where the invocation did not reach it.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub sites: Vec<u32>,
    pub invocations: u32,
}

impl Block {
    /// Words of one workgroup's block.
    pub fn words(&self) -> u64 {
        self.sites.len() as u64 * self.invocations as u64
    }
}

impl LensKernel {
    /// The recording build's entry point `name`.
    pub fn entry_point(&self, name: &str) -> Option<&LensEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The recording build's name of entry point `name`.
    pub fn entry<'a>(&'a self, name: &'a str) -> &'a str {
        self.entry_point(name).map_or(name, |e| e.built.as_str())
    }
}

/// The most sites one kernel may have (12 bits of a record word).
pub const MAX_SITES: usize = 4096;
/// Per-site dynamic instance counts are kept in 20 bits.
pub const INSTANCE_BITS: u32 = 20;

/// Names the recorder declares; a kernel that declares one of them is refused.
pub const RESERVED: [&str; 16] = [
    "LensLog",
    "lens_log",
    "lens_pick",
    "lens_pass",
    "lens_wg",
    "lens_lid",
    "lens_on",
    "lens_base",
    "lens_last",
    "lens_seen",
    "lens_start",
    "lens_put",
    "lens_rec",
    "lens_at",
    "lens_chunk",
    "lens_in",
];

/// The recorder, put before a kernel for the IR pass ([`super::ir`]). Only the workgroups whose
/// bit is set in `lens_pick` (the sample, [`super::sample`]) record; `lens_start` runs at every
/// entry point's start. Two ways to record:
/// - `lens_rec` (a site in a function an entry point calls, or in an entry point whose workgroup
///   size is set by pipeline constants): an atomic counter and 3 words per access — workgroup
///   << 10 | local index, site << 20 | the site's dynamic instance in this invocation
///   (`lens_seen`, one counter per such site), word address.
/// - A site in a loop of an entry point: every time round, the loop takes a *chunk* of the log
///   (`lens_chunk`: one atomic, no branch) — workgroup << 10 | local index, tag << 20, then one
///   word per site of the loop's body (not of the loops in it) — and each site writes its
///   address + 1 in its word (`lens_in`). A chunk's tag is `MAX_SITES - 1 -` the loop's index in
///   [`LensKernel::loops`]. An invocation's chunks lie in the log in the order it took them (its
///   atomics on one counter), so the host counts its sites' instances. It runs only in the
///   recording copy below; a chunk past the log's capacity lands on its spare words.
///
/// The counter counts words: records and chunks follow each other in the log.
/// - `lens_at` (a straight-line site of an entry point: it runs at most once per invocation):
///   one word, the address + 1, at a place fixed by the workgroup's rank in the sample and the
///   site ([`Block`]), in the pass's region at the log's end (`lens_pass.x`, set by the host,
///   which sizes the regions before the run). Such an entry point runs a copy of its body with
///   the recording calls in recorded workgroups and its body as written in the others, so a
///   site costs one store and no branch: a generated kernel's thousand sites, each with its
///   branches and atomic, took the drivers' compilers minutes.
///
/// `lens_pick` holds, per 32 workgroups, their bits and the bits set before them; `lens_at`
/// clamps its place to the log's spare last word (the host sizes the regions, the clamp keeps a
/// mistake inside the log).
pub fn recorder() -> String {
    format!(
        "struct LensLog {{ count: atomic<u32>, cap: u32, _a: u32, _b: u32, rec: array<u32> }}
@group(1) @binding(0) var<storage, read_write> lens_log: LensLog;
@group(1) @binding(1) var<storage, read> lens_pick: array<u32>;
@group(1) @binding(2) var<uniform> lens_pass: vec4<u32>;
var<private> lens_wg: u32;
var<private> lens_lid: u32;
var<private> lens_on: bool;
var<private> lens_base: u32;
var<private> lens_last: u32;
var<private> lens_seen: array<u32, 1>;
fn lens_start(wg: u32, lid: u32, block: u32) {{
    lens_wg = wg;
    lens_lid = lid;
    let bits = lens_pick[2u * (wg >> 5u)];
    lens_on = ((bits >> (wg & 31u)) & 1u) != 0u;
    let rank = lens_pick[2u * (wg >> 5u) + 1u] + countOneBits(bits & ((1u << (wg & 31u)) - 1u));
    lens_base = lens_pass.x + rank * block + lid;
    lens_last = arrayLength(&lens_log.rec) - 1u;
}}
fn lens_put(word: u32, addr: u32) {{
    let b = atomicAdd(&lens_log.count, 3u);
    if (b < lens_log.cap) {{
        lens_log.rec[b] = (lens_wg << {LID_BITS}u) | lens_lid;
        lens_log.rec[b + 1u] = word;
        lens_log.rec[b + 2u] = addr;
    }}
}}
fn lens_rec(site: u32, k: u32, addr: u32) {{
    if (lens_on) {{
        lens_put((site << {INSTANCE_BITS}u) | min(lens_seen[k], {max}u), addr);
        lens_seen[k] += 1u;
    }}
}}
fn lens_chunk(tag: u32, len: u32) -> u32 {{
    let b = min(atomicAdd(&lens_log.count, len + 2u), lens_log.cap);
    lens_log.rec[b] = (lens_wg << {LID_BITS}u) | lens_lid;
    lens_log.rec[b + 1u] = tag << {INSTANCE_BITS}u;
    return b + 2u;
}}
fn lens_in(at: u32, addr: u32) {{
    lens_log.rec[min(at, lens_last)] = addr + 1u;
}}
fn lens_at(at: u32, addr: u32) {{
    lens_log.rec[min(lens_base + at, lens_last)] = addr + 1u;
}}
",
        max = (1u32 << INSTANCE_BITS) - 1
    )
}

/// Local indices take 10 bits of a record's first word (at most 1024 invocations a workgroup);
/// the workgroup the other 22 ([`super::sample::MAX_WORKGROUPS`]).
pub const LID_BITS: u32 = 10;
