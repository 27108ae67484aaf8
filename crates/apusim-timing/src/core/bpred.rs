//! Branch prediction of the out-of-order core, as ChampSim's default front end does it: a
//! `bimodal` direction predictor and the `basic_btb` target predictor (ChampSim
//! branch/bimodal, btb/basic_btb, and `O3_CPU::do_predict_branch` in src/ooo_cpu.cc).
//!
//! Branches are trace-driven: the predictor is asked at fetch, and told the trace's outcome
//! at once. A prediction is wrong when the predicted target differs from the trace's (the
//! target of a branch predicted or found not taken is 0) or when a conditional branch's
//! direction differs.
//!
//! - **bimodal**: `entries` 2-bit saturating counters, indexed by `ip % P` with `P` the largest
//!   prime not above `entries` (ChampSim: 16384 counters, `ip % 16381`), starting at 0
//!   (not taken); taken when the counter is 2 or 3; every branch updates its counter.
//! - **BTB**: `sets` × `ways` LRU table of (ip → target, kind); a miss predicts target 0
//!   (not taken). Conditional entries are taken only if the bimodal says so; other kinds
//!   always. Returns are predicted by a 64-entry return stack (the call's ip plus the call
//!   size learnt from earlier returns, as ChampSim's `return_stack`); indirect branches by a
//!   4096-entry table indexed by the ip xor the recent conditional directions (the shape of
//!   ChampSim's `indirect_predictor`).
//! - `perfect`: every branch is predicted right (for studies).

use crate::instr::{BranchKind, Instr};

