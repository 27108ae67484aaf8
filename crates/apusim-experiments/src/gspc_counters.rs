//! GSPC's render-target rule at work (gspc-graphics-stream-llc.txt §3, Table 5), against
//! GSPZTC+TSE, on the LLC streams of `apusim study gspc-fig11..14`.
//!
//! GSPZTC+TSE inserts every render-target block at RRPV 0; GSPC inserts it at the RRPV its
//! bank's PROD and CONS select (`PROD > 16·CONS ? 3 : PROD > 8·CONS ? 2 : 0`), PROD and CONS
//! counting the render-target fills and their consumptions by the texture sampler in the
//! bank's SRRIP sample sets. For each scene and LLC size this study replays the scene's LLC
//! stream (the one [`crate::gspc`] replays) under both policies and reports, from the
//! policies' statistics ([`apusim_cache::policies::gspc`], Statistics):
//!
//! - `rt_fill_rrpv3_share`, `rt_fill_rrpv2_share`, `rt_fill_rrpv0_share`: the non-sample
//!   render-target fills by the RRPV they were inserted at;
//! - `rt_consumed_share`: the render-target blocks (lines entering state 11) that a texture
//!   read consumed from the LLC; `rt_evicted_unconsumed_share`: those evicted before any was;
//!   and the counts `rt_produced`, `rt_consumed`, `rt_evicted_unconsumed`;
//! - `misses_vs_tse`: the policy's LLC misses over GSPZTC+TSE's.
//!
//! With a counters file ([`Options::counters`]) it also records, for every scene and LLC size,
//! every [`Options::every`] LLC line references and once at the end of the stream, each
//! bank's PROD and CONS under GSPC and the insertion RRPV ("class") they select, in the long
//! CSV `scene,size,access,bank,prod,cons,class`. The recording loop is a separate
//! instantiation of the replay: without a file, the replay does no per-access work for it.
//!
//! The numbers come from replays of the scene's LLC stream under each policy (`gspztc-tse`,
//! `gspc`), made through [`crate::gspc::Options::runs`] as the gspc figures' are: `--db` keeps
//! them (gspc-fig12's replays of the same policies and sizes are the same runs) and
//! `--print-spec` lists them as a sweep's `replay` points. The series is not a run's result:
//! with a counters file, each GSPC replay is made once more by a recording loop, `apusim
//! oracle`'s loop ([`apusim_oracle::sim::drive`]) on the engine cache itself (the series reads
//! the policy between accesses), whose line references and misses are those of the stored
//! replays (a test checks it).

use crate::gspc::{planned, replay_config, replay_set, SceneStreams};
use crate::replay::Replayed;
use crate::runs::{PlannedMode, ReplayRun};
use crate::{oracle_setup, with_means, Mean, Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_cache::policies::gspc::{Gsp, RtStats, CONS, GSPC, PROD};
use apusim_cache::{Cache, CacheError, Outcome, Policy, PolicyStat, WritePolicy};
use apusim_oracle::{NoObserver, OracleError, RefSim};
use apusim_sim::SystemConfig;
use apusim_trace::{Access, AccessSource};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The study's name.
pub const NAME: &str = "gspc-counters";

/// What to run the study on.
#[derive(Clone, Debug)]
pub struct Options {
    /// The scenes, frames, LLC sizes, overrides and trace cache, as for the gspc figures.
    pub gspc: crate::gspc::Options,
    /// LLC line references between two records of the counters (at least 1).
    pub every: u64,
    /// Where to write the counters' series; `None`: no series is recorded.
    pub counters: Option<PathBuf>,
}

/// One record of the series: a bank's counters after `access` line references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub access: u64,
    pub bank: usize,
    pub prod: u8,
    pub cons: u8,
    /// The RRPV a non-sample render-target fill of the bank gets with these counters.
    pub class: u8,
}

/// What one replay gives.
#[derive(Clone, Debug)]
pub struct Replay {
    /// LLC line references and those that missed.
    pub references: u64,
    pub misses: u64,
    pub rt: RtStats,
    /// The policy's named statistics at the end.
    pub stats: Vec<PolicyStat>,
    /// Each bank's `(PROD, CONS)` at the end.
    pub final_counters: Vec<(u8, u8)>,
    /// The series (empty unless asked for).
    pub series: Vec<Point>,
}

