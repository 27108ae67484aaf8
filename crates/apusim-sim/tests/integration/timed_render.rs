//! The timed render pipeline in the engine: a frame's accesses are exactly the render
//! trace's, no frame renders faster than its unit and DRAM bounds, with memory made ideal the
//! frame time comes close to the bound of its busiest unit (draw by draw, as draws do not
//! overlap), it shares the machine with CPU cores, runs are deterministic, a render job on a
//! GPGPU model is refused by name, and the LLC policies that sample shader cores (TAP, HeLM)
//! hear the pipeline's cores.
//!
//! One file, one idea: the render pipeline inside the engine; its tests share the `Scene`
//! input and the unit-bound helpers, which is why it runs past 800 lines.

use anyhow::Result;
use apusim_render::{Options, WorkSource};
use apusim_sim::run::{GpuProgram, Input, Inputs, Reopen};
use apusim_sim::timed::{sim_policy, stored, SimOptions, SimResult};
use apusim_sim::{LlcSwitches, SystemConfig};
use apusim_trace::{
    Access, Agent, FrameSource, Op, RenderBatch, Stream, VecSource, WorkItem, WorkKind,
};

/// A scene at a small resolution, optionally beside one CPU core streaming through memory.
#[derive(Clone)]
struct Scene {
    name: &'static str,
    width: u32,
    height: u32,
    frames: u32,
    cpu: Option<Vec<Access>>,
}

impl Scene {
    fn new(name: &'static str) -> Scene {
        Scene {
            name,
            width: 160,
            height: 128,
            frames: 1,
            cpu: None,
        }
    }
    fn options(&self) -> Options {
        Options {
            width: self.width,
            height: self.height,
            frames: Some(self.frames),
            seed: 1,
        }
    }
}

impl Inputs for Scene {
    fn open(&self) -> Result<Vec<Input>> {
        let work = WorkSource::spawn(self.name, &self.options())?;
        let header = work.header().clone();
        let mut v = vec![Input {
            name: format!("gpu {}", self.name),
            source: Box::new(VecSource::with_header(header, Vec::new())),
            remap: None,
            champsim: None,
            program: Some(GpuProgram::Frames(Box::new(work))),
        }];
        if let Some(t) = &self.cpu {
            v.insert(
                0,
                Input {
                    name: "cpu0 stream".into(),
                    source: Box::new(VecSource::new(t.clone())),
                    remap: Some(Agent::cpu(0)),
                    champsim: None,
                    program: None,
                },
            );
        }
        Ok(v)
    }
    fn describe(&self) -> String {
        format!("render {}", self.name)
    }
    fn reopen(&self, index: usize) -> Option<Reopen> {
        let me = self.clone();
        Some(Box::new(move || Ok(me.open()?.swap_remove(index))))
    }
}

fn preset(extra: &[&str]) -> SystemConfig {
    let set: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    SystemConfig::load_preset("4c1g", &set).unwrap()
}

fn run(cfg: &SystemConfig, scene: &Scene, instructions: Option<u64>) -> SimResult {
    let opts = SimOptions {
        instructions,
        ..SimOptions::default()
    };
    sim_policy(cfg, "drp-baseline", scene, &opts).unwrap()
}

/// Every item of the scene's render work.
fn work(scene: &Scene) -> RenderBatch {
    let mut w = WorkSource::spawn(scene.name, &scene.options()).unwrap();
    let mut all = RenderBatch::default();
    while w.next_batch(&mut all).unwrap() {}
    all
}

/// The frame time the busiest unit instance sets, draw by draw (a draw starts when the one
/// before it is done, so their bounds add up): per draw, the most of one shader core's
/// instructions, one sampler's texels, one ROP's depth/stencil and colour-write quads, and
/// the front end's triangles and tiles (one a cycle). Every core has two samplers of its own.
fn unit_bound(w: &RenderBatch, cores: usize, rops: usize) -> u64 {
    unit_bound_shared(w, cores, rops, 2 * cores)
}

