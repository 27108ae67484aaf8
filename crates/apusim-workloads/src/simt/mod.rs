//! A small SIMT execution layer: GPGPU kernels written as Rust code over their thread index,
//! executed grid → thread blocks → warps of 32 threads in lock step, streamed out as the
//! coalesced global-memory transactions a GPU's shader cores would issue.
//!
//! This file holds the kernel-facing types (memory, thread index, launches, configuration);
//! `coalesce` forms a warp instruction's transactions, `warp` runs a block's warps and records
//! what they do, and `source` and `blocks` hand a kernel out as access records or as per-warp
//! programs.
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
//! [`coalesce`](fn@coalesce) forms the transactions of one warp instruction as a Fermi-class
//! coalescer does: the active lanes' bytes are grouped by 128-byte aligned segment, in order of
//! the lowest lane touching each segment; a segment whose touched bytes all lie in one 64-byte
//! half is reduced to a 64-byte transaction. Each transaction is one
//! [`Access`](apusim_trace::Access) (size 64 or 128). The work is per lane only where it must
//! be: a warp inside one segment is found from its lowest and highest address, runs of
//! consecutive elements are coalesced span by span, and runs of lanes on one segment through
//! bit masks; a randomized test checks every fast path against the per-lane algorithm.
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
//! [`Access::MODIFY`](apusim_trace::Access::MODIFY) (atomics), `unit` = SM id, `warp` = global
//! warp id (unique over the whole program), `pc` = the kernel's memory-instruction PC
//! (distinct per load/store site). Instruction fetches (`ShaderInstr`) are not emitted: the shader instruction caches of these
//! kernels' small code hold them (drp §3's 4 KB per-core I-cache).

mod blocks;
mod coalesce;
mod source;
#[cfg(test)]
mod tests;
mod warp;

pub use blocks::SimtBlocks;
pub use coalesce::coalesce;
pub use source::SimtSource;
pub use warp::{Block, Lanes, Warp};

/// Lanes per warp.
pub const WARP: usize = 32;
/// First byte of the GPGPU global memory region (distinct from the render GPU's surfaces).
pub const GLOBAL_BASE: u64 = 0x200_0000_0000;
/// Code address of kernel memory-instruction PCs.
pub const CODE_BASE: u64 = 0x7000_0000;

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
