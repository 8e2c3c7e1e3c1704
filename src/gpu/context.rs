//! The one GPU context: created headless (CLI, tests) or taken from eframe's render state, so the app
//! and its compute pipelines share one device. Both paths request the same features and limits
//! through [`device_descriptor`].

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use super::adapter::*;
pub use super::pipeline::KernelInfo;

/// The shared GPU: device, queue, what the device was granted, and a pipeline cache.
#[derive(Clone)]
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    pub(crate) pipelines: Arc<Mutex<HashMap<u64, wgpu::ComputePipeline>>>,
    /// Every pipeline made through [`Gpu::pipeline`] → its kernel. Shared by every clone.
    pub(super) kernels: Arc<Mutex<HashMap<wgpu::ComputePipeline, KernelInfo>>>,
    /// How kernels compile, from the environment when the device was made.
    pub(super) kernel_env: Arc<KernelEnv>,
    lost: Arc<Mutex<Option<String>>>,
    /// A test hook: the next buffer allocation fails as out of memory ([`Gpu::inject_out_of_memory`],
    /// `STAGEWISE_FAULT=oom`). Shared by every clone of this `Gpu`.
    fault_oom: Arc<std::sync::atomic::AtomicBool>,
    /// A test hook: the next run's output read back gets one element changed
    /// (`STAGEWISE_FAULT=wrong-output`), so the check against the CPU model must catch it.
    fault_output: Arc<std::sync::atomic::AtomicBool>,
    /// Whether this device's timestamps measure the work ([`super::timed::Clock`]). Shared.
    clock: Arc<Mutex<super::timed::Clock>>,
    /// The largest buffer one allocation may take (`STAGEWISE_MEMORY_BUDGET`), if limited.
    pub(crate) budget: Option<u64>,
    /// Set on an instrumented device ([`Gpu::with_instrument`]): kernels compile in its build
    /// and the runner runs its hook around every pass.
    pub(crate) instrument: Option<Arc<dyn super::hook::Instrument>>,
    /// Every kernel handed to [`Gpu::pipeline`] is logged here ([`Gpu::collecting`]).
    pub(crate) collect: Option<super::collect::KernelLog>,
    /// Kernels are logged, not compiled, and buffers are tokens ([`Gpu::shaped_like`]).
    pub(crate) stub: bool,
    /// In the browser: error scopes popped and not awaited yet ([`Gpu::settle`]).
    #[cfg(target_arch = "wasm32")]
    unsettled: Arc<Mutex<Vec<UnsettledScope>>>,
}

/// A validation and an out-of-memory scope, popped, to be awaited.
#[cfg(target_arch = "wasm32")]
type UnsettledScope = std::pin::Pin<
    Box<dyn std::future::Future<Output = (Option<wgpu::Error>, Option<wgpu::Error>)>>,
>;

