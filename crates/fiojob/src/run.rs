//! Running the waves of a planned job set ([`run_waves`]: the jobs of a wave together, waves one
//! after the other, fio's verify phase, clones' `write_iolog` parts merged), what they
//! measured, and the report entries made of it by fio's rules (clones and reporting groups,
//! `group_reporting`, fio's one-line job header); what `--parse-only` prints and the log files'
//! contents.

use crate::plan::{log_style, verify_spec, LogFile, Unit};
use crate::{ExitWhat, Job, JobSet, Unified};
use ssdlab_engine::{
    EngineError, LoopOutcome, Progress, RealJob, RealOptions, SimJob, SimOptions, SimSession,
    SimTarget, SteadyGroup,
};
use ssdlab_report::logs::{render_job_log, LogStyle};
use ssdlab_report::{FioJob, Ignored};
use ssdlab_stats::{JobLog, LogConfig, Recorder, RunResult};
use ssdlab_workload::WorkloadSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a unit measured.
#[derive(Clone)]
pub struct Measured {
    /// Its result.
    pub result: RunResult,
    /// Its completions.
    pub recorder: Recorder,
    /// How its run ended.
    pub outcome: LoopOutcome,
    /// Each worker's result and completions, when its clones are reported one by one.
    pub workers: Vec<(RunResult, Recorder)>,
    /// Why the job's `write_iolog` was not kept.
    pub iolog_error: Option<String>,
}

/// A unit the engine refuses to run, found before anything is written.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct WaveCheckError {
    /// The index of the job (in [`JobSet::jobs`]) whose unit alone is refused; `None` when the
    /// jobs of a wave together are.
    pub job: Option<usize>,
    /// Why (boxed: an engine error is large).
    pub error: Box<EngineError>,
}

impl WaveCheckError {
    fn of_job(error: EngineError, job: usize) -> Self {
        WaveCheckError {
            job: Some(job),
            error: Box::new(error),
        }
    }
}

/// Every unit of every wave checked by the engine before anything is written, as `ssdlab run`
/// checks its run (targets planned, block-device safety, engine and ring limits, memory): on
/// the simulated target `sim`, or each real unit alone (so that what is wrong with one is said
/// in its words), then what each wave's units need together, then each verifying unit's
/// read-back.
pub fn check_waves(
    js: &JobSet,
    units: &[Unit],
    sim: Option<&SimTarget>,
    max_memory: Option<u64>,
) -> Result<(), WaveCheckError> {
    let nwaves = js.jobs.iter().map(|j| j.wave).max().unwrap_or(0) + 1;
    let wave_units =
        |w: usize| -> Vec<&Unit> { units.iter().filter(|u| js.jobs[u.job].wave == w).collect() };
    for w in 0..nwaves {
        let us = wave_units(w);
        match sim {
            Some(t) => {
                for u in &us {
                    ssdlab_engine::check_sim_run(&u.spec, t, max_memory)
                        .map_err(|e| WaveCheckError::of_job(e, u.job))?;
                }
            }
            None => {
                // Each job alone first, so that what is wrong with one is said in its words
                // (its options as written, where); then what the wave's jobs need together.
                let specs: Vec<std::borrow::Cow<'_, WorkloadSpec>> =
                    us.iter().map(|u| checked_spec(u)).collect();
                for (u, spec) in us.iter().zip(&specs) {
                    let (t, o) = u.real.as_ref().expect("real unit");
                    ssdlab_engine::check_real(spec, t, o)
                        .map_err(|e| WaveCheckError::of_job(e, u.job))?;
                }
                let jobs: Vec<RealJob<'_>> = us
                    .iter()
                    .zip(&specs)
                    .map(|(u, spec)| {
                        let (t, o) = u.real.as_ref().expect("real unit");
                        RealJob {
                            spec,
                            target: t,
                            opts: o,
                            iolog: None,
                        }
                    })
                    .collect();
                ssdlab_engine::check_real_jobs(&jobs).map_err(|error| WaveCheckError {
                    job: None,
                    error: Box::new(error),
                })?;
                for u in us.iter().filter(|u| u.verify_back) {
                    let (t, o) = u.real.as_ref().expect("real unit");
                    ssdlab_engine::check_real(&verify_spec(&u.spec), t, o)
                        .map_err(|e| WaveCheckError::of_job(e, u.job))?;
                }
            }
        }
    }
    Ok(())
}

