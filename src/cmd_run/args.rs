//! `ssdlab run`'s arguments (clap) and the same flags as plain values for the engine's checks
//! and options ([`flags`]).

use crate::cli::{positive_size_arg, positive_u32, size_arg, OutputArgs, WorkloadArgs};
use anyhow::{anyhow, Result};
use clap::Args;
use ssdlab_engine::{RunFlags, TargetFlags};
use ssdlab_report::logs::LogRequest;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// File or block device to test. A missing file is created (needs --span); a short one is
    /// extended with data; nothing is ever truncated. /dev/null and /dev/zero take --span as
    /// their size (buffered I/O only).
    #[arg(long, visible_alias = "filename", value_name = "PATH", conflicts_with_all = ["null", "raid0", "sim"])]
    pub(super) target: Option<PathBuf>,
    /// Use the null target: I/O completes at once; measures ssdlab's own overhead.
    #[arg(long, conflicts_with_all = ["raid0", "sim"])]
    pub(super) null: bool,
    /// Simulate a drive: a preset name (see `ssdlab drives`) or a preset TOML file.
    #[arg(long, value_name = "PRESET", conflicts_with = "raid0")]
    pub(super) sim: Option<String>,
    /// Number of simulated drives (default 1); more than one builds a RAID 0 array.
    #[arg(long, value_parser = positive_u32)]
    pub(super) drives: Option<u32>,
    /// State of the simulated drive before the run: fresh (trimmed; the default), full, steady
    /// (random-written).
    #[arg(long)]
    pub(super) state: Option<String>,
    /// Start the simulated drives from a state written by --save-state instead of --state (the
    /// same preset, --set overrides, --drives, --stripe and adapter flags as when it was saved;
    /// anything else is refused).
    #[arg(long, value_name = "FILE")]
    pub(super) load_state: Option<PathBuf>,
    /// After the run, write the simulated drives' complete state to FILE, for --load-state (a
    /// new file renamed into place once complete: FILE may be the --load-state file, to carry
    /// one drive from run to run).
    #[arg(long, value_name = "FILE")]
    pub(super) save_state: Option<PathBuf>,
    /// Override a preset parameter, e.g. --set ftl.mapping_unit=512 --set nand.channels=4.
    /// Overrides apply together, in any order; a geometry change scales the user capacity
    /// with the raw capacity (the preset's over-provisioning) unless
    /// ftl.user_capacity_bytes is set too.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) sets: Vec<String>,
    /// The host adapter of the simulated drives: chipset (Intel RST chipset RAID: every
    /// member's data crosses the chipset's 2 GB/s DMI 2.0 link) or none (straight to the
    /// drives). Default: chipset for arrays of SATA drives, none for a single drive and for
    /// NVMe arrays. The flags below change single settings of it.
    #[arg(long, value_name = "MODEL", value_parser = |s: &str| s.parse::<ssdlab_ssdsim::AdapterModel>())]
    pub(super) adapter: Option<ssdlab_ssdsim::AdapterModel>,
    /// Shared uplink bandwidth of the simulated host adapter in bytes/s (e.g. 1600m for DMI 1.0).
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    pub(super) uplink: Option<u64>,
    /// Per-request driver/adapter overhead of the simulated host adapter (default 0).
    #[arg(long, value_parser = crate::cli::duration_arg, allow_hyphen_values = true)]
    pub(super) adapter_overhead: Option<u64>,
    /// TRIM does not reach the simulated array's members (old chipset RAID).
    #[arg(long)]
    pub(super) no_trim_passthrough: bool,
    /// Give the simulated array's RAID driver a write-back cache of SIZE in host memory (like
    /// Intel RST's volume write-back cache): writes complete once copied into it and reach the
    /// members behind the host's back, 32 per member at a time.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    pub(super) adapter_cache: Option<u64>,
    /// Precondition the simulated drive by workload before the run, as SNIA's PTS does:
    /// steps such as "seqwrite 2x, randwrite 4k 1x over 8GiB" write the measured region (or
    /// SIZE from its start) that many times at QD 32 (block size defaults: 128k sequential,
    /// 4k random). They run after --state (or --load-state). Their writes go through the
    /// drive's FTL (mapping, allocation, GC) without timing, at the FTL's speed; on a drive
    /// loaded with --load-state, and with --precondition-timed, they run on the simulator's
    /// clock.
    #[arg(long, value_name = "STEPS")]
    pub(super) precondition: Option<String>,
    /// Run the --precondition steps on the simulator's clock, request by request (slower; each
    /// step then reports its simulated time and IOPS, and the SLC cache and background GC act
    /// between steps as they would in time).
    #[arg(long, requires = "precondition")]
    pub(super) precondition_timed: bool,
    /// Run the workload in rounds, each as long as the run, until SNIA PTS's steady-state test
    /// passes: the last 5 rounds' IOPS within 20 % of their average and their best-fit line's
    /// excursion within 10 % (at most 25 rounds). The last round is the result; the rounds and
    /// the verdict are reported with it.
    #[arg(long)]
    pub(super) steady_state: bool,
    /// A userspace RAID 0 stripe set over these members (files, block devices, or null:SIZE),
    /// laid out like Linux md raid0.
    #[arg(long, value_name = "A,B[,C…]", value_delimiter = ',')]
    pub(super) raid0: Vec<String>,
    /// Stripe (chunk) size of --raid0 or of a simulated array (default 512k, mdadm's).
    #[arg(long, value_parser = size_arg, allow_hyphen_values = true)]
    pub(super) stripe: Option<u64>,
    #[command(flatten)]
    pub(super) workload: WorkloadArgs,
    /// I/O engine for real targets: auto (io_uring, else sync; the default), io_uring, sync.
    #[arg(long, value_parser = ["auto", "io_uring", "sync"])]
    pub(super) engine: Option<String>,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub(super) buffered: bool,
    /// io_uring: submit as soon as N I/Os are queued (fio's iodepth_batch_submit; default 1);
    /// 0 = one system call per batch of refills.
    #[arg(long, value_name = "N")]
    pub(super) submit_batch: Option<u32>,
    /// io_uring: poll for completions instead of waiting for interrupts (IORING_SETUP_IOPOLL,
    /// fio's hipri). Needs O_DIRECT and a device with poll queues (NVMe with poll_queues=N);
    /// refused otherwise.
    #[arg(long)]
    pub(super) hipri: bool,
    /// io_uring: a kernel thread takes submissions from the ring, so submitting needs no system
    /// call (IORING_SETUP_SQPOLL, fio's sqthread_poll). Its CPU time is not in ssdlab's figures.
    #[arg(long)]
    pub(super) sqthread_poll: bool,
    /// io_uring: registered (fixed) buffers: auto (when the kernel allows; the default), on
    /// (refuse when it cannot), off (fio's fixedbufs=0).
    #[arg(long, value_name = "auto|on|off", value_parser = ["auto", "on", "off"])]
    pub(super) fixedbufs: Option<String>,
    /// io_uring: register the target files with the ring: on (the default) or off (fio's
    /// registerfiles=0).
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    pub(super) registerfiles: Option<String>,
    /// Allow writes to a block device (devices with a filesystem, partitions or users are still refused).
    #[arg(long)]
    pub(super) allow_destroy: bool,
    /// Keep going after I/O errors (they are counted and reported).
    #[arg(long)]
    pub(super) continue_on_error: bool,
    /// Where --verify keeps its written-map (which sectors verifying writes wrote, with which
    /// seed); default: under $SSDLAB_STATE_DIR, $XDG_STATE_HOME/ssdlab or ~/.local/state/ssdlab,
    /// named after the target's identity.
    #[arg(long, value_name = "FILE", requires = "verify")]
    pub(super) verify_map: Option<PathBuf>,
    /// Also keep the result in this results store (created if missing), next to sweeps, for
    /// `ssdlab report`.
    #[arg(long, value_name = "DB")]
    pub(super) store: Option<PathBuf>,
    /// The label of the stored run (default: the target and the workload).
    #[arg(long, value_name = "TEXT", requires = "store")]
    pub(super) label: Option<String>,
    /// Refuse to start when the run's memory estimate (I/O buffers, simulated drives) is above
    /// SIZE; the system's available memory and limits always apply.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    pub(super) max_memory: Option<u64>,
    /// Under mpirun: every rank takes its own slice of the one target: rank r gets
    /// [offset + r·span, offset + (r+1)·span) (IOR's shared-file mode); without --span the region
    /// from --offset to the end is split into equal slices. Otherwise each rank needs its own
    /// target ({rank}, {host}, {local_rank} in --target/--raid0 paths) when the workload writes.
    #[arg(long)]
    pub(super) segment_per_rank: bool,
    /// Under mpirun, with --ios/--bytes: stop every rank when the first one has done its share
    /// (IOR's stonewalling); the per-rank table says how far each got.
    #[arg(long)]
    pub(super) stonewall: bool,
    /// Inject a fault for testing error handling: eio@N, enospc@N, short@N (N-th I/O; +EVERY repeats).
    #[arg(long, hide = true, value_parser = |s: &str| s.parse::<ssdlab_engine::FaultPlan>().map_err(|e| e.to_string()))]
    pub(super) inject_fault: Option<ssdlab_engine::FaultPlan>,
    #[command(flatten)]
    pub(super) out: OutputArgs,
    /// Also write an HTML report of the run to FILE: IOPS and bandwidth over time, latency
    /// percentiles and histogram, the workload and the target (docs/REPORTS.md). Never a file
    /// the command reads.
    #[arg(long, value_name = "FILE")]
    pub(super) html: Option<PathBuf>,
    #[command(flatten)]
    pub(super) logs: LogArgs,
}

