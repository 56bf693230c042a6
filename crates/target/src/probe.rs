//! Probing a target path: what it is (regular file, block device, `/dev/null` or `/dev/zero`, or
//! a file to create), its size, logical block size and direct-I/O alignment. Probing has no side
//! effects.

use crate::error::{DeviceError, Refusal};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Statx, StatxFlags, CWD};
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What kind of thing a target path names (as the filesystem sees it; a result reports its
/// target as `ssdlab_stats::TargetKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A regular file (or a path where one may be created).
    File,
    /// A block device node.
    BlockDevice,
    /// `/dev/null` or `/dev/zero` (Linux's memory character devices 1:3 and 1:5, which fio's
    /// examples read and write as files): no size and no data kept; writes are discarded, a
    /// read of `/dev/zero` gives zeros and one of `/dev/null` ends at once with nothing.
    /// Other character devices are refused.
    CharDevice,
}

impl PathKind {
    /// The kind in words ("regular file", "block device", "character device").
    pub fn name(self) -> &'static str {
        match self {
            PathKind::File => "regular file",
            PathKind::BlockDevice => "block device",
            PathKind::CharDevice => "character device",
        }
    }
}

/// What [`probe`] found out about a target path. Probing has no side effects.
#[derive(Debug, Clone)]
pub struct TargetInfo {
    /// The path as given (symlinks are followed for the checks, but the path is kept as given).
    pub path: PathBuf,
    /// Regular file or block device.
    pub kind: PathKind,
    /// `false` only for a regular file that does not exist yet (its parent directory does).
    pub exists: bool,
    /// File length (0 if missing) or device size in bytes (`BLKGETSIZE64`).
    pub size: u64,
    /// Device: `BLKSSZGET`. File: 512, or the direct-I/O offset alignment when that is larger.
    pub logical_block_size: u64,
    /// Required alignment of user buffers for `O_DIRECT` (`statx` `stx_dio_mem_align`; fallback: the
    /// logical block size). **0 means `O_DIRECT` is not supported** for this file.
    pub dio_mem_align: u64,
    /// Required alignment of file offsets and lengths for `O_DIRECT` (`statx`
    /// `stx_dio_offset_align`; fallback: the logical block size). **0 means `O_DIRECT` is not
    /// supported** for this file (see [`TargetInfo::direct_io_supported`]).
    pub dio_offset_align: u64,
    /// Block devices only, best effort: `queue/rotational` from sysfs.
    pub rotational: Option<bool>,
    /// Block devices only, best effort: `device/model` from sysfs (trimmed).
    pub model: Option<String>,
    /// Block devices only, best effort: `device/firmware_rev` (NVMe, ATA) or `device/rev`
    /// (SCSI) from sysfs (trimmed).
    pub firmware: Option<String>,
    /// What was checked, to recognise it when it is opened: the file (device, inode), or the
    /// block device (its device number). `None` for a file that does not exist yet.
    pub id: Option<FileId>,
}

/// The identity of a probed file or block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileId {
    /// A regular file: the device it is on, its inode and (where the filesystem keeps it) its
    /// birth time, so that a new file given a freed inode number is not taken for it.
    File {
        dev: (u32, u32),
        ino: u64,
        born: Option<(i64, u32)>,
    },
    /// A block device: its device number (any node for it is the same device).
    Block { rdev: (u32, u32) },
    /// A character device: its device number.
    Char { rdev: (u32, u32) },
}

impl FileId {
    pub(crate) fn of(stx: &Statx) -> Option<FileId> {
        match file_type_of(stx) {
            FileType::RegularFile => Some(FileId::File {
                dev: (stx.stx_dev_major, stx.stx_dev_minor),
                ino: stx.stx_ino,
                born: (stx.stx_mask & rustix::fs::StatxFlags::BTIME.bits() != 0)
                    .then_some((stx.stx_btime.tv_sec, stx.stx_btime.tv_nsec)),
            }),
            FileType::BlockDevice => Some(FileId::Block {
                rdev: (stx.stx_rdev_major, stx.stx_rdev_minor),
            }),
            FileType::CharacterDevice => Some(FileId::Char {
                rdev: (stx.stx_rdev_major, stx.stx_rdev_minor),
            }),
            _ => None,
        }
    }
}

impl TargetInfo {
    /// `false` when `statx` said this file cannot be opened with `O_DIRECT`.
    pub fn direct_io_supported(&self) -> bool {
        self.dio_offset_align != 0 && self.dio_mem_align != 0
    }
}

