//! Simulated targets: one simulated SSD, or a RAID 0 array of them addressed through the md raid0
//! layout, driven by the same closed loop as real targets but on the simulator's virtual clock.

use crate::backend::{Backend, Cqe};
use crate::engine_loop::{run_loop, Control, DataOpts};
use crate::real::{build_result, check_budget, max_ios};
use crate::{EngineError, Invalid, StartHook};
use ssdlab_layout::StripeMap;
use ssdlab_ssdsim::{
    AdapterConfig, DriveConfig, HostCmd, OpKind as SimOp, Precondition, Simulator,
};
use ssdlab_stats::{CpuUsage, MemberStats, Recorder, TargetDesc};
use ssdlab_workload::gen::worker_seed;
use ssdlab_workload::{format_size, Op, OpGen, OpKind, WorkloadSpec};
use std::io;
use std::sync::atomic::AtomicBool;

/// A simulated target: a preset (or custom) drive, possibly several in RAID 0.
#[derive(Debug, Clone)]
pub struct SimTarget {
    /// Name shown in results (preset name or config file).
    pub name: String,
    pub drive: DriveConfig,
    /// Number of drives; more than one makes a RAID 0 array.
    pub drives: usize,
    /// Stripe (chunk) size of the array.
    pub stripe: Option<u64>,
    pub adapter: AdapterConfig,
    pub state: Precondition,
}

#[derive(Debug, Clone, Copy, Default)]
struct Parent {
    remaining: u32,
    /// The worker owning the slot (fixed).
    worker: u32,
    read: bool,
    len: u64,
    t_submit: u64,
}

/// A copy of a worker's op generator running one op ahead of the engine loop's, so the simulator
/// can be told which mapping entries the next command will need while it simulates this one.
struct Lookahead {
    gen: OpGen,
    next: Op,
}

struct SimBackend {
    sim: Simulator,
    /// One per worker (slots `w·qd … (w+1)·qd`); a performance hint only.
    lookahead: Vec<Lookahead>,
    now: u64,
    map: Option<StripeMap>,
    nand_fraction: f32,
    parents: Vec<Parent>,
    ready: Vec<Cqe>,
    members: Vec<(MemberStats, u32, u64)>,
}

fn sim_op(kind: OpKind) -> SimOp {
    match kind {
        OpKind::Read => SimOp::Read,
        OpKind::Write => SimOp::Write,
        OpKind::Trim => SimOp::Trim,
    }
}

impl SimBackend {
    fn cmd(&self, kind: OpKind, offset: u64, len: u64) -> HostCmd {
        HostCmd {
            kind: sim_op(kind),
            offset,
            len,
            nand_fraction: self.nand_fraction,
        }
    }

    /// `op` is being issued from `slot`: if it is the op the worker's lookahead expected, step
    /// the lookahead and have the simulator prefetch what the worker's next op will touch.
    #[inline]
    fn look_ahead(&mut self, slot: u32, op: &Op) {
        let worker = self.parents[slot as usize].worker;
        let Some(la) = self.lookahead.get_mut(worker as usize) else {
            return;
        };
        if la.next != *op {
            return;
        }
        la.next = la.gen.next_op();
        let next = la.next;
        match &self.map {
            None => self
                .sim
                .prefetch(0, &self.cmd(next.kind, next.offset, next.len)),
            Some(map) => {
                if let Some(p) = map.split(next.offset, next.len).next() {
                    let cmd = self.cmd(next.kind, p.member_offset, p.len);
                    self.sim.prefetch(p.member, &cmd);
                }
            }
        }
    }
}

