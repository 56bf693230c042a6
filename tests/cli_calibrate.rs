//! `ssdlab validate` and `ssdlab calibrate` through the real binary: validation tables and JSON,
//! fitting from data files and from a real file measured with the suite, and bad input refused
//! with nothing written.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

const X25E_FIGURES: &str = r#"
[source]
title = "test figures"
kind = "datasheet"

[[figure]]
drive = "x25e-64g"
metric = "iops"
value = 28000
unit = "IOPS"
rw = "randread"
bs = "4k"
qd = 32
span = "1g"
state = "full"
time = "1s"

[[figure]]
drive = "x25e-64g"
metric = "lat"
value = 110
unit = "us"
rw = "randread"
bs = "4k"
qd = 1
span = "1g"
state = "full"
time = "1s"

[[claim]]
text = "X25-E reads faster at QD 32 than at QD 1"
metric = "iops"
kind = "greater"
a = { drive = "x25e-64g", rw = "randread", bs = "4k", qd = 32, span = "1g", state = "full", time = "500ms" }
b = { drive = "x25e-64g", rw = "randread", bs = "4k", qd = 1, span = "1g", state = "full", time = "500ms" }
"#;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Asserts a clean bad-input failure: exit 2, one line on stderr containing `needle`, nothing
/// on stdout.
fn assert_bad_input(args: &[&str], needle: &str) {
    let out = ssdlab().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: expected '{needle}' in: {stderr}"
    );
}

#[test]
fn validate_compares_figures_and_checks_claims() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "x25e.toml", X25E_FIGURES);
    let out = ssdlab()
        .args(["validate", "x25e-64g", "--json", "--against"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // a memory budget smaller than any figure runs them one at a time, to the same answer
    let alone = ssdlab()
        .args([
            "validate",
            "x25e-64g",
            "--json",
            "--max-memory",
            "1",
            "--against",
        ])
        .arg(&data)
        .output()
        .unwrap();
    assert!(alone.status.success());
    assert_eq!(alone.stdout, out.stdout, "the schedule changes no figure");
    let figs = v["figures"].as_array().unwrap();
    assert_eq!(figs.len(), 2);
    // the preset reads 35,000 IOPS at QD 32: 25 % above the figure of 28,000
    let e = figs[0]["error"].as_f64().unwrap();
    assert!((0.15..0.35).contains(&e), "{e}");
    assert_eq!(figs[1]["unit"], "us");
    assert!(figs[1]["simulated"].as_f64().unwrap() > 10.0);
    assert_eq!(v["claims"][0]["pass"], true);
    assert!(v["families"][0]["figures"].as_u64().unwrap() == 2);
    // the table names the source of every figure; --html writes the same as a page with charts
    let html = dir.path().join("validation.html");
    let out = ssdlab()
        .args(["validate", "x25e-64g", "--against"])
        .arg(dir.path())
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("x25e.toml#1") && text.contains("1 of 1 claims hold"),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("<svg").count(),
        3,
        "family chart and one per unit"
    );
    for needle in [
        "Error per workload family",
        "x25e-64g: reference and simulated",
        "x25e.toml#1",
        "1 of 1 claims hold.",
        "<td>pass</td>",
        // the environment it was written in, with the command line
        "<h2>Environment</h2>",
        "<td>command</td>",
        "validate x25e-64g --against",
    ] {
        assert!(page.contains(needle), "{needle} not in the page");
    }
}

