//! The HTML report of single runs (`ssdlab run --html FILE`, `--output-format html`): per run,
//! IOPS and bandwidth per interval over time, latency percentiles on a log axis, the latency
//! histogram, then tables of the numbers, the exact workload spec, the target and (given by the
//! caller) the preset parameters of simulated drives, and the ssdlab version.

use crate::export::{ExportError, Exporter, Report};
use crate::table::{fmt_count, fmt_lat};
use ssdlab_chart::{Chart, Histogram, LineChart, Page, Scale, Series};
use ssdlab_stats::{EngineKind, LatSummary, RunResult};
use ssdlab_workload::{format_size, OpKind};
use std::collections::BTreeMap;

/// The version of ssdlab that wrote a report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Writes runs as one self-contained HTML page.
#[derive(Debug, Clone, Default)]
pub struct HtmlExporter {
    /// Extra sections at the end: (title, preformatted text), e.g. a simulated drive's preset.
    pub appendix: Vec<(String, String)>,
    /// The machine and command that wrote the page, shown under its title (none in snapshots).
    pub environment: Option<ssdlab_chart::Environment>,
}

impl HtmlExporter {
    /// The exporter of `ssdlab run`'s report: this machine's environment under the title and,
    /// for a simulated target, its preset (`name`, its parameters) as an appendix in JSON.
    pub fn for_run(preset: Option<(&str, &impl serde::Serialize)>) -> HtmlExporter {
        HtmlExporter {
            appendix: preset
                .map(|(name, drive)| {
                    (
                        format!("Preset {name} (the simulated drive's parameters)"),
                        serde_json::to_string_pretty(drive).unwrap_or_default(),
                    )
                })
                .into_iter()
                .collect(),
            environment: Some(ssdlab_chart::Environment::current(VERSION)),
        }
    }
}

impl Exporter for HtmlExporter {
    fn export(&self, report: &Report<'_>) -> Result<Vec<u8>, ExportError> {
        Ok(run_page(report, &self.appendix, self.environment.as_ref()).into_bytes())
    }
}

/// The percentiles drawn, as on fio's list from the median on.
const DRAWN_PCT: [f64; 9] = [50.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999];

/// Position of percentile `p` on a "nines" axis (50 → 0.3, 90 → 1, 99 → 2, 99.9 → 3).
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).max(1e-9).log10()
}

fn pct_label(p: f64) -> String {
    let s = format!("{p}");
    format!("p{s}")
}

/// The chart of latency percentiles for the op kinds that ran.
pub fn percentile_chart(title: &str, ops: &[(&str, &LatSummary)]) -> LineChart {
    let series: Vec<Series> = ops
        .iter()
        .enumerate()
        .map(|(i, (name, lat))| Series {
            name: format!("{name} (total latency)"),
            points: DRAWN_PCT
                .iter()
                .filter_map(|&p| lat.percentile(p).map(|v| (nines(p), v as f64 / 1e3)))
                .collect(),
            look: i + 1,
            bold: false,
            errors: Vec::new(),
        })
        .collect();
    let max_p = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let ticks = DRAWN_PCT
        .iter()
        .filter(|&&p| {
            nines(p) <= max_p + 1e-9 && [50.0, 90.0, 99.0, 99.9, 99.99, 99.999].contains(&p)
        })
        .map(|&p| (nines(p), pct_label(p)))
        .collect();
    LineChart {
        title: title.to_string(),
        x_title: "percentile (of I/Os completed within the latency)".into(),
        y_title: "latency (µs, log scale)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Log10,
        x_ticks: Some(ticks),
        series,
        error_label: None,
    }
}

/// The latency histogram of one op kind, as a percentage of the I/Os in 10 ranges per decade:
/// fio's bins merged when the result has them (a run just made), else rebuilt from the
/// percentiles the results store keeps ([`percentile_shares`]).
pub fn histogram_chart(title: &str, name: &str, lat: &LatSummary) -> Histogram {
    let (shares, range, from) = if lat.bins.is_empty() {
        (percentile_shares(lat), "range", ", from stored percentiles")
    } else {
        (bin_shares(lat), "latency range", "")
    };
    let bins = shares
        .into_iter()
        .map(|(k, share)| {
            (
                10f64.powf(k as f64 / 10.0) / 1e3,
                10f64.powf((k + 1) as f64 / 10.0) / 1e3,
                share,
            )
        })
        .collect();
    Histogram {
        title: title.to_string(),
        x_title: "total latency (µs, log scale)".into(),
        y_title: "I/Os (% of all)".into(),
        name: format!("{name}: share of I/Os per {range} (10 per decade{from})"),
        bins,
    }
}

