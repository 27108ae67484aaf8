//! Per-warp programs: what a timed GPU's shader cores execute.
//!
//! An access trace fixes the order of a GPU's accesses; a timed SIMT core must choose that
//! order itself, because its warps interleave by latency (a memory-bound kernel's access order
//! changes when memory gets slower). It therefore needs each warp's instruction stream rather
//! than a merged access stream: a [`BlockSource`] hands out kernel launches ([`LaunchInfo`])
//! and their thread blocks ([`ThreadBlock`]), each block holding every warp's
//! [`WarpOp`]s in program order with the coalesced memory transactions of its memory
//! instructions. Execution-driven generators (`apusim_workloads::simt`) produce blocks on
//! demand, so a program is never held whole: one block at a time per dispatch.
//!
//! The dependence information is the scoreboard's: a warp's loads issue back to back, and
//! the first instruction after them that is not a load (compute, scratchpad, store, atomic or
//! barrier) uses their results and waits for them (see `apusim_timing::gpu`).

use crate::{Op, Result, TraceHeader};

/// One warp-level instruction of a per-warp program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `n` ALU instructions in a row (each one issue slot).
    Compute(u32),
    /// `n` shared-memory (scratchpad) instructions in a row (each one issue slot, no global
    /// traffic).
    Shared(u32),
    /// A global memory instruction at code address `pc`: a load ([`Op::Read`]), a store
    /// ([`Op::Write`]) or an atomic (`Read` with [`crate::Access::MODIFY`] in `flags`),
    /// whose transactions are `count` entries of [`ThreadBlock::txns`] from `first`.
    Mem {
        pc: u64,
        op: Op,
        flags: u8,
        first: u32,
        count: u32,
    },
    /// `__syncthreads()`: the warp waits until every warp of its block arrives.
    Barrier,
}

/// One kernel launch (a grid): its blocks follow until the next launch, which starts only
/// when every block of this one has finished (kernels of one stream are serialized).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchInfo {
    /// Launches of the program before this one.
    pub index: u32,
    /// Thread blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Scratchpad bytes each block allocates (0: none declared).
    pub shared_bytes: u32,
    /// Registers each thread needs (0: none declared).
    pub registers: u32,
}

impl LaunchInfo {
    /// Warps per block.
    pub fn warps_per_block(&self) -> u32 {
        self.threads.div_ceil(32)
    }
}

/// One thread block: every warp's instructions and their transactions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadBlock {
    /// The launch it belongs to ([`LaunchInfo::index`]).
    pub launch: u32,
    /// `blockIdx.x`.
    pub index: u32,
    /// Global id of the block's first warp (warp ids are unique over the program).
    pub warp_base: u32,
    /// Every warp's instructions, warp after warp.
    pub ops: Vec<WarpOp>,
    /// `ops[ends[w − 1]..ends[w]]` are warp `w`'s instructions (`ends[−1]` = 0).
    pub ends: Vec<u32>,
    /// Memory transactions (address, bytes) of the memory instructions.
    pub txns: Vec<(u64, u16)>,
}

impl ThreadBlock {
    /// Warps in the block.
    pub fn warps(&self) -> usize {
        self.ends.len()
    }
    /// The instruction range of warp `w` in [`ThreadBlock::ops`].
    pub fn warp_range(&self, w: usize) -> std::ops::Range<usize> {
        let start = if w == 0 { 0 } else { self.ends[w - 1] as usize };
        start..self.ends[w] as usize
    }
    /// Empty the block, keeping its buffers.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.ends.clear();
        self.txns.clear();
    }
}

/// What a [`BlockSource`] hands out next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockItem {
    /// A new launch begins; its blocks follow.
    Launch(LaunchInfo),
    /// The next block of the current launch.
    Block(ThreadBlock),
}

/// A GPGPU program as per-warp instruction streams, block by block.
pub trait BlockSource: Send {
    /// The program's name and GPU clock (one GPU agent).
    fn header(&self) -> &TraceHeader;
    /// The next launch or block; `None` when the program has ended.
    fn next_item(&mut self) -> Result<Option<BlockItem>>;
    /// Hand a finished block back so its buffers can be reused.
    fn recycle(&mut self, block: ThreadBlock) {
        let _ = block;
    }
}

impl<S: BlockSource + ?Sized> BlockSource for Box<S> {
    fn header(&self) -> &TraceHeader {
        (**self).header()
    }
    fn next_item(&mut self) -> Result<Option<BlockItem>> {
        (**self).next_item()
    }
    fn recycle(&mut self, block: ThreadBlock) {
        (**self).recycle(block)
    }
}
