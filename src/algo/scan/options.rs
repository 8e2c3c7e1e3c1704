//! Scan options checked against the variant and the adapter, and the tile shape they give.

use super::*;

/// vec4 a thread of the subgroup `decoupled` kernel's default tile at `n` elements (the tuner's
/// search walks outward from it).
pub(super) fn subgroup_per_thread(n: usize, exclusive: bool) -> u32 {
    if n <= 1 << 21 {
        6
    } else if n <= 1 << 25 {
        // Exclusive at 9 is never the best there (f32 4-6 % behind 8), 8 the best or within 1 %.
        if exclusive { 8 } else { 9 }
    } else {
        10
    }
}

impl Options {
    /// `--workgroup-size` and `--per-thread` shape the tiles of `decoupled` and `reduce-then-scan`
    /// only, `--tile-order` numbers the tiles of `decoupled` only; given to another variant they
    /// would be silently ignored, so they are an error.
    pub fn check_tile_options(&self, variant: Variant) -> Result<()> {
        if self.tile_order != TileOrder::Auto && variant != Variant::Decoupled {
            return Err(crate::input_err!(
                "--tile-order applies to --variant decoupled only (it picks how tiles are numbered)"
            ));
        }
        if matches!(variant, Variant::Decoupled | Variant::ReduceThenScan) {
            return Ok(());
        }
        for (flag, v) in [
            ("--workgroup-size", self.workgroup_size),
            ("--per-thread", self.per_thread),
        ] {
            if v != 0 {
                return Err(crate::input_err!(
                    "{flag} {v} applies to --variant decoupled or reduce-then-scan only; scan {variant} does not use it"
                ));
            }
        }
        Ok(())
    }

    /// The tile shape for this adapter, or a clear error naming the limit.
    /// `n`: the elements to scan (the default shape depends on it; 0 for a small array).
    pub fn tile_shape(&self, gpu: &Gpu, variant: Variant, n: usize) -> Result<TileShape> {
        let sg = variant == Variant::Decoupled && !self.shared_scan && gpu.has_subgroups();
        let l = &gpu.limits;
        let max_wg = l
            .max_compute_invocations_per_workgroup
            .min(l.max_compute_workgroup_size_x);
        let wg = match self.workgroup_size {
            // 256 threads: the fastest on the H100 and the H200 (docs/perf/scan.md).
            0 => 256.min(max_wg),
            w => w,
        };
        if wg == 0 || !wg.is_power_of_two() || wg > max_wg {
            return Err(crate::error::Error::input_or_limit(
                wg.is_power_of_two() && wg > max_wg,
                format!(
                    "--workgroup-size must be a power of two up to {max_wg} (this adapter's limit); got {wg}"
                ),
            ));
        }
        let mem = l.max_compute_workgroup_storage_size;
        let per = if self.per_thread == 0 && sg {
            // The H200 (the loops over a thread's vec4 written out, src/dst padded to whole
            // tiles; docs/perf/scan.md), 2^28: 256 x 10 u32 0.996x copy, f32 0.991x, exclusive
            // u32 0.997x, f32 0.990x (x 9: 0.990 / 0.982 / 0.990 / 0.925). At 2^26 10 ties 9
            // in u32 and is 7 % faster in exclusive f32; at 2^22 - 2^25 9 is the best or within
            // 1 % inclusive, 8 exclusive (f32 exclusive at 9: 4-6 % slower). At 2^20 (114
            // tiles of 9216 for 132 SMs) 6 is 4-6 % faster in u32. Same rule for every type.
            subgroup_per_thread(n, self.exclusive)
        } else if self.per_thread == 0 {
            [8, 4, 2, 1]
                .into_iter()
                .find(|&p| TileShape::shared_bytes(wg, p, sg) <= mem)
                .ok_or_else(|| {
                    Error::Limit(format!(
                        "a {wg}-thread workgroup does not fit this adapter's {mem} bytes of workgroup memory \
                         (max_compute_workgroup_storage_size); use a smaller --workgroup-size"
                    ))
                })?
        } else {
            self.per_thread
        };
        if !(1..=16).contains(&per) {
            return Err(crate::input_err!(
                "--per-thread must be 0 (auto) or 1..=16; got {per}"
            ));
        }
        let need = TileShape::shared_bytes(wg, per, sg);
        if need > mem {
            return Err(Error::Limit(format!(
                "--workgroup-size {wg} with --per-thread {per} needs {need} bytes of workgroup memory, above this \
                 adapter's {mem} (max_compute_workgroup_storage_size)"
            )));
        }
        let shape = TileShape {
            wg,
            per,
            subgroups: sg,
        };
        // The subgroup kernel reads and writes whole tiles (decoupled_sg.wgsl): where src and dst
        // padded so would pass the binding limit, the workgroup-memory kernel scans instead.
        if sg && shape.buffer_words(n) as u64 * 4 > gpu.max_binding_bytes() {
            let o = Options {
                shared_scan: true,
                ..self.clone()
            };
            return o.tile_shape(gpu, variant, n);
        }
        Ok(shape)
    }

    /// The decoupled look-back's bound on loop iterations spent re-reading statuses (the kernels'
    /// SPIN_BUDGET): none (0) on adapters that run loops to the end; a quarter of the limit where
    /// the driver ends an invocation's loops after one ([`Gpu::loop_limit`]: lavapipe).
    pub(super) fn spin_budget(gpu: &Gpu) -> u32 {
        gpu.loop_limit().map_or(0, |l| l / 4)
    }

    /// The decoupled look-back within the driver's loop limit
    /// ([`crate::algo::look_back_within_loop_limit`]).
    pub(super) fn check_loop_limit(&self, gpu: &Gpu, shape: TileShape, tiles: usize) -> Result<()> {
        // Loop iterations of one fallback: the look-back's rounds, the tile's reduction (its
        // vec4 and the workgroup's scan of the totals), one read of the window (subgroup
        // operations: no loop).
        let window = if shape.subgroups {
            0
        } else {
            shape.wg.min(32) as usize
        };
        crate::algo::look_back_within_loop_limit(
            gpu,
            self.dispatch_order(gpu),
            self.spin,
            tiles,
            8 + 2 * shape.per as usize + shape.wg.ilog2() as usize + window,
            &format!("{} elements", shape.elements()),
        )
    }

    /// Template parameters: element type, exclusive, look-back spins (and their budget), workgroup
    /// size, vec4 per thread.
    pub(super) fn params(
        &self,
        dtype: DType,
        wg: u32,
        per: u32,
        dispatch: bool,
        spin_budget: u32,
    ) -> Vec<(&'static str, String)> {
        vec![
            ("T", dtype.wgsl().to_string()),
            ("EXCL", self.exclusive.to_string()),
            ("SPIN", self.spin.to_string()),
            ("SPIN_BUDGET", spin_budget.to_string()),
            ("WG", wg.to_string()),
            ("PER", per.to_string()),
            ("LB", wg.min(32).to_string()),
            ("DISPATCH_ORDER", dispatch.to_string()),
        ]
    }
}
