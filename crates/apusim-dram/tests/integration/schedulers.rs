//! The heterogeneous schedulers (gpu-access-criticality §4.3 and §6.1.4) end to end through
//! the public API a timed simulator uses — `MemorySystem::try_send`, `advance_to`,
//! `set_hints`, completions: every one of them drains random mixed CPU/GPU streams with
//! hints changing mid-run, within every timing constraint; GPU-favoring serves critical GPU
//! reads faster than FR-FCFS; hints never change the schedule of a scheduler that does not
//! use them; and a priority scheduler whose classes all coincide is FR-FCFS, bit for bit.

use crate::common;

use apusim_dram::{
    mapping::DecodedAddr, presets::preset, Completion, DramConfig, FrameHint, MemorySystem,
    Request, SchedHints, GPU_SOURCE,
};
use proptest::prelude::*;

/// The schedulers of gpu-access-criticality §4.3 and §6.1.4.
const HETEROGENEOUS: &[&str] = &[
    "gpu-favoring",
    "im",
    "im-sched",
    "im-llc",
    "dynprio",
    "dash",
    "sms",
    "sms-0.9",
    "sms-0",
];

fn config(scheduler: &str) -> DramConfig {
    let mut c = preset("ddr3-1600-11-1ch").unwrap();
    c.scheduler = scheduler.into();
    c
}

/// Send `reqs` (arrival order) at their arrivals, applying each `(cycle, hints)` of `hints`
/// once the clock reaches its cycle, then run until everything completed. Panics if the
/// memory system makes no progress for `limit` cycles after the last arrival.
fn drive(
    mem: &mut MemorySystem,
    reqs: &[Request],
    hints: &[(u64, SchedHints)],
    limit: u64,
) -> Vec<Completion> {
    let mut out = Vec::new();
    let mut h = hints.iter().peekable();
    let mut apply = |mem: &mut MemorySystem| {
        while let Some(&&(t, hint)) = h.peek() {
            if t > mem.now() {
                break;
            }
            mem.set_hints(hint);
            h.next();
        }
    };
    for r in reqs {
        mem.advance_to(r.arrival.max(mem.now()), &mut out);
        apply(mem);
        let mut r = *r;
        while let Err(back) = mem.try_send(r) {
            r = back;
            let n = mem.next_event().expect("a full queue has a next event");
            mem.advance_to(n.max(mem.now()) + 1, &mut out);
            apply(mem);
        }
    }
    let end = reqs.last().map_or(0, |r| r.arrival) + limit;
    while mem.queued() > 0 {
        let n = mem.next_event().expect("queued requests have a next event");
        assert!(
            n < end,
            "no progress by cycle {end}: {}",
            mem.describe_queues()
        );
        mem.advance_to(n.max(mem.now()) + 1, &mut out);
        apply(mem);
    }
    mem.drain(&mut out);
    out
}

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A saturating mixed stream: four CPU cores reading (80%) and writing random lines of
/// 256 MiB, and the GPU streaming through its own lines (`gpu_share` of the requests, a
/// `critical` share of its reads flagged critical), one request every `gap` cycles on average.
fn mixed(n: u64, seed: u64, gpu_share: u64, critical: u64, gap: u64) -> Vec<Request> {
    let mut rng = Rng(seed | 1);
    let mut gpu_line = 1u64 << 22;
    let mut t = 0;
    (0..n)
        .map(|id| {
            t += rng.below(2 * gap + 1);
            if rng.below(100) < gpu_share {
                gpu_line += 1 + rng.below(3);
                let r = Request::read(id, gpu_line * 64, t).with_source(GPU_SOURCE);
                r.with_critical(rng.below(100) < critical)
            } else {
                let a = rng.below(1 << 22) * 64;
                let r = if rng.below(10) < 8 {
                    Request::read(id, a, t)
                } else {
                    Request::write(id, a, t)
                };
                r.with_source(rng.below(4) as u8)
            }
        })
        .collect()
}

fn mean(xs: impl Iterator<Item = u64>) -> f64 {
    let (s, n) = xs.fold((0u64, 0u64), |(s, n), x| (s + x, n + 1));
    s as f64 / n.max(1) as f64
}

/// Mean controller latency (queue entry to data) of the critical GPU reads and of the CPU
/// reads of `reqs` under `sched`.
fn latencies(sched: &str, reqs: &[Request]) -> (f64, f64) {
    let critical: std::collections::HashSet<u64> =
        reqs.iter().filter(|r| r.critical).map(|r| r.id).collect();
    let mut mem = MemorySystem::new(config(sched)).unwrap();
    let done = drive(&mut mem, reqs, &[], 1_000_000);
    assert_eq!(done.len(), reqs.len());
    let crit = mean(
        done.iter()
            .filter(|c| critical.contains(&c.id))
            .map(|c| c.latency()),
    );
    let cpu = mean(
        done.iter()
            .filter(|c| c.source < GPU_SOURCE && !c.is_write)
            .map(|c| c.latency()),
    );
    (crit, cpu)
}

/// A loaded channel (a request every 6 cycles on average, half of them GPU reads, 30% of
/// those critical): GPU-favoring serves the critical GPU reads much faster than FR-FCFS, at
/// a cost to the CPU reads (gpu-access-criticality §4.3: "the CPU requests may starve"),
/// which IM wins back while keeping most of the GPU's gain (§6.1.3, Fig. 11).
#[test]
fn gpu_favoring_serves_critical_gpu_reads_faster_than_frfcfs() {
    let reqs = mixed(6000, 7, 50, 30, 6);
    let (fr, fr_cpu) = latencies("frfcfs", &reqs);
    let (fav, fav_cpu) = latencies("gpu-favoring", &reqs);
    assert!(
        fav < 0.75 * fr,
        "critical GPU reads: gpu-favoring {fav:.1} cycles, frfcfs {fr:.1}"
    );
    assert!(fav_cpu > fr_cpu, "CPU reads {fav_cpu:.1} vs {fr_cpu:.1}");
    let (im, im_cpu) = latencies("im", &reqs);
    assert!(
        im < 0.75 * fr,
        "critical GPU reads: im {im:.1}, frfcfs {fr:.1}"
    );
    assert!(
        im_cpu < fav_cpu,
        "CPU reads: im {im_cpu:.1}, gpu-favoring {fav_cpu:.1}"
    );
}

