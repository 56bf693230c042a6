//! `ssdlab sweep FILE.toml`: glue between the command line, `ssdlab-sweep` and the results
//! store; the checks and the run are `crate::sweeping`'s (shared with `ssdlab study`).

use crate::cli::{positive_size_arg, positive_usize, Failure};
use crate::signals;
use crate::sweeping::{
    check_db, check_db_of, check_failure, check_sweep, check_sweep_points, point_runner, run_spec,
    Scope,
};
use anyhow::anyhow;
use clap::Args;
use ssdlab_stats::RunResult;
use ssdlab_sweep::{Point, PointRunner, SweepSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

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

/// Where the store of a sweep goes when `--db` is not given.
pub fn default_db_path(file: &Path, spec: &SweepSpec) -> PathBuf {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    dir.join(spec.default_db_name())
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
