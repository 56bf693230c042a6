//! Target probing and the safety checks that keep user data safe.
//!
//! The rules this module enforces (see the product rule in the project docs):
//!
//! - ssdlab never writes to a block device unless the user passed `--allow-destroy`, and even then it
//!   refuses a device that is mounted (or has a mounted partition), is used as swap, has holders
//!   (device-mapper, md, bcache…), has partitions, carries a filesystem / partition-table / volume
//!   signature, or is opened exclusively by another program ([`check_block_device_writable`]).
//! - It never creates, truncates or deletes anything that is not a regular file: [`prepare_file`]
//!   creates with `O_CREAT|O_EXCL` (never `O_TRUNC`), extends only by writing after the current end,
//!   and never shrinks; [`open_target`] never creates or truncates.
//! - Bad input gives one clear error line ([`DeviceError`]'s `Display`, which names the path and the
//!   reason and does not repeat itself through `source()`).
//!
//! The signature detection is a pure function over byte buffers ([`detect_signature`]) so it can be
//! tested on synthetic images without root.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Statx, StatxFlags, CWD};
use rustix::io::Errno;

/// What kind of thing a target path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A regular file (or a path where one may be created).
    File,
    /// A block device node.
    BlockDevice,
}

/// What [`probe`] found out about a target path. Probing has no side effects.
#[derive(Debug, Clone)]
pub struct TargetInfo {
    /// The path as given (symlinks are followed for the checks, but the path is kept as given).
    pub path: PathBuf,
    /// Regular file or block device.
    pub kind: TargetKind,
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
}

impl TargetInfo {
    /// `false` when `statx` said this file cannot be opened with `O_DIRECT`.
    pub fn direct_io_supported(&self) -> bool {
        self.dio_offset_align != 0 && self.dio_mem_align != 0
    }
}

/// Why a block device is refused for writing (the text after "refusing to write: ").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The device (or one of its partitions, named in `partition`) is mounted.
    Mounted {
        partition: Option<String>,
        mount_point: PathBuf,
    },
    /// The device (or one of its partitions) is an active swap area.
    Swap { partition: Option<String> },
    /// `holders/` in sysfs is not empty (device-mapper, md, bcache… sit on top of it).
    Holders {
        partition: Option<String>,
        holders: Vec<String>,
    },
    /// The kernel knows partitions of this device.
    Partitions(Vec<String>),
    /// An on-disk signature was found.
    Signature(Signature),
    /// `open(O_EXCL)` failed with `EBUSY`.
    Exclusive,
}

fn its(partition: &Option<String>) -> String {
    match partition {
        None => "it is".to_string(),
        Some(p) => format!("its partition {p} is"),
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Mounted {
                partition,
                mount_point,
            } => write!(f, "{} mounted on {}", its(partition), mount_point.display()),
            Refusal::Swap { partition } => write!(f, "{} in use as swap", its(partition)),
            Refusal::Holders { partition, holders } => write!(
                f,
                "{} in use by another holder ({})",
                its(partition),
                holders.join(", ")
            ),
            Refusal::Partitions(parts) => write!(f, "it has partitions ({})", parts.join(", ")),
            Refusal::Signature(sig) => match sig.class {
                SignatureClass::PartitionTable => {
                    write!(f, "it has a partition table ({})", sig.name)
                }
                SignatureClass::Filesystem | SignatureClass::Volume => {
                    write!(
                        f,
                        "it holds {} (use a device without data)",
                        sig.description
                    )
                }
            },
            Refusal::Exclusive => write!(f, "it is opened exclusively by another program"),
        }
    }
}

