#![allow(clippy::manual_is_multiple_of)]
mod common;
use common::{tiny, tiny_hybrid};
use proptest::prelude::*;
use ssdlab_ssdsim::*;

#[derive(Debug, Clone)]
enum Op {
    W(u64, u64, f32),
    R(u64, u64),
    T(u64, u64),
    Wait(u64),
}

fn op(max_sector: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..max_sector, 1u64..17, 0.05f32..1.0).prop_map(|(s, n, f)| Op::W(s, n, f)),
        2 => (0..max_sector, 1u64..17).prop_map(|(s, n)| Op::R(s, n)),
        1 => (0..max_sector, 1u64..65).prop_map(|(s, n)| Op::T(s, n)),
        1 => (0u64..3_000_000).prop_map(Op::Wait),
    ]
}

/// Run ops with up to 6 outstanding commands, tracking the expected version of every sector,
/// with the scheduler's invariant audit on: every transaction starts no earlier than its
/// dependencies (data in the controller, reads of read-modify-write, moved data programmed
/// before an erase), dies never idle while a transaction could start, die operations never
/// overlap, and no resource is busy for more than the measured window.
fn check(cfg: &DriveConfig, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut sim = Simulator::with_tracking(
        cfg,
        1,
        &AdapterConfig::passthrough(),
        Precondition::Fresh,
        5,
    )
    .unwrap();
    sim.enable_audit();
    sim.reset_counters();
    let sectors = cfg.user_capacity() / 512;
    let unit = cfg.ftl.mapping_unit / 512;
    let mut shadow: Vec<Option<u32>> = vec![None; sectors as usize];
    let mut version = 0u32;
    let mut now = 0u64;
    let mut tag = 0u64;
    for o in ops {
        if sim.pending() >= 6 {
            now = now.max(sim.next_completion().unwrap().1);
        }
        let cmd = match *o {
            Op::W(s, n, f) => {
                let n = n.min(sectors - s);
                version += 1;
                for x in s..s + n {
                    shadow[x as usize] = Some(version);
                }
                HostCmd {
                    kind: OpKind::Write,
                    offset: s * 512,
                    len: n * 512,
                    nand_fraction: f,
                    queue: 0,
                }
            }
            Op::R(s, n) => HostCmd::read(s * 512, n.min(sectors - s) * 512),
            Op::T(s, n) => {
                let n = n.min(sectors - s);
                // only whole mapping units are unmapped
                let u0 = s.div_ceil(unit);
                let u1 = (s + n) / unit;
                for u in u0..u1.max(u0) {
                    for x in u * unit..(u + 1) * unit {
                        shadow[x as usize] = None;
                    }
                }
                HostCmd::trim(s * 512, n * 512)
            }
            Op::Wait(d) => {
                now += d;
                continue;
            }
        };
        tag += 1;
        sim.submit(now, tag, 0, cmd);
    }
    let mut last = 0;
    while let Some((_, t)) = sim.next_completion() {
        prop_assert!(t >= last);
        last = t;
    }
    prop_assert_eq!(sim.write_count(0), version);
    if let Err(e) = sim.check_invariants() {
        return Err(TestCaseError::fail(e));
    }
    check_window(&sim)?;
    // the drive finishes its own work (buffered programs, GC) consistently too
    sim.run_until_idle();
    if let Err(e) = sim.check_invariants() {
        return Err(TestCaseError::fail(e));
    }
    let audit = sim.audit_report().unwrap();
    // (a case of waits alone submits nothing for the audit to check)
    prop_assert!(audit.checks > 0 || tag == 0);
    prop_assert_eq!(audit.violations, 0, "{:?}", audit.messages);
    check_window(&sim)?;
    for s in 0..sectors {
        prop_assert_eq!(sim.read_version(0, s), shadow[s as usize], "sector {}", s);
    }
    Ok(())
}

