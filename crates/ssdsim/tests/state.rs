//! Saved drive state: a simulator saved mid-run and loaded again continues exactly like the
//! one that was never saved; files for another drive, corrupt or truncated files are refused.
use ssdlab_ssdsim::*;

/// A closed loop of `ops` completions on `sim`, resubmitting a mixed command for each (random
/// writes on a small span, some reads, trims and unaligned writes); returns every completion.
fn run(sim: &mut Simulator, ops: u64, span_units: u64, x: &mut u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for _ in 0..ops {
        let (tag, t) = sim.next_completion().expect("a command is outstanding");
        out.push((tag, t));
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let off = (*x >> 16) % span_units * 4096 + if (*x).is_multiple_of(7) { 512 } else { 0 };
        let cmd = match *x % 32 {
            0..=3 => HostCmd::read(off, 8192),
            4 => HostCmd::trim(off, 8192),
            _ => HostCmd {
                kind: OpKind::Write,
                offset: off,
                len: 4096 * (1 + (*x >> 60) % 4),
                nand_fraction: 0.5,
                queue: 0,
            },
        };
        let n = sim.drives() as u64;
        sim.submit(t, tag, (tag % n) as usize, cmd);
    }
    out
}

fn start(sim: &mut Simulator, qd: u64) {
    let n = sim.drives() as u64;
    for tag in 0..qd {
        sim.submit(
            0,
            tag,
            (tag % n) as usize,
            HostCmd::write(tag * 65536, 65536),
        );
    }
}

fn finish(sim: &mut Simulator) -> String {
    while sim.next_completion().is_some() {}
    let idle = sim.run_until_idle();
    sim.check_invariants().expect("FTL consistent");
    format!(
        "{idle} {} {:?}",
        serde_json::to_string(&sim.counters()).unwrap(),
        sim.write_cache_counters()
    )
}

fn save(sim: &Simulator, cfg: &DriveConfig, extra: &StateExtra) -> Vec<u8> {
    let mut buf = Vec::new();
    sim.save_state(&mut buf, cfg, extra).unwrap();
    buf
}

struct Case {
    cfg: DriveConfig,
    drives: usize,
    adapter: AdapterConfig,
    tracking: bool,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (name, drives, tracking) in [
        ("vertex450-128g", 1, false),
        ("x25m-g2-160g", 2, false),
        ("vertex-le-100g", 1, true),
        ("c300-256g", 1, true),
        // the hybrid log-block scheme: log blocks, merge jobs and a running merge carried
        ("vertex-barefoot-120g", 1, true),
    ] {
        let mut cfg = load_preset(name).unwrap().scaled(64).unwrap();
        if name == "vertex-le-100g" {
            // a cached mapping table (32 translation pages of the span's ~95) beside fragments:
            // loads, write-backs and the order of the cached pages are carried too
            cfg.set("controller.map_cache_bytes", "131072").unwrap();
        }
        v.push(Case {
            cfg,
            drives,
            adapter: if drives > 1 {
                AdapterConfig {
                    uplink_bytes_per_sec: Some(1_600_000_000),
                    per_request_overhead_ns: 500,
                    trim_passthrough: false,
                    // the RAID driver's cache, with dirty data in flight at the save
                    write_cache: Some(ssdlab_ssdsim::WriteCacheConfig::with_size(1 << 20)),
                    host: Default::default(),
                }
            } else {
                AdapterConfig::passthrough()
            },
            tracking,
        });
    }
    v
}

fn build(c: &Case) -> Simulator {
    if c.tracking {
        Simulator::with_tracking(&c.cfg, c.drives, &c.adapter, Precondition::Steady, 3).unwrap()
    } else {
        Simulator::new(&c.cfg, c.drives, &c.adapter, Precondition::Steady, 3).unwrap()
    }
}

fn load(c: &Case, bytes: &[u8]) -> Result<(Simulator, u64), StateError> {
    Simulator::load_state(bytes, &c.cfg, c.drives, &c.adapter, c.tracking, &[])
}