// ---------------------------------------------------------------------------------------------
// Probing
// ---------------------------------------------------------------------------------------------

pub(crate) const FALLBACK_BLOCK: u64 = 512;

pub(crate) fn file_type_of(stx: &Statx) -> FileType {
    FileType::from_raw_mode(stx.stx_mode.into())
}

pub(crate) fn type_name(ft: FileType) -> &'static str {
    match ft {
        FileType::RegularFile => "regular file",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "named pipe",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        _ => "unknown file type",
    }
}

/// The error for a path whose type is neither a regular file nor a block device.
pub(crate) fn wrong_type(path: &Path, ft: FileType) -> DeviceError {
    match ft {
        FileType::Directory => DeviceError::IsDirectory {
            path: path.to_path_buf(),
        },
        other => DeviceError::NotRegularOrBlock {
            path: path.to_path_buf(),
            kind: type_name(other),
        },
    }
}

/// What the probes ask `statx` for: the type, mode and size, the direct-I/O alignments, and the
/// inode and birth time that identify a file ([`FileId`]).
const STATX_WANTED: StatxFlags = StatxFlags::TYPE
    .union(StatxFlags::MODE)
    .union(StatxFlags::SIZE)
    .union(StatxFlags::DIOALIGN)
    .union(StatxFlags::INO)
    .union(StatxFlags::BTIME);

pub(crate) fn statx_path(path: &Path, follow: bool) -> Result<Statx, Errno> {
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    rustix::fs::statx(CWD, path, flags, STATX_WANTED)
}

pub(crate) fn statx_fd(fd: impl AsFd) -> Result<Statx, Errno> {
    rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, STATX_WANTED)
}

/// Direct-I/O alignments from `statx`: `Some((mem, offset))` when the kernel reported them
/// (`(0, 0)` means "not supported"), `None` when it did not say.
fn dio_align(stx: &Statx) -> Option<(u64, u64)> {
    if stx.stx_mask & StatxFlags::DIOALIGN.bits() != 0 {
        Some((
            stx.stx_dio_mem_align.into(),
            stx.stx_dio_offset_align.into(),
        ))
    } else {
        None
    }
}

/// `true` when `path` (following symlinks) is a block device.
pub fn is_block_device(path: impl AsRef<Path>) -> bool {
    statx_path(path.as_ref(), true)
        .map(|s| file_type_of(&s) == FileType::BlockDevice)
        .unwrap_or(false)
}

/// Finds out what `path` is, without side effects.
///
/// - A regular file: its size and `statx` direct-I/O alignments.
/// - A missing path: `exists == false`, `size == 0`, after checking that its parent is an existing
///   directory (and that the path is not a dangling symlink).
/// - A block device: opened read-only (non-blocking) for `BLKGETSIZE64` / `BLKSSZGET`, plus sysfs
///   facts (rotational, model), best effort.
/// - Anything else (directory, character device, FIFO, socket): an error naming the type.
///
/// Symlinks are followed for the type check.
pub fn probe(path: &Path) -> Result<TargetInfo, DeviceError> {
    if path.as_os_str().is_empty() {
        return Err(DeviceError::EmptyPath);
    }
    let stx = match statx_path(path, true) {
        Ok(stx) => stx,
        Err(e) if e == Errno::NOENT || e == Errno::NOTDIR => return probe_missing(path, e),
        Err(e) => return Err(DeviceError::io(path, "cannot inspect", e)),
    };
    match file_type_of(&stx) {
        FileType::RegularFile => {
            check_not_pseudo(path, path)?;
            let (mem, off) = dio_align(&stx).unwrap_or((FALLBACK_BLOCK, FALLBACK_BLOCK));
            Ok(TargetInfo {
                path: path.to_path_buf(),
                kind: PathKind::File,
                exists: true,
                size: stx.stx_size,
                logical_block_size: off.max(FALLBACK_BLOCK),
                dio_mem_align: mem,
                dio_offset_align: off,
                rotational: None,
                model: None,
                firmware: None,
                id: FileId::of(&stx),
            })
        }
        FileType::BlockDevice => probe_block(path),
        FileType::CharacterDevice if is_null_or_zero(&stx) => Ok(TargetInfo {
            path: path.to_path_buf(),
            kind: PathKind::CharDevice,
            exists: true,
            size: 0,
            logical_block_size: FALLBACK_BLOCK,
            // O_DIRECT opens of them fail (EINVAL), as fio's direct=1 finds
            dio_mem_align: 0,
            dio_offset_align: 0,
            rotational: None,
            model: None,
            firmware: None,
            id: FileId::of(&stx),
        }),
        other => Err(wrong_type(path, other)),
    }
}

