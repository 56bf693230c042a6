//! The loop itself, shared by every backend: closed (a completion frees a slot, the next op is
//! issued at once) for generated ops, open with stalls for replayed ones (an op waits for its
//! gap after the previous issue, on the backend's clock: wall time for real targets, virtual
//! time for simulated ones).

use crate::backend::{Backend, Cqe};
use crate::backlog::Backlog;
use ssdlab_stats::Recorder;
use ssdlab_target::written::{WriteLog, WrittenMap};
use ssdlab_workload::{verify, Next, Op, OpGen, OpKind, OpSource, Pattern};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Wall time a wait may block before the loop looks at the stop flags again.
const WAIT_SLICE_NS: u64 = 100_000_000;
/// How often (backend clock) a loop adds what it measured to the shared [`Progress`].
const PROGRESS_NS: u64 = 100_000_000;
/// How long a loop whose streams are all held back by fio's flow control (without
/// `flow_sleep`) waits before it looks again, when nothing of its own is in flight (fio spins).
const FLOW_POLL_NS: u64 = 500;

/// fio's flow control (`flow`, `flow_id`; fio's `flow.c`): the jobs of one flow id share a
/// counter (from 1) and a total weight (the sum of their `flow`, every clone counted). Before
/// each I/O a job compares its own counter over the shared one with its weight over the total:
/// above, it does not issue (and retries); else both counters go up by one and it issues. A
/// job that ends takes its counter and its weight back out, so the others run free of it.
#[derive(Debug)]
pub struct Flow {
    counter: AtomicU64,
    weight: AtomicU32,
}

impl Default for Flow {
    fn default() -> Self {
        Flow {
            counter: AtomicU64::new(1),
            weight: AtomicU32::new(0),
        }
    }
}

impl Flow {
    /// A member of weight `weight` joins (fio's `flow_init_job`, at parse time for every clone).
    /// fio's weights are unsigned ints added with wrap-around (a negative `flow` is taken
    /// as its two's complement).
    pub fn join(&self, weight: u32) {
        self.weight.fetch_add(weight, Ordering::Relaxed);
    }

    /// A member that counted `count` I/Os and weighs `weight` leaves (fio's `flow_exit_job`).
    pub fn leave(&self, count: u64, weight: u32) {
        self.counter.fetch_sub(count, Ordering::Relaxed);
        self.weight.fetch_sub(weight, Ordering::Relaxed);
    }

    /// The shared counter and the total weight.
    pub fn state(&self) -> (u64, u32) {
        (
            self.counter.load(Ordering::Relaxed),
            self.weight.load(Ordering::Relaxed),
        )
    }

    /// fio's `flow_threshold_exceeded`: whether a member that counted `mine` I/Os and weighs
    /// `weight` may issue one more; when it may, the shared counter counts it (the member
    /// counts it in its own).
    fn admits(&self, mine: u64, weight: u32) -> bool {
        let (counter, total) = self.state();
        // fio's doubles: a total of 0 (weights that wrapped round) gives an infinite share.
        if mine as f64 / counter as f64 > weight as f64 / total as f64 {
            return false;
        }
        self.counter.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Takes back an admission whose I/O was not issued after all.
    fn unadmit(&self) {
        self.counter.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A unit's membership of a [`Flow`]: every stream (fio clone) of the unit is a member of this
/// weight with its own counter.
#[derive(Debug, Clone, Copy)]
pub struct FlowShare<'a> {
    pub flow: &'a Flow,
    /// fio's `flow`, as the unsigned int fio keeps.
    pub weight: u32,
    /// fio's `flow_sleep`, ns: a stream held back first waits for its I/Os in flight, then
    /// this long, before it looks again (0: it looks again at once).
    pub sleep_ns: u64,
}

/// What the workers of a run measured so far, for a status line: updated by each loop every
/// 100 ms of its clock (not per I/O), read from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Measured I/Os and bytes completed, all kinds.
    pub ios: AtomicU64,
    pub bytes: AtomicU64,
    /// The furthest measured time any worker has reached, ns on the backend clock (virtual
    /// time for simulated runs).
    pub t_ns: AtomicU64,
}

/// Stop conditions and shared state of one run (shared by all workers of the run).
#[derive(Debug)]
pub struct Control<'a> {
    /// Nothing is issued for this long after the loop starts (fio's `startdelay`); the ramp
    /// and the measured time come after it. ns on the backend clock.
    pub delay_ns: u64,
    /// Ramp time, ns on the backend clock.
    pub ramp_ns: u64,
    /// Measured time limit, ns.
    pub time_ns: Option<u64>,
    /// Measured I/Os still allowed to be issued (all workers together); `u64::MAX` = unlimited.
    pub budget: AtomicU64,
    /// Keep going after an I/O error (the errors [`Control::non_fatal`] allows, when it is
    /// set).
    pub continue_on_error: bool,
    /// fio's rule for which errors `continue_on_error` goes on after; `None`: every error.
    pub non_fatal: Option<NonFatal>,
    /// The I/Os are operations on files' names (fio's `filestat`, `filedelete`,
    /// `filecreate`), which fio does when it opens each file: one that fails is the job's
    /// error, but no I/O, and the job goes on with its next file.
    pub name_ops: bool,
    /// Set when any worker stops because of an error, so the others stop too.
    pub error_stop: AtomicBool,
    /// Raised from outside (Ctrl-C, SIGTERM, a sweep being stopped): stop issuing, drain, report
    /// what was measured, marked interrupted.
    pub stop: Option<&'a AtomicBool>,
    /// Raised by whoever coordinates several runs (other ranks of a job: IOR's stonewalling, or
    /// another rank's failure): stop issuing and drain like `stop`, but the run is not marked
    /// interrupted; its outcome says `stonewalled`.
    pub stonewall: Option<&'a AtomicBool>,
    /// Where the loops report what they measured so far (for a status line).
    pub progress: Option<&'a Progress>,
    /// Called when a generated source starts a new pass over its region (the random map
    /// begins again, a sequential job wraps to the start): fio drops the page cache there.
    pub on_pass: Option<OnPass<'a>>,
    /// Measured bytes still allowed to be issued, for ops of varying sizes (`u64::MAX`:
    /// unlimited): an op is issued while any are left, as fio issues until its bytes are
    /// reached.
    pub bytes_left: AtomicU64,
    /// fio's `steadystate`: the unit ends when its samples meet this criterion.
    pub steady: Option<ssdlab_workload::SteadyCriterion>,
    /// What the steady-state check found, left here by the loop (one loop per unit).
    pub steady_out: std::sync::Mutex<Option<ssdlab_stats::FioSteadyState>>,
    /// fio's `group_reporting` with `steadystate`: the unit is one member of a reporting group
    /// checked together ([`SteadyGroup`]); `steady` is then the group's criterion.
    pub steady_group: Option<SteadyMember<'a>>,
    /// fio's `rate_min`/`rate_iops_min`: the unit fails when a direction falls below them.
    pub min_rate: Option<ssdlab_workload::MinRate>,
    /// fio's `latency_target`: each stream of the unit searches its queue depth (fio's
    /// `lat_target_*`).
    pub latency_target: Option<ssdlab_workload::LatencyTarget>,
    /// fio's `io_submit_mode=offload`: an I/O ahead of its rate does not wait for the I/Os in
    /// flight first.
    pub rate_offload: bool,
    /// fio's `max_latency` per direction, ns (0: none): an I/O above it fails (ETIMEDOUT).
    pub max_latency_ns: Option<[u64; 3]>,
    /// fio's `verify_fatal`: a verify failure ends the unit, even one it goes past.
    pub verify_fatal: bool,
    /// fio's `fill_device`: a write that finds the file system full (ENOSPC, EDQUOT, or a
    /// short write) ends the unit without an error.
    pub fill_device: bool,
    /// Called once when the unit stops, whatever stopped it, with whether it stopped on an
    /// error (fio's `exitall` and `exitall_on_error`: the job that ends terminates the others
    /// of its `exit_what` scope).
    pub on_end: Option<OnEnd<'a>>,
    /// fio's flow control: every stream of the unit is a member of this flow.
    pub flow: Option<FlowShare<'a>>,
    /// fio's batched completions (`iodepth_batch_complete_min`, `iodepth_low`) for each
    /// stream of the unit.
    pub completions: Option<ssdlab_workload::CompletionBatch>,
}

impl Control<'_> {
    /// Whether the unit goes on after an error `errno` of an op of `kind` (a verify mismatch is
    /// EILSEQ).
    #[cold]
    pub fn continues(&self, kind: OpKind, errno: i32) -> bool {
        self.continue_on_error && self.non_fatal.is_none_or(|n| n.continues(kind, errno))
    }

    /// fio's handling of an error `errno` of an op of `kind`, found where `found` says
    /// (`td_non_fatal_error`, `break_on_this_error`, `update_error_count`): it is gone past
    /// when non-fatal, and counted in `rec`'s tally then; an error that ends the job is its
    /// error, and is counted as [`NonFatal::counts_fatal`] says; every worker of the unit then
    /// stops. Returns whether the unit goes on.
    #[cold]
    pub fn on_error(&self, rec: &mut Recorder, kind: OpKind, errno: i32, found: Found) -> bool {
        let goes_on = found != Found::NothingMoved && self.continues(kind, errno);
        if goes_on {
            rec.tally.count(errno);
            return true;
        }
        let counted = match self.non_fatal {
            Some(n) => n.counts_fatal(kind, errno, found),
            None => self.continue_on_error.then_some(errno),
        };
        if let Some(e) = counted {
            rec.tally.count(e);
        }
        rec.tally.end(errno);
        self.error_stop.store(true, Ordering::Relaxed);
        false
    }
}

/// Where an I/O's error was found, which decides how fio counts one that ends the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The transfer failed: the kernel's (or the backend's) errno.
    Transfer,
    /// Found once the transfer had completed: the data read back failed verification
    /// (EILSEQ), or the I/O took longer than a latency limit (ETIMEDOUT).
    Verify,
    /// The transfer moved nothing at all (fio's "full resid"): it always ends the job.
    NothingMoved,
}

/// fio's rule for the errors `continue_on_error` goes on after (`td_non_fatal_error`): an error
/// is of the verify class when it is EILSEQ, else of its op's direction (read, or write for
/// writes and trims); it is non-fatal when `continue_on_error` names its class and the class's
/// list holds its errno (fio's `ignore_error`; by default EIO and EILSEQ). Any other error ends
/// the job, whatever `continue_on_error` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NonFatal {
    /// The classes `continue_on_error` names: read (bit 0), write (bit 1), verify (bit 2).
    pub classes: u8,
    /// Per class, the errnos it goes on after.
    pub lists: [ErrnoList; 3],
    /// The job runs one of fio's synchronous engines (`psync`, `sync`, `pvsync`, …), which
    /// count an error that ends the job differently ([`NonFatal::counts_fatal`]).
    pub sync_engine: bool,
}

impl NonFatal {
    /// Whether an error `errno` of an op of `kind` is non-fatal.
    pub fn continues(&self, kind: OpKind, errno: i32) -> bool {
        let class = Self::class(kind, errno);
        self.classes & (1 << class) != 0 && self.lists[class as usize].contains(errno)
    }

    /// Whether `continue_on_error` names the class of an error `errno` of an op of `kind`.
    pub fn names_class(&self, kind: OpKind, errno: i32) -> bool {
        self.classes & (1 << Self::class(kind, errno)) != 0
    }

