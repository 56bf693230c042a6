//! ssdlab: measure real drives and simulate SSDs and RAID 0 arrays with one workload model.
//!
//! This binary is glue only (see `src/lib.rs`): parse arguments, build a validated plan, call the
//! libraries, print.

use std::process::ExitCode;

fn main() -> ExitCode {
    ssdlab::cli::main()
}
