//! Aging runs: a file-system workload ([`ssdlab_workload::aging::Aging`]) applied day after day
//! to one simulated drive or array, on the simulator's clock, with the drive's history carried
//! from day to day (one [`SimSession`]). Each day's writes are issued back to back at the run's
//! queue depth, then the machine is left idle until the day is over (the drives collect garbage
//! in the background, as on a real PC); at the end of each day a write probe — a large file
//! written into the free space, as a user copying it would — runs on a copy of the drives, so it
//! measures the sustained write speed without changing what follows.

use crate::{EngineError, SimOptions, SimSession, SimTarget};
use ssdlab_ssdsim::DriveCounters;
use ssdlab_stats::{AgingDay, AgingRun, AgingWindow};
use ssdlab_workload::aging::{Aging, PhaseStats};
use ssdlab_workload::{Op, RwMode, StopCondition, WorkloadSpec};
use std::sync::Arc;

/// How an aging run is driven.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgingOptions {
    pub days: u32,
    /// Outstanding requests of the day's file activity.
    pub qd: u32,
    /// Outstanding requests of the initial fill.
    pub fill_qd: u32,
    /// Size of the end-of-day write probe (0 = none).
    pub probe_bytes: u64,
    pub probe_qd: u32,
    /// Length of a day on the virtual clock (writes and idle time together), ns.
    pub day_ns: u64,
    pub seed: u64,
}

impl Default for AgingOptions {
    fn default() -> Self {
        AgingOptions {
            days: 10,
            qd: 4,
            fill_qd: 8,
            probe_bytes: 0,
            probe_qd: 8,
            day_ns: 24 * 3600 * 1_000_000_000,
            seed: 1,
        }
    }
}

/// The workload description of a phase: writes (and TRIMs) from a list, at `qd`, until the
/// list ends.
fn phase_spec(aging: &Aging, qd: u32, seed: u64) -> WorkloadSpec {
    WorkloadSpec {
        rw: RwMode::Randwrite,
        read_pct: 0,
        random_pct: 100,
        bs: aging.spec().max_io,
        align: aging.spec().cluster,
        offset: 0,
        span: Some(aging.spec().span),
        qd,
        jobs: 1,
        stop: StopCondition::default(),
        seed,
        ..WorkloadSpec::default()
    }
}

/// The phase's counters, all drives together.
fn window(c: &[DriveCounters], elapsed_ns: u64, st: &PhaseStats) -> AgingWindow {
    AgingWindow {
        host_write_bytes: c.iter().map(|d| d.host_write_bytes).sum(),
        nand_write_bytes: c.iter().map(|d| d.nand_program_bytes).sum(),
        drive_trims: c.iter().map(|d| d.host_trims).sum(),
        fs_trimmed_bytes: st.trimmed_bytes,
        elapsed_ns,
        per_drive_host_write_bytes: c.iter().map(|d| d.host_write_bytes).collect(),
        per_drive_nand_write_bytes: c.iter().map(|d| d.nand_program_bytes).collect(),
        drive_mapped_bytes: c.iter().map(|d| d.mapped_bytes).sum(),
        free_blocks_min: c.iter().map(|d| d.free_blocks).min().unwrap_or(0),
    }
}

/// Runs `ops` on `session` at `qd`; returns the measured time and whether it was interrupted.
fn issue(
    session: &mut SimSession,
    aging: &Aging,
    ops: Vec<Op>,
    qd: u32,
    seed: u64,
    sim: &SimOptions<'_>,
) -> Result<(u64, bool), EngineError> {
    if ops.is_empty() {
        return Ok((0, false));
    }
    let spec = phase_spec(aging, qd, seed);
    let out = session.run_ops(&spec, Arc::from(ops), sim)?;
    Ok((out.result.runtime_ns, out.result.interrupted))
}

/// Runs `aging` on a fresh (trimmed) `target`: the fill, then `opts.days` days with a probe at
/// the end of each. `on_day(d)` is called after day `d` (0 = the fill). A run stopped from
/// outside (the stop flag of `sim`) returns the days completed so far.
pub fn run_aging(
    target: &SimTarget,
    mut aging: Aging,
    label: &str,
    opts: &AgingOptions,
    sim: &SimOptions<'_>,
    on_day: &(dyn Fn(u32) + Sync),
) -> Result<(AgingRun, bool), EngineError> {
    let mut session = SimSession::new(target, opts.seed, sim.max_memory)?;
    let mut run = AgingRun {
        label: label.to_string(),
        trim_passthrough: target.adapter.trim_passthrough,
        drives: target.drives,
        volume_bytes: aging.spec().span,
        ..Default::default()
    };
    let (ops, st) = aging.fill();
    let start = session.now();
    let (t, stopped) = issue(&mut session, &aging, ops, opts.fill_qd, opts.seed, sim)?;
    session.idle_until(start + t.max(opts.day_ns));
    run.fill = window(&session.counters(), t, &st);
    on_day(0);
    if stopped {
        return Ok((run, true));
    }
    for d in 1..=opts.days {
        let start = session.now();
        let (ops, st) = aging.day();
        let seed = opts.seed.wrapping_add(d as u64);
        let (t, stopped) = issue(&mut session, &aging, ops, opts.qd, seed, sim)?;
        session.idle_until(start + opts.day_ns);
        let work = window(&session.counters(), t, &st);
        let probe = if opts.probe_bytes > 0 && !stopped {
            let mut copy = session.clone();
            let ops = aging.probe(opts.probe_bytes);
            let (t, _) = issue(&mut copy, &aging, ops, opts.probe_qd, seed, sim)?;
            window(&copy.counters(), t, &PhaseStats::default())
        } else {
            AgingWindow::default()
        };
        let fs = aging.fs();
        run.days.push(AgingDay {
            day: d,
            work,
            probe,
            fs_used_bytes: fs.used_bytes(),
            files: fs.files().len() as u64,
            free_extents: fs.free_extents() as u64,
            created: st.created,
            deleted: st.deleted,
            rewritten: st.rewritten,
            appended: st.appended,
        });
        on_day(d);
        if stopped {
            return Ok((run, true));
        }
    }
    Ok((run, false))
}
