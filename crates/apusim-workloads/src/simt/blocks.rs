//! [`SimtBlocks`]: a kernel executed block by block as per-warp programs for a timed GPU.

use super::warp::{Block, Emit, WarpRecorder};
use super::{Kernel, SimtStats};
use apusim_trace::{
    Access, Agent, BlockItem, BlockSource, LaunchInfo, Result, Stream, ThreadBlock, TraceHeader,
};

/// Runs a [`Kernel`] block by block as per-warp programs: the [`BlockSource`] a timed GPU
/// executes (`apusim_timing::gpu`). Each block is executed functionally when the GPU asks for
/// it, recording every warp's instructions and its memory instructions' coalesced
/// transactions instead of time-stamped records; the instructions, transactions and kernel
/// results are exactly those of [`SimtSource`](super::SimtSource) (blocks run in the same
/// order), only their timing is left to the consumer.
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
