//! The `ssdlab sweep` / `ssdlab report` glue (src/cmd_sweep.rs, src/sweeping.rs,
//! src/store_report.rs) with a fake point runner: every point is still checked as the real
//! runner would, but "runs" instantly with a known answer.

#[path = "../crates/sweep/tests/common/mod.rs"]
mod common;

use common::*;
use ssdlab::cmd_report::{cmd_report, ReportArgs};
use ssdlab::cmd_sweep::{sweep_with, SweepArgs};
use ssdlab::sweeping::point_runner;
use ssdlab_sweep::Point;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

fn sweep_args(file: &Path) -> SweepArgs {
    SweepArgs {
        file: file.to_path_buf(),
        db: None,
        jobs: Some(2),
        dry_run: false,
        allow_destroy: false,
        max_memory: None,
    }
}

fn report_args(db: &Path) -> ReportArgs {
    ReportArgs {
        db: db.to_path_buf(),
        csv: None,
        mix: None,
        qd: None,
        sweep: None,
        json: false,
        fio_json: None,
        html: None,
    }
}

fn study(dir: &Path) -> PathBuf {
    let f = dir.join("study.toml");
    std::fs::write(&f, SIM_STUDY.replace("repeats = 2", "repeats = 1")).unwrap();
    f
}

#[test]
fn clap_definitions_are_valid() {
    use clap::{CommandFactory, Parser, Subcommand};
    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }
    #[derive(Subcommand)]
    enum Cmd {
        Sweep(SweepArgs),
        Report(ReportArgs),
    }
    Cli::command().debug_assert();
    let c = Cli::try_parse_from([
        "x",
        "sweep",
        "s.toml",
        "--db",
        "r.sqlite",
        "--jobs",
        "3",
        "--dry-run",
    ])
    .unwrap();
    assert!(matches!(
        c.cmd,
        Cmd::Sweep(SweepArgs {
            jobs: Some(3),
            dry_run: true,
            ..
        })
    ));
    assert!(Cli::try_parse_from(["x", "sweep", "s.toml", "--jobs", "0"]).is_err());
    let c = Cli::try_parse_from([
        "x", "report", "r.sqlite", "--csv", "-", "--mix", "a=1", "--qd", "4",
    ])
    .unwrap();
    assert!(matches!(c.cmd, Cmd::Report(ReportArgs { qd: Some(4), .. })));
    assert!(
        Cli::try_parse_from(["x", "report", "r.sqlite", "--qd", "4"]).is_err(),
        "--qd needs --mix"
    );
}

#[test]
fn sweep_then_report_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let f = study(dir.path());
    let flag = AtomicBool::new(false);

    // Dry run: lists, creates nothing.
    let mut a = sweep_args(&f);
    a.dry_run = true;
    assert_eq!(
        sweep_with(
            a,
            &point_runner(false, None),
            &|_: &Point| panic!("dry run runs nothing"),
            &flag
        )
        .unwrap(),
        0
    );
    let db = dir.path().join("stripe-study.sqlite");
    assert!(!db.exists());

    assert_eq!(
        sweep_with(
            sweep_args(&f),
            &point_runner(false, None),
            &fake_runner,
            &flag
        )
        .unwrap(),
        0
    );
    assert!(db.is_file(), "default store next to the sweep file");
    // Resume: nothing left to run.
    assert_eq!(
        sweep_with(
            sweep_args(&f),
            &point_runner(false, None),
            &|_: &Point| panic!("all done"),
            &flag
        )
        .unwrap(),
        0
    );

    assert_eq!(cmd_report(report_args(&db)).unwrap(), 0);
    let csv = dir.path().join("out.csv");
    let mut r = report_args(&db);
    r.csv = Some(csv.clone());
    r.mix = Some("4k-randread=0.7,128k-seqwrite=0.3".into());
    assert_eq!(cmd_report(r).unwrap(), 0);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 145);
    assert!(text.starts_with("sweep,target,drives,stripe_bytes,workload,qd,repeat,iops,mb_s,lat_mean_us,lat_p99_us,gain_pct"));

    let mut r = report_args(&db);
    r.mix = Some("4k-randred=1".into());
    let e = cmd_report(r).err().unwrap().err.to_string();
    assert!(e.contains("did you mean 4k-randread?"), "{e}");
    let mut r = report_args(&db);
    r.sweep = Some("nope".into());
    let e = cmd_report(r).err().unwrap().err.to_string();
    assert!(
        e.contains("no sweep 'nope'") && e.contains("stripe-study"),
        "{e}"
    );
    let mut r = report_args(&db);
    r.csv = Some("-".into());
    r.json = true;
    assert!(cmd_report(r).is_err());
}