/// Every error of this module. The `Display` text is one line naming the path and the reason.
/// I/O errors are embedded in the message (not exposed as `source()`), so `anyhow`'s `{:#}` does
/// not print them twice.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("target path is empty")]
    EmptyPath,
    #[error("{}: writing to a block device requires --allow-destroy", path.display())]
    AllowDestroyRequired { path: PathBuf },
    #[error("{}: refusing to write: {reason}", path.display())]
    Refused { path: PathBuf, reason: Refusal },
    #[error("{}: parent directory {} does not exist", path.display(), parent.display())]
    ParentMissing { path: PathBuf, parent: PathBuf },
    #[error("{}: parent {} is not a directory", path.display(), parent.display())]
    ParentNotDirectory { path: PathBuf, parent: PathBuf },
    #[error("{}: does not exist", path.display())]
    NotFound { path: PathBuf },
    #[error("{}: is a dangling symbolic link", path.display())]
    DanglingSymlink { path: PathBuf },
    #[error("{}: is a directory", path.display())]
    IsDirectory { path: PathBuf },
    #[error("{}: is not a regular file or block device ({kind})", path.display())]
    NotRegularOrBlock { path: PathBuf, kind: &'static str },
    #[error("{}: is a block device; only regular files are created or extended", path.display())]
    NotRegularFile { path: PathBuf },
    #[error("{}: changed since it was checked (now {now})", path.display())]
    Changed { path: PathBuf, now: &'static str },
    #[error("{}: is on {fs}, a kernel pseudo-filesystem, not storage", path.display())]
    PseudoFilesystem { path: PathBuf, fs: &'static str },
    #[error("{}: permission denied", path.display())]
    PermissionDenied { path: PathBuf },
    #[error("{}: O_DIRECT is not supported on this filesystem; use --buffered", path.display())]
    DirectUnsupported { path: PathBuf },
    #[error("{}: {what}: {err}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        err: io::Error,
    },
}

impl DeviceError {
    fn io(path: &Path, what: &'static str, err: impl Into<io::Error>) -> Self {
        let err = err.into();
        match err.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => DeviceError::PermissionDenied {
                path: path.to_path_buf(),
            },
            _ => DeviceError::Io {
                path: path.to_path_buf(),
                what,
                err,
            },
        }
    }

    /// The path this error is about (`None` for [`DeviceError::EmptyPath`]).
    pub fn path(&self) -> Option<&Path> {
        match self {
            DeviceError::EmptyPath => None,
            DeviceError::AllowDestroyRequired { path }
            | DeviceError::Refused { path, .. }
            | DeviceError::ParentMissing { path, .. }
            | DeviceError::ParentNotDirectory { path, .. }
            | DeviceError::NotFound { path }
            | DeviceError::DanglingSymlink { path }
            | DeviceError::IsDirectory { path }
            | DeviceError::NotRegularOrBlock { path, .. }
            | DeviceError::NotRegularFile { path }
            | DeviceError::Changed { path, .. }
            | DeviceError::PseudoFilesystem { path, .. }
            | DeviceError::PermissionDenied { path }
            | DeviceError::DirectUnsupported { path }
            | DeviceError::Io { path, .. } => Some(path),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Probing
// ---------------------------------------------------------------------------------------------

const FALLBACK_BLOCK: u64 = 512;

fn file_type_of(stx: &Statx) -> FileType {
    FileType::from_raw_mode(stx.stx_mode.into())
}

fn type_name(ft: FileType) -> &'static str {
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
fn wrong_type(path: &Path, ft: FileType) -> DeviceError {
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

fn statx_path(path: &Path, follow: bool) -> Result<Statx, Errno> {
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    rustix::fs::statx(
        CWD,
        path,
        flags,
        StatxFlags::TYPE | StatxFlags::MODE | StatxFlags::SIZE | StatxFlags::DIOALIGN,
    )
}

fn statx_fd(fd: impl AsFd) -> Result<Statx, Errno> {
    rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::TYPE | StatxFlags::MODE | StatxFlags::SIZE | StatxFlags::DIOALIGN,
    )
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
                kind: TargetKind::File,
                exists: true,
                size: stx.stx_size,
                logical_block_size: off.max(FALLBACK_BLOCK),
                dio_mem_align: mem,
                dio_offset_align: off,
                rotational: None,
                model: None,
            })
        }
        FileType::BlockDevice => probe_block(path),
        other => Err(wrong_type(path, other)),
    }
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
fn check_not_pseudo(path: &Path, on: &Path) -> Result<(), DeviceError> {
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

fn parent_of(path: &Path) -> PathBuf {
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
            Ok(TargetInfo {
                path: path.to_path_buf(),
                kind: TargetKind::File,
                exists: false,
                size: 0,
                logical_block_size: FALLBACK_BLOCK,
                dio_mem_align: FALLBACK_BLOCK,
                dio_offset_align: FALLBACK_BLOCK,
                rotational: None,
                model: None,
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

/// `ioctl(BLKGETSIZE64)`: device size in bytes.
fn blk_size_bytes(fd: impl AsFd) -> Result<u64, Errno> {
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<usize>(0x12, 114);
    // SAFETY: BLKGETSIZE64 is a getter ioctl that writes exactly one `u64` (the kernel's
    // `put_u64`) into the pointed-to output, which `Getter` provides as `MaybeUninit<u64>`.
    unsafe {
        let getter = rustix::ioctl::Getter::<BLKGETSIZE64, u64>::new();
        rustix::ioctl::ioctl(fd, getter)
    }
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
    let size = match blk_size_bytes(&fd) {
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
    let (rotational, model) = sysfs_facts(&sys);
    Ok(TargetInfo {
        path: path.to_path_buf(),
        kind: TargetKind::BlockDevice,
        exists: true,
        size,
        logical_block_size: lbs,
        dio_mem_align: mem,
        dio_offset_align: off,
        rotational,
        model,
    })
}

fn sysfs_dir(major: u32, minor: u32) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{major}:{minor}"))
}

fn read_trimmed(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Rotational flag and model of the disk behind `sys` (a partition looks at its parent disk).
fn sysfs_facts(sys: &Path) -> (Option<bool>, Option<String>) {
    let Ok(real) = std::fs::canonicalize(sys) else {
        return (None, None);
    };
    let disk = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real)
    } else {
        real
    };
    let rotational = read_trimmed(&disk.join("queue/rotational")).map(|s| s != "0");
    let model = read_trimmed(&disk.join("device/model"));
    (rotational, model)
}

// ---------------------------------------------------------------------------------------------
// Block device write checks
// ---------------------------------------------------------------------------------------------

/// The device itself (`name == None`) and its partitions, as `(major, minor)`.
struct DevNode {
    partition: Option<String>,
    major: u32,
    minor: u32,
    sys: PathBuf,
}

fn parse_majmin(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Partitions the kernel knows of the device at `sys` (children with a `partition` file).
fn sysfs_partitions(sys: &Path) -> Vec<DevNode> {
    let mut parts = Vec::new();
    let Ok(rd) = std::fs::read_dir(sys) else {
        return parts;
    };
    for entry in rd.flatten() {
        let p = entry.path();
        if !p.join("partition").exists() {
            continue;
        }
        let Some((major, minor)) = read_trimmed(&p.join("dev")).and_then(|s| parse_majmin(&s))
        else {
            continue;
        };
        parts.push(DevNode {
            partition: Some(entry.file_name().to_string_lossy().into_owned()),
            major,
            minor,
            sys: p,
        });
    }
    parts.sort_by_key(|a| (a.major, a.minor));
    parts
}

/// Undo the octal escapes (`\040` for a space…) of `/proc/*/mountinfo` and `/proc/swaps`.
pub fn unescape_proc_field(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of `/proc/self/mountinfo`: (`major:minor`, mount point, mount source).
pub fn parse_mountinfo_line(line: &str) -> Option<((u32, u32), String, String)> {
    let (pre, post) = line.split_once(" - ")?;
    let mut pre = pre.split(' ');
    let majmin = parse_majmin(pre.nth(2)?)?;
    let _root = pre.next()?;
    let mount_point = unescape_proc_field(pre.next()?);
    let mut post = post.split(' ');
    let _fstype = post.next()?;
    let source = unescape_proc_field(post.next().unwrap_or(""));
    Some((majmin, mount_point, source))
}

/// `(major, minor)` of the block device at `path`, if it is one.
fn block_rdev(path: &str) -> Option<(u32, u32)> {
    if !path.starts_with('/') {
        return None;
    }
    let stx = statx_path(Path::new(path), true).ok()?;
    (file_type_of(&stx) == FileType::BlockDevice)
        .then_some((stx.stx_rdev_major, stx.stx_rdev_minor))
}

fn find_node(nodes: &[DevNode], mm: (u32, u32)) -> Option<&DevNode> {
    nodes.iter().find(|n| (n.major, n.minor) == mm)
}

fn check_mounted(nodes: &[DevNode]) -> Option<Refusal> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in text.lines() {
        let Some((mm, mount_point, source)) = parse_mountinfo_line(line) else {
            continue;
        };
        // The st_dev of the mount (fails for btrfs, whose st_dev is anonymous) or the source device.
        let hit =
            find_node(nodes, mm).or_else(|| block_rdev(&source).and_then(|s| find_node(nodes, s)));
        if let Some(node) = hit {
            return Some(Refusal::Mounted {
                partition: node.partition.clone(),
                mount_point: PathBuf::from(mount_point),
            });
        }
    }
    None
}

fn check_swap(nodes: &[DevNode]) -> Option<Refusal> {
    let text = std::fs::read_to_string("/proc/swaps").ok()?;
    for line in text.lines().skip(1) {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        if let Some(node) = block_rdev(&unescape_proc_field(name)).and_then(|s| find_node(nodes, s))
        {
            return Some(Refusal::Swap {
                partition: node.partition.clone(),
            });
        }
    }
    None
}

fn check_holders(nodes: &[DevNode]) -> Option<Refusal> {
    for node in nodes {
        let Ok(rd) = std::fs::read_dir(node.sys.join("holders")) else {
            continue;
        };
        let mut holders: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            holders.sort();
            return Some(Refusal::Holders {
                partition: node.partition.clone(),
                holders,
            });
        }
    }
    None
}

/// How many bytes of the start of a device [`detect_signature`] wants.
pub const SIGNATURE_HEAD_LEN: usize = 256 * 1024;
/// How many bytes of the end of a device [`detect_signature`] wants.
pub const SIGNATURE_TAIL_LEN: usize = 128 * 1024;

fn read_signature_areas(path: &Path, size: u64) -> Result<(Vec<u8>, Vec<u8>), DeviceError> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| DeviceError::io(path, "cannot open to look for data", e))?;
    let file = File::from(fd);
    let head_len = size.min(SIGNATURE_HEAD_LEN as u64) as usize;
    let tail_len = size.min(SIGNATURE_TAIL_LEN as u64) as usize;
    let mut head = vec![0u8; head_len];
    let mut tail = vec![0u8; tail_len];
    file.read_exact_at(&mut head, 0)
        .map_err(|e| DeviceError::io(path, "cannot read the start of the device", e))?;
    file.read_exact_at(&mut tail, size - tail_len as u64)
        .map_err(|e| DeviceError::io(path, "cannot read the end of the device", e))?;
    Ok((head, tail))
}

/// Refuses to let ssdlab write to a block device unless it is safe (see the module docs).
///
/// Checks, in this order: `allow_destroy`; mounted (the device or any partition of it, by
/// `MAJ:MIN` in `/proc/self/mountinfo` or by mount source); active swap (`/proc/swaps`); holders
/// (sysfs `holders/` of the device or a partition); partitions (sysfs); on-disk signatures in the
/// first [`SIGNATURE_HEAD_LEN`] and last [`SIGNATURE_TAIL_LEN`] bytes ([`detect_signature`]);
/// finally an `O_EXCL|O_RDONLY` open (`EBUSY` → opened exclusively by someone else).
///
/// For a [`TargetKind::File`] there is nothing to check and this returns `Ok(())`. The path is
/// re-examined (it must still be a block device), so a stale `info` cannot slip through.
pub fn check_block_device_writable(
    info: &TargetInfo,
    allow_destroy: bool,
) -> Result<(), DeviceError> {
    let path = info.path.as_path();
    if info.kind != TargetKind::BlockDevice {
        return Ok(());
    }
    if !allow_destroy {
        return Err(DeviceError::AllowDestroyRequired {
            path: path.to_path_buf(),
        });
    }
    let stx = statx_path(path, true).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    if file_type_of(&stx) != FileType::BlockDevice {
        return Err(DeviceError::Changed {
            path: path.to_path_buf(),
            now: type_name(file_type_of(&stx)),
        });
    }
    let sys = sysfs_dir(stx.stx_rdev_major, stx.stx_rdev_minor);
    let partitions = sysfs_partitions(&sys);
    let mut nodes = vec![DevNode {
        partition: None,
        major: stx.stx_rdev_major,
        minor: stx.stx_rdev_minor,
        sys: sys.clone(),
    }];
    let part_names: Vec<String> = partitions
        .iter()
        .filter_map(|p| p.partition.clone())
        .collect();
    nodes.extend(partitions);
    let refuse = |reason: Refusal| DeviceError::Refused {
        path: path.to_path_buf(),
        reason,
    };

    if let Some(r) = check_mounted(&nodes) {
        return Err(refuse(r));
    }
    if let Some(r) = check_swap(&nodes) {
        return Err(refuse(r));
    }
    if let Some(r) = check_holders(&nodes) {
        return Err(refuse(r));
    }
    if !part_names.is_empty() {
        return Err(refuse(Refusal::Partitions(part_names)));
    }

    // Size from the device itself, not from a possibly stale `info`.
    let size = {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| DeviceError::io(path, "cannot open", e))?;
        blk_size_bytes(&fd)
            .or_else(|_| rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)))
            .map_err(|e| DeviceError::io(path, "cannot read device size", e))?
    };
    let (head, tail) = read_signature_areas(path, size)?;
    if let Some(sig) = detect_signature(&head, &tail, size) {
        return Err(refuse(Refusal::Signature(sig)));
    }

    match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    ) {
        Ok(fd) => {
            drop(fd);
            Ok(())
        }
        Err(Errno::BUSY) => Err(refuse(Refusal::Exclusive)),
        Err(e) => Err(DeviceError::io(path, "cannot open exclusively", e)),
    }
}

