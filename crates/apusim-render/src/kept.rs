//! Render work kept for repeats. A timed run renders the same frames again and again while
//! its CPU cores run (a mix's GPU job starts over until every core has reached its target),
//! and rendering a 1280x1024 frame in software takes seconds. The renderer is deterministic,
//! so the second pass's work is the first pass's item for item: [`crate::WorkSource`] records
//! the first complete pass here and later passes of the same scene and options replay it.
//!
//! The store is one per process, shared by every run in it (the policies of a multi-policy
//! run, the alone runs behind weighted speedup), and holds at most [`BUDGET`] bytes of work,
//! counting the passes being recorded. A pass that does not fit evicts kept passes nobody is
//! replaying; if it still does not fit it is not kept and is rendered every time, as it would
//! be without the store.
//!
//! A pass is keyed by the scene's text (a built-in scene's or the file's contents, with the
//! file's directory, where imported textures and meshes are found) and the render options.
//! Imported files are assumed not to change while the process runs.

use crate::{Options, Source};
use apusim_trace::RenderBatch;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes of render work the process keeps at most (kept passes and passes being recorded):
/// room for a handful of 1280x1024 frames (a `deferred` frame is about 0.2 GB of work).
pub const BUDGET: usize = 4 << 30;

/// What names a pass: the scene's text and directory and every render option.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Key {
    text: String,
    dir: Option<PathBuf>,
    width: u32,
    height: u32,
    frames: Option<u32>,
    seed: u64,
}

impl Key {
    pub(crate) fn new(src: &Source, opt: &Options) -> Key {
        Key {
            text: src.text.clone(),
            dir: src.dir.clone(),
            width: opt.width,
            height: opt.height,
            frames: opt.frames,
            seed: opt.seed,
        }
    }
}

/// A kept pass: its batches in order, shared by every replay.
pub(crate) type Pass = Arc<Vec<RenderBatch>>;

#[derive(Default)]
struct Store {
    passes: HashMap<Key, (Pass, usize)>,
    /// Bytes of the kept passes and of the recordings' reservations.
    bytes: usize,
}

static STORE: Mutex<Option<Store>> = Mutex::new(None);

fn store() -> MutexGuard<'static, Option<Store>> {
    // A panic elsewhere while the lock was held leaves consistent data (every update is one
    // assignment), so a poisoned lock is taken over.
    STORE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The kept pass of `key`, if there is one.
pub(crate) fn get(key: &Key) -> Option<Pass> {
    store()
        .as_ref()
        .and_then(|s| s.passes.get(key).map(|(p, _)| Arc::clone(p)))
}

impl Store {
    /// Reserve `bytes` more of `budget`, evicting kept passes nobody replays if needed.
    fn reserve(&mut self, bytes: usize, budget: usize) -> bool {
        if self.bytes + bytes > budget {
            let idle: Vec<Key> = self
                .passes
                .iter()
                .filter(|(_, (p, _))| Arc::strong_count(p) == 1)
                .map(|(k, _)| k.clone())
                .collect();
            for k in idle {
                if self.bytes + bytes <= budget {
                    break;
                }
                if let Some((_, b)) = self.passes.remove(&k) {
                    self.bytes -= b;
                }
            }
        }
        if self.bytes + bytes > budget {
            return false;
        }
        self.bytes += bytes;
        true
    }

    /// Keep `batches` (`bytes` of them, already reserved) as the pass of `key`, unless a
    /// pass of the same key is kept already.
    fn keep(&mut self, key: Key, batches: Vec<RenderBatch>, bytes: usize) {
        match self.passes.entry(key) {
            Entry::Occupied(_) => self.bytes -= bytes,
            Entry::Vacant(v) => {
                v.insert((Arc::new(batches), bytes));
            }
        }
    }
}

fn reserve(bytes: usize) -> bool {
    store()
        .get_or_insert_with(Store::default)
        .reserve(bytes, BUDGET)
}

fn release(bytes: usize) {
    if let Some(s) = store().as_mut() {
        s.bytes -= bytes;
    }
}

/// The heap bytes a batch holds.
fn bytes_of(b: &RenderBatch) -> usize {
    use std::mem::size_of_val;
    size_of_val(b.items.as_slice())
        + size_of_val(b.accesses.as_slice())
        + size_of_val(b.units.as_slice())
}

/// A pass being recorded as it is rendered; dropped unfinished (an error, a reader that
/// stopped early, a pass over the budget), it gives its reservation back.
pub(crate) struct Recording {
    key: Key,
    batches: Vec<RenderBatch>,
    bytes: usize,
}

impl Recording {
    pub(crate) fn new(key: Key) -> Recording {
        Recording {
            key,
            batches: Vec::new(),
            bytes: 0,
        }
    }

    /// Add a copy of `batch`; false when it does not fit in the budget (the recording is
    /// then to be dropped).
    pub(crate) fn push(&mut self, batch: &RenderBatch) -> bool {
        let b = bytes_of(batch);
        if !reserve(b) {
            return false;
        }
        self.bytes += b;
        self.batches.push(batch.clone());
        true
    }

    /// The pass is complete: keep it (unless another run kept the same pass first).
    pub(crate) fn finish(mut self) {
        let batches = std::mem::take(&mut self.batches);
        let bytes = std::mem::take(&mut self.bytes);
        store()
            .get_or_insert_with(Store::default)
            .keep(self.key.clone(), batches, bytes);
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if self.bytes > 0 {
            release(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_trace::{Access, Agent, Op, Stream, WorkItem, WorkKind};

    fn key(seed: u64) -> Key {
        Key {
            text: "scene".into(),
            dir: None,
            width: 8,
            height: 8,
            frames: Some(1),
            seed,
        }
    }

    fn batch(accesses: usize) -> RenderBatch {
        let a = Access::new(Agent::GPU, Stream::Color, Op::Read, 0, 64);
        RenderBatch {
            items: vec![WorkItem::new(WorkKind::Sync)],
            accesses: vec![a; accesses],
            units: vec![apusim_trace::Unit::Shader; accesses],
        }
    }

    #[test]
    fn passes_nobody_replays_make_room_and_replayed_ones_stay() {
        let mut s = Store::default();
        let one = bytes_of(&batch(10));
        let budget = 2 * one;
        assert!(s.reserve(one, budget));
        s.keep(key(1), vec![batch(10)], one);
        assert!(s.reserve(one, budget));
        s.keep(key(2), vec![batch(10)], one);
        assert_eq!(s.bytes, budget);
        // Pass 1 is being replayed: only pass 2 may go.
        let replay = Arc::clone(&s.passes[&key(1)].0);
        assert!(s.reserve(one, budget));
        assert!(s.passes.contains_key(&key(1)) && !s.passes.contains_key(&key(2)));
        // Nothing idle is left to evict: a further reservation is refused and changes nothing.
        assert!(!s.reserve(one, budget));
        assert_eq!(s.bytes, budget);
        drop(replay);
        assert!(s.reserve(one, budget));
        assert!(s.passes.is_empty());
    }

    #[test]
    fn a_pass_kept_twice_is_counted_once() {
        let mut s = Store::default();
        let one = bytes_of(&batch(4));
        assert!(s.reserve(one, usize::MAX));
        assert!(s.reserve(one, usize::MAX));
        s.keep(key(3), vec![batch(4)], one);
        s.keep(key(3), vec![batch(4)], one);
        assert_eq!((s.passes.len(), s.bytes), (1, one));
    }
}
