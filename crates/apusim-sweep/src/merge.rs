//! Folding results databases (the shards of a SLURM sweep, or any apusim databases) into one.
//!
//! Each shard is checked whole before anything of it is written: it must be an SQLite file
//! that passes SQLite's integrity check, carry a results schema this build reads, have the
//! `runs` and `metrics` tables with their columns, and be consistent (every metric row belongs
//! to a run recorded `ok`, every status is `ok` or `failed`, the recorded JSON parses). A shard
//! that fails is reported with the reason and skipped. A good shard is merged in one
//! transaction by `INSERT ... SELECT` over the attached file: its runs whose key the database
//! does not hold, or holds only as `failed` while the shard has it `ok`, with their metric rows
//! in their recorded order. Merging a shard again adds nothing.

use crate::store::{Store, SCHEMA_VERSION};
use anyhow::{anyhow, bail, Context, Result};
use rusqlite::{params, Connection};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What merging one shard did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardMerge {
    pub path: PathBuf,
    /// Runs of the shard written into the database.
    pub added: usize,
    /// Of those, runs that replaced a `failed` attempt the database held.
    pub replaced: usize,
    /// Runs of the shard the database already held (`ok`, or `failed` in both).
    pub present: usize,
    /// Metric rows written with the added runs.
    pub metric_rows: usize,
}

/// What a merge did: the shards merged and the shards skipped, with why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    pub merged: Vec<ShardMerge>,
    pub skipped: Vec<(PathBuf, String)>,
}

impl MergeReport {
    pub fn added(&self) -> usize {
        self.merged.iter().map(|m| m.added).sum()
    }
    pub fn present(&self) -> usize {
        self.merged.iter().map(|m| m.present).sum()
    }
    pub fn metric_rows(&self) -> usize {
        self.merged.iter().map(|m| m.metric_rows).sum()
    }
}

