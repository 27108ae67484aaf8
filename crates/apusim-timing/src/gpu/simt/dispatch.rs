//! Thread-block dispatch: blocks of the current launch placed on shader cores while they
//! have room, and retired when their last warp ends.

use super::{BlockCtx, KernelSpan, Simt, WarpCtx};
use crate::TimingError;
use apusim_trace::{BlockItem, LaunchInfo, ThreadBlock};

impl Simt {
    /// Whether a block of `l` fits on core `s` now; an error if it never can.
    fn fits(&self, s: usize, l: &LaunchInfo) -> Result<bool, TimingError> {
        let wpb = l.warps_per_block() as usize;
        let regs = l.registers.saturating_mul(l.threads);
        if wpb > self.warps_per_sm
            || l.shared_bytes > self.shared_per_sm
            || (self.regs_per_sm > 0 && regs > self.regs_per_sm)
        {
            return Err(TimingError::Config(format!(
                "{}: launch {} needs {wpb} warps, {} scratchpad bytes and {regs} registers per \
                 block; a shader core has {} warps, {} bytes and {} registers \
                 (timing.gpu warps_per_sm, shared_bytes_per_sm, registers_per_sm)",
                self.name(),
                l.index,
                l.shared_bytes,
                self.warps_per_sm,
                self.shared_per_sm,
                self.regs_per_sm
            )));
        }
        let sm = &self.sms[s];
        Ok(sm.free_warps.len() >= wpb
            && sm.blocks.iter().any(Option::is_none)
            && sm.shared_used + l.shared_bytes <= self.shared_per_sm
            && (self.regs_per_sm == 0 || sm.regs_used + regs <= self.regs_per_sm))
    }

    /// Place blocks of the current launch while they fit, at most one per core unless
    /// `any_number` (functional warming).
    pub(super) fn dispatch(&mut self, c: u64, any_number: bool) -> Result<(), TimingError> {
        let n = self.sms.len();
        let mut placed = vec![false; n];
        loop {
            if self.waiting.is_none() && !self.ended {
                self.waiting = self.source.next_item()?;
                self.ended = self.waiting.is_none();
            }
            match self.waiting.take() {
                None => return Ok(()),
                Some(BlockItem::Launch(l)) => {
                    // The source names a launch only after the last block of the one before,
                    // so no block resident means that launch has finished.
                    if self.running > 0 {
                        self.waiting = Some(BlockItem::Launch(l));
                        return Ok(());
                    }
                    self.launch = Some(l);
                    self.finished_blocks = 0;
                    if self.first_pass {
                        self.kernels.push(KernelSpan {
                            launch: l.index,
                            blocks: l.blocks,
                            threads: l.threads,
                            start: c,
                            end: c,
                        });
                    }
                }
                Some(BlockItem::Block(b)) => {
                    let Some(l) = self.launch else {
                        return Err(TimingError::Config(format!(
                            "{}: a thread block came before any launch",
                            self.name()
                        )));
                    };
                    let mut target = None;
                    for k in 0..n {
                        let s = (self.rr + k) % n;
                        if (any_number || !placed[s]) && self.fits(s, &l)? {
                            target = Some(s);
                            break;
                        }
                    }
                    let Some(s) = target else {
                        self.waiting = Some(BlockItem::Block(b));
                        return Ok(());
                    };
                    placed[s] = true;
                    // More may fit next cycle.
                    self.room = true;
                    self.rr = (s + 1) % n;
                    self.place(s, b, &l, c);
                }
            }
        }
    }

    fn place(&mut self, s: usize, block: ThreadBlock, l: &LaunchInfo, c: u64) {
        let regs = l.registers.saturating_mul(l.threads);
        let sm = &mut self.sms[s];
        let slot = sm.blocks.iter().position(Option::is_none).expect("fits");
        let mut warps = Vec::with_capacity(block.warps());
        let mut live = 0;
        for w in 0..block.warps() {
            let r = block.warp_range(w);
            let ws = sm.free_warps.pop().expect("fits");
            self.ages += 1;
            sm.warps[ws as usize] = WarpCtx {
                live: !r.is_empty(),
                block: slot as u8,
                next: r.start as u32,
                end: r.end as u32,
                rem: 0,
                pending: 0,
                stores: 0,
                at_barrier: false,
                age: self.ages,
                gwarp: block.warp_base.wrapping_add(w as u32),
                waiting_since: None,
            };
            if r.is_empty() {
                sm.free_warps.push(ws);
            } else {
                live += 1;
                warps.push(ws);
            }
        }
        sm.resident += live;
        sm.shared_used += l.shared_bytes;
        sm.regs_used += regs;
        sm.blocks[slot] = Some(BlockCtx {
            block,
            warps: warps.clone(),
            live,
            arrived: 0,
            shared: l.shared_bytes,
            regs,
        });
        self.running += 1;
        if live == 0 {
            self.finish_block(s, slot, c);
        }
        for w in warps {
            self.refresh(s, w as usize, c);
        }
    }

    pub(super) fn finish_block(&mut self, s: usize, slot: usize, c: u64) {
        let sm = &mut self.sms[s];
        let b = sm.blocks[slot].take().expect("resident block");
        sm.shared_used -= b.shared;
        sm.regs_used -= b.regs;
        self.running -= 1;
        self.finished_blocks += 1;
        self.stats.blocks += 1;
        self.room = true;
        if let Some(l) = self.launch {
            if self.finished_blocks == l.blocks {
                self.stats.launches += 1;
                if self.first_pass {
                    if let Some(k) = self.kernels.last_mut() {
                        k.end = c;
                    }
                }
            }
        }
        self.source.recycle(b.block);
    }
}
