//! Real targets: regular files, block devices and the null target, driven by io_uring or by the
//! portable sync backend, one thread per worker.

use crate::backend::{Backend, Cqe};
use crate::engine_loop::{
    run_streams, BacklogOpts, Control, DataOpts, LoopOutcome, OnPass, Stream, Unit,
};
use crate::fault::{FaultBackend, FaultPlan};
use crate::iolog::{IologTarget, PartWriter, Recording};
use crate::replay::load_trace;
use crate::stripe::{max_pieces, NullMembers, StripeAdapter};
use crate::{EngineError, Invalid, StartHook};
use ssdlab_io::cache::FileAdvice;
use ssdlab_io::memory::{self, MemoryLimit};
use ssdlab_io::{cpu, ring, sync, Dir, FileOp, RingOptions, SyncBackend, SyncMode, UringBackend};
use ssdlab_stats::{
    CpuUsage, DiskUtil, EngineKind, LogConfig, MemberStats, Recorder, RunResult, TargetDesc,
    TargetKind,
};
use ssdlab_target::diskstats::{DiskDelta, DiskWatch};
use ssdlab_target::written::{self, WriteLog, WrittenMap};
use ssdlab_target::{open_target, open_target_shared, Fill, PathId, PathKind, Plan, PlanOptions};
use ssdlab_workload::gen::worker_seed;
use ssdlab_workload::{format_size, Files, Op, OpKind, OpList, OpSource, Trace, WorkloadSpec};
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
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
    /// Keep going after an I/O error: every error, or those `non_fatal` allows (fio's rule).
    pub continue_on_error: bool,
    pub non_fatal: Option<crate::NonFatal>,
    /// Size of the null target.
    pub null_size: u64,
    /// A new file's missing directories are made as it is laid out (fio's `create_work_dirs`).
    pub create_dirs: bool,
    /// Called with diagnostics (file layout, engine fallback) as they happen; the CLI prints them
    /// to stderr.
    pub on_note: fn(&str),
    /// Inject faults (tests): see [`FaultPlan`].
    pub fault: Option<FaultPlan>,
    /// io_uring: submit as soon as this many I/Os are queued (fio's `iodepth_batch_submit`);
    /// 0 = one system call per batch of refills. Default 1.
    pub submit_batch: u32,
    /// io_uring: reap at most this many completions before the freed slots are refilled (fio's
    /// `iodepth_batch_complete_max`, 1 by default in fio); 0 = every completion that is ready.
    pub reap_max: u32,
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
    /// Called once when the job's first unit stops (fio's `exitall`).
    pub on_end: Option<crate::OnEnd<'a>>,
    /// fio's flow control: the job's clones are members of this flow.
    pub flow: Option<crate::FlowShare<'a>>,
    /// io_uring ring options (fio `hipri`, `sqthread_poll`, `fixedbufs`, `registerfiles`).
    pub ring: RingOptions,
    /// Also return each worker's own result (fio without `group_reporting`).
    pub per_worker: bool,
    /// fio's `steadystate` with `group_reporting`: the job is a member of a reporting group
    /// checked together (its criterion is the job's `steady`).
    pub steady_group: Option<crate::SteadyMember<'a>>,
    /// Keep time-series logs (per job and window) in the result.
    pub log: Option<LogConfig>,
    /// Report what the run measured so far here (for a status line).
    pub progress: Option<&'a crate::Progress>,
    /// How files this job lays out are made (fio: data for jobs that read, allocated space
    /// for jobs that only write).
    pub fill: Fill,
    /// What a layout with data writes (fio: the job's buffers; pseudo-random data when
    /// `None`).
    pub layout_data: Option<ssdlab_target::LayoutData>,
    /// Drop the page cache of the job's region before it starts (fio's `invalidate`).
    pub invalidate: bool,
    /// Access-pattern advice for the job's region (fio's `fadvise_hint`).
    pub advice: Option<FileAdvice>,
    /// Read the job's region into the page cache before it starts (fio's `pre_read`).
    pub pre_read: bool,
    /// How the sync engine does its I/Os (fio's libaio on buffered files, posixaio).
    /// fio's `--readonly`: no file is laid out (created or extended).
    pub read_only: bool,
    pub sync_mode: SyncMode,
    /// What the sync engine's I/Os do to the file: move data, or fio's `falloc` and
    /// `ftruncate` engines (then a trim punches a hole in a regular file).
    pub file_op: FileOp,
    /// The I/O threads' memory policy (fio's `numa_mem_policy`), set before they allocate
    /// their buffers.
    pub mem_policy: Option<ssdlab_io::numa::MemPolicy>,
    /// Added to each I/O thread's nice value (fio's `nice`).
    pub nice: i32,
    /// Each I/O thread's I/O priority, (class, level) (fio's `prioclass`, `prio`).
    pub io_priority: Option<(u32, u32)>,
    /// Where the writes fio's `verify_backlog` has not read back yet go when the job ends
    /// (for its verify phase).
    pub unverified: Option<&'a std::sync::Mutex<Vec<Op>>>,
    /// Issue these ops (offsets on the target) instead of the spec's: the reads of a verify
    /// phase after fio's `verify_backlog`.
    pub ops: Option<Arc<[Op]>>,
}

impl Default for RealOptions<'_> {
    fn default() -> Self {
        RealOptions {
            engine: EngineChoice::Auto,
            direct: true,
            allow_destroy: false,
            continue_on_error: false,
            non_fatal: None,
            null_size: 1 << 40,
            create_dirs: false,
            on_note: |_| {},
            fault: None,
            submit_batch: 1,
            reap_max: 0,
            stop: None,
            max_memory: None,
            verify_map: None,
            start_hook: None,
            stonewall: None,
            on_end: None,
            flow: None,
            ring: RingOptions::default(),
            per_worker: false,
            steady_group: None,
            log: None,
            progress: None,
            fill: Fill::Data,
            layout_data: None,
            invalidate: false,
            advice: None,
            unverified: None,
            ops: None,
            pre_read: false,
            sync_mode: SyncMode::Threads,
            read_only: false,
            file_op: FileOp::Data,
            mem_policy: None,
            nice: 0,
            io_priority: None,
        }
    }
}

/// A finished run plus diagnostics for stderr.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub result: RunResult,
    pub notes: Vec<String>,
    /// Each worker on its own (only with [`RealOptions::per_worker`]).
    pub workers: Vec<RunResult>,
    /// What `result` was built from (to merge jobs reported together, or to list their
    /// latency bins): all workers' recorder, and how the run ended.
    pub recorder: Recorder,
    pub outcome: LoopOutcome,
    /// The recorders behind `workers`.
    pub worker_recorders: Vec<Recorder>,
    /// Why the job's `write_iolog` could not be kept (a full disk after the run): the result
    /// stands, the log is gone.
    pub iolog_error: Option<String>,
}

/// One job of a group run on real targets: a workload, where it goes and how.
#[derive(Debug, Clone)]
pub struct RealJob<'a> {
    pub spec: &'a WorkloadSpec,
    pub target: &'a RealTarget,
    pub opts: &'a RealOptions<'a>,
    /// fio's `write_iolog`: record every I/O the job issues.
    pub iolog: Option<IologTarget>,
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
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        if inflight == 0 {
            crate::backend::wait_out(|| self.now(), deadline_ns);
        }
        Ok(())
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = now_ns(&self.origin);
        out.extend(self.pending.drain(..).map(|(slot, len)| Cqe {
            slot,
            res: len as i64,
            t_ns: t,
            started_ns: Cqe::WITH_BATCH,
        }));
    }
    fn mark_measurement_start(&mut self) {}
    /// Everything pushed is "submitted" with the next wait.
    fn submit_batch(&self) -> u32 {
        0
    }
    fn member_stats(&mut self) -> Vec<MemberStats> {
        Vec::new()
    }
}

/// The error of an op real targets do not take (checked before a run; a safety net here).
pub(crate) fn no_trims() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "trims are not issued to real targets",
    )
}

