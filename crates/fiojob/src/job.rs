//! Jobs from sections, with fio's rules:
//!
//! - `[global]` sections change the defaults of the jobs **after** them; each job starts from
//!   the defaults as they are at its section and applies its own options in order (a later
//!   option wins). Each job file after the first starts again from fio's defaults, and its
//!   first job waits for everything before it (fio separates job files by a stonewall).
//! - `numjobs=N` makes N clones of a job.
//! - `stonewall` makes a job (and every job after it) wait until all jobs before it finished;
//!   `wait_for=NAME` makes it wait for the job NAME. ssdlab runs jobs in *waves*: every job of a
//!   wave starts together, a wave starts when the previous one has finished. This is exact for
//!   `stonewall`; a `wait_for` job also waits for the jobs that started with its waitee (a note
//!   says so when that differs from fio).
//! - `stonewall` and `new_group` start a new reporting group; `group_reporting` reports a
//!   group's jobs and clones as one.
//!
//! Options are *mapped* (they change the ssdlab run as they change fio's), *accepted without
//! effect* (see [`crate::options::NO_EFFECT`]), or *unsupported* (the job is refused, naming
//! each with its line, unless the caller ignores them). Bad values and unknown keys are errors.

use crate::ini::{Loc, Opt, Section};
use crate::options;
use crate::value::{self, Size};
use ssdlab_io::numa::MemPolicy;
use ssdlab_io::{FileOp, StatCall};
use ssdlab_workload::replay::{ReplaySpec, Skip, TraceShape};
use ssdlab_workload::{
    BlockSizes, BsChoice, Chunked, Dedupe, DedupeMode, Distribution, FileService, Pattern, RwMode,
    StopCondition, TrimMode, WorkloadSpec, Zone,
};

/// fio's default random seed (`randseed`).
pub const FIO_RANDSEED: u64 = 0x89;

/// An I/O engine of a fio job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// fio's `io_uring`: ssdlab's io_uring engine.
    IoUring,
    /// Another asynchronous engine (`libaio`, `posixaio`), run on ssdlab's io_uring engine:
    /// the same queue depth, another kernel interface.
    Async(&'static str),
    /// A synchronous engine (`psync`, fio's default on Linux; `sync`, `pvsync`, `pvsync2`,
    /// `vsync`): one I/O at a time per job, so `iodepth` has no effect, as in fio.
    Sync(&'static str),
    /// fio's `null`: ssdlab's null target.
    Null,
}

impl Engine {
    /// The engine of `ioengine=NAME`, or why ssdlab does not run it.
    fn parse(s: &str) -> Result<Engine, Problem> {
        let name = s.trim();
        Ok(match name {
            "io_uring" => Engine::IoUring,
            "libaio" => Engine::Async("libaio"),
            // fio's aliases of libaio (`ioengines.c`).
            n if n.starts_with("aio") || n.starts_with("linuxaio") => Engine::Async("libaio"),
            "posixaio" => Engine::Async("posixaio"),
            "psync" => Engine::Sync("psync"),
            "sync" => Engine::Sync("sync"),
            "pvsync" => Engine::Sync("pvsync"),
            "pvsync2" => Engine::Sync("pvsync2"),
            "vsync" => Engine::Sync("vsync"),
            // fio's file-operation engines that take offsets and lengths: synchronous, each
            // I/O one system call on the job's file (`engines/falloc.c`, `ftruncate.c`)
            "falloc" => Engine::Sync("falloc"),
            "ftruncate" => Engine::Sync("ftruncate"),
            // fio's engines that time an operation on each file's name, one per file
            // (`engines/fileoperations.c`)
            "filestat" => Engine::Sync("filestat"),
            "filedelete" => Engine::Sync("filedelete"),
            "filecreate" => Engine::Sync("filecreate"),
            "null" => Engine::Null,
            other => return Err(unsupported(engine_refusal(other))),
        })
    }

    /// What the engine's I/Os do to the file: fio's `falloc` and `ftruncate` move no data;
    /// `filestat` (a `stat`: see [`Settings::file_op`] for its `stat_type`), `filedelete` and
    /// `filecreate` work on the file's name.
    pub fn file_op(&self) -> FileOp {
        match self {
            Engine::Sync("falloc") => FileOp::Fallocate,
            Engine::Sync("ftruncate") => FileOp::Ftruncate,
            Engine::Sync("filestat") => FileOp::Stat(StatCall::Stat),
            Engine::Sync("filedelete") => FileOp::Unlink,
            Engine::Sync("filecreate") => FileOp::Create,
            _ => FileOp::Data,
        }
    }

    /// fio's name of the engine.
    pub fn name(&self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::Async(n) | Engine::Sync(n) => n,
            Engine::Null => "null",
        }
    }
}

/// Why ssdlab does not run fio's engine `name`.
fn engine_refusal(name: &str) -> String {
    let what = match name {
        "io_uring_cmd" => "NVMe passthrough commands through io_uring on a character device (ssdlab issues reads and writes to files and block devices)",
        "sg" | "bsg" => "SCSI generic commands",
        "xnvme" | "libblkio" | "spdk" => "a user-space NVMe or block driver",
        "mmap" => "I/O through a memory mapping of the file",
        "splice" | "netsplice" => "I/O through splice(2)",
        "net" | "rdma" | "librpma_apm_client" | "librpma_apm_server" | "librpma_gpspm_client"
        | "librpma_gpspm_server" | "nbd" | "http" | "nfs" | "libiscsi" | "rbd" | "rados"
        | "gfapi" | "gfapi_async" | "libhdfs" | "dfs" => "network or cluster storage",
        "cpuio" | "exec" => "no storage I/O (CPU load or a program)",
        "e4defrag" | "dircreate" | "dirdelete" | "dirstat" => "file-system operations other than reads and writes, file creation, stat and deletion",
        "dev-dax" | "libpmem" | "pmemblk" | "page_fault" => "persistent or mapped memory",
        "libcufile" | "libhipfile" => "GPU-direct storage",
        "windowsaio" | "solarisaio" => "another operating system's asynchronous I/O",
        n if n.starts_with("external") || n.contains('/') => "an external engine fio loads with dlopen",
        n if options::ENGINES.contains(&n) => "an engine ssdlab does not have",
        _ => "not an engine fio has built in (fio would try to load it as an external engine)",
    };
    format!(
        "ioengine={name}: {what}; ssdlab runs io_uring, libaio and posixaio on its io_uring engine, psync/sync/pvsync/pvsync2/vsync on its sync engine, and null"
    )
}

/// The `rw=` modes ssdlab runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
    RandRead,
    RandWrite,
    Rw,
    RandRw,
    /// Sequential trims (fio's `rw=trim`).
    Trim,
    /// Random trims.
    RandTrim,
    /// Each block trimmed, then written (fio's `rw=trimwrite`).
    TrimWrite,
    /// Random blocks, each trimmed, then written.
    RandTrimWrite,
}

impl Mode {
    /// The read/write mode the job's ops are made with (a trim mode's are the write
    /// direction's, trimmed: see [`Mode::trim`]).
    pub fn rw(&self) -> RwMode {
        match self {
            Mode::Read => RwMode::Read,
            Mode::Write | Mode::Trim | Mode::TrimWrite => RwMode::Write,
            Mode::RandRead => RwMode::Randread,
            Mode::RandWrite | Mode::RandTrim | Mode::RandTrimWrite => RwMode::Randwrite,
            Mode::Rw => RwMode::Rw,
            Mode::RandRw => RwMode::Randrw,
        }
    }
    /// How the mode trims.
    pub fn trim(&self) -> TrimMode {
        match self {
            Mode::Trim | Mode::RandTrim => TrimMode::Only,
            Mode::TrimWrite | Mode::RandTrimWrite => TrimMode::ThenWrite,
            _ => TrimMode::None,
        }
    }
    /// fio's name of the mode.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::Write => "write",
            Mode::RandRead => "randread",
            Mode::RandWrite => "randwrite",
            Mode::Rw => "rw",
            Mode::RandRw => "randrw",
            Mode::Trim => "trim",
            Mode::RandTrim => "randtrim",
            Mode::TrimWrite => "trimwrite",
            Mode::RandTrimWrite => "randtrimwrite",
        }
    }
    pub fn random(&self) -> bool {
        matches!(
            self,
            Mode::RandRead | Mode::RandWrite | Mode::RandRw | Mode::RandTrim | Mode::RandTrimWrite
        )
    }
    pub fn reads(&self) -> bool {
        matches!(self, Mode::Read | Mode::RandRead | Mode::Rw | Mode::RandRw)
    }
    /// True when the mode writes data (trimwrite does; trim does not).
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Mode::Write
                | Mode::RandWrite
                | Mode::Rw
                | Mode::RandRw
                | Mode::TrimWrite
                | Mode::RandTrimWrite
        )
    }
    /// True when the mode trims.
    pub fn trims(&self) -> bool {
        !self.trim().is_none()
    }
}

/// fio's `fallocate=`: how a file a job only writes is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
    None,
    /// fio's default on Linux: `fallocate(2)` (unwritten extents).
    Native,
    Posix,
    Keep,
    Truncate,
}

/// fio's `fadvise_hint=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fadvise {
    None,
    /// fio's default (`1`): random for random modes, sequential otherwise.
    ByMode,
    Random,
    Sequential,
    NoReuse,
}

/// fio's `unified_rw_reporting=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unified {
    /// Reads, writes and trims apart (fio's default).
    None,
    /// One `mixed` entry instead.
    Mixed,
    /// Both: the directions, then `mixed`.
    Both,
}

/// A value that is wrong (an error) or that ssdlab cannot honour (unsupported).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Invalid(String),
    Unsupported(String),
}

impl From<String> for Problem {
    fn from(s: String) -> Self {
        Problem::Invalid(s)
    }
}

/// A job's options, typed, with fio's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub kb_base: u64,
    /// A job's own `name=` (a global one does not rename jobs, as in fio).
    pub name: Option<String>,
    pub filename: Option<String>,
    pub directory: Option<String>,
    /// fio's `filename_format`: how the files of a job without `filename` are named (see
    /// [`Settings::file_name`]).
    pub filename_format: Option<String>,
    pub size: Option<Size>,
    /// fio's `filesize`: each file's size, or a range drawn per file (low, high).
    pub filesize: Option<u64>,
    pub filesize_max: Option<u64>,
    /// fio's `nrfiles`: files per job (clone).
    pub nrfiles: u32,
    /// fio's `openfiles` as given (ssdlab keeps every file open, fio's default).
    pub openfiles: Option<u64>,
    /// The `filestat` engine's `stat_type`.
    pub stat_call: StatCall,
    /// fio's `file_service_type`.
    pub file_service: FileService,
    pub offset: Option<Size>,
    pub io_size: Option<u64>,
    /// `io_size=N%`: the bytes of a pass are N % of the job's region (fio lowers `size` to
    /// them in `setup_files`).
    pub io_size_pct: Option<f64>,
    pub number_ios: Option<u64>,
    pub loops: u64,
    pub mode: Mode,
    /// `rw=MODE:N`: for random modes a new random offset every N ops; for sequential ones N
    /// bytes skipped after each op (negative: gone back, `rw=read:-8k`).
    pub rw_modifier: Option<i64>,
    pub rwmixread: u8,
    /// Block size per direction (read, write, trim).
    pub bs: [u64; 3],
    /// Block sizes that vary per direction (`bssplit`, `bsrange` with min < max); `None`: `bs`.
    pub bs_choice: [Option<BsChoice>; 3],
    /// fio's `random_distribution`.
    pub distribution: Distribution,
    pub ba: [Option<u64>; 3],
    pub percentage_random: [u8; 3],
    pub randseed: u64,
    pub randrepeat: bool,
    pub norandommap: bool,
    /// fio's `random_generator=lfsr` (its other generators, `tausworthe` and `tausworthe64`,
    /// are random like ssdlab's; with `norandommap` lfsr is refused: fio's LFSR visits every
    /// block once per pass without a map).
    pub random_generator_lfsr: bool,
    /// fio's `allow_file_create` (default 1): with 0, a job whose file does not exist fails.
    pub allow_file_create: bool,
    /// Options given at a value that changes only what fio's report holds (`gtod_reduce=1`,
    /// `disk_util=0`, …), each with what fio's report then lacks: ssdlab runs the same I/O and
    /// reports as fio does by default, and says so in a note.
    pub report_differs: Vec<(String, String)>,
    pub direct: bool,
    pub engine: Engine,
    pub iodepth: u32,
    pub iodepth_batch: Option<u32>,
    /// `iodepth_batch_complete_max`: completions reaped at most at once (fio's default: the
    /// minimum, so one).
    pub iodepth_batch_complete_max: Option<u32>,
    /// `iodepth_batch_complete_min`: completions a full queue waits for (fio's default 1; 0
    /// polls, see [`Settings::polls`]).
    pub iodepth_batch_complete_min: Option<u32>,
    /// `iodepth_low`: the depth a full queue drains to before it is refilled (0, or above
    /// `iodepth`: `iodepth`, as fio fixes it up).
    pub iodepth_low: Option<u32>,
    pub numjobs: u32,
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_ns: u64,
    /// `startdelay`, ns (the low end of a range).
    pub start_delay_ns: u64,
    /// The high end of a `startdelay` range, ns: each clone draws its delay from the range.
    pub start_delay_high_ns: Option<u64>,
    /// fio's flow control: `flow` (the weight, as the unsigned int fio keeps: a negative one
    /// wraps round; 0: no flow control), `flow_id`, `flow_sleep` (µs).
    pub flow: u32,
    pub flow_id: i32,
    pub flow_sleep_us: u32,
    pub zero_buffers: bool,
    /// fio's `refill_buffers`: new random data for every write.
    pub refill_buffers: bool,
    /// `refill_buffers` was given (fio's `fio_option_is_set`: else compressible buffers are
    /// refilled).
    pub refill_set: bool,
    /// `scramble_buffers` was given (fio's `fio_option_is_set`: it then stamps even zeroed
    /// buffers).
    pub scramble_set: bool,
    /// fio's `scramble_buffers` (default on): buffers filled once, each write stamped.
    pub scramble_buffers: bool,
    pub buffer_pattern: Option<ssdlab_workload::PatternBytes>,
    pub compress_pct: Option<u8>,
    /// fio's `buffer_compress_chunk` (default 512; 0: the smallest write).
    pub compress_chunk: u64,
    /// fio's `dedupe_percentage`: the share of write buffers that repeat another (0: none).
    pub dedupe_pct: u8,
    /// fio's `dedupe_mode=working_set` (else `repeat`).
    pub dedupe_working_set: bool,
    /// fio's `dedupe_working_set_percentage` (default 5): the working set's share of `size`.
    pub dedupe_working_set_pct: u8,
    /// fio's `dedupe_global`: the working set spans every thread of the run.
    pub dedupe_global: bool,
    pub verify: bool,
    pub do_verify: bool,
    /// `verify` was given (`verify_pattern` turns verification on only when it was not).
    pub verify_set: bool,
    /// `verify=pattern`: the blocks hold the pattern alone, no headers.
    pub verify_no_header: bool,
    /// `verify_pattern`: what verified writes carry.
    pub verify_pattern: Option<ssdlab_workload::PatternBytes>,
    /// fio's `continue_on_error` and `ignore_error`: which errors the job goes on after.
    pub non_fatal: ssdlab_engine::NonFatal,
    pub read_iolog: Option<String>,
    pub write_iolog: Option<String>,
    pub replay_no_stall: bool,
    pub replay_time_scale: u32,
    pub replay_redirect: Option<String>,
    pub replay_align: u64,
    pub replay_scale: u64,
    pub replay_skip: Skip,
    pub hipri: bool,
    pub sqthread_poll: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    /// Engine options as set: key, where, and whether ssdlab handles it (checked against the
    /// job's engine at the end, as fio reads engine options only for their engine).
    pub engine_opts: Vec<(String, Loc, bool)>,
    /// An `ioengine=` ssdlab does not run (refused; the job keeps its previous engine when the
    /// refusal is ignored).
    pub refused_engine: Option<String>,
    /// What ssdlab does not support in this job (its own options and its globals'): refused,
    /// or, with `--ignore-unsupported`, listed in its output.
    pub ignored: Vec<Issue>,
    pub stonewall: bool,
    pub new_group: bool,
    pub wait_for: Option<String>,
    pub group_reporting: bool,
    /// `exitall`: when any job ends, the jobs of its `exit_what` scope end too (fio sets this
    /// for the whole run when any job sets it).
    pub exitall: bool,
    /// fio's `exitall_on_error`: this job ending on an error ends the jobs of its `exit_what`
    /// scope (as `exitall` does for any end).
    pub exitall_on_error: bool,
    /// `exit_what`: which jobs a job's end stops under `exitall`.
    pub exit_what: ExitWhat,
    /// `rate_iops` per direction.
    pub rate_iops: [Option<u64>; 3],
    /// `rate` (bytes/s) per direction.
    pub rate: [Option<u64>; 3],
    /// fio's `rate_ignore_thinktime`.
    pub rate_ignore_think: bool,
    /// fio's `rate_process=poisson`.
    pub rate_poisson: bool,
    /// fio's `verify_fatal`.
    pub verify_fatal: bool,
    /// fio's `verify_backlog` (0: none) and `verify_backlog_batch` (0: the backlog).
    pub verify_backlog: u64,
    pub verify_backlog_batch: u32,
    /// fio's `fill_device` (`fill_fs`): write until the file system is full.
    pub fill_device: bool,
    /// fio's `create_serialize` (default 1): every job's files are set up before any runs.
    pub create_serialize: bool,
    /// fio's `zonemode` (`None`: none), `zonesize`, `zonerange`, `zoneskip`.
    pub zonemode: Option<&'static str>,
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
    /// fio's `max_latency` per direction, ns (0: none).
    pub max_latency_ns: [u64; 3],
    /// fio's `cpus_allowed` (or `cpumask`) and `cpus_allowed_policy=split`.
    pub cpus_allowed: Option<Vec<u32>>,
    pub cpus_split: bool,
    /// fio's `numa_cpu_nodes`: the CPUs of these nodes (they take the place of
    /// `cpus_allowed`, as fio sets them after it).
    pub numa_cpus: Option<Vec<u32>>,
    /// fio's `numa_mem_policy`: the I/O threads' memory policy.
    pub mem_policy: Option<MemPolicy>,
    /// fio's `nice` (added to each I/O thread's nice value).
    pub nice: i32,
    /// fio's `prioclass` and `prio` (each I/O thread's I/O priority, when either is given).
    pub prioclass: Option<u32>,
    pub prio: Option<u32>,
    /// fio's `log_prio`: the logs' priority column is the I/O priority value.
    pub log_prio: bool,
    /// fio's `io_submit_mode=offload`.
    pub submit_offload: bool,
    /// `thinktime` (ns; the stall after every `thinktime_blocks` I/Os), `thinktime_spin` (ns
    /// of it spent spinning: the same stall), `thinktime_blocks`, and whether those count
    /// issued I/Os (`thinktime_blocks_type=issue`) rather than completed ones (the default).
    /// `steadystate` (metric, slope, limit, percent), `steadystate_duration`,
    /// `steadystate_ramp_time`, `steadystate_check_interval` (ns).
    pub steady: (ssdlab_workload::SteadyMetric, bool, f64, bool),
    pub steady_dur_ns: u64,
    pub steady_ramp_ns: u64,
    pub steady_interval_ns: u64,
    pub thinktime_ns: u64,
    /// fio's `latency_target` (0: none), `latency_window`, `latency_percentile`,
    /// `latency_run`.
    pub latency_target_ns: u64,
    pub latency_window_ns: u64,
    pub latency_percentile: f64,
    pub latency_run: bool,
    pub thinktime_spin_ns: u64,
    pub thinktime_blocks: u32,
    pub thinktime_by_issue: bool,
    /// `thinktime_blocks` was given (fio counts blocks with `thinktime_iotime` only then).
    pub thinktime_blocks_set: bool,
    /// `thinktime_iotime` (ns): a think also after this long of I/O.
    pub thinktime_iotime_ns: u64,
    /// `rate_min` (bytes/s) and `rate_iops_min` per direction; `rate_cycle` (ms).
    pub rate_min: [Option<u64>; 3],
    pub rate_iops_min: [Option<u64>; 3],
    pub rate_cycle_ms: u64,
    /// Clone k starts at `offset + k × offset_increment`.
    pub offset_increment: Option<Size>,
    /// Drop the page cache of the job's region before it starts (fio's default).
    pub invalidate: bool,
    pub fadvise: Fadvise,
    pub fallocate: Fallocate,
    /// A write job lays its file out with data first (fio's `overwrite`).
    pub overwrite: bool,
    /// The file is created when the job opens it, not laid out (fio's `create_on_open`).
    pub create_on_open: bool,
    /// The region is read into the page cache before the job (fio's `pre_read`).
    pub pre_read: bool,
    pub unified: Unified,
    /// fio's log files: the file-name prefix of each (`write_bw_log`, `write_iops_log`,
    /// `write_lat_log`, `write_hist_log`); an empty one (a bare key) is the job's name, as in
    /// fio.
    pub bw_log: Option<String>,
    pub iops_log: Option<String>,
    pub lat_log: Option<String>,
    pub hist_log: Option<String>,
    /// `log_avg_msec` (0, fio's default: a line per I/O), `log_hist_msec` (0: no histogram
    /// lines), `log_hist_coarseness` (0 to 6).
    pub log_avg_msec: u64,
    pub log_hist_msec: u64,
    pub log_hist_coarseness: u8,
    /// `log_max_value`, `log_offset`, `per_job_logs` (default 1).
    pub log_max_value: bool,
    pub log_offset: bool,
    pub per_job_logs: bool,
    /// The options applied, in order (the job's globals' first): how each was written and
    /// where, so that messages about a setting name it as the job file does ([`crate::JobNaming`]).
    pub written: Vec<Written>,
}

/// An option as it was written: the key (an alias stays as written), its value, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub key: String,
    /// fio's name of the option (an alias's canonical name).
    pub canonical: String,
    pub value: Option<String>,
    pub loc: Loc,
}

