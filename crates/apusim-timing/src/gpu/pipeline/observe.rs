//! What the pipeline reports about itself: per-cycle unit conditions for the criticality
//! counters, unit occupancy, whether it has finished, and where it is stuck.

use super::criticality::CritUnit;
use super::Pipeline;

impl Pipeline {
    /// Where the pipeline is stuck, for a deadlock report.
    pub(super) fn stuck(&self) -> String {
        let head = self.window.front().map(|&id| {
            let j = self.job(id);
            format!(
                "{:?} (done {}, left {}, open {})",
                j.item.kind, j.done, j.left, j.open
            )
        });
        format!(
            "render pipeline: window head {}, {} job(s) in flight, {} tile(s) at HiZ, {} read(s) outstanding",
            head.unwrap_or_else(|| "empty".into()),
            self.busy,
            self.hiz.len(),
            self.sent.outstanding
        )
    }

    pub(super) fn finished(&self) -> bool {
        self.source_done && self.window.is_empty() && self.busy == 0
    }

    /// Hand this cycle's per-instance conditions to the criticality counters and clear the
    /// completion flags.
    pub(super) fn observe_units(&mut self, cycle: u64) {
        let Some(crit) = &mut self.crit else { return };
        let sig = &mut self.signals;
        sig[CritUnit::Fe as usize][0] = (self.window.len() > 1, self.fe_done);
        for (r, rop) in self.rops.iter_mut().enumerate() {
            let zs = rop.early.len() + rop.late.len() + rop.zs_flight.len() + rop.late_flight.len();
            let cw = rop.cw.len() + rop.ends.len() + rop.cw_flight.len();
            sig[CritUnit::Zs as usize][r] = (zs > 1, rop.zs_done);
            sig[CritUnit::Cw as usize][r] = (cw > 1, rop.cw_done);
            rop.zs_done = false;
            rop.cw_done = false;
        }
        for (c, core) in self.cores.iter().enumerate() {
            let work = core.resident > 0 || !core.input.is_empty() || !core.vertices.is_empty();
            sig[CritUnit::Sh as usize][c] = (work, self.sh_issued[c]);
            self.sh_issued[c] = false;
        }
        let bt = self.bt_queue.len() + self.bt_flight.len();
        sig[CritUnit::Bt as usize][0] = (bt > 1, self.bt_done);
        self.fe_done = false;
        self.bt_done = false;
        crit.observe(cycle, sig);
    }

    /// Unit occupancy since the last cycle.
    pub(super) fn account_occupancy(&mut self, cycle: u64) {
        let n = self
            .last_cycle
            .map_or(1, |l| cycle.saturating_sub(l))
            .max(1);
        let counters = [
            &mut self.render.fe,
            &mut self.render.zs,
            &mut self.render.sh,
            &mut self.render.tex,
            &mut self.render.cw,
            &mut self.render.bt,
        ];
        for (c, &p) in counters.into_iter().zip(&self.pending) {
            c.occupancy += p * n;
        }
    }
}