#[test]
fn calibrate_from_data_fits_toward_the_figures_and_writes_a_preset_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "x25e.toml", X25E_FIGURES);
    let out_preset = dir.path().join("slow-x25e.toml");
    let out = ssdlab()
        .args([
            "calibrate",
            "--base",
            "x25e-64g",
            "--param",
            "controller.fw_read_ns",
            "--param",
            "host.cmd_overhead_ns",
            "--fit-time",
            "1s",
            "--json",
            "--from",
        ])
        .arg(&data)
        .arg("--out")
        .arg(&out_preset)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let after = v["rms_error_after"].as_f64().unwrap();
    let before = v["rms_error_before"].as_f64().unwrap();
    assert!(after < before * 0.5, "{before} -> {after}");
    let p = &v["params"][0];
    assert_eq!(p["key"], "controller.fw_read_ns");
    // slower reads were asked for: more firmware time per read
    let (b, a): (f64, f64) = (
        p["before"].as_str().unwrap().parse().unwrap(),
        p["after"].as_str().unwrap().parse().unwrap(),
    );
    assert!(a > b, "{b} -> {a}");
    let text = std::fs::read_to_string(&out_preset).unwrap();
    assert!(text.contains("# fitted: "), "{text}");
    assert!(text.contains("name = \"slow-x25e\""), "{text}");
    assert!(text.contains("fitted by ssdlab calibrate"), "{text}");
    // the fitted preset runs, and validates closer to the figures than the base
    let out = ssdlab()
        .args(["validate", "--drive", "x25e-64g", "--json", "--against"])
        .arg(&data)
        .arg(&out_preset)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = v["figures"][0]["error"].as_f64().unwrap();
    assert!(e.abs() < 0.10, "{e}");
    // the stripe study takes the calibrated preset and quotes its calibration
    let out = ssdlab()
        .current_dir(dir.path())
        .args([
            "study",
            "stripe",
            "--qd",
            "4",
            "--stripes",
            "8k",
            "--time",
            "50ms",
        ])
        .arg("--preset")
        .arg(&out_preset)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("come from a calibrated model, fitted by ssdlab calibrate to 2 figures"),
        "{stdout}"
    );
    assert!(dir
        .path()
        .join("ssdlab-study-stripe-slow-x25e.sqlite")
        .exists());
}

