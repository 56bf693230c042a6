//! `ssdlab calibrate`: glue from the options to `ssdlab-calib` (the checks of the files read
//! and written, the fit and the fitted preset's text) and, for `calibrate --target`, to the real
//! engine that measures the characterisation suite. `--target` stays a path, not an
//! `engine::TargetSpec`: the suite measures one file or block device, which it fills and probes
//! (`ssdlab_calib::measure`); the null target, a RAID 0 set or a simulated drive have no drive
//! of their own to fit.

use crate::cli::{duration_arg, positive_size_arg, Failure, EXIT_FAILED};
use crate::figures::read_data;
use crate::output::{self, check_writable_path};
use crate::signals;
use anyhow::{anyhow, Result};
use clap::Args;
use ssdlab_calib::calibrate::{fit_json, render_fit, FitError, FitJob};
use ssdlab_calib::data::{data_paths, DataSet, RawFile};
use ssdlab_calib::measure::{check_target, RealMeasure};
use ssdlab_calib::plan::{
    load_base, measured_source, measurements_path, preset_name, target_suite, Files,
};
use ssdlab_calib::suite::{measure_suite, SuiteKind};
use ssdlab_calib::{parse_param, PredictOptions};
use ssdlab_engine::RealOptions;
use ssdlab_ssdsim::DriveConfig;
use ssdlab_store::Store;
use std::path::PathBuf;

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
    let (base, base_text) = load_base(&a.base).map_err(|e| anyhow!(e))?;
    let name = preset_name(a.name.as_deref(), &a.out).map_err(|e| anyhow!(e))?;
    let measured_path = a
        .target
        .as_ref()
        .map(|_| measurements_path(&a.out, a.measurements.as_deref()));
    let files = Files {
        base: &a.base,
        target: a.target.as_deref(),
        out: &a.out,
        measured: measured_path.as_deref(),
        store: a.store.as_deref(),
    };
    // outputs: writable, and none of them an input
    check_writable_path("--out", &a.out).map_err(|e| anyhow!(e))?;
    if let Some(m) = &measured_path {
        check_writable_path("--measurements", m).map_err(|e| anyhow!(e))?;
    }
    files.check_distinct().map_err(|e| anyhow!(e))?;
    let data_files = data_paths(&a.from, "--from").map_err(|e| anyhow!(e))?;
    // --store: an existing file must be a writable ssdlab store (checked before anything is
    // measured); a missing one is created with the first measured point
    if let Some(path) = &a.store {
        crate::results::check_store_path(path)?;
        if path.exists() {
            Store::open(path)
                .and_then(|st| st.require_writable("the measurements must be stored"))
                .map_err(crate::exit::store_failure)?;
        }
    }
    files.check_outputs(&data_files)?;
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
    let points = target_suite(a.suite, name, a.span, a.point_time).map_err(|e| anyhow!(e))?;
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
    let source = measured_source(t, a.suite, a.span);
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
    let opts = PredictOptions {
        max_time_ns: Some(a.fit_time),
        max_ios: Some(a.fit_ios),
        stop: Some(signals::stop_flag()),
        ..Default::default()
    };
    let job = FitJob {
        base: &base,
        base_text: &base_text,
        name: &name,
        data: &data,
        drive: &drive,
        params: &params_given,
        passes: a.passes as usize,
        opts: &opts,
    };
    let nothing = format!("nothing written to {}", a.out.display());
    let fitted = job
        .run(&mut |msg| output::note(&format!("calibrate: {msg}")))
        .map_err(|e| match e {
            FitError::Interrupted => {
                Failure::new(signals::exit_code(), anyhow!("interrupted; {nothing}"))
            }
            FitError::Input(e) => anyhow!(e).into(),
            FitError::NothingFitted(e) => anyhow!("{e}; {nothing}").into(),
            FitError::Failed(e) => Failure::new(EXIT_FAILED, anyhow!(e)),
        })?;
    let text = &fitted.text;
    let written = match output::write_file(&a.out, text.as_bytes()) {
        Ok(()) => format!("written to {}", a.out.display()),
        Err(e) => {
            not_kept.push(format!("--out {}: {e}", a.out.display()));
            format!("not written to {} (below)", a.out.display())
        }
    };
    let out = if a.json {
        serde_json::to_string_pretty(&fit_json(&name, &base.name, &drive, &fitted))
            .expect("serialises")
            + "\n"
    } else {
        render_fit(&fitted.res, fitted.wall_s, &written)
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
