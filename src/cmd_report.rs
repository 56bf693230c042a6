//! `ssdlab report DB`: the command line of the report of a results store
//! (`crate::store_report`).

use crate::cli::Failure;
pub use crate::store_report::ReportArgs;

/// `ssdlab report DB`.
pub fn cmd_report(a: ReportArgs) -> Result<u8, Failure> {
    crate::store_report::report_store(&a)
}