/// Hints as the system would change them: emergency sources, the GPGPU phase, frames.
fn hint_strategy() -> impl Strategy<Value = SchedHints> {
    (
        0u128..16,
        any::<bool>(),
        prop::option::of((0u64..3000, 1u64..2000, 0.0f64..1.0, 0.2f64..3.0)),
    )
        .prop_map(|(emergency, gpu_all_priority, frame)| SchedHints {
            emergency,
            gpu_all_priority,
            frame: frame.map(|(start, period, progress, estimated)| FrameHint {
                start,
                period,
                progress,
                estimated,
            }),
        })
}

fn stream(mem: &MemorySystem, reqs: &[(u32, u32, u32, u8, u8, u64)], ranks: u32) -> Vec<Request> {
    let mut t = 0;
    reqs.iter()
        .enumerate()
        .map(|(i, &(bank, row, col, kind, source, gap))| {
            t += gap;
            let a = mem.mapper().unmap(&DecodedAddr {
                channel: 0,
                rank: i as u32 % ranks,
                bank_group: 0,
                bank,
                row,
                column: col,
            });
            let source = if source < 4 { source } else { GPU_SOURCE };
            let r = Request::read(i as u64, a, t).with_source(source);
            match kind {
                0 => Request {
                    is_write: true,
                    ..r
                },
                1 => r.with_critical(true),
                _ => r,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random streams over few banks and rows from four CPU cores and the GPU (reads,
    /// writes, critical reads), small queues, frequent refreshes, hints changing at random
    /// times: every heterogeneous scheduler completes every request exactly once, within
    /// every timing constraint, without stalling.
    #[test]
    fn every_scheduler_drains_every_request(
        reqs in prop::collection::vec((0u32..8, 0u32..3, 0u32..8, 0u8..4, 0u8..6, 0u64..6), 1..160),
        hints in prop::collection::vec((0u64..1500, hint_strategy()), 0..6),
        ranks in 1u32..3,
    ) {
        let mut hints = hints;
        hints.sort_by_key(|h| h.0);
        for &sched in HETEROGENEOUS {
            let mut c = config(sched);
            c.spec.org.ranks = ranks;
            c.read_queue = 8;
            c.write_queue = 8;
            c.spec.timing.refi = 700;
            let mut mem = MemorySystem::new(c).unwrap();
            mem.enable_command_log();
            let s = stream(&mem, &reqs, ranks);
            let done = drive(&mut mem, &s, &hints, 200_000);
            let mut ids: Vec<u64> = done.iter().map(|c| c.id).collect();
            ids.sort_unstable();
            prop_assert_eq!(ids, (0..s.len() as u64).collect::<Vec<_>>(), "{}", sched);
            if let Err(e) = common::check_log(mem.config(), &mem.command_log()) {
                prop_assert!(false, "{}: {}", sched, e);
            }
        }
    }

    /// Hints do not change the schedule of the schedulers that ignore them.
    #[test]
    fn hints_leave_other_schedulers_alone(
        seed in 1u64..1000,
        hints in prop::collection::vec((0u64..4000, hint_strategy()), 1..6),
    ) {
        let mut hints = hints;
        hints.sort_by_key(|h| h.0);
        let reqs = mixed(600, seed, 40, 50, 4);
        for sched in ["fcfs", "frfcfs", "frfcfs-cap"] {
            let mut plain = MemorySystem::new(config(sched)).unwrap();
            let a = drive(&mut plain, &reqs, &[], 1_000_000);
            let mut hinted = MemorySystem::new(config(sched)).unwrap();
            let b = drive(&mut hinted, &reqs, &hints, 1_000_000);
            prop_assert_eq!(a, b);
            prop_assert_eq!(plain.report().to_json(), hinted.report().to_json());
        }
    }
}

/// A priority scheduler whose classes all coincide is FR-FCFS: the same commands at the same
/// cycles, so the same report.
#[test]
fn one_class_is_frfcfs_bit_for_bit() {
    let report = |sched: &str, reqs: &[Request]| {
        let mut mem = MemorySystem::new(config(sched)).unwrap();
        drive(&mut mem, reqs, &[], 1_000_000);
        let mut r = mem.report();
        r.scheduler = "frfcfs".into();
        r.to_json()
    };
    // CPU and GPU, nothing critical: GPU-favoring's classes coincide.
    let mixed_stream = mixed(3000, 3, 40, 0, 4);
    assert_eq!(
        report("gpu-favoring", &mixed_stream),
        report("frfcfs", &mixed_stream)
    );
    // CPU only: IM's and DynPrio's classes coincide (no critical access, so IM-SCHED's
    // probability stays 0; no frame).
    let cpu: Vec<Request> = mixed(3000, 5, 0, 0, 4);
    let fr = report("frfcfs", &cpu);
    for sched in ["im", "im-sched", "im-llc", "dynprio"] {
        assert_eq!(report(sched, &cpu), fr, "{sched}");
    }
    // One CPU source: DASH's one cluster.
    let one: Vec<Request> = cpu.iter().map(|r| r.with_source(0)).collect();
    assert_eq!(report("dash", &one), report("frfcfs", &one));
}
