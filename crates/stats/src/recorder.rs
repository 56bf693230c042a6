//! Hot-path recording: a few integer additions and three latency histogram records per I/O.

use crate::fio;
use crate::log::{JobLog, LogConfig, LogRecorder};
use crate::result::{
    DepthLevels, ErrorTally, IoErrorRecord, LatLevels, LatSummary, OpSummary, SeriesPoint,
    VerifySummary, PERCENTILES,
};
use hdrhistogram::Histogram;
use ssdlab_workload::OpKind;

/// Highest trackable latency: one hour in nanoseconds (higher values are clamped).
const MAX_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept by the histograms (0.1 % resolution, like fio's bins).
const SIGFIG: u8 = 3;
/// Keep at most this many error records with their offsets (all errors are counted).
const MAX_ERROR_RECORDS: usize = 16;

fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, SIGFIG).expect("valid histogram bounds")
}

/// log2 of the sub-buckets per bucket that hdrhistogram uses for [`SIGFIG`] digits: the smallest
/// power of two ≥ 2·10^SIGFIG (2048 for 3 digits).
const SUB_BITS: u32 = 11;
/// Half the sub-buckets of a bucket: every bucket but the first uses only its upper half.
const HALF_BITS: u32 = SUB_BITS - 1;
const _: () = assert!(1u64 << (SUB_BITS - 1) < 2 * 10u64.pow(SIGFIG as u32));
const _: () = assert!(1u64 << SUB_BITS >= 2 * 10u64.pow(SIGFIG as u32));

/// A latency histogram with exactly the bins of an hdrhistogram `Histogram::<u64>` over
/// `1..=MAX_NS` with `SIGFIG` (3) digits (lowest value 1, so unit magnitude 0), reduced to what the
/// hot path needs: recording is an index computation and one increment (hdrhistogram also keeps
/// min, max and total per record and checks the range). The bins continue past `MAX_NS` to the
/// whole `u64` range, so no value needs clamping when it is recorded; values out of range are
/// clamped bin by bin when the histogram itself is rebuilt from the counts for the results
/// ([`LatHist::to_histogram`]). The rebuilt histogram equals one the clamped values were recorded
/// into, so every statistic and percentile is the same as with hdrhistogram directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatHist {
    /// Count per bin, bins `0..=index(u64::MAX)` (bins past `index(MAX_NS)` are never touched
    /// in practice, so their zero pages are never faulted in).
    counts: Box<[u64]>,
}

impl Default for LatHist {
    fn default() -> Self {
        LatHist {
            counts: vec![0; Self::index(u64::MAX) + 1].into_boxed_slice(),
        }
    }
}

impl LatHist {
    /// hdrhistogram's bin of `v`: bucket `b` holds values `< 2^(SUB_BITS+b)` at a resolution of
    /// `2^b`, and stores only its upper half (the lower half is bucket `b-1`), so the bin is
    /// `(b+1)·2^HALF_BITS + (v >> b) - 2^HALF_BITS`.
    #[inline]
    fn index(v: u64) -> usize {
        let bucket = (64 - SUB_BITS) - (v | ((1 << SUB_BITS) - 1)).leading_zeros();
        ((bucket as usize) << HALF_BITS) + (v >> bucket) as usize
    }

    /// The lowest value of bin `i` (the inverse of [`LatHist::index`]).
    fn value_at(i: usize) -> u64 {
        let bucket = (i >> HALF_BITS) as u32;
        let sub = (i & ((1 << HALF_BITS) - 1)) as u64;
        if bucket == 0 {
            sub
        } else {
            (sub + (1 << HALF_BITS)) << (bucket - 1)
        }
    }

    /// Records one latency in ns (as if clamped into `1..=MAX_NS`, like `saturating_record`).
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
    }

    /// [`LatHist::record`], returning the bin the value went to.
    #[inline(always)]
    fn record_bin(&mut self, v: u64) -> usize {
        let i = Self::index(v);
        self.counts[i] += 1;
        i
    }

    /// Number of recorded values.
    pub fn len(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }

    /// Adds another histogram's counts (exact).
    pub fn add(&mut self, o: &LatHist) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
    }

    /// The equivalent hdrhistogram histogram (equal to one the same values, clamped into
    /// `1..=MAX_NS`, were recorded into).
    pub fn to_histogram(&self) -> Histogram<u64> {
        // Bins are ordered by value: bin 0 holds only 0 (clamped to 1), the bins past MAX_NS's
        // hold only values above it (clamped to MAX_NS).
        let (lo, hi) = (Self::index(1), Self::index(MAX_NS));
        let mut counts = self.counts[..=hi].to_vec();
        counts[lo] += counts[0];
        counts[0] = 0;
        counts[hi] += self.counts[hi + 1..].iter().sum::<u64>();
        let mut h = new_hist();
        for (i, &c) in counts.iter().enumerate() {
            if c > 0 {
                h.record_n(Self::value_at(i), c)
                    .expect("bin values lie in the histogram's range");
            }
        }
        h
    }
}

/// Marks a histogram bin that holds values of two of fio's latency ranges.
const STRADDLES: u8 = u8::MAX;

/// fio's latency range ([`fio::lat_level`]) of every histogram bin up to `MAX_NS`, or
/// [`STRADDLES`] where a range boundary falls inside the bin (a few bins above 20 µs). With it,
/// the range of a completion costs one load from the bin the histogram already computed.
fn level_table() -> &'static [u8] {
    static TABLE: std::sync::OnceLock<Box<[u8]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=LatHist::index(MAX_NS))
            .map(|i| {
                let lo = LatHist::value_at(i);
                let hi = LatHist::value_at(i + 1) - 1;
                let (a, b) = (fio::lat_level(lo), fio::lat_level(hi));
                if a == b {
                    a as u8
                } else {
                    STRADDLES
                }
            })
            .collect()
    })
}

