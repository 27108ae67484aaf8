//! The pipeline as a [`GpuModel`]: the cycle step that runs the units in order, completions,
//! functional warming of sampled runs, and the statistics and reports it hands out.

use super::criticality::CritUnit;
use super::intake::shader_instructions;
use super::job;
use super::job::Part;
use super::{sampler_of, CriticalityReport, FrameProgress, FrameSpan, Pipeline, RenderStats};
use crate::gpu::{min_tick, GpuModel, GpuProgram, GpuStats, KernelSpan, StallCycles};
use crate::{Domain, MemPort, Tick, TimingError, Token, Wake, WarmPort};
use apusim_trace::{Access, Stream, WorkKind};
use std::cmp::Reverse;

impl GpuModel for Pipeline {
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError> {
        let cycle = self.domain.cycle(now);
        self.now_cycle = cycle;
        self.progress = false;
        self.retry_at = None;
        while let Some(&Reverse((t, id))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            if self.jobs[id as usize].is_some() {
                self.wake(id);
            }
        }
        if !self.started && !self.frozen {
            // The first frame begins when the pipeline first runs (a sampled run starts it
            // after its first functional warming).
            self.started = true;
            self.frame_start = cycle;
            self.estimator.begin(cycle);
        }
        self.account_occupancy(cycle);
        if !self.frozen {
            self.front_end(now, port)?;
            self.dispatch_tile();
            self.rops(now, port);
            self.shaders(now, port);
            self.blitter(now, port);
        }
        self.observe_units(cycle);
        if cycle >= self.next_sample {
            self.estimator.sample(cycle);
            self.next_sample = cycle + self.cfg.crit_period;
        }
        self.last_cycle = Some(cycle);
        self.stats.cycles = cycle;
        self.stats.transactions = self.sent.reads + self.sent.writes;
        self.stats.memory_instructions = self.stats.transactions;
        self.stats.load_transactions = self.sent.reads;
        self.stats.store_transactions = self.sent.writes;
        if self.finished() {
            if !self.ended {
                self.ended = true;
                self.stats.programs += 1;
                self.first_pass = false;
            }
            return Ok(Wake::Finished);
        }
        if self.progress || !self.woken.is_empty() {
            return Ok(Wake::At(now + self.domain.period));
        }
        let timer = self.timers.peek().map(|r| r.0 .0);
        match min_tick(timer, self.retry_at) {
            Some(t) => Ok(Wake::At(self.domain.edge_at_or_after(t.max(now + 1)))),
            None if self.sent.outstanding > 0 || self.frozen => Ok(Wake::OnCompletion),
            None => Err(TimingError::Deadlock(self.stuck())),
        }
    }

    fn complete(&mut self, token: Token, at: Tick) {
        if token == job::POSTED {
            return;
        }
        let id = token as u32;
        self.sent.outstanding = self.sent.outstanding.saturating_sub(1);
        let issued = self.issued_at.get(id as usize).copied().unwrap_or(at);
        self.stats.loads_done += 1;
        self.stats.load_ticks += at.saturating_sub(issued);
        if let Some(j) = self.jobs.get_mut(id as usize).and_then(|j| j.as_mut()) {
            j.left = j.left.saturating_sub(1);
            j.ready = j.ready.max(at);
            if j.left == 0 && j.open == 0 && !j.issuing {
                self.timers.push(Reverse((j.ready, id)));
            }
        }
    }

    fn stats(&self) -> GpuStats {
        self.stats
    }

    fn domain(&self) -> Domain {
        self.domain
    }

    fn units(&self) -> u16 {
        (2 * self.cfg.cores).max(self.cfg.rops) as u16
    }

    fn restart(&mut self, program: GpuProgram) -> Result<(), TimingError> {
        let GpuProgram::Frames(source) = program else {
            return Err(TimingError::Config(
                "the `pipeline` GPU model was restarted with a GPGPU program".into(),
            ));
        };
        self.source = source;
        self.batch.clear();
        self.next_item = 0;
        self.next_acc = 0;
        self.source_done = false;
        self.ended = false;
        Ok(())
    }

    fn set_frozen(&mut self, frozen: bool) {
        self.frozen = frozen;
    }

    fn measure(&mut self, cycle: u64, open: bool) {
        if open {
            self.pace.open(cycle);
        } else {
            self.pace.close(cycle);
        }
    }

    fn drained(&self) -> bool {
        self.sent.outstanding == 0
    }

