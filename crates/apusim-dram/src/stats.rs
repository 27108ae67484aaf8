//! Statistics: per channel and per source, latency histograms, and the report with its table,
//! JSON and CSV renderings.

use crate::request::source_label;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Number of latency-histogram buckets.
pub const HIST_BUCKETS: usize = 65;

/// Histogram bucket of a latency: 4-cycle buckets below 64, 16 below 256, 64 below 1024,
/// 256 below 4096, 1024 below 16384, then one overflow bucket.
#[inline]
pub fn bucket_of(v: u64) -> usize {
    match v {
        0..=63 => (v / 4) as usize,
        64..=255 => 16 + ((v - 64) / 16) as usize,
        256..=1023 => 28 + ((v - 256) / 64) as usize,
        1024..=4095 => 40 + ((v - 1024) / 256) as usize,
        4096..=16383 => 52 + ((v - 4096) / 1024) as usize,
        _ => 64,
    }
}

/// `[lo, hi)` of bucket `i` (`hi = u64::MAX` for the overflow bucket).
pub fn bucket_bounds(i: usize) -> (u64, u64) {
    let i64_ = i as u64;
    match i {
        0..=15 => (i64_ * 4, i64_ * 4 + 4),
        16..=27 => (64 + (i64_ - 16) * 16, 64 + (i64_ - 15) * 16),
        28..=39 => (256 + (i64_ - 28) * 64, 256 + (i64_ - 27) * 64),
        40..=51 => (1024 + (i64_ - 40) * 256, 1024 + (i64_ - 39) * 256),
        52..=63 => (4096 + (i64_ - 52) * 1024, 4096 + (i64_ - 51) * 1024),
        _ => (16384, u64::MAX),
    }
}

/// Latency distribution of one kind of request.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyStats {
    pub count: u64,
    pub sum: u64,
    pub min: u64,
    pub max: u64,
    pub hist: [u64; HIST_BUCKETS],
}

impl Default for LatencyStats {
    fn default() -> Self {
        LatencyStats {
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            hist: [0; HIST_BUCKETS],
        }
    }
}

impl LatencyStats {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.hist[bucket_of(v)] += 1;
    }
    pub fn merge(&mut self, o: &LatencyStats) {
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        for (a, b) in self.hist.iter_mut().zip(o.hist.iter()) {
            *a += b;
        }
    }
    /// Mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    /// Approximate percentile (`p` in 0..=100): upper edge of the bucket holding it, clamped
    /// to the observed maximum.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let target = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.hist.iter().enumerate() {
            acc += c;
            if acc >= target {
                return (bucket_bounds(i).1 - 1).min(self.max).max(self.min);
            }
        }
        self.max
    }
    fn to_json(&self) -> Value {
        let buckets: Vec<Value> = self
            .hist
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = bucket_bounds(i);
                json!({"lo": lo, "hi": if hi == u64::MAX { Value::Null } else { json!(hi) }, "count": c})
            })
            .collect();
        json!({
            "count": self.count,
            "mean": round3(self.mean()),
            "min": if self.count == 0 { 0 } else { self.min },
            "max": self.max,
            "p50": self.percentile(50.0),
            "p95": self.percentile(95.0),
            "p99": self.percentile(99.0),
            "histogram": buckets,
        })
    }
}

/// Request-level counters, kept per channel and per source.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccessStats {
    pub reads: u64,
    pub writes: u64,
    /// Queue entry to data done.
    pub read_latency: LatencyStats,
    pub write_latency: LatencyStats,
    /// Row-buffer outcome of each request's first command.
    pub rows: RowOutcomes,
    /// Bytes moved on the DRAM data bus.
    pub bytes: u64,
    /// Sum over requests of cycles waited for a queue slot (enqueued − arrival).
    pub stall_cycles: u64,
    /// Reads served from a queued write to the same address.
    pub forwarded_reads: u64,
    /// Writes merged into a queued write to the same address.
    pub merged_writes: u64,
}

