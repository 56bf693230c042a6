//! Physics fingerprint: runs a fixed set of jobs over every preset and prints, per job, a hash
//! of every completion (tag and time, in delivery order) and a hash of the drive counters.
//! Two builds that print the same lines simulate the same events in the same order; used to
//! check that speed work leaves the physics unchanged (`fingerprint > a.txt`, diff).
//!
//! `fingerprint [SCALE]`: SCALE (default 1) multiplies the number of requests per job.
use ssdlab_ssdsim::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn hmix(h: &mut u64, v: u64) {
    *h = (*h ^ v).wrapping_mul(0x0100_0000_01b3).rotate_left(17);
}

/// Kinds of request mixes.
#[derive(Clone, Copy, Debug)]
enum Mix {
    /// 4 KiB random writes, aligned.
    RandWrite,
    /// Random reads and writes (70/30), 4–64 KiB, some trims.
    Mixed,
    /// 512-byte-aligned writes of odd sizes (read-modify-write, partial units).
    Unaligned,
    /// Sequential 128 KiB writes then reads.
    Seq,
}

#[allow(clippy::too_many_arguments)]
fn job(
    name: &str,
    preset: &str,
    pre: Precondition,
    mix: Mix,
    qd: u64,
    n: u64,
    drives: usize,
    tweak: &[(&str, &str)],
) {
    let mut cfg = load_preset(preset).unwrap();
    for (k, v) in tweak {
        cfg.set(k, v).unwrap();
    }
    let cap = cfg.user_capacity();
    let span = (cap / 4).max(1 << 30).min(cap) & !((1 << 20) - 1);
    let adapter = AdapterConfig::passthrough();
    let mut sim = Simulator::new(&cfg, drives, &adapter, pre, 7).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n);
    let mut seq_off = 0u64;
    let mut count = 0u64;
    let mut gen = |rng: &mut Rng| -> HostCmd {
        count += 1;
        match mix {
            Mix::RandWrite => HostCmd::write((rng.next() % (span / 4096)) * 4096, 4096),
            Mix::Mixed => {
                let r = rng.next();
                let bs = 4096u64 << (r % 5);
                let off = ((r >> 8) % (span / bs)) * bs;
                match (r >> 40) % 20 {
                    0 => HostCmd::trim(off, bs),
                    1..=13 => HostCmd::read(off, bs),
                    _ => HostCmd::write(off, bs),
                }
            }
            Mix::Unaligned => {
                let r = rng.next();
                let len = 512 * (1 + r % 24);
                let off = ((r >> 8) % (span / 512 - 64)) * 512;
                if (r >> 50).is_multiple_of(4) {
                    HostCmd::read(off, len)
                } else {
                    HostCmd::write(off, len)
                }
            }
            Mix::Seq => {
                let bs = 128 << 10;
                let off = seq_off % span;
                seq_off += bs;
                if count * 2 < n {
                    HostCmd::write(off, bs)
                } else {
                    HostCmd::read(off, bs)
                }
            }
        }
    };
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut issued = 0;
    for tag in 0..qd.min(n) {
        let d = (tag as usize) % drives;
        sim.submit(0, tag, d, gen(&mut rng));
        issued += 1;
    }
    let mut done = 0u64;
    let mut end = 0;
    while let Some((tag, t)) = sim.next_completion() {
        hmix(&mut h, tag);
        hmix(&mut h, t);
        done += 1;
        end = t;
        if done == n / 2 {
            sim.reset_counters();
        }
        if issued < n {
            let d = (rng.next() as usize) % drives;
            sim.submit(t, tag, d, gen(&mut rng));
            issued += 1;
        }
    }
    let idle = sim.run_until_idle();
    let mut hc = 0xcbf2_9ce4_8422_2325u64;
    let js = serde_json::to_string(&sim.counters()).unwrap();
    for b in js.bytes() {
        hmix(&mut hc, b as u64);
    }
    let c = &sim.counters()[0];
    println!(
        "{name:<28} {preset:<22} {done:>8} done end {end:>14} idle {idle:>14} completions {h:016x} \
         counters {hc:016x} WA {:.4} gc_pages {} suspends {}/{}",
        c.write_amplification, c.gc_pages_moved, c.program_suspends, c.erase_suspends
    );
}

fn main() {
    let scale: u64 = std::env::args().nth(1).map_or(1, |s| s.parse().unwrap());
    let k = 20_000 * scale;
    job(
        "randwrite-fresh-noslc-qd32",
        "vertex450-128g",
        Precondition::Fresh,
        Mix::RandWrite,
        32,
        10 * k,
        1,
        &[("ftl.pslc_bytes", "0")],
    );
    let v = "vertex450-128g";
    let suspend: &[(&str, &str)] = &[
        ("nand.program_suspend", "true"),
        ("nand.erase_suspend", "true"),
        ("nand.t_suspend_ns", "20000"),
        ("nand.t_resume_ns", "10000"),
        ("nand.max_suspends", "3"),
    ];
    let st = Precondition::Steady;
    job("mixed-steady-suspend", v, st, Mix::Mixed, 16, k, 1, suspend);
    job(
        "unaligned-full-suspend",
        v,
        Precondition::Full,
        Mix::Unaligned,
        8,
        k,
        1,
        suspend,
    );
    let fifo: &[(&str, &str)] = &[("sched.read_priority", "false")];
    job("mixed-steady-fifo", v, st, Mix::Mixed, 16, k, 1, fifo);
    let wt: &[(&str, &str)] = &[("controller.cache_bytes", "0")];
    job("mixed-steady-writethrough", v, st, Mix::Mixed, 16, k, 1, wt);
    job(
        "unaligned-full-writethrough",
        v,
        Precondition::Full,
        Mix::Unaligned,
        8,
        k,
        1,
        wt,
    );
    let comp: &[(&str, &str)] = &[("controller.compression", "true")];
    job("mixed-steady-compress", v, st, Mix::Mixed, 16, k, 1, comp);
    let remap: &[(&str, &str)] = &[("ftl.unaligned", "remap")];
    job(
        "unaligned-full-remap",
        v,
        Precondition::Full,
        Mix::Unaligned,
        8,
        k,
        1,
        remap,
    );
    let onep: &[(&str, &str)] = &[("nand.multi_plane", "false")];
    job(
        "mixed-steady-no-multiplane",
        v,
        st,
        Mix::Mixed,
        16,
        k,
        1,
        onep,
    );
    for p in preset_names() {
        job(
            "randwrite-steady-qd8",
            p,
            Precondition::Steady,
            Mix::RandWrite,
            8,
            2 * k,
            1,
            &[],
        );
        job(
            "mixed-steady-qd16",
            p,
            Precondition::Steady,
            Mix::Mixed,
            16,
            k,
            1,
            &[],
        );
        job(
            "unaligned-full-qd4",
            p,
            Precondition::Full,
            Mix::Unaligned,
            4,
            k,
            1,
            &[],
        );
        job(
            "seq-fresh-qd2",
            p,
            Precondition::Fresh,
            Mix::Seq,
            2,
            k / 2,
            1,
            &[],
        );
        job(
            "mixed-steady-2drives-qd32",
            p,
            Precondition::Steady,
            Mix::Mixed,
            32,
            k,
            2,
            &[],
        );
    }
}