/// fio's `exit_what`: the jobs `exitall` stops when a job ends (`fio_terminate_threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of its reporting group (`group`, the default).
    #[default]
    Group,
    /// Every job running: its stonewall wave (`stonewall`).
    Stonewall,
    /// Every job, and no later wave starts (`all`).
    All,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            kb_base: 1024,
            name: None,
            filename: None,
            directory: None,
            filename_format: None,
            size: None,
            filesize: None,
            filesize_max: None,
            nrfiles: 1,
            openfiles: None,
            stat_call: StatCall::Stat,
            file_service: FileService::RoundRobin(1),
            offset: None,
            io_size: None,
            io_size_pct: None,
            number_ios: None,
            loops: 1,
            mode: Mode::Read,
            rw_modifier: None,
            rwmixread: 50,
            bs: [4096; 3],
            bs_choice: [None, None, None],
            distribution: Distribution::Uniform,
            ba: [None; 3],
            percentage_random: [100; 3],
            randseed: FIO_RANDSEED,
            randrepeat: true,
            norandommap: false,
            random_generator_lfsr: false,
            allow_file_create: true,
            report_differs: Vec::new(),
            direct: false,
            engine: Engine::Sync("psync"),
            iodepth: 1,
            iodepth_batch: None,
            iodepth_batch_complete_max: None,
            iodepth_batch_complete_min: None,
            iodepth_low: None,
            numjobs: 1,
            runtime_ns: None,
            time_based: false,
            ramp_ns: 0,
            start_delay_ns: 0,
            start_delay_high_ns: None,
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            zero_buffers: false,
            refill_buffers: false,
            refill_set: false,
            scramble_set: false,
            compress_chunk: 512,
            scramble_buffers: true,
            buffer_pattern: None,
            compress_pct: None,
            dedupe_pct: 0,
            dedupe_working_set: false,
            dedupe_working_set_pct: 5,
            dedupe_global: false,
            verify: false,
            do_verify: true,
            verify_set: false,
            verify_no_header: false,
            verify_pattern: None,
            non_fatal: ssdlab_engine::NonFatal::default(),
            read_iolog: None,
            write_iolog: None,
            replay_no_stall: false,
            replay_time_scale: 100,
            replay_redirect: None,
            replay_align: 0,
            replay_scale: 0,
            replay_skip: Skip::default(),
            hipri: false,
            sqthread_poll: false,
            fixedbufs: false,
            registerfiles: false,
            engine_opts: Vec::new(),
            refused_engine: None,
            ignored: Vec::new(),
            stonewall: false,
            new_group: false,
            wait_for: None,
            group_reporting: false,
            rate_iops: [None; 3],
            rate: [None; 3],
            rate_ignore_think: false,
            rate_poisson: false,
            verify_fatal: false,
            verify_backlog: 0,
            verify_backlog_batch: 0,
            fill_device: false,
            create_serialize: true,
            zonemode: None,
            zonesize: 0,
            zonerange: 0,
            zoneskip: 0,
            max_latency_ns: [0; 3],
            cpus_allowed: None,
            cpus_split: false,
            numa_cpus: None,
            mem_policy: None,
            nice: 0,
            prioclass: None,
            prio: None,
            log_prio: false,
            submit_offload: false,
            // fio's default criterion: iops_slope:0.01%, checked every second
            steady: (ssdlab_workload::SteadyMetric::Iops, true, 0.01, true),
            steady_dur_ns: 0,
            steady_ramp_ns: 0,
            steady_interval_ns: 1_000_000_000,
            thinktime_ns: 0,
            latency_target_ns: 0,
            latency_window_ns: 0,
            latency_percentile: 100.0,
            latency_run: false,
            thinktime_spin_ns: 0,
            thinktime_blocks: 1,
            thinktime_by_issue: false,
            thinktime_blocks_set: false,
            thinktime_iotime_ns: 0,
            rate_min: [None; 3],
            rate_iops_min: [None; 3],
            rate_cycle_ms: 1000,
            offset_increment: None,
            invalidate: true,
            fadvise: Fadvise::ByMode,
            fallocate: Fallocate::Native,
            overwrite: false,
            create_on_open: false,
            pre_read: false,
            unified: Unified::None,
            bw_log: None,
            iops_log: None,
            lat_log: None,
            hist_log: None,
            log_avg_msec: 0,
            log_hist_msec: 0,
            log_hist_coarseness: 0,
            log_max_value: false,
            log_offset: false,
            per_job_logs: true,
            written: Vec::new(),
        }
    }
}

/// The longest averaging or histogram interval of a log ssdlab takes: a day, in ms.
pub const MAX_LOG_MSEC: u64 = 86_400_000;

