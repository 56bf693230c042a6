//! Drive presets and simulated targets as every command reads them: a built-in preset by
//! name or a preset file by path, with `--set`-style overrides, drives, stripe, state and host
//! adapter.

use crate::output::note_once;
use anyhow::{anyhow, bail, Result};
use ssdlab_engine::SimTarget;
use std::path::Path;

/// mdadm's default chunk, used for arrays given without --stripe.
pub const DEFAULT_STRIPE: u64 = 512 << 10;

/// A preset given as a path to a TOML file (as opposed to a built-in name): it ends in `.toml`
/// or contains a `/`.
pub fn preset_file(name: &str) -> Option<&Path> {
    (name.ends_with(".toml") || name.contains('/')).then_some(Path::new(name))
}

/// Largest preset file read (real ones are a few KiB).
const MAX_PRESET_FILE: u64 = 1 << 20;

/// Loads a preset by name, or a preset TOML file when the argument is a path to one. The file
/// must be a regular file of reasonable size (a FIFO or a device is never opened).
pub fn load_drive(name: &str) -> Result<ssdlab_ssdsim::DriveConfig> {
    match preset_file(name) {
        Some(p) => {
            let m = std::fs::metadata(p).map_err(|e| anyhow!("preset file {name}: {e}"))?;
            if !m.is_file() {
                bail!("preset file {name}: not a regular file");
            }
            if m.len() > MAX_PRESET_FILE {
                bail!(
                    "preset file {name}: {} bytes; a preset file is at most {MAX_PRESET_FILE}",
                    m.len()
                );
            }
            ssdlab_ssdsim::load_config_file(p).map_err(|e| anyhow!("{e}"))
        }
        None => ssdlab_ssdsim::load_preset(name).map_err(|e| anyhow!("{e}")),
    }
}

/// A simulated target with its overrides applied together and validated.
pub fn sim_target(
    name: &str,
    sets: &[(String, String)],
    drives: u32,
    stripe: Option<u64>,
    state: &str,
    adapter: &ssdlab_ssdsim::AdapterChoice,
) -> Result<SimTarget> {
    let mut drive = load_drive(name)?;
    let what = sets
        .iter()
        .map(|(k, v)| format!("--set {k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let notes = drive.set_all(sets).map_err(|e| anyhow!("{what}: {e}"))?;
    for n in notes {
        note_once(&format!("{name}: {n}"));
    }
    drive.validate()?;
    let state: ssdlab_ssdsim::Precondition = state.parse().map_err(|e| anyhow!("--state: {e}"))?;
    let adapter = adapter.resolve(&drive, drives as usize);
    Ok(SimTarget {
        name: name.to_string(),
        drive,
        drives: drives as usize,
        stripe: if drives > 1 {
            Some(stripe.unwrap_or(DEFAULT_STRIPE))
        } else {
            None
        },
        adapter,
        state,
    })
}
