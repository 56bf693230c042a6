//! `run_loop` through its own `Backend` trait, on a scripted backend with a virtual clock: every
//! number below is exact, because the backend decides when each I/O completes.

use ssdlab_engine::{
    run_loop, run_streams, Backend, Control, Cqe, DataOpts, ErrnoList, Flow, FlowShare, Found,
    LoopOutcome, NonFatal, OnPass, Stream, Unit,
};
use ssdlab_stats::Recorder;
use ssdlab_target::written::WriteLog;
use ssdlab_workload::{
    Op, OpGen, OpKind, OpSource, Pattern, Replay, ReplaySpec, RwMode, StopCondition, Trace,
    WorkloadSpec,
};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// What the script does to the n-th pushed op (1-based).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    Ok,
    Error(i64),
    Short,
    RefusePush,
}

/// A backend on a virtual clock: every op takes `latency` (per kind) from its push; the script
/// decides the fate of particular ops; `stop_after` raises a stop flag after that many
/// completions (a Ctrl-C in the middle of the run).
struct Scripted<'a> {
    now: u64,
    read_latency: u64,
    write_latency: u64,
    fates: BTreeMap<u64, Fate>,
    pushed: u64,
    completed: u64,
    /// slot → (completion time, result)
    inflight: BTreeMap<u32, (u64, i64)>,
    ready: Vec<Cqe>,
    max_inflight: usize,
    stop_after: Option<(u64, &'a AtomicBool)>,
    pushes_after_stop: u64,
    /// (push time, offset) of every op pushed, and its slot.
    pushes: Vec<(u64, u64)>,
    /// Added to an op's latency per op already in flight when it is pushed.
    depth_latency: u64,
    slots: Vec<u32>,
    /// The slots in flight (a bit each) just before each push.
    masks: Vec<u64>,
}

impl<'a> Scripted<'a> {
    fn new(latency: u64) -> Self {
        Scripted {
            now: 0,
            read_latency: latency,
            write_latency: latency,
            fates: BTreeMap::new(),
            pushed: 0,
            completed: 0,
            inflight: BTreeMap::new(),
            ready: Vec::new(),
            max_inflight: 0,
            stop_after: None,
            pushes_after_stop: 0,
            pushes: Vec::new(),
            depth_latency: 0,
            slots: Vec::new(),
            masks: Vec::new(),
        }
    }
}

impl Backend for Scripted<'_> {
    fn now(&mut self) -> u64 {
        self.now
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        assert!(
            !self.inflight.contains_key(&slot),
            "slot {slot} pushed while in flight"
        );
        let n = self.pushed + 1;
        let fate = self.fates.get(&n).copied().unwrap_or(Fate::Ok);
        if fate == Fate::RefusePush {
            return Err(io::Error::other("scripted refusal"));
        }
        self.pushed = n;
        if self
            .stop_after
            .is_some_and(|(_, f)| f.load(Ordering::SeqCst))
        {
            self.pushes_after_stop += 1;
        }
        let lat = if op.kind == OpKind::Read {
            self.read_latency
        } else {
            self.write_latency
        };
        let res = match fate {
            Fate::Ok => op.len as i64,
            Fate::Error(e) => -e,
            Fate::Short => (op.len / 2) as i64,
            Fate::RefusePush => unreachable!(),
        };
        let lat = lat + self.depth_latency * self.inflight.len() as u64;
        self.masks
            .push(self.inflight.keys().fold(0, |m, &k| m | 1u64 << (k % 64)));
        self.inflight.insert(slot, (self.now + lat, res));
        self.pushes.push((self.now, op.offset));
        self.slots.push(slot);
        self.max_inflight = self.max_inflight.max(self.inflight.len());
        Ok(())
    }
    fn submit_wait(&mut self, _min: usize, _timeout_ns: u64) -> io::Result<()> {
        let Some(t) = self.inflight.values().map(|v| v.0).min() else {
            return Ok(());
        };
        self.now = self.now.max(t);
        let due: Vec<u32> = self
            .inflight
            .iter()
            .filter(|(_, v)| v.0 <= self.now)
            .map(|(s, _)| *s)
            .collect();
        for slot in due {
            let (t, res) = self.inflight.remove(&slot).unwrap();
            self.ready.push(Cqe {
                slot,
                res,
                t_ns: t,
                started_ns: Cqe::WITH_BATCH,
            });
            self.completed += 1;
            if let Some((after, flag)) = self.stop_after {
                if self.completed == after {
                    flag.store(true, Ordering::SeqCst);
                }
            }
        }
        Ok(())
    }
    fn wait_until(&mut self, deadline_ns: u64, _inflight: u32) -> io::Result<()> {
        match self.inflight.values().map(|v| v.0).min() {
            Some(t) if t <= deadline_ns => self.submit_wait(1, 0),
            _ => {
                self.now = self.now.max(deadline_ns);
                Ok(())
            }
        }
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        out.append(&mut self.ready);
    }
    fn mark_measurement_start(&mut self) {}
    fn submit_batch(&self) -> u32 {
        0
    }
    fn member_stats(&mut self) -> Vec<ssdlab_stats::MemberStats> {
        Vec::new()
    }
}

fn spec(rw: RwMode, qd: u32, jobs: u32) -> WorkloadSpec {
    WorkloadSpec {
        rw,
        read_pct: rw.fixed_read_pct().unwrap_or(50),
        random_pct: rw.default_random_pct(),
        qd,
        jobs,
        span: Some(1 << 30),
        pattern: Pattern::Zeros,
        ..Default::default()
    }
}