// ---------------------------------------------------------------------------------------------
// Signatures (pure)
// ---------------------------------------------------------------------------------------------

/// What kind of data a [`Signature`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureClass {
    /// A filesystem (ext4, XFS, btrfs, vfat…).
    Filesystem,
    /// A partition table (GPT, MBR).
    PartitionTable,
    /// Another kind of volume: swap, LUKS, LVM2, MD RAID, bcache, ZFS.
    Volume,
}

/// An on-disk signature found by [`detect_signature`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Short name: "ext4", "xfs", "GPT", "swap", "LVM2"…
    pub name: &'static str,
    /// Filesystem, partition table or other volume.
    pub class: SignatureClass,
    /// For messages: "an ext4 filesystem", "a swap area", "a partition table (GPT)"…
    pub description: &'static str,
}

const fn fs(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::Filesystem,
        description,
    }
}

const fn vol(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::Volume,
        description,
    }
}

const fn table(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::PartitionTable,
        description,
    }
}

fn bytes_at(buf: &[u8], off: usize, pat: &[u8]) -> bool {
    buf.get(off..off + pat.len()) == Some(pat)
}

fn le16(buf: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(buf.get(off..off + 2)?.try_into().ok()?))
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(off..off + 4)?.try_into().ok()?))
}

fn le64(buf: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(buf.get(off..off + 8)?.try_into().ok()?))
}

