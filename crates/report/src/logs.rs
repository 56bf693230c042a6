//! fio's log files (`write_bw_log`, `write_iops_log`, `write_lat_log`, `write_hist_log`), one
//! file per kind and job, named as fio names them (`NAME_bw.1.log`, `NAME_iops.1.log`,
//! `NAME_lat.1.log`, `NAME_clat.1.log`, `NAME_slat.1.log`, `NAME_clat_hist.1.log`; with fio's
//! `per_job_logs=0` one `NAME_bw.log` for all jobs) and written as fio 3.33 writes them
//! (`iolog.c`: `flush_samples`, `flush_hist_samples`): `time (ms), value, direction, block size,
//! priority` per line — `time, value, direction, block size, offset, priority` with
//! `log_offset` —, direction 0 = read, 1 = write, 2 = trim, priority 0 (no I/O is of fio's
//! high priority, which only `cmdprio_*` gives), or with fio's `log_prio=1` the I/Os' priority
//! value (`0x%04x`: the job's `prioclass << 13 | prio`; `0x0000` on averaged lines, as fio's).
//!
//! Averaged over windows (`log_avg_msec`, and always in `ssdlab run`):
//! - `bw`: KiB/s over each complete window; `iops`: I/Os per second over each complete window
//!   (fio writes these from its sampling thread at the end of each window, and no line for the
//!   partial window at the end of the run);
//! - `lat`, `clat`, `slat`: the mean latency (ns, rounded) of the I/Os that completed in each
//!   window — the largest with `log_max_value` —, and a last line for the partial window at the
//!   end of the run, as fio's `finalize_logs` writes it;
//! - the block size and offset columns are 0, as in fio's averaged lines.
//!
//! Every I/O (`log_avg_msec=0`, fio's default in job files): a line per completion, with its
//! length and offset — `bw`: `bytes × 10^6 / clat (ns)` (fio's `add_bw_sample`), `iops`: 1,
//! `lat`/`clat`/`slat`: the latency in ns; `slat` lines at the submission time, in that order.
//!
//! A direction without I/O in a window has no line for it, as in fio. Times are milliseconds of
//! measured time (after the ramp), on the simulator's virtual clock for simulated runs.
//!
//! Histogram logs (`clat_hist`): `time, direction, block size, bin0, bin1, …` with fio's
//! `FIO_IO_U_PLAT_NR` (1856) completion-latency bins, `2^log_hist_coarseness` of them added
//! together per column, as fio's `tools/hist/fiologparser_hist.py` reads them.

use ssdlab_stats::fio::PLAT_NR;
use ssdlab_stats::{JobLog, RunResult};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One of fio's log kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
    /// The completion-latency histogram log (`write_hist_log`).
    ClatHist,
}

impl LogKind {
    /// The `ssdlab run` flag that asks for logs of this kind.
    pub fn run_flag(self) -> &'static str {
        match self {
            LogKind::Bw => "--write-bw-log",
            LogKind::Iops => "--write-iops-log",
            _ => "--write-lat-log",
        }
    }

    /// The kind as it appears in fio's file names.
    pub fn as_str(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
            LogKind::ClatHist => "clat_hist",
        }
    }
}

/// The logs asked for: a file-name prefix per kind (`--write-bw-log NAME`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRequest {
    pub bw: Option<PathBuf>,
    pub iops: Option<PathBuf>,
    /// `--write-lat-log`: fio writes `_lat`, `_clat` and `_slat` files for it.
    pub lat: Option<PathBuf>,
}