/// Saved in the middle of a write-heavy run on a full drive (GC running, page groups buffered,
/// commands in flight), loaded, and continued: every completion, the counters and the data
/// versions equal those of the same run never saved.
#[test]
fn loaded_state_continues_exactly() {
    for c in cases() {
        let span = c.cfg.user_capacity() / 4096 / 8;
        let mut a = build(&c);
        start(&mut a, 32);
        let mut x = 11u64;
        // on until GC (or a hybrid drive's merges) moves data (a deterministic point: the same
        // for every run)
        let gc = |a: &Simulator| {
            a.counters()
                .iter()
                .map(|c| c.gc_pages_moved + c.hybrid.map_or(0, |h| h.merge_pages))
                .sum::<u64>()
        };
        for _ in 0..100 {
            run(&mut a, 5_000, span, &mut x);
            if gc(&a) > 0 {
                break;
            }
        }
        run(&mut a, 3_000, span, &mut x);
        assert!(
            a.pending() > 0,
            "{}: commands in flight at the save",
            c.cfg.name
        );
        let gc_before = gc(&a);
        if let Some(w) = a.write_cache_counters() {
            assert!(
                w.absorbed_bytes > w.flushed_bytes,
                "dirty data in the cache at the save"
            );
        }
        assert!(
            gc_before > 0,
            "{}: GC has run before the save: {}",
            c.cfg.name,
            serde_json::to_string(&a.counters()).unwrap()
        );
        let bytes = save(&a, &c.cfg, &StateExtra::default());
        let (mut b, clock) = load(&c, &bytes).unwrap();
        assert_eq!(clock, 0);
        assert_eq!(b.now(), a.now());
        let mut xb = x;
        let ra = run(&mut a, 20_000, span, &mut x);
        let rb = run(&mut b, 20_000, span, &mut xb);
        assert_eq!(ra, rb, "{}: completions after the load", c.cfg.name);
        assert_eq!(finish(&mut a), finish(&mut b), "{}", c.cfg.name);
        if c.tracking {
            let sectors = c.cfg.user_capacity() / 512;
            for s in (0..sectors).step_by(37) {
                assert_eq!(a.read_version(0, s), b.read_version(0, s));
            }
            assert_eq!(a.write_count(0), b.write_count(0));
        }
        // saving the loaded simulator gives the same bytes as saving the original
        assert_eq!(
            save(&a, &c.cfg, &StateExtra::default()),
            save(&b, &c.cfg, &StateExtra::default())
        );
    }
}

/// A steady-state drive loaded from its file runs like the drive it was saved from.
#[test]
fn steady_state_round_trip() {
    let cfg = load_preset("vertex450-128g").unwrap().scaled(32).unwrap();
    let ad = AdapterConfig::passthrough();
    let a0 = Simulator::new(&cfg, 1, &ad, Precondition::Steady, 9).unwrap();
    let bytes = save(&a0, &cfg, &StateExtra::default());
    let (mut b, _) = Simulator::load_state(&bytes[..], &cfg, 1, &ad, false, &[]).unwrap();
    let mut a = a0.clone();
    let span = cfg.user_capacity() / 4096;
    start(&mut a, 16);
    start(&mut b, 16);
    let (mut x, mut y) = (5u64, 5u64);
    assert_eq!(
        run(&mut a, 20_000, span, &mut x),
        run(&mut b, 20_000, span, &mut y)
    );
    assert_eq!(finish(&mut a), finish(&mut b));
}

/// A fresh drive's tables are never written: the file stays small.
#[test]
fn fresh_drive_file_is_small() {
    let cfg = load_preset("vertex450-128g").unwrap();
    let ad = AdapterConfig::passthrough();
    let sim = Simulator::new(&cfg, 1, &ad, Precondition::Fresh, 1).unwrap();
    let bytes = save(&sim, &cfg, &StateExtra::default());
    assert!(bytes.len() < 8 << 20, "{} bytes", bytes.len());
    assert!(Simulator::load_state(&bytes[..], &cfg, 1, &ad, false, &[]).is_ok());
}

/// Only the chunks a run wrote are saved: writes to a small region of a large drive add about
/// that region's chunks of the map to the file, and the loaded drive continues exactly.
#[test]
fn partly_written_drive_saves_only_its_chunks() {
    let cfg = load_preset("vertex450-128g").unwrap();
    let ad = AdapterConfig::passthrough();
    let mut sim = Simulator::new(&cfg, 1, &ad, Precondition::Fresh, 1).unwrap();
    let fresh = save(&sim, &cfg, &StateExtra::default()).len();
    start(&mut sim, 8);
    let mut x = 1;
    // 2,000 random writes into 64 MiB (16 Ki units: one 64 KiB chunk of the map)
    run(&mut sim, 2_000, 16 << 10, &mut x);
    let bytes = save(&sim, &cfg, &StateExtra::default());
    let grew = bytes.len() - fresh;
    assert!(
        grew < 3 * (64 << 10),
        "a 64 MiB region added {grew} bytes to the file"
    );
    let (mut b, _) = Simulator::load_state(&bytes[..], &cfg, 1, &ad, false, &[]).unwrap();
    let (ra, rb) = (
        run(&mut sim, 3_000, 16 << 10, &mut x.clone()),
        run(&mut b, 3_000, 16 << 10, &mut x),
    );
    assert_eq!(ra, rb);
    assert_eq!(finish(&mut sim), finish(&mut b));
}

