//! The HTML report of single runs (`ssdlab run --html FILE`, `--output-format html`): per run,
//! IOPS and bandwidth per interval over time, latency percentiles on a log axis, the latency
//! histogram, then tables of the numbers, the exact workload spec, the target and (given by the
//! caller) the preset parameters of simulated drives, and the ssdlab version.

use crate::export::{ExportError, Exporter, Report};
use crate::table::{fmt_count, fmt_lat};
use ssdlab_chart::{Chart, Histogram, LineChart, Page, Scale, Series};
use ssdlab_stats::{EngineKind, LatSummary, RunResult};
use ssdlab_workload::{format_size, OpKind};

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

/// The latency histogram of one op kind: fio's bins merged into 10 buckets per decade, as a
/// percentage of the I/Os.
pub fn histogram_chart(title: &str, name: &str, lat: &LatSummary) -> Histogram {
    let total: u64 = lat.bins.iter().map(|b| b.1).sum();
    let mut buckets: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for &(ns, n) in &lat.bins {
        if n == 0 {
            continue;
        }
        let k = ((ns.max(1) as f64).log10() * 10.0).floor() as i64;
        *buckets.entry(k).or_default() += n;
    }
    let bins = buckets
        .into_iter()
        .map(|(k, n)| {
            (
                10f64.powf(k as f64 / 10.0) / 1e3,
                10f64.powf((k + 1) as f64 / 10.0) / 1e3,
                100.0 * n as f64 / total.max(1) as f64,
            )
        })
        .collect();
    Histogram {
        title: title.to_string(),
        x_title: "total latency (µs, log scale)".into(),
        y_title: "I/Os (% of all)".into(),
        name: format!("{name}: share of I/Os per latency range (10 per decade)"),
        bins,
    }
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
            kv("rw", s.rw.to_string()),
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
    if let Some(d) = &r.device {
        page.h3("Device counters (simulated)");
        page.pre(&serde_json::to_string_pretty(d).unwrap_or_default());
    }
}

/// What binds a simulated run: the busiest resource of each drive in words, then per drive how
/// busy each kind of resource was (the numbers behind it).
fn limits_section(page: &mut Page, r: &RunResult) {
    let Some(limit) = crate::limits::limited_by(r.device.as_ref()) else {
        return;
    };
    page.h3("What limits it (simulated)");
    page.p(&format!(
        "Limited by: {limit}. (A resource busy {:.0} % of the time or more binds the rate; below that the latency of each I/O at the queue depth sets it.)",
        crate::limits::SATURATED * 100.0
    ));
    let drives = r.device.as_ref().and_then(|d| d.as_array());
    let rows: Vec<Vec<String>> = drives
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, d)| {
            let u = d.get("utilisation")?;
            let f = |k: &str| u.get(k).and_then(|v| v.as_f64());
            let pct = |k: &str| f(k).map_or("-".into(), |v| format!("{:.0} %", v * 100.0));
            let host = u
                .get("host_cpus")
                .and_then(|v| v.as_array())
                .map(|v| v.iter().filter_map(|x| x.as_f64()).fold(0.0, f64::max))
                .map_or("-".into(), |v| format!("{:.0} %", v * 100.0));
            Some(vec![
                i.to_string(),
                u.get("busiest")?.as_str()?.to_string(),
                pct("busiest_utilisation"),
                format!("{} / {}", pct("die_mean"), pct("die_max")),
                pct("channel_max"),
                pct("fw_max"),
                pct("link"),
                host,
            ])
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

    #[test]
    fn empty_run_still_renders() {
        let runs = [RunResult::default()];
        let html = run_page(&Report::of_runs(&runs), &[], None);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"));
    }
}
