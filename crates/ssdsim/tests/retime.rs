//! `Simulator::retimed`: a preconditioned drive given another model's timing behaves exactly like
//! the same drive built and preconditioned with that timing (what the calibration fitter relies
//! on to precondition each drive state once), also when the preconditioned drive is frozen
//! (`Simulator::freeze`) and its copies share its tables.

use ssdlab_ssdsim::loadgen::{run, Access, Workload};
use ssdlab_ssdsim::*;

/// A small drive (the preset scaled down) so preconditioning is quick.
fn small(name: &str) -> DriveConfig {
    load_preset(name).unwrap().scaled(32).unwrap()
}

fn timing_change(cfg: &DriveConfig) -> DriveConfig {
    let mut c = cfg.clone();
    c.set_all(&[
        (
            "controller.fw_read_ns".into(),
            format!("{}", cfg.controller.fw_read_ns * 3 / 2 + 1000),
        ),
        (
            "controller.fw_write_ns".into(),
            format!("{}", cfg.controller.fw_write_ns / 2 + 500),
        ),
        ("controller.fw_gc_move_ns".into(), "20000".into()),
        (
            "host.cmd_overhead_ns".into(),
            format!("{}", cfg.host.cmd_overhead_ns * 2 + 100),
        ),
        ("nand.t_r_ns".into(), format!("{}", cfg.nand.t_r_ns * 2)),
        ("controller.remap_cost_ns".into(), "3000".into()),
        (
            "controller.cache_bytes".into(),
            format!("{}", (cfg.controller.cache_bytes * 3 / 2) & !4095),
        ),
    ])
    .unwrap();
    c
}

fn workloads(cfg: &DriveConfig) -> Vec<Workload> {
    let span = cfg.user_capacity() / 4096 * 4096;
    let mut v = Vec::new();
    for (kind, pat, bs) in [
        (OpKind::Write, Access::Random, 4096),
        (OpKind::Read, Access::Random, 4096),
        (OpKind::Write, Access::Sequential, 128 << 10),
    ] {
        let mut w = Workload::new(kind, pat, bs, span, 8);
        w.duration_ns = 300_000_000;
        v.push(w);
    }
    v
}

#[test]
fn a_retimed_drive_runs_exactly_like_one_built_with_that_timing() {
    for name in [
        "vertex450-128g",
        "c300-256g",
        "x25e-64g",
        "crucial-mx500-1t",
        "samsung-980-1t",
    ] {
        let base = small(name);
        // the host's time per command as `run` gives it
        let ad = AdapterChoice::default().resolve(&base, 1);
        let other = timing_change(&base);
        for pre in [
            Precondition::Fresh,
            Precondition::Full,
            Precondition::Steady,
        ] {
            let mut built = Simulator::new(&base, 1, &ad, pre, 7).unwrap();
            // as the fitter keeps it: every retimed copy shares the tables and copies what it
            // writes (a write leaking into the shared tables would change the next workload's
            // result from the same state)
            built.freeze();
            for w in workloads(&base) {
                let mut a = built.retimed(&base, &other).expect("timing only");
                let mut b = Simulator::new(&other, 1, &ad, pre, 7).unwrap();
                let (ra, rb) = (run(&mut a, 0, &w, 0), run(&mut b, 0, &w, 0));
                assert_eq!(ra, rb, "{name} {pre} {:?} {:?}", w.kind, w.pattern);
                assert!(ra.ios > 0);
            }
        }
    }
}

#[test]
fn only_timing_may_change_and_only_before_a_run() {
    let base = small("vertex450-128g");
    let sim = Simulator::new(
        &base,
        1,
        &AdapterConfig::passthrough(),
        Precondition::Full,
        1,
    )
    .unwrap();
    for (k, v) in [
        ("ftl.unaligned", "remap"),
        ("controller.cache_bytes", "0"),
        ("ftl.gc_bg_free_blocks", "9"),
    ] {
        let mut c = base.clone();
        c.set(k, v).unwrap();
        assert!(!base.same_state_as(&c), "{k}");
        assert!(sim.retimed(&base, &c).is_none(), "{k}");
    }
    let mut ran = sim.clone();
    run(&mut ran, 0, &workloads(&base)[0], 0);
    assert!(ran.retimed(&base, &timing_change(&base)).is_none());
}
