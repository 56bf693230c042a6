//! Laying out regular files: create (never truncate) and extend with real data, interruptibly,
//! with an undo record so a run that cannot go on gives the filesystem back what it took.
//!
//! - A missing file is created with `O_CREAT|O_EXCL` (mode 0644, never `O_TRUNC`).
//! - A short file is extended by writing pseudo-random non-zero data from its current end
//!   (1 MiB chunks, synced every [`SYNC_EVERY`] bytes so the final sync is short and Ctrl-C is
//!   noticed within a second). Existing bytes are never touched and the file never shrinks below
//!   its original length.
//! - When writing fails (ENOSPC, EIO) or the stop flag is raised, the file is given back: removed
//!   when this call created it, cut back to its original length when it extended it.
//! - [`Undo`] lets a caller roll back a layout that succeeded, when the run cannot start after all.
//!
//! fio lays files out differently for jobs that only write ([`Fill`]): it allocates the space
//! (`fallocate`, unwritten extents the first writes convert) instead of writing data, or makes
//! a sparse file, or nothing; [`lay_out_with`] does that, with the same undo record.

use crate::error::DeviceError;
use crate::probe::{
    file_type_of, open_existing_regular, probe, statx_fd, wrong_type, FileId, PathKind, TargetInfo,
};
use rustix::fs::{FallocateFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Fill chunk size when extending a file.
const FILL_CHUNK: usize = 1 << 20;

/// Cheap xorshift64 generator for non-zero fill data.
pub(crate) struct XorShift(pub(crate) u64);

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
    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            for (d, s) in chunk.iter_mut().zip(v) {
                *d = if s == 0 { 0x5A } else { s };
            }
        }
    }
}

/// Data written between two syncs while laying out (bounds the dirty data, so the final sync and
/// an interrupt are quick).
pub const SYNC_EVERY: u64 = 128 << 20;

/// How a file that could not be laid out was given back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    /// The file this run created was removed.
    Removed,
    /// The file was cut back to its original length (bytes).
    Truncated(u64),
    /// Giving the file back failed too (the reason).
    Failed(String),
    /// Nothing was written to this file.
    Untouched,
    /// The path no longer names the file laid out: something else removed or replaced it
    /// meanwhile (the reason); it was left alone.
    Gone(String),
    /// What happened to this file, and to the files laid out before it in the same run.
    Also { first: Box<Cleanup>, others: String },
}

impl fmt::Display for Cleanup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cleanup::Removed => write!(f, "removed the file this run created"),
            Cleanup::Truncated(n) => {
                write!(f, "gave the file back its original length ({n} bytes)")
            }
            Cleanup::Failed(why) => write!(f, "and could not give the file back: {why}"),
            Cleanup::Untouched => write!(f, "nothing was written to it"),
            Cleanup::Gone(why) => write!(f, "{why} while it was laid out; left alone"),
            Cleanup::Also { first, others } => {
                write!(
                    f,
                    "{first}; the files laid out before it were given back ({others})"
                )
            }
        }
    }
}

/// Why laying out a file failed.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Refused before anything was written (the path is not a regular file, cannot be created…).
    #[error(transparent)]
    Refused(#[from] DeviceError),
    /// Writing failed part way; the file was given back as `cleanup` says.
    #[error("{}: {what}: {err}; {cleanup}", path.display())]
    Failed {
        path: PathBuf,
        what: &'static str,
        err: io::Error,
        cleanup: Cleanup,
    },
    /// A later file of the same layout was refused after earlier ones had been laid out; those
    /// were given back as `cleanup` says.
    #[error("{err}; {cleanup}")]
    RefusedAfter { err: DeviceError, cleanup: Cleanup },
    /// The stop flag was raised (Ctrl-C, SIGTERM); the file was given back as `cleanup` says.
    #[error("{}: laying out was interrupted; {cleanup}", path.display())]
    Interrupted { path: PathBuf, cleanup: Cleanup },
}

impl LayoutError {
    /// True when nothing on disk was changed (the error came before the first byte).
    pub fn nothing_written(&self) -> bool {
        matches!(self, LayoutError::Refused(_))
    }
}

