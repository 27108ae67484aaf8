//! The interference-mitigation (IM) policy of gpu-access-criticality §4.3: the GPU-favoring
//! policy with two components that give the CPU back what GPU-favoring takes, each switchable
//! for the Fig. 11 ablation (`im` has both, `im-sched` and `im-llc` one each; parameters
//! `sched` and `llc`).
//!
//! **Order.** Row hits first, then a priority class, then age, over the ready candidates that
//! FR-FCFS would allow (a precharge waits while its bank has pending hits) — GPU-favoring's
//! order, with more classes:
//!
//! | class | requests |
//! |---|---|
//! | 0 | every CPU request, at a decision where IM-SCHED's draw favours the CPU |
//! | 1 | critical GPU accesses; emergency-mode CPU sources (IM-LLC); all GPU accesses while [`SchedHints::gpu_all_priority`] |
//! | 2 | the other CPU requests |
//! | 3 | non-critical GPU accesses |
//!
//! "The CPU accesses are given higher priority than the non-critical GPU accesses except in
//! one situation": the GPGPU phases in which the system's phase detector asks for all GPU
//! accesses first ([`SchedHints::gpu_all_priority`]). With `cpu_first = false` the
//! non-critical GPU accesses join class 2 and go by age with the CPU's, as in GPU-favoring:
//! the paper calls IM-LLC's and IM-SCHED's effects over GPU-favoring additive, which fits
//! ablation bars without this rank (docs/results.md, crit Fig. 11).
//!
//! **IM-SCHED** "prioritizes CPU accesses over critical GPU accesses with a certain
//! probability". Execution is divided into equal intervals of `interval` DRAM cycles (the
//! paper does not give a length; the default 100,000 DRAM cycles matches the 100K-cycle
//! window of its GPGPU phase detection). During an interval the scheduler counts the CPU
//! requests served (column command issued) and the CPU reads *de-prioritized by a younger
//! critical GPU request*: when it issues a command of a critical GPU access `g`, every CPU
//! read older than `g` that was ready and allowed at that decision and that FR-FCFS would
//! have served before `g` (a row hit, or `g` is not one either) — so that it lost to `g`
//! only because `g` is critical — is marked, once in its life. At the end of the interval
//! the fraction marked / served, capped at `cap` (the paper's one half), becomes the
//! probability for the next interval (0 after an interval without CPU requests). At each
//! decision one uniform number is drawn, a pure function of (`seed`, commands issued so far)
//! — the same for every speculative `pick` until the next command issues, and the same in
//! every run; below the probability, every CPU request outranks the critical GPU accesses at
//! that decision. Writes are scheduled by the same classes; a CPU write is never marked (writes
//! wait for a drain, where no GPU read passes them).
//!
//! Two readings the text leaves open are parameters. `passed_in`: a CPU read is passed by
//! `g` anywhere in the channel (`channel`, the default: every ready read competes for the
//! command) or only in `g`'s bank (`bank`). `fraction_of`: the denominator is the CPU
//! requests served, reads and writes (`requests`, the default: the paper's "fraction of CPU
//! requests", "a given CPU access"), or the CPU reads only (`reads`). The paper observes that
//! the probability "exceeds half only in the GPGPU applications during 2–6% of all
//! intervals"; with `reads` a quarter of the intervals of the 3D mixes HL3 and HL9 exceed it
//! (docs/results.md, crit Fig. 11), with `requests` none or 2%.
//!
//! **IM-LLC** "schedules requests from emergency mode applications as often as critical GPU
//! accesses. The remaining accesses are assigned lower priority": emergency-mode CPU sources
//! ([`SchedHints::emergency`], which the system sets from its LLC miss-rate classification)
//! join the critical GPU accesses' class.

use super::intervals::interval_param;
use super::ranked::{
    fr_allowed, is_cpu, is_critical_gpu, next_hit_first, pick_hit_first, unit_draw,
};
use super::{Candidate, RowStatus, SchedContext, SchedHints, Scheduler};
use apusim_registry::{ParamKind, ParamSpec, Params};

