//! The sweep-running flow that `ssdlab sweep` and `ssdlab study` share: the point runner, the
//! checks of a sweep and of its files, running a checked sweep into a results store (or listing
//! its points), and where a study's store goes.
//!
//! Before the store is created, every point of the sweep is checked as `ssdlab run` would check
//! it (workload, preset and overrides, array geometry, real targets and their safety, memory), the
//! output path is checked against the sweep file and every real target, and the parallelism is
//! chosen from the memory estimate. Only then does anything get written.

use crate::cli::{Failure, EXIT_BAD_INPUT, EXIT_FAILED};
use crate::exit::store_failure;
use crate::output::{self, check_writable_path, StdoutStream};
use crate::signals;
use anyhow::{anyhow, bail, Context, Result};
use ssdlab_engine::{preset_file, SimSpec, SimTarget};
use ssdlab_stats::RunResult;
use ssdlab_store::{PointStatus, Store};
use ssdlab_sweep::spec::PointTarget;
use ssdlab_sweep::{
    render_points, run_sweep, Point, PointRunner, PointRunnerOptions, RunOpts, SweepSpec,
    SweepTarget,
};
use ssdlab_target::{check_outputs, Named};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Most points one sweep may expand to.
pub const MAX_POINTS: u64 = 1_000_000;
/// Above this many points a dry run lists plain lines instead of a table.
const TABLE_POINTS: u64 = 10_000;
/// Memory one point's bookkeeping takes while the sweep runs (spec, key, record, result).
const POINT_BYTES: u64 = 8 << 10;

/// The sweep's point runner, building simulated targets as every command does (presets,
/// `--set`-style overrides) and saying its notes on stderr.
pub fn point_runner(allow_destroy: bool, max_memory: Option<u64>) -> PointRunner {
    PointRunner::new(
        PointRunnerOptions {
            allow_destroy,
            max_memory,
            stop: signals::stop_flag(),
            note: output::note,
            note_once: crate::output::note_once,
        },
        Box::new(|p: &Point| point_sim_target(p).map_err(|e| format!("{e:#}"))),
    )
}

/// The simulated target of a point (`None` for a real point): its preset with the point's
/// overrides, drives, stripe, state and adapter.
fn point_sim_target(p: &Point) -> Result<Option<SimTarget>> {
    let PointTarget::Sim {
        preset,
        drives,
        state,
        overrides,
        adapter,
        ..
    } = &p.target
    else {
        return Ok(None);
    };
    let sets: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let spec = SimSpec {
        preset: preset.clone(),
        sets,
        drives: *drives,
        stripe: p.stripe,
        state: state.as_str().to_string(),
        adapter: adapter.clone(),
    };
    spec.build(crate::output::note_once)
        .map(Some)
        .map_err(|e| anyhow!(e))
}

/// Checks one point as its run would, without running or writing anything; returns the
/// memory its simulated drives take (0 for real points) and the key of its drive state.
/// `targets` caches the built simulated targets (loading a preset is the costly part).
/// `naming`: how the sweep file names the point's settings (its keys and lines).
fn check_point(
    runner: &PointRunner,
    p: &Point,
    targets: &mut HashMap<(String, Option<u64>), SimTarget>,
    naming: &dyn ssdlab_workload::Naming,
) -> Result<(u64, Option<String>)> {
    let what = || format!("point {}", p.describe());
    let refused = |e: ssdlab_engine::EngineError| anyhow!("{}: {}", what(), e.render(naming));
    match &p.target {
        PointTarget::Sim { .. } => {
            let key = (
                serde_json::to_string(&p.target).unwrap_or_default(),
                p.stripe,
            );
            if !targets.contains_key(&key) {
                let t = point_sim_target(p)
                    .with_context(|| format!("target '{}'", p.target_label))?
                    .ok_or_else(|| anyhow!("not a simulated point"))?;
                targets.insert(key.clone(), t);
            }
            let t = &targets[&key];
            ssdlab_engine::check_sim_run(&p.spec, t, runner.max_memory).map_err(refused)?;
            // the drive's tables grow with what the point writes (sparse tables)
            let bytes = ssdlab_engine::sim_run_memory_estimate(&p.spec, t);
            Ok((bytes, PointRunner::state_key(p)))
        }
        PointTarget::Real { paths } => {
            let target = PointRunner::real_target(p, paths).map_err(|e| anyhow!(e))?;
            ssdlab_engine::check_real(&p.spec, &target, &runner.real_options()).map_err(refused)?;
            Ok((0, None))
        }
    }
}

