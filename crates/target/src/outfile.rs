//! Output files written whole or not at all: a new file next to the destination, renamed over it
//! once complete (so a full disk or a crash never leaves half a file, and the old content stays
//! until the new one is there). The destination must come from
//! [`crate::identity::resolve_output`], so symbolic links are written through, not replaced.

use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A file being written; dropped without [`AtomicFile::commit`], it disappears.
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    dest: PathBuf,
}

impl AtomicFile {
    /// Starts writing `dest` (a resolved output path). A new file gets the usual permissions
    /// (0666 less the umask); a replaced file keeps its own.
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
        let mode = std::fs::metadata(dest)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| Permissions::from_mode(0o666));
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .permissions(mode)
            .tempfile_in(&dir)?;
        Ok(AtomicFile {
            tmp,
            dest: dest.to_path_buf(),
        })
    }

    /// The file to write into.
    /// The temporary file being written (renamed to the destination by [`Self::commit`]).
    pub fn temp_path(&self) -> &Path {
        self.tmp.path()
    }

    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// Makes the new content durable and puts it in place.
    pub fn commit(self) -> io::Result<()> {
        self.tmp.as_file().sync_data()?;
        self.tmp.persist(&self.dest).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
}

/// Writes `bytes` to the resolved output path `dest` whole or not at all.
pub fn write_whole(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn replaces_whole_keeps_mode_and_follows_nothing_itself() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.txt");
        write_whole(&p, b"one").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let mode = std::fs::metadata(&p).unwrap().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600);
        assert_ne!(mode, 0o600, "not a private temp file's mode: {mode:o}");
        std::fs::set_permissions(&p, Permissions::from_mode(0o640)).unwrap();
        write_whole(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
        // An abandoned file leaves nothing behind.
        let mut f = AtomicFile::create(&d.path().join("never.txt")).unwrap();
        f.write_all(b"x").unwrap();
        drop(f);
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
