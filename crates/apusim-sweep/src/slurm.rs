//! Sweeps as SLURM job arrays: a [`Shard`] selects a deterministic slice of a sweep's keys, a
//! [`BatchJob`] is the batch script whose array tasks each run one slice into its own shard
//! database, and [`submit`] hands it to `sbatch`.

use crate::job::Job;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Slice `index` of `count`: with the sweep's keys sorted, every `count`-th key from the
/// `index`-th. The slices of `0/N` to `(N-1)/N` partition the keys, whatever order the spec
/// lists its points in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parse `I/N` (`0 <= I < N`).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}`: expected I/N with 0 <= I < N, e.g. 3/10");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The keys of this slice among `keys`.
    pub fn keys<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
        let sorted: BTreeSet<&str> = keys.into_iter().collect();
        sorted
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count == self.index)
            .map(|(_, k)| k)
            .collect()
    }

    /// Keep the jobs of this slice.
    pub fn select(&self, jobs: Vec<Job>) -> Vec<Job> {
        let keep: BTreeSet<String> = self
            .keys(jobs.iter().map(|j| j.key.as_str()))
            .into_iter()
            .map(String::from)
            .collect();
        jobs.into_iter().filter(|j| keep.contains(&j.key)).collect()
    }
}

/// The shard database of array task `index` in `dir`.
pub fn shard_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("shard-{index}.sqlite"))
}

/// A sweep as a SLURM job array.
#[derive(Clone, Debug)]
pub struct BatchJob {
    /// The job's name (`apusim-` and the sweep's name).
    pub name: String,
    /// The apusim executable the tasks run (absolute).
    pub exe: PathBuf,
    /// The sweep spec (absolute).
    pub spec: PathBuf,
    /// Array tasks, one shard each.
    pub tasks: usize,
    /// Threads of each task (`--cpus-per-task` and the task's `-j`).
    pub threads: usize,
    /// Where the shards and the tasks' output go (absolute; on a file system the compute
    /// nodes share).
    pub shard_dir: PathBuf,
    pub partition: Option<String>,
    /// Time limit of each task, in a form `sbatch --time` takes.
    pub time: Option<String>,
    /// Further options of each task's `apusim sweep` (the trace cache).
    pub extra: Vec<String>,
}

impl BatchJob {
    /// The batch script; refuses an option value sbatch cannot read from a `#SBATCH` line (one
    /// with a double quote or a line break).
    pub fn script(&self) -> Result<String> {
        let mut s = String::from("#!/bin/bash\n");
        let mut bad = None;
        let mut opt = |k: &str, v: &str| {
            if v.contains(['"', '\n', '\r']) {
                bad = Some(format!(
                    "--{k} {v:?}: sbatch cannot read a double quote or a line break in it"
                ));
            }
            // sbatch splits a `#SBATCH` line at white space outside double quotes.
            if v.contains(char::is_whitespace) {
                s.push_str(&format!("#SBATCH --{k}=\"{v}\"\n"));
            } else {
                s.push_str(&format!("#SBATCH --{k}={v}\n"));
            }
        };
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        opt("job-name", &name);
        opt("array", &format!("0-{}", self.tasks.saturating_sub(1)));
        opt("ntasks", "1");
        opt("cpus-per-task", &self.threads.to_string());
        opt(
            "output",
            &self.shard_dir.join("slurm-%A_%a.out").display().to_string(),
        );
        if let Some(p) = &self.partition {
            opt("partition", p);
        }
        if let Some(t) = &self.time {
            opt("time", t);
        }
        if let Some(e) = bad {
            bail!(e);
        }
        s.push_str(&format!(
            "# apusim sweep {} as {} array tasks: task I runs slice I/{} of the sweep's points\n\
             # (see --shard) into its own shard database; `apusim results merge` folds the\n\
             # shards into one.\n",
            self.spec.display(),
            self.tasks,
            self.tasks,
        ));
        s.push_str("set -eu\n");
        s.push_str(&format!(
            "exec {} sweep {} --shard \"$SLURM_ARRAY_TASK_ID/{}\" \\\n    --db {}\"$SLURM_ARRAY_TASK_ID\".sqlite -j {}",
            quote(&self.exe.display().to_string()),
            quote(&self.spec.display().to_string()),
            self.tasks,
            quote(&self.shard_dir.join("shard-").display().to_string()),
            self.threads,
        ));
        for e in &self.extra {
            s.push(' ');
            s.push_str(&quote(e));
        }
        s.push('\n');
        Ok(s)
    }

    /// The shard databases the tasks write.
    pub fn shards(&self) -> Vec<PathBuf> {
        (0..self.tasks)
            .map(|i| shard_path(&self.shard_dir, i))
            .collect()
    }
}

/// A word quoted for the shell (single quotes unless it needs none).
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// How a submission ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub job_id: String,
    /// With `wait`: whether every array task ended with exit code 0.
    pub all_ok: bool,
}

/// Submit `script` with `sbatch --parsable` (and `--wait`: return when every task has ended).
pub fn submit(script: &Path, wait: bool) -> Result<Submitted> {
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable");
    if wait {
        cmd.arg("--wait");
    }
    cmd.arg(script);
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "--slurm submits with SLURM's `sbatch`, which is not on PATH: run on a SLURM \
             login node, start a local cluster (scripts/slurm-local.sh start), or print the \
             batch script with --dry-run"
        ),
        Err(e) => return Err(e).context("running sbatch"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `--parsable` prints `ID` or `ID;CLUSTER` on the first line.
    let job_id = stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .and_then(|l| l.split(';').next())
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .map(String::from);
    match job_id {
        None => bail!(
            "sbatch {} failed ({}): {}{}",
            script.display(),
            out.status,
            stderr.trim(),
            stdout.trim()
        ),
        Some(job_id) => {
            if !out.status.success() && !wait {
                bail!(
                    "sbatch {} (job {job_id}) failed ({}): {}",
                    script.display(),
                    out.status,
                    stderr.trim()
                );
            }
            Ok(Submitted {
                job_id,
                all_ok: out.status.success(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_parse_and_bad_ones_are_refused() {
        assert_eq!(
            Shard::parse("3/10"),
            Ok(Shard {
                index: 3,
                count: 10
            })
        );
        assert_eq!(Shard::parse("0/1"), Ok(Shard { index: 0, count: 1 }));
        for bad in ["10/10", "1/0", "a/3", "3", "-1/3", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slices_partition_the_keys_whatever_their_order() {
        let keys: Vec<String> = (0..23).map(|i| format!("{:032x}", i * 7919)).collect();
        let mut reversed = keys.clone();
        reversed.reverse();
        let mut union = BTreeSet::new();
        for i in 0..4 {
            let s = Shard { index: i, count: 4 };
            let a = s.keys(keys.iter().map(String::as_str));
            let b = s.keys(reversed.iter().map(String::as_str));
            assert_eq!(a, b);
            assert!(a.len() == 5 || a.len() == 6, "{}", a.len());
            for k in a {
                assert!(union.insert(k), "{k} in two slices");
            }
        }
        assert_eq!(union.len(), keys.len());
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(quote("/a/b.sqlite"), "/a/b.sqlite");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }
}