fn data() -> DataOpts<'static> {
    DataOpts {
        pattern: Pattern::Zeros,
        pattern_seed: 1,
        verify: None,
        known: None,
        verify_epoch: 0,
        check_pattern: None,
        dedupe: None,
        refill_after_read: true,
        backlog: None,
        unverified: None,
        headers_required: false,
    }
}

fn run(
    b: &mut Scripted<'_>,
    s: &WorkloadSpec,
    ctl: &Control<'_>,
    log: Option<&mut WriteLog>,
) -> (Recorder, LoopOutcome) {
    let mut gens: Vec<OpGen> = (0..s.jobs).map(|w| OpGen::new(s, 0, 1 << 30, w)).collect();
    let mut rec = Recorder::default();
    let out = run_loop(b, &mut gens, s.qd, data(), ctl, &mut rec, log);
    (rec, out)
}

/// Runs one stream of `spec`'s source over `[0, span)` at depth `qd` under `ctl`.
fn run_source(
    b: &mut Scripted<'_>,
    spec: &WorkloadSpec,
    span: u64,
    qd: u32,
    ctl: &Control<'_>,
) -> Recorder {
    let mut streams = [Stream {
        source: OpSource::for_worker(spec, None, 0, span, 0),
        qd,
        unit: 0,
        rec: 0,
    }];
    let mut rec = Recorder::default();
    run_streams(
        b,
        &mut streams,
        &[Unit { ctl, data: data() }],
        std::slice::from_mut(&mut rec),
        None,
    );
    rec
}

#[test]
fn littles_law_is_exact() {
    for (qd, lat) in [(1, 100 * US), (4, 100 * US), (32, 37 * US)] {
        let s = spec(RwMode::Randread, qd, 1);
        let mut b = Scripted::new(lat);
        let ctl = Control::new(0, Some(S), None);
        let (rec, out) = run(&mut b, &s, &ctl, None);
        let r = rec.summary(OpKind::Read, out.runtime_ns);
        // Every slot is busy back to back: it issues at 0, lat, 2·lat, … while before the
        // deadline, and the last I/Os drain after it; mean latency is the service time.
        let per_slot = S.div_ceil(lat);
        assert_eq!(r.ios, qd as u64 * per_slot, "qd {qd}");
        assert_eq!(out.runtime_ns, S.max(per_slot * lat), "qd {qd}");
        // (Latencies are kept in an HDR histogram with 3 significant digits.)
        assert!(
            (r.lat.mean / lat as f64 - 1.0).abs() < 1e-3,
            "{}",
            r.lat.mean
        );
        let little = r.iops * r.lat.mean / 1e9;
        assert!((little / qd as f64 - 1.0).abs() < 1e-3, "qd {qd}: {little}");
        assert_eq!(b.max_inflight, qd as usize);
        assert!(b.inflight.is_empty(), "drained");
    }
}

#[test]
fn io_budget_is_exact_across_workers_and_sets_the_runtime() {
    let s = spec(RwMode::Randwrite, 3, 2);
    let mut b = Scripted::new(100 * US);
    // --ios 1000 with a 10 s limit: the budget ends the run long before the deadline.
    let ctl = Control::new(0, Some(10 * S), Some(1000));
    let (rec, out) = run(&mut b, &s, &ctl, None);
    let w = rec.summary(OpKind::Write, out.runtime_ns);
    assert_eq!(w.ios, 1000);
    assert_eq!(b.pushed, 1000, "no op beyond the budget is issued");
    assert!(out.budget_done);
    // 6 slots, 100 µs each: 1000 ops take ceil(1000/6) × 100 µs of virtual time.
    assert_eq!(out.runtime_ns, 1000u64.div_ceil(6) * 100 * US);
    assert!(out.runtime_ns < 20 * MS, "not the 10 s limit");
}

#[test]
fn ramp_is_excluded() {
    let s = spec(RwMode::Randread, 2, 1);
    let mut b = Scripted::new(50 * US);
    let ctl = Control::new(500 * MS, Some(S), None);
    let (rec, out) = run(&mut b, &s, &ctl, None);
    let r = rec.summary(OpKind::Read, out.runtime_ns);
    assert_eq!(out.ramp_ns, 500 * MS);
    assert_eq!(out.runtime_ns, S);
    assert_eq!(
        r.ios,
        2 * (S / (50 * US)),
        "only the measured second counts"
    );
    assert_eq!(b.completed, 2 * (1_500 * MS / (50 * US)));
}

#[test]
fn a_start_delay_comes_before_the_ramp_and_the_measured_time() {
    // fio's startdelay=200ms, ramp 300 ms, 1 s measured: nothing is issued for 200 ms.
    let s = spec(RwMode::Randread, 2, 1);
    let mut b = Scripted::new(50 * US);
    let ctl = Control::new(300 * MS, Some(S), None).with_delay(200 * MS);
    let (rec, out) = run(&mut b, &s, &ctl, None);
    assert_eq!(b.pushes[0].0, 200 * MS, "the first op waits for the delay");
    assert_eq!(out.ramp_ns, 300 * MS);
    assert_eq!(out.runtime_ns, S);
    assert_eq!(
        rec.summary(OpKind::Read, out.runtime_ns).ios,
        2 * (S / (50 * US))
    );
    assert_eq!(b.completed, 2 * (1_300 * MS / (50 * US)));
}

