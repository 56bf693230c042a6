//! The closed-loop engine: keeps exactly QD operations outstanding per worker on a [`Backend`]
//! (a completion frees a slot, the next op is issued), stops on time, I/O count, bytes, an error
//! or a stop flag raised from outside, and records every completion into a
//! [`ssdlab_stats::Recorder`].
//!
//! The loop is generic over the backend and therefore over the clock: real backends use the wall
//! clock, simulated ones virtual time. [`run_real`] wires the loop to real targets (files, block
//! devices, stripe sets, the null target; planned and laid out by `ssdlab-target`, I/O through
//! `ssdlab-io`) with one thread per worker; [`run_sim`] to simulated drives and arrays.
//!
//! [`TargetSpec`] is the one typed description of what a command measures or simulates, parsed
//! from the shared target flags, checked against the command's outputs, and built here.
//! [`RunFlags`] checks the flags of `ssdlab run` against each other before anything is planned;
//! [`SimSteps::run`] sequences a simulated run (state file or new session, preconditioning,
//! measurement) and [`SimSession::save_state_file`] writes its drives back.
//!
//! Nothing here is process-global: the caller passes the stop flag its signal handler raises.

mod aging;
mod backend;
mod backlog;
mod engine_loop;
mod fault;
mod iolog;
mod precondition;
mod real;
mod replay;
mod run_flags;
mod sim;
mod sim_steps;
mod state_file;
mod stripe;
mod target_spec;

pub use aging::{run_aging, AgingOptions};
pub use backend::{Backend, Cqe};
pub use engine_loop::{
    merge_outcomes, run_loop, run_streams, BacklogOpts, Control, DataOpts, ErrnoList, Flow,
    FlowShare, Found, LoopOutcome, NonFatal, OnEnd, OnPass, Progress, SteadyGroup, SteadyMember,
    Stream, Unit,
};
pub use fault::{FaultBackend, FaultKind, FaultPlan, FaultPlanError};
pub use iolog::{check_iolog_target, merge_iologs, IologTarget};
pub use precondition::{
    check_precondition, measure_on_session, parse_precondition, precondition, precondition_noted,
    run_to_steady_state, PreClock, PreDone, PreStep, PreTimed,
};
pub use real::{
    build_result, check_real, check_real_jobs, run_real, run_real_jobs, EngineChoice, Member,
    RealJob, RealOptions, RealTarget, RunOutput,
};
pub use run_flags::{check_state_files, RunFlags, RunOutputs};
pub use sim::{
    build_sim, check_sim_run, check_sim_run_touch, check_sim_target, run_sim, run_sim_prepared,
    run_sim_recorded, sim_memory_estimate, sim_memory_need, sim_run_memory_estimate, sim_touch,
    sim_touch_with, SimJob, SimMemoryNeed, SimOptions, SimOutput, SimSession, SimTarget,
    UntimedWrite,
};
pub use sim_steps::SimSteps;
pub use ssdlab_io::{FixedBufs, RingOptions};
pub use ssdlab_ssdsim::Touch;
pub use state_file::{StateFileError, MAX_STATE_FILE};
pub use target_spec::{
    check_real_inputs, load_drive, preset_file, real_inputs, SimSpec, TargetFlags, TargetSpec,
    DEFAULT_STRIPE,
};

use ssdlab_target::{Cleanup, LayoutError, PlanError};
use ssdlab_workload::{Field, Flags, Naming};
use std::path::PathBuf;

/// Called once per run when every worker is set up and before the measured phase begins (before
/// the ramp), with whether every worker set up fine. Returning an error cancels the run before
/// its first I/O: the run ends with [`EngineError::Setup`] carrying the message, and a layout is
/// given back. Runs coordinated from outside (the ranks of an MPI job) wait for each other here.
#[derive(Clone, Copy)]
pub struct StartHook<'a>(pub &'a (dyn Fn(bool) -> Result<(), String> + Sync));

impl std::fmt::Debug for StartHook<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartHook")
    }
}

