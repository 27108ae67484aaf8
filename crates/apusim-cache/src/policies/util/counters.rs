//! Saturating counters: the n-bit [`SatCounter`] and the 8-bit increment and decrement the
//! policies' per-line and per-table counters use.

/// An n-bit saturating counter (1 ≤ n ≤ 31).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SatCounter {
    value: u32,
    max: u32,
}

impl SatCounter {
    /// A counter of `bits` bits starting at `init` (clamped to the maximum).
    pub fn new(bits: u32, init: u32) -> SatCounter {
        assert!(
            (1..=31).contains(&bits),
            "counter width {bits} out of range"
        );
        let max = (1u32 << bits) - 1;
        SatCounter {
            value: init.min(max),
            max,
        }
    }
    #[inline]
    pub fn get(&self) -> u32 {
        self.value
    }
    #[inline]
    pub fn max(&self) -> u32 {
        self.max
    }
    #[inline]
    pub fn inc(&mut self) {
        if self.value < self.max {
            self.value += 1;
        }
    }
    #[inline]
    pub fn dec(&mut self) {
        self.value = self.value.saturating_sub(1);
    }
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.value == 0
    }
    #[inline]
    pub fn is_max(&self) -> bool {
        self.value == self.max
    }
    /// The most significant bit of the counter.
    #[inline]
    pub fn msb(&self) -> bool {
        self.value > self.max / 2
    }
}

/// Saturating increment of a small counter stored in a byte table.
#[inline]
pub fn sat_inc(c: &mut u8, max: u8) {
    if *c < max {
        *c += 1;
    }
}

/// Saturating decrement of a small counter stored in a byte table.
#[inline]
pub fn sat_dec(c: &mut u8) {
    *c = c.saturating_sub(1);
}
