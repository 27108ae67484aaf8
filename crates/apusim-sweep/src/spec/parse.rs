//! Reading the spec's TOML: shared settings, `[grid]` axes and `[[point]]` tables flattened
//! into settings, each with the line it came from.

use super::{kind, suggest, Axis, Setting, Settings, SpecError, SETTINGS};
use std::path::PathBuf;
use toml_edit::{Item, Table};

pub(super) struct Parser<'t> {
    pub(super) file: PathBuf,
    pub(super) text: &'t str,
}

impl Parser<'_> {
    pub(super) fn err(&self, line: usize, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    /// The 1-based line of byte `offset`.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }

    pub(super) fn span_line(&self, span: Option<std::ops::Range<usize>>) -> usize {
        span.map(|s| self.line(s.start)).unwrap_or(0)
    }

    pub(super) fn key_line(&self, t: &Table, k: &str) -> usize {
        let key_span = t.get_key_value(k).and_then(|(key, _)| key.span());
        let item_span = t.get(k).and_then(|i| i.span());
        self.span_line(key_span.or(item_span))
    }

    /// The settings of a table (the top level's, or a `[[point]]`'s).
    pub(super) fn settings(&self, t: &Table, top: bool) -> Result<Settings, SpecError> {
        let mut out = Settings::new();
        for (k, item) in t.iter() {
            let line = self.key_line(t, k);
            self.setting(k, item, line, &mut out, top)?;
        }
        Ok(out)
    }

    pub(super) fn setting(
        &self,
        k: &str,
        item: &Item,
        line: usize,
        out: &mut Settings,
        top: bool,
    ) -> Result<(), SpecError> {
        if k == "set" {
            return self.overrides(item, line, out);
        }
        if !SETTINGS.contains(&k) {
            let valid = SETTINGS.iter().copied().chain(["set"]).chain(
                if top { &["grid", "point"][..] } else { &[][..] }
                    .iter()
                    .copied(),
            );
            return Err(self.err(line, format!("unknown key `{k}`{}", suggest(k, valid))));
        }
        let value = self.value(item, line, k)?;
        out.insert(k.to_string(), Setting { value, line });
        Ok(())
    }

    /// A `set` table: dotted keys (`llc.policy = ...`) become `set.llc.policy`.
    fn overrides(&self, item: &Item, line: usize, out: &mut Settings) -> Result<(), SpecError> {
        let mut flat = Vec::new();
        self.flatten(item, line, "", &mut flat)?;
        for (k, item, l) in flat {
            let value = self.value(&item, l, &k)?;
            out.insert(format!("set.{k}"), Setting { value, line: l });
        }
        Ok(())
    }

    /// The leaves of a table with their dotted keys; a table written inline as a value
    /// (`core = { model = "ooo" }`) is a leaf.
    fn flatten(
        &self,
        item: &Item,
        line: usize,
        prefix: &str,
        out: &mut Vec<(String, Item, usize)>,
    ) -> Result<(), SpecError> {
        let join = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match item {
            Item::Table(t) => {
                for (k, i) in t.iter() {
                    self.flatten(i, self.key_line(t, k), &join(k), out)?;
                }
            }
            Item::Value(toml_edit::Value::InlineTable(t)) if prefix.is_empty() || t.is_dotted() => {
                for (k, v) in t.iter() {
                    let l = t
                        .get_key_value(k)
                        .and_then(|(key, _)| key.span())
                        .map(|s| self.line(s.start))
                        .unwrap_or(line);
                    self.flatten(&Item::Value(v.clone()), l, &join(k), out)?;
                }
            }
            Item::Value(_) if !prefix.is_empty() => out.push((prefix.to_string(), item.clone(), line)),
            _ => {
                return Err(self.err(
                    line,
                    "`set` must be a table of configuration keys, e.g. set = { \"llc.policy\" = \"srrip\" }",
                ))
            }
        }
        Ok(())
    }

    /// The grid's axes: settings and `set` keys, each a non-empty list.
    pub(super) fn axes(&self, t: &Table) -> Result<Vec<Axis>, SpecError> {
        let mut flat: Vec<(String, Item, usize)> = Vec::new();
        for (k, item) in t.iter() {
            let line = self.key_line(t, k);
            if k == "set" {
                let mut sets = Vec::new();
                self.flatten(item, line, "", &mut sets)?;
                flat.extend(sets.into_iter().map(|(k, i, l)| (format!("set.{k}"), i, l)));
            } else if SETTINGS.contains(&k) {
                flat.push((k.to_string(), item.clone(), line));
            } else {
                let valid = SETTINGS.iter().copied().chain(["set"]);
                return Err(self.err(
                    line,
                    format!("unknown grid axis `{k}`{}", suggest(k, valid)),
                ));
            }
        }
        if flat.is_empty() {
            return Err(self.err(
                self.span_line(t.span()),
                "the grid has no axes: list values, e.g. policy = [\"lru\", \"srrip\"]",
            ));
        }
        let mut axes = Vec::new();
        for (name, item, line) in flat {
            let value = self.value(&item, line, &name)?;
            let toml::Value::Array(values) = value else {
                return Err(self.err(
                    line,
                    format!(
                        "grid axis `{name}` must be a list of values, not {}",
                        kind(&value)
                    ),
                ));
            };
            if values.is_empty() {
                return Err(self.err(
                    line,
                    format!("grid axis `{name}` is empty: the sweep would have no points"),
                ));
            }
            let mut seen: Vec<&toml::Value> = Vec::new();
            for v in &values {
                if seen.contains(&v) {
                    return Err(self.err(line, format!("grid axis `{name}` lists {v} twice")));
                }
                seen.push(v);
            }
            axes.push(Axis {
                name,
                values: values
                    .iter()
                    .map(|v| Setting {
                        value: v.clone(),
                        line,
                    })
                    .collect(),
            });
        }
        Ok(axes)
    }

    /// An item as a plain TOML value.
    fn value(&self, item: &Item, line: usize, key: &str) -> Result<toml::Value, SpecError> {
        let v = match item {
            Item::Value(v) => v,
            _ => {
                return Err(self.err(line, format!("`{key}` must be a value, not a table")));
            }
        };
        let mut v = v.clone();
        v.decor_mut().clear();
        let mut t: toml::Table = toml::from_str(&format!("v = {v}"))
            .map_err(|e| self.err(line, format!("`{key}`: {}", e.message())))?;
        t.remove("v")
            .ok_or_else(|| self.err(line, format!("`{key}` has no value")))
    }
}