fn need(v: Option<&str>, key: &str) -> Result<String, Problem> {
    match v {
        Some(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        _ => Err(Problem::Invalid(format!("{key} needs a value ({key}=…)"))),
    }
}

/// An integer option within fio's bounds (its `minval`/`maxval`).
fn in_range(key: &str, v: &str, lo: i64, hi: i64) -> Result<i64, Problem> {
    let n = value::signed_int(v).map_err(|e| Problem::Invalid(format!("{key}={v}: {e}")))?;
    if !(lo..=hi).contains(&n) {
        return Err(Problem::Invalid(format!(
            "{key}={v}: out of range ({lo} to {hi}), as fio says"
        )));
    }
    Ok(n)
}

/// fio's node list `s` (libnuma's `numa_parse_nodestring`: `all`, or nodes and ranges), each
/// an online node of this machine (fio refuses the others at parse time); `what` is the
/// option as written, for the errors.
fn numa_nodes(what: &str, s: &str) -> Result<Vec<u32>, Problem> {
    let online = ssdlab_io::numa::online_nodes();
    if s.trim() == "all" {
        return Ok(online);
    }
    let nodes = value::cpu_list(s).map_err(|_| {
        Problem::Invalid(format!(
            "{what}: '{s}' is not a node list (all, or nodes and ranges: 0,2-3)"
        ))
    })?;
    match nodes.iter().find(|n| !online.contains(n)) {
        Some(n) => Err(Problem::Invalid(format!(
            "{what}: node {n} out of range (this machine's nodes: {}), as libnuma says",
            online
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ))),
        None => Ok(nodes),
    }
}

/// fio's `numa_mem_policy=MODE[:NODES]` (its `str_numa_mpol_cb`): `default` and `local` take
/// no nodes, `prefer` one, `bind` a list, `interleave` a list or all nodes.
fn mem_policy(key: &str, s: &str) -> Result<MemPolicy, Problem> {
    let what = format!("{key}={s}");
    let (mode, nodes) = match s.split_once(':') {
        Some((m, n)) => (m.trim(), Some(n.trim())),
        None => (s.trim(), None),
    };
    let bad = |why: &str| Err(Problem::Invalid(format!("{key}={s}: {why}, as fio says")));
    Ok(match (mode, nodes) {
        ("default", None) => MemPolicy::Default,
        ("local", None) => MemPolicy::Local,
        ("default" | "local", Some(_)) => return bad("NO nodelist for 'local'"),
        ("prefer", None) => return bad("one node is needed for 'prefer'"),
        // (fio checks no node of `prefer`: set_mempolicy refuses a missing one as the job
        // starts, and the job runs without the policy)
        ("prefer", Some(n)) => match n.parse() {
            Ok(node) if n.bytes().all(|b| b.is_ascii_digit()) => MemPolicy::Prefer(node),
            _ => return bad("one node only for 'prefer'"),
        },
        ("bind", None) => return bad("a nodelist is needed for 'bind'"),
        ("bind", Some(n)) => MemPolicy::Bind(numa_nodes(&what, n)?),
        ("interleave", n) => MemPolicy::Interleave(numa_nodes(&what, n.unwrap_or("all"))?),
        _ => return bad("memory policy should be: default, prefer, bind, interleave, local"),
    })
}

/// `cpus` when this machine has each of them (fio: "CPU 99 too large (max=1)").
fn cpus_here(cpus: Vec<u32>) -> Result<Vec<u32>, Problem> {
    let n = ssdlab_io::cpu::cpus_configured();
    match cpus.iter().find(|&&c| c >= n) {
        Some(c) => Err(Problem::Invalid(format!(
            "CPU {c} too large (max={}), as fio says",
            n - 1
        ))),
        None => Ok(cpus),
    }
}

fn unsupported(why: impl Into<String>) -> Problem {
    Problem::Unsupported(why.into())
}

/// Accepts an option only at the given (default) value.
fn only_default(key: &str, v: Option<&str>, ok: &[&str], why: &str) -> Result<(), Problem> {
    let given = v.map(str::trim).unwrap_or("1");
    if ok.contains(&given) {
        Ok(())
    } else {
        Err(unsupported(format!("{key}={given}: {why}")))
    }
}

impl Settings {
    /// The name of file `fileno` of clone `clone` of job `job` when no `filename` names it, as
    /// fio's `make_filename` makes it: `JOB.CLONE.FILENO`, or `filename_format` with its
    /// keywords `$jobname`, `$jobnum` (the clone), `$filenum` and `$clientuid` (fio's client
    /// address; empty, as in fio outside client/server mode) replaced, each found without
    /// regard to case, one keyword after the other. (fio searches the whole name again after
    /// each replacement, so a job name holding `$jobname` never ends there; here the search
    /// goes on after the replacement.) Relative to `directory`, as any file name.
    pub fn file_name(&self, job: &str, clone: u32, fileno: u32) -> String {
        let fmt = match self.filename_format.as_deref() {
            Some(f) if !f.is_empty() => f,
            _ => return format!("{job}.{clone}.{fileno}"),
        };
        let (clone, fileno) = (clone.to_string(), fileno.to_string());
        let mut name = fmt.to_string();
        for (keyword, value) in [
            ("$jobname", job),
            ("$jobnum", clone.as_str()),
            ("$filenum", fileno.as_str()),
            ("$clientuid", ""),
        ] {
            let mut from = 0;
            while let Some(at) = name[from..].to_ascii_lowercase().find(keyword) {
                let at = from + at;
                name.replace_range(at..at + keyword.len(), value);
                from = at + value.len();
            }
        }
        name
    }

    /// The I/O priority value of the job's threads, as fio's `ioprio_value` makes it
    /// (`prioclass << 13 | prio`, class 0 taken as best effort), 0 without either option.
    pub fn io_priority_value(&self) -> u32 {
        if self.prio.is_none() && self.prioclass.is_none() {
            return 0;
        }
        let class = match self.prioclass.unwrap_or(0) {
            0 => 2,
            c => c,
        };
        class << 13 | self.prio.unwrap_or(0)
    }

    /// Applies one option (canonical key) in order.
    pub fn apply(&mut self, opt: &Opt) -> Result<(), Problem> {
        let key = options::canonical(&opt.key);
        let v = opt.value.as_deref();
        let kb = self.kb_base;
        let size = |s: &str| value::size(s, kb).map_err(Problem::Invalid);
        let bytes = |s: &str| value::bytes(s, kb).map_err(Problem::Invalid);
        let flag = |v: Option<&str>| value::boolean(v).map_err(Problem::Invalid);
        // fio's zone units (`size=8z`): a number of zones of `zonemode`'s zone size.
        if let Some(z) = v.map(str::trim).and_then(|v| v.strip_suffix(['z', 'Z'])) {
            if !z.is_empty() && z.chars().all(|c| c.is_ascii_digit()) {
                return Err(unsupported(format!(
                    "{key}={}: zone units (fio's zonemode; ssdlab does not model zoned devices)",
                    v.unwrap_or("").trim()
                )));
            }
        }
        match key {
            "name" => self.name = Some(need(v, key)?),
            "kb_base" => {
                self.kb_base = match need(v, key)?.as_str() {
                    "1024" => 1024,
                    "1000" => 1000,
                    o => return Err(Problem::Invalid(format!("kb_base={o}: 1024 or 1000"))),
                }
            }
            "filename" => {
                let f = need(v, key)?;
                if split_filenames(&f).is_empty() {
                    return Err(Problem::Invalid(format!("filename={f}: no file name")));
                }
                // (fio's str_filename_cb adds the files to those the job has already: a job's
                // `filename` adds to its global section's, a second one to its first)
                self.filename = Some(match self.filename.take() {
                    Some(before) => format!("{before}:{f}"),
                    None => f,
                });
            }
            "filename_format" => self.filename_format = Some(need(v, key)?),
            "directory" => {
                let d = need(v, key)?;
                if split_filenames(&d).len() > 1 {
                    return Err(unsupported(format!(
                        "directory={d}: several directories in one job"
                    )));
                }
                self.directory = Some(d);
            }
            "size" => self.size = Some(size(&need(v, key)?)?),
            "filesize" => {
                let (a, b) = value::range(&need(v, key)?, kb).map_err(Problem::Invalid)?;
                self.filesize = Some(a.min(b));
                self.filesize_max = (a != b).then_some(a.max(b));
            }
            "offset" => self.offset = Some(size(&need(v, key)?)?),
            "io_size" => match size(&need(v, key)?)? {
                Size::Bytes(b) => (self.io_size, self.io_size_pct) = (Some(b), None),
                // (above 100 % is refused by the parser, as fio refuses it)
                Size::Percent(p) => (self.io_size, self.io_size_pct) = (None, Some(p)),
            },
            "number_ios" => self.number_ios = Some(value::int(&need(v, key)?)?),
            // fio takes loops=0 as one loop (td->loops is at least 1; the pass then comes
            // from keep_running's size check, as after a last loop)
            "loops" => {
                self.loops = value::int_in(&need(v, key)?, 0, u32::MAX as u64)?.max(1);
            }
            "rw" => {
                let s = need(v, key)?;
                let (mode, modifier) = match s.split_once(':') {
                    Some((m, n)) => (m.trim(), Some(n.trim())),
                    None => (s.as_str(), None),
                };
                self.mode = match mode {
                    "read" => Mode::Read,
                    "write" => Mode::Write,
                    "randread" => Mode::RandRead,
                    "randwrite" => Mode::RandWrite,
                    "rw" | "readwrite" => Mode::Rw,
                    "randrw" => Mode::RandRw,
                    "trim" => Mode::Trim,
                    "randtrim" => Mode::RandTrim,
                    "trimwrite" => Mode::TrimWrite,
                    "randtrimwrite" => Mode::RandTrimWrite,
                    other => {
                        return Err(Problem::Invalid(format!(
                            "rw={other} is not an fio mode (read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite)"
                        )))
                    }
                };
                self.rw_modifier = match modifier {
                    None => None,
                    Some(n) => {
                        // A sequential mode's modifier may be negative: backwards.
                        let (neg, digits) = match n.strip_prefix('-') {
                            Some(d) if !self.mode.random() => (true, d),
                            _ => (false, n),
                        };
                        // A random mode's is a count of I/Os that fio reads with atoi (its
                        // leading digits: `randwrite:8k` is every 8), a sequential mode's a
                        // size.
                        let n = if self.mode.random() {
                            let lead: String = digits
                                .trim_start()
                                .chars()
                                .take_while(char::is_ascii_digit)
                                .collect();
                            lead.parse::<u64>().unwrap_or(0)
                        } else {
                            bytes(digits)?
                        };
                        if n == 0
                            || n > i64::MAX as u64
                            || (self.mode.random() && n > u32::MAX as u64)
                        {
                            return Err(Problem::Invalid(format!(
                                "rw={s}: the modifier is out of range"
                            )));
                        }
                        Some(if neg { -(n as i64) } else { n as i64 })
                    }
                };
            }
            "rw_sequencer" => match need(v, key)?.as_str() {
                "sequential" => {}
                "identical" => {
                    return Err(unsupported(
                        "rw_sequencer=identical (the same offset N times)",
                    ))
                }
                o => {
                    return Err(Problem::Invalid(format!(
                        "rw_sequencer={o}: sequential or identical"
                    )))
                }
            },
            "rwmixread" => self.rwmixread = value::int_in(&need(v, key)?, 0, 100)? as u8,
            "rwmixwrite" => self.rwmixread = 100 - value::int_in(&need(v, key)?, 0, 100)? as u8,
            "bs" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::bytes(s, kb))?;
                for (i, b) in l.iter().enumerate() {
                    if let Some(b) = b {
                        if *b == 0 {
                            return Err(Problem::Invalid("bs must be greater than 0".into()));
                        }
                        self.bs[i] = *b;
                        self.bs_choice[i] = None;
                    }
                }
            }
            "bsrange" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::range(s, kb))?;
                for (i, r) in l.iter().enumerate() {
                    if let Some((lo, hi)) = r {
                        if *lo == 0 {
                            return Err(Problem::Invalid("bsrange must be greater than 0".into()));
                        }
                        self.bs[i] = *hi;
                        self.bs_choice[i] = (lo != hi).then_some(BsChoice::Range(*lo, *hi));
                    }
                }
            }
            "bssplit" => {
                let text = need(v, key)?;
                for (i, d) in value::per_ddir_split(&text).iter().enumerate() {
                    let list = value::split_list(d, |b| value::bytes(b, kb), value::split_pct)?;
                    if list.is_empty() {
                        continue;
                    }
                    if list.len() > 64 {
                        return Err(Problem::Invalid(format!(
                            "bssplit={text}: more than 64 sizes (fio's BSSPLIT_MAX)"
                        )));
                    }
                    if list.iter().any(|(b, _)| *b == 0) {
                        return Err(Problem::Invalid("bssplit: a block size of 0".into()));
                    }
                    let c = BsChoice::split(list)
                        .map_err(|e| Problem::Invalid(format!("bssplit={text}: {e}")))?;
                    self.bs[i] = c.bounds().1;
                    self.bs_choice[i] = Some(c);
                }
            }
            "ba" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::bytes(s, kb))?;
                for (i, b) in l.iter().enumerate() {
                    if let Some(b) = b {
                        if *b == 0 {
                            return Err(Problem::Invalid(
                                "blockalign must be greater than 0".into(),
                            ));
                        }
                        self.ba[i] = Some(*b);
                    }
                }
            }
            "bs_unaligned" => {
                if flag(v)? {
                    return Err(unsupported("bs_unaligned (with variable block sizes)"));
                }
            }
            "bs_is_seq_rand" => {
                only_default(key, v, &["0"], "block sizes for sequential/random I/O")?
            }
            "percentage_random" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::int_in(s, 0, 100))?;
                for (i, p) in l.iter().enumerate() {
                    if let Some(p) = p {
                        self.percentage_random[i] = *p as u8;
                    }
                }
            }
            "randseed" => self.randseed = value::int(&need(v, key)?)?,
            "randrepeat" => self.randrepeat = flag(v)?,
            "norandommap" => self.norandommap = flag(v)?,
            "random_generator" => {
                self.random_generator_lfsr = match need(v, key)?.trim() {
                    "lfsr" => true,
                    "tausworthe" | "tausworthe64" => false,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "random_generator={o}: tausworthe, lfsr or tausworthe64"
                        )))
                    }
                }
            }
            "allow_file_create" => self.allow_file_create = flag(v)?,
            k @ ("stats" | "clat_percentiles" | "disk_util" | "gtod_reduce" | "disable_lat"
            | "disable_clat" | "disable_slat" | "disable_bw_measurement" | "lat_percentiles"
            | "slat_percentiles") => {
                let on = flag(v)?;
                let fio_default = matches!(k, "stats" | "clat_percentiles" | "disk_util");
                self.report_differs.retain(|(o, _)| o != k);
                if on != fio_default {
                    let what = match k {
                        "stats" => "fio then reports no statistics at all",
                        "clat_percentiles" => "fio then prints no completion-latency percentiles",
                        "disk_util" => "fio then prints no disk statistics",
                        "gtod_reduce" => "fio then takes no latency or bandwidth samples (its latency blocks are empty, N=0)",
                        "disable_lat" => "fio then takes no total-latency samples",
                        "disable_clat" => "fio then takes no completion-latency samples",
                        "disable_slat" => "fio then takes no submission-latency samples",
                        "disable_bw_measurement" => "fio then takes no bandwidth or IOPS samples",
                        "lat_percentiles" => "fio then prints total-latency percentiles in its normal output too",
                        _ => "fio then prints submission-latency percentiles in its normal output too",
                    };
                    self.report_differs
                        .push((k.to_string(), format!("{k}={}: {what}", u8::from(on))));
                }
            }
            "softrandommap" => only_default(key, v, &["0"], "fio's soft random map")?,
            "random_distribution" => {
                let d = need(v, key)?;
                if d.trim().split(':').next() == Some("sequence") {
                    return Err(unsupported(format!(
                        "random_distribution={d}: fio's sequence distribution (newer than fio 3.42), not implemented"
                    )));
                }
                self.distribution = distribution(&d, kb).map_err(Problem::Invalid)?
            }
            "direct" => self.direct = flag(v)?,
            "buffered" => self.direct = !flag(v)?,
            "ioengine" => {
                let e = need(v, key)?;
                match Engine::parse(&e) {
                    Ok(engine) => {
                        self.engine = engine;
                        self.refused_engine = None;
                    }
                    Err(p) => {
                        self.refused_engine = Some(e.trim().to_string());
                        return Err(p);
                    }
                }
            }
            "iodepth" => self.iodepth = value::int_in(&need(v, key)?, 1, 65536)? as u32,
            "iodepth_batch" => {
                self.iodepth_batch = Some(value::int_in(&need(v, key)?, 0, 65536)? as u32)
            }
            // (fio's ints: size suffixes (`1k`); beyond the depth they change nothing)
            "iodepth_batch_complete_min" => {
                self.iodepth_batch_complete_min =
                    Some(bytes(&need(v, key)?)?.min(u32::MAX as u64) as u32)
            }
            "iodepth_batch_complete_max" => {
                self.iodepth_batch_complete_max =
                    Some(value::int_in(&need(v, key)?, 0, 65536)? as u32)
            }
            "iodepth_low" => {
                self.iodepth_low = Some(bytes(&need(v, key)?)?.min(u32::MAX as u64) as u32)
            }
            "numjobs" => self.numjobs = value::int_in(&need(v, key)?, 1, 4096)? as u32,
            "runtime" => self.runtime_ns = Some(value::time_ns(&need(v, key)?, false)?),
            "time_based" => self.time_based = flag(v)?,
            "ramp_time" => self.ramp_ns = value::time_ns(&need(v, key)?, false)?,
            "zero_buffers" => self.zero_buffers = flag(v)?,
            "refill_buffers" => {
                self.refill_buffers = flag(v)?;
                self.refill_set = true;
            }
            "scramble_buffers" => {
                self.scramble_buffers = flag(v)?;
                self.scramble_set = true;
            }
            "buffer_pattern" => {
                self.buffer_pattern = Some(data_pattern(key, &need(v, key)?)?);
                // fio's str_buffer_pattern_cb: refilled buffers when the job (so far) reads or
                // has a compressible share, else not; never scrambled nor zeroed
                self.refill_buffers = self.compress_pct.is_some_and(|p| p > 0) || self.mode.reads();
                self.scramble_buffers = false;
                self.zero_buffers = false;
            }
            "verify_pattern" => {
                self.verify_pattern = Some(data_pattern(key, &need(v, key)?)?);
                // fio's str_verify_pattern_cb: verify=pattern (with its header) unless a
                // verify method was given
                if !self.verify_set {
                    self.verify = true;
                }
            }
            "buffer_compress_percentage" => {
                self.compress_pct = Some(value::int_in(&need(v, key)?, 0, 100)? as u8)
            }
            "dedupe_percentage" => {
                self.dedupe_pct = value::int_in(&need(v, key)?, 0, 100)? as u8;
                // (fio's str_dedupe_cb: refilled buffers, even at 0 %; a later
                // refill_buffers=0 turns that off again)
                self.refill_buffers = true;
            }
            "dedupe_mode" => {
                self.dedupe_working_set = match need(v, key)?.as_str() {
                    "repeat" => false,
                    "working_set" => true,
                    m => {
                        return Err(Problem::Invalid(format!(
                            "dedupe_mode={m}: fio's modes are repeat and working_set"
                        )))
                    }
                }
            }
            "dedupe_working_set_percentage" => {
                self.dedupe_working_set_pct = value::int_in(&need(v, key)?, 0, 100)? as u8
            }
            "dedupe_global" => self.dedupe_global = flag(v)?,
            "buffer_compress_chunk" => {
                self.compress_chunk = value::bytes(&need(v, key)?, self.kb_base)
                    .map_err(Problem::Invalid)?
            }
            "verify" => {
                let m = need(v, key)?;
                self.verify_set = true;
                self.verify_no_header = false;
                match m.as_str() {
                    "0" | "none" => self.verify = false,
                    "crc32c" | "crc32c-intel" | "crc32" | "crc16" | "crc7" | "crc64" | "md5"
                    | "sha1" | "sha256" | "sha512" | "sha3-224" | "sha3-256" | "sha3-384"
                    | "sha3-512" | "xxhash" | "meta" | "1" => self.verify = true,
                    "pattern" => {
                        self.verify = true;
                        self.verify_no_header = true;
                    }
                    "null" => {
                        return Err(unsupported(format!(
                        "verify={m} (ssdlab verifies with its own per-sector headers and CRC32C)"
                    )))
                    }
                    o => {
                        return Err(Problem::Invalid(format!(
                            "verify={o} is not an fio verify method"
                        )))
                    }
                }
            }
            "do_verify" => self.do_verify = flag(v)?,
            "error_dump" => only_default(
                key,
                v,
                &["0"],
                "ssdlab keeps each error with its offset in the results instead of printing it",
            )?,
            "verify_fatal" => self.verify_fatal = flag(v)?,
            // (fio: a value with a size suffix, as a count)
            // (fio: a count with a size suffix, at most a signed 64-bit one; the batch an int)
            "verify_backlog" => {
                let n = bytes(&need(v, key)?)?;
                if n > i64::MAX as u64 {
                    return Err(Problem::Invalid(format!("{n} is out of range")));
                }
                self.verify_backlog = n
            }
            "verify_backlog_batch" => {
                let n = bytes(&need(v, key)?)?;
                if n > u32::MAX as u64 {
                    return Err(Problem::Invalid(format!("{n} is out of range (0 to {})", u32::MAX)));
                }
                self.verify_backlog_batch = n as u32
            }
            "fill_device" => self.fill_device = flag(v)?,
            "create_serialize" => self.create_serialize = flag(v)?,
            "zonemode" => {
                self.zonemode = match need(v, key)?.trim() {
                    "none" => None,
                    "strided" => Some("strided"),
                    "zbd" => Some("zbd"),
                    o => {
                        return Err(Problem::Invalid(format!(
                            "zonemode={o}: fio knows none, strided and zbd"
                        )))
                    }
                }
            }
            "zonesize" => self.zonesize = bytes(&need(v, key)?)?,
            "zonerange" => self.zonerange = bytes(&need(v, key)?)?,
            "zoneskip" => self.zoneskip = bytes(&need(v, key)?)?,
            // fio's header interval within a block: ssdlab's headers are per 512-byte sector
            // whatever it says (every byte is checked either way); fio's bounds hold
            "verify_interval" => {
                let n = value::bytes(&need(v, key)?, kb).map_err(Problem::Invalid)?;
                if n < 80 {
                    return Err(Problem::Invalid(format!(
                        "verify_interval: min value out of range: {n} (80 min), as fio says"
                    )));
                }
            }
            // fio's error classes: read (bit 0), write (bit 1), verify (bit 2)
            "continue_on_error" => {
                self.non_fatal.classes = match need(v, key)?.as_str() {
                    "none" | "0" => 0,
                    "read" => 1,
                    "write" => 2,
                    "io" => 3,
                    "verify" => 4,
                    "all" | "1" => 7,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "continue_on_error={o}: none, read, write, io, verify or all"
                        )))
                    }
                }
            }
            "ignore_error" => {
                // fio's str_ignore_error_cb: READ,WRITE,VERIFY lists of E-names or numbers
                // separated by ':'; a class given a list is also continued on (an empty value
                // changes nothing, as in fio)
                let v = v.unwrap_or("").trim().to_string();
                for (class, list) in v.trim().split(',').enumerate() {
                    if class > 2 {
                        return Err(Problem::Invalid(format!(
                            "ignore_error={v}: at most three lists (read, write, verify)"
                        )));
                    }
                    let errnos = list
                        .split(':')
                        .take_while(|e| !e.is_empty())
                        .map(|e| errno_of(e).ok_or_else(|| {
                            Problem::Invalid(format!(
                                "ignore_error: unknown error {e} (fio knows EPERM … ERANGE by name; give others as numbers)"
                            ))
                        }))
                        .collect::<Result<Vec<i32>, Problem>>()?;
                    if errnos.is_empty() {
                        continue;
                    }
                    self.non_fatal.lists[class] =
                        ssdlab_engine::ErrnoList::new(&errnos).ok_or_else(|| {
                            unsupported(format!(
                                "ignore_error with more than {} errors in one list",
                                ssdlab_engine::ErrnoList::MAX
                            ))
                        })?;
                    self.non_fatal.classes |= 1 << class;
                }
            }
            "read_iolog" => {
                let p = need(v, key)?;
                if split_filenames(&p).len() > 1 {
                    return Err(unsupported(format!(
                        "read_iolog={p}: several traces (one per clone)"
                    )));
                }
                if p == "-" {
                    return Err(unsupported("read_iolog=- (a trace on stdin)"));
                }
                self.read_iolog = Some(p);
            }
            "write_iolog" => self.write_iolog = Some(need(v, key)?),
            "replay_no_stall" => self.replay_no_stall = flag(v)?,
            "replay_time_scale" => {
                self.replay_time_scale = value::int_in(&need(v, key)?, 1, u32::MAX as u64)? as u32
            }
            "replay_redirect" => self.replay_redirect = Some(need(v, key)?),
            "replay_align" => {
                let a = value::int(&need(v, key)?)?;
                if a != 0 && !a.is_power_of_two() {
                    return Err(Problem::Invalid(format!(
                        "replay_align={a} must be a power of two"
                    )));
                }
                self.replay_align = a;
            }
            "replay_scale" => self.replay_scale = value::int(&need(v, key)?)?,
            "replay_skip" => {
                self.replay_skip = Skip::parse(&need(v, key)?).map_err(Problem::Invalid)?
            }
            "read_iolog_chunked" => only_default(key, v, &["0"], "ssdlab reads the whole trace")?,
            "hipri" | "sqthread_poll" | "fixedbufs" | "registerfiles" => {
                let on = flag(v)?;
                match key {
                    "hipri" => self.hipri = on,
                    "sqthread_poll" => self.sqthread_poll = on,
                    "fixedbufs" => self.fixedbufs = on,
                    _ => self.registerfiles = on,
                }
                self.engine_opts
                    .push((key.to_string(), opt.loc.clone(), true));
            }
            "stat_type" => {
                self.stat_call = match need(v, key)?.as_str() {
                    "stat" => StatCall::Stat,
                    "lstat" => StatCall::Lstat,
                    "statx" => StatCall::Statx,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "stat_type={o}: stat, lstat or statx"
                        )))
                    }
                };
                self.engine_opts
                    .push((key.to_string(), opt.loc.clone(), true));
            }
            "nonvectored" | "force_async" | "uncached" | "nowait" | "userspace_reap"
            | "libaio_vectored" | "readfua" | "writefua" => {
                self.engine_opts
                    .push((key.to_string(), opt.loc.clone(), true));
                only_default(key, v, &["0"], "an engine option ssdlab does not implement")?
            }
            "rate_iops" => {
                let l = value::per_ddir(&need(v, key)?, value::int)?;
                self.rate_iops = l.map(|x| x.filter(|&n| n > 0));
            }
            "rate" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::bytes(s, kb))?;
                self.rate = l.map(|x| x.filter(|&n| n > 0));
            }
            "rate_min" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::bytes(s, kb))?;
                self.rate_min = l.map(|x| x.filter(|&n| n > 0));
            }
            "rate_iops_min" => {
                let l = value::per_ddir(&need(v, key)?, value::int)?;
                self.rate_iops_min = l.map(|x| x.filter(|&n| n > 0));
            }
            "rate_cycle" => {
                self.rate_cycle_ms = value::int_in(&need(v, key)?, 0, u32::MAX as u64)?
            }
            "rate_process" => {
                self.rate_poisson = match need(v, key)?.trim() {
                    "linear" => false,
                    "poisson" => true,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "rate_process={o}: fio knows linear and poisson"
                        )))
                    }
                }
            }
            "io_submit_mode" => {
                self.submit_offload = match need(v, key)?.trim() {
                    "inline" => false,
                    "offload" => true,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "io_submit_mode={o}: fio knows inline and offload"
                        )))
                    }
                }
            }
            "steadystate" => {
                self.steady = ssdlab_workload::steady::parse_criterion(&need(v, key)?)
                    .map_err(Problem::Invalid)?
            }
            // fio's FIO_OPT_STR_VAL_TIME: seconds when no unit is given.
            "steadystate_duration" => self.steady_dur_ns = value::time_ns(&need(v, key)?, false)?,
            "steadystate_ramp_time" => self.steady_ramp_ns = value::time_ns(&need(v, key)?, false)?,
            "steadystate_check_interval" => {
                self.steady_interval_ns = value::time_ns(&need(v, key)?, false)?
            }
            // fio's units: microseconds when none is given.
            "thinktime" => self.thinktime_ns = value::time_ns(&need(v, key)?, true)?,
            "latency_target" => self.latency_target_ns = value::time_ns(&need(v, key)?, true)?,
            "latency_window" => self.latency_window_ns = value::time_ns(&need(v, key)?, true)?,
            "latency_percentile" => {
                let t = need(v, key)?;
                self.latency_percentile = t
                    .trim()
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .ok_or_else(|| {
                        Problem::Invalid(format!(
                            "latency_percentile={t}: a percentage from 0 to 100"
                        ))
                    })?;
            }
            "latency_run" => self.latency_run = flag(v)?,
            "cpus_allowed" => {
                let cpus = value::cpu_list(&need(v, key)?).map_err(Problem::Invalid)?;
                self.cpus_allowed = Some(cpus_here(cpus)?);
            }
            // a bit mask of CPUs (fio: "0xf" is CPUs 0-3)
            "cpumask" => {
                let m = value::int(&need(v, key)?).map_err(Problem::Invalid)?;
                let cpus: Vec<u32> = (0..64).filter(|b| m >> b & 1 == 1).collect();
                if cpus.is_empty() {
                    return Err(Problem::Invalid("cpumask=0: no CPU to run on".into()));
                }
                self.cpus_allowed = Some(cpus_here(cpus)?);
            }
            "numa_cpu_nodes" => {
                let v = need(v, key)?;
                let nodes = numa_nodes(&format!("{key}={v}"), &v)?;
                let mut cpus = Vec::new();
                for n in nodes {
                    cpus.extend(
                        ssdlab_io::numa::node_cpus(n)
                            .map_err(|e| Problem::Invalid(format!("{key}: {e}")))?,
                    );
                }
                cpus.sort_unstable();
                cpus.dedup();
                if cpus.is_empty() {
                    return Err(Problem::Invalid(format!(
                        "{key}: the nodes have no CPU to run on"
                    )));
                }
                self.numa_cpus = Some(cpus);
            }
            "numa_mem_policy" => self.mem_policy = Some(mem_policy(key, &need(v, key)?)?),
            "nice" => self.nice = in_range(key, &need(v, key)?, -20, 19)? as i32,
            "prio" => self.prio = Some(in_range(key, &need(v, key)?, 0, 7)? as u32),
            "prioclass" => self.prioclass = Some(in_range(key, &need(v, key)?, 0, 3)? as u32),
            "cpus_allowed_policy" => {
                self.cpus_split = match need(v, key)?.trim() {
                    "shared" => false,
                    "split" => true,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "cpus_allowed_policy={o}: fio knows shared and split"
                        )))
                    }
                }
            }
            // fio's FIO_OPT_ULL per direction, µs when no unit is given
            "max_latency" => {
                let l = value::per_ddir(&need(v, key)?, |s| value::time_ns(s, true))?;
                self.max_latency_ns = l.map(|x| x.unwrap_or(0));
            }
            "thinktime_spin" => self.thinktime_spin_ns = value::time_ns(&need(v, key)?, true)?,
            "thinktime_blocks" => {
                self.thinktime_blocks =
                    value::int_in(&need(v, key)?, 1, u32::MAX as u64)? as u32;
                self.thinktime_blocks_set = true;
            }
            // fio's FIO_OPT_INT with is_seconds: seconds when no unit is given.
            "thinktime_iotime" => {
                self.thinktime_iotime_ns = value::time_ns(&need(v, key)?, false)?
            }
            "thinktime_blocks_type" => {
                self.thinktime_by_issue = match need(v, key)?.trim() {
                    "complete" => false,
                    "issue" => true,
                    other => {
                        return Err(Problem::Invalid(format!(
                            "thinktime_blocks_type={other}: fio knows complete and issue"
                        )))
                    }
                }
            }
            "rate_ignore_thinktime" => self.rate_ignore_think = flag(v)?,
            "offset_increment" => self.offset_increment = Some(size(&need(v, key)?)?),
            "stonewall" => self.stonewall = flag(v)?,
            "new_group" => self.new_group = flag(v)?,
            "wait_for" => self.wait_for = Some(need(v, key)?),
            "group_reporting" => self.group_reporting = flag(v)?,
            "invalidate" => self.invalidate = flag(v)?,
            "overwrite" => self.overwrite = flag(v)?,
            "create_on_open" => self.create_on_open = flag(v)?,
            "pre_read" => self.pre_read = flag(v)?,
            "fadvise_hint" => {
                self.fadvise = match need(v, key)?.as_str() {
                    "0" => Fadvise::None,
                    "1" => Fadvise::ByMode,
                    "random" => Fadvise::Random,
                    "sequential" => Fadvise::Sequential,
                    "noreuse" => Fadvise::NoReuse,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "fadvise_hint={o}: 0, 1, random, sequential or noreuse"
                        )))
                    }
                }
            }
            "fallocate" => {
                self.fallocate = match need(v, key)?.as_str() {
                    "none" | "0" => Fallocate::None,
                    "native" => Fallocate::Native,
                    "posix" | "1" => Fallocate::Posix,
                    "keep" => Fallocate::Keep,
                    "truncate" => Fallocate::Truncate,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "fallocate={o}: none, native, posix, keep or truncate"
                        )))
                    }
                }
            }
            "unified_rw_reporting" => {
                self.unified = match need(v, key)?.as_str() {
                    "none" | "0" => Unified::None,
                    "mixed" | "1" => Unified::Mixed,
                    "both" | "2" => Unified::Both,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "unified_rw_reporting={o}: none, mixed or both"
                        )))
                    }
                }
            }
            "fsync" | "fdatasync" | "write_barrier" => {
                only_default(key, v, &["0"], "ssdlab issues no syncs")?
            }
            "end_fsync" | "fsync_on_close" => {
                only_default(key, v, &["0"], "ssdlab issues no syncs")?
            }
            "unlink" | "unlink_each_loop" => {
                only_default(key, v, &["0"], "ssdlab never deletes files")?
            }
            "nrfiles" => self.nrfiles = value::int_in(&need(v, key)?, 1, 65_536)? as u32,
            "openfiles" => self.openfiles = Some(value::int(&need(v, key)?)?),
            "file_service_type" => self.file_service = file_service(&need(v, key)?)?,
            // fio's startdelay is a time in seconds when no unit is given; a range is drawn at
            // random per job, which ssdlab cannot draw as fio does.
            // fio's FIO_OPT_INT into ints: any sign (stored as fio's C ints are, truncated to
            // 32 bits), `flow` at most 1000 (FLOW_MAX_WEIGHT, checked signed: -1 passes).
            "flow" => {
                let n = value::signed_int(&need(v, key)?)?;
                if n > 1000 {
                    return Err(Problem::Invalid(format!(
                        "flow={n}: max value out of range (1000 max)"
                    )));
                }
                self.flow = n as u32;
            }
            "flow_id" => self.flow_id = value::signed_int(&need(v, key)?)? as i32,
            "flow_sleep" => self.flow_sleep_us = value::signed_int(&need(v, key)?)? as u32,
            "startdelay" => {
                let v = need(v, key)?;
                // fio's irange: one time, or a range (LOW-HIGH, LOW:HIGH) each clone draws its
                // delay from
                match v.split_once(['-', ':']) {
                    Some((lo, hi)) => {
                        let (lo, hi) = (value::time_ns(lo, false)?, value::time_ns(hi, false)?);
                        if hi < lo {
                            return Err(Problem::Invalid(format!(
                                "startdelay={v}: the range's end is before its start"
                            )));
                        }
                        self.start_delay_ns = lo;
                        self.start_delay_high_ns = (hi > lo).then_some(hi);
                    }
                    None => {
                        self.start_delay_ns = value::time_ns(&v, false)?;
                        self.start_delay_high_ns = None;
                    }
                }
            }
            "sync" => only_default(key, v, &["0", "none"], "O_SYNC/O_DSYNC writes")?,
            "allow_mounted_write" => {
                only_default(key, v, &["0"], "ssdlab never writes to mounted devices")?
            }
            "exitall" => self.exitall = flag(v)?,
            "exit_what" => {
                self.exit_what = match need(v, key)?.as_str() {
                    "group" => ExitWhat::Group,
                    "stonewall" => ExitWhat::Stonewall,
                    "all" => ExitWhat::All,
                    o => {
                        return Err(Problem::Invalid(format!(
                            "exit_what={o}: group, stonewall or all"
                        )))
                    }
                }
            }
            "exitall_on_error" => self.exitall_on_error = flag(v)?,
            "mem" => {
                let m = need(v, key)?;
                if m != "malloc" {
                    return Err(unsupported(format!(
                        "mem={m}: ssdlab allocates its own aligned buffers"
                    )));
                }
            }
            "write_bw_log" | "write_iops_log" | "write_lat_log" | "write_hist_log" => {
                // fio's str_write_*_log_cb: without a value the log is named after the job
                let prefix = v.map(str::trim).unwrap_or("").to_string();
                match key {
                    "write_bw_log" => self.bw_log = Some(prefix),
                    "write_iops_log" => self.iops_log = Some(prefix),
                    "write_lat_log" => self.lat_log = Some(prefix),
                    _ => self.hist_log = Some(prefix),
                }
            }
            "log_avg_msec" | "log_hist_msec" => {
                let ms = value::int_in(&need(v, key)?, 0, MAX_LOG_MSEC).map_err(|_| {
                    Problem::Invalid(format!(
                        "{key}={}: give a whole number of milliseconds from 0 to {MAX_LOG_MSEC} (a day)",
                        v.unwrap_or("").trim()
                    ))
                })?;
                if key == "log_avg_msec" {
                    self.log_avg_msec = ms;
                } else {
                    self.log_hist_msec = ms;
                }
            }
            "log_hist_coarseness" => {
                self.log_hist_coarseness = value::int_in(&need(v, key)?, 0, 6).map_err(|_| {
                    Problem::Invalid(format!(
                        "log_hist_coarseness={}: fio's range is 0 to 6 (fio's 1856 latency bins, 2^N added together per column: 1856, 928, 464, 232, 116, 58 or 29 columns)",
                        v.unwrap_or("").trim()
                    ))
                })? as u8
            }
            // fio 3.33's boolean log_max_value; newer fio's log_window_value, of which it is
            // an alias there, takes avg, max and both (a mean and a maximum column)
            "log_window_value" => {
                self.log_max_value = match v.map(str::trim) {
                    None | Some("") | Some("1") | Some("max") => true,
                    Some("0") | Some("avg") => false,
                    Some(o @ ("2" | "both")) => {
                        return Err(unsupported(format!(
                            "{}={o}: a mean and a maximum column both (fio newer than 3.33)",
                            opt.key
                        )))
                    }
                    Some(o) => {
                        return Err(Problem::Invalid(format!(
                            "{}={o}: 0 or avg (the mean of each window), 1 or max (its largest value)",
                            opt.key
                        )))
                    }
                }
            }
            "log_offset" => self.log_offset = flag(v)?,
            "per_job_logs" => self.per_job_logs = flag(v)?,
            "log_prio" => self.log_prio = flag(v)?,
            k if options::no_effect(k).is_some() => {}
            k if options::lookup(k).is_some() => {
                let o = options::lookup(k).expect("looked up");
                match o.scope {
                    // fio accepts deprecated options and ignores them.
                    _ if o.deprecated => {}
                    // A profile's options change nothing without the profile (and `profile=`
                    // is refused).
                    options::Scope::Profile(_) => {}
                    // Checked against the job's engine once all its options are read.
                    options::Scope::Engine(_) => {
                        self.engine_opts
                            .push((k.to_string(), opt.loc.clone(), false))
                    }
                    options::Scope::Core => {
                        return Err(unsupported(format!(
                            "{k}: {}",
                            options::why_not_implemented(k)
                        )))
                    }
                }
            }
            _ => return Err(Problem::Invalid(UNKNOWN_OPTION.into())),
        }
        Ok(())
    }

    /// Checks the engine options set by a section (those from `own_from` on) against the
    /// engine the section ends with, as fio reads engine options for the section's engine only;
    /// inherited ones a job's engine does not have are dropped, as fio drops them.
    fn engine_check(&mut self, own_from: usize) -> Vec<(Option<(String, Loc)>, Problem)> {
        let engine = self
            .refused_engine
            .clone()
            .unwrap_or_else(|| self.engine.name().to_string());
        let mut out = Vec::new();
        let mut keep = Vec::new();
        for (i, (k, loc, handled)) in std::mem::take(&mut self.engine_opts)
            .into_iter()
            .enumerate()
        {
            let own = i >= own_from;
            let Some(options::FioOption {
                scope: options::Scope::Engine(engines),
                ..
            }) = options::lookup(&k)
            else {
                continue;
            };
            let at = Some((k.clone(), loc.clone()));
            let list = engines.join("/");
            if !own {
                // Set by a global section for its engine: a job that changes the engine drops
                // it, as fio does.
                if engines.contains(&engine.as_str()) || self.refused_engine.is_some() {
                    keep.push((k, loc, handled));
                }
                continue;
            }
            keep.push((k.clone(), loc.clone(), handled));
            if let Some(e) = &self.refused_engine {
                let of = if engines.contains(&e.as_str()) {
                    format!("ioengine={e}, which ssdlab does not run")
                } else {
                    format!("ioengine={list}")
                };
                out.push((at, unsupported(format!("{k}: an option of {of}"))));
            } else if !engines.contains(&engine.as_str()) {
                // fio reads engine options only for their engine: "Bad option".
                out.push((
                    at,
                    Problem::Invalid(format!(
                        "{k} is an option of ioengine={list} (this job uses ioengine={engine})"
                    )),
                ));
            } else if !handled {
                out.push((
                    at,
                    unsupported(format!(
                        "{k}: an option of ioengine={engine} ssdlab does not implement"
                    )),
                ));
            } else if matches!(
                k.as_str(),
                "hipri" | "sqthread_poll" | "fixedbufs" | "registerfiles"
            ) && !matches!(self.engine, Engine::IoUring)
            {
                out.push((
                    at,
                    unsupported(format!(
                        "{k} with ioengine={engine} (ssdlab polls, registers buffers and files only on its io_uring engine: use ioengine=io_uring)"
                    )),
                ));
            }
        }
        self.engine_opts = keep;
        out
    }

    /// Checks a job's settings as a whole (after all its options).
    fn finish(&self) -> Vec<(Option<(String, Loc)>, Problem)> {
        let mut out = Vec::new();
        if self.mode.random() && self.read_iolog.is_none() && self.align() > self.block_size() {
            out.push((
                None,
                unsupported(format!(
                    "blockalign={} larger than the block size ({}): fio aligns every random offset to it (and turns its random map off); ssdlab's random offsets are aligned to at most a block",
                    self.align(),
                    self.block_size()
                )),
            ));
        }
        if self.random_generator_lfsr && self.norandommap && self.mode.random() {
            out.push((
                None,
                unsupported(
                    "random_generator=lfsr with norandommap: fio's LFSR visits every block once per pass without a map; ssdlab's generator would repeat blocks (leave norandommap out: ssdlab's random map visits every block once)",
                ),
            ));
        }
        if self.read_iolog.is_none() && self.mode.reads() && self.mode.writes() {
            if self.ba[0] != self.ba[1] {
                out.push((
                    None,
                    unsupported("different read and write blockalign in one job"),
                ));
            }
            if self.mode.random() && self.percentage_random[0] != self.percentage_random[1] {
                out.push((
                    None,
                    unsupported("different read and write percentage_random in one job"),
                ));
            }
        }
        if self.dedupe_pct > 0 && !self.refills() && !self.verify {
            out.push((
                None,
                unsupported(
                    "refill_buffers=0 after dedupe_percentage (or buffer_pattern after it in a job that does not read, which turns refill_buffers off in fio): fio then writes the buffers it filled as the job started again and again",
                ),
            ));
        }
        // fio's fixup_options for the dedupe working set (init.c), with its messages
        if self.dedupe_pct > 0 && self.dedupe_working_set {
            if self.size.is_none() {
                out.push((
                    None,
                    Problem::Invalid(
                        "dedupe_mode=working_set: fio's pregenerated dedupe working set requires size to be set".into(),
                    ),
                ));
            } else if self.nrfiles > 1 || self.filename.as_deref().is_some_and(|f| f.contains(':'))
            {
                out.push((
                    None,
                    Problem::Invalid(
                        "dedupe_mode=working_set: fio supports the dedupe working set with a single file per job".into(),
                    ),
                ));
            } else if self.dedupe_pct as u32 + self.dedupe_working_set_pct as u32 > 100 {
                out.push((
                    None,
                    Problem::Invalid(format!(
                        "dedupe_percentage={}: impossible to reach, since dedupe_working_set_percentage={} of size is reserved to the working set (those are unique pages), as fio says",
                        self.dedupe_pct, self.dedupe_working_set_pct
                    )),
                ));
            }
        }
        // fio's fixup_options: a compressible share of 1–99 % refills the buffers unless
        // refill_buffers was given
        // fio stamps buffers filled once when scramble_buffers=1 was given (init.c), also a
        // buffer_pattern's (after it: the pattern's callback turns scrambling off) and zeros
        let filled_once = !self.verify && self.dedupe_pct == 0 && self.compress_pct.is_none();
        if filled_once && self.scramble_set && self.scramble_buffers && !self.refills() {
            let what = match (self.buffer_pattern, self.zero_buffers) {
                (Some(_), _) => Some("buffer_pattern"),
                (None, true) => Some("zero_buffers=1"),
                _ => None,
            };
            if let Some(what) = what {
                out.push((
                    None,
                    unsupported(format!(
                        "scramble_buffers=1 with {what}: fio stamps every 512-byte block of those buffers with its offset and time"
                    )),
                ));
            }
        }
        if let Some(p @ 1..=99) = self.compress_pct {
            if !self.verify && self.dedupe_pct == 0 && self.refill_set && !self.refill_buffers {
                out.push((
                    None,
                    unsupported(format!(
                        "refill_buffers=0 with buffer_compress_percentage={p}: fio then writes the compressible buffers it filled as the job started again and again"
                    )),
                ));
            }
        }
        let rated =
            self.rate_iops.iter().any(Option::is_some) || self.rate.iter().any(Option::is_some);
        for d in 0..3 {
            let over = |cap: Option<u64>, min: Option<u64>| matches!((cap, min), (Some(c), Some(m)) if c < m);
            if over(self.rate[d], self.rate_min[d])
                || over(self.rate_iops[d], self.rate_iops_min[d])
            {
                out.push((
                    None,
                    Problem::Invalid(format!(
                        "the minimum rate of the {} direction exceeds its rate (rate_min above rate, or rate_iops_min above rate_iops): fio refuses the job",
                        ["read", "write", "trim"][d]
                    )),
                ));
            }
        }
        if self.verify && self.mode.writes() && self.non_fatal.classes & 2 != 0 {
            // (fio drops a failed write from its verify list; ssdlab verifies its region)
            out.push((
                None,
                unsupported(
                    "verify of a write job whose continue_on_error goes past write errors (fio verifies only the writes that succeeded)",
                ),
            ));
        }
        if rated && self.rate_poisson && self.thinktime_ns > 0 {
            out.push((None, unsupported("rate_process=poisson with thinktime")));
        }
        if rated && self.read_iolog.is_some() {
            out.push((
                None,
                unsupported("rate or rate_iops while replaying a trace"),
            ));
        }
        let any = |v: &[Option<u64>; 3]| v.iter().any(Option::is_some);
        if (any(&self.rate) && any(&self.rate_iops))
            || (any(&self.rate_min) && any(&self.rate_iops_min))
        {
            out.push((
                None,
                Problem::Invalid(
                    "rate and rate_iops (or rate_min and rate_iops_min) in one job: fio refuses them together (\"rate and rate_iops are mutually exclusive\")".into(),
                ),
            ));
        }
        if self.steady_dur_ns > 0 {
            const S: u64 = 1_000_000_000;
            let (dur, every) = (self.steady_dur_ns, self.steady_interval_ns);
            // fio counts the window in whole seconds (ss_dur / (ss_interval / 1000)).
            if every == 0 || every % S != 0 || dur % every != 0 {
                out.push((
                    None,
                    unsupported(
                        "steadystate_check_interval and steadystate_duration other than whole seconds, the duration a multiple of the interval (fio counts the window in whole seconds)",
                    ),
                ));
            }
            if self.read_iolog.is_some() {
                out.push((None, unsupported("steadystate while replaying a trace")));
            }
        }
        if self.thinktime_ns > 0 || self.thinktime_spin_ns > 0 {
            if self.read_iolog.is_some() {
                out.push((None, unsupported("thinktime while replaying a trace")));
            }
            // fio counts completed I/Os by default and checks after each submission, so at a
            // depth above 1 its think points depend on when completions were reaped; counted
            // at issue they fall every thinktime_blocks I/Os, as here.
            if !self.thinktime_by_issue && self.queue_depth() > 1 && self.thinks_by_count() {
                out.push((
                    None,
                    unsupported(format!(
                        "thinktime at iodepth={} with thinktime_blocks_type=complete (fio's default: its think points then depend on when it reaps completions); give thinktime_blocks_type=issue or iodepth=1",
                        self.queue_depth()
                    )),
                ));
            }
        }
        if self.create_on_open
            && self.mode.reads()
            && self.read_iolog.is_none()
            && !self.engine.file_op().on_path()
        {
            out.push((
                None,
                unsupported("create_on_open with reads (fio would read a file it did not lay out)"),
            ));
        }
        if self.verify && self.verify_no_header && self.verify_pattern.is_none() {
            out.push((
                None,
                Problem::Invalid(
                    "verify=pattern needs verify_pattern (fio 3.33 stops on an assertion without one)"
                        .into(),
                ),
            ));
        }
        if self.verify && self.time_based {
            out.push((
                None,
                unsupported(
                    "verify with time_based (fio alternates write passes and verify passes until the runtime; ssdlab verifies once, after the write phase)",
                ),
            ));
        }
        if self.verify && self.read_iolog.is_some() {
            out.push((None, unsupported("verify while replaying a trace")));
        }
        if self.zonemode.is_none() && self.zonesize > 0 {
            out.push((
                None,
                Problem::Invalid(
                    "zonemode=none and zonesize are not compatible, as fio says (zonemode=strided)"
                        .into(),
                ),
            ));
        }
        if self.zonemode == Some("zbd") {
            out.push((
                None,
                unsupported(
                    "zonemode=zbd: zoned block devices are not modelled by ssdlab (zonemode=strided is)",
                ),
            ));
        } else if self.zonemode.is_some() {
            let why = if self.zonesize == 0 {
                out.push((
                    None,
                    Problem::Invalid(
                        "zonesize must be specified when using zonemode=strided, as fio says"
                            .into(),
                    ),
                ));
                None
            } else if !matches!(self.mode, Mode::Read | Mode::Write) {
                Some("zonemode=strided with anything but rw=read or rw=write (fio's strided zones of random or mixed jobs are not modelled)")
            } else if self.rw_modifier.is_some() {
                Some("zonemode=strided with an rw= modifier (holes or backwards)")
            } else if self.block_sizes().is_some() {
                Some("zonemode=strided with varying block sizes (bssplit, bsrange)")
            } else if self.nrfiles > 1 || self.filename.as_deref().is_some_and(|f| f.contains(':'))
            {
                Some("zonemode=strided on several files (fio moves through zones in the first file only)")
            } else if !matches!(self.engine, Engine::Sync(_) | Engine::Null)
                && (self.loops > 1 || self.io_size.is_some() || self.io_size_pct.is_some())
            {
                Some("zonemode=strided with loops or io_size on an asynchronous engine (fio ends each pass there once size bytes are issued and starts the next at the first zone, which ssdlab does not model)")
            } else if self.read_iolog.is_some() {
                Some("zonemode=strided while replaying a trace")
            } else if self.verify {
                Some("verify with zonemode=strided")
            } else if self.time_based {
                Some("zonemode=strided with time_based")
            } else {
                None
            };
            if let Some(why) = why {
                out.push((None, unsupported(why)));
            }
        }
        if self.fill_device {
            let why = if self.mode != Mode::Write {
                Some("fill_device with anything but rw=write (fio fills the file system first for a job that reads, and sizes a random job's region without end); ssdlab fills it with sequential writes")
            } else if self.nrfiles > 1 || self.filename.as_deref().is_some_and(|f| f.contains(':'))
            {
                Some("fill_device on several files")
            } else if self.engine == Engine::Null {
                Some("fill_device with ioengine=null (nothing to fill)")
            } else if self.engine.file_op() == FileOp::Ftruncate {
                Some("fill_device with ioengine=ftruncate (its writes never fill the file system: fio runs without end)")
            } else if self.offset.is_some() && self.size.is_none() {
                Some("fill_device with offset and no size (fio's region then holds nothing: it does no I/O)")
            } else if self.read_iolog.is_some() {
                Some("fill_device while replaying a trace")
            } else if self.verify && self.do_verify {
                Some("verify in a fill_device job (the full file system ends the job; read it back with do_verify in a job after it, as fio's surface-scan example does)")
            } else {
                None
            };
            if let Some(why) = why {
                out.push((None, unsupported(why)));
            }
        }
        if self.verify && self.engine.file_op() != FileOp::Data {
            out.push((
                None,
                unsupported(format!(
                    "verify with ioengine={}: its I/Os move no data, so there is nothing to verify",
                    self.engine.name()
                )),
            ));
        }
        if let Some(why) = self.path_op_unsupported() {
            out.push((None, unsupported(why)));
        }
        if self.verify && self.mode.reads() && self.mode.writes() {
            out.push((None, unsupported("verify of a mixed read/write job")));
        }
        if let Some(why) = self.verify_loops_unsupported() {
            out.push((None, unsupported(why)));
        }
        // fio's random map takes a random job's sequential stretches too, so where its pass
        // ends — the map full — differs from ssdlab's, whose map holds the random draws only;
        // it matters where a pass follows (percentage_random=90 loops=2 over 64k: fio's first
        // loop does 16 writes, ssdlab's did 18)
        let stretches = self.mode.random()
            && (self.percentage_random.iter().any(|&p| p < 100)
                || self.rw_modifier.is_some_and(|n| n > 1));
        if stretches && !self.norandommap && self.verify && self.mode.writes() {
            // (fio's list of pieces keeps a block a later stretch overwrote, and reads it back
            // expecting the first write: percentage_random=50 size=64k gives error 84)
            out.push((
                None,
                unsupported(
                    "verify of a random job with sequential stretches (percentage_random below 100, rw=randX:N): fio logs its writes in a list and reads back a block a later write overwrote expecting the first write, a verify failure; norandommap runs",
                ),
            ));
        }
        if stretches
            && !self.norandommap
            && (self.loops > 1 || self.io_size.is_some() || self.io_size_pct.is_some())
            && !self.time_based
        {
            out.push((
                None,
                unsupported(
                    "percentage_random below 100 or rw=randX:N with loops or io_size (fio's random map also takes the sequential stretches, so its passes end elsewhere); norandommap runs",
                ),
            ));
        }
        if self.verify && self.do_verify && self.mode.writes() {
            // (io_size above the region: refused where the region is known, in the plan)
            let why = if !self.mode.random()
                && self
                    .rw_modifier
                    .is_some_and(|n| n > 0 && n as u64 > self.bs_of(1).bounds().0)
            {
                Some(format!("verify with rw={}:{} holes wider than a write (fio counts the verify phase's reads toward size and writes and verifies again where a pass wrote less than half of it)", self.mode.name(), self.rw_modifier.unwrap_or(0)))
            } else {
                None
            };
            if let Some(why) = why {
                out.push((None, unsupported(why)));
            }
        }
        if self.verify_backlog > 0 && self.backlog().is_some() && self.mode.writes() {
            let why = if self.rate.iter().chain(&self.rate_iops).any(Option::is_some)
                || self.thinktime_ns > 0
            {
                Some("verify_backlog with rate or thinktime (fio paces its backlog's reads too)")
            } else if self.flow != 0 {
                Some("verify_backlog with flow")
            } else if self.latency_target_ns > 0 {
                Some("verify_backlog with latency_target")
            } else if self.number_ios.is_some() {
                Some("verify_backlog with number_ios (fio counts the backlog's reads in it)")
            } else if self.read_iolog.is_some() {
                Some("verify_backlog while replaying a trace")
            } else {
                None
            };
            if let Some(why) = why {
                out.push((None, unsupported(why)));
            }
        }
        let varying = self.read_iolog.is_none() && self.block_sizes().is_some();
        if varying && self.verify {
            out.push((
                None,
                unsupported("verify with varying block sizes (bssplit, bsrange)"),
            ));
        }
        if self.read_iolog.is_none()
            && self.mode.random()
            && self.mode.reads()
            && self.mode.writes()
            && self.bs_of(0).bounds().0 != self.bs_of(1).bounds().0
        {
            out.push((
                None,
                unsupported(format!(
                    "bs/bssplit/bsrange: a random mixed job whose smallest read size ({}) and smallest write size ({}) differ (fio aligns each direction's offsets to its own; ssdlab has one alignment)",
                    self.bs_of(0).bounds().0,
                    self.bs_of(1).bounds().0
                )),
            ));
        }
        if self.read_iolog.is_none()
            && self.mode.random()
            && matches!(
                self.distribution,
                Distribution::Zipf { .. }
                    | Distribution::Pareto { .. }
                    | Distribution::Normal { .. }
            )
            && self.align() != self.min_block_size()
        {
            out.push((
                None,
                unsupported(format!(
                    "random_distribution={} with blockalign {} other than the smallest block size {} (fio counts its ranks in blocks of the smallest size but places them at blockalign multiples, past the region)",
                    self.distribution.describe(),
                    self.align(),
                    self.min_block_size()
                )),
            ));
        }
        // fio keeps its random map in blocks of the smallest size of all three directions
        // (`min_bs`), used or not: a random job of a larger fixed size ends early, where its
        // draws happen to find no room (randwrite bs=4k,16k: 29 writes of 64, at random).
        let every_op_random = !matches!(self.rw_modifier, Some(n) if n > 1);
        if self.mode.random()
            && !self.mode.trims()
            && every_op_random
            && self.random_map()
            && self.read_iolog.is_none()
        {
            let all_min = self.min_block_size_any();
            let fixed = self.ddirs().iter().all(|&d| {
                let (lo, hi) = self.bs_of(d).bounds();
                lo == hi
            });
            if fixed && all_min < self.min_block_size() {
                out.push((
                    None,
                    unsupported(format!(
                        "rw={} with a block size ({}) larger than another direction's ({all_min}): fio 3.33 keeps its random map in blocks of the smallest size of all three directions and ends such a job early, at random (randwrite bs=4k,16k: 29 writes of 64); give every direction the same size (bs={}), or norandommap",
                        self.mode.name(),
                        self.min_block_size(),
                        self.min_block_size()
                    )),
                ));
            }
        }
        if self.mode.trims() && self.read_iolog.is_none() {
            let m = self.mode.name();
            // fio keeps its random map in blocks of the smallest size of all three directions
            // (`rw_min_bs`), whichever the job uses, and draws blocks of the trim alignment
            // in it: with a smaller read or write size it ends the job early.
            let rw_min = self.min_block_size_any();
            if self.random_map() && rw_min < self.min_block_size() {
                out.push((
                    None,
                    unsupported(format!(
                        "rw={m} with a read or write block size ({rw_min}) smaller than the trim size ({}): fio 3.33 keeps its random map in blocks of the smallest of the three and ends such a job before it has trimmed the region; give bs the trim size for all three, or norandommap",
                        self.min_block_size()
                    )),
                ));
            }
            if self.verify {
                out.push((
                    None,
                    unsupported(format!(
                        "verify with rw={m} (fio's verification of trims is trim_verify_zero)"
                    )),
                ));
            }
            if self.mode.writes() {
                if rated {
                    out.push((
                        None,
                        unsupported(format!(
                            "rate or rate_iops with rw={m} (fio caps trims and writes each)"
                        )),
                    ));
                }
                if self.bs_choice[2].is_some() {
                    out.push((
                        None,
                        unsupported(format!(
                            "rw={m} with varying trim block sizes (bssplit, bsrange): ssdlab writes each trimmed range, with one trim size"
                        )),
                    ));
                }
                if self.mode == Mode::TrimWrite
                    && (self.bs_choice[1].is_some() || self.bs[1] != self.bs[2])
                {
                    out.push((
                        None,
                        unsupported(format!(
                            "rw=trimwrite with a write block size ({}) other than the trim block size ({}): fio then trims and writes at offsets of their own; ssdlab writes each range it trimmed (give bs one size, or the same write and trim sizes)",
                            match self.bs_choice[1] {
                                Some(_) => "varying".to_string(),
                                None => self.bs[1].to_string(),
                            },
                            self.bs[2]
                        )),
                    ));
                }
            }
        }
        out
    }

    /// The direction ssdlab's single block size comes from (a trim mode's: trim, whose
    /// offsets and sizes trimwrite's writes take).
    fn ddir(&self) -> usize {
        if self.mode.trims() {
            2
        } else if self.mode.reads() {
            0
        } else {
            1
        }
    }

    /// The directions whose block sizes the job uses (read 0, write 1, trim 2).
    fn ddirs(&self) -> &'static [usize] {
        if self.mode.trims() {
            return &[2];
        }
        match (self.mode.reads(), self.mode.writes()) {
            (true, true) => &[0, 1],
            (true, false) => &[0],
            _ => &[1],
        }
    }

    /// The block size of direction `d`: fixed, a split or a range.
    pub fn bs_of(&self, d: usize) -> BsChoice {
        self.bs_choice[d]
            .clone()
            .unwrap_or(BsChoice::Fixed(self.bs[d]))
    }

    /// The largest block size of the job (one size for most jobs).
    pub fn block_size(&self) -> u64 {
        self.ddirs()
            .iter()
            .map(|&d| self.bs_of(d).bounds().1)
            .max()
            .unwrap_or(4096)
    }

    /// The smallest block size of all three directions, used by the job or not (fio's
    /// `td_min_bs`: its random map's block, and what a region must hold).
    pub fn min_block_size_any(&self) -> u64 {
        (0..3)
            .map(|d| self.bs_of(d).bounds().0)
            .min()
            .unwrap_or(4096)
    }

    /// The smallest block size of the job (fio's `min_bs`).
    pub fn min_block_size(&self) -> u64 {
        self.ddirs()
            .iter()
            .map(|&d| self.bs_of(d).bounds().0)
            .min()
            .unwrap_or(4096)
    }

    /// The job's block sizes when they vary (a split, a range, a size per direction).
    pub fn block_sizes(&self) -> Option<BlockSizes> {
        let d = self.ddirs();
        let (r, w) = (
            self.bs_of(d[0]),
            self.bs_of(*d.last().expect("a direction")),
        );
        match (&r, &w) {
            (BsChoice::Fixed(a), BsChoice::Fixed(b)) if a == b => None,
            _ => Some(BlockSizes { read: r, write: w }),
        }
    }

    /// The offset alignment (fio's `blockalign`, default the smallest block size).
    pub fn align(&self) -> u64 {
        self.ba[self.ddir()].unwrap_or(self.min_block_size())
    }

    /// fio keeps its random map (every block once per pass) for uniform offsets only, and
    /// turns it off when `blockalign` is not the smallest block size.
    pub fn random_map(&self) -> bool {
        self.mode.random()
            && !self.norandommap
            && self.distribution.is_uniform()
            && self.align() == self.min_block_size()
    }

    /// True when the job runs on a synchronous engine (one I/O at a time).
    pub fn sync_engine(&self) -> bool {
        matches!(self.engine, Engine::Sync(_))
    }

    /// The queue depth the job really has: `iodepth`, or 1 on a synchronous engine or where
    /// fio polls for completions.
    pub fn queue_depth(&self) -> u32 {
        if self.sync_engine() || self.polls() {
            1
        } else {
            self.iodepth
        }
    }

    /// fio's completion polling (`io_in_polling`): with `iodepth_batch_complete_min=0` and
    /// `iodepth_batch_complete_max` 0 or not given, fio reaps a completion after every
    /// submission (spinning until it has one), so the job never has more than one I/O in
    /// flight.
    pub fn polls(&self) -> bool {
        self.iodepth_batch_complete_min == Some(0)
            && self.iodepth_batch_complete_max.unwrap_or(0) == 0
    }

    /// Completions reaped at most at once (fio's `iodepth_batch_complete_max`, raised to the
    /// minimum as fio's `fixup_options` raises it; 1 by default).
    pub fn reap_max(&self) -> u32 {
        self.iodepth_batch_complete_max
            .unwrap_or(0)
            .max(self.iodepth_batch_complete_min.unwrap_or(1))
            .max(1)
    }

    /// fio's batched completions, where they change anything: a full queue waits for
    /// `iodepth_batch_complete_min` completions and drains to `iodepth_low` (fio's
    /// `wait_for_completions`). fio's null engine, whose queue is never full when its
    /// submission batch is below `iodepth`, drains nothing then.
    pub fn completions(&self) -> Option<ssdlab_workload::CompletionBatch> {
        let depth = self.queue_depth();
        if depth <= 1 {
            // one I/O in flight: each completion is a batch, and the queue drains to 0
            return None;
        }
        let min = self.iodepth_batch_complete_min.unwrap_or(1).max(1);
        let fills = !matches!(self.engine, Engine::Null)
            || self.iodepth_batch.unwrap_or(1).max(1) >= self.iodepth;
        let low = match self.iodepth_low {
            Some(l) if l > 0 && l < self.iodepth && fills => l,
            _ => depth,
        };
        (min > 1 || low < depth).then_some(ssdlab_workload::CompletionBatch { min, low })
    }

    /// fio's steady-state criterion, when `steadystate_duration` asks for one.
    pub fn steady_criterion(&self) -> Option<ssdlab_workload::SteadyCriterion> {
        let (metric, slope, limit, pct) = self.steady;
        (self.steady_dur_ns > 0).then_some(ssdlab_workload::SteadyCriterion {
            metric,
            slope,
            limit,
            pct,
            duration_ns: self.steady_dur_ns,
            ramp_ns: self.steady_ramp_ns,
            interval_ns: self.steady_interval_ns,
        })
    }

    /// True when the think time comes after a count of I/Os: always, except that fio counts
    /// none with `thinktime_iotime` unless `thinktime_blocks` is also given.
    fn thinks_by_count(&self) -> bool {
        self.thinktime_iotime_ns == 0 || self.thinktime_blocks_set
    }

    /// fio's latency target, when `latency_target` is set.
    pub fn latency_target(&self) -> Option<ssdlab_workload::LatencyTarget> {
        (self.latency_target_ns > 0).then_some(ssdlab_workload::LatencyTarget {
            target_ns: self.latency_target_ns,
            window_ns: self.latency_window_ns,
            percentile: self.latency_percentile,
            keep_running: self.latency_run,
            max_depth: self.iodepth.max(1),
        })
    }

    /// fio's minimum rates, when any is set.
    pub fn min_rate(&self) -> Option<ssdlab_workload::MinRate> {
        let bytes = self.rate_min.map(|x| x.unwrap_or(0));
        let ios = self.rate_iops_min.map(|x| x.unwrap_or(0));
        (bytes.iter().chain(&ios).any(|&n| n > 0)).then_some(ssdlab_workload::MinRate {
            bytes_per_s: bytes,
            ios_per_s: ios,
            cycle_ns: self.rate_cycle_ms * 1_000_000,
        })
    }

    /// fio's I/Os per second of each direction's rate for its Poisson process: the rate over
    /// the direction's smallest block size (fio's `usec_for_io`), when any rate is set.
    pub fn rate_poisson(&self) -> Option<[u64; 3]> {
        let bps = self.rate_bps();
        bps.iter()
            .any(|&b| b > 0)
            .then(|| std::array::from_fn(|d| bps[d] / self.bs_of(d).bounds().0.max(1)))
    }

    /// Each clone's rate per direction in bytes per second, as fio's `__setup_rate` makes it:
    /// `rate`, else `rate_iops` times the direction's smallest block size; 0 = not capped.
    pub fn rate_bps(&self) -> [u64; 3] {
        std::array::from_fn(|d| match (self.rate[d], self.rate_iops[d]) {
            (Some(b), _) => b,
            (None, Some(n)) => n.saturating_mul(self.bs_of(d).bounds().0),
            (None, None) => 0,
        })
    }

    /// The data pattern of writes. Verified writes carry `verify_pattern`, else random filler
    /// after their headers, as fio fills them (`fill_verify_pattern`), whatever the buffer
    /// options say.
    pub fn pattern(&self) -> Pattern {
        if self.verify {
            // fio's verify fill (verify.c __fill_buffer): the write as one piece of the
            // compressible share, under the headers
            return match (self.verify_pattern, self.compress_pct) {
                (Some(b), _) => Pattern::Bytes(b),
                (None, Some(p @ 1..=99)) => {
                    Chunked::pattern(p, u32::MAX as u64, self.buffer_pattern)
                }
                _ => Pattern::Random,
            };
        }
        // fio's fill_io_buffer: compressible (or deduplicable) buffers first, in pieces of the
        // smallest write or buffer_compress_chunk, the compressible part of each piece filled
        // with buffer_pattern (or zeros); then buffer_pattern, zero_buffers (which a 100 %
        // share turns on, fixup_options), refilled random data, scrambled, once filled
        let compress = self.compress_pct.filter(|&p| p > 0 && p < 100);
        let chunked = |p| Chunked::pattern(p, self.compress_piece(), self.buffer_pattern);
        if self.dedupe_pct > 0 {
            // (random but for the compressible share, whatever zero_buffers says; 100 % is
            // zero_buffers, which dedupe ignores)
            return compress.map_or(Pattern::Random, chunked);
        }
        if let Some(p) = compress {
            chunked(p)
        } else if let Some(b) = self.buffer_pattern {
            match b.as_slice() {
                [one] => Pattern::Repeat(*one),
                _ => Pattern::Bytes(b),
            }
        } else if self.zero_buffers || self.compress_pct == Some(100) {
            // (a 100 % share is zero_buffers, and never scrambled: io_u.c scrambles no buffer
            // of a job given buffer_compress_percentage)
            Pattern::Zeros
        } else if self.refill_buffers {
            Pattern::Random
        } else if self.scramble_buffers && self.compress_pct.is_none() {
            // fio's default: the buffers filled once, every write stamped (never in a job
            // given buffer_compress_percentage, even =0: its callback sets TD_F_COMPRESS)
            Pattern::Scrambled
        } else {
            Pattern::Once
        }
    }

    /// What fio writes when it lays out a file for the job (filesetup.c `extend_file`): writes
    /// of the largest write size, each filled as `fill_io_buffer` fills a buffer of that size
    /// (verification aside) — compressible pieces, `buffer_pattern`, zeros — or `None` for
    /// pseudo-random data.
    pub fn layout_data(&self) -> Option<ssdlab_target::LayoutData> {
        let write = self.bs_of(1).bounds().1.max(1);
        let piece = match self.compress_chunk {
            0 => write,
            c => c.min(write),
        };
        let pattern = match (self.compress_pct, self.buffer_pattern) {
            (Some(p @ 1..=99), _) => Chunked::pattern(p, piece, self.buffer_pattern),
            // (with dedupe, fio's fill is random but for a compressible share)
            _ if self.dedupe_pct > 0 => return None,
            (_, Some(b)) => match b.as_slice() {
                [one] => Pattern::Repeat(*one),
                _ => Pattern::Bytes(b),
            },
            _ if self.zero_buffers || self.compress_pct == Some(100) => Pattern::Zeros,
            _ => return None,
        };
        Some(ssdlab_target::LayoutData { pattern, write })
    }

    /// Whether fio refills the write buffers: `refill_buffers` (or dedupe's, or buffer_pattern's
    /// callback), or a compressible share of 1–99 % when `refill_buffers` was not given
    /// (fixup_options).
    pub fn refills(&self) -> bool {
        self.refill_buffers || (matches!(self.compress_pct, Some(1..=99)) && !self.refill_set)
    }

    /// fio's `verify_backlog` with `verify_backlog_batch`, where the job verifies (fio's verify
    /// phase on; its pieces are logged only then). Without `verify_backlog` the pieces are
    /// logged all the same (`every` 0): fio's verify phase reads back what was written.
    pub fn backlog(&self) -> Option<ssdlab_workload::VerifyBacklog> {
        (self.verify && self.do_verify).then_some(ssdlab_workload::VerifyBacklog {
            every: self.verify_backlog,
            batch: match self.verify_backlog_batch {
                0 => self.verify_backlog,
                b => b as u64,
            },
        })
    }

    /// The pieces fio fills compressible and deduplicable buffers in (`fill_io_buffer`): the
    /// smallest write, or `buffer_compress_chunk` when that is shorter and not 0.
    pub fn compress_piece(&self) -> u64 {
        let min_write = self.bs_of(1).bounds().0.max(1);
        match self.compress_chunk {
            0 => min_write,
            c => c.min(min_write),
        }
    }

    /// fio's deduplicable buffers for a clone whose region is `span` bytes (the working set
    /// is `dedupe_working_set_percentage` of it, in blocks of the smallest write: fio's
    /// `num_unique_pages`), or `None` (no `dedupe_percentage`, or verified writes, which carry
    /// their own data in fio too). The thread and the run's threads (`dedupe_global`) are set
    /// by the plan, which numbers the threads.
    pub fn dedupe(&self, span: u64) -> Option<Dedupe> {
        if self.dedupe_pct == 0 || self.verify {
            return None;
        }
        // (fio's pages are of the smallest write, each made of pieces of `chunk`)
        let (page, chunk) = (self.bs_of(1).bounds().0.max(1), self.compress_piece());
        Some(Dedupe {
            percentage: self.dedupe_pct,
            mode: if self.dedupe_working_set {
                DedupeMode::WorkingSet {
                    pages: (span as u128 * self.dedupe_working_set_pct as u128 / 100 / page as u128)
                        as u64,
                }
            } else {
                DedupeMode::Repeat
            },
            chunk,
            page_pieces: page / chunk,
            seed: 0,
            thread: 0,
            global_threads: None,
            // (fio's init_io_u fills its iodepth buffers, of td_max_bs, as the thread starts)
            setup_buffers: self.iodepth,
            setup_len: (0..3)
                .map(|d| self.bs_of(d).bounds().1)
                .max()
                .unwrap_or(chunk),
        })
    }

    /// The trace this job replays, with its replay options.
    pub fn replay(&self) -> Option<ReplaySpec> {
        let path = self.read_iolog.as_ref()?;
        let mut r = ReplaySpec::new(path);
        r.no_stall = self.replay_no_stall;
        r.time_scale = self.replay_time_scale;
        r.align = self.replay_align;
        r.scale = self.replay_scale;
        r.skip = self.replay_skip;
        Some(r)
    }

    /// Stop conditions for `clones` workers on a region of `span` bytes (fio: a job ends when
    /// it has done `io_size` (default `size`) bytes `loops` times, or `number_ios` I/Os
    /// `loops` times (`io_bytes_exceeded`, `exceeds_number_ios`), or at `runtime`;
    /// `time_based` runs for `runtime` whatever the size). Every clone does its own share, so
    /// the budgets are the clones' together.
    pub fn stop(&self, span: u64, clones: u32) -> StopCondition {
        let c = clones.max(1) as u64;
        let mut stop = StopCondition {
            time_ns: self.runtime_ns.filter(|&t| t > 0),
            ..Default::default()
        };
        if !self.time_based || self.runtime_ns.is_none() {
            let per = match (self.io_size, self.io_size_pct) {
                (Some(b), _) => b,
                (None, Some(p)) => ((span as f64) * p / 100.0) as u64,
                (None, None) => span,
            }
            .saturating_mul(self.loops);
            stop.bytes = Some(per.saturating_mul(c)).filter(|&b| b > 0);
        }
        if let Some(n) = self.number_ios.filter(|&n| n > 0) {
            stop.ios = Some(n.saturating_mul(self.loops.max(1)).saturating_mul(c));
        }
        stop
    }

    /// What the job's I/Os do to its files, with the `filestat` engine's `stat_type`.
    pub fn file_op(&self) -> FileOp {
        match self.engine.file_op() {
            FileOp::Stat(_) => FileOp::Stat(self.stat_call),
            op => op,
        }
    }

    /// fio's `filestat`, `filedelete` and `filecreate` time one operation per file, when the
    /// file is opened, and count each of its blocks as an I/O that takes no time (the engines
    /// have no statistics of their own: `FIO_NOSTATS`); ssdlab times each I/O as one operation.
    /// The two agree where each file is one block, as in fio's examples (checked once the
    /// files' sizes are known, in the plan). Why this job is not run so (`None`: it is, or it
    /// is not such a job).
    pub fn path_op_unsupported(&self) -> Option<String> {
        if !self.engine.file_op().on_path() {
            return None;
        }
        let e = self.engine.name();
        if self.mode.trims() {
            return Some(format!(
                "rw={} with ioengine={e} (fio's trims of it take no time and are not timed)",
                self.mode.name()
            ));
        }
        if self.mode.reads() && self.mode.writes() {
            return Some(format!(
                "rw={} with ioengine={e} (fio times every operation as a read, and counts the blocks by direction)",
                self.mode.name()
            ));
        }
        let d = if self.mode.reads() { 0 } else { 1 };
        if self.bs_choice[d].is_some() {
            return Some(format!(
                "bsrange or bssplit with ioengine={e} (each file must be one block)"
            ));
        }
        None
    }

    /// A verifying write job of several `loops` reads back after each loop (fio's
    /// `thread_main`: `do_io`, then `do_verify`, once a loop); ssdlab runs each loop and its
    /// verify phase in turn. Why it cannot for this job (`None`: it can, or the job is not one):
    /// what fio counts or paces over the loops and their verify phases together.
    pub fn verify_loops_unsupported(&self) -> Option<String> {
        if !(self.verify && self.do_verify && self.mode.writes() && self.loops > 1) {
            return None;
        }
        let why = if self.runtime_ns.is_some() {
            "runtime (fio's runtime spans the loops and their verify phases)"
        } else if self.number_ios.is_some() {
            "number_ios (fio counts the verify phases' reads in it)"
        } else if self.ramp_ns > 0 {
            "ramp_time"
        } else if self.rate.iter().chain(&self.rate_iops).any(Option::is_some) {
            "rate (fio's schedule runs on across the loops)"
        } else if self.thinktime_ns > 0 {
            "thinktime"
        } else if self.flow != 0 {
            "flow"
        } else if self.steady_dur_ns > 0 {
            "steadystate"
        } else if [&self.bw_log, &self.iops_log, &self.lat_log, &self.hist_log]
            .iter()
            .any(|l| l.is_some())
        {
            "write_bw_log, write_iops_log, write_lat_log or write_hist_log"
        } else {
            return None;
        };
        Some(format!("verify with loops={} and {why}", self.loops))
    }

    /// The ssdlab workload of this job on the region `[offset, offset+span)` with `clones`
    /// workers sharing it. `seed` replaces `randseed` (for `randrepeat=0`).
    /// The start delay of the clone whose seed is `seed`: `startdelay`, or a time drawn from
    /// its range with the clone's seed (fio draws each clone's from the range too, with its
    /// own random state: the same range, not the same draws).
    pub fn start_delay(&self, seed: u64) -> u64 {
        match self.start_delay_high_ns {
            Some(hi) => {
                let lo = self.start_delay_ns;
                // whole microseconds, as fio's
                let us = ssdlab_workload::rng::Rng::new(seed ^ 0x7374_6172_7464_6c79)
                    .below((hi - lo) / 1000 + 1);
                lo + us * 1000
            }
            None => self.start_delay_ns,
        }
    }

    pub fn workload(&self, offset: u64, span: u64, clones: u32, seed: u64) -> WorkloadSpec {
        let mode = self.mode;
        let read_pct = match (mode.reads(), mode.writes()) {
            (true, false) => 100,
            // writes, and trims (made as writes)
            (false, _) => 0,
            _ => self.rwmixread,
        };
        let rw = match (mode, read_pct) {
            // rwmixread=100/0 in a mixed mode reads (writes) only.
            (Mode::Rw, 100) => RwMode::Read,
            (Mode::Rw, 0) => RwMode::Write,
            (Mode::RandRw, 100) => RwMode::Randread,
            (Mode::RandRw, 0) => RwMode::Randwrite,
            (m, _) => m.rw(),
        };
        let random_pct = if mode.random() {
            self.percentage_random[self.ddir()]
        } else {
            0
        };
        let (random_every, seq_skip, seq_back) = match self.rw_modifier {
            Some(n) if mode.random() => (n as u32, 0, 0),
            Some(n) if n < 0 => (1, 0, n.unsigned_abs()),
            Some(n) => (1, n as u64, 0),
            None => (1, 0, 0),
        };
        let mut stop = self.stop(span, clones);
        if mode.trim() == TrimMode::ThenWrite {
            // fio's trimwrite trims and writes every byte, so it allows twice the bytes and
            // twice number_ios (`do_io`).
            stop.bytes = stop.bytes.map(|b| b.saturating_mul(2));
            stop.ios = stop.ios.map(|n| n.saturating_mul(2));
        }
        WorkloadSpec {
            rw,
            read_pct,
            random_pct,
            bs: self.block_size(),
            align: self.align().min(self.block_size()),
            offset,
            span: Some(span),
            qd: self.queue_depth(),
            jobs: clones.max(1),
            stop,
            ramp_ns: self.ramp_ns,
            start_delay_ns: self.start_delay(seed),
            steady: self.steady_criterion(),
            // (a read job checking a pattern needs it too)
            pattern: if mode.writes() || (self.verify && self.verify_pattern.is_some()) {
                self.pattern()
            } else {
                Pattern::Random
            },
            refill_after_read: self.refills(),
            dedupe: self.dedupe(span).filter(|_| mode.writes()),
            seed,
            verify: self.verify && !self.verify_no_header,
            verify_by_pattern: self.verify && self.verify_no_header,
            verify_fatal: self.verify_fatal,
            verify_backlog: self.backlog().filter(|_| mode.writes()),
            verify_headers_required: self.verify && !self.verify_no_header,
            fill_device: self.fill_device,
            max_latency_ns: self
                .max_latency_ns
                .iter()
                .any(|&n| n > 0)
                .then_some(self.max_latency_ns),
            // (fio runs a job on its nodes' CPUs after it has set cpus_allowed)
            cpus_allowed: self.numa_cpus.clone().or(self.cpus_allowed.clone()),
            cpus_split: self.cpus_split && self.numa_cpus.is_none(),
            random_map: self.random_map(),
            random_every,
            seq_skip,
            seq_back,
            strided: (self.zonemode == Some("strided")).then_some(ssdlab_workload::Strided {
                size: self.zonesize,
                // (fio: zonerange defaults to zonesize)
                range: if self.zonerange > 0 {
                    self.zonerange
                } else {
                    self.zonesize
                },
                skip: self.zoneskip,
            }),
            replay: None,
            rate_bps: self.rate_bps(),
            rate_ignore_think: self.rate_ignore_think,
            rate_poisson: self.rate_poisson().filter(|_| self.rate_poisson),
            rate_offload: self.submit_offload,
            // fio spins thinktime_spin of the think time and sleeps the rest: one stall.
            think_ns: self.thinktime_ns.max(self.thinktime_spin_ns),
            think_every: if self.thinks_by_count() {
                self.thinktime_blocks
            } else {
                u32::MAX
            },
            think_iotime_ns: self.thinktime_iotime_ns,
            min_rate: self.min_rate(),
            latency_target: self.latency_target(),
            completions: self.completions(),
            // fio's keep_running: unless time_based, the job ends once its files are done
            // `loops` times, even short of its bytes (holes: `rw=write:8k`); with io_size it
            // then goes on, pass by pass, while it has done less than io_size
            passes: (!(self.time_based && self.runtime_ns.is_some())).then_some(self.loops),
            more_passes_below: self
                .io_size
                .filter(|_| !(self.time_based && self.runtime_ns.is_some())),
            // fio's clear_io_state reseeds at each loop's start with randrepeat (a time-based
            // job wraps inside its one loop, without)
            repeat_passes: self.randrepeat && !self.time_based,
            block_sizes: self.block_sizes(),
            distribution: if mode.random() {
                self.distribution.clone()
            } else {
                Distribution::Uniform
            },
            files: None,
            trim: mode.trim(),
        }
    }

    /// The ssdlab workload of a replay of a trace of shape `shape` (replayed from `offset`).
    pub fn replay_workload(
        &self,
        shape: &TraceShape,
        replay: ReplaySpec,
        offset: u64,
        clones: u32,
        seed: u64,
    ) -> WorkloadSpec {
        let read_pct = shape.read_pct();
        let rw = match read_pct {
            100 => RwMode::Randread,
            0 => RwMode::Randwrite,
            _ => RwMode::Randrw,
        };
        let bs = shape.max_len.max(1);
        let mut stop = StopCondition {
            time_ns: self.runtime_ns.filter(|&t| t > 0),
            ..Default::default()
        };
        if let Some(n) = self.number_ios.filter(|&n| n > 0) {
            stop.ios = Some(n.saturating_mul(clones.max(1) as u64));
        }
        WorkloadSpec {
            rw,
            read_pct,
            random_pct: 100,
            bs,
            align: shape.align.min(bs).max(1),
            offset,
            span: Some(shape.end.max(bs)),
            qd: self.queue_depth(),
            jobs: clones.max(1),
            stop,
            ramp_ns: self.ramp_ns,
            start_delay_ns: self.start_delay(seed),
            steady: self.steady_criterion(),
            pattern: self.pattern(),
            refill_after_read: self.refills(),
            dedupe: self.dedupe(shape.end.max(bs)),
            seed,
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
            seq_back: 0,
            strided: None,
            replay: Some(replay),
            rate_bps: [0; 3],
            rate_ignore_think: false,
            rate_poisson: None,
            rate_offload: false,
            think_ns: 0,
            think_every: 0,
            think_iotime_ns: 0,
            // fio checks its minimum rates while it replays, as while it generates
            min_rate: self.min_rate(),
            latency_target: self.latency_target(),
            completions: self.completions(),
            passes: None,
            more_passes_below: None,
            repeat_passes: false,
            block_sizes: None,
            distribution: Distribution::Uniform,
            files: None,
            trim: TrimMode::None,
        }
    }
}

