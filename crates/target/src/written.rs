//! The written-map of verifying runs: which 512-byte sectors of a target verifying write runs
//! have written, and the seed of the run that wrote each last. A later verifying read uses it to
//! tell "never written" from "written, and now zeroed, garbage or damaged" (see
//! `ssdlab_workload::verify::check_known`).
//!
//! - One map per target, keyed by the target's identity ([`target_key`]: device and inode (and
//!   birth time) of a file, device number, size and serial of a block device, the members and
//!   stripe of a stripe set), stored under the state directory ([`state_dir`]) as
//!   `verify/<key>.map`, or where `--verify-map FILE` says.
//! - Compact: one roaring bitmap of sector numbers per seed (runs of sectors compress to a few
//!   bytes; a fully written 8 GiB region takes about 2 MiB).
//! - Crash-safe: before a verifying write run starts, the region it may write is forgotten and
//!   the map saved ([`WrittenMap::forget`]), so a run killed half way leaves "unknown", never a
//!   wrong seed; at its end, what it wrote is recorded with its seed ([`WrittenMap::record`]).
//!   Writes that failed leave their sectors unknown. Saving is atomic (temporary file + rename).

use crate::probe::{PathKind, TargetInfo};
use roaring::RoaringTreemap;
use std::fmt;
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const SECTOR: u64 = 512;
const MAGIC: &[u8; 8] = b"SSDLWMAP";
const VERSION: u32 = 1;

/// Why a written-map could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("verify map {}: {err}", path.display())]
    Io { path: PathBuf, err: io::Error },
    #[error("verify map {}: {why}", path.display())]
    Format { path: PathBuf, why: String },
    #[error("verify map {}: belongs to another target ({found}), not to {expected}", path.display())]
    OtherTarget {
        path: PathBuf,
        found: String,
        expected: String,
    },
    #[error("no place for verify maps: set SSDLAB_STATE_DIR, XDG_STATE_HOME or HOME, or give --verify-map FILE")]
    NoStateDir,
    #[error("verify map {}: cannot be saved there: {why}; give --verify-map FILE or set SSDLAB_STATE_DIR", path.display())]
    Unwritable { path: PathBuf, why: String },
    #[error("{}: another ssdlab run is verifying an overlapping region; wait for that run to end (two verifying runs with their own seeds would each read the other's data as corruption)", path.display())]
    Busy { path: PathBuf },
}

/// The sectors one run wrote and the ones whose writes failed (left unknown).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteLog {
    written: RoaringTreemap,
    failed: RoaringTreemap,
}

fn sectors(offset: u64, len: u64) -> std::ops::Range<u64> {
    offset / SECTOR..(offset + len).div_ceil(SECTOR)
}

impl WriteLog {
    /// `len` bytes at `offset` were written.
    #[inline]
    pub fn wrote(&mut self, offset: u64, len: u64) {
        if len > 0 {
            self.written.insert_range(sectors(offset, len));
        }
    }

    /// A write of `len` bytes at `offset` failed: its sectors hold unknown data.
    pub fn failed(&mut self, offset: u64, len: u64) {
        if len > 0 {
            self.failed.insert_range(sectors(offset, len));
        }
    }

    /// Adds another worker's log.
    pub fn merge(&mut self, other: &WriteLog) {
        self.written |= &other.written;
        self.failed |= &other.failed;
    }

    /// Sectors written (and not failed later in this run).
    pub fn written_sectors(&self) -> u64 {
        (&self.written - &self.failed).len()
    }
}

/// The persisted written-map of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenMap {
    key: String,
    /// (seed, sectors last written by a run with that seed); sector sets are disjoint.
    runs: Vec<(u64, RoaringTreemap)>,
}

impl WrittenMap {
    /// An empty map for the target with identity `key`.
    pub fn new(key: &str) -> WrittenMap {
        WrittenMap {
            key: key.to_string(),
            runs: Vec::new(),
        }
    }

