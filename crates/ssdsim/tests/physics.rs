#![allow(clippy::manual_is_multiple_of)]
//! The physics of the model: write amplification of greedy GC against the analytic model,
//! read tails with program/erase suspend, what binds at each queue depth.
mod common;
use ssdlab_ssdsim::*;

/// A small drive for GC studies: 2 channels × 1 die × 2 planes × `bpp` blocks × `ppb` pages
/// of 4 KiB, 4 KiB mapping, fast controller; user capacity = raw / (1 + `op`).
fn gc_drive(op: f64, bpp: u32, ppb: u32, policy: &str) -> DriveConfig {
    let raw = 2u64 * 2 * bpp as u64 * ppb as u64 * 4096;
    let user = ((raw as f64 / (1.0 + op)) as u64) / 4096 * 4096;
    let text = format!(
        r#"
name = "gc-study"
[host]
interface = "nvme"
link_bytes_per_sec = 4000000000
cmd_overhead_ns = 0
queue_depth = 64
[controller]
fw_read_ns = 500
fw_write_ns = 500
fw_trim_ns = 500
cache_bytes = 1048576
coalesce_ns = 50000
[ftl]
user_capacity_bytes = {user}
mapping_unit = 4096
unaligned = "rmw"
gc_bg_free_blocks = 4
gc_fg_free_blocks = 2
copyback = true
gc_policy = "{policy}"
steady_overwrite = 1.0
[nand]
channels = 2
dies_per_channel = 1
planes_per_die = 2
blocks_per_plane = {bpp}
pages_per_block = {ppb}
page_bytes = 4096
bus_mt_s = 400
t_r_ns = 50000
t_prog_ns = 900000
t_bers_ns = 3000000
"#
    );
    DriveConfig::from_toml_str(&text).unwrap()
}

/// Closed-loop uniform random 4 KiB writes over the whole drive: `n` completions at QD `qd`.
fn random_writes(sim: &mut Simulator, units: u64, n: u64, qd: u64, x: &mut u64) {
    let next = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        (*x % units) * 4096
    };
    let t0 = sim.now();
    if sim.pending() == 0 {
        for tag in 0..qd {
            sim.submit(t0, tag, 0, HostCmd::write(next(x), 4096));
        }
    }
    for _ in 0..n {
        let (tag, t) = sim.next_completion().unwrap();
        sim.submit(t, tag, 0, HostCmd::write(next(x), 4096));
    }
}

/// The analytic write amplification of greedy GC under uniform random writes in the
/// large-block limit (Desnoyers, "Analytic models of SSD write performance", ACM TOS 2014;
/// greedy converges to LRW as blocks grow): the valid fraction `x` of a collected block solves
/// `x = exp(-(1 - x) / ρ)` with `ρ` = user data / physical space holding data, and
/// WA = 1 / (1 - x).
fn analytic_wa(rho: f64) -> f64 {
    let mut x = 0.5;
    for _ in 0..10_000 {
        x = (-(1.0 - x) / rho).exp();
    }
    1.0 / (1.0 - x)
}

#[test]
fn greedy_wa_matches_the_analytic_model() {
    for op in [0.07, 0.12, 0.28, 0.50] {
        let (bpp, ppb) = (128u32, 256u32);
        let cfg = gc_drive(op, bpp, ppb, "greedy");
        let mut sim = common::sim(&cfg, Precondition::Steady);
        let units = cfg.user_capacity() / 4096;
        let mut x = 0x1234_5678_9abc_def1u64;
        // reach the greedy steady state, then measure
        random_writes(&mut sim, units, 3 * units, 16, &mut x);
        sim.reset_counters();
        random_writes(&mut sim, units, 3 * units, 16, &mut x);
        let c = &sim.counters()[0];
        // physical space holding data: all blocks but the spare ones (free, being erased,
        // collected; time average) and the two partly written blocks per plane (host and GC
        // write points, half full on average)
        let planes = 2.0 * 2.0;
        let blocks = planes * bpp as f64;
        let held = (blocks - c.spare_blocks_mean - planes) * ppb as f64;
        let rho = units as f64 / held;
        let model = analytic_wa(rho);
        let wa = c.write_amplification;
        eprintln!(
            "OP {:.0} %: WA {wa:.3}, model {model:.3} (rho {rho:.4}, mean spare blocks {:.1}), {:+.1} %",
            op * 100.0,
            c.spare_blocks_mean,
            (wa / model - 1.0) * 100.0
        );
        assert!(
            (wa / model - 1.0).abs() < 0.03,
            "OP {op}: WA {wa:.3} vs model {model:.3}"
        );
        sim.check_invariants().unwrap();
    }
}

