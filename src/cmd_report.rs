//! `ssdlab report DB`: the command line of the report of a results store
//! (`crate::store_report`).

use crate::cli::Failure;
use crate::store_report::{report_store, StoreReport};
use clap::Args;
use std::path::PathBuf;

/// `ssdlab report`: gains over the baseline, best stripes and a mix recommendation.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// The results store written by `ssdlab sweep` or `ssdlab study`.
    pub db: PathBuf,
    /// Also export one row per point as CSV to FILE ("-": CSV only, to stdout). Never the store.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Recommend a stripe for a workload mix, e.g. 4k-randread=0.7,128k-seqwrite=0.3.
    #[arg(long, value_name = "WEIGHTS")]
    pub mix: Option<String>,
    /// Judge the mix at this queue depth only (default: geometric mean over all QDs).
    #[arg(long, value_name = "QD", value_parser = crate::cli::positive_u32, requires = "mix")]
    pub qd: Option<u32>,
    /// Only this sweep (default: every sweep in the store).
    #[arg(long, value_name = "NAME")]
    pub sweep: Option<String>,
    /// Print the analysis as one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write one fio JSON file per finished point under DIR, laid out for fio-plot
    /// (DIR/SWEEP/TARGET[-stripe-S]/BS/RW-QD-JOBS.json; see docs/FIO.md). Created if missing.
    #[arg(long, value_name = "DIR")]
    pub fio_json: Option<PathBuf>,
    /// Also write an HTML report (charts, findings, tables, the sweep file) to FILE; see
    /// docs/REPORTS.md. Never the store.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `ssdlab report DB`.
pub fn cmd_report(a: ReportArgs) -> Result<u8, Failure> {
    let ReportArgs {
        db,
        csv,
        mix,
        qd,
        sweep,
        json,
        fio_json,
        html,
    } = a;
    report_store(&StoreReport {
        db,
        csv,
        mix,
        qd,
        sweep,
        json,
        fio_json,
        html,
    })
}
