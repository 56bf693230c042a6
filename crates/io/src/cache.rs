//! The page cache of files: dropping what is cached (fio's `invalidate`), access-pattern advice
//! (fio's `fadvise_hint`) and reading a region in before a run (fio's `pre_read`).

use rustix::fs::Advice;
use std::fs::File;
use std::io;
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// Advice about how a file will be read or written (`posix_fadvise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAdvice {
    Normal,
    /// No read-ahead (random I/O).
    Random,
    /// More read-ahead (sequential I/O).
    Sequential,
    /// The data will be used once.
    NoReuse,
}

fn len(n: u64) -> Option<NonZeroU64> {
    NonZeroU64::new(n)
}

/// Gives `advice` for `[offset, offset+bytes)` of `file` (the whole file for 0 bytes).
pub fn advise(file: &File, offset: u64, bytes: u64, advice: FileAdvice) -> io::Result<()> {
    let a = match advice {
        FileAdvice::Normal => Advice::Normal,
        FileAdvice::Random => Advice::Random,
        FileAdvice::Sequential => Advice::Sequential,
        FileAdvice::NoReuse => Advice::NoReuse,
    };
    rustix::fs::fadvise(file, offset, len(bytes), a).map_err(io::Error::from)
}

/// Drops the clean cached pages of `[offset, offset+bytes)` of a regular file
/// (`POSIX_FADV_DONTNEED`, which also starts writing back dirty ones), or, for a block device,
/// writes back and drops the device's whole cache (`BLKFLSBUF`, root only).
pub fn drop_cache(file: &File, block_device: bool, offset: u64, bytes: u64) -> io::Result<()> {
    if block_device {
        crate::blockdev::flush_buffers(file).map_err(io::Error::from)
    } else {
        rustix::fs::fadvise(file, offset, len(bytes), Advice::DontNeed).map_err(io::Error::from)
    }
}

/// Reads `[offset, offset+bytes)` of `file` once, through the page cache, in chunks of
/// `chunk` bytes (fio's `pre_read`); stops early when `stop` is raised.
pub fn read_in(
    file: &File,
    offset: u64,
    bytes: u64,
    chunk: usize,
    stop: Option<&AtomicBool>,
) -> io::Result<()> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(chunk.max(4096))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    buf.resize(chunk.max(4096), 0u8);
    let end = offset.saturating_add(bytes);
    let mut at = offset;
    while at < end {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            break;
        }
        let n = ((end - at) as usize).min(buf.len());
        match file.read_at(&mut buf[..n], at)? {
            0 => break,
            r => at += r as u64,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn advice_drop_and_read_in_work_on_a_file() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![3u8; 1 << 20]).unwrap();
        f.as_file().sync_all().unwrap();
        let file = f.reopen().unwrap();
        for a in [
            FileAdvice::Random,
            FileAdvice::Sequential,
            FileAdvice::Normal,
            FileAdvice::NoReuse,
        ] {
            advise(&file, 0, 1 << 20, a).unwrap();
        }
        drop_cache(&file, false, 0, 0).unwrap();
        read_in(&file, 4096, 1 << 19, 65536, None).unwrap();
        let stop = AtomicBool::new(true);
        read_in(&file, 0, 1 << 20, 65536, Some(&stop)).unwrap();
    }
}
