//! The simulator's fingerprint: a few short simulated runs summed up in lines (I/Os, IOPS,
//! latencies, write amplification, what limits each drive). Simulation is deterministic, so any
//! change to the model shows here — and only here: the exporters' snapshots are made from a
//! hand-built result (`tests/exporters.rs`). A model change that moves these lines on purpose
//! re-blesses this one snapshot (`cargo insta review`, or INSTA_UPDATE=always), and its commit
//! says why the figures moved.

use ssdlab_engine::{run_sim, SimOptions, SimTarget};
use ssdlab_stats::{OpSummary, RunResult};
use ssdlab_workload::{Pattern, RwMode, StopCondition, WorkloadSpec};

fn spec(
    rw: RwMode,
    read_pct: u8,
    bs: u64,
    align: u64,
    qd: u32,
    jobs: u32,
    ms: u64,
) -> WorkloadSpec {
    WorkloadSpec {
        rw,
        read_pct,
        random_pct: 100,
        bs,
        align,
        offset: 0,
        span: Some(64 << 20),
        qd,
        jobs,
        stop: StopCondition {
            time_ns: Some(ms * 1_000_000),
            ios: None,
            bytes: None,
        },
        ramp_ns: 0,
        pattern: Pattern::Random,
        seed: 7,
        verify: false,
        ..Default::default()
    }
}

fn target(preset: &str, drives: usize, state: &str) -> SimTarget {
    SimTarget {
        name: preset.into(),
        drive: ssdlab_ssdsim::load_preset(preset).unwrap(),
        drives,
        stripe: (drives > 1).then_some(16 << 10),
        adapter: ssdlab_ssdsim::AdapterConfig::passthrough(),
        state: state.parse().unwrap(),
    }
}

fn kind_line(name: &str, o: &OpSummary) -> String {
    if o.ios == 0 {
        return String::new();
    }
    let p = |q: f64| o.lat.percentile(q).unwrap_or(0);
    format!(
        "  {name}: {} ios, {:.0} IOPS, lat mean {:.0} ns, p50 {} ns, p99 {} ns, max {} ns\n",
        o.ios,
        o.iops,
        o.lat.mean,
        p(50.0),
        p(99.0),
        o.lat.max
    )
}

fn summary(title: &str, r: &RunResult) -> String {
    let mut s = format!("{title}: runtime {} ns\n", r.runtime_ns);
    s += &kind_line("read", &r.read);
    s += &kind_line("write", &r.write);
    for (i, d) in r.device.iter().enumerate() {
        let u = &d.utilisation;
        s += &format!(
            "  drive {i}: WA {:.3}, NAND reads {}, erases {}, GC moved {}, busiest {} {:.3}\n",
            d.write_amplification,
            d.nand_reads,
            d.nand_erases,
            d.gc_units_moved,
            u.busiest,
            u.busiest_utilisation
        );
    }
    s
}

#[test]
fn the_model_gives_these_figures() {
    let runs = [
        (
            "vertex450-128g RAID 0 of 2, 16k stripe, fresh, randrw 70 % read 4k QD4x2, 30 ms",
            spec(RwMode::Randrw, 70, 4096, 4096, 4, 2, 30),
            target("vertex450-128g", 2, "fresh"),
        ),
        (
            "x25m-g2-160g full, randread 4k QD32, 20 ms",
            spec(RwMode::Randread, 100, 4096, 4096, 32, 1, 20),
            target("x25m-g2-160g", 1, "full"),
        ),
        (
            "c300-256g fresh, randwrite 4k 512-byte aligned QD3, 50 ms",
            spec(RwMode::Randwrite, 0, 4096, 512, 3, 1, 50),
            target("c300-256g", 1, "fresh"),
        ),
        (
            "vertex-barefoot-120g fresh (hybrid FTL), randwrite 4k QD3, 50 ms",
            spec(RwMode::Randwrite, 0, 4096, 4096, 3, 1, 50),
            target("vertex-barefoot-120g", 1, "fresh"),
        ),
    ];
    let mut all = String::new();
    for (title, spec, target) in runs {
        let r = run_sim(&spec, &target, &SimOptions::default()).unwrap();
        all += &summary(title, &r);
    }
    insta::assert_snapshot!("sim_fingerprint", all);
}
