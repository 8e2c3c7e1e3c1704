//! The register kernel's building blocks (see regs.rs): the hand-overs of the registers through
//! workgroup memory (`Emit`: barriers, one or two buffers, layout changes) and one group's
//! compare-exchange stages, in registers, by subgroup shuffle or through workgroup memory.

use super::model;
use super::regs::{Block, Group, RegsPass, off};
use std::fmt::Write;

pub(super) struct Emit {
    pub(super) o: String,
    pub(super) double: bool,
    /// The buffer the next hand-over writes.
    pub(super) cur: usize,
    /// Reads since the last barrier (one buffer: a barrier before the next write).
    pub(super) reads: bool,
    /// The layout (c) the registers are in.
    pub(super) c: usize,
    /// Keys per invocation E.
    pub(super) keys: usize,
}

impl Emit {
    fn barrier(&mut self) {
        self.o.push_str("    workgroupBarrier();\n");
        self.reads = false;
    }

    pub(super) fn buf(&self) -> String {
        format!("s{}", if self.double { self.cur } else { 0 })
    }

    fn before_write(&mut self) {
        if !self.double && self.reads {
            self.barrier();
        }
    }

    fn after_read(&mut self) {
        if self.double {
            self.cur ^= 1;
        } else {
            self.reads = true;
        }
    }

    pub(super) fn base(&mut self, c: usize, name: &str) {
        self.o.push_str(&base_line(c, self.keys, name));
    }

    /// Write the registers (layout self.c) to workgroup memory, then a barrier.
    pub(super) fn spill(&mut self) {
        self.before_write();
        let b = self.buf();
        self.o.push_str("    {\n");
        self.base(self.c, "zw");
        let le = self.keys.trailing_zeros();
        let _ = writeln!(self.o, "        let pw = zw + (zw >> {le}u);");
        for j in 0..self.keys {
            let at = format!("pw + {}u", off(self.c, j as i64, self.keys));
            let _ = writeln!(self.o, "        {b}[{at}] = e{j};");
        }
        self.o.push_str("    }\n");
        self.barrier();
    }

    /// Hand the registers over from layout self.c to layout c through workgroup memory.
    pub(super) fn relayout(&mut self, c: usize) {
        if c == self.c {
            return;
        }
        // before_write first: the comment stays after a barrier it may emit (spill's own call is
        // then a no-op).
        self.before_write();
        let b = self.buf();
        let le = self.keys.trailing_zeros();
        let _ = writeln!(self.o, "    // layout c = {} -> c = {c}", self.c);
        self.spill();
        self.o.push_str("    {\n");
        self.base(c, "zr");
        let _ = writeln!(self.o, "        let pr = zr + (zr >> {le}u);");
        for j in 0..self.keys {
            let at = format!("pr + {}u", off(c, j as i64, self.keys));
            let _ = writeln!(self.o, "        e{j} = {b}[{at}];");
        }
        self.o.push_str("    }\n");
        self.after_read();
        self.c = c;
    }
}

fn cx(o: &mut String, i: usize, j: usize, keep: Option<&str>) {
    match keep {
        None => {
            let _ = writeln!(
                o,
                "        {{ let a = e{i}; e{i} = min(a, e{j}); e{j} = max(a, e{j}); }}"
            );
        }
        Some(k) => {
            let _ = writeln!(
                o,
                "        {{ let a = e{i}; let b = e{j}; e{i} = select(a, min(a, b), {k}); e{j} = select(b, max(a, b), {k}); }}"
            );
        }
    }
}

/// `let name = …;`: thread t's first tile position z in layout c (E = keys per thread).
pub(super) fn base_line(c: usize, keys: usize, name: &str) -> String {
    let lc = c.trailing_zeros();
    format!(
        "    let {name} = (t & {}u) + ((t >> {lc}u) << {}u);\n",
        c - 1,
        lc + keys.trailing_zeros()
    )
}

