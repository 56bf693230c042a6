//! What a failure exits with: engine errors by their class, a finished run by how it ended,
//! store errors by whether results were being written.

use crate::cli::{Failure, EXIT_BAD_INPUT, EXIT_FAILED};
use crate::signals;
use anyhow::anyhow;
use ssdlab_engine::{EngineError, ErrorClass};
use ssdlab_stats::RunResult;

/// The exit code and message of an engine error.
pub fn engine_failure(e: EngineError) -> Failure {
    Failure::new(engine_exit_code(&e), e)
}

/// [`engine_failure`] for a workload another front end built: its settings named the way `n`
/// does (an fio job's options, a sweep file's keys), after `context` (`job j: `).
pub fn engine_failure_in(
    e: EngineError,
    n: &dyn ssdlab_workload::Naming,
    context: &str,
) -> Failure {
    Failure::new(engine_exit_code(&e), anyhow!("{context}{}", e.render(n)))
}

fn engine_exit_code(e: &EngineError) -> u8 {
    match e.class() {
        ErrorClass::BadInput => EXIT_BAD_INPUT,
        ErrorClass::Failed => EXIT_FAILED,
        ErrorClass::Interrupted => signals::exit_code(),
    }
}

/// The exit code of a finished run.
pub fn exit_code_for(r: &RunResult) -> u8 {
    if r.interrupted {
        signals::exit_code()
    } else if !r.errors.is_empty() {
        EXIT_FAILED
    } else {
        0
    }
}

/// The exit code of a finished fio job, as fio's (`exit_value`): failed when an error ended
/// it; the errors `continue_on_error` went past do not count.
pub fn fio_exit_code_for(r: &RunResult) -> u8 {
    if r.interrupted {
        signals::exit_code()
    } else if r.error_tally.fatal != 0 {
        EXIT_FAILED
    } else {
        0
    }
}

/// The exit code for a store failure: an I/O failure (full disk, I/O error) happened while
/// writing results, so it is not bad input.
pub fn store_failure(e: ssdlab_store::StoreError) -> Failure {
    let code = if e.is_io_failure() {
        EXIT_FAILED
    } else {
        EXIT_BAD_INPUT
    };
    Failure::new(code, e)
}
