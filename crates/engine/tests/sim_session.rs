//! Simulated drives on virtual time: replays keep their recorded gaps (held-back completions
//! when a wait ends before them), groups of jobs share the drive, and a session keeps the
//! drive's state and clock from one group to the next.

use ssdlab_engine::{SimJob, SimOptions, SimSession, SimTarget};
use ssdlab_ssdsim::{AdapterConfig, Precondition};
use ssdlab_workload::{ReplaySpec, RwMode, StopCondition, Trace, WorkloadSpec};
use std::path::Path;

fn target() -> SimTarget {
    SimTarget {
        name: "c300-256g".into(),
        drive: ssdlab_ssdsim::load_preset("c300-256g").unwrap(),
        drives: 1,
        stripe: None,
        adapter: AdapterConfig::passthrough(),
        state: Precondition::Fresh,
    }
}

/// A v3 iolog of `n` 4 KiB ops `gap_us` apart (every fourth a write), and its replay spec.
fn trace(dir: &Path, n: u64, gap_us: u64, no_stall: bool) -> WorkloadSpec {
    let mut t = String::from("fio version 3 iolog\n0 f add\n");
    for i in 0..n {
        let op = if i % 4 == 3 { "write" } else { "read" };
        t.push_str(&format!("{} f {op} {} 4096\n", 1 + i * gap_us, i * 8192));
    }
    let path = dir.join(format!("t-{n}-{gap_us}.log"));
    std::fs::write(&path, t).unwrap();
    let mut r = ReplaySpec::new(&path);
    r.no_stall = no_stall;
    let shape = Trace::load(&r).unwrap().shape();
    WorkloadSpec {
        rw: RwMode::Randrw,
        read_pct: shape.read_pct(),
        random_pct: 100,
        bs: shape.max_len,
        align: shape.align.min(shape.max_len),
        span: Some(shape.end),
        qd: 4,
        stop: StopCondition::default(),
        replay: Some(r),
        ..Default::default()
    }
}

fn run(sess: &mut SimSession, specs: &[&WorkloadSpec]) -> Vec<ssdlab_engine::SimOutput> {
    let jobs: Vec<SimJob<'_>> = specs.iter().map(|s| SimJob::new(s)).collect();
    sess.run(&jobs, &SimOptions::default()).unwrap()
}

#[test]
fn a_replay_keeps_its_gaps_on_virtual_time() {
    let d = tempfile::tempdir().unwrap();
    // 200 ops, 1 ms apart: the drive serves each in far less, so the replay takes ~199 ms.
    let spec = trace(d.path(), 200, 1000, false);
    let mut sess = SimSession::new(&target(), 1, None).unwrap();
    let out = run(&mut sess, &[&spec]).remove(0);
    let r = &out.result;
    assert_eq!(r.read.ios + r.write.ios, 200);
    assert_eq!(r.write.ios, 50);
    let ms = r.runtime_ns / 1_000_000;
    assert!((199..=201).contains(&ms), "{ms} ms");
    // Nothing waits in a queue: every op is alone on the drive.
    assert_eq!(r.iodepth_level[0].1, 100.0, "{:?}", r.iodepth_level);
    // Without stalls the same ops take a few milliseconds.
    let fast = trace(d.path(), 200, 1000, true);
    let mut sess = SimSession::new(&target(), 1, None).unwrap();
    let out = run(&mut sess, &[&fast]).remove(0);
    assert_eq!(out.result.read.ios + out.result.write.ios, 200);
    assert!(
        out.result.runtime_ns < 20_000_000,
        "{}",
        out.result.runtime_ns
    );
}

#[test]
fn gaps_shorter_than_the_service_time_queue_up_and_all_complete() {
    let d = tempfile::tempdir().unwrap();
    // 2 µs gaps, far below a 4 KiB read's service time: waits end before completions (held
    // back), the queue fills to its depth of 4, and every op completes once.
    let spec = trace(d.path(), 500, 2, false);
    let mut sess = SimSession::new(&target(), 1, None).unwrap();
    let out = run(&mut sess, &[&spec]).remove(0);
    let r = &out.result;
    assert_eq!(r.read.ios + r.write.ios, 500);
    let deep: f64 = r
        .iodepth_level
        .iter()
        .filter(|(k, _)| k == "4")
        .map(|(_, p)| *p)
        .sum();
    assert!(deep > 50.0, "{:?}", r.iodepth_level);
    // The same run again: byte-identical (virtual time is deterministic).
    let mut sess = SimSession::new(&target(), 1, None).unwrap();
    let again = run(&mut sess, &[&spec]).remove(0);
    assert_eq!(again.result, out.result);
}

#[test]
fn groups_share_the_drive_and_the_session_goes_on() {
    let writes = WorkloadSpec {
        rw: RwMode::Randwrite,
        read_pct: 0,
        span: Some(1 << 30),
        qd: 8,
        stop: StopCondition {
            time_ns: Some(200_000_000),
            ..Default::default()
        },
        ..Default::default()
    };
    let reads = WorkloadSpec {
        rw: RwMode::Randread,
        read_pct: 100,
        qd: 2,
        jobs: 2,
        stop: StopCondition {
            ios: Some(4000),
            ..Default::default()
        },
        ..writes.clone()
    };
    let mut sess = SimSession::new(&target(), 1, None).unwrap();
    // One group: both jobs on the drive together, each with its own stop condition.
    let outs = run(&mut sess, &[&writes, &reads]);
    assert_eq!(outs[0].result.runtime_ns / 1_000_000, 200);
    assert_eq!(outs[1].result.read.ios, 4000);
    // The readers end at their own budget, after the writers' deadline (the drive is theirs then).
    assert!(outs[1].result.runtime_ns > outs[0].result.runtime_ns);
    let after_first = sess.now();
    assert!(after_first >= 200_000_000);
    // The next group starts where the first left the clock and the drive.
    let outs2 = run(&mut sess, &[&reads]);
    assert!(sess.now() > after_first);
    assert_eq!(outs2[0].result.timestamp_ms, after_first / 1_000_000);
    let drive = |o: &ssdlab_engine::SimOutput| o.result.device[0].clone();
    // Counters cover each group's measured window: the readers wrote nothing ...
    assert!(drive(&outs[0]).host_writes > 0);
    assert_eq!(drive(&outs2[0]).host_writes, 0);
    // ... but the drive kept what the first group wrote.
    assert!(drive(&outs[0]).mapped_bytes > 0);
    assert_eq!(
        drive(&outs2[0]).mapped_bytes,
        drive(&outs[0]).mapped_bytes,
        "the drive kept what was written"
    );
}
