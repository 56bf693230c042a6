//! What merging the ranks' results costs at rank 0, with ranks simulated as threads of one
//! process (channels instead of MPI): `cargo run --release -p ssdlab-cluster --example
//! reduce_cost -- 4 16 64`. Each rank holds a recorder like a 10 s run's (a million latencies
//! over ~2,000 histogram bins, 10 series points) and a report like a rank's; the job tree-reduces
//! the recorders and gathers the reports, as `mpirun … ssdlab run` does. Prints the wall time,
//! the cost of one tree step, and a projection for 10,000 ranks.

use ssdlab_cluster::aggregate::{RankReport, RankRun};
use ssdlab_cluster::transport::{gather, reduce, LocalTransport, Transport};
use ssdlab_stats::Recorder;
use ssdlab_workload::OpKind;
use std::time::Instant;

fn recorder(seed: u64) -> Recorder {
    let mut r = Recorder::default();
    let mut x = seed | 1;
    for i in 0..1_000_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // 2–50 µs with a long tail to a few ms
        let tail = if x.is_multiple_of(1000) {
            x % 5_000_000
        } else {
            0
        };
        let lat = 2_000 + (x % 48_000) + tail;
        r.record(0, OpKind::Read, 4096, 300 + x % 700, lat, i * 10_000);
    }
    r
}

fn report(rank: usize) -> Vec<u8> {
    let run = RankRun::of(&Default::default(), Some(1_000_000));
    serde_json::to_vec(&RankReport {
        rank,
        host: format!("node{:04}", rank / 16),
        local_rank: rank % 16,
        outcome: Ok(run),
    })
    .unwrap()
}

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("rank counts"))
        .collect();
    let counts = if counts.is_empty() {
        vec![4, 16, 64]
    } else {
        counts
    };
    // One tree step: encode a child's recorder, decode and merge it into the parent's.
    let (a, b) = (recorder(1), recorder(2));
    let t = Instant::now();
    let bytes = b.to_bytes();
    let encode = t.elapsed();
    let mut acc = a.clone();
    let t = Instant::now();
    acc.merge_bytes(&bytes).unwrap();
    let merge = t.elapsed();
    let rep = report(1);
    let t = Instant::now();
    for _ in 0..1000 {
        let _: RankReport = serde_json::from_slice(&rep).unwrap();
    }
    let per_report = t.elapsed() / 1000;
    println!(
        "one tree step: recorder of {} bytes, encode {:.2} ms, decode+merge {:.2} ms; one rank report {} bytes, decoded in {:.1} µs",
        bytes.len(),
        encode.as_secs_f64() * 1e3,
        merge.as_secs_f64() * 1e3,
        rep.len(),
        per_report.as_secs_f64() * 1e6
    );
    for &n in &counts {
        let recs: Vec<Recorder> = (0..n).map(|r| recorder(r as u64 + 1)).collect();
        let start = Instant::now();
        let ios = std::thread::scope(|s| {
            let hs: Vec<_> = LocalTransport::group(n)
                .into_iter()
                .zip(recs)
                .map(|(t, rec)| {
                    s.spawn(move || {
                        let merged = reduce(
                            &t,
                            1,
                            rec,
                            |acc, b| acc.merge_bytes(&b).unwrap(),
                            |acc| acc.to_bytes(),
                        );
                        let reports = gather(&t, 2, report(t.rank()));
                        if let Some(all) = reports {
                            let _: Vec<RankReport> = all
                                .iter()
                                .map(|b| serde_json::from_slice(b).unwrap())
                                .collect();
                        }
                        merged.map(|m| m.total_ios())
                    })
                })
                .collect();
            hs.into_iter()
                .filter_map(|h| h.join().unwrap())
                .sum::<u64>()
        });
        let wall = start.elapsed();
        assert_eq!(ios, n as u64 * 1_000_000);
        let levels = (n as f64).log2().ceil();
        println!(
            "{n:>5} ranks: {:.1} ms wall for all {n} ranks' work on this machine's cores; critical path ≈ {levels} steps × {:.2} ms + {n} reports × {:.1} µs = {:.1} ms",
            wall.as_secs_f64() * 1e3,
            (encode + merge).as_secs_f64() * 1e3,
            per_report.as_secs_f64() * 1e6,
            (levels * (encode + merge).as_secs_f64() + n as f64 * per_report.as_secs_f64()) * 1e3
        );
    }
    let n = 10_000f64;
    let levels = n.log2().ceil();
    println!(
        "projected at 10,000 ranks: {levels} steps × {:.2} ms + 10,000 reports × {:.1} µs = {:.0} ms (plus {levels} message latencies and {:.1} MB of reports into rank 0)",
        (encode + merge).as_secs_f64() * 1e3,
        per_report.as_secs_f64() * 1e6,
        (levels * (encode + merge).as_secs_f64() + n * per_report.as_secs_f64()) * 1e3,
        n * rep.len() as f64 / 1e6
    );
}
