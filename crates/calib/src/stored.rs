//! Runs kept in a results store (`ssdlab run --store`, `ssdlab calibrate --target --store`) as
//! measured figures, so a model can be fitted to them or validated against them without
//! measuring again.
//!
//! A stored run becomes a figure of the drive it ran on (its target's name: the file or device
//! as given), with its workload as the case and what it measured as the value: bandwidth for
//! transfers of 64 KiB and more, IOPS for smaller ones. The drive state is the one the suite of
//! `calibrate --target` measures in and that a user's own runs normally see: the region written
//! once before (simulated as [`Precondition::Full`] over the run's span).
//!
//! Runs that are not a measurement of one drive's own behaviour are left out, each with the
//! reason: simulated runs, stripe sets and the null target, runs through the page cache
//! (no O_DIRECT), interrupted runs and runs with I/O errors, and workloads a figure cannot
//! describe (several jobs, a region that does not start at 0, a mixed sequential/random share,
//! holes, a paced rate, a replayed trace, compressible data).

use crate::data::{DataSet, Figure, Metric, RawFile, Source};
use crate::predict::Outcome;
use crate::suite::{figure_of, SuitePoint};
use crate::Case;
use ssdlab_ssdsim::Precondition;
use ssdlab_stats::{EngineKind, RunResult, TargetKind};
use ssdlab_workload::RwMode;
use std::path::Path;

/// One run read from a store.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The run's id in the store.
    pub id: i64,
    pub label: String,
    pub result: RunResult,
}

/// The metric a stored run is compared on: bandwidth for large transfers, IOPS for small ones
/// (for a closed-loop run at a fixed block size the three metrics carry the same information;
/// this picks the one reviews print).
pub fn metric_for(rw: RwMode, bs: u64) -> Metric {
    if bs >= 64 << 10 && !matches!(rw, RwMode::Randrw | RwMode::Rw) {
        Metric::Bw
    } else {
        Metric::Iops
    }
}

/// The case of a stored run, or why it cannot be one.
pub fn case_of_run(r: &RunResult) -> Result<Case, String> {
    let s = &r.spec;
    let t = &r.target;
    match t.kind {
        TargetKind::File | TargetKind::Block => {}
        TargetKind::Sim | TargetKind::SimRaid0 => return Err("simulated, not measured".into()),
        TargetKind::Raid0 => return Err("a stripe set (only single drives are read)".into()),
        TargetKind::Null => return Err("the null target".into()),
        TargetKind::Char => return Err("a character device (/dev/null or /dev/zero)".into()),
        TargetKind::Unknown => return Err("its target kind is not recorded".into()),
    }
    if t.engine == EngineKind::Sim {
        return Err("simulated, not measured".into());
    }
    if !t.direct {
        return Err("ran through the page cache (no O_DIRECT)".into());
    }
    if r.interrupted || r.stonewalled {
        return Err("stopped before its end".into());
    }
    if r.stopped_on_error || !r.errors.is_empty() {
        return Err("had I/O errors".into());
    }
    if r.runtime_ns == 0 || r.total_iops() <= 0.0 {
        return Err("measured nothing".into());
    }
    if s.jobs != 1 {
        return Err(format!("{} jobs (a figure describes one)", s.jobs));
    }
    if s.offset != 0 || t.offset != 0 {
        return Err("its region does not start at 0".into());
    }
    if s.random_pct != s.rw.default_random_pct() || s.random_every != 1 {
        return Err("mixes sequential and random offsets".into());
    }
    if s.seq_skip != 0 {
        return Err("sequential with holes".into());
    }
    if s.rate_bps != [0; 3] {
        return Err("paced (a rate limit)".into());
    }
    if s.replay.is_some() {
        return Err("a replayed trace".into());
    }
    if !s.pattern.is_random() {
        return Err(format!(
            "data pattern {} (a figure's data is incompressible)",
            s.pattern
        ));
    }
    if t.span == 0 {
        return Err("an empty region".into());
    }
    Ok(Case {
        drive: t.name.clone(),
        drives: 1,
        stripe: None,
        rw: s.rw,
        bs: s.bs,
        qd: s.qd,
        span: Some(t.span),
        align: s.align,
        state: Precondition::Full,
        time_ns: r.runtime_ns,
        read_pct: s.read_pct,
        adapter: Default::default(),
        pattern: ssdlab_workload::Pattern::Random,
        after_bytes: None,
    })
}