#[test]
fn calibrate_measures_a_real_file_and_fits_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("disk.img");
    let out_preset = dir.path().join("this-disk.toml");
    let store = dir.path().join("runs.sqlite");
    let out = ssdlab()
        .args(["calibrate", "--target"])
        .arg(&target)
        .args([
            "--base",
            "vertex450-128g",
            "--span",
            "32m",
            "--point-time",
            "50ms",
            "--param",
            "controller.fw_read_ns",
            "--passes",
            "1",
            "--fit-time",
            "200ms",
            "--fit-ios",
            "5000",
            "--store",
        ])
        .arg(&store)
        .arg("--out")
        .arg(&out_preset)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("calibrate: point 0/"), "{stderr}");
    let measured = dir.path().join("this-disk.toml.measured.toml");
    let m = std::fs::read_to_string(&measured).unwrap();
    assert_eq!(m.matches("[[figure]]").count(), 17, "{m}");
    assert!(m.contains("kind = \"measured\""));
    assert!(std::fs::read_to_string(&out_preset)
        .unwrap()
        .contains("controller"));
    // the measurements are a data file: a fit can be redone from them
    let refit = dir.path().join("refit.toml");
    let out = ssdlab()
        .args([
            "calibrate",
            "--base",
            "vertex450-128g",
            "--drive",
            "this-disk",
        ])
        .args(["--param", "controller.fw_write_ns", "--passes", "1"])
        .args(["--fit-time", "200ms", "--fit-ios", "5000", "--from"])
        .arg(&measured)
        .arg("--out")
        .arg(&refit)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(refit.exists());
    // ... and so are the runs kept in the store: a figure each, of the drive they ran on
    let from_store = dir.path().join("from-store.toml");
    let out = ssdlab()
        .args(["calibrate", "--base", "vertex450-128g", "--drive"])
        .arg(&target)
        .args(["--param", "controller.fw_write_ns", "--passes", "1"])
        .args([
            "--fit-time",
            "200ms",
            "--fit-ios",
            "5000",
            "--json",
            "--from",
        ])
        .arg(&store)
        .arg("--out")
        .arg(&from_store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["figures"], 17);
    // a simulated run kept in the same store is no measurement: validate leaves it out and says so
    let out = ssdlab()
        .args(["run", "--sim", "x25e-64g", "--time", "20ms", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ssdlab()
        .args(["validate", "--json", "--drive"])
        .arg(&target)
        .arg(&from_store)
        .args(["--max-time", "200ms", "--against"])
        .arg(&store)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("left out run 18") && stderr.contains("simulated, not measured"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let figs = v["figures"].as_array().unwrap();
    assert_eq!(figs.len(), 17);
    assert!(figs[0]["origin"]
        .as_str()
        .unwrap()
        .starts_with("runs.sqlite#run"));
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "x25e.toml", X25E_FIGURES);
    let d = data.to_str().unwrap();
    let bad = write(
        dir.path(),
        "bad.toml",
        &X25E_FIGURES.replacen("metric = \"iops\"", "metric = \"speed\"", 1),
    );
    let out = dir.path().join("out.toml");
    let o = out.to_str().unwrap();
    assert_bad_input(
        &["validate", "--against", bad.to_str().unwrap()],
        "metric \"speed\"",
    );
    assert_bad_input(
        &["validate", "x25e-64g", "--against", "/nonexistent/x.toml"],
        "x.toml",
    );
    assert_bad_input(
        &["validate", "c300-256g", "--against", d],
        "no figure or claim for c300-256g",
    );
    assert_bad_input(&["validate", "nope", "--against", d], "unknown preset");
    assert_bad_input(&["calibrate", "--base", "x25e-64g", "--out", o], "--target");
    assert_bad_input(
        &[
            "calibrate",
            "--base",
            "x25e-64g",
            "--out",
            o,
            "--target",
            "/dev/zero",
        ],
        "a character device keeps no data",
    );
    assert_bad_input(
        &["calibrate", "--base", "x25e-64g", "--from", d, "--out", d],
        "--out",
    );
    assert_bad_input(
        &[
            "calibrate",
            "--base",
            "x25e-64g",
            "--from",
            d,
            "--out",
            o,
            "--param",
            "nand.colour",
        ],
        "unknown preset key",
    );
    assert_bad_input(
        &[
            "calibrate",
            "--base",
            "x25e-64g",
            "--from",
            d,
            "--out",
            o,
            "--drive",
            "c300-256g",
        ],
        "no figure of drive",
    );
    assert_bad_input(
        &[
            "calibrate",
            "--base",
            "x25e-64g",
            "--from",
            d,
            "--out",
            o,
            "--point-time",
            "1s",
        ],
        "--point-time applies to --target",
    );
    assert_bad_input(
        &["validate", "--max-time", "0", "--against", d],
        "--max-time",
    );
    assert_bad_input(
        &["validate", "--max-memory", "0", "--against", d],
        "--max-memory",
    );
    assert_bad_input(
        &[
            "calibrate",
            "--base",
            "x25e-64g",
            "--from",
            d,
            "--out",
            o,
            "--fit-time",
            "0",
        ],
        "--fit-time",
    );
    assert_bad_input(
        &[
            "calibrate",
            "--base",
            "x25e-64g",
            "--from",
            d,
            "--out",
            o,
            "--store",
            "runs.sqlite",
        ],
        "--store applies to --target",
    );
    // the store is written first: no later output may replace it
    let disk = dir.path().join("disk.img");
    let disk = disk.to_str().unwrap();
    let m = format!("{o}.measured.toml");
    for (store, what) in [(o, "--store and --out"), (&m, "--store and --measurements")] {
        assert_bad_input(
            &[
                "calibrate",
                "--base",
                "x25e-64g",
                "--target",
                disk,
                "--out",
                o,
                "--store",
                store,
            ],
            what,
        );
    }
    assert!(!dir.path().join("disk.img").exists());
    // an SQLite file that is not an ssdlab store, and a store without single runs
    let foreign = dir.path().join("foreign.sqlite");
    let c = rusqlite::Connection::open(&foreign).unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    assert_bad_input(
        &[
            "validate",
            "x25e-64g",
            "--against",
            foreign.to_str().unwrap(),
        ],
        "not an ssdlab results store",
    );
    let empty = dir.path().join("empty.sqlite");
    drop(ssdlab_store::Store::open(&empty).unwrap());
    assert_bad_input(
        &["validate", "x25e-64g", "--against", empty.to_str().unwrap()],
        "holds no single run",
    );
    assert_bad_input(
        &["validate", "x25e-64g", "--against", d, "--html", d],
        "--html",
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_to_string(&data).unwrap(), X25E_FIGURES);
}

/// A data file's mistakes are named by their key and line; when nothing can be simulated or
/// fitted, calibrate and validate exit 2 and write nothing (no "rms 900 %" preset).
#[test]
fn nothing_simulated_or_fitted_is_an_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let figure = |extra: &str| {
        format!(
            "[source]\ntitle = \"t\"\nkind = \"datasheet\"\n\n[[figure]]\ndrive = \"x25e-64g\"\nmetric = \"iops\"\nunit = \"IOPS\"\nrw = \"randread\"\nqd = 1\n{extra}\n"
        )
    };
    let run = |args: &[&str], data: &Path| {
        let out = ssdlab().args(args).arg(data).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let out_preset = dir.path().join("o.toml");
    let calib = [
        "calibrate",
        "--base",
        "x25e-64g",
        "--fit-time",
        "100ms",
        "--out",
    ];
    let calib: Vec<&str> = calib
        .iter()
        .copied()
        .chain([out_preset.to_str().unwrap(), "--from"])
        .collect();
    // a key the file gets wrong: named with its line, in the file's words
    let bad = write(dir.path(), "bad.toml", &figure("bs = \"3\"\nvalue = 1000"));
    let (code, err) = run(&calib, &bad);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("figure 1 (line 5)") && err.contains("bs = \"3\"") && !err.contains("--bs"),
        "{err}"
    );
    let huge = write(
        dir.path(),
        "huge.toml",
        &figure("bs = \"4k\"\nvalue = 1e308"),
    );
    let (code, err) = run(&calib, &huge);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("beyond any storage device") && err.len() < 300,
        "{err}"
    );
    // a figure the simulator cannot run: nothing to fit, nothing to validate
    let far = write(
        dir.path(),
        "far.toml",
        &figure("bs = \"4k\"\nvalue = 1000\nspan = \"1t\""),
    );
    let (code, err) = run(&calib, &far);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("span = \"1 TiB\" is beyond"), "{err}");
    assert!(!out_preset.exists(), "nothing written");
    let (code, err) = run(&["validate", "x25e-64g", "--against"], &far);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("nothing could be simulated"), "{err}");
    // figures that leave every parameter unconstrained: nothing fitted, nothing written
    let reads = write(
        dir.path(),
        "reads.toml",
        &figure("bs = \"4k\"\nvalue = 30000"),
    );
    let mut only_write: Vec<&str> = calib.clone();
    only_write.splice(1..1, ["--param", "controller.fw_write_ns"]);
    let (code, err) = run(&only_write, &reads);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("constrain none of the parameters"), "{err}");
    assert!(!out_preset.exists(), "nothing written");
    let mut negative: Vec<&str> = calib.clone();
    negative.splice(1..1, ["--param", "nand.t_r_ns=-1000000..-10"]);
    let (code, err) = run(&negative, &reads);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("never negative"), "{err}");
}

