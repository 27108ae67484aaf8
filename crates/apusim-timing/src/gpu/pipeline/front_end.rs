//! The front end (FE): the window of items whose reads are sent ahead, triangle setup,
//! rasterization through the hierarchical-Z FIFO, and tiles handed to their ROPs.

use super::job::Part;
use super::{FrameSpan, Kind, Pipeline, TileRec};
use crate::{MemPort, Tick, TimingError};
use apusim_trace::{Stream, WorkKind};

impl Pipeline {
    /// The front end: send the reads of items entering the window, then one action at its
    /// head.
    pub(super) fn front_end(
        &mut self,
        now: Tick,
        port: &mut dyn MemPort,
    ) -> Result<(), TimingError> {
        let cycle = self.domain.cycle(now);
        while self.window.len() < self.cfg.fe_window {
            match self.next_job()? {
                Some(id) => {
                    self.window.push_back(id);
                    self.entered += 1;
                    self.pending[Kind::Fe as usize] += 1;
                }
                None => break,
            }
        }
        // Send ahead: the next command or triangle's reads (one item per cycle).
        let head_seq = self.entered - self.window.len() as u64;
        self.fe_next = self.fe_next.max(head_seq);
        while self.fe_next < self.entered {
            let id = self.window[(self.fe_next - head_seq) as usize];
            let kind = self.job(id).item.kind;
            if matches!(kind, WorkKind::Command | WorkKind::Triangle { .. }) {
                if self.issue(id, Part::Fe, now, true, port) {
                    self.arm(id, now);
                    self.fe_next += 1;
                    if matches!(kind, WorkKind::Triangle { vertices: 1.., .. }) {
                        self.to_shade.push_back(id);
                    }
                }
                break;
            }
            self.fe_next += 1;
        }
        // Vertices are shaded as soon as they are fetched, ahead of rasterization.
        while let Some(&id) = self.to_shade.front() {
            if !self.job(id).done {
                break;
            }
            let c = self.core_of(id);
            self.cores[c].vertices.push_back(id);
            self.pending[Kind::Sh as usize] += 1;
            self.job_mut(id).submitted = true;
            self.to_shade.pop_front();
            self.progress = true;
        }
        let Some(&id) = self.window.front() else {
            return Ok(());
        };
        let head_sent = self.fe_next > head_seq;
        let j = self.job(id);
        match j.item.kind {
            WorkKind::Command if head_sent && j.done => self.pop_head(),
            WorkKind::Triangle { vertices, setup } if head_sent && j.done => {
                if vertices > 0 && !j.vertices_done {
                    self.render.fe_vertex_cycles += 1;
                } else {
                    // Setup (and culling) takes the cycle.
                    if setup {
                        self.render.triangles += 1;
                    }
                    self.render.vertices += u64::from(vertices);
                    self.render.fe.busy_cycles += 1;
                    self.pop_head();
                }
            }
            WorkKind::Tile => self.rasterize(id, now, port)?,
            WorkKind::Blit if self.bt_queue.len() < self.cfg.bt_inflight => {
                self.window.pop_front();
                self.pending[Kind::Fe as usize] -= 1;
                self.bt_queue.push_back(id);
                self.pending[Kind::Bt as usize] += 1;
                self.busy += 1;
                self.fe_done = true;
                self.progress = true;
            }
            WorkKind::Sync if self.busy == 0 => self.pop_head(),
            WorkKind::Command | WorkKind::Triangle { .. } if !(head_sent && j.done) => {
                self.render.fe_read_cycles += 1
            }
            WorkKind::FrameEnd { frame } if self.busy == 0 => {
                if self.first_pass {
                    self.frames.push(FrameSpan {
                        frame,
                        start: self.frame_start,
                        end: cycle,
                    });
                    self.stats.launches += 1;
                }
                self.estimator.frame_end(frame, cycle);
                self.frame_start = cycle;
                self.pop_head();
            }
            WorkKind::Sync | WorkKind::FrameEnd { .. } => self.render.fe_sync_cycles += 1,
            WorkKind::Quad { .. } | WorkKind::TileEnd => {
                return Err(TimingError::Config(format!(
                    "{}: render work has a quad or tile end outside a tile",
                    self.source.header().source
                )))
            }
            _ => {}
        }
        Ok(())
    }

    fn pop_head(&mut self) {
        if let Some(id) = self.window.pop_front() {
            self.pending[Kind::Fe as usize] -= 1;
            self.render.fe.completed += 1;
            self.fe_done = true;
            self.free(id);
            self.progress = true;
        }
    }