impl AccessStats {
    pub fn merge(&mut self, o: &AccessStats) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_latency.merge(&o.read_latency);
        self.write_latency.merge(&o.write_latency);
        self.rows.merge(&o.rows);
        self.bytes += o.bytes;
        self.stall_cycles += o.stall_cycles;
        self.forwarded_reads += o.forwarded_reads;
        self.merged_writes += o.merged_writes;
    }
    /// Row hits over all column commands.
    pub fn row_hit_rate(&self) -> f64 {
        self.rows.hit_rate()
    }
    fn to_json(&self, cycles: u64, tck_ns: f64) -> Value {
        json!({
            "reads": self.reads,
            "writes": self.writes,
            "bytes": self.bytes,
            "bandwidth_gbps": round3(bandwidth_gbps(self.bytes, cycles, tck_ns)),
            "read_latency": self.read_latency.to_json(),
            "write_latency": self.write_latency.to_json(),
            "row_hits": self.rows.hits,
            "row_misses": self.rows.misses,
            "row_conflicts": self.rows.conflicts,
            "row_hit_rate": round4(self.row_hit_rate()),
            "stall_cycles": self.stall_cycles,
            "forwarded_reads": self.forwarded_reads,
            "merged_writes": self.merged_writes,
        })
    }
}

/// Row-buffer outcomes of requests' first commands (a hit needs only RD/WR, a miss an ACT
/// first, a conflict a PRE and an ACT). Kept per stream tag, reads and writes apart, so
/// that a caller can tell which kind of traffic finds its rows open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RowOutcomes {
    pub hits: u64,
    pub misses: u64,
    pub conflicts: u64,
}

impl RowOutcomes {
    /// Count one request's first command.
    #[inline]
    pub(crate) fn count(&mut self, status: crate::scheduler::RowStatus) {
        use crate::scheduler::RowStatus;
        match status {
            RowStatus::Hit => self.hits += 1,
            RowStatus::Miss => self.misses += 1,
            RowStatus::Conflict => self.conflicts += 1,
        }
    }
    pub fn merge(&mut self, o: &RowOutcomes) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.conflicts += o.conflicts;
    }
    /// The outcomes between an earlier reading `e` and this one.
    pub fn since(&self, e: &RowOutcomes) -> RowOutcomes {
        RowOutcomes {
            hits: self.hits - e.hits,
            misses: self.misses - e.misses,
            conflicts: self.conflicts - e.conflicts,
        }
    }
    pub fn total(&self) -> u64 {
        self.hits + self.misses + self.conflicts
    }
    /// Hits over all outcomes, 0 when none.
    pub fn hit_rate(&self) -> f64 {
        match self.total() {
            0 => 0.0,
            n => self.hits as f64 / n as f64,
        }
    }
}

/// DRAM command counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandCounts {
    pub act: u64,
    pub pre: u64,
    pub prea: u64,
    pub rd: u64,
    pub wr: u64,
    pub rda: u64,
    pub wra: u64,
    pub refresh: u64,
}

impl CommandCounts {
    pub fn merge(&mut self, o: &CommandCounts) {
        self.act += o.act;
        self.pre += o.pre;
        self.prea += o.prea;
        self.rd += o.rd;
        self.wr += o.wr;
        self.rda += o.rda;
        self.wra += o.wra;
        self.refresh += o.refresh;
    }
}

/// Time-integrated queue occupancy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Sum over cycles of the queue length.
    pub integral: u128,
    pub max: usize,
    pub(crate) last_len: usize,
    pub(crate) last_change: u64,
}

