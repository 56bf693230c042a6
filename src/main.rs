//! ssdlab: measure real drives and simulate SSDs and RAID 0 arrays with one workload model.
//!
//! This file only calls `src/lib.rs`, whose `cmd_*` modules parse arguments, check them, call
//! the libraries and print; the binary still holds orchestration of its own (the sweep's
//! parallelism policy in `src/sweeping.rs`, fio's job planning and waves in `src/cmd_fio.rs`),
//! listed as debt in docs/ARCHITECTURE.md.

use std::process::ExitCode;

fn main() -> ExitCode {
    ssdlab::cli::main()
}