/// A run that cannot be done as asked (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("--precondition {0}")]
    Precondition(String),
    #[error("{0}: the file would be created or extended, and fio's --readonly refuses to lay out a file (\"refusing extend of file due to read-only\"); nothing was written")]
    ReadOnlyLayout(std::path::PathBuf),
    #[error("--verify needs data on a real target (a file, a device or a stripe set of them)")]
    VerifyNeedsData,
    #[error("--verify needs a real target: simulated drives carry no data")]
    VerifyOnSim,
    #[error("the RAID 0 stripe set needs the io_uring engine (--engine io_uring or auto)")]
    StripeNeedsUring,
    #[error("io_uring is not available on this system (kernel too old, or disabled by sysctl/seccomp); use --engine sync")]
    UringUnavailable,
    #[error("{why}, and the RAID 0 stripe set needs io_uring")]
    UringNeededForStripe { why: String },
    #[error("io_uring cannot hold --qd {qd} in one ring here ({err}); lower --qd (--jobs spreads the same total over several rings) or use --engine sync")]
    Ring { qd: u32, err: String },
    #[error("the sync engine needs one thread per outstanding I/O: --qd × --jobs = {threads} is more than {max}; use io_uring (--engine auto)")]
    SyncThreads { threads: u64, max: u64 },
    #[error("{what} need about {need}, more than {bound} allows ({limit}); ask for less, or set --max-memory if the estimate is too careful")]
    Memory {
        what: String,
        need: String,
        limit: String,
        bound: String,
    },
    #[error("a simulated array (--drives > 1) needs --stripe")]
    SimArrayNeedsStripe,
    #[error("--drives must be at least 1")]
    NoDrives,
    #[error("{}", Invalid::render_sim_unaligned(&Flags, *.field, *.value, *.block))]
    SimUnaligned {
        field: Field,
        value: u64,
        block: u64,
    },
    #[error("--stripe {stripe}: {why}")]
    SimStripe { stripe: String, why: String },
    #[error("the trace reaches {end} on {what}, beyond the region of {span} it replays into; use a larger target or region, or replay_scale/replay_align")]
    TraceBeyond {
        end: String,
        span: String,
        what: String,
    },
    #[error("the trace has {trims} trims, which ssdlab issues only to simulated drives; add replay_skip=trim to replay the rest on a real target")]
    TrimOnReal { trims: u64 },
    #[error("{path} is {what}: trims are BLKDISCARD, which only a block device takes (fio ends such a job with error 25, \"Inappropriate ioctl for device\"); trim a block device, the null engine or a simulated drive")]
    TrimOnFile { path: String, what: &'static str },
    #[error("trims on a RAID 0 array of real targets: ssdlab trims one block device, the null target or a simulated drive")]
    TrimStripe,
    #[error("{flag} applies to the io_uring engine, not to the {engine} engine")]
    RingOnly { flag: &'static str, engine: String },
    #[error("hipri (polled completions, IORING_SETUP_IOPOLL) needs O_DIRECT: remove --buffered / direct=0")]
    HipriBuffered,
    #[error("hipri (polled completions, IORING_SETUP_IOPOLL): {why}")]
    Hipri { why: String },
    #[error("io_uring cannot be set up as asked: {err}")]
    RingSetup { err: String },
    #[error("a verifying job shares a file or device with another job running with it: verification needs its target to itself")]
    VerifyConcurrent,
    #[error("{path}: {err}")]
    Path { path: String, err: String },
    #[error("{0}")]
    Output(String),
    /// A saved drive state that cannot be loaded (another drive, corrupt, truncated).
    #[error("{0}")]
    State(String),
}

impl Invalid {
    fn render_sim_unaligned(n: &dyn Naming, field: Field, value: u64, block: u64) -> String {
        format!(
            "{} is not a multiple of the simulated drive's {block}-byte sectors",
            n.setting(field, value)
        )
    }

    /// The message, naming the settings the way `n` does (`Display` names ssdlab's flags).
    pub fn render(&self, n: &dyn Naming) -> String {
        match self {
            Invalid::SimUnaligned {
                field,
                value,
                block,
            } => Invalid::render_sim_unaligned(n, *field, *value, *block),
            Invalid::SimStripe { stripe, why } => {
                format!("{} {stripe}: {why}", n.name(Field::Stripe))
            }
            e => e.to_string(),
        }
    }
}

/// How an error ends the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Bad input: refused before anything was written (exit 2).
    BadInput,
    /// Something was written (and given back where possible), then it failed (exit 1).
    Failed,
    /// Stopped from outside (Ctrl-C, SIGTERM) before the run started; layout given back.
    Interrupted,
}

