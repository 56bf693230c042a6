//! `ssdlab fio` through the real binary: fio's example job files (random and sequential reads
//! and writes, mixed, stonewalled jobs, numjobs) on a file and on a preset, unsupported keys
//! named with their lines, fio's command-line form, replay of fio iologs and blktrace traces,
//! write_iolog, outputs against inputs, and the block-device safety of job files.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Sys;

fn ssdlab(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("ssdlab").unwrap();
    c.current_dir(dir)
        .env("SSDLAB_STATE_DIR", dir.join(".state"));
    c
}

/// Runs `ssdlab fio ARGS --output-format=json` in `dir` and parses stdout.
fn fio_json(dir: &Path, args: &[&str]) -> Value {
    let out = ssdlab(dir)
        .arg("fio")
        .args(args)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ssdlab fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

/// Runs `ssdlab fio ARGS --output-format=json` that a job's error ends: exit 1, and the JSON
/// of what ran on stdout.
fn fio_json_failed(dir: &Path, args: &[&str]) -> Value {
    let out = ssdlab(dir)
        .arg("fio")
        .args(args)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "ssdlab fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

/// Asserts a clean refusal: exit 2, nothing on stdout, one line on stderr containing every
/// needle.
fn refused(dir: &Path, args: &[&str], needles: &[&str]) -> String {
    let out = ssdlab(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected '{n}' in: {err}");
    }
    err
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn jobs(v: &Value) -> &Vec<Value> {
    v["jobs"].as_array().unwrap()
}

fn ios(j: &Value, kind: &str) -> u64 {
    j[kind]["total_ios"].as_u64().unwrap()
}

/// fio's examples/fio-rand-RW.fio, fio-seq-read.fio, fio-rand-write.fio and fio-seq-write.fio
/// shrunk to a 16 MiB file and a second (each job file as shipped with fio, but for size and
/// runtime, and direct=1 so the page cache does not decide the result).
const RAND_RW: &str = "; fio-rand-RW.job for fiotest\n\n[global]\nname=fio-rand-RW\n\
filename=fio-rand-RW\nrw=randrw\nrwmixread=60\nrwmixwrite=40\nbs=4K\ndirect=1\nnumjobs=4\n\
time_based\nruntime=1\n\n[file1]\nsize=16m\nioengine=libaio\niodepth=16\n";

const SEQ_READ: &str = "[global]\nname=fio-seq-reads\nfilename=fio-seq-reads\nrw=read\n\
bs=256K\ndirect=1\nnumjobs=1\ntime_based\nruntime=1\n\n[file1]\nsize=16m\nioengine=libaio\n\
iodepth=16\n";

const RAND_WRITE: &str = "; fio-rand-write.job for fiotest\n\n[global]\nname=fio-rand-write\n\
filename=fio-rand-write\nrw=randwrite\nbs=4K\ndirect=1\nnumjobs=4\ntime_based\nruntime=1\n\n\
[file1]\nsize=16m\nioengine=libaio\niodepth=16\n";

/// fio's examples/ssd-test.fio: four stonewalled jobs on one file.
const SSD_TEST: &str = "# Do some important numbers on SSD drives\n[global]\nbs=4k\n\
ioengine=libaio\niodepth=4\nsize=16m\ndirect=1\nruntime=1\ndirectory=DIR\n\
filename=ssd.test.file\n\n[seq-read]\nrw=read\nstonewall\n\n[rand-read]\nrw=randread\n\
stonewall\n\n[seq-write]\nrw=write\nstonewall\n\n[rand-write]\nrw=randwrite\nstonewall\n";

#[test]
fn example_job_files_run_on_a_file() {
    let d = tempfile::tempdir().unwrap();
    // Mixed, numjobs=4 without group_reporting: one entry per clone, as fio prints.
    let f = write(d.path(), "fio-rand-RW.fio", RAND_RW);
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let js = jobs(&v);
    assert_eq!(js.len(), 4, "one entry per clone");
    for j in js {
        assert_eq!(j["jobname"], "file1");
        assert_eq!(j["groupid"], 0);
        let (r, w) = (ios(j, "read"), ios(j, "write"));
        assert!(r > 0 && w > 0, "{r} {w}");
        let share = r as f64 / (r + w) as f64;
        assert!((0.5..0.7).contains(&share), "rwmixread=60: {share}");
        assert!(j["read"]["runtime"].as_u64().unwrap() >= 1000);
        assert_eq!(j["job options"]["ioengine"], "libaio");
    }
    assert_eq!(v["global options"]["rwmixread"], "60");
    assert_eq!(
        std::fs::metadata(d.path().join("fio-rand-RW"))
            .unwrap()
            .len(),
        16 << 20,
        "fio lays out size="
    );
    // Sequential reads, 256 KiB.
    let f = write(d.path(), "fio-seq-read.fio", SEQ_READ);
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let j = &jobs(&v)[0];
    assert_eq!(j["write"]["total_ios"], 0);
    assert!(ios(j, "read") > 0);
    assert_eq!(
        j["read"]["io_bytes"].as_u64().unwrap(),
        ios(j, "read") * 256 * 1024
    );
    // Random writes with group_reporting from the command line: one entry for the 4 clones.
    let f = write(d.path(), "fio-rand-write.fio", RAND_WRITE);
    let v = fio_json(d.path(), &["--group_reporting", f.to_str().unwrap()]);
    assert_eq!(jobs(&v).len(), 1);
    assert!(ios(&jobs(&v)[0], "write") > 0);
}

#[test]
fn stonewalled_jobs_run_one_after_the_other() {
    let d = tempfile::tempdir().unwrap();
    let text = SSD_TEST.replace("DIR", d.path().to_str().unwrap());
    let f = write(d.path(), "ssd-test.fio", &text);
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let js = jobs(&v);
    let names: Vec<&str> = js.iter().map(|j| j["jobname"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        vec!["seq-read", "rand-read", "seq-write", "rand-write"]
    );
    let groups: Vec<u64> = js.iter().map(|j| j["groupid"].as_u64().unwrap()).collect();
    assert_eq!(groups, vec![0, 1, 2, 3]);
    // Not time_based: each job reads or writes the 16 MiB once (or stops at runtime=1).
    for j in js {
        let bytes =
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap();
        assert!(bytes > 0 && bytes <= 16 << 20, "{bytes}");
    }
    // Each wave starts after the one before has finished.
    for w in js.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let start = |j: &Value| j["job_start"].as_u64().unwrap();
        let ran = a["ssdlab"]["runtime_ns"].as_u64().unwrap() / 1_000_000;
        assert!(
            start(b) + 1 >= start(a) + ran,
            "{} {} {}",
            start(a),
            ran,
            start(b)
        );
    }
    // The normal text: fio's layout.
    let out = ssdlab(d.path()).arg("fio").arg(&f).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "seq-read: (groupid=0, jobs=1): err= 0",
        "  read: IOPS=",
        "clat percentiles",
        "  IO depths    : 1=",
        "Run status group 3 (all jobs):",
        "  WRITE: bw=",
        "   READ: bw=",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn the_same_job_file_runs_on_a_preset() {
    let d = tempfile::tempdir().unwrap();
    let text = SSD_TEST.replace("DIR", "/nonexistent-dir");
    let f = write(d.path(), "ssd-test.fio", &text);
    let run = || fio_json(d.path(), &["--sim", "vertex450-128g", f.to_str().unwrap()]);
    let v = run();
    let js = jobs(&v);
    assert_eq!(js.len(), 4);
    for j in js {
        assert!(ios(j, "read") + ios(j, "write") > 0);
        assert_eq!(j["ssdlab"]["target"]["kind"], "sim");
    }
    // Later jobs see what earlier ones wrote (the counters cover each job's own window, the
    // mapped space is the drive's state), and the simulated clock runs on from job to job.
    let dev = |j: &Value, k: &str| j["ssdlab"]["device"][0][k].as_u64().unwrap();
    assert_eq!(dev(&js[0], "host_writes"), 0);
    assert!(dev(&js[2], "host_writes") > 0);
    assert!(dev(&js[2], "mapped_bytes") > dev(&js[0], "mapped_bytes"));
    assert!(dev(&js[3], "mapped_bytes") >= dev(&js[2], "mapped_bytes"));
    for w in js.windows(2) {
        assert!(w[1]["job_start"].as_u64() > w[0]["job_start"].as_u64());
    }
    assert!(
        !d.path().join("ssd.test.file").exists(),
        "nothing real is touched"
    );
    // Deterministic: the same job file gives the same result.
    let again = run();
    for (a, b) in js.iter().zip(jobs(&again)) {
        assert_eq!(a["read"]["total_ios"], b["read"]["total_ios"]);
        assert_eq!(a["write"]["clat_ns"], b["write"]["clat_ns"]);
    }
    // An array, and jobs of one wave sharing the drive.
    let f2 = write(
        d.path(),
        "two.fio",
        "[global]\nsize=1g\nruntime=200ms\ntime_based\nioengine=io_uring\n[a]\nrw=randread\niodepth=8\n[b]\nrw=randwrite\niodepth=2\n",
    );
    let v = fio_json(
        d.path(),
        &[
            "--sim",
            "vertex450-128g",
            "--drives",
            "2",
            "--stripe",
            "64k",
            f2.to_str().unwrap(),
        ],
    );
    let js = jobs(&v);
    assert_eq!(js.len(), 2);
    assert!(ios(&js[0], "read") > 0 && ios(&js[1], "write") > 0);
    // The array (with its members' averages in fio's aggr_* keys), then its two members: each
    // once, though both jobs ran on them.
    let du = v["disk_util"].as_array().unwrap();
    assert_eq!(du.len(), 3, "the array and two members, once each");
    assert!(du[0].get("aggr_util").is_some(), "{:?}", du[0]);
    let mut names: Vec<&str> = du.iter().map(|d| d["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 3);
}

#[test]
fn unsupported_keys_are_named_with_their_lines_and_nothing_runs() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "u.fio",
        "[global]\nfilename=never-made\nsize=1m\nexec_prerun=ls\n[a]\nrw=randread\nthinkcycles=500\nnumjobs=2\n",
    );
    let err = refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &[
            "exec_prerun",
            "u.fio line 4",
            "thinkcycles",
            "u.fio line 7",
            "--ignore-unsupported",
        ],
    );
    assert!(err.contains("not supported"), "{err}");
    assert!(!d.path().join("never-made").exists(), "nothing was created");
    // Typos and bad values are errors, even with --ignore-unsupported.
    let f = write(
        d.path(),
        "t.fio",
        "[a]\nfilename=x\nsize=1m\niodeph=4\nbs=4q\n",
    );
    refused(
        d.path(),
        &["fio", "--ignore-unsupported", f.to_str().unwrap()],
        &["did you mean iodepth", "t.fio line 4", "4q", "t.fio line 5"],
    );
    // --ignore-unsupported runs without them and says what it ignored.
    let f = write(
        d.path(),
        "i.fio",
        "[a]\nfilename=ign.img\nsize=1m\nrw=randread\ncgroup_weight=500\nnumber_ios=50\n",
    );
    let out = ssdlab(d.path())
        .args(["fio", "--ignore-unsupported", "--json", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ignoring") && err.contains("cgroup_weight"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&jobs(&v)[0], "read"), 50);
    // ... and in the output itself: JSON and the normal text list every ignored option of the
    // job, global ones included.
    let ignored = jobs(&v)[0]["ssdlab"]["ignored_options"].as_array().unwrap();
    assert_eq!(ignored.len(), 1, "{ignored:?}");
    assert_eq!(ignored[0]["option"], "cgroup_weight");
    assert!(ignored[0]["at"].as_str().unwrap().ends_with("i.fio line 5"));
    assert!(ignored[0]["why"].as_str().unwrap().contains("cgroups"));
    let f = write(
        d.path(),
        "g.fio",
        "[global]\ncgroup_weight=500\n[a]\nfilename=ign.img\nsize=1m\nnumber_ios=10\n\
         ioengine=io_uring_cmd\n[b]\nfilename=ign.img\nsize=1m\nnumber_ios=10\n",
    );
    let out = ssdlab(d.path())
        .args(["fio", "--ignore-unsupported", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("ignored")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].contains("cgroup_weight (") && lines[0].contains("g.fio line 2"));
    assert!(lines[1].contains("ioengine (") && lines[1].contains("io_uring_cmd"));
    assert!(lines[2].contains("cgroup_weight ("), "{text}");
}

/// Every option fio knows is either run or refused as not supported (never "unknown"): the
/// options the issue found refused as unknown, from fio's examples (core, engine and profile
/// options).
#[test]
fn options_fio_knows_are_never_unknown() {
    let d = tempfile::tempdir().unwrap();
    // examples/waitfor.fio's `threads=1` is the tiobench profile's option: fio accepts it
    // everywhere, and it changes nothing without the profile.
    let f = write(
        d.path(),
        "w.fio",
        "[global]\nthreads=1\nfilename=w.img\nsize=1m\n[a]\nrw=read\n",
    );
    fio_json(d.path(), &[f.to_str().unwrap()]);
    for (engine, opt) in [
        ("cpuio", "cpuload=50"),
        ("e4defrag", "donorname=x"),
        ("exec", "program=/bin/true"),
        ("net", "port=8888"),
        ("net", "hostname=localhost"),
        ("sg", "sg_write_mode=verify"),
        ("rbd", "pool=p"),
        ("rados", "clientname=c"),
        ("mtd", "skip_bad=1"),
        ("nfs", "nfs_url=nfs://127.0.0.1/x"),
    ] {
        let f = write(
            d.path(),
            "e.fio",
            &format!("[a]\nfilename=e.img\nsize=1m\nioengine={engine}\n{opt}\n"),
        );
        let key = opt.split('=').next().unwrap();
        let err = refused(
            d.path(),
            &["fio", f.to_str().unwrap()],
            &["not supported by ssdlab", key, "e.fio line 5", engine],
        );
        assert!(!err.contains("unknown"), "{err}");
    }
    assert!(!d.path().join("e.img").exists());
}

/// fio 3.33 applies replay_skip to blktrace replays only: a fio iolog is replayed whole, with a
/// note saying so.
#[test]
fn replay_skip_does_not_skip_entries_of_an_iolog() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    write(
        d.path(),
        "t.log",
        "fio version 2 iolog\ndata add\ndata open\ndata read 0 4096\ndata read 8192 4096\n\
         data write 65536 8192\ndata read 4096 4096\ndata close\n",
    );
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--name=r",
            "--read_iolog=t.log",
            "--replay_skip=write",
        ])
        .arg("--output-format=json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("replay_skip has no effect on a fio iolog"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &jobs(&v)[0];
    assert_eq!((ios(j, "read"), ios(j, "write")), (3, 1));
}

/// A reporting group's entry, as fio's: the first job's name, the last job's options.
#[test]
fn a_reporting_groups_entry_has_the_last_jobs_options() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "g.fio",
        "[global]\nioengine=null\nsize=1m\ngroup_reporting\n[a]\nrw=read\n[b]\nrw=write\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    assert_eq!(jobs(&v).len(), 1);
    assert_eq!(jobs(&v)[0]["jobname"], "a");
    assert_eq!(
        jobs(&v)[0]["job options"],
        serde_json::json!({"rw": "write"})
    );
}

/// `allow_file_create=0`: a missing file is refused before anything is created (fio fails
/// the job); an existing one runs.
#[test]
fn allow_file_create_0_never_creates_a_file() {
    let d = tempfile::tempdir().unwrap();
    refused(
        d.path(),
        &[
            "fio",
            "--name=a",
            "--filename=nf",
            "--size=64k",
            "--rw=read",
            "--allow_file_create=0",
        ],
        &["nf does not exist, and allow_file_create=0 forbids creating it"],
    );
    assert!(!d.path().join("nf").exists());
    std::fs::write(d.path().join("ef"), vec![1u8; 65536]).unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--name=a",
            "--filename=ef",
            "--size=64k",
            "--rw=read",
            "--allow_file_create=0",
        ],
    );
    assert_eq!(ios(&jobs(&v)[0], "read"), 16);
}

