//! The built-in scenes, embedded in the binary (`apusim gen render --list`).

/// (name, TOML text).
pub const SCENES: &[(&str, &str)] = &[
    ("courtyard", include_str!("../scenes/courtyard.toml")),
    ("deferred", include_str!("../scenes/deferred.toml")),
    ("lake", include_str!("../scenes/lake.toml")),
];

/// The text of a built-in scene.
pub fn get(name: &str) -> Option<&'static str> {
    SCENES.iter().find(|s| s.0 == name).map(|s| s.1)
}

/// The `description` line of a built-in scene.
pub fn description(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("description = "))
        .map(|d| d.trim_matches('"').to_string())
        .unwrap_or_default()
}