#[test]
fn an_error_stops_the_run_and_drains() {
    let s = spec(RwMode::Randwrite, 4, 1);
    let mut b = Scripted::new(10 * US);
    b.fates.insert(10, Fate::Error(5));
    let ctl = Control::new(0, Some(S), None);
    let (rec, out) = run(&mut b, &s, &ctl, None);
    assert!(out.stopped_on_error);
    assert_eq!(rec.error_records.len(), 1);
    assert!(
        rec.error_records[0].error.contains("EIO"),
        "{:?}",
        rec.error_records
    );
    assert!(b.inflight.is_empty());
    assert!(b.pushed < 20, "stopped soon after the error: {}", b.pushed);
    // The runtime ends at the last completion, not at the 1 s limit.
    assert!(out.runtime_ns < MS);
}

#[test]
fn continue_on_error_counts_and_goes_on() {
    let s = spec(RwMode::Randwrite, 1, 1);
    let mut b = Scripted::new(10 * US);
    b.fates.insert(3, Fate::Error(28));
    b.fates.insert(7, Fate::Short);
    let mut ctl = Control::new(0, None, Some(20));
    ctl.continue_on_error = true;
    let (rec, out) = run(&mut b, &s, &ctl, None);
    let w = rec.summary(OpKind::Write, out.runtime_ns);
    assert!(!out.stopped_on_error);
    assert_eq!(b.pushed, 20);
    assert_eq!(w.errors, 2, "ENOSPC and the short write");
    assert_eq!(w.short_ios, 1);
    assert_eq!(w.ios, 19, "the failed op is not a completed I/O");
}

/// fio's td_non_fatal_error: continue_on_error goes on after the errors of the classes it
/// names whose errno its list holds (EIO and EILSEQ unless ignore_error says which); another
/// error ends the job whatever continue_on_error says.
#[test]
fn continue_on_error_goes_on_after_fios_non_fatal_errors_only() {
    let s = spec(RwMode::Randwrite, 1, 1);
    let stops = |fate: Fate, nf: NonFatal| {
        let mut b = Scripted::new(10 * US);
        b.fates.insert(3, fate);
        let mut ctl = Control::new(0, None, Some(20));
        ctl.continue_on_error = nf.classes != 0;
        ctl.non_fatal = Some(nf);
        let (_, out) = run(&mut b, &s, &ctl, None);
        out.stopped_on_error
    };
    let all = NonFatal {
        classes: 7,
        ..Default::default()
    };
    // EIO goes on; ENOSPC is fatal (not in fio's default list); a short write is EIO
    assert!(!stops(Fate::Error(5), all));
    assert!(stops(Fate::Error(28), all));
    assert!(!stops(Fate::Short, all));
    // continue_on_error=read: a write's EIO ends the job
    let read = NonFatal {
        classes: 1,
        ..Default::default()
    };
    assert!(stops(Fate::Error(5), read));
    // ignore_error=,ENOSPC: the write class goes on after ENOSPC (and only it)
    let mut enospc = NonFatal {
        classes: 2,
        ..Default::default()
    };
    enospc.lists[1] = ErrnoList::new(&[28]).unwrap();
    assert!(!stops(Fate::Error(28), enospc));
    assert!(stops(Fate::Error(5), enospc));
    // the classes: EILSEQ is verify's whatever the direction; a trim is a write
    assert!(all.continues(OpKind::Trim, 5));
    assert!(!read.continues(OpKind::Read, 84));
    assert!(NonFatal { classes: 4, ..all }.continues(OpKind::Read, 84));
}

/// fio's tally (`update_error_count`, `td->error`): the errors continue_on_error goes past
/// are counted; the first that it does not go past ends the job and is its error, counted
/// (with a synchronous engine) when continue_on_error names its class; a failed I/O is one
/// more issued (fio's `total_ios`), never a completed one.
#[test]
fn continue_on_error_tallies_errors_as_fio() {
    let s = spec(RwMode::Randwrite, 1, 1);
    let tally = |fates: &[(u64, Fate)], nf: NonFatal| {
        let mut b = Scripted::new(10 * US);
        for (i, f) in fates {
            b.fates.insert(*i, *f);
        }
        let mut ctl = Control::new(0, None, Some(20));
        ctl.continue_on_error = nf.classes != 0;
        ctl.non_fatal = Some(nf);
        let (rec, out) = run(&mut b, &s, &ctl, None);
        let w = rec.summary(OpKind::Write, out.runtime_ns);
        (rec.tally, w.ios, w.failed_ios)
    };
    let write = NonFatal {
        classes: 2,
        sync_engine: true,
        ..Default::default()
    };
    // two EIOs gone past, then ENOSPC ends the job: all three counted, ENOSPC the error
    let fates = [
        (2, Fate::Error(5)),
        (4, Fate::Error(5)),
        (6, Fate::Error(28)),
    ];
    let (t, ios, failed) = tally(&fates, write);
    assert_eq!((t.counted, t.first, t.fatal, t.error()), (3, 5, 28, 28));
    assert_eq!((ios, failed), (3, 3));
    // an asynchronous engine does not count the error found at completion that ends the job
    let async_write = NonFatal {
        sync_engine: false,
        ..write
    };
    let (t, ..) = tally(&fates, async_write);
    assert_eq!((t.counted, t.first, t.fatal), (2, 5, 28));
    // only errors gone past: the job's error is the first, nothing ended it
    let (t, ios, failed) = tally(&[(2, Fate::Error(5)), (4, Fate::Error(5))], write);
    assert_eq!((t.counted, t.first, t.fatal, t.error()), (2, 5, 0, 5));
    assert_eq!((ios, failed), (18, 2));
    // continue_on_error=read does not count a write's error, which ends the job
    let read = NonFatal {
        classes: 1,
        sync_engine: true,
        ..Default::default()
    };
    let (t, ..) = tally(&[(2, Fate::Error(5))], read);
    assert_eq!((t.counted, t.first, t.fatal), (0, 0, 5));
    // fio's synchronous engines count a verify mismatch that ends the job as error 1, of the
    // read class (the -1 its completion returns)
    assert_eq!(read.counts_fatal(OpKind::Read, 84, Found::Verify), Some(1));
    assert_eq!(write.counts_fatal(OpKind::Read, 84, Found::Verify), None);
    assert_eq!(
        async_write.counts_fatal(OpKind::Write, 28, Found::Transfer),
        None
    );
    assert_eq!(
        read.counts_fatal(OpKind::Read, 0, Found::NothingMoved),
        Some(5)
    );
}

