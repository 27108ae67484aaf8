//! The system-side detectors of gpu-access-criticality §4.3 that the IM DRAM scheduler acts
//! on: LLC interference (IM-LLC's emergency mode) and the GPGPU phases in which the GPU is
//! given priority over the CPU.
//!
//! - [`LlcInterference`]: execution is divided into equal intervals; in each, every CPU
//!   application is classified by its LLC miss rate as high (H, above 70%), medium (M,
//!   above 10%) or low (L, at most 10%). An application that goes from L to M or H between
//!   two consecutive intervals (possible interference from the GPU's fills) enters emergency
//!   mode; at the end of an interval, an emergency-mode application back in L stays (the
//!   mode helps it), one still in M or H leaves (it does not).
//! - [`PhaseDetector`]: windows of 100 K GPU cycles; periodically one window gives every
//!   GPU access the highest priority. If the GPU's shader instructions per cycle improve
//!   over the window before it, the priority stays for the next window, and so on until a
//!   window is no better than the one before.
//!
//! Choices where the paper is silent (docs/policies.md): the interference interval (1 M CPU
//! cycles), how often a priority window is tried (every tenth window), and "improves" (by
//! more than 1%; "equal" is within it). An interval in which an application made no LLC
//! access leaves its class as it was.

/// IM-LLC's intensity classes (miss-rate bounds of §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intensity {
    High,
    Medium,
    Low,
}

impl Intensity {
    /// The class of an LLC miss rate: H above 70%, M above 10%, L at most 10%.
    pub fn of(miss_rate: f64) -> Intensity {
        if miss_rate > 0.7 {
            Intensity::High
        } else if miss_rate > 0.1 {
            Intensity::Medium
        } else {
            Intensity::Low
        }
    }
}

/// Per-application LLC interference detection (IM-LLC).
#[derive(Clone, Debug)]
pub struct LlcInterference {
    class: Vec<Option<Intensity>>,
    emergency: Vec<bool>,
    last: Vec<(u64, u64)>,
    /// Intervals ended, and application-intervals spent in emergency mode.
    pub intervals: u64,
    pub emergency_intervals: u64,
}

impl LlcInterference {
    pub fn new(apps: usize) -> LlcInterference {
        LlcInterference {
            class: vec![None; apps],
            emergency: vec![false; apps],
            last: vec![(0, 0); apps],
            intervals: 0,
            emergency_intervals: 0,
        }
    }

    /// An interval ended with application `i`'s LLC (accesses, misses) so far at
    /// `totals[i]` (monotonic counters). Returns the emergency mask for the next interval
    /// (bit `i`: application `i`).
    pub fn end_interval(&mut self, totals: &[(u64, u64)]) -> u128 {
        self.intervals += 1;
        for (i, &(acc, miss)) in totals.iter().enumerate().take(self.class.len()) {
            let (a0, m0) = std::mem::replace(&mut self.last[i], (acc, miss));
            let (da, dm) = (acc.saturating_sub(a0), miss.saturating_sub(m0));
            if da == 0 {
                continue;
            }
            let now = Intensity::of(dm as f64 / da as f64);
            let before = self.class[i].replace(now);
            if self.emergency[i] {
                // Back in L: the mode helps, stay; still M or H: it does not, leave.
                self.emergency[i] = now == Intensity::Low;
            } else if before == Some(Intensity::Low) && now != Intensity::Low {
                self.emergency[i] = true;
            }
        }
        self.emergency_intervals += self.emergency.iter().filter(|&&e| e).count() as u64;
        self.mask()
    }

    /// The emergency mask (bit `i`: application `i`).
    pub fn mask(&self) -> u128 {
        self.emergency
            .iter()
            .enumerate()
            .filter(|(_, &e)| e)
            .fold(0u128, |m, (i, _)| m | (1u128 << (i % 128)))
    }
}

/// GPGPU phase detection: when to give every GPU access priority.
#[derive(Clone, Debug)]
pub struct PhaseDetector {
    probe_every: u64,
    tolerance: f64,
    window: u64,
    on: bool,
    last_ipc: Option<f64>,
    /// Windows ended and windows with GPU priority.
    pub windows: u64,
    pub priority_windows: u64,
}