/// fio's time-series logs.
#[derive(Args, Debug, Clone, Default)]
pub struct LogArgs {
    /// Write fio's bandwidth log: NAME_bw.JOB.log per job (KiB/s per window).
    #[arg(long, value_name = "NAME")]
    pub write_bw_log: Option<PathBuf>,
    /// Write fio's IOPS log: NAME_iops.JOB.log per job.
    #[arg(long, value_name = "NAME")]
    pub write_iops_log: Option<PathBuf>,
    /// Write fio's latency logs: NAME_lat.JOB.log, NAME_clat.JOB.log and NAME_slat.JOB.log
    /// per job (mean ns per window).
    #[arg(long, value_name = "NAME")]
    pub write_lat_log: Option<PathBuf>,
    /// Averaging window of the logs in milliseconds (fio's log_avg_msec; default 1000). With a
    /// bandwidth or IOPS log, the run's bw_*/iops_* statistics use the same windows, as in fio.
    #[arg(long, value_name = "MSEC", value_parser = ssdlab_report::logs::parse_log_avg_msec)]
    pub log_avg_msec: Option<u64>,
}

impl LogArgs {
    /// The logs asked for (checked: --log-avg-msec needs a log).
    pub fn request(&self) -> Result<Option<(LogRequest, u64)>> {
        let req = LogRequest {
            bw: self.write_bw_log.clone(),
            iops: self.write_iops_log.clone(),
            lat: self.write_lat_log.clone(),
        };
        let window = req
            .checked_window(self.log_avg_msec)
            .map_err(|e| anyhow!(e))?;
        Ok(window.map(|msec| (req, msec)))
    }
}

