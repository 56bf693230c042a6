//! `ssdlab sweep FILE.toml`, `ssdlab study NAME` and `ssdlab report DB`: glue between the command
//! line, `ssdlab-sweep` and the results store.
//!
//! Before the store is created, every point of the sweep is checked as `ssdlab run` would check
//! it (workload, preset and overrides, array geometry, real targets and their safety, memory), the
//! output path is checked against the sweep file and every real target, and the parallelism is
//! chosen from the memory estimate. Only then does anything get written.

use crate::cli::{positive_size_arg, positive_usize, Failure, EXIT_BAD_INPUT, EXIT_FAILED};
use crate::exit::store_failure;
use crate::output::{self, check_writable_path, Dest, StdoutStream};
use crate::presets::{preset_file, sim_target};
use crate::signals;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use ssdlab_engine::SimTarget;
use ssdlab_stats::RunResult;
use ssdlab_store::{PointStatus, Store};
use ssdlab_sweep::spec::PointTarget;
use ssdlab_sweep::{
    parse_mix, render_analysis, render_mix, render_points, render_runs, run_sweep, Analysis, Point,
    PointRunner, PointRunnerOptions, RunOpts, SweepSpec, TargetSpec,
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

/// `ssdlab sweep`: run a sweep file into a results store (resumes where it stopped).
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep file (TOML); see docs/SWEEPS.md.
    pub file: PathBuf,
    /// Results store (SQLite). Default: NAME.sqlite next to the sweep file (NAME: the sweep's
    /// name). A missing file is created; an existing one must be an ssdlab store of this schema
    /// version.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Parallel workers for simulated points (default: as many cores as the memory estimate
    /// allows). Real points always run one at a time.
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    pub jobs: Option<usize>,
    /// List the points (with their status when the store exists) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Allow writes to block devices named in the sweep (devices with a filesystem, partitions
    /// or users are still refused).
    #[arg(long)]
    pub allow_destroy: bool,
    /// Refuse to start when the memory estimate (simulated drives of the parallel points, I/O
    /// buffers) is above SIZE; the system's available memory and limits always apply.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
}

/// `ssdlab report`: gains over the baseline, best stripes and a mix recommendation.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// The results store written by `ssdlab sweep` or `ssdlab study`.
    pub db: PathBuf,
    /// Also export one row per point as CSV to FILE ("-": CSV only, to stdout). Never the store.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Recommend a stripe for a workload mix, e.g. 4k-randread=0.7,128k-seqwrite=0.3.
    #[arg(long, value_name = "WEIGHTS")]
    pub mix: Option<String>,
    /// Judge the mix at this queue depth only (default: geometric mean over all QDs).
    #[arg(long, value_name = "QD", value_parser = crate::cli::positive_u32, requires = "mix")]
    pub qd: Option<u32>,
    /// Only this sweep (default: every sweep in the store).
    #[arg(long, value_name = "NAME")]
    pub sweep: Option<String>,
    /// Print the analysis as one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write one fio JSON file per finished point under DIR, laid out for fio-plot
    /// (DIR/SWEEP/TARGET[-stripe-S]/BS/RW-QD-JOBS.json; see docs/FIO.md). Created if missing.
    #[arg(long, value_name = "DIR")]
    pub fio_json: Option<PathBuf>,
    /// Also write an HTML report (charts, findings, tables, the sweep file) to FILE; see
    /// docs/REPORTS.md. Never the store.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

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
    sim_target(preset, &sets, *drives, p.stripe, state.as_str(), adapter).map(Some)
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
enum Scope<'a> {
    /// One process: every target (one with a `host` must be on this machine, checked first).
    All,
    /// Rank `rank` of an MPI job, on `host`: the simulated targets, the real targets of its host
    /// (`host = …`), and on rank 0 the real targets without a host.
    Rank { rank: usize, host: &'a str },
}

