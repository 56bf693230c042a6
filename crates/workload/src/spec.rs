//! [`WorkloadSpec`]: one description of "what I/O to issue", shared by measured and simulated runs.

use crate::field::{Field, Flags, Naming};
use crate::pattern::Pattern;
use crate::units::format_size;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// fio's `rw=` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    Randread,
    Randwrite,
    /// Sequential mixed reads and writes (fio `rw`/`readwrite`).
    Rw,
    /// Random mixed reads and writes.
    Randrw,
}

impl RwMode {
    pub const ALL: [RwMode; 6] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::Randread,
        RwMode::Randwrite,
        RwMode::Rw,
        RwMode::Randrw,
    ];

    /// fio's name for the mode.
    pub fn as_str(&self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Randread => "randread",
            RwMode::Randwrite => "randwrite",
            RwMode::Rw => "rw",
            RwMode::Randrw => "randrw",
        }
    }

    /// Percentage of random offsets implied by the mode.
    pub fn default_random_pct(&self) -> u8 {
        match self {
            RwMode::Randread | RwMode::Randwrite | RwMode::Randrw => 100,
            _ => 0,
        }
    }

    /// Read percentage implied by the mode (`None` for mixed modes: `--read-pct` decides, default 50).
    pub fn fixed_read_pct(&self) -> Option<u8> {
        match self {
            RwMode::Read | RwMode::Randread => Some(100),
            RwMode::Write | RwMode::Randwrite => Some(0),
            RwMode::Rw | RwMode::Randrw => None,
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RwMode {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::Randread,
            "randwrite" => RwMode::Randwrite,
            "rw" | "readwrite" => RwMode::Rw,
            "randrw" => RwMode::Randrw,
            _ => return Err(SpecError::UnknownRw(s.to_string())),
        })
    }
}

/// fio's trim modes on top of a write workload (`rw`'s write direction): its ops are trims
/// (`rw=trim`, `randtrim`), or each a trim followed by a write of the same range
/// (`rw=trimwrite`, `randtrimwrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrimMode {
    /// No trims (every other mode).
    #[default]
    None,
    /// Every op is a trim.
    Only,
    /// Every trim is followed by a write of the range it trimmed.
    ThenWrite,
}

impl TrimMode {
    pub fn is_none(&self) -> bool {
        *self == TrimMode::None
    }
}

/// When a run stops: whichever given condition is reached first (counted after the ramp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StopCondition {
    /// Measured time in nanoseconds (ramp excluded).
    pub time_ns: Option<u64>,
    /// Number of completed I/Os (all workers together).
    pub ios: Option<u64>,
    /// Number of bytes transferred (all workers together).
    pub bytes: Option<u64>,
}

