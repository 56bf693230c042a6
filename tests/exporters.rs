//! Snapshots of every exporter on one simulated run (simulated results are byte-identical for
//! the same inputs, so the snapshots are stable): a RAID 0 of two simulated drives, a mixed
//! workload with two jobs, logs every 10 ms of virtual time. Review changes with
//! `cargo insta review` (or delete a snapshot and rerun with INSTA_UPDATE=always).

use ssdlab_engine::{run_sim, SimOptions, SimTarget};
use ssdlab_report::export::LogExporter;
use ssdlab_report::logs::LogRequest;
use ssdlab_report::{exporter, Exporter, Format, TableStyle};
use ssdlab_stats::{LogConfig, RunResult};
use ssdlab_workload::{Pattern, RwMode, StopCondition, WorkloadSpec};
use std::sync::OnceLock;

fn run() -> &'static RunResult {
    static RESULT: OnceLock<RunResult> = OnceLock::new();
    RESULT.get_or_init(|| {
        let spec = WorkloadSpec {
            rw: RwMode::Randrw,
            read_pct: 70,
            random_pct: 100,
            bs: 4096,
            align: 4096,
            offset: 0,
            span: Some(64 << 20),
            qd: 4,
            jobs: 2,
            stop: StopCondition {
                time_ns: Some(30_000_000),
                ios: None,
                bytes: None,
            },
            ramp_ns: 0,
            pattern: Pattern::Random,
            seed: 7,
            verify: false,
        };
        let target = SimTarget {
            name: "vertex450-128g".into(),
            drive: ssdlab_ssdsim::load_preset("vertex450-128g").unwrap(),
            drives: 2,
            stripe: Some(16 << 10),
            adapter: ssdlab_ssdsim::AdapterConfig::passthrough(),
            state: "fresh".parse().unwrap(),
        };
        let log = LogConfig {
            interval_ns: 10_000_000,
            bw: true,
            iops: true,
            reserve: 3,
        };
        run_sim(
            &spec,
            &target,
            &SimOptions {
                log: Some(log),
                ..Default::default()
            },
        )
        .unwrap()
    })
}

fn export(format: Format, style: TableStyle) -> String {
    let bytes = exporter(format, style)
        .unwrap()
        .serialize(std::slice::from_ref(run()))
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn table() {
    insta::assert_snapshot!("table_unicode", export(Format::Table, TableStyle::Unicode));
    let ascii = export(Format::Table, TableStyle::Ascii);
    assert!(ascii.is_ascii(), "{ascii}");
    insta::assert_snapshot!("table_ascii", ascii);
}

#[test]
fn json() {
    let text = export(Format::Json, TableStyle::Ascii);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
    insta::assert_snapshot!("json", text);
}

#[test]
fn json_plus() {
    let text = export(Format::JsonPlus, TableStyle::Ascii);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let read = &v["jobs"][0]["read"];
    let bins = read["clat_ns"]["bins"].as_object().unwrap();
    let n: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(n, read["clat_ns"]["N"].as_u64().unwrap());
    insta::assert_snapshot!("json_plus", text);
}

#[test]
fn csv() {
    insta::assert_snapshot!("csv", export(Format::Csv, TableStyle::Ascii));
}

#[test]
fn html_is_not_built_yet() {
    assert!(exporter(Format::Html, TableStyle::Ascii).is_err());
}

#[test]
fn logs() {
    let req = LogRequest {
        bw: Some("x".into()),
        iops: Some("x".into()),
        lat: Some("x".into()),
    };
    let mut all = String::new();
    for (path, kind, job) in req.files(2) {
        let text = LogExporter { kind, job }
            .serialize(std::slice::from_ref(run()))
            .unwrap();
        all.push_str(&format!(
            "== {}\n{}",
            path.display(),
            String::from_utf8(text).unwrap()
        ));
    }
    insta::assert_snapshot!("logs", all);
}