impl LogRequest {
    /// The averaging window of `ssdlab run --log-avg-msec` (fio's `log_avg_msec`): checked
    /// against the logs asked for (a window needs a log) and the file-name prefixes (each a
    /// file name, not a directory); `None` when no log is asked for, else the window in ms
    /// (default 1000).
    pub fn checked_window(&self, log_avg_msec: Option<u64>) -> Result<Option<u64>, String> {
        if !self.any() {
            if log_avg_msec.is_some() {
                return Err("--log-avg-msec applies to logs: give --write-bw-log, --write-iops-log or --write-lat-log".into());
            }
            return Ok(None);
        }
        for (kind, p) in [
            (LogKind::Bw, &self.bw),
            (LogKind::Iops, &self.iops),
            (LogKind::Lat, &self.lat),
        ] {
            if let Some(p) = p {
                if p.as_os_str().is_empty() || p.to_string_lossy().ends_with('/') {
                    return Err(format!(
                        "{} '{}': give a file name prefix (NAME or DIR/NAME)",
                        kind.run_flag(),
                        p.display()
                    ));
                }
            }
        }
        Ok(Some(log_avg_msec.unwrap_or(1000)))
    }

    /// What the engine keeps for these logs over a run of `spec`, averaged over `msec`.
    pub fn config(
        &self,
        msec: u64,
        spec: &ssdlab_workload::WorkloadSpec,
    ) -> ssdlab_stats::LogConfig {
        let interval_ns = msec.saturating_mul(1_000_000);
        ssdlab_stats::LogConfig {
            interval_ns,
            bw: self.bw.is_some(),
            iops: self.iops.is_some(),
            reserve: (spec.stop.time_ns.unwrap_or(0) / interval_ns).min(1 << 20) as usize,
            ..Default::default()
        }
    }
}

/// `--log-avg-msec MSEC` of `ssdlab run`: whole milliseconds, at least 1 (fio's 0, a line per
/// I/O, is not what `run` keeps), at most a day.
pub fn parse_log_avg_msec(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("0 would log every I/O (fio's log_avg_msec=0); ssdlab logs averages per window of at least 1 ms".into()),
        Ok(v) if v > 86_400_000 => Err(format!("'{s}': at most one day (86400000 ms)")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a whole number of milliseconds")),
    }
}

impl LogRequest {
    /// Whether any log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some()
    }

    /// Every file the logs of a run with `jobs` jobs will be written to, with its kind and job
    /// (1-based), in a fixed order.
    pub fn files(&self, jobs: u32) -> Vec<(PathBuf, LogKind, u32)> {
        let mut out = Vec::new();
        let mut add = |prefix: &Option<PathBuf>, kinds: &[LogKind]| {
            if let Some(p) = prefix {
                for &k in kinds {
                    for job in 1..=jobs {
                        out.push((file_name(p, k, job), k, job));
                    }
                }
            }
        };
        add(&self.bw, &[LogKind::Bw]);
        add(&self.iops, &[LogKind::Iops]);
        add(&self.lat, &[LogKind::Lat, LogKind::Clat, LogKind::Slat]);
        out
    }
}

/// fio's name for the log of `kind` of job `job`: `PREFIX_kind.job.log` next to the prefix.
pub fn file_name(prefix: &Path, kind: LogKind, job: u32) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!("_{}.{job}.log", kind.as_str()));
    PathBuf::from(name)
}

/// fio's name for the log of `kind` that all jobs share (`per_job_logs=0`): `PREFIX_kind.log`.
pub fn shared_file_name(prefix: &Path, kind: LogKind) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!("_{}.log", kind.as_str()));
    PathBuf::from(name)
}

/// How fio writes a job's logs (the job-file options that change the lines). `ssdlab run`'s logs
/// are the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogStyle {
    /// An offset column (`log_offset=1`).
    pub offset: bool,
    /// Averaged latency lines give each window's largest latency (`log_max_value=1`).
    pub max: bool,
    /// Bins added together per column of a histogram log, as a power of two
    /// (`log_hist_coarseness`, 0 to 6).
    pub hist_coarseness: u8,
    /// The engine has submission latencies fio logs: fio's synchronous engines (psync, sync, …)
    /// record none, and their `slat` log is empty.
    pub slat: bool,
    /// fio's `log_prio=1`: the priority column is this I/O priority value (the job's
    /// `prioclass << 13 | prio`, every I/O's), written as fio writes it (`0x%04x`).
    pub prio: Option<u32>,
}

impl Default for LogStyle {
    fn default() -> Self {
        LogStyle {
            offset: false,
            max: false,
            hist_coarseness: 0,
            slat: true,
            prio: None,
        }
    }
}

