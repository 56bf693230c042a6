//! What the waves of a job set measured, and the report entries made of it by fio's rules
//! (clones and reporting groups, `group_reporting`, fio's one-line job header).

use crate::plan::Unit;
use crate::{Job, JobSet, Unified};
use ssdlab_engine::LoopOutcome;
use ssdlab_report::{FioJob, Ignored};
use ssdlab_stats::{Recorder, RunResult};

/// What a unit measured.
#[derive(Clone)]
pub struct Measured {
    /// Its result.
    pub result: RunResult,
    /// Its completions.
    pub recorder: Recorder,
    /// How its run ended.
    pub outcome: LoopOutcome,
    /// Each worker's result and completions, when its clones are reported one by one.
    pub workers: Vec<(RunResult, Recorder)>,
    /// Why the job's `write_iolog` was not kept.
    pub iolog_error: Option<String>,
}

/// fio's one-line job description.
fn header(j: &Job, label: &str) -> String {
    let s = &j.settings;
    // fio's num2str with 4 digits: 4096B, 16.0KiB.
    let size = |b: u64| ssdlab_report::fio_text::num2str(b, 4, true, "B");
    let bs = |i: usize| {
        let (lo, hi) = s.bs_of(i).bounds();
        format!("{}-{}", size(lo), size(hi))
    };
    let rw = if s.read_iolog.is_some() {
        "replay".to_string()
    } else {
        s.mode.name().to_string()
    };
    format!(
        "{}: (g={}): rw={rw}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}, file={label}",
        j.name,
        j.group,
        bs(0),
        bs(1),
        bs(2),
        s.engine.name(),
        s.iodepth
    )
}

/// An entry being put together.
struct Building {
    job: usize,
    unit: usize,
    group: u32,
    members: u32,
    recorder: Recorder,
    outcomes: Vec<LoopOutcome>,
    first: RunResult,
    errors: Vec<ssdlab_stats::IoErrorRecord>,
    /// fio's `steadystate` block of a group: its last member's (the one that keeps the
    /// group's samples, `stat.c` copies each member's in turn).
    steady: Option<ssdlab_stats::FioSteadyState>,
}

/// The report entries (each a result with fio's view of its job), by fio's rule (`stat.c`): every clone of a job without
/// `group_reporting` is an entry of its own; a job with it joins the entry before it when that
/// is of the same reporting group, else starts one.
pub fn build_report(
    js: &JobSet,
    units: &[Unit],
    measured: &[Option<Measured>],
) -> Vec<(RunResult, FioJob)> {
    let mut built: Vec<Building> = Vec::new();
    for (i, u) in units.iter().enumerate() {
        let Some(m) = &measured[i] else { continue };
        let j = &js.jobs[u.job];
        let gr = j.settings.group_reporting;
        if gr {
            if let Some(b) = built.last_mut().filter(|b| b.group == j.group) {
                b.recorder.merge(&m.recorder);
                b.outcomes.push(m.outcome);
                b.members += u.clones;
                b.errors.extend(m.result.errors.iter().cloned());
                b.steady = m.result.fio_steadystate.clone();
                continue;
            }
            built.push(Building {
                job: u.job,
                unit: i,
                group: j.group,
                members: u.clones,
                recorder: m.recorder.clone(),
                outcomes: vec![m.outcome],
                first: m.result.clone(),
                errors: m.result.errors.clone(),
                steady: m.result.fio_steadystate.clone(),
            });
        } else if m.workers.len() > 1 {
            for (r, rec) in &m.workers {
                built.push(Building {
                    job: u.job,
                    unit: i,
                    group: j.group,
                    members: 1,
                    recorder: rec.clone(),
                    outcomes: Vec::new(),
                    first: r.clone(),
                    errors: r.errors.clone(),
                    steady: r.fio_steadystate.clone(),
                });
            }
        } else {
            built.push(Building {
                job: u.job,
                unit: i,
                group: j.group,
                members: u.clones,
                recorder: m.recorder.clone(),
                outcomes: Vec::new(),
                first: m.result.clone(),
                errors: m.result.errors.clone(),
                steady: m.result.fio_steadystate.clone(),
            });
        }
    }
    built
        .into_iter()
        .map(|b| {
            let j = &js.jobs[b.job];
            // fio's job_runtime of a reporting group adds its members' runtimes up.
            let job_runtime_ns = (b.outcomes.len() > 1)
                .then(|| b.outcomes.iter().map(|o| o.runtime_ns).sum::<u64>());
            // Several units together: rebuilt from their recorders.
            let result = if b.outcomes.len() > 1 {
                let mut spec = units[b.unit].spec.clone();
                spec.jobs = b.members;
                let mut r = ssdlab_engine::build_result(
                    &spec,
                    b.first.target.clone(),
                    &b.recorder,
                    ssdlab_engine::merge_outcomes(&b.outcomes),
                    b.first.timestamp_ms,
                    b.first.cpu.clone(),
                );
                r.members = b.first.members.clone();
                r.disk_util = b.first.disk_util.clone();
                r.device = b.first.device.clone();
                r.verify = b.first.verify.clone();
                r.errors = b.errors;
                r.fio_steadystate = b.steady;
                r
            } else {
                b.first
            };
            let description = j
                .options
                .iter()
                .rev()
                .find(|(k, _)| k == "description")
                .or_else(|| {
                    js.global_options
                        .iter()
                        .rev()
                        .find(|(k, _)| k == "description")
                })
                .map(|(_, v)| v.clone());
            let mixed = (j.settings.unified != Unified::None).then(|| {
                b.recorder
                    .unified()
                    .summary(ssdlab_workload::OpKind::Read, result.runtime_ns)
            });
            (
                result,
                FioJob {
                    name: j.name.clone(),
                    group: b.group,
                    members: b.members,
                    options: j.options.clone(),
                    description,
                    header: header(j, &units[b.unit].label),
                    ignored: j
                        .settings
                        .ignored
                        .iter()
                        .map(|i| Ignored {
                            option: i.key.clone(),
                            at: i.loc.as_ref().map(|l| l.to_string()).unwrap_or_default(),
                            why: i.why.clone(),
                        })
                        .collect(),
                    mixed,
                    mixed_only: j.settings.unified == Unified::Mixed,
                    kb_base: j.settings.kb_base,
                    job_runtime_ns,
                },
            )
        })
        .collect()
}
