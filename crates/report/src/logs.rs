//! fio's log files (`write_bw_log`, `write_iops_log`, `write_lat_log` with `log_avg_msec`), one
//! file per kind and job, named as fio names them (`NAME_bw.1.log`, `NAME_iops.1.log`,
//! `NAME_lat.1.log`, `NAME_clat.1.log`, `NAME_slat.1.log`) and written as fio writes averaged
//! samples (`iolog.c`: `flush_samples`): `time (ms), value, direction, 0, 0` per line, direction
//! 0 = read, 1 = write, 2 = trim.
//!
//! - `bw`: KiB/s over each complete window; `iops`: I/Os per second over each complete window
//!   (fio writes these from its sampling thread at the end of each window, and no line for the
//!   partial window at the end of the run);
//! - `lat`, `clat`, `slat`: the mean latency (ns, rounded) of the I/Os that completed in each
//!   window, and a last line for the partial window at the end of the run, as fio's
//!   `finalize_logs` writes it.
//!
//! A direction without I/O in a window has no line for it, as in fio. Times are milliseconds of
//! measured time (after the ramp), on the simulator's virtual clock for simulated runs.

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
}

impl LogKind {
    /// The kind as it appears in fio's file names.
    pub fn as_str(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
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

/// The text of one log file for job `job` of `result` (empty when the run kept no log for it).
pub fn render_log(result: &RunResult, kind: LogKind, job: u32) -> String {
    let Some(log) = result.logs.iter().find(|l| l.job == job) else {
        return String::new();
    };
    render(log, kind, result.runtime_ns)
}

fn render(log: &JobLog, kind: LogKind, runtime_ns: u64) -> String {
    let mut out = String::new();
    let len = log.interval_ns.max(1);
    let len_ms = (len / 1_000_000).max(1);
    let end_ms = runtime_ns / 1_000_000;
    for (i, w) in log.windows.iter().enumerate() {
        let end = (i as u64 + 1) * len;
        let complete = end <= runtime_ns;
        let t_ms = if complete { end / 1_000_000 } else { end_ms };
        for (k, w) in w.kinds.iter().enumerate() {
            let value = match kind {
                LogKind::Bw | LogKind::Iops if !complete => continue,
                LogKind::Bw if w.bytes > 0 => w.bytes * 1000 / len_ms / 1024,
                LogKind::Iops if w.ios > 0 => w.ios * 1000 / len_ms,
                _ if w.ios == 0 => continue,
                LogKind::Lat => mean(w.slat_ns as u128 + w.clat_ns as u128, w.ios),
                LogKind::Clat => mean(w.clat_ns as u128, w.ios),
                LogKind::Slat => mean(w.slat_ns as u128, w.ios),
                _ => continue,
            };
            let _ = writeln!(out, "{t_ms}, {value}, {k}, 0, 0");
        }
    }
    out
}

/// fio's rounded mean (`mean + 0.50`, truncated).
fn mean(sum: u128, n: u64) -> u64 {
    ((sum as f64 / n as f64) + 0.5) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_stats::{KindWindow, LogWindow};

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
}