/// The sweep was stopped by a signal while it was being checked (nothing was created).
#[derive(Debug, thiserror::Error)]
#[error("interrupted while checking the sweep; nothing was created or run")]
struct Interrupted;

/// The exit code of a failure while checking a sweep: 128 + signal when it was stopped, else 2.
pub(crate) fn check_failure(e: anyhow::Error) -> Failure {
    let code = if e.downcast_ref::<Interrupted>().is_some() {
        signals::exit_code()
    } else {
        EXIT_BAD_INPUT
    };
    Failure::new(code, e)
}

/// What checking a sweep found out: how many simulated points may run at once.
pub(crate) struct SweepCheck {
    pub jobs: usize,
}

/// Which targets' points one process of a sweep checks (and may be given to run).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// One process: every target (one with a `host` must be on this machine, checked first).
    All,
    /// Rank `rank` of an MPI job, on `host`: the simulated targets, the real targets of its host
    /// (`host = …`), and on rank 0 the real targets without a host.
    Rank { rank: usize, host: &'a str },
}

impl Scope<'_> {
    fn has(&self, t: &SweepTarget) -> bool {
        match self {
            Scope::All => true,
            Scope::Rank { rank, host } => {
                t.kind.is_sim()
                    || match &t.host {
                        None => *rank == 0,
                        Some(h) => ssdlab_sweep::host_matches(h, host),
                    }
            }
        }
    }
}

/// Checks every point before anything is created, and chooses the parallelism of the simulated
/// points from the memory estimate. With `n` points at a time the runner holds at most `n + 1`
/// cached drive states (points run grouped by state) and `n` working copies of one.
pub(crate) fn check_sweep(
    spec: &SweepSpec,
    runner: &PointRunner,
    jobs: Option<usize>,
    max_memory: Option<u64>,
) -> Result<SweepCheck> {
    check_this_host(spec)?;
    check_sweep_points(spec, runner, jobs, max_memory, Scope::All)
}

/// In one process, every target is on this machine: a target whose `host` names another one
/// is refused (its files or devices are not here; under mpirun a rank of that host runs it).
fn check_this_host(spec: &SweepSpec) -> Result<()> {
    let Some(first) = spec.targets.iter().find_map(|t| t.host.as_deref()) else {
        return Ok(());
    };
    let Some(me) = ssdlab_cluster::rank::this_host() else {
        bail!("the sweep says target files are on host {first}, and this machine's host name cannot be read to check that it is {first}");
    };
    if let Some(t) = spec.unplaced_target(std::slice::from_ref(&me)) {
        let h = t.host.as_deref().unwrap_or_default();
        bail!(
            "target '{}': host = \"{h}\", and this machine is {me}; a target with a host runs only on that host: run the sweep there, or under mpirun with a rank on {h}",
            t.label
        );
    }
    Ok(())
}

