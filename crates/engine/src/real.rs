//! Real targets: regular files, block devices and the null target, driven by io_uring or by the
//! portable sync backend, one thread per worker.

use crate::backend::{Backend, Cqe};
use crate::engine_loop::{run_loop, Control, DataOpts, LoopOutcome};
use crate::fault::{FaultBackend, FaultPlan};
use crate::stripe::StripeAdapter;
use crate::{EngineError, Invalid, StartHook};
use ssdlab_io::memory::{self, MemoryLimit};
use ssdlab_io::{cpu, ring, sync, Dir, SyncBackend, UringBackend};
use ssdlab_stats::{CpuUsage, MemberStats, Recorder, RunResult, TargetDesc};
use ssdlab_target::written::{self, WriteLog, WrittenMap};
use ssdlab_target::{open_target, Plan, PlanOptions, TargetKind};
use ssdlab_workload::gen::worker_seed;
use ssdlab_workload::{format_size, Op, OpGen, OpKind, WorkloadSpec};
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use ssdlab_target::{Member, RealTarget};

/// Which I/O engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// io_uring when the kernel allows it, otherwise sync (with a note).
    Auto,
    IoUring,
    Sync,
}

/// Options of a real run that are not part of the workload.
#[derive(Debug, Clone)]
pub struct RealOptions<'a> {
    pub engine: EngineChoice,
    /// O_DIRECT (bypass the page cache). Default true.
    pub direct: bool,
    /// Allow writes to a block device (still refused when it holds data or is in use).
    pub allow_destroy: bool,
    pub continue_on_error: bool,
    /// Size of the null target.
    pub null_size: u64,
    /// Called with diagnostics (file layout, engine fallback) as they happen; the CLI prints them
    /// to stderr.
    pub on_note: fn(&str),
    /// Inject faults (tests): see [`FaultPlan`].
    pub fault: Option<FaultPlan>,
    /// io_uring: submit as soon as this many I/Os are queued (fio's `iodepth_batch_submit`);
    /// 0 = one system call per batch of refills. Default 1.
    pub submit_batch: u32,
    /// Raised from outside (Ctrl-C, SIGTERM): a layout in progress stops and is undone, a run
    /// drains and reports what it measured, marked interrupted.
    pub stop: Option<&'a AtomicBool>,
    /// Refuse runs whose memory estimate is above this (besides what the system has).
    pub max_memory: Option<u64>,
    /// Where the written-map of `--verify` runs lives (default: under the state directory,
    /// named after the target's identity).
    pub verify_map: Option<&'a std::path::Path>,
    /// Called when every worker is ready, before the measured phase (see [`StartHook`]).
    pub start_hook: Option<StartHook<'a>>,
    /// Raised from outside to stop the run without marking it interrupted (stonewalling).
    pub stonewall: Option<&'a AtomicBool>,
}

impl Default for RealOptions<'_> {
    fn default() -> Self {
        RealOptions {
            engine: EngineChoice::Auto,
            direct: true,
            allow_destroy: false,
            continue_on_error: false,
            null_size: 1 << 40,
            on_note: |_| {},
            fault: None,
            submit_batch: 1,
            stop: None,
            max_memory: None,
            verify_map: None,
            start_hook: None,
            stonewall: None,
        }
    }
}

/// A finished run plus diagnostics for stderr.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub result: RunResult,
    pub notes: Vec<String>,
    /// The merged recorder the result was built from (histograms, series), for merging with
    /// other runs' recorders exactly.
    pub recorder: Recorder,
}

fn now_ns(origin: &Instant) -> u64 {
    origin.elapsed().as_nanos() as u64
}

/// The null target: every pushed op completes immediately with its full length.
struct NullBackend {
    origin: Instant,
    pending: Vec<(u32, u64)>,
}

impl Backend for NullBackend {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }
    #[inline]
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.pending.push((slot, op.len));
        Ok(())
    }
    fn submit_wait(&mut self, _min: usize, _timeout_ns: u64) -> io::Result<()> {
        Ok(())
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = now_ns(&self.origin);
        out.extend(self.pending.drain(..).map(|(slot, len)| Cqe {
            slot,
            res: len as i64,
            t_ns: t,
        }));
    }
}