/// fio's own command-line options (not job options): the ETA ones change nothing and say so,
/// `--readonly` refuses what would write, every other one is refused by name — none unknown.
#[test]
fn fios_command_line_options_are_taken_or_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let job = ["--name=a", "--ioengine=null", "--size=1m", "--rw=read"];
    let out = ssdlab(d.path())
        .args(["fio", "--eta=never", "--eta-newline", "1"])
        .args(job)
        .arg("--output-format=json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("--eta=never: no effect") && err.contains("--eta-newline=1: no effect"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&jobs(&v)[0], "read"), 256);
    for (opt, why) in [
        ("--minimal", "terse output"),
        ("--terse-version=3", "terse output"),
        ("--status-interval=1", "periodic full status"),
        ("--debug=io", "debug output"),
        ("--max-jobs=4", "limit on the number of jobs"),
    ] {
        let mut args = vec!["fio", opt];
        args.extend(job);
        let err = refused(d.path(), &args, &[opt, "not supported by ssdlab", why]);
        assert!(!err.contains("unknown"), "{err}");
    }
    // --readonly: a writer is refused, so is a layout; a read of an existing file runs
    refused(
        d.path(),
        &[
            "fio",
            "--readonly",
            "--name=w",
            "--filename=f",
            "--size=64k",
            "--rw=write",
        ],
        &["job w: trim and write operations are not allowed with the --readonly parameter"],
    );
    refused(
        d.path(),
        &[
            "fio",
            "--readonly",
            "--name=r",
            "--filename=f",
            "--size=64k",
            "--rw=read",
        ],
        &["f: the file would be created or extended", "--readonly"],
    );
    assert!(!d.path().join("f").exists());
    std::fs::write(d.path().join("g"), vec![7u8; 65536]).unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--readonly",
            "--name=r",
            "--filename=g",
            "--size=64k",
            "--rw=read",
        ],
    );
    assert_eq!(ios(&jobs(&v)[0], "read"), 16);
    // a longer read than the file would extend it: refused (after the note that it is short)
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--readonly",
            "--name=r",
            "--filename=g",
            "--size=128k",
            "--rw=read",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("g: the file would be created or extended")
    );
    assert_eq!(std::fs::metadata(d.path().join("g")).unwrap().len(), 65536);
}

#[test]
fn fio_command_lines_run_by_changing_one_word() {
    let d = tempfile::tempdir().unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--name=x",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=32",
            "--size=8m",
            "--filename=cl.img",
            "--ioengine=io_uring",
            "--direct=1",
            "--number_ios=2000",
        ],
    );
    let j = &jobs(&v)[0];
    assert_eq!(j["jobname"], "x");
    assert_eq!(ios(j, "read"), 2000);
    assert_eq!(j["job options"]["iodepth"], "32");
    assert_eq!(j["ssdlab"]["spec"]["qd"], 32);
    // Options before the first --name are global; each --name starts a job; values may be
    // separate arguments, as fio's getopt allows.
    let v = fio_json(
        d.path(),
        &[
            "--filename",
            "cl.img",
            "--size=8m",
            "--number_ios=100",
            "--name=a",
            "--rw=read",
            "--name=b",
            "--rw",
            "write",
            "--bs",
            "8k",
        ],
    );
    let js = jobs(&v);
    assert_eq!(js.len(), 2);
    assert_eq!(ios(&js[0], "read"), 100);
    assert_eq!(ios(&js[1], "write"), 100);
    assert_eq!(js[1]["write"]["io_bytes"], 100 * 8192);
    // No --name: no jobs, as in fio.
    refused(
        d.path(),
        &["fio", "--rw=read", "--filename=cl.img"],
        &["no jobs"],
    );
    refused(
        d.path(),
        &["fio", "--name=x", "--filenme=a"],
        &["did you mean --filename"],
    );
}

#[test]
fn run_takes_fio_names_and_answers_typos() {
    let d = tempfile::tempdir().unwrap();
    let out = ssdlab(d.path())
        .args([
            "run",
            "--filename",
            "r.img",
            "--size",
            "4m",
            "--iodepth",
            "4",
            "--numjobs",
            "2",
            "--rwmixread",
            "70",
            "--rw",
            "randrw",
            "--runtime",
            "1",
            "--ios",
            "400",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["jobs"][0]["ssdlab"]["spec"];
    assert_eq!(
        (s["qd"].as_u64(), s["jobs"].as_u64(), s["read_pct"].as_u64()),
        (Some(4), Some(2), Some(70))
    );
    assert_eq!(s["span"], 4 << 20);
    refused(
        d.path(),
        &["run", "--null", "--iodeph", "4"],
        &["did you mean --iodepth"],
    );
    refused(
        d.path(),
        &["run", "--null", "--blocksize=8k"],
        &["--bs", "ssdlab fio"],
    );
    refused(d.path(), &["run", "--null", "--direct=1"], &["O_DIRECT"]);
    refused(
        d.path(),
        &["run", "--null", "--read_pct", "5"],
        &["--read-pct"],
    );
}

/// A fio v3 iolog: 40 reads of 4 KiB, 2 ms apart.
fn spaced_trace(dir: &Path, name: &str, file: &str, gap_us: u64, n: u64) -> PathBuf {
    let mut t = format!("fio version 3 iolog\n0 {file} add\n0 {file} open\n");
    for i in 0..n {
        t.push_str(&format!(
            "{} {file} read {} 4096\n",
            10 + i * gap_us,
            i * 4096
        ));
    }
    t.push_str(&format!("{} {file} close\n", 20 + n * gap_us));
    write(dir, name, &t)
}

#[test]
fn replays_keep_the_recorded_timing_unless_told_not_to() {
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("rep.img");
    std::fs::write(&img, vec![1u8; 1 << 20]).unwrap();
    let trace = spaced_trace(d.path(), "t.log", "/somewhere/else", 2000, 40);
    let slow = spaced_trace(d.path(), "slow.log", "/somewhere/else", 20_000, 11);
    let runtime_of = |trace: &Path, extra: &[&str]| -> (u64, u64) {
        let mut args = vec![
            "--name=r".to_string(),
            format!("--read_iolog={}", trace.display()),
            format!("--replay_redirect={}", img.display()),
            "--ioengine=io_uring".into(),
            "--direct=1".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let v = fio_json(d.path(), &a);
        let j = &jobs(&v)[0];
        (
            ios(j, "read"),
            j["ssdlab"]["runtime_ns"].as_u64().unwrap() / 1_000_000,
        )
    };
    let runtime = |extra: &[&str]| runtime_of(&trace, extra);
    // Timings on a shared machine only stretch: the recorded gaps are lower bounds, and the
    // comparisons between runs are made side by side, not against absolute ceilings.
    // Each is the shortest of 3 runs (a stall of the machine only lengthens a run).
    let best = |extra: &[&str]| {
        (0..3)
            .map(|_| runtime(extra))
            .inspect(|&(n, _)| assert_eq!(n, 40))
            .map(|(_, ms)| ms)
            .min()
            .unwrap()
    };
    // 40 ops, 39 gaps of 2 ms: at least 78 ms.
    let ms = best(&[]);
    assert!(ms >= 70, "{ms} ms");
    // Twice the rate: at least 39 ms, and faster than at the recorded rate.
    let fast = best(&["--replay_time_scale=200"]);
    assert!(fast < ms && fast >= 30, "{fast} ms vs {ms} ms");
    // No stall: as fast as the file allows (11 reads recorded over 200 ms).
    let (n, quick) = runtime_of(&slow, &["--replay_no_stall=1"]);
    assert_eq!(n, 11);
    let (_, stalled) = runtime_of(&slow, &[]);
    assert!(stalled >= 195, "{stalled} ms");
    assert!(
        quick * 2 < stalled,
        "{quick} ms without stalls vs {stalled} ms"
    );
    // Without replay_redirect the trace's own file is the target; it must exist or get a size.
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--name=r",
            &format!("--read_iolog={}", trace.display()),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn write_iolog_records_a_run_that_replays_the_same_ops() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "rec.fio",
        "[rec]\nfilename=rec.img\nsize=4m\nrw=randrw\nbs=8k\niodepth=4\nioengine=io_uring\n\
         direct=1\nnumber_ios=300\nwrite_iolog=rec.log\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let (r, w) = (ios(&jobs(&v)[0], "read"), ios(&jobs(&v)[0], "write"));
    assert_eq!(r + w, 300);
    let log = std::fs::read_to_string(d.path().join("rec.log")).unwrap();
    assert!(log.starts_with("fio version 3 iolog\n"));
    assert!(log.contains("rec.img add") && log.contains("rec.img close"));
    assert_eq!(
        log.lines().filter(|l| l.contains(" read ")).count() as u64,
        r
    );
    assert_eq!(
        log.lines().filter(|l| l.contains(" write ")).count() as u64,
        w
    );
    // Replayed on the file it names, and on a simulated drive: the same ops.
    let v = fio_json(
        d.path(),
        &[
            "--name=back",
            "--read_iolog=rec.log",
            "--ioengine=io_uring",
            "--direct=1",
        ],
    );
    assert_eq!(
        (ios(&jobs(&v)[0], "read"), ios(&jobs(&v)[0], "write")),
        (r, w)
    );
    let v = fio_json(
        d.path(),
        &[
            "--sim",
            "c300-256g",
            "--name=back",
            "--read_iolog=rec.log",
            "--replay_no_stall=1",
        ],
    );
    assert_eq!(
        (ios(&jobs(&v)[0], "read"), ios(&jobs(&v)[0], "write")),
        (r, w)
    );
    // The log is an output: it may not be the job file, nor an input of the run.
    let f = write(
        d.path(),
        "bad.fio",
        "[rec]\nfilename=rec.img\nsize=4m\nwrite_iolog=bad.fio\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["write_iolog", "bad.fio"],
    );
    refused(
        d.path(),
        &[
            "fio",
            "--name=x",
            "--filename=rec.img",
            "--size=4m",
            "--output",
            "rec.img",
        ],
        &["--output"],
    );
}

/// A blktrace record (little-endian `struct blk_io_trace`).
fn blk(time: u64, sector: u64, bytes: u32, action: u32, dev: u32) -> Vec<u8> {
    ssdlab_workload::replay::blktrace_record(time, sector, bytes, action, dev).to_vec()
}

#[test]
fn blktrace_binary_traces_replay_on_a_preset_and_a_file() {
    use ssdlab_workload::replay::blk_action::*;
    let d = tempfile::tempdir().unwrap();
    let dev = device(259, 7);
    let mut data = Vec::new();
    for i in 0..64u64 {
        let action = if i % 4 == 0 { QUEUE_WRITE } else { QUEUE_READ };
        data.extend(blk(i * 100_000, i * 16, 8192, action, dev));
        data.extend(blk(
            i * 100_000 + 50_000,
            i * 16,
            8192,
            if i % 4 == 0 {
                COMPLETE_WRITE
            } else {
                COMPLETE_READ
            },
            dev,
        ));
    }
    data.extend(blk(7_000_000, 0, 4096, QUEUE_DISCARD, dev));
    std::fs::write(d.path().join("trace.bin"), &data).unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--sim",
            "vertex450-128g",
            "--name=bt",
            "--read_iolog=trace.bin",
        ],
    );
    let j = &jobs(&v)[0];
    assert_eq!(
        (ios(j, "read"), ios(j, "write"), ios(j, "trim")),
        (48, 16, 1)
    );
    // 64 ops 100 µs apart plus the trim: about 7 ms of simulated time.
    let ms = j["ssdlab"]["runtime_ns"].as_u64().unwrap() / 1_000_000;
    assert!((6..20).contains(&ms), "{ms}");
    // Real targets take no trims: refused with the way out, then replayed without them.
    let img = d.path().join("bt.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let redirect = format!("--replay_redirect={}", img.display());
    refused(
        d.path(),
        &[
            "fio",
            "--name=bt",
            "--read_iolog=trace.bin",
            &redirect,
            "--ioengine=io_uring",
        ],
        &["trims", "replay_skip=trim"],
    );
    let v = fio_json(
        d.path(),
        &[
            "--name=bt",
            "--read_iolog=trace.bin",
            &redirect,
            "--replay_skip=trim",
            "--direct=1",
            "--ioengine=io_uring",
        ],
    );
    let j = &jobs(&v)[0];
    assert_eq!(
        (ios(j, "read"), ios(j, "write"), ios(j, "trim")),
        (48, 16, 0)
    );
    assert_eq!(
        j["ssdlab"]["spec"]["qd"], 1,
        "iodepth was given (1), not the probed depth"
    );
}

#[test]
fn verify_writes_then_reads_back() {
    let d = tempfile::tempdir().unwrap();
    // examples/basic-verify.fio on a file.
    let f = write(
        d.path(),
        "basic-verify.fio",
        "[write-and-verify]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=libaio\niodepth=16\n\
         verify=crc32c\nfilename=v.img\nsize=2m\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let j = &jobs(&v)[0];
    assert_eq!(ios(j, "write"), 512, "each block once (fio's random map)");
    assert_eq!(ios(j, "read"), 512, "then read back");
    assert_eq!(j["ssdlab"]["verify"]["sectors_ok"], 4096);
    assert_eq!(j["ssdlab"]["verify"]["sectors_bad"], 0);
}

/// fio's verify with loops: each loop is read back before the next (fio's `thread_main`: `do_io`
/// then `do_verify`, once a loop), so the iolog has a loop's writes, its reads, and again;
/// within a budget of io_size times loops, a loop left with nothing to write ends the job.
#[test]
fn verify_reads_back_after_each_loop() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "loops.fio",
        "[global]\nsize=64k\nbs=4k\nverify=crc32c\nrw=randwrite\n\
         [two]\nfilename=a.img\nloops=2\nwrite_iolog=a.log\n\
         [left]\nstonewall\nfilename=b.img\nio_size=32k\nloops=3\nwrite_iolog=b.log\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let dirs = |log: &str| -> String {
        std::fs::read_to_string(d.path().join(log))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().find(|w| *w == "read" || *w == "write"))
            .map(|w| &w[..1])
            .collect()
    };
    let (w16, r16, w8, r8) = ("w".repeat(16), "r".repeat(16), "w".repeat(8), "r".repeat(8));
    assert_eq!(dirs("a.log"), format!("{w16}{r16}{w16}{r16}"));
    assert_eq!(dirs("b.log"), format!("{w16}{r16}{w8}{r8}"));
    let j = &jobs(&v)[0];
    assert_eq!((ios(j, "write"), ios(j, "read")), (32, 32));
    assert_eq!(j["ssdlab"]["verify"]["sectors_bad"], 0);
    let j = &jobs(&v)[1];
    assert_eq!((ios(j, "write"), ios(j, "read")), (24, 24));
    // beside another job of its wave: refused by name, nothing run
    let f = write(
        d.path(),
        "beside.fio",
        "[a]\nfilename=c.img\nsize=64k\nverify=crc32c\nrw=write\nloops=2\n[b]\nfilename=e.img\nsize=64k\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &[
            "beside.fio line 1)",
            "loops=2 beside other jobs of its wave",
        ],
    );
    assert!(!d.path().join("c.img").exists());
}

