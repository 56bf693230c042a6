//! Simulated targets: one simulated SSD, or a RAID 0 array of them addressed through the md raid0
//! layout, driven by the same closed loop as real targets but on the simulator's virtual clock.

use crate::backend::{Backend, Cqe};
use crate::engine_loop::{
    merge_outcomes, run_streams, Control, DataOpts, LoopOutcome, Stream, Unit,
};
use crate::iolog::{IologTarget, PartWriter};
use crate::real::{build_result, check_budget, max_ios};
use crate::replay::load_trace;
use crate::{EngineError, Invalid, StartHook};
use ssdlab_layout::StripeMap;
use ssdlab_ssdsim::{
    AdapterConfig, DriveConfig, HostCmd, Precondition, Simulator, StateError, StateExtra, Touch,
};
use ssdlab_stats::{
    CpuUsage, EngineKind, MemberStats, Recorder, RunResult, TargetDesc, TargetKind,
};
use ssdlab_workload::gen::worker_seed;
use ssdlab_workload::{format_size, Field, Op, OpKind, OpList, OpSource, WorkloadSpec};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// The stream owning the slot (fixed).
    stream: u32,
    read: bool,
    len: u64,
    t_submit: u64,
}

/// A copy of a stream's op source running one op ahead of the engine loop's, so the simulator
/// can be told which mapping entries the next command will need while it simulates this one.
struct Lookahead {
    source: OpSource,
    next: Option<Op>,
}

struct SimBackend {
    sim: Simulator,
    /// One per stream; a performance hint only.
    lookahead: Vec<Lookahead>,
    now: u64,
    map: Option<StripeMap>,
    /// Compressed size / written size of each stream's data (its unit's pattern).
    nand_fraction: Vec<f32>,
    parents: Vec<Parent>,
    ready: Vec<Cqe>,
    /// Completions taken from the simulator but not delivered yet, because a timed wait ended
    /// before them: (time, order taken, tag). Empty in closed-loop runs.
    held: BinaryHeap<Reverse<(u64, u64, u64)>>,
    held_seq: u64,
    members: Vec<(MemberStats, u32, u64)>,
}

impl SimBackend {
    /// The simulator's command for (part of) an op of stream `stream` (an NVMe drive puts each
    /// stream on its own I/O queue, as blk-mq does with each CPU's submissions).
    fn cmd(kind: OpKind, offset: u64, len: u64, nand_fraction: f32, stream: u32) -> HostCmd {
        HostCmd {
            kind,
            offset,
            len,
            nand_fraction,
            queue: stream as u16,
        }
    }

    /// `op` is being issued from `slot`: if it is the op the stream's lookahead expected, step
    /// the lookahead and have the simulator prefetch what the stream's next op will touch.
    #[inline]
    fn look_ahead(&mut self, slot: u32, op: &Op) {
        let stream = self.parents[slot as usize].stream as usize;
        let nf = self.nand_fraction[stream];
        let Some(la) = self.lookahead.get_mut(stream) else {
            return;
        };
        if la.next != Some(*op) {
            return;
        }
        la.next = la.source.next().map(|n| n.op);
        let Some(next) = la.next else {
            return;
        };
        match &self.map {
            None => self.sim.prefetch(
                0,
                &Self::cmd(next.kind, next.offset, next.len, nf, stream as u32),
            ),
            Some(map) => {
                if let Some(p) = map.split(next.offset, next.len).next() {
                    let cmd = Self::cmd(next.kind, p.member_offset, p.len, nf, stream as u32);
                    self.sim.prefetch(p.member, &cmd);
                }
            }
        }
    }

    /// The earliest completion of those held back and the simulator's next.
    #[inline]
    fn next_completion(&mut self) -> Option<(u64, u64)> {
        if self.held.is_empty() {
            return self.sim.next_completion();
        }
        self.hold_next();
        self.held.pop().map(|Reverse((t, _, tag))| (tag, t))
    }

    /// Moves the simulator's next completion into `held`.
    fn hold_next(&mut self) {
        if let Some((tag, t)) = self.sim.next_completion() {
            self.held_seq += 1;
            self.held.push(Reverse((t, self.held_seq, tag)));
        }
    }

