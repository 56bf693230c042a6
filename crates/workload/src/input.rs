//! Reading a file the user names as input (a job file, an included file, a trace): regular
//! files only, bounded, and never an abort.
//!
//! A FIFO or a character device (`/dev/zero`, `/dev/urandom`) is refused before it is opened:
//! opening a FIFO would block until a writer comes, and reading a device never ends. The file's
//! size is checked against a cap before anything is read, and the buffer is reserved with
//! `try_reserve`, so a file larger than the memory this process may take (`ulimit -v`, a cgroup)
//! is refused with its size rather than aborting the process.

use std::io::Read;
use std::path::Path;

/// Why an input file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("{size} bytes; at most {cap} bytes are read")]
    TooLarge { size: u64, cap: u64 },
    #[error("{size} bytes do not fit in the memory this process may take")]
    NoMemory { size: u64 },
    #[error("{0}")]
    Io(String),
}

/// What kind of file `meta` describes, in words.
pub fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// Reads the regular file `path` (links followed) whole, if it holds at most `cap` bytes.
pub fn read_input(path: &Path, cap: u64) -> Result<Vec<u8>, InputError> {
    let io = |e: std::io::Error| InputError::Io(e.to_string());
    // Checked before opening: opening a FIFO blocks.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(InputError::NotRegular(kind_of(&meta)));
    }
    let f = std::fs::File::open(path).map_err(io)?;
    // The file opened may not be the one looked at (renamed in between): looked at again.
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(InputError::NotRegular(kind_of(&meta)));
    }
    let size = meta.len();
    if size > cap {
        return Err(InputError::TooLarge { size, cap });
    }
    let mut f = f;
    if size == 0 {
        // Files of the kernel's pseudo-filesystems (/proc, /sys) say they are empty and then
        // produce data, some without end (/proc/self/pagemap, which also refuses reads of
        // less than 8 bytes): one read tells them apart.
        let mut probe = [0u8; 64];
        if !matches!(f.read(&mut probe), Ok(0)) {
            return Err(InputError::NotRegular(
                "a kernel pseudo-file, whose size is not known before it is read",
            ));
        }
        return Ok(Vec::new());
    }
    let mut buf: Vec<u8> = Vec::new();
    buf.try_reserve_exact(size as usize)
        .map_err(|_| InputError::NoMemory { size })?;
    // A file growing while read is cut at the cap.
    f.take(cap + 1).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > cap {
        return Err(InputError::TooLarge {
            size: buf.len() as u64,
            cap,
        });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_others_refused() {
        let d = tempfile_dir();
        let p = d.join("a.txt");
        std::fs::write(&p, b"hello\n").unwrap();
        assert_eq!(read_input(&p, 100).unwrap(), b"hello\n");
        // An empty file is empty; a /proc file that says it is empty is not read.
        std::fs::write(d.join("empty"), b"").unwrap();
        assert!(read_input(&d.join("empty"), 100).unwrap().is_empty());
        assert!(matches!(
            read_input(std::path::Path::new("/proc/self/pagemap"), 1 << 40),
            Err(InputError::NotRegular(_))
        ));
        assert_eq!(
            read_input(&p, 3).unwrap_err(),
            InputError::TooLarge { size: 6, cap: 3 }
        );
        assert_eq!(
            read_input(&d, 100).unwrap_err(),
            InputError::NotRegular("a directory")
        );
        assert_eq!(
            read_input(Path::new("/dev/zero"), 100).unwrap_err(),
            InputError::NotRegular("a character device")
        );
        let fifo = d.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
        // Refused without opening (which would block the test forever).
        assert_eq!(
            read_input(&fifo, 100).unwrap_err(),
            InputError::NotRegular("a FIFO")
        );
        assert!(matches!(
            read_input(&d.join("missing"), 100),
            Err(InputError::Io(_))
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    extern "C" {
        fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ssdlab-input-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