/// Verifying jobs run together, as in fio, each on files of its own: clones without filename=
/// (fio's JOB.CLONE.0) and jobs of one wave on different files; a file two of them would use
/// at once is refused by name before anything is laid out.
#[test]
fn verifying_jobs_run_together_on_their_own_files() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "together.fio",
        "[global]\nsize=64k\nbs=4k\nverify=crc32c\nrw=randwrite\n\
         [clones]\nnumjobs=3\n[p]\nfilename=p.img\n[q]\nfilename=q.img\nrw=write\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    assert_eq!(jobs(&v).len(), 5);
    for j in jobs(&v) {
        assert_eq!(
            (ios(j, "write"), ios(j, "read")),
            (16, 16),
            "{}",
            j["jobname"]
        );
        assert_eq!(j["ssdlab"]["verify"]["sectors_ok"], 128);
        assert_eq!(j["ssdlab"]["verify"]["sectors_bad"], 0);
    }
    for c in 0..3 {
        assert!(d.path().join(format!("clones.{c}.0")).exists());
    }
    let shared = [
        "fio",
        "--name=n",
        "--filename=c.img",
        "--size=64k",
        "--verify=crc32c",
        "--rw=write",
        "--numjobs=2",
    ];
    refused(
        d.path(),
        &shared,
        &["job n: verify on c.img, which another clone of it uses"],
    );
    let f = write(
        d.path(),
        "two.fio",
        "[a]\nsize=64k\nverify=crc32c\nrw=write\nfilename=y.img\n[b]\nfilename=./y.img\nsize=64k\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["job a: verify on y.img, which job b uses"],
    );
    assert!(!d.path().join("c.img").exists() && !d.path().join("y.img").exists());
}

/// fio's verify_pattern: with verify=pattern the blocks hold the pattern alone and a read job
/// checking it finds a changed byte (fio: "got pattern '00', wanted 'de'", err=84); patterns
/// ssdlab cannot hold are refused by name, verify=pattern without a pattern is bad input (fio
/// 3.33 stops on an assertion), and the null engine, which carries no data, is refused.
#[test]
fn verify_pattern_writes_the_pattern_and_finds_a_changed_byte() {
    let d = tempfile::tempdir().unwrap();
    let job = |rw: &str| {
        vec![
            "--name=p".to_string(),
            "--filename=p.img".into(),
            "--size=64k".into(),
            "--bs=4k".into(),
            format!("--rw={rw}"),
            "--verify=pattern".into(),
            "--verify_pattern=0xdeadbeef".into(),
        ]
    };
    let w = job("write");
    let v = fio_json(d.path(), &w.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(jobs(&v)[0]["ssdlab"]["verify"]["sectors_ok"], 128);
    let data = std::fs::read(d.path().join("p.img")).unwrap();
    assert_eq!(data.len(), 65536);
    assert!(data.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]));
    let mut bad = data.clone();
    bad[9000] = 0;
    std::fs::write(d.path().join("p.img"), &bad).unwrap();
    let out = ssdlab(d.path())
        .arg("fio")
        .args(job("read"))
        .arg("--output-format=json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad pattern at offset 9000: got 0x00, wanted 0xde"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(jobs(&v)[0]["error"], 84);
    assert_eq!(jobs(&v)[0]["ssdlab"]["verify"]["sectors_bad"], 1);
    for (extra, needles) in [
        (&["--verify=pattern"][..], &["verify=pattern needs verify_pattern"][..]),
        (&["--verify_pattern=0xff%o"], &["verify_pattern", "%o"]),
        (
            &["--verify_pattern=0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00"],
            &["65 bytes", "up to 64"],
        ),
        (&["--verify_pattern=abc"], &["verify_pattern", "\"strings\""]),
    ] {
        let mut args = vec!["fio", "--name=x", "--filename=x.img", "--size=64k", "--rw=write"];
        args.extend_from_slice(extra);
        refused(d.path(), &args, needles);
        assert!(!d.path().join("x.img").exists());
    }
    refused(
        d.path(),
        &[
            "fio",
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--rw=write",
            "--verify=pattern",
            "--verify_pattern=0x01",
        ],
        &["verif"],
    );
}

#[test]
fn job_files_get_the_safety_of_ssdlab_run() {
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    std::fs::write(&img, vec![0x5au8; 8 << 20]).unwrap();
    let out = Sys::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .output();
    let dev = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        other => {
            ssdlab_testkit::skip(&format!("cannot attach a loop device: {other:?}"));
            return;
        }
    };
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Sys::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _guard = Detach(dev.clone());
    let f = write(
        d.path(),
        "dev.fio",
        &format!("[wipe]\nfilename={dev}\nrw=write\nbs=64k\nsize=1m\n"),
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["--allow-destroy"],
    );
    assert!(
        std::fs::read(&img).unwrap().iter().all(|&b| b == 0x5a),
        "the device is untouched"
    );
    // With --allow-destroy the blank device is written; numjobs share one exclusive open.
    let f = write(
        d.path(),
        "dev2.fio",
        &format!("[wipe]\nfilename={dev}\nrw=write\nbs=64k\nsize=1m\nnumjobs=2\ndirect=1\n"),
    );
    let v = fio_json(d.path(), &["--allow-destroy", f.to_str().unwrap()]);
    assert_eq!(jobs(&v).len(), 2);
    // The clones share the job's budget: 2 × 1 MiB in 64 KiB writes.
    assert_eq!(jobs(&v).iter().map(|j| ios(j, "write")).sum::<u64>(), 32);
}

