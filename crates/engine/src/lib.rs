//! The closed-loop engine: keeps exactly QD operations outstanding per worker on a [`Backend`]
//! (a completion frees a slot, the next op is issued), stops on time, I/O count, bytes, an error
//! or Ctrl-C, and records every completion into a [`ssdlab_stats::Recorder`].
//!
//! The loop is generic over the backend and therefore over the clock: real backends use the wall
//! clock, simulated ones virtual time. [`run_real`] wires the loop to real targets (files, block
//! devices, the null target) with one thread per worker.

mod backend;
mod engine_loop;
mod fault;
mod real;
mod sim;
mod stripe;

pub use backend::{Backend, Cqe};
pub use engine_loop::{run_loop, Control, DataOpts, LoopOutcome};
pub use fault::{FaultBackend, FaultKind, FaultPlan};
pub use real::{run_real, EngineChoice, Member, RealOptions, RealTarget, RunOutput};
pub use sim::{build_sim, run_sim, run_sim_prepared, SimTarget};

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Asks every running loop to stop issuing, drain and report (what a SIGINT handler calls).
pub fn request_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// The process-wide interrupt flag itself (for callers that poll it, such as sweeps).
pub fn interrupt_flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// True once [`request_interrupt`] was called.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Errors that stop a run before it starts (bad input, unusable target) or break it.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Spec(#[from] ssdlab_workload::SpecError),
    #[error(transparent)]
    Device(#[from] ssdlab_uring::device::DeviceError),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Io(String),
}