#[test]
fn a_refused_push_stops_cleanly() {
    let s = spec(RwMode::Randread, 8, 1);
    let mut b = Scripted::new(10 * US);
    b.fates.insert(13, Fate::RefusePush);
    let ctl = Control::new(0, Some(S), None);
    let (rec, out) = run(&mut b, &s, &ctl, None);
    assert!(out.stopped_on_error);
    assert!(rec.error_records[0].error.contains("backend failure"));
    assert!(b.inflight.is_empty(), "what was in flight drained");
    assert_eq!(rec.summary(OpKind::Read, out.runtime_ns).ios, b.completed);
}

#[test]
fn a_stop_flag_drains_and_marks_interrupted() {
    let stop = AtomicBool::new(false);
    let s = spec(RwMode::Randread, 4, 1);
    let mut b = Scripted::new(10 * US);
    b.stop_after = Some((100, &stop));
    let ctl = Control::new(0, Some(S), None).with_stop(Some(&stop));
    let (rec, out) = run(&mut b, &s, &ctl, None);
    assert!(out.interrupted);
    assert_eq!(b.pushes_after_stop, 0, "nothing is issued after the stop");
    assert!(b.inflight.is_empty());
    assert_eq!(rec.summary(OpKind::Read, out.runtime_ns).ios, b.completed);
    assert_eq!(out.runtime_ns, 100 / 4 * 10 * US);
}

#[test]
fn writes_are_logged_for_the_written_map_including_the_ramp() {
    let s = WorkloadSpec {
        rw: RwMode::Write,
        read_pct: 0,
        random_pct: 0,
        bs: 4096,
        align: 4096,
        qd: 1,
        span: Some(1 << 20),
        stop: StopCondition {
            time_ns: Some(100 * US),
            ..Default::default()
        },
        ..spec(RwMode::Write, 1, 1)
    };
    let mut b = Scripted::new(10 * US);
    b.fates.insert(2, Fate::Error(5));
    let mut ctl = Control::new(20 * US, Some(100 * US), None);
    ctl.continue_on_error = true;
    let mut log = WriteLog::default();
    let mut gens = vec![OpGen::new(&s, 0, 1 << 20, 0)];
    let mut rec = Recorder::default();
    run_loop(&mut b, &mut gens, 1, data(), &ctl, &mut rec, Some(&mut log));
    // 12 sequential writes of 4 KiB (2 in the ramp); the second failed and stays unknown.
    assert_eq!(b.pushed, 12);
    assert_eq!(log.written_sectors(), 11 * 8);
}

fn trace(text: &str, no_stall: bool) -> Arc<Trace> {
    let mut r = ReplaySpec::new("t.log");
    r.no_stall = no_stall;
    Arc::new(Trace::parse(text.as_bytes(), Path::new("t.log"), &r).unwrap())
}

/// Ops at 0, 100, 150, 400 µs (gaps 100, 50, 250), 4 KiB each.
const TRACE: &str = "fio version 3 iolog\n0 f add\n0 f open\n100 f read 0 4096\n\
                     150 f read 4096 4096\n400 f write 8192 4096\n410 f read 12288 4096\n";

fn replay_run(
    b: &mut Scripted<'_>,
    t: Arc<Trace>,
    qd: u32,
    ctl: &Control<'_>,
) -> (Recorder, LoopOutcome) {
    let mut streams = [Stream {
        source: OpSource::Replay(Replay::new(t, 0)),
        qd,
        unit: 0,
        rec: 0,
    }];
    let mut rec = Recorder::default();
    let outs = run_streams(
        b,
        &mut streams,
        &[Unit { ctl, data: data() }],
        std::slice::from_mut(&mut rec),
        None,
    );
    (rec, outs[0])
}

#[test]
fn replay_issues_at_recorded_gaps_and_ends_with_the_trace() {
    // Fast device (10 µs): every op waits for its gap after the previous issue.
    let mut b = Scripted::new(10 * US);
    let ctl = Control::new(0, None, None);
    let (rec, out) = replay_run(&mut b, trace(TRACE, false), 4, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0).collect();
    assert_eq!(times, vec![100 * US, 150 * US, 400 * US, 410 * US]);
    assert!(out.source_done);
    assert!(!out.budget_done && !out.interrupted);
    // The runtime ends at the last completion.
    assert_eq!(out.runtime_ns, 420 * US);
    assert_eq!(rec.summary(OpKind::Read, out.runtime_ns).ios, 3);
    assert_eq!(rec.summary(OpKind::Write, out.runtime_ns).ios, 1);
    // On-time issues carry no submission latency from the wait.
    // (The histograms record 0 as 1 ns.)
    assert!(rec.summary(OpKind::Read, out.runtime_ns).slat.max <= 1);
}