/// The range (a tenth of a decade) that `ns` falls in: range `k` covers 10^(k/10) up to
/// 10^((k+1)/10) ns.
fn tenth_decade(ns: f64) -> i64 {
    (ns.max(1.0).log10() * 10.0).floor() as i64
}

/// fio's bins merged into tenths of a decade: range → % of the I/Os.
fn bin_shares(lat: &LatSummary) -> BTreeMap<i64, f64> {
    let total: u64 = lat.bins.iter().map(|b| b.1).sum();
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    for &(ns, n) in &lat.bins {
        if n == 0 {
            continue;
        }
        *counts.entry(tenth_decade(ns as f64)).or_default() += n;
    }
    counts
        .into_iter()
        .map(|(k, n)| (k, 100.0 * n as f64 / total.max(1) as f64))
        .collect()
}

/// The latency distribution rebuilt from what a stored result keeps (the results store has no
/// bins): the minimum, the percentiles (p1 … p99.99) and the maximum are points of the
/// cumulative distribution, and between two of them the I/Os are taken as spread evenly over
/// log latency (a step whose two ends are the same latency puts its I/Os in that one range).
/// Range `k` (a tenth of a decade: 10^(k/10) up to 10^((k+1)/10) ns) → % of the I/Os, summing
/// to 100; empty without I/Os or percentiles.
pub fn percentile_shares(lat: &LatSummary) -> BTreeMap<i64, f64> {
    let mut out: BTreeMap<i64, f64> = BTreeMap::new();
    let mut ps: Vec<(f64, f64)> = lat
        .percentiles
        .iter()
        .filter(|(p, _)| p.is_finite() && *p > 0.0 && *p < 100.0)
        .map(|&(p, ns)| (p, ns as f64))
        .collect();
    if lat.n == 0 || ps.is_empty() {
        return out;
    }
    ps.sort_by(|a, b| a.0.total_cmp(&b.0));
    let first = ps[0].1;
    let last = ps[ps.len() - 1].1;
    // fio's percentiles are the values of its bins, which may lie a little outside min..max
    let lo = if lat.min > 0 {
        (lat.min as f64).min(first)
    } else {
        first
    }
    .max(1.0);
    let hi = (lat.max as f64).max(last).max(lo);
    // (latency, % of the I/Os at or below it), latency never falling
    let mut cdf: Vec<(f64, f64)> = vec![(lo, 0.0)];
    cdf.extend(ps.iter().map(|&(p, ns)| (ns.clamp(lo, hi), p)));
    cdf.push((hi, 100.0));
    for i in 1..cdf.len() {
        cdf[i].0 = cdf[i].0.max(cdf[i - 1].0);
    }
    for w in cdf.windows(2) {
        let ((a, pa), (b, pb)) = (w[0], w[1]);
        let share = pb - pa;
        if share <= 0.0 {
            continue;
        }
        // in tenths of a decade
        let (la, lb) = (a.log10() * 10.0, b.log10() * 10.0);
        if lb - la < 1e-9 {
            *out.entry(tenth_decade(b)).or_default() += share;
            continue;
        }
        let mut k = la.floor() as i64;
        while (k as f64) < lb {
            let overlap = lb.min(k as f64 + 1.0) - la.max(k as f64);
            if overlap > 0.0 {
                *out.entry(k).or_default() += share * overlap / (lb - la);
            }
            k += 1;
        }
    }
    out
}

