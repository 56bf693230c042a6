//! Exporters: one module per output format. Every exporter takes finished [`RunResult`]s and
//! never influences the run. [`store`] is the SQLite results store (sweeps and stored runs).
//!
//! [`RunResult`]: ssdlab_stats::RunResult

pub mod csv;
pub mod fio_json;
pub mod store;
pub mod table;

pub use fio_json::{fio_json, fio_json_string};
pub use store::{Store, StoreError};
pub use table::render_table;