/// `steady` means steady: right after the untimed preconditioning (and the writes that use up
/// the background-GC reserve it leaves), random writes run at the write amplification greedy GC
/// converges to, not at a transient on the way there.
#[test]
fn steady_state_is_reached_by_the_untimed_fill() {
    for op in [0.07, 0.28] {
        let (bpp, ppb) = (128u32, 256u32);
        let mut cfg = gc_drive(op, bpp, ppb, "greedy");
        cfg.ftl.steady_overwrite = 4.0;
        let mut sim = common::sim(&cfg, Precondition::Steady);
        let (untimed_wa, written) = sim.steady_state()[0].expect("a steady drive");
        let units = cfg.user_capacity() / 4096;
        let mut x = 0x0bad_cafe_1234_5678u64;
        // the free blocks above the GC threshold that an idle drive keeps
        let reserve = (cfg.ftl.gc_bg_free_blocks as u64 + 2) * 4 * ppb as u64;
        random_writes(&mut sim, units, reserve, 16, &mut x);
        sim.reset_counters();
        random_writes(&mut sim, units, units / 8, 16, &mut x);
        let c = &sim.counters()[0];
        let planes = 4.0;
        let held = (planes * bpp as f64 - c.spare_blocks_mean - planes) * ppb as f64;
        let model = analytic_wa(units as f64 / held);
        let wa = c.write_amplification;
        eprintln!(
            "OP {:.0} %: untimed fill stopped at WA {untimed_wa:.3} after {written:.2} capacities; timed WA {wa:.3}, model {model:.3}",
            op * 100.0
        );
        assert!(
            (wa / model - 1.0).abs() < 0.05,
            "OP {op}: WA {wa:.3} vs {model:.3}"
        );
        assert!(written < 4.0, "the fill converged before its limit");
    }
}

/// The same on a preset's geometry (vertex450-128g, 1/4 of its blocks, its 7 % spare area):
/// stopping the overwrites when the free pool first reaches the GC threshold — where the
/// untimed fill used to stop — leaves a transient whose write amplification is well above the
/// converged one; the fill now goes on until it has converged.
#[test]
fn steady_state_of_a_preset_has_converged() {
    let base = load_preset("vertex450-128g").unwrap().scaled(4).unwrap();
    let run = |overwrite: f64| {
        let mut cfg = base.clone();
        cfg.ftl.steady_overwrite = overwrite;
        let mut sim = common::sim(&cfg, Precondition::Steady);
        let units = cfg.user_capacity() / 4096;
        let mut x = 0x5eed_u64;
        let g = &cfg.nand;
        let planes = (g.channels * g.dies_per_channel * g.planes_per_die) as u64;
        let reserve =
            (cfg.ftl.gc_bg_free_blocks as u64 + 2) * planes * g.pages_per_block as u64 * 2;
        random_writes(&mut sim, units, reserve, 32, &mut x);
        sim.reset_counters();
        random_writes(&mut sim, units, units / 20, 32, &mut x);
        (sim.counters()[0].write_amplification, sim.steady_state()[0])
    };
    // the free pool reaches the threshold after about the spare area's worth of overwrites
    let (transient, _) = run(0.06);
    let (steady, at) = run(2.0);
    let (untimed, written) = at.expect("converged");
    eprintln!(
        "stopped at the threshold: WA {transient:.2}; converged fill (WA {untimed:.2} after {written:.2} capacities): WA {steady:.2}"
    );
    assert!(written < 2.0);
    assert!(
        transient > 1.05 * steady,
        "the early stop should show the transient: {transient:.2} vs {steady:.2}"
    );
    assert!(
        (steady / untimed - 1.0).abs() < 0.1,
        "{steady:.2} vs {untimed:.2}"
    );
}

/// What a closed-loop run measured (virtual time).
#[derive(Debug, Default)]
struct Run {
    read_lat: Vec<u64>,
    write_lat: Vec<u64>,
    /// Completions per interval.
    per_interval: Vec<u64>,
    seconds: f64,
}

impl Run {
    fn pct(v: &mut [u64], p: f64) -> u64 {
        v.sort_unstable();
        if v.is_empty() {
            return 0;
        }
        v[((v.len() as f64 * p / 100.0) as usize).min(v.len() - 1)]
    }
    fn iops(&self) -> f64 {
        (self.read_lat.len() + self.write_lat.len()) as f64 / self.seconds
    }
}

