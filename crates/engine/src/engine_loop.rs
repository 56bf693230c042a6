//! The closed loop itself, shared by every backend.

use crate::backend::{Backend, Cqe};
use ssdlab_stats::Recorder;
use ssdlab_target::written::{WriteLog, WrittenMap};
use ssdlab_workload::{verify, Op, OpGen, OpKind, Pattern};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Wall time a wait may block before the loop looks at the stop flags again.
const WAIT_SLICE_NS: u64 = 100_000_000;

/// Stop conditions and shared state of one run (shared by all workers of the run).
#[derive(Debug)]
pub struct Control<'a> {
    /// Ramp time, ns on the backend clock.
    pub ramp_ns: u64,
    /// Measured time limit, ns.
    pub time_ns: Option<u64>,
    /// Measured I/Os still allowed to be issued (all workers together); `u64::MAX` = unlimited.
    pub budget: AtomicU64,
    /// Keep going after an I/O error.
    pub continue_on_error: bool,
    /// Set when any worker stops because of an error, so the others stop too.
    pub error_stop: AtomicBool,
    /// Raised from outside (Ctrl-C, SIGTERM, a sweep being stopped): stop issuing, drain, report
    /// what was measured, marked interrupted.
    pub stop: Option<&'a AtomicBool>,
    /// Raised by whoever coordinates several runs (other ranks of a job: IOR's stonewalling, or
    /// another rank's failure): stop issuing and drain like `stop`, but the run is not marked
    /// interrupted; its outcome says `stonewalled`.
    pub stonewall: Option<&'a AtomicBool>,
}

