//! Offline oracle studies (crate `apusim-oracle`): Belady OPT, OPT+Bypass and
//! `<policy>-bypass` on an LLC access stream, side by side with online policies replayed on
//! the same stream (drp-reuse-probability-shared-llc.txt §4.1, Fig. 2), and reuse
//! characterization (`apusim reuse`, gspc-graphics-stream-llc.txt §2).

use crate::inputs::ImportArgs;
use anyhow::{bail, Context, Result};
use apusim_experiments::oracle_setup;
use apusim_oracle::{OraclePolicy, OracleResult};
use apusim_sim::report::{pct, TextTable};
use apusim_sim::SystemConfig;
use std::path::Path;

/// True for names only the offline oracle can run.
pub fn is_oracle_name(name: &str) -> bool {
    name == "opt" || name.ends_with("-bypass")
}

/// Run `names` (oracles and registered policies) offline over the LLC stream in `llc_trace`,
/// read as `import` says.
pub fn offline(
    cfg: &SystemConfig,
    llc_trace: &Path,
    import: &ImportArgs,
    names: &[String],
) -> Result<Vec<OracleResult>> {
    let policies = OraclePolicy::parse_list(&names.join(","))?;
    let (ocfg, ctx) = oracle_setup(cfg)?;
    let mut open = || import.open(llc_trace);
    apusim_oracle::run_many(&mut open, &policies, &ocfg, &ctx)
        .with_context(|| format!("offline replay of {}", llc_trace.display()))
}

/// Read misses per agent class normalized to the first policy (drp Fig. 2 layout).
pub fn normalized_table(results: &[OracleResult]) -> String {
    let Some(first) = results.first() else {
        return String::new();
    };
    let ratio = |x: u64, b: u64| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.3}", x as f64 / b as f64)
        }
    };
    let (bc, bg) = (first.cpu.read_misses, first.gpu.read_misses);
    let mut t = TextTable::new([
        "policy",
        "LLC refs",
        "hit rate",
        "CPU read misses",
        "GPU read misses",
        "CPU norm",
        "GPU norm",
        "total norm",
        "bypasses",
    ]);
    for r in results {
        let (c, g) = (r.cpu.read_misses, r.gpu.read_misses);
        t.row(vec![
            r.policy.clone(),
            r.total.accesses().to_string(),
            pct(r.total.hits(), r.total.accesses()),
            c.to_string(),
            g.to_string(),
            ratio(c, bc),
            ratio(g, bg),
            ratio(c + g, bc + bg),
            r.total.bypasses.to_string(),
        ]);
    }
    format!(
        "LLC read misses normalized to {} on the same LLC stream ({} accesses)\n{}",
        first.policy,
        first.accesses,
        t.render()
    )
}

/// `apusim run` with oracle policies: record the LLC stream under the configured policy, then
/// replay every listed policy on it offline.
pub fn run_with_oracles(
    cfg: &SystemConfig,
    inputs: &dyn apusim_sim::Inputs,
    names: &[String],
    opts: &apusim_sim::RunOptions,
) -> Result<Vec<OracleResult>> {
    if opts.llc_switches.is_active() {
        bail!("oracle policies replay a recorded LLC stream; they do not combine with --ideal, --gpu-read-bypass or --dump-llc-trace");
    }
    // Refuse a bad parameter before recording, not after.
    let (_, ctx) = oracle_setup(cfg)?;
    apusim_oracle::check_params(&OraclePolicy::parse_list(&names.join(","))?, &ctx)?;
    let dir = tempfile::tempdir().context("creating a temporary directory for the LLC stream")?;
    let llc = dir.path().join("llc.apt");
    let record = apusim_sim::RunOptions {
        llc_switches: apusim_sim::LlcSwitches {
            dump_llc_trace: Some(llc.clone()),
            ..Default::default()
        },
        ..opts.clone()
    };
    let recorded = apusim_sim::run_policy(
        &cfg.for_policy(&cfg.llc.policy),
        &cfg.llc.policy,
        inputs,
        &record,
    )?;
    eprintln!(
        "recorded the LLC stream under {} ({} trace accesses); replaying {} policies offline",
        cfg.llc.policy,
        recorded.stats.trace_accesses,
        names.len()
    );
    offline(cfg, &llc, &ImportArgs::default(), names)
}

/// `apusim reuse`: characterize an LLC stream (read as `import` says) under one policy.
pub fn reuse(
    cfg: &SystemConfig,
    llc_trace: &Path,
    import: &ImportArgs,
    policy: &str,
) -> Result<apusim_oracle::ReuseReport> {
    let (ocfg, ctx) = oracle_setup(cfg)?;
    let p: OraclePolicy = policy.parse()?;
    let mut open = || import.open(llc_trace);
    apusim_oracle::characterize(&mut open, &p, &ocfg, &ctx)
        .with_context(|| format!("characterizing {}", llc_trace.display()))
}