/// Trims done as they are pushed, as fio does them (its engines, io_uring's too, call
/// `do_io_u_trim` from their queue function): one `BLKDISCARD` per trim on the block device,
/// timed as that I/O's latency; the completion comes with the next reap.
struct Trims {
    /// The device (a handle of its own); `None`: trims are refused.
    file: Option<File>,
    /// What a trim does: discards blocks of a device, or, with fio's file-operation engines,
    /// punches a hole in the file (`falloc`) or fails with EINVAL (`ftruncate`).
    op: FileOp,
    done: Vec<Cqe>,
}

impl Trims {
    fn new(file: Option<File>, qd: u32) -> Trims {
        Trims {
            file,
            op: FileOp::Data,
            done: Vec::with_capacity(if qd > 0 { qd as usize } else { 1 }),
        }
    }

    /// The same trims done as fio's engine `op` does them.
    fn with_op(mut self, op: FileOp) -> Trims {
        self.op = op;
        self
    }

    /// Trims `op`'s range now.
    fn push(&mut self, origin: &Instant, slot: u32, op: &Op) -> io::Result<()> {
        let Some(f) = &self.file else {
            return Err(no_trims());
        };
        let started = now_ns(origin);
        const EIO: i32 = 5;
        const EINVAL: i32 = 22;
        let done = match self.op {
            FileOp::Data => {
                ssdlab_io::blockdev::discard(f, op.offset, op.len).map_err(|e| e.raw_os_error())
            }
            FileOp::Fallocate => {
                sync::punch_hole(f, op.offset, op.len).map_err(|e| e.raw_os_error().unwrap_or(EIO))
            }
            // (the engines that work on a file's name have no trims)
            FileOp::Ftruncate | FileOp::Stat(_) | FileOp::Unlink | FileOp::Create => Err(EINVAL),
        };
        let res = match done {
            Ok(()) => op.len as i64,
            Err(e) => -(e as i64),
        };
        self.done.push(Cqe {
            slot,
            res,
            t_ns: now_ns(origin),
            started_ns: started,
        });
        Ok(())
    }

    /// Completions not reaped yet (the loop must not wait for more).
    fn ready(&self) -> bool {
        !self.done.is_empty()
    }

    fn reap(&mut self, out: &mut Vec<Cqe>) {
        out.append(&mut self.done);
    }
}

/// A handle of its own on the device of a job that trims (for [`Trims`]).
fn trim_handle(spec: &WorkloadSpec, fs: &[File]) -> io::Result<Option<File>> {
    match fs.first() {
        Some(f) if spec.trims() => f.try_clone().map(Some),
        _ => Ok(None),
    }
}

#[inline]
fn dir(kind: OpKind) -> io::Result<Dir> {
    match kind {
        OpKind::Read => Ok(Dir::Read),
        OpKind::Write => Ok(Dir::Write),
        OpKind::Trim => Err(no_trims()),
    }
}

struct UringAdapter {
    origin: Instant,
    ring: UringBackend,
    /// A job's several files: where each begins in the job's address space (empty: one file).
    bases: Vec<u64>,
    /// Trims of a block device (one file: several files with trims are refused).
    trims: Trims,
    /// Completions reaped at most at once (`usize::MAX`: all that are ready).
    reap_max: usize,
}

impl Backend for UringAdapter {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn submit_batch(&self) -> u32 {
        self.ring.submit_batch()
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.ring.buffer(slot)
    }
    #[inline]
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        if op.kind == OpKind::Trim {
            return self.trims.push(&self.origin, slot, op);
        }
        if self.bases.is_empty() {
            return self
                .ring
                .push(slot, dir(op.kind)?, op.offset, op.len as u32);
        }
        let (file, at) = Files::locate(&self.bases, op.offset);
        self.ring
            .push_piece(slot, 0, file as u32, 0, dir(op.kind)?, at, op.len as u32)
    }
    fn submit_wait(&mut self, min: usize, _timeout_ns: u64) -> io::Result<()> {
        if self.trims.ready() {
            // a trim is done already: submit the rest, wait for nothing
            return self.ring.submit_and_wait(0);
        }
        // no timeout needed: the ring's wait always ends with a completion
        self.ring.submit_and_wait(min)
    }
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        let left = Duration::from_nanos(deadline_ns.saturating_sub(self.now()));
        if self.trims.ready() {
            return self.ring.submit_and_wait(0);
        }
        if inflight > 0 {
            self.ring.submit_and_wait_timeout(left)
        } else {
            crate::backend::wait_out(|| self.now(), deadline_ns);
            Ok(())
        }
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        self.trims.reap(out);
        let t = now_ns(&self.origin);
        self.ring.reap_at_most(self.reap_max, |slot, _tag, res| {
            out.push(Cqe {
                slot,
                res: res as i64,
                t_ns: t,
                started_ns: Cqe::WITH_BATCH,
            })
        });
    }
    fn mark_measurement_start(&mut self) {}
    fn member_stats(&mut self) -> Vec<MemberStats> {
        Vec::new()
    }
}

struct SyncAdapter {
    origin: Instant,
    pool: SyncBackend,
    /// A job's several files: where each begins in the job's address space (empty: one file).
    bases: Vec<u64>,
    /// Trims of a block device (one file: several files with trims are refused).
    trims: Trims,
}