/// No resource is busy for longer than the window the counters cover.
fn check_window(sim: &Simulator) -> Result<(), TestCaseError> {
    for c in sim.counters() {
        let w = c.window_ns;
        let u = &c.utilisation;
        for (what, busy) in c
            .per_die_busy_ns
            .iter()
            .map(|&b| ("die", b))
            .chain(c.per_channel_busy_ns.iter().map(|&b| ("channel", b)))
            .chain(c.per_fw_busy_ns.iter().map(|&b| ("fw core", b)))
            .chain(c.per_ecc_busy_ns.iter().map(|&b| ("ecc engine", b)))
            .chain([
                ("link", c.link_busy_ns),
                ("link to host", c.link_to_host_busy_ns),
            ])
        {
            prop_assert!(busy <= w, "{} busy {} ns in a {} ns window", what, busy, w);
        }
        prop_assert!(u.busiest_utilisation <= 1.0 + 1e-9, "{:?}", u);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn shadow_rmw_4k(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(4096, true, 65536, false), &ops)?;
    }
    #[test]
    fn shadow_remap_4k_compressed_nocache(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(4096, false, 0, true), &ops)?;
    }
    /// A separate ECC decode stage (one engine) on a read-modify-write drive without copyback:
    /// host, read-modify-write and GC reads all queue for it.
    #[test]
    fn shadow_rmw_ecc_engine(ops in prop::collection::vec(op(2048), 1..1500)) {
        let mut cfg = tiny(4096, true, 65536, false);
        cfg.set("controller.ecc_decode_ns", "30000").unwrap();
        cfg.set("ftl.copyback", "false").unwrap();
        check(&cfg, &ops)?;
    }
    /// GC page moves cost the firmware core: moves queue for an idle core, writes and
    /// foreground GC book them, GC groups wait for them (remapping, so merges join in).
    #[test]
    fn shadow_remap_gc_firmware(ops in prop::collection::vec(op(2048), 1..1500)) {
        let mut cfg = tiny(4096, false, 65536, false);
        cfg.set("controller.fw_gc_move_ns", "60000").unwrap();
        cfg.set("ftl.copyback", "false").unwrap();
        check(&cfg, &ops)?;
    }
    /// Remapping with a write-back buffer: fragments, their merges at rewrite and at GC.
    #[test]
    fn shadow_remap_4k_cache(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(4096, false, 65536, false), &ops)?;
    }
    #[test]
    fn shadow_512_unit(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(512, true, 0, false), &ops)?;
    }
    /// A cached mapping table of one translation page for the drive's two: reads wait for the
    /// page they need, writes and GC moves dirty pages that are written back when pushed out.
    #[test]
    fn shadow_map_cache(ops in prop::collection::vec(op(2048), 1..1500)) {
        let mut cfg = tiny(512, true, 32768, false);
        cfg.set("controller.map_cache_bytes", "4096").unwrap();
        check(&cfg, &ops)?;
    }
    #[test]
    fn shadow_page_unit_compressed(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(4096, true, 32768, true), &ops)?;
    }
    /// Suspend on, reads and programs in arrival order, another GC policy.
    #[test]
    fn shadow_suspend_fifo_cost_benefit(ops in prop::collection::vec(op(2048), 1..1500)) {
        let mut cfg = tiny(4096, true, 65536, false);
        cfg.set("nand.program_suspend", "true").unwrap();
        cfg.set("nand.erase_suspend", "true").unwrap();
        cfg.set("sched.suspend_min_remaining_ns", "0").unwrap();
        cfg.set("sched.read_priority", "false").unwrap();
        cfg.set("ftl.gc_policy", "cost-benefit").unwrap();
        check(&cfg, &ops)?;
    }
    /// The hybrid log-block scheme (FAST): writes into sequential and random log blocks,
    /// switch, partial and full merges, with a write buffer.
    #[test]
    fn shadow_hybrid(ops in prop::collection::vec(op(1536), 1..1500)) {
        check(&tiny_hybrid(2, 65536), &ops)?;
    }
    /// The hybrid scheme with one random log block per die (every merge in the foreground),
    /// without a write buffer (writes complete when programmed; the flush timer programs
    /// partly filled log pages), without copyback, single-plane commands.
    #[test]
    fn shadow_hybrid_write_through(ops in prop::collection::vec(op(1536), 1..1500)) {
        let mut cfg = tiny_hybrid(1, 0);
        cfg.set("ftl.copyback", "false").unwrap();
        cfg.set("nand.multi_plane", "false").unwrap();
        check(&cfg, &ops)?;
    }
    /// Single-plane commands, no copyback, d-choices victims.
    #[test]
    fn shadow_single_plane_dchoices(ops in prop::collection::vec(op(2048), 1..1500)) {
        let mut cfg = tiny(4096, false, 0, false);
        cfg.set("nand.multi_plane", "false").unwrap();
        cfg.set("ftl.copyback", "false").unwrap();
        cfg.set("ftl.gc_policy", "d-choices").unwrap();
        cfg.set("ftl.gc_d_choices", "3").unwrap();
        check(&cfg, &ops)?;
    }
}

#[test]
fn heavy_gc_overwrite_many_times_with_suspend() {
    let mut cfg = tiny(4096, true, 65536, false);
    cfg.set("nand.program_suspend", "true").unwrap();
    cfg.set("nand.erase_suspend", "true").unwrap();
    let mut x = 11u64;
    let ops: Vec<Op> = (0..30_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = (x >> 33) % 2040;
            let n = 1 + (x >> 20) % 16;
            match x % 7 {
                0 => Op::T(s, n * 4),
                1 | 2 => Op::R(s, n),
                _ => Op::W(s, n, 1.0),
            }
        })
        .collect();
    check(&cfg, &ops).unwrap();
}

