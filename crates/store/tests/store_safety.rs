//! The results store under concurrency and faults: two creators racing on a new store (threads
//! and processes), two runs of one sweep into one store, damaged files, and — with root, on a
//! small tmpfs — a read-only file system and a full disk.
//!
//! The tmpfs tests need root (to mount). As root they must run: failing to set the file system up
//! is a test failure. Without root they are skipped with a message, unless
//! `SSDLAB_REQUIRE_PRIVILEGED_TESTS=1`, which turns the skip into a failure.

use ssdlab_stats::RunResult;
use ssdlab_store::{PointRecord, PointStatus, Store, StoreError};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const SPEC: &str = "name = 'race'";
const POINTS: i64 = 2;

fn rec(seq: i64) -> PointRecord {
    PointRecord {
        key: format!("{seq:032x}"),
        seq,
        target_label: "sim x2".into(),
        target_json: r#"{"kind":"sim"}"#.into(),
        baseline: false,
        baseline_label: Some("sim".into()),
        workload_name: "4k-randread".into(),
        workload_json: r#"{"qd":4}"#.into(),
        qd: 4,
        stripe: Some(16384),
        drives: 2,
        repeat: 0,
    }
}

fn records(n: i64) -> Vec<PointRecord> {
    (0..n).map(rec).collect()
}

/// A result whose JSON is a few KiB (like real ones, which carry percentiles and series).
fn result(iops: f64, percentiles: usize) -> RunResult {
    let mut r = RunResult::default();
    r.read.iops = iops;
    r.read.ios = 10;
    r.read.bw_bytes = iops * 4096.0;
    r.read.lat.n = 10;
    r.read.lat.mean = 1000.0;
    r.read.lat.percentiles = (0..percentiles)
        .map(|i| (i as f64 * 100.0 / percentiles as f64, 1000 + i as u64))
        .collect();
    r
}

/// One run of the sweep "race" into the store at `p`, as `ssdlab sweep` does it: open (creating
/// the store if needed), register the sweep, sync its points, store each missing point in its own
/// transaction; `fail_first` stores a failure before some results, as a retried point would.
fn run_race_sweep(p: &Path, fail_first: bool) -> Result<(), StoreError> {
    let mut s = Store::open(p)?;
    let id = s.begin_sweep("race", SPEC)?;
    let recs = records(POINTS);
    let done = s.sync_points(id, &recs)?;
    for r in recs.iter().filter(|r| !done.contains(&r.key)) {
        if fail_first && r.seq % 3 == 0 {
            s.record_failure(&r.key, "transient")?;
        }
        s.record_result(&r.key, &result(r.seq as f64, 8))?;
    }
    Ok(())
}

/// The store at `p` holds the finished sweep "race", and nothing but the store is in its
/// directory (no temporary file, no journal).
fn assert_finished_race_store(p: &Path) {
    let s = Store::open_existing(p, true).unwrap();
    let sweeps = s.sweeps().unwrap();
    assert_eq!(sweeps.len(), 1, "{sweeps:?}");
    let pts = s.points(sweeps[0].id).unwrap();
    assert_eq!(pts.len(), POINTS as usize);
    for pt in &pts {
        assert_eq!(pt.status, PointStatus::Done, "{pt:?}");
        assert_eq!(pt.result.as_ref().unwrap().iops, pt.record.seq as f64);
        assert_eq!(pt.error, None);
    }
    drop(s);
    assert_eq!(dir_entries(p.parent().unwrap()), ["r.sqlite"]);
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Two threads (two connections) create, fill and finish the same new store at the same moment,
/// while a third keeps opening it read-only: both runs succeed, the reader only ever sees "does
/// not exist" or a complete store, and the store ends consistent with no file left beside it.
#[test]
fn two_writers_race_on_a_new_store_threads() {
    for i in 0..50 {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sqlite");
        let go = Arc::new(Barrier::new(3));
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (p, go) = (p.clone(), go.clone());
                std::thread::spawn(move || {
                    go.wait();
                    run_race_sweep(&p, w == 1)
                })
            })
            .collect();
        let reader = {
            let (p, go) = (p.clone(), go.clone());
            std::thread::spawn(move || {
                go.wait();
                let deadline = Instant::now() + Duration::from_secs(10);
                loop {
                    match Store::open_existing(&p, true) {
                        Ok(_) => return Ok(()),
                        Err(StoreError::Missing { .. }) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_micros(100))
                        }
                        Err(e) => return Err(e),
                    }
                }
            })
        };
        for w in writers {
            w.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("iteration {i}: {e}"));
        }
        reader
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("iteration {i}, reader: {e}"));
        assert_finished_race_store(&p);
    }
}

