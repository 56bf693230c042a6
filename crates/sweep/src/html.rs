//! The HTML report of sweeps and studies (`ssdlab report DB --html FILE`, `ssdlab study`).
//!
//! Per sweep: the findings in words; for array targets per workload IOPS (MB/s for sequential
//! work) against QD on a log2 axis, one line per stripe plus the baseline, the best stripe bold
//! and named in the legend, and a heat map of the gain (stripe × QD) with the best stripe of
//! each QD outlined; mean and p99 latency against QD (both axes logarithmic); the latency
//! histogram of the best stripe at the highest QD; the mix recommendation; for alignment pairs
//! grouped bars per drive with the controller's unaligned-write policy named; otherwise one line
//! per target (throughput and latency) and each target's histogram at the highest QD. Points with
//! more than one finished repeat carry error bars from the lowest to the highest repeat. Then the
//! tables, the workload specs, the targets' preset parameters and the sweep file, so a report
//! carries what it takes to reproduce it.

use crate::analysis::{list_sizes, Analysis, Cell, MixRecommendation};
use crate::findings::{policy_reason, TargetInfo};
use crate::latency::PointLatency;
use ssdlab_chart::{BarChart, BarSeries, HeatMap, LineChart, Page, Scale, Series};
use ssdlab_report::html::histogram_chart;
use ssdlab_report::table::{fmt_count, fmt_lat};
use ssdlab_workload::format_size;

/// One sweep of the report with what the caller adds.
pub struct SweepHtml<'a> {
    pub analysis: &'a Analysis,
    /// The sweep file (TOML) as run.
    pub sweep_toml: &'a str,
    pub description: Option<&'a str>,
    /// Recommendations for the mix asked for (`--mix`), if any.
    pub mix: Option<&'a [MixRecommendation]>,
    /// What is known about the targets (presets).
    pub targets: &'a [TargetInfo],
    /// The runs whose latency histograms are shown ([`Analysis::latency_histograms`]; empty for
    /// none).
    pub latency: &'a [PointLatency],
}

/// Renders the sweeps into `page`.
pub fn sweep_sections(page: &mut Page, s: &SweepHtml<'_>) {
    let a = s.analysis;
    page.h2(&format!("Sweep {}", a.sweep));
    if let Some(d) = s.description {
        page.p(d);
    }
    let mut status = format!("{} of {} points done", a.done, a.points);
    if a.failed > 0 {
        status.push_str(&format!(", {} failed", a.failed));
    }
    if a.done < a.points {
        status.push_str(" (run the sweep again to finish it)");
    }
    page.meta(&status);
    let findings = a.findings(s.targets);
    if !findings.is_empty() {
        page.h3("Findings");
        page.list("findings", &findings);
    }
    for t in a.array_targets() {
        array_charts(page, a, &t, s.latency);
        let recs: Vec<&MixRecommendation> = s
            .mix
            .unwrap_or(&[])
            .iter()
            .filter(|r| r.target_label == t)
            .collect();
        let all: Vec<(String, f64)> = a.workloads.iter().map(|w| (w.clone(), 1.0)).collect();
        let default = a.recommend(&all, None).ok().unwrap_or_default();
        let shown: Vec<&MixRecommendation> = if recs.is_empty() {
            default.iter().filter(|r| r.target_label == t).collect()
        } else {
            recs
        };
        for r in shown {
            mix_section(page, r);
        }
    }
    let pairs = a.alignment_pairs();
    if !pairs.is_empty() {
        alignment_charts(page, a, s.targets, &pairs);
    }
    if a.array_targets().is_empty() && pairs.is_empty() {
        plain_charts(page, a, s.latency);
    }
    cells_table(page, a);
    page.h3("Workloads");
    let rows: Vec<Vec<String>> = a
        .workload_specs
        .iter()
        .map(|(n, spec)| {
            vec![
                n.clone(),
                spec.summary(),
                serde_json::to_string(spec).unwrap_or_default(),
            ]
        })
        .collect();
    page.table(&["workload", "summary", "exact spec (QD per point)"], &rows);
    for t in s.targets {
        if let Some(p) = &t.parameters {
            page.h3(&format!(
                "Target {}: {}",
                t.label,
                t.description.as_deref().unwrap_or("parameters")
            ));
            page.pre(p);
        }
    }
    page.h3("Sweep file");
    page.pre(s.sweep_toml);
}