#[test]
fn a_late_op_waits_its_full_gap_after_the_late_issue() {
    // QD 1 and a slow device (120 µs): the second op is due at 150 µs but its slot frees at
    // 220 µs; fio issues it then, and the third waits its 250 µs gap from 220 µs, not from 150.
    let mut b = Scripted::new(120 * US);
    let ctl = Control::new(0, None, None);
    let (rec, out) = replay_run(&mut b, trace(TRACE, false), 1, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0).collect();
    assert_eq!(times, vec![100 * US, 220 * US, 470 * US, 590 * US]);
    assert!(out.source_done);
    // The late op's wait for its slot (150 → 220 µs) is not the device's: it is measured from
    // the moment the slot was free (220 µs), like fio starts the clock at the issue.
    let r = rec.summary(OpKind::Read, out.runtime_ns);
    assert_eq!(r.ios, 3);
    assert!((r.clat.mean / (120 * US) as f64 - 1.0).abs() < 1e-3);
}

#[test]
fn no_stall_replays_back_to_back_in_order() {
    let mut b = Scripted::new(10 * US);
    let ctl = Control::new(0, None, None);
    let (_, out) = replay_run(&mut b, trace(TRACE, true), 1, &ctl);
    let got: Vec<(u64, u64)> = b.pushes.clone();
    assert_eq!(
        got,
        vec![(0, 0), (10 * US, 4096), (20 * US, 8192), (30 * US, 12288)]
    );
    assert_eq!(out.runtime_ns, 40 * US);
}

#[test]
fn a_deadline_cuts_a_replay_and_a_budget_counts_its_ops() {
    let mut b = Scripted::new(10 * US);
    let ctl = Control::new(0, Some(200 * US), None);
    let (rec, out) = replay_run(&mut b, trace(TRACE, false), 4, &ctl);
    assert_eq!(
        b.pushes.len(),
        2,
        "ops due after the deadline are not issued"
    );
    assert!(!out.source_done);
    assert_eq!(out.runtime_ns, 200 * US);
    assert_eq!(rec.summary(OpKind::Read, out.runtime_ns).ios, 2);
    let mut b = Scripted::new(10 * US);
    let ctl = Control::new(0, None, Some(3));
    let (_, out) = replay_run(&mut b, trace(TRACE, false), 4, &ctl);
    assert_eq!(b.pushes.len(), 3);
    assert!(out.budget_done);
}

#[test]
fn units_keep_their_own_stop_conditions() {
    // Two jobs on one backend: a 1 ms job at QD 2 and a 3 ms job at QD 1, 100 µs per I/O.
    let s = spec(RwMode::Randread, 1, 1);
    let mut b = Scripted::new(100 * US);
    let short = Control::new(0, Some(MS), None);
    let long = Control::new(0, Some(3 * MS), None);
    let mut streams = [
        Stream {
            source: OpGen::new(&s, 0, 1 << 30, 0).into(),
            qd: 2,
            unit: 0,
            rec: 0,
        },
        Stream {
            source: OpGen::new(&s, 0, 1 << 30, 1).into(),
            qd: 1,
            unit: 1,
            rec: 1,
        },
    ];
    let mut recs = [Recorder::default(), Recorder::default()];
    let outs = run_streams(
        &mut b,
        &mut streams,
        &[
            Unit {
                ctl: &short,
                data: data(),
            },
            Unit {
                ctl: &long,
                data: data(),
            },
        ],
        &mut recs,
        None,
    );
    assert_eq!(outs[0].runtime_ns, MS);
    assert_eq!(outs[1].runtime_ns, 3 * MS);
    assert_eq!(recs[0].summary(OpKind::Read, MS).ios, 2 * 10);
    assert_eq!(recs[1].summary(OpKind::Read, 3 * MS).ios, 30);
    assert_eq!(b.max_inflight, 3);
}

#[test]
fn a_rate_catches_up_after_falling_behind() {
    // One op per 100 µs at QD 1, but the device takes 250 µs: a late op does not move the
    // schedule (unlike a replay), so the source issues as fast as the device allows.
    let spec = WorkloadSpec {
        // 4 KiB ops at 10,000 per second
        rate_bps: [4096 * 10_000, 0, 0],
        ..spec(RwMode::Randread, 1, 1)
    };
    let mut b = Scripted::new(250 * US);
    let ctl = Control::new(0, None, Some(10));
    run_source(&mut b, &spec, 1 << 30, 1, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0 / US).collect();
    assert_eq!(times, (0..10).map(|i| i * 250).collect::<Vec<_>>());
    // A fast device: exactly one op per period.
    let mut b = Scripted::new(10 * US);
    let ctl = Control::new(0, None, Some(10));
    run_source(&mut b, &spec, 1 << 30, 1, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0 / US).collect();
    assert_eq!(times, (0..10).map(|i| i * 100).collect::<Vec<_>>());
}

