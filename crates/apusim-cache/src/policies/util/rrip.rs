//! RRIP building blocks: RRPV constants, victim selection (by scan, or by buckets for wide
//! caches in [`RrpvTable`]), and the bimodal insertion of BRRIP.

use crate::hostprefetch::prefetch;
use crate::params::{ParamKind, ParamSpec};
use crate::wayset::WayBits;
use crate::{CacheError, PolicyContext, SetView};

/// Largest re-reference prediction value of a 2-bit RRIP policy ("distant").
pub const RRPV_MAX: u8 = 3;
/// SRRIP's insertion value `2^n - 2` ("long").
pub const RRPV_LONG: u8 = 2;

/// RRIP victim selection on the RRPVs of one set: the lowest way whose RRPV is
/// [`RRPV_MAX`], after aging every line by the same amount until one reaches it (equivalent to
/// repeatedly incrementing every RRPV by one, done in one step).
#[inline]
pub fn rrip_victim(rrpv: &mut [u8]) -> usize {
    rrip_victim_max(rrpv, RRPV_MAX)
}

/// [`rrip_victim`] for RRPVs of any width: `distant` is the largest RRPV, `2^n - 1` for
/// n-bit RRPVs (the 4-bit iso-overhead comparators of gspc-graphics-stream-llc.txt §5.2).
#[inline]
pub fn rrip_victim_max(rrpv: &mut [u8], distant: u8) -> usize {
    match <&mut [u8; 16]>::try_from(&mut *rrpv) {
        Ok(set) => crate::simd::rrip_victim_16(set, distant),
        Err(_) => rrip_victim_scan(rrpv, distant),
    }
}

/// [`rrip_victim_max`] for any number of ways: one early-exit pass, then the aging.
#[inline]
pub(super) fn rrip_victim_scan(rrpv: &mut [u8], distant: u8) -> usize {
    let mut max = 0u8;
    let mut way = 0usize;
    for (w, &v) in rrpv.iter().enumerate() {
        if v >= distant {
            return w;
        }
        if v > max {
            max = v;
            way = w;
        }
    }
    let age = distant - max;
    for v in rrpv.iter_mut() {
        *v += age;
    }
    way
}

/// The per-line RRPVs of an RRIP-family policy, `set * ways + way`, all starting distant, with
/// the SRRIP victim search of [`rrip_victim_max`].
///
/// Compact sets keep the RRPVs themselves and scan the set for the victim. Wide sets
/// ([`crate::SetLayout`]) keep, per set, one [`WayBits`] bucket per RRPV value and an aging
/// offset: a line in bucket `b` has RRPV `(b + age) mod (distant + 1)`, so setting an RRPV
/// moves one way between two buckets, and aging every line of the set by `k` (the victim
/// search) is `age += k`: the buckets of the values that would pass the distant value are
/// empty at that moment, so the rotation renames buckets without moving a line. The victim,
/// the lowest way of the distant bucket after the aging, is the compact search's.
#[derive(Clone, Debug)]
pub struct RrpvTable {
    ways: usize,
    distant: u8,
    /// Compact: the RRPV of every line. Wide: the bucket of every line.
    v: Vec<u8>,
    wide: Option<Box<RrpvBuckets>>,
}

/// The buckets of wide sets (see [`RrpvTable`]). Their steps stay out of line, so that the
/// compact sets' inlined hooks keep their size.
#[derive(Clone, Debug)]
struct RrpvBuckets {
    distant: u8,
    bits: WayBits,
    /// Per set: the aging offset.
    age: Vec<u8>,
    /// Per set and bucket (set-major): the ways in the bucket.
    words: Vec<u64>,
}

impl RrpvBuckets {
    #[inline]
    fn bucket(&mut self, set: usize, values: usize, b: u8) -> &mut [u64] {
        let s = self.bits.stride();
        let at = (set * values + b as usize) * s;
        &mut self.words[at..at + s]
    }

    /// Give `way` of `set`, now in bucket `*bucket`, the RRPV `rrpv`.
    #[inline(never)]
    fn set(&mut self, set: usize, way: usize, bucket: &mut u8, rrpv: u8) {
        let (values, bits) = (self.distant as usize + 1, self.bits);
        let new = rrpv.wrapping_sub(self.age[set]) & self.distant;
        let old = *bucket;
        if old != new {
            bits.remove(self.bucket(set, values, old), way);
            bits.insert(self.bucket(set, values, new), way);
            *bucket = new;
        }
    }