/// A `buffer_pattern` or `verify_pattern` value: fio's pattern syntax, up to
/// [`ssdlab_workload::PatternBytes::MAX`] bytes.
fn data_pattern(key: &str, v: &str) -> Result<ssdlab_workload::PatternBytes, Problem> {
    let bytes = value::fio_pattern(v.trim()).map_err(|e| match e {
        value::PatternProblem::Invalid(s) => Problem::Invalid(format!("{key}={s}")),
        value::PatternProblem::Unsupported(s) => Problem::Unsupported(format!("{key}={s}")),
    })?;
    ssdlab_workload::PatternBytes::new(&bytes).ok_or_else(|| {
        Problem::Unsupported(format!(
            "{key}: a pattern of {} bytes (ssdlab holds patterns of up to {})",
            bytes.len(),
            ssdlab_workload::PatternBytes::MAX
        ))
    })
}

/// fio's `random_distribution=` (`str_random_distribution_cb`, `parse_zoned_distribution`).
fn distribution(s: &str, kb: u64) -> Result<Distribution, String> {
    let s = s.trim();
    let (kind, rest) = match s.split_once(':') {
        Some((k, r)) => (k, Some(r)),
        None => (s, None),
    };
    // `value[:center]` of zipf, pareto and normal.
    let param = |default: f64| -> Result<(f64, Option<f64>), String> {
        let Some(r) = rest else {
            return Ok((default, None));
        };
        let (v, c) = match r.split_once(':') {
            Some((v, c)) => (v, Some(c)),
            None => (r, None),
        };
        let num = |x: &str| {
            x.trim()
                .parse::<f64>()
                .map_err(|_| format!("random_distribution={s}: '{x}' is not a number"))
        };
        let center = match c {
            Some(c) => {
                let c = num(c)?;
                if !(0.0..=1.0).contains(&c) {
                    return Err(format!(
                        "random_distribution={s}: the center must be 0 to 1, as in fio"
                    ));
                }
                Some(c)
            }
            None => None,
        };
        Ok((num(v)?, center))
    };
    let zones = |abs: bool| -> Result<[Vec<Zone>; 2], String> {
        let text = rest.unwrap_or("");
        let mut out: [Vec<Zone>; 2] = Default::default();
        for (i, d) in value::per_ddir_split(text).iter().take(2).enumerate() {
            let list = if abs {
                value::split_list(d, value::int, |b| {
                    value::bytes(b, kb).map(|v| (v > 0).then_some(v))
                })?
            } else {
                value::split_list(d, value::int, value::split_pct)?
                    .into_iter()
                    .map(|(a, b)| (a, b.map(|p| p as u64)))
                    .collect()
            };
            if list.is_empty() {
                continue;
            }
            let access: u64 = list.iter().map(|z| z.0).sum();
            let given: u64 = list.iter().filter_map(|z| z.1).sum();
            if access != 100 || (!abs && given > 100) {
                return Err(format!(
                    "random_distribution={s}: the access percentages must add up to 100 (and the sizes to at most 100), as fio requires"
                ));
            }
            let missing = list.iter().filter(|z| z.1.is_none()).count() as u64;
            let share = if missing > 0 && !abs {
                (100 - given) / missing
            } else {
                0
            };
            out[i] = list
                .into_iter()
                .map(|(a, b)| Zone {
                    access_pct: a as u32,
                    size: b.unwrap_or(share),
                })
                .collect();
        }
        Ok(out)
    };
    Ok(match kind {
        "random" => Distribution::Uniform,
        "zipf" => {
            let (theta, center) = param(1.1)?;
            if theta == 1.0 {
                return Err(format!(
                    "random_distribution={s}: zipf theta must be different from 1.0, as in fio"
                ));
            }
            Distribution::Zipf { theta, center }
        }
        "pareto" => {
            let (h, center) = param(0.2)?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!(
                    "random_distribution={s}: pareto h must be between 0 and 1, as in fio"
                ));
            }
            Distribution::Pareto { h, center }
        }
        "normal" => {
            let (dev, center) = param(0.0)?;
            if !(0.0..100.0).contains(&dev) {
                return Err(format!(
                    "random_distribution={s}: the deviation must be 0 to below 100 (%), as in fio"
                ));
            }
            Distribution::Normal { dev, center }
        }
        "zoned" => {
            let [read, write] = zones(false)?;
            Distribution::Zoned { read, write }
        }
        "zoned_abs" => {
            let [read, write] = zones(true)?;
            Distribution::ZonedAbs { read, write }
        }
        o => {
            return Err(format!(
                "random_distribution={o}: random, zipf, pareto, normal, zoned or zoned_abs"
            ))
        }
    })
}

