//! Functional warming (sampled runs): warps run through their instructions without timing,
//! sending every transaction to the caches' warming port.

use super::{crit_flags, Simt, Txn};
use crate::{TimingError, WarmPort};
use apusim_trace::{Op, WarpOp};

/// Functional warming of one memory instruction (`pc`, `op`, `flags`, its transactions
/// `txns`) of global warp `gwarp` on shader core `unit`: every transaction goes to `port`.
fn warm_mem(
    (pc, op, flags): (u64, Op, u8),
    txns: &[(u64, u16)],
    unit: u16,
    gwarp: u32,
    port: &mut dyn WarmPort,
) -> Result<(), TimingError> {
    for &(addr, size) in txns {
        let t = Txn {
            addr,
            size,
            op,
            flags,
            pc,
            warp: 0,
            gwarp,
        };
        port.warm(&t.access(unit))?;
    }
    Ok(())
}

impl Simt {
    /// Functional warming of warp `w` on core `s`: up to `budget` instructions, stopping at
    /// a barrier; its transactions go to `port`. Returns the instructions taken.
    pub(super) fn warm_warp(
        &mut self,
        s: usize,
        w: usize,
        budget: u64,
        c: u64,
        port: &mut dyn WarmPort,
    ) -> Result<u64, TimingError> {
        let mut taken = 0;
        let crit = self.crit.as_deref();
        let sm = &mut self.sms[s];
        let slot = sm.warps[w].block as usize;
        let b = sm.blocks[slot].as_mut().expect("live warp");
        let wc = &mut sm.warps[w];
        while taken < budget && wc.next < wc.end && !wc.at_barrier {
            match b.block.ops[wc.next as usize] {
                WarpOp::Compute(k) | WarpOp::Shared(k) => {
                    let up_to = u32::try_from(budget - taken).unwrap_or(u32::MAX);
                    taken += u64::from(wc.take_run(k, up_to));
                }
                WarpOp::Mem {
                    pc,
                    op,
                    flags,
                    first,
                    count,
                } => {
                    let txns = &b.block.txns[first as usize..(first + count) as usize];
                    let flags = crit_flags(crit, s, pc, flags);
                    warm_mem((pc, op, flags), txns, s as u16, wc.gwarp, port)?;
                    taken += 1;
                    wc.next += 1;
                }
                WarpOp::Barrier => {
                    wc.at_barrier = true;
                    wc.next += 1;
                    taken += 1;
                    b.arrived += 1;
                }
            }
        }
        let release = b.arrived == b.live && b.arrived > 0;
        if release {
            self.release_barrier(s, slot, c);
        } else {
            self.settle(s, w, c);
        }
        Ok(taken)
    }
}