/// The predictor's verdict on one fetched branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prediction {
    /// Right; `taken` tells whether fetch has to move to the target (ends the fetch group).
    Right { taken: bool },
    /// Wrong: fetch stops until the branch resolves, at decode or at execution.
    Wrong { at_decode: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BtbKind {
    AlwaysTaken,
    Conditional,
    Indirect,
    Return,
}

#[derive(Clone, Copy, Debug)]
struct BtbEntry {
    ip: u64,
    target: u64,
    kind: BtbKind,
    last_use: u64,
}

const RAS_SIZE: usize = 64;
const CALL_SIZE_TRACKERS: usize = 1024;
const INDIRECT_ENTRIES: usize = 4096;
const HISTORY_BITS: u32 = 12;

/// Direction and target prediction.
pub struct BranchPredictor {
    perfect: bool,
    counters: Vec<u8>,
    modulus: u64,
    sets: usize,
    ways: usize,
    btb: Vec<Option<BtbEntry>>,
    clock: u64,
    ras: Vec<u64>,
    call_size: Vec<u64>,
    indirect: Vec<u64>,
    history: u64,
}

/// The largest prime `<= n` (n >= 2), or 1.
fn largest_prime_at_most(n: u64) -> u64 {
    let is_prime = |p: u64| {
        p >= 2
            && (2..)
                .take_while(|d| d * d <= p)
                .all(|d| !p.is_multiple_of(d))
    };
    (2..=n).rev().find(|&p| is_prime(p)).unwrap_or(1)
}

impl BranchPredictor {
    /// A bimodal predictor with `entries` counters and a `sets` × `ways` BTB.
    pub fn bimodal(entries: u64, sets: u64, ways: u64) -> BranchPredictor {
        BranchPredictor {
            perfect: false,
            counters: vec![0; entries as usize],
            modulus: largest_prime_at_most(entries),
            sets: sets as usize,
            ways: ways as usize,
            btb: vec![None; (sets * ways) as usize],
            clock: 0,
            ras: Vec::with_capacity(RAS_SIZE),
            call_size: vec![4; CALL_SIZE_TRACKERS],
            indirect: vec![0; INDIRECT_ENTRIES],
            history: 0,
        }
    }

    /// A predictor that is always right.
    pub fn perfect() -> BranchPredictor {
        let mut p = BranchPredictor::bimodal(2, 1, 1);
        p.perfect = true;
        p
    }

    fn counter(&mut self, ip: u64) -> &mut u8 {
        let i = (ip % self.modulus) as usize % self.counters.len();
        &mut self.counters[i]
    }

    fn btb_set(&self, ip: u64) -> std::ops::Range<usize> {
        let s = (ip as usize) % self.sets;
        s * self.ways..(s + 1) * self.ways
    }

    fn btb_lookup(&mut self, ip: u64) -> Option<BtbEntry> {
        self.clock += 1;
        let now = self.clock;
        let range = self.btb_set(ip);
        let e = self.btb[range].iter_mut().flatten().find(|e| e.ip == ip)?;
        e.last_use = now;
        Some(*e)
    }

    fn btb_update(&mut self, ip: u64, target: u64, kind: BtbKind) {
        self.clock += 1;
        let now = self.clock;
        let range = self.btb_set(ip);
        let set = &mut self.btb[range];
        if let Some(e) = set.iter_mut().flatten().find(|e| e.ip == ip) {
            e.kind = kind;
            if target != 0 {
                e.target = target;
            }
            e.last_use = now;
            return;
        }
        if target == 0 {
            return;
        }
        let victim = set.iter().position(Option::is_none).unwrap_or_else(|| {
            (0..set.len())
                .min_by_key(|&i| set[i].map_or(0, |e| e.last_use))
                .unwrap_or(0)
        });
        set[victim] = Some(BtbEntry {
            ip,
            target,
            kind,
            last_use: now,
        });
    }

    fn indirect_index(&self, ip: u64) -> usize {
        ((ip ^ self.history) as usize) % INDIRECT_ENTRIES
    }

    /// Predict `ins` (a branch), compare with the trace's outcome, and learn it.
    pub fn predict(&mut self, ins: &Instr) -> Prediction {
        if self.perfect {
            return Prediction::Right { taken: ins.taken };
        }
        let ip = ins.ip;
        // ChampSim's basic_btb: (target, always taken) from the BTB, the return stack or the
        // indirect table.
        let (mut target, always) = match self.btb_lookup(ip) {
            None => (0, false),
            Some(e) => match e.kind {
                BtbKind::Return => match self.ras.last() {
                    Some(&call) => (
                        call.wrapping_add(self.call_size[call as usize % CALL_SIZE_TRACKERS]),
                        true,
                    ),
                    None => (0, true),
                },
                BtbKind::Indirect => (self.indirect[self.indirect_index(ip)], true),
                BtbKind::AlwaysTaken => (e.target, true),
                BtbKind::Conditional => (e.target, false),
            },
        };
        let taken_pred = *self.counter(ip) >= 2 || always;
        if !taken_pred {
            target = 0;
        }
        let actual_target = if ins.taken { ins.target } else { 0 };
        let conditional = matches!(ins.branch, BranchKind::Conditional | BranchKind::Other);
        let direction_right = taken_pred == ins.taken;
        let wrong = target != actual_target || (conditional && !direction_right);
        self.learn(ins);
        if wrong {
            Prediction::Wrong {
                at_decode: ins.branch.resolves_at_decode(direction_right),
            }
        } else {
            Prediction::Right { taken: ins.taken }
        }
    }

    fn learn(&mut self, ins: &Instr) {
        let ip = ins.ip;
        let target = if ins.taken { ins.target } else { 0 };
        match ins.branch {
            BranchKind::DirectCall | BranchKind::IndirectCall => {
                if self.ras.len() == RAS_SIZE {
                    self.ras.remove(0);
                }
                self.ras.push(ip);
            }
            BranchKind::Return => {
                if let Some(call) = self.ras.pop() {
                    if target > call {
                        self.call_size[call as usize % CALL_SIZE_TRACKERS] = target - call;
                    }
                }
            }
            _ => {}
        }
        if matches!(ins.branch, BranchKind::Indirect | BranchKind::IndirectCall) {
            let i = self.indirect_index(ip);
            self.indirect[i] = target;
        }
        if ins.branch == BranchKind::Conditional {
            self.history = ((self.history << 1) | u64::from(ins.taken)) & ((1 << HISTORY_BITS) - 1);
        }
        let kind = match ins.branch {
            BranchKind::Indirect | BranchKind::IndirectCall => BtbKind::Indirect,
            BranchKind::Return => BtbKind::Return,
            BranchKind::Conditional => BtbKind::Conditional,
            _ => BtbKind::AlwaysTaken,
        };
        self.btb_update(ip, target, kind);
        let c = self.counter(ip);
        *c = if ins.taken {
            (*c + 1).min(3)
        } else {
            c.saturating_sub(1)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn branch(ip: u64, kind: BranchKind, taken: bool, target: u64) -> Instr {
        let mut i = Instr::plain(1);
        i.ip = ip;
        i.branch = kind;
        i.taken = taken;
        i.target = if taken { target } else { 0 };
        i
    }

    #[test]
    fn champsim_bimodal_index_prime() {
        assert_eq!(largest_prime_at_most(16384), 16381);
        assert_eq!(largest_prime_at_most(2), 2);
    }

    #[test]
    fn a_loop_branch_is_learnt_after_two_takens() {
        let mut p = BranchPredictor::bimodal(16384, 1024, 8);
        let b = branch(0x400040, BranchKind::Conditional, true, 0x400000);
        // Cold: BTB miss and counter 0 -> wrong, found at execution (direction wrong).
        assert_eq!(p.predict(&b), Prediction::Wrong { at_decode: false });
        // Counter 1: still predicts not taken.
        assert_eq!(p.predict(&b), Prediction::Wrong { at_decode: false });
        assert_eq!(p.predict(&b), Prediction::Right { taken: true });
        let exit = branch(0x400040, BranchKind::Conditional, false, 0);
        assert_eq!(p.predict(&exit), Prediction::Wrong { at_decode: false });
    }

    #[test]
    fn direct_jumps_miss_once_and_resolve_at_decode() {
        let mut p = BranchPredictor::bimodal(16384, 1024, 8);
        let j = branch(0x500000, BranchKind::DirectJump, true, 0x600000);
        assert_eq!(p.predict(&j), Prediction::Wrong { at_decode: true });
        assert_eq!(p.predict(&j), Prediction::Right { taken: true });
    }

    #[test]
    fn returns_use_the_return_stack() {
        let mut p = BranchPredictor::bimodal(16384, 1024, 8);
        let call = branch(0x1000, BranchKind::DirectCall, true, 0x8000);
        let ret = branch(0x8010, BranchKind::Return, true, 0x1005);
        p.predict(&call);
        p.predict(&ret); // cold: learns the call size 5
        p.predict(&call);
        assert_eq!(p.predict(&ret), Prediction::Right { taken: true });
    }

    #[test]
    fn perfect_is_always_right() {
        let mut p = BranchPredictor::perfect();
        let b = branch(0x10, BranchKind::Conditional, true, 0x20);
        assert_eq!(p.predict(&b), Prediction::Right { taken: true });
    }
}
