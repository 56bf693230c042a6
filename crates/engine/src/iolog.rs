//! fio's `write_iolog`: every I/O a worker issues is written as a fio version 3 iolog line
//! (microseconds since the start of the run on the backend's clock, the file name, the action,
//! offset and length) by a backend wrapper, one temporary file per worker next to the log; when
//! the run ends the workers' files are merged in time order into the log (written to a temporary
//! file and renamed into place, so a failed run never leaves half a log).

use crate::backend::{Backend, Cqe};
use ssdlab_stats::MemberStats;
use ssdlab_workload::replay::IologLine;
use ssdlab_workload::Op;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where a run's iolog goes and the file name its lines carry.
#[derive(Debug, Clone)]
pub struct IologTarget {
    pub path: PathBuf,
    /// The file name written in every line (the target's path; a simulated drive's name).
    pub file_name: String,
    /// A job with several files: where each begins in the job's address space and its name
    /// (ascending); each I/O's line then names its file and the offset in it. Empty: one file.
    pub files: Vec<(u64, String)>,
    /// A later phase of the job that wrote the log (fio's verify phase): its I/Os are added
    /// to the log, between `open` and `close` lines, their times counted from this many µs
    /// after the log began.
    pub after_us: Option<u64>,
}

impl IologTarget {
    /// A log whose lines all name `file_name`.
    pub fn new(path: PathBuf, file_name: String) -> IologTarget {
        IologTarget {
            path,
            file_name,
            files: Vec::new(),
            after_us: None,
        }
    }

    /// The file an I/O's line names, and the I/O with its offset in that file.
    #[inline]
    pub(crate) fn locate(&self, op: &Op) -> (&str, Op) {
        if self.files.is_empty() {
            return (&self.file_name, *op);
        }
        let i = self
            .files
            .partition_point(|(b, _)| *b <= op.offset)
            .saturating_sub(1);
        let (base, name) = &self.files[i];
        (
            name,
            Op {
                offset: op.offset - base.min(&op.offset),
                ..*op
            },
        )
    }

    /// The names the log's `add`, `open` and `close` lines give, in order.
    fn names(&self) -> Vec<&str> {
        if self.files.is_empty() {
            vec![&self.file_name]
        } else {
            self.files.iter().map(|(_, n)| n.as_str()).collect()
        }
    }

