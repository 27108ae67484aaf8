//! What a run of the GPU memory side counts, and the figures derived from it
//! (adaptive-gpu-l1-bypassing.txt §5).
//!
//! Definitions (where the paper is silent, our choice):
//! - **L1 accesses** are per line: a coalesced transaction that straddles lines counts once per
//!   line. **L1 misses** count read and write misses (Fig. 8).
//! - **Bypass ratio** (Fig. 6, "ratio of bypasses to cache misses"; §5.1 "58% of cache fills are
//!   prevented"): bypasses per *read* miss, i.e. per miss that would have filled — the L1 is
//!   write-no-allocate, so a write miss never fills and can never be bypassed.
//! - **Coverage** (§5.3): bypass predictions per prediction; a prediction is made on every read
//!   miss; predictions overridden by the bypassBit still count as bypass predictions.
//! - **False positives, paper definition** (§5.3: "we include incorrectly bypassed or replaced
//!   blocks"): a bypass is wrong when the same L1 refers to the block again while it is still in
//!   the L2 — the block was reused, and either missed again or was put back ("replaced") by the
//!   bypassBit correction. Rate = such re-references per bypass prediction.
//! - **False positives, SDBP definition** (§5.3: accesses to predicted-dead blocks per dead
//!   prediction): an access by the same L1 to a block it bypassed while the block would still
//!   have been resident had it been inserted — fewer than `ways` later insertions into its set
//!   (LRU-stack residency, tracked by a per-set ghost list of the last `ways` bypassed lines).
//!   Both definitions count *read* re-references only: the L1 is write-through and
//!   write-no-allocate, so a store costs the same whether or not the line is resident.
//! - **Zero-reuse fraction** (Fig. 1): evictions of lines never hit since their fill, per
//!   eviction. **Accessed-once fraction**: distinct lines referenced exactly once in the whole
//!   run, per distinct line (Fig. 1's second series, counted only when asked for).
//! - **Energy** (§5.1, Fig. 7, Table 3): every L1 access reads tag and data in parallel, every
//!   fill writes them again; with a predictor the (wider) tag energy of the bypassing column is
//!   used and the prediction table is read on every access and written on every update (hit
//!   decrement, eviction increment). Dynamic energy only: static energy needs the run time,
//!   which the functional model does not have; the static powers are reported as configured.

use crate::config::EnergyConfig;
use serde::{Deserialize, Serialize};

/// Raw counters of one run (all L1s summed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    /// Line accesses that reached an L1 data cache.
    pub l1_accesses: u64,
    pub l1_reads: u64,
    pub l1_writes: u64,
    pub l1_hits: u64,
    pub l1_misses: u64,
    pub l1_read_misses: u64,
    /// Read misses on which a predictor was consulted.
    pub predictions: u64,
    /// Predictions that said "bypass".
    pub predicted_bypasses: u64,
    /// Bypass predictions overridden by the L2's bypassBit.
    pub corrected: u64,
    /// Read misses that bypassed the L1.
    pub bypasses: u64,
    pub l1_fills: u64,
    pub l1_evictions: u64,
    pub zero_reuse_evictions: u64,
    /// Paper-definition false positives (see the module doc).
    pub fp_paper: u64,
    /// SDBP-definition false positives (see the module doc).
    pub fp_sdbp: u64,
    /// Prediction-table reads on read misses plus updates.
    pub table_accesses: u64,
    /// Prediction-table entries ever indexed, summed over the L1s.
    pub table_entries_used: u64,
    /// Accesses of other streams, sent to the L2 directly.
    pub other_accesses: u64,
    /// Records of non-GPU agents, ignored.
    pub ignored: u64,
    pub l2_accesses: u64,
    pub l2_misses: u64,
    pub l3_accesses: u64,
    pub l3_misses: u64,
    pub mem_reads: u64,
    pub mem_writes: u64,
    /// Distinct lines referenced (0 unless footprint tracking is on).
    pub distinct_lines: u64,
    /// Distinct lines referenced exactly once.
    pub once_lines: u64,
}

/// `num / den`, or 0 when `den` is 0.
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// The figures of §5 derived from [`Metrics`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    pub l1_hit_rate: f64,
    pub bypass_ratio: f64,
    pub coverage: f64,
    pub fp_rate_paper: f64,
    pub fp_rate_sdbp: f64,
    pub zero_reuse_fraction: f64,
    pub once_fraction: f64,
    /// Dynamic L1 energy of all L1s, in nJ.
    pub l1_dynamic_energy_nj: f64,
    /// Static power of one L1 as configured (mW).
    pub l1_static_power_mw: f64,
}

impl Metrics {
    /// Derive the §5 figures; `predictor` says which energy column applies.
    pub fn derive(&self, e: &EnergyConfig, predictor: bool) -> Derived {
        Derived {
            l1_hit_rate: ratio(self.l1_hits, self.l1_accesses),
            bypass_ratio: ratio(self.bypasses, self.l1_read_misses),
            coverage: ratio(self.predicted_bypasses, self.predictions),
            fp_rate_paper: ratio(self.fp_paper, self.predicted_bypasses),
            fp_rate_sdbp: ratio(self.fp_sdbp, self.predicted_bypasses),
            zero_reuse_fraction: ratio(self.zero_reuse_evictions, self.l1_evictions),
            once_fraction: ratio(self.once_lines, self.distinct_lines),
            l1_dynamic_energy_nj: self.energy_nj(e, predictor),
            l1_static_power_mw: if predictor {
                e.bypass_static_mw
            } else {
                e.base_static_mw
            },
        }
    }

    /// Dynamic energy of the L1s (see the module doc).
    pub fn energy_nj(&self, e: &EnergyConfig, predictor: bool) -> f64 {
        let arrays = (self.l1_accesses + self.l1_fills) as f64;
        if predictor {
            let updates = self.table_accesses.saturating_sub(self.predictions);
            arrays * (e.bypass_tag_nj + e.bypass_data_nj)
                + (self.l1_accesses + updates) as f64 * e.table_nj
        } else {
            arrays * (e.base_tag_nj + e.base_data_nj)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_follows_table3() {
        let e = EnergyConfig::default();
        let m = Metrics {
            l1_accesses: 1000,
            l1_fills: 100,
            predictions: 200,
            table_accesses: 500,
            ..Default::default()
        };
        let base = m.energy_nj(&e, false);
        assert!((base - 1100.0 * (0.00134096 + 0.106434)).abs() < 1e-9);
        let bp = m.energy_nj(&e, true);
        let want = 1100.0 * (0.0017867 + 0.106434) + 1300.0 * 0.000126232;
        assert!((bp - want).abs() < 1e-9);
        // Fewer fills with bypassing pay for the wider tags.
        let fewer = Metrics { l1_fills: 40, ..m };
        assert!(fewer.energy_nj(&e, true) < base);
    }
}