/// The points of `scope` checked as [`check_sweep`] checks them (under mpirun, what this rank
/// may be given to run).
pub(crate) fn check_sweep_points(
    spec: &SweepSpec,
    runner: &PointRunner,
    jobs: Option<usize>,
    max_memory: Option<u64>,
    scope: Scope<'_>,
) -> Result<SweepCheck> {
    let count = spec
        .point_count()
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| {
            anyhow!(
                "sweep '{}' has {} points, more than the {MAX_POINTS} one sweep may have; split it",
                spec.name,
                spec.point_count()
                    .map_or("more than 2^64".to_string(), |n| n.to_string())
            )
        })?;
    spec.check_real_paths_of(|t| scope.has(t))?;
    runner.set_history(spec);
    let has_real = spec.targets.iter().any(|t| !t.kind.is_sim());
    if runner.allow_destroy && !has_real {
        bail!("--allow-destroy applies to real targets, and this sweep simulates every target");
    }
    let all_real = spec.targets.iter().all(|t| !t.kind.is_sim());
    if matches!(scope, Scope::All) && jobs.is_some() && has_real && all_real {
        bail!("--jobs sets how many simulated points run at once, and this sweep has none (real points always run one at a time)");
    }
    let mut states: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut largest = 0u64;
    let mut sims = 0u64;
    let mut targets = HashMap::new();
    let mine: std::collections::HashSet<&str> = spec
        .targets
        .iter()
        .filter(|t| scope.has(t))
        .map(|t| t.label.as_str())
        .collect();
    for p in spec.points_iter() {
        if signals::stopped() {
            bail!(Interrupted);
        }
        if !mine.contains(p.target_label.as_str()) {
            continue;
        }
        let naming = spec.naming_of(&p.workload_name);
        let (mem, state) = check_point(runner, &p, &mut targets, naming.as_ref())?;
        if let Some(k) = state {
            sims += 1;
            largest = largest.max(mem);
            states.insert(k);
        }
    }
    let bookkeeping = count * POINT_BYTES;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = jobs.unwrap_or(cores).max(1);
    let chosen = |n: usize| {
        runner.set_capacity(n + 1);
        Ok(SweepCheck { jobs: n })
    };
    if sims == 0 {
        return chosen(want);
    }
    let cached = |n: u64| (n + 1).min(states.len() as u64);
    let fit = |n: u64| bookkeeping + (cached(n) + n) * largest;
    let Some(limit) = ssdlab_io::memory::limit(max_memory) else {
        return chosen(want);
    };
    let size = ssdlab_workload::format_size;
    if fit(1) > limit.bytes {
        bail!(
            "sweep '{}' needs about {} of memory even one point at a time (a cached drive state and \
             a working copy, {} each, and {} for its {count} points), more than {} allows ({}); \
             use smaller drives or fewer points",
            spec.name,
            size(fit(1)),
            size(largest),
            size(bookkeeping),
            limit.source,
            size(limit.bytes)
        );
    }
    let fits = (1..=cores.max(want) as u64)
        .take_while(|&n| fit(n) <= limit.bytes)
        .last()
        .unwrap_or(1) as usize;
    match jobs {
        Some(j) if fit(j as u64) > limit.bytes => bail!(
            "--jobs {j}: {j} simulated points at once need about {}, more than {} allows ({}); \
             at most {fits} fit",
            size(fit(j as u64)),
            limit.source,
            size(limit.bytes)
        ),
        Some(j) => chosen(j),
        None => {
            let n = cores.min(fits).max(1);
            if n < cores {
                output::note(&format!(
                    "running {n} simulated points at a time (not {cores}): each needs about {} and {} allows {}",
                    size(2 * largest),
                    limit.source,
                    size(limit.bytes)
                ));
            }
            chosen(n)
        }
    }
}

/// The real paths a sweep reads or writes, with their roles: the targets of `scope`, and the
/// traces it replays with `traces`.
fn sweep_inputs(spec: &SweepSpec, scope: Scope<'_>, traces: bool) -> Vec<(String, PathBuf)> {
    let mut v = Vec::new();
    for t in spec.targets.iter().filter(|t| scope.has(t)) {
        if let PointTarget::Real { paths } = &t.kind {
            for p in paths {
                v.push((format!("target '{}'", t.label), p.clone()));
            }
        }
    }
    for w in spec.workloads.iter().filter(|_| traces) {
        if let Some(r) = &w.spec.replay {
            v.push((format!("workload '{}' trace", w.name), r.trace.clone()));
        }
    }
    v
}