fn dir(kind: OpKind) -> Dir {
    match kind {
        OpKind::Read => Dir::Read,
        _ => Dir::Write,
    }
}

struct UringAdapter {
    origin: Instant,
    ring: UringBackend,
}

impl Backend for UringAdapter {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.ring.buffer(slot)
    }
    #[inline]
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.ring.push(slot, dir(op.kind), op.offset, op.len as u32)
    }
    fn submit_wait(&mut self, min: usize, _timeout_ns: u64) -> io::Result<()> {
        // no timeout needed: the ring's wait always ends with a completion
        self.ring.submit_and_wait(min)
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = now_ns(&self.origin);
        self.ring.reap(|slot, _tag, res| {
            out.push(Cqe {
                slot,
                res: res as i64,
                t_ns: t,
            })
        });
    }
}

struct SyncAdapter {
    origin: Instant,
    pool: SyncBackend,
}

impl Backend for SyncAdapter {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.pool.buffer(slot)
    }
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.pool.push(slot, dir(op.kind), op.offset, op.len as u32)
    }
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        self.pool.wait(min, Duration::from_nanos(timeout_ns));
        Ok(())
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let origin = self.origin;
        self.pool.reap(|slot, res, at| {
            out.push(Cqe {
                slot,
                res: res as i64,
                t_ns: at.saturating_duration_since(origin).as_nanos() as u64,
            })
        });
    }
}

/// Process CPU usage over the I/O phase: from the moment every worker has set up its backend
/// (the first one past the start barrier takes the snapshot) until the last worker's loop ends.
/// Setup (ring and buffer registration, file layout) and teardown (merging results) stay out,
/// as in fio, whose `usr_cpu`/`sys_cpu` cover only the job's I/O phase. Process-wide, so the
/// sync engine's I/O threads are included.
/// Where workers wait for each other before the I/O phase: like `std::sync::Barrier`, but the
/// main thread can open it when a worker could not even be started.
struct Gate<'h> {
    /// (arrived, opened without everyone, workers that failed to set up, refused by the hook)
    state: Mutex<GateState>,
    cv: Condvar,
    n: usize,
    hook: Option<StartHook<'h>>,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    aborted: bool,
    failed: usize,
    refused: Option<String>,
}

