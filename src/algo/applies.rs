//! Which options a run uses. An option given where the chosen variant, kernel or input ignores it
//! is refused with one line naming why, in the CLI and the app alike: an option that is parsed
//! either does what it says or is refused (tests/contract.rs walks every listed option).
//!
//! The rooms check the values of the options they use; this table holds the cross-cutting rule
//! "given, but not used by this run", which no single room sees whole.

use super::{AlgoOptions, VariantInfo, bmmc, copy, fft, oddeven, scan};
use crate::error::{Error, Result};

/// What the run is, beyond its options.
#[derive(Clone, Copy, Debug)]
pub struct RunShape<'a> {
    pub variant: &'a VariantInfo,
    /// Read back every pass (traced runs use the teaching / generic kernels).
    pub trace: bool,
    /// The input is the algorithm's own generated example (FFT: `--signal`).
    pub generated_input: bool,
}

fn only(flag: &str, given: bool, ok: bool, why: impl FnOnce() -> String) -> Result<()> {
    if given && !ok {
        Err(Error::Input(format!("{flag} {}", why())))
    } else {
        Ok(())
    }
}

/// Refuse an option the run would ignore.
pub fn check(opts: &AlgoOptions, run: RunShape) -> Result<()> {
    match opts {
        AlgoOptions::Copy(o) => {
            let d = copy::Options::default();
            let v = copy::Variant::of(run.variant);
            let why = || format!("applies to --variant vec4 only; copy {v} does not use it");
            only(
                "--workgroup-size",
                o.workgroup_size != d.workgroup_size,
                v == copy::Variant::Vec4,
                why,
            )?;
            only(
                "--per-thread",
                o.per_thread != d.per_thread,
                v == copy::Variant::Vec4,
                why,
            )
        }
        AlgoOptions::Bmmc(o) => {
            let v = bmmc::Variant::of(run.variant);
            let tiled = matches!(v, bmmc::Variant::Tiled | bmmc::Variant::Auto);
            let why =
                || format!("applies to --variant tiled or auto only; bmmc {v} does not use it");
            only("--tile-bits", o.tile_bits.is_some(), tiled, why)?;
            only("--tile-threads", o.tile_threads.is_some(), tiled, why)?;
            only(
                "--tiles-per-workgroup",
                o.tiles_per_workgroup.is_some(),
                tiled,
                why,
            )?;
            only("--tile-vector", o.tile_vector.is_some(), tiled, why)?;
            only(
                "--group-order",
                o.group_order != bmmc::GroupOrder::Auto,
                tiled,
                why,
            )
        }
        AlgoOptions::Scan(o) => {
            let d = scan::Options::default();
            let v = scan::Variant::of(run.variant);
            let why = || format!("applies to --variant decoupled only; scan {v} does not use it");
            only(
                "--spin",
                o.spin != d.spin,
                v == scan::Variant::Decoupled,
                why,
            )?;
            only(
                "--shared-scan",
                o.shared_scan,
                v == scan::Variant::Decoupled,
                why,
            )
        }
        AlgoOptions::Oddeven(o) => {
            let v = oddeven::Variant::of(run.variant);
            let tiled = matches!(v, oddeven::Variant::Batcher | oddeven::Variant::MergeSplit);
            only("--tile", o.tile.is_some(), tiled, || {
                format!(
                    "applies to --variant batcher or merge-split only; oddeven {v} has no tiles"
                )
            })?;
            if !tiled {
                return Ok(()); // the room names the variants of its other tile options
            }
            // Traced runs always use the generic kernel (it writes the trace).
            let generic = run.trace || o.kernel == oddeven::TileKernel::Generic;
            let regs = || {
                if run.trace {
                    "applies to the register kernel, which untraced runs use; traced runs use the generic kernel".to_string()
                } else {
                    "applies to the register kernel; --kernel generic does not use it".to_string()
                }
            };
            only(
                "--keys-per-invocation",
                o.keys_per_invocation.is_some(),
                !generic,
                regs,
            )?;
            only(
                "--tiles-per-workgroup",
                o.tiles_per_workgroup.is_some(),
                !generic,
                regs,
            )?;
            only(
                "--exchange-buffers",
                o.exchange_buffers.is_some(),
                !generic,
                regs,
            )?;
            only("--threads", o.threads.is_some(), generic, || {
                "applies to the generic tile kernel (--kernel generic, or traced runs); the register kernel runs tile / --keys-per-invocation invocations".to_string()
            })
        }
        AlgoOptions::Fft(o) => {
            let d = fft::Options::default();
            only(
                "--signal",
                o.signal != d.signal,
                run.generated_input,
                || {
                    "chooses the generated input; it cannot be combined with --input, --n or --fill"
                        .to_string()
                },
            )?;
            // The fast and radix kernels and the large plan run untraced FFTs; traced runs and
            // --kernel teaching run the teaching kernel, which has none of these knobs. Real
            // input that runs in one workgroup (the teaching kernel) is refused by
            // `fft::Options::config`, which knows the kernel.
            let teaching = run.trace || o.kernel == fft::Kernel::Teaching;
            let not = if run.trace {
                "traced runs use the teaching kernel"
            } else {
                "not --kernel teaching"
            };
            let lanes =
                || format!("applies to the fast and radix kernels and the large plan; {not}");
            let fast = || format!("applies to the fast kernel; {not}");
            only(
                "--ffts-per-workgroup",
                o.ffts_per_workgroup.is_some(),
                !teaching,
                lanes,
            )?;
            only(
                "--sequential-ffts",
                o.sequential_ffts.is_some(),
                !teaching,
                lanes,
            )?;
            only("--no-shuffle", o.no_shuffle, !teaching, fast)?;
            only(
                "--natural-store",
                o.natural_store != d.natural_store,
                !teaching,
                fast,
            )
        }
        // The radix room refuses its onesweep-only options itself.
        AlgoOptions::Bitrev(_) | AlgoOptions::Radix(_) | AlgoOptions::Kernel(_) => Ok(()),
    }
}
