//! A kernel written only for these tests, with no annotation of any kind: the IR pass finds its
//! accesses, and each pattern's counts (warp 32, 2 workgroups of 64 invocations) are derived by
//! hand.

use super::*;
use stagewise::gpu::{Plan, execute_blocking as execute};
use stagewise::lens::analysis::{GlobalSite, SharedSite};

const K: &str = "struct Soa { head: array<u32, 8>, vals: array<u32> }

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> soa: Soa;
@group(0) @binding(3) var<storage, read> v4: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> counter: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> params: vec4<u32>;

var<workgroup> tile: array<u32, 1024>;
var<workgroup> tile_p: array<u32, 1056>;

@compute @workgroup_size(64)
fn strided(@builtin(global_invocation_id) g: vec3<u32>) {
    dst[g.x] = src[2u * g.x] + params.x;
}

@compute @workgroup_size(64)
fn members(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let i = w.x * 64u + l;
    dst[i] = soa.vals[i];
}

@compute @workgroup_size(64)
fn wide(@builtin(global_invocation_id) g: vec3<u32>) {
    let v = v4[g.x];
    dst[g.x] = v.x + v.w;
}

@compute @workgroup_size(64)
fn count(@builtin(global_invocation_id) g: vec3<u32>) {
    atomicAdd(&counter[1], 1u);
}

@compute @workgroup_size(64)
fn transpose(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let c = l % 32u;
    for (var r = l / 32u; r < 32u; r += 2u) {
        tile[r * 32u + c] = r * 32u + c;
    }
    workgroupBarrier();
    for (var r = l / 32u; r < 32u; r += 2u) {
        dst[w.x * 1024u + r * 32u + c] = tile[c * 32u + r];
    }
}

@compute @workgroup_size(64)
fn transpose_padded(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let c = l % 32u;
    for (var r = l / 32u; r < 32u; r += 2u) {
        tile_p[r * 33u + c] = r * 32u + c;
    }
    workgroupBarrier();
    for (var r = l / 32u; r < 32u; r += 2u) {
        dst[w.x * 1024u + r * 32u + c] = tile_p[c * 33u + r];
    }
}
";

/// Buffer words per binding (params is a uniform).
const WORDS: [usize; 6] = [256, 2048, 8 + 128, 4 * 128, 4, 4];

/// Record `entry` over 2 workgroups with `bindings` bound: its one pass and the analysis.
fn run(entry: &str, bindings: &[u32]) -> (PassRecord, PassLens, Vec<u32>) {
    let (g, rec) = stagewise::lens::record::recording(gpu());
    let p = g.pipeline("handmade", K, entry).unwrap();
    let bufs: Vec<wgpu::Buffer> = WORDS
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if i == 5 {
                g.uniform("params", &[7, 0, 0, 0]).unwrap()
            } else {
                g.storage_init("b", &(0..w as u32).collect::<Vec<_>>())
                    .unwrap()
            }
        })
        .collect();
    let entries: Vec<wgpu::BindGroupEntry> = bindings
        .iter()
        .map(|&b| wgpu::BindGroupEntry {
            binding: b,
            resource: bufs[b as usize].as_entire_binding(),
        })
        .collect();
    let bg = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &p.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut plan = Plan::default();
    plan.push(entry, &p, bg, [2, 1, 1]);
    plan.output = Some(stagewise::gpu::Region::whole(&bufs[4]));
    plan.keep = bufs;
    let out = execute(&g, &plan, false).unwrap();
    let counter = out.output.clone();
    let r = rec.take().remove(0);
    let l = lens::analysis::analyse(0, &r, 32, None, None);
    (r, l, counter)
}

/// The one site of `p` whose source text is `expr`, and its `kind`.
fn global<'a>(r: &PassRecord, p: &'a PassLens, expr: &str) -> &'a GlobalSite {
    let g: Vec<_> = p
        .global
        .iter()
        .filter(|g| r.kernel.sites[g.site as usize].expr == expr)
        .collect();
    assert_eq!(g.len(), 1, "{expr}: {:?}", r.kernel.sites);
    g[0]
}

fn shared<'a>(r: &PassRecord, p: &'a PassLens, expr: &str) -> &'a SharedSite {
    let s: Vec<_> = p
        .shared
        .iter()
        .filter(|s| r.kernel.sites[s.site as usize].expr == expr)
        .collect();
    assert_eq!(s.len(), 1, "{expr}: {:?}", r.kernel.sites);
    s[0]
}

/// (requests, sectors, min sectors, segments)
fn counts(g: &GlobalSite) -> (u64, u64, u64, u64) {
    (g.requests, g.sectors, g.min_sectors, g.segments)
}

