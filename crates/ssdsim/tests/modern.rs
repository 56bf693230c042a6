//! Today's drives: program and read times per page type (TLC, QLC), the SLC cache (static and
//! dynamic parts, folding when the host is idle), and the NVMe host interface (PCIe link rate,
//! command-path latencies, I/O queue pairs). Directions and physical bounds, no tuned constants.

use ssdlab_ssdsim::*;

/// A small NVMe TLC drive: 4 channels × 1 die × 2 planes × 80 blocks × 48 pages × 16 KiB
/// (480 MiB raw, 320 MiB user); `nand`, `ftl` and `host` are added to those sections.
fn drive(nand: &str, ftl: &str, host: &str) -> DriveConfig {
    let text = format!(
        r#"
name = "tlc-test"
[host]
interface = "nvme"
link_bytes_per_sec = 0
pcie_gen = 4
pcie_lanes = 4
cmd_overhead_ns = 20
queue_depth = 64
{host}
[controller]
fw_read_ns = 2000
fw_write_ns = 2000
fw_trim_ns = 1000
fw_units = 4
cache_bytes = 1048576
coalesce_ns = 100000
[ftl]
user_capacity_bytes = 335544320
mapping_unit = 4096
unaligned = "rmw"
gc_bg_free_blocks = 6
gc_fg_free_blocks = 3
{ftl}
[nand]
channels = 4
dies_per_channel = 1
planes_per_die = 2
blocks_per_plane = 80
pages_per_block = 48
page_bytes = 16384
bus_mt_s = 1200
bits_per_cell = 3
t_r_ns = 60000
t_prog_ns = 300000
t_bers_ns = 3000000
{nand}
"#
    );
    DriveConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn sim(cfg: &DriveConfig, pre: Precondition) -> Simulator {
    Simulator::new(cfg, 1, &AdapterConfig::passthrough(), pre, 11).unwrap()
}

/// A deterministic offset stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Closed loop: `streams[i]` commands of stream `i` in flight (on NVMe queue `i`), `n`
/// commands in all from `make(stream, k)`, starting at `t0`. Returns (end time, mean latency).
fn closed(
    s: &mut Simulator,
    t0: u64,
    streams: &[usize],
    n: usize,
    mut make: impl FnMut(usize, usize) -> HostCmd,
) -> (u64, f64) {
    let mut submitted = 0;
    let mut issue = |s: &mut Simulator, stream: usize, t: u64, k: &mut usize| {
        let mut c = make(stream, *k);
        c.queue = stream as u16;
        s.submit(t, (stream as u64) << 40 | t, 0, c);
        *k += 1;
    };
    for (i, &qd) in streams.iter().enumerate() {
        for _ in 0..qd {
            issue(s, i, t0, &mut submitted);
        }
    }
    let (mut end, mut lat, mut done) = (t0, 0u128, 0u64);
    while let Some((tag, t)) = s.next_completion() {
        let stream = (tag >> 40) as usize;
        let started = tag & ((1 << 40) - 1);
        lat += (t - started) as u128;
        done += 1;
        end = end.max(t);
        if submitted < n {
            issue(s, stream, t, &mut submitted);
        }
    }
    (end, lat as f64 / done.max(1) as f64)
}

/// MB/s of `bytes` of sequential 128 KiB writes at QD 8 on a fresh drive, until the last
/// program ends.
fn seq_write_rate(cfg: &DriveConfig, bytes: u64) -> f64 {
    let mut s = sim(cfg, Precondition::Fresh);
    let n = (bytes / (128 << 10)) as usize;
    let (end, _) = closed(&mut s, 0, &[8], n, |_, k| {
        HostCmd::write(k as u64 * (128 << 10), 128 << 10)
    });
    s.run_until_idle();
    bytes as f64 / s.now().max(end) as f64 * 1e3
}

#[test]
fn sustained_writes_follow_the_page_type_program_times() {
    // program-bound: each die programs its word line's pages one after another, each a
    // two-plane program holding the die for the data transfer in (2 × 16 KiB at 1200 MT/s)
    // and its page type's tPROG
    let physics = |times: [u64; 3]| {
        let xfer = 2.0 * 16384.0 * 1000.0 / 1200.0;
        let word_line = times.iter().map(|&t| t as f64 + xfer).sum::<f64>();
        4.0 * 2.0 * 16384.0 * 3.0 / word_line * 1e3 // MB/s
    };
    let bytes = 128 << 20;
    let even = seq_write_rate(
        &drive("t_prog_pages_ns = [400000, 400000, 400000]", "", ""),
        bytes,
    );
    let skew = seq_write_rate(
        &drive("t_prog_pages_ns = [150000, 350000, 700000]", "", ""),
        bytes,
    );
    let slow_top = seq_write_rate(
        &drive("t_prog_pages_ns = [400000, 400000, 1600000]", "", ""),
        bytes,
    );
    let expect = physics([400000; 3]);
    assert!(
        (even / expect - 1.0).abs() < 0.05,
        "even page times: {even:.1} MB/s, the program-bound rate is {expect:.1}"
    );
    // same mean time per page: the same sustained rate
    assert!(
        (skew / even - 1.0).abs() < 0.03,
        "same mean program time, rates {skew:.1} vs {even:.1} MB/s"
    );
    // a slower upper page slows the word line down
    assert!(slow_top < even * 0.8, "{slow_top:.1} vs {even:.1} MB/s");
    let expect_slow = physics([400000, 400000, 1600000]);
    assert!(
        (slow_top / expect_slow - 1.0).abs() < 0.05,
        "{slow_top:.1} MB/s, the program-bound rate is {expect_slow:.1}"
    );
}

#[test]
fn reads_pay_the_read_time_of_their_page_type() {
    let lat = |nand: &str| {
        let cfg = drive(nand, "", "");
        let mut s = sim(&cfg, Precondition::Full);
        let units = cfg.user_capacity() / 4096;
        let mut r = Rng(0x9e3779b97f4a7c15);
        closed(&mut s, 0, &[1], 4000, |_, _| {
            HostCmd::read(r.next() % units * 4096, 4096)
        })
        .1
    };
    let flat = lat("t_r_pages_ns = [60000, 60000, 60000]");
    let typed = lat("t_r_pages_ns = [30000, 60000, 90000]");
    let fast = lat("t_r_pages_ns = [30000, 30000, 30000]");
    // random pages are of every type alike: the mean read time is the same
    assert!(
        (typed - flat).abs() < 0.03 * flat,
        "typed {typed:.0} ns vs flat {flat:.0} ns"
    );
    assert!(
        fast < flat - 25_000.0,
        "fast {fast:.0} ns vs flat {flat:.0} ns"
    );
}

const SLC: &str = "pslc_bytes = 32000000\npslc_static_bytes = 8000000\npslc_t_prog_ns = 100000\npslc_t_r_ns = 30000";

/// Bytes that went to SLC pages (pSLC programs × page size).
fn slc_bytes(s: &Simulator) -> u64 {
    s.counters()[0].pslc_programs * 16384
}

#[test]
fn the_slc_cache_takes_its_size_then_writes_go_to_tlc() {
    let cfg = drive("", SLC, "");
    let cache = cfg.pslc_blocks_per_plane() as u64 * 8 * 16 * 16384; // blocks × planes × SLC pages × page
    assert!((32_000_000..40_000_000).contains(&cache), "{cache}");
    let mut s = sim(&cfg, Precondition::Fresh);
    let n = (96 << 20) / (128 << 10);
    closed(&mut s, 0, &[8], n, |_, k| {
        HostCmd::write(k as u64 * (128 << 10), 128 << 10)
    });
    s.run_until_idle();
    let slc = slc_bytes(&s) as f64;
    // the dynamic part shrinks as data lands, so a burst fills a little less than the cache
    assert!(
        slc > 0.6 * cache as f64 && slc <= cache as f64 * 1.01,
        "{slc} bytes in SLC, cache {cache}"
    );

    // a full drive keeps only the static part (folded while the drive was idle)
    let cfg = drive("", &format!("{SLC}\npslc_idle_fold_ns = 100000000"), "");
    let mut s = sim(&cfg, Precondition::Full);
    s.reset_counters();
    let n = (48 << 20) / (128 << 10);
    closed(&mut s, 0, &[8], n, |_, k| {
        HostCmd::write(k as u64 * (128 << 10), 128 << 10)
    });
    let full = slc_bytes(&s) as f64;
    let static_bytes = cfg.pslc_static_blocks_per_plane() as u64 * 8 * 16 * 16384;
    assert!(
        full <= static_bytes as f64 * 1.01 && full > 0.5 * static_bytes as f64,
        "full drive: {full} bytes in SLC, static part {static_bytes}"
    );
}

/// Share of a second 16 MiB burst that lands in SLC, after a 32 MiB burst and `idle_ns` idle.
fn second_burst_slc_share(fold_ns: u64, idle_ns: u64) -> f64 {
    let cfg = drive("", &format!("{SLC}\npslc_idle_fold_ns = {fold_ns}"), "");
    let mut s = sim(&cfg, Precondition::Fresh);
    let burst = |s: &mut Simulator, t0: u64, base: u64, bytes: u64| {
        let n = (bytes / (128 << 10)) as usize;
        closed(s, t0, &[8], n, |_, k| {
            HostCmd::write(base + k as u64 * (128 << 10), 128 << 10)
        })
        .0
    };
    let end = burst(&mut s, 0, 0, 32 << 20);
    s.run_until(end + idle_ns);
    let before = slc_bytes(&s);
    burst(&mut s, end + idle_ns, 64 << 20, 16 << 20);
    s.run_until_idle();
    (slc_bytes(&s) - before) as f64 / (16 << 20) as f64
}

#[test]
fn an_idle_drive_folds_its_slc_cache_and_the_next_burst_is_fast_again() {
    let folded = second_burst_slc_share(100_000_000, 3_000_000_000);
    let not_folding = second_burst_slc_share(0, 3_000_000_000);
    let too_short = second_burst_slc_share(100_000_000, 50_000_000);
    // the first burst ended on native (TLC) host blocks opened once the cache was full; the
    // second burst fills what is left of them before it opens SLC blocks again
    assert!(
        folded > 0.75,
        "after idle folding {folded:.2} of the burst in SLC"
    );
    assert!(
        not_folding < 0.5 * folded,
        "without idle folding {not_folding:.2} vs {folded:.2}"
    );
    assert!(
        too_short < 0.5 * folded,
        "idle shorter than the fold delay: {too_short:.2} vs {folded:.2}"
    );
}

/// Past the cache's share a folding drive keeps writing SLC pages and folds the oldest SLC
/// blocks meanwhile: every byte is programmed twice, so its post-cache rate is below that of a
/// drive that writes straight to native blocks, and it keeps programming SLC pages.
#[test]
fn a_drive_that_folds_while_writing_is_slower_after_its_cache() {
    let after_cache = |when_full: &str| {
        let cfg = drive("", &format!("{SLC}\npslc_when_full = \"{when_full}\""), "");
        let mut s = sim(&cfg, Precondition::Fresh);
        // fill the cache, then measure the next 64 MiB
        let n = (48 << 20) / (128 << 10);
        let (t0, _) = closed(&mut s, 0, &[8], n, |_, k| {
            HostCmd::write(k as u64 * (128 << 10), 128 << 10)
        });
        s.reset_counters();
        let n = (64 << 20) / (128 << 10);
        let (end, _) = closed(&mut s, t0, &[8], n, |_, k| {
            HostCmd::write((48 << 20) + k as u64 * (128 << 10), 128 << 10)
        });
        let c = s.counters()[0].clone();
        s.check_invariants().unwrap();
        (
            (64u64 << 20) as f64 / (end - t0) as f64 * 1e3,
            c.pslc_programs,
            c.write_amplification,
        )
    };
    let (native, native_slc, native_wa) = after_cache("native");
    let (fold, fold_slc, fold_wa) = after_cache("fold");
    eprintln!("after the cache: native {native:.0} MB/s (WA {native_wa:.2}, {native_slc} SLC pages), fold {fold:.0} MB/s (WA {fold_wa:.2}, {fold_slc} SLC pages)");
    assert!(fold < 0.85 * native, "{fold:.0} vs {native:.0} MB/s");
    assert!(
        fold_slc > 4 * native_slc.max(1),
        "{fold_slc} vs {native_slc}"
    );
    assert!(
        fold_wa > native_wa + 0.3,
        "WA {fold_wa:.2} vs {native_wa:.2}"
    );
}

#[test]
fn the_pcie_link_rate_follows_generation_lanes_and_payload_size() {
    let g4 = pcie_payload_rate(4, 4, 256) as f64;
    assert!((g4 / (16e9 * 128.0 / 130.0 / 8.0 * 4.0 * 256.0 / 282.0) - 1.0).abs() < 1e-6);
    assert!(pcie_payload_rate(3, 4, 256) * 2 <= pcie_payload_rate(4, 4, 256) + 2);
    assert!(pcie_payload_rate(4, 4, 512) > pcie_payload_rate(4, 4, 256));
    assert!(pcie_payload_rate(2, 4, 256) < pcie_payload_rate(3, 4, 256));
    // 128 KiB reads at QD 32 are bound by the derived link rate (x1 link: slower than the NAND)
    let cfg = drive("", "", "");
    let mut narrow = cfg.clone();
    narrow.host.pcie_lanes = 1;
    narrow.host.pcie_gen = 2;
    let rate = |cfg: &DriveConfig| {
        let mut s = sim(cfg, Precondition::Full);
        let n = 3000;
        let (end, _) = closed(&mut s, 0, &[32], n, |_, k| {
            HostCmd::read((k as u64 * (128 << 10)) % (256 << 20), 128 << 10)
        });
        n as f64 * (128 << 10) as f64 / end as f64 * 1e9
    };
    let link = narrow.host.link_rate() as f64;
    let got = rate(&narrow);
    assert!(
        got <= link * 1.001 && got > 0.9 * link,
        "x1 gen 2: {got:.0} B/s, link {link:.0} B/s"
    );
    assert!(rate(&cfg) > 2.0 * got);
}

#[test]
fn nvme_command_path_latencies_add_to_every_command() {
    let lat = |host: &str| {
        let cfg = drive("", "", host);
        let mut s = sim(&cfg, Precondition::Full);
        let units = cfg.user_capacity() / 4096;
        let mut r = Rng(77);
        closed(&mut s, 0, &[1], 2000, |_, _| {
            HostCmd::read(r.next() % units * 4096, 4096)
        })
        .1
    };
    let base = lat("");
    let with = lat("doorbell_ns = 200\nsq_fetch_ns = 700\ncompletion_ns = 1500");
    assert!(
        (with - base - 2400.0).abs() < 1.0,
        "QD 1 latency {with:.1} ns vs {base:.1} ns: the path adds 2400 ns"
    );
}

#[test]
fn each_nvme_queue_has_its_own_depth() {
    // two streams of 4 commands each on a drive whose queues hold 2: with one queue pair the
    // drive sees 2 commands at a time, with two it sees 4
    let run = |queues: u32| {
        let mut cfg = drive("", "", &format!("nvme_queues = {queues}"));
        cfg.host.queue_depth = 2;
        cfg.validate().unwrap();
        let mut s = sim(&cfg, Precondition::Full);
        let units = cfg.user_capacity() / 4096;
        let mut r = Rng(5);
        let (end, _) = closed(&mut s, 0, &[4, 4], 4000, |_, _| {
            HostCmd::read(r.next() % units * 4096, 4096)
        });
        4000.0 / end as f64 * 1e9
    };
    let one = run(1);
    let two = run(2);
    assert!(
        two > 1.4 * one,
        "IOPS with 2 queues {two:.0} vs 1 queue {one:.0}"
    );
}

#[test]
fn bad_modern_fields_are_refused_naming_the_field() {
    let bad = |nand: &str, ftl: &str, host: &str| {
        let text = format!(
            r#"
name = "x"
[host]
interface = "sata6g"
link_bytes_per_sec = 500000000
cmd_overhead_ns = 1000
queue_depth = 32
{host}
[controller]
fw_read_ns = 1000
fw_write_ns = 1000
fw_trim_ns = 1000
cache_bytes = 1048576
coalesce_ns = 100000
[ftl]
user_capacity_bytes = 335544320
mapping_unit = 4096
unaligned = "rmw"
gc_bg_free_blocks = 6
gc_fg_free_blocks = 3
{ftl}
[nand]
channels = 4
dies_per_channel = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 48
page_bytes = 16384
bus_mt_s = 1200
t_r_ns = 60000
t_prog_ns = 300000
t_bers_ns = 3000000
{nand}
"#
        );
        DriveConfig::from_toml_str(&text).unwrap_err().field
    };
    assert_eq!(bad("bits_per_cell = 5", "", ""), "nand.bits_per_cell");
    assert_eq!(
        bad("bits_per_cell = 3\nt_prog_pages_ns = [1, 2]", "", ""),
        "nand.t_prog_pages_ns"
    );
    assert_eq!(
        bad("bits_per_cell = 3\nt_r_pages_ns = [1, 2, 0]", "", ""),
        "nand.t_r_pages_ns"
    );
    assert_eq!(
        bad("bits_per_cell = 4\nt_prog_upper_ns = 9", "", ""),
        "nand.t_prog_upper_ns"
    );
    let mut c = drive("", "", "");
    c.nand.bits_per_cell = 4;
    c.nand.pages_per_block = 50;
    assert_eq!(c.validate().unwrap_err().field, "nand.pages_per_block");
    assert_eq!(bad("", "", "pcie_gen = 4"), "host.pcie_gen");
    assert_eq!(bad("", "", "nvme_queues = 2"), "host.nvme_queues");
    assert_eq!(bad("", "", "completion_ns = 10"), "host.completion_ns");
    assert_eq!(
        bad("", "pslc_bytes = 1000000\npslc_static_bytes = 2000000", ""),
        "ftl.pslc_static_bytes"
    );
}