const MD_MAGIC: u32 = 0xa92b_4efc;
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

/// ext2/3/4 superblock at 1024 (magic 0xEF53 at 1080), with sanity checks so random data does
/// not look like one; the variant is told apart by feature flags.
fn ext_signature(head: &[u8]) -> Option<Signature> {
    const SB: usize = 1024;
    if le16(head, SB + 56)? != 0xEF53 {
        return None;
    }
    let inodes = le32(head, SB)?;
    let log_block = le32(head, SB + 24)?;
    let rev = le32(head, SB + 76)?;
    if inodes == 0 || log_block > 6 || rev > 1 {
        return None;
    }
    let compat = le32(head, SB + 0x5C)?;
    let incompat = le32(head, SB + 0x60)?;
    let ro_compat = le32(head, SB + 0x64)?;
    // incompat: extents 0x40, 64bit 0x80, mmp 0x100, flex_bg 0x200, …; ro_compat: huge_file 0x8,
    // gdt_csum 0x10, dir_nlink 0x20, extra_isize 0x40, metadata_csum 0x400.
    if incompat & !0x1f != 0 || ro_compat & !0x7 != 0 {
        Some(fs("ext4", "an ext4 filesystem"))
    } else if compat & 0x4 != 0 || incompat & 0x8 != 0 {
        Some(fs("ext3", "an ext3 filesystem"))
    } else {
        Some(fs("ext2", "an ext2 filesystem"))
    }
}