/// One group's stages (see the module doc). `use_mask`: test the merge block per comparator
/// (Masked groups on a tile that a block boundary crosses).
pub(super) fn emit_group(e: &mut Emit, g: &Group, rp: &RegsPass, t_count: usize, use_mask: bool) {
    let c = g.c;
    let lc = c.trailing_zeros();
    let lres = rp.lres;
    let keys = rp.keys;
    let le = keys.trailing_zeros();
    let masked = g.threads_per_block.is_none();
    let tpb = g.threads_per_block.unwrap_or(t_count / c);
    // Does this group need the neighbours? (A stage with k < p and more than one thread per block.)
    let inside = |b: Block, k: usize| match b {
        Block::Local(p) => p == k,
        Block::Masked => rp.aligned_first == Some(k),
    };
    let crosses = tpb > 1 && g.stages.iter().any(|&(b, k)| !inside(b, k));
    e.o.push_str("    {\n");
    if crosses || masked {
        e.base(c, "zg");
        let _ = writeln!(e.o, "        let u = t >> {lc}u;");
    }
    if masked {
        // Network row of register j: qg + (c / R)·j.
        let _ = writeln!(e.o, "        let qg = q0 + i32(zg >> {lres}u);");
    }
    if crosses {
        let _ = writeln!(e.o, "        let pg = zg + (zg >> {le}u);");
        if masked {
            let _ = writeln!(
                e.o,
                "        let has_next = u + 1u < {}u;\n        let has_prev = u > 0u;",
                t_count / c
            );
        } else {
            let _ = writeln!(
                e.o,
                "        let has_next = (u & {}u) != {}u;\n        let has_prev = (u & {}u) != 0u;",
                tpb - 1,
                tpb - 1,
                tpb - 1
            );
        }
    }
    let shuffle = crosses && !masked && rp.shuffle_within > 0 && c * tpb <= rp.shuffle_within;
    for &(b, k) in &g.stages {
        let d = k / c;
        debug_assert!((1..=keys / 2).contains(&d) && k % c == 0);
        let rowd = (k >> lres) as i64; // network rows between the pair (Masked)
        let rows_per_reg = (c >> lres) as i64;
        let first = inside(b, k);
        let _ = writeln!(e.o, "        // stage k_z = {k} (d = {d})\n        {{");
        // `name` = the pair whose lower end is network row qg + lo stays in one merge block.
        let keep = |o: &mut String, lo: i64, name: &str| {
            let _ = writeln!(
                o,
                "        let {name} = ((u32(qg + {lo}) ^ u32(qg + {})) >> {}u) == 0u;",
                lo + rowd,
                rp.lblk
            );
        };
        let cross_here = crosses && !first;
        // Cross rows ([0, d) and [E - d, E)) and in-thread pairs are disjoint within a stage: each
        // neighbour value is fetched where it is used (2 live temporaries, not 2d).
        let bname = e.buf();
        let top_cond = |o: &mut String, j: usize| {
            if masked && use_mask {
                keep(o, rows_per_reg * j as i64, &format!("kt{j}"));
                format!("has_next && kt{j}")
            } else {
                "has_next".into()
            }
        };
        let bottom_cond = |o: &mut String, j: usize| {
            if masked && use_mask {
                keep(o, rows_per_reg * j as i64 - rowd, &format!("kb{j}"));
                format!("has_prev && kb{j}")
            } else {
                "has_prev".into()
            }
        };
        // Where neighbour value j (next thread's row j) / (previous thread's row E - d + j) lies
        // in workgroup memory.
        let next_at = |j: usize| format!("pg + {}u", off(c, (keys + j) as i64, keys));
        let prev_at = |j: usize| format!("pg - {}u", -off(c, j as i64 - keys as i64, keys));
        if cross_here && !shuffle {
            // Through workgroup memory: bottom and top d rows out, the neighbours' in after the
            // barrier (guarded: the first and last threads of a block have no neighbour).
            e.before_write();
            for j in (0..d).chain(keys - d..keys) {
                let at = format!("pg + {}u", off(c, j as i64, keys));
                let _ = writeln!(e.o, "        {bname}[{at}] = e{j};");
            }
            e.barrier();
        }
        // Pairs inside the thread.
        for j in 0..keys - d {
            let own = match b {
                Block::Local(p) => model::is_comparator(p / c, d, j),
                Block::Masked => (j & d != 0) != first,
            };
            if !own {
                continue;
            }
            if masked && use_mask {
                keep(&mut e.o, rows_per_reg * j as i64, &format!("k{j}"));
                cx(&mut e.o, j, j + d, Some(&format!("k{j}")));
            } else {
                cx(&mut e.o, j, j + d, None);
            }
        }
        if cross_here {
            // Top row t = E - d + j: the lower end of a pair with the next thread's row j; bottom
            // row j: the upper end of a pair with the previous thread's row E - d + j.
            for j in 0..d {
                let t = keys - d + j;
                let _ = writeln!(e.o, "        {{");
                if shuffle {
                    let _ = writeln!(e.o, "        let nb = subgroupShuffleDown(e{j}, {c}u);");
                    let _ = writeln!(e.o, "        let pv = subgroupShuffleUp(e{t}, {c}u);");
                } else {
                    let (n, p) = (next_at(j), prev_at(t));
                    let _ = writeln!(
                        e.o,
                        "        var nb = 0u;\n        if (has_next) {{ nb = {bname}[{n}]; }}"
                    );
                    let _ = writeln!(
                        e.o,
                        "        var pv = 0u;\n        if (has_prev) {{ pv = {bname}[{p}]; }}"
                    );
                }
                let cond = top_cond(&mut e.o, t);
                let _ = writeln!(e.o, "        e{t} = select(e{t}, min(e{t}, nb), {cond});");
                let cond = bottom_cond(&mut e.o, j);
                let _ = writeln!(e.o, "        e{j} = select(e{j}, max(e{j}, pv), {cond});");
                let _ = writeln!(e.o, "        }}");
            }
            if !shuffle {
                e.after_read();
            }
        }
        e.o.push_str("        }\n");
    }
    e.o.push_str("    }\n");
}
