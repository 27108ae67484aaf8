//! `apusim sim`: the timed run (cores, caches, network, LLC and DRAM on one clock).
//!
//! One file, one command: `apusim sim`'s arguments, its run, and its two printed forms (the
//! text report and the CSV rows), which show the same fields and change together.

use super::{
    in_pool, policy_list_or_configured, run_inputs, write_outputs, CacheArgs, OutputArgs,
    SystemArgs,
};
use anyhow::{Context, Result};
use apusim_sim::report::TextTable;
use apusim_sim::timed::{
    alone_runs, intervals, sim_policies, target_error, AloneOptions, CoreResult, IntervalSpec,
    SampleSpec, SimOptions, SimResult, SystemWindow, MAX_CYCLE,
};
use clap::Args;

#[derive(Args)]
pub struct SimArgs {
    /// Trace files, one per CPU core (`FILE@cpu2` assigns a core), as for `apusim run`.
    /// ChampSim traces (`*.champsimtrace`, `.xz`, `.gz`) are read with their registers and
    /// branches.
    #[arg(required_unless_present_any = ["mix", "scene", "kernel"])]
    traces: Vec<String>,
    #[command(flatten)]
    import: crate::inputs::ImportArgs,
    #[command(flatten)]
    workload: crate::WorkloadArgs,
    #[command(flatten)]
    cache: CacheArgs,
    /// LLC policy, or a comma-separated list run side by side in parallel.
    #[arg(long, value_delimiter = ',')]
    policy: Option<Vec<String>>,
    /// Instructions each core retires before statistics start (at most 2^62).
    #[arg(long, default_value_t = 0, value_parser = crate::whole_number(0..=MAX_CYCLE))]
    warmup: u64,
    /// Instructions each core retires after the warm-up, 1 to 2^62 (default: to the end of
    /// its trace). A shorter trace is replayed, at most 10,000 times: a target that would need
    /// more replays is refused at the end of the trace's first pass.
    #[arg(long, value_parser = crate::whole_number(1..=MAX_CYCLE))]
    instructions: Option<u64>,
    /// Threads for multi-policy runs and alone runs, 1 to 1024 (default: all cores).
    #[arg(long, value_parser = crate::thread_count)]
    threads: Option<usize>,
    /// LLC policy of the alone runs behind weighted speedup (one for every policy compared,
    /// so speedups of two policies can be divided).
    #[arg(long, default_value = "lru", value_parser = crate::policy_name)]
    alone_policy: String,
    /// Skip the alone runs (no weighted speedup) for runs with more than one input.
    #[arg(long)]
    no_alone: bool,
    /// Record every counter at boundaries of this length, as a time series in the JSON
    /// (`intervals`) and CSV: `N` or `Ninstr` instructions retired by all cores together, or
    /// `Ncycles` CPU cycles; N may end in K, M or G (`1M`, `500Kcycles`); at most 2^62.
    #[arg(long, value_parser = parse_interval)]
    interval: Option<IntervalSpec>,
    /// Sample: short detailed windows with functional warming between them (SMARTS); each
    /// core's IPC is reported with its 99.7% confidence interval.
    #[arg(long)]
    sample: bool,
    /// CPU cycles one sampling period stands for (its detailed windows and the functional
    /// warming after them).
    #[arg(long, requires = "sample", default_value_t = SampleSpec::default().period,
          value_parser = crate::whole_number(1..=MAX_CYCLE))]
    sample_period: u64,
    /// Detailed CPU cycles before each measured window.
    #[arg(long, requires = "sample", default_value_t = SampleSpec::default().warmup,
          value_parser = crate::whole_number(0..=MAX_CYCLE))]
    sample_warmup: u64,
    /// CPU cycles of each measured window.
    #[arg(long, requires = "sample", default_value_t = SampleSpec::default().unit,
          value_parser = crate::whole_number(1..=MAX_CYCLE))]
    sample_unit: u64,
    /// Sample again with more windows until every core's IPC interval is within this
    /// relative error (`3%` or `0.03`), or say why the run cannot reach it.
    #[arg(long, requires = "sample", value_parser = target_error::parse_target)]
    target_error: Option<f64>,
    /// Idealized streams and forced GPU read bypass at the LLC (alone runs are made without
    /// them).
    #[command(flatten)]
    study: super::StudySwitches,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    db: crate::cli_sweep::DbArgs,
}

