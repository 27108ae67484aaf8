//! Frame-rate estimation (gpu-access-criticality §4.2): the render-target plane (RTP)
//! information table, its learning and prediction modes, and the projected frame time
//! `F_i = C_rtp × N_rtp` with `C_rtp = λ × C_cur + (1 − λ) × C_avg`.
//!
//! The render target is divided into tiles (RTTs) and a frame's rendering into planes: an
//! RTP is a run of consecutive tile updates that covers every tile of the render target
//! (Fig. 7). Here an update is one 8x8 screen tile of a triangle (the pipeline's
//! [`apusim_trace::WorkKind::Tile`]) whose last quad has been written, counted when that
//! write is done (the render target has then been updated), and an RTT is the hierarchical-Z
//! line that tile's test reads, so an RTT is the group of screen tiles whose HiZ entries
//! share a line (the granularity at which the GPU's HiZ cache sees the render target).
//!
//! - **Learning mode** lasts one whole frame. At its end the number of RTTs of the render
//!   target is the number of distinct tiles the frame updated, the frame's updates are cut
//!   into RTPs in order (an RTP ends when it has covered every RTT, and the frame's last one
//!   where the frame ends), and the 64-entry table records each RTP's updates, cycles and
//!   RTTs (the last entry accumulating every RTP beyond the 63rd). `N_rtp` is the frame's
//!   RTP count and `C_avg` its cycles per RTP.
//! - **Prediction mode**: `λ`, the fraction of the frame rendered so far, is the frame's
//!   updates so far over the learned frame's updates (at most one); `C_cur`, the cycles per
//!   RTP of the current frame, is the cycles so far over the RTPs done (`λ × N_rtp`). So the
//!   projection is `F_i = N_rtp × (λ C_cur + (1 − λ) C_avg)`, the cycles so far plus the
//!   rest of the learned frame. At each frame's end its updates, RTP count (cut with the
//!   learned RTT count) and cycles, the table's three fields, are compared with the learned
//!   ones; if any differs by more than the relearning threshold, the next frame is learned
//!   again.
//!
//! Choices where the paper is silent (docs/timing.md): the relearning threshold (10%), and
//! the projection before anything was learned (none: the caller treats the frame rate as
//! below target, the titles the mechanism is for).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Entries of the RTP information table.
pub const RTP_ENTRIES: usize = 64;

/// One entry of the RTP information table (three 4-byte fields, §4.2.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtpEntry {
    pub updates: u32,
    pub cycles: u32,
    pub rtts: u32,
}

/// What the learning frame measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    /// RTTs of the render target.
    pub tiles: u32,
    /// `N_rtp`.
    pub planes: u32,
    pub updates: u64,
    pub cycles: u64,
    pub table: Vec<RtpEntry>,
}

impl Learned {
    /// `C_avg`.
    pub fn cycles_per_plane(&self) -> f64 {
        self.cycles as f64 / f64::from(self.planes.max(1))
    }
}

/// One frame's projection against its measured time (gpu-access-criticality Fig. 10).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameEstimate {
    pub frame: u32,
    /// Its cycles.
    pub cycles: u64,
    /// The mean of the projections made during it.
    pub projected: f64,
    /// Projected over measured frame rate, minus one (positive: over-estimated).
    pub error: f64,
}

/// The estimator.
#[derive(Clone, Debug)]
pub struct FrameRateEstimator {
    relearn: f64,
    learned: Option<Learned>,
    /// The current frame is a learning frame.
    learning: bool,
    frame_start: u64,
    /// The current frame's updates (RTT, cycle), in order.
    log: Vec<(u32, u64)>,
    /// RTT ids by HiZ line.
    ids: FxHashMap<u64, u32>,
    /// Projections sampled during the current frame (sum, count).
    samples: (f64, u64),
    estimates: Vec<FrameEstimate>,
    relearned: u64,
}

impl FrameRateEstimator {
    /// An estimator relearning when a frame's updates, RTP count or cycles differ from the
    /// learned ones by more than the fraction `relearn`.
    pub fn new(relearn: f64) -> FrameRateEstimator {
        FrameRateEstimator {
            relearn,
            learned: None,
            learning: true,
            frame_start: 0,
            log: Vec::new(),
            ids: FxHashMap::default(),
            samples: (0.0, 0),
            estimates: Vec::new(),
            relearned: 0,
        }
    }

