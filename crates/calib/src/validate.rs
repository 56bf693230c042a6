//! Validation: every figure simulated and compared with its published (or measured) value, the
//! errors summarised per workload family, and every claim checked on the simulated values.

use crate::data::{unit_factor, Claim, ClaimKind, DataSet, Family, Figure, Metric, Usage};
use crate::predict::{simulate_all, Outcome, PredictOptions};
use serde::Serialize;
use ssdlab_ssdsim::DriveConfig;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How much better a must be for a `greater` claim to hold: closer than 1 % is a tie (the
/// simulation's own noise between two configurations is below that; a review's "ahead" is more).
pub const TIE: f64 = 0.01;

/// One figure: published vs simulated.
#[derive(Debug, Clone, Serialize)]
pub struct FigureRow {
    pub origin: String,
    pub drive: String,
    pub workload: String,
    pub family: Family,
    /// Whether the figure is one models are fitted to or one held out to check them.
    pub usage: Usage,
    pub metric: Metric,
    pub unit: String,
    /// As published, in `unit`.
    pub published: f64,
    pub bound: crate::data::Bound,
    /// Simulated, in `unit` (None when the simulation failed: see `failure`).
    pub simulated: Option<f64>,
    /// simulated / published − 1.
    pub error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The errors of one workload family.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyRow {
    pub family: Family,
    pub figures: usize,
    /// Median of |error|.
    pub median_abs_error: f64,
    /// The error of largest magnitude, with its sign.
    pub worst_error: f64,
}

/// One claim checked on simulated values.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimRow {
    pub origin: String,
    pub text: String,
    pub expected: String,
    /// a / b simulated (for latency, b / a: larger is always "a is better").
    pub ratio: Option<f64>,
    pub pass: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The errors of the figures of one use: those models may be fitted to, and those held out.
#[derive(Debug, Clone, Serialize)]
pub struct UsageRow {
    pub usage: Usage,
    pub figures: usize,
    pub median_abs_error: f64,
    /// 90th percentile of |error| (nearest rank).
    pub p90_abs_error: f64,
    /// The five figures of largest |error|: origin, drive, workload, error.
    pub worst: Vec<(String, String, String, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    pub figures: Vec<FigureRow>,
    pub families: Vec<FamilyRow>,
    /// Fit figures and held-out (validate) figures apart: evidence is the second.
    pub usages: Vec<UsageRow>,
    pub claims: Vec<ClaimRow>,
}

impl Validation {
    /// Median and worst |error| over all figures simulated.
    pub fn overall(&self) -> Option<(f64, f64)> {
        let errs: Vec<f64> = self.figures.iter().filter_map(|r| r.error).collect();
        summary(&errs)
    }

    /// When no figure and no claim could be simulated: the first failure (`origin: why`), or
    /// an empty text when none is recorded; `None` when something was simulated.
    pub fn nothing_simulated(&self) -> Option<String> {
        let simulated = self.figures.iter().any(|r| r.error.is_some())
            || self.claims.iter().any(|c| c.ratio.is_some());
        if simulated {
            return None;
        }
        let why = self
            .figures
            .iter()
            .filter_map(|r| r.failure.as_ref().map(|e| format!("{}: {e}", r.origin)))
            .chain(
                self.claims
                    .iter()
                    .filter_map(|c| c.failure.as_ref().map(|e| format!("{}: {e}", c.origin))),
            )
            .next()
            .unwrap_or_default();
        Some(why)
    }
}

/// What `ssdlab validate` checks: the models by the drive name the data gives them, and the
/// figures and claims of the data about them.
#[derive(Debug, Clone)]
pub struct Selection<'a> {
    /// Data name → model.
    pub models: BTreeMap<String, DriveConfig>,
    pub figures: Vec<&'a Figure>,
    pub claims: Vec<&'a Claim>,
}

impl<'a> Selection<'a> {
    /// The models of `presets` (built-in names or preset files), each under its own name or,
    /// for a single one, `drive`; with no preset, every built-in preset the data names. Errors
    /// are `ssdlab validate`'s words.
    pub fn of(
        data: &'a [DataSet],
        presets: &[String],
        drive: Option<&str>,
    ) -> Result<Selection<'a>, String> {
        if drive.is_some() && presets.len() != 1 {
            return Err("--drive names the data's drive for one preset; give exactly one".into());
        }
        let mut models: BTreeMap<String, DriveConfig> = BTreeMap::new();
        for p in presets {
            let cfg = ssdlab_engine::load_drive(p).map_err(|e| format!("{p}: {e}"))?;
            let name = drive.map_or_else(|| cfg.name.clone(), str::to_string);
            models.insert(name, cfg);
        }
        if models.is_empty() {
            for d in data.iter().flat_map(|d| d.drives()) {
                if let Ok(cfg) = ssdlab_ssdsim::load_preset(&d) {
                    models.insert(d, cfg);
                }
            }
            if models.is_empty() {
                return Err("the data names no built-in preset; give the preset to validate (ssdlab validate PRESET --against …)".into());
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
        let sel = Selection {
            models,
            figures,
            claims,
        };
        for c in &sel.claims {
            for side in [&c.a, &c.b] {
                if sel.model(&side.drive).is_none() {
                    return Err(format!(
                        "{}: drive {:?} is neither a built-in preset nor one given",
                        c.origin, side.drive
                    ));
                }
            }
        }
        if sel.figures.is_empty() && sel.claims.is_empty() {
            return Err(format!(
                "the data holds no figure or claim for {}",
                sel.names()
            ));
        }
        Ok(sel)
    }

    /// The model of the data's drive `name`: one of [`Selection::models`], else the built-in
    /// preset of that name.
    pub fn model(&self, name: &str) -> Option<DriveConfig> {
        self.models
            .get(name)
            .cloned()
            .or_else(|| ssdlab_ssdsim::load_preset(name).ok())
    }

    /// The models' names, comma-separated.
    pub fn names(&self) -> String {
        self.models.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// The `q` quantile (0..=1) of the sorted values, nearest rank.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let k = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[k - 1]
}

fn usage_rows(rows: &[FigureRow]) -> Vec<UsageRow> {
    let mut out = Vec::new();
    for usage in [Usage::Fit, Usage::Validate] {
        let mut of: Vec<&FigureRow> = rows
            .iter()
            .filter(|r| r.usage == usage && r.error.is_some())
            .collect();
        if of.is_empty() {
            continue;
        }
        let errs: Vec<f64> = of.iter().filter_map(|r| r.error).collect();
        let (median, _) = summary(&errs).expect("not empty");
        let mut abs: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
        abs.sort_by(f64::total_cmp);
        of.sort_by(|a, b| {
            b.error
                .unwrap_or(0.0)
                .abs()
                .total_cmp(&a.error.unwrap_or(0.0).abs())
        });
        out.push(UsageRow {
            usage,
            figures: errs.len(),
            median_abs_error: median,
            p90_abs_error: quantile(&abs, 0.9),
            worst: of
                .iter()
                .take(5)
                .map(|r| {
                    (
                        r.origin.clone(),
                        r.drive.clone(),
                        r.workload.clone(),
                        r.error.unwrap_or(0.0),
                    )
                })
                .collect(),
        });
    }
    out
}

fn summary(errs: &[f64]) -> Option<(f64, f64)> {
    if errs.is_empty() {
        return None;
    }
    let mut abs: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    let median = if n % 2 == 1 {
        abs[n / 2]
    } else {
        (abs[n / 2 - 1] + abs[n / 2]) / 2.0
    };
    let worst = errs
        .iter()
        .copied()
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
        .expect("not empty");
    Some((median, worst))
}

/// "a is better than b" as a ratio ≥ 1 when true, whatever the metric's direction.
fn better_ratio(metric: Metric, a: f64, b: f64) -> f64 {
    if metric.higher_is_better() {
        a / b
    } else {
        b / a
    }
}

/// Simulates the figures and the claims' workloads with the models `model` gives and compares.
pub fn validate<F>(
    figures: &[&Figure],
    claims: &[&Claim],
    model: F,
    opts: &PredictOptions,
) -> Validation
where
    F: Fn(&str) -> Option<DriveConfig> + Sync,
{
    validate_with(figures, claims, |uniq| {
        let cache = crate::predict::SimCache::single_pass();
        simulate_all(uniq, model, opts, Some(&cache))
    })
}

/// [`validate`] with the workloads simulated by `simulate`, which gets every distinct workload
/// of the figures and claims once and returns their outcomes in the same order (a study runs
/// them on the drive states it has already built).
pub fn validate_with<S>(figures: &[&Figure], claims: &[&Claim], simulate: S) -> Validation
where
    S: FnOnce(&[&crate::data::Case]) -> Vec<Result<Outcome, String>>,
{
    let mut cases: Vec<&crate::data::Case> = figures.iter().map(|f| &f.case).collect();
    for c in claims {
        cases.push(&c.a);
        cases.push(&c.b);
    }
    // identical workloads are simulated once
    let mut uniq: Vec<&crate::data::Case> = Vec::new();
    let mut index = Vec::with_capacity(cases.len());
    for c in &cases {
        match uniq.iter().position(|u| u == c) {
            Some(i) => index.push(i),
            None => {
                index.push(uniq.len());
                uniq.push(c);
            }
        }
    }
    let outs: Vec<Result<Outcome, String>> = simulate(&uniq);
    assert_eq!(outs.len(), uniq.len(), "one outcome per workload");
    let out = |k: usize| outs[index[k]].clone();
    let mut rows = Vec::with_capacity(figures.len());
    for (k, f) in figures.iter().enumerate() {
        let factor = unit_factor(f.metric, &f.raw.unit).unwrap_or(1.0);
        let (simulated, error, failure) = match out(k) {
            Ok(o) => {
                let v = o.get(f.metric);
                (Some(v / factor), Some(f.error(v)), None)
            }
            Err(e) => (None, None, Some(e)),
        };
        rows.push(FigureRow {
            origin: f.origin.clone(),
            drive: f.case.drive.clone(),
            workload: f.case.label(),
            family: f.case.family(),
            usage: f.usage,
            metric: f.metric,
            unit: f.raw.unit.clone(),
            published: f.raw.value,
            bound: f.bound,
            simulated,
            error,
            failure,
        });
    }
    let mut families = Vec::new();
    let mut fams: Vec<Family> = rows.iter().map(|r| r.family).collect();
    fams.sort();
    fams.dedup();
    for fam in fams {
        let errs: Vec<f64> = rows
            .iter()
            .filter(|r| r.family == fam)
            .filter_map(|r| r.error)
            .collect();
        if let Some((median, worst)) = summary(&errs) {
            families.push(FamilyRow {
                family: fam,
                figures: errs.len(),
                median_abs_error: median,
                worst_error: worst,
            });
        }
    }
    let mut claim_rows = Vec::with_capacity(claims.len());
    for (j, c) in claims.iter().enumerate() {
        let k = figures.len() + 2 * j;
        let expected = match c.kind {
            ClaimKind::Greater => "a better than b (by 1 % or more)".to_string(),
            ClaimKind::Ratio { value, tolerance } => {
                format!("a/b = {value:.2} ± {:.0} %", tolerance * 100.0)
            }
        };
        let (ratio, pass, failure) = match (out(k), out(k + 1)) {
            (Ok(a), Ok(b)) => {
                let r = better_ratio(c.metric, a.get(c.metric), b.get(c.metric));
                let pass = match c.kind {
                    ClaimKind::Greater => r >= 1.0 + TIE,
                    ClaimKind::Ratio { value, tolerance } => (r / value - 1.0).abs() <= tolerance,
                };
                (Some(r), pass, None)
            }
            (Err(e), _) | (_, Err(e)) => (None, false, Some(e)),
        };
        claim_rows.push(ClaimRow {
            origin: c.origin.clone(),
            text: c.text.clone(),
            expected,
            ratio,
            pass,
            failure,
        });
    }
    Validation {
        usages: usage_rows(&rows),
        figures: rows,
        families,
        claims: claim_rows,
    }
}

fn pct(e: f64) -> String {
    format!("{:+.0} %", e * 100.0)
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Lays out rows of cells in aligned columns (the first row is the header).
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
    }
    s
}

/// The figure table's header and rows (shared by the text and the HTML report).
fn figure_table(v: &Validation) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "drive",
        "workload",
        "reference",
        "simulated",
        "error",
        "use",
        "source",
    ];
    let rows = v
        .figures
        .iter()
        .map(|r| {
            vec![
                r.drive.clone(),
                r.workload.clone(),
                format!(
                    "{}{} {}",
                    match r.bound {
                        crate::data::Bound::Exact => "",
                        crate::data::Bound::Lower => "≥ ",
                        crate::data::Bound::Upper => "≤ ",
                    },
                    num(r.published),
                    r.unit
                ),
                match r.simulated {
                    Some(x) => format!("{} {}", num(x), r.unit),
                    None => "failed".into(),
                },
                r.error.map(pct).unwrap_or_else(|| "—".into()),
                r.usage.to_string(),
                r.origin.clone(),
            ]
        })
        .collect();
    (header, rows)
}

/// The per-family table, with a last row over all figures.
fn family_table(v: &Validation) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec!["family", "figures", "median |error|", "worst"];
    let mut rows: Vec<Vec<String>> = v
        .families
        .iter()
        .map(|f| {
            vec![
                f.family.to_string(),
                f.figures.to_string(),
                format!("{:.0} %", f.median_abs_error * 100.0),
                pct(f.worst_error),
            ]
        })
        .collect();
    if let Some((median, worst)) = v.overall() {
        rows.push(vec![
            "all".into(),
            v.figures
                .iter()
                .filter(|r| r.error.is_some())
                .count()
                .to_string(),
            format!("{:.0} %", median * 100.0),
            pct(worst),
        ]);
    }
    (header, rows)
}

