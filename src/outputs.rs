//! A command's `--json` and `--csv` outputs: staged in temporary files and renamed into place
//! together once all are written.

use crate::args::OutputArgs;
use anyhow::Result;
use apusim_trace::output::Outputs;

/// Write `--json` and `--csv` files when asked for, committed together.
pub(super) fn write_outputs(
    out: &OutputArgs,
    json: impl FnOnce() -> Result<String>,
    csv: impl FnOnce() -> String,
) -> Result<()> {
    commit_outputs(stage_outputs(out, json, csv)?)
}

/// `--json` and `--csv` written to their temporary files, for [`commit_outputs`] (other
/// outputs of the run may be staged beside them first).
pub(super) fn stage_outputs(
    out: &OutputArgs,
    json: impl FnOnce() -> Result<String>,
    csv: impl FnOnce() -> String,
) -> Result<Outputs> {
    stage_outputs_into(Outputs::new(), out, json, csv)
}

/// [`stage_outputs`] beside the outputs already in `staged` (a run's reserved LLC dump).
pub(super) fn stage_outputs_into(
    mut staged: Outputs,
    out: &OutputArgs,
    json: impl FnOnce() -> Result<String>,
    csv: impl FnOnce() -> String,
) -> Result<Outputs> {
    if let Some(p) = &out.json {
        staged.stage(p, json()?.as_bytes())?;
    }
    if let Some(p) = &out.csv {
        staged.stage(p, csv().as_bytes())?;
    }
    Ok(staged)
}

/// Rename a run's staged outputs into place together, once all were written (a run that
/// fails or is killed before leaves none of them new), and say which were written.
pub(super) fn commit_outputs(staged: Outputs) -> Result<()> {
    for p in staged.commit()? {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