/// The text of one log file for job `job` of `result` (empty when the run kept no log for it).
pub fn render_log(result: &RunResult, kind: LogKind, job: u32) -> String {
    let Some(log) = result.logs.iter().find(|l| l.job == job) else {
        return String::new();
    };
    render_job_log(log, kind, result.runtime_ns, &LogStyle::default())
}

/// The text of the log of `kind` of one job that ran `runtime_ns` of measured time.
pub fn render_job_log(log: &JobLog, kind: LogKind, runtime_ns: u64, style: &LogStyle) -> String {
    let mut out = String::new();
    match kind {
        LogKind::ClatHist => render_hist(&mut out, log, style.hist_coarseness),
        LogKind::Slat if !style.slat => {}
        _ if log.interval_ns == 0 => render_samples(&mut out, log, kind, style),
        _ => render_windows(&mut out, log, kind, runtime_ns, style),
    }
    out
}

/// One line of fio's `flush_samples`: its priority column 0, or `prio` as `log_prio=1` writes
/// it.
fn line(
    out: &mut String,
    t_ms: u64,
    value: u64,
    dir: usize,
    bs: u64,
    offset: Option<u64>,
    prio: Option<u32>,
) {
    let _ = match (offset, prio) {
        (Some(o), None) => writeln!(out, "{t_ms}, {value}, {dir}, {bs}, {o}, 0"),
        (None, None) => writeln!(out, "{t_ms}, {value}, {dir}, {bs}, 0"),
        (Some(o), Some(p)) => writeln!(out, "{t_ms}, {value}, {dir}, {bs}, {o}, 0x{p:04x}"),
        (None, Some(p)) => writeln!(out, "{t_ms}, {value}, {dir}, {bs}, 0x{p:04x}"),
    };
}

fn render_windows(
    out: &mut String,
    log: &JobLog,
    kind: LogKind,
    runtime_ns: u64,
    style: &LogStyle,
) {
    let len = log.interval_ns.max(1);
    let len_ms = (len / 1_000_000).max(1);
    let end_ms = runtime_ns / 1_000_000;
    let offset = style.offset.then_some(0);
    for (i, w) in log.windows.iter().enumerate() {
        let end = (i as u64 + 1) * len;
        let complete = end <= runtime_ns;
        let t_ms = if complete { end / 1_000_000 } else { end_ms };
        let max = log.maxima.get(i).filter(|_| style.max);
        for (k, w) in w.kinds.iter().enumerate() {
            let m = max.map(|m| m[k]);
            let value = match kind {
                LogKind::Bw | LogKind::Iops if !complete => continue,
                LogKind::Bw if w.bytes > 0 => w.bytes * 1000 / len_ms / 1024,
                LogKind::Iops if w.ios > 0 => w.ios * 1000 / len_ms,
                _ if w.ios == 0 => continue,
                LogKind::Lat => match m {
                    Some(m) => m.lat_ns,
                    None => mean(w.slat_ns as u128 + w.clat_ns as u128, w.ios),
                },
                LogKind::Clat => m.map_or_else(|| mean(w.clat_ns as u128, w.ios), |m| m.clat_ns),
                LogKind::Slat => m.map_or_else(|| mean(w.slat_ns as u128, w.ios), |m| m.slat_ns),
                _ => continue,
            };
            // (fio's averaged lines carry no I/O's priority: 0, as log_prio writes it)
            line(out, t_ms, value, k, 0, offset, style.prio.map(|_| 0));
        }
    }
}

