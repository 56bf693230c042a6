//! Time-series logs in the shape of fio's `write_bw_log` / `write_iops_log` / `write_lat_log`
//! with `log_avg_msec`: per job and per averaging window, the I/Os, bytes and latency sums of
//! each op kind. Recording adds to the current window (a few integer additions per I/O, no
//! allocation once the windows for the expected run time are reserved); the log lines are made
//! from the windows when the run is over (`ssdlab-report`'s log exporter).

use ssdlab_workload::OpKind;

/// What to aggregate for the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogConfig {
    /// Averaging window (fio's `log_avg_msec`), ns; at least 1 ms.
    pub interval_ns: u64,
    /// A bandwidth log is written: the run's `bw_*` statistics use the log's windows, as fio's
    /// `bw_avg_time` follows `log_avg_msec` when `write_bw_log` is set.
    pub bw: bool,
    /// An IOPS log is written: the `iops_*` statistics use the log's windows.
    pub iops: bool,
    /// Windows to reserve per job up front (the expected run time over the interval), so
    /// recording does not allocate while the run is measured.
    pub reserve: usize,
}

/// One averaging window of one job: what completed in it, per op kind (read, write, trim).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogWindow {
    pub kinds: [KindWindow; 3],
}

/// The most log windows one job keeps (4 Mi windows, 384 MiB: 70 minutes at `--log-avg-msec 1`,
/// 48 days at 1000). Later completions count in one overflow window that no log reports, so a
/// run whose clock runs away (a simulated drive with absurd timings) cannot exhaust memory.
pub const MAX_LOG_WINDOWS: usize = 1 << 22;

/// One op kind's completions in a window (32 bytes: one cache line takes all four counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindWindow {
    pub ios: u64,
    pub bytes: u64,
    /// Sums of the submission and completion latencies, ns. A window's sum is about the I/Os in
    /// flight times the window's length (Little's law), far below 2^64 for any window up to a
    /// day; the additions saturate rather than wrap all the same.
    pub slat_ns: u64,
    pub clat_ns: u64,
}

/// The windows of one job (fio's job index: `NAME_bw.<job>.log`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobLog {
    /// 1-based job index.
    pub job: u32,
    /// Window length, ns.
    pub interval_ns: u64,
    /// Window `i` covers `[i·interval, (i+1)·interval)` of measured time.
    pub windows: Vec<LogWindow>,
}

#[derive(Debug, Clone)]
struct JobWindows {
    windows: Vec<LogWindow>,
    cur: usize,
    cur_start: u64,
    cur_end: u64,
}

/// The log windows of the jobs one recorder sees (one job on a real target's worker thread, all
/// jobs of a simulated run).
#[derive(Debug, Clone)]
pub struct LogRecorder {
    pub config: LogConfig,
    /// (1-based job index, its windows), ordered by job index; a recorder's `record` addresses
    /// them by position (the job's number among the workers it sees).
    jobs: Vec<(u32, JobWindows)>,
}

impl JobWindows {
    fn new(reserve: usize) -> JobWindows {
        JobWindows {
            windows: Vec::with_capacity(reserve),
            cur: 0,
            cur_start: 0,
            cur_end: 0,
        }
    }
}

impl LogRecorder {
    /// Windows for `jobs` jobs numbered from `first_job` (1-based).
    pub fn new(config: LogConfig, first_job: u32, jobs: u32) -> LogRecorder {
        let config = LogConfig {
            interval_ns: config.interval_ns.max(1_000_000),
            ..config
        };
        LogRecorder {
            config,
            jobs: (0..jobs)
                .map(|i| {
                    (
                        first_job + i,
                        JobWindows::new(config.reserve.saturating_add(2)),
                    )
                })
                .collect(),
        }
    }

    /// Adds one completion of the `job`-th job of this recorder (0-based).
    #[inline]
    pub fn record(&mut self, job: u32, kind: OpKind, bytes: u64, slat: u64, clat: u64, t: u64) {
        let Some((_, j)) = self.jobs.get_mut(job as usize) else {
            return;
        };
        if !(j.cur_start..j.cur_end).contains(&t) {
            Self::enter(j, self.config.interval_ns, t);
        }
        let w = &mut j.windows[j.cur].kinds[kind.index()];
        w.ios += 1;
        w.bytes += bytes;
        w.slat_ns = w.slat_ns.saturating_add(slat);
        w.clat_ns = w.clat_ns.saturating_add(clat);
    }