/// Fit figures and held-out figures apart: median and 90th-percentile |error|.
fn usage_table(v: &Validation) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "figures",
        "count",
        "median |error|",
        "90th percentile",
        "worst",
    ];
    let rows = v
        .usages
        .iter()
        .map(|u| {
            vec![
                match u.usage {
                    Usage::Fit => "fit (ratings, datasheets, measurements)".to_string(),
                    Usage::Validate => "validate (held out)".to_string(),
                },
                u.figures.to_string(),
                format!("{:.0} %", u.median_abs_error * 100.0),
                format!("{:.0} %", u.p90_abs_error * 100.0),
                u.worst.first().map(|w| pct(w.3)).unwrap_or_default(),
            ]
        })
        .collect();
    (header, rows)
}

/// The five held-out figures of largest |error| (the fitted ones when none is held out).
fn worst_lines(v: &Validation) -> Vec<String> {
    let u = v
        .usages
        .iter()
        .find(|u| u.usage == Usage::Validate)
        .or_else(|| v.usages.first());
    u.map(|u| {
        u.worst
            .iter()
            .map(|(o, d, w, e)| format!("{} {d} {w} ({o}, {} figure)", pct(*e), u.usage))
            .collect()
    })
    .unwrap_or_default()
}

fn claim_table(v: &Validation) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec!["claim", "expected", "simulated", ""];
    let rows = v
        .claims
        .iter()
        .map(|c| {
            vec![
                c.text.clone(),
                c.expected.clone(),
                c.ratio
                    .map(|r| format!("a/b = {r:.3}"))
                    .unwrap_or_else(|| "failed".into()),
                if c.pass { "pass" } else { "FAIL" }.into(),
            ]
        })
        .collect();
    (header, rows)
}

