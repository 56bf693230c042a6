//! The write buffer takes a write a part at a time when it does not fit whole: a write larger
//! than the whole buffer completes, and a sequential stream runs at the same rate whatever the
//! request size once the flash binds.

mod common;
use common::*;
use ssdlab_ssdsim::loadgen::Access;
use ssdlab_ssdsim::*;

/// MB/s of sequential writes of `bs` bytes at QD `qd` on a fresh drive, with its invariants
/// checked afterwards.
fn seq_write(cfg: &DriveConfig, bs: u64, qd: usize) -> f64 {
    let mut s = sim(cfg, Precondition::Fresh);
    let span = cfg.user_capacity();
    let r = measure(
        &mut s,
        OpKind::Write,
        Access::Sequential,
        bs,
        0,
        span,
        qd,
        1.0,
        0.3,
    );
    s.check_invariants().unwrap();
    assert!(r.ios > 0, "no {bs}-byte write completed at QD {qd}");
    r.mb_s
}

#[test]
fn a_write_larger_than_the_buffer_completes_in_parts() {
    // a 64 KiB buffer, 256 KiB and 512 KiB writes: whole admission could never take them
    for cfg in [tiny(4096, true, 65536, false), tiny_hybrid(2, 65536)] {
        for bs in [256 << 10, 512 << 10] {
            let mb_s = seq_write(&cfg, bs, 1);
            eprintln!(
                "{}: {} KiB writes at QD 1: {mb_s:.1} MB/s",
                cfg.name,
                bs >> 10
            );
            assert!(mb_s > 0.0);
        }
    }
}

/// Once the dies bind, the same bytes in larger requests arrive no slower: a write waits only
/// for the space its next part needs, not for room for all of it.
#[test]
fn sequential_write_rate_does_not_fall_with_the_request_size() {
    // The DRAM-less NVMe drive (a 4 MiB buffer in front of 16 dies), scaled down.
    let cfg = preset("samsung-980-1t", 64);
    let small = seq_write(&cfg, 128 << 10, 32);
    for bs in [1 << 20, 4 << 20] {
        let large = seq_write(&cfg, bs, 32);
        eprintln!(
            "128 KiB: {small:.0} MB/s; {} KiB: {large:.0} MB/s",
            bs >> 10
        );
        assert!(large > 0.97 * small, "{large:.0} vs {small:.0} MB/s");
    }
}
