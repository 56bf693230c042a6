//! fio's `steadystate` check: while a job runs, its IOPS, bandwidth or mean latency is sampled
//! every check interval (after `steadystate_ramp_time`), the last `steadystate_duration` of
//! samples are kept, and the job ends as soon as they meet the criterion: every sample within
//! the limit of their mean (`iops`, `bw`, `lat`), or the least-squares slope through them
//! within the limit (`iops_slope`, `bw_slope`, `lat_slope`); a limit with `%` is relative to
//! the mean (fio's `steadystate.c`).

use serde::{Deserialize, Serialize};

/// What is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyMetric {
    Iops,
    Bw,
    Lat,
}

/// A job's steady-state criterion (fio's `ss`, `ss_dur`, `ss_ramp`, `ss_interval`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyCriterion {
    pub metric: SteadyMetric,
    /// The slope of the samples rather than their largest deviation from the mean.
    pub slope: bool,
    /// The limit: IOPS, bytes/s or ns, or a percentage of the mean with `pct`.
    pub limit: f64,
    pub pct: bool,
    /// How long the samples kept span (a whole number of intervals), ns.
    pub duration_ns: u64,
    /// No samples are taken until this long after the job started (plus one interval), ns.
    pub ramp_ns: u64,
    /// Time between samples, ns.
    pub interval_ns: u64,
}

impl SteadyCriterion {
    /// The number of samples kept.
    pub fn intervals(&self) -> usize {
        (self.duration_ns / self.interval_ns.max(1)).max(1) as usize
    }

    /// fio's name of the criterion, as its JSON `ss` shows it: `iops_slope:0.100000%`.
    pub fn label(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            self.metric_name(),
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }

    pub fn metric_name(&self) -> &'static str {
        match self.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bw => "bw",
            SteadyMetric::Lat => "lat",
        }
    }

    /// The criterion over `samples` (oldest first; all `intervals()` of them): the slope or
    /// the largest deviation from the mean, in % of the mean with `pct`. `None` while the
    /// samples do not fill the window.
    pub fn evaluate(&self, samples: &[u64]) -> Option<Evaluation> {
        let n = self.intervals();
        if samples.len() < n {
            return None;
        }
        let ys = &samples[samples.len() - n..];
        let sum_y: f64 = ys.iter().map(|&y| y as f64).sum();
        let mean = sum_y / n as f64;
        let deviation = ys
            .iter()
            .map(|&y| (y as f64 - mean).abs())
            .fold(0.0, f64::max);
        // Least squares over x = 0..n-1, as fio assumes equally spaced samples.
        let nf = n as f64;
        let sum_x = nf * (nf - 1.0) / 2.0;
        let sum_x_sq = (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0;
        let sum_xy: f64 = ys
            .iter()
            .enumerate()
            .map(|(i, &y)| i as f64 * y as f64)
            .sum();
        let denom = sum_x_sq - sum_x * sum_x / nf;
        let slope = if denom > 0.0 {
            (sum_xy - sum_x * sum_y / nf) / denom
        } else {
            0.0
        };
        let raw = if self.slope { slope } else { deviation };
        let criterion = if self.pct {
            if mean > 0.0 {
                100.0 * raw / mean
            } else {
                f64::INFINITY
            }
        } else {
            raw
        };
        Some(Evaluation {
            criterion,
            deviation,
            slope,
            attained: criterion.abs() < self.limit,
        })
    }
}

/// One evaluation of the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// The value compared with the limit (signed for a slope).
    pub criterion: f64,
    pub deviation: f64,
    pub slope: f64,
    pub attained: bool,
}