/// The lines naming why figures and claims could not be simulated.
fn failures(v: &Validation) -> Vec<String> {
    let figs = v.figures.iter().filter_map(|r| {
        r.failure
            .as_ref()
            .map(|e| format!("{} ({}): {e}", r.origin, r.workload))
    });
    let claims = v
        .claims
        .iter()
        .filter_map(|c| c.failure.as_ref().map(|e| format!("{}: {e}", c.origin)));
    figs.chain(claims).collect()
}

fn with_header(header: Vec<&'static str>, rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    let mut all = vec![header.into_iter().map(String::from).collect()];
    all.extend(rows);
    all
}

/// The validation as text tables: figures, families, claims.
pub fn render(v: &Validation) -> String {
    let mut s = String::new();
    if !v.figures.is_empty() {
        let (h, rows) = figure_table(v);
        s.push_str(&columns(&with_header(h, rows)));
        s.push('\n');
        let (h, rows) = family_table(v);
        s.push_str(&columns(&with_header(h, rows)));
        s.push('\n');
        let (h, rows) = usage_table(v);
        s.push_str(&columns(&with_header(h, rows)));
        let worst = worst_lines(v);
        if !worst.is_empty() {
            s.push_str("worst five:\n");
            for w in worst {
                let _ = writeln!(s, "  {w}");
            }
        }
    }
    if !v.claims.is_empty() {
        if !s.is_empty() {
            s.push('\n');
        }
        let (h, rows) = claim_table(v);
        s.push_str(&columns(&with_header(h, rows)));
        let passed = v.claims.iter().filter(|c| c.pass).count();
        let _ = writeln!(s, "{passed} of {} claims hold", v.claims.len());
    }
    let fails = failures(v);
    if !fails.is_empty() {
        s.push_str("\nnot simulated:\n");
        for f in fails {
            let _ = writeln!(s, "  {f}");
        }
    }
    s
}

