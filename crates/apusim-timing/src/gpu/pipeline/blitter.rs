//! The blitter (BT): lines read, then written, a bounded number in flight.

use super::job::Part;
use super::{Kind, Pipeline};
use crate::{MemPort, Tick};

impl Pipeline {
    /// The blitter: lines leave in order once their reads are back, writing as they go; one
    /// new line starts per cycle.
    pub(super) fn blitter(&mut self, now: Tick, port: &mut dyn MemPort) {
        while let Some(&id) = self.bt_flight.front() {
            if !self.job(id).done {
                break;
            }
            if !self.issue(id, Part::BtWrite, now, false, port) {
                break;
            }
            self.bt_flight.pop_front();
            self.bt_done = true;
            self.pending[Kind::Bt as usize] -= 1;
            self.render.bt.completed += 1;
            self.free(id);
            self.busy -= 1;
        }
        if self.bt_flight.len() >= self.cfg.bt_inflight {
            return;
        }
        let Some(&id) = self.bt_queue.front() else {
            return;
        };
        if !self.issue(id, Part::BtRead, now, true, port) {
            return;
        }
        self.arm(id, now);
        self.bt_queue.pop_front();
        self.bt_flight.push_back(id);
        self.render.bt.busy_cycles += 1;
    }
}
