//! A small SIMT execution layer: GPGPU kernels written as Rust code over their thread index,
//! executed grid → thread blocks → warps of 32 threads in lock step, streamed out as the
//! coalesced global-memory transactions a GPU's shader cores would issue.
//!
//! One file, one idea: the SIMT execution layer (grid, blocks, warps, coalescing) that every
//! GPGPU kernel is written against; a sixth of it is tests.
//!
//! The model follows the CUDA/OpenCL GPUs of the papers' GPGPU studies (MacSim's shader cores in
//! drp-reuse-probability-shared-llc.txt §3 and tap-tlp-aware-llc.txt §4; the OpenCL GPU of
//! adaptive-gpu-l1-bypassing.txt §4).
//!
//! # Writing a kernel
//!
//! A [`Kernel`] is a program of one or more launches ([`Kernel::next_launch`] runs the host
//! code between launches and returns the next grid). [`Kernel::block`] runs one thread block:
//! the code between two `__syncthreads()` barriers is one [`Block::phase`], whose closure is
//! called once per warp of the block. Inside, every warp-level instruction is a method of
//! [`Warp`] taking a closure over the thread index ([`Tid`]): [`Warp::load`] /
//! [`Warp::store`] / [`Warp::atomic`] perform a global memory instruction (the closure returns
//! the element index a lane touches, or `None` for an inactive lane), [`Warp::shared`] counts
//! scratchpad (shared-memory) instructions, [`Warp::compute`] counts ALU instructions. The
//! kernel really computes: loads return the lanes' values from the [`Buf`], stores write them.
//! Kernels whose lanes touch consecutive elements use [`Warp::load_run`] /
//! [`Warp::store_run`] (no per-lane work: a slice copy and one byte span), and kernels that
//! compute their lanes' indices as an array use [`Warp::load_idx`] / [`Warp::store_idx`]
//! (no closure per lane); both record exactly what the closure forms record.
//! Scratchpad contents are plain Rust arrays of the kernel; barrier semantics come from
//! running phases in order.
//!
//! # Coalescing
//!
//! [`coalesce`] forms the transactions of one warp instruction as a Fermi-class coalescer does:
//! the active lanes' bytes are grouped by 128-byte aligned segment, in order of the lowest lane
//! touching each segment; a segment whose touched bytes all lie in one 64-byte half is
//! reduced to a 64-byte transaction. Each transaction is one [`Access`] (size 64 or 128).
//! The work is per lane only where it must be: a warp inside one segment is found from its
//! lowest and highest address, runs of consecutive elements are coalesced span by span, and
//! runs of lanes on one segment through bit masks; a randomized test checks every fast path
//! against the per-lane algorithm.
//!
//! # Scheduling and timing convention
//!
//! Blocks are distributed in waves: a wave holds `sms × R` blocks, block `j` of the wave runs on
//! SM `j % sms` in residency slot `j / sms`, where `R = clamp(max_warps_per_sm /
//! warps_per_block, 1, 8)` blocks are resident per SM. The `W = R × warps_per_block` resident
//! warps of an SM issue in loose round robin, one warp instruction per cycle: instruction `k`
//! (counting memory, shared-memory and compute instructions since the warp's current phase
//! began) of the warp in slot `s` issues at cycle `phase_start + k·W + s`. A barrier ends the
//! phase for the whole block at the slowest warp's end. A wave starts when the previous wave's
//! last block finished; launches follow each other. So `time` is the SM cycle (header clock
//! [`SimtConfig::clock_mhz`]), each warp's compute instructions between two memory instructions
//! are `Δtime / W − 1` within a phase, and the records of a wave are merged into time order
//! before they are handed out (memory stays bounded by one wave).
//!
//! Records: agent GPU, stream `ShaderData`, op `Read` (loads), `Write` (stores) or `Read` with
//! [`Access::MODIFY`] (atomics), `unit` = SM id, `warp` = global warp id (unique over the whole
//! program), `pc` = the kernel's memory-instruction PC (distinct per load/store site).
//! Instruction fetches (`ShaderInstr`) are not emitted: the shader instruction caches of these
//! kernels' small code hold them (drp §3's 4 KB per-core I-cache).

