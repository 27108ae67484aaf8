//! Issue on a shader core: the scoreboard and barriers that decide which warps are ready, the
//! warp scheduler (`lrr`, `gto`) that picks among them each issue slot, and where the cycles
//! of a core that does not issue are charged (including the criticality hardware's counters).

use super::{charge, Cat, Simt, Txn};
use apusim_trace::{Access, Op, WarpOp};

impl Simt {
    /// Recompute whether warp `w` of core `s` may issue, noting when it starts waiting for
    /// its loads' data.
    pub(super) fn refresh(&mut self, s: usize, w: usize, c: u64) {
        let sm = &mut self.sms[s];
        let wc = &mut sm.warps[w];
        let bit = 1u128 << w;
        if !wc.live || wc.at_barrier || wc.next >= wc.end {
            sm.ready &= !bit;
            return;
        }
        let b = sm.blocks[wc.block as usize].as_ref().expect("live warp");
        let op = b.block.ops[wc.next as usize];
        let is_load =
            matches!(op, WarpOp::Mem { op: Op::Read, flags, .. } if flags & Access::MODIFY == 0);
        if wc.pending == 0 || is_load {
            sm.ready |= bit;
        } else {
            sm.ready &= !bit;
            wc.waiting_since.get_or_insert(c);
        }
    }

    /// Issue warp `w`'s next instruction on core `s`; false if its memory instruction found
    /// the load/store unit full.
    fn issue(&mut self, s: usize, w: usize, c: u64) -> bool {
        let lsu_entries = self.lsu_entries;
        let sm = &mut self.sms[s];
        let wc = sm.warps[w];
        let slot = wc.block as usize;
        let b = sm.blocks[slot].as_mut().expect("live warp");
        let op = b.block.ops[wc.next as usize];
        let wc = &mut sm.warps[w];
        match op {
            WarpOp::Compute(n) | WarpOp::Shared(n) => {
                wc.take_run(n, 1);
            }
            WarpOp::Mem {
                pc,
                op,
                flags,
                first,
                count,
            } => {
                if sm.lsu.len() >= lsu_entries {
                    return false;
                }
                let txns = &b.block.txns[first as usize..(first + count) as usize];
                for &(addr, size) in txns {
                    let t = Txn {
                        addr,
                        size,
                        op,
                        flags,
                        pc,
                        warp: w as u8,
                        gwarp: wc.gwarp,
                    };
                    if t.returns_data() {
                        wc.pending += 1;
                    } else {
                        wc.stores += 1;
                    }
                    sm.lsu.push_back(t);
                }
                self.stats.memory_instructions += 1;
                self.stats.transactions += u64::from(count);
                if op == Op::Read {
                    self.stats.load_transactions += u64::from(count);
                } else {
                    self.stats.store_transactions += u64::from(count);
                }
                wc.next += 1;
            }
            WarpOp::Barrier => {
                wc.at_barrier = true;
                wc.next += 1;
                b.arrived += 1;
                if b.arrived == b.live {
                    self.stats.warp_instructions += 1;
                    self.sms[s].issued += 1;
                    self.release_barrier(s, slot, c);
                    return true;
                }
            }
        }
        self.stats.warp_instructions += 1;
        self.sms[s].issued += 1;
        self.settle(s, w, c);
        true
    }

    /// After warp `w`'s state changed: retire it if it is done, else refresh its readiness.
    pub(super) fn settle(&mut self, s: usize, w: usize, c: u64) {
        let wc = self.sms[s].warps[w];
        if wc.live && wc.next >= wc.end && wc.pending == 0 && wc.stores == 0 && !wc.at_barrier {
            let sm = &mut self.sms[s];
            sm.warps[w].live = false;
            sm.ready &= !(1u128 << w);
            sm.free_warps.push(w as u8);
            sm.resident -= 1;
            let slot = wc.block as usize;
            let b = sm.blocks[slot].as_mut().expect("live warp");
            b.warps.retain(|&x| x as usize != w);
            b.live -= 1;
            if b.live == 0 {
                self.finish_block(s, slot, c);
            } else if b.arrived == b.live && b.arrived > 0 {
                // The warps still live all wait at the barrier.
                self.release_barrier(s, slot, c);
            }
        } else {
            self.refresh(s, w, c);
        }
    }

