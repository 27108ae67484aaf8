//! Run keys: the options of each mode that shape a run's result, and the stable hash of a
//! run's resolved configuration, mode, policy, options and input identities that names it in
//! a results database. A sweep, `apusim run|sim --db` and a study's stored runs key by the
//! same functions, so the same run is found whichever way it was made.

use crate::spec::Mode;
use anyhow::{Context, Result};
use apusim_gpu::config::GpuConfig;
use apusim_sim::timed::SampleSpec;
use apusim_sim::{Inputs, LlcSwitches, RunOptions, SystemConfig};
use serde_json::{json, Value};

/// The identities of a run's inputs: their stable keys (a trace file's path, size and
/// modification time; a generated job's generator version and parameters), else their
/// description.
pub fn input_ids(inputs: &dyn Inputs) -> Vec<String> {
    inputs.keys().unwrap_or_else(|| vec![inputs.describe()])
}

/// The key of a run: 128-bit FNV-1a of its complete resolved configuration, mode, policy,
/// options and input identities, as canonical JSON (32 hex digits). The same run gives the
/// same key from a sweep, `apusim run --db` or `apusim sim --db`.
pub fn run_key(
    mode: Mode,
    cfg: &SystemConfig,
    policy: &str,
    options: &Value,
    inputs: &[String],
) -> Result<String> {
    let mut cfg = cfg.clone();
    cfg.llc.policy = policy.to_string();
    key_of(&json!({
        "mode": mode.name(),
        "config": serde_json::to_value(&cfg).context("serializing the configuration")?,
        "policy": policy,
        "options": options,
        "inputs": inputs,
    }))
}

/// The key of a `gpu-l1` run: [`run_key`]'s hash over its GPU configuration and input
/// identities (the kernel's size and seed are in its identity; there is no LLC policy and
/// no option). The same run gives the same key from a sweep and from a study's `--db`.
pub fn gpu_l1_key(cfg: &GpuConfig, inputs: &[String]) -> Result<String> {
    key_of(&json!({
        "mode": Mode::GpuL1.name(),
        "config": serde_json::to_value(cfg).context("serializing the configuration")?,
        "inputs": inputs,
    }))
}

/// 32 hex digits of the FNV-1a hash of `canonical` as JSON.
fn key_of(canonical: &Value) -> Result<String> {
    let text = serde_json::to_string(canonical)?;
    Ok(format!("{:032x}", fnv1a128(text.as_bytes())))
}

/// FNV-1a, 128-bit: a stable hash whose value never changes between builds or platforms.
pub fn fnv1a128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

/// Options of the functional run that shape its results. drp §3's continuation
/// (`apusim run --mix --instructions`) enters only when on, so the keys of runs without it
/// stay what they were.
pub fn functional_options(limit: Option<u64>, continue_to_run: bool) -> Value {
    let mut o = json!({ "limit": limit });
    if continue_to_run {
        o["continue_to_run"] = json!(true);
    }
    o
}

/// The options of `apusim run` under `opts` that shape its results, as its key holds them:
/// the access limit, drp §3's continuation and the LLC switches. `apusim run --db` and a
/// study's stored functional runs key by the same.
pub fn functional_run_options(opts: &RunOptions) -> Value {
    let mut o = functional_options(opts.limit, opts.continue_to_run);
    with_llc_switches(&mut o, &opts.llc_switches);
    o
}

/// Options of a replay that shape its result: the render-target consumption, keyed only when
/// asked for.
pub fn replay_options(consumption: bool) -> Value {
    if consumption {
        json!({ "consumption": true })
    } else {
        json!({})
    }
}

/// Options of the timed run that shape its results.
pub fn timed_options(warmup: u64, instructions: Option<u64>) -> Value {
    json!({ "warmup": warmup, "instructions": instructions })
}

/// `--ideal-gpu`'s name for idealizing the critical (`true`) or the other GPU accesses.
pub fn ideal_gpu_name(critical: bool) -> &'static str {
    if critical {
        "critical"
    } else {
        "non-critical"
    }
}

/// A sampled run's windows as its options record them (`[period, warm-up, unit]`), as
/// `apusim sim --sample --db` keys them.
pub fn sample_option(s: &SampleSpec) -> Value {
    json!([s.period, s.warmup, s.unit])
}

/// Add the LLC switches that are on to a run's options (they are part of its key, as
/// `apusim run|sim --db` records them).
pub fn with_llc_switches(options: &mut Value, switches: &LlcSwitches) {
    if !switches.ideal.is_empty() || switches.gpu_read_bypass > 0.0 {
        let ideal: Vec<String> = switches.ideal.iter().map(|s| s.to_string()).collect();
        options["ideal"] = json!(ideal.join(","));
        options["gpu_read_bypass"] = json!(switches.gpu_read_bypass);
    }
    // gpu-access-criticality Fig. 8's switch, keyed only when on so that the keys of runs
    // without it stay as they were.
    if let Some(critical) = switches.ideal_critical {
        options["ideal_gpu"] = json!(ideal_gpu_name(critical));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_llc_switch_is_part_of_the_key() {
        let key = |switches: &LlcSwitches| {
            let mut o = timed_options(0, Some(1000));
            with_llc_switches(&mut o, switches);
            o
        };
        let plain = key(&LlcSwitches::default());
        let critical = key(&LlcSwitches {
            ideal_critical: Some(true),
            ..LlcSwitches::default()
        });
        let other = key(&LlcSwitches {
            ideal_critical: Some(false),
            ..LlcSwitches::default()
        });
        assert_ne!(plain, critical);
        assert_ne!(critical, other);
        assert_eq!(
            plain,
            timed_options(0, Some(1000)),
            "keys without switches stay as they were"
        );
    }

    #[test]
    fn fnv128_matches_the_published_vectors() {
        assert_eq!(fnv1a128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(fnv1a128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }
}