#[test]
fn bad_store_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let f = study(dir.path());
    let flag = AtomicBool::new(false);
    let calls = AtomicUsize::new(0);
    let runner = |p: &Point| {
        calls.fetch_add(1, Ordering::SeqCst);
        fake_runner(p)
    };
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "my precious notes\n").unwrap();
    let mut a = sweep_args(&f);
    a.db = Some(notes.clone());
    let e = sweep_with(a, &point_runner(false, None), &runner, &flag)
        .err()
        .unwrap()
        .err
        .to_string();
    assert!(e.contains("is not an ssdlab results store"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "my precious notes\n"
    );
    let e = cmd_report(report_args(&notes))
        .err()
        .unwrap()
        .err
        .to_string();
    assert!(e.contains("is not an ssdlab results store"), "{e}");
    // A directory is never used as a store.
    let mut a = sweep_args(&f);
    a.db = Some(dir.path().to_path_buf());
    assert!(sweep_with(a, &point_runner(false, None), &runner, &flag).is_err());
    // Report never creates a store.
    let missing = dir.path().join("missing.sqlite");
    let e = cmd_report(report_args(&missing))
        .err()
        .unwrap()
        .err
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
    assert!(!missing.exists());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_target_on_another_host_is_refused_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let flag = AtomicBool::new(false);
    std::fs::write(dir.path().join("a.img"), vec![0x5au8; 1 << 20]).unwrap();
    let f = dir.path().join("hosted.toml");
    let write = |host: &str| {
        std::fs::write(
            &f,
            format!(
                "name = \"hosted\"\ntime = \"1s\"\nqd = [1]\nworkloads = [\"4k-randread\"]\n\
                 [[target]]\npath = \"a.img\"\nhost = \"{host}\"\n"
            ),
        )
        .unwrap()
    };
    write("no-such-host");
    let e = sweep_with(
        sweep_args(&f),
        &point_runner(false, None),
        &|_: &Point| panic!("must not run"),
        &flag,
    )
    .err()
    .unwrap();
    assert_eq!(e.code, 2);
    let me = ssdlab_cluster::rank::this_host().unwrap();
    let e = e.err.to_string();
    assert!(
        e.contains("host = \"no-such-host\"") && e.contains(&format!("this machine is {me}")),
        "{e}"
    );
    assert!(!dir.path().join("hosted.sqlite").exists());
    // This machine's own name (in capitals, too) is accepted: the target runs here.
    write(&me.to_uppercase());
    let calls = AtomicUsize::new(0);
    let runner = |p: &Point| {
        calls.fetch_add(1, Ordering::SeqCst);
        fake_runner(p)
    };
    let mut a = sweep_args(&f);
    a.jobs = None;
    assert_eq!(
        sweep_with(a, &point_runner(false, None), &runner, &flag).unwrap(),
        0
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn bad_sweep_input_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let flag = AtomicBool::new(false);
    let f = dir.path().join("real.toml");
    std::fs::write(
        &f,
        "name = \"real\"\ntime = \"1s\"\nqd = [1]\nworkloads = [\"4k-randread\"]\n\
         [[target]]\nmembers = [\"a.img\", \"b.img\"]\nstripes = [\"16k\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.img"), vec![0u8; 65536]).unwrap();
    let e = sweep_with(
        sweep_args(&f),
        &point_runner(false, None),
        &|_: &Point| panic!("must not run"),
        &flag,
    )
    .err()
    .unwrap()
    .err
    .to_string();
    assert!(e.contains("b.img"), "{e}");
    assert!(!dir.path().join("real.sqlite").exists());
    // Every point is checked (presets, overrides) before anything is created.
    let g = study(dir.path());
    let text = std::fs::read_to_string(&g).unwrap();
    std::fs::write(&g, text.replace("vertex450-128g", "vertex451-128g")).unwrap();
    let e = sweep_with(
        sweep_args(&g),
        &point_runner(false, None),
        &fake_runner,
        &flag,
    )
    .err()
    .unwrap()
    .err
    .to_string();
    assert!(e.contains("vertex451-128g"), "{e}");
    assert!(!dir.path().join("stripe-study.sqlite").exists());
    // A typo in the file.
    std::fs::write(
        &f,
        "name = \"x\"\ntime = \"1s\"\nqd = [1]\nworkload = [\"4k-randread\"]\n",
    )
    .unwrap();
    let e = sweep_with(
        sweep_args(&f),
        &point_runner(false, None),
        &fake_runner,
        &flag,
    )
    .err()
    .unwrap()
    .err
    .to_string();
    assert!(e.contains(&f.display().to_string()), "{e}");
}