fn render_samples(out: &mut String, log: &JobLog, kind: LogKind, style: &LogStyle) {
    let ms = |ns: u64| ns / 1_000_000;
    let emit = |out: &mut String, s: &ssdlab_stats::LogSample, t_ns: u64, value: u64| {
        line(
            out,
            ms(t_ns),
            value,
            s.kind as usize,
            s.bytes as u64,
            style.offset.then_some(s.offset),
            style.prio,
        )
    };
    if kind == LogKind::Slat {
        // fio logs a submission latency when the I/O is submitted.
        let mut by_submission: Vec<(u64, usize)> = log
            .samples
            .iter()
            .enumerate()
            .map(|(i, s)| (s.t_ns.saturating_sub(s.clat_ns), i))
            .collect();
        by_submission.sort_unstable();
        for (t, i) in by_submission {
            let s = &log.samples[i];
            emit(out, s, t, s.slat_ns);
        }
        return;
    }
    for s in &log.samples {
        let value = match kind {
            // fio's add_bw_sample: bytes × 10^6 / the completion latency in ns
            LogKind::Bw if s.clat_ns > 0 => s.bytes as u64 * 1_000_000 / s.clat_ns,
            LogKind::Bw => 0,
            LogKind::Iops => 1,
            LogKind::Lat => s.slat_ns.saturating_add(s.clat_ns),
            _ => s.clat_ns,
        };
        emit(out, s, s.t_ns, value);
    }
}

/// fio's `flush_hist_samples`: `time, direction, block size, ` then the bins, `2^coarseness`
/// added together per column.
fn render_hist(out: &mut String, log: &JobLog, coarseness: u8) {
    let stride = 1usize << coarseness.min(6);
    let mut cols = vec![0u64; PLAT_NR / stride];
    let last = cols.len() - 1;
    for h in &log.hist {
        cols.iter_mut().for_each(|c| *c = 0);
        for &(i, n) in &h.bins {
            cols[(i as usize / stride).min(last)] += n;
        }
        let _ = write!(out, "{}, {}, {}, ", h.t_ms, h.kind, h.bs);
        for (i, c) in cols.iter().enumerate() {
            let _ = if i == last {
                writeln!(out, "{c}")
            } else {
                write!(out, "{c}, ")
            };
        }
    }
}

/// fio's rounded mean (`mean + 0.50`, truncated).
fn mean(sum: u128, n: u64) -> u64 {
    ((sum as f64 / n as f64) + 0.5) as u64
}

#[cfg(test)]
mod tests {

    #[test]
    fn run_log_windows_are_checked() {
        assert_eq!(parse_log_avg_msec("250"), Ok(250));
        assert!(parse_log_avg_msec("0")
            .unwrap_err()
            .starts_with("0 would log every I/O"));
        assert_eq!(
            parse_log_avg_msec("86400001").unwrap_err(),
            "'86400001': at most one day (86400000 ms)"
        );
        assert_eq!(
            parse_log_avg_msec("x").unwrap_err(),
            "'x' is not a whole number of milliseconds"
        );
        let none = LogRequest::default();
        assert_eq!(none.checked_window(None), Ok(None));
        assert!(none
            .checked_window(Some(5))
            .unwrap_err()
            .starts_with("--log-avg-msec applies to logs"));
        let bw = LogRequest {
            bw: Some("out".into()),
            ..Default::default()
        };
        assert_eq!(bw.checked_window(None), Ok(Some(1000)));
        assert_eq!(bw.checked_window(Some(10)), Ok(Some(10)));
        let dir = LogRequest {
            lat: Some("logs/".into()),
            ..Default::default()
        };
        assert_eq!(
            dir.checked_window(None).unwrap_err(),
            "--write-lat-log 'logs/': give a file name prefix (NAME or DIR/NAME)"
        );
    }

    use super::*;
    use ssdlab_stats::{HistLine, KindMax, KindWindow, LogSample, LogWindow};

    fn kw(ios: u64, bytes: u64, slat_ns: u64, clat_ns: u64) -> KindWindow {
        KindWindow {
            ios,
            bytes,
            slat_ns,
            clat_ns,
        }
    }

    fn window(ios: u64, bytes: u64, slat: u64, clat: u64) -> LogWindow {
        LogWindow {
            kinds: [kw(ios, bytes, slat, clat), kw(0, 0, 0, 0), kw(0, 0, 0, 0)],
        }
    }

