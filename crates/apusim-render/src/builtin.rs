//! The built-in scenes, embedded in the binary, and their registry ([`REGISTRY`]: `apusim gen
//! render --list`, `apusim describe NAME`, the studies' scene lists).

use crate::pipeline::{Options, MAX_H, MAX_W};
use apusim_registry::{Entry, ParamKind, ParamSpec, RegistryError, Value};
use std::sync::LazyLock;

/// The most frames a render job takes (`--frames`, `apusim run --scene --scale`): a thousand
/// frames at the papers' resolution already render for hours; more would only look like a
/// hang.
pub const MAX_FRAMES: u64 = 1000;

/// The parameters of every scene, built-in or read from a file (a render job's: `apusim gen
/// render`, `apusim run --scene`, a mix's rendering job, the Python `run`), checked by
/// [`options`]. The defaults are [`Options::default`]'s (`apusim run --resolution` has its own
/// default, the papers' 1280x1024).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "width",
        kind: ParamKind::Int {
            min: 1,
            max: MAX_W as u64,
        },
        default: "640",
        unit: "pixels",
        doc: "frame width",
    },
    ParamSpec {
        name: "height",
        kind: ParamKind::Int {
            min: 1,
            max: MAX_H as u64,
        },
        default: "400",
        unit: "pixels",
        doc: "frame height",
    },
    ParamSpec {
        name: "frames",
        kind: ParamKind::Int {
            min: 0,
            max: MAX_FRAMES,
        },
        default: "0",
        unit: "frames",
        doc: "frames to render (0: the scene's own count; `run --scene` renders `--scale`)",
    },
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int {
            min: 0,
            max: u64::MAX,
        },
        default: "1",
        unit: "",
        doc: "seed of the procedural content",
    },
];

/// The render settings of scene `scene` (a built-in name or, `None`, a scene file) from
/// `given` (by key of [`PARAMS`]), each checked against its declaration, the rest at their
/// defaults: the one place where a render job's parameters are validated.
pub fn options(scene: Option<&str>, given: &[(&str, Value)]) -> Result<Options, RegistryError> {
    let owner = match scene {
        Some(name) => find(name)?.name,
        None => "scene file",
    };
    let p = apusim_registry::check(owner, PARAMS, given)?;
    let frames = p.int("frames") as u32;
    Ok(Options {
        width: p.int("width") as u32,
        height: p.int("height") as u32,
        frames: (frames > 0).then_some(frames),
        seed: p.int("seed"),
    })
}

/// A resolution as `WIDTHxHEIGHT` (`apusim run --resolution`, the Python `run`'s
/// `resolution`), each side checked against [`PARAMS`]' `width` and `height`.
pub fn parse_resolution(s: &str) -> Result<(u32, u32), RegistryError> {
    let Some((w, h)) = s.split_once(['x', 'X']) else {
        return Err(RegistryError::BadValue {
            key: "resolution".into(),
            value: s.to_string(),
            why: "expected WIDTHxHEIGHT (e.g. 1280x1024)".into(),
        });
    };
    let side = |name: &str, text: &str| -> Result<u32, RegistryError> {
        let spec = PARAMS.iter().find(|p| p.name == name).expect("declared");
        match spec.parse(text)? {
            Value::Int(v) => Ok(v as u32),
            _ => unreachable!("an integer parameter parses to an integer"),
        }
    };
    Ok((side("width", w)?, side("height", h)?))
}

/// Declares [`SCENES`] and [`NAMES_CSV`] from one list of names, each embedding
/// `scenes/NAME.toml`, so the comma-separated list (a `const`, usable as a study option's
/// default) cannot drift from the registry.
macro_rules! scenes {
    ($first:literal $(, $name:literal)* $(,)?) => {
        /// (name, TOML text): one line per built-in scene.
        pub const SCENES: &[(&str, &str)] = &[
            ($first, include_str!(concat!("../scenes/", $first, ".toml"))),
            $(($name, include_str!(concat!("../scenes/", $name, ".toml"))),)*
        ];
        /// The names of [`SCENES`], comma-separated, in registry order (the default scene
        /// list of the gspc studies).
        pub const NAMES_CSV: &str = concat!($first $(, ",", $name)*);
    };
}

scenes!(
    "courtyard",
    "deferred",
    "lake",
    "shooter",
    "racing",
    "postfx",
    "particles",
    "strategy",
);

