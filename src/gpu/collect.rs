//! Collecting the kernels Stagewise compiles, on this device or shaped for another adapter's
//! limits: the seam of the portability test (tests/translate.rs), which translates each to every
//! backend's shading language; and compiling a list of kernels ahead of a plan, several at once.

use super::Gpu;
use crate::error::Result;
use std::sync::{Arc, Mutex};

/// A kernel handed to [`Gpu::pipeline`]: the exact WGSL and its entry point.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompiledKernel {
    pub label: String,
    pub entry: String,
    pub source: String,
}

/// The kernels a collecting [`Gpu`] was handed, in order (repeats included).
pub type KernelLog = Arc<Mutex<Vec<CompiledKernel>>>;

/// What another adapter reports that Stagewise's plans read: its limits and subgroup sizes.
#[derive(Clone, Debug)]
pub struct Shape {
    pub name: String,
    pub limits: wgpu::Limits,
    /// `(min, max)` subgroup sizes; `None`: no subgroup operations.
    pub subgroups: Option<(u32, u32)>,
    pub device_type: wgpu::DeviceType,
}

impl Shape {
    /// An NVIDIA H100 on Vulkan as wgpu reports it: 48 KiB of workgroup memory, 32-lane subgroups,
    /// 1024 invocations per workgroup, a 2 GiB storage binding.
    pub fn h100() -> Shape {
        Shape {
            name: "NVIDIA H100 (limits only)".into(),
            limits: wgpu::Limits {
                max_compute_workgroup_storage_size: 48 << 10,
                max_compute_invocations_per_workgroup: 1024,
                max_compute_workgroup_size_x: 1024,
                max_compute_workgroup_size_y: 1024,
                max_storage_buffer_binding_size: (2u64 << 30) - 4,
                max_buffer_size: 1 << 40,
                max_storage_buffers_per_shader_stage: 1 << 20,
                ..wgpu::Limits::default()
            },
            subgroups: Some((32, 32)),
            device_type: wgpu::DeviceType::DiscreteGpu,
        }
    }

    /// WebGPU's default limits without subgroups (what `STAGEWISE_LIMITS=webgpu` opens).
    pub fn webgpu() -> Shape {
        Shape {
            name: "WebGPU defaults (limits only)".into(),
            limits: wgpu::Limits::default(),
            subgroups: None,
            device_type: wgpu::DeviceType::DiscreteGpu,
        }
    }
}

/// A stub buffer's size: plans only record their passes, so a few words stand for any buffer.
const STUB_BYTES: u64 = 256;

impl Gpu {
    /// This device, logging every kernel compiled through it into the returned log.
    pub fn collecting(&self) -> (Gpu, KernelLog) {
        let log = KernelLog::default();
        let mut g = self.clone();
        g.collect = Some(log.clone());
        (g, log)
    }

    /// A device that answers like an adapter of `shape` for building plans (its limits, subgroup
    /// sizes, device type): every kernel is logged into the returned log instead of compiled,
    /// buffers and bind groups are tokens, so its plans must never run. Built on this device only
    /// for the tokens; the kernels come out as the plans would compile them on that adapter.
    pub fn shaped_like(&self, shape: &Shape) -> (Gpu, KernelLog) {
        let (mut g, log) = self.collecting();
        g.stub = true;
        g.limits = shape.limits.clone();
        g.features.set(
            wgpu::Features::SUBGROUP | wgpu::Features::SUBGROUP_BARRIER,
            shape.subgroups.is_some(),
        );
        let (lo, hi) = shape.subgroups.unwrap_or((0, 0));
        g.info.subgroup_min_size = lo;
        g.info.subgroup_max_size = hi;
        g.info.device_type = shape.device_type;
        g.info.name = shape.name.clone();
        g.budget = None;
        g.pipelines = Arc::default();
        (g, log)
    }

    /// [`Gpu::pipeline`]'s hook: log the kernel; on a stub device return a placeholder pipeline.
    pub(super) fn collected(
        &self,
        label: &str,
        source: &str,
        entry: &str,
    ) -> Result<Option<wgpu::ComputePipeline>> {
        if let Some(log) = &self.collect
            && let Ok(mut v) = log.lock()
        {
            v.push(CompiledKernel {
                label: label.into(),
                entry: entry.into(),
                source: source.into(),
            });
        }
        if !self.stub {
            return Ok(None);
        }
        let key = u64::MAX;
        if let Some(p) = self
            .pipelines
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(Some(p));
        }
        let p = self.scoped(|| {
            let module = self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some("stub"),
                    source: wgpu::ShaderSource::Wgsl(
                        "@compute @workgroup_size(1) fn main() {}".into(),
                    ),
                });
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("stub"),
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
        })?;
        if let Ok(mut m) = self.pipelines.lock() {
            m.insert(key, p.clone());
        }
        Ok(Some(p))
    }

    /// The bind group of a stub device: empty (its pipelines are placeholders).
    pub(super) fn stub_bind_group(&self) -> Result<wgpu::BindGroup> {
        self.scoped(|| {
            let layout = self
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("stub"),
                    entries: &[],
                });
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("stub"),
                layout: &layout,
                entries: &[],
            })
        })
    }

    /// The bytes a buffer of `bytes` really takes: all of them, a token on a stub device.
    pub(super) fn stub_bytes(&self, bytes: u64) -> u64 {
        if self.stub {
            bytes.min(STUB_BYTES)
        } else {
            bytes
        }
    }
}

impl Gpu {
    /// Compile `kernels` (label, WGSL, entry point) into the cache, on several threads where the
    /// platform has them: a plan of many generated kernels then compiles in about the time of
    /// its slowest (wgpu's error scopes are per thread).
    pub fn prepare_pipelines(&self, kernels: &[(&str, String, &str)]) -> Result<()> {
        // A collecting device logs each kernel where the plan compiles it, in the plan's order.
        if self.collect.is_some() {
            return Ok(());
        }
        // In the browser the device is not shared between threads: one after another.
        #[cfg(target_arch = "wasm32")]
        for (label, source, entry) in kernels {
            self.pipeline(label, source, entry)?;
        }
        #[cfg(not(target_arch = "wasm32"))]
        crate::par::map(kernels.len(), |i| {
            let (label, source, entry) = &kernels[i];
            self.pipeline(label, source, entry).map(|_| ())
        })
        .into_iter()
        .collect::<Result<()>>()?;
        Ok(())
    }
}