    #[test]
    fn lines_and_names() {
        let log = JobLog {
            job: 2,
            interval_ns: 1_000_000_000,
            windows: vec![
                window(1000, 4_096_000, 1_000_000, 3_000_001),
                LogWindow {
                    kinds: [
                        kw(10, 40960, 100, 1000),
                        kw(5, 20480, 50, 500),
                        kw(0, 0, 0, 0),
                    ],
                },
                window(3, 12288, 3, 9),
            ],
            ..Default::default()
        };
        let r = RunResult {
            runtime_ns: 2_500_000_000,
            logs: vec![log],
            ..Default::default()
        };
        assert_eq!(
            render_log(&r, LogKind::Bw, 2),
            "1000, 4000, 0, 0, 0\n2000, 40, 0, 0, 0\n2000, 20, 1, 0, 0\n"
        );
        assert_eq!(
            render_log(&r, LogKind::Iops, 2),
            "1000, 1000, 0, 0, 0\n2000, 10, 0, 0, 0\n2000, 5, 1, 0, 0\n"
        );
        // lat = slat + clat; the partial last window ends at the end of the run
        assert_eq!(
            render_log(&r, LogKind::Lat, 2),
            "1000, 4000, 0, 0, 0\n2000, 110, 0, 0, 0\n2000, 110, 1, 0, 0\n2500, 4, 0, 0, 0\n"
        );
        assert_eq!(
            render_log(&r, LogKind::Clat, 2),
            "1000, 3000, 0, 0, 0\n2000, 100, 0, 0, 0\n2000, 100, 1, 0, 0\n2500, 3, 0, 0, 0\n"
        );
        assert_eq!(render_log(&r, LogKind::Slat, 1), "");
        let req = LogRequest {
            bw: Some("out/x".into()),
            iops: None,
            lat: Some("y".into()),
        };
        let names: Vec<String> = req
            .files(2)
            .iter()
            .map(|f| f.0.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "out/x_bw.1.log",
                "out/x_bw.2.log",
                "y_lat.1.log",
                "y_lat.2.log",
                "y_clat.1.log",
                "y_clat.2.log",
                "y_slat.1.log",
                "y_slat.2.log"
            ]
        );
    }

    fn sample(t_ms: u64, kind: u8, bytes: u32, offset: u64, slat: u64, clat: u64) -> LogSample {
        LogSample {
            t_ns: t_ms * 1_000_000 + 999,
            offset,
            slat_ns: slat,
            clat_ns: clat,
            bytes,
            kind,
        }
    }

    #[test]
    fn every_io_as_fio_writes_it() {
        let log = JobLog {
            job: 1,
            samples: vec![
                sample(1, 0, 4096, 8192, 500, 400_000),
                sample(3, 1, 8192, 0, 20, 2_000_000),
                // submitted before the first completed: its slat line comes first
                sample(5, 0, 4096, 4096, 30, 4_500_000),
            ],
            ..Default::default()
        };
        let r = |k, st: &LogStyle| render_job_log(&log, k, 5_000_000, st);
        let plain = LogStyle::default();
        // fio's add_bw_sample: 4096 × 10^6 / 400000 = 10240
        assert_eq!(
            r(LogKind::Bw, &plain),
            "1, 10240, 0, 4096, 0\n3, 4096, 1, 8192, 0\n5, 910, 0, 4096, 0\n"
        );
        assert_eq!(
            r(LogKind::Iops, &plain),
            "1, 1, 0, 4096, 0\n3, 1, 1, 8192, 0\n5, 1, 0, 4096, 0\n"
        );
        assert_eq!(
            r(LogKind::Lat, &plain),
            "1, 400500, 0, 4096, 0\n3, 2000020, 1, 8192, 0\n5, 4500030, 0, 4096, 0\n"
        );
        assert_eq!(
            r(LogKind::Clat, &plain),
            "1, 400000, 0, 4096, 0\n3, 2000000, 1, 8192, 0\n5, 4500000, 0, 4096, 0\n"
        );
        assert_eq!(
            r(LogKind::Slat, &plain),
            "0, 30, 0, 4096, 0\n0, 500, 0, 4096, 0\n1, 20, 1, 8192, 0\n"
        );
        let off = LogStyle {
            offset: true,
            ..plain
        };
        assert_eq!(
            r(LogKind::Iops, &off),
            "1, 1, 0, 4096, 8192, 0\n3, 1, 1, 8192, 0, 0\n5, 1, 0, 4096, 4096, 0\n"
        );
        // fio's synchronous engines log no submission latency
        let sync = LogStyle {
            slat: false,
            ..plain
        };
        assert_eq!(r(LogKind::Slat, &sync), "");
        assert_eq!(r(LogKind::Clat, &sync), r(LogKind::Clat, &plain));
        // fio's log_prio=1: the priority value, as fio prints it (prioclass=2 prio=3)
        let prio = LogStyle {
            prio: Some(0x4003),
            ..plain
        };
        assert_eq!(
            r(LogKind::Slat, &prio),
            "0, 30, 0, 4096, 0x4003\n0, 500, 0, 4096, 0x4003\n1, 20, 1, 8192, 0x4003\n"
        );
    }

    #[test]
    fn averaged_offset_and_maxima() {
        let log = JobLog {
            job: 1,
            interval_ns: 1_000_000_000,
            windows: vec![window(2, 8192, 10, 300)],
            maxima: vec![[
                KindMax {
                    slat_ns: 7,
                    clat_ns: 200,
                    lat_ns: 205,
                },
                KindMax::default(),
                KindMax::default(),
            ]],
            ..Default::default()
        };
        let st = LogStyle {
            offset: true,
            ..Default::default()
        };
        assert_eq!(
            render_job_log(&log, LogKind::Bw, 1_000_000_000, &st),
            "1000, 8, 0, 0, 0, 0\n"
        );
        assert_eq!(
            render_job_log(&log, LogKind::Clat, 1_000_000_000, &st),
            "1000, 150, 0, 0, 0, 0\n"
        );
        let max = LogStyle {
            max: true,
            ..Default::default()
        };
        assert_eq!(
            render_job_log(&log, LogKind::Clat, 1_000_000_000, &max),
            "1000, 200, 0, 0, 0\n"
        );
        assert_eq!(
            render_job_log(&log, LogKind::Lat, 1_000_000_000, &max),
            "1000, 205, 0, 0, 0\n"
        );
    }

    #[test]
    fn histogram_lines_and_coarseness() {
        let log = JobLog {
            job: 1,
            hist: vec![HistLine {
                t_ms: 103,
                kind: 1,
                bs: 4096,
                bins: vec![(0, 2), (1, 1), (17, 4), (1855, 1)],
            }],
            ..Default::default()
        };
        let text = render_job_log(&log, LogKind::ClatHist, 0, &LogStyle::default());
        let cols: Vec<u64> = text
            .trim_end()
            .split(", ")
            .map(|c| c.parse().unwrap())
            .collect();
        assert_eq!(cols.len(), 3 + 1856);
        assert_eq!(&cols[..6], &[103, 1, 4096, 2, 1, 0]);
        assert_eq!(cols[3 + 17], 4);
        assert_eq!(cols[3 + 1855], 1);
        assert_eq!(cols[3..].iter().sum::<u64>(), 8);
        // fio's help: 1856 >> c columns (coarseness 4: 116)
        for (c, n) in [(1u8, 928usize), (4, 116), (6, 29)] {
            let st = LogStyle {
                hist_coarseness: c,
                ..Default::default()
            };
            let text = render_job_log(&log, LogKind::ClatHist, 0, &st);
            let cols: Vec<u64> = text
                .trim_end()
                .split(", ")
                .map(|c| c.parse().unwrap())
                .collect();
            assert_eq!(cols.len(), 3 + n, "coarseness {c}");
            assert_eq!(cols[3..].iter().sum::<u64>(), 8);
            assert_eq!(cols[3], if c == 6 { 7 } else { 3 });
        }
        assert_eq!(
            shared_file_name(Path::new("d/x"), LogKind::ClatHist),
            Path::new("d/x_clat_hist.log")
        );
    }
}
