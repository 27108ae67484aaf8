//! A rendered scene as a pull-style [`AccessSource`], for consumers that read workloads the way
//! they read trace files (the mixes of `apusim run --mix`, the studies of `apusim study`), or
//! as a [`FrameSource`] of render work for a timed render pipeline ([`WorkSource`]).
//!
//! The pipeline pushes accesses into an [`AccessSink`]; [`RenderSource`] runs it on a worker
//! thread whose sink sends each batch over a bounded channel, so memory stays bounded (a few
//! batches in flight) and the records arrive in exactly the order a `.apt` written by
//! `apusim gen render` holds them. Dropping the source early stops the worker at its next batch.

use crate::emit::{AccessSink, WorkSink};
use crate::kept::{self, Recording};
use crate::{load, Options};
use apusim_trace::{AccessSource, Agent, FrameSource, RenderBatch, Stream, TraceHeader};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// The GPU streams a render trace can contain, in header order.
pub const STREAMS: &[Stream] = &[
    Stream::Vertex,
    Stream::VertexIndex,
    Stream::HiZ,
    Stream::Depth,
    Stream::Stencil,
    Stream::Color,
    Stream::StaticTexture,
    Stream::DynamicTexture,
    Stream::Blitter,
    Stream::ShaderInstr,
    Stream::ShaderData,
    Stream::Display,
    Stream::Other,
];

/// Clock of the `time` field of render traces, in MHz.
pub const CLOCK_MHZ: u32 = 1000;

/// The header of a render trace of `scene` at `opt`'s resolution.
pub fn header(scene: &str, opt: &Options) -> TraceHeader {
    TraceHeader::single(
        Agent::GPU,
        "gpu",
        CLOCK_MHZ,
        STREAMS,
        &format!("apusim gen render {scene} {}x{}", opt.width, opt.height),
    )
}

/// Batches in flight between the renderer thread and the reader.
const CHANNEL_BATCHES: usize = 4;

/// A scene rendered on a worker thread whose output arrives over a bounded channel, batch by
/// batch (accesses for [`RenderSource`], render work for [`WorkSource`]).
struct Worker<T> {
    rx: Option<Receiver<T>>,
    worker: Option<JoinHandle<Result<(), String>>>,
}

impl<T: Send + 'static> Worker<T> {
    /// Load `scene` and start `render` on it on a new thread, sending batches through the
    /// sender it is given. Scene errors are reported here, before any thread starts.
    fn spawn(
        scene: &str,
        opt: &Options,
        render: impl FnOnce(crate::Renderer, SyncSender<T>) -> Result<(), String> + Send + 'static,
    ) -> Result<Worker<T>, crate::SceneError> {
        let (src, desc) = load(scene)?;
        Worker::spawn_loaded(scene, &src, &desc, opt, render)
    }

    /// [`Worker::spawn`] of a scene already loaded.
    fn spawn_loaded(
        scene: &str,
        src: &crate::Source,
        desc: &crate::SceneDesc,
        opt: &Options,
        render: impl FnOnce(crate::Renderer, SyncSender<T>) -> Result<(), String> + Send + 'static,
    ) -> Result<Worker<T>, crate::SceneError> {
        // Resolve surfaces and meshes up front so a bad scene fails here, not mid-stream.
        let renderer = crate::Renderer::new(src, desc, opt)?;
        let (tx, rx) = sync_channel(CHANNEL_BATCHES);
        let worker = std::thread::Builder::new()
            .name(format!("render {scene}"))
            .spawn(move || render(renderer, tx))
            .map_err(|e| crate::SceneError {
                file: scene.to_string(),
                line: 0,
                msg: format!("cannot start the render thread: {e}"),
            })?;
        Ok(Worker {
            rx: Some(rx),
            worker: Some(worker),
        })
    }

    /// The next batch; `None` once the worker has finished and every batch was read.
    fn recv(&mut self) -> apusim_trace::Result<Option<T>> {
        let Some(rx) = &self.rx else {
            return Ok(None);
        };
        match rx.recv() {
            Ok(batch) => Ok(Some(batch)),
            Err(_) => {
                // The worker finished (or failed): every batch it sent has been read.
                self.rx = None;
                self.join()?;
                Ok(None)
            }
        }
    }

    /// Wait for the worker and turn its failure (or panic) into an error.
    fn join(&mut self) -> apusim_trace::Result<()> {
        let Some(w) = self.worker.take() else {
            return Ok(());
        };
        match w.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(msg)) => Err(render_error(msg)),
            Err(_) => Err(render_error("the render thread panicked".into())),
        }
    }
}