/// Parses fio's `steadystate=` value (`iops:2%`, `iops_slope:0.1%`, `bw:10m`, `bw_slope:1%`,
/// `lat:100us`, `lat_slope:1%`); durations are given separately.
pub fn parse_criterion(s: &str) -> Result<(SteadyMetric, bool, f64, bool), String> {
    let (kind, limit) = s.split_once(':').ok_or_else(|| {
        format!("steadystate={s}: give a criterion and a limit, e.g. iops_slope:0.1%")
    })?;
    let (metric, slope) = match kind.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bw, false),
        "bw_slope" => (SteadyMetric::Bw, true),
        "lat" => (SteadyMetric::Lat, false),
        "lat_slope" => (SteadyMetric::Lat, true),
        other => {
            return Err(format!(
                "steadystate={s}: '{other}' is not one of fio's criteria (iops, iops_slope, bw, bw_slope, lat, lat_slope)"
            ))
        }
    };
    let limit = limit.trim();
    if let Some(p) = limit.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("steadystate={s}: '{p}' is not a percentage"))?;
        return Ok((metric, slope, v, true));
    }
    let v = match metric {
        SteadyMetric::Iops => limit
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0),
        SteadyMetric::Bw => crate::units::parse_size(limit).ok().map(|b| b as f64),
        // A bare number's unit differs between fio versions: a unit is asked for.
        SteadyMetric::Lat if limit.chars().all(|c| c.is_ascii_digit() || c == '.') => None,
        SteadyMetric::Lat => crate::units::parse_duration(limit).ok().map(|n| n as f64),
    }
    .ok_or_else(|| format!("steadystate={s}: '{limit}' is not a limit for {kind}"))?;
    Ok((metric, slope, v, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crit(slope: bool, limit: f64, pct: bool) -> SteadyCriterion {
        SteadyCriterion {
            metric: SteadyMetric::Iops,
            slope,
            limit,
            pct,
            duration_ns: 4_000_000_000,
            ramp_ns: 0,
            interval_ns: 1_000_000_000,
        }
    }

    #[test]
    fn deviation_and_slope_as_fio_computes_them() {
        let c = crit(false, 5.0, true);
        assert_eq!(c.intervals(), 4);
        assert!(c.evaluate(&[100, 100, 100]).is_none(), "window not full");
        // mean 100, largest deviation 4: 4 %
        let e = c.evaluate(&[96, 100, 104, 100]).unwrap();
        assert!((e.criterion - 4.0).abs() < 1e-9);
        assert!(e.attained);
        let e = c.evaluate(&[90, 100, 110, 100]).unwrap();
        assert!(!e.attained, "10 % > 5 %");
        // the last 4 of a longer list
        assert!(c.evaluate(&[1, 1, 100, 100, 100, 100]).unwrap().attained);
        // slope of 10, 20, 30, 40 is 10 per interval: 40 % of the mean 25
        let s = crit(true, 50.0, true).evaluate(&[10, 20, 30, 40]).unwrap();
        assert!((s.slope - 10.0).abs() < 1e-9);
        assert!((s.criterion - 40.0).abs() < 1e-9);
        assert!(s.attained);
        // a falling slope counts by its size; an absolute limit
        let s = crit(true, 5.0, false).evaluate(&[40, 30, 20, 10]).unwrap();
        assert!((s.criterion + 10.0).abs() < 1e-9);
        assert!(!s.attained);
    }

    #[test]
    fn criteria_parse_as_fio_writes_them() {
        assert_eq!(
            parse_criterion("iops_slope:0.1%").unwrap(),
            (SteadyMetric::Iops, true, 0.1, true)
        );
        assert_eq!(
            parse_criterion("iops:2000").unwrap(),
            (SteadyMetric::Iops, false, 2000.0, false)
        );
        assert_eq!(
            parse_criterion("bw:1m").unwrap(),
            (SteadyMetric::Bw, false, 1048576.0, false)
        );
        assert_eq!(
            parse_criterion("lat_slope:100us").unwrap(),
            (SteadyMetric::Lat, true, 100_000.0, false)
        );
        for bad in ["iops", "iopz:1%", "iops:x%", "bw:fast", "lat:100"] {
            assert!(parse_criterion(bad).is_err(), "{bad}");
        }
        assert_eq!(crit(true, 0.1, true).label(), "iops_slope:0.100000%");
    }
}
