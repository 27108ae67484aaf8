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

/// A temporary file `.NAME.pPID.XXXXXX.tmp` in the directory of `path`, to be persisted as
/// `path`; `PID` is this process's, so that [`sweep_stale`] can tell a file whose writer was
/// killed from one still being written.
pub fn temp_beside(path: &Path) -> std::io::Result<NamedTempFile> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    tempfile::Builder::new()
        .prefix(&format!(".{name}.p{}.", std::process::id()))
        .suffix(".tmp")
        .tempfile_in(dir_of(path))
}

/// A temporary file left unmodified this long is stale whatever its writer's PID says (the
/// PID may have been reused): a live writer writes as it goes.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The writer's PID in the name of a [`temp_beside`] file, or `None` for any other name.
fn writer_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    // `NAME.pPID.XXXXXX`: the PID is the second-to-last dot-separated field.
    let mut fields = rest.rsplitn(3, '.');
    let _random = fields.next()?;
    let pid = fields.next()?.strip_prefix('p')?;
    fields.next()?;
    pid.parse().ok()
}

/// Whether process `pid` is running (Linux: it has a `/proc` entry). Elsewhere nothing is
/// known and only the age of a file decides.
fn alive(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    proc.is_dir().then(|| proc.join(pid.to_string()).exists())
}

/// Remove the temporary files of [`temp_beside`] in `dir` whose writer is gone: its process
/// no longer runs, or the file has not changed for [`STALE_AFTER`]. Files of this process
/// and of running ones are kept, as is everything not named like such a file. Returns how
/// many were removed; a directory that cannot be read removes nothing.
pub fn sweep_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let me = std::process::id();
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = writer_pid(&name) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if (old || alive(pid) == Some(false)) && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// [`sweep_stale`] for a cache directory: once per directory per process (the first time a
/// run uses it), saying on standard error how many files it removed, if any.
pub fn sweep_stale_once(dir: &Path) {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, OnceLock};
    static SWEPT: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    let first = SWEPT
        .get_or_init(|| Mutex::new(BTreeSet::new()))
        .lock()
        .map(|mut s| s.insert(dir.to_path_buf()))
        .unwrap_or(false);
    if first {
        let n = sweep_stale(dir);
        if n > 0 {
            eprintln!(
                "removed {n} temporary file(s) of killed runs from {}",
                dir.display()
            );
        }
    }
}

/// The outputs of one run, committed together. [`Outputs::stage`] writes each in full to a
/// temporary file beside its target ([`temp_beside`]); [`Outputs::reserve`] gives an output
/// streamed while the run proceeds (an LLC trace dump) its temporary file up front;
/// [`Outputs::commit`] renames them all into place only once every one was written. A run
/// that fails or is killed before the commit leaves none of its outputs new: dropped
/// temporary files are removed, and those of a killed process are swept as stale
/// ([`sweep_stale`]). Only the renames, which write nothing, come after the last output is
/// complete.
#[derive(Default)]
pub struct Outputs {
    staged: Vec<(PathBuf, tempfile::TempPath)>,
}