#[test]
fn exit_codes_for_failures_and_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let f = study(dir.path());
    let flag = AtomicBool::new(false);
    let failing = |p: &Point| {
        if p.seq == 3 {
            Err("no such preset field".into())
        } else {
            fake_runner(p)
        }
    };
    assert_eq!(
        sweep_with(sweep_args(&f), &point_runner(false, None), &failing, &flag).unwrap(),
        1
    );
    flag.store(true, Ordering::SeqCst);
    assert_eq!(
        sweep_with(
            sweep_args(&f),
            &point_runner(false, None),
            &fake_runner,
            &flag
        )
        .unwrap(),
        130
    );
    flag.store(false, Ordering::SeqCst);
    assert_eq!(
        sweep_with(
            sweep_args(&f),
            &point_runner(false, None),
            &fake_runner,
            &flag
        )
        .unwrap(),
        0
    );
}

/// On a read-only file system a finished sweep re-runs (nothing to do, exit 0) and reports; a
/// sweep with points left is refused before any point runs.
#[test]
fn finished_sweep_reruns_and_reports_on_a_read_only_file_system() {
    if !privileged("finished_sweep_reruns_and_reports_on_a_read_only_file_system") {
        return;
    }
    let fs = Tmpfs::new("16m");
    let flag = AtomicBool::new(false);
    let f = study(fs.path());
    assert_eq!(
        sweep_with(
            sweep_args(&f),
            &point_runner(false, None),
            &fake_runner,
            &flag
        )
        .unwrap(),
        0
    );
    let g = fs.path().join("unfinished.toml");
    std::fs::write(
        &g,
        SIM_STUDY
            .replace("repeats = 2", "repeats = 1")
            .replace("stripe-study", "unfinished"),
    )
    .unwrap();
    let failing = |p: &Point| {
        if p.seq == 3 {
            Err("no such preset field".into())
        } else {
            fake_runner(p)
        }
    };
    assert_eq!(
        sweep_with(sweep_args(&g), &point_runner(false, None), &failing, &flag).unwrap(),
        1
    );
    fs.remount("ro");

    let calls = AtomicUsize::new(0);
    let counting = |p: &Point| {
        calls.fetch_add(1, Ordering::SeqCst);
        fake_runner(p)
    };
    assert_eq!(
        sweep_with(sweep_args(&f), &point_runner(false, None), &counting, &flag).unwrap(),
        0
    );
    let db = fs.path().join("stripe-study.sqlite");
    assert_eq!(cmd_report(report_args(&db)).unwrap(), 0);
    let e = sweep_with(sweep_args(&g), &point_runner(false, None), &counting, &flag).unwrap_err();
    assert_eq!(e.code, 2, "a read-only store with work left is refused");
    let e = format!("{:#}", e.err);
    assert!(
        e.contains("unfinished.sqlite is read-only") && e.contains("still need to run"),
        "{e}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

/// A disk that fills up during a sweep: the error is an I/O failure (exit code 1 in the CLI, not
/// bad input), the finished points stay, and once there is space the same command finishes.
#[test]
fn full_disk_during_a_sweep_is_an_io_failure_and_resumes() {
    if !privileged("full_disk_during_a_sweep_is_an_io_failure_and_resumes") {
        return;
    }
    // Room for the store and its points and some results, not for all 144 (about 420 KB).
    let fs = Tmpfs::new("320k");
    let flag = AtomicBool::new(false);
    let f = study(fs.path());
    let e = sweep_with(
        sweep_args(&f),
        &point_runner(false, None),
        &fake_runner,
        &flag,
    )
    .unwrap_err();
    assert_eq!(e.code, 1, "an I/O failure, not bad input: {:#}", e.err);
    assert!(
        format!("{:#}", e.err).contains("I/O failure"),
        "{:#}",
        e.err
    );
    fs.remount("size=16m");
    let calls = AtomicUsize::new(0);
    let counting = |p: &Point| {
        calls.fetch_add(1, Ordering::SeqCst);
        fake_runner(p)
    };
    assert_eq!(
        sweep_with(sweep_args(&f), &point_runner(false, None), &counting, &flag).unwrap(),
        0
    );
    let ran = calls.load(Ordering::SeqCst);
    assert!(
        ran > 0 && ran < 144,
        "{ran} points ran after the disk filled"
    );
    assert_eq!(
        cmd_report(report_args(&fs.path().join("stripe-study.sqlite"))).unwrap(),
        0
    );
}