/// fio's `file_service_type=` (`str_fst_cb`): `roundrobin`, `sequential` or `random`, with
/// `:N` I/Os per switch; fio's non-uniform choices (`zipf`, `pareto`, `normal`, `gauss`) are
/// refused.
fn file_service(s: &str) -> Result<FileService, Problem> {
    let (kind, n) = match s.split_once(':') {
        Some((k, n)) => (k.trim(), Some(n.trim())),
        None => (s.trim(), None),
    };
    let nr = || -> Result<u32, Problem> {
        match n {
            None => Ok(1),
            Some(n) => n.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| {
                Problem::Invalid(format!(
                    "file_service_type={s}: {n} is not a number of I/Os (1 or more)"
                ))
            }),
        }
    };
    match kind {
        "roundrobin" => Ok(FileService::RoundRobin(nr()?)),
        "sequential" => Ok(FileService::Sequential),
        "random" => Ok(FileService::Random(nr()?)),
        "zipf" | "pareto" | "normal" | "gauss" => Err(unsupported(format!(
            "file_service_type={s}: fio's {kind} choice of files (ssdlab switches files round robin, sequentially or uniformly at random)"
        ))),
        _ => Err(Problem::Invalid(format!(
            "file_service_type={s}: roundrobin, sequential, random, zipf, pareto, normal or gauss"
        ))),
    }
}

/// fio's `:`-separated file lists (`\:` escapes a colon).
pub fn split_filenames(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|f| !f.is_empty());
    out
}

/// A job with its settings, its place in the run and in the report.
#[derive(Debug, Clone)]
pub struct Job {
    /// The job's name (its section, or its own `name=`).
    pub name: String,
    /// Its section's name, after which fio names its files (`JOB.CLONE.FILENO`,
    /// `filename_format`'s `$jobname`) even where `name=` renames the job.
    pub section: String,
    pub loc: Loc,
    pub settings: Settings,
    /// The job's own options as written (fio's JSON "job options").
    pub options: Vec<(String, String)>,
    /// Jobs of one wave start together; a wave starts when the one before has finished.
    pub wave: usize,
    /// fio's reporting group (`groupid`).
    pub group: u32,
}

/// A key that is refused (or, ignored, listed).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Issue {
    pub key: String,
    pub loc: Option<Loc>,
    pub why: String,
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.loc {
            // A line no option name could be (`root:$6$…` from `include /etc/shadow`): the file
            // is not a job file, and what it holds is not repeated on the terminal.
            Some(l) if self.why == UNKNOWN_OPTION && !looks_like_a_key(&self.key) => {
                write!(
                    f,
                    "{l}: not an fio option, section or comment (the line is not shown: the \
                     file does not read as a job file)"
                )
            }
            Some(l) => {
                write!(
                    f,
                    "{} ({l}): {}",
                    short(&self.key, 40),
                    short(&self.why, 200)
                )?;
                // The closest option fio knows, worked out only for the issues shown.
                if self.why == UNKNOWN_OPTION {
                    if let Some(s) = options::suggest(&self.key) {
                        write!(f, "; did you mean {s}?")?;
                    }
                }
                Ok(())
            }
            None => write!(f, "{}", short(&self.why, 200)),
        }
    }
}