impl StopCondition {
    /// True when no condition is set.
    pub fn is_unbounded(&self) -> bool {
        self.time_ns.is_none() && self.ios.is_none() && self.bytes.is_none()
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn one() -> u32 {
    1
}

fn no_rate(v: &[u64; 3]) -> bool {
    *v == [0; 3]
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// Default measured time when no stop condition is given.
pub const DEFAULT_TIME_NS: u64 = 10_000_000_000;

/// fio's `zonemode=strided` (`io_u.c`, `setup_strided_zone_mode`): a sequential job does
/// `size` bytes in a zone of `range` bytes (going back to the zone's start when it reaches its
/// end), then moves on `range + skip` bytes; past the region's end it starts again at its
/// start. A new pass starts at the first zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strided {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

/// fio's `verify_backlog=N` (`every`) and `verify_backlog_batch` (`batch`): a verifying writer
/// logs each write it issues; whenever N pieces wait to be verified and its last completion was
/// not a read, it reads back `batch` of them, the oldest first (in offset order where fio keeps
/// them in a tree: sequential jobs, or random ones without a random map), skipping none still in
/// flight; what is left is read in the verify phase after the job (fio's `check_get_verify`,
/// `get_next_verify`, `log_io_piece`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyBacklog {
    /// Pieces waiting that start a batch (fio's `verify_backlog`, at least 1).
    pub every: u64,
    /// Pieces a batch reads back (fio's `verify_backlog_batch`; `every` when not given).
    pub batch: u64,
}

/// The whole description of a workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub rw: RwMode,
    /// Percentage of operations that are reads (0..=100).
    pub read_pct: u8,
    /// Percentage of operations at a random offset; the others continue sequentially (fio `percentage_random`).
    pub random_pct: u8,
    /// Transfer size in bytes.
    pub bs: u64,
    /// Offset alignment in bytes (fio `blockalign`); random offsets are `offset + k·align`.
    pub align: u64,
    /// Start of the region, in bytes from the start of the target.
    pub offset: u64,
    /// Length of the region; `None` = from `offset` to the end of the target.
    pub span: Option<u64>,
    /// Outstanding I/Os per worker.
    pub qd: u32,
    /// Number of workers.
    pub jobs: u32,
    pub stop: StopCondition,
    /// Warm-up time excluded from the results, in nanoseconds.
    pub ramp_ns: u64,
    /// Nothing is issued for this long after the run starts (fio's `startdelay`), ns; the
    /// ramp and the measured time follow it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_delay_ns: u64,
    /// fio's `steadystate`: the job ends when its samples meet this criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::steady::SteadyCriterion>,
    pub pattern: Pattern,
    /// A repeated pattern (`repeat`, `bytes`) is written again into a buffer a read used, before
    /// the buffer's next write (fio's `buffer_pattern` in a job that refills its buffers, as it
    /// does by default when it reads); else such a write carries what the read left, as fio's
    /// buffers filled once do.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub refill_after_read: bool,
    /// fio's deduplicable buffers (`dedupe_percentage` …): a share of the writes repeat
    /// others (see [`crate::dedupe`]); none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<crate::dedupe::Dedupe>,
    pub seed: u64,
    /// Writes carry per-sector headers with a CRC32C; reads check them (see [`crate::verify`]).
    /// Left out of the serialised form when off, so specs (and sweep point keys) written before
    /// this option existed stay the same.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify: bool,
    /// Reads check that every block holds the write pattern repeated from its first byte, with
    /// no headers (fio's `verify=pattern` with `verify_pattern`); the pattern must be fixed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_by_pattern: bool,
    /// fio's `verify_fatal`: the first block that fails verification ends the job, even where
    /// `continue_on_error` goes past the error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_fatal: bool,
    /// fio's `verify_backlog`: a verifying writer reads back what it wrote while it writes,
    /// not only after (see [`VerifyBacklog`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<VerifyBacklog>,
    /// A sector read without any verification header fails verification (fio's "bad magic
    /// header"), instead of counting as not written by a verifying run.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_headers_required: bool,
    /// fio's `fill_device`: a write that finds the file system full (ENOSPC, EDQUOT) ends the
    /// job without an error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fill_device: bool,
    /// fio's `max_latency` per direction (read, write, trim), ns, 0 for none: an I/O whose
    /// total latency is above its direction's fails with ETIMEDOUT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<[u64; 3]>,
    /// fio's `cpus_allowed`/`cpumask`: the CPUs the job's threads may run on (real targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_allowed: Option<Vec<u32>>,
    /// fio's `cpus_allowed_policy=split`: each clone runs on one of `cpus_allowed`, the
    /// (thread number − 1)-th modulo their count; else every clone may use all of them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cpus_split: bool,
    /// Random offsets visit every aligned position of the region once before any repeats (fio's
    /// default random map); `false` draws them uniformly with replacement (fio's `norandommap`,
    /// ssdlab's default). The fields below are also left out of the serialised form at their
    /// defaults.
    #[serde(default, skip_serializing_if = "is_false")]
    pub random_map: bool,
    /// A new random offset only every N-th op, the ops between continue sequentially (fio's
    /// `rw=randread:N`); 1 = every op.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub random_every: u32,
    /// Bytes skipped after each sequential op: sequential I/O with holes (fio's `rw=write:4k`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq_skip: u64,
    /// fio's `zonemode=strided` (sequential jobs of one direction): zones the job moves
    /// through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strided: Option<Strided>,
    /// Bytes gone back after each sequential op: backwards sequential I/O (fio's
    /// `rw=read:-8k`; `seq_skip` and `seq_back` are fio's modifier's two signs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq_back: u64,
    /// Replay a recorded trace instead of generating ops (fio's `read_iolog`). `bs`, `align`,
    /// `span` and `read_pct` then describe the trace (largest op, common alignment, end of the
    /// highest op, share of reads) so the target checks see what the replay will do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay::ReplaySpec>,
    /// fio's rate caps per worker and direction (read, write, trim), in bytes per second: a
    /// direction's next op is due once the bytes it issued before it, at this rate, have taken
    /// their time since the worker's first op (fio's `usec_for_io`), catching up when behind;
    /// `rate_iops` is its I/Os per second times the direction's smallest block size, as fio
    /// converts it. 0 = the direction is not capped. A mixed job switches to the other
    /// direction while its drawn one is ahead of its schedule (fio's `rate_ddir`).
    #[serde(default, skip_serializing_if = "no_rate")]
    pub rate_bps: [u64; 3],
    /// fio's `rate_ignore_thinktime`: a think time moves the rate's schedule instead of being
    /// caught up after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate_ignore_think: bool,
    /// fio's `rate_process=poisson`: per direction, the I/Os per second of the rate (fio's
    /// rate over the direction's smallest block size); each I/O of a direction is then due an
    /// exponentially distributed time after the one before it, not evenly spaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_poisson: Option<[u64; 3]>,
    /// fio's `io_submit_mode=offload`: an I/O ahead of its rate waits for its time only, not
    /// for the I/Os in flight first (fio's inline mode quiesces there).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate_offload: bool,
    /// fio's `thinktime`: after every `think_every` ops of a worker its queue is drained and
    /// it waits this long before the next; 0 = no think time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_ns: u64,
    /// fio's `thinktime_blocks` (1 when 0).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub think_every: u32,
    /// fio's `thinktime_iotime`: the think time also comes when this long has passed since the
    /// last one began (its stall included), whichever of this and `think_every` is first; 0 =
    /// by count only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_iotime_ns: u64,
    /// The job ends after this many passes over its region (fio's jobs without `io_size`: a
    /// pass ends when its offsets run out — a sequential job past the region's end, the random
    /// map used up — and fio's `keep_running` stops once the files are done and its `loops`
    /// are run); `None`: only the stop conditions end it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u64>,
    /// After its `passes`, each worker starts another pass while it has done fewer bytes than
    /// this by at least its largest block (fio's `keep_running` for a job with `io_size`: its
    /// `loops` passes, then more until `io_size` is done; the stop conditions still cap it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_passes_below: Option<u64>,
    /// Each pass after the first starts the job's random streams from the seed again, so it
    /// draws what the first drew (fio's `randrepeat`: `clear_io_state` reseeds at the start of
    /// each loop — a pass that ends where the offsets run out, not a time-based wrap). The
    /// generator is then built afresh at each pass's start; only the counts of passes and
    /// bytes carry over.
    #[serde(default, skip_serializing_if = "is_false")]
    pub repeat_passes: bool,
    /// fio's `rate_min`/`rate_iops_min`: the job fails when a direction falls below its rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<MinRate>,
    /// fio's `latency_target`: the queue depth is searched for, up to `qd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTarget>,
    /// fio's batched completions (`iodepth_batch_complete_min`, `iodepth_low`); `None`: each
    /// completion is handled as it comes and the queue refilled at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<CompletionBatch>,
    /// Block sizes that vary (fio's `bssplit`, `bsrange`, or a size per direction); `bs` is
    /// then the largest of them (buffers, checks), `align` at most the smallest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<crate::dist::BlockSizes>,
    /// Where random offsets land (fio's `random_distribution`); uniform by default.
    #[serde(default, skip_serializing_if = "crate::dist::Distribution::is_uniform")]
    pub distribution: crate::dist::Distribution,
    /// Several files (fio's `nrfiles`, `filename=a:b`): each a region of the target's address
    /// space, with fio's switching between them; `offset`/`span` then cover them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<crate::files::Files>,
    /// fio's trim modes: the write direction's ops trimmed (see [`TrimMode`]); `rw` is then a
    /// write mode and `read_pct` 0, so that every check of a write applies to trims too.
    #[serde(default, skip_serializing_if = "TrimMode::is_none")]
    pub trim: TrimMode,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            rw: RwMode::Randread,
            read_pct: 100,
            random_pct: 100,
            bs: 4096,
            align: 4096,
            offset: 0,
            span: None,
            qd: 1,
            jobs: 1,
            stop: StopCondition {
                time_ns: Some(DEFAULT_TIME_NS),
                ..Default::default()
            },
            ramp_ns: 0,
            start_delay_ns: 0,
            steady: None,
            pattern: Pattern::Random,
            refill_after_read: true,
            dedupe: None,
            seed: 0x5eed_1ab5,
            verify: false,
            verify_by_pattern: false,
            verify_fatal: false,
            verify_backlog: None,
            verify_headers_required: false,
            fill_device: false,
            max_latency_ns: None,
            cpus_allowed: None,
            cpus_split: false,
            random_map: false,
            random_every: 1,
            seq_skip: 0,
            strided: None,
            seq_back: 0,
            replay: None,
            rate_bps: [0; 3],
            rate_ignore_think: false,
            rate_poisson: None,
            rate_offload: false,
            think_ns: 0,
            think_every: 0,
            think_iotime_ns: 0,
            min_rate: None,
            latency_target: None,
            completions: None,
            passes: None,
            more_passes_below: None,
            repeat_passes: false,
            block_sizes: None,
            distribution: Default::default(),
            trim: TrimMode::None,
            files: None,
        }
    }
}

