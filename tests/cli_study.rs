//! The studies' findings through the real binary: what limits each compared point, and the
//! caveat of the drive model's standing against the built-in findings of the classic reviews
//! (kept in the store, so `report` says it too).

use assert_cmd::Command;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

#[test]
fn the_stripe_study_names_limits_and_the_models_standing() {
    let dir = tempfile::tempdir().unwrap();
    let study = || {
        ssdlab()
            .current_dir(dir.path())
            .args(["study", "stripe", "--time", "100ms", "--qd", "32"])
            .args(["--stripes", "8k,128k"])
            .output()
            .unwrap()
    };
    let out = study();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    // what binds one drive and the array, from the stored device counters
    assert!(
        stdout.contains("raid0, 4k-randwrite: what limits it: one drive: at QD 32 all 16 dies, 100 % busy; the array (128 KiB): at QD 32 all 16 dies of each drive, 100 % busy."),
        "{stdout}"
    );
    // the model's standing, at the study's time per point, with the command that checks it
    let caveat = stdout
        .lines()
        .find(|l| l.starts_with("  - caveat: the vertex450-128g model reproduces "))
        .unwrap_or_else(|| panic!("no caveat: {stdout}"))
        .to_string();
    assert!(
        caveat.contains("of the 17 built-in findings of the classic reviews that name it, simulated at 100ms per workload (`ssdlab validate vertex450-128g --against data/published/seed-findings.toml --max-time 100ms`)"),
        "{caveat}"
    );
    // the check is a diagnostic on stderr, never on stdout
    assert!(stderr.contains("checking vertex450-128g against the built-in findings"));
    assert!(!stdout.contains("checking vertex450-128g"));

    // `report` gives the stored caveat without simulating again
    let db = dir.path().join("ssdlab-study-stripe-vertex450-128g.sqlite");
    let out = ssdlab().arg("report").arg(&db).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains(&caveat), "{stdout}");
    assert!(stdout.contains("what limits it: one drive:"), "{stdout}");
    assert!(!stderr.contains("checking"), "{stderr}");

    // the study run again resumes: nothing simulated, the check kept
    let out = study();
    assert!(out.status.success());
    assert!(
        !text(&out.stderr).contains("checking"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains(&caveat));
}

#[test]
fn a_report_of_an_unchecked_sweep_says_how_to_check_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.toml");
    std::fs::write(
        &f,
        "name = \"s\"\ntime = \"50ms\"\nramp = \"10ms\"\nspan = \"1GiB\"\nqd = [1, 8]\nworkloads = [\"4k-randread\"]\n\n\
         [[target]]\nlabel = \"one\"\nsim = \"vertex450-128g\"\nbaseline = true\n\n\
         [[target]]\nlabel = \"two\"\nsim = \"vertex450-128g\"\ndrives = 2\nstripes = [\"8k\", \"64k\"]\n",
    )
    .unwrap();
    let db = dir.path().join("s.sqlite");
    let out = ssdlab()
        .arg("sweep")
        .arg(&f)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = ssdlab().arg("report").arg(&db).output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("  - caveat: the built-in findings of the classic reviews name vertex450-128g, and the model was not checked against them for this sweep (`ssdlab validate vertex450-128g --against data/published/seed-findings.toml` checks it; `ssdlab study` does it itself)."),
        "{stdout}"
    );
    // each compared point's limit: QD 1 is latency-bound on one drive and on the array
    assert!(
        stdout.contains(
            "two, 4k-randread: what limits it: one drive: at QD 1 latency (nothing saturated"
        ),
        "{stdout}"
    );
}

/// The simulated stripe study checks its picks: the stripes close to the best run again at
/// twice the time per point with another seed (a sweep `…-check` in the same store), and a pick
/// the check does not confirm is reported as a tie of both answers — by the study and by
/// `report`, which folds the check into the study rather than reporting it apart.
#[test]
fn the_stripe_study_checks_its_picks_against_longer_points() {
    let dir = tempfile::tempdir().unwrap();
    let out = ssdlab()
        .current_dir(dir.path())
        .args(["study", "stripe", "--time", "100ms", "--qd", "1,32"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    // this model's 128k-seqwrite stripes lie within 5 % of each other: they are run again
    assert!(
        stdout.contains("sweep study-stripe-vertex450-128g-check: "),
        "{stdout}"
    );
    let unstable: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("not stable: "))
        .collect();
    assert!(!unstable.is_empty(), "{stdout}");
    for l in &unstable {
        assert!(
            l.contains("in the sweep's points, ")
                && l.contains(" run again at 200 ms per point and another seed; so ")
                && l.contains(" count as a tie: "),
            "{l}"
        );
    }
    let db = dir.path().join("ssdlab-study-stripe-vertex450-128g.sqlite");
    let out = ssdlab().arg("report").arg(&db).output().unwrap();
    let report = text(&out.stdout);
    assert!(out.status.success());
    for l in &unstable {
        assert!(report.contains(l), "{l}\n{report}");
    }
    // the check is part of the study's report, not a sweep of its own
    assert!(!report.contains("-check"), "{report}");
    let out = ssdlab()
        .args(["report", "--json"])
        .arg(&db)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sweeps"].as_array().unwrap().len(), 1);
    let best = v["sweeps"][0]["analysis"]["best_per_workload"]
        .as_array()
        .unwrap();
    let u = best
        .iter()
        .find(|b| b.get("unstable").is_some())
        .expect("an unstable pick in the JSON");
    assert_eq!(u["unstable"]["check"], "200 ms per point and another seed");
    assert!(u["tied"].as_array().unwrap().len() > 1);
}
