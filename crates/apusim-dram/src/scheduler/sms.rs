//! Staged Memory Scheduling (SMS; Ausavarungnirun et al., "Staged Memory Scheduling:
//! Achieving High Performance and Scalability in Heterogeneous Systems", ISCA 2012), as
//! gpu-access-criticality §6.1.4 and §6.2 compare against it in two variants, `sms-0.9`
//! (shortest job first with probability 0.9) and `sms-0` (always round-robin); `sms` is the
//! same scheduler with its parameters (`p` defaults to 0.9, SMS's own choice).
//!
//! SMS splits the controller into three stages, modelled over the controller's queue:
//!
//! 1. **Batch formation.** Each source's requests that are still in this stage form its FIFO
//!    in arrival order. The run of them at its head that goes to one row (bank and row) is the
//!    source's forming batch. The batch is ready when the source has a later request to
//!    another row, when the source's FIFO is full (`cpu_fifo` / `gpu_fifo` requests in this
//!    stage), or when its oldest request has waited `age_*` DRAM cycles. SMS makes the age
//!    threshold depend on the source's memory intensity so that light applications are not
//!    delayed: here low-intensity CPU sources use `age_low` (0: their requests are ready at
//!    once, SMS's bypass of light applications), medium `age_medium`, high `age_high`, and
//!    GPU-side sources `age_gpu`. Intensity is measured, for want of instruction counts, as
//!    the requests of the source served per 1000 DRAM cycles in the last interval of
//!    `interval` cycles: below `rate_low` low, below `rate_high` medium, else high (the
//!    defaults 5 and 50 are what 1 and 10 misses per kilo-instruction come to for a 4 GHz
//!    core at an IPC of 1 against an 800 MHz DDR3-1600 clock; sources with no requests in
//!    the last interval are low).
//! 2. **Batch scheduler.** It moves one batch at a time, whole, into the per-bank FIFOs of
//!    stage 3. When it is free and batches are ready it draws a number (a pure function of
//!    `seed` and its count of selections): with probability `p` it takes the ready batch of
//!    the source with the fewest requests in the controller (all stages; shortest job first,
//!    ties to the older batch), otherwise the ready batch of the next source after the last
//!    one chosen in round-robin order of source ids. A batch moves while its bank's FIFO has
//!    room (`bank_fifo` requests); when it is full the batch scheduler waits.
//! 3. **DRAM command scheduler.** Per-bank FIFOs, served in order (no reordering within a
//!    bank: a row conflict at a FIFO's head is precharged even if a later request of the FIFO
//!    hits the open row); among the banks whose head's next command is ready, the head that
//!    entered stage 3 first issues.
//!
//! The paper's transfer of one request per cycle from stage 2 to stage 3 is not modelled:
//! a batch scheduler decision moves its batch at once, and decisions happen whenever the
//! controller decides (every state change is committed in `on_issue`; `pick` computes the
//! same moves without keeping them). The thresholds and FIFO sizes are parameters; their
//! defaults (ages 0/50/200/800, source FIFOs of 10 and 20 entries, bank FIFOs of 16) follow
//! SMS's description as far as it could be consulted here and are otherwise this
//! implementation's choice (see docs/policies.md).

use super::intervals::{interval_param, ServedCounts};
use super::ranked::unit_draw;
use super::{Candidate, RowStatus, SchedContext, Scheduler};
use apusim_registry::{ParamKind, ParamSpec, Params};

