//! Where output goes: stdout carries only the requested output, diagnostics go to stderr, and a
//! closed pipe on either never crashes ssdlab (`ssdlab … | head -1` stops quietly, like ripgrep).
//! Output files are written next to their final name and renamed into place, so a failed write
//! never leaves half a file, and never over a file the command reads (checked by the caller with
//! `ssdlab_target::check_outputs`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints `ssdlab: MSG` on stderr; errors (a closed stderr) are ignored.
pub fn note(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "ssdlab: {msg}");
}

/// Writes `text` to stdout. A closed pipe is not an error: the reader has what it wanted, and
/// nothing more is written.
pub fn stdout(text: &str) -> io::Result<()> {
    stdout_bytes(text.as_bytes())
}

/// Writes `bytes` to stdout, with the closed-pipe rule of [`stdout`].
pub fn stdout_bytes(bytes: &[u8]) -> io::Result<()> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut so = io::stdout().lock();
    match so.write_all(bytes).and_then(|_| so.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// A writer on stdout for streamed output (large listings), with the same closed-pipe rule.
pub struct StdoutStream {
    inner: io::BufWriter<io::Stdout>,
}

impl StdoutStream {
    pub fn new() -> StdoutStream {
        StdoutStream {
            inner: io::BufWriter::with_capacity(1 << 16, io::stdout()),
        }
    }

    /// Finishes the stream (flushes); a closed pipe is fine.
    pub fn finish(mut self) -> io::Result<()> {
        quiet_pipe(self.inner.flush())
    }
}

impl Default for StdoutStream {
    fn default() -> Self {
        Self::new()
    }
}

fn quiet_pipe(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

impl Write for StdoutStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if STDOUT_CLOSED.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
                Ok(buf.len())
            }
            other => other,
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        quiet_pipe(self.inner.flush())
    }
}

/// True once stdout turned out to be a closed pipe (streams can stop early).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// An output destination given on the command line: a file, or stdout for `-` (or nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dest {
    Stdout,
    File(PathBuf),
}

impl Dest {
    pub fn from_arg(p: Option<&Path>) -> Dest {
        match p {
            None => Dest::Stdout,
            Some(p) if p == Path::new("-") => Dest::Stdout,
            Some(p) => Dest::File(p.to_path_buf()),
        }
    }

    /// The file, when it is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Dest::File(p) => Some(p),
            Dest::Stdout => None,
        }
    }

    /// Writes `text` to the destination.
    pub fn write(&self, text: &str) -> io::Result<()> {
        self.write_bytes(text.as_bytes())
    }

    /// Writes `bytes` to the destination.
    pub fn write_bytes(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Dest::Stdout => stdout_bytes(bytes),
            Dest::File(p) => write_file(p, bytes),
        }
    }
}

/// Checks that `path` can be written as a regular file (`flag` names it in errors) before any
/// work starts.
pub fn check_writable_path(flag: &str, path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(format!(
            "{flag} {}: exists and is not a regular file",
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = parent_dir(path);
            if parent.is_dir() {
                Ok(())
            } else {
                Err(format!(
                    "{flag} {}: directory {} does not exist",
                    path.display(),
                    parent.display()
                ))
            }
        }
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Writes `bytes` to `path`: into a new temporary file next to it, then renamed over it, so the
/// old content stays whole until the new one is complete.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(&dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    // Keep the permissions of a file being replaced.
    if let Ok(m) = std::fs::metadata(path) {
        let _ = tmp.as_file().set_permissions(m.permissions());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes a set of files all or nothing: each into a temporary file next to it, and only when
/// every one is complete are they renamed into place; if a rename fails, the files already
/// renamed are removed again.
pub fn write_files(files: &[(PathBuf, Vec<u8>)]) -> io::Result<()> {
    let mut temps = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let dir = parent_dir(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        tmp.write_all(bytes)
            .and_then(|_| tmp.as_file().sync_data())
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        temps.push((path, tmp));
    }
    let mut placed: Vec<&Path> = Vec::new();
    for (path, tmp) in temps {
        if let Err(e) = tmp.persist(path) {
            for p in placed {
                let _ = std::fs::remove_file(p);
            }
            return Err(io::Error::new(
                e.error.kind(),
                format!("{}: {}", path.display(), e.error),
            ));
        }
        placed.push(path);
    }
    Ok(())
}
