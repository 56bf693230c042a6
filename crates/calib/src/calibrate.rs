//! The steps of `ssdlab calibrate` between reading the data and writing the fitted preset:
//! which figures are fitted ([`figures_to_fit`]), which of them the simulator can run
//! ([`runnable`]), the record written into the fitted preset ([`provenance`],
//! [`calibration_of`]) and the table printed ([`render_fit`]). Errors are the command's words.

use crate::data::{DataSet, Usage};
use crate::fit::FitResult;
use crate::validate::Validation;
use crate::Figure;

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