impl<T> Drop for Worker<T> {
    fn drop(&mut self) {
        // Close the channel first so a worker blocked on a full channel stops.
        self.rx = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// The error a closed channel gives the worker: the reader went away.
const READER_GONE: &str = "the reader of the render stream went away";

/// The sink of the access worker: every batch goes over the channel; a closed channel (the
/// reader was dropped) stops rendering with an error nobody reads.
struct ChannelSink(SyncSender<Vec<apusim_trace::Access>>);

impl AccessSink for ChannelSink {
    fn put(&mut self, batch: &[apusim_trace::Access]) -> Result<(), String> {
        self.0.send(batch.to_vec()).map_err(|_| READER_GONE.into())
    }
}

/// The sink of the work worker.
struct WorkChannel(SyncSender<RenderBatch>);

impl WorkSink for WorkChannel {
    fn put(&mut self, batch: &mut RenderBatch) -> Result<(), String> {
        self.0
            .send(std::mem::take(batch))
            .map_err(|_| READER_GONE.into())
    }
}

/// A scene rendered on a worker thread, read batch by batch.
pub struct RenderSource {
    header: TraceHeader,
    worker: Worker<Vec<apusim_trace::Access>>,
}

impl RenderSource {
    /// Load `scene` (a built-in name or a scene file) and start rendering it. Scene errors
    /// are reported here, before any thread starts.
    pub fn spawn(scene: &str, opt: &Options) -> Result<RenderSource, crate::SceneError> {
        let worker = Worker::spawn(scene, opt, |mut renderer, tx| {
            let mut sink = ChannelSink(tx);
            let mut em = crate::Emitter::new(&mut sink);
            renderer.render_all(&mut em, |_, _| {});
            em.finish().map(|_| ())
        })?;
        Ok(RenderSource {
            header: header(scene, opt),
            worker,
        })
    }
}

fn render_error(msg: String) -> apusim_trace::TraceError {
    apusim_trace::TraceError::Other(format!("rendering: {msg}"))
}

impl AccessSource for RenderSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<apusim_trace::Access>) -> apusim_trace::Result<bool> {
        match self.worker.recv()? {
            Some(batch) => {
                out.extend_from_slice(&batch);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// A scene's render work (for a timed render pipeline), produced on a worker thread and
/// read batch by batch; its accesses are exactly [`RenderSource`]'s. The first complete pass
/// of a scene at some options is kept ([`crate::kept`]), and a later source of the same scene
/// and options replays it instead of rendering again.
pub struct WorkSource {
    header: TraceHeader,
    /// The scene and options, until the first read.
    pending: Option<(String, Options)>,
    feed: Feed,
}

/// Where a [`WorkSource`]'s batches come from.
enum Feed {
    /// Not started yet (the work is made from the first read on).
    Idle,
    /// Rendered on a worker thread, recorded for later passes while the budget allows.
    Rendering {
        worker: Worker<RenderBatch>,
        recording: Option<Recording>,
    },
    /// A kept pass, from batch `next` on.
    Replaying { pass: kept::Pass, next: usize },
}

impl WorkSource {
    /// Load `scene` and start recording its work. Scene errors are reported here.
    pub fn spawn(scene: &str, opt: &Options) -> Result<WorkSource, crate::SceneError> {
        let mut w = WorkSource::lazy(scene, opt);
        w.start()?;
        Ok(w)
    }

    /// The work of `scene`, rendered from the first read on (a job's program is opened with
    /// its access source, and most runs never read it). Scene errors come with the first
    /// batch.
    pub fn lazy(scene: &str, opt: &Options) -> WorkSource {
        WorkSource {
            header: header(scene, opt),
            pending: Some((scene.to_string(), opt.clone())),
            feed: Feed::Idle,
        }
    }

    /// Whether the batches are a kept pass replayed rather than rendered (known once the
    /// source has started).
    pub fn replays(&self) -> bool {
        matches!(self.feed, Feed::Replaying { .. })
    }

    fn start(&mut self) -> Result<(), crate::SceneError> {
        let Some((scene, opt)) = self.pending.take() else {
            return Ok(());
        };
        let (src, desc) = load(&scene)?;
        let key = kept::Key::new(&src, &opt);
        if let Some(pass) = kept::get(&key) {
            self.feed = Feed::Replaying { pass, next: 0 };
            return Ok(());
        }
        let worker = Worker::spawn_loaded(&scene, &src, &desc, &opt, |mut renderer, tx| {
            let mut sink = WorkChannel(tx);
            let mut em = crate::Emitter::for_work(&mut sink);
            renderer.render_all(&mut em, |_, _| {});
            em.finish().map(|_| ())
        })?;
        self.feed = Feed::Rendering {
            worker,
            recording: Some(Recording::new(key)),
        };
        Ok(())
    }
}

/// Append `batch` to `out` (or take it whole when `out` is empty).
fn append(out: &mut RenderBatch, mut batch: RenderBatch) {
    if out.items.is_empty() {
        *out = batch;
    } else {
        out.items.append(&mut batch.items);
        out.accesses.append(&mut batch.accesses);
        out.units.append(&mut batch.units);
    }
}

impl FrameSource for WorkSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut RenderBatch) -> apusim_trace::Result<bool> {
        self.start().map_err(|e| render_error(e.to_string()))?;
        match &mut self.feed {
            Feed::Idle => Ok(false),
            Feed::Replaying { pass, next } => match pass.get(*next) {
                Some(batch) => {
                    *next += 1;
                    append(out, batch.clone());
                    Ok(true)
                }
                None => Ok(false),
            },
            Feed::Rendering { worker, recording } => match worker.recv()? {
                Some(batch) => {
                    if let Some(r) = recording {
                        if !r.push(&batch) {
                            *recording = None;
                        }
                    }
                    append(out, batch);
                    Ok(true)
                }
                None => {
                    // The worker ended without an error: the pass is complete.
                    if let Some(r) = recording.take() {
                        r.finish();
                    }
                    Ok(false)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_trace::Access;

    #[test]
    fn streams_exactly_what_the_sink_path_emits() {
        let opt = Options {
            width: 64,
            height: 40,
            frames: Some(1),
            seed: 3,
        };
        let (src, desc) = load("lake").unwrap();
        let mut direct: Vec<Access> = Vec::new();
        crate::render(&src, &desc, &opt, &mut direct, |_, _| {}).unwrap();
        let mut s = RenderSource::spawn("lake", &opt).unwrap();
        let mut pulled = Vec::new();
        while s.next_batch(&mut pulled).unwrap() {}
        assert!(!direct.is_empty());
        assert_eq!(pulled, direct);
        assert_eq!(s.header().agents[0].agent, Agent::GPU);
    }

    #[test]
    fn early_drop_stops_the_worker_and_bad_scenes_fail_up_front() {
        let opt = Options {
            width: 64,
            height: 40,
            frames: Some(2),
            seed: 1,
        };
        let mut s = RenderSource::spawn("courtyard", &opt).unwrap();
        let mut v = Vec::new();
        assert!(s.next_batch(&mut v).unwrap());
        drop(s); // must not hang
        let err = RenderSource::spawn("no-such-scene.toml", &opt)
            .err()
            .unwrap();
        assert!(err.to_string().contains("no-such-scene.toml"), "{err}");
    }

    #[test]
    fn work_carries_exactly_the_trace_tagged_by_unit() {
        use crate::emit::decode_pc;
        use apusim_trace::{Unit, WorkKind};
        let opt = Options {
            width: 96,
            height: 64,
            frames: Some(2),
            seed: 5,
        };
        for scene in ["courtyard", "lake"] {
            let (src, desc) = load(scene).unwrap();
            let mut direct: Vec<Access> = Vec::new();
            let stats = crate::render(&src, &desc, &opt, &mut direct, |_, _| {}).unwrap();
            let mut w = WorkSource::spawn(scene, &opt).unwrap();
            let mut all = RenderBatch::default();
            while w.next_batch(&mut all).unwrap() {}
            assert_eq!(all.accesses, direct, "{scene}");
            assert_eq!(all.units.len(), all.accesses.len());
            let per_item: u64 = all.items.iter().map(|i| i.accesses as u64).sum();
            assert_eq!(per_item, direct.len() as u64);
            let count = |f: &dyn Fn(&WorkKind) -> bool| {
                all.items.iter().filter(|i| f(&i.kind)).count() as u64
            };
            assert_eq!(count(&|k| matches!(k, WorkKind::Quad { .. })), stats.quads);
            assert_eq!(
                count(&|k| matches!(k, WorkKind::Triangle { setup: true, .. })),
                stats.triangles
            );
            assert_eq!(count(&|k| matches!(k, WorkKind::FrameEnd { .. })), 2);
            let shaded = count(&|k| matches!(k, WorkKind::Quad { shaded: true, .. }));
            assert!(shaded > 0 && shaded <= stats.quads);
            // Texture reads are the shader's, display writes the colour writer's, blits the
            // blitter's.
            for (a, u) in all.accesses.iter().zip(&all.units) {
                let stage = decode_pc(a.pc).0;
                match a.stream {
                    Stream::StaticTexture | Stream::DynamicTexture => {
                        assert_eq!(*u, Unit::Shader)
                    }
                    Stream::Display => assert_eq!(*u, Unit::ColorWrite),
                    Stream::Vertex | Stream::VertexIndex => assert_eq!(*u, Unit::FrontEnd),
                    Stream::Blitter => assert_eq!(*u, Unit::Blitter),
                    _ => {}
                }
                assert!(stage <= crate::emit::Stage::Clear as u8);
            }
        }
    }

    #[test]
    fn a_second_pass_replays_the_first_exactly() {
        // Options no other test uses, so this pass is this test's own in the shared store.
        let opt = Options {
            width: 72,
            height: 48,
            frames: Some(1),
            seed: 4242,
        };
        let read = |w: &mut WorkSource| {
            let mut all = RenderBatch::default();
            let mut batches = 0;
            while w.next_batch(&mut all).unwrap() {
                batches += 1;
            }
            (all, batches)
        };
        let mut first = WorkSource::lazy("courtyard", &opt);
        let (rendered, n) = read(&mut first);
        assert!(!first.replays());
        assert!(n > 1 && !rendered.accesses.is_empty());
        let mut second = WorkSource::lazy("courtyard", &opt);
        let (replayed, m) = read(&mut second);
        assert!(second.replays());
        assert_eq!((replayed, m), (rendered, n));
        // Other options are another pass.
        let other = WorkSource::spawn("courtyard", &Options { seed: 4243, ..opt }).unwrap();
        assert!(!other.replays());
    }

    #[test]
    fn a_pass_read_only_in_part_is_not_kept() {
        let opt = Options {
            width: 80,
            height: 48,
            frames: Some(2),
            seed: 4244,
        };
        let mut w = WorkSource::lazy("lake", &opt);
        let mut part = RenderBatch::default();
        assert!(w.next_batch(&mut part).unwrap());
        drop(w);
        let again = WorkSource::spawn("lake", &opt).unwrap();
        assert!(!again.replays());
    }
}