#[test]
fn strided_read_stride_2() {
    let (r, p, _) = run("strided", &[0, 1, 5]);
    // 4 requests of 32 lanes; lanes read every other word: 256 bytes span 8 sectors and 2
    // segments for 128 bytes' worth (4 sectors). The uniform is no memory traffic.
    let read = global(&r, &p, "src[2u * g.x]");
    assert_eq!(counts(read), (4, 32, 16, 8));
    assert_eq!(read.kind, Kind::Read);
    assert_eq!(counts(global(&r, &p, "dst[g.x]")), (4, 16, 16, 4));
    assert_eq!(p.global.len(), 2);
    assert!(r.kernel.sites.iter().all(|s| s.buffer != "params"));
    // The site points at the line and column as written.
    let s = &r.kernel.sites[read.site as usize];
    let (ln, text) = K
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("src[2u * g.x]"))
        .unwrap();
    assert_eq!((s.line as usize, s.text.as_str()), (ln + 1, text));
    assert_eq!(s.col as usize, text.find("src[").unwrap() + 1);
    // The builtins the entry point lacks were added: wg, lid and addresses are the hardware's.
    for a in r.accesses.iter().filter(|a| a.site == read.site) {
        assert_eq!(a.addr, 2 * (a.wg * 64 + a.lid));
    }
}

#[test]
fn struct_member_read() {
    let (r, p, _) = run("members", &[1, 2]);
    // soa.vals starts 8 words (32 bytes) in: a request's 128 bytes fill 4 sectors over 2 segments.
    let read = global(&r, &p, "soa.vals[i]");
    assert_eq!(counts(read), (4, 16, 16, 8));
    for a in r.accesses.iter().filter(|a| a.site == read.site) {
        assert_eq!(a.addr, 8 + a.wg * 64 + a.lid);
    }
    assert_eq!(r.kernel.sites[read.site as usize].buffer, "soa");
}

#[test]
fn vec4_read_is_one_request_of_4_words() {
    let (r, p, _) = run("wide", &[1, 3]);
    // 32 lanes × 16 bytes = 512 bytes: 16 sectors, 4 segments, per request.
    let read = global(&r, &p, "v4[g.x]");
    assert_eq!(counts(read), (4, 64, 64, 16));
    assert_eq!(read.bytes, 4 * 32 * 16);
    assert_eq!(r.kernel.sites[read.site as usize].width, 4);
    for a in r.accesses.iter().filter(|a| a.site == read.site) {
        assert_eq!(a.addr, 4 * (a.wg * 64 + a.lid));
    }
}

#[test]
fn atomic_counter() {
    let (r, p, out) = run("count", &[4]);
    // Every lane adds to word 1: one sector and one segment per request.
    let add = global(&r, &p, "counter[1]");
    assert_eq!(add.kind, Kind::Write);
    assert_eq!(counts(add), (4, 4, 4, 4));
    assert!(r.accesses.iter().all(|a| a.addr == 1));
    assert_eq!(out[1], 1 + 128);
}

#[test]
fn workgroup_transpose_with_and_without_padding() {
    for (entry, tile, write, read, ways) in [
        (
            "transpose",
            "tile",
            "tile[r * 32u + c]",
            "tile[c * 32u + r]",
            32,
        ),
        (
            "transpose_padded",
            "tile_p",
            "tile_p[r * 33u + c]",
            "tile_p[c * 33u + r]",
            1,
        ),
    ] {
        let (r, p, _) = run(entry, &[1]);
        // Per workgroup 2 warps × 16 loop iterations: 64 requests per site over 2 workgroups.
        let w = shared(&r, &p, write);
        assert_eq!(
            (w.kind, w.requests, w.max_ways),
            (Kind::Write, 64, 1),
            "{entry}"
        );
        // Unpadded, a warp's column read hits one bank 32 times; padded, 32 banks once.
        let rd = shared(&r, &p, read);
        assert_eq!(
            (rd.kind, rd.requests, rd.max_ways),
            (Kind::Read, 64, ways),
            "{entry}"
        );
        assert_eq!(rd.mean_ways, ways as f64, "{entry}");
        assert_eq!(r.kernel.sites[rd.site as usize].buffer, tile);
        assert_eq!(r.kernel.sites[rd.site as usize].space, Space::Workgroup);
        // A loop records once per iteration: 16 instances per invocation.
        let max = r
            .accesses
            .iter()
            .filter(|a| a.site == rd.site)
            .map(|a| a.instance)
            .max();
        assert_eq!(max, Some(15), "{entry}");
        assert_eq!(
            counts(global(&r, &p, "dst[w.x * 1024u + r * 32u + c]")),
            (64, 256, 256, 64)
        );
    }
}

#[test]
fn textures_are_refused_naming_the_kernel() {
    let src = "@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1)
fn main() { o[0] = textureLoad(t, vec2<i32>(0, 0), 0).x; }
";
    let e = lens::ir::instrument("tex kernel", src)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'tex kernel'") && e.contains("texture"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}