impl LatHist {
    /// The counts in fio's bin layout (`--output-format=json+` `bins`): (value fio prints for
    /// the bin, count) for every bin that holds something, in value order. Every bin of this
    /// histogram lies inside one of fio's (fio's bins are 2^4 times wider or more), so the
    /// counts are exactly those fio would have for the same values.
    pub fn fio_bins(&self) -> Vec<(u64, u64)> {
        let mut plat = vec![0u64; fio::PLAT_NR];
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                plat[fio::plat_val_to_idx(Self::value_at(i))] += c;
            }
        }
        plat.iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (fio::plat_idx_to_val(i), c))
            .collect()
    }
}

/// Everything recorded for one op kind.
#[derive(Debug, Clone, Default)]
pub struct KindRecorder {
    pub ios: u64,
    pub bytes: u64,
    pub short_ios: u64,
    pub errors: u64,
    /// I/Os that ended with an error and moved nothing.
    pub failed: u64,
    pub slat: LatHist,
    pub clat: LatHist,
    pub lat: LatHist,
}

impl KindRecorder {
    fn merge(&mut self, o: &KindRecorder) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.short_ios += o.short_ios;
        self.errors += o.errors;
        self.failed += o.failed;
        self.slat.add(&o.slat);
        self.clat.add(&o.clat);
        self.lat.add(&o.lat);
    }
}

/// Counters of one statistics window: ios and bytes per op kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bucket {
    ios: [u64; 3],
    bytes: [u64; 3],
}

/// Length of the windows of the interval statistics (`bw_min` … `iops_samples`): fio's
/// `bwavgtime` and `iopsavgtime` defaults, 500 ms.
pub const STAT_WINDOW_NS: u64 = 500_000_000;
/// Length of one point of the per-interval series (two statistics windows).
pub const SERIES_NS: u64 = 1_000_000_000;
const _: () = assert!(SERIES_NS.is_multiple_of(STAT_WINDOW_NS));
/// The most statistics windows a recorder keeps (about 12 days of measured time, 96 MiB).
/// Completions later than that (a simulated run whose virtual time runs away) still count in
/// every total and histogram, but go to one overflow window that no series or interval
/// statistic reports, so memory stays bounded whatever the clock says.
pub const MAX_WINDOWS: usize = 1 << 21;

/// What one worker (or a merge of workers) recorded.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub kinds: [KindRecorder; 3],
    /// One bucket per [`STAT_WINDOW_NS`] of measured time.
    windows: Vec<Bucket>,
    /// The window the last completion fell in, `[cur_start, cur_end)` with index `cur`:
    /// completions arrive nearly in time order, so most need no division to find theirs.
    cur: usize,
    cur_start: u64,
    cur_end: u64,
    /// I/Os per fio `iodepth_level` bucket (depth in flight right after their submission).
    pub depth_counts: [u64; 7],
    /// Submissions per fio `iodepth_submit` bucket (I/Os handed to the kernel at once).
    pub submit_counts: [u64; 7],
    /// Reaps per fio `iodepth_complete` bucket (completions collected at once).
    pub complete_counts: [u64; 7],
    /// Completions per fio latency range (`latency_ns`/`_us`/`_ms`, by completion latency).
    pub lat_level_counts: [u64; fio::LAT_LEVELS],
    pub error_records: Vec<IoErrorRecord>,
    /// fio's tally of the errors (what `continue_on_error` went past, what ended the job).
    pub tally: ErrorTally,
    /// Verification counters (sectors ok / never written / bad).
    pub verify: VerifySummary,
    /// Time-series logs, when asked for.
    pub log: Option<LogRecorder>,
    /// [`level_table`].
    levels: LevelTable,
}

/// [`level_table`] (shown by name in debug output).
#[derive(Clone, Copy)]
struct LevelTable(&'static [u8]);

impl std::fmt::Debug for LevelTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LevelTable({} bins)", self.0.len())
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-window statistics in fio's units (`bw_*` in KiB/s, `iops_*` in I/Os per second).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct WindowStats {
    min: u64,
    max: u64,
    mean: f64,
    dev: f64,
    samples: u64,
}

/// fio's statistics of per-window rates: only windows in which the op kind did I/O count
/// (`__add_samples` skips the others), standard deviation of a sample (n − 1).
fn window_stats(values: &[u64]) -> WindowStats {
    if values.is_empty() {
        return WindowStats::default();
    }
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
    let dev = if values.len() > 1 {
        (values
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0))
            .sqrt()
    } else {
        0.0
    };
    WindowStats {
        min: *values.iter().min().unwrap_or(&0),
        max: *values.iter().max().unwrap_or(&0),
        mean,
        dev,
        samples: values.len() as u64,
    }
}

impl Recorder {
    /// A recorder without logs.
    pub fn new() -> Self {
        Recorder {
            kinds: Default::default(),
            windows: Vec::with_capacity(64),
            cur: 0,
            cur_start: 0,
            cur_end: 0,
            depth_counts: [0; 7],
            submit_counts: [0; 7],
            complete_counts: [0; 7],
            lat_level_counts: [0; fio::LAT_LEVELS],
            error_records: Vec::new(),
            tally: ErrorTally::default(),
            verify: VerifySummary::default(),
            log: None,
            levels: LevelTable(level_table()),
        }
    }

    /// A recorder that also keeps time-series logs for `jobs` jobs numbered from `first_job`
    /// (1-based), and reserves statistics windows for `expected_ns` of measured time.
    pub fn with_log(log: Option<LogConfig>, first_job: u32, jobs: u32, expected_ns: u64) -> Self {
        let mut r = Self::new();
        let windows = (expected_ns / STAT_WINDOW_NS).min(1 << 20) as usize + 2;
        r.windows.reserve(windows);
        r.log = log.map(|c| LogRecorder::new(c, first_job, jobs));
        r
    }

