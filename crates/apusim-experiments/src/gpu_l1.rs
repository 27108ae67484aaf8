//! One run of `apusim gpu-l1 run`: a GPGPU kernel, generated or recorded as a trace of GPU
//! accesses, through the GPU memory side of adaptive-gpu-l1-bypassing's Table 1
//! ([`apusim_gpu`]: per-SM L1Ds with the bypass predictor, the L2, the memory-side L3) under
//! one [`GpuConfig`]. The functional bypass figures ([`crate::bypass_l1`]) are made of such
//! runs, and a sweep's `mode = "gpu-l1"` points are one each.
//!
//! Every run counts the per-line references (`once_fraction`, Fig. 1) as `apusim gpu-l1 run`
//! does, so a run's result is one thing whichever figure asks for it. Its whole result is kept
//! in the results database as [`FORMAT`] bytes ([`encode`], [`decode`]), so a figure or sweep
//! run once is read back instead of run again.

use anyhow::{Context, Result};
use apusim_gpu::config::GpuConfig;
use apusim_gpu::kernel::{kernel_params, run_kernel};
use apusim_gpu::RunResult;
use apusim_registry::Value;
use apusim_sim::inputs::TraceInputs;
use apusim_sim::Inputs;
use apusim_trace::import::{self, ImportOptions};
use apusim_trace::Agent;
use apusim_workloads::gpgpu;
use apusim_workloads::mixes::{Job, JobSpec};
use std::path::PathBuf;

/// What a GPU L1 run runs.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuL1Input {
    /// A GPGPU kernel generated on the fly at problem size `size` (0: its default) from
    /// `seed`, for the configuration's SMs and clock.
    Kernel {
        name: &'static str,
        size: usize,
        seed: u64,
    },
    /// A trace of GPU accesses in any format the importers detect (`apusim gpu-l1 run
    /// --trace`): `shader-data` accesses go through the L1 of SM `unit`, the rest to the L2.
    Trace(PathBuf),
}

impl GpuL1Input {
    /// Kernel `name` at problem size `size` (`None`: its default) from `seed`, each checked by
    /// the kernel's registry entry.
    pub fn kernel(name: &str, size: Option<u64>, seed: u64) -> Result<GpuL1Input> {
        let mut given = vec![("seed", Value::Int(seed))];
        if let Some(s) = size {
            given.push(("size", Value::Int(s)));
        }
        let (info, p) = gpgpu::params(name, &given).with_context(|| format!("kernel {name}"))?;
        Ok(GpuL1Input::Kernel {
            name: info.name,
            size: p.size,
            seed: p.seed,
        })
    }

    /// The input's identity on `cfg`: a generated kernel's job key (generator version, every
    /// parameter, the GPU's SMs and clock), or a trace file's path, length and modification
    /// time, as the other runs' inputs are named in their keys.
    pub fn identity(&self, cfg: &GpuConfig) -> Result<Vec<String>> {
        match self {
            GpuL1Input::Kernel { name, size, seed } => {
                let job = Job {
                    label: format!("gpu {name}"),
                    spec: JobSpec::Gpgpu {
                        kernel: name,
                        params: kernel_params(cfg, *size, *seed),
                    },
                };
                Ok(vec![format!("job:{}", job.key())])
            }
            GpuL1Input::Trace(path) => {
                let t = TraceInputs::parse(&[path.display().to_string()])?;
                Ok(t.keys().unwrap_or_else(|| vec![t.describe()]))
            }
        }
    }

    /// The workload's name, as a run's result names it.
    pub fn describe(&self) -> String {
        match self {
            GpuL1Input::Kernel { name, .. } => name.to_string(),
            GpuL1Input::Trace(path) => path.display().to_string(),
        }
    }
}

/// One GPU L1 run as a figure or sweep point asks for it.
#[derive(Clone, Copy, Debug)]
pub struct GpuL1Run<'a> {
    pub cfg: &'a GpuConfig,
    pub input: &'a GpuL1Input,
}

/// Make `run`: the kernel generated and run, or the trace read and run, through the GPU
/// hierarchy of its configuration.
pub fn run(run: &GpuL1Run<'_>) -> Result<RunResult> {
    match run.input {
        GpuL1Input::Kernel { name, size, seed } => run_kernel(run.cfg, name, *size, *seed, true),
        GpuL1Input::Trace(path) => {
            let opts = ImportOptions {
                agent: Agent::GPU,
                ..ImportOptions::default()
            };
            let mut src = import::open(path, None, &opts)
                .with_context(|| format!("opening {}", path.display()))?;
            apusim_gpu::run_source(run.cfg, &path.display().to_string(), &mut src, true)
        }
    }
}

/// The name of the stored encoding: the [`RunResult`]'s CBOR, zstd-compressed, as the other
/// stored results' (`apusim_sim::stored` says why CBOR).
pub const FORMAT: &str = "apusim-gpu-l1-result-cbor-zstd-1";

/// `r` as bytes of [`FORMAT`].
pub fn encode(r: &RunResult) -> Result<Vec<u8>> {
    apusim_sim::stored::encode_as(r, "a GPU L1 run's result")
}

/// The result `bytes` of format `format` hold.
pub fn decode(format: &str, bytes: &[u8]) -> Result<RunResult> {
    apusim_sim::stored::decode_as(format, FORMAT, bytes, "a stored GPU L1 run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_survives_its_stored_encoding_and_its_identity_names_every_parameter() {
        let cfg = GpuConfig::load_preset("table1", &[]).unwrap();
        let input = GpuL1Input::kernel("nw", Some(64), 3).unwrap();
        let r = run(&GpuL1Run {
            cfg: &cfg,
            input: &input,
        })
        .unwrap();
        assert!(r.metrics.l1_accesses > 0);
        let back = decode(FORMAT, &encode(&r).unwrap()).unwrap();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&r).unwrap()
        );
        assert!(decode("another-format", &encode(&r).unwrap()).is_err());
        let id = |i: &GpuL1Input, c: &GpuConfig| i.identity(c).unwrap();
        let other_seed = GpuL1Input::kernel("nw", Some(64), 4).unwrap();
        let other_size = GpuL1Input::kernel("nw", Some(128), 3).unwrap();
        let four_sms = GpuConfig::load_preset("table1", &["sms=4".into()]).unwrap();
        assert_ne!(id(&input, &cfg), id(&other_seed, &cfg));
        assert_ne!(id(&input, &cfg), id(&other_size, &cfg));
        assert_ne!(id(&input, &cfg), id(&input, &four_sms));
        assert!(GpuL1Input::kernel("nosuch", None, 1).is_err());
        assert!(GpuL1Input::kernel("nw", Some(1 << 40), 1).is_err());
    }
}
