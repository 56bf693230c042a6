//! A simulated drive's state saved between two groups of jobs and loaded into a new session
//! continues exactly: the second group's results equal those of one session running both.

use ssdlab_engine::{SimJob, SimOptions, SimSession, SimTarget};
use ssdlab_ssdsim::{AdapterConfig, Precondition};
use ssdlab_stats::RunResult;
use ssdlab_workload::{RwMode, StopCondition, WorkloadSpec};

fn target(drives: usize) -> SimTarget {
    SimTarget {
        name: "vertex450-128g/32".into(),
        drive: ssdlab_ssdsim::load_preset("vertex450-128g")
            .unwrap()
            .scaled(32)
            .unwrap(),
        drives,
        stripe: (drives > 1).then_some(64 << 10),
        adapter: AdapterConfig::passthrough(),
        state: Precondition::Steady,
    }
}

/// Write-heavy random I/O over a small span: GC runs and page groups are still buffered when
/// the group ends.
fn spec(read_pct: u8, ios: u64, seed: u64) -> WorkloadSpec {
    WorkloadSpec {
        rw: RwMode::Randrw,
        read_pct,
        random_pct: 100,
        bs: 4096,
        align: 4096,
        span: Some(256 << 20),
        qd: 32,
        seed,
        stop: StopCondition {
            ios: Some(ios),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn run(sess: &mut SimSession, spec: &WorkloadSpec) -> RunResult {
    let job = SimJob::new(spec);
    sess.run(&[job], &SimOptions::default())
        .unwrap()
        .remove(0)
        .result
}

/// The result as JSON, without the "state" detail (a loaded session says "loaded").
fn json(mut r: RunResult) -> String {
    r.target.details.retain(|(k, _)| k != "state");
    serde_json::to_string(&r).unwrap()
}

#[test]
fn saved_and_loaded_session_continues_exactly() {
    for drives in [1, 2] {
        let t = target(drives);
        let (a, b) = (spec(10, 40_000, 3), spec(40, 30_000, 4));
        let mut one = SimSession::new(&t, 3, None).unwrap();
        run(&mut one, &a);
        let mut file = Vec::new();
        one.save_state(&mut file).unwrap();
        let before = one.now();
        let r1 = run(&mut one, &b);

        let mut two = SimSession::load_state(&t, &file[..], None).unwrap();
        assert_eq!(two.now(), before);
        let r2 = run(&mut two, &b);
        assert!(r2
            .target
            .details
            .contains(&("state".into(), "loaded".into())));
        assert!(!r1.device.is_empty() && r1.write.ios > 0);
        assert_eq!(json(r1), json(r2), "{drives} drive(s)");
        assert_eq!(one.now(), two.now());

        // and a fresh session of the same target runs B differently
        let mut fresh = SimSession::new(&t, 3, None).unwrap();
        let r3 = run(&mut fresh, &b);
        assert_ne!(json(r3), json(run(&mut one, &b)));
    }
}

#[test]
fn a_state_of_another_target_is_refused() {
    let mut s = SimSession::new(&target(2), 1, None).unwrap();
    run(&mut s, &spec(0, 2_000, 1));
    let mut file = Vec::new();
    s.save_state(&mut file).unwrap();
    let mut t = target(2);
    t.stripe = Some(128 << 10);
    let e = SimSession::load_state(&t, &file[..], None).err().unwrap();
    assert_eq!(e.class(), ssdlab_engine::ErrorClass::BadInput);
    assert!(
        e.to_string()
            .contains("saved with stripe 64 KiB, this run has stripe 128 KiB"),
        "{e}"
    );
    let e = SimSession::load_state(&target(1), &file[..], None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("holds 2 drives"), "{e}");
    let e = SimSession::load_state(&target(2), &file[..file.len() / 2], None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("truncated"), "{e}");
}