/// [`unit_bound`] with `samplers` texture samplers (one texel a cycle) shared by the cores:
/// core `c`'s request `s` goes to sampler `(2c + s) × samplers / (2 × cores)`.
fn unit_bound_shared(w: &RenderBatch, cores: usize, rops: usize, samplers: usize) -> u64 {
    let mut total = 0;
    let mut sh = vec![0u64; cores];
    let mut tex = vec![0u64; samplers];
    let sampler = |c: usize, s: usize| (2 * c + s) * samplers / (2 * cores);
    let mut zs = vec![0u64; rops];
    let mut cw = vec![0u64; rops];
    let mut fe = 0u64;
    let mut flush = |sh: &mut Vec<u64>,
                     tex: &mut Vec<u64>,
                     zs: &mut Vec<u64>,
                     cw: &mut Vec<u64>,
                     fe: &mut u64| {
        let m = |v: &[u64]| v.iter().copied().max().unwrap_or(0);
        total += [m(sh), m(tex), m(zs), m(cw), *fe]
            .into_iter()
            .max()
            .unwrap();
        for v in [sh, tex, zs, cw] {
            v.iter_mut().for_each(|x| *x = 0);
        }
        *fe = 0;
    };
    for it in &w.items {
        let WorkItem {
            kind,
            core,
            rop,
            instructions,
            ..
        } = *it;
        let (c, r) = (core as usize % cores, rop as usize % rops);
        match kind {
            WorkKind::Sync | WorkKind::FrameEnd { .. } => {
                flush(&mut sh, &mut tex, &mut zs, &mut cw, &mut fe)
            }
            WorkKind::Triangle { vertices, .. } => {
                fe += 1;
                sh[c] += u64::from(instructions) * u64::from(vertices);
            }
            WorkKind::Tile => fe += 1,
            WorkKind::Quad {
                shaded,
                late_z,
                texels,
            } => {
                zs[r] += 1 + u64::from(late_z && shaded);
                if shaded {
                    sh[c] += u64::from(instructions);
                    tex[sampler(c, 0)] += u64::from(texels[0]);
                    tex[sampler(c, 1)] += u64::from(texels[1]);
                    cw[r] += 1;
                }
            }
            _ => {}
        }
    }
    total
}

#[test]
fn a_frame_runs_through_every_unit_and_makes_exactly_the_traces_accesses() {
    let scene = Scene::new("courtyard");
    let (src, desc) = apusim_render::load("courtyard").unwrap();
    let stats = apusim_render::render(
        &src,
        &desc,
        &scene.options(),
        &mut apusim_render::NullSink,
        |_, _| {},
    )
    .unwrap();
    let r = run(&preset(&[]), &scene, None);
    let g = r.gpu.as_ref().expect("the render pipeline ran");
    assert_eq!(g.model, "pipeline");
    // The whole result, render figures and all, reads back as it was written.
    let back = stored::decode(stored::FORMAT, &stored::encode(&r).unwrap()).unwrap();
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&r).unwrap()
    );
    let rr = g.render.as_ref().expect("render figures");
    assert_eq!(rr.frames.len(), 1);
    assert!(rr.fps > 0.0);
    assert_eq!(g.stats.transactions, stats.total());
    assert_eq!(rr.units.quads, stats.quads);
    assert_eq!(rr.units.triangles, stats.triangles);
    assert!(rr.units.shaded_quads > 0 && rr.units.shaded_quads <= stats.quads);
    for (name, u) in [
        ("fe", rr.units.fe),
        ("zs", rr.units.zs),
        ("sh", rr.units.sh),
        ("tex", rr.units.tex),
        ("cw", rr.units.cw),
    ] {
        assert!(u.completed > 0 && u.busy_cycles > 0, "{name}: {u:?}");
    }
    // Every shader core's cycles are accounted for, once each.
    for c in &g.cores {
        assert_eq!(c.total(), g.cores[0].total());
    }
}

#[test]
fn no_frame_beats_its_unit_and_dram_bounds() {
    for name in ["courtyard", "lake"] {
        let scene = Scene::new(name);
        let cfg = preset(&[]);
        let r = run(&cfg, &scene, None);
        let g = r.gpu.as_ref().unwrap();
        let rr = g.render.as_ref().unwrap();
        let frame = rr.frames[0].end - rr.frames[0].start;
        let u = &rr.units;
        // ROP fill rate: one quad per cycle per depth/stencil unit and per colour writer.
        assert!(frame * u.rops >= u.zs.completed, "{name}: {frame} vs ZS");
        assert!(frame * u.rops >= u.cw.completed, "{name}: {frame} vs CW");
        // Texel rate: one texel per cycle per sampler.
        assert!(frame * u.samplers >= u.texels, "{name}: {frame} vs texels");
        // DRAM bytes at peak bandwidth, in GPU cycles (1 GHz: one cycle a nanosecond).
        let gpu_dram = r.system.dram.iter().find(|d| d.agent == "gpu").unwrap();
        let bytes = (gpu_dram.reads + gpu_dram.writes) as f64 * 64.0;
        let peak = cfg.timing.dram_config().unwrap().spec.peak_bandwidth_gbps();
        assert!(frame as f64 >= bytes / peak, "{name}: {frame} vs DRAM");
    }
}

#[test]
fn with_ideal_memory_the_busiest_unit_sets_the_frame_time() {
    for name in ["courtyard", "lake"] {
        let scene = Scene::new(name);
        let cfg = preset(&["timing.render.ideal_memory=true"]);
        let r = run(&cfg, &scene, None);
        let rr = r.gpu.as_ref().unwrap().render.clone().unwrap();
        let frame = rr.frames[0].end - rr.frames[0].start;
        let bound = unit_bound(&work(&scene), 64, 16);
        assert!(
            frame >= bound,
            "{name}: frame {frame} below its bound {bound}"
        );
        assert!(
            frame as f64 <= 1.10 * bound as f64,
            "{name}: frame {frame} more than 10% above its unit bound {bound}"
        );
    }
}

