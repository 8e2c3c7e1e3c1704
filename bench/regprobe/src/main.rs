//! What the driver made of a kernel: compiles WGSL files (naga → SPIR-V without bounds checks, as
//! Stagewise's kernels run) into Vulkan compute pipelines and prints the driver's statistics per
//! entry point (VK_KHR_pipeline_executable_properties: on NVIDIA, registers, shared memory, code
//! size). With REGPROBE_CACHE=DIR each pipeline's cache blob is written to DIR, from which
//! sass.py takes the machine code (docs/perf/machine-code.md).
//! Kernels come from `STAGEWISE_DUMP_WGSL=DIR stagewise run …`; the file name's label picks the
//! entry point. REGPROBE_ADAPTER selects an adapter by name.
use ash::vk;
use std::ffi::CStr;

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!(
            "usage: regprobe KERNEL.wgsl… (kernels from STAGEWISE_DUMP_WGSL=DIR stagewise run …)"
        );
        std::process::exit(2);
    }
    if let Err(e) = unsafe { run(&files) } {
        eprintln!("regprobe: {e}");
        std::process::exit(1);
    }
}

/// An error of a call at `line`, for the one-line message.
fn err<E: std::fmt::Debug>(line: u32) -> impl Fn(E) -> String {
    move |e| format!("line {line}: {e:?}")
}