const CHILD_PATH: &str = "SSDLAB_STORE_RACE_CHILD_PATH";
const CHILD_START: &str = "SSDLAB_STORE_RACE_CHILD_START_NS";

fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Not a test on its own: the body of one racing process of
/// `two_writers_race_on_a_new_store_processes`, which starts it with `--ignored` (ignored in a
/// normal run rather than counted as a pass).
#[test]
#[ignore = "the body of a racing child process, started by two_writers_race_on_a_new_store_processes"]
fn race_child_process() {
    let p = std::env::var(CHILD_PATH).expect("started by the race test, which sets the path");
    let start: u128 = std::env::var(CHILD_START).unwrap().parse().unwrap();
    // Both processes start their run at the same instant.
    while unix_ns() < start {
        std::hint::spin_loop();
    }
    let fail_first = std::env::var("SSDLAB_STORE_RACE_CHILD_FAIL").is_ok();
    if let Err(e) = run_race_sweep(Path::new(&p), fail_first) {
        panic!("child run failed: {e}");
    }
}

/// The same race between two real processes (SQLite's locks are per process).
#[test]
fn two_writers_race_on_a_new_store_processes() {
    let exe = std::env::current_exe().unwrap();
    for i in 0..15 {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sqlite");
        let start = unix_ns() + 60_000_000;
        let children: Vec<_> = (0..2)
            .map(|c| {
                let mut cmd = Command::new(&exe);
                cmd.args([
                    "--exact",
                    "race_child_process",
                    "--ignored",
                    "--test-threads=1",
                ])
                .env(CHILD_PATH, &p)
                .env(CHILD_START, start.to_string());
                if c == 1 {
                    cmd.env("SSDLAB_STORE_RACE_CHILD_FAIL", "1");
                }
                cmd.stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "iteration {i}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
        }
        assert_finished_race_store(&p);
    }
}

// ---------------------------------------------------------------------------------------------
// Damaged stores.

/// A real store with 60 finished points whose results are a few KiB each, like a sweep's.
fn filled_store(dir: &Path) -> PathBuf {
    let p = dir.join("r.sqlite");
    let mut s = Store::open(&p).unwrap();
    let id = s.begin_sweep("race", SPEC).unwrap();
    let recs = records(60);
    s.sync_points(id, &recs).unwrap();
    for r in &recs {
        s.record_result(&r.key, &result(r.seq as f64, 150)).unwrap();
    }
    s.insert_run("single", &result(1.0, 150)).unwrap();
    p
}

fn page_size(bytes: &[u8]) -> usize {
    match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => n as usize,
    }
}

/// Opening the damaged copy `p` (read-write and read-only) is refused as damage, with one line
/// that names the file, and the file is left as it was.
fn assert_refused_as_damaged(p: &Path, what: &str) {
    let before = std::fs::read(p).unwrap();
    for read_only in [false, true] {
        let e = if read_only {
            Store::open_existing(p, true).unwrap_err()
        } else {
            Store::open(p).unwrap_err()
        };
        let msg = format!("{:#}", anyhow::Error::from(e));
        assert!(
            msg.contains(&p.display().to_string()) && msg.contains("is damaged"),
            "{what}: {msg}"
        );
        assert!(!msg.contains('\n'), "{what}: {msg}");
    }
    assert_eq!(
        std::fs::read(p).unwrap(),
        before,
        "{what}: the file changed"
    );
}

fn damaged_copy(dir: &Path, good: &[u8], name: &str, damage: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = good.to_vec();
    damage(&mut bytes);
    assert_ne!(bytes, good, "{name}: nothing was damaged");
    let p = dir.join(name);
    std::fs::write(&p, &bytes).unwrap();
    p
}

