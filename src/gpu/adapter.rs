//! Adapters: which features and limits Stagewise asks for, the adapters' summaries, picking one
//! by name (`--adapter`, `STAGEWISE_ADAPTER`), and the environment's say in how the device
//! compiles kernels and how much memory it may take.

use crate::error::{Error, Result};

/// Features Stagewise uses when the adapter has them.
pub fn wanted_features() -> wgpu::Features {
    wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
        | wgpu::Features::SUBGROUP
        | wgpu::Features::SUBGROUP_BARRIER
}

/// Which limits and features the device is opened with (`STAGEWISE_LIMITS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitsMode {
    /// Everything the adapter offers (the default).
    Adapter,
    /// WebGPU's default limits and only the features WebGPU offers (timestamps, no subgroups), as
    /// a browser or a small GPU would give: every algorithm must still run, on its fallbacks.
    WebGpu,
}

/// `STAGEWISE_LIMITS`: `webgpu`, or unset / `adapter`; another value is ignored with a warning.
pub fn limits_mode() -> LimitsMode {
    let v = std::env::var("STAGEWISE_LIMITS").unwrap_or_default();
    match v.trim().to_lowercase().as_str() {
        "" | "adapter" => LimitsMode::Adapter,
        "webgpu" => LimitsMode::WebGpu,
        _ => {
            eprintln!("stagewise: ignoring STAGEWISE_LIMITS='{v}' (want webgpu or adapter)");
            LimitsMode::Adapter
        }
    }
}

/// The device request for an adapter: every wanted feature it has, and all of its limits (under
/// `STAGEWISE_LIMITS=webgpu`: WebGPU's defaults and timestamps only).
pub fn device_descriptor(adapter: &wgpu::Adapter) -> wgpu::DeviceDescriptor<'static> {
    let (required_features, required_limits) = match limits_mode() {
        // Everything the adapter offers: storage-binding, buffer, workgroup-memory and invocation
        // limits well above wgpu's defaults, and textures as large as eframe's window needs.
        LimitsMode::Adapter => (adapter.features() & wanted_features(), adapter.limits()),
        // WebGPU's optional `timestamp-query`; its `subgroups` extension is left out on purpose.
        LimitsMode::WebGpu => (
            adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
            wgpu::Limits::default(),
        ),
    };
    wgpu::DeviceDescriptor {
        label: Some("stagewise device"),
        required_features,
        required_limits,
        ..Default::default()
    }
}

/// A short, stable description of an adapter for lists and JSON.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterSummary {
    pub index: usize,
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub timestamps: bool,
    pub subgroups: bool,
    pub subgroup_size: [u32; 2],
    pub max_storage_binding_mib: u64,
    pub max_workgroup_storage_kib: u32,
    pub max_invocations_per_workgroup: u32,
}

impl AdapterSummary {
    pub fn of(index: usize, adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let limits = adapter.limits();
        let f = adapter.features();
        AdapterSummary {
            index,
            name: info.name.clone(),
            backend: format!("{:?}", info.backend).to_lowercase(),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
            timestamps: f.contains(wgpu::Features::TIMESTAMP_QUERY),
            subgroups: f.contains(wgpu::Features::SUBGROUP),
            subgroup_size: [info.subgroup_min_size, info.subgroup_max_size],
            max_storage_binding_mib: limits.max_storage_buffer_binding_size >> 20,
            max_workgroup_storage_kib: limits.max_compute_workgroup_storage_size / 1024,
            max_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        }
    }
}

pub fn instance() -> wgpu::Instance {
    // Respects WGPU_BACKEND, WGPU_VALIDATION, etc.
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

#[cfg(not(target_arch = "wasm32"))]
pub fn enumerate(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
}

/// The adapter selector from `--adapter` or `STAGEWISE_ADAPTER`.
pub fn selector_from_env(cli: Option<&str>) -> Option<String> {
    cli.map(str::to_string)
        .or_else(|| std::env::var("STAGEWISE_ADAPTER").ok())
        .filter(|s| !s.trim().is_empty())
}

/// Pick an adapter: the first whose name contains `selector` (case-insensitive), else the best one:
/// discrete before integrated before virtual before CPU, and a native API before GL.
pub fn select_adapter(adapters: &[wgpu::Adapter], selector: Option<&str>) -> Result<wgpu::Adapter> {
    if adapters.is_empty() {
        return Err(Error::NoAdapter(
            "no GPU adapter found (on a headless Linux machine: apt-get install mesa-vulkan-drivers)"
                .into(),
        ));
    }
    if let Some(sel) = selector {
        let want = sel.to_lowercase();
        return adapters
            .iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&want))
            .cloned()
            .ok_or_else(|| {
                let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
                Error::NoAdapter(format!(
                    "--adapter / STAGEWISE_ADAPTER '{sel}': no adapter name contains it; adapters: {}",
                    names.join(", ")
                ))
            });
    }
    let rank = |a: &wgpu::Adapter| {
        let info = a.get_info();
        let t = match info.device_type {
            wgpu::DeviceType::DiscreteGpu => 0,
            wgpu::DeviceType::IntegratedGpu => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Other => 3,
            wgpu::DeviceType::Cpu => 4,
        };
        let b = if info.backend == wgpu::Backend::Gl {
            1
        } else {
            0
        };
        (t, b)
    };
    Ok(adapters
        .iter()
        .min_by_key(|a| rank(a))
        .cloned()
        .expect("non-empty"))
}

/// How kernels are compiled. By default Stagewise's own kernels (every one tested against its CPU
/// model, every index guarded in the kernel) run without wgpu's injected bounds checks: on an H100
/// those checks cost the workgroup-memory kernels 2–3× (tiled permutation 0.29× → 0.95× of copy;
/// docs/PERFORMANCE.md). `STAGEWISE_KERNELS` (comma-separated) changes it: `checked` restores the
/// checks, `no-zero-init` skips zero-filling workgroup memory at every workgroup's start (WebGPU's
/// rule, kept by default; it costs under 1% here).
#[derive(Clone, Copy, Debug)]
pub struct KernelTuning {
    pub unchecked: bool,
    pub zero_init: bool,
}

/// What the environment says about compiling kernels, read once when a device is made:
/// `STAGEWISE_KERNELS`, and the debugging aids `STAGEWISE_DUMP_WGSL` (a folder every compiled
/// kernel's WGSL is written to) and `STAGEWISE_SWAP_WGSL` (a folder whose files replace them).
#[derive(Clone, Debug)]
pub struct KernelEnv {
    pub tuning: KernelTuning,
    pub dump: Option<String>,
    pub swap: Option<String>,
}

pub fn kernel_env() -> KernelEnv {
    let v = std::env::var("STAGEWISE_KERNELS").unwrap_or_default();
    KernelEnv {
        tuning: KernelTuning {
            unchecked: !v.contains("checked") || v.contains("unchecked"),
            zero_init: !v.contains("no-zero-init"),
        },
        dump: std::env::var("STAGEWISE_DUMP_WGSL").ok(),
        swap: std::env::var("STAGEWISE_SWAP_WGSL").ok(),
    }
}

/// `STAGEWISE_MEMORY_BUDGET=PCT`: allocations above PCT % of `max_buffer_size` fail as out of memory.
pub fn memory_budget_pct() -> Option<f64> {
    let v = std::env::var("STAGEWISE_MEMORY_BUDGET").ok()?;
    let v = v.trim().trim_end_matches('%');
    match v.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Some(p),
        _ => {
            eprintln!(
                "stagewise: ignoring STAGEWISE_MEMORY_BUDGET='{v}' (want a percentage in (0, 100])"
            );
            None
        }
    }
}