/// fio itself, when installed: ssdlab replays fio's iolog and fio replays ssdlab's.
#[test]
fn iologs_round_trip_with_fio() {
    let fio_ok = Sys::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !fio_ok {
        ssdlab_testkit::skip_without_fio("fio is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("f.img");
    std::fs::write(&img, vec![3u8; 4 << 20]).unwrap();
    let st = Sys::new("fio")
        .current_dir(d.path())
        .args([
            "--name=f",
            "--rw=randrw",
            "--bs=4k",
            "--size=4m",
            "--number_ios=200",
            "--write_iolog=fio.log",
            "--output=/dev/null",
        ])
        .arg(format!("--filename={}", img.display()))
        .status()
        .unwrap();
    assert!(st.success());
    let log = std::fs::read_to_string(d.path().join("fio.log")).unwrap();
    let (r, w) = (
        log.lines().filter(|l| l.contains(" read ")).count() as u64,
        log.lines().filter(|l| l.contains(" write ")).count() as u64,
    );
    assert_eq!(r + w, 200);
    let v = fio_json(
        d.path(),
        &["--name=back", "--read_iolog=fio.log", "--replay_no_stall=1"],
    );
    assert_eq!(
        (ios(&jobs(&v)[0], "read"), ios(&jobs(&v)[0], "write")),
        (r, w)
    );
    // fio replays the log ssdlab wrote.
    let _ = fio_json(
        d.path(),
        &[
            "--name=s",
            "--filename=f.img",
            "--rw=randread",
            "--bs=4k",
            "--number_ios=150",
            "--write_iolog=ssd.log",
        ],
    );
    let out = Sys::new("fio")
        .current_dir(d.path())
        .args([
            "--name=replay",
            "--read_iolog=ssd.log",
            "--output-format=json",
            "--replay_no_stall=1",
        ])
        .arg(format!("--replay_redirect={}", img.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 150);
}

#[test]
fn includes_env_sections_and_parse_only() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "common.inc", "; shared options\nsize=2m\nbs=8k\n");
    let f = write(
        d.path(),
        "main.fio",
        "[global]\ninclude common.inc\nfilename=${SSDLAB_TEST_FILE}\nnumber_ios=64\n\
         [a]\nrw=randread\n[b]\nrw=write\nstonewall\n",
    );
    let run = |args: &[&str]| {
        ssdlab(d.path())
            .env("SSDLAB_TEST_FILE", "inc.img")
            .arg("fio")
            .args(args)
            .output()
            .unwrap()
    };
    // --parse-only checks everything and runs nothing.
    let out = run(&["--parse-only", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("wave 0: a") && text.contains("wave 1: b"),
        "{text}"
    );
    assert!(text.contains("randread 8 KiB"), "{text}");
    assert!(!d.path().join("inc.img").exists(), "nothing created");
    // --section picks jobs.
    let out = run(&["--section", "b", "--json", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(jobs(&v).len(), 1);
    assert_eq!(jobs(&v)[0]["jobname"], "b");
    assert_eq!(ios(&jobs(&v)[0], "write"), 64);
    assert_eq!(jobs(&v)[0]["write"]["io_bytes"], 64 * 8192);
    // An unset variable is an empty string, as in fio: here an empty filename, refused with
    // its line and the variable named; an included file is an input.
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["${SSDLAB_TEST_FILE} not set", "main.fio line 3"],
    );
    let out = ssdlab(d.path())
        .env("SSDLAB_TEST_FILE", "inc.img")
        .args(["fio", "--output", "common.inc", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("included"));
}

#[test]
fn a_sweep_replays_a_trace_on_each_target() {
    let d = tempfile::tempdir().unwrap();
    spaced_trace(d.path(), "t.log", "/data/x", 100, 300);
    let sweep = write(
        d.path(),
        "s.toml",
        "name = \"tr\"\ntime = \"1s\"\nqd = [1, 4]\n\
         [[workload]]\nname = \"rec\"\ntrace = \"t.log\"\n\
         [[workload]]\nname = \"rec-fast\"\ntrace = \"t.log\"\nno_stall = true\n\
         [[target]]\nsim = \"vertex450-128g\"\n\
         [[target]]\nsim = \"vertex450-128g\"\ndrives = 2\nstripes = [\"16k\"]\n",
    );
    let out = ssdlab(d.path())
        .args(["sweep", sweep.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ssdlab(d.path())
        .args(["report", "tr.sqlite", "--csv", "-"])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&out.stdout);
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 2, "{csv}");
    // Recorded at 100 µs apart, 300 reads take ~30 ms: ~10,000 IOPS whatever the QD; without
    // stalls far more.
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let iops: f64 = f[7].parse().unwrap();
        if f[4] == "rec" {
            assert!((9_000.0..11_000.0).contains(&iops), "{line}");
        } else {
            assert!(iops > 20_000.0, "{line}");
        }
    }
    // A trace workload takes no rw/bs, and trace options need a trace.
    let bad = write(
        d.path(),
        "bad.toml",
        "name = \"b\"\ntime = \"1s\"\nqd = [1]\n[[workload]]\nname = \"w\"\ntrace = \"t.log\"\nbs = \"4k\"\n[[target]]\nsim = \"vertex450-128g\"\n",
    );
    refused(
        d.path(),
        &["sweep", bad.to_str().unwrap()],
        &["bs", "trace workload"],
    );
    let bad = write(
        d.path(),
        "bad2.toml",
        "name = \"b\"\ntime = \"1s\"\nqd = [1]\n[[workload]]\nname = \"w\"\nrw = \"read\"\nbs = \"4k\"\nno_stall = true\n[[target]]\nsim = \"vertex450-128g\"\n",
    );
    refused(
        d.path(),
        &["sweep", bad.to_str().unwrap()],
        &["no_stall", "trace"],
    );
}

#[test]
fn rate_iops_paces_and_offset_increment_splits_regions() {
    let d = tempfile::tempdir().unwrap();
    // 200 IOPS for 100 reads: about half a second, on a file and on a preset.
    let f = write(
        d.path(),
        "rate.fio",
        "[r]\nfilename=rate.img\nsize=4m\nrw=randread\nrate_iops=200\nnumber_ios=100\n\
         ioengine=io_uring\ndirect=1\niodepth=4\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let j = &jobs(&v)[0];
    assert_eq!(ios(j, "read"), 100);
    let ms = j["ssdlab"]["runtime_ns"].as_u64().unwrap() / 1_000_000;
    assert!((480..800).contains(&ms), "{ms} ms");
    let v = fio_json(d.path(), &["--sim", "vertex450-128g", f.to_str().unwrap()]);
    let ms = jobs(&v)[0]["ssdlab"]["runtime_ns"].as_u64().unwrap() / 1_000_000;
    assert!((495..=500).contains(&ms), "{ms} ms");
    // offset_increment: each clone writes its own quarter.
    let f = write(
        d.path(),
        "inc.fio",
        "[w]\nfilename=inc.img\nsize=1m\noffset_increment=1m\nnumjobs=4\nrw=write\nbs=64k\n\
         ioengine=io_uring\ndirect=1\nwrite_iolog=inc.log\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    assert_eq!(jobs(&v).len(), 4);
    // The clones write one log, as in fio: 16 writes of each quarter, in time order.
    let log = std::fs::read_to_string(d.path().join("inc.log")).unwrap();
    let writes: Vec<u64> = log
        .lines()
        .filter(|l| l.contains(" write "))
        .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        .collect();
    assert_eq!(writes.len(), 64);
    for q in 0..4u64 {
        let n = writes.iter().filter(|&&o| o >> 20 == q).count();
        assert_eq!(n, 16, "quarter {q}");
    }
    let stamps: Vec<u64> = log
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "in time order");
    assert!(!std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains("ssdlab-")));
    let offsets: Vec<u64> = jobs(&v)
        .iter()
        .map(|j| j["ssdlab"]["target"]["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, vec![0, 1 << 20, 2 << 20, 3 << 20]);
    assert_eq!(
        std::fs::metadata(d.path().join("inc.img")).unwrap().len(),
        4 << 20
    );
}

/// fio's file semantics: a job that only writes lays its new file out by allocating it
/// (`fallocate=native`, unwritten extents that read as zeros), a job that reads lays it out with
/// data; `fallocate=truncate` makes it sparse, `fallocate=none` leaves it to the writes.
#[test]
fn files_are_laid_out_as_fio_lays_them_out() {
    let d = tempfile::tempdir().unwrap();
    let tail_is_zero = |name: &str| {
        let b = std::fs::read(d.path().join(name)).unwrap();
        assert_eq!(b.len(), 1 << 20, "{name}");
        b[512 << 10..].iter().all(|&x| x == 0)
    };
    let run = |args: &[&str]| fio_json(d.path(), args);
    run(&[
        "--name=w",
        "--filename=w.img",
        "--size=1m",
        "--rw=write",
        "--number_ios=4",
    ]);
    assert!(tail_is_zero("w.img"), "allocated, not written");
    run(&[
        "--name=r",
        "--filename=r.img",
        "--size=1m",
        "--rw=read",
        "--number_ios=4",
    ]);
    assert!(!tail_is_zero("r.img"), "laid out with data for reading");
    run(&[
        "--name=o",
        "--filename=o.img",
        "--size=1m",
        "--rw=write",
        "--overwrite=1",
        "--number_ios=4",
    ]);
    assert!(!tail_is_zero("o.img"), "overwrite=1 lays out data first");
    run(&[
        "--name=t",
        "--filename=t.img",
        "--size=1m",
        "--rw=write",
        "--fallocate=truncate",
        "--number_ios=4",
    ]);
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::metadata(d.path().join("t.img")).unwrap();
    assert_eq!(m.len(), 1 << 20);
    assert!(
        m.blocks() * 512 < 512 << 10,
        "sparse: {} blocks",
        m.blocks()
    );
    run(&[
        "--name=n",
        "--filename=n.img",
        "--size=1m",
        "--rw=write",
        "--fallocate=none",
        "--number_ios=4",
        "--bs=4k",
    ]);
    assert_eq!(
        std::fs::metadata(d.path().join("n.img")).unwrap().len(),
        16 << 10,
        "nothing allocated: the writes extend the file"
    );
}

/// fio's engines on buffered files: libaio does each I/O inside io_submit (all of iodepth in
/// flight, one being done), posixaio one at a time on glibc's thread; both say so. A verify
/// phase is skipped when the runtime ended the write phase, as in fio. unified_rw_reporting and
/// kb_base change the output as in fio.
#[test]
fn buffered_engines_verify_and_reporting_follow_fio() {
    let d = tempfile::tempdir().unwrap();
    for (engine, note) in [("libaio", "inside io_submit"), ("posixaio", "POSIX AIO")] {
        let out = ssdlab(d.path())
            .args([
                "fio",
                "--name=b",
                "--filename=b.img",
                "--size=1m",
                "--rw=randread",
                &format!("--ioengine={engine}"),
                "--iodepth=8",
                "--number_ios=200",
                "--output-format=json",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(note), "{engine}: {err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let j = &jobs(&v)[0];
        assert_eq!(ios(j, "read"), 200);
        // The ramp to 8 races the first completions (by 11 % on a loaded CI machine), so the
        // test asks for what fio's table shows at this depth: most I/O submitted with 8 queued,
        // none deeper.
        let lv = &j["iodepth_level"];
        let at8 = lv["8"].as_f64().unwrap();
        assert!(at8 > 60.0, "{engine}: depth {lv}");
        for deeper in ["16", "32", ">=64"] {
            assert_eq!(lv[deeper].as_f64(), Some(0.0), "{engine}: depth {lv}");
        }
    }
    // Verify: a runtime far shorter than the size ends the write phase; no verify phase.
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--name=v",
            "--filename=v.img",
            "--size=64m",
            "--rw=write",
            "--bs=4k",
            "--ioengine=psync",
            "--rate_iops=200",
            "--verify=crc32c",
            "--runtime=200ms",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no verify phase"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&jobs(&v)[0], "read"), 0, "no verify reads");
    // unified_rw_reporting=mixed: one `mixed` direction; both: the directions, then mixed.
    let v = fio_json(
        d.path(),
        &[
            "--name=m",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--unified_rw_reporting=mixed",
        ],
    );
    let j = &jobs(&v)[0];
    assert!(j.get("read").is_none() && j.get("sync").is_none());
    assert_eq!(ios(j, "mixed"), 256);
    let v = fio_json(
        d.path(),
        &[
            "--name=m",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--unified_rw_reporting=both",
        ],
    );
    let j = &jobs(&v)[0];
    assert_eq!(ios(j, "read") + ios(j, "write"), ios(j, "mixed"));
    // In fio's order: the directions, sync, then mixed.
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--name=m",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--unified_rw_reporting=both",
            "--json",
        ])
        .output()
        .unwrap();
    let raw = String::from_utf8_lossy(&out.stdout);
    let at = |k: &str| raw.find(&format!("\"{k}\" :")).unwrap();
    assert!(at("read") < at("sync") && at("sync") < at("mixed"), "{raw}");
    // kb_base=1000: decimal units first in the text.
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--name=k",
            "--ioengine=null",
            "--kb_base=1000",
            "--size=1000000",
            "--bs=1000",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("read: IOPS=")).unwrap();
    assert!(line.contains("(1000kB/"), "{line}");
}

#[test]
fn block_size_mixes_and_distributions_run_or_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    // Runs: a split on the null engine, every I/O one of its sizes at 4k-aligned offsets.
    let f = write(
        d.path(),
        "mix.fio",
        "[m]\nioengine=null\nrw=randread\nsize=128m\nnorandommap\nbssplit=4k/70:64k/30\n\
         random_distribution=zipf:1.2\nnumber_ios=2000\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let j = &jobs(&v)[0];
    assert_eq!(ios(j, "read"), 2000);
    let bytes = j["read"]["io_bytes"].as_u64().unwrap();
    // 70 % of 4k and 30 % of 64k: about 22 KiB an I/O.
    assert!((bytes / 2000).abs_diff(22 * 1024) < 3 * 1024, "{bytes}");
    // Refused, named, nothing run: what ssdlab cannot run as fio does.
    for (text, needle) in [
        ("[a]\nioengine=null\nsize=1m\nrw=randrw\nbs=4k,16k\n", "smallest read size"),
        (
            "[a]\nioengine=null\nsize=1m\nrw=randread\nbs=8k\nba=4k\nrandom_distribution=zipf:1.2\n",
            "random_distribution=zipf:1.2 with blockalign",
        ),
        (
            "[a]\nioengine=null\nsize=1m\nrw=randread\nrandom_distribution=sequence:1,2\n",
            "random_distribution=sequence",
        ),
        (
            "[a]\nioengine=null\nsize=1m\nrw=randread\nrandom_distribution=zoned_abs:60/2m:40/2m\n",
            "beyond the region",
        ),
    ] {
        let f = write(d.path(), "r.fio", text);
        refused(d.path(), &["fio", f.to_str().unwrap()], &[needle]);
    }
    // A bad value is fio's error.
    let f = write(d.path(), "b.fio", "[a]\nrandom_distribution=zipf:1\n");
    refused(d.path(), &["fio", f.to_str().unwrap()], &["zipf theta"]);
}

/// fio's thinktime: after every thinktime_blocks I/Os the queue drains and the job waits. On a
/// simulated drive the clock is virtual, so the waits are exact: 20 reads with 1 ms between
/// them take 19 ms more than without.
#[test]
fn thinktime_drains_and_waits_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--sim",
            "x25e-64g",
            "--name=t",
            "--size=16m",
            "--rw=randread",
            "--number_ios=20",
        ];
        args.extend_from_slice(extra);
        let v = fio_json(d.path(), &args);
        jobs(&v)[0].clone()
    };
    let plain = run(&[]);
    let lat_us = plain["read"]["clat_ns"]["mean"].as_f64().unwrap() / 1000.0;
    let runtime = |j: &Value| j["job_runtime"].as_u64().unwrap();
    for (extra, thinks) in [
        (&["--thinktime=1ms"][..], 19),
        (&["--thinktime=1000", "--thinktime_blocks=5"][..], 3),
        // spinning part of it is the same stall
        (&["--thinktime=1ms", "--thinktime_spin=400"][..], 19),
    ] {
        let j = run(extra);
        let want = (thinks as f64 * 1000.0 + 20.0 * lat_us) / 1000.0;
        let got = runtime(&j) as f64;
        assert!(
            (got - want).abs() <= 1.0,
            "{extra:?}: runtime {got} ms, want {want:.1} (plain {} ms)",
            runtime(&plain)
        );
        assert_eq!(ios(&j, "read"), 20);
    }
    // At a depth, counted at issue: 4 at a time, then the queue drains; each I/O is counted at
    // the depth its own submission reached (1, 2, 3, 4), as fio 3.33 counts them on a file
    // (`--ioengine=io_uring --iodepth=4 ... --number_ios=20`: 25, 50 and 25 % at 1, 2-3, 4).
    let j = run(&[
        "--ioengine=io_uring",
        "--iodepth=4",
        "--thinktime=1ms",
        "--thinktime_blocks=4",
        "--thinktime_blocks_type=issue",
    ]);
    assert!(runtime(&j) >= 4, "{}", runtime(&j));
    let level = |k: &str| j["iodepth_level"][k].as_f64();
    assert_eq!(
        (level("1"), level("2"), level("4")),
        (Some(25.0), Some(50.0), Some(25.0))
    );
    // fio's default counts completions, whose timing at a depth ssdlab does not copy: refused.
    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "x25e-64g",
            "--name=t",
            "--size=16m",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--thinktime=1ms",
        ],
        &["thinktime at iodepth=4", "thinktime_blocks_type=issue"],
    );
    // With a rate, the ops after a think catch up on the rate's schedule (fio's default: 2 s
    // at 1,000 reads a second with a 10 ms think after every 10 still does about 1,900), or
    // the think moves the schedule (rate_ignore_thinktime: about 19 ms per 10 reads, as fio
    // 3.33 gives on its null engine: 1,990 and 1,056).
    let reads = |ignore: &str| {
        let v = fio_json(
            d.path(),
            &[
                "--sim",
                "x25e-64g",
                "--name=t",
                "--size=16m",
                "--thinktime=10ms",
                "--thinktime_blocks=10",
                "--rate_iops=1000",
                "--runtime=2",
                "--time_based",
                ignore,
            ],
        );
        ios(&jobs(&v)[0], "read")
    };
    let (keep, ignore) = (
        reads("--rate_ignore_thinktime=0"),
        reads("--rate_ignore_thinktime=1"),
    );
    assert!((1850..=2000).contains(&keep), "{keep}");
    assert!((1040..=1070).contains(&ignore), "{ignore}");
}

