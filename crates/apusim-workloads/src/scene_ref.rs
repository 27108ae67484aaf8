//! The scene a rendering job renders: a built-in scene by name, or a scene file of the user's
//! (the TOML that `apusim gen render FILE` reads, docs/workloads.md), so that `apusim run|sim
//! --scene FILE`, a sweep's `scene` points and the Python `run`/`sim` time the user's own
//! scenes on the render pipeline as they do the built-in ones.
//!
//! A job's cache key must name its records exactly, so a [`SceneRef`] carries the FNV-1a hash
//! of the scene's text (for a file, of its text and its directory, where the textures and
//! meshes it imports are found): an edited scene gets fresh keys, and a built-in scene keeps
//! the keys it always had. Imported files are assumed not to change between runs (as the
//! render crate's store of kept passes assumes).

use crate::WorkloadError;
use std::sync::Arc;

/// A rendering job's scene.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SceneRef {
    /// A built-in scene's name, or a scene file's path as given.
    name: Arc<str>,
    /// FNV-1a of the scene's text (a file's with its directory).
    hash: u64,
    /// A scene file rather than a built-in scene.
    file: bool,
}

impl SceneRef {
    /// Built-in scene `name` (a registry name, as `apusim gen render --list` lists them).
    pub fn builtin(name: &str) -> Result<SceneRef, WorkloadError> {
        let e = apusim_render::builtin::find(name)?;
        let text = apusim_render::builtin::get(e.name).unwrap_or(e.name);
        Ok(SceneRef {
            name: Arc::from(e.name),
            hash: apusim_trace::hash::fnv1a(text.as_bytes()),
            file: false,
        })
    }

    /// A built-in scene by name, else the scene file at `name_or_path`, read and parsed now so
    /// that a missing file or a malformed scene is refused (naming the file and line) before
    /// anything runs; a name that is neither says which built-in scene is nearest.
    pub fn resolve(name_or_path: &str) -> Result<SceneRef, WorkloadError> {
        if SceneRef::names_builtin(name_or_path) {
            return SceneRef::builtin(name_or_path);
        }
        if !std::path::Path::new(name_or_path).exists() {
            // Neither: a mistyped built-in name is the likelier mistake, so the registry's
            // message (with the nearest name) comes first.
            if let Err(e) = apusim_render::builtin::find(name_or_path) {
                return Err(WorkloadError::Render(format!(
                    "{e} (and no scene file `{name_or_path}`)"
                )));
            }
        }
        let (src, _) =
            apusim_render::load(name_or_path).map_err(|e| WorkloadError::Render(e.to_string()))?;
        let dir = src
            .dir
            .as_ref()
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()))
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let mut named = src.text.into_bytes();
        named.push(0);
        named.extend_from_slice(dir.as_bytes());
        Ok(SceneRef {
            name: Arc::from(name_or_path),
            hash: apusim_trace::hash::fnv1a(&named),
            file: true,
        })
    }

    /// Whether `name` is a built-in scene's (anything else is taken for a file's path).
    pub fn names_builtin(name: &str) -> bool {
        apusim_render::builtin::get(name).is_some()
    }

    /// The name or path the renderer loads (`apusim_render::load`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it is a scene file of the user's.
    pub fn is_file(&self) -> bool {
        self.file
    }

    /// How the scene appears in a cache key: the built-in name, or `file-` and the file's
    /// stem reduced to file-name-safe characters, then the text's hash.
    pub fn key(&self) -> String {
        let name = if self.file {
            let stem = std::path::Path::new(&*self.name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let safe: String = stem
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .take(40)
                .collect();
            format!("file-{safe}")
        } else {
            self.name.to_string()
        };
        format!("{name}-{:016x}", self.hash)
    }

    /// The short name for labels: a built-in scene's name, a file's stem.
    pub fn label(&self) -> String {
        if self.file {
            std::path::Path::new(&*self.name)
                .file_stem()
                .map_or_else(|| self.name.to_string(), |s| s.to_string_lossy().into())
        } else {
            self.name.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_keyed_by_their_text_and_built_ins_as_before() {
        let lake = SceneRef::resolve("lake").unwrap();
        assert!(!lake.is_file());
        let text = apusim_render::builtin::get("lake").unwrap();
        assert_eq!(
            lake.key(),
            format!("lake-{:016x}", apusim_trace::hash::fnv1a(text.as_bytes()))
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my lake.toml");
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let a = SceneRef::resolve(p).unwrap();
        assert!(a.is_file());
        assert_eq!(a.label(), "my lake");
        assert!(a.key().starts_with("file-my_lake-"), "{}", a.key());
        assert_ne!(a.key(), lake.key());
        // Edited text, another key; the same text again, the same key.
        std::fs::write(&path, text.replace("frames = 3", "frames = 2")).unwrap();
        let b = SceneRef::resolve(p).unwrap();
        assert_ne!(a.key(), b.key());
        assert_eq!(b, SceneRef::resolve(p).unwrap());
        // A malformed scene names its file and line; a missing one the nearest built-in.
        std::fs::write(&path, "name = \"x\"\n[[camera]\n").unwrap();
        let e = SceneRef::resolve(p).unwrap_err().to_string();
        assert!(e.contains("my lake.toml") && e.contains(":2"), "{e}");
        let e = SceneRef::resolve("laek").unwrap_err().to_string();
        assert!(
            e.contains("unknown scene `laek`") && e.contains("`lake`"),
            "{e}"
        );
        let e = SceneRef::resolve("no/such/scene.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no scene file `no/such/scene.toml`"), "{e}");
    }
}
