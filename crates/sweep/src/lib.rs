//! Sweeps: a TOML file gives a matrix (targets × stripes × workloads × queue depths × repeats);
//! [`SweepSpec`] validates it, [`SweepSpec::points`] expands it into ordered [`Point`]s with stable
//! keys, [`run_sweep`] runs the missing ones into the SQLite results store
//! ([`ssdlab_report::store::Store`]), and [`Analysis`] computes gains over the single-drive
//! baseline, the best stripe per workload and a recommendation for a workload mix.
//!
//! The function that runs one point is given by the caller, so this crate knows neither the engine
//! nor the simulator.

pub mod analysis;
pub mod point;
pub mod render;
pub mod runner;
pub mod spec;

pub use analysis::{parse_mix, Analysis, BestStripe, Cell, MixRecommendation};
pub use point::Point;
pub use render::{render_analysis, render_mix, render_points, render_runs};
pub use runner::{run_sweep, PointRunner, RunOpts, SweepSummary};
pub use spec::{DriveState, NamedWorkload, PointTarget, SweepSpec, TargetSpec, SHORTHANDS};

use ssdlab_report::store::StoreError;
use std::path::Path;
use thiserror::Error;

/// Errors of sweep files, mixes and sweep runs.
#[derive(Debug, Error)]
pub enum SweepError {
    /// Not valid TOML, or an unknown/missing key (the message names it).
    #[error("{0}")]
    Toml(String),
    #[error("{field}: {why}")]
    Field { field: String, why: String },
    #[error("{path}: {why}")]
    File { path: String, why: String },
    #[error("{path}: {source}")]
    InFile {
        path: String,
        #[source]
        source: Box<SweepError>,
    },
    #[error("target '{label}': {why}")]
    Target { label: String, why: String },
    #[error("--mix: {0}")]
    Mix(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SweepError {
    pub(crate) fn field(field: &str, why: impl Into<String>) -> SweepError {
        SweepError::Field {
            field: field.to_string(),
            why: why.into(),
        }
    }

    pub(crate) fn in_file(self, path: &Path) -> SweepError {
        SweepError::InFile {
            path: path.display().to_string(),
            source: Box::new(self),
        }
    }
}