/// The shard files named: files as given, directories as their `*.sqlite` files in name order.
pub fn shard_files(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        if a.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(a)
                .with_context(|| format!("reading shard directory {}", a.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "sqlite"))
                .collect();
            if found.is_empty() {
                bail!("{}: a directory without *.sqlite shards", a.display());
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// Merge `shards` into `store`, each in its own transaction. `progress` is called after each
/// shard with its outcome (for reporting as the merge goes). A shard that cannot be merged is
/// skipped and reported in the result; only an error of the database merged into is an `Err`.
pub fn merge(
    store: &mut Store,
    shards: &[PathBuf],
    mut progress: impl FnMut(&Path, &Result<ShardMerge, String>),
) -> Result<MergeReport> {
    let target = std::fs::canonicalize(store.path()).ok();
    let db = store.path().to_path_buf();
    let conn = store.connection();
    // A larger page cache than SQLite's default 2 MB: the merge reads every page of every
    // shard twice (its integrity check, then the copy).
    conn.execute_batch(
        "PRAGMA cache_size = -65536; CREATE TEMP TABLE IF NOT EXISTS merge_new (sid INTEGER PRIMARY KEY, key TEXT NOT NULL, \
         replaces INTEGER)",
    )
    .with_context(|| format!("preparing {} for a merge", db.display()))?;
    let mut report = MergeReport::default();
    for shard in shards {
        let outcome = merge_one(conn, shard, target.as_deref());
        // A failed merge leaves the shard attached when it failed after attaching it.
        let _ = conn.execute_batch("DETACH DATABASE shard");
        let outcome = outcome.map_err(|e| format!("{e:#}"));
        progress(shard, &outcome);
        match outcome {
            Ok(m) => report.merged.push(m),
            Err(e) => report.skipped.push((shard.clone(), e)),
        }
    }
    Ok(report)
}

const RUN_COLUMNS: &[&str] = &[
    "id",
    "key",
    "sweep",
    "command",
    "mode",
    "params",
    "config",
    "inputs",
    "version",
    "git_commit",
    "host",
    "started",
    "finished",
    "seconds",
    "status",
    "error",
];
const METRIC_COLUMNS: &[&str] = &["run", "agent", "level", "stream", "metric", "value"];

fn merge_one(conn: &mut Connection, shard: &Path, target: Option<&Path>) -> Result<ShardMerge> {
    check_file(shard)?;
    if target.is_some() && std::fs::canonicalize(shard).ok().as_deref() == target {
        bail!("it is the database merged into");
    }
    conn.execute(
        "ATTACH DATABASE ?1 AS shard",
        params![shard.to_string_lossy()],
    )
    .context("not an SQLite database")?;
    check_shard(conn)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute("DELETE FROM temp.merge_new", [])?;
    tx.execute(
        "INSERT INTO temp.merge_new (sid, key, replaces) \
         SELECT s.id, s.key, m.id FROM shard.runs s LEFT JOIN main.runs m ON m.key = s.key \
         WHERE m.id IS NULL OR (m.status = 'failed' AND s.status = 'ok')",
        [],
    )?;
    let total: usize = tx.query_row("SELECT count(*) FROM shard.runs", [], |r| r.get(0))?;
    tx.execute(
        "DELETE FROM main.metrics WHERE run IN \
         (SELECT replaces FROM temp.merge_new WHERE replaces IS NOT NULL)",
        [],
    )?;
    tx.execute(
        "DELETE FROM main.results WHERE run IN \
         (SELECT replaces FROM temp.merge_new WHERE replaces IS NOT NULL)",
        [],
    )?;
    let replaced = tx.execute(
        "DELETE FROM main.runs WHERE id IN \
         (SELECT replaces FROM temp.merge_new WHERE replaces IS NOT NULL)",
        [],
    )?;
    let added = tx.execute(
        "INSERT INTO main.runs (key, sweep, command, mode, params, config, inputs, version, \
         git_commit, host, started, finished, seconds, status, error) \
         SELECT s.key, s.sweep, s.command, s.mode, s.params, s.config, s.inputs, s.version, \
         s.git_commit, s.host, s.started, s.finished, s.seconds, s.status, s.error \
         FROM shard.runs s JOIN temp.merge_new n ON n.sid = s.id ORDER BY s.key",
        [],
    )?;
    let metric_rows = tx.execute(
        "INSERT INTO main.metrics (run, agent, level, stream, metric, value) \
         SELECT r.id, m.agent, m.level, m.stream, m.metric, m.value \
         FROM temp.merge_new n JOIN shard.metrics m ON m.run = n.sid \
         JOIN main.runs r ON r.key = n.key ORDER BY n.sid, m.rowid",
        [],
    )?;
    // Whole results travel with their runs (a shard of schema 2 has none).
    if shard_has_results(&tx)? {
        tx.execute(
            "INSERT INTO main.results (run, format, data) \
             SELECT r.id, x.format, x.data \
             FROM temp.merge_new n JOIN shard.results x ON x.run = n.sid \
             JOIN main.runs r ON r.key = n.key ORDER BY n.sid",
            [],
        )?;
    }
    tx.commit().context("committing the merge")?;
    Ok(ShardMerge {
        path: shard.to_path_buf(),
        added,
        replaced,
        present: total - added,
        metric_rows,
    })
}

/// Whether the attached shard has the `results` table (schema 3 and later).
fn shard_has_results(conn: &Connection) -> Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM shard.sqlite_master WHERE type = 'table' AND name = 'results'",
        [],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// A shard must be a non-empty file that starts as every SQLite database does (attaching a
/// missing file would create it; attaching an empty one would give an empty database).
fn check_file(shard: &Path) -> Result<()> {
    let mut f = std::fs::File::open(shard).map_err(|e| anyhow!("cannot open it: {e}"))?;
    if !f.metadata()?.is_file() {
        bail!("not a file");
    }
    let mut head = [0u8; 16];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    if n == 0 {
        bail!("an empty file, not an apusim results database");
    }
    if &head[..n] != b"SQLite format 3\0" {
        bail!("not an SQLite database (no SQLite header)");
    }
    Ok(())
}

/// The attached shard's schema version, tables and columns, SQLite integrity and row
/// consistency.
fn check_shard(conn: &Connection) -> Result<()> {
    let version: i64 = conn
        .pragma_query_value(Some("shard"), "user_version", |r| r.get(0))
        .context("not a readable SQLite database")?;
    let ok: Vec<String> = conn
        .prepare("PRAGMA shard.integrity_check(20)")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .context("corrupt (SQLite's integrity check cannot read it)")?;
    if ok != ["ok"] {
        bail!("corrupt (SQLite's integrity check: {})", ok.join("; "));
    }
    if version > SCHEMA_VERSION {
        bail!(
            "written by a newer apusim (results schema {version}; this apusim reads schema \
             {SCHEMA_VERSION} and older)"
        );
    }
    if version < 1 {
        bail!("an SQLite database but not an apusim results database (no results schema version)");
    }
    for (table, want) in [("runs", RUN_COLUMNS), ("metrics", METRIC_COLUMNS)] {
        let have: Vec<String> = conn
            .prepare(&format!("PRAGMA shard.table_info({table})"))
            .and_then(|mut s| {
                s.query_map([], |r| r.get::<_, String>(1))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })?;
        if have.is_empty() {
            bail!("not an apusim results database (no `{table}` table)");
        }
        let missing: Vec<&str> = want
            .iter()
            .copied()
            .filter(|c| !have.iter().any(|h| h == c))
            .collect();
        if !missing.is_empty() {
            bail!(
                "not an apusim results database (`{table}` lacks {})",
                missing.join(", ")
            );
        }
    }
    if shard_has_results(conn)? {
        let have: Vec<String> =
            conn.prepare("PRAGMA shard.table_info(results)")
                .and_then(|mut s| {
                    s.query_map([], |r| r.get::<_, String>(1))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })?;
        if have != ["run", "format", "data"] {
            bail!(
                "not an apusim results database (`results` has columns {})",
                have.join(", ")
            );
        }
        let orphans: i64 = conn.query_row(
            "SELECT count(*) FROM shard.results x LEFT JOIN shard.runs r ON r.id = x.run \
             WHERE r.id IS NULL OR r.status <> 'ok' OR typeof(x.data) <> 'blob'",
            [],
            |r| r.get(0),
        )?;
        if orphans > 0 {
            bail!("inconsistent: {orphans} stored results of no `ok` run, or not bytes");
        }
    }
    let checks: &[(&str, &str)] = &[
        (
            "SELECT count(*) FROM shard.metrics WHERE run NOT IN (SELECT id FROM shard.runs)",
            "metric rows of no run",
        ),
        (
            "SELECT count(*) FROM shard.metrics m JOIN shard.runs r ON r.id = m.run \
             WHERE r.status <> 'ok'",
            "metric rows of runs not recorded `ok`",
        ),
        (
            "SELECT count(*) FROM shard.runs WHERE status NOT IN ('ok', 'failed') \
             OR key IS NULL OR key = ''",
            "runs without a key or with a status other than `ok` and `failed`",
        ),
        (
            "SELECT count(*) FROM shard.runs WHERE NOT json_valid(params) \
             OR NOT json_valid(config) OR NOT json_valid(inputs)",
            "runs whose recorded parameters, configuration or inputs are not JSON",
        ),
        (
            "SELECT count(*) FROM (SELECT key FROM shard.runs GROUP BY key HAVING count(*) > 1)",
            "keys recorded more than once",
        ),
        (
            "SELECT count(*) FROM shard.metrics WHERE typeof(value) NOT IN ('real', 'integer')",
            "metric values that are not numbers",
        ),
    ];
    for (sql, what) in checks {
        let n: i64 = conn
            .query_row(sql, [], |r| r.get(0))
            .with_context(|| format!("checking for {what}"))?;
        if n > 0 {
            bail!("inconsistent: {n} {what}");
        }
    }
    Ok(())
}