fn parse_interval(s: &str) -> Result<IntervalSpec, String> {
    s.parse()
}

pub fn run(a: SimArgs) -> Result<()> {
    let cfg = a.system.load_for(&a.workload)?;
    let names = policy_list_or_configured(a.policy.as_deref(), &cfg);
    let inputs = run_inputs(
        &a.traces,
        &a.import,
        &a.workload,
        None,
        &a.cache,
        cfg.seed,
        true,
    )?;
    let inputs = &*inputs;
    let sample = a
        .sample
        .then_some(SampleSpec {
            period: a.sample_period,
            warmup: a.sample_warmup,
            unit: a.sample_unit,
        })
        .map(|s| s.check().map(|_| s))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let sim_opts = SimOptions {
        warmup: a.warmup,
        instructions: a.instructions,
        progress: names.len() == 1,
        interval: a.interval,
        sample,
        study: a.study.options()?,
    };
    let mut db = a.db.open(false)?;
    if let Some(spec) = &a.interval {
        intervals::check(spec, a.warmup, a.instructions, inputs.open()?.len())?;
    }
    println!(
        "apusim sim: {} on preset {} (core {}, network {}, LLC {} {}, DRAM {})\n",
        inputs.describe(),
        cfg.name,
        cfg.timing.core_model(),
        cfg.timing.network_model(),
        cfg.llc.geometry,
        cfg.llc.policy,
        cfg.timing.dram
    );
    // Jobs that share the machine are compared with each running alone.
    let alone = if inputs.open()?.len() > 1 && !a.no_alone {
        let opts = AloneOptions::new(&a.alone_policy, a.cache.dir());
        let runs = in_pool(a.threads, || alone_runs(&cfg, inputs, &sim_opts, &opts))
            .context("alone runs for weighted speedup")?;
        let cached = runs.iter().filter(|r| r.cached).count();
        println!(
            "alone runs ({}): {} simulated, {} from the cache\n",
            opts.policy,
            runs.len() - cached,
            cached
        );
        Some((opts.policy, runs))
    } else {
        None
    };
    let results = in_pool(a.threads, || {
        sim_policies(
            &cfg,
            &names,
            inputs,
            &sim_opts,
            a.target_error,
            alone.as_ref().map(|(p, r)| (p.as_str(), r.as_slice())),
        )
    })?;
    for r in &results {
        print!("{}", table(r));
    }
    let sampled_frames = results
        .iter()
        .any(|r| r.sampling.is_some() && r.gpu.as_ref().is_some_and(|g| g.render.is_some()));
    if sampled_frames {
        // docs/validation.md, "Sampled against detailed, rendered frames".
        eprintln!(
            "warning: sampled frame times of the render pipeline are estimates whose error is \
             not bounded yet: within 10% on 640x512 frames, but 36-49% short on deferred at \
             1280x1024 (docs/validation.md); run detailed where frame times matter"
        );
    }
    write_outputs(
        &a.output,
        || Ok(serde_json::to_string_pretty(&results)?),
        || csv(&results),
    )?;
    let mut extra = Vec::new();
    if let Some((policy, _)) = &alone {
        extra.push(("alone_policy", serde_json::json!(policy)));
    }
    if let Some(s) = &sample {
        extra.push(("sample", apusim_sweep::job::sample_option(s)));
    }
    if let Some(e) = a.target_error {
        extra.push(("target_error", serde_json::json!(e)));
    }
    if let Some(i) = &a.interval {
        extra.push(("interval", serde_json::json!(format!("{i:?}"))));
    }
    crate::cli_sweep::record_sim(db.as_mut(), &cfg, inputs, &sim_opts, &extra, &results)
}