/// Most workloads in one published-vs-simulated chart.
const PER_CHART: usize = 10;

/// The validation as one self-contained HTML page: the error per family as a chart, published
/// against simulated per drive and unit as charts, then the tables of the text report.
/// `meta` is the line under the title (the command, the data read).
pub fn render_html(
    v: &Validation,
    title: &str,
    meta: &str,
    environment: Option<&ssdlab_chart::Environment>,
) -> String {
    use ssdlab_chart::{BarChart, BarSeries, Page};
    let mut page = Page::new(title);
    page.meta(meta);
    if let Some(e) = environment {
        page.environment(e);
    }
    if let Some((median, worst)) = v.overall() {
        let n = v.figures.iter().filter(|r| r.error.is_some()).count();
        page.p(&format!(
            "{n} figures simulated: median error ±{:.0} %, worst {}.",
            median * 100.0,
            pct(worst)
        ));
    }
    for u in &v.usages {
        page.p(&format!(
            "{} {} figures{}: median error ±{:.0} %, 90th percentile ±{:.0} %.",
            u.figures,
            u.usage,
            if u.usage == Usage::Validate {
                " (held out: no model was fitted to them)"
            } else {
                " (models may be fitted to them)"
            },
            u.median_abs_error * 100.0,
            u.p90_abs_error * 100.0
        ));
    }
    if !v.claims.is_empty() {
        let passed = v.claims.iter().filter(|c| c.pass).count();
        page.p(&format!("{passed} of {} claims hold.", v.claims.len()));
    }
    if !v.families.is_empty() {
        page.h2("Error per workload family");
        page.chart(&BarChart {
            title: "Simulated vs reference: |error| per workload family".into(),
            x_title: "workload family".into(),
            y_title: "|error| (%)".into(),
            categories: v
                .families
                .iter()
                .map(|f| vec![f.family.to_string()])
                .collect(),
            series: vec![
                BarSeries {
                    name: "median |error|".into(),
                    values: v
                        .families
                        .iter()
                        .map(|f| Some(f.median_abs_error * 100.0))
                        .collect(),
                },
                BarSeries {
                    name: "worst |error|".into(),
                    values: v
                        .families
                        .iter()
                        .map(|f| Some(f.worst_error.abs() * 100.0))
                        .collect(),
                },
            ],
        });
        let (h, rows) = family_table(v);
        page.table(&h, &rows);
        page.h3("Fitted and held-out figures");
        let (h, rows) = usage_table(v);
        page.table(&h, &rows);
        let worst = worst_lines(v);
        if !worst.is_empty() {
            page.list("the five worst", &worst);
        }
    }
    if !v.figures.is_empty() {
        page.h2("Reference (published or measured) and simulated figures, per drive");
        // one chart per drive and unit, at most PER_CHART workloads each
        let mut groups: Vec<(String, String)> = v
            .figures
            .iter()
            .map(|r| (r.drive.clone(), r.unit.clone()))
            .collect();
        groups.sort();
        groups.dedup();
        for (drive, unit) in groups {
            let rows: Vec<&FigureRow> = v
                .figures
                .iter()
                .filter(|r| r.drive == drive && r.unit == unit)
                .collect();
            let parts = rows.len().div_ceil(PER_CHART);
            for (i, chunk) in rows.chunks(PER_CHART).enumerate() {
                let part = if parts > 1 {
                    format!(" ({} of {parts})", i + 1)
                } else {
                    String::new()
                };
                page.chart(&BarChart {
                    title: format!("{drive}: reference and simulated{part}"),
                    x_title: "workload".into(),
                    y_title: unit.clone(),
                    categories: chunk.iter().map(|r| wrap(&r.workload)).collect(),
                    series: vec![
                        BarSeries {
                            name: "reference".into(),
                            values: chunk.iter().map(|r| Some(r.published)).collect(),
                        },
                        BarSeries {
                            name: "simulated".into(),
                            values: chunk.iter().map(|r| r.simulated).collect(),
                        },
                    ],
                });
            }
        }
        page.h3("Every figure");
        let (h, rows) = figure_table(v);
        page.table(&h, &rows);
    }
    if !v.claims.is_empty() {
        page.h2("Claims");
        let (h, rows) = claim_table(v);
        page.table(&h, &rows);
    }
    let fails = failures(v);
    if !fails.is_empty() {
        page.h2("Not simulated");
        page.list("failures", &fails);
    }
    page.finish()
}

