//! Errors of target probing and safety checks. Every `Display` is one line naming the path and
//! the reason; I/O errors are embedded in the message, never exposed as `source()`, so a chain
//! printed with anyhow's `{:#}` does not repeat itself.

use crate::signature::{Signature, SignatureClass};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

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
    /// An on-disk signature was found (by blkid or the built-in detector).
    Signature(Signature),
    /// blkid found a signature of a type ssdlab has no description for (a newer blkid):
    /// its `TYPE` (or `PTTYPE`) and `USAGE`.
    OtherSignature { type_name: String, usage: String },
    /// `open(O_EXCL)` failed with `EBUSY`.
    Exclusive,
    /// A loop device reads and writes through it (it is that device's backing store).
    BacksLoop { device: String },
    /// The file is an active swap file.
    SwapFile,
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
                SignatureClass::RaidMember => {
                    write!(f, "it is {} ({})", sig.description, sig.name)
                }
                SignatureClass::Filesystem | SignatureClass::Volume => {
                    write!(
                        f,
                        "it holds {} (use a device without data)",
                        sig.description
                    )
                }
            },
            Refusal::OtherSignature { type_name, usage } => write!(
                f,
                "blkid finds a {type_name} signature ({usage}) on it (use a device without data)"
            ),
            Refusal::Exclusive => write!(f, "it is opened exclusively by another program"),
            Refusal::BacksLoop { device } => write!(
                f,
                "it is the backing store of loop device {device}, which is in use"
            ),
            Refusal::SwapFile => write!(f, "it is in use as a swap file"),
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
    #[error("{}: no such device (ssdlab never creates files under /dev)", path.display())]
    NoSuchDevice { path: PathBuf },
    #[error("{}: is on a read-only filesystem", path.display())]
    ReadOnly { path: PathBuf },
    #[error("{}: is a dangling symbolic link", path.display())]
    DanglingSymlink { path: PathBuf },
    #[error("{}: is a directory", path.display())]
    IsDirectory { path: PathBuf },
    #[error("{}: is not a regular file, a block device, /dev/null or /dev/zero ({kind})", path.display())]
    NotRegularOrBlock { path: PathBuf, kind: &'static str },
    #[error("{}: is a {kind}; only regular files are created or extended", path.display())]
    NotRegularFile { path: PathBuf, kind: &'static str },
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
    pub(crate) fn io(path: &Path, what: &'static str, err: impl Into<io::Error>) -> Self {
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
            | DeviceError::NoSuchDevice { path }
            | DeviceError::ReadOnly { path }
            | DeviceError::DanglingSymlink { path }
            | DeviceError::IsDirectory { path }
            | DeviceError::NotRegularOrBlock { path, .. }
            | DeviceError::NotRegularFile { path, .. }
            | DeviceError::Changed { path, .. }
            | DeviceError::PseudoFilesystem { path, .. }
            | DeviceError::PermissionDenied { path }
            | DeviceError::DirectUnsupported { path }
            | DeviceError::Io { path, .. } => Some(path),
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::{fs, raid, table};
    use rustix::io::Errno;

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
            reason: Refusal::Signature(raid(
                "isw_raid_member",
                "a member of an Intel RST (isw) RAID set",
            )),
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: it is a member of an Intel RST (isw) RAID set (isw_raid_member)"
        );
        let e = DeviceError::Refused {
            path: "/dev/loop3".into(),
            reason: Refusal::OtherSignature {
                type_name: "futurefs".into(),
                usage: "filesystem".into(),
            },
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3: refusing to write: blkid finds a futurefs signature (filesystem) on it (use a device without data)"
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
}
