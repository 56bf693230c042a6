//! fio's formats through the binary: JSON+ read by fio's own `fio_jsonplus_clat2csv` (Debian's
//! fio package), log files named and written as fio writes them, and the checks on log paths.
//!
//! The clat2csv test needs `fio_jsonplus_clat2csv` (and fio, to compare with: Debian's `fio`
//! package, whose script also needs `python3-six`); without it the test prints
//! "skipping: <reason>", and fails instead when SSDLAB_REQUIRE_FIO=1 (as CI sets it).

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn ssdlab(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Prints why the test is skipped, or fails when CI requires every test to run.
fn require_or_skip(what: &str) {
    ssdlab_testkit::skip_without_fio(&format!("{what} is missing"));
}

fn find_tool(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The script run with the system's Python (Debian's fio package is made for it, with
/// python3-six), not whichever `python3` comes first in PATH.
fn script(tool: &Path) -> std::process::Command {
    let system = Path::new("/usr/bin/python3");
    if tool.starts_with("/usr/bin") && system.exists() {
        let mut c = std::process::Command::new(system);
        c.arg(tool);
        c
    } else {
        std::process::Command::new(tool)
    }
}

/// The CSV rows fio_jsonplus_clat2csv makes from `json` (header, rows).
fn clat2csv(tool: &Path, dir: &Path, json: &Path, stem: &str) -> (String, Vec<Vec<String>>) {
    let out = script(tool)
        .arg(json)
        .arg(dir.join(format!("{stem}.csv")))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let valid = script(tool)
        .arg(json)
        .arg(dir.join(format!("{stem}.csv")))
        .arg("--validate")
        .output()
        .unwrap();
    assert!(
        valid.status.success() && String::from_utf8_lossy(&valid.stdout).contains("validated"),
        "{}{}",
        String::from_utf8_lossy(&valid.stdout),
        String::from_utf8_lossy(&valid.stderr)
    );
    let text = std::fs::read_to_string(dir.join(format!("{stem}_job0.csv"))).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    let rows = lines
        .map(|l| l.split(',').map(|c| c.trim().to_string()).collect())
        .collect();
    (header, rows)
}

#[test]
fn json_plus_through_fio_jsonplus_clat2csv() {
    let Some(tool) = find_tool("fio_jsonplus_clat2csv") else {
        require_or_skip("fio_jsonplus_clat2csv (apt-get install fio python3-six)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ssdlab.json");
    let out = ssdlab(
        dir.path(),
        &[
            "run",
            "--sim",
            "vertex450-128g",
            "--rw",
            "randrw",
            "--span",
            "256m",
            "--qd",
            "8",
            "--time",
            "200ms",
            "--json-plus",
            "--output",
            "ssdlab.json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let (header, rows) = clat2csv(&tool, dir.path(), &json, "ssdlab");
    assert!(rows.len() > 10, "{} rows", rows.len());
    // Columns: nsec, then count/cumulative/percentile for read/write/trim × slat/clat/lat.
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| cols.iter().position(|c| *c == name).unwrap();
    for (ddir, lat) in [
        ("read", "clat_ns"),
        ("write", "lat_ns"),
        ("read", "slat_ns"),
    ] {
        let count = col(&format!("{ddir}_{lat}_count"));
        let cumulative = col(&format!("{ddir}_{lat}_cumulative"));
        let mut total = 0u64;
        let mut last_cum = 0u64;
        let bins = v["jobs"][0][ddir][lat]["bins"].as_object().unwrap();
        for r in &rows {
            if r[count].is_empty() {
                continue;
            }
            let ns: u64 = r[0].parse().unwrap();
            let c: u64 = r[count].parse().unwrap();
            assert_eq!(bins[&ns.to_string()].as_u64(), Some(c));
            // every value is one fio prints for one of its bins
            let idx = ssdlab_stats::fio::plat_val_to_idx(ns);
            assert_eq!(ssdlab_stats::fio::plat_idx_to_val(idx), ns);
            total += c;
            last_cum = r[cumulative].parse().unwrap();
        }
        let n = v["jobs"][0][ddir][lat]["N"].as_u64().unwrap();
        assert_eq!(total, n, "{ddir} {lat}");
        assert_eq!(last_cum, n, "{ddir} {lat}");
    }
    // The same header as for fio's own JSON+ (when fio is here to make one).
    if let Some(fio) = find_tool("fio") {
        let fio_json = dir.path().join("fio.json");
        let out = std::process::Command::new(fio)
            .current_dir(dir.path())
            .args([
                "--name=x",
                "--ioengine=null",
                "--size=64m",
                "--rw=randrw",
                "--bs=4k",
                "--time_based",
                "--runtime=200ms",
                "--lat_percentiles=1",
                "--slat_percentiles=1",
                "--output-format=json+",
                "--output=fio.json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (fio_header, fio_rows) = clat2csv(&tool, dir.path(), &fio_json, "fio");
        assert_eq!(fio_header, header);
        assert_eq!(fio_rows[0].len(), rows[0].len());
    } else {
        ssdlab_testkit::skip_without_fio(
            "fio is missing (apt-get install fio): its own JSON+ was not compared",
        );
    }
}

#[test]
fn logs_are_named_and_written_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = ssdlab(
        dir.path(),
        &[
            "run",
            "--sim",
            "vertex450-128g",
            "--rw",
            "randread",
            "--span",
            "256m",
            "--qd",
            "4",
            "--jobs",
            "2",
            "--time",
            "2500ms",
            "--write-bw-log",
            "t",
            "--write-iops-log",
            "t",
            "--write-lat-log",
            "t",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // With a bandwidth log the run's bw statistics use the log's windows (1 s), as fio's do.
    assert_eq!(v["jobs"][0]["read"]["bw_samples"], 2);
    assert_eq!(v["jobs"][0]["read"]["iops_samples"], 2);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "t_bw.1.log",
            "t_bw.2.log",
            "t_clat.1.log",
            "t_clat.2.log",
            "t_iops.1.log",
            "t_iops.2.log",
            "t_lat.1.log",
            "t_lat.2.log",
            "t_slat.1.log",
            "t_slat.2.log"
        ]
    );
    let bw = std::fs::read_to_string(dir.path().join("t_bw.1.log")).unwrap();
    let lines: Vec<&str> = bw.lines().collect();
    assert_eq!(lines.len(), 2, "complete windows only: {bw}");
    assert!(
        lines[0].starts_with("1000, ") && lines[0].ends_with(", 0, 0, 0"),
        "{bw}"
    );
    assert!(lines[1].starts_with("2000, "), "{bw}");
    let lat = std::fs::read_to_string(dir.path().join("t_lat.2.log")).unwrap();
    let last = lat.lines().last().unwrap();
    assert!(
        last.starts_with("2500, "),
        "the partial window ends the log: {lat}"
    );
    // The two jobs' IOPS add up to the run's.
    let iops = |f: &str| -> u64 {
        std::fs::read_to_string(dir.path().join(f))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .split(", ")
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    let sum = iops("t_iops.1.log") + iops("t_iops.2.log");
    let first_window = v["jobs"][0]["ssdlab"]["series"][0]["read_iops"]
        .as_f64()
        .unwrap();
    assert_eq!(sum as f64, first_window);
}

#[test]
fn log_paths_are_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // A log prefix in a directory that does not exist: bad input, nothing written.
    let out = ssdlab(
        dir.path(),
        &[
            "run",
            "--null",
            "--time",
            "100ms",
            "--write-bw-log",
            "nodir/x",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--write-bw-log nodir/x_bw.1.log"), "{err}");
    // A log file that is the target: refused, the target untouched.
    std::fs::write(dir.path().join("t_bw.1.log"), vec![7u8; 1 << 20]).unwrap();
    let out = ssdlab(
        dir.path(),
        &[
            "run",
            "--target",
            "t_bw.1.log",
            "--buffered",
            "--time",
            "100ms",
            "--write-bw-log",
            "t",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dir.path().join("t_bw.1.log")).unwrap(),
        vec![7u8; 1 << 20]
    );
    // --output naming one of the log files is refused too.
    let out = ssdlab(
        dir.path(),
        &[
            "run",
            "--null",
            "--time",
            "100ms",
            "--write-iops-log",
            "y",
            "--output",
            "y_iops.1.log",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("y_iops.1.log").exists());
    // --log-avg-msec without a log, and --html naming the --output file, are bad input.
    let out = ssdlab(dir.path(), &["run", "--null", "--log-avg-msec", "500"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ssdlab(
        dir.path(),
        &["run", "--null", "--output", "r.html", "--html", "r.html"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--html"));
    let mut left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the target file: {left:?}");
    left.clear();
}

#[test]
fn real_run_logs_and_disk_util() {
    let dir = tempfile::tempdir().unwrap();
    let out = ssdlab(
        dir.path(),
        &[
            "run",
            "--target",
            "f.img",
            "--span",
            "8m",
            "--buffered",
            "--time",
            "300ms",
            "--write-lat-log",
            "r",
            "--log-avg-msec",
            "100",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lat = std::fs::read_to_string(dir.path().join("r_clat.1.log")).unwrap();
    assert!(lat.lines().count() >= 3, "{lat}");
    assert!(lat.starts_with("100, "), "{lat}");
    // Shorter than a second: fio still has 500 ms windows of interval statistics (none here).
    assert_eq!(v["jobs"][0]["read"]["iops_samples"], 0);
    // A file's disk_util entry is its filesystem's block device (when it has one).
    if let Some(du) = v.get("disk_util") {
        let name = du[0]["name"].as_str().unwrap();
        assert!(Path::new("/sys/block").join(name).exists(), "{name}");
    }
}

#[test]
fn report_exports_a_sweep_for_fio_plot() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        r#"
name = "demo"
time = "100ms"
span = "1GiB"
qd = [1, 4]
workloads = ["4k-randread", "4k-randwrite"]

[[target]]
label = "single"
sim = "vertex450-128g"
baseline = true

[[target]]
label = "two drives"
sim = "vertex450-128g"
drives = 2
stripes = ["16k"]
"#,
    )
    .unwrap();
    let out = ssdlab(dir.path(), &["sweep", "s.toml", "--db", "s.sqlite"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A file where the directory should be: bad input, nothing written.
    std::fs::write(dir.path().join("taken"), b"x").unwrap();
    let out = ssdlab(dir.path(), &["report", "s.sqlite", "--fio-json", "taken"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ssdlab(dir.path(), &["report", "s.sqlite", "--fio-json", "plots"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The report's tables are plain ASCII in a pipe.
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.is_ascii() && text.contains("+--"), "{text}");
    let mut files: Vec<String> = Vec::new();
    let mut stack = vec![dir.path().join("plots")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir.path()).unwrap();
                files.push(rel.display().to_string());
            }
        }
    }
    files.sort();
    assert_eq!(
        files,
        [
            "plots/demo/single/4k/randread-1-1.json",
            "plots/demo/single/4k/randread-4-1.json",
            "plots/demo/single/4k/randwrite-1-1.json",
            "plots/demo/single/4k/randwrite-4-1.json",
            "plots/demo/two_drives-stripe-16k/4k/randread-1-1.json",
            "plots/demo/two_drives-stripe-16k/4k/randread-4-1.json",
            "plots/demo/two_drives-stripe-16k/4k/randwrite-1-1.json",
            "plots/demo/two_drives-stripe-16k/4k/randwrite-4-1.json",
        ]
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(&files[5])).unwrap()).unwrap();
    let opts = &v["jobs"][0]["job options"];
    assert_eq!(opts["rw"], "randread");
    assert_eq!(opts["iodepth"], "4");
    assert_eq!(opts["numjobs"], "1");
    assert!(v["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
}
