//! The shader cores (SH) and their texture samplers: thread admission, program fetch,
//! instruction issue, texture fetches, and where each core's cycles are charged.

use super::job::{Job, Part, Thread};
use super::{sampler_of, Kind, Pipeline, StallClass};
use crate::gpu::StallCycles;
use crate::{MemPort, Tick};
use apusim_trace::WorkKind;

impl Pipeline {
    /// Instructions of a thread: a quad's program, or a triangle's new vertices'.
    fn thread_instructions(j: &Job) -> u32 {
        let n = u32::from(j.item.instructions);
        match j.item.kind {
            WorkKind::Triangle { vertices, .. } => n * u32::from(vertices),
            _ => n,
        }
    }

    fn samples(j: &Job) -> [u64; 2] {
        match j.item.kind {
            WorkKind::Quad { texels, .. } => [
                u64::from(texels[0]).max(j.count(Part::Tex0).min(1) as u64),
                u64::from(texels[1]).max(j.count(Part::Tex1).min(1) as u64),
            ],
            _ => [0; 2],
        }
    }

    /// Make thread `id` ready on core `c`.
    fn ready(&mut self, c: usize, id: u32) {
        let core = &mut self.cores[c];
        if matches!(
            self.jobs[id as usize].as_ref().map(|j| j.item.kind),
            Some(WorkKind::Triangle { .. })
        ) {
            core.ready_vertices.push_back(id);
        } else {
            core.ready.push_back(id);
        }
    }

    /// Move thread `id` on from the phase that just ended.
    fn advance(&mut self, id: u32, now: Tick) {
        let c = self.core_of(id);
        loop {
            let j = self.job_mut(id);
            let total = Self::thread_instructions(j);
            let tex = Self::samples(j);
            let texturing = tex[0] + tex[1] > 0;
            let before = if texturing { total.div_ceil(2) } else { total };
            match j.thread {
                Thread::Fetch => {
                    j.thread = Thread::Before;
                    j.instr_left = before;
                    if before > 0 {
                        self.ready(c, id);
                        return;
                    }
                }
                Thread::Before if texturing => {
                    j.thread = Thread::Texture;
                    j.start_wait(now);
                    j.open = tex.iter().filter(|&&t| t > 0).count() as u32;
                    for (s, &t) in tex.iter().enumerate() {
                        if t > 0 {
                            let k = sampler_of(&self.cfg, c, s);
                            self.samplers[k].queue.push_back((id, s as u8));
                            self.pending[Kind::Tex as usize] += 1;
                        }
                    }
                    return;
                }
                Thread::Before | Thread::Texture => {
                    j.thread = Thread::After;
                    j.instr_left = total - before;
                    if j.instr_left > 0 {
                        self.ready(c, id);
                        return;
                    }
                }
                Thread::After => {
                    j.thread = Thread::Out;
                    self.cores[c].out.push_back(id);
                    return;
                }
                Thread::None | Thread::Out => return,
            }
        }
    }

