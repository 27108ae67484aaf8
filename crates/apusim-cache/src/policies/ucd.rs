//! Uncached displayable color (+UCD), gspc-graphics-stream-llc.txt §2.2 and §5.1 (Table 6:
//! GSPC+UCD, DRRIP+UCD; §5.2: "we will also disable caching of displayable color").
//!
//! "The final displayable pixel color values written to the back buffer constitute the
//! displayable color stream", which "does not enjoy any reuse"; +UCD does not cache it. In
//! apusim's stream taxonomy that data is the `display` stream ([`Stream::Display`]): trace
//! producers tag back-buffer (displayable) color writes and the display engine's reads of the
//! finished frame as `display`. [`Ucd<P>`] makes every GPU miss of the `display` stream bypass
//! the LLC (legal: GPU lines are non-inclusive) and hands everything else to the inner policy
//! `P` unchanged.
//!
//! Choice where the paper is silent: a bypassed display miss is invisible to the inner policy
//! (no duel training, no sample-set counter update), as if the displayable color never reached
//! the LLC's replacement logic; a display access that *hits* (a line some other stream brought
//! in) is an ordinary hit of the inner policy. CPU accesses are never bypassed (CPU lines are
//! inclusive). `Ucd<P>` has the write rules of `P`: `drrip-ucd` is wrapped in the
//! heterogeneous write rules when they are on, `gspc-ucd` is not (see [`super::gspc`]).

use super::wrapper::Wrapper;
use crate::{CacheError, MissAction, Policy, PolicyContext, PolicyStat};
use apusim_trace::{Access, Stream};

/// `P` with uncached displayable color.
pub struct Ucd<P> {
    inner: P,
    bypasses: u64,
}

impl<P> Ucd<P> {
    pub fn inner(&self) -> &P {
        &self.inner
    }
    /// Number of display misses bypassed so far.
    pub fn bypasses(&self) -> u64 {
        self.bypasses
    }
}

/// True for the accesses +UCD does not cache.
#[inline]
pub fn is_displayable_color(req: &Access) -> bool {
    req.stream == Stream::Display && req.agent.is_gpu()
}

impl<P: Policy> Wrapper for Ucd<P> {
    type Inner = P;
    fn inner(&self) -> &P {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut P {
        &mut self.inner
    }
    fn wrap(inner: P, _ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(Ucd { inner, bypasses: 0 })
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        if is_displayable_color(req) {
            self.bypasses += 1;
            return MissAction::Bypass;
        }
        self.inner.on_miss(set, req)
    }
    fn extra_stats(&self, s: &mut Vec<PolicyStat>) {
        s.push(("ucd_bypasses".into(), self.bypasses as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::super::drrip::Drrip;
    use super::super::gspc::{Gspc, E0, RT};
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Agent, Op};

    #[test]
    fn display_misses_bypass_everything_else_reaches_the_inner_policy() {
        let mut c = cache_of::<Ucd<Gspc>>(1024, 2);
        // Sample set 33: a bypassed display write leaves the sample counters alone.
        assert_eq!(
            run(&mut c, &gpu(Stream::Display, Op::Write, 33)),
            Did::Bypass
        );
        assert_eq!(
            run(&mut c, &gpu(Stream::Display, Op::Read, 33)),
            Did::Bypass
        );
        assert_eq!(c.policy().inner().bank(0).acc, 0);
        assert!(!c.probe(33 * LINE));
        // Color writes are cached as render targets; a display read then hits.
        assert_eq!(
            run(&mut c, &gpu(Stream::Color, Op::Write, 33)),
            Did::Fill(None)
        );
        assert_eq!(c.policy().inner().state(33, 0), RT);
        assert_eq!(run(&mut c, &gpu(Stream::Display, Op::Read, 33)), Did::Hit);
        assert_eq!(
            c.policy().inner().state(33, 0),
            RT,
            "display read is 'other'"
        );
        assert_eq!(c.policy().inner().bank(0).acc, 2);
        // CPU accesses with the display stream tag (odd, but possible) are not bypassed.
        let cpu = Access::new(Agent::cpu(0), Stream::Display, Op::Read, 5 * LINE, 8);
        assert_eq!(run(&mut c, &cpu), Did::Fill(None));
        assert_eq!(c.policy().inner().state(5, 0), E0);
        let st = c.policy().stats();
        assert!(st.contains(&("ucd_bypasses".to_string(), 2.0)));
    }

    #[test]
    fn drrip_ucd_does_not_train_on_bypassed_display_misses() {
        let mut c = cache_of::<Ucd<Drrip>>(64, 2);
        // Set 0 is an SRRIP leader: a display miss there does not move the selector.
        run(&mut c, &gpu(Stream::Display, Op::Read, 0));
        assert_eq!(c.policy().inner().psel(), 511);
        run(&mut c, &gpu(Stream::Color, Op::Read, 0));
        assert_eq!(c.policy().inner().psel(), 512);
    }
}
