//! Sending a job's accesses to memory (marked critical while the frame rate is below its
//! target) and waking the job when its reads are back.

use super::job::{Part, Thread};
use super::Pipeline;
use crate::{MemPort, Tick, Token};
use std::cmp::Reverse;

impl Pipeline {
    /// Issue job `id`'s part `p` at `now`, its wait started first unless `fresh` is false (a
    /// second part joining the wait) or a refused access is being retried. True when the
    /// whole part went; else it is retried later.
    pub(super) fn issue(
        &mut self,
        id: u32,
        p: Part,
        now: Tick,
        fresh: bool,
        port: &mut dyn MemPort,
    ) -> bool {
        self.issue_as(id, p, now, fresh, port, None)
    }

    /// [`Pipeline::issue`], the accesses carrying unit `unit` when given (a shared
    /// sampler's texture reads).
    pub(super) fn issue_as(
        &mut self,
        id: u32,
        p: Part,
        now: Tick,
        fresh: bool,
        port: &mut dyn MemPort,
        unit: Option<u16>,
    ) -> bool {
        let ideal = self.cfg.ideal;
        let mark = match &self.crit {
            Some(c) => {
                let below = self.below_target(now);
                Some((below && c.critical(p.unit()), !below))
            }
            None => None,
        };
        let j = self.jobs[id as usize].as_mut().expect("live job");
        if fresh && !j.issuing {
            j.start_wait(now);
        }
        j.issuing = true;
        let crit = self.crit.as_mut().zip(mark);
        match j.issue(
            p,
            now,
            Token::from(id),
            port,
            ideal,
            &mut self.sent,
            crit,
            unit,
        ) {
            Ok(()) => {
                j.issuing = false;
                self.issued_at[id as usize] = now;
                self.progress = true;
                true
            }
            Err(t) => {
                if let Some(t) = t {
                    self.retry_at = Some(self.retry_at.map_or(t, |r| r.min(t)));
                }
                false
            }
        }
    }

    /// Nothing more will join job `id`'s wait: it is over when its reads are back.
    pub(super) fn arm(&mut self, id: u32, now: Tick) {
        let j = self.job(id);
        if j.left == 0 && j.open == 0 {
            if j.ready <= now {
                self.wake(id);
            } else {
                self.timers.push(Reverse((j.ready, id)));
            }
        }
    }

    pub(super) fn wake(&mut self, id: u32) {
        let j = self.job_mut(id);
        j.done = true;
        if matches!(j.thread, Thread::Fetch | Thread::Texture) {
            self.woken.push(id);
        }
        self.progress = true;
    }

    /// Is the projected frame rate below the target (or unknown, or no target set)? Accesses
    /// are marked critical only then (gpu-access-criticality §4.2).
    fn below_target(&self, now: Tick) -> bool {
        match self.target_cycles() {
            None => true,
            Some(target) => self
                .estimator
                .projected(self.domain.cycle(now))
                .is_none_or(|f| f > target),
        }
    }

    /// The target frame time in GPU cycles.
    pub(super) fn target_cycles(&self) -> Option<f64> {
        (self.cfg.target_fps > 0.0).then(|| self.hz / self.cfg.target_fps)
    }
}