fn err(r: Result<(Simulator, u64), StateError>) -> String {
    match r {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn mismatches_are_refused_naming_what_differs() {
    let c = &cases()[0];
    let mut a = build(c);
    start(&mut a, 8);
    let extra = StateExtra {
        facts: vec![("stripe".into(), "64 KiB".into())],
        clock: 77,
    };
    let bytes = save(&a, &c.cfg, &extra);
    let ad = &c.adapter;
    let facts = extra.facts.clone();
    let (_, clock) = Simulator::load_state(&bytes[..], &c.cfg, 1, ad, false, &facts).unwrap();
    assert_eq!(clock, 77);

    let other = load_preset("c300-256g").unwrap().scaled(64).unwrap();
    let e = err(Simulator::load_state(
        &bytes[..],
        &other,
        1,
        ad,
        false,
        &facts,
    ));
    assert!(
        e.contains("saved from vertex450-128g/64") && e.contains("simulates c300-256g/64"),
        "{e}"
    );
    let e = err(Simulator::load_state(
        &bytes[..],
        &c.cfg,
        2,
        ad,
        false,
        &facts,
    ));
    assert!(e.contains("holds 1 drive, this run simulates 2"), "{e}");
    let mut set = c.cfg.clone();
    set.set("ftl.gc_policy", "cost-benefit").unwrap();
    let e = err(Simulator::load_state(
        &bytes[..],
        &set,
        1,
        ad,
        false,
        &facts,
    ));
    assert!(e.contains("ftl.gc_policy"), "{e}");
    let e = err(Simulator::load_state(
        &bytes[..],
        &c.cfg,
        1,
        ad,
        true,
        &facts,
    ));
    assert!(e.contains("tracking"), "{e}");
    let slow = AdapterConfig {
        per_request_overhead_ns: 10,
        ..ad.clone()
    };
    let e = err(Simulator::load_state(
        &bytes[..],
        &c.cfg,
        1,
        &slow,
        false,
        &facts,
    ));
    assert!(
        e.contains("another host adapter: per_request_overhead_ns (saved 0, now 10)"),
        "{e}"
    );
    let f2 = vec![("stripe".to_string(), "128 KiB".to_string())];
    let e = err(Simulator::load_state(&bytes[..], &c.cfg, 1, ad, false, &f2));
    assert!(
        e.contains("saved with stripe 64 KiB, this run has stripe 128 KiB"),
        "{e}"
    );
    let e = err(Simulator::load_state(&bytes[..], &c.cfg, 1, ad, false, &[]));
    assert!(e.contains("stripe"), "{e}");
    // saving with a configuration the drives were not built from is refused
    let mut buf = Vec::new();
    assert!(a.save_state(&mut buf, &other, &extra).is_err());
}

#[test]
fn corrupt_and_truncated_files_are_errors() {
    let c = &cases()[1];
    let mut a = build(c);
    start(&mut a, 32);
    let mut x = 1;
    run(&mut a, 5_000, c.cfg.user_capacity() / 4096 / 4, &mut x);
    let bytes = save(&a, &c.cfg, &StateExtra::default());
    assert!(load(c, &bytes).is_ok());
    assert_eq!(err(load(c, b"")), "not an ssdlab drive state file");
    assert_eq!(
        err(load(c, b"{\"json\": 1}")),
        "not an ssdlab drive state file"
    );
    let mut v = bytes.clone();
    v[8] = 9;
    assert!(err(load(c, &v)).contains("version 9"));
    // the format before the hybrid scheme's tables is refused by its number
    v[8] = 6;
    let e = err(load(c, &v));
    assert!(
        e.contains("version 6") && e.contains(&format!("reads version {STATE_VERSION}")),
        "{e}"
    );
    // every cut is an error
    let step = (bytes.len() / 300).max(1);
    for n in (0..bytes.len()).step_by(step).chain([bytes.len() - 1]) {
        let e = err(load(c, &bytes[..n]));
        assert!(
            e.contains("truncated") || e.contains("not an ssdlab") || e.contains("corrupt"),
            "cut at {n}: {e}"
        );
    }
    // every flipped byte is an error
    for i in (0..bytes.len()).step_by(step) {
        let mut v = bytes.clone();
        v[i] ^= 0x5a;
        let e = err(load(c, &v));
        assert!(!e.is_empty());
    }
    let mut v = bytes.clone();
    v.push(0);
    assert!(err(load(c, &v)).contains("after the end"));
}

/// A drive filled by `--state full` holds no reverse map until garbage collection first starts
/// (it is built from the forward map then); the same drive saved and loaded has it built at the
/// load. Both run a write-heavy mix through garbage collection to the same completions and
/// counters. The Samsung 980's dynamic SLC cache passes over every block of the drive during
/// the fill, folding as it goes: the parts of the reverse map its SLC blocks kept are given
/// back with the blocks, so its filled drive holds about half the table (the most its cache
/// spanned at once), not all of it.
#[test]
fn a_full_drive_builds_its_reverse_map_when_gc_starts() {
    let slc = Case {
        cfg: load_preset("samsung-980-1t").unwrap().scaled(16).unwrap(),
        drives: 1,
        adapter: AdapterConfig::passthrough(),
        tracking: false,
    };
    for mut c in cases()
        .into_iter()
        // the page-mapped drives without a version table (those with one have 28 % spare area or
        // more and collect only after minutes of writing here)
        .filter(|c| !c.tracking)
        .chain([slc])
    {
        // an eighth of the drive, not a 64th: tables of several 2 MiB slabs
        let name = c.cfg.name.split('/').next().unwrap().to_string();
        let slc = name == "samsung-980-1t";
        if !slc {
            c.cfg = load_preset(&name).unwrap().scaled(8).unwrap();
        }
        let build = |pre| {
            if c.tracking {
                Simulator::with_tracking(&c.cfg, c.drives, &c.adapter, pre, 3).unwrap()
            } else {
                Simulator::new(&c.cfg, c.drives, &c.adapter, pre, 3).unwrap()
            }
        };
        let mut a = build(Precondition::Full);
        let bytes = save(&a, &c.cfg, &StateExtra::default());
        let (mut b, _) = load(&c, &bytes).unwrap();
        // the filled drive: a forward-map entry per unit, no reverse map yet
        let units = c.cfg.user_capacity() / c.cfg.ftl.mapping_unit * c.drives as u64;
        assert!(
            a.table_bytes() + 2 * units < b.table_bytes() && b.table_bytes() >= 2 * 4 * units,
            "{}: {} bytes of tables filled, {} loaded",
            c.cfg.name,
            a.table_bytes(),
            b.table_bytes()
        );
        // what building it will add, as the memory estimates of a writing run count it: the
        // loaded drive has it built (the SLC drive holds the chunks its cache spanned at most at
        // once during the fill: about half the table)
        let pending = a.reverse_map_pending_bytes();
        assert!(
            pending >= if slc { 2 } else { 3 } * units && b.reverse_map_pending_bytes() == 0,
            "{}: {pending} bytes of reverse map to build, {} loaded",
            c.cfg.name,
            b.reverse_map_pending_bytes()
        );
        // unbuilt, every unit in a block that keeps its entries reverse-maps to it (none of
        // them lost with a chunk given back)
        a.check_invariants().expect("FTL consistent after the fill");
        let filled = a.table_bytes();
        let span = c.cfg.user_capacity() / 4096;
        start(&mut a, 32);
        start(&mut b, 32);
        let (mut xa, mut xb) = (5u64, 5u64);
        // (a full SLC drive has no room left for its cache: it collects garbage once its
        // spare blocks are written, after a few GB here)
        let ops = if slc { 800_000 } else { 300_000 };
        let ra = run(&mut a, ops, span, &mut xa);
        let rb = run(&mut b, ops, span, &mut xb);
        assert!(
            a.counters().iter().map(|c| c.gc_pages_moved).sum::<u64>() > 0,
            "{}: GC has run",
            c.cfg.name
        );
        assert_eq!(a.reverse_map_pending_bytes(), 0, "{}: built", c.cfg.name);
        assert!(
            a.table_bytes() >= filled + pending,
            "{}: the built map takes what was pending",
            c.cfg.name
        );
        assert_eq!(ra, rb, "{}: completions", c.cfg.name);
        assert_eq!(finish(&mut a), finish(&mut b), "{}", c.cfg.name);
    }
}
