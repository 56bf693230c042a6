//! What a planned job set writes and reads besides its targets' data, for `ssdlab fio`'s check
//! of outputs against inputs before anything runs: the `write_iolog` files ([`iolog_outputs`])
//! and every input ([`inputs`]: job files, includes, targets, traces, the preset file).

use crate::plan::Unit;
use crate::JobSet;
use ssdlab_target::Named;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `write_iolog` files of the units, each once: two jobs writing one are refused (clones of
/// a job share theirs), and each must be a file an I/O log can be written to.
pub fn iolog_outputs<'a>(js: &JobSet, units: &'a [Unit]) -> Result<Vec<&'a Path>, String> {
    let mut logs: BTreeMap<&Path, &str> = BTreeMap::new();
    for u in units {
        if let Some(t) = &u.iolog {
            let name = js.jobs[u.job].name.as_str();
            if let Some(other) = logs.insert(&t.path, name) {
                if other != name {
                    return Err(format!(
                        "write_iolog {}: jobs {other} and {name} both write it (fio: give each job its own)",
                        t.path.display()
                    ));
                }
            }
            ssdlab_engine::check_iolog_target(&t.path)?;
        }
    }
    Ok(logs.into_keys().collect())
}

/// Everything the command reads, named by role: the job `files`, the files they `included`,
/// each unit's real target and `read_iolog` trace, and the preset file of `--sim` (`preset`).
pub fn inputs<'a>(
    files: &'a [PathBuf],
    included: &'a [PathBuf],
    units: &'a [Unit],
    preset: Option<&'a Path>,
) -> Vec<Named<'a>> {
    let mut inputs: Vec<Named<'a>> = files
        .iter()
        .map(|path| Named {
            role: "the job file",
            path,
        })
        .collect();
    inputs.extend(included.iter().map(|path| Named {
        role: "an included job file",
        path,
    }));
    for u in units {
        if let Some((t, _)) = &u.real {
            inputs.extend(t.paths().into_iter().map(|path| Named {
                role: "a job's target",
                path,
            }));
        }
        if let Some(r) = &u.spec.replay {
            inputs.push(Named {
                role: "read_iolog",
                path: &r.trace,
            });
        }
    }
    if let Some(path) = preset {
        inputs.push(Named {
            role: "the preset file",
            path,
        });
    }
    inputs
}
