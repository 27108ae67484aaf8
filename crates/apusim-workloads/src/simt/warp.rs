//! What a kernel's code runs against: a thread [`Block`] of phases between barriers and the
//! [`Warp`] whose instructions (loads, stores, atomics, compute, scratchpad) it records.

use super::coalesce::{coalesce, coalesce_span};
use super::{first_lanes, Buf, SimtStats, Tid, CODE_BASE, WARP};
use apusim_trace::{Access, Agent, Op, Stream, WarpOp};

pub(super) struct Emit<'a> {
    pub(super) out: &'a mut Vec<Access>,
    pub(super) stats: &'a mut SimtStats,
    pub(super) sm: u16,
    pub(super) stride: u64,
    /// Per-warp programs instead of access records ([`SimtBlocks`](super::SimtBlocks)).
    pub(super) rec: Option<&'a mut WarpRecorder>,
}

/// The per-warp instruction lists of the block being executed ([`SimtBlocks`](super::SimtBlocks)).
#[derive(Default)]
pub(super) struct WarpRecorder {
    pub(super) warps: Vec<Vec<WarpOp>>,
    pub(super) txns: Vec<(u64, u16)>,
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
    pub(super) emit: Emit<'a>,
    pub(super) slot0: u64,
    pub(super) warp_base: u32,
    pub(super) phase_start: u64,
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
        self.count(n, false);
    }
    /// Count `n` shared-memory (scratchpad) instructions: they cost issue slots but stay out
    /// of the global stream.
    #[inline]
    pub fn shared(&mut self, n: u64) {
        self.count(n, true);
    }
    /// Count `n` instructions that issue but touch no global memory: shared-memory ones when
    /// `shared`, else ALU ones.
    #[inline(always)]
    fn count(&mut self, n: u64, shared: bool) {
        self.k += n;
        let stats = &mut self.emit.stats;
        if shared {
            stats.shared_instrs += n;
        } else {
            stats.compute_instrs += n;
        }
        if let Some(rec) = self.emit.rec.as_deref_mut() {
            rec.count(self.wi, n, shared);
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

    /// Issue `op` with `flags` for the lanes to which `touch(t)` gives the address of an
    /// element of type `T` (it reads or writes the element there), lowest lane first.
    #[inline(always)]
    fn issue_lanes<T>(
        &mut self,
        pc: u64,
        op: Op,
        flags: u8,
        mut touch: impl FnMut(Tid) -> Option<u64>,
    ) {
        let mut addrs = [0u64; WARP];
        let mut mask = 0u32;
        self.for_lanes(|t| {
            if let Some(a) = touch(t) {
                addrs[t.lane] = a;
                mask |= 1 << t.lane;
            }
        });
        let size = std::mem::size_of::<T>() as u64;
        self.issue(pc, op, flags, &addrs, mask, size);
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
        self.issue_lanes::<T>(pc, Op::Read, 0, |t| {
            idx(t).map(|i| {
                vals[t.lane] = buf.data[i];
                buf.addr(i)
            })
        });
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
        self.issue_lanes::<T>(pc, Op::Write, 0, |t| {
            f(t).map(|(i, v)| {
                buf.data[i] = v;
                buf.addr(i)
            })
        });
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
        self.issue_lanes::<T>(pc, Op::Read, Access::MODIFY, |t| {
            idx(t).map(|i| {
                vals[t.lane] = buf.data[i];
                buf.data[i] = update(t, buf.data[i]);
                buf.addr(i)
            })
        });
        vals
    }
}