/// Every built-in scene as an [`Entry`] of the one registry shape: its name, the
/// `description` line of its file, the paper whose pipeline and graphics streams it exercises,
/// the render job's parameters ([`PARAMS`]), and its TOML text as the constructor slot
/// ([`crate::load`] parses it).
pub static REGISTRY: LazyLock<Vec<Entry<&'static str>>> = LazyLock::new(|| {
    SCENES
        .iter()
        .map(|&(name, text)| Entry {
            name,
            // Built once per process, for its life (an `Entry` holds static text).
            description: Box::leak(description(text).into_boxed_str()),
            paper: "gspc §2.1 (the 3D pipeline and its graphics streams)",
            params: PARAMS,
            build: text,
        })
        .collect()
});

/// The registry entry of built-in scene `name`, or an error naming the nearest one.
pub fn find(name: &str) -> Result<&'static Entry<&'static str>, RegistryError> {
    apusim_registry::find(&REGISTRY, "scene", name)
}

/// The names of the built-in scenes, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// The text of a built-in scene.
pub fn get(name: &str) -> Option<&'static str> {
    find(name).ok().map(|e| e.build)
}

/// The `description` line of a scene's TOML text.
pub fn description(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("description = "))
        .map(|d| d.trim_matches('"').to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scene_is_registered_with_its_description() {
        assert_eq!(
            names(),
            [
                "courtyard",
                "deferred",
                "lake",
                "shooter",
                "racing",
                "postfx",
                "particles",
                "strategy"
            ]
        );
        assert_eq!(NAMES_CSV.split(',').collect::<Vec<_>>(), names());
        for e in REGISTRY.iter() {
            assert!(!e.description.is_empty(), "{}", e.name);
            assert!(
                e.build.contains(&format!("name = \"{}\"", e.name)),
                "{}",
                e.name
            );
        }
        let Err(e) = find("lak") else { panic!("found") };
        assert!(e.to_string().contains("did you mean `lake`"), "{e}");
    }

    /// Every declared parameter of every scene is refused out of its range by [`options`],
    /// and every one of them reaches the render settings (none is descriptive only).
    #[test]
    fn every_scene_parameter_is_checked_and_used() {
        let defaults = options(None, &[]).unwrap();
        let d = Options::default();
        assert_eq!(
            (
                defaults.width,
                defaults.height,
                defaults.frames,
                defaults.seed
            ),
            (d.width, d.height, d.frames, d.seed),
            "PARAMS' defaults are Options::default()'s"
        );
        let mut owners: Vec<Option<&str>> = names().into_iter().map(Some).collect();
        owners.push(None);
        for owner in owners {
            let e = options(owner, &[("widht", Value::Int(64))]).unwrap_err();
            assert!(e.to_string().contains("did you mean `width`"), "{e}");
            let params = match owner {
                Some(n) => find(n).unwrap().params,
                None => PARAMS,
            };
            for spec in params {
                for v in spec.refused_values() {
                    match options(owner, &[(spec.name, v.clone())]) {
                        Err(RegistryError::BadValue { key, .. }) if key == spec.name => {}
                        other => panic!("{owner:?} {} = {v}: {other:?}", spec.name),
                    }
                }
                let ParamKind::Int { min, .. } = spec.kind else {
                    panic!("{}: scene parameters are integers", spec.name)
                };
                // A valid value other than the default.
                let v = if spec.default_value() == Ok(Value::Int(min + 1)) {
                    min + 2
                } else {
                    min + 1
                };
                let other = options(owner, &[(spec.name, Value::Int(v))]).unwrap();
                assert_ne!(
                    format!("{other:?}"),
                    format!("{defaults:?}"),
                    "{owner:?}: {} does not reach the render settings",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn resolutions_are_checked_by_width_and_height() {
        assert_eq!(parse_resolution("1280x1024").unwrap(), (1280, 1024));
        assert_eq!(parse_resolution("2560X1600").unwrap(), (2560, 1600));
        for (bad, key) in [
            ("0x0", "width"),
            ("2561x10", "width"),
            ("10x1601", "height"),
            ("-1x10", "width"),
            ("1280", "resolution"),
        ] {
            match parse_resolution(bad) {
                Err(RegistryError::BadValue { key: k, .. }) if k == key => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
