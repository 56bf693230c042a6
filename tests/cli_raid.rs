//! RAID 0 through the real binary: stripe sets over files, verification, member statistics, the
//! layout query and bad input.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

fn run_ok(args: &[&str]) -> Value {
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
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Reassembles the logical image of an md raid0 array of equal members, written directly from
/// the textbook formula (chunk c lives on member c mod n at member offset (c div n)·chunk),
/// independently of `ssdlab-layout`.
fn reassemble_equal(members: &[Vec<u8>], chunk: usize) -> Vec<u8> {
    let n = members.len();
    let per = members[0].len() / chunk * chunk;
    let mut out = Vec::with_capacity(per * n);
    for c in 0..(per / chunk) * n {
        let m = c % n;
        let off = (c / n) * chunk;
        out.extend_from_slice(&members[m][off..off + chunk]);
    }
    out
}

#[test]
fn verified_writes_through_a_stripe_set_reassemble_byte_identically() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = ["m0.img", "m1.img", "m2.img"]
        .iter()
        .map(|n| dir.path().join(n).to_str().unwrap().to_string())
        .collect();
    let raid = names.join(",");
    // Sequential verified writes over the whole 3 MiB array, 64 KiB requests across 16 KiB chunks.
    let v = run_ok(&[
        "--raid0", &raid, "--stripe", "16k", "--span", "3m", "--rw", "write", "--bs", "64k",
        "--qd", "4", "--bytes", "3m", "--verify",
    ]);
    let j = &v["jobs"][0];
    assert_eq!(j["write"]["io_bytes"], 3 << 20);
    let disk = v["disk_util"].as_array().unwrap();
    // The array (with its members' averages in fio's aggr_* keys), then one entry per member;
    // before them the kernel's device under the files, when the filesystem has one.
    let members: Vec<&Value> = disk
        .iter()
        .filter(|d| names.iter().any(|n| d["name"] == n.as_str()))
        .collect();
    assert_eq!(members.len(), 3, "one disk_util entry per member");
    let array = disk.iter().find(|d| d["name"] == raid.as_str()).unwrap();
    assert_eq!(array["write_ios"], 48);
    assert_eq!(array["aggr_write_ios"], 64);
    let pieces: u64 = members
        .iter()
        .map(|d| d["write_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(
        pieces,
        3 * 64,
        "every 64 KiB request split into four 16 KiB pieces"
    );

    // Read the members directly and rebuild the logical image with the md formula.
    let members: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(n).unwrap()).collect();
    assert!(members.iter().all(|m| m.len() == 1 << 20));
    let image = reassemble_equal(&members, 16 << 10);
    let img = dir.path().join("logical.img");
    std::fs::write(&img, &image).unwrap();
    // Every sector of the rebuilt image must carry the header for exactly its own offset.
    let v = run_ok(&[
        "--target",
        img.to_str().unwrap(),
        "--rw",
        "read",
        "--bs",
        "64k",
        "--bytes",
        "3m",
        "--verify",
    ]);
    let ver = &v["jobs"][0]["ssdlab"]["verify"];
    assert_eq!(ver["sectors_ok"], 6144, "{ver}");
    assert_eq!(ver["sectors_bad"], 0);
    assert_eq!(ver["sectors_unwritten"], 0);

    // Reading back through the stripe set verifies too.
    let v = run_ok(&[
        "--raid0", &raid, "--stripe", "16k", "--rw", "randread", "--bs", "4k", "--align", "512",
        "--qd", "8", "--ios", "3000", "--verify",
    ]);
    assert_eq!(v["jobs"][0]["ssdlab"]["verify"]["sectors_bad"], 0);

    // Members in the wrong order: misplaced data is caught and reported with its offset.
    let swapped = format!("{},{},{}", names[1], names[0], names[2]);
    let out = ssdlab()
        .args([
            "run", "--raid0", &swapped, "--stripe", "16k", "--rw", "read", "--bs", "16k",
            "--bytes", "64k", "--verify", "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = v["jobs"][0]["ssdlab"]["errors"][0]["error"]
        .as_str()
        .unwrap();
    assert!(err.contains("misplaced"), "{err}");
}

#[test]
fn stripe_set_over_null_members_and_member_stats() {
    let v = run_ok(&[
        "--raid0",
        "null:1g,null:1g",
        "--stripe",
        "16k",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "32",
        "--ios",
        "100000",
    ]);
    let disk = v["disk_util"].as_array().unwrap();
    // null members have no device: the array, then its two members
    assert_eq!(disk.len(), 3);
    assert_eq!(disk[0]["read_ios"], 100_000);
    let ios: Vec<u64> = disk[1..]
        .iter()
        .map(|d| d["read_ios"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ios.iter().sum::<u64>(),
        100_000,
        "4 KiB aligned reads never straddle a 16 KiB chunk"
    );
    assert!(
        ios.iter().all(|&n| n > 45_000),
        "uniform random reads spread evenly: {ios:?}"
    );
    assert_eq!(v["jobs"][0]["ssdlab"]["target"]["kind"], "raid0");
}

fn assert_bad(args: &[&str], needle: &str) {
    let out = ssdlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in {err}"
    );
}

#[test]
fn raid_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.img");
    let b = dir.path().join("b.img");
    std::fs::write(&a, vec![7u8; 1 << 20]).unwrap();
    std::fs::write(&b, vec![9u8; 1 << 20]).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let ab = format!("{a},{b}");
    let aa = format!("{a},{a}");
    let missing = format!("{a},{}", dir.path().join("nope.img").display());
    for (args, needle) in [
        (
            vec!["run", "--raid0", &ab, "--stripe", "0", "--rw", "randwrite"],
            "greater than 0",
        ),
        (
            vec![
                "run",
                "--raid0",
                &ab,
                "--stripe",
                "1000",
                "--rw",
                "randwrite",
            ],
            "not a multiple",
        ),
        (
            vec!["run", "--raid0", &ab, "--stripe", "2m", "--rw", "randwrite"],
            "larger than member",
        ),
        (
            vec![
                "run",
                "--raid0",
                &aa,
                "--stripe",
                "16k",
                "--rw",
                "randwrite",
            ],
            "listed twice",
        ),
        (
            vec![
                "run",
                "--raid0",
                &missing,
                "--stripe",
                "16k",
                "--rw",
                "randwrite",
            ],
            "does not exist",
        ),
        (
            vec!["run", "--raid0", a, "--stripe", "16k"],
            "at least two members",
        ),
        (
            vec!["run", "--raid0", &ab, "--stripe", "16k", "--engine", "sync"],
            "io_uring",
        ),
    ] {
        assert_bad(&args, needle);
    }
    assert!(
        std::fs::read(a).unwrap().iter().all(|&x| x == 7),
        "nothing written to members"
    );
    assert!(std::fs::read(b).unwrap().iter().all(|&x| x == 9));
    assert!(!Path::new(&dir.path().join("nope.img")).exists());
}

#[test]
fn layout_query() {
    let out = ssdlab()
        .args([
            "layout",
            "--members",
            "1m,1m,1m",
            "--stripe",
            "64k",
            "60k",
            "10k",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "member  offset length\n     0   61440   4096\n     1       0   6144\n"
    );
    let out = ssdlab()
        .args([
            "layout",
            "--members",
            "1m,1m,1m",
            "--stripe",
            "64k",
            "60k",
            "10k",
            "--no-headers",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("0 {} 4096\n1 0 6144\n", 60 << 10)
    );
    let out = ssdlab()
        .args([
            "layout",
            "--members",
            "1m,2m",
            "--stripe",
            "64k",
            "--json",
            "2m",
            "64k",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["size"], 3 << 20);
    assert_eq!(v["zones"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["pieces"][0]["member"], 1,
        "the second zone lives on the larger member only"
    );
    assert_eq!(v["pieces"][0]["member_offset"], 1 << 20);
    assert_bad(
        &["layout", "--members", "1m,1m", "--stripe", "2m", "0", "4k"],
        "larger than member",
    );
    assert_bad(
        &[
            "layout",
            "--members",
            "1m,1m",
            "--stripe",
            "64k",
            "2m",
            "4k",
        ],
        "past the end",
    );
}