/// Samplers shared by the cores (gspc §4's twelve for 96 cores): with memory ideal and two
/// samplers for all 64 cores, texture filtering sets the frame time, within 10% of the
/// bound of the busiest shared sampler, and with memory no frame beats their texel rate;
/// more samplers than two per core are refused by name.
#[test]
fn shared_samplers_set_the_frame_time_when_few() {
    let scene = Scene::new("courtyard");
    let ideal = preset(&[
        "timing.render.ideal_memory=true",
        "timing.render.samplers=2",
    ]);
    let r = run(&ideal, &scene, None);
    let rr = r.gpu.as_ref().unwrap().render.clone().unwrap();
    assert_eq!(rr.units.samplers, 2);
    let frame = rr.frames[0].end - rr.frames[0].start;
    let w = work(&scene);
    let bound = unit_bound_shared(&w, 64, 16, 2);
    assert!(bound > unit_bound(&w, 64, 16), "two samplers do not bind");
    assert!(frame >= bound, "frame {frame} below its bound {bound}");
    assert!(
        frame as f64 <= 1.10 * bound as f64,
        "frame {frame} more than 10% above the shared samplers' bound {bound}"
    );
    // With memory too, three shared samplers hold the frame to their texel rate.
    let cfg = preset(&["timing.render.samplers=3"]);
    let r = run(&cfg, &scene, None);
    let rr = r.gpu.as_ref().unwrap().render.clone().unwrap();
    assert_eq!(rr.units.samplers, 3);
    let frame = rr.frames[0].end - rr.frames[0].start;
    assert!(
        frame * 3 >= rr.units.texels,
        "frame {frame} beats three samplers' {} texels",
        rr.units.texels
    );
    let e = SystemConfig::load_preset("4c1g", &["timing.render.samplers=129".into()]).unwrap_err();
    assert!(format!("{e:#}").contains("`samplers` = 129"), "{e:#}");
    let e = sim_policy(
        &preset(&[
            "timing.render.samplers=128",
            "timing.render.shader_cores=32",
        ]),
        "drp-baseline",
        &scene,
        &SimOptions::default(),
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("at most two per shader core"),
        "{e:#}"
    );
}

/// A CPU core streaming over `span` bytes.
fn cpu_stream(n: u64, span: u64) -> Vec<Access> {
    (0..n)
        .map(|i| {
            let mut a = Access::new(
                Agent::cpu(0),
                Stream::CpuData,
                Op::Read,
                0x4000_0000 + (i * 64) % span,
                8,
            );
            a.time = i * 4;
            a
        })
        .collect()
}

#[test]
fn beside_a_cpu_core_it_renders_again_while_the_core_runs_and_runs_are_deterministic() {
    let mut scene = Scene::new("lake");
    scene.width = 96;
    scene.height = 64;
    scene.cpu = Some(cpu_stream(200_000, 64 << 20));
    let cfg = preset(&[]);
    let a = run(&cfg, &scene, Some(400_000));
    let b = run(&cfg, &scene, Some(400_000));
    let g = a.gpu.as_ref().unwrap();
    assert!(
        g.restarts > 0,
        "the core outlasts one frame: {}",
        g.restarts
    );
    assert_eq!(g.render.as_ref().unwrap().frames.len(), 1);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    // The GPU slows the core down: its IPC alone is higher.
    let opts = SimOptions {
        instructions: Some(400_000),
        ..SimOptions::default()
    };
    let alone = sim_policy(
        &cfg,
        "drp-baseline",
        &CpuOnly(cpu_stream(200_000, 64 << 20)),
        &opts,
    )
    .unwrap();
    assert!(alone.cores[0].ipc > a.cores[0].ipc);
}

/// A core that stops retiring is reported even while the GPU keeps the machine busy: with a
/// watchdog shorter than a DRAM miss, the core streaming through memory beside the render
/// trips it, named with its input; the whole-machine watchdog alone counts the GPU's cycles
/// as progress and would let it wait on.
#[test]
fn a_core_that_stops_retiring_beside_a_busy_gpu_is_named() {
    let mut scene = Scene::new("lake");
    scene.width = 96;
    scene.height = 64;
    scene.cpu = Some(cpu_stream(20_000, 64 << 20));
    let cfg = preset(&["timing.watchdog_cycles=150"]);
    let opts = SimOptions {
        instructions: Some(40_000),
        ..SimOptions::default()
    };
    let err = sim_policy(&cfg, "drp-baseline", &scene, &opts).expect_err("the watchdog trips");
    let msg = format!("{err:#}");
    assert!(
        msg.contains("no progress on cpu0") && msg.contains("cpu0 stream"),
        "{msg}"
    );
    assert!(msg.contains("timing.watchdog_cycles"), "{msg}");
    // The oldest request is followed down: the core's miss waits for DRAM on a channel.
    assert!(
        msg.contains("its LLC miss has waited for DRAM channel"),
        "{msg}"
    );
    // With the default watchdog the same setting runs to its end (the test above).
}

