//! The HTML report of sweeps and studies (`ssdlab report DB --html FILE`, `ssdlab study`).
//!
//! Per sweep: the findings in words; for array targets per workload IOPS (MB/s for sequential
//! work) against QD on a log2 axis, one line per stripe plus the baseline, the best stripe bold
//! and named in the legend, and a heat map of the gain (stripe × QD) with the best stripe of
//! each QD outlined; the mix recommendation; for alignment pairs grouped bars per drive with the
//! controller's unaligned-write policy named; otherwise one line per target. Then the tables,
//! the workload specs, the targets' preset parameters and the sweep file, so a report carries
//! what it takes to reproduce it.

use crate::analysis::{list_sizes, Analysis, MixRecommendation};
use crate::findings::{policy_reason, TargetInfo};
use ssdlab_chart::{BarChart, BarSeries, HeatMap, LineChart, Page, Scale, Series};
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
        array_charts(page, a, &t);
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
        plain_charts(page, a);
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

/// The unit a workload's chart uses.
fn metric(a: &Analysis, w: &str) -> (&'static str, fn(&crate::Cell) -> f64) {
    if a.is_sequential(w) {
        ("throughput (MB/s, 10^6 bytes)", |c| c.mb_s)
    } else {
        ("IOPS (I/Os per second)", |c| c.iops)
    }
}

fn array_charts(page: &mut Page, a: &Analysis, t: &str) {
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
        let (unit, value) = metric(a, w);
        let best = a
            .best_per_workload
            .iter()
            .find(|b| b.target_label == t && &b.workload == w);
        let mut series = Vec::new();
        if let Some(b) = &base {
            let points: Vec<(f64, f64)> = a
                .qds
                .iter()
                .filter_map(|&q| a.cell(b, None, w, q).map(|c| (q as f64, value(c))))
                .collect();
            if !points.is_empty() {
                series.push(Series {
                    name: format!("{b} (one drive)"),
                    points,
                    look: 0,
                    bold: false,
                    errors: Vec::new(),
                });
            }
        }
        for (i, &st) in stripes.iter().enumerate() {
            let points: Vec<(f64, f64)> = a
                .qds
                .iter()
                .filter_map(|&q| a.cell(t, Some(st), w, q).map(|c| (q as f64, value(c))))
                .collect();
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
            series.push(Series {
                name,
                points,
                look: i + 1,
                bold: is_best,
                errors: Vec::new(),
            });
        }
        if series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        page.chart(&LineChart {
            title: format!("{w}: {t} vs QD"),
            x_title: "queue depth (outstanding I/Os, log2 scale)".into(),
            y_title: unit.into(),
            x_scale: Scale::Log2,
            y_scale: Scale::Linear,
            x_ticks: None,
            series,
            error_label: None,
        });
        if base.is_some() {
            heat_map(page, a, t, w, &stripes);
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
    if r.tied.len() > 1 {
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

fn plain_charts(page: &mut Page, a: &Analysis) {
    let targets = a.target_labels();
    for w in &a.workloads {
        let (unit, value) = metric(a, w);
        let series: Vec<Series> = targets
            .iter()
            .enumerate()
            .map(|(i, t)| Series {
                name: t.clone(),
                points: a
                    .qds
                    .iter()
                    .filter_map(|&q| a.cell(t, None, w, q).map(|c| (q as f64, value(c))))
                    .collect(),
                look: i,
                bold: false,
                errors: Vec::new(),
            })
            .collect();
        if a.qds.len() > 1 {
            page.chart(&LineChart {
                title: format!("{w} vs QD"),
                x_title: "queue depth (outstanding I/Os, log2 scale)".into(),
                y_title: unit.into(),
                x_scale: Scale::Log2,
                y_scale: Scale::Linear,
                x_ticks: None,
                series,
                error_label: None,
            });
        } else {
            page.chart(&BarChart {
                title: format!("{w} at QD {}", a.qds.first().copied().unwrap_or(0)),
                x_title: "target".into(),
                y_title: unit.into(),
                categories: targets.iter().map(|t| vec![t.clone()]).collect(),
                series: vec![BarSeries {
                    name: w.clone(),
                    values: series
                        .iter()
                        .map(|s| s.points.first().map(|p| p.1))
                        .collect(),
                }],
            });
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
