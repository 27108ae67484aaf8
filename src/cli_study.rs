//! `apusim study NAME`: the papers' LLC studies, one command each (crate `apusim-experiments`).
//! Prints one table per metric, writes the long-format CSV/JSON and the figure when asked;
//! `apusim plot` redraws a figure from such a CSV.

use anyhow::{anyhow, bail, Result};
use apusim_experiments::runs::{Planned, Runs};
use apusim_experiments::studies::{self, OptionKind, OptionSpec, OptionValue, Study, StudyArgs};
use apusim_experiments::StudyOutput;
use apusim_sweep::plot::{self, study};
use apusim_sweep::study_runs;
use apusim_workloads::mixes::Frames;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One `apusim study NAME` command line: the registered study, the options of its family it
/// was given, and the options every study takes. Its subcommands are built from
/// [`studies::STUDIES`], one per study, with the study's help line and its family's options.
pub struct StudyCommand {
    study: &'static Study,
    given: Vec<(String, OptionValue)>,
    common: CommonArgs,
}

impl clap::Subcommand for StudyCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        // An unknown name reaches `from_arg_matches`, which names the nearest study.
        studies::STUDIES
            .iter()
            .fold(cmd.allow_external_subcommands(true), |cmd, s| {
                cmd.subcommand(study_command(s))
            })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        studies::get(name).is_some()
    }
}

/// The subcommand of `s`: its family's options, then the common ones.
fn study_command(s: &Study) -> clap::Command {
    let cmd = s
        .options()
        .iter()
        .fold(clap::Command::new(s.name), |cmd, o| cmd.arg(option_arg(o)));
    // After the common arguments, whose own description would stand in for the study's.
    CommonArgs::augment_args(cmd).about(s.description)
}

/// The command-line argument `--NAME` of a study option.
fn option_arg(o: &OptionSpec) -> Arg {
    let mut a = Arg::new(o.name).long(o.name);
    if !o.help.is_empty() {
        a = a.help(o.help);
    }
    a = match o.kind {
        OptionKind::Int { min, max } => a
            .value_name(o.value_name)
            .action(ArgAction::Set)
            .value_parser(crate::whole_number(min..=max)),
        OptionKind::List => a
            .value_name(o.value_name)
            .action(ArgAction::Append)
            .value_delimiter(','),
        OptionKind::Flag => a.action(ArgAction::SetTrue),
        OptionKind::Path => a
            .value_name(o.value_name)
            .action(ArgAction::Set)
            .value_parser(crate::writable_output),
        OptionKind::Frames => a
            .value_name(o.value_name)
            .action(ArgAction::Set)
            .value_parser(crate::args::frames_arg),
    };
    match o.default {
        Some(d) => a.default_value(d),
        None => a,
    }
}

impl FromArgMatches for StudyCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = m.subcommand() else {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::MissingSubcommand,
                "a study name is required",
            ));
        };
        let study = studies::find(name).map_err(|e| {
            clap::Error::raw(clap::error::ErrorKind::InvalidSubcommand, e.to_string())
        })?;
        let mut given = Vec::new();
        for o in study.options() {
            let v = match o.kind {
                OptionKind::Int { .. } => sub.get_one::<u64>(o.name).map(|v| OptionValue::Int(*v)),
                OptionKind::List => sub
                    .get_many::<String>(o.name)
                    .map(|v| OptionValue::List(v.cloned().collect())),
                OptionKind::Flag => Some(OptionValue::Flag(sub.get_flag(o.name))),
                OptionKind::Path => sub
                    .get_one::<PathBuf>(o.name)
                    .map(|p| OptionValue::Path(p.clone())),
                OptionKind::Frames => sub
                    .get_one::<Frames>(o.name)
                    .map(|f| OptionValue::Frames(*f)),
            };
            if let Some(v) = v {
                given.push((o.name.to_string(), v));
            }
        }
        Ok(StudyCommand {
            study,
            given,
            common: CommonArgs::from_arg_matches(sub)?,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Where traces are cached and results go, for every study.
#[derive(Args)]
pub struct CommonArgs {
    #[arg(long, default_value_t = studies::DEFAULT_SEED)]
    seed: u64,
    /// Override a key of the study's preset: a system of `apusim presets` (`gspc`, `4c1g`,
    /// ...; the title says which), or for bypass-fig1 to bypass-nw the GPU of `apusim gpu-l1
    /// presets table1`; e.g. `--set llc.cpu_inclusive=false`, `--set l1.pc.threshold=4`.
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
    /// Keep every run in this results database and read back the runs it already holds: a
    /// study stopped halfway resumes where it stopped, and a study whose runs a sweep of its
    /// `--print-spec` made simulates nothing.
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Print the study's runs as a sweep spec (TOML) and run nothing: `apusim sweep` of it
    /// (on every core, or `--slurm`) then `apusim study ... --db` gives the study.
    #[arg(long, conflicts_with = "db")]
    print_spec: bool,
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
        studies::cache_dir(self.cache_dir.clone(), self.no_cache)
    }
}

/// Run the study the command line names; print its tables and write the outputs asked for.
pub fn run(c: StudyCommand) -> Result<()> {
    let mut args = StudyArgs {
        seed: c.common.seed,
        overrides: c.common.set.clone(),
        cache: c.common.cache(),
        given: c.given,
        runs: Runs::default(),
    };
    let study = c.study;
    if c.common.print_spec {
        return print_spec(study, args, c.common.threads);
    }
    let stored = match &c.common.db {
        Some(path) => Some((study_runs::attach(study, &mut args, path)?, path)),
        None => None,
    };
    let out = crate::in_pool(c.common.threads, || study.run(&args));
    if let Some((s, path)) = &stored {
        eprintln!(
            "{} of the study's runs read from {}, {} simulated and recorded there",
            s.read(),
            path.display(),
            s.recorded()
        );
    }
    let out = out?;
    print!("{}", out.tables());
    write(&out, &c.common)
}

/// `--print-spec`: the study in planning mode; its runs as a sweep spec on stdout.
fn print_spec(study: &Study, mut args: StudyArgs, threads: Option<usize>) -> Result<()> {
    let list = Arc::new(Mutex::new(Vec::new()));
    args.runs = Runs::planner(list.clone());
    match crate::in_pool(threads, || study.run(&args)) {
        Err(e) if e.downcast_ref::<Planned>().is_some() => {}
        Err(e) => return Err(e.context(format!("{}: --print-spec", study.name))),
        Ok(_) => bail!(
            "{}: --print-spec: the study ran without planning its runs",
            study.name
        ),
    }
    let runs = list.lock().map_err(|_| anyhow!("the plan's lock"))?;
    print!("{}", study_runs::spec_of(study.name, &runs)?);
    Ok(())
}

/// The study's CSV, JSON and figure, committed together. A figure that cannot be drawn is
/// reported after the CSV and JSON are committed, so that it loses no results (`apusim plot`
/// draws it again from the CSV).
fn write(out: &StudyOutput, c: &CommonArgs) -> Result<()> {
    let mut staged = crate::stage_outputs(&c.output, || out.to_json(), || out.to_csv())?;
    let mut drawing = Ok(());
    if let Some(path) = &c.plot.plot {
        let figure = study::figure(out, c.plot.plot_metric.as_deref()).and_then(|fig| {
            let format = plot::Format::of(path).map_err(anyhow::Error::msg)?;
            plot::render(&fig, format)
        });
        match figure {
            Ok(bytes) => staged.stage(path, &bytes)?,
            Err(e) => drawing = Err(e.context(format!("--plot {}", path.display()))),
        }
    }
    crate::commit_outputs(staged)?;
    drawing
}
