//! Where a study's runs are kept between invocations, so that a study is resumable.
//!
//! Every timed run a study makes goes through [`Runs::sim`], every functional run (drp's
//! Figs. 13 and 14) through [`Runs::run`], every replay of a GPU workload's LLC stream (gspc's
//! Figs. 11-14) through [`Runs::replay`], every kernel through `apusim gpu-l1`'s hierarchy
//! (the functional bypass figures) through [`Runs::gpu_l1`]. Without a store those are
//! `apusim_sim::timed::sim_policy`, `apusim_sim::run_policy`, [`crate::replay::replay`] and
//! [`crate::gpu_l1::run`]. With one
//! (`apusim study --db FILE`) the run is first looked up by what it simulates —
//! configuration, policy, inputs and the options that shape its result, as a [`TimedRun`] or
//! a [`FunctionalRun`] — and read back when the store holds it; otherwise it is simulated and
//! handed to the store as soon as it finishes. A study killed halfway keeps the runs it
//! finished, and starting it again simulates only the rest; a study whose every run is stored
//! (by an earlier study, by `apusim sim --no-alone --db` or `apusim run --db`, or by a sweep
//! of the spec `apusim study NAME --print-spec` writes) simulates nothing.
//!
//! The store is a trait so that this crate does not depend on the results database
//! (`apusim_sweep::study_runs` implements it over one).
//!
//! In planning mode ([`Runs::planner`]) nothing runs and no trace is generated: a study lists
//! the runs it would make as [`PlannedPoint`]s — each what a sweep point says (timed,
//! functional, a replay or a GPU L1 run; a mix, a kernel, a scene or a CPU application alone,
//! preset, overrides, policy, run lengths, switches), so the list is the study's sweep spec —
//! and stops with [`Planned`]. A study's
//! runs are all asked for in one parallel batch, so the list is complete; the alone runs
//! behind a figure's slowdowns are not in it (the study makes them, cached beside its
//! traces). tap's characterization (tap-fig2) states each application's system as `set`
//! overrides of preset `tap`: a GPGPU kernel beside one idle CPU core, a CPU application
//! alone on its one core (a sweep point's `cpu`).

use crate::gpu_l1::{self, GpuL1Run};
use crate::jobs::JobInputs;
use crate::replay::{self, Replayed};
use anyhow::Result;
use apusim_sim::run::Inputs;
use apusim_sim::timed::{sim_policy, SimOptions, SimResult};
use apusim_sim::{run_policy, RunOptions, RunResult, SystemConfig};
use apusim_workloads::mixes::Frames;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One timed run as a study asks for it.
pub struct TimedRun<'a> {
    pub cfg: &'a SystemConfig,
    pub policy: &'a str,
    pub inputs: &'a dyn Inputs,
    pub opts: &'a SimOptions,
}

/// One functional run as a study asks for it (`apusim run` semantics: `opts.limit` trace
/// accesses at most, drp §3's restarts when `opts.continue_to_run`).
pub struct FunctionalRun<'a> {
    pub cfg: &'a SystemConfig,
    pub policy: &'a str,
    pub inputs: &'a dyn Inputs,
    pub opts: &'a RunOptions,
}

/// One replay as a study asks for it: the LLC stream of `inputs`' one GPU workload behind
/// `cfg`'s upper caches, replayed through `cfg`'s LLC under `policy` ([`crate::replay`]);
/// with `consumption`, the render-target consumption too.
pub struct ReplayRun<'a> {
    pub cfg: &'a SystemConfig,
    pub policy: &'a str,
    pub inputs: &'a JobInputs,
    pub consumption: bool,
}

