//! The `ssdlab` command line: argument parsing, validation and output around the libraries
//! (`ssdlab-engine`, `ssdlab-target`, `ssdlab-sweep`, `ssdlab-report`, …). A library target so
//! the command glue can be tested directly (`tests/cli_glue.rs`); `src/main.rs` only calls
//! [`cli::main`].

pub mod cli;
pub mod cmd_calibrate;
pub mod cmd_fio;
pub mod cmd_layout;
pub mod cmd_report;
pub mod cmd_run;
pub mod cmd_study;
pub mod cmd_sweep;
pub mod cmd_validate;
pub mod exit;
pub mod figures;
pub mod output;
pub mod results;
pub mod signals;
pub mod standing;
pub mod status;
pub mod store_report;
pub mod sweeping;
