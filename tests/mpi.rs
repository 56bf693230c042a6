//! `mpirun --oversubscribe -n 4 ssdlab …` on one machine (built with `--features mpi`): merged
//! results, per-rank targets, shared-target segments, failures on one rank, signals, distributed
//! sweeps and a rank killed in the middle of one.
//!
//! mpirun missing is a skip, except under SSDLAB_REQUIRE_PRIVILEGED_TESTS=1 (CI), where it fails.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const RANKS: usize = 4;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ssdlab"))
}

/// `mpirun --oversubscribe -n N ssdlab ARGS…`, or `None` (skip) when mpirun is missing.
fn mpirun(n: usize, args: &[&str]) -> Option<Command> {
    let found = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        ssdlab_testkit::skip("mpirun is missing (install openmpi-bin)");
        return None;
    }
    let mut c = Command::new("mpirun");
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // one machine, no network interfaces to probe
        .env("OMPI_MCA_btl", "self,vader")
        .args(["--oversubscribe", "-n", &n.to_string()])
        .arg(bin())
        .args(args);
    Some(c)
}

fn out_of(mut c: Command) -> Output {
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs and parses stdout as one JSON document.
fn job_json(n: usize, args: &[&str]) -> Option<Value> {
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    a.push("--json");
    let out = out_of(mpirun(n, &a)?);
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    Some(serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document"))
}

fn ranks(v: &Value) -> &Vec<Value> {
    v["jobs"][0]["ssdlab"]["cluster"]["per_rank"]
        .as_array()
        .expect("per-rank entries")
}

fn pct(lat: &Value, p: &str) -> u64 {
    lat["percentile"][p]
        .as_u64()
        .unwrap_or_else(|| panic!("percentile {p} in {lat}"))
}

/// Counts add up exactly; rates are the sums of the ranks' rates; merged percentiles lie within
/// the ranks' (a property of merging distributions that an average also has, checked exactly on
/// simulated ranks below).
fn check_sums(v: &Value, kind: &str) {
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1, "one aggregated job");
    let job = &v["jobs"][0];
    let rs = ranks(v);
    assert_eq!(rs.len(), RANKS);
    let sum = |f: &dyn Fn(&Value) -> f64| rs.iter().map(f).sum::<f64>();
    assert_eq!(
        job[kind]["total_ios"].as_u64().unwrap() as f64,
        sum(&|r| r[kind]["ios"].as_f64().unwrap())
    );
    assert_eq!(
        job[kind]["io_bytes"].as_u64().unwrap() as f64,
        sum(&|r| r[kind]["bytes"].as_f64().unwrap())
    );
    let iops = job[kind]["iops"].as_f64().unwrap();
    let rank_iops = sum(&|r| r[kind]["iops"].as_f64().unwrap());
    assert!(
        (iops - rank_iops).abs() <= 1e-6 * iops,
        "{iops} vs {rank_iops}"
    );
    for p in ["50.000000", "99.000000", "99.900000"] {
        let agg = pct(&job[kind]["lat_ns"], p);
        let each: Vec<u64> = rs
            .iter()
            .map(|r| {
                r[kind]["lat"]["percentiles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| format!("{:.6}", x[0].as_f64().unwrap()) == p)
                    .unwrap()[1]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        let (lo, hi) = (*each.iter().min().unwrap(), *each.iter().max().unwrap());
        assert!(
            lo <= agg && agg <= hi,
            "p{p}: {agg} outside the ranks' {each:?}"
        );
    }
    // the per-second series is the sum of the ranks' (counts over whole seconds)
    let cluster = &job["ssdlab"]["cluster"];
    assert_eq!(cluster["ranks"], RANKS);
    assert_eq!(cluster["hosts"], 1);
    assert!(cluster["slowest"]["rank"].is_u64());
    assert!(job["ssdlab"]["cpu_ns_per_io"].as_f64().unwrap() >= 0.0);
}

#[test]
fn null_target_on_four_ranks_adds_up() {
    let Some(v) = job_json(RANKS, &["--null", "--qd", "4", "--ios", "50000"]) else {
        return;
    };
    check_sums(&v, "read");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 4 * 50_000);
    for r in ranks(&v) {
        assert_eq!(r["ios"], 50_000);
        assert!(!r["host"].as_str().unwrap().is_empty());
    }
}

#[test]
fn simulated_ranks_merge_histograms_exactly() {
    let args = [
        "--sim",
        "vertex450-128g",
        "--span",
        "1g",
        "--rw",
        "randrw",
        "--qd",
        "4",
        "--time",
        "300ms",
        "--seed",
        "7",
    ];
    let Some(v) = job_json(RANKS, &args) else {
        return;
    };
    check_sums(&v, "read");
    check_sums(&v, "write");
    // Rank r ran what one process runs with --seed 7+r (simulated runs are deterministic), and
    // the job's percentiles are those of the ranks' histograms merged.
    let mut merged = ssdlab_stats::Recorder::default();
    let mut runtime = 0;
    let target = ssdlab_engine::SimSpec::preset("vertex450-128g")
        .build(|_| {})
        .unwrap();
    for (r, entry) in ranks(&v).iter().enumerate() {
        let spec = ssdlab_workload::WorkloadSpec {
            rw: ssdlab_workload::RwMode::Randrw,
            read_pct: 50,
            random_pct: 100,
            span: Some(1 << 30),
            qd: 4,
            stop: ssdlab_workload::StopCondition {
                time_ns: Some(300_000_000),
                ..Default::default()
            },
            seed: 7 + r as u64,
            ..Default::default()
        };
        let (res, rec) =
            ssdlab_engine::run_sim_recorded(&spec, &target, None, &Default::default()).unwrap();
        assert_eq!(entry["read"]["ios"], res.read.ios, "rank {r}");
        assert_eq!(entry["write"]["ios"], res.write.ios, "rank {r}");
        merged.merge(&rec);
        runtime = runtime.max(res.runtime_ns);
    }
    let job = &v["jobs"][0];
    for (kind, k) in [
        ("read", ssdlab_workload::OpKind::Read),
        ("write", ssdlab_workload::OpKind::Write),
    ] {
        let want = merged.summary(k, runtime);
        assert_eq!(job[kind]["total_ios"], want.ios);
        for (p, value) in &want.lat.percentiles {
            assert_eq!(
                pct(&job[kind]["lat_ns"], &format!("{p:.6}")),
                *value,
                "{kind} p{p}"
            );
        }
        assert_eq!(job[kind]["clat_ns"]["max"], want.clat.max);
    }
}

#[test]
fn rank_paths_are_created_per_rank() {
    let dir = tempfile::tempdir().unwrap();
    let pattern = dir.path().join("f-{rank}.img");
    let Some(v) = job_json(
        RANKS,
        &[
            "--target",
            pattern.to_str().unwrap(),
            "--span",
            "8m",
            "--rw",
            "randwrite",
            "--ios",
            "300",
        ],
    ) else {
        return;
    };
    check_sums(&v, "write");
    for r in 0..RANKS {
        let f = dir.path().join(format!("f-{r}.img"));
        assert_eq!(
            std::fs::metadata(&f).unwrap().len(),
            8 << 20,
            "{}",
            f.display()
        );
        assert_eq!(
            ranks(&v)[r]["target"]["name"],
            f.to_str().unwrap(),
            "rank {r} names its own file"
        );
    }
}

#[test]
fn shared_target_segments_do_not_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("shared.img");
    let map = dir.path().join("written.map");
    let (img_s, map_s) = (img.to_str().unwrap(), map.to_str().unwrap());
    // Each rank writes its whole 4 MiB segment once, sequentially, with verification headers.
    let Some(v) = job_json(
        RANKS,
        &[
            "--target",
            img_s,
            "--segment-per-rank",
            "--span",
            "4m",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "4m",
            "--verify",
            "--verify-map",
            map_s,
        ],
    ) else {
        return;
    };
    check_sums(&v, "write");
    for (r, e) in ranks(&v).iter().enumerate() {
        assert_eq!(e["target"]["offset"], r as u64 * (4 << 20));
        assert_eq!(e["target"]["span"], 4 << 20);
    }
    assert_eq!(std::fs::metadata(&img).unwrap().len(), 16 << 20);
    let read_all = |map: &Path| {
        Command::new(bin())
            .args([
                "run", "--target", img_s, "--span", "16m", "--rw", "read", "--bs", "64k",
            ])
            .args(["--bytes", "16m", "--verify", "--json", "--verify-map"])
            .arg(map)
            .output()
            .unwrap()
    };
    // Every sector holds the header of the rank whose segment it is.
    let out = read_all(&map);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verify = &r["jobs"][0]["ssdlab"]["verify"];
    assert_eq!(verify["sectors_bad"], 0);
    assert_eq!(verify["sectors_unwritten"], 0);
    assert_eq!(verify["sectors_ok"], (16u64 << 20) / 512);
    // A mistake — a write into rank 1's segment that the map does not know — is caught.
    let other = dir.path().join("other.map");
    let out = Command::new(bin())
        .args([
            "run", "--target", img_s, "--offset", "4m", "--span", "64k", "--rw", "write",
        ])
        .args([
            "--bs",
            "64k",
            "--ios",
            "1",
            "--verify",
            "--seed",
            "999",
            "--verify-map",
        ])
        .arg(&other)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = read_all(&map);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        r["jobs"][0]["ssdlab"]["verify"]["sectors_bad"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn rank_counts_that_do_not_fit_are_refused_on_rank_0() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("odd.img");
    std::fs::write(&img, vec![1u8; (16 << 20) + (64 << 10)]).unwrap();
    let Some(c) = mpirun(
        RANKS,
        &[
            "run",
            "--target",
            img.to_str().unwrap(),
            "--segment-per-rank",
            "--bs",
            "64k",
        ],
    ) else {
        return;
    };
    let out = out_of(c);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains("rank 0") && err.contains("segment"), "{err}");
    assert_eq!(
        err.matches("error:").count(),
        1,
        "only rank 0 speaks: {err}"
    );
}

#[test]
fn a_bad_target_on_one_rank_stops_every_rank_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for r in [0, 1, 3] {
        std::fs::create_dir(dir.path().join(format!("d{r}"))).unwrap();
    }
    let pattern = dir.path().join("d{rank}").join("f.img");
    let Some(c) = mpirun(
        RANKS,
        &[
            "run",
            "--target",
            pattern.to_str().unwrap(),
            "--span",
            "4m",
            "--rw",
            "write",
        ],
    ) else {
        return;
    };
    let out = out_of(c);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("rank 2 ("), "{err}");
    assert!(out.stdout.is_empty());
    for r in [0, 1, 3] {
        let f = dir.path().join(format!("d{r}")).join("f.img");
        assert!(
            !f.exists(),
            "{} was created though rank 2 failed",
            f.display()
        );
    }
}

