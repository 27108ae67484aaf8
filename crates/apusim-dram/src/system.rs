//! The memory system: an address mapper in front of one controller per channel, a common
//! clock, and the completion queue through which finished requests flow back to the caller.

use crate::config::DramConfig;
use crate::controller::{CommandRecord, Controller};
use crate::device::ChannelState;
use crate::mapping::{make_mapper, AddressMapper, DecodedAddr};
use crate::request::{Completion, Request, MAX_CYCLE};
use crate::scheduler::SchedHints;
use crate::stats::{AccessStats, ChannelStats, DramReport, RowOutcomes};
use crate::DramError;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

#[derive(Debug, PartialEq, Eq)]
struct Pending(Completion);

impl Ord for Pending {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.0.done, self.0.id).cmp(&(o.0.done, o.0.id))
    }
}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A complete DRAM memory system.
///
/// Usage from a timing model, all times in DRAM cycles:
///
/// ```
/// use apusim_dram::{MemorySystem, Request, presets};
/// let mut mem = MemorySystem::new(presets::preset("reference").unwrap()).unwrap();
/// let mut done = Vec::new();
/// mem.advance_to(100, &mut done);                 // simulate up to cycle 100
/// mem.try_send(Request::read(1, 0x4000, 100)).unwrap(); // arrives at cycle 100
/// while done.is_empty() {
///     let next = mem.next_event().unwrap();
///     mem.advance_to(next.max(mem.now() + 1), &mut done);
/// }
/// assert_eq!(done[0].id, 1);
/// assert_eq!(done[0].latency(), 11 + 11 + 4); // tRCD + tCL + tBURST on an idle bank
/// ```
pub struct MemorySystem {
    cfg: DramConfig,
    mapper: Box<dyn AddressMapper>,
    ctrls: Vec<Controller>,
    now: u64,
    heap: BinaryHeap<Reverse<Pending>>,
    report_completions: bool,
    accepted: u64,
    hints: SchedHints,
}

