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
/// and each entry point's name in the recording build.
#[derive(Clone, Debug, Default)]
pub struct LensKernel {
    /// The kernel as written (the normal build), which the sites' lines and columns refer to.
    pub original: String,
    /// The recording build.
    pub source: String,
    pub sites: Vec<Site>,
    /// (name as written, name in `source`): naga's WGSL writer renames some identifiers.
    pub entries: Vec<(String, String)>,
}

impl LensKernel {
    /// The recording build's name of entry point `name`.
    pub fn entry<'a>(&'a self, name: &'a str) -> &'a str {
        self.entries
            .iter()
            .find(|(a, _)| a == name)
            .map_or(name, |(_, b)| b.as_str())
    }
}

/// The most sites one kernel may have (12 bits of a record word).
pub const MAX_SITES: usize = 4096;
/// Per-site dynamic instance counts are kept in 20 bits.
pub const INSTANCE_BITS: u32 = 20;

/// Names the recorder declares; a kernel that declares one of them is refused.
pub const RESERVED: [&str; 7] = [
    "LensLog",
    "lens_log",
    "lens_pick",
    "lens_wg",
    "lens_lid",
    "lens_seen",
    "lens_rec",
];

/// The recorder, put before a kernel for the IR pass: an atomic counter and 3 words per
/// access — workgroup << 10 | local index, site << 20 | the site's dynamic instance in this
/// invocation, word address — made only by the workgroups whose bit is set in `lens_pick` (the
/// sample, [`super::sample`]). `lens_seen` gets its length (the kernel's site count) from the
/// pass; `lens_wg` and `lens_lid` are set at entry.
pub fn recorder() -> String {
    format!(
        "struct LensLog {{ count: atomic<u32>, cap: u32, _a: u32, _b: u32, rec: array<u32> }}
@group(1) @binding(0) var<storage, read_write> lens_log: LensLog;
@group(1) @binding(1) var<storage, read> lens_pick: array<u32>;
var<private> lens_wg: u32;
var<private> lens_lid: u32;
var<private> lens_seen: array<u32, 1>;
fn lens_rec(site: u32, addr: u32) {{
    if (((lens_pick[lens_wg >> 5u] >> (lens_wg & 31u)) & 1u) == 0u) {{ return; }}
    let slot = atomicAdd(&lens_log.count, 1u);
    if (slot < lens_log.cap) {{
        let b = slot * 3u;
        lens_log.rec[b] = (lens_wg << {LID_BITS}u) | lens_lid;
        lens_log.rec[b + 1u] = (site << {INSTANCE_BITS}u) | min(lens_seen[site], {max}u);
        lens_log.rec[b + 2u] = addr;
    }}
    lens_seen[site] += 1u;
}}
",
        max = (1u32 << INSTANCE_BITS) - 1
    )
}

/// Local indices take 10 bits of a record's first word (at most 1024 invocations a workgroup);
/// the workgroup the other 22 ([`super::sample::MAX_WORKGROUPS`]).
pub const LID_BITS: u32 = 10;
