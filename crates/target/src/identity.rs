//! "Is this the same file?" for the rule that no output may name an input: the same device and
//! inode, or two spellings of a path that does not exist yet (after following symlinks, including
//! dangling ones that a write would follow and create).

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathId {
    /// An existing regular file, directory…: its device and inode.
    Inode { dev: u64, ino: u64 },
    /// An existing block or character device: the device number it stands for (two nodes of
    /// one device are the same target).
    Device { rdev: u64 },
    /// A path that does not exist yet: its parent directory and the name in it.
    Missing {
        parent_dev: u64,
        parent_ino: u64,
        name: OsString,
    },
}

/// Whether `m` (a path's metadata) is the regular file standard output is redirected to: an
/// output written there would overwrite the report, and a file renamed into place would lose
/// it. Standard output that is a terminal, a pipe or a device is no file of a path.
#[allow(clippy::unnecessary_cast)] // st_dev and st_ino are u64 or u32 depending on the target
pub fn is_stdout_file(m: &fs::Metadata) -> bool {
    use std::os::fd::AsFd;
    let Ok(out) = rustix::fs::fstat(io::stdout().as_fd()) else {
        return false;
    };
    rustix::fs::FileType::from_raw_mode(out.st_mode) == rustix::fs::FileType::RegularFile
        && m.is_file()
        && m.dev() == out.st_dev as u64
        && m.ino() == out.st_ino as u64
}

/// Symlinks followed at most (like the kernel's limit).
const MAX_LINKS: usize = 40;

impl PathId {
    /// The identity of `path`. Symlinks are followed; a dangling symlink is followed to the path
    /// that writing through it would create.
    pub fn of(path: &Path) -> io::Result<PathId> {
        let mut p = path.to_path_buf();
        for _ in 0..MAX_LINKS {
            match fs::metadata(&p) {
                Ok(m) => {
                    let ft = m.file_type();
                    return Ok(if ft.is_block_device() || ft.is_char_device() {
                        PathId::Device { rdev: m.rdev() }
                    } else {
                        PathId::Inode {
                            dev: m.dev(),
                            ino: m.ino(),
                        }
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // A dangling symlink: continue with what it points to.
                    if let Ok(lm) = fs::symlink_metadata(&p) {
                        if lm.file_type().is_symlink() {
                            let target = fs::read_link(&p)?;
                            p = if target.is_absolute() {
                                target
                            } else {
                                parent_dir(&p).join(target)
                            };
                            continue;
                        }
                    }
                    let name = p.file_name().map(|n| n.to_os_string()).ok_or_else(|| {
                        io::Error::new(io::ErrorKind::InvalidInput, "no file name")
                    })?;
                    // (directories missing too, which fio's create_work_dirs would make: the
                    // nearest existing one and the path below it)
                    let mut rest = PathBuf::from(name);
                    let mut dir = parent_dir(&p);
                    let parent = loop {
                        match fs::metadata(&dir) {
                            Ok(m) => break m,
                            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                                let Some(n) = dir.file_name() else {
                                    return Err(e);
                                };
                                rest = Path::new(n).join(rest);
                                dir = parent_dir(&dir);
                            }
                            Err(e) => return Err(e),
                        }
                    };
                    return Ok(PathId::Missing {
                        parent_dev: parent.dev(),
                        parent_ino: parent.ino(),
                        name: rest.into_os_string(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("too many levels of symbolic links"))
    }
}

fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Why a path cannot be written as an output file.
#[derive(Debug, thiserror::Error)]
pub enum OutputPathError {
    #[error("{flag} {}: exists and is not a regular file", path.display())]
    NotRegular { flag: String, path: PathBuf },
    #[error("{flag} {}: directory {} does not exist", path.display(), dir.display())]
    NoDirectory {
        flag: String,
        path: PathBuf,
        dir: PathBuf,
    },
    #[error("{flag} {}: cannot write in {}: {why}", path.display(), dir.display())]
    NotWritable {
        flag: String,
        path: PathBuf,
        dir: PathBuf,
        why: String,
    },
    #[error("{flag} {}: is on {fs}, not a place for files{hint}", path.display())]
    Pseudo {
        flag: String,
        path: PathBuf,
        fs: &'static str,
        hint: &'static str,
    },
    #[error("{flag} {}: too many levels of symbolic links", path.display())]
    LinkLoop { flag: String, path: PathBuf },
}

/// Where writing to `path` really lands: symbolic links are followed (a dangling one to the file a
/// write through it would create), so an output replaces the file a link points to, never the
/// link itself. The result is checked as a place for a regular file: an existing non-file, a
/// missing or unwritable directory, a read-only filesystem, or a kernel pseudo-filesystem
/// (`/proc/self/fd/1`, `/dev/stdout`: use `-` for stdout) is refused. `flag` names the option
/// in errors. Nothing is created.
pub fn resolve_output(flag: &str, path: &Path) -> Result<PathBuf, OutputPathError> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| OutputPathError::NotWritable {
                    flag: flag.to_string(),
                    path: path.to_path_buf(),
                    dir: parent_dir(&p),
                    why: format!("cannot read the link: {e}"),
                })?;
                p = if to.is_absolute() {
                    to
                } else {
                    parent_dir(&p).join(to)
                };
            }
            Ok(m) => {
                if !m.file_type().is_file() {
                    return Err(OutputPathError::NotRegular {
                        flag: flag.to_string(),
                        path: path.to_path_buf(),
                    });
                }
                check_dir(flag, path, &parent_dir(&p))?;
                return Ok(p);
            }
            Err(_) => {
                let dir = parent_dir(&p);
                if !dir.is_dir() {
                    return Err(OutputPathError::NoDirectory {
                        flag: flag.to_string(),
                        path: path.to_path_buf(),
                        dir,
                    });
                }
                check_dir(flag, path, &dir)?;
                return Ok(p);
            }
        }
    }
    Err(OutputPathError::LinkLoop {
        flag: flag.to_string(),
        path: path.to_path_buf(),
    })
}

/// A directory ssdlab may create files in: not a pseudo-filesystem or `/dev`, writable, not on a
/// read-only filesystem.
fn check_dir(flag: &str, path: &Path, dir: &Path) -> Result<(), OutputPathError> {
    if let Err(crate::DeviceError::PseudoFilesystem { fs, .. }) =
        crate::probe::check_not_pseudo(path, dir)
    {
        return Err(OutputPathError::Pseudo {
            flag: flag.to_string(),
            path: path.to_path_buf(),
            fs,
            hint: if fs == "procfs" {
                " (use - for stdout)"
            } else {
                ""
            },
        });
    }
    if fs::canonicalize(dir).is_ok_and(|d| d.starts_with("/dev")) {
        return Err(OutputPathError::Pseudo {
            flag: flag.to_string(),
            path: path.to_path_buf(),
            fs: "/dev",
            hint: " (use - for stdout)",
        });
    }
    let not_writable = |why: String| OutputPathError::NotWritable {
        flag: flag.to_string(),
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        why,
    };
    if let Ok(st) = rustix::fs::statvfs(dir) {
        if st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) {
            return Err(not_writable("read-only filesystem".into()));
        }
    }
    rustix::fs::access(
        dir,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )
    .map_err(|e| not_writable(e.to_string()))?;
    Ok(())
}