    /// The seed of the verifying run that last wrote the sector at byte `offset`, if known.
    #[inline]
    pub fn seed_of(&self, offset: u64) -> Option<u64> {
        let s = offset / SECTOR;
        self.runs
            .iter()
            .find(|(_, set)| set.contains(s))
            .map(|(seed, _)| *seed)
    }

    /// True when nothing is known.
    pub fn is_empty(&self) -> bool {
        self.runs.iter().all(|(_, s)| s.is_empty())
    }

    /// Sectors known to be written.
    pub fn known_sectors(&self) -> u64 {
        self.runs.iter().map(|(_, s)| s.len()).sum()
    }

    /// Forgets what is known about `len` bytes at `offset` (they may be overwritten).
    pub fn forget(&mut self, offset: u64, len: u64) {
        let r = sectors(offset, len);
        for (_, set) in &mut self.runs {
            set.remove_range(r.clone());
        }
        self.runs.retain(|(_, s)| !s.is_empty());
    }

    /// Gives back what `before` knew of `len` bytes at `offset` that a finished run neither
    /// wrote nor failed to write (its region was forgotten while it ran, as a crash guard, but
    /// the sectors it did not touch still hold what they held), where nothing newer is known.
    pub fn restore(&mut self, before: &WrittenMap, offset: u64, len: u64, log: &WriteLog) {
        let mut region = RoaringTreemap::new();
        region.insert_range(sectors(offset, len));
        let touched = &log.written | &log.failed;
        let mut known_now = RoaringTreemap::new();
        for (_, set) in &self.runs {
            known_now |= set;
        }
        for (seed, set) in &before.runs {
            let back = &(&(set & &region) - &touched) - &known_now;
            if back.is_empty() {
                continue;
            }
            match self.runs.iter_mut().find(|(s, _)| s == seed) {
                Some((_, mine)) => *mine |= &back,
                None => self.runs.push((*seed, back)),
            }
        }
    }

    /// Records a finished run with `seed`: what it wrote is now known as written by `seed`, what
    /// failed is unknown.
    pub fn record(&mut self, seed: u64, log: &WriteLog) {
        let wrote = &log.written - &log.failed;
        for (s, set) in &mut self.runs {
            *set -= &log.failed;
            if *s != seed {
                *set -= &wrote;
            }
        }
        match self.runs.iter_mut().find(|(s, _)| *s == seed) {
            Some((_, set)) => *set |= &wrote,
            None if !wrote.is_empty() => self.runs.push((seed, wrote)),
            None => {}
        }
        self.runs.retain(|(_, s)| !s.is_empty());
        for (_, set) in &mut self.runs {
            set.optimize();
        }
    }

    /// Loads the map at `path` under an exclusive lock (a `.lock` file next to it), applies `f`
    /// and saves it, so concurrent runs on one target merge their changes instead of the last
    /// save winning. Returns the map as saved.
    pub fn update(
        path: &Path,
        key: &str,
        f: impl FnOnce(&mut WrittenMap),
    ) -> Result<WrittenMap, MapError> {
        let io_err = |err| MapError::Io {
            path: path.to_path_buf(),
            err,
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let mut lock_name = path.file_name().unwrap_or_default().to_os_string();
        lock_name.push(".lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(lock_name))
            .map_err(io_err)?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| io_err(e.into()))?;
        let mut map = WrittenMap::load(path, key)?;
        f(&mut map);
        map.save(path)?;
        drop(lock);
        Ok(map)
    }

    /// Reads the map at `path` for the target `key`; a missing file is an empty map.
    pub fn load(path: &Path, key: &str) -> Result<WrittenMap, MapError> {
        let io_err = |err| MapError::Io {
            path: path.to_path_buf(),
            err,
        };
        let bad = |why: &str| MapError::Format {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(WrittenMap::new(key)),
            Err(e) => return Err(io_err(e)),
        };
        let mut r = io::BufReader::new(file);
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic).map_err(|_| bad("too short"))?;
        if &magic != MAGIC {
            return Err(bad("not an ssdlab verify map"));
        }
        let version = read_u32(&mut r).map_err(|_| bad("truncated"))?;
        if version != VERSION {
            return Err(bad(&format!(
                "format version {version}, this ssdlab reads {VERSION}"
            )));
        }
        let klen = read_u32(&mut r).map_err(|_| bad("truncated"))? as usize;
        if klen > 4096 {
            return Err(bad("target key too long"));
        }
        let mut kb = vec![0u8; klen];
        r.read_exact(&mut kb).map_err(|_| bad("truncated"))?;
        let found = String::from_utf8(kb).map_err(|_| bad("target key is not UTF-8"))?;
        if found != key {
            return Err(MapError::OtherTarget {
                path: path.to_path_buf(),
                found,
                expected: key.to_string(),
            });
        }
        let n = read_u32(&mut r).map_err(|_| bad("truncated"))?;
        if n > 1 << 20 {
            return Err(bad("too many runs"));
        }
        let mut runs = Vec::new();
        for _ in 0..n {
            let mut sb = [0u8; 8];
            r.read_exact(&mut sb).map_err(|_| bad("truncated"))?;
            let set = RoaringTreemap::deserialize_from(&mut r).map_err(|e| bad(&e.to_string()))?;
            runs.push((u64::from_le_bytes(sb), set));
        }
        Ok(WrittenMap {
            key: key.to_string(),
            runs,
        })
    }

