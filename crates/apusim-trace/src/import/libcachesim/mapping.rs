//! From objects to blocks: the object numbering and block mapping both sources apply to each
//! request, and the emitter that turns a mapped request into block accesses.

use super::options::LcsOptions;
use crate::import::ImportOptions;
use crate::{Access, Op, Result, Stream, BATCH};
use std::collections::HashMap;

/// Turns object requests into block addresses (see the module documentation).
pub(super) struct ObjectMap {
    opts: LcsOptions,
    slot_shift: u32,
    /// Object number of each numeric id seen (`dense-ids=true`).
    dense: HashMap<u64, u64>,
    /// Object number of each string id seen (`obj-id-is-num=false`).
    names: HashMap<Box<str>, u64>,
}

impl ObjectMap {
    pub(super) fn new(opts: &LcsOptions) -> std::result::Result<Self, String> {
        opts.check()?;
        Ok(ObjectMap {
            slot_shift: opts.slot_bytes().trailing_zeros(),
            opts: opts.clone(),
            dense: HashMap::new(),
            names: HashMap::new(),
        })
    }

    /// Object number of a string id, numbering new ones densely.
    pub(super) fn intern(&mut self, name: &str) -> u64 {
        if let Some(&n) = self.names.get(name) {
            return n;
        }
        let n = self.names.len() as u64;
        self.names.insert(name.into(), n);
        n
    }

    /// Address of the first block of object `id` (`numbered`: already an object number) and
    /// the number of blocks a request of `size` bytes covers.
    pub(super) fn map(
        &mut self,
        id: u64,
        numbered: bool,
        size: u64,
    ) -> std::result::Result<Block, String> {
        let blocks = if self.opts.ignore_obj_size {
            1
        } else {
            if size > self.opts.max_obj_size {
                return Err(format!(
                    "object {id} has {size} bytes, more than max-obj-size={} (set it to at \
                     least the object's size; an object larger than the cache cannot be cached)",
                    self.opts.max_obj_size
                ));
            }
            size.div_ceil(self.opts.block_size as u64).max(1)
        };
        let number = if numbered || !self.opts.dense_ids {
            id
        } else {
            let next = self.dense.len() as u64;
            *self.dense.entry(id).or_insert(next)
        };
        let max = self.opts.max_obj_number();
        if number > max {
            return Err(format!(
                "object id {id} is above {max}, the largest whose {}-byte slot fits in a 64-bit \
                 address; set dense-ids=true to number objects in order of appearance",
                self.opts.slot_bytes()
            ));
        }
        Ok(Block {
            addr: number << self.slot_shift,
            next: 0,
            count: blocks,
            time: 0,
            op: Op::Read,
        })
    }
}

/// The blocks of one request still to be emitted.
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    addr: u64,
    next: u64,
    count: u64,
    pub(super) time: u64,
    pub(super) op: Op,
}

/// What every request turns into (agent, unit and block size), the blocks of the request
/// being emitted, and where the source is in its input.
pub(super) struct Emitter {
    agent: crate::Agent,
    unit: u16,
    block: u64,
    pending: Option<Block>,
    /// Requests emitted so far: the time of the next one.
    index: u64,
    /// The input has ended, or failed.
    pub(super) done: bool,
}

impl Emitter {
    pub(super) fn new(opts: &ImportOptions, block_size: u32) -> Self {
        Emitter {
            agent: opts.agent,
            unit: opts.unit(),
            block: block_size as u64,
            pending: None,
            index: 0,
            done: false,
        }
    }

    /// Emit request `b`, the next in time order, after the `produced` accesses of this batch;
    /// returns the new count (its blocks beyond [`BATCH`] wait for the next batch).
    pub(super) fn push(&mut self, mut b: Block, out: &mut Vec<Access>, produced: usize) -> usize {
        b.time = self.index;
        self.index += 1;
        self.pending = Some(b);
        self.drain(out, produced)
    }

    /// Emit pending blocks into `out` until `produced` reaches [`BATCH`]; returns the new count.
    pub(super) fn drain(&mut self, out: &mut Vec<Access>, mut produced: usize) -> usize {
        while let Some(p) = self.pending.as_mut() {
            if produced >= BATCH {
                break;
            }
            let a = Access::new(
                self.agent,
                Stream::CpuData,
                p.op,
                p.addr + p.next * self.block,
                self.block as u16,
            )
            .with_time(p.time)
            .with_unit(self.unit);
            out.push(a);
            produced += 1;
            p.next += 1;
            if p.next == p.count {
                self.pending = None;
            }
        }
        produced
    }
}

/// [`crate::AccessSource::next_batch`] of a source that emits through the [`Emitter`]
/// `emitter` gives and reads its input with `fill`: no batch once the input has ended and
/// every block is out, and none after an error.
pub(super) fn next_batch<S>(
    src: &mut S,
    out: &mut Vec<Access>,
    emitter: fn(&mut S) -> &mut Emitter,
    fill: fn(&mut S, &mut Vec<Access>) -> Result<bool>,
) -> Result<bool> {
    let e = emitter(src);
    if e.done && e.pending.is_none() {
        return Ok(false);
    }
    fill(src, out).inspect_err(|_| {
        let e = emitter(src);
        e.done = true;
        e.pending = None;
    })
}
