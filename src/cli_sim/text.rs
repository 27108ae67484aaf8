//! `apusim sim`'s text report: per-core tables and the summary, the timed GPU's and the render
//! pipeline's figures, criticality, and the interval table.

use apusim_sim::report::TextTable;
use apusim_sim::timed::SimResult;

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
        // A GPU alone has no core to estimate: its line below says what was sampled.
        if !est.is_empty() {
            s.push_str(&format!(
                "sampled: IPC with 99.7% intervals: {}; {:.1}% of instructions in detail{target}\n",
                est.join(", "),
                100.0 * sm.detailed_fraction
            ));
        }
        if let Some(e) = r.gpu.as_ref().and_then(|g| g.work_rate) {
            s.push_str(&format!(
                "sampled GPU: work per GPU cycle {:.4} ± {:.4} (99.7%, {} windows): its cycles \
                 and frame times within ±{:.1}%\n",
                e.value,
                e.half_width,
                e.windows,
                100.0 * e.relative_error()
            ));
        }
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
    if let Some(busiest) = busiest_links(&r.system.network_links) {
        s.push_str(&busiest);
    }
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
    let writes: u64 = r.system.dram.iter().map(|x| x.writes).sum();
    let drains = r.system.dram_write_drains;
    if drains > 0 {
        s.push_str(&format!(
            "DRAM write drains: {drains} (a controller switching to writes; {:.1} writes per \
             drain)\n",
            writes as f64 / drains as f64
        ));
    }
    let sys = &r.system;
    if sys.dram_read_queue_mean + sys.dram_write_queue_mean > 0.0 {
        s.push_str(&format!(
            "DRAM queues, mean requests over all channels: read {:.1}, write {:.1}; waiting for \
             a slot: reads {:.1}, write-backs {:.1}\n",
            sys.dram_read_queue_mean,
            sys.dram_write_queue_mean,
            sys.dram_reads_waiting_mean,
            sys.dram_writes_waiting_mean
        ));
    }
    let mut st = TextTable::new([
        "stream",
        "LLC requests",
        "LLC rt",
        "MSHR wait",
        "LLC misses",
        "DRAM reads",
        "DRAM writes",
        "DRAM read latency",
        "rd row hit/conf",
        "wr row hit/conf",
    ]);
    let rows = |o: &apusim_dram::RowOutcomes| match o.total() {
        0 => "-".to_string(),
        n => format!("{:.2}/{:.2}", o.hit_rate(), o.conflicts as f64 / n as f64),
    };
    for x in &r.system.streams {
        st.row(vec![
            x.stream.clone(),
            x.llc_requests.to_string(),
            format!("{:.1}", x.llc_request_cycles),
            format!("{:.1}", x.llc_mshr_wait_cycles),
            x.llc_misses.to_string(),
            x.dram_reads.to_string(),
            x.dram_writes.to_string(),
            format!("{:.1}", x.dram_read_latency_cycles),
            rows(&x.dram_read_rows),
            rows(&x.dram_write_rows),
        ]);
    }
    s.push_str(&st.render());
    s.push_str(
        "Per stream, LLC rt: uncore cycles from leaving the agent's private caches until the \
         data is back at its stop; MSHR wait: of that, the mean time waiting in an LLC bank \
         for a free MSHR; row hit/conf: the shares of its DRAM reads and writes that \
         found their row open, and another row open.\n",
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
        let errs = estimate_errors(&c.estimates);
        s.push_str(&format!(
            "frame-rate estimation: learned {} render-target tiles, {} planes, {} updates in {} cycles; \
             error of predicted frames: {}; relearned {}x\n",
            l.tiles,
            l.planes,
            l.updates,
            l.cycles,
            errs,
            c.relearned
        ));
    }
    s
}

/// Most intervals shown on the terminal; the JSON and CSV hold them all.
const SHOWN_INTERVALS: usize = 40;

/// Frame-rate predictions the table lists one by one.
const SHOWN_ESTIMATES: usize = 8;