    /// The temporary file of worker `w`.
    fn part(&self, w: usize) -> PathBuf {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "iolog".into());
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        dir.join(format!(".{name}.ssdlab-{}-{w}.part", std::process::id()))
    }

    /// Opens worker `w`'s temporary file.
    pub(crate) fn open_part(&self, w: usize) -> io::Result<PartWriter> {
        let path = self.part(w);
        let f = File::create(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("write_iolog {}: {e}", self.path.display()),
            )
        })?;
        Ok(PartWriter {
            out: BufWriter::with_capacity(1 << 16, f),
            path,
            line: String::with_capacity(96),
            failed: None,
        })
    }

    /// Merges the workers' files (each in time order) into the log and removes them.
    pub(crate) fn finish(&self, parts: Vec<PartWriter>, t_end_us: u64) -> io::Result<()> {
        let mut paths = Vec::new();
        let mut first_err = None;
        for p in parts {
            paths.push(p.path.clone());
            if let Err(e) = p.close() {
                first_err.get_or_insert(e);
            }
        }
        let result = match first_err {
            Some(e) => Err(e),
            None => self.merge(&paths, t_end_us),
        };
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
        result.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("write_iolog {}: {e}", self.path.display()),
            )
        })
    }

    /// Removes the workers' files (a run that did not finish).
    pub(crate) fn abandon(&self, parts: Vec<PartWriter>) {
        for p in parts {
            let path = p.path.clone();
            drop(p);
            let _ = std::fs::remove_file(path);
        }
    }

    fn merge(&self, parts: &[PathBuf], t_end_us: u64) -> io::Result<()> {
        let tmp = self.part(usize::MAX);
        // (a later phase is added to the log as it is; a new log is renamed into place whole)
        let (file, at) = match self.after_us {
            Some(at) => (
                std::fs::OpenOptions::new().append(true).open(&self.path)?,
                at,
            ),
            None => (File::create(&tmp)?, 0),
        };
        let result = (|| {
            let mut out = BufWriter::with_capacity(1 << 16, file);
            let mut head = String::new();
            if self.after_us.is_none() {
                head.push_str(IologLine::HEADER);
                for n in self.names() {
                    IologLine::file_action(&mut head, 0, n, "add");
                }
            }
            for n in self.names() {
                IologLine::file_action(&mut head, at, n, "open");
            }
            out.write_all(head.as_bytes())?;
            let mut readers: Vec<std::io::Lines<BufReader<File>>> = parts
                .iter()
                .map(|p| File::open(p).map(|f| BufReader::with_capacity(1 << 16, f).lines()))
                .collect::<io::Result<_>>()?;
            let mut heads: Vec<Option<(u64, String)>> = Vec::with_capacity(readers.len());
            for r in &mut readers {
                heads.push(next_line(r)?);
            }
            while let Some(i) = heads
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.as_ref().map(|(t, _)| (*t, i)))
                .min()
                .map(|(_, i)| i)
            {
                let (_, line) = heads[i].take().expect("chosen above");
                out.write_all(line.as_bytes())?;
                out.write_all(b"\n")?;
                heads[i] = next_line(&mut readers[i])?;
            }
            let mut tail = String::new();
            for n in self.names() {
                IologLine::file_action(&mut tail, at + t_end_us, n, "close");
            }
            out.write_all(tail.as_bytes())?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            if self.after_us.is_some() {
                return Ok(());
            }
            std::fs::rename(&tmp, &self.path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// Merges finished iologs (one per clone of a job, each its own run) into `dest`, as fio writes
/// every clone of a job into one log: the `add`/`open` lines of every file first, the I/Os in
/// time order, the `close` lines last; written to a temporary file and renamed into place. The
/// parts are removed.
pub fn merge_iologs(parts: &[PathBuf], dest: &Path) -> io::Result<()> {
    let mut heads: Vec<String> = Vec::new();
    let mut tails: Vec<(u64, String)> = Vec::new();
    let mut ios: Vec<(u64, usize, String)> = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for line in text.lines() {
            if line.starts_with("fio version") || line.trim().is_empty() {
                continue;
            }
            let t = IologLine::timestamp(line).unwrap_or(0);
            let action = line.split_whitespace().nth(2).unwrap_or("");
            match action {
                "add" | "open" => {
                    if !heads.iter().any(|h| h == line) {
                        heads.push(line.to_string());
                    }
                }
                // One close per file, after every I/O of every part.
                "close" => {
                    let file = line.split_whitespace().nth(1).unwrap_or("").to_string();
                    match tails.iter_mut().find(|(_, f)| *f == file) {
                        Some(c) => c.0 = c.0.max(t),
                        None => tails.push((t, file)),
                    }
                }
                _ => ios.push((t, k, line.to_string())),
            }
        }
    }
    // Stable: lines of one time keep their part's order.
    ios.sort_by_key(|(t, k, _)| (*t, *k));
    let last = ios.last().map_or(0, |(t, _, _)| *t);
    let tails: Vec<(u64, String)> = tails
        .into_iter()
        .map(|(t, file)| {
            let mut l = String::new();
            IologLine::file_action(&mut l, t.max(last), &file, "close");
            (t, l.trim_end().to_string())
        })
        .collect();
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "iolog".into());
    let tmp = dir.join(format!(".{name}.ssdlab-{}-merge.part", std::process::id()));
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(&tmp)?);
        out.write_all(IologLine::HEADER.as_bytes())?;
        for l in heads
            .iter()
            .chain(ios.iter().map(|(_, _, l)| l))
            .chain(tails.iter().map(|(_, l)| l))
        {
            out.write_all(l.as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, dest)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    for p in parts {
        let _ = std::fs::remove_file(p);
    }
    result.map_err(|e| io::Error::new(e.kind(), format!("write_iolog {}: {e}", dest.display())))
}

fn next_line(r: &mut std::io::Lines<BufReader<File>>) -> io::Result<Option<(u64, String)>> {
    match r.next() {
        None => Ok(None),
        Some(line) => {
            let line = line?;
            let t = IologLine::timestamp(&line)
                .ok_or_else(|| io::Error::other(format!("bad temporary iolog line '{line}'")))?;
            Ok(Some((t, line)))
        }
    }
}

/// One worker's temporary iolog.
pub(crate) struct PartWriter {
    out: BufWriter<File>,
    path: PathBuf,
    line: String,
    /// The first write error (the run goes on; the log is refused at the end).
    failed: Option<io::Error>,
}

impl PartWriter {
    pub(crate) fn write(&mut self, t_us: u64, file: &str, op: &Op) {
        if self.failed.is_some() {
            return;
        }
        self.line.clear();
        IologLine::io(&mut self.line, t_us, file, op);
        if let Err(e) = self.out.write_all(self.line.as_bytes()) {
            self.failed = Some(e);
        }
    }

    fn close(mut self) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

/// A backend that writes every op pushed to it into a worker's iolog.
pub(crate) struct Recording<'a, B> {
    pub(crate) inner: B,
    pub(crate) part: &'a mut PartWriter,
    pub(crate) target: &'a IologTarget,
    /// The run's start on the backend's clock.
    pub(crate) t0: u64,
}

impl<B: Backend> Backend for Recording<'_, B> {
    fn now(&mut self) -> u64 {
        self.inner.now()
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.inner.buffer(slot)
    }
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.inner.push(slot, op)?;
        let t = self.inner.now().saturating_sub(self.t0) / 1000 + self.target.after_us.unwrap_or(0);
        let (file, op) = self.target.locate(op);
        self.part.write(t, file, &op);
        Ok(())
    }
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        self.inner.submit_wait(min, timeout_ns)
    }
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        self.inner.wait_until(deadline_ns, inflight)
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        self.inner.reap(out)
    }
    fn mark_measurement_start(&mut self) {
        self.inner.mark_measurement_start()
    }
    fn submit_batch(&self) -> u32 {
        self.inner.submit_batch()
    }
    fn member_stats(&mut self) -> Vec<MemberStats> {
        self.inner.member_stats()
    }
}

/// Checks that the log's directory takes files (before anything runs).
pub fn check_iolog_target(path: &Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "write_iolog {}: {} is not a directory",
                path.display(),
                dir.display()
            ))
        }
        Err(e) => {
            return Err(format!(
                "write_iolog {}: {}: {e}",
                path.display(),
                dir.display()
            ))
        }
    }
    // (the log is renamed into place: that would replace a link itself — /dev/stdout is one
    // — not write the file it names)
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!(
            "write_iolog {}: is a symbolic link (ssdlab puts its log in place of the path; give the path of the file itself)",
            path.display()
        ));
    }
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() {
            return Err(format!(
                "write_iolog {}: exists and is not a regular file",
                path.display()
            ));
        }
        if ssdlab_target::identity::is_stdout_file(&m) {
            return Err(format!(
                "write_iolog {}: is the file standard output goes to: the log would overwrite the report",
                path.display()
            ));
        }
    }
    Ok(())
}