/// The clones of a job write one `write_iolog`, as in fio: each unit sharing a log writes a
/// part of its own (its [`Unit::iolog`] is pointed at it), merged into the log when its wave
/// has run. Returns each shared log's wave, path and parts.
pub fn iolog_parts(js: &JobSet, units: &mut [Unit]) -> Vec<(usize, PathBuf, Vec<PathBuf>)> {
    let mut merges: Vec<(usize, PathBuf, Vec<PathBuf>)> = Vec::new();
    let sharing: Vec<usize> = units
        .iter()
        .map(|u| {
            u.iolog.as_ref().map_or(0, |t| {
                units
                    .iter()
                    .filter(|v| v.iolog.as_ref().is_some_and(|x| x.path == t.path))
                    .count()
            })
        })
        .collect();
    for i in 0..units.len() {
        let Some(t) = &units[i].iolog else { continue };
        let dest = t.path.clone();
        if sharing[i] < 2 {
            continue;
        }
        let k = match merges.iter().position(|(_, d, _)| *d == dest) {
            Some(k) => k,
            None => {
                merges.push((js.jobs[units[i].job].wave, dest.clone(), Vec::new()));
                merges.len() - 1
            }
        };
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let part = dest.with_file_name(format!(
            ".{name}.ssdlab-{}-clone{}.log",
            std::process::id(),
            merges[k].2.len()
        ));
        merges[k].2.push(part.clone());
        if let Some(t) = &mut units[i].iolog {
            t.path = part;
        }
    }
    merges
}

/// A wave that did not run to its end, or a log that was not kept.
#[derive(Debug, thiserror::Error)]
pub enum WaveError {
    /// The engine refused or failed a run.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The measurement stands and is reported; a log was not kept (the message says which).
    #[error("{0}")]
    Log(String),
}

/// What the caller supplies to run the waves: the stop flag its signal handler raises and how
/// to ask whether it was raised, the status line it shows around each wave, the memory limit,
/// and whether a job's clones are reported one by one.
pub struct WaveHooks<'a> {
    /// Raised from outside (Ctrl-C) to stop a run.
    pub stop: &'static AtomicBool,
    /// Whether the command was asked to stop.
    pub stopped: &'a dyn Fn() -> bool,
    /// Runs a wave (the closure) with a status line for a workload on real or simulated
    /// (`bool`) targets, or without one.
    #[allow(clippy::type_complexity)]
    pub status: &'a dyn Fn(&WorkloadSpec, bool, &mut dyn FnMut(Option<&Progress>)),
    /// Refuse a run whose memory estimate is above this many bytes.
    pub max_memory: Option<u64>,
    /// Whether a job's clones are reported one by one.
    pub per_worker: &'a dyn Fn(&Job) -> bool,
}

/// What the waves measured.
pub struct Waves {
    /// Each unit's measurement (`None`: its wave did not run).
    pub measured: Vec<Option<Measured>>,
    /// Each fio thread's log, its measured time and its line style.
    pub thread_logs: BTreeMap<u32, (JobLog, u64, LogStyle)>,
    /// Why the waves stopped early, or the first log that was not kept.
    pub failure: Option<WaveError>,
}

/// What [`check_waves`] checks of a unit: its spec, or for a unit sized when it starts (over
/// a file a `fill_device` job grows) its spec over one block — its length is known only
/// then, and the engine checks the job again when it runs.
fn checked_spec(u: &Unit) -> std::borrow::Cow<'_, WorkloadSpec> {
    if u.sized_at_start.is_none() {
        return std::borrow::Cow::Borrowed(&u.spec);
    }
    std::borrow::Cow::Owned(over(&u.spec, u.spec.bs.max(1)))
}

/// `spec` over a region of `span` bytes from its offset, a pass of it when a pass was its
/// whole region.
fn over(spec: &WorkloadSpec, span: u64) -> WorkloadSpec {
    let mut s = spec.clone();
    if s.stop.bytes == s.span {
        s.stop.bytes = Some(span);
    }
    s.span = Some(span);
    s
}

/// `spec` over the file at `path` as long as the file is now (its region from the spec's
/// offset to the file's end, a pass of it), or `None` when the file is missing or ends at or
/// before that offset (the job then runs as planned, and finds what it finds).
fn sized_at_start(spec: &WorkloadSpec, path: &std::path::Path) -> Option<WorkloadSpec> {
    let len = std::fs::metadata(path).ok()?.len();
    let span = len.checked_sub(spec.offset).filter(|&n| n > 0)?;
    Some(over(spec, span))
}

/// Where a later phase of a unit's job (a loop, a verify phase) logs its I/Os: after what the
/// job logged so far, in the log its clones share when they do (their parts merged after the
/// wave); none once the log failed.
fn later_phase_log(
    u: &Unit,
    m: &Measured,
    merges: &[(usize, PathBuf, Vec<PathBuf>)],
) -> Option<ssdlab_engine::IologTarget> {
    let l = u.iolog.as_ref().filter(|_| m.iolog_error.is_none())?;
    Some(ssdlab_engine::IologTarget {
        path: merges
            .iter()
            .find(|(_, _, parts)| parts.contains(&l.path))
            .map_or_else(|| l.path.clone(), |(_, dest, _)| dest.clone()),
        after_us: Some((m.outcome.runtime_ns + m.outcome.ramp_ns) / 1000),
        ..l.clone()
    })
}

