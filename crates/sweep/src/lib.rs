//! Sweeps: a TOML file gives a matrix (targets × stripes × workloads × queue depths × repeats);
//! [`SweepSpec`] validates it, [`SweepSpec::points`] expands it into ordered [`Point`]s with stable
//! keys, [`run_sweep`] runs the missing ones into the SQLite results store
//! ([`ssdlab_store::Store`]), and [`Analysis`] computes gains over the single-drive
//! baseline, the best stripe per workload and a recommendation for a workload mix.
//!
//! The function that runs one point is given by the caller, so this crate knows neither the engine
//! nor the simulator.
//!
//! [`study`] builds the sweeps of the built-in studies (`ssdlab study stripe|alignment`) and plans
//! the trim study's aging run.

pub mod analysis;
pub mod device;
pub mod findings;
pub mod html;
pub mod latency;
pub mod point;
pub mod points;
pub mod render;
pub mod runner;
pub mod spec;
pub mod study;

pub use analysis::{parse_mix, Analysis, BestStripe, Cell, MixRecommendation};
pub use device::{explain_gain, DeviceSummary, DriveSummary};
pub use findings::TargetInfo;
pub use html::{sweep_sections, SweepHtml};
pub use latency::PointLatency;
pub use point::Point;
pub use points::{PointRunner, PointRunnerOptions, SimTargetFn};
pub use render::{render_analysis, render_mix, render_points, render_runs};
pub use runner::{
    run_one, run_sweep, PointError, PointOutcome, PointPool, RunOpts, RunPointFn, SweepSummary,
};
pub use spec::{
    host_matches, DriveState, History, NamedWorkload, PointTarget, SweepFile, SweepSpec,
    SweepTarget, TargetTable, WorkloadTable, SHORTHANDS,
};

use ssdlab_store::StoreError;
use std::path::Path;
use thiserror::Error;

/// Errors of sweep files, mixes and sweep runs.
///
/// Like [`StoreError`], every message is complete on its own: a wrapped cause is part of the
/// message and not exposed as [`std::error::Error::source`], so `{:#}` never repeats text.
#[derive(Debug, Error)]
pub enum SweepError {
    /// Not valid TOML, or an unknown/missing key (the message names it).
    #[error("{0}")]
    Toml(String),
    #[error("{field}: {why}")]
    Field { field: String, why: String },
    #[error("{path}: {why}")]
    File { path: String, why: String },
    /// An error in the sweep file `path` (the message names the file, then the error).
    #[error("{path}: {error}")]
    InFile {
        path: String,
        error: Box<SweepError>,
    },
    #[error("target '{label}': {why}")]
    Target { label: String, why: String },
    #[error("--mix: {0}")]
    Mix(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SweepError {
    /// True when the results store failed on the file system or the device (disk full, I/O
    /// error): [`StoreError::is_io_failure`]. The CLI reports it with exit code 1, not as bad
    /// input.
    pub fn is_io_failure(&self) -> bool {
        matches!(self, SweepError::Store(e) if e.is_io_failure())
    }

    pub(crate) fn field(field: &str, why: impl Into<String>) -> SweepError {
        SweepError::Field {
            field: field.to_string(),
            why: why.into(),
        }
    }

    pub(crate) fn in_file(self, path: &Path) -> SweepError {
        SweepError::InFile {
            path: path.display().to_string(),
            error: Box::new(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_store::Store;

    /// Formats `e` the way the CLI does (`{:#}`: the message, then its source chain) and checks
    /// that no text is printed twice.
    fn assert_printed_once(e: SweepError, cause: &str) {
        let chain: Vec<String> =
            std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
                .map(|e| e.to_string())
                .collect();
        let full = format!("{:#}", anyhow::Error::from(e));
        assert_eq!(full.matches(cause).count(), 1, "{cause:?} in {full:?}");
        for (i, a) in chain.iter().enumerate() {
            for b in &chain[i + 1..] {
                assert!(!a.contains(b.as_str()), "{full:?} repeats {b:?}");
            }
        }
        assert!(!full.contains('\n'), "{full:?}");
    }

    #[test]
    fn every_error_prints_its_cause_once() {
        let field = || SweepError::field("qd", "must be at least 1");
        // A real SQLite error from the store: its table is gone.
        let store = Store::open_in_memory().unwrap();
        store.connection().execute_batch("DROP TABLE runs").unwrap();
        let sqlite = store.runs().unwrap_err();
        let sqlite_cause = sqlite.to_string();
        assert!(
            sqlite_cause.contains("no such table: runs"),
            "{sqlite_cause}"
        );
        let cases = [
            (SweepError::Toml("unknown key 'wrkload'".into()), "wrkload"),
            (field(), "must be at least 1"),
            (
                SweepError::File {
                    path: "s.toml".into(),
                    why: "cannot read: permission denied".into(),
                },
                "permission denied",
            ),
            (field().in_file(Path::new("s.toml")), "must be at least 1"),
            (field().in_file(Path::new("s.toml")), "s.toml"),
            (
                SweepError::Target {
                    label: "a+b raid0".into(),
                    why: "b.img does not exist".into(),
                },
                "b.img does not exist",
            ),
            (
                SweepError::Mix("the mix is empty".into()),
                "the mix is empty",
            ),
            (
                SweepError::Store(StoreError::Io {
                    path: "r.sqlite".into(),
                    why: "database or disk is full".into(),
                }),
                "database or disk is full",
            ),
            (SweepError::Store(sqlite), "no such table: runs"),
        ];
        for (e, cause) in cases {
            assert_printed_once(e, cause);
        }
    }

    #[test]
    fn io_failures_of_the_store_are_told_apart() {
        let io = SweepError::Store(StoreError::Io {
            path: "r.sqlite".into(),
            why: "database or disk is full".into(),
        });
        assert!(io.is_io_failure());
        let ro = SweepError::Store(StoreError::ReadOnly {
            path: "r.sqlite".into(),
            need: "2 points still need to run".into(),
        });
        assert!(!ro.is_io_failure());
        assert!(!SweepError::field("qd", "must be at least 1").is_io_failure());
    }
}
