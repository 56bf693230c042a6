//! Snapshots of every exporter on one simulated run (simulated results are byte-identical for
//! the same inputs, so the snapshots are stable): a RAID 0 of two simulated drives, a mixed
//! workload with two jobs, logs every 10 ms of virtual time. Review changes with
//! `cargo insta review` (or delete a snapshot and rerun with INSTA_UPDATE=always).

use ssdlab_engine::{run_sim, SimOptions, SimTarget};
use ssdlab_report::export::LogExporter;
use ssdlab_report::logs::LogRequest;
use ssdlab_report::{exporter, Exporter, FioJob, Format, Report, ReportJob, TableStyle};
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
            ..Default::default()
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
            ..Default::default()
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
fn html() {
    let html = export(Format::Html, TableStyle::Ascii);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(!html.contains("<script"), "no scripts in the page");
    // No link but the SVG namespace.
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    // 30 ms: no time series (the page says so), latency percentiles, one histogram per op kind.
    assert!(html.contains("no time series is drawn"));
    assert_eq!(html.matches("<svg").count(), 3);
    insta::assert_snapshot!("html", html);
}

#[test]
fn normal() {
    let text = export(Format::Normal, TableStyle::Ascii);
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
    insta::assert_snapshot!("normal", text);
}

/// `ssdlab fio` hands the exporters each run with its fio job: the same writers name, group
/// and describe it as fio does.
#[test]
fn fio_jobs_keep_their_names_groups_and_options() {
    let job = FioJob {
        name: "oltp".into(),
        group: 3,
        members: 2,
        options: vec![
            ("rw".into(), "randrw".into()),
            ("iodepth".into(), "4".into()),
        ],
        description: Some("mixed".into()),
        header: "oltp: (g=3): rw=randrw".into(),
        ..Default::default()
    };
    let global = vec![("ioengine".to_string(), "io_uring".to_string())];
    let report = Report {
        jobs: vec![ReportJob {
            result: run(),
            fio: Some(&job),
        }],
        global_options: &global,
    };
    let out = |f| {
        let b = exporter(f, TableStyle::Ascii)
            .unwrap()
            .export(&report)
            .unwrap();
        String::from_utf8(b).unwrap()
    };
    let json = out(Format::Json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["jobname"], "oltp");
    assert_eq!(j["groupid"], 3);
    assert!(j["job_start"].is_u64());
    assert_eq!(j["job options"]["rw"], "randrw");
    assert_eq!(j["desc"], "mixed");
    assert_eq!(v["global options"]["ioengine"], "io_uring");
    // fio's order: "global options" right after "time", "job_start" right after "groupid".
    let at = |k: &str| json.find(&format!("\"{k}\"")).unwrap();
    assert!(at("time") < at("global options") && at("global options") < at("jobs"));
    assert!(at("groupid") < at("job_start") && at("job_start") < at("error"));
    let text = out(Format::Normal);
    assert!(text.starts_with("oltp: (g=3): rw=randrw\n"), "{text}");
    assert!(text.contains("oltp: (groupid=3, jobs=2): err= 0"), "{text}");
    assert!(text.contains("Description  : [mixed]"), "{text}");
    assert!(text.contains("Run status group 3 (all jobs):"), "{text}");
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