impl Backend for SyncAdapter {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    /// Each I/O goes to its thread as it is pushed (fio's sync engines: one I/O per submission).
    fn submit_batch(&self) -> u32 {
        1
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.pool.buffer(slot)
    }
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        if op.kind == OpKind::Trim {
            return self.trims.push(&self.origin, slot, op);
        }
        let (file, at) = if self.bases.is_empty() {
            (0, op.offset)
        } else {
            Files::locate(&self.bases, op.offset)
        };
        self.pool
            .push_to(slot, file, dir(op.kind)?, at, op.len as u32)
    }
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        if self.trims.ready() {
            // a trim is done already: wait for nothing
            self.pool.wait(0, Duration::ZERO);
            return Ok(());
        }
        self.pool.wait(min, Duration::from_nanos(timeout_ns));
        Ok(())
    }
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        crate::backend::wall_clock_wait_until(self, deadline_ns, inflight)
    }
    fn mark_measurement_start(&mut self) {}
    fn member_stats(&mut self) -> Vec<MemberStats> {
        Vec::new()
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        self.trims.reap(out);
        let origin = self.origin;
        self.pool.reap(|slot, res, at| {
            out.push(Cqe {
                slot,
                res: res as i64,
                t_ns: at.saturating_duration_since(origin).as_nanos() as u64,
                started_ns: Cqe::WITH_BATCH,
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
    /// fio's write_iolog: this worker's part and the log (the file names its lines carry).
    iolog: Option<(PartWriter, &'a IologTarget)>,
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
type WorkerOut = (
    Recorder,
    LoopOutcome,
    Vec<MemberStats>,
    Option<WriteLog>,
    Option<PartWriter>,
);

impl Job<'_> {
    /// Waits for all workers, then runs the loop; a failed setup releases the others and stops them.
    fn run<B: Backend>(
        mut self,
        backend: io::Result<B>,
        source: OpSource,
        mut rec: Recorder,
    ) -> io::Result<WorkerOut> {
        match backend {
            Ok(b) => {
                if source.is_timed() {
                    cpu::precise_timers();
                }
                if let Err(e) = self.cpu.start(self.gate) {
                    // The start hook refused: no I/O at all.
                    self.ctl.error_stop.store(true, Ordering::SeqCst);
                    return Err(io::Error::other(Refused(e)));
                }
                let mut log = self.log_writes.then(WriteLog::default);
                let mut part = self.iolog.take();
                let (out, members) = match self.fault {
                    Some(plan) => {
                        let fb = FaultBackend::new(b, plan, self.qd);
                        self.logged(fb, &mut part, source, &mut rec, log.as_mut())
                    }
                    None => self.logged(b, &mut part, source, &mut rec, log.as_mut()),
                };
                Ok((rec, out, members, log, part.map(|(p, _)| p)))
            }
            Err(e) => {
                self.ctl.error_stop.store(true, Ordering::SeqCst);
                let _ = self.gate.arrive(false);
                Err(e)
            }
        }
    }

    /// Runs the loop on `b`, through the iolog recorder when there is one.
    fn logged<B: Backend>(
        &self,
        mut b: B,
        part: &mut Option<(PartWriter, &IologTarget)>,
        source: OpSource,
        rec: &mut Recorder,
        log: Option<&mut WriteLog>,
    ) -> (LoopOutcome, Vec<MemberStats>) {
        match part {
            Some((p, target)) => {
                let t0 = b.now();
                let mut r = Recording {
                    inner: b,
                    part: p,
                    target,
                    t0,
                };
                let o = self.go(&mut r, source, rec, log);
                (o, r.member_stats())
            }
            None => {
                let o = self.go(&mut b, source, rec, log);
                (o, b.member_stats())
            }
        }
    }

    fn go<B: Backend>(
        &self,
        b: &mut B,
        source: OpSource,
        rec: &mut Recorder,
        log: Option<&mut WriteLog>,
    ) -> LoopOutcome {
        let mut streams = [Stream {
            source,
            qd: self.qd,
            unit: 0,
            rec: 0,
        }];
        let units = [Unit {
            ctl: self.ctl,
            data: self.data,
        }];
        let out = run_streams(b, &mut streams, &units, std::slice::from_mut(rec), log);
        self.cpu.finish();
        out[0]
    }
}

/// The written-map of a target: where it lives, the target's identity, and what it says.
struct MapCtx {
    path: PathBuf,
    key: String,
    map: WrittenMap,
    /// The targets' verify locks, held to the end of the run ([`written::hold_for_verify`]).
    _held: Vec<std::fs::File>,
}

/// Loads the written-map of the target (`--verify-map`, or the default place for its identity).
fn load_verify_map(
    infos: &[ssdlab_target::TargetInfo],
    stripe: Option<u64>,
    opts: &RealOptions<'_>,
    region: (u64, u64),
    writes: bool,
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
    // A stripe set's region spreads over its members: they are held whole.
    let held = written::hold_for_verify(infos, stripe.is_none().then_some(region), writes)?;
    let map = WrittenMap::load(&path, &key)?;
    Ok(MapCtx {
        path,
        key,
        map,
        _held: held,
    })
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
) -> Result<EngineKind, Invalid> {
    let ring_flag = ring_flag(&opts.ring);
    if plan.is_null() {
        if let Some(flag) = ring_flag {
            return Err(Invalid::RingOnly {
                flag,
                engine: "null".into(),
            });
        }
        return Ok(EngineKind::Null);
    }
    let stripe = plan.map.is_some();
    let threads = spec.total_qd();
    let sync_ok = || -> Result<EngineKind, Invalid> {
        if let Some(flag) = ring_flag {
            return Err(Invalid::RingOnly {
                flag,
                engine: "sync".into(),
            });
        }
        if threads > sync::MAX_SYNC_THREADS {
            return Err(Invalid::SyncThreads {
                threads,
                max: sync::MAX_SYNC_THREADS,
            });
        }
        Ok(EngineKind::Sync)
    };
    // What one ring must hold: `qd` slots, and for a stripe set every piece of them in flight.
    let pieces = plan
        .map
        .as_ref()
        .map(|m| crate::stripe::max_pieces(m, spec.bs))
        .unwrap_or(1);
    let inflight = (spec.qd as u64 * pieces).min(u32::MAX as u64) as u32;
    let ring_ok = || ring::check_ring(spec.qd, inflight);
    let uring = |notes: &mut Vec<String>| -> Result<EngineKind, Invalid> {
        if opts.ring.iopoll {
            if !opts.direct {
                return Err(Invalid::HipriBuffered);
            }
            for p in &plan.paths {
                ssdlab_target::polled_io(&p.info).map_err(|why| Invalid::Hipri { why })?;
            }
        }
        // Registered buffers (fixedbufs=on): the kernel's limit is checked before any layout.
        if opts.ring.fixed_bufs == ring::FixedBufs::On {
            ring::check_fixed_bufs(spec.qd, spec.bs as usize)
                .map_err(|e| Invalid::RingSetup { err: e.to_string() })?;
        }
        if opts.ring.iopoll || opts.ring.sqpoll {
            ring::check_ring_with(spec.qd, inflight, &opts.ring)
                .map_err(|e| Invalid::RingSetup { err: e.to_string() })?;
        }
        if opts.ring.sqpoll {
            notes.push(
                "sqthread_poll: a kernel thread polls the submission queue (its CPU time is not \
                 in this process's usr/sys figures)"
                    .into(),
            );
        }
        Ok(EngineKind::IoUring)
    };
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
            uring(notes)
        }
        EngineChoice::Auto => {
            let why = if !ssdlab_io::io_uring_available() {
                "io_uring is not available here".to_string()
            } else {
                match ring_ok() {
                    Ok(()) => return uring(notes),
                    Err(e) => format!("io_uring cannot hold QD {} in one ring ({e})", spec.qd),
                }
            };
            if stripe {
                return Err(Invalid::UringNeededForStripe { why });
            }
            if ring_flag.is_some() {
                return Err(Invalid::RingSetup { err: why });
            }
            let engine = sync_ok()?;
            notes.push(format!(
                "{why}; using the sync engine (one thread per outstanding I/O)"
            ));
            Ok(engine)
        }
    }
}

/// The first ring option that differs from the default (for "applies to io_uring" errors).
fn ring_flag(r: &RingOptions) -> Option<&'static str> {
    let d = RingOptions::default();
    if r.iopoll {
        Some("hipri")
    } else if r.sqpoll {
        Some("sqthread_poll")
    } else if r.fixed_bufs != d.fixed_bufs {
        Some("fixedbufs")
    } else if r.register_files != d.register_files {
        Some("registerfiles")
    } else {
        None
    }
}

/// Memory one worker needs besides its I/O buffers (latency histograms, series, slot state).
const WORKER_OVERHEAD: u64 = 4 << 20;
/// Memory (address space) one thread of the sync engine takes: its stack, guard page and the
/// signal stack the runtime gives every thread.
const SYNC_THREAD_BYTES: u64 = 192 << 10;
/// Memory of one write waiting for the verify phase: a piece (32 bytes) in a B-tree node
/// about two-thirds full, with its key.
const PIECE_BYTES: u64 = 64;
/// What a run needs besides its estimate: the binary, the runtime, allocator arenas, results.
pub(crate) const MEMORY_MARGIN: u64 = 64 << 20;

/// The run's memory estimate (I/O buffers of every slot, per-worker bookkeeping, the threads of
/// the sync engine, verify maps, the trace of a replay; not [`MEMORY_MARGIN`]) and what it is
/// made of.
fn memory_need(
    spec: &WorkloadSpec,
    plan: &Plan,
    engine: EngineKind,
    trace: Option<&Trace>,
) -> (u64, String) {
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
    let threads = if engine == EngineKind::Sync {
        spec.total_qd() * SYNC_THREAD_BYTES
    } else {
        0
    };
    let trace_bytes = trace.map_or(0, |t| t.memory());
    // The random map of varying block sizes: a bit per block of the smallest size, per worker.
    let block_map = match &spec.block_sizes {
        Some(b) if spec.random_map => {
            (plan.span / b.bounds().0.max(1)).div_ceil(8) * spec.jobs as u64
        }
        _ => 0,
    };
    // fio's verify phase: a piece per write waiting to be read back (a B-tree entry each)
    let pieces = if spec.verify_backlog.is_some() && spec.writes() {
        let written = spec.stop.bytes.unwrap_or(plan.span).min(plan.span);
        written.div_ceil(spec.bs.max(1)) * PIECE_BYTES * spec.jobs as u64
    } else {
        0
    };
    let need = buffers
        + maps
        + threads
        + trace_bytes
        + block_map
        + pieces
        + WORKER_OVERHEAD * spec.jobs as u64;
    let mut what = format!(
        "{} I/O buffers of {} (--qd {} × --jobs {}) and the workers' bookkeeping",
        spec.total_qd(),
        format_size(spec.bs),
        spec.qd,
        spec.jobs
    );
    if trace_bytes > 0 {
        what.push_str(&format!(" and the trace ({})", format_size(trace_bytes)));
    }
    if pieces > 0 {
        what.push_str(&format!(
            " and the writes to read back ({})",
            format_size(pieces)
        ));
    }
    (need, what)
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
            kind: TargetKind::Null,
            name: "null".into(),
            size: plan.size,
            engine: EngineKind::Null,
            direct: false,
            offset: plan.start,
            span: plan.span,
            details: vec![],
        },
        RealTarget::Path(path) => {
            let info = &plan.paths[0].info;
            TargetDesc {
                kind: match info.kind {
                    PathKind::File => TargetKind::File,
                    PathKind::BlockDevice => TargetKind::Block,
                    PathKind::CharDevice => TargetKind::Char,
                },
                name: path.display().to_string(),
                size: plan.size,
                engine: EngineKind::Unknown,
                direct: plan.direct,
                offset: plan.start,
                span: plan.span,
                details: [("model", &info.model), ("firmware", &info.firmware)]
                    .into_iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| (k.to_string(), v.clone())))
                    .collect(),
            }
        }
        RealTarget::Files(paths) => {
            let info = &plan.paths[0].info;
            TargetDesc {
                kind: match info.kind {
                    PathKind::File => TargetKind::File,
                    PathKind::BlockDevice => TargetKind::Block,
                    PathKind::CharDevice => TargetKind::Char,
                },
                name: paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":"),
                size: plan.size,
                engine: EngineKind::Unknown,
                direct: plan.direct,
                offset: plan.start,
                span: plan.span,
                details: vec![("files".into(), paths.len().to_string())],
            }
        }
        RealTarget::Raid0 { members, stripe } => {
            let names: Vec<String> = if plan.is_null() {
                (0..members.len()).map(|i| format!("null{i}")).collect()
            } else {
                plan.paths.iter().map(|p| p.name.clone()).collect()
            };
            TargetDesc {
                kind: TargetKind::Raid0,
                name: names.join(","),
                size: plan.size,
                engine: EngineKind::Unknown,
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

/// Everything [`run_real_jobs`] checks before it writes anything, for every job, without
/// writing.
pub fn check_real_jobs(jobs: &[RealJob<'_>]) -> Result<(), EngineError> {
    plan_jobs(jobs, &mut Vec::new()).map(|_| ())
}

/// A job's targets, engine and trace, checked.
struct Planned {
    plan: Plan,
    engine: EngineKind,
    trace: Option<Arc<Trace>>,
    need: u64,
}

/// The checks of [`run_real`] before the first write.
fn plan_real(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions<'_>,
    notes: &mut Vec<String>,
) -> Result<Planned, EngineError> {
    spec.validate()?;
    let plan = ssdlab_target::plan(
        spec,
        target,
        &PlanOptions {
            direct: opts.direct,
            allow_destroy: opts.allow_destroy,
            null_size: opts.null_size,
            create_dirs: opts.create_dirs,
        },
    )?;
    if (spec.verify || spec.verify_by_pattern) && plan.is_null() {
        return Err(Invalid::VerifyNeedsData.into());
    }
    notes.extend(plan.paths.iter().flat_map(|p| p.notes.iter().cloned()));
    let engine = choose_engine(spec, &plan, opts, notes)?;
    let what = match target {
        RealTarget::Null => "the null target".to_string(),
        RealTarget::Path(p) => p.display().to_string(),
        RealTarget::Raid0 { .. } => "the RAID 0 array".to_string(),
        RealTarget::Files(ps) => ps
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":"),
    };
    if spec.trims() {
        if plan.map.is_some() {
            return Err(Invalid::TrimStripe.into());
        }
        // (fio's file-operation engines take trims of a regular file: falloc punches holes,
        // ftruncate fails them with EINVAL)
        let takes = |k: PathKind| {
            k == PathKind::BlockDevice || (k == PathKind::File && opts.file_op != FileOp::Data)
        };
        if let Some(p) = plan.paths.iter().find(|p| !takes(p.info.kind)) {
            return Err(Invalid::TrimOnFile {
                path: p.name.clone(),
                what: if p.info.kind == PathKind::File {
                    "a regular file"
                } else {
                    "a character device"
                },
            }
            .into());
        }
    }
    let trace = load_trace(spec, plan.span, &what)?;
    if let Some(t) = &trace {
        let trims = t.shape().trims;
        if trims > 0 {
            return Err(Invalid::TrimOnReal { trims }.into());
        }
    }
    let (need, what) = memory_need(spec, &plan, engine, trace.as_deref());
    check_budget(&what, need.saturating_add(MEMORY_MARGIN), opts.max_memory)?;
    Ok(Planned {
        plan,
        engine,
        trace,
        need,
    })
}

/// Plans every job, then checks what they need together (memory; verification alone).
fn plan_jobs(jobs: &[RealJob<'_>], notes: &mut Vec<String>) -> Result<Vec<Planned>, EngineError> {
    let mut planned = Vec::with_capacity(jobs.len());
    for j in jobs {
        planned.push(plan_real(j.spec, j.target, j.opts, notes)?);
    }
    if jobs.len() > 1 {
        let need: u64 = planned.iter().map(|p| p.need).sum::<u64>() + MEMORY_MARGIN;
        check_budget(
            &format!("{} jobs running together", jobs.len()),
            need,
            jobs[0].opts.max_memory,
        )?;
    }
    for j in jobs {
        if let Some(t) = &j.iolog {
            crate::iolog::check_iolog_target(&t.path).map_err(Invalid::Output)?;
        }
    }
    Ok(planned)
}

/// Runs `spec` against a real target and returns the merged result of all workers.
///
/// Everything that can be checked is checked before the first byte is written: the targets
/// ([`ssdlab_target::plan()`]), the engine and its limits, the memory estimate. Only then are files
/// laid out; if the run cannot start after that, the layout is given back.
pub fn run_real(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions<'_>,
) -> Result<RunOutput, EngineError> {
    let mut out = run_real_jobs(&[RealJob {
        spec,
        target,
        opts,
        iolog: None,
    }])?;
    Ok(out.remove(0))
}

/// A file or device the jobs of a group use, opened once per direct-I/O setting and access
/// advice (advice belongs to an open file): the first open (`O_EXCL` for a block device written
/// to), then one per other setting.
struct Opened {
    files: Vec<((bool, Option<FileAdvice>), File)>,
}

/// Runs `jobs` together (fio's jobs between two stonewalls), each with its own workers, and
/// returns one output per job.
///
/// Every job is checked before anything is written; then the files all jobs need are laid out
/// (each once, to the largest size any job needs), every path is opened once (a block device
/// written to is held `O_EXCL` for the whole group) and shared by the workers, and all workers
/// start together.
pub fn run_real_jobs(jobs: &[RealJob<'_>]) -> Result<Vec<RunOutput>, EngineError> {
    let Some(first) = jobs.first() else {
        return Ok(Vec::new());
    };
    let shared = first.opts;
    let mut notes = Vec::new();
    let mut planned = plan_jobs(jobs, &mut notes)?;
    for (j, p) in jobs.iter().zip(planned.iter_mut()) {
        for pp in &mut p.plan.paths {
            pp.fill = j.opts.fill;
            pp.data = j.opts.layout_data;
            // (fio's filecreate lays nothing out: its I/Os create the files)
            if j.opts.file_op == FileOp::Create {
                pp.lay_out_to = None;
            }
        }
    }
    for n in &notes {
        (shared.on_note)(n);
    }
    // The written-map of each verifying job: read before anything is written (a map of
    // another target, or one that cannot be read, is bad input). Targets created by this run
    // have none yet. Verifying jobs run together only on paths no other job of the run uses
    // (checked below, before anything is written).
    let verifying: Vec<usize> = (0..jobs.len()).filter(|&j| jobs[j].spec.verify).collect();
    // Generations this run stamps start above its start time (ns), one base for all workers.
    let verify_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let stripe_of = |t: &RealTarget| match t {
        RealTarget::Raid0 { stripe, .. } => Some(*stripe),
        _ => None,
    };
    // Its place is checked before anything is written too (a place where it cannot be saved is
    // bad input).
    let mut verify_maps: Vec<Option<MapCtx>> = jobs.iter().map(|_| None).collect();
    for &j in &verifying {
        if jobs[j].spec.writes() {
            let place = match jobs[j].opts.verify_map {
                Some(p) => p.to_path_buf(),
                None => written::state_dir()?.join("verify").join("probe.map"),
            };
            written::check_map_location(&place)?;
        }
    }

    // The paths of all jobs, each once (by identity), laid out to the largest size asked.
    let mut merged = planned[0].plan.clone();
    merged.paths.clear();
    let mut ids: Vec<PathId> = Vec::new();
    // (each path's place in `ids`: a job may have hundreds of thousands of files)
    let mut index: std::collections::HashMap<PathId, usize> = std::collections::HashMap::new();
    let mut uses: Vec<Vec<usize>> = Vec::with_capacity(jobs.len());
    let mut writes_to: Vec<bool> = Vec::new();
    for (j, p) in planned.iter().enumerate() {
        let mut mine = Vec::new();
        for pp in &p.plan.paths {
            let id = PathId::of(&pp.info.path).map_err(|e| Invalid::Path {
                path: pp.info.path.display().to_string(),
                err: e.to_string(),
            })?;
            let i = match index.get(&id).copied() {
                Some(i) => {
                    let m = &mut merged.paths[i];
                    if let Some(to) = pp.lay_out_to {
                        m.lay_out_to = Some(m.lay_out_to.unwrap_or(0).max(to));
                        m.size = m.size.max(pp.size);
                    }
                    // A job that reads the file needs its data there.
                    if pp.fill == Fill::Data {
                        if m.fill != Fill::Data {
                            m.data = pp.data;
                        }
                        m.fill = Fill::Data;
                    }
                    i
                }
                None => {
                    index.insert(id.clone(), ids.len());
                    ids.push(id);
                    merged.paths.push(pp.clone());
                    writes_to.push(false);
                    ids.len() - 1
                }
            };
            // (fio's falloc engine opens its files read-write whatever the job does)
            writes_to[i] |= jobs[j].spec.writes() || jobs[j].opts.file_op != FileOp::Data;
            mine.push(i);
        }
        uses.push(mine);
    }
    for &j in &verifying {
        if (0..jobs.len()).any(|k| k != j && uses[k].iter().any(|i| uses[j].contains(i))) {
            return Err(Invalid::VerifyConcurrent.into());
        }
    }
    let load_map = |j: usize, infos: &[ssdlab_target::TargetInfo]| {
        load_verify_map(
            infos,
            stripe_of(jobs[j].target),
            jobs[j].opts,
            (planned[j].plan.start, planned[j].plan.span),
            jobs[j].spec.writes(),
        )
    };
    for &j in &verifying {
        if planned[j].plan.paths.iter().all(|p| p.info.exists) {
            let infos: Vec<_> = planned[j]
                .plan
                .paths
                .iter()
                .map(|p| p.info.clone())
                .collect();
            verify_maps[j] = Some(load_map(j, &infos)?);
        }
    }
    if jobs.len() > 1 {
        ssdlab_target::check_free_space(&merged.paths)?;
    }
    // Jobs that write without --verify: what they write is no longer known to the map.
    for (j, p) in jobs.iter().zip(&planned) {
        if !j.spec.writes() || j.spec.verify {
            continue;
        }
        match (j.target, &j.spec.files) {
            // Several files: each file's own map forgets the file's region.
            (RealTarget::Files(_), Some(f)) => {
                for (pp, r) in p.plan.paths.iter().zip(&f.regions) {
                    let mut one = p.plan.clone();
                    one.paths = vec![pp.clone()];
                    (one.start, one.span) = (r.offset, r.span);
                    forget_for_plain_write(&one, None, j.opts);
                }
            }
            _ => forget_for_plain_write(&p.plan, stripe_of(j.target), j.opts),
        }
    }

    if shared.read_only {
        if let Some(f) = merged.first_layout() {
            return Err(Invalid::ReadOnlyLayout(f.to_path_buf()).into());
        }
    }
    // The first write: lay out files that are missing or short (undone on drop unless committed).
    let note_sink = std::cell::RefCell::new(Vec::new());
    let mut laid = merged
        .lay_out(shared.stop, &|n: &str| {
            (shared.on_note)(n);
            note_sink.borrow_mut().push(n.to_string());
        })
        .map_err(EngineError::Layout)?;
    notes.extend(note_sink.into_inner());
    // (the files of jobs that work on files' names are not held open: an unlink of a file held
    // open would only take its name away — 4 µs where fio's filedelete takes 120–140 µs on
    // ext4; they are kept as laid out, as fio keeps them, if the run does not start)
    let names: std::collections::HashSet<std::path::PathBuf> = (0..jobs.len())
        .filter(|&j| jobs[j].opts.file_op.on_path())
        .flat_map(|j| uses[j].iter().map(|&i| laid.infos[i].path.clone()))
        .collect();
    if !names.is_empty() {
        laid.keep(&names);
    }
    for &j in &verifying {
        if verify_maps[j].is_none() {
            let infos: Vec<_> = uses[j].iter().map(|&i| laid.infos[i].clone()).collect();
            verify_maps[j] = Some(load_map(j, &infos)?);
        }
        if let (true, Some(ctx)) = (jobs[j].spec.writes(), &verify_maps[j]) {
            // Crash guard: until this run records what it wrote, its region is unknown.
            let (start, span) = (planned[j].plan.start, planned[j].plan.span);
            if let Err(e) = WrittenMap::update(&ctx.path, &ctx.key, |m| m.forget(start, span)) {
                (shared.on_note)(&format!(
                    "{e}; a crash during this run could leave it stale"
                ));
            }
        }
    }
    let wrote = laid.wrote();
    let setup_failed = |laid: &mut ssdlab_target::LaidOut, message: String| EngineError::Setup {
        message,
        wrote,
        cleanup: laid.undo(),
    };

    // Open every path once (per direct-I/O setting) before starting anything, so errors come
    // out cleanly; the workers get duplicates of these descriptors.
    let mut opened: Vec<Opened> = ids.iter().map(|_| Opened { files: Vec::new() }).collect();
    // (fio's filestat, filedelete and filecreate never open a file but with their operation:
    // an unlink with the file held open only takes its name away, and the file is to be created
    // by the run)
    let opens = |j: usize| !jobs[j].opts.file_op.on_path();
    for (j, mine) in uses.iter().enumerate().filter(|(j, _)| opens(*j)) {
        let direct = jobs[j].opts.direct;
        let key = (direct, jobs[j].opts.advice);
        for &i in mine {
            if opened[i].files.iter().any(|(d, _)| *d == key) {
                continue;
            }
            let info = &laid.infos[i];
            let f = if opened[i].files.is_empty() {
                open_target(info, writes_to[i], direct)
            } else {
                // The first open holds the device exclusively for the whole group.
                open_target_shared(info, writes_to[i], direct)
            };
            match f {
                Ok(f) => opened[i].files.push((key, f)),
                Err(e) => return Err(setup_failed(&mut laid, e.to_string())),
            }
        }
    }
    // Each worker's descriptors, in its job's path order.
    let mut worker_files: Vec<Vec<Vec<File>>> = Vec::with_capacity(jobs.len());
    // fio's file semantics before a job starts: its region read in (`pre_read`), or dropped
    // from the page cache (`invalidate`, fio's default), and the access advice
    // (`fadvise_hint`). Failures are notes, as in fio.
    for (j, mine) in uses.iter().enumerate().filter(|(j, _)| opens(*j)) {
        let o = jobs[j].opts;
        let key = (o.direct, o.advice);
        let (start, span) = (planned[j].plan.start, planned[j].plan.span);
        let single = mine.len() == 1;
        for &i in mine {
            let info = &laid.infos[i];
            // /dev/null and /dev/zero have no page cache (fio skips them too)
            if info.kind == PathKind::CharDevice {
                continue;
            }
            let Some((_, f)) = opened[i].files.iter().find(|(d, _)| *d == key) else {
                continue;
            };
            // A stripe member: its whole file.
            let (off, len) = if single { (start, span) } else { (0, 0) };
            let block = info.kind == PathKind::BlockDevice;
            if o.pre_read && !o.direct {
                if let Err(e) = ssdlab_io::cache::read_in(f, off, len, 1 << 20, o.stop) {
                    (o.on_note)(&format!("pre_read of {} failed: {e}", info.path.display()));
                }
            } else if o.invalidate {
                if let Err(e) = ssdlab_io::cache::drop_cache(f, block, off, len) {
                    let n = format!(
                        "cache invalidation of {} failed: {e}{}",
                        info.path.display(),
                        if block {
                            " (only root may flush a block device's cache)"
                        } else {
                            ""
                        }
                    );
                    (o.on_note)(&n);
                    notes.push(n);
                }
            }
            if let Some(a) = o.advice {
                if let Err(e) = ssdlab_io::cache::advise(f, off, len, a) {
                    (o.on_note)(&format!("fadvise of {} failed: {e}", info.path.display()));
                }
            }
        }
    }
    for (j, mine) in uses.iter().enumerate() {
        let direct = jobs[j].opts.direct;
        let key = (direct, jobs[j].opts.advice);
        let mut per_worker = Vec::new();
        for _ in 0..jobs[j].spec.jobs {
            let mut fs = Vec::new();
            for &i in mine.iter().filter(|_| opens(j)) {
                let (_, f) = opened[i]
                    .files
                    .iter()
                    .find(|(d, _)| *d == key)
                    .expect("opened above");
                match f.try_clone() {
                    Ok(f) => fs.push(f),
                    Err(e) => {
                        return Err(setup_failed(
                            &mut laid,
                            format!("cannot duplicate a file descriptor: {e}"),
                        ))
                    }
                }
            }
            per_worker.push(fs);
        }
        worker_files.push(per_worker);
    }
    // The iolog parts, one per worker.
    let mut parts: Vec<Vec<Option<PartWriter>>> = Vec::with_capacity(jobs.len());
    for j in jobs {
        let mut v = Vec::new();
        for w in 0..j.spec.jobs as usize {
            v.push(match &j.iolog {
                Some(t) => match t.open_part(w) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        for (pv, j2) in parts.into_iter().zip(jobs) {
                            if let Some(t2) = &j2.iolog {
                                t2.abandon(pv.into_iter().flatten().collect());
                            }
                        }
                        if let Some(t2) = &j.iolog {
                            t2.abandon(v.into_iter().flatten().collect());
                        }
                        return Err(setup_failed(&mut laid, e.to_string()));
                    }
                },
                None => None,
            });
        }
        parts.push(v);
    }
    // fio drops the page cache again each time a buffered job starts a new pass over its
    // region (`loop_cache_invalidate`).
    type PassFn = Box<dyn Fn() + Sync>;
    let pass_drops: Vec<Option<PassFn>> = jobs
        .iter()
        .enumerate()
        .map(|(j, job)| {
            let o = job.opts;
            if !o.invalidate || o.direct || o.pre_read || uses[j].len() != 1 {
                return None;
            }
            let i = uses[j][0];
            if laid.infos[i].kind == PathKind::CharDevice {
                return None;
            }
            let key = (o.direct, o.advice);
            let f = opened[i]
                .files
                .iter()
                .find(|(d, _)| *d == key)?
                .1
                .try_clone()
                .ok()?;
            let block = laid.infos[i].kind == PathKind::BlockDevice;
            let (start, span) = (planned[j].plan.start, planned[j].plan.span);
            Some(Box::new(move || {
                let _ = ssdlab_io::cache::drop_cache(&f, block, start, span);
            }) as PassFn)
        })
        .collect();
    let ctls: Vec<Control<'_>> = jobs
        .iter()
        .zip(&pass_drops)
        .map(|(j, pass)| {
            let mut c = Control::new(j.spec.ramp_ns, j.spec.stop.time_ns, max_ios(j.spec))
                .with_delay(j.spec.start_delay_ns)
                .with_steady(j.spec.steady)
                .with_steady_group(j.opts.steady_group)
                .with_min_rate(j.spec.min_rate)
                .with_latency_target(j.spec.latency_target)
                .with_rate_offload(j.spec.rate_offload)
                .with_completions(j.spec.completions)
                .with_verify_fatal(j.spec.verify_fatal)
                .with_fill_device(j.spec.fill_device)
                .with_max_latency(j.spec.max_latency_ns)
                .with_bytes(byte_budget(j.spec))
                .with_stop(j.opts.stop)
                .with_progress(j.opts.progress)
                .with_stonewall(j.opts.stonewall)
                .with_on_end(j.opts.on_end)
                .with_flow(j.opts.flow)
                .with_on_pass(pass.as_deref().map(OnPass));
            c.continue_on_error = j.opts.continue_on_error;
            c.non_fatal = j.opts.non_fatal;
            c.name_ops = j.opts.file_op.on_path();
            c
        })
        .collect();
    let nworkers: usize = jobs.iter().map(|j| j.spec.jobs as usize).sum();
    // The number (from 1) of each job's first worker, as logs name them (fio's job numbers).
    let first_worker: Vec<u32> = jobs
        .iter()
        .scan(1u32, |next, j| {
            let first = *next;
            *next += j.spec.jobs;
            Some(first)
        })
        .collect();
    let gate = Gate::new(nworkers, shared.start_hook);
    let cpu_window = CpuWindow::default();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let ru0 = cpu::rusage_self();
    let watched: Vec<&std::path::Path> = laid.infos.iter().map(|i| i.path.as_path()).collect();
    let disks = DiskWatch::start(&watched);
    let names: Vec<Vec<String>> = jobs
        .iter()
        .zip(&planned)
        .map(|(j, p)| match j.target {
            RealTarget::Raid0 { members, .. } if p.plan.is_null() => {
                (0..members.len()).map(|i| format!("null{i}")).collect()
            }
            _ => p.plan.paths.iter().map(|pp| pp.name.clone()).collect(),
        })
        .collect();
    let known: Vec<Option<&WrittenMap>> = verify_maps
        .iter()
        .map(|c| c.as_ref().map(|c| &c.map))
        .collect();
    // (job, worker) → what the worker brought back.
    let results: Vec<(usize, io::Result<WorkerOut>)> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut spawn_error = None;
        'jobs: for (j, (files, job_parts)) in worker_files.into_iter().zip(parts).enumerate() {
            let job = &jobs[j];
            let spec = job.spec;
            let opts = job.opts;
            let pl = &planned[j];
            let log_target = job.iolog.as_ref();
            // A job's several files: where each begins in its address space.
            let reap_max = match opts.reap_max {
                0 => usize::MAX,
                n => n as usize,
            };
            let bases: Vec<u64> = match job.target {
                RealTarget::Files(_) => spec.files.as_ref().map(Files::bases).unwrap_or_default(),
                _ => Vec::new(),
            };
            for (w, (mut fs, part)) in files.into_iter().zip(job_parts).enumerate() {
                let (ctl, gate, cpu_window, names) = (&ctls[j], &gate, &cpu_window, &names[j]);
                let known = known[j];
                let first_worker = &first_worker;
                let plan = &pl.plan;
                let engine = pl.engine;
                let bases = bases.clone();
                let trace = pl.trace.clone();
                let h = std::thread::Builder::new()
                    .name(format!("ssdlab-worker-{j}.{w}"))
                    .spawn_scoped(scope, move || -> io::Result<WorkerOut> {
                        if let Some(cpus) = worker_cpus(spec, first_worker[j] + w as u32) {
                            ssdlab_io::cpu::pin_thread(cpus)?;
                        }
                        if let Some(p) = &opts.mem_policy {
                            // (as fio: a policy the kernel refuses is said, and the job runs)
                            if let Err(e) = ssdlab_io::numa::set_mem_policy(p) {
                                (opts.on_note)(&format!(
                                    "set_mempolicy: {e} (the job runs without its memory policy, as in fio)"
                                ));
                            }
                        }
                        // (fio fails the job when either is refused)
                        if opts.nice != 0 {
                            ssdlab_io::cpu::nice_thread(opts.nice)?;
                        }
                        if let Some((class, level)) = opts.io_priority {
                            ssdlab_io::cpu::set_io_priority(class, level)?;
                        }
                        let source = match &opts.ops {
                            Some(ops) => OpSource::List(OpList::new(Arc::clone(ops), 0)),
                            None => OpSource::for_worker(
                                spec,
                                trace.as_ref(),
                                plan.start,
                                plan.span,
                                w as u32,
                            ),
                        };
                        let rec = Recorder::with_log(
                            opts.log,
                            first_worker[j] + w as u32,
                            1,
                            spec.stop.time_ns.unwrap_or(0),
                        );
                        let bs = spec.bs as usize;
                        let align = plan.buf_align;
                        let work = Job {
                            gate,
                            cpu: cpu_window,
                            ctl,
                            qd: spec.qd,
                            data: DataOpts {
                                pattern: spec.pattern,
                                pattern_seed: worker_seed(spec.seed ^ 0xda7a, w as u32),
                                verify: spec.verify.then_some(spec.seed),
                                known,
                                verify_epoch,
                                check_pattern: spec
                                    .verify_by_pattern
                                    .then(|| spec.pattern.fixed_bytes())
                                    .flatten(),
                                dedupe: spec.dedupe.map(|d| d.for_worker(w as u32)),
                                refill_after_read: spec.refill_after_read,
                                // (fio keeps the pieces of a job with a random map in the
                                // order written, others by offset)
                                backlog: spec.verify_backlog.map(|cfg| BacklogOpts {
                                    cfg,
                                    by_offset: !(spec.random_pct > 0 && spec.random_map),
                                }),
                                unverified: opts.unverified,
                                headers_required: spec.verify_headers_required,
                            },
                            fault: opts.fault,
                            log_writes: spec.verify && spec.writes(),
                            iolog: part.zip(log_target),
                        };
                        let origin = Instant::now();
                        match (&plan.map, engine) {
                            (None, EngineKind::IoUring) if !bases.is_empty() => work.run(
                                UringBackend::with_files_opts(
                                    fs, spec.qd, spec.qd, bs, align, &opts.ring,
                                )
                                .map(|mut ring| {
                                    ring.set_submit_batch(opts.submit_batch);
                                    UringAdapter {
                                        origin,
                                        ring,
                                        bases,
                                        trims: Trims::new(None, spec.qd),
                                        reap_max,
                                    }
                                }),
                                source,
                                rec,
                            ),
                            // fio's filestat, filedelete, filecreate: each I/O an operation
                            // on a file's name
                            (None, EngineKind::Sync) if opts.file_op.on_path() => work.run(
                                SyncBackend::on_paths(
                                    plan.paths.iter().map(|p| p.info.path.clone()).collect(),
                                    spec.qd,
                                    bs,
                                    align,
                                    opts.sync_mode,
                                )
                                .map(|pool| SyncAdapter {
                                    origin,
                                    pool: pool.with_file_op(opts.file_op),
                                    bases,
                                    trims: Trims::new(None, spec.qd),
                                }),
                                source,
                                rec,
                            ),
                            (None, EngineKind::Sync) if !bases.is_empty() => work.run(
                                SyncBackend::with_files(fs, spec.qd, bs, align, opts.sync_mode)
                                    .map(|pool| SyncAdapter {
                                        origin,
                                        pool: pool.with_file_op(opts.file_op),
                                        bases,
                                        trims: Trims::new(None, spec.qd),
                                    }),
                                source,
                                rec,
                            ),
                            (Some(map), _) if fs.is_empty() => work.run(
                                Ok(StripeAdapter::new(
                                    origin,
                                    map.clone(),
                                    NullMembers::default(),
                                    spec.qd,
                                    names.clone(),
                                )),
                                source,
                                rec,
                            ),
                            (Some(map), _) => {
                                let pieces = max_pieces(map, spec.bs) as u32;
                                let ring = UringBackend::with_files_opts(
                                    fs,
                                    spec.qd,
                                    spec.qd.saturating_mul(pieces),
                                    bs,
                                    align,
                                    &opts.ring,
                                )
                                .map(|mut r| {
                                    r.set_submit_batch(opts.submit_batch);
                                    r
                                });
                                work.run(
                                    ring.map(|r| {
                                        StripeAdapter::new(
                                            origin,
                                            map.clone(),
                                            r,
                                            spec.qd,
                                            names.clone(),
                                        )
                                    }),
                                    source,
                                    rec,
                                )
                            }
                            (None, EngineKind::IoUring) => work.run(
                                trim_handle(spec, &fs).and_then(|t| {
                                    UringBackend::new_with(
                                        fs.remove(0),
                                        spec.qd,
                                        bs,
                                        align,
                                        &opts.ring,
                                    )
                                    .map(|mut ring| {
                                        ring.set_submit_batch(opts.submit_batch);
                                        UringAdapter {
                                            origin,
                                            ring,
                                            bases: Vec::new(),
                                            trims: Trims::new(t, spec.qd),
                                            reap_max,
                                        }
                                    })
                                }),
                                source,
                                rec,
                            ),
                            (None, EngineKind::Sync) => work.run(
                                trim_handle(spec, &fs).and_then(|t| {
                                    SyncBackend::with_mode(
                                        fs.remove(0),
                                        spec.qd,
                                        bs,
                                        align,
                                        opts.sync_mode,
                                    )
                                    .map(|pool| SyncAdapter {
                                        origin,
                                        pool: pool.with_file_op(opts.file_op),
                                        bases: Vec::new(),
                                        trims: Trims::new(t, spec.qd).with_op(opts.file_op),
                                    })
                                }),
                                source,
                                rec,
                            ),
                            _ => work.run(
                                Ok(NullBackend {
                                    origin,
                                    pending: Vec::with_capacity(spec.qd as usize),
                                }),
                                source,
                                rec,
                            ),
                        }
                    });
                match h {
                    Ok(h) => handles.push((j, h)),
                    Err(e) => {
                        spawn_error = Some(e);
                        break 'jobs;
                    }
                }
            }
        }
        if let Some(e) = spawn_error {
            // No thread, no I/O: stop the others, who wait at the gate for it.
            for c in &ctls {
                c.error_stop.store(true, Ordering::SeqCst);
            }
            gate.abort();
            let mut out: Vec<(usize, io::Result<WorkerOut>)> = handles
                .into_iter()
                .map(|(j, h)| {
                    (
                        j,
                        h.join()
                            .unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked"))),
                    )
                })
                .collect();
            out.push((
                0,
                Err(io::Error::other(format!("cannot start worker thread: {e}"))),
            ));
            return out;
        }
        handles
            .into_iter()
            .map(|(j, h)| {
                (
                    j,
                    h.join()
                        .unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked"))),
                )
            })
            .collect()
    });
    let mut per_job: Vec<Vec<(Recorder, LoopOutcome, Vec<MemberStats>)>> =
        (0..jobs.len()).map(|_| Vec::new()).collect();
    let mut job_parts: Vec<Vec<PartWriter>> = (0..jobs.len()).map(|_| Vec::new()).collect();
    let mut setup_error = None;
    let mut write_logs: Vec<WriteLog> = jobs.iter().map(|_| WriteLog::default()).collect();
    // Whether every worker's error is the start hook's refusal (none failed on its own).
    let mut all_refused = true;
    for (j, r) in results {
        if let Err(e) = &r {
            if !is_refusal(e) {
                all_refused = false;
            }
        }
        match r {
            Ok((rec, out, ms, log, part)) => {
                if let Some(l) = log {
                    write_logs[j].merge(&l);
                }
                if let Some(p) = part {
                    job_parts[j].push(p);
                }
                per_job[j].push((rec, out, ms));
            }
            Err(e) if is_refusal(&e) && setup_error.is_some() => {}
            Err(e) => setup_error = Some((j, e)),
        }
    }
    // The start hook said no (every worker set up fine, or the only errors are its refusal): no
    // I/O was issued by anyone.
    let refusal = match (gate.refused(), &setup_error) {
        (Some(why), None) => Some(why),
        (Some(why), Some(_)) if all_refused => Some(why),
        _ => None,
    };
    if let Some(why) = refusal {
        for (parts, job) in job_parts.into_iter().zip(jobs) {
            if let Some(t) = &job.iolog {
                t.abandon(parts);
            }
        }
        return Err(setup_failed(&mut laid, why));
    }
    if let Some((j, e)) = setup_error {
        // A worker could not set up its engine: no I/O was issued by anyone.
        for (parts, job) in job_parts.into_iter().zip(jobs) {
            if let Some(t) = &job.iolog {
                t.abandon(parts);
            }
        }
        let what = match planned[j].engine {
            EngineKind::IoUring => "cannot set up io_uring",
            EngineKind::Sync => "cannot start I/O threads",
            EngineKind::Null | EngineKind::Sim | EngineKind::Unknown => "cannot start the run",
        };
        return Err(setup_failed(&mut laid, format!("{what}: {e}")));
    }
    let disk_util = disk_util(disks.finish());
    laid.commit();
    for &j in &verifying {
        let (true, Some(ctx)) = (jobs[j].spec.writes(), &verify_maps[j]) else {
            continue;
        };
        // Merged under the map's lock with what concurrent runs recorded meanwhile; the
        // sectors of the region this run did not write keep what was known of them before.
        let seed = jobs[j].spec.seed;
        let write_log = &write_logs[j];
        let (start, span) = (planned[j].plan.start, planned[j].plan.span);
        match WrittenMap::update(&ctx.path, &ctx.key, |m| {
            m.restore(&ctx.map, start, span, write_log);
            m.record(seed, write_log)
        }) {
            Ok(map) => (shared.on_note)(&format!(
                "verify map {}: {} sectors written by this run; {map}",
                ctx.path.display(),
                write_log.written_sectors()
            )),
            Err(e) => (shared.on_note)(&format!(
                "{e}; a later verifying read cannot tell lost data from unwritten sectors"
            )),
        }
    }
    let ru = cpu_window
        .usage()
        .unwrap_or_else(|| cpu::rusage_self().since(&ru0));
    let cpu_usage = CpuUsage {
        user_ns: ru.user_ns,
        sys_ns: ru.sys_ns,
        ctx: ru.nvcsw + ru.nivcsw,
        majf: ru.majflt,
        minf: ru.minflt,
    };
    let mut outputs = Vec::with_capacity(jobs.len());
    for (j, workers) in per_job.into_iter().enumerate() {
        let job = &jobs[j];
        let pl = &planned[j];
        let mut merged_rec = Recorder::default();
        let mut outcome = LoopOutcome::default();
        let mut members: Vec<MemberStats> = Vec::new();
        let mut worker_results = Vec::new();
        let mut worker_recorders = Vec::new();
        for (rec, out, ms) in &workers {
            merged_rec.merge(rec);
            outcome = crate::engine_loop::merge_outcomes(&[outcome, *out]);
            merge_members(&mut members, ms.clone());
        }
        let mut desc = target_desc(&pl.plan, job.target);
        desc.engine = pl.engine;
        if job.opts.per_worker {
            let mut one = job.spec.clone();
            one.jobs = 1;
            for (rec, out, ms) in &workers {
                let mut r = build_result(&one, desc.clone(), rec, *out, started, cpu_usage.clone());
                r.members = ms.clone();
                worker_results.push(r);
                worker_recorders.push(rec.clone());
            }
        }
        let mut iolog_error = None;
        if let Some(t) = &job.iolog {
            let parts = std::mem::take(&mut job_parts[j]);
            let end_us = (outcome.runtime_ns + outcome.ramp_ns) / 1000;
            if let Err(e) = t.finish(parts, end_us) {
                iolog_error = Some(e.to_string());
            }
        }
        let mut result = build_result(
            job.spec,
            desc,
            &merged_rec,
            outcome,
            started,
            cpu_usage.clone(),
        );
        result.members = members;
        result.fio_steadystate = ctls[j].take_steady();
        // The kernel's counters of every device the group used (fio reports them per run).
        result.disk_util = disk_util.clone();
        if job.spec.verify || job.spec.verify_by_pattern {
            result.verify = Some(merged_rec.verify.clone());
        }
        outputs.push(RunOutput {
            result,
            notes: if j == 0 { notes.clone() } else { Vec::new() },
            workers: worker_results,
            recorder: merged_rec,
            outcome,
            worker_recorders,
            iolog_error,
        });
    }
    Ok(outputs)
}

