//! Fitting a drive model's free parameters to figures.
//!
//! The objective is the mean squared log error `mean(ln(simulated / measured)²)` over the figures
//! (a factor of 2 too fast costs as much as a factor of 2 too slow; every figure weighs the same).
//! The search is coordinate descent, deterministic and bounded: for each parameter in turn a
//! coarse grid over its range (log-spaced for scale parameters), then a golden-section refinement
//! around the best grid point; choices (such as `ftl.unaligned`) are tried one by one. Two passes
//! by default. Every evaluation simulates all the figures with the candidate model (see
//! [`crate::predict`]); evaluations are remembered, so revisiting a point is free.
//!
//! A parameter whose whole range moves the objective by less than [`FLAT`] is left at its base
//! value and reported as not constrained by the data.

use crate::data::Figure;
use crate::predict::{simulate_all, PredictOptions};
use serde::Serialize;
use ssdlab_ssdsim::DriveConfig;
use std::collections::HashMap;

/// Objective change below which a parameter counts as not constrained by the data.
pub const FLAT: f64 = 1e-4;
/// The log error a figure whose simulation failed counts as (a factor of 10).
const FAILED: f64 = std::f64::consts::LN_10;

/// The range a parameter is searched over.
#[derive(Debug, Clone, PartialEq)]
pub enum Range {
    /// `base / down` … `base × up`, searched on a log scale (base > 0).
    Scale { down: f64, up: f64 },
    /// `lo` … `hi`, searched linearly.
    Linear { lo: f64, hi: f64 },
    /// One of these values.
    Choice(Vec<String>),
}

/// A free parameter: a dotted preset key and its range.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub key: String,
    pub range: Range,
}

/// What the fit did to one parameter.
#[derive(Debug, Clone, Serialize)]
pub struct Fitted {
    pub key: String,
    pub before: String,
    pub after: String,
    /// The data moved the objective by more than [`FLAT`] over the parameter's range.
    pub constrained: bool,
    /// The range searched, for the record.
    pub range: String,
}

#[derive(Debug, Clone)]
pub struct FitResult {
    pub config: DriveConfig,
    pub params: Vec<Fitted>,
    /// Root-mean-square log error before and after, as a factor − 1 (0.1 = typically 10 % off).
    pub error_before: f64,
    pub error_after: f64,
    pub evaluations: usize,
    pub figures: usize,
}

/// The current value of a dotted key (`controller.fw_read_ns`) in a model.
pub fn get_value(cfg: &DriveConfig, key: &str) -> Option<toml::Value> {
    let root = toml::Value::try_from(cfg).ok()?;
    let mut cur = &root;
    for p in key.split('.') {
        cur = cur.as_table()?.get(p)?;
    }
    Some(cur.clone())
}

