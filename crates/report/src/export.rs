//! The output seam: one [`Exporter`] per format behind one trait (in the manner of hyperfine's
//! `export` module). The command line picks a [`Format`] (`--output-format`) and asks
//! [`exporter`] for it; it never formats anything itself.
//!
//! | format | exporter | what it writes |
//! |---|---|---|
//! | `table` | [`TableExporter`] | the terminal table (Unicode borders, or plain ASCII) |
//! | `json` | [`JsonExporter`] | fio's JSON (`--output-format=json`) with ssdlab's extras |
//! | `json+` | [`JsonExporter`] | fio's JSON+ (latency histograms as `bins`) |
//! | `csv` | [`CsvExporter`] | one row per run and op kind |
//! | `normal` | [`NormalExporter`] | fio's normal text output |
//! | `html` | [`crate::html::HtmlExporter`] | one self-contained HTML page with SVG charts |
//!
//! Log files are exporters too ([`LogExporter`], one per file: kind and job), listed by
//! [`crate::logs::LogRequest::files`]. A new format is one more [`Format`] variant and one more
//! implementation; nothing else changes.
//!
//! Every exporter takes a [`Report`]: the runs, each with how fio names and groups it when it
//! came from an fio job (`ssdlab fio`: the job's name, reporting group, options as written).
//! `ssdlab run`, sweeps and `report --fio-json` pass bare results ([`Exporter::serialize`]);
//! their jobs are named after their spec.

use crate::fio_json::{fio_json_report, Flavor};
use crate::fio_text::normal_text;
use crate::logs::{render_log, LogKind};
use crate::table::{render_table_styled, TableStyle};
use ssdlab_stats::RunResult;
use ssdlab_workload::OpKind;

/// How one run appears in fio's outputs when it is an fio job (or a clone of one, or a
/// reporting group of them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioJob {
    /// The job's name (fio's `jobname`).
    pub name: String,
    /// Its reporting group (`groupid`).
    pub group: u32,
    /// Clones reported together (fio's `jobs=` of the normal text).
    pub members: u32,
    /// The job's own options as written (fio's "job options").
    pub options: Vec<(String, String)>,
    /// fio's `description`.
    pub description: Option<String>,
    /// fio's one-line job description (`name: (g=0): rw=…`), printed first by the normal text.
    pub header: String,
    /// Options of the job ssdlab does not support, ignored at the user's request
    /// (`--ignore-unsupported`): listed in every output of the job.
    pub ignored: Vec<Ignored>,
    /// fio's `unified_rw_reporting`: the job's I/O of every direction as one `mixed`
    /// direction (`Some` for `mixed` and `both`).
    pub mixed: Option<ssdlab_stats::OpSummary>,
    /// With `mixed`: leave the read, write and trim directions out (`unified_rw_reporting=mixed`;
    /// `both` keeps them).
    pub mixed_only: bool,
    /// fio's `kb_base`: 1000 prints decimal units first in the normal text (0 or 1024: binary).
    pub kb_base: u64,
    /// fio's `job_runtime` of a reporting group: the sum of its members' runtimes (fio adds
    /// their `total_run_time`); `None`: the run's own runtime.
    pub job_runtime_ns: Option<u64>,
    /// fio's `continue_on_error` names a class of errors: the outputs give fio's tally of
    /// the errors (`total_err`, `first_error`).
    pub continue_on_error: bool,
    /// fio's latency keys as its options set them (`None`: from the result alone).
    pub latency: Option<FioLatency>,
}

/// fio's `latency_*` keys of a job as its options give them (fio reports them with or
/// without a target: `latency_depth` is then `iodepth` as written).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FioLatency {
    /// `iodepth` as written (where the search, if any, could go).
    pub iodepth: u32,
    /// `latency_target`, ns (0: none).
    pub target_ns: u64,
    /// `latency_percentile`.
    pub percentile: f64,
    /// `latency_window`, µs.
    pub window_us: u64,
}

/// fio's `latency_*` keys of a result: (depth, target ns, percentile, window µs).
pub(crate) fn latency_keys(r: &RunResult, fio: Option<&FioJob>) -> (u32, u64, f64, u64) {
    match fio.and_then(|f| f.latency) {
        Some(l) => (
            r.latency_depth
                .filter(|_| l.target_ns > 0)
                .unwrap_or(l.iodepth),
            l.target_ns,
            l.percentile,
            l.window_us,
        ),
        None => {
            let lt = r.spec.latency_target;
            (
                r.latency_depth.unwrap_or(r.spec.qd),
                lt.map_or(0, |t| t.target_ns),
                lt.map_or(100.0, |t| t.percentile),
                lt.map_or(0, |t| t.window_ns / 1000),
            )
        }
    }
}

/// An option of an fio job that was ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignored {
    /// The key as written.
    pub option: String,
    /// Where: `FILE line N` or `command line argument N`.
    pub at: String,
    /// Why ssdlab does not support it.
    pub why: String,
}

/// One run of a [`Report`].
#[derive(Debug, Clone, Copy)]
pub struct ReportJob<'a> {
    pub result: &'a RunResult,
    /// `Some` for fio jobs; plain runs are named after their spec.
    pub fio: Option<&'a FioJob>,
}

/// What an exporter turns into one output: the runs, in order, and the `[global]` options of
/// fio job files (fio's "global options"; empty for plain runs).
#[derive(Debug, Clone, Default)]
pub struct Report<'a> {
    pub jobs: Vec<ReportJob<'a>>,
    pub global_options: &'a [(String, String)],
}