unsafe fn run(files: &[String]) -> Result<(), String> {
    let entry = ash::Entry::load().map_err(|e| format!("no Vulkan loader: {e}"))?;
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
    let instance = entry
        .create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
        .map_err(err(line!()))?;
    let pds = instance
        .enumerate_physical_devices()
        .map_err(err(line!()))?;
    let want = std::env::var("REGPROBE_ADAPTER")
        .unwrap_or_default()
        .to_lowercase();
    let pd = *pds
        .iter()
        .find(|&&p| {
            let props = instance.get_physical_device_properties(p);
            let name = CStr::from_ptr(props.device_name.as_ptr())
                .to_string_lossy()
                .to_lowercase();
            name.contains(&want)
        })
        .ok_or("no adapter matches REGPROBE_ADAPTER")?;
    let props = instance.get_physical_device_properties(pd);
    eprintln!(
        "adapter: {}",
        CStr::from_ptr(props.device_name.as_ptr()).to_string_lossy()
    );
    let qf = instance
        .get_physical_device_queue_family_properties(pd)
        .iter()
        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .ok_or("the adapter has no compute queue")? as u32;
    let prio = [1.0f32];
    let qci = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(qf)
        .queue_priorities(&prio)];
    let has = instance
        .enumerate_device_extension_properties(pd)
        .map_err(err(line!()))?
        .iter()
        .any(|e| {
            CStr::from_ptr(e.extension_name.as_ptr())
                == ash::khr::pipeline_executable_properties::NAME
        });
    eprintln!("pipeline_executable_properties: {has}");
    let exts: Vec<*const i8> = if has {
        vec![ash::khr::pipeline_executable_properties::NAME.as_ptr()]
    } else {
        vec![]
    };
    let mut pep = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().vulkan_memory_model(true);
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default()
        .subgroup_size_control(true)
        .compute_full_subgroups(true);
    let mut dci = vk::DeviceCreateInfo::default()
        .queue_create_infos(&qci)
        .enabled_extension_names(&exts);
    if has {
        dci = dci.push_next(&mut pep);
    }
    let dci = dci.push_next(&mut v12).push_next(&mut v13);
    let device = instance
        .create_device(pd, &dci, None)
        .map_err(err(line!()))?;
    let pe = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);

    for f in files {
        let src = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
        let module = match naga::front::wgsl::parse_str(&src) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{f}: parse: {}", e.emit_to_string(&src));
                continue;
            }
        };
        let info = match naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        {
            Ok(i) => i,
            Err(e) => {
                eprintln!("{f}: validate: {e:?}");
                continue;
            }
        };
        // Descriptor set layouts from the module's bindings.
        let mut sets: std::collections::BTreeMap<u32, Vec<vk::DescriptorSetLayoutBinding>> =
            Default::default();
        for (_, g) in module.global_variables.iter() {
            if let Some(rb) = &g.binding {
                let ty = match g.space {
                    naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
                    naga::AddressSpace::Storage { .. } => vk::DescriptorType::STORAGE_BUFFER,
                    _ => continue,
                };
                sets.entry(rb.group).or_default().push(
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(rb.binding)
                        .descriptor_type(ty)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE),
                );
            }
        }
        let max_set = sets.keys().max().copied().map_or(0, |m| m + 1);
        let dsls: Vec<vk::DescriptorSetLayout> = (0..max_set)
            .map(|s| {
                let b = sets.get(&s).cloned().unwrap_or_default();
                device
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&b),
                        None,
                    )
                    .map_err(err(line!()))
            })
            .collect::<Result<_, _>>()?;
        let layout = device
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&dsls),
                None,
            )
            .map_err(err(line!()))?;
        let stem = std::path::Path::new(f)
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let any = module.entry_points.iter().any(|e| stem.contains(&e.name));
        for ep in module.entry_points.iter() {
            if ep.stage != naga::ShaderStage::Compute || (any && !stem.contains(&ep.name)) {
                continue;
            }
            let opts = naga::back::spv::Options {
                lang_version: (1, 3),
                flags: naga::back::spv::WriterFlags::empty(),
                bounds_check_policies: naga::proc::BoundsCheckPolicies::default(),
                zero_initialize_workgroup_memory:
                    naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
                force_loop_bounding: false,
                ..Default::default()
            };
            let po = naga::back::spv::PipelineOptions {
                shader_stage: naga::ShaderStage::Compute,
                entry_point: ep.name.clone(),
            };
            let words = match naga::back::spv::write_vec(&module, &info, &opts, Some(&po)) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("{f}:{}: spv: {e:?}", ep.name);
                    continue;
                }
            };
            let sm = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
                .map_err(err(line!()))?;
            let name = std::ffi::CString::new(ep.name.as_str()).map_err(err(line!()))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(sm)
                .name(&name);
            let ci = [vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)
                .flags(
                    vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
                        | vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR,
                )];
            let cache = device
                .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
                .map_err(err(line!()))?;
            let pipe = match device.create_compute_pipelines(cache, &ci, None) {
                Ok(p) => p[0],
                Err((_, e)) => {
                    eprintln!("{f}:{}: pipeline: {e:?}", ep.name);
                    continue;
                }
            };
            if let Ok(dir) = std::env::var("REGPROBE_CACHE") {
                let data = device.get_pipeline_cache_data(cache).unwrap_or_default();
                let base = std::path::Path::new(f)
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                let _ = std::fs::write(format!("{dir}/{base}.{}.cache", ep.name), &data);
                eprintln!("cache data: {} bytes", data.len());
            }
            device.destroy_pipeline_cache(cache, None);
            if !has {
                println!("{f} {}: compiled (no statistics on this adapter)", ep.name);
                continue;
            }
            let execs = pe
                .get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(pipe))
                .map_err(err(line!()))?;
            for (i, ex) in execs.iter().enumerate() {
                let mut line = format!(
                    "{f} {} [{}] subgroup {}:",
                    ep.name,
                    CStr::from_ptr(ex.name.as_ptr()).to_string_lossy(),
                    ex.subgroup_size
                );
                let einfo = vk::PipelineExecutableInfoKHR::default()
                    .pipeline(pipe)
                    .executable_index(i as u32);
                for s in pe
                    .get_pipeline_executable_statistics(&einfo)
                    .map_err(err(line!()))?
                {
                    let v = match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                            format!("{}", s.value.b32)
                        }
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                            format!("{}", s.value.i64)
                        }
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                            format!("{}", s.value.u64)
                        }
                        _ => format!("{}", s.value.f64),
                    };
                    line += &format!(
                        " {}={}",
                        CStr::from_ptr(s.name.as_ptr())
                            .to_string_lossy()
                            .replace(' ', "_"),
                        v
                    );
                }
                println!("{line}");
            }
            device.destroy_pipeline(pipe, None);
            device.destroy_shader_module(sm, None);
        }
        device.destroy_pipeline_layout(layout, None);
        for d in dsls {
            device.destroy_descriptor_set_layout(d, None);
        }
    }
    Ok(())
}
