//! Calibration and validation of simulated drive models.
//!
//! - [`calibrate`](mod@calibrate): the steps of `ssdlab calibrate` from the data to the fitted
//!   preset, run in order by [`calibrate::FitJob`]: the figures fitted, the record and the table
//!   of the fit.
//! - [`data`]: data files of figures (published by reviews and datasheets, or measured by
//!   `ssdlab calibrate`) and of qualitative claims, checked when read.
//! - [`predict`]: each figure's workload simulated on a drive model, through the same engine loop
//!   and result type as `ssdlab run --sim`.
//! - [`validate`](mod@validate): figures compared with their simulations, errors per workload family, claims
//!   checked; the models, figures and claims `ssdlab validate` checks ([`validate::Selection`]).
//! - [`fit`](mod@fit): a model's free parameters fitted to figures (coordinate descent on the mean squared
//!   log error, deterministic and bounded).
//! - [`plan`]: the checks of `ssdlab calibrate` before anything is measured or written (base
//!   preset, fitted name, files read and written, the suite measured on a target).
//! - [`preset_out`]: the fitted model written as a preset, the base preset's text with the fitted
//!   values marked.
//! - [`measure`]: the suite measured on a real file or block device through the engine
//!   (`ssdlab calibrate --target`).
//! - [`stored`]: runs kept in a results store read back as measured figures.
//! - [`suite`]: the characterisation suite `ssdlab calibrate --target` measures, and measuring it
//!   through any [`suite::Measure`] (a real target in the CLI; a hidden simulated drive in the
//!   blind self-test).

pub mod blind;
pub mod calibrate;
pub mod data;
pub mod fit;
pub mod measure;
pub mod plan;
pub mod predict;
pub mod preset_out;
pub mod stored;
pub mod suite;
pub mod validate;

pub use data::{Case, Claim, ClaimKind, DataError, DataSet, Family, Figure, Metric};
pub use fit::{default_params, fit, parse_param, FitResult, Fitted, Param, Range};
pub use predict::{simulate, simulate_all, MemoryBudget, Outcome, PredictOptions};
pub use preset_out::fitted_toml;
pub use validate::{render, validate, validate_with, Validation};
