//! Static re-reference interval prediction (SRRIP-HP) with 2-bit RRPVs, as
//! drp-reuse-probability-shared-llc.txt §2.1 describes it (after Jaleel et al., ISCA 2010).
//!
//! A fill inserts with RRPV `2^n - 2` = 2 ("long"); a hit sets the RRPV to 0. The victim is
//! the lowest way with RRPV 3 ("distant"); if there is none, every line of the set ages by one
//! until one reaches 3 ([`super::util::rrip_victim`] does the aging in one step); that
//! replacement is [`Rrip`]'s, and SRRIP is its long insertion.
//!
//! Without the heterogeneous write rules every hit, read or write, promotes; with
//! `gpu_write_rules` the registry wraps SRRIP in [`super::hetero_writes::HeteroWrites`], which is the
//! heterogeneous baseline ([`super::drp_baseline`]).

use super::rrip::{Insertion, Rrip};
use super::util::RRPV_LONG;
use crate::{CacheError, PolicyContext};
use apusim_trace::Access;

/// SRRIP's insertion: every fill long.
pub struct Long;

impl Insertion for Long {
    fn build(_ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(Long)
    }
    #[inline]
    fn insertion(&mut self, _set: usize, _req: &Access) -> u8 {
        RRPV_LONG
    }
}

/// SRRIP: [`Rrip`] inserting long.
pub type Srrip = Rrip<Long>;

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Agent, Op, Stream};

    fn rrpvs(c: &crate::Cache<Srrip>) -> Vec<u8> {
        (0..4).map(|w| c.policy().rrpv(0, w)).collect()
    }

    /// One 4-way set: A B C D fill at 2; hit A -> 0; E: no line at 3, age by one
    /// ([1,3,3,3]), evict B (way 1), insert at 2; F evicts C (way 2, already 3, no aging);
    /// G evicts D; H: max is 2, age by one ([2,3,3,3]) and evict E (way 1).
    #[test]
    fn replays_hand_worked_sequence() {
        let mut c = cache_of::<Srrip>(1, 4);
        let steps: [(u64, Did, [u8; 4]); 9] = [
            (0, Did::Fill(None), [2, 3, 3, 3]),
            (1, Did::Fill(None), [2, 2, 3, 3]),
            (2, Did::Fill(None), [2, 2, 2, 3]),
            (3, Did::Fill(None), [2, 2, 2, 2]),
            (0, Did::Hit, [0, 2, 2, 2]),
            (4, Did::Fill(Some(1)), [1, 2, 3, 3]),
            (5, Did::Fill(Some(2)), [1, 2, 2, 3]),
            (6, Did::Fill(Some(3)), [1, 2, 2, 2]),
            (7, Did::Fill(Some(4)), [2, 2, 3, 3]),
        ];
        for (i, (line, did, want)) in steps.iter().enumerate() {
            assert_eq!(run(&mut c, &cpu_read(*line)), *did, "step {i}");
            assert_eq!(rrpvs(&c), want.to_vec(), "step {i}");
        }
        // Scan resistance: A (RRPV 2 now, reused once) survives two more one-shot lines.
        assert_eq!(run(&mut c, &cpu_read(8)), Did::Fill(Some(5)));
        assert_eq!(run(&mut c, &cpu_read(9)), Did::Fill(Some(6)));
        assert_eq!(run(&mut c, &cpu_read(0)), Did::Hit);
    }

    #[test]
    fn plain_srrip_promotes_on_write_hits() {
        let mut c = cache_of::<Srrip>(1, 4);
        run(&mut c, &cpu_read(0));
        let w = Access::new(Agent::GPU, Stream::Color, Op::Write, 0, 64);
        assert_eq!(run(&mut c, &w), Did::Hit);
        assert_eq!(c.policy().rrpv(0, 0), 0);
    }
}
