//! Tests of the SIMT layer: the coalescer's transactions and its fast paths against the
//! per-lane algorithm, and a SAXPY kernel run as access records and as per-warp programs.

use super::coalesce::{coalesce_general, contiguous_lanes, MAX_SPANS};
use super::*;
use apusim_trace::{Agent, BlockItem, BlockSource, Op, WarpOp};

fn tx(addrs: &[u64; WARP], mask: u32, size: u64) -> Vec<(u64, u16)> {
    let mut v = Vec::new();
    coalesce(addrs, mask, size, |a, s| v.push((a, s)));
    v
}

#[test]
fn unit_stride_words_coalesce_into_one_segment() {
    let a: [u64; WARP] = std::array::from_fn(|l| 0x1000 + 4 * l as u64);
    assert_eq!(tx(&a, u32::MAX, 4), vec![(0x1000, 128)]);
    // Half the warp: one 64-byte transaction.
    assert_eq!(tx(&a, 0xFFFF, 4), vec![(0x1000, 64)]);
    assert_eq!(tx(&a, 0xFFFF_0000, 4), vec![(0x1040, 64)]);
    // Misaligned by one word: two segments, the second reduced to 64 bytes.
    let b: [u64; WARP] = std::array::from_fn(|l| 0x1004 + 4 * l as u64);
    assert_eq!(tx(&b, u32::MAX, 4), vec![(0x1000, 128), (0x1080, 64)]);
    // Doubles: 256 bytes, two segments.
    let d: [u64; WARP] = std::array::from_fn(|l| 0x2000 + 8 * l as u64);
    assert_eq!(tx(&d, u32::MAX, 8), vec![(0x2000, 128), (0x2080, 128)]);
}

#[test]
fn stride_two_doubles_the_transactions() {
    let a: [u64; WARP] = std::array::from_fn(|l| 0x1000 + 8 * l as u64);
    assert_eq!(tx(&a, u32::MAX, 4), vec![(0x1000, 128), (0x1080, 128)]);
    // Same address in every lane: one 64-byte transaction (a broadcast).
    assert_eq!(tx(&[0x1010; WARP], u32::MAX, 4), vec![(0x1000, 64)]);
}

#[test]
fn scattered_lanes_get_one_transaction_each() {
    let a: [u64; WARP] = std::array::from_fn(|l| 0x10_0000 + 4096 * (31 - l as u64) + 68);
    let v = tx(&a, u32::MAX, 4);
    assert_eq!(v.len(), 32);
    assert_eq!(v[0], (0x10_0000 + 4096 * 31 + 64, 64));
    assert!(v.iter().all(|&(_, s)| s == 64));
    // Inactive lanes contribute nothing.
    assert!(tx(&a, 0, 4).is_empty());
    assert_eq!(tx(&a, 0b101, 4).len(), 2);
}

/// The general per-lane path of the coalescer, for comparison with the fast paths.
fn tx_general(addrs: &[u64; WARP], mask: u32, size: u64) -> Vec<(u64, u16)> {
    let mut v = Vec::new();
    coalesce_general(addrs, mask, size, |a, s| v.push((a, s)));
    v
}

#[test]
fn fast_paths_match_the_general_coalescer() {
    let mut rng = crate::rng::SplitMix64::new(7);
    let mut spans = 0;
    for _ in 0..20_000 {
        let size = [1u64, 2, 4, 8, 12, 16][rng.below(6) as usize];
        let base = 0x4000 + rng.below(512);
        let lanes = 1 + rng.below(32) as u32;
        let mask = if lanes == 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        };
        // Unit stride, sometimes with one lane off (a wrapped neighbour), sometimes a
        // stride of two elements or a broadcast.
        let kind = rng.below(6);
        let gap = rng.below(1024);
        let mut a: [u64; WARP] = std::array::from_fn(|l| match kind {
            2 => base + 2 * size * l as u64,
            3 => base,
            // Two tile rows (matrixmul) with a gap, possibly overlapping.
            4 => base + size * l as u64 + if l >= 16 { gap } else { 0 },
            _ => base + size * l as u64,
        });
        if kind == 5 {
            // Runs of random lengths at random places.
            let mut l = 0;
            while l < WARP {
                let (len, at) = (1 + rng.below(12) as usize, 0x4000 + rng.below(2048));
                for (i, x) in a[l..(l + len).min(WARP)].iter_mut().enumerate() {
                    *x = at + size * i as u64;
                }
                l += len;
            }
        }
        if kind == 1 {
            a[rng.below(32) as usize] += 128 * (1 + rng.below(3));
        }
        let mut check = |mask: u32| {
            let cont = contiguous_lanes(&a, size) & mask & (mask << 1);
            spans += u32::from((mask & !cont).count_ones() <= MAX_SPANS);
            assert_eq!(
                tx(&a, mask, size),
                tx_general(&a, mask, size),
                "{a:x?} {mask:x}"
            );
        };
        check(mask);
        check(mask & !1);
        check(rng.next_u64() as u32);
    }
    assert!(spans > 5_000, "{spans}");
}