/// fio's `latency_target` (`lat_target_*` of its `io_u.c`): the job starts at queue depth 1
/// and, every `window_ns`, doubles the depth (bisects once it has failed) while at least
/// `percentile` % of the I/Os completed in the window took at most `target_ns` (total latency),
/// and steps back down when fewer did; with a percentile of 100 a single slower I/O steps down
/// at once (at depth 1 it ends the job with fio's ETIMEDOUT). When a window holds and the depth
/// does not change, the statistics start again and one more window runs at that depth, after
/// which the job ends — unless `keep_running` (fio's `latency_run`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// The latency no more than `100 - percentile` % of the I/Os may exceed, ns.
    pub target_ns: u64,
    /// How long each depth is tried, ns (fio's `latency_window`; 0 checks after every reap).
    pub window_ns: u64,
    /// The share of I/Os that must meet the target, percent (fio's default 100).
    pub percentile: f64,
    /// fio's `latency_run`: keep adjusting the depth until the job ends otherwise.
    pub keep_running: bool,
    /// The deepest the search goes: the job's `iodepth` as written (fio searches up to it
    /// even where its engine keeps one I/O in flight, as psync and the null engine do; the
    /// depth in flight is then at most the job's).
    pub max_depth: u32,
}

/// How a worker whose queue is full takes its completions, as fio's `wait_for_completions`
/// does: it waits until `min` of its I/Os have completed (at most those in flight) and handles
/// them together, at the time it has them (fio's `iodepth_batch_complete_min`), and goes on
/// doing so until no more than `low` are in flight (fio's `iodepth_low`) before it issues
/// again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionBatch {
    /// Completions waited for at least, once the queue is full (1: each one as it comes).
    pub min: u32,
    /// The depth a full queue drains to before it is refilled (the queue depth: none).
    pub low: u32,
}