/// fio's thinktime_iotime: the job thinks once the I/O time and the think since the last think
/// began have passed (fio's handle_thinktime), counting no blocks unless thinktime_blocks is
/// given. On the simulated clock, 2 s with a 100 ms think after 400 ms of I/O stall three times
/// (at 0.5, 1.0 and 1.5 s — the first cycle's I/O lasts iotime + thinktime, as in fio), so the
/// job does 1.7/2 of the plain job's reads, at any depth.
#[test]
fn thinktime_iotime_thinks_after_a_span_of_io() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--sim",
            "x25e-64g",
            "--name=t",
            "--size=16m",
            "--rw=randread",
            "--runtime=2",
            "--time_based",
        ];
        args.extend_from_slice(extra);
        let v = fio_json(d.path(), &args);
        ios(&jobs(&v)[0], "read") as f64
    };
    for depth in [
        &["--iodepth=1"][..],
        &["--ioengine=io_uring", "--iodepth=4"],
    ] {
        let plain = run(depth);
        let thinking = run(&[depth, &["--thinktime=100ms", "--thinktime_iotime=400ms"]].concat());
        let share = thinking / plain;
        assert!(
            (share - 0.85).abs() < 0.01,
            "{depth:?}: {thinking} of {plain} reads ({share:.3}), want 0.85"
        );
    }
    // With thinktime_blocks too, whichever comes first: every 1000 reads here.
    let plain = run(&[]);
    let both = run(&[
        "--thinktime=100ms",
        "--thinktime_iotime=400ms",
        "--thinktime_blocks=1000",
    ]);
    assert!(both < plain * 0.5, "{both} of {plain}");
}

/// fio's rate_min / rate_iops_min: after a 2 s settle, a direction below its minimum over a
/// rate_cycle ends the job with EIO (fio: `rate_iops_min=100 not met, got 49 IOPS`, exit 1),
/// after 3 s of a job that does 49 reads a second.
#[test]
fn rate_min_ends_a_job_below_it() {
    let d = tempfile::tempdir().unwrap();
    let args = |min: &str| {
        vec![
            "fio".to_string(),
            "--sim".into(),
            "x25e-64g".into(),
            "--name=m".into(),
            "--size=16m".into(),
            "--rw=randread".into(),
            "--thinktime=20ms".into(),
            "--runtime=5".into(),
            "--time_based".into(),
            min.to_string(),
            "--output-format=json".into(),
        ]
    };
    let out = ssdlab(d.path())
        .args(args("--rate_iops_min=100"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("m: rate_iops_min=100 not met, got 49 IOPS"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &jobs(&v)[0];
    assert_eq!(j["error"], 5);
    let n = ios(j, "read");
    assert!((145..=152).contains(&n), "{n} reads: 3 s at 49/s");
    // Bytes per second: 49 reads of 4 KiB a second meet 100 KiB/s but not 300 KiB/s.
    let v = fio_json(
        d.path(),
        &args("--rate_min=100k")[1..10]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(jobs(&v)[0]["error"], 0);
    assert!(ios(&jobs(&v)[0], "read") > 240);
    let out = ssdlab(d.path())
        .args(args("--rate_min=300k"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rate_min=307200B/s not met"));
    // A longer rate_cycle checks later: 2 s settle, then 3 s cycle → the 5 s job ends first.
    let v = fio_json(
        d.path(),
        &args("--rate_iops_min=100")[1..10]
            .iter()
            .map(String::as_str)
            .chain(["--rate_cycle=3500"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(jobs(&v)[0]["error"], 0);
    // A minimum above the job's own cap is refused as fio refuses it.
    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "x25e-64g",
            "--name=m",
            "--size=16m",
            "--rate_iops=100",
            "--rate_iops_min=200",
        ],
        &["minimum rate", "exceeds its rate"],
    );
}

/// fio's exitall_on_error: a job that ends on an error (here its minimum rate unmet, 3 s in)
/// stops the jobs of its exit_what scope (its group: b, not c), as fio 3.33 does on its null
/// engine (a 3,002 ms with error 5, b 3,003 ms, c 4,000 ms); a job that ends without an error,
/// or whose error is not asked to end the others, stops nobody.
#[test]
fn exitall_on_error_ends_the_group_of_a_failed_job() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = |a: &str| {
        format!(
            "[global]\nsize=64m\nbs=4k\n\
             [a]\nrw=randread\n{a}\n\
             [b]\nrw=randread\nrate_iops=1000\ntime_based\nruntime=8s\n\
             [c]\nnew_group\nrw=randread\nrate_iops=1000\ntime_based\nruntime=4s\n"
        )
    };
    let run = |text: &str| -> (Option<i32>, Vec<(u64, u64)>) {
        let f = write(d, "eoe.fio", text);
        let out = ssdlab(d)
            .args(["fio", f.to_str().unwrap(), "--sim=x25e-64g"])
            .arg("--output-format=json")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let js = jobs(&v);
        (
            out.status.code(),
            js.iter()
                .map(|j| {
                    (
                        j["error"].as_u64().unwrap(),
                        j["job_runtime"].as_u64().unwrap(),
                    )
                })
                .collect(),
        )
    };
    let failing = "thinktime=20ms\nrate_iops_min=100";
    let (code, got) = run(&job(&format!("{failing}\nexitall_on_error")));
    assert_eq!(code, Some(1));
    assert_eq!(got[0].0, 5, "{got:?}");
    // a's minimum is checked 3 s in (a's runtime ends at its last completion before that)
    assert!((2990..3100).contains(&got[1].1), "b stops with a: {got:?}");
    assert_eq!(got[2], (0, 4000), "another group runs on");
    // without exitall_on_error, or when the job ends without an error, b runs its 8 s
    let (code, got) = run(&job(failing));
    assert_eq!((code, got[1]), (Some(1), (0, 8000)), "{got:?}");
    let (code, got) = run(&job("number_ios=10\nexitall_on_error"));
    assert_eq!((code, got[1]), (Some(0), (0, 8000)), "{got:?}");
}

/// `/dev/null` and `/dev/zero` are files of no size to fio (its steadystate example writes
/// one and reads the other): they take the job's size; a read of /dev/null ends with nothing
/// (fio's error 5); what fio cannot do with them (no size: error 22; direct=1: EINVAL; trims:
/// ENOTTY) and verifying them are refused before anything runs.
#[test]
fn dev_null_and_dev_zero_are_files_of_no_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = fio_json(
        d,
        &[
            "--name=w",
            "--filename=/dev/null",
            "--rw=write",
            "--bs=64k",
            "--size=4m",
            "--name=r",
            "--filename=/dev/zero",
            "--rw=randread",
            "--size=4m",
            "--ioengine=io_uring",
            "--iodepth=4",
        ],
    );
    let js = jobs(&v);
    assert_eq!((ios(&js[0], "write"), ios(&js[1], "read")), (64, 1024));
    assert!(js.iter().all(|j| j["error"] == 0));
    let v = fio_json_failed(
        d,
        &["--name=x", "--filename=/dev/null", "--size=1m", "--rw=read"],
    );
    assert_eq!(jobs(&v)[0]["error"], 5);
    for (extra, needle) in [
        ("--rw=read", "has no size: give size="),
        ("--size=1m --direct=1", "cannot be opened with O_DIRECT"),
        ("--size=1m --rw=trim", "a character device does not take"),
        (
            "--size=1m --rw=write --verify=md5",
            "verification of a character device",
        ),
    ] {
        let mut args = vec!["fio", "--name=x", "--filename=/dev/zero"];
        args.extend(extra.split(' '));
        refused(d, &args, &[needle]);
    }
    refused(
        d,
        &["fio", "--name=x", "--filename=/dev/urandom", "--size=1m"],
        &["not a regular file, a block device, /dev/null or /dev/zero"],
    );
}

/// fio reaps at most iodepth_batch_complete_max completions (its default: one) before it
/// refills a full queue: every reap of a queue-depth-8 io_uring job gives back one I/O, so
/// iodepth_complete has no bucket above 4, as fio's has none but the final drain's.
#[test]
fn io_uring_reaps_one_completion_at_a_time_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--name=r",
            "--filename=r.img",
            "--size=8m",
            "--rw=randread",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--direct=1",
            "--number_ios=4000",
        ],
    );
    let j = &jobs(&v)[0];
    let complete = j["iodepth_complete"].as_object().unwrap();
    for (k, share) in complete {
        if k != "0" && k != "4" {
            assert_eq!(share.as_f64(), Some(0.0), "{k}: {complete:?}");
        }
    }
    assert_eq!(complete["4"].as_f64(), Some(100.0), "{complete:?}");
}

/// offset_increment moves clone k's region by k increments on a simulated drive and on fio's
/// null engine too (it was applied to files only), and a region past the drive is refused.
#[test]
fn offset_increment_applies_on_a_preset_and_the_null_engine() {
    let d = tempfile::tempdir().unwrap();
    for (target, log) in [
        (&["--sim", "x25e-64g"][..], "s.log"),
        (&["--ioengine=null"], "n.log"),
    ] {
        let mut args: Vec<&str> = target.to_vec();
        let iolog = format!("--write_iolog={log}");
        args.extend_from_slice(&[
            "--name=t",
            "--size=64k",
            "--bs=16k",
            "--rw=write",
            "--numjobs=2",
            "--offset_increment=1m",
            &iolog,
        ]);
        fio_json(d.path(), &args);
        let text = std::fs::read_to_string(d.path().join(log)).unwrap();
        let mut offsets: Vec<u64> = text
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.get(2) == Some(&"write")).then(|| w[3].parse().unwrap())
            })
            .collect();
        offsets.sort();
        let want: Vec<u64> = [0u64, 1 << 20]
            .iter()
            .flat_map(|b| (0..4).map(move |i| b + i * 16384))
            .collect();
        assert_eq!(offsets, want, "{target:?}");
    }
    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "x25e-64g",
            "--name=t",
            "--size=64k",
            "--numjobs=2",
            "--offset_increment=100g",
        ],
        &["clone 1", "offset_increment", "ends beyond"],
    );
}

