//! `ssdlab run` through the real binary: outputs, stop conditions, safety and bad input.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

/// Runs and parses stdout as JSON (failing if anything else is on stdout).
fn run_json(args: &[&str]) -> Value {
    let out = ssdlab()
        .arg("run")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ssdlab run {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

fn job(v: &Value) -> &Value {
    &v["jobs"][0]
}

/// Asserts a clean bad-input failure: exit 2, one line on stderr containing `needle`, no panic.
fn assert_bad_input(args: &[&str], needle: &str) {
    let out = ssdlab().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: expected '{needle}' in: {stderr}"
    );
}

fn little(v: &Value) -> f64 {
    let j = job(v);
    let mut n = 0.0;
    for k in ["read", "write"] {
        let o = &j[k];
        n += o["iops"].as_f64().unwrap() * o["lat_ns"]["mean"].as_f64().unwrap() / 1e9;
    }
    n
}

#[test]
fn null_target_json_is_fio_shaped() {
    let v = run_json(&[
        "--null", "--rw", "randread", "--bs", "4k", "--qd", "32", "--ios", "200000",
    ]);
    for k in ["fio version", "timestamp", "timestamp_ms", "time", "jobs"] {
        assert!(v.get(k).is_some(), "missing top-level {k}");
    }
    assert!(
        v.get("disk_util").is_none(),
        "no device: fio leaves disk_util out"
    );
    let j = job(&v);
    let r = &j["read"];
    assert_eq!(r["total_ios"], 200_000);
    assert_eq!(r["io_bytes"], 200_000u64 * 4096);
    assert!(r["iops"].as_f64().unwrap() > 0.0);
    for p in ["1.000000", "50.000000", "99.000000", "99.990000"] {
        assert!(
            r["clat_ns"]["percentile"][p].is_u64(),
            "missing percentile {p}"
        );
    }
    assert_eq!(j["write"]["total_ios"], 0);
    assert_eq!(j["job options"]["iodepth"], "32");
    assert_eq!(j["ssdlab"]["target"]["kind"], "null");
    assert!(j["iodepth_level"]["32"].as_f64().unwrap() > 90.0);
}

#[test]
fn littles_law_null_and_file() {
    let v = run_json(&["--null", "--qd", "16", "--jobs", "2", "--time", "1s"]);
    let n = little(&v);
    assert!(
        (n - 32.0).abs() / 32.0 < 0.10,
        "null: IOPS × mean latency = {n}, want ≈ 32"
    );

    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.img");
    let v = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--span",
        "64m",
        "--rw",
        "randrw",
        "--qd",
        "8",
        "--time",
        "1s",
    ]);
    let n = little(&v);
    assert!(
        (n - 8.0).abs() / 8.0 < 0.10,
        "file: IOPS × mean latency = {n}, want ≈ 8"
    );
}

#[test]
fn table_output_and_output_file() {
    let out = ssdlab()
        .args(["run", "--null", "--ios", "1000"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("IOPS") && text.contains("read") && text.contains("p99"),
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("out.json");
    let out = ssdlab()
        .args(["run", "--null", "--ios", "1000", "--json", "--output"])
        .arg(&o)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "--output keeps stdout empty");
    let v: Value = serde_json::from_slice(&std::fs::read(&o).unwrap()).unwrap();
    assert_eq!(job(&v)["read"]["total_ios"], 1000);
}

#[test]
fn stop_conditions_ios_bytes_and_ramp() {
    let v = run_json(&["--null", "--qd", "7", "--jobs", "3", "--ios", "10001"]);
    assert_eq!(
        job(&v)["read"]["total_ios"],
        10001,
        "exact I/O budget across workers"
    );
    let v = run_json(&["--null", "--bs", "64k", "--bytes", "1m"]);
    assert_eq!(job(&v)["read"]["io_bytes"], 1 << 20);
    let v = run_json(&["--null", "--ramp", "300ms", "--time", "300ms"]);
    let j = job(&v);
    let runtime = j["read"]["runtime"].as_u64().unwrap();
    // 300 ms measured after a 300 ms ramp: with the ramp counted it would be 600 ms or more
    // (the bound leaves a loaded machine room to overshoot the stop without a timing window).
    assert!(
        (300..600).contains(&runtime),
        "runtime {runtime} ms excludes the ramp"
    );
    assert!(j["ssdlab"]["ramp_ns"].as_u64().unwrap() >= 300_000_000);
}

fn file_with_markers(path: &Path, size: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8 + 1).collect();
    std::fs::write(path, &data).unwrap();
    data
}

