//! Thread-aware dynamic insertion (TADIP-F, Jaleel et al., PACT 2008), the comparator of
//! tap-tlp-aware-llc.txt §5.7: "a dynamic insertion policy (DIP) that dynamically identifies
//! the application characteristic and inserts single-use blocks (dead on fill) in the LRU
//! position to evict as early as possible".
//!
//! True LRU ([`StackLru`]); hits move the line to MRU; the victim is the LRU
//! line. Each agent (CPU cores, the GPU) duels two insertion policies with its own 10-bit
//! selector and leader sets ([`super::util::AgentBimodalDuel`], as TA-DRRIP): policy 0 inserts at
//! MRU (LRU's insertion), policy 1 is BIP: insert at the LRU position except one insertion in
//! `bip_throttle` (default 32, DIP's ε = 1/32) at MRU, with a per-agent deterministic
//! throttle. An agent's demand misses in its own leader sets train its selector (TADIP-F).

use super::stack_lru::{StackLru, StackRule};
use super::umon::LruStack;
use super::util::{AgentBimodalDuel, Bimodal, PSEL_BITS};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, MissAction, PolicyContext, PolicyStat};
use apusim_trace::{Access, Agent};

/// TADIP: [`StackLru`] with the per-agent duels' insertion.
pub type Tadip = StackLru<TadipDuel>;

/// TADIP's insertion: each agent's duel of MRU insertion and BIP.
pub struct TadipDuel {
    ways: usize,
    duel: AgentBimodalDuel,
}

impl TadipDuel {
    pub fn psel(&self, agent: Agent) -> u32 {
        self.duel.duel().psel(agent).value()
    }
}

/// BIP's throttle: one MRU insertion in 32 (tap §5.7's TADIP, after Jaleel et al. PACT 2008's
/// ε = 1/32).
const BIP_THROTTLE: ParamSpec = ParamSpec {
    name: "bip_throttle",
    kind: ParamKind::Int {
        min: 1,
        max: 1 << 20,
    },
    default: "32",
    unit: "insertions",
    doc: "BIP inserts one line in this many at MRU, the rest at LRU (tap §5.7)",
};

impl StackRule for TadipDuel {
    fn params(list: &mut ParamList) {
        list.add(&[BIP_THROTTLE, PSEL_BITS]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        if ctx.ways > LruStack::MAX_WAYS {
            return Err(CacheError::Config(format!(
                "TADIP serves at most {} ways",
                LruStack::MAX_WAYS
            )));
        }
        let every = ctx.int(&BIP_THROTTLE)?;
        Ok(TadipDuel {
            ways: ctx.ways,
            duel: AgentBimodalDuel::from_ctx(ctx, Bimodal::new(every as u32))?,
        })
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.duel.record_miss(set, req);
        MissAction::Allocate
    }
    #[inline]
    fn insertion(&mut self, set: usize, req: &Access) -> usize {
        if self.duel.inserts_near(set, req.agent) {
            0
        } else {
            self.ways - 1
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let mut s = Vec::new();
        self.duel.push_stats(&mut s, "bip");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Op, Stream};

    /// 64 sets x 4 ways, cpu0 and the GPU: cpu0's LRU-insertion leader is set 0, its BIP
    /// leader set 31; the GPU's are 30 and 29; set 5 follows.
    #[test]
    fn leaders_insert_mru_or_bip_and_train_their_agent() {
        let mut c = cache_of::<Tadip>(64, 4);
        let gpu_read = |l| gpu(Stream::ShaderData, Op::Read, l);
        // cpu0 in its BIP leader: first 31 insertions at LRU (position 3), the 32nd at MRU.
        for i in 0..4u64 {
            run(&mut c, &cpu_read(31 + 64 * i));
        }
        // Fills into an LRU-inserting set: each new line goes to the bottom.
        let p: Vec<usize> = (0..4).map(|w| c.policy().stack_pos(31, w)).collect();
        assert_eq!(p, vec![0, 1, 2, 3], "each fill went to the LRU position");
        assert_eq!(
            run(&mut c, &cpu_read(31 + 64 * 4)),
            Did::Fill(Some(31 + 64 * 3))
        );
        assert_eq!(c.policy().psel(Agent::cpu(0)), 511 - 5);
        // GPU in its MRU leader: MRU insertion, trains the GPU's selector only.
        for i in 0..3u64 {
            run(&mut c, &gpu_read(30 + 64 * i));
        }
        let p: Vec<usize> = (0..3).map(|w| c.policy().stack_pos(30, w)).collect();
        assert_eq!(p, vec![2, 1, 0]);
        assert_eq!(c.policy().psel(Agent::GPU), 514);
        // GPU followers now use BIP (selector MSB set); cpu0 followers LRU insertion.
        run(&mut c, &gpu_read(5));
        run(&mut c, &cpu_read(5 + 64));
        assert_eq!(
            c.policy().stack_pos(5, 0),
            3,
            "GPU follower: BIP, LRU position"
        );
        assert_eq!(c.policy().stack_pos(5, 1), 0, "CPU follower: MRU");
        // Hits go to MRU.
        assert_eq!(run(&mut c, &gpu_read(5)), Did::Hit);
        assert_eq!(c.policy().stack_pos(5, 0), 0);
    }

    /// `bip_throttle` = 2 in cpu0's BIP leader (set 31): LRU, MRU, LRU, MRU insertions.
    /// Stacks by way: [3,0,1,2] -> (way 1 at MRU) same -> (way 2 to LRU) [2,0,3,1] ->
    /// (way 3 to MRU) [2,1,3,0].
    #[test]
    fn bip_throttle_sets_the_mru_fraction() {
        let mut cx = ctx(64, 4);
        cx.params.insert("bip_throttle".into(), 2.0);
        let mut c = cache(64, 4, Tadip::build(&cx).unwrap());
        for i in 0..4u64 {
            run(&mut c, &cpu_read(31 + 64 * i));
        }
        let p: Vec<usize> = (0..4).map(|w| c.policy().stack_pos(31, w)).collect();
        assert_eq!(p, vec![2, 1, 3, 0]);
        cx.params.insert("bip_throttle".into(), 0.0);
        assert!(Tadip::build(&cx).is_err());
    }
}