/// A figure of a cell: its mean over the repeats, and the lowest and highest of them.
type Figure = fn(&Cell) -> (f64, f64, f64);

/// The unit a workload's throughput chart uses.
fn metric(a: &Analysis, w: &str) -> (&'static str, Figure) {
    if a.is_sequential(w) {
        ("throughput (MB/s, 10^6 bytes)", |c| {
            (c.mb_s, c.mb_s_min, c.mb_s_max)
        })
    } else {
        ("IOPS (I/Os per second)", |c| {
            (c.iops, c.iops_min, c.iops_max)
        })
    }
}

/// One line of the charts against QD: a target (at a stripe) with its name and look.
struct Line {
    name: String,
    target: String,
    stripe: Option<u64>,
    look: usize,
    bold: bool,
}

impl Line {
    fn cells<'a>(&self, a: &'a Analysis, w: &str) -> Vec<&'a Cell> {
        a.qds
            .iter()
            .filter_map(|&q| a.cell(&self.target, self.stripe, w, q))
            .collect()
    }

    /// The series of `figure` (scaled by `div`) against QD, with the spread of the repeats as
    /// error bars where a point has more than one.
    fn series(&self, a: &Analysis, w: &str, figure: Figure, div: f64, name: String) -> Series {
        let cells = self.cells(a, w);
        Series {
            name,
            points: cells
                .iter()
                .map(|c| (c.qd as f64, figure(c).0 / div))
                .collect(),
            look: self.look,
            bold: self.bold,
            errors: cells
                .iter()
                .map(|c| {
                    let (_, lo, hi) = figure(c);
                    (c.repeats > 1).then_some((lo / div, hi / div))
                })
                .collect(),
        }
    }
}

/// What the error bars of the charts of `lines` at `w` show (None when no point has repeats).
fn error_label(a: &Analysis, w: &str, lines: &[Line]) -> Option<String> {
    let n: Vec<usize> = lines
        .iter()
        .flat_map(|l| l.cells(a, w))
        .map(|c| c.repeats)
        .filter(|r| *r > 1)
        .collect();
    let (lo, hi) = (n.iter().min()?, n.iter().max()?);
    Some(if lo == hi {
        format!("bars: lowest–highest of the {hi} repeats")
    } else {
        format!("bars: lowest–highest of the repeats ({lo}–{hi})")
    })
}

/// The throughput of `lines` against QD.
fn throughput_chart(a: &Analysis, w: &str, title: String, lines: &[Line]) -> LineChart {
    let (unit, figure) = metric(a, w);
    LineChart {
        title,
        x_title: "queue depth (outstanding I/Os, log2 scale)".into(),
        y_title: unit.into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Linear,
        x_ticks: None,
        series: lines
            .iter()
            .map(|l| l.series(a, w, figure, 1.0, l.name.clone()))
            .collect(),
        error_label: error_label(a, w, lines),
    }
}

