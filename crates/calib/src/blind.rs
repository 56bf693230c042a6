//! The blind self-test of the calibration: a hidden drive (a preset with its timing parameters
//! randomised within physical ranges) is measured only through the workload interface — the
//! characterisation suite, as a real drive would be — a model is fitted to those measurements
//! from the unchanged preset, and the fitted model predicts held-out workloads the suite never
//! ran (RAID 0 arrays over queue depths and stripes, a mixed workload, an alignment test at
//! another queue depth). The prediction error against the hidden drive is what a user can expect
//! of a calibration when the model's structure is right.

use crate::data::{Case, Metric};
use crate::data::{DataSet, Source};
use crate::fit::{default_params, fit, FitResult};
use crate::predict::{simulate, simulate_all, Outcome, PredictOptions, SimCache};
use crate::suite::{measure_suite, suite, Measure, SuiteKind};
use ssdlab_ssdsim::DriveConfig;
use ssdlab_workload::RwMode;
use std::path::Path;

/// A drive measured through the workload interface only.
pub struct SimMeasure {
    pub drive: DriveConfig,
    pub opts: PredictOptions,
    pub cache: SimCache,
}

impl Measure for SimMeasure {
    fn measure(&mut self, case: &Case) -> Result<Outcome, String> {
        simulate(case, &self.drive, &self.opts, Some(&self.cache))
    }
}

/// splitmix64: a small deterministic generator for the hidden drive's parameters.
fn next(s: &mut u64) -> f64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// A hidden drive: `base` with its firmware times, command overhead and write cache scaled by
/// factors drawn log-uniformly from ½…2, its NAND read and program times from 0.8…1.25, its
/// unaligned-write policy drawn, and (when it remaps) a remapping cost of 0–20 µs. Returns the drive and the overrides that made it.
pub fn hidden_drive(base: &DriveConfig, seed: u64) -> (DriveConfig, Vec<(String, String)>) {
    let mut s = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5eed;
    let mut sets = Vec::new();
    let c = &base.controller;
    for (k, v) in [
        ("controller.fw_read_ns", c.fw_read_ns),
        ("controller.fw_write_ns", c.fw_write_ns),
        ("controller.fw_read_per_unit_ns", c.fw_read_per_unit_ns),
        ("controller.fw_write_per_unit_ns", c.fw_write_per_unit_ns),
        ("host.cmd_overhead_ns", base.host.cmd_overhead_ns),
        ("controller.cache_bytes", c.cache_bytes),
    ] {
        let f = 2f64.powf(2.0 * next(&mut s) - 1.0);
        let mut nv = (v as f64 * f).round() as u64;
        if k == "controller.cache_bytes" {
            nv = nv.max(1 << 20) & !4095;
        }
        sets.push((k.to_string(), nv.to_string()));
    }
    // the NAND as the controller sees it: ±25 % around the datasheet's typical times
    for (k, v) in [
        ("nand.t_r_ns", base.nand.t_r_ns),
        ("nand.t_prog_ns", base.nand.t_prog_ns),
    ] {
        let f = 1.25f64.powf(2.0 * next(&mut s) - 1.0);
        sets.push((k.to_string(), ((v as f64 * f).round() as u64).to_string()));
    }
    if next(&mut s) < 0.5 {
        sets.push(("ftl.unaligned".into(), "remap".into()));
        let cost = (next(&mut s) * 20_000.0).round() as u64;
        sets.push(("controller.remap_cost_ns".into(), cost.to_string()));
    } else {
        sets.push(("ftl.unaligned".into(), "rmw".into()));
    }
    let mut d = base.clone();
    d.set_all(&sets)
        .expect("the hidden drive's values are valid");
    d.name = format!("hidden-{seed}");
    (d, sets)
}

