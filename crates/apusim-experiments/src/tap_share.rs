//! tap Table 1: which application a policy favours when one CPU application shares the LLC
//! with one GPGPU application of each type (A–E, tap §2.2).
//!
//! The paper states the table from its reading of each mechanism (UCP's utility monitors
//! see the GPGPU application's many hits, TC cages thrashing applications, …) without saying
//! how it was measured. apusim measures it: each run reports how much of the LLC each
//! application held, averaged over the measured window
//! (`apusim_sim::timed::occupancy`), and a policy *favours* the application whose share it
//! raises over LRU's on the same workload by at least one way's worth of the LLC (the
//! granularity UCP partitions in; 1/32 of the LLC on the tap preset). A smaller move either
//! way is "≈" (no application favoured), which also stands for the paper's "none".
//!
//! Metrics per workload and policy: `cpu_share` and `gpu_share` (fractions of the LLC's
//! lines), and for each policy other than LRU `cpu_share_gain` (its `cpu_share` minus
//! LRU's) and `favoured` (+1 the CPU application, −1 the GPGPU one, 0 neither).

use crate::Record;
use apusim_sim::timed::SimResult;

/// The CPU applications' and the GPGPU application's mean shares of the LLC in `r`.
pub fn shares(r: &SimResult) -> (f64, f64) {
    let of = |gpu: bool| -> f64 {
        r.llc_occupancy
            .iter()
            .filter(|o| (o.agent == "gpu") == gpu)
            .map(|o| o.share)
            .sum()
    };
    (of(false), of(true))
}

/// +1 when a gain of `gain` (of the LLC, over LRU) in the CPU application's share favours
/// it, −1 when the loss favours the GPGPU application, 0 within `one_way` either side.
pub fn favoured(gain: f64, one_way: f64) -> f64 {
    if gain >= one_way {
        1.0
    } else if gain <= -one_way {
        -1.0
    } else {
        0.0
    }
}

/// The table's records for one workload: `runs[0]` is LRU's, `runs[1..]` the policies
/// labelled `labels[1..]`, on an LLC of `ways` ways.
pub fn records(
    config: &str,
    workload: &str,
    labels: &[String],
    runs: &[SimResult],
    ways: u32,
) -> Vec<Record> {
    let one_way = 1.0 / f64::from(ways.max(1));
    let (base_cpu, _) = shares(&runs[0]);
    let mut out = Vec::new();
    let mut push = |policy: &str, metric: &str, value: f64| {
        out.push(Record::new(config, workload, policy, metric, value))
    };
    for (i, (r, label)) in runs.iter().zip(labels).enumerate() {
        let (cpu, gpu) = shares(r);
        push(label, "cpu_share", cpu);
        push(label, "gpu_share", gpu);
        if i > 0 {
            let gain = cpu - base_cpu;
            push(label, "cpu_share_gain", gain);
            push(label, "favoured", favoured(gain, one_way));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_way_s_worth_of_space_decides_who_is_favoured() {
        let w = 1.0 / 32.0;
        assert_eq!(favoured(0.05, w), 1.0);
        assert_eq!(favoured(w, w), 1.0);
        assert_eq!(favoured(0.02, w), 0.0);
        assert_eq!(favoured(-0.02, w), 0.0);
        assert_eq!(favoured(-0.2, w), -1.0);
    }
}
