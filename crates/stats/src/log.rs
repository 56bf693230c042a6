//! Time-series logs in the shape of fio's `write_bw_log` / `write_iops_log` / `write_lat_log` /
//! `write_hist_log`, per job:
//!
//! - with `log_avg_msec` (≥ 1 ms): per averaging window, the I/Os, bytes and latency sums of each
//!   op kind (and, for `log_max_value`, the largest latencies). Recording adds to the current
//!   window (a few integer additions per I/O, no allocation once the windows for the expected
//!   run time are reserved);
//! - with `log_avg_msec=0` (fio's default in job files): every completion as it came — time,
//!   direction, length, offset, latencies —, in chunks (no large copy while the run is
//!   measured), at most [`MAX_LOG_SAMPLES`] per job;
//! - with `log_hist_msec`: fio's completion-latency histogram (`FIO_IO_U_PLAT_NR` bins) of the
//!   I/Os of each direction since the previous line, a line each time a completion comes
//!   `log_hist_msec` or more after the last (`stat.c`: `add_clat_sample`).
//!
//! The log lines are made from these when the run is over (`ssdlab-report`'s log exporter).

use crate::fio::{plat_val_to_idx, PLAT_NR};
use ssdlab_workload::OpKind;

/// What to aggregate for the logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogConfig {
    /// Averaging window (fio's `log_avg_msec`), ns: at least 1 ms, or 0 to keep every I/O.
    pub interval_ns: u64,
    /// A bandwidth log is written: the run's `bw_*` statistics use the log's windows, as fio's
    /// `bw_avg_time` follows `log_avg_msec` when `write_bw_log` is set.
    pub bw: bool,
    /// An IOPS log is written: the `iops_*` statistics use the log's windows.
    pub iops: bool,
    /// Windows to reserve per job up front (the expected run time over the interval), so
    /// recording does not allocate while the run is measured.
    pub reserve: usize,
    /// Keep each window's largest latencies too (fio's `log_max_value`).
    pub max: bool,
    /// fio's `log_hist_msec`: a histogram line per direction every this many ms (0: none).
    pub hist_msec: u64,
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

/// The most completions one job keeps for a log of every I/O (`log_avg_msec=0`): 8 Mi, 320 MiB.
/// Later ones are counted ([`JobLog::dropped`]) and left out of the logs.
pub const MAX_LOG_SAMPLES: usize = 1 << 23;

/// Completions per chunk of a log of every I/O.
const SAMPLE_CHUNK: usize = 1 << 16;

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

/// The largest latencies of one op kind in a window, ns (`log_max_value`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindMax {
    pub slat_ns: u64,
    pub clat_ns: u64,
    /// Of submission plus completion latency.
    pub lat_ns: u64,
}

/// One completion, kept for a log of every I/O.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogSample {
    /// Completion time, ns of measured time.
    pub t_ns: u64,
    pub offset: u64,
    pub slat_ns: u64,
    pub clat_ns: u64,
    /// Bytes moved.
    pub bytes: u32,
    /// Op kind index: 0 read, 1 write, 2 trim.
    pub kind: u8,
}

/// One line of a histogram log: the completions of one direction since its previous line, as
/// fio's latency bins (only the bins that are not zero, by index).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistLine {
    /// ms of measured time of the completion that ended the interval.
    pub t_ms: u64,
    pub kind: u8,
    /// Bytes of that completion (fio's block-size column).
    pub bs: u64,
    pub bins: Vec<(u16, u64)>,
}

/// The logs of one job (fio's job index: `NAME_bw.<job>.log`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobLog {
    /// 1-based job index.
    pub job: u32,
    /// Window length, ns (0: every I/O is in [`JobLog::samples`], there are no windows).
    pub interval_ns: u64,
    /// Window `i` covers `[i·interval, (i+1)·interval)` of measured time.
    pub windows: Vec<LogWindow>,
    /// The largest latencies of each window, per op kind (with `log_max_value`).
    pub maxima: Vec<[KindMax; 3]>,
    /// Every completion, in the order they were recorded (with `log_avg_msec=0`).
    pub samples: Vec<LogSample>,
    /// Histogram lines in time order (with `log_hist_msec`).
    pub hist: Vec<HistLine>,
    /// Completions past [`MAX_LOG_SAMPLES`], left out of `samples`.
    pub dropped: u64,
}

