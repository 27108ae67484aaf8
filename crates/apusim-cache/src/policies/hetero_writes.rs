//! [`HeteroWrites`]: the heterogeneous baseline's GPU write rules of drp §4.1, applied on top
//! of any LLC policy (the registry adds it for `llc.gpu_write_rules`; `drp-baseline` is SRRIP
//! inside it). Its depth-write bypass duel uses [`SetSampler::spare_leader`]'s groups, beside
//! the RRIP duels' leaders.

use super::util::{Psel, SetSampler};
use super::wrapper::Wrapper;
use crate::params::{ParamKind, ParamSpec};
use crate::{CacheError, MissAction, Policy, PolicyContext, PolicyStat};
use apusim_trace::{Access, Op, Stream};

/// Width of [`HeteroWrites`]' depth-write duel selector: 10 bits
/// (drp-reuse-probability-shared-llc.txt §4.1).
pub const DEPTH_PSEL_BITS: ParamSpec = ParamSpec {
    name: "depth_psel_bits",
    kind: ParamKind::Int { min: 1, max: 16 },
    default: "10",
    unit: "bits",
    doc: "width of the GPU depth-write allocate/bypass duel's selector (drp §4.1)",
};

/// The parameters [`HeteroWrites`] adds to the policy it wraps.
pub const WRITE_RULE_PARAMS: &[ParamSpec] = &[DEPTH_PSEL_BITS];

/// The heterogeneous baseline's write rules (drp-reuse-probability-shared-llc.txt §4.1) on
/// top of an inner policy, which keeps serving reads and replacements.
///
/// - Reads (and prefetches) pass through unchanged.
/// - GPU write misses (op `Write` or `Writeback` from [`apusim_trace::Agent::GPU`]) of the color, blitter
///   and shader-data streams are handed to the inner policy exactly like a read miss (its
///   `on_miss`, then `on_fill` with the unchanged access).
/// - GPU depth write misses follow the depth-write bypass duel: in the 8-per-1K "always
///   allocate" sets they are handed to the inner policy, in the 8-per-1K "always bypass" sets
///   they bypass; every other set bypasses them iff the always-bypass group has suffered
///   fewer read misses (op `Read`, any agent) than the always-allocate group, as tracked by a
///   10-bit selector (parameter `depth_psel_bits`; ties allocate). The groups are
///   [`SetSampler::spare_leader`] groups 0 (allocate) and 1 (bypass), disjoint from the RRIP
///   duel leaders.
/// - All other GPU write misses (vertex, index, HiZ, stencil, texture, display, ...) bypass.
/// - CPU write misses are handed to the inner policy (the LLC keeps CPU lines inclusive).
/// - Write hits (op `Write` or `Writeback`, any agent) do not update replacement state: the
///   inner policy's `on_hit` is not called (the engine still marks the line dirty).
pub struct HeteroWrites<P> {
    inner: P,
    sampler: SetSampler,
    depth_psel: Psel,
    gpu_write_bypasses: u64,
    depth_write_bypasses: u64,
    depth_write_allocations: u64,
    write_hits: u64,
}

impl<P: Policy> HeteroWrites<P> {
    /// Wrap `inner`, built for the same `ctx`.
    pub fn wrap(inner: P, ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(HeteroWrites {
            inner,
            sampler: SetSampler::new(ctx.sets),
            depth_psel: Psel::from_ctx(ctx, &DEPTH_PSEL_BITS)?,
            gpu_write_bypasses: 0,
            depth_write_bypasses: 0,
            depth_write_allocations: 0,
            write_hits: 0,
        })
    }
    pub fn inner(&self) -> &P {
        &self.inner
    }
    /// The depth-duel selector (high: the always-allocate group misses more).
    pub fn depth_psel(&self) -> &Psel {
        &self.depth_psel
    }
    /// The depth-duel group of `set`: `Some(false)` always allocates depth write misses,
    /// `Some(true)` always bypasses them, `None` follows the selector.
    pub fn depth_leader(&self, set: usize) -> Option<bool> {
        self.sampler.spare_leader(set).map(|g| g == 1)
    }
    /// True if a depth write miss in `set` would allocate now.
    #[inline]
    pub fn depth_allocates(&self, set: usize) -> bool {
        match self.sampler.spare_leader(set) {
            Some(g) => g == 0,
            None => self.depth_psel.choice() == 0,
        }
    }
}