/// Parameters of `sms`, `sms-0.9` (`p` 0.9) and `sms-0` (`p` 0).
const fn params(p: &'static str) -> [ParamSpec; 13] {
    const fn int(
        name: &'static str,
        default: &'static str,
        unit: &'static str,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Int {
                min: 0,
                max: 1 << 40,
            },
            default,
            unit,
            doc,
        }
    }
    const fn size(name: &'static str, default: &'static str, doc: &'static str) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Int { min: 1, max: 4096 },
            default,
            unit: "requests",
            doc,
        }
    }
    [
        ParamSpec {
            name: "p",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: p,
            unit: "",
            doc: "probability that the batch scheduler picks shortest job first (else round-robin)",
        },
        int("seed", "1", "", "seed of the batch scheduler's draws"),
        interval_param("length of the intervals over which source intensity is measured"),
        size("cpu_fifo", "10", "a CPU source's batch is ready when this many of its requests wait for batching"),
        size("gpu_fifo", "20", "a GPU-side source's batch is ready when this many of its requests wait for batching"),
        size("bank_fifo", "16", "capacity of each per-bank FIFO of the DRAM command stage"),
        int("age_low", "0", "DRAM cycles", "age at which a low-intensity CPU source's batch is ready"),
        int("age_medium", "50", "DRAM cycles", "age at which a medium-intensity CPU source's batch is ready"),
        int("age_high", "200", "DRAM cycles", "age at which a high-intensity CPU source's batch is ready"),
        int("age_gpu", "800", "DRAM cycles", "age at which a GPU-side source's batch is ready"),
        ParamSpec {
            name: "rate_low",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: "5.0",
            unit: "requests/kcycle",
            doc: "a CPU source served fewer requests per 1000 DRAM cycles is low-intensity",
        },
        ParamSpec {
            name: "rate_high",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: "50.0",
            unit: "requests/kcycle",
            doc: "a CPU source served at least this many requests per 1000 DRAM cycles is high-intensity",
        },
        ParamSpec {
            name: "bypass_low",
            kind: ParamKind::Bool,
            default: "true",
            unit: "",
            doc: "low-intensity CPU requests skip the batch scheduler and enter their bank FIFO directly",
        },
    ]
}

/// Parameters of `sms` (`p` 0.9).
pub const SMS_PARAMS: [ParamSpec; 13] = params("0.9");
/// Parameters of `sms-0` (`p` 0).
pub const SMS_0_PARAMS: [ParamSpec; 13] = params("0.0");

/// The stage state of one queue (reads or writes), in step with its candidates.
#[derive(Clone, Debug, Default)]
struct Stages {
    /// Per candidate of the queue (same index): 0 while in batch formation, else the order in
    /// which it entered its bank's FIFO.
    seq: Vec<u64>,
    next_seq: u64,
    /// The batch being moved: its source and how many of its requests are still to move.
    serving: Option<(u8, u32)>,
    /// The source chosen last (round-robin position).
    last: u8,
    /// Batch selections so far: the counter of the draws.
    draws: u64,
}

/// A source's requests in batch formation, as one pass over the queue finds them.
#[derive(Clone, Copy, Debug)]
struct Source {
    id: u8,
    /// Its requests in the controller (all stages).
    inflight: u32,
    /// Its requests still in batch formation.
    waiting: u32,
    /// Index of its oldest waiting request.
    head: usize,
    /// Length of the run at the head of its FIFO going to the head's row.
    run: u32,
    /// The run is still growing (no other row seen since the head).
    open: bool,
}

#[derive(Clone, Debug)]
pub struct Sms {
    name: &'static str,
    p: f64,
    seed: u64,
    cpu_fifo: u32,
    gpu_fifo: u32,
    bank_fifo: u32,
    /// Age thresholds: low, medium, high CPU; GPU side.
    ages: [u64; 4],
    rate_low: f64,
    rate_high: f64,
    bypass_low: bool,
    counts: ServedCounts,
    /// Read queue, write queue.
    queues: [Stages; 2],
    /// Scratch: the stages of a speculative decision, per-bank FIFO occupancy, sources, bank
    /// FIFO heads.
    spec: Stages,
    occupancy: Vec<u32>,
    sources: Vec<Source>,
    heads: Vec<Option<(u64, usize)>>,
}

/// Intensity category of a CPU source (index into [`Sms::ages`]).
const LOW: usize = 0;
const MEDIUM: usize = 1;
const HIGH: usize = 2;
const GPU: usize = 3;

impl Sms {
    /// The scheduler registered as `name`, with validated parameters `p`.
    pub fn new(name: &'static str, p: &Params) -> Self {
        Sms {
            name,
            p: p.float("p"),
            seed: p.int("seed"),
            cpu_fifo: p.int("cpu_fifo") as u32,
            gpu_fifo: p.int("gpu_fifo") as u32,
            bank_fifo: p.int("bank_fifo") as u32,
            ages: [
                p.int("age_low"),
                p.int("age_medium"),
                p.int("age_high"),
                p.int("age_gpu"),
            ],
            rate_low: p.float("rate_low"),
            rate_high: p.float("rate_high"),
            bypass_low: p.bool("bypass_low"),
            counts: ServedCounts::new(p.int("interval")),
            queues: [Stages::default(), Stages::default()],
            spec: Stages::default(),
            occupancy: Vec::new(),
            sources: Vec::new(),
            heads: Vec::new(),
        }
    }