impl<'h> Gate<'h> {
    fn new(n: usize, hook: Option<StartHook<'h>>) -> Gate<'h> {
        Gate {
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
            n,
            hook,
        }
    }

    /// Arrives (`ok`: this worker's backend is set up) and waits for the others (or an abort).
    /// The last to arrive calls the start hook before letting everyone go. Returns whether this
    /// worker was the last, or the hook's refusal.
    fn arrive(&self, ok: bool) -> Result<bool, String> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.arrived += 1;
        if !ok {
            st.failed += 1;
        }
        if st.arrived == self.n {
            if let Some(hook) = self.hook {
                let all_ok = st.failed == 0 && !st.aborted;
                drop(st);
                let verdict = (hook.0)(all_ok);
                st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = verdict {
                    st.refused = Some(e);
                }
            }
            st.arrived = usize::MAX; // opened
            self.cv.notify_all();
            return st.refused.clone().map_or(Ok(true), Err);
        }
        while st.arrived != usize::MAX && !st.aborted {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.refused.clone().map_or(Ok(false), Err)
    }

    /// The start hook's refusal, if it refused.
    fn refused(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .refused
            .clone()
    }

    /// Lets everyone waiting go (the run is off).
    fn abort(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.aborted = true;
        self.cv.notify_all();
    }
}

#[derive(Default)]
struct CpuWindow {
    start: Mutex<Option<cpu::Rusage>>,
    end: Mutex<Option<cpu::Rusage>>,
    running: AtomicUsize,
}

impl CpuWindow {
    /// A worker with a working backend: counts itself in, waits for all workers at `barrier`
    /// and opens the window (once, in the barrier's leader). Counting in before the barrier
    /// means the window closes only when the last of them is done.
    fn start(&self, gate: &Gate) -> Result<(), String> {
        self.running.fetch_add(1, Ordering::SeqCst);
        match gate.arrive(true) {
            Ok(true) => {
                *self.start.lock().unwrap_or_else(|e| e.into_inner()) = Some(cpu::rusage_self());
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(e) => {
                self.running.fetch_sub(1, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// A worker's loop has ended; the last one closes the window.
    fn finish(&self) {
        if self.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            *self.end.lock().unwrap_or_else(|e| e.into_inner()) = Some(cpu::rusage_self());
        }
    }

    /// Usage over the window, or `None` when it was never opened or closed.
    fn usage(&self) -> Option<cpu::Rusage> {
        let start = (*self.start.lock().unwrap_or_else(|e| e.into_inner()))?;
        let end = (*self.end.lock().unwrap_or_else(|e| e.into_inner()))?;
        Some(end.since(&start))
    }
}

/// What one worker thread needs to run its loop once its backend is built.
struct Job<'a> {
    gate: &'a Gate<'a>,
    cpu: &'a CpuWindow,
    ctl: &'a Control<'a>,
    qd: u32,
    data: DataOpts<'a>,
    fault: Option<FaultPlan>,
    /// Log the writes (for the written-map of a verifying run).
    log_writes: bool,
}

/// The start hook refused the run (carried as a worker's error).
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn is_refusal(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<Refused>())
}

/// What a worker brings back.
type WorkerOut = (Recorder, LoopOutcome, Vec<MemberStats>, Option<WriteLog>);

impl Job<'_> {
    /// Waits for all workers, then runs the loop; a failed setup releases the others and stops them.
    fn run<B: Backend>(
        &self,
        backend: io::Result<B>,
        gens: &mut [OpGen],
        mut rec: Recorder,
    ) -> io::Result<WorkerOut> {
        match backend {
            Ok(mut b) => {
                if let Err(e) = self.cpu.start(self.gate) {
                    // The start hook refused: no I/O at all.
                    self.ctl.error_stop.store(true, Ordering::SeqCst);
                    return Err(io::Error::other(Refused(e)));
                }
                let slots = gens.len() as u32 * self.qd;
                let mut log = self.log_writes.then(WriteLog::default);
                let out = match self.fault {
                    Some(plan) => {
                        let mut fb = FaultBackend::new(b, plan, slots);
                        let o = self.go(&mut fb, gens, &mut rec, log.as_mut());
                        (o, fb.member_stats())
                    }
                    None => {
                        let o = self.go(&mut b, gens, &mut rec, log.as_mut());
                        (o, b.member_stats())
                    }
                };
                Ok((rec, out.0, out.1, log))
            }
            Err(e) => {
                self.ctl.error_stop.store(true, Ordering::SeqCst);
                let _ = self.gate.arrive(false);
                Err(e)
            }
        }
    }

    fn go<B: Backend>(
        &self,
        b: &mut B,
        gens: &mut [OpGen],
        rec: &mut Recorder,
        log: Option<&mut WriteLog>,
    ) -> LoopOutcome {
        let out = run_loop(b, gens, self.qd, self.data, self.ctl, rec, log);
        self.cpu.finish();
        out
    }
}

/// The written-map of a target: where it lives, the target's identity, and what it says.
struct MapCtx {
    path: PathBuf,
    key: String,
    map: WrittenMap,
}

/// Loads the written-map of the target (`--verify-map`, or the default place for its identity).
fn load_verify_map(
    infos: &[ssdlab_target::TargetInfo],
    stripe: Option<u64>,
    opts: &RealOptions<'_>,
) -> Result<MapCtx, EngineError> {
    let key = written::target_key(infos, stripe).map_err(|e| {
        EngineError::VerifyMap(written::MapError::Io {
            path: infos.first().map(|i| i.path.clone()).unwrap_or_default(),
            err: e,
        })
    })?;
    let path = match opts.verify_map {
        Some(p) => p.to_path_buf(),
        None => written::default_map_path(&key)?,
    };
    let map = WrittenMap::load(&path, &key)?;
    Ok(MapCtx { path, key, map })
}

/// A write run without `--verify` on a target that has a written-map: what it writes is no longer
/// known, so its region is forgotten before it starts (a best effort: a failure is a note).
fn forget_for_plain_write(plan: &Plan, stripe: Option<u64>, opts: &RealOptions<'_>) {
    if plan.paths.is_empty() || !plan.paths.iter().all(|p| p.info.exists) {
        return; // targets created by this run have no map
    }
    let infos: Vec<_> = plan.paths.iter().map(|p| p.info.clone()).collect();
    let Ok(key) = written::target_key(&infos, stripe) else {
        return;
    };
    let path = match opts.verify_map {
        Some(p) => p.to_path_buf(),
        None => match written::default_map_path(&key) {
            Ok(p) => p,
            Err(_) => return,
        },
    };
    if !path.exists() {
        return;
    }
    if let Err(e) = WrittenMap::update(&path, &key, |m| m.forget(plan.start, plan.span)) {
        (opts.on_note)(&format!(
            "{e}; a later verifying read may report this run's writes as corruption"
        ));
    }
}

/// Which engine a plan runs with, after checking it can: null, sync or io_uring.
fn choose_engine(
    spec: &WorkloadSpec,
    plan: &Plan,
    opts: &RealOptions<'_>,
    notes: &mut Vec<String>,
) -> Result<&'static str, Invalid> {
    if plan.is_null() {
        return Ok("null");
    }
    let stripe = plan.map.is_some();
    let threads = spec.total_qd();
    let sync_ok = || -> Result<&'static str, Invalid> {
        if threads > sync::MAX_SYNC_THREADS {
            return Err(Invalid::SyncThreads {
                threads,
                max: sync::MAX_SYNC_THREADS,
            });
        }
        Ok("sync")
    };
    // What one ring must hold: `qd` slots, and for a stripe set every piece of them in flight.
    let pieces = plan
        .map
        .as_ref()
        .map(|m| crate::stripe::StripeAdapter::max_pieces(m, spec.bs))
        .unwrap_or(1);
    let inflight = (spec.qd as u64 * pieces).min(u32::MAX as u64) as u32;
    let ring_ok = || ring::check_ring(spec.qd, inflight);
    match opts.engine {
        EngineChoice::Sync if stripe => Err(Invalid::StripeNeedsUring),
        EngineChoice::Sync => sync_ok(),
        EngineChoice::IoUring => {
            if !ssdlab_io::io_uring_available() {
                return Err(Invalid::UringUnavailable);
            }
            ring_ok().map_err(|e| Invalid::Ring {
                qd: spec.qd,
                err: e.to_string(),
            })?;
            Ok("io_uring")
        }
        EngineChoice::Auto => {
            let why = if !ssdlab_io::io_uring_available() {
                "io_uring is not available here".to_string()
            } else {
                match ring_ok() {
                    Ok(()) => return Ok("io_uring"),
                    Err(e) => format!("io_uring cannot hold QD {} in one ring ({e})", spec.qd),
                }
            };
            if stripe {
                return Err(Invalid::UringNeededForStripe { why });
            }
            let engine = sync_ok()?;
            notes.push(format!(
                "{why}; using the sync engine (one thread per outstanding I/O)"
            ));
            Ok(engine)
        }
    }
}

