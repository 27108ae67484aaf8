//! The GPU memory side of adaptive-gpu-l1-bypassing.txt Table 1 as a functional model: one L1
//! data cache per SM (selected by the access's `unit` modulo the SM count), a shared L2 and a
//! memory-side L3, all pseudo-LRU with 64-byte lines, then memory.
//!
//! Write policy (the paper says GPU caches serve "as write-combining buffers" and that nw
//! "write\[s\] through data to global memory", §2.1 and §5.2; Table 1's AMD GCN L1 is
//! write-through): the L1 is **write-through, write-no-allocate** — a store hit updates the
//! line and goes on to the L2, a store miss goes to the L2 without filling; predictions are
//! made on read misses only (only they can fill). The L2 and L3 are **write-back,
//! write-allocate without fetch on a write miss** (GPU L2s keep byte masks and merge partial
//! writes; our choice where the paper is silent). A dirty L2 victim is written into the L3, a
//! dirty L3 victim to memory.
//!
//! A read miss in an L1 is handled as Listing 1: the L1's predictor predicts, the request goes
//! to the L2 with the prediction, the L2 returns the line's old bypassBit and stores the new
//! one, and the L1 bypasses only if it predicted so and the bypassBit was clear.

use crate::config::{GpuConfig, PredictorKind};
use crate::footprint::Footprint;
use crate::levels::{L1Policy, L2Policy, L2Request, Predictor};
use crate::metrics::{Derived, Metrics};
use crate::predictor::{build_predictor, CounterPredictor, PcPredictor, Storage};
use anyhow::{bail, Result};
use apusim_cache::policies::plru::Plru;
use apusim_cache::{Cache, Geometry, Outcome, Policy, PolicyContext, WritePolicy};
use apusim_trace::{Access, AccessSource, Agent, Op, Stream};
use serde::{Deserialize, Serialize};

/// Recently bypassed lines of one L1, for the SDBP false-positive definition: per set, the
/// last `ways` bypassed lines with the set's insertion count at the time.
struct Ghost {
    ways: usize,
    entries: Vec<(u64, u64)>,
    head: Vec<u8>,
    insertions: Vec<u64>,
}

impl Ghost {
    fn new(sets: usize, ways: usize) -> Ghost {
        Ghost {
            ways,
            entries: vec![(u64::MAX, 0); sets * ways],
            head: vec![0; sets],
            insertions: vec![0; sets],
        }
    }
    /// `line` was bypassed less than `ways` insertions into `set` ago.
    #[inline]
    fn would_be_resident(&self, set: usize, line: u64) -> bool {
        let now = self.insertions[set];
        self.entries[set * self.ways..(set + 1) * self.ways]
            .iter()
            .any(|&(l, t)| l == line && now - t <= self.ways as u64)
    }
    #[inline]
    fn bypassed(&mut self, set: usize, line: u64) {
        let h = self.head[set] as usize;
        self.entries[set * self.ways + h] = (line, self.insertions[set]);
        self.head[set] = ((h + 1) % self.ways) as u8;
        self.insertions[set] += 1;
    }
    #[inline]
    fn filled(&mut self, set: usize) {
        self.insertions[set] += 1;
    }
}

/// The outcome of one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// The workload (kernel name or trace file).
    pub workload: String,
    /// Configuration label, e.g. `16K+pc`.
    pub config: String,
    pub predictor: PredictorKind,
    pub l1_geometry: String,
    pub sms: usize,
    pub metrics: Metrics,
    pub derived: Derived,
    pub storage: Storage,
    pub storage_bytes_per_l1: f64,
    pub storage_bytes_l2: f64,
    pub storage_bytes_total: f64,
}

/// The GPU memory side of one configuration.
pub struct GpuHierarchy {
    cfg: GpuConfig,
    line_bits: u32,
    sms: usize,
    l1: Vec<Cache<L1Policy>>,
    ghosts: Vec<Ghost>,
    l2: Cache<L2Policy>,
    l3: Cache<Plru>,
    use_bypass_bit: bool,
    m: Metrics,
    /// Per-line reference counts (saturating at 2) when footprint tracking is on.
    footprint: Option<Footprint>,
}

fn ctx(g: &Geometry) -> PolicyContext {
    PolicyContext::for_geometry(g)
}