    /// Intensity category of `source` at cycle `now`.
    fn category(&self, source: u8, now: u64) -> usize {
        if source >= crate::GPU_SOURCE {
            return GPU;
        }
        let Some((counts, _)) = self.counts.history_at(now) else {
            return LOW;
        };
        let rate = f64::from(counts[source as usize]) * 1000.0 / self.counts.len() as f64;
        if rate < self.rate_low {
            LOW
        } else if rate < self.rate_high {
            MEDIUM
        } else {
            HIGH
        }
    }

    /// Age at which a batch of `source` is ready at `now`.
    fn age(&self, source: u8, now: u64) -> u64 {
        self.ages[self.category(source, now)]
    }

    /// Does a request of `source` skip the batch scheduler at `now`?
    fn bypasses(&self, source: u8, now: u64) -> bool {
        self.bypass_low && self.category(source, now) == LOW
    }

    /// Batch-formation FIFO capacity of `source`.
    fn fifo(&self, source: u8) -> u32 {
        if source >= crate::GPU_SOURCE {
            self.gpu_fifo
        } else {
            self.cpu_fifo
        }
    }

    /// The sources with requests in batch formation in `st` (into `self.sources`).
    fn scan_sources(sources: &mut Vec<Source>, st: &Stages, cands: &[Candidate]) {
        sources.clear();
        for (i, c) in cands.iter().enumerate() {
            let id = c.req.source;
            let k = match sources.iter().position(|s| s.id == id) {
                Some(k) => k,
                None => {
                    sources.push(Source {
                        id,
                        inflight: 0,
                        waiting: 0,
                        head: usize::MAX,
                        run: 0,
                        open: false,
                    });
                    sources.len() - 1
                }
            };
            let s = &mut sources[k];
            s.inflight += 1;
            if st.seq[i] != 0 {
                continue;
            }
            s.waiting += 1;
            if s.head == usize::MAX {
                s.head = i;
                s.run = 1;
                s.open = true;
            } else if s.open {
                let h = &cands[s.head];
                if h.bank == c.bank && h.row == c.row {
                    s.run += 1;
                } else {
                    s.open = false;
                }
            }
        }
    }

    /// Is source `s`'s forming batch ready at `now`?
    fn ready_batch(&self, s: &Source, cands: &[Candidate], now: u64) -> bool {
        s.waiting > 0
            && (s.waiting > s.run
                || s.waiting >= self.fifo(s.id)
                || now.saturating_sub(cands[s.head].enqueued) >= self.age(s.id, now))
    }

    /// Apply to `st` the stage moves the batch scheduler makes at `now`: bypassing requests
    /// enter their bank FIFO, then batches move one at a time while one is ready and its
    /// bank FIFO has room.
    fn advance(&mut self, st: &mut Stages, ctx: &SchedContext, cands: &[Candidate]) {
        let now = ctx.now;
        debug_assert!(st.seq.len() <= cands.len());
        st.seq.resize(cands.len(), 0);
        let mut occ = std::mem::take(&mut self.occupancy);
        occ.clear();
        occ.resize(ctx.banks.len(), 0);
        for (c, &q) in cands.iter().zip(&st.seq) {
            occ[c.bank as usize] += u32::from(q != 0);
        }
        // Light sources' requests bypass batching (room permitting), oldest first.
        let mut last = None;
        for (i, c) in cands.iter().enumerate() {
            let b = c.bank as usize;
            if st.seq[i] != 0 || occ[b] >= self.bank_fifo {
                continue;
            }
            let src = c.req.source;
            let bypass = match last {
                Some((s, by)) if s == src => by,
                _ => {
                    let by = self.bypasses(src, now);
                    last = Some((src, by));
                    by
                }
            };
            if bypass {
                st.next_seq += 1;
                st.seq[i] = st.next_seq;
                occ[b] += 1;
            }
        }
        let mut sources = std::mem::take(&mut self.sources);
        loop {
            if let Some((src, left)) = st.serving {
                let next = (0..cands.len()).find(|&i| st.seq[i] == 0 && cands[i].req.source == src);
                let Some(i) = next else {
                    st.serving = None;
                    continue;
                };
                let b = cands[i].bank as usize;
                if occ[b] >= self.bank_fifo {
                    break;
                }
                st.next_seq += 1;
                st.seq[i] = st.next_seq;
                occ[b] += 1;
                st.serving = (left > 1).then_some((src, left - 1));
                continue;
            }
            Self::scan_sources(&mut sources, st, cands);
            sources.retain(|s| self.ready_batch(s, cands, now));
            if sources.is_empty() {
                break;
            }
            let u = unit_draw(self.seed, st.draws);
            st.draws += 1;
            let chosen = if u < self.p {
                sources.iter().min_by_key(|s| (s.inflight, s.head))
            } else {
                let after = st.last;
                sources
                    .iter()
                    .min_by_key(|s| s.id.wrapping_sub(after).wrapping_sub(1))
            }
            .copied()
            .expect("a ready batch");
            st.last = chosen.id;
            st.serving = Some((chosen.id, chosen.run));
        }
        self.sources = sources;
        self.occupancy = occ;
    }