fn mib(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

impl Gpu {
    /// A headless device on the selected adapter (`--adapter`, then `STAGEWISE_ADAPTER`).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn headless(selector: Option<&str>) -> Result<Gpu> {
        Gpu::headless_capped(selector, u64::MAX)
    }

    /// [`Gpu::headless`] with storage bindings capped at `max_binding` bytes: a smaller adapter's
    /// limit on this one (tests of what such an adapter refuses, e.g. the lens's record log).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn headless_capped(selector: Option<&str>, max_binding: u64) -> Result<Gpu> {
        let instance = instance();
        let adapters = enumerate(&instance);
        let sel = selector_from_env(selector);
        let adapter = select_adapter(&adapters, sel.as_deref())?;
        let mut desc = device_descriptor(&adapter);
        let l = &mut desc.required_limits;
        l.max_storage_buffer_binding_size = l.max_storage_buffer_binding_size.min(max_binding);
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| Error::Gpu(format!("cannot open {}: {e}", adapter.get_info().name)))?;
        Ok(Gpu::wrap(device, queue, adapter.get_info()))
    }

    /// In the browser the page's device is eframe's; another one cannot be opened here (the
    /// browser opens devices only asynchronously): reloading the page makes a new one.
    #[cfg(target_arch = "wasm32")]
    pub fn headless(_selector: Option<&str>) -> Result<Gpu> {
        Err(Error::NoAdapter(
            "no second GPU device in the browser: reload the page".into(),
        ))
    }

    /// Share eframe's device (configured through [`device_descriptor`] by the app's setup).
    pub fn from_render_state(rs: &eframe::egui_wgpu::RenderState) -> Gpu {
        Gpu::wrap(rs.device.clone(), rs.queue.clone(), rs.adapter.get_info())
    }

    fn wrap(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Gpu {
        // Errors outside our error scopes must not panic the process (wgpu's default handler
        // does): they are logged, on the CLI's device and on the app's.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            let text = e.to_string();
            eprintln!(
                "stagewise: uncaptured GPU error: {}",
                text.lines().next().unwrap_or("")
            );
        }));
        let lost = Arc::new(Mutex::new(None));
        let l = lost.clone();
        device.set_device_lost_callback(move |reason, msg| {
            if let Ok(mut slot) = l.lock() {
                *slot = Some(format!("{reason:?}: {msg}"));
            }
        });
        let limits = device.limits();
        let budget =
            memory_budget_pct().map(|p| (limits.max_buffer_size as f64 * p / 100.0) as u64);
        let fault = std::env::var("STAGEWISE_FAULT").unwrap_or_default();
        Gpu {
            features: device.features(),
            limits,
            device,
            queue,
            info,
            pipelines: Arc::default(),
            kernels: Arc::default(),
            kernel_env: Arc::new(kernel_env()),
            lost,
            fault_oom: Arc::new(std::sync::atomic::AtomicBool::new(
                fault.split(',').any(|f| f.trim() == "oom"),
            )),
            fault_output: Arc::new(std::sync::atomic::AtomicBool::new(
                fault.split(',').any(|f| f.trim() == "wrong-output"),
            )),
            clock: Arc::new(Mutex::new(super::timed::Clock::from_fault(&fault))),
            budget,
            instrument: None,
            collect: None,
            stub: false,
            #[cfg(target_arch = "wasm32")]
            unsettled: Arc::default(),
        }
    }

    /// This device with an instrument: the same device, queue and caches, every kernel compiled
    /// in the instrument's build and every run recorded with its hook ([`super::hook`]).
    pub fn with_instrument(&self, instrument: Arc<dyn super::hook::Instrument>) -> Gpu {
        let mut g = self.clone();
        g.instrument = Some(instrument);
        g
    }

    /// Whether kernels run in an instrument's build here (their results are not the normal
    /// kernels' to check, nor their times to report).
    pub fn is_instrumented(&self) -> bool {
        self.instrument.is_some()
    }

    /// The kernel a pipeline of this device was built from.
    pub fn kernel_info(&self, p: &wgpu::ComputePipeline) -> Option<KernelInfo> {
        self.kernels.lock().ok().and_then(|m| m.get(p).cloned())
    }

    /// Test hook: the next buffer allocation on this device fails the way wgpu reports running out
    /// of memory (an `OutOfMemory` error popped from the allocation's error scope). One shot.
    pub fn inject_out_of_memory(&self) {
        self.fault_oom
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Test hook: the next run's output read back gets one element changed, as a kernel that
    /// writes one wrong value would (`STAGEWISE_FAULT=wrong-output`). One shot.
    pub fn inject_wrong_output(&self) {
        self.fault_output
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Apply an injected wrong-output fault to `output` (consumed only by a non-empty output):
    /// its middle element becomes a large finite value (different in every dtype's check).
    pub(crate) fn corrupt_output(&self, output: &mut [u32]) {
        const BAD: u32 = 0x7eff_ffff; // about 1.7e38 as f32
        if output.is_empty()
            || !self
                .fault_output
                .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let i = output.len() / 2;
        output[i] = if output[i] == BAD { BAD ^ 1 } else { BAD };
    }

    /// The per-allocation limit set by `STAGEWISE_MEMORY_BUDGET`, in bytes.
    pub fn memory_budget(&self) -> Option<u64> {
        self.budget
    }

    pub fn adapter_name(&self) -> String {
        format!("{} ({:?})", self.info.name, self.info.backend)
    }

    /// Whether pass times come from timestamps that measure the work: the adapter has them and
    /// no timed run found them short of the wall clock ([`Gpu::clock_distrusted`]).
    pub fn trusts_timestamps(&self) -> bool {
        self.has_timestamps() && self.clock_distrusted().is_none()
    }

    /// Why timed mode times this device by the wall clock, if it does.
    pub fn clock_distrusted(&self) -> Option<String> {
        self.clock.lock().ok().and_then(|c| c.distrusted.clone())
    }

    /// Stop trusting this device's timestamps (`Some(why)`), or trust them again (`None`).
    pub(crate) fn set_distrust(&self, why: Option<String>) {
        if let Ok(mut c) = self.clock.lock() {
            c.distrusted = why;
        }
    }

    /// A test hook: this device's timestamps read `scale` times the work's time from now on, as
    /// lavapipe's did in the app (`STAGEWISE_FAULT=clock:F`).
    pub fn inject_clock_scale(&self, scale: f64) {
        if let Ok(mut c) = self.clock.lock() {
            c.scale = scale;
        }
    }

    /// The repetitions' factor from `STAGEWISE_FAULT=clock-reps:F` (1 when none).
    pub(crate) fn rep_clock_scale(&self) -> f64 {
        self.clock.lock().map_or(1.0, |c| c.rep_scale)
    }

    /// The factor injected by [`Gpu::inject_clock_scale`] (1 when none).
    pub(crate) fn clock_scale(&self) -> f64 {
        self.clock.lock().map_or(1.0, |c| c.scale)
    }

    /// Loop iterations an invocation may run in all before the driver ends its loops, where a
    /// driver is known to do that: lavapipe (llvmpipe) stops every loop of an invocation once it
    /// has run 65535 iterations, counted across all its loops, and says nothing (Mesa's loop
    /// limiter; a kernel with a 65536-iteration loop comes out wrong there). Kernels that wait on
    /// other workgroups bound their waiting by it.
    pub fn loop_limit(&self) -> Option<u32> {
        let llvmpipe = |s: &str| s.to_ascii_lowercase().contains("llvmpipe");
        (llvmpipe(&self.info.name) || llvmpipe(&self.info.driver)).then_some(65_535)
    }

    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    pub fn has_subgroups(&self) -> bool {
        self.features.contains(wgpu::Features::SUBGROUP)
    }

    /// Why the device was lost, if it was.
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|s| s.clone())
    }

    /// [`Gpu::lost`] after letting wgpu run its device-lost callback (a destroyed device is
    /// reported as lost at the next poll): for the moment a GPU call has failed.
    pub fn check_lost(&self) -> Option<String> {
        if self.lost().is_none() {
            let _ = self.device.poll(wgpu::PollType::Poll);
        }
        self.lost()
    }

    /// The largest buffer one storage binding may hold, in bytes.
    pub fn max_binding_bytes(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    /// Check that `n` 32-bit elements fit one storage binding; the error names the limit.
    pub fn check_elements(&self, n: usize, what: &str) -> Result<()> {
        let bytes = n as u64 * 4;
        let max = self.max_binding_bytes();
        if bytes > max {
            return Err(Error::Limit(format!(
                "{what}: N = {n} needs a {} MiB storage buffer, above this adapter's binding limit of {} MiB \
                 (max_storage_buffer_binding_size), i.e. at most {} 32-bit elements",
                bytes >> 20,
                max >> 20,
                max / 4
            )));
        }
        Ok(())
    }

    /// Run `f` inside validation and out-of-memory error scopes and turn captured errors into
    /// `Err`. Scopes are thread-local, so this never catches egui's own rendering errors.
    /// Natively the popped scopes resolve at once; in the browser they resolve only once the
    /// page's task yields, so there they are awaited at the next read-back ([`Gpu::settle`]),
    /// which fails with the first captured error.
    pub fn scoped<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        self.scoped_with(false, f)
    }

    /// [`Gpu::scoped`]; with `alloc`, an injected out-of-memory fault is consumed here and reported
    /// through the same path as an `OutOfMemory` error that wgpu's scope captured.
    fn scoped_with<T>(&self, alloc: bool, f: impl FnOnce() -> T) -> Result<T> {
        if let Some(why) = self.lost() {
            return Err(Error::DeviceLost(why));
        }
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        // Popped in order now (the browser's scope stack is the device's); awaited below.
        let (v, o) = (val.pop(), oom.pop());
        #[cfg(not(target_arch = "wasm32"))]
        let (v, o) = (pollster::block_on(v), pollster::block_on(o));
        #[cfg(target_arch = "wasm32")]
        let (v, o) = {
            if let Ok(mut q) = self.unsettled.lock() {
                q.push(Box::pin(async move { (v.await, o.await) }));
            }
            (None, None)
        };
        self.scope_errors(alloc, v, o)?;
        Ok(out)
    }

    /// Await the error scopes still open in the browser ([`Gpu::scoped`]); the first error
    /// captured is returned as [`Gpu::scoped`] would have. Natively there are none.
    pub async fn settle(&self) -> Result<()> {
        #[cfg(target_arch = "wasm32")]
        {
            let pending = self
                .unsettled
                .lock()
                .map(|mut q| std::mem::take(&mut *q))
                .unwrap_or_default();
            let mut first = Ok(());
            for scope in pending {
                let (v, o) = scope.await;
                if first.is_ok() {
                    first = self.scope_errors(false, v, o);
                }
            }
            first?;
        }
        if let Some(why) = self.lost() {
            return Err(Error::DeviceLost(why));
        }
        Ok(())
    }

    /// What a validation (`v`) and out-of-memory (`o`) scope captured, as an error.
    fn scope_errors(
        &self,
        alloc: bool,
        v: Option<wgpu::Error>,
        mut o: Option<wgpu::Error>,
    ) -> Result<()> {
        if alloc
            && o.is_none()
            && self
                .fault_oom
                .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            o = Some(wgpu::Error::OutOfMemory {
                source: "injected fault (Gpu::inject_out_of_memory / STAGEWISE_FAULT=oom)".into(),
            });
        }
        if (o.is_some() || v.is_some())
            && let Some(why) = self.check_lost()
        {
            // Errors from a device that is gone: the loss is the message.
            return Err(Error::DeviceLost(why));
        }
        if let Some(e) = o {
            return Err(Error::OutOfMemory(format!(
                "{}; use a smaller N",
                first_lines(&e.to_string(), 1)
            )));
        }
        if let Some(e) = v {
            return Err(Error::Validation(first_lines(&e.to_string(), 12)));
        }
        if let Some(why) = self.lost() {
            return Err(Error::DeviceLost(why));
        }
        Ok(())
    }

    /// Allocate a buffer of `bytes` named `label` with `f`: checked against the memory budget, and
    /// out of memory reported in one line that names the buffer and its size.
    fn alloc<T>(&self, label: &str, bytes: u64, f: impl FnOnce() -> T) -> Result<T> {
        if let Some(why) = self.check_lost() {
            return Err(Error::DeviceLost(why));
        }
        if let Some(b) = self.budget
            && bytes > b
        {
            return Err(Error::OutOfMemory(format!(
                "{label}: {} is above the memory budget of {} (STAGEWISE_MEMORY_BUDGET = {}% of \
                 max_buffer_size {}); use a smaller N",
                mib(bytes),
                mib(b),
                memory_budget_pct().unwrap_or(100.0),
                mib(self.limits.max_buffer_size)
            )));
        }
        self.scoped_with(true, f).map_err(|e| match e {
            Error::OutOfMemory(m) => {
                Error::OutOfMemory(format!("allocating {label} ({}) failed: {m}", mib(bytes)))
            }
            e => e,
        })
    }

    /// A storage buffer of `n` u32 words initialised from `data`.
    pub fn storage_init(&self, label: &str, data: &[u32]) -> Result<wgpu::Buffer> {
        self.check_elements(data.len(), label)?;
        self.alloc(label, data.len() as u64 * 4, || {
            self.buffer_init(
                label,
                bytemuck::cast_slice(data),
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            )
        })?
    }

    /// `create_buffer_init` without its panic: wgpu's helper `expect`s the mapping, which fails
    /// when the allocation did (out of memory, a lost device). Call inside an error scope.
    fn buffer_init(
        &self,
        label: &str,
        contents: &[u8],
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
        let contents = &contents[..self.stub_bytes(contents.len() as u64) as usize];
        let size = (contents.len() as u64).div_ceil(4).max(1) * 4;
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: true,
        });
        match buffer.get_mapped_range_mut(..) {
            Ok(mut view) => {
                view.slice(..contents.len()).copy_from_slice(contents);
                drop(view);
                buffer.unmap();
                Ok(buffer)
            }
            Err(e) => Err(match self.check_lost() {
                Some(why) => Error::DeviceLost(why),
                None => Error::OutOfMemory(format!(
                    "allocating {label} ({}) failed: {e}; use a smaller N",
                    mib(size)
                )),
            }),
        }
    }

    /// A storage buffer of `words` u32 words filled with `poison`, so unwritten elements show.
    pub fn storage_poisoned(&self, label: &str, words: usize, poison: u32) -> Result<wgpu::Buffer> {
        self.storage_init(label, &vec![poison; words.max(1)])
    }

    /// An uninitialised (zeroed) storage buffer, for large benchmarks where filling costs time.
    pub fn storage_zeroed(&self, label: &str, words: usize) -> Result<wgpu::Buffer> {
        self.check_elements(words, label)?;
        self.alloc(label, words.max(1) as u64 * 4, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: self.stub_bytes(words.max(1) as u64 * 4),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// A small uniform buffer of u32 parameters.
    pub fn uniform(&self, label: &str, words: &[u32]) -> Result<wgpu::Buffer> {
        // Uniform buffers need 16-byte sized structs; pad to a multiple of 4 words.
        let mut padded = words.to_vec();
        padded.resize(words.len().div_ceil(4).max(1) * 4, 0);
        self.scoped(|| {
            self.buffer_init(
                label,
                bytemuck::cast_slice(&padded),
                wgpu::BufferUsages::UNIFORM,
            )
        })?
    }

    /// A bind group binding `buffers[i]` (whole) at binding i of group 0.
    pub fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[&wgpu::Buffer],
    ) -> Result<wgpu::BindGroup> {
        let entries: Vec<(u32, &wgpu::Buffer)> = (0..).zip(buffers.iter().copied()).collect();
        self.bind_entries(pipeline, &entries)
    }

    /// A bind group binding each `(binding, buffer)` (whole) of group 0.
    pub fn bind_entries(
        &self,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> Result<wgpu::BindGroup> {
        if self.stub {
            return self.stub_bind_group();
        }
        self.scoped(|| {
            let layout = pipeline.get_bind_group_layout(0);
            let entries: Vec<wgpu::BindGroupEntry> = buffers
                .iter()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: *i,
                    resource: b.as_entire_binding(),
                })
                .collect();
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &entries,
            })
        })
    }
}