/// Mean and p99 latency of `lines` against QD, both axes logarithmic: per line the mean in its
/// look and the p99 in the same colour with another dash and marker. None with fewer than two
/// QDs or no latency.
fn latency_chart(a: &Analysis, w: &str, title: String, lines: &[Line]) -> Option<LineChart> {
    if a.qds.len() < 2 {
        return None;
    }
    let mean: Figure = |c| (c.lat_mean_ns, c.lat_mean_min_ns, c.lat_mean_max_ns);
    let p99: Figure = |c| (c.lat_p99_ns, c.lat_p99_min_ns, c.lat_p99_max_ns);
    // ms when the axis in µs would run past 1000 µs (a tick of 10k µs) and no latency drawn is
    // under 10 µs (a tick of 0.001 ms), else µs
    let drawn: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.cells(a, w))
        .flat_map(|c| [mean(c), p99(c)])
        .flat_map(|(m, lo, hi)| [m, lo, hi])
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lowest = drawn.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = drawn.iter().copied().fold(0.0, f64::max);
    let (unit, div) = if highest > 1e6 && lowest >= 1e4 {
        ("ms", 1e6)
    } else {
        ("µs", 1e3)
    };
    // the p99 line of look k is look k + a multiple of 7: the same colour, another dash and marker
    let offset = 7 * lines
        .iter()
        .map(|l| l.look + 1)
        .max()
        .unwrap_or(1)
        .div_ceil(7);
    let mut series = Vec::new();
    for l in lines {
        series.push(l.series(a, w, mean, div, format!("{}: mean", l.name)));
        let mut s = l.series(a, w, p99, div, format!("{}: p99", l.name));
        s.look += offset;
        series.push(s);
    }
    // p99 is 0 where it is unknown: such lines are left out
    series.retain(|s| s.points.iter().any(|p| p.1 > 0.0));
    if series.is_empty() {
        return None;
    }
    Some(LineChart {
        title,
        x_title: "queue depth (outstanding I/Os, log2 scale)".into(),
        y_title: format!("total latency ({unit}, log scale)"),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        x_ticks: None,
        series,
        error_label: error_label(a, w, lines),
    })
}

/// The latency histograms of the runs of `target` (at `stripe`) at `w` that the report shows.
fn histograms(
    page: &mut Page,
    latency: &[PointLatency],
    target: &str,
    stripe: Option<u64>,
    w: &str,
    what: &str,
) {
    for l in latency
        .iter()
        .filter(|l| l.target_label == target && l.stripe == stripe && l.workload == w)
    {
        for (op, lat) in &l.ops {
            let op_name = if l.ops.len() > 1 {
                format!(" ({})", op.as_str())
            } else {
                String::new()
            };
            let name = if l.repeats > 1 {
                format!("{} (repeat {} of {})", op.as_str(), l.repeat + 1, l.repeats)
            } else {
                op.as_str().to_string()
            };
            page.chart(&histogram_chart(
                &format!("{w}{op_name}: latency histogram of {what}, QD {}", l.qd),
                &name,
                lat,
            ));
        }
    }
}

fn array_charts(page: &mut Page, a: &Analysis, t: &str, latency: &[PointLatency]) {
    let stripes = a.stripes(t);
    let base = a
        .cells
        .iter()
        .find(|c| c.target_label == t)
        .and_then(|c| c.baseline_label.clone());
    page.h3(&format!(
        "{t}{}",
        base.as_ref()
            .map(|b| format!(" against {b}"))
            .unwrap_or_default()
    ));
    for w in &a.workloads {
        let best = a
            .best_per_workload
            .iter()
            .find(|b| b.target_label == t && &b.workload == w);
        let mut lines = Vec::new();
        if let Some(b) = &base {
            if a.qds.iter().any(|&q| a.cell(b, None, w, q).is_some()) {
                lines.push(Line {
                    name: format!("{b} (one drive)"),
                    target: b.clone(),
                    stripe: None,
                    look: 0,
                    bold: false,
                });
            }
        }
        for (i, &st) in stripes.iter().enumerate() {
            let is_best = best.is_some_and(|b| b.stripe == st);
            let tied = best.is_some_and(|b| b.tied.len() > 1 && b.tied.contains(&st));
            let mut name = format!("{} stripe", format_size(st));
            if is_best && tied {
                name.push_str(" (best: tie, conventional pick)");
            } else if is_best {
                name.push_str(" (best)");
            } else if tied {
                name.push_str(" (ties for best)");
            }
            lines.push(Line {
                name,
                target: t.to_string(),
                stripe: Some(st),
                look: i + 1,
                bold: is_best,
            });
        }
        if lines.iter().all(|l| l.cells(a, w).is_empty()) {
            continue;
        }
        page.chart(&throughput_chart(a, w, format!("{w}: {t} vs QD"), &lines));
        if base.is_some() {
            heat_map(page, a, t, w, &stripes);
        }
        if let Some(c) = latency_chart(a, w, format!("{w}: {t} latency vs QD"), &lines) {
            page.chart(&c);
        }
        if let Some(b) = best {
            histograms(
                page,
                latency,
                t,
                Some(b.stripe),
                w,
                &format!("{t} ({} stripe, best)", format_size(b.stripe)),
            );
        }
    }
}

