//! Replay runs: a GPU workload's LLC access stream replayed through the LLC alone under one
//! policy, as `apusim oracle` replays a stream. The gspc functional figures are made of them,
//! and a sweep's `mode = "replay"` points are one each.
//!
//! The stream is what reaches the LLC of a system that runs a GPU workload alone (no CPU
//! core): the workload's trace filtered once through the configuration's upper caches, with
//! the LLC's input dumped ([`llc_stream`]). Such an LLC is inclusive of nothing above it and
//! sends nothing back up, so the stream does not depend on the LLC's policy, parameters or
//! size (gspc §4's GPU-only LLC); one stream serves every replay behind the same upper
//! levels and is cached beside the workload's trace under a key of the configuration with its
//! LLC left out ([`upstream`]). A replay ([`replay`]) then runs the policy over the stream
//! with the configuration's LLC geometry, exactly as `apusim oracle` does, and counts every
//! line reference per agent and stream ([`Replayed::result`]). With `consumption` it also
//! reports the share of render-target blocks that a texture read consumed from the LLC
//! (`apusim reuse`'s inter-stream statistic, gspc §2.3; Fig. 13). A recorded LLC stream (a
//! user's, or `apusim run --dump-llc-trace`'s) is replayed as it is.
//!
//! A replay's whole result is kept in the results database as [`FORMAT`] bytes ([`encode`],
//! [`decode`]), so a study or sweep run once is read back instead of replayed.

use crate::jobs::{ensure_cached, JobInputs};
use crate::oracle_setup;
use anyhow::{bail, Context, Result};
use apusim_oracle::{OraclePolicy, OracleResult};
use apusim_sim::{LlcSwitches, RunOptions, SystemConfig};
use apusim_workloads::mixes::Job;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What one replay yields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replayed {
    /// The counters per agent and stream, as `apusim oracle` reports them.
    pub result: OracleResult,
    /// With `consumption`: the share of render-target blocks a texture read consumed from
    /// the LLC (`None` when not asked for, or when no render-target block was filled).
    pub consumed_share: Option<f64>,
}

/// The name of the stored encoding: the [`Replayed`]'s CBOR, zstd-compressed, as a timed or
/// functional result's are (`apusim_sim::stored` says why CBOR).
pub const FORMAT: &str = "apusim-replay-result-cbor-zstd-1";

/// `r` as bytes of [`FORMAT`].
pub fn encode(r: &Replayed) -> Result<Vec<u8>> {
    apusim_sim::stored::encode_as(r, "a replay's result")
}

/// The result `bytes` of format `format` hold.
pub fn decode(format: &str, bytes: &[u8]) -> Result<Replayed> {
    apusim_sim::stored::decode_as(format, FORMAT, bytes, "a stored replay")
}

/// Refuse a configuration whose LLC stream depends on the LLC: one with CPU cores (their
/// LLC may be inclusive of their caches, and their L2s send hit hints).
pub fn check_replayable(cfg: &SystemConfig) -> Result<()> {
    if cfg.cpus != 0 {
        bail!(
            "a replay runs a GPU workload alone on a system without CPU cores, whose LLC \
             stream does not depend on the LLC; this configuration has {} (set `cpus` to 0)",
            cfg.cpus
        );
    }
    Ok(())
}

/// The configuration of the levels above the LLC: `cfg` with its LLC's policy, parameters
/// and size replaced by fixed ones, so that replays that differ only there share a stream.
pub fn upstream(cfg: &SystemConfig) -> SystemConfig {
    let mut up = cfg.clone();
    up.llc.policy = "lru".into();
    up.llc.params.clear();
    up.llc.geometry = "1M,16,64".into();
    up
}

/// The LLC access stream of the one job of `inputs` behind `cfg`'s upper caches, cached in
/// `dir` (generating the job's trace there first if needed).
pub fn llc_stream(dir: &Path, inputs: &JobInputs, cfg: &SystemConfig) -> Result<PathBuf> {
    let path = dir.join(stream_name(inputs, cfg)?);
    if path.exists() {
        return Ok(path);
    }
    let up = upstream(cfg);
    filter(dir, &inputs.jobs()[0], &up, &path)?;
    Ok(path)
}

/// The file name of the LLC stream of `inputs`' one job behind `cfg`'s upper caches: the job
/// and the upper levels' configuration ([`upstream`]), so replays that share a stream share
/// a name.
pub fn stream_name(inputs: &JobInputs, cfg: &SystemConfig) -> Result<String> {
    check_replayable(cfg)?;
    let [job] = inputs.jobs() else {
        bail!(
            "a replay runs one GPU workload, not {} jobs",
            inputs.jobs().len()
        );
    };
    Ok(format!(
        "llc-{}-{:016x}.apt",
        job.key(),
        apusim_trace::hash::fnv1a(upstream(cfg).to_toml().as_bytes())
    ))
}