    /// The work of the items taken so far (`Pipeline::item_work`).
    fn progress(&self) -> u64 {
        self.work
    }

    /// Functional warming of render work. With `flush_warming`, first the work in the
    /// pipeline when it froze is finished functionally and the pipeline emptied (`flush`):
    /// its accesses not yet sent go to `port`, and its work stands for the cycles it takes at
    /// `n / over` (the front end took it ahead of the back end; the thaw's refill takes as
    /// much again); without, the items in the pipeline go on after the thaw, their remaining
    /// accesses after the warmed ones'. Then the items after them are taken from the source
    /// in order and their accesses sent to `port` in the render trace's order, for the rest
    /// of the next `over` GPU cycles (plus what an earlier warming owed): each item stands
    /// for its work (`Pipeline::item_work`) at the rate its phase of the frame ran at in the
    /// measured windows (`phases`), `n / over` for a phase no window has seen. Their shader instructions count as warmed instructions (the
    /// flushed jobs' not yet issued ones too). Each frame end among the warmed items ends its
    /// frame at the cycle its items so far stand for, and each tile updates the frame-rate
    /// estimator there as its last write would; the unit counters ([`RenderStats`]) and the
    /// access counts stay those of the detailed cycles, and warmed accesses carry no
    /// criticality marks. Warming ends at a tile's end, not inside a tile. A frame end still
    /// in the window is taken in detail first: warming stops there and the next warming
    /// makes up the difference.
    fn warm(&mut self, n: u64, over: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError> {
        let c = self.stats.cycles;
        let all = n as f64 / over.max(1) as f64;
        let budget = (over + std::mem::take(&mut self.warm_debt)) as f64;
        let at = |elapsed: f64| c + (over as f64 * elapsed.min(budget) / budget.max(1.0)) as u64;
        let frame_waiting = self
            .window
            .iter()
            .any(|&id| matches!(self.job(id).item.kind, WorkKind::FrameEnd { .. }));
        let mut taken = 0;
        // The frozen stretch is not occupancy: the units resume where they stopped.
        self.last_cycle = Some(c + over);
        if frame_waiting {
            self.warm_debt = budget as u64;
            return Ok(0);
        }
        let flushed = if self.cfg.flush_warming {
            self.flush(port)?
        } else {
            0
        };
        let mut elapsed = if all > 0.0 { flushed as f64 / all } else { 0.0 };
        loop {
            // Never stop inside a tile: its quads and closing writes go with it, as the front
            // end hands a tile on only with them.
            if elapsed >= budget
                && !(self.fill()?
                    && matches!(
                        self.batch.items[self.next_item].kind,
                        WorkKind::Quad { .. } | WorkKind::TileEnd
                    ))
            {
                break;
            }
            let Some((item, first)) = self.next_item()? else {
                break;
            };
            let accesses = first..self.next_acc;
            if !self.cfg.ideal {
                let units = &self.batch.units[accesses.clone()];
                for (a, &u) in self.batch.accesses[accesses.clone()].iter().zip(units) {
                    self.warm_access(*a, Part::of(a, u), item.core, port)?;
                }
            }
            match item.kind {
                WorkKind::Tile => {
                    let hiz = self.batch.accesses[accesses]
                        .iter()
                        .find(|a| a.stream == Stream::HiZ);
                    if let Some(a) = hiz {
                        self.estimator.update(a.addr >> 6, at(elapsed));
                    }
                }
                WorkKind::FrameEnd { frame } => {
                    let end = at(elapsed);
                    if self.first_pass {
                        self.frames.push(FrameSpan {
                            frame,
                            start: self.frame_start,
                            end,
                        });
                        self.stats.launches += 1;
                    }
                    self.estimator.frame_end(frame, end);
                    self.frame_start = end;
                }
                _ => {}
            }
            self.count_warmed(item.core, shader_instructions(&item));
            let w = self.item_work(&item);
            elapsed += self.pace.warm(item.kind, w, all);
            self.work += w;
            taken += w;
        }
        if !self.source_done {
            self.warm_debt = (budget - elapsed).max(0.0) as u64;
        }
        Ok(taken)
    }

    fn core_stalls(&self) -> Vec<StallCycles> {
        self.core_stalls.clone()
    }

    /// Instructions issued per shader core, indexed by the `unit` of its instruction fetches:
    /// the shader-core id its work carries (`WorkItem::core`, the renderer's
    /// `(tx % 8) + 8 (ty % 8)` for a tile's quads, `n % 64` for the n-th vertex batch), which
    /// is core `c`'s index `c` with the renderer's 64 cores (`shader_cores` = 64); with fewer
    /// cores, core `c` runs the work of every id `k` with `k % shader_cores = c` and entry `k`
    /// counts the instructions issued for that work. Ids no work carries stay 0.
    ///
    /// A core's texture reads carry its samplers' units instead, `2c` and `2c + 1` (with
    /// shared samplers, the sampler's index), which are other cores' ids (and ROP ids below
    /// 16; unit 0 is also the front end's and the blitter's). A core is still reported under one unit only, its own id: under both of
    /// its sampler units the default sampled pair (0, 1) would be core 0 twice, whose equal
    /// counts make TAP's CPI delta 0 and its verdict "caching not beneficial" whatever the
    /// policies did (tap §3.1); under its even sampler unit alone every odd id (`pol2_core` =
    /// `helm_high_core` = 1, and one of each rotated pair, tap §3.1.4) would never report and
    /// neither policy would decide. The cost: on 3D work the sampled policies reach a sampled
    /// core's instruction fetches and whatever else carries its id (sampler `c`'s reads, which
    /// are core `c / 2`'s), not its own texture reads, so the comparison is coarser than on
    /// GPGPU work, where every access of a core carries the core's id.
    fn core_instructions(&self) -> Vec<u64> {
        self.unit_instructions.clone()
    }

    /// Threads ready to issue (vertex threads and quads), indexed like
    /// [`GpuModel::core_instructions`]: by the shader-core id of their work, the core's own
    /// index with 64 cores. HeLM reads it per access by `unit` (drp §2.2), so a texture read
    /// of core `c` is judged by the ready threads of core `2c` or `2c + 1`, for the reason
    /// given there.
    fn ready_warps(&self) -> Vec<u32> {
        let mut ready = vec![0u32; self.unit_instructions.len()];
        for core in &self.cores {
            for &id in core.ready_vertices.iter().chain(&core.ready) {
                let Some(j) = self.jobs[id as usize].as_ref() else {
                    continue;
                };
                let unit = usize::from(j.item.core);
                if unit >= ready.len() {
                    ready.resize(unit + 1, 0);
                }
                ready[unit] += 1;
            }
        }
        ready
    }

    fn kernels(&self) -> &[KernelSpan] {
        &[]
    }

    fn pc_stalls(&self) -> Vec<(u64, u64)> {
        Vec::new()
    }

    fn frames(&self) -> &[FrameSpan] {
        &self.frames
    }

    fn render_stats(&self) -> Option<RenderStats> {
        Some(self.render)
    }

    fn set_frequency(&mut self, hz: f64) {
        self.hz = hz;
    }

    fn criticality(&self) -> Option<CriticalityReport> {
        Some(CriticalityReport {
            counters: self.crit.as_ref().map(|c| c.counters).unwrap_or_default(),
            estimates: self.estimator.estimates().to_vec(),
            learned: self.estimator.learned().cloned(),
            relearned: self.estimator.relearned(),
            bottlenecks: self.crit.as_ref().map_or_else(Vec::new, |c| {
                CritUnit::ALL
                    .into_iter()
                    .filter(|&u| c.bottlenecks()[u as usize])
                    .map(|u| u.name().to_string())
                    .collect()
            }),
        })
    }

    fn frame_progress(&self) -> Option<FrameProgress> {
        let cycle = self.last_cycle?;
        Some(FrameProgress {
            elapsed: self.estimator.elapsed(cycle),
            projected: self.estimator.projected(cycle)?,
            progress: self.estimator.progress()?,
            learned: self.estimator.learned()?.cycles as f64,
            target: self.target_cycles(),
        })
    }
}

impl Pipeline {
    /// Warm access `a` of part `part` of work for shader core `core`: a shared sampler's
    /// texture reads carry its index as their unit, as in detailed runs.
    pub(super) fn warm_access(
        &self,
        a: Access,
        part: Part,
        core: u16,
        port: &mut dyn WarmPort,
    ) -> Result<(), TimingError> {
        if self.cfg.shared_samplers && matches!(part, Part::Tex0 | Part::Tex1) {
            let core = usize::from(core) % self.cfg.cores;
            let s = usize::from(part == Part::Tex1);
            let unit = sampler_of(&self.cfg, core, s) as u16;
            port.warm(&Access { unit, ..a })
        } else {
            port.warm(&a)
        }
    }
}