/// fio's minimum rates (`rate_min`, `rate_iops_min`, `rate_cycle`), checked as fio's
/// `check_min_rate` checks them: from 2 s after the measured start, the first check of a
/// direction that has done I/O notes its counters; each check at least `cycle_ns` after the
/// last noted one compares the rate since then with the minimum (bytes per second where one is
/// given for the direction, else I/Os per second) and notes the counters again when it holds.
/// A rate below the minimum ends the job with an error (fio's EIO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinRate {
    /// Per direction (read, write, trim): the least bytes per second; 0 = not checked by bytes.
    pub bytes_per_s: [u64; 3],
    /// Per direction: the least I/Os per second, used where `bytes_per_s` is 0; 0 = none.
    pub ios_per_s: [u64; 3],
    /// fio's `rate_cycle`: the shortest span a rate is measured over, ns (fio's default 1 s).
    pub cycle_ns: u64,
}

impl MinRate {
    /// fio's settle period: no check before this much measured time.
    pub const SETTLE_NS: u64 = 2_000_000_000;

    /// True when direction `d` (an [`crate::OpKind`] index) has a minimum.
    pub fn checks(&self, d: usize) -> bool {
        self.bytes_per_s[d] > 0 || self.ios_per_s[d] > 0
    }

    /// The shortfall of direction `d` over `span_ns` in which `ios` I/Os moved `bytes`, as fio
    /// words it (`rate_min=…B/s not met, got …B/s`), or `None` when the rate holds. Rates are
    /// whole units per second computed from whole milliseconds, as fio computes them.
    pub fn shortfall(&self, d: usize, ios: u64, bytes: u64, span_ns: u64) -> Option<String> {
        let ms = (span_ns / 1_000_000).max(1) as u128;
        if self.bytes_per_s[d] > 0 {
            let got = (bytes as u128 * 1000 / ms) as u64;
            (got < self.bytes_per_s[d])
                .then(|| format!("rate_min={}B/s not met, got {got}B/s", self.bytes_per_s[d]))
        } else {
            let got = (ios as u128 * 1000 / ms) as u64;
            (got < self.ios_per_s[d]).then(|| {
                format!(
                    "rate_iops_min={} not met, got {got} IOPS",
                    self.ios_per_s[d]
                )
            })
        }
    }
}

