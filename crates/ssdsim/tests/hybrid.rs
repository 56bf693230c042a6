//! The hybrid log-block scheme (FAST, `ftl.scheme = "hybrid"`): merges happen where the
//! algorithm says and cost what it says, and random writes are much slower than on the same
//! drive page-mapped.
mod common;
use common::{preset, tiny_hybrid};
use ssdlab_ssdsim::loadgen::{run, Access, Workload};
use ssdlab_ssdsim::*;

fn merges(s: &Simulator) -> MergeCounters {
    s.counters()[0].hybrid.expect("a hybrid drive")
}

/// `n` writes of `bs` bytes from `from` on, in order, `qd` at a time; then the drive finishes
/// its work.
fn sequential(s: &mut Simulator, from: u64, n: u64, bs: u64, qd: u64) {
    let mut next = 0;
    let mut t = s.now();
    while next < n.min(qd) {
        s.submit(t, next, 0, HostCmd::write(from + next * bs, bs));
        next += 1;
    }
    while let Some((_, at)) = s.next_completion() {
        t = at;
        if next < n {
            s.submit(t, next, 0, HostCmd::write(from + next * bs, bs));
            next += 1;
        }
    }
    s.run_until_idle();
    s.check_invariants().unwrap();
}

/// The Barefoot preset scaled 16× (64 dies of 2 planes, 1 MiB logical blocks, 8 random log
/// blocks per die).
fn barefoot() -> DriveConfig {
    let c = preset("vertex-barefoot-120g", 16);
    assert_eq!(c.ftl.scheme, FtlScheme::Hybrid);
    c
}

/// A sequential write of whole logical blocks merges by switching only: no page is copied, the
/// write amplification is 1, and a second pass erases the first pass's data blocks.
#[test]
fn sequential_writes_switch_only() {
    let cfg = barefoot();
    let mut s = common::sim(&cfg, Precondition::Fresh);
    // 256 logical blocks of 1 MiB over 64 dies, in 128 KiB writes
    sequential(&mut s, 0, 2048, 128 << 10, 4);
    let c = &s.counters()[0];
    let m = merges(&s);
    // each die keeps its last logical block in its sequential log block
    assert_eq!(
        (
            m.switch_merges,
            m.partial_merges,
            m.full_merges,
            m.merge_pages
        ),
        (256 - 64, 0, 0, 0)
    );
    assert_eq!(c.nand_programs, 256 * 256);
    assert_eq!((c.nand_reads, c.nand_erases), (0, 0));
    assert!((c.write_amplification - 1.0).abs() < 1e-9);
    // again: every logical block switched (the 64 left over first), and the 192 data blocks
    // the first pass made are erased (a block on each plane)
    s.reset_counters();
    sequential(&mut s, 0, 2048, 128 << 10, 4);
    let c = &s.counters()[0];
    let m = merges(&s);
    assert_eq!(
        (m.switch_merges, m.partial_merges, m.full_merges),
        (256, 0, 0)
    );
    assert_eq!(c.nand_erases, 192 * 2);
    assert_eq!(c.nand_reads, 0);
}

/// A sequential log block holding a prefix of its logical block is completed from the data
/// block (a partial merge: the rest of the pages copied, each one read and one programmed).
#[test]
fn a_prefix_is_merged_partially() {
    let cfg = barefoot();
    let mut s = common::sim(&cfg, Precondition::Full);
    let lb = 1 << 20;
    // the first half of logical block 0 (die 0), then logical block 64 (die 0 too)
    sequential(&mut s, 0, 4, 128 << 10, 2);
    sequential(&mut s, 64 * lb, 8, 128 << 10, 2);
    let c = &s.counters()[0];
    let m = merges(&s);
    // die 0's sequential log block left by the fill is switched when block 0 starts
    assert_eq!(
        (m.switch_merges, m.partial_merges, m.full_merges),
        (1, 1, 0)
    );
    assert_eq!(m.merge_pages, 128);
    assert_eq!(c.nand_reads, 128);
    assert_eq!(c.nand_programs, 3 * 128 + 128);
    // the old data block of logical block 0 is erased
    assert_eq!(c.nand_erases, 2);
}

