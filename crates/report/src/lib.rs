//! Exporters: one per output format behind one trait ([`export::Exporter`]), chosen by
//! [`export::Format`]. Every exporter takes finished [`RunResult`]s and never influences the run.
//! The SQLite results store is a crate of its own (`ssdlab-store`).
//!
//! [`RunResult`]: ssdlab_stats::RunResult

pub mod csv;
pub mod export;
pub mod fio_json;
pub mod fio_plot;
pub mod fio_text;
pub mod html;
pub mod json;
pub mod limits;
pub mod logs;
pub mod table;
pub mod trim;

pub use export::{
    exporter, ExportError, Exporter, FioJob, FioLatency, Format, Ignored, Report, ReportJob,
};
pub use fio_json::{fio_json, fio_json_plus_string, fio_json_report, fio_json_string, Flavor};
pub use table::{render_table, render_table_styled, TableStyle};