/// The errors of the predicted frames: a long run predicts a frame per restart, so the first
/// [`SHOWN_ESTIMATES`] are listed and the rest summed up (JSON and CSV keep every one), then
/// the mean error over all of them (gpu-access-criticality Fig. 10's measure).
fn estimate_errors(estimates: &[apusim_timing::gpu::pipeline::FrameEstimate]) -> String {
    if estimates.is_empty() {
        return "none predicted".to_string();
    }
    let mut parts: Vec<String> = estimates
        .iter()
        .take(SHOWN_ESTIMATES)
        .map(|e| format!("frame {} {:+.1}%", e.frame, 100.0 * e.error))
        .collect();
    if let Some(rest) = estimates.get(SHOWN_ESTIMATES..).filter(|r| !r.is_empty()) {
        let mean = rest.iter().map(|e| e.error.abs()).sum::<f64>() / rest.len() as f64;
        let max = rest.iter().map(|e| e.error.abs()).fold(0.0, f64::max);
        parts.push(format!(
            "{} more (mean |error| {:.1}%, largest {:.1}%)",
            rest.len(),
            100.0 * mean,
            100.0 * max
        ));
    }
    let all = parts.join(", ");
    if estimates.len() < 2 {
        return all;
    }
    let mean = estimates.iter().map(|e| e.error).sum::<f64>() / estimates.len() as f64;
    format!(
        "{all}; mean error of the {} predicted frames {:+.1}%",
        estimates.len(),
        100.0 * mean
    )
}

/// IPC per core, LLC misses and DRAM bandwidth per interval (with `--interval`).
/// The ring links whose messages waited longest in the window (at most four), one line;
/// `None` when no message waited for a link.
fn busiest_links(links: &[apusim_sim::timed::NetworkLink]) -> Option<String> {
    let mut waited: Vec<&apusim_sim::timed::NetworkLink> =
        links.iter().filter(|l| l.wait_cycles > 0.0).collect();
    if waited.is_empty() {
        return None;
    }
    waited.sort_by(|a, b| b.wait_cycles.total_cmp(&a.wait_cycles));
    let parts: Vec<String> = waited
        .iter()
        .take(4)
        .map(|l| {
            format!(
                "{}->{} {} messages, {:.0} cycles ({:.1} per message)",
                l.from,
                l.to,
                l.messages,
                l.wait_cycles,
                l.wait_cycles / l.messages as f64
            )
        })
        .collect();
    Some(format!(
        "Ring links waited for most (network cycles): {}\n",
        parts.join("; ")
    ))
}

fn interval_table(r: &SimResult) -> String {
    let Some(first) = r.intervals.first() else {
        return String::new();
    };
    let mut head = vec!["interval".to_string(), "end cycle".to_string()];
    head.extend(first.cores.iter().map(|c| format!("{} IPC", c.agent)));
    head.extend(["LLC misses".to_string(), "DRAM GB/s".to_string()]);
    let gpu = first.gpu.is_some();
    if gpu {
        head.push("GPU work/cycle".to_string());
    }
    let mut t = TextTable::new(head);
    for iv in r.intervals.iter().take(SHOWN_INTERVALS) {
        let mut row = vec![iv.index.to_string(), iv.end_cycle.to_string()];
        row.extend(iv.cores.iter().map(|c| format!("{:.4}", c.ipc)));
        row.push(iv.system.llc_misses.to_string());
        row.push(format!("{:.2}", iv.system.dram_bandwidth_gbps));
        if gpu {
            row.push(
                iv.gpu
                    .map_or(String::new(), |g| format!("{:.3}", g.work_per_cycle)),
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_timing::gpu::pipeline::FrameEstimate;

    fn est(error: f64) -> FrameEstimate {
        FrameEstimate {
            frame: 0,
            cycles: 1,
            projected: 1.0,
            error,
        }
    }

    #[test]
    fn predicted_frames_beyond_the_first_few_are_summed_up() {
        assert_eq!(estimate_errors(&[]), "none predicted");
        assert_eq!(estimate_errors(&[est(0.1)]), "frame 0 +10.0%");
        assert_eq!(
            estimate_errors(&[est(0.1), est(-0.2)]),
            "frame 0 +10.0%, frame 0 -20.0%; mean error of the 2 predicted frames -5.0%"
        );
        let mut many = vec![est(0.01); SHOWN_ESTIMATES];
        many.extend([est(0.1), est(-0.3)]);
        let s = estimate_errors(&many);
        assert_eq!(s.matches("frame 0").count(), SHOWN_ESTIMATES, "{s}");
        assert!(
            s.ends_with(
                "2 more (mean |error| 20.0%, largest 30.0%); mean error of the 10 predicted \
                 frames -1.2%"
            ),
            "{s}"
        );
    }
}
