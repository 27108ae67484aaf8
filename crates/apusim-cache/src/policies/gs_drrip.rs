//! Graphics stream-aware DRRIP (GS-DRRIP) and the iso-overhead n-bit DRRIP comparators of
//! gspc-graphics-stream-llc.txt §3 (the paragraph after Table 3) and §5.2 (Figure 14).
//!
//! GS-DRRIP is "derived from the thread-aware DRRIP policy, which uses set-dueling to decide
//! between the insertion RRPVs of two and three for each of the four streams": the four
//! graphics stream classes of §3 ([`super::gspc::GraphicsClass`]: Z, texture sampler, render
//! target, the rest) play the role of TA-DRRIP's threads. Class `c` owns its own leader sets
//! (sampler thread `c` of [`SetSampler`]: 32 SRRIP and 32 BRRIP leaders per 1024 sets, the
//! same complement-select rule as `ta-drrip`) and its own 10-bit selector (parameter
//! `psel_bits`); a demand miss (op `Read` or `Write`) of class `c` in one of class `c`'s
//! leaders trains class `c`'s selector; a fill of class `c` inserts with class `c`'s leader
//! policy in its leaders and with its selector's choice elsewhere. BRRIP insertions use one
//! bimodal throttle per class (parameter `brrip_throttle`, one long insertion in 32).
//!
//! The RRPV width is the const parameter `BITS`: with n bits, SRRIP inserts at `2^n - 2`,
//! BRRIP at `2^n - 1` (one in 32 at `2^n - 2`), a hit sets 0 and the victim is the lowest way
//! at `2^n - 1` after aging (drp-reuse-probability-shared-llc.txt §2.1's definition). With
//! `GS = false` there is one class and this is plain DRRIP (identical, decision for decision,
//! to [`super::drrip::Drrip`] at 2 bits — a test checks it), which gives the §5.2 four-bit
//! DRRIP comparator `drrip4`. Registered: `gs-drrip` (2-bit), `gs-drrip4`, `drrip4`.
//!
//! Like `drrip` and `ta-drrip`, these policies do not implement the heterogeneous write rules
//! themselves, so with `gpu_write_rules` the registry wraps them in
//! [`super::hetero_writes::HeteroWrites`]. Uncached displayable color is the separate wrapper
//! [`super::ucd::Ucd`] (`gs-drrip-ucd`).

use super::gspc::GraphicsClass;
use super::rrip::{Insertion, Rrip};
use super::util::{is_demand, Bimodal, Psel, SetSampler, BRRIP_THROTTLE, PSEL_BITS, RRPV_LONG};
use crate::params::ParamList;
use crate::{CacheError, MissAction, PolicyContext, PolicyStat};
use apusim_trace::Access;

/// The insertion of DRRIP with `BITS`-bit RRPVs, dueling per graphics stream class when `GS`.
pub struct GsDuel<const GS: bool, const BITS: u8> {
    sampler: SetSampler,
    psel: [Psel; 4],
    bimodal: [Bimodal; 4],
}

/// DRRIP with `BITS`-bit RRPVs, dueling per graphics stream class when `GS`: [`Rrip`] with
/// the class duels' insertion.
pub type GsDrrip<const GS: bool, const BITS: u8> = Rrip<GsDuel<GS, BITS>>;

impl<const GS: bool, const BITS: u8> GsDuel<GS, BITS> {
    /// Largest ("distant") RRPV, `2^BITS - 1`.
    pub const DISTANT: u8 = (1u16 << BITS) as u8 - 1;
    /// SRRIP's insertion, `2^BITS - 2`.
    pub const LONG: u8 = Self::DISTANT - 1;

    /// Duel class of an access: its graphics class with `GS`, else 0.
    #[inline]
    pub fn class(req: &Access) -> usize {
        if GS {
            GraphicsClass::of(req) as usize
        } else {
            0
        }
    }
    /// Selector value of duel class `class`.
    pub fn psel(&self, class: usize) -> u32 {
        self.psel[class].value()
    }
    /// The leader kind of `set` for `class` (0 SRRIP, 1 BRRIP), if it leads for it.
    pub fn leader(&self, set: usize, class: usize) -> Option<u8> {
        self.sampler.leader(set, class)
    }
    /// The insertion policy (0 SRRIP, 1 BRRIP) `class` uses in `set` now.
    #[inline]
    pub fn policy(&self, set: usize, class: usize) -> u8 {
        self.sampler
            .leader(set, class)
            .unwrap_or_else(|| self.psel[class].choice())
    }
}

