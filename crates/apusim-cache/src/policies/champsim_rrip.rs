//! RRIP as ChampSim's `srrip`, `drrip` and `ship` replacement modules actually run at ChampSim
//! commit 2ff25011, for validating apusim against ChampSim with those policies.
//!
//! ChampSim calls a module's `update_replacement_state` on a miss or a fill only if the module
//! also defines `replacement_cache_fill` (ChampSim inc/cache.h,
//! `replacement_module_model::impl_update_replacement_state`: `if (hit || has_cache_fill)`),
//! and `impl_replacement_cache_fill` falls back to that same guarded call. Only `lru`
//! defines it. So `srrip`, `drrip` and `ship` never see their fills: a filled line keeps the
//! RRPV its way had when it was chosen as the victim, which is 3 ("distant") after the
//! victim search's aging (and for a never-used way, the initial value: 3 for `srrip` and
//! `ship`, 0 for `drrip`). Hits set the RRPV to 0, and `drrip`'s PSEL and `ship`'s counters,
//! trained only in the fill path, never move. All three therefore behave as this policy:
//! insert at 3, promote to 0 on a hit, evict the lowest way at 3 after aging (BRRIP without
//! its long insertions). A scan twice the LLC's size keeps 15 of a set's 16 lines, where
//! SRRIP proper, inserting at 2, keeps none.

use super::rrip::{Insertion, Rrip};
use super::util::RRPV_MAX;
use crate::{CacheError, PolicyContext};
use apusim_trace::Access;

/// The insertion ChampSim's modules end up with: every fill distant.
pub struct Distant;

impl Insertion for Distant {
    fn build(_ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(Distant)
    }
    #[inline]
    fn insertion(&mut self, _set: usize, _req: &Access) -> u8 {
        RRPV_MAX
    }
}

/// RRIP as ChampSim runs it: [`Rrip`] inserting distant.
pub type ChampSimRrip = Rrip<Distant>;

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;

    /// A cyclic scan of 8 lines over one 4-way set: after the first lap, three lines stay
    /// and hit on every lap; the fourth way takes every other line.
    #[test]
    fn a_scan_keeps_all_but_one_way() {
        let mut c = cache_of::<ChampSimRrip>(1, 4);
        let mut hits = 0;
        for lap in 0..4 {
            for line in 0..8u64 {
                let did = run(&mut c, &cpu_read(line));
                if lap > 0 && did == Did::Hit {
                    hits += 1;
                }
            }
        }
        assert_eq!(hits, 3 * 3, "three lines hit on each later lap");
    }
}
