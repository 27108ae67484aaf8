//! `apusim study NAME`: the papers' LLC studies, one command each (crate `apusim-experiments`).
//! Prints one table per metric, writes the long-format CSV/JSON and the figure when asked;
//! `apusim plot` redraws a figure from such a CSV.

use anyhow::{Context, Result};
use apusim_experiments::{
    bypass_perf, crit_ident, crit_perf, crit_sched, drp, drp_perf, gspc, gspc_perf, jobs, tap_char,
    tap_perf, StudyOutput,
};
use apusim_sweep::plot::{self, study};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum StudyCommand {
    /// gspc Fig. 11: GSPZTC's LLC misses for t = 2, 4, 8 relative to t = 16.
    GspcFig11(GspcArgs),
    /// gspc Fig. 12: LLC misses of NRU, SHiP-mem, GS-DRRIP, GSPZTC, GSPZTC+TSE, GSPC,
    /// GSPC+UCD and DRRIP+UCD normalized to 2-bit DRRIP.
    GspcFig12(GspcArgs),
    /// gspc Fig. 13: texture hit rate, render-target -> texture consumption, render-target
    /// and Z hit rates per policy.
    GspcFig13(GspcArgs),
    /// gspc Fig. 14: iso-overhead policies (LRU, 4-bit DRRIP, 4-bit GS-DRRIP, GSPC)
    /// normalized to 2-bit DRRIP.
    GspcFig14(GspcArgs),
    /// gspc Fig. 15 (timed): frame rate of NRU, GS-DRRIP and GSPC relative to DRRIP, 8 MB
    /// 16-way LLC.
    GspcFig15(GspcTimedArgs),
    /// gspc Fig. 16 (timed): the same on a 16 MB 16-way LLC.
    GspcFig16(GspcTimedArgs),
    /// gspc Fig. 17 (timed): NRU and GSPC relative to DRRIP with DDR3-1867 10-10-10, and on
    /// a GPU of 512 thread contexts.
    GspcFig17(GspcTimedArgs),
    /// drp Fig. 13: per-mix LLC read misses of DRP (CPU and GPU parts) normalized to the
    /// baseline.
    DrpFig13(DrpArgs),
    /// drp Fig. 14: average normalized LLC read misses of the baseline, SHiP-hybrid and DRP's
    /// sub-policy ablation per configuration (1C1G, 2C1G, 4C1G).
    DrpFig14(DrpArgs),
    /// drp Fig. 1 (timed): speedup of standalone over heterogeneous execution, CPU and GPU,
    /// per mix (alone runs cached).
    DrpFig1(TimedArgs),
    /// drp Fig. 3 (timed): frame-rate speedup with color, +texture, +depth, +blitter and all
    /// GPU streams ideal, on the 1C1G rendering mixes.
    DrpFig3(TimedArgs),
    /// drp Table 4 (timed): GPU speedup of the CUDA mixes with an ideal LLC for the GPU.
    DrpTable4(TimedArgs),
    /// drp Fig. 4 (timed): average CPU and GPU speedup with 25-100% random GPU read-miss
    /// bypass.
    DrpFig4(TimedArgs),
    /// drp Fig. 11 (timed): average CPU and GPU speedup of SHiP-hybrid and DRP.
    DrpFig11(TimedArgs),
    /// drp Fig. 12 (timed): DRP's CPU and GPU speedup per mix.
    DrpFig12(TimedArgs),
    /// drp Fig. 15 (timed): average speedup of HeLM and DRP, all mixes and CUDA mixes.
    DrpFig15(TimedArgs),
    /// gpu-access-criticality Fig. 2 (timed): the GPU's DRAM reads by stream per 3D title.
    CritFig2(TimedArgs),
    /// gpu-access-criticality Fig. 3 (timed): frame-rate speedup with one stream ideal.
    CritFig3(TimedArgs),
    /// gpu-access-criticality Fig. 8 (timed): frame-rate gain with the critical, or the
    /// non-critical, GPU accesses ideal.
    CritFig8(TimedArgs),
    /// gpu-access-criticality Fig. 9 (timed): the GPU's accesses by stream, critical and not.
    CritFig9(TimedArgs),
    /// gpu-access-criticality Fig. 10 (timed): the frame-rate estimation error per title.
    CritFig10(TimedArgs),
    /// gpu-access-criticality Fig. 11 (timed): GPU-favoring, IM-LLC, IM-SCHED and IM DRAM
    /// scheduling: frame rate and CPU weighted speedup over FR-FCFS.
    CritFig11(TimedArgs),
    /// gpu-access-criticality Fig. 12 (timed): quarters of the critical set, and random
    /// marking at each stream's critical share, under IM.
    CritFig12(TimedArgs),
    /// gpu-access-criticality Fig. 13 (timed): SMS-0.9, SMS-0, DynPrio, DASH, HeLM and IM.
    CritFig13(TimedArgs),
    /// gpu-access-criticality Fig. 14 (timed): IM with an 8 MB LLC.
    CritFig14(TimedArgs),
    /// gpu-access-criticality Fig. 15 (timed): SMS-0.9, SMS-0, HeLM and IM on the CUDA mixes.
    CritFig15(TimedArgs),
    /// gpu-access-criticality Fig. 4 (timed): sets of streams ideal together against the
    /// sum of their individual speedups.
    CritFig4(TimedArgs),
    /// adaptive-gpu-l1-bypassing Fig. 2 (timed): speedup of 32 to 256 KB L1 data caches
    /// over 16 KB, each Table 2 kernel alone on preset `bypass` (`--mixes` names kernels).
    BypassFig2(TimedArgs),
    /// adaptive-gpu-l1-bypassing Figs. 8 and 9 (timed): speedup and L1 misses of the
    /// PC-based and counter-based bypass predictors and a 32 KB L1, and the L1s' static
    /// energy from run time (Table 3).
    BypassFig9(TimedArgs),
    /// adaptive-gpu-l1-bypassing Fig. 10 (timed): each kernel's L1 hit rate on the baseline.
    BypassFig10(TimedArgs),
    /// adaptive-gpu-l1-bypassing Fig. 12 (timed): execution time of nw and nw-nospm with the
    /// PC-based predictor and 32 and 64 KB L1s, relative to nw on the baseline.
    BypassFig12(TimedArgs),
    /// tap Figs. 2 and 3 (timed): CPI and LLC MPKI of each application alone with 1 to 32
    /// LLC ways at 4096 sets, and its type A-E (`--mixes` names GPGPU or CPU kernels;
    /// default: every GPGPU kernel).
    TapFig2(TimedArgs),
    /// tap Fig. 6 (timed): UCP and TAP-UCP over LRU on 1-CPU workloads per GPGPU type.
    TapFig6(TimedArgs),
    /// tap Fig. 7 (timed): RRIP and TAP-RRIP over LRU on 1-CPU workloads per GPGPU type.
    TapFig7(TimedArgs),
    /// tap Fig. 8 (timed): TAP and TAP-S mechanisms over LRU on Stream-CPU workloads.
    TapFig8(TimedArgs),
    /// tap Fig. 9 (timed): UCP, TAP-UCP, RRIP and TAP-RRIP with two and four CPU
    /// applications.
    TapFig9(TimedArgs),
    /// tap Fig. 10 (timed): static partitioning, TAP-UCP and TAP-RRIP over LRU.
    TapFig10(TimedArgs),
    /// tap Fig. 11 (timed): UCP, TAP-UCP, RRIP and TAP-RRIP at other LLC sizes and
    /// associativities.
    TapFig11(TimedArgs),
    /// tap Fig. 12 (timed): TADIP, PIPP, TC, UCP, RRIP, TAP-UCP and TAP-RRIP over LRU.
    TapFig12(TimedArgs),
    /// tap Table 1 (timed): the LLC share of the CPU and the GPGPU application under LRU,
    /// UCP, RRIP and TC, and which one each policy favours, per GPGPU type.
    TapTable1(TimedArgs),
}