/// The kernel's counters of the devices under the targets, as the result carries them.
fn disk_util(deltas: Vec<DiskDelta>) -> Vec<DiskUtil> {
    deltas
        .into_iter()
        .map(|d| {
            let c = d.counters;
            DiskUtil {
                name: d.disk.name,
                read_ios: c.ios[0],
                write_ios: c.ios[1],
                read_merges: c.merges[0],
                write_merges: c.merges[1],
                read_sectors: c.sectors[0],
                write_sectors: c.sectors[1],
                read_ticks_ms: c.ticks[0],
                write_ticks_ms: c.ticks[1],
                io_ticks_ms: c.io_ticks,
                in_queue_ms: c.time_in_queue,
                msec: d.msec,
                slaves: d.disk.slaves,
            }
        })
        .collect()
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

/// The byte budget of ops of varying sizes (fio's bytes to issue), when there is one: ops are
/// issued while any bytes are left, so the last one may pass it, as in fio.
pub(crate) fn byte_budget(spec: &WorkloadSpec) -> Option<u64> {
    spec.stop.bytes.filter(|_| spec.block_sizes.is_some())
}

/// The I/O budget implied by `--ios` and `--bytes` (the smaller wins).
pub(crate) fn max_ios(spec: &WorkloadSpec) -> Option<u64> {
    // Ops of varying sizes count bytes instead ([`byte_budget`]).
    let by_bytes = spec
        .stop
        .bytes
        .filter(|_| spec.block_sizes.is_none())
        .map(|b| b.div_ceil(spec.bs));
    match (spec.stop.ios, by_bytes) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Turns a merged recorder into the result every front end shows.
/// The CPUs fio's `cpus_allowed` gives the worker numbered `thread` (from 1, as logs number
/// them): all of them, or with `cpus_allowed_policy=split` the (thread − 1)-th modulo their
/// count (fio's `fio_cpus_split`); `None` without `cpus_allowed`.
fn worker_cpus(spec: &WorkloadSpec, thread: u32) -> Option<&[u32]> {
    let cpus = spec.cpus_allowed.as_deref().filter(|c| !c.is_empty())?;
    Some(if spec.cpus_split {
        let i = thread.saturating_sub(1) as usize % cpus.len();
        &cpus[i..i + 1]
    } else {
        cpus
    })
}

pub fn build_result(
    spec: &WorkloadSpec,
    target: TargetDesc,
    rec: &Recorder,
    out: LoopOutcome,
    timestamp_ms: u64,
    cpu: CpuUsage,
) -> RunResult {
    RunResult {
        timestamp_ms,
        interrupted: out.interrupted,
        stopped_on_error: out.stopped_on_error,
        stonewalled: out.stonewalled,
        latency_depth: spec.latency_target.map(|_| out.latency_depth),
        cpu,
        ..RunResult::from_recorder(spec, target, rec, out.runtime_ns, out.ramp_ns)
    }
}

#[cfg(test)]
mod cpu_tests {
    use super::*;

    /// fio's cpus_allowed_policy: shared gives every thread the list, split one CPU each in
    /// turn by thread number.
    #[test]
    fn workers_get_their_cpus_as_fio_gives_them() {
        let mut spec = WorkloadSpec {
            cpus_allowed: Some(vec![2, 5, 7]),
            ..Default::default()
        };
        assert_eq!(worker_cpus(&spec, 1), Some(&[2, 5, 7][..]));
        spec.cpus_split = true;
        let got: Vec<u32> = (1..=4).map(|t| worker_cpus(&spec, t).unwrap()[0]).collect();
        assert_eq!(got, [2, 5, 7, 2]);
        spec.cpus_allowed = None;
        assert!(worker_cpus(&spec, 1).is_none());
    }
}