fn time_chart(r: &RunResult, bw: bool) -> LineChart {
    let mut series = Vec::new();
    let kinds: Vec<OpKind> = OpKind::ALL
        .into_iter()
        .filter(|k| r.op(*k).ios > 0)
        .collect();
    for (i, k) in kinds.iter().enumerate() {
        let points = r
            .series
            .iter()
            .map(|s| {
                let v = match (k, bw) {
                    (OpKind::Read, false) => s.read_iops,
                    (OpKind::Write, false) => s.write_iops,
                    (OpKind::Trim, false) => s.trim_iops,
                    (OpKind::Read, true) => s.read_bw_bytes / 1e6,
                    (OpKind::Write, true) => s.write_bw_bytes / 1e6,
                    (OpKind::Trim, true) => s.trim_bw_bytes / 1e6,
                };
                (s.t_ms as f64 / 1e3, v)
            })
            .collect();
        series.push(Series {
            name: k.as_str().to_string(),
            points,
            look: i + 1,
            bold: false,
            errors: Vec::new(),
        });
    }
    let clock = if r.target.engine == EngineKind::Sim {
        "virtual time"
    } else {
        "time"
    };
    LineChart {
        title: if bw {
            "Bandwidth over time".into()
        } else {
            "IOPS over time".into()
        },
        x_title: format!("{clock} since the end of the ramp (s)"),
        y_title: if bw {
            "bandwidth (MB/s, 10^6 bytes)".into()
        } else {
            "IOPS (I/Os per second)".into()
        },
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x_ticks: None,
        series,
        error_label: None,
    }
}

/// The sections of one run (used by the run page and by reports that embed runs).
pub fn run_sections(page: &mut Page, r: &RunResult, heading: &str) {
    page.h2(heading);
    let kinds: Vec<OpKind> = OpKind::ALL
        .into_iter()
        .filter(|k| r.op(*k).ios > 0 || r.op(*k).errors > 0)
        .collect();
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| {
            let o = r.op(*k);
            let p = |q: f64| {
                o.lat
                    .percentile(q)
                    .map_or("-".into(), |v| fmt_lat(v as f64))
            };
            vec![
                k.as_str().to_string(),
                fmt_count(o.ios as f64),
                fmt_count(o.iops),
                format!("{:.1}", o.mb_s()),
                fmt_lat(o.lat.mean),
                p(50.0),
                p(99.0),
                p(99.9),
                fmt_lat(o.lat.max as f64),
                o.errors.to_string(),
            ]
        })
        .collect();
    page.table(
        &[
            "op", "I/Os", "IOPS", "MB/s", "mean lat", "p50", "p99", "p99.9", "max", "errors",
        ],
        &rows,
    );
    if r.interrupted {
        page.p("The run was interrupted: these are the numbers measured until then.");
    }
    if r.series.len() > 1 {
        page.chart(&time_chart(r, false));
        page.chart(&time_chart(r, true));
    } else {
        page.p(&format!(
            "The run measured {} interval{} only: no time series is drawn (run longer than a second for one).",
            r.series.len(),
            if r.series.len() == 1 { "" } else { "s" }
        ));
    }
    let lats: Vec<(&str, &LatSummary)> = kinds
        .iter()
        .filter(|k| r.op(**k).lat.n > 0)
        .map(|k| (k.as_str(), &r.op(*k).lat))
        .collect();
    if !lats.is_empty() {
        page.chart(&percentile_chart("Latency percentiles", &lats) as &dyn Chart);
        for (name, lat) in &lats {
            page.chart(&histogram_chart(
                &format!("Latency histogram: {name}"),
                name,
                lat,
            ));
        }
    }
    page.h3("Workload");
    let s = &r.spec;
    let stop = [
        s.stop.time_ns.map(|t| format!("{} s", t as f64 / 1e9)),
        s.stop.ios.map(|n| format!("{n} I/Os")),
        s.stop.bytes.map(format_size),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" or ");
    let kv = |k: &str, v: String| vec![k.to_string(), v];
    page.table(
        &["setting", "value"],
        &[
            kv("summary", s.summary()),
            kv("rw", s.mode_name().to_string()),
            kv("read %", s.read_pct.to_string()),
            kv("random %", s.random_pct.to_string()),
            kv("bs", format_size(s.bs)),
            kv("align", format_size(s.align)),
            kv("offset", format_size(s.offset)),
            kv("span", s.span.map_or("whole target".into(), format_size)),
            kv("qd × jobs", format!("{} × {}", s.qd, s.jobs)),
            kv("stop", stop),
            kv("ramp", format!("{} s", s.ramp_ns as f64 / 1e9)),
            kv("pattern", s.pattern.to_string()),
            kv("seed", s.seed.to_string()),
            kv("verify", s.verify.to_string()),
        ],
    );
    page.pre(&serde_json::to_string(s).unwrap_or_default());
    page.h3("Target");
    let t = &r.target;
    let mut rows = vec![
        kv("kind", t.kind.to_string()),
        kv("name", t.name.clone()),
        kv("size", format_size(t.size)),
        kv("engine", t.engine.to_string()),
        kv("direct I/O", t.direct.to_string()),
        kv(
            "region",
            format!("{} + {}", format_size(t.offset), format_size(t.span)),
        ),
    ];
    rows.extend(t.details.iter().map(|(k, v)| kv(k, v.clone())));
    page.table(&["property", "value"], &rows);
    if !r.members.is_empty() {
        let rows: Vec<Vec<String>> = r
            .members
            .iter()
            .map(|m| {
                vec![
                    m.name.clone(),
                    fmt_count(m.read_ios as f64),
                    fmt_count(m.write_ios as f64),
                    format_size(m.read_bytes),
                    format_size(m.write_bytes),
                ]
            })
            .collect();
        page.table(
            &["member", "read I/Os", "write I/Os", "read", "written"],
            &rows,
        );
    }
    for n in &r.notes {
        page.p(&format!("Note: {n}."));
    }
    limits_section(page, r);
    if !r.device.is_empty() {
        page.h3("Device counters (simulated)");
        // through a JSON value: its keys in alphabetical order, as the page always showed them
        let v = serde_json::to_value(&r.device).unwrap_or_default();
        page.pre(&serde_json::to_string_pretty(&v).unwrap_or_default());
    }
}

