//! Every replacement policy, one file each, registered by name in [`REGISTRY`].
//!
//! To add a policy: write `policies/<name>.rs` with a type implementing [`crate::Policy`]
//! (declaring the parameters it reads in [`crate::Policy::params`], see [`crate::params`]),
//! add `pub mod <name>;` below and one line to the `registry!` invocation. Nothing else
//! changes: the CLI's `apusim policies` and `apusim describe`, `--policy NAME`, parameter
//! validation ([`check_params`]) and the simulation loop all go through here.

pub mod brrip;
pub mod champsim_rrip;
pub mod core_sampling;
pub mod drp;
pub mod drp_baseline;
pub mod drrip;
pub mod gs_drrip;
pub mod gspc;
pub mod helm;
pub mod hetero_writes;
pub mod l1_bypass;
#[cfg(test)]
pub(crate) mod layout_tests;
pub mod lru;
pub mod nru;
pub mod pipp;
pub mod plru;
pub mod random;
pub mod rrip;
pub mod ship;
pub mod ship_hybrid;
pub mod ship_mem;
pub mod ship_pc;
pub mod srrip;
pub mod stack_lru;
pub mod static_part;
pub mod ta_drrip;
pub mod tadip;
pub mod tap_rrip;
pub mod thrasher_caging;
pub mod ucd;
pub mod ucp;
pub mod umon;
pub mod util;
mod validate;
pub mod wrapper;

pub use validate::{allowed_params, check_params, params_for};

use crate::params::ParamList;
use crate::{CacheError, Policy, PolicyContext};
use apusim_registry::Entry;
use std::sync::LazyLock;

/// A registered policy: name, description, paper, declared parameters ([`Entry`]).
pub type PolicyEntry = Entry<PolicyBuild>;

/// The constructor slot of a policy's [`Entry`]. Policies are built by [`build`], which
/// dispatches on the name to a concrete type (the cache engine is generic over it); the slot
/// holds what checking a configuration needs beyond the declared parameters.
#[derive(Clone, Copy, Debug)]
pub struct PolicyBuild {
    /// The policy implements the heterogeneous baseline's write rules itself
    /// ([`Policy::OWN_WRITE_RULES`]): `llc.gpu_write_rules` adds no [`hetero_writes::HeteroWrites`]
    /// wrapper, so none of the wrapper's parameters.
    pub own_write_rules: bool,
}

/// The registry entry of policy type `P`.
fn entry<P: Policy>(
    name: &'static str,
    description: &'static str,
    paper: &'static str,
) -> PolicyEntry {
    let mut list = ParamList::new();
    P::params(&mut list);
    Entry {
        name,
        description,
        paper,
        // Built once per process, for the life of the process (an `Entry` holds a static
        // slice).
        params: Box::leak(list.specs().to_vec().into_boxed_slice()),
        build: PolicyBuild {
            own_write_rules: P::OWN_WRITE_RULES,
        },
    }
}

/// The caller's code, instantiated for one concrete policy type.
pub trait PolicyVisitor {
    type Output;
    fn visit<P: Policy>(self, policy: P) -> Self::Output;
}

macro_rules! registry {
    ($($name:literal => $ty:ty, $desc:literal, $src:literal;)+) => {
        /// All registered policies, in listing order.
        pub static REGISTRY: LazyLock<Vec<PolicyEntry>> =
            LazyLock::new(|| vec![$(entry::<$ty>($name, $desc, $src)),+]);

        /// Build the policy called `name` for `ctx` and run `visitor` with it. When
        /// `ctx.gpu_write_rules` is set, policies that do not implement the heterogeneous
        /// baseline's write rules themselves are wrapped in [`hetero_writes::HeteroWrites`]. A
        /// parameter in `ctx.params` that the policy (with its wrapper) does not declare is
        /// refused ([`check_params`]).
        pub fn build<V: PolicyVisitor>(
            name: &str,
            ctx: &PolicyContext,
            visitor: V,
        ) -> Result<V::Output, CacheError> {
            if info(name).is_none() {
                return Err(unknown(name));
            }
            check_params(&[name], &ctx.params, ctx.gpu_write_rules)?;
            match name {
                $($name => visit_with::<$ty, V>(ctx, visitor),)+
                _ => Err(unknown(name)),
            }
        }
    };
}

