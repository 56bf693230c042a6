//! Snapshots of every exporter on one hand-built result: a RAID 0 of two simulated drives, a
//! mixed workload of two jobs whose I/Os (and latencies) are made up here, logs every 10 ms, the
//! drives' counters written out. Nothing here runs the simulator, so a change to the model
//! never changes these snapshots (the model has its own fingerprint: `tests/sim_fingerprint.rs`).
//! Review changes with `cargo insta review` (or delete a snapshot and rerun with
//! INSTA_UPDATE=always).

use ssdlab_report::export::LogExporter;
use ssdlab_report::logs::LogRequest;
use ssdlab_report::{exporter, Exporter, FioJob, Format, Report, ReportJob, TableStyle};
use ssdlab_stats::device::{DriveCounters, Utilisation};
use ssdlab_stats::{
    EngineKind, LogConfig, MemberStats, Recorder, RunResult, TargetDesc, TargetKind,
};
use ssdlab_workload::{OpKind, Pattern, RwMode, StopCondition, WorkloadSpec};
use std::sync::OnceLock;

/// 30.5 ms of a 70 % read mix on two jobs at QD 4: 4,570 I/Os of 4 KiB with latencies drawn
/// from a fixed sequence (most 40-60 us, every 97th a slow one of 0.8-0.96 ms).
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
        let log = LogConfig {
            interval_ns: 10_000_000,
            bw: true,
            iops: true,
            reserve: 3,
            ..Default::default()
        };
        let runtime_ns = 30_494_000;
        let ios: u64 = 4_570;
        let mut rec = Recorder::with_log(Some(log), 1, 2, runtime_ns);
        let mut x: u64 = 7;
        for i in 0..ios {
            // xorshift: the same sequence on every machine
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let kind = if x % 100 < 70 {
                OpKind::Read
            } else {
                OpKind::Write
            };
            let clat = if i % 97 == 0 {
                800_000 + (x >> 8) % 160_000
            } else {
                40_000 + (x >> 8) % 20_000
            };
            let slat = 1_000 + (x >> 20) % 500;
            let t = i * runtime_ns / ios;
            rec.record_io(
                (i % 2) as u32,
                kind,
                4096,
                ((x >> 24) % 16_384) * 4096,
                slat,
                clat,
                t,
            );
        }
        rec.record_depth(4, ios);
        for _ in 0..ios / 2 {
            rec.record_submit(2);
            rec.record_complete(2);
        }
        let target = TargetDesc {
            kind: TargetKind::SimRaid0,
            name: "vertex450-128g".into(),
            size: 256_000_000_000,
            engine: EngineKind::Sim,
            direct: false,
            offset: 0,
            span: 64 << 20,
            details: [
                ("state", "fresh"),
                ("interface", "Sata6g"),
                ("drives", "2"),
                ("stripe", "16 KiB"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        };
        let member = |i: u64, reads: u64, writes: u64, busy_pct: u64| MemberStats {
            name: format!("vertex450-128g#{i}"),
            read_ios: reads,
            write_ios: writes,
            read_bytes: reads * 4096,
            write_bytes: writes * 4096,
            busy_ns: runtime_ns * busy_pct / 100,
            read_ticks_ns: reads * 52_000,
            write_ticks_ns: writes * 46_000,
        };
        let drive = |written: u64, busy: f64| DriveCounters {
            host_write_bytes: written,
            nand_program_bytes: written,
            write_amplification: 1.0,
            nand_reads: 58,
            cache_write_hits: 1,
            utilisation: Utilisation {
                busiest: "fw core 0 (host+ftl)".into(),
                busiest_utilisation: busy,
                fw_cores: vec![busy],
                link: 0.21,
                ..Utilisation::default()
            },
            ..DriveCounters::default()
        };
        RunResult {
            timestamp_ms: 1_764_979_200_000,
            members: vec![member(0, 1_527, 733, 96), member(1, 1_678, 632, 99)],
            device: vec![drive(733 * 4096, 0.80), drive(632 * 4096, 0.78)],
            notes: vec![
                "96 % of the data read had never been written (or was trimmed) on the simulated \
                 drive"
                    .into(),
            ],
            ..RunResult::from_recorder(&spec, target, &rec, runtime_ns, 0)
        }
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