#[test]
fn writes_stay_inside_the_region_and_files_are_never_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("region.img");
    let before = file_with_markers(&f, 8 << 20);
    let v = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--align",
        "512",
        "--offset",
        "2m",
        "--span",
        "1m",
        "--qd",
        "8",
        "--ios",
        "3000",
    ]);
    assert_eq!(job(&v)["write"]["total_ios"], 3000);
    let after = std::fs::read(&f).unwrap();
    assert_eq!(after.len(), before.len(), "never truncated or extended");
    assert_eq!(
        &after[..2 << 20],
        &before[..2 << 20],
        "bytes before the region untouched"
    );
    assert_eq!(
        &after[3 << 20..],
        &before[3 << 20..],
        "bytes after the region untouched"
    );
    assert_ne!(
        &after[2 << 20..3 << 20],
        &before[2 << 20..3 << 20],
        "the region was written"
    );

    // A smaller span on a larger file leaves its size alone; a larger one extends it with data.
    run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--span",
        "1m",
        "--ios",
        "10",
    ]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 8 << 20);
    run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--span",
        "12m",
        "--ios",
        "10",
    ]);
    let grown = std::fs::read(&f).unwrap();
    assert_eq!(grown.len(), 12 << 20);
    assert_eq!(&grown[..3 << 20], &after[..3 << 20]);
    assert!(
        grown[8 << 20..].iter().any(|&b| b != 0),
        "laid out with real data"
    );
}

#[test]
fn same_seed_same_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mk = |name: &str, seed: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, vec![0u8; 4 << 20]).unwrap();
        run_json(&[
            "--target",
            f.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--qd",
            "1",
            "--ios",
            "500",
            "--seed",
            seed,
        ]);
        std::fs::read(&f).unwrap()
    };
    let a = mk("a", "42");
    let b = mk("b", "42");
    let c = mk("c", "43");
    assert!(a == b, "same seed → same offsets and data");
    assert!(a != c, "another seed → other offsets");
}

#[test]
fn sync_engine_and_buffered_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.img");
    let v = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--span",
        "16m",
        "--engine",
        "sync",
        "--rw",
        "randrw",
        "--qd",
        "4",
        "--ios",
        "2000",
    ]);
    let j = job(&v);
    assert_eq!(j["ssdlab"]["target"]["engine"], "sync");
    let total =
        j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(total, 2000);
    let v = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--buffered",
        "--bs",
        "1000",
        "--align",
        "1",
        "--ios",
        "500",
    ]);
    assert_eq!(job(&v)["ssdlab"]["target"]["direct"], false);
}