fn value_string(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The parameters fitted by default: the controller's per-command and per-unit firmware times,
/// the host command overhead, the write cache, the effective NAND read and program times, and — when the figures test writes that are not
/// aligned to the mapping unit — the unaligned-write policy and the remapping cost; when they test
/// a drive with a history (`full`, `steady`) — the GC page-move cost. Only keys whose base value
/// can be scaled (non-zero) or that the data can see are included.
pub fn default_params(base: &DriveConfig, figures: &[&Figure]) -> Vec<Param> {
    let mut v = Vec::new();
    let scale = |key: &str, down: f64, up: f64| Param {
        key: key.to_string(),
        range: Range::Scale { down, up },
    };
    let c = &base.controller;
    for (key, val) in [
        ("controller.fw_read_ns", c.fw_read_ns),
        ("controller.fw_write_ns", c.fw_write_ns),
        ("controller.fw_read_per_unit_ns", c.fw_read_per_unit_ns),
        ("controller.fw_write_per_unit_ns", c.fw_write_per_unit_ns),
        ("host.cmd_overhead_ns", base.host.cmd_overhead_ns),
    ] {
        if val > 0 {
            v.push(scale(key, 4.0, 4.0));
        }
    }
    if c.cache_bytes > 0 {
        v.push(scale("controller.cache_bytes", 8.0, 8.0));
    }
    // effective NAND times (a datasheet's typical values; what the controller sees may differ)
    for (key, val) in [
        ("nand.t_r_ns", base.nand.t_r_ns),
        ("nand.t_prog_ns", base.nand.t_prog_ns),
    ] {
        if val > 0 {
            v.push(scale(key, 2.0, 2.0));
        }
    }
    let unit = base.ftl.mapping_unit;
    let unaligned = figures.iter().any(|f| {
        f.case.rw.fixed_read_pct() != Some(100)
            && (f.case.align % unit != 0 || f.case.bs % unit != 0)
    });
    if unaligned {
        v.push(Param {
            key: "ftl.unaligned".into(),
            range: Range::Choice(vec!["rmw".into(), "remap".into()]),
        });
        v.push(Param {
            key: "controller.remap_cost_ns".into(),
            range: Range::Linear {
                lo: 0.0,
                hi: 100_000.0,
            },
        });
    }
    let history = figures
        .iter()
        .any(|f| f.case.state != ssdlab_ssdsim::Precondition::Fresh);
    if history {
        v.push(Param {
            key: "controller.fw_gc_move_ns".into(),
            range: Range::Linear {
                lo: 0.0,
                hi: 200_000.0,
            },
        });
    }
    v
}

/// Parses `KEY`, `KEY=LO..HI` (linear) or `KEY=a|b|c` (choice); `KEY` alone is scaled ×¼…×4
/// around the base value (or 0…2×10⁵ when the base is 0).
pub fn parse_param(s: &str, base: &DriveConfig) -> Result<Param, String> {
    let (key, range) = match s.split_once('=') {
        Some((k, r)) => (k.trim(), Some(r.trim())),
        None => (s.trim(), None),
    };
    let cur = get_value(base, key).ok_or_else(|| format!("--param {key}: unknown preset key"))?;
    if cur.is_table() {
        return Err(format!("--param {key}: is a section, not a value"));
    }
    let range = match range {
        Some(r) if r.contains('|') => {
            let choices: Vec<String> = r.split('|').map(|x| x.trim().to_string()).collect();
            for c in &choices {
                if cur.is_integer() && c.parse::<f64>().is_ok_and(|v| v < 0.0) {
                    return Err(format!(
                        "--param {s}: {key} is a count or a time, never negative ({c:?} is)"
                    ));
                }
                check_value(base, key, c).map_err(|e| format!("--param {s}: {c:?} {e}"))?;
            }
            Range::Choice(choices)
        }
        Some(r) => {
            let (lo, hi) = r
                .split_once("..")
                .ok_or_else(|| format!("--param {s}: expected KEY=LO..HI or KEY=a|b"))?;
            let num = |x: &str| {
                x.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("--param {s}: {x:?} is not a number"))
            };
            let ends = [(num(lo)?, lo.trim()), (num(hi)?, hi.trim())];
            let (lo, hi) = (ends[0].0, ends[1].0);
            if lo >= hi {
                return Err(format!("--param {s}: the range is empty"));
            }
            if cur.is_integer() && lo < 0.0 {
                return Err(format!(
                    "--param {s}: {key} is a count or a time, never negative (the range must start at 0 or above)"
                ));
            }
            for (v, typed) in ends {
                if cur.is_integer() && v > i64::MAX as f64 {
                    return Err(format!(
                        "--param {s}: {typed} is beyond any value {key} can hold"
                    ));
                }
                if cur.is_integer() && v.fract() != 0.0 {
                    return Err(format!(
                        "--param {s}: {key} is a whole number; {typed} is not one"
                    ));
                }
                // the ends are values the search takes: each must be one the key can have
                check_value(base, key, &format_like(&cur, v)).map_err(|e| {
                    format!("--param {s}: {typed} {e}; the range must hold valid values")
                })?;
            }
            Range::Linear { lo, hi }
        }
        None => match cur {
            toml::Value::Integer(0) => Range::Linear {
                lo: 0.0,
                hi: 200_000.0,
            },
            toml::Value::Integer(_) | toml::Value::Float(_) => Range::Scale { down: 4.0, up: 4.0 },
            toml::Value::Boolean(_) => Range::Choice(vec!["false".into(), "true".into()]),
            _ => return Err(format!("--param {key}: give its choices, e.g. {key}=a|b")),
        },
    };
    Ok(Param {
        key: key.to_string(),
        range,
    })
}

/// Whether `key` may be `v` in `base`: the check the preset loader makes of that key (the
/// type, then the drive's validation). A value the validation refuses because of another key
/// passes: other `--param`s may move that key too, and the fit scores such a model as invalid.
fn check_value(base: &DriveConfig, key: &str, v: &str) -> Result<(), String> {
    match base.clone().set_all(&[(key.to_string(), v.to_string())]) {
        Err(e) if e.field == key => Err(format!("is not a valid {key}: {}", e.message)),
        _ => Ok(()),
    }
}