    /// The errno fio counts (`update_error_count`) for an error that ends the job, if any.
    /// fio counts it in `break_on_this_error` only when `continue_on_error` names the class of
    /// the errno it gets there. Its synchronous engines get there with a failed transfer's
    /// errno (or EIO for one that moved nothing), and with 1 for data that failed
    /// verification — the `-ret` of the -1 its completion returns, of the read class
    /// (`continue_on_error=read` with psync counts a verify mismatch as error 1); its
    /// asynchronous engines never get there with an error found at completion. Measured with
    /// fio 3.33: a write to a full tmpfs with `continue_on_error=write` gives `total_err` 1
    /// and `first_error` 28 with psync, 0 and 0 with io_uring and libaio.
    pub fn counts_fatal(&self, kind: OpKind, errno: i32, found: Found) -> Option<i32> {
        if !self.sync_engine {
            return None;
        }
        let e = match found {
            Found::Verify => 1,
            Found::Transfer => errno,
            Found::NothingMoved => EIO,
        };
        self.names_class(kind, e).then_some(e)
    }

    /// fio's `td_error_type`: verify (2) for EILSEQ, else read (0) or write (1).
    fn class(kind: OpKind, errno: i32) -> u8 {
        if errno == EILSEQ {
            2
        } else if kind == OpKind::Read {
            0
        } else {
            1
        }
    }
}

/// The errnos of one class of [`NonFatal`]: fio's default (EIO, EILSEQ) or a list of up to
/// [`ErrnoList::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ErrnoList {
    len: u8,
    errnos: [i32; ErrnoList::MAX],
}

impl ErrnoList {
    /// The most errnos one list holds.
    pub const MAX: usize = 16;

    /// A list of `errnos` (`None` when empty or longer than [`ErrnoList::MAX`]).
    pub fn new(errnos: &[i32]) -> Option<ErrnoList> {
        if errnos.is_empty() || errnos.len() > Self::MAX {
            return None;
        }
        let mut l = ErrnoList {
            len: errnos.len() as u8,
            errnos: [0; Self::MAX],
        };
        l.errnos[..errnos.len()].copy_from_slice(errnos);
        Some(l)
    }

    /// Whether the list holds `errno` (fio's default list: EIO and EILSEQ).
    pub fn contains(&self, errno: i32) -> bool {
        match self.len {
            0 => errno == EIO || errno == EILSEQ,
            n => self.errnos[..n as usize].contains(&errno),
        }
    }
}

/// What to do when a unit stops ([`Control::on_end`]).
#[derive(Clone, Copy)]
pub struct OnEnd<'a>(pub &'a (dyn Fn(bool) + Sync));

impl std::fmt::Debug for OnEnd<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnEnd")
    }
}

/// What to do when a source starts a new pass over its region ([`Control::on_pass`]).
#[derive(Clone, Copy)]
pub struct OnPass<'a>(pub &'a (dyn Fn() + Sync));

impl std::fmt::Debug for OnPass<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnPass")
    }
}

impl<'a> Control<'a> {
    pub fn new(ramp_ns: u64, time_ns: Option<u64>, max_ios: Option<u64>) -> Self {
        Control {
            delay_ns: 0,
            ramp_ns,
            time_ns,
            budget: AtomicU64::new(max_ios.unwrap_or(u64::MAX)),
            continue_on_error: false,
            non_fatal: None,
            name_ops: false,
            error_stop: AtomicBool::new(false),
            stop: None,
            stonewall: None,
            progress: None,
            on_pass: None,
            bytes_left: AtomicU64::new(u64::MAX),
            steady: None,
            steady_out: std::sync::Mutex::new(None),
            steady_group: None,
            min_rate: None,
            latency_target: None,
            rate_offload: false,
            max_latency_ns: None,
            verify_fatal: false,
            fill_device: false,
            on_end: None,
            flow: None,
            completions: None,
        }
    }

    /// The same control, taking completions in batches as fio's `iodepth_batch_complete_min`
    /// and `iodepth_low` say.
    pub fn with_completions(mut self, c: Option<ssdlab_workload::CompletionBatch>) -> Self {
        self.completions = c;
        self
    }

    /// The same control, its streams members of a flow (fio's `flow`).
    pub fn with_flow(mut self, flow: Option<FlowShare<'a>>) -> Self {
        self.flow = flow;
        self
    }

    /// The same control, failing when a direction falls below fio's minimum rates.
    pub fn with_min_rate(mut self, min_rate: Option<ssdlab_workload::MinRate>) -> Self {
        self.min_rate = min_rate;
        self
    }

    /// The same control, failing I/Os above fio's `max_latency` of their direction.
    pub fn with_max_latency(mut self, max_ns: Option<[u64; 3]>) -> Self {
        self.max_latency_ns = max_ns;
        self
    }

    /// The same control, ending at the first verify failure (fio's `verify_fatal`).
    pub fn with_verify_fatal(mut self, fatal: bool) -> Self {
        self.verify_fatal = fatal;
        self
    }

    /// The same control, writing until the file system is full (fio's `fill_device`).
    pub fn with_fill_device(mut self, fill: bool) -> Self {
        self.fill_device = fill;
        self
    }

    /// The same control, with fio's `io_submit_mode=offload` (`offload`) or inline.
    pub fn with_rate_offload(mut self, offload: bool) -> Self {
        self.rate_offload = offload;
        self
    }

    /// The same control, searching the queue depth for fio's latency target.
    pub fn with_latency_target(mut self, t: Option<ssdlab_workload::LatencyTarget>) -> Self {
        self.latency_target = t;
        self
    }

    /// The same control, ending when fio's steady-state criterion is met.
    pub fn with_steady(mut self, steady: Option<ssdlab_workload::SteadyCriterion>) -> Self {
        self.steady = steady;
        self
    }

    /// The same control, a member of a reporting group whose steady state is checked together.
    pub fn with_steady_group(mut self, member: Option<SteadyMember<'a>>) -> Self {
        self.steady_group = member;
        self
    }

    /// What the steady-state check found (once, after the run).
    pub fn take_steady(&self) -> Option<ssdlab_stats::FioSteadyState> {
        self.steady_out.lock().ok().and_then(|mut g| g.take())
    }

    /// The same control, starting `delay_ns` after the loop (fio's `startdelay`).
    pub fn with_delay(mut self, delay_ns: u64) -> Self {
        self.delay_ns = delay_ns;
        self
    }

    /// The same control, also ending after `bytes` measured bytes (ops of varying sizes).
    pub fn with_bytes(self, bytes: Option<u64>) -> Self {
        self.bytes_left
            .store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
        self
    }

    /// Some of the budget of I/Os and bytes is left (not claimed yet).
    fn has_budget(&self) -> bool {
        self.budget.load(Ordering::Relaxed) != 0 && self.bytes_left.load(Ordering::Relaxed) != 0
    }

