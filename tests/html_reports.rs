//! HTML reports and the review studies through the real binary: `run --html`, `report --html`,
//! `study stripe|alignment` (findings in words, ties, the HTML written by default), escaping of
//! every user-given text, and the output checks (`--html` never names an input; bad input
//! writes nothing).

use assert_cmd::Command;
use std::path::Path;
use std::process::Output;

fn ssdlab(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .current_dir(dir)
        .env("SSDLAB_NO_STATUS", "1")
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> (String, String) {
    let (so, se) = (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    );
    assert!(o.status.success(), "exit {:?}: {se}\n{so}", o.status.code());
    (so, se)
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// A small study: a small drive, 2 queue depths, short points (building the filled drive
/// states dominates).
const SMALL_STRIPE: [&str; 8] = [
    "study", "stripe", "--preset", "x25e-64g", "--qd", "1,4", "--time", "100ms",
];

#[test]
fn stripe_study_writes_html_by_default_and_states_findings() {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = ok(&ssdlab(dir.path(), &SMALL_STRIPE));
    let html_name = "ssdlab-study-stripe-x25e-64g.html";
    assert!(err.contains(html_name), "says where: {err}");
    assert!(!out.contains("<svg"), "stdout carries the text report only");
    // Findings in words, computed from the data.
    assert!(out.contains("Findings"), "{out}");
    assert!(out.contains("all-round default"), "{out}");
    assert!(out.contains("for random work"), "{out}");
    assert!(out.contains("for sequential work"), "{out}");
    assert!(out.contains("pay"), "{out}");
    assert!(!out.contains("0.0 % ahead"), "no win by 0.0 %: {out}");
    // The 32 KiB stripe is in; 4 KiB is not by default.
    assert!(out.contains("stripe 32 KiB"), "{out}");
    assert!(!out.contains("stripe 4 KiB"), "{out}");
    let html = std::fs::read_to_string(dir.path().join(html_name)).unwrap();
    // Per workload: IOPS/MB/s vs QD, the gain heat map, latency vs QD and the latency histogram
    // of the best stripe at the highest QD.
    assert_eq!(html.matches("<svg").count(), 16, "{html}");
    assert!(html.contains("(best"), "best stripe marked");
    // (a chart's visible title; its <title> repeats it)
    assert_eq!(html.matches("raid0 latency vs QD</text>").count(), 4);
    assert_eq!(html.matches(" stripe, best), QD 4</text>").count(), 4);
    assert!(html.contains("from stored percentiles"));
    // One repeat per point (the study's default on simulated drives): no error bars.
    assert!(!html.contains("error-bar"));
    assert!(html.contains("Recommendation for raid0"));
    assert!(html.contains("log2 scale"));
    assert!(!html.contains("<script"));
    assert!(html.contains("Sweep file"));
    assert!(html.contains("Target single"), "preset parameters");
    assert_environment(
        &html,
        "study stripe --preset x25e-64g --qd 1,4 --time 100ms",
    );
}

/// The page's Environment table: written (UTC), host, kernel, CPU, version, the command line.
fn assert_environment(html: &str, command: &str) {
    assert!(html.contains("<h2>Environment</h2>"), "{html}");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for (label, value) in [
        ("kernel", kernel.trim()),
        ("host", host.trim()),
        ("version", concat!("ssdlab ", env!("CARGO_PKG_VERSION"))),
    ] {
        assert!(
            html.contains(&format!("<td>{label}</td><td>")) && html.contains(value),
            "{label} {value}"
        );
    }
    assert!(html.contains(" UTC</td>"), "the date");
    assert!(html.contains("logical CPU"), "the CPU");
    assert!(html.contains(command), "{command}");
}

#[test]
fn alignment_study_names_what_each_drive_does() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = ok(&ssdlab(
        dir.path(),
        // The default 10 s per point: shorter runs are absorbed by the drives' write caches.
        &["study", "alignment", "--html", "a.html"],
    ));
    assert!(!out.contains("No RAID 0 targets"), "{out}");
    assert!(!out.contains("(baseline)"), "{out}");
    for drive in [
        "C300",
        "X25-M G2",
        "X25-E",
        "Vertex LE",
        "Vertex 450",
        "Vertex (Barefoot)",
        "SSDNow V+",
    ] {
        assert!(out.contains(&format!("  - {drive}: ")), "{drive}: {out}");
    }
    let c300 = out
        .lines()
        .find(|l| l.contains("- C300: "))
        .expect("a finding for the C300");
    // (its write buffer takes the writes; the merges cost flash work in the background)
    assert!(c300.contains("read-modify-writes partial pages"), "{c300}");
    let x25m = out.lines().find(|l| l.contains("- X25-M G2: ")).unwrap();
    assert!(x25m.contains("remaps sectors"), "{x25m}");
    let html = std::fs::read_to_string(dir.path().join("a.html")).unwrap();
    assert_eq!(
        html.matches("<svg").count(),
        1,
        "one grouped bar chart at QD 3"
    );
    assert!(
        html.contains(">rmw<") && html.contains(">remap<"),
        "policies named"
    );
    assert!(!dir.path().join("ssdlab-study-alignment.html").exists());
}

#[test]
fn run_html_report() {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = ok(&ssdlab(
        dir.path(),
        &[
            "run",
            "--sim",
            "vertex450-128g",
            "--rw",
            "randrw",
            "--time",
            "2s",
            "--qd",
            "4",
            "--html",
            "r.html",
        ],
    ));
    assert!(err.contains("r.html"), "{err}");
    assert!(
        out.contains("IOPS"),
        "the table still goes to stdout: {out}"
    );
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    // IOPS and MB/s over time, percentiles, one histogram per op kind.
    assert_eq!(html.matches("<svg").count(), 5, "{html}");
    for t in [
        "IOPS over time",
        "Bandwidth over time",
        "Latency percentiles",
    ] {
        assert!(html.contains(t), "{t}");
    }
    assert!(html.contains("log scale"));
    assert!(html.contains("Preset vertex450-128g"), "preset parameters");
    // A page someone can file: the date, host, kernel, CPU, version and the exact command.
    assert_environment(
        &html,
        "run --sim vertex450-128g --rw randrw --time 2s --qd 4 --html r.html",
    );
    // --output-format html on stdout is the same kind of page.
    let o = ssdlab(
        dir.path(),
        &[
            "run",
            "--null",
            "--time",
            "100ms",
            "--output-format",
            "html",
        ],
    );
    let (page, _) = ok(&o);
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
}

#[test]
fn html_never_names_an_input_and_bad_input_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.img"), vec![7u8; 1 << 20]).unwrap();
    let cases: [&[&str]; 5] = [
        // The study's own store.
        &[
            "study",
            "alignment",
            "--db",
            "s.sqlite",
            "--html",
            "s.sqlite",
        ],
        // A real member of the study.
        &[
            "study",
            "stripe",
            "--target",
            "keep.img,keep.img",
            "--html",
            "keep.img",
        ],
        // The run's target.
        &[
            "run", "--target", "keep.img", "--time", "100ms", "--html", "keep.img",
        ],
        // --html into a missing directory.
        &["study", "alignment", "--html", "no/such/dir/a.html"],
        // Options of one study on the other.
        &["study", "alignment", "--stripes", "8k"],
    ];
    for args in cases {
        let o = ssdlab(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert_eq!(files(dir.path()), ["keep.img"], "{args:?} wrote something");
    }
    assert_eq!(
        std::fs::read(dir.path().join("keep.img")).unwrap(),
        vec![7u8; 1 << 20]
    );
    // report --html over the store.
    let o = ssdlab(
        dir.path(),
        &["report", "nothing.sqlite", "--html", "nothing.sqlite"],
    );
    assert_eq!(o.status.code(), Some(2));
}

/// A sweep of 2 repeats: the throughput and latency charts carry error bars (lowest to highest
/// repeat) and say so in their legends; with 1 repeat there are none.
#[test]
fn sweep_report_draws_the_spread_of_repeats() {
    for repeats in [2, 1] {
        let dir = tempfile::tempdir().unwrap();
        let sweep = format!(
            r#"
name = "repeats"
time = "20ms"
repeats = {repeats}
qd = [1, 4]
workloads = ["4k-randread"]

[[target]]
label = "one"
sim = "x25e-64g"
baseline = true

[[target]]
label = "two"
sim = "x25e-64g"
drives = 2
stripes = ["16k", "64k"]
"#
        );
        std::fs::write(dir.path().join("s.toml"), sweep).unwrap();
        ok(&ssdlab(
            dir.path(),
            &["sweep", "s.toml", "--db", "s.sqlite"],
        ));
        ok(&ssdlab(
            dir.path(),
            &["report", "s.sqlite", "--html", "r.html"],
        ));
        let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
        // Throughput, heat map, latency vs QD, the best stripe's histogram at QD 4.
        assert_eq!(html.matches("<svg").count(), 4, "{html}");
        assert!(html.contains("4k-randread: two latency vs QD"), "{html}");
        assert!(html.contains("total latency (µs, log scale)"), "{html}");
        assert!(html.contains("stripe, best), QD 4"), "{html}");
        let bars = html.matches(r#"class="error-bar""#).count();
        if repeats == 2 {
            // random offsets differ with each repeat's seed, so the points spread
            assert!(bars > 0, "{html}");
            assert!(html.contains("bars: lowest–highest of the 2 repeats"));
            assert!(html.contains("read (repeat 1 of 2): share of"));
        } else {
            assert_eq!(bars, 0, "{html}");
            assert!(!html.contains("lowest–highest"));
        }
        assert!(!html.contains("NaN"));
    }
}

/// Every text from user input is escaped in the page and in every SVG.
#[test]
fn user_text_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = r#"
name = "x\"><svg onload=alert(1)>"
description = "<script>alert(1)</script>"
time = "20ms"
qd = [1, 2]
workloads = ["4k-randread"]

[[target]]
label = "<script>alert(1)</script>"
sim = "x25e-64g"
baseline = true

[[target]]
label = "\"><svg onload=alert(2)>"
sim = "x25e-64g"
drives = 2
stripes = ["16k", "64k"]
"#;
    std::fs::write(dir.path().join("s.toml"), sweep).unwrap();
    ok(&ssdlab(
        dir.path(),
        &["sweep", "s.toml", "--db", "s.sqlite"],
    ));
    let (_, err) = ok(&ssdlab(
        dir.path(),
        &["report", "s.sqlite", "--html", "r.html"],
    ));
    assert!(err.contains("r.html"), "{err}");
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<svg onload"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2F;script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;svg onload=alert(2)&gt;"));
    // The line chart, the heat map, latency vs QD and the latency histogram of the one workload.
    assert_eq!(html.matches("<svg").count(), 4, "{html}");
    for svg in html.split("<svg").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        assert!(!svg.contains("<script") && !svg.contains("<svg"), "{svg}");
    }
}