/// write_iolog records the I/O without changing how it is submitted: with iodepth_batch=8 no
/// submission carries more than 8 I/Os, with or without the log (the recorder once hid the
/// batch size, and every submission then carried up to the whole depth).
#[test]
fn write_iolog_keeps_the_submission_batches() {
    let d = tempfile::tempdir().unwrap();
    for log in [None, Some("--write_iolog=b.log")] {
        let mut args = vec![
            "--name=b",
            "--filename=b.img",
            "--size=4m",
            "--rw=randread",
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--iodepth_batch=8",
            "--number_ios=2000",
        ];
        args.extend(log);
        let v = fio_json(d.path(), &args);
        let submit = &jobs(&v)[0]["iodepth_submit"];
        for above in ["16", "32", "64", ">=64"] {
            assert_eq!(submit[above].as_f64(), Some(0.0), "{log:?}: {submit}");
        }
        assert!(submit["8"].as_f64().unwrap() > 0.0, "{log:?}: {submit}");
    }
}

/// fio's startdelay: the job starts that long after the others of its wave, and its runtime
/// (and ramp) come after the delay. On a simulated drive the clock is exact: the delayed
/// job's first I/O is logged at 10 ms. A range is drawn from per clone.
#[test]
fn startdelay_starts_the_job_later() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "sd.fio",
        "[global]\nsize=16m\nrw=randread\nruntime=20ms\ntime_based\n\
         [a]\nwrite_iolog=a.log\n[b]\nstartdelay=10ms\nwrite_iolog=b.log\n",
    );
    let v = fio_json(
        d.path(),
        &["--sim", "x25e-64g", "--state", "full", f.to_str().unwrap()],
    );
    for j in jobs(&v) {
        assert_eq!(j["job_runtime"], 20, "{}", j["jobname"]);
    }
    let first_us = |log: &str| -> u64 {
        std::fs::read_to_string(d.path().join(log))
            .unwrap()
            .lines()
            .filter(|l| l.contains(" read "))
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .next()
            .unwrap()
    };
    assert_eq!(first_us("a.log"), 0);
    assert!(
        (10_000..10_100).contains(&first_us("b.log")),
        "{}",
        first_us("b.log")
    );
    // A range: each clone draws its delay from it (fio's draws are its own); the runtime
    // still comes after the delay. A range that ends before it starts is refused.
    let v = fio_json(
        d.path(),
        &[
            "--sim",
            "x25e-64g",
            "--name=r",
            "--size=1m",
            "--numjobs=4",
            "--startdelay=1ms-30ms",
            "--runtime=20ms",
            "--time_based",
        ],
    );
    assert_eq!(jobs(&v).len(), 4);
    assert!(jobs(&v).iter().all(|j| j["job_runtime"] == 20));
    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "x25e-64g",
            "--name=r",
            "--size=1m",
            "--startdelay=5-1",
        ],
        &["startdelay=5-1", "before its start"],
    );
}

/// fio's steadystate on a simulated drive (exact clock): samples every second after ss_ramp
/// plus one interval, the job ends when the window meets the criterion, and the JSON has
/// fio's block; a criterion never met runs the whole runtime.
#[test]
fn steadystate_ends_the_job_when_the_window_is_steady() {
    let d = tempfile::tempdir().unwrap();
    let run = |ss: &str| {
        let v = fio_json(
            d.path(),
            &[
                "--sim",
                "x25e-64g",
                "--state",
                "full",
                "--name=s",
                "--ioengine=libaio",
                "--iodepth=8",
                "--rw=randwrite",
                "--size=8g",
                "--runtime=12",
                "--time_based",
                ss,
                "--ss_dur=5",
                "--ss_ramp=2",
            ],
        );
        jobs(&v)[0].clone()
    };
    let j = run("--ss=iops:2%");
    let ss = &j["steadystate"];
    assert_eq!(ss["ss"], "iops:2.000000%");
    assert_eq!(ss["duration"], 5);
    assert_eq!(ss["attained"], 1, "{ss}");
    // samples at 3, 4, 5, 6 and 7 s: attained with the fifth
    assert_eq!(j["job_runtime"], 7000);
    let iops = ss["data"]["iops"].as_array().unwrap();
    assert_eq!(iops.len(), 5);
    let mean = ss["data"]["iops_mean"].as_u64().unwrap() as f64;
    for x in iops {
        assert!((x.as_f64().unwrap() - mean).abs() <= 0.02 * mean, "{ss}");
    }
    assert!(ss["criterion"].as_str().unwrap().ends_with('%'));
    // a slope of exactly 0 is never below a limit of 0: the whole runtime
    let j = run("--ss=iops_slope:0%");
    assert_eq!(j["steadystate"]["attained"], 0);
    let rt = j["job_runtime"].as_u64().unwrap();
    assert!(
        (12000..12100).contains(&rt),
        "{rt}: the runtime and the drain"
    );
    // fio counts the window in whole seconds
    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "x25e-64g",
            "--name=s",
            "--size=1g",
            "--ss_dur=4",
            "--ss_interval=500ms",
        ],
        &["steadystate", "whole seconds"],
    );
}

/// fio's steadystate of clones on a simulated drive (exact clock): with group_reporting the
/// group is checked on the sum of its clones' IOPS, and when that is steady every clone ends
/// (one entry, one block with the group's samples); without it each clone is checked on its own
/// (an entry and a block each). Samples at 3 … 7 s: attained with the fifth, as one job alone.
#[test]
fn steadystate_of_clones_and_of_a_reporting_group() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--sim",
            "x25e-64g",
            "--state",
            "full",
            "--name=s",
            "--ioengine=libaio",
            "--iodepth=8",
            "--rw=randwrite",
            "--size=8g",
            "--runtime=12",
            "--time_based",
            "--ss=iops:2%",
            "--ss_dur=5",
            "--ss_ramp=2",
            "--numjobs=2",
        ];
        args.extend_from_slice(extra);
        jobs(&fio_json(d.path(), &args)).clone()
    };
    let check = |j: &Value| {
        let ss = &j["steadystate"];
        assert_eq!(ss["ss"], "iops:2.000000%", "{j}");
        assert_eq!(ss["attained"], 1, "{ss}");
        assert_eq!(
            ss["slope"], 0.0,
            "fio computes no slope for a deviation: {ss}"
        );
        // the samples are the entry's own IOPS: the group's sum, or one clone's
        let mean = ss["data"]["iops_mean"].as_f64().unwrap();
        let iops = j["write"]["iops"].as_f64().unwrap();
        assert!((mean - iops).abs() <= 0.02 * iops, "{mean} vs {iops}");
        // every clone ended at the fifth sample (not at the runtime of 12 s)
        let rt = j["write"]["runtime"].as_u64().unwrap();
        assert!((7000..7100).contains(&rt), "{rt}");
        mean
    };
    let group = run(&["--group_reporting"]);
    assert_eq!(group.len(), 1);
    let sum = check(&group[0]);
    let clones = run(&[]);
    assert_eq!(clones.len(), 2);
    let each: Vec<f64> = clones.iter().map(check).collect();
    assert!(
        (sum - each.iter().sum::<f64>()).abs() <= 0.02 * sum,
        "{sum} vs {each:?}"
    );
    // jobs of one group with other settings: fio rejects them
    let f = write(
        d.path(),
        "ss.fio",
        "[global]\nioengine=null\nsize=1m\nss=iops:10%\nss_dur=2\n[a]\n[b]\nss_dur=3\n",
    );
    let out = ssdlab(d.path())
        .args(["fio", f.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("consistent within reporting groups"), "{err}");
    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "x25e-64g",
            "--group_reporting",
            "--name=s",
            "--size=1g",
            "--ss_dur=4",
            "--name=t",
            "--size=1g",
            "--ss_dur=4",
            "--startdelay=1",
        ],
        &["steadystate", "do not start together"],
    );
}

/// A job file named "-" is read from stdin, as fio reads it; its lines are named "stdin".
#[test]
fn a_job_file_from_stdin() {
    let d = tempfile::tempdir().unwrap();
    let run = |text: &str| {
        ssdlab(d.path())
            .args(["fio", "-", "--output-format=json"])
            .write_stdin(text.as_bytes().to_vec())
            .output()
            .unwrap()
    };
    let out = run("[a]\nioengine=null\nsize=1m\nrw=randread\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&jobs(&v)[0], "read"), 256);
    let out = run("[a]\nbogus=1\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus (stdin line 2): unknown option"));
}

#[test]
fn several_files_run_on_a_preset_as_regions_and_unsupported_choices_are_refused() {
    let d = tempfile::tempdir().unwrap();
    // Three files of 16k each on the simulated drive: regions one after another, served round
    // robin, each I/O logged with its file and its offset in it (offset=4k in each file).
    let f = write(
        d.path(),
        "files.fio",
        "[j]\nnrfiles=3\nsize=48k\noffset=4k\nrw=write\nbs=4k\nwrite_iolog=files.log\n",
    );
    let v = fio_json(d.path(), &["--sim", "vertex450-128g", f.to_str().unwrap()]);
    assert_eq!(jobs(&v).len(), 1, "one entry per job, not per file");
    assert_eq!(ios(&jobs(&v)[0], "write"), 12);
    let log = std::fs::read_to_string(d.path().join("files.log")).unwrap();
    let ios: Vec<(String, u64)> = log
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.get(2) == Some(&"write")).then(|| (w[1].to_string(), w[3].parse().unwrap()))
        })
        .collect();
    let want: Vec<(String, u64)> = (0..12u64)
        .map(|i| (format!("j.0.{}", i % 3), 4096 * (1 + i / 3)))
        .collect();
    assert_eq!(ios, want);
    for n in ["j.0.0", "j.0.1", "j.0.2"] {
        assert!(!d.path().join(n).exists(), "nothing is laid out on --sim");
    }
    // fio's non-uniform choices of files and fewer open files: refused by name, nothing run.
    let z = write(
        d.path(),
        "zipf.fio",
        "[j]\nnrfiles=2\nsize=8k\nrw=write\nfile_service_type=zipf:1.1\n",
    );
    refused(
        d.path(),
        &["fio", z.to_str().unwrap()],
        &["not supported by ssdlab", "file_service_type=zipf:1.1"],
    );
    let o = write(
        d.path(),
        "open.fio",
        "[j]\nnrfiles=2\nsize=8k\nrw=write\nopenfiles=1\n",
    );
    refused(
        d.path(),
        &["fio", o.to_str().unwrap()],
        &["not supported by ssdlab", "openfiles=1"],
    );
    for n in ["j.0.0", "j.0.1"] {
        assert!(!d.path().join(n).exists(), "a refused job writes nothing");
    }
}

/// fio's trims are BLKDISCARD: on a regular file fio 3.33 ends the job at its first trim with
/// error 25 ("Inappropriate ioctl for device"). ssdlab refuses such a job before anything runs:
/// one line, exit 2, the file neither created nor changed.
#[test]
fn trims_on_a_regular_file_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8 + 1).collect();
    let kept = write(d.path(), "kept", "");
    std::fs::write(&kept, &data).unwrap();
    for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
        let mode = format!("--rw={rw}");
        for (file, what) in [
            ("--filename=kept", "a regular file"),
            ("--filename=new", "(to be created)"),
        ] {
            refused(
                d.path(),
                &["fio", "--name=t", file, "--size=1m", &mode, "--bs=64k"],
                &[&format!("rw={rw}"), what, "BLKDISCARD", "error 25"],
            );
        }
        // In a job file too, on the file fio would lay out.
        let job = write(
            d.path(),
            "t.fio",
            &format!("[t]\nrw={rw}\nsize=1m\nioengine=io_uring\n"),
        );
        refused(
            d.path(),
            &["fio", job.to_str().unwrap()],
            &["t.0.0", "BLKDISCARD"],
        );
    }
    assert_eq!(std::fs::read(&kept).unwrap(), data, "untouched");
    assert!(!d.path().join("new").exists(), "nothing created");
    assert!(!d.path().join("t.0.0").exists(), "nothing laid out");
}