/// A `--param` range's ends and its alternatives are values the key can take (the preset
/// loader's check), refused before anything is simulated; a base value outside the range asked
/// for is never the result: the search starts at the range's nearest value, and the preset
/// written keeps the fitted value within the range (and the capacity that follows it).
#[test]
fn param_ranges_hold_valid_values_and_the_fit_stays_within_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "x25e.toml", X25E_FIGURES);
    let d = data.to_str().unwrap();
    let out_preset = dir.path().join("cp.toml");
    let o = out_preset.to_str().unwrap();
    for (param, needle) in [
        ("nand.channels=0..2", "0 is not a valid nand.channels"),
        ("nand.t_r_ns=-5|-6", "never negative"),
        ("nand.channels=-1|0", "never negative"),
        ("nand.channels=1|0", "\"0\" is not a valid nand.channels"),
        ("nand.t_r_ns=1e30|5", "\"1e30\" is not a valid nand.t_r_ns"),
        ("nand.t_r_ns=NaN|5", "\"NaN\" is not a valid nand.t_r_ns"),
        ("nand.t_r_ns=1..1e30", "1e30 is beyond any value"),
        ("nand.channels=1.5..4", "whole number"),
    ] {
        assert_bad_input(
            &[
                "calibrate",
                "--base",
                "x25e-64g",
                "--from",
                d,
                "--out",
                o,
                "--param",
                param,
            ],
            &format!("--param {param}: "),
        );
        assert_bad_input(
            &[
                "calibrate",
                "--base",
                "x25e-64g",
                "--from",
                d,
                "--out",
                o,
                "--param",
                param,
            ],
            needle,
        );
    }
    assert!(!out_preset.exists());
    // the X25-E has 10 channels; 1…2 are asked for
    let out = ssdlab()
        .args([
            "calibrate",
            "--base",
            "x25e-64g",
            "--param",
            "nand.channels=1..2",
            "--passes",
            "1",
            "--fit-time",
            "200ms",
            "--json",
            "--from",
            d,
            "--out",
            o,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["params"][0];
    assert_eq!(p["before"], "10");
    let after: u32 = p["after"].as_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&after), "{p}");
    let text = std::fs::read_to_string(&out_preset).unwrap();
    assert!(text.contains(&format!("channels = {after} # ")), "{text}");
    assert!(text.contains("# follows the fitted values"), "{text}");
    // the preset written runs
    let out = ssdlab()
        .args(["run", "--sim", o, "--time", "20ms", "--span", "64m"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