/// Parameters of `im`, `im-sched` and `im-llc` (the entries differ in the defaults of `sched`
/// and `llc`).
const fn params(sched: &'static str, llc: &'static str) -> [ParamSpec; 8] {
    [
        ParamSpec {
            name: "sched",
            kind: ParamKind::Bool,
            default: sched,
            unit: "",
            doc: "IM-SCHED: let CPU requests beat critical GPU accesses with the probability measured over the last interval",
        },
        ParamSpec {
            name: "llc",
            kind: ParamKind::Bool,
            default: llc,
            unit: "",
            doc: "IM-LLC: rank emergency-mode CPU sources (hints.emergency) with the critical GPU accesses",
        },
        interval_param("length of IM-SCHED's measurement intervals"),
        ParamSpec {
            name: "seed",
            kind: ParamKind::Int {
                min: 0,
                max: u64::MAX >> 1,
            },
            default: "1",
            unit: "",
            doc: "seed of IM-SCHED's per-decision draws",
        },
        ParamSpec {
            name: "cap",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: "0.5",
            unit: "",
            doc: "upper bound of the CPU prioritisation probability (the paper: one half)",
        },
        ParamSpec {
            name: "passed_in",
            kind: ParamKind::Choice(&["channel", "bank"]),
            default: "\"channel\"",
            unit: "",
            doc: "IM-SCHED's count of de-prioritized CPU reads: those a critical GPU access's command passes anywhere in the channel, or only in its own bank",
        },
        ParamSpec {
            name: "fraction_of",
            kind: ParamKind::Choice(&["reads", "requests"]),
            default: "\"requests\"",
            unit: "",
            doc: "IM-SCHED's denominator: the CPU reads served in the interval, or its CPU reads and writes",
        },
        ParamSpec {
            name: "cpu_first",
            kind: ParamKind::Bool,
            default: "true",
            unit: "",
            doc: "rank CPU requests above non-critical GPU accesses (§4.3); false: by age, as GPU-favoring does",
        },
    ]
}

/// Parameters of `im` (both components).
pub const IM_PARAMS: [ParamSpec; 8] = params("true", "true");
/// Parameters of `im-sched` (IM-SCHED only).
pub const IM_SCHED_PARAMS: [ParamSpec; 8] = params("true", "false");
/// Parameters of `im-llc` (IM-LLC only).
pub const IM_LLC_PARAMS: [ParamSpec; 8] = params("false", "true");

#[derive(Debug)]
pub struct Im {
    name: &'static str,
    sched: bool,
    llc: bool,
    interval: u64,
    seed: u64,
    cap: f64,
    /// Count only the CPU reads of the critical GPU access's own bank (`passed_in = "bank"`).
    same_bank: bool,
    /// Count the CPU writes served in the denominator too (`fraction_of = "requests"`).
    writes_served: bool,
    /// CPU requests rank above non-critical GPU accesses (`cpu_first`).
    cpu_first: bool,
    /// Commands issued so far: the decision counter of the draws.
    issued: u64,
    /// The interval the counters below belong to.
    cur: u64,
    /// The CPU prioritisation probability in force during interval `cur`.
    prob: f64,
    /// CPU reads (and with `writes_served` writes) served in interval `cur`.
    served: u64,
    /// CPU reads first de-prioritized by a younger critical GPU access in interval `cur`.
    deprioritized: u64,
    /// Per read-queue candidate (same index): de-prioritized at least once.
    marked: Vec<bool>,
    /// Intervals closed, those whose measured probability reached the cap, and the sum of
    /// the probabilities they left for their next interval.
    closed: u64,
    at_cap: u64,
    prob_sum: f64,
}