#[test]
fn a_rate_ahead_of_its_schedule_waits_for_the_queue_to_drain() {
    // fio's rate_ddir: one op per 100 µs at QD 4 on a 250 µs device. An op ahead of its time
    // first waits for every op in flight (io_u_quiesce), then is issued at once if its time
    // has passed: op 1 (due at 100) waits for op 0 (done at 250), op 2 (due 200) goes with it,
    // op 3 (due 300) waits for both (500), and so on: bursts at each drain.
    let spec = WorkloadSpec {
        rate_bps: [4096 * 10_000, 0, 0],
        ..spec(RwMode::Randread, 4, 1)
    };
    let mut b = Scripted::new(250 * US);
    let ctl = Control::new(0, None, Some(10));
    run_source(&mut b, &spec, 1 << 30, 4, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0 / US).collect();
    assert_eq!(
        times,
        vec![0, 250, 250, 500, 500, 500, 750, 750, 1000, 1000]
    );
    // io_submit_mode=offload: no quiesce, each op at its time while a slot is free (4 in
    // flight of 250 µs each: one every 100 µs fits, no bursts)
    let mut b = Scripted::new(250 * US);
    let ctl = Control::new(0, None, Some(10)).with_rate_offload(true);
    run_source(&mut b, &spec, 1 << 30, 4, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0 / US).collect();
    assert_eq!(times, (0..10).map(|i| i * 100).collect::<Vec<_>>());
}

#[test]
fn a_rate_after_a_think_catches_up_unless_told_to_ignore_it() {
    // fio's rate with thinktime: 1,000 reads a second (1 ms apart), a 10 ms think after every
    // 10, a 10 µs device at QD 1. The think begins when the 10th read (issued at 9 ms) is
    // done, at 9.01 ms; the 11th read goes when it ends, at 19.01 ms. Its schedule did not
    // move, so the reads after it catch up back to back (fio's default); with
    // rate_ignore_thinktime the think moves the schedule (by 10 ms less one read's 1 ms), so
    // the 12th read waits for 20 ms.
    let run = |ignore: bool| {
        let spec = WorkloadSpec {
            rate_bps: [4096 * 1_000, 0, 0],
            rate_ignore_think: ignore,
            think_ns: 10 * MS,
            think_every: 10,
            ..spec(RwMode::Randread, 1, 1)
        };
        let mut b = Scripted::new(10 * US);
        let ctl = Control::new(0, None, Some(13));
        run_source(&mut b, &spec, 1 << 30, 1, &ctl);
        b.pushes.iter().map(|p| p.0 / US).collect::<Vec<u64>>()
    };
    let keep = run(false);
    assert_eq!(
        &keep[..10],
        &(0..10).map(|i| i * 1000).collect::<Vec<_>>()[..]
    );
    assert_eq!(&keep[10..], &[19_010, 19_020, 19_030]);
    let ignore = run(true);
    assert_eq!(&ignore[10..], &[19_010, 20_000, 21_000]);
}

/// A rated or thinking source tells of each new pass over its region as a plain one does
/// (where fio drops the page cache again): 40 sequential reads of 4 KiB over 64 KiB start
/// two new passes, whatever paces them.
#[test]
fn every_source_of_generated_ops_tells_of_a_new_pass() {
    use std::sync::atomic::AtomicU32;
    for (rate, think) in [(0, 0), (4096 * 1_000_000, 0), (0, 1_000)] {
        let spec = WorkloadSpec {
            rate_bps: [rate, 0, 0],
            think_ns: think,
            think_every: 4,
            span: Some(64 << 10),
            ..spec(RwMode::Read, 1, 1)
        };
        let passes = AtomicU32::new(0);
        let count = || {
            passes.fetch_add(1, Ordering::Relaxed);
        };
        let ctl = Control::new(0, None, Some(40)).with_on_pass(Some(OnPass(&count)));
        let mut b = Scripted::new(10 * US);
        run_source(&mut b, &spec, 64 << 10, 1, &ctl);
        assert_eq!(b.pushed, 40);
        assert_eq!(
            passes.load(Ordering::Relaxed),
            2,
            "rate {rate}, think {think}"
        );
    }
}

#[test]
fn a_mixed_job_caps_each_direction() {
    // fio's rate=,4m (1,000 writes of 4 KiB per second), reads uncapped, on a 10 µs device at
    // QD 1: a drawn write ahead of its schedule is issued as a read, so 300 ops (3 ms) hold
    // three writes, at 0, 1 and 2 ms.
    let spec = WorkloadSpec {
        read_pct: 50,
        rate_bps: [0, 4096 * 1_000, 0],
        ..spec(RwMode::Randrw, 1, 1)
    };
    let mut b = Scripted::new(10 * US);
    let ctl = Control::new(0, None, Some(300));
    let rec = run_source(&mut b, &spec, 1 << 30, 1, &ctl);
    assert_eq!(rec.summary(OpKind::Write, 3 * MS).ios, 3);
    assert_eq!(rec.summary(OpKind::Read, 3 * MS).ios, 297);
}

#[test]
fn think_time_drains_the_queue_then_waits_after_the_last_completion() {
    // fio's thinktime=100us with thinktime_blocks=2 at QD 4 on a 250 µs device: two ops go at
    // once, the third waits for both to complete (250 µs) and then 100 µs more, and so on.
    let spec = WorkloadSpec {
        think_ns: 100 * US,
        think_every: 2,
        ..spec(RwMode::Randread, 4, 1)
    };
    let mut b = Scripted::new(250 * US);
    let ctl = Control::new(0, None, Some(8));
    let rec = run_source(&mut b, &spec, 1 << 30, 4, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0 / US).collect();
    assert_eq!(times, vec![0, 0, 350, 350, 700, 700, 1050, 1050]);
    assert!(b.max_inflight <= 2, "{}", b.max_inflight);
    // the waits of the think time reap nothing: no reap is counted for them (fio's "0")
    assert_eq!(rec.complete_counts[0], 0, "{:?}", rec.complete_counts);
    // Every op (thinktime_blocks=1): QD 1 with 100 µs between a completion and the next issue.
    let spec = WorkloadSpec {
        think_every: 1,
        ..spec
    };
    let mut b = Scripted::new(250 * US);
    let ctl = Control::new(0, None, Some(4));
    run_source(&mut b, &spec, 1 << 30, 4, &ctl);
    let times: Vec<u64> = b.pushes.iter().map(|p| p.0 / US).collect();
    assert_eq!(times, vec![0, 350, 700, 1050]);
}