impl<const GS: bool, const BITS: u8> Insertion for GsDuel<GS, BITS> {
    const DISTANT: u8 = Self::DISTANT;
    fn params(list: &mut ParamList) {
        list.add(&[PSEL_BITS, BRRIP_THROTTLE]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        assert!((2..=8).contains(&BITS), "RRPV width {BITS} out of range");
        let p = Psel::from_ctx(ctx, &PSEL_BITS)?;
        let b = Bimodal::from_ctx(ctx)?;
        Ok(GsDuel {
            sampler: SetSampler::new(ctx.sets),
            psel: [p; 4],
            bimodal: [b.clone(), b.clone(), b.clone(), b],
        })
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        if is_demand(req.op) {
            let c = Self::class(req);
            if let Some(p) = self.sampler.leader(set, c) {
                self.psel[c].record_miss(p);
            }
        }
        MissAction::Allocate
    }
    #[inline]
    fn insertion(&mut self, set: usize, req: &Access) -> u8 {
        let c = Self::class(req);
        let long = self.policy(set, c) == 0 || self.bimodal[c].insertion() == RRPV_LONG;
        if long {
            Self::LONG
        } else {
            Self::DISTANT
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let names: &[&str] = if GS {
            &["z", "tex", "rt", "other"]
        } else {
            &[""]
        };
        let mut s = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let sep = if n.is_empty() { "" } else { "_" };
            s.push((format!("psel{sep}{n}"), self.psel[i].value() as f64));
            s.push((
                format!("followers_brrip{sep}{n}"),
                self.psel[i].choice() as f64,
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::drrip::Drrip;
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Agent, Op, Stream};

    use crate::Policy;

    type Gs2 = GsDrrip<true, 2>;
    type Gs4 = GsDrrip<true, 4>;
    type D4 = GsDrrip<false, 4>;

    // 64 sets: sampler thread t leads SRRIP where (b - a) mod 32 == 2t, BRRIP at 2t + 1, with
    // a = set & 31, b = set >> 5. Z is thread 0: SRRIP leader set 0, BRRIP leader set 31.
    // TEX is thread 1: SRRIP leader set 30 (a 30, b 0, offset 2), BRRIP leader 29.
    // RT is thread 2: SRRIP 28, BRRIP 27. Other is thread 3: SRRIP 26, BRRIP 25.

    #[test]
    fn classes_own_disjoint_leaders_and_selectors() {
        let c = cache_of::<Gs2>(64, 2);
        let p = c.policy();
        assert_eq!((p.leader(0, 0), p.leader(31, 0)), (Some(0), Some(1)));
        assert_eq!((p.leader(30, 1), p.leader(29, 1)), (Some(0), Some(1)));
        assert_eq!((p.leader(28, 2), p.leader(27, 2)), (Some(0), Some(1)));
        assert_eq!((p.leader(26, 3), p.leader(25, 3)), (Some(0), Some(1)));
        assert_eq!(p.leader(30, 0), None, "TEX leader is a Z follower");
        let tex = gpu(Stream::StaticTexture, Op::Read, 0);
        let rt = gpu(Stream::Color, Op::Write, 0);
        let z = gpu(Stream::Depth, Op::Read, 0);
        let other = gpu(Stream::Vertex, Op::Read, 0);
        let disp_w = gpu(Stream::Display, Op::Write, 0);
        let disp_r = gpu(Stream::Display, Op::Read, 0);
        assert_eq!(
            [&z, &tex, &rt, &other, &disp_w, &disp_r].map(GsDuel::<true, 2>::class),
            [0, 1, 2, 3, 2, 3]
        );
        assert_eq!(GsDuel::<false, 4>::class(&tex), 0);
    }

    /// Hand-worked: a TEX miss in TEX's SRRIP leader (set 30) moves only TEX's selector; TEX
    /// fills in followers then insert like BRRIP while Z fills in the same follower still
    /// insert at 2; a Z miss in a TEX leader trains nothing.
    #[test]
    fn per_stream_duels_replay() {
        let mut c = cache_of::<Gs2>(64, 2);
        let tex = |l| gpu(Stream::StaticTexture, Op::Read, l);
        let z = |l| gpu(Stream::Depth, Op::Read, l);
        assert_eq!(run(&mut c, &z(30)), Did::Fill(None));
        assert_eq!([0, 1, 2, 3].map(|i| c.policy().psel(i)), [511; 4]);
        assert_eq!(
            c.policy().rrpv(30, 0),
            2,
            "Z follows its own selector: SRRIP"
        );
        assert_eq!(run(&mut c, &tex(30 + 64)), Did::Fill(None));
        assert_eq!(
            [0, 1, 2, 3].map(|i| c.policy().psel(i)),
            [511, 512, 511, 511]
        );
        assert_eq!(c.policy().rrpv(30, 1), 2, "the SRRIP leader inserts at 2");
        // Follower set 5: TEX now BRRIP (first bimodal insertion distant), Z still SRRIP.
        assert_eq!(run(&mut c, &tex(5)), Did::Fill(None));
        assert_eq!(run(&mut c, &z(5 + 64)), Did::Fill(None));
        assert_eq!((c.policy().rrpv(5, 0), c.policy().rrpv(5, 1)), (3, 2));
        // A TEX hit promotes to 0; a TEX miss in its BRRIP leader brings the selector back.
        assert_eq!(run(&mut c, &tex(5)), Did::Hit);
        assert_eq!(c.policy().rrpv(5, 0), 0);
        assert_eq!(run(&mut c, &tex(29)), Did::Fill(None));
        assert_eq!(c.policy().psel(1), 511);
        // Writebacks do not train.
        run(&mut c, &gpu(Stream::StaticTexture, Op::Writeback, 30 + 128));
        assert_eq!(c.policy().psel(1), 511);
        let st = c.policy().stats();
        assert!(st.contains(&("psel_tex".to_string(), 511.0)));
    }

    /// 4-bit RRPVs: SRRIP inserts at 14, BRRIP at 15, victims are at 15 after aging.
    #[test]
    fn four_bit_variants_insert_at_14_and_age_to_15() {
        assert_eq!(
            (GsDuel::<false, 4>::DISTANT, GsDuel::<false, 4>::LONG),
            (15, 14)
        );
        assert_eq!(
            (GsDuel::<true, 2>::DISTANT, GsDuel::<true, 2>::LONG),
            (3, 2)
        );
        let mut c = cache_of::<D4>(64, 2);
        let f = 5u64; // follower
        assert_eq!(run(&mut c, &cpu_read(f)), Did::Fill(None));
        assert_eq!(run(&mut c, &cpu_read(f + 64)), Did::Fill(None));
        assert_eq!(run(&mut c, &cpu_read(f)), Did::Hit);
        assert_eq!((c.policy().rrpv(5, 0), c.policy().rrpv(5, 1)), (0, 14));
        // Aging by one: way 1 reaches 15 and is the victim; way 0 ages to 1.
        assert_eq!(run(&mut c, &cpu_read(f + 128)), Did::Fill(Some(f + 64)));
        assert_eq!((c.policy().rrpv(5, 0), c.policy().rrpv(5, 1)), (1, 14));
        // Switch followers to BRRIP with one SRRIP-leader miss: insertion at 15.
        run(&mut c, &cpu_read(0));
        assert_eq!(run(&mut c, &cpu_read(f + 192)), Did::Fill(Some(f + 128)));
        assert_eq!(c.policy().rrpv(5, 1), 15);
        let mut g = cache_of::<Gs4>(64, 2);
        run(&mut g, &gpu(Stream::Color, Op::Write, 7));
        assert_eq!(g.policy().rrpv(7, 0), 14);
    }

    /// The one-class 2-bit instance is exactly `drrip`: same outcomes and RRPVs on a long
    /// pseudo-random stream that exercises both leader kinds.
    #[test]
    fn one_class_two_bits_is_drrip() {
        let mut a = cache_of::<GsDrrip<false, 2>>(64, 4);
        let mut b = cache_of::<Drrip>(64, 4);
        let mut rng = SplitMix64Test(99);
        for i in 0..20_000 {
            let line = rng.next() % 700;
            let op = if rng.next().is_multiple_of(5) {
                Op::Write
            } else {
                Op::Read
            };
            let acc = Access::new(Agent::cpu(0), Stream::CpuData, op, line * LINE, 8);
            assert_eq!(run(&mut a, &acc), run(&mut b, &acc), "access {i}");
        }
        for s in 0..64 {
            for w in 0..4 {
                assert_eq!(a.policy().rrpv(s, w), b.policy().rrpv(s, w));
            }
        }
        assert_eq!(a.policy().psel(0), b.policy().psel());
    }

    struct SplitMix64Test(u64);
    impl SplitMix64Test {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }
}