fn heat_map(page: &mut Page, a: &Analysis, t: &str, w: &str, stripes: &[u64]) {
    let mut values = Vec::new();
    let mut text = Vec::new();
    for &st in stripes {
        let mut vr = Vec::new();
        let mut tr = Vec::new();
        for &q in &a.qds {
            let g = a.cell(t, Some(st), w, q).and_then(|c| c.gain_pct);
            vr.push(g);
            tr.push(g.map_or("–".into(), |g| format!("{g:+.0}%")));
        }
        values.push(vr);
        text.push(tr);
    }
    if values.iter().flatten().all(Option::is_none) {
        return;
    }
    let mut marked = Vec::new();
    for (qi, q) in a.qds.iter().enumerate() {
        if let Some(b) = a
            .best_per_workload_qd
            .iter()
            .find(|b| b.target_label == t && b.workload == w && b.qd == Some(*q))
        {
            if let Some(r) = stripes.iter().position(|s| *s == b.stripe) {
                marked.push((r, qi));
            }
        }
    }
    page.chart(&HeatMap {
        title: format!("{w}: gain of {t} over one drive"),
        x_title: "queue depth (outstanding I/Os)".into(),
        y_title: "stripe".into(),
        cols: a.qds.iter().map(|q| format!("QD {q}")).collect(),
        rows: stripes.iter().map(|s| format_size(*s)).collect(),
        values,
        text,
        marked,
        scale_title: "gain in IOPS over one drive (%)".into(),
        marked_title: "best stripe at that QD (ties: the conventional pick)".into(),
    });
}

fn mix_section(page: &mut Page, r: &MixRecommendation) {
    let mix: Vec<String> = r
        .mix
        .iter()
        .map(|(w, x)| format!("{w} {:.0} %", x * 100.0))
        .collect();
    page.h3(&format!(
        "Recommendation for {}: {}",
        r.target_label,
        mix.join(", ")
    ));
    let mut head = format!("Stripe {}", format_size(r.stripe));
    if r.unstable.is_some() {
        head.push_str(&format!(
            " ({} tie: the pick is not stable against a longer run with another seed)",
            list_sizes(&r.tied)
        ));
    } else if r.tied.len() > 1 {
        head.push_str(&format!(
            " ({} tie within {:.0} %)",
            list_sizes(&r.tied),
            r.tie_margin * 100.0
        ));
    }
    page.p(&format!("{head}. {}", r.explanation));
    let rows: Vec<Vec<String>> = r
        .ranking
        .iter()
        .map(|(s, rel, ratio)| {
            vec![
                format_size(*s),
                format!("{:.1} %", rel * 100.0),
                ratio.map_or("-".into(), |x| {
                    format!("{x:.2}× ({:+.0} %)", (x - 1.0) * 100.0)
                }),
                if r.tied.contains(s) { "tie" } else { "" }.into(),
            ]
        })
        .collect();
    page.table(
        &["stripe", "mix score (of the best)", "weighted gain", ""],
        &rows,
    );
}

