//! Work intake: the source's render items taken batch by batch and turned into jobs, the
//! job table they live in, and the measure of work the pipeline's progress counts.

use super::job::Job;
use super::{Pipeline, WORK_SCALE};
use crate::TimingError;
use apusim_trace::{WorkItem, WorkKind};

impl Pipeline {
    pub(super) fn job(&self, id: u32) -> &Job {
        self.jobs[id as usize].as_ref().expect("live job")
    }

    pub(super) fn job_mut(&mut self, id: u32) -> &mut Job {
        self.jobs[id as usize].as_mut().expect("live job")
    }

    pub(super) fn free(&mut self, id: u32) {
        if let Some(j) = self.jobs[id as usize].take() {
            self.pool.push(j.acc);
        }
        self.free_jobs.push(id);
    }

    /// The next item of the source as a job, or `None` at the end.
    pub(super) fn next_job(&mut self) -> Result<Option<u32>, TimingError> {
        let Some((item, first)) = self.next_item()? else {
            return Ok(None);
        };
        let w = self.item_work(&item);
        self.work += w;
        self.pace.take(item.kind, w, self.now_cycle);
        let end = self.next_acc;
        let acc = self.pool.pop().unwrap_or_default();
        let job = Job::new(
            item,
            &self.batch.accesses[first..end],
            &self.batch.units[first..end],
            acc,
        );
        let id = match self.free_jobs.pop() {
            Some(id) => {
                self.jobs[id as usize] = Some(job);
                id
            }
            None => {
                self.jobs.push(Some(job));
                self.issued_at.push(0);
                (self.jobs.len() - 1) as u32
            }
        };
        Ok(Some(id))
    }

    /// An item's work as the cycles its busiest unit kind needs for it with every instance
    /// sharing the load (×[`WORK_SCALE`]): one front-end cycle for a command, a triangle's
    /// setup or a tile's rasterization; a quad's depth test and colour write on one of the
    /// ROPs, its program on one of the shader cores and its texels on one of the samplers;
    /// a triangle's vertex programs on the shader cores; a blitter line. Syncs and frame
    /// ends are free. The instruction count alone would make texture-bound, depth-only and
    /// blit passes free, so a sampled run's warming, which goes on at the pace its windows
    /// measured, would race through them.
    pub(super) fn item_work(&self, item: &WorkItem) -> u64 {
        let cores = self.cfg.cores as u64;
        let rops = self.cfg.rops as u64;
        let samplers = self.cfg.samplers as u64 * self.cfg.texels_per_cycle;
        let shader = |instructions: u64| WORK_SCALE * instructions / cores;
        match item.kind {
            WorkKind::Command | WorkKind::Tile | WorkKind::Blit => WORK_SCALE,
            WorkKind::Triangle { vertices, .. } => {
                WORK_SCALE.max(shader(u64::from(item.instructions) * u64::from(vertices)))
            }
            WorkKind::Quad { shaded, texels, .. } => {
                let rop = WORK_SCALE / rops;
                if shaded {
                    let tex = WORK_SCALE * (u64::from(texels[0]) + u64::from(texels[1])) / samplers;
                    rop.max(shader(u64::from(item.instructions))).max(tex)
                } else {
                    rop
                }
            }
            WorkKind::TileEnd | WorkKind::Sync | WorkKind::FrameEnd { .. } => 0,
        }
    }

    /// Make sure `batch` holds the next item; false at the source's end.
    pub(super) fn fill(&mut self) -> Result<bool, TimingError> {
        while self.next_item >= self.batch.items.len() {
            if self.source_done {
                return Ok(false);
            }
            self.batch.clear();
            self.next_item = 0;
            self.next_acc = 0;
            if !self.source.next_batch(&mut self.batch)? {
                self.source_done = true;
                return Ok(false);
            }
            if self.batch.units.len() != self.batch.accesses.len() {
                return Err(TimingError::Config(format!(
                    "{}: render work with {} accesses but {} unit tags",
                    self.source.header().source,
                    self.batch.accesses.len(),
                    self.batch.units.len()
                )));
            }
        }
        Ok(true)
    }

    /// The next item of the source and the index of its first access in `batch` (its
    /// accesses end at `next_acc`), or `None` at the end.
    pub(super) fn next_item(&mut self) -> Result<Option<(WorkItem, usize)>, TimingError> {
        if !self.fill()? {
            return Ok(None);
        }
        let item = self.batch.items[self.next_item];
        self.next_item += 1;
        let n = item.accesses as usize;
        let first = self.next_acc;
        let end = first + n;
        if end > self.batch.accesses.len() {
            return Err(TimingError::Config(format!(
                "{}: a render work item claims {n} accesses past the batch's end",
                self.source.header().source
            )));
        }
        self.next_acc = end;
        Ok(Some((item, first)))
    }

    /// Count `n` shader instructions of the work of shader-core id `unit` as warmed.
    pub(super) fn count_warmed(&mut self, unit: u16, n: u64) {
        let unit = usize::from(unit);
        if n > 0 {
            if unit >= self.unit_instructions.len() {
                self.unit_instructions.resize(unit + 1, 0);
            }
            self.unit_instructions[unit] += n;
        }
        self.stats.warmed_instructions += n;
    }

    pub(super) fn core_of(&self, id: u32) -> usize {
        self.job(id).item.core as usize % self.cfg.cores
    }

    pub(super) fn rop_of(&self, id: u32) -> usize {
        self.job(id).item.rop as usize % self.cfg.rops
    }
}

/// The shader instructions an item's threads run: a triangle's vertex program for each of
/// its vertices, a shaded quad's pixel program; other items run none.
pub(super) fn shader_instructions(item: &WorkItem) -> u64 {
    match item.kind {
        WorkKind::Triangle { vertices, .. } => u64::from(item.instructions) * u64::from(vertices),
        WorkKind::Quad { shaded: true, .. } => u64::from(item.instructions),
        _ => 0,
    }
}
