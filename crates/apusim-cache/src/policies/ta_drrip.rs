//! Thread-aware DRRIP (TA-DRRIP), drp-reuse-probability-shared-llc.txt §2.1 and §4.1 ("the
//! TADRRIP policy treats the CPU cores and the GPU as different independent threads and lets
//! each thread choose the best insertion RRPV (among two and three) for read misses"), after
//! Jaleel et al. (ISCA 2010) applying TADIP (Jaleel et al., PACT 2008).
//!
//! Every agent (each CPU core, then the GPU: [`apusim_trace::Agent::dense_index`]) has its own
//! 10-bit selector (parameter `psel_bits`) and its own leader sets
//! ([`super::util::AgentBimodalDuel`]: thread `i`'s complement-select leaders, 32 SRRIP and
//! 32 BRRIP per 1024 sets, disjoint between agents for up to 16 agents). An agent's demand misses
//! (op `Read` or `Write`) in its own leader sets train its selector; in every other set —
//! including other agents' leaders — the agent inserts according to its own selector. Each
//! agent has its own bimodal throttle (one long insertion in `brrip_throttle`, default 32, of
//! that agent's BRRIP insertions). Hits set the RRPV to 0; victim selection is SRRIP's.

use super::rrip::{Insertion, Rrip};
use super::util::{AgentBimodalDuel, Bimodal, BRRIP_THROTTLE, PSEL_BITS, RRPV_LONG, RRPV_MAX};
use crate::params::ParamList;
use crate::{CacheError, MissAction, PolicyContext, PolicyStat};
use apusim_trace::{Access, Agent};

/// TA-DRRIP's insertion: each agent's duel of SRRIP's and BRRIP's.
pub struct TaDrripDuel(AgentBimodalDuel);

/// TA-DRRIP: [`Rrip`] with the per-agent duels' insertion.
pub type TaDrrip = Rrip<TaDrripDuel>;

impl TaDrripDuel {
    /// `agent`'s selector value.
    pub fn psel(&self, agent: Agent) -> u32 {
        self.0.duel().psel(agent).value()
    }
    /// True if `agent` inserts like BRRIP in `set` now.
    pub fn uses_brrip(&self, set: usize, agent: Agent) -> bool {
        self.0.duel().policy(set, agent) == 1
    }
}