/// Just one CPU core's trace.
struct CpuOnly(Vec<Access>);

impl Inputs for CpuOnly {
    fn open(&self) -> Result<Vec<Input>> {
        Ok(vec![Input {
            name: "cpu0 stream".into(),
            source: Box::new(VecSource::new(self.0.clone())),
            remap: Some(Agent::cpu(0)),
            champsim: None,
            program: None,
        }])
    }
    fn describe(&self) -> String {
        "cpu only".into()
    }
    fn reopen(&self, _: usize) -> Option<Reopen> {
        let t = self.0.clone();
        Some(Box::new(move || {
            CpuOnly(t.clone()).open().map(|mut v| v.remove(0))
        }))
    }
}

#[test]
fn a_render_job_on_a_gpgpu_model_and_bad_pipeline_settings_are_refused_by_name() {
    let scene = Scene::new("courtyard");
    let cfg = preset(&["timing.render={model=\"simt\"}"]);
    let err = sim_policy(&cfg, "lru", &scene, &SimOptions::default()).expect_err("refused");
    let msg = format!("{err:#}");
    assert!(
        msg.contains("pipeline") && msg.contains("timing.render"),
        "{msg}"
    );
    let err = SystemConfig::load_preset("4c1g", &["timing.render.rops=0".into()])
        .and_then(|c| c.validate().map(|_| c))
        .expect_err("refused");
    assert!(format!("{err:#}").contains("rops"), "{err:#}");
    let err = SystemConfig::load_preset("4c1g", &["timing.render.shader_core=8".into()])
        .and_then(|c| c.validate().map(|_| c))
        .expect_err("refused");
    assert!(format!("{err:#}").contains("shader_cores"), "{err:#}");
}

/// The LLC switches in a timed run (drp §4.2-4.3): with every GPU stream ideal, only
/// compulsory misses reach DRAM and the frames render faster; with every GPU read miss forced
/// around the LLC, each one is a bypass and a DRAM read.
#[test]
fn idealized_gpu_streams_cost_hits_and_forced_bypass_goes_to_dram() {
    let mut scene = Scene::new("courtyard");
    scene.frames = 2;
    let cfg = preset(&["cpus=1"]);
    let with = |llc_switches: LlcSwitches| {
        let opts = SimOptions {
            llc_switches,
            ..SimOptions::default()
        };
        sim_policy(&cfg, "drp-baseline", &scene, &opts).unwrap()
    };
    let gpu_reads = |r: &SimResult| r.functional.memory.class_total(true).reads;
    let frames = |r: &SimResult| r.gpu.as_ref().unwrap().cycles;
    let base = with(LlcSwitches::default());
    // The frames' write-backs make the controllers switch to writes.
    assert!(base.system.dram_write_drains > 0, "no write drain counted");
    let ideal = with(LlcSwitches {
        ideal: LlcSwitches::parse_ideal("gpu").unwrap(),
        ..LlcSwitches::default()
    });
    // Compulsory misses: the distinct lines the GPU reads from the LLC.
    let llc = base.functional.llc().counts.class_total(true);
    let ideal_llc = ideal.functional.llc().counts.class_total(true);
    assert!(ideal_llc.idealized > 0, "no miss was idealized");
    assert!(
        gpu_reads(&ideal) < gpu_reads(&base),
        "ideal GPU streams read {} lines from DRAM, the baseline {}",
        gpu_reads(&ideal),
        gpu_reads(&base)
    );
    assert_eq!(
        gpu_reads(&ideal),
        ideal_llc.read_misses,
        "every GPU read miss that was not idealized is a DRAM read"
    );
    assert!(
        frames(&ideal) < frames(&base),
        "ideal GPU streams took {} GPU cycles, the baseline {}",
        frames(&ideal),
        frames(&base)
    );
    assert!(llc.read_misses > ideal_llc.read_misses);

    let bypass = with(LlcSwitches {
        gpu_read_bypass: 1.0,
        ..LlcSwitches::default()
    });
    let b = bypass.functional.llc().counts.class_total(true);
    // Every GPU read miss bypasses (the baseline's write rules bypass some writes too).
    assert!(b.bypasses >= b.read_misses, "{} bypasses", b.bypasses);
    assert!(b.bypasses > llc.bypasses + b.read_misses / 2);
    assert!(gpu_reads(&bypass) > gpu_reads(&base));
    // The LLC stream is dumped by functional runs only.
    let bad = LlcSwitches {
        dump_llc_trace: Some("x.apt".into()),
        ..LlcSwitches::default()
    };
    let e = sim_policy(
        &cfg,
        "drp-baseline",
        &scene,
        &SimOptions {
            llc_switches: bad,
            ..SimOptions::default()
        },
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("--dump-llc-trace"), "{e:#}");
}