/// One policy's result as a table per core plus a summary.
pub fn table(r: &SimResult) -> String {
    let mut t = TextTable::new([
        "agent",
        "instructions",
        "cycles",
        "IPC",
        "L1D MPKI",
        "L2 MPKI",
        "LLC MPKI",
        "LLC rt",
    ]);
    let mpki = |c: &apusim_sim::timed::CoreResult, name: &str| {
        c.levels
            .iter()
            .find(|l| l.level == name)
            .map(|l| format!("{:.2}", l.mpki))
            .unwrap_or_else(|| "-".into())
    };
    for c in &r.cores {
        t.row(vec![
            format!(
                "{}{}{}",
                c.agent,
                if c.reached_target { "" } else { "*" },
                if c.restarts > 0 { "+" } else { "" }
            ),
            c.instructions.to_string(),
            c.cycles.to_string(),
            format!("{:.4}", c.ipc),
            mpki(c, "l1d"),
            mpki(c, "l2"),
            mpki(c, "llc"),
            format!("{:.1}", c.llc_request_cycles),
        ]);
    }
    let mut s = format!("policy {} ({:.1} s)\n{}", r.policy, r.seconds, t.render());
    if r.cores.iter().any(|c| !c.reached_target) {
        s.push_str("* the trace ended before the instruction target\n");
    }
    let mut replayed: Vec<String> = r
        .cores
        .iter()
        .filter(|c| c.restarts > 0)
        .map(|c| format!("{} {}x", c.agent, c.restarts))
        .collect();
    if r.open_loop_restarts > 0 {
        replayed.push(format!("gpu {}x", r.open_loop_restarts));
    }
    if !replayed.is_empty() {
        s.push_str(&format!(
            "+ the trace was replayed from its start to keep the core running ({})\n",
            replayed.join(", ")
        ));
    }
    if let Some(g) = &r.gpu {
        s.push_str(&gpu_lines(
            g,
            r.speedup.as_ref().and_then(|sp| sp.gpu.as_ref()),
        ));
    }
    if let Some(sm) = &r.sampling {
        let est: Vec<String> = sm
            .cores
            .iter()
            .map(|c| match c.ipc {
                Some(e) => format!(
                    "{} {:.4} ± {:.4} ({} windows)",
                    c.agent, e.value, e.half_width, c.windows
                ),
                None => format!("{} too few windows ({})", c.agent, c.windows),
            })
            .collect();
        let target = sm
            .target_error
            .map(|e| {
                format!(
                    "; within ±{:.1}% after {} round(s), period {} cycles",
                    100.0 * e,
                    sm.rounds,
                    sm.spec.period
                )
            })
            .unwrap_or_default();
        s.push_str(&format!(
            "sampled: IPC with 99.7% intervals: {}; {:.1}% of instructions in detail{target}\n",
            est.join(", "),
            100.0 * sm.detailed_fraction
        ));
    }
    if let Some(sp) = &r.speedup {
        let alone: Vec<String> = sp
            .jobs
            .iter()
            .map(|j| {
                format!(
                    "{} {:.4} (slowdown {:.3})",
                    j.agent, j.alone_ipc, j.slowdown
                )
            })
            .collect();
        let within = sp
            .weighted_half_width
            .map(|h| format!(" ± {h:.4}"))
            .unwrap_or_default();
        s.push_str(&format!(
            "weighted speedup {:.4}{within}, harmonic speedup {:.4}, maximum slowdown {:.3}; \
             IPC alone ({}): {}\n",
            sp.weighted,
            sp.harmonic,
            sp.max_slowdown,
            sp.alone_policy,
            alone.join(", ")
        ));
    }
    s.push_str(&format!(
        "LLC rt: mean cycles from a core's request to the LLC until its data returned.\n\
         Measured window {} cycles: LLC misses {} (mean {:.1} uncore cycles to fill), \
         network {} messages, {:.0} cycles waited\n",
        r.system.window_cycles,
        r.system.llc_misses,
        r.system.llc_miss_cycles,
        r.system.network_messages,
        r.system.network_wait_cycles
    ));
    if !r.llc_occupancy.is_empty() {
        let parts: Vec<String> = r
            .llc_occupancy
            .iter()
            .map(|x| format!("{} {:.1}%", x.agent, 100.0 * x.share))
            .collect();
        s.push_str(&format!(
            "LLC occupancy (mean share of its lines over the window, by filling agent): {}\n",
            parts.join(", ")
        ));
    }
    if !r.dram_scheduler.is_empty() {
        let kv: Vec<String> = r
            .dram_scheduler
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!(
            "DRAM scheduler (whole run, all channels): {}\n",
            kv.join(", ")
        ));
    }
    let h = &r.hints;
    if h.emergency_app_intervals > 0 || h.gpu_priority_windows > 0 {
        s.push_str(&format!(
            "scheduler hints: {} application-intervals in IM-LLC emergency mode (of {} intervals), \
             {} of {} GPU windows with GPU priority\n",
            h.emergency_app_intervals,
            h.interference_intervals,
            h.gpu_priority_windows,
            h.phase_windows
        ));
    }
    let mut d = TextTable::new([
        "DRAM",
        "reads",
        "writes",
        "GB/s",
        "read latency",
        "row-hit rate",
    ]);
    for x in &r.system.dram {
        d.row(vec![
            x.agent.clone(),
            x.reads.to_string(),
            x.writes.to_string(),
            format!("{:.2}", x.bandwidth_gbps),
            format!("{:.1}", x.read_latency_cycles),
            format!("{:.3}", x.row_hit_rate),
        ]);
    }
    d.row(vec![
        "all".into(),
        r.system
            .dram
            .iter()
            .map(|x| x.reads)
            .sum::<u64>()
            .to_string(),
        r.system
            .dram
            .iter()
            .map(|x| x.writes)
            .sum::<u64>()
            .to_string(),
        format!("{:.2}", r.system.dram_bandwidth_gbps),
        format!("{:.1}", r.system.dram_read_latency_cycles),
        format!("{:.3}", r.system.dram_row_hit_rate),
    ]);
    s.push_str(&d.render());
    s.push_str("DRAM read latency: DRAM cycles from arrival at the controller to data.\n");
    let mut st = TextTable::new([
        "stream",
        "LLC requests",
        "LLC rt",
        "LLC misses",
        "DRAM reads",
        "DRAM writes",
        "DRAM read latency",
    ]);
    for x in &r.system.streams {
        st.row(vec![
            x.stream.clone(),
            x.llc_requests.to_string(),
            format!("{:.1}", x.llc_request_cycles),
            x.llc_misses.to_string(),
            x.dram_reads.to_string(),
            x.dram_writes.to_string(),
            format!("{:.1}", x.dram_read_latency_cycles),
        ]);
    }
    s.push_str(&st.render());
    s.push_str(
        "Per stream, LLC rt: uncore cycles from leaving the agent's private caches until the \
         data is back at its stop.\n",
    );
    s.push_str(&interval_table(r));
    s.push('\n');
    s
}