    /// The SRRIP victim of a full `set`, aging it as needed; `view`, if given, receives hints
    /// for the next victims (the next members of the distant bucket, which later misses take
    /// in increasing order while the bucket lasts): the tag word of the eighth above the victim,
    /// the eviction of the fourth, whose tag word the hint four victims earlier brought in.
    #[inline(never)]
    fn victim(&mut self, set: usize, view: Option<&SetView<'_>>) -> usize {
        let (values, bits, age, distant) = (
            self.distant as usize + 1,
            self.bits,
            self.age[set],
            self.distant,
        );
        // The largest RRPV present (every way is in some bucket, so the loop ends).
        let mut top = distant;
        let bucket = loop {
            let b = top.wrapping_sub(age) & distant;
            if !bits.is_empty(self.bucket(set, values, b)) || top == 0 {
                break b;
            }
            top -= 1;
        };
        self.age[set] = age.wrapping_add(distant - top) & distant;
        let words = self.bucket(set, values, bucket);
        let way = bits.first(words);
        debug_assert!(way.is_some(), "every way of a set is in one of its buckets");
        let way = way.unwrap_or(0);
        if let Some(v) = view {
            if let Some(w) = bits.nth_after(words, way, 8) {
                v.prefetch_way(w);
            }
            if let Some(w) = bits.nth_after(words, way, 4) {
                v.prefetch_eviction(w);
            }
        }
        way
    }
}

impl RrpvTable {
    /// 2-bit RRPVs ([`RRPV_MAX`] distant).
    pub fn new(ctx: &PolicyContext) -> RrpvTable {
        RrpvTable::with_distant(ctx, RRPV_MAX)
    }

    /// RRPVs `0..=distant`; sets are wide when `ctx` says so and `distant + 1` is a power of
    /// two (`2^n - 1` for n-bit RRPVs).
    pub fn with_distant(ctx: &PolicyContext, distant: u8) -> RrpvTable {
        let values = distant as usize + 1;
        let wide = (ctx.wide_sets() && values.is_power_of_two()).then(|| {
            let bits = WayBits::new(ctx.ways);
            let mut words = vec![0; ctx.sets * values * bits.stride()];
            for set in words.chunks_exact_mut(values * bits.stride()) {
                bits.fill(&mut set[distant as usize * bits.stride()..]);
            }
            Box::new(RrpvBuckets {
                distant,
                bits,
                age: vec![0; ctx.sets],
                words,
            })
        });
        RrpvTable {
            ways: ctx.ways,
            distant,
            // Age 0: a line's bucket is its RRPV, so both start at `distant`.
            v: vec![distant; ctx.sets * ctx.ways],
            wide,
        }
    }

    /// True if the sets are wide (bucketed).
    pub fn is_wide(&self) -> bool {
        self.wide.is_some()
    }

    #[inline]
    pub fn get(&self, set: usize, way: usize) -> u8 {
        let v = self.v[set * self.ways + way];
        match self.wide.as_deref() {
            None => v,
            Some(w) => v.wrapping_add(w.age[set]) & self.distant,
        }
    }

    #[inline]
    pub fn set(&mut self, set: usize, way: usize, rrpv: u8) {
        let i = set * self.ways + way;
        match self.wide.as_deref_mut() {
            None => self.v[i] = rrpv,
            Some(w) => w.set(set, way, &mut self.v[i], rrpv),
        }
    }

    /// The victim of a full `set` (ages the set as needed).
    #[inline]
    pub fn victim(&mut self, set: usize) -> usize {
        match self.wide.as_deref_mut() {
            None => {
                let base = set * self.ways;
                rrip_victim_max(&mut self.v[base..base + self.ways], self.distant)
            }
            Some(w) => w.victim(set, None),
        }
    }

    /// [`RrpvTable::victim`], with hints for the coming victims to `view` (wide sets).
    #[inline]
    pub fn victim_hinted(&mut self, set: usize, view: &SetView<'_>) -> usize {
        match self.wide.as_deref_mut() {
            None => self.victim(set),
            Some(w) => w.victim(set, Some(view)),
        }
    }

    #[inline]
    pub fn prefetch(&self, set: usize) {
        prefetch(&self.v, set * self.ways);
    }
}

/// BRRIP's bimodal insertion throttle: every `every`-th insertion (the 32nd, 64th, ... by
/// default) is "long" ([`RRPV_LONG`]), all others "distant" ([`RRPV_MAX`]). Deterministic, so
/// runs are reproducible without a seed.
#[derive(Clone, Debug)]
pub struct Bimodal {
    count: u32,
    every: u32,
}

/// BRRIP's throttle: one long insertion in 32 by default (drp-reuse-probability-shared-llc.txt
/// §2.1's BRRIP, after the RRIP paper's ε = 1/32).
pub const BRRIP_THROTTLE: ParamSpec = ParamSpec {
    name: "brrip_throttle",
    kind: ParamKind::Int { min: 1, max: 1 << 20 },
    default: "32",
    unit: "insertions",
    doc: "BRRIP inserts one line in this many at the long RRPV, the rest at the distant one (drp §2.1)",
};

impl Bimodal {
    pub fn new(every: u32) -> Bimodal {
        Bimodal {
            count: 0,
            every: every.max(1),
        }
    }
    /// The throttle of parameter [`BRRIP_THROTTLE`].
    pub fn from_ctx(ctx: &PolicyContext) -> Result<Bimodal, CacheError> {
        Ok(Bimodal::new(ctx.int(&BRRIP_THROTTLE)? as u32))
    }
    /// The RRPV of the next bimodal insertion.
    #[inline]
    pub fn insertion(&mut self) -> u8 {
        self.count += 1;
        if self.count >= self.every {
            self.count = 0;
            RRPV_LONG
        } else {
            RRPV_MAX
        }
    }
}
