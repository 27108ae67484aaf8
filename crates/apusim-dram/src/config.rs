//! Controller-level configuration wrapped around a [`DramSpec`]: address mapping, scheduler,
//! row policy, queue sizes and write-drain watermarks, refresh. Built from a preset, a TOML
//! file, and `key=value` overrides.

use crate::error::DramError;
use crate::scheduler::SchedulerConfig;
use crate::spec::DramSpec;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What happens to a row after a column access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowPolicy {
    /// Leave the row open until a conflicting request (or a refresh) needs the bank.
    Open,
    /// Close the row with an auto-precharge (RDA/WRA) unless another queued request hits it.
    Closed,
}

impl std::str::FromStr for RowPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "open" | "open-page" | "open_page" => Ok(RowPolicy::Open),
            "closed" | "close" | "closed-page" | "close-page" | "closed_page" => {
                Ok(RowPolicy::Closed)
            }
            _ => Err(format!("unknown row policy `{s}` (open, closed)")),
        }
    }
}

/// Everything needed to build a [`crate::MemorySystem`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Preset this configuration came from (or a file name); informational.
    #[serde(default)]
    pub preset: String,
    pub spec: DramSpec,
    /// Address-mapping name (see [`crate::mapping::mapper_names`]).
    pub mapping: String,
    /// Scheduler name (see [`crate::scheduler::REGISTRY`]).
    pub scheduler: String,
    /// Parameters of the scheduler, by name (see [`crate::scheduler::REGISTRY`] and
    /// docs/policies.md), validated against its registry entry; those not given take their
    /// defaults. Overrides set them as `scheduler.KEY=VALUE`.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub scheduler_params: toml::Table,
    pub row_policy: RowPolicy,
    /// Read-queue entries per channel.
    pub read_queue: usize,
    /// Write-queue entries per channel.
    pub write_queue: usize,
    /// Enter write-drain mode when the write queue holds at least this many entries
    /// (default: 80% of the queue, rounded like Ramulator 2: > 0.8 × size).
    pub write_high_watermark: Option<usize>,
    /// Leave write-drain mode when the write queue holds at most this many entries and reads
    /// are waiting (default: < 0.2 × size).
    pub write_low_watermark: Option<usize>,
    /// Most writes one drain serves while reads wait (default: four write queues' worth):
    /// then the bus turns back to the reads, and at least one read is served before the
    /// next drain. The watermark rule alone never ends a drain that a writer refills as fast
    /// as it empties (a GPU whose writes no read paces), and the reads would wait forever;
    /// gem5's controller bounds a drain the same way (`min_writes_per_switch`), DRAMSim3 by
    /// draining only the writes queued when the drain began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_drain_cap: Option<usize>,
    /// Row-hit cap of the `frfcfs-cap` scheduler: column commands to an open row after which
    /// its hits lose priority over older requests to other rows.
    pub row_hit_cap: u32,
    /// Model refresh (REF every tREFI per rank).
    pub refresh: bool,
}

impl DramConfig {
    /// Defaults around a spec: row-bank-rank-column-channel mapping, FR-FCFS, open page,
    /// 32-entry read and write queues, row-hit cap 4, refresh on.
    pub fn new(spec: DramSpec) -> Self {
        DramConfig {
            preset: String::new(),
            spec,
            mapping: "RoBaRaCoCh".into(),
            scheduler: "frfcfs".into(),
            scheduler_params: toml::Table::new(),
            row_policy: RowPolicy::Open,
            read_queue: 32,
            write_queue: 32,
            write_high_watermark: None,
            write_low_watermark: None,
            write_drain_cap: None,
            row_hit_cap: 4,
            refresh: true,
        }
    }