    /// Writes the map to `path` atomically (a temporary file next to it, then rename), creating
    /// its directory; a symbolic link at `path` is written through.
    pub fn save(&self, path: &Path) -> Result<(), MapError> {
        let io_err = |err| MapError::Io {
            path: path.to_path_buf(),
            err,
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let dest =
            crate::identity::resolve_output("verify map", path).map_err(|e| MapError::Io {
                path: path.to_path_buf(),
                err: io::Error::other(e.to_string()),
            })?;
        let mut out = crate::outfile::AtomicFile::create(&dest).map_err(io_err)?;
        {
            let mut w = io::BufWriter::new(out.file());
            w.write_all(MAGIC).map_err(io_err)?;
            w.write_all(&VERSION.to_le_bytes()).map_err(io_err)?;
            w.write_all(&(self.key.len() as u32).to_le_bytes())
                .map_err(io_err)?;
            w.write_all(self.key.as_bytes()).map_err(io_err)?;
            w.write_all(&(self.runs.len() as u32).to_le_bytes())
                .map_err(io_err)?;
            for (seed, set) in &self.runs {
                w.write_all(&seed.to_le_bytes()).map_err(io_err)?;
                set.serialize_into(&mut w).map_err(io_err)?;
            }
            w.flush().map_err(io_err)?;
        }
        out.commit().map_err(io_err)?;
        Ok(())
    }
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Where ssdlab keeps state between runs: `$SSDLAB_STATE_DIR`, else `$XDG_STATE_HOME/ssdlab`,
/// else `$HOME/.local/state/ssdlab`.
pub fn state_dir() -> Result<PathBuf, MapError> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("SSDLAB_STATE_DIR") {
        return Ok(d);
    }
    if let Some(d) = var("XDG_STATE_HOME") {
        return Ok(d.join("ssdlab"));
    }
    var("HOME")
        .map(|h| h.join(".local/state/ssdlab"))
        .ok_or(MapError::NoStateDir)
}

/// True when `path` (resolved) lies in the default verify-map directory, where no other output
/// may go.
pub fn is_in_map_dir(path: &Path) -> bool {
    let Ok(dir) = state_dir().map(|d| d.join("verify")) else {
        return false;
    };
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::canonicalize(parent).is_ok_and(|p| p == dir)
}

/// Checks, before a verifying write run starts, that its map can be saved at `path`: the nearest
/// existing directory on the way must be writable and not on a read-only filesystem.
pub fn check_map_location(path: &Path) -> Result<(), MapError> {
    let mut dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
            _ => {
                dir = PathBuf::from(".");
                break;
            }
        }
    }
    let bad = |why: String| MapError::Unwritable {
        path: path.to_path_buf(),
        why,
    };
    if !dir.is_dir() {
        return Err(bad(format!("{} is not a directory", dir.display())));
    }
    if let Ok(st) = rustix::fs::statvfs(&dir) {
        if st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) {
            return Err(bad(format!(
                "{} is on a read-only filesystem",
                dir.display()
            )));
        }
    }
    rustix::fs::access(
        &dir,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )
    .map_err(|e| bad(format!("cannot write in {}: {e}", dir.display())))?;
    if path.exists() {
        crate::identity::resolve_output("verify map", path).map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

/// The default place of the map of the target with identity `key`.
pub fn default_map_path(key: &str) -> Result<PathBuf, MapError> {
    Ok(state_dir()?
        .join("verify")
        .join(format!("{:016x}.map", fnv1a64(key.as_bytes()))))
}

fn fnv1a64(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// What identifies one file or device across runs (not its path: a renamed file is the same, a
/// new file at the same path is not).
fn path_key(info: &TargetInfo) -> io::Result<String> {
    let m = std::fs::metadata(&info.path)?;
    Ok(match info.kind {
        PathKind::File => {
            let born = rustix::fs::statx(
                rustix::fs::CWD,
                &info.path,
                rustix::fs::AtFlags::empty(),
                rustix::fs::StatxFlags::BTIME,
            )
            .ok()
            .filter(|s| s.stx_mask & rustix::fs::StatxFlags::BTIME.bits() != 0)
            .map(|s| format!("{}.{}", s.stx_btime.tv_sec, s.stx_btime.tv_nsec))
            .unwrap_or_else(|| "-".into());
            format!("file:{}:{}:{born}", m.dev(), m.ino())
        }
        PathKind::BlockDevice => {
            let rdev = m.rdev();
            let (maj, min) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
            let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
            let serial = ["device/wwid", "wwid", "device/serial", "loop/backing_file"]
                .iter()
                .find_map(|f| std::fs::read_to_string(sys.join(f)).ok())
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            format!("block:{maj}:{min}:{}:{serial}", info.size)
        }
        // holds nothing written (verification of one is refused before it runs)
        PathKind::CharDevice => {
            let rdev = m.rdev();
            format!(
                "char:{}:{}",
                rustix::fs::major(rdev),
                rustix::fs::minor(rdev)
            )
        }
    })
}

/// Holds the region of a verifying run: an advisory byte-range lock (an open-file-description
/// lock, `F_OFD_SETLK`) on `region` (offset, length) of a single file, or on the whole of each
/// member of a stripe set (`region` `None`), for as long as the returned files live: a write lock
/// for a run that writes, a read lock for one that only reads. Another verifying run whose region
/// overlaps is refused ([`MapError::Busy`]) instead of reading the first one's data back as
/// corruption; verifying runs on disjoint regions run side by side. Block devices are opened
/// `O_EXCL` by every run already; this covers regular files.
pub fn hold_for_verify(
    infos: &[TargetInfo],
    region: Option<(u64, u64)>,
    writes: bool,
) -> Result<Vec<std::fs::File>, MapError> {
    let mut held = Vec::with_capacity(infos.len());
    for i in infos {
        if i.kind != PathKind::File {
            continue;
        }
        let io_err = |err| MapError::Io {
            path: i.path.clone(),
            err,
        };
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(writes)
            .open(&i.path)
            .map_err(io_err)?;
        let (start, len) = region.unwrap_or((0, 0));
        // SAFETY: an all-zero flock is a valid value; the fields are set below.
        let mut lk: libc::flock = unsafe { std::mem::zeroed() };
        lk.l_type = if writes { libc::F_WRLCK } else { libc::F_RDLCK } as libc::c_short;
        lk.l_whence = libc::SEEK_SET as libc::c_short;
        lk.l_start = start.min(i64::MAX as u64) as libc::off_t;
        lk.l_len = len.min(i64::MAX as u64) as libc::off_t; // 0: to the end, however long
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor and a pointer to an initialised flock.
        if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &lk) } != 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EACCES) => Err(MapError::Busy {
                    path: i.path.clone(),
                }),
                _ => Err(io_err(e)),
            };
        }
        held.push(f);
    }
    Ok(held)
}

