//! Tests of the scheduler seam: the docs table against the registry, every entry building
//! with its defaults, and next decisions never skipping a pick.

use super::*;

/// docs/policies.md's DRAM scheduler table: every registered scheduler has a row, every
/// row names registered schedulers only, and its `file` column names an existing file that
/// implements `Scheduler` and is the module the scheduler's registry entry builds from
/// (`build: |..| Box::new(MODULE::Type..)` in this file's `REGISTRY`).
#[test]
fn docs_table_lists_every_scheduler_and_its_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../../docs/policies.md")).unwrap();
    let section = doc
        .split("\n## DRAM schedulers")
        .nth(1)
        .expect("docs/policies.md has a DRAM schedulers section");
    let rows: Vec<(Vec<&str>, &str)> = section
        .lines()
        .skip_while(|l| !l.starts_with("| name |"))
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| {
            let cols: Vec<&str> = l.trim().trim_matches('|').split(" | ").collect();
            let names = cols[0].split(',').map(|n| n.trim().trim_matches('`'));
            let file = cols[cols.len() - 1].trim().trim_matches('`');
            (names.collect(), file)
        })
        .collect();
    assert!(!rows.is_empty(), "no scheduler table in docs/policies.md");
    let src = include_str!("mod.rs");
    let registry = &src[src.find("pub const REGISTRY").unwrap()..];
    let mut problems = Vec::new();
    for e in REGISTRY {
        let Some((_, file)) = rows.iter().find(|(names, _)| names.contains(&e.name)) else {
            problems.push(format!("`{}` has no row", e.name));
            continue;
        };
        let Ok(text) = std::fs::read_to_string(root.join("src").join(file)) else {
            problems.push(format!("`{}`: {file} does not exist", e.name));
            continue;
        };
        if !text.contains("impl Scheduler for") {
            problems.push(format!("`{}`: {file} implements no Scheduler", e.name));
        }
        let at = registry
            .find(&format!("name: \"{}\",", e.name))
            .expect("every entry is in REGISTRY's source");
        let build = registry[at..]
            .lines()
            .find(|l| l.trim_start().starts_with("build:"))
            .unwrap();
        let stem = std::path::Path::new(file).file_stem().unwrap();
        if !build.contains(&format!("new({}::", stem.to_str().unwrap())) {
            problems.push(format!(
                "`{}`: built by `{}`, not from {file}",
                e.name,
                build.trim()
            ));
        }
    }
    for (names, _) in &rows {
        for n in names {
            if !REGISTRY.iter().any(|e| e.name == *n) {
                problems.push(format!("row `{n}` is not a registered scheduler"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/policies.md's scheduler table is out of date:\n{}",
        problems.join("\n")
    );
}

/// A scheduler that only implements the required methods.
#[derive(Debug)]
struct Oldest;
impl Scheduler for Oldest {
    fn name(&self) -> &'static str {
        "oldest"
    }
    fn pick(&mut self, _ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        (!cands.is_empty()).then_some(0)
    }
}

/// Every entry builds a scheduler of its own name from its declared defaults, and its
/// declarations are sound (defaults parse and lie in range).
#[test]
fn registry_entries_build_with_their_defaults() {
    let cfg = crate::presets::preset("ddr3-1600-11-1ch").unwrap();
    for e in REGISTRY {
        for p in e.params {
            p.default_value()
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        }
        let s = make_scheduler(&SchedulerConfig {
            name: e.name,
            ..cfg.scheduler_config()
        })
        .unwrap();
        assert_eq!(s.name(), e.name);
        assert!(e.paper.len() > 3 && !e.description.is_empty());
    }
    let names = scheduler_names();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "duplicate names");
    for (alias, name) in ALIASES {
        assert!(names.contains(name) && !names.contains(alias), "{alias}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// The contract of every registered scheduler's next decision on random queues of CPU
    /// and GPU requests under random hints: nothing ready could be picked before it (the
    /// controller sleeps until then), and the pick at that cycle is ready then.
    #[test]
    fn nothing_is_pickable_before_the_planned_cycle(
        (scene, now, _cap) in frfcfs::tests::scene_strategy(),
        flags in proptest::collection::vec((0u8..6, proptest::prelude::any::<bool>()), 24),
        frame in proptest::option::of((0u64..40, 1u64..60, 0.0f64..1.2, 0.3f64..2.0)),
        emergency in 0u128..8,
        gpu_all in proptest::prelude::any::<bool>(),
    ) {
        let mut scene = scene;
        for (c, (src, crit)) in scene.cands.iter_mut().zip(flags) {
            c.req.source = if src < 3 { src } else { crate::GPU_SOURCE };
            c.req.critical = crit;
        }
        scene.hints = SchedHints {
            emergency,
            gpu_all_priority: gpu_all,
            frame: frame.map(|(start, period, progress, estimated)| FrameHint {
                start,
                period,
                progress,
                estimated,
            }),
        };
        let cfg = crate::presets::preset("ddr3-1600-11-1ch").unwrap();
        for e in REGISTRY {
            let mut s = make_scheduler(&SchedulerConfig {
                name: e.name,
                ..cfg.scheduler_config()
            }).unwrap();
            let x = scene.ctx(now);
            let plan = test_util::plan(&mut *s, &x, &scene.cands);
            let until = plan.map_or(now + 300, |(t, _)| t.min(now + 300));
            for t in now..until {
                let at = scene.ctx(t);
                let p = s.pick(&at, &scene.cands).filter(|&i| at.ready(&scene.cands[i]));
                proptest::prop_assert_eq!(p, None, "{} at {}", e.name, t);
            }
            if let Some((t, pick)) = plan {
                proptest::prop_assert!(t >= now, "{}", e.name);
                proptest::prop_assert_eq!(s.pick(&scene.ctx(t), &scene.cands), pick, "{}", e.name);
                if let Some(i) = pick {
                    proptest::prop_assert!(scene.ctx(t).ready(&scene.cands[i]), "{}", e.name);
                }
                proptest::prop_assert_eq!(s.next_decision(&x, &scene.cands), Some(t), "{}", e.name);
            }
        }
    }
}

/// A scheduler with only the required methods gets the defaults: it wakes at the earliest
/// ready candidate, ignores hints and counts nothing.
#[test]
fn defaults_of_a_minimal_scheduler() {
    let s = test_util::Scene::new(8)
        .bank(0, Some(1), 0, 50, 0)
        .bank(1, None, 20, 0, 0)
        .cand(0, 0)
        .cand(1, 0);
    let mut o = Oldest;
    assert_eq!(o.next_decision(&s.ctx(10), &s.cands), Some(20));
    assert_eq!(o.next_decision(&s.ctx(30), &s.cands), Some(30));
    assert_eq!(o.next_decision(&s.ctx(10), &[]), None);
    assert!(!o.uses_hints() && o.stats().is_empty());
}
