//! The steps of `ssdlab calibrate` between reading the data and writing the fitted preset, run
//! in order by [`FitJob::run`]: which figures are fitted ([`figures_to_fit`]), which of them the
//! simulator can run ([`runnable`]), the fit, the record written into the fitted preset
//! ([`provenance`], [`calibration_of`]) and the result printed ([`render_fit`], [`fit_json`]).
//! Errors are the command's words.

use crate::data::{DataSet, Usage};
use crate::fit::{default_params, fit, FitResult, Param};
use crate::predict::PredictOptions;
use crate::preset_out::fitted_toml;
use crate::validate::{validate, Validation};
use crate::Figure;
use ssdlab_ssdsim::DriveConfig;
use std::time::Instant;

/// A fit of `ssdlab calibrate`: the base model and its preset text, the data and the drive in it
/// fitted to, the parameters given (none: the defaults for the figures), the fit's options.
#[derive(Debug, Clone, Copy)]
pub struct FitJob<'a> {
    pub base: &'a DriveConfig,
    /// The base preset's text (the fitted preset is written as its edit).
    pub base_text: &'a str,
    /// The fitted preset's name.
    pub name: &'a str,
    pub data: &'a [DataSet],
    /// The drive of the data fitted to.
    pub drive: &'a str,
    /// The parameters given (`--param`); none: [`default_params`].
    pub params: &'a [Param],
    /// Coordinate-descent passes.
    pub passes: usize,
    /// The simulation of each figure (its stop flag interrupts the fit); `max_time_ns` is
    /// recorded in the fitted preset as the fit time.
    pub opts: &'a PredictOptions,
}

/// A fit done: its result, the seconds it took and the fitted preset's text.
#[derive(Debug, Clone)]
pub struct Calibrated {
    pub res: FitResult,
    pub wall_s: f64,
    /// The fitted preset (a TOML preset file).
    pub text: String,
}

/// Why [`FitJob::run`] gave no fitted preset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FitError {
    /// The stop flag was raised.
    Interrupted,
    /// The data or the options leave nothing to fit.
    Input(String),
    /// As [`FitError::Input`], found after the simulator ran (the command adds that nothing was
    /// written).
    NothingFitted(String),
    /// The fit or the preset's text failed.
    Failed(String),
}

impl FitJob<'_> {
    /// Fits the base model's parameters to the drive's figures (those marked to be fitted and
    /// that the simulator can run) and writes the fitted preset's text; `note` gets the steps
    /// (figures held out or left out, the fit's progress).
    pub fn run(&self, note: &mut dyn FnMut(&str)) -> Result<Calibrated, FitError> {
        let drive = self.drive;
        let (figures, held_out) = figures_to_fit(self.data, drive).map_err(FitError::Input)?;
        // (said once there is something to fit: an error alone is one line)
        if held_out > 0 {
            note(&format!(
                "{held_out} figures of {drive} marked use = \"validate\" (reviewers' measurements, the reviews' findings) are left out of the fit; ssdlab validate checks the fitted model on them"
            ));
        }
        let claims_left = self.data.iter().map(|d| d.claims.len()).sum::<usize>();
        let opts = self.opts;
        // figures the simulator cannot run are left out, each named; none left: nothing to fit
        let first = validate(&figures, &[], |_| Some(self.base.clone()), opts);
        if opts.stopped() {
            return Err(FitError::Interrupted);
        }
        let (runnable, reasons) = runnable(&figures, &first);
        if runnable.is_empty() {
            return Err(FitError::NothingFitted(format!(
                "none of the {} figures of {drive} can be simulated ({})",
                figures.len(),
                reasons.first().cloned().unwrap_or_default(),
            )));
        }
        for r in &reasons {
            note(&format!("left out of the fit: {r}"));
        }
        let figures = runnable;
        let params = if self.params.is_empty() {
            default_params(self.base, &figures)
        } else {
            self.params.to_vec()
        };
        if params.is_empty() {
            return Err(FitError::Input(
                "no parameter to fit; give --param KEY".into(),
            ));
        }
        note(&format!(
            "fitting {} parameters of {} to {} figures of {drive}{}",
            params.len(),
            self.base.name,
            figures.len(),
            if claims_left > 0 {
                format!(" ({claims_left} claims are not fitted; check them with ssdlab validate)")
            } else {
                String::new()
            }
        ));
        let t0 = Instant::now();
        let res = fit(self.base, &figures, &params, self.passes, opts, note).map_err(|e| {
            if opts.stopped() {
                FitError::Interrupted
            } else {
                FitError::Failed(e)
            }
        })?;
        let wall_s = t0.elapsed().as_secs_f64();
        if !res.params.iter().any(|p| p.constrained) {
            return Err(FitError::NothingFitted(format!(
                "the {} figures of {drive} constrain none of the parameters fitted ({})",
                res.figures,
                res.params
                    .iter()
                    .map(|p| p.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            )));
        }
        let fit_time = opts.max_time_ns.unwrap_or(0);
        let provenance = provenance(
            &self.base.name,
            figures.len(),
            drive,
            self.data,
            &res,
            fit_time,
        );
        // the fitted model's error per family on the figures it was fitted to (at the fit's
        // length)
        let check = validate(&figures, &[], |_| Some(res.config.clone()), opts);
        let calibration = calibration_of(figures.len(), &res, &check, self.data, drive);
        let text = fitted_toml(self.base_text, &res, self.name, &provenance, &calibration)
            .map_err(FitError::Failed)?;
        Ok(Calibrated { res, wall_s, text })
    }
}

