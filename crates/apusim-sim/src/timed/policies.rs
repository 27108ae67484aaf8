//! Several LLC policies timed on the same inputs, as `apusim sim --policy a,b,…` and the
//! Python bindings' `sim` run them.

use super::sim::{sim_policy, SimOptions, SimResult};
use super::speedup::{speedup, AloneRun};
use super::target_error::sim_to_target;
use crate::config::SystemConfig;
use crate::run::Inputs;
use anyhow::{Context, Result};
use rayon::prelude::*;

/// Each policy of `names` timed on `inputs`, in parallel on the current rayon pool, with the
/// `llc.params` it declares (a key must be declared by one of them); sampled
/// until every core's IPC is within `target_error` when given ([`sim_to_target`]); and, when
/// `alone` holds the jobs' alone runs under its policy, each result's speedups over them.
pub fn sim_policies(
    cfg: &SystemConfig,
    names: &[String],
    inputs: &dyn Inputs,
    opts: &SimOptions,
    target_error: Option<f64>,
    alone: Option<(&str, &[AloneRun])>,
) -> Result<Vec<SimResult>> {
    apusim_cache::policies::check_params(names, &cfg.llc.params, cfg.llc.gpu_write_rules)?;
    let mut results: Vec<SimResult> = names
        .par_iter()
        .map(|n| {
            let cfg = &cfg.for_policy(n);
            match target_error {
                Some(e) => sim_to_target(cfg, n, inputs, opts, e),
                None => sim_policy(cfg, n, inputs, opts),
            }
            .with_context(|| format!("policy {n}"))
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some((policy, runs)) = alone {
        for r in &mut results {
            r.speedup = Some(speedup(r, runs, policy)?);
        }
    }
    Ok(results)
}