    /// Starts the statistics again (fio's `reset_all_stats`: a latency target's final window):
    /// everything recorded so far is dropped but the logs, which go on.
    pub fn restart(&mut self) {
        let log = self.log.take();
        let capacity = self.windows.capacity();
        *self = Self::new();
        self.windows.reserve(capacity);
        self.log = log;
    }

    /// Records one successful completion of the `job`-th job this recorder sees (0-based;
    /// only logs tell jobs apart). `t_rel` is the completion time since measurement start.
    /// Always inlined into the engine loop: as a call it costs the null target ≈ 20 % per I/O.
    #[inline(always)]
    pub fn record(&mut self, job: u32, kind: OpKind, bytes: u64, slat: u64, clat: u64, t_rel: u64) {
        self.record_io(job, kind, bytes, 0, slat, clat, t_rel)
    }

    /// Counts `ios` I/Os of `bytes` in all of direction `kind` (read, write, trim: 0, 1, 2)
    /// without latency samples: fio's I/Os of a job that ended within its ramp.
    pub fn count_unsampled(&mut self, kind: usize, ios: u64, bytes: u64) {
        let k = &mut self.kinds[kind];
        k.ios += ios;
        k.bytes += bytes;
    }

    /// [`Recorder::record`] with the I/O's offset, which logs of every I/O keep (fio's
    /// `log_offset`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn record_io(
        &mut self,
        job: u32,
        kind: OpKind,
        bytes: u64,
        offset: u64,
        slat: u64,
        clat: u64,
        t_rel: u64,
    ) {
        let k = &mut self.kinds[kind.index()];
        k.ios += 1;
        k.bytes += bytes;
        k.slat.record(slat);
        let bin = k.clat.record_bin(clat);
        k.lat.record(slat + clat);
        let level = match self.levels.0.get(bin) {
            Some(&l) if l != STRADDLES => l as usize,
            _ => fio::lat_level(clat),
        };
        self.lat_level_counts[level] += 1;
        if !(self.cur_start..self.cur_end).contains(&t_rel) {
            self.enter_window(t_rel);
        }
        let b = &mut self.windows[self.cur];
        b.ios[kind.index()] += 1;
        b.bytes[kind.index()] += bytes;
        if let Some(log) = &mut self.log {
            log.record(job, kind, bytes, offset, slat, clat, t_rel);
        }
    }

    /// Makes the window holding `t_rel` the current one (growing the series to it).
    #[cold]
    fn enter_window(&mut self, t_rel: u64) {
        let idx = (t_rel / STAT_WINDOW_NS).min(MAX_WINDOWS as u64) as usize;
        if idx >= self.windows.len() {
            self.windows.resize(idx + 1, Bucket::default());
        }
        self.cur = idx;
        self.cur_start = idx as u64 * STAT_WINDOW_NS;
        self.cur_end = if idx == MAX_WINDOWS {
            u64::MAX
        } else {
            self.cur_start.saturating_add(STAT_WINDOW_NS)
        };
    }

    /// The reported windows (without the overflow window).
    fn reported_windows(&self) -> &[Bucket] {
        &self.windows[..self.windows.len().min(MAX_WINDOWS)]
    }

    /// Notes that a short transfer happened (already recorded with the bytes it moved).
    pub fn record_short(&mut self, kind: OpKind) {
        self.kinds[kind.index()].short_ios += 1;
    }

    /// Notes that an I/O ended with an error and moved nothing (its error is recorded with
    /// [`Recorder::record_error`]).
    pub fn record_failed(&mut self, kind: OpKind) {
        self.kinds[kind.index()].failed += 1;
    }

    /// Records a failed I/O with its offset, errno and reason.
    pub fn record_error(&mut self, kind: OpKind, offset: u64, len: u64, errno: i32, error: String) {
        self.kinds[kind.index()].errors += 1;
        if self.error_records.len() < MAX_ERROR_RECORDS {
            self.error_records.push(IoErrorRecord {
                kind,
                offset,
                len,
                errno,
                error,
            });
        }
    }

    /// Records an error of the job rather than of one I/O (fio's `td_verror`: a minimum rate
    /// not met): the job's error, counted in no direction's I/O errors.
    pub fn record_job_error(&mut self, kind: OpKind, errno: i32, error: String) {
        self.tally.end(errno);
        if self.error_records.len() < MAX_ERROR_RECORDS {
            self.error_records.push(IoErrorRecord {
                kind,
                offset: 0,
                len: 0,
                errno,
                error,
            });
        }
    }

    /// Records that `n` I/Os were submitted leaving `depth` in flight (fio's `iodepth_level`).
    #[inline]
    pub fn record_depth(&mut self, depth: u32, n: u64) {
        self.depth_counts[fio::depth_bucket(depth)] += n;
    }

    /// Records one submission to the kernel of `n` I/Os (fio's `iodepth_submit`).
    #[inline]
    pub fn record_submit(&mut self, n: u64) {
        self.submit_counts[fio::batch_bucket(n)] += 1;
    }

    /// Records one reap of `n` completions (fio's `iodepth_complete`).
    #[inline]
    pub fn record_complete(&mut self, n: u64) {
        self.complete_counts[fio::batch_bucket(n)] += 1;
    }

    /// Adds another recorder's data (exact: histograms add bucket by bucket).
    pub fn merge(&mut self, o: &Recorder) {
        for (a, b) in self.kinds.iter_mut().zip(o.kinds.iter()) {
            a.merge(b);
        }
        if o.windows.len() > self.windows.len() {
            self.windows.resize(o.windows.len(), Bucket::default());
        }
        for (a, b) in self.windows.iter_mut().zip(o.windows.iter()) {
            for i in 0..3 {
                a.ios[i] += b.ios[i];
                a.bytes[i] += b.bytes[i];
            }
        }
        for (acc, add) in [
            (&mut self.depth_counts, &o.depth_counts),
            (&mut self.submit_counts, &o.submit_counts),
            (&mut self.complete_counts, &o.complete_counts),
        ] {
            for (a, b) in acc.iter_mut().zip(add.iter()) {
                *a += b;
            }
        }
        for (a, b) in self.lat_level_counts.iter_mut().zip(&o.lat_level_counts) {
            *a += b;
        }
        self.verify.sectors_ok += o.verify.sectors_ok;
        self.verify.sectors_unwritten += o.verify.sectors_unwritten;
        self.verify.sectors_bad += o.verify.sectors_bad;
        self.tally.merge(&o.tally);
        for e in &o.error_records {
            if self.error_records.len() < MAX_ERROR_RECORDS {
                self.error_records.push(e.clone());
            }
        }
        match (&mut self.log, &o.log) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.log = Some(b.clone()),
            _ => {}
        }
    }

    /// fio's latency_ns / latency_us / latency_ms: percent of I/Os (all kinds) per range of
    /// completion latency, a range holding anything showing at least 0.01 %.
    pub fn latency_levels(&self) -> LatLevels {
        let total: u64 = self.lat_level_counts.iter().sum();
        let pct = fio::percentages(&self.lat_level_counts, total, 0.01);
        let unit = |r: std::ops::Range<usize>| -> Vec<(String, f64)> {
            r.map(|i| (fio::lat_level_key(i).to_string(), pct[i]))
                .collect()
        };
        LatLevels {
            ns: unit(0..10),
            us: unit(10..20),
            ms: unit(20..fio::LAT_LEVELS),
        }
    }

    /// fio's iodepth_level, iodepth_submit and iodepth_complete percentages (a bucket holding
    /// anything shows at least 0.1 %, as in fio).
    pub fn depth_levels(&self) -> DepthLevels {
        let dist = |counts: &[u64; 7], keys: &[&str; 7]| -> Vec<(String, f64)> {
            let total = counts.iter().sum();
            keys.iter()
                .zip(fio::percentages(counts, total, 0.1))
                .map(|(k, p)| (k.to_string(), p))
                .collect()
        };
        DepthLevels {
            level: dist(&self.depth_counts, &fio::DEPTH_LEVELS),
            submit: dist(&self.submit_counts, &fio::BATCH_LEVELS),
            complete: dist(&self.complete_counts, &fio::BATCH_LEVELS),
        }
    }

    /// Total I/Os of all kinds.
    pub fn total_ios(&self) -> u64 {
        self.kinds.iter().map(|k| k.ios).sum()
    }

    /// Total errors of all kinds.
    pub fn total_errors(&self) -> u64 {
        self.kinds.iter().map(|k| k.errors).sum()
    }

    /// The per-second series over `runtime_ns`: every full second, each labelled with its end;
    /// a last partial second is kept only when it covers at least half a second, and then
    /// labelled with its true end and rated over its true length. A shorter tail (the drain of a
    /// time-based run's last I/Os, often a few microseconds) is left out: a rate over it would be
    /// extrapolated from a handful of completions. Its I/Os still count in the totals.
    pub fn series(&self, runtime_ns: u64) -> Vec<SeriesPoint> {
        const PER: usize = (SERIES_NS / STAT_WINDOW_NS) as usize;
        let full = runtime_ns / SERIES_NS;
        let rest = runtime_ns % SERIES_NS;
        // Never more points than the windows kept (see [`MAX_WINDOWS`]).
        let n = (full + (rest > 0 && rest * 2 >= SERIES_NS) as u64).min((MAX_WINDOWS / PER) as u64)
            as usize;
        (0..n)
            .map(|i| {
                let mut b = Bucket::default();
                for w in self.reported_windows().iter().skip(i * PER).take(PER) {
                    for k in 0..3 {
                        b.ios[k] += w.ios[k];
                        b.bytes[k] += w.bytes[k];
                    }
                }
                let start = i as u64 * SERIES_NS;
                let len = (runtime_ns - start).min(SERIES_NS);
                let per_s = 1e9 / len as f64;
                SeriesPoint {
                    t_ms: (start + len).div_ceil(1_000_000),
                    read_iops: b.ios[0] as f64 * per_s,
                    write_iops: b.ios[1] as f64 * per_s,
                    trim_iops: b.ios[2] as f64 * per_s,
                    read_bw_bytes: b.bytes[0] as f64 * per_s,
                    write_bw_bytes: b.bytes[1] as f64 * per_s,
                    trim_bw_bytes: b.bytes[2] as f64 * per_s,
                }
            })
            .collect()
    }

    /// The logs of every job, cut to `runtime_ns` (empty without logs).
    pub fn job_logs(&self, runtime_ns: u64) -> Vec<JobLog> {
        self.log
            .as_ref()
            .map(|l| l.job_logs(runtime_ns))
            .unwrap_or_default()
    }

    /// (ios, bytes) of `kind` in each complete window of `runtime_ns`, and the window length:
    /// the log's windows when `use_log` and logs are kept, else [`STAT_WINDOW_NS`].
    fn window_counts(
        &self,
        kind: OpKind,
        runtime_ns: u64,
        use_log: bool,
    ) -> (Vec<(u64, u64)>, u64) {
        let k = kind.index();
        match self
            .log
            .as_ref()
            .filter(|l| use_log && l.config.interval_ns > 0)
        {
            Some(log) => {
                let len = log.config.interval_ns;
                let full = (runtime_ns / len).min(crate::log::MAX_LOG_WINDOWS as u64) as usize;
                let mut w = log.merged_windows();
                w.resize(full.max(w.len()), Default::default());
                (
                    w[..full]
                        .iter()
                        .map(|w| (w.kinds[k].ios, w.kinds[k].bytes))
                        .collect(),
                    len,
                )
            }
            None => {
                let full = (runtime_ns / STAT_WINDOW_NS).min(MAX_WINDOWS as u64) as usize;
                let v = (0..full)
                    .map(|i| {
                        let b = self.reported_windows().get(i).copied().unwrap_or_default();
                        (b.ios[k], b.bytes[k])
                    })
                    .collect();
                (v, STAT_WINDOW_NS)
            }
        }
    }

    /// Everything recorded as one direction: reads, writes and trims added together in the read
    /// slot (fio's `unified_rw_reporting=mixed`, whose `mixed` entry is summarised from it).
    /// Time-series logs are left out.
    pub fn unified(&self) -> Recorder {
        let mut r = self.clone();
        r.log = None;
        let (first, rest) = r.kinds.split_at_mut(1);
        for k in rest {
            first[0].merge(k);
            *k = KindRecorder::default();
        }
        for w in &mut r.windows {
            w.ios = [w.ios.iter().sum(), 0, 0];
            w.bytes = [w.bytes.iter().sum(), 0, 0];
        }
        r
    }

    /// Summarises one op kind over `runtime_ns` of measured time.
    pub fn summary(&self, kind: OpKind, runtime_ns: u64) -> OpSummary {
        let k = &self.kinds[kind.index()];
        let secs = runtime_ns as f64 / 1e9;
        let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        // fio's interval statistics: a rate per complete window in which this kind did I/O,
        // in whole KiB/s and I/Os per second (`__add_samples`).
        let log_bw = self.log.as_ref().is_some_and(|l| l.config.bw);
        let log_iops = self.log.as_ref().is_some_and(|l| l.config.iops);
        let (bw_windows, bw_len) = self.window_counts(kind, runtime_ns, log_bw);
        let (iops_windows, iops_len) = self.window_counts(kind, runtime_ns, log_iops);
        let ms = |len: u64| (len / 1_000_000).max(1);
        let bw: Vec<u64> = bw_windows
            .iter()
            .filter(|w| w.1 > 0)
            .map(|w| w.1 * 1000 / ms(bw_len) / 1024)
            .collect();
        let iops: Vec<u64> = iops_windows
            .iter()
            .filter(|w| w.0 > 0)
            .map(|w| w.0 * 1000 / ms(iops_len))
            .collect();
        let bw = window_stats(&bw);
        let iops = window_stats(&iops);
        OpSummary {
            ios: k.ios,
            bytes: k.bytes,
            runtime_ns,
            iops: rate(k.ios),
            bw_bytes: rate(k.bytes),
            short_ios: k.short_ios,
            errors: k.errors,
            failed_ios: k.failed,
            slat: lat_summary(&k.slat),
            clat: lat_summary(&k.clat),
            lat: lat_summary(&k.lat),
            iops_min: iops.min as f64,
            iops_max: iops.max as f64,
            iops_mean: iops.mean,
            iops_stddev: iops.dev,
            samples: iops.samples,
            bw_min_kib: bw.min,
            bw_max_kib: bw.max,
            bw_mean_kib: bw.mean,
            bw_dev_kib: bw.dev,
            bw_samples: bw.samples,
        }
    }
}

