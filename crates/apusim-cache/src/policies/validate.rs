//! Checking configured policy parameters against the registry, before anything runs.
//!
//! A run names one or more policies and gives one map of parameters (`[llc.params]` with its
//! `--set llc.params.K=V` overrides). Each key must be declared by at least one of the named
//! policies (a multi-policy run may tune one of them; the others are built without the keys
//! they do not declare, [`params_for`]), and its value must lie in the range of every named
//! policy that declares it. With `llc.gpu_write_rules`, a policy that does not implement the
//! heterogeneous baseline's write rules itself also takes the parameters of the
//! [`super::hetero_writes::HeteroWrites`] wrapper it runs in.

use super::hetero_writes::WRITE_RULE_PARAMS;
use super::{PolicyEntry, REGISTRY};
use crate::params::{checked, ParamList, ParamSpec};
use crate::CacheError;
use apusim_registry::{nearest, RegistryError};
use std::collections::BTreeMap;

/// Every parameter policy `entry` reads in a run with (`gpu_write_rules`) or without the
/// heterogeneous write rules.
pub fn allowed_params(entry: &PolicyEntry, gpu_write_rules: bool) -> Vec<ParamSpec> {
    let mut list = ParamList::new();
    list.add(entry.params);
    if gpu_write_rules && !entry.build.own_write_rules {
        list.add(WRITE_RULE_PARAMS);
    }
    list.specs().to_vec()
}

/// Check `params` for a run of the policies `names` (see the module doc). Names that are not
/// registered policies (the oracles, typos that the run refuses by name) are skipped; a run
/// of none (an OPT-only oracle run) reads no parameters and checks none.
pub fn check_params<S: AsRef<str>>(
    names: &[S],
    params: &BTreeMap<String, f64>,
    gpu_write_rules: bool,
) -> Result<(), CacheError> {
    if params.is_empty() {
        return Ok(());
    }
    let listed: Vec<(&str, Vec<ParamSpec>)> = names
        .iter()
        .filter_map(|n| super::info(n.as_ref()))
        .map(|e| (e.name, allowed_params(e, gpu_write_rules)))
        .collect();
    if listed.is_empty() {
        return Ok(());
    }
    let owner = listed
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ");
    for (key, &value) in params {
        let mut declared = false;
        for (name, specs) in &listed {
            if let Some(spec) = specs.iter().find(|s| s.name == key) {
                declared = true;
                checked(spec, Some(value))
                    .map_err(|e| CacheError::Config(format!("policy {name}: {e}")))?;
            }
        }
        if !declared {
            return Err(unknown_key(key, &owner, &listed, gpu_write_rules));
        }
    }
    Ok(())
}

/// The error for `key`, declared by none of the `listed` policies: the nearest of their
/// parameters, their valid names, and which registered policies do take `key`.
fn unknown_key(
    key: &str,
    owner: &str,
    listed: &[(&str, Vec<ParamSpec>)],
    gpu_write_rules: bool,
) -> CacheError {
    let mut valid: Vec<&str> = Vec::new();
    for (_, specs) in listed {
        for s in specs {
            if !valid.contains(&s.name) {
                valid.push(s.name);
            }
        }
    }
    let e = RegistryError::UnknownKey {
        key: key.to_string(),
        owner: owner.to_string(),
        nearest: nearest(key, valid.iter().copied()).map(String::from),
        valid: if valid.is_empty() {
            "none".into()
        } else {
            valid.join(", ")
        },
    };
    let takers: Vec<&str> = REGISTRY
        .iter()
        .filter(|e| {
            allowed_params(e, gpu_write_rules)
                .iter()
                .any(|s| s.name == key)
        })
        .map(|e| e.name)
        .collect();
    if takers.is_empty() {
        CacheError::Config(e.to_string())
    } else {
        CacheError::Config(format!(
            "{e}; `{key}` is a parameter of {}",
            takers.join(", ")
        ))
    }
}

