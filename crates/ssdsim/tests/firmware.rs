//! Controller costs by kind: per-command firmware time is the front end, the firmware time of
//! a GC page move (`controller.fw_gc_move_ns`) is paid only when GC moves data. Directions and
//! invariants only; no tuned figures.
mod common;
use common::*;
use ssdlab_ssdsim::loadgen::{run, Access, LoadResult, Workload};
use ssdlab_ssdsim::*;

const GIB: u64 = 1 << 30;

/// 4 KiB random writes at QD 32 over `span`, `warm` s of warm-up, then `secs` s measured.
fn randwrite(s: &mut Simulator, span: u64, warm: f64, secs: f64) -> LoadResult {
    let mut w = Workload::new(OpKind::Write, Access::Random, 4096, span, 32);
    w.align = 4096;
    w.warmup_ns = (warm * 1e9) as u64;
    w.duration_ns = (secs * 1e9) as u64;
    run(s, 0, &w, 0)
}

/// The review's contrast on the X25-E: a fresh drive written on an 8 GiB span moves no data
/// (its figure is the firmware's per-command time), a full-span steady-state drive moves data
/// for every write, and that costs the firmware too: the fresh short-span figure is higher.
/// (20 s: the steady-state rate alternates between GC-bound and front-end-bound stretches.)
#[test]
fn x25e_fresh_short_span_beats_steady_full_span() {
    let cfg = load_preset("x25e-64g").unwrap();
    let mut fresh = sim(&cfg, Precondition::Fresh);
    let f = randwrite(&mut fresh, 8 * GIB, 0.5, 1.0);
    let cf = fresh.counters()[0].clone();
    let mut steady = sim(&cfg, Precondition::Steady);
    let s = randwrite(&mut steady, cfg.user_capacity(), 1.0, 20.0);
    let cs = steady.counters()[0].clone();
    steady.check_invariants().unwrap();
    eprintln!(
        "x25e-64g randwrite 4k QD32: fresh 8 GiB {:.0} IOPS (gc pages {}), steady full span {:.0} IOPS (gc pages {}, WA {:.2})",
        f.iops, cf.gc_pages_moved, s.iops, cs.gc_pages_moved, cs.write_amplification
    );
    assert_eq!(cf.gc_pages_moved, 0, "a fresh drive on 8 GiB needs no GC");
    assert!(cs.gc_pages_moved > 0, "steady state full span must collect");
    assert!(
        f.iops > s.iops,
        "fresh 8 GiB {:.0} IOPS not above steady full span {:.0}",
        f.iops,
        s.iops
    );
}

/// The firmware time of a GC move lowers steady-state random-write IOPS and raises the busy
/// time of the firmware core; everything else equal.
#[test]
fn gc_move_firmware_cost_lowers_steady_state_iops() {
    let base = preset("x25e-64g", 16);
    let go = |ns: &str| {
        let mut cfg = base.clone();
        cfg.set("controller.fw_gc_move_ns", ns).unwrap();
        let mut s = sim(&cfg, Precondition::Steady);
        let r = randwrite(&mut s, cfg.user_capacity(), 2.0, 2.0);
        s.check_invariants().unwrap();
        (r, s.counters()[0].clone())
    };
    let (free, c0) = go("0");
    let (paid, c1) = go("100000");
    eprintln!(
        "steady randwrite: fw_gc_move 0: {:.0} IOPS (fw {:.2}, gc pages {}), 100 us: {:.0} IOPS (fw {:.2}, gc pages {})",
        free.iops,
        c0.utilisation.fw_max,
        c0.gc_pages_moved,
        paid.iops,
        c1.utilisation.fw_max,
        c1.gc_pages_moved
    );
    assert!(c0.gc_pages_moved > 0 && c1.gc_pages_moved > 0);
    assert!(
        paid.iops < free.iops,
        "GC move cost {:.0} IOPS vs none {:.0}",
        paid.iops,
        free.iops
    );
}

/// Without GC (a fresh drive on a short span) the GC move cost changes nothing at all.
#[test]
fn gc_move_cost_is_not_a_front_end_cost() {
    let base = preset("x25e-64g", 16);
    let go = |ns: &str| {
        let mut cfg = base.clone();
        cfg.set("controller.fw_gc_move_ns", ns).unwrap();
        let mut s = sim(&cfg, Precondition::Fresh);
        let r = randwrite(&mut s, GIB / 4, 0.2, 0.5);
        let c = s.counters()[0].clone();
        assert_eq!(c.gc_pages_moved, 0);
        (r.ios, r.end_ns, serde_json::to_string(&c).unwrap())
    };
    assert_eq!(go("0"), go("100000"));
}

/// `fw_gc_move_ns` defaults to 0: a preset that does not name it is the same drive as one that
/// sets it to 0, and a GC-heavy steady-state run of it gives the same completions and counters.
/// (That 0 also reproduces the model before the stage existed is checked by the fingerprint
/// example: `cargo run --release -p ssdlab-ssdsim --example fingerprint`, before and after.)
#[test]
fn gc_move_cost_defaults_to_zero() {
    let text = include_str!("../../../presets/x25e-64g.toml");
    let absent: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("fw_gc_move_ns"))
        .collect::<Vec<_>>()
        .join("\n");
    let absent = DriveConfig::from_toml_str(&absent)
        .unwrap()
        .scaled(16)
        .unwrap();
    assert_eq!(absent.controller.fw_gc_move_ns, 0);
    let mut zero = preset("x25e-64g", 16);
    assert!(zero.controller.fw_gc_move_ns > 0);
    zero.set("controller.fw_gc_move_ns", "0").unwrap();
    assert_eq!(absent, zero);
    let go = |c: &DriveConfig| {
        let mut s = sim(c, Precondition::Steady);
        let r = randwrite(&mut s, c.user_capacity(), 2.0, 2.0);
        let c = s.counters()[0].clone();
        assert!(c.gc_pages_moved > 0);
        (r.ios, r.end_ns, serde_json::to_string(&c).unwrap())
    };
    assert_eq!(go(&absent), go(&zero));
}