fn lat_summary(hist: &LatHist) -> LatSummary {
    let h = hist.to_histogram();
    if h.is_empty() {
        return LatSummary::default();
    }
    LatSummary {
        n: h.len(),
        min: h.min(),
        max: h.max(),
        mean: h.mean(),
        stddev: h.stdev(),
        percentiles: PERCENTILES
            .iter()
            .map(|&p| (p, h.value_at_quantile(p / 100.0)))
            .collect(),
        bins: hist.fio_bins(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_adds_the_directions() {
        let mut r = Recorder::default();
        r.record(0, OpKind::Read, 4096, 10, 100, 1_000);
        r.record(0, OpKind::Write, 8192, 10, 300, 600_000_000);
        r.record(0, OpKind::Write, 8192, 10, 500, 700_000_000);
        let u = r.unified();
        let m = u.summary(OpKind::Read, 1_000_000_000);
        assert_eq!((m.ios, m.bytes), (3, 20480));
        assert_eq!((m.clat.min, m.clat.max, m.clat.n), (100, 500, 3));
        assert_eq!(u.summary(OpKind::Write, 1_000_000_000).ios, 0);
        assert_eq!(
            m.samples, 2,
            "a window per half second with I/O of either kind"
        );
    }

    #[test]
    fn a_runaway_clock_keeps_memory_bounded_and_totals_exact() {
        // A completion a century into the run (a simulated drive with absurd timings).
        let mut r = Recorder::default();
        let far = 100 * 365 * 86_400 * 1_000_000_000u64;
        r.record(0, OpKind::Write, 4096, 10, 20, 1_000_000);
        r.record(0, OpKind::Write, 4096, 10, 20, far);
        r.record(0, OpKind::Write, 4096, 10, 20, far + 1);
        assert_eq!(r.windows.len(), MAX_WINDOWS + 1);
        assert_eq!(r.kinds[OpKind::Write.index()].ios, 3);
        let series = r.series(far + 2);
        assert_eq!(series.len(), MAX_WINDOWS / 2);
        let in_series: f64 = series.iter().map(|p| p.write_iops).sum();
        assert_eq!(
            in_series, 1.0,
            "only the completion inside the kept windows"
        );
        let s = r.summary(OpKind::Write, far + 2);
        assert_eq!(s.ios, 3);
    }

    #[test]
    fn record_and_summarise() {
        let mut r = Recorder::default();
        for i in 0..1000u64 {
            r.record(0, OpKind::Read, 4096, 100, 1000 + i, i * 2_000_000);
        }
        let s = r.summary(OpKind::Read, 2_000_000_000);
        assert_eq!(s.ios, 1000);
        assert_eq!(s.bytes, 4_096_000);
        assert!((s.iops - 500.0).abs() < 1e-9);
        assert_eq!(s.clat.min, 1000);
        assert!(s.clat.max >= 1999 && s.clat.max <= 2001);
        assert!((s.clat.mean - 1499.5).abs() < 2.0);
        // four complete 500 ms windows of 250 I/Os: 500 IOPS, 2000 KiB/s each
        assert_eq!(s.samples, 4);
        assert_eq!(s.iops_min, 500.0);
        assert_eq!(s.iops_stddev, 0.0);
        assert_eq!(s.bw_samples, 4);
        assert_eq!(s.bw_min_kib, 2000);
        let p50 = s.clat.percentiles.iter().find(|p| p.0 == 50.0).unwrap().1;
        assert!((1495..=1505).contains(&p50), "{p50}");
        assert_eq!(r.series(2_000_000_000).len(), 2);
    }

    #[test]
    fn series_drops_a_short_tail_and_rates_a_long_one_over_its_length() {
        let mut r = Recorder::default();
        // 1000 completions per second for 2.6 s, then a few in a 3 µs drain
        for i in 0..2600u64 {
            r.record(0, OpKind::Read, 4096, 0, 10, i * 1_000_000);
        }
        let s = r.series(2_600_000_000);
        assert_eq!(s.len(), 3);
        assert_eq!(s[1].t_ms, 2000);
        assert_eq!(s[2].t_ms, 2600);
        assert!((s[2].read_iops - 1000.0).abs() < 1e-6, "{}", s[2].read_iops);
        for i in 0..3u64 {
            r.record(0, OpKind::Read, 4096, 0, 10, 2_600_000_000 + i * 1000);
        }
        let s = r.series(3_000_003_000);
        assert_eq!(s.len(), 3, "a 3 µs tail is not a point");
        assert_eq!(s.last().unwrap().t_ms, 3000);
    }

    #[test]
    fn merge_is_exact() {
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        let mut all = Recorder::default();
        for i in 0..5000u64 {
            let (target, kind) = if i % 3 == 0 {
                (&mut a, OpKind::Write)
            } else {
                (&mut b, OpKind::Read)
            };
            let lat = (i * 7919) % 100_000 + 1;
            target.record(0, kind, 4096, 10, lat, i * 1_000_000);
            all.record(0, kind, 4096, 10, lat, i * 1_000_000);
        }
        a.merge(&b);
        for kind in OpKind::ALL {
            let x = a.summary(kind, 5_000_000_000);
            let y = all.summary(kind, 5_000_000_000);
            assert_eq!(x, y);
        }
    }

    #[test]
    fn lat_hist_equals_hdrhistogram() {
        let mut direct = new_hist();
        let mut fast = LatHist::default();
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut values = vec![
            0, 1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097,
        ];
        values.extend([MAX_NS - 1, MAX_NS, MAX_NS + 1, u64::MAX]);
        for shift in 0..64 {
            values.push(1u64 << shift);
            values.push((1u64 << shift).wrapping_sub(1));
            values.push((1u64 << shift) + 1);
        }
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // log-uniform over 1 ns .. ~2 h
            values.push((x >> 22) >> (x % 42));
        }
        for &v in &values {
            direct.saturating_record(v.clamp(1, MAX_NS));
            fast.record(v);
        }
        let rebuilt = fast.to_histogram();
        assert_eq!(rebuilt, direct);
        assert_eq!(rebuilt.len(), direct.len());
        assert_eq!(rebuilt.min(), direct.min());
        assert_eq!(rebuilt.max(), direct.max());
        assert_eq!(rebuilt.mean().to_bits(), direct.mean().to_bits());
        assert_eq!(rebuilt.stdev().to_bits(), direct.stdev().to_bits());
        for p in PERCENTILES {
            let q = p / 100.0;
            assert_eq!(rebuilt.value_at_quantile(q), direct.value_at_quantile(q));
        }
        assert_eq!(fast.len(), values.len() as u64);
        for v in rebuilt.iter_recorded() {
            assert_eq!(
                LatHist::value_at(LatHist::index(v.value_iterated_to())),
                direct.lowest_equivalent(v.value_iterated_to())
            );
        }
    }

    #[test]
    fn level_table_agrees_with_fio_ranges() {
        let t = level_table();
        let mut straddling = 0;
        for (i, &l) in t.iter().enumerate() {
            let (lo, hi) = (LatHist::value_at(i), LatHist::value_at(i + 1) - 1);
            if l == STRADDLES {
                straddling += 1;
                assert_ne!(fio::lat_level(lo), fio::lat_level(hi));
            } else {
                assert_eq!(fio::lat_level(lo), l as usize, "bin {i}");
                assert_eq!(fio::lat_level(hi), l as usize, "bin {i}");
            }
        }
        // at most one bin per range boundary
        assert!(straddling <= 31, "{straddling}");
        // recording goes through the table: values on both sides of a straddled boundary
        let mut r = Recorder::default();
        for v in [49_999u64, 50_000, 50_001, 999_999, 1_000_000, 1_999, 2_000] {
            r.record(0, OpKind::Read, 1, 0, v, 0);
        }
        let mut want = [0u64; fio::LAT_LEVELS];
        for v in [49_999u64, 50_000, 50_001, 999_999, 1_000_000, 1_999, 2_000] {
            want[fio::lat_level(v)] += 1;
        }
        assert_eq!(r.lat_level_counts, want);
    }

    #[test]
    fn depth_buckets() {
        let mut r = Recorder::default();
        r.record_depth(1, 1);
        r.record_depth(3, 4);
        r.record_depth(5, 1);
        r.record_depth(32, 10);
        r.record_depth(63, 3);
        r.record_depth(64, 2);
        // fio: a depth counts in the highest bucket not above it
        assert_eq!(r.depth_counts, [1, 4, 1, 0, 0, 13, 2]);
        r.record_submit(1);
        r.record_submit(4);
        r.record_submit(32);
        r.record_complete(0);
        let l = r.depth_levels();
        assert_eq!(l.level[1], ("2".to_string(), 4.0 / 21.0 * 100.0));
        assert_eq!(l.submit[1], ("4".to_string(), 200.0 / 3.0));
        assert_eq!(l.submit[4], ("32".to_string(), 100.0 / 3.0));
        assert_eq!(l.complete[0], ("0".to_string(), 100.0));
    }

    #[test]
    fn errors_are_capped_but_counted() {
        let mut r = Recorder::default();
        for i in 0..100 {
            r.record_error(OpKind::Write, i * 4096, 4096, 5, "EIO".into());
        }
        assert_eq!(r.total_errors(), 100);
        assert_eq!(r.error_records.len(), MAX_ERROR_RECORDS);
        assert_eq!(r.error_records[3].offset, 3 * 4096);
    }
}

#[cfg(test)]
mod level_tests {
    use super::*;

    #[test]
    fn latency_levels_sum_to_100() {
        let mut r = Recorder::default();
        // by completion latency, as fio: the submission latency does not move an I/O
        r.record(0, OpKind::Read, 1, 900, 1_500, 0); // 1.5 us → us "2"
        r.record(0, OpKind::Read, 1, 0, 3_000_000, 0); // 3 ms → ms "4"
        r.record(0, OpKind::Write, 1, 0, 5_000_000_000, 0); // 5 s → ms ">=2000"
        r.record(0, OpKind::Write, 1, 5_000, 3, 0); // 3 ns → ns "4"
        let l = r.latency_levels();
        let sum: f64 = l.ns.iter().chain(&l.us).chain(&l.ms).map(|x| x.1).sum();
        assert!((sum - 100.0).abs() < 1e-9, "{sum}");
        let get = |v: &Vec<(String, f64)>, k: &str| v.iter().find(|x| x.0 == k).unwrap().1;
        assert_eq!(get(&l.us, "2"), 25.0);
        assert_eq!(get(&l.ms, "4"), 25.0);
        assert_eq!(get(&l.ms, ">=2000"), 25.0);
        assert_eq!(get(&l.ns, "4"), 25.0);
        // the boundaries are exclusive above: 2000 ns is us "4", 1999 ns us "2"
        let mut r = Recorder::default();
        r.record(0, OpKind::Read, 1, 0, 2_000, 0);
        r.record(0, OpKind::Read, 1, 0, 1_999, 0);
        for _ in 0..99_998 {
            r.record(0, OpKind::Read, 1, 0, 100_000_000, 0);
        }
        let l = r.latency_levels();
        assert_eq!(
            get(&l.us, "4"),
            0.01,
            "a bucket with anything shows at least 0.01 %"
        );
        assert_eq!(get(&l.us, "2"), 0.01);
        assert_eq!(l.ns.len() + l.us.len() + l.ms.len(), 32);
    }
}

/// A recorder's bytes could not be read back ([`Recorder::from_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read a recorder: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Magic and version of [`Recorder::to_bytes`].
const CODEC_MAGIC: &[u8; 4] = b"SLR2";

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .buf
                .get(self.at)
                .ok_or_else(|| DecodeError("truncated".into()))?;
            self.at += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError("a number is too long".into()))
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| DecodeError("truncated".into()))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn len(&mut self, max: usize, what: &str) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        if n > max as u64 {
            return Err(DecodeError(format!("{what}: {n} is more than {max}")));
        }
        Ok(n as usize)
    }
}