impl Insertion for TaDrripDuel {
    fn params(list: &mut ParamList) {
        list.add(&[PSEL_BITS, BRRIP_THROTTLE]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let b = Bimodal::from_ctx(ctx)?;
        Ok(TaDrripDuel(AgentBimodalDuel::from_ctx(ctx, b)?))
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.0.record_miss(set, req);
        MissAction::Allocate
    }
    #[inline]
    fn insertion(&mut self, set: usize, req: &Access) -> u8 {
        if self.0.inserts_near(set, req.agent) {
            RRPV_LONG
        } else {
            RRPV_MAX
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let mut s = Vec::new();
        self.0.push_stats(&mut s, "brrip");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Op, Stream};

    // 64 sets x 2 ways, one CPU core and the GPU. cpu0 is thread 0: SRRIP leaders 0, 33,
    // BRRIP leaders 31, 32. The GPU is thread 1 (offset 2 and 3): SRRIP leaders 30 (a=30,
    // b=0) and 63 (a=31, b=1), BRRIP leaders 29 and 62.
    const CPU_SRRIP: u64 = 0;
    const CPU_BRRIP: u64 = 31;
    const GPU_SRRIP: u64 = 30;
    const GPU_BRRIP: u64 = 29;
    const FOLLOWER: u64 = 5;
    const CPU: Agent = Agent::cpu(0);

    fn line(set: u64, i: u64) -> u64 {
        set + 64 * i
    }
    fn gpu_read(l: u64) -> Access {
        gpu(Stream::StaticTexture, Op::Read, l)
    }
    fn rrpv(c: &crate::Cache<TaDrrip>, set: u64, way: usize) -> u8 {
        c.policy().rrpv(set as usize, way)
    }

    #[test]
    fn each_agent_has_its_own_leaders() {
        let c = cache_of::<TaDrrip>(64, 2);
        let p = c.policy();
        for (set, cpu_brrip, gpu_brrip) in [
            (CPU_SRRIP, false, false),
            (CPU_BRRIP, true, false),
            (32, true, false),
            (GPU_SRRIP, false, false),
            (63, false, false),
            (GPU_BRRIP, false, true),
            (62, false, true),
            (FOLLOWER, false, false),
        ] {
            assert_eq!(
                p.uses_brrip(set as usize, CPU),
                cpu_brrip,
                "cpu in set {set}"
            );
            assert_eq!(
                p.uses_brrip(set as usize, Agent::GPU),
                gpu_brrip,
                "gpu in set {set}"
            );
        }
    }

    /// Hand-worked: GPU misses in its SRRIP leaders move only the GPU's selector; the CPU
    /// keeps SRRIP everywhere (including the GPU's leader sets, where it follows its own
    /// selector and does not train); then the CPU's own leaders move the CPU's selector.
    #[test]
    fn replays_hand_worked_duel() {
        let mut c = cache_of::<TaDrrip>(64, 2);
        let psels = |c: &crate::Cache<TaDrrip>| (c.policy().psel(CPU), c.policy().psel(Agent::GPU));
        // GPU miss in its SRRIP leader: GPU selector 512; the leader inserts at 2.
        assert_eq!(run(&mut c, &gpu_read(line(GPU_SRRIP, 0))), Did::Fill(None));
        assert_eq!(psels(&c), (511, 512));
        assert_eq!(rrpv(&c, GPU_SRRIP, 0), 2);
        // GPU follower fill: BRRIP (first GPU bimodal insertion: distant).
        assert_eq!(run(&mut c, &gpu_read(line(FOLLOWER, 0))), Did::Fill(None));
        assert_eq!(rrpv(&c, FOLLOWER, 0), 3);
        // CPU follower fill in the same set: SRRIP.
        assert_eq!(run(&mut c, &cpu_read(line(FOLLOWER, 1))), Did::Fill(None));
        assert_eq!(rrpv(&c, FOLLOWER, 1), 2);
        // CPU misses in the GPU's leaders: no training, CPU's own (SRRIP) insertion.
        assert_eq!(run(&mut c, &cpu_read(line(GPU_SRRIP, 1))), Did::Fill(None));
        assert_eq!(run(&mut c, &cpu_read(line(GPU_BRRIP, 0))), Did::Fill(None));
        assert_eq!(psels(&c), (511, 512));
        assert_eq!((rrpv(&c, GPU_SRRIP, 1), rrpv(&c, GPU_BRRIP, 0)), (2, 2));
        // CPU miss in its own SRRIP leader: CPU selector 512, CPU followers switch.
        assert_eq!(run(&mut c, &cpu_read(line(CPU_SRRIP, 0))), Did::Fill(None));
        assert_eq!(psels(&c), (512, 512));
        // CPU follower miss in set 5 = [3 (gpu), 2 (cpu)]: evicts way 0, inserts distant.
        assert_eq!(
            run(&mut c, &cpu_read(line(FOLLOWER, 2))),
            Did::Fill(Some(line(FOLLOWER, 0)))
        );
        assert_eq!((rrpv(&c, FOLLOWER, 0), rrpv(&c, FOLLOWER, 1)), (3, 2));
        // GPU in the CPU's SRRIP leader follows its own (BRRIP) selector, no training.
        assert_eq!(run(&mut c, &gpu_read(line(CPU_SRRIP, 1))), Did::Fill(None));
        assert_eq!(rrpv(&c, CPU_SRRIP, 1), 3);
        assert_eq!(psels(&c), (512, 512));
        // GPU miss in its BRRIP leader: GPU selector back to 511, GPU followers SRRIP.
        assert_eq!(run(&mut c, &gpu_read(line(GPU_BRRIP, 1))), Did::Fill(None));
        assert_eq!(psels(&c), (512, 511));
        assert!(!c.policy().uses_brrip(FOLLOWER as usize, Agent::GPU));
        assert!(c.policy().uses_brrip(FOLLOWER as usize, CPU));
        let st = c.policy().stats();
        assert!(st.contains(&("psel.cpu0".to_string(), 512.0)));
        assert!(st.contains(&("psel.gpu".to_string(), 511.0)));
    }

    #[test]
    fn bimodal_throttles_are_per_agent() {
        let mut c = cache_of::<TaDrrip>(64, 2);
        // Push both agents to BRRIP.
        run(&mut c, &cpu_read(line(CPU_SRRIP, 0)));
        run(&mut c, &gpu_read(line(GPU_SRRIP, 0)));
        // 31 distant CPU insertions in follower sets 1..=31 except leaders; GPU interleaved.
        let followers: Vec<u64> = (1..64)
            .filter(|s| ![29, 30, 31, 32, 33, 62, 63].contains(s))
            .collect();
        for (i, &s) in followers.iter().take(32).enumerate() {
            run(&mut c, &cpu_read(line(s, 0)));
            run(&mut c, &gpu_read(line(s, 1)));
            let want = if i == 31 { 2 } else { 3 };
            assert_eq!(rrpv(&c, s, 0), want, "cpu insertion {}", i + 1);
            assert_eq!(rrpv(&c, s, 1), want, "gpu insertion {}", i + 1);
        }
    }

    #[test]
    fn four_cpus_and_a_gpu_each_train_alone() {
        let mut ctx = ctx(1024, 2);
        ctx.n_cpus = 4;
        let mut c = cache(1024, 2, TaDrrip::build(&ctx).unwrap());
        // Agent i's SRRIP leader with b = 0 is a = (-2i) mod 32.
        for i in 0..5u8 {
            let agent = if i == 4 { Agent::GPU } else { Agent::cpu(i) };
            let set = (32 - 2 * i as u64) % 32;
            let a = Access::new(agent, Stream::Other, Op::Read, set * LINE, 8);
            run(&mut c, &a);
            for j in 0..5u8 {
                let other = if j == 4 { Agent::GPU } else { Agent::cpu(j) };
                let want = if j <= i { 512 } else { 511 };
                assert_eq!(c.policy().psel(other), want, "after agent {i}, agent {j}");
            }
        }
    }
}