impl GpuHierarchy {
    /// Build the hierarchy of `cfg`; `track_footprint` counts per-line references (Fig. 1's
    /// accessed-once series; costs memory proportional to the footprint).
    pub fn new(cfg: &GpuConfig, track_footprint: bool) -> Result<GpuHierarchy> {
        cfg.validate()?;
        let (g1, g2, g3) = (cfg.l1_geometry()?, cfg.l2_geometry()?, cfg.l3_geometry()?);
        let lines1 = g1.lines() as usize;
        let through = WritePolicy {
            write_back: false,
            write_allocate: false,
        };
        let mut l1 = Vec::with_capacity(cfg.sms);
        for _ in 0..cfg.sms {
            let pred = match cfg.l1.predictor {
                PredictorKind::None => Predictor::None,
                kind => build_predictor(kind.name(), &cfg.l1.predictor_params(), lines1)?,
            };
            l1.push(Cache::new(
                g1,
                through,
                false,
                L1Policy::new(&ctx(&g1), pred)?,
            )?);
        }
        let back = WritePolicy::default();
        Ok(GpuHierarchy {
            line_bits: g1.line.trailing_zeros(),
            sms: cfg.sms,
            ghosts: (0..cfg.sms)
                .map(|_| Ghost::new(g1.sets() as usize, g1.ways as usize))
                .collect(),
            l1,
            l2: Cache::new(g2, back, false, L2Policy::build(&ctx(&g2))?)?,
            l3: Cache::new(g3, back, false, Plru::build(&ctx(&g3))?)?,
            use_bypass_bit: cfg.l1.predictor == PredictorKind::Pc && cfg.l1.pc.bypass_bit,
            m: Metrics::default(),
            footprint: track_footprint.then(Footprint::default),
            cfg: cfg.clone(),
        })
    }

    /// The L1 of `sm`, for tests.
    pub fn l1(&self, sm: usize) -> &Cache<L1Policy> {
        &self.l1[sm]
    }
    /// The L2, for tests.
    pub fn l2(&self) -> &Cache<L2Policy> {
        &self.l2
    }
    /// Counters so far (L1 eviction classes and table accesses are summed by [`Self::finish`]).
    pub fn metrics(&self) -> &Metrics {
        &self.m
    }

    /// Simulate one record.
    #[inline]
    pub fn access(&mut self, req: &Access) -> Result<()> {
        if req.agent != Agent::GPU {
            self.m.ignored += 1;
            return Ok(());
        }
        let bits = self.line_bits;
        let first = req.addr >> bits;
        let last = req.addr.saturating_add(req.size.max(1) as u64 - 1) >> bits;
        for line in first..=last {
            let sub = Access {
                addr: if line == first {
                    req.addr
                } else {
                    line << bits
                },
                ..*req
            };
            if req.stream == Stream::ShaderData {
                let sm = req.unit as usize % self.sms;
                self.l1_access(sm, line, &sub)?;
            } else {
                self.m.other_accesses += 1;
                self.l2_access(&sub)?;
            }
        }
        Ok(())
    }

    fn l1_access(&mut self, sm: usize, line: u64, req: &Access) -> Result<()> {
        let m = &mut self.m;
        m.l1_accesses += 1;
        let write = req.op.is_write();
        if write {
            m.l1_writes += 1;
        } else {
            m.l1_reads += 1;
        }
        if let Some(f) = &mut self.footprint {
            f.reference(line);
        }
        let l1 = &mut self.l1[sm];
        if l1.probe(req.addr) {
            l1.access(req)?;
            self.m.l1_hits += 1;
            if write {
                self.l2_access(req)?;
            }
            return Ok(());
        }
        m.l1_misses += 1;
        if write {
            l1.access(req)?;
            return self.l2_access(req);
        }
        m.l1_read_misses += 1;
        let set = l1.set_of(line);
        if self.ghosts[sm].would_be_resident(set, line) {
            m.fp_sdbp += 1;
        }
        let predicted = l1.policy_mut().predict(req);
        if self.cfg.l1.predictor != PredictorKind::None {
            m.predictions += 1;
            m.predicted_bypasses += predicted as u64;
        }
        self.l2.policy_mut().request(L2Request {
            sm,
            predicted_bypass: predicted,
            use_bypass_bit: self.use_bypass_bit,
        });
        self.l2_access(req)?;
        let reply = self.l2.policy_mut().take_reply();
        let m = &mut self.m;
        m.fp_paper += reply.rereferenced_by_bypasser as u64;
        m.corrected += (predicted && !reply.bypass) as u64;
        let l1 = &mut self.l1[sm];
        l1.policy_mut().decide(reply.bypass);
        match l1.access(req)? {
            Outcome::Miss { bypassed: true, .. } => {
                m.bypasses += 1;
                self.ghosts[sm].bypassed(set, line);
            }
            Outcome::Miss {
                filled: true,
                evicted,
                ..
            } => {
                m.l1_fills += 1;
                m.l1_evictions += evicted.is_some() as u64;
                self.ghosts[sm].filled(set);
            }
            o => bail!("L1 read miss of {:#x} ended as {o:?}", req.addr),
        }
        Ok(())
    }