fn describe(range: &Range, base: f64) -> String {
    match range {
        Range::Scale { down, up } => format!("{:.0}…{:.0} (log)", base / down, base * up),
        Range::Linear { lo, hi } => format!("{lo:.0}…{hi:.0}"),
        Range::Choice(c) => c.join("|"),
    }
}

struct Objective<'a> {
    figures: &'a [&'a Figure],
    opts: &'a PredictOptions,
    memo: HashMap<String, (f64, Option<DriveConfig>)>,
    evaluations: usize,
    cache: crate::predict::SimCache,
}

impl Objective<'_> {
    /// Mean squared log error of the model with `sets` applied to `base` (∞ when the model is
    /// not valid).
    fn eval(&mut self, base: &DriveConfig, sets: &[(String, String)]) -> f64 {
        let key = sets
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        if let Some((v, _)) = self.memo.get(&key) {
            return *v;
        }
        let mut cfg = base.clone();
        let score = match cfg.set_all(sets) {
            Err(_) => f64::INFINITY,
            Ok(_) => {
                self.evaluations += 1;
                let cases: Vec<&crate::data::Case> = self.figures.iter().map(|f| &f.case).collect();
                let outs =
                    simulate_all(&cases, |_| Some(cfg.clone()), self.opts, Some(&self.cache));
                let sum: f64 = self
                    .figures
                    .iter()
                    .zip(&outs)
                    .map(|(f, o)| match o {
                        Ok(o) => {
                            let v = o.get(f.metric);
                            if v > 0.0 {
                                (1.0 + f.error(v)).ln().powi(2)
                            } else {
                                FAILED * FAILED
                            }
                        }
                        Err(_) => FAILED * FAILED,
                    })
                    .sum();
                sum / self.figures.len().max(1) as f64
            }
        };
        let cfg = score.is_finite().then_some(cfg);
        self.memo.insert(key, (score, cfg));
        score
    }
}

fn rms(score: f64) -> f64 {
    score.sqrt().exp() - 1.0
}

/// The value of a continuous parameter at position `u` ∈ [0, 1] of its range.
fn at(range: &Range, base: f64, u: f64) -> f64 {
    match range {
        Range::Scale { down, up } => {
            let (lo, hi) = ((base / down).ln(), (base * up).ln());
            (lo + u * (hi - lo)).exp()
        }
        Range::Linear { lo, hi } => lo + u * (hi - lo),
        Range::Choice(_) => unreachable!("choices are not searched by position"),
    }
}

/// Where `v` sits in a continuous range.
fn position(range: &Range, base: f64, v: f64) -> f64 {
    match range {
        Range::Scale { down, up } => {
            let (lo, hi) = ((base / down).ln(), (base * up).ln());
            ((v.max(1e-9).ln() - lo) / (hi - lo)).clamp(0.0, 1.0)
        }
        Range::Linear { lo, hi } => ((v - lo) / (hi - lo)).clamp(0.0, 1.0),
        Range::Choice(_) => 0.0,
    }
}

/// Formats a value for a key whose base value is `like` (integers stay integers).
fn format_like(like: &toml::Value, v: f64) -> String {
    match like {
        toml::Value::Integer(_) => format!("{}", v.round().max(0.0) as i64),
        _ => format!("{v}"),
    }
}