#[test]
fn heavy_gc_overwrite_many_times() {
    // 30x the user capacity of random unaligned writes on the tiny drive: lots of GC and folds
    let cfg = tiny(4096, true, 65536, false);
    let mut x = 9u64;
    let ops: Vec<Op> = (0..30_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = (x >> 33) % 2040;
            let n = 1 + (x >> 20) % 16;
            if x % 11 == 0 {
                Op::T(s, n * 4)
            } else {
                Op::W(s, n, 1.0)
            }
        })
        .collect();
    check(&cfg, &ops).unwrap();
}

/// The remap shadow cases do reach fragment merges at rewrite and at GC: a fixed stream of
/// misaligned writes over the tiny drive, checked against the shadow like the random cases.
#[test]
fn remap_fragments_merge_under_the_shadow() {
    let cfg = tiny(4096, false, 0, false);
    let mut x = 7u64;
    let ops: Vec<Op> = (0..4000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // 1..=7 sectors at any sector offset: nearly every write covers part of a unit
            Op::W((x >> 20) % 2040, 1 + (x >> 50) % 7, 1.0)
        })
        .collect();
    check(&cfg, &ops).unwrap();
    let mut sim = Simulator::new(
        &cfg,
        1,
        &AdapterConfig::passthrough(),
        Precondition::Fresh,
        5,
    )
    .unwrap();
    for (tag, o) in ops.iter().enumerate() {
        if let Op::W(s, n, _) = *o {
            if sim.pending() >= 6 {
                sim.next_completion();
            }
            sim.submit(sim.now(), tag as u64, 0, HostCmd::write(s * 512, n * 512));
        }
    }
    while sim.next_completion().is_some() {}
    let c = &sim.counters()[0];
    assert!(c.remap_merges > 0, "no merges at rewrite");
    assert!(c.gc_merges > 0, "no merges by GC");
    assert!(c.fragment_reads > 0, "no merge reads");
    sim.check_invariants().unwrap();
}

/// Random writes, reads and trims mixed with sequential passes over whole logical blocks on the
/// hybrid drive (30,000 operations, many times its capacity): full merges of random log blocks,
/// switch merges of sequential log blocks written whole, partial merges of ones written in
/// part, all under the shadow and the audit.
fn hybrid_mix(seed: u64, n: usize) -> Vec<Op> {
    let mut x = seed;
    let mut ops = Vec::new();
    let sectors = 1536;
    while ops.len() < n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match (x >> 40) % 10 {
            // a sequential pass over a logical block (128 sectors), whole or a prefix
            0 | 1 => {
                let lb = (x >> 20) % 12;
                let len = if (x >> 30) % 3 == 0 {
                    8 * (1 + (x >> 33) % 15)
                } else {
                    128
                };
                let mut s = lb * 128;
                while s < lb * 128 + len {
                    ops.push(Op::W(s, 8, 1.0));
                    s += 8;
                }
            }
            2 => ops.push(Op::T((x >> 20) % sectors, 8 + (x >> 50) % 40)),
            3 | 4 => ops.push(Op::R((x >> 20) % sectors, 1 + (x >> 50) % 16)),
            _ => ops.push(Op::W((x >> 20) % (sectors - 16), 1 + (x >> 50) % 16, 1.0)),
        }
    }
    ops
}

#[test]
fn hybrid_heavy_mix_under_the_shadow() {
    for (cfg, seed) in [
        (tiny_hybrid(2, 65536), 3u64),
        (tiny_hybrid(1, 0), 5),
        (tiny_hybrid(4, 16384), 7),
    ] {
        let ops = hybrid_mix(seed, 30_000);
        check(&cfg, &ops).unwrap();
        let mut sim = Simulator::new(
            &cfg,
            1,
            &AdapterConfig::passthrough(),
            Precondition::Fresh,
            5,
        )
        .unwrap();
        for (tag, o) in ops.iter().enumerate() {
            let cmd = match *o {
                Op::W(s, n, _) => HostCmd::write(s * 512, n * 512),
                Op::R(s, n) => HostCmd::read(s * 512, n.min(1536 - s) * 512),
                Op::T(s, n) => HostCmd::trim(s * 512, n.min(1536 - s) * 512),
                Op::Wait(_) => continue,
            };
            if sim.pending() >= 6 {
                sim.next_completion();
            }
            sim.submit(sim.now(), tag as u64, 0, cmd);
        }
        while sim.next_completion().is_some() {}
        sim.run_until_idle();
        sim.check_invariants().unwrap();
        let m = sim.counters()[0].hybrid.unwrap();
        eprintln!("{}: {m:?}", cfg.ftl.log_blocks);
        assert!(
            m.full_merges > 0 && m.partial_merges > 0 && m.switch_merges > 0,
            "{m:?}"
        );
    }
}