    /// One line access at the L2 (write-back, write-allocate, no fetch on a write miss).
    fn l2_access(&mut self, req: &Access) -> Result<()> {
        self.m.l2_accesses += 1;
        if let Outcome::Miss {
            filled, evicted, ..
        } = self.l2.access(req)?
        {
            self.m.l2_misses += 1;
            if let Some(ev) = evicted.filter(|e| e.meta.dirty()) {
                self.l3_access(&writeback(ev.line << self.line_bits))?;
            }
            if filled && !req.op.is_write() {
                self.l3_access(req)?;
            }
        }
        Ok(())
    }

    /// One line access at the memory-side L3.
    fn l3_access(&mut self, req: &Access) -> Result<()> {
        self.m.l3_accesses += 1;
        if let Outcome::Miss {
            filled, evicted, ..
        } = self.l3.access(req)?
        {
            self.m.l3_misses += 1;
            if evicted.is_some_and(|e| e.meta.dirty()) {
                self.m.mem_writes += 1;
            }
            if filled && !req.op.is_write() {
                self.m.mem_reads += 1;
            }
        }
        Ok(())
    }

    /// Storage the configured predictor adds (§4.1).
    pub fn storage(cfg: &GpuConfig) -> Result<Storage> {
        let l1_lines = cfg.l1_geometry()?.lines();
        let l2_lines = cfg.l2_geometry()?.lines();
        Ok(match cfg.l1.predictor {
            PredictorKind::None => Storage::default(),
            PredictorKind::Pc => PcPredictor::storage(cfg.l1.pc.entries, l1_lines, l2_lines),
            PredictorKind::Counter => CounterPredictor::storage(
                cfg.l1.counter.pc_entries,
                cfg.l1.counter.addr_entries,
                l1_lines,
            ),
        })
    }

    /// Close the run: sum the per-L1 counters and derive the figures.
    pub fn finish(mut self, workload: &str) -> Result<RunResult> {
        for c in &self.l1 {
            let p = c.policy();
            self.m.zero_reuse_evictions += p.zero_reuse_evictions;
            self.m.table_accesses += p.table_accesses();
            if let Predictor::Pc(pc) = &p.predictor {
                self.m.table_entries_used += pc.entries_used() as u64;
            }
        }
        if let Some(f) = &self.footprint {
            self.m.distinct_lines = f.distinct();
            self.m.once_lines = f.once();
        }
        let storage = GpuHierarchy::storage(&self.cfg)?;
        let predictor = self.cfg.l1.predictor;
        Ok(RunResult {
            workload: workload.to_string(),
            config: self.cfg.label(),
            predictor,
            l1_geometry: self.cfg.l1.geometry.clone(),
            sms: self.sms,
            metrics: self.m,
            derived: self
                .m
                .derive(&self.cfg.energy, predictor != PredictorKind::None),
            storage,
            storage_bytes_per_l1: storage.bytes_per_l1(),
            storage_bytes_l2: storage.l2_bytes(),
            storage_bytes_total: storage.total_bytes(self.sms),
        })
    }
}

fn writeback(addr: u64) -> Access {
    Access::new(Agent::GPU, Stream::ShaderData, Op::Write, addr, 64)
}

/// Run every record of `source` through a fresh hierarchy of `cfg`.
pub fn run_source(
    cfg: &GpuConfig,
    workload: &str,
    source: &mut dyn AccessSource,
    track_footprint: bool,
) -> Result<RunResult> {
    let mut h = GpuHierarchy::new(cfg, track_footprint)?;
    let mut batch = Vec::with_capacity(4096);
    loop {
        batch.clear();
        if !source.next_batch(&mut batch)? {
            break;
        }
        for r in &batch {
            h.access(r)?;
        }
    }
    h.finish(workload)
}