/// The bins of one direction since its last histogram line.
#[derive(Debug, Clone)]
struct HistState {
    /// fio's `hist_last` (ms; 0 until the first completion sets it).
    last_ms: u64,
    bins: Vec<u64>,
    /// Bins that are not zero, in the order they were first hit.
    touched: Vec<u16>,
}

#[derive(Debug, Clone)]
struct JobWindows {
    windows: Vec<LogWindow>,
    maxima: Vec<[KindMax; 3]>,
    cur: usize,
    cur_start: u64,
    cur_end: u64,
    samples: Vec<Vec<LogSample>>,
    nsamples: usize,
    dropped: u64,
    hist: Vec<HistLine>,
    hist_state: Vec<HistState>,
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
    fn new(config: &LogConfig) -> JobWindows {
        let windows = if config.interval_ns > 0 {
            config.reserve.saturating_add(2)
        } else {
            0
        };
        JobWindows {
            windows: Vec::with_capacity(windows),
            maxima: Vec::with_capacity(if config.max { windows } else { 0 }),
            cur: 0,
            cur_start: 0,
            cur_end: 0,
            samples: Vec::new(),
            nsamples: 0,
            dropped: 0,
            hist: Vec::new(),
            hist_state: Vec::new(),
        }
    }

    fn samples(&self) -> Vec<LogSample> {
        let mut out = Vec::with_capacity(self.nsamples);
        for c in &self.samples {
            out.extend_from_slice(c);
        }
        out
    }
}

impl LogRecorder {
    /// Windows for `jobs` jobs numbered from `first_job` (1-based).
    pub fn new(config: LogConfig, first_job: u32, jobs: u32) -> LogRecorder {
        let config = LogConfig {
            interval_ns: if config.interval_ns == 0 {
                0
            } else {
                config.interval_ns.max(1_000_000)
            },
            ..config
        };
        LogRecorder {
            config,
            jobs: (0..jobs)
                .map(|i| (first_job + i, JobWindows::new(&config)))
                .collect(),
        }
    }

