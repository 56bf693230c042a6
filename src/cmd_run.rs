//! `ssdlab run`: one workload on a file, block device, stripe set, the null target, or a
//! simulated drive or array.
//!
//! Order of business: every flag is checked against the others (contradictions are refused, not
//! ignored), the output path is checked against every input (no output may name a target, member
//! or preset file), then the engine plans the targets (nothing written yet), lays files out, and
//! runs. Exit codes: 0, 1 (I/O errors, or a failure after something was written), 2 (bad input,
//! nothing written), 128 + signal (interrupted; results so far are printed).

use crate::cli::{Failure, EXIT_BAD_INPUT, EXIT_FAILED};
use crate::exit::{engine_failure, exit_code_for};
use crate::output::{self, check_writable_path, emit, note_once};
use crate::results::keep;
use crate::signals;
use crate::status;
use anyhow::{anyhow, Result};
use ssdlab_engine::{
    check_state_files, EngineError, Member, RealOptions, RealTarget, RunOutputs, SimOptions,
    SimSession, SimTarget, StateFileError,
};
use ssdlab_report::html::HtmlExporter;
use ssdlab_report::logs::LogKind;
use ssdlab_report::{Exporter, Format};
use ssdlab_stats::RunResult;
use ssdlab_target::Named;
use std::path::{Path, PathBuf};

mod args;
mod ranks;
use args::flags;
pub use args::{LogArgs, RunArgs};
pub use ranks::run_on_ranks;
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