impl Im {
    /// The scheduler registered as `name`, with validated parameters `p`.
    pub fn new(name: &'static str, p: &Params) -> Self {
        Im {
            name,
            sched: p.bool("sched"),
            llc: p.bool("llc"),
            interval: p.int("interval"),
            seed: p.int("seed"),
            cap: p.float("cap"),
            same_bank: p.choice("passed_in") == "bank",
            writes_served: p.choice("fraction_of") == "requests",
            cpu_first: p.bool("cpu_first"),
            issued: 0,
            cur: 0,
            prob: 0.0,
            served: 0,
            deprioritized: 0,
            marked: Vec::new(),
            closed: 0,
            at_cap: 0,
            prob_sum: 0.0,
        }
    }

    /// The fraction of CPU reads de-prioritized in interval `cur` so far, capped.
    fn measured(&self) -> f64 {
        if self.served == 0 {
            0.0
        } else {
            (self.deprioritized as f64 / self.served as f64).min(self.cap)
        }
    }

    /// The CPU prioritisation probability at cycle `now`: that of interval `cur`, the one
    /// measured in `cur` if `now` is in the next interval, and 0 after an interval without
    /// a command (so without CPU reads).
    pub fn probability_at(&self, now: u64) -> f64 {
        if !self.sched {
            return 0.0;
        }
        match (now / self.interval).checked_sub(self.cur) {
            Some(0) | None => self.prob,
            Some(1) => self.measured(),
            Some(_) => 0.0,
        }
    }

    /// Does IM-SCHED's draw favour the CPU at this decision?
    fn cpu_wins(&self, now: u64) -> bool {
        let p = self.probability_at(now);
        p > 0.0 && unit_draw(self.seed, self.issued) < p
    }

    /// Priority class of a candidate (0 first; see the module documentation).
    #[inline]
    fn class(&self, c: &Candidate, hints: &SchedHints, cpu_wins: bool) -> u8 {
        if is_cpu(c) {
            if cpu_wins {
                0
            } else if self.llc && hints.emergency(c.req.source) {
                1
            } else {
                2
            }
        } else if c.req.critical || hints.gpu_all_priority {
            1
        } else if self.cpu_first {
            3
        } else {
            2
        }
    }

    /// Close the intervals that ended by `now`.
    fn roll(&mut self, now: u64) {
        let k = now / self.interval;
        if k > self.cur {
            self.prob = self.probability_at(now);
            if self.sched {
                self.closed += k - self.cur;
                self.at_cap += u64::from(self.prob >= self.cap);
                self.prob_sum += self.prob;
            }
            self.cur = k;
            self.served = 0;
            self.deprioritized = 0;
        }
    }
}