    /// The candidate the DRAM command stage issues at `ctx.now` from the stages in `spec`:
    /// among the bank FIFO heads whose command is ready, the one that entered stage 3 first.
    fn dcs_pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        self.fill_heads(ctx, cands);
        self.heads
            .iter()
            .flatten()
            .filter(|&&(_, i)| ctx.ready(&cands[i]))
            .min()
            .map(|&(_, i)| i)
    }

    /// Per bank, the (seq, index) of its FIFO's head in the stages in `spec` (into `heads`).
    fn fill_heads(&mut self, ctx: &SchedContext, cands: &[Candidate]) {
        let heads = &mut self.heads;
        heads.clear();
        heads.resize(ctx.banks.len(), None);
        for (i, (c, &q)) in cands.iter().zip(&self.spec.seq).enumerate() {
            if q != 0 {
                let h = &mut heads[c.bank as usize];
                if h.is_none_or(|(hq, _)| q < hq) {
                    *h = Some((q, i));
                }
            }
        }
    }

    /// The served queue's stages.
    fn queue(&self, ctx: &SchedContext) -> &Stages {
        &self.queues[usize::from(ctx.write_mode)]
    }

    /// The stages a decision at `ctx.now` works from (committed state plus this cycle's
    /// moves), in the scratch `spec`.
    fn speculate(&mut self, ctx: &SchedContext, cands: &[Candidate]) {
        let mut st = std::mem::take(&mut self.spec);
        st.clone_from(self.queue(ctx));
        self.advance(&mut st, ctx, cands);
        self.spec = st;
    }

    /// Earliest cycle `>= ctx.now` anything could issue, from the stages in `spec`: a bank
    /// FIFO head becoming ready, a forming batch reaching its age, or the intensity
    /// categories changing at the next interval.
    fn next_from_spec(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        self.fill_heads(ctx, cands);
        let mut t = self
            .heads
            .iter()
            .flatten()
            .map(|&(_, i)| ctx.ready_at(&cands[i]).max(ctx.now))
            .min()
            .unwrap_or(u64::MAX);
        let mut sources = std::mem::take(&mut self.sources);
        Self::scan_sources(&mut sources, &self.spec, cands);
        for s in sources.iter().filter(|s| s.waiting > 0) {
            let due = cands[s.head]
                .enqueued
                .saturating_add(self.age(s.id, ctx.now));
            if due > ctx.now {
                t = t.min(due);
            }
        }
        if sources.iter().any(|s| s.waiting > 0) {
            t = t.min(self.counts.next_boundary(ctx.now));
        }
        self.sources = sources;
        (t != u64::MAX).then_some(t)
    }

    /// Test view: the stage-3 order of each candidate after the moves at `ctx.now`.
    #[cfg(test)]
    fn staged(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Vec<u64> {
        self.speculate(ctx, cands);
        self.spec.seq.clone()
    }
}