/// The timed GPU's figures: execution cycles, warp IPC, where its cycles went, its kernels.
fn gpu_lines(
    g: &apusim_sim::timed::GpuResult,
    sp: Option<&apusim_sim::timed::GpuSpeedup>,
) -> String {
    let st = &g.stats.stalls;
    let total = st.total().max(1) as f64;
    let pct = |x: u64| 100.0 * x as f64 / total;
    let alone = sp
        .map(|sp| {
            format!(
                "; alone {} cycles (slowdown {:.3})",
                sp.alone_cycles, sp.slowdown
            )
        })
        .unwrap_or_default();
    let restarted = if g.restarts > 0 {
        format!("; started again {}x while cores ran", g.restarts)
    } else {
        String::new()
    };
    if let Some(r) = &g.render {
        return render_lines(g, r, &alone, &restarted);
    }
    let mut s = format!(
        "{} ({} model, {} SMs at {} MHz): {} GPU cycles to run its program, {} warp \
         instructions (IPC {:.3}), {} kernel launches{alone}{restarted}\n\
         GPU cycles per SM: issuing {:.1}%, waiting for memory {:.1}%, load/store unit full \
         {:.1}%, barrier {:.1}%, no work {:.1}%; mean load latency {:.1} GPU cycles\n",
        g.agent,
        g.model,
        g.sms,
        g.clock_mhz,
        g.cycles,
        g.stats.warp_instructions,
        g.ipc,
        g.kernels.len(),
        pct(st.issued),
        pct(st.memory),
        pct(st.issue),
        pct(st.barrier),
        pct(st.idle),
        g.load_latency_cycles
    );
    if let Some(&(pc, c)) = g.stall_pcs.first() {
        s.push_str(&format!(
            "longest-waited load: PC {pc:#x}, {c} warp-cycles ({} load PCs listed in the JSON)\n",
            g.stall_pcs.len()
        ));
    }
    if let Some(c) = &g.shader_criticality {
        let m = &c.marks;
        s.push_str(&format!(
            "critical transactions (gpu-access-criticality §4.1.2): {:.1}% of {} that missed their L1 \
             (in the critical PC set {}, untracked PC below the LLC miss-rate limit {}); \
             non-critical: core not bottlenecked {}, PC in the table not critical {}, LLC miss rate above \
             the limit {}; {} LLC misses bypassed; {} of {} core-periods bottlenecked\n",
            100.0 * c.critical_fraction,
            m.critical() + m.non_critical(),
            m.critical_in_set,
            m.critical_untracked,
            m.non_critical_not_bottlenecked,
            m.non_critical_in_table,
            m.non_critical_miss_rate,
            c.llc_bypasses,
            m.bottlenecked_core_periods,
            m.evaluations * u64::from(g.sms),
        ));
    }
    s
}