/// A workload that cannot run, with the setting at fault ([`Field`]): `Display` names it as
/// ssdlab's command line does (`--bs 3`), [`SpecError::render`] as another front end does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecError {
    UnknownRw(String),
    Zero(Field),
    /// The setting, its value, the most it may be.
    TooLarge(Field, u64, u64),
    /// Blocks of the random map of varying block sizes, the most it holds.
    RandomMapBlocks(u64, u64),
    ReadPct(u32),
    RandomPct(u32),
    ReadPctFixed(RwMode),
    AlignLargerThanBs {
        bs: u64,
        align: u64,
    },
    SpanTooSmall {
        span: u64,
        bs: u64,
    },
    BeyondTarget {
        offset: u64,
        span: u64,
        end: u64,
        what: String,
        size: String,
    },
    VerifyUnaligned(Field, u64),
    OffsetBeyond {
        offset: u64,
        what: String,
        size: String,
    },
    ZonesBeyond {
        dist: String,
        end: u64,
        span: u64,
    },
}

impl SpecError {
    /// The message, naming the settings the way `n` does.
    pub fn render(&self, n: &dyn Naming) -> String {
        match self {
            SpecError::UnknownRw(s) => format!(
                "unknown {} '{s}' (use read, write, randread, randwrite, rw or randrw)",
                n.name(Field::Rw)
            ),
            SpecError::Zero(f) => format!("{} must be greater than 0", n.name(*f)),
            SpecError::TooLarge(f, v, max) => {
                format!("{} is more than {max}, the most it may be", n.setting(*f, *v))
            }
            SpecError::RandomMapBlocks(blocks, max) => format!(
                "the random map of varying block sizes would hold {blocks} blocks, more than {max} (norandommap needs none)"
            ),
            SpecError::ReadPct(v) => format!(
                "{} is not a percentage (0..100)",
                n.setting(Field::ReadPct, *v as u64)
            ),
            SpecError::RandomPct(v) => format!(
                "{} is not a percentage (0..100)",
                n.setting(Field::RandomPct, *v as u64)
            ),
            SpecError::ReadPctFixed(rw) => format!(
                "{} only applies to mixed workloads ({} rw or randrw), not to {rw}",
                n.name(Field::ReadPct),
                n.name(Field::Rw)
            ),
            SpecError::AlignLargerThanBs { bs, align } => format!(
                "{} is smaller than {}; use an alignment up to the block size",
                n.setting(Field::Bs, *bs),
                n.setting(Field::Align, *align)
            ),
            SpecError::SpanTooSmall { span, bs } => format!(
                "{} is smaller than one block ({})",
                n.setting(Field::Span, *span),
                n.setting(Field::Bs, *bs)
            ),
            SpecError::BeyondTarget {
                offset,
                span,
                end,
                what,
                size,
            } => format!(
                "region {} + {} ends at {end}, beyond the end of {what} ({size})",
                n.setting(Field::Offset, *offset),
                n.setting(Field::Span, *span)
            ),
            SpecError::VerifyUnaligned(f, v) => format!(
                "{} works in 512-byte sectors: {} is not a multiple of 512",
                n.name(Field::Verify),
                n.setting(*f, *v)
            ),
            SpecError::OffsetBeyond { offset, what, size } => format!(
                "{} is at or beyond the end of {what} ({size})",
                n.setting(Field::Offset, *offset)
            ),
            SpecError::ZonesBeyond { dist, end, span } => format!(
                "random_distribution={dist}: its zones end at {end}, beyond the region of {span} bytes (fio stops such a job: \"zoned_abs sizes exceed file size\")"
            ),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&Flags))
    }
}