impl Backend for SimBackend {
    fn now(&mut self) -> u64 {
        self.now
    }

    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }

    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.look_ahead(slot, op);
        let read = op.kind == OpKind::Read;
        let mut n = 0;
        match &self.map {
            None => {
                let cmd = self.cmd(op.kind, op.offset, op.len);
                self.sim.submit(self.now, (slot as u64) << 32, 0, cmd);
                n = 1;
            }
            Some(map) => {
                for p in map.split(op.offset, op.len) {
                    let cmd = HostCmd {
                        kind: sim_op(op.kind),
                        offset: p.member_offset,
                        len: p.len,
                        nand_fraction: self.nand_fraction,
                    };
                    let tag = (slot as u64) << 32 | p.member as u64;
                    self.sim.submit(self.now, tag, p.member, cmd);
                    let (m, inflight, since) = &mut self.members[p.member];
                    if *inflight == 0 {
                        *since = self.now;
                    }
                    *inflight += 1;
                    if read {
                        m.read_ios += 1;
                        m.read_bytes += p.len;
                    } else {
                        m.write_ios += 1;
                        m.write_bytes += p.len;
                    }
                    n += 1;
                }
            }
        }
        let p = &mut self.parents[slot as usize];
        p.remaining = n;
        p.read = read;
        p.len = op.len;
        p.t_submit = self.now;
        Ok(())
    }

    fn submit_wait(&mut self, _min: usize, _timeout_ns: u64) -> io::Result<()> {
        // Advance virtual time to the next completed request (all its pieces done).
        while self.ready.is_empty() {
            let Some((tag, t)) = self.sim.next_completion() else {
                return Err(io::Error::other(
                    "simulator has no pending completion while I/O is outstanding",
                ));
            };
            self.now = self.now.max(t);
            let slot = (tag >> 32) as usize;
            let p = &mut self.parents[slot];
            if self.map.is_some() {
                let (m, inflight, since) = &mut self.members[(tag & 0xffff_ffff) as usize];
                let service = t.saturating_sub(p.t_submit);
                if p.read {
                    m.read_ticks_ns += service;
                } else {
                    m.write_ticks_ns += service;
                }
                *inflight -= 1;
                if *inflight == 0 {
                    m.busy_ns += t.saturating_sub(*since);
                }
            }
            p.remaining -= 1;
            if p.remaining == 0 {
                self.ready.push(Cqe {
                    slot: slot as u32,
                    res: p.len as i64,
                    t_ns: t,
                });
            }
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Cqe>) {
        if out.is_empty() {
            // the usual case: hand over the whole vector instead of copying it
            std::mem::swap(out, &mut self.ready);
        } else {
            out.append(&mut self.ready);
        }
    }

    fn mark_measurement_start(&mut self) {
        for (m, _, since) in &mut self.members {
            *m = MemberStats {
                name: std::mem::take(&mut m.name),
                ..Default::default()
            };
            *since = self.now;
        }
    }

    fn member_stats(&mut self) -> Vec<MemberStats> {
        self.members
            .iter()
            .map(|(m, inflight, since)| {
                let mut s = m.clone();
                if *inflight > 0 {
                    s.busy_ns += self.now.saturating_sub(*since);
                }
                s
            })
            .collect()
    }
}

/// Options of a simulated run that are not part of the workload or the target.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimOptions<'a> {
    /// Raised from outside (Ctrl-C, a sweep being stopped): the run ends at the next completion,
    /// marked interrupted.
    pub stop: Option<&'a AtomicBool>,
    /// Refuse to build drives whose memory estimate is above this (besides what the system has).
    pub max_memory: Option<u64>,
    /// Called when the drives are built and preconditioned, before the measured phase (see
    /// [`StartHook`]).
    pub start_hook: Option<StartHook<'a>>,
    /// Raised from outside to stop the run without marking it interrupted (stonewalling).
    pub stonewall: Option<&'a AtomicBool>,
}

/// Bytes of memory the simulator of `target` takes (every drive's tables and the event queue).
pub fn sim_memory_estimate(target: &SimTarget) -> u64 {
    Simulator::memory_estimate(&target.drive, target.drives)
}

/// Runs `spec` on a simulated drive or array in virtual time. All workers share the one event
/// queue (worker w owns slots w·qd … (w+1)·qd), so results are deterministic for a seed.
pub fn run_sim(
    spec: &WorkloadSpec,
    target: &SimTarget,
    opts: &SimOptions<'_>,
) -> Result<ssdlab_stats::RunResult, EngineError> {
    run_sim_prepared(spec, target, None, opts)
}

/// Checks a simulated target (drive config, drive count, memory) before anything is built.
pub fn check_sim_target(target: &SimTarget, max_memory: Option<u64>) -> Result<(), EngineError> {
    check_sim_memory(target, None, max_memory)
}