/// Replay `stream` under `Gsp<LEVEL>` in a 16-way `size` LLC of `preset`; with `every`,
/// record the counters every `every` line references and at the end.
pub fn replay<const LEVEL: u8>(
    stream: &Path,
    preset: &SystemConfig,
    size: &str,
    every: Option<u64>,
) -> Result<Replay> {
    let name = if LEVEL == GSPC { "gspc" } else { "gspztc-tse" };
    let mut cfg = preset.clone();
    cfg.llc.geometry = format!("{size},16,64");
    let (ocfg, mut ctx) = oracle_setup(&cfg)?;
    let g = ocfg.geometry;
    ctx.params = apusim_cache::policies::params_for(name, &ctx.params, ctx.gpu_write_rules);
    ctx.sets = g.sets() as usize;
    ctx.ways = g.ways as usize;
    ctx.line_bytes = g.line;
    let policy = Gsp::<LEVEL>::build(&ctx)?;
    let mut cache = Cache::new(g, WritePolicy::default(), ocfg.cpu_inclusive, policy)?;
    let mut src = apusim_oracle::open_apt(stream)?;
    let mut series = Vec::new();
    let what = || format!("{name} on {} at {size}", stream.display());
    let (references, misses) = match every {
        Some(0) => bail!("every must be at least 1"),
        Some(n) => drive::<LEVEL, true>(&mut cache, &mut *src, n, &mut series),
        None => drive::<LEVEL, false>(&mut cache, &mut *src, u64::MAX, &mut series),
    }
    .with_context(what)?;
    let p = cache.policy();
    Ok(Replay {
        references,
        misses,
        rt: *p.rt_stats(),
        stats: p.stats(),
        final_counters: (0..p.banks())
            .map(|b| (p.bank(b).c[PROD], p.bank(b).c[CONS]))
            .collect(),
        series,
    })
}

/// Every bank's counters after `access` references.
fn record<const LEVEL: u8>(p: &Gsp<LEVEL>, access: u64, series: &mut Vec<Point>) {
    series.extend((0..p.banks()).map(|bank| Point {
        access,
        bank,
        prod: p.bank(bank).c[PROD],
        cons: p.bank(bank).c[CONS],
        class: p.rt_insertion(bank),
    }));
}

/// The replay: `(references, misses)`. With `RECORD`, the counters go to `series` every
/// `every` references and after the last one.
fn drive<const LEVEL: u8, const RECORD: bool>(
    cache: &mut Cache<Gsp<LEVEL>>,
    src: &mut dyn AccessSource,
    every: u64,
    series: &mut Vec<Point>,
) -> Result<(u64, u64)> {
    let geometry = *cache.geometry();
    let mut sim = Recording::<LEVEL, RECORD> {
        cache,
        every,
        next: every,
        references: 0,
        misses: 0,
        series,
    };
    match apusim_oracle::sim::drive(&mut sim, NAME, geometry, None, src, &mut NoObserver) {
        Err(OracleError::EmptyTrace) => bail!("the LLC stream is empty"),
        r => r?,
    };
    if RECORD && sim.series.last().map(|p| p.access) != Some(sim.references) {
        record(sim.cache.policy(), sim.references, sim.series);
    }
    Ok((sim.references, sim.misses))
}

/// The engine cache as the oracle replay's simulator (next uses unused), counting line
/// references and misses and, with `RECORD`, recording the counters every `every`
/// references.
struct Recording<'a, const LEVEL: u8, const RECORD: bool> {
    cache: &'a mut Cache<Gsp<LEVEL>>,
    every: u64,
    /// The reference count of the next record.
    next: u64,
    references: u64,
    misses: u64,
    series: &'a mut Vec<Point>,
}

impl<const LEVEL: u8, const RECORD: bool> RefSim for Recording<'_, LEVEL, RECORD> {
    #[inline]
    fn access(&mut self, req: &Access, _: u64, _: u64) -> Result<Outcome, CacheError> {
        let o = self.cache.access(req)?;
        self.misses += u64::from(!o.is_hit());
        self.references += 1;
        if RECORD && self.references == self.next {
            record(self.cache.policy(), self.references, self.series);
            self.next = self.next.saturating_add(self.every);
        }
        Ok(o)
    }
    fn policy_stats(&self) -> Vec<PolicyStat> {
        self.cache.policy().stats()
    }
}

/// The policies compared, the base first: their labels and registry names.
const POLICIES: [(&str, &str); 2] = [("GSPZTC+TSE", "gspztc-tse"), ("GSPC", "gspc")];

