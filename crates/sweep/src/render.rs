//! `ssdlab report` as text: comfy-table tables of gains, best stripes and the mix recommendation.

use crate::analysis::{Analysis, MixRecommendation};
use comfy_table::{Cell as TCell, CellAlignment, Table};
use ssdlab_report::table::{fmt_count, fmt_lat, TableStyle};
use ssdlab_store::RunRow;
use ssdlab_workload::format_size;

fn table(header: Vec<String>, style: TableStyle) -> Table {
    let mut t = Table::new();
    t.load_preset(style.preset());
    t.set_header(header);
    t
}

fn right(s: String) -> TCell {
    TCell::new(s).set_alignment(CellAlignment::Right)
}

fn pct(r: f64) -> String {
    format!("{:+.0}%", (r - 1.0) * 100.0)
}

/// `QD1-2 16 KiB, QD4-32 64 KiB`: runs of consecutive QDs with the same best stripe.
fn qd_ranges(items: impl Iterator<Item = (u32, u64)>) -> String {
    let mut runs: Vec<(u32, u32, u64)> = Vec::new();
    for (q, s) in items {
        match runs.last_mut() {
            Some(last) if last.2 == s => last.1 = q,
            _ => runs.push((q, q, s)),
        }
    }
    if runs.len() == 1 {
        return format!("{} at every QD", format_size(runs[0].2));
    }
    runs.iter()
        .map(|(a, b, s)| {
            if a == b {
                format!("QD{a} {}", format_size(*s))
            } else {
                format!("QD{a}-{b} {}", format_size(*s))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The whole report of one sweep.
pub fn render_analysis(a: &Analysis, style: TableStyle) -> String {
    let mut out = format!("Sweep {}: {} points, {} done", a.sweep, a.points, a.done);
    let pending = a.points - a.done - a.failed;
    if pending > 0 || a.failed > 0 {
        out.push_str(&format!(
            " ({pending} not run yet, {} failed: re-run the sweep to finish it)",
            a.failed
        ));
    }
    if a.stale > 0 {
        out.push_str(&format!(
            "; {} points of an earlier version of the sweep file are ignored",
            a.stale
        ));
    }
    out.push('\n');

    // Baseline targets: absolute numbers.
    let mut baselines = Vec::new();
    for c in a.cells.iter().filter(|c| c.baseline || c.stripe.is_none()) {
        if !baselines.contains(&c.target_label) {
            baselines.push(c.target_label.clone());
        }
    }
    for b in &baselines {
        let mut t = table(
            ["Workload", "QD", "IOPS", "MB/s", "Mean lat", "p99 lat"]
                .map(String::from)
                .to_vec(),
            style,
        );
        for w in &a.workloads {
            for &q in &a.qds {
                let Some(c) = a
                    .cells
                    .iter()
                    .find(|c| &c.target_label == b && &c.workload == w && c.qd == q)
                else {
                    continue;
                };
                t.add_row(vec![
                    TCell::new(w),
                    right(q.to_string()),
                    right(fmt_count(c.iops)),
                    right(format!("{:.1}", c.mb_s)),
                    right(fmt_lat(c.lat_mean_ns)),
                    right(fmt_lat(c.lat_p99_ns)),
                ]);
            }
        }
        let role = if a.cells.iter().any(|c| c.target_label == *b && c.baseline) {
            " (baseline)"
        } else {
            ""
        };
        out.push_str(&format!("\n{b}{role}\n{t}\n"));
    }

    // Arrays: IOPS and gain per stripe, best of each row marked.
    for target in a.array_targets() {
        let stripes = a.stripes(&target);
        let bl = a
            .cells
            .iter()
            .find(|c| c.target_label == target)
            .and_then(|c| c.baseline_label.clone());
        let mut header = vec!["Workload".to_string(), "QD".to_string()];
        if bl.is_some() {
            header.push("Baseline IOPS".to_string());
        }
        header.extend(
            stripes
                .iter()
                .map(|s| format!("stripe {}", format_size(*s))),
        );
        let mut t = table(header, style);
        for w in &a.workloads {
            for &q in &a.qds {
                let cells: Vec<_> = stripes
                    .iter()
                    .map(|s| a.cell(&target, Some(*s), w, q))
                    .collect();
                if cells.iter().all(Option::is_none) {
                    continue;
                }
                let best = cells
                    .iter()
                    .flatten()
                    .map(|c| c.iops)
                    .fold(f64::MIN, f64::max);
                let mut row = vec![TCell::new(w), right(q.to_string())];
                if bl.is_some() {
                    let b = cells.iter().flatten().find_map(|c| c.baseline_iops);
                    row.push(right(b.map(fmt_count).unwrap_or_else(|| "-".into())));
                }
                for c in &cells {
                    row.push(right(match c {
                        None => "-".into(),
                        Some(c) => {
                            let mut s = fmt_count(c.iops);
                            if let Some(r) = c.ratio {
                                s.push_str(&format!(" ({})", pct(r)));
                            }
                            if c.iops == best && cells.iter().flatten().count() > 1 {
                                s.push_str(" *");
                            }
                            s
                        }
                    }));
                }
                t.add_row(row);
            }
        }
        let vs = bl.map(|b| format!(" vs {b}")).unwrap_or_default();
        out.push_str(&format!(
            "\n{target}{vs}: IOPS (gain over the baseline), * = best stripe of the row\n{t}\n"
        ));

        let mut t = table(
            [
                "Workload",
                "Best stripe",
                "Gain (geo-mean over QDs)",
                "Margin",
                "Best per QD",
            ]
            .map(String::from)
            .to_vec(),
            style,
        );
        for b in a
            .best_per_workload
            .iter()
            .filter(|b| b.target_label == target)
        {
            let per_qd = qd_ranges(
                a.best_per_workload_qd
                    .iter()
                    .filter(|x| x.target_label == target && x.workload == b.workload)
                    .map(|x| (x.qd.unwrap_or(0), x.stripe)),
            );
            t.add_row(vec![
                TCell::new(&b.workload),
                right(if b.tied.len() > 1 {
                    format!(
                        "{} (tie: {})",
                        format_size(b.stripe),
                        crate::analysis::list_sizes(&b.tied)
                    )
                } else {
                    format_size(b.stripe)
                }),
                right(
                    b.ratio
                        .map(|r| format!("{r:.2}x ({})", pct(r)))
                        .unwrap_or_else(|| "-".into()),
                ),
                right(match (b.margin, b.runner_up) {
                    (Some((next, m)), _) if b.unstable.is_some() => format!(
                        "unstable tie {:.1}% ahead of {}",
                        m * 100.0,
                        format_size(next)
                    ),
                    (Some((next, m)), _) if b.tied.len() > 1 => {
                        format!("tie {:.1}% ahead of {}", m * 100.0, format_size(next))
                    }
                    (Some((next, m)), _) => {
                        format!("{:.1}% ahead of {}", m * 100.0, format_size(next))
                    }
                    (None, Some(_)) if b.unstable.is_some() => "all tie (unstable)".into(),
                    (None, Some(_)) => format!("all tie (within {:.0}%)", b.tie_margin * 100.0),
                    (None, None) => "-".into(),
                }),
                TCell::new(per_qd),
            ]);
        }
        out.push_str(&format!("\n{target}: best stripe per workload\n{t}\n"));
    }
    for (aligned, unaligned) in a.alignment_pairs() {
        for &q in &a.qds {
            let mut t = table(
                [
                    "Target".to_string(),
                    format!("{unaligned} MB/s"),
                    format!("{aligned} MB/s"),
                    "Aligned / unaligned".to_string(),
                ]
                .to_vec(),
                style,
            );
            let mut any = false;
            for label in a.target_labels() {
                let get = |w: &str| {
                    a.cells
                        .iter()
                        .find(|c| c.target_label == label && c.workload == w && c.qd == q)
                        .map(|c| c.mb_s)
                };
                let (Some(al), Some(un)) = (get(&aligned), get(&unaligned)) else {
                    continue;
                };
                any = true;
                t.add_row(vec![
                    TCell::new(&label),
                    right(format!("{un:.1}")),
                    right(format!("{al:.1}")),
                    right(if un > 0.0 {
                        format!("{:.2}x", al / un)
                    } else {
                        "-".into()
                    }),
                ]);
            }
            if any {
                out.push_str(&format!("\nAlignment at QD {q}\n{t}\n"));
            }
        }
    }
    let has_baseline = a.cells.iter().any(|c| c.baseline);
    if a.array_targets().is_empty() && has_baseline && a.done > 0 {
        out.push_str("\nNo RAID 0 targets in this sweep: nothing to compare with the baseline.\n");
    }
    out
}

/// The mix recommendation(s).
pub fn render_mix(recs: &[MixRecommendation], style: TableStyle) -> String {
    if recs.is_empty() {
        return "\nNo array target has results for every workload of the mix.\n".into();
    }
    let mut out = String::new();
    for r in recs {
        let mut t = table(
            ["Stripe", "Mix score (rel. to best)", "Weighted gain"]
                .map(String::from)
                .to_vec(),
            style,
        );
        for (s, rel, ratio) in &r.ranking {
            t.add_row(vec![
                right(format_size(*s)),
                right(format!("{:.1}%", rel * 100.0)),
                right(
                    ratio
                        .map(|x| format!("{x:.2}x ({})", pct(x)))
                        .unwrap_or_else(|| "-".into()),
                ),
            ]);
        }
        let mix: Vec<String> = r.mix.iter().map(|(w, x)| format!("{w}={x:.2}")).collect();
        out.push_str(&format!(
            "\nRecommendation for mix {}\n{t}\n{}\n",
            mix.join(","),
            r.explanation
        ));
    }
    out
}

/// Stored single runs (`ssdlab run --store`).
pub fn render_runs(runs: &[RunRow], style: TableStyle) -> String {
    let mut t = table(
        [
            "Id", "Label", "Target", "Workload", "IOPS", "MB/s", "Mean lat", "p99 lat",
        ]
        .map(String::from)
        .to_vec(),
        style,
    );
    for r in runs {
        t.add_row(vec![
            right(r.id.to_string()),
            TCell::new(&r.label),
            TCell::new(format!("{} {}", r.target_kind, r.target_name)),
            TCell::new(&r.workload),
            right(fmt_count(r.summary.iops)),
            right(format!("{:.1}", r.summary.mb_s)),
            right(fmt_lat(r.summary.lat_mean_ns)),
            right(fmt_lat(r.summary.lat_p99_ns)),
        ]);
    }
    format!("\nStored runs\n{t}\n")
}

/// The list printed by `ssdlab sweep --dry-run`: one line per point, with its status in the store
/// when one exists.
pub fn render_points(
    points: &[crate::Point],
    status: Option<&std::collections::HashMap<String, ssdlab_store::PointStatus>>,
    style: TableStyle,
) -> String {
    let mut header: Vec<String> = ["#", "Key", "Target", "Stripe", "Workload", "QD", "Repeat"]
        .map(String::from)
        .to_vec();
    if status.is_some() {
        header.push("Status".into());
    }
    let mut t = table(header, style);
    for p in points {
        let mut row = vec![
            right(p.seq.to_string()),
            TCell::new(&p.key[..12]),
            TCell::new(&p.target_label),
            right(p.stripe.map(format_size).unwrap_or_else(|| "-".into())),
            TCell::new(&p.workload_name),
            right(p.qd.to_string()),
            right((p.repeat + 1).to_string()),
        ];
        if let Some(st) = status {
            row.push(TCell::new(
                st.get(&p.key).map(|s| s.as_str()).unwrap_or("new"),
            ));
        }
        t.add_row(row);
    }
    format!("{t}\n")
}