/// The part of `params` that policy `name` declares: what a policy of a multi-policy run is
/// built with after [`check_params`] accepted the whole map for the run.
pub fn params_for(
    name: &str,
    params: &BTreeMap<String, f64>,
    gpu_write_rules: bool,
) -> BTreeMap<String, f64> {
    let Some(entry) = super::info(name) else {
        return params.clone();
    };
    let allowed = allowed_params(entry, gpu_write_rules);
    params
        .iter()
        .filter(|(k, _)| allowed.iter().any(|s| s.name == k.as_str()))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{build, PolicyVisitor};
    use super::*;
    use crate::params::{ParamKind, Value, READ};
    use crate::{Geometry, Policy, PolicyContext};

    /// Builds and drops.
    struct Probe;
    impl PolicyVisitor for Probe {
        type Output = ();
        fn visit<P: Policy>(self, _: P) {}
    }

    fn llc_ctx(rules: bool, params: &[(&str, f64)]) -> PolicyContext {
        let mut c = PolicyContext::for_geometry(&Geometry::new(16 << 20, 16, 64));
        c.n_cpus = 4;
        c.gpu_write_rules = rules;
        c.params = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        c
    }

    fn default_of(s: &ParamSpec) -> f64 {
        match s.default_value().unwrap() {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
            other => panic!("{}: no numeric default ({other:?})", s.name),
        }
    }

    /// Every registered policy, with and without the write rules, and each parameter it reads.
    fn every_param() -> Vec<(&'static str, bool, ParamSpec)> {
        let mut out = Vec::new();
        for e in REGISTRY.iter() {
            for rules in [false, true] {
                for s in allowed_params(e, rules) {
                    out.push((e.name, rules, s));
                }
            }
        }
        out
    }

    #[test]
    fn every_parameter_defaults_in_range_and_refuses_out_of_range_values() {
        let all = every_param();
        assert!(all.len() > 100, "{} parameters", all.len());
        for (name, rules, s) in all {
            let ok = |v: f64| build(name, &llc_ctx(rules, &[(s.name, v)]), Probe);
            let refused = |v: f64, why: &str| {
                let e = ok(v).expect_err(&format!("{name}: {} = {v} accepted", s.name));
                let msg = e.to_string();
                assert!(
                    msg.contains(s.name) && msg.contains(&s.range()),
                    "{name}: {} = {v} ({why}): {msg}",
                    s.name
                );
            };
            assert!(!s.doc.is_empty(), "{name}: {} undocumented", s.name);
            ok(default_of(&s)).unwrap_or_else(|e| panic!("{name}: default of {}: {e}", s.name));
            match s.kind {
                ParamKind::Int { min, max } => {
                    assert!(min <= max && (max as f64) < 2f64.powi(53), "{}", s.name);
                    if min > 0 {
                        refused(min as f64 - 1.0, "below min");
                    }
                    refused(-1.0, "negative");
                    refused(max as f64 + 1.0, "above max");
                    refused(min as f64 + 0.5, "not a whole number");
                }
                ParamKind::Float { min, max } => {
                    let eps = |x: f64| (x.abs() * 1e-9).max(1e-9);
                    refused(min - eps(min), "below min");
                    refused(max + eps(max), "above max");
                    refused(f64::NAN, "not a number");
                }
                ParamKind::Bool | ParamKind::Choice(_) => {
                    panic!("{name}: {} is not numeric", s.name)
                }
            }
            for wrong in [
                toml::Value::String("8".into()),
                toml::Value::Boolean(true),
                toml::Value::Array(vec![]),
            ] {
                assert!(s.check(&wrong).is_err(), "{name}: {} = {wrong}", s.name);
            }
        }
    }

    /// A declared parameter that its policy never reads would be accepted and silently
    /// ignored: every declared parameter must reach the policy's constructor.
    #[test]
    fn every_declared_parameter_is_read() {
        for e in REGISTRY.iter() {
            for rules in [false, true] {
                let specs = allowed_params(e, rules);
                let given: Vec<(&str, f64)> =
                    specs.iter().map(|s| (s.name, default_of(s))).collect();
                READ.with(|r| r.borrow_mut().clear());
                build(e.name, &llc_ctx(rules, &given), Probe)
                    .unwrap_or_else(|err| panic!("{} (rules {rules}): {err}", e.name));
                let read = READ.with(|r| r.borrow().clone());
                for s in &specs {
                    assert!(
                        read.contains(&s.name),
                        "{} (rules {rules}) declares `{}` but never reads it",
                        e.name,
                        s.name
                    );
                }
            }
        }
    }

    #[test]
    fn unknown_keys_are_refused_with_the_nearest_name() {
        let p = |kv: &[(&str, f64)]| kv.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let e = check_params(&["gspc"], &p(&[("gspc_tt", 4.0)]), false).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("`gspc_tt`") && msg.contains("`gspc`") && msg.contains("`gspc_t`"),
            "{msg}"
        );
        // A key another policy takes is named as such.
        let e = check_params(&["lru"], &p(&[("gspc_t", 4.0)]), false).unwrap_err();
        assert!(e.to_string().contains("is a parameter of gspztc"), "{e}");
        // Multi-policy runs: a key of one listed policy is accepted, and that policy alone
        // gets it.
        let both = p(&[("gspc_t", 4.0)]);
        check_params(&["lru", "gspc"], &both, false).unwrap();
        assert!(params_for("lru", &both, false).is_empty());
        assert_eq!(params_for("gspc", &both, false), both);
        assert!(build("lru", &llc_ctx(false, &[("gspc_t", 4.0)]), Probe).is_err());
        // Out of range for a policy that declares it.
        let e = check_params(&["lru", "gspc"], &p(&[("gspc_t", 0.0)]), false).unwrap_err();
        assert!(e.to_string().contains("1..=65536"), "{e}");
        // The write rules' wrapper brings its parameter only with the rules on.
        let depth = p(&[("depth_psel_bits", 4.0)]);
        assert!(check_params(&["srrip"], &depth, false).is_err());
        check_params(&["srrip"], &depth, true).unwrap();
        check_params(&["drp-baseline"], &depth, false).unwrap();
        assert!(check_params(&["gspc"], &depth, true).is_err());
    }

    /// The parameter table of docs/policies.md, generated from the registry.
    fn params_table() -> String {
        let mut rows: Vec<(ParamSpec, Vec<&str>)> = Vec::new();
        for e in REGISTRY.iter() {
            for s in e.params {
                match rows.iter_mut().find(|(r, _)| r.name == s.name) {
                    Some((_, users)) => users.push(e.name),
                    None => rows.push((*s, vec![e.name])),
                }
            }
        }
        for s in WRITE_RULE_PARAMS {
            if !rows.iter().any(|(r, _)| r.name == s.name) {
                rows.push((*s, Vec::new()));
            }
        }
        rows.sort_by_key(|(s, _)| s.name);
        let mut t = String::from(
            "| parameter | default | range | unit | policies | meaning |\n\
             |---|---|---|---|---|---|\n",
        );
        for (s, mut users) in rows {
            if WRITE_RULE_PARAMS.iter().any(|w| w.name == s.name) {
                users.push("every policy wrapped by `llc.gpu_write_rules`");
            }
            t.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                s.name,
                s.default,
                s.range().replace('|', "\\|"),
                s.unit,
                users.join(", "),
                s.doc
            ));
        }
        t
    }

    /// docs/policies.md's parameter table equals the registry's (run with
    /// `APUSIM_UPDATE_DOCS=1` to rewrite it).
    #[test]
    fn docs_parameter_table_matches_the_registry() {
        const BEGIN: &str = "<!-- parameter table: generated from the registry -->\n";
        const END: &str = "<!-- end of parameter table -->";
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/policies.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let start = doc.find(BEGIN).expect("table start marker") + BEGIN.len();
        let end = doc.find(END).expect("table end marker");
        let want = params_table();
        if doc[start..end] != want {
            if std::env::var_os("APUSIM_UPDATE_DOCS").is_some() {
                let new = format!("{}{want}{}", &doc[..start], &doc[end..]);
                std::fs::write(path, new).unwrap();
            } else {
                panic!("docs/policies.md's parameter table is stale; it should read:\n{want}");
            }
        }
    }
}