/// Memory per outstanding simulated I/O in the engine and the simulator: slot state, the parent
/// of its pieces, event-queue entries, completions.
const SIM_SLOT_BYTES: u64 = 256;

/// Checks a simulated target and, with `spec`, the run's memory: every drive's tables, the
/// engine's per-slot state for `--qd` × `--jobs`, and a fixed margin for the rest.
fn check_sim_memory(
    target: &SimTarget,
    spec: Option<&WorkloadSpec>,
    max_memory: Option<u64>,
) -> Result<(), EngineError> {
    target.drive.validate()?;
    if target.drives == 0 {
        return Err(Invalid::NoDrives.into());
    }
    if target.drives > 1 && target.stripe.is_none() {
        return Err(Invalid::SimArrayNeedsStripe.into());
    }
    let slots = spec.map_or(0, |s| s.total_qd());
    let what = if slots > 0 {
        format!(
            "{} simulated drive{} of {} (mapping tables and block state) and {slots} outstanding I/Os",
            target.drives,
            if target.drives == 1 { "" } else { "s" },
            target.name
        )
    } else {
        format!(
            "{} simulated drive{} of {} (mapping tables and block state)",
            target.drives,
            if target.drives == 1 { "" } else { "s" },
            target.name
        )
    };
    let need = sim_memory_estimate(target)
        .saturating_add(slots.saturating_mul(SIM_SLOT_BYTES))
        .saturating_add(crate::real::MEMORY_MARGIN);
    check_budget(&what, need, max_memory)?;
    Ok(())
}

/// Builds (and preconditions) the simulator [`run_sim`] would use for `target` with `seed`, so
/// callers running many workloads on the same drive state can build it once and clone it.
pub fn build_sim(
    target: &SimTarget,
    seed: u64,
    max_memory: Option<u64>,
) -> Result<Simulator, EngineError> {
    check_sim_target(target, max_memory)?;
    Simulator::new(
        &target.drive,
        target.drives,
        &target.adapter,
        target.state,
        seed,
    )
    .map_err(|e| match e {
        ssdlab_ssdsim::SimError::Config(c) => EngineError::Sim(c),
        ssdlab_ssdsim::SimError::Alloc(a) => Invalid::Memory {
            what: format!("{} simulated drive(s) of {}", target.drives, target.name),
            need: format_size(sim_memory_estimate(target)),
            limit: format!("allocation failed: {a}"),
            bound: "the system".into(),
        }
        .into(),
    })
}

/// Checks a workload against a simulated target without building anything: the workload, the
/// array's stripe map, the region and the sector alignment. Returns (map, start, span, size).
fn sim_geometry(
    spec: &WorkloadSpec,
    target: &SimTarget,
) -> Result<(Option<StripeMap>, u64, u64, u64), EngineError> {
    spec.validate()?;
    if spec.verify {
        return Err(Invalid::VerifyOnSim.into());
    }
    // Memory first: an array of a billion drives is refused before its stripe map is built.
    check_sim_memory(target, Some(spec), None)?;
    let drive_size = target.drive.user_capacity();
    let block = target.drive.logical_block_size();
    let map = match (target.drives > 1, target.stripe) {
        (true, Some(stripe)) => Some(
            StripeMap::new(&vec![drive_size; target.drives], stripe, block).map_err(|e| {
                Invalid::SimStripe {
                    stripe: format_size(stripe),
                    why: e.to_string(),
                }
            })?,
        ),
        (true, None) => return Err(Invalid::SimArrayNeedsStripe.into()),
        (false, _) => None,
    };
    let size = map.as_ref().map(|m| m.size()).unwrap_or(drive_size);
    let what = if target.drives > 1 {
        format!("the simulated array ({} × {})", target.drives, target.name)
    } else {
        format!("the simulated drive {}", target.name)
    };
    let (start, span) = spec.region_for(size, &what)?;
    for (name, v) in [
        ("--bs", spec.bs),
        ("--align", spec.align),
        ("--offset", start),
    ] {
        if v % block != 0 {
            return Err(Invalid::SimUnaligned {
                name,
                value: v,
                block,
            }
            .into());
        }
    }
    Ok((map, start, span, size))
}