    /// The first frame began at `cycle`.
    pub fn begin(&mut self, cycle: u64) {
        self.frame_start = cycle;
    }

    /// A tile of render-target line `line` was updated at `cycle`.
    pub fn update(&mut self, line: u64, cycle: u64) {
        let n = self.ids.len() as u32;
        let id = *self.ids.entry(line).or_insert(n);
        self.log.push((id, cycle));
    }

    /// Cut `log` into planes of `tiles` RTTs each (the last one partial), starting at
    /// `start`: the table of §4.2.1.
    fn planes(log: &[(u32, u64)], tiles: u32, start: u64) -> Vec<RtpEntry> {
        let mut table: Vec<RtpEntry> = Vec::new();
        let mut stamp: FxHashMap<u32, u32> = FxHashMap::default();
        let mut cur = RtpEntry::default();
        let mut plane = 0u32;
        let mut plane_start = start;
        let mut last = start;
        let push = |table: &mut Vec<RtpEntry>, e: RtpEntry| {
            if table.len() < RTP_ENTRIES {
                table.push(e);
            } else {
                let l = table.last_mut().expect("full table");
                l.updates = l.updates.saturating_add(e.updates);
                l.cycles = l.cycles.saturating_add(e.cycles);
                l.rtts = l.rtts.saturating_add(e.rtts);
            }
        };
        for &(id, cycle) in log {
            cur.updates += 1;
            if stamp.insert(id, plane) != Some(plane) {
                cur.rtts += 1;
            }
            last = cycle;
            if cur.rtts >= tiles {
                cur.cycles = u32::try_from(cycle.saturating_sub(plane_start)).unwrap_or(u32::MAX);
                push(&mut table, cur);
                cur = RtpEntry::default();
                plane += 1;
                plane_start = cycle;
            }
        }
        if cur.updates > 0 {
            cur.cycles = u32::try_from(last.saturating_sub(plane_start)).unwrap_or(u32::MAX);
            push(&mut table, cur);
        }
        table
    }

    /// The frame that began at the last frame end ended at `cycle`; it was frame `frame`.
    pub fn frame_end(&mut self, frame: u32, cycle: u64) {
        let cycles = cycle.saturating_sub(self.frame_start);
        let updates = self.log.len() as u64;
        if self.learning {
            let mut seen: Vec<bool> = vec![false; self.ids.len()];
            let mut tiles = 0u32;
            for &(id, _) in &self.log {
                if !std::mem::replace(&mut seen[id as usize], true) {
                    tiles += 1;
                }
            }
            let table = Self::planes(&self.log, tiles.max(1), self.frame_start);
            let planes = if table.len() < RTP_ENTRIES {
                table.len() as u32
            } else {
                Self::count_planes(&self.log, tiles.max(1))
            };
            if updates > 0 {
                self.learned = Some(Learned {
                    tiles: tiles.max(1),
                    planes: planes.max(1),
                    updates,
                    cycles,
                    table,
                });
                self.learning = false;
            }
        } else if let Some(l) = &self.learned {
            if self.samples.1 > 0 {
                let projected = self.samples.0 / self.samples.1 as f64;
                self.estimates.push(FrameEstimate {
                    frame,
                    cycles,
                    projected,
                    error: cycles as f64 / projected.max(1.0) - 1.0,
                });
            }
            let planes = Self::count_planes(&self.log, l.tiles);
            let off = |a: f64, b: f64| (a - b).abs() > self.relearn * b;
            if off(updates as f64, l.updates as f64)
                || off(f64::from(planes), f64::from(l.planes))
                || off(cycles as f64, l.cycles as f64)
            {
                self.learning = true;
                self.relearned += 1;
            }
        }
        self.frame_start = cycle;
        self.log.clear();
        self.samples = (0.0, 0);
    }