impl PhaseDetector {
    /// Try a priority window every `probe_every` windows; an IPC counts as improved when it
    /// is more than `tolerance` (a fraction) above the last window's.
    pub fn new(probe_every: u64, tolerance: f64) -> PhaseDetector {
        PhaseDetector {
            probe_every: probe_every.max(1),
            tolerance,
            window: 0,
            on: false,
            last_ipc: None,
            windows: 0,
            priority_windows: 0,
        }
    }

    /// A window ended with the GPU at `ipc` shader instructions per cycle during it. Returns
    /// whether every GPU access has priority in the next window.
    pub fn end_window(&mut self, ipc: f64) -> bool {
        self.windows += 1;
        self.priority_windows += u64::from(self.on);
        let improved = self
            .last_ipc
            .is_some_and(|last| ipc > last * (1.0 + self.tolerance));
        self.last_ipc = Some(ipc);
        self.window += 1;
        self.on = if self.on {
            // Stay while the priority window beat the one before it.
            improved
        } else {
            // Try a priority window periodically.
            self.window.is_multiple_of(self.probe_every)
        };
        self.on
    }

    /// Whether the current window gives the GPU priority.
    pub fn on(&self) -> bool {
        self.on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intensity_bounds_are_the_papers() {
        assert_eq!(Intensity::of(0.71), Intensity::High);
        assert_eq!(Intensity::of(0.7), Intensity::Medium);
        assert_eq!(Intensity::of(0.11), Intensity::Medium);
        assert_eq!(Intensity::of(0.1), Intensity::Low);
        assert_eq!(Intensity::of(0.0), Intensity::Low);
    }

    /// Cumulative (accesses, misses) after intervals with the given miss rates, 1000
    /// accesses each.
    fn totals(rates: &[f64]) -> Vec<(u64, u64)> {
        let (mut a, mut m) = (0u64, 0u64);
        rates
            .iter()
            .map(|r| {
                a += 1000;
                m += (r * 1000.0) as u64;
                (a, m)
            })
            .collect()
    }

    #[test]
    fn low_to_medium_or_high_enters_emergency_and_staying_high_leaves() {
        // App 0: L, M (enters), L (stays), L (stays), H (leaves), L, H (enters again).
        // App 1: always H: never.  App 2: H then L: never (not from L).
        let a0 = totals(&[0.05, 0.3, 0.05, 0.02, 0.9, 0.05, 0.8]);
        let a1 = totals(&[0.9; 7]);
        let a2 = totals(&[0.9, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05]);
        let mut d = LlcInterference::new(3);
        let masks: Vec<u128> = (0..7)
            .map(|k| d.end_interval(&[a0[k], a1[k], a2[k]]))
            .collect();
        assert_eq!(masks, vec![0, 1, 1, 1, 0, 0, 1]);
        assert_eq!(d.intervals, 7);
        assert_eq!(d.emergency_intervals, 4);
    }

    #[test]
    fn an_idle_interval_keeps_the_class() {
        let mut d = LlcInterference::new(1);
        assert_eq!(d.end_interval(&[(1000, 10)]), 0); // L
        assert_eq!(d.end_interval(&[(1000, 10)]), 0); // no accesses: still L
        assert_eq!(d.end_interval(&[(2000, 800)]), 1); // L to H
    }

    #[test]
    fn priority_windows_are_tried_and_kept_while_they_help() {
        let mut p = PhaseDetector::new(4, 0.01);
        // Windows 1-3 without priority; the 4th window's end turns it on.
        assert!(!p.end_window(1.0));
        assert!(!p.end_window(1.0));
        assert!(!p.end_window(1.0));
        assert!(p.end_window(1.0));
        // The priority window improved IPC by 20%: stay on; then 10% more: stay; then
        // equal (within 1%): off.
        assert!(p.end_window(1.2));
        assert!(p.end_window(1.32));
        assert!(!p.end_window(1.325));
        assert_eq!(p.priority_windows, 3);
        // A priority window that does not help is dropped at once.
        let mut q = PhaseDetector::new(1, 0.01);
        assert!(q.end_window(1.0)); // probe every window
        assert!(!q.end_window(0.9)); // worse: off
        assert!(q.end_window(0.9)); // the next probe
    }
}