/// Keeps a study's runs: called from the study's worker threads, so it synchronizes itself.
pub trait RunStore: Send + Sync {
    /// The stored result of `run`, if the store holds one it can read.
    fn load(&self, run: &TimedRun<'_>) -> Result<Option<SimResult>>;
    /// Keep the result of `run`, just simulated.
    fn save(&self, run: &TimedRun<'_>, result: &SimResult) -> Result<()>;
    /// The stored result of functional `run`, if the store holds one it can read.
    fn load_functional(&self, run: &FunctionalRun<'_>) -> Result<Option<RunResult>>;
    /// Keep the result of functional `run`, just simulated.
    fn save_functional(&self, run: &FunctionalRun<'_>, result: &RunResult) -> Result<()>;
    /// The stored result of replay `run`, if the store holds one it can read.
    fn load_replay(&self, run: &ReplayRun<'_>) -> Result<Option<Replayed>>;
    /// Keep the result of replay `run`, just made in `seconds`.
    fn save_replay(&self, run: &ReplayRun<'_>, result: &Replayed, seconds: f64) -> Result<()>;
    /// The stored result of GPU L1 `run`, if the store holds one it can read.
    fn load_gpu_l1(&self, run: &GpuL1Run<'_>) -> Result<Option<apusim_gpu::RunResult>>;
    /// Keep the result of GPU L1 `run`, just made in `seconds`.
    fn save_gpu_l1(
        &self,
        run: &GpuL1Run<'_>,
        result: &apusim_gpu::RunResult,
        seconds: f64,
    ) -> Result<()>;
}

/// What a planned run runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum PlannedInput {
    /// A mix of built-in workloads (`apusim mixes`), at the run's scale.
    Mix(String),
    /// A GPGPU kernel alone on the GPU, at the run's scale (`apusim sim --kernel`).
    Kernel(String),
    /// Frames of a built-in scene alone on the GPU, as many as the run's scale
    /// (`apusim sim --scene`).
    Scene {
        name: String,
        width: u32,
        height: u32,
    },
    /// A CPU kernel alone on core 0, retiring the run's warm-up and instructions
    /// (`apusim sim --cpu`).
    Cpu(String),
}

/// One run of a study, as a sweep point states it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRun {
    pub preset: String,
    /// `--set` overrides, in order (the study's, then the bar's).
    pub set: Vec<String>,
    /// The DRAM overrides the run ends up with (`timing.dram_set`).
    pub dram_set: Vec<String>,
    pub policy: String,
    pub input: PlannedInput,
    /// The workload scale (a mix's or kernel's size multiplier; a scene's frames).
    pub scale: u64,
    /// A mix's rendering job's frames, when not `scale` of them.
    pub frames: Frames,
    pub seed: u64,
    pub warmup: u64,
    pub instructions: Option<u64>,
    pub sample: bool,
    /// drp §4's switches: the idealized streams (`--ideal` list) and the forced GPU read
    /// bypass fraction.
    pub ideal: String,
    pub gpu_read_bypass: f64,
    /// gpu-access-criticality Fig. 8: idealize the critical (`Some(true)`) or the other GPU
    /// accesses.
    pub ideal_critical: Option<bool>,
}

impl PlannedRun {
    /// A workload alone, run to its end with the default options, on `cfg`: preset `preset`
    /// with the overrides `set`.
    pub(crate) fn alone(
        preset: &str,
        set: Vec<String>,
        cfg: &SystemConfig,
        policy: &str,
        input: PlannedInput,
        (scale, seed): (u64, u64),
    ) -> PlannedRun {
        let mut set = set;
        // A sweep point of a workload alone has no CPU core (one for a CPU application)
        // unless it says so.
        if cfg.cpus != usize::from(matches!(input, PlannedInput::Cpu(_))) {
            set.push(format!("cpus={}", cfg.cpus));
        }
        PlannedRun {
            dram_set: cfg.timing.dram_set.clone(),
            policy: policy.to_string(),
            scale,
            ..PlannedRun::to_its_end(preset, set, input, seed)
        }
    }

    /// Kernel `kernel` from `seed` through `apusim gpu-l1`'s hierarchy on GPU preset `preset`
    /// with the overrides `set` ([`PlannedMode::GpuL1`]).
    pub(crate) fn gpu_l1(preset: &str, set: Vec<String>, kernel: &str, seed: u64) -> PlannedRun {
        PlannedRun::to_its_end(preset, set, PlannedInput::Kernel(kernel.to_string()), seed)
    }

    /// `input` from `seed` at scale 1 on preset `preset` with the overrides `set`, run to its
    /// end with the default options: no DRAM overrides, LLC policy, warm-up, sampling or LLC
    /// switches.
    fn to_its_end(preset: &str, set: Vec<String>, input: PlannedInput, seed: u64) -> PlannedRun {
        PlannedRun {
            preset: preset.to_string(),
            set,
            dram_set: Vec::new(),
            policy: String::new(),
            input,
            scale: 1,
            frames: Frames::Scale,
            seed,
            warmup: 0,
            instructions: None,
            sample: false,
            ideal: String::new(),
            gpu_read_bypass: 0.0,
            ideal_critical: None,
        }
    }
}

/// How a planned run is made, as a sweep point's `mode` says.
#[derive(Clone, Debug, PartialEq)]
pub enum PlannedMode {
    /// A timed run (`apusim sim`).
    Timed,
    /// A functional run (`apusim run`), stopped after `limit` trace accesses when set; the
    /// run's `instructions` is its mix's CPU job length, run by drp §3's method.
    Functional { limit: Option<u64> },
    /// A replay of a GPU workload's LLC stream ([`crate::replay`]), with the render-target
    /// consumption when `consumption`.
    Replay { consumption: bool },
    /// A GPGPU kernel through `apusim gpu-l1`'s GPU hierarchy ([`crate::gpu_l1`]) at problem
    /// size `size` (`None`: the kernel's default): the run's preset and overrides are a GPU
    /// configuration's (`apusim gpu-l1 presets`), and it has no LLC policy.
    GpuL1 { size: Option<u64> },
}

/// One run of a study and how it is made: one sweep point.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedPoint {
    pub mode: PlannedMode,
    pub run: PlannedRun,
}

/// The error a study in planning mode stops with once its runs are listed.
#[derive(Debug)]
pub struct Planned;

impl fmt::Display for Planned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the study's runs are listed (planning mode)")
    }
}

impl std::error::Error for Planned {}

/// How a study's timed runs are made: simulated, through a [`RunStore`], or only listed.
#[derive(Clone, Default)]
pub struct Runs {
    store: Option<Arc<dyn RunStore>>,
    plan: Option<Arc<Mutex<Vec<PlannedPoint>>>>,
}

impl fmt::Debug for Runs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match (&self.store, &self.plan) {
            (_, Some(_)) => "planning",
            (Some(_), None) => "stored",
            (None, None) => "simulated",
        };
        write!(f, "Runs({mode})")
    }
}