    /// RTPs in `log` with `tiles` RTTs each (the last one partial).
    fn count_planes(log: &[(u32, u64)], tiles: u32) -> u32 {
        let mut stamp: FxHashMap<u32, u32> = FxHashMap::default();
        let (mut plane, mut rtts, mut open) = (0u32, 0u32, false);
        for &(id, _) in log {
            open = true;
            if stamp.insert(id, plane) != Some(plane) {
                rtts += 1;
            }
            if rtts >= tiles {
                plane += 1;
                rtts = 0;
                open = false;
            }
        }
        plane + u32::from(open)
    }

    /// `λ`: the fraction of the current frame rendered, if a frame was learned and this one
    /// is predicted.
    pub fn progress(&self) -> Option<f64> {
        let l = self.learned.as_ref().filter(|_| !self.learning)?;
        Some((self.log.len() as f64 / l.updates.max(1) as f64).min(1.0))
    }

    /// `F_i` at `cycle`: the projected cycles of the current frame, in prediction mode.
    pub fn projected(&self, cycle: u64) -> Option<f64> {
        let l = self.learned.as_ref().filter(|_| !self.learning)?;
        let lambda = self.progress()?;
        let n = f64::from(l.planes);
        let elapsed = cycle.saturating_sub(self.frame_start) as f64;
        let c_avg = l.cycles_per_plane();
        let blended = if lambda > 0.0 {
            let c_cur = elapsed / (lambda * n);
            lambda * c_cur + (1.0 - lambda) * c_avg
        } else {
            c_avg
        };
        // Never less than the time already spent.
        Some((blended * n).max(elapsed))
    }

    /// Cycles since the current frame began.
    pub fn elapsed(&self, cycle: u64) -> u64 {
        cycle.saturating_sub(self.frame_start)
    }

    /// Take a projection at `cycle` into the current frame's mean (Fig. 10 compares it with
    /// the frame's measured time).
    pub fn sample(&mut self, cycle: u64) {
        if let Some(p) = self.projected(cycle) {
            self.samples.0 += p;
            self.samples.1 += 1;
        }
    }

