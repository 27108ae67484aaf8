//! A scenario builder the schedulers' unit tests share: banks, candidates and the views the
//! controller would derive from them.

use super::*;

/// A scenario for scheduler tests: banks with given open rows and ready times, and
/// candidates (bank, row) in age order. Heads, pending hits and the non-hits' ready cycle
/// are derived like the controller derives them.
#[derive(Clone, Debug)]
pub struct Scene {
    pub banks: Vec<BankView>,
    pub cands: Vec<Candidate>,
    pub occupied: Vec<u64>,
    pub hints: SchedHints,
    /// [`SchedContext::version`]: new at every change made through the builder, unique
    /// across scenes.
    pub version: u64,
}

impl Scene {
    pub fn new(n_banks: usize) -> Self {
        Scene {
            banks: vec![BankView::IDLE; n_banks],
            cands: Vec::new(),
            occupied: vec![0; n_banks.div_ceil(64)],
            hints: SchedHints::default(),
            version: 0,
        }
    }
    /// Open `row` in `bank`; ACT/PRE/column ready at the given cycles.
    pub fn bank(
        mut self,
        bank: usize,
        open_row: Option<u32>,
        act: u64,
        pre: u64,
        col: u64,
    ) -> Self {
        let v = &mut self.banks[bank];
        v.open_row = open_row;
        v.act_ready = act;
        v.pre_ready = pre;
        v.col_ready = col;
        self.derive();
        self
    }
    pub fn streak(mut self, bank: usize, streak: u32) -> Self {
        self.banks[bank].hit_streak = streak;
        self.derive();
        self
    }
    pub fn cand(self, bank: u32, row: u32) -> Self {
        self.req(bank, row, 0, false)
    }
    /// A read of CPU core 1 (youngest so far).
    pub fn cpu(self, bank: u32, row: u32) -> Self {
        self.req(bank, row, 1, false)
    }
    /// A non-critical GPU read.
    pub fn gpu(self, bank: u32, row: u32) -> Self {
        self.req(bank, row, crate::GPU_SOURCE, false)
    }
    /// A critical GPU read.
    pub fn crit(self, bank: u32, row: u32) -> Self {
        self.req(bank, row, crate::GPU_SOURCE, true)
    }
    /// A read from `source` with the given critical flag (id and arrival: its index).
    pub fn req(mut self, bank: u32, row: u32, source: u8, critical: bool) -> Self {
        let id = self.cands.len() as u64;
        self.cands.push(Candidate {
            req: Request::read(id, id * 64, id)
                .with_source(source)
                .with_critical(critical),
            enqueued: id,
            bank,
            row,
            column: 0,
            rank: 0,
            first_outcome: None,
        });
        self.derive();
        self
    }
    fn derive(&mut self) {
        static VERSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.version = VERSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for v in &mut self.banks {
            v.pending_hits = 0;
            v.oldest_hit = NO_CANDIDATE;
            v.oldest_other = NO_CANDIDATE;
        }
        self.occupied.iter_mut().for_each(|w| *w = 0);
        for (i, c) in self.cands.iter().enumerate() {
            self.occupied[c.bank as usize / 64] |= 1 << (c.bank % 64);
            let v = &mut self.banks[c.bank as usize];
            if v.open_row == Some(c.row) {
                v.pending_hits += 1;
                if v.oldest_hit == NO_CANDIDATE {
                    v.oldest_hit = i as u32;
                }
            } else if v.oldest_other == NO_CANDIDATE {
                v.oldest_other = i as u32;
            }
        }
        for v in &mut self.banks {
            v.other_ready = v.non_hit_ready();
        }
    }
    pub fn ctx(&self, now: u64) -> SchedContext<'_> {
        SchedContext {
            now,
            channel: 0,
            write_mode: false,
            read_queue_len: self.cands.len(),
            write_queue_len: 0,
            banks: &self.banks,
            occupied: &self.occupied,
            hints: &self.hints,
            version: self.version,
        }
    }
}

/// What the controller does with a scheduler at a decision: the cycle it would sleep until
/// ([`Scheduler::next_decision`]) and the pick at that cycle.
pub fn plan(
    s: &mut dyn Scheduler,
    ctx: &SchedContext,
    cands: &[Candidate],
) -> Option<(u64, Option<usize>)> {
    let t = s.next_decision(ctx, cands)?;
    let at = SchedContext { now: t, ..*ctx };
    Some((t, s.pick(&at, cands)))
}