use apusim_trace::{
    Access, AccessSource, Agent, BlockItem, BlockSource, LaunchInfo, Op, Result, Stream,
    ThreadBlock, TraceHeader, WarpOp, BATCH,
};

/// Lanes per warp.
pub const WARP: usize = 32;
/// First byte of the GPGPU global memory region (distinct from the render GPU's surfaces).
pub const GLOBAL_BASE: u64 = 0x200_0000_0000;
/// Code address of kernel memory-instruction PCs.
pub const CODE_BASE: u64 = 0x7000_0000;

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
const MAX_SPANS: u32 = 4;

/// Bit `l` set when lane `l` touches the element right after lane `l − 1`'s (`addrs[l] =
/// addrs[l − 1] + size`), computed branch-free over all 32 lanes.
#[inline]
fn contiguous_lanes(addrs: &[u64; WARP], size: u64) -> u32 {
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
fn coalesce_span(first: u64, end: u64, mut emit: impl FnMut(u64, u16)) {
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
fn coalesce_general(addrs: &[u64; WARP], mask: u32, size: u64, mut emit: impl FnMut(u64, u16)) {
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

/// Mask of a warp's first `n` lanes (all 32 when `n ≥ 32`): the active lanes of a warp whose
/// threads past the `n`-th have no work.
#[inline]
pub fn first_lanes(n: usize) -> u32 {
    if n >= WARP {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// A bump allocator of GPU global memory (4 KiB aligned buffers).
#[derive(Clone, Debug)]
pub struct Alloc {
    next: u64,
}

impl Default for Alloc {
    fn default() -> Self {
        Alloc { next: GLOBAL_BASE }
    }
}

impl Alloc {
    /// Place `data` in global memory.
    pub fn buf<T: Copy>(&mut self, data: Vec<T>) -> Buf<T> {
        let base = self.next;
        let bytes = (data.len() * std::mem::size_of::<T>()) as u64;
        self.next = (base + bytes + 4095) & !4095;
        Buf { base, data }
    }
    /// Bytes allocated so far (the kernel's global-memory footprint).
    pub fn allocated(&self) -> u64 {
        self.next - GLOBAL_BASE
    }
}

/// An array in GPU global memory: its base address and its contents.
#[derive(Clone, Debug)]
pub struct Buf<T> {
    pub base: u64,
    pub data: Vec<T>,
}

impl<T: Copy> Buf<T> {
    /// Byte address of element `i`.
    #[inline]
    pub fn addr(&self, i: usize) -> u64 {
        self.base + (i * std::mem::size_of::<T>()) as u64
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// The thread executing a lane: its index within the block and within the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tid {
    /// `threadIdx.x` (linearized).
    pub local: usize,
    /// `blockIdx.x * blockDim.x + threadIdx.x`.
    pub global: usize,
    /// The lane within the warp.
    pub lane: usize,
}

/// One kernel launch: a 1-D grid of `blocks` blocks of `threads` threads (2-D and 3-D grids
/// are linearized by the kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub blocks: usize,
    pub threads: usize,
}

/// A GPGPU program: a sequence of launches of block code.
pub trait Kernel: Send {
    /// Run the host code up to the next launch and return it; `None` when the program is done.
    fn next_launch(&mut self) -> Option<Launch>;
    /// Execute thread block `blk.idx` of the current launch.
    fn block(&mut self, blk: &mut Block<'_>);
    /// Bytes of global memory the program allocated.
    fn footprint(&self) -> u64;
    /// Scratchpad bytes each block of the current launch allocates (what limits resident
    /// blocks on a timed SM beside its warps and registers); 0 when the kernel declares none.
    fn shared_bytes(&self) -> u32 {
        0
    }
}

/// Instruction counts of a SIMT run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimtStats {
    /// Warp-level global memory instructions issued.
    pub global_instrs: u64,
    /// Memory transactions they produced (records emitted).
    pub transactions: u64,
    /// Warp-level shared-memory (scratchpad) instructions, kept out of the trace.
    pub shared_instrs: u64,
    /// Warp-level compute instructions.
    pub compute_instrs: u64,
    /// Warps executed.
    pub warps: u64,
    /// Kernel launches.
    pub launches: u64,
}

impl SimtStats {
    /// Warp instructions of all kinds.
    pub fn instructions(&self) -> u64 {
        self.global_instrs + self.shared_instrs + self.compute_instrs
    }
}

/// Configuration of the simulated GPU for trace generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimtConfig {
    /// Streaming multiprocessors (shader cores).
    pub sms: u16,
    /// Warp contexts per SM (bounds the resident blocks).
    pub max_warps_per_sm: u16,
    /// Shader clock, written to the header.
    pub clock_mhz: u32,
}

impl Default for SimtConfig {
    /// drp §3's CUDA GPU: six shader cores at 1.5 GHz; 48 resident warps per core (of its 80
    /// warp contexts, a typical occupancy).
    fn default() -> Self {
        SimtConfig {
            sms: 6,
            max_warps_per_sm: 48,
            clock_mhz: 1500,
        }
    }
}

struct Emit<'a> {
    out: &'a mut Vec<Access>,
    stats: &'a mut SimtStats,
    sm: u16,
    stride: u64,
    /// Per-warp programs instead of access records ([`SimtBlocks`]).
    rec: Option<&'a mut WarpRecorder>,
}

/// The per-warp instruction lists of the block being executed ([`SimtBlocks`]).
#[derive(Default)]
struct WarpRecorder {
    warps: Vec<Vec<WarpOp>>,
    txns: Vec<(u64, u16)>,
}

impl WarpRecorder {
    /// Append `n` compute (or, with `shared`, scratchpad) instructions to warp `w`, merged
    /// into a run of the same kind right before them.
    fn count(&mut self, w: usize, n: u64, shared: bool) {
        if n == 0 {
            return;
        }
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let ops = &mut self.warps[w];
        match (ops.last_mut(), shared) {
            (Some(WarpOp::Compute(m)), false) | (Some(WarpOp::Shared(m)), true) => {
                *m = m.saturating_add(n)
            }
            _ => ops.push(if shared {
                WarpOp::Shared(n)
            } else {
                WarpOp::Compute(n)
            }),
        }
    }
}

/// One thread block being executed.
pub struct Block<'a> {
    /// `blockIdx.x`.
    pub idx: usize,
    /// `blockDim.x`.
    pub dim: usize,
    /// `gridDim.x`.
    pub grid: usize,
    emit: Emit<'a>,
    slot0: u64,
    warp_base: u32,
    phase_start: u64,
}

impl Block<'_> {
    /// Warps in this block.
    pub fn warps(&self) -> usize {
        self.dim.div_ceil(WARP)
    }
    /// Run the code up to the next barrier: `f` is called once per warp of the block.
    pub fn phase(&mut self, mut f: impl FnMut(&mut Warp<'_, '_>)) {
        let mut longest = 0;
        for wi in 0..self.warps() {
            let first = wi * WARP;
            let lanes = (self.dim - first).min(WARP);
            let mask = first_lanes(lanes);
            let mut w = Warp {
                emit: &mut self.emit,
                first_local: first,
                block_first: self.idx * self.dim,
                mask,
                k: 0,
                start: self.phase_start + self.slot0 + wi as u64,
                warp_id: self.warp_base + wi as u32,
                wi,
            };
            f(&mut w);
            longest = longest.max(w.k);
        }
        if let Some(rec) = self.emit.rec.as_deref_mut() {
            for ops in &mut rec.warps {
                ops.push(WarpOp::Barrier);
            }
        }
        // The barrier itself is one instruction.
        self.phase_start += (longest + 1) * self.emit.stride;
    }
}

/// Iterator over the active lanes of a warp (set bits of its mask, lowest lane first).
#[derive(Clone, Debug)]
pub struct Lanes {
    mask: u32,
    first: usize,
    block_first: usize,
}

impl Iterator for Lanes {
    type Item = Tid;
    #[inline]
    fn next(&mut self) -> Option<Tid> {
        if self.mask == 0 {
            return None;
        }
        let lane = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        let local = self.first + lane;
        Some(Tid {
            local,
            global: self.block_first + local,
            lane,
        })
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.mask.count_ones() as usize;
        (n, Some(n))
    }
}

/// The bytes a warp memory instruction touches.
enum Touch<'a> {
    /// Lane addresses, active-lane mask, bytes per lane (see [`coalesce`]).
    Lanes(&'a [u64; WARP], u32, u64),
    /// Exactly the bytes `first..end`, touched by consecutive lanes in lane order.
    Span(u64, u64),
}

/// One warp executing one phase of a block.
pub struct Warp<'e, 'a> {
    emit: &'e mut Emit<'a>,
    first_local: usize,
    block_first: usize,
    mask: u32,
    k: u64,
    start: u64,
    warp_id: u32,
    /// The warp's index within its block.
    wi: usize,
}

impl Warp<'_, '_> {
    /// The warp's lanes that map to threads of the block.
    #[inline]
    pub fn tids(&self) -> Lanes {
        Lanes {
            mask: self.mask,
            first: self.first_local,
            block_first: self.block_first,
        }
    }
    /// Thread indices (`Tid::local`) of the warp's threads: the active lanes are always the
    /// first lanes of the warp, so they are one range.
    #[inline]
    pub fn locals(&self) -> std::ops::Range<usize> {
        self.first_local..self.first_local + self.mask.count_ones() as usize
    }
    /// Call `f` for every active lane, lowest first (a plain counted loop for full warps).
    #[inline(always)]
    fn for_lanes(&self, mut f: impl FnMut(Tid)) {
        if self.mask == u32::MAX {
            let (first, bf) = (self.first_local, self.block_first);
            for lane in 0..WARP {
                f(Tid {
                    local: first + lane,
                    global: bf + first + lane,
                    lane,
                });
            }
        } else {
            self.tids().for_each(f);
        }
    }
    /// Count `n` ALU instructions.
    #[inline]
    pub fn compute(&mut self, n: u64) {
        self.k += n;
        self.emit.stats.compute_instrs += n;
        if let Some(rec) = self.emit.rec.as_deref_mut() {
            rec.count(self.wi, n, false);
        }
    }
    /// Count `n` shared-memory (scratchpad) instructions: they cost issue slots but stay out
    /// of the global stream.
    #[inline]
    pub fn shared(&mut self, n: u64) {
        self.k += n;
        self.emit.stats.shared_instrs += n;
        if let Some(rec) = self.emit.rec.as_deref_mut() {
            rec.count(self.wi, n, true);
        }
    }

    /// `threadIdx.x` of the warp's lane 0.
    #[inline]
    pub fn first_local(&self) -> usize {
        self.first_local
    }
    /// Global thread index of the warp's lane 0.
    #[inline]
    pub fn first_global(&self) -> usize {
        self.block_first + self.first_local
    }
    /// Lanes `0..n` of a run access from element `start` bounded by `end`: the warp's active
    /// lanes (always its first ones) with `start + lane < end`.
    #[inline]
    fn run_lanes(&self, start: usize, end: usize) -> usize {
        (self.mask.count_ones() as usize).min(end.saturating_sub(start))
    }

    fn issue(&mut self, pc: u64, op: Op, flags: u8, addrs: &[u64; WARP], mask: u32, size: u64) {
        if mask != 0 {
            self.issue_with(pc, op, flags, Touch::Lanes(addrs, mask, size));
        }
    }

    /// Issue a warp memory instruction touching `touch`.
    #[inline(always)]
    fn issue_with(&mut self, pc: u64, op: Op, flags: u8, touch: Touch<'_>) {
        let time = self.start + self.k * self.emit.stride;
        self.k += 1;
        let e = &mut *self.emit;
        e.stats.global_instrs += 1;
        if let Some(rec) = e.rec.as_deref_mut() {
            let first = rec.txns.len();
            let txns = &mut rec.txns;
            let emit = |addr, sz| txns.push((addr, sz));
            match touch {
                Touch::Lanes(addrs, mask, size) => coalesce(addrs, mask, size, emit),
                Touch::Span(first, end) => coalesce_span(first, end, emit),
            }
            let count = (rec.txns.len() - first) as u32;
            e.stats.transactions += u64::from(count);
            rec.warps[self.wi].push(WarpOp::Mem {
                pc: CODE_BASE + pc,
                op,
                flags,
                first: first as u32,
                count,
            });
            return;
        }
        let before = e.out.len();
        let (sm, warp) = (e.sm, self.warp_id);
        let out = &mut *e.out;
        let emit = |addr, sz| {
            let mut a = Access::new(Agent::GPU, Stream::ShaderData, op, addr, sz)
                .with_pc(CODE_BASE + pc)
                .with_time(time)
                .with_unit(sm)
                .with_warp(warp);
            a.flags = flags;
            out.push(a);
        };
        match touch {
            Touch::Lanes(addrs, mask, size) => coalesce(addrs, mask, size, emit),
            Touch::Span(first, end) => coalesce_span(first, end, emit),
        }
        e.stats.transactions += (e.out.len() - before) as u64;
    }

    /// A global load at site `pc`: lane `t` reads element `idx(t)` of `buf` (`None`: lane
    /// inactive). Returns the values read (default for inactive lanes).
    #[inline]
    pub fn load<T: Copy + Default>(
        &mut self,
        pc: u64,
        buf: &Buf<T>,
        mut idx: impl FnMut(Tid) -> Option<usize>,
    ) -> [T; WARP] {
        let mut vals = [T::default(); WARP];
        let mut addrs = [0u64; WARP];
        let mut mask = 0u32;
        self.for_lanes(|t| {
            if let Some(i) = idx(t) {
                vals[t.lane] = buf.data[i];
                addrs[t.lane] = buf.addr(i);
                mask |= 1 << t.lane;
            }
        });
        self.issue(
            pc,
            Op::Read,
            0,
            &addrs,
            mask,
            std::mem::size_of::<T>() as u64,
        );
        vals
    }

    /// A global load of consecutive elements at site `pc`: lane `l` reads element
    /// `start + l` of `buf` if it is active and `start + l < end` (the closure form
    /// `|t| (start + t.lane < end).then_some(start + t.lane)` of [`Warp::load`], without the
    /// per-lane work: the transactions come from the byte range at once). Returns the values
    /// read (default for inactive lanes).
    #[inline]
    pub fn load_run<T: Copy + Default>(
        &mut self,
        pc: u64,
        buf: &Buf<T>,
        start: usize,
        end: usize,
    ) -> [T; WARP] {
        let mut vals = [T::default(); WARP];
        let n = self.run_lanes(start, end);
        if n > 0 {
            vals[..n].copy_from_slice(&buf.data[start..start + n]);
        }
        self.issue_run(pc, Op::Read, buf, start, n);
        vals
    }

    /// A global load at site `pc` of precomputed element indices: lane `l` reads element
    /// `idx[l]` of `buf` if bit `l` of `mask` is set and the lane is active (the closure
    /// form of [`Warp::load`] for kernels that compute their lanes' indices as a
    /// vectorizable array). Returns the values read (default for inactive lanes).
    #[inline]
    pub fn load_idx<T: Copy + Default>(
        &mut self,
        pc: u64,
        buf: &Buf<T>,
        idx: &[usize; WARP],
        mask: u32,
    ) -> [T; WARP] {
        let mask = mask & self.mask;
        let size = std::mem::size_of::<T>() as u64;
        let mut vals = [T::default(); WARP];
        let mut addrs = [0u64; WARP];
        if mask == u32::MAX {
            for ((v, a), &i) in vals.iter_mut().zip(&mut addrs).zip(idx) {
                *v = buf.data[i];
                *a = buf.addr(i);
            }
        } else {
            let mut m = mask;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                vals[l] = buf.data[idx[l]];
                addrs[l] = buf.addr(idx[l]);
            }
        }
        self.issue(pc, Op::Read, 0, &addrs, mask, size);
        vals
    }

    /// A global store at site `pc` of precomputed element indices: lane `l` writes `vals[l]`
    /// to element `idx[l]` of `buf` if bit `l` of `mask` is set and the lane is active, in
    /// lane order (see [`Warp::store`] and [`Warp::load_idx`]).
    #[inline]
    pub fn store_idx<T: Copy>(
        &mut self,
        pc: u64,
        buf: &mut Buf<T>,
        idx: &[usize; WARP],
        vals: &[T; WARP],
        mask: u32,
    ) {
        let mask = mask & self.mask;
        let mut addrs = [0u64; WARP];
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            buf.data[idx[l]] = vals[l];
            addrs[l] = buf.addr(idx[l]);
        }
        let size = std::mem::size_of::<T>() as u64;
        self.issue(pc, Op::Write, 0, &addrs, mask, size);
    }

    /// A global store of consecutive elements at site `pc`: lane `l` writes `vals[l]` to
    /// element `start + l` of `buf` if it is active and `start + l < end` (see
    /// [`Warp::load_run`]).
    #[inline]
    pub fn store_run<T: Copy>(
        &mut self,
        pc: u64,
        buf: &mut Buf<T>,
        start: usize,
        end: usize,
        vals: &[T; WARP],
    ) {
        let n = self.run_lanes(start, end);
        if n > 0 {
            buf.data[start..start + n].copy_from_slice(&vals[..n]);
        }
        self.issue_run(pc, Op::Write, buf, start, n);
    }

    /// Issue the instruction of lanes `0..n` touching elements `start..start + n` of `buf`.
    #[inline]
    fn issue_run<T: Copy>(&mut self, pc: u64, op: Op, buf: &Buf<T>, start: usize, n: usize) {
        if n > 0 {
            let first = buf.addr(start);
            let end = buf.addr(start + n).max(first + 1);
            self.issue_with(pc, op, 0, Touch::Span(first, end));
        }
    }

    /// A global store at site `pc`: lane `t` writes `(index, value)` = `f(t)` (`None`:
    /// inactive). Lanes store in lane order (the highest lane wins a conflict, as on hardware
    /// the winner is one of them).
    #[inline]
    pub fn store<T: Copy>(
        &mut self,
        pc: u64,
        buf: &mut Buf<T>,
        mut f: impl FnMut(Tid) -> Option<(usize, T)>,
    ) {
        let mut addrs = [0u64; WARP];
        let mut mask = 0u32;
        self.for_lanes(|t| {
            if let Some((i, v)) = f(t) {
                buf.data[i] = v;
                addrs[t.lane] = buf.addr(i);
                mask |= 1 << t.lane;
            }
        });
        self.issue(
            pc,
            Op::Write,
            0,
            &addrs,
            mask,
            std::mem::size_of::<T>() as u64,
        );
    }

    /// A global atomic read-modify-write at site `pc`: lane `t` applies `update` to element
    /// `idx(t)`; returns the old values. Recorded as reads with [`Access::MODIFY`].
    #[inline]
    pub fn atomic<T: Copy + Default>(
        &mut self,
        pc: u64,
        buf: &mut Buf<T>,
        mut idx: impl FnMut(Tid) -> Option<usize>,
        mut update: impl FnMut(Tid, T) -> T,
    ) -> [T; WARP] {
        let mut vals = [T::default(); WARP];
        let mut addrs = [0u64; WARP];
        let mut mask = 0u32;
        self.for_lanes(|t| {
            if let Some(i) = idx(t) {
                vals[t.lane] = buf.data[i];
                buf.data[i] = update(t, buf.data[i]);
                addrs[t.lane] = buf.addr(i);
                mask |= 1 << t.lane;
            }
        });
        let size = std::mem::size_of::<T>() as u64;
        self.issue(pc, Op::Read, Access::MODIFY, &addrs, mask, size);
        vals
    }
}

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

