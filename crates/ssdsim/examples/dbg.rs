use ssdlab_ssdsim::loadgen::{run, Pattern, Workload};
use ssdlab_ssdsim::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg = load_preset(&args[1])
        .unwrap()
        .scaled(args[2].parse().unwrap())
        .unwrap();
    let pre: Precondition = args[3].parse().unwrap();
    let mut sim = Simulator::new(&cfg, 1, &AdapterConfig::passthrough(), pre, 1).unwrap();
    println!("user {} raw {}", cfg.user_capacity(), cfg.raw_capacity());
    println!("{}", serde_json::to_string(&sim.counters()[0]).unwrap());
    let mut w = Workload::new(
        OpKind::Write,
        Pattern::Random,
        4096,
        cfg.user_capacity(),
        32,
    );
    w.nand_fraction = std::env::args()
        .nth(5)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1.0);
    w.duration_ns = std::env::args()
        .nth(4)
        .map(|s| s.parse().unwrap())
        .unwrap_or(200_000_000);
    let r = run(&mut sim, 0, &w, 0);
    println!("{r:?}");
    let mut c = sim.counters()[0].clone();
    c.per_die_busy_ns.clear();
    println!("{}", serde_json::to_string(&c).unwrap());
    sim.check_invariants().unwrap();
}
