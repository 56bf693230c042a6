//! `ssdlab run`: one workload on a file, block device, stripe set, the null target, or a
//! simulated drive or array.
//!
//! Order of business: every flag is checked against the others (contradictions are refused, not
//! ignored), the output path is checked against every input (no output may name a target, member
//! or preset file), then the engine plans the targets (nothing written yet), lays files out, and
//! runs. Exit codes: 0, 1 (I/O errors, or a failure after something was written), 2 (bad input,
//! nothing written), 128 + signal (interrupted; results so far are printed).

use crate::cli::{
    positive_size_arg, positive_u32, size_arg, Failure, OutputArgs, WorkloadArgs, EXIT_BAD_INPUT,
    EXIT_FAILED,
};
use crate::exit::{engine_failure, exit_code_for};
use crate::output::{self, check_writable_path, emit, note_once};
use crate::results::keep;
use crate::signals;
use crate::status;
use anyhow::{anyhow, Result};
use clap::Args;
use ssdlab_engine::{
    check_state_files, EngineError, Member, RealOptions, RealTarget, RunFlags, RunOutputs,
    SimOptions, SimSession, SimTarget, StateFileError, TargetFlags,
};
use ssdlab_report::html::HtmlExporter;
use ssdlab_report::logs::LogKind;
use ssdlab_report::logs::LogRequest;
use ssdlab_report::{Exporter, Format};
use ssdlab_stats::RunResult;
use ssdlab_target::Named;
use std::path::{Path, PathBuf};

