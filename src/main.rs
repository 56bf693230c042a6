//! ssdlab: measure real drives and simulate SSDs and RAID 0 arrays with one workload model.
//!
//! This file only calls `src/lib.rs`, whose `cmd_*` modules parse arguments, check them, call
//! the libraries and print; some still hold orchestration of their own (the sweep's parallelism policy,
//! fio's job planning and waves), listed as debt in docs/ARCHITECTURE.md.

use std::process::ExitCode;

fn main() -> ExitCode {
    ssdlab::cli::main()
}
