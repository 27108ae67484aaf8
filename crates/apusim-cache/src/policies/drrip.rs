//! Dynamic re-reference interval prediction (DRRIP), drp-reuse-probability-shared-llc.txt §2.1
//! and §4.1 (after Jaleel et al., ISCA 2010): set dueling between SRRIP insertion (RRPV 2)
//! and BRRIP insertion (RRPV 3, one in 32 at 2), with 2-bit RRPVs.
//!
//! Leader sets come from [`super::util::SetSampler`] (thread 0: 32 SRRIP and 32 BRRIP leaders
//! per 1024 sets, complement-select). A 10-bit selector (parameter `psel_bits`) counts the
//! misses of *demand* accesses (op `Read` or `Write`; writebacks from upper levels and
//! prefetches do not train) in the leader sets: SRRIP-leader misses increment it,
//! BRRIP-leader misses decrement it, and follower sets insert like BRRIP while its top bit is
//! set (it starts just below, so followers start as SRRIP). Hits set the RRPV to 0, victim
//! selection is SRRIP's, and one deterministic bimodal throttle (parameter
//! `brrip_throttle`, default 32) serves every BRRIP insertion of the cache.
//!
//! Speed (docs/PERFORMANCE.md, "Cache engine"): the set's duel role is computed once per miss.
//! `on_miss` trains the selector and notes the set's insertion policy; `on_fill`, which the
//! engine calls right after it for the same access, uses that note. The note is only taken
//! when it names the set being filled, and the selector changes only in `on_miss`, which
//! rewrites the note, so it always equals the policy the set has at fill time: a wrapper that
//! bypasses after `on_miss`, or calls `on_fill` alone, gets the same insertions.

use super::rrip::{Insertion, Rrip};
use super::util::{is_demand, Bimodal, SetDuel, BRRIP_THROTTLE, PSEL_BITS, RRPV_LONG};
use crate::params::ParamList;
use crate::{CacheError, MissAction, PolicyContext, PolicyStat};
use apusim_trace::Access;

/// DRRIP's insertion: the cache-wide duel of SRRIP's and BRRIP's.
pub struct DrripDuel {
    duel: SetDuel,
    bimodal: Bimodal,
    /// The set of the latest miss and its insertion policy (0 SRRIP, 1 BRRIP) after training.
    pending: (usize, u8),
}

/// DRRIP: [`Rrip`] with the duel's insertion.
pub type Drrip = Rrip<DrripDuel>;

impl DrripDuel {
    /// The selector's value.
    pub fn psel(&self) -> u32 {
        self.duel.psel().value()
    }
    /// True if `set` inserts like BRRIP now.
    pub fn uses_brrip(&self, set: usize) -> bool {
        self.duel.policy(set) == 1
    }
}