impl Occupancy {
    /// The queue's length became `new_len` at cycle `now`. A cycle before the last change
    /// (which no caller in order gives) adds nothing, as in [`Occupancy::integral_at`].
    #[inline]
    pub fn update(&mut self, now: u64, new_len: usize) {
        self.integral = self.integral_at(now);
        self.last_change = self.last_change.max(now);
        self.last_len = new_len;
        self.max = self.max.max(new_len);
    }
    /// Close the integral at `now` (without changing the length).
    pub(crate) fn settle(&mut self, now: u64) {
        if now > self.last_change {
            let l = self.last_len;
            self.update(now, l);
        }
    }
    /// The integral up to cycle `now` (at or after the last change), without closing it.
    pub fn integral_at(&self, now: u64) -> u128 {
        self.integral + (self.last_len as u128) * u128::from(now.saturating_sub(self.last_change))
    }
    pub fn mean(&self, cycles: u64) -> f64 {
        if cycles == 0 {
            0.0
        } else {
            self.integral as f64 / cycles as f64
        }
    }
    pub fn merge(&mut self, o: &Occupancy) {
        self.integral += o.integral;
        self.max = self.max.max(o.max);
    }
}

/// Everything counted for one channel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChannelStats {
    pub access: AccessStats,
    pub commands: CommandCounts,
    pub read_queue: Occupancy,
    pub write_queue: Occupancy,
    /// Times the controller switched into write-drain mode.
    pub write_drains: u64,
    /// Cycle the last data burst finished.
    pub last_done: u64,
}

impl ChannelStats {
    pub fn merge(&mut self, o: &ChannelStats) {
        self.access.merge(&o.access);
        self.commands.merge(&o.commands);
        self.read_queue.merge(&o.read_queue);
        self.write_queue.merge(&o.write_queue);
        self.write_drains += o.write_drains;
        self.last_done = self.last_done.max(o.last_done);
    }
}