/// A later phase of a unit's job (a loop, a verify phase) added to what it measured: its
/// completions and time, and the result built again over them (`verified`: with the verify
/// counters; the clones' own results give way to the whole).
fn absorb(
    m: &mut Measured,
    spec: &WorkloadSpec,
    rec: &Recorder,
    out: &LoopOutcome,
    verified: bool,
) {
    m.recorder.merge(rec);
    m.outcome.runtime_ns += out.runtime_ns;
    m.outcome.interrupted |= out.interrupted;
    m.outcome.stopped_on_error |= out.stopped_on_error;
    let mut r = ssdlab_engine::build_result(
        spec,
        m.result.target.clone(),
        &m.recorder,
        m.outcome,
        m.result.timestamp_ms,
        m.result.cpu.clone(),
    );
    r.verify = verified.then(|| m.recorder.verify.clone());
    r.members = m.result.members.clone();
    r.disk_util = m.result.disk_util.clone();
    m.result = r;
    m.workers.clear();
}

/// Loop `lp` (from 0) of a job that reads back after each of its loops: one pass at most
/// (fio's `do_io` ends where the files are done), within what the job's budget of all its
/// loops leaves after the `written` bytes of the loops before (fio counts a job's bytes over
/// its loops: a job without a random map does them all in its first). Each loop draws what
/// the first drew when the job repeats its draws (fio's reseed with `randrepeat`), else anew.
fn one_loop(spec: &WorkloadSpec, written: u64, lp: u64) -> WorkloadSpec {
    let mut s = spec.clone();
    s.passes = Some(1);
    s.more_passes_below = None;
    s.stop.bytes = s.stop.bytes.map(|b| b.saturating_sub(written));
    if lp > 0 && !s.repeat_passes {
        s.seed = ssdlab_workload::gen::worker_seed(s.seed, lp as u32);
    }
    s
}