/// The render pipeline's figures: frames and their rate, what bounds them (the busiest unit),
/// where the front end and the shader cores waited.
fn render_lines(
    g: &apusim_sim::timed::GpuResult,
    r: &apusim_sim::timed::RenderResult,
    alone: &str,
    restarted: &str,
) -> String {
    let u = &r.units;
    let busiest: Vec<String> = r
        .utilisation
        .iter()
        .take(3)
        .map(|(k, v)| format!("{k} {:.1}%", 100.0 * v))
        .collect();
    let cycles = g.cycles.max(1) as f64;
    let fe = |x: u64| 100.0 * x as f64 / cycles;
    let st = &g.stats.stalls;
    let total = st.total().max(1) as f64;
    let pct = |x: u64| 100.0 * x as f64 / total;
    format!(
        "{} ({} model, {} shader cores, {} ROPs at {} MHz): {} frame(s) in {} GPU cycles, \
         {:.1} frames per second{alone}{restarted}\n\
         busiest units (busy per instance): {}; {} triangles, {} tiles, {} quads ({} shaded), \
         {} texels\n\
         front end waited: draw boundaries {:.1}%, vertex reads {:.1}%, vertex shading \
         {:.1}%, HiZ FIFO full {:.1}% (its head waiting for ROP room {:.1}%)\n\
         shader-core cycles: issuing {:.1}%, waiting for instructions or texels {:.1}%, \
         output blocked {:.1}%, no work {:.1}%; mean read latency {:.1} GPU cycles\n",
        g.agent,
        g.model,
        u.shader_cores,
        u.rops,
        g.clock_mhz,
        r.frames.len(),
        g.cycles,
        r.fps,
        busiest.join(", "),
        u.triangles,
        u.tiles,
        u.quads,
        u.shaded_quads,
        u.texels,
        fe(u.fe_sync_cycles),
        fe(u.fe_read_cycles),
        fe(u.fe_vertex_cycles),
        fe(u.fe_hiz_full_cycles),
        fe(u.hiz_rop_full_cycles),
        pct(st.issued),
        pct(st.memory),
        pct(st.issue),
        pct(st.idle),
        g.load_latency_cycles
    ) + &criticality_lines(r)
}

