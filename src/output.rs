//! Where output goes: stdout carries only the requested output, diagnostics go to stderr, and a
//! closed pipe on either never crashes ssdlab (`ssdlab … | head -1` stops quietly, like ripgrep).
//! Output files are written next to their final name and renamed into place, so a failed write
//! never leaves half a file, and never over a file the command reads (checked by the caller with
//! `ssdlab_target::check_outputs`).

use crate::cli::{Failure, EXIT_FAILED};
use anyhow::anyhow;
use ssdlab_report::export::LogExporter;
use ssdlab_report::logs::LogKind;
use ssdlab_report::Exporter;
use ssdlab_stats::RunResult;
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
/// work starts: [`ssdlab_target::check_writable`].
pub fn check_writable_path(flag: &str, path: &Path) -> Result<(), String> {
    ssdlab_target::check_writable(flag, path)
}

/// Writes `bytes` to `path` whole or not at all (a new file next to it, renamed into place); a
/// symbolic link at `path` is written through, never replaced.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dest = ssdlab_target::resolve_output("output", path)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    ssdlab_target::outfile::write_whole(&dest, bytes)
}

/// Writes a set of files all or nothing as far as the filesystem allows: each into a temporary
/// file next to it (symbolic links written through, as [`write_file`]), and only when every one
/// is complete are they renamed into place; if a rename fails, the files this call newly created
/// are removed again (a file that existed before keeps whichever content it has).
pub fn write_files(files: &[(PathBuf, Vec<u8>)]) -> io::Result<()> {
    let with_path =
        |path: &Path, e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let mut temps = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let dest = ssdlab_target::resolve_output("output", path)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let existed = dest.exists();
        let mut tmp =
            ssdlab_target::outfile::AtomicFile::create(&dest).map_err(|e| with_path(path, e))?;
        tmp.write_all(bytes).map_err(|e| with_path(path, e))?;
        temps.push((path, dest, existed, tmp));
    }
    let mut placed: Vec<PathBuf> = Vec::new();
    for (path, dest, existed, tmp) in temps {
        if let Err(e) = tmp.commit() {
            for p in placed {
                let _ = std::fs::remove_file(p);
            }
            return Err(with_path(path, e));
        }
        if !existed {
            placed.push(dest);
        }
    }
    Ok(())
}

/// Prints a note on stderr once per process (sweeps build the same target for many points).
pub fn note_once(msg: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|s| s == msg) {
        eprintln!("ssdlab: note: {msg}");
        seen.push(msg.to_string());
    }
}

/// Says on stderr that `n` log files were written, naming the first.
pub fn note_logs_written(n: usize, first: &Path) {
    note(&format!(
        "wrote {n} log file{} ({} …)",
        if n == 1 { "" } else { "s" },
        first.display()
    ));
}

/// Prints the results in the chosen format, then writes the logs (all of them or none).
pub fn emit(
    exporter: &dyn Exporter,
    dest: &Dest,
    logs: &[(PathBuf, LogKind, u32)],
    results: &[RunResult],
) -> Result<(), Failure> {
    for n in results.iter().flat_map(|r| &r.notes) {
        note_once(n);
    }
    let bytes = exporter
        .serialize(results)
        .map_err(|e| Failure::new(EXIT_FAILED, e))?;
    match (dest.write_bytes(&bytes), dest) {
        (Ok(()), _) => {}
        (Err(e), Dest::Stdout) => {
            return Err(Failure::new(
                EXIT_FAILED,
                anyhow!("cannot write the results to stdout: {e}"),
            ))
        }
        // --output cannot be written (a full disk): the measurement goes to stdout instead of
        // being lost, and the failure is reported after it.
        (Err(e), Dest::File(p)) => {
            stdout_bytes(&bytes).map_err(|e2| {
                Failure::new(
                    EXIT_FAILED,
                    anyhow!(
                        "cannot write the results to {}: {e}, nor to stdout: {e2}",
                        p.display()
                    ),
                )
            })?;
            return Err(Failure::new(
                EXIT_FAILED,
                anyhow!(
                    "--output {}: {e} (the result was printed on stdout instead)",
                    p.display()
                ),
            ));
        }
    }
    if logs.is_empty() {
        return Ok(());
    }
    let files = logs
        .iter()
        .map(|(path, kind, job)| {
            let bytes = LogExporter {
                kind: *kind,
                job: *job,
            }
            .serialize(results)
            .map_err(|e| Failure::new(EXIT_FAILED, e))?;
            Ok((path.clone(), bytes))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    write_files(&files)
        .map_err(|e| Failure::new(EXIT_FAILED, anyhow!("cannot write the logs: {e}")))?;
    note_logs_written(files.len(), &files[0].0);
    Ok(())
}