mod ranks;
pub use ranks::run_on_ranks;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// File or block device to test. A missing file is created (needs --span); a short one is
    /// extended with data; nothing is ever truncated. /dev/null and /dev/zero take --span as
    /// their size (buffered I/O only).
    #[arg(long, visible_alias = "filename", value_name = "PATH", conflicts_with_all = ["null", "raid0", "sim"])]
    target: Option<PathBuf>,
    /// Use the null target: I/O completes at once; measures ssdlab's own overhead.
    #[arg(long, conflicts_with_all = ["raid0", "sim"])]
    null: bool,
    /// Simulate a drive: a preset name (see `ssdlab drives`) or a preset TOML file.
    #[arg(long, value_name = "PRESET", conflicts_with = "raid0")]
    sim: Option<String>,
    /// Number of simulated drives (default 1); more than one builds a RAID 0 array.
    #[arg(long, value_parser = positive_u32)]
    drives: Option<u32>,
    /// State of the simulated drive before the run: fresh (trimmed; the default), full, steady
    /// (random-written).
    #[arg(long)]
    state: Option<String>,
    /// Start the simulated drives from a state written by --save-state instead of --state (the
    /// same preset, --set overrides, --drives, --stripe and adapter flags as when it was saved;
    /// anything else is refused).
    #[arg(long, value_name = "FILE")]
    load_state: Option<PathBuf>,
    /// After the run, write the simulated drives' complete state to FILE, for --load-state (a
    /// new file renamed into place once complete: FILE may be the --load-state file, to carry
    /// one drive from run to run).
    #[arg(long, value_name = "FILE")]
    save_state: Option<PathBuf>,
    /// Override a preset parameter, e.g. --set ftl.mapping_unit=512 --set nand.channels=4.
    /// Overrides apply together, in any order; a geometry change scales the user capacity
    /// with the raw capacity (the preset's over-provisioning) unless
    /// ftl.user_capacity_bytes is set too.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// The host adapter of the simulated drives: chipset (Intel RST chipset RAID: every
    /// member's data crosses the chipset's 2 GB/s DMI 2.0 link) or none (straight to the
    /// drives). Default: chipset for arrays of SATA drives, none for a single drive and for
    /// NVMe arrays. The flags below change single settings of it.
    #[arg(long, value_name = "MODEL", value_parser = |s: &str| s.parse::<ssdlab_ssdsim::AdapterModel>())]
    adapter: Option<ssdlab_ssdsim::AdapterModel>,
    /// Shared uplink bandwidth of the simulated host adapter in bytes/s (e.g. 1600m for DMI 1.0).
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    uplink: Option<u64>,
    /// Per-request driver/adapter overhead of the simulated host adapter (default 0).
    #[arg(long, value_parser = crate::cli::duration_arg, allow_hyphen_values = true)]
    adapter_overhead: Option<u64>,
    /// TRIM does not reach the simulated array's members (old chipset RAID).
    #[arg(long)]
    no_trim_passthrough: bool,
    /// Give the simulated array's RAID driver a write-back cache of SIZE in host memory (like
    /// Intel RST's volume write-back cache): writes complete once copied into it and reach the
    /// members behind the host's back, 32 per member at a time.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    adapter_cache: Option<u64>,
    /// Precondition the simulated drive by workload before the run, as SNIA's PTS does:
    /// steps such as "seqwrite 2x, randwrite 4k 1x over 8GiB" write the measured region (or
    /// SIZE from its start) that many times at QD 32 (block size defaults: 128k sequential,
    /// 4k random). They run after --state (or --load-state). Their writes go through the
    /// drive's FTL (mapping, allocation, GC) without timing, at the FTL's speed; on a drive
    /// loaded with --load-state, and with --precondition-timed, they run on the simulator's
    /// clock.
    #[arg(long, value_name = "STEPS")]
    precondition: Option<String>,
    /// Run the --precondition steps on the simulator's clock, request by request (slower; each
    /// step then reports its simulated time and IOPS, and the SLC cache and background GC act
    /// between steps as they would in time).
    #[arg(long, requires = "precondition")]
    precondition_timed: bool,
    /// Run the workload in rounds, each as long as the run, until SNIA PTS's steady-state test
    /// passes: the last 5 rounds' IOPS within 20 % of their average and their best-fit line's
    /// excursion within 10 % (at most 25 rounds). The last round is the result; the rounds and
    /// the verdict are reported with it.
    #[arg(long)]
    steady_state: bool,
    /// A userspace RAID 0 stripe set over these members (files, block devices, or null:SIZE),
    /// laid out like Linux md raid0.
    #[arg(long, value_name = "A,B[,C…]", value_delimiter = ',')]
    raid0: Vec<String>,
    /// Stripe (chunk) size of --raid0 or of a simulated array (default 512k, mdadm's).
    #[arg(long, value_parser = size_arg, allow_hyphen_values = true)]
    stripe: Option<u64>,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// I/O engine for real targets: auto (io_uring, else sync; the default), io_uring, sync.
    #[arg(long, value_parser = ["auto", "io_uring", "sync"])]
    engine: Option<String>,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    buffered: bool,
    /// io_uring: submit as soon as N I/Os are queued (fio's iodepth_batch_submit; default 1);
    /// 0 = one system call per batch of refills.
    #[arg(long, value_name = "N")]
    submit_batch: Option<u32>,
    /// io_uring: poll for completions instead of waiting for interrupts (IORING_SETUP_IOPOLL,
    /// fio's hipri). Needs O_DIRECT and a device with poll queues (NVMe with poll_queues=N);
    /// refused otherwise.
    #[arg(long)]
    hipri: bool,
    /// io_uring: a kernel thread takes submissions from the ring, so submitting needs no system
    /// call (IORING_SETUP_SQPOLL, fio's sqthread_poll). Its CPU time is not in ssdlab's figures.
    #[arg(long)]
    sqthread_poll: bool,
    /// io_uring: registered (fixed) buffers: auto (when the kernel allows; the default), on
    /// (refuse when it cannot), off (fio's fixedbufs=0).
    #[arg(long, value_name = "auto|on|off", value_parser = ["auto", "on", "off"])]
    fixedbufs: Option<String>,
    /// io_uring: register the target files with the ring: on (the default) or off (fio's
    /// registerfiles=0).
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    registerfiles: Option<String>,
    /// Allow writes to a block device (devices with a filesystem, partitions or users are still refused).
    #[arg(long)]
    allow_destroy: bool,
    /// Keep going after I/O errors (they are counted and reported).
    #[arg(long)]
    continue_on_error: bool,
    /// Where --verify keeps its written-map (which sectors verifying writes wrote, with which
    /// seed); default: under $SSDLAB_STATE_DIR, $XDG_STATE_HOME/ssdlab or ~/.local/state/ssdlab,
    /// named after the target's identity.
    #[arg(long, value_name = "FILE", requires = "verify")]
    verify_map: Option<PathBuf>,
    /// Also keep the result in this results store (created if missing), next to sweeps, for
    /// `ssdlab report`.
    #[arg(long, value_name = "DB")]
    store: Option<PathBuf>,
    /// The label of the stored run (default: the target and the workload).
    #[arg(long, value_name = "TEXT", requires = "store")]
    label: Option<String>,
    /// Refuse to start when the run's memory estimate (I/O buffers, simulated drives) is above
    /// SIZE; the system's available memory and limits always apply.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    max_memory: Option<u64>,
    /// Under mpirun: every rank takes its own slice of the one target: rank r gets
    /// [offset + r·span, offset + (r+1)·span) (IOR's shared-file mode); without --span the region
    /// from --offset to the end is split into equal slices. Otherwise each rank needs its own
    /// target ({rank}, {host}, {local_rank} in --target/--raid0 paths) when the workload writes.
    #[arg(long)]
    segment_per_rank: bool,
    /// Under mpirun, with --ios/--bytes: stop every rank when the first one has done its share
    /// (IOR's stonewalling); the per-rank table says how far each got.
    #[arg(long)]
    stonewall: bool,
    /// Inject a fault for testing error handling: eio@N, enospc@N, short@N (N-th I/O; +EVERY repeats).
    #[arg(long, hide = true, value_parser = |s: &str| s.parse::<ssdlab_engine::FaultPlan>().map_err(|e| e.to_string()))]
    inject_fault: Option<ssdlab_engine::FaultPlan>,
    #[command(flatten)]
    out: OutputArgs,
    /// Also write an HTML report of the run to FILE: IOPS and bandwidth over time, latency
    /// percentiles and histogram, the workload and the target (docs/REPORTS.md). Never a file
    /// the command reads.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    logs: LogArgs,
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
fn flags(a: &RunArgs) -> RunFlags<'_> {
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