/// Runs the waves of `units` one after the other (the jobs of a wave together, on `session`
/// when simulated), each verifying write job's read-back after its wave (fio's verify phase),
/// and merges the clones' `write_iolog` parts (`merges`, from [`iolog_parts`]); parts a failed
/// or interrupted wave did not merge are removed. `unit_logs`: what the engine keeps for each
/// unit's logs; `unit_threads`: fio's thread number of each unit's first clone.
pub fn run_waves(
    js: &JobSet,
    units: &[Unit],
    unit_logs: &[Option<LogConfig>],
    unit_threads: &[u32],
    merges: &[(usize, PathBuf, Vec<PathBuf>)],
    mut session: Option<SimSession>,
    h: &WaveHooks<'_>,
) -> Waves {
    let nwaves = js.jobs.iter().map(|j| j.wave).max().unwrap_or(0) + 1;
    let mut measured: Vec<Option<Measured>> = vec![None; units.len()];
    // fio's verify_backlog: the writes each job has not read back when it ends (its verify
    // phase reads them)
    let unverified: Vec<std::sync::Mutex<Vec<ssdlab_workload::Op>>> =
        units.iter().map(|_| Default::default()).collect();
    let mut failure: Option<WaveError> = None;
    let mut thread_logs: BTreeMap<u32, (JobLog, u64, LogStyle)> = BTreeMap::new();
    // fio's exitall (one job asking for it sets it for the run): a job that ends stops the
    // jobs of its exit_what scope; `all` also cancels the waves not started yet. A job's own
    // exitall_on_error does the same when it ends on an error.
    let exitall = js.jobs.iter().any(|j| j.settings.exitall);
    let any_ender = exitall || js.jobs.iter().any(|j| j.settings.exitall_on_error);
    let cancelled = AtomicBool::new(false);
    // fio's flow control: one flow per flow id, holding the weight of every clone of its jobs
    // from the start (fio registers them as it parses the job file); each clone gives its
    // weight back when it ends.
    let flow_ids: Vec<i32> = {
        let mut ids: Vec<i32> = units
            .iter()
            .map(|u| &js.jobs[u.job].settings)
            .filter(|s| s.flow != 0)
            .map(|s| s.flow_id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let flows: Vec<ssdlab_engine::Flow> = flow_ids.iter().map(|_| Default::default()).collect();
    for u in units {
        let s = &js.jobs[u.job].settings;
        if let Some(k) = flow_ids
            .iter()
            .position(|&id| s.flow != 0 && id == s.flow_id)
        {
            for _ in 0..u.spec.jobs {
                flows[k].join(s.flow);
            }
        }
    }
    let flow_of = |i: usize| {
        let s = &js.jobs[units[i].job].settings;
        let k = flow_ids
            .iter()
            .position(|&id| s.flow != 0 && id == s.flow_id)?;
        Some(ssdlab_engine::FlowShare {
            flow: &flows[k],
            weight: s.flow,
            sleep_ns: s.flow_sleep_us as u64 * 1000,
        })
    };
    for w in 0..nwaves {
        if (h.stopped)() || cancelled.load(Ordering::Relaxed) {
            break;
        }
        let idx: Vec<usize> = (0..units.len())
            .filter(|&i| js.jobs[units[i].job].wave == w)
            .collect();
        let Some(&lead) = idx.first() else {
            continue;
        };
        let ends: Vec<AtomicBool> = idx.iter().map(|_| AtomicBool::new(false)).collect();
        let enders: Vec<Box<dyn Fn(bool) + Sync + '_>> = idx
            .iter()
            .map(|&i| {
                let me = &js.jobs[units[i].job];
                let scope: Vec<usize> = (0..idx.len())
                    .filter(|&k| {
                        me.settings.exit_what != ExitWhat::Group
                            || js.jobs[units[idx[k]].job].group == me.group
                    })
                    .collect();
                let all = me.settings.exit_what == ExitWhat::All;
                let on_error = me.settings.exitall_on_error;
                let (ends, cancelled) = (&ends, &cancelled);
                Box::new(move |failed: bool| {
                    if !(exitall || (on_error && failed)) {
                        return;
                    }
                    for &k in &scope {
                        ends[k].store(true, Ordering::Relaxed);
                    }
                    if all {
                        cancelled.store(true, Ordering::Relaxed);
                    }
                }) as Box<dyn Fn(bool) + Sync + '_>
            })
            .collect();
        let end_of = |k: usize| any_ender.then(|| ssdlab_engine::OnEnd(&*enders[k]));
        let stonewall_of = |k: usize| any_ender.then_some(&ends[k]);
        // fio's steadystate with group_reporting: the wave's units of one reporting group are
        // checked together, in fio's order of threads (the last one keeps the samples).
        let mut steady_members: Vec<(u32, Vec<usize>)> = Vec::new();
        for &i in &idx {
            let j = &js.jobs[units[i].job];
            if !j.settings.group_reporting || units[i].spec.steady.is_none() {
                continue;
            }
            match steady_members.iter_mut().find(|(g, _)| *g == j.group) {
                Some((_, m)) => m.push(i),
                None => steady_members.push((j.group, vec![i])),
            }
        }
        let steady_groups: Vec<SteadyGroup> = steady_members
            .iter()
            .map(|(_, m)| SteadyGroup::new(m.len()))
            .collect();
        let steady_member = |i: usize| {
            steady_members
                .iter()
                .zip(&steady_groups)
                .find_map(|((_, m), g)| m.iter().position(|&x| x == i).map(|k| g.member(k)))
        };
        // fio sizes a job when it starts: a job over a file a fill_device job grew takes the
        // file's length now.
        // (a job that reads back after each loop runs its first loop here)
        let sized: Vec<Option<WorkloadSpec>> = (0..units.len())
            .map(|i| {
                if !idx.contains(&i) {
                    return None;
                }
                let at_start = units[i]
                    .sized_at_start
                    .as_ref()
                    .and_then(|p| sized_at_start(&units[i].spec, p));
                if units[i].verify_loops > 1 {
                    return Some(one_loop(at_start.as_ref().unwrap_or(&units[i].spec), 0, 0));
                }
                at_start
            })
            .collect();
        let spec_of = |i: usize| sized[i].as_ref().unwrap_or(&units[i].spec);
        // The status line of `ssdlab run` (on a terminal): the wave's jobs report together;
        // its ETA follows the wave's first job.
        let simulated = session.is_some();
        let mut got: Option<Result<Vec<Measured>, WaveError>> = None;
        (h.status)(spec_of(lead), simulated, &mut |progress| {
            got = Some(match &mut session {
                Some(sess) => {
                    let jobs: Vec<SimJob<'_>> = idx
                        .iter()
                        .enumerate()
                        .map(|(k, &i)| SimJob {
                            spec: spec_of(i),
                            iolog: units[i].iolog.clone(),
                            log: unit_logs[i],
                            steady_group: steady_member(i),
                            stonewall: stonewall_of(k),
                            on_end: end_of(k),
                            flow: flow_of(i),
                        })
                        .collect();
                    let any_per_worker =
                        idx.iter().any(|&i| (h.per_worker)(&js.jobs[units[i].job]));
                    sess.run(
                        &jobs,
                        &SimOptions {
                            stop: Some(h.stop),
                            max_memory: h.max_memory,
                            per_worker: any_per_worker,
                            log: None,
                            progress,
                            ..Default::default()
                        },
                    )
                    .map(|outs| {
                        outs.into_iter()
                            .map(|o| Measured {
                                result: o.result,
                                recorder: o.recorder,
                                outcome: o.outcome,
                                workers: o.workers.into_iter().zip(o.worker_recorders).collect(),
                                iolog_error: o.iolog_error,
                            })
                            .collect()
                    })
                    .map_err(WaveError::Engine)
                }
                None => {
                    let opts: Vec<RealOptions<'_>> = idx
                        .iter()
                        .enumerate()
                        .map(|(k, &i)| {
                            let o = &units[i].real.as_ref().expect("real unit").1;
                            RealOptions {
                                progress,
                                steady_group: steady_member(i),
                                stonewall: stonewall_of(k).or(o.stonewall),
                                on_end: end_of(k),
                                flow: flow_of(i),
                                unverified: Some(&unverified[i])
                                    .filter(|_| units[i].spec.verify_backlog.is_some()),
                                ..o.clone()
                            }
                        })
                        .collect();
                    let jobs: Vec<RealJob<'_>> = idx
                        .iter()
                        .zip(&opts)
                        .map(|(&i, o)| {
                            let (t, _) = units[i].real.as_ref().expect("real unit");
                            RealJob {
                                spec: spec_of(i),
                                target: t,
                                opts: o,
                                iolog: units[i].iolog.clone(),
                            }
                        })
                        .collect();
                    ssdlab_engine::run_real_jobs(&jobs)
                        .map(|outs| {
                            outs.into_iter()
                                .map(|o| Measured {
                                    result: o.result,
                                    recorder: o.recorder,
                                    outcome: o.outcome,
                                    workers: o
                                        .workers
                                        .into_iter()
                                        .zip(o.worker_recorders)
                                        .collect(),
                                    iolog_error: o.iolog_error,
                                })
                                .collect()
                        })
                        .map_err(WaveError::Engine)
                }
            });
        });
        let got = got.expect("the status line runs the wave");
        match got {
            Ok(ms) => {
                // The engine numbers the wave's workers from 1 in the order of its jobs; fio
                // numbers its threads over the whole run.
                let mut local = 1u32;
                for (&i, mut m) in idx.iter().zip(ms) {
                    let n = units[i].spec.jobs;
                    for mut l in std::mem::take(&mut m.result.logs) {
                        let t = unit_threads[i] + l.job.saturating_sub(local);
                        l.job = t;
                        thread_logs.insert(
                            t,
                            (
                                l,
                                m.result.runtime_ns,
                                log_style(&js.jobs[units[i].job].settings),
                            ),
                        );
                    }
                    local += n;
                    // (the lines are kept once, here: the recorders keep only their windows)
                    for rec in
                        std::iter::once(&mut m.recorder).chain(m.workers.iter_mut().map(|(_, r)| r))
                    {
                        if let Some(l) = &mut rec.log {
                            l.clear_lines();
                        }
                    }
                    for (r, _) in &mut m.workers {
                        r.logs.clear();
                    }
                    // The measurement stands and is printed; the log is reported after it.
                    if let Some(e) = m.iolog_error.take() {
                        failure.get_or_insert(WaveError::Log(format!(
                            "{e} (the result was printed; the log was not kept)"
                        )));
                    }
                    measured[i] = Some(m);
                }
            }
            Err(f) => {
                failure = Some(f);
                break;
            }
        }
        for (_, dest, parts) in merges.iter().filter(|(mw, _, _)| *mw == w) {
            if let Err(e) = ssdlab_engine::merge_iologs(parts, dest) {
                failure.get_or_insert(WaveError::Log(format!(
                    "write_iolog {}: {e} (the result was printed; the log was not kept)",
                    dest.display()
                )));
            }
        }
        if failure.is_some() {
            break;
        }
        // fio's verify phase: read back what each verifying write job wrote — after each of
        // its loops, for a job that reads back after each (its later loops run here, each
        // after the verify phase before it).
        for &i in &idx {
            let u = &units[i];
            if !u.verify_back || (h.stopped)() {
                continue;
            }
            let Some(m) = measured[i].as_mut() else {
                continue;
            };
            for lp in 0..u.verify_loops {
                if lp > 0 {
                    // fio's next loop: a pass at most, within what its budget of all the loops
                    // leaves; one that writes nothing ends the job (`fio_mark_td_terminate`)
                    // without a verify phase
                    let written = m.recorder.kinds[ssdlab_workload::OpKind::Write.index()].bytes;
                    // (the first loop's spec: sized when its wave started)
                    let spec = one_loop(sized[i].as_ref().unwrap_or(&u.spec), written, lp);
                    if (h.stopped)() || spec.stop.bytes == Some(0) {
                        break;
                    }
                    let (t, o) = u.real.as_ref().expect("real unit");
                    let o = RealOptions {
                        log: None,
                        unverified: Some(&unverified[i])
                            .filter(|_| u.spec.verify_backlog.is_some()),
                        ..o.clone()
                    };
                    let iolog = later_phase_log(u, m, merges);
                    let w = match ssdlab_engine::run_real_jobs(&[ssdlab_engine::RealJob {
                        spec: &spec,
                        target: t,
                        opts: &o,
                        iolog,
                    }]) {
                        Ok(mut w) => w.remove(0),
                        Err(e) => {
                            failure = Some(WaveError::Engine(e));
                            break;
                        }
                    };
                    if let Some(e) = &w.iolog_error {
                        failure.get_or_insert(WaveError::Log(format!(
                            "{e} (the result was printed; the log was not kept whole)"
                        )));
                    }
                    let wrote = w.recorder.kinds[ssdlab_workload::OpKind::Write.index()].bytes;
                    m.outcome.budget_done = w.outcome.budget_done;
                    m.outcome.source_done = w.outcome.source_done;
                    let verified = m.result.verify.is_some();
                    absorb(m, &u.spec, &w.recorder, &w.outcome, verified);
                    if wrote == 0 {
                        break;
                    }
                }
                // fio verifies unless an error ended the write phase (`td->error`; the errors
                // continue_on_error went past do not).
                if m.result.error_tally.fatal != 0 || m.outcome.stopped_on_error {
                    break;
                }
                // fio verifies only when the write phase ended with its size: a runtime that ended
                // it first ends the job (`td->terminate`), without a verify phase.
                if !m.outcome.budget_done && !m.outcome.source_done {
                    let n = format!(
                    "job {}: the runtime ended the write phase before its size was written: no verify phase, as in fio{}",
                    js.jobs[u.job].name,
                    if u.spec.verify_backlog.is_some() {
                        " (verify_backlog read back what it reached while the job wrote)"
                    } else {
                        ""
                    }
                );
                    m.result.notes.push(n);
                    break;
                }
                let (t, o) = u.real.as_ref().expect("real unit");
                // (the logs are the job's own I/O: fio's verify phase reads are not in them)
                let o = RealOptions {
                    log: None,
                    // after fio's verify_backlog, what it has not read back, in its order
                    ops: u.spec.verify_backlog.map(|_| {
                        let mut left = unverified[i]
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        std::mem::take(&mut *left).into()
                    }),
                    ..o.clone()
                };
                // fio's write_iolog has the verify phase's reads too, after the job's I/Os
                let iolog = later_phase_log(u, m, merges);
                let vspec = verify_spec(&u.spec);
                let phase = ssdlab_engine::run_real_jobs(&[ssdlab_engine::RealJob {
                    spec: &vspec,
                    target: t,
                    opts: &o,
                    iolog,
                }])
                .map(|mut v| v.remove(0));
                match phase {
                    Ok(v) => {
                        if let Some(e) = &v.iolog_error {
                            failure.get_or_insert(WaveError::Log(format!(
                                "{e} (the result was printed; the log was not kept whole)"
                            )));
                        }
                        // (what the write phase read back too: fio's verify_backlog)
                        absorb(
                            m,
                            &u.spec,
                            &v.recorder,
                            &v.outcome,
                            v.result.verify.is_some(),
                        );
                    }
                    Err(e) => {
                        failure = Some(WaveError::Engine(e));
                        break;
                    }
                }
            }
            if failure.is_some() {
                break;
            }
        }
        if failure.is_some() {
            break;
        }
    }

    // fio prints the jobs that exitall (exit_what=all) cancelled before they started, with
    // nothing done.
    if cancelled.load(Ordering::Relaxed) && failure.is_none() && !(h.stopped)() {
        let last = measured.iter().flatten().last();
        if let Some((target, ts)) = last.map(|m| (m.result.target.clone(), m.result.timestamp_ms)) {
            for (i, u) in units.iter().enumerate() {
                if measured[i].is_some() {
                    continue;
                }
                let recorder = Recorder::default();
                let outcome = LoopOutcome {
                    stonewalled: true,
                    ..Default::default()
                };
                let zero = |spec: &WorkloadSpec| {
                    ssdlab_engine::build_result(
                        spec,
                        target.clone(),
                        &recorder,
                        outcome,
                        ts,
                        Default::default(),
                    )
                };
                let workers = if u.spec.jobs > 1 && !js.jobs[u.job].settings.group_reporting {
                    let one = WorkloadSpec {
                        jobs: 1,
                        ..u.spec.clone()
                    };
                    (0..u.spec.jobs)
                        .map(|_| (zero(&one), recorder.clone()))
                        .collect()
                } else {
                    Vec::new()
                };
                measured[i] = Some(Measured {
                    result: zero(&u.spec),
                    recorder: recorder.clone(),
                    outcome,
                    workers,
                    iolog_error: None,
                });
            }
        }
    }

    // Parts of clones' logs a failed or interrupted wave did not merge.
    for p in merges.iter().flat_map(|(_, _, parts)| parts) {
        let _ = std::fs::remove_file(p);
    }
    Waves {
        measured,
        thread_logs,
        failure,
    }
}

/// fio's one-line job description.
fn header(j: &Job, label: &str) -> String {
    let s = &j.settings;
    // fio's num2str with 4 digits: 4096B, 16.0KiB.
    let size = |b: u64| ssdlab_report::fio_text::num2str(b, 4, true, "B");
    let bs = |i: usize| {
        let (lo, hi) = s.bs_of(i).bounds();
        format!("{}-{}", size(lo), size(hi))
    };
    let rw = if s.read_iolog.is_some() {
        "replay".to_string()
    } else {
        s.mode.name().to_string()
    };
    format!(
        "{}: (g={}): rw={rw}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}, file={label}",
        j.name,
        j.group,
        bs(0),
        bs(1),
        bs(2),
        s.engine.name(),
        s.iodepth
    )
}

/// An entry being put together.
struct Building {
    job: usize,
    /// The entry's last job (fio's group takes its `continue_on_error` and latency target
    /// from the last member, `stat.c` copying each member's in turn).
    last: usize,
    unit: usize,
    group: u32,
    members: u32,
    recorder: Recorder,
    outcomes: Vec<LoopOutcome>,
    first: RunResult,
    errors: Vec<ssdlab_stats::IoErrorRecord>,
    /// fio's `steadystate` block of a group: its last member's (the one that keeps the
    /// group's samples, `stat.c` copies each member's in turn).
    steady: Option<ssdlab_stats::FioSteadyState>,
}

/// What `--parse-only` prints: a line per unit, wave by wave (`wave W: JOB (group G): WORKLOAD
/// on TARGET`).
pub fn parse_only_text(js: &JobSet, units: &[Unit]) -> String {
    let nwaves = js.jobs.iter().map(|j| j.wave).max().unwrap_or(0) + 1;
    let mut text = String::new();
    for w in 0..nwaves {
        for u in units.iter().filter(|u| js.jobs[u.job].wave == w) {
            let j = &js.jobs[u.job];
            text.push_str(&format!(
                "wave {w}: {} (group {}): {} on {}\n",
                j.name,
                j.group,
                u.spec.summary(),
                u.label
            ));
        }
    }
    text
}

/// The contents of the log files whose threads ran (`logs`: each fio thread's log, its
/// measured time and its line style, from [`Waves::thread_logs`]): a shared file
/// (`per_job_logs=0`) after what it held, as fio appends to it. The error names the option and
/// the file that could not be read.
pub fn render_logs(
    files: &[LogFile],
    logs: &BTreeMap<u32, (JobLog, u64, LogStyle)>,
) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for f in files {
        let ran: Vec<&(JobLog, u64, LogStyle)> =
            f.threads.iter().filter_map(|t| logs.get(t)).collect();
        if ran.is_empty() {
            continue;
        }
        let mut bytes = Vec::new();
        if f.append {
            match std::fs::read(&f.path) {
                Ok(b) => bytes = b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{} {}: {e}", f.role, f.path.display())),
            }
        }
        for (log, runtime, style) in ran {
            bytes.extend(render_job_log(log, f.kind, *runtime, style).into_bytes());
        }
        out.push((f.path.clone(), bytes));
    }
    Ok(out)
}

/// A note for each thread whose log holds only its first I/Os.
pub fn dropped_log_notes(logs: &BTreeMap<u32, (JobLog, u64, LogStyle)>) -> Vec<String> {
    logs.iter()
        .filter(|(_, (log, _, _))| log.dropped > 0)
        .map(|(t, (log, _, _))| {
            format!(
                "the logs of job {t} hold its first {} I/Os ({} more were not logged)",
                log.samples.len(),
                log.dropped
            )
        })
        .collect()
}

/// The report entries (each a result with fio's view of its job), by fio's rule (`stat.c`): every clone of a job without
/// `group_reporting` is an entry of its own; a job with it joins the entry before it when that
/// is of the same reporting group, else starts one.
pub fn build_report(
    js: &JobSet,
    units: &[Unit],
    measured: &[Option<Measured>],
) -> Vec<(RunResult, FioJob)> {
    let mut built: Vec<Building> = Vec::new();
    for (i, u) in units.iter().enumerate() {
        let Some(m) = &measured[i] else { continue };
        let j = &js.jobs[u.job];
        let gr = j.settings.group_reporting;
        if gr {
            if let Some(b) = built.last_mut().filter(|b| b.group == j.group) {
                b.recorder.merge(&m.recorder);
                b.last = u.job;
                b.outcomes.push(m.outcome);
                b.members += u.clones;
                b.errors.extend(m.result.errors.iter().cloned());
                b.steady = m.result.fio_steadystate.clone();
                continue;
            }
            built.push(Building {
                job: u.job,
                last: u.job,
                unit: i,
                group: j.group,
                members: u.clones,
                recorder: m.recorder.clone(),
                outcomes: vec![m.outcome],
                first: m.result.clone(),
                errors: m.result.errors.clone(),
                steady: m.result.fio_steadystate.clone(),
            });
        } else if m.workers.len() > 1 {
            for (r, rec) in &m.workers {
                built.push(Building {
                    job: u.job,
                    last: u.job,
                    unit: i,
                    group: j.group,
                    members: 1,
                    recorder: rec.clone(),
                    outcomes: Vec::new(),
                    first: r.clone(),
                    errors: r.errors.clone(),
                    steady: r.fio_steadystate.clone(),
                });
            }
        } else {
            built.push(Building {
                job: u.job,
                last: u.job,
                unit: i,
                group: j.group,
                members: u.clones,
                recorder: m.recorder.clone(),
                outcomes: Vec::new(),
                first: m.result.clone(),
                errors: m.result.errors.clone(),
                steady: m.result.fio_steadystate.clone(),
            });
        }
    }
    built
        .into_iter()
        .map(|b| {
            let j = &js.jobs[b.job];
            let last = &js.jobs[b.last];
            // fio's job_runtime of a reporting group adds its members' runtimes up.
            let job_runtime_ns = (b.outcomes.len() > 1)
                .then(|| b.outcomes.iter().map(|o| o.runtime_ns).sum::<u64>());
            // Several units together: rebuilt from their recorders.
            let result = if b.outcomes.len() > 1 {
                let mut spec = units[b.unit].spec.clone();
                spec.jobs = b.members;
                let mut r = ssdlab_engine::build_result(
                    &spec,
                    b.first.target.clone(),
                    &b.recorder,
                    ssdlab_engine::merge_outcomes(&b.outcomes),
                    b.first.timestamp_ms,
                    b.first.cpu.clone(),
                );
                r.members = b.first.members.clone();
                r.disk_util = b.first.disk_util.clone();
                r.device = b.first.device.clone();
                r.verify = b.first.verify.clone();
                r.errors = b.errors;
                r.fio_steadystate = b.steady;
                r
            } else {
                b.first
            };
            let description = j
                .options
                .iter()
                .rev()
                .find(|(k, _)| k == "description")
                .or_else(|| {
                    js.global_options
                        .iter()
                        .rev()
                        .find(|(k, _)| k == "description")
                })
                .map(|(_, v)| v.clone());
            let mixed = (j.settings.unified != Unified::None).then(|| {
                b.recorder
                    .unified()
                    .summary(ssdlab_workload::OpKind::Read, result.runtime_ns)
            });
            (
                result,
                FioJob {
                    name: j.name.clone(),
                    group: b.group,
                    members: b.members,
                    // fio's entry of a reporting group: the first job's name, the last one's
                    // options
                    options: last.options.clone(),
                    description,
                    header: header(j, &units[b.unit].label),
                    ignored: j
                        .settings
                        .ignored
                        .iter()
                        .map(|i| Ignored {
                            option: i.key.clone(),
                            at: i.loc.as_ref().map(|l| l.to_string()).unwrap_or_default(),
                            why: i.why.clone(),
                        })
                        .collect(),
                    mixed,
                    mixed_only: j.settings.unified == Unified::Mixed,
                    kb_base: j.settings.kb_base,
                    job_runtime_ns,
                    continue_on_error: last.settings.non_fatal.classes != 0,
                    latency: Some(ssdlab_report::FioLatency {
                        iodepth: last.settings.iodepth,
                        target_ns: last.settings.latency_target_ns,
                        percentile: last.settings.latency_percentile,
                        window_us: last.settings.latency_window_ns / 1000,
                    }),
                },
            )
        })
        .collect()
}