/// What a layout changed, to give it back ([`Undo::undo`]) when the run cannot start after all.
#[derive(Debug)]
pub struct Undo {
    path: PathBuf,
    file: File,
    /// `None`: this layout created the file; `Some(n)`: it extended it from `n` bytes.
    original_len: Option<u64>,
    dev: u64,
    ino: u64,
}

impl Undo {
    /// The path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the file back: removes it if this layout created it (and the path still names the
    /// same file), or cuts it back to its original length.
    pub fn undo(self) -> Cleanup {
        // Give back only what we laid out: the path must still name our inode (another process
        // may have removed or replaced it meanwhile).
        match std::fs::metadata(&self.path) {
            Ok(m) if m.dev() == self.dev && m.ino() == self.ino => {}
            Ok(_) => return Cleanup::Gone("another file was put at its path".into()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Cleanup::Gone("it was removed by something else".into())
            }
            Err(e) => return Cleanup::Failed(format!("cannot inspect it: {e}")),
        }
        match self.original_len {
            Some(n) => match self.file.set_len(n).and_then(|_| self.file.sync_data()) {
                Ok(()) => Cleanup::Truncated(n),
                Err(e) => Cleanup::Failed(format!("cannot cut it back to {n} bytes: {e}")),
            },
            // Created here: the name itself (not a link put in its place) must be ours.
            None => match std::fs::symlink_metadata(&self.path) {
                Ok(m) if m.dev() == self.dev && m.ino() == self.ino => {
                    match std::fs::remove_file(&self.path) {
                        Ok(()) => Cleanup::Removed,
                        Err(e) => Cleanup::Failed(format!("cannot remove it: {e}")),
                    }
                }
                _ => Cleanup::Gone("another file was put at its path".into()),
            },
        }
    }
}

/// A laid-out file: its fresh probe, and the undo record when something was written.
#[derive(Debug)]
pub struct Laid {
    pub info: TargetInfo,
    pub undo: Option<Undo>,
}

/// How a file is made as long as a job needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// Written with pseudo-random data, synced (fio's layout for jobs that read, or that write
    /// with `overwrite=1`).
    #[default]
    Data,
    /// fio's `fallocate=native`/`posix` (its default for jobs that only write): the space
    /// allocated as unwritten extents, nothing written (where the filesystem cannot allocate,
    /// the file is extended sparse and a note says so).
    Allocate,
    /// fio's `fallocate=keep`: the space allocated past the end of the file, whose length does
    /// not change (the writes extend it).
    AllocateKeepSize,
    /// fio's `fallocate=truncate`: the length set, no space allocated (a sparse file).
    Truncate,
    /// fio's `fallocate=none` (or `create_on_open`): the file created (or kept) as it is; the
    /// writes extend it.
    Nothing,
}

/// What a layout written with data writes (fio's `extend_file` fills each write of the job's
/// largest write size with its buffers, `fill_io_buffer`): `pattern` in writes of `write`
/// bytes; without one, pseudo-random data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutData {
    pub pattern: ssdlab_workload::Pattern,
    pub write: u64,
}

/// Makes sure a regular file exists and is at least `needed_size` bytes long (see the module
/// docs). `stop` is polled between chunks. Returns a fresh [`probe`] and, when the file was
/// created or extended, the [`Undo`] record. Anything that is not a regular file is refused.
pub fn lay_out(
    info: &TargetInfo,
    needed_size: u64,
    stop: Option<&AtomicBool>,
) -> Result<Laid, LayoutError> {
    lay_out_with(info, needed_size, stop, Fill::Data, None, &|_| {})
}

