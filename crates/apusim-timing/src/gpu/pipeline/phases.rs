//! Pacing a sampled run's functional warming by the frame's phases (`PhasePace`).
//!
//! A frame's draws and passes run at very different speeds: a depth-only pass or a
//! full-screen blit is taken in a few thousand cycles, while a pass whose render targets
//! spill out of the LLC waits on DRAM for most of its time (deferred at 1280x1024: a tenth of
//! its 10,000-cycle intervals take no work at all, the median one 32 unit-cycles per cycle,
//! the 90th percentile 182). Warming at one rate for the whole frame, the rate of every
//! window together, spends the sampled run's time on each phase in proportion to its *work*,
//! not to the time it takes in detail: the windows, equally spaced in time, then land in the
//! fast phases far more often than in the slow ones, and measure their speed (the frame came
//! out 35% short) and their light memory traffic (the CPUs of a mix beside it ran 70–100%
//! fast).
//!
//! So the pipeline learns each phase's own rate in the measured windows and warms each item
//! at the rate of its phase: a phase is the stretch between two draw or pass boundaries
//! ([`WorkKind::Sync`]) of a frame, numbered from the frame's start, so every frame of a
//! scene, and every pass of a replayed one, adds to the same phases. A window charges the
//! cycles between two items taken to the phase of the first, and each item's work to its
//! own phase. A phase's rate is `(work + k·r) / (cycles + k)`, `r` the rate of all windows
//! (what warming used before any phase was measured) and `k` = [`PRIOR_CYCLES`]: a phase no
//! window has seen warms at `r`, a well-measured one at its own rate, and one measured only
//! while it stalled slows down without stopping.

use apusim_trace::WorkKind;

/// The weight, in GPU cycles, of the rate of all windows in a phase's rate: less than one
/// window (2,500 GPU cycles at the default 10,000 CPU cycles), so one window in a phase
/// mostly decides it.
pub(super) const PRIOR_CYCLES: f64 = 1_000.0;

#[derive(Clone, Debug, Default)]
pub(super) struct PhasePace {
    /// Phase of the next item taken: draw and pass boundaries since its frame began.
    phase: u32,
    /// While a window is open: the phase the cycles since `mark` go to, and `mark`.
    open: Option<(u32, u64)>,
    /// Per phase: work and GPU cycles measured in windows.
    table: Vec<(u64, u64)>,
}

impl PhasePace {
    /// An item of `work` taken in detail at GPU cycle `cycle`: measured while a window is
    /// open.
    pub(super) fn take(&mut self, kind: WorkKind, work: u64, cycle: u64) {
        if let Some((charged, mark)) = self.open {
            self.entry(charged).1 += cycle.saturating_sub(mark);
            self.entry(self.phase).0 += work;
            self.open = Some((self.phase, cycle));
        }
        self.advance(kind);
    }

    /// An item of `work` taken by warming: the GPU cycles it stands for at its phase's
    /// rate, `all` the rate of every window.
    pub(super) fn warm(&mut self, kind: WorkKind, work: u64, all: f64) -> f64 {
        let cycles = self.cycles(self.phase, work, all);
        self.advance(kind);
        cycles
    }

    /// Past a draw or pass boundary the next phase begins; past a frame's end, phase 0.
    fn advance(&mut self, kind: WorkKind) {
        match kind {
            WorkKind::Sync => self.phase += 1,
            WorkKind::FrameEnd { .. } => self.phase = 0,
            _ => {}
        }
    }

    /// A measured window opens at GPU cycle `cycle`.
    pub(super) fn open(&mut self, cycle: u64) {
        if self.open.is_none() {
            self.open = Some((self.phase, cycle));
        }
    }

    /// The window closes at GPU cycle `cycle`.
    pub(super) fn close(&mut self, cycle: u64) {
        if let Some((charged, mark)) = self.open.take() {
            self.entry(charged).1 += cycle.saturating_sub(mark);
        }
    }

    /// GPU cycles an item of `work` in `phase` stands for, `all` the rate of every window.
    fn cycles(&self, phase: u32, work: u64, all: f64) -> f64 {
        let (w, c) = self.table.get(phase as usize).copied().unwrap_or((0, 0));
        let rate = (w as f64 + PRIOR_CYCLES * all) / (c as f64 + PRIOR_CYCLES);
        if rate > 0.0 {
            work as f64 / rate
        } else {
            0.0
        }
    }

    fn entry(&mut self, phase: u32) -> &mut (u64, u64) {
        let i = phase as usize;
        if i >= self.table.len() {
            self.table.resize(i + 1, (0, 0));
        }
        &mut self.table[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUAD: WorkKind = WorkKind::Quad {
        shaded: true,
        late_z: false,
        texels: [0, 0],
    };

    #[test]
    fn windows_charge_cycles_to_the_phase_of_the_item_before_and_phases_count_from_the_frame() {
        let mut p = PhasePace::default();
        p.warm(QUAD, 10, 1.0); // warmed: not measured
        p.open(100);
        p.take(QUAD, 10, 110); // phase 0: 10 cycles, 10 work
        p.take(WorkKind::Sync, 0, 150); // phase 0 waits 40 cycles at its boundary
        p.take(QUAD, 30, 160); // phase 1: 30 work; the 10 cycles before go to phase 0
        p.close(200); // phase 1: 40 cycles
        assert_eq!(p.table, vec![(10, 60), (30, 40)]);
        assert_eq!(p.phase, 1);
        p.warm(WorkKind::FrameEnd { frame: 0 }, 0, 1.0);
        assert_eq!(p.phase, 0);
        // Out of a window nothing is measured.
        p.take(QUAD, 50, 300);
        assert_eq!(p.table, vec![(10, 60), (30, 40)]);
    }

    #[test]
    fn a_phase_warms_at_its_own_rate_once_measured_and_at_the_windows_rate_before() {
        let mut p = PhasePace::default();
        // Unmeasured: the rate of all windows.
        assert_eq!(p.cycles(3, 100, 2.0), 50.0);
        p.open(0);
        p.take(QUAD, 1_000, 0);
        p.close(100_000); // phase 0: rate 0.01 over 100,000 cycles
        let c = p.cycles(0, 100, 2.0);
        let own = 100.0 / ((1_000.0 + PRIOR_CYCLES * 2.0) / (100_000.0 + PRIOR_CYCLES));
        assert!((c - own).abs() < 1e-9);
        assert!(c > 3_000.0, "a slow phase takes long: {c}");
        // Measured while stalled: slow, but finite.
        let mut s = PhasePace::default();
        s.open(0);
        s.close(5_000);
        let c = s.cycles(0, 100, 2.0);
        assert!(c.is_finite() && c > 50.0 * 5.0, "{c}");
    }
}
