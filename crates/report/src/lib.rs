//! Exporters: one module per output format. Every exporter takes finished [`RunResult`]s and
//! never influences the run.
//!
//! [`RunResult`]: ssdlab_stats::RunResult

pub mod fio_json;
pub mod table;

pub use fio_json::{fio_json, fio_json_string};
pub use table::render_table;