/// 4 KiB random reads at QD 8 over `span` for `secs`, from the drive's current time.
fn randread(s: &mut Simulator, span: u64, secs: f64) -> LoadResult {
    let mut w = Workload::new(OpKind::Read, Access::Random, 4096, span, 8);
    w.align = 4096;
    w.duration_ns = (secs * 1e9) as u64;
    let t = s.now();
    run(s, 0, &w, t)
}

/// Reads go ahead of background GC's firmware work: right after random writes leave GC moving
/// data in the background (each page move costs the one firmware core 120 µs on this drive),
/// a read phase runs nearly as fast as on the same drive once GC is done — a read waits at
/// most for the one move the core is running, not for every move queued.
#[test]
fn reads_overtake_background_gc_moves() {
    let cfg = preset("x25m-g2-160g", 64);
    let span = cfg.user_capacity();
    let written = || {
        let mut s = sim(&cfg, Precondition::Full);
        randwrite(&mut s, span, 0.0, 40.0);
        s
    };
    let mut busy = written();
    busy.reset_counters();
    let during = randread(&mut busy, span, 2.0);
    let cb = busy.counters()[0].clone();
    busy.check_invariants().unwrap();
    let mut idle = written();
    idle.run_until_idle();
    idle.reset_counters();
    let after = randread(&mut idle, span, 2.0);
    let ci = idle.counters()[0].clone();
    eprintln!(
        "reads during background GC: {:.0} IOPS ({} GC pages moved, fw {:.2}); after GC: {:.0} IOPS ({} moved)",
        during.iops, cb.gc_pages_moved, cb.utilisation.fw_max, after.iops, ci.gc_pages_moved
    );
    assert!(cb.gc_pages_moved > 0, "GC must run during the reads");
    assert_eq!(ci.gc_pages_moved, 0);
    assert!(
        during.iops > 0.8 * after.iops,
        "reads during GC {:.0} IOPS vs {:.0} after it",
        during.iops,
        after.iops
    );
}

/// 4 KiB random reads at `qd` over a whole full drive for 1 s.
fn reads_at(cfg: &DriveConfig, qd: usize) -> (LoadResult, DriveCounters) {
    let mut s = sim(cfg, Precondition::Full);
    let mut w = Workload::new(OpKind::Read, Access::Random, 4096, cfg.user_capacity(), qd);
    w.align = 4096;
    w.warmup_ns = 50_000_000;
    w.duration_ns = 1_000_000_000;
    let r = run(&mut s, 0, &w, 0);
    s.check_invariants().unwrap();
    (r, s.counters()[0].clone())
}

/// A separate ECC decode stage is queue-dependent: one read at a time pays its decode time
/// once (latency up by about that much, nothing queues), many outstanding reads queue for the
/// engines, so IOPS cannot pass engines / decode time and the engines become what binds; a
/// second engine lifts that bound. Without the stage (the default) nothing changes.
#[test]
fn ecc_engines_bound_reads_by_queue_depth() {
    let base = preset("vertex450-128g", 16);
    let with = |ns: &str, engines: &str| {
        let mut c = base.clone();
        c.set("controller.ecc_decode_ns", ns).unwrap();
        c.set("controller.ecc_engines", engines).unwrap();
        c
    };
    let decode = 40_000.0; // ns per 4 KiB
    let (q1_off, _) = reads_at(&base, 1);
    let (q1_on, _) = reads_at(&with("40000", "1"), 1);
    let (q32_off, _) = reads_at(&base, 32);
    let (q32_on, c32) = reads_at(&with("40000", "1"), 32);
    let (q32_two, _) = reads_at(&with("40000", "2"), 32);
    eprintln!(
        "QD 1: {:.0} -> {:.0} IOPS (mean {:.1} -> {:.1} us); QD 32: {:.0} -> {:.0} (1 engine, busiest {} {:.2}), {:.0} (2 engines)",
        q1_off.iops,
        q1_on.iops,
        q1_off.mean_latency_ns / 1e3,
        q1_on.mean_latency_ns / 1e3,
        q32_off.iops,
        q32_on.iops,
        c32.utilisation.busiest,
        c32.utilisation.busiest_utilisation,
        q32_two.iops
    );
    // QD 1: the decode time adds to every read, nothing queues for it (a little less than the
    // decode time: without the stage the link started while the channel still sent the data)
    let added = q1_on.mean_latency_ns - q1_off.mean_latency_ns;
    assert!(
        added > 0.8 * decode && added <= 1.01 * decode,
        "added {added} ns"
    );
    // QD 32: bounded by one engine, which binds
    assert!(q32_on.iops <= 1e9 / decode * 1.01, "{} IOPS", q32_on.iops);
    assert!(q32_on.iops < q32_off.iops);
    assert_eq!(c32.utilisation.busiest, "ecc engine 0");
    assert!(c32.utilisation.ecc_max > 0.95 && c32.utilisation.ecc_max <= 1.0 + 1e-9);
    assert!(q32_two.iops > 1.5 * q32_on.iops);
}