/// gpu-access-criticality §4.1.1 and §4.2 in a timed run: marking accesses critical changes
/// no timing under a scheduler that ignores the flag; the marked accesses reach DRAM with the
/// flag; later frames are predicted from the learned one; and making the critical accesses
/// ideal (Fig. 8) speeds the frames up.
#[test]
fn critical_accesses_are_marked_and_frames_are_predicted() {
    let mut scene = Scene::new("courtyard");
    scene.frames = 3;
    let on = [
        "cpus=1",
        "timing.render.criticality=true",
        "timing.render.target_fps=0",
    ];
    let plain = run(&preset(&["cpus=1"]), &scene, None);
    let marked = run(&preset(&on), &scene, None);
    let g = |r: &SimResult| r.gpu.clone().unwrap();
    assert_eq!(
        g(&plain).cycles,
        g(&marked).cycles,
        "marking changed timing"
    );
    assert_eq!(g(&plain).stats, g(&marked).stats);
    let render = g(&marked).render.unwrap();
    let c = render.criticality.expect("a criticality report");
    let k = c.counters;
    assert!(k.evaluations > 0);
    let critical: u64 = k.critical.iter().sum();
    let other: u64 = k.non_critical.iter().sum();
    assert!(
        critical > 0 && other > 0,
        "{critical} critical, {other} not"
    );
    assert_eq!(
        k.on_target, 0,
        "no target: every bottleneck access is marked"
    );
    // Without the switch nothing is marked, but frames are still estimated.
    let pc = g(&plain).render.unwrap().criticality.unwrap();
    assert_eq!(pc.counters.critical.iter().sum::<u64>(), 0);
    // Frame 0 is learned; a later frame is predicted, close to its time (the same scene's
    // frames differ in their animation only), unless it differed from the learned one.
    let l = c.learned.as_ref().expect("a learned frame");
    assert!(l.planes >= 1 && l.tiles > 1 && l.updates > 0);
    assert!(!c.estimates.is_empty(), "no frame predicted");
    assert!(
        c.estimates.len() as u64 + c.relearned <= 2,
        "{:?}",
        c.estimates
    );
    for e in &c.estimates {
        assert!(e.error.abs() < 0.5, "frame {} error {}", e.frame, e.error);
    }
    // A target far above the frame rate marks as before; one far below marks nothing once a
    // frame is learned.
    let slow = run(
        &preset(&[
            "cpus=1",
            "timing.render.criticality=true",
            "timing.render.target_fps=1",
        ]),
        &scene,
        None,
    );
    let sk = g(&slow).render.unwrap().criticality.unwrap().counters;
    assert!(
        sk.on_target > 0,
        "a frame rate above 1 FPS meets the target"
    );
    assert!(sk.critical.iter().sum::<u64>() < critical);

    // Fig. 8: the critical accesses' non-compulsory misses as hits, at a resolution where
    // hundreds of them are idealized (at 160x128 a few dozen are, and the frame's time moves
    // by a few cycles, or none, with the memory layout).
    scene.width = 320;
    scene.height = 256;
    let marked = run(&preset(&on), &scene, None);
    let ideal = |critical: bool| {
        let opts = SimOptions {
            llc_switches: LlcSwitches {
                ideal_critical: Some(critical),
                ..LlcSwitches::default()
            },
            ..SimOptions::default()
        };
        sim_policy(&preset(&on), "drp-baseline", &scene, &opts).unwrap()
    };
    let crit = ideal(true);
    let llc = crit.functional.llc().counts.class_total(true);
    assert!(llc.idealized > 0, "no critical miss was idealized");
    assert!(g(&crit).cycles < g(&marked).cycles);
    let non = ideal(false);
    assert!(non.functional.llc().counts.class_total(true).idealized > 0);
}