fn visit_with<P: Policy, V: PolicyVisitor>(
    ctx: &PolicyContext,
    visitor: V,
) -> Result<V::Output, CacheError> {
    let policy = P::build(ctx)?;
    if ctx.gpu_write_rules && !P::OWN_WRITE_RULES {
        Ok(visitor.visit(hetero_writes::HeteroWrites::wrap(policy, ctx)?))
    } else {
        Ok(visitor.visit(policy))
    }
}

fn unknown(name: &str) -> CacheError {
    match apusim_registry::find(&REGISTRY, "policy", name) {
        Err(e) => CacheError::Config(e.to_string()),
        Ok(_) => CacheError::Config(format!("policy `{name}` has no constructor")),
    }
}

/// The registry entry of policy `name`.
pub fn info(name: &str) -> Option<&'static PolicyEntry> {
    REGISTRY.iter().find(|p| p.name == name)
}

/// The baseline policies (drp-reuse-probability-shared-llc.txt §4.1 and the classics): the
/// demo's default comparison, and what `baselines` stands for in a policy list.
pub const BASELINES: &[&str] = &[
    "drp-baseline",
    "lru",
    "random",
    "nru",
    "srrip",
    "brrip",
    "drrip",
    "ta-drrip",
    "ship-pc",
    "ship-mem",
    "ship-hybrid",
];

/// A policy list as users give it (`--policy`, the Python bindings' `policy=`), with `all`
/// expanded to every registered policy and `baselines` to [`BASELINES`]; each name once, in
/// first-appearance order. Names are not checked here (the run refuses unknown ones).
pub fn expand_names<S: AsRef<str>>(list: &[S]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        if !out.iter().any(|x| x == n) {
            out.push(n.to_string());
        }
    };
    for n in list {
        match n.as_ref() {
            "all" => REGISTRY.iter().for_each(|p| push(p.name)),
            "baselines" => BASELINES.iter().for_each(|n| push(n)),
            other => push(other),
        }
    }
    out
}

