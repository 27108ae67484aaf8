//! [`SimtSource`]: a kernel executed wave by wave and handed out as time-ordered access
//! records.

use super::warp::{Block, Emit};
use super::{Kernel, Launch, SimtConfig, SimtStats, WARP};
use apusim_trace::{Access, AccessSource, Agent, Result, Stream, TraceHeader, BATCH};

/// Stable sort of `wave` by time, all times within `lo..=hi`: count the records of every
/// cycle, turn the counts into first positions, place every record at its cycle's next
/// position (in `scratch`, swapped in).
fn counting_sort_by_time(
    wave: &mut Vec<Access>,
    lo: u64,
    hi: u64,
    counts: &mut Vec<u32>,
    scratch: &mut Vec<Access>,
) {
    counts.clear();
    counts.resize((hi - lo) as usize + 1, 0);
    for a in wave.iter() {
        counts[(a.time - lo) as usize] += 1;
    }
    let mut next = 0u32;
    for c in counts.iter_mut() {
        (*c, next) = (next, next + *c);
    }
    scratch.clear();
    scratch.resize(wave.len(), wave[0]);
    for a in wave.iter() {
        let at = &mut counts[(a.time - lo) as usize];
        scratch[*at as usize] = *a;
        *at += 1;
    }
    std::mem::swap(wave, scratch);
}

/// Runs a [`Kernel`] and hands out its transactions: the [`AccessSource`] of every GPGPU
/// workload.
pub struct SimtSource<K: Kernel> {
    kernel: K,
    cfg: SimtConfig,
    header: TraceHeader,
    launch: Option<Launch>,
    next_block: usize,
    warp_base: u32,
    wave: Vec<Access>,
    /// Scratch of [`SimtSource::order_wave`]: sort keys, records per cycle and the gathered
    /// records.
    keys: Vec<u64>,
    counts: Vec<u32>,
    sorted: Vec<Access>,
    pos: usize,
    time: u64,
    stats: SimtStats,
    done: bool,
}

impl<K: Kernel> SimtSource<K> {
    /// A source running `kernel` (named `name` in the header) on the GPU `cfg`.
    pub fn new(kernel: K, name: &str, provenance: &str, cfg: SimtConfig) -> Self {
        let cfg = SimtConfig {
            sms: cfg.sms.max(1),
            max_warps_per_sm: cfg.max_warps_per_sm.max(1),
            ..cfg
        };
        let header = TraceHeader::single(
            Agent::GPU,
            name,
            cfg.clock_mhz,
            &[Stream::ShaderData],
            &format!(
                "apusim gpgpu {provenance} sms={} max_warps_per_sm={} (time: SM cycle, see \
                 apusim_workloads::simt)",
                cfg.sms, cfg.max_warps_per_sm
            ),
        );
        SimtSource {
            kernel,
            cfg,
            header,
            launch: None,
            next_block: 0,
            warp_base: 0,
            wave: Vec::new(),
            keys: Vec::new(),
            counts: Vec::new(),
            sorted: Vec::new(),
            pos: 0,
            time: 0,
            stats: SimtStats::default(),
            done: false,
        }
    }
    /// The kernel (its results, once the source is exhausted).
    pub fn kernel(&self) -> &K {
        &self.kernel
    }
    /// Take the kernel back (its results, once the source is exhausted).
    pub fn into_kernel(self) -> K {
        self.kernel
    }
    /// Instruction counts so far.
    pub fn stats(&self) -> SimtStats {
        self.stats
    }
    /// Cycle at which the program finished so far.
    pub fn cycles(&self) -> u64 {
        self.time
    }
    /// Run to completion, discarding the records (tests and result checks).
    pub fn run_to_end(&mut self) -> SimtStats {
        while self.fill_wave() {}
        self.stats
    }

