//! Emptying the pipeline functionally when a sampled run's warming begins.
//!
//! A frozen pipeline holds the work it had taken when it froze: up to `fe_window` items in
//! the front end, tiles in the HiZ FIFO, quads in the ROP queues and thousands of shader
//! threads. Were it kept through the warming, the thaw would resume a back end busy with
//! that old work (a DRAM-bound pass's texture reads, say) while the front end and the caches
//! had moved on by the whole jump: the window would measure a mixture of two points of the
//! frame, charged to the phase of the front end, and the warming pace it learns would put
//! the windows in the frame's phases in the wrong shares (docs/validation.md measured D1's
//! two DRAM-bound tenths at 24% of the windows against 41% of the detailed time, and the
//! cores beside it 10–44% fast). So the work in flight is finished functionally first, in
//! its place in the access order, and the thaw starts from an empty pipeline that refills
//! during the detailed warm-up, as SMARTS drains a core's pipeline and refills it.
//!
//! It is the render model's `flush_warming`, off by default: on D1, D4 and Q2 it brought
//! the cores' mean error from 30% to 20% (21% over three sampling periods), but frames
//! rendered alone came out no closer (docs/validation.md), so the frozen work going on after the
//! thaw stays the default until both agree.

use super::intake::shader_instructions;
use super::job::Part;
use super::{Core, Pipeline, Rop};
use crate::{TimingError, WarmPort};
use apusim_trace::{Stream, WorkKind};

impl Pipeline {
    /// Finish every job in flight functionally: send each one's accesses not sent yet to
    /// `port`, count its shader instructions not issued yet as warmed (so every instruction
    /// is timed or warmed exactly once), let each render-target tile not yet written update
    /// the frame-rate estimator now, and empty every queue. Returns the work of the items
    /// finished ([`Pipeline::item_work`]), which the warming's budget pays for.
    pub(super) fn flush(&mut self, port: &mut dyn WarmPort) -> Result<u64, TimingError> {
        let cycle = self.stats.cycles;
        // Tiles whose last write is still to come: rasterized (their record) or not yet
        // (their HiZ read, as warming finds a tile's render-target tile).
        let mut rtts: Vec<u64> = self.tiles.iter().flatten().filter_map(|t| t.rtt).collect();
        for &id in &self.window {
            let j = self.job(id);
            if j.item.kind == WorkKind::Tile {
                rtts.extend(j.first_address(Part::Fe, Stream::HiZ).map(|a| a >> 6));
            }
        }
        let mut work = 0;
        for id in 0..self.jobs.len() {
            let Some(j) = self.jobs[id].take() else {
                continue;
            };
            if !self.cfg.ideal {
                for (a, part) in j.unsent() {
                    self.warm_access(a, part, j.item.core, port)?;
                }
            }
            let left =
                shader_instructions(&j.item).saturating_sub(u64::from(j.issued_instructions));
            self.count_warmed(j.item.core, left);
            work += self.item_work(&j.item);
            self.pool.push(j.acc);
        }
        for line in rtts {
            self.estimator.update(line, cycle);
        }
        self.free_jobs.clear();
        self.free_jobs.extend((0..self.jobs.len() as u32).rev());
        for t in &mut self.tiles {
            *t = None;
        }
        self.free_tiles.clear();
        self.free_tiles.extend((0..self.tiles.len() as u32).rev());
        self.window.clear();
        self.to_shade.clear();
        self.fe_next = self.entered;
        self.hiz.clear();
        for r in &mut self.rops {
            *r = Rop::default();
        }
        // A core keeps only what describes it (the samplers it runs, its last stall class);
        // every queue and count of threads goes, whatever the core holds.
        for c in &mut self.cores {
            *c = Core {
                hosts: std::mem::take(&mut c.hosts),
                last: c.last,
                ..Core::default()
            };
        }
        for s in &mut self.samplers {
            s.queue.clear();
        }
        self.bt_queue.clear();
        self.bt_flight.clear();
        self.woken.clear();
        self.timers.clear();
        self.retry_at = None;
        self.busy = 0;
        self.pending.fill(0);
        Ok(work)
    }
}
