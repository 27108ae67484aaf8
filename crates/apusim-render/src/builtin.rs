//! The built-in scenes, embedded in the binary, and their registry ([`REGISTRY`]: `apusim gen
//! render --list`, `apusim describe NAME`, the studies' scene lists).

use apusim_registry::{Entry, RegistryError};
use std::sync::LazyLock;

/// (name, TOML text): one line per built-in scene.
pub const SCENES: &[(&str, &str)] = &[
    ("courtyard", include_str!("../scenes/courtyard.toml")),
    ("deferred", include_str!("../scenes/deferred.toml")),
    ("lake", include_str!("../scenes/lake.toml")),
];

/// Every built-in scene as an [`Entry`] of the one registry shape: its name, the
/// `description` line of its file, the paper whose pipeline and graphics streams it exercises,
/// no parameters (frame size, frames and seed belong to the render job), and its TOML text as
/// the constructor slot ([`crate::load`] parses it).
pub static REGISTRY: LazyLock<Vec<Entry<&'static str>>> = LazyLock::new(|| {
    SCENES
        .iter()
        .map(|&(name, text)| Entry {
            name,
            // Built once per process, for its life (an `Entry` holds static text).
            description: Box::leak(description(text).into_boxed_str()),
            paper: "gspc §2.1 (the 3D pipeline and its graphics streams)",
            params: &[],
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
        assert_eq!(names(), ["courtyard", "deferred", "lake"]);
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
}
