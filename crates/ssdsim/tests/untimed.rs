//! Untimed writes (`Simulator::untimed_fill`): only before anything has run, every unit they
//! cover ends up mapped, the drive stays consistent, and random overwrites leave a drive that
//! collects garbage at once (its free pools as the writes left them, not refilled as if idle).

mod common;
use common::*;
use ssdlab_ssdsim::loadgen::Access;
use ssdlab_ssdsim::*;

#[test]
fn only_a_simulator_on_which_nothing_has_run_can_be_written_untimed() {
    let cfg = tiny(4096, true, 0, false);
    let mut s = sim(&cfg, Precondition::Fresh);
    assert!(s.untimed_fill().is_some());
    // a fill that wrote nothing leaves it available
    assert!(s.untimed_fill().is_some());
    s.submit(0, 1, 0, HostCmd::read(0, 4096));
    s.next_completion().unwrap();
    assert!(s.untimed_fill().is_none());
    // a tracking simulator keeps per-sector versions the untimed path does not write
    let mut t = Simulator::with_tracking(
        &cfg,
        1,
        &AdapterConfig::passthrough(),
        Precondition::Fresh,
        1,
    )
    .unwrap();
    assert!(t.untimed_fill().is_none());
}

#[test]
fn an_untimed_sequential_pass_maps_every_unit_it_covers() {
    let cfg = preset("c300-256g", 64);
    let cap = cfg.user_capacity();
    let mut s = sim(&cfg, Precondition::Fresh);
    {
        let mut f = s.untimed_fill().unwrap();
        // two passes, the second overwriting the first, in 128 KiB writes
        for _ in 0..2 {
            let mut off = 0;
            while off < cap {
                f.prefetch(0, off);
                f.write(0, off, (128 << 10).min(cap - off));
                off += 128 << 10;
            }
        }
    }
    s.check_invariants().unwrap();
    // every read of the written region reaches the NAND
    let r = measure(
        &mut s,
        OpKind::Read,
        Access::Random,
        4096,
        0,
        cap,
        32,
        1.0,
        0.05,
    );
    assert!(r.iops > 0.0);
    let c = &s.counters()[0];
    assert!(c.nand_reads > 0);
    assert_eq!(c.unwritten_read_bytes, 0);
}

#[test]
fn untimed_random_overwrites_leave_a_drive_that_collects_at_once() {
    let cfg = preset("c300-256g", 64);
    let cap = cfg.user_capacity();
    let mut s = sim(&cfg, Precondition::Fresh);
    {
        let mut f = s.untimed_fill().unwrap();
        let mut off = 0;
        while off < cap {
            f.write(0, off, (128 << 10).min(cap - off));
            off += 128 << 10;
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..cap / 4096 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f.write(0, (x % (cap / 4096)) * 4096, 4096);
        }
    }
    s.check_invariants().unwrap();
    // the very next random writes pay for garbage collection: data is moved at once
    let r = measure(
        &mut s,
        OpKind::Write,
        Access::Random,
        4096,
        0,
        cap,
        32,
        1.0,
        0.3,
    );
    assert!(r.iops > 0.0);
    let c = &s.counters()[0];
    assert!(c.gc_units_moved > 0, "no GC in the first 0.3 s");
    assert!(c.write_amplification > 1.0, "WA {}", c.write_amplification);
}
