//! A fake point runner with a known answer: a deterministic function of the point.
#![allow(dead_code)]

use ssdlab_stats::{RunResult, TargetKind};
use ssdlab_sweep::{Point, PointTarget};
use ssdlab_workload::RwMode;

/// Gain of an array over one drive in the fake model: random I/O is best at a 64 KiB stripe,
/// sequential I/O at 16 KiB; each octave away costs 5 points; random gains grow with QD up to 4.
pub fn fake_gain(p: &Point) -> f64 {
    let Some(stripe) = p.stripe else { return 1.0 };
    let random = p.spec.random_pct > 0;
    let (best, scale) = if random {
        (65536.0, (p.qd as f64 / 4.0).min(1.0))
    } else {
        (16384.0, 1.0)
    };
    let octaves = (stripe as f64 / best).log2().abs();
    1.0 + 0.9 * scale * (p.drives as f64 - 1.0) - 0.05 * octaves
}

/// Single-drive IOPS in the fake model.
pub fn fake_single_iops(p: &Point) -> f64 {
    let base = if p.spec.random_pct > 0 {
        10_000.0
    } else {
        2_000.0
    };
    base * (p.qd as f64).sqrt()
}

/// Repeat r is off by ±0.5 %, so the mean of 2 repeats is exact.
pub fn fake_iops(p: &Point) -> f64 {
    let jitter = match p.repeat {
        0 => 0.995,
        1 => 1.005,
        _ => 1.0,
    };
    fake_single_iops(p) * fake_gain(p) * jitter
}

pub fn fake_result(p: &Point) -> RunResult {
    let iops = fake_iops(p);
    let mut r = RunResult {
        spec: p.spec.clone(),
        runtime_ns: p.spec.stop.time_ns.unwrap_or(0),
        ..Default::default()
    };
    r.target.kind = match (&p.target, p.drives) {
        (PointTarget::Sim { .. }, 1) => TargetKind::Sim,
        (PointTarget::Sim { .. }, _) => TargetKind::SimRaid0,
        (PointTarget::Real { .. }, 1) => TargetKind::File,
        (PointTarget::Real { .. }, _) => TargetKind::Raid0,
    };
    r.target.name = p.describe();
    let lat = p.qd as f64 / iops * 1e9;
    let op = if matches!(p.spec.rw, RwMode::Read | RwMode::Randread) {
        &mut r.read
    } else {
        &mut r.write
    };
    op.iops = iops;
    op.bw_bytes = iops * p.spec.bs as f64;
    op.ios = (iops * 10.0) as u64;
    op.lat.n = op.ios;
    op.lat.mean = lat;
    op.lat.percentiles = vec![(50.0, lat as u64), (99.0, (2.0 * lat) as u64)];
    r
}

pub fn fake_runner(p: &Point) -> Result<RunResult, ssdlab_sweep::PointError> {
    Ok(fake_result(p))
}

pub const SIM_STUDY: &str = r#"
name = "stripe-study"
time = "2s"
repeats = 2
qd = [1, 2, 4, 8, 16, 32]
workloads = ["4k-randread", "4k-randwrite", "128k-seqread", "128k-seqwrite"]

[[target]]
sim = "vertex450-128g"

[[target]]
sim = "vertex450-128g"
drives = 2
stripes = ["4k", "16k", "64k", "128k", "256k"]
"#;

/// True when the privileged tests (mounting a tmpfs) can run; as root they always must. Without
/// root they are skipped with a message, unless `SSDLAB_REQUIRE_PRIVILEGED_TESTS=1`.
pub fn privileged(test: &str) -> bool {
    ssdlab_testkit::privileged(&format!("{test} (mounts a small tmpfs)"))
}

/// A tmpfs mounted on a fresh temporary directory; unmounted when dropped.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

fn mount(args: &[&str], dir: &std::path::Path) {
    let out = std::process::Command::new("mount")
        .args(args)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
    assert!(
        out.status.success(),
        "mount {args:?} {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Tmpfs {
    pub fn new(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        mount(
            &["-t", "tmpfs", "-o", &format!("size={size}"), "ssdlab-test"],
            dir.path(),
        );
        Tmpfs { dir }
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    pub fn remount(&self, opts: &str) {
        mount(&["-o", &format!("remount,{opts}")], self.path());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = std::process::Command::new("umount")
            .arg(self.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(self.path())
                .status();
        }
    }
}