    /// The tile at the window's head: once its quads and end are in the window, send its
    /// hierarchical-Z read and move it to the HiZ FIFO.
    fn rasterize(&mut self, id: u32, now: Tick, port: &mut dyn MemPort) -> Result<(), TimingError> {
        if self.hiz.len() >= self.cfg.hiz_tiles {
            self.render.fe_hiz_full_cycles += 1;
            return Ok(());
        }
        let mut quads = 0;
        let mut end = None;
        loop {
            match self.window.get(1 + quads) {
                Some(&q) => match self.job(q).item.kind {
                    WorkKind::Quad { .. } => quads += 1,
                    WorkKind::TileEnd => {
                        end = Some(q);
                        break;
                    }
                    _ => break,
                },
                // The tile continues beyond the window: wait for it to fill (a tile has at
                // most 16 quads, far fewer than the window holds).
                None if !self.source_done && self.window.len() >= self.cfg.fe_window => {
                    return Err(TimingError::Config(format!(
                        "timing.render.fe_window = {} is too small for a tile's quads",
                        self.cfg.fe_window
                    )))
                }
                None if !self.source_done => return Ok(()),
                None => break,
            }
        }
        if !self.issue(id, Part::Fe, now, true, port) {
            return Ok(());
        }
        self.arm(id, now);
        let rtt = self
            .job(id)
            .first_address(Part::Fe, Stream::HiZ)
            .map(|a| a >> 6);
        self.fe_done = true;
        self.window.pop_front();
        let mut rec = TileRec {
            quads: Vec::with_capacity(quads),
            end,
            left: quads as u32,
            rtt,
        };
        for _ in 0..quads {
            rec.quads
                .push(self.window.pop_front().expect("counted above"));
        }
        if end.is_some() {
            self.window.pop_front();
        }
        self.pending[Kind::Fe as usize] -= 1 + quads as u64 + u64::from(end.is_some());
        let t = match self.free_tiles.pop() {
            Some(t) => {
                self.tiles[t as usize] = Some(rec);
                t
            }
            None => {
                self.tiles.push(Some(rec));
                (self.tiles.len() - 1) as u32
            }
        };
        self.job_mut(id).tile = t;
        self.hiz.push_back(id);
        self.busy += 1 + quads as u64 + u64::from(end.is_some());
        self.render.tiles += 1;
        self.render.fe.busy_cycles += 1;
        Ok(())
    }

    /// The HiZ FIFO's head: when its read is back and its ROP has room, its quads enter the
    /// depth/stencil queue.
    pub(super) fn dispatch_tile(&mut self) {
        let Some(&id) = self.hiz.front() else { return };
        if !self.job(id).done {
            return;
        }
        let t = self.job(id).tile as usize;
        let r = self.rop_of(id);
        let n = self.tiles[t].as_ref().expect("live tile").quads.len();
        if n > 0 && self.rops[r].early.len() + n > self.cfg.rop_queue.max(n) {
            self.render.hiz_rop_full_cycles += 1;
            return;
        }
        self.hiz.pop_front();
        let rec = self.tiles[t].as_mut().expect("live tile");
        let quads = std::mem::take(&mut rec.quads);
        let end = rec.end;
        // The tile's stencil read goes with its first quad, its pixel shader's instruction
        // fetch with its first shaded quad (or, if none is shaded, its closing writes).
        let tile = self.jobs[id as usize].take().expect("live job");
        if let Some(&q) = quads.first() {
            self.job_mut(q).absorb(&tile, Part::ZsEarly, Part::ZsEarly);
        }
        let shaded = quads
            .iter()
            .copied()
            .find(|&q| matches!(self.job(q).item.kind, WorkKind::Quad { shaded: true, .. }));
        match (shaded, end) {
            (Some(q), _) => self.job_mut(q).absorb(&tile, Part::ShInstr, Part::ShInstr),
            (None, Some(e)) => {
                self.job_mut(e).absorb(&tile, Part::ShInstr, Part::Cw);
                self.job_mut(e).absorb(&tile, Part::ZsEarly, Part::Cw);
            }
            (None, None) => {}
        }
        self.jobs[id as usize] = Some(tile);
        self.free(id);
        self.busy -= 1;
        for &q in &quads {
            self.job_mut(q).tile = t as u32;
            self.rops[r].early.push_back(q);
        }
        if let Some(e) = end {
            self.job_mut(e).tile = t as u32;
        }
        self.pending[Kind::Zs as usize] += n as u64;
        if n == 0 {
            self.tile_done(t);
        }
        self.progress = true;
    }
}