impl Runs {
    /// Runs through `store`.
    pub fn new(store: Arc<dyn RunStore>) -> Runs {
        Runs {
            store: Some(store),
            plan: None,
        }
    }

    /// Planning mode: the runs a study asks for are added to `list`, none is made.
    pub fn planner(list: Arc<Mutex<Vec<PlannedPoint>>>) -> Runs {
        Runs {
            store: None,
            plan: Some(list),
        }
    }

    /// Whether runs are only listed ([`Runs::planner`]).
    pub fn is_planning(&self) -> bool {
        self.plan.is_some()
    }

    /// In planning mode, list the timed `runs` and return the [`Planned`] error to stop the
    /// study.
    pub(crate) fn plan(&self, runs: impl FnOnce() -> Result<Vec<PlannedRun>>) -> Result<()> {
        self.plan_as(PlannedMode::Timed, runs)
    }

    /// [`Runs::plan`] of runs made as `mode` says.
    pub(crate) fn plan_as(
        &self,
        mode: PlannedMode,
        runs: impl FnOnce() -> Result<Vec<PlannedRun>>,
    ) -> Result<()> {
        match &self.plan {
            None => Ok(()),
            Some(list) => {
                let planned = runs()?.into_iter().map(|run| PlannedPoint {
                    mode: mode.clone(),
                    run,
                });
                list.lock().expect("the plan's lock").extend(planned);
                Err(Planned.into())
            }
        }
    }

    /// `make`'s result, or in planning mode an error (a study lists its `what` before making
    /// any), or through the store: the stored result when `load` finds one, else made and
    /// handed to `save` with the seconds it took.
    fn kept<T>(
        &self,
        what: &str,
        load: impl FnOnce(&dyn RunStore) -> Result<Option<T>>,
        make: impl FnOnce() -> Result<T>,
        save: impl FnOnce(&dyn RunStore, &T, f64) -> Result<()>,
    ) -> Result<T> {
        if self.plan.is_some() {
            anyhow::bail!("a study in planning mode lists its {what} before making any");
        }
        if let Some(store) = &self.store {
            if let Some(r) = load(store.as_ref())? {
                return Ok(r);
            }
        }
        let start = Instant::now();
        let r = make()?;
        if let Some(store) = &self.store {
            save(store.as_ref(), &r, start.elapsed().as_secs_f64())?;
        }
        Ok(r)
    }

    /// The result of running `inputs` on `cfg` under `policy`: the stored one when there is
    /// one, else simulated and stored.
    pub fn sim(
        &self,
        cfg: &SystemConfig,
        policy: &str,
        inputs: &dyn Inputs,
        opts: &SimOptions,
    ) -> Result<SimResult> {
        let run = TimedRun {
            cfg,
            policy,
            inputs,
            opts,
        };
        self.kept(
            "timed runs",
            |s| s.load(&run),
            || sim_policy(cfg, policy, inputs, opts),
            |s, r, _| s.save(&run, r),
        )
    }

    /// The result of the functional run of `inputs` on `cfg` under `policy`: the stored one
    /// when there is one, else simulated and stored.
    pub fn run(
        &self,
        cfg: &SystemConfig,
        policy: &str,
        inputs: &dyn Inputs,
        opts: &RunOptions,
    ) -> Result<RunResult> {
        let run = FunctionalRun {
            cfg,
            policy,
            inputs,
            opts,
        };
        self.kept(
            "functional runs",
            |s| s.load_functional(&run),
            || run_policy(cfg, policy, inputs, opts),
            |s, r, _| s.save_functional(&run, r),
        )
    }

    /// The replay `run`: the stored result when there is one, else replayed (on the LLC
    /// stream `stream` makes or finds) and stored.
    pub fn replay(
        &self,
        run: &ReplayRun<'_>,
        stream: impl FnOnce() -> Result<PathBuf>,
    ) -> Result<Replayed> {
        self.kept(
            "replays",
            |s| s.load_replay(run),
            || replay::replay(&stream()?, run.cfg, run.policy, run.consumption),
            |s, r, seconds| s.save_replay(run, r, seconds),
        )
    }

    /// The GPU L1 `run`: the stored result when there is one, else run and stored.
    pub fn gpu_l1(&self, run: &GpuL1Run<'_>) -> Result<apusim_gpu::RunResult> {
        self.kept(
            "GPU L1 runs",
            |s| s.load_gpu_l1(run),
            || gpu_l1::run(run),
            |s, r, seconds| s.save_gpu_l1(run, r, seconds),
        )
    }
}