/// The figures of `drive` to fit (those marked `use = "fit"`) and how many of its figures are
/// held out for validation; an error when there is none to fit, saying why.
pub fn figures_to_fit<'a>(
    data: &'a [DataSet],
    drive: &str,
) -> Result<(Vec<&'a Figure>, usize), String> {
    // figures held out for validation (reviews' measurements, the findings the studies
    // re-create) are never fitted to: a model is fitted to ratings, datasheets and this
    // machine's measurements, and checked on the rest
    let held_out: usize = data
        .iter()
        .flat_map(|d| &d.figures)
        .filter(|f| f.case.drive == drive && f.usage == Usage::Validate)
        .count();
    let figures: Vec<&Figure> = data
        .iter()
        .flat_map(|d| &d.figures)
        .filter(|f| f.case.drive == drive && f.usage == Usage::Fit)
        .collect();
    if !figures.is_empty() {
        return Ok((figures, held_out));
    }
    if held_out > 0 {
        return Err(format!(
            "the data holds no figure of drive {drive:?} to fit: its {held_out} figures are held out for validation (use = \"validate\", the default for reviews); mark the ones to fit use = \"fit\""
        ));
    }
    let named: Vec<String> = data.iter().flat_map(|d| d.drives()).collect();
    if named.iter().any(|n| n == drive) {
        // named only by claims: nothing to fit, something to check
        return Err(format!(
            "the data holds claims about drive {drive:?} but no figure of it to fit; ssdlab validate checks claims"
        ));
    }
    Err(format!(
        "the data holds no figure of drive {drive:?} (it names {}); use --drive",
        named.join(", ")
    ))
}

/// The figures a first simulation (`first`, row by row) could run, and for each one left out
/// its origin and why.
pub fn runnable<'a>(figures: &[&'a Figure], first: &Validation) -> (Vec<&'a Figure>, Vec<String>) {
    let mut ok = Vec::with_capacity(figures.len());
    let mut reasons = Vec::new();
    for (f, row) in figures.iter().zip(&first.figures) {
        match &row.failure {
            None => ok.push(*f),
            Some(e) => reasons.push(format!("{}: {e}", f.origin)),
        }
    }
    (ok, reasons)
}