/// Run the study.
pub fn run(o: &Options) -> Result<StudyOutput> {
    if o.every == 0 {
        bail!("{NAME}: every must be at least 1");
    }
    if let Some(path) = &o.counters {
        // Refuse an unwritable file before the replays, not after.
        apusim_trace::output::temp_beside(path)
            .with_context(|| format!("{NAME}: counters file {}", path.display()))?;
    }
    let g = &o.gspc;
    let streams = SceneStreams::new(NAME, g)?;
    let mut cases: Vec<(usize, &String, usize)> = Vec::new();
    for s in 0..g.scenes.len() {
        for z in &g.llc_sizes {
            cases.extend((0..POLICIES.len()).map(|p| (s, z, p)));
        }
    }
    g.runs
        .plan_as(PlannedMode::Replay { consumption: false }, || {
            cases
                .iter()
                .map(|&(s, size, p)| {
                    planned(g, &g.scenes[s], replay_set(g, size, None), POLICIES[p].1)
                })
                .collect()
        })?;
    let replays: Vec<Replayed> = crate::par_counted(&cases, "policy replays", |&(s, size, p)| {
        let cfg = replay_config(g, &replay_set(g, size, None))?;
        let run = ReplayRun {
            cfg: &cfg,
            policy: POLICIES[p].1,
            inputs: &streams.inputs[s],
            consumption: false,
        };
        g.runs
            .replay(&run, || streams.stream(s, &cfg))
            .with_context(|| format!("{} on scene {} at {size}", POLICIES[p].0, g.scenes[s]))
    })?;
    let mut records = Vec::new();
    for (pair, group) in replays
        .chunks(POLICIES.len())
        .zip(cases.chunks(POLICIES.len()))
    {
        let (s, size, _) = group[0];
        let base = pair[0].result.total.misses();
        for (r, (label, _)) in pair.iter().zip(POLICIES) {
            for (metric, value) in metrics(r, base) {
                records.push(Record::new(
                    &format!("{size}B"),
                    &g.scenes[s],
                    label,
                    metric,
                    value,
                ));
            }
        }
    }
    let mut csv = String::from("scene,size,access,bank,prod,cons,class\n");
    if o.counters.is_some() {
        // GSPC's replays once more, recording the counters between accesses.
        let series_cases: Vec<(usize, &String)> = cases
            .iter()
            .filter(|&&(_, _, p)| p == 1)
            .map(|&(s, size, _)| (s, size))
            .collect();
        let series: Vec<Vec<Point>> =
            crate::par_counted(&series_cases, "counter series", |&(s, size)| {
                let cfg = replay_config(g, &replay_set(g, size, None))?;
                let stream = streams.stream(s, &cfg)?;
                Ok(replay::<GSPC>(&stream, &cfg, size, Some(o.every))?.series)
            })?;
        for ((s, size), points) in series_cases.iter().zip(&series) {
            for p in points {
                let _ = writeln!(
                    csv,
                    "{},{size}B,{},{},{},{},{}",
                    g.scenes[*s], p.access, p.bank, p.prod, p.cons, p.class
                );
            }
        }
    }
    if let Some(path) = &o.counters {
        let mut out = apusim_trace::output::Outputs::new();
        out.stage(path, csv.as_bytes())?;
        out.commit()?;
    }
    Ok(StudyOutput {
        study: NAME.into(),
        title: format!(
            "GSPC's render-target insertion classes (gspc §3, Table 5) and what became of the \
             render-target blocks, against GSPZTC+TSE; scenes at {}x{}, {} frame(s), seed {}{}",
            g.width,
            g.height,
            g.frames,
            g.seed,
            crate::overrides_note(&g.overrides)
        ),
        paper: "gspc §3: GSPC fills render targets at RRPV 3 when the sampled consumption \
                probability CONS/PROD is below 1/16, at 2 below 1/8, else at 0; GSPZTC and \
                GSPZTC+TSE always at 0"
            .into(),
        records: with_means(records, Mean::Arithmetic),
    })
}

