//! The render output pipelines: depth/stencil (ZS) and colour-write (CW) units, and the
//! retirement of quads and tiles once their last write is done.

use super::job::Part;
use super::{Kind, Pipeline};
use crate::{MemPort, Tick};
use apusim_trace::WorkKind;

impl Pipeline {
    /// Depth/stencil and colour-write units of every ROP.
    pub(super) fn rops(&mut self, now: Tick, port: &mut dyn MemPort) {
        for r in 0..self.rops.len() {
            self.zs(r, now, port);
            self.cw(r, now, port);
        }
    }

    /// Depth/stencil unit `r`: quads leave each of its two in-flight FIFOs (early and late
    /// tests) in order as their accesses return; one quad starts per cycle, a late one first.
    /// The late test has its own FIFO so that quads coming back from shading never wait
    /// behind quads going to shading (which wait for the same shader contexts: a cycle).
    fn zs(&mut self, r: usize, now: Tick, port: &mut dyn MemPort) {
        while let Some(&id) = self.rops[r].late_flight.front() {
            if !self.job(id).done || self.rops[r].cw.len() >= self.cfg.rop_queue {
                break;
            }
            self.rops[r].late_flight.pop_front();
            self.rops[r].cw.push_back(id);
            self.pending[Kind::Cw as usize] += 1;
            self.zs_leave(r);
        }
        while let Some(&id) = self.rops[r].zs_flight.front() {
            let j = self.job(id);
            if !j.done {
                break;
            }
            if matches!(j.item.kind, WorkKind::Quad { shaded: true, .. }) {
                let c = self.core_of(id);
                if self.cores[c].input.len() >= self.cfg.sh_queue {
                    break;
                }
                self.cores[c].input.push_back(id);
                self.pending[Kind::Sh as usize] += 1;
                self.render.shaded_quads += 1;
                self.rops[r].zs_flight.pop_front();
            } else {
                self.rops[r].zs_flight.pop_front();
                self.quad_done(id);
            }
            self.zs_leave(r);
        }
        let rop = &self.rops[r];
        let (late, id) = match (rop.late.front(), rop.early.front()) {
            (Some(&id), _) if rop.late_flight.len() < self.cfg.rop_inflight => (true, id),
            (_, Some(&id)) if rop.zs_flight.len() < self.cfg.rop_inflight => (false, id),
            _ => return,
        };
        let part = if late { Part::ZsLate } else { Part::ZsEarly };
        if !self.issue(id, part, now, true, port) {
            return;
        }
        if let Some(c) = &mut self.crit {
            c.depth_test(late);
        }
        self.arm(id, now);
        let rop = &mut self.rops[r];
        if late {
            rop.late.pop_front();
            rop.late_flight.push_back(id);
        } else {
            rop.early.pop_front();
            rop.zs_flight.push_back(id);
        }
        self.render.zs.busy_cycles += 1;
    }

    /// A quad left a depth/stencil unit.
    fn zs_leave(&mut self, r: usize) {
        self.rops[r].zs_done = true;
        self.pending[Kind::Zs as usize] -= 1;
        self.render.zs.completed += 1;
        self.progress = true;
    }

    fn cw(&mut self, r: usize, now: Tick, port: &mut dyn MemPort) {
        while let Some(&id) = self.rops[r].cw_flight.front() {
            if !self.job(id).done {
                break;
            }
            self.rops[r].cw_flight.pop_front();
            self.rops[r].cw_done = true;
            self.pending[Kind::Cw as usize] -= 1;
            self.render.cw.completed += 1;
            self.progress = true;
            if matches!(self.job(id).item.kind, WorkKind::TileEnd) {
                let t = self.job(id).tile as usize;
                self.free(id);
                self.busy -= 1;
                self.tile_done(t);
            } else {
                self.quad_done(id);
            }
        }
        if self.rops[r].cw_flight.len() >= self.cfg.rop_inflight {
            return;
        }
        let (end, id) = match (self.rops[r].ends.front(), self.rops[r].cw.front()) {
            (Some(&id), _) => (true, id),
            (None, Some(&id)) => (false, id),
            (None, None) => return,
        };
        if !self.issue(id, Part::Cw, now, true, port) {
            return;
        }
        self.arm(id, now);
        let rop = &mut self.rops[r];
        if end {
            rop.ends.pop_front();
        } else {
            rop.cw.pop_front();
        }
        rop.cw_flight.push_back(id);
        self.render.cw.busy_cycles += 1;
    }

    /// Quad `id` is finished.
    fn quad_done(&mut self, id: u32) {
        let t = self.job(id).tile as usize;
        self.free(id);
        self.busy -= 1;
        self.render.quads += 1;
        self.stats.blocks += 1;
        let rec = self.tiles[t].as_mut().expect("live tile");
        rec.left -= 1;
        if rec.left == 0 {
            match rec.end {
                Some(e) => {
                    let r = self.rop_of(e);
                    self.rops[r].ends.push_back(e);
                    self.pending[Kind::Cw as usize] += 1;
                }
                None => self.tile_done(t),
            }
        }
    }

    /// Tile `t`'s last write is done: it has updated its render-target tile.
    pub(super) fn tile_done(&mut self, t: usize) {
        if let Some(line) = self.tiles[t].take().and_then(|r| r.rtt) {
            self.estimator.update(line, self.now_cycle);
        }
        self.free_tiles.push(t as u32);
    }
}
