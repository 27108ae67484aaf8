//! The one shape in which every apusim extension point registers its implementations.
//!
//! An extension point (a core model, an on-chip network, and in time the LLC policies, DRAM
//! schedulers, address mappers, workloads and studies) keeps a static slice of [`Entry`]s.
//! Each entry names one implementation, says in one line what it is, cites the paper and
//! section it follows (a key of `docs/papers.md`), declares its typed parameters
//! ([`ParamSpec`]: kind, default, valid range, unit, one line of documentation), and carries
//! the constructor the extension point calls with the validated [`Params`].
//!
//! Validation happens once, before anything runs: [`Entry::params`] takes the parameters a
//! user wrote (a TOML table, after `--set` overrides) and refuses an unknown key (suggesting
//! the nearest valid name), a value of the wrong type, or a value outside its range, naming
//! the key. [`find`] looks an entry up by name with the same nearest-name suggestion.

use std::collections::BTreeMap;
use std::fmt;

/// The kind and valid range of one parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// An unsigned integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// A real number in `min..=max`.
    Float { min: f64, max: f64 },
    /// `true` or `false`.
    Bool,
    /// One of the listed names.
    Choice(&'static [&'static str]),
}

/// A parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(u64),
    Float(f64),
    Bool(bool),
    Choice(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Choice(v) => write!(f, "\"{v}\""),
        }
    }
}

/// One declared parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The default, as the TOML text of its value (`4`, `0.5`, `true`, `"none"`).
    pub default: &'static str,
    /// Unit (`cycles`, `entries`, `instructions/cycle`; empty when unitless).
    pub unit: &'static str,
    pub doc: &'static str,
}

impl ParamSpec {
    /// The range or choices, as shown in listings and errors.
    pub fn range(&self) -> String {
        match self.kind {
            ParamKind::Int { min, max } => format!("{min}..={max}"),
            ParamKind::Float { min, max } => format!("{min}..={max}"),
            ParamKind::Bool => "true|false".into(),
            ParamKind::Choice(c) => c.join("|"),
        }
    }

    /// Check `v` against this parameter's kind and range.
    pub fn check(&self, v: &toml::Value) -> Result<Value, RegistryError> {
        let bad = |why: String| RegistryError::BadValue {
            key: self.name.to_string(),
            value: v.to_string(),
            why,
        };
        match self.kind {
            ParamKind::Int { min, max } => {
                let n = match v {
                    toml::Value::Integer(n) if *n >= 0 => *n as u64,
                    toml::Value::Float(x)
                        if x.fract() == 0.0 && *x >= 0.0 && *x < 2f64.powi(63) =>
                    {
                        *x as u64
                    }
                    _ => return Err(bad(format!("expected an integer in {}", self.range()))),
                };
                if n < min || n > max {
                    return Err(bad(format!("out of range {}", self.range())));
                }
                Ok(Value::Int(n))
            }
            ParamKind::Float { min, max } => {
                let x = match v {
                    toml::Value::Integer(n) => *n as f64,
                    toml::Value::Float(x) => *x,
                    _ => return Err(bad(format!("expected a number in {}", self.range()))),
                };
                if !(x >= min && x <= max) {
                    return Err(bad(format!("out of range {}", self.range())));
                }
                Ok(Value::Float(x))
            }
            ParamKind::Bool => match v {
                toml::Value::Boolean(b) => Ok(Value::Bool(*b)),
                _ => Err(bad("expected true or false".into())),
            },
            ParamKind::Choice(choices) => match v {
                toml::Value::String(s) if choices.contains(&s.as_str()) => {
                    Ok(Value::Choice(s.clone()))
                }
                toml::Value::String(s) => Err(bad(match nearest(s, choices.iter().copied()) {
                    Some(n) => format!("expected one of {}; did you mean `{n}`?", self.range()),
                    None => format!("expected one of {}", self.range()),
                })),
                _ => Err(bad(format!("expected one of {}", self.range()))),
            },
        }
    }