impl LatHist {
    /// Sparse: the number of non-empty bins, then (gap to the previous bin, count) per bin.
    fn encode(&self, out: &mut Vec<u8>) {
        let nonzero = self.counts.iter().filter(|&&c| c > 0).count();
        put_varint(out, nonzero as u64);
        let mut prev = 0usize;
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                put_varint(out, (i - prev) as u64);
                put_varint(out, c);
                prev = i;
            }
        }
    }

    /// Adds the counts of an encoded histogram (decoding and merging in one pass).
    fn add_encoded(&mut self, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        let n = r.len(self.counts.len(), "histogram bins")?;
        let mut at = 0usize;
        for _ in 0..n {
            at = at
                .checked_add(r.varint()? as usize)
                .filter(|&i| i < self.counts.len())
                .ok_or_else(|| DecodeError("histogram bin out of range".into()))?;
            self.counts[at] = self.counts[at]
                .checked_add(r.varint()?)
                .ok_or_else(|| DecodeError("histogram count overflows".into()))?;
        }
        Ok(())
    }
}

impl Recorder {
    /// A compact, self-contained encoding of everything recorded (histograms as their non-empty
    /// bins), for sending to another process: [`Recorder::merge_bytes`] and
    /// [`Recorder::from_bytes`] read it back exactly. Time-series logs ([`Recorder::log`]) are
    /// not part of it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(CODEC_MAGIC);
        for k in &self.kinds {
            for v in [k.ios, k.bytes, k.short_ios, k.errors, k.failed] {
                put_varint(&mut out, v);
            }
            k.slat.encode(&mut out);
            k.clat.encode(&mut out);
            k.lat.encode(&mut out);
        }
        put_varint(&mut out, self.windows.len() as u64);
        for b in &self.windows {
            for v in b.ios.iter().chain(b.bytes.iter()) {
                put_varint(&mut out, *v);
            }
        }
        for v in self
            .depth_counts
            .iter()
            .chain(&self.submit_counts)
            .chain(&self.complete_counts)
            .chain(&self.lat_level_counts)
        {
            put_varint(&mut out, *v);
        }
        for v in [
            self.verify.sectors_ok,
            self.verify.sectors_unwritten,
            self.verify.sectors_bad,
            self.tally.counted,
            self.tally.first as u32 as u64,
            self.tally.fatal as u32 as u64,
        ] {
            put_varint(&mut out, v);
        }
        put_varint(&mut out, self.error_records.len() as u64);
        for e in &self.error_records {
            put_varint(&mut out, e.kind.index() as u64);
            put_varint(&mut out, e.offset);
            put_varint(&mut out, e.len);
            put_varint(&mut out, e.errno as u32 as u64);
            put_varint(&mut out, e.error.len() as u64);
            out.extend_from_slice(e.error.as_bytes());
        }
        out
    }

    /// Reads a recorder written by [`Recorder::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Recorder, DecodeError> {
        let mut r = Recorder::new();
        r.merge_bytes(bytes)?;
        Ok(r)
    }

    /// Adds an encoded recorder (as [`Recorder::merge`] would add the decoded one, without
    /// building it).
    pub fn merge_bytes(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader { buf: bytes, at: 0 };
        if r.bytes(4)? != CODEC_MAGIC {
            return Err(DecodeError("not an ssdlab recorder (bad magic)".into()));
        }
        for k in self.kinds.iter_mut() {
            k.ios += r.varint()?;
            k.bytes += r.varint()?;
            k.short_ios += r.varint()?;
            k.errors += r.varint()?;
            k.failed += r.varint()?;
            k.slat.add_encoded(&mut r)?;
            k.clat.add_encoded(&mut r)?;
            k.lat.add_encoded(&mut r)?;
        }
        // Never more windows than a recorder keeps (and its overflow window).
        let n = r.len(MAX_WINDOWS + 1, "statistics windows")?;
        if n > self.windows.len() {
            self.windows.resize(n, Bucket::default());
        }
        for b in self.windows.iter_mut().take(n) {
            for v in b.ios.iter_mut().chain(b.bytes.iter_mut()) {
                *v += r.varint()?;
            }
        }
        for v in self
            .depth_counts
            .iter_mut()
            .chain(self.submit_counts.iter_mut())
            .chain(self.complete_counts.iter_mut())
            .chain(self.lat_level_counts.iter_mut())
        {
            *v += r.varint()?;
        }
        self.verify.sectors_ok += r.varint()?;
        self.verify.sectors_unwritten += r.varint()?;
        self.verify.sectors_bad += r.varint()?;
        let tally = ErrorTally {
            counted: r.varint()?,
            first: r.varint()? as u32 as i32,
            fatal: r.varint()? as u32 as i32,
        };
        self.tally.merge(&tally);
        let n = r.len(1 << 20, "error records")?;
        for _ in 0..n {
            let kind = match r.varint()? {
                0 => OpKind::Read,
                1 => OpKind::Write,
                2 => OpKind::Trim,
                k => return Err(DecodeError(format!("unknown op kind {k}"))),
            };
            let offset = r.varint()?;
            let len = r.varint()?;
            let errno = r.varint()? as u32 as i32;
            let tl = r.len(1 << 20, "error text")?;
            let error = String::from_utf8(r.bytes(tl)?.to_vec())
                .map_err(|_| DecodeError("error text is not UTF-8".into()))?;
            if self.error_records.len() < MAX_ERROR_RECORDS {
                self.error_records.push(IoErrorRecord {
                    kind,
                    offset,
                    len,
                    errno,
                    error,
                });
            }
        }
        if r.at != bytes.len() {
            return Err(DecodeError(format!(
                "{} bytes left over",
                bytes.len() - r.at
            )));
        }
        Ok(())
    }

    /// Prefixes every kept error record's text (`"rank 3 (node7): "`), so merged records still
    /// say where they happened.
    pub fn prefix_errors(&mut self, prefix: &str) {
        for e in &mut self.error_records {
            e.error = format!("{prefix}{}", e.error);
        }
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;

    fn sample(seed: u64, n: u64) -> Recorder {
        let mut r = Recorder::default();
        let mut x = seed | 1;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let kind = OpKind::ALL[(x % 3) as usize];
            r.record(0, kind, 4096, x % 500, (x >> 20) % 2_000_000, i * 3_000_000);
            r.record_depth((x % 40) as u32, 1);
            r.record_submit(x % 9);
            r.record_complete(x % 5);
        }
        r.record_short(OpKind::Write);
        r.record_error(
            OpKind::Write,
            8192,
            4096,
            5,
            "EIO: Input/output error".into(),
        );
        r.verify.sectors_ok = seed;
        r
    }

    fn same(a: &Recorder, b: &Recorder) {
        for kind in OpKind::ALL {
            assert_eq!(
                a.summary(kind, 7_000_000_000),
                b.summary(kind, 7_000_000_000)
            );
        }
        assert_eq!(a.series(7_000_000_000), b.series(7_000_000_000));
        assert_eq!(a.depth_counts, b.depth_counts);
        assert_eq!(a.submit_counts, b.submit_counts);
        assert_eq!(a.complete_counts, b.complete_counts);
        assert_eq!(a.lat_level_counts, b.lat_level_counts);
        assert_eq!(a.depth_levels(), b.depth_levels());
        assert_eq!(a.error_records, b.error_records);
        assert_eq!(a.verify, b.verify);
        assert_eq!(a.latency_levels(), b.latency_levels());
    }

    #[test]
    fn round_trip_is_exact() {
        let a = sample(7, 3000);
        let bytes = a.to_bytes();
        same(&Recorder::from_bytes(&bytes).unwrap(), &a);
        // sparse: far smaller than the dense bins
        assert!(bytes.len() < 64 << 10, "{}", bytes.len());
        same(
            &Recorder::from_bytes(&Recorder::default().to_bytes()).unwrap(),
            &Recorder::default(),
        );
    }

    #[test]
    fn merge_bytes_equals_merge() {
        let (a, b) = (sample(3, 2000), sample(11, 5000));
        let mut via_merge = a.clone();
        via_merge.merge(&b);
        let mut via_bytes = a.clone();
        via_bytes.merge_bytes(&b.to_bytes()).unwrap();
        same(&via_bytes, &via_merge);
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let bytes = sample(5, 100).to_bytes();
        for cut in [0, 3, 4, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(Recorder::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(Recorder::from_bytes(&bad).is_err());
        let mut long = bytes;
        long.push(0);
        assert!(Recorder::from_bytes(&long).is_err());
    }
}
