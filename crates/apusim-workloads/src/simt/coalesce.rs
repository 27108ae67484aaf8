//! The coalescer: the transactions of one warp memory instruction, formed as a Fermi-class
//! coalescer does (see the module documentation), with fast paths for the common shapes.

use super::WARP;

/// Append the transactions of one warp memory instruction to `emit` as (address, size):
/// `addrs[lane]` is the lane's byte address, used only where bit `lane` of `mask` is set; every
/// lane touches `size` bytes.
///
/// The common case — every active lane inside one 128-byte segment (unit-stride words, a
/// broadcast) — is found from the lanes' lowest and highest byte without the per-lane segment
/// table; the general path looks up the segment a lane touched last before searching the
/// table. Both produce exactly the transactions described in the module documentation.
#[inline]
pub fn coalesce(addrs: &[u64; WARP], mask: u32, size: u64, mut emit: impl FnMut(u64, u16)) {
    if mask == 0 {
        return;
    }
    let size = size.max(1);
    let (lo, hi) = lane_range(addrs, mask);
    let last = hi + size - 1;
    if lo >> 7 == last >> 7 {
        let half = half_bits(lo & 127, last & 127);
        emit_segment(lo >> 7, half, &mut emit);
        return;
    }
    // Runs of consecutive lanes touching consecutive elements.
    let cont = contiguous_lanes(addrs, size) & mask & (mask << 1);
    let starts = mask & !cont;
    if starts.count_ones() <= MAX_SPANS {
        coalesce_spans(addrs, size, starts, cont, emit);
        return;
    }
    let lanes = LaneBits::new(addrs, size);
    if lanes.multi & mask != 0 {
        coalesce_general(addrs, mask, size, emit);
    } else {
        coalesce_runs(addrs, mask, &lanes, emit);
    }
}

/// Warps whose active lanes form at most this many runs of consecutive elements are
/// coalesced run by run (unit-stride accesses: one run; a 16-wide tile row pair or a wrapped
/// neighbour: two or three).
pub(super) const MAX_SPANS: u32 = 4;

/// Bit `l` set when lane `l` touches the element right after lane `l − 1`'s (`addrs[l] =
/// addrs[l − 1] + size`), computed branch-free over all 32 lanes.
#[inline]
pub(super) fn contiguous_lanes(addrs: &[u64; WARP], size: u64) -> u32 {
    let mut cont = 0u32;
    for l in 1..WARP {
        cont |= u32::from(addrs[l] == addrs[l - 1].wrapping_add(size)) << l;
    }
    cont
}

/// [`coalesce`] of active lanes forming runs of consecutive elements (`starts`: each run's
/// first lane, `cont`: the lanes continuing a run): a run touches one byte range, whose
/// segments are recorded in address order (the order its lanes first touch them), merged
/// with the earlier runs' segments exactly as [`coalesce_general`] merges lanes.
#[inline]
fn coalesce_spans(
    addrs: &[u64; WARP],
    size: u64,
    mut starts: u32,
    cont: u32,
    mut emit: impl FnMut(u64, u16),
) {
    let run_end = |l: u32| l + (!(u64::from(cont) >> (l + 1))).trailing_zeros();
    // Runs in ascending address order, each starting in a segment after the previous run's
    // last one, share no segment: their spans are the transactions, in run order.
    let mut ascending = true;
    let mut next = 0u64;
    let mut m = starts;
    while m != 0 {
        let l = m.trailing_zeros();
        m &= m - 1;
        ascending &= addrs[l as usize] >> 7 >= next;
        next = ((addrs[run_end(l) as usize] + size - 1) >> 7) + 1;
    }
    if ascending {
        while starts != 0 {
            let l = starts.trailing_zeros();
            starts &= starts - 1;
            coalesce_span(
                addrs[l as usize],
                addrs[run_end(l) as usize] + size,
                &mut emit,
            );
        }
        return;
    }
    let mut segs = Segments::default();
    while starts != 0 {
        let l = starts.trailing_zeros();
        starts &= starts - 1;
        let first = addrs[l as usize];
        coalesce_span(first, addrs[run_end(l) as usize] + size, |a, sz| {
            let half = match (a & 127, sz) {
                (0, 64) => 1,
                (_, 64) => 2,
                _ => 3,
            };
            segs.touch(a >> 7, half);
        });
    }
    for i in 0..segs.n {
        emit_segment(segs.seg[i], segs.half[i], &mut emit);
    }
}