/// Memory one worker needs besides its I/O buffers (latency histograms, series, slot state).
const WORKER_OVERHEAD: u64 = 4 << 20;
/// Memory (address space) one thread of the sync engine takes: its stack, guard page and the
/// signal stack the runtime gives every thread.
const SYNC_THREAD_BYTES: u64 = 192 << 10;
/// What a run needs besides its estimate: the binary, the runtime, allocator arenas, results.
pub(crate) const MEMORY_MARGIN: u64 = 64 << 20;

/// Checks the run's memory estimate (I/O buffers of every slot, per-worker bookkeeping) against
/// what the system (and `--max-memory`) allows.
fn check_memory(
    spec: &WorkloadSpec,
    plan: &Plan,
    engine: &str,
    opts: &RealOptions<'_>,
) -> Result<(), Invalid> {
    let buffers = if plan.is_null() {
        0
    } else {
        let align = plan.buf_align.max(4096) as u64;
        spec.bs.div_ceil(align) * align * spec.total_qd()
    };
    // --verify: the written-map (a bit per sector at worst), its crash-guard copy, and each
    // worker's log of what it wrote.
    let maps = if spec.verify {
        plan.span.div_ceil(4096) * (2 + spec.jobs as u64)
    } else {
        0
    };
    let threads = if engine == "sync" {
        spec.total_qd() * SYNC_THREAD_BYTES
    } else {
        0
    };
    let need = buffers + maps + threads + WORKER_OVERHEAD * spec.jobs as u64 + MEMORY_MARGIN;
    check_budget(
        &format!(
            "{} I/O buffers of {} (--qd {} × --jobs {}) and the workers' bookkeeping",
            spec.total_qd(),
            format_size(spec.bs),
            spec.qd,
            spec.jobs
        ),
        need,
        opts.max_memory,
    )
}