/// Errors that stop a run before it starts (bad input, unusable target) or break its setup.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Spec(#[from] ssdlab_workload::SpecError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Sim(#[from] ssdlab_ssdsim::ConfigError),
    /// The trace of a replay cannot be read or replayed.
    #[error(transparent)]
    Trace(#[from] ssdlab_workload::TraceError),
    /// The run finished but its `write_iolog` could not be written.
    #[error("{0}")]
    Iolog(String),
    /// Laying out files failed or was interrupted (what was written is given back).
    #[error(transparent)]
    Layout(LayoutError),
    /// The written-map of `--verify` cannot be read (or belongs to another target).
    #[error(transparent)]
    VerifyMap(#[from] ssdlab_target::written::MapError),
    /// The engine could not be set up after the files were laid out (they are given back).
    #[error("{message}{}", cleanup_text(cleanup))]
    Setup {
        message: String,
        /// The layout had written something (now given back as `cleanup` says).
        wrote: bool,
        cleanup: Vec<(PathBuf, Cleanup)>,
    },
}

fn cleanup_text(c: &[(PathBuf, Cleanup)]) -> String {
    c.iter()
        .map(|(p, c)| format!("; {}: {c}", p.display()))
        .collect()
}

impl EngineError {
    /// The message, naming the workload's settings the way `n` does: `Display` names them as
    /// ssdlab's command line does (`--bs 3`), an fio job or a sweep file has its own names.
    pub fn render(&self, n: &dyn Naming) -> String {
        match self {
            EngineError::Spec(e) => e.render(n),
            EngineError::Plan(e) => e.render(n),
            EngineError::Invalid(e) => e.render(n),
            e => e.to_string(),
        }
    }

    /// How this error ends the command (see [`ErrorClass`]).
    pub fn class(&self) -> ErrorClass {
        match self {
            EngineError::Layout(LayoutError::Refused(_)) => ErrorClass::BadInput,
            EngineError::Layout(LayoutError::Interrupted { .. }) => ErrorClass::Interrupted,
            EngineError::Layout(LayoutError::Failed { .. })
            | EngineError::Layout(LayoutError::RefusedAfter { .. }) => ErrorClass::Failed,
            EngineError::Setup { wrote: true, .. } => ErrorClass::Failed,
            EngineError::Iolog(_) => ErrorClass::Failed,
            _ => ErrorClass::BadInput,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_target::{DeviceError, LayoutError};

    #[test]
    fn error_classes() {
        let bad: EngineError = Invalid::VerifyNeedsData.into();
        assert_eq!(bad.class(), ErrorClass::BadInput);
        let refused = EngineError::Layout(LayoutError::Refused(DeviceError::EmptyPath));
        assert_eq!(refused.class(), ErrorClass::BadInput);
        let failed = EngineError::Layout(LayoutError::Failed {
            path: "x".into(),
            what: "cannot extend the file",
            err: std::io::Error::from_raw_os_error(28),
            cleanup: Cleanup::Removed,
        });
        assert_eq!(failed.class(), ErrorClass::Failed);
        assert!(failed
            .to_string()
            .contains("removed the file this run created"));
        let stopped = EngineError::Layout(LayoutError::Interrupted {
            path: "x".into(),
            cleanup: Cleanup::Truncated(4096),
        });
        assert_eq!(stopped.class(), ErrorClass::Interrupted);
        let setup = |wrote| EngineError::Setup {
            message: "cannot set up io_uring: x".into(),
            wrote,
            cleanup: vec![("a.img".into(), Cleanup::Removed)],
        };
        assert_eq!(setup(false).class(), ErrorClass::BadInput);
        assert_eq!(setup(true).class(), ErrorClass::Failed);
        assert_eq!(
            setup(true).to_string(),
            "cannot set up io_uring: x; a.img: removed the file this run created"
        );
    }
}
