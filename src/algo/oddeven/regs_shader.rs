//! The register kernel's WGSL for one tile pass (see regs.rs): declarations, the entry point, the
//! tile loop, loads, the stage groups (regs_emit.rs) and the stores.

use super::regs::{RegsPass, groups, io_layout, off, padded};
use super::regs_emit::{Emit, base_line, emit_group};
use std::fmt::Write;

/// The WGSL of one tile pass (prepend keys.wgsl and tile.wgsl).
pub fn shader(rp: &RegsPass) -> String {
    let tile = rp.tile;
    let t_count = rp.threads();
    assert!(tile.is_power_of_two() && tile >= 256, "tile {tile}");
    let lres = rp.lres;
    let res = 1usize << lres;
    let rows = tile >> lres;
    assert!(rows > 2 * rp.halo && t_count >= res);
    let written = rows - 2 * rp.halo;
    let keys = rp.keys;
    assert!(matches!(keys, 8 | 16 | 32), "keys {keys}");
    let gs = groups(tile, keys, &rp.stages);
    let mut e = Emit {
        o: String::new(),
        double: rp.double,
        cur: 0,
        reads: false,
        c: t_count,
        keys,
    };
    let pb = padded(tile, keys);
    let _ = writeln!(
        e.o,
        "// Generated register kernel (src/algo/oddeven/regs.rs): tile {tile}, R = {res}, rows {rows} \
         (halo {}), {} stages in {} groups.",
        rp.halo,
        rp.stages.len(),
        gs.len()
    );
    let _ = writeln!(e.o, "var<workgroup> s0: array<u32, {pb}>;");
    if rp.double {
        let _ = writeln!(e.o, "var<workgroup> s1: array<u32, {pb}>;");
    }
    e.o.push_str(
        "\nfn load_key(y: i32) -> u32 {\n    let i = index_of(y);\n    if (i == MISSING_HIGH) { return 0xffffffffu; }\n    if (i == MISSING_LOW) { return 0u; }\n    return to_key(src[i]);\n}\n\n",
    );
    let _ = writeln!(
        e.o,
        "fn tile_q0(w: u32) -> i32 {{ return i32((w / params.groups) * {written}u) - {}; }}",
        rp.halo
    );
    let _ = writeln!(
        e.o,
        "fn tile_yb(w: u32, q0: i32, z: u32) -> i32 {{\n    return ((q0 + i32(z >> {lres}u)) << {}u) + i32(((w % params.groups) << {lres}u) + (z & {}u));\n}}\n",
        rp.lk_lo,
        res - 1
    );
    let _ = writeln!(
        e.o,
        "@compute @workgroup_size({t_count})\nfn regs(@builtin(local_invocation_index) t: u32,\n        @builtin(workgroup_id) wid: vec3<u32>,\n        @builtin(num_workgroups) nwg: vec3<u32>) {{"
    );
    let masked_groups = gs.iter().any(|g| g.threads_per_block.is_none());
    // Interior tiles of a whole array (or of power-of-two segments): network position = array
    // index, nothing missing; the uniform test spares every key its index_of.
    let tile_vars = |w: &str, ind: &str, one_block: bool| {
        let mut o = format!(
            "{ind}let q0 = tile_q0({w});\n{ind}let r0 = i32(({w} % params.groups) << {lres}u);\n{ind}let y_lo = (q0 << {lk}u) + r0;\n{ind}let y_hi = ((q0 + {}) << {lk}u) + r0 + {};\n{ind}let plain = params.shift == 0u && (params.lseg_pad == 31u || params.seg_len == (1u << params.lseg_pad))\n        && y_lo >= 0 && u32(y_hi) < params.n;\n",
            rows - 1,
            res - 1,
            lk = rp.lk_lo
        );
        if one_block && masked_groups {
            let _ = writeln!(
                o,
                "{ind}let one_block = ((u32(q0) ^ u32(q0 + {})) >> {}u) == 0u;",
                rows - 1,
                rp.lblk
            );
        }
        o
    };
    let contiguous = res == 1 << rp.lk_lo;
    let io_layout = |c: usize| io_layout(rp, c);
    // Register j of layout c is network position yb + dy(c, j) (yb: the thread's first, z = zb).
    let dy = |c: usize, j: usize| {
        if contiguous {
            c * j
        } else {
            (j * c / res) << rp.lk_lo
        }
    };
    let c_load = io_layout(gs.first().map_or(t_count, |g| g.c));
    let le = keys.trailing_zeros();
    // The loads of tile `w` into e0 … (the tile variables in scope): the first position, then the loads.
    let load_base =
        |w: &str| base_line(c_load, keys, "zl") + &format!("    let yl = tile_yb({w}, q0, zl);\n");
    let load_keys = || {
        let mut o = String::new();
        plain_or_mapped(
            &mut o,
            "yl",
            |i| {
                let at = format!("ib + {}u", dy(c_load, i));
                format!("        e{i} = to_key(src[{at}]);\n")
            },
            |i| format!("        e{i} = load_key(yl + {});\n", dy(c_load, i)),
            keys,
        );
        o
    };
    let s_tiles = rp.tiles_per_wg.max(1);
    e.o.push_str("    let wg = wid.x + wid.y * nwg.x;\n");
    if s_tiles == 1 {
        e.o.push_str("    if (wg >= params.tiles) { return; }\n");
    } else {
        // Neighbouring tiles: their rows interleave in memory (heads, strided tails), so a
        // workgroup's next tile continues where this one's reads left off (H100: faster than
        // tiles g, g + G, … at 2^28, 42.1 against 42.8 ms).
        let _ = writeln!(
            e.o,
            "    var w = wg * {s_tiles}u;\n    let w_end = min(w + {s_tiles}u, params.tiles);\n    if (w >= w_end) {{ return; }}"
        );
    }
    // The flags binding belongs to the shared layout; untraced runs never write it.
    e.o.push_str("    if (params.trace == 0xffffffffu) { flags[0] = 0u; }\n");
    if s_tiles == 1 {
        e.o.push_str("    let w = wg;\n");
        e.o.push_str(&tile_vars("w", "    ", true));
        e.o.push_str(&load_base("w"));
        for i in 0..keys {
            let _ = writeln!(e.o, "    var e{i}: u32;");
        }
        e.o.push_str(&load_keys());
    } else {
        for i in 0..keys {
            let _ = writeln!(e.o, "    var e{i}: u32;");
        }
        e.o.push_str("    {\n");
        e.o.push_str(&tile_vars("w", "    ", false));
        e.o.push_str(&load_base("w"));
        e.o.push_str(&load_keys());
        e.o.push_str("    }\n    loop {\n");
        e.o.push_str(&tile_vars("w", "    ", true));
    }
    e.c = c_load;
    for g in &gs {
        e.relayout(g.c);
        let _ = writeln!(
            e.o,
            "    // group c = {}: stages k_z = {:?}",
            g.c,
            g.stages.iter().map(|s| s.1).collect::<Vec<_>>()
        );
        if g.threads_per_block.is_none() {
            // Most halo tiles lie inside one merge block: no per-comparator test there.
            e.o.push_str("    if (one_block) {\n");
            let saved = (e.cur, e.reads);
            emit_group(&mut e, g, rp, t_count, false);
            let after = (e.cur, e.reads);
            (e.cur, e.reads) = saved;
            e.o.push_str("    } else {\n");
            emit_group(&mut e, g, rp, t_count, true);
            debug_assert_eq!((e.cur, e.reads), after);
            e.o.push_str("    }\n");
        } else {
            emit_group(&mut e, g, rp, t_count, false);
        }
    }
    // Store the rows this tile owns (halo rows are not written).
    let c_store = io_layout(e.c);
    let owned = |i: usize| {
        if rp.halo == 0 {
            "true".to_string()
        } else {
            format!(
                "((zs + {}u) >> {lres}u) - {}u < {written}u",
                c_store * i,
                rp.halo
            )
        }
    };
    let prefetch = |o: &mut String| {
        o.push_str("    let wn = w + 1u;\n    if (wn < w_end) {\n");
        o.push_str(&tile_vars("wn", "    ", false));
        o.push_str(&load_base("wn"));
        o.push_str(&load_keys());
        o.push_str("    }\n");
    };
    // Stored values: the registers, or (prefetching) workgroup memory in layout c_store.
    let mut from_smem = None;
    if s_tiles > 1 && c_store != e.c {
        // Keys to workgroup memory first: the registers are free for the next tile's loads,
        // which fly while this tile's stores are issued.
        e.spill();
        from_smem = Some(e.buf());
        prefetch(&mut e.o);
        e.c = c_store;
    } else {
        e.relayout(c_store);
    }
    e.base(c_store, "zs");
    e.o.push_str("    let ys = tile_yb(w, q0, zs);\n");
    if from_smem.is_some() {
        let _ = writeln!(e.o, "    let ps = zs + (zs >> {le}u);");
    }
    let val = |i: usize| match &from_smem {
        Some(b) => format!("{b}[ps + {}u]", off(c_store, i as i64, keys)),
        None => format!("e{i}"),
    };
    plain_or_mapped(
        &mut e.o,
        "ys",
        |i| {
            let at = format!("ib + {}u", dy(c_store, i));
            format!(
                "        if ({}) {{ dst[{at}] = from_key({}); }}\n",
                owned(i),
                val(i),
            )
        },
        |i| {
            format!(
                "        {{\n            let ix = index_of(ys + {});\n            if ({} && ix < MISSING_LOW) {{ dst[ix] = from_key({}); }}\n        }}\n",
                dy(c_store, i),
                owned(i),
                val(i),
            )
        },
        keys,
    );
    if s_tiles > 1 {
        if from_smem.is_none() {
            prefetch(&mut e.o);
        }
        // The next tile's first write to workgroup memory follows this one's reads.
        e.o.push_str(
            "    w = wn;\n    if (w >= w_end) { break; }\n    workgroupBarrier();\n    }\n",
        );
    }
    e.o.push_str("}\n");
    e.o
}

/// `if (plain) { plain(0..keys) } else { mapped(0..keys) }`: interior tiles address the array
/// directly (`ib`), the others map every position through `index_of`.
fn plain_or_mapped(
    o: &mut String,
    yb: &str,
    plain: impl Fn(usize) -> String,
    mapped: impl Fn(usize) -> String,
    keys: usize,
) {
    let _ = writeln!(o, "    if (plain) {{\n        let ib = u32({yb});");
    (0..keys).for_each(|i| o.push_str(&plain(i)));
    o.push_str("    } else {\n");
    (0..keys).for_each(|i| o.push_str(&mapped(i)));
    o.push_str("    }\n");
}
