//! Save and load speed of a drive's state: `state [PRESET] [fresh|full|steady] [FILE]` builds
//! the drive in that state, saves it to FILE (default `drive.state` in the current directory,
//! through a 1 MiB buffer, then fsync), loads it back and prints the times and the file size.
use ssdlab_ssdsim::*;
use std::io::{BufReader, BufWriter, Write};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let preset = args.get(1).map_or("vertex450-128g", |s| s.as_str());
    let pre: Precondition = args
        .get(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(Precondition::Steady);
    let path = args.get(3).map_or("drive.state", |s| s.as_str());
    let cfg = load_preset(preset).unwrap();
    let ad = AdapterConfig::passthrough();
    let t0 = Instant::now();
    let sim = Simulator::new(&cfg, 1, &ad, pre, 1).unwrap();
    println!("build {preset} {pre}: {:.3} s", t0.elapsed().as_secs_f64());
    let t0 = Instant::now();
    let f = std::fs::File::create(path).unwrap();
    let mut w = BufWriter::with_capacity(1 << 20, f);
    sim.save_state(&mut w, &cfg, &StateExtra::default())
        .unwrap();
    w.flush().unwrap();
    let f = w.into_inner().unwrap();
    let t_write = t0.elapsed().as_secs_f64();
    f.sync_all().unwrap();
    let t_sync = t0.elapsed().as_secs_f64();
    let size = std::fs::metadata(path).unwrap().len();
    println!(
        "save: {t_write:.3} s written, {t_sync:.3} s with fsync; {size} bytes ({:.1} MiB)",
        size as f64 / (1 << 20) as f64
    );
    drop(sim);
    let t0 = Instant::now();
    let r = BufReader::with_capacity(1 << 20, std::fs::File::open(path).unwrap());
    let (b, _) = Simulator::load_state(r, &cfg, 1, &ad, false, &[]).unwrap();
    println!("load: {:.3} s", t0.elapsed().as_secs_f64());
    b.check_invariants().unwrap();
}