/// What binds a simulated run: the busiest resource of each drive in words, then per drive how
/// busy each kind of resource was (the numbers behind it).
fn limits_section(page: &mut Page, r: &RunResult) {
    let Some(limit) = crate::limits::limited_by(&r.device) else {
        return;
    };
    page.h3("What limits it (simulated)");
    page.p(&format!(
        "Limited by: {limit}. (A resource busy {:.0} % of the time or more binds the rate; below that the latency of each I/O at the queue depth sets it.)",
        crate::limits::SATURATED * 100.0
    ));
    let pct = |v: f64| format!("{:.0} %", v * 100.0);
    let rows: Vec<Vec<String>> = r
        .device
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.utilisation.busiest.is_empty())
        .map(|(i, d)| {
            let u = &d.utilisation;
            let host = pct(u.host_cpus.iter().copied().fold(0.0, f64::max));
            vec![
                i.to_string(),
                u.busiest.clone(),
                pct(u.busiest_utilisation),
                format!("{} / {}", pct(u.die_mean), pct(u.die_max)),
                pct(u.channel_max),
                pct(u.fw_max),
                pct(u.link),
                host,
            ]
        })
        .collect();
    if let Some(c) = crate::limits::adapter_cache_phrase(r.adapter_cache.as_ref()) {
        page.p(&format!("The RAID driver's write-back cache {c}."));
    }
    page.table(
        &[
            "drive",
            "busiest resource",
            "busy",
            "dies (mean / max)",
            "channels (max)",
            "firmware cores (max)",
            "host link",
            "host CPU (max)",
        ],
        &rows,
    );
}