impl std::error::Error for SpecError {}

impl WorkloadSpec {
    /// Checks what can be checked without knowing the target.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.bs == 0 {
            return Err(SpecError::Zero(Field::Bs));
        }
        if self.align == 0 {
            return Err(SpecError::Zero(Field::Align));
        }
        if self.qd == 0 {
            return Err(SpecError::Zero(Field::Qd));
        }
        if self.jobs == 0 {
            return Err(SpecError::Zero(Field::Jobs));
        }
        const MAX_BS: u64 = 1 << 30;
        if self.bs > MAX_BS {
            return Err(SpecError::TooLarge(Field::Bs, self.bs, MAX_BS));
        }
        if self.qd > 65_536 {
            return Err(SpecError::TooLarge(Field::Qd, self.qd as u64, 65_536));
        }
        if self.jobs > 4096 {
            return Err(SpecError::TooLarge(Field::Jobs, self.jobs as u64, 4096));
        }
        if self.read_pct > 100 {
            return Err(SpecError::ReadPct(self.read_pct as u32));
        }
        if self.random_pct > 100 {
            return Err(SpecError::RandomPct(self.random_pct as u32));
        }
        if let Some(b) = &self.block_sizes {
            let (lo, hi) = b.bounds();
            if lo == 0 {
                return Err(SpecError::Zero(Field::Bs));
            }
            if hi != self.bs {
                return Err(SpecError::TooLarge(Field::Bs, hi, self.bs));
            }
            // The random map of varying sizes keeps a bit per block of the smallest size.
            if let Some(span) = self.span.filter(|_| self.random_map) {
                let blocks = span / lo;
                if blocks > crate::gen::MAX_BLOCK_MAP {
                    return Err(SpecError::RandomMapBlocks(
                        blocks,
                        crate::gen::MAX_BLOCK_MAP,
                    ));
                }
            }
        }
        if self.align > self.bs {
            return Err(SpecError::AlignLargerThanBs {
                bs: self.bs,
                align: self.align,
            });
        }
        if let Some(span) = self.span {
            if span == 0 {
                return Err(SpecError::Zero(Field::Span));
            }
            if span < self.bs {
                return Err(SpecError::SpanTooSmall { span, bs: self.bs });
            }
        }
        if let Some(f) = &self.files {
            // Each file's region holds at least one block, as the job's region must.
            if let Some(r) = f.regions.iter().find(|r| r.span < self.min_bs()) {
                return Err(SpecError::SpanTooSmall {
                    span: r.span,
                    bs: self.min_bs(),
                });
            }
        }
        if self.verify {
            for (name, v) in [
                (Field::Bs, self.bs),
                (Field::Align, self.align),
                (Field::Offset, self.offset),
            ] {
                if v % 512 != 0 {
                    return Err(SpecError::VerifyUnaligned(name, v));
                }
            }
        }
        if self.random_every == 0 {
            return Err(SpecError::Zero(Field::RandomEvery));
        }
        if self.stop.time_ns == Some(0) {
            return Err(SpecError::Zero(Field::Time));
        }
        if self.stop.ios == Some(0) {
            return Err(SpecError::Zero(Field::Ios));
        }
        if self.stop.bytes == Some(0) {
            return Err(SpecError::Zero(Field::Bytes));
        }
        Ok(())
    }

    /// Fixes the region against a target of `size` bytes (`what` names it in errors) and returns
    /// `(offset, span)`. An absent span means "to the end of the target".
    pub fn region_for(&self, size: u64, what: &str) -> Result<(u64, u64), SpecError> {
        let span = match self.span {
            Some(s) => s,
            None => {
                if self.offset >= size {
                    return Err(SpecError::OffsetBeyond {
                        offset: self.offset,
                        what: what.to_string(),
                        size: format_size(size),
                    });
                }
                size - self.offset
            }
        };
        let end = self.offset.saturating_add(span);
        if end > size {
            return Err(SpecError::BeyondTarget {
                offset: self.offset,
                span,
                end,
                what: what.to_string(),
                size: format_size(size),
            });
        }
        let min_bs = self.min_bs();
        if span < min_bs {
            return Err(SpecError::SpanTooSmall { span, bs: min_bs });
        }
        if let crate::dist::Distribution::ZonedAbs { read, write } = &self.distribution {
            let end = |z: &[crate::dist::Zone]| z.iter().map(|z| z.size).sum::<u64>();
            let end = end(read).max(end(write));
            // fio's zone ends, in blockalign units, may not pass its last block.
            let positions = if min_bs > self.align {
                (span - min_bs) / self.align + 1
            } else {
                span / self.align
            };
            if end / self.align > positions {
                return Err(SpecError::ZonesBeyond {
                    dist: self.distribution.describe(),
                    end,
                    span,
                });
            }
        }
        Ok((self.offset, span))
    }

    /// The smallest block size (`bs` unless the sizes vary).
    pub fn min_bs(&self) -> u64 {
        self.block_sizes
            .as_ref()
            .map_or(self.bs, |b| b.bounds().0.max(1))
            .min(self.bs)
    }

    /// fio's name of the workload's mode (`rw` unless it trims: `trim`, `randtrimwrite`, …).
    pub fn mode_name(&self) -> &'static str {
        let random = matches!(
            self.rw,
            RwMode::Randwrite | RwMode::Randread | RwMode::Randrw
        );
        match (self.trim, random) {
            (TrimMode::None, _) => self.rw.as_str(),
            (TrimMode::Only, false) => "trim",
            (TrimMode::Only, true) => "randtrim",
            (TrimMode::ThenWrite, false) => "trimwrite",
            (TrimMode::ThenWrite, true) => "randtrimwrite",
        }
    }

    /// True when the workload trims (fio's trim modes).
    pub fn trims(&self) -> bool {
        !self.trim.is_none()
    }

    /// True when the workload writes at all (or trims: a trim destroys data as a write does).
    pub fn writes(&self) -> bool {
        self.read_pct < 100
    }

    /// True when the workload reads at all.
    pub fn reads(&self) -> bool {
        self.read_pct > 0
    }

    /// Total outstanding I/Os across workers.
    pub fn total_qd(&self) -> u64 {
        self.qd as u64 * self.jobs as u64
    }

    /// Every block size the workload can issue, for alignment checks (with a range, its
    /// smallest and largest: every other size is a multiple of the smallest).
    pub fn block_size_values(&self) -> Vec<u64> {
        use crate::dist::BsChoice;
        let mut v = vec![self.bs];
        if let Some(b) = &self.block_sizes {
            for c in [&b.read, &b.write] {
                match c {
                    BsChoice::Range(lo, hi) => v.extend([*lo, *hi]),
                    c => v.extend(c.sizes()),
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// A one-line description like `randwrite 4 KiB QD3 align 512 B`.
    pub fn summary(&self) -> String {
        let size = match &self.block_sizes {
            Some(b) => {
                let (lo, hi) = b.bounds();
                format!("{}-{}", format_size(lo), format_size(hi))
            }
            None => format_size(self.bs),
        };
        let mut s = format!("{} {} QD{}", self.mode_name(), size, self.qd);
        if !self.distribution.is_uniform() {
            s.push_str(&format!(" {}", self.distribution.describe()));
        }
        if self.jobs > 1 {
            s.push_str(&format!("x{}", self.jobs));
        }
        if self.align != self.min_bs() {
            s.push_str(&format!(" align {}", format_size(self.align)));
        }
        if matches!(self.rw, RwMode::Rw | RwMode::Randrw) {
            s.push_str(&format!(" {}% read", self.read_pct));
        }
        if self.random_pct != self.rw.default_random_pct() {
            s.push_str(&format!(" {}% random", self.random_pct));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's `__check_min_rate` arithmetic: whole units per second over whole milliseconds,
    /// bytes where a byte minimum is given for the direction, else I/Os.
    #[test]
    fn min_rate_shortfalls_are_worded_as_fio_words_them() {
        let m = MinRate {
            bytes_per_s: [0, 1 << 20, 0],
            ios_per_s: [100, 5, 0],
            cycle_ns: 1_000_000_000,
        };
        assert!(m.checks(0) && m.checks(1) && !m.checks(2));
        let s = 1_000_000_000;
        assert_eq!(
            m.shortfall(0, 147, 0, 3 * s).as_deref(),
            Some("rate_iops_min=100 not met, got 49 IOPS")
        );
        assert_eq!(m.shortfall(0, 300, 0, 3 * s), None);
        // the byte minimum wins over the I/O one for writes
        assert_eq!(
            m.shortfall(1, 1_000_000, 1 << 19, s).as_deref(),
            Some("rate_min=1048576B/s not met, got 524288B/s")
        );
        // a span under a millisecond counts as one: 1 I/O in it is 1000 a second
        assert_eq!(m.shortfall(0, 1, 0, 10), None);
        assert!(m.shortfall(0, 0, 0, 10).is_some());
    }

    #[test]
    fn rw_parse() {
        for m in RwMode::ALL {
            assert_eq!(m.as_str().parse::<RwMode>().unwrap(), m);
        }
        assert_eq!("readwrite".parse::<RwMode>().unwrap(), RwMode::Rw);
        let e = "randomread".parse::<RwMode>().unwrap_err().to_string();
        assert!(e.contains("randomread"), "{e}");
    }

    #[test]
    fn validation() {
        let ok = WorkloadSpec::default();
        ok.validate().unwrap();
        let mut s = ok.clone();
        s.qd = 0;
        assert_eq!(s.validate(), Err(SpecError::Zero(Field::Qd)));
        let mut s = ok.clone();
        s.bs = 0;
        assert_eq!(s.validate(), Err(SpecError::Zero(Field::Bs)));
        let mut s = ok.clone();
        s.align = 8192;
        assert!(matches!(
            s.validate(),
            Err(SpecError::AlignLargerThanBs { .. })
        ));
        let mut s = ok.clone();
        s.span = Some(512);
        assert!(matches!(s.validate(), Err(SpecError::SpanTooSmall { .. })));
    }

    #[test]
    fn region() {
        let mut s = WorkloadSpec::default();
        assert_eq!(s.region_for(1 << 20, "t").unwrap(), (0, 1 << 20));
        s.offset = 4096;
        assert_eq!(
            s.region_for(1 << 20, "t").unwrap(),
            (4096, (1 << 20) - 4096)
        );
        s.span = Some(1 << 20);
        let e = s.region_for(1 << 20, "file x").unwrap_err().to_string();
        assert!(e.contains("beyond the end of file x"), "{e}");
    }

    #[test]
    fn serde_roundtrip() {
        let s = WorkloadSpec {
            pattern: Pattern::Compress(40),
            span: Some(8 << 30),
            ..Default::default()
        };
        let j = serde_json::to_string(&s).unwrap();
        let back: WorkloadSpec = serde_json::from_str(&j).unwrap();
        assert_eq!(s, back);
    }
}
