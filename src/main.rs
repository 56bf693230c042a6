//! ssdlab: measure real drives and simulate SSDs and RAID 0 arrays with one workload model.
//!
//! This binary is glue only: parse arguments, build a validated plan, call the libraries, print.

mod cli;
mod cmd_sweep;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