impl Insertion for DrripDuel {
    fn params(list: &mut ParamList) {
        list.add(&[PSEL_BITS, BRRIP_THROTTLE]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(DrripDuel {
            duel: SetDuel::from_ctx(ctx)?,
            bimodal: Bimodal::from_ctx(ctx)?,
            pending: (usize::MAX, 0),
        })
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        let leader = self.duel.leader(set);
        if is_demand(req.op) {
            self.duel.record_leader_miss(leader);
        }
        self.pending = (set, leader.unwrap_or_else(|| self.duel.choice()));
        MissAction::Allocate
    }
    #[inline]
    fn insertion(&mut self, set: usize, _req: &Access) -> u8 {
        let policy = if self.pending.0 == set {
            self.pending.1
        } else {
            self.duel.policy(set)
        };
        if policy == 0 {
            RRPV_LONG
        } else {
            self.bimodal.insertion()
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let p = self.duel.psel();
        vec![
            ("psel".into(), p.value() as f64),
            ("followers_brrip".into(), p.choice() as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Agent, Op, Stream};

    // 64 sets x 2 ways. Thread-0 leaders: SRRIP sets 0 and 33, BRRIP sets 31 and 32.
    const SRRIP_LEADER: u64 = 0;
    const SRRIP_LEADER2: u64 = 33;
    const BRRIP_LEADER: u64 = 31;
    const BRRIP_LEADER2: u64 = 32;
    const FOLLOWER: u64 = 5;

    fn line(set: u64, i: u64) -> u64 {
        set + 64 * i
    }
    fn rrpv(c: &crate::Cache<Drrip>, set: u64, way: usize) -> u8 {
        c.policy().rrpv(set as usize, way)
    }

    #[test]
    fn leaders_are_the_complement_select_sets() {
        let c = cache_of::<Drrip>(64, 2);
        let p = c.policy();
        assert!(!p.uses_brrip(SRRIP_LEADER as usize) && !p.uses_brrip(SRRIP_LEADER2 as usize));
        assert!(p.uses_brrip(BRRIP_LEADER as usize) && p.uses_brrip(BRRIP_LEADER2 as usize));
        assert!(!p.uses_brrip(FOLLOWER as usize));
        assert_eq!(p.psel(), 511);
    }

    /// Hand-worked: misses in SRRIP leaders push the selector toward BRRIP and the follower
    /// switches; misses in BRRIP leaders push it back; writebacks and prefetches do not train.
    #[test]
    fn replays_hand_worked_duel() {
        let mut c = cache_of::<Drrip>(64, 2);
        // Follower miss: no training, SRRIP insertion.
        assert_eq!(run(&mut c, &cpu_read(line(FOLLOWER, 0))), Did::Fill(None));
        assert_eq!((c.policy().psel(), rrpv(&c, FOLLOWER, 0)), (511, 2));
        // SRRIP-leader miss: selector 512 (top bit set), the leader itself inserts at 2.
        assert_eq!(
            run(&mut c, &cpu_read(line(SRRIP_LEADER, 0))),
            Did::Fill(None)
        );
        assert_eq!((c.policy().psel(), rrpv(&c, SRRIP_LEADER, 0)), (512, 2));
        // The follower now inserts like BRRIP (first bimodal insertion: distant).
        assert_eq!(run(&mut c, &cpu_read(line(FOLLOWER, 1))), Did::Fill(None));
        assert_eq!(rrpv(&c, FOLLOWER, 1), 3);
        // BRRIP-leader miss: back to 511; the leader inserts bimodally (2nd: distant).
        assert_eq!(
            run(&mut c, &cpu_read(line(BRRIP_LEADER, 0))),
            Did::Fill(None)
        );
        assert_eq!((c.policy().psel(), rrpv(&c, BRRIP_LEADER, 0)), (511, 3));
        // Follower back to SRRIP: evicts the distant line in way 1, inserts at 2.
        assert_eq!(
            run(&mut c, &cpu_read(line(FOLLOWER, 2))),
            Did::Fill(Some(line(FOLLOWER, 1)))
        );
        assert_eq!((rrpv(&c, FOLLOWER, 0), rrpv(&c, FOLLOWER, 1)), (2, 2));
        // Writeback and prefetch misses in leaders do not train.
        let wb = Access::new(
            Agent::cpu(0),
            Stream::CpuData,
            Op::Writeback,
            line(SRRIP_LEADER, 1) * LINE,
            64,
        );
        assert_eq!(run(&mut c, &wb), Did::Fill(None));
        let mut pf = cpu_read(line(BRRIP_LEADER2, 0));
        pf.op = Op::Prefetch;
        assert_eq!(run(&mut c, &pf), Did::Fill(None));
        assert_eq!(c.policy().psel(), 511);
        assert_eq!(
            (rrpv(&c, SRRIP_LEADER, 1), rrpv(&c, BRRIP_LEADER2, 0)),
            (2, 3)
        );
        // A demand write miss trains.
        let w = Access::new(
            Agent::GPU,
            Stream::Color,
            Op::Write,
            line(SRRIP_LEADER2, 0) * LINE,
            64,
        );
        assert_eq!(run(&mut c, &w), Did::Fill(None));
        assert_eq!(c.policy().psel(), 512);
        // Hits promote and do not train.
        assert_eq!(run(&mut c, &cpu_read(line(SRRIP_LEADER, 0))), Did::Hit);
        assert_eq!((c.policy().psel(), rrpv(&c, SRRIP_LEADER, 0)), (512, 0));
    }

    /// The insertion note of `on_miss` gives exactly the insertions of looking the set's
    /// policy up at fill time, also when hooks come out of the engine's order (a wrapper that
    /// bypasses after `on_miss`, or fills a set without a miss hook first).
    #[test]
    fn the_insertion_note_matches_a_fresh_lookup_in_any_hook_order() {
        use super::super::util::SplitMix64;
        let c = ctx(64, 2);
        let mut p = Drrip::build(&c).unwrap();
        let (mut duel, mut bimodal) = (
            SetDuel::from_ctx(&c).unwrap(),
            Bimodal::from_ctx(&c).unwrap(),
        );
        let mut rng = SplitMix64::new(7);
        for i in 0..20_000 {
            let r = rng.next_u64();
            let set = if r.is_multiple_of(3) {
                [0, 31, 32, 33][(r >> 8) as usize % 4]
            } else {
                (r >> 8) as usize % 64
            };
            let op = [Op::Read, Op::Write, Op::Writeback, Op::Prefetch][(r >> 16) as usize % 4];
            let req = Access::new(Agent::cpu(0), Stream::CpuData, op, 0, 64);
            let way = (r >> 24) as usize % 2;
            match (r >> 32) % 8 {
                // A miss bypassed after the hook: no fill.
                0 => {
                    p.on_miss(set, &req);
                    if is_demand(op) {
                        duel.record_miss(set);
                    }
                }
                // A fill of another set than the last miss, or with no miss hook at all.
                1 => p.on_fill((set + 1) % 64, way, &req),
                _ => {
                    p.on_miss(set, &req);
                    if is_demand(op) {
                        duel.record_miss(set);
                    }
                    p.on_fill(set, way, &req);
                }
            }
            if !(r >> 32).is_multiple_of(8) {
                let filled = if (r >> 32) % 8 == 1 {
                    (set + 1) % 64
                } else {
                    set
                };
                let want = if duel.policy(filled) == 0 {
                    RRPV_LONG
                } else {
                    bimodal.insertion()
                };
                assert_eq!(p.rrpv(filled, way), want, "step {i}");
            }
            assert_eq!(p.psel(), duel.psel().value(), "step {i}");
        }
    }

    #[test]
    fn selector_saturates_and_leaders_keep_their_policy() {
        let mut c = cache_of::<Drrip>(64, 2);
        for i in 0..2000 {
            run(&mut c, &cpu_read(line(SRRIP_LEADER, i)));
        }
        assert_eq!(c.policy().psel(), 1023);
        let st = c.policy().stats();
        assert!(st.contains(&("followers_brrip".to_string(), 1.0)));
        // SRRIP leader still inserts at 2; follower inserts distant (bimodal).
        let before = c.policy().psel();
        run(&mut c, &cpu_read(line(SRRIP_LEADER, 5000)));
        assert_eq!(c.policy().psel(), before, "saturated");
        let w = (0..2).find(|&w| c.policy().rrpv(0, w) == 2);
        assert!(w.is_some(), "SRRIP leader inserted at 2");
        for i in 0..2000 {
            run(&mut c, &cpu_read(line(BRRIP_LEADER, i)));
        }
        assert_eq!(c.policy().psel(), 0);
        run(&mut c, &cpu_read(line(FOLLOWER + 1, 0)));
        assert_eq!(rrpv(&c, FOLLOWER + 1, 0), 2, "followers back to SRRIP");
    }
}