/// The held-out workloads: none of them is in the characterisation suite.
pub fn held_out(drive: &str, span: u64, time_ns: u64) -> Vec<(Case, Metric)> {
    let base = Case::on_written_span(drive, span, time_ns);
    let case = |drives: u32,
                stripe: Option<u64>,
                rw: RwMode,
                bs: u64,
                qd: u32,
                align: u64,
                read_pct: u8| Case {
        drives,
        stripe,
        rw,
        bs,
        qd,
        align,
        read_pct,
        ..base.clone()
    };
    vec![
        (
            case(2, Some(16 << 10), RwMode::Randread, 4096, 8, 4096, 100),
            Metric::Iops,
        ),
        (
            case(2, Some(8 << 10), RwMode::Randwrite, 4096, 2, 4096, 0),
            Metric::Iops,
        ),
        (
            case(2, Some(64 << 10), RwMode::Randwrite, 4096, 16, 4096, 0),
            Metric::Iops,
        ),
        (
            case(
                2,
                Some(16 << 10),
                RwMode::Read,
                128 << 10,
                4,
                128 << 10,
                100,
            ),
            Metric::Bw,
        ),
        (
            case(
                2,
                Some(128 << 10),
                RwMode::Write,
                128 << 10,
                8,
                128 << 10,
                0,
            ),
            Metric::Bw,
        ),
        (
            case(1, None, RwMode::Randrw, 4096, 16, 4096, 50),
            Metric::Iops,
        ),
        (
            case(1, None, RwMode::Randwrite, 4096, 1, 512, 0),
            Metric::Bw,
        ),
        (
            case(1, None, RwMode::Randread, 8192, 16, 8192, 100),
            Metric::Iops,
        ),
        (
            case(1, None, RwMode::Read, 64 << 10, 2, 64 << 10, 100),
            Metric::Bw,
        ),
    ]
}

/// One held-out workload: the hidden drive's figure and the fitted model's prediction.
#[derive(Debug, Clone)]
pub struct Prediction {
    pub case: Case,
    pub metric: Metric,
    pub hidden: f64,
    pub predicted: f64,
    /// predicted / hidden − 1.
    pub error: f64,
}

#[derive(Debug, Clone)]
pub struct BlindResult {
    pub seed: u64,
    pub hidden: Vec<(String, String)>,
    pub fit: FitResult,
    pub predictions: Vec<Prediction>,
    /// Median and worst |error| of the predictions.
    pub median: f64,
    pub worst: f64,
}

/// Options of a self-test: the suite's span and point length, the held-out runs' length.
#[derive(Debug, Clone, Copy)]
pub struct BlindOptions {
    pub span: u64,
    pub point_ns: u64,
    pub held_out_ns: u64,
    pub passes: usize,
    pub threads: usize,
}

impl Default for BlindOptions {
    fn default() -> Self {
        BlindOptions {
            span: 1 << 30,
            point_ns: 250_000_000,
            held_out_ns: 500_000_000,
            passes: 2,
            threads: PredictOptions::default().threads,
        }
    }
}

/// Runs the self-test for one hidden drive drawn from `base` with `seed`.
pub fn self_test(base: &DriveConfig, seed: u64, o: &BlindOptions) -> Result<BlindResult, String> {
    let (hidden, sets) = hidden_drive(base, seed);
    let popts = PredictOptions {
        max_time_ns: None,
        max_ios: None,
        threads: o.threads,
        seed: 1,
        stop: None,
        memory_budget: crate::predict::MemoryBudget::Unbounded,
    };
    let mut m = SimMeasure {
        drive: hidden.clone(),
        opts: popts,
        cache: SimCache::default(),
    };
    let points = suite(SuiteKind::Quick, &base.name, o.span, o.point_ns);
    let source = Source {
        title: format!("blind self-test, hidden drive {seed}"),
        url: None,
        published: None,
        kind: "measured".into(),
        method: None,
    };
    let raw = measure_suite(&mut m, &points, source, &mut |_, _, _| {})?;
    let data = DataSet::from_raw(Path::new("blind.toml"), raw).map_err(|e| e.to_string())?;
    let figures: Vec<&crate::data::Figure> = data.figures.iter().collect();
    let params = default_params(base, &figures);
    let res = fit(base, &figures, &params, o.passes, &popts, &mut |_| {})?;
    let held = held_out(&base.name, o.span, o.held_out_ns);
    let cases: Vec<&Case> = held.iter().map(|(c, _)| c).collect();
    let truth = simulate_all(&cases, |_| Some(hidden.clone()), &popts, None);
    let pred = simulate_all(&cases, |_| Some(res.config.clone()), &popts, None);
    let mut predictions = Vec::new();
    for (((c, metric), t), p) in held.iter().zip(truth).zip(pred) {
        let (t, p) = (t?.get(*metric), p?.get(*metric));
        predictions.push(Prediction {
            case: c.clone(),
            metric: *metric,
            hidden: t,
            predicted: p,
            error: p / t - 1.0,
        });
    }
    let mut abs: Vec<f64> = predictions.iter().map(|p| p.error.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let median = abs[abs.len() / 2];
    let worst = *abs.last().expect("held-out workloads");
    Ok(BlindResult {
        seed,
        hidden: sets,
        fit: res,
        predictions,
        median,
        worst,
    })
}