/// Refuses `need` bytes when the memory limit is lower.
pub(crate) fn check_budget(what: &str, need: u64, user: Option<u64>) -> Result<(), Invalid> {
    match memory::limit(user) {
        Some(MemoryLimit { bytes, source }) if need > bytes => Err(Invalid::Memory {
            what: what.to_string(),
            need: format_size(need),
            limit: format_size(bytes),
            bound: source.to_string(),
        }),
        _ => Ok(()),
    }
}

fn target_desc(plan: &Plan, target: &RealTarget) -> TargetDesc {
    match target {
        RealTarget::Null => TargetDesc {
            kind: "null".into(),
            name: "null".into(),
            size: plan.size,
            engine: "null".into(),
            direct: false,
            offset: plan.start,
            span: plan.span,
            details: vec![],
        },
        RealTarget::Path(path) => {
            let info = &plan.paths[0].info;
            TargetDesc {
                kind: match info.kind {
                    TargetKind::File => "file",
                    TargetKind::BlockDevice => "block",
                }
                .into(),
                name: path.display().to_string(),
                size: plan.size,
                engine: String::new(),
                direct: plan.direct,
                offset: plan.start,
                span: plan.span,
                details: info
                    .model
                    .iter()
                    .map(|m| ("model".to_string(), m.clone()))
                    .collect(),
            }
        }
        RealTarget::Raid0 { members, stripe } => {
            let names: Vec<String> = if plan.is_null() {
                (0..members.len()).map(|i| format!("null{i}")).collect()
            } else {
                plan.paths.iter().map(|p| p.name.clone()).collect()
            };
            TargetDesc {
                kind: "raid0".into(),
                name: names.join(","),
                size: plan.size,
                engine: String::new(),
                direct: plan.direct,
                offset: plan.start,
                span: plan.span,
                details: vec![
                    ("stripe".into(), format_size(*stripe)),
                    ("members".into(), members.len().to_string()),
                    (
                        "zones".into(),
                        plan.map.as_ref().map_or(0, |m| m.zones().len()).to_string(),
                    ),
                ],
            }
        }
    }
}

/// Everything [`run_real`] checks before it writes anything (targets, engine and its limits,
/// memory), without writing: for validating the points of a sweep before it starts.
pub fn check_real(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions<'_>,
) -> Result<(), EngineError> {
    plan_real(spec, target, opts, &mut Vec::new()).map(|_| ())
}

/// The checks of [`run_real`] before the first write: returns the plan and the engine.
fn plan_real(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions<'_>,
    notes: &mut Vec<String>,
) -> Result<(Plan, &'static str), EngineError> {
    spec.validate()?;
    let plan = ssdlab_target::plan(
        spec,
        target,
        &PlanOptions {
            direct: opts.direct,
            allow_destroy: opts.allow_destroy,
            null_size: opts.null_size,
        },
    )?;
    if spec.verify && plan.is_null() {
        return Err(Invalid::VerifyNeedsData.into());
    }
    notes.extend(plan.paths.iter().flat_map(|p| p.notes.iter().cloned()));
    let engine = choose_engine(spec, &plan, opts, notes)?;
    check_memory(spec, &plan, engine, opts)?;
    Ok((plan, engine))
}