    /// Check a typed value against this parameter's kind and range (what callers holding
    /// native values, such as the Python binding, validate with).
    pub fn check_value(&self, v: &Value) -> Result<Value, RegistryError> {
        let bad = |why: String| RegistryError::BadValue {
            key: self.name.to_string(),
            value: v.to_string(),
            why,
        };
        match (self.kind, v) {
            (ParamKind::Int { min, max }, Value::Int(n)) => {
                if *n < min || *n > max {
                    return Err(bad(format!("out of range {}", self.range())));
                }
                Ok(v.clone())
            }
            (ParamKind::Float { .. }, Value::Int(n)) => self.check(&toml::Value::Float(*n as f64)),
            (ParamKind::Float { .. }, Value::Float(x)) => self.check(&toml::Value::Float(*x)),
            (ParamKind::Bool, Value::Bool(_)) => Ok(v.clone()),
            (ParamKind::Choice(_), Value::Choice(s)) => self.check(&toml::Value::String(s.clone())),
            (ParamKind::Int { .. }, _) => {
                Err(bad(format!("expected an integer in {}", self.range())))
            }
            (ParamKind::Float { .. }, _) => {
                Err(bad(format!("expected a number in {}", self.range())))
            }
            (ParamKind::Bool, _) => Err(bad("expected true or false".into())),
            (ParamKind::Choice(_), _) => Err(bad(format!("expected one of {}", self.range()))),
        }
    }

    /// Parse and check a value as written on a command line (`--size 4096`): the text is read
    /// by this parameter's kind, so that unparsable and negative values get the same message,
    /// naming the key and range, as out-of-range ones.
    pub fn parse(&self, text: &str) -> Result<Value, RegistryError> {
        let t = text.trim();
        let bad = |why: String| RegistryError::BadValue {
            key: self.name.to_string(),
            value: text.to_string(),
            why,
        };
        let v = match self.kind {
            ParamKind::Int { .. } => Value::Int(
                t.parse()
                    .map_err(|_| bad(format!("expected an integer in {}", self.range())))?,
            ),
            ParamKind::Float { .. } => Value::Float(
                t.parse()
                    .map_err(|_| bad(format!("expected a number in {}", self.range())))?,
            ),
            ParamKind::Bool => Value::Bool(
                t.parse()
                    .map_err(|_| bad("expected true or false".to_string()))?,
            ),
            ParamKind::Choice(_) => Value::Choice(t.to_string()),
        };
        self.check_value(&v)
    }

    /// Values this parameter refuses: one of the wrong kind and, where the kind allows one, a
    /// value just below and just above its range (the registries' tests drive every declared
    /// parameter's bounds through the real entry points with these).
    pub fn refused_values(&self) -> Vec<Value> {
        match self.kind {
            ParamKind::Int { min, max } => {
                let mut v = vec![Value::Choice("x".into())];
                if min > 0 {
                    v.push(Value::Int(min - 1));
                }
                if max < u64::MAX {
                    v.push(Value::Int(max + 1));
                }
                v
            }
            ParamKind::Float { min, max } => {
                let mut v = vec![Value::Bool(true)];
                if min.is_finite() {
                    v.push(Value::Float(min - 1.0 - min.abs()));
                }
                if max.is_finite() {
                    v.push(Value::Float(max + 1.0 + max.abs()));
                }
                v
            }
            ParamKind::Bool => vec![Value::Int(1)],
            ParamKind::Choice(_) => vec![Value::Choice("no-such-choice".into()), Value::Int(1)],
        }
    }

    /// The parsed default (declarations are checked by each registry's tests).
    pub fn default_value(&self) -> Result<Value, RegistryError> {
        let v: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", self.default))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .ok_or_else(|| RegistryError::BadValue {
                key: self.name.to_string(),
                value: self.default.to_string(),
                why: "the declared default is not a TOML value".into(),
            })?;
        self.check(&v)
    }
}

/// One registered implementation of an extension point; `C` is the constructor type.
pub struct Entry<C: 'static> {
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// The paper and section it implements, as a `docs/papers.md` key (`drp §3`), or the peer
    /// tool it mirrors.
    pub paper: &'static str,
    pub params: &'static [ParamSpec],
    pub build: C,
}

impl<C> Entry<C> {
    /// Validate user-given parameters (unknown keys, types, ranges) and fill in defaults.
    pub fn params(&self, given: &toml::Table) -> Result<Params, RegistryError> {
        for key in given.keys() {
            known_key(self.name, self.params, key)?;
        }
        let mut values = BTreeMap::new();
        for p in self.params {
            let v = match given.get(p.name) {
                Some(v) => p.check(v)?,
                None => p.default_value()?,
            };
            values.insert(p.name, v);
        }
        Ok(Params { values })
    }

    /// [`Entry::params`] for typed values (a command line's parsed options, a Python call's
    /// arguments): see [`check`].
    pub fn check(&self, given: &[(&str, Value)]) -> Result<Params, RegistryError> {
        check(self.name, self.params, given)
    }

    /// The declared parameter `name`.
    pub fn param(&self, name: &str) -> Result<&'static ParamSpec, RegistryError> {
        known_key(self.name, self.params, name)
    }
}

