//! The results database: one SQLite file of runs and their metrics.
//!
//! `runs` holds one row per run key (the latest attempt): what ran (parameters, resolved
//! configuration as JSON, input identities), which apusim (version, git commit), where
//! (host) and when (start, end, seconds), and how it ended (`ok` or `failed` with the error).
//! `metrics` holds the long-format values of the `ok` runs; `results` holds a run's whole
//! result ([`apusim_sim::timed::stored`], [`apusim_sim::stored`]), from which a study computes
//! its table again without simulating (`apusim study --db`). A run, its metrics and its result are written
//! in one transaction, so a run is in the database whole or not at all; the database is in
//! WAL mode, so a process killed at any moment leaves every committed run readable and loses
//! only the runs it had in flight. The schema's version is `PRAGMA user_version`; a database
//! of a newer schema is refused, an older one is brought up to date when opened.
//!
//! Several sweeps may write one database at once: each claims the keys it is about to run
//! (`claims`: key, host, process), runs only those, and leaves a key another live sweep
//! holds to it; recording a run drops its claim. A claim whose process has died (same host)
//! is taken over, so a sweep killed with SIGKILL blocks nothing.

use crate::metrics::Metric;
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The schema this build writes and reads (2: `claims`; 3: `results`).
pub const SCHEMA_VERSION: i64 = 3;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    sweep TEXT,
    command TEXT NOT NULL,
    mode TEXT NOT NULL,
    params TEXT NOT NULL,
    config TEXT NOT NULL,
    inputs TEXT NOT NULL,
    version TEXT NOT NULL,
    git_commit TEXT NOT NULL,
    host TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT NOT NULL,
    seconds REAL NOT NULL,
    status TEXT NOT NULL,
    error TEXT
);
CREATE TABLE IF NOT EXISTS metrics (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    agent TEXT NOT NULL,
    level TEXT NOT NULL,
    stream TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run);
CREATE INDEX IF NOT EXISTS runs_sweep ON runs(sweep);
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    format TEXT NOT NULL,
    data BLOB NOT NULL
);
";

/// Keys a sweep may run now, and keys another running sweep holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Claimed {
    pub mine: BTreeSet<String>,
    /// Key → holder (`host:pid`).
    pub elsewhere: Vec<(String, String)>,
}

/// Whether process `pid` on this host still runs (`false` when that cannot be known: the
/// claim is then taken over, which at worst runs a point twice).
fn alive(pid: u32) -> bool {
    cfg!(target_os = "linux") && Path::new(&format!("/proc/{pid}")).exists()
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    Failed,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
        }
    }
}

/// One run as recorded.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunRecord {
    pub key: String,
    /// The sweep it belongs to (its spec's name), if any.
    pub sweep: Option<String>,
    /// `sweep`, `run` or `sim`.
    pub command: String,
    /// `functional` or `timed`.
    pub mode: String,
    /// The settings that define the run (policy, mix or traces, preset, overrides, options).
    pub params: serde_json::Value,
    /// The resolved configuration.
    pub config: serde_json::Value,
    /// The input identities.
    pub inputs: Vec<String>,
    pub version: String,
    pub git_commit: String,
    pub host: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub started: String,
    pub finished: String,
    pub seconds: f64,
    pub status: String,
    pub error: Option<String>,
}

impl RunRecord {
    /// A record of a run of this build on this host; `started` and `finished` are the
    /// run's times as seconds since the Unix epoch.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        key: String,
        sweep: Option<String>,
        command: &str,
        mode: &str,
        params: serde_json::Value,
        config: serde_json::Value,
        inputs: Vec<String>,
        times: (std::time::SystemTime, std::time::SystemTime),
        result: Result<(), String>,
    ) -> RunRecord {
        let (status, error) = match result {
            Ok(()) => (Status::Ok, None),
            Err(e) => (Status::Failed, Some(e)),
        };
        RunRecord {
            key,
            sweep,
            command: command.into(),
            mode: mode.into(),
            params,
            config,
            inputs,
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("APUSIM_GIT_COMMIT").into(),
            host: host(),
            started: utc(times.0),
            finished: utc(times.1),
            seconds: times
                .1
                .duration_since(times.0)
                .unwrap_or_default()
                .as_secs_f64(),
            status: status.name().into(),
            error,
        }
    }
}