registry! {
    "lru" => lru::Lru, "true least-recently-used", "drp §6.1 (the comparator; classic LRU)";
    "plru" => plru::Plru, "tree pseudo-LRU (ways - 1 bits per set)", "adaptive-gpu-l1-bypassing §4.1 (all caches use pseudo-LRU)";
    "random" => random::Random, "uniformly random victim from a seeded SplitMix64", "drp §2.1 (context; classic random replacement)";
    "nru" => nru::Nru, "single-bit not-recently-used, lowest-way victim", "drp §4.1 (NRU)";
    "srrip" => srrip::Srrip, "static RRIP, 2-bit RRPV, insert at 2", "drp §2.1 (RRIP, Jaleel et al. ISCA 2010)";
    "champsim-rrip" => champsim_rrip::ChampSimRrip, "RRIP as ChampSim's srrip/drrip/ship modules run (fills never update: every line enters at RRPV 3)", "champsim inc/cache.h § replacement_module_model at commit 2ff25011 (validation against ChampSim)";
    "brrip" => brrip::Brrip, "bimodal RRIP: insert at 3, one in 32 at 2", "drp §2.1 (RRIP, Jaleel et al. ISCA 2010)";
    "drrip" => drrip::Drrip, "set dueling between SRRIP and BRRIP insertion, 10-bit PSEL", "drp §2.1, §4.1 (DRRIP)";
    "ta-drrip" => ta_drrip::TaDrrip, "thread-aware DRRIP: one duel per CPU core and the GPU", "drp §2.1, §4.1 (TADRRIP)";
    "ship-pc" => ship_pc::ShipPc, "SHiP with PC-and-core signatures, 16K 3-bit counters", "drp §2.1, §4.1 (SHiP-PC, Wu et al. MICRO 2011)";
    "ship-mem" => ship_mem::ShipMem, "SHiP with 16 KB memory-region signatures (address bits 27:14)", "drp §4.1 (SHiP-mem)";
    "ship-mem-bank" => ship_mem::ShipMemBank, "SHiP-mem with one 16K-entry table per LLC bank (llc.banks)", "gspc §5.1 (SHiP-mem, Figure 12)";
    "ship-hybrid" => ship_hybrid::ShipHybrid, "SHiP-PC for CPU accesses, SHiP-mem for GPU accesses, one table", "drp §4.1 (SHiP-hybrid)";
    "drp-baseline" => drp_baseline::DrpBaseline, "heterogeneous baseline: SRRIP plus GPU write bypass rules and depth-write duel", "drp §4.1 (Baseline)";
    "drp-rm" => drp::DrpReadMiss, "DRP ablation: read-miss sub-policy only (SHiP-PC for CPU, DRRIP insertion for GPU), baseline writes", "drp §5.2, §6 (Figure 14)";
    "drp-rm-rh" => drp::DrpReadMissHit, "DRP ablation: read miss + read hit (dynamic-texture demotion from the WSS cache)", "drp §5.2, §5.5, §6 (Figure 14)";
    "drp" => drp::DrpAll, "dynamic reuse probability: WSS cache, read/write miss/hit sub-policies, pinning", "drp §5.1-5.6";
    "drrip4" => gs_drrip::GsDrrip<false, 4>, "DRRIP with 4-bit RRPVs (insert 14 / bimodal 15), the iso-overhead comparator", "gspc §5.2 (Figure 14)";
    "drrip-ucd" => ucd::Ucd<drrip::Drrip>, "DRRIP with uncached displayable color (display-stream misses bypass)", "gspc §5.1 (Table 6, DRRIP+UCD)";
    "gs-drrip" => gs_drrip::GsDrrip<true, 2>, "graphics stream-aware DRRIP: one SRRIP/BRRIP duel per stream class (Z, texture, render target, rest)", "gspc §3 (GS-DRRIP), Table 6";
    "gs-drrip4" => gs_drrip::GsDrrip<true, 4>, "GS-DRRIP with 4-bit RRPVs, the iso-overhead comparator", "gspc §5.2 (Figure 14)";
    "gs-drrip-ucd" => ucd::Ucd<gs_drrip::GsDrrip<true, 2>>, "GS-DRRIP with uncached displayable color", "gspc §5.2 (GS-DRRIP+UCD)";
    "gspztc" => gspc::Gspztc, "probabilistic Z and texture caching: SRRIP samples, per-bank FILL/HIT counters, FILL > t*HIT", "gspc §3, Tables 2-3";
    "gspztc-tse" => gspc::GspztcTse, "GSPZTC with texture sampler epochs (two state bits per line)", "gspc §3, Tables 2-4, Figure 10";
    "gspc" => gspc::Gspc, "graphics stream-aware probabilistic caching: GSPZTC+TSE plus render-target PROD/CONS insertion", "gspc §3, Tables 2-5";
    "gspc-ucd" => ucd::Ucd<gspc::Gspc>, "GSPC with uncached displayable color", "gspc §5.1 (Table 6, GSPC+UCD)";
    "nru-ucd" => ucd::Ucd<nru::Nru>, "NRU with uncached displayable color", "gspc §5.1 (UCD), drp §4.1 (NRU)";
    "ucp" => ucp::PlainUcp, "utility-based cache partitioning: per-agent UMONs on 32 sets per 1K, look-ahead way targets per period", "tap §2.3.1, Appendix A (UCP, Qureshi and Patt MICRO 2006)";
    "static-part" => static_part::StaticPartition, "static CPU/GPU way partitioning (half the ways each by default), LRU within", "tap §5.5";
    "tap-ucp" => ucp::TapUcp, "TLP-aware UCP: core sampling (POL1 bypasses), UCP-Mask, XSRATIO-normalized GPU utility", "tap §3.1, §3.2, §3.3, Algorithm 1";
    "tap-rrip" => tap_rrip::TapRripBase, "TLP-aware RRIP: TA-DRRIP plus core sampling (POL1 LRU / POL2 MRU insertion), RRIP-Mask forcing GPU BRRIP, GPU-first victims", "tap §3.1, §3.2, §3.4, Table 3";
    "tap-rrip-s" => tap_rrip::TapRripS, "TAP-RRIP plus streaming-CPU detection: a streaming core resets RRIP-Mask", "tap §5.3 (TAP-S)";
    "tadip" => tadip::Tadip, "thread-aware DIP: per-agent duel of MRU insertion vs BIP (LRU position, 1/32 MRU), true LRU", "tap §5.7 (TADIP, Jaleel et al. PACT 2008)";
    "pipp" => pipp::Pipp, "promotion/insertion pseudo-partitioning: insert at the UCP allocation, promote one step (p 3/4, streaming 1/128)", "tap §2.3.2, §5.7 (PIPP, Xie and Loh ISCA 2009)";
    "tc" => thrasher_caging::ThrasherCaging, "thrasher caging: streaming/thrashing agents share a cage of one way per thrasher, LRU", "tap §2.3.1, §5.7 (TC, Xie and Loh HiPEAC 2010)";
    "helm" => helm::Helm, "HeLM: GPU read misses bypass when the CPU is LLC-sensitive and the GPU latency-tolerant (ready warps), two sampled cores at low/high bypass rates; SRRIP", "drp §2.2, §6.1 (HeLM, Mekkat et al. PACT 2013)";
    "tap-ucp-s" => ucp::TapUcpS, "TAP-UCP plus streaming-CPU detection: a streaming core gets one way", "tap §5.3 (TAP-S)";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cache, Geometry, WritePolicy};
    use apusim_trace::{Access, Agent, Op, Stream};
    use proptest::prelude::*;

    /// Reports what the registry built: the type's name, whether it carries write rules,
    /// and its statistics.
    struct Describe;
    impl PolicyVisitor for Describe {
        type Output = (&'static str, bool, Vec<crate::PolicyStat>);
        fn visit<P: Policy>(self, p: P) -> Self::Output {
            (std::any::type_name::<P>(), P::OWN_WRITE_RULES, p.stats())
        }
    }

    /// Policies that implement their own write handling (never wrapped).
    const OWN_RULES: &[&str] = &[
        "drp-baseline",
        "drp-rm",
        "drp-rm-rh",
        "drp",
        "gspztc",
        "gspztc-tse",
        "gspc",
        "gspc-ucd",
    ];
    /// The GPU-only-LLC policies of gspc-graphics-stream-llc.txt §3 that handle writes
    /// themselves (so they carry no depth-write duel).
    const GPU_ONLY: &[&str] = &["gspztc", "gspztc-tse", "gspc", "gspc-ucd"];

    fn llc_ctx(rules: bool) -> PolicyContext {
        let g = Geometry::new(16 << 20, 16, 64);
        let mut c = PolicyContext::for_geometry(&g);
        c.n_cpus = 4;
        c.gpu_write_rules = rules;
        c
    }

    #[test]
    fn every_policy_builds_for_a_16mb_llc_with_and_without_write_rules() {
        assert_eq!(REGISTRY[0].name, "lru");
        let mut names: Vec<&str> = REGISTRY.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len(), "duplicate names");
        for info in REGISTRY.iter() {
            assert!(
                !info.description.is_empty() && info.paper.contains('§'),
                "{}",
                info.name
            );
            let (plain, own, _) = build(info.name, &llc_ctx(false), Describe).unwrap();
            let (ruled, wrapped, stats) = build(info.name, &llc_ctx(true), Describe).unwrap();
            assert!(wrapped, "{}: write rules missing", info.name);
            if !GPU_ONLY.contains(&info.name) {
                assert!(
                    stats.iter().any(|(k, _)| k == "depth_psel"),
                    "{}",
                    info.name
                );
            }
            if OWN_RULES.contains(&info.name) {
                assert!(own, "{}", info.name);
                assert_eq!(plain, ruled, "{} must not be wrapped", info.name);
            } else {
                assert!(!own, "{}", info.name);
                assert!(ruled.contains("HeteroWrites"), "{}: {ruled}", info.name);
                assert!(!plain.contains("HeteroWrites"), "{}: {plain}", info.name);
            }
            assert_eq!(info.name, super::info(info.name).unwrap().name);
        }
        for n in [
            "lru",
            "random",
            "nru",
            "srrip",
            "brrip",
            "drrip",
            "ta-drrip",
            "ship-pc",
            "ship-mem",
            "ship-mem-bank",
            "ship-hybrid",
            "drp-baseline",
            "drp-rm",
            "drp-rm-rh",
            "drp",
            "drrip4",
            "drrip-ucd",
            "gs-drrip",
            "gs-drrip4",
            "gs-drrip-ucd",
            "gspztc",
            "gspztc-tse",
            "gspc",
            "gspc-ucd",
            "nru-ucd",
            "ucp",
            "static-part",
            "tap-ucp",
            "tap-rrip",
            "tap-rrip-s",
            "tadip",
            "pipp",
            "tc",
            "helm",
            "tap-ucp-s",
        ] {
            assert!(super::info(n).is_some(), "{n} not registered");
        }
    }

    /// The TAP paper's LLC (Table 4: 8 MB, 32 ways, 64-byte lines) with four CPU cores.
    #[test]
    fn every_policy_builds_for_the_tap_8mb_32way_llc_with_4_cpus() {
        let g = Geometry::new(8 << 20, 32, 64);
        for rules in [false, true] {
            let mut c = PolicyContext::for_geometry(&g);
            c.n_cpus = 4;
            c.gpu_write_rules = rules;
            assert_eq!(c.sets, 4096);
            for info in REGISTRY.iter() {
                let r = build(info.name, &c, Describe);
                assert!(r.is_ok(), "{} (rules {rules}): {:?}", info.name, r.err());
            }
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = build("lfu-ish", &llc_ctx(false), Describe).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("lfu-ish"), "{msg}");
        for info in REGISTRY.iter() {
            assert!(msg.contains(info.name), "{msg} lacks {}", info.name);
        }
        assert!(super::info("lfu-ish").is_none());
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let mut c = llc_ctx(false);
        c.params.insert("psel_bits".into(), 0.0);
        assert!(build("drrip", &c, Describe).is_err());
        assert!(build("ta-drrip", &c, Describe).is_err());
        let mut c = llc_ctx(true);
        c.params.insert("depth_psel_bits".into(), 2.5);
        assert!(build("srrip", &c, Describe).is_err());
        assert!(build("drp-baseline", &c, Describe).is_err());
    }

    /// Runs a stream through a cache of the visited policy and checks the engine's books.
    struct Replay<'a> {
        geometry: Geometry,
        inclusive: bool,
        stream: &'a [Access],
    }
    impl PolicyVisitor for Replay<'_> {
        type Output = Result<(), String>;
        fn visit<P: Policy>(self, p: P) -> Self::Output {
            let mut c = Cache::new(self.geometry, WritePolicy::default(), self.inclusive, p)
                .map_err(|e| e.to_string())?;
            for (i, a) in self.stream.iter().enumerate() {
                // A bad victim or an inclusion violation surfaces as an error here.
                c.access(a).map_err(|e| format!("access {i}: {e}"))?;
                let n = c.counters();
                if n.hits + n.misses != i as u64 + 1 {
                    return Err(format!("access {i}: hits + misses != accesses"));
                }
            }
            let n = *c.counters();
            if n.fills + n.bypasses != n.misses {
                return Err(format!("fills + bypasses != misses: {n:?}"));
            }
            if c.occupancy() as u64 != n.fills - n.evictions {
                return Err(format!("occupancy {} vs {n:?}", c.occupancy()));
            }
            let _ = c.policy().stats();
            Ok(())
        }
    }

    fn access_strategy() -> impl Strategy<Value = Access> {
        (
            0u8..6,
            0usize..Stream::COUNT,
            0usize..Op::COUNT,
            0u64..96,
            0u64..64,
        )
            .prop_map(|(agent, stream, op, line, pc)| {
                let agent = if agent == 5 {
                    Agent::GPU
                } else {
                    Agent::cpu(agent)
                };
                let stream = if agent.is_cpu() {
                    if stream & 1 == 0 {
                        Stream::CpuData
                    } else {
                        Stream::CpuInstr
                    }
                } else {
                    Stream::ALL[stream]
                };
                // Lines spread over 16 KB regions too (line * 257 crosses region bits).
                Access::new(agent, stream, Op::ALL[op], line * 257 * 64, 8).with_pc(pc * 4)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn every_policy_keeps_the_engine_consistent(
            stream in prop::collection::vec(access_strategy(), 1..400),
            sets_log in 0u32..5,
            ways in 1u32..6,
            rules in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let sets = 1u64 << sets_log;
            let geometry = Geometry::new(sets * ways as u64 * 64, ways, 64);
            let mut ctx = PolicyContext::for_geometry(&geometry);
            ctx.n_cpus = 5; // agent ids 0..5 are cores, plus the GPU
            ctx.seed = seed;
            ctx.gpu_write_rules = rules;
            for info in REGISTRY.iter() {
                let r = build(info.name, &ctx, Replay { geometry, inclusive: true, stream: &stream })
                    .map_err(|e| e.to_string())
                    .and_then(|r| r);
                prop_assert!(r.is_ok(), "{} (rules {}): {:?}", info.name, rules, r);
            }
        }
    }
}
