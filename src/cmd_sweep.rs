//! `ssdlab sweep FILE.toml` and `ssdlab report DB`: glue between the command line and
//! `ssdlab-sweep` / the results store. Running one point (simulated or real) is the caller's
//! `runner`; this file only parses, plans, prints and maps outcomes to exit codes.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use ssdlab_report::store::{PointStatus, Store};
use ssdlab_stats::RunResult;
use ssdlab_sweep::{
    parse_mix, render_analysis, render_mix, render_points, render_runs, run_sweep, Analysis, Point,
    RunOpts, SweepSpec,
};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Exit code when some points failed (they are retried by the next run).
const EXIT_POINT_FAILED: u8 = 1;
/// Exit code when the sweep was interrupted with Ctrl-C (finished points are kept).
const EXIT_INTERRUPTED: u8 = 130;

fn positive_usize(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

fn positive_u32(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

/// `ssdlab sweep`: run a sweep file into a results store (resumes where it stopped).
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep file (TOML); see docs/SWEEPS.md.
    pub file: PathBuf,
    /// Results store (SQLite). Default: <sweep name>.sqlite next to the sweep file. A missing file
    /// is created; an existing one must be an ssdlab store of this schema version.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Parallel workers for simulated points (default: all cores). Real points always run one at
    /// a time.
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    pub jobs: Option<usize>,
    /// List the points (with their status when the store exists) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `ssdlab report`: gains over the baseline, best stripes and a mix recommendation.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// The results store written by `ssdlab sweep` (or `ssdlab run --store`).
    pub db: PathBuf,
    /// Also export one row per point as CSV to FILE ("-": CSV only, to stdout).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Recommend a stripe for a workload mix, e.g. 4k-randread=0.7,128k-seqwrite=0.3.
    #[arg(long, value_name = "WEIGHTS")]
    pub mix: Option<String>,
    /// Judge the mix at this queue depth only (default: geometric mean over all QDs).
    #[arg(long, value_name = "QD", value_parser = positive_u32, requires = "mix")]
    pub qd: Option<u32>,
    /// Only this sweep (default: every sweep in the store).
    #[arg(long, value_name = "NAME")]
    pub sweep: Option<String>,
    /// Print the analysis as one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Where the store of a sweep goes when `--db` is not given.
pub fn default_db_path(file: &Path, spec: &SweepSpec) -> PathBuf {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    dir.join(spec.default_db_name())
}

/// Runs `ssdlab sweep` with the built-in checks only (real paths exist).
#[allow(dead_code)] // the binary uses cmd_sweep_checked; the sweep crate's CLI glue test uses this
pub fn cmd_sweep(
    a: SweepArgs,
    runner: &(dyn Fn(&Point) -> Result<RunResult, String> + Sync),
    interrupted: &AtomicBool,
) -> Result<u8> {
    cmd_sweep_checked(a, runner, interrupted, &|_| Ok(()))
}

/// Runs `ssdlab sweep`; `check` validates the parsed sweep further before anything is created
/// (for instance `spec.check_presets(&preset_names())`). Errors mean bad input (exit code 2);
/// `Ok(1)` = some points failed, `Ok(130)` = interrupted, `Ok(0)` = every point is in the store.
pub fn cmd_sweep_checked(
    a: SweepArgs,
    runner: &(dyn Fn(&Point) -> Result<RunResult, String> + Sync),
    interrupted: &AtomicBool,
    check: &dyn Fn(&SweepSpec) -> Result<()>,
) -> Result<u8> {
    let spec = SweepSpec::from_file(&a.file)?;
    check(&spec)?;
    let db =
        a.db.clone()
            .unwrap_or_else(|| default_db_path(&a.file, &spec));
    run_spec(&spec, &db, a.jobs, a.dry_run, runner, interrupted)
}

/// Runs a parsed sweep into the store at `db` (or lists its points with `dry_run`).
pub fn run_spec(
    spec: &SweepSpec,
    db: &Path,
    jobs: Option<usize>,
    dry_run: bool,
    runner: &(dyn Fn(&Point) -> Result<RunResult, String> + Sync),
    interrupted: &AtomicBool,
) -> Result<u8> {
    let points = spec.points();

    if dry_run {
        // Never creates the store; shows progress when it exists.
        let status: Option<HashMap<String, PointStatus>> = if db.exists() {
            let store = Store::open_existing(db, true)?;
            let st = match store.sweep_by_name(&spec.name)? {
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
        let mut text = render_points(&points, status.as_ref());
        text.push_str(&format!(
            "{} points ({} sim, {} real); store {}{}\n",
            points.len(),
            points.iter().filter(|p| p.is_sim()).count(),
            points.iter().filter(|p| !p.is_sim()).count(),
            db.display(),
            if status.is_some() {
                ""
            } else {
                " (not created yet)"
            }
        ));
        write_stdout(&text)?;
        return Ok(0);
    }

    spec.check_real_paths()?;
    let mut store = Store::open(db)?;
    let summary = run_sweep(
        spec,
        &mut store,
        runner,
        RunOpts {
            jobs: jobs.unwrap_or(0),
            interrupted,
            progress: true,
        },
    )?;
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
    if let Some((point, err)) = &summary.first_error {
        text.push_str(&format!("first failure: {point}: {err}\n"));
    }
    if summary.interrupted {
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
    write_stdout(&text)?;
    Ok(if summary.interrupted {
        EXIT_INTERRUPTED
    } else if summary.remaining > 0 {
        EXIT_POINT_FAILED
    } else {
        0
    })
}

fn write_stdout(text: &str) -> Result<()> {
    let mut so = std::io::stdout().lock();
    so.write_all(text.as_bytes())
        .and_then(|_| so.flush())
        .context("cannot write to stdout")
}

/// Checks that a CSV output path can be written as a regular file.
fn check_csv_path(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            bail!("--csv {}: exists and is not a regular file", path.display())
        }
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if parent.is_dir() {
                Ok(())
            } else {
                bail!(
                    "--csv {}: directory {} does not exist",
                    path.display(),
                    parent.display()
                )
            }
        }
    }
}

/// `ssdlab report DB`.
pub fn cmd_report(a: ReportArgs) -> Result<u8> {
    let csv_stdout = a.csv.as_deref() == Some(Path::new("-"));
    if csv_stdout && a.json {
        bail!("--csv - and --json both write to stdout; choose one (or give --csv a file)");
    }
    let mix = a.mix.as_deref().map(parse_mix).transpose()?;
    if let Some(p) = a.csv.as_deref().filter(|_| !csv_stdout) {
        check_csv_path(p)?;
    }
    let store = Store::open_existing(&a.db, true)?;
    let mut sweeps = store.sweeps()?;
    if let Some(name) = &a.sweep {
        let names: Vec<String> = sweeps.iter().map(|s| s.name.clone()).collect();
        sweeps.retain(|s| &s.name == name);
        if sweeps.is_empty() {
            bail!(
                "{} has no sweep '{name}' (it has: {})",
                a.db.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    let runs = if a.sweep.is_none() {
        store.runs()?
    } else {
        Vec::new()
    };
    if sweeps.is_empty() && runs.is_empty() {
        bail!("{} holds no sweeps and no runs yet", a.db.display());
    }

    let mut text = String::new();
    let mut csv_rows = Vec::new();
    let mut json_sweeps = Vec::new();
    let mut mix_errors = Vec::new();
    for s in &sweeps {
        let points = store.points(s.id)?;
        let analysis = Analysis::new(&s.name, &points);
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
        text.push_str(&render_analysis(&analysis));
        if let Some(r) = &recs {
            text.push_str(&render_mix(r));
        }
        text.push('\n');
        json_sweeps.push(serde_json::json!({ "analysis": analysis, "mix": recs }));
    }
    if mix.is_some() && !sweeps.is_empty() && mix_errors.len() == sweeps.len() {
        return Err(anyhow!("{}", mix_errors.join("; ")));
    }
    if !runs.is_empty() {
        text.push_str(&render_runs(&runs));
    }

    if let Some(path) = &a.csv {
        if csv_stdout {
            let so = std::io::stdout().lock();
            ssdlab_report::csv::write_points_csv(so, &csv_rows)
                .context("cannot write CSV to stdout")?;
            return Ok(0);
        }
        let f = std::fs::File::create(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        ssdlab_report::csv::write_points_csv(std::io::BufWriter::new(f), &csv_rows)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!(
            "ssdlab: wrote {} rows to {}",
            csv_rows.len(),
            path.display()
        );
    }
    if a.json {
        let doc = serde_json::json!({ "sweeps": json_sweeps, "runs": runs });
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        for e in &mix_errors {
            text.push_str(&format!("note: {e}\n"));
        }
        write_stdout(&text)?;
    }
    Ok(0)
}