/// `/dev/null` (1:3) or `/dev/zero` (1:5), whatever the node is called.
fn is_null_or_zero(stx: &Statx) -> bool {
    file_type_of(stx) == FileType::CharacterDevice
        && stx.stx_rdev_major == 1
        && matches!(stx.stx_rdev_minor, 3 | 5)
}

/// Kernel pseudo-filesystems whose "regular files" are control knobs, not storage (writing random
/// data to `/proc/sysrq-trigger` or an efivarfs file would be a disaster).
const PSEUDO_FILESYSTEMS: &[(u64, &str)] = &[
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x0027_e0eb, "cgroupfs"),
    (0x6367_7270, "cgroup2fs"),
    (0xcafe_4a11, "bpffs"),
    (0x6265_6570, "configfs"),
    (0xde5e_81e4, "efivarfs"),
    (0x6165_676c, "pstore"),
    (0x6573_5543, "fusectl"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x6e73_6673, "nsfs"),
];

/// Refuses paths on kernel pseudo-filesystems; `on` is the existing path to `statfs`.
pub(crate) fn check_not_pseudo(path: &Path, on: &Path) -> Result<(), DeviceError> {
    let Ok(st) = rustix::fs::statfs(on) else {
        return Ok(()); // best effort: the open/stat that follows reports real problems
    };
    #[allow(clippy::unnecessary_cast)] // f_type is i64, u32 or u64 depending on the target
    let magic = (st.f_type as u64) & 0xffff_ffff;
    match PSEUDO_FILESYSTEMS.iter().find(|(m, _)| *m == magic) {
        Some((_, fs)) => Err(DeviceError::PseudoFilesystem {
            path: path.to_path_buf(),
            fs,
        }),
        None => Ok(()),
    }
}