/// Runs a [`Kernel`] block by block as per-warp programs: the [`BlockSource`] a timed GPU
/// executes (`apusim_timing::gpu`). Each block is executed functionally when the GPU asks for
/// it, recording every warp's instructions and its memory instructions' coalesced
/// transactions instead of time-stamped records; the instructions, transactions and kernel
/// results are exactly those of [`SimtSource`] (blocks run in the same order), only their
/// timing is left to the consumer.
pub struct SimtBlocks<K: Kernel> {
    kernel: K,
    header: TraceHeader,
    launch: Option<(LaunchInfo, usize)>,
    launches: u32,
    warp_base: u32,
    rec: WarpRecorder,
    spare: Vec<ThreadBlock>,
    scratch: Vec<Access>,
    stats: SimtStats,
    done: bool,
}

impl<K: Kernel> SimtBlocks<K> {
    /// A program running `kernel` (named `name` in the header) on a GPU clocked at
    /// `clock_mhz`.
    pub fn new(kernel: K, name: &str, provenance: &str, clock_mhz: u32) -> Self {
        let header = TraceHeader::single(
            Agent::GPU,
            name,
            clock_mhz,
            &[Stream::ShaderData],
            &format!("apusim gpgpu {provenance} (per-warp program, apusim_workloads::simt)"),
        );
        SimtBlocks {
            kernel,
            header,
            launch: None,
            launches: 0,
            warp_base: 0,
            rec: WarpRecorder::default(),
            spare: Vec::new(),
            scratch: Vec::new(),
            stats: SimtStats::default(),
            done: false,
        }
    }
    /// Instruction counts of the blocks handed out so far.
    pub fn stats(&self) -> SimtStats {
        self.stats
    }
    /// The kernel (its results, once the program has ended).
    pub fn kernel(&self) -> &K {
        &self.kernel
    }
}