/// The parameter `key` of `specs` (owned by `owner`), or the error naming the nearest one.
fn known_key(
    owner: &str,
    specs: &'static [ParamSpec],
    key: &str,
) -> Result<&'static ParamSpec, RegistryError> {
    specs
        .iter()
        .find(|p| p.name == key)
        .ok_or_else(|| RegistryError::UnknownKey {
            key: key.to_string(),
            owner: owner.to_string(),
            nearest: nearest(key, specs.iter().map(|p| p.name)).map(String::from),
            valid: specs.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
        })
}

/// Validate typed values against the parameters `specs` of `owner` (unknown keys, kinds,
/// ranges) and fill in the defaults of those not given; a key given twice keeps its last
/// value. For parameter sets that are not a registry entry of their own (a scene read from a
/// file takes the built-in scenes' parameters).
pub fn check(
    owner: &str,
    specs: &'static [ParamSpec],
    given: &[(&str, Value)],
) -> Result<Params, RegistryError> {
    let mut values = BTreeMap::new();
    for (key, v) in given {
        let p = known_key(owner, specs, key)?;
        values.insert(p.name, p.check_value(v)?);
    }
    for p in specs {
        if !values.contains_key(p.name) {
            values.insert(p.name, p.default_value()?);
        }
    }
    Ok(Params { values })
}

/// Validated parameters of one entry: every declared parameter has a value of its kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, Value>,
}

impl Params {
    /// An integer parameter. Panics if `name` is not a declared integer parameter (a
    /// programming error in the entry's constructor, caught by its tests).
    pub fn int(&self, name: &str) -> u64 {
        match self.values.get(name) {
            Some(Value::Int(v)) => *v,
            other => panic!("parameter `{name}` is not a declared integer ({other:?})"),
        }
    }
    /// A real parameter (same contract as [`Params::int`]).
    pub fn float(&self, name: &str) -> f64 {
        match self.values.get(name) {
            Some(Value::Float(v)) => *v,
            other => panic!("parameter `{name}` is not a declared number ({other:?})"),
        }
    }
    /// A boolean parameter (same contract as [`Params::int`]).
    pub fn bool(&self, name: &str) -> bool {
        match self.values.get(name) {
            Some(Value::Bool(v)) => *v,
            other => panic!("parameter `{name}` is not a declared bool ({other:?})"),
        }
    }
    /// A choice parameter (same contract as [`Params::int`]).
    pub fn choice(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some(Value::Choice(v)) => v,
            other => panic!("parameter `{name}` is not a declared choice ({other:?})"),
        }
    }
    /// Every value, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.values.iter().map(|(k, v)| (*k, v))
    }
}

/// Why a name or parameter was refused.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("unknown {kind} `{name}`{}; known: {valid}", suggest(nearest))]
    UnknownName {
        kind: String,
        name: String,
        nearest: Option<String>,
        valid: String,
    },
    #[error(
        "unknown parameter `{key}` of `{owner}`{}; parameters: {valid}",
        suggest(nearest)
    )]
    UnknownKey {
        key: String,
        owner: String,
        nearest: Option<String>,
        valid: String,
    },
    #[error("parameter `{key}` = {value}: {why}")]
    BadValue {
        key: String,
        value: String,
        why: String,
    },
}

fn suggest(n: &Option<String>) -> String {
    match n {
        Some(n) => format!(" (did you mean `{n}`?)"),
        None => String::new(),
    }
}

/// The entry named `name` of an extension point called `kind` in messages.
pub fn find<'a, C>(
    entries: &'a [Entry<C>],
    kind: &str,
    name: &str,
) -> Result<&'a Entry<C>, RegistryError> {
    entries
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| RegistryError::UnknownName {
            kind: kind.to_string(),
            name: name.to_string(),
            nearest: nearest(name, entries.iter().map(|e| e.name)).map(String::from),
            valid: entries
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo
/// (at most a third of the longer name's length, and at least one edit allowed).
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d <= (word.len().max(c.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance over bytes (insertions, deletions, substitutions and transpositions of two
/// neighbours, each one edit), case-insensitively; `_` and `-` are the same.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let norm = |c: u8| match c.to_ascii_lowercase() {
        b'_' => b'-',
        x => x,
    };
    let a: Vec<u8> = a.bytes().map(norm).collect();
    let b: Vec<u8> = b.bytes().map(norm).collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let mut v = (d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]))
                    .min(d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                v
            };
        }
    }
    d[a.len() * w + b.len()]
}