/// Bytes over cycles, in GB/s (1e9 B/s).
pub fn bandwidth_gbps(bytes: u64, cycles: u64, tck_ns: f64) -> f64 {
    if cycles == 0 {
        0.0
    } else {
        bytes as f64 / (cycles as f64 * tck_ns)
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}
fn round4(v: f64) -> f64 {
    (v * 10000.0).round() / 10000.0
}

/// The result of a run: configuration summary plus statistics per channel and per source.
#[derive(Clone, Debug, PartialEq)]
pub struct DramReport {
    /// Preset (or config file) name.
    pub preset: String,
    /// Device/timing set name.
    pub spec: String,
    pub mapping: String,
    pub scheduler: String,
    pub row_policy: String,
    pub tck_ps: u32,
    pub peak_gbps: f64,
    /// Trace file, if the run came from one.
    pub trace: Option<String>,
    /// Trace format used.
    pub format: Option<String>,
    /// Requests accepted.
    pub requests: u64,
    /// Cycles to finish: the cycle the last data burst ended.
    pub cycles: u64,
    pub total: ChannelStats,
    pub channels: Vec<ChannelStats>,
    /// Per source id, ascending.
    pub sources: Vec<(u8, AccessStats)>,
}

impl DramReport {
    fn tck_ns(&self) -> f64 {
        f64::from(self.tck_ps) / 1000.0
    }
    /// Aggregate bandwidth in GB/s.
    pub fn bandwidth_gbps(&self) -> f64 {
        bandwidth_gbps(self.total.access.bytes, self.cycles, self.tck_ns())
    }
    /// Average read latency in DRAM cycles (queue entry to data).
    pub fn avg_read_latency(&self) -> f64 {
        self.total.access.read_latency.mean()
    }
    /// Row hits over column commands.
    pub fn row_hit_rate(&self) -> f64 {
        self.total.access.row_hit_rate()
    }

    fn scopes(&self) -> Vec<(String, &AccessStats, Option<&ChannelStats>)> {
        let mut v = vec![("total".to_string(), &self.total.access, Some(&self.total))];
        for (i, c) in self.channels.iter().enumerate() {
            v.push((format!("ch{i}"), &c.access, Some(c)));
        }
        for (s, a) in &self.sources {
            v.push((source_label(*s), a, None));
        }
        v
    }

    /// Human-readable table.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let tck = self.tck_ns();
        let _ = writeln!(
            s,
            "DRAM: {} [{}], mapping {}, scheduler {}, {} page, tCK {:.3} ns, peak {:.2} GB/s",
            self.preset,
            self.spec,
            self.mapping,
            self.scheduler,
            self.row_policy,
            tck,
            self.peak_gbps
        );
        if let Some(t) = &self.trace {
            let _ = writeln!(s, "trace: {t} ({})", self.format.as_deref().unwrap_or("?"));
        }
        let _ = writeln!(
            s,
            "requests {}, cycles to finish {} ({:.3} us), bandwidth {:.3} GB/s, avg read latency {:.1} cycles, row-hit rate {:.3}",
            self.requests,
            self.cycles,
            self.cycles as f64 * tck / 1000.0,
            self.bandwidth_gbps(),
            self.avg_read_latency(),
            self.row_hit_rate()
        );
        let _ = writeln!(
            s,
            "\n{:<8} {:>10} {:>10} {:>9} {:>6} {:>6} {:>9} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9}",
            "scope",
            "reads",
            "writes",
            "rd_lat",
            "p50",
            "p99",
            "wr_lat",
            "GB/s",
            "hit%",
            "hits",
            "misses",
            "conflicts",
            "stall/req"
        );
        for (name, a, _) in self.scopes() {
            let n = a.reads + a.writes;
            let _ = writeln!(
                s,
                "{:<8} {:>10} {:>10} {:>9.1} {:>6} {:>6} {:>9.1} {:>8.3} {:>7.2} {:>9} {:>9} {:>9} {:>9.1}",
                name,
                a.reads,
                a.writes,
                a.read_latency.mean(),
                a.read_latency.percentile(50.0),
                a.read_latency.percentile(99.0),
                a.write_latency.mean(),
                bandwidth_gbps(a.bytes, self.cycles, tck),
                100.0 * a.row_hit_rate(),
                a.rows.hits,
                a.rows.misses,
                a.rows.conflicts,
                if n == 0 { 0.0 } else { a.stall_cycles as f64 / n as f64 }
            );
        }
        let _ = writeln!(
            s,
            "\n{:<8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7}",
            "scope",
            "ACT",
            "PRE",
            "RD",
            "WR",
            "PREA",
            "REF",
            "RDA",
            "WRA",
            "rq_avg",
            "rq_max",
            "wq_avg",
            "drains"
        );
        for (name, _, c) in self.scopes() {
            if let Some(c) = c {
                let k = &c.commands;
                let _ = writeln!(
                    s,
                    "{:<8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6} {:>7} {:>7.2} {:>7} {:>7.2} {:>7}",
                    name,
                    k.act,
                    k.pre,
                    k.rd,
                    k.wr,
                    k.prea,
                    k.refresh,
                    k.rda,
                    k.wra,
                    c.read_queue.mean(self.cycles),
                    c.read_queue.max,
                    c.write_queue.mean(self.cycles),
                    c.write_drains
                );
            }
        }
        s
    }

    /// JSON document (pretty-printed).
    pub fn to_json(&self) -> String {
        let tck = self.tck_ns();
        let chan = |c: &ChannelStats| {
            json!({
                "access": c.access.to_json(self.cycles, tck),
                "commands": {
                    "ACT": c.commands.act, "PRE": c.commands.pre, "PREA": c.commands.prea,
                    "RD": c.commands.rd, "WR": c.commands.wr, "RDA": c.commands.rda,
                    "WRA": c.commands.wra, "REF": c.commands.refresh,
                },
                "refreshes": c.commands.refresh,
                "read_queue": {"mean": round3(c.read_queue.mean(self.cycles)), "max": c.read_queue.max},
                "write_queue": {"mean": round3(c.write_queue.mean(self.cycles)), "max": c.write_queue.max},
                "write_drains": c.write_drains,
                "last_done": c.last_done,
            })
        };
        let sources: serde_json::Map<String, Value> = self
            .sources
            .iter()
            .map(|(s, a)| (source_label(*s), a.to_json(self.cycles, tck)))
            .collect();
        let v = json!({
            "preset": self.preset,
            "spec": self.spec,
            "mapping": self.mapping,
            "scheduler": self.scheduler,
            "row_policy": self.row_policy,
            "tck_ps": self.tck_ps,
            "peak_gbps": round3(self.peak_gbps),
            "trace": self.trace,
            "format": self.format,
            "requests": self.requests,
            "cycles": self.cycles,
            "bandwidth_gbps": round3(self.bandwidth_gbps()),
            "avg_read_latency": round3(self.avg_read_latency()),
            "row_hit_rate": round4(self.row_hit_rate()),
            "total": chan(&self.total),
            "channels": self.channels.iter().map(chan).collect::<Vec<_>>(),
            "sources": sources,
        });
        let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
        out.push('\n');
        out
    }

    /// CSV: one row per scope (total, each channel, each source).
    pub fn to_csv(&self) -> String {
        let tck = self.tck_ns();
        let mut s = String::from(
            "scope,reads,writes,bytes,cycles,bandwidth_gbps,avg_read_latency,p50_read_latency,p99_read_latency,max_read_latency,avg_write_latency,row_hits,row_misses,row_conflicts,row_hit_rate,stall_cycles,act,pre,prea,rd,wr,rda,wra,ref,avg_read_queue,avg_write_queue,write_drains\n",
        );
        for (name, a, c) in self.scopes() {
            let _ = write!(
                s,
                "{},{},{},{},{},{:.4},{:.3},{},{},{},{:.3},{},{},{},{:.4},{}",
                name,
                a.reads,
                a.writes,
                a.bytes,
                self.cycles,
                bandwidth_gbps(a.bytes, self.cycles, tck),
                a.read_latency.mean(),
                a.read_latency.percentile(50.0),
                a.read_latency.percentile(99.0),
                a.read_latency.max,
                a.write_latency.mean(),
                a.rows.hits,
                a.rows.misses,
                a.rows.conflicts,
                a.row_hit_rate(),
                a.stall_cycles
            );
            match c {
                Some(c) => {
                    let k = &c.commands;
                    let _ = writeln!(
                        s,
                        ",{},{},{},{},{},{},{},{},{:.3},{:.3},{}",
                        k.act,
                        k.pre,
                        k.prea,
                        k.rd,
                        k.wr,
                        k.rda,
                        k.wra,
                        k.refresh,
                        c.read_queue.mean(self.cycles),
                        c.write_queue.mean(self.cycles),
                        c.write_drains
                    );
                }
                None => s.push_str(",,,,,,,,,,,\n"),
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reading between changes extends the last length to the cycle asked for, and equals
    /// what closing the integral there gives.
    #[test]
    fn an_occupancy_read_between_changes_extends_its_last_length() {
        let mut o = Occupancy::default();
        o.update(10, 3);
        o.update(25, 1);
        assert_eq!(o.integral_at(25), 45);
        assert_eq!(o.integral_at(40), 60);
        let mut closed = o.clone();
        closed.settle(40);
        assert_eq!(closed.integral, o.integral_at(40));
        assert_eq!(
            o.integral_at(20),
            45,
            "a cycle before the last change adds nothing"
        );
    }

    #[test]
    fn buckets_cover_and_are_ordered() {
        let mut last_hi = 0;
        for i in 0..HIST_BUCKETS {
            let (lo, hi) = bucket_bounds(i);
            assert_eq!(lo, last_hi, "bucket {i}");
            assert!(hi > lo);
            assert_eq!(bucket_of(lo), i);
            if hi != u64::MAX {
                assert_eq!(bucket_of(hi - 1), i);
            }
            last_hi = hi;
        }
    }

    #[test]
    fn latency_mean_and_percentiles() {
        let mut l = LatencyStats::default();
        for v in 1..=100 {
            l.record(v);
        }
        assert_eq!(l.mean(), 50.5);
        assert_eq!((l.min, l.max), (1, 100));
        let p50 = l.percentile(50.0);
        assert!((48..=63).contains(&p50), "{p50}");
        assert_eq!(l.percentile(100.0), 100);
    }
}