    pub fn learned(&self) -> Option<&Learned> {
        self.learned.as_ref()
    }
    pub fn learning(&self) -> bool {
        self.learning
    }
    pub fn estimates(&self) -> &[FrameEstimate] {
        &self.estimates
    }
    /// Frames after which the estimator went back to learning.
    pub fn relearned(&self) -> u64 {
        self.relearned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame of `layers` passes over `tiles` tiles, one update every `step` cycles from
    /// `start`.
    fn frame(e: &mut FrameRateEstimator, tiles: u64, layers: u64, start: u64, step: u64) -> u64 {
        let mut t = start;
        for _ in 0..layers {
            for tile in 0..tiles {
                t += step;
                e.update(tile * 64, t);
            }
        }
        t
    }

    #[test]
    fn learning_frame_fills_the_table_by_planes() {
        let mut e = FrameRateEstimator::new(0.1);
        assert!(e.learning() && e.projected(0).is_none());
        let end = frame(&mut e, 10, 3, 0, 2);
        e.frame_end(0, end + 4);
        let l = e.learned().unwrap();
        assert_eq!((l.tiles, l.planes, l.updates, l.cycles), (10, 3, 30, 64));
        assert_eq!(l.table.len(), 3);
        assert!(l.table.iter().all(|p| p.updates == 10 && p.rtts == 10));
        // A plane's cycles run from the previous plane's last update to its own last.
        assert_eq!(l.table[1].cycles, 20);
        assert!(!e.learning());
    }

    #[test]
    fn a_partial_last_plane_and_overdraw_within_a_plane() {
        // Tiles 0,1,0,2 (tile 0 overdrawn inside the first plane), then 0,1.
        let mut e = FrameRateEstimator::new(0.1);
        for (i, t) in [0u64, 1, 0, 2, 0, 1].iter().enumerate() {
            e.update(t * 64, i as u64 * 10 + 10);
        }
        e.frame_end(0, 100);
        let l = e.learned().unwrap();
        assert_eq!(l.tiles, 3);
        assert_eq!(
            l.table,
            vec![
                RtpEntry {
                    updates: 4,
                    cycles: 40,
                    rtts: 3
                },
                RtpEntry {
                    updates: 2,
                    cycles: 20,
                    rtts: 2
                }
            ]
        );
        assert_eq!(l.planes, 2);
    }

    #[test]
    fn the_last_entry_accumulates_planes_beyond_64() {
        let mut e = FrameRateEstimator::new(0.1);
        let end = frame(&mut e, 2, 100, 0, 1);
        e.frame_end(0, end);
        let l = e.learned().unwrap();
        assert_eq!(l.planes, 100);
        assert_eq!(l.table.len(), RTP_ENTRIES);
        assert_eq!(l.table[63].updates, 2 * 37);
        assert_eq!(
            l.table.iter().map(|p| u64::from(p.updates)).sum::<u64>(),
            200
        );
    }

    #[test]
    fn prediction_blends_the_current_frame_with_the_learned_one() {
        let mut e = FrameRateEstimator::new(0.1);
        let end = frame(&mut e, 10, 4, 0, 10); // 40 updates, 400 cycles
        e.frame_end(0, end);
        let l = e.learned().unwrap().clone();
        assert_eq!((l.planes, l.cycles), (4, 400));
        // At the frame's start λ = 0: the learned frame.
        assert_eq!(e.progress(), Some(0.0));
        assert_eq!(e.projected(end), Some(400.0));
        // The new frame runs twice as slowly: after half its work (20 updates in 400
        // cycles), λ = 1/2, C_cur = 400 / 2 = 200, C_avg = 100: C_rtp = 150, F = 600.
        let start = end;
        for i in 0..20u64 {
            e.update((i % 10) * 64, start + (i + 1) * 20);
        }
        assert_eq!(e.progress(), Some(0.5));
        let f = e.projected(start + 400).unwrap();
        assert!((f - 600.0).abs() < 1e-9, "{f}");
        // Everything done: λ = 1, the frame's own rate.
        for i in 20..40u64 {
            e.update((i % 10) * 64, start + (i + 1) * 20);
        }
        assert!((e.projected(start + 800).unwrap() - 800.0).abs() < 1e-9);
    }

    #[test]
    fn frames_unlike_the_learned_one_send_it_back_to_learning() {
        let mut e = FrameRateEstimator::new(0.1);
        let t = frame(&mut e, 10, 4, 0, 20);
        e.frame_end(0, t);
        // A frame with the same work, rendered 5% more slowly, stays in prediction mode.
        let t2 = frame(&mut e, 10, 4, t, 21);
        e.sample(t2);
        e.frame_end(1, t2);
        assert!(!e.learning() && e.relearned() == 0);
        assert_eq!(e.estimates().len(), 1);
        // A frame with half the planes: relearn, and the next frame is learned afresh.
        let t3 = frame(&mut e, 10, 2, t2, 40);
        e.frame_end(2, t3);
        assert!(e.learning());
        assert_eq!(e.relearned(), 1);
        let t4 = frame(&mut e, 10, 2, t3, 20);
        e.frame_end(3, t4);
        assert_eq!(e.learned().unwrap().planes, 2);
        assert!(!e.learning());
        // The same work taking 30% longer than learned: relearn too.
        let t5 = frame(&mut e, 10, 2, t4, 26);
        e.frame_end(4, t5);
        assert!(e.learning());
        assert_eq!(e.relearned(), 2);
    }

    #[test]
    fn error_compares_the_mean_projection_with_the_frame() {
        let mut e = FrameRateEstimator::new(0.5);
        let t = frame(&mut e, 10, 2, 0, 10); // 200 cycles learned
        e.frame_end(0, t);
        // The next frame takes 300 cycles; projections at its start (200) and end (300).
        e.sample(t);
        let t2 = frame(&mut e, 10, 2, t, 15);
        e.sample(t2);
        e.frame_end(1, t2);
        let est = e.estimates()[0];
        assert_eq!(est.cycles, 300);
        assert!((est.projected - 250.0).abs() < 1e-9);
        // Measured 300 cycles, projected 250: the frame rate was over-estimated by 20%.
        assert!((est.error - 0.2).abs() < 1e-9, "{}", est.error);
    }
}
