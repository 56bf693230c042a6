//! The RAID driver's write-back cache, command by command: reads of cached data come from host
//! memory, a TRIM reaches its member after the dirty data queued before it, every byte taken in
//! is written out, and a full cache makes writes wait.

use ssdlab_ssdsim::{
    load_preset, AdapterConfig, HostCmd, Precondition, Simulator, WriteCacheConfig,
};

fn sim(cache: Option<u64>, tracking: bool) -> Simulator {
    let cfg = load_preset("vertex450-128g").unwrap();
    let ad = AdapterConfig {
        write_cache: cache.map(WriteCacheConfig::with_size),
        host: Default::default(),
        ..AdapterConfig::passthrough()
    };
    if tracking {
        Simulator::with_tracking(&cfg, 2, &ad, Precondition::Fresh, 1).unwrap()
    } else {
        Simulator::new(&cfg, 2, &ad, Precondition::Fresh, 1).unwrap()
    }
}

/// Submits `cmd` at the simulator's current time and waits for it: its latency, ns.
fn one(s: &mut Simulator, tag: u64, drive: usize, cmd: HostCmd) -> u64 {
    let t0 = s.now();
    s.submit(t0, tag, drive, cmd);
    let (got, t) = s.next_completion().unwrap();
    assert_eq!(got, tag);
    t - t0
}

#[test]
fn reads_of_cached_data_come_from_host_memory() {
    let mut s = sim(Some(64 << 20), false);
    let w = one(&mut s, 1, 0, HostCmd::write(1 << 20, 4096));
    // in host memory: a 4 KiB copy at 5 GB/s
    assert!(w < 2_000, "cached write took {w} ns");
    let hit = one(&mut s, 2, 0, HostCmd::read(1 << 20, 4096));
    assert!(hit < 2_000, "read hit took {hit} ns");
    // the other member holds nothing of it: that read goes to its drive
    let miss = one(&mut s, 3, 1, HostCmd::read(1 << 20, 4096));
    assert!(miss > hit);
    let c = s.write_cache_counters().unwrap();
    assert_eq!((c.absorbed_bytes, c.read_hit_bytes), (4096, 4096));
    // once written out, the data is read from the drive again
    s.run_until_idle();
    assert_eq!(s.write_cache_counters().unwrap().flushed_bytes, 4096);
    let after = one(&mut s, 4, 0, HostCmd::read(1 << 20, 4096));
    assert!(after > hit, "{after} vs {hit}");
}

#[test]
fn a_trim_reaches_its_member_after_the_data_before_it() {
    let mut s = sim(Some(64 << 20), true);
    let mut tag = 0;
    for i in 0..64u64 {
        tag += 1;
        s.submit(s.now(), tag, 0, HostCmd::write(i * 4096, 4096));
    }
    // trims the first half while its data is still on its way to the drive
    tag += 1;
    s.submit(s.now(), tag, 0, HostCmd::trim(0, 32 * 4096));
    while s.next_completion().is_some() {}
    s.run_until_idle();
    let c = s.write_cache_counters().unwrap();
    assert_eq!(c.absorbed_bytes, c.flushed_bytes);
    for i in 0..64u64 {
        let v = s.read_version(0, i * 8);
        if i < 32 {
            assert_eq!(v, None, "unit {i} was trimmed after it was written");
        } else {
            assert!(v.is_some(), "unit {i} keeps its data");
        }
    }
    s.check_invariants().unwrap();
}

#[test]
fn a_full_cache_makes_writes_wait() {
    // 1 MiB of cache, 16 MiB written as fast as the host can: most writes wait for room, and
    // the cache never holds more than its size.
    let mut s = sim(Some(1 << 20), false);
    let mut tag = 0u64;
    let mut inflight = 0;
    let mut next = 0u64;
    while next < 4096 || inflight > 0 {
        while inflight < 8 && next < 4096 {
            tag += 1;
            s.submit(
                s.now(),
                tag,
                (next % 2) as usize,
                HostCmd::write((next / 2) * 4096, 4096),
            );
            next += 1;
            inflight += 1;
        }
        s.next_completion().unwrap();
        inflight -= 1;
    }
    let c = s.write_cache_counters().unwrap();
    assert_eq!(c.absorbed_bytes, 16 << 20);
    assert!(c.peak_dirty_bytes <= 1 << 20);
    assert!(c.full_waits > 0 && c.full_wait_ns > 0, "{c:?}");
    s.run_until_idle();
    assert_eq!(s.write_cache_counters().unwrap().flushed_bytes, 16 << 20);
}
