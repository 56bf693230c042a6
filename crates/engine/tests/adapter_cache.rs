//! The RAID driver's write-back cache in host memory: it lifts an array's write rate above what
//! the members sustain only while it fills, by at most its size.

use ssdlab_engine::{run_sim, SimOptions, SimTarget};
use ssdlab_ssdsim::{AdapterConfig, Precondition, WriteCacheConfig};
use ssdlab_workload::{RwMode, StopCondition, WorkloadSpec};

const SECONDS: u64 = 4;

fn array(cache: Option<u64>) -> SimTarget {
    SimTarget {
        name: "vertex450-128g".into(),
        drive: ssdlab_ssdsim::load_preset("vertex450-128g").unwrap(),
        drives: 2,
        stripe: Some(8192),
        adapter: AdapterConfig {
            write_cache: cache.map(WriteCacheConfig::with_size),
            host: Default::default(),
            ..AdapterConfig::passthrough()
        },
        state: Precondition::Fresh,
    }
}

fn randwrite(qd: u32) -> WorkloadSpec {
    WorkloadSpec {
        rw: RwMode::Randwrite,
        read_pct: 0,
        random_pct: 100,
        bs: 4096,
        align: 4096,
        span: Some(2 << 30),
        qd,
        stop: StopCondition {
            time_ns: Some(SECONDS * 1_000_000_000),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Bytes written in the run, and per second.
fn written(cache: Option<u64>, qd: u32) -> (f64, Vec<f64>) {
    let r = run_sim(&randwrite(qd), &array(cache), &SimOptions::default()).unwrap();
    let per_s: Vec<f64> = r.series.iter().map(|s| s.write_bw_bytes).collect();
    (r.write.bytes as f64, per_s)
}

#[test]
fn a_write_back_cache_only_lends_what_it_can_hold() {
    let cache = 512u64 << 20;
    // What the members can take: no cache, each member's queue full.
    let (sustained, sustained_s) = written(None, 64);
    let (plain, _) = written(None, 2);
    let (cached, cached_s) = written(Some(cache), 2);
    // At QD 2 the cache hides the drives' latency: far more than the plain array at QD 2 ...
    assert!(cached > 1.5 * plain, "cached {cached} vs plain {plain}");
    // ... but over the run never more than the members take plus what the cache holds.
    assert!(
        cached <= sustained * 1.02 + cache as f64,
        "cached {cached} > sustained {sustained} + cache {cache}"
    );
    // Once it is full (after the first second here) the host writes at the members' rate.
    let best = sustained_s.iter().cloned().fold(0.0, f64::max);
    for (i, s) in cached_s.iter().enumerate().skip(1) {
        assert!(
            *s <= best * 1.02,
            "second {i}: {s} B/s with the cache full, members take {best}"
        );
    }
    // The first second absorbed more than the members could take.
    assert!(cached_s[0] > best * 1.5, "{cached_s:?} vs {best}");
}