#[test]
fn truncated_and_overwritten_stores_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good_path = filled_store(dir.path());
    let good = std::fs::read(&good_path).unwrap();
    let ps = page_size(&good);
    assert!(
        good.len() >= 40 * ps,
        "the store is too small to damage its middle"
    );
    // The intact store opens.
    drop(Store::open(&good_path).unwrap());
    let mid = good.len() / 2;

    // Truncated to half.
    let p = damaged_copy(dir.path(), &good, "half.sqlite", |b| b.truncate(mid));
    assert_refused_as_damaged(&p, "truncated to half");
    // Shortened within its last page: SQLite alone would read zeros there; the size check
    // catches it.
    let p = damaged_copy(dir.path(), &good, "short.sqlite", |b| {
        b.truncate(good.len() - 100)
    });
    assert_refused_as_damaged(&p, "the last 100 bytes cut off");
    let e = Store::open_existing(&p, true).unwrap_err().to_string();
    assert!(e.contains("the file is truncated"), "{e}");

    // Bytes flipped in the middle of the file, inside stored JSON text (the first run of 16
    // printable bytes with JSON punctuation at or after the middle).
    let at = (mid..good.len() - 16)
        .find(|&i| {
            let w = &good[i..i + 16];
            w.iter().all(|c| (0x20..0x7f).contains(c)) && w.contains(&b'"') && w.contains(&b':')
        })
        .expect("no JSON text after the middle of the store");
    assert!(at < mid + ps, "no JSON text within a page of the middle");
    let p = damaged_copy(dir.path(), &good, "flipped.sqlite", |b| {
        b[at..at + 16].iter_mut().for_each(|c| *c ^= 0xff)
    });
    assert_refused_as_damaged(&p, "16 bytes of JSON flipped");

    // The b-tree page header of a table page in the second half: cell count and content offset
    // overwritten.
    let page = (mid / ps..good.len() / ps)
        .find(|&n| n > 0 && good[n * ps] == 0x0d)
        .expect("no table leaf page in the second half");
    let p = damaged_copy(dir.path(), &good, "header.sqlite", |b| {
        b[page * ps + 3..page * ps + 7].copy_from_slice(&[0xff, 0xff, 0x00, 0x01])
    });
    assert_refused_as_damaged(&p, "a b-tree page header overwritten");

    // The middle page zeroed (a lost write).
    let page = mid / ps;
    let p = damaged_copy(dir.path(), &good, "zeroed.sqlite", |b| {
        b[page * ps..(page + 1) * ps].fill(0)
    });
    assert_refused_as_damaged(&p, "the middle page zeroed");

    // A value of the wrong type, written through SQL (so the file structure is intact).
    let p = dir.path().join("typed.sqlite");
    std::fs::write(&p, &good).unwrap();
    rusqlite::Connection::open(&p)
        .unwrap()
        .execute("UPDATE results SET iops = 'lots' WHERE rowid = 7", [])
        .unwrap();
    assert_refused_as_damaged(&p, "a number replaced by text");
    let e = Store::open(&p).unwrap_err().to_string();
    assert!(e.contains("results.iops of row 7 is not a number"), "{e}");

    // A done point whose result row is gone.
    let p = dir.path().join("orphan.sqlite");
    std::fs::write(&p, &good).unwrap();
    rusqlite::Connection::open(&p)
        .unwrap()
        .execute("DELETE FROM results WHERE rowid = 3", [])
        .unwrap();
    assert_refused_as_damaged(&p, "a result row deleted");
}

// ---------------------------------------------------------------------------------------------
// Read-only file system and full disk (root: a small tmpfs).

/// True when the privileged tests can run; as root they always must.
fn privileged(test: &str) -> bool {
    ssdlab_testkit::privileged(&format!("{test} (mounts a small tmpfs)"))
}

/// A tmpfs of a given size mounted on a fresh temporary directory; unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

