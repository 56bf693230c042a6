//! The characterisation suite of `ssdlab calibrate --target`: the workloads a drive is measured
//! with before a model is fitted to it, and measuring them through any [`Measure`] (a real file
//! or device in the CLI; a hidden simulated drive in the blind self-test).
//!
//! The suite (over one span of the target, written sequentially first so reads find data):
//! 4 KiB random read at several queue depths, 4 KiB random write fresh-ish (short) and sustained
//! (long), 128 KiB sequential read and write at several queue depths, 4 KiB random writes 512-B-
//! and 4 KiB-aligned at QD 3 (AnandTech's test), a sustained sequential write long enough to
//! find a write-cache or SLC-cache cliff, and a 70/30 random mix.

use crate::data::{Case, Metric, RawFigure, RawFile, Source};
use crate::predict::Outcome;
use ssdlab_workload::{format_size, RwMode};
use std::time::Instant;

/// How long the suite takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteKind {
    /// QD 1, 4, 32 and few points, a few seconds each.
    Quick,
    /// QD 1–32 in powers of two, longer points.
    Full,
}

impl std::str::FromStr for SuiteKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "quick" => Ok(SuiteKind::Quick),
            "full" => Ok(SuiteKind::Full),
            _ => Err(format!("--suite {s:?}: expected quick or full")),
        }
    }
}

/// One point of the suite: a workload and the metric recorded for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SuitePoint {
    pub case: Case,
    pub metric: Metric,
}

/// The suite's points for a drive labelled `drive`, over `span` bytes, each `point_ns` long
/// (the sustained ones several times that).
pub fn suite(kind: SuiteKind, drive: &str, span: u64, point_ns: u64) -> Vec<SuitePoint> {
    let qds: &[u32] = match kind {
        SuiteKind::Quick => &[1, 4, 32],
        SuiteKind::Full => &[1, 2, 4, 8, 16, 32],
    };
    let base = Case::on_written_span(drive, span, point_ns);
    let case = |rw: RwMode, bs: u64, qd: u32, align: u64, time_ns: u64, read_pct: u8| Case {
        rw,
        bs,
        qd,
        align,
        time_ns,
        read_pct,
        ..base.clone()
    };
    let mut v = Vec::new();
    for &qd in qds {
        v.push(SuitePoint {
            case: case(RwMode::Randread, 4096, qd, 4096, point_ns, 100),
            metric: Metric::Iops,
        });
    }
    for &qd in qds {
        v.push(SuitePoint {
            case: case(RwMode::Read, 128 << 10, qd, 128 << 10, point_ns, 100),
            metric: Metric::Bw,
        });
    }
    for &qd in qds {
        v.push(SuitePoint {
            case: case(RwMode::Write, 128 << 10, qd, 128 << 10, point_ns, 0),
            metric: Metric::Bw,
        });
    }
    for &qd in qds {
        v.push(SuitePoint {
            case: case(RwMode::Randwrite, 4096, qd, 4096, point_ns, 0),
            metric: Metric::Iops,
        });
    }
    for align in [4096, 512] {
        v.push(SuitePoint {
            case: case(RwMode::Randwrite, 4096, 3, align, point_ns, 0),
            metric: Metric::Bw,
        });
    }
    v.push(SuitePoint {
        case: case(RwMode::Randrw, 4096, 8, 4096, point_ns, 70),
        metric: Metric::Iops,
    });
    let long = match kind {
        SuiteKind::Quick => 4,
        SuiteKind::Full => 10,
    };
    // sustained: random writes after the others, then a long sequential write (cache cliffs)
    v.push(SuitePoint {
        case: case(RwMode::Randwrite, 4096, 32, 4096, point_ns * long, 0),
        metric: Metric::Iops,
    });
    v.push(SuitePoint {
        case: case(RwMode::Write, 128 << 10, 32, 128 << 10, point_ns * long, 0),
        metric: Metric::Bw,
    });
    v
}

/// The sequential pass that writes the suite's span before it is measured (128 KiB, QD 32, the
/// span once).
pub fn fill_spec(span: u64) -> ssdlab_workload::WorkloadSpec {
    ssdlab_workload::WorkloadSpec {
        rw: RwMode::Write,
        read_pct: 0,
        random_pct: 0,
        bs: 128 << 10,
        align: 128 << 10,
        span: Some(span),
        qd: 32,
        stop: ssdlab_workload::StopCondition {
            bytes: Some(span),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Something the suite can be measured on.
pub trait Measure {
    /// Runs one case and reports what it measured.
    fn measure(&mut self, case: &Case) -> Result<Outcome, String>;
}

/// The figure of a measured point, as a data-file entry.
pub fn figure_of(p: &SuitePoint, o: &Outcome, note: &str) -> RawFigure {
    let c = &p.case;
    let (value, unit) = match p.metric {
        Metric::Bw => (o.bw / 1e6, "MB/s"),
        Metric::Iops => (o.iops, "IOPS"),
        Metric::Lat => (o.lat_ns / 1e3, "us"),
    };
    RawFigure {
        id: None,
        drive: c.drive.clone(),
        metric: p.metric.to_string(),
        value: (value * 1000.0).round() / 1000.0,
        unit: unit.into(),
        drives: None,
        stripe: None,
        rw: c.rw.as_str().to_string(),
        bs: format_size(c.bs),
        qd: c.qd,
        span: c.span.map(format_size),
        align: (c.align != c.bs).then(|| c.align.to_string()),
        state: Some(c.state.to_string()),
        time: Some(format!("{}ms", c.time_ns / 1_000_000)),
        rwmixread: matches!(c.rw, RwMode::Randrw | RwMode::Rw).then_some(c.read_pct),
        adapter: c.adapter.model.map(|m| m.to_string()),
        adapter_cache: c.adapter.cache_bytes.map(format_size),
        pattern: (c.pattern != ssdlab_workload::Pattern::Random).then(|| c.pattern.to_string()),
        after: c.after_bytes.map(|b| b.to_string()),
        bound: None,
        usage: None,
        quote: None,
        note: Some(note.to_string()),
        capacity_note: None,
    }
}

/// Measures every point in order; `progress` gets (points done, points, seconds left estimated
/// from the virtual length of what is left). Returns the measurements as a data file.
pub fn measure_suite(
    m: &mut dyn Measure,
    points: &[SuitePoint],
    source: Source,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<RawFile, String> {
    let total_ns: u64 = points.iter().map(|p| p.case.time_ns).sum();
    let mut done_ns = 0u64;
    let t0 = Instant::now();
    let mut figures = Vec::with_capacity(points.len());
    for (i, p) in points.iter().enumerate() {
        let elapsed = t0.elapsed().as_secs_f64();
        let left = if done_ns > 0 {
            elapsed * (total_ns - done_ns) as f64 / done_ns as f64
        } else {
            (total_ns as f64) / 1e9
        };
        progress(i, points.len(), left);
        let o = m
            .measure(&p.case)
            .map_err(|e| format!("{}: {e}", p.case.label()))?;
        figures.push(figure_of(p, &o, "measured by ssdlab calibrate"));
        done_ns += p.case.time_ns;
    }
    progress(points.len(), points.len(), 0.0);
    Ok(RawFile {
        source,
        figures,
        claims: Vec::new(),
    })
}