/// How the fitted preset came about, for its header.
pub fn provenance(
    base: &str,
    figures: usize,
    drive: &str,
    data: &[DataSet],
    res: &FitResult,
    fit_time_ns: u64,
) -> String {
    format!(
        "fitted by ssdlab calibrate (base {base}, {figures} figures of {drive} from {}; {} evaluations, fit time {} s per figure)",
        data.iter()
            .map(|d| d.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        res.evaluations,
        fit_time_ns / 1_000_000_000
    )
}

/// The fitted preset's `[calibration]` record: the fit's error, the fitted model's median
/// error per family on the figures (`check`), the data files of `drive` fitted to.
pub fn calibration_of(
    figures: usize,
    res: &FitResult,
    check: &Validation,
    data: &[DataSet],
    drive: &str,
) -> ssdlab_ssdsim::Calibration {
    ssdlab_ssdsim::Calibration {
        figures: figures as u32,
        rms_error: res.error_after,
        families: check
            .families
            .iter()
            .map(|f| (f.family.to_string(), f.median_abs_error))
            .collect(),
        fitted_to: data
            .iter()
            .filter(|d| d.source.kind != "findings")
            .filter(|d| d.figures.iter().any(|f| f.case.drive == drive))
            .map(|d| {
                d.path
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            })
            .collect(),
    }
}

/// The fit as a table: each parameter before and after (or why it was kept), then the error
/// before and after; `written` says where the preset went.
pub fn render_fit(res: &FitResult, wall_s: f64, written: &str) -> String {
    let mut s = String::new();
    for p in &res.params {
        s.push_str(&format!(
            "{:<36} {:>12} -> {:<12} {}\n",
            p.key,
            p.before,
            p.after,
            if p.constrained {
                format!("range {}", p.range)
            } else if p.after != p.before {
                format!("not constrained by the data (nearest of range {})", p.range)
            } else {
                "not constrained by the data (kept)".into()
            }
        ));
    }
    s.push_str(&format!(
        "rms error {:.1} % -> {:.1} % over {} figures ({} evaluations, {wall_s:.1} s); {written}\n",
        res.error_before * 100.0,
        res.error_after * 100.0,
        res.figures,
        res.evaluations,
    ));
    s
}

/// The fit as `ssdlab calibrate --json` prints it: the fitted preset `name`, its base, the
/// drive fitted to, the error before and after and each parameter.
pub fn fit_json(name: &str, base: &str, drive: &str, f: &Calibrated) -> serde_json::Value {
    serde_json::json!({
        "preset": name,
        "base": base,
        "drive": drive,
        "figures": f.res.figures,
        "evaluations": f.res.evaluations,
        "wall_s": f.wall_s,
        "rms_error_before": f.res.error_before,
        "rms_error_after": f.res.error_after,
        "params": f.res.params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn data(usage: &str) -> DataSet {
        let text = format!(
            "[source]\ntitle = \"t\"\nkind = \"review\"\n[[figure]]\ndrive = \"d1\"\nmetric = \"iops\"\nvalue = 1000.0\nunit = \"IOPS\"\nrw = \"randread\"\nbs = \"4k\"\nqd = 1\n{usage}\n"
        );
        DataSet::parse(Path::new("t.toml"), &text).unwrap()
    }

    #[test]
    fn figures_marked_fit_are_fitted() {
        let d = [data("use = \"fit\"")];
        let (figures, held_out) = figures_to_fit(&d, "d1").unwrap();
        assert_eq!(figures.len(), 1);
        assert_eq!(held_out, 0);
    }

    #[test]
    fn held_out_figures_are_not_fitted() {
        let d = [data("")];
        let e = figures_to_fit(&d, "d1").unwrap_err();
        assert!(
            e.starts_with(
                "the data holds no figure of drive \"d1\" to fit: its 1 figures are held out"
            ),
            "{e}"
        );
    }

    #[test]
    fn another_drive_is_named() {
        let d = [data("use = \"fit\"")];
        let e = figures_to_fit(&d, "d2").unwrap_err();
        assert_eq!(
            e,
            "the data holds no figure of drive \"d2\" (it names d1); use --drive"
        );
    }
}
