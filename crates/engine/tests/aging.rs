//! Aging runs on a small simulated RAID 0: with TRIM passed through, the drives hold only the
//! files' data and amplify writes less than when the RAID driver drops TRIM. (The drive is
//! scaled down 64 times, which leaves it more spare area than the preset; the sustained-write
//! direction is checked at the study's own scale by the CLI test.)

use ssdlab_engine::{run_aging, AgingOptions, SimOptions, SimTarget};
use ssdlab_ssdsim::{load_preset, AdapterConfig, Precondition};
use ssdlab_workload::aging::Aging;
use ssdlab_workload::AgingSpec;

fn span_probe(r: &ssdlab_stats::AgingRun) -> u64 {
    r.volume_bytes / 8 / 4096 * 4096
}

fn target(trim: bool, scale: u32) -> SimTarget {
    SimTarget {
        name: "vertex450-128g".into(),
        drive: load_preset("vertex450-128g")
            .unwrap()
            .scaled(scale)
            .unwrap(),
        drives: 2,
        stripe: Some(16 << 10),
        adapter: AdapterConfig {
            trim_passthrough: trim,
            ..AdapterConfig::passthrough()
        },
        state: Precondition::Fresh,
    }
}

#[test]
fn trim_passthrough_lowers_write_amplification() {
    let scale = 64;
    let run = |trim: bool| {
        let t = target(trim, scale);
        let span = t.drive.user_capacity() * 2;
        let spec = AgingSpec::new(span, span / 8, 11);
        let opts = AgingOptions {
            days: 8,
            probe_bytes: span / 8,
            ..AgingOptions::default()
        };
        let (r, stopped) = run_aging(
            &t,
            Aging::new(spec).unwrap(),
            "x",
            &opts,
            &SimOptions::default(),
            &|_| {},
        )
        .unwrap();
        assert!(!stopped);
        r
    };
    let with = run(true);
    let without = run(false);
    let (a, b) = (with.days_total(), without.days_total());
    assert_eq!(a.host_write_bytes, b.host_write_bytes, "the same workload");
    assert!(a.drive_trims > 0 && b.drive_trims == 0);
    assert!(a.write_amplification() < b.write_amplification());
    assert!(with
        .days
        .iter()
        .all(|d| d.probe.host_write_bytes == span_probe(&with)));
    // without TRIM the drives keep deleted files' data as valid
    let mapped = |r: &ssdlab_stats::AgingRun| r.days.last().unwrap().work.drive_mapped_bytes;
    assert!(mapped(&with) < mapped(&without));
}
