//! What a scheduler may know of the system beyond its channel's queues.
//!
//! Some heterogeneous schedulers decide from information only the system has: which CPU
//! applications the LLC-interference detector put in emergency mode (gpu-access-criticality
//! §4.3, IM-LLC), whether the GPGPU phase detector asks for all GPU accesses first (§4.3, last
//! paragraph), and how far the GPU is through its current frame (the frame-rate estimator of
//! §4.2, which DynPrio and DASH use in §6.1.4). The caller sets these with
//! [`crate::MemorySystem::set_hints`]; every channel's scheduler sees the latest ones as
//! [`super::SchedContext::hints`]. The defaults mean "nothing known": no emergency, no GPGPU
//! priority phase, no frame, and every scheduler then still works (a GPU without a frame is
//! never urgent). Schedulers that ignore hints are unaffected by them, bit for bit.

/// Hints for the schedulers, set by the caller through [`crate::MemorySystem::set_hints`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedHints {
    /// Bit `n` set: CPU source `n` (`n < 0x80`) is in IM-LLC emergency mode. The system
    /// classifies each CPU application by its LLC miss rate every interval (H > 70%,
    /// M 10–70%, L ≤ 10%); an application moving from L to M or H enters emergency mode,
    /// and leaves it if it is still M or H an interval later (gpu-access-criticality §4.3).
    pub emergency: u128,
    /// The GPGPU phase detector (gpu-access-criticality §4.3, last paragraph) asks for every
    /// GPU access to be prioritised over the CPU accesses now.
    pub gpu_all_priority: bool,
    /// The GPU's current frame, for the deadline-aware schedulers; `None` when the GPU runs
    /// no frame-based workload (or the estimator has no estimate yet).
    pub frame: Option<FrameHint>,
}

impl SchedHints {
    /// Is CPU source `source` in IM-LLC emergency mode? (Never for a non-CPU source.)
    #[inline]
    pub fn emergency(&self, source: u8) -> bool {
        source < 0x80 && (self.emergency >> source) & 1 == 1
    }
}

/// The GPU's current frame, as the frame-rate estimator sees it (gpu-access-criticality §4.2).
///
/// The frame is anchored in DRAM cycles rather than given as the fraction of the period
/// elapsed: the controllers plan ahead and sleep between decisions while the caller updates
/// hints only at its own events, so a fraction set once would be stale by the next decision.
/// From `start` and `period` a scheduler computes the elapsed fraction at the very cycle it
/// decides ([`FrameHint::elapsed`]) and the cycles at which its view of the GPU changes (so it
/// can wake then). `progress` and `estimated` are the estimator's latest word and change only
/// when the caller sets new hints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameHint {
    /// DRAM cycle at which the current frame began.
    pub start: u64,
    /// The target frame period in DRAM cycles (one 40th of a second at the 40 FPS target of
    /// gpu-access-criticality §6.1.3).
    pub period: u64,
    /// Estimated fraction of the current frame's work done, in `[0, 1]`.
    pub progress: f64,
    /// The estimated time of the current frame as a fraction of the target period (the
    /// estimator's `F_i` over the period; above 1 the frame will miss its target).
    pub estimated: f64,
}

impl FrameHint {
    /// Fraction of the target period elapsed at cycle `now` since the frame began (may exceed
    /// 1; 0 before `start`).
    pub fn elapsed(&self, now: u64) -> f64 {
        now.saturating_sub(self.start) as f64 / self.period.max(1) as f64
    }

    /// The first cycle at which the elapsed fraction is at least `fraction` (`start` for a
    /// fraction of 0 or less or NaN; saturates at `u64::MAX`). The product with the period
    /// is taken with a relative tolerance of 10^-12, so that a fraction that is a whole
    /// number of cycles in decimal (0.9 × 1.2 of 1000 cycles) lands on that cycle.
    pub fn cycle_at(&self, fraction: f64) -> u64 {
        if fraction > 0.0 {
            let d = (fraction * self.period as f64 * (1.0 - 1e-12)).ceil();
            self.start.saturating_add(d as u64)
        } else {
            self.start
        }
    }

    /// The first cycle at which the GPU is behind its target: its progress is less than the
    /// elapsed fraction of the period (the expected progress of DynPrio and DASH).
    /// `u64::MAX` once the frame's work is done (progress 1).
    pub fn behind_at(&self) -> u64 {
        let p = self.progress;
        if p >= 1.0 || p.is_nan() {
            return u64::MAX;
        }
        let d = (p.max(0.0) * self.period as f64 * (1.0 + 1e-12)).floor() as u64;
        self.start.saturating_add(d).saturating_add(1)
    }

    /// Is the GPU behind its target at cycle `now`? (See [`FrameHint::behind_at`].)
    pub fn behind(&self, now: u64) -> bool {
        now >= self.behind_at()
    }

    /// The estimated frame time as a fraction of the target period, or 1 if the estimate
    /// is missing or meaningless (not a positive finite number).
    pub fn estimate(&self) -> f64 {
        if self.estimated.is_finite() && self.estimated > 0.0 {
            self.estimated
        } else {
            1.0
        }
    }

    /// The first cycle at which `fraction` of the estimated frame time has elapsed: the
    /// start of the last `1 - fraction` of the frame, with the time left in the frame computed
    /// from the estimate (as gpu-access-criticality §6.1.4 lets DynPrio and DASH do).
    pub fn estimated_at(&self, fraction: f64) -> u64 {
        self.cycle_at(fraction * self.estimate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(progress: f64, estimated: f64) -> FrameHint {
        FrameHint {
            start: 1000,
            period: 100,
            progress,
            estimated,
        }
    }

    #[test]
    fn elapsed_and_boundaries_agree() {
        let f = frame(0.25, 1.5);
        assert_eq!(f.elapsed(900), 0.0);
        assert_eq!(f.elapsed(1050), 0.5);
        assert_eq!(f.cycle_at(0.5), 1050);
        assert_eq!(f.cycle_at(0.0), 1000);
        assert_eq!(f.cycle_at(f64::NAN), 1000);
        assert_eq!(f.cycle_at(f64::INFINITY), u64::MAX);
        // Behind once elapsed exceeds progress 0.25: from cycle 1026.
        assert_eq!(f.behind_at(), 1026);
        assert!(!f.behind(1025) && f.behind(1026));
        assert!(f.elapsed(1025) <= 0.25 && f.elapsed(1026) > 0.25);
        // Last 10% of an estimated 1.5 periods: from 0.9 × 1.5 = 1.35 periods.
        assert_eq!(f.estimated_at(0.9), 1135);
        assert_eq!(frame(1.0, 1.0).behind_at(), u64::MAX);
        assert_eq!(frame(0.5, f64::NAN).estimate(), 1.0);
        assert_eq!(frame(0.5, -2.0).estimated_at(0.9), 1090);
    }

    #[test]
    fn emergency_bits_name_cpu_sources() {
        let h = SchedHints {
            emergency: (1 << 3) | (1 << 127),
            ..SchedHints::default()
        };
        assert!(h.emergency(3) && h.emergency(127));
        assert!(!h.emergency(0) && !h.emergency(0x80) && !h.emergency(0xff));
    }
}
