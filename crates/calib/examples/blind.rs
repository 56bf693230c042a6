//! The blind self-test, printed: for each seed a hidden drive is drawn from the preset (scaled
//! down 16× so each test takes seconds), characterised with the quick suite, fitted from the
//! unchanged preset, and used to predict held-out workloads.
//!
//! `cargo run --release -p ssdlab-calib --example blind [PRESET] [SEEDS]`
//! (defaults: vertex450-128g, seeds 1–8); `… PRESET SEED detail` prints one seed's fit and
//! predictions.
use ssdlab_calib::blind::{self_test, BlindOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset = args.first().map(String::as_str).unwrap_or("vertex450-128g");
    let seeds: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(8);
    let base = ssdlab_ssdsim::load_preset(preset)
        .and_then(|c| c.scaled(16))
        .unwrap_or_else(|e| panic!("{e}"));
    let o = BlindOptions::default();
    if args.get(2).map(String::as_str) == Some("detail") {
        let r = self_test(&base, seeds, &o).unwrap_or_else(|e| panic!("{e}"));
        println!("hidden: {:?}", r.hidden);
        for p in &r.fit.params {
            println!("fitted {} {} -> {} ({})", p.key, p.before, p.after, p.range);
        }
        println!("suite rms error {:.1} %", r.fit.error_after * 100.0);
        for p in &r.predictions {
            println!("{:<60} {:+.1} %", p.case.label(), p.error * 100.0);
        }
        return;
    }
    let mut medians = Vec::new();
    let mut worsts = Vec::new();
    println!("| seed | hidden drive | fit rms error (suite) | held-out median | held-out worst | worst workload |");
    println!("|---|---|---|---|---|---|");
    for seed in 1..=seeds {
        let t0 = std::time::Instant::now();
        let r = self_test(&base, seed, &o).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let worst = r
            .predictions
            .iter()
            .max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()))
            .expect("predictions");
        let hidden: Vec<String> = r
            .hidden
            .iter()
            .map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k)))
            .collect();
        println!(
            "| {seed} | {} | {:.1} % | {:.1} % | {:.1} % | {} ({:+.1} %) |",
            hidden.join(" "),
            r.fit.error_after * 100.0,
            r.median * 100.0,
            r.worst * 100.0,
            worst.case.label(),
            worst.error * 100.0
        );
        eprintln!(
            "seed {seed}: {:.1} s, {} evaluations",
            t0.elapsed().as_secs_f64(),
            r.fit.evaluations
        );
        medians.push(r.median);
        worsts.push(r.worst);
    }
    medians.sort_by(f64::total_cmp);
    println!(
        "\nover {seeds} hidden drives: median of the held-out medians {:.1} %, worst held-out error {:.1} %",
        medians[medians.len() / 2] * 100.0,
        worsts.iter().copied().fold(0.0, f64::max) * 100.0
    );
}