    /// Put the wave's records into time order, ties in the order they were produced (a
    /// stable sort by time). The wave is a set of time-ordered runs (one per warp and phase);
    /// rather than moving 40-byte records through a merge sort, the records are sorted as
    /// 64-bit keys `(time − first time) · 2^b + index` (unique, so an unstable sort is stable)
    /// and gathered once. Waves whose span and size do not fit 64 bits use the stable sort.
    fn order_wave(&mut self) {
        let wave = &mut self.wave;
        if wave.is_sorted_by_key(|a| a.time) {
            return;
        }
        let (lo, hi) = wave.iter().fold((u64::MAX, 0), |(lo, hi), a| {
            (lo.min(a.time), hi.max(a.time))
        });
        if hi - lo <= 4 * wave.len() as u64 {
            counting_sort_by_time(wave, lo, hi, &mut self.counts, &mut self.sorted);
            return;
        }
        let bits = usize::BITS - (wave.len() - 1).leading_zeros();
        if bits >= 64 || (hi - lo) >> (64 - bits) != 0 {
            wave.sort_by_key(|a| a.time);
            return;
        }
        let keys = &mut self.keys;
        keys.clear();
        keys.extend(
            wave.iter()
                .enumerate()
                .map(|(i, a)| (a.time - lo) << bits | i as u64),
        );
        keys.sort_unstable();
        let index = (1u64 << bits) - 1;
        self.sorted.clear();
        self.sorted
            .extend(keys.iter().map(|&k| wave[(k & index) as usize]));
        std::mem::swap(wave, &mut self.sorted);
    }

    /// Execute the next wave of blocks into `self.wave`; false when the program is done.
    fn fill_wave(&mut self) -> bool {
        self.wave.clear();
        self.pos = 0;
        while !self.done {
            let launch = match self.launch {
                Some(l) if self.next_block < l.blocks => l,
                _ => {
                    if let Some(l) = self.launch.take() {
                        self.warp_base = self
                            .warp_base
                            .wrapping_add((l.blocks * l.threads.div_ceil(WARP)) as u32);
                    }
                    match self.kernel.next_launch() {
                        Some(l) if l.blocks > 0 && l.threads > 0 => {
                            self.stats.launches += 1;
                            self.launch = Some(l);
                            self.next_block = 0;
                            continue;
                        }
                        Some(_) => continue,
                        None => {
                            self.done = true;
                            return false;
                        }
                    }
                }
            };
            let wpb = launch.threads.div_ceil(WARP);
            let resident = (self.cfg.max_warps_per_sm as usize / wpb).clamp(1, 8);
            let sms = self.cfg.sms as usize;
            let stride = (resident * wpb) as u64;
            let n = (sms * resident).min(launch.blocks - self.next_block);
            let mut end = self.time;
            for j in 0..n {
                let b = self.next_block + j;
                let mut blk = Block {
                    idx: b,
                    dim: launch.threads,
                    grid: launch.blocks,
                    emit: Emit {
                        out: &mut self.wave,
                        stats: &mut self.stats,
                        sm: (j % sms) as u16,
                        stride,
                        rec: None,
                    },
                    slot0: ((j / sms) * wpb) as u64,
                    warp_base: self.warp_base.wrapping_add((b * wpb) as u32),
                    phase_start: self.time,
                };
                self.kernel.block(&mut blk);
                end = end.max(blk.phase_start);
                self.stats.warps += wpb as u64;
            }
            self.next_block += n;
            self.time = end;
            if !self.wave.is_empty() {
                self.order_wave();
                return true;
            }
        }
        false
    }
}

impl<K: Kernel> AccessSource for SimtSource<K> {
    fn header(&self) -> &TraceHeader {
        &self.header
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if self.pos >= self.wave.len() && !self.fill_wave() {
            return Ok(false);
        }
        let end = (self.pos + BATCH).min(self.wave.len());
        out.extend_from_slice(&self.wave[self.pos..end]);
        self.pos = end;
        Ok(true)
    }
}