/// Where traces are cached and results go, for every study.
#[derive(Args)]
pub struct CommonArgs {
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Override a key of the study's system preset (`gspc` or `4c1g`), e.g.
    /// `--set llc.cpu_inclusive=false`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Worker threads, 1 to 1024 (default: every core).
    #[arg(long, value_parser = crate::thread_count)]
    threads: Option<usize>,
    /// Trace cache directory (default: as `apusim run --mix`).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Keep generated traces only for the duration of the study.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
    /// `--csv` (long format: study,config,workload,policy,metric,value) and `--json`.
    #[command(flatten)]
    output: crate::OutputArgs,
    #[command(flatten)]
    plot: PlotArgs,
}

/// The figure of a study.
#[derive(Args)]
pub struct PlotArgs {
    /// Draw the paper's figure type into this file, SVG or PNG by the extension: grouped
    /// bars normalized to the baseline with the geometric mean, per-mix sorted curves,
    /// lines over a swept parameter or stacked bars (see docs/figures/).
    #[arg(long, value_name = "FILE.svg|FILE.png", value_parser = plot_output)]
    plot: Option<PathBuf>,
    /// Plot only this metric (default: every metric of the study, one panel each, stacked).
    #[arg(long, value_name = "METRIC", requires = "plot")]
    plot_metric: Option<String>,
}