fn first_lines(s: &str, n: usize) -> String {
    s.lines().take(n).collect::<Vec<_>>().join("\n")
}

/// Replace `{{NAME}}` placeholders in a WGSL template: how kernels get their workgroup size, element
/// type and tile shape at pipeline-creation time.
pub fn specialize(template: &str, params: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in params {
        s = s.replace(&format!("{{{{{k}}}}}"), v);
    }
    s
}

/// Repeat the lines between a `//#unroll` line and the next `//#end` line `count` times, `{{j}}`
/// replaced by 0, 1, …: a loop written out in the template, so that every index into a
/// function-local array is a constant. A driver may keep a loop's array in local memory instead
/// of registers (NVIDIA's does, by a heuristic that changes with the element type and the count).
pub fn unroll(template: &str, count: u32) -> String {
    let mut out = String::with_capacity(template.len());
    let mut block: Option<Vec<&str>> = None;
    for line in template.split_inclusive('\n') {
        match (line.trim(), &mut block) {
            ("//#unroll", None) => block = Some(Vec::new()),
            ("//#end", Some(b)) => {
                for j in 0..count {
                    for l in b.iter() {
                        out.push_str(&l.replace("{{j}}", &j.to_string()));
                    }
                }
                block = None;
            }
            (_, Some(b)) => b.push(line),
            (_, None) => out.push_str(line),
        }
    }
    out
}

/// Workgroup grid for `groups` workgroups: 1D while it fits the 65535 per-dimension limit, else 2D
/// with x = 32768 (kernels compute the linear id as `wid.x + wid.y * nwg.x` and skip ids past the end).
pub fn grid(groups: u32) -> [u32; 3] {
    if groups <= 65535 {
        [groups.max(1), 1, 1]
    } else {
        [32768, groups.div_ceil(32768), 1]
    }
}

#[cfg(test)]
mod unroll_tests {
    #[test]
    fn repeats_blocks_with_the_index() {
        let t = "a\n  //#unroll\n  x[{{j}}] = {{j}}u;\n  //#end\nb\n";
        assert_eq!(
            super::unroll(t, 3),
            "a\n  x[0] = 0u;\n  x[1] = 1u;\n  x[2] = 2u;\nb\n"
        );
        assert_eq!(super::unroll(t, 0), "a\nb\n");
    }
}