/// A stored run with its row id.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StoredRun {
    pub id: i64,
    #[serde(flatten)]
    pub run: RunRecord,
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A database's results schema version (`user_version`) and its tables.
/// How long opening a database waits for other processes' locks.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether `e` is SQLite's "busy" or "locked": another connection holds a lock.
fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
}

fn schema_state(conn: &Connection) -> rusqlite::Result<(i64, Vec<String>)> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let mut names = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let tables = names
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((version, tables))
}

impl Store {
    /// Open `path` for recording, creating it (and its schema) when it does not exist.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)
            .with_context(|| format!("opening results database {}", path.display()))?;
        Store::init(conn, path, true)
    }

    /// Open an existing database to read it.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.exists() {
            bail!("{}: no such results database", path.display());
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("opening results database {}", path.display()))?;
        Store::init(conn, path, false)
    }

    fn init(conn: Connection, path: &Path, create: bool) -> Result<Store> {
        conn.busy_timeout(BUSY_WAIT)
            .with_context(|| format!("results database {}", path.display()))?;
        // SQLite waits for a busy lock through the busy handler, except where waiting could
        // deadlock: a connection holding the shared lock that asks for the write lock (the
        // switch to WAL while another process creates the schema) is told "locked" at once.
        // Every step below is safe to repeat, so the whole preparation is retried instead.
        let deadline = std::time::Instant::now() + BUSY_WAIT;
        loop {
            match Store::prepare(&conn, path, create) {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    if !conn.is_autocommit() {
                        let _ = conn.execute_batch("ROLLBACK");
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(e),
                Ok(()) => {
                    return Ok(Store {
                        conn,
                        path: path.to_path_buf(),
                    })
                }
            }
        }
    }

    /// Check the schema version, switch to WAL and create or upgrade the schema.
    fn prepare(conn: &Connection, path: &Path, create: bool) -> Result<()> {
        let what = || format!("results database {}", path.display());
        // The schema version and the tables are read in one read transaction: another
        // process may be creating the schema (one transaction that also sets the version),
        // and two separate reads could see its tables without its version.
        let not_sqlite = || format!("{}: not an SQLite database", path.display());
        conn.execute_batch("BEGIN DEFERRED")
            .with_context(not_sqlite)?;
        let state = schema_state(conn);
        conn.execute_batch("COMMIT").with_context(what)?;
        let (version, tables) = state.with_context(not_sqlite)?;
        if version > SCHEMA_VERSION {
            bail!(
                "{}: written by a newer apusim (results schema {version}; this apusim reads \
                 schema {SCHEMA_VERSION} and older); use a newer apusim or another --db file",
                path.display()
            );
        }
        if version == 0 && !tables.is_empty() {
            bail!(
                "{}: an SQLite database but not an apusim results database (it has tables {} \
                 and no results schema version)",
                path.display(),
                tables.join(", ")
            );
        }
        if version == 0 && !create {
            bail!("{}: an empty database, not apusim results", path.display());
        }
        conn.pragma_update(None, "journal_mode", "WAL")
            .with_context(what)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .with_context(what)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .with_context(what)?;
        if version < SCHEMA_VERSION {
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))
            .with_context(what)?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for the merge's statements over attached shards.
    pub(crate) fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The keys of the runs recorded as `ok`.
    pub fn done_keys(&self) -> Result<BTreeSet<String>> {
        let mut s = self
            .conn
            .prepare("SELECT key FROM runs WHERE status = 'ok'")?;
        let keys = s
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<BTreeSet<_>>>()?;
        Ok(keys)
    }

    /// Claim `keys` for this process, in one transaction: a key no one holds, or whose
    /// holder on this host has died, becomes this process's; a key another live process
    /// holds (or one on another host) is left to it.
    pub fn claim<'a>(&mut self, keys: impl IntoIterator<Item = &'a str>) -> Result<Claimed> {
        let (me, pid) = (host(), std::process::id());
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .with_context(|| format!("writing {}", self.path.display()))?;
        let mut out = Claimed::default();
        for key in keys {
            let holder: Option<(String, u32)> = tx
                .query_row(
                    "SELECT host, pid FROM claims WHERE key = ?1",
                    params![key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            match holder {
                Some((h, p)) if !(h == me && (p == pid || !alive(p))) => {
                    out.elsewhere.push((key.to_string(), format!("{h}:{p}")));
                }
                _ => {
                    tx.execute(
                        "INSERT OR REPLACE INTO claims (key, host, pid) VALUES (?1, ?2, ?3)",
                        params![key, me, pid],
                    )?;
                    out.mine.insert(key.to_string());
                }
            }
        }
        tx.commit()
            .with_context(|| format!("committing to {}", self.path.display()))?;
        Ok(out)
    }

    /// Drop this process's claims that are still open (runs that were never recorded).
    pub fn release(&mut self) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM claims WHERE host = ?1 AND pid = ?2",
                params![host(), std::process::id()],
            )
            .with_context(|| format!("writing {}", self.path.display()))?;
        Ok(())
    }

    /// Record a run and its metrics in one transaction, replacing an earlier attempt with the
    /// same key, and drop the run's claim.
    pub fn record(&mut self, run: &RunRecord, metrics: &[Metric]) -> Result<()> {
        self.record_with(run, metrics, None)
    }

    /// [`Store::record`], with the run's whole result as `(format, bytes)` when there is one.
    pub fn record_with(
        &mut self,
        run: &RunRecord,
        metrics: &[Metric],
        result: Option<(&str, &[u8])>,
    ) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .with_context(|| format!("writing {}", self.path.display()))?;
        let old: Option<i64> = tx
            .query_row(
                "SELECT id FROM runs WHERE key = ?1",
                params![run.key],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = old {
            tx.execute("DELETE FROM metrics WHERE run = ?1", params![id])?;
            tx.execute("DELETE FROM results WHERE run = ?1", params![id])?;
            tx.execute("DELETE FROM runs WHERE id = ?1", params![id])?;
        }
        tx.execute("DELETE FROM claims WHERE key = ?1", params![run.key])?;
        tx.execute(
            "INSERT INTO runs (key, sweep, command, mode, params, config, inputs, version, \
             git_commit, host, started, finished, seconds, status, error) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                run.key,
                run.sweep,
                run.command,
                run.mode,
                serde_json::to_string(&run.params)?,
                serde_json::to_string(&run.config)?,
                serde_json::to_string(&run.inputs)?,
                run.version,
                run.git_commit,
                run.host,
                run.started,
                run.finished,
                run.seconds,
                run.status,
                run.error,
            ],
        )?;
        let id = tx.last_insert_rowid();
        {
            let mut ins = tx.prepare_cached(
                "INSERT INTO metrics (run, agent, level, stream, metric, value) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for m in metrics {
                ins.execute(params![id, m.agent, m.level, m.stream, m.metric, m.value])?;
            }
        }
        if let Some((format, data)) = result {
            tx.execute(
                "INSERT INTO results (run, format, data) VALUES (?1, ?2, ?3)",
                params![id, format, data],
            )?;
        }
        tx.commit()
            .with_context(|| format!("committing to {}", self.path.display()))?;
        Ok(())
    }

    /// The whole result stored with the `ok` run of `key`, as `(format, bytes)`.
    pub fn result(&self, key: &str) -> Result<Option<(String, Vec<u8>)>> {
        self.conn
            .query_row(
                "SELECT x.format, x.data FROM runs r JOIN results x ON x.run = r.id \
                 WHERE r.key = ?1 AND r.status = 'ok'",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .with_context(|| format!("reading {}", self.path.display()))
    }

    /// Every run, ordered by sweep then key (stable whatever order they were recorded in).
    pub fn runs(&self) -> Result<Vec<StoredRun>> {
        let mut s = self.conn.prepare(
            "SELECT id, key, sweep, command, mode, params, config, inputs, version, git_commit, \
             host, started, finished, seconds, status, error FROM runs ORDER BY sweep, key",
        )?;
        let rows = s.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                (
                    r.get::<_, String>(8)?,
                    r.get::<_, String>(9)?,
                    r.get::<_, String>(10)?,
                    r.get::<_, String>(11)?,
                    r.get::<_, String>(12)?,
                    r.get::<_, f64>(13)?,
                    r.get::<_, String>(14)?,
                    r.get::<_, Option<String>>(15)?,
                ),
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, key, sweep, command, mode, params, config, inputs, rest) = row?;
            let (version, git_commit, host, started, finished, seconds, status, error) = rest;
            let json = |s: &str, what: &str| {
                serde_json::from_str(s)
                    .with_context(|| format!("{}: run {key}: bad {what}", self.path.display()))
            };
            out.push(StoredRun {
                id,
                run: RunRecord {
                    params: json(&params, "params")?,
                    config: json(&config, "config")?,
                    inputs: serde_json::from_value(json(&inputs, "inputs")?)?,
                    key,
                    sweep,
                    command,
                    mode,
                    version,
                    git_commit,
                    host,
                    started,
                    finished,
                    seconds,
                    status,
                    error,
                },
            });
        }
        Ok(out)
    }

    /// The metrics of run `id`, in a stable order.
    pub fn metrics(&self, id: i64) -> Result<Vec<Metric>> {
        let mut s = self.conn.prepare_cached(
            "SELECT agent, level, stream, metric, value FROM metrics WHERE run = ?1 \
             ORDER BY agent, level, stream, metric, rowid",
        )?;
        let rows = s
            .query_map(params![id], |r| {
                Ok(Metric {
                    agent: r.get(0)?,
                    level: r.get(1)?,
                    stream: r.get(2)?,
                    metric: r.get(3)?,
                    value: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}

/// This machine's host name.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// A time as UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn utc(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn record(key: &str, status: Result<(), String>) -> RunRecord {
        RunRecord::new(
            key.into(),
            Some("s".into()),
            "sweep",
            "functional",
            serde_json::json!({"policy": "lru"}),
            serde_json::json!({}),
            vec!["job:x".into()],
            (UNIX_EPOCH, UNIX_EPOCH + Duration::from_millis(1500)),
            status,
        )
    }

    /// Another connection holds the write lock of a database still in rollback-journal mode
    /// (a second sweep creating the schema, say): switching to WAL needs that lock, and SQLite
    /// answers "database is locked" at once instead of waiting, since its busy handler is not
    /// called for a lock that could deadlock. Opening waits and succeeds once the lock is gone.
    #[test]
    fn opening_waits_for_a_writer_that_holds_the_lock_the_wal_switch_needs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("BEGIN IMMEDIATE; CREATE TABLE elsewhere (x)")
            .unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            other.execute_batch("DROP TABLE elsewhere; COMMIT").unwrap();
        });
        let store = Store::open(&path);
        release.join().unwrap();
        let store = store.unwrap();
        assert!(store.done_keys().unwrap().is_empty());
        let mode: String = store
            .conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    fn metric(v: f64) -> Metric {
        Metric {
            agent: "cpu0".into(),
            level: "llc".into(),
            stream: "data".into(),
            metric: "reads".into(),
            value: v,
        }
    }

    #[test]
    fn claims_leave_live_holders_their_keys_and_take_over_dead_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let mut s = Store::open(&path).unwrap();
        // A process that has ended: its pid names no running process.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = host();
        for (key, h, pid) in [
            ("live", me.as_str(), 1u32),
            ("dead", me.as_str(), dead),
            ("remote", "another-host", std::process::id()),
        ] {
            s.conn
                .execute(
                    "INSERT INTO claims (key, host, pid) VALUES (?1, ?2, ?3)",
                    params![key, h, pid],
                )
                .unwrap();
        }
        let c = s.claim(["live", "dead", "remote", "free"]).unwrap();
        let mine: Vec<&str> = c.mine.iter().map(String::as_str).collect();
        assert_eq!(mine, ["dead", "free"]);
        let elsewhere: Vec<&str> = c.elsewhere.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(elsewhere, ["live", "remote"]);
        assert_eq!(c.elsewhere[0].1, format!("{me}:1"));
        // Claiming again keeps what this process holds.
        assert_eq!(s.claim(["dead"]).unwrap().mine.len(), 1);
        // Recording a run drops its claim; release drops this process's others.
        s.record(&record("dead", Ok(())), &[]).unwrap();
        let held = |s: &Store| -> Vec<String> {
            let mut q = s
                .conn
                .prepare("SELECT key FROM claims ORDER BY key")
                .unwrap();
            q.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<Vec<String>>>()
                .unwrap()
        };
        assert_eq!(held(&s), ["free", "live", "remote"]);
        s.release().unwrap();
        assert_eq!(held(&s), ["live", "remote"]);
    }

    #[test]
    fn a_schema_1_database_gains_the_claims_table_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            let v1 = SCHEMA
                .split("CREATE TABLE IF NOT EXISTS claims")
                .next()
                .unwrap();
            c.execute_batch(&format!("{v1} PRAGMA user_version = 1;"))
                .unwrap();
        }
        let mut s = Store::open_existing(&path).unwrap();
        let v: i64 = s
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        assert_eq!(s.claim(["k"]).unwrap().mine.len(), 1);
    }

    #[test]
    fn a_schema_2_database_gains_the_results_table_and_results_follow_their_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            let v2 = SCHEMA
                .split("CREATE TABLE IF NOT EXISTS results")
                .next()
                .unwrap();
            c.execute_batch(&format!("{v2} PRAGMA user_version = 2;"))
                .unwrap();
        }
        let mut s = Store::open_existing(&path).unwrap();
        s.record_with(&record("k", Ok(())), &[], Some(("f", b"first")))
            .unwrap();
        assert_eq!(
            s.result("k").unwrap(),
            Some(("f".into(), b"first".to_vec()))
        );
        // A new attempt replaces the result with the run; a failed one leaves none to read.
        s.record_with(&record("k", Ok(())), &[], Some(("f", b"second")))
            .unwrap();
        assert_eq!(s.result("k").unwrap().unwrap().1, b"second");
        s.record(&record("k", Err("boom".into())), &[]).unwrap();
        assert_eq!(s.result("k").unwrap(), None);
        let rows: i64 = s
            .conn
            .query_row("SELECT count(*) FROM results", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0, "no result outlives its run");
    }

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_199_250);
        assert_eq!(utc(t), "2024-02-29T23:59:59.250Z");
    }

    #[test]
    fn records_round_trip_and_replace_earlier_attempts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let mut s = Store::open(&path).unwrap();
        s.record(&record("k1", Err("boom".into())), &[]).unwrap();
        assert!(s.done_keys().unwrap().is_empty());
        s.record(&record("k1", Ok(())), &[metric(3.0), metric(4.0)])
            .unwrap();
        s.record(&record("k2", Ok(())), &[metric(5.0)]).unwrap();
        drop(s);
        let s = Store::open_existing(&path).unwrap();
        let runs = s.runs().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].run.key, "k1");
        assert_eq!(runs[0].run.status, "ok");
        assert_eq!(runs[0].run.seconds, 1.5);
        assert_eq!(runs[0].run.params["policy"], "lru");
        assert_eq!(s.metrics(runs[0].id).unwrap().len(), 2);
        assert_eq!(s.metrics(runs[1].id).unwrap(), vec![metric(5.0)]);
        assert_eq!(s.done_keys().unwrap().len(), 2);
    }

    #[test]
    fn newer_and_foreign_databases_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let newer = dir.path().join("newer.sqlite");
        Store::open(&newer).unwrap();
        let c = Connection::open(&newer).unwrap();
        c.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(c);
        let e = format!("{:#}", Store::open(&newer).err().unwrap());
        assert!(e.contains("newer apusim"), "{e}");
        let foreign = dir.path().join("foreign.sqlite");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t (x INTEGER);")
            .unwrap();
        let e = format!("{:#}", Store::open(&foreign).err().unwrap());
        assert!(e.contains("not an apusim results database"), "{e}");
        let text = dir.path().join("text.sqlite");
        std::fs::write(
            &text,
            "hello, this is not a database at all, not even close",
        )
        .unwrap();
        assert!(Store::open(&text).is_err());
        assert!(Store::open_existing(&dir.path().join("none.sqlite")).is_err());
    }
}