/// The identity of a run's target: one file or device, or a stripe set (its members in order and
/// its stripe size).
pub fn target_key(infos: &[TargetInfo], stripe: Option<u64>) -> io::Result<String> {
    let parts: Vec<String> = infos.iter().map(path_key).collect::<io::Result<_>>()?;
    Ok(match stripe {
        Some(s) => format!("raid0:{s}:{}", parts.join(",")),
        None => parts.join(","),
    })
}

impl fmt::Display for WrittenMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} sectors known from {} seed(s)",
            self.known_sectors(),
            self.runs.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_forget_and_roundtrip() {
        let mut m = WrittenMap::new("file:1:2:-");
        let mut a = WriteLog::default();
        a.wrote(0, 8192);
        m.record(7, &a);
        assert_eq!(m.seed_of(0), Some(7));
        assert_eq!(m.seed_of(8191), Some(7));
        assert_eq!(m.seed_of(8192), None);
        // A later run with another seed overwrites half; a failed write makes a sector unknown.
        let mut b = WriteLog::default();
        b.wrote(4096, 4096);
        b.failed(0, 512);
        m.record(9, &b);
        assert_eq!(m.seed_of(0), None);
        assert_eq!(m.seed_of(512), Some(7));
        assert_eq!(m.seed_of(4096), Some(9));
        assert_eq!(m.known_sectors(), 15);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("v/x.map");
        m.save(&p).unwrap();
        let back = WrittenMap::load(&p, "file:1:2:-").unwrap();
        assert_eq!(back, m);
        assert!(matches!(
            WrittenMap::load(&p, "file:1:3:-"),
            Err(MapError::OtherTarget { .. })
        ));
        // Forgetting a region (the crash guard before a write run).
        m.forget(0, 4096);
        assert_eq!(m.seed_of(512), None);
        assert_eq!(m.seed_of(4096), Some(9));
        // Missing file: empty map; garbage: a clear error.
        assert!(WrittenMap::load(&d.path().join("none"), "k")
            .unwrap()
            .is_empty());
        std::fs::write(d.path().join("bad"), b"garbage").unwrap();
        assert!(matches!(
            WrittenMap::load(&d.path().join("bad"), "k"),
            Err(MapError::Format { .. })
        ));
    }

    /// A run forgets its region while it runs (crash guard); at its end the sectors it did
    /// not touch get back what was known of them (issue 25: a second verifying run with
    /// another seed used to leave the map knowing only its own 296 sectors of 8192).
    #[test]
    fn a_finished_run_gives_back_what_it_did_not_touch() {
        let mut before = WrittenMap::new("k");
        let mut a = WriteLog::default();
        a.wrote(0, 8 * 512);
        before.record(1, &a);
        let mut m = before.clone();
        m.forget(0, 8 * 512);
        let mut b = WriteLog::default();
        b.wrote(512, 512);
        b.failed(1024, 512);
        m.restore(&before, 0, 8 * 512, &b);
        m.record(2, &b);
        assert_eq!(m.seed_of(0), Some(1), "untouched: as before");
        assert_eq!(m.seed_of(512), Some(2), "written by the run");
        assert_eq!(m.seed_of(1024), None, "failed: unknown");
        assert_eq!(m.seed_of(7 * 512), Some(1));
        assert_eq!(m.known_sectors(), 7);
        // Outside the run's region nothing is given back that was forgotten there.
        let mut n = before.clone();
        n.forget(0, 8 * 512);
        n.restore(&before, 0, 4 * 512, &WriteLog::default());
        assert_eq!(n.seed_of(3 * 512), Some(1));
        assert_eq!(n.seed_of(4 * 512), None);
    }

    #[test]
    fn dense_random_writes_stay_compact() {
        let mut log = WriteLog::default();
        let mut x = 1u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            log.wrote((x % (1 << 21)) * 4096, 4096); // 8 GiB span
        }
        let mut m = WrittenMap::new("k");
        m.record(1, &log);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m");
        m.save(&p).unwrap();
        let size = std::fs::metadata(&p).unwrap().len();
        assert!(size < 3 << 20, "{size} bytes");
    }
}