/// The numbers of one replay, from the policy's statistics (`rt_fills_rrpv3`, ...,
/// `rt_evicted_unconsumed`: [`RtStats`]; no render-target fill is inserted at RRPV 1);
/// `base` is GSPZTC+TSE's misses.
fn metrics(r: &Replayed, base: u64) -> Vec<(&'static str, f64)> {
    let stat = |name: &str| -> u64 {
        let found = r.result.policy_stats.iter().find(|(k, _)| k == name);
        found.map_or(0, |(_, v)| *v as u64)
    };
    let share = |n: u64, d: u64| {
        if d == 0 {
            f64::NAN
        } else {
            n as f64 / d as f64
        }
    };
    let at = [3, 2, 0].map(|rrpv| stat(&format!("rt_fills_rrpv{rrpv}")));
    let fills: u64 = at.iter().sum();
    let (produced, consumed) = (stat("rt_produced"), stat("rt_consumed"));
    let evicted = stat("rt_evicted_unconsumed");
    vec![
        ("misses_vs_tse", share(r.result.total.misses(), base)),
        ("rt_fill_rrpv3_share", share(at[0], fills)),
        ("rt_fill_rrpv2_share", share(at[1], fills)),
        ("rt_fill_rrpv0_share", share(at[2], fills)),
        ("rt_consumed_share", share(consumed, produced)),
        ("rt_evicted_unconsumed_share", share(evicted, produced)),
        ("rt_produced", produced as f64),
        ("rt_consumed", consumed as f64),
        ("rt_evicted_unconsumed", evicted as f64),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_cache::policies::gspc::GSPZTC_TSE;
    use apusim_oracle::OraclePolicy;

    fn small(scenes: &[&str], cache: Option<PathBuf>) -> crate::gspc::Options {
        crate::gspc::Options {
            scenes: scenes.iter().map(|s| s.to_string()).collect(),
            width: 160,
            height: 100,
            frames: 1,
            seed: 1,
            llc_sizes: vec!["256K".into()],
            overrides: Vec::new(),
            cache,
            runs: Default::default(),
        }
    }

    fn stat(r: &Replay, name: &str) -> f64 {
        r.stats.iter().find(|(k, _)| k == name).unwrap().1
    }

    /// The system of the study's replays at 256 KB and the scene's LLC stream behind it.
    fn stream(o: &crate::gspc::Options) -> (SystemConfig, PathBuf) {
        let streams = SceneStreams::new(NAME, o).unwrap();
        let cfg = replay_config(o, &replay_set(o, "256K", None)).unwrap();
        let path = streams.stream(0, &cfg).unwrap();
        // The stream outlives the temporary directory only when cached.
        assert!(o.cache.is_some());
        (cfg, path)
    }

    /// The replay takes the misses of the oracle's (the gspc figures'), records each bank
    /// every `every` references and at the end, ends at the policy's final counters, and
    /// records nothing when not asked.
    #[test]
    fn series_ends_at_the_final_counters_and_misses_match_the_oracle() {
        let dir = tempfile::tempdir().unwrap();
        let o = small(&["postfx"], Some(dir.path().to_path_buf()));
        let (preset, path) = stream(&o);
        let paths = [path];
        let every = 1000;
        let r = replay::<GSPC>(&paths[0], &preset, "256K", Some(every)).unwrap();
        let plain = replay::<GSPC>(&paths[0], &preset, "256K", None).unwrap();
        assert!(plain.series.is_empty());
        assert_eq!((plain.misses, plain.rt), (r.misses, r.rt));
        let banks = r.final_counters.len();
        assert_eq!(banks, 4, "preset gspc's LLC has 4 banks");
        let points = r.references.div_ceil(every) as usize;
        assert_eq!(r.series.len(), points * banks);
        assert_eq!(r.series[0].access, every);
        assert_eq!(r.series[banks].access, 2 * every);
        let last = &r.series[r.series.len() - banks..];
        for (b, p) in last.iter().enumerate() {
            assert_eq!((p.access, p.bank), (r.references, b));
            assert_eq!((p.prod, p.cons), r.final_counters[b]);
            let want = if p.prod as u32 > 16 * p.cons as u32 {
                3
            } else if p.prod as u32 > 8 * p.cons as u32 {
                2
            } else {
                0
            };
            assert_eq!(p.class, want);
        }
        // Some render targets were produced and the counters moved.
        assert!(r.rt.produced > 0 && r.series.iter().any(|p| p.prod > 0));
        // Produced = consumed + evicted unconsumed + still in state 11.
        assert_eq!(
            r.rt.produced,
            r.rt.consumed + r.rt.evicted_unconsumed + stat(&r, "rt_lines") as u64
        );
        // The same misses as the oracle replay of the gspc figures.
        let mut cfg = preset.clone();
        cfg.llc.geometry = "256K,16,64".into();
        let (ocfg, ctx) = oracle_setup(&cfg).unwrap();
        for (name, misses) in [
            ("gspc", r.misses),
            ("gspztc-tse", {
                replay::<GSPZTC_TSE>(&paths[0], &preset, "256K", None)
                    .unwrap()
                    .misses
            }),
        ] {
            let policy = OraclePolicy::parse(name).unwrap();
            let mut src = apusim_oracle::open_apt(&paths[0]).unwrap();
            let res = apusim_oracle::run(&policy, &ocfg, &ctx, None, &mut *src).unwrap();
            assert_eq!(res.total.misses(), misses, "{name}");
        }
        // The study's numbers come from the replays the gspc figures make: the same
        // render-target statistics as the recording loop's.
        let stored = crate::replay::replay(&paths[0], &cfg, "gspc", false).unwrap();
        let of = |name: &str| {
            let s = &stored.result.policy_stats;
            s.iter().find(|(k, _)| k == name).unwrap().1 as u64
        };
        assert_eq!(stored.result.total.misses(), r.misses);
        assert_eq!(
            [
                of("rt_fills_rrpv3"),
                of("rt_fills_rrpv2"),
                of("rt_fills_rrpv0")
            ],
            [r.rt.fills_at[3], r.rt.fills_at[2], r.rt.fills_at[0]]
        );
        assert_eq!(r.rt.fills_at[1], 0, "no render-target fill at RRPV 1");
        assert_eq!(
            (
                of("rt_produced"),
                of("rt_consumed"),
                of("rt_evicted_unconsumed")
            ),
            (r.rt.produced, r.rt.consumed, r.rt.evicted_unconsumed)
        );
        let e = replay::<GSPC>(&paths[0], &preset, "256K", Some(0)).unwrap_err();
        assert!(e.to_string().contains("every must be at least 1"), "{e}");
    }

    /// The study: shares in range, GSPZTC+TSE's fills all at RRPV 0, and the counters file's
    /// last rows per bank equal a replay's final counters; `every` 0 is refused by name.
    #[test]
    fn study_writes_the_series_and_refuses_every_zero() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("counters.csv");
        let gspc = small(&["postfx"], Some(dir.path().join("cache")));
        let o = Options {
            gspc: gspc.clone(),
            every: 5000,
            counters: Some(file.clone()),
        };
        let out = run(&o).unwrap();
        let get = |p: &str, m: &str| {
            out.records
                .iter()
                .find(|r| r.workload == "postfx" && r.policy == p && r.metric == m)
                .unwrap()
                .value
        };
        assert_eq!(get("GSPZTC+TSE", "rt_fill_rrpv0_share"), 1.0);
        assert_eq!(get("GSPZTC+TSE", "misses_vs_tse"), 1.0);
        let classes: f64 = [
            "rt_fill_rrpv3_share",
            "rt_fill_rrpv2_share",
            "rt_fill_rrpv0_share",
        ]
        .iter()
        .map(|m| get("GSPC", m))
        .sum();
        assert!((classes - 1.0).abs() < 1e-12, "{classes}");
        for r in &out.records {
            if r.metric.ends_with("_share") {
                assert!((0.0..=1.0).contains(&r.value), "{r:?}");
            }
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("scene,size,access,bank,prod,cons,class"));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert!(rows
            .iter()
            .all(|r| r.len() == 7 && r[0] == "postfx" && r[1] == "256KB"));
        let (preset, path) = stream(&gspc);
        let r = replay::<GSPC>(&path, &preset, "256K", None).unwrap();
        let last = &rows[rows.len() - 4..];
        for (b, row) in last.iter().enumerate() {
            assert_eq!(row[2], r.references.to_string());
            assert_eq!(row[3], b.to_string());
            let (prod, cons) = r.final_counters[b];
            assert_eq!((row[4], row[5]), (&*prod.to_string(), &*cons.to_string()));
        }
        let e = run(&Options {
            every: 0,
            ..o.clone()
        })
        .unwrap_err();
        assert!(e.to_string().contains("every must be at least 1"), "{e}");
        // Without a file, no series and the same records.
        let quiet = run(&Options {
            counters: None,
            ..o
        })
        .unwrap();
        assert_eq!(quiet.records.len(), out.records.len());
        for (a, b) in quiet.records.iter().zip(&out.records) {
            assert_eq!(a.value.to_bits(), b.value.to_bits(), "{a:?}");
        }
    }
}