/// The preset files (presets given as paths) the sweep's simulated targets read.
fn sweep_presets(spec: &SweepSpec) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for t in &spec.targets {
        if let PointTarget::Sim { preset, .. } = &t.kind {
            if let Some(p) = preset_file(preset) {
                if !v.iter().any(|x| x == p) {
                    v.push(p.to_path_buf());
                }
            }
        }
    }
    v
}

/// Checks the files of a sweep against each other: the store is none of the sweep's files, and no
/// real target (which the sweep may write) is the sweep file or a preset file it reads. Also that
/// the store can be created or written.
pub(crate) fn check_db(db: &Path, spec: &SweepSpec, sweep_file: Option<&Path>) -> Result<()> {
    check_db_of(db, spec, sweep_file, Scope::All)
}

/// [`check_db`] as one rank of a job sees the files: the targets of its `scope` only (a target
/// on another host is checked there), and the store itself only on rank 0 (which writes it).
pub(crate) fn check_db_of(
    db: &Path,
    spec: &SweepSpec,
    sweep_file: Option<&Path>,
    scope: Scope<'_>,
) -> Result<()> {
    // The store is rank 0's (it writes it); another rank checks only its targets (those of its
    // host), against the store and the files the sweep reads as that host sees them (on a
    // shared filesystem the store may be one of them).
    let writes_store = !matches!(scope, Scope::Rank { rank, .. } if rank != 0);
    if writes_store {
        if db.exists() {
            // An existing store may be read-only (a finished sweep re-runs and reports without
            // writing); the store itself decides. It must be a regular file.
            if !std::fs::metadata(db).is_ok_and(|m| m.is_file()) {
                bail!("--db {}: exists and is not a regular file", db.display());
            }
        } else {
            check_writable_path("--db", db).map_err(|e| anyhow!(e))?;
        }
    }
    let targets = sweep_inputs(spec, scope, writes_store);
    if targets.is_empty() && !writes_store {
        return Ok(());
    }
    let presets = sweep_presets(spec);
    let mut reads: Vec<Named<'_>> = presets
        .iter()
        .map(|path| Named {
            role: "a preset file of the sweep",
            path,
        })
        .collect();
    if let Some(f) = sweep_file {
        reads.push(Named {
            role: "the sweep file",
            path: f,
        });
    }
    let mut all = if writes_store {
        reads.clone()
    } else {
        Vec::new()
    };
    all.extend(targets.iter().map(|(role, path)| Named { role, path }));
    check_outputs(
        &[Named {
            role: "the results store",
            path: db,
        }],
        &all,
    )?;
    for (role, path) in &targets {
        check_outputs(&[Named { role, path }], &reads)?;
    }
    Ok(())
}

/// Lists the points of a sweep (with their status when the store exists); never creates it.
fn dry_run(spec: &SweepSpec, db: &Path) -> Result<u8, Failure> {
    let status: Option<HashMap<String, PointStatus>> = if db.exists() {
        let store = Store::open_existing(db, true).map_err(store_failure)?;
        let st = match store.sweep_by_name(&spec.name).map_err(store_failure)? {
            Some(s) => store
                .points(s.id)?
                .into_iter()
                .map(|p| (p.record.key, p.status))
                .collect(),
            None => HashMap::new(),
        };
        Some(st)
    } else {
        None
    };
    let count = spec.point_count().unwrap_or(u64::MAX);
    let write_err =
        |e: std::io::Error| Failure::new(EXIT_FAILED, anyhow!("cannot write to stdout: {e}"));
    let mut out = StdoutStream::new();
    let (mut sims, mut reals) = (0u64, 0u64);
    if count <= TABLE_POINTS {
        let points = spec.points();
        sims = points.iter().filter(|p| p.is_sim()).count() as u64;
        reals = points.len() as u64 - sims;
        out.write_all(
            render_points(&points, status.as_ref(), crate::cli::auto_table_style()).as_bytes(),
        )
        .map_err(write_err)?;
    } else {
        writeln!(out, "#\tkey\ttarget\tstripe\tworkload\tqd\trepeat\tstatus").map_err(write_err)?;
        for p in spec.points_iter() {
            if output::stdout_closed() || signals::stopped() {
                break;
            }
            if p.is_sim() {
                sims += 1;
            } else {
                reals += 1;
            }
            let st = status
                .as_ref()
                .map(|s| s.get(&p.key).map_or("new", |x| x.as_str()))
                .unwrap_or("-");
            writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{st}",
                p.seq,
                &p.key[..12],
                p.target_label,
                p.stripe
                    .map(ssdlab_workload::format_size)
                    .unwrap_or_else(|| "-".into()),
                p.workload_name,
                p.qd,
                p.repeat + 1
            )
            .map_err(write_err)?;
        }
    }
    writeln!(
        out,
        "{count} points ({sims} sim, {reals} real); store {}{}",
        db.display(),
        if status.is_some() {
            ""
        } else {
            " (not created yet)"
        }
    )
    .map_err(write_err)?;
    out.finish().map_err(write_err)?;
    Ok(0)
}

