//! The block-device write checks: mounted, swap, holders, partitions, on-disk signatures, and an
//! exclusive open. See [`check_block_device_writable`].

use crate::blkid::{Blkid, Probe};
use crate::error::{DeviceError, Refusal};
use crate::probe::{
    file_type_of, read_trimmed, statx_path, sysfs_dir, type_name, PathKind, TargetInfo,
};
use crate::signature::{detect_signature, SIGNATURE_HEAD_LEN, SIGNATURE_TAIL_LEN};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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

/// The first loop device whose backing store matches `is_it` (given the backing file's metadata),
/// from `/sys/block/loop*/loop/backing_file`.
fn loop_backed_by(is_it: impl Fn(&std::fs::Metadata) -> bool) -> Option<String> {
    let rd = std::fs::read_dir("/sys/block").ok()?;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Some(backing) = read_trimmed(&e.path().join("loop/backing_file")) else {
            continue;
        };
        let backing = backing.trim_end_matches(" (deleted)");
        if let Ok(m) = std::fs::metadata(backing) {
            if is_it(&m) {
                return Some(format!("/dev/{name}"));
            }
        }
    }
    None
}

/// The checks for writing to an existing regular file: not the backing store of a loop device,
/// not an active swap file (both would corrupt what the kernel serves from it).
pub fn check_file_writable(info: &TargetInfo) -> Result<(), DeviceError> {
    if info.kind != PathKind::File || !info.exists {
        return Ok(());
    }
    let path = info.path.as_path();
    let Ok(me) = std::fs::metadata(path) else {
        return Ok(());
    };
    let same = |m: &std::fs::Metadata| m.is_file() && m.dev() == me.dev() && m.ino() == me.ino();
    let refuse = |reason| DeviceError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(device) = loop_backed_by(same) {
        return Err(refuse(Refusal::BacksLoop { device }));
    }
    if let Ok(text) = std::fs::read_to_string("/proc/swaps") {
        for line in text.lines().skip(1) {
            let Some(name) = line.split_whitespace().next() else {
                continue;
            };
            if std::fs::metadata(unescape_proc_field(name)).is_ok_and(|m| same(&m)) {
                return Err(refuse(Refusal::SwapFile));
            }
        }
    }
    Ok(())
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

/// What [`check_block_device_writable`] has to say about a device it accepts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceCheck {
    /// Notes for the user, one line each: e.g. that blkid was not available and only the
    /// built-in signature detector looked at the device.
    pub notes: Vec<String>,
}

/// Refuses to let ssdlab write to a block device unless it is safe (see the module docs).
///
/// Checks, in this order: `allow_destroy`; mounted (the device or any partition of it, by
/// `MAJ:MIN` in `/proc/self/mountinfo` or by mount source); active swap (`/proc/swaps`); holders
/// (sysfs `holders/` of the device or a partition); partitions (sysfs); on-disk signatures, by
/// two judges: util-linux's `blkid -p` (the authority, see [`crate::blkid`]) and the built-in
/// detector over the first [`SIGNATURE_HEAD_LEN`] and last [`SIGNATURE_TAIL_LEN`] bytes
/// ([`detect_signature`]) — the device is refused when either finds something, and when blkid
/// cannot answer the built-in detector decides alone and a note says so; finally an
/// `O_EXCL|O_RDONLY` open (`EBUSY` → opened exclusively by someone else).
///
/// For a [`PathKind::File`] there is nothing to check and this returns `Ok`. The path is
/// re-examined (it must still be a block device), so a stale `info` cannot slip through.
pub fn check_block_device_writable(
    info: &TargetInfo,
    allow_destroy: bool,
) -> Result<DeviceCheck, DeviceError> {
    check_block_device_writable_with(info, allow_destroy, &Blkid::system())
}

/// [`check_block_device_writable`] with a chosen signature authority ([`Blkid::none`]: the
/// built-in detector alone).
pub fn check_block_device_writable_with(
    info: &TargetInfo,
    allow_destroy: bool,
    blkid: &Blkid,
) -> Result<DeviceCheck, DeviceError> {
    let path = info.path.as_path();
    if info.kind != PathKind::BlockDevice {
        return Ok(DeviceCheck::default());
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
    if let Some(device) = loop_backed_by(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_block_device()
            && nodes.iter().any(|n| {
                (rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev())) == (n.major, n.minor)
            })
    }) {
        return Err(refuse(Refusal::BacksLoop { device }));
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
        ssdlab_io::blockdev::size_bytes(&fd)
            .or_else(|_| rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)))
            .map_err(|e| DeviceError::io(path, "cannot read device size", e))?
    };
    let (head, tail) = read_signature_areas(path, size)?;
    let builtin = detect_signature(&head, &tail, size);
    let mut checked = DeviceCheck::default();
    match blkid.probe(path) {
        probe @ Probe::Found(_) => {
            if let Some(r) = probe.refusal() {
                return Err(refuse(r));
            }
        }
        Probe::Nothing => {}
        Probe::Unavailable(why) => checked.notes.push(format!(
            "{}: {why}; only the built-in signature detector looked for data on it",
            path.display()
        )),
    }
    if let Some(sig) = builtin {
        return Err(refuse(Refusal::Signature(sig)));
    }

    match crate::probe::open_exclusive(
        path,
        OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
    ) {
        Ok(fd) => {
            drop(fd);
            Ok(checked)
        }
        Err(Errno::BUSY) => Err(refuse(Refusal::Exclusive)),
        Err(e) => Err(DeviceError::io(path, "cannot open exclusively", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::sysfs_facts;

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
        std::fs::write(disk.join("device/firmware_rev"), "EMT02B6Q\n").unwrap();

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

        let want = (
            Some(false),
            Some("Samsung SSD 850".to_string()),
            Some("EMT02B6Q".to_string()),
        );
        assert_eq!(sysfs_facts(&disk), want);
        assert_eq!(sysfs_facts(&part), want, "a partition reports its disk");
        assert_eq!(sysfs_facts(&dir.path().join("nope")), (None, None, None));
    }
}