/// fio's trim modes on a simulated drive (the simulator takes the trims) and on fio's null
/// engine: the I/Os are reported in the trim direction (trimwrite's writes in the write one).
#[test]
fn trim_modes_run_on_a_preset_and_the_null_engine() {
    let d = tempfile::tempdir().unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--sim",
            "vertex450-128g",
            "--name=t",
            "--size=16m",
            "--rw=randtrim",
            "--bs=4k,4k,64k",
            "--norandommap",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--name=tw",
            "--rw=trimwrite",
            "--bs=128k",
            "--size=8m",
            "--stonewall",
        ],
    );
    let j = jobs(&v);
    assert_eq!(j.len(), 2);
    assert_eq!(
        (ios(&j[0], "read"), ios(&j[0], "write"), ios(&j[0], "trim")),
        (0, 0, 256)
    );
    assert_eq!(j[0]["trim"]["io_bytes"], 16u64 << 20);
    assert!(j[0]["trim"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    assert_eq!(
        (ios(&j[1], "write"), ios(&j[1], "trim")),
        (64, 64),
        "each block trimmed, then written"
    );
    let v = fio_json(
        d.path(),
        &[
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--rw=trim",
            "--bs=4k,4k,16k",
        ],
    );
    let j = &jobs(&v)[0];
    assert_eq!(
        (ios(j, "write"), ios(j, "trim")),
        (0, 64),
        "bs's third value"
    );
    // The normal output names the mode and reports the trims.
    let out = ssdlab(d.path())
        .args([
            "fio",
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--rw=randtrimwrite",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("rw=randtrimwrite"), "{text}");
    assert!(text.contains("  trim: IOPS="), "{text}");
    assert!(text.contains("issued rwts: total=0,256,256,0"), "{text}");
}

/// One file with one `filesize`, as fio 3.33 runs it: the file is `filesize` long and the
/// job's region ends there (`size` caps a pass, `offset` does not move the end), on a preset
/// as on a file; what fio cannot run, or ssdlab cannot run as fio does, is refused in one
/// line, nothing written.
#[test]
fn one_file_of_one_filesize_ends_at_filesize_or_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let log_offsets = |name: &str| -> Vec<u64> {
        let log = std::fs::read_to_string(d.path().join(name)).unwrap();
        log.lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.get(2) == Some(&"write")).then(|| w[3].parse().unwrap())
            })
            .collect()
    };
    // size=2m filesize=1m: 1 MiB written (fio: 16 × 64k), on the preset too.
    for (target, log) in [("--filename=a", "a.log"), ("--sim=vertex450-128g", "s.log")] {
        let mut args = vec![
            "--name=t",
            "--size=2m",
            "--filesize=1m",
            "--rw=write",
            "--bs=64k",
        ];
        let l = format!("--write_iolog={log}");
        args.extend([target, l.as_str()]);
        let v = fio_json(d.path(), &args);
        assert_eq!(ios(&jobs(&v)[0], "write"), 16, "{target}");
        assert_eq!(
            log_offsets(log),
            (0..16).map(|i| i * 65536).collect::<Vec<u64>>(),
            "{target}"
        );
    }
    assert_eq!(
        std::fs::metadata(d.path().join("a")).unwrap().len(),
        1 << 20
    );
    // offset=512k: the last 512k of a 1 MiB file (fio: 8 × 64k from 512k, the file 1 MiB).
    let v = fio_json(
        d.path(),
        &[
            "--name=t",
            "--filename=b",
            "--filesize=1m",
            "--offset=512k",
            "--rw=write",
            "--bs=64k",
            "--write_iolog=b.log",
        ],
    );
    assert_eq!(ios(&jobs(&v)[0], "write"), 8);
    assert_eq!(log_offsets("b.log")[0], 512 << 10);
    assert_eq!(
        std::fs::metadata(d.path().join("b")).unwrap().len(),
        1 << 20
    );
    // An offset at or beyond filesize: fio runs nothing and fails; ssdlab refuses.
    refused(
        d.path(),
        &[
            "fio",
            "--name=t",
            "--filename=c",
            "--filesize=1m",
            "--offset=1m",
            "--rw=write",
        ],
        &["offset 1048576", "filesize=1048576"],
    );
    // A percentage of fio's null file without size= (it has no length): fio refuses it.
    refused(
        d.path(),
        &[
            "fio",
            "--name=t",
            "--ioengine=null",
            "--filesize=1m",
            "--offset=25%",
            "--rw=write",
        ],
        &["offset=25%", "size="],
    );
    // verify of random writes over part of the region: fio reads back the blocks it wrote
    // (128 of the 256 of the region), not the region
    let v = fio_json(
        d.path(),
        &[
            "--name=t",
            "--filename=c",
            "--filesize=1m",
            "--size=512k",
            "--rw=randwrite",
            "--verify=md5",
        ],
    );
    let j = &jobs(&v)[0];
    assert_eq!((ios(j, "write"), ios(j, "read")), (128, 128), "{j}");
    assert_eq!(j["error"], 0, "{j}");
}

/// A `write_iolog` that is a symbolic link (`/dev/stdout` is one) is refused: the log is renamed
/// into place, which would replace the link itself. A stray log once turned this machine's
/// `/dev/stdout` into a regular file. So is the file standard output goes to.
#[test]
fn a_write_iolog_that_is_a_link_or_standard_output_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("real.log", d.path().join("link.log")).unwrap();
    refused(
        d.path(),
        &[
            "fio",
            "--name=t",
            "--filename=f",
            "--size=64k",
            "--rw=write",
            "--write_iolog=link.log",
        ],
        &["write_iolog link.log", "symbolic link"],
    );
    assert!(!d.path().join("f").exists() && !d.path().join("real.log").exists());
    let out = d.path().join("out.json");
    let o = Sys::new(assert_cmd::cargo::cargo_bin("ssdlab"))
        .current_dir(d.path())
        .env("SSDLAB_STATE_DIR", d.path().join(".state"))
        .args([
            "fio",
            "--name=t",
            "--filename=f",
            "--size=64k",
            "--rw=write",
        ])
        .arg(format!("--write_iolog={}", out.display()))
        .stdout(std::fs::File::create(&out).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("standard output"));
    assert!(!d.path().join("f").exists(), "nothing laid out");
}

/// fio's `exitall`: a job that ends stops the jobs of its `exit_what` scope (its reporting
/// group by default; `all`: every job, and later waves never start, printed with nothing
/// done), on the simulated clock (exact) and on fio's null engine.
#[test]
fn exitall_ends_the_jobs_of_its_scope() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = |engine: &str, what: &str| {
        format!(
            "[global]\n{engine}size=64m\nbs=4k\nexitall=1\n\
             [a]\nrw=read\nthinktime=1000\nnumber_ios=50\nexit_what={what}\n\
             [b]\nrw=randread\nrate_iops=1000\ntime_based\nruntime=2s\n\
             [other]\nnew_group\nrw=randread\nrate_iops=1000\ntime_based\nruntime=300ms\n\
             [later]\nstonewall\nrw=read\nnumber_ios=10\n"
        )
    };
    let runtime = |j: &Value| j["job_runtime"].as_u64().unwrap();
    for (engine, extra) in [("", "--sim=vertex450-128g"), ("ioengine=null\n", "")] {
        // group: b stops with a; the other group and the later wave run in full
        let f = write(d, "group.fio", &job(engine, "group"));
        let mut args = vec![f.to_str().unwrap()];
        if !extra.is_empty() {
            args.push(extra);
        }
        let v = fio_json(d, &args);
        let js = jobs(&v);
        let names: Vec<&str> = js.iter().map(|j| j["jobname"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "b", "other", "later"], "{engine}");
        assert_eq!(ios(&js[0], "read"), 50);
        assert!(runtime(&js[1]) < 1000, "b ran {} ms", runtime(&js[1]));
        if engine.is_empty() {
            // on the simulated clock b stops when a ends
            assert!(
                runtime(&js[1]) <= runtime(&js[0]) + 1,
                "{} vs {}",
                runtime(&js[1]),
                runtime(&js[0])
            );
        }
        assert!(runtime(&js[2]) >= 290, "other ran {} ms", runtime(&js[2]));
        assert_eq!(ios(&js[3], "read"), 10);
        // all: every job stops with a, and the later wave never starts (printed, empty)
        let f = write(d, "all.fio", &job(engine, "all"));
        args[0] = f.to_str().unwrap();
        let v = fio_json(d, &args);
        let js = jobs(&v);
        assert_eq!(js.len(), 4, "{engine}");
        assert!(runtime(&js[1]) < 1000 && runtime(&js[2]) < 290, "{engine}");
        assert_eq!(
            (ios(&js[3], "read"), js[3]["groupid"].as_u64()),
            (0, Some(2))
        );
    }
}

/// fio's latency target on a simulated drive: the depth search runs on simulated time and
/// ends at a depth whose final window meets the target for the percentile asked; a job that
/// cannot meet it at depth 1 ends with fio's ETIMEDOUT and exit 1; the clones of a reporting
/// group on --sim are refused.
#[test]
fn latency_target_searches_the_depth_on_a_preset() {
    let d = tempfile::tempdir().unwrap();
    let job = "[lt]\nrw=randread\nbs=4k\nsize=1g\nioengine=io_uring\ndirect=1\niodepth=32\nlatency_target=300\nlatency_window=200ms\nlatency_percentile=99\ntime_based\nruntime=10s\n";
    let f = write(d.path(), "lt.fio", job);
    let v = fio_json(d.path(), &["--sim", "vertex450-128g", f.to_str().unwrap()]);
    let j = &jobs(&v)[0];
    let depth = j["latency_depth"].as_u64().unwrap();
    assert!(depth > 1 && depth < 32, "a depth between the ends: {depth}");
    assert_eq!(j["latency_target"], 300_000);
    assert_eq!(j["latency_window"], 200_000);
    assert_eq!(j["error"], 0);
    let p99 = j["read"]["clat_ns"]["percentile"]["99.000000"]
        .as_u64()
        .unwrap();
    assert!(
        p99 <= 300_000 + 300_000 / 50,
        "the final window meets the target: {p99}"
    );
    // one window of simulated time is reported
    assert!((200..=201).contains(&j["read"]["runtime"].as_u64().unwrap()));

    // 1 µs at depth 1 for every I/O cannot be met: fio's ETIMEDOUT ends the job
    let f = write(
        d.path(),
        "lt1.fio",
        &job.replace("latency_target=300", "latency_target=1")
            .replace("latency_percentile=99\n", ""),
    );
    let v = fio_json_failed(d.path(), &["--sim", "vertex450-128g", f.to_str().unwrap()]);
    assert_eq!(jobs(&v)[0]["error"], 110);
    assert_eq!(jobs(&v)[0]["latency_depth"], 1);

    refused(
        d.path(),
        &[
            "fio",
            "--sim",
            "vertex450-128g",
            "--numjobs=2",
            "--group_reporting",
            f.to_str().unwrap(),
        ],
        &["latency_target", "group_reporting", "--sim"],
    );
}

/// fio's cpus_allowed: a job confined to CPU 0 runs (its threads pinned there, split one CPU
/// each); a CPU this machine lacks is refused before anything runs, nothing created.
#[test]
fn cpus_allowed_pins_or_refuses() {
    let d = tempfile::tempdir().unwrap();
    let v = fio_json(
        d.path(),
        &[
            "--name=c",
            "--ioengine=null",
            "--size=1m",
            "--numjobs=2",
            "--cpus_allowed=0",
            "--cpus_allowed_policy=split",
        ],
    );
    assert_eq!(jobs(&v).len(), 2);
    refused(
        d.path(),
        &[
            "fio",
            "--name=c",
            "--filename=new-file",
            "--size=1m",
            "--cpus_allowed=4095",
        ],
        &["cpus_allowed", "too large"],
    );
    assert!(!d.path().join("new-file").exists());
}