/// Whether `key` could be the name of an option (letters, digits, `_`, `-`, `.`), right or
/// mistyped.
fn looks_like_a_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// [`short`], for the messages of other modules.
pub(crate) fn short_text(s: &str, max: usize) -> String {
    short(s, max)
}

/// Text from a file as an error shows it: control characters escaped, at most `max`
/// characters (then "…"), so a wrong file given as a job file cannot flood the terminal.
fn short(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The jobs of a command.
#[derive(Debug, Clone)]
pub struct JobSet {
    pub jobs: Vec<Job>,
    /// Options of the global sections, as written (fio's JSON "global options").
    pub global_options: Vec<(String, String)>,
    /// What ssdlab cannot honour: refused unless ignored.
    pub unsupported: Vec<Issue>,
    /// Things a user should know (how wait_for is run, engines replaced, …).
    pub notes: Vec<String>,
}

/// Why the jobs cannot run: every bad value and unknown key, with its line (shown: the first
/// three, then how many more, so a wrong file given as a job file is not echoed whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", show_issues(.0, .1))]
pub struct JobError(pub Vec<Issue>, pub usize);

/// Why a key fio does not know is refused (the closest option is added when it is shown).
const UNKNOWN_OPTION: &str = "unknown option";

/// Most issues kept (and compared, to say each once): a file with 100,000 wrong lines is
/// refused in about the time of a good one.
const MAX_ISSUES: usize = 1000;

/// The first three issues, then how many more. Of unknown options in one file only the first
/// is shown: a file that is not a job file at all (`include /etc/shadow`) is quoted by one
/// line at most.
fn show_issues(issues: &[Issue], not_kept: &usize) -> String {
    const SHOWN: usize = 3;
    let file_of = |i: &Issue| i.loc.as_ref().map(|l| l.file.clone());
    let mut shown: Vec<&Issue> = Vec::new();
    for i in issues {
        if shown.len() == SHOWN {
            break;
        }
        let unknown = i.why.starts_with("unknown option");
        if unknown
            && shown
                .iter()
                .any(|s| s.why.starts_with("unknown option") && file_of(s) == file_of(i))
        {
            continue;
        }
        shown.push(i);
    }
    let mut s = shown
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("; ");
    let more = issues.len() - shown.len() + not_kept;
    if more > 0 {
        s.push_str(&format!("; and {more} more"));
    }
    s
}

/// Resolves sections (command-line sections first, then job files in order) into jobs.
pub fn resolve(sections: &[Section]) -> Result<JobSet, JobError> {
    let mut errors: Vec<Issue> = Vec::new();
    let mut unsupported: Vec<Issue> = Vec::new();
    // Issues past the most kept are counted (errors) or dropped (the unsupported, which are
    // named: the first thousand say enough).
    // (each once: a global option is checked again in every job after it)
    let mut not_kept = 0usize;
    let push = |list: &mut Vec<Issue>, i: Issue| {
        if list.len() < MAX_ISSUES && !list.contains(&i) {
            list.push(i);
        }
    };
    let mut seen_error: std::collections::HashSet<Issue> = std::collections::HashSet::new();
    let mut push_error = |list: &mut Vec<Issue>, i: Issue| {
        if !seen_error.insert(i.clone()) {
            // said already
        } else if list.len() >= MAX_ISSUES {
            not_kept += 1;
        } else {
            list.push(i);
        }
    };
    let mut defaults = Settings::default();
    let mut global_options = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut file: Option<usize> = None;
    let mut stonewall_next = false;
    for sec in sections {
        if file != Some(sec.file_index) {
            // A job file after the first starts from fio's defaults, behind a stonewall.
            if let Some(prev) = file {
                if sec.file_index != usize::MAX && (prev != usize::MAX || sec.file_index > 0) {
                    defaults = Settings::default();
                    stonewall_next = sec.file_index > 0;
                }
            }
            file = Some(sec.file_index);
        }
        let mut target = if sec.global {
            std::mem::take(&mut defaults)
        } else {
            let mut s = defaults.clone();
            s.name = None;
            s
        };
        let mut own = Vec::new();
        let engine_opts_before = target.engine_opts.len();
        // fio parses a job file's section in the order of its options' priorities (a stable
        // sort, `sort_options`): kb_base first, so it applies to every size of the section
        // wherever it is written; filename last. Command-line options keep their order.
        let mut opts: Vec<&Opt> = sec.opts.iter().collect();
        if sec.file_index != usize::MAX {
            opts.sort_by_key(|o| -options::parse_priority(&o.key));
        }
        for o in opts {
            // A value that is wrong because a variable was not set says so.
            let unset = |why: String| {
                if o.unset.is_empty() {
                    why
                } else {
                    let vars: Vec<String> = o.unset.iter().map(|v| format!("${{{v}}}")).collect();
                    format!(
                        "{why} ({} not set in the environment: an empty string, as in fio)",
                        vars.join(", ")
                    )
                }
            };
            match target.apply(o).map_err(|p| match p {
                Problem::Invalid(w) => Problem::Invalid(unset(w)),
                Problem::Unsupported(w) => Problem::Unsupported(unset(w)),
            }) {
                Ok(()) => {
                    let canonical = options::canonical(&o.key).to_string();
                    // the last one written counts: an option set again replaces its record
                    target.written.retain(|w| w.canonical != canonical);
                    target.written.push(Written {
                        key: o.key.clone(),
                        canonical,
                        value: o.value.clone(),
                        loc: o.loc.clone(),
                    });
                }
                Err(Problem::Invalid(why)) => push_error(
                    &mut errors,
                    Issue {
                        key: o.key.clone(),
                        loc: Some(o.loc.clone()),
                        why,
                    },
                ),
                Err(Problem::Unsupported(why)) => {
                    let i = Issue {
                        key: o.key.clone(),
                        loc: Some(o.loc.clone()),
                        why,
                    };
                    push(&mut target.ignored, i.clone());
                    push(&mut unsupported, i);
                }
            }
            // (fio's JSON names an option by its name, not the alias given: `bs`, not
            // `blocksize`)
            own.push((
                options::canonical(&o.key).to_string(),
                o.value.clone().unwrap_or_default(),
            ));
        }
        let mut checks = target.engine_check(engine_opts_before);
        if !sec.global {
            checks.extend(target.finish());
        }
        for (at, p) in checks {
            let (key, loc) = match at {
                Some((k, l)) => (k, l),
                None => (format!("[{}]", sec.name), sec.loc.clone()),
            };
            let issue = |why| Issue {
                key: key.clone(),
                loc: Some(loc.clone()),
                why,
            };
            match p {
                Problem::Invalid(w) => push_error(&mut errors, issue(w)),
                Problem::Unsupported(w) => {
                    push(&mut target.ignored, issue(w.clone()));
                    push(&mut unsupported, issue(w));
                }
            }
        }
        if sec.global {
            // A global `name` does not rename the jobs after it.
            target.name = None;
            defaults = target;
            global_options.extend(own.into_iter().filter(|(k, _)| k != "name"));
            continue;
        }
        if stonewall_next {
            target.stonewall = true;
            stonewall_next = false;
        }
        let name = target.name.clone().unwrap_or_else(|| sec.name.clone());
        jobs.push(Job {
            name,
            section: sec.name.clone(),
            loc: sec.loc.clone(),
            settings: target,
            options: own,
            wave: 0,
            group: 0,
        });
    }
    let mut notes = Vec::new();
    // Options that change only what fio's report holds: one note each, naming the jobs.
    let mut differs: Vec<(String, Vec<&str>)> = Vec::new();
    for j in &jobs {
        for (_, what) in &j.settings.report_differs {
            match differs.iter_mut().find(|d| &d.0 == what) {
                Some(d) => d.1.push(&j.name),
                None => differs.push((what.clone(), vec![&j.name])),
            }
        }
    }
    for (what, names) in differs {
        notes.push(format!(
            "{what}; ssdlab runs the same I/O and its report holds what fio's default report holds (job{} {})",
            if names.len() > 1 { "s" } else { "" },
            names.join(", ")
        ));
    }
    // Waves and reporting groups.
    let mut group = 0u32;
    for i in 0..jobs.len() {
        let s = jobs[i].settings.clone();
        if (s.stonewall || s.new_group) && i > 0 {
            group += 1;
        }
        jobs[i].group = group;
        let mut wave = jobs[..i]
            .iter()
            .filter(|j| j.settings.stonewall)
            .map(|j| j.wave)
            .max()
            .unwrap_or(0);
        if s.stonewall && i > 0 {
            wave = wave.max(jobs[..i].iter().map(|j| j.wave).max().unwrap_or(0) + 1);
        }
        if let Some(w) = s.wait_for.clone() {
            if w == jobs[i].name {
                errors.push(Issue {
                    key: "wait_for".into(),
                    loc: Some(jobs[i].loc.clone()),
                    why: format!("job {w} cannot wait for itself"),
                });
            } else {
                let waitees: Vec<usize> = (0..i).filter(|&k| jobs[k].name == w).collect();
                match waitees.as_slice() {
                    [] => errors.push(Issue {
                        key: "wait_for".into(),
                        loc: Some(jobs[i].loc.clone()),
                        why: format!(
                            "wait_for={w}: no job named {w} before this one (a waitee comes first, as in fio)"
                        ),
                    }),
                    [k] => {
                        let ww = jobs[*k].wave;
                        let others: Vec<&str> = jobs[..i]
                            .iter()
                            .filter(|j| j.wave == ww && j.name != w)
                            .map(|j| j.name.as_str())
                            .collect();
                        if !others.is_empty() && !s.stonewall {
                            notes.push(format!(
                                "job {} waits for {w} and, as ssdlab runs jobs in waves, also for {} (started with {w})",
                                jobs[i].name,
                                others.join(", ")
                            ));
                        }
                        wave = wave.max(ww + 1);
                    }
                    _ => errors.push(Issue {
                        key: "wait_for".into(),
                        loc: Some(jobs[i].loc.clone()),
                        why: format!("wait_for={w}: several jobs are named {w}"),
                    }),
                }
            }
        }
        jobs[i].wave = wave;
    }
    steady_groups(&mut jobs, &mut errors, &mut |i| push(&mut unsupported, i));
    flow_groups(&mut jobs, &mut |i| push(&mut unsupported, i));
    verify_loops_alone(&mut jobs, &mut |i| push(&mut unsupported, i));
    if !errors.is_empty() {
        return Err(JobError(errors, not_kept));
    }
    Ok(JobSet {
        jobs,
        global_options,
        unsupported,
        notes,
    })
}

/// Whether a job reads back after each of its loops (fio's `do_verify` once a loop): a
/// verifying write job of several loops that can ([`Settings::verify_loops_unsupported`]) and
/// runs alone in its wave (its clones, each on its file, beside it).
pub fn verifies_each_loop(jobs: &[Job], i: usize) -> bool {
    let s = &jobs[i].settings;
    s.verify
        && s.do_verify
        && s.mode.writes()
        && s.loops > 1
        && s.verify_loops_unsupported().is_none()
        && jobs.iter().filter(|j| j.wave == jobs[i].wave).count() == 1
}

/// A verifying write job of several loops beside other jobs of its wave reads back once, after
/// all its loops, where fio reads back after each: refused by name (`--ignore-unsupported`
/// runs it so).
pub fn verify_loops_alone(jobs: &mut [Job], refuse: &mut dyn FnMut(Issue)) {
    for i in 0..jobs.len() {
        let s = &jobs[i].settings;
        if !(s.verify && s.do_verify && s.mode.writes() && s.loops > 1)
            || s.verify_loops_unsupported().is_some()
            || verifies_each_loop(jobs, i)
        {
            continue;
        }
        let issue = Issue {
            key: "loops".into(),
            loc: Some(jobs[i].loc.clone()),
            why: format!(
                "verify with loops={} beside other jobs of its wave (ssdlab reads back after each loop for a job that runs alone: stonewall it)",
                s.loops
            ),
        };
        refuse(issue.clone());
        jobs[i].settings.ignored.push(issue);
    }
}

/// fio's flow control registers every job's (clone's) weight when it parses the job file
/// (`flow_init_job` in `add_job`), and takes it back only when the job ends: the jobs of a flow
/// id in an earlier wave (`stonewall`, `wait_for`) are held back by the weight of those that
/// have not started, for good once they have run their share (fio 3.33 never ends them
/// without `runtime`). ssdlab refuses such a flow by name; `--ignore-unsupported` runs its jobs
/// without flow control.
fn flow_groups(jobs: &mut [Job], refuse: &mut dyn FnMut(Issue)) {
    let mut ids: Vec<i32> = jobs
        .iter()
        .filter(|j| j.settings.flow != 0)
        .map(|j| j.settings.flow_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let members: Vec<usize> = (0..jobs.len())
            .filter(|&i| jobs[i].settings.flow != 0 && jobs[i].settings.flow_id == id)
            .collect();
        let w0 = jobs[members[0]].wave;
        if members.iter().all(|&i| jobs[i].wave == w0) {
            continue;
        }
        for (k, &i) in members.iter().enumerate() {
            let issue = Issue {
                key: "flow".into(),
                loc: Some(jobs[i].loc.clone()),
                why: format!(
                    "flow_id={id} over several waves (stonewall, wait_for): fio 3.33 counts the later jobs' weight from the start and hangs"
                ),
            };
            if k == 0 {
                refuse(issue.clone());
            }
            jobs[i].settings.ignored.push(issue);
            jobs[i].settings.flow = 0;
        }
    }
}

/// fio's rules for `steadystate` within a reporting group (`steadystate.c`):
///
/// - `td_steadystate_init` rejects a job whose `ss`, `ss_dur` or `ss_ramp` differ from those of
///   any job of its reporting group (a job without `ss_dur` counts as all zeros), with or without
///   `group_reporting`: an error, as fio runs nothing.
/// - With `group_reporting` the group is checked together, its samples the sums of all its
///   jobs and clones. ssdlab refuses (by name) the groups it cannot check as fio does: jobs of
///   the group with and without `group_reporting`, and jobs that do not start together
///   (`startdelay`, or `wait_for` putting them in another wave); `--ignore-unsupported` runs
///   them without `steadystate`.
fn steady_groups(jobs: &mut [Job], errors: &mut Vec<Issue>, refuse: &mut dyn FnMut(Issue)) {
    // What fio compares: dur (whole seconds), limit, ramp, and the criterion's kind.
    let key = |s: &Settings| {
        let (metric, slope, limit, pct) = s.steady;
        (s.steady_dur_ns > 0).then_some((
            s.steady_dur_ns / 1_000_000_000,
            limit.to_bits(),
            s.steady_ramp_ns / 1000,
            metric,
            slope,
            pct,
        ))
    };
    let groups: Vec<u32> = {
        let mut g: Vec<u32> = jobs.iter().map(|j| j.group).collect();
        g.dedup();
        g
    };
    for g in groups {
        let members: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].group == g).collect();
        let first = key(&jobs[members[0]].settings);
        if let Some(&bad) = members.iter().find(|&&i| key(&jobs[i].settings) != first) {
            errors.push(Issue {
                key: "steadystate".into(),
                loc: Some(jobs[bad].loc.clone()),
                why: format!(
                    "job {} rejected: steadystate options must be consistent within reporting groups (fio 3.33 rejects jobs of one reporting group whose ss, ss_dur or ss_ramp differ, or that have them and not, with or without group_reporting)",
                    jobs[bad].name
                ),
            });
            continue;
        }
        if first.is_none() || !members.iter().any(|&i| jobs[i].settings.group_reporting) {
            continue;
        }
        let j0 = &jobs[members[0]];
        let why = if members.iter().any(|&i| !jobs[i].settings.group_reporting) {
            Some("steadystate in a reporting group whose jobs differ in group_reporting (fio's check then mixes sums over runs of adjacent jobs with it and jobs alone, and ends the whole group)")
        } else if members.iter().any(|&i| {
            jobs[i].wave != j0.wave
                || jobs[i].settings.start_delay_ns != j0.settings.start_delay_ns
                || jobs[i].settings.start_delay_high_ns.is_some()
        }) {
            Some("steadystate with group_reporting over jobs of one reporting group that do not start together (startdelay, wait_for)")
        } else {
            None
        };
        if let Some(why) = why {
            // Refused once, for the group's first job; ignored, none of its jobs checks.
            for (k, &i) in members.iter().enumerate() {
                let issue = Issue {
                    key: "steadystate".into(),
                    loc: Some(jobs[i].loc.clone()),
                    why: why.to_string(),
                };
                if k == 0 {
                    refuse(issue.clone());
                }
                jobs[i].settings.ignored.push(issue);
                jobs[i].settings.steady_dur_ns = 0;
            }
        }
    }
}