/// A workload label as a bar category of two or three short lines.
fn wrap(label: &str) -> Vec<String> {
    let words: Vec<&str> = label.split(' ').collect();
    let mut lines: Vec<String> = Vec::new();
    for w in words {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + w.chars().count() <= 14 => {
                l.push(' ');
                l.push_str(w);
            }
            _ => lines.push(w.to_string()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataSet;
    use std::path::Path;

    /// The models and figures `ssdlab validate` checks, and what it refuses.
    #[test]
    fn selection() {
        let fig = |drive: &str| {
            format!("[[figure]]\ndrive = \"{drive}\"\nmetric = \"iops\"\nvalue = 1000.0\nunit = \"IOPS\"\nrw = \"randread\"\nbs = \"4k\"\nqd = 1\n")
        };
        let text = format!(
            "[source]\ntitle = \"t\"\nkind = \"review\"\n{}{}",
            fig("vertex450-128g"),
            fig("my-drive")
        );
        let data = [DataSet::parse(Path::new("t.toml"), &text).unwrap()];
        // no preset given: the built-in presets the data names
        let sel = Selection::of(&data, &[], None).unwrap();
        assert_eq!(sel.names(), "vertex450-128g");
        assert_eq!(sel.figures.len(), 1);
        // a preset standing for the data's drive
        let sel = Selection::of(&data, &["x25e-64g".into()], Some("my-drive")).unwrap();
        assert_eq!(sel.names(), "my-drive");
        assert_eq!(sel.model("my-drive").unwrap().name, "x25e-64g");
        assert_eq!(sel.figures[0].case.drive, "my-drive");
        let e = Selection::of(&data, &[], Some("my-drive")).unwrap_err();
        assert!(e.starts_with("--drive names the data's drive for one preset"));
        let e = Selection::of(&data, &["x25e-64g".into()], None).unwrap_err();
        assert_eq!(e, "the data holds no figure or claim for x25e-64g");
    }

    #[test]
    fn claims_are_judged_on_the_outcomes_given() {
        let side = |qd: u32| {
            format!(
                "{{ drive = \"d\", rw = \"randread\", bs = \"4k\", qd = {qd}, state = \"full\" }}"
            )
        };
        let text = format!(
            "[source]\ntitle = \"t\"\nkind = \"findings\"\n\
             [[figure]]\ndrive = \"d\"\nmetric = \"iops\"\nvalue = 900.0\nunit = \"IOPS\"\nbound = \"lower\"\nrw = \"randread\"\nbs = \"4k\"\nqd = 1\nstate = \"full\"\n\
             [[claim]]\ntext = \"QD 4 is 30 % ahead\"\nmetric = \"iops\"\nkind = \"ratio\"\nvalue = 1.3\na = {}\nb = {}\n\
             [[claim]]\ntext = \"QD 2 ahead of QD 1\"\nmetric = \"iops\"\nkind = \"greater\"\na = {}\nb = {}\n",
            side(4),
            side(1),
            side(2),
            side(1)
        );
        let d = DataSet::parse(Path::new("t.toml"), &text).unwrap();
        let figures: Vec<&Figure> = d.figures.iter().collect();
        let claims: Vec<&Claim> = d.claims.iter().collect();
        let mut asked = 0;
        // IOPS = 1000 × QD^0.05: QD 4 only 7 % ahead of QD 1 (not 30 ± 15 %), QD 2 3.5 % ahead
        let v = validate_with(&figures, &claims, |cases| {
            asked = cases.len();
            cases
                .iter()
                .map(|c| {
                    let iops = 1000.0 * (c.qd as f64).powf(0.05);
                    Ok(Outcome {
                        bw: iops * 4096.0,
                        iops,
                        lat_ns: 1e9 / iops,
                    })
                })
                .collect()
        });
        // the figure's workload and the claims' QD 1 side are one workload, simulated once
        assert_eq!(asked, 3);
        assert_eq!(v.figures[0].error, Some(0.0), "the bound is met");
        assert!(!v.claims[0].pass);
        assert!((v.claims[0].ratio.unwrap() - 4f64.powf(0.05)).abs() < 1e-12);
        assert!(v.claims[1].pass);
        // a workload that failed to simulate fails its claim with the reason
        let v = validate_with(&figures, &claims, |cases| {
            cases.iter().map(|_| Err("no model".to_string())).collect()
        });
        assert!(v
            .claims
            .iter()
            .all(|c| !c.pass && c.failure.as_deref() == Some("no model")));
    }
}
