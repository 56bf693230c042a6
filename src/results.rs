//! Finished runs kept in a results store (`--store`).

use crate::cli::{Failure, EXIT_FAILED};
use anyhow::anyhow;
use ssdlab_stats::RunResult;
use std::path::Path;

/// Checks the path of `--store` before anything runs: a missing file must be creatable, an
/// existing one a regular file (whether it is an ssdlab store is checked when it is opened).
pub fn check_store_path(path: &Path) -> Result<(), Failure> {
    ssdlab_target::check_file_or_new("--store", path).map_err(|e| anyhow!(e).into())
}

/// Adds a finished run to the results store of `--store` (a failure to write it is exit 1).
pub(crate) fn keep(
    store: &mut Option<ssdlab_store::Store>,
    path: Option<&Path>,
    label: Option<&str>,
    r: &RunResult,
) -> Result<(), Failure> {
    let Some(path) = path else { return Ok(()) };
    if store.is_none() {
        *store = Some(ssdlab_store::Store::open(path).map_err(|e| Failure::new(EXIT_FAILED, e))?);
    }
    let Some(st) = store else { return Ok(()) };
    let label = label
        .map(str::to_string)
        .unwrap_or_else(|| format!("{} {}", r.target.name, r.spec.summary()));
    st.insert_run(&label, r)
        .map_err(|e| Failure::new(EXIT_FAILED, e))?;
    Ok(())
}
