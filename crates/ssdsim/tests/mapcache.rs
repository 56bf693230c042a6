//! The cached mapping table of a controller without DRAM for the map
//! (`controller.map_cache_bytes`): what it costs comes from translation pages read and written
//! on the dies. Directions and invariants only; no tuned figures.
mod common;
use common::*;
use ssdlab_ssdsim::loadgen::{run, Access, LoadResult, Workload};
use ssdlab_ssdsim::*;

const MIB: u64 = 1 << 20;

/// A Samsung 980 PRO scaled 64× (3.75 GiB, 16 KiB pages: one translation page maps 16 MiB,
/// 240 pages map the drive), with `cache` bytes of map cache (0: the whole map in DRAM).
fn drive(cache: u64) -> DriveConfig {
    let mut c = preset("samsung-980pro-1t", 64);
    c.set("controller.map_cache_bytes", &cache.to_string())
        .unwrap();
    c
}

fn go(
    s: &mut Simulator,
    kind: OpKind,
    span: u64,
    align: u64,
    qd: usize,
    secs: f64,
) -> (LoadResult, DriveCounters) {
    let mut w = Workload::new(kind, Access::Random, 4096, span, qd);
    w.align = align;
    w.warmup_ns = 200_000_000;
    w.duration_ns = (secs * 1e9) as u64;
    let r = run(s, 0, &w, 0);
    s.check_invariants().unwrap();
    (r, s.counters()[0].clone())
}

/// `go` on a new full drive of `cfg`, 4 KiB-aligned.
fn full(
    cfg: &DriveConfig,
    kind: OpKind,
    span: u64,
    qd: usize,
    secs: f64,
) -> (LoadResult, DriveCounters) {
    go(
        &mut sim(cfg, Precondition::Full),
        kind,
        span,
        4096,
        qd,
        secs,
    )
}

/// Random reads at QD 1 on a full drive: within the span the cache maps (16 translation pages
/// = 256 MiB) every lookup hits once the pages are in, and a read costs one NAND read as with
/// the map in DRAM; over the whole drive nearly every lookup misses, so a read waits for a
/// translation-page read first: about one more NAND read per host read, latency up by about a
/// page read, fewer IOPS.
#[test]
fn map_misses_read_translation_pages_beyond_the_cached_span() {
    let cache = 16 * 16384;
    let dram = drive(0);
    let small = drive(cache);
    let all = dram.user_capacity();
    let (r_in, c_in) = full(&small, OpKind::Read, 128 * MIB, 1, 0.5);
    let (r_all, c_all) = full(&small, OpKind::Read, all, 1, 0.5);
    let (r_dram, c_dram) = full(&dram, OpKind::Read, all, 1, 0.5);
    eprintln!(
        "QD 1 random reads: 128 MiB span {:.0} IOPS ({} misses / {} lookups, {:.3} NAND reads per read); \
         whole drive {:.0} IOPS ({} / {}, {:.3}), map in DRAM {:.0} IOPS ({:.3}); mean {:.1} / {:.1} us",
        r_in.iops,
        c_in.map_misses,
        c_in.map_lookups,
        c_in.nand_reads as f64 / c_in.host_reads as f64,
        r_all.iops,
        c_all.map_misses,
        c_all.map_lookups,
        c_all.nand_reads as f64 / c_all.host_reads as f64,
        r_dram.iops,
        c_dram.nand_reads as f64 / c_dram.host_reads as f64,
        r_all.mean_latency_ns / 1e3,
        r_dram.mean_latency_ns / 1e3,
    );
    // the cache covers the span: at most its 8 pages are loaded
    assert_eq!(c_in.map_lookups, c_in.host_reads);
    assert!(c_in.map_misses <= 8, "{} misses", c_in.map_misses);
    // over the whole drive (240 translation pages, 16 cached) most lookups miss
    assert!(c_all.map_misses as f64 > 0.8 * c_all.map_lookups as f64);
    // every miss is a NAND read beside the data's (one command may be in flight at the ends)
    assert_eq!(c_all.map_reads, c_all.map_misses);
    assert!(
        c_all
            .nand_reads
            .abs_diff(c_all.host_reads + c_all.map_reads)
            <= 2
    );
    assert_eq!(c_dram.map_lookups, 0);
    assert!(c_dram.nand_reads.abs_diff(c_dram.host_reads) <= 1);
    // reads wait for the translation page: slower than with the map in DRAM, and than within
    // the cached span
    assert!(r_all.iops < 0.8 * r_dram.iops);
    assert!(r_all.iops < 0.8 * r_in.iops);
    assert!(r_all.mean_latency_ns > r_dram.mean_latency_ns + 30_000.0);
    // reads change no translation page: nothing is written back
    assert_eq!(c_all.map_writes, 0);
}

