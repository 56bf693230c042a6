//! The figures `validate --against` and `calibrate --from` read: data files, directories of
//! them, and results stores (their stored single runs as measured figures).

use crate::cli::Failure;
use crate::output;
use anyhow::anyhow;
use ssdlab_calib::data::DataSet;
use ssdlab_calib::stored::{dataset_of_runs, StoredRun};
use ssdlab_calib::MemoryBudget;
use ssdlab_store::Store;
use std::path::PathBuf;

/// The data of `--from` / `--against`: data files, directories of them, and results stores
/// (their stored single runs as measured figures; see `ssdlab_calib::stored`).
pub fn read_data(paths: &[PathBuf], flag: &str) -> Result<Vec<DataSet>, Failure> {
    let mut out = Vec::new();
    for p in paths {
        if ssdlab_store::looks_like_sqlite(p) {
            out.push(read_store(p, flag)?);
        } else {
            out.push(DataSet::read(p).map_err(|e| anyhow!("{flag} {e}"))?);
        }
    }
    Ok(out)
}

/// A results store's single runs as a data set of measured figures; the runs that are not a
/// measurement of one drive are named on stderr with the reason.
fn read_store(p: &std::path::Path, flag: &str) -> Result<DataSet, Failure> {
    let fail = crate::exit::store_failure;
    let st = Store::open_existing(p, true).map_err(fail)?;
    let mut runs = Vec::new();
    for row in st.runs().map_err(fail)? {
        if let Some(result) = st.run_result(row.id).map_err(fail)? {
            runs.push(StoredRun {
                id: row.id,
                label: row.label,
                result,
            });
        }
    }
    if runs.is_empty() {
        return Err(anyhow!(
            "{flag} {}: the store holds no single run (ssdlab run --store, calibrate --target --store); sweep points are not read",
            p.display()
        )
        .into());
    }
    let (ds, skipped) = dataset_of_runs(p, &runs);
    const SHOWN: usize = 5;
    for s in skipped.iter().take(SHOWN) {
        output::note(&format!("{flag} {}: left out {s}", p.display()));
    }
    if skipped.len() > SHOWN {
        output::note(&format!(
            "{flag} {}: … and {} more runs left out",
            p.display(),
            skipped.len() - SHOWN
        ));
    }
    ds.ok_or_else(|| {
        anyhow!(
            "{flag} {}: none of its {} stored runs measured one drive with O_DIRECT to the end",
            p.display(),
            runs.len()
        )
        .into()
    })
}

/// The memory budget figures are simulated in (`validate --max-memory`, a study's check
/// against the findings): `user` when given, else no more than the largest figure needs
/// alone; either way no more than this process may allocate (available memory, cgroup and
/// address-space limits).
pub fn memory_budget(user: Option<u64>) -> MemoryBudget {
    let cap = ssdlab_io::memory::limit(user).map(|l| l.bytes).or(user);
    match (user, cap) {
        (Some(_), Some(b)) => MemoryBudget::Bytes(b),
        _ => MemoryBudget::LargestCase(cap),
    }
}
