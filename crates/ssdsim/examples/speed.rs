//! Speed probe, two jobs:
//!
//! - `speed [PRESET] [fresh|full|steady]`: 3 minutes of virtual time of 4 KiB random writes,
//!   QD 3, 8 GiB span; prints wall time, requests/s and the counters.
//! - `speed requests [N] [PRESET]`: the job used to compare with MQSim: N (default 2,000,000)
//!   4 KiB random writes at QD 32 over the whole user capacity of a fresh drive with the pSLC
//!   region off; prints the set-up time and the simulated requests per second of wall time.
use ssdlab_ssdsim::loadgen::{run, Access, Workload};
use ssdlab_ssdsim::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(|s| s.as_str()) == Some("requests") {
        let n: u64 = args.get(2).map_or(2_000_000, |s| s.parse().unwrap());
        let preset = args.get(3).map_or("vertex450-128g", |s| s.as_str());
        requests(n, preset);
        return;
    }
    let preset = args.get(1).map(|s| s.as_str()).unwrap_or("vertex450-128g");
    let pre: Precondition = args
        .get(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(Precondition::Fresh);
    let cfg = load_preset(preset).unwrap();
    let t0 = Instant::now();
    let mut sim = Simulator::new(&cfg, 1, &AdapterConfig::passthrough(), pre, 1).unwrap();
    eprintln!("precondition {:?}: {:?}", pre, t0.elapsed());
    let mut w = Workload::new(OpKind::Write, Access::Random, 4096, 8 << 30, 3);
    w.duration_ns = 180_000_000_000;
    let t0 = Instant::now();
    let r = run(&mut sim, 0, &w, 0);
    let el = t0.elapsed();
    eprintln!(
        "{:?} wall {:?} -> {:.0} req/s",
        r,
        el,
        r.total_ios as f64 / el.as_secs_f64()
    );
    eprintln!(
        "{}",
        serde_json::to_string(&sim.counters()[0])
            .unwrap()
            .chars()
            .take(1500)
            .collect::<String>()
    );
}

/// `n` closed-loop 4 KiB random writes at QD 32 over the whole drive (fresh, pSLC off).
fn requests(n: u64, preset: &str) {
    const QD: u64 = 32;
    let mut cfg = load_preset(preset).unwrap();
    cfg.set("ftl.pslc_bytes", "0").unwrap();
    let units = cfg.user_capacity() / 4096;
    let t0 = Instant::now();
    let mut sim = Simulator::new(
        &cfg,
        1,
        &AdapterConfig::passthrough(),
        Precondition::Fresh,
        1,
    )
    .unwrap();
    let setup = t0.elapsed();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % units) * 4096
    };
    let t0 = Instant::now();
    for tag in 0..QD.min(n) {
        sim.submit(0, tag, 0, HostCmd::write(next(), 4096));
    }
    let mut issued = QD.min(n);
    let (mut done, mut end) = (0u64, 0u64);
    while let Some((tag, t)) = sim.next_completion() {
        (done, end) = (done + 1, t);
        if issued < n {
            sim.submit(t, tag, 0, HostCmd::write(next(), 4096));
            issued += 1;
        }
    }
    let el = t0.elapsed();
    let c = &sim.counters()[0];
    println!(
        "{preset}, pSLC off, fresh: {done} 4 KiB random writes at QD {QD} in {:.3} s wall \
         ({:.2}M requests/s; drive set-up {:.3} s); {:.1} s simulated, {:.0} IOPS, WA {:.2}",
        el.as_secs_f64(),
        done as f64 / el.as_secs_f64() / 1e6,
        setup.as_secs_f64(),
        end as f64 / 1e9,
        done as f64 / (end as f64 / 1e9),
        c.write_amplification
    );
}
