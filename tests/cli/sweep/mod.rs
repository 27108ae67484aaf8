//! `apusim sweep` and `apusim results` as a user drives them: a grid recorded into a results
//! database whatever the thread count, specs refused before anything runs, a sweep killed
//! with SIGKILL and completed by the next start, `run --db` under a sweep's key, pivots.
//!
//! A file per subject; the helpers below are what both files use.

mod grid;
mod studies;

use apusim_sweep::Store;
use std::collections::BTreeMap;
use std::path::Path;

pub(crate) const TRACES: &str = "traces = [\"agent0.apt\", \"agent1.apt\", \"agent2.apt\"]\n";

/// Every `ok` run's metric rows by key.
pub(crate) type Metrics = BTreeMap<String, Vec<(String, String, String, String, u64)>>;

pub(crate) fn metrics(db: &Path) -> Metrics {
    let s = Store::open_existing(db).unwrap();
    s.runs()
        .unwrap()
        .into_iter()
        .filter(|r| r.run.status == "ok")
        .map(|r| {
            let rows = s
                .metrics(r.id)
                .unwrap()
                .into_iter()
                .map(|m| (m.agent, m.level, m.stream, m.metric, m.value.to_bits()))
                .collect();
            (r.run.key, rows)
        })
        .collect()
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

pub(crate) fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}
