//! The result of a run, measured or simulated: one shape for both.

use crate::log::JobLog;
use serde::{Deserialize, Serialize};
use ssdlab_workload::{OpKind, WorkloadSpec};

/// Percentiles reported for completion and total latency (fio's default list).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Latency statistics in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatSummary {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    /// (percentile, value in ns), e.g. (99.0, 1234).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<(f64, u64)>,
    /// The histogram in fio's bin layout (`--output-format=json+` `bins`): (value fio prints for
    /// the bin, count), in value order. Not kept in the results store.
    #[serde(skip)]
    pub bins: Vec<(u64, u64)>,
}

impl LatSummary {
    /// The value at percentile `p` if it was computed.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|x| x.1)
    }
}

/// Results for one op kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    pub ios: u64,
    pub bytes: u64,
    pub runtime_ns: u64,
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    pub short_ios: u64,
    pub errors: u64,
    /// I/Os that ended with an error and moved nothing (not in `ios`; fio counts them issued,
    /// in `total_ios` and its IOPS).
    #[serde(default)]
    pub failed_ios: u64,
    pub slat: LatSummary,
    pub clat: LatSummary,
    pub lat: LatSummary,
    /// Per-window IOPS statistics as fio computes them (`iops_min` … `iops_samples`): one
    /// rate per complete window (500 ms, or the log's window with an IOPS log) in which this
    /// op kind did I/O; whole I/Os per second; standard deviation of a sample.
    pub iops_min: f64,
    pub iops_max: f64,
    pub iops_mean: f64,
    pub iops_stddev: f64,
    /// Number of IOPS windows.
    pub samples: u64,
    /// Per-window bandwidth statistics as fio computes them (`bw_min` … `bw_samples`), in
    /// whole KiB/s per window (500 ms, or the log's window with a bandwidth log).
    #[serde(default)]
    pub bw_min_kib: u64,
    #[serde(default)]
    pub bw_max_kib: u64,
    #[serde(default)]
    pub bw_mean_kib: f64,
    #[serde(default)]
    pub bw_dev_kib: f64,
    #[serde(default)]
    pub bw_samples: u64,
}

impl OpSummary {
    /// fio's `runtime` of the direction, ms: its whole microseconds rounded up to a ms (fio's
    /// `update_runtime`), 0 when it moved no bytes.
    pub fn fio_runtime_ms(&self) -> u64 {
        if self.bytes == 0 {
            0
        } else {
            (self.runtime_ns / 1000).div_ceil(1000)
        }
    }

    /// fio's `total_ios`: every I/O issued, those that failed included.
    pub fn issued_ios(&self) -> u64 {
        self.ios + self.failed_ios
    }

    /// Megabytes (10^6 bytes) per second.
    pub fn mb_s(&self) -> f64 {
        self.bw_bytes / 1e6
    }
    /// Mebibytes (2^20 bytes) per second.
    pub fn mib_s(&self) -> f64 {
        self.bw_bytes / 1048576.0
    }
}

/// fio's latency_ns / latency_us / latency_ms: percent of I/Os per latency bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatLevels {
    pub ns: Vec<(String, f64)>,
    pub us: Vec<(String, f64)>,
    pub ms: Vec<(String, f64)>,
}

/// fio's iodepth_level, iodepth_submit and iodepth_complete: percent per bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DepthLevels {
    /// Percent of I/Os by the depth in flight right after their submission.
    pub level: Vec<(String, f64)>,
    /// Percent of submissions by the number of I/Os they handed to the kernel.
    pub submit: Vec<(String, f64)>,
    /// Percent of reaps by the number of completions they collected.
    pub complete: Vec<(String, f64)>,
}

/// One point of the per-interval series (rates over the interval ending at `t_ms`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub t_ms: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub trim_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    pub trim_bw_bytes: f64,
}

/// fio's tally of a job's errors (`update_error_count` and `td->error`): the errors of the
/// classes `continue_on_error` names, gone past or not (fio's `total_err`, `first_error`), and
/// the error that ended the job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorTally {
    /// Errors of a class `continue_on_error` names (fio's `total_err`).
    pub counted: u64,
    /// The errno of the first of them (fio's `first_error`; 0: none).
    pub first: i32,
    /// The errno of the error that ended the job (fio's `td->error`; 0: none did).
    pub fatal: i32,
}