    /// Every shader core: admit a thread, run the samplers, issue one instruction, and pass
    /// finished threads on.
    pub(super) fn shaders(&mut self, now: Tick, port: &mut dyn MemPort) {
        for id in std::mem::take(&mut self.woken) {
            if self.jobs[id as usize].is_some() {
                self.advance(id, now);
            }
        }
        let cycle = self.domain.cycle(now);
        for c in 0..self.cores.len() {
            let core = &self.cores[c];
            if core.resident == 0 && core.input.is_empty() && core.vertices.is_empty() {
                // An idle core's shared samplers still serve the other cores.
                self.samplers(c, now, port);
                self.account_core(c, cycle, StallClass::Idle);
                continue;
            }
            // Admit one thread, vertices first: it fetches its program.
            let vertex = !self.cores[c].vertices.is_empty();
            let next = if vertex {
                self.cores[c].vertices.front()
            } else {
                self.cores[c].input.front()
            };
            if let Some(&id) = next {
                if self.cores[c].resident < self.cfg.threads
                    && self.issue(id, Part::ShInstr, now, true, port)
                {
                    if vertex {
                        self.cores[c].vertices.pop_front();
                    } else {
                        self.cores[c].input.pop_front();
                    }
                    self.cores[c].resident += 1;
                    self.job_mut(id).thread = Thread::Fetch;
                    self.arm(id, now);
                }
            }
            self.samplers(c, now, port);
            // Issue one instruction of the next ready thread.
            let core = &mut self.cores[c];
            let next = core
                .ready_vertices
                .pop_front()
                .or_else(|| core.ready.pop_front());
            let class = if let Some(id) = next {
                let j = self.job_mut(id);
                let unit = usize::from(j.item.core);
                j.instr_left -= 1;
                j.issued_instructions += 1;
                if j.instr_left == 0 {
                    self.advance(id, now);
                } else {
                    self.ready(c, id);
                }
                self.stats.warp_instructions += 1;
                if unit >= self.unit_instructions.len() {
                    self.unit_instructions.resize(unit + 1, 0);
                }
                self.unit_instructions[unit] += 1;
                self.render.sh.busy_cycles += 1;
                self.sh_issued[c] = true;
                self.progress = true;
                StallClass::Issued
            } else if !self.cores[c].out.is_empty() {
                StallClass::Output
            } else if self.cores[c].resident > 0 {
                StallClass::Memory
            } else {
                StallClass::Idle
            };
            self.account_core(c, cycle, class);
            // Finished threads leave for their next unit.
            while let Some(&id) = self.cores[c].out.front() {
                let j = self.job(id);
                if let WorkKind::Triangle { .. } = j.item.kind {
                    // The vertices are shaded: the front end sets the triangle up.
                    self.job_mut(id).vertices_done = true;
                } else {
                    let r = self.rop_of(id);
                    let late = matches!(j.item.kind, WorkKind::Quad { late_z: true, .. });
                    let q = if late {
                        &mut self.rops[r].late
                    } else {
                        &mut self.rops[r].cw
                    };
                    if q.len() >= self.cfg.rop_queue {
                        break;
                    }
                    q.push_back(id);
                    self.pending[if late { Kind::Zs } else { Kind::Cw } as usize] += 1;
                }
                let core = &mut self.cores[c];
                core.out.pop_front();
                core.resident -= 1;
                self.pending[Kind::Sh as usize] -= 1;
                self.render.sh.completed += 1;
                self.job_mut(id).thread = Thread::None;
                self.progress = true;
            }
        }
    }

    /// The samplers core `c` hosts: each starts its next request when free, sending its
    /// texture lines and filtering its texels at the sampler's rate.
    fn samplers(&mut self, c: usize, now: Tick, port: &mut dyn MemPort) {
        for h in 0..self.cores[c].hosts.len() {
            let k = self.cores[c].hosts[h];
            let sm = &self.samplers[k];
            let Some(&(id, s)) = sm.queue.front() else {
                continue;
            };
            if sm.free_at > now {
                self.retry_at = Some(self.retry_at.map_or(sm.free_at, |r| r.min(sm.free_at)));
                continue;
            }
            let part = if s == 0 { Part::Tex0 } else { Part::Tex1 };
            let unit = self.cfg.shared_samplers.then_some(k as u16);
            if !self.issue_as(id, part, now, false, port, unit) {
                continue;
            }
            let texels = Self::samples(self.job(id))[usize::from(s)];
            let filter = texels.div_ceil(self.cfg.texels_per_cycle).max(1);
            let free_at = now + self.domain.cycles(filter);
            self.samplers[k].queue.pop_front();
            self.samplers[k].free_at = free_at;
            self.pending[Kind::Tex as usize] -= 1;
            self.render.tex.busy_cycles += filter;
            self.render.tex.completed += 1;
            self.render.texels += texels;
            let j = self.job_mut(id);
            j.ready = j.ready.max(free_at);
            j.open -= 1;
            self.arm(id, now);
        }
    }

    /// Charge core `c`'s cycles since it last ran to the class it was in, and this one to
    /// `class`.
    fn account_core(&mut self, c: usize, cycle: u64, class: StallClass) {
        let gap = self.last_cycle.map_or(0, |l| cycle.saturating_sub(l + 1));
        let st = &mut self.core_stalls[c];
        let add = |st: &mut StallCycles, k: StallClass, n: u64| match k {
            StallClass::Idle => st.idle += n,
            StallClass::Issued => st.issued += n,
            StallClass::Memory => st.memory += n,
            StallClass::Output => st.issue += n,
        };
        // A core that slept was waiting: for memory if it had threads, else idle.
        let slept = match self.cores[c].last {
            StallClass::Issued | StallClass::Memory | StallClass::Output => StallClass::Memory,
            StallClass::Idle => StallClass::Idle,
        };
        add(st, slept, gap);
        add(st, class, 1);
        add(&mut self.stats.stalls, slept, gap);
        add(&mut self.stats.stalls, class, 1);
        self.cores[c].last = class;
    }
}