    /// Adds one completion of the `job`-th job of this recorder (0-based): `bytes` moved at
    /// `offset`, its latencies, and its completion time `t` (ns of measured time).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        job: u32,
        kind: OpKind,
        bytes: u64,
        offset: u64,
        slat: u64,
        clat: u64,
        t: u64,
    ) {
        let config = self.config;
        let Some((_, j)) = self.jobs.get_mut(job as usize) else {
            return;
        };
        if config.interval_ns > 0 {
            if !(j.cur_start..j.cur_end).contains(&t) {
                Self::enter(j, config.interval_ns, config.max, t);
            }
            let w = &mut j.windows[j.cur].kinds[kind.index()];
            w.ios += 1;
            w.bytes += bytes;
            w.slat_ns = w.slat_ns.saturating_add(slat);
            w.clat_ns = w.clat_ns.saturating_add(clat);
            if config.max {
                let m = &mut j.maxima[j.cur][kind.index()];
                m.slat_ns = m.slat_ns.max(slat);
                m.clat_ns = m.clat_ns.max(clat);
                m.lat_ns = m.lat_ns.max(slat.saturating_add(clat));
            }
        } else {
            Self::keep(j, kind, bytes, offset, slat, clat, t);
        }
        if config.hist_msec > 0 {
            Self::hist(j, config.hist_msec, kind, bytes, clat, t);
        }
    }

    #[inline]
    fn keep(
        j: &mut JobWindows,
        kind: OpKind,
        bytes: u64,
        offset: u64,
        slat: u64,
        clat: u64,
        t: u64,
    ) {
        if j.nsamples >= MAX_LOG_SAMPLES {
            j.dropped += 1;
            return;
        }
        if j.samples.last().is_none_or(|c| c.len() == SAMPLE_CHUNK) {
            j.samples.push(Vec::with_capacity(SAMPLE_CHUNK));
        }
        if let Some(c) = j.samples.last_mut() {
            c.push(LogSample {
                t_ns: t,
                offset,
                slat_ns: slat,
                clat_ns: clat,
                bytes: bytes.min(u32::MAX as u64) as u32,
                kind: kind.index() as u8,
            });
            j.nsamples += 1;
        }
    }

    /// fio's histogram logging (`add_clat_sample`): the completion counts in its bin; when it
    /// comes `hist_msec` or more after the direction's last line, a line with the bins since.
    fn hist(j: &mut JobWindows, hist_msec: u64, kind: OpKind, bytes: u64, clat: u64, t: u64) {
        if j.hist_state.is_empty() {
            j.hist_state = (0..3)
                .map(|_| HistState {
                    last_ms: 0,
                    bins: vec![0; PLAT_NR],
                    touched: Vec::new(),
                })
                .collect();
        }
        let h = &mut j.hist_state[kind.index()];
        let idx = plat_val_to_idx(clat);
        if h.bins[idx] == 0 {
            h.touched.push(idx as u16);
        }
        h.bins[idx] += 1;
        let elapsed = t / 1_000_000;
        if h.last_ms == 0 {
            h.last_ms = elapsed;
        }
        let this_window = elapsed.saturating_sub(h.last_ms);
        if this_window >= hist_msec && j.hist.len() < MAX_LOG_WINDOWS {
            let mut bins: Vec<(u16, u64)> = h
                .touched
                .drain(..)
                .map(|i| (i, std::mem::take(&mut h.bins[i as usize])))
                .collect();
            bins.sort_unstable();
            j.hist.push(HistLine {
                t_ms: elapsed,
                kind: kind.index() as u8,
                bs: bytes,
                bins,
            });
            h.last_ms = elapsed - (this_window - hist_msec);
        }
    }

    #[cold]
    fn enter(j: &mut JobWindows, interval: u64, max: bool, t: u64) {
        let idx = (t / interval).min(MAX_LOG_WINDOWS as u64) as usize;
        if idx >= j.windows.len() {
            j.windows.resize(idx + 1, LogWindow::default());
            if max {
                j.maxima.resize(idx + 1, Default::default());
            }
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
                    if oj.maxima.len() > j.maxima.len() {
                        j.maxima.resize(oj.maxima.len(), Default::default());
                    }
                    for (a, b) in j.maxima.iter_mut().zip(&oj.maxima) {
                        for (a, b) in a.iter_mut().zip(b) {
                            a.slat_ns = a.slat_ns.max(b.slat_ns);
                            a.clat_ns = a.clat_ns.max(b.clat_ns);
                            a.lat_ns = a.lat_ns.max(b.lat_ns);
                        }
                    }
                    // one job seen by two recorders: its I/Os in time order
                    if oj.nsamples > 0 {
                        let mut all = j.samples();
                        all.extend(oj.samples());
                        all.sort_by_key(|s| s.t_ns);
                        all.truncate(MAX_LOG_SAMPLES);
                        j.nsamples = all.len();
                        j.samples = vec![all];
                    }
                    j.dropped += oj.dropped;
                    if !oj.hist.is_empty() {
                        j.hist.extend(oj.hist.iter().cloned());
                        j.hist.sort_by_key(|h| h.t_ms);
                    }
                }
                Err(i) => self.jobs.insert(i, (*job, oj.clone())),
            }
        }
    }

    /// Every job's logs, the windows cut to `runtime_ns` of measured time.
    pub fn job_logs(&self, runtime_ns: u64) -> Vec<JobLog> {
        let n = match self.config.interval_ns {
            0 => 0,
            len => runtime_ns.div_ceil(len).min(MAX_LOG_WINDOWS as u64) as usize,
        };
        self.jobs
            .iter()
            .map(|(job, j)| JobLog {
                job: *job,
                interval_ns: self.config.interval_ns,
                windows: j.windows.iter().take(n).copied().collect(),
                maxima: j.maxima.iter().take(n).copied().collect(),
                samples: j.samples(),
                hist: j.hist.clone(),
                dropped: j.dropped,
            })
            .collect()
    }

    /// Drops the lines of every I/O and the histogram lines (once they have been taken with
    /// [`LogRecorder::job_logs`]); the windows, which the run's statistics may use, stay.
    pub fn clear_lines(&mut self) {
        for (_, j) in &mut self.jobs {
            j.samples = Vec::new();
            j.nsamples = 0;
            j.hist = Vec::new();
            j.hist_state = Vec::new();
        }
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
            ..Default::default()
        }
    }

    #[test]
    fn windows_per_job_and_merge() {
        let mut a = LogRecorder::new(cfg(), 1, 1);
        let mut b = LogRecorder::new(cfg(), 2, 1);
        a.record(0, OpKind::Read, 4096, 0, 10, 100, 0);
        a.record(0, OpKind::Read, 4096, 0, 30, 300, 999_999_999);
        a.record(0, OpKind::Write, 8192, 0, 5, 50, 1_000_000_000);
        b.record(0, OpKind::Read, 512, 0, 1, 2, 2_500_000_000);
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
            r.record(0, OpKind::Read, 1, 0, 1, 1, t * 1_000_000_000);
        }
        assert_eq!(r.jobs[0].1.windows.capacity(), cap);
    }

    #[test]
    fn every_io_kept_in_order_with_offsets() {
        let c = LogConfig {
            interval_ns: 0,
            ..Default::default()
        };
        let mut r = LogRecorder::new(c, 3, 1);
        r.record(0, OpKind::Read, 4096, 8192, 10, 100, 5_000_000);
        r.record(0, OpKind::Write, 512, 0, 1, 2, 6_000_000);
        let logs = r.job_logs(1);
        assert_eq!(logs[0].job, 3);
        assert_eq!(logs[0].interval_ns, 0);
        assert!(logs[0].windows.is_empty());
        assert_eq!(
            logs[0].samples,
            [
                LogSample {
                    t_ns: 5_000_000,
                    offset: 8192,
                    slat_ns: 10,
                    clat_ns: 100,
                    bytes: 4096,
                    kind: 0
                },
                LogSample {
                    t_ns: 6_000_000,
                    offset: 0,
                    slat_ns: 1,
                    clat_ns: 2,
                    bytes: 512,
                    kind: 1
                }
            ]
        );
        // more than one chunk
        for i in 0..(SAMPLE_CHUNK as u64 + 10) {
            r.record(0, OpKind::Read, 1, i, 1, 1, 7_000_000 + i);
        }
        assert_eq!(r.job_logs(1)[0].samples.len(), SAMPLE_CHUNK + 12);
        assert_eq!(
            r.job_logs(1)[0].samples.last().unwrap().offset,
            SAMPLE_CHUNK as u64 + 9
        );
        r.clear_lines();
        assert!(r.job_logs(1)[0].samples.is_empty());
    }

    #[test]
    fn maxima_per_window() {
        let c = LogConfig { max: true, ..cfg() };
        let mut r = LogRecorder::new(c, 1, 1);
        r.record(0, OpKind::Read, 1, 0, 10, 100, 1);
        r.record(0, OpKind::Read, 1, 0, 30, 50, 2);
        r.record(0, OpKind::Read, 1, 0, 5, 500, 1_000_000_001);
        let l = &r.job_logs(2_000_000_000)[0];
        assert_eq!(
            l.maxima[0][0],
            KindMax {
                slat_ns: 30,
                clat_ns: 100,
                lat_ns: 110
            }
        );
        assert_eq!(l.maxima[1][0].clat_ns, 500);
    }

    #[test]
    fn histogram_lines_as_fio_cuts_them() {
        let c = LogConfig {
            hist_msec: 100,
            ..cfg()
        };
        let mut r = LogRecorder::new(c, 1, 1);
        let ms = 1_000_000;
        // the first completion (3 ms) starts the interval; the one at 103 ms ends it
        r.record(0, OpKind::Read, 4096, 0, 0, 100, 3 * ms);
        r.record(0, OpKind::Read, 4096, 0, 0, 100, 50 * ms);
        r.record(0, OpKind::Read, 4096, 0, 0, 5_000, 102 * ms);
        r.record(0, OpKind::Write, 8192, 0, 0, 7, 102 * ms);
        r.record(0, OpKind::Read, 4096, 0, 0, 1, 103 * ms);
        // 150 ms after the last line, the next line; its interval starts 100 ms after the last
        r.record(0, OpKind::Read, 4096, 0, 0, 1, 253 * ms);
        r.record(0, OpKind::Read, 4096, 0, 0, 1, 303 * ms);
        let h = &r.job_logs(1)[0].hist;
        assert_eq!(h.len(), 3);
        assert_eq!((h[0].t_ms, h[0].kind, h[0].bs), (103, 0, 4096));
        let idx = |v: u64| crate::fio::plat_val_to_idx(v) as u16;
        assert_eq!(h[0].bins, [(1, 1), (idx(100), 2), (idx(5_000), 1)]);
        assert_eq!(
            (h[1].t_ms, h[1].bins.as_slice()),
            (253, &[(1u16, 1u64)][..])
        );
        assert_eq!(h[2].t_ms, 303);
        // the write has not ended an interval yet: no line for it
        assert!(h.iter().all(|l| l.kind == 0));
    }
}