impl Scope<'_> {
    fn has(&self, t: &TargetSpec) -> bool {
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
fn check_sweep_points(
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

/// Where the store of a sweep goes when `--db` is not given.
pub fn default_db_path(file: &Path, spec: &SweepSpec) -> PathBuf {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    dir.join(spec.default_db_name())
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
fn check_db_of(
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

/// `ssdlab sweep`.
pub fn cmd_sweep(a: SweepArgs) -> Result<u8, Failure> {
    let runner = point_runner(a.allow_destroy, a.max_memory);
    sweep_with(a, &runner, &|p| runner.run(p), signals::stop_flag())
}

/// `ssdlab sweep` with the function that runs a point and the stop flag given (tests give a
/// fake `run`). Every point is checked by `runner` as it would run it.
pub fn sweep_with(
    a: SweepArgs,
    runner: &PointRunner,
    run: &(dyn Fn(&Point) -> Result<RunResult, ssdlab_sweep::PointError> + Sync),
    stop: &AtomicBool,
) -> Result<u8, Failure> {
    let spec = SweepSpec::from_file(&a.file)?;
    let db =
        a.db.clone()
            .unwrap_or_else(|| default_db_path(&a.file, &spec));
    check_db(&db, &spec, Some(&a.file))?;
    let checked = check_sweep(&spec, runner, a.jobs, a.max_memory).map_err(check_failure)?;
    run_spec(&spec, &db, checked.jobs, a.dry_run, run, stop, None)
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

/// `ssdlab report DB`.
pub fn cmd_report(a: ReportArgs) -> Result<u8, Failure> {
    let csv = a.csv.as_deref().map(|p| Dest::from_arg(Some(p)));
    if matches!(csv, Some(Dest::Stdout)) && a.json {
        return Err(anyhow!(
            "--csv - and --json both write to stdout; choose one (or give --csv a file)"
        )
        .into());
    }
    let mix = a.mix.as_deref().map(parse_mix).transpose()?;
    if let Some(p) = csv.as_ref().and_then(Dest::file) {
        check_writable_path("--csv", p).map_err(|e| anyhow!(e))?;
        let side: Vec<PathBuf> = ["-journal", "-wal", "-shm"]
            .iter()
            .map(|x| {
                let mut n = a.db.clone().into_os_string();
                n.push(x);
                PathBuf::from(n)
            })
            .collect();
        let mut stores = vec![Named {
            role: "the results store",
            path: &a.db,
        }];
        stores.extend(side.iter().map(|path| Named {
            role: "a file of the results store",
            path,
        }));
        check_outputs(
            &[Named {
                role: "--csv",
                path: p,
            }],
            &stores,
        )?;
    }
    if let Some(dir) = &a.fio_json {
        check_fio_json_dir(dir, &a.db)?;
    }
    if let Some(h) = &a.html {
        let mut others: Vec<(String, PathBuf)> = vec![("the results store".into(), a.db.clone())];
        for x in ["-journal", "-wal", "-shm"] {
            let mut n = a.db.clone().into_os_string();
            n.push(x);
            others.push(("a file of the results store".into(), PathBuf::from(n)));
        }
        if let Some(c) = csv.as_ref().and_then(Dest::file) {
            others.push(("--csv".into(), c.to_path_buf()));
        }
        crate::cmd_study::check_html(h, &others)?;
    }
    let store = Store::open_existing(&a.db, true).map_err(store_failure)?;
    let mut sweeps = store.sweeps().map_err(store_failure)?;
    if let Some(name) = &a.sweep {
        let names: Vec<String> = sweeps.iter().map(|s| s.name.clone()).collect();
        sweeps.retain(|s| &s.name == name);
        if sweeps.is_empty() {
            return Err(anyhow!(
                "{} has no sweep '{name}' (it has: {})",
                a.db.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
            .into());
        }
    }
    let runs = if a.sweep.is_none() {
        store.runs()?
    } else {
        Vec::new()
    };
    if sweeps.is_empty() && runs.is_empty() {
        return Err(anyhow!("{} holds no sweeps and no runs yet", a.db.display()).into());
    }

    let style = crate::cli::auto_table_style();
    let mut text = String::new();
    let mut csv_rows = Vec::new();
    let mut json_sweeps = Vec::new();
    let mut mix_errors = Vec::new();
    // Files that could not be written (reported after the report is printed).
    let mut not_written: Vec<String> = Vec::new();
    let mut page = ssdlab_chart::Page::new(&match sweeps.as_slice() {
        [s] => format!("ssdlab report: {}", s.name),
        _ => format!("ssdlab report: {}", a.db.display()),
    });
    page.meta(&format!(
        "Written by ssdlab {} from the results store {}.",
        ssdlab_report::html::VERSION,
        a.db.display()
    ));
    page.environment(&ssdlab_chart::Environment::current(
        ssdlab_report::html::VERSION,
    ));
    for s in &sweeps {
        let points = store.points(s.id)?;
        let mut analysis = Analysis::new(&s.name, &points);
        // what the simulated drives did at each point, to say what binds and why
        analysis.attach_devices(&points, |key| store.result(key).ok().flatten());
        csv_rows.extend(analysis.csv_rows(&points));
        let recs = match &mix {
            Some(m) => match analysis.recommend(m, a.qd) {
                Ok(r) => Some(r),
                Err(e) => {
                    mix_errors.push(e.to_string());
                    None
                }
            },
            None => None,
        };
        text.push_str(&render_analysis(&analysis, style));
        if let Some(r) = &recs {
            text.push_str(&render_mix(r, style));
        }
        let parsed = SweepSpec::parse(&s.spec_toml, Path::new(".")).ok();
        let infos = parsed
            .as_ref()
            .map(crate::cmd_study::target_infos)
            .unwrap_or_default();
        // how far the drive models can be trusted (their standing against the built-in findings)
        analysis.caveats.extend(crate::standing::report_caveat(
            &store,
            &s.name,
            parsed.as_ref(),
        ));
        let findings = analysis.findings(&infos);
        if !findings.is_empty() {
            text.push_str("\nFindings\n");
            for f in &findings {
                text.push_str(&format!("  - {f}\n"));
            }
        }
        text.push('\n');
        if a.html.is_some() {
            // the runs whose latency histograms the page shows (a few, not every point)
            let latency =
                analysis.latency_histograms(&points, |key| store.result(key).ok().flatten());
            ssdlab_sweep::sweep_sections(
                &mut page,
                &ssdlab_sweep::SweepHtml {
                    analysis: &analysis,
                    sweep_toml: &s.spec_toml,
                    description: parsed.as_ref().and_then(|p| p.description.as_deref()),
                    mix: recs.as_deref(),
                    targets: &infos,
                    latency: &latency,
                },
            );
        }
        json_sweeps.push(serde_json::json!({ "analysis": analysis, "mix": recs }));
    }
    if let Some(dir) = &a.fio_json {
        match export_fio_json(&store, &sweeps, dir, &a.db) {
            Err(f) if f.code == EXIT_FAILED => not_written.push(format!("{:#}", f.err)),
            other => other?,
        }
    }
    if mix.is_some() && !sweeps.is_empty() && mix_errors.len() == sweeps.len() {
        return Err(anyhow!("{}", mix_errors.join("; ")).into());
    }
    if !runs.is_empty() {
        text.push_str(&render_runs(&runs, style));
    }
    if let Some(h) = &a.html {
        for r in &runs {
            if let Some(res) = store.run_result(r.id).map_err(store_failure)? {
                ssdlab_report::html::run_sections(
                    &mut page,
                    &res,
                    &format!("Stored run {}: {}", r.id, r.label),
                );
            }
        }
        // A file that cannot be written (a full disk) does not cost the report on stdout: it is
        // printed, then the failed file is named (exit 1).
        match output::write_file(h, page.finish().as_bytes()) {
            Ok(()) => output::note(&format!(
                "wrote the HTML report to {} ({} charts)",
                h.display(),
                page.chart_count()
            )),
            Err(e) => {
                not_written.push(format!("cannot write the HTML report {}: {e}", h.display()))
            }
        }
    }

    if let Some(dest) = &csv {
        let mut buf = Vec::new();
        ssdlab_report::csv::write_points_csv(&mut buf, &csv_rows).context("cannot format CSV")?;
        let text = String::from_utf8_lossy(&buf);
        match (dest.write(&text), dest) {
            (Err(e), Dest::Stdout) => {
                return Err(Failure::new(
                    EXIT_FAILED,
                    anyhow!("cannot write the CSV: {e}"),
                ))
            }
            (Err(e), Dest::File(p)) => {
                not_written.push(format!("cannot write the CSV {}: {e}", p.display()))
            }
            (Ok(()), Dest::Stdout) if not_written.is_empty() => return Ok(0),
            (Ok(()), Dest::Stdout) => {}
            (Ok(()), Dest::File(p)) => {
                output::note(&format!("wrote {} rows to {}", csv_rows.len(), p.display()))
            }
        }
    }
    let doc = if a.json {
        let doc = serde_json::json!({ "sweeps": json_sweeps, "runs": runs });
        format!("{}\n", serde_json::to_string_pretty(&doc)?)
    } else {
        for e in &mix_errors {
            text.push_str(&format!("note: {e}\n"));
        }
        text
    };
    if !matches!(csv, Some(Dest::Stdout)) {
        output::stdout(&doc).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    }
    if !not_written.is_empty() {
        return Err(Failure::new(
            EXIT_FAILED,
            anyhow!("{} (the report was printed)", not_written.join("; ")),
        ));
    }
    Ok(0)
}

// ---------------------------------------------------------------------------------------------
// `mpirun -n N ssdlab sweep FILE`: one rank of a distributed sweep.

/// `ssdlab sweep` as one rank of a job: every rank checks what it may run (the simulated points,
/// the real targets whose `host` is its host, and on rank 0 the real targets without a host) and
/// they agree; then rank 0 runs the sweep into the store, handing simulated points and points of
/// targets with a host to whichever rank may run them as it asks, and runs the real points
/// without a host itself, one at a time, after them. Returns this rank's exit code (the job's is
/// rank 0's).
pub fn sweep_on_ranks<T: ssdlab_cluster::Transport>(
    a: SweepArgs,
    t: &T,
    me: &ssdlab_cluster::RankInfo,
) -> Result<u8, Failure> {
    let share =
        ssdlab_io::memory::limit(a.max_memory).map(|l| l.bytes / me.local_size.max(1) as u64);
    let runner = point_runner(a.allow_destroy, share);
    // Every rank's host, on every rank (before anything can fail: every rank takes part).
    let hosts = ssdlab_cluster::dispatch::rank_hosts(t, &me.host);
    let scope = Scope::Rank {
        rank: me.rank,
        host: &me.host,
    };
    let checked = (|| -> Result<(SweepSpec, PathBuf), Failure> {
        let spec = SweepSpec::from_file(&a.file)?;
        if a.dry_run {
            return Err(anyhow!("--dry-run lists the points; run it without mpirun").into());
        }
        if let Some(j) = a.jobs {
            return Err(anyhow!(
                "--jobs {j}: under mpirun every rank runs one point at a time; start more ranks instead"
            )
            .into());
        }
        let db =
            a.db.clone()
                .unwrap_or_else(|| default_db_path(&a.file, &spec));
        if me.rank == 0 {
            if let Some(t) = spec.unplaced_target(&hosts) {
                return Err(anyhow!(
                    "target '{}': host = \"{}\" is not the host of any rank of this job; its {} ranks run on {}",
                    t.label,
                    t.host.as_deref().unwrap_or_default(),
                    hosts.len(),
                    ssdlab_cluster::rank::hosts_summary(&hosts)
                )
                .into());
            }
            let count = spec.point_count().unwrap_or(u64::MAX);
            let spread = spec
                .targets
                .iter()
                .filter(|t| t.kind.is_sim() || t.host.is_some())
                .map(|t| t.stripes.len().max(1) as u64)
                .sum::<u64>()
                * spec.workloads.len() as u64
                * spec.qds.len() as u64
                * spec.repeats as u64;
            if spread == 0 {
                return Err(anyhow!(
                    "sweep '{}' has only real points of targets without a host, which run one at a time on rank 0; run it without mpirun, or give each target the host it is on (host = \"NAME\")",
                    spec.name
                )
                .into());
            }
            if me.size as u64 > count {
                return Err(anyhow!(
                    "{} ranks for the {count} points of sweep '{}': more ranks than points; start at most {count}",
                    me.size,
                    spec.name
                )
                .into());
            }
        }
        check_db_of(&db, &spec, Some(&a.file), scope)?;
        check_sweep_points(&spec, &runner, Some(1), share, scope).map_err(check_failure)?;
        Ok((spec, db))
    })();
    let verdict = ssdlab_cluster::check_together(
        t,
        &me.host,
        checked
            .as_ref()
            .map(|_| ())
            .map_err(|f| ssdlab_cluster::RankFailure {
                code: f.code,
                message: crate::cli::one_line(&format!("{:#}", f.err)),
                because_of_others: false,
            }),
    );
    if let Err(f) = verdict {
        return if me.rank == 0 {
            Err(Failure::new(f.code, anyhow!(f.message)))
        } else {
            Ok(f.code)
        };
    }
    let (spec, db) = checked.map_err(|_| anyhow!("checked on every rank"))?;
    runner.set_capacity(2);
    if me.rank != 0 {
        let points: HashMap<String, Point> = spec
            .points()
            .into_iter()
            .map(|p| (p.key.clone(), p))
            .collect();
        ssdlab_cluster::dispatch::serve(t, &points, &|p| runner.run(p), signals::stop_flag());
        return Ok(0);
    }
    let group = |p: &Point| PointRunner::group_key(p);
    let pool = ssdlab_cluster::dispatch::Dispatcher::new(t, Some(&group), hosts);
    let res = run_spec(
        &spec,
        &db,
        1,
        false,
        &|p| runner.run(p),
        signals::stop_flag(),
        Some(&pool),
    );
    pool.release_all();
    res
}

/// `--fio-json DIR` must be a directory (or a name for one to create in an existing directory).
fn check_fio_json_dir(dir: &Path, db: &Path) -> Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => bail!(
            "--fio-json {}: exists and is not a directory",
            dir.display()
        ),
        Ok(_) => {}
        Err(_) => {
            let parent = dir
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !parent.is_dir() {
                bail!(
                    "--fio-json {}: directory {} does not exist",
                    dir.display(),
                    parent.display()
                );
            }
        }
    }
    if std::fs::canonicalize(dir).ok() == std::fs::canonicalize(db).ok() && dir.exists() {
        bail!("--fio-json {} is the results store", dir.display());
    }
    Ok(())
}

/// Writes one fio JSON per finished point of `sweeps` under `dir` (all files or none).
fn export_fio_json(
    store: &Store,
    sweeps: &[ssdlab_store::SweepRow],
    dir: &Path,
    db: &Path,
) -> Result<(), Failure> {
    use ssdlab_report::fio_plot::{layout, PlotPoint};
    let mut results: Vec<(ssdlab_store::StoredPoint, String, RunResult)> = Vec::new();
    for s in sweeps {
        for p in store.points(s.id)? {
            if let Some(r) = store.result(&p.record.key).map_err(store_failure)? {
                results.push((p, s.name.clone(), r));
            }
        }
    }
    let repeated: std::collections::HashSet<String> = results
        .iter()
        .filter(|(p, _, _)| p.record.repeat > 0)
        .map(|(_, s, _)| s.clone())
        .collect();
    let points: Vec<PlotPoint<'_>> = results
        .iter()
        .map(|(p, sweep, r)| PlotPoint {
            sweep,
            target: &p.record.target_label,
            stripe: p.record.stripe,
            workload: &p.record.workload_name,
            spec: &r.spec,
            repeat: p.record.repeat,
            repeated: repeated.contains(sweep),
        })
        .collect();
    let paths: Vec<PathBuf> = layout(&points).into_iter().map(|p| dir.join(p)).collect();
    // Never over the store (a store named like one of the files, inside DIR).
    let named: Vec<Named<'_>> = paths
        .iter()
        .map(|path| Named {
            role: "--fio-json",
            path,
        })
        .collect();
    check_outputs(
        &named,
        &[Named {
            role: "the results store",
            path: db,
        }],
    )?;
    let files: Vec<(PathBuf, Vec<u8>)> = paths
        .into_iter()
        .zip(&results)
        .map(|(path, (_, _, r))| {
            (
                path,
                ssdlab_report::fio_json_string(std::slice::from_ref(r)).into_bytes(),
            )
        })
        .collect();
    // Create the directories (remembering which were new, to take them back on failure).
    let mut created: Vec<PathBuf> = Vec::new();
    let fail = |created: &[PathBuf], e: std::io::Error| {
        for d in created.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        Failure::new(
            EXIT_FAILED,
            anyhow!(
                "cannot write the fio JSON files under {}: {e}",
                dir.display()
            ),
        )
    };
    for (path, _) in &files {
        let parent = path.parent().unwrap_or(dir);
        let missing: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        for d in missing.into_iter().rev() {
            std::fs::create_dir(&d).map_err(|e| fail(&created, e))?;
            created.push(d);
        }
    }
    output::write_files(&files).map_err(|e| fail(&created, e))?;
    output::note(&format!(
        "wrote {} fio JSON file{} under {} (fio-plot -i DIR/SWEEP/TARGET/BS …)",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        dir.display()
    ));
    Ok(())
}

#[cfg(test)]
mod study_help_tests {
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