/// Runs `spec` against a real target and returns the merged result of all workers.
///
/// Everything that can be checked is checked before the first byte is written: the targets
/// ([`ssdlab_target::plan`]), the engine and its limits, the memory estimate. Only then are files
/// laid out; if the run cannot start after that, the layout is given back.
pub fn run_real(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions<'_>,
) -> Result<RunOutput, EngineError> {
    let mut notes = Vec::new();
    let (plan, engine) = plan_real(spec, target, opts, &mut notes)?;
    for n in &notes {
        (opts.on_note)(n);
    }
    let stripe = match target {
        RealTarget::Raid0 { stripe, .. } => Some(*stripe),
        _ => None,
    };
    // The written-map of --verify: its place is checked and it is read before anything is
    // written (a map of another target, one that cannot be read, or a place where it cannot be
    // saved is bad input). Targets created by this run have none yet.
    let mut verify_map: Option<MapCtx> = None;
    if spec.verify && spec.writes() {
        let place = match opts.verify_map {
            Some(p) => p.to_path_buf(),
            None => written::state_dir()?.join("verify").join("probe.map"),
        };
        written::check_map_location(&place)?;
    }
    if spec.verify && plan.paths.iter().all(|p| p.info.exists) {
        let infos: Vec<_> = plan.paths.iter().map(|p| p.info.clone()).collect();
        verify_map = Some(load_verify_map(&infos, stripe, opts)?);
    }
    if spec.writes() && !spec.verify {
        forget_for_plain_write(&plan, stripe, opts);
    }

    // The first write: lay out files that are missing or short (undone on drop unless committed).
    let note_sink = std::cell::RefCell::new(Vec::new());
    let mut laid = plan
        .lay_out(opts.stop, &|n: &str| {
            (opts.on_note)(n);
            note_sink.borrow_mut().push(n.to_string());
        })
        .map_err(EngineError::Layout)?;
    notes.extend(note_sink.into_inner());
    if spec.verify && verify_map.is_none() {
        verify_map = Some(load_verify_map(&laid.infos, stripe, opts)?);
    }
    if let (true, Some(ctx)) = (spec.writes(), &verify_map) {
        // Crash guard: until this run records what it wrote, its region is unknown.
        if let Err(e) = WrittenMap::update(&ctx.path, &ctx.key, |m| m.forget(plan.start, plan.span))
        {
            (opts.on_note)(&format!(
                "{e}; a crash during this run could leave it stale"
            ));
        }
    }
    let wrote = laid.wrote();
    let setup_failed = |laid: &mut ssdlab_target::LaidOut, message: String| EngineError::Setup {
        message,
        wrote,
        cleanup: laid.undo(),
    };

    // Open every worker's file descriptors before starting anything, so errors come out cleanly.
    let writes = spec.writes();
    let mut files: Vec<Vec<File>> = Vec::new();
    for _ in 0..spec.jobs {
        let mut fs = Vec::new();
        for info in &laid.infos {
            match open_target(info, writes, opts.direct) {
                Ok(f) => fs.push(f),
                Err(e) => return Err(setup_failed(&mut laid, e.to_string())),
            }
        }
        files.push(fs);
    }
    let ctl = {
        let mut c = Control::new(spec.ramp_ns, spec.stop.time_ns, max_ios(spec))
            .with_stop(opts.stop)
            .with_stonewall(opts.stonewall);
        c.continue_on_error = opts.continue_on_error;
        c
    };
    let gate = Gate::new(spec.jobs as usize, opts.start_hook);
    let cpu_window = CpuWindow::default();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let ru0 = cpu::rusage_self();
    let names: Vec<String> = match target {
        RealTarget::Raid0 { members, .. } if plan.is_null() => {
            (0..members.len()).map(|i| format!("null{i}")).collect()
        }
        _ => plan.paths.iter().map(|p| p.name.clone()).collect(),
    };
    let results: Vec<io::Result<WorkerOut>> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (w, mut fs) in files.into_iter().enumerate() {
            let (ctl, gate, cpu_window, plan, names) = (&ctl, &gate, &cpu_window, &plan, &names);
            let known = verify_map.as_ref().map(|c| &c.map);
            let h = std::thread::Builder::new()
                .name(format!("ssdlab-worker-{w}"))
                .spawn_scoped(scope, move || -> io::Result<WorkerOut> {
                    let mut gens = vec![OpGen::new(spec, plan.start, plan.span, w as u32)];
                    let rec = Recorder::default();
                    let bs = spec.bs as usize;
                    let align = plan.buf_align;
                    let job = Job {
                        gate,
                        cpu: cpu_window,
                        ctl,
                        qd: spec.qd,
                        data: DataOpts {
                            pattern: spec.pattern,
                            pattern_seed: worker_seed(spec.seed ^ 0xda7a, w as u32),
                            verify: spec.verify.then_some(spec.seed),
                            known,
                        },
                        fault: opts.fault,
                        log_writes: spec.verify && spec.writes(),
                    };
                    let origin = Instant::now();
                    match (&plan.map, engine) {
                        (Some(map), _) => {
                            let ring = if fs.is_empty() {
                                Ok(None)
                            } else {
                                let pieces = StripeAdapter::max_pieces(map, spec.bs) as u32;
                                UringBackend::with_files(
                                    fs,
                                    spec.qd,
                                    spec.qd.saturating_mul(pieces),
                                    bs,
                                    align,
                                )
                                .map(|mut r| {
                                    r.set_submit_batch(opts.submit_batch);
                                    Some(r)
                                })
                            };
                            job.run(
                                ring.map(|r| {
                                    StripeAdapter::new(
                                        origin,
                                        map.clone(),
                                        r,
                                        spec.qd,
                                        names.clone(),
                                    )
                                }),
                                &mut gens,
                                rec,
                            )
                        }
                        (None, "io_uring") => job.run(
                            UringBackend::new(fs.remove(0), spec.qd, bs, align).map(|mut ring| {
                                ring.set_submit_batch(opts.submit_batch);
                                UringAdapter { origin, ring }
                            }),
                            &mut gens,
                            rec,
                        ),
                        (None, "sync") => job.run(
                            SyncBackend::new(fs.remove(0), spec.qd, bs, align)
                                .map(|pool| SyncAdapter { origin, pool }),
                            &mut gens,
                            rec,
                        ),
                        _ => job.run(
                            Ok(NullBackend {
                                origin,
                                pending: Vec::with_capacity(spec.qd as usize),
                            }),
                            &mut gens,
                            rec,
                        ),
                    }
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // No thread, no I/O: stop the others, who wait at the gate for it.
                    ctl.error_stop.store(true, Ordering::SeqCst);
                    gate.abort();
                    let mut out: Vec<io::Result<WorkerOut>> = handles
                        .into_iter()
                        .map(
                            |h: std::thread::ScopedJoinHandle<'_, io::Result<WorkerOut>>| {
                                h.join().unwrap_or_else(|_| {
                                    Err(io::Error::other("a worker thread panicked"))
                                })
                            },
                        )
                        .collect();
                    out.push(Err(io::Error::other(format!(
                        "cannot start worker thread: {e}"
                    ))));
                    return out;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked")))
            })
            .collect()
    });
    let mut merged = Recorder::default();
    let mut outcome = LoopOutcome::default();
    let mut members: Vec<MemberStats> = Vec::new();
    let mut setup_error = None;
    let mut write_log = WriteLog::default();
    // Whether every worker's error is the start hook's refusal (none failed on its own).
    let mut all_refused = true;
    for r in results {
        if let Err(e) = &r {
            if !is_refusal(e) {
                all_refused = false;
            }
        }
        match r {
            Ok((rec, out, ms, log)) => {
                if let Some(l) = log {
                    write_log.merge(&l);
                }
                merged.merge(&rec);
                outcome.runtime_ns = outcome.runtime_ns.max(out.runtime_ns);
                outcome.ramp_ns = outcome.ramp_ns.max(out.ramp_ns);
                outcome.interrupted |= out.interrupted;
                outcome.stopped_on_error |= out.stopped_on_error;
                outcome.budget_done |= out.budget_done;
                outcome.stonewalled |= out.stonewalled;
                merge_members(&mut members, ms);
            }
            Err(e) if is_refusal(&e) && setup_error.is_some() => {}
            Err(e) => setup_error = Some(e),
        }
    }
    let refused = gate.refused();
    if let (Some(why), None) = (&refused, &setup_error) {
        // Cannot happen (a refusal fails every worker), but never run on after one.
        return Err(setup_failed(&mut laid, why.clone()));
    }
    if let Some(why) = refused.filter(|_| all_refused) {
        // Every worker set up fine and the start hook said no: no I/O was issued.
        return Err(setup_failed(&mut laid, why));
    }
    if let Some(e) = setup_error {
        // A worker could not set up its engine: no I/O was issued by anyone.
        let what = match engine {
            "io_uring" => "cannot set up io_uring",
            "sync" => "cannot start I/O threads",
            _ => "cannot start the run",
        };
        return Err(setup_failed(&mut laid, format!("{what}: {e}")));
    }
    laid.commit();
    if let (true, Some(ctx)) = (spec.writes(), &verify_map) {
        // Merged under the map's lock with what concurrent runs recorded meanwhile.
        match WrittenMap::update(&ctx.path, &ctx.key, |m| m.record(spec.seed, &write_log)) {
            Ok(map) => (opts.on_note)(&format!(
                "verify map {}: {} sectors written by this run; {map}",
                ctx.path.display(),
                write_log.written_sectors()
            )),
            Err(e) => (opts.on_note)(&format!(
                "{e}; a later verifying read cannot tell lost data from unwritten sectors"
            )),
        }
    }
    let ru = cpu_window
        .usage()
        .unwrap_or_else(|| cpu::rusage_self().since(&ru0));
    let mut desc = target_desc(&plan, target);
    desc.engine = engine.to_string();
    let mut result = build_result(
        spec,
        desc,
        &merged,
        outcome,
        started,
        CpuUsage {
            user_ns: ru.user_ns,
            sys_ns: ru.sys_ns,
            ctx: ru.nvcsw + ru.nivcsw,
            majf: ru.majflt,
            minf: ru.minflt,
        },
    );
    result.members = members;
    if spec.verify {
        result.verify = Some(merged.verify.clone());
    }
    Ok(RunOutput {
        result,
        notes,
        recorder: merged,
    })
}

