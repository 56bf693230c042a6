//! `ssdlab validate` and `ssdlab calibrate`: glue from the options to `ssdlab-calib` (data files,
//! simulation of their workloads, the fitter, the fitted preset's text) and, for
//! `calibrate --target`, to the real engine that measures the characterisation suite.

use crate::cli::{duration_arg, positive_size_arg, Failure, EXIT_FAILED};
use crate::output::{self, check_writable_path};
use crate::signals;
use anyhow::{anyhow, Result};
use clap::Args;
use ssdlab_calib::calibrate::{calibration_of, figures_to_fit, provenance, render_fit, runnable};
use ssdlab_calib::data::{data_paths, DataSet, RawFile, Source};
use ssdlab_calib::measure::{check_target, RealMeasure};
use ssdlab_calib::stored::{dataset_of_runs, StoredRun};
use ssdlab_calib::suite::{measure_suite, suite, SuiteKind};
use ssdlab_calib::{
    default_params, fit, fitted_toml, parse_param, render, validate, Claim, Figure, PredictOptions,
};
use ssdlab_engine::{load_drive, preset_file, RealOptions};
use ssdlab_ssdsim::DriveConfig;
use ssdlab_store::Store;
use ssdlab_target::{check_outputs, Named};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Presets (built-in names or preset files) to validate; none: every built-in preset the
    /// data names.
    presets: Vec<String>,
    /// Data files of published or measured figures and claims (`data/published/*.toml`), or a
    /// results store whose stored runs are the measurements; a directory stands for every .toml
    /// file in it. Repeatable.
    #[arg(long, required = true, value_name = "FILE|DIR|STORE")]
    against: Vec<PathBuf>,
    /// The drive name in the data that the (single) preset given models (default: the preset's
    /// own name).
    #[arg(long, value_name = "NAME")]
    drive: Option<String>,
    /// Simulate each figure at most this long (virtual time; default: the test length the
    /// figure states, 60 s when it states none).
    #[arg(long, value_parser = duration_arg, value_name = "DURATION", allow_hyphen_values = true)]
    max_time: Option<u64>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Also write the validation as one self-contained HTML page (charts of the error per
    /// workload family and of published against simulated figures per drive, then the tables).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Measure this file or block device with the characterisation suite, then fit.
    #[arg(long, value_name = "DEV|FILE", conflicts_with = "from")]
    target: Option<PathBuf>,
    /// Fit to the figures of these data files (published figures, or the measurements of an
    /// earlier `calibrate --target`) or to the runs of a results store, instead of measuring. A
    /// directory stands for its .toml files.
    #[arg(long, value_name = "FILE|DIR|STORE")]
    from: Vec<PathBuf>,
    /// The preset (built-in name or file) whose free parameters are fitted.
    #[arg(long, value_name = "PRESET")]
    base: String,
    /// Where the fitted preset is written.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The name of the fitted preset (default: the --out file's stem).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// With --from: fit the figures of this drive (default: the base preset's name).
    #[arg(long, value_name = "NAME")]
    drive: Option<String>,
    /// A parameter to fit instead of the defaults: KEY (×¼…×4 around the base value),
    /// KEY=LO..HI or KEY=a|b (values the key can take; the fitted value stays within them).
    /// Repeatable.
    #[arg(long = "param", value_name = "KEY[=RANGE]")]
    params: Vec<String>,
    /// Coordinate-descent passes over the parameters.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=10))]
    passes: u32,
    /// While fitting, simulate each figure at most this long (virtual time).
    #[arg(long, default_value = "20s", value_parser = duration_arg, value_name = "DURATION", allow_hyphen_values = true)]
    fit_time: u64,
    /// While fitting, stop each figure's simulation after this many I/Os.
    #[arg(long, default_value = "100000", value_parser = clap::value_parser!(u64).range(1000..), value_name = "N")]
    fit_ios: u64,
    /// With --target: quick (QD 1, 4, 32) or full (QD 1–32) suite.
    #[arg(long, default_value = "quick", value_parser = |s: &str| s.parse::<SuiteKind>())]
    suite: SuiteKind,
    /// With --target: the region measured, from the start (written first).
    #[arg(long, default_value = "1g", value_parser = positive_size_arg, value_name = "SIZE", allow_hyphen_values = true)]
    span: u64,
    /// With --target: the length of each point (the sustained ones run longer).
    #[arg(long, value_parser = duration_arg, value_name = "DURATION", allow_hyphen_values = true)]
    point_time: Option<u64>,
    /// With --target: where the measurements are written (a data file that `--from` reads back;
    /// default: next to --out, OUT.measured.toml).
    #[arg(long, value_name = "FILE")]
    measurements: Option<PathBuf>,
    /// With --target: also keep every measured point as a run in this results store (created
    /// if missing), where `calibrate --from STORE` and `validate --against STORE` read it back.
    #[arg(long, value_name = "FILE")]
    store: Option<PathBuf>,
    /// With --target: allow writing to a block device (refused anyway when it holds a
    /// filesystem or is in use).
    #[arg(long)]
    allow_destroy: bool,
    /// Print the fit as JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// The data of `--from` / `--against`: data files, directories of them, and results stores
/// (their stored single runs as measured figures; see `ssdlab_calib::stored`).
fn read_data(paths: &[PathBuf], flag: &str) -> Result<Vec<DataSet>, Failure> {
    let mut out = Vec::new();
    for p in paths {
        if ssdlab_store::looks_like_sqlite(p) {
            out.push(read_store(p, flag)?);
        } else {
            out.push(DataSet::read(p).map_err(|e| anyhow!("{flag} {e}"))?);
        }
    }
    Ok(out)
}

/// A results store's single runs as a data set of measured figures; the runs that are not a
/// measurement of one drive are named on stderr with the reason.
fn read_store(p: &std::path::Path, flag: &str) -> Result<DataSet, Failure> {
    let fail = crate::exit::store_failure;
    let st = Store::open_existing(p, true).map_err(fail)?;
    let mut runs = Vec::new();
    for row in st.runs().map_err(fail)? {
        if let Some(result) = st.run_result(row.id).map_err(fail)? {
            runs.push(StoredRun {
                id: row.id,
                label: row.label,
                result,
            });
        }
    }
    if runs.is_empty() {
        return Err(anyhow!(
            "{flag} {}: the store holds no single run (ssdlab run --store, calibrate --target --store); sweep points are not read",
            p.display()
        )
        .into());
    }
    let (ds, skipped) = dataset_of_runs(p, &runs);
    const SHOWN: usize = 5;
    for s in skipped.iter().take(SHOWN) {
        output::note(&format!("{flag} {}: left out {s}", p.display()));
    }
    if skipped.len() > SHOWN {
        output::note(&format!(
            "{flag} {}: … and {} more runs left out",
            p.display(),
            skipped.len() - SHOWN
        ));
    }
    ds.ok_or_else(|| {
        anyhow!(
            "{flag} {}: none of its {} stored runs measured one drive with O_DIRECT to the end",
            p.display(),
            runs.len()
        )
        .into()
    })
}

/// Whether two paths name the same file, before any exists (absolute, lexically).
fn same_path(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::path::absolute(a), std::path::absolute(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The built-in presets by name, with `overrides` (data name → model) in front.
fn model_of(overrides: &BTreeMap<String, DriveConfig>, name: &str) -> Option<DriveConfig> {
    overrides
        .get(name)
        .cloned()
        .or_else(|| ssdlab_ssdsim::load_preset(name).ok())
}

pub fn cmd_validate(a: ValidateArgs) -> Result<u8, Failure> {
    if a.max_time == Some(0) {
        return Err(anyhow!("--max-time must be greater than 0").into());
    }
    let against = data_paths(&a.against, "--against").map_err(|e| anyhow!(e))?;
    // --html: writable, and not one of the inputs
    if let Some(h) = &a.html {
        check_writable_path("--html", h).map_err(|e| anyhow!(e))?;
        let inputs: Vec<Named<'_>> = against
            .iter()
            .map(|p| Named {
                role: "an --against file",
                path: p,
            })
            .chain(a.presets.iter().filter_map(|p| {
                preset_file(p).map(|path| Named {
                    role: "a preset file",
                    path,
                })
            }))
            .collect();
        check_outputs(
            &[Named {
                role: "--html",
                path: h,
            }],
            &inputs,
        )?;
    }
    let data = read_data(&against, "--against")?;
    if a.drive.is_some() && a.presets.len() != 1 {
        return Err(
            anyhow!("--drive names the data's drive for one preset; give exactly one").into(),
        );
    }
    // data name → model
    let mut models: BTreeMap<String, DriveConfig> = BTreeMap::new();
    for p in &a.presets {
        let cfg = load_drive(p).map_err(|e| anyhow!("{p}: {e}"))?;
        let name = a.drive.clone().unwrap_or_else(|| cfg.name.clone());
        models.insert(name, cfg);
    }
    if models.is_empty() {
        for d in data.iter().flat_map(|d| d.drives()) {
            if let Ok(cfg) = ssdlab_ssdsim::load_preset(&d) {
                models.insert(d, cfg);
            }
        }
        if models.is_empty() {
            return Err(anyhow!(
                "the data names no built-in preset; give the preset to validate (ssdlab validate PRESET --against …)"
            )
            .into());
        }
    }
    let figures: Vec<&Figure> = data
        .iter()
        .flat_map(|d| &d.figures)
        .filter(|f| models.contains_key(&f.case.drive))
        .collect();
    let claims: Vec<&Claim> = data
        .iter()
        .flat_map(|d| &d.claims)
        .filter(|c| models.contains_key(&c.a.drive) || models.contains_key(&c.b.drive))
        .collect();
    for c in &claims {
        for side in [&c.a, &c.b] {
            if model_of(&models, &side.drive).is_none() {
                return Err(anyhow!(
                    "{}: drive {:?} is neither a built-in preset nor one given",
                    c.origin,
                    side.drive
                )
                .into());
            }
        }
    }
    if figures.is_empty() && claims.is_empty() {
        return Err(anyhow!(
            "the data holds no figure or claim for {}",
            models.keys().cloned().collect::<Vec<_>>().join(", ")
        )
        .into());
    }
    let opts = PredictOptions {
        max_time_ns: a.max_time,
        stop: Some(signals::stop_flag()),
        ..Default::default()
    };
    output::note(&format!(
        "simulating {} figures and {} claims …",
        figures.len(),
        claims.len()
    ));
    let v = validate(&figures, &claims, |n| model_of(&models, n), &opts);
    if opts.stopped() {
        return Err(Failure::new(signals::exit_code(), anyhow!("interrupted")));
    }
    let simulated =
        v.figures.iter().any(|r| r.error.is_some()) || v.claims.iter().any(|c| c.ratio.is_some());
    if !simulated {
        let why = v
            .figures
            .iter()
            .filter_map(|r| r.failure.as_ref().map(|e| format!("{}: {e}", r.origin)))
            .chain(
                v.claims
                    .iter()
                    .filter_map(|c| c.failure.as_ref().map(|e| format!("{}: {e}", c.origin))),
            )
            .next()
            .unwrap_or_default();
        return Err(anyhow!("nothing could be simulated ({why}); nothing to report").into());
    }
    let text = if a.json {
        serde_json::to_string_pretty(&v).expect("serialises") + "\n"
    } else {
        render(&v)
    };
    output::stdout(&text).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    if let Some(h) = &a.html {
        let title = format!(
            "ssdlab validate: {}",
            models.keys().cloned().collect::<Vec<_>>().join(", ")
        );
        let meta = format!(
            "against {}",
            data.iter()
                .map(|d| d.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let env = ssdlab_chart::Environment::current(ssdlab_report::html::VERSION);
        let page = ssdlab_calib::validate::render_html(&v, &title, &meta, Some(&env));
        output::write_file(h, page.as_bytes())
            .map_err(|e| Failure::new(EXIT_FAILED, anyhow!("--html {}: {e}", h.display())))?;
        output::note(&format!("validate: report written to {}", h.display()));
    }
    Ok(0)
}

/// What `calibrate` works from, once every option is checked and no output names an input.
struct Plan {
    base: DriveConfig,
    /// The base preset's text (the fitted preset is written as its edit).
    base_text: String,
    /// The fitted preset's name.
    name: String,
    /// Where `--target`'s measurements are written.
    measured_path: Option<PathBuf>,
    data_files: Vec<PathBuf>,
    params_given: Vec<ssdlab_calib::Param>,
}

/// Checks `calibrate`'s options, inputs and outputs before anything is measured or written.
fn plan(a: &CalibrateArgs) -> Result<Plan, Failure> {
    if a.fit_time == 0 {
        return Err(anyhow!("--fit-time must be greater than 0").into());
    }
    if a.target.is_none() && a.from.is_empty() {
        return Err(anyhow!(
            "give --target DEV|FILE to measure, or --from DATA to fit published or stored figures"
        )
        .into());
    }
    if a.target.is_none() {
        for (flag, set) in [
            ("--measurements", a.measurements.is_some()),
            ("--point-time", a.point_time.is_some()),
            ("--allow-destroy", a.allow_destroy),
            ("--store", a.store.is_some()),
        ] {
            if set {
                return Err(anyhow!("{flag} applies to --target (measuring a drive)").into());
            }
        }
    }
    let base = load_drive(&a.base).map_err(|e| anyhow!("--base {}: {e}", a.base))?;
    let base_text = match preset_file(&a.base) {
        Some(p) => std::fs::read_to_string(p).map_err(|e| anyhow!("--base {}: {e}", a.base))?,
        None => ssdlab_ssdsim::preset_toml(&a.base)
            .ok_or_else(|| anyhow!("--base {}: unknown preset", a.base))?
            .to_string(),
    };
    let name = match &a.name {
        Some(n) if n.trim().is_empty() => return Err(anyhow!("--name is empty").into()),
        Some(n) => n.clone(),
        None => a
            .out
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| anyhow!("--out {}: give a file name", a.out.display()))?,
    };
    let measured_path = a.target.as_ref().map(|_| {
        a.measurements.clone().unwrap_or_else(|| {
            let mut p = a.out.clone().into_os_string();
            p.push(".measured.toml");
            PathBuf::from(p)
        })
    });
    // outputs: writable, and none of them an input
    check_writable_path("--out", &a.out).map_err(|e| anyhow!(e))?;
    if let Some(m) = &measured_path {
        check_writable_path("--measurements", m).map_err(|e| anyhow!(e))?;
        if same_path(m, &a.out) {
            return Err(anyhow!("--measurements and --out name the same file").into());
        }
    }
    // the store is written first and must not be replaced by the files written after it
    if let Some(st) = &a.store {
        if same_path(st, &a.out) {
            return Err(anyhow!("--store and --out name the same file").into());
        }
        if measured_path.as_deref().is_some_and(|m| same_path(st, m)) {
            return Err(anyhow!(
                "--store and --measurements (default OUT.measured.toml) name the same file"
            )
            .into());
        }
    }
    let data_files = data_paths(&a.from, "--from").map_err(|e| anyhow!(e))?;
    let mut inputs: Vec<Named<'_>> = data_files
        .iter()
        .map(|p| Named {
            role: "a --from data file",
            path: p,
        })
        .collect();
    if let Some(p) = preset_file(&a.base) {
        inputs.push(Named {
            role: "the --base preset file",
            path: p,
        });
    }
    if let Some(t) = &a.target {
        inputs.push(Named {
            role: "the --target",
            path: t,
        });
    }
    let mut outputs = vec![Named {
        role: "--out",
        path: &a.out,
    }];
    if let Some(m) = &measured_path {
        outputs.push(Named {
            role: "--measurements",
            path: m,
        });
    }
    // --store: an existing file must be a writable ssdlab store (checked before anything is
    // measured); a missing one is created with the first measured point
    if let Some(path) = &a.store {
        crate::results::check_store_path(path)?;
        if path.exists() {
            Store::open(path)
                .and_then(|st| st.require_writable("the measurements must be stored"))
                .map_err(crate::exit::store_failure)?;
        }
        outputs.push(Named {
            role: "--store",
            path,
        });
    }
    check_outputs(&outputs, &inputs)?;
    let params_given: Vec<ssdlab_calib::Param> = a
        .params
        .iter()
        .map(|s| parse_param(s, &base))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!(e))?;

    Ok(Plan {
        base,
        base_text,
        name,
        measured_path,
        data_files,
        params_given,
    })
}

/// Measures the characterisation suite on `--target` `t` and writes the measurements (and the
/// points to `--store`); a file that could not be written is added to `not_kept` and the fit
/// goes on with the measurements held in memory.
fn measure_target(
    a: &CalibrateArgs,
    t: &std::path::Path,
    name: &str,
    measured_path: Option<&std::path::Path>,
    not_kept: &mut Vec<String>,
) -> Result<DataSet, Failure> {
    if a.drive.is_some() {
        return Err(
            anyhow!("--drive applies to --from (the measured drive is named by --name)").into(),
        );
    }
    let point_ns = a.point_time.unwrap_or(match a.suite {
        SuiteKind::Quick => 5_000_000_000,
        SuiteKind::Full => 20_000_000_000,
    });
    if point_ns == 0 {
        return Err(anyhow!("--point-time must be greater than 0").into());
    }
    let points = suite(a.suite, name, a.span, point_ns);
    let total: u64 = points.iter().map(|p| p.case.time_ns).sum();
    // check the target with the first point's workload before anything is written
    let opts = RealOptions {
        allow_destroy: a.allow_destroy,
        on_note: output::note,
        stop: Some(signals::stop_flag()),
        ..Default::default()
    };
    check_target(t, a.span, a.allow_destroy).map_err(|e| anyhow!(e))?;
    output::note(&format!(
        "calibrate: measuring {} points on {} over {} (about {} s, plus writing the span once)",
        points.len(),
        t.display(),
        ssdlab_workload::format_size(a.span),
        total / 1_000_000_000
    ));
    let mut store: Option<Store> = None;
    let label = format!("calibrate {name}");
    let keep = |r: &ssdlab_stats::RunResult| -> Result<bool, String> {
        crate::results::keep(&mut store, a.store.as_deref(), Some(&label), r)
            .map_err(|e| e.err.to_string())?;
        Ok(store.is_some())
    };
    let mut m = RealMeasure::new(t, a.span, opts, Box::new(keep));
    let source = Source {
        title: format!("ssdlab calibrate --target {}", t.display()),
        url: None,
        published: None,
        kind: "measured".into(),
        method: Some(format!(
            "{:?} suite over {} written sequentially first; O_DIRECT, io_uring",
            a.suite,
            ssdlab_workload::format_size(a.span)
        )),
    };
    let raw: RawFile = measure_suite(&mut m, &points, source, &mut |i, n, left| {
        output::note(&format!("calibrate: point {i}/{n}, about {left:.0} s left"));
    })
    .map_err(|e| {
        // the points measured before are kept in --store, and said so
        let kept = match (&a.store, m.kept) {
            (Some(st), n) if n > 0 => {
                format!("; the {n} points measured before are in {}", st.display())
            }
            _ => String::new(),
        };
        if signals::stopped() {
            Failure::new(
                signals::exit_code(),
                anyhow!(
                    "measuring {}: interrupted; no preset or measurement file written{kept}",
                    t.display()
                ),
            )
        } else {
            Failure::new(EXIT_FAILED, anyhow!("measuring {}: {e}{kept}", t.display()))
        }
    })?;
    let path = measured_path.expect("with --target").to_path_buf();
    match output::write_file(&path, ssdlab_calib::data::to_toml(&raw).as_bytes()) {
        Ok(()) => output::note(&format!(
            "calibrate: measurements written to {} (refit later with --from)",
            path.display()
        )),
        Err(e) => {
            // The measurements are in memory: the fit goes on, its result is printed.
            output::note(&format!(
                "calibrate: --measurements {}: {e}; fitting the measurements held in memory",
                path.display()
            ));
            not_kept.push(format!("--measurements {}: {e}", path.display()));
        }
    }
    if let Some(st) = &a.store {
        output::note(&format!(
            "calibrate: the measured points are also in the store {} as runs labelled \"calibrate {name}\" of drive {} (refit with --from {} --drive {})",
            st.display(),
            t.display(),
            st.display(),
            t.display()
        ));
    }
    let ds =
        DataSet::from_raw(&path, raw).map_err(|e| Failure::new(EXIT_FAILED, anyhow!("{e}")))?;
    Ok(ds)
}

pub fn cmd_calibrate(a: CalibrateArgs) -> Result<u8, Failure> {
    let Plan {
        base,
        base_text,
        name,
        measured_path,
        data_files,
        params_given,
    } = plan(&a)?;
    // Outputs that could not be written after the work was done (a full disk): the fit goes on
    // and its result is printed, then these are reported (exit 1).
    let mut not_kept: Vec<String> = Vec::new();
    // the figures: read, or measured now
    let (data, drive) = match &a.target {
        None => {
            let data = read_data(&data_files, "--from")?;
            let drive = a.drive.clone().unwrap_or_else(|| base.name.clone());
            (data, drive)
        }
        Some(t) => (
            vec![measure_target(
                &a,
                t,
                &name,
                measured_path.as_deref(),
                &mut not_kept,
            )?],
            name.clone(),
        ),
    };
    let (figures, held_out) = figures_to_fit(&data, &drive).map_err(|e| anyhow!(e))?;
    // (said once there is something to fit: an error alone is one line)
    if held_out > 0 {
        output::note(&format!(
            "calibrate: {held_out} figures of {drive} marked use = \"validate\" (reviewers' measurements, the reviews' findings) are left out of the fit; ssdlab validate checks the fitted model on them"
        ));
    }
    let claims_left = data.iter().map(|d| d.claims.len()).sum::<usize>();
    let opts = PredictOptions {
        max_time_ns: Some(a.fit_time),
        max_ios: Some(a.fit_ios),
        stop: Some(signals::stop_flag()),
        ..Default::default()
    };
    // figures the simulator cannot run are left out, each named; none left: nothing to fit
    let first = validate(&figures, &[], |_| Some(base.clone()), &opts);
    if opts.stopped() {
        return Err(Failure::new(
            signals::exit_code(),
            anyhow!("interrupted; nothing written to {}", a.out.display()),
        ));
    }
    let (runnable, reasons) = runnable(&figures, &first);
    if runnable.is_empty() {
        return Err(anyhow!(
            "none of the {} figures of {drive} can be simulated ({}); nothing written to {}",
            figures.len(),
            reasons.first().cloned().unwrap_or_default(),
            a.out.display()
        )
        .into());
    }
    for r in &reasons {
        output::note(&format!("calibrate: left out of the fit: {r}"));
    }
    let figures = runnable;
    let params = if params_given.is_empty() {
        default_params(&base, &figures)
    } else {
        params_given
    };
    if params.is_empty() {
        return Err(anyhow!("no parameter to fit; give --param KEY").into());
    }
    output::note(&format!(
        "calibrate: fitting {} parameters of {} to {} figures of {drive}{}",
        params.len(),
        base.name,
        figures.len(),
        if claims_left > 0 {
            format!(" ({claims_left} claims are not fitted; check them with ssdlab validate)")
        } else {
            String::new()
        }
    ));
    let t0 = Instant::now();
    let res = fit(
        &base,
        &figures,
        &params,
        a.passes as usize,
        &opts,
        &mut |msg| {
            output::note(&format!("calibrate: {msg}"));
        },
    )
    .map_err(|e| {
        if signals::stopped() {
            Failure::new(
                signals::exit_code(),
                anyhow!("interrupted; nothing written to {}", a.out.display()),
            )
        } else {
            Failure::new(EXIT_FAILED, anyhow!(e))
        }
    })?;
    let wall = t0.elapsed().as_secs_f64();
    if !res.params.iter().any(|p| p.constrained) {
        return Err(anyhow!(
            "the {} figures of {drive} constrain none of the parameters fitted ({}); nothing written to {}",
            res.figures,
            res.params.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(", "),
            a.out.display()
        )
        .into());
    }
    let provenance = provenance(&base.name, figures.len(), &drive, &data, &res, a.fit_time);
    // the fitted model's error per family on the figures it was fitted to (at the fit's length)
    let check = validate(&figures, &[], |_| Some(res.config.clone()), &opts);
    let calibration = calibration_of(figures.len(), &res, &check, &data, &drive);
    let text = fitted_toml(&base_text, &res, &name, &provenance, &calibration)
        .map_err(|e| Failure::new(EXIT_FAILED, anyhow!(e)))?;
    let written = match output::write_file(&a.out, text.as_bytes()) {
        Ok(()) => format!("written to {}", a.out.display()),
        Err(e) => {
            not_kept.push(format!("--out {}: {e}", a.out.display()));
            format!("not written to {} (below)", a.out.display())
        }
    };
    let out = if a.json {
        serde_json::to_string_pretty(&serde_json::json!({
            "preset": name,
            "base": base.name,
            "drive": drive,
            "figures": res.figures,
            "evaluations": res.evaluations,
            "wall_s": wall,
            "rms_error_before": res.error_before,
            "rms_error_after": res.error_after,
            "params": res.params,
        }))
        .expect("serialises")
            + "\n"
    } else {
        render_fit(&res, wall, &written)
    };
    output::stdout(&out).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    if !not_kept.is_empty() {
        return Err(Failure::new(
            EXIT_FAILED,
            anyhow!(
                "{} (the result was printed; the file was not kept)",
                not_kept.join("; ")
            ),
        ));
    }
    Ok(0)
}