/// The store's runs as a data set of measured figures (`None` when none qualifies), and a line
/// for each run left out.
pub fn dataset_of_runs(path: &Path, runs: &[StoredRun]) -> (Option<DataSet>, Vec<String>) {
    let source = Source {
        title: format!("runs stored in {}", path.display()),
        url: None,
        published: None,
        kind: "measured".into(),
        method: Some("ssdlab run --store / calibrate --store; O_DIRECT".into()),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut figures = Vec::new();
    let mut skipped = Vec::new();
    for run in runs {
        let why = match figure_of_run(path, &source, run) {
            Ok(mut f) => {
                f.origin = format!("{name}#run{}", run.id);
                figures.push(f);
                continue;
            }
            Err(why) => why,
        };
        skipped.push(format!("run {} ({}): {why}", run.id, run.label));
    }
    let ds = (!figures.is_empty()).then(|| DataSet {
        path: path.to_path_buf(),
        source,
        figures,
        claims: Vec::new(),
    });
    (ds, skipped)
}

/// One stored run as a figure, checked as a data file's figure is, or why it cannot be one.
fn figure_of_run(path: &Path, source: &Source, run: &StoredRun) -> Result<Figure, String> {
    let case = case_of_run(&run.result)?;
    let metric = metric_for(case.rw, case.bs);
    let (span, time_ns) = (case.span, case.time_ns);
    let note = format!("stored run {} ({})", run.id, run.label);
    let mut fig = figure_of(
        &SuitePoint { case, metric },
        &Outcome::of(&run.result),
        &note,
    );
    // exact, not rounded for reading: a whole device's span, a sub-millisecond run
    fig.span = span.map(|s| s.to_string());
    fig.time = Some(format!("{time_ns}ns"));
    let one = RawFile {
        source: source.clone(),
        figures: vec![fig],
        claims: Vec::new(),
    };
    let mut ds = DataSet::from_raw(path, one).map_err(|e| e.to_string())?;
    Ok(ds.figures.pop().expect("one figure in, one out"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_stats::TargetDesc;
    use ssdlab_workload::WorkloadSpec;

    fn measured(rw: RwMode, bs: u64, qd: u32) -> RunResult {
        let mut r = RunResult {
            spec: WorkloadSpec {
                rw,
                random_pct: rw.default_random_pct(),
                read_pct: if rw == RwMode::Randread || rw == RwMode::Read {
                    100
                } else {
                    0
                },
                bs,
                align: bs,
                qd,
                span: Some(1 << 30),
                ..Default::default()
            },
            target: TargetDesc {
                kind: TargetKind::File,
                name: "disk.img".into(),
                size: 1 << 30,
                engine: EngineKind::IoUring,
                direct: true,
                offset: 0,
                span: 1 << 30,
                details: Vec::new(),
            },
            runtime_ns: 5_000_000_000,
            ..Default::default()
        };
        let ios = 50_000u64;
        let op = if r.spec.read_pct == 100 {
            &mut r.read
        } else {
            &mut r.write
        };
        op.iops = ios as f64 / 5.0;
        op.bw_bytes = op.iops * bs as f64;
        op.lat.n = ios;
        op.lat.mean = 100_000.0;
        r
    }

    #[test]
    fn a_measured_run_is_a_figure_of_its_target() {
        let runs = vec![
            StoredRun {
                id: 3,
                label: "mine".into(),
                result: measured(RwMode::Randread, 4096, 4),
            },
            StoredRun {
                id: 4,
                label: "seq".into(),
                result: measured(RwMode::Write, 128 << 10, 32),
            },
        ];
        let (ds, skipped) = dataset_of_runs(Path::new("runs.db"), &runs);
        assert!(skipped.is_empty(), "{skipped:?}");
        let ds = ds.unwrap();
        assert_eq!(ds.figures.len(), 2);
        let f = &ds.figures[0];
        assert_eq!(f.case.drive, "disk.img");
        assert_eq!(
            (f.case.rw, f.case.bs, f.case.qd),
            (RwMode::Randread, 4096, 4)
        );
        assert_eq!(f.case.span, Some(1 << 30));
        assert_eq!(f.case.state, Precondition::Full);
        assert_eq!(f.case.time_ns, 5_000_000_000);
        assert_eq!(f.metric, Metric::Iops);
        assert!((f.value - 10_000.0).abs() < 1e-6, "{}", f.value);
        assert_eq!(f.origin, "runs.db#run3");
        let g = &ds.figures[1];
        assert_eq!(g.metric, Metric::Bw);
        assert!((g.value / (10_000.0 * 131_072.0) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_whole_devices_span_and_a_short_run_are_kept_exactly() {
        let mut r = measured(RwMode::Randread, 4096, 1);
        r.target.span = 256_060_514_304; // 238.47 GiB: no whole number of any unit
        r.target.size = r.target.span;
        r.runtime_ns = 400_000; // under a millisecond
        let runs = vec![StoredRun {
            id: 1,
            label: "l".into(),
            result: r,
        }];
        let (ds, skipped) = dataset_of_runs(Path::new("x.db"), &runs);
        assert!(skipped.is_empty(), "{skipped:?}");
        let c = &ds.unwrap().figures[0].case;
        assert_eq!((c.span, c.time_ns), (Some(256_060_514_304), 400_000));
    }

    #[test]
    fn runs_that_are_not_one_drives_measurement_are_left_out_with_the_reason() {
        let base = measured(RwMode::Randread, 4096, 1);
        let cases: Vec<(RunResult, &str)> = vec![
            (
                RunResult {
                    target: TargetDesc {
                        kind: TargetKind::Sim,
                        engine: EngineKind::Sim,
                        ..base.target.clone()
                    },
                    ..base.clone()
                },
                "simulated",
            ),
            (
                RunResult {
                    target: TargetDesc {
                        direct: false,
                        ..base.target.clone()
                    },
                    ..base.clone()
                },
                "page cache",
            ),
            (
                RunResult {
                    interrupted: true,
                    ..base.clone()
                },
                "stopped",
            ),
            (
                RunResult {
                    spec: WorkloadSpec {
                        jobs: 4,
                        ..base.spec.clone()
                    },
                    ..base.clone()
                },
                "4 jobs",
            ),
            (
                RunResult {
                    spec: WorkloadSpec {
                        rate_bps: [1 << 20, 0, 0],
                        ..base.spec.clone()
                    },
                    ..base.clone()
                },
                "paced",
            ),
            (
                RunResult {
                    target: TargetDesc {
                        kind: TargetKind::Raid0,
                        ..base.target.clone()
                    },
                    ..base.clone()
                },
                "stripe set",
            ),
            (
                RunResult {
                    spec: WorkloadSpec {
                        pattern: ssdlab_workload::Pattern::Zeros,
                        ..base.spec.clone()
                    },
                    ..base.clone()
                },
                "data pattern",
            ),
        ];
        for (r, why) in cases {
            let e = case_of_run(&r).unwrap_err();
            assert!(e.contains(why), "{e:?} should say {why:?}");
        }
        let runs = vec![StoredRun {
            id: 9,
            label: "l".into(),
            result: RunResult {
                interrupted: true,
                ..base
            },
        }];
        let (ds, skipped) = dataset_of_runs(Path::new("x.db"), &runs);
        assert!(ds.is_none());
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].starts_with("run 9 (l): "), "{skipped:?}");
    }
}