fn mount(args: &[&str], dir: &Path) {
    // A remount read-only is refused while a file on it is still open for writing; the last
    // close of a process that just exited can lag behind its exit status, so try a few times.
    let mut tries = 0;
    let out = loop {
        let out = Command::new("mount")
            .args(args)
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        tries += 1;
        if out.status.success()
            || tries == 20
            || !String::from_utf8_lossy(&out.stderr).contains("busy")
        {
            break out;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        out.status.success(),
        "mount {args:?} {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Tmpfs {
    fn new(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        mount(
            &["-t", "tmpfs", "-o", &format!("size={size}"), "ssdlab-test"],
            dir.path(),
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, opts: &str) {
        mount(&["-o", &format!("remount,{opts}")], self.path());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(self.path()).status();
        }
    }
}

/// On a read-only file system a finished sweep opens (read-only, automatically), re-runs without
/// writing and reports; anything that needs writing is refused clearly; no store is created there.
#[test]
fn read_only_file_system_serves_a_finished_sweep() {
    if !privileged("read_only_file_system_serves_a_finished_sweep") {
        return;
    }
    let fs = Tmpfs::new("4m");
    let p = fs.path().join("r.sqlite");
    run_race_sweep(&p, true).unwrap();
    assert_finished_race_store(&p);
    fs.remount("ro");
    // A write really is impossible now.
    assert!(std::fs::OpenOptions::new().write(true).open(&p).is_err());

    let mut s = Store::open(&p).unwrap();
    assert!(s.is_read_only());
    let id = s.begin_sweep("race", SPEC).unwrap();
    let done = s.sync_points(id, &records(POINTS)).unwrap();
    assert_eq!(done.len(), POINTS as usize);
    assert_eq!(s.points(id).unwrap().len(), POINTS as usize);
    // The whole of a sweep run: nothing to do, nothing written.
    drop(s);
    run_race_sweep(&p, false).unwrap();
    let mut s = Store::open(&p).unwrap();
    for e in [
        s.sync_points(id, &records(POINTS + 1)).unwrap_err(),
        s.begin_sweep("race", "name = 'race' # changed")
            .unwrap_err(),
        s.record_result(&rec(0).key, &result(1.0, 8)).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::ReadOnly { .. }), "{e}");
        assert!(!e.is_io_failure(), "{e}");
    }
    assert!(Store::open_existing(&p, true).unwrap().is_read_only());

    // Creating a store there fails cleanly and creates nothing.
    let e = Store::open(&fs.path().join("new.sqlite")).unwrap_err();
    assert!(e.to_string().contains("cannot create"), "{e}");
    assert_eq!(dir_entries(fs.path()), ["r.sqlite"]);
}

/// A full disk while recording is an I/O failure; the store stays consistent (the failed
/// transaction is rolled back), and once there is space again the run resumes and finishes.
#[test]
fn full_disk_is_an_io_failure_and_the_store_resumes() {
    if !privileged("full_disk_is_an_io_failure_and_the_store_resumes") {
        return;
    }
    // Too small to create a store at all: I/O failure, nothing left behind.
    let tiny = Tmpfs::new("8k");
    let e = Store::open(&tiny.path().join("r.sqlite")).unwrap_err();
    assert!(e.is_io_failure(), "{e}");
    assert!(e.to_string().contains("r.sqlite"), "{e}");
    assert_eq!(dir_entries(tiny.path()), Vec::<String>::new());
    drop(tiny);

    let fs = Tmpfs::new("160k");
    let p = fs.path().join("r.sqlite");
    let recs = records(200);
    let mut stored = 0;
    let e = {
        let mut s = Store::open(&p).unwrap();
        let id = s.begin_sweep("full", "name = 'full'").unwrap();
        s.sync_points(id, &recs).unwrap();
        loop {
            let r = &recs[stored];
            match s.record_result(&r.key, &result(r.seq as f64, 150)) {
                Ok(()) => stored += 1,
                Err(e) => break e,
            }
            assert!(stored < recs.len(), "the disk never filled up");
        }
    };
    assert!(e.is_io_failure(), "{e}");
    assert!(matches!(e, StoreError::Io { .. }), "{e}");
    assert!(stored > 0, "nothing fitted: {e}");

    // Consistent: it opens (integrity checked), exactly the stored points are done.
    let check = |want_done: usize| {
        let s = Store::open_existing(&p, true).unwrap();
        let id = s.sweep_by_name("full").unwrap().unwrap().id;
        let pts = s.points(id).unwrap();
        let done: HashSet<&str> = pts
            .iter()
            .filter(|p| p.status == PointStatus::Done)
            .map(|p| p.record.key.as_str())
            .collect();
        assert_eq!(done.len(), want_done);
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(done.contains(r.key.as_str()), i < want_done, "point {i}");
        }
        assert_eq!(
            dir_entries(fs.path()),
            ["r.sqlite"],
            "a journal was left behind"
        );
    };
    check(stored);

    // Space again: the same run resumes where it stopped.
    fs.remount("size=16m");
    let mut s = Store::open(&p).unwrap();
    let id = s.begin_sweep("full", "name = 'full'").unwrap();
    let done = s.sync_points(id, &recs).unwrap();
    assert_eq!(done.len(), stored);
    for r in recs.iter().filter(|r| !done.contains(&r.key)) {
        s.record_result(&r.key, &result(r.seq as f64, 150)).unwrap();
    }
    drop(s);
    check(recs.len());
}
