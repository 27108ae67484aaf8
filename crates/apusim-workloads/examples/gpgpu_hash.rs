//! Generate every GPGPU kernel at its default size (or the size given as `NAME=SIZE`
//! arguments), print its record count, a hash of every record field and the generation rate.
//! Used to check that speed work leaves the generated traces bit-identical:
//! `cargo run --release -p apusim-workloads --example gpgpu_hash [NAME ...]`.
//! With `APUSIM_STATS=1` it also prints the distinct 64-byte lines touched and the misses per
//! 1000 transactions of the unfiltered stream in a 16 MB 16-way LRU cache (docs/workloads.md).

use apusim_trace::Access;
use apusim_workloads::gpgpu::{self, GpgpuParams};
use std::time::Instant;

fn mix(h: &mut u64, x: u64) {
    *h = (*h ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
}

fn hash(a: &Access, h: &mut u64) {
    mix(h, a.addr);
    mix(h, a.pc);
    mix(h, a.time);
    let small = a.warp as u64 | (a.unit as u64) << 32 | (a.size as u64) << 48;
    mix(h, small);
    let tags = a.agent.to_byte() as u64
        | (a.stream as u64) << 8
        | (a.op as u64) << 16
        | (a.flags as u64) << 24;
    mix(h, tags);
}

/// A 16 MB 16-way LRU over 64-byte lines; counts transactions with at least one missing
/// line and missing lines.
struct Lru {
    tags: Vec<u64>,
    stamp: Vec<u64>,
    now: u64,
    tx_misses: u64,
    line_misses: u64,
}

impl Lru {
    const SETS: usize = (16 << 20) / 64 / 16;
    fn new() -> Lru {
        Lru {
            tags: vec![u64::MAX; Self::SETS * 16],
            stamp: vec![0; Self::SETS * 16],
            now: 0,
            tx_misses: 0,
            line_misses: 0,
        }
    }
    fn line(&mut self, line: u64) -> bool {
        self.now += 1;
        let set = (line as usize % Self::SETS) * 16;
        let ways = set..set + 16;
        if let Some(w) = ways.clone().find(|&w| self.tags[w] == line) {
            self.stamp[w] = self.now;
            return true;
        }
        let victim = ways.min_by_key(|&w| self.stamp[w]).unwrap();
        self.tags[victim] = line;
        self.stamp[victim] = self.now;
        self.line_misses += 1;
        false
    }
    fn access(&mut self, a: &Access) {
        let (first, last) = (a.addr >> 6, (a.addr + a.size.max(1) as u64 - 1) >> 6);
        let mut hit = true;
        for l in first..=last {
            hit &= self.line(l);
        }
        self.tx_misses += u64::from(!hit);
    }
}

fn main() {
    let stats = std::env::var_os("APUSIM_STATS").is_some();
    let args: Vec<String> = std::env::args().skip(1).collect();
    for k in gpgpu::KERNELS {
        if !args.is_empty() && !args.iter().any(|a| a.split('=').next() == Some(k.name)) {
            continue;
        }
        let size = args
            .iter()
            .find_map(|a| a.strip_prefix(&format!("{}=", k.name)))
            .map_or(0, |s| s.parse().unwrap());
        let p = GpgpuParams {
            size,
            ..GpgpuParams::default()
        };
        let t0 = Instant::now();
        let mut src = gpgpu::generate(k.name, &p).unwrap();
        let setup = t0.elapsed().as_secs_f64();
        let (mut n, mut h) = (0u64, 0xcbf2_9ce4_8422_2325u64);
        let mut lines = Vec::new();
        // The cache model (4 MB of tags) only when asked for: not part of generation.
        let mut lru = stats.then(Lru::new);
        let mut buf = Vec::with_capacity(apusim_trace::BATCH);
        while src.next_batch(&mut buf).unwrap() {
            for a in &buf {
                hash(a, &mut h);
                if stats {
                    lines.extend((a.addr >> 6)..=((a.addr + a.size as u64 - 1) >> 6));
                    if let Some(lru) = &mut lru {
                        lru.access(a);
                    }
                }
            }
            n += buf.len() as u64;
            buf.clear();
        }
        let total = t0.elapsed().as_secs_f64();
        println!(
            "{:<13} {:>9} records  hash {:016x}  setup {:6.3}s total {:6.3}s  {:6.2} M rec/s",
            k.name,
            n,
            h,
            setup,
            total,
            n as f64 / total / 1e6
        );
        if let Some(lru) = lru {
            lines.sort_unstable();
            lines.dedup();
            println!(
                "    {} distinct 64 B lines ({:.1} MB); per 1000 transactions: {:.1} missing \
                 transactions, {:.1} missing lines",
                lines.len(),
                lines.len() as f64 * 64.0 / 1e6,
                lru.tx_misses as f64 * 1000.0 / n as f64,
                lru.line_misses as f64 * 1000.0 / n as f64
            );
        }
    }
}