impl<'a> Control<'a> {
    pub fn new(ramp_ns: u64, time_ns: Option<u64>, max_ios: Option<u64>) -> Self {
        Control {
            ramp_ns,
            time_ns,
            budget: AtomicU64::new(max_ios.unwrap_or(u64::MAX)),
            continue_on_error: false,
            error_stop: AtomicBool::new(false),
            stop: None,
            stonewall: None,
        }
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
}

#[derive(Clone, Copy)]
struct SlotState {
    op: Op,
    t_issue: u64,
    t_submit: u64,
    /// When the slot's last I/O completed (the run start before its first).
    freed_at: u64,
    /// The worker owning the slot (its generator).
    worker: u32,
    measured: bool,
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
    mut log: Option<&mut WriteLog>,
) -> LoopOutcome {
    let DataOpts {
        pattern,
        verify,
        known,
        ..
    } = data;
    let nslots = gens.len() as u32 * qd;
    let mut pattern_rng = ssdlab_workload::rng::Rng::new(data.pattern_seed);
    let mut generation: u64 = 0;
    // Fixed patterns are written once into every buffer; random ones are refilled per write.
    if !pattern.refills() {
        for slot in 0..nslots {
            if let Some(buf) = backend.buffer(slot) {
                pattern.fill(&mut pattern_rng, buf);
            }
        }
    }
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
            worker: slot / qd,
            measured: false,
        })
        .collect();
    // Idle slots; the next ones to issue are taken from the end.
    let mut free: Vec<u32> = (0..nslots).rev().collect();
    let mut cqes: Vec<Cqe> = Vec::with_capacity(nslots as usize * 2);
    let mut inflight: u32 = 0;
    let t0 = start + ctl.ramp_ns;
    let deadline = ctl.time_ns.map(|t| t0 + t).unwrap_or(u64::MAX);
    let mut out = LoopOutcome::default();
    let mut stopping = false;
    let mut measuring = false;
    let mut last_completion = t0;

    loop {
        if !stopping {
            let now = backend.now();
            if now >= deadline {
                stopping = true;
            } else if ctl.stop_requested() {
                stopping = true;
                out.interrupted = true;
            } else if ctl.error_stop.load(Ordering::Relaxed) {
                stopping = true;
                out.stopped_on_error = true;
            } else if ctl.stonewalled() {
                stopping = true;
                out.stonewalled = true;
            }
            if !stopping && !free.is_empty() {
                let measured = now >= t0;
                if measured && !measuring {
                    measuring = true;
                    backend.mark_measurement_start();
                }
                let n = if measured {
                    ctl.claim(free.len() as u64) as usize
                } else {
                    free.len()
                };
                if measured && n == 0 {
                    stopping = true;
                    out.budget_done = true;
                } else {
                    // Issue the last `n` free slots, last one first (the order `pop` gives).
                    let first = free.len() - n;
                    let mut pushed = 0usize;
                    let mut push_error = None;
                    for &slot in free[first..].iter().rev() {
                        let s = &mut state[slot as usize];
                        let op = gens[s.worker as usize].next_op();
                        // The op is issued when its slot became free, so the time spent in the
                        // tool between a completion and the next submission counts as submission
                        // latency, and slots are busy back to back (Little's law holds exactly).
                        let t_issue = s.freed_at.max(start).min(now);
                        if op.kind == OpKind::Write && (pattern.refills() || verify.is_some()) {
                            if let Some(buf) = backend.buffer(slot) {
                                let buf = &mut buf[..op.len as usize];
                                match verify {
                                    Some(seed) => {
                                        generation += 1;
                                        verify::stamp(
                                            buf,
                                            op.offset,
                                            generation,
                                            seed,
                                            &mut pattern_rng,
                                        )
                                    }
                                    None => pattern.fill(&mut pattern_rng, buf),
                                }
                            }
                        }
                        if let Err(e) = backend.push(slot, &op) {
                            push_error = Some(e);
                            break;
                        }
                        s.op = op;
                        s.t_issue = t_issue;
                        s.measured = measured;
                        pushed += 1;
                    }
                    // The pushed slots are the last `pushed` of the batch.
                    let issued_from = free.len() - pushed;
                    let t_submit = backend.now();
                    for &slot in &free[issued_from..] {
                        state[slot as usize].t_submit = t_submit;
                    }
                    free.truncate(issued_from);
                    inflight += pushed as u32;
                    if measured && pushed > 0 {
                        rec.record_depth(inflight, pushed as u64);
                    }
                    if let Some(e) = push_error {
                        // The backend refused an I/O (not an I/O error of the target): stop and
                        // drain what is in flight.
                        rec.record_error(OpKind::Read, 0, 0, format!("backend failure: {e}"));
                        out.stopped_on_error = true;
                        stopping = true;
                    }
                }
            }
        }
        if inflight == 0 {
            break;
        }
        if let Err(e) = backend.submit_wait(1, WAIT_SLICE_NS) {
            // The backend itself failed (not one I/O): count the in-flight ops as errors and stop.
            rec.record_error(OpKind::Read, 0, 0, format!("backend failure: {e}"));
            out.stopped_on_error = true;
            break;
        }
        cqes.clear();
        backend.reap(&mut cqes);
        for c in &cqes {
            let s = &mut state[c.slot as usize];
            inflight -= 1;
            free.push(c.slot);
            s.freed_at = c.t_ns;
            let s = &*s;
            if let (Some(log), OpKind::Write) = (log.as_deref_mut(), s.op.kind) {
                let done = c.res.clamp(0, s.op.len as i64) as u64;
                log.wrote(s.op.offset, done);
                log.failed(s.op.offset + done, s.op.len - done);
            }
            if !s.measured {
                continue;
            }
            let t = c.t_ns.max(s.t_submit);
            if t > last_completion {
                last_completion = t;
            }
            if c.res < 0 {
                rec.record_error(s.op.kind, s.op.offset, s.op.len, errno_text(-c.res));
                if !ctl.continue_on_error {
                    ctl.error_stop.store(true, Ordering::Relaxed);
                }
                continue;
            }
            let bytes = c.res as u64;
            if let (Some(seed), OpKind::Read) = (verify, s.op.kind) {
                if let Some(buf) = backend.buffer(c.slot) {
                    let got = verify::check_known(
                        &buf[..bytes.min(s.op.len) as usize],
                        s.op.offset,
                        seed,
                        |at| known.and_then(|m| m.seed_of(at)),
                    );
                    rec.verify.sectors_ok += got.ok;
                    rec.verify.sectors_unwritten += got.unwritten;
                    rec.verify.sectors_bad += got.bad;
                    if let Some((at, why)) = got.first_bad {
                        rec.record_error(
                            OpKind::Read,
                            at,
                            verify::SECTOR as u64,
                            format!("verify: sector {why}"),
                        );
                        if !ctl.continue_on_error {
                            ctl.error_stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            rec.record(
                s.op.kind,
                bytes,
                s.t_submit - s.t_issue,
                t - s.t_submit,
                t.saturating_sub(t0),
            );
            if bytes < s.op.len {
                rec.record_short(s.op.kind);
                rec.record_error(
                    s.op.kind,
                    s.op.offset,
                    s.op.len,
                    format!(
                        "short {}: {bytes} of {} bytes",
                        s.op.kind.as_str(),
                        s.op.len
                    ),
                );
                if !ctl.continue_on_error {
                    ctl.error_stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }
    if ctl.error_stop.load(Ordering::Relaxed) && !out.interrupted {
        out.stopped_on_error = true;
    }
    let end = backend.now();
    out.ramp_ns = ctl.ramp_ns.min(end.saturating_sub(start));
    out.runtime_ns = if end <= t0 {
        0
    } else if deadline != u64::MAX
        && !out.interrupted
        && !out.stopped_on_error
        && !out.budget_done
        && !out.stonewalled
    {
        // Time-based: the measured time is the deadline plus the drain of the last I/Os.
        last_completion.max(deadline) - t0
    } else {
        last_completion - t0
    };
    out
}
