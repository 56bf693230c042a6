#![allow(clippy::manual_is_multiple_of)]
mod common;
use common::tiny;
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

/// Run ops with up to 6 outstanding commands, tracking the expected version of every sector.
fn check(cfg: &DriveConfig, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut sim = Simulator::with_tracking(
        cfg,
        1,
        &AdapterConfig::passthrough(),
        Precondition::Fresh,
        5,
    )
    .unwrap();
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
    for s in 0..sectors {
        prop_assert_eq!(sim.read_version(0, s), shadow[s as usize], "sector {}", s);
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
    #[test]
    fn shadow_512_unit(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(512, true, 0, false), &ops)?;
    }
    #[test]
    fn shadow_page_unit_compressed(ops in prop::collection::vec(op(2048), 1..1500)) {
        check(&tiny(4096, true, 32768, true), &ops)?;
    }
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