/// Critical accesses by stream and the frame-rate estimator's error (gpu-access-criticality
/// Figs. 9 and 10), when the pipeline marks accesses or has predicted frames.
fn criticality_lines(r: &apusim_sim::timed::RenderResult) -> String {
    let Some(c) = &r.criticality else {
        return String::new();
    };
    let mut s = String::new();
    let k = &c.counters;
    if k.evaluations > 0 {
        let crit: u64 = k.critical.iter().sum();
        let all = crit + k.non_critical.iter().sum::<u64>();
        let mut by: Vec<(String, u64)> = k
            .critical
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| {
                let name = apusim_trace::Stream::from_byte(i as u8)
                    .map_or_else(|| format!("stream {i}"), |st| st.name().to_string());
                (name, n)
            })
            .collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let pct = |n: u64| 100.0 * n as f64 / all.max(1) as f64;
        let units: Vec<String> = ["fe", "zs", "sh", "cw", "bt"]
            .iter()
            .zip(&k.bottlenecked)
            .map(|(u, &n)| format!("{u} {:.0}%", 100.0 * n as f64 / k.evaluations as f64))
            .collect();
        s.push_str(&format!(
            "critical accesses: {:.1}% of {all} sent ({}); unmarked with the frame rate on target {:.1}%; \
             bottlenecked in {} evaluations: {}\n",
            pct(crit),
            by.iter()
                .take(6)
                .map(|(n, c)| format!("{n} {:.1}%", pct(*c)))
                .collect::<Vec<_>>()
                .join(", "),
            pct(k.on_target),
            k.evaluations,
            units.join(", ")
        ));
    }
    if let Some(l) = &c.learned {
        let errs: Vec<String> = c
            .estimates
            .iter()
            .map(|e| format!("frame {} {:+.1}%", e.frame, 100.0 * e.error))
            .collect();
        s.push_str(&format!(
            "frame-rate estimation: learned {} render-target tiles, {} planes, {} updates in {} cycles; \
             error of predicted frames: {}; relearned {}x\n",
            l.tiles,
            l.planes,
            l.updates,
            l.cycles,
            if errs.is_empty() {
                "none predicted".to_string()
            } else {
                errs.join(", ")
            },
            c.relearned
        ));
    }
    s
}

/// Most intervals shown on the terminal; the JSON and CSV hold them all.
const SHOWN_INTERVALS: usize = 40;

/// IPC per core, LLC misses and DRAM bandwidth per interval (with `--interval`).
fn interval_table(r: &SimResult) -> String {
    let Some(first) = r.intervals.first() else {
        return String::new();
    };
    let mut head = vec!["interval".to_string(), "end cycle".to_string()];
    head.extend(first.cores.iter().map(|c| format!("{} IPC", c.agent)));
    head.extend(["LLC misses".to_string(), "DRAM GB/s".to_string()]);
    let mut t = TextTable::new(head);
    for iv in r.intervals.iter().take(SHOWN_INTERVALS) {
        let mut row = vec![iv.index.to_string(), iv.end_cycle.to_string()];
        row.extend(iv.cores.iter().map(|c| format!("{:.4}", c.ipc)));
        row.push(iv.system.llc_misses.to_string());
        row.push(format!("{:.2}", iv.system.dram_bandwidth_gbps));
        t.row(row);
    }
    let mut s = t.render();
    if r.intervals.len() > SHOWN_INTERVALS {
        s.push_str(&format!(
            "… {} more intervals in the JSON (`intervals`) and CSV\n",
            r.intervals.len() - SHOWN_INTERVALS
        ));
    }
    s
}