impl<'a> Report<'a> {
    /// Plain runs (no fio job behind them).
    pub fn of_runs(results: &'a [RunResult]) -> Report<'a> {
        Report {
            jobs: results
                .iter()
                .map(|result| ReportJob { result, fio: None })
                .collect(),
            global_options: &[],
        }
    }

    /// The results, in order.
    pub fn results(&self) -> impl Iterator<Item = &'a RunResult> + '_ {
        self.jobs.iter().map(|j| j.result)
    }
}

/// Something that turns finished runs into the bytes of one output.
pub trait Exporter {
    /// The output for `report` (one document for all its runs).
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError>;

    /// The output for plain runs.
    fn serialize(&self, results: &[RunResult]) -> Result<Vec<u8>, ExportError> {
        self.export(&Report::of_runs(results))
    }
}

/// Why an export cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot format CSV: {0}")]
    Csv(#[from] csv::Error),
}

/// The formats `--output-format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    JsonPlus,
    Csv,
    /// fio's normal text output.
    Normal,
    /// A self-contained HTML report (charts as inline SVG).
    Html,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 6] = [
        Format::Table,
        Format::Json,
        Format::JsonPlus,
        Format::Csv,
        Format::Normal,
        Format::Html,
    ];

    /// The name `--output-format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::JsonPlus => "json+",
            Format::Csv => "csv",
            Format::Normal => "normal",
            Format::Html => "html",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
                format!("unknown output format '{s}' (one of: {})", names.join(", "))
            })
    }
}

/// The exporter for `format`.
pub fn exporter(format: Format, table_style: TableStyle) -> Result<Box<dyn Exporter>, ExportError> {
    Ok(match format {
        Format::Table => Box::new(TableExporter { style: table_style }),
        Format::Json => Box::new(JsonExporter {
            flavor: Flavor::Json,
        }),
        Format::JsonPlus => Box::new(JsonExporter {
            flavor: Flavor::JsonPlus,
        }),
        Format::Csv => Box::new(CsvExporter),
        Format::Normal => Box::new(NormalExporter),
        Format::Html => Box::new(crate::html::HtmlExporter::default()),
    })
}

/// The terminal table, one block per run.
pub struct TableExporter {
    pub style: TableStyle,
}

impl Exporter for TableExporter {
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError> {
        Ok(report
            .results()
            .map(|r| render_table_styled(r, self.style))
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes())
    }
}

/// fio's JSON or JSON+.
pub struct JsonExporter {
    pub flavor: Flavor,
}

impl Exporter for JsonExporter {
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError> {
        Ok(fio_json_report(report, self.flavor)
            .to_fio_string()
            .into_bytes())
    }
}

/// fio's normal text: each job's block, the run status of each reporting group, disk stats.
pub struct NormalExporter;

impl Exporter for NormalExporter {
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError> {
        Ok(normal_text(report).into_bytes())
    }
}

/// The columns of [`CsvExporter`], in order.
pub const RUN_CSV_COLUMNS: [&str; 27] = [
    "target_kind",
    "target",
    "rw",
    "read_pct",
    "bs",
    "align",
    "qd",
    "jobs",
    "op",
    "ios",
    "bytes",
    "runtime_ms",
    "iops",
    "bw_bytes",
    "mb_s",
    "slat_mean_ns",
    "clat_mean_ns",
    "lat_mean_ns",
    "lat_min_ns",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_max_ns",
    "lat_stddev_ns",
    "errors",
    "short_ios",
    "interrupted",
];

/// One row per run and op kind that did I/O (or failed), with the headline figures.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(RUN_CSV_COLUMNS)?;
        for r in report.results() {
            for kind in OpKind::ALL {
                let o = r.op(kind);
                if o.ios == 0 && o.errors == 0 {
                    continue;
                }
                let p = |q: f64| {
                    o.lat
                        .percentile(q)
                        .map(|v| v.to_string())
                        .unwrap_or_default()
                };
                let f = |v: f64| format!("{v:.3}");
                let s = &r.spec;
                w.write_record([
                    r.target.kind.to_string(),
                    r.target.name.clone(),
                    s.rw.to_string(),
                    s.read_pct.to_string(),
                    s.bs.to_string(),
                    s.align.to_string(),
                    s.qd.to_string(),
                    s.jobs.to_string(),
                    kind.as_str().to_string(),
                    o.ios.to_string(),
                    o.bytes.to_string(),
                    f(o.runtime_ns as f64 / 1e6),
                    f(o.iops),
                    f(o.bw_bytes),
                    f(o.mb_s()),
                    f(o.slat.mean),
                    f(o.clat.mean),
                    f(o.lat.mean),
                    o.lat.min.to_string(),
                    p(50.0),
                    p(99.0),
                    p(99.9),
                    o.lat.max.to_string(),
                    f(o.lat.stddev),
                    o.errors.to_string(),
                    o.short_ios.to_string(),
                    r.interrupted.to_string(),
                ])?;
            }
        }
        w.flush().map_err(csv::Error::from)?;
        w.into_inner()
            .map_err(|e| ExportError::Csv(csv::Error::from(e.into_error())))
    }
}

/// One of fio's log files: `kind` of job `job` (1-based).
pub struct LogExporter {
    pub kind: LogKind,
    pub job: u32,
}

impl Exporter for LogExporter {
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError> {
        Ok(report
            .results()
            .map(|r| render_log(r, self.kind, self.job))
            .collect::<String>()
            .into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>().unwrap(), f);
        }
        assert!("xml".parse::<Format>().unwrap_err().contains("json+"));
        assert!(exporter(Format::Html, TableStyle::Unicode).is_ok());
        assert!(exporter(Format::JsonPlus, TableStyle::Ascii).is_ok());
    }

    #[test]
    fn csv_header_only_without_io() {
        let out = CsvExporter.serialize(&[RunResult::default()]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap().trim_end(),
            RUN_CSV_COLUMNS.join(",")
        );
    }
}
