//! Deterministic randomness: [`SplitMix64`], seeded from the policy context so that runs
//! repeat exactly.

use crate::PolicyContext;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed deterministic generator.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }
    /// Seeded from the policy context.
    pub fn from_ctx(ctx: &PolicyContext) -> SplitMix64 {
        SplitMix64::new(ctx.seed)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A uniform value in `0..n` (multiply-high; `n` must be positive).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}