/// The directories missing on the way to `path` (outermost first) and the nearest directory
/// above them that exists, when `path`'s parent does not exist: what fio's `create_work_dirs`
/// makes (mode 0700) before it creates a job's file. `None` when the parent exists, or when
/// something other than a directory is in the way.
pub fn missing_dirs(path: &Path) -> Option<(Vec<PathBuf>, PathBuf)> {
    let mut missing = Vec::new();
    let mut dir = parent_of(path);
    loop {
        match statx_path(&dir, true) {
            Ok(stx) if file_type_of(&stx) == FileType::Directory => break,
            Ok(_) => return None,
            Err(Errno::NOENT) => {}
            Err(_) => return None,
        }
        missing.push(dir.clone());
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
            // a relative path whose first component is missing: the current directory
            _ => {
                dir = PathBuf::from(".");
                break;
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    missing.reverse();
    Some((missing, dir))
}

/// [`probe`], where a missing file's missing directories are made before it is (fio's
/// `create_work_dirs`): a file whose parent does not exist is probed as a new file in the
/// nearest existing directory above it.
pub fn probe_creating_dirs(path: &Path) -> Result<TargetInfo, DeviceError> {
    match probe(path) {
        Err(DeviceError::ParentMissing { .. }) => {
            let Some((_, existing)) = missing_dirs(path) else {
                return probe(path);
            };
            // probe a name in the existing directory, then give the path back
            let mut info = probe(&existing.join(".ssdlab-probe-missing-dir"))?;
            info.path = path.to_path_buf();
            info.kind = PathKind::File;
            info.exists = false;
            info.size = 0;
            info.id = None;
            Ok(info)
        }
        r => r,
    }
}

pub(crate) fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn probe_missing(path: &Path, err: Errno) -> Result<TargetInfo, DeviceError> {
    let parent = parent_of(path);
    match statx_path(&parent, true) {
        Ok(p) if file_type_of(&p) == FileType::Directory => {
            if err == Errno::NOTDIR {
                // The parent is a directory, so the last component cannot be the culprit of
                // ENOTDIR (e.g. "dir/file/" with a trailing slash on a file).
                return Err(DeviceError::io(path, "cannot inspect", err));
            }
            if statx_path(path, false).is_ok() {
                return Err(DeviceError::DanglingSymlink {
                    path: path.to_path_buf(),
                });
            }
            check_not_pseudo(path, &parent)?;
            let (mem, off) = new_file_dio_align(&parent, &p);
            Ok(TargetInfo {
                path: path.to_path_buf(),
                kind: PathKind::File,
                exists: false,
                size: 0,
                logical_block_size: off.max(FALLBACK_BLOCK),
                dio_mem_align: mem,
                dio_offset_align: off,
                rotational: None,
                model: None,
                firmware: None,
                id: None,
            })
        }
        Ok(_) => Err(DeviceError::ParentNotDirectory {
            path: path.to_path_buf(),
            parent,
        }),
        Err(Errno::NOENT) => Err(DeviceError::ParentMissing {
            path: path.to_path_buf(),
            parent,
        }),
        Err(Errno::NOTDIR) => Err(DeviceError::ParentNotDirectory {
            path: path.to_path_buf(),
            parent,
        }),
        Err(e) => Err(DeviceError::io(path, "cannot inspect parent directory", e)),
    }
}

/// The direct-I/O alignments `(memory, offset)` a new file in the directory `parent` will have,
/// without creating anything visible: an unnamed `O_TMPFILE` in that directory is asked with
/// `statx` (it disappears when closed). Where the filesystem has no `O_TMPFILE`, the logical
/// block size of the device under the directory stands in (512 when unknown). `(0, 0)` means the
/// filesystem does not support `O_DIRECT`.
fn new_file_dio_align(parent: &Path, parent_stx: &Statx) -> (u64, u64) {
    let tmp = rustix::fs::open(
        parent,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    );
    if let Ok(fd) = tmp {
        if let Some(a) = statx_fd(&fd).ok().as_ref().and_then(dio_align) {
            return a;
        }
    }
    let lbs = read_trimmed(
        &sysfs_dir(parent_stx.stx_dev_major, parent_stx.stx_dev_minor)
            .join("queue/logical_block_size"),
    )
    .or_else(|| {
        // A partition: the queue belongs to its disk.
        let real = std::fs::canonicalize(sysfs_dir(
            parent_stx.stx_dev_major,
            parent_stx.stx_dev_minor,
        ))
        .ok()?;
        read_trimmed(&real.parent()?.join("queue/logical_block_size"))
    })
    .and_then(|s| s.parse::<u64>().ok())
    .filter(|&v| v.is_power_of_two())
    .unwrap_or(FALLBACK_BLOCK);
    (lbs, lbs)
}

fn probe_block(path: &Path) -> Result<TargetInfo, DeviceError> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| DeviceError::io(path, "cannot open", e))?;
    let stx = statx_fd(&fd).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    if file_type_of(&stx) != FileType::BlockDevice {
        return Err(wrong_type(path, file_type_of(&stx)));
    }
    let size = match ssdlab_io::blockdev::size_bytes(&fd) {
        Ok(s) => s,
        Err(_) => rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0))
            .map_err(|e| DeviceError::io(path, "cannot read device size", e))?,
    };
    let lbs = rustix::fs::ioctl_blksszget(&fd)
        .map(u64::from)
        .unwrap_or(FALLBACK_BLOCK);
    let (mem, off) = match dio_align(&stx) {
        Some((m, o)) if m != 0 && o != 0 => (m, o),
        _ => (lbs, lbs),
    };
    let sys = sysfs_dir(stx.stx_rdev_major, stx.stx_rdev_minor);
    let (rotational, model, firmware) = sysfs_facts(&sys);
    Ok(TargetInfo {
        path: path.to_path_buf(),
        kind: PathKind::BlockDevice,
        exists: true,
        size,
        logical_block_size: lbs,
        dio_mem_align: mem,
        dio_offset_align: off,
        rotational,
        model,
        firmware,
        id: FileId::of(&stx),
    })
}

pub(crate) fn sysfs_dir(major: u32, minor: u32) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{major}:{minor}"))
}

pub(crate) fn read_trimmed(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Rotational flag, model and firmware revision of the disk behind `sys` (a partition looks at
/// its parent disk).
pub(crate) fn sysfs_facts(sys: &Path) -> (Option<bool>, Option<String>, Option<String>) {
    let Ok(real) = std::fs::canonicalize(sys) else {
        return (None, None, None);
    };
    let disk = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real)
    } else {
        real
    };
    let rotational = read_trimmed(&disk.join("queue/rotational")).map(|s| s != "0");
    let model = read_trimmed(&disk.join("device/model"));
    let firmware = read_trimmed(&disk.join("device/firmware_rev"))
        .or_else(|| read_trimmed(&disk.join("device/rev")));
    (rotational, model, firmware)
}

