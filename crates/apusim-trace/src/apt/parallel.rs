//! Read-ahead `.apt` reading: blocks decompressed and decoded by worker threads.
//!
//! Blocks decode independently (their delta state is reset at every block start), so a
//! [`ParallelAptReader`] splits reading three ways:
//!
//! * a **scanner** thread walks the container ([`BlockScanner`]: block headers, payloads,
//!   CRCs, trailer) and, for each block, hands the payload to the workers and a one-shot
//!   reply channel to the consumer, in file order;
//! * `workers` **decoder** threads each take the next payload, decompress and decode the
//!   whole block ([`BlockDecoder`]) into a vector of records, and send it back on the block's
//!   reply channel;
//! * the **consumer** (the thread calling [`AccessSource::next_batch`]) waits for the blocks
//!   in file order and copies them out in batches.
//!
//! The first [`INLINE_BLOCKS`] blocks are read on the consumer's thread, a batch at a time as
//! [`AptReader`] reads them, and the threads start only when the consumer asks for the block
//! after them. A run that stops early (a sweep point with `limit`, a short timed run) then
//! decodes only what it takes: with the threads started at once, they decoded up to
//! `workers + 3` blocks of 65,536 records ahead of a run that took a few thousand, which made
//! a sweep of such runs 2.6 times slower than reading on one thread.
//!
//! The output is identical to [`AptReader`]'s, batch for batch and error for error: a block
//! whose decoding fails hands out the batches decoded before the failing one, then the same
//! error the sequential reader reports. Memory stays bounded: at most `workers + 1` blocks are
//! announced to the consumer and not yet taken (queued, being decoded or decoded), one more is
//! being read by the scanner and one is being handed out; a decoded block is at most
//! 65,536 × 40 bytes, so about (workers + 3) × 2.6 MB in all, and batch vectors are recycled.
//! (A queue of `2 × workers` was no faster.) When the reader is
//! dropped early, the threads notice their closed channels and exit; `Drop` joins them.

use super::codec::DeltaCoding;
use super::reader::{read_preamble, AptReader, BlockDecoder, BlockInfo, BlockScanner, ReaderState};
use crate::{Access, AccessSource, Result, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Environment variable that sets the number of decoder threads of readers opened with
/// [`ParallelAptReader::open_default`] (and so of every `.apt` input of the CLI); `0` decodes
/// on the calling thread with the sequential [`AptReader`].
pub const DECODE_THREADS_ENV: &str = "APUSIM_DECODE_THREADS";

/// Most decoder threads [`DECODE_THREADS_ENV`] may ask for (each holds blocks in flight).
pub const MAX_DECODE_THREADS: usize = 64;

/// Blocks a [`ParallelAptReader`] reads on the consumer's thread before it starts its
/// scanner and decoders (one block is 65,536 records).
pub const INLINE_BLOCKS: u64 = 1;

/// The input as the scanner thread takes it over.
type Input = Box<dyn Read + Send>;

/// Decoder threads: [`DECODE_THREADS_ENV`] if set (0..=[`MAX_DECODE_THREADS`]; anything else
/// is an error naming the variable), else the machine's cores, at most 4 (read-ahead memory
/// grows with the thread count, and on the 2-core development machine 4 threads were already
/// slower than 2).
pub fn default_decode_threads() -> Result<usize> {
    match std::env::var(DECODE_THREADS_ENV) {
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n <= MAX_DECODE_THREADS => Ok(n),
            _ => Err(TraceError::Other(format!(
                "{DECODE_THREADS_ENV}={v}: expected a whole number from 0 (decode on the \
                 reading thread) to {MAX_DECODE_THREADS}"
            ))),
        },
        Err(_) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get().min(4))),
    }
}

/// One block as decoded by a worker: its batches (those before a failure) and the error that
/// stopped it, if any.
struct Decoded {
    batches: std::vec::IntoIter<Vec<Access>>,
    error: Option<TraceError>,
    raw_len: usize,
}

impl Decoded {
    fn empty() -> Decoded {
        Decoded {
            batches: Vec::new().into_iter(),
            error: None,
            raw_len: 0,
        }
    }
}

/// What the scanner sends the consumer, in file order.
enum Item {
    /// The next block; its decoded form arrives on this channel.
    Block(Receiver<Decoded>),
    /// A valid trailer: the end of the trace.
    End,
    /// The container is malformed here (or unreadable).
    Failed(TraceError),
}

/// A decoding job: the block, its compressed payload and where to send the result.
type Job = (BlockInfo, Vec<u8>, SyncSender<Decoded>);

/// Spent batch vectors, handed back by the consumer for the workers to reuse.
type Pool = Arc<Mutex<Vec<Vec<Access>>>>;

fn recycle(pool: &Mutex<Vec<Vec<Access>>>, mut v: Vec<Access>) {
    v.clear();
    if let Ok(mut p) = pool.lock() {
        p.push(v);
    }
}