/// The page of one or more runs (fio jobs are headed by their job names).
pub fn run_page(
    report: &Report<'_>,
    appendix: &[(String, String)],
    environment: Option<&ssdlab_chart::Environment>,
) -> String {
    let jobs = &report.jobs;
    let title = match jobs.as_slice() {
        [j] => {
            let r = j.result;
            match j.fio {
                Some(f) => format!(
                    "ssdlab fio job {}: {} on {} {}",
                    f.name,
                    r.spec.summary(),
                    r.target.kind,
                    r.target.name
                ),
                None => format!(
                    "ssdlab run: {} on {} {}",
                    r.spec.summary(),
                    r.target.kind,
                    r.target.name
                ),
            }
        }
        _ => format!("ssdlab: {} runs", jobs.len()),
    };
    let mut page = Page::new(&title);
    page.meta(&format!(
        "Written by ssdlab {VERSION}. Simulated runs are deterministic: the same workload, preset and seed give the same numbers."
    ));
    if let Some(e) = environment {
        page.environment(e);
    }
    for (i, j) in jobs.iter().enumerate() {
        let r = j.result;
        let heading = match (jobs.len(), j.fio) {
            (1, _) => "Results".to_string(),
            (_, Some(f)) => format!(
                "Job {} (group {}): {} on {}",
                f.name,
                f.group,
                r.spec.summary(),
                r.target.name
            ),
            (_, None) => format!("Run {}: {} on {}", i + 1, r.spec.summary(), r.target.name),
        };
        run_sections(&mut page, r, &heading);
    }
    for (title, text) in appendix {
        page.h3(title);
        page.pre(text);
    }
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_axis() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(pct_label(99.9), "p99.9");
    }

    fn lat(min: u64, max: u64, pcts: &[(f64, u64)]) -> LatSummary {
        LatSummary {
            n: 1000,
            min,
            max,
            percentiles: pcts.to_vec(),
            ..Default::default()
        }
    }

    fn total(m: &BTreeMap<i64, f64>) -> f64 {
        m.values().sum()
    }

    #[test]
    fn histogram_from_stored_percentiles() {
        // Half the I/Os from 1 µs to 10 µs, half from 10 µs to 100 µs: 5 % in each tenth of a
        // decade, over the two decades.
        let l = lat(1_000, 100_000, &[(50.0, 10_000)]);
        let m = percentile_shares(&l);
        assert_eq!(
            m.keys().copied().collect::<Vec<_>>(),
            (30..50).collect::<Vec<_>>()
        );
        assert!(m.values().all(|v| (v - 5.0).abs() < 1e-9), "{m:?}");
        // Every latency the same (a deterministic drive): all in one range.
        let l = lat(2_000, 2_000, &[(1.0, 2_000), (50.0, 2_000), (99.99, 2_000)]);
        let m = percentile_shares(&l);
        assert_eq!(m.len(), 1);
        assert!((m[&tenth_decade(2_000.0)] - 100.0).abs() < 1e-9);
        // The real list (fio's percentiles), steps that end on the same latency, a minimum of 0
        // and percentiles a little outside min..max: always 100 % in all, never a negative share.
        let pcts: Vec<(f64, u64)> = ssdlab_stats::PERCENTILES
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, 3_000 + 400 * (i as u64 / 3)))
            .collect();
        for (min, max) in [(3_100, 9_000), (0, 0), (2_000, 1_000_000)] {
            let m = percentile_shares(&lat(min, max, &pcts));
            assert!((total(&m) - 100.0).abs() < 1e-9, "{m:?}");
            assert!(m.values().all(|v| *v > 0.0), "{m:?}");
        }
        // Nothing to draw from.
        assert!(percentile_shares(&lat(1, 2, &[])).is_empty());
        assert!(percentile_shares(&LatSummary::default()).is_empty());
        // The chart says where its bars come from, in µs on the log axis.
        let h = histogram_chart("t", "read", &lat(1_000, 100_000, &[(50.0, 10_000)]));
        assert_eq!(
            h.name,
            "read: share of I/Os per range (10 per decade, from stored percentiles)"
        );
        assert_eq!(h.bins.len(), 20);
        assert!((h.bins[0].0 - 1.0).abs() < 1e-9 && (h.bins[19].1 - 100.0).abs() < 1e-9);
        // With fio's bins, the bins (as before).
        let mut l = lat(1_000, 100_000, &[(50.0, 10_000)]);
        l.bins = vec![(1_500, 3), (1_550, 1), (50_000, 4)];
        let h = histogram_chart("t", "read", &l);
        assert_eq!(
            h.name,
            "read: share of I/Os per latency range (10 per decade)"
        );
        assert_eq!(h.bins.len(), 2);
        assert_eq!((h.bins[0].2, h.bins[1].2), (50.0, 50.0));
    }

    #[test]
    fn empty_run_still_renders() {
        let runs = [RunResult::default()];
        let html = run_page(&Report::of_runs(&runs), &[], None);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"));
    }
}