/// Refuses flags that do not apply to the chosen target, instead of ignoring them.
fn check_flags(a: &RunArgs) -> Result<()> {
    flags(a).check().map_err(|e| anyhow!(e))
}

/// The simulated target of `run --sim NAME`, after checking that no output names its preset
/// file.
fn run_sim_target(a: &RunArgs, outputs: &[Named<'_>]) -> Result<SimTarget> {
    flags(a)
        .sim_target(outputs, note_once)
        .map_err(|e| anyhow!(e))
}

/// Writes the session's drives to `path` (`--save-state`), whole or not at all.
fn save_sim_state(path: &Path, session: &SimSession) -> Result<(), Failure> {
    // (a second Ctrl-C while it is written ends ssdlab at once: the half-written file goes)
    session
        .save_state_file(path, crate::signals::remove_on_exit)
        .map_err(|e| Failure::new(EXIT_FAILED, anyhow!(e)))
}

/// The HTML exporter of a run, with the preset of a simulated target as an appendix.
fn html_exporter(sim: Option<&SimTarget>) -> HtmlExporter {
    HtmlExporter::for_run(sim.map(|t| (t.name.as_str(), &t.drive)))
}

/// Writes the `--html` report of a run.
fn write_html(path: Option<&Path>, sim: Option<&SimTarget>, r: &RunResult) -> Result<(), Failure> {
    let Some(path) = path else { return Ok(()) };
    let bytes = html_exporter(sim)
        .serialize(std::slice::from_ref(r))
        .map_err(|e| Failure::new(EXIT_FAILED, e))?;
    output::write_file(path, &bytes).map_err(|e| {
        Failure::new(
            EXIT_FAILED,
            anyhow!("cannot write the HTML report {}: {e}", path.display()),
        )
    })?;
    output::note(&format!("wrote the HTML report to {}", path.display()));
    Ok(())
}

/// The real target of `--raid0`, `--target` or `--null` (no `--sim`).
fn real_target(a: &RunArgs) -> Result<RealTarget> {
    flags(a).real_target().map_err(|e| anyhow!(e))
}

/// No output may name the target's files or devices (a RAID 0's members among them).
fn check_target_inputs(outputs: &[Named<'_>], target: &RealTarget) -> Result<()> {
    ssdlab_engine::check_real_inputs(target, outputs).map_err(|e| anyhow!(e))
}

pub fn cmd_run(a: RunArgs) -> Result<u8, Failure> {
    check_flags(&a)?;
    flags(&a).check_one_process().map_err(|e| anyhow!(e))?;
    for p in a
        .target
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .chain(a.raid0.iter().cloned())
    {
        if ssdlab_cluster::rank::has_placeholder(&p) {
            return Err(anyhow!(
                "{p}: {{rank}}, {{host}} and {{local_rank}} name one target per rank of an MPI job (mpirun -n N ssdlab run …)"
            )
            .into());
        }
    }
    let spec = a.workload.to_spec()?;
    flags(&a)
        .check_submit_batch(spec.qd)
        .map_err(|e| anyhow!(e))?;
    let exporter = a.out.exporter()?;
    let dest = a.out.dest();
    if let Some(p) = dest.file() {
        check_writable_path("--output", p).map_err(|e| anyhow!(e))?;
    }
    let logs = a.logs.request()?;
    let log_files: Vec<(PathBuf, LogKind, u32)> = logs
        .as_ref()
        .map(|(req, _)| req.files(spec.jobs))
        .unwrap_or_default();
    let log_config = logs.as_ref().map(|(req, msec)| req.config(*msec, &spec));
    let outputs = RunOutputs {
        output: dest.file(),
        logs: log_files
            .iter()
            .map(|(path, kind, _)| Named {
                role: kind.run_flag(),
                path,
            })
            .collect(),
        html: a.html.as_deref(),
        store: a.store.as_deref(),
        verify_map: a.verify_map.as_deref(),
    };
    let mut outputs = outputs.check().map_err(|e| anyhow!(e))?;
    let stop = Some(signals::stop_flag());
    // An existing store that is not an ssdlab store (or damaged, or read-only) is refused before
    // the run; a missing one is created only once there is a result to keep.
    let mut store = match &a.store {
        Some(p) if p.exists() => {
            let st = ssdlab_store::Store::open(p).map_err(crate::exit::store_failure)?;
            st.require_writable("the run must be stored")
                .map_err(crate::exit::store_failure)?;
            Some(st)
        }
        _ => None,
    };
    // a write after the run that failed: reported once the result is printed
    let mut deferred: Option<Failure> = None;

    if a.sim.is_some() {
        check_state_files(
            &mut outputs,
            a.load_state.as_deref(),
            a.save_state.as_deref(),
        )
        .map_err(|e| anyhow!(e))?;
        let t = run_sim_target(&a, &outputs)?;
        let opts = SimOptions {
            stop,
            max_memory: a.max_memory,
            log: log_config,
            building: Some(crate::signals::building),
            ..Default::default()
        };
        let steps = flags(&a).sim_steps().map_err(|e| anyhow!(e))?;
        // The simulated drives' tables grow with what the run writes: say before starting
        // when that is a lot, and budget it.
        let need = steps
            .check(&spec, &t, a.max_memory)
            .map_err(engine_failure)?;
        if need.bytes >= 1 << 30 {
            eprintln!(
                "ssdlab: this simulation needs up to {} of memory: {}",
                ssdlab_workload::format_size(need.bytes),
                need.what
            );
        }
        let (result, session) = steps
            .run(
                &spec,
                &t,
                a.load_state.as_deref(),
                a.save_state.is_some(),
                &opts,
                &|f| status::with_status_line(&spec, true, f),
            )
            .map_err(|e| match e {
                StateFileError::File(m) => anyhow!("--load-state {m}").into(),
                StateFileError::Engine(e) => engine_failure(e),
            })?;
        // The result is printed first: what is written after it (the store, the drive state)
        // can fail (a full disk) or be cut short (a second Ctrl-C) without losing it.
        let exporter: Box<dyn Exporter> = if a.out.format() == Format::Html {
            Box::new(html_exporter(Some(&t)))
        } else {
            exporter
        };
        emit(
            exporter.as_ref(),
            &dest,
            &log_files,
            std::slice::from_ref(&result),
        )?;
        write_html(a.html.as_deref(), Some(&t), &result)?;
        if let Err(e) = keep(&mut store, a.store.as_deref(), a.label.as_deref(), &result) {
            deferred.get_or_insert(e);
        }
        if let (Some(path), Some(session)) = (&a.save_state, &session) {
            if result.interrupted || crate::signals::stopped() {
                output::note(&format!(
                    "--save-state {}: not written, the run was interrupted",
                    path.display()
                ));
            } else if let Err(e) = save_sim_state(path, session) {
                deferred.get_or_insert(e);
            }
        }
        return finish(&result, deferred);
    }

    let target = real_target(&a)?;
    check_target_inputs(&outputs, &target)?;
    let opts = RealOptions {
        on_note: output::note,
        fault: a.inject_fault,
        stop,
        max_memory: a.max_memory,
        log: log_config,
        ..flags(&a).real_options()
    };
    let out = status::with_status_line(&spec, false, |progress| {
        ssdlab_engine::run_real(&spec, &target, &RealOptions { progress, ..opts })
    })
    .map_err(engine_failure)?;
    // the measurement is printed first: a store that cannot be written (a full disk) is
    // reported after it, and does not throw the result away
    emit(
        exporter.as_ref(),
        &dest,
        &log_files,
        std::slice::from_ref(&out.result),
    )?;
    write_html(a.html.as_deref(), None, &out.result)?;
    let deferred = keep(
        &mut store,
        a.store.as_deref(),
        a.label.as_deref(),
        &out.result,
    )
    .err();
    finish(&out.result, deferred)
}

/// The exit of a run whose result has been printed: a write that failed after it (`--store`,
/// `--save-state`) is reported now (exit 1), a signal that came during those writes is the
/// signal's exit code, else the result's.
fn finish(result: &ssdlab_stats::RunResult, deferred: Option<Failure>) -> Result<u8, Failure> {
    if let Some(f) = deferred {
        return Err(Failure::new(
            f.code,
            anyhow!("{} (the result was printed; it was not kept there)", f.err),
        ));
    }
    if crate::signals::stopped() && !result.interrupted {
        output::note("interrupted after the run; its result is above");
        return Ok(crate::signals::exit_code());
    }
    Ok(exit_code_for(result))
}