/// gpu-access-criticality §4.3 in a timed run: with the GPU's critical accesses marked, a
/// scheduler that serves them first renders the frame sooner than FR-FCFS beside a core
/// streaming through memory, and slows the core; runs stay deterministic, and the
/// frame-progress hint reaches the deadline-aware schedulers (DASH behaves differently from
/// FR-FCFS once a frame is learned).
#[test]
fn critical_gpu_accesses_first_speed_the_frame_and_hints_reach_dram() {
    let mut scene = Scene::new("lake");
    scene.width = 96;
    scene.height = 64;
    scene.frames = 2;
    scene.cpu = Some(cpu_stream(200_000, 64 << 20));
    let with = |scheduler: &str| {
        let cfg = preset(&[
            "timing.render.criticality=true",
            "timing.render.target_fps=0",
            &format!("timing.dram_set=[\"scheduler={scheduler}\"]"),
        ]);
        run(&cfg, &scene, Some(300_000))
    };
    let fr = with("frfcfs");
    let fav = with("gpu-favoring");
    let cycles = |r: &SimResult| r.gpu.as_ref().unwrap().cycles;
    assert!(
        cycles(&fav) < cycles(&fr),
        "gpu-favoring {} GPU cycles, FR-FCFS {}",
        cycles(&fav),
        cycles(&fr)
    );
    assert!(fav.cores[0].ipc <= fr.cores[0].ipc);
    let again = with("gpu-favoring");
    assert_eq!(
        serde_json::to_string(&fav).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    let dash = with("dash");
    assert_ne!(
        serde_json::to_string(&dash.system).unwrap(),
        serde_json::to_string(&fr.system).unwrap(),
        "DASH ran exactly as FR-FCFS"
    );
}

/// TAP's core sampling (tap §3.1) and HeLM's sampled cores (drp §2.2) on a 3D job: the render
/// pipeline reports each shader core's instructions and ready threads under the unit of its
/// instruction fetches (sampled cores 0 and 1 are the shader cores of screen tiles (0, 0) and
/// (1, 0)), so with short periods both policies decide.
#[test]
fn tap_core_sampling_and_helm_hear_the_render_pipeline_s_shader_cores() {
    let mut scene = Scene::new("courtyard");
    scene.width = 96;
    scene.height = 64;
    // The units the reports are indexed by: a core's instruction fetches carry the core's
    // id, its texture reads the units of its two samplers, 2c and 2c + 1.
    let w = work(&scene);
    let mut at = 0;
    let mut fetches = 0;
    for it in &w.items {
        for a in &w.accesses[at..at + it.accesses as usize] {
            match a.stream {
                Stream::ShaderInstr => {
                    assert_eq!(a.unit, it.core, "{it:?}");
                    fetches += 1;
                }
                Stream::StaticTexture | Stream::DynamicTexture => {
                    assert_eq!(a.unit / 2, it.core, "{it:?}")
                }
                _ => {}
            }
        }
        at += it.accesses as usize;
    }
    assert!(fetches > 0);
    let cfg = preset(&["cpus=1", "llc.params.period_cycles=20000"]);
    let opts = SimOptions::default();
    let tap = sim_policy(&cfg, "tap-rrip", &scene, &opts).unwrap();
    assert!(
        tap.policy_stat("periods").unwrap() >= 2.0,
        "{:?}",
        tap.policy_stats
    );
    assert!(
        tap.policy_stat("csc_decisions").unwrap() >= 1.0,
        "core sampling never decided: {:?}",
        tap.policy_stats
    );
    let helm = sim_policy(&cfg, "helm", &scene, &opts).unwrap();
    assert!(
        helm.policy_stat("tolerance_decisions").unwrap() >= 1.0,
        "HeLM never judged the GPU's latency tolerance: {:?}",
        helm.policy_stats
    );
}

/// Two frames of the deferred scene at 320x256 (about nine sampling periods a frame with
/// [`nine_periods_a_frame`], as the default windows give a 1280x1024 frame).
fn two_small_deferred_frames() -> Scene {
    let mut scene = Scene::new("deferred");
    scene.width = 320;
    scene.height = 256;
    scene.frames = 2;
    scene
}

/// Sampling at a tenth of the default windows.
fn nine_periods_a_frame() -> SimOptions {
    SimOptions {
        sample: Some(apusim_sim::timed::SampleSpec {
            period: 100_000,
            warmup: Some(10_000),
            unit: 5_000,
        }),
        ..SimOptions::default()
    }
}

/// Beside the render pipeline a sampled run's detailed warm-up defaults to
/// [`RENDER_WARMUP`] (the texture reads' backlog at the LLC's MSHRs takes that long to build
/// again after a drain) and its report carries the value used; a warm-up given is used as
/// given; a period too short for the default is refused naming `--sample-warmup` and the
/// default.
#[test]
fn a_render_run_samples_after_the_render_warm_up_unless_told_otherwise() {
    use apusim_sim::timed::{SampleSpec, RENDER_WARMUP};
    let scene = two_small_deferred_frames();
    let cfg = preset(&[]);
    let sampled = |spec: SampleSpec| {
        let opts = SimOptions {
            sample: Some(spec),
            ..SimOptions::default()
        };
        sim_policy(&cfg, "drp-baseline", &scene, &opts)
    };
    let auto = SampleSpec {
        period: 400_000,
        warmup: None,
        unit: 5_000,
    };
    let warm_up = |r: SimResult| r.sampling.expect("sampled").spec.warmup;
    assert_eq!(warm_up(sampled(auto).unwrap()), Some(RENDER_WARMUP));
    let asked = SampleSpec {
        warmup: Some(10_000),
        ..auto
    };
    assert_eq!(warm_up(sampled(asked).unwrap()), Some(10_000));
    let short = SampleSpec {
        period: 150_000,
        ..auto
    };
    let e = format!("{:#}", sampled(short).unwrap_err());
    assert!(
        e.contains("--sample-warmup 200000 + --sample-unit 5000 exceed --sample-period 150000")
            && e.contains("defaults to 200000"),
        "{e}"
    );
}

/// `flush_warming`: a sampled run that finishes the frozen pipeline's work functionally when
/// each warming begins still times or warms every shader instruction exactly once (a flushed
/// thread's instructions not yet issued count as warmed), renders both frames, and warms
/// more of them than the run that keeps the work through the thaw.
#[test]
fn a_flushed_warming_times_or_warms_every_instruction_once() {
    let scene = two_small_deferred_frames();
    let detailed = run(&preset(&[]), &scene, None).gpu.unwrap();
    let opts = nine_periods_a_frame();
    let sampled = |set: &[&str]| {
        sim_policy(&preset(set), "drp-baseline", &scene, &opts)
            .unwrap()
            .gpu
            .unwrap()
    };
    let kept = sampled(&[]);
    let flushed = sampled(&["timing.render.flush_warming=true"]);
    let frames = |g: &apusim_sim::timed::GpuResult| g.render.as_ref().unwrap().frames.len();
    eprintln!(
        "deferred 320x256: {} of {} instructions warmed with the flush, {} without",
        flushed.stats.warmed_instructions,
        detailed.stats.warp_instructions,
        kept.stats.warmed_instructions
    );
    assert_eq!(
        flushed.stats.warmed_instructions + flushed.stats.warp_instructions,
        detailed.stats.warp_instructions
    );
    assert_eq!(frames(&flushed), 2);
    assert!(flushed.stats.warmed_instructions > kept.stats.warmed_instructions);
}

/// Sampled runs of 3D work: the pipeline warms the render work between detailed windows
/// (its accesses functionally, frame ends at their share of the skipped cycles, at the pace
/// of its windows' work per cycle), so a sampled run's frames follow the detailed run's, and
/// every shader instruction of the scene is either timed or warmed exactly once. On the
/// deferred scene, whose texture-bound lighting pass and depth-only and blit passes issue
/// few shader instructions, warming at the windows' instruction rate made the frames 36–47%
/// short at 640x512; by work it is within 10% here (about nine periods a frame, as the
/// default windows give a 1280x1024 frame; docs/validation.md has the spread over window
/// sizes).
#[test]
fn a_sampled_run_warms_render_work_and_its_frames_follow_the_detailed_ones() {
    let scene = two_small_deferred_frames();
    let cfg = preset(&[]);
    let detailed = run(&cfg, &scene, None);
    let opts = nine_periods_a_frame();
    let sampled = sim_policy(&cfg, "drp-baseline", &scene, &opts).unwrap();
    let (d, s) = (detailed.gpu.unwrap(), sampled.gpu.unwrap());
    let (df, sf) = (
        &d.render.as_ref().unwrap().frames,
        &s.render.as_ref().unwrap().frames,
    );
    let cycles = |f: &[apusim_timing::gpu::pipeline::FrameSpan]| {
        f.iter().map(|f| f.end - f.start).sum::<u64>()
    };
    let err = cycles(sf) as f64 / cycles(df) as f64 - 1.0;
    eprintln!(
        "deferred 320x256: detailed frames {df:?}, sampled {sf:?} ({:+.1}%); {} of {} instructions warmed",
        100.0 * err,
        s.stats.warmed_instructions,
        s.stats.warmed_instructions + s.stats.warp_instructions
    );
    assert_eq!(df.len(), 2);
    assert_eq!(sf.len(), 2);
    assert!(s.stats.warmed_instructions > 2 * s.stats.warp_instructions);
    assert_eq!(
        s.stats.warmed_instructions + s.stats.warp_instructions,
        d.stats.warp_instructions
    );
    assert!(err.abs() < 0.10, "{err:+.3}");
    // The windows' work rate and its interval, which the frame times carry.
    assert!(d.work_rate.is_none());
    let rate = s.work_rate.expect("a sampled pipeline's work rate");
    eprintln!(
        "deferred 320x256: work per cycle {:.3} ± {:.3} ({} windows, ±{:.1}%)",
        rate.value,
        rate.half_width,
        rate.windows,
        100.0 * rate.relative_error()
    );
    assert!(rate.windows >= 2 && rate.half_width > 0.0);
    assert!(
        err.abs() <= rate.relative_error(),
        "detailed frames {err:+.3} off, outside ±{:.3}",
        rate.relative_error()
    );
}

/// `--interval` series carry the GPU's own figures: over a scene's run the intervals' GPU
/// cycles, instructions and transactions add up to the run's, their work to the pipeline's
/// work taken, the frame's progress runs between 0 and 1, and recording changes nothing. In
/// a sampled run the intervals that hold a warming carry its instructions as warmed ones,
/// and the timed and warmed instructions add up to the detailed run's.
#[test]
fn interval_series_carry_the_pipelines_work_and_frame_progress() {
    let mut scene = Scene::new("deferred");
    scene.width = 320;
    scene.height = 256;
    scene.frames = 2;
    let cfg = preset(&[]);
    let plain = run(&cfg, &scene, None);
    let opts = SimOptions {
        interval: Some("20000cycles".parse().unwrap()),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "drp-baseline", &scene, &opts).unwrap();
    let (g, p) = (r.gpu.as_ref().unwrap(), plain.gpu.as_ref().unwrap());
    assert_eq!(g.cycles, p.cycles, "recording changed the run");
    assert_eq!(g.stats.warp_instructions, p.stats.warp_instructions);
    let series: Vec<_> = r.intervals.iter().map(|iv| iv.gpu.unwrap()).collect();
    assert!(series.len() >= 10, "{} intervals", series.len());
    let sum = |f: fn(&apusim_sim::timed::GpuInterval) -> u64| series.iter().map(f).sum::<u64>();
    assert_eq!(sum(|x| x.instructions), g.stats.warp_instructions);
    assert_eq!(sum(|x| x.transactions), g.stats.transactions);
    assert_eq!(sum(|x| x.warmed_instructions), 0);
    // The GPU ran on to the last interval's end, which is the run's end.
    let last = r.intervals.last().unwrap();
    let gpu_cycles = sum(|x| x.cycles);
    assert!(gpu_cycles >= g.cycles, "{gpu_cycles} < {}", g.cycles);
    assert!(series.iter().all(|x| x.cycles > 0 || x.work == 0));
    // A 20,000-cycle interval at 4 GHz is 5,000 GPU cycles at 1 GHz.
    assert!(series[..series.len() - 1].iter().all(|x| x.cycles == 5_000));
    assert!(series.iter().filter(|x| x.work > 0).count() > series.len() / 2);
    let progress: Vec<f64> = series.iter().filter_map(|x| x.frame_progress).collect();
    assert!(!progress.is_empty(), "the estimator never predicted");
    assert!(
        progress.iter().all(|&p| (0.0..=1.0).contains(&p)),
        "{progress:?}"
    );
    assert!(last.end_cycle >= r.cycles);
    // The DRAM queues' occupancies: the intervals' means, weighted by their lengths, are the
    // run's, and a G-buffer frame keeps both queues busy.
    type Figure = fn(&apusim_sim::timed::SystemWindow) -> f64;
    let weighted = |f: Figure| {
        let (sum, cycles) = r.intervals.iter().fold((0.0, 0u64), |(s, c), iv| {
            let n = iv.system.window_cycles;
            (s + f(&iv.system) * n as f64, c + n)
        });
        sum / cycles as f64
    };
    let queues: [(Figure, &str); 4] = [
        (|w| w.dram_read_queue_mean, "read queue"),
        (|w| w.dram_write_queue_mean, "write queue"),
        (|w| w.dram_reads_waiting_mean, "reads waiting"),
        (|w| w.dram_writes_waiting_mean, "write-backs waiting"),
    ];
    for (f, name) in queues {
        let (series, whole) = (weighted(f), f(&r.system));
        assert!(
            (series - whole).abs() <= 0.01 * whole.max(0.01),
            "{name}: intervals {series}, run {whole}"
        );
    }
    assert!(r.system.dram_read_queue_mean > 1.0 && r.system.dram_write_queue_mean > 1.0);

    // Sampled: warmed work shows where warming happened.
    let opts = SimOptions {
        interval: Some("20000cycles".parse().unwrap()),
        sample: Some(apusim_sim::timed::SampleSpec {
            period: 100_000,
            warmup: Some(10_000),
            unit: 5_000,
        }),
        ..SimOptions::default()
    };
    let s = sim_policy(&cfg, "drp-baseline", &scene, &opts).unwrap();
    let sg = s.gpu.as_ref().unwrap();
    let series: Vec<_> = s.intervals.iter().map(|iv| iv.gpu.unwrap()).collect();
    let timed: u64 = series.iter().map(|x| x.instructions).sum();
    let warmed: u64 = series.iter().map(|x| x.warmed_instructions).sum();
    assert_eq!(timed, sg.stats.warp_instructions);
    assert_eq!(warmed, sg.stats.warmed_instructions);
    assert_eq!(timed + warmed, p.stats.warp_instructions);
    assert!(series.iter().any(|x| x.warmed_instructions > 0));
    assert!(series
        .iter()
        .any(|x| x.instructions > 0 && x.warmed_instructions == 0));
}
