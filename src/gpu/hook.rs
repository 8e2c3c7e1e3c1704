//! The engine's instrumentation hook. The engine knows no instrument: one (the memory lens,
//! `src/lens/`) plugs in through [`Gpu::with_instrument`] by rebuilding every kernel before it is
//! compiled and by binding its own resources around every pass of a run.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::context::Gpu;
use super::runner::Plan;
use crate::error::Result;

/// A kernel as an [`Instrument`] rebuilt it.
pub struct Built {
    /// The WGSL compiled in place of the kernel's.
    pub source: String,
    /// The entry point's name in `source` (a rewriter may rename it).
    pub entry: String,
    /// What the instrument needs of this kernel at run time; the pipeline carries it
    /// ([`Gpu::kernel_info`]'s `built`).
    pub data: Arc<dyn Any + Send + Sync>,
}

/// An instrument: a build of every kernel and a hook around every run.
pub trait Instrument: Send + Sync {
    /// Names the build in the pipeline cache: a kernel is rebuilt and compiled once per mode.
    fn mode(&self) -> &'static str;
    /// The kernel `source`'s instrumented build.
    fn build(&self, label: &str, source: &str, entry: &str) -> Result<Built>;
    /// A run of `plan` is about to be recorded: the state that run binds and reads back.
    fn begin(self: Arc<Self>, gpu: &Gpu, plan: &Plan) -> Result<Box<dyn RunHook>>;
}

/// The future of [`RunHook::finish`] (not `Send`: the browser's futures are not).
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

/// One run's side of an [`Instrument`].
pub trait RunHook {
    /// Inside pass `pass`, after its own bind group: bind the instrument's.
    fn bind(&self, cp: &mut wgpu::ComputePass<'_>, pass: usize);
    /// After pass `pass`, in the same encoder.
    fn after(&self, enc: &mut wgpu::CommandEncoder, pass: usize);
    /// After the run's last pass is done: read back what the run left.
    fn finish<'a>(&'a self, gpu: &'a Gpu, plan: &'a Plan) -> HookFuture<'a>;
}