/// Runs a checked sweep into the store at `db` (or lists its points with `dry_run`).
pub fn run_spec(
    spec: &SweepSpec,
    db: &Path,
    jobs: usize,
    dry: bool,
    runner: &(dyn Fn(&Point) -> Result<RunResult, ssdlab_sweep::PointError> + Sync),
    stop: &AtomicBool,
    pool: Option<&dyn ssdlab_sweep::PointPool>,
) -> Result<u8, Failure> {
    if dry {
        return dry_run(spec, db);
    }
    let mut store = Store::open(db).map_err(store_failure)?;
    let summary = run_sweep(
        spec,
        &mut store,
        runner,
        RunOpts {
            jobs,
            interrupted: stop,
            progress: true,
            group: Some(&|p: &Point| PointRunner::group_key(p)),
            pool,
        },
    )
    .map_err(|e| {
        let code = if e.is_io_failure() {
            EXIT_FAILED
        } else {
            EXIT_BAD_INPUT
        };
        Failure::new(code, e)
    })?;
    let mut text = format!(
        "sweep {}: {} points: {} run now, {} already in the store, {} failed, {} remaining ({:.1} s)\n",
        spec.name,
        summary.total,
        summary.ran,
        summary.skipped,
        summary.failed,
        summary.remaining,
        summary.wall.as_secs_f64()
    );
    if summary.store_error.is_some() {
        text.push_str(&format!(
            "stopped: the store took no more results; {} points kept, {} remain; make room and run the same command again to resume\n",
            summary.skipped + summary.ran,
            summary.remaining
        ));
    } else if summary.interrupted {
        text.push_str(&format!(
            "interrupted: {} points remain; run the same command again to resume\n",
            summary.remaining
        ));
    } else if summary.remaining > 0 {
        text.push_str("run the same command again to retry the remaining points\n");
    }
    text.push_str(&format!(
        "results: {}  (ssdlab report {})\n",
        db.display(),
        db.display()
    ));
    output::stdout(&text).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    if let Some(e) = &summary.store_error {
        return Err(Failure::new(
            EXIT_FAILED,
            anyhow!("{e} (the sweep stopped; the summary was printed)"),
        ));
    }
    Ok(if summary.interrupted {
        signals::exit_code()
    } else if summary.remaining > 0 {
        EXIT_FAILED
    } else {
        0
    })
}

/// Where a study's store goes without --db (named in `study --help`).
pub(crate) fn study_db(spec: &SweepSpec) -> PathBuf {
    PathBuf::from(format!("ssdlab-{}.sqlite", spec.name))
}

#[cfg(test)]
mod tests {
    /// `study --help` names the store each study really writes with the default preset.
    #[test]
    fn help_names_the_default_stores() {
        let mut cmd = crate::cli::command();
        let help = cmd
            .find_subcommand_mut("study")
            .unwrap()
            .render_long_help()
            .to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for name in ["study-stripe-vertex450-128g", "study-alignment"] {
            let db = format!("ssdlab-{name}.sqlite");
            assert!(help.contains(&db), "{db} not in: {help}");
        }
    }
}