/// Long format: policy, agent, metric, value. With `--interval`, two more leading columns
/// after the policy say which interval a row belongs to (`all` and empty cycles for the
/// whole run's rows; then `0`, `1`, … with the interval's start and end cycles).
pub fn csv(results: &[SimResult]) -> String {
    let series = results.iter().any(|r| !r.intervals.is_empty());
    let mut s = String::from(if series {
        "policy,interval,start_cycle,end_cycle,agent,metric,value\n"
    } else {
        "policy,agent,metric,value\n"
    });
    for r in results {
        let whole = if series {
            format!("{},all,,", r.policy)
        } else {
            r.policy.clone()
        };
        let mut row = |agent: &str, m: &str, v: String| {
            s.push_str(&format!("{whole},{agent},{m},{v}\n"));
        };
        window_rows(&r.cores, &r.system, &mut row);
        if let Some(sm) = &r.sampling {
            for c in &sm.cores {
                row(&c.agent, "sample.windows", c.windows.to_string());
                if let Some(e) = c.ipc {
                    row(&c.agent, "sample.ipc_half_width", e.half_width.to_string());
                }
            }
            row(
                "system",
                "sample.detailed_fraction",
                sm.detailed_fraction.to_string(),
            );
        }
        for c in &r.cores {
            row(&c.agent, "restarts", c.restarts.to_string());
            if let Some(j) = r
                .speedup
                .as_ref()
                .and_then(|sp| sp.jobs.iter().find(|j| j.agent == c.agent))
            {
                row(&c.agent, "alone_ipc", j.alone_ipc.to_string());
                row(&c.agent, "slowdown", j.slowdown.to_string());
            }
        }
        if let Some(sp) = &r.speedup {
            for (m, v) in [
                ("weighted_speedup", sp.weighted),
                ("harmonic_speedup", sp.harmonic),
                ("max_slowdown", sp.max_slowdown),
            ] {
                row("system", m, v.to_string());
            }
            if let Some(h) = sp.weighted_half_width {
                row("system", "weighted_speedup_half_width", h.to_string());
            }
        }
        row("system", "cycles", r.cycles.to_string());
        for x in &r.llc_occupancy {
            row(&x.agent, "llc.occupancy_lines", x.lines.to_string());
            row(&x.agent, "llc.occupancy_share", x.share.to_string());
        }
        if let Some(g) = &r.gpu {
            gpu_rows(
                g,
                r.speedup.as_ref().and_then(|sp| sp.gpu.as_ref()),
                &mut row,
            );
        }
        for iv in &r.intervals {
            let prefix = format!(
                "{},{},{},{}",
                r.policy, iv.index, iv.start_cycle, iv.end_cycle
            );
            let mut row = |agent: &str, m: &str, v: String| {
                s.push_str(&format!("{prefix},{agent},{m},{v}\n"));
            };
            window_rows(&iv.cores, &iv.system, &mut row);
            for (name, v) in &iv.policy_stats {
                row("policy", name, v.to_string());
            }
        }
    }
    s
}

/// The timed GPU's rows (agent `gpu`).
fn gpu_rows(
    g: &apusim_sim::timed::GpuResult,
    sp: Option<&apusim_sim::timed::GpuSpeedup>,
    row: &mut dyn FnMut(&str, &str, String),
) {
    let st = &g.stats;
    for (m, v) in [
        ("gpu.cycles", g.cycles),
        ("gpu.warp_instructions", st.warp_instructions),
        ("gpu.memory_instructions", st.memory_instructions),
        ("gpu.load_transactions", st.load_transactions),
        ("gpu.store_transactions", st.store_transactions),
        ("gpu.blocks", st.blocks),
        ("gpu.launches", st.launches),
        ("gpu.lsu_busy_cycles", st.lsu_busy_cycles),
        ("gpu.stall.issued", st.stalls.issued),
        ("gpu.stall.memory", st.stalls.memory),
        ("gpu.stall.issue", st.stalls.issue),
        ("gpu.stall.barrier", st.stalls.barrier),
        ("gpu.stall.idle", st.stalls.idle),
        ("gpu.restarts", g.restarts),
    ] {
        row("gpu", m, v.to_string());
    }
    row("gpu", "gpu.ipc", g.ipc.to_string());
    row(
        "gpu",
        "gpu.load_latency_cycles",
        g.load_latency_cycles.to_string(),
    );
    for (i, c) in g.cores.iter().enumerate() {
        for (m, v) in [
            ("issued", c.issued),
            ("memory", c.memory),
            ("issue", c.issue),
            ("barrier", c.barrier),
            ("idle", c.idle),
        ] {
            row("gpu", &format!("gpu.sm{i}.stall.{m}"), v.to_string());
        }
    }
    for k in &g.kernels {
        row(
            "gpu",
            &format!("gpu.kernel{}.cycles", k.launch),
            (k.end - k.start).to_string(),
        );
    }
    if let Some(r) = &g.render {
        render_rows(r, row);
    }
    if let Some(sp) = sp {
        row("gpu", "gpu.alone_cycles", sp.alone_cycles.to_string());
        row("gpu", "gpu.slowdown", sp.slowdown.to_string());
    }
}