impl MemorySystem {
    /// Build from a configuration (validated here: impossible timing sets are refused).
    pub fn new(cfg: DramConfig) -> Result<Self, DramError> {
        cfg.validate()?;
        let mapper = make_mapper(&cfg.mapping, &cfg.spec.org)?;
        let ctrls = (0..cfg.spec.org.channels)
            .map(|i| Controller::new(i, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MemorySystem {
            cfg,
            mapper,
            ctrls,
            now: 0,
            heap: BinaryHeap::new(),
            report_completions: true,
            accepted: 0,
            hints: SchedHints::default(),
        })
    }

    /// Channel `ch`'s controller (tests of the controller internals).
    #[cfg(test)]
    pub(crate) fn controller_mut(&mut self, ch: usize) -> &mut Controller {
        &mut self.ctrls[ch]
    }

    /// The configuration in use.
    pub fn config(&self) -> &DramConfig {
        &self.cfg
    }

    /// Current cycle: every decision before it has been made.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Where `addr` lives.
    pub fn decode(&self, addr: u64) -> DecodedAddr {
        self.mapper.map(addr)
    }

    /// The address mapper.
    pub fn mapper(&self) -> &dyn AddressMapper {
        self.mapper.as_ref()
    }

    /// Turn completion reporting off (statistics are still kept); trace runs use this.
    pub fn set_report_completions(&mut self, on: bool) {
        self.report_completions = on;
        for c in &mut self.ctrls {
            c.report_completions = on;
        }
    }

    /// Record every issued command (for checking and debugging).
    pub fn enable_command_log(&mut self) {
        for c in &mut self.ctrls {
            c.log.get_or_insert_with(Vec::new);
        }
    }

    /// The command log of all channels, sorted by cycle then channel (empty unless enabled).
    pub fn command_log(&self) -> Vec<CommandRecord> {
        let mut v: Vec<CommandRecord> = self
            .ctrls
            .iter()
            .flat_map(|c| c.log.iter().flatten().copied())
            .collect();
        v.sort_by_key(|r| (r.cycle, r.channel));
        v
    }

    /// Give the schedulers new hints ([`SchedHints`]: IM-LLC emergency sources, the GPGPU
    /// all-GPU phase, the GPU's frame), effective from the current cycle on every channel.
    /// Schedulers that use hints re-plan; the others never look at them, so their schedules
    /// are the same whatever the hints. Call it whenever the system's view changes (an
    /// interval classification, a frame start, a new progress estimate).
    /// The schedulers' own counters, summed over the channels, in the first channel's order.
    pub fn scheduler_stats(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        for c in &self.ctrls {
            for (k, v) in c.scheduler_stats() {
                match out.iter_mut().find(|(n, _)| n == k) {
                    Some((_, t)) => *t += v,
                    None => out.push((k.to_string(), v)),
                }
            }
        }
        out
    }

    pub fn set_hints(&mut self, hints: SchedHints) {
        self.hints = hints;
        for c in &mut self.ctrls {
            c.set_hints(hints, self.now);
        }
    }

    /// The hints last set ([`MemorySystem::set_hints`]; the defaults before that).
    pub fn hints(&self) -> SchedHints {
        self.hints
    }

    /// Timing state of a channel (read-only).
    pub fn channel_state(&self, channel: usize) -> &ChannelState {
        self.ctrls[channel].device()
    }

    /// Would a request to `addr` find room in its queue now?
    pub fn can_accept(&self, addr: u64, is_write: bool) -> bool {
        let d = self.mapper.map(addr);
        self.ctrls[d.channel as usize].has_room(is_write)
    }

    /// Simulate until a request to `addr` would be accepted (its queue has room, or it can be
    /// forwarded from / merged with a queued write); the clock ends just after the decision
    /// that made room. Returns at once if it would be accepted now.
    pub fn advance_until_accepts(&mut self, addr: u64, is_write: bool, out: &mut Vec<Completion>) {
        if self.ctrls.len() == 1 && !self.report_completions {
            // Fast path of trace runs: step the one controller directly.
            let c = &mut self.ctrls[0];
            while !c.would_accept(addr, is_write) {
                let w = c.next_wake.max(self.now);
                if w == u64::MAX {
                    break;
                }
                c.process(w);
                self.now = w + 1;
            }
            return;
        }
        let ch = self.mapper.map(addr).channel as usize;
        while !self.ctrls[ch].would_accept(addr, is_write) {
            let Some(next) = self.next_event() else { break };
            let next = next.max(self.now);
            self.advance_to(next + 1, out);
        }
    }

    /// Each channel's queues in words (for deadlock reports): reads and writes queued,
    /// whether it drains writes, and the cycle of its next decision.
    pub fn describe_queues(&self) -> String {
        let parts: Vec<String> = self
            .ctrls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let wake = match c.next_wake {
                    u64::MAX => "never".to_string(),
                    w => format!("cycle {w}"),
                };
                format!(
                    "channel {i}: {} reads, {} writes queued{}, next decision {wake}",
                    c.rq.len(),
                    c.wq.len(),
                    if c.write_mode {
                        ", draining writes"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        format!("DRAM at cycle {}: {}", self.now, parts.join("; "))
    }

    /// Steps the controllers have taken for refresh and idle time so far: decisions that
    /// issued a refresh command (PREA or REF) or found nothing to serve, and jumps over
    /// idle stretches. Stepping through idle time would take two per refresh; jumping takes
    /// a few per idle stretch, however long. Not part of the report.
    pub fn idle_steps(&self) -> u64 {
        self.ctrls.iter().map(|c| c.idle_steps).sum()
    }

    /// Requests waiting in the controllers' queues.
    pub fn queued(&self) -> usize {
        self.ctrls.iter().map(|c| c.queued()).sum()
    }

    /// Times any controller has switched into write-drain mode so far.
    pub fn write_drains(&self) -> u64 {
        self.ctrls.iter().map(|c| c.stats.write_drains).sum()
    }

    /// The sums over cycles, up to `cycle`, of the requests in all the controllers' read
    /// queues and in their write queues (gem5's `avgRdQLen` and `avgWrQLen` times the
    /// cycles, summed over channels): a window's mean occupancy is the difference of two
    /// readings over the cycles between them. A `cycle` past [`MemorySystem::now`] extends
    /// the present lengths to it, so a caller whose clock runs ahead of the controllers'
    /// (they are advanced only when something is due) reads at its own time.
    pub fn queue_integrals(&self, cycle: u64) -> (u128, u128) {
        self.ctrls.iter().fold((0, 0), |(r, w), c| {
            (
                r + c.stats.read_queue.integral_at(cycle),
                w + c.stats.write_queue.integral_at(cycle),
            )
        })
    }

    /// Offer a request at the current cycle. Returns it back if its queue is full; the caller
    /// retries later (e.g. after [`MemorySystem::next_event`]).
    ///
    /// # Panics
    ///
    /// If the request's arrival cycle is beyond [`MAX_CYCLE`] (readers of untrusted input
    /// refuse such requests with an error first).
    pub fn try_send(&mut self, req: Request) -> Result<(), Request> {
        assert!(
            req.arrival <= MAX_CYCLE,
            "request {}: arrival cycle {} is beyond the maximum {MAX_CYCLE}",
            req.id,
            req.arrival
        );
        let d = self.mapper.map(req.addr);
        self.ctrls[d.channel as usize].enqueue(req, &d, self.now)?;
        self.accepted += 1;
        Ok(())
    }

    /// The next cycle (>= now) at which a controller makes a decision or a completion is due;
    /// `None` if nothing will ever happen (no refresh, no requests).
    pub fn next_event(&self) -> Option<u64> {
        let w = self
            .ctrls
            .iter()
            .map(|c| c.next_wake)
            .min()
            .unwrap_or(u64::MAX);
        let h = self.heap.peek().map(|p| p.0 .0.done).unwrap_or(u64::MAX);
        let n = w.min(h);
        (n != u64::MAX).then_some(n.max(self.now))
    }

    /// Simulate every cycle before `cycle` and set the clock to it. Completions whose data is
    /// done by `cycle` are appended to `out` in (done, id) order.
    ///
    /// The work does not grow with idle time: a controller with nothing queued jumps over
    /// whole rounds of refreshes at once ([`MemorySystem::idle_steps`] counts the steps).
    ///
    /// # Panics
    ///
    /// If `cycle` is beyond twice [`MAX_CYCLE`]: the clock may run past `MAX_CYCLE` only by
    /// the time the requests queued by then take to complete.
    pub fn advance_to(&mut self, cycle: u64, out: &mut Vec<Completion>) {
        if cycle < self.now {
            return;
        }
        assert!(
            cycle <= 2 * MAX_CYCLE,
            "DRAM clock advanced to cycle {cycle}, beyond twice the maximum {MAX_CYCLE}"
        );
        if self.ctrls.len() == 1 {
            let c = &mut self.ctrls[0];
            c.horizon = cycle;
            while c.next_wake < cycle {
                let w = c.next_wake;
                c.process(w);
            }
        } else {
            for c in &mut self.ctrls {
                c.horizon = cycle;
            }
            loop {
                let mut best = (u64::MAX, 0);
                for (i, c) in self.ctrls.iter().enumerate() {
                    if c.next_wake < best.0 {
                        best = (c.next_wake, i);
                    }
                }
                if best.0 >= cycle {
                    break;
                }
                self.ctrls[best.1].process(best.0);
            }
        }
        self.now = cycle;
        if self.report_completions {
            for c in &mut self.ctrls {
                for done in c.completions.drain(..) {
                    self.heap.push(Reverse(Pending(done)));
                }
            }
            while let Some(p) = self.heap.peek() {
                if p.0 .0.done > cycle {
                    break;
                }
                out.push(self.heap.pop().map(|p| p.0 .0).expect("peeked"));
            }
        }
    }

    /// Run until every queued request has completed; returns the cycle the last data burst
    /// ended. Completions go to `out`.
    ///
    /// # Panics
    ///
    /// If a controller with queued requests has no next decision (it would never finish; a
    /// defect of a scheduler), naming each channel's queues.
    pub fn drain(&mut self, out: &mut Vec<Completion>) -> u64 {
        while self.queued() > 0 {
            let w = self
                .ctrls
                .iter()
                .filter(|c| c.queued() > 0)
                .map(|c| c.next_wake)
                .min()
                .unwrap_or(self.now);
            assert!(
                w != u64::MAX,
                "DRAM cannot finish: {}",
                self.describe_queues()
            );
            let t = w.max(self.now) + 1;
            self.advance_to(t, out);
        }
        let last = self
            .ctrls
            .iter()
            .map(|c| c.stats.last_done)
            .max()
            .unwrap_or(0);
        let t = last.max(self.now);
        self.advance_to(t, out);
        last
    }

    /// Request counters of one source so far, over every channel. Unlike [`Self::report`]
    /// it changes nothing, so it can be read at any moment of a run (windows of a timed run
    /// are differences of two readings).
    pub fn source_stats(&self, source: u8) -> AccessStats {
        let mut acc = AccessStats::default();
        for c in &self.ctrls {
            if let Some(a) = &c.sources[source as usize] {
                acc.merge(a);
            }
        }
        acc
    }

    /// Row-buffer outcomes so far of the requests tagged with `stream`, over every channel:
    /// `[reads, writes]`. Like [`Self::source_stats`] it can be read at any moment.
    pub fn stream_row_outcomes(&self, stream: u8) -> [RowOutcomes; 2] {
        let mut acc = [RowOutcomes::default(); 2];
        for c in &self.ctrls {
            for (a, o) in acc.iter_mut().zip(&c.stream_rows[stream as usize]) {
                a.merge(o);
            }
        }
        acc
    }

    /// Statistics so far. `cycles` in the report is the last data-done cycle (or the current
    /// cycle if later and nothing is queued).
    pub fn report(&mut self) -> DramReport {
        let cycles = self
            .ctrls
            .iter()
            .map(|c| c.stats.last_done)
            .max()
            .unwrap_or(0);
        let settle_at = cycles.max(self.now);
        for c in &mut self.ctrls {
            c.settle(settle_at);
        }
        let mut total = ChannelStats::default();
        let channels: Vec<ChannelStats> = self.ctrls.iter().map(|c| c.stats.clone()).collect();
        for c in &channels {
            total.merge(c);
        }
        let mut sources: Vec<(u8, AccessStats)> = Vec::new();
        for s in 0..=255u8 {
            let mut acc: Option<AccessStats> = None;
            for c in &self.ctrls {
                if let Some(a) = &c.sources[s as usize] {
                    acc.get_or_insert_with(Default::default).merge(a);
                }
            }
            if let Some(a) = acc {
                sources.push((s, a));
            }
        }
        let spec = &self.cfg.spec;
        DramReport {
            preset: self.cfg.preset.clone(),
            spec: spec.name.clone(),
            mapping: self.mapper.name().to_string(),
            scheduler: self.ctrls[0].scheduler_name().to_string(),
            row_policy: match self.cfg.row_policy {
                crate::RowPolicy::Open => "open".into(),
                crate::RowPolicy::Closed => "closed".into(),
            },
            tck_ps: spec.timing.tck_ps,
            peak_gbps: spec.peak_bandwidth_gbps(),
            trace: None,
            format: None,
            requests: self.accepted,
            cycles,
            total,
            channels,
            sources,
        }
    }
}
