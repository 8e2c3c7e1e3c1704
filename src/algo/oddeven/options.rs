//! Odd-even options checked against the variant and the adapter, and the problem's shape.

use super::*;

impl Options {
    /// The adapter's caps, narrowed by --tile / --threads.
    pub(super) fn caps(&self, gpu: &Gpu, variant: Variant) -> Result<Caps> {
        let adapter = caps_of(gpu);
        let mut c = adapter;
        if variant == Variant::Batcher {
            // Defaults from the H100 sweeps (docs/perf/oddeven.md). Generic kernel: 4096-key tiles
            // with 512 threads beat 8192 with 1024 in every batcher case. Register kernel, whole
            // arrays: 8192-key tiles where they fit (one workgroup buffer; full sort 2^28: 95 ms
            // against 157 with 4096: fewer global passes).
            let keys = self.keys(gpu)?;
            let fits_8192 = self.kernel != TileKernel::Generic
                && self.segment.is_none()
                && adapter.wg_max as usize >= 8192 / keys
                && regs::RegsPass::smem_bytes(8192, keys, false)
                    <= gpu.limits.max_compute_workgroup_storage_size as usize;
            c.tile = c.tile.min(if fits_8192 { 8192 } else { 4096 });
            c.wg_max = c.wg_max.min(512);
            // Segments of 1024..4096: one segment per tile and, on the generic kernel, tile/16
            // invocations at least 128 (H100, 2^24 keys: 1024 → tile 1024 × 128 threads 30.9 Gkeys/s against 28.4 at 4096 × 512;
            // 2048 → 2048 × 128 24.8 against 23.4; 4096 → 4096 × 256 19.9 against 19.7).
            if let Some(l) = self.segment
                && (1024..=4096).contains(&l)
            {
                c.tile = c.tile.min(l.next_power_of_two());
                c.wg_max = c.wg_max.min((c.tile / 16).max(128) as u32);
            }
        }
        if let Some(t) = self.tile {
            if !t.is_power_of_two() || t < 256 || t > adapter.tile {
                return Err(Error::input_or_limit(
                    t.is_power_of_two() && t > adapter.tile,
                    format!(
                        "--tile {t}: a power of two from 256 to {} (this adapter's workgroup memory holds {} keys)",
                        adapter.tile, c.words
                    ),
                ));
            }
            c.tile = t;
        }
        if let Some(w) = self.threads {
            if w == 0 || w > adapter.wg_max {
                return Err(Error::input_or_limit(
                    w > adapter.wg_max,
                    format!(
                        "--threads {w}: from 1 to {} (max_compute_invocations_per_workgroup)",
                        adapter.wg_max
                    ),
                ));
            }
            c.wg_max = w;
        }
        Ok(c)
    }

    pub(super) fn shape(&self, variant: Variant, dtype: DType, n: usize) -> Result<Shape> {
        if n == 0 {
            return Err(Error::input("input is empty"));
        }
        let seg = match self.segment {
            None => n,
            Some(l) => {
                if !matches!(variant, Variant::Transposition | Variant::Batcher) {
                    return Err(Error::Input(format!(
                        "--segment is for the transposition and batcher variants, not {variant}"
                    )));
                }
                if l == 0 || l > MAX_SEGMENT {
                    return Err(Error::Input(format!(
                        "--segment {l}: the segment length must be 1 ..= {MAX_SEGMENT}"
                    )));
                }
                if !n.is_multiple_of(l) {
                    return Err(Error::Input(format!(
                        "--segment {l}: N = {n} is not a multiple of the segment length (N mod L = {})",
                        n % l
                    )));
                }
                l
            }
        };
        if !matches!(variant, Variant::Batcher | Variant::MergeSplit) {
            let flag = if self.kernel != TileKernel::Auto {
                Some("--kernel")
            } else if self.keys_per_invocation.is_some() {
                Some("--keys-per-invocation")
            } else if self.tiles_per_workgroup.is_some() {
                Some("--tiles-per-workgroup")
            } else if self.exchange_buffers.is_some() {
                Some("--exchange-buffers")
            } else {
                None
            };
            if let Some(flag) = flag {
                return Err(Error::Input(format!(
                    "{flag} is for the batcher and merge-split variants, not {variant}"
                )));
            }
        }
        if self.block.is_some() && variant != Variant::MergeSplit {
            return Err(Error::Input(format!(
                "--block is for the merge-split variant, not {variant}"
            )));
        }
        Ok(Shape {
            dtype,
            desc: self.descending,
            n,
            seg,
            segmented: self.segment.is_some(),
        })
    }

    pub(super) fn keys(&self, gpu: &Gpu) -> Result<usize> {
        match self.keys_per_invocation {
            // 32 on GPUs: whole arrays (H100, full sort 2^28 55.2 ms against 63.6 with 16; 64 keys,
            // 64.6 ms and slowest everywhere, is not offered) and, with one workgroup buffer,
            // segments (H200, 2^24 keys: 1024 0.108 ms against 0.133 with 16, 2048 0.159 against
            // 0.162, 4096 0.182 against 0.224). CPU adapters (llvmpipe) keep 16: LLVM compiles
            // the 32-key kernels about twice as long, which a CPU run never wins back.
            None => Ok(if gpu.info.device_type == wgpu::DeviceType::Cpu {
                16
            } else {
                32
            }),
            Some(e @ (8 | 16 | 32)) => Ok(e),
            Some(e) => Err(Error::Input(format!(
                "--keys-per-invocation {e}: 8, 16 or 32"
            ))),
        }
    }

    pub(super) fn tiles_per_workgroup(&self) -> Result<Option<usize>> {
        match self.tiles_per_workgroup {
            Some(s) if !(1..=MAX_TILES_PER_WG).contains(&s) => Err(Error::Input(format!(
                "--tiles-per-workgroup {s}: 1 ..= {MAX_TILES_PER_WG}"
            ))),
            s => Ok(s),
        }
    }

    pub(super) fn exchange_buffers(&self) -> Result<Option<usize>> {
        match self.exchange_buffers {
            Some(b) if !(1..=2).contains(&b) => {
                Err(Error::Input(format!("--exchange-buffers {b}: 1 or 2")))
            }
            b => Ok(b),
        }
    }

    pub(super) fn block_size(&self, caps: &Caps, n: usize) -> Result<usize> {
        let max = caps.tile / 2;
        match self.block {
            Some(b) => {
                if b == 0 || !b.is_power_of_two() || b > max {
                    Err(Error::input_or_limit(
                        b.is_power_of_two() && b > max,
                        format!(
                            "--block {b}: the merge-split block must be a power of two from 1 to {max} (half the workgroup tile on this adapter)"
                        ),
                    ))
                } else {
                    Ok(b)
                }
            }
            None => Ok(n.div_ceil(8).next_power_of_two().clamp(1, max.max(1))),
        }
    }
}
