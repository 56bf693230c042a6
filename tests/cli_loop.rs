//! `ssdlab run` on a real block device: a loop device created and removed by the test itself.
//! Skips (with a printed reason) where loop devices cannot be attached — except under
//! `SSDLAB_REQUIRE_PRIVILEGED_TESTS=1` (CI runs as root), where that is a failure.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Sys;

/// A loop device attached to an image file; detached on drop (even when the test fails).
struct Loop {
    dev: PathBuf,
}

impl Loop {
    fn attach(image: &Path) -> Result<Loop, String> {
        Self::attach_with(image, 512)
    }

    fn attach_with(image: &Path, sector: u32) -> Result<Loop, String> {
        if !Path::new("/dev/loop-control").exists() {
            return Err("/dev/loop-control is missing".into());
        }
        let out = Sys::new("losetup")
            .args([
                "--find",
                "--show",
                "--direct-io=on",
                "--sector-size",
                &sector.to_string(),
            ])
            .arg(image)
            .output()
            .map_err(|e| format!("losetup not runnable: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string());
        Ok(Loop { dev })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Sys::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

use ssdlab_testkit::skip;

/// A state directory for the verify maps of this test process.
fn state_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn ssdlab_run(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .env("SSDLAB_STATE_DIR", state_dir())
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

/// Puts an ext4 filesystem on an image file (before it is attached, so no one holds the
/// device); the reason when that is not possible.
fn mkfs_ext4(img: &Path) -> Result<(), String> {
    let out = Sys::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(img)
        .output()
        .map_err(|e| format!("mkfs.ext4 cannot be run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "mkfs.ext4 failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[test]
fn loop_device_reads_writes_and_safety() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    let size = 16usize << 20;
    let pattern: Vec<u8> = (0..size).map(|i| (i % 253) as u8 + 1).collect();
    std::fs::write(&img, &pattern).unwrap();
    let lo = match Loop::attach(&img) {
        Ok(l) => l,
        Err(why) => return skip(&format!("loop device test: {why}")),
    };
    let dev = lo.dev.to_str().unwrap();

    // Reads are always allowed.
    let out = ssdlab_run(&[
        "--target", dev, "--rw", "randread", "--qd", "16", "--ios", "2000", "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["read"]["total_ios"], 2000);
    assert_eq!(j["ssdlab"]["target"]["kind"], "block");
    assert_eq!(j["ssdlab"]["target"]["size"], size as u64);

    // Writes need --allow-destroy.
    let out = ssdlab_run(&["--target", dev, "--rw", "randwrite", "--ios", "10"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"));

    // A region beyond the device is refused.
    let out = ssdlab_run(&[
        "--target", dev, "--offset", "8m", "--span", "16m", "--ios", "10",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("beyond the end"));

    // With --allow-destroy a blank device is written, only inside the region.
    let out = ssdlab_run(&[
        "--target",
        dev,
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--align",
        "512",
        "--offset",
        "4m",
        "--span",
        "4m",
        "--qd",
        "8",
        "--ios",
        "4000",
        "--allow-destroy",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 4000);
    let after = std::fs::read(&img).unwrap();
    assert_eq!(&after[..4 << 20], &pattern[..4 << 20]);
    assert_eq!(&after[8 << 20..], &pattern[8 << 20..]);
    assert_ne!(&after[4 << 20..8 << 20], &pattern[4 << 20..8 << 20]);

    // A device holding a filesystem is refused even with --allow-destroy.
    drop(lo);
    if let Err(why) = mkfs_ext4(&img) {
        return skip(&format!("filesystem refusal on the CLI: {why}"));
    }
    let lo = Loop::attach(&img).expect("the image attached a moment ago attaches again");
    let dev = lo.dev.to_str().unwrap();
    let before = std::fs::read(&img).unwrap();
    let out = ssdlab_run(&[
        "--target",
        dev,
        "--rw",
        "randwrite",
        "--ios",
        "10",
        "--allow-destroy",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ext4"), "{err}");
    assert_eq!(std::fs::read(&img).unwrap(), before, "nothing written");
}

#[test]
fn raid0_over_loop_devices() {
    let dir = tempfile::tempdir().unwrap();
    let mut imgs = Vec::new();
    for i in 0..3 {
        let p = dir.path().join(format!("m{i}.img"));
        std::fs::write(&p, vec![0u8; 8 << 20]).unwrap();
        imgs.push(p);
    }
    let (l0, l1, l4k) = match (
        Loop::attach(&imgs[0]),
        Loop::attach(&imgs[1]),
        Loop::attach_with(&imgs[2], 4096),
    ) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        (a, b, c) => {
            let why = [a.err(), b.err(), c.err()]
                .into_iter()
                .flatten()
                .next()
                .unwrap_or_default();
            return skip(&format!("RAID 0 loop device test: {why}"));
        }
    };
    let pair = format!("{},{}", l0.dev.display(), l1.dev.display());
    let out = ssdlab_run(&[
        "--raid0",
        &pair,
        "--stripe",
        "16k",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--ios",
        "4000",
        "--allow-destroy",
        "--verify",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ssdlab_run(&[
        "--raid0", &pair, "--stripe", "16k", "--rw", "randread", "--bs", "4k", "--qd", "16",
        "--ios", "4000", "--verify", "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ver = &v["jobs"][0]["ssdlab"]["verify"];
    assert_eq!(ver["sectors_bad"], 0);
    assert!(ver["sectors_ok"].as_u64().unwrap() > 0);
    // The kernel's counters of both loop devices, then the array and its two members.
    let du = v["disk_util"].as_array().unwrap();
    assert_eq!(du.len(), 5, "{du:?}");
    for d in &du[..2] {
        assert!(d["name"].as_str().unwrap().starts_with("loop"), "{d}");
        assert!(d["read_ios"].as_u64().unwrap() > 0, "{d}");
    }
    assert!(du[2].get("aggr_read_ios").is_some());

    let mixed = format!("{},{}", l0.dev.display(), l4k.dev.display());
    let out = ssdlab_run(&["--raid0", &mixed, "--stripe", "16k", "--ios", "10"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("different logical block sizes"), "{err}");
}

/// A sweep that would write to a block device needs `--allow-destroy`, checked before the store
/// is created; with it, the sweep runs.
#[test]
fn sweep_on_a_block_device_needs_allow_destroy() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("sweep-disk.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let lo = match Loop::attach(&img) {
        Ok(l) => l,
        Err(why) => return skip(&format!("sweep on a loop device: {why}")),
    };
    let sweep = dir.path().join("dev.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"dev\"\ntime = \"200ms\"\nqd = [1, 2]\nworkloads = [\"4k-randwrite\"]\n\
             [[target]]\npath = \"{}\"\n",
            lo.dev.display()
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .env("SSDLAB_STATE_DIR", state_dir())
            .arg("sweep")
            .arg(&sweep)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-destroy"), "{err}");
    assert!(!dir.path().join("dev.sqlite").exists(), "no store");
    assert!(
        std::fs::read(&img).unwrap().iter().all(|&b| b == 0),
        "nothing written"
    );
    let out = run(&["--allow-destroy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("dev.sqlite").exists());
}

/// A file that backs a loop device, and a device that backs another loop device, are in use:
/// writes to them are refused (they would corrupt what the loop device serves).
#[test]
fn loop_backing_stores_are_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("backing.img");
    std::fs::write(&img, vec![5u8; 16 << 20]).unwrap();
    let lo = match Loop::attach(&img) {
        Ok(l) => l,
        Err(why) => return skip(&format!("loop backing test: {why}")),
    };
    let out = ssdlab_run(&[
        "--target",
        img.to_str().unwrap(),
        "--rw",
        "write",
        "--ios",
        "10",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("backing store of loop device"), "{err}");
    // Reading it is fine.
    let out = ssdlab_run(&["--target", img.to_str().unwrap(), "--ios", "10"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A loop device over the first loop device: the first one is in use.
    let upper = Loop::attach(&lo.dev).expect("a loop device over a loop device");
    let out = ssdlab_run(&[
        "--target",
        lo.dev.to_str().unwrap(),
        "--rw",
        "write",
        "--ios",
        "10",
        "--allow-destroy",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("backing store of loop device"), "{err}");
    drop(upper);
    assert!(std::fs::read(&img).unwrap().iter().all(|&b| b == 5));
}

fn ssdlab_fio(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .env("SSDLAB_STATE_DIR", state_dir())
        .arg("fio")
        .args(args)
        .output()
        .unwrap()
}

/// `rw=trim` on a block device: one BLKDISCARD per trim, refused without `--allow-destroy`
/// (a trim destroys data as a write does); a loop device over a file punches holes on
/// discard, so the trimmed range reads back as zeros and the rest is untouched. fio 3.33 on the
/// same device issues the same trims.
#[test]
fn fio_trims_a_loop_device() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("trim.img");
    let size = 16usize << 20;
    let pattern: Vec<u8> = (0..size).map(|i| (i % 253) as u8 + 1).collect();
    std::fs::write(&img, &pattern).unwrap();
    let lo = match Loop::attach(&img) {
        Ok(l) => l,
        Err(why) => return skip(&format!("trims on a loop device: {why}")),
    };
    let dev = lo.dev.to_str().unwrap();
    let filename = format!("--filename={dev}");
    let job = [
        "--name=t",
        filename.as_str(),
        "--rw=trim",
        "--offset=4m",
        "--size=4m",
        "--bs=64k",
        "--ioengine=io_uring",
        "--iodepth=4",
        "--output-format=json",
    ];
    let out = ssdlab_fio(&job);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-destroy"), "{err}");
    assert_eq!(std::fs::read(&img).unwrap(), pattern, "nothing trimmed");

    let mut with = job.to_vec();
    with.push("--allow-destroy");
    let out = ssdlab_fio(&with);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["trim"]["total_ios"], 64, "{}", j["trim"]);
    assert_eq!(j["trim"]["io_bytes"], 4u64 << 20);
    assert_eq!(j["write"]["total_ios"], 0);
    assert!(j["trim"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    let after = std::fs::read(&img).unwrap();
    assert!(after[4 << 20..8 << 20].iter().all(|&b| b == 0), "trimmed");
    assert_eq!(&after[..4 << 20], &pattern[..4 << 20]);
    assert_eq!(&after[8 << 20..], &pattern[8 << 20..]);

    // fio on the same device: the same trims.
    let out = match Sys::new("fio").args(job).output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!("fio failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => return ssdlab_testkit::skip_without_fio(&format!("fio not runnable: {e}")),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    for k in ["total_ios", "io_bytes"] {
        assert_eq!(f["jobs"][0]["trim"][k], j["trim"][k], "{k}");
    }
}