/// [`lay_out`], making the file as `fill` says, with `data` when it writes data (`on_note`
/// hears about a fallback).
pub fn lay_out_with(
    info: &TargetInfo,
    needed_size: u64,
    stop: Option<&AtomicBool>,
    fill: Fill,
    data: Option<LayoutData>,
    on_note: &dyn Fn(&str),
) -> Result<Laid, LayoutError> {
    let path = info.path.as_path();
    if info.kind != PathKind::File {
        return Err(DeviceError::NotRegularFile {
            path: path.to_path_buf(),
            kind: info.kind.name(),
        }
        .into());
    }
    // Re-probe: never trust a possibly stale `info` before writing.
    let now = probe(path)?;
    if now.kind != PathKind::File {
        return Err(DeviceError::NotRegularFile {
            path: path.to_path_buf(),
            kind: now.kind.name(),
        }
        .into());
    }
    if now.exists && now.size >= needed_size {
        return Ok(Laid {
            info: now,
            undo: None,
        });
    }
    let common = OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    let (fd, created): (OwnedFd, bool) = if now.exists {
        (open_existing_regular(path, common)?, false)
    } else {
        match rustix::fs::open(
            path,
            common | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => (fd, true),
            // Someone created it between the probe and now: treat it as existing.
            Err(Errno::EXIST) => (open_existing_regular(path, common)?, false),
            Err(e) => return Err(DeviceError::io(path, "cannot create", e).into()),
        }
    };
    let stx = match statx_fd(&fd) {
        Ok(stx) => stx,
        Err(e) => {
            let file = File::from(fd);
            if created {
                let _ = std::fs::remove_file(path);
            }
            drop(file);
            return Err(DeviceError::io(path, "cannot inspect", e).into());
        }
    };
    if file_type_of(&stx) != FileType::RegularFile {
        return Err(wrong_type(path, file_type_of(&stx)).into());
    }
    let file = File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| DeviceError::io(path, "cannot inspect", e))?;
    let original = stx.stx_size;
    let undo = Undo {
        path: path.to_path_buf(),
        file,
        original_len: (!created).then_some(original),
        dev: meta.dev(),
        ino: meta.ino(),
    };
    let fail = |undo: Undo, what: &'static str, err: io::Error| LayoutError::Failed {
        path: path.to_path_buf(),
        what,
        err,
        cleanup: undo.undo(),
    };
    if fill != Fill::Data {
        let fd = undo.file.as_fd();
        let more = needed_size - original;
        let r = match fill {
            Fill::Allocate => {
                match rustix::fs::fallocate(fd, FallocateFlags::empty(), original, more) {
                    Err(Errno::OPNOTSUPP) | Err(Errno::NOSYS) => {
                        on_note(&format!(
                            "{}: the filesystem cannot allocate space (fallocate); the file is extended sparse",
                            path.display()
                        ));
                        undo.file.set_len(needed_size)
                    }
                    r => r.map_err(io::Error::from),
                }
            }
            Fill::AllocateKeepSize => {
                rustix::fs::fallocate(fd, FallocateFlags::KEEP_SIZE, original, more)
                    .map_err(io::Error::from)
            }
            Fill::Truncate => undo.file.set_len(needed_size),
            Fill::Nothing | Fill::Data => Ok(()),
        };
        if let Err(e) = r {
            return Err(fail(undo, "cannot allocate the file's space", e));
        }
        return match probe(path) {
            Ok(info) => Ok(Laid {
                info,
                undo: Some(undo),
            }),
            Err(e) => {
                let _ = undo.undo();
                Err(e.into())
            }
        };
    }
    let mut len = original;
    let mut since_sync = 0u64;
    let mut rng = XorShift((0x9E37_79B9_7F4A_7C15 ^ len.rotate_left(17) ^ needed_size) | 1);
    // (with a pattern, whole writes of it in each chunk, so that each starts it again)
    let write = data.map_or(FILL_CHUNK, |d| d.write.clamp(1, usize::MAX as u64) as usize);
    let chunk = (FILL_CHUNK / write).max(1) * write;
    let mut data_rng = ssdlab_workload::rng::Rng::new(rng.0);
    let mut buf = vec![0u8; chunk];
    while len < needed_size {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(LayoutError::Interrupted {
                path: path.to_path_buf(),
                cleanup: undo.undo(),
            });
        }
        let n = (needed_size - len).min(chunk as u64) as usize;
        match data {
            Some(d) => {
                for w in buf[..n].chunks_mut(write) {
                    d.pattern.fill(&mut data_rng, w);
                }
            }
            None => rng.fill(&mut buf[..n]),
        }
        if let Err(e) = undo.file.write_all_at(&buf[..n], len) {
            return Err(fail(undo, "cannot extend the file", e));
        }
        len += n as u64;
        since_sync += n as u64;
        if since_sync >= SYNC_EVERY {
            since_sync = 0;
            if let Err(e) = undo.file.sync_data() {
                return Err(fail(undo, "cannot sync the file", e));
            }
        }
    }
    if let Err(e) = undo.file.sync_data() {
        return Err(fail(undo, "cannot sync the file", e));
    }
    // The fresh probe must see the file just laid out: a path swapped meanwhile (for a link
    // to a device, say) is refused, never opened later as if it had been checked.
    let laid_id = statx_fd(&undo.file).ok().and_then(|s| FileId::of(&s));
    match probe(path) {
        Ok(info) if info.kind == PathKind::File && info.id.is_some() && info.id == laid_id => {
            Ok(Laid {
                info,
                undo: Some(undo),
            })
        }
        Ok(info) => {
            let cleanup = undo.undo();
            Err(LayoutError::Failed {
                path: path.to_path_buf(),
                what: "changed while it was laid out",
                err: io::Error::other(match info.kind {
                    PathKind::BlockDevice => "the path now names a block device",
                    PathKind::File => "the path now names another file",
                    PathKind::CharDevice => "the path now names a character device",
                }),
                cleanup,
            })
        }
        Err(e) => {
            let _ = undo.undo();
            Err(e.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_fill_is_nonzero() {
        let mut b = vec![0u8; 4099];
        XorShift(1).fill(&mut b);
        assert!(b.iter().all(|&x| x != 0));
    }

    /// A path swapped for another file after it was checked is not opened: the run would
    /// write to what was never checked (issue 25's hostile campaign: a file swapped for a link
    /// to a loop device holding ext4 after its layout took 11,665 writes).
    #[test]
    fn a_path_swapped_after_the_check_is_not_opened() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.img");
        std::fs::write(&p, vec![1u8; 65536]).unwrap();
        let info = probe(&p).unwrap();
        assert!(crate::open_target(&info, true, false).is_ok());
        // (kept alive by a second name, so that no file made below can be given its inode
        // number within the same clock tick: the identity is device, inode and birth time)
        std::fs::hard_link(&p, d.path().join("kept")).unwrap();
        // Another file renamed over it, then a link to another file.
        let q = d.path().join("other");
        std::fs::write(&q, b"theirs").unwrap();
        std::fs::rename(&q, &p).unwrap();
        let e = crate::open_target(&info, true, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("changed since it was checked (now another file)"),
            "{e}"
        );
        let r = d.path().join("r");
        std::fs::write(&r, b"theirs too").unwrap();
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&r, &p).unwrap();
        assert!(crate::open_target(&info, true, false).is_err());
        assert_eq!(std::fs::read(&r).unwrap(), b"theirs too");
        // The laid-out file itself is recognised.
        std::fs::remove_file(&p).unwrap();
        let fresh = probe(&p).unwrap();
        let laid = lay_out(&fresh, 64 << 10, None).unwrap();
        assert!(crate::open_target(&laid.info, true, false).is_ok());
    }

    /// A file removed or replaced by another process while it was laid out is left alone and
    /// the cleanup says so (it used to say "gave the file back its original length").
    #[test]
    fn undo_leaves_alone_a_file_removed_or_replaced_meanwhile() {
        let d = tempfile::tempdir().unwrap();
        for (existing, replace) in [(true, false), (true, true), (false, false), (false, true)] {
            let p = d.path().join("f.img");
            let _ = std::fs::remove_file(&p);
            if existing {
                std::fs::write(&p, vec![1u8; 4096]).unwrap();
            }
            let laid = lay_out(&probe(&p).unwrap(), 64 << 10, None).unwrap();
            let undo = laid.undo.expect("written");
            std::fs::remove_file(&p).unwrap();
            if replace {
                std::fs::write(&p, b"theirs").unwrap();
            }
            let c = undo.undo();
            assert!(matches!(c, Cleanup::Gone(_)), "{existing} {replace}: {c}");
            let text = c.to_string();
            assert!(text.contains("left alone"), "{text}");
            if replace {
                assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
            } else {
                assert!(!p.exists());
            }
        }
        // Still ours: given back as before.
        let p = d.path().join("g.img");
        std::fs::write(&p, vec![1u8; 4096]).unwrap();
        let undo = lay_out(&probe(&p).unwrap(), 64 << 10, None)
            .unwrap()
            .undo
            .unwrap();
        assert_eq!(undo.undo(), Cleanup::Truncated(4096));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4096);
    }
}