impl Scheduler for Sms {
    fn name(&self) -> &'static str {
        self.name
    }
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        self.speculate(ctx, cands);
        self.dcs_pick(ctx, cands)
    }
    fn next_decision(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        self.speculate(ctx, cands);
        self.next_from_spec(ctx, cands)
    }
    /// Commits the stage moves of this decision, counts served requests per source for the
    /// intensity categories, and drops the issued request from its stage state when its
    /// column command leaves the queue.
    fn on_issue(&mut self, ctx: &SchedContext, cands: &[Candidate], picked: usize) {
        self.counts.roll(ctx.now);
        let w = usize::from(ctx.write_mode);
        let mut st = std::mem::take(&mut self.queues[w]);
        self.advance(&mut st, ctx, cands);
        debug_assert!(st.seq[picked] != 0, "issued a request not in its bank FIFO");
        let c = &cands[picked];
        if ctx.status(c) == RowStatus::Hit {
            self.counts.record(c.req.source);
            st.seq.remove(picked);
        }
        self.queues[w] = st;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;
    use toml::Table;

    fn sms(name: &str, set: &[(&str, toml::Value)]) -> Sms {
        let e = crate::scheduler::scheduler_entry(name).unwrap();
        let mut t = Table::new();
        for (k, v) in set {
            t.insert(k.to_string(), v.clone());
        }
        Sms::new(e.name, &e.params(&t).unwrap())
    }

    fn int(v: i64) -> toml::Value {
        toml::Value::Integer(v)
    }

    #[test]
    fn variants_differ_in_p() {
        assert_eq!(sms("sms", &[]).p, 0.9);
        assert_eq!(sms("sms-0.9", &[]).p, 0.9);
        assert_eq!(sms("sms-0", &[]).p, 0.0);
        assert_eq!(sms("SMS_0", &[]).name, "sms-0");
    }

    #[test]
    fn a_row_change_closes_a_batch() {
        // GPU requests (age 800) to row 1, row 1, row 2 of bank 0, then one to row 5 of bank 1.
        let mut s = sms("sms", &[]);
        let sc = Scene::new(8).gpu(0, 1).gpu(0, 1).gpu(0, 2);
        // The run (row 1, row 1) is closed by the request to row 2, which waits.
        assert_eq!(s.staged(&sc.ctx(3), &sc.cands), vec![1, 2, 0]);
        assert_eq!(s.pick(&sc.ctx(3), &sc.cands), Some(0));
        // A lone batch waits for its age: nothing to issue before cycle 800.
        let sc = Scene::new(8).gpu(0, 1);
        assert_eq!(s.staged(&sc.ctx(3), &sc.cands), vec![0]);
        assert_eq!(s.pick(&sc.ctx(3), &sc.cands), None);
        assert_eq!(
            crate::scheduler::test_util::plan(&mut s, &sc.ctx(3), &sc.cands),
            Some((800, Some(0)))
        );
        assert_eq!(s.next_decision(&sc.ctx(3), &sc.cands), Some(800));
    }

    #[test]
    fn age_thresholds_follow_intensity() {
        // CPU source 1, no history: low intensity, bypasses batching at once.
        let mut s = sms("sms", &[("bypass_low", false.into())]);
        let sc = Scene::new(8).cpu(0, 1);
        assert_eq!(s.staged(&sc.ctx(0), &sc.cands), vec![1], "age_low 0");
        // Served 10 requests per 1000 cycles in the last interval: medium, 50 cycles.
        let mut s = sms("sms", &[("interval", int(1000))]);
        let busy = Scene::new(8).bank(0, Some(1), 0, 0, 0).cpu(0, 1);
        for t in 0..10 {
            s.on_issue(&busy.ctx(t), &busy.cands, 0);
        }
        let sc = Scene::new(8).req(2, 3, 1, false);
        let mut sc = sc;
        sc.cands[0].enqueued = 1000;
        assert_eq!(s.category(1, 1000), MEDIUM);
        assert_eq!(s.staged(&sc.ctx(1049), &sc.cands), vec![0]);
        assert_eq!(s.next_decision(&sc.ctx(1000), &sc.cands), Some(1050));
        assert_ne!(s.staged(&sc.ctx(1050), &sc.cands), vec![0]);
        // Sixty per 1000: high, 200 cycles; the GPU side always 800.
        for t in 10..60 {
            s.on_issue(&busy.ctx(t), &busy.cands, 0);
        }
        assert_eq!(s.category(1, 1000), HIGH);
        assert_eq!(s.age(1, 1000), 200);
        assert_eq!(s.age(0x80, 1000), 800);
        assert_eq!(s.category(1, 2500), LOW, "an interval without requests");
    }

    #[test]
    fn a_full_source_fifo_closes_a_batch() {
        let mut s = sms("sms", &[("gpu_fifo", int(3))]);
        let sc = Scene::new(8).gpu(0, 1).gpu(0, 1);
        assert_eq!(s.staged(&sc.ctx(5), &sc.cands), vec![0, 0]);
        let sc = sc.gpu(0, 1);
        assert_eq!(s.staged(&sc.ctx(5), &sc.cands), vec![1, 2, 3]);
    }

    /// Source 1 (CPU, three requests) and source 2 (CPU, one younger request), both with a
    /// ready batch for bank 0 (different rows; low intensity, age 0, no bypass).
    fn two_sources(p: f64) -> (Sms, Scene) {
        let s = sms(
            "sms",
            &[("p", toml::Value::Float(p)), ("bypass_low", false.into())],
        );
        let sc = Scene::new(8)
            .req(0, 1, 1, false)
            .req(0, 1, 1, false)
            .req(0, 1, 1, false)
            .req(0, 2, 2, false);
        (s, sc)
    }

    #[test]
    fn shortest_job_first_with_p_one() {
        let (mut s, sc) = two_sources(1.0);
        // Source 2 has fewer requests: its batch enters the bank FIFO first.
        assert_eq!(s.staged(&sc.ctx(0), &sc.cands), vec![2, 3, 4, 1]);
        assert_eq!(s.pick(&sc.ctx(0), &sc.cands), Some(3));
    }

    #[test]
    fn round_robin_with_p_zero() {
        let (mut s, sc) = two_sources(0.0);
        // Round-robin from source 0: source 1 first, then 2.
        assert_eq!(s.staged(&sc.ctx(0), &sc.cands), vec![1, 2, 3, 4]);
        assert_eq!(s.pick(&sc.ctx(0), &sc.cands), Some(0));
        // After source 1 was chosen last, source 2 comes before it.
        s.queues[0].last = 1;
        assert_eq!(s.staged(&sc.ctx(0), &sc.cands), vec![2, 3, 4, 1]);
        // And after 2, wrapping around, source 1.
        s.queues[0].last = 2;
        assert_eq!(s.staged(&sc.ctx(0), &sc.cands), vec![1, 2, 3, 4]);
    }

    #[test]
    fn bank_fifos_are_served_in_order() {
        // Bank 0 has row 2 open. A batch of source 1 to row 1 entered first, then one of
        // source 2 to row 2 (hits): the conflict at the head goes first.
        let mut s = sms("sms", &[("p", toml::Value::Float(0.0))]);
        let sc = Scene::new(8)
            .bank(0, Some(2), 0, 0, 0)
            .req(0, 1, 1, false)
            .req(0, 2, 2, false);
        assert_eq!(s.pick(&sc.ctx(0), &sc.cands), Some(0));
        // A full bank FIFO stalls the batch scheduler.
        let mut s = sms(
            "sms",
            &[
                ("bank_fifo", int(1)),
                ("bypass_low", false.into()),
                ("p", toml::Value::Float(0.0)),
            ],
        );
        let sc = Scene::new(8)
            .req(0, 1, 1, false)
            .req(0, 1, 1, false)
            .req(1, 5, 2, false);
        let staged = s.staged(&sc.ctx(0), &sc.cands);
        assert_eq!(staged[1], 0, "the second of the batch waits for room");
        assert_ne!(staged[0], 0);
        assert_eq!(
            staged[2], 0,
            "a batch for another bank waits behind the stalled one"
        );
    }

    #[test]
    fn issuing_commits_the_moves_and_forgets_served_requests() {
        let mut s = sms("sms", &[]);
        let sc = Scene::new(8)
            .bank(0, Some(1), 0, 0, 0)
            .gpu(0, 1)
            .gpu(0, 1)
            .gpu(0, 2);
        let x = sc.ctx(0);
        let i = s.pick(&x, &sc.cands).unwrap();
        assert_eq!(i, 0);
        s.on_issue(&x, &sc.cands, i);
        assert_eq!(s.queues[0].seq, vec![2, 0]);
        assert_eq!(s.queues[0].draws, 1);
        // The next pick continues with the committed state.
        let sc = Scene::new(8).bank(0, Some(1), 0, 0, 0).gpu(0, 1).gpu(0, 2);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(0));
    }
}