#[test]
fn an_io_error_on_one_rank_is_reported_with_its_rank() {
    // Only rank 3 injects the fault (local ranks inherit mpirun's environment).
    let Some(mut cmd) = mpirun(
        RANKS,
        &["run", "--null", "--time", "2s", "--inject-fault", "eio@100"],
    ) else {
        return;
    };
    cmd.env("SSDLAB_FAULT_RANK", "3");
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(o.contains("rank 3 (") && o.contains("EIO"), "{o}");
    assert!(o.contains("stopped early: rank 3"), "{o}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn stonewall_stops_every_rank_when_the_first_is_done() {
    let Some(v) = job_json(
        RANKS,
        &["--null", "--qd", "1", "--ios", "400000", "--stonewall"],
    ) else {
        return;
    };
    let cluster = &v["jobs"][0]["ssdlab"]["cluster"];
    assert!(
        cluster["stopped_by"]
            .as_str()
            .unwrap()
            .contains("first (stonewall)"),
        "{cluster}"
    );
    let mut full = 0;
    for r in ranks(&v) {
        let ios = r["ios"].as_u64().unwrap();
        assert!(ios <= 400_000);
        if ios == 400_000 {
            full += 1;
        } else {
            assert_eq!(r["stonewalled"], true, "{r}");
        }
    }
    assert!(full >= 1, "the first rank finished its share");
}

#[test]
fn sigint_on_rank_0_stops_every_rank_cleanly() {
    let Some(mut c) = mpirun(RANKS, &["run", "--null", "--qd", "2", "--time", "60s"]) else {
        return;
    };
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let rank0 = loop {
        if let Some(pid) = rank_pid(child.id(), 0) {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "rank 0 did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_secs(3));
    unsafe_free_kill(rank0, "INT");
    let out = child.wait_with_output().unwrap();
    let o = text(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(o.contains("INTERRUPTED"), "{o}");
    assert!(
        o.contains("rank 0 (") && o.contains("was interrupted"),
        "{o}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "stopped long after the signal"
    );
}

/// Whether `pid` is `ancestor` or below it (tests run in parallel: another test's mpirun has a
/// rank 0 too).
fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..8 {
        if pid == ancestor {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // pid (comm) state ppid …: comm may hold spaces, so read after the last ')'.
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            return false;
        };
        if ppid <= 1 {
            return false;
        }
        pid = ppid;
    }
    false
}

/// The pid of the ssdlab process that is rank `rank` under mpirun `parent`.
fn rank_pid(parent: u32, rank: usize) -> Option<u32> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == parent {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let exe = std::fs::read_link(e.path().join("exe")).unwrap_or_default();
        let env = text(&env);
        if exe == bin().canonicalize().unwrap_or_default()
            && descends_from(pid, parent)
            && env
                .split('\0')
                .any(|v| v == format!("OMPI_COMM_WORLD_RANK={rank}"))
        {
            return Some(pid);
        }
    }
    None
}

fn unsafe_free_kill(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

const SWEEP: &str = r#"
name = "mpi-test"
time = "100ms"
qd = [1, 4]
span = "1GiB"
workloads = ["4k-randread", "4k-randwrite"]

[[target]]
sim = "vertex450-128g"

[[target]]
sim = "vertex450-128g"
drives = 2
stripes = ["16k", "64k"]
"#;

/// (point key, result JSON) of every stored result, in key order.
fn results(db: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT point_key, result_json FROM results ORDER BY point_key")
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<(String, String)>, _>>()
        .unwrap();
    rows
}

#[test]
fn four_rank_sweep_stores_what_one_process_stores() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, SWEEP).unwrap();
    let (one, four) = (
        dir.path().join("one.sqlite"),
        dir.path().join("four.sqlite"),
    );
    let Some(c) = mpirun(
        RANKS,
        &[
            "sweep",
            file.to_str().unwrap(),
            "--db",
            four.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let out = out_of(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("12 points: 12 run now"),
        "{}",
        text(&out.stdout)
    );
    let out = Command::new(bin())
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--db",
            one.to_str().unwrap(),
            "--jobs",
            "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (a, b) = (results(&one), results(&four));
    assert_eq!(a.len(), 12);
    assert!(a == b, "the 4-rank store differs from the 1-process store");
    // Resuming on 4 ranks finds everything done.
    let out = out_of(
        mpirun(
            RANKS,
            &[
                "sweep",
                file.to_str().unwrap(),
                "--db",
                four.to_str().unwrap(),
            ],
        )
        .unwrap(),
    );
    assert!(
        text(&out.stdout).contains("0 run now, 12 already in the store"),
        "{}",
        text(&out.stdout)
    );
    // More ranks than points: a clear error on rank 0, nothing created.
    let small = dir.path().join("small.toml");
    std::fs::write(
        &small,
        "name = \"tiny\"\ntime = \"100ms\"\nqd = [1]\nworkloads = [\"4k-randread\", \"4k-randwrite\"]\n[[target]]\nsim = \"vertex450-128g\"\n",
    )
    .unwrap();
    let db = dir.path().join("tiny.sqlite");
    let out = out_of(
        mpirun(
            RANKS,
            &[
                "sweep",
                small.to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
            ],
        )
        .unwrap(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("more ranks than points"),
        "{}",
        text(&out.stderr)
    );
    assert!(!db.exists());
}

#[test]
fn a_killed_rank_ends_the_sweep_and_finished_points_stay() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    // Enough points of a few hundred ms each that rank 2 is killed in the middle.
    std::fs::write(
        &file,
        SWEEP
            .replace("time = \"100ms\"", "time = \"2s\"")
            .replace("qd = [1, 4]", "qd = [1, 2, 4, 8]"),
    )
    .unwrap();
    let db = dir.path().join("k.sqlite");
    let Some(mut c) = mpirun(
        RANKS,
        &[
            "sweep",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let done = |db: &Path| -> usize {
        if !db.exists() {
            return 0;
        }
        rusqlite::Connection::open(db)
            .and_then(|c| c.query_row("SELECT count(*) FROM results", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    while done(&db) < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "no point finished"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let victim = rank_pid(child.id(), 2).expect("rank 2 runs");
    unsafe_free_kill(victim, "KILL");
    let out = child.wait_with_output().unwrap();
    let e = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("rank 2"), "the message names the rank: {e}");
    assert!(started.elapsed() < Duration::from_secs(300));
    let kept = done(&db);
    assert!(kept >= 2, "finished points stay in the store ({kept})");
    // The store is sound and the sweep resumes where it stopped.
    let out = Command::new(bin())
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("done"), "{}", text(&out.stdout));
}

/// This machine's host name, as the ranks of a job on it name their host.
fn this_host() -> String {
    ssdlab_cluster::rank::this_host().expect("the host name reads")
}

/// Two real files of `host`, two points each of 1 s.
fn hosted_sweep(dir: &Path, host: &str) -> PathBuf {
    for f in ["a.img", "b.img"] {
        std::fs::write(dir.join(f), vec![0x5au8; 8 << 20]).unwrap();
    }
    let file = dir.join("hosted.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"hosted\"\ntime = \"1s\"\nqd = [1, 2]\nworkloads = [\"4k-randread\"]\n\
             [[target]]\nlabel = \"A\"\npath = \"a.img\"\nhost = \"{host}\"\n\
             [[target]]\nlabel = \"B\"\npath = \"b.img\"\nhost = \"{host}\"\n"
        ),
    )
    .unwrap();
    file
}

/// (point key, target, seq, target JSON, workload JSON, status) of every point of a store.
fn point_rows(db: &Path) -> Vec<(String, String, i64, String, String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT point_key, target_label, seq, target_json, workload_json, status FROM points \
             ORDER BY point_key",
        )
        .unwrap();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows
}

/// Each stored point's target and measured time window in ms (start, start + ramp + runtime).
fn windows(db: &Path) -> Vec<(String, u64, u64)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT p.target_label, r.result_json FROM results r JOIN points p USING (point_key)",
        )
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows.into_iter()
        .map(|(label, json)| {
            let v: Value = serde_json::from_str(&json).unwrap();
            let start = v["timestamp_ms"].as_u64().unwrap();
            let ns = v["ramp_ns"].as_u64().unwrap() + v["runtime_ns"].as_u64().unwrap();
            (label, start, start + ns / 1_000_000)
        })
        .collect()
}

#[test]
fn targets_of_a_host_run_side_by_side_on_its_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let file = hosted_sweep(dir.path(), &this_host());
    let (one, three) = (
        dir.path().join("one.sqlite"),
        dir.path().join("three.sqlite"),
    );
    let Some(c) = mpirun(
        3,
        &[
            "sweep",
            file.to_str().unwrap(),
            "--db",
            three.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let out = out_of(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("4 points: 4 run now"),
        "{}",
        text(&out.stdout)
    );
    // The same file in one process (the host is this machine's, so it is accepted there too).
    let out = Command::new(bin())
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--db",
            one.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (a, b) = (point_rows(&one), point_rows(&three));
    assert_eq!(a.len(), 4);
    assert!(
        a.iter().all(|r| r.5 == "done") && a == b,
        "the 3-rank store's points differ from the 1-process store's:\n{a:?}\n{b:?}"
    );
    let keys = |db: &Path| results(db).into_iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(keys(&one), keys(&three));
    // The points of one target never overlap; a point of A overlaps a point of B.
    let w = windows(&three);
    assert_eq!(w.len(), 4);
    let overlap = |x: &(String, u64, u64), y: &(String, u64, u64)| x.1 < y.2 && y.1 < x.2;
    for (i, x) in w.iter().enumerate() {
        for y in &w[i + 1..] {
            if x.0 == y.0 {
                assert!(!overlap(x, y), "two points of {} overlap: {w:?}", x.0);
            }
        }
    }
    assert!(
        w.iter()
            .any(|x| x.0 == "A" && w.iter().any(|y| y.0 == "B" && overlap(x, y))),
        "A and B never ran at the same time: {w:?}"
    );
    // In one process they ran one at a time.
    let w1 = windows(&one);
    assert!(
        !w1.iter()
            .any(|x| w1.iter().any(|y| x != y && overlap(x, y))),
        "{w1:?}"
    );
    // Resuming on 3 ranks finds everything done.
    let out = out_of(
        mpirun(
            3,
            &[
                "sweep",
                file.to_str().unwrap(),
                "--db",
                three.to_str().unwrap(),
            ],
        )
        .unwrap(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("0 run now, 4 already in the store"),
        "{}",
        text(&out.stdout)
    );
}

/// Exit 2, nothing on stdout, and one error line (rank 0's) that contains every needle.
fn assert_refused_on_rank_0(out: &Output, needles: &[&str]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(lines.len(), 1, "one error line: {err}");
    for n in needles {
        assert!(lines[0].contains(n), "wanted {n:?} in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_host_no_rank_runs_on_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = hosted_sweep(dir.path(), "no-such-host");
    let db = dir.path().join("h.sqlite");
    let Some(c) = mpirun(
        3,
        &[
            "sweep",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let started = Instant::now();
    let out = out_of(c);
    let ranks_host = format!("{} (ranks 0-2)", this_host());
    assert_refused_on_rank_0(&out, &["target 'A'", "no-such-host", &ranks_host]);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(!db.exists());
    // In one process too: the target is not on this machine.
    let out = Command::new(bin())
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no-such-host") && err.contains(&this_host()),
        "{err}"
    );
    assert!(!db.exists());
}

#[test]
fn a_host_on_a_simulated_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(
        &file,
        SWEEP.replace(
            "drives = 2\n",
            &format!("drives = 2\nhost = \"{}\"\n", this_host()),
        ),
    )
    .unwrap();
    let db = dir.path().join("s.sqlite");
    let Some(c) = mpirun(
        3,
        &[
            "sweep",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let out = out_of(c);
    assert_refused_on_rank_0(&out, &["target #2.host", "only applies to real targets"]);
    assert!(!db.exists());
}

#[test]
fn carried_history_on_three_ranks_stores_what_one_process_stores() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("carry.toml");
    std::fs::write(
        &file,
        r#"
name = "carry"
time = "300ms"
qd = [1, 4, 16]
history = "carry"
span = "2GiB"
workloads = ["4k-randwrite"]

[[target]]
sim = "vertex450-128g"
state = "full"

[[target]]
sim = "vertex450-128g"
state = "full"
drives = 2
stripes = ["8k"]
"#,
    )
    .unwrap();
    let (one, three) = (
        dir.path().join("one.sqlite"),
        dir.path().join("three.sqlite"),
    );
    let Some(c) = mpirun(
        3,
        &[
            "sweep",
            file.to_str().unwrap(),
            "--db",
            three.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let out = out_of(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = Command::new(bin())
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--db",
            one.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (a, b) = (results(&one), results(&three));
    assert_eq!(a.len(), 6);
    assert!(a == b, "the 3-rank store differs from the 1-process store");
}