/// Everything [`run_sim`] checks before it builds the drives (workload, geometry, memory),
/// without building them: for validating the points of a sweep before it starts.
pub fn check_sim_run(
    spec: &WorkloadSpec,
    target: &SimTarget,
    max_memory: Option<u64>,
) -> Result<(), EngineError> {
    check_sim_memory(target, Some(spec), max_memory)?;
    sim_geometry(spec, target)?;
    Ok(())
}

/// Like [`run_sim`], starting from `prepared` (a simulator from [`build_sim`] for the same target
/// and the spec's seed, e.g. a clone of a cached preconditioned state) when given.
pub fn run_sim_prepared(
    spec: &WorkloadSpec,
    target: &SimTarget,
    prepared: Option<Simulator>,
    opts: &SimOptions<'_>,
) -> Result<ssdlab_stats::RunResult, EngineError> {
    run_sim_recorded(spec, target, prepared, opts).map(|(r, _)| r)
}

/// Like [`run_sim_prepared`], also returning the recorder the result was built from (for merging
/// it exactly with other runs').
pub fn run_sim_recorded(
    spec: &WorkloadSpec,
    target: &SimTarget,
    prepared: Option<Simulator>,
    opts: &SimOptions<'_>,
) -> Result<(ssdlab_stats::RunResult, Recorder), EngineError> {
    check_sim_memory(target, Some(spec), opts.max_memory)?;
    let (map, start, span, size) = sim_geometry(spec, target)?;
    let sim = match prepared {
        Some(sim) => sim,
        None => build_sim(target, spec.seed, opts.max_memory)?,
    };
    let slots = spec.qd * spec.jobs;
    let names: Vec<MemberStats> = (0..target.drives)
        .map(|i| MemberStats {
            name: format!("{}#{i}", target.name),
            ..Default::default()
        })
        .collect();
    let mut gens: Vec<OpGen> = (0..spec.jobs)
        .map(|w| OpGen::new(spec, start, span, w))
        .collect();
    let lookahead = gens
        .iter()
        .map(|g| {
            let mut gen = g.clone();
            let next = gen.next_op();
            Lookahead { gen, next }
        })
        .collect();
    let mut backend = SimBackend {
        sim,
        lookahead,
        now: 0,
        map,
        nand_fraction: spec.pattern.compressed_fraction(),
        parents: (0..slots)
            .map(|slot| Parent {
                worker: slot / spec.qd.max(1),
                ..Parent::default()
            })
            .collect(),
        ready: Vec::with_capacity(slots as usize),
        members: names.into_iter().map(|m| (m, 0, 0)).collect(),
    };
    let ctl = Control::new(spec.ramp_ns, spec.stop.time_ns, max_ios(spec))
        .with_stop(opts.stop)
        .with_stonewall(opts.stonewall);
    if let Some(hook) = opts.start_hook {
        (hook.0)(true).map_err(|message| EngineError::Setup {
            message,
            wrote: false,
            cleanup: Vec::new(),
        })?;
    }
    let mut rec = Recorder::default();
    // Simulated results carry no wall-clock timestamp, so the same spec, drive and seed give a
    // byte-identical result.
    let started = 0;
    let data = DataOpts {
        pattern: spec.pattern,
        pattern_seed: worker_seed(spec.seed, 0),
        verify: None,
        known: None,
    };
    let out = run_loop(&mut backend, &mut gens, spec.qd, data, &ctl, &mut rec, None);
    let mut details = vec![
        ("state".to_string(), target.state.to_string()),
        (
            "interface".to_string(),
            format!("{:?}", target.drive.host.interface),
        ),
    ];
    if let Some(m) = &backend.map {
        details.push(("drives".into(), target.drives.to_string()));
        details.push(("stripe".into(), format_size(m.chunk())));
    }
    let desc = TargetDesc {
        kind: if target.drives > 1 {
            "sim-raid0"
        } else {
            "sim"
        }
        .into(),
        name: target.name.clone(),
        size,
        engine: "sim".into(),
        direct: false,
        offset: start,
        span,
        details,
    };
    let mut result = build_result(spec, desc, &rec, out, started, CpuUsage::default());
    if target.drives > 1 {
        result.members = backend.member_stats();
    }
    // Counters are plain numbers: serialising them cannot fail.
    result.device = serde_json::to_value(backend.sim.counters()).ok();
    Ok((result, rec))
}
