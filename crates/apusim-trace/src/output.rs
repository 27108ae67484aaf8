//! Files written atomically: data goes to a hidden temporary file beside the target and is
//! renamed over it when complete, so a killed run never leaves half a file under its name.

use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// The directory a file at `path` is created in (`.` for a bare file name).
pub fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file `.NAME.XXXXXX.tmp` in the directory of `path`, to be persisted as `path`.
pub fn temp_beside(path: &Path) -> std::io::Result<NamedTempFile> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir_of(path))
}
