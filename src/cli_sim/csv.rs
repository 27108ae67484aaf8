//! `apusim sim --csv`: the long-format rows (policy, agent, metric, value) of the same fields
//! the text report shows.

use apusim_sim::timed::{CoreResult, SimResult, SystemWindow};

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
            if !sm.cores.is_empty() {
                row(
                    "system",
                    "sample.detailed_fraction",
                    sm.detailed_fraction.to_string(),
                );
            }
            if let Some(e) = r.gpu.as_ref().and_then(|g| g.work_rate) {
                row("gpu", "sample.windows", e.windows.to_string());
                row("gpu", "sample.work_per_cycle", e.value.to_string());
                row(
                    "gpu",
                    "sample.work_per_cycle_half_width",
                    e.half_width.to_string(),
                );
                row(
                    "gpu",
                    "sample.cycles_rel_error",
                    e.relative_error().to_string(),
                );
            }
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
            if let Some(g) = &iv.gpu {
                for (m, v) in [
                    ("gpu.cycles", g.cycles),
                    ("gpu.work", g.work),
                    ("gpu.instructions", g.instructions),
                    ("gpu.warmed_instructions", g.warmed_instructions),
                    ("gpu.transactions", g.transactions),
                ] {
                    row("gpu", m, v.to_string());
                }
                row("gpu", "gpu.work_per_cycle", g.work_per_cycle.to_string());
                if let Some(p) = g.frame_progress {
                    row("gpu", "gpu.frame_progress", p.to_string());
                }
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
        for (m, v) in x.figures() {
            row(&x.agent, &format!("dram.{m}"), v.to_string());
        }
    }
    for x in &sys.streams {
        for (level, m, v) in x.figures() {
            row(&x.stream, &format!("stream.{level}_{m}"), v.to_string());
        }
    }
    for (m, v) in sys.figures() {
        row("system", m, v.to_string());
    }
}