/// Render an extension point's entries and their parameters as plain text (for `describe`).
pub fn describe<C>(e: &Entry<C>) -> String {
    let mut s = format!("{}: {}\n  implements: {}\n", e.name, e.description, e.paper);
    if e.params.is_empty() {
        s.push_str("  no parameters\n");
    }
    for p in e.params {
        s.push_str(&describe_param(p));
    }
    s
}

/// One parameter as [`describe`] lists it: `  name = default unit  [range]  doc`.
pub fn describe_param(p: &ParamSpec) -> String {
    let unit = if p.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", p.unit)
    };
    format!(
        "  {} = {}{unit}  [{}]  {}\n",
        p.name,
        p.default,
        p.range(),
        p.doc
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "rob",
            kind: ParamKind::Int { min: 1, max: 4096 },
            default: "64",
            unit: "entries",
            doc: "reorder buffer",
        },
        ParamSpec {
            name: "deps",
            kind: ParamKind::Choice(&["none", "chain"]),
            default: "\"none\"",
            unit: "",
            doc: "dependences",
        },
        ParamSpec {
            name: "ratio",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: "0.5",
            unit: "",
            doc: "a fraction",
        },
    ];
    const ENTRIES: &[Entry<fn() -> u32>] = &[Entry {
        name: "ooo",
        description: "out-of-order",
        paper: "champsim",
        params: SPECS,
        build: || 1,
    }];

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_fill_in_and_values_are_typed() {
        let p = ENTRIES[0].params(&table("rob = 128")).unwrap();
        assert_eq!(p.int("rob"), 128);
        assert_eq!(p.choice("deps"), "none");
        assert_eq!(p.float("ratio"), 0.5);
    }

    #[test]
    fn unknown_key_suggests_the_nearest() {
        let e = ENTRIES[0].params(&table("rbo = 1")).unwrap_err();
        assert!(e.to_string().contains("did you mean `rob`"), "{e}");
        let e = ENTRIES[0].params(&table("zzzzzz = 1")).unwrap_err();
        assert!(!e.to_string().contains("did you mean"), "{e}");
    }

    #[test]
    fn ranges_and_types_are_enforced() {
        for bad in [
            "rob = 0",
            "rob = 5000",
            "rob = -1",
            "rob = \"x\"",
            "ratio = 2.0",
        ] {
            let e = ENTRIES[0].params(&table(bad)).unwrap_err();
            assert!(matches!(e, RegistryError::BadValue { .. }), "{bad}: {e}");
        }
        let e = ENTRIES[0].params(&table("deps = \"chian\"")).unwrap_err();
        assert!(e.to_string().contains("did you mean `chain`"), "{e}");
    }

    #[test]
    fn typed_and_text_values_are_checked_like_toml_ones() {
        let p = ENTRIES[0]
            .check(&[("rob", Value::Int(128)), ("ratio", Value::Int(1))])
            .unwrap();
        assert_eq!((p.int("rob"), p.float("ratio")), (128, 1.0));
        assert_eq!(p.choice("deps"), "none");
        for spec in SPECS {
            for v in spec.refused_values() {
                let e = ENTRIES[0].check(&[(spec.name, v.clone())]).unwrap_err();
                assert!(
                    matches!(&e, RegistryError::BadValue { key, .. } if key == spec.name),
                    "{v}: {e}"
                );
            }
        }
        let e = ENTRIES[0].check(&[("rbo", Value::Int(1))]).unwrap_err();
        assert!(e.to_string().contains("did you mean `rob`"), "{e}");
        let rob = ENTRIES[0].param("rob").unwrap();
        assert_eq!(rob.parse(" 64 ").unwrap(), Value::Int(64));
        for bad in ["-1", "0", "4097", "two", ""] {
            let e = rob.parse(bad).unwrap_err().to_string();
            assert!(e.contains("`rob`") && e.contains("1..=4096"), "{bad}: {e}");
        }
        let e = ENTRIES[0]
            .param("deps")
            .unwrap()
            .parse("chian")
            .unwrap_err();
        assert!(e.to_string().contains("did you mean `chain`"), "{e}");
    }

    #[test]
    fn find_names_the_nearest_entry() {
        assert!(find(ENTRIES, "core model", "ooo").is_ok());
        let Err(e) = find(ENTRIES, "core model", "oo") else {
            panic!("found")
        };
        assert!(
            e.to_string()
                .contains("unknown core model `oo` (did you mean `ooo`?)"),
            "{e}"
        );
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("l2_mshrs", "l2-mshrs"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("chian", "chain"), 1);
    }
}