    /// Every live warp of block `slot` on core `s` has arrived at its barrier: all go on.
    pub(super) fn release_barrier(&mut self, s: usize, slot: usize, c: u64) {
        let sm = &mut self.sms[s];
        let b = sm.blocks[slot].as_mut().expect("resident block");
        b.arrived = 0;
        let ws = b.warps.clone();
        for &x in &ws {
            sm.warps[x as usize].at_barrier = false;
        }
        for x in ws {
            self.settle(s, x as usize, c);
        }
    }

    /// One issue slot of core `s`: pick up to `issue_width` ready warps and issue.
    pub(super) fn issue_slot(&mut self, s: usize, c: u64) {
        let slot = c / self.issue_cycles;
        let ic = self.issue_cycles;
        {
            let sm = &mut self.sms[s];
            if slot > sm.next_slot {
                let n = (slot - sm.next_slot) * ic;
                charge(&mut sm.stalls, sm.cat, n);
                if let Some(k) = self.crit.as_deref_mut() {
                    k.account(s, sm.cat == Cat::Memory, true, n);
                }
            }
            sm.next_slot = slot + 1;
        }
        let mut issued = 0;
        let mut lsu_full = false;
        let mut tried: u128 = 0;
        while issued < self.issue_width {
            let cand = self.sms[s].ready & !tried;
            let Some(w) = self.pick(s, cand) else {
                break;
            };
            tried |= 1u128 << w;
            if self.issue(s, w, c) {
                issued += 1;
                self.sms[s].last = w;
            } else {
                lsu_full = true;
            }
        }
        let cat = self.classify(s, lsu_full);
        let sm = &mut self.sms[s];
        if issued > 0 {
            sm.stalls.issued += ic;
        } else {
            charge(&mut sm.stalls, cat, ic);
        }
        if let Some(k) = self.crit.as_deref_mut() {
            // InputStall: nothing dispatched for pending operands (the scoreboard);
            // OutputStall: no instruction committed, where an instruction commits when it
            // issues (gpu-access-criticality §4.1.2).
            k.account(s, issued == 0 && cat == Cat::Memory, issued == 0, ic);
        }
        sm.cat = cat;
    }

    /// gpu-access-criticality §4.1.2's periodic evaluation, if one is due at cycle `c`: the
    /// issue slots each core slept through are accounted first, to what it was doing when
    /// it fell asleep (as [`Simt::issue_slot`] would charge them).
    pub(super) fn evaluate_criticality(&mut self, c: u64) {
        let ic = self.issue_cycles;
        let Some(k) = self.crit.as_deref_mut().filter(|k| k.due(c)) else {
            return;
        };
        let slot = c / ic;
        for (s, sm) in self.sms.iter_mut().enumerate() {
            if slot > sm.next_slot {
                let n = (slot - sm.next_slot) * ic;
                charge(&mut sm.stalls, sm.cat, n);
                k.account(s, sm.cat == Cat::Memory, true, n);
                sm.next_slot = slot;
            }
        }
        k.evaluate(c);
    }

    /// The next warp the scheduler takes among `cand` on core `s`.
    fn pick(&self, s: usize, cand: u128) -> Option<usize> {
        if cand == 0 {
            return None;
        }
        let sm = &self.sms[s];
        if self.gto {
            if cand & (1u128 << sm.last) != 0 {
                return Some(sm.last);
            }
            let mut m = cand;
            let mut best: Option<(u64, usize)> = None;
            while m != 0 {
                let w = m.trailing_zeros() as usize;
                m &= m - 1;
                let age = sm.warps[w].age;
                if best.is_none_or(|(a, _)| age < a) {
                    best = Some((age, w));
                }
            }
            return best.map(|b| b.1);
        }
        // Loose round robin: the first ready warp after the last one that issued.
        let start = (sm.last + 1) % self.warps_per_sm;
        let hi = cand & (!0u128 << start);
        let m = if hi != 0 { hi } else { cand };
        Some(m.trailing_zeros() as usize)
    }

    /// What core `s`'s cycles go to while it issues nothing.
    fn classify(&self, s: usize, lsu_full: bool) -> Cat {
        let sm = &self.sms[s];
        if sm.resident == 0 {
            return Cat::Idle;
        }
        if lsu_full || sm.ready != 0 {
            return Cat::Issue;
        }
        let live = || sm.warps.iter().filter(|w| w.live);
        // Data a warp waits for comes first: warps at a barrier wait for those warps.
        if live().any(|w| w.pending > 0) {
            Cat::Memory
        } else if live().any(|w| w.at_barrier) {
            Cat::Barrier
        } else {
            // Finished warps waiting for their stores' acknowledgements.
            Cat::Memory
        }
    }
}