impl ErrorTally {
    /// Counts an error of a class `continue_on_error` names.
    pub fn count(&mut self, errno: i32) {
        self.counted += 1;
        if self.counted == 1 {
            self.first = errno;
        }
    }

    /// Notes the error that ends the job (the first one does).
    pub fn end(&mut self, errno: i32) {
        if self.fatal == 0 {
            self.fatal = errno;
        }
    }

    /// Adds the tally of a later part of the same job (or of a later clone).
    pub fn merge(&mut self, o: &ErrorTally) {
        if self.counted == 0 {
            self.first = o.first;
        }
        self.counted += o.counted;
        self.end(o.fatal);
    }

    /// fio's job `error`: the error that ended the job, else the first one gone past (0: none).
    pub fn error(&self) -> i32 {
        if self.fatal != 0 {
            self.fatal
        } else {
            self.first
        }
    }
}

/// A failed or short I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    pub kind: OpKind,
    pub offset: u64,
    pub len: u64,
    /// The errno (EIO for a short transfer, EILSEQ for a verification failure, like fio).
    #[serde(default)]
    pub errno: i32,
    pub error: String,
}

/// CPU time used by the process during the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Voluntary + involuntary context switches.
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

/// What kind of target a run went to (in JSON and the store by the names below).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TargetKind {
    /// Not said (a result built by hand).
    #[default]
    #[serde(rename = "")]
    Unknown,
    /// The null target: I/O completes at once, nothing is read or written.
    #[serde(rename = "null")]
    Null,
    /// A regular file.
    #[serde(rename = "file")]
    File,
    /// A block device.
    #[serde(rename = "block")]
    Block,
    /// `/dev/null` or `/dev/zero`: nothing stored, nothing read but zeros.
    #[serde(rename = "char")]
    Char,
    /// A RAID 0 stripe set of files or devices, run in userspace.
    #[serde(rename = "raid0")]
    Raid0,
    /// One simulated drive.
    #[serde(rename = "sim")]
    Sim,
    /// A simulated RAID 0 array.
    #[serde(rename = "sim-raid0")]
    SimRaid0,
}

impl TargetKind {
    /// The name results carry.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Unknown => "",
            TargetKind::Null => "null",
            TargetKind::File => "file",
            TargetKind::Block => "block",
            TargetKind::Char => "char",
            TargetKind::Raid0 => "raid0",
            TargetKind::Sim => "sim",
            TargetKind::SimRaid0 => "sim-raid0",
        }
    }

    /// A simulated drive or array (virtual time, a model's counters).
    pub fn is_sim(self) -> bool {
        matches!(self, TargetKind::Sim | TargetKind::SimRaid0)
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The I/O engine a run used (in JSON and the store by the names below).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EngineKind {
    /// Not said (a result built by hand).
    #[default]
    #[serde(rename = "")]
    Unknown,
    /// The null target's engine: nothing submitted to the kernel.
    #[serde(rename = "null")]
    Null,
    /// One thread per outstanding I/O, each in pread/pwrite.
    #[serde(rename = "sync")]
    Sync,
    /// io_uring.
    #[serde(rename = "io_uring")]
    IoUring,
    /// The SSD simulator, on virtual time.
    #[serde(rename = "sim")]
    Sim,
}

impl EngineKind {
    /// The name results carry (fio's `ioengine` for the real ones).
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Unknown => "",
            EngineKind::Null => "null",
            EngineKind::Sync => "sync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Sim => "sim",
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the run went to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetDesc {
    pub kind: TargetKind,
    /// Path, preset name or "null".
    pub name: String,
    /// Usable size in bytes.
    pub size: u64,
    pub engine: EngineKind,
    /// O_DIRECT used (real targets).
    pub direct: bool,
    /// Region used: offset and span in bytes.
    pub offset: u64,
    pub span: u64,
    /// Free-form details (stripe size, members, drive state...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<(String, String)>,
}

/// Per-member statistics of a stripe set (fio's disk_util with aggr_* fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberStats {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time with at least one I/O in flight, ns.
    pub busy_ns: u64,
    /// Sum of per-I/O service times, ns (fio's ticks).
    pub read_ticks_ns: u64,
    pub write_ticks_ns: u64,
}

/// What `--verify` found, in 512-byte sectors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifySummary {
    /// Sectors read back with a valid header for their offset and the run's seed.
    pub sectors_ok: u64,
    /// Sectors read that were never written by a verifying run.
    pub sectors_unwritten: u64,
    /// Sectors with a bad CRC, misplaced data or a foreign seed.
    pub sectors_bad: u64,
}