/// A path given to a command and the role it plays there ("--target", "RAID 0 member", "store",
/// "sweep file"…).
#[derive(Debug, Clone)]
pub struct Named<'a> {
    pub role: &'a str,
    pub path: &'a Path,
}

/// Checks that `path` can be written as a regular file (`flag` names it in errors) before any
/// work starts: see [`resolve_output`] (links followed, directory writable, not a
/// pseudo-filesystem), and never inside ssdlab's verify-map directory.
pub fn check_writable(flag: &str, path: &Path) -> Result<(), String> {
    let dest = resolve_output(flag, path).map_err(|e| e.to_string())?;
    if crate::written::is_in_map_dir(&dest) {
        return Err(format!(
            "{flag} {}: is inside ssdlab's verify-map directory; choose another place",
            path.display()
        ));
    }
    Ok(())
}

/// Checks a file that is opened or created in place (a results store): writable when missing
/// ([`check_writable`]), else a regular file.
pub fn check_file_or_new(flag: &str, path: &Path) -> Result<(), String> {
    if !path.exists() {
        check_writable(flag, path)
    } else if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        Err(format!(
            "{flag} {}: exists and is not a regular file",
            path.display()
        ))
    } else {
        Ok(())
    }
}

/// Error: an output names one of the command's inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{out_role} {out} names the same file as {in_role} {input}; refusing to overwrite it")]
pub struct SameFile {
    pub out_role: String,
    pub out: String,
    pub in_role: String,
    pub input: String,
}

/// Checks that no output names the same file as any input (or another output). Paths whose
/// identity cannot be found (an unreadable parent, say) are left to the later open to report.
pub fn check_outputs(outputs: &[Named<'_>], inputs: &[Named<'_>]) -> Result<(), SameFile> {
    let ids = |list: &[Named<'_>]| -> Vec<Option<PathId>> {
        list.iter().map(|n| PathId::of(n.path).ok()).collect()
    };
    let out_ids = ids(outputs);
    let in_ids = ids(inputs);
    for (i, (o, oid)) in outputs.iter().zip(&out_ids).enumerate() {
        let Some(oid) = oid else { continue };
        let clash = inputs
            .iter()
            .zip(&in_ids)
            .chain(outputs[..i].iter().zip(&out_ids[..i]))
            .find(|(_, id)| id.as_ref() == Some(oid));
        if let Some((n, _)) = clash {
            return Err(SameFile {
                out_role: o.role.to_string(),
                out: o.path.display().to_string(),
                in_role: n.role.to_string(),
                input: n.path.display().to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named<'a>(role: &'a str, path: &'a Path) -> Named<'a> {
        Named { role, path }
    }

    #[test]
    fn same_file_by_inode_link_and_spelling() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.img");
        fs::write(&a, b"x").unwrap();
        let dotted = d.path().join(".").join("a.img");
        let link = d.path().join("l");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let hard = d.path().join("h");
        fs::hard_link(&a, &hard).unwrap();
        for other in [&a, &dotted, &link, &hard] {
            let e =
                check_outputs(&[named("--output", other)], &[named("--target", &a)]).unwrap_err();
            assert_eq!(e.in_role, "--target");
        }
        let b = d.path().join("b.out");
        check_outputs(&[named("--output", &b)], &[named("--target", &a)]).unwrap();
    }

    #[test]
    fn missing_paths_and_dangling_links() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("new.img"); // created by the run later
        let dangling = d.path().join("out");
        std::os::unix::fs::symlink("new.img", &dangling).unwrap();
        let sub = d.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let via_dotdot = sub.join("..").join("new.img");
        for o in [&t, &dangling, &via_dotdot] {
            assert!(
                check_outputs(&[named("--output", o)], &[named("--target", &t)]).is_err(),
                "{}",
                o.display()
            );
        }
        // Two outputs naming one file clash too.
        let c = d.path().join("c.csv");
        assert!(check_outputs(&[named("--csv", &c), named("--html", &c)], &[]).is_err());
    }
}