pub(crate) fn open_existing_regular(path: &Path, flags: OFlags) -> Result<OwnedFd, DeviceError> {
    // Refuse non-regular files before opening them at all (opening some devices has effects).
    let stx = statx_path(path, true).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    if file_type_of(&stx) != FileType::RegularFile {
        return Err(match file_type_of(&stx) {
            FileType::BlockDevice => DeviceError::NotRegularFile {
                path: path.to_path_buf(),
                kind: "block device",
            },
            other => wrong_type(path, other),
        });
    }
    rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
        Errno::ISDIR => DeviceError::IsDirectory {
            path: path.to_path_buf(),
        },
        e => DeviceError::io(path, "cannot open", e),
    })
}

/// How long an `O_EXCL` open of a block device retries `EBUSY`.
///
/// The kernel drops the exclusive claim of a block device at the last `fput` of its file, and
/// when an io_uring ring had the file (in flight or registered) that happens in the ring's
/// teardown work after `close` returns. Without a grace period, the run after a run on the same
/// device (the next sweep point) would find its own previous claim and refuse.
const EXCLUSIVE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// `open(path, flags)` with `O_EXCL` in `flags`, retrying `EBUSY` for [`EXCLUSIVE_GRACE`].
pub(crate) fn open_exclusive(path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match rustix::fs::open(path, flags, Mode::empty()) {
            Err(Errno::BUSY) if start.elapsed() < EXCLUSIVE_GRACE => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(100));
            }
            r => return r,
        }
    }
}

/// Opens a probed target for I/O.
///
/// `O_RDONLY` or `O_RDWR` (never `O_CREAT`/`O_TRUNC`), `O_CLOEXEC`, `O_DIRECT` when `direct`
/// (`EINVAL` → [`DeviceError::DirectUnsupported`]), and for a block device opened for writing
/// also `O_EXCL`, so nobody can mount it while we hold it (`EBUSY` → refused as in use). The
/// opened object must still be of `info.kind`. The returned file is in blocking mode.
pub fn open_target(info: &TargetInfo, write: bool, direct: bool) -> Result<File, DeviceError> {
    open_target_with(info, write, direct, true)
}

/// Like [`open_target`], without `O_EXCL` for a block device: for a second descriptor with
/// another direct-I/O setting while the first, exclusive one is held by the same run.
pub fn open_target_shared(
    info: &TargetInfo,
    write: bool,
    direct: bool,
) -> Result<File, DeviceError> {
    open_target_with(info, write, direct, false)
}