/// The steady-state test of SNIA's PTS run before the measured round (simulated drives): the
/// measured workload in rounds until the last five agree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// IOPS of every round run (the last one is the result).
    pub rounds: Vec<f64>,
    /// The round (1-based) that closed the first window meeting both criteria; `None` when
    /// no window did within the rounds allowed.
    pub reached_at: Option<usize>,
    /// Of the last window: average IOPS, range and best-fit excursion in % of the average.
    pub window_avg: f64,
    pub range_pct: f64,
    pub slope_pct: f64,
}

/// fio's `steadystate` check of a job (its JSON `steadystate` block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FioSteadyState {
    pub criterion: ssdlab_workload::SteadyCriterion,
    /// The samples met the criterion and the job ended there.
    pub attained: bool,
    /// The last value compared with the limit (fio's `criterion`).
    pub value: f64,
    pub max_deviation: f64,
    pub slope: f64,
    /// The window's samples, oldest first (zeros where it was not filled): IOPS, bytes/s and
    /// mean completion latency in ns.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
    pub lat_ns: Vec<u64>,
}

impl FioSteadyState {
    fn mean(v: &[u64]) -> u64 {
        if v.is_empty() {
            0
        } else {
            v.iter().sum::<u64>() / v.len() as u64
        }
    }
    pub fn iops_mean(&self) -> u64 {
        Self::mean(&self.iops)
    }
    pub fn bw_mean(&self) -> u64 {
        Self::mean(&self.bw)
    }
    pub fn lat_mean(&self) -> u64 {
        Self::mean(&self.lat_ns)
    }
}

/// The complete result of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub spec: WorkloadSpec,
    pub target: TargetDesc,
    pub read: OpSummary,
    pub write: OpSummary,
    pub trim: OpSummary,
    /// Measured time (ramp excluded), ns.
    pub runtime_ns: u64,
    /// Ramp time actually run, ns.
    pub ramp_ns: u64,
    /// Unix time (ms) when the run started.
    pub timestamp_ms: u64,
    /// True when the run was stopped early by Ctrl-C.
    pub interrupted: bool,
    /// True when the run stopped because of an I/O error.
    pub stopped_on_error: bool,
    /// True when the run was stopped from outside before its own end without being interrupted
    /// (stonewalling: another rank of a job finished its `--ios`/`--bytes` first, or failed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stonewalled: bool,
    pub cpu: CpuUsage,
    /// Percent of I/Os at each fio iodepth level (keys as in [`crate::fio::DEPTH_LEVELS`]).
    pub iodepth_level: Vec<(String, f64)>,
    /// fio's iodepth_submit and iodepth_complete (percent of submissions and reaps by size).
    #[serde(default)]
    pub iodepth_submit: Vec<(String, f64)>,
    #[serde(default)]
    pub iodepth_complete: Vec<(String, f64)>,
    /// Distribution of total latency in fio's buckets.
    #[serde(default)]
    pub latency_levels: LatLevels,
    pub errors: Vec<IoErrorRecord>,
    /// fio's tally of the errors: counted under `continue_on_error`, and the one that ended
    /// the run.
    #[serde(default)]
    pub error_tally: ErrorTally,
    /// fio's latency target (`spec.latency_target`): the queue depth its search was at when
    /// the run ended (fio's `latency_depth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
    pub series: Vec<SeriesPoint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberStats>,
    /// Verification results when the run used `--verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySummary>,
    /// What the person reading the result should know about how it was measured (a
    /// simulated read of data never written, say); printed with the result and on stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The steady-state test the measured round closed, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    /// fio's `steadystate` check of the job, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_steadystate: Option<FioSteadyState>,
    /// Device counters of simulated drives, one per drive (empty for real targets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device: Vec<crate::device::DriveCounters>,
    /// What the host RAID driver's write-back cache of a simulated array did over the run
    /// (absorbed, flushed, read hits, waits for room, peak dirty bytes), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_cache: Option<crate::device::WriteCacheCounters>,
    /// The kernel's statistics of the block devices under a real target over the run (fio's
    /// `disk_util`): the device of a file's filesystem, a block device itself, with the
    /// members of an md/dm device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<DiskUtil>,
    /// Time-series logs per job, when asked for (not kept in the results store).
    #[serde(skip)]
    pub logs: Vec<JobLog>,
}