/// Random writes over a full drive fully merge the logical blocks of the oldest random log
/// block: every page of such a block is read and programmed again, which is all the flash work
/// besides the host's own pages and the erases.
#[test]
fn random_writes_fully_merge_whole_logical_blocks() {
    // untimed, exactly: a full merge of a logical block of a full drive copies all its pages
    let cfg = tiny_hybrid(2, 0);
    let lbp = 16;
    let mut s = common::sim(&cfg, Precondition::Full);
    {
        let mut f = s.untimed_fill().unwrap();
        let mut x = 3u64;
        for _ in 0..3000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // any page but a logical block's first (no sequential log block)
            let page = (x >> 33) % 192;
            let page = if page.is_multiple_of(lbp) {
                page + 1
            } else {
                page
            };
            f.write(0, page * 4096, 4096);
        }
    }
    s.check_invariants().unwrap();
    let m = merges(&s);
    assert!(m.full_merges > 100, "{m:?}");
    assert_eq!(m.partial_merges, 0);
    assert_eq!(m.merge_pages, m.full_merges * lbp, "{m:?}");

    // timed: each merge copy is one NAND read and one program, nothing else is read or
    // programmed but the host's pages (write-through: every host page is programmed)
    let mut s = common::sim(&cfg, Precondition::Full);
    let mut w = Workload::new(OpKind::Write, Access::Random, 4096, 192 * 4096, 1);
    w.duration_ns = 3_000_000_000;
    let r = run(&mut s, 0, &w, 0);
    s.run_until_idle();
    s.check_invariants().unwrap();
    let c = &s.counters()[0];
    let m = merges(&s);
    assert!(m.full_merges > 50, "{m:?}");
    assert_eq!(c.nand_reads, m.merge_pages);
    assert_eq!(c.nand_programs, r.total_ios + m.merge_pages);
    // a full merge of a full drive's block copies its 16 pages, but for pages still on their
    // way to their log block and the first pages written into sequential log blocks
    let per = m.merge_pages as f64 / (m.full_merges + m.partial_merges) as f64;
    assert!(per > 13.0 && per <= 16.0, "{per} pages per merge, {m:?}");
    let wa = 1.0 + m.merge_pages as f64 / r.total_ios as f64;
    assert!((c.write_amplification - wa).abs() < 1e-9, "{c:?}");
}

/// On a fresh drive, random writes over a span fill random log blocks and merge them fully;
/// nothing is ever written whole and in order, so nothing is switched.
#[test]
fn random_writes_over_a_span_do_full_merges() {
    let mut cfg = barefoot();
    // (two random log blocks per die: the merges start within the run)
    cfg.set("ftl.log_blocks", "2").unwrap();
    let mut s = common::sim(&cfg, Precondition::Fresh);
    let mut w = Workload::new(OpKind::Write, Access::Random, 4096, 1 << 30, 3);
    w.duration_ns = 10_000_000_000;
    run(&mut s, 0, &w, 0);
    s.run_until_idle();
    s.check_invariants().unwrap();
    let m = merges(&s);
    assert_eq!(m.switch_merges, 0, "{m:?}");
    assert!(m.full_merges > 1000, "{m:?}");
    // (a random write at a logical block's first page opens a sequential log block, merged
    // partially when the next one comes)
    assert!(m.full_merges > 10 * m.partial_merges, "{m:?}");
}

/// On the same geometry, random writes of a used (steady-state) drive are several times slower
/// under the hybrid scheme than page-mapped: every random log block merged costs whole
/// logical blocks of copies.
#[test]
fn hybrid_random_writes_are_much_slower_than_page_mapped() {
    let hybrid = barefoot();
    let mut page = hybrid.clone();
    page.set_all(&[
        ("ftl.scheme".into(), "page".into()),
        ("ftl.log_blocks".into(), "0".into()),
    ])
    .unwrap();
    let mut iops = Vec::new();
    for cfg in [&page, &hybrid] {
        let mut s = common::sim(cfg, Precondition::Steady);
        let mut w = Workload::new(OpKind::Write, Access::Random, 4096, 512 << 20, 3);
        w.warmup_ns = 1_000_000_000;
        w.duration_ns = 10_000_000_000;
        let r = run(&mut s, 0, &w, 0);
        let c = &s.counters()[0];
        eprintln!(
            "{:?}: {:.0} IOPS, WA {:.2}, {:?}",
            cfg.ftl.scheme, r.iops, c.write_amplification, c.hybrid
        );
        iops.push(r.iops);
    }
    assert!(iops[1] < iops[0] / 3.0, "{iops:?}");
}

/// Untimed preconditioning: `full` leaves every logical block in a data block (switched),
/// `steady` runs random overwrites until the merges' write amplification settles; both leave a
/// consistent drive that runs on.
#[test]
fn untimed_states_are_consistent() {
    let cfg = barefoot();
    for pre in [Precondition::Full, Precondition::Steady] {
        let mut s = common::sim(&cfg, pre);
        s.check_invariants().unwrap();
        let c = &s.counters()[0];
        assert_eq!(c.mapped_bytes, cfg.user_capacity() / 4096 * 4096);
        if pre == Precondition::Steady {
            // Uniform random single-page writes: a logical block is merged when a page of it
            // reaches the oldest random log block, with the other pages it has in the log:
            // about 1 + 2047 / 112 of them (2048 log pages, 112 logical blocks per die), so a
            // merge of 256 pages absorbs about 19 writes: WA ≈ 1 + 256 / 19.3 = 14.3.
            let (wa, written) = s.steady_state()[0].expect("steady");
            eprintln!("steady: WA {wa:.1} after {written:.3} capacities");
            let model = 1.0 + 256.0 / (1.0 + 2047.0 / 112.0);
            assert!(wa > 0.8 * model && wa < 1.3 * model, "{wa} against {model}");
        }
        let mut w = Workload::new(OpKind::Write, Access::Random, 4096, 64 << 20, 4);
        w.duration_ns = 2_000_000_000;
        run(&mut s, 0, &w, 0);
        s.run_until_idle();
        s.check_invariants().unwrap();
    }
}
