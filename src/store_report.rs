//! The report of a results store (`ssdlab report DB`, and `ssdlab study` once its sweep ran):
//! gains over the baseline, best stripes, a mix recommendation and findings on stdout, with the
//! CSV, fio JSON and HTML files asked for.

use crate::cli::{Failure, EXIT_FAILED};
use crate::exit::store_failure;
use crate::output::{self, check_writable_path, Dest};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use ssdlab_stats::RunResult;
use ssdlab_store::Store;
use ssdlab_sweep::{
    parse_mix, render_analysis, render_mix, render_runs, Analysis, PointTarget, SweepSpec,
    TargetInfo,
};
use ssdlab_target::{check_outputs, Named};
use std::path::{Path, PathBuf};

/// What to report of a store, and which files to write besides stdout: the options of
/// `ssdlab report` (gains over the baseline, best stripes and a mix recommendation), which
/// `ssdlab study` fills in for its own store.
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

/// Prints the report of a store and writes the files it asks for.
pub fn report_store(a: &ReportArgs) -> Result<u8, Failure> {
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
        check_html(h, &others)?;
    }
    let store = Store::open_existing(&a.db, true).map_err(store_failure)?;
    let mut sweeps = store.sweeps().map_err(store_failure)?;
    // a study's stability check is folded into its sweep's picks, not reported on its own
    let mut checks: Vec<(String, ssdlab_store::SweepRow, String)> = Vec::new();
    sweeps.retain(|s| {
        let desc = SweepSpec::parse(&s.spec_toml, Path::new("."))
            .ok()
            .and_then(|p| p.description);
        match ssdlab_sweep::study::check_of(&s.name, desc.as_deref()) {
            Some(main) => {
                let how = ssdlab_sweep::study::check_how(desc.as_deref().unwrap_or_default());
                checks.push((main, s.clone(), how));
                false
            }
            None => true,
        }
    });
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
        if let Some((_, c, how)) = checks.iter().find(|c| c.0 == s.name) {
            let cp = store.points(c.id)?;
            analysis.attach_check(Analysis::new(&c.name, &cp), how.clone());
        }
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
        let infos = parsed.as_ref().map(target_infos).unwrap_or_default();
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

/// What the report says about each target: for simulated ones the preset's description,
/// unaligned-write policy and parameters (with the sweep's overrides applied).
pub fn target_infos(spec: &SweepSpec) -> Vec<TargetInfo> {
    spec.targets
        .iter()
        .map(|t| match &t.kind {
            PointTarget::Sim {
                preset, overrides, ..
            } => {
                let sets: Vec<(String, String)> = overrides
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let drive = ssdlab_engine::SimSpec {
                    sets,
                    ..ssdlab_engine::SimSpec::preset(preset)
                }
                .build(crate::output::note_once)
                .ok()
                .map(|t| t.drive);
                TargetInfo {
                    label: t.label.clone(),
                    description: drive.as_ref().map(|d| d.description.clone()),
                    unaligned: drive.as_ref().and_then(|d| {
                        serde_json::to_value(d.ftl.unaligned)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                    }),
                    parameters: drive
                        .as_ref()
                        .and_then(|d| serde_json::to_string_pretty(d).ok()),
                    calibration: drive
                        .as_ref()
                        .and_then(|d| d.calibration.as_ref())
                        .map(|c| c.summary()),
                }
            }
            PointTarget::Real { paths } => TargetInfo {
                label: t.label.clone(),
                description: Some(format!(
                    "measured: {}",
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" + ")
                )),
                unaligned: None,
                parameters: None,
                calibration: None,
            },
        })
        .collect()
}

/// Checks an HTML output path against what the command reads and writes.
pub fn check_html(path: &Path, others: &[(String, PathBuf)]) -> Result<()> {
    check_writable_path("--html", path).map_err(|e| anyhow!(e))?;
    let named: Vec<Named<'_>> = others
        .iter()
        .map(|(role, path)| Named { role, path })
        .collect();
    check_outputs(
        &[Named {
            role: "--html",
            path,
        }],
        &named,
    )?;
    Ok(())
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