#[test]
fn io_errors_are_reported_with_offsets() {
    let out = ssdlab()
        .args([
            "run",
            "--null",
            "--qd",
            "4",
            "--ios",
            "1000",
            "--json",
            "--inject-fault",
            "eio@10",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "I/O errors give exit code 1");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &job(&v)["ssdlab"];
    assert_eq!(s["stopped_on_error"], true);
    assert!(s["errors"][0]["error"].as_str().unwrap().contains("EIO"));
    assert!(s["errors"][0]["offset"].is_u64());
    assert!(job(&v)["read"]["total_ios"].as_u64().unwrap() < 1000);

    let out = ssdlab()
        .args([
            "run",
            "--null",
            "--rw",
            "randwrite",
            "--ios",
            "1000",
            "--json",
            "--inject-fault",
            "enospc@10+100",
            "--continue-on-error",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = job(&v);
    assert_eq!(j["ssdlab"]["stopped_on_error"], false);
    assert_eq!(
        j["write"]["total_ios"], 1000,
        "every I/O issued counts, as in fio's total_ios"
    );
    assert_eq!(
        j["write"]["io_bytes"],
        990 * 4096,
        "10 of 1000 failed, the rest completed"
    );
    assert!(j["ssdlab"]["errors"][0]["error"]
        .as_str()
        .unwrap()
        .contains("ENOSPC"));

    let out = ssdlab()
        .args([
            "run",
            "--null",
            "--ios",
            "100",
            "--json",
            "--inject-fault",
            "short@5",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(job(&v)["read"]["short_ios"], 1);
    assert!(job(&v)["ssdlab"]["errors"][0]["error"]
        .as_str()
        .unwrap()
        .contains("short read"));
}

#[test]
fn bad_input_gives_clean_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let missing_parent = format!("{d}/no/such/file");
    let existing = format!("{d}/exists.img");
    let before = file_with_markers(Path::new(&existing), 1 << 20);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--null", "--bs", "0"], "greater than 0"),
        (vec!["run", "--null", "--bs", "4q"], "unknown unit"),
        (vec!["run", "--null", "--bs", "-4k"], "negative"),
        (vec!["run", "--null", "--qd", "0"], "greater than 0"),
        (vec!["run", "--null", "--rw", "randomread"], "unknown --rw"),
        (vec!["run", "--null", "--time", "3x"], "time unit"),
        (
            vec!["run", "--target", &d, "--span", "1m"],
            "is a directory",
        ),
        (
            vec!["run", "--target", &missing_parent, "--span", "1m"],
            "does not exist",
        ),
        (
            vec!["run", "--target", "/dev/urandom"],
            "not a regular file, a block device, /dev/null or /dev/zero",
        ),
        (
            vec!["run", "--target", "/dev/zero"],
            "a character device has no size; give --span",
        ),
        (
            vec!["run", "--target", "/dev/zero", "--span", "1m"],
            "cannot be opened with O_DIRECT",
        ),
        (
            vec!["run", "--null", "--offset", "1t", "--span", "1m"],
            "beyond the end",
        ),
        (
            vec![
                "run", "--target", &existing, "--rw", "write", "--bs", "1000",
            ],
            "direct-I/O alignment",
        ),
        (
            vec![
                "run",
                "--target",
                &existing,
                "--rw",
                "read",
                "--read-pct",
                "30",
            ],
            "mixed workloads",
        ),
        (
            vec!["run", "--null", "--bs", "4k", "--align", "8k"],
            "alignment",
        ),
        (vec!["run"], "--target"),
    ];
    for (args, needle) in cases {
        assert_bad_input(&args, needle);
    }
    assert_eq!(
        std::fs::read(&existing).unwrap(),
        before,
        "nothing written by failed runs"
    );
    assert!(!Path::new(&missing_parent).exists());
}

#[cfg(unix)]
#[test]
fn permission_denied_is_clean() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let f = dir.path().join("ro.img");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ssdlab");
    // Root bypasses permissions: run ssdlab as the unprivileged user `nobody` (65534) then.
    let out = if rustix_is_root() {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args(["run", "--target", f.to_str().unwrap()])
            .output()
    } else {
        std::process::Command::new(&bin)
            .args(["run", "--target", f.to_str().unwrap()])
            .output()
    };
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            ssdlab_testkit::skip(&format!("the permission test: setpriv cannot be run: {e}"));
            return;
        }
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

fn rustix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[cfg(unix)]
#[test]
fn ctrl_c_ends_the_run_and_prints_results() {
    use std::io::Read;
    use std::process::{Command as StdCommand, Stdio};
    use std::time::{Duration, Instant};
    let bin = assert_cmd::cargo::cargo_bin("ssdlab");
    let mut child = StdCommand::new(bin)
        .args(["run", "--null", "--qd", "8", "--time", "60s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let t = Instant::now();
    let kill = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "stopped within one second"
    );
    assert_eq!(status.code(), Some(130));
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let v: Value = serde_json::from_str(&out).expect("results still printed as JSON");
    assert_eq!(job(&v)["ssdlab"]["interrupted"], true);
    assert!(job(&v)["read"]["total_ios"].as_u64().unwrap() > 0);
}

/// Started by mpirun as several ranks, a build without MPI refuses instead of running
/// independent copies (only rank 0 says so).
#[cfg(not(feature = "mpi"))]
#[test]
fn several_ranks_without_mpi_in_the_binary_are_refused() {
    let run = |rank: &str| {
        ssdlab()
            .args(["run", "--null", "--ios", "10"])
            .env("OMPI_COMM_WORLD_SIZE", "4")
            .env("OMPI_COMM_WORLD_RANK", rank)
            .output()
            .unwrap()
    };
    let out = run("0");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("built without MPI") && err.contains("--features mpi"),
        "{err}"
    );
    let out = run("2");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.is_empty() && out.stdout.is_empty());
    // One rank alone is just a run.
    let out = ssdlab()
        .args(["run", "--null", "--ios", "10"])
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .env("OMPI_COMM_WORLD_RANK", "0")
        .output()
        .unwrap();
    assert!(out.status.success());
    // The job flags need ranks.
    assert_bad_input(
        &["run", "--null", "--ios", "10", "--stonewall"],
        "several ranks",
    );
    assert_bad_input(
        &["run", "--target", "f-{rank}.img", "--span", "1m"],
        "{rank}",
    );
}

/// A target that is the file standard output goes to (`> FILE` with FILE the target, or
/// /dev/stdout) is refused before anything is written: its data and the report would
/// overwrite each other.
#[test]
fn a_target_that_is_standard_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    for target in [out.to_str().unwrap(), "/dev/stdout"] {
        let file = std::fs::File::create(&out).unwrap();
        let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("ssdlab"))
            .args(["run", "--target", target, "--span", "1m", "--rw", "write"])
            .args(["--time", "50ms", "--json"])
            .stdout(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{target}: {err}");
        assert!(err.contains("is the file standard output goes to"), "{err}");
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 0, "nothing written");
    }
}