impl Scheduler for Im {
    fn name(&self) -> &'static str {
        self.name
    }
    fn uses_hints(&self) -> bool {
        true
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        if !self.sched {
            return Vec::new();
        }
        vec![
            ("im_sched_intervals", self.closed as f64),
            ("im_sched_intervals_at_cap", self.at_cap as f64),
            ("im_sched_probability_sum", self.prob_sum),
        ]
    }
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        let cpu_wins = self.cpu_wins(ctx.now);
        pick_hit_first(ctx, cands, |c| self.class(c, ctx.hints, cpu_wins))
    }
    /// FR-FCFS's: the same candidates may issue, only their order differs (and the order at
    /// a cycle is computed at that cycle).
    fn next_decision(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<u64> {
        next_hit_first(ctx)
    }
    fn on_issue(&mut self, ctx: &SchedContext, cands: &[Candidate], picked: usize) {
        self.roll(ctx.now);
        self.issued += 1;
        if ctx.write_mode {
            if self.writes_served && ctx.status(&cands[picked]) == RowStatus::Hit {
                self.served += u64::from(is_cpu(&cands[picked]));
            }
            return;
        }
        debug_assert!(self.marked.len() <= cands.len());
        self.marked.resize(cands.len(), false);
        let g = &cands[picked];
        let g_status = ctx.status(g);
        if self.sched && is_critical_gpu(g) {
            for (o, m) in cands[..picked].iter().zip(&mut self.marked) {
                if !*m && is_cpu(o) && ctx.ready(o) && (!self.same_bank || o.bank == g.bank) {
                    let s = ctx.status(o);
                    if fr_allowed(ctx, o, s) && (s == RowStatus::Hit || g_status != RowStatus::Hit)
                    {
                        *m = true;
                        self.deprioritized += 1;
                    }
                }
            }
        }
        if g_status == RowStatus::Hit {
            // A column command: the read leaves the queue.
            self.served += u64::from(is_cpu(g));
            self.marked.remove(picked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;
    use crate::scheduler::{make_scheduler, FrameHint};
    use toml::Table;

    /// The scheduler registered as `name` with the parameters `given` (the rest defaults).
    fn entry_with(name: &'static str, given: &[(&str, toml::Value)]) -> Im {
        let t: Table = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let e = crate::scheduler::scheduler_entry(name).unwrap();
        Im::new(name, &e.params(&t).unwrap())
    }

    fn im(sched: bool, llc: bool, interval: u64, seed: u64) -> Im {
        entry_with(
            "im",
            &[
                ("sched", sched.into()),
                ("llc", llc.into()),
                ("interval", (interval as i64).into()),
                ("seed", (seed as i64).into()),
            ],
        )
    }

    #[test]
    fn registered_variants_switch_the_components() {
        let cfg = crate::presets::preset("ddr3-1600-11-1ch").unwrap();
        for (name, sched, llc) in [
            ("im", true, true),
            ("im-sched", true, false),
            ("im-llc", false, true),
        ] {
            let e = crate::scheduler::scheduler_entry(name).unwrap();
            let p = e.params(&Table::new()).unwrap();
            assert_eq!((p.bool("sched"), p.bool("llc")), (sched, llc), "{name}");
            let named = crate::scheduler::SchedulerConfig {
                name,
                ..cfg.scheduler_config()
            };
            assert_eq!(make_scheduler(&named).unwrap().name(), name);
        }
    }

    /// Row 4 open in bank 0, everything ready.
    fn open() -> Scene {
        Scene::new(8).bank(0, Some(4), 0, 0, 0)
    }

    #[test]
    fn classes_without_draws() {
        let mut s = im(false, true, 100, 1);
        // Critical GPU before an older CPU hit.
        let sc = open().cpu(0, 4).crit(0, 4);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(1));
        // A CPU request before an older non-critical GPU access.
        let sc = open().gpu(0, 4).cpu(0, 4);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(1));
        // ... except in a GPGPU all-GPU phase.
        let mut sc = open().cpu(0, 4).gpu(0, 4);
        sc.hints.gpu_all_priority = true;
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(1));
        // Row hits still first: a CPU hit before a critical GPU miss.
        let sc = open().crit(1, 2).cpu(0, 4);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(1));
    }

    #[test]
    fn without_cpu_first_the_cpu_and_non_critical_gpu_go_by_age() {
        let mut by_age = entry_with("im-llc", &[("cpu_first", false.into())]);
        let mut ranked = im(false, true, 100, 1);
        // An older non-critical GPU hit and a younger CPU hit.
        let sc = open().gpu(0, 4).cpu(0, 4);
        assert_eq!(ranked.pick(&sc.ctx(1), &sc.cands), Some(1));
        assert_eq!(by_age.pick(&sc.ctx(1), &sc.cands), Some(0));
        // Critical GPU accesses still come first.
        let sc = open().cpu(0, 4).crit(0, 4);
        assert_eq!(by_age.pick(&sc.ctx(1), &sc.cands), Some(1));
    }

    #[test]
    fn emergency_sources_rank_with_critical_gpu_accesses() {
        // An older CPU hit of source 1 against a younger critical GPU hit.
        let mut sc = open().cpu(0, 4).crit(0, 4);
        let mut with_llc = im(false, true, 100, 1);
        let mut without = im(false, false, 100, 1);
        assert_eq!(with_llc.pick(&sc.ctx(1), &sc.cands), Some(1));
        sc.hints.emergency = 1 << 1;
        // Same class: the older one wins.
        assert_eq!(with_llc.pick(&sc.ctx(1), &sc.cands), Some(0));
        assert_eq!(without.pick(&sc.ctx(1), &sc.cands), Some(1));
        // ... and it outranks the non-emergency CPU requests.
        let mut sc = open().cpu(0, 4).req(0, 4, 2, false);
        sc.hints.emergency = 1 << 2;
        assert_eq!(with_llc.pick(&sc.ctx(1), &sc.cands), Some(1));
    }

    /// Issue candidate `i` of `sc` at `now` through the scheduler (pick first, as the
    /// controller does, and check it picks `i`).
    fn issue(s: &mut Im, sc: &Scene, now: u64, i: usize) {
        let x = sc.ctx(now);
        assert_eq!(s.pick(&x, &sc.cands), Some(i), "at {now}");
        s.on_issue(&x, &sc.cands, i);
    }

    #[test]
    fn probability_is_the_deprioritized_fraction_of_the_last_interval() {
        let mut s = im(true, false, 100, 1);
        // Interval 0. Two older ready CPU hits lose to a critical GPU hit: both marked. A
        // CPU miss in another bank (ready, but FR-FCFS would serve the hit first anyway) is
        // not marked, nor is a younger CPU hit.
        let sc = open().cpu(0, 4).cpu(1, 3).cpu(0, 4).crit(0, 4).cpu(0, 4);
        issue(&mut s, &sc, 10, 3);
        assert_eq!((s.deprioritized, s.served), (2, 0));
        // The queue after the GPU read left: serve the four CPU reads (two marked).
        let sc = open().cpu(0, 4).cpu(1, 3).cpu(0, 4).cpu(0, 4);
        issue(&mut s, &sc, 11, 0);
        let sc = open().cpu(1, 3).cpu(0, 4).cpu(0, 4);
        issue(&mut s, &sc, 12, 1);
        let sc = open().cpu(1, 3).cpu(0, 4);
        issue(&mut s, &sc, 13, 1);
        // An ACT serves nothing.
        let sc = Scene::new(8).bank(0, Some(4), 0, 0, 0).cpu(1, 3);
        issue(&mut s, &sc, 14, 0);
        assert_eq!((s.deprioritized, s.served), (2, 3));
        assert_eq!(s.probability_at(50), 0.0, "interval 0 has no history");
        // 2 of 3 served were de-prioritized: 2/3, capped at 1/2.
        assert_eq!(s.probability_at(150), 0.5);
        assert_eq!(s.probability_at(250), 0.0, "an interval without commands");
        // Interval 1 begins with the first command in it.
        let sc = Scene::new(8).bank(1, Some(3), 0, 0, 0).cpu(1, 3);
        issue(&mut s, &sc, 150, 0);
        assert_eq!((s.cur, s.prob, s.served, s.deprioritized), (1, 0.5, 1, 0));
        // The closed interval is counted, at the cap.
        assert_eq!(
            s.stats(),
            vec![
                ("im_sched_intervals", 1.0),
                ("im_sched_intervals_at_cap", 1.0),
                ("im_sched_probability_sum", 0.5)
            ]
        );
        // One de-prioritized of four served: 1/4 for interval 2.
        let sc = open().cpu(0, 4).crit(0, 4);
        let mut s2 = im(true, false, 100, 1);
        s2.cur = 1;
        s2.prob = 0.0;
        issue(&mut s2, &sc, 160, 1);
        for t in 0..4 {
            let sc = open().cpu(0, 4);
            issue(&mut s2, &sc, 161 + t, 0);
        }
        assert_eq!(s2.probability_at(200), 0.25);
        issue(&mut s2, &open().cpu(0, 4), 200, 0);
        assert_eq!((s2.cur, s2.prob), (2, 0.25));
    }

    /// IM-SCHED alone with the given readings of "de-prioritized" and of the fraction.
    fn reading(passed_in: &str, fraction_of: &str) -> Im {
        entry_with(
            "im-sched",
            &[
                ("passed_in", passed_in.into()),
                ("fraction_of", fraction_of.into()),
            ],
        )
    }

    #[test]
    fn the_readings_of_de_prioritized_and_of_the_fraction() {
        let defaults = crate::scheduler::scheduler_entry("im")
            .unwrap()
            .params(&Table::new())
            .unwrap();
        assert_eq!(
            (defaults.choice("passed_in"), defaults.choice("fraction_of")),
            ("channel", "requests")
        );
        for (passed_in, fraction_of, marked, served) in [
            ("channel", "reads", 2, 1),
            ("bank", "reads", 1, 1),
            ("channel", "requests", 2, 2),
            ("bank", "requests", 1, 2),
        ] {
            let mut s = reading(passed_in, fraction_of);
            // Bank 1 has row 3 open as well: an older CPU hit there and one in bank 0 lose to
            // a critical GPU hit in bank 0; only the channel reading counts the other bank's.
            let sc = open()
                .bank(1, Some(3), 0, 0, 0)
                .cpu(1, 3)
                .cpu(0, 4)
                .crit(0, 4);
            issue(&mut s, &sc, 10, 2);
            assert_eq!(s.deprioritized, marked, "{passed_in}");
            // A CPU read served, then a CPU write served in a write drain: the write counts
            // among the requests served, never among the de-prioritized.
            issue(&mut s, &open().cpu(0, 4), 11, 0);
            let sc = open().cpu(0, 4);
            let mut x = sc.ctx(12);
            x.write_mode = true;
            s.on_issue(&x, &sc.cands, 0);
            assert_eq!(
                (s.deprioritized, s.served),
                (marked, served),
                "{passed_in}, {fraction_of}"
            );
        }
    }

    /// Over `n` decisions between an older critical GPU hit and a younger CPU hit, which
    /// decisions the CPU wins (the decision counter advanced by issuing elsewhere).
    fn cpu_wins(seed: u64, prob: f64, n: u64) -> Vec<bool> {
        let mut s = im(true, false, 1000, seed);
        s.prob = prob;
        let sc = open().crit(0, 4).cpu(0, 4);
        (0..n)
            .map(|k| {
                s.issued = k;
                s.pick(&sc.ctx(5), &sc.cands) == Some(1)
            })
            .collect()
    }

    #[test]
    fn cpu_wins_with_the_probability_reproducibly() {
        let a = cpu_wins(1, 0.25, 4000);
        let share = a.iter().filter(|&&w| w).count() as f64 / a.len() as f64;
        assert!((share - 0.25).abs() < 0.03, "{share}");
        assert_eq!(a, cpu_wins(1, 0.25, 4000), "same seed, same decisions");
        assert_ne!(a, cpu_wins(2, 0.25, 4000), "another seed, other decisions");
        assert!(cpu_wins(1, 0.0, 500).iter().all(|&w| !w));
        // Speculative picks do not consume draws: the same pick until a command issues.
        let mut s = im(true, false, 1000, 1);
        s.prob = 0.5;
        let sc = open().crit(0, 4).cpu(0, 4);
        let first = s.pick(&sc.ctx(5), &sc.cands);
        assert!((0..20).all(|_| s.pick(&sc.ctx(5), &sc.cands) == first));
        // With IM-SCHED off there is no draw.
        let mut off = im(false, true, 1000, 1);
        off.prob = 0.5;
        assert_eq!(off.probability_at(5), 0.0);
    }

    #[test]
    fn frame_hints_do_not_matter() {
        let mut s = im(true, true, 100, 1);
        let mut sc = open().cpu(0, 4).crit(0, 4);
        let a = s.pick(&sc.ctx(1), &sc.cands);
        sc.hints.frame = Some(FrameHint {
            start: 0,
            period: 10,
            progress: 0.0,
            estimated: 3.0,
        });
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), a);
    }
}