    #[cold]
    fn enter(j: &mut JobWindows, interval: u64, t: u64) {
        let idx = (t / interval).min(MAX_LOG_WINDOWS as u64) as usize;
        if idx >= j.windows.len() {
            j.windows.resize(idx + 1, LogWindow::default());
        }
        j.cur = idx;
        j.cur_start = idx as u64 * interval;
        j.cur_end = if idx == MAX_LOG_WINDOWS {
            u64::MAX
        } else {
            j.cur_start.saturating_add(interval)
        };
    }

    /// Adds another recorder's jobs (a merge of worker threads: each brings its own job).
    pub fn merge(&mut self, o: &LogRecorder) {
        for (job, oj) in &o.jobs {
            match self.jobs.binary_search_by_key(job, |(j, _)| *j) {
                Ok(i) => {
                    let j = &mut self.jobs[i].1;
                    if oj.windows.len() > j.windows.len() {
                        j.windows.resize(oj.windows.len(), LogWindow::default());
                    }
                    add_windows(&mut j.windows, &oj.windows, true);
                }
                Err(i) => self.jobs.insert(i, (*job, oj.clone())),
            }
        }
    }

    /// Every job's windows, cut to `runtime_ns` of measured time.
    pub fn job_logs(&self, runtime_ns: u64) -> Vec<JobLog> {
        let n = runtime_ns
            .div_ceil(self.config.interval_ns)
            .min(MAX_LOG_WINDOWS as u64) as usize;
        self.jobs
            .iter()
            .map(|(job, j)| JobLog {
                job: *job,
                interval_ns: self.config.interval_ns,
                windows: j.windows.iter().take(n).copied().collect(),
            })
            .collect()
    }

    /// The I/Os and bytes of all jobs added together per window (for the run's interval
    /// statistics).
    pub fn merged_windows(&self) -> Vec<LogWindow> {
        let mut out: Vec<LogWindow> = Vec::new();
        for (_, j) in &self.jobs {
            if j.windows.len() > out.len() {
                out.resize(j.windows.len(), LogWindow::default());
            }
            add_windows(&mut out, &j.windows, false);
        }
        out.truncate(MAX_LOG_WINDOWS);
        out
    }
}

fn add_windows(acc: &mut [LogWindow], add: &[LogWindow], latencies: bool) {
    for (a, b) in acc.iter_mut().zip(add) {
        for (a, b) in a.kinds.iter_mut().zip(&b.kinds) {
            a.ios += b.ios;
            a.bytes += b.bytes;
            if latencies {
                a.slat_ns = a.slat_ns.saturating_add(b.slat_ns);
                a.clat_ns = a.clat_ns.saturating_add(b.clat_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> LogConfig {
        LogConfig {
            interval_ns: 1_000_000_000,
            bw: true,
            iops: true,
            reserve: 4,
        }
    }

    #[test]
    fn windows_per_job_and_merge() {
        let mut a = LogRecorder::new(cfg(), 1, 1);
        let mut b = LogRecorder::new(cfg(), 2, 1);
        a.record(0, OpKind::Read, 4096, 10, 100, 0);
        a.record(0, OpKind::Read, 4096, 30, 300, 999_999_999);
        a.record(0, OpKind::Write, 8192, 5, 50, 1_000_000_000);
        b.record(0, OpKind::Read, 512, 1, 2, 2_500_000_000);
        a.merge(&b);
        let logs = a.job_logs(3_000_000_000);
        assert_eq!(logs.len(), 2);
        assert_eq!(logs[0].job, 1);
        assert_eq!(logs[1].job, 2);
        assert_eq!(logs[0].windows[0].kinds[0].ios, 2);
        assert_eq!(logs[0].windows[0].kinds[1].ios, 0);
        assert_eq!(logs[0].windows[0].kinds[0].clat_ns, 400);
        assert_eq!(logs[0].windows[1].kinds[1].bytes, 8192);
        assert_eq!(logs[1].windows.len(), 3);
        assert_eq!(logs[1].windows[2].kinds[0].ios, 1);
        let m = a.merged_windows();
        assert_eq!(m[2].kinds[0].ios, 1);
        assert_eq!(m[0].kinds[0].bytes, 8192);
        // a job of a recorder numbered before this one's goes first
        let mut c = LogRecorder::new(cfg(), 3, 1);
        c.merge(&a);
        let jobs: Vec<u32> = c.job_logs(1).iter().map(|l| l.job).collect();
        assert_eq!(jobs, [1, 2, 3]);
    }

    #[test]
    fn reserved_windows_do_not_grow() {
        let mut r = LogRecorder::new(cfg(), 1, 1);
        let cap = r.jobs[0].1.windows.capacity();
        for t in 0..5u64 {
            r.record(0, OpKind::Read, 1, 1, 1, t * 1_000_000_000);
        }
        assert_eq!(r.jobs[0].1.windows.capacity(), cap);
    }
}