/// Random writes change translation pages: over a span the cache maps, nothing is read or
/// written back beyond the first loads (a fresh drive's pages are known to be empty and are not
/// even read); over the whole drive, dirty pages pushed out are programmed back, which raises
/// the write amplification and lowers the IOPS against the same drive with the map in DRAM.
#[test]
fn dirty_translation_pages_are_written_back() {
    let cache = 16 * 16384;
    let dram = drive(0);
    let small = drive(cache);
    let all = dram.user_capacity();
    let (_, fresh) = go(
        &mut sim(&small, Precondition::Fresh),
        OpKind::Write,
        128 * MIB,
        4096,
        32,
        0.3,
    );
    assert!(fresh.map_lookups > 0);
    assert_eq!(fresh.map_reads, 0, "an empty translation page is not read");
    assert_eq!(
        fresh.map_writes, 0,
        "nothing pushed out within the cached span"
    );
    let (r_all, c_all) = full(&small, OpKind::Write, all, 32, 1.0);
    let (r_dram, c_dram) = full(&dram, OpKind::Write, all, 32, 1.0);
    eprintln!(
        "QD 32 random writes over the whole drive: {:.0} IOPS, WA {:.2} ({} map reads, {} write-backs, {} erases) \
         against {:.0} IOPS, WA {:.2} with the map in DRAM",
        r_all.iops,
        c_all.write_amplification,
        c_all.map_reads,
        c_all.map_writes,
        c_all.map_erases,
        r_dram.iops,
        c_dram.write_amplification
    );
    assert!(c_all.map_writes > 0);
    // a write-back follows an eviction, which follows a miss (16 pages may be dirty at the start)
    assert!(c_all.map_writes <= c_all.map_misses + 16);
    assert!(c_all.write_amplification > c_dram.write_amplification);
    assert!(r_all.iops < r_dram.iops);
    // a translation block is erased at most once per write-back
    assert!(c_all.map_erases <= c_all.map_writes);
}

/// On a remapping drive the fragment table shares the controller memory with the cached map:
/// 512-byte-aligned random writes leave fragmented units whose entries push translation pages
/// out, so they miss more than 4 KiB-aligned writes over the same span (which the cache maps).
#[test]
fn fragments_push_translation_pages_out() {
    let mut cfg = preset("vertex-le-100g", 32);
    // 4 KiB pages: a translation page maps 4 MiB; 128 pages map 512 MiB
    cfg.set("controller.map_cache_bytes", &(128 * 4096).to_string())
        .unwrap();
    let span = 256 * MIB;
    let (_, aligned) = full(&cfg, OpKind::Write, span, 3, 1.0);
    let (_, unaligned) = go(
        &mut sim(&cfg, Precondition::Full),
        OpKind::Write,
        span,
        512,
        3,
        1.0,
    );
    eprintln!(
        "vertex-le 256 MiB span: 4 KiB-aligned {} misses of {} lookups, {} fragmented; \
         512-B-aligned {} of {}, {} fragmented",
        aligned.map_misses,
        aligned.map_lookups,
        aligned.fragmented_units,
        unaligned.map_misses,
        unaligned.map_lookups,
        unaligned.fragmented_units
    );
    assert_eq!(aligned.fragmented_units, 0);
    assert!(aligned.map_misses <= 64, "the cache maps the span");
    assert!(unaligned.fragmented_units > 0);
    assert!(unaligned.map_misses > 10 * aligned.map_misses.max(1));
}

