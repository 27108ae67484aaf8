//! Bimodal re-reference interval prediction (BRRIP) with 2-bit RRPVs, the thrash-resistant
//! half of DRRIP (drp-reuse-probability-shared-llc.txt §2.1, after Jaleel et al., ISCA 2010).
//!
//! A fill inserts with RRPV 3 ("distant"), except one insertion in 32 which inserts with 2
//! ("long"). The choice is a deterministic throttle ([`super::util::Bimodal`]): the 32nd,
//! 64th, ... insertion of the cache is long, so runs are reproducible without a seed; the
//! period is parameter `brrip_throttle` (default 32). Hits set the RRPV to 0; victim
//! selection is SRRIP's ([`Rrip`]).

use super::rrip::{Insertion, Rrip};
use super::util::{Bimodal, BRRIP_THROTTLE};
use crate::params::ParamList;
use crate::{CacheError, PolicyContext};
use apusim_trace::Access;

impl Insertion for Bimodal {
    fn params(list: &mut ParamList) {
        list.add(&[BRRIP_THROTTLE]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        Bimodal::from_ctx(ctx)
    }
    #[inline]
    fn insertion(&mut self, _set: usize, _req: &Access) -> u8 {
        Bimodal::insertion(self)
    }
}

/// BRRIP: [`Rrip`] inserting bimodally.
pub type Brrip = Rrip<Bimodal>;

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;

    fn rrpvs(c: &crate::Cache<Brrip>) -> Vec<u8> {
        (0..4).map(|w| c.policy().rrpv(0, w)).collect()
    }

    /// One 4-way set, distinct lines 0, 1, 2, ...: fills 1-4 take the empty ways at RRPV 3;
    /// every later miss evicts way 0 (the lowest distant way) until the 32nd insertion, which
    /// is long (RRPV 2) and so protects way 0; the 33rd then evicts way 1. A hit on the line
    /// in way 0 makes it 0; with every line at 3 or less and no 3 left the set ages.
    #[test]
    fn replays_hand_worked_sequence() {
        let mut c = cache_of::<Brrip>(1, 4);
        for l in 0..4 {
            assert_eq!(run(&mut c, &cpu_read(l)), Did::Fill(None));
        }
        assert_eq!(rrpvs(&c), vec![3, 3, 3, 3]);
        // Insertions 5..=31 replace way 0 each time.
        for l in 4..31 {
            let evicted = if l == 4 { 0 } else { l - 1 };
            assert_eq!(run(&mut c, &cpu_read(l)), Did::Fill(Some(evicted)));
            assert_eq!(rrpvs(&c), vec![3, 3, 3, 3], "insertion {}", l + 1);
        }
        // The 32nd insertion (line 31) is long.
        assert_eq!(run(&mut c, &cpu_read(31)), Did::Fill(Some(30)));
        assert_eq!(rrpvs(&c), vec![2, 3, 3, 3]);
        // The 33rd evicts way 1 (line 1) and is distant again.
        assert_eq!(run(&mut c, &cpu_read(32)), Did::Fill(Some(1)));
        assert_eq!(rrpvs(&c), vec![2, 3, 3, 3]);
        // Hits promote to 0.
        assert_eq!(run(&mut c, &cpu_read(31)), Did::Hit);
        assert_eq!(run(&mut c, &cpu_read(2)), Did::Hit);
        assert_eq!(run(&mut c, &cpu_read(3)), Did::Hit);
        assert_eq!(run(&mut c, &cpu_read(32)), Did::Hit);
        assert_eq!(rrpvs(&c), vec![0, 0, 0, 0]);
        // No distant line: age by 3, evict way 0 (line 31), insert distant.
        assert_eq!(run(&mut c, &cpu_read(33)), Did::Fill(Some(31)));
        assert_eq!(rrpvs(&c), vec![3, 3, 3, 3]);
    }

    #[test]
    fn throttle_is_a_parameter() {
        let mut ctx = ctx(1, 4);
        ctx.params.insert("brrip_throttle".into(), 2.0);
        let mut c = cache(1, 4, Brrip::build(&ctx).unwrap());
        for l in 0..4 {
            run(&mut c, &cpu_read(l));
        }
        assert_eq!(rrpvs(&c), vec![3, 2, 3, 2]);
        ctx.params.insert("brrip_throttle".into(), 0.0);
        assert!(Brrip::build(&ctx).is_err());
    }
}