fn open_target_with(
    info: &TargetInfo,
    write: bool,
    direct: bool,
    exclusive: bool,
) -> Result<File, DeviceError> {
    let path = info.path.as_path();
    if direct && info.exists && !info.direct_io_supported() {
        return Err(DeviceError::DirectUnsupported {
            path: path.to_path_buf(),
        });
    }
    // Look before opening: opening a FIFO or some character devices has effects.
    match statx_path(path, true) {
        Ok(stx) => {
            let ft = file_type_of(&stx);
            let want = match info.kind {
                PathKind::File => FileType::RegularFile,
                PathKind::BlockDevice => FileType::BlockDevice,
                PathKind::CharDevice if is_null_or_zero(&stx) => FileType::CharacterDevice,
                // another character device is never opened
                PathKind::CharDevice => return Err(wrong_type(path, file_type_of(&stx))),
            };
            if ft == FileType::RegularFile {
                check_not_pseudo(path, path)?;
            }
            if ft != want {
                let target = matches!(ft, FileType::RegularFile | FileType::BlockDevice)
                    || is_null_or_zero(&stx);
                return Err(match ft {
                    _ if target => DeviceError::Changed {
                        path: path.to_path_buf(),
                        now: type_name(ft),
                    },
                    other => wrong_type(path, other),
                });
            }
        }
        Err(Errno::NOENT) => {
            return Err(DeviceError::NotFound {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(DeviceError::io(path, "cannot inspect", e)),
    }

    let mut flags = OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    flags |= if write { OFlags::RDWR } else { OFlags::RDONLY };
    if direct {
        flags |= OFlags::DIRECT;
    }
    if exclusive && write && info.kind == PathKind::BlockDevice {
        flags |= OFlags::EXCL;
    }
    let fd = if flags.contains(OFlags::EXCL) {
        open_exclusive(path, flags)
    } else {
        rustix::fs::open(path, flags, Mode::empty())
    }
    .map_err(|e| match e {
        Errno::INVAL if direct => DeviceError::DirectUnsupported {
            path: path.to_path_buf(),
        },
        Errno::BUSY if exclusive && write && info.kind == PathKind::BlockDevice => {
            DeviceError::Refused {
                path: path.to_path_buf(),
                reason: Refusal::Exclusive,
            }
        }
        Errno::NOENT => DeviceError::NotFound {
            path: path.to_path_buf(),
        },
        Errno::ISDIR => DeviceError::IsDirectory {
            path: path.to_path_buf(),
        },
        e => DeviceError::io(
            path,
            if write {
                "cannot open for writing"
            } else {
                "cannot open for reading"
            },
            e,
        ),
    })?;
    // Re-check what was actually opened (the path may have been swapped since it was
    // checked): the same type, and the same file or device.
    let stx = statx_fd(&fd).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    let ft = file_type_of(&stx);
    let ok = match info.kind {
        PathKind::File => ft == FileType::RegularFile,
        PathKind::BlockDevice => ft == FileType::BlockDevice,
        PathKind::CharDevice => is_null_or_zero(&stx),
    };
    if !ok {
        return Err(DeviceError::Changed {
            path: path.to_path_buf(),
            now: type_name(ft),
        });
    }
    if info.id.is_some() && FileId::of(&stx) != info.id {
        return Err(DeviceError::Changed {
            path: path.to_path_buf(),
            now: match ft {
                FileType::BlockDevice => "another block device",
                _ => "another file",
            },
        });
    }
    // Back to blocking mode (io_uring and the sync backend expect it); keep O_DIRECT etc.
    let fl =
        rustix::fs::fcntl_getfl(&fd).map_err(|e| DeviceError::io(path, "cannot get flags", e))?;
    rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK)
        .map_err(|e| DeviceError::io(path, "cannot set flags", e))?;
    Ok(File::from(fd))
}

/// Whether polled I/O (io_uring `IORING_SETUP_IOPOLL`, fio `hipri`) can work for a probed
/// target: the block device under it (the device itself, or the one holding the file; a
/// partition's disk) must have poll queues (`queue/io_poll` is 1). `Err` says why not.
pub fn polled_io(info: &TargetInfo) -> Result<(), String> {
    let path = info.path.as_path();
    let on = if info.exists {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    let stx = statx_path(&on, true).map_err(|e| format!("{}: {e}", on.display()))?;
    let (major, minor) = match info.kind {
        PathKind::BlockDevice => (stx.stx_rdev_major, stx.stx_rdev_minor),
        PathKind::File => (stx.stx_dev_major, stx.stx_dev_minor),
        PathKind::CharDevice => {
            return Err(format!(
                "{} is a character device, not on a block device, so it cannot be polled",
                path.display()
            ))
        }
    };
    let sys = sysfs_dir(major, minor);
    let real = std::fs::canonicalize(&sys).map_err(|_| {
        format!(
            "{} is not on a block device ({major}:{minor} has no {}), so it cannot be polled",
            path.display(),
            sys.display()
        )
    })?;
    let disk = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real)
    } else {
        real
    };
    let name = disk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match read_trimmed(&disk.join("queue/io_poll")).as_deref() {
        Some("1") => Ok(()),
        Some(_) => Err(format!(
            "{} is on /dev/{name}, which has no poll queues (queue/io_poll is 0; NVMe needs \
             the nvme module's poll_queues=N)",
            path.display()
        )),
        None => Err(format!(
            "{} is on /dev/{name}, which does not support polled I/O",
            path.display()
        )),
    }
}

/// The device node of block device `major:minor` (`/dev/` + the kernel's name for it), for
/// replaying a blktrace onto the device it was recorded from.
pub fn device_node(major: u32, minor: u32) -> Option<PathBuf> {
    let uevent = std::fs::read_to_string(sysfs_dir(major, minor).join("uevent")).ok()?;
    let name = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))?
        .trim();
    (!name.is_empty() && !name.contains("..")).then(|| PathBuf::from("/dev").join(name))
}
