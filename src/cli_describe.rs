//! `apusim describe NAME`: one registered implementation of any extension point (an LLC
//! policy, a GPU L1 bypass predictor, a core model, an on-chip network, a GPU model, a DRAM
//! scheduler or address mapping, a GPGPU or CPU workload, a render scene), with its
//! description, paper and every parameter's default, range, unit and meaning.

use anyhow::{bail, Result};
use apusim_cache::policies::hetero_writes::WRITE_RULE_PARAMS;
use apusim_registry::{describe_param, edit_distance, nearest, Entry};

/// One registered entry: its extension point, name and description as text.
struct Described {
    kind: &'static str,
    name: &'static str,
    /// The `paper` field: a `docs/papers.md` key, then a section (checked by the tests).
    #[cfg(test)]
    paper: &'static str,
    text: String,
}

fn add<C>(out: &mut Vec<Described>, kind: &'static str, entries: &[Entry<C>]) {
    out.extend(entries.iter().map(|e| Described {
        kind,
        name: e.name,
        #[cfg(test)]
        paper: e.paper,
        text: apusim_registry::describe(e),
    }));
}

/// Every registry's entries, LLC policies first.
fn all() -> Vec<Described> {
    let mut out = Vec::new();
    add(&mut out, "LLC policy", &apusim_cache::policies::REGISTRY);
    // A policy without its own write rules runs in the rules' wrapper under
    // `llc.gpu_write_rules`, which adds the wrapper's parameters.
    for (d, e) in out.iter_mut().zip(apusim_cache::policies::REGISTRY.iter()) {
        if !e.build.own_write_rules {
            d.text
                .push_str("  with llc.gpu_write_rules = true, also:\n");
            for p in WRITE_RULE_PARAMS {
                d.text.push_str(&format!("  {}", describe_param(p)));
            }
        }
    }
    add(&mut out, "core model", apusim_timing::core::REGISTRY);
    add(&mut out, "network", apusim_timing::network::REGISTRY);
    add(&mut out, "GPU model", apusim_timing::gpu::REGISTRY);
    add(
        &mut out,
        "L1 bypass predictor",
        apusim_cache::policies::l1_bypass::PREDICTORS,
    );
    add(&mut out, "DRAM scheduler", apusim_dram::scheduler::REGISTRY);
    add(
        &mut out,
        "DRAM address mapping",
        apusim_dram::mapping::REGISTRY,
    );
    add(
        &mut out,
        "GPGPU workload",
        &apusim_workloads::gpgpu::REGISTRY,
    );
    add(&mut out, "CPU workload", &apusim_workloads::cpu::REGISTRY);
    add(&mut out, "render scene", &apusim_render::builtin::REGISTRY);
    out
}

/// The description of every entry named `name` (one name may be registered by several
/// extension points), or an error naming the nearest registered name.
pub fn describe(name: &str) -> Result<String> {
    let all = all();
    let found: Vec<String> = all
        .iter()
        .filter(|d| d.name == name)
        .map(|d| format!("{} {}", d.kind, d.text))
        .collect();
    if found.is_empty() {
        let hint = match nearest(name, all.iter().map(|d| d.name)) {
            Some(n) => format!(" (did you mean `{n}`?)"),
            None => match all.iter().min_by_key(|d| edit_distance(name, d.name)) {
                Some(d) => format!(" (the nearest registered name is `{}`)", d.name),
                None => String::new(),
            },
        };
        bail!(
            "unknown name `{name}`{hint}: not an LLC policy (`apusim policies`), L1 bypass \
             predictor, core model, network, GPU model, DRAM scheduler or address mapping, \
             workload (`apusim workloads`) or scene (`apusim gen render --list`)"
        );
    }
    Ok(found.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys `docs/papers.md` defines: the first column of its tables.
    fn paper_keys() -> Vec<String> {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/papers.md"))
            .expect("docs/papers.md");
        text.lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .map(String::from)
            .collect()
    }

    /// A paper string's key: its first word, without a trailing `,` or `;`.
    fn key_of(paper: &str) -> &str {
        paper
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches([',', ';'])
    }

    #[test]
    fn every_registry_entry_cites_a_papers_md_key() {
        let keys = paper_keys();
        assert!(keys.iter().any(|k| k == "drp") && keys.iter().any(|k| k == "ramulator2"));
        let all = all();
        for kind in [
            "LLC policy",
            "L1 bypass predictor",
            "core model",
            "network",
            "GPU model",
            "DRAM scheduler",
            "DRAM address mapping",
            "GPGPU workload",
            "CPU workload",
            "render scene",
        ] {
            assert!(all.iter().any(|d| d.kind == kind), "no {kind} registered");
        }
        let bad: Vec<String> = all
            .iter()
            .filter(|d| !keys.iter().any(|k| k == key_of(d.paper)))
            .map(|d| format!("{} `{}`: paper `{}`", d.kind, d.name, d.paper))
            .collect();
        assert!(
            bad.is_empty(),
            "paper strings not starting with a docs/papers.md key:\n{}",
            bad.join("\n")
        );
    }

    #[test]
    fn key_of_takes_the_first_word() {
        assert_eq!(key_of("drp §3"), "drp");
        assert_eq!(
            key_of("dynprio, as in gpu-access-criticality §2"),
            "dynprio"
        );
        assert_eq!(key_of("Rixner et al., ISCA 2000"), "Rixner");
        assert_eq!(key_of(""), "");
    }

    /// `apusim describe` of a workload or scene shows every parameter its entry checks, with
    /// the default and range that `Entry::check` enforces.
    #[test]
    fn workloads_and_scenes_are_described_with_their_checked_parameters() {
        fn each<C>(entries: &[Entry<C>]) {
            for e in entries {
                let text = describe(e.name).unwrap();
                for p in e.params {
                    let line = describe_param(p);
                    assert!(text.contains(&line), "{}: {line} not in\n{text}", e.name);
                    assert!(line.contains(&format!("[{}]", p.range())), "{line}");
                    // The shown default is the one a run without the parameter gets.
                    let given = e.check(&[]).unwrap();
                    let v = given.iter().find(|(k, _)| *k == p.name).unwrap().1;
                    assert_eq!(v.to_string(), p.default, "{} {}", e.name, p.name);
                }
            }
        }
        each(&apusim_workloads::gpgpu::REGISTRY);
        each(&apusim_workloads::cpu::REGISTRY);
        each(&apusim_render::builtin::REGISTRY);
    }

    #[test]
    fn describe_finds_every_new_registry() {
        for name in ["pc", "RoBaRaCoCh-xor", "bfs", "mcf", "lake"] {
            assert!(describe(name).is_ok(), "{name}");
        }
        let e = describe("RoBaRaCoCj").unwrap_err().to_string();
        assert!(e.contains("did you mean `RoBaRaCoCh`"), "{e}");
    }
}
