//! Pipelines: every kernel compiled once per device (keyed by the kernel as written, its entry
//! point, checks and the instrument's build), its WGSL kept beside it for the app's code panel.

use super::context::Gpu;
use crate::error::{Error, Result};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Where a pipeline's code came from: shown by the app next to the stage that ran it.
#[derive(Clone)]
pub struct KernelInfo {
    pub label: String,
    pub entry: String,
    pub source: Arc<str>,
    /// What an instrument's build of the kernel left for its runs ([`super::hook::Built`]).
    pub built: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for KernelInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelInfo")
            .field("label", &self.label)
            .field("entry", &self.entry)
            .field("instrumented", &self.built.is_some())
            .finish()
    }
}

impl Gpu {
    /// A compute pipeline from WGSL, compiled once per (source, entry point) and cached.
    pub fn pipeline(
        &self,
        label: &str,
        source: &str,
        entry: &str,
    ) -> Result<wgpu::ComputePipeline> {
        self.pipeline_with(label, source, entry, false, &[])
    }

    /// [`Gpu::pipeline`] for a kernel Stagewise did not write (the workbench's): always compiled
    /// with wgpu's bounds checks, whatever `STAGEWISE_KERNELS` says.
    pub fn pipeline_checked(
        &self,
        label: &str,
        source: &str,
        entry: &str,
    ) -> Result<wgpu::ComputePipeline> {
        self.pipeline_with(label, source, entry, true, &[])
    }

    /// [`Gpu::pipeline_checked`] with values for the kernel's `override` constants (wgpu's
    /// pipeline-overridable constants: (name or `@id`, value)); each set of values is a pipeline
    /// of its own in the cache.
    pub fn pipeline_checked_with(
        &self,
        label: &str,
        source: &str,
        entry: &str,
        constants: &[(String, f64)],
    ) -> Result<wgpu::ComputePipeline> {
        self.pipeline_with(label, source, entry, true, constants)
    }

    fn pipeline_with(
        &self,
        label: &str,
        source: &str,
        entry: &str,
        checked: bool,
        constants: &[(String, f64)],
    ) -> Result<wgpu::ComputePipeline> {
        let shown = source;
        // Keyed by the kernel as written, its entry, checks, build and override values, so a
        // cached pipeline is never rebuilt by the instrument. Logged and stubbed kernels skip the
        // cache.
        let mut key = kernel_key(
            source,
            entry,
            checked,
            self.instrument.as_ref().map(|i| i.mode()),
        );
        if !constants.is_empty() {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            key.hash(&mut h);
            for (k, v) in constants {
                k.hash(&mut h);
                v.to_bits().hash(&mut h);
            }
            key = h.finish();
        }
        let cached = || {
            self.pipelines
                .lock()
                .ok()
                .and_then(|m| m.get(&key).cloned())
        };
        if self.collect.is_none()
            && !self.stub
            && let Some(p) = cached()
        {
            return Ok(p);
        }
        let built = match &self.instrument {
            Some(i) => Some(i.build(label, source, entry)?),
            None => None,
        };
        let source = built.as_ref().map_or(source, |b| b.source.as_str());
        let built_entry = built.as_ref().map_or(entry, |b| b.entry.as_str());
        if let Some(p) = self.collected(label, source, built_entry)? {
            return Ok(p);
        }
        if let Some(p) = cached() {
            // A logging device logs every kernel asked for, then takes the cache's.
            return Ok(p);
        }
        // The dump's file name: the hash of the text compiled (an instrument's build included).
        let file_key = kernel_key(source, built_entry, checked, None);
        let file = format!("{}-{file_key:016x}.wgsl", label.replace(' ', "_"));
        if let Some(dir) = &self.kernel_env.dump {
            // Debugging aid: every compiled kernel's WGSL, named by label and source hash.
            let _ = std::fs::create_dir_all(dir)
                .and_then(|_| std::fs::write(format!("{dir}/{file}"), source));
        }
        // Debugging aid, the dump's other half: a file of the dump's name in this folder is
        // compiled in place of the kernel, so an edited kernel runs (verified, traced, timed) where
        // the generated one would.
        let swapped = match &self.kernel_env.swap {
            Some(dir) => {
                let path = std::path::Path::new(dir).join(&file);
                match std::fs::read_to_string(&path) {
                    Ok(text) => {
                        eprintln!("stagewise: kernel {label} runs {}", path.display());
                        Some(text)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => {
                        return Err(Error::Io(format!(
                            "STAGEWISE_SWAP_WGSL: cannot read {}: {e}",
                            path.display()
                        )));
                    }
                }
            }
            None => None,
        };
        let shown = swapped.as_deref().unwrap_or(shown);
        let source = swapped.as_deref().unwrap_or(source);
        let tuning = self.kernel_env.tuning;
        let constants: Vec<(&str, f64)> = constants.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let p = self.scoped(|| {
            let desc = wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            };
            let module = if tuning.unchecked && !checked {
                // SAFETY: only kernels shipped in shaders/ are compiled here; each guards its indices
                // (`if i >= n`) and is tested against its CPU model. STAGEWISE_KERNELS=checked
                // restores wgpu's checks (a kernel swapped in with STAGEWISE_SWAP_WGSL is the
                // user's, run as given: documented with the variable).
                unsafe {
                    self.device
                        .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
                }
            } else {
                self.device.create_shader_module(desc)
            };
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(label),
                    layout: None,
                    module: &module,
                    entry_point: Some(built_entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: tuning.zero_init,
                    },
                    cache: None,
                })
        })?;
        if let Ok(mut m) = self.pipelines.lock() {
            m.insert(key, p.clone());
        }
        if let Ok(mut m) = self.kernels.lock() {
            m.insert(
                p.clone(),
                KernelInfo {
                    label: label.to_string(),
                    entry: entry.to_string(),
                    // The normal build (a recording build's lines are the same).
                    source: shown.into(),
                    built: built.map(|b| b.data),
                },
            );
        }
        Ok(p)
    }
}

/// A kernel's hash: its text, entry point, whether wgpu's checks are kept (apart from the same text
/// compiled unchecked; unchecked kernels' hashes are the text's and entry's alone) and the
/// instrument's mode.
fn kernel_key(source: &str, entry: &str, checked: bool, mode: Option<&str>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    entry.hash(&mut h);
    if checked {
        "checked".hash(&mut h);
    }
    if let Some(m) = mode {
        m.hash(&mut h);
    }
    h.finish()
}