/// A DOS/MBR partition table: 0x55AA at 510, every entry's status byte 0x00 or 0x80, and at least
/// one entry with a type and a length.
fn mbr_signature(head: &[u8]) -> Option<Signature> {
    if !bytes_at(head, 510, &[0x55, 0xAA]) {
        return None;
    }
    let mut used = false;
    for i in 0..4 {
        let e = 446 + 16 * i;
        let status = *head.get(e)?;
        if status != 0 && status != 0x80 {
            return None;
        }
        let ptype = *head.get(e + 4)?;
        let sectors = le32(head, e + 12)?;
        if ptype != 0 && sectors != 0 {
            used = true;
        }
    }
    used.then_some(table("MBR", "a partition table (MBR)"))
}

fn md_at(buf: &[u8], off: usize, major: u32) -> bool {
    le32(buf, off) == Some(MD_MAGIC) && le32(buf, off + 4) == Some(major)
}

/// Looks for a filesystem, partition table or volume signature.
///
/// `head` holds the first bytes of the device (ideally [`SIGNATURE_HEAD_LEN`]; shorter when the
/// device is smaller), `tail` the last bytes (ideally [`SIGNATURE_TAIL_LEN`]), and `size` is the
/// device size in bytes (`tail` ends at `size`). Returns the first signature found.
pub fn detect_signature(head: &[u8], tail: &[u8], size: u64) -> Option<Signature> {
    if bytes_at(head, 0, b"LUKS\xba\xbe") {
        return Some(vol("LUKS", "a LUKS encrypted volume"));
    }
    if bytes_at(head, 0, b"XFSB") {
        return Some(fs("xfs", "an XFS filesystem"));
    }
    if bytes_at(head, 0, b"hsqs") {
        return Some(fs("squashfs", "a squashfs filesystem"));
    }
    if md_at(head, 0, 1) {
        return Some(vol("md-1.1", "an MD RAID member (metadata 1.1)"));
    }
    if md_at(head, 4096, 1) {
        return Some(vol("md-1.2", "an MD RAID member (metadata 1.2)"));
    }
    if (0..4).any(|s| bytes_at(head, s * 512, b"LABELONE")) {
        return Some(vol("LVM2", "an LVM2 physical volume"));
    }
    if bytes_at(head, 4096 + 24, &BCACHE_MAGIC) {
        return Some(vol("bcache", "a bcache device"));
    }
    if bytes_at(head, 65536 + 64, b"_BHRfS_M") {
        return Some(fs("btrfs", "a btrfs filesystem"));
    }
    if let Some(sig) = ext_signature(head) {
        return Some(sig);
    }
    if le32(head, 1024) == Some(0xF2F5_2010) {
        return Some(fs("f2fs", "an f2fs filesystem"));
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if bytes_at(head, page - 10, b"SWAPSPACE2") || bytes_at(head, page - 10, b"SWAP-SPACE") {
            return Some(vol("swap", "a swap area"));
        }
    }
    if bytes_at(head, 32769, b"CD001") {
        return Some(fs("iso9660", "an ISO9660 filesystem"));
    }
    if bytes_at(head, 3, b"NTFS    ") {
        return Some(fs("ntfs", "an NTFS filesystem"));
    }
    if bytes_at(head, 3, b"EXFAT   ") {
        return Some(fs("exfat", "an exFAT filesystem"));
    }
    if bytes_at(head, 510, &[0x55, 0xAA])
        && (bytes_at(head, 54, b"FAT12")
            || bytes_at(head, 54, b"FAT16")
            || bytes_at(head, 82, b"FAT32"))
    {
        return Some(fs("vfat", "a FAT (vfat) filesystem"));
    }
    // ZFS: the uberblock ring of label 0 lives at 128 KiB..256 KiB, 1 KiB slots at least.
    if (0..128).any(|i| le64(head, 131072 + i * 1024) == Some(ZFS_UBERBLOCK_MAGIC)) {
        return Some(vol("zfs", "a ZFS pool member"));
    }
    if bytes_at(head, 512, b"EFI PART") || bytes_at(head, 4096, b"EFI PART") {
        return Some(table("GPT", "a partition table (GPT)"));
    }
    if let Some(sig) = mbr_signature(head) {
        return Some(sig);
    }

    // Signatures at the end of the device.
    let tail_start = size.checked_sub(tail.len() as u64)?;
    let at_end = |off: u64| -> Option<usize> { off.checked_sub(tail_start).map(|o| o as usize) };
    // md 0.90: 64 KiB-aligned, 64 KiB from the end; md 1.0: 4 KiB-aligned, 8 KiB from the end.
    if size >= 131072 {
        if let Some(o) = at_end((size & !0xFFFF) - 0x10000) {
            if md_at(tail, o, 0) {
                return Some(vol("md-0.90", "an MD RAID member (metadata 0.90)"));
            }
        }
    }
    if size >= 16384 {
        if let Some(o) = at_end((((size >> 9) - 16) << 9) & !4095) {
            if md_at(tail, o, 1) {
                return Some(vol("md-1.0", "an MD RAID member (metadata 1.0)"));
            }
        }
    }
    for sector in [512u64, 4096] {
        if size >= sector * 2 {
            if let Some(o) = at_end(size - sector) {
                if bytes_at(tail, o, b"EFI PART") {
                    return Some(table("GPT", "a partition table (GPT)"));
                }
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Files: create / extend, and opening targets
// ---------------------------------------------------------------------------------------------

/// Fill chunk size when extending a file.
const FILL_CHUNK: usize = 1 << 20;

/// Cheap xorshift64 generator for non-zero fill data.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Pseudo-random bytes, none of them zero (so the file is neither sparse nor trivially
    /// compressible by the filesystem or a device).
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            for (d, s) in chunk.iter_mut().zip(v) {
                *d = if s == 0 { 0x5A } else { s };
            }
        }
    }
}

/// Makes sure a regular file exists and is at least `needed_size` bytes long.
///
/// A missing file is created (`O_CREAT|O_EXCL`, mode 0644, never `O_TRUNC`). A short file is
/// extended by writing pseudo-random non-zero data from its current end to `needed_size` (1 MiB
/// chunks), then `fdatasync`ed. Existing bytes are never touched and the file never shrinks.
/// Returns a fresh [`probe`]. Anything that is not a regular file is refused.
pub fn prepare_file(info: &TargetInfo, needed_size: u64) -> Result<TargetInfo, DeviceError> {
    let path = info.path.as_path();
    if info.kind != TargetKind::File {
        return Err(DeviceError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    // Re-probe: never trust a possibly stale `info` before writing.
    let now = probe(path)?;
    if now.kind != TargetKind::File {
        return Err(DeviceError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    let common = OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    let fd: OwnedFd = if now.exists {
        open_existing_regular(path, common)?
    } else {
        match rustix::fs::open(
            path,
            common | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => fd,
            // Someone created it between the probe and now: treat it as existing.
            Err(Errno::EXIST) => open_existing_regular(path, common)?,
            Err(e) => return Err(DeviceError::io(path, "cannot create", e)),
        }
    };
    let stx = statx_fd(&fd).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    if file_type_of(&stx) != FileType::RegularFile {
        return Err(wrong_type(path, file_type_of(&stx)));
    }
    let file = File::from(fd);
    let mut len = stx.stx_size;
    if len < needed_size {
        let mut rng = XorShift((0x9E37_79B9_7F4A_7C15 ^ len.rotate_left(17) ^ needed_size) | 1);
        let mut buf = vec![0u8; FILL_CHUNK];
        while len < needed_size {
            let n = (needed_size - len).min(FILL_CHUNK as u64) as usize;
            rng.fill(&mut buf[..n]);
            file.write_all_at(&buf[..n], len)
                .map_err(|e| DeviceError::io(path, "cannot extend the file", e))?;
            len += n as u64;
        }
        rustix::fs::fdatasync(&file)
            .map_err(|e| DeviceError::io(path, "cannot sync the file", e))?;
    }
    drop(file);
    probe(path)
}

/// Opens an existing path with `flags` (which must include `O_NONBLOCK` so a FIFO cannot block us)
/// and checks that it is a regular file.
fn open_existing_regular(path: &Path, flags: OFlags) -> Result<OwnedFd, DeviceError> {
    // Refuse non-regular files before opening them at all (opening some devices has effects).
    let stx = statx_path(path, true).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    if file_type_of(&stx) != FileType::RegularFile {
        return Err(match file_type_of(&stx) {
            FileType::BlockDevice => DeviceError::NotRegularFile {
                path: path.to_path_buf(),
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

/// Opens a probed target for I/O.
///
/// `O_RDONLY` or `O_RDWR` (never `O_CREAT`/`O_TRUNC`), `O_CLOEXEC`, `O_DIRECT` when `direct`
/// (`EINVAL` → [`DeviceError::DirectUnsupported`]), and for a block device opened for writing
/// also `O_EXCL`, so nobody can mount it while we hold it (`EBUSY` → refused as in use). The
/// opened object must still be of `info.kind`. The returned file is in blocking mode.
pub fn open_target(info: &TargetInfo, write: bool, direct: bool) -> Result<File, DeviceError> {
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
                TargetKind::File => FileType::RegularFile,
                TargetKind::BlockDevice => FileType::BlockDevice,
            };
            if ft == FileType::RegularFile {
                check_not_pseudo(path, path)?;
            }
            if ft != want {
                return Err(match ft {
                    FileType::RegularFile | FileType::BlockDevice => DeviceError::Changed {
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
    if write && info.kind == TargetKind::BlockDevice {
        flags |= OFlags::EXCL;
    }
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
        Errno::INVAL if direct => DeviceError::DirectUnsupported {
            path: path.to_path_buf(),
        },
        Errno::BUSY if write && info.kind == TargetKind::BlockDevice => DeviceError::Refused {
            path: path.to_path_buf(),
            reason: Refusal::Exclusive,
        },
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
    // Re-check the type of what was actually opened (the path may have been swapped).
    let stx = statx_fd(&fd).map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    let ft = file_type_of(&stx);
    let ok = match info.kind {
        TargetKind::File => ft == FileType::RegularFile,
        TargetKind::BlockDevice => ft == FileType::BlockDevice,
    };
    if !ok {
        return Err(DeviceError::Changed {
            path: path.to_path_buf(),
            now: type_name(ft),
        });
    }
    // Back to blocking mode (io_uring and the sync backend expect it); keep O_DIRECT etc.
    let fl =
        rustix::fs::fcntl_getfl(&fd).map_err(|e| DeviceError::io(path, "cannot get flags", e))?;
    rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK)
        .map_err(|e| DeviceError::io(path, "cannot set flags", e))?;
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(len: usize) -> Vec<u8> {
        vec![0u8; len]
    }

    fn put(buf: &mut [u8], off: usize, pat: &[u8]) {
        buf[off..off + pat.len()].copy_from_slice(pat);
    }

    fn detect_head(head: &[u8]) -> Option<&'static str> {
        detect_signature(head, &[], head.len() as u64).map(|s| s.name)
    }

    fn ext_sb(incompat: u32, compat: u32) -> Vec<u8> {
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 1024, &1000u32.to_le_bytes()); // inodes
        put(&mut b, 1024 + 24, &2u32.to_le_bytes()); // 4 KiB blocks
        put(&mut b, 1080, &0xEF53u16.to_le_bytes());
        put(&mut b, 1024 + 76, &1u32.to_le_bytes()); // dynamic rev
        put(&mut b, 1024 + 0x5C, &compat.to_le_bytes());
        put(&mut b, 1024 + 0x60, &incompat.to_le_bytes());
        b
    }

    #[test]
    fn blank_and_random_have_no_signature() {
        assert_eq!(detect_head(&img(SIGNATURE_HEAD_LEN)), None);
        let mut r = img(SIGNATURE_HEAD_LEN);
        XorShift(12345).fill(&mut r);
        assert_eq!(
            detect_signature(&r, &r[..SIGNATURE_TAIL_LEN], 1 << 30),
            None
        );
        assert_eq!(detect_signature(&[], &[], 0), None);
        assert_eq!(detect_head(&[0u8; 100]), None);
    }

    #[test]
    fn ext_variants() {
        assert_eq!(detect_head(&ext_sb(0x2c2, 0x4)), Some("ext4"));
        assert_eq!(detect_head(&ext_sb(0x2, 0x4)), Some("ext3"));
        assert_eq!(detect_head(&ext_sb(0x2, 0)), Some("ext2"));
        // Magic alone (random data) is not enough.
        let mut b = img(4096);
        put(&mut b, 1080, &0xEF53u16.to_le_bytes());
        assert_eq!(detect_head(&b), None);
    }

    #[test]
    fn simple_magics() {
        let cases: &[(usize, &[u8], &str)] = &[
            (0, b"XFSB", "xfs"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (0, b"hsqs", "squashfs"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (4086, b"SWAP-SPACE", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (3, b"NTFS    ", "ntfs"),
            (3, b"EXFAT   ", "exfat"),
            (512, b"LABELONE", "LVM2"),
            (1024, b"LABELONE", "LVM2"),
            (32769, b"CD001", "iso9660"),
            (1024, &0xF2F5_2010u32.to_le_bytes(), "f2fs"),
            (4096 + 24, &BCACHE_MAGIC, "bcache"),
            (512, b"EFI PART", "GPT"),
            (4096, b"EFI PART", "GPT"),
            (131072 + 5 * 1024, &ZFS_UBERBLOCK_MAGIC.to_le_bytes(), "zfs"),
        ];
        for (off, pat, name) in cases {
            let mut b = img(SIGNATURE_HEAD_LEN);
            put(&mut b, *off, pat);
            assert_eq!(detect_head(&b), Some(*name), "{name} at {off}");
        }
    }

    #[test]
    fn fat_needs_boot_signature() {
        let mut b = img(4096);
        put(&mut b, 54, b"FAT16   ");
        assert_eq!(detect_head(&b), None);
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), Some("vfat"));
        let mut b = img(4096);
        put(&mut b, 82, b"FAT32   ");
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), Some("vfat"));
    }

    #[test]
    fn mbr_needs_a_used_entry() {
        let mut b = img(4096);
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), None, "empty table");
        put(&mut b, 446 + 16 + 4, &[0x83]);
        put(&mut b, 446 + 16 + 8, &2048u32.to_le_bytes());
        put(&mut b, 446 + 16 + 12, &4096u32.to_le_bytes());
        assert_eq!(detect_head(&b), Some("MBR"));
        b[446] = 0x17; // invalid status byte: boot code, not a table
        assert_eq!(detect_head(&b), None);
    }

    #[test]
    fn md_superblocks() {
        let mut md = Vec::new();
        md.extend_from_slice(&MD_MAGIC.to_le_bytes());
        md.extend_from_slice(&1u32.to_le_bytes());
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 4096, &md);
        assert_eq!(detect_head(&b), Some("md-1.2"));
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 0, &md);
        assert_eq!(detect_head(&b), Some("md-1.1"));

        // At the end: a 10 MiB + 3 KiB device.
        let size: u64 = 10 * 1024 * 1024 + 3072;
        let head = img(SIGNATURE_HEAD_LEN);
        let tail_start = size - SIGNATURE_TAIL_LEN as u64;
        let mut tail = img(SIGNATURE_TAIL_LEN);
        let off10 = ((((size >> 9) - 16) << 9) & !4095) - tail_start;
        put(&mut tail, off10 as usize, &md);
        assert_eq!(
            detect_signature(&head, &tail, size).map(|s| s.name),
            Some("md-1.0")
        );
        let mut tail = img(SIGNATURE_TAIL_LEN);
        let mut md090 = md.clone();
        md090[4..8].copy_from_slice(&0u32.to_le_bytes());
        let off090 = ((size & !0xFFFF) - 0x10000) - tail_start;
        put(&mut tail, off090 as usize, &md090);
        assert_eq!(
            detect_signature(&head, &tail, size).map(|s| s.name),
            Some("md-0.90")
        );
    }

    #[test]
    fn gpt_backup_header_at_end() {
        let size: u64 = 1 << 24;
        let mut tail = img(SIGNATURE_TAIL_LEN);
        put(&mut tail, SIGNATURE_TAIL_LEN - 512, b"EFI PART");
        let s = detect_signature(&img(SIGNATURE_HEAD_LEN), &tail, size).unwrap();
        assert_eq!((s.name, s.class), ("GPT", SignatureClass::PartitionTable));
    }

    #[test]
    fn refusal_messages() {
        let e = DeviceError::Refused {
            path: "/dev/loop3".into(),
            reason: Refusal::Signature(fs("ext4", "an ext4 filesystem")),
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: it holds an ext4 filesystem (use a device without data)"
        );
        let e = DeviceError::Refused {
            path: "/dev/loop3".into(),
            reason: Refusal::Signature(table("GPT", "a partition table (GPT)")),
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: it has a partition table (GPT)"
        );
        let e = DeviceError::Refused {
            path: "/dev/loop3".into(),
            reason: Refusal::Mounted {
                partition: Some("loop3p1".into()),
                mount_point: "/mnt/x".into(),
            },
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: its partition loop3p1 is mounted on /mnt/x"
        );
        let e = DeviceError::Refused {
            path: "/dev/loop3".into(),
            reason: Refusal::Partitions(vec!["loop3p1".into(), "loop3p2".into()]),
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: it has partitions (loop3p1, loop3p2)"
        );
        let e = DeviceError::Refused {
            path: "/dev/loop3".into(),
            reason: Refusal::Holders {
                partition: None,
                holders: vec!["dm-0".into()],
            },
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: it is in use by another holder (dm-0)"
        );
        let e = DeviceError::AllowDestroyRequired {
            path: "/dev/sdb".into(),
        };
        assert_eq!(
            e.to_string(),
            "/dev/sdb: writing to a block device requires --allow-destroy"
        );
        let e = DeviceError::io(Path::new("x"), "cannot open", Errno::ACCESS);
        assert_eq!(e.to_string(), "x: permission denied");
        assert!(
            std::error::Error::source(&DeviceError::io(Path::new("x"), "y", Errno::IO)).is_none()
        );
    }

    #[test]
    fn mountinfo_parsing() {
        let line = r"42 27 7:3 / /tmp/my\040dir rw,relatime shared:1 - ext4 /dev/loop3 rw";
        let (mm, mp, src) = parse_mountinfo_line(line).unwrap();
        assert_eq!(mm, (7, 3));
        assert_eq!(mp, "/tmp/my dir");
        assert_eq!(src, "/dev/loop3");
        assert_eq!(unescape_proc_field(r"a\134b\"), r"a\b\");
        assert!(parse_mountinfo_line("garbage").is_none());
    }

    #[test]
    fn xorshift_fill_is_nonzero() {
        let mut b = vec![0u8; 4099];
        XorShift(1).fill(&mut b);
        assert!(b.iter().all(|&x| x != 0));
    }

    #[test]
    fn sysfs_partitions_holders_and_facts() {
        let dir = tempfile::tempdir().unwrap();
        let disk = dir.path().join("loop3");
        let part = disk.join("loop3p1");
        std::fs::create_dir_all(disk.join("holders")).unwrap();
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(disk.join("device")).unwrap();
        std::fs::create_dir_all(part.join("holders/dm-0")).unwrap();
        std::fs::create_dir_all(disk.join("mq")).unwrap(); // not a partition
        std::fs::write(part.join("partition"), "1\n").unwrap();
        std::fs::write(part.join("dev"), "259:1\n").unwrap();
        std::fs::write(disk.join("queue/rotational"), "0\n").unwrap();
        std::fs::write(disk.join("device/model"), "Samsung SSD 850  \n").unwrap();

        let parts = sysfs_partitions(&disk);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].partition.as_deref(), Some("loop3p1"));
        assert_eq!((parts[0].major, parts[0].minor), (259, 1));

        let mut nodes = vec![DevNode {
            partition: None,
            major: 7,
            minor: 3,
            sys: disk.clone(),
        }];
        assert_eq!(check_holders(&nodes), None);
        nodes.extend(parts);
        assert_eq!(
            check_holders(&nodes),
            Some(Refusal::Holders {
                partition: Some("loop3p1".into()),
                holders: vec!["dm-0".into()],
            })
        );
        assert!(find_node(&nodes, (259, 1)).is_some());
        assert!(find_node(&nodes, (259, 2)).is_none());

        let want = (Some(false), Some("Samsung SSD 850".to_string()));
        assert_eq!(sysfs_facts(&disk), want);
        assert_eq!(sysfs_facts(&part), want, "a partition reports its disk");
        assert_eq!(sysfs_facts(&dir.path().join("nope")), (None, None));
    }
}