/// The depth each push found (ops in flight among `slots`, before it).
fn depths_at_push(b: &Scripted<'_>, slots: std::ops::Range<u32>) -> Vec<u32> {
    let mask: u64 = slots.clone().fold(0, |m, k| m | 1 << k);
    b.slots
        .iter()
        .zip(&b.masks)
        .filter(|(s, _)| slots.contains(s))
        .map(|(_, m)| (m & mask).count_ones())
        .collect()
}

/// fio's `wait_for_completions` at QD 8 on a device whose I/Os complete one at a time (each
/// takes 1 µs more per I/O in flight): with `iodepth_batch_complete_min=3` and
/// `iodepth_low=2` the full queue waits for 3 completions, handles them, waits for 3 more
/// (8 → 5 → 2), and only then is refilled, I/O by I/O, to 8.
#[test]
fn a_full_queue_takes_its_completions_in_batches_and_drains_to_its_low_mark() {
    use ssdlab_workload::CompletionBatch;
    let spec = spec(RwMode::Randread, 8, 1);
    let depths = |c: Option<CompletionBatch>| {
        let mut b = Scripted::new(10 * US);
        b.depth_latency = US;
        let ctl = Control::new(0, None, Some(32)).with_completions(c);
        let rec = run_source(&mut b, &spec, 1 << 30, 8, &ctl);
        (depths_at_push(&b, 0..8), rec)
    };
    let fill: Vec<u32> = (0..8).collect();
    // fio's default: one completion, one refill, the queue back at 8
    let (d, rec) = depths(None);
    assert_eq!(d[..8], fill[..]);
    assert!(d[8..].iter().all(|&x| x == 7), "{d:?}");
    assert_eq!(rec.complete_counts[1], 32, "{:?}", rec.complete_counts);
    // batches of 3 down to 2, then a refill of 6
    let (d, rec) = depths(Some(CompletionBatch { min: 3, low: 2 }));
    let mut want = fill.clone();
    while want.len() < 32 {
        want.extend(2..8);
    }
    assert_eq!(d, want[..32]);
    // reaps of 3 (bucket 1-4): two before each of the 4 refills, then, the budget spent, the
    // full queue's two and the last 2 at once (fio's last io_u_queued_complete)
    assert_eq!(rec.complete_counts, [0, 11, 0, 0, 0, 0, 0]);
    // the low mark alone: completions one at a time down to 2
    let (d, _) = depths(Some(CompletionBatch { min: 1, low: 2 }));
    assert_eq!(d, want[..32]);
    // the batch alone: 3 completions, then 3 refills (5, 6, 7)
    let (d, _) = depths(Some(CompletionBatch { min: 3, low: 8 }));
    let mut want = fill.clone();
    while want.len() < 32 {
        want.extend(5..8);
    }
    assert_eq!(d, want[..32]);
}

/// A batched stream beside one that is not, in one loop (several jobs on one simulated
/// drive): each keeps its own rule.
#[test]
fn batched_completions_are_per_stream() {
    use ssdlab_workload::CompletionBatch;
    let spec = spec(RwMode::Randread, 4, 1);
    let mut b = Scripted::new(10 * US);
    b.depth_latency = US;
    let batched =
        Control::new(0, None, Some(16)).with_completions(Some(CompletionBatch { min: 2, low: 1 }));
    let plain = Control::new(0, None, Some(16));
    let mut streams = [0, 1].map(|i| Stream {
        source: OpSource::for_worker(&spec, None, 0, 1 << 30, i),
        qd: 4,
        unit: i as usize,
        rec: i as usize,
    });
    let mut recs = [Recorder::default(), Recorder::default()];
    run_streams(
        &mut b,
        &mut streams,
        &[
            Unit {
                ctl: &batched,
                data: data(),
            },
            Unit {
                ctl: &plain,
                data: data(),
            },
        ],
        &mut recs,
        None,
    );
    let d = depths_at_push(&b, 0..4);
    assert_eq!(d.len(), 16);
    // 4 → 2 → 0 (batches of 2, down to 1: the second batch takes the last two), refill 0..4
    assert_eq!(d, [0, 1, 2, 3].repeat(4));
    let d = depths_at_push(&b, 4..8);
    assert_eq!(d.len(), 16);
    assert!(d[4..].iter().all(|&x| x == 3), "{d:?}");
}