#[test]
fn file_operation_engines_refuse_what_they_cannot_mean() {
    let d = tempfile::tempdir().unwrap();
    // verify: the engine writes no data
    let f = write(
        d.path(),
        "v.fio",
        "[a]\nioengine=falloc\nrw=write\nsize=1m\nverify=crc32c\nfilename=made-never\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["verify with ioengine=falloc", "nothing to verify"],
    );
    // a character device (and so a block device) is not a regular file
    let f = write(
        d.path(),
        "n.fio",
        "[a]\nioengine=falloc\nrw=write\nsize=1m\nfilename=/dev/null\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["ioengine=falloc on /dev/null", "regular files only"],
    );
    // a simulated drive has no file system
    let f = write(
        d.path(),
        "s.fio",
        "[a]\nioengine=ftruncate\nrw=write\nsize=1m\nfilename=made-never\n",
    );
    refused(
        d.path(),
        &["fio", "--sim", "crucial-mx500-1t", f.to_str().unwrap()],
        &["ioengine=ftruncate", "no file system"],
    );
    assert!(!d.path().join("made-never").exists(), "nothing was created");
    // on a file: falloc's trims punch holes, ftruncate's writes set the length
    let f = write(
        d.path(),
        "ok.fio",
        "[w]\nioengine=falloc\nrw=write\nbs=64k\nsize=256k\nfilename=f\n[t]\nstonewall\nioengine=falloc\nrw=trim\nbs=64k\nsize=256k\nfilename=f\n[cut]\nstonewall\nioengine=ftruncate\nrw=write\nbs=64k\nsize=256k\nfilename=g\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let j = jobs(&v);
    assert_eq!(
        (ios(&j[0], "write"), ios(&j[1], "trim"), ios(&j[2], "write")),
        (4, 4, 4)
    );
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(d.path().join("f")).unwrap();
    assert_eq!(
        (m.len(), m.blocks()),
        (256 << 10, 0),
        "all punched, length kept"
    );
    let m = std::fs::metadata(d.path().join("g")).unwrap();
    assert_eq!(m.len(), 192 << 10, "the last write's offset");
    // ftruncate's trims fail with EINVAL, as fio's (error 22, exit 1)
    let f = write(
        d.path(),
        "t.fio",
        "[t]\nioengine=ftruncate\nrw=trim\nbs=4k\nsize=64k\nfilename=g\n",
    );
    let v = fio_json_failed(d.path(), &[f.to_str().unwrap()]);
    assert_eq!(
        (ios(&jobs(&v)[0], "trim"), jobs(&v)[0]["error"].as_u64()),
        (1, Some(22))
    );
}

/// fio's filecreate, filestat and filedelete: each I/O one operation on a file's name, timed;
/// files of more than one block, mixed directions, trims and simulated drives refused by name,
/// before anything is created.
#[test]
fn name_engines_create_stat_and_delete_files() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "ops.fio",
        "[global]\nfilesize=4k\nnrfiles=3\n[c]\nioengine=filecreate\nrw=write\n[s]\nstonewall\nioengine=filestat\nstat_type=statx\n[d]\nstonewall\nioengine=filedelete\nfilename=s.0.0:s.0.1\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let j = jobs(&v);
    assert_eq!(
        (ios(&j[0], "write"), ios(&j[1], "read"), ios(&j[2], "read")),
        (3, 3, 2)
    );
    for e in j {
        assert_eq!(e["error"].as_u64(), Some(0), "{e}");
        let dir = if e["jobname"] == "c" { "write" } else { "read" };
        assert!(e[dir]["clat_ns"]["mean"].as_f64().unwrap() > 0.0, "timed");
    }
    // created empty; laid out to 4 KiB by filestat (it reads), two of them deleted
    for i in 0..3 {
        let m = std::fs::metadata(d.path().join(format!("c.0.{i}"))).unwrap();
        assert_eq!(m.len(), 0);
    }
    assert!(!d.path().join("s.0.0").exists() && !d.path().join("s.0.1").exists());
    assert_eq!(
        std::fs::metadata(d.path().join("s.0.2")).unwrap().len(),
        4096
    );
    // a file listed twice is gone the second time: ENOENT is the job's error (exit 1), and no
    // I/O, as fio's failed open
    let f = write(
        d.path(),
        "twice.fio",
        "[d]\nioengine=filedelete\nfilename=x:x:y\nfilesize=4k\n",
    );
    let v = fio_json_failed(d.path(), &[f.to_str().unwrap()]);
    assert_eq!(
        (jobs(&v)[0]["error"].as_u64(), ios(&jobs(&v)[0], "read")),
        (Some(2), 2)
    );
    for (job, needle) in [
        (
            "[a]\nioengine=filestat\nfilesize=8k\nnrfiles=2\n",
            "ioengine=filestat on a file of 8192 bytes, not one block",
        ),
        (
            "[a]\nioengine=filecreate\nrw=rw\nfilesize=4k\n",
            "fio times every operation as a read",
        ),
        (
            "[a]\nioengine=filedelete\nrw=trim\nfilesize=4k\n",
            "rw=trim with ioengine=filedelete",
        ),
        (
            "[a]\nioengine=filestat\nstat_type=fstat\nfilesize=4k\n",
            "stat, lstat or statx",
        ),
        // fio lays out the later job's file before the delete runs
        (
            "[a]\nioengine=filedelete\nfilesize=4k\nfilename=z\n[b]\nstonewall\nfilename=z\nsize=4k\n",
            "job a: ioengine=filedelete deletes z, which job b of a later wave uses",
        ),
    ] {
        let f = write(d.path(), "bad.fio", job);
        refused(d.path(), &["fio", f.to_str().unwrap()], &[needle]);
    }
    let f = write(
        d.path(),
        "sim.fio",
        "[a]\nioengine=filecreate\nfilesize=4k\nfilename=made-never\n",
    );
    refused(
        d.path(),
        &["fio", "--sim", "crucial-mx500-1t", f.to_str().unwrap()],
        &["ioengine=filecreate", "no file system"],
    );
    for made in ["made-never", "a.0.0", "z"] {
        assert!(!d.path().join(made).exists(), "{made}: nothing was created");
    }
}

#[test]
fn fill_device_refuses_what_fio_would_run_differently() {
    let d = tempfile::tempdir().unwrap();
    for (job, needle) in [
        ("rw=read\n", "fill_device with anything but rw=write"),
        ("rw=randwrite\n", "fill_device with anything but rw=write"),
        ("rw=write\nnrfiles=2\n", "fill_device on several files"),
        (
            "rw=write\nioengine=null\n",
            "fill_device with ioengine=null",
        ),
        ("rw=write\nverify=crc32c\n", "verify in a fill_device job"),
        (
            "rw=write\nioengine=ftruncate\n",
            "fill_device with ioengine=ftruncate",
        ),
        (
            "rw=write\noffset=1m\n",
            "fill_device with offset and no size",
        ),
    ] {
        let f = write(
            d.path(),
            "f.fio",
            &format!("[a]\nfill_device=1\nfilename=made-never\nbs=64k\n{job}"),
        );
        refused(d.path(), &["fio", f.to_str().unwrap()], &[needle]);
    }
    // a later job over the whole filled file: fio sets its files up before the fill
    // (create_serialize=1) and fails it
    let f = write(
        d.path(),
        "f.fio",
        "[w]\nfill_device=1\nfilename=made-never\nbs=64k\nrw=write\n[r]\nstonewall\nfilename=made-never\nrw=read\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["job r:", "create_serialize=1", "you need to specify size="],
    );
    assert!(!d.path().join("made-never").exists(), "nothing was created");
}

#[test]
fn numa_options_run_on_this_machines_nodes_and_refuse_others() {
    let d = tempfile::tempdir().unwrap();
    let nodes = ssdlab_io::numa::online_nodes();
    let n = nodes[0];
    let f = write(
        d.path(),
        "n.fio",
        &format!(
            "[global]\nfilename=nf\nsize=256k\nrw=read\n[cpu]\nnuma_cpu_nodes={n}\nnuma_mem_policy=bind:{n}\n[mem]\nnuma_mem_policy=interleave\n[pref]\nnuma_mem_policy=prefer:{n}\nnuma_cpu_nodes=all\n"
        ),
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    for j in jobs(&v) {
        assert_eq!(ios(j, "read"), 64, "{}", j["jobname"]);
    }
    let missing = nodes.iter().max().unwrap() + 1;
    for opt in [
        format!("numa_cpu_nodes={missing}"),
        format!("numa_mem_policy=bind:{missing}"),
    ] {
        let f = write(
            d.path(),
            "bad.fio",
            &format!("[a]\nfilename=made-never\nsize=1m\nrw=write\n{opt}\n"),
        );
        refused(
            d.path(),
            &["fio", f.to_str().unwrap()],
            &[&opt, &format!("node {missing} out of range")],
        );
    }
    let f = write(
        d.path(),
        "bad.fio",
        "[a]\nfilename=made-never\nsize=1m\nrw=write\nnuma_mem_policy=prefer\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &["one node is needed for 'prefer'"],
    );
    assert!(!d.path().join("made-never").exists());
}

#[test]
fn strided_zones_refuse_what_they_do_not_model() {
    let d = tempfile::tempdir().unwrap();
    for (job, needle) in [
        (
            "rw=randread\nzonemode=strided\nzonesize=64k\n",
            "zonemode=strided with anything but rw=read or rw=write",
        ),
        (
            "rw=read\nzonesize=64k\n",
            "zonemode=none and zonesize are not compatible",
        ),
        ("rw=read\nzonemode=strided\n", "zonesize must be specified"),
        ("rw=read\nzonemode=zbd\nzonesize=64k\n", "zonemode=zbd"),
        (
            "rw=read\nzonemode=strided\nzonesize=64k\nbsrange=4k-8k\n",
            "varying block sizes",
        ),
    ] {
        let f = write(
            d.path(),
            "z.fio",
            &format!("[a]\nfilename=made-never\nsize=1m\n{job}"),
        );
        refused(d.path(), &["fio", f.to_str().unwrap()], &[needle]);
    }
    assert!(!d.path().join("made-never").exists(), "nothing was created");
}

#[test]
fn nice_prio_and_prioclass_run_and_keep_fios_bounds() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "p.fio",
        "[global]\nioengine=null\nsize=256k\nrw=read\n[a]\nnice=5\nprio=4\nprioclass=2\n[b]\nprioclass=3\n[c]\nprio=7\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    for j in jobs(&v) {
        assert_eq!(ios(j, "read"), 64, "{}", j["jobname"]);
    }
    for (opt, needle) in [
        ("prio=8", "prio=8: out of range (0 to 7)"),
        ("prioclass=4", "prioclass=4: out of range (0 to 3)"),
        ("nice=20", "nice=20: out of range (-20 to 19)"),
    ] {
        let f = write(
            d.path(),
            "bad.fio",
            &format!("[a]\nfilename=made-never\nsize=1m\nrw=write\n{opt}\n"),
        );
        refused(d.path(), &["fio", f.to_str().unwrap()], &[needle]);
    }
    assert!(!d.path().join("made-never").exists());
}

/// fio seeds every thread by its thread number, so two jobs of one `randseed` draw offsets of
/// their own (they used to draw the same ones here: two random readers of one device in
/// lockstep, each finding the other's blocks in the caches); the first job keeps the seed.
#[test]
fn jobs_of_one_seed_draw_offsets_of_their_own() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "two.fio",
        "[global]\nioengine=null\nsize=64m\nrw=randread\nnorandommap\nnumber_ios=64\nrandseed=9\n\
         [a]\nwrite_iolog=a.log\n[b]\nwrite_iolog=b.log\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    let seeds: Vec<u64> = jobs(&v)
        .iter()
        .map(|j| j["ssdlab"]["spec"]["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds[0], 9);
    assert_ne!(seeds[1], 9);
    let offsets = |name: &str| -> Vec<String> {
        std::fs::read_to_string(d.path().join(name))
            .unwrap()
            .lines()
            .filter(|l| l.contains(" read "))
            .map(|l| l.split_whitespace().nth(3).unwrap().to_string())
            .collect()
    };
    let (a, b) = (offsets("a.log"), offsets("b.log"));
    assert_eq!((a.len(), b.len()), (64, 64));
    let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    assert!(same < 4, "{same} of 64 offsets alike");
}

/// fio lays a file out for a job that reads with the job's deduplicable buffers; ssdlab's
/// layout is unique data, so such a job is refused, nothing created; on a file laid out by a
/// write job before it, it runs.
#[test]
fn dedupe_on_a_file_laid_out_for_reads_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "r.fio",
        "[r]\nfilename=r.img\nsize=1m\nrw=randrw\ndedupe_percentage=50\n",
    );
    refused(
        d.path(),
        &["fio", f.to_str().unwrap()],
        &[
            "job r: dedupe_percentage on r.img",
            "not supported by ssdlab",
        ],
    );
    assert!(!d.path().join("r.img").exists());
    let f = write(
        d.path(),
        "wr.fio",
        "[w]\nfilename=r.img\nsize=1m\nrw=write\n[r]\nstonewall\nfilename=r.img\nsize=1m\nrw=randrw\ndedupe_percentage=50\n",
    );
    let v = fio_json(d.path(), &[f.to_str().unwrap()]);
    assert_eq!(ios(&jobs(&v)[0], "write"), 256);
}
