//! Calibration driver: rated vs simulated figures for presets.
//!
//! `cargo run --release -p ssdlab-ssdsim --example calibrate [PRESET...]`
//!
//! For every preset: 128 KiB sequential read (full drive) and write (fresh drive), 4 KiB random
//! read (full drive) and write (fresh drive) over an 8 GiB span, all at QD 32, measured for
//! 2 s of virtual time after 0.5 s of warm-up. Prints a Markdown table.
use ssdlab_ssdsim::loadgen::{run, Access, Workload};
use ssdlab_ssdsim::*;

fn measure(cfg: &DriveConfig, pre: Precondition, kind: OpKind, pat: Access, bs: u64) -> f64 {
    let mut sim = Simulator::new(cfg, 1, &AdapterConfig::passthrough(), pre, 1).unwrap();
    let span = (8u64 << 30).min(cfg.user_capacity());
    let mut w = Workload::new(kind, pat, bs, span, 32);
    w.warmup_ns = 500_000_000;
    w.duration_ns = 2_000_000_000;
    let r = run(&mut sim, 0, &w, 0);
    if bs >= 65536 {
        r.mb_s
    } else {
        r.iops
    }
}

fn cell(rated: f64, sim: f64, unit: &str) -> String {
    if rated > 0.0 {
        format!(
            "{rated:.0} / {sim:.0} {unit} ({:+.0}%)",
            (sim / rated - 1.0) * 100.0
        )
    } else {
        format!("— / {sim:.0} {unit}")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<String> = if args.is_empty() {
        preset_names().iter().map(|s| s.to_string()).collect()
    } else {
        args
    };
    println!("| preset | seq read 128K QD32 (rated / sim) | seq write 128K QD32 | rand read 4K QD32 | rand write 4K QD32 |");
    println!("|---|---|---|---|---|");
    for n in names {
        let cfg = load_preset(&n).unwrap_or_else(|e| panic!("{e}"));
        let r = &cfg.rated;
        let sr = measure(
            &cfg,
            Precondition::Full,
            OpKind::Read,
            Access::Sequential,
            128 << 10,
        );
        let sw = measure(
            &cfg,
            Precondition::Fresh,
            OpKind::Write,
            Access::Sequential,
            128 << 10,
        );
        let rr = measure(&cfg, Precondition::Full, OpKind::Read, Access::Random, 4096);
        let rw = measure(
            &cfg,
            Precondition::Fresh,
            OpKind::Write,
            Access::Random,
            4096,
        );
        println!(
            "| {n} | {} | {} | {} | {} |",
            cell(r.seq_read_mb_s, sr, "MB/s"),
            cell(r.seq_write_mb_s, sw, "MB/s"),
            cell(r.rand_read_iops, rr, "IOPS"),
            cell(r.rand_write_iops, rw, "IOPS")
        );
    }
}