/// Fits `params` of `base` to `figures`. `progress` is told each parameter as it is searched.
pub fn fit(
    base: &DriveConfig,
    figures: &[&Figure],
    params: &[Param],
    passes: usize,
    opts: &PredictOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<FitResult, String> {
    if figures.is_empty() {
        return Err("no figures to fit to".into());
    }
    let mut obj = Objective {
        figures,
        opts,
        memo: HashMap::new(),
        evaluations: 0,
        cache: Default::default(),
    };
    let mut bases = Vec::with_capacity(params.len());
    for p in params {
        let v = get_value(base, &p.key).ok_or_else(|| format!("{}: unknown preset key", p.key))?;
        let num = v.as_integer().map(|i| i as f64).or(v.as_float());
        if !matches!(p.range, Range::Choice(_)) && num.is_none() {
            return Err(format!("{}: not a number, give its choices", p.key));
        }
        if let (Range::Scale { .. }, Some(x)) = (&p.range, num) {
            if x <= 0.0 {
                return Err(format!(
                    "{}: the base value is 0; give a range ({}=LO..HI)",
                    p.key, p.key
                ));
            }
        }
        bases.push(v);
    }
    // where the search starts: the base value, or the nearest value of the range asked for
    // when the base lies outside it (a fitted value never leaves the range)
    let starts: Vec<String> = params
        .iter()
        .zip(&bases)
        .map(|(p, v)| match &p.range {
            Range::Linear { lo, hi } => {
                let x = v.as_integer().map(|i| i as f64).or(v.as_float());
                match x {
                    Some(x) if x < *lo || x > *hi => format_like(v, x.clamp(*lo, *hi)),
                    _ => value_string(v),
                }
            }
            Range::Choice(c) if !c.contains(&value_string(v)) => {
                c.first().cloned().unwrap_or_else(|| value_string(v))
            }
            _ => value_string(v),
        })
        .collect();
    let sets = |cur: &[String]| -> Vec<(String, String)> {
        params
            .iter()
            .zip(cur)
            .map(|(p, v)| (p.key.clone(), v.clone()))
            .collect()
    };
    let before = obj.eval(
        base,
        &sets(&bases.iter().map(value_string).collect::<Vec<_>>()),
    );
    if opts.stopped() {
        return Err(crate::predict::INTERRUPTED.into());
    }
    if !before.is_finite() {
        return Err("the base model is not valid with its own values".into());
    }
    // current values as strings, one per parameter
    let mut cur = starts.clone();
    let start = obj.eval(base, &sets(&cur));
    if opts.stopped() {
        return Err(crate::predict::INTERRUPTED.into());
    }
    let mut best = start;
    let mut spread = vec![0.0f64; params.len()];
    // choices (a policy) first in every pass: they change what the numbers mean, so the numbers
    // are fitted to the chosen structure, not the structure to numbers tuned for another one
    let mut order: Vec<usize> = (0..params.len()).collect();
    order.sort_by_key(|&i| !matches!(params[i].range, Range::Choice(_)));
    for pass in 0..passes.max(1) {
        for &i in &order {
            let p = &params[i];
            if opts.stopped() {
                return Err(crate::predict::INTERRUPTED.into());
            }
            progress(&format!("pass {}/{}: {}", pass + 1, passes.max(1), p.key));
            let probe = |obj: &mut Objective<'_>, cur: &[String], v: String| {
                let mut c = cur.to_vec();
                c[i] = v.clone();
                (obj.eval(base, &sets(&c)), v)
            };
            let mut tried: Vec<(f64, String)> = Vec::new();
            match &p.range {
                Range::Choice(choices) => {
                    for ch in choices {
                        tried.push(probe(&mut obj, &cur, ch.clone()));
                    }
                }
                range => {
                    let b = bases[i]
                        .as_integer()
                        .map(|x| x as f64)
                        .or(bases[i].as_float())
                        .unwrap_or(0.0);
                    let f = |u: f64| format_like(&bases[i], at(range, b, u));
                    let mut grid: Vec<(f64, f64)> = Vec::new();
                    for u in [0.0, 0.25, 0.5, 0.75, 1.0] {
                        let (s, v) = probe(&mut obj, &cur, f(u));
                        grid.push((u, s));
                        tried.push((s, v));
                    }
                    let now: f64 = cur[i].parse().unwrap_or(b);
                    let u_now = position(range, b, now);
                    let (mut u_best, s_best) = grid
                        .iter()
                        .copied()
                        .min_by(|a, b| a.1.total_cmp(&b.1))
                        .expect("grid");
                    if best <= s_best {
                        u_best = u_now;
                    }
                    // golden section around the best point
                    let (mut lo, mut hi) = ((u_best - 0.25).max(0.0), (u_best + 0.25).min(1.0));
                    let g = 0.618_034;
                    for _ in 0..4 {
                        let (a, bb) = (hi - g * (hi - lo), lo + g * (hi - lo));
                        let (sa, va) = probe(&mut obj, &cur, f(a));
                        let (sb, vb) = probe(&mut obj, &cur, f(bb));
                        tried.push((sa, va));
                        tried.push((sb, vb));
                        if sa < sb {
                            hi = bb;
                        } else {
                            lo = a;
                        }
                    }
                }
            }
            let finite: Vec<f64> = tried
                .iter()
                .map(|t| t.0)
                .filter(|s| s.is_finite())
                .collect();
            let (mn, mx) = finite
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &s| {
                    (a.min(s), b.max(s))
                });
            spread[i] = spread[i].max(if finite.is_empty() { 0.0 } else { mx - mn });
            if spread[i] < FLAT {
                // the data cannot see this parameter: keep the base value (or the start within
                // the range asked for)
                cur[i] = starts[i].clone();
                best = obj.eval(base, &sets(&cur));
                continue;
            }
            if let Some((s, v)) = tried
                .into_iter()
                .filter(|t| t.0.is_finite())
                .min_by(|a, b| a.0.total_cmp(&b.0))
            {
                if s < best - 1e-12 {
                    best = s;
                    cur[i] = v;
                }
            }
        }
    }
    if opts.stopped() {
        return Err(crate::predict::INTERRUPTED.into());
    }
    let cfg = obj
        .memo
        .get(
            &sets(&cur)
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","),
        )
        .and_then(|(_, c)| c.clone())
        .ok_or("the fitted model is not valid")?;
    let fitted = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let b = bases[i]
                .as_integer()
                .map(|x| x as f64)
                .or(bases[i].as_float())
                .unwrap_or(0.0);
            Fitted {
                key: p.key.clone(),
                before: value_string(&bases[i]),
                after: cur[i].clone(),
                constrained: spread[i] >= FLAT,
                range: describe(&p.range, b),
            }
        })
        .collect();
    Ok(FitResult {
        config: cfg,
        params: fitted,
        error_before: rms(before),
        error_after: rms(best),
        evaluations: obj.evaluations,
        figures: figures.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_with_their_ranges() {
        let base = ssdlab_ssdsim::load_preset("c300-256g").unwrap();
        assert!(parse_param("nand.t_r_ns=-1000000..-10", &base)
            .unwrap_err()
            .contains("never negative"));
        let p = parse_param("controller.fw_read_ns", &base).unwrap();
        assert_eq!(p.range, Range::Scale { down: 4.0, up: 4.0 });
        let p = parse_param("controller.remap_cost_ns", &base).unwrap();
        assert_eq!(
            p.range,
            Range::Linear {
                lo: 0.0,
                hi: 200_000.0
            }
        );
        let p = parse_param("ftl.unaligned=rmw|remap", &base).unwrap();
        assert_eq!(p.range, Range::Choice(vec!["rmw".into(), "remap".into()]));
        let p = parse_param("nand.t_r_ns=30000..90000", &base).unwrap();
        assert_eq!(
            p.range,
            Range::Linear {
                lo: 30000.0,
                hi: 90000.0
            }
        );
        for (bad, want) in [
            ("nand.colour", "unknown preset key"),
            ("nand", "is a section"),
            ("nand.t_r_ns=9..3", "empty"),
            ("nand.t_r_ns=a..3", "not a number"),
            ("ftl.unaligned", "give its choices"),
            // every range end and every alternative is a value the key can take
            (
                "nand.channels=0..2",
                "0 is not a valid nand.channels: must be at least 1; the range must hold valid values",
            ),
            ("nand.t_r_ns=-5|-6", "never negative (\"-5\" is)"),
            ("nand.channels=-1|0", "never negative (\"-1\" is)"),
            ("nand.channels=1|0", "\"0\" is not a valid nand.channels"),
            ("nand.t_r_ns=1e30|5", "\"1e30\" is not a valid nand.t_r_ns"),
            ("nand.t_r_ns=NaN|5", "\"NaN\" is not a valid nand.t_r_ns"),
            ("nand.t_r_ns=1..1e30", "1e30 is beyond any value nand.t_r_ns can hold"),
            ("nand.t_r_ns=10..2000000000", "must be at most 1000000000 ns"),
            ("nand.channels=1.5..4", "a whole number; 1.5 is not one"),
            ("ftl.steady_overwrite=0..100", "100 is not a valid ftl.steady_overwrite"),
            ("ftl.unaligned=rmw|bogus", "\"bogus\" is not a valid ftl.unaligned"),
        ] {
            let e = parse_param(bad, &base).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
            assert!(e.starts_with("--param "), "{bad}: {e}");
        }
        // values valid for the key pass, also when the raw capacity changes with them
        for ok in ["nand.channels=1..2", "nand.channels=1|4", "nand.t_r_ns=5|6"] {
            parse_param(ok, &base).unwrap();
        }
    }

    #[test]
    fn positions_and_values_invert() {
        for r in [
            Range::Scale { down: 4.0, up: 4.0 },
            Range::Linear { lo: 0.0, hi: 100.0 },
        ] {
            for u in [0.0, 0.3, 1.0] {
                let v = at(&r, 50.0, u);
                assert!((position(&r, 50.0, v) - u).abs() < 1e-9, "{r:?} {u}");
            }
        }
        assert!((at(&Range::Scale { down: 4.0, up: 4.0 }, 100.0, 0.5) - 100.0).abs() < 1e-9);
    }
}