/// y = a·x + y over 1000 elements with 96-thread blocks.
struct Saxpy {
    x: Buf<f32>,
    y: Buf<f32>,
    launched: bool,
    mem: u64,
}
impl Kernel for Saxpy {
    fn next_launch(&mut self) -> Option<Launch> {
        if std::mem::replace(&mut self.launched, true) {
            return None;
        }
        Some(Launch {
            blocks: self.x.len().div_ceil(96),
            threads: 96,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let (x, y) = (&self.x, &mut self.y);
        let n = x.len();
        blk.phase(|w| {
            let xv = w.load(0, x, |t| (t.global < n).then_some(t.global));
            let yv = w.load(8, y, |t| (t.global < n).then_some(t.global));
            w.compute(2);
            w.store(16, y, |t| {
                (t.global < n).then(|| (t.global, 2.0 * xv[t.lane] + yv[t.lane]))
            });
        });
    }
    fn footprint(&self) -> u64 {
        self.mem
    }
}

fn saxpy_kernel() -> Saxpy {
    let mut al = Alloc::default();
    let x = al.buf((0..1000).map(|i| i as f32).collect());
    let y = al.buf(vec![1.0f32; 1000]);
    Saxpy {
        x,
        y,
        launched: false,
        mem: al.allocated(),
    }
}

fn saxpy() -> SimtSource<Saxpy> {
    SimtSource::new(saxpy_kernel(), "saxpy", "test", SimtConfig::default())
}

#[test]
fn engine_runs_computes_and_orders_records() {
    let mut s = saxpy();
    let recs = apusim_trace::collect(&mut s).unwrap();
    for (i, v) in s.kernel().y.data.iter().enumerate() {
        assert_eq!(*v, 2.0 * i as f32 + 1.0);
    }
    assert!(recs.windows(2).all(|w| w[0].time <= w[1].time));
    let st = s.stats();
    // 10 full blocks of 3 warps and a last block of 40 threads (2 warps), 3 instructions each.
    assert_eq!(st.global_instrs, 3 * (10 * 3 + 2));
    assert_eq!(st.transactions, recs.len() as u64);
    // Each full warp: one 128-byte transaction per instruction.
    let writes: u64 = recs
        .iter()
        .filter(|a| a.op == Op::Write)
        .map(|a| a.size as u64)
        .sum();
    assert!(writes >= 4000);
    assert!(recs.iter().all(|a| a.unit < 6 && a.agent == Agent::GPU));
    let pcs: std::collections::BTreeSet<u64> = recs.iter().map(|a| a.pc).collect();
    assert_eq!(pcs.len(), 3);
    assert_eq!(recs, apusim_trace::collect(&mut saxpy()).unwrap());
}

#[test]
fn per_warp_programs_hold_the_trace_s_instructions_and_transactions() {
    let mut p = SimtBlocks::new(saxpy_kernel(), "saxpy", "test", 1500);
    let (mut launches, mut blocks, mut txns) = (0, 0, Vec::new());
    let mut compute = 0u64;
    while let Some(item) = p.next_item().unwrap() {
        match item {
            BlockItem::Launch(l) => {
                launches += 1;
                assert_eq!((l.blocks, l.threads, l.index), (11, 96, 0));
            }
            BlockItem::Block(b) => {
                assert_eq!(b.index, blocks);
                blocks += 1;
                // Each warp: load, load, 2 compute, store, and the block's closing barrier.
                for w in 0..b.warps() {
                    let ops = &b.ops[b.warp_range(w)];
                    compute += 2;
                    if b.index == 10 && w == 2 {
                        // Threads 1024.. of the last block have no element: no memory
                        // instruction has an active lane.
                        assert_eq!(ops, [WarpOp::Compute(2), WarpOp::Barrier]);
                        continue;
                    }
                    assert_eq!(ops.len(), 5, "{ops:?}");
                    assert!(matches!(ops[0], WarpOp::Mem { op: Op::Read, .. }));
                    assert!(matches!(ops[1], WarpOp::Mem { op: Op::Read, .. }));
                    assert_eq!(ops[2], WarpOp::Compute(2));
                    assert!(matches!(ops[3], WarpOp::Mem { op: Op::Write, .. }));
                    assert_eq!(ops[4], WarpOp::Barrier);
                    for op in ops {
                        if let WarpOp::Mem { first, count, .. } = *op {
                            let r = first as usize..(first + count) as usize;
                            txns.extend_from_slice(&b.txns[r]);
                        }
                    }
                }
                p.recycle(b);
            }
        }
    }
    assert_eq!((launches, blocks), (1, 11));
    for (i, v) in p.kernel().y.data.iter().enumerate() {
        assert_eq!(*v, 2.0 * i as f32 + 1.0);
    }
    // The same transactions as the access trace, as a multiset.
    let mut trace: Vec<(u64, u16)> = apusim_trace::collect(&mut saxpy())
        .unwrap()
        .iter()
        .map(|a| (a.addr, a.size))
        .collect();
    trace.sort_unstable();
    txns.sort_unstable();
    assert_eq!(txns, trace);
    let st = p.stats();
    assert_eq!(st.compute_instrs, compute);
    assert_eq!(st.transactions, txns.len() as u64);
    assert_eq!(st.global_instrs, 3 * (10 * 3 + 2));
}