impl<K: Kernel> BlockSource for SimtBlocks<K> {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_item(&mut self) -> Result<Option<BlockItem>> {
        loop {
            if self.done {
                return Ok(None);
            }
            let (info, next) = match self.launch {
                Some((info, next)) if next < info.blocks as usize => (info, next),
                _ => {
                    if let Some((info, _)) = self.launch.take() {
                        self.warp_base = self
                            .warp_base
                            .wrapping_add(info.blocks.wrapping_mul(info.warps_per_block()));
                    }
                    match self.kernel.next_launch() {
                        Some(l) if l.blocks > 0 && l.threads > 0 => {
                            let info = LaunchInfo {
                                index: self.launches,
                                blocks: u32::try_from(l.blocks).unwrap_or(u32::MAX),
                                threads: u32::try_from(l.threads).unwrap_or(u32::MAX),
                                shared_bytes: self.kernel.shared_bytes(),
                                registers: 0,
                            };
                            self.launches += 1;
                            self.stats.launches += 1;
                            self.launch = Some((info, 0));
                            return Ok(Some(BlockItem::Launch(info)));
                        }
                        Some(_) => continue,
                        None => {
                            self.done = true;
                            return Ok(None);
                        }
                    }
                }
            };
            let wpb = info.warps_per_block() as usize;
            self.rec.warps.resize_with(wpb, Vec::new);
            for w in &mut self.rec.warps {
                w.clear();
            }
            self.rec.txns.clear();
            let warp_base = self.warp_base.wrapping_add((next * wpb) as u32);
            let mut blk = Block {
                idx: next,
                dim: info.threads as usize,
                grid: info.blocks as usize,
                emit: Emit {
                    out: &mut self.scratch,
                    stats: &mut self.stats,
                    sm: 0,
                    stride: 1,
                    rec: Some(&mut self.rec),
                },
                slot0: 0,
                warp_base,
                phase_start: 0,
            };
            self.kernel.block(&mut blk);
            self.stats.warps += wpb as u64;
            self.launch = Some((info, next + 1));
            let mut b = self.spare.pop().unwrap_or_default();
            b.clear();
            b.launch = info.index;
            b.index = next as u32;
            b.warp_base = warp_base;
            for ops in &self.rec.warps {
                b.ops.extend_from_slice(ops);
                b.ends.push(b.ops.len() as u32);
            }
            b.txns.extend_from_slice(&self.rec.txns);
            return Ok(Some(BlockItem::Block(b)));
        }
    }

    fn recycle(&mut self, block: ThreadBlock) {
        if self.spare.len() < 64 {
            self.spare.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