/// The transactions of a warp touching exactly the bytes `first..end` (one run of
/// consecutive lanes in lane order): the same as [`coalesce_general`] gives for such lanes —
/// every segment in address order, full inside the run, the two ends reduced to a 64-byte
/// half where only one half is touched.
#[inline]
pub(super) fn coalesce_span(first: u64, end: u64, mut emit: impl FnMut(u64, u16)) {
    let last = end - 1;
    let (s0, s1) = (first >> 7, last >> 7);
    let hi0 = if s0 == s1 { last & 127 } else { 127 };
    emit_segment(s0, half_bits(first & 127, hi0), &mut emit);
    for s in s0 + 1..s1 {
        emit_segment(s, 3, &mut emit);
    }
    if s1 > s0 {
        emit_segment(s1, half_bits(0, last & 127), &mut emit);
    }
}

/// Per-lane predicates of one warp instruction as bit masks (bit `l` for lane `l`), computed
/// branch-free over all 32 lanes.
struct LaneBits {
    /// The lane's first byte lies in the lower half of its segment.
    low: u32,
    /// The lane's last byte lies in the upper half of its segment.
    high: u32,
    /// The lane's bytes span more than one segment.
    multi: u32,
    /// The lane's (first) segment equals lane `l − 1`'s.
    same: u32,
}

impl LaneBits {
    #[inline]
    fn new(addrs: &[u64; WARP], size: u64) -> LaneBits {
        let (mut low, mut high, mut multi, mut same) = (0u32, 0u32, 0u32, 0u32);
        let mut prev = u64::MAX;
        for (l, &a) in addrs.iter().enumerate() {
            let e = a + size - 1;
            low |= u32::from(a & 127 < 64) << l;
            high |= u32::from(e & 127 >= 64) << l;
            multi |= u32::from(a >> 7 != e >> 7) << l;
            same |= u32::from(a >> 7 == prev) << l;
            prev = a >> 7;
        }
        LaneBits {
            low,
            high,
            multi,
            same,
        }
    }
}

/// [`coalesce`] when every active lane lies within one segment: the active lanes fall into
/// runs of consecutive lanes on the same segment, and a run's touched halves come from the
/// masks of [`LaneBits`] at once, so the work is per run, not per lane.
fn coalesce_runs(addrs: &[u64; WARP], mask: u32, lanes: &LaneBits, mut emit: impl FnMut(u64, u16)) {
    let cont = mask & lanes.same & (mask << 1);
    let mut starts = mask & !cont;
    let run_half = |l: u32| {
        // The run: lane `l` and the continuing lanes right after it.
        let len = 1 + (!(u64::from(cont) >> (l + 1))).trailing_zeros();
        let run = (((1u64 << len) - 1) << l) as u32;
        u8::from(lanes.low & run != 0) | (u8::from(lanes.high & run != 0) << 1)
    };
    // Runs on nondecreasing segments (addresses growing with the lane, as most indexed
    // accesses do): a segment's runs are adjacent, merged into the pending transaction.
    let mut m = starts;
    let mut prev = 0u64;
    let mut ascending = true;
    while m != 0 {
        let seg = addrs[m.trailing_zeros() as usize] >> 7;
        m &= m - 1;
        ascending &= seg >= prev;
        prev = seg;
    }
    if ascending {
        let (mut seg, mut half) = (u64::MAX, 0u8);
        while starts != 0 {
            let l = starts.trailing_zeros();
            starts &= starts - 1;
            let s = addrs[l as usize] >> 7;
            if s != seg {
                if half != 0 {
                    emit_segment(seg, half, &mut emit);
                }
                (seg, half) = (s, 0);
            }
            half |= run_half(l);
        }
        emit_segment(seg, half, &mut emit);
        return;
    }
    let mut segs = Segments::default();
    while starts != 0 {
        let l = starts.trailing_zeros();
        starts &= starts - 1;
        segs.touch(addrs[l as usize] >> 7, run_half(l));
    }
    for i in 0..segs.n {
        emit_segment(segs.seg[i], segs.half[i], &mut emit);
    }
}