/// What the kernel counted for one block device during a run (`/sys/block/DEV/stat` deltas).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    /// Kernel name of the device (`nvme0n1`, `sda`, `md0`, `dm-0`).
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_sectors: u64,
    pub write_sectors: u64,
    /// Milliseconds the I/Os of each direction spent (the kernel's ticks).
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// Milliseconds with at least one I/O in flight.
    pub io_ticks_ms: u64,
    /// Weighted milliseconds of I/O in flight (`time_in_queue`).
    pub in_queue_ms: u64,
    /// Length of the sampling, ms.
    pub msec: u64,
    /// The devices under this one (md/dm members), each also listed on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slaves: Vec<String>,
}

impl DiskUtil {
    /// Percent of the sampling time the device was busy (fio's `util`, at most 100).
    pub fn util(&self) -> f64 {
        if self.msec == 0 {
            0.0
        } else {
            (100.0 * self.io_ticks_ms as f64 / self.msec as f64).min(100.0)
        }
    }
}

impl RunResult {
    /// The result of a run whose I/Os `rec` recorded over `runtime_ns` of measured time after
    /// `ramp_ns` of ramp: per-kind summaries, depth and latency distributions, errors, the
    /// statistics windows and the job logs. Everything the recorder does not hold (start time,
    /// CPU, how the run ended, members, devices, notes) is left at its default for the caller.
    /// The one place a result is assembled from a recorder (a run, a wave's job, the merge of
    /// many ranks).
    pub fn from_recorder(
        spec: &WorkloadSpec,
        target: TargetDesc,
        rec: &crate::Recorder,
        runtime_ns: u64,
        ramp_ns: u64,
    ) -> RunResult {
        let depth = rec.depth_levels();
        RunResult {
            spec: spec.clone(),
            target,
            read: rec.summary(OpKind::Read, runtime_ns),
            write: rec.summary(OpKind::Write, runtime_ns),
            trim: rec.summary(OpKind::Trim, runtime_ns),
            runtime_ns,
            ramp_ns,
            iodepth_level: depth.level,
            iodepth_submit: depth.submit,
            iodepth_complete: depth.complete,
            latency_levels: rec.latency_levels(),
            errors: rec.error_records.clone(),
            error_tally: rec.tally,
            series: rec.series(runtime_ns),
            logs: rec.job_logs(runtime_ns),
            ..RunResult::default()
        }
    }

    /// The summary for an op kind.
    pub fn op(&self, kind: OpKind) -> &OpSummary {
        match kind {
            OpKind::Read => &self.read,
            OpKind::Write => &self.write,
            OpKind::Trim => &self.trim,
        }
    }

    /// IOPS of all kinds together.
    pub fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops + self.trim.iops
    }

    /// Bytes per second of all kinds together.
    pub fn total_bw_bytes(&self) -> f64 {
        self.read.bw_bytes + self.write.bw_bytes + self.trim.bw_bytes
    }

    /// Mean total latency over all kinds, ns.
    pub fn mean_lat_ns(&self) -> f64 {
        let n: u64 = [&self.read, &self.write, &self.trim]
            .iter()
            .map(|o| o.lat.n)
            .sum();
        if n == 0 {
            return 0.0;
        }
        [&self.read, &self.write, &self.trim]
            .iter()
            .map(|o| o.lat.mean * o.lat.n as f64)
            .sum::<f64>()
            / n as f64
    }

    /// CPU time (user + system) per completed I/O, ns.
    pub fn cpu_ns_per_io(&self) -> f64 {
        let ios = self.read.ios + self.write.ios + self.trim.ios;
        if ios == 0 {
            return 0.0;
        }
        (self.cpu.user_ns + self.cpu.sys_ns) as f64 / ios as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results and stores carry the kinds by name: each serialises to its `as_str`, and every
    /// name reads back as the same kind.
    #[test]
    fn kinds_travel_by_their_names() {
        use TargetKind as T;
        for k in [
            T::Unknown,
            T::Null,
            T::File,
            T::Block,
            T::Raid0,
            T::Sim,
            T::SimRaid0,
        ] {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), k);
        }
        use EngineKind as E;
        for k in [E::Unknown, E::Null, E::Sync, E::IoUring, E::Sim] {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<E>(&json).unwrap(), k);
        }
        assert!(serde_json::from_str::<T>("\"tape\"").is_err());
    }
}