/// fio's latency target on a device whose latency grows with the depth (10 µs plus 10 µs per
/// I/O already in flight) and a target of 55 µs for 99 % of the I/Os: the search doubles to
/// 8, whose window fails, bisects to 6 (fails) and 5, holds at 5 twice, runs its final window
/// there with the statistics started again, and ends the job at depth 5; only the final
/// window's I/Os are reported.
#[test]
fn latency_target_finds_the_deepest_depth_within_it() {
    let mut s = spec(RwMode::Randread, 32, 1);
    s.latency_target = Some(ssdlab_workload::LatencyTarget {
        target_ns: 55 * US,
        window_ns: 1_000 * US,
        percentile: 99.0,
        keep_running: false,
        max_depth: 32,
    });
    let mut b = Scripted::new(10 * US);
    b.depth_latency = 10 * US;
    let ctl = Control::new(0, Some(S), None).with_latency_target(s.latency_target);
    let (rec, out) = run(&mut b, &s, &ctl, None);
    assert!(out.latency_found && !out.stopped_on_error);
    assert_eq!(out.latency_depth, 5);
    assert!(b.max_inflight <= 8, "never deeper than the search went");
    let r = rec.summary(OpKind::Read, out.runtime_ns);
    assert!(
        r.lat.max <= 55 * US,
        "only the final window at depth 5: {}",
        r.lat.max
    );
    assert!(out.runtime_ns >= 1_000 * US && out.runtime_ns < 1_100 * US);
    assert!(
        r.ios > 90 && r.ios < 110,
        "5 in flight for 50 µs each over 1 ms: {}",
        r.ios
    );

    // a percentile of 100: at depth 1 above the target, fio's ETIMEDOUT ends the job
    s.latency_target.as_mut().unwrap().percentile = 100.0;
    let ctl = Control::new(0, Some(S), None).with_latency_target(s.latency_target);
    let mut b = Scripted::new(100 * US);
    let (rec, out) = run(&mut b, &s, &ctl, None);
    assert!(out.stopped_on_error);
    assert_eq!(rec.tally.fatal, 110);
    assert_eq!(out.latency_depth, 1);
}

/// Two units of one flow on one backend (QD 1, 100 µs per I/O): `light` (flow=1) for `light_ns`
/// with `light_sleep_ns` of flow_sleep, `heavy` (flow=3) for 1 ms. The I/Os of each and the
/// push times of the light one's.
fn flow_pair(light_ns: u64, light_sleep_ns: u64) -> (u64, u64, Vec<u64>, (u64, u32)) {
    let s = spec(RwMode::Randread, 1, 1);
    let mut b = Scripted::new(100 * US);
    let flow = Flow::default();
    // (fio joins every clone when it parses the job file)
    flow.join(1);
    flow.join(3);
    let share = |weight, sleep_ns| {
        Some(FlowShare {
            flow: &flow,
            weight,
            sleep_ns,
        })
    };
    let light = Control::new(0, Some(light_ns), None).with_flow(share(1, light_sleep_ns));
    let heavy = Control::new(0, Some(MS), None).with_flow(share(3, 0));
    let mut streams = [0, 1].map(|u| Stream {
        source: OpGen::new(&s, 0, 1 << 30, u as u32).into(),
        qd: 1,
        unit: u,
        rec: u,
    });
    let mut recs = [Recorder::default(), Recorder::default()];
    run_streams(
        &mut b,
        &mut streams,
        &[
            Unit {
                ctl: &light,
                data: data(),
            },
            Unit {
                ctl: &heavy,
                data: data(),
            },
        ],
        &mut recs,
        None,
    );
    let ios = |r: &Recorder, t| r.summary(OpKind::Read, t).ios;
    // (slot 0 is the light unit's)
    let light_pushes: Vec<u64> = b
        .pushes
        .iter()
        .zip(&b.slots)
        .filter(|(_, &slot)| slot == 0)
        .map(|((t, _), _)| *t)
        .collect();
    (
        ios(&recs[0], light_ns),
        ios(&recs[1], MS),
        light_pushes,
        flow.state(),
    )
}

#[test]
fn a_flow_keeps_its_members_in_proportion_then_frees_the_survivor() {
    // While both run (1 ms: the heavy one does its 10 I/Os, never held back) the light one
    // is admitted while its count over the shared counter (from 1) is at most 1/4: at 0, 100
    // (1 of 4), 400 (2 of 8) and 700 µs (3 of 12). The heavy one ends at 1 ms but leaves the
    // flow only 10 ms later (fio's main thread reaps it then), so the light one stays held
    // back (4 of 15) until 11 ms; then, its counter and weight given back, it runs free: one
    // I/O every 100 µs until its 14 ms are up.
    let (light, heavy, pushes, state) = flow_pair(14 * MS, 0);
    assert_eq!(heavy, 10);
    let before: Vec<u64> = pushes.iter().copied().filter(|&t| t < MS).collect();
    assert_eq!(before, [0, 100 * US, 400 * US, 700 * US]);
    let held = pushes
        .iter()
        .filter(|&&t| (MS..11 * MS).contains(&t))
        .count();
    assert_eq!(held, 0, "held until the heavy one is reaped: {pushes:?}");
    let after = pushes.iter().filter(|&&t| t >= 11 * MS).count();
    assert_eq!(after, 30, "free once the heavy one left: {pushes:?}");
    assert_eq!(light, before.len() as u64 + 30);
    // Both left: the counter is back at 1, the weight at 0 (fio asserts this too).
    assert_eq!(state, (1, 0));
}

#[test]
fn a_held_member_with_flow_sleep_waits_that_long_before_it_looks_again() {
    // flow_sleep=300 µs. The heavy one's slot is refilled first at each completion. At 100 µs
    // the light one has 1 of a counter of 4 (1/4: admitted); at 200 µs 2 of 6, held back: it
    // looks again at 500 µs (2 of 9: admitted), is held at 600 µs, looks again at 900 µs.
    let (light, heavy, pushes, state) = flow_pair(MS, 300 * US);
    assert_eq!(heavy, 10);
    assert_eq!(pushes, [0, 100 * US, 500 * US, 900 * US]);
    assert_eq!(light, 4);
    assert_eq!(state, (1, 0));
}
