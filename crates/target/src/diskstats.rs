//! The kernel's I/O statistics of the block devices under a run's targets (`/sys/block/DEV/stat`),
//! found the way fio's `disk_util` finds them: the device of a file's filesystem (or the block
//! device itself), the whole disk rather than a partition, and the members ("slaves") of an md or
//! dm device listed after it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One block device to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disk {
    /// Kernel name (`vda`, `nvme0n1`, `md0`, `dm-0`).
    pub name: String,
    /// Its sysfs directory.
    pub sysfs: PathBuf,
    /// Names of the devices under it (md/dm members).
    pub slaves: Vec<String>,
}

/// The counters of `/sys/block/DEV/stat` that fio reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

impl DiskCounters {
    /// Parses the first 11 fields of a `stat` file.
    pub fn parse(line: &str) -> Option<DiskCounters> {
        let v: Vec<u64> = line
            .split_whitespace()
            .take(11)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 11 {
            return None;
        }
        Some(DiskCounters {
            ios: [v[0], v[4]],
            merges: [v[1], v[5]],
            sectors: [v[2], v[6]],
            ticks: [v[3], v[7]],
            io_ticks: v[9],
            time_in_queue: v[10],
        })
    }

    /// What happened between `earlier` and `self` (counters that went backwards count 0).
    pub fn since(&self, earlier: &DiskCounters) -> DiskCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        DiskCounters {
            ios: [
                d(self.ios[0], earlier.ios[0]),
                d(self.ios[1], earlier.ios[1]),
            ],
            merges: [
                d(self.merges[0], earlier.merges[0]),
                d(self.merges[1], earlier.merges[1]),
            ],
            sectors: [
                d(self.sectors[0], earlier.sectors[0]),
                d(self.sectors[1], earlier.sectors[1]),
            ],
            ticks: [
                d(self.ticks[0], earlier.ticks[0]),
                d(self.ticks[1], earlier.ticks[1]),
            ],
            io_ticks: d(self.io_ticks, earlier.io_ticks),
            time_in_queue: d(self.time_in_queue, earlier.time_in_queue),
        }
    }
}

/// The devices under a set of paths, and the counters read when watching began.
#[derive(Debug, Clone)]
pub struct DiskWatch {
    disks: Vec<(Disk, Option<DiskCounters>)>,
    started: Instant,
}

/// What one device did while it was watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskDelta {
    pub disk: Disk,
    pub counters: DiskCounters,
    /// Milliseconds watched.
    pub msec: u64,
}

/// The sysfs directory of device `major:minor`, moved from a partition to its disk.
fn sysfs_dir(major: u32, minor: u32) -> Option<PathBuf> {
    let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let dir = std::fs::canonicalize(link).ok()?;
    // A partition has a `partition` file; its disk is the parent directory (fio checks for
    // ../queue, which only a whole disk has).
    if dir.join("partition").exists() {
        let parent = dir.parent()?.to_path_buf();
        if parent.join("queue").exists() {
            return Some(parent);
        }
    }
    Some(dir)
}

fn read_counters(dir: &Path) -> Option<DiskCounters> {
    DiskCounters::parse(&std::fs::read_to_string(dir.join("stat")).ok()?)
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl DiskWatch {
    /// Finds the devices under `paths` (files: the device of their filesystem; block devices:
    /// themselves) and reads their counters. Paths on filesystems without a block device
    /// (tmpfs, overlay) have none; nothing here fails.
    pub fn start(paths: &[&Path]) -> DiskWatch {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for p in paths {
            let Ok(m) = std::fs::metadata(p) else {
                continue;
            };
            let dev = if m.file_type().is_file() {
                m.dev()
            } else {
                use std::os::unix::fs::FileTypeExt;
                if !m.file_type().is_block_device() {
                    continue;
                }
                m.rdev()
            };
            let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
            if let Some(d) = sysfs_dir(major, minor) {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
        let mut disks: Vec<Disk> = Vec::new();
        for dir in dirs {
            let mut slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
                        .collect()
                })
                .unwrap_or_default();
            slaves.sort();
            let master = Disk {
                name: name_of(&dir),
                sysfs: dir.clone(),
                slaves: slaves.iter().map(|s| name_of(s)).collect(),
            };
            if !disks.iter().any(|d| d.sysfs == master.sysfs) {
                disks.push(master);
            }
            for s in slaves {
                if !disks.iter().any(|d| d.sysfs == s) {
                    disks.push(Disk {
                        name: name_of(&s),
                        sysfs: s,
                        slaves: Vec::new(),
                    });
                }
            }
        }
        DiskWatch {
            disks: disks
                .into_iter()
                .map(|d| {
                    let c = read_counters(&d.sysfs);
                    (d, c)
                })
                .collect(),
            started: Instant::now(),
        }
    }

    /// The devices found.
    pub fn disks(&self) -> impl Iterator<Item = &Disk> {
        self.disks.iter().map(|(d, _)| d)
    }

    /// What each device did since [`DiskWatch::start`] (devices whose counters cannot be read
    /// are left out).
    pub fn finish(&self) -> Vec<DiskDelta> {
        let msec = self.started.elapsed().as_millis() as u64;
        self.disks
            .iter()
            .filter_map(|(d, before)| {
                let before = before.as_ref()?;
                let now = read_counters(&d.sysfs)?;
                Some(DiskDelta {
                    disk: d.clone(),
                    counters: now.since(before),
                    msec,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_stat_line() {
        let line = "   28569        0   228552     2892        7        3      112        9        0     1640     2901        0        0        0        0       12        1\n";
        let c = DiskCounters::parse(line).unwrap();
        assert_eq!(c.ios, [28569, 7]);
        assert_eq!(c.merges, [0, 3]);
        assert_eq!(c.sectors, [228552, 112]);
        assert_eq!(c.ticks, [2892, 9]);
        assert_eq!(c.io_ticks, 1640);
        assert_eq!(c.time_in_queue, 2901);
        assert!(DiskCounters::parse("1 2 3").is_none());
        let later = DiskCounters {
            ios: [28600, 7],
            ..c
        };
        assert_eq!(later.since(&c).ios, [31, 0]);
        assert_eq!(c.since(&later).ios, [0, 0]);
    }

    #[test]
    fn the_device_under_a_file() {
        // The filesystem this test runs on: a real block device on most machines; a tmpfs or
        // overlay has none, and then nothing is found (never an error).
        let dir = std::env::temp_dir();
        let w = DiskWatch::start(&[dir.as_path()]);
        assert!(w.disks().count() == 0, "a directory is not a target");
        let f = tempfile_in(&dir);
        let w = DiskWatch::start(&[f.as_path()]);
        for d in w.disks() {
            assert!(d.sysfs.join("stat").exists(), "{d:?}");
            assert!(
                !d.sysfs.join("partition").exists(),
                "a whole disk, not a partition"
            );
        }
        let _ = std::fs::remove_file(&f);
        assert!(w.finish().len() <= w.disks().count());
    }

    fn tempfile_in(dir: &Path) -> PathBuf {
        let p = dir.join(format!("ssdlab-diskstats-{}", std::process::id()));
        std::fs::write(&p, b"x").unwrap();
        p
    }
}
