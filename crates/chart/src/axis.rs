//! Axes: scales, their domains and tick positions, and compact number labels.

/// How values map to positions along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear from 0 (or the smallest value, when negative) to a rounded maximum.
    Linear,
    /// log2, ticks at powers of two (queue depths, sizes).
    Log2,
    /// log10, ticks at decades (latencies).
    Log10,
}

/// A scale fitted to data: the domain and its ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// An axis covering `values` (non-finite values ignored; non-positive ones too on log scales).
    pub fn fit(scale: Scale, values: impl IntoIterator<Item = f64>) -> Axis {
        let vals: Vec<f64> = values
            .into_iter()
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
            .collect();
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match scale {
            Scale::Linear => {
                let (lo0, hi0) = if vals.is_empty() {
                    (0.0, 1.0)
                } else {
                    (min.min(0.0), max.max(0.0))
                };
                let span = if hi0 - lo0 > 0.0 { hi0 - lo0 } else { 1.0 };
                let step = nice_step(span / 5.0);
                let lo = (lo0 / step).floor() * step;
                let mut hi = (hi0 / step).ceil() * step;
                if hi <= lo {
                    hi = lo + step;
                }
                let mut ticks = Vec::new();
                let mut t = lo;
                while t <= hi + step * 1e-9 {
                    let v = if t.abs() < step * 1e-9 { 0.0 } else { t };
                    ticks.push((v, fmt_num(v)));
                    t += step;
                }
                Axis {
                    scale,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Log2 => {
                let (min, max) = if vals.is_empty() {
                    (1.0, 2.0)
                } else {
                    (min, max)
                };
                let lo = min.log2().floor();
                let mut hi = max.log2().ceil();
                if hi <= lo {
                    hi = lo + 1.0;
                }
                let n = (hi - lo) as usize;
                let every = n.div_ceil(12).max(1);
                let ticks = (0..=n)
                    .step_by(every)
                    .map(|k| {
                        let v = 2f64.powf(lo + k as f64);
                        (v, fmt_num(v))
                    })
                    .collect();
                Axis {
                    scale,
                    lo: 2f64.powf(lo),
                    hi: 2f64.powf(hi),
                    ticks,
                }
            }
            Scale::Log10 => {
                let (min, max) = if vals.is_empty() {
                    (1.0, 10.0)
                } else {
                    (min, max)
                };
                let lo = min.log10().floor();
                let mut hi = max.log10().ceil();
                if hi <= lo {
                    hi = lo + 1.0;
                }
                let decades = (hi - lo) as i32;
                let mut ticks = Vec::new();
                for d in 0..=decades {
                    let base = 10f64.powi(lo as i32 + d);
                    ticks.push((base, fmt_num(base)));
                    if decades <= 2 && d < decades {
                        for m in [2.0, 5.0] {
                            ticks.push((base * m, fmt_num(base * m)));
                        }
                    }
                }
                Axis {
                    scale,
                    lo: 10f64.powf(lo),
                    hi: 10f64.powf(hi),
                    ticks,
                }
            }
        }
    }

    /// Replaces the ticks (custom positions and labels, e.g. percentiles).
    pub fn with_ticks(mut self, ticks: Vec<(f64, String)>) -> Axis {
        self.ticks = ticks;
        self
    }

    /// Position of `v` in [0, 1] along the axis.
    pub fn frac(&self, v: f64) -> f64 {
        let f = |x: f64| match self.scale {
            Scale::Linear => x,
            Scale::Log2 => x.max(f64::MIN_POSITIVE).log2(),
            Scale::Log10 => x.max(f64::MIN_POSITIVE).log10(),
        };
        let (a, b) = (f(self.lo), f(self.hi));
        if b > a {
            (f(v) - a) / (b - a)
        } else {
            0.0
        }
    }
}

/// 1, 2 or 5 × 10^k, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let m = raw / mag;
    let n = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// A compact label: `0`, `0.25`, `12.5`, `950`, `1.5k`, `20k`, `1.2M`.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if x.abs() >= 100.0 || x == x.trunc() {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 0.01 {
        2
    } else {
        // two significant digits below 0.01 (a log axis reaching 0.001 ms), not "0"
        ((-x.abs().log10()).ceil() as usize + 1).min(20)
    };
    let mut s = format!("{x:.digits$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if s == "-0" {
        s = "0".into();
    }
    format!("{s}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(fmt_num(950.0), "950");
        assert_eq!(fmt_num(20_000.0), "20k");
        assert_eq!(fmt_num(1_250_000.0), "1.25M");
        assert_eq!(fmt_num(0.001), "0.001");
        assert_eq!(fmt_num(0.005), "0.005");
        assert_eq!(fmt_num(-0.0012), "-0.0012");
        // Decade ticks of a log axis far below 1 keep their value.
        let a = Axis::fit(Scale::Log10, [0.0005, 0.2]);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0.0001", "0.001", "0.01", "0.1", "1"]);
    }

    #[test]
    fn linear_ticks_cover_the_data() {
        let a = Axis::fit(Scale::Linear, [0.0, 37_000.0]);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 37_000.0 && a.hi <= 50_000.0, "{a:?}");
        assert!(a.ticks.len() >= 4 && a.ticks.len() <= 11, "{a:?}");
        assert_eq!(a.frac(a.hi), 1.0);
    }

    #[test]
    fn log_axes() {
        let q = Axis::fit(Scale::Log2, [1.0, 2.0, 4.0, 32.0]);
        let labels: Vec<&str> = q.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16", "32"]);
        assert!((q.frac(4.0) - 0.4).abs() < 1e-12);
        let l = Axis::fit(Scale::Log10, [35.0, 2_000.0]);
        assert_eq!((l.lo, l.hi), (10.0, 10_000.0));
        // Empty data still gives an axis.
        assert!(!Axis::fit(Scale::Log10, []).ticks.is_empty());
    }
}