/// `.apt` reader whose blocks are decoded ahead by worker threads; an [`AccessSource`] with
/// exactly [`AptReader`]'s output.
pub struct ParallelAptReader {
    header: TraceHeader,
    path: PathBuf,
    workers: usize,
    delta: DeltaCoding,
    phase: Phase,
    blocks_read: u64,
    records_read: u64,
    raw_bytes: u64,
    state: ReaderState,
}

/// Where the reader is: its first blocks on the consumer's thread, then the threads'.
enum Phase {
    /// The first [`INLINE_BLOCKS`] blocks, read and decoded by the caller of `next_batch`.
    Inline {
        scanner: BlockScanner<Input>,
        /// Boxed: the decoder's state is most of the variant, and the reader outlives it.
        decoder: Box<BlockDecoder>,
        comp: Vec<u8>,
    },
    /// Scanner and decoders running; `items` announces their blocks in file order.
    Threads {
        items: Option<Receiver<Item>>,
        threads: Vec<JoinHandle<()>>,
        pool: Pool,
        current: Decoded,
    },
    /// Between the two, for the moment the scanner moves to its thread.
    Moving,
}

impl ParallelAptReader {
    /// Open `path` and read its header; `workers` (at least 1) threads decode its blocks.
    pub fn open(path: impl AsRef<Path>, workers: usize) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        Self::with_name(BufReader::with_capacity(1 << 18, f), path, workers)
    }

    /// Open `path` with [`default_decode_threads`] workers, or as a sequential [`AptReader`]
    /// when that is 0.
    pub fn open_default(path: impl AsRef<Path>) -> Result<Box<dyn AccessSource>> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        Self::with_name_default(BufReader::with_capacity(1 << 18, f), path)
    }

    /// [`ParallelAptReader::with_name`] with [`default_decode_threads`] workers, or a
    /// sequential [`AptReader`] when that is 0.
    pub fn with_name_default<R: Read + Send + 'static>(
        input: R,
        name: impl AsRef<Path>,
    ) -> Result<Box<dyn AccessSource>> {
        match default_decode_threads()? {
            0 => Ok(Box::new(AptReader::with_name(input, name)?)),
            n => Ok(Box::new(Self::with_name(input, name, n)?)),
        }
    }

    /// Read an `.apt` stream from any reader; `name` is used in error messages.
    pub fn with_name<R: Read + Send + 'static>(
        mut input: R,
        name: impl AsRef<Path>,
        workers: usize,
    ) -> Result<Self> {
        let path = name.as_ref().to_path_buf();
        let (header, offset, delta) = read_preamble(&mut input, &path)?;
        let scanner = BlockScanner {
            input: Box::new(input) as Input,
            path: path.clone(),
            offset,
            blocks: 0,
            records: 0,
        };
        Ok(ParallelAptReader {
            header,
            phase: Phase::Inline {
                scanner,
                decoder: Box::new(BlockDecoder::new(&path, delta)?),
                comp: Vec::new(),
            },
            path,
            workers: workers.max(1),
            delta,
            blocks_read: 0,
            records_read: 0,
            raw_bytes: 0,
            state: ReaderState::Running,
        })
    }

    /// Whether the scanner and decoder threads have started (after the first
    /// [`INLINE_BLOCKS`] blocks).
    pub fn read_ahead_started(&self) -> bool {
        matches!(self.phase, Phase::Threads { .. })
    }

    /// Start the scanner and the decoders on the blocks after those read inline.
    fn start_threads(&mut self, scanner: BlockScanner<Input>) -> Result<()> {
        let workers = self.workers;
        let (item_tx, items) = sync_channel(workers + 1);
        let (job_tx, job_rx) = sync_channel::<Job>(workers);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let pool: Pool = Arc::default();
        let mut threads = Vec::with_capacity(workers + 1);
        // From here on `Drop` joins whatever started, also if a later start fails.
        let start = || -> Result<()> {
            for _ in 0..workers {
                let decoder = BlockDecoder::new(&self.path, self.delta)?;
                let (jobs, pool) = (Arc::clone(&job_rx), Arc::clone(&pool));
                threads.push(spawn("apt-decode", move || {
                    decode_blocks(decoder, &jobs, &pool)
                })?);
            }
            threads.push(spawn("apt-scan", move || {
                scan_blocks(scanner, &item_tx, &job_tx)
            })?);
            Ok(())
        };
        let started = start();
        self.phase = Phase::Threads {
            items: Some(items),
            threads,
            pool,
            current: Decoded::empty(),
        };
        started
    }

    /// The file name used in error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Blocks handed to the consumer so far.
    pub fn blocks_read(&self) -> u64 {
        self.blocks_read
    }
    /// Records handed out so far.
    pub fn records_read(&self) -> u64 {
        self.records_read
    }
    /// Decompressed (delta/varint encoded) bytes of the blocks handed over so far.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    fn next_batch_inner(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        loop {
            match &mut self.phase {
                Phase::Inline {
                    scanner,
                    decoder,
                    comp,
                } => {
                    if decoder.left > 0 {
                        self.records_read += decoder.decode_batch(out)? as u64;
                        return Ok(true);
                    }
                    if self.blocks_read < INLINE_BLOCKS {
                        let Some(info) = scanner.next_block(comp)? else {
                            self.state = ReaderState::Done;
                            return Ok(false);
                        };
                        decoder.load(info, comp)?;
                        self.blocks_read += 1;
                        self.raw_bytes += info.raw_len as u64;
                        continue;
                    }
                    let Phase::Inline { scanner, .. } =
                        std::mem::replace(&mut self.phase, Phase::Moving)
                    else {
                        unreachable!("matched above")
                    };
                    self.start_threads(scanner)?;
                }
                Phase::Threads {
                    items,
                    pool,
                    current,
                    ..
                } => {
                    if let Some(mut batch) = current.batches.next() {
                        self.records_read += batch.len() as u64;
                        // Hand the decoded vector over instead of copying it when the caller's
                        // batch is empty (the usual case); the caller's vector goes back to the
                        // workers.
                        if out.is_empty() {
                            std::mem::swap(out, &mut batch);
                        } else {
                            out.extend_from_slice(&batch);
                        }
                        recycle(pool, batch);
                        return Ok(true);
                    }
                    if let Some(e) = current.error.take() {
                        return Err(e);
                    }
                    // The next block in file order.
                    let item = items.as_ref().and_then(|rx| rx.recv().ok());
                    let block = match item {
                        Some(Item::Block(reply)) => reply.recv().ok(),
                        Some(Item::End) => {
                            self.state = ReaderState::Done;
                            return Ok(false);
                        }
                        Some(Item::Failed(e)) => return Err(e),
                        None => None,
                    };
                    let Some(block) = block else {
                        return Err(TraceError::Other(format!(
                            "{}: a trace decoder thread stopped unexpectedly",
                            self.path.display()
                        )));
                    };
                    *current = block;
                    self.blocks_read += 1;
                    self.raw_bytes += current.raw_len as u64;
                }
                Phase::Moving => {
                    return Err(TraceError::Other(format!(
                        "{}: the trace reader failed while starting its threads",
                        self.path.display()
                    )))
                }
            }
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .map_err(|e| TraceError::Other(format!("cannot start a trace decoder thread: {e}")))
}