fn alignment_charts(
    page: &mut Page,
    a: &Analysis,
    infos: &[TargetInfo],
    pairs: &[(String, String)],
) {
    let targets = a.target_labels();
    for (aligned, unaligned) in pairs {
        let (Some(sa), Some(su)) = (a.spec(aligned), a.spec(unaligned)) else {
            continue;
        };
        for &q in &a.qds {
            let cats: Vec<Vec<String>> = targets
                .iter()
                .map(|t| {
                    let mut lines = vec![t.clone()];
                    if let Some(p) = infos
                        .iter()
                        .find(|i| &i.label == t)
                        .and_then(|i| i.unaligned.clone())
                    {
                        lines.push(p);
                    }
                    lines
                })
                .collect();
            let val = |w: &str, t: &str| {
                a.cells
                    .iter()
                    .find(|c| c.target_label == t && c.workload == w && c.qd == q)
                    .map(|c| c.mb_s)
            };
            let series = vec![
                BarSeries {
                    name: format!("{}-aligned ({unaligned})", format_size(su.align)),
                    values: targets.iter().map(|t| val(unaligned, t)).collect(),
                },
                BarSeries {
                    name: format!("{}-aligned ({aligned})", format_size(sa.align)),
                    values: targets.iter().map(|t| val(aligned, t)).collect(),
                },
            ];
            page.chart(&BarChart {
                title: format!(
                    "{} writes at QD {q}: {}-aligned vs {}-aligned",
                    format_size(sa.bs),
                    format_size(su.align),
                    format_size(sa.align)
                ),
                x_title: "drive (under the name: unaligned-write policy, rmw = read-modify-write, remap = sector remapping)".into(),
                y_title: "throughput (MB/s, 10^6 bytes)".into(),
                categories: cats,
                series,
            });
        }
    }
    let rows: Vec<Vec<String>> = infos
        .iter()
        .filter(|i| targets.contains(&i.label))
        .map(|i| {
            vec![
                i.label.clone(),
                i.unaligned.clone().unwrap_or_else(|| "-".into()),
                i.unaligned
                    .as_deref()
                    .map(policy_reason)
                    .unwrap_or("")
                    .to_string(),
                i.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        page.table(
            &[
                "drive",
                "unaligned writes",
                "what the controller does",
                "preset",
            ],
            &rows,
        );
    }
}

fn plain_charts(page: &mut Page, a: &Analysis, latency: &[PointLatency]) {
    let targets = a.target_labels();
    let lines: Vec<Line> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| Line {
            name: t.clone(),
            target: t.clone(),
            stripe: None,
            look: i,
            bold: false,
        })
        .collect();
    for w in &a.workloads {
        let (unit, figure) = metric(a, w);
        if a.qds.len() > 1 {
            page.chart(&throughput_chart(a, w, format!("{w} vs QD"), &lines));
        } else {
            page.chart(&BarChart {
                title: format!("{w} at QD {}", a.qds.first().copied().unwrap_or(0)),
                x_title: "target".into(),
                y_title: unit.into(),
                categories: targets.iter().map(|t| vec![t.clone()]).collect(),
                series: vec![BarSeries {
                    name: w.clone(),
                    values: lines
                        .iter()
                        .map(|l| l.cells(a, w).first().map(|c| figure(c).0))
                        .collect(),
                }],
            });
        }
        if let Some(c) = latency_chart(a, w, format!("{w}: latency vs QD"), &lines) {
            page.chart(&c);
        }
        for t in &targets {
            histograms(page, latency, t, None, w, t);
        }
    }
}

fn cells_table(page: &mut Page, a: &Analysis) {
    page.h3("All points (means over repeats)");
    let rows: Vec<Vec<String>> = a
        .cells
        .iter()
        .map(|c| {
            vec![
                c.target_label.clone(),
                c.stripe.map_or("-".into(), format_size),
                c.workload.clone(),
                c.qd.to_string(),
                fmt_count(c.iops),
                format!("{:.1}", c.mb_s),
                fmt_lat(c.lat_mean_ns),
                fmt_lat(c.lat_p99_ns),
                c.gain_pct.map_or("-".into(), |g| format!("{g:+.1} %")),
                if c.repeats > 1 {
                    format!(
                        "{} ({}–{})",
                        c.repeats,
                        fmt_count(c.iops_min),
                        fmt_count(c.iops_max)
                    )
                } else {
                    c.repeats.to_string()
                },
            ]
        })
        .collect();
    page.table(
        &[
            "target",
            "stripe",
            "workload",
            "QD",
            "IOPS",
            "MB/s",
            "mean lat",
            "p99 lat",
            "gain",
            "repeats (IOPS range)",
        ],
        &rows,
    );
}