/// Run `job` on `up` with the LLC's input written to `path`.
fn filter(dir: &Path, job: &Job, up: &SystemConfig, path: &Path) -> Result<()> {
    ensure_cached(dir, job)?;
    let inputs = JobInputs::new(
        vec![job.clone()],
        Some(dir.to_path_buf()),
        job.label.clone(),
    );
    // A long step of a study's preparation, with nothing else to show for it: its own line.
    let opts = RunOptions {
        progress: true,
        limit: None,
        continue_to_run: false,
        llc_switches: LlcSwitches {
            dump_llc_trace: Some(path.to_path_buf()),
            ..Default::default()
        },
    };
    apusim_sim::run_policy(up, &up.llc.policy, &inputs, &opts)
        .with_context(|| format!("filtering {} through the upper caches", job.label))?;
    Ok(())
}

/// Replay `stream` (an LLC access stream in any format the importers read) through `cfg`'s
/// LLC under `policy` (a registered LLC policy, its parameters `cfg.llc.params`).
pub fn replay(
    stream: &Path,
    cfg: &SystemConfig,
    policy: &str,
    consumption: bool,
) -> Result<Replayed> {
    let mut cfg = cfg.clone();
    cfg.llc.policy = policy.to_string();
    let (ocfg, ctx) = oracle_setup(&cfg)?;
    let oracle = OraclePolicy::parse(policy)?;
    // Any format the importers read (sniffed): a made stream is `.apt`, a user's may not be.
    let import = apusim_trace::import::ImportOptions::default();
    let mut src = apusim_oracle::open_any(stream, None, &import)?;
    let what = || format!("{policy} on {} at {}", stream.display(), cfg.llc.geometry);
    Ok(if consumption {
        // The reuse observer without its stack distances: only the render-target
        // consumption is wanted, and the distances are most of the observer's cost.
        let mut obs = apusim_oracle::ReuseObserver::without_distances();
        let result = apusim_oracle::run_reuse(&oracle, &ocfg, &ctx, None, &mut *src, &mut obs)
            .with_context(what)?;
        let rep = obs.report(result);
        Replayed {
            consumed_share: rep.inter_stream.consumed_share,
            result: rep.result,
        }
    } else {
        Replayed {
            result: apusim_oracle::run(&oracle, &ocfg, &ctx, None, &mut *src).with_context(what)?,
            consumed_share: None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One small frame of scene `lake`, its trace cached in `dir`.
    fn lake(dir: &Path) -> JobInputs {
        crate::jobs::alone_job_inputs(
            apusim_workloads::mixes::Alone::Scene("lake"),
            (96, 64),
            1,
            None,
            1,
            Some(dir.to_path_buf()),
        )
        .unwrap()
    }

    #[test]
    fn a_stored_replay_reads_back_whole_and_a_foreign_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = SystemConfig::load_preset("gspc", &["llc=256K,16,64".into()]).unwrap();
        let inputs = lake(dir.path());
        let stream = llc_stream(dir.path(), &inputs, &cfg).unwrap();
        let r = replay(&stream, &cfg, "gspc", true).unwrap();
        assert!(r.result.total.misses() > 0);
        assert!(r.consumed_share.is_some());
        let back = decode(FORMAT, &encode(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        assert!(decode("apusim-run-result-cbor-zstd-1", &encode(&r).unwrap()).is_err());
        assert!(decode(FORMAT, b"not zstd").is_err());
    }

    #[test]
    fn the_stream_is_shared_across_llc_sizes_and_policies_but_not_upper_caches() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = lake(dir.path());
        let load = |set: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            SystemConfig::load_preset("gspc", &set).unwrap()
        };
        let a = llc_stream(dir.path(), &inputs, &load(&["llc=8M,16,64"])).unwrap();
        let b = llc_stream(
            dir.path(),
            &inputs,
            &load(&["llc=16M,16,64", "llc.policy=nru"]),
        )
        .unwrap();
        assert_eq!(a, b);
        let c = llc_stream(
            dir.path(),
            &inputs,
            &load(&["gpu.caches.color.geometry=32K,16,64"]),
        )
        .unwrap();
        assert_ne!(a, c, "other upper caches, another stream");
        let cpu = load(&["cpus=1"]);
        let e = llc_stream(dir.path(), &inputs, &cpu).unwrap_err();
        assert!(e.to_string().contains("without CPU cores"), "{e}");
    }
}