    /// Takes `len` bytes from the byte budget; false when none were left.
    fn take_bytes(&self, len: u64) -> bool {
        let mut cur = self.bytes_left.load(Ordering::Relaxed);
        loop {
            if cur == u64::MAX {
                return true;
            }
            if cur == 0 {
                return false;
            }
            match self.bytes_left.compare_exchange_weak(
                cur,
                cur.saturating_sub(len),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// The same control, calling `f` when a source starts a new pass over its region.
    pub fn with_on_pass(mut self, f: Option<OnPass<'a>>) -> Self {
        self.on_pass = f;
        self
    }

    /// The same control, reporting its progress to `progress`.
    pub fn with_progress(mut self, progress: Option<&'a Progress>) -> Self {
        self.progress = progress;
        self
    }

    /// The same control, calling `f` once when the unit stops.
    pub fn with_on_end(mut self, f: Option<OnEnd<'a>>) -> Self {
        self.on_end = f;
        self
    }

    /// The same control, also stopped (not interrupted) by `stonewall`.
    pub fn with_stonewall(mut self, stonewall: Option<&'a AtomicBool>) -> Self {
        self.stonewall = stonewall;
        self
    }

    fn stonewalled(&self) -> bool {
        self.stonewall.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The same control, stopped by `stop` from outside.
    pub fn with_stop(mut self, stop: Option<&'a AtomicBool>) -> Self {
        self.stop = stop;
        self
    }

    fn stop_requested(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Gives back `n` claimed I/Os that were not issued.
    fn unclaim(&self, n: u64) {
        if n > 0 && self.budget.load(Ordering::Relaxed) != u64::MAX {
            self.budget.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Claims up to `want` measured I/Os from the budget.
    fn claim(&self, want: u64) -> u64 {
        let mut cur = self.budget.load(Ordering::Relaxed);
        loop {
            if cur == u64::MAX {
                return want;
            }
            let take = want.min(cur);
            if take == 0 {
                return 0;
            }
            match self.budget.compare_exchange_weak(
                cur,
                cur - take,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return take,
                Err(now) => cur = now,
            }
        }
    }
}

/// How a loop ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopOutcome {
    /// Measured time: from the end of the ramp to the last recorded completion (or the deadline).
    pub runtime_ns: u64,
    /// Ramp time actually spent.
    pub ramp_ns: u64,
    pub interrupted: bool,
    pub stopped_on_error: bool,
    /// The `--ios`/`--bytes` budget ran out (the run ended before any deadline).
    pub budget_done: bool,
    /// Stopped by the stonewall flag ([`Control::stonewall`]) before its own end.
    pub stonewalled: bool,
    /// Every source of the unit ended (a replay reached the end of its trace).
    pub source_done: bool,
    /// fio's steady-state criterion was met.
    pub steady_attained: bool,
    /// fio's latency target: the search ended at a depth, after its final window.
    pub latency_found: bool,
    /// fio's `verify_fatal` ended the job at a block that failed verification (an error
    /// `continue_on_error` went past).
    pub verify_ended: bool,
    /// fio's `fill_device`: a write found the file system full, which ended the job (no
    /// error).
    pub filled: bool,
    /// fio's latency target: the queue depth the search was at when the run ended (its
    /// `latency_depth`; 0 without a target).
    pub latency_depth: u32,
}

/// fio's errno for a transfer that moved fewer bytes than asked (its `td->error` for an I/O that
/// cannot be completed).
const EIO: i32 = 5;
/// fio's errno for data that fails verification (`EILSEQ`).
const EILSEQ: i32 = 84;
/// A slot's `freed_at` while the loop holds it back (a start delay, the depth a latency target
/// allows, a flow): its next I/O starts when it is issued, as fio gets an `io_u` only then.
const HELD: u64 = u64::MAX;
/// fio's errno for an I/O above its latency target at depth 1 (`lat_fatal`).
const ETIMEDOUT: i32 = 110;

/// A block read back failed verification (EILSEQ, recorded): handled as fio does, and with
/// fio's `verify_fatal` the unit ends even where the error is gone past.
#[cold]
fn verify_failed(ctl: &Control<'_>, rec: &mut Recorder, unit: &mut UnitState) {
    if ctl.on_error(rec, OpKind::Read, EILSEQ, Found::Verify) && ctl.verify_fatal {
        unit.stopping = true;
        unit.out.verify_ended = true;
    }
}

/// fio's ETIMEDOUT for an I/O that took longer than a latency limit (`max_latency`, or a
/// latency target missed at depth 1): recorded with `why` and handled as an error found
/// after the transfer.
#[cold]
fn too_slow(ctl: &Control<'_>, rec: &mut Recorder, op: &Op, why: String) {
    rec.record_error(op.kind, op.offset, op.len, ETIMEDOUT, why);
    ctl.on_error(rec, op.kind, ETIMEDOUT, Found::Verify);
}

/// Whether errno `e` says the file system is full (ENOSPC, EDQUOT): fio's `fill_device` ends
/// the job there.
fn full(e: i64) -> bool {
    const ENOSPC: i64 = 28;
    const EDQUOT: i64 = 122;
    e == ENOSPC || e == EDQUOT
}

fn errno_text(errno: i64) -> String {
    let e = std::io::Error::from_raw_os_error(errno as i32);
    let name = match errno as i32 {
        5 => "EIO",
        28 => "ENOSPC",
        22 => "EINVAL",
        13 => "EACCES",
        1 => "EPERM",
        30 => "EROFS",
        _ => "",
    };
    if name.is_empty() {
        e.to_string()
    } else {
        format!("{name}: {e}")
    }
}

/// fio's steady-state check of a reporting group with `group_reporting` (`steadystate.c`,
/// `steadystate_check`): the IOPS and bandwidth of the group are the sums of its members'
/// (every clone of every job of the group), the samples and the verdict live on the group's
/// last member (fio's last thread of the group, whose data the group's report shows), and when
/// the criterion is met every member ends.
///
/// Members may run in one loop (simulated drives) or in loops of their own on other threads
/// (real targets): each publishes what it completed, the last one evaluates.
#[derive(Debug)]
pub struct SteadyGroup {
    members: Vec<MemberCounters>,
    attained: AtomicBool,
}

/// What one member of a [`SteadyGroup`] completed so far (measured I/Os, bytes, completion
/// latency).
#[derive(Debug, Default)]
struct MemberCounters {
    ios: AtomicU64,
    bytes: AtomicU64,
    clat_ns: AtomicU64,
}

impl SteadyGroup {
    /// A group of `members` units (at least one).
    pub fn new(members: usize) -> SteadyGroup {
        SteadyGroup {
            members: (0..members.max(1))
                .map(|_| MemberCounters::default())
                .collect(),
            attained: AtomicBool::new(false),
        }
    }

    /// Member `index` of the group (0-based, in fio's order of threads).
    pub fn member(&self, index: usize) -> SteadyMember<'_> {
        assert!(
            index < self.members.len(),
            "member {index} of {}",
            self.members.len()
        );
        SteadyMember { group: self, index }
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The criterion was met: every member ends.
    pub fn attained(&self) -> bool {
        self.attained.load(Ordering::Relaxed)
    }

    /// Every member's counters now.
    fn counters(&self) -> Vec<(u64, u64, u64)> {
        self.members
            .iter()
            .map(|m| {
                (
                    m.ios.load(Ordering::Relaxed),
                    m.bytes.load(Ordering::Relaxed),
                    m.clat_ns.load(Ordering::Relaxed),
                )
            })
            .collect()
    }
}

/// One unit's place in a [`SteadyGroup`].
#[derive(Debug, Clone, Copy)]
pub struct SteadyMember<'a> {
    pub group: &'a SteadyGroup,
    pub index: usize,
}

impl SteadyMember<'_> {
    /// The member that keeps the group's samples and evaluates them (fio's last thread).
    pub fn evaluates(&self) -> bool {
        self.index + 1 == self.group.members.len()
    }

    fn add(&self, bytes: u64, clat_ns: u64) {
        let m = &self.group.members[self.index];
        m.ios.fetch_add(1, Ordering::Relaxed);
        m.bytes.fetch_add(bytes, Ordering::Relaxed);
        m.clat_ns.fetch_add(clat_ns, Ordering::Relaxed);
    }
}

/// fio's steady-state check of one unit, or of a group's members together, while the loop runs
/// (`steadystate.c`): every interval from the unit's start it takes the IOPS, bandwidth and
/// mean completion latency of the interval just ended (summed over the members: the sum of
/// their rates), keeping the last `intervals()` of them once the ramp and one interval have
/// passed, and evaluates the criterion.
struct SteadyRun {
    crit: ssdlab_workload::SteadyCriterion,
    next_check: u64,
    /// Samples are kept from this check on.
    record_from: u64,
    /// Each member's counters at the previous check.
    prev: Vec<(u64, u64, u64)>,
    iops: Vec<u64>,
    bw: Vec<u64>,
    lat: Vec<u64>,
    last: Option<ssdlab_workload::steady::Evaluation>,
}

impl SteadyRun {
    fn new(crit: ssdlab_workload::SteadyCriterion, begin: u64) -> SteadyRun {
        let interval = crit.interval_ns.max(1);
        SteadyRun {
            crit,
            next_check: begin.saturating_add(interval),
            record_from: begin.saturating_add(crit.ramp_ns).saturating_add(interval),
            prev: Vec::new(),
            iops: Vec::new(),
            bw: Vec::new(),
            lat: Vec::new(),
            last: None,
        }
    }

    /// The check due at `next_check`, with the members' counters then (ios, bytes, completion
    /// latency; one member for a unit checked on its own); true when attained.
    fn check(&mut self, counters: &[(u64, u64, u64)]) -> bool {
        let interval = self.crit.interval_ns.max(1);
        let at = self.next_check;
        self.next_check = at.saturating_add(interval);
        self.prev.resize(counters.len(), (0, 0, 0));
        let per_s = |d: u64| (d as u128 * 1_000_000_000 / interval as u128) as u64;
        // fio sums the members' rates, each rounded down on its own.
        let (mut iops, mut bw, mut d_ios, mut d_clat) = (0u64, 0u64, 0u64, 0u64);
        for (p, &(ios, bytes, clat)) in self.prev.iter_mut().zip(counters) {
            iops += per_s(ios - p.0);
            bw += per_s(bytes - p.1);
            d_ios += ios - p.0;
            d_clat += clat - p.2;
            *p = (ios, bytes, clat);
        }
        if at < self.record_from {
            return false;
        }
        let n = self.crit.intervals();
        for (v, x) in [
            (&mut self.iops, iops),
            (&mut self.bw, bw),
            (&mut self.lat, d_clat.checked_div(d_ios).unwrap_or(0)),
        ] {
            if v.len() == n {
                v.remove(0);
            }
            v.push(x);
        }
        let samples = match self.crit.metric {
            ssdlab_workload::SteadyMetric::Iops => &self.iops,
            ssdlab_workload::SteadyMetric::Bw => &self.bw,
            ssdlab_workload::SteadyMetric::Lat => &self.lat,
        };
        self.last = self.crit.evaluate(samples);
        self.last.is_some_and(|e| e.attained)
    }

    fn finish(self) -> ssdlab_stats::FioSteadyState {
        let n = self.crit.intervals();
        let pad = |mut v: Vec<u64>| {
            v.resize(n, 0);
            v
        };
        let e = self.last;
        ssdlab_stats::FioSteadyState {
            criterion: self.crit,
            attained: e.is_some_and(|e| e.attained),
            value: e.map_or(0.0, |e| e.criterion),
            // fio computes only what its criterion needs: the other stays 0.
            max_deviation: e.filter(|_| !self.crit.slope).map_or(0.0, |e| e.deviation),
            slope: e.filter(|_| self.crit.slope).map_or(0.0, |e| e.slope),
            iops: pad(self.iops),
            bw: pad(self.bw),
            lat_ns: pad(self.lat),
        }
    }
}

/// fio's `check_min_rate` after completions reaped at `at`, for every measuring unit with
/// minimum rates: a direction below its minimum fails the unit (fio's EIO, whatever
/// `continue_on_error` says) and stops it.
fn check_min_rates(
    units: &[Unit<'_>],
    us: &mut [UnitState],
    recs: &mut [Recorder],
    streams: &[Stream],
    at: u64,
) {
    for (u, st) in us.iter_mut().enumerate() {
        let Some(min) = units[u].ctl.min_rate else {
            continue;
        };
        if st.stopping
            || !st.measuring
            || at < st.t0.saturating_add(ssdlab_workload::MinRate::SETTLE_NS)
        {
            continue;
        }
        for d in 0..3 {
            let (ios, bytes) = st.dir_done[d];
            if !min.checks(d) || bytes == 0 {
                continue;
            }
            if let Some((ios0, bytes0, t)) = st.rate_mark[d] {
                // fio measures in whole milliseconds and checks once a cycle has passed.
                let spent_ms = at.saturating_sub(t) / 1_000_000;
                if spent_ms == 0 || spent_ms < min.cycle_ns / 1_000_000 {
                    continue;
                }
                if let Some(why) =
                    min.shortfall(d, ios - ios0, bytes - bytes0, spent_ms * 1_000_000)
                {
                    let r = streams.iter().find(|s| s.unit == u).map_or(0, |s| s.rec);
                    recs[r].record_job_error(OpKind::ALL[d], EIO, why);
                    st.stopping = true;
                    st.out.stopped_on_error = true;
                    break;
                }
            }
            st.rate_mark[d] = Some((ios, bytes, at));
        }
    }
}

/// The backend itself failed (not one I/O of the target): the failure is recorded once and
/// every unit stops, marked stopped on error.
#[cold]
fn backend_failure(rec: &mut Recorder, us: &mut [UnitState], e: &std::io::Error) {
    rec.record_error(
        OpKind::Read,
        0,
        0,
        e.raw_os_error().unwrap_or(EIO),
        format!("backend failure: {e}"),
    );
    rec.tally.end(e.raw_os_error().unwrap_or(EIO));
    for st in us {
        st.stopping = true;
        st.out.stopped_on_error = true;
    }
}

/// What writes put into their buffers and what reads check.
#[derive(Debug, Clone, Copy)]
pub struct DataOpts<'a> {
    pub pattern: Pattern,
    /// Seed of the data stream (independent of the offset stream).
    pub pattern_seed: u64,
    /// `Some(run seed)`: writes carry verification headers and reads check them.
    pub verify: Option<u64>,
    /// What earlier verifying runs wrote: reads hold every sector it knows to a valid header.
    pub known: Option<&'a WrittenMap>,
    /// This run's writes carry generations above this (its start, ns since the Unix epoch,
    /// the same for all its workers), so that a read recognises what the run itself wrote.
    pub verify_epoch: u64,
    /// Reads check that each block holds these bytes repeated from its first one (fio's
    /// `verify=pattern`); writes carry the fixed pattern.
    pub check_pattern: Option<ssdlab_workload::PatternBytes>,
    /// fio's deduplicable buffers (for this worker: [`ssdlab_workload::Dedupe::for_worker`]):
    /// writes without verification repeat others as it says.
    pub dedupe: Option<ssdlab_workload::Dedupe>,
    /// A repeated pattern is written again into a buffer a read used before its next write
    /// ([`ssdlab_workload::WorkloadSpec::refill_after_read`]).
    pub refill_after_read: bool,
    /// fio's `verify_backlog` (with `verify`): the writes a verifying writer logs, to read back
    /// while it writes and in its verify phase.
    pub backlog: Option<BacklogOpts>,
    /// Where the pieces of a backlog left unread at the end go (in the order fio reads them in
    /// its verify phase).
    pub unverified: Option<&'a std::sync::Mutex<Vec<Op>>>,
    /// A sector read without a verification header is a verify failure
    /// ([`ssdlab_workload::WorkloadSpec::verify_headers_required`]).
    pub headers_required: bool,
}

/// How a verifying writer keeps the writes it reads back (fio's `log_io_piece`).
#[derive(Debug, Clone, Copy)]
pub struct BacklogOpts {
    /// When it reads them back while it writes (`every` 0: only in the verify phase).
    pub cfg: ssdlab_workload::VerifyBacklog,
    /// fio keeps the pieces by offset (a sequential job, or a random one without a random
    /// map), where a new write replaces those it overlaps, rather than in the order written.
    pub by_offset: bool,
}

/// One worker of a loop: where its ops come from, how many it keeps in flight, which unit's stop
/// conditions and data it follows, and which recorder its completions go to.
#[derive(Debug, Clone)]
pub struct Stream {
    pub source: OpSource,
    pub qd: u32,
    /// Index into the `units` of [`run_streams`].
    pub unit: usize,
    /// Index into the `recs` of [`run_streams`].
    pub rec: usize,
}

/// Streams that share stop conditions and data: one job of a run.
#[derive(Debug, Clone, Copy)]
pub struct Unit<'a> {
    pub ctl: &'a Control<'a>,
    pub data: DataOpts<'a>,
}

#[derive(Clone, Copy)]
struct SlotState {
    op: Op,
    t_issue: u64,
    t_submit: u64,
    /// When the slot's last I/O completed (the run start before its first).
    freed_at: u64,
    /// The stream owning the slot, its unit and recorder (kept here so the hot path reads
    /// one cache line per slot).
    stream: u32,
    unit: u32,
    rec: u32,
    /// The stream's job number among those of its recorder (which logs tell apart).
    job: u32,
    measured: bool,
}

/// Where a stream stands.
#[derive(Clone, Copy, Default)]
struct StreamState {
    /// I/Os and bytes per direction completed while its unit's ramp ran, and the last of
    /// them: what fio reports (with no latency sample) for a job that ends before its ramp
    /// does, as its statistics are reset only when the ramp ends.
    ramp_done: [(u64, u64); 3],
    ramp_last: u64,
    /// An op taken from the source and not issued yet (its time has not come).
    pending: Option<Next>,
    /// The source has nothing more.
    exhausted: bool,
    /// Gaps count from here: the previous op's due time when it was issued on time, its actual
    /// issue time when it was late (fio's `iolog_delay`: oversleeping is made up for, a late
    /// issue is not).
    base: u64,
    /// `pending` was seen not yet due, so it is issued on time once due.
    waited: bool,
    inflight: u32,
    /// The latest completion: when the queue drained, once nothing is in flight.
    drained_at: u64,
    pushed_now: u32,
    last_completion: u64,
    /// fio's latency target: the depth search of this stream (a job's clone).
    lat: Option<LatSearch>,
    /// fio's flow control: the I/Os this stream counted, whether it has left its flow, and
    /// when it looks again after being held back with `flow_sleep` (once its I/Os in flight
    /// are done, when `flow_quiesce`).
    flow_count: u64,
    flow_left: bool,
    /// When the stream ended, for its leaving the flow [`FLOW_REAP_NS`] later.
    flow_ended: Option<u64>,
    flow_until: u64,
    flow_quiesce: bool,
    /// An operation on a file's name failed in this pass ([`Control::name_ops`]): fio goes on
    /// with the pass's next files and ends the job where the pass ends; with
    /// `continue_on_error` it counts the failures once a later operation of the pass succeeds.
    name_failed: bool,
    /// (how many, and the errno of the first)
    name_uncounted: (u32, i32),
}

/// A stream's batched completions (kept apart from [`StreamState`], which the hot path of
/// every run indexes: its size stays as it was).
#[derive(Debug, Clone, Copy, Default)]
struct BatchState {
    /// fio's `iodepth_low`: the queue was full, and is not refilled until no more than the
    /// low water mark are in flight.
    draining: bool,
    /// fio's `iodepth_batch_complete_min`: completions handled only once this many have come
    /// (0: each as it comes), and how many have come and wait in `parked`.
    need: u32,
    parked: u32,
}

/// fio's `wait_for_completions` before a wait: a stream whose queue is full (or draining to its
/// `iodepth_low`) waits for a batch of `iodepth_batch_complete_min` completions, at most its
/// I/Os in flight; one that issues no more (`done`) takes all of them at once, as fio's last
/// `io_u_queued_complete` does. Returns how many completions the backend may wait for (more
/// than one only when a single stream waits for the rest of its batch).
#[inline(never)]
fn batch_wait(
    streams: &[Stream],
    units: &[Unit<'_>],
    ss: &[StreamState],
    us: &[UnitState],
    bs: &mut [BatchState],
) -> usize {
    let done = |si: usize| ss[si].exhausted || us[streams[si].unit].stopping;
    for (si, s) in streams.iter().enumerate() {
        let (Some(c), st, x) = (units[s.unit].ctl.completions, &ss[si], &mut bs[si]) else {
            continue;
        };
        if st.inflight > 1 && x.need < st.inflight && done(si) {
            x.need = st.inflight;
            continue;
        }
        let depth = st.lat.map_or(s.qd, |l| l.qd);
        if st.inflight >= depth && c.low < depth {
            x.draining = true;
        } else if st.inflight <= c.low {
            x.draining = false;
        }
        if (st.inflight >= depth || x.draining) && x.need == 0 && c.min > 1 {
            x.need = c.min.min(st.inflight);
        }
    }
    match bs {
        [x] => x.need.saturating_sub(x.parked).max(1) as usize,
        _ => 1,
    }
}

/// Keeps the completions of streams waiting for a batch in `parked` until the batch is
/// complete; leaves in `cqes` those to handle now. A batch is handled at once, at the time its
/// last completion came (fio stamps what it reaps together).
#[inline(never)]
fn park(
    cqes: &mut Vec<Cqe>,
    parked: &mut Vec<Cqe>,
    handled: &mut Vec<Cqe>,
    state: &[SlotState],
    bs: &mut [BatchState],
) {
    handled.clear();
    for c in cqes.drain(..) {
        let si = state[c.slot as usize].stream as usize;
        let x = &mut bs[si];
        if x.need == 0 {
            handled.push(c);
            continue;
        }
        parked.push(c);
        x.parked += 1;
        if x.parked >= x.need {
            (x.parked, x.need) = (0, 0);
            let of = |p: &Cqe| state[p.slot as usize].stream as usize == si;
            let t = parked.iter().filter(|p| of(p)).map(|p| p.t_ns).max();
            parked.retain(|p| {
                if !of(p) {
                    return true;
                }
                handled.push(Cqe {
                    t_ns: t.unwrap_or(p.t_ns),
                    ..*p
                });
                false
            });
        }
    }
    std::mem::swap(cqes, handled);
}

/// fio's search of the queue depth for a latency target (`lat_target_init`, `_success`,
/// `_failed`, `_check` and `queue_full` of its `io_u.c`), for one stream.
#[derive(Debug, Clone, Copy, Default)]
struct LatSearch {
    /// The depth the stream may have in flight now (fio's `latency_qd`).
    qd: u32,
    low: u32,
    high: u32,
    /// The job's `iodepth`: the most the search goes to.
    iodepth: u32,
    stable: u32,
    /// The window began then, with `ios_at_start` of the `ios` completions so far; `slow`
    /// of those since were above the target.
    window_start: u64,
    ios_at_start: u64,
    ios: u64,
    slow: u64,
    /// Running the final window at the depth found (fio's `latency_end_run`).
    end_run: bool,
    /// Nothing more is issued until what is in flight completes (fio's `io_u_quiesce`);
    /// then, with `reset`, the statistics start again.
    quiesce: bool,
    reset: bool,
}

/// What a latency check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LatStep {
    Go,
    /// Depth 1 and still above the target with a percentile of 100: fio's ETIMEDOUT.
    Fatal,
    /// The final window held at the depth found: the job is done.
    Done,
}

impl LatSearch {
    fn new(iodepth: u32, now: u64) -> LatSearch {
        LatSearch {
            qd: 1,
            low: 1,
            high: iodepth,
            iodepth,
            window_start: now,
            ..Default::default()
        }
    }

    fn new_cycle(&mut self, now: u64) {
        self.window_start = now;
        self.ios_at_start = self.ios;
        self.slow = 0;
    }

    /// fio's `__lat_target_failed`: step the depth down, then let what is in flight complete
    /// (its `io_u_quiesce`) before the next window starts; `Fatal` at depth 1. Those
    /// completions still count against the target as they come — with a percentile of 100
    /// each one above it steps down again, as in fio.
    fn failed(&mut self) -> LatStep {
        if self.qd == 1 {
            return LatStep::Fatal;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.quiesce = true;
        LatStep::Go
    }

    /// fio's `lat_target_success`: step the depth up; the same depth twice ends the search
    /// (a final window at it, after its statistics start again), unless `keep_running`.
    fn success(&mut self, now: u64, keep_running: bool) -> LatStep {
        let qd = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        if self.high != self.iodepth {
            self.qd = (self.qd + self.high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.iodepth);
        if !keep_running && self.qd == qd {
            if self.end_run {
                return LatStep::Done;
            }
            self.quiesce = true;
            self.end_run = true;
            self.reset = true;
        }
        // (after a quiesce the window starts when it is over)
        if !self.quiesce {
            self.new_cycle(now);
        }
        LatStep::Go
    }

    /// fio's `lat_target_check`, once a window has passed.
    fn check(&mut self, now: u64, t: &ssdlab_workload::LatencyTarget) -> LatStep {
        // (fio quiesces inside the step, so no check falls in a quiesce)
        if self.quiesce || now.saturating_sub(self.window_start) < t.window_ns {
            return LatStep::Go;
        }
        let ios = self.ios - self.ios_at_start;
        // (no I/O in the window: 0/0, which fio's comparison takes as a failure)
        let ok = (ios - self.slow.min(ios)) as f64 / ios as f64 * 100.0;
        if ok >= t.percentile {
            self.success(now, t.keep_running)
        } else {
            // (at depth 1 fio's check goes on at depth 1, in the same window)
            self.failed();
            LatStep::Go
        }
    }
}

#[derive(Clone, Copy, Default)]
struct UnitState {
    /// When the unit may issue its first op (the loop's start plus its delay).
    begin: u64,
    /// Measured completions, their bytes and completion latency (for fio's steadystate).
    done_ios: u64,
    done_bytes: u64,
    done_clat_ns: u64,
    /// Measured completions and bytes per direction (fio's minimum rates).
    dir_done: [(u64, u64); 3],
    /// Per direction, the counters and time of the last minimum-rate check that held.
    rate_mark: [Option<(u64, u64, u64)>; 3],
    t0: u64,
    deadline: u64,
    stopping: bool,
    /// [`Control::on_end`] has been called.
    told_end: bool,
    measuring: bool,
    /// Measured I/Os claimed from the budget and not issued yet (given back after each round).
    allowance: u64,
    out: LoopOutcome,
}

/// How long after a member of a flow has ended it leaves: fio takes a finished job out of its
/// flow only when its main thread reaps it, and it looks every 10 ms (`run_threads`). Until
/// then the others stay held to their share, so members that end together — time-based jobs
/// whose threads started a little apart — do not run free of each other in between.
const FLOW_REAP_NS: u64 = 10_000_000;

/// The streams that ended (their source, or `stopped` says their unit stopped) leave their
/// flow, once, [`FLOW_REAP_NS`] after they ended (at once when no member that still runs is
/// left to hold back): they give back what they counted and their weight (fio's
/// `flow_exit_job`). Returns when the next stream that ended is due to leave.
fn leave_flows(
    units: &[Unit<'_>],
    streams: &[Stream],
    ss: &mut [StreamState],
    now: u64,
    stopped: impl Fn(usize) -> bool,
) -> Option<u64> {
    let mut due = None::<u64>;
    for i in 0..streams.len() {
        let Some(f) = units[streams[i].unit].ctl.flow else {
            continue;
        };
        let st = &mut ss[i];
        if st.flow_left || !(st.exhausted || stopped(i)) {
            continue;
        }
        let ended = *st.flow_ended.get_or_insert(now);
        let at = ended.saturating_add(FLOW_REAP_NS);
        // The weight of this flow's members here that ended and have not left: when it is
        // the flow's whole weight, nobody is held back by them.
        let ended_here = streams
            .iter()
            .zip(ss.iter())
            .enumerate()
            .filter(|(j, (s, x))| {
                !x.flow_left
                    && (x.exhausted || stopped(*j))
                    && units[s.unit]
                        .ctl
                        .flow
                        .is_some_and(|g| std::ptr::eq(g.flow, f.flow))
            })
            .fold(0u32, |w, (_, (s, _))| {
                w.wrapping_add(units[s.unit].ctl.flow.map_or(0, |g| g.weight))
            });
        let st = &mut ss[i];
        if now >= at || f.flow.state().1 == ended_here {
            st.flow_left = true;
            f.flow.leave(st.flow_count, f.weight);
        } else {
            due = Some(due.map_or(at, |d| d.min(at)));
        }
    }
    due
}

/// Runs the closed loop on `backend` until a stop condition holds, then drains in-flight I/O.
///
/// `gens` holds one generator per worker sharing this backend; worker `w` owns slots
/// `w·qd .. (w+1)·qd`. Writes get data according to `pattern` when the backend carries data.
/// With `log`, every write that completes (also during the ramp) is logged, and every failed one
/// marked, for the written-map of verifying runs.
pub fn run_loop<B: Backend>(
    backend: &mut B,
    gens: &mut [OpGen],
    qd: u32,
    data: DataOpts<'_>,
    ctl: &Control,
    rec: &mut Recorder,
    log: Option<&mut WriteLog>,
) -> LoopOutcome {
    let mut streams: Vec<Stream> = gens
        .iter()
        .map(|g| Stream {
            source: OpSource::Generated(g.clone()),
            qd,
            unit: 0,
            rec: 0,
        })
        .collect();
    let outs = run_streams(
        backend,
        &mut streams,
        &[Unit { ctl, data }],
        std::slice::from_mut(rec),
        log,
    );
    merge_outcomes(&outs)
}

/// One outcome for several streams of a unit: the longest runtime, any flag.
pub fn merge_outcomes(outs: &[LoopOutcome]) -> LoopOutcome {
    let mut m = LoopOutcome::default();
    for o in outs {
        m.runtime_ns = m.runtime_ns.max(o.runtime_ns);
        m.ramp_ns = m.ramp_ns.max(o.ramp_ns);
        m.interrupted |= o.interrupted;
        m.stopped_on_error |= o.stopped_on_error;
        m.budget_done |= o.budget_done;
        m.source_done |= o.source_done;
        m.stonewalled |= o.stonewalled;
        m.steady_attained |= o.steady_attained;
        m.latency_found |= o.latency_found;
        m.verify_ended |= o.verify_ended;
        m.latency_depth = m.latency_depth.max(o.latency_depth);
    }
    m
}

/// Runs `streams` on `backend` until every unit has stopped (its deadline, budget, an error, the
/// stop flag, or the end of its sources), then drains what is in flight. Returns one outcome per
/// stream.
///
/// Stream `i` owns the slots after those of streams `0..i` (`qd` each). Generated ops are issued
/// as soon as a slot is free (exactly `qd` in flight); replayed ops also wait for their gap. An
/// op's issue time — where its submission latency starts — is the moment its slot became free,
/// or its due time when it had to wait for it, so time spent in the tool counts as submission
/// latency and, for generated ops, slots are busy back to back (Little's law holds).
pub fn run_streams<B: Backend>(
    backend: &mut B,
    streams: &mut [Stream],
    units: &[Unit<'_>],
    recs: &mut [Recorder],
    mut log: Option<&mut WriteLog>,
) -> Vec<LoopOutcome> {
    assert!(streams
        .iter()
        .all(|s| s.unit < units.len() && s.rec < recs.len()));
    let nslots: u32 = streams.iter().map(|s| s.qd).sum();
    if nslots == 0 {
        return vec![LoopOutcome::default(); streams.len()];
    }
    let mut owner: Vec<u32> = Vec::with_capacity(nslots as usize);
    for (i, s) in streams.iter().enumerate() {
        owner.extend(std::iter::repeat_n(i as u32, s.qd as usize));
    }
    let mut pattern_rngs: Vec<ssdlab_workload::rng::Rng> = units
        .iter()
        .map(|u| ssdlab_workload::rng::Rng::new(u.data.pattern_seed))
        .collect();
    let mut dedupe: Vec<Option<ssdlab_workload::DedupeGen>> = units
        .iter()
        .map(|u| {
            u.data
                .dedupe
                .map(|d| ssdlab_workload::DedupeGen::new(d, u.data.pattern_seed))
        })
        .collect();
    let mut generation: u64 = units.iter().map(|u| u.data.verify_epoch).max().unwrap_or(0);
    // Slots whose buffer a read has used since its pattern was written: a repeated pattern
    // (fio's buffer_pattern, which refills in a job that reads) is written again before the
    // slot's next write; other buffers filled once keep what the read left, as fio's do.
    let mut read_into = vec![false; nslots as usize];
    // fio's verify_backlog: each verifying writer's pieces waiting to be read back, and the
    // piece each slot's write logged.
    let mut backlogs: Vec<Option<Backlog>> = streams
        .iter()
        .map(|s| {
            let d = &units[s.unit].data;
            d.backlog
                .filter(|_| d.verify.is_some() || d.check_pattern.is_some())
                .map(|b| Backlog::new(b.cfg, b.by_offset))
        })
        .collect();
    // (the hot path of other runs tests this once per op)
    let any_backlog = backlogs.iter().any(Option::is_some);
    let mut piece_of = if any_backlog {
        vec![0u64; nslots as usize]
    } else {
        Vec::new()
    };
    // Fixed patterns (and fio's scrambled or once-filled random data) are written once into
    // every buffer; refilled ones anew for every write.
    for slot in 0..nslots {
        let u = streams[owner[slot as usize] as usize].unit;
        let pattern = units[u].data.pattern;
        if !pattern.refills() {
            if let Some(buf) = backend.buffer(slot) {
                pattern.fill(&mut pattern_rngs[u], buf);
            }
        }
    }
    // A stream's job number within its recorder: the streams before it with the same one.
    let job_of: Vec<u32> = (0..streams.len())
        .map(|i| {
            streams[..i]
                .iter()
                .filter(|s| s.rec == streams[i].rec)
                .count() as u32
        })
        .collect();
    let start = backend.now();
    let mut state: Vec<SlotState> = (0..nslots)
        .map(|slot| SlotState {
            op: Op {
                kind: OpKind::Read,
                offset: 0,
                len: 0,
            },
            t_issue: 0,
            t_submit: 0,
            freed_at: start,
            stream: owner[slot as usize],
            unit: streams[owner[slot as usize] as usize].unit as u32,
            rec: streams[owner[slot as usize] as usize].rec as u32,
            job: job_of[owner[slot as usize] as usize],
            measured: false,
        })
        .collect();
    let mut ss: Vec<StreamState> = vec![
        StreamState {
            base: start,
            ..Default::default()
        };
        streams.len()
    ];
    let mut us: Vec<UnitState> = units
        .iter()
        .map(|u| {
            let begin = start.saturating_add(u.ctl.delay_ns);
            let t0 = begin.saturating_add(u.ctl.ramp_ns);
            UnitState {
                begin,
                t0,
                deadline: u.ctl.time_ns.map(|t| t0 + t).unwrap_or(u64::MAX),
                ..Default::default()
            }
        })
        .collect();
    for (i, s) in streams.iter().enumerate() {
        ss[i].last_completion = us[s.unit].t0;
        ss[i].lat = units[s.unit]
            .ctl
            .latency_target
            .map(|t| LatSearch::new(t.max_depth.max(1), us[s.unit].t0));
    }
    let any_lat = ss.iter().any(|x| x.lat.is_some());
    let mut steady: Vec<Option<SteadyRun>> = units
        .iter()
        .zip(&us)
        .map(|(u, st)| {
            // A group's samples are kept by its last member only.
            let evaluates = u.ctl.steady_group.is_none_or(|m| m.evaluates());
            u.ctl
                .steady
                .filter(|_| evaluates)
                .map(|c| SteadyRun::new(c, st.begin))
        })
        .collect();
    // Idle slots; the next ones to issue are taken from the end.
    let mut free: Vec<u32> = (0..nslots).rev().collect();
    let mut keep: Vec<u32> = Vec::with_capacity(nslots as usize);
    let mut issued: Vec<u32> = Vec::with_capacity(nslots as usize);
    let mut cqes: Vec<Cqe> = Vec::with_capacity(nslots as usize * 2);
    let mut inflight: u32 = 0;
    let mut measuring_any = false;
    // Scratch per recorder: measured I/Os pushed this round, completions reaped at once.
    let one_rec = recs.len() == 1;
    let mut per_rec: Vec<u64> = vec![0; recs.len()];
    // Measured so far and not yet added to each unit's progress (a status line), and when the
    // loop next hands it over (every PROGRESS_NS of the backend clock, not per I/O).
    let mut prog: Vec<(u64, u64)> = vec![(0, 0); units.len()];
    let mut next_progress = start;
    let any_min_rate = units.iter().any(|u| u.ctl.min_rate.is_some());
    let any_group = units.iter().any(|u| u.ctl.steady_group.is_some());
    let any_flow = units.iter().any(|u| u.ctl.flow.is_some());
    // fio's batched completions: completions of streams waiting for a batch, kept here until
    // the batch is complete, and a scratch list for those handled now.
    let any_batch = units.iter().any(|u| u.ctl.completions.is_some());
    let mut bs: Vec<BatchState> = if any_batch {
        vec![BatchState::default(); streams.len()]
    } else {
        Vec::new()
    };
    let mut parked: Vec<Cqe> = Vec::new();
    let mut handled: Vec<Cqe> = Vec::new();

    loop {
        let now = backend.now();
        if now >= next_progress {
            for (u, (ios, bytes)) in prog.iter_mut().enumerate() {
                if let Some(p) = units[u].ctl.progress {
                    p.ios.fetch_add(std::mem::take(ios), Ordering::Relaxed);
                    p.bytes.fetch_add(std::mem::take(bytes), Ordering::Relaxed);
                    if now >= us[u].t0 {
                        p.t_ns.fetch_max(now - us[u].t0, Ordering::Relaxed);
                    }
                }
            }
            next_progress = now.saturating_add(PROGRESS_NS);
        }
        // Stop conditions, unit by unit.
        for (u, st) in us.iter_mut().enumerate() {
            if st.stopping {
                continue;
            }
            let ctl = units[u].ctl;
            if now >= st.deadline {
                st.stopping = true;
            } else if ctl.stop_requested() {
                st.stopping = true;
                st.out.interrupted = true;
            } else if ctl.error_stop.load(Ordering::Relaxed) {
                st.stopping = true;
                st.out.stopped_on_error = true;
            } else if ctl.stonewalled() {
                st.stopping = true;
                st.out.stonewalled = true;
            } else if let Some(run) = steady[u].as_mut() {
                // fio's steadystate: the checks due by now, in order.
                while !st.stopping && now >= run.next_check {
                    let counters = match ctl.steady_group {
                        Some(m) => m.group.counters(),
                        None => vec![(st.done_ios, st.done_bytes, st.done_clat_ns)],
                    };
                    if run.check(&counters) {
                        st.stopping = true;
                        st.out.steady_attained = true;
                        if let Some(m) = ctl.steady_group {
                            m.group.attained.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
        // A group whose steady state was attained ends all its members at once (fio marks
        // every thread of the group to terminate).
        for (u, st) in us.iter_mut().enumerate().filter(|_| any_group) {
            if !st.stopping
                && units[u]
                    .ctl
                    .steady_group
                    .is_some_and(|m| m.group.attained())
            {
                st.stopping = true;
                st.out.steady_attained = true;
            }
        }
        // Earliest time a waiting stream's op becomes due (or its unit's deadline).
        let mut wake = u64::MAX;
        // A stream was held back by its flow with nothing to wait for but the others.
        let mut flow_poll = false;
        if !free.is_empty() {
            keep.clear();
            issued.clear();
            let mut push_error = None;
            // Issue from the last free slot to the first (the order `pop` gives).
            while let Some(slot) = free.pop() {
                if push_error.is_some() {
                    keep.push(slot);
                    continue;
                }
                let (si, u) = {
                    let s = &state[slot as usize];
                    (s.stream as usize, s.unit as usize)
                };
                if us[u].stopping || ss[si].exhausted {
                    keep.push(slot);
                    continue;
                }
                if now < us[u].begin {
                    // fio's startdelay: the unit has not started yet (its I/Os start when
                    // issued, not when the slot became free).
                    wake = wake.min(us[u].begin);
                    state[slot as usize].freed_at = HELD;
                    keep.push(slot);
                    continue;
                }
                // fio's iodepth_low: a queue that was full is refilled once it has drained to
                // the low water mark (its I/Os start when issued, not when the slot was freed).
                if any_batch && bs[si].draining {
                    let low = units[u].ctl.completions.map_or(u32::MAX, |c| c.low);
                    if ss[si].inflight > low {
                        state[slot as usize].freed_at = HELD;
                        keep.push(slot);
                        continue;
                    }
                    bs[si].draining = false;
                }
                // fio's latency target: the depth the search allows (`queue_full`), and its
                // quiesce; the final window's statistics start once nothing is in flight.
                let x = &mut ss[si];
                if let Some(l) = x.lat.as_mut() {
                    if l.quiesce {
                        if x.inflight > 0 {
                            state[slot as usize].freed_at = HELD;
                            keep.push(slot);
                            continue;
                        }
                        l.quiesce = false;
                        l.new_cycle(now);
                        if std::mem::take(&mut l.reset) {
                            recs[streams[si].rec].restart();
                            let st = &mut us[u];
                            st.t0 = now;
                            st.deadline = units[u].ctl.time_ns.map_or(u64::MAX, |t| now + t);
                            x.last_completion = now;
                        }
                    }
                    if x.inflight >= l.qd {
                        state[slot as usize].freed_at = HELD;
                        keep.push(slot);
                        continue;
                    }
                }
                // The op: one held back earlier (its time had not come), else the source's next
                // (a generator's inline: the hot path).
                let mut is_verify = false;
                let mut next = if ss[si].pending.is_some() {
                    if any_backlog {
                        is_verify = backlogs[si]
                            .as_mut()
                            .is_some_and(|b| std::mem::take(&mut b.pending_verify));
                    }
                    ss[si].pending.take().expect("checked")
                } else if let Some(n) = any_backlog
                    .then(|| backlogs[si].as_mut().and_then(|b| b.stashed.take()))
                    .flatten()
                {
                    n
                } else {
                    let n = match &mut streams[si].source {
                        OpSource::Generated(g) => {
                            let op = g.next_op();
                            if g.take_wrapped() {
                                // (a generator ends only where a pass ends)
                                // (fio: a pass in which a file's name operation failed is the
                                // last, its uncounted failures dropped)
                                if g.ended() || ss[si].name_failed {
                                    // its last pass is done (fio: no io_size, the file done)
                                    ss[si].exhausted = true;
                                    keep.push(slot);
                                    continue;
                                }
                                if let Some(f) = units[u].ctl.on_pass {
                                    (f.0)();
                                }
                            }
                            Some(Next {
                                op,
                                gap_ns: 0,
                                at_ns: 0,
                                drain: false,
                            })
                        }
                        other => {
                            let n = other.next_at(now);
                            // a rated or thinking generator's new pass, as a plain one's
                            // (fio drops the page cache there)
                            if n.is_some() && other.take_wrapped() {
                                if let Some(f) = units[u].ctl.on_pass {
                                    (f.0)();
                                }
                            }
                            n
                        }
                    };
                    let Some(n) = n else {
                        ss[si].exhausted = true;
                        keep.push(slot);
                        continue;
                    };
                    ss[si].waited = false;
                    n
                };
                // fio's verify_backlog: a read of a piece written before, instead of the job's
                // next I/O (kept for later) — while the job has I/O left to issue (fio checks
                // its bytes before it gets an I/O)
                if any_backlog {
                    if let Some(b) = backlogs[si].as_mut().filter(|b| b.reads_inline()) {
                        let left = us[u].allowance > 0 || units[u].ctl.has_budget();
                        if let Some(read) = b.turn(next, is_verify, left) {
                            next = read;
                            is_verify = true;
                        }
                    }
                }
                let due = if next.drain {
                    // fio's think time: the queue drains first (a completion wakes the loop),
                    // then the gap counts from the last completion.
                    if ss[si].inflight > 0 {
                        ss[si].pending = Some(next);
                        keep.push(slot);
                        continue;
                    }
                    ss[si].drained_at.saturating_add(next.gap_ns)
                } else {
                    ss[si].base.saturating_add(next.gap_ns)
                }
                // a rate's schedule (after a think too: fio checks its rate when the think
                // is over)
                .max(next.at_ns);
                if next.at_ns > now && ss[si].inflight > 0 && !units[u].ctl.rate_offload {
                    // fio's rate_ddir: ahead of its rate, a job first waits for its I/Os in
                    // flight (io_u_quiesce; not with io_submit_mode=offload), then for the
                    // op's time (a completion wakes the loop).
                    ss[si].pending = Some(next);
                    ss[si].waited = true;
                    keep.push(slot);
                    continue;
                }
                let timed = next.gap_ns > 0 || next.at_ns > 0;
                if timed && due > now {
                    ss[si].pending = Some(next);
                    ss[si].waited = true;
                    wake = wake.min(due).min(us[u].deadline);
                    keep.push(slot);
                    continue;
                }
                // fio's flow control, checked where fio checks it: before the I/O, after the
                // job's own pacing (a held stream keeps its op and looks again; the I/O starts
                // when it is issued, as fio gets its io_u then).
                let admitted = match units[u].ctl.flow {
                    Some(f) => {
                        let st = &mut ss[si];
                        if st.flow_quiesce {
                            if st.inflight > 0 {
                                st.pending = Some(next);
                                state[slot as usize].freed_at = HELD;
                                keep.push(slot);
                                continue;
                            }
                            st.flow_quiesce = false;
                            st.flow_until = st.drained_at.max(now).saturating_add(f.sleep_ns);
                        }
                        if now < st.flow_until {
                            st.pending = Some(next);
                            wake = wake.min(st.flow_until).min(us[u].deadline);
                            state[slot as usize].freed_at = HELD;
                            keep.push(slot);
                            continue;
                        }
                        if !f.flow.admits(st.flow_count, f.weight) {
                            // held back: with flow_sleep, its I/Os in flight first (fio's
                            // io_u_quiesce), then the sleep; without, it looks again at once
                            st.pending = Some(next);
                            if f.sleep_ns == 0 {
                                flow_poll = true;
                            } else if st.inflight > 0 {
                                st.flow_quiesce = true;
                            } else {
                                st.flow_until = now.saturating_add(f.sleep_ns);
                                wake = wake.min(st.flow_until).min(us[u].deadline);
                            }
                            state[slot as usize].freed_at = HELD;
                            keep.push(slot);
                            continue;
                        }
                        st.flow_count += 1;
                        Some(f.flow)
                    }
                    _ => None,
                };
                let unadmit = |ss: &mut [StreamState]| {
                    if let Some(f) = admitted {
                        f.unadmit();
                        ss[si].flow_count -= 1;
                    }
                };
                let measured = now >= us[u].t0;
                if measured && !measuring_any {
                    measuring_any = true;
                    backend.mark_measurement_start();
                }
                if measured && !us[u].measuring {
                    us[u].measuring = true;
                }
                // (fio's verify_backlog reads count toward no budget: fio's bytes are the
                // job's writes)
                if measured && !is_verify {
                    if us[u].allowance == 0 {
                        // Claim for every free slot at once (one atomic operation per round).
                        us[u].allowance = units[u].ctl.claim(free.len() as u64 + 1);
                        if us[u].allowance == 0 {
                            us[u].stopping = true;
                            us[u].out.budget_done = true;
                            unadmit(&mut ss);
                            ss[si].pending = Some(next);
                            keep.push(slot);
                            continue;
                        }
                    }
                    if !units[u].ctl.take_bytes(next.op.len) {
                        unadmit(&mut ss);
                        us[u].stopping = true;
                        us[u].out.budget_done = true;
                        ss[si].pending = Some(next);
                        keep.push(slot);
                        continue;
                    }
                    us[u].allowance -= 1;
                }
                let op = next.op;
                let data = &units[u].data;
                let s = &mut state[slot as usize];
                // The op is issued when its slot became free (or when it became due, if it had
                // to wait for that), so the time spent in the tool between a completion and the
                // next submission counts as submission latency.
                let t_issue = if timed {
                    s.freed_at.max(due)
                } else {
                    s.freed_at
                }
                .max(start)
                .min(now);
                let stale = match op.kind {
                    OpKind::Read => {
                        read_into[slot as usize] = true;
                        false
                    }
                    OpKind::Write => std::mem::take(&mut read_into[slot as usize]),
                    _ => false,
                } && data.refill_after_read
                    && matches!(
                        data.pattern,
                        ssdlab_workload::Pattern::Repeat(_) | ssdlab_workload::Pattern::Bytes(_)
                    );
                if op.kind == OpKind::Write
                    && (data.pattern.refills()
                        || data.pattern.scrambles()
                        || data.verify.is_some()
                        || stale)
                {
                    if let Some(buf) = backend.buffer(slot) {
                        let buf = &mut buf[..op.len as usize];
                        match data.verify {
                            // a pattern fills what the headers leave (fio's verify_pattern;
                            // a compressible share: fio's verify fill), else random filler
                            Some(seed) if data.pattern != ssdlab_workload::Pattern::Random => {
                                generation += 1;
                                data.pattern.fill(&mut pattern_rngs[u], buf);
                                verify::stamp_over(buf, op.offset, generation, seed)
                            }
                            Some(seed) => {
                                generation += 1;
                                verify::stamp(
                                    buf,
                                    op.offset,
                                    generation,
                                    seed,
                                    &mut pattern_rngs[u],
                                )
                            }
                            // fio's scramble_buffers: stamps in the buffer filled once
                            None if data.pattern.scrambles() => {
                                ssdlab_workload::scramble(buf, op.offset, t_issue)
                            }
                            None => match &mut dedupe[u] {
                                Some(g) => g.fill(data.pattern, buf),
                                None => data.pattern.fill(&mut pattern_rngs[u], buf),
                            },
                        }
                    }
                }
                if let Err(e) = backend.push(slot, &op) {
                    push_error = Some((e, streams[si].rec));
                    if measured && !is_verify {
                        us[u].allowance += 1;
                    }
                    unadmit(&mut ss);
                    ss[si].pending = Some(next);
                    keep.push(slot);
                    continue;
                }
                s.op = op;
                s.t_issue = t_issue;
                s.measured = measured;
                if any_backlog {
                    if let Some(b) = backlogs[si].as_mut() {
                        if op.kind == OpKind::Write {
                            piece_of[slot as usize] = b.logged(op.offset, op.len);
                        }
                        b.pending_verify = false;
                    }
                }
                let st = &mut ss[si];
                st.base = if timed && st.waited { due } else { now };
                st.inflight += 1;
                st.pushed_now += 1;
                inflight += 1;
                issued.push(slot);
            }
            std::mem::swap(&mut free, &mut keep);
            free.reverse();
            // Unused claims go back to the budget.
            for (u, st) in us.iter_mut().enumerate() {
                units[u].ctl.unclaim(std::mem::take(&mut st.allowance));
            }
            if !issued.is_empty() {
                let t_submit = backend.now();
                for &slot in &issued {
                    state[slot as usize].t_submit = t_submit;
                }
                // fio's iodepth_level is the depth of one job (stream), also when several
                // share this loop, right after each submission (fio's `td_io_commit`): I/Os
                // handed over one batch (`submit_batch`) at a time count at the depth each
                // batch reached, the rest (handed over with the wait) at the depth reached. A
                // full queue refilled after fio's default reap (one completion) counts at the
                // full depth; after a reap of several (`iodepth_batch_complete_min`/`_max`,
                // `iodepth_low`), at each depth the refill passes, as in fio.
                let batch_step = match backend.submit_batch() {
                    0 => u32::MAX,
                    b => b,
                };
                for (i, st) in ss.iter_mut().enumerate() {
                    if st.pushed_now > 0 {
                        let s = &streams[i];
                        if now >= us[s.unit].t0 {
                            let n = st.pushed_now;
                            let base = st.inflight.saturating_sub(n);
                            let mut done = 0;
                            while done < n {
                                let k = batch_step.min(n - done);
                                done += k;
                                recs[s.rec].record_depth(base + done, k as u64);
                            }
                            per_rec[s.rec] += n as u64;
                        }
                        st.pushed_now = 0;
                    }
                }
                // How the backend hands these to the kernel: in batches of `batch` as they are
                // pushed, the rest with the wait (fio's iodepth_submit).
                let batch = backend.submit_batch() as u64;
                for (r, n) in per_rec.iter_mut().enumerate() {
                    let pushed = std::mem::take(n);
                    if pushed == 0 {
                        continue;
                    }
                    match pushed.checked_div(batch) {
                        None => recs[r].record_submit(pushed),
                        Some(full) => {
                            for _ in 0..full {
                                recs[r].record_submit(batch);
                            }
                            if pushed % batch > 0 {
                                recs[r].record_submit(pushed % batch);
                            }
                        }
                    }
                }
            }
            if let Some((e, r)) = push_error {
                // The backend refused an I/O (not an I/O error of the target): stop everything
                // and drain what is in flight.
                backend_failure(&mut recs[r], &mut us, &e);
            }
        }
        if flow_poll {
            // (held back by streams of other workers: give them the CPU first)
            if inflight == 0 {
                std::thread::yield_now();
            }
            wake = wake.min(now.saturating_add(FLOW_POLL_NS));
        }
        // The next steady-state check wakes the loop.
        for (run, st) in steady.iter().zip(&us) {
            if let (Some(run), false) = (run, st.stopping) {
                wake = wake.min(run.next_check);
            }
        }
        // A unit whose every stream has ended (a replay at the end of its trace) stops.
        for (u, st) in us.iter_mut().enumerate() {
            if !st.stopping
                && streams
                    .iter()
                    .zip(&ss)
                    .filter(|(s, _)| s.unit == u)
                    .all(|(_, x)| x.exhausted)
            {
                st.stopping = true;
                st.out.source_done = true;
            }
            // fio's exitall: a unit that stops tells whoever waits for it (once).
            if st.stopping && !st.told_end {
                st.told_end = true;
                if let Some(f) = units[u].ctl.on_end {
                    (f.0)(st.out.stopped_on_error);
                }
            }
        }
        if any_flow {
            if let Some(at) = leave_flows(units, streams, &mut ss, now, |i| {
                us[streams[i].unit].stopping
            }) {
                wake = wake.min(at);
            }
        }
        if inflight == 0 {
            if us.iter().all(|st| st.stopping) {
                break;
            }
            if wake == u64::MAX {
                // Nothing in flight and nothing waiting: every free slot belongs to a stopped
                // unit or an ended stream; the checks above end the loop next time round.
                continue;
            }
        }
        // fio's wait_for_completions: a stream whose queue is full waits for a batch of
        // completions, and drains to its low water mark.
        let min_wait = if any_batch {
            batch_wait(streams, units, &ss, &us, &mut bs)
        } else {
            1
        };
        let waited = if wake != u64::MAX {
            let now = backend.now();
            backend.wait_until(wake.min(now.saturating_add(WAIT_SLICE_NS)), inflight)
        } else {
            backend.submit_wait(min_wait, WAIT_SLICE_NS)
        };
        if let Err(e) = waited {
            // The backend itself failed (not one I/O): count it as an error and stop.
            backend_failure(&mut recs[0], &mut us, &e);
            break;
        }
        cqes.clear();
        backend.reap(&mut cqes);
        // The completions of a stream waiting for a batch wait with it.
        if any_batch && bs.iter().any(|x| x.need > 0) {
            park(&mut cqes, &mut parked, &mut handled, &state, &mut bs);
        }
        // fio's iodepth_complete: completions reaped at once, per recorder (a wait that ended
        // with none — a think time's, a rate's, or a batch not complete yet — is no reap: fio
        // reaps only while I/Os are in flight, and waits for them).
        if one_rec {
            if measuring_any && !cqes.is_empty() {
                recs[0].record_complete(cqes.len() as u64);
            }
        } else {
            for c in &cqes {
                let s = &state[c.slot as usize];
                if s.measured {
                    per_rec[s.rec as usize] += 1;
                }
            }
            for (r, n) in per_rec.iter_mut().enumerate() {
                if *n > 0 {
                    recs[r].record_complete(std::mem::take(n));
                }
            }
        }
        for c in &cqes {
            let s = &mut state[c.slot as usize];
            inflight -= 1;
            free.push(c.slot);
            s.freed_at = c.t_ns;
            let s = &*s;
            let si = s.stream as usize;
            ss[si].inflight -= 1;
            ss[si].drained_at = ss[si].drained_at.max(c.t_ns);
            let (u, r) = (s.unit as usize, s.rec as usize);
            let ctl = units[u].ctl;
            let data = &units[u].data;
            let rec = &mut recs[r];
            if let (Some(log), OpKind::Write) = (log.as_deref_mut(), s.op.kind) {
                let done = c.res.clamp(0, s.op.len as i64) as u64;
                log.wrote(s.op.offset, done);
                log.failed(s.op.offset + done, s.op.len - done);
            }
            if any_backlog {
                if let Some(b) = backlogs[si].as_mut() {
                    b.done(&s.op, piece_of[c.slot as usize], c.res);
                }
            }
            if !s.measured {
                if !us[u].measuring {
                    let d = &mut ss[si].ramp_done[s.op.kind.index()];
                    d.0 += 1;
                    d.1 += c.res.clamp(0, s.op.len as i64) as u64;
                    ss[si].ramp_last = ss[si].ramp_last.max(c.t_ns);
                }
                continue;
            }
            // An I/O the backend did while it was pushed (a trim's ioctl) was submitted when
            // the call began.
            let t_submit = match c.started_ns {
                Cqe::WITH_BATCH => s.t_submit,
                b => b.clamp(s.t_issue, s.t_submit),
            };
            let t = c.t_ns.max(t_submit);
            if t > ss[si].last_completion {
                ss[si].last_completion = t;
            }
            if ctl.fill_device && s.op.kind == OpKind::Write {
                // fio's fill_device: a write that finds the file system full ends the job
                // without an error, counted as an I/O of no bytes; a short write is the file
                // system filling up: fio writes the rest, which fails, and counts both I/Os
                let spent = match c.res {
                    r if r < 0 && full(-r) => 1,
                    r if r >= 0 && (r as u64) < s.op.len => 2,
                    _ => 0,
                };
                if spent > 0 {
                    for _ in 0..spent {
                        rec.record_failed(s.op.kind);
                    }
                    us[u].stopping = true;
                    us[u].out.filled = true;
                    continue;
                }
            }
            if c.res < 0 {
                rec.record_error(
                    s.op.kind,
                    s.op.offset,
                    s.op.len,
                    (-c.res) as i32,
                    errno_text(-c.res),
                );
                if ctl.name_ops {
                    ss[si].name_failed = true;
                    if ctl.continue_on_error {
                        let n = &mut ss[si].name_uncounted;
                        if n.0 == 0 {
                            n.1 = (-c.res) as i32;
                        }
                        n.0 += 1;
                    }
                    rec.tally.end((-c.res) as i32);
                    continue;
                }
                rec.record_failed(s.op.kind);
                ctl.on_error(rec, s.op.kind, (-c.res) as i32, Found::Transfer);
                continue;
            }
            // (fio counts a failed name operation under continue_on_error once a later one of
            // the pass succeeds: total_err, first_error)
            if ss[si].name_uncounted.0 > 0 {
                let (n, e) = std::mem::take(&mut ss[si].name_uncounted);
                for _ in 0..n {
                    rec.tally.count(e);
                }
            }
            let bytes = c.res as u64;
            prog[u].0 += 1;
            prog[u].1 += bytes;
            let unit = &mut us[u];
            unit.done_ios += 1;
            unit.done_bytes += bytes;
            unit.done_clat_ns += t - t_submit;
            if let Some(m) = ctl.steady_group {
                m.add(bytes, t - t_submit);
            }
            if any_min_rate {
                let d = &mut unit.dir_done[s.op.kind.index()];
                d.0 += 1;
                d.1 += bytes;
            }
            if let (Some(want), OpKind::Read) = (data.check_pattern, s.op.kind) {
                if let Some(buf) = backend.buffer(c.slot) {
                    let buf = &buf[..bytes.min(s.op.len) as usize];
                    let sectors = buf.len().div_ceil(verify::SECTOR) as u64;
                    match want.first_mismatch(buf) {
                        None => rec.verify.sectors_ok += sectors,
                        Some((i, got, wanted)) => {
                            let bad = want.bad_chunks(buf, verify::SECTOR);
                            rec.verify.sectors_bad += bad;
                            rec.verify.sectors_ok += sectors - bad;
                            rec.record_error(
                                OpKind::Read,
                                s.op.offset + i as u64,
                                1,
                                EILSEQ,
                                format!(
                                    "verify: bad pattern at offset {}: got 0x{got:02x}, wanted 0x{wanted:02x}",
                                    s.op.offset + i as u64
                                ),
                            );
                            verify_failed(ctl, rec, &mut us[u]);
                        }
                    }
                }
            }
            if let (Some(seed), OpKind::Read) = (data.verify, s.op.kind) {
                if let Some(buf) = backend.buffer(c.slot) {
                    let known = data.known;
                    let got = verify::check_run(
                        &buf[..bytes.min(s.op.len) as usize],
                        s.op.offset,
                        seed,
                        data.verify_epoch,
                        |at| known.and_then(|m| m.seed_of(at)),
                    );
                    // (fio: a block without a header is a "bad magic header")
                    let missing = if data.headers_required {
                        got.no_header
                    } else {
                        0
                    };
                    rec.verify.sectors_ok += got.ok;
                    rec.verify.sectors_unwritten += got.unwritten - missing;
                    rec.verify.sectors_bad += got.bad + missing;
                    let no_header = got.first_no_header.filter(|_| missing > 0);
                    if let (None, Some(at)) = (got.first_bad, no_header) {
                        rec.record_error(
                            OpKind::Read,
                            at,
                            verify::SECTOR as u64,
                            EILSEQ,
                            format!("verify: sector at {at} holds no verification header (not written by a verifying job, or overwritten since)"),
                        );
                        verify_failed(ctl, rec, &mut us[u]);
                    }
                    if let Some((at, why)) = got.first_bad {
                        rec.record_error(
                            OpKind::Read,
                            at,
                            verify::SECTOR as u64,
                            EILSEQ,
                            format!("verify: sector {why}"),
                        );
                        verify_failed(ctl, rec, &mut us[u]);
                    }
                }
            }
            rec.record_io(
                s.job,
                s.op.kind,
                bytes,
                s.op.offset,
                t_submit - s.t_issue,
                t - t_submit,
                t.saturating_sub(us[u].t0),
            );
            if let Some(max) = ctl.max_latency_ns {
                // fio's max_latency (`lat_fatal`): an I/O above its direction's limit fails
                let lim = max[s.op.kind.index()];
                if lim > 0 && t - s.t_issue > lim {
                    too_slow(
                        ctl,
                        rec,
                        &s.op,
                        format!(
                            "max latency exceeded: latency of {} nsec exceeds specified max ({lim} nsec)",
                            t - s.t_issue
                        ),
                    );
                }
            }
            if let (Some(l), Some(target)) = (ss[si].lat.as_mut(), ctl.latency_target) {
                // fio's latency target judges the total latency of every I/O completed.
                l.ios += 1;
                if t - s.t_issue > target.target_ns {
                    if target.percentile < 100.0 {
                        l.slow += 1;
                    } else if l.failed() == LatStep::Fatal {
                        too_slow(
                            ctl,
                            rec,
                            &s.op,
                            format!(
                                "max latency exceeded: latency of {} nsec exceeds the target of {} nsec at depth 1",
                                t - s.t_issue,
                                target.target_ns
                            ),
                        );
                    }
                }
            }
            // fio's asynchronous engines take a transfer that moved nothing (a read of
            // /dev/null) as an I/O of no bytes; its synchronous ones end the job there (its
            // "full resid", not counted short)
            let fio_sync = ctl.non_fatal.map(|n| n.sync_engine);
            if bytes < s.op.len && !(bytes == 0 && fio_sync == Some(false)) {
                if bytes > 0 || fio_sync.is_none() {
                    rec.record_short(s.op.kind);
                }
                rec.record_error(
                    s.op.kind,
                    s.op.offset,
                    s.op.len,
                    EIO,
                    format!(
                        "short {}: {bytes} of {} bytes",
                        s.op.kind.as_str(),
                        s.op.len
                    ),
                );
                // nothing moved at all (a read at the end of a file, of /dev/null) ends the job
                // whatever continue_on_error says, as fio's "full resid" does
                let found = if bytes == 0 {
                    Found::NothingMoved
                } else {
                    Found::Transfer
                };
                ctl.on_error(rec, s.op.kind, EIO, found);
            }
        }
        if any_min_rate {
            if let Some(at) = cqes.iter().map(|c| c.t_ns).max() {
                check_min_rates(units, &mut us, recs, streams, at);
            }
        }
        if any_lat {
            // fio's lat_target_check, after each reap, once the ramp is over.
            let now = backend.now();
            for (si, x) in ss.iter_mut().enumerate() {
                let u = streams[si].unit;
                if let (Some(l), Some(target)) = (x.lat.as_mut(), units[u].ctl.latency_target) {
                    if !us[u].stopping && now >= us[u].t0 && l.check(now, &target) == LatStep::Done
                    {
                        us[u].stopping = true;
                        us[u].out.latency_found = true;
                    }
                }
            }
        }
    }
    for (u, (ios, bytes)) in prog.into_iter().enumerate() {
        if let Some(p) = units[u].ctl.progress {
            p.ios.fetch_add(ios, Ordering::Relaxed);
            p.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }
    let end = backend.now();
    // fio's verify phase reads what its backlog left
    for (i, b) in backlogs.iter().enumerate() {
        if let (Some(b), Some(sink)) = (b, units[streams[i].unit].data.unverified) {
            sink.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(b.rest());
        }
    }
    for (u, run) in steady.into_iter().enumerate() {
        if let (Some(run), Ok(mut out)) = (run, units[u].ctl.steady_out.lock()) {
            *out = Some(run.finish());
        }
    }
    let mut outs = Vec::with_capacity(streams.len());
    for (i, s) in streams.iter().enumerate() {
        let st = &us[s.unit];
        let ctl = units[s.unit].ctl;
        let mut out = st.out;
        if ctl.error_stop.load(Ordering::Relaxed) && !out.interrupted {
            out.stopped_on_error = true;
        }
        out.ramp_ns = ctl.ramp_ns.min(end.saturating_sub(st.begin));
        out.latency_depth = ss[i].lat.map_or(0, |l| l.qd);
        let last = ss[i].last_completion;
        out.runtime_ns = if !st.measuring && ss[i].ramp_done.iter().any(|d| d.0 > 0) {
            // the job ended within its ramp: fio's statistics were never reset, so it reports
            // the I/Os and bytes done (no latency samples: fio takes none during the ramp)
            // over the time since the job began
            for (k, d) in ss[i].ramp_done.iter().enumerate() {
                recs[s.rec].count_unsampled(k, d.0, d.1);
            }
            ss[i].ramp_last.saturating_sub(st.begin)
        } else if end <= st.t0 {
            0
        } else if st.deadline != u64::MAX
            && !out.interrupted
            && !out.stopped_on_error
            && !out.budget_done
            && !out.source_done
            && !out.stonewalled
            && !out.steady_attained
            && !out.latency_found
            && !out.verify_ended
            && !out.filled
        {
            // Time-based: the measured time is the deadline plus the drain of the last I/Os.
            last.max(st.deadline) - st.t0
        } else {
            last.saturating_sub(st.t0)
        };
        outs.push(out);
    }
    // Members of a flow leave it last, once the others had the time fio gives them.
    if any_flow {
        let mut now = backend.now();
        while let Some(at) = leave_flows(units, streams, &mut ss, now, |_| true) {
            // (a failing wait only shortens the hold)
            let _ = backend.wait_until(at, 0);
            now = backend.now().max(at);
        }
    }
    outs
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_workload::{SteadyCriterion, SteadyMetric};

    const S: u64 = 1_000_000_000;

    /// fio's depth search (`lat_target_success`/`__lat_target_failed`): doubling while the
    /// windows hold, bisecting between the last depth that held and the one that failed, a
    /// final window at a depth found twice, then done.
    #[test]
    fn latency_search_steps_as_fio() {
        let mut l = LatSearch::new(32, 0);
        let mut seen = vec![l.qd];
        for _ in 0..5 {
            assert_eq!(l.success(0, false), LatStep::Go);
            seen.push(l.qd);
        }
        assert_eq!(seen, [1, 2, 4, 8, 16, 32]);
        // 32 again: the final window (quiesce, statistics again), then done
        assert_eq!(l.success(0, false), LatStep::Go);
        assert!(l.end_run && l.reset && l.quiesce);
        assert_eq!(l.success(0, false), LatStep::Done);

        // failing at 16: bisect down to 12, then up between 12 and 16
        let mut l = LatSearch::new(32, 0);
        for _ in 0..4 {
            l.success(0, false);
        }
        assert_eq!(l.qd, 16);
        assert_eq!(l.failed(), LatStep::Go);
        assert!(l.quiesce);
        assert_eq!((l.low, l.qd, l.high), (8, 12, 16));
        l.success(0, false);
        assert_eq!(l.qd, 14);
        l.success(0, false);
        assert_eq!(l.qd, 15);
        // 15 + 1 == 16: stable; 15 again ends the search with a final window at 15
        assert_eq!(l.success(0, false), LatStep::Go);
        assert_eq!((l.qd, l.end_run), (15, true));
        assert_eq!(l.success(0, false), LatStep::Done);
        // latency_run keeps adjusting: never done
        let mut l = LatSearch::new(2, 0);
        for _ in 0..10 {
            assert_eq!(l.success(0, true), LatStep::Go);
        }
        // at depth 1 a failure is fatal (with a percentile of 100)
        assert_eq!(LatSearch::new(8, 0).failed(), LatStep::Fatal);
    }

    /// fio's `lat_target_check`: a window's share of I/Os within the target against the
    /// percentile, checked once the window has passed; an empty window fails.
    #[test]
    fn latency_check_judges_whole_windows() {
        let t = ssdlab_workload::LatencyTarget {
            target_ns: 100_000,
            window_ns: 1_000_000,
            percentile: 99.0,
            keep_running: false,
            max_depth: 16,
        };
        let mut l = LatSearch::new(16, 0);
        l.ios = 1000;
        l.slow = 10;
        assert_eq!(l.check(999_999, &t), LatStep::Go);
        assert_eq!(l.qd, 1, "the window has not passed");
        assert_eq!(l.check(1_000_000, &t), LatStep::Go);
        assert_eq!(l.qd, 2, "99 % within the target holds");
        l.ios += 1000;
        l.slow = 11;
        l.check(2_000_000, &t);
        assert_eq!(l.qd, 1, "98.9 % does not");
        // nothing completed in a window: a failure (at depth 1 it stays there)
        l.check(3_000_000, &t);
        assert_eq!(l.qd, 1);
    }

    fn crit(limit_pct: f64) -> SteadyCriterion {
        SteadyCriterion {
            metric: SteadyMetric::Iops,
            slope: false,
            limit: limit_pct,
            pct: true,
            duration_ns: 3 * S,
            ramp_ns: 0,
            interval_ns: S,
        }
    }

    /// Runs the checks of `run` with each member's I/Os per second (`rates[k][m]`: member `m`
    /// in second `k`); the check (1-based) at which it was attained.
    fn checks(run: &mut SteadyRun, rates: &[Vec<u64>]) -> Option<usize> {
        let mut done = vec![(0u64, 0u64, 0u64); rates[0].len()];
        for (k, second) in rates.iter().enumerate() {
            for (d, &r) in done.iter_mut().zip(second) {
                *d = (d.0 + r, d.1 + r * 4096, d.2 + r * 1000);
            }
            if run.check(&done) {
                return Some(k + 1);
            }
        }
        None
    }

    #[test]
    fn a_group_is_checked_on_the_sum_of_its_members() {
        // Each member alone swings by a third; together they are flat at 150 IOPS.
        let rates = vec![vec![100, 50], vec![50, 100], vec![100, 50], vec![50, 100]];
        let mut group = SteadyRun::new(crit(5.0), 0);
        assert_eq!(
            checks(&mut group, &rates),
            Some(3),
            "the window is full at 3 s"
        );
        let ss = group.finish();
        assert!(ss.attained);
        assert_eq!(ss.iops, vec![150, 150, 150]);
        assert_eq!(ss.bw, vec![150 * 4096; 3]);
        assert_eq!(ss.lat_ns, vec![1000; 3]);
        assert_eq!(
            ss.slope, 0.0,
            "fio leaves the slope of a deviation criterion at 0"
        );
        // one member alone is not steady
        let first: Vec<Vec<u64>> = rates.iter().map(|r| vec![r[0]]).collect();
        let mut alone = SteadyRun::new(crit(5.0), 0);
        assert_eq!(checks(&mut alone, &first), None);
        assert_eq!(alone.finish().iops, vec![50, 100, 50]);
    }

    #[test]
    fn a_member_that_ended_adds_nothing() {
        // The second member stops after 2 s: the group falls from 150 to 100 IOPS.
        let rates = vec![vec![100, 50], vec![100, 50], vec![100, 0], vec![100, 0]];
        let mut run = SteadyRun::new(crit(5.0), 0);
        assert_eq!(checks(&mut run, &rates), None);
        assert_eq!(run.finish().iops, vec![150, 100, 100]);
        // the ramp: samples from ramp + one interval on
        let mut c = crit(5.0);
        c.ramp_ns = S;
        let mut run = SteadyRun::new(c, 0);
        let flat = vec![vec![100, 50]; 4];
        assert_eq!(checks(&mut run, &flat), Some(4));
    }

    #[test]
    fn members_publish_and_the_last_one_evaluates() {
        let g = SteadyGroup::new(3);
        assert_eq!(g.len(), 3);
        assert!(!g.member(0).evaluates());
        assert!(!g.member(1).evaluates());
        assert!(g.member(2).evaluates());
        g.member(0).add(4096, 10);
        g.member(2).add(8192, 20);
        g.member(2).add(8192, 30);
        assert_eq!(g.counters(), vec![(1, 4096, 10), (0, 0, 0), (2, 16384, 50)]);
        assert!(!g.attained());
        g.attained.store(true, Ordering::Relaxed);
        assert!(g.attained());
    }
}
