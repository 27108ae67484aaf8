//! The cache policies of the GPU levels: all three are tree pseudo-LRU
//! ([`apusim_cache::policies::plru::Plru`], adaptive-gpu-l1-bypassing.txt §4.1) on the shared
//! engine [`apusim_cache::Cache`], with the bypass machinery in the policy hooks.
//!
//! - [`L1Policy`] carries the L1's [`Predictor`]; the hierarchy computes the final decision of
//!   a read miss (prediction, corrected by the L2's bypassBit) *before* the L1 access and hands
//!   it over with [`L1Policy::decide`], so the engine's `on_miss` hook simply returns it. Hits,
//!   evictions and fills train the predictor as Listing 1 does, and evictions are classified
//!   as reused or zero-reuse (Fig. 1).
//! - [`L2Policy`] keeps the bypassBit of every L2 line (§3.1) and, for the false-positive
//!   statistic of §5.3, which SMs bypassed the line since it entered the L2. The hierarchy
//!   announces an L1 read miss with [`L2Policy::request`]; the hit or fill hook then returns
//!   the old bypassBit and stores the new one (set when the L1 finally bypasses, cleared
//!   otherwise: Listing 1's `L2Block[address].bypassBit = false` after reading it, and §3.1's
//!   "the L2 cache stores this information ... (set bypassBit = 1)").

pub use apusim_cache::policies::l1_bypass::{L1Bypass as L1Policy, Predictor};
use apusim_cache::policies::plru::Plru;
use apusim_cache::{CacheError, Policy, PolicyContext, SetView};
use apusim_trace::Access;

/// An L1 read miss as announced to the L2.
#[derive(Clone, Copy, Debug)]
pub struct L2Request {
    /// The requesting SM.
    pub sm: usize,
    /// The L1's prediction (`isBypassed` of Listing 1's `SendMemReq`).
    pub predicted_bypass: bool,
    /// Whether the L1 honours the bypassBit (off: the prediction is final).
    pub use_bypass_bit: bool,
}

/// What the L2 sends back with the data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct L2Reply {
    /// The line's bypassBit before this request (Listing 1's `bypassBit`).
    pub bypass_bit: bool,
    /// The final decision: bypass the L1.
    pub bypass: bool,
    /// This SM had bypassed the line earlier and refers to it again while it is still in the
    /// L2 (a false positive under the paper's definition, §5.3).
    pub rereferenced_by_bypasser: bool,
}

/// Pseudo-LRU plus the bypassBits of the shared L2.
pub struct L2Policy {
    plru: Plru,
    ways: usize,
    bypass_bit: Vec<bool>,
    /// Per line: SMs that bypassed it since it entered the L2 (statistics, not hardware).
    bypassers: Vec<u32>,
    pending: Option<L2Request>,
    reply: L2Reply,
}

impl L2Policy {
    /// Announce the next access as an L1 read miss.
    #[inline]
    pub fn request(&mut self, r: L2Request) {
        self.pending = Some(r);
        self.reply = L2Reply::default();
    }

    /// The reply to the announced request (after the L2 access).
    #[inline]
    pub fn take_reply(&mut self) -> L2Reply {
        self.pending = None;
        self.reply
    }

    /// The bypassBit of `(set, way)`, for tests.
    pub fn bit(&self, set: usize, way: usize) -> bool {
        self.bypass_bit[set * self.ways + way]
    }

    #[inline]
    fn serve(&mut self, slot: usize, old_bit: bool, old_bypassers: u32) {
        let Some(r) = self.pending else {
            // A write-through store: the bits stay (a new line starts clear).
            return;
        };
        let me = 1u32 << r.sm;
        let bypass = r.predicted_bypass && !(old_bit && r.use_bypass_bit);
        self.reply = L2Reply {
            bypass_bit: old_bit,
            bypass,
            rereferenced_by_bypasser: old_bypassers & me != 0,
        };
        self.bypass_bit[slot] = bypass;
        self.bypassers[slot] = if bypass {
            old_bypassers | me
        } else {
            old_bypassers & !me
        };
    }
}

impl Policy for L2Policy {
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let lines = ctx.sets * ctx.ways;
        Ok(L2Policy {
            plru: Plru::build(ctx)?,
            ways: ctx.ways,
            bypass_bit: vec![false; lines],
            bypassers: vec![0; lines],
            pending: None,
            reply: L2Reply::default(),
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        self.plru.on_hit(set, way, req);
        let slot = set * self.ways + way;
        self.serve(slot, self.bypass_bit[slot], self.bypassers[slot]);
    }
    #[inline]
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        self.plru.victim(set, req, view)
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        self.plru.on_fill(set, way, req);
        let slot = set * self.ways + way;
        self.bypass_bit[slot] = false;
        self.bypassers[slot] = 0;
        self.serve(slot, false, 0);
    }
}
