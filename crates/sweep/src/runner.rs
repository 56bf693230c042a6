//! Running a sweep into the results store: resume, parallel simulated points, serial real points,
//! one transaction per finished point, clean stop on Ctrl-C.

use crate::point::Point;
use crate::spec::{History, SweepSpec};
use crate::SweepError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdlab_stats::RunResult;
use ssdlab_store::Store;
use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The function that runs one point. It must be deterministic for simulated points (same point →
/// same result) and should return early with `interrupted = true` when Ctrl-C was pressed.
pub type RunPointFn<'a> = dyn Fn(&Point) -> Result<RunResult, PointError> + Sync + 'a;

/// Why one point could not run (the runner's own error type, boxed).
pub type PointError = Box<dyn std::error::Error + Send + Sync>;

/// How to run a sweep.
#[derive(Clone, Copy)]
pub struct RunOpts<'a> {
    /// Parallel workers for simulated points; 0 = all cores (`available_parallelism`).
    pub jobs: usize,
    /// Set by the Ctrl-C handler: no new point starts, finished points stay in the store, points
    /// still running are abandoned.
    pub interrupted: &'a AtomicBool,
    /// Draw a progress bar on stderr (only when stderr is a terminal).
    pub progress: bool,
    /// Run simulated points grouped by this key (stable within a group), e.g. the drive state
    /// they start from, so a runner that caches states needs only a few at a time. Results are
    /// stored by point key, so the order changes nothing in the store.
    pub group: Option<&'a (dyn Fn(&Point) -> String + Sync)>,
    /// Run the simulated points, and the real points of targets that name their `host`, on this
    /// pool instead of `jobs` threads here (the ranks of an MPI job); the other real points still
    /// run here, one at a time, after them.
    pub pool: Option<&'a dyn PointPool>,
}

impl std::fmt::Debug for RunOpts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOpts")
            .field("jobs", &self.jobs)
            .field("progress", &self.progress)
            .field("grouped", &self.group.is_some())
            .field("pool", &self.pool.is_some())
            .finish()
    }
}

/// How a sweep run went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepSummary {
    /// The sweep's id in the store.
    pub sweep_id: i64,
    /// Points in the sweep.
    pub total: usize,
    /// Points already finished in the store before this run (skipped).
    pub skipped: usize,
    /// Points finished by this run.
    pub ran: usize,
    /// Points that failed in this run (retried on the next run).
    pub failed: usize,
    /// Points still not finished (failed, abandoned or not started).
    pub remaining: usize,
    /// True when the run stopped because of Ctrl-C.
    pub interrupted: bool,
    /// The first failure: (point description, error).
    pub first_error: Option<(String, String)>,
    /// Why the store stopped taking results (a full disk, an I/O error) part way: the sweep
    /// stopped there, the points stored before it are kept and the rest remain.
    pub store_error: Option<String>,
    pub wall: Duration,
}

impl SweepSummary {
    /// True when every point of the sweep is in the store.
    pub fn complete(&self) -> bool {
        self.remaining == 0
    }
}

/// How running one point ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PointOutcome {
    Finished(Box<RunResult>),
    /// Stopped by Ctrl-C (or a stop from elsewhere): not stored, run again next time.
    Abandoned,
    Failed(String),
}

use PointOutcome as Outcome;

/// Runs simulated points (and real points of targets with a `host`) elsewhere than on this
/// process's threads (the other ranks of an MPI job), as [`run_sweep`] would run them: `done(i, outcome)` is called on the calling thread for
/// every point `points[i]` that ends (it stores the outcome; `Ok(false)` means start no new
/// point); points still running when `interrupted` is raised may be abandoned.
pub trait PointPool {
    fn run(
        &self,
        points: &[&Point],
        runner: &RunPointFn<'_>,
        interrupted: &AtomicBool,
        done: &mut dyn FnMut(usize, PointOutcome) -> Result<bool, SweepError>,
    ) -> Result<(), SweepError>;
}