    /// Accounts one completed piece at virtual time `t`.
    fn complete(&mut self, tag: u64, t: u64) {
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
                started_ns: Cqe::WITH_BATCH,
            });
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
        let stream = self.parents[slot as usize].stream;
        let nand_fraction = self.nand_fraction[stream as usize];
        let mut n = 0;
        match &self.map {
            None => {
                let cmd = Self::cmd(op.kind, op.offset, op.len, nand_fraction, stream);
                self.sim.submit(self.now, (slot as u64) << 32, 0, cmd);
                n = 1;
            }
            Some(map) => {
                for p in map.split(op.offset, op.len) {
                    let cmd = Self::cmd(op.kind, p.member_offset, p.len, nand_fraction, stream);
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
            let Some((tag, t)) = self.next_completion() else {
                return Err(io::Error::other(
                    "simulator has no pending completion while I/O is outstanding",
                ));
            };
            self.complete(tag, t);
        }
        Ok(())
    }

    fn wait_until(&mut self, deadline_ns: u64, _inflight: u32) -> io::Result<()> {
        // Deliver what completes up to the deadline; what completes later is held back and the
        // clock moves to the deadline. (The simulator has then already worked up to that
        // completion: a drive's pending partial pages due before it were programmed, a small
        // look into the future for commands issued at the deadline.)
        while self.ready.is_empty() {
            self.hold_next();
            match self.held.peek() {
                Some(Reverse((t, _, _))) if *t <= deadline_ns => {
                    let Reverse((t, _, tag)) = self.held.pop().expect("peeked");
                    self.complete(tag, t);
                }
                _ => {
                    self.now = self.now.max(deadline_ns);
                    return Ok(());
                }
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

    /// Each command reaches the simulated drive as it is issued, one per submission (fio's
    /// default `iodepth_batch`; a larger `iodepth_batch_submit` has no simulated counterpart),
    /// so fio's `iodepth_level` counts each at its own depth.
    fn submit_batch(&self) -> u32 {
        1
    }

    fn mark_measurement_start(&mut self) {
        // device counters and utilisation cover the measured window only
        self.sim.reset_counters();
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

/// What [`SimSession::write_untimed`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UntimedWrite {
    pub bytes: u64,
    /// Stopped from outside ([`SimOptions::stop`]) before the end.
    pub interrupted: bool,
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
    /// Also return each worker's own result (fio without `group_reporting`).
    pub per_worker: bool,
    /// Keep time-series logs (per job and window, on virtual time) in the result.
    pub log: Option<ssdlab_stats::LogConfig>,
    /// Report what the run measured so far here (virtual time; for a status line).
    pub progress: Option<&'a crate::Progress>,
    /// Told `true` before the drives are built and preconditioned (a step that does not
    /// poll `stop`) and `false` after, so the caller can end at once on a signal meanwhile.
    pub building: Option<fn(bool)>,
}

/// A note when a noticeable share (1 % or more) of the data read in the measured window had
/// never been written: a drive answers such reads without touching the flash, so they measure
/// the controller and the link, not the NAND.
fn unwritten_read_note(counters: &[ssdlab_ssdsim::DriveCounters]) -> Option<String> {
    let read: u64 = counters.iter().map(|c| c.host_read_bytes).sum();
    let unwritten: u64 = counters.iter().map(|c| c.unwritten_read_bytes).sum();
    if read == 0 || unwritten * 100 < read {
        return None;
    }
    Some(format!(
        "{:.0} % of the data read had never been written (or was trimmed) on the simulated drive, \
         which answers such reads without reading the flash, as a real drive does: these reads \
         measure the controller and the link, not the NAND. Write the region first or start from \
         a written drive (--state full or steady; state = \"full\" in a sweep)",
        100.0 * unwritten as f64 / read as f64
    ))
}

/// A note when 1 % or more of the lookups of a cached mapping table (a controller without DRAM
/// for its map, `controller.map_cache_bytes`) missed: each miss read a translation page from the
/// flash before the command could go on, so the result depends on how much of the drive the
/// workload spans.
fn map_cache_note(counters: &[ssdlab_ssdsim::DriveCounters], cache_bytes: u64) -> Option<String> {
    let lookups: u64 = counters.iter().map(|c| c.map_lookups).sum();
    let misses: u64 = counters.iter().map(|c| c.map_misses).sum();
    if lookups == 0 || misses * 100 < lookups {
        return None;
    }
    Some(format!(
        "{:.0} % of the mapping lookups missed the controller's cached map ({}, \
         controller.map_cache_bytes; this drive has no DRAM for its whole map): each miss read a \
         translation page from the flash first ({} reads, {} write-backs), so the result depends \
         on how much of the drive the workload spans",
        100.0 * misses as f64 / lookups as f64,
        if cache_bytes >= 1 << 20 {
            format!("{} MiB", cache_bytes >> 20)
        } else {
            format!("{} KiB", cache_bytes >> 10)
        },
        counters.iter().map(|c| c.map_reads).sum::<u64>(),
        counters.iter().map(|c| c.map_writes).sum::<u64>(),
    ))
}

/// Bytes of memory the simulator of `target` takes once built and brought into its state
/// (every drive's tables and the event queue), before a run writes anything.
pub fn sim_memory_estimate(target: &SimTarget) -> u64 {
    Simulator::memory_estimate_touch(&target.drive, target.drives, Touch::of_state(target.state))
}

/// Bytes of memory the simulator of `target` takes by the end of a run of `spec` (every
/// drive's tables for what the run can write, see [`sim_touch`], and the event queue).
pub fn sim_run_memory_estimate(spec: &WorkloadSpec, target: &SimTarget) -> u64 {
    Simulator::memory_estimate_touch(&target.drive, target.drives, sim_touch(spec, target))
}

/// What `spec` can write on each drive of `target` (with the drive's state): the simulated
/// drives' mapping tables are sparse, so their memory follows the logical region written and
/// the bytes written, not the capacity. A run that writes nothing (reads, trims) adds nothing;
/// a written region counts per drive (an array's share of it, plus two stripes); the bytes
/// written are bounded by the stop condition (bytes, I/Os × block size) or by the time
/// (ramp included) at the drive's host link rate. A drive preconditioned full or steady counts
/// whole.
pub fn sim_touch(spec: &WorkloadSpec, target: &SimTarget) -> Touch {
    let base = Touch::of_state(target.state);
    if base == Touch::ALL || !spec.writes() {
        return base;
    }
    let Some(region) = sim_region(spec, target, None) else {
        return Touch::ALL;
    };
    let mut written = u64::MAX;
    if let Some(b) = spec.stop.bytes {
        written = written.min(b);
    }
    if let Some(n) = spec.stop.ios {
        written = written.min(n.saturating_mul(spec.bs));
    }
    if let Some(t) = spec.stop.time_ns {
        let ns = t.saturating_add(spec.ramp_ns) as u128;
        let rate = target.drive.host.link_rate() as u128;
        written = written.min(u64::try_from(ns * rate / 1_000_000_000).unwrap_or(u64::MAX));
    }
    base.plus(Touch {
        logical_bytes: region,
        written_bytes: written,
    })
}

/// The logical region of one drive of `target` that `spec` (or `span`, from its offset)
/// reaches, bytes; `None` when the region is not valid (the geometry check reports why).
fn sim_region(spec: &WorkloadSpec, target: &SimTarget, span: Option<u64>) -> Option<u64> {
    let drive_size = target.drive.user_capacity();
    let size = drive_size.saturating_mul(target.drives as u64);
    let (start, region) = spec.region_for(size, "the simulated drive").ok()?;
    let region = span.map_or(region, |s| s.min(size - start));
    Some(if target.drives > 1 {
        let stripe = target.stripe.unwrap_or(0);
        (region.div_ceil(target.drives as u64) + 2 * stripe).min(drive_size)
    } else {
        region
    })
}

/// [`sim_touch`] for a run that first preconditions with `steps` and then repeats `spec` in
/// rounds until steady (`steady`: up to `precondition::MAX_ROUNDS` rounds).
pub fn sim_touch_with(
    spec: &WorkloadSpec,
    target: &SimTarget,
    steps: &[crate::PreStep],
    steady: bool,
) -> Touch {
    let mut t = sim_touch(spec, target);
    if steady && t != Touch::ALL {
        let rounds = crate::precondition::MAX_ROUNDS as u64;
        t.written_bytes = t.written_bytes.saturating_mul(rounds);
    }
    for step in steps {
        let Some(region) = sim_region(spec, target, step.span) else {
            return Touch::ALL;
        };
        let written = (region as f64 * step.passes.ceil()) as u64;
        t = t.plus(Touch {
            logical_bytes: region,
            written_bytes: written.saturating_mul(target.drives as u64),
        });
    }
    t
}

/// The memory a run of `target` needs: every drive's tables for what the run writes
/// (`touch`), the engine's per-slot state for `slots` outstanding I/Os and a fixed margin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimMemoryNeed {
    pub bytes: u64,
    /// What it is for, in words ("1 simulated drive of X (mapping tables for …)").
    pub what: String,
}

/// See [`SimMemoryNeed`].
pub fn sim_memory_need(target: &SimTarget, slots: u64, touch: Touch) -> SimMemoryNeed {
    let drives = format!(
        "{} simulated drive{} of {}",
        target.drives,
        if target.drives == 1 { "" } else { "s" },
        target.name
    );
    let tables = if touch == Touch::ALL {
        let why = match target.state {
            Precondition::Full | Precondition::Steady => {
                format!("the drive state {} writes it whole", target.state)
            }
            Precondition::Fresh => "the run can write all of it".to_string(),
        };
        format!(
            "mapping tables for the whole {} drive, as {why}",
            format_size(target.drive.user_capacity())
        )
    } else if touch.written_bytes == 0 {
        "block state; nothing written, so no mapping tables yet".to_string()
    } else {
        format!(
            "block state and mapping tables for a {} region and up to {} written per drive",
            format_size(touch.logical_bytes.min(target.drive.user_capacity())),
            format_size(touch.written_bytes)
        )
    };
    let what = if slots > 0 {
        format!("{drives} ({tables}) and {slots} outstanding I/Os")
    } else {
        format!("{drives} ({tables})")
    };
    let bytes = Simulator::memory_estimate_touch(&target.drive, target.drives, touch)
        .saturating_add(slots.saturating_mul(SIM_SLOT_BYTES))
        .saturating_add(crate::real::MEMORY_MARGIN);
    SimMemoryNeed { bytes, what }
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

/// Checks a simulated target (drive config, drive count, memory for the drives in their state)
/// before anything is built.
pub fn check_sim_target(target: &SimTarget, max_memory: Option<u64>) -> Result<(), EngineError> {
    check_sim_memory(target, 0, Touch::of_state(target.state), max_memory)
}

/// Memory per outstanding simulated I/O in the engine and the simulator: slot state, the parent
/// of its pieces, event-queue entries, completions.
const SIM_SLOT_BYTES: u64 = 256;

/// Checks a simulated target and the run's memory ([`sim_memory_need`]: every drive's tables
/// for what the run writes, the engine's per-slot state for `slots` outstanding I/Os (`--qd` ×
/// `--jobs` of every job), and a fixed margin for the rest).
fn check_sim_memory(
    target: &SimTarget,
    slots: u64,
    touch: Touch,
    max_memory: Option<u64>,
) -> Result<(), EngineError> {
    check_sim_memory_held(target, slots, touch, 0, max_memory)
}

/// [`check_sim_memory`] for drives whose mapping tables already hold `held` bytes (a saved
/// state loaded) beyond what `touch` counts.
fn check_sim_memory_held(
    target: &SimTarget,
    slots: u64,
    touch: Touch,
    held: u64,
    max_memory: Option<u64>,
) -> Result<(), EngineError> {
    target.drive.validate()?;
    if target.drives == 0 {
        return Err(Invalid::NoDrives.into());
    }
    if target.drives > 1 && target.stripe.is_none() {
        return Err(Invalid::SimArrayNeedsStripe.into());
    }
    let need = sim_memory_need(target, slots, touch);
    let what = if held > 0 {
        format!(
            "{} and the loaded state's mapping tables ({})",
            need.what,
            format_size(held)
        )
    } else {
        need.what
    };
    check_budget(&what, need.bytes.saturating_add(held), max_memory)?;
    Ok(())
}

/// More drives than one simulator holds (`ssdlab_ssdsim`'s limit).
const MAX_SIM_DRIVES: usize = 1 << 13;

/// Checks the memory a built session needs for more work: the user's `--max-memory` against the
/// whole need, the system's limit (which already counts the drives built, as mapped memory)
/// against what the work adds to what the session was budgeted for (`old`).
fn check_sim_memory_more(
    target: &SimTarget,
    slots: u64,
    old: Touch,
    new: Touch,
    held: u64,
    max_memory: Option<u64>,
) -> Result<(), EngineError> {
    let need = sim_memory_need(target, slots, new);
    let total = need.bytes.saturating_add(held);
    if let Some(user) = max_memory {
        if total > user {
            return Err(Invalid::Memory {
                what: need.what,
                need: format_size(total),
                limit: format_size(user),
                bound: "--max-memory".into(),
            }
            .into());
        }
    }
    let built = sim_memory_need(target, 0, old).bytes;
    check_budget(
        &need.what,
        total.saturating_sub(built.saturating_add(held)),
        None,
    )?;
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
pub(crate) fn sim_geometry(
    spec: &WorkloadSpec,
    target: &SimTarget,
) -> Result<(Option<StripeMap>, u64, u64, u64), EngineError> {
    spec.validate()?;
    if spec.verify {
        return Err(Invalid::VerifyOnSim.into());
    }
    // An array of a billion drives is refused (for its memory) before its stripe map is built;
    // the memory of an ordinary target is checked by the callers, once, before building it.
    if target.drives > MAX_SIM_DRIVES {
        check_sim_memory(target, spec.total_qd(), sim_touch(spec, target), None)?;
    }
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
    // every block size (varying ones too), then the alignment and the start
    let sizes = spec.block_size_values().into_iter().map(|b| (Field::Bs, b));
    for (field, v) in sizes.chain([(Field::Align, spec.align), (Field::Offset, start)]) {
        if v % block != 0 {
            return Err(Invalid::SimUnaligned {
                field,
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
    check_sim_run_touch(spec, target, sim_touch(spec, target), max_memory)
}

/// [`check_sim_run`] for a run that writes what `touch` says (e.g. [`sim_touch_with`] when it
/// preconditions first).
pub fn check_sim_run_touch(
    spec: &WorkloadSpec,
    target: &SimTarget,
    touch: Touch,
    max_memory: Option<u64>,
) -> Result<(), EngineError> {
    check_sim_memory(target, spec.total_qd(), touch, max_memory)?;
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
) -> Result<(RunResult, Recorder), EngineError> {
    check_sim_memory(
        target,
        spec.total_qd(),
        sim_touch(spec, target),
        opts.max_memory,
    )?;
    sim_geometry(spec, target)?;
    let mut session = match prepared {
        Some(sim) => SimSession::from_prepared(target, sim),
        None => {
            if let Some(f) = opts.building {
                f(true);
            }
            let s = SimSession::new(target, spec.seed, opts.max_memory);
            if let Some(f) = opts.building {
                f(false);
            }
            s?
        }
    };
    let mut out = session.run(&[SimJob::new(spec)], opts)?;
    let out = out.remove(0);
    Ok((out.result, out.recorder))
}

/// One job of a simulated group run.
#[derive(Debug, Clone)]
pub struct SimJob<'a> {
    pub spec: &'a WorkloadSpec,
    /// fio's `write_iolog`: record every I/O the job issues.
    pub iolog: Option<IologTarget>,
    /// The job's time-series logs, when they are not [`SimOptions::log`] (jobs of one group
    /// with logs of their own: fio's `write_bw_log` … per job).
    pub log: Option<ssdlab_stats::LogConfig>,
    /// fio's `steadystate` with `group_reporting`: the job is a member of a reporting group
    /// checked together (its criterion is the job's `steady`).
    pub steady_group: Option<crate::SteadyMember<'a>>,
    /// Stops the job without marking it interrupted (fio's `exitall`: another job ended), beside
    /// [`SimOptions::stonewall`].
    pub stonewall: Option<&'a AtomicBool>,
    /// Called once when the job's first unit stops (fio's `exitall`).
    pub on_end: Option<crate::OnEnd<'a>>,
    /// fio's flow control: the job's clones are members of this flow.
    pub flow: Option<crate::FlowShare<'a>>,
}

impl<'a> SimJob<'a> {
    /// A job of `spec` alone: no iolog, logs of its own, steady-state group or exitall.
    pub fn new(spec: &'a WorkloadSpec) -> Self {
        SimJob {
            spec,
            iolog: None,
            log: None,
            steady_group: None,
            stonewall: None,
            on_end: None,
            flow: None,
        }
    }
}

/// What one job of a simulated group run measured.
#[derive(Debug, Clone)]
pub struct SimOutput {
    /// All the job's workers together.
    pub result: RunResult,
    /// Each worker on its own (only with [`SimOptions::per_worker`]).
    pub workers: Vec<RunResult>,
    /// What `result` was built from (see [`crate::RunOutput::recorder`]).
    pub recorder: Recorder,
    pub outcome: LoopOutcome,
    pub worker_recorders: Vec<Recorder>,
    /// Why the job's `write_iolog` could not be kept (see [`crate::RunOutput::iolog_error`]).
    pub iolog_error: Option<String>,
}

/// A simulated drive or array that keeps its state and its virtual clock from one group of jobs
/// to the next (fio's `stonewall`: a later group sees what an earlier one wrote). A clone is an
/// independent copy of the drives and the clock (to try something without changing them).
#[derive(Clone)]
pub struct SimSession {
    target: SimTarget,
    sim: Option<Simulator>,
    /// Virtual time reached so far.
    now: u64,
    /// The drives came from a saved state ([`SimSession::load_state`]), not from
    /// `target.state`.
    loaded: bool,
    /// What the runs so far can have written (for the memory check of the next).
    touch: Touch,
    /// Bytes the mapping tables of a loaded state held when loaded.
    held: u64,
}

/// What a saved state of `target` must match beyond the drives (the array's stripe).
fn state_facts(target: &SimTarget) -> Vec<(String, String)> {
    match (target.drives > 1, target.stripe) {
        (true, Some(s)) => vec![("stripe".into(), format_size(s))],
        _ => Vec::new(),
    }
}

impl SimSession {
    /// Builds and preconditions the drives (seeded with `seed`).
    pub fn new(
        target: &SimTarget,
        seed: u64,
        max_memory: Option<u64>,
    ) -> Result<SimSession, EngineError> {
        Ok(SimSession {
            target: target.clone(),
            sim: Some(build_sim(target, seed, max_memory)?),
            now: 0,
            loaded: false,
            touch: Touch::of_state(target.state),
            held: 0,
        })
    }

    /// A session continuing from a state written by [`SimSession::save_state`] for the same
    /// target (drive configuration, drive count, stripe, adapter): the drives as they were and
    /// the virtual clock where it stood. A state of another target is refused naming what
    /// differs; a file that is not a state, or corrupt, or truncated, is an error. `target.state`
    /// is not used.
    pub fn load_state<R: std::io::Read>(
        target: &SimTarget,
        r: R,
        max_memory: Option<u64>,
    ) -> Result<SimSession, EngineError> {
        check_sim_target(target, max_memory)?;
        let (sim, now) = Simulator::load_state(
            r,
            &target.drive,
            target.drives,
            &target.adapter,
            false,
            &state_facts(target),
        )
        .map_err(|e| match e {
            StateError::Sim(ssdlab_ssdsim::SimError::Config(c)) => EngineError::Sim(c),
            StateError::Sim(ssdlab_ssdsim::SimError::Alloc(a)) => Invalid::Memory {
                what: format!("{} simulated drive(s) of {}", target.drives, target.name),
                need: format_size(sim_memory_estimate(target)),
                limit: format!("allocation failed: {a}"),
                bound: "the system".into(),
            }
            .into(),
            e => Invalid::State(e.to_string()).into(),
        })?;
        let held = sim.table_bytes();
        Ok(SimSession {
            target: target.clone(),
            sim: Some(sim),
            now,
            loaded: true,
            touch: Touch::NONE,
            held,
        })
    }

    /// Writes the drives' complete state and the virtual clock to `w` (see
    /// [`Simulator::save_state`]); [`SimSession::load_state`] continues from it exactly as this
    /// session would.
    pub fn save_state<W: std::io::Write>(&self, w: W) -> std::io::Result<()> {
        let sim = self
            .sim
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the simulated drives are gone"))?;
        sim.save_state(
            w,
            &self.target.drive,
            &StateExtra {
                facts: state_facts(&self.target),
                clock: self.now,
            },
        )
    }

    /// A session on a simulator already built for `target`.
    pub fn from_prepared(target: &SimTarget, sim: Simulator) -> SimSession {
        SimSession {
            target: target.clone(),
            sim: Some(sim),
            now: 0,
            loaded: false,
            touch: Touch::of_state(target.state),
            held: 0,
        }
    }

    /// Virtual time reached so far, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Runs `jobs` together on the drives (one event queue; job `j`'s workers own consecutive
    /// slots), from where the previous group left the drives and the clock. Every job is checked
    /// (workload, geometry, trace) before any runs.
    pub fn run(
        &mut self,
        jobs: &[SimJob<'_>],
        opts: &SimOptions<'_>,
    ) -> Result<Vec<SimOutput>, EngineError> {
        self.run_with(jobs, &[], opts)
    }

    /// Runs `spec` with its ops taken from `ops` (made in memory, e.g. by an aging workload;
    /// offsets from the start of the spec's region) instead of generated: one worker issues
    /// them in order at `spec.qd` and the run ends with the list (or the spec's stop condition).
    pub fn run_ops(
        &mut self,
        spec: &WorkloadSpec,
        ops: Arc<[Op]>,
        opts: &SimOptions<'_>,
    ) -> Result<SimOutput, EngineError> {
        if spec.jobs != 1 {
            return Err(
                Invalid::Output("a list of ops is issued by one worker (jobs = 1)".into()).into(),
            );
        }
        let job = SimJob::new(spec);
        Ok(self.run_with(&[job], &[Some(ops)], opts)?.remove(0))
    }

    /// Writes `spec`'s ops (its generated writes, as its first worker would issue them, until
    /// its byte limit or one pass over its region) through the drives' FTLs without timing:
    /// the same mapping, allocation and GC as a timed run, without the clock, the events or
    /// the per-request host path — preconditioning at the FTL's speed. Only a session on which
    /// nothing has run yet (built, not loaded) can be written this way: `Ok(None)` otherwise,
    /// and the caller runs the writes on the clock instead.
    pub fn write_untimed(
        &mut self,
        spec: &WorkloadSpec,
        opts: &SimOptions<'_>,
    ) -> Result<Option<UntimedWrite>, EngineError> {
        let target = self.target.clone();
        let (map, start, span, _) = sim_geometry(spec, &target)?;
        if self.loaded || self.now != 0 {
            return Ok(None);
        }
        let touch = self.touch.plus(sim_touch(spec, &target));
        check_sim_memory_more(
            &target,
            spec.total_qd(),
            self.touch,
            touch,
            self.held,
            opts.max_memory,
        )?;
        let Some(sim) = self.sim.as_mut() else {
            return Err(Invalid::NoDrives.into());
        };
        let Some(mut fill) = sim.untimed_fill() else {
            return Ok(None);
        };
        self.touch = touch;
        let limit = spec.stop.bytes.unwrap_or(span);
        let mut source = OpSource::for_worker(spec, None, start, span, 0);
        let mut out = UntimedWrite::default();
        // The ops are made a few ahead of their writes, so that each write's mapping entry
        // can be fetched into the CPU cache while earlier ones are placed.
        const AHEAD: usize = 16;
        let mut ahead = std::collections::VecDeque::with_capacity(AHEAD);
        let mut n = 0u32;
        while out.bytes < limit {
            n = n.wrapping_add(1);
            if n.is_multiple_of(4096) && opts.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                out.interrupted = true;
                break;
            }
            while ahead.len() < AHEAD {
                let Some(next) = source.next() else { break };
                let op = next.op;
                match &map {
                    None => fill.prefetch(0, op.offset),
                    Some(m) => {
                        if let Some(p) = m.split(op.offset, op.len).next() {
                            fill.prefetch(p.member, p.member_offset);
                        }
                    }
                }
                ahead.push_back(op);
            }
            let Some(op) = ahead.pop_front() else { break };
            match &map {
                None => fill.write(0, op.offset, op.len),
                Some(m) => {
                    for p in m.split(op.offset, op.len) {
                        fill.write(p.member, p.member_offset, p.len);
                    }
                }
            }
            out.bytes += op.len;
        }
        Ok(Some(out))
    }

    /// Lets the drives work without host commands until virtual time `t_ns` (background GC,
    /// buffered programs), as a machine left idle does; the clock moves to `t_ns` (or stays
    /// where it is when that is later).
    pub fn idle_until(&mut self, t_ns: u64) {
        if let Some(sim) = self.sim.as_mut() {
            sim.run_until(t_ns.max(self.now));
            self.now = self.now.max(t_ns);
        }
    }

    /// The drives' counters over the window since the last run's measurement started, up to
    /// the current time (so idle time after the run is included).
    pub fn counters(&self) -> Vec<ssdlab_ssdsim::DriveCounters> {
        self.sim.as_ref().map(|s| s.counters()).unwrap_or_default()
    }

    fn run_with(
        &mut self,
        jobs: &[SimJob<'_>],
        lists: &[Option<Arc<[Op]>>],
        opts: &SimOptions<'_>,
    ) -> Result<Vec<SimOutput>, EngineError> {
        let target = self.target.clone();
        let what = if target.drives > 1 {
            format!("the simulated array ({} × {})", target.drives, target.name)
        } else {
            format!("the simulated drive {}", target.name)
        };
        // Memory for every job's outstanding I/Os together and for what they all write (on
        // top of what earlier groups wrote), before anything is built.
        let slots: u64 = jobs.iter().map(|j| j.spec.total_qd()).sum();
        let touch = jobs
            .iter()
            .fold(self.touch, |t, j| t.plus(sim_touch(j.spec, &target)));
        check_sim_memory_more(
            &target,
            slots,
            self.touch,
            touch,
            self.held,
            opts.max_memory,
        )?;
        self.touch = touch;
        let mut geo = Vec::with_capacity(jobs.len());
        let mut map = None;
        let mut size = 0;
        for (j, job) in jobs.iter().enumerate() {
            let (m, start, span, sz) = sim_geometry(job.spec, &target)?;
            if let Some(Some(ops)) = lists.get(j) {
                if let Some(o) = ops.iter().find(|o| o.offset.saturating_add(o.len) > span) {
                    return Err(Invalid::Output(format!(
                        "an op at {} of {} ends beyond the region of {} on {what}",
                        o.offset,
                        format_size(o.len),
                        format_size(span)
                    ))
                    .into());
                }
            }
            let trace = load_trace(job.spec, span, &what)?;
            map = m;
            size = sz;
            geo.push((start, span, trace));
        }
        let Some(sim) = self.sim.take() else {
            return Err(Invalid::NoDrives.into());
        };
        let mut streams = Vec::new();
        let mut nand = Vec::new();
        for (j, (job, (start, span, trace))) in jobs.iter().zip(&geo).enumerate() {
            for w in 0..job.spec.jobs {
                let source = match lists.get(j) {
                    Some(Some(ops)) => OpSource::List(OpList::new(Arc::clone(ops), *start)),
                    _ => OpSource::for_worker(job.spec, trace.as_ref(), *start, *span, w),
                };
                streams.push(Stream {
                    source,
                    qd: job.spec.qd,
                    unit: j,
                    rec: if opts.per_worker { streams.len() } else { j },
                });
                nand.push(job.spec.pattern.compressed_fraction());
            }
        }
        let slots: u32 = streams.iter().map(|s| s.qd).sum();
        let mut parents = Vec::with_capacity(slots as usize);
        for (i, st) in streams.iter().enumerate() {
            parents.extend(std::iter::repeat_n(
                Parent {
                    stream: i as u32,
                    ..Parent::default()
                },
                st.qd as usize,
            ));
        }
        let lookahead = streams
            .iter()
            .map(|st| {
                let mut source = st.source.clone();
                let next = source.next().map(|n| n.op);
                Lookahead { source, next }
            })
            .collect();
        let names: Vec<MemberStats> = (0..target.drives)
            .map(|i| MemberStats {
                name: format!("{}#{i}", target.name),
                ..Default::default()
            })
            .collect();
        let mut backend = SimBackend {
            sim,
            lookahead,
            now: self.now,
            map,
            nand_fraction: nand,
            parents,
            ready: Vec::with_capacity(slots as usize),
            held: BinaryHeap::new(),
            held_seq: 0,
            members: names.into_iter().map(|m| (m, 0, 0)).collect(),
        };
        let ctls: Vec<Control<'_>> = jobs
            .iter()
            .map(|j| {
                Control::new(j.spec.ramp_ns, j.spec.stop.time_ns, max_ios(j.spec))
                    .with_delay(j.spec.start_delay_ns)
                    .with_steady(j.spec.steady)
                    .with_steady_group(j.steady_group)
                    .with_min_rate(j.spec.min_rate)
                    .with_latency_target(j.spec.latency_target)
                    .with_rate_offload(j.spec.rate_offload)
                    .with_completions(j.spec.completions)
                    .with_verify_fatal(j.spec.verify_fatal)
                    .with_fill_device(j.spec.fill_device)
                    .with_max_latency(j.spec.max_latency_ns)
                    .with_bytes(crate::real::byte_budget(j.spec))
                    .with_stop(opts.stop)
                    .with_progress(opts.progress)
                    .with_stonewall(j.stonewall.or(opts.stonewall))
                    .with_on_end(j.on_end)
                    .with_flow(j.flow)
            })
            .collect();
        // Everything is built and preconditioned: runs coordinated from outside wait for each
        // other here, before the first I/O.
        if let Some(hook) = opts.start_hook {
            if let Err(message) = (hook.0)(true) {
                self.sim = Some(backend.sim);
                return Err(EngineError::Setup {
                    message,
                    wrote: false,
                    cleanup: Vec::new(),
                });
            }
        }
        let units: Vec<Unit<'_>> = jobs
            .iter()
            .zip(&ctls)
            .map(|(j, ctl)| Unit {
                ctl,
                data: DataOpts {
                    pattern: j.spec.pattern,
                    pattern_seed: worker_seed(j.spec.seed, 0),
                    verify: None,
                    known: None,
                    verify_epoch: 0,
                    check_pattern: None,
                    // (the simulated drive does not deduplicate: the data is never made)
                    dedupe: None,
                    refill_after_read: j.spec.refill_after_read,
                    backlog: None,
                    unverified: None,
                    headers_required: false,
                },
            })
            .collect();
        let nrecs = if opts.per_worker {
            streams.len()
        } else {
            jobs.len()
        };
        // Logs number the workers of all jobs from 1, in order (fio's job numbers).
        let mut recs: Vec<Recorder> = Vec::with_capacity(nrecs);
        let mut first = 1u32;
        for j in jobs {
            let expected = j.spec.stop.time_ns.unwrap_or(0);
            if opts.per_worker {
                for w in 0..j.spec.jobs {
                    recs.push(Recorder::with_log(
                        j.log.or(opts.log),
                        first + w,
                        1,
                        expected,
                    ));
                }
            } else {
                recs.push(Recorder::with_log(
                    j.log.or(opts.log),
                    first,
                    j.spec.jobs,
                    expected,
                ));
            }
            first += j.spec.jobs;
        }
        let logged = jobs.iter().any(|j| j.iolog.is_some());
        let mut iolog_errors: Vec<Option<String>> = vec![None; jobs.len()];
        let outs = if logged {
            // Every job's I/O goes to its own log: one part per job.
            let mut parts: Vec<Option<PartWriter>> = Vec::new();
            for j in jobs {
                parts.push(match &j.iolog {
                    Some(t) => match t.open_part(0) {
                        Ok(p) => Some(p),
                        Err(e) => {
                            for (p, j2) in parts.into_iter().zip(jobs) {
                                if let (Some(p), Some(t2)) = (p, &j2.iolog) {
                                    t2.abandon(vec![p]);
                                }
                            }
                            self.sim = Some(backend.sim);
                            return Err(EngineError::Iolog(e.to_string()));
                        }
                    },
                    None => None,
                });
            }
            let t0 = backend.now;
            let mut rb = SimRecording {
                inner: &mut backend,
                parts: &mut parts,
                files: jobs.iter().map(|j| j.iolog.clone()).collect(),
                unit_of_stream: streams.iter().map(|s| s.unit).collect(),
                t0,
            };
            let outs = run_streams(&mut rb, &mut streams, &units, &mut recs, None);
            let t_end = (backend.now - t0) / 1000;
            // A log that cannot be kept (a full disk) loses the log, not the measurement.
            for ((p, j), err) in parts.into_iter().zip(jobs).zip(&mut iolog_errors) {
                if let (Some(p), Some(t)) = (p, &j.iolog) {
                    if let Err(e) = t.finish(vec![p], t_end) {
                        *err = Some(e.to_string());
                    }
                }
            }
            outs
        } else {
            run_streams(&mut backend, &mut streams, &units, &mut recs, None)
        };
        let mut details = vec![
            (
                "state".to_string(),
                if self.loaded {
                    "loaded".to_string()
                } else {
                    target.state.to_string()
                },
            ),
            (
                "interface".to_string(),
                format!("{:?}", target.drive.host.interface),
            ),
        ];
        if let Some(m) = &backend.map {
            details.push(("drives".into(), target.drives.to_string()));
            details.push(("stripe".into(), format_size(m.chunk())));
        }
        if target.adapter != AdapterConfig::passthrough() {
            details.push(("adapter".into(), describe_adapter(&target.adapter)));
        }
        // Simulated results carry no wall-clock timestamp, so the same spec, drive and seed
        // give a byte-identical result: the group's start on the virtual clock (0 for the
        // first) stands in.
        let started = self.now / 1_000_000;
        let members = if target.drives > 1 {
            backend.member_stats()
        } else {
            Vec::new()
        };
        let counters = backend.sim.counters();
        let notes: Vec<String> = unwritten_read_note(&counters)
            .into_iter()
            .chain(map_cache_note(
                &counters,
                target.drive.controller.map_cache_bytes,
            ))
            .collect();
        let device = counters;
        let adapter_cache = backend.sim.write_cache_counters();
        self.now = backend.now;
        self.sim = Some(backend.sim);
        let mut results = Vec::with_capacity(jobs.len());
        for (j, (job, (start, span, _))) in jobs.iter().zip(&geo).enumerate() {
            let desc = TargetDesc {
                kind: if target.drives > 1 {
                    TargetKind::SimRaid0
                } else {
                    TargetKind::Sim
                },
                name: target.name.clone(),
                size,
                engine: EngineKind::Sim,
                direct: false,
                offset: *start,
                span: *span,
                details: details.clone(),
            };
            let mine: Vec<usize> = (0..streams.len())
                .filter(|&i| streams[i].unit == j)
                .collect();
            let out: LoopOutcome =
                merge_outcomes(&mine.iter().map(|&i| outs[i]).collect::<Vec<_>>());
            let finish = |rec: &Recorder, out: LoopOutcome| {
                let mut r = build_result(
                    job.spec,
                    desc.clone(),
                    rec,
                    out,
                    started,
                    CpuUsage::default(),
                );
                r.members = members.clone();
                r.device = device.clone();
                r.adapter_cache = adapter_cache;
                r.notes = notes.clone();
                r
            };
            let (result, workers, recorder, worker_recorders) = if opts.per_worker {
                let mut merged = Recorder::default();
                for &i in &mine {
                    merged.merge(&recs[i]);
                }
                let workers = mine
                    .iter()
                    .map(|&i| {
                        let mut spec = job.spec.clone();
                        spec.jobs = 1;
                        let mut r = build_result(
                            &spec,
                            desc.clone(),
                            &recs[i],
                            outs[i],
                            0,
                            CpuUsage::default(),
                        );
                        r.members = members.clone();
                        r.device = device.clone();
                        r.adapter_cache = adapter_cache;
                        r.notes = notes.clone();
                        r
                    })
                    .collect();
                let wr = mine.iter().map(|&i| recs[i].clone()).collect();
                (finish(&merged, out), workers, merged, wr)
            } else {
                (
                    finish(&recs[j], out),
                    Vec::new(),
                    recs[j].clone(),
                    Vec::new(),
                )
            };
            let mut result = result;
            result.fio_steadystate = ctls[j].take_steady();
            results.push(SimOutput {
                result,
                workers,
                recorder,
                outcome: out,
                worker_recorders,
                iolog_error: iolog_errors[j].take(),
            });
        }
        Ok(results)
    }
}

/// The simulator backend with each job's I/O written to that job's iolog.
struct SimRecording<'a> {
    inner: &'a mut SimBackend,
    parts: &'a mut Vec<Option<PartWriter>>,
    files: Vec<Option<IologTarget>>,
    unit_of_stream: Vec<usize>,
    t0: u64,
}

impl Backend for SimRecording<'_> {
    fn now(&mut self) -> u64 {
        self.inner.now()
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.inner.buffer(slot)
    }
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.inner.push(slot, op)?;
        let stream = self.inner.parents[slot as usize].stream as usize;
        let unit = self.unit_of_stream[stream];
        if let (Some(part), Some(t)) = (&mut self.parts[unit], &self.files[unit]) {
            let (file, op) = t.locate(op);
            part.write(self.inner.now.saturating_sub(self.t0) / 1000, file, &op);
        }
        Ok(())
    }
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        self.inner.submit_wait(min, timeout_ns)
    }
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        self.inner.wait_until(deadline_ns, inflight)
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        self.inner.reap(out)
    }
    fn mark_measurement_start(&mut self) {
        self.inner.mark_measurement_start()
    }
    fn submit_batch(&self) -> u32 {
        self.inner.submit_batch()
    }
    fn member_stats(&mut self) -> Vec<MemberStats> {
        self.inner.member_stats()
    }
}

/// The host adapter's settings in words (`uplink 2.0 GB/s, TRIM passed, …`), for a result's
/// details.
fn describe_adapter(a: &AdapterConfig) -> String {
    let mut v = Vec::new();
    if let Some(u) = a.uplink_bytes_per_sec {
        v.push(format!("uplink {:.2} GB/s", u as f64 / 1e9));
    }
    if a.per_request_overhead_ns > 0 {
        v.push(format!(
            "driver {:.1} us/request",
            a.per_request_overhead_ns as f64 / 1e3
        ));
    }
    v.push(if a.trim_passthrough {
        "TRIM passed".to_string()
    } else {
        "TRIM not passed".to_string()
    });
    if let Some(c) = &a.write_cache {
        v.push(format!("write-back cache {}", format_size(c.bytes)));
    }
    v.join(", ")
}
