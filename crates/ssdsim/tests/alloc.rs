#![allow(clippy::manual_is_multiple_of)]
//! Counts heap allocations in the hot loop: after warm-up, submit/next_completion must not
//! allocate.
use ssdlab_ssdsim::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to the system allocator with the caller's arguments, so
// Counting keeps GlobalAlloc's contract exactly as System does.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds alloc's contract for `l`.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from this allocator, i.e. from System, with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `p` came from System with layout `l`; the caller upholds realloc's contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn drive_loop(sim: &mut Simulator, ops: u64, span_units: u64, x: &mut u64) {
    for _ in 0..ops {
        let (tag, t) = sim.next_completion().unwrap();
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let off = (*x >> 16) % span_units * 4096 + if *x % 5 == 0 { 512 } else { 0 };
        let cmd = match *x % 4 {
            0 => HostCmd::read(off, 8192),
            1 => HostCmd::trim(off, 65536),
            _ => HostCmd {
                kind: OpKind::Write,
                offset: off,
                len: 4096,
                nand_fraction: 0.5,
                queue: 0,
            },
        };
        sim.submit(t, tag, (tag % 2) as usize, cmd);
    }
}

#[test]
fn no_allocations_per_request_after_warmup() {
    for name in ["vertex450-128g", "vertex-le-100g", "x25m-g2-160g"] {
        let cfg = load_preset(name).unwrap().scaled(64).unwrap();
        let ad = AdapterConfig {
            uplink_bytes_per_sec: Some(1_600_000_000),
            per_request_overhead_ns: 500,
            trim_passthrough: true,
            write_cache: None,
            host: Default::default(),
        };
        let mut sim = Simulator::new(&cfg, 2, &ad, Precondition::Steady, 1).unwrap();
        let span = cfg.user_capacity() / 4096 - 64;
        for tag in 0..40u64 {
            sim.submit(0, tag, (tag % 2) as usize, HostCmd::write(tag * 4096, 4096));
        }
        let mut x = 1u64;
        // warm-up: GC starts, heaps and the fragment table of a remapping drive reach their
        // working size (tables grow by doubling, so a round that allocates nothing comes soon)
        drive_loop(&mut sim, 300_000, span, &mut x);
        for _ in 0..8 {
            let before = ALLOCS.load(Ordering::Relaxed);
            drive_loop(&mut sim, 100_000, span, &mut x);
            if ALLOCS.load(Ordering::Relaxed) == before {
                break;
            }
        }
        let before = ALLOCS.load(Ordering::Relaxed);
        drive_loop(&mut sim, 300_000, span, &mut x);
        let n = ALLOCS.load(Ordering::Relaxed) - before;
        assert_eq!(n, 0, "{name}: {n} allocations in 300k requests");
        assert!(
            sim.counters()[0].gc_runs > 0,
            "{name}: GC should run in this test"
        );
    }
}