/// The scanner thread: read blocks in file order, queue each for decoding and tell the
/// consumer where its result will arrive. Stops at the trailer, at the first error, or when
/// the consumer is gone.
fn scan_blocks<R: Read>(
    mut scanner: BlockScanner<R>,
    items: &SyncSender<Item>,
    jobs: &SyncSender<Job>,
) {
    loop {
        let mut payload = Vec::new();
        let item = match scanner.next_block(&mut payload) {
            Ok(Some(info)) => {
                let (reply_tx, reply_rx) = sync_channel(1);
                if jobs.send((info, payload, reply_tx)).is_err() {
                    return;
                }
                Item::Block(reply_rx)
            }
            Ok(None) => Item::End,
            Err(e) => Item::Failed(e),
        };
        let last = !matches!(item, Item::Block(_));
        if items.send(item).is_err() || last {
            return;
        }
    }
}

/// A decoder thread: decode whole blocks until the job queue closes.
fn decode_blocks(
    mut decoder: BlockDecoder,
    jobs: &Mutex<Receiver<Job>>,
    pool: &Mutex<Vec<Vec<Access>>>,
) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((info, payload, reply)) = job else {
            return;
        };
        let mut batches = Vec::with_capacity(info.records.div_ceil(BATCH));
        let error = decode_block(&mut decoder, info, &payload, pool, &mut batches).err();
        // A closed reply channel means the consumer is gone; the scanner stops too.
        let _ = reply.send(Decoded {
            batches: batches.into_iter(),
            error,
            raw_len: info.raw_len,
        });
    }
}

/// Decompress and decode every batch of one block into `batches` (vectors taken from `pool`);
/// on error `batches` holds the batches decoded before the failing one.
fn decode_block(
    decoder: &mut BlockDecoder,
    info: BlockInfo,
    payload: &[u8],
    pool: &Mutex<Vec<Vec<Access>>>,
    batches: &mut Vec<Vec<Access>>,
) -> Result<()> {
    decoder.load(info, payload)?;
    while decoder.left > 0 {
        let mut batch = pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        if let Err(e) = decoder.decode_batch(&mut batch) {
            recycle(pool, batch);
            return Err(e);
        }
        batches.push(batch);
    }
    Ok(())
}

impl AccessSource for ParallelAptReader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if let Some(r) = self.state.finished(&self.path) {
            return r;
        }
        let r = self.next_batch_inner(out);
        if r.is_err() {
            self.state = ReaderState::Failed;
        }
        r
    }
}

impl Drop for ParallelAptReader {
    fn drop(&mut self) {
        // Closing the item channel stops the scanner, which closes the job queue, which stops
        // the workers.
        if let Phase::Threads { items, threads, .. } = &mut self.phase {
            drop(items.take());
            for t in threads.drain(..) {
                let _ = t.join();
            }
        }
    }
}