impl<P: Policy> Wrapper for HeteroWrites<P> {
    type Inner = P;
    fn inner(&self) -> &P {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut P {
        &mut self.inner
    }
    fn wrap(inner: P, ctx: &PolicyContext) -> Result<Self, CacheError> {
        HeteroWrites::wrap(inner, ctx)
    }
    const PARAMS: &'static [ParamSpec] = WRITE_RULE_PARAMS;
    const OWN_WRITE_RULES: bool = true;

    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        if req.op.is_write() {
            self.write_hits += 1;
        } else {
            self.inner.on_hit(set, way, req);
        }
    }

    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        match req.op {
            Op::Read => {
                if let Some(g) = self.sampler.spare_leader(set) {
                    self.depth_psel.record_miss(g);
                }
            }
            Op::Write | Op::Writeback if req.agent.is_gpu() => match req.stream {
                Stream::Color | Stream::Blitter | Stream::ShaderData => {}
                Stream::Depth => {
                    if self.depth_allocates(set) {
                        self.depth_write_allocations += 1;
                    } else {
                        self.depth_write_bypasses += 1;
                        self.gpu_write_bypasses += 1;
                        return MissAction::Bypass;
                    }
                }
                _ => {
                    self.gpu_write_bypasses += 1;
                    return MissAction::Bypass;
                }
            },
            _ => {}
        }
        self.inner.on_miss(set, req)
    }

    fn extra_stats(&self, s: &mut Vec<PolicyStat>) {
        s.push(("depth_psel".into(), self.depth_psel.value() as f64));
        s.push((
            "depth_followers_bypass".into(),
            self.depth_psel.choice() as f64,
        ));
        s.push(("gpu_write_bypasses".into(), self.gpu_write_bypasses as f64));
        s.push((
            "depth_write_bypasses".into(),
            self.depth_write_bypasses as f64,
        ));
        s.push((
            "depth_write_allocations".into(),
            self.depth_write_allocations as f64,
        ));
        s.push(("write_hits_ignored".into(), self.write_hits as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::srrip::Srrip;
    use crate::policies::util::test_support::*;
    use crate::policies::util::RRPV_LONG;
    use crate::{Cache, WritePolicy};
    use apusim_trace::Agent;

    fn hetero(sets: usize, ways: usize) -> Cache<HeteroWrites<Srrip>> {
        let c = ctx(sets, ways);
        let p = HeteroWrites::wrap(Srrip::build(&c).unwrap(), &c).unwrap();
        cache(sets, ways, p)
    }
    /// RRPV of `way` in the set of `line`.
    fn rrpv(c: &Cache<HeteroWrites<Srrip>>, line: u64, way: usize) -> u8 {
        c.policy().inner().rrpv(c.set_of(line), way)
    }

    #[test]
    fn color_blitter_shader_writes_allocate_like_reads_others_bypass() {
        let mut c = hetero(64, 4);
        for (i, s) in [Stream::Color, Stream::Blitter, Stream::ShaderData]
            .iter()
            .enumerate()
        {
            for (j, op) in [Op::Write, Op::Writeback].iter().enumerate() {
                // Each in its own (empty) set, so it lands in way 0.
                let line = 5 + (2 * i + j) as u64;
                assert_eq!(
                    run(&mut c, &gpu(*s, *op, line)),
                    Did::Fill(None),
                    "{s} {op}"
                );
                assert_eq!(
                    rrpv(&c, line, 0),
                    RRPV_LONG,
                    "{s} {op} inserted like a read"
                );
                assert!(c.meta_of(line * LINE).unwrap().dirty());
            }
        }
        for s in Stream::ALL {
            if matches!(
                s,
                Stream::Color | Stream::Blitter | Stream::ShaderData | Stream::Depth
            ) {
                continue;
            }
            for op in [Op::Write, Op::Writeback] {
                assert_eq!(run(&mut c, &gpu(*s, op, 40)), Did::Bypass, "{s} {op}");
            }
            // GPU reads of the same streams allocate.
            let line = 20 + s.to_byte() as u64;
            assert_eq!(run(&mut c, &gpu(*s, Op::Read, line)), Did::Fill(None));
            assert_eq!(rrpv(&c, line, 0), RRPV_LONG);
        }
        assert!(!c.probe(40 * LINE));
        let st = c.policy().stats();
        let get = |k: &str| st.iter().find(|(n, _)| n == k).unwrap().1;
        assert_eq!(get("gpu_write_bypasses"), 2.0 * 11.0);
    }

    #[test]
    fn cpu_write_misses_allocate_in_an_inclusive_cache() {
        let c = ctx(64, 2);
        let p = HeteroWrites::wrap(Srrip::build(&c).unwrap(), &c).unwrap();
        let mut cache = Cache::new(geometry(64, 2), WritePolicy::default(), true, p).unwrap();
        for (i, op) in [Op::Write, Op::Writeback].iter().enumerate() {
            let a = Access::new(
                Agent::cpu(0),
                Stream::CpuData,
                *op,
                (3 + 64 * i as u64) * LINE,
                8,
            );
            assert_eq!(run(&mut cache, &a), Did::Fill(None));
        }
        assert_eq!(cache.counters().bypasses, 0);
    }

    #[test]
    fn write_hits_leave_replacement_state_alone() {
        let mut c = hetero(64, 4);
        run(&mut c, &cpu_read(3));
        assert_eq!(rrpv(&c, 3, 0), 2);
        for op in [Op::Write, Op::Writeback] {
            let w = Access::new(Agent::cpu(0), Stream::CpuData, op, 3 * LINE, 8);
            assert_eq!(run(&mut c, &w), Did::Hit);
            assert_eq!(rrpv(&c, 3, 0), 2, "{op} hit changed the RRPV");
            assert_eq!(run(&mut c, &gpu(Stream::Color, op, 3)), Did::Hit);
            assert_eq!(rrpv(&c, 3, 0), 2);
        }
        assert!(c.meta_of(3 * LINE).unwrap().dirty());
        assert_eq!(run(&mut c, &cpu_read(3)), Did::Hit);
        assert_eq!(rrpv(&c, 3, 0), 0, "read hits still promote");
        let st = c.policy().stats();
        assert!(st
            .iter()
            .any(|(k, v)| k == "write_hits_ignored" && *v == 4.0));
    }

    #[test]
    fn depth_write_duel_goes_both_ways() {
        // 1024 sets: allocate group contains set 1 (a=1, b=0), bypass group set 67 (a=3, b=2).
        let mut c = hetero(1024, 2);
        let alloc_leader = 1u64;
        let bypass_leader = 67u64;
        let follower = 5u64;
        assert_eq!(c.policy().depth_leader(1), Some(false));
        assert_eq!(c.policy().depth_leader(67), Some(true));
        assert_eq!(c.policy().depth_leader(5), None);
        let depth = |l: u64| gpu(Stream::Depth, Op::Write, l);
        // Initially (ties) followers allocate depth writes.
        assert_eq!(run(&mut c, &depth(follower)), Did::Fill(None));
        assert_eq!(run(&mut c, &depth(bypass_leader)), Did::Bypass);
        assert_eq!(run(&mut c, &depth(alloc_leader)), Did::Fill(None));
        // Read misses only count: write misses in leaders left the selector alone.
        assert_eq!(c.policy().depth_psel().value(), 511);
        // One read miss in the always-allocate group: it now has more read misses than the
        // always-bypass group, so followers bypass.
        assert_eq!(run(&mut c, &cpu_read(alloc_leader + 1024)), Did::Fill(None));
        assert_eq!(c.policy().depth_psel().value(), 512);
        assert_eq!(run(&mut c, &depth(follower + 1024)), Did::Bypass);
        // Leaders keep their fixed behaviour whatever the selector says.
        assert_eq!(
            run(&mut c, &depth(alloc_leader + 2048)),
            Did::Fill(Some(alloc_leader))
        );
        assert_eq!(run(&mut c, &depth(bypass_leader + 1024)), Did::Bypass);
        // GPU read misses in the always-bypass group count too: one flips it back.
        run(&mut c, &gpu(Stream::StaticTexture, Op::Read, bypass_leader));
        assert_eq!(c.policy().depth_psel().value(), 511);
        assert_eq!(run(&mut c, &depth(follower + 2048)), Did::Fill(None));
        // Writebacks and prefetches are not read misses.
        let mut pf = cpu_read(alloc_leader + 4096);
        pf.op = Op::Prefetch;
        run(&mut c, &pf);
        run(
            &mut c,
            &gpu(Stream::Color, Op::Writeback, alloc_leader + 5120),
        );
        assert_eq!(c.policy().depth_psel().value(), 511);
        let st = c.policy().stats();
        let get = |k: &str| st.iter().find(|(n, _)| n == k).unwrap().1;
        assert_eq!(get("depth_write_bypasses"), 3.0);
        assert_eq!(get("depth_write_allocations"), 4.0);
        assert!(st.iter().any(|(k, _)| k == "depth_psel"));
    }
}
