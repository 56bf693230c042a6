//! Simulated drives and arrays through the real binary.

use assert_cmd::Command;
use serde_json::Value;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

/// Runs `ssdlab sweep FILE --db DB [extra…]`.
fn sweep_into(
    file: &std::path::Path,
    db: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    ssdlab()
        .arg("sweep")
        .arg(file)
        .arg("--db")
        .arg(db)
        .args(extra)
        .output()
        .unwrap()
}

fn sim_json(args: &[&str]) -> (Value, Vec<u8>) {
    let out = ssdlab()
        .arg("run")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), out.stdout)
}

fn iops(v: &Value, kind: &str) -> f64 {
    v["jobs"][0][kind]["iops"].as_f64().unwrap()
}

#[test]
fn same_spec_same_seed_byte_identical() {
    let args = [
        "--sim",
        "vertex450-128g",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--span",
        "1g",
        "--time",
        "2s",
        "--seed",
        "7",
    ];
    let (_, a) = sim_json(&args);
    let (v, b) = sim_json(&args);
    assert!(
        a == b,
        "simulated results are byte-identical for the same inputs"
    );
    assert_eq!(v["jobs"][0]["ssdlab"]["target"]["kind"], "sim");
    assert!(
        v["jobs"][0]["ssdlab"]["device"][0]["host_writes"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn littles_law_in_virtual_time_and_bytes_conserved() {
    let (v, _) = sim_json(&[
        "--sim",
        "c300-256g",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--span",
        "4g",
        "--time",
        "2s",
    ]);
    let j = &v["jobs"][0];
    let n = iops(&v, "read") * j["read"]["lat_ns"]["mean"].as_f64().unwrap() / 1e9;
    assert!((n - 8.0).abs() / 8.0 < 0.05, "IOPS × latency = {n}, want 8");
    let dev = &j["ssdlab"]["device"][0];
    assert_eq!(
        dev["host_read_bytes"].as_u64().unwrap(),
        j["read"]["io_bytes"].as_u64().unwrap(),
        "bytes in = bytes completed"
    );
}

#[test]
fn misaligned_writes_cost_rmw_drives_flash_work() {
    let run = |preset: &str, align: &str, set: &[&str]| {
        let mut args = vec![
            "--sim",
            preset,
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--align",
            align,
            "--qd",
            "3",
            "--span",
            "8g",
            "--ramp",
            "5s",
            "--time",
            "15s",
        ];
        for s in set {
            args.extend(["--set", s]);
        }
        let (v, _) = sim_json(&args);
        let dev = &v["jobs"][0]["ssdlab"]["device"][0];
        (
            iops(&v, "write"),
            dev["write_amplification"].as_f64().unwrap(),
            dev["rmw_reads"].as_u64().unwrap(),
        )
    };
    // A read-modify-write drive with a write buffer takes a 512-B-aligned write into the buffer
    // and merges it in the background: each write touches two 4 KiB units, so the old data is
    // read and both are programmed (more flash work), while the host sees the buffer.
    let (a, a_wa, a_reads) = run("c300-256g", "4k", &[]);
    let (u, u_wa, u_reads) = run("c300-256g", "512", &[]);
    assert_eq!(a_reads, 0);
    assert!(
        u_reads > 0 && u_wa > 1.5 * a_wa,
        "WA {a_wa:.2} vs {u_wa:.2}"
    );
    assert!(
        u > 0.6 * a,
        "buffered: aligned {a:.0} vs 512-aligned {u:.0}"
    );
    // A remapping drive programs only the sectors written.
    let (remap_a, _, _) = run("x25m-g2-160g", "4k", &[]);
    let (remap_u, _, r) = run("x25m-g2-160g", "512", &[]);
    assert_eq!(r, 0);
    assert!(
        remap_u > 0.8 * remap_a,
        "remap drive: aligned {remap_a:.0} vs 512-aligned {remap_u:.0}"
    );
}

#[test]
fn simulated_array_and_bad_input() {
    let (v, _) = sim_json(&[
        "--sim",
        "vertex450-128g",
        "--drives",
        "2",
        "--stripe",
        "16k",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--span",
        "8g",
        "--time",
        "1s",
    ]);
    let j = &v["jobs"][0];
    assert_eq!(j["ssdlab"]["target"]["kind"], "sim-raid0");
    // the array with its members' averages (fio's aggr_*), then the two members
    let du = v["disk_util"].as_array().unwrap();
    assert_eq!(du.len(), 3);
    assert!(du[0]["aggr_util"].as_f64().unwrap() > 0.0);
    assert_eq!(j["ssdlab"]["device"].as_array().unwrap().len(), 2);

    let bad = |args: &[&str], needle: &str| {
        let out = ssdlab().arg("run").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in {err}"
        );
    };
    bad(&["--sim", "vertex9000"], "vertex450-128g");
    bad(
        &["--sim", "c300-256g", "--set", "nand.channels=0"],
        "nand.channels",
    );
    bad(
        &["--sim", "c300-256g", "--set", "nand.page_size=1000"],
        "nand.page_size",
    );
    bad(
        &["--sim", "c300-256g", "--set", "nand.no_such_key=1"],
        "no_such_key",
    );
    // the hybrid log-block scheme's settings: one line naming the field
    for (args, field) in [
        (
            [
                "--sim",
                "vertex-barefoot-120g",
                "--set",
                "ftl.scheme=blocks",
            ],
            "ftl.scheme",
        ),
        (
            ["--sim", "vertex-barefoot-120g", "--set", "ftl.log_blocks=0"],
            "ftl.log_blocks",
        ),
        (
            [
                "--sim",
                "vertex-barefoot-120g",
                "--set",
                "ftl.log_blocks=9999",
            ],
            "ftl.log_blocks",
        ),
        (
            ["--sim", "c300-256g", "--set", "ftl.log_blocks=4"],
            "ftl.log_blocks",
        ),
        (
            ["--sim", "c300-256g", "--set", "ftl.scheme=hybrid"],
            "ftl.log_blocks",
        ),
    ] {
        bad(&args, field);
        let out = ssdlab().arg("run").args(args).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
    bad(&["--sim", "c300-256g", "--span", "100t"], "beyond the end");
    bad(&["--sim", "c300-256g", "--state", "dirty"], "state");
    bad(&["--sim", "c300-256g", "--verify"], "--verify");
}

/// A drive of the hybrid log-block scheme reports its merges (a page-mapped one has no such
/// counters in its JSON).
#[test]
fn hybrid_drives_report_merges() {
    let (v, _) = sim_json(&[
        "--sim",
        "vertex-barefoot-120g",
        "--set",
        "nand.blocks_per_plane=256",
        "--set",
        "ftl.log_blocks=1",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "3",
        "--span",
        "256m",
        "--time",
        "3s",
    ]);
    let m = &v["jobs"][0]["ssdlab"]["device"][0]["hybrid"];
    assert!(m["full_merges"].as_u64().unwrap() > 0, "{m}");
    assert!(m["merge_pages"].as_u64().unwrap() > 0, "{m}");
    assert_eq!(m["switch_merges"].as_u64(), Some(0), "{m}");
    let (v, _) = sim_json(&[
        "--sim",
        "vertex450-128g",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--span",
        "64m",
        "--time",
        "100ms",
    ]);
    assert!(v["jobs"][0]["ssdlab"]["device"][0].get("hybrid").is_none());
}

#[test]
fn drives_lists_presets_with_sources() {
    let out = ssdlab().args(["drives"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for p in [
        "vertex450-128g",
        "vertex-le-100g",
        "c300-256g",
        "x25m-g2-160g",
        "x25e-64g",
        "vertex-barefoot-120g",
        "ssdnow-vplus-128g",
    ] {
        assert!(text.contains(p), "missing preset {p}");
    }
    assert!(text.contains("source"));
    let out = ssdlab().args(["drives", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|p| !p["sources"].as_array().unwrap().is_empty()));
}

#[test]
fn sweep_resume_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("s.toml");
    std::fs::write(
        &sweep,
        r#"
name = "mini"
time = "300ms"
qd = [1, 8]
workloads = ["4k-randread", "128k-seqwrite"]
span = "4g"

[[target]]
label = "single"
sim = "vertex450-128g"
baseline = true

[[target]]
label = "raid0"
sim = "vertex450-128g"
drives = 2
stripes = ["16k", "128k"]
"#,
    )
    .unwrap();
    let db = dir.path().join("mini.sqlite");
    let out = sweep_into(&sweep, &db, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A second run resumes: every point is already in the store.
    let out = sweep_into(&sweep, &db, &[]);
    assert!(out.status.success());
    let msg =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains("0 run now") && msg.contains("12 already in the store"),
        "{msg}"
    );
    let out = ssdlab().arg("report").arg(&db).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("4k-randread") && text.contains("%"), "{text}");
    let out = ssdlab()
        .arg("report")
        .arg(&db)
        .args(["--csv", "-"])
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 1 + 12, "{csv}");
    // A serial run gives exactly the same results as the parallel one.
    let serial = dir.path().join("serial.sqlite");
    let out = sweep_into(&sweep, &serial, &["--jobs", "1"]);
    assert!(out.status.success());
    let out = ssdlab()
        .arg("report")
        .arg(&serial)
        .args(["--csv", "-"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        csv,
        "parallel == serial"
    );
    // Not a store: refused, file untouched.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, b"hello").unwrap();
    let out = ssdlab().arg("report").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an ssdlab"));
    assert_eq!(std::fs::read(&junk).unwrap(), b"hello");
}

/// `ssdlab report DB --csv -`: (workload, qd) → IOPS per row, in sweep order.
fn csv_iops(db: &std::path::Path) -> Vec<(String, u32, f64)> {
    let out = ssdlab()
        .arg("report")
        .arg(db)
        .args(["--csv", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[4].to_string(),
                f[5].parse().unwrap(),
                f[7].parse().unwrap(),
            )
        })
        .collect()
}

/// A sweep file over one simulated drive in `full` state.
fn history_sweep(name: &str, history: &str, workload: &str, qds: &str) -> String {
    format!(
        r#"
name = "{name}"
time = "1s"
qd = {qds}
history = "{history}"
span = "8GiB"
workloads = ["{workload}"]

[[target]]
sim = "vertex450-128g"
state = "full"
"#
    )
}

#[test]
fn carried_history_changes_write_sweeps_only_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: String, db: &str| {
        let f = dir.path().join(format!("{name}-{db}.toml"));
        std::fs::write(&f, text).unwrap();
        let db = dir.path().join(db);
        let out = sweep_into(&f, &db, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (db, String::from_utf8_lossy(&out.stdout).to_string())
    };
    // Random writes: the first point is the same drive either way; after it, a carried drive
    // starts with the write buffer the earlier points filled (QD 2 already writes faster than
    // the flash programs) and has used up free blocks on them.
    let w = "4k-randwrite";
    let (fresh, _) = run(
        "w",
        history_sweep("w", "fresh", w, "[2, 4, 16]"),
        "wf.sqlite",
    );
    let (carry, _) = run(
        "w",
        history_sweep("w", "carry", w, "[2, 4, 16]"),
        "wc.sqlite",
    );
    let (fresh, carry) = (csv_iops(&fresh), csv_iops(&carry));
    assert_eq!(fresh.len(), 3);
    assert_eq!(
        fresh[0], carry[0],
        "the first point of a chain starts from the same drive"
    );
    for i in 1..3 {
        assert!(
            carry[i].2 < fresh[i].2,
            "QD {}: carried {} vs fresh {}",
            fresh[i].1,
            carry[i].2,
            fresh[i].2
        );
    }
    // Resuming a chain replays its finished points to rebuild the drive: a sweep extended by a
    // QD gives the new point exactly what the whole sweep run at once gives.
    let (db, _) = run(
        "w",
        history_sweep("w", "carry", w, "[2, 4]"),
        "resume.sqlite",
    );
    let (db2, msg) = run(
        "w",
        history_sweep("w", "carry", w, "[2, 4, 16]"),
        "resume.sqlite",
    );
    assert_eq!(db, db2);
    assert!(
        msg.contains("1 run now") && msg.contains("2 already"),
        "{msg}"
    );
    assert_eq!(csv_iops(&db), carry);
    // Reads change nothing on the drive: carried or not, the same results.
    let r = "4k-randread";
    let (fresh, _) = run("r", history_sweep("r", "fresh", r, "[1, 8]"), "rf.sqlite");
    let (carry, _) = run("r", history_sweep("r", "carry", r, "[1, 8]"), "rc.sqlite");
    assert_eq!(csv_iops(&fresh), csv_iops(&carry));
    // A value the file cannot mean is refused before anything is created.
    let f = dir.path().join("bad.toml");
    std::fs::write(&f, history_sweep("bad", "carried", w, "[1]")).unwrap();
    let db = dir.path().join("bad.sqlite");
    let out = sweep_into(&f, &db, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("history") && err.contains("carry"), "{err}");
    assert!(!db.exists());
}

#[test]
fn reads_of_never_written_data_are_noted() {
    let base = [
        "run",
        "--sim",
        "vertex450-128g",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--span",
        "1g",
        "--time",
        "300ms",
    ];
    // A fresh drive holds no data: the reads never reach the flash; said on stderr and in the
    // result, not mixed into stdout's JSON as text.
    let out = ssdlab().args(base).arg("--json").output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("100 % of the data read had never been written"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = v["jobs"][0]["ssdlab"]["notes"].as_array().unwrap();
    assert!(notes[0].as_str().unwrap().contains("--state full"));
    assert_eq!(v["jobs"][0]["ssdlab"]["device"][0]["nand_reads"], 0);
    // The table says it too.
    let out = ssdlab().args(base).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("note:     100 %"));
    // On a written drive the reads go to the flash, and nothing is said.
    let out = ssdlab()
        .args(base)
        .args(["--state", "full", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("never been written"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["jobs"][0]["ssdlab"].get("notes").is_none());
    assert!(
        v["jobs"][0]["ssdlab"]["device"][0]["nand_reads"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// A drive without DRAM for its map (the 980, its geometry cut to 1/8 and its cached map to
/// 1 MiB, which maps 1 GiB): random reads over the whole written drive mostly miss the cached map
/// and are told so; over a span the cache maps nothing is said.
#[test]
fn map_cache_misses_are_noted() {
    let base = [
        "--sim",
        "samsung-980-1t",
        "--set",
        "nand.blocks_per_plane=171",
        "--set",
        "controller.map_cache_bytes=1048576",
        "--state",
        "full",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--time",
        "200ms",
    ];
    let whole = ssdlab()
        .arg("run")
        .args(base)
        .arg("--json")
        .output()
        .unwrap();
    assert!(whole.status.success());
    let err = String::from_utf8_lossy(&whole.stderr);
    assert!(
        err.contains("missed the controller's cached map (1 MiB"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&whole.stdout).unwrap();
    let notes = v["jobs"][0]["ssdlab"]["notes"].as_array().unwrap();
    assert!(notes[0].as_str().unwrap().contains("translation page"));
    let d = &v["jobs"][0]["ssdlab"]["device"][0];
    assert!(d["map_misses"].as_u64().unwrap() * 2 > d["map_lookups"].as_u64().unwrap());
    let (small, _) = sim_json(&[&base[..], &["--span", "512m"]].concat());
    assert!(small["jobs"][0]["ssdlab"].get("notes").is_none());
    assert!(iops(&v, "read") < 0.8 * iops(&small, "read"));
}

#[test]
fn the_raid_driver_cache_is_for_arrays_and_lifts_short_write_runs() {
    let base = [
        "run",
        "--sim",
        "vertex450-128g",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "2",
    ];
    let out = ssdlab()
        .args(base)
        .args(["--adapter-cache", "64m", "--time", "100ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("applies to simulated arrays"));
    let array = [
        "--drives", "2", "--stripe", "8k", "--span", "1g", "--time", "300ms",
    ];
    let (plain, _) = sim_json(&[&base[1..], &array[..]].concat());
    let (cached, _) = sim_json(&[&base[1..], &array[..], &["--adapter-cache", "64m"]].concat());
    assert!(iops(&cached, "write") > 1.5 * iops(&plain, "write"));
    // the cache's counters come with the result: what it took in is what the host wrote
    let c = &cached["jobs"][0]["ssdlab"]["adapter_cache"];
    let written = cached["jobs"][0]["write"]["io_bytes"].as_f64().unwrap();
    assert!(
        c["absorbed_bytes"].as_f64().unwrap() >= 0.99 * written,
        "{c}"
    );
    assert!(
        c["peak_dirty_bytes"].as_f64().unwrap() <= (64u64 << 20) as f64,
        "{c}"
    );
    assert!(plain["jobs"][0]["ssdlab"].get("adapter_cache").is_none());
    let out = ssdlab()
        .args(base)
        .args(array)
        .args(["--adapter-cache", "64m"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("RAID driver cache: absorbed ")),
        "{text}"
    );
}

/// `run` names what binds a simulated run: the busiest resource when one is saturated, else
/// the latency at the queue depth (nothing saturated), in the table and the HTML report.
#[test]
fn a_simulated_run_names_what_limits_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |qd: &str, extra: &[&str]| {
        let out = ssdlab()
            .current_dir(dir.path())
            .args([
                "run",
                "--sim",
                "vertex450-128g",
                "--rw",
                "randwrite",
                "--bs",
                "4k",
            ])
            .args(["--span", "1g", "--time", "100ms", "--qd", qd])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let limit = |text: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("limited by: "))
            .unwrap_or_else(|| panic!("no limit named: {text}"))
            .to_string()
    };
    // QD 32 of random writes keeps every die programming
    let deep = run("32", &[]);
    let (v, _) = sim_json(&[
        "--sim",
        "vertex450-128g",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--span",
        "1g",
        "--time",
        "100ms",
        "--qd",
        "32",
    ]);
    let u = &v["jobs"][0]["ssdlab"]["device"][0]["utilisation"];
    let dies = u["dies"].as_array().unwrap().len();
    assert!(u["busiest"].as_str().unwrap().starts_with("die "), "{u}");
    assert!(u["die_mean"].as_f64().unwrap() > 0.97, "{u}");
    assert_eq!(limit(&deep), format!("all {dies} dies, 100 % busy"));
    // QD 1: nothing is saturated; the busiest resource is named, with how busy it is
    let one = limit(&run("1", &[]));
    assert!(
        one.starts_with("latency (nothing saturated; busiest: ") && one.ends_with("% busy)"),
        "{one}"
    );
    // the array names what its drives share
    let array = limit(&run("32", &["--drives", "2", "--stripe", "8k"]));
    assert!(array.contains(" of each drive, "), "{array}");
    // the HTML report says it and shows the numbers behind it
    run("32", &["--html", "r.html"]);
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("What limits it (simulated)"), "{html}");
    assert!(html.contains(&format!("Limited by: all {dies} dies, 100 % busy.")));
    assert!(html.contains("dies (mean"), "the utilisation table");
}

#[test]
fn sata_arrays_sit_behind_the_chipset_dmi_link_unless_told_otherwise() {
    // five SATA drives reading sequentially carry more than DMI 2.0's 2 GB/s
    let run = |extra: &[&str]| {
        let args = [
            &[
                "--sim",
                "vertex450-128g",
                "--drives",
                "5",
                "--stripe",
                "128k",
                "--rw",
                "read",
                "--bs",
                "640k",
                "--qd",
                "16",
                "--span",
                "5g",
                "--time",
                "200ms",
            ][..],
            extra,
        ]
        .concat();
        let (v, _) = sim_json(&args);
        v["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap()
    };
    let default = run(&[]);
    let chipset = run(&["--adapter", "chipset"]);
    let none = run(&["--adapter", "none"]);
    assert_eq!(
        default, chipset,
        "the default for SATA arrays is chipset RAID"
    );
    assert!(chipset <= 2.0e9 * 1.01, "{chipset}");
    assert!(none > 1.2 * chipset, "{none} vs {chipset}");
    // a changed setting applies to the model: a narrower uplink is narrower still
    let narrow = run(&["--uplink", "1g"]);
    assert!(narrow <= (1u64 << 30) as f64 * 1.01, "{narrow}");
    // NVMe arrays and single drives go straight through: the link of one 980 PRO alone is
    // beyond DMI
    let nvme = |adapter: &[&str]| {
        let args = [
            &[
                "--sim",
                "samsung-980pro-1t",
                "--drives",
                "2",
                "--stripe",
                "128k",
                "--rw",
                "read",
                "--bs",
                "1m",
                "--qd",
                "32",
                "--span",
                "4g",
                "--time",
                "100ms",
            ][..],
            adapter,
        ]
        .concat();
        let (v, _) = sim_json(&args);
        v["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap()
    };
    let n_default = nvme(&[]);
    assert_eq!(n_default, nvme(&["--adapter", "none"]));
    assert!(nvme(&["--adapter", "chipset"]) < n_default);
    let out = ssdlab()
        .args([
            "run",
            "--sim",
            "x25e-64g",
            "--adapter",
            "hba",
            "--time",
            "10ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use chipset or none"));
}

/// A small vertex450 (3 GB), so a steady-state drive's file is a few MB.
const SMALL: [&str; 8] = [
    "--sim",
    "vertex450-128g",
    "--set",
    "nand.blocks_per_plane=64",
    "--set",
    "ftl.user_capacity_bytes=3000000000",
    "--set",
    "ftl.pslc_bytes=0",
];

/// Group A (random writes until GC moves data) and group B (mixed), as `run` arguments.
fn group_args(b: bool) -> Vec<&'static str> {
    let mut v = SMALL.to_vec();
    if b {
        v.extend(["--rw", "randrw", "--read-pct", "30", "--ios", "30000"]);
    } else {
        v.extend(["--state", "steady", "--rw", "randwrite", "--ios", "200000"]);
    }
    v.extend(["--bs", "4k", "--qd", "32", "--span", "256m", "--seed", "7"]);
    v
}

fn device(job: &Value) -> &Value {
    &job["ssdlab"]["device"][0]
}

#[test]
fn saved_state_continues_like_one_process() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("drive.state");
    let st = state.to_str().unwrap();
    // A, saved
    let mut a = group_args(false);
    a.extend(["--save-state", st]);
    let (va, _) = sim_json(&a);
    assert!(device(&va["jobs"][0])["gc_pages_moved"].as_u64().unwrap() > 0);
    // the same two groups in one process: a fio job file with a stonewall
    let fio = d.path().join("two.fio");
    std::fs::write(
        &fio,
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\niodepth=32\nrandseed=7\nnorandommap=1\nsize=256m\nio_size=100g\n\
         [a]\nrw=randwrite\nnumber_ios=200000\n\
         [b]\nstonewall\nrw=randrw\nrwmixread=30\nnumber_ios=30000\n",
    )
    .unwrap();
    let out = ssdlab()
        .arg("fio")
        .arg(&fio)
        .args(SMALL)
        .args(["--state", "steady", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let vf: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (fa, fb) = (&vf["jobs"][0], &vf["jobs"][1]);
    // B from the saved drive, twice: byte-identical. Its seed is the one job b drew from
    // randseed=7 (fio seeds each thread by its number: job b is thread 2)
    let seed_b = fb["ssdlab"]["spec"]["seed"].as_u64().unwrap().to_string();
    assert_ne!(seed_b, "7");
    let mut b: Vec<&str> = group_args(true);
    *b.last_mut().unwrap() = &seed_b;
    b.extend(["--load-state", st]);
    let (vb, bytes1) = sim_json(&b);
    let (_, bytes2) = sim_json(&b);
    assert!(
        bytes1 == bytes2,
        "two loads of one state give the same result"
    );
    let jb = &vb["jobs"][0];
    assert_eq!(jb["ssdlab"]["target"]["details"][0][1], "loaded");
    for key in ["read", "write", "latency_ns", "iodepth_level"] {
        assert_eq!(fa[key], va["jobs"][0][key], "group A: {key}");
        assert_eq!(fb[key], jb[key], "group B after the load: {key}");
    }
    for key in ["device", "runtime_ns", "series"] {
        assert_eq!(fb["ssdlab"][key], jb["ssdlab"][key], "group B: {key}");
    }
    // B on a drive that was not loaded differs
    let mut fresh = group_args(true);
    fresh.extend(["--state", "steady"]);
    let (vfresh, _) = sim_json(&fresh);
    assert_ne!(vfresh["jobs"][0]["write"], jb["write"]);

    // saving over the state just loaded: the drive carried on, run after run
    let before = std::fs::read(&state).unwrap();
    let mut c = b.clone();
    c.extend(["--save-state", st]);
    sim_json(&c);
    let after = std::fs::read(&state).unwrap();
    assert_ne!(before, after);
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
}

#[test]
fn bad_state_files_and_flags_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("s");
    let st = state.to_str().unwrap();
    let mut a = SMALL.to_vec();
    a.extend(["--rw", "randwrite", "--ios", "2000", "--save-state", st]);
    sim_json(&a);
    let good = std::fs::read(&state).unwrap();
    let save_to = d.path().join("never");
    let badf = d.path().join("bad");
    let bad = |extra: &[String], file: Option<&[u8]>, needle: &str| {
        if let Some(bytes) = file {
            std::fs::write(&badf, bytes).unwrap();
        }
        let out = ssdlab()
            .arg("run")
            .args(extra)
            .args(["--rw", "randread", "--ios", "100", "--save-state"])
            .arg(&save_to)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            err.contains(needle),
            "{extra:?}: expected '{needle}' in {err}"
        );
        assert!(!save_to.exists(), "{extra:?}: nothing written");
    };
    let args = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
    let load = |file: &std::path::Path, more: &[&str]| -> Vec<String> {
        let mut v = args(&SMALL);
        v.extend(args(&["--load-state", file.to_str().unwrap()]));
        v.extend(args(more));
        v
    };
    bad(&load(&d.path().join("missing"), &[]), None, "--load-state");
    bad(
        &load(&badf, &[]),
        Some(b"garbage, not a state"),
        "not an ssdlab drive state file",
    );
    bad(
        &load(&badf, &[]),
        Some(&good[..good.len() / 2]),
        "truncated",
    );
    let mut flipped = good.clone();
    let n = flipped.len();
    flipped[n - 100] ^= 1;
    bad(&load(&badf, &[]), Some(&flipped), "corrupt");
    bad(
        &args(&["--sim", "c300-256g", "--load-state", st]),
        None,
        "saved from vertex450-128g, this run simulates c300-256g",
    );
    bad(
        &load(&state, &["--drives", "2"]),
        None,
        "holds 1 drive, this run simulates 2",
    );
    bad(
        &load(&state, &["--set", "ftl.gc_policy=cost-benefit"]),
        None,
        "ftl.gc_policy",
    );
    bad(
        &load(&state, &["--state", "full"]),
        None,
        "--state and --load-state",
    );
    bad(
        &args(&["--null", "--load-state", st]),
        None,
        "simulated drives",
    );
    // the state file is an input: no other output may overwrite it
    let out = ssdlab()
        .arg("run")
        .args(load(
            &state,
            &["--rw", "randread", "--ios", "100", "--json", "--output", st],
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&state).unwrap(), good);
    // --save-state is an output: never the preset file or another output
    let preset = d.path().join("p.toml");
    let toml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/presets/vertex450-128g.toml"
    ))
    .unwrap();
    std::fs::write(&preset, &toml).unwrap();
    let out = ssdlab()
        .arg("run")
        .arg("--sim")
        .arg(&preset)
        .args(["--rw", "randread", "--ios", "100", "--save-state"])
        .arg(&preset)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--save-state"));
    assert_eq!(std::fs::read_to_string(&preset).unwrap(), toml);
}

#[test]
fn preconditioning_by_workload_and_the_steady_state_test() {
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = SMALL.to_vec();
        args.extend([
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "32",
            "--time",
            "300ms",
        ]);
        args.extend(extra);
        let out = ssdlab()
            .arg("run")
            .args(&args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (fresh, _) = run(&[]);
    let (pre, err) = run(&[
        "--precondition",
        "seqwrite 1x, randwrite 4k 2x",
        "--steady-state",
    ]);
    // A drive written full and overwritten at random pays for garbage collection.
    assert!(iops(&pre, "write") < 0.8 * iops(&fresh, "write"));
    assert!(
        err.contains("preconditioned by workload: seqwrite 128 KiB 1x"),
        "{err}"
    );
    let notes = pre["jobs"][0]["ssdlab"]["notes"].as_array().unwrap();
    assert!(notes
        .iter()
        .any(|n| n.as_str().unwrap().contains("SNIA PTS steady state")));
    // The verdict as data: at least a window of 5 rounds; when reached, the window meets both
    // criteria and the result is that round.
    let ss = &pre["jobs"][0]["ssdlab"]["steady_state"];
    let rounds = ss["rounds"].as_array().unwrap();
    assert!(rounds.len() >= 5 && rounds.len() <= 25, "{ss}");
    if let Some(k) = ss["reached_at"].as_u64() {
        assert_eq!(k as usize, rounds.len());
        assert!(
            ss["range_pct"].as_f64().unwrap() <= 20.0 && ss["slope_pct"].as_f64().unwrap() <= 10.0
        );
        let last = rounds.last().unwrap().as_f64().unwrap();
        assert!((last - iops(&pre, "write")).abs() < 0.005 * last);
    }
    // Bad steps and flags: one line, exit 2.
    for (args, says) in [
        (vec!["--precondition", "fill 1x"], "unknown step"),
        (vec!["--precondition", "randwrite 4k"], "how many times"),
    ] {
        let out = ssdlab()
            .arg("run")
            .args(SMALL)
            .args(["--rw", "randwrite", "--time", "100ms"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(says));
    }
    let out = ssdlab()
        .args([
            "run",
            "--null",
            "--rw",
            "randread",
            "--time",
            "100ms",
            "--steady-state",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Preconditioning placed through the FTL without timing (the default) and on the simulator's
/// clock (`--precondition-timed`) bring the drive to the same steady state; every round continues
/// the workload with new random offsets, so a drive overwritten at random across its span keeps
/// collecting garbage (with the same offsets every round its write amplification fell to 1).
#[test]
fn untimed_and_timed_preconditioning_reach_the_same_steady_state() {
    let run = |timed: bool| {
        let mut args: Vec<&str> = SMALL.to_vec();
        args.extend([
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "32",
            "--time",
            "300ms",
        ]);
        args.extend([
            "--precondition",
            "seqwrite 1x, randwrite 4k 1x",
            "--steady-state",
        ]);
        if timed {
            args.push("--precondition-timed");
        }
        let (v, _) = sim_json(&args);
        let job = &v["jobs"][0];
        let notes = job["ssdlab"]["notes"].to_string();
        let ss = &job["ssdlab"]["steady_state"];
        assert!(ss["reached_at"].as_u64().is_some(), "timed {timed}: {ss}");
        let wa = device(job)["write_amplification"].as_f64().unwrap();
        (ss["window_avg"].as_f64().unwrap(), wa, notes)
    };
    let (untimed, wa_u, err_u) = run(false);
    let (timed, wa_t, err_t) = run(true);
    assert!(
        err_u.contains("written through the FTL, untimed"),
        "{err_u}"
    );
    assert!(
        err_t.contains("simulated") && !err_t.contains("untimed"),
        "{err_t}"
    );
    assert!(
        (untimed - timed).abs() < 0.1 * timed,
        "steady state {untimed:.0} IOPS untimed vs {timed:.0} timed"
    );
    assert!(wa_u > 1.3 && wa_t > 1.3, "WA {wa_u} untimed, {wa_t} timed");
    // --precondition-timed without --precondition: one line, exit 2
    let out = ssdlab()
        .arg("run")
        .args(SMALL)
        .args([
            "--rw",
            "randwrite",
            "--time",
            "10ms",
            "--precondition-timed",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Runs `ssdlab ARGS…` under an address-space limit (`ulimit -v`, KiB).
fn under_ulimit_v(kib: u64, args: &[&str]) -> std::process::Output {
    std::process::Command::new("sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args(args)
        .output()
        .unwrap()
}

/// An 8 TB drive (tests/data/qlc-8tb.toml) tested on an 8 GiB span fits in 1 GiB of address
/// space: its mapping tables are allocated for the regions written, not for the capacity.
/// The same drive written whole (--state full) is refused with one line, before it starts.
#[test]
fn large_drive_on_a_small_span_runs_in_little_address_space() {
    let drive = "tests/data/qlc-8tb.toml";
    for (rw, extra) in [
        ("randwrite", &[][..]),
        ("randread", &["--precondition", "seqwrite 1x over 64m"][..]),
    ] {
        let mut args = vec![
            "run", "--sim", drive, "--rw", rw, "--bs", "4k", "--qd", "32", "--span", "8g",
            "--time", "20ms", "--json",
        ];
        args.extend_from_slice(extra);
        let out = under_ulimit_v(1 << 20, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{rw}: {err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let kind = if rw == "randwrite" { "write" } else { "read" };
        assert!(iops(&v, kind) > 0.0, "{rw}: no I/O");
        assert!(
            !err.contains("needs up to"),
            "{rw}: a small run says nothing: {err}"
        );
    }
    let out = under_ulimit_v(
        1 << 20,
        &["run", "--sim", drive, "--state", "full", "--time", "20ms"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("whole") && err.contains("need about"), "{err}");
    // a large need that fits is said on stderr before the run starts
    let out = ssdlab()
        .args(["run", "--sim", drive, "--rw", "randwrite", "--time", "10ms"])
        .args(["--max-memory", "1t", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        assert!(err.contains("this simulation needs up to"), "{err}");
    } else {
        // a machine without that much memory refuses it with one line instead
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `ssdlab study trim`: the office-like aging workload on a RAID 0 of two, TRIM passed through
/// vs dropped by the RAID driver (direction only; a short run at the study's default scale).
#[test]
fn trim_study_passthrough_lowers_wa_and_keeps_writes_faster() {
    let dir = tempfile::tempdir().unwrap();
    let out = ssdlab()
        .current_dir(dir.path())
        .args(["study", "trim", "--days", "8", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = v["endurance"].as_array().unwrap();
    assert_eq!(e.len(), 2);
    let (with, without) = (&e[0], &e[1]);
    assert!(with["label"].as_str().unwrap().contains("passed through"));
    let f = |x: &Value, k: &str| x[k].as_f64().unwrap();
    assert!(f(with, "write_amplification") < f(without, "write_amplification"));
    assert!(f(with, "write_amplification_all_days") < f(without, "write_amplification_all_days"));
    assert!(f(with, "probe_mb_s") > f(without, "probe_mb_s"));
    assert!(f(with, "array_tbw_bytes") > f(without, "array_tbw_bytes"));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs[0]["days"].as_array().unwrap().len(), 8);
    // the same file activity reaches both arrays; only the TRIMs differ
    let host = |r: &Value| r["days"][7]["work"]["host_write_bytes"].as_u64().unwrap();
    assert_eq!(host(&runs[0]), host(&runs[1]));
    assert!(runs[0]["days"][7]["work"]["drive_trims"].as_u64().unwrap() > 0);
    assert_eq!(
        runs[1]["days"][7]["work"]["drive_trims"].as_u64().unwrap(),
        0
    );
    // nothing is written next to it
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // bad input: one error line, exit 2, nothing created
    for args in [
        &["study", "trim", "--days", "0"][..],
        &["study", "trim", "--fill", "99"],
        &["study", "trim", "--time", "1s"],
        &["study", "trim", "--allocator", "best-fit"],
        &["study", "stripe", "--daily-write", "10g"],
    ] {
        let out = ssdlab()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The memory check is made once, before the drive is built, against what it will hold: a
/// run that fits is not refused afterwards because the built drive now counts as used address
/// space (issue 25: `ulimit -v 3500000; run --sim samsung-980pro-1t --state full` worked 20 s,
/// then exited 2).
#[test]
fn a_run_that_fits_its_memory_limit_is_not_refused_after_building() {
    let args = [
        "run",
        "--sim",
        "vertex450-128g",
        "--state",
        "full",
        "--ios",
        "10",
    ];
    // the tool's own estimate, from a refusal
    let out = ssdlab()
        .args(args)
        .args(["--max-memory", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let need_mib: f64 = err
        .split("need about ")
        .nth(1)
        .and_then(|r| r.split(" MiB").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("an estimate in MiB: {err}"));
    // room for the estimate and the process itself, not for the estimate twice
    let kib = (need_mib * 1.6 * 1024.0) as u64;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\"",))
        .arg(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ulimit -v {kib}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