/// Adds one worker's member statistics. Counts and ticks add up; busy time is the largest of the
/// workers' (each worker only sees its own I/O, so this is a lower bound of the member's busy time).
fn merge_members(acc: &mut Vec<MemberStats>, ms: Vec<MemberStats>) {
    if acc.is_empty() {
        *acc = ms;
        return;
    }
    for (a, m) in acc.iter_mut().zip(ms) {
        a.read_ios += m.read_ios;
        a.write_ios += m.write_ios;
        a.read_bytes += m.read_bytes;
        a.write_bytes += m.write_bytes;
        a.read_ticks_ns += m.read_ticks_ns;
        a.write_ticks_ns += m.write_ticks_ns;
        a.busy_ns = a.busy_ns.max(m.busy_ns);
    }
}

/// The I/O budget implied by `--ios` and `--bytes` (the smaller wins).
pub(crate) fn max_ios(spec: &WorkloadSpec) -> Option<u64> {
    let by_bytes = spec.stop.bytes.map(|b| b.div_ceil(spec.bs));
    match (spec.stop.ios, by_bytes) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Turns a merged recorder into the result every front end shows.
pub(crate) fn build_result(
    spec: &WorkloadSpec,
    target: TargetDesc,
    rec: &Recorder,
    out: LoopOutcome,
    timestamp_ms: u64,
    cpu: CpuUsage,
) -> RunResult {
    let iodepth_level = rec.iodepth_levels();
    RunResult {
        spec: spec.clone(),
        target,
        read: rec.summary(OpKind::Read, out.runtime_ns),
        write: rec.summary(OpKind::Write, out.runtime_ns),
        trim: rec.summary(OpKind::Trim, out.runtime_ns),
        runtime_ns: out.runtime_ns,
        ramp_ns: out.ramp_ns,
        timestamp_ms,
        interrupted: out.interrupted,
        stopped_on_error: out.stopped_on_error,
        stonewalled: out.stonewalled,
        cpu,
        iodepth_level,
        latency_levels: rec.latency_levels(),
        errors: rec.error_records.clone(),
        series: rec.series(out.runtime_ns),
        members: Vec::new(),
        verify: None,
        device: None,
    }
}
