//! `run_loop` through its own `Backend` trait, on a scripted backend with a virtual clock: every
//! number below is exact, because the backend decides when each I/O completes.

use ssdlab_engine::{run_loop, Backend, Control, Cqe, DataOpts, LoopOutcome};
use ssdlab_stats::Recorder;
use ssdlab_target::written::WriteLog;
use ssdlab_workload::{Op, OpGen, OpKind, Pattern, RwMode, StopCondition, WorkloadSpec};
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

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
        self.inflight.insert(slot, (self.now + lat, res));
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
            self.ready.push(Cqe { slot, res, t_ns: t });
            self.completed += 1;
            if let Some((after, flag)) = self.stop_after {
                if self.completed == after {
                    flag.store(true, Ordering::SeqCst);
                }
            }
        }
        Ok(())
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        out.append(&mut self.ready);
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