/// A too-small cache is refused with the field named; 0 turns the cache off.
#[test]
fn map_cache_smaller_than_a_page_is_refused() {
    let mut c = preset("samsung-980pro-1t", 64);
    let e = c.set("controller.map_cache_bytes", "4096").unwrap_err();
    assert!(e.to_string().contains("controller.map_cache_bytes"), "{e}");
    c.set("controller.map_cache_bytes", "0").unwrap();
}

/// The tiny drive of the shadow tests with one cached translation page of its two: mixed
/// random reads and writes miss, load and write back, and the drive stays consistent.
#[test]
fn one_page_cache_on_the_tiny_drive_loads_and_writes_back() {
    let mut cfg = tiny(512, true, 32768, false);
    cfg.set("controller.map_cache_bytes", "4096").unwrap();
    let mut s = sim(&cfg, Precondition::Full);
    for kind in [OpKind::Write, OpKind::Read] {
        let (_, c) = go(&mut s, kind, cfg.user_capacity(), 512, 8, 0.2);
        eprintln!(
            "{kind:?}: {} lookups, {} misses, {} write-backs",
            c.map_lookups, c.map_misses, c.map_writes
        );
        assert!(c.map_misses > 0);
        if kind == OpKind::Write {
            assert!(c.map_writes > 0);
        }
    }
}

/// The Samsung 980, a DRAM-less NVMe drive whose 64 MB host memory buffer maps 64 GiB (scaled
/// 16×: 4 MiB mapping 4 GiB of a 62 GB drive): QD 1 random reads on a full drive run as with a
/// DRAM map within the span it maps, and slow down over the whole drive, where a read usually
/// waits for a translation page first — the working-set behaviour AnandTech showed for it.
#[test]
fn samsung_980_reads_slow_down_beyond_what_its_host_memory_buffer_maps() {
    let cfg = preset("samsung-980-1t", 16);
    assert_eq!(cfg.controller.map_cache_bytes, (64 << 20) / 16);
    let mut dram = cfg.clone();
    dram.set("controller.map_cache_bytes", "0").unwrap();
    let (r_in, c_in) = full(&cfg, OpKind::Read, 2048 * MIB, 1, 0.5);
    let (r_all, c_all) = full(&cfg, OpKind::Read, cfg.user_capacity(), 1, 0.5);
    let (r_dram, _) = full(&dram, OpKind::Read, cfg.user_capacity(), 1, 0.5);
    eprintln!(
        "samsung-980-1t/16 QD 1 random reads: 2 GiB span {:.0} IOPS ({} misses), whole drive {:.0} IOPS \
         ({} misses of {}), map in DRAM {:.0} IOPS",
        r_in.iops,
        c_in.map_misses,
        r_all.iops,
        c_all.map_misses,
        c_all.map_lookups,
        r_dram.iops
    );
    // within the mapped span: only the span's own pages are loaded (128 of 16 MiB)
    assert!(c_in.map_misses <= 128);
    assert!(r_in.iops > 0.9 * r_dram.iops);
    // over the whole drive most lookups miss and the reads are slower
    assert!(c_all.map_misses as f64 > 0.8 * c_all.map_lookups as f64);
    assert!(r_all.iops < 0.8 * r_in.iops);
}

/// Two reads of units in one translation page arrive together on a cold cache: the second
/// finds the page in the cache but still being read, and waits for it as the first does —
/// both take a translation-page read and a data read (two 45 µs array reads at least).
#[test]
fn a_read_of_a_page_still_loading_waits_for_it() {
    let cfg = drive(16 * 16384);
    let mut s = sim(&cfg, Precondition::Full);
    s.submit(0, 0, 0, HostCmd::read(0, 4096));
    s.submit(0, 1, 0, HostCmd::read(4096 * 1000, 4096));
    let mut done = Vec::new();
    while let Some((tag, t)) = s.next_completion() {
        done.push((tag, t));
    }
    s.check_invariants().unwrap();
    let c = s.counters()[0].clone();
    eprintln!("completions {done:?}, {} map reads", c.map_reads);
    assert_eq!(c.map_reads, 1, "one translation page, read once");
    assert_eq!(done.len(), 2);
    for (tag, t) in done {
        assert!(
            t >= 2 * 45_000,
            "read {tag} done at {t} ns without its translation page"
        );
    }
}