impl Outputs {
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Write `bytes` to a temporary file for `path` (synced to disk, with a normal file's
    /// mode); errors name `path`.
    pub fn stage(&mut self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        let named = |e: std::io::Error, what: &str| {
            std::io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
        };
        let mut tmp = temp_beside(path).map_err(|e| {
            named(
                e,
                &format!(
                    "creating a temporary file in {} for",
                    dir_of(path).display()
                ),
            )
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Temporary files are private (0600); an output gets a normal file's mode.
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| named(e, "writing"))?;
        }
        tmp.write_all(bytes)
            .and_then(|_| tmp.as_file().sync_all())
            .map_err(|e| named(e, "writing"))?;
        self.staged.push((path.to_path_buf(), tmp.into_temp_path()));
        Ok(())
    }

    /// Reserve the temporary file of an output that a writer streams while the run proceeds,
    /// and return its path: the writer fills that path (writing it in place, or renaming a
    /// complete file of its own onto it, as [`AptWriter::create`](crate::apt::AptWriter::create)
    /// does when it finishes) and [`Outputs::commit`] renames it into place at `path` with the
    /// others. Staged outputs are renamed in the order staged or reserved. Uncommitted, the
    /// reserved file is removed, whatever the writer left in it. Errors name `path`.
    pub fn reserve(&mut self, path: &Path) -> std::io::Result<PathBuf> {
        let tmp = temp_beside(path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "creating a temporary file in {} for {}: {e}",
                    dir_of(path).display(),
                    path.display()
                ),
            )
        })?;
        let temp = tmp.into_temp_path();
        let at = temp.to_path_buf();
        self.staged.push((path.to_path_buf(), temp));
        Ok(at)
    }

    /// Rename every staged output into place, in the order staged; returns their paths.
    pub fn commit(self) -> std::io::Result<Vec<PathBuf>> {
        let mut done = Vec::with_capacity(self.staged.len());
        for (path, tmp) in self.staged {
            tmp.persist(&path).map_err(|e| {
                std::io::Error::new(
                    e.error.kind(),
                    format!("renaming into {}: {}", path.display(), e.error),
                )
            })?;
            done.push(path);
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the files in `dir`, sorted.
    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn outputs_appear_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.csv"));
        let names = || names_in(dir.path());
        // Staged but never committed (a failed run): nothing new, no temporary file left.
        let mut o = Outputs::new();
        o.stage(&a, b"{}").unwrap();
        assert!(!a.exists());
        drop(o);
        assert!(names().is_empty(), "{:?}", names());
        // A second output that cannot be written stops the commit of the first.
        let mut o = Outputs::new();
        o.stage(&a, b"{}").unwrap();
        let e = o
            .stage(&dir.path().join("no/such/dir/b.csv"), b"x")
            .unwrap_err();
        assert!(e.to_string().contains("b.csv"), "{e}");
        drop(o);
        assert!(names().is_empty(), "{:?}", names());
        // Both staged: both appear at the commit.
        let mut o = Outputs::new();
        o.stage(&a, b"{}").unwrap();
        o.stage(&b, b"x,y\n").unwrap();
        assert_eq!(names().len(), 2, "only temporary files: {:?}", names());
        assert_eq!(o.commit().unwrap(), vec![a.clone(), b.clone()]);
        assert_eq!(names(), ["a.json", "b.csv"]);
        assert_eq!(std::fs::read(&b).unwrap(), b"x,y\n");
    }

    #[test]
    fn a_reserved_stream_is_committed_with_the_others_or_removed() {
        use crate::apt::{AptReader, AptWriter};
        use crate::{Access, Agent, Op, Stream, TraceHeader};
        let dir = tempfile::tempdir().unwrap();
        let (dump, json) = (dir.path().join("llc.apt"), dir.path().join("r.json"));
        let names = || names_in(dir.path());
        let header = TraceHeader::single(Agent::cpu(0), "t", 0, &[Stream::CpuData], "test");
        let a = Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, 64, 8);
        // The dump streamed to its reserved file and finished (as a run's end does), then a
        // later output that cannot be written: nothing appears, nothing is left behind.
        let mut o = Outputs::new();
        let at = o.reserve(&dump).unwrap();
        assert_ne!(at, dump);
        assert_eq!(at.parent(), Some(dir.path()));
        let mut w = AptWriter::create(&at, &header).unwrap();
        w.write(&a).unwrap();
        w.finish().unwrap();
        assert!(!dump.exists());
        assert!(o
            .stage(&dir.path().join("gone/r.json"), b"{}")
            .unwrap_err()
            .to_string()
            .contains("r.json"));
        drop(o);
        assert!(names().is_empty(), "{:?}", names());
        // A writer that fails mid-stream (dropped unfinished) with the outputs dropped too.
        let mut o = Outputs::new();
        let at = o.reserve(&dump).unwrap();
        let mut w = AptWriter::create(&at, &header).unwrap();
        w.write(&a).unwrap();
        drop(w);
        drop(o);
        assert!(names().is_empty(), "{:?}", names());
        // Everything written: the dump and the JSON appear together, the dump complete.
        let mut o = Outputs::new();
        let at = o.reserve(&dump).unwrap();
        let mut w = AptWriter::create(&at, &header).unwrap();
        for _ in 0..3 {
            w.write(&a).unwrap();
        }
        w.finish().unwrap();
        o.stage(&json, b"{}").unwrap();
        assert_eq!(names().len(), 2, "only temporary files: {:?}", names());
        assert_eq!(o.commit().unwrap(), vec![dump.clone(), json.clone()]);
        assert_eq!(names(), ["llc.apt", "r.json"]);
        let mut r = AptReader::open(&dump).unwrap();
        assert_eq!(crate::collect(&mut r).unwrap().len(), 3);
        // A reservation in a directory that does not exist names the output.
        let e = Outputs::new()
            .reserve(&dir.path().join("no/llc.apt"))
            .unwrap_err();
        assert!(e.to_string().contains("no/llc.apt"), "{e}");
    }

    #[test]
    fn temporary_names_carry_the_writer_s_pid() {
        let dir = tempfile::tempdir().unwrap();
        let t = temp_beside(&dir.path().join("trace.apt")).unwrap();
        let name = t.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(writer_pid(&name), Some(std::process::id()), "{name}");
        assert_eq!(writer_pid(".a.b.p12.XyZ123.tmp"), Some(12));
        for other in ["trace.apt", ".trace.apt.XyZ.tmp", ".x.pabc.Q.tmp", "p1.tmp"] {
            assert_eq!(writer_pid(other), None, "{other}");
        }
    }

    #[test]
    fn stale_temporary_files_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let touch = |n: &str| std::fs::write(dir.path().join(n), b"x").unwrap();
        // A writer that cannot be running (PIDs stay below 2^22 on Linux).
        touch(".k1.apt.p4000000000.AbC123.tmp");
        // This process's own file, a running process's (PID 1) and unrelated names.
        let mine = temp_beside(&dir.path().join("k2.apt")).unwrap();
        touch(".k3.apt.p1.AbC123.tmp");
        touch(".k4.apt.AbC123.tmp");
        touch("k5.apt");
        let removed = sweep_stale(dir.path());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        if alive(1).is_some() {
            assert_eq!(removed, 1, "{left:?}");
            assert!(!left.iter().any(|n| n.starts_with(".k1.")), "{left:?}");
        }
        assert!(mine.path().exists());
        for kept in [".k3.apt.p1.AbC123.tmp", ".k4.apt.AbC123.tmp", "k5.apt"] {
            assert!(left.iter().any(|n| n == kept), "{kept} swept: {left:?}");
        }
        assert_eq!(sweep_stale(&dir.path().join("missing")), 0);
    }
}