/// Lowest and highest address among the active lanes.
#[inline]
fn lane_range(addrs: &[u64; WARP], mask: u32) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    if mask == u32::MAX {
        // Branch-free over all lanes (vectorizes).
        for &a in addrs {
            lo = lo.min(a);
            hi = hi.max(a);
        }
    } else {
        let mut m = mask;
        while m != 0 {
            let a = addrs[m.trailing_zeros() as usize];
            m &= m - 1;
            lo = lo.min(a);
            hi = hi.max(a);
        }
    }
    (lo, hi)
}

/// Halves of a 128-byte segment touched by the bytes at offsets `lo..=hi` (bit 0: lower 64
/// bytes, bit 1: upper 64 bytes).
#[inline]
fn half_bits(lo: u64, hi: u64) -> u8 {
    u8::from(lo < 64) | (u8::from(hi >= 64) << 1)
}

/// The transaction of segment `seg` with touched halves `half`.
#[inline]
fn emit_segment(seg: u64, half: u8, emit: &mut impl FnMut(u64, u16)) {
    let base = seg << 7;
    match half {
        1 => emit(base, 64),
        2 => emit(base + 64, 64),
        _ => emit(base, 128),
    }
}

/// [`coalesce`] for lanes spread over more than one segment: segments in order of the lowest
/// lane (then the lowest byte) touching them.
pub(super) fn coalesce_general(
    addrs: &[u64; WARP],
    mask: u32,
    size: u64,
    mut emit: impl FnMut(u64, u16),
) {
    let mut segs = Segments::default();
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let first = addrs[lane];
        let last = first + size - 1;
        let (s0, s1) = (first >> 7, last >> 7);
        if s0 == s1 {
            segs.touch(s0, half_bits(first & 127, last & 127));
        } else {
            segs.touch(s0, half_bits(first & 127, 127));
            for s in s0 + 1..s1 {
                segs.touch(s, 3);
            }
            segs.touch(s1, half_bits(0, last & 127));
        }
    }
    for i in 0..segs.n {
        emit_segment(segs.seg[i], segs.half[i], &mut emit);
    }
}

/// The segments of one warp instruction in order of first touch, with their touched halves.
struct Segments {
    seg: [u64; WARP * 2],
    half: [u8; WARP * 2],
    n: usize,
}

impl Default for Segments {
    fn default() -> Self {
        Segments {
            seg: [0; WARP * 2],
            half: [0; WARP * 2],
            n: 0,
        }
    }
}

impl Segments {
    /// Record a touch of halves `half` of segment `seg` (lanes touching more than
    /// `2 × WARP` segments are beyond any real access size and are dropped).
    #[inline(always)]
    fn touch(&mut self, seg: u64, half: u8) {
        let n = self.n;
        if n > 0 && self.seg[n - 1] == seg {
            self.half[n - 1] |= half;
        } else if let Some(i) = self.seg[..n].iter().position(|&s| s == seg) {
            self.half[i] |= half;
        } else if n < self.seg.len() {
            self.seg[n] = seg;
            self.half[n] = half;
            self.n = n + 1;
        }
    }
}