/// Runs one point as [`run_sweep`] does: a panic is a failure, an interrupted run or an error
/// while `interrupted` is raised is abandoned.
pub fn run_one(runner: &RunPointFn<'_>, p: &Point, interrupted: &AtomicBool) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| runner(p))) {
        Ok(Ok(r)) if r.interrupted => Outcome::Abandoned,
        Ok(Ok(r)) => Outcome::Finished(Box::new(r)),
        // A point stopped by Ctrl-C (during its file layout, say) is abandoned, not failed.
        Ok(Err(_)) if interrupted.load(Ordering::SeqCst) => Outcome::Abandoned,
        Ok(Err(e)) => Outcome::Failed(e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Outcome::Failed(format!("the run panicked: {msg}"))
        }
    }
}

struct Tally<'s> {
    store: &'s mut Store,
    bar: ProgressBar,
    ran: usize,
    failed: usize,
    first_error: Option<(String, String)>,
}

impl Tally<'_> {
    /// Records one outcome; returns false when the sweep should stop starting points.
    fn record(&mut self, p: &Point, o: Outcome) -> Result<bool, SweepError> {
        match o {
            Outcome::Finished(r) => {
                self.store.record_result(&p.key, &r)?;
                self.ran += 1;
                self.bar.inc(1);
                Ok(true)
            }
            Outcome::Abandoned => Ok(false),
            Outcome::Failed(e) => {
                self.store.record_failure(&p.key, &e)?;
                self.failed += 1;
                self.bar.suspend(|| {
                    // A closed stderr must not end the sweep.
                    use std::io::Write;
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "ssdlab: point failed: {}: {e}",
                        p.describe()
                    );
                });
                if self.first_error.is_none() {
                    self.first_error = Some((p.describe(), e));
                }
                Ok(false)
            }
        }
    }
}

fn progress_bar(len: u64, show: bool) -> ProgressBar {
    let target = if show && std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} points, ETA {eta} {msg}",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// Runs every point of `spec` that the store does not have yet.
