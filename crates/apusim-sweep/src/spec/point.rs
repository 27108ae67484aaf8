//! One point's settings type-checked into a [`Point`]: inputs, mode, sizes and switches, each
//! error naming the line of the setting at fault.

use super::{
    kind, suggest, InputSpec, Mode, Point, Setting, Settings, Spec, SpecError, DEFAULT_RESOLUTION,
};
use apusim_workloads::mixes::{Frames, SceneRef};
use std::collections::BTreeMap;
use std::path::Path;

impl Spec {
    /// Type-check one point's settings.
    pub(super) fn point(&self, line: usize, s: Settings) -> Result<Point, SpecError> {
        let lines: BTreeMap<String, usize> = s.iter().map(|(k, v)| (k.clone(), v.line)).collect();
        let text = |name: &str| -> Result<Option<String>, SpecError> {
            match s.get(name) {
                None => Ok(None),
                Some(Setting {
                    value: toml::Value::String(v),
                    ..
                }) => Ok(Some(v.clone())),
                Some(Setting { value, line }) => Err(self.err(
                    *line,
                    format!("`{name}` must be a string, not {}", kind(value)),
                )),
            }
        };
        let count = |name: &str, min: i64| -> Result<Option<u64>, SpecError> {
            match s.get(name) {
                None => Ok(None),
                Some(Setting {
                    value: toml::Value::Integer(n),
                    ..
                }) if *n >= min => Ok(Some(*n as u64)),
                Some(Setting {
                    value: toml::Value::Integer(n),
                    line,
                }) => Err(self.err(*line, format!("`{name}` must be at least {min}, not {n}"))),
                Some(Setting { value, line }) => Err(self.err(
                    *line,
                    format!("`{name}` must be a whole number, not {}", kind(value)),
                )),
            }
        };
        let mode = match text("mode")? {
            None => Mode::Functional,
            Some(m) => match m.as_str() {
                "functional" => Mode::Functional,
                "timed" => Mode::Timed,
                "replay" => Mode::Replay,
                "gpu-l1" => Mode::GpuL1,
                other => {
                    return Err(self.err(
                        lines["mode"],
                        format!(
                            "unknown mode `{other}`; expected {}{}",
                            Mode::NAMES.join(" or "),
                            suggest(other, Mode::NAMES.iter().copied())
                        ),
                    ))
                }
            },
        };
        let dir = self.file.parent().unwrap_or(Path::new(""));
        let traces = match s.get("traces") {
            None => None,
            Some(Setting { value, line }) => {
                let list = value
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .and_then(|a| {
                        a.iter()
                            .map(|v| v.as_str().map(|t| resolve_trace(dir, t)))
                            .collect::<Option<Vec<_>>>()
                    })
                    .ok_or_else(|| {
                        self.err(
                            *line,
                            format!(
                                "`traces` must be a non-empty list of file names, not {}",
                                kind(value)
                            ),
                        )
                    })?;
                Some(list)
            }
        };
        let scale = count("scale", 1)?.unwrap_or(1);
        // A count, or `paper` (a mix's only); checked by the scenes' `frames` parameter.
        let frames = match s.get("frames") {
            None => Frames::Scale,
            Some(Setting { value, line }) => {
                let parsed = match value {
                    toml::Value::Integer(n) => Frames::signed_count(*n).map_err(|e| e.to_string()),
                    toml::Value::String(w) => Frames::parse(w).map_err(|e| e.to_string()),
                    other => Err(format!(
                        "a number of frames or \"paper\", not {}",
                        kind(other)
                    )),
                };
                parsed.map_err(|e| self.err(*line, format!("`frames`: {e}")))?
            }
        };
        let resolution = match s.get("resolution") {
            None => None,
            Some(Setting { value, line }) => {
                let r = value
                    .as_str()
                    .ok_or_else(|| format!("a resolution WIDTHxHEIGHT, not {}", kind(value)))
                    .and_then(apusim_experiments::jobs::parse_resolution)
                    .map_err(|e| self.err(*line, format!("`resolution`: {e}")))?;
                Some(r)
            }
        };
        let given: Vec<&str> = ["mix", "traces", "kernel", "scene", "cpu"]
            .into_iter()
            .filter(|k| s.contains_key(*k))
            .collect();
        if given.len() > 1 {
            return Err(self.err(
                given.iter().map(|k| lines[*k]).max().unwrap_or(line),
                format!(
                    "a point has one of `mix`, `traces`, `kernel`, `scene` and `cpu`, not {}",
                    given.join(" and ")
                ),
            ));
        }
        if resolution.is_some() && given != ["scene"] {
            return Err(self.err(
                lines["resolution"],
                "`resolution` is for `scene` points (a frame's size)",
            ));
        }
        match (frames, given.as_slice()) {
            (Frames::Scale, _) | (_, ["mix"]) | (Frames::Count(_), ["scene"]) => {}
            (Frames::Paper, ["scene"]) => {
                return Err(self.err(
                    lines["frames"],
                    "`frames = \"paper\"` is a mix's (its title's frame region in its paper's \
                     table); give a `scene` point a number of frames",
                ))
            }
            _ => {
                return Err(self.err(
                    lines["frames"],
                    "`frames` is the length of a `mix`'s rendering job or a `scene`'s; \
                     `traces`, `kernel` and `cpu` points have their own length",
                ))
            }
        }
        let inputs = if let Some(t) = traces {
            InputSpec::Traces(t)
        } else if let Some(name) = text("mix")? {
            InputSpec::Mix {
                name,
                scale,
                frames,
            }
        } else if let Some(name) = text("kernel")? {
            InputSpec::Kernel { name, scale }
        } else if let Some(name) = text("cpu")? {
            InputSpec::Cpu { name, scale }
        } else if let Some(name) = text("scene")? {
            // A built-in scene by name, else a scene file relative to the spec (as traces).
            let name = if SceneRef::names_builtin(&name) {
                name
            } else {
                dir.join(&name).display().to_string()
            };
            let (width, height) = resolution.unwrap_or(DEFAULT_RESOLUTION);
            let frames = match frames {
                Frames::Count(n) => u64::from(n),
                _ => scale,
            };
            InputSpec::Scene {
                name,
                frames,
                width,
                height,
            }
        } else {
            return Err(self.err(
                line,
                "this point has no inputs: give `mix = \"NAME\"`, `traces = [\"FILE\", ...]`, \
                 `kernel = \"NAME\"`, `scene = \"NAME\"` or `cpu = \"NAME\"`",
            ));
        };
        let preset = text("preset")?;
        let config = text("config")?.map(|c| dir.join(c));
        if preset.is_some() && config.is_some() {
            return Err(self.err(
                lines["config"].max(lines["preset"]),
                "a point has either `preset` or `config`, not both",
            ));
        }
        let switch = |name: &str, default: bool| match s.get(name) {
            None => Ok(default),
            Some(Setting {
                value: toml::Value::Boolean(b),
                ..
            }) => Ok(*b),
            Some(Setting { value, line }) => Err(self.err(
                *line,
                format!("`{name}` must be true or false, not {}", kind(value)),
            )),
        };
        let alone = switch("alone", true)?;
        let sample = switch("sample", false)?;
        let consumption = switch("consumption", false)?;
        let alone_policy = text("alone_policy")?;
        let gpu_read_bypass = match s.get("gpu_read_bypass") {
            None => None,
            Some(Setting { value, line }) => {
                let v = match value {
                    toml::Value::Float(x) => Some(*x),
                    toml::Value::Integer(n) => Some(*n as f64),
                    _ => None,
                };
                match v {
                    Some(x) if (0.0..=1.0).contains(&x) => Some(x),
                    _ => {
                        return Err(self.err(
                            *line,
                            format!(
                                "`gpu_read_bypass` must be a fraction from 0 to 1, not {}",
                                kind(value)
                            ),
                        ))
                    }
                }
            }
        };
        if mode == Mode::GpuL1 {
            // A kernel or a trace of GPU accesses through `apusim gpu-l1 run`'s hierarchy: no
            // system, so no LLC policy, CPU jobs, run lengths, timing or LLC switches.
            let gpu_input = match &inputs {
                InputSpec::Kernel { .. } => true,
                InputSpec::Traces(t) => t.len() == 1 && !t[0].contains('@'),
                _ => false,
            };
            if !gpu_input {
                let name = given.first().copied().unwrap_or("mode");
                return Err(self.err(
                    lines.get(name).copied().unwrap_or(line),
                    "a gpu-l1 point runs a GPGPU `kernel` or one trace of GPU accesses \
                     (`traces = [\"FILE\"]`, no `@agent`)",
                ));
            }
            self.refuse_any(
                &s,
                &[
                    "policy",
                    "scale",
                    "frames",
                    "limit",
                    "warmup",
                    "instructions",
                    "alone",
                    "alone_policy",
                    "sample",
                    "ideal",
                    "ideal_gpu",
                    "gpu_read_bypass",
                    "consumption",
                ],
                "gpu-l1 points (a kernel through the GPU hierarchy of `apusim gpu-l1 run`, \
                 whose settings are `set` keys of its GPU configuration and the kernel's \
                 `size` and `seed`)",
            )?;
            if let (Some(l), true) = (lines.get("size"), matches!(inputs, InputSpec::Traces(_))) {
                return Err(self.err(*l, "`size` is a generated kernel's, not a trace's"));
            }
        } else if let Some(l) = lines.get("size") {
            return Err(self.err(
                *l,
                "`size` is for gpu-l1 points (`mode = \"gpu-l1\"`, a kernel's problem size); \
                 other points size their workload with `scale`",
            ));
        }
        if mode == Mode::Replay {
            // A replay runs a GPU workload's whole LLC stream through the LLC: no CPU jobs,
            // no limit, no timing, no LLC switches.
            let one_stream = match &inputs {
                InputSpec::Scene { .. } | InputSpec::Kernel { .. } => true,
                InputSpec::Traces(t) => t.len() == 1 && !t[0].contains('@'),
                InputSpec::Mix { .. } | InputSpec::Cpu { .. } => false,
            };
            if !one_stream {
                let name = given.first().copied().unwrap_or("mode");
                return Err(self.err(
                    lines.get(name).copied().unwrap_or(line),
                    "a replay point replays a GPU workload alone (`scene` or `kernel`) or one \
                     recorded LLC stream (`traces = [\"FILE\"]`, no `@agent`)",
                ));
            }
            self.refuse_any(
                &s,
                &[
                    "limit",
                    "warmup",
                    "instructions",
                    "alone",
                    "alone_policy",
                    "sample",
                    "ideal",
                    "ideal_gpu",
                    "gpu_read_bypass",
                ],
                "replay points (a GPU workload's whole LLC stream replayed through the LLC \
                 alone)",
            )?;
        } else if let Some(l) = lines.get("consumption") {
            return Err(self.err(
                *l,
                "`consumption` is for replay points (`mode = \"replay\"`)",
            ));
        }
        if mode == Mode::Functional {
            // A functional point's `instructions` is its CPU jobs' length (a mix's, drp §3's
            // method, or a CPU kernel's alone); trace files and GPU workloads alone have no
            // such length.
            if let (Some(l), false) = (
                lines.get("instructions"),
                matches!(inputs, InputSpec::Mix { .. } | InputSpec::Cpu { .. }),
            ) {
                return Err(self.err(
                    *l,
                    "`instructions` of a functional point is the length of its CPU jobs \
                     (`apusim run --mix|--cpu --instructions`); this point runs no mix and no \
                     CPU kernel"
                        .to_string(),
                ));
            }
            if let Some(name) = ["alone", "alone_policy", "sample", "warmup"]
                .into_iter()
                .find(|k| s.contains_key(*k))
            {
                return Err(self.err(
                    lines[name],
                    format!(
                        "`{name}` is for timed points; this point is functional \
                         (set `mode = \"timed\"`)"
                    ),
                ));
            }
        }
        let set = s
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("set.")
                    .map(|k| (k.to_string(), v.value.clone()))
            })
            .collect();
        let default_preset = match mode {
            Mode::GpuL1 => apusim_experiments::bypass_l1::PRESET,
            _ => "4c1g",
        };
        Ok(Point {
            line,
            mode,
            preset: preset.unwrap_or_else(|| default_preset.into()),
            config,
            policy: text("policy")?,
            inputs,
            limit: count("limit", 1)?,
            warmup: count("warmup", 0)?.unwrap_or(0),
            instructions: count("instructions", 1)?,
            seed: count("seed", 0)?,
            alone_policy,
            alone,
            sample,
            ideal: text("ideal")?,
            ideal_gpu: text("ideal_gpu")?,
            gpu_read_bypass,
            consumption,
            size: count("size", 0)?,
            set,
            lines,
        })
    }
}

impl Spec {
    /// Refuse the first of `names` a point's settings `s` hold: "`NAME` is not for `what`",
    /// at the setting's line.
    fn refuse_any(&self, s: &Settings, names: &[&str], what: &str) -> Result<(), SpecError> {
        match names.iter().find_map(|k| s.get(*k).map(|v| (k, v.line))) {
            Some((name, line)) => Err(self.err(line, format!("`{name}` is not for {what}"))),
            None => Ok(()),
        }
    }
}

fn resolve_trace(dir: &Path, t: &str) -> String {
    let (path, agent) = match t.rsplit_once('@') {
        Some((p, a)) if !p.is_empty() => (p, Some(a)),
        _ => (t, None),
    };
    let full = dir.join(path);
    match agent {
        Some(a) => format!("{}@{a}", full.display()),
        None => full.display().to_string(),
    }
}