/// An errno of fio's `ignore_error`: a name fio knows (`str2error`: EPERM … ERANGE, the
/// errnos 1 to 34) or a number (its sign dropped, as fio's `atoi` and negation); `None` for an
/// unknown name or 0.
fn errno_of(e: &str) -> Option<i32> {
    const NAMES: [&str; 34] = [
        "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
        "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
        "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
        "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
    ];
    let n = if e.starts_with('E') {
        NAMES.iter().position(|n| *n == e)? as i32 + 1
    } else {
        e.trim()
            .parse::<i64>()
            .ok()?
            .unsigned_abs()
            .min(i32::MAX as u64) as i32
    };
    (n != 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ini::tests::FakeEnv;
    use crate::ini::Parser;
    use ssdlab_workload::PatternBytes;
    use std::path::Path;

    fn jobs(text: &str) -> Result<JobSet, JobError> {
        let s = Parser::new(&FakeEnv::default())
            .text(text.as_bytes(), Path::new("j.fio"), 0)
            .unwrap();
        resolve(&s)
    }

    /// fio's `fixup_options` and `wait_for_completions`: `iodepth_low` 0 or above `iodepth` is
    /// `iodepth` (no drain), `iodepth_batch_complete_max` is raised to the minimum, and a
    /// minimum of 0 without a maximum polls (depth 1).
    #[test]
    fn batched_completions_are_fixed_up_as_fio_fixes_them() {
        use ssdlab_workload::CompletionBatch;
        let one = |text: &str| {
            let js = jobs(&format!("[a]\nioengine=io_uring\niodepth=16\n{text}\n")).unwrap();
            assert!(js.unsupported.is_empty(), "{text}");
            js.jobs[0].settings.clone()
        };
        let s = one("iodepth_batch_complete=4\niodepth_low=0");
        assert_eq!(s.completions(), Some(CompletionBatch { min: 4, low: 16 }));
        assert_eq!((s.reap_max(), s.queue_depth()), (4, 16));
        let s = one("iodepth_low=100\niodepth_batch_complete_max=8");
        assert_eq!((s.completions(), s.reap_max()), (None, 8));
        let s = one("iodepth_low=2\niodepth_batch_complete_min=1");
        assert_eq!(s.completions(), Some(CompletionBatch { min: 1, low: 2 }));
        let s = one("iodepth_batch_complete_min=0");
        assert!(s.polls());
        assert_eq!(
            (s.queue_depth(), s.completions(), s.reap_max()),
            (1, None, 1)
        );
        let s = one("iodepth_batch_complete_min=0\niodepth_batch_complete_max=16");
        assert!(!s.polls());
        assert_eq!((s.queue_depth(), s.reap_max()), (16, 16));
        // fio's null engine below its submission batch never fills its queue: no drain
        let s = one("ioengine=null\niodepth_low=4");
        assert_eq!(s.completions(), None);
        let s = one("ioengine=null\niodepth_batch=16\niodepth_low=4");
        assert_eq!(s.completions(), Some(CompletionBatch { min: 1, low: 4 }));
        // a synchronous engine has one I/O in flight: nothing to batch
        let s = one("ioengine=psync\niodepth_low=4\niodepth_batch_complete_min=4");
        assert_eq!(s.completions(), None);
    }

    /// fio's `make_filename`: JOB.CLONE.FILENO by default, else `filename_format` with its
    /// keywords replaced (any case, each occurrence; `$clientuid` empty outside client mode).
    #[test]
    fn files_are_named_as_fio_names_them() {
        let js = jobs(
            "[a]\n[b]\nfilename_format=d/$JOBNAME.$jobnum-$FileNum$clientuid.$filenum\n\
             [c]\nfilename_format=c\n[d]\nfilename_format=x$jobname$jobname\n",
        )
        .unwrap();
        let name = |i: usize, job: &str| js.jobs[i].settings.file_name(job, 2, 7);
        assert_eq!(name(0, "a"), "a.2.7");
        assert_eq!(name(1, "b"), "d/b.2-7.7");
        assert_eq!(name(2, "c"), "c", "one name for every file (fio's too)");
        assert_eq!(name(3, "d"), "xdd");
        // a job name holding a keyword ends (fio's search would start again from the front)
        assert_eq!(name(3, "$jobname"), "x$jobname$jobname");
        // an empty format is refused, as fio refuses it
        let e = jobs("[a]\nfilename_format=\n").unwrap_err().to_string();
        assert!(e.contains("filename_format"), "{e}");
    }

    /// fio 3.33 rejects jobs of one reporting group whose steadystate settings differ (with or
    /// without group_reporting); ssdlab refuses the groups it cannot check as fio does.
    #[test]
    fn steadystate_within_reporting_groups() {
        let ss = "[global]\nioengine=null\nsize=1m\nss=iops:10%\nss_dur=2\n";
        let rejected = |text: &str| match jobs(text) {
            Err(JobError(e, _)) => e.iter().any(|i| {
                i.key == "steadystate" && i.why.contains("consistent within reporting groups")
            }),
            Ok(_) => false,
        };
        assert!(rejected(&format!("{ss}[a]\n[b]\nss_dur=3\n")));
        assert!(rejected(&format!("{ss}[a]\n[b]\nss=iops:5%\n")));
        assert!(rejected(&format!("{ss}[a]\n[b]\nss_ramp=1\n")));
        assert!(rejected(&format!("{ss}[a]\n[b]\nss_dur=0\n")));
        // another group, or the same settings: accepted, with or without group_reporting
        for ok in [
            format!("{ss}[a]\n[b]\nnew_group\nss_dur=3\n"),
            format!("{ss}[a]\n[b]\nstonewall\nss_dur=0\n"),
            format!("{ss}group_reporting\nnumjobs=4\n[a]\n[b]\n"),
            format!("{ss}numjobs=4\n[a]\n[b]\n"),
        ] {
            let js = jobs(&ok).unwrap();
            assert!(js.unsupported.is_empty(), "{ok}: {:?}", js.unsupported);
        }
        let refused = |text: &str, why: &str| {
            let js = jobs(text).unwrap();
            assert_eq!(js.unsupported.len(), 1, "{text}: {:?}", js.unsupported);
            assert!(js.unsupported[0].why.contains(why), "{:?}", js.unsupported);
            assert!(js
                .jobs
                .iter()
                .all(|j| j.settings.steady_criterion().is_none()));
        };
        refused(
            &format!("{ss}[a]\ngroup_reporting\n[b]\n"),
            "differ in group_reporting",
        );
        refused(
            &format!("{ss}group_reporting\n[a]\n[b]\nstartdelay=1\n"),
            "do not start together",
        );
        refused(
            &format!("{ss}group_reporting\n[a]\n[b]\nwait_for=a\n"),
            "do not start together",
        );
    }

    #[test]
    fn log_options() {
        let js = jobs(
            "[global]\nwrite_bw_log=out/x\nlog_avg_msec=250\n[a]\nwrite_lat_log\nwrite_hist_log=h\n\
             log_hist_msec=100\nlog_hist_coarseness=4\nlog_offset=1\nlog_max_value=1\n\
             per_job_logs=0\nlog_prio=0\nlog_entries=4096\n[b]\n",
        )
        .unwrap();
        let a = &js.jobs[0].settings;
        assert_eq!(a.bw_log.as_deref(), Some("out/x"));
        assert_eq!(a.lat_log.as_deref(), Some(""));
        assert_eq!(a.hist_log.as_deref(), Some("h"));
        assert_eq!(a.iops_log, None);
        assert_eq!(
            (a.log_avg_msec, a.log_hist_msec, a.log_hist_coarseness),
            (250, 100, 4)
        );
        assert!(a.log_offset && a.log_max_value && !a.per_job_logs);
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let b = &js.jobs[1].settings;
        assert_eq!((b.log_avg_msec, b.lat_log.as_deref()), (250, None));
        assert!(b.per_job_logs && !b.log_offset && !b.log_max_value);
        for (text, want) in [
            (
                "log_avg_msec=-1",
                "log_avg_msec (j.fio line 2): log_avg_msec=-1: give a whole",
            ),
            ("log_hist_coarseness=99", "fio's range is 0 to 6"),
            ("log_hist_msec=2d", "log_hist_msec=2d"),
            ("log_offset=2", "log_offset"),
            ("log_max_value=x", "log_max_value=x"),
        ] {
            let e = jobs(&format!("[a]\n{text}\n")).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        // fio compresses logs in memory only: the files are the same, so it changes nothing
        let js = jobs("[a]\nlog_compression=1m\nlog_compression_cpus=0\n").unwrap();
        assert!(js.unsupported.is_empty());
        // fio's log_prio=1: the priority column is the threads' I/O priority value
        let js = jobs("[a]\nlog_prio=1\nprio=3\n[b]\nlog_prio=1\n").unwrap();
        assert!(js.unsupported.is_empty());
        let p: Vec<Option<u32>> = js
            .jobs
            .iter()
            .map(|j| crate::plan::log_style(&j.settings).prio)
            .collect();
        assert_eq!(p, [Some(0x4003), Some(0)]);
        for text in [
            "log_store_compressed=1",
            "log_max_value=both",
            "log_unix_epoch=1",
        ] {
            let js = jobs(&format!("[a]\n{text}\n")).unwrap();
            assert_eq!(js.unsupported.len(), 1, "{text}");
        }
    }

    #[test]
    fn globals_apply_to_jobs_after_them_only() {
        let js =
            jobs("[global]\nbs=8k\n[a]\n[global]\nbs=16k\niodepth=4\n[b]\nbs=32k\n[c]\n").unwrap();
        let bs: Vec<u64> = js.jobs.iter().map(|j| j.settings.block_size()).collect();
        assert_eq!(bs, vec![8192, 32768, 16384]);
        assert_eq!(js.jobs[0].settings.iodepth, 1);
        assert_eq!(js.jobs[2].settings.iodepth, 4);
        assert_eq!(js.global_options.len(), 3);
    }

    #[test]
    fn report_only_options_run_with_a_note_and_lfsr_keeps_its_meaning() {
        // what changes only fio's report runs, and a note says so once, naming the jobs
        let js = jobs("[global]\ngtod_reduce=1\n[a]\ndisk_util=0\n[b]\n").unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let gtod: Vec<&String> = js
            .notes
            .iter()
            .filter(|n| n.starts_with("gtod_reduce=1"))
            .collect();
        assert_eq!(gtod.len(), 1, "{:?}", js.notes);
        assert!(gtod[0].ends_with("(jobs a, b)"), "{}", gtod[0]);
        assert!(js
            .notes
            .iter()
            .any(|n| n.starts_with("disk_util=0") && n.ends_with("(job a)")));
        // fio's defaults say nothing; a later default takes an earlier value back
        let js = jobs("[a]\nstats=1\nclat_percentiles=1\ngtod_reduce=1\ngtod_reduce=0\n").unwrap();
        assert!(js.notes.is_empty(), "{:?}", js.notes);
        // lfsr visits every block once per pass without a map: refused with norandommap
        let js = jobs("[a]\nrw=randread\nrandom_generator=lfsr\n").unwrap();
        assert!(js.unsupported.is_empty());
        let js = jobs("[a]\nrw=randread\nrandom_generator=lfsr\nnorandommap\n").unwrap();
        assert_eq!(js.unsupported.len(), 1, "{:?}", js.unsupported);
        assert!(jobs("[a]\nrandom_generator=mt\n").is_err());
        let js = jobs("[a]\nallow_file_create=0\n").unwrap();
        assert!(!js.jobs[0].settings.allow_file_create);
    }

    #[test]
    fn trim_modes_make_write_ops_trimmed_with_the_trim_size() {
        // bs=A,B,C: C is the trim size, as in fio.
        let js = jobs(
            "[a]\nrw=trim\nbs=4k,8k,16k\n[b]\nrw=randtrim\nbs=4k\nba=512,512,2k\n\
             [c]\nrw=trimwrite\nbs=8k\n[d]\nrw=randtrimwrite\nbs=16k,32k,16k\nrwmixread=70\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let w: Vec<WorkloadSpec> = js
            .jobs
            .iter()
            .map(|j| j.settings.workload(0, 1 << 20, 1, FIO_RANDSEED))
            .collect();
        let got: Vec<(RwMode, TrimMode, u8, u64, u64, bool)> = w
            .iter()
            .map(|w| (w.rw, w.trim, w.read_pct, w.bs, w.align, w.random_map))
            .collect();
        assert_eq!(
            got,
            vec![
                (RwMode::Write, TrimMode::Only, 0, 16384, 16384, false),
                (RwMode::Randwrite, TrimMode::Only, 0, 4096, 2048, false),
                (RwMode::Write, TrimMode::ThenWrite, 0, 8192, 8192, false),
                (
                    RwMode::Randwrite,
                    TrimMode::ThenWrite,
                    0,
                    16384,
                    16384,
                    true
                ),
            ]
        );
        assert_eq!(js.jobs[1].settings.ba[2], Some(2048));
        // a blockalign above the block size: fio aligns every random offset to it
        let js = jobs("[b]\nrw=randtrim\nbs=4k\nba=512,512,8k\n").unwrap();
        assert_eq!(js.unsupported.len(), 1, "{:?}", js.unsupported);
        // trim's budget is the size trimmed; trimwrite's twice that (fio's `do_io`).
        let bytes: Vec<Option<u64>> = w.iter().map(|w| w.stop.bytes).collect();
        assert_eq!(
            bytes,
            vec![Some(1 << 20), Some(1 << 20), Some(2 << 20), Some(2 << 20)]
        );
        for w in &w {
            w.validate().unwrap();
            assert!(w.writes(), "a trim destroys data as a write does");
        }
        assert_eq!(w[3].mode_name(), "randtrimwrite");
        // fio 3.33: rw=trimwrite number_ios=10 does 10 trims and 10 writes.
        let js = jobs("[a]\nrw=trimwrite\nnumber_ios=10\n").unwrap();
        let w = js.jobs[0].settings.workload(0, 1 << 20, 1, FIO_RANDSEED);
        assert_eq!(w.stop.ios, Some(20));
        // What ssdlab does not do as fio does is refused, named.
        for (text, want) in [
            (
                "[a]\nrw=trimwrite\nbs=4k,8k,16k\n",
                "write block size (8192) other than the trim block size (16384)",
            ),
            (
                "[a]\nrw=randtrimwrite\nbsrange=4k-16k\n",
                "varying trim block sizes",
            ),
            (
                "[a]\nrw=trimwrite\nrate_iops=100\n",
                "rate or rate_iops with rw=trimwrite",
            ),
            ("[a]\nrw=trim\nverify=crc32c\n", "verify with rw=trim"),
            (
                "[a]\nrw=randwrite\nbs=4k,16k\n",
                "block size (16384) larger than another direction's (4096)",
            ),
            (
                "[a]\nrw=randread\nbs=16k,16k,4k\n",
                "block size (16384) larger than another direction's (4096)",
            ),
            (
                "[a]\nrw=randtrim\nbs=4k,8k,16k\n",
                "read or write block size (4096) smaller than the trim size (16384)",
            ),
        ] {
            let js = jobs(text).unwrap();
            let e: Vec<String> = js.unsupported.iter().map(|i| i.to_string()).collect();
            assert!(e.iter().any(|e| e.contains(want)), "{text}: {e:?}");
        }
        // randtrimwrite's writes take the trim's size: another write size is fio's too.
        let js = jobs(
            "[a]\nrw=randtrimwrite\nbs=16k,32k,16k\n[b]\nrw=trim\nbsrange=4k-16k\n\
             [c]\nrw=randtrim\nbs=4k,8k,16k\nnorandommap\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
    }

    #[test]
    fn fio_examples_resolve() {
        // examples/fio-rand-RW.fio
        let js = jobs(
            "; fio-rand-RW.job for fiotest\n\n[global]\nname=fio-rand-RW\nfilename=fio-rand-RW\n\
             rw=randrw\nrwmixread=60\nrwmixwrite=40\nbs=4K\ndirect=0\nnumjobs=4\ntime_based\n\
             runtime=900\n\n[file1]\nsize=10G\nioengine=libaio\niodepth=16\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let j = &js.jobs[0];
        assert_eq!(j.name, "file1", "a global name= does not rename jobs");
        let s = &j.settings;
        assert_eq!(s.mode, Mode::RandRw);
        assert_eq!(s.rwmixread, 60);
        assert_eq!(s.numjobs, 4);
        assert!(s.time_based && !s.direct);
        assert_eq!(s.runtime_ns, Some(900_000_000_000));
        assert_eq!(s.engine, Engine::Async("libaio"));
        assert_eq!(s.size, Some(Size::Bytes(10 << 30)));
        let w = s.workload(0, 10 << 30, 4, FIO_RANDSEED);
        assert_eq!(
            (w.rw, w.read_pct, w.qd, w.jobs, w.bs),
            (RwMode::Randrw, 60, 16, 4, 4096)
        );
        assert!(w.random_map);
        assert_eq!(w.stop.time_ns, Some(900_000_000_000));
        assert_eq!(w.stop.bytes, None, "time_based runs for the runtime");
        w.validate().unwrap();
        // examples/ssd-test.fio: four stonewalled jobs, one after the other.
        let js = jobs(
            "[global]\nbs=4k\nioengine=libaio\niodepth=4\nsize=10g\ndirect=1\nruntime=60\n\
             directory=/mount-point-of-ssd\nfilename=ssd.test.file\n\n[seq-read]\nrw=read\n\
             stonewall\n\n[rand-read]\nrw=randread\nstonewall\n\n[seq-write]\nrw=write\n\
             stonewall\n\n[rand-write]\nrw=randwrite\nstonewall\n",
        )
        .unwrap();
        let waves: Vec<usize> = js.jobs.iter().map(|j| j.wave).collect();
        assert_eq!(waves, vec![0, 1, 2, 3]);
        let groups: Vec<u32> = js.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, vec![0, 1, 2, 3]);
        let s = &js.jobs[0].settings;
        let w = s.workload(0, 10 << 30, 1, FIO_RANDSEED);
        assert_eq!(
            w.stop.bytes,
            Some(10 << 30),
            "not time based: the size once"
        );
        assert_eq!(
            w.stop.time_ns,
            Some(60_000_000_000),
            "or the runtime, if sooner"
        );
        // examples/tiobench-example.fio: bsrange=4k-4k, timeout, inline comments.
        let js = jobs(
            "; tiobench like setup\n[global]\ndirect=1\nsize=512m\nbsrange=4k-4k\ntimeout=60\n\
             numjobs=4\t; 4 simultaneous threads for each job\n\n[f1]\nrw=write\n\n[f2]\n\
             stonewall\nrw=randwrite\n\n[f3]\nstonewall\nrw=read\n\n[f4]\nstonewall\nrw=randread\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        assert_eq!(js.jobs.len(), 4);
        assert_eq!(js.jobs[3].settings.numjobs, 4);
        assert_eq!(js.jobs[3].settings.runtime_ns, Some(60_000_000_000));
        // The default engine is psync: iodepth has no effect.
        assert_eq!(js.jobs[0].settings.queue_depth(), 1);
    }

    #[test]
    fn flow_options_as_fio_keeps_them() {
        let js = jobs(
            "[global]\nflow_id=-2\nflow_sleep=1000\nflow_watermark=5\n[a]\nflow=1\n[b]\nflow=-1\n[c]\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let s: Vec<_> = js.jobs.iter().map(|j| &j.settings).collect();
        assert_eq!((s[0].flow, s[0].flow_id, s[0].flow_sleep_us), (1, -2, 1000));
        // fio checks flow's maximum signed and keeps it in an unsigned int.
        assert_eq!(s[1].flow, u32::MAX);
        assert_eq!(s[2].flow, 0);
        assert!(jobs("[a]\nflow=1001\n").is_err());
        // A flow over several waves would hold the earlier jobs back for good: refused.
        let js = jobs("[a]\nflow=1\n[b]\nstonewall\nflow=1\n[c]\nflow_id=1\nflow=1\n").unwrap();
        assert_eq!(js.unsupported.len(), 1, "{:?}", js.unsupported);
        assert!(js.unsupported[0].why.contains("several waves"));
        assert_eq!(
            js.jobs[2].settings.flow, 1,
            "flow_id=1 is a flow of its own"
        );
    }

    #[test]
    fn waves_groups_and_wait_for() {
        // examples/waitfor.fio: `threads` is the tiobench profile's option, which fio
        // accepts in any job and which changes nothing without the profile.
        let js = jobs("[global]\nthreads=1\n[a]\n").unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let js = jobs(
            "[global]\nthread=1\ngroup_reporting\nfilename=/tmp/data\nfilesize=128m\n\
             [writers]\nrw=write\nbs=128k\nnumjobs=4\nruntime=10\n\
             [readers]\nnew_group\nwait_for=writers\nrw=randread\nbs=4k\nnumjobs=4\nruntime=10\n\
             [writers2]\nnew_group\nwait_for=readers\nrw=randwrite\nbs=4k\nnumjobs=4\nruntime=10\n\
             [readers2]\nnew_group\nwait_for=writers2\nrw=randread\nbs=4k\nnumjobs=4\nruntime=10\n",
        )
        .unwrap();
        let waves: Vec<usize> = js.jobs.iter().map(|j| j.wave).collect();
        assert_eq!(waves, vec![0, 1, 2, 3]);
        let groups: Vec<u32> = js.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, vec![0, 1, 2, 3]);
        assert!(js.notes.is_empty());
        // Jobs without stonewall run together; a later stonewall waits for all of them, and
        // wait_for on one job of a wave notes the difference.
        let js = jobs("[a]\n[b]\n[c]\nwait_for=a\n[d]\nstonewall\n[e]\n").unwrap();
        let waves: Vec<usize> = js.jobs.iter().map(|j| j.wave).collect();
        assert_eq!(waves, vec![0, 0, 1, 2, 2]);
        assert_eq!(js.notes.len(), 1, "{:?}", js.notes);
        assert!(js.notes[0].contains("also for b"));
        for (text, want) in [
            ("[a]\nwait_for=zz\n", "no job named zz"),
            ("[a]\nwait_for=a\n", "itself"),
            ("[a]\n[a]\n[b]\nwait_for=a\n", "several jobs"),
        ] {
            let e = jobs(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn unsupported_keys_are_named_with_lines() {
        let js = jobs(
            "[global]\nbssplit=4k/50:8k/50\n[a]\nthinkcycles=1000\nrw=randread\n\
             bsrange=4k-16k\nrw_sequencer=identical\ncgroup_weight=500\n",
        )
        .unwrap();
        let keys: Vec<(&str, u32)> = js
            .unsupported
            .iter()
            .map(|i| (i.key.as_str(), i.loc.as_ref().unwrap().line))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("thinkcycles", 4),
                ("rw_sequencer", 7),
                ("cgroup_weight", 8)
            ],
            "bssplit and bsrange run"
        );
        // An unsupported global option is named once, not once per job.
        let js = jobs("[global]\nthinkcycles=5\n[a]\n[b]\n").unwrap();
        assert_eq!(js.unsupported.len(), 1);
        // Only a default value of some options is fine.
        let js = jobs("[a]\nfsync=0\nnrfiles=1\nunlink=0\nrw_sequencer=sequential\n").unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let js = jobs("[a]\nfsync=32\nunlink=1\n").unwrap();
        assert_eq!(js.unsupported.len(), 2);
    }

    #[test]
    fn verify_backlog_as_fio_reads_it() {
        let backlog = |text: &str| {
            let js = jobs(&format!("[a]\nsize=1m\nrw=write\nverify=crc32c\n{text}")).unwrap();
            assert!(js.unsupported.is_empty(), "{text}: {:?}", js.unsupported);
            js.jobs[0]
                .settings
                .workload(0, 1 << 20, 1, 1)
                .verify_backlog
        };
        let b = |every, batch| Some(ssdlab_workload::VerifyBacklog { every, batch });
        // without verify_backlog, the pieces are logged for the verify phase only
        assert_eq!(backlog(""), b(0, 0));
        // the batch is the backlog unless given; a size suffix counts pieces (fio's STR_VAL)
        assert_eq!(backlog("verify_backlog=16\n"), b(16, 16));
        assert_eq!(
            backlog("verify_backlog=1k\nverify_backlog_batch=3\n"),
            b(1024, 3)
        );
        // fio logs the pieces only for a verify phase
        assert_eq!(backlog("verify_backlog=16\ndo_verify=0\n"), None);
        // what fio runs differently is refused: more passes, counted with the verify reads
        let js = jobs("[a]\nsize=1m\nverify=crc32c\nrw=write:8k\n").unwrap();
        assert_eq!(js.unsupported.len(), 1, "{:?}", js.unsupported);
        // (a reader has no pieces)
        let js = jobs("[a]\nsize=1m\nrw=read\nverify=crc32c\nverify_backlog=4\n").unwrap();
        assert_eq!(
            js.jobs[0]
                .settings
                .workload(0, 1 << 20, 1, 1)
                .verify_backlog,
            None
        );
        // what would pace or count its reads is refused, naming the option
        // fio's verify phase comes after each loop: a job alone in its wave reads back after
        // each; what fio counts or paces over the loops, or other jobs beside it, are refused
        let js = jobs("[a]\nsize=1m\nrw=write\nverify=crc32c\nloops=2\n").unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        assert!(verifies_each_loop(&js.jobs, 0));
        for extra in [
            "runtime=1",
            "number_ios=10",
            "rate_iops=100",
            "write_bw_log=x",
        ] {
            let js = jobs(&format!(
                "[a]\nsize=1m\nrw=write\nverify=crc32c\nloops=2\n{extra}\n"
            ))
            .unwrap();
            assert_eq!(js.unsupported.len(), 1, "{extra}");
            assert!(js.unsupported[0].why.contains("loops=2 and "), "{extra}");
            assert!(!verifies_each_loop(&js.jobs, 0), "{extra}");
        }
        let js = jobs("[a]\nsize=1m\nrw=write\nverify=crc32c\nloops=2\n[b]\nsize=1m\n").unwrap();
        assert!(js.unsupported[0].why.contains("loops=2 beside other jobs"));
        assert!(!verifies_each_loop(&js.jobs, 0));
        let js = jobs("[a]\nsize=1m\nrw=write\nverify=crc32c\nloops=2\n[b]\nstonewall\nsize=1m\n")
            .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        assert!(verifies_each_loop(&js.jobs, 0));
        for extra in ["rate_iops=100", "thinktime=1ms", "number_ios=10", "flow=1"] {
            let js = jobs(&format!(
                "[a]\nsize=1m\nrw=write\nverify=crc32c\nverify_backlog=4\n{extra}\n"
            ))
            .unwrap();
            assert_eq!(js.unsupported.len(), 1, "{extra}");
            assert!(js.unsupported[0].why.contains("verify_backlog"), "{extra}");
        }
    }

    /// Every option the list of reasons names is refused: one ssdlab has come to implement
    /// leaves the list (else its reason would still be given for it, wrongly, somewhere).
    #[test]
    fn options_with_a_reason_are_refused() {
        for (keys, why) in options::NOT_IMPLEMENTED {
            for k in *keys {
                let js = jobs(&format!("[a]\n{k}=1\n")).unwrap();
                assert!(
                    js.unsupported
                        .iter()
                        .any(|i| i.key == *k && i.why.contains(why)),
                    "{k} is implemented: take it off the list ({:?})",
                    js.unsupported
                );
            }
        }
    }

    #[test]
    fn errors_collect_every_bad_value() {
        let err = jobs("[a]\nbs=4q\niodeph=4\nrw=randomread\nruntime=10sec\n").unwrap_err();
        // Every issue is kept; the message shows the first three and counts the rest.
        let all: String = err.0.iter().map(|i| i.to_string()).collect();
        let e = err.to_string();
        for want in [
            "line 2",
            "4q",
            "line 3",
            "did you mean iodepth",
            "line 4",
            "randomread",
        ] {
            assert!(e.contains(want), "{want}: {e}");
        }
        assert!(e.ends_with("; and 1 more"), "{e}");
        for want in ["line 5", "10 microseconds"] {
            assert!(all.contains(want), "{want}: {all}");
        }
        assert!(!e.contains('\n'));
        // A thousand are kept, the rest counted; of unknown options in one file the first
        // is shown.
        let many: String = (0..3000).map(|i| format!("bogus{i}=1\n")).collect();
        let err = jobs(&format!("[a]\n{many}")).unwrap_err();
        assert_eq!(err.0.len(), MAX_ISSUES);
        assert_eq!(err.1, 3000 - MAX_ISSUES);
        assert_eq!(
            err.to_string(),
            "bogus0 (j.fio line 2): unknown option; and 2999 more"
        );
        // A line no option could be (a password file included by mistake) is not repeated.
        let err =
            jobs("[a]\nroot:$6$salt$hash:19000:0:99999:7:::\nbin:*:19000::::::\n").unwrap_err();
        let e = err.to_string();
        assert!(!e.contains("$6$") && !e.contains("root"), "{e}");
        assert!(
            e.contains("j.fio line 2") && e.contains("not an fio option"),
            "{e}"
        );
        // a mistyped option is still named, with its suggestion
        let e = jobs("[a]\nio-depth=4\n").unwrap_err().to_string();
        assert!(e.contains("io-depth") && e.contains("did you mean"), "{e}");
    }

    #[test]
    fn modes_modifiers_and_engines() {
        // An engine option of another engine is fio's "Bad option".
        let e = jobs("[a]\nioengine=psync\nsqthread_poll\n[b]\nioengine=libaio\nuserspace_reap\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sqthread_poll (j.fio line 3)")
                && e.contains("this job uses ioengine=psync"),
            "{e}"
        );
        // examples/e4defrag2.fio: a global section's engine option, inherited by a job that
        // changes the engine, is dropped (fio does not complain).
        let js =
            jobs("[global]\nioengine=io_uring\nsqthread_poll\n[a]\nioengine=libaio\n").unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        assert!(js.jobs[0].settings.engine_opts.is_empty());
        // An engine ssdlab does not run is refused for itself, and its options with it
        // (never as options of fio's default engine).
        let js = jobs("[a]\nioengine=io_uring_cmd\ncmd_type=nvme\nsqthread_poll=1\n").unwrap();
        let why: Vec<&str> = js.unsupported.iter().map(|i| i.why.as_str()).collect();
        assert_eq!(why.len(), 3, "{why:?}");
        assert!(why[0].contains("io_uring_cmd: NVMe passthrough"), "{why:?}");
        assert!(
            why.iter().all(|w| !w.contains("uses ioengine=psync")),
            "{why:?}"
        );
        assert!(
            why[1].contains("cmd_type: an option of ioengine=io_uring_cmd"),
            "{why:?}"
        );
        assert_eq!(js.jobs[0].settings.ignored.len(), 3);
        let js = jobs(
            "[a]\nrw=randread:8\nioengine=io_uring\niodepth=32\nhipri\nfixedbufs=1\n\
             [b]\nrw=write:4k\n[c]\nrw=randrw\nrwmixwrite=30\n[e]\nioengine=pvsync2\nhipri\n\
             [f]\nkb_base=1000\nbs=4k\n[g]\nbs=4KiB\n[h]\nioengine=libaio\nhipri\n",
        )
        .unwrap();
        let w = js.jobs[0].settings.workload(0, 1 << 30, 1, 1);
        assert_eq!((w.random_every, w.qd), (8, 32));
        assert!(js.jobs[0].settings.hipri && js.jobs[0].settings.fixedbufs);
        let w = js.jobs[1].settings.workload(0, 1 << 30, 1, 1);
        assert_eq!(w.seq_skip, 4096);
        // examples/backwards-read.fio
        let e = jobs("[a]\nbs=4k\nrw=read:-8k\n[b]\nrw=randread:-8\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5") && !e.contains("line 3"), "{e}");
        let back = jobs("[a]\nbs=4k\nrw=read:-8k\n").unwrap();
        let w = back.jobs[0].settings.workload(0, 1 << 30, 1, 1);
        assert_eq!((w.seq_skip, w.seq_back), (0, 8192));
        // a random mode's modifier is fio's atoi: randwrite:8k is a random offset every 8
        let r = jobs("[a]\nrw=randwrite:8k\n").unwrap();
        assert_eq!(
            r.jobs[0].settings.workload(0, 1 << 30, 1, 1).random_every,
            8
        );
        assert!(r.unsupported.is_empty());
        // with more passes, fio's random map holds the sequential stretches too: refused
        for extra in [
            "rw=randwrite:8\nloops=2",
            "percentage_random=90\nio_size=2m",
        ] {
            let r = jobs(&format!("[a]\nrw=randwrite\n{extra}\n")).unwrap();
            assert!(r.unsupported[0].why.contains("stretches"), "{extra}");
            let r = jobs(&format!("[a]\nrw=randwrite\n{extra}\nnorandommap\n")).unwrap();
            assert!(r.unsupported.is_empty(), "{extra}");
        }
        // verify of such stretches: fio reads back an overwritten block as its first write
        let r = jobs("[a]\nrw=randwrite\npercentage_random=50\nverify=crc32c\n").unwrap();
        assert!(r.unsupported[0].why.contains("overwrote"));
        let r =
            jobs("[a]\nrw=randwrite\npercentage_random=50\nverify=crc32c\nnorandommap\n").unwrap();
        assert!(r.unsupported.is_empty());
        // Zone units are fio's zonemode: not supported (not a bad value).
        let z = jobs("[a]\nsize=8z\noffset=0%\n").unwrap();
        assert_eq!(z.unsupported.len(), 1, "{:?}", z.unsupported);
        assert!(z.unsupported[0].why.contains("zonemode"));
        assert_eq!(js.jobs[2].settings.rwmixread, 70);
        assert_eq!(js.unsupported.len(), 2, "{:?}", js.unsupported);
        assert!(js.unsupported[0].why.contains("pvsync2"));
        assert!(js.unsupported[1].why.contains("libaio"));
        assert_eq!(js.jobs[4].settings.block_size(), 4000);
        assert_eq!(js.jobs[5].settings.block_size(), 4000);
    }

    #[test]
    fn dedupe_options_as_fio_reads_them() {
        let js = jobs(
            "[global]\nsize=8m\nrw=write\niodepth=16\n\
             [rep]\ndedupe_percentage=30\nzero_buffers=1\n\
             [ws]\ndedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=25\n\
             buffer_compress_percentage=40\nbssplit=4k/50:64k/50\n\
             [verified]\nstonewall\ndedupe_percentage=50\nverify=md5\n\
             [reader]\nstonewall\nrw=read\ndedupe_percentage=50\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let w: Vec<WorkloadSpec> = js
            .jobs
            .iter()
            .map(|j| j.settings.workload(0, 8 << 20, 1, 1))
            .collect();
        // repeat: refilled random data whatever zero_buffers says (fio's fill_io_buffer), one
        // seed per piece of buffer_compress_chunk (512), 16 buffers filled as the thread starts
        let d = w[0].dedupe.expect("dedupe");
        assert_eq!(w[0].pattern, Pattern::Random);
        assert_eq!(
            (d.percentage, d.mode, d.chunk, d.setup_buffers, d.setup_len),
            (30, DedupeMode::Repeat, 512, 16, 4096)
        );
        // working set: a quarter of the region in pages of the smallest write, each of eight
        // pieces; their compressible share in pieces of 512 bytes
        let d = w[1].dedupe.expect("dedupe");
        assert_eq!(
            w[1].pattern,
            Pattern::Chunked(Chunked {
                pct: 40,
                chunk: 512,
                fill: None
            })
        );
        assert_eq!(d.mode, DedupeMode::WorkingSet { pages: 512 });
        assert_eq!((d.chunk, d.page_pieces, d.setup_len), (512, 8, 65536));
        let js = jobs("[a]\nsize=1m\nrw=write\ndedupe_percentage=30\nrefill_buffers=0\n").unwrap();
        assert!(
            js.unsupported[0]
                .why
                .contains("refill_buffers=0 after dedupe_percentage"),
            "{:?}",
            js.unsupported
        );
        // (before it, dedupe turns refilling on again, as fio's callback does)
        let js = jobs("[a]\nsize=1m\nrw=write\nrefill_buffers=0\ndedupe_percentage=30\n").unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        // buffer_compress_percentage=100 is fio's zero_buffers, which dedupe ignores
        let js =
            jobs("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=100\ndedupe_percentage=30\n")
                .unwrap();
        assert_eq!(js.jobs[0].settings.pattern(), Pattern::Random);
        // verified writes carry their own data; reads write nothing
        assert_eq!((w[2].dedupe, w[3].dedupe), (None, None));
        // fio's checks of the working set (init.c), as errors
        for (text, says) in [
            (
                "[a]\nrw=write\ndedupe_percentage=5\ndedupe_mode=working_set\n",
                "requires size",
            ),
            (
                "[a]\nsize=1m\nrw=write\ndedupe_percentage=96\ndedupe_mode=working_set\n",
                "impossible to reach",
            ),
            (
                "[a]\nsize=1m\nrw=write\nnrfiles=2\ndedupe_percentage=5\ndedupe_mode=working_set\n",
                "single file",
            ),
            ("[a]\nsize=1m\ndedupe_mode=dup\n", "repeat and working_set"),
            ("[a]\nsize=1m\ndedupe_percentage=101\n", "dedupe_percentage"),
        ] {
            let e = jobs(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    /// fio's compressible buffers (init.c fixup_options, io_u.c fill_io_buffer): pieces of
    /// buffer_compress_chunk (512) or the smallest write, filled with buffer_pattern or zeros;
    /// 100 % is zero_buffers.
    #[test]
    fn compressible_buffers_as_fio_fills_them() {
        let pattern = |text: &str| {
            let js = jobs(&format!("[a]\nsize=1m\nrw=write\n{text}")).unwrap();
            assert!(js.unsupported.is_empty(), "{text}: {:?}", js.unsupported);
            js.jobs[0].settings.pattern()
        };
        let chunked = |pct, chunk, fill| Pattern::Chunked(Chunked { pct, chunk, fill });
        assert_eq!(
            pattern("buffer_compress_percentage=50\n"),
            chunked(50, 512, None)
        );
        assert_eq!(
            pattern("bs=128k\nbuffer_compress_percentage=30\nbuffer_compress_chunk=0\n"),
            chunked(30, 128 << 10, None)
        );
        // the chunk never exceeds the smallest write; 4 KiB pieces of zeros are Compress
        assert_eq!(
            pattern("bsrange=2k-16k\nbuffer_compress_percentage=25\nbuffer_compress_chunk=8k\n"),
            chunked(25, 2048, None)
        );
        assert_eq!(
            pattern("bs=8k\nbuffer_compress_percentage=25\nbuffer_compress_chunk=4k\n"),
            Pattern::Compress(25)
        );
        // the compressible part holds buffer_pattern, and zero_buffers gives way to both
        let deadbeef = PatternBytes::new(&[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(
            pattern("buffer_pattern=0xdeadbeef\nbuffer_compress_percentage=40\nzero_buffers=1\n"),
            chunked(40, 512, deadbeef)
        );
        assert_eq!(
            pattern("zero_buffers=1\nbuffer_pattern=0xdeadbeef\n"),
            Pattern::Bytes(deadbeef.unwrap())
        );
        assert_eq!(
            pattern("buffer_compress_percentage=100\nzero_buffers=1\n"),
            Pattern::Zeros
        );
        assert_eq!(
            pattern("buffer_compress_percentage=100\nrefill_buffers=1\n"),
            Pattern::Zeros
        );
        // never scrambled (io_u.c: no buffer of a job given the option is, even at 0 %)
        assert_eq!(pattern("buffer_compress_percentage=100\n"), Pattern::Zeros);
        assert_eq!(pattern("buffer_compress_percentage=0\n"), Pattern::Once);
        assert_eq!(pattern("scramble_buffers=1\n"), Pattern::Scrambled);
        // verified writes: one piece the length of the write (fio's verify fill)
        assert_eq!(
            pattern("verify=crc32c\nbuffer_compress_percentage=33\nbuffer_pattern=\"abc\"\n"),
            chunked(33, u32::MAX, PatternBytes::new(b"abc"))
        );
        assert_eq!(
            pattern("verify=crc32c\nbuffer_compress_percentage=100\n"),
            Pattern::Random
        );
        // buffer_pattern turns refilling off in a job that does not read (so far), as fio's
        // callback does: after dedupe_percentage that is fio's start-up buffers again
        let js =
            jobs("[a]\nsize=1m\nrw=write\ndedupe_percentage=50\nbuffer_pattern=0xab\n").unwrap();
        assert!(
            js.unsupported[0].why.contains("buffer_pattern after it"),
            "{:?}",
            js.unsupported
        );
        for ok in [
            "[a]\nsize=1m\nrw=write\nbuffer_pattern=0xab\ndedupe_percentage=50\n",
            "[a]\nsize=1m\nrw=randrw\ndedupe_percentage=50\nbuffer_pattern=0xab\n",
        ] {
            assert!(jobs(ok).unwrap().unsupported.is_empty(), "{ok}");
        }
        // a compressible share refills them again (fixup_options), refill_buffers not given
        let js = jobs(
            "[a]\nsize=1m\nrw=write\ndedupe_percentage=50\nbuffer_pattern=0xab\nbuffer_compress_percentage=40\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let s = &js.jobs[0].settings;
        assert_eq!(
            s.layout_data().map(|d| d.pattern),
            Some(chunked(40, 512, PatternBytes::new(&[0xab])))
        );
        // with dedupe and no share the layout is random, as fio's fill
        let js = jobs("[a]\nsize=1m\nrw=randrw\ndedupe_percentage=50\nzero_buffers=1\n").unwrap();
        assert_eq!(js.jobs[0].settings.layout_data(), None);
        // a pattern is written again after a read only where fio refills: the callback looks
        // at the rw given so far
        let refill = |text: &str| {
            let js = jobs(text).unwrap();
            js.jobs[0]
                .settings
                .workload(0, 1 << 20, 1, 1)
                .refill_after_read
        };
        assert!(refill("[a]\nsize=1m\nrw=randrw\nbuffer_pattern=0xab\n"));
        assert!(!refill(
            "[global]\nrw=write\nbuffer_pattern=0xab\n[a]\nsize=1m\nrw=randrw\n"
        ));
        assert!(!refill(
            "[a]\nsize=1m\nrw=randrw\nbuffer_pattern=0xab\nrefill_buffers=0\n"
        ));
        // scramble_buffers=1 given stamps buffers filled once: refused where ssdlab would not
        for text in [
            "buffer_pattern=0xab\nscramble_buffers=1\n",
            "zero_buffers=1\nscramble_buffers=1\n",
        ] {
            let js = jobs(&format!("[a]\nsize=1m\nrw=write\n{text}")).unwrap();
            assert!(
                js.unsupported
                    .iter()
                    .any(|u| u.why.contains("scramble_buffers=1 with")),
                "{text}: {:?}",
                js.unsupported
            );
        }
        for text in [
            "scramble_buffers=1\nbuffer_pattern=0xab\n",
            "zero_buffers=1\n",
            "scramble_buffers=1\n",
        ] {
            let js = jobs(&format!("[a]\nsize=1m\nrw=write\n{text}")).unwrap();
            assert!(js.unsupported.is_empty(), "{text}: {:?}", js.unsupported);
        }
        // what fio writes differently is refused, naming it: its start-up buffers again
        let js = jobs("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=50\nrefill_buffers=0\n")
            .unwrap();
        assert!(
            js.unsupported[0]
                .why
                .contains("refill_buffers=0 with buffer_compress_percentage=50"),
            "{:?}",
            js.unsupported
        );
    }

    #[test]
    fn block_size_mixes_and_distributions() {
        // fio's examples/jesd219.fio
        let js = jobs(
            "[JESD219]\nrw=randrw\nnorandommap\nrwmixread=40\n\
             bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3\n\
             blockalign=4k\nrandom_distribution=zoned:50/5:30/15:20/80\n",
        )
        .unwrap();
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let s = &js.jobs[0].settings;
        let w = s.workload(0, 1 << 30, 1, 1);
        assert_eq!(
            (w.bs, w.align),
            (65536, 4096),
            "512-byte I/Os at 4k-aligned offsets"
        );
        let b = w.block_sizes.clone().expect("a split");
        assert_eq!(b.read, b.write);
        assert_eq!(b.bounds(), (512, 65536));
        assert!(matches!(w.distribution, Distribution::Zoned { ref read, .. } if read.len() == 3));
        w.validate().unwrap();
        // bsrange, a size per direction, and fio's default centre-less distributions.
        let js = jobs(
            "[a]\nrw=randread\nbsrange=4k-16k\nrandom_distribution=zipf:1.2\n\
             [b]\nrw=randrw\nbs=4k,16k\n[c]\nrw=randread\nrandom_distribution=pareto\n\
             [d]\nrw=randread\nrandom_distribution=normal:10:0.5\n\
             [e]\nrw=randread\nrandom_distribution=zoned_abs:60/10m:40/1g\n\
             [f]\nrw=randwrite\nbs=4k\nba=1k\n",
        )
        .unwrap();
        let w: Vec<WorkloadSpec> = js
            .jobs
            .iter()
            .map(|j| j.settings.workload(0, 1 << 30, 1, 1))
            .collect();
        assert_eq!(
            w[0].block_sizes.as_ref().unwrap().read,
            BsChoice::Range(4096, 16384)
        );
        assert!(
            !w[0].random_map,
            "fio turns the map off for a skewed distribution"
        );
        assert_eq!(w[1].bs, 16384);
        assert_eq!(
            w[1].block_sizes.as_ref().unwrap().write,
            BsChoice::Fixed(16384)
        );
        assert!(matches!(w[2].distribution, Distribution::Pareto { h, .. } if h == 0.2));
        assert!(
            matches!(w[3].distribution, Distribution::Normal { dev, center: Some(c) } if dev == 10.0 && c == 0.5)
        );
        assert!(
            matches!(&w[4].distribution, Distribution::ZonedAbs { read, .. } if read[0].size == 10 << 20)
        );
        assert!(
            !w[5].random_map,
            "fio turns the map off for blockalign below bs"
        );
        for text in [
            "[a]\nrandom_distribution=zipf:1\n",
            "[a]\nrandom_distribution=pareto:1.5\n",
            "[a]\nrandom_distribution=zoned:50/5:30/15\n",
            "[a]\nrandom_distribution=lognormal\n",
            "[a]\nbssplit=4k/80:8k/:16k/:32k/30\n",
        ] {
            assert!(jobs(text).is_err(), "{text}");
        }
        // Runs fio runs differently than ssdlab could: refused, named.
        for (text, what) in [
            ("[a]\nrw=randrw\nbs=4k,16k\n", "smallest read size"),
            (
                "[a]\nrw=randread\nbs=8k\nba=4k\nrandom_distribution=zipf:1.2\n",
                "blockalign",
            ),
            (
                "[a]\nrw=randread\nrandom_distribution=sequence:1,2\n",
                "sequence",
            ),
            ("[a]\nrw=write\nbsrange=4k-16k\nverify=md5\n", "verify"),
        ] {
            let js = jobs(text).unwrap();
            assert!(
                js.unsupported
                    .iter()
                    .any(|u| format!("{u:?}").contains(what)),
                "{text}: {:?}",
                js.unsupported
            );
        }
        // A sequential mixed job may have a size per direction.
        assert!(jobs("[a]\nrw=rw\nbs=4k,16k\n")
            .unwrap()
            .unsupported
            .is_empty());
    }

    /// fio's continue_on_error classes and ignore_error lists (str_ignore_error_cb): names
    /// fio knows or numbers, ':' within a class, ',' between read, write and verify; a list
    /// turns its class on.
    #[test]
    fn continue_on_error_and_ignore_error_as_fio() {
        let nf = |t: &str| jobs(t).unwrap().jobs.remove(0).settings.non_fatal;
        assert_eq!(nf("[a]\n").classes, 0);
        assert_eq!(nf("[a]\ncontinue_on_error=io\n").classes, 3);
        assert_eq!(nf("[a]\ncontinue_on_error=1\n").classes, 7);
        let n = nf("[a]\nignore_error=,ENOSPC:-122\n");
        assert_eq!(n.classes, 2);
        assert!(n.lists[1].contains(28) && n.lists[1].contains(122));
        assert!(!n.lists[1].contains(5), "the list replaces fio's default");
        assert!(n.lists[0].contains(5) && !n.lists[0].contains(28));
        // continue_on_error after ignore_error sets the classes again, as in fio
        assert_eq!(
            nf("[a]\nignore_error=EIO\ncontinue_on_error=none\n").classes,
            0
        );
        assert_eq!(nf("[a]\nignore_error=\n"), nf("[a]\n"));
        for bad in [
            "ignore_error=EWHAT",
            "ignore_error=0",
            "ignore_error=1,2,3,4",
        ] {
            assert!(jobs(&format!("[a]\n{bad}\n")).is_err(), "{bad}");
        }
    }

    /// fio's startdelay range: each clone's delay drawn from it, in whole microseconds.
    #[test]
    fn startdelay_ranges_are_drawn_per_clone() {
        let s = |t: &str| jobs(t).unwrap().jobs.remove(0).settings;
        let one = s("[a]\nstartdelay=2\n");
        assert_eq!(one.start_delay(7), 2_000_000_000);
        let r = s("[a]\nstartdelay=1-3\n");
        let draws: Vec<u64> = (0..64).map(|seed| r.start_delay(seed)).collect();
        assert!(draws
            .iter()
            .all(|&d| (1_000_000_000..=3_000_000_000).contains(&d) && d % 1000 == 0));
        let distinct: std::collections::BTreeSet<_> = draws.iter().collect();
        assert!(distinct.len() > 60, "{distinct:?}");
        assert_eq!(s("[a]\nstartdelay=1:1\n").start_delay(3), 1_000_000_000);
        assert!(jobs("[a]\nstartdelay=3-1\n").is_err());
    }

    #[test]
    fn stop_conditions_follow_fio() {
        let s = |t: &str| jobs(t).unwrap().jobs.remove(0).settings;
        let st = s("[a]\nsize=1m\nloops=3\n").stop(1 << 20, 2);
        assert_eq!(st.bytes, Some(6 << 20));
        assert_eq!(st.time_ns, None);
        let st = s("[a]\nio_size=4m\nnumber_ios=100\n").stop(1 << 20, 1);
        assert_eq!((st.bytes, st.ios), (Some(4 << 20), Some(100)));
        // number_ios counts per loop (exceeds_number_ios: number_ios × loops)
        let st = s("[a]\nloops=3\nnumber_ios=30\n").stop(1 << 20, 2);
        assert_eq!(st.ios, Some(180));
        // io_size=N%: N % of the region per pass
        let st = s("[a]\nio_size=25%\nloops=2\n").stop(1 << 20, 1);
        assert_eq!(st.bytes, Some(512 << 10));
        let e = jobs("[a]\nio_size=150%\n").unwrap_err().to_string();
        assert!(e.contains("io_size") && e.contains("150%"), "{e}");
        let st = s("[a]\ntime_based\nruntime=5\n").stop(1 << 20, 4);
        assert_eq!((st.bytes, st.time_ns), (None, Some(5_000_000_000)));
        // time_based without a runtime does not run forever: the size bounds it.
        let st = s("[a]\ntime_based\n").stop(1 << 20, 1);
        assert_eq!(st.bytes, Some(1 << 20));
    }

    #[test]
    fn job_files_after_the_first_start_fresh_behind_a_stonewall() {
        let env = FakeEnv::default();
        let p = Parser::new(&env);
        let mut s = p
            .text(b"[global]\nbs=8k\n[a]\n", Path::new("1.fio"), 0)
            .unwrap();
        s.extend(p.text(b"[b]\n[c]\n", Path::new("2.fio"), 1).unwrap());
        let js = resolve(&s).unwrap();
        assert_eq!(
            js.jobs[1].settings.block_size(),
            4096,
            "globals do not cross files"
        );
        assert!(js.jobs[1].settings.stonewall);
        let waves: Vec<usize> = js.jobs.iter().map(|j| j.wave).collect();
        assert_eq!(waves, vec![0, 1, 1]);
    }

    #[test]
    fn rates_and_offset_increments() {
        let js = jobs(
            "[a]\nrw=randread\nrate_iops=500\n[b]\nrw=write\nbs=64k\nrate=1m\n\
             [c]\nrw=randrw\nrate_iops=100\n[d]\nnumjobs=4\noffset_increment=1g\n",
        )
        .unwrap();
        // fio's rate_bps: rate_iops times the direction's smallest size
        assert_eq!(js.jobs[0].settings.rate_bps(), [500 * 4096; 3]);
        assert_eq!(
            js.jobs[0].settings.workload(0, 1 << 30, 1, 1).rate_bps,
            [500 * 4096; 3]
        );
        assert_eq!(js.jobs[1].settings.rate_bps(), [1 << 20; 3]);
        // a mixed job caps each direction; rate=,N caps the writes alone
        assert!(js.unsupported.is_empty(), "{:?}", js.unsupported);
        let mixed = jobs(
            "[a]\nrw=randrw\nrate=,2m\n[b]\nrw=randwrite\nbssplit=4k/50:64k/50\nrate_iops=10\n",
        )
        .unwrap();
        assert_eq!(mixed.jobs[0].settings.rate_bps(), [0, 2 << 20, 2 << 20]);
        assert_eq!(mixed.jobs[1].settings.rate_bps(), [40960; 3]);
        assert!(mixed.unsupported.is_empty(), "{:?}", mixed.unsupported);
        // fio refuses rate with rate_iops
        let e = jobs("[a]\nrate=1m\nrate_iops=10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mutually exclusive"), "{e}");
        assert_eq!(
            js.jobs[3].settings.offset_increment,
            Some(Size::Bytes(1 << 30))
        );
    }

    #[test]
    fn filenames() {
        assert_eq!(split_filenames("a:b"), vec!["a", "b"]);
        assert_eq!(split_filenames("c\\:d"), vec!["c:d"]);
        let js = jobs("[a]\nfilename=/dev/sda:/dev/sdb\n").unwrap();
        assert!(js.unsupported.is_empty());
        // fio's filename adds to the files the job has (its global section's, its own)
        let js = jobs("[global]\nfilename=x\n[a]\nfilename=y\nfilename=c\\:d\n[b]\n").unwrap();
        let names = |i: usize| split_filenames(js.jobs[i].settings.filename.as_deref().unwrap());
        assert_eq!(names(0), vec!["x", "y", "c:d"]);
        assert_eq!(names(1), vec!["x"]);
    }

    #[test]
    fn several_files() {
        let js = jobs("[a]\nnrfiles=3\nfilesize=1m-4m\nfile_service_type=roundrobin:4\n").unwrap();
        let s = &js.jobs[0].settings;
        assert_eq!(
            (s.nrfiles, s.filesize, s.filesize_max, s.file_service),
            (3, Some(1 << 20), Some(4 << 20), FileService::RoundRobin(4))
        );
        for (v, want) in [
            ("sequential", FileService::Sequential),
            ("random", FileService::Random(1)),
            ("random:3", FileService::Random(3)),
            ("roundrobin", FileService::RoundRobin(1)),
        ] {
            let js = jobs(&format!("[a]\nfile_service_type={v}\n")).unwrap();
            assert_eq!(js.jobs[0].settings.file_service, want, "{v}");
        }
        let js = jobs("[a]\nfile_service_type=zipf:1.2\n").unwrap();
        assert_eq!(js.unsupported.len(), 1, "{:?}", js.unsupported);
        assert!(jobs("[a]\nfile_service_type=lru\n").is_err());
    }
}
