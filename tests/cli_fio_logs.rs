//! fio's log options in job files (`write_bw_log`, `write_iops_log`, `write_lat_log`,
//! `write_hist_log` with `log_avg_msec`, `log_hist_msec`, `log_hist_coarseness`, `log_offset`,
//! `per_job_logs`) through the real binary, on a scratch file and on a simulated drive: the
//! files fio 3.33 would name, their columns, times that never go back, bandwidth lines that add
//! up to the bytes moved, histogram bins that add up to the I/Os, fio's own histogram parser
//! (`fiologparser_hist.py`, when installed), and the refusals (bad values, a log naming an
//! input) that leave nothing behind.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command as Sys;

fn ssdlab(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("ssdlab").unwrap();
    c.current_dir(dir)
        .env("SSDLAB_STATE_DIR", dir.join(".state"));
    c
}

/// `ssdlab fio JOB --output-format=json [extra]` in `dir`: the JSON report.
fn run(dir: &Path, job: &str, extra: &[&str]) -> Value {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = ssdlab(dir)
        .args(["fio", "job.fio", "--output-format=json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ssdlab fio: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The `.log` files in `dir`, by name.
fn logs(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

/// A log's lines as numbers (every column).
fn rows(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            l.split(", ")
                .map(|c| c.parse().unwrap_or_else(|_| panic!("{path:?}: {l}")))
                .collect()
        })
        .collect()
}

fn job_ios(v: &Value, job: usize) -> (u64, u64) {
    let j = &v["jobs"][job];
    ["read", "write"].iter().fold((0, 0), |a, d| {
        (
            a.0 + j[d]["total_ios"].as_u64().unwrap(),
            a.1 + j[d]["io_bytes"].as_u64().unwrap(),
        )
    })
}

/// Checks the logs of one run: job 1 logs every I/O (5 columns), job 2 with `log_offset` and
/// averaged over 100 ms windows (6 columns), both with histogram lines.
fn check_run(dir: &Path, v: &Value, slat_lines: bool) {
    let want: BTreeSet<String> = ["bw", "iops", "lat", "clat", "slat", "clat_hist"]
        .iter()
        .flat_map(|k| [1, 2].map(|n| format!("lg_{k}.{n}.log")))
        .collect();
    assert_eq!(logs(dir), want);
    let (ios, bytes) = job_ios(v, 0);
    assert!(ios > 100, "{ios} I/Os");
    // Every I/O: time, value, direction, block size, priority.
    for k in ["bw", "iops", "lat", "clat", "slat"] {
        let r = rows(&dir.join(format!("lg_{k}.1.log")));
        if k == "slat" && !slat_lines {
            assert!(r.is_empty(), "fio's synchronous engines log no slat");
            continue;
        }
        assert_eq!(r.len() as u64, ios, "{k}: a line per I/O");
        assert!(
            r.iter().all(|l| l.len() == 5 && l[2] <= 1 && l[4] == 0),
            "{k}"
        );
        assert!(
            r.windows(2).all(|w| w[0][0] <= w[1][0]),
            "{k}: time goes back"
        );
        assert_eq!(r.iter().map(|l| l[3]).sum::<u64>(), bytes, "{k}: lengths");
        if k == "iops" {
            assert!(r.iter().all(|l| l[1] == 1));
        }
    }
    // Averaged: the bandwidth of each complete 100 ms window adds up to the bytes moved but
    // for the last, partial window (and the KiB/s rounded down in each).
    let (_, bytes2) = job_ios(v, 1);
    let runtime_ms = v["jobs"][1]["read"]["runtime"].as_u64().unwrap();
    let bw = rows(&dir.join("lg_bw.2.log"));
    assert!(bw.iter().all(|l| l.len() == 6 && l[3] == 0 && l[4] == 0));
    assert!(bw.windows(2).all(|w| w[0][0] <= w[1][0]));
    let moved: u64 = bw.iter().map(|l| l[1] * 1024 / 10).sum();
    let per_window = bytes2 * 100 / runtime_ms.max(1);
    assert!(
        moved <= bytes2 && bytes2 - moved <= per_window + 1024 * bw.len() as u64,
        "bw lines add up to {moved} of {bytes2} bytes (a window holds {per_window})"
    );
    let lat = rows(&dir.join("lg_clat.2.log"));
    let windows = lat.len() as u64;
    assert!(
        (runtime_ms / 100..=runtime_ms / 100 + 1).contains(&windows),
        "{windows} lines in {runtime_ms} ms: one per window"
    );
    // Histograms: every line 3 + 1856 columns (coarseness 0) or 3 + 116 (4); the bins add up
    // to the I/Os completed up to the last line (fio writes no line for the rest).
    for (n, cols) in [(1, 1856), (2, 116)] {
        let h = rows(&dir.join(format!("lg_clat_hist.{n}.log")));
        assert!(h.len() >= 3, "{n}: {} lines", h.len());
        assert!(h.iter().all(|l| l.len() == 3 + cols && l[2] == 4096));
        assert!(h.windows(2).all(|w| w[0][0] <= w[1][0]));
        let binned: u64 = h.iter().map(|l| l[3..].iter().sum::<u64>()).sum();
        let last = h.last().unwrap()[0];
        let clat = rows(&dir.join(format!("lg_clat.{n}.log")));
        let (total, after, at) = if n == 1 {
            (
                ios,
                clat.iter().filter(|l| l[0] > last).count() as u64,
                clat.iter().filter(|l| l[0] == last).count() as u64,
            )
        } else {
            // averaged clat lines: at most one window of I/Os after the last line
            let (ios2, _) = job_ios(v, 1);
            (ios2, 0, ios2 * 100 / runtime_ms.max(1) + 1)
        };
        assert!(
            binned + after <= total && total <= binned + after + at,
            "{n}: {binned} binned + {after} later of {total}"
        );
    }
}

const JOB: &str = "[global]\nsize=4m\nbs=4k\nrw=randrw\nrwmixread=70\nruntime=1\ntime_based\n\
write_bw_log=lg\nwrite_iops_log=lg\nwrite_lat_log=lg\nwrite_hist_log=lg\nlog_hist_msec=50\n\
[a]\nrate_iops=1500\nrw=randread\n[b]\nrw=read\nrate_iops=3000\nlog_avg_msec=100\nlog_offset=1\n\
log_hist_coarseness=4\n";

#[test]
fn logs_on_a_file_as_fio_names_and_writes_them() {
    let d = tempfile::tempdir().unwrap();
    let job = JOB.replace(
        "[global]\nsize",
        "[global]\nfilename=scratch\nioengine=psync\nsize",
    );
    let v = run(d.path(), &job, &[]);
    check_run(d.path(), &v, false);
    // An io_uring job logs submission latencies.
    let job = job.replace("ioengine=psync", "ioengine=io_uring");
    for f in logs(d.path()) {
        std::fs::remove_file(d.path().join(f)).unwrap();
    }
    let v = run(d.path(), &job, &[]);
    check_run(d.path(), &v, true);
}

#[test]
fn logs_on_a_simulated_drive_and_fios_histogram_parser() {
    let d = tempfile::tempdir().unwrap();
    let v = run(
        d.path(),
        &JOB.replace("[global]\n", "[global]\nioengine=io_uring\n"),
        &["--sim", "vertex450-128g"],
    );
    check_run(d.path(), &v, true);
    // fio's tools/hist/fiologparser_hist.py reads the histograms (Debian ships it gzipped).
    let script = Path::new("/usr/share/doc/fio/fiologparser_hist.py.gz");
    let python = Path::new("/usr/bin/python3");
    let have = script.exists()
        && Sys::new(python)
            .args(["-c", "import numpy, pandas"])
            .status()
            .is_ok_and(|s| s.success());
    if !have {
        ssdlab_testkit::skip_without_fio(
            "fiologparser_hist.py: fio, python3-numpy or python3-pandas is missing",
        );
        return;
    }
    let text = Sys::new("gzip").arg("-dc").arg(script).output().unwrap();
    assert!(text.status.success());
    let py = d.path().join("fiologparser_hist.py");
    std::fs::write(&py, &text.stdout).unwrap();
    for n in [1, 2] {
        let log = d.path().join(format!("lg_clat_hist.{n}.log"));
        let out = Sys::new(python)
            .arg(&py)
            .args(["--noweight", "-i", "50"])
            .arg(&log)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // end-time, samples, min, avg, median, 90%, 95%, 99%, max
        let samples: u64 = text
            .lines()
            .skip(1)
            .map(|l| l.split(", ").nth(1).unwrap().parse::<u64>().unwrap())
            .sum();
        let binned: u64 = rows(&log).iter().map(|l| l[3..].iter().sum::<u64>()).sum();
        assert_eq!(samples, binned, "{n}: {text}");
        // every latency the parser gives lies in the run's range
        let clat = &v["jobs"][n - 1]["read"]["clat_ns"];
        let (lo, hi) = (clat["min"].as_f64().unwrap(), clat["max"].as_f64().unwrap());
        for l in text.lines().skip(1) {
            let med: f64 = l.split(", ").nth(4).unwrap().parse().unwrap();
            assert!(
                med >= lo * 0.9 && med <= hi * 1.1,
                "{n}: median {med} of {lo}..{hi}"
            );
        }
    }
}

#[test]
fn per_job_logs_0_shares_one_file_and_names_default_to_the_job() {
    let d = tempfile::tempdir().unwrap();
    // fio appends a shared log to what the file held
    std::fs::write(d.path().join("all_iops.log"), "old\n").unwrap();
    let job = "[global]\nioengine=null\nsize=1m\nbs=64k\nper_job_logs=0\nwrite_iops_log=all\n\
               [a]\nnumjobs=2\n[b]\nper_job_logs=1\nwrite_iops_log\nlog_offset=1\n";
    let v = run(d.path(), job, &[]);
    assert_eq!(
        logs(d.path()),
        ["all_iops.log", "b_iops.3.log"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let shared = std::fs::read_to_string(d.path().join("all_iops.log")).unwrap();
    assert!(shared.starts_with("old\n"));
    // the two clones of a: 16 I/Os each, one after the other
    assert_eq!(shared.lines().count(), 1 + 32);
    let b = rows(&d.path().join("b_iops.3.log"));
    assert_eq!(b.len() as u64, job_ios(&v, 2).0);
    let offsets: Vec<u64> = b.iter().map(|l| l[4]).collect();
    assert_eq!(offsets, (0..16).map(|i| i * 65536).collect::<Vec<u64>>());
}

#[test]
fn bad_values_and_logs_over_inputs_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let refused = |job: &str, extra: &[&str], needles: &[&str]| {
        std::fs::write(d.path().join("job.fio"), job).unwrap();
        let before = logs(d.path());
        let out = ssdlab(d.path())
            .args(["fio", "job.fio"])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{job}: {err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "expected '{n}' in: {err}");
        }
        assert_eq!(logs(d.path()), before, "nothing created");
        assert!(!d.path().join("scratch").exists(), "nothing laid out");
    };
    let base = "[j]\nfilename=scratch\nsize=1m\nwrite_bw_log=x\n";
    refused(
        &format!("{base}log_avg_msec=-1\n"),
        &[],
        &["log_avg_msec", "job.fio line 5", "milliseconds"],
    );
    refused(
        &format!("{base}log_hist_coarseness=99\n"),
        &[],
        &["log_hist_coarseness", "job.fio line 5", "0 to 6"],
    );
    // compressed log files (fio's log_store_compressed); log_compression alone changes only
    // fio's memory, and runs
    refused(
        &format!("{base}log_store_compressed=1\n"),
        &[],
        &["log_store_compressed", "job.fio line 5"],
    );
    // a log over the job's own target, or over an iolog it replays
    std::fs::write(d.path().join("t_bw.1.log"), vec![0u8; 1 << 20]).unwrap();
    refused(
        "[j]\nfilename=t_bw.1.log\nsize=1m\nwrite_bw_log=t\n",
        &[],
        &["write_bw_log", "t_bw.1.log"],
    );
    assert_eq!(
        std::fs::read(d.path().join("t_bw.1.log")).unwrap(),
        vec![0u8; 1 << 20]
    );
    std::fs::write(
        d.path().join("r_clat.1.log"),
        "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf close\n",
    )
    .unwrap();
    refused(
        "[j]\nread_iolog=r_clat.1.log\nwrite_lat_log=r\n",
        &["--sim", "vertex450-128g"],
        &["write_lat_log", "r_clat.1.log"],
    );
    // a log directory that does not exist
    refused(
        "[j]\nioengine=null\nsize=1m\nwrite_iops_log=nodir/x\n",
        &[],
        &["write_iops_log", "nodir/x_iops.1.log"],
    );
}