/// The flags as plain values, for the engine's checks and options.
pub(super) fn flags(a: &RunArgs) -> RunFlags<'_> {
    RunFlags {
        target: TargetFlags {
            target: a.target.as_deref(),
            null: a.null,
            raid0: &a.raid0,
            sim: a.sim.as_deref(),
            drives: a.drives,
            stripe: a.stripe,
            state: a.state.as_deref(),
            sets: &a.sets,
            adapter: ssdlab_ssdsim::AdapterChoice {
                model: a.adapter,
                uplink_bytes_per_sec: a.uplink,
                per_request_overhead_ns: a.adapter_overhead,
                trim_passthrough: a.no_trim_passthrough.then_some(false),
                cache_bytes: a.adapter_cache,
                host: None,
            },
        },
        load_state: a.load_state.is_some(),
        save_state: a.save_state.is_some(),
        precondition: a.precondition.as_deref(),
        precondition_timed: a.precondition_timed,
        steady_state: a.steady_state,
        stonewall: a.stonewall,
        segment_per_rank: a.segment_per_rank,
        stop_budget: a.workload.stop_budget().is_some(),
        engine: a.engine.as_deref(),
        buffered: a.buffered,
        submit_batch: a.submit_batch,
        hipri: a.hipri,
        sqthread_poll: a.sqthread_poll,
        fixedbufs: a.fixedbufs.as_deref(),
        registerfiles: a.registerfiles.as_deref(),
        allow_destroy: a.allow_destroy,
        continue_on_error: a.continue_on_error,
        verify_map: a.verify_map.as_deref(),
    }
}
