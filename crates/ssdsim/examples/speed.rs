//! Speed probe: `speed [PRESET] [fresh|full|steady]` runs 3 minutes of virtual time of 4 KiB
//! random writes, QD 3, 8 GiB span, and prints wall time, requests/s and the counters.
use ssdlab_ssdsim::loadgen::{run, Pattern, Workload};
use ssdlab_ssdsim::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let preset = args.get(1).map(|s| s.as_str()).unwrap_or("vertex450-128g");
    let pre: Precondition = args
        .get(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(Precondition::Fresh);
    let cfg = load_preset(preset).unwrap();
    let t0 = std::time::Instant::now();
    let mut sim = Simulator::new(&cfg, 1, &AdapterConfig::passthrough(), pre, 1).unwrap();
    eprintln!("precondition {:?}: {:?}", pre, t0.elapsed());
    let mut w = Workload::new(OpKind::Write, Pattern::Random, 4096, 8 << 30, 3);
    w.duration_ns = 180_000_000_000;
    let t0 = std::time::Instant::now();
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