///
/// Simulated points run on `opts.jobs` threads (results are written by this thread in completion
/// order; each result depends only on its point, so the store ends up the same as after a serial
/// run); real points run strictly one at a time, after the simulated ones. With `opts.pool`, the
/// simulated points and the real points of targets with a `host` run on the pool (which keeps
/// each such target to one point at a time), the other real points here after them. With carried history
/// a worker runs a whole chain (one drive's points) in order, and the runner must carry the
/// drive from each point to the next ([`Point::carry_from`]; a point whose predecessor it did not
/// just run — after a resume, say — needs the chain's earlier points replayed first). Every finished point is
/// written in its own transaction at once. The first failure stops the sweep (no new point starts);
/// failed points are retried by the next run.
///
/// Nothing is written when every point is already in the store, so a finished sweep can be re-run
/// on a read-only store; with points to run, a read-only store is refused before any point runs.
/// Two processes may run the same sweep into the same store at once: both finish, and a point
/// that both ran holds the result stored last.
pub fn run_sweep(
    spec: &SweepSpec,
    store: &mut Store,
    runner: &RunPointFn<'_>,
    opts: RunOpts<'_>,
) -> Result<SweepSummary, SweepError> {
    let start = Instant::now();
    let points = spec.points();
    let sweep_id = store.begin_sweep(&spec.name, &spec.source)?;
    let records: Vec<_> = points.iter().map(Point::record).collect();
    let done = store.sync_points(sweep_id, &records)?;
    let pending: Vec<&Point> = points.iter().filter(|p| !done.contains(&p.key)).collect();
    let skipped = points.len() - pending.len();
    if !pending.is_empty() {
        // A read-only store can still be reported from, and re-running a finished sweep on it
        // works (nothing to write); anything else is refused before a point runs.
        store.require_writable(&format!(
            "{} of the {} points of sweep '{}' still need to run",
            pending.len(),
            points.len(),
            spec.name
        ))?;
    }
    // With a pool, `sims` also holds the real points of targets on a named host (its ranks of
    // that host run them, one at a time per target).
    let pooled = |p: &Point| p.is_sim() || (opts.pool.is_some() && p.host.is_some());
    let (mut sims, reals): (Vec<&Point>, Vec<&Point>) = pending.iter().partition(|p| pooled(p));
    let carry = spec.history == History::Carry;
    if carry {
        // one drive per chain, its points in order
        sims.sort_by_cached_key(|p| (p.chain(), p.seq));
    } else if let Some(group) = opts.group {
        sims.sort_by_cached_key(|p| group(p));
    }
    // What one worker runs without a break: a point, or with carried history a whole chain.
    let mut units: Vec<std::ops::Range<usize>> = Vec::new();
    for i in 0..sims.len() {
        match units.last_mut() {
            Some(u) if carry && sims[u.start].chain() == sims[i].chain() => u.end = i + 1,
            _ => units.push(i..i + 1),
        }
    }

    let bar = progress_bar(pending.len() as u64, opts.progress);
    let mut tally = Tally {
        store,
        bar: bar.clone(),
        ran: 0,
        failed: 0,
        first_error: None,
    };
    let interrupted = || opts.interrupted.load(Ordering::SeqCst);
    let mut go_on = true;
    // A store that fails part way (a full disk) stops the sweep; what it holds is kept.
    let mut store_error: Option<SweepError> = None;

    if let (Some(pool), false) = (opts.pool, sims.is_empty() || interrupted()) {
        let mut handle = |i: usize, o: Outcome| -> Result<bool, SweepError> {
            if store_error.is_some() {
                return Ok(false);
            }
            bar.set_message(sims[i].describe());
            match tally.record(sims[i], o) {
                Ok(go) => {
                    go_on &= go;
                    Ok(go)
                }
                Err(e) => {
                    store_error = Some(e);
                    go_on = false;
                    Ok(false)
                }
            }
        };
        if let Err(e) = pool.run(&sims, runner, opts.interrupted, &mut handle) {
            bar.finish_and_clear();
            return Err(e);
        }
    } else if !sims.is_empty() && !interrupted() {
        let jobs = match opts.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .min(units.len());
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        // Bounded: workers never run far ahead of what is stored.
        let (tx, rx) = mpsc::sync_channel::<(usize, Outcome)>(jobs);
        let res: Option<SweepError> = std::thread::scope(|s| {
            for _ in 0..jobs {
                let tx = tx.clone();
                let (sims, units, next, stop) = (&sims, &units, &next, &stop);
                s.spawn(move || 'units: loop {
                    let u = next.fetch_add(1, Ordering::SeqCst);
                    let Some(unit) = units.get(u) else { break };
                    for i in unit.clone() {
                        if stop.load(Ordering::SeqCst) || opts.interrupted.load(Ordering::SeqCst) {
                            break 'units;
                        }
                        let o = run_one(runner, sims[i], opts.interrupted);
                        if !matches!(o, Outcome::Finished(_)) {
                            // A failure stops the sweep; an abandoned run means Ctrl-C.
                            stop.store(true, Ordering::SeqCst);
                        }
                        if tx.send((i, o)).is_err() {
                            break 'units;
                        }
                    }
                });
            }
            drop(tx);
            let mut result = None;
            let mut handle = |i: usize, o: Outcome| -> bool {
                bar.set_message(sims[i].describe());
                match tally.record(sims[i], o) {
                    Ok(true) => true,
                    Ok(false) => {
                        go_on = false;
                        stop.store(true, Ordering::SeqCst);
                        true
                    }
                    Err(e) => {
                        stop.store(true, Ordering::SeqCst);
                        go_on = false;
                        result = Some(e);
                        false
                    }
                }
            };
            loop {
                if interrupted() {
                    // Keep what has already finished; abandon what is still running.
                    while let Ok((i, o)) = rx.try_recv() {
                        if !handle(i, o) {
                            break;
                        }
                    }
                    break;
                }
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok((i, o)) => {
                        if !handle(i, o) {
                            break;
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            // Points still running are abandoned: their results are dropped with the channel.
            stop.store(true, Ordering::SeqCst);
            drop(rx);
            result
        });
        store_error = res;
    }

    for p in reals {
        if !go_on || interrupted() {
            break;
        }
        bar.set_message(p.describe());
        let o = run_one(runner, p, opts.interrupted);
        match tally.record(p, o) {
            Ok(go) => go_on &= go,
            Err(e) => {
                store_error = Some(e);
                break;
            }
        }
    }
    bar.finish_and_clear();

    let (ran, failed, first_error) = (tally.ran, tally.failed, tally.first_error);
    Ok(SweepSummary {
        sweep_id,
        total: points.len(),
        skipped,
        ran,
        failed,
        remaining: points.len() - skipped - ran,
        interrupted: interrupted(),
        first_error,
        store_error: store_error.map(|e| e.to_string()),
        wall: start.elapsed(),
    })
}