/// A closed loop of `qd` commands on drive 0: `read_pct` % random reads, the rest writes, of
/// `bs` bytes at offsets aligned to `align` (+ `shift`) over `span`; measured for `secs` after
/// `warm` seconds, completions counted per `interval_ns`.
#[allow(clippy::too_many_arguments)]
fn closed_loop(
    sim: &mut Simulator,
    read_pct: u64,
    bs: u64,
    align: u64,
    shift: u64,
    span: u64,
    qd: u64,
    warm: f64,
    secs: f64,
    interval_ns: u64,
) -> Run {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let slots = (span - bs - shift) / align + 1;
    let t0 = sim.now();
    let from = t0 + (warm * 1e9) as u64;
    let stop = from + (secs * 1e9) as u64;
    let mut issued = vec![(t0, false); qd as usize];
    let cmd = |rnd: &mut dyn FnMut() -> u64| {
        let r = rnd();
        let off = (r >> 8) % slots * align + shift;
        if r % 100 < read_pct {
            (HostCmd::read(off, bs), true)
        } else {
            (HostCmd::write(off, bs), false)
        }
    };
    for tag in 0..qd {
        let (c, rd) = cmd(&mut rnd);
        issued[tag as usize] = (t0, rd);
        sim.submit(t0, tag, 0, c);
    }
    if sim.pending() > 0 {
        sim.reset_counters();
    }
    let mut run = Run {
        per_interval: vec![0; ((stop - from) / interval_ns) as usize + 1],
        seconds: secs,
        ..Run::default()
    };
    let mut reset = false;
    while let Some((tag, t)) = sim.next_completion() {
        if !reset && t >= from {
            sim.reset_counters();
            reset = true;
        }
        let (st, rd) = issued[tag as usize];
        if t >= from && t < stop {
            if rd {
                run.read_lat.push(t - st);
            } else {
                run.write_lat.push(t - st);
            }
            run.per_interval[((t - from) / interval_ns) as usize] += 1;
        }
        if t < stop {
            let (c, rd) = cmd(&mut rnd);
            issued[tag as usize] = (t, rd);
            sim.submit(t, tag, 0, c);
        }
    }
    run.per_interval.pop();
    run
}

/// Reads under a GC-heavy read/write mix: with program/erase suspend a read waits for at most
/// a suspend, not for a whole program or erase, so its tail stays far below one program or
/// erase time; without suspend the tail is set by programs and erases.
#[test]
fn read_tails_with_suspend_are_bounded() {
    let base = common::preset("vertex450-128g", 32);
    let mut p999 = vec![];
    for suspend in [false, true] {
        let mut cfg = base.clone();
        cfg.set("nand.program_suspend", &suspend.to_string())
            .unwrap();
        cfg.set("nand.erase_suspend", &suspend.to_string()).unwrap();
        let mut sim = common::sim(&cfg, Precondition::Steady);
        let span = cfg.user_capacity();
        let mut r = closed_loop(
            &mut sim,
            70,
            4096,
            4096,
            0,
            span,
            4,
            2.0,
            6.0,
            1_000_000_000,
        );
        let c = &sim.counters()[0];
        let (p99, p, max) = (
            Run::pct(&mut r.read_lat, 99.0),
            Run::pct(&mut r.read_lat, 99.9),
            Run::pct(&mut r.read_lat, 100.0),
        );
        eprintln!(
            "suspend {suspend}: {:.0} IOPS, read p99 {p99} p99.9 {p} max {max} ns; suspends {}/{}, gc {} WA {:.2}",
            r.iops(),
            c.program_suspends,
            c.erase_suspends,
            c.gc_runs,
            c.write_amplification
        );
        assert!(c.gc_runs > 0, "GC must run in this test");
        if suspend {
            assert!(c.program_suspends + c.erase_suspends > 0);
        }
        p999.push(p);
        sim.check_invariants().unwrap();
    }
    let n = &base.nand;
    let longest = n.t_bers_ns.max(n.t_prog_upper_ns).max(n.t_prog_ns);
    assert!(
        p999[1] < longest,
        "with suspend, read p99.9 {} ns is not below one program/erase ({longest} ns)",
        p999[1]
    );
    assert!(
        p999[1] < p999[0],
        "suspend must shorten the read tail: {} vs {} ns",
        p999[1],
        p999[0]
    );
}