/// A plot file: writable (as other outputs) and named `.svg` or `.png`, checked when the
/// command line is read.
pub fn plot_output(s: &str) -> Result<PathBuf, String> {
    let path = crate::writable_output(s)?;
    plot::Format::of(&path)?;
    Ok(path)
}

/// `apusim plot`: a study's figure from its saved long CSV, without running it again.
#[derive(Args)]
pub struct PlotCsvArgs {
    /// The long CSV of `apusim study ... --csv` (study,config,workload,policy,metric,value).
    csv: PathBuf,
    /// The figure file, SVG or PNG by the extension.
    #[arg(short, long, value_name = "FILE.svg|FILE.png", value_parser = plot_output)]
    output: PathBuf,
    /// Plot only this metric (default: every metric, one panel each, stacked).
    #[arg(long)]
    metric: Option<String>,
}

pub fn plot_csv(a: PlotCsvArgs) -> Result<()> {
    let out = study::read_csv(&a.csv)?;
    let fig = study::figure(&out, a.metric.as_deref())?;
    plot::write_figure(&a.output, &fig)?;
    eprintln!("wrote {}", a.output.display());
    Ok(())
}

impl CommonArgs {
    fn cache(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            self.cache_dir.clone().or_else(jobs::default_cache_dir)
        }
    }
}

/// The rendered scenes of the gspc studies.
#[derive(Args)]
pub struct SceneArgs {
    /// Built-in scenes (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "courtyard,deferred,lake")]
    scenes: Vec<String>,
    #[arg(long, default_value_t = 1280)]
    width: u32,
    #[arg(long, default_value_t = 1024)]
    height: u32,
}

