//! A rendered scene as a pull-style [`AccessSource`], for consumers that read workloads the way
//! they read trace files (the mixes of `apusim run --mix`, the studies of `apusim study`).
//!
//! The pipeline pushes accesses into an [`AccessSink`]; [`RenderSource`] runs it on a worker
//! thread whose sink sends each batch over a bounded channel, so memory stays bounded (a few
//! batches in flight) and the records arrive in exactly the order a `.apt` written by
//! `apusim gen render` holds them. Dropping the source early stops the worker at its next batch.

use crate::{emit::AccessSink, load, Options};
use apusim_trace::{AccessSource, Agent, Stream, TraceHeader};
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

/// The sink of the worker thread: every batch goes over the channel; a closed channel (the
/// reader was dropped) stops rendering with an error nobody reads.
struct ChannelSink(SyncSender<Vec<apusim_trace::Access>>);

impl AccessSink for ChannelSink {
    fn put(&mut self, batch: &[apusim_trace::Access]) -> Result<(), String> {
        self.0
            .send(batch.to_vec())
            .map_err(|_| "the reader of the render stream went away".to_string())
    }
}

/// A scene rendered on a worker thread, read batch by batch.
pub struct RenderSource {
    header: TraceHeader,
    rx: Option<Receiver<Vec<apusim_trace::Access>>>,
    worker: Option<JoinHandle<Result<(), String>>>,
}

impl RenderSource {
    /// Load `scene` (a built-in name or a scene file) and start rendering it. Scene errors
    /// are reported here, before any thread starts.
    pub fn spawn(scene: &str, opt: &Options) -> Result<RenderSource, crate::SceneError> {
        let (src, desc) = load(scene)?;
        // Resolve surfaces and meshes up front so a bad scene fails here, not mid-stream.
        let renderer = crate::Renderer::new(&src, &desc, opt)?;
        let (tx, rx) = sync_channel(CHANNEL_BATCHES);
        let worker = std::thread::Builder::new()
            .name(format!("render {scene}"))
            .spawn(move || {
                let mut renderer = renderer;
                let mut sink = ChannelSink(tx);
                let mut em = crate::Emitter::new(&mut sink);
                renderer.render_all(&mut em, |_, _| {});
                em.finish().map(|_| ())
            })
            .map_err(|e| crate::SceneError {
                file: scene.to_string(),
                line: 0,
                msg: format!("cannot start the render thread: {e}"),
            })?;
        Ok(RenderSource {
            header: header(scene, opt),
            rx: Some(rx),
            worker: Some(worker),
        })
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

fn render_error(msg: String) -> apusim_trace::TraceError {
    apusim_trace::TraceError::Other(format!("rendering: {msg}"))
}

impl AccessSource for RenderSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<apusim_trace::Access>) -> apusim_trace::Result<bool> {
        let Some(rx) = &self.rx else {
            return Ok(false);
        };
        match rx.recv() {
            Ok(batch) => {
                out.extend_from_slice(&batch);
                Ok(true)
            }
            Err(_) => {
                // The worker finished (or failed): every batch it sent has been read.
                self.rx = None;
                self.join()?;
                Ok(false)
            }
        }
    }
}

impl Drop for RenderSource {
    fn drop(&mut self) {
        // Close the channel first so a worker blocked on a full channel stops.
        self.rx = None;
        let _ = self.join();
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
}