    /// The part of this configuration a scheduler is built from.
    pub fn scheduler_config(&self) -> SchedulerConfig<'_> {
        SchedulerConfig {
            name: &self.scheduler,
            params: &self.scheduler_params,
            row_hit_cap: self.row_hit_cap,
        }
    }

    /// Effective (high, low) write-drain watermarks.
    pub fn watermarks(&self) -> (usize, usize) {
        let q = self.write_queue;
        let high = self.write_high_watermark.unwrap_or((q * 4) / 5 + 1).min(q);
        let low = self.write_low_watermark.unwrap_or(q / 5);
        (high, low)
    }

    /// Effective most writes per drain while reads wait ([`DramConfig::write_drain_cap`]).
    pub fn drain_cap(&self) -> usize {
        self.write_drain_cap.unwrap_or(4 * self.write_queue)
    }

    /// Check the whole configuration: spec, names, queue sizes, watermarks.
    pub fn validate(&self) -> Result<(), DramError> {
        self.spec.validate()?;
        crate::mapping::make_mapper(&self.mapping, &self.spec.org)?;
        crate::scheduler::make_scheduler(&self.scheduler_config())?;
        if self.read_queue == 0 || self.write_queue == 0 {
            return Err(DramError::InvalidConfig(
                "read_queue and write_queue must hold at least one entry".into(),
            ));
        }
        if self.read_queue > 4096 || self.write_queue > 4096 {
            return Err(DramError::InvalidConfig(
                "queues are limited to 4096 entries".into(),
            ));
        }
        let (high, low) = self.watermarks();
        if high == 0 || low >= high {
            return Err(DramError::InvalidConfig(format!(
                "write-drain watermarks need 0 <= low < high <= write_queue, got low {low}, high {high}, queue {}",
                self.write_queue
            )));
        }
        if self.drain_cap() < high - low {
            return Err(DramError::InvalidConfig(format!(
                "write_drain_cap = {}: a drain must be able to take the write queue from its \
                 high watermark ({high}) to its low one ({low}), so at least {}",
                self.drain_cap(),
                high - low
            )));
        }
        if self.row_hit_cap == 0 {
            return Err(DramError::InvalidConfig(
                "row_hit_cap must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// Load a full configuration from a TOML file (same fields as this struct; `spec.org` and
    /// `spec.timing` tables). Unknown keys are refused.
    pub fn from_toml_file(path: &Path) -> Result<Self, DramError> {
        let text = std::fs::read_to_string(path).map_err(|e| DramError::io(path, e))?;
        DramConfig::from_toml(&text, path)
    }

    /// [`DramConfig::from_toml_file`] on text already read; `path` names it in errors and is
    /// the preset name when the text gives none. Not validated (see [`DramConfig::validate`]).
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, DramError> {
        let mut c: DramConfig = toml::from_str(text).map_err(|e| DramError::ConfigFile {
            path: path.to_path_buf(),
            msg: e.to_string(),
        })?;
        if c.preset.is_empty() {
            c.preset = path.display().to_string();
        }
        Ok(c)
    }

    /// Serialize to TOML (the format [`DramConfig::from_toml_file`] reads).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }

    /// Apply one `key=value` override. Keys: any timing name (`tCL`, `tRCD`, `tRRD`, `tFAW`,
    /// `tREFI`, `tCK_ps`, …), organization fields (`channels`, `ranks`, `bank_groups`,
    /// `banks_per_group`/`banks`, `rows`, `columns`), and `mapping`, `scheduler`,
    /// `row_policy`, `read_queue`, `write_queue`, `queue` (both), `write_high`, `write_low`,
    /// `write_drain_cap`, `row_hit_cap`, `refresh` (on/off), and `scheduler.KEY` for a parameter of the
    /// scheduler (the value is read as TOML: `0.9`, `true`, `100000`; a bare word is a
    /// string). Scheduler parameters are checked by [`DramConfig::validate`].
    pub fn apply_override(&mut self, key: &str, value: &str) -> Result<(), DramError> {
        let bad = |msg: &str| DramError::BadOverride {
            key: key.to_string(),
            value: value.to_string(),
            msg: msg.to_string(),
        };
        let num = || -> Result<u64, DramError> {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| bad("expected a non-negative integer"))
        };
        let num32 = || -> Result<u32, DramError> {
            u32::try_from(num()?).map_err(|_| bad("value too large"))
        };
        let lower = key.to_ascii_lowercase().replace('-', "_");
        if let Some(param) = lower
            .strip_prefix("scheduler.")
            .or_else(|| lower.strip_prefix("sched."))
        {
            if param.is_empty() {
                return Err(bad("expected scheduler.PARAMETER=VALUE"));
            }
            self.scheduler_params
                .insert(param.to_string(), toml_value(value.trim()));
            return Ok(());
        }
        let org = &mut self.spec.org;
        match lower.as_str() {
            "mapping" | "address_mapping" => self.mapping = value.to_string(),
            "scheduler" => self.scheduler = value.to_string(),
            "row_policy" | "page_policy" => {
                self.row_policy = value.parse().map_err(|e: String| bad(&e))?
            }
            "read_queue" => self.read_queue = num()? as usize,
            "write_queue" => self.write_queue = num()? as usize,
            "queue" | "queue_size" => {
                self.read_queue = num()? as usize;
                self.write_queue = self.read_queue;
            }
            "write_high" | "write_high_watermark" => {
                self.write_high_watermark = Some(num()? as usize)
            }
            "write_low" | "write_low_watermark" => self.write_low_watermark = Some(num()? as usize),
            "write_drain_cap" | "drain_cap" => self.write_drain_cap = Some(num()? as usize),
            "row_hit_cap" | "cap" => self.row_hit_cap = num32()?,
            "refresh" => {
                self.refresh = match value.to_ascii_lowercase().as_str() {
                    "on" | "true" | "1" | "yes" => true,
                    "off" | "false" | "0" | "no" => false,
                    _ => return Err(bad("expected on/off")),
                }
            }
            "channels" => org.channels = num32()?,
            "ranks" => org.ranks = num32()?,
            "bank_groups" => org.bank_groups = num32()?,
            "banks" | "banks_per_group" => org.banks_per_group = num32()?,
            "rows" => org.rows = num32()?,
            "columns" => org.columns = num32()?,
            _ => {
                let v = num32()?;
                if !self.spec.timing.set_by_name(key, v) {
                    return Err(bad("unknown setting"));
                }
            }
        }
        Ok(())
    }
}

/// `text` as a TOML value (`0.9`, `true`, `100000`, `"x"`), or as a string if it is not one.
fn toml_value(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use crate::presets::preset;

    #[test]
    fn overrides_apply_and_unknown_keys_fail() {
        let mut c = preset("reference").unwrap();
        c.apply_override("tCL", "12").unwrap();
        c.apply_override("nRCD", "13").unwrap();
        c.apply_override("tRRD", "6").unwrap();
        c.apply_override("scheduler", "fcfs").unwrap();
        c.apply_override("row_policy", "closed").unwrap();
        c.apply_override("refresh", "off").unwrap();
        assert_eq!(c.spec.timing.cl, 12);
        assert_eq!(c.spec.timing.rcd, 13);
        assert_eq!((c.spec.timing.rrd_s, c.spec.timing.rrd_l), (6, 6));
        assert!(!c.refresh);
        c.validate().unwrap();
        let e = c.apply_override("tXYZ", "3").unwrap_err().to_string();
        assert!(e.contains("tXYZ=3") && e.contains("unknown"), "{e}");
        assert!(c.apply_override("tCL", "eleven").is_err());
        assert!(c.apply_override("refresh", "maybe").is_err());
    }

    #[test]
    fn scheduler_names_and_parameters_are_checked() {
        let mut c = preset("reference").unwrap();
        c.apply_override("scheduler", "frfcs").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("unknown memory scheduler `frfcs`") && e.contains("did you mean `frfcfs`"),
            "{e}"
        );
        // Spellings and case are forgiven.
        for name in ["FR_FCFS", "fr-fcfs-cap", "FRFCFS"] {
            c.apply_override("scheduler", name).unwrap();
            c.validate().unwrap();
        }
        // A parameter the scheduler does not take.
        c.apply_override("scheduler.cap", "3").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("memory scheduler `frfcfs`") && e.contains("unknown parameter `cap`"),
            "{e}"
        );
        assert_eq!(c.scheduler_params["cap"], toml::Value::Integer(3));
        assert!(c.apply_override("scheduler.", "3").is_err());
    }

    #[test]
    fn override_values_are_read_as_toml() {
        assert_eq!(super::toml_value("0.9"), toml::Value::Float(0.9));
        assert_eq!(super::toml_value("true"), toml::Value::Boolean(true));
        assert_eq!(super::toml_value("12"), toml::Value::Integer(12));
        assert_eq!(super::toml_value("\"x\""), toml::Value::String("x".into()));
        assert_eq!(
            super::toml_value("word"),
            toml::Value::String("word".into())
        );
    }

    #[test]
    fn default_watermarks_follow_ramulator2() {
        let c = preset("reference").unwrap();
        assert_eq!(c.watermarks(), (26, 6));
    }

    #[test]
    fn bad_watermarks_and_names_are_refused() {
        let mut c = preset("reference").unwrap();
        c.write_low_watermark = Some(30);
        assert!(c.validate().is_err());
        let mut c = preset("reference").unwrap();
        c.scheduler = "nope".into();
        assert!(c.validate().unwrap_err().to_string().contains("nope"));
        let mut c = preset("reference").unwrap();
        c.mapping = "nope".into();
        assert!(c.validate().unwrap_err().to_string().contains("nope"));
    }

    #[test]
    fn toml_roundtrip() {
        let c = preset("tap").unwrap();
        let text = c.to_toml();
        let back: super::DramConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, c);
        let mut c = c;
        c.apply_override("scheduler", "frfcfs").unwrap();
        c.apply_override("scheduler.p", "0.5").unwrap();
        c.apply_override("scheduler.mode", "x").unwrap();
        let back: super::DramConfig = toml::from_str(&c.to_toml()).unwrap();
        assert_eq!(back, c);
    }
}