/// The render pipeline's rows: frame rate and spans, work, per-unit counters.
fn render_rows(r: &apusim_sim::timed::RenderResult, row: &mut dyn FnMut(&str, &str, String)) {
    row("gpu", "gpu.fps", r.fps.to_string());
    for f in &r.frames {
        row(
            "gpu",
            &format!("gpu.frame{}.cycles", f.frame),
            (f.end - f.start).to_string(),
        );
    }
    let u = &r.units;
    for (m, v) in [
        ("triangles", u.triangles),
        ("tiles", u.tiles),
        ("quads", u.quads),
        ("shaded_quads", u.shaded_quads),
        ("texels", u.texels),
        ("vertices", u.vertices),
        ("fe_sync_cycles", u.fe_sync_cycles),
        ("fe_read_cycles", u.fe_read_cycles),
        ("fe_vertex_cycles", u.fe_vertex_cycles),
        ("fe_hiz_full_cycles", u.fe_hiz_full_cycles),
        ("hiz_rop_full_cycles", u.hiz_rop_full_cycles),
    ] {
        row("gpu", &format!("gpu.{m}"), v.to_string());
    }
    for (k, c) in [
        ("fe", u.fe),
        ("zs", u.zs),
        ("sh", u.sh),
        ("tex", u.tex),
        ("cw", u.cw),
        ("bt", u.bt),
    ] {
        row(
            "gpu",
            &format!("gpu.{k}.completed"),
            c.completed.to_string(),
        );
        row(
            "gpu",
            &format!("gpu.{k}.busy_cycles"),
            c.busy_cycles.to_string(),
        );
        row(
            "gpu",
            &format!("gpu.{k}.occupancy"),
            c.occupancy.to_string(),
        );
    }
    for (k, v) in &r.utilisation {
        row("gpu", &format!("gpu.{k}.utilisation"), v.to_string());
    }
}

/// The rows of one window (the measured one, or an interval): per core, per DRAM source,
/// per stream, and the system's.
fn window_rows(cores: &[CoreResult], sys: &SystemWindow, row: &mut dyn FnMut(&str, &str, String)) {
    for c in cores {
        row(&c.agent, "instructions", c.instructions.to_string());
        row(&c.agent, "cycles", c.cycles.to_string());
        row(&c.agent, "ipc", c.ipc.to_string());
        row(
            &c.agent,
            "llc_request_cycles",
            c.llc_request_cycles.to_string(),
        );
        for l in &c.levels {
            row(&c.agent, &format!("{}.mpki", l.level), l.mpki.to_string());
            row(
                &c.agent,
                &format!("{}.misses", l.level),
                l.misses.to_string(),
            );
        }
    }
    for x in &sys.dram {
        for (m, v) in [
            ("dram.reads", x.reads as f64),
            ("dram.writes", x.writes as f64),
            ("dram.bandwidth_gbps", x.bandwidth_gbps),
            ("dram.read_latency_cycles", x.read_latency_cycles),
            ("dram.row_hit_rate", x.row_hit_rate),
        ] {
            row(&x.agent, m, v.to_string());
        }
    }
    for x in &sys.streams {
        for (m, v) in [
            ("stream.llc_requests", x.llc_requests as f64),
            ("stream.llc_request_cycles", x.llc_request_cycles),
            ("stream.llc_misses", x.llc_misses as f64),
            ("stream.dram_reads", x.dram_reads as f64),
            ("stream.dram_writes", x.dram_writes as f64),
            (
                "stream.dram_read_latency_cycles",
                x.dram_read_latency_cycles,
            ),
        ] {
            row(&x.stream, m, v.to_string());
        }
    }
    for (m, v) in sys.figures() {
        row("system", m, v.to_string());
    }
}
