//! `apusim sim --sample --target-error E`: sample until every core's IPC interval is within
//! ±E of its estimate (SMARTS §3: run once, compute the windows the measured variation
//! needs, `n ≥ (z · V / ε)²`, and run again with that many).
//!
//! Each further round shortens the sampling period in the ratio of windows needed to
//! windows had, so the same run holds more windows. It stops when the target is met, or
//! fails naming `--target-error` when the windows needed cannot fit the run (each needs its
//! detailed warm-up and unit) or three rounds did not reach it.

use super::estimate::{windows_needed, Z_997};
use super::sim::{sim_policy, SimOptions, SimResult};
use crate::config::SystemConfig;
use crate::run::Inputs;
use anyhow::{bail, Context, Result};

/// Rounds before giving up (SMARTS needs one rerun in almost every case).
const ROUNDS: u32 = 3;

/// `3%` or `0.03`: a relative error in (0, 1).
pub fn parse_target(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("`{s}`: expected a relative error such as 3% or 0.03"))?;
    if !(v > 0.0 && v < 1.0) {
        return Err(format!("`{s}`: a target error lies between 0 and 100%"));
    }
    Ok(v)
}

/// Run `policy` sampled until every core's IPC is known within `target` (relative).
pub fn sim_to_target(
    cfg: &SystemConfig,
    policy: &str,
    inputs: &dyn Inputs,
    opts: &SimOptions,
    target: f64,
) -> Result<SimResult> {
    let mut o = opts.clone();
    let mut spec = o.sample.context("--target-error needs --sample")?;
    for round in 1..=ROUNDS {
        o.sample = Some(spec);
        let mut r = sim_policy(cfg, policy, inputs, &o)?;
        let s = r
            .sampling
            .as_mut()
            .context("a sampled run reports its estimates")?;
        s.target_error = Some(target);
        s.rounds = round;
        // The warm-up the run decided on (the default depends on what runs).
        spec.warmup = s.spec.warmup;
        let mut need = 0u64;
        let mut have = u64::MAX;
        for c in &s.cores {
            have = have.min(c.windows as u64);
            match c.ipc {
                Some(e) if e.relative_error() <= target => {}
                Some(e) if e.value > 0.0 => {
                    let cv = e.half_width * (c.windows as f64).sqrt() / (Z_997 * e.value);
                    need = need.max(windows_needed(cv, Z_997, target));
                }
                // Fewer than two windows, or no instruction retired in any: twice as many.
                _ => need = need.max(2 * (c.windows as u64).max(1)),
            }
        }
        if need == 0 {
            return Ok(r);
        }
        let have = have.max(1);
        let fit = have.saturating_mul(spec.period) / (spec.warmup_cycles() + spec.unit);
        if need > fit {
            bail!(
                "--target-error {:.2}%: the IPC's variation needs about {need} windows and at \
                 most {fit} fit this run (each takes --sample-warmup + --sample-unit = {} \
                 cycles); run longer (--instructions), accept a larger error, or use the \
                 detailed mode",
                100.0 * target,
                spec.warmup_cycles() + spec.unit
            );
        }
        let shorter = (spec.period as f64 * have as f64 / need as f64).floor() as u64;
        spec.period = shorter.max(spec.warmup_cycles() + spec.unit);
    }
    bail!(
        "--target-error {:.2}%: not reached after {ROUNDS} rounds of sampling (the last with a \
         period of {} cycles); use the detailed mode",
        100.0 * target,
        spec.period
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_percent_or_fraction() {
        assert_eq!(parse_target("3%").unwrap(), 0.03);
        assert_eq!(parse_target("0.05").unwrap(), 0.05);
        assert!(parse_target("0%").unwrap_err().contains("between"));
        assert!(parse_target("150%").unwrap_err().contains("between"));
        assert!(parse_target("three").unwrap_err().contains("expected"));
    }
}