#[derive(Args)]
pub struct GspcArgs {
    #[command(flatten)]
    scene: SceneArgs,
    /// Frames rendered per scene.
    #[arg(long, default_value_t = 3)]
    frames: u32,
    /// LLC capacities, 16-way, 64-byte lines (comma-separated).
    #[arg(long = "llc", value_delimiter = ',', default_value = "8M,16M")]
    llc_sizes: Vec<String>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct GspcTimedArgs {
    #[command(flatten)]
    scene: SceneArgs,
    /// Frames rendered per scene (timed: the frame rate is over all of them).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct DrpArgs {
    /// Mixes (comma-separated; `S`, `D` and `Q` stand for S1-S18, D1-D18, Q1-Q18).
    #[arg(long, value_delimiter = ',', default_value = "S,D,Q")]
    mixes: Vec<String>,
    /// Workload scale, 1 to 1000 (as `apusim run --mix --scale`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=crate::MAX_SCALE))]
    scale: u64,
    /// Stop each run after this many trace accesses.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    limit: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct TimedArgs {
    /// Mixes (comma-separated; `S`, `D` and `Q` stand for S1-S18, D1-D18, Q1-Q18; default:
    /// the figure's own, e.g. S1-S14 for drp Fig. 3, S15-S18 for drp Table 4, H1-H14,
    /// L1-L14 and HL1-HL14 for the crit figures).
    #[arg(long, value_delimiter = ',')]
    mixes: Option<Vec<String>>,
    /// Workload scale, 1 to 1000 (as `apusim sim --mix --scale`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=crate::MAX_SCALE))]
    scale: u64,
    /// Instructions each core retires before statistics start.
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Instructions each core retires after the warm-up (default: to the end of its trace;
    /// 200000 for crit-fig8 to crit-fig15).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    instructions: Option<u64>,
    /// A CI-sized check: only the figure's first mix (unless --mixes is given) and 20000
    /// instructions per core (unless --instructions is given).
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// `S`, `D`, `Q` expand to their eighteen mixes; other names pass through.
fn expand_mixes(list: &[String]) -> Vec<String> {
    list.iter()
        .flat_map(|m| match m.as_str() {
            "S" | "D" | "Q" => (1..=18).map(|n| format!("{m}{n}")).collect(),
            _ => vec![m.clone()],
        })
        .collect()
}

pub fn run(c: StudyCommand) -> Result<()> {
    let (out, common) = match c {
        StudyCommand::GspcFig11(a) => (gspc_run(gspc::Figure::Fig11, &a)?, a.common),
        StudyCommand::GspcFig12(a) => (gspc_run(gspc::Figure::Fig12, &a)?, a.common),
        StudyCommand::GspcFig13(a) => (gspc_run(gspc::Figure::Fig13, &a)?, a.common),
        StudyCommand::GspcFig14(a) => (gspc_run(gspc::Figure::Fig14, &a)?, a.common),
        StudyCommand::GspcFig15(a) => (gspc_timed(gspc_perf::Figure::Fig15, &a)?, a.common),
        StudyCommand::GspcFig16(a) => (gspc_timed(gspc_perf::Figure::Fig16, &a)?, a.common),
        StudyCommand::GspcFig17(a) => (gspc_timed(gspc_perf::Figure::Fig17, &a)?, a.common),
        StudyCommand::DrpFig13(a) => (drp_run(drp::Figure::Fig13, &a)?, a.common),
        StudyCommand::DrpFig14(a) => (drp_run(drp::Figure::Fig14, &a)?, a.common),
        StudyCommand::DrpFig1(a) => (perf_run(drp_perf::Figure::Fig1, &a)?, a.common),
        StudyCommand::DrpFig3(a) => (perf_run(drp_perf::Figure::Fig3, &a)?, a.common),
        StudyCommand::DrpTable4(a) => (perf_run(drp_perf::Figure::Table4, &a)?, a.common),
        StudyCommand::DrpFig4(a) => (perf_run(drp_perf::Figure::Fig4, &a)?, a.common),
        StudyCommand::DrpFig11(a) => (perf_run(drp_perf::Figure::Fig11, &a)?, a.common),
        StudyCommand::DrpFig12(a) => (perf_run(drp_perf::Figure::Fig12, &a)?, a.common),
        StudyCommand::DrpFig15(a) => (perf_run(drp_perf::Figure::Fig15, &a)?, a.common),
        StudyCommand::CritFig2(a) => (crit_run(crit_perf::Figure::Fig2, &a)?, a.common),
        StudyCommand::CritFig3(a) => (crit_run(crit_perf::Figure::Fig3, &a)?, a.common),
        StudyCommand::CritFig4(a) => (crit_run(crit_perf::Figure::Fig4, &a)?, a.common),
        StudyCommand::CritFig8(a) => (ident_run(crit_ident::Figure::Fig8, &a)?, a.common),
        StudyCommand::CritFig9(a) => (ident_run(crit_ident::Figure::Fig9, &a)?, a.common),
        StudyCommand::CritFig10(a) => (ident_run(crit_ident::Figure::Fig10, &a)?, a.common),
        StudyCommand::CritFig11(a) => (sched_run(crit_sched::Figure::Fig11, &a)?, a.common),
        StudyCommand::CritFig12(a) => (sched_run(crit_sched::Figure::Fig12, &a)?, a.common),
        StudyCommand::CritFig13(a) => (sched_run(crit_sched::Figure::Fig13, &a)?, a.common),
        StudyCommand::CritFig14(a) => (sched_run(crit_sched::Figure::Fig14, &a)?, a.common),
        StudyCommand::CritFig15(a) => (sched_run(crit_sched::Figure::Fig15, &a)?, a.common),
        StudyCommand::BypassFig2(a) => (bypass_run(bypass_perf::Figure::Fig2, &a)?, a.common),
        StudyCommand::BypassFig9(a) => (bypass_run(bypass_perf::Figure::Fig9, &a)?, a.common),
        StudyCommand::BypassFig10(a) => (bypass_run(bypass_perf::Figure::Fig10, &a)?, a.common),
        StudyCommand::BypassFig12(a) => (bypass_run(bypass_perf::Figure::Fig12, &a)?, a.common),
        StudyCommand::TapFig2(a) => (tap_char_run(&a)?, a.common),
        StudyCommand::TapFig6(a) => (tap_run(tap_perf::Figure::Fig6, &a)?, a.common),
        StudyCommand::TapFig7(a) => (tap_run(tap_perf::Figure::Fig7, &a)?, a.common),
        StudyCommand::TapFig8(a) => (tap_run(tap_perf::Figure::Fig8, &a)?, a.common),
        StudyCommand::TapFig9(a) => (tap_run(tap_perf::Figure::Fig9, &a)?, a.common),
        StudyCommand::TapFig10(a) => (tap_run(tap_perf::Figure::Fig10, &a)?, a.common),
        StudyCommand::TapFig11(a) => (tap_run(tap_perf::Figure::Fig11, &a)?, a.common),
        StudyCommand::TapFig12(a) => (tap_run(tap_perf::Figure::Fig12, &a)?, a.common),
        StudyCommand::TapTable1(a) => (tap_run(tap_perf::Figure::Table1, &a)?, a.common),
    };
    print!("{}", out.tables());
    write(&out, &common)
}

fn gspc_run(fig: gspc::Figure, a: &GspcArgs) -> Result<StudyOutput> {
    let o = gspc::Options {
        scenes: a.scene.scenes.clone(),
        width: a.scene.width,
        height: a.scene.height,
        frames: a.frames,
        seed: a.common.seed,
        llc_sizes: a.llc_sizes.clone(),
        overrides: a.common.set.clone(),
        cache: a.common.cache(),
    };
    crate::in_pool(a.common.threads, || gspc::run(fig, &o))
}

fn gspc_timed(fig: gspc_perf::Figure, a: &GspcTimedArgs) -> Result<StudyOutput> {
    let o = gspc_perf::Options {
        scenes: a.scene.scenes.clone(),
        width: a.scene.width,
        height: a.scene.height,
        frames: a.frames,
        seed: a.common.seed,
        overrides: a.common.set.clone(),
        cache: a.common.cache(),
    };
    crate::in_pool(a.common.threads, || gspc_perf::run(fig, &o))
}

fn drp_run(fig: drp::Figure, a: &DrpArgs) -> Result<StudyOutput> {
    let o = drp::Options {
        mixes: expand_mixes(&a.mixes),
        scale: a.scale.max(1),
        seed: a.common.seed,
        limit: a.limit,
        overrides: a.common.set.clone(),
        cache: a.common.cache(),
    };
    crate::in_pool(a.common.threads, || drp::run(fig, &o))
}

/// Instructions per core of a `--quick` study.
const QUICK_INSTRUCTIONS: u64 = 20_000;

impl TimedArgs {
    /// The options, with `--quick` narrowing the figure's `defaults` mixes to the first.
    fn options_for(&self, defaults: Vec<String>) -> drp_perf::Options {
        let mut o = self.options();
        if self.quick {
            if o.mixes.is_none() {
                o.mixes = Some(defaults.into_iter().take(1).collect());
            }
            o.instructions.get_or_insert(QUICK_INSTRUCTIONS);
        }
        o
    }

    fn options(&self) -> drp_perf::Options {
        drp_perf::Options {
            mixes: self.mixes.as_deref().map(expand_mixes),
            scale: self.scale,
            seed: self.common.seed,
            warmup: self.warmup,
            instructions: self.instructions,
            overrides: self.common.set.clone(),
            cache: self.common.cache(),
        }
    }
}

fn crit_run(fig: crit_perf::Figure, a: &TimedArgs) -> Result<StudyOutput> {
    let o = a.options_for(fig.default_mixes());
    crate::in_pool(a.common.threads, || crit_perf::run(fig, &o))
}

fn sched_run(fig: crit_sched::Figure, a: &TimedArgs) -> Result<StudyOutput> {
    let o = a.options_for(fig.default_mixes());
    crate::in_pool(a.common.threads, || crit_sched::run(fig, &o))
}

fn ident_run(fig: crit_ident::Figure, a: &TimedArgs) -> Result<StudyOutput> {
    let o = a.options_for(fig.default_mixes());
    crate::in_pool(a.common.threads, || crit_ident::run(fig, &o))
}

fn tap_run(fig: tap_perf::Figure, a: &TimedArgs) -> Result<StudyOutput> {
    let o = a.options_for(fig.default_mixes());
    crate::in_pool(a.common.threads, || tap_perf::run(fig, &o))
}

fn tap_char_run(a: &TimedArgs) -> Result<StudyOutput> {
    let o = a.options_for(tap_char::default_workloads());
    crate::in_pool(a.common.threads, || tap_char::run(&o))
}

/// The bypass figures run each kernel to its end: `--quick` keeps the figure's quick
/// kernels and sets no instruction limit.
fn bypass_run(fig: bypass_perf::Figure, a: &TimedArgs) -> Result<StudyOutput> {
    let mut o = a.options();
    if a.quick && o.mixes.is_none() {
        o.mixes = Some(fig.quick_kernels());
    }
    crate::in_pool(a.common.threads, || bypass_perf::run(fig, &o))
}

fn perf_run(fig: drp_perf::Figure, a: &TimedArgs) -> Result<StudyOutput> {
    let o = a.options_for(fig.default_mixes());
    crate::in_pool(a.common.threads, || drp_perf::run(fig, &o))
}

fn write(out: &StudyOutput, c: &CommonArgs) -> Result<()> {
    crate::write_outputs(&c.output, || out.to_json(), || out.to_csv())?;
    if let Some(path) = &c.plot.plot {
        // After the CSV and JSON, so that a figure that cannot be drawn loses no results.
        study::figure(out, c.plot.plot_metric.as_deref())
            .and_then(|fig| plot::write_figure(path, &fig))
            .with_context(|| format!("--plot {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
