//! The portable backend: one thread per outstanding I/O doing pread/pwrite — or, with a single
//! slot, pread/pwrite in the caller's own thread when it waits (fio's psync: no hand-off between
//! threads per I/O). Two more modes run fio's asynchronous engines the way they behave where
//! the kernel or the C library makes them synchronous ([`SyncMode`]).

use crate::buf::AlignedBuf;
use crate::Dir;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Job {
    /// Which of the backend's files.
    file: usize,
    op: FileOp,
    dir: Dir,
    offset: u64,
    len: usize,
    buf: AlignedBuf,
}

struct Done {
    slot: u32,
    res: i32,
    at: Instant,
    buf: AlignedBuf,
}

/// Stack of an I/O thread: it only calls pread/pwrite.
const IO_THREAD_STACK: usize = 64 * 1024;

/// Most I/O threads one run may start (all workers together): beyond this, use io_uring.
pub const MAX_SYNC_THREADS: u64 = 4096;

/// How the I/Os of the slots are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// One thread per slot (one slot: in the caller's thread when it waits).
    #[default]
    Threads,
    /// Each I/O is done in the caller's thread as it is pushed, and its completion waits, in
    /// order, to be reaped one at a time: fio's libaio on a file opened without O_DIRECT, where
    /// the kernel reads or writes inside `io_submit` and fio reaps the events later.
    Serial,
    /// One I/O thread does the slots' I/Os one after the other, in the order pushed: glibc's
    /// POSIX AIO (fio's posixaio), which serves the requests of one file descriptor in order on
    /// one thread.
    Queue,
}

/// A pool of `slots` I/O threads, each owning one slot; with one slot, the I/O is done in the
/// caller's thread. [`SyncMode`] gives the other ways.
pub struct SyncBackend {
    txs: Vec<Sender<Job>>,
    rx: Receiver<Done>,
    bufs: Vec<Option<AlignedBuf>>,
    threads: Vec<JoinHandle<()>>,
    ready: Vec<(u32, i32, Instant)>,
    /// Single slot: the files, and the I/O pushed and not done yet (done by `wait`).
    inline: Option<(Files, Option<Job>)>,
    /// [`SyncMode::Serial`]: the files, and the I/Os done and not reaped yet, oldest first.
    serial: Option<(Files, std::collections::VecDeque<Done>)>,
    /// [`SyncMode::Queue`]: the one I/O thread's queue.
    queue: Option<Sender<(u32, Job)>>,
    /// How many files the I/Os may name.
    nfiles: usize,
    /// What each I/O does to its file.
    op: FileOp,
}

/// The files of a backend (one, or a job's several files), shared with its I/O threads: their
/// descriptors, or, for the operations on a file's name ([`FileOp::on_path`]), their paths.
struct FileSet {
    files: Vec<File>,
    paths: Vec<PathBuf>,
}

type Files = Arc<FileSet>;

/// Does `job` on its file; returns its result and when it ended (a file `filecreate` opened is
/// closed after that: fio times the open only).
fn run_job(files: &FileSet, job: &mut Job) -> (i32, Instant) {
    let einval = (-libc::EINVAL, Instant::now());
    if job.op.on_path() {
        let Some(path) = files.paths.get(job.file) else {
            return einval;
        };
        let (res, opened) = path_op(path, job.op);
        let at = Instant::now();
        drop(opened);
        let res = match res {
            Ok(()) => job.len as i32,
            Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
        };
        return (res, at);
    }
    let Some(file) = files.files.get(job.file) else {
        return einval;
    };
    let res = do_io(
        file,
        job.op,
        job.dir,
        &mut job.buf.as_mut_slice()[..job.len],
        job.offset,
    );
    (res, Instant::now())
}

/// An I/O thread's work for one job: does it and sends its completion; false once nobody
/// listens any more (the backend was dropped).
fn serve(files: &Files, slot: u32, mut job: Job, done_tx: &Sender<Done>) -> bool {
    let (res, at) = run_job(files, &mut job);
    let done = Done {
        slot,
        res,
        at,
        buf: job.buf,
    };
    done_tx.send(done).is_ok()
}

/// What an I/O of the sync backend does to its file: moves its data (pread/pwrite), or, as
/// one of fio's file-operation engines, changes the file's allocation or length and moves
/// none. Either way an I/O that succeeds is done in full (its length is its result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileOp {
    #[default]
    Data,
    /// fio's `falloc`: a read is `fallocate(FALLOC_FL_KEEP_SIZE)` of its range, a write
    /// `fallocate(0)` (which may extend the file). (Its trims, punched holes, are done apart
    /// with [`punch_hole`], as every engine's trims are.)
    Fallocate,
    /// fio's `ftruncate`: a write is `ftruncate(offset)`; a read is refused with EINVAL.
    Ftruncate,
    /// fio's `filestat`: the I/O is one `stat`, `lstat` or `statx` of the file's path
    /// (`stat_type`), whatever its direction, offset or length.
    Stat(StatCall),
    /// fio's `filedelete`: the I/O is one `unlink` of the file's path.
    Unlink,
    /// fio's `filecreate`: the I/O is one `open(O_CREAT | O_RDWR, 0600)` of the file's path (the
    /// file is closed after the I/O's end).
    Create,
}

/// The system call of fio's `filestat` engine (its `stat_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatCall {
    #[default]
    Stat,
    Lstat,
    /// `statx` of the path made absolute (`realpath`), asking for every field (fio:
    /// `STATX_ALL`).
    Statx,
}

impl FileOp {
    /// Whether the I/O is an operation on the file's name, not on an open file (fio's
    /// `filestat`, `filedelete`, `filecreate`, which never open the file to read or write it).
    pub fn on_path(self) -> bool {
        matches!(self, FileOp::Stat(_) | FileOp::Unlink | FileOp::Create)
    }
}

/// One operation on a path (see [`FileOp::on_path`]); `filecreate`'s file comes back open.
fn path_op(path: &Path, op: FileOp) -> (io::Result<()>, Option<File>) {
    use rustix::fs::{AtFlags, StatxFlags, CWD};
    let r = match op {
        FileOp::Stat(StatCall::Stat) => rustix::fs::stat(path).map(drop),
        FileOp::Stat(StatCall::Lstat) => rustix::fs::lstat(path).map(drop),
        FileOp::Stat(StatCall::Statx) => match std::fs::canonicalize(path) {
            Ok(abs) => rustix::fs::statx(CWD, &abs, AtFlags::empty(), StatxFlags::ALL).map(drop),
            Err(e) => return (Err(e), None),
        },
        FileOp::Unlink => rustix::fs::unlink(path),
        FileOp::Create => {
            use std::os::unix::fs::OpenOptionsExt;
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(path);
            return match f {
                Ok(f) => (Ok(()), Some(f)),
                Err(e) => (Err(e), None),
            };
        }
        _ => return (Err(io::Error::from_raw_os_error(libc::EINVAL)), None),
    };
    (r.map_err(io::Error::from), None)
}

/// Punches a hole in `file` over `len` bytes at `offset`, keeping its size (fio's `falloc`
/// engine's trim).
pub fn punch_hole(file: &File, offset: u64, len: u64) -> io::Result<()> {
    fallocate(
        file,
        libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
        offset,
        len,
    )
}

fn fallocate(file: &File, mode: libc::c_int, offset: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    };
    // SAFETY: fallocate takes a descriptor this File owns and plain integers.
    if unsafe { libc::fallocate(file.as_raw_fd(), mode, off, len) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn do_io(file: &File, op: FileOp, dir: Dir, buf: &mut [u8], offset: u64) -> i32 {
    let len = buf.len();
    let done = |r: io::Result<()>| r.map(|()| len);
    let r = match (op, dir) {
        (FileOp::Data, Dir::Read) => file.read_at(buf, offset),
        (FileOp::Data, Dir::Write) => file.write_at(buf, offset),
        (FileOp::Fallocate, Dir::Read) => done(fallocate(
            file,
            libc::FALLOC_FL_KEEP_SIZE,
            offset,
            len as u64,
        )),
        (FileOp::Fallocate, Dir::Write) => done(fallocate(file, 0, offset, len as u64)),
        (FileOp::Ftruncate, Dir::Write) => done(file.set_len(offset)),
        (FileOp::Ftruncate, Dir::Read) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        // (done by name, in `run_job`)
        (FileOp::Stat(_) | FileOp::Unlink | FileOp::Create, _) => {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        }
    };
    match r {
        Ok(n) => n as i32,
        Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
    }
}

impl SyncBackend {
    /// Starts `slots` threads doing I/O on `file` with buffers of `buf_len` bytes aligned to
    /// `align`; with one slot, no thread: the I/O is done in the caller's thread by
    /// [`wait`](Self::wait), between the push and the completion, as fio's psync does.
    pub fn new(file: File, slots: u32, buf_len: usize, align: usize) -> io::Result<Self> {
        Self::with_mode(file, slots, buf_len, align, SyncMode::Threads)
    }

    /// [`new`](Self::new) with the I/Os done as `mode` says.
    pub fn with_mode(
        file: File,
        slots: u32,
        buf_len: usize,
        align: usize,
        mode: SyncMode,
    ) -> io::Result<Self> {
        Self::with_files(vec![file], slots, buf_len, align, mode)
    }

    /// [`with_mode`](Self::with_mode) on several files (a job's files): each I/O names its
    /// file ([`push_to`](Self::push_to)).
    pub fn with_files(
        files: Vec<File>,
        slots: u32,
        buf_len: usize,
        align: usize,
        mode: SyncMode,
    ) -> io::Result<Self> {
        Self::with_set(
            FileSet {
                files,
                paths: Vec::new(),
            },
            slots,
            buf_len,
            align,
            mode,
        )
    }

    /// A backend whose I/Os are operations on these paths ([`FileOp::on_path`]: give the op
    /// with [`with_file_op`](Self::with_file_op)); nothing is opened.
    /// (The slots' buffers are `buf_len` bytes, as the engine fills writes' buffers whatever
    /// the I/Os do.)
    pub fn on_paths(
        paths: Vec<PathBuf>,
        slots: u32,
        buf_len: usize,
        align: usize,
        mode: SyncMode,
    ) -> io::Result<Self> {
        Self::with_set(
            FileSet {
                files: Vec::new(),
                paths,
            },
            slots,
            buf_len,
            align,
            mode,
        )
    }

    fn with_set(
        set: FileSet,
        slots: u32,
        buf_len: usize,
        align: usize,
        mode: SyncMode,
    ) -> io::Result<Self> {
        let nfiles = set.files.len().max(set.paths.len());
        if nfiles == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file"));
        }
        let file: Files = Arc::new(set);
        let bufs = || -> io::Result<Vec<Option<AlignedBuf>>> {
            (0..slots.max(1))
                .map(|_| AlignedBuf::try_new(buf_len.max(1), align.max(4096)).map(Some))
                .collect()
        };
        match mode {
            SyncMode::Threads => {}
            SyncMode::Serial => {
                let (_tx, rx) = channel::<Done>();
                return Ok(SyncBackend {
                    txs: Vec::new(),
                    rx,
                    bufs: bufs()?,
                    threads: Vec::new(),
                    ready: Vec::new(),
                    inline: None,
                    serial: Some((file, Default::default())),
                    queue: None,
                    nfiles,
                    op: FileOp::Data,
                });
            }
            SyncMode::Queue => {
                let (done_tx, rx) = channel::<Done>();
                let (tx, job_rx) = channel::<(u32, Job)>();
                let t = std::thread::Builder::new()
                    .name("ssdlab-aio".into())
                    .stack_size(IO_THREAD_STACK)
                    .spawn(move || {
                        while let Ok((slot, job)) = job_rx.recv() {
                            if !serve(&file, slot, job, &done_tx) {
                                break;
                            }
                        }
                    })?;
                return Ok(SyncBackend {
                    txs: Vec::new(),
                    rx,
                    bufs: bufs()?,
                    threads: vec![t],
                    ready: Vec::new(),
                    inline: None,
                    serial: None,
                    queue: Some(tx),
                    nfiles,
                    op: FileOp::Data,
                });
            }
        }
        if slots == 1 {
            let (_tx, rx) = channel::<Done>();
            return Ok(SyncBackend {
                txs: Vec::new(),
                rx,
                bufs: vec![Some(AlignedBuf::try_new(buf_len.max(1), align.max(4096))?)],
                threads: Vec::new(),
                ready: Vec::new(),
                inline: Some((file, None)),
                serial: None,
                queue: None,
                nfiles,
                op: FileOp::Data,
            });
        }
        let (done_tx, rx) = channel::<Done>();
        let mut txs = Vec::new();
        let mut threads = Vec::new();
        let mut bufs = Vec::new();
        for slot in 0..slots {
            let (tx, job_rx) = channel::<Job>();
            let file = Arc::clone(&file);
            let done_tx = done_tx.clone();
            let t = std::thread::Builder::new()
                .name(format!("ssdlab-sync-{slot}"))
                .stack_size(IO_THREAD_STACK)
                .spawn(move || {
                    while let Ok(job) = job_rx.recv() {
                        if !serve(&file, slot, job, &done_tx) {
                            break;
                        }
                    }
                })?;
            txs.push(tx);
            threads.push(t);
            bufs.push(Some(AlignedBuf::try_new(buf_len.max(1), align.max(4096))?));
        }
        Ok(SyncBackend {
            txs,
            rx,
            bufs,
            threads,
            ready: Vec::new(),
            inline: None,
            serial: None,
            queue: None,
            nfiles,
            op: FileOp::Data,
        })
    }

    /// The backend with its I/Os doing `op` to their file (fio's file-operation engines). An
    /// operation on a path needs a backend made [`on_paths`](Self::on_paths), any other one
    /// of open files: an I/O on a file the backend does not hold fails with EINVAL.
    pub fn with_file_op(mut self, op: FileOp) -> Self {
        self.op = op;
        self
    }

    /// The buffer of an idle slot; `None` while the slot's I/O is in flight (its buffer is with
    /// the I/O thread) or when the slot does not exist.
    pub fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.bufs
            .get_mut(slot as usize)?
            .as_mut()
            .map(|b| b.as_mut_slice())
    }

    /// Hands an I/O to the slot's thread. Errors when the slot is busy or does not exist, or the
    /// I/O does not fit its buffer.
    pub fn push(&mut self, slot: u32, dir: Dir, offset: u64, len: u32) -> io::Result<()> {
        self.push_to(slot, 0, dir, offset, len)
    }

    /// [`push`](Self::push) to file `file` of the backend's files.
    pub fn push_to(
        &mut self,
        slot: u32,
        file: usize,
        dir: Dir,
        offset: u64,
        len: u32,
    ) -> io::Result<()> {
        if file >= self.nfiles {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no file {file}"),
            ));
        }
        let Some(cell) = self.bufs.get_mut(slot as usize) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no slot {slot}"),
            ));
        };
        let Some(buf) = cell.take() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("slot {slot} already has an I/O in flight"),
            ));
        };
        if len as usize > buf.len() {
            *cell = Some(buf);
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("I/O of {len} bytes does not fit slot {slot}'s buffer"),
            ));
        }
        let job = Job {
            file,
            op: self.op,
            dir,
            offset,
            len: len as usize,
            buf,
        };
        if let Some((_, pending)) = &mut self.inline {
            *pending = Some(job);
            return Ok(());
        }
        if let Some((files, done)) = &mut self.serial {
            let mut job = job;
            let (res, at) = run_job(files, &mut job);
            done.push_back(Done {
                slot,
                res,
                at,
                buf: job.buf,
            });
            return Ok(());
        }
        if let Some(q) = &self.queue {
            if let Err(e) = q.send((slot, job)) {
                self.bufs[slot as usize] = Some((e.0).1.buf);
                self.ready.push((slot, -libc::EIO, Instant::now()));
            }
            return Ok(());
        }
        if let Err(e) = self.txs[slot as usize].send(job) {
            // The thread is gone (it only exits when we drop); complete with an error.
            self.bufs[slot as usize] = Some(e.0.buf);
            self.ready.push((slot, -libc::EIO, Instant::now()));
        }
        Ok(())
    }

    /// Waits until at least `min` completions are ready or the timeout passes (with one slot:
    /// does the pushed I/O now, whatever the timeout).
    pub fn wait(&mut self, min: usize, timeout: Duration) {
        if self.serial.is_some() {
            // Everything pushed is done already.
            return;
        }
        if let Some((files, pending)) = &mut self.inline {
            if let Some(mut job) = pending.take() {
                let (res, at) = run_job(files, &mut job);
                self.bufs[0] = Some(job.buf);
                self.ready.push((0, res, at));
            }
            return;
        }
        let deadline = Instant::now() + timeout;
        while let Ok(d) = self.rx.try_recv() {
            self.accept(d);
        }
        while self.ready.len() < min {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(d) => self.accept(d),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    fn accept(&mut self, d: Done) {
        self.bufs[d.slot as usize] = Some(d.buf);
        self.ready.push((d.slot, d.res, d.at));
    }

    /// Calls `f(slot, result, completion instant)` for every ready completion
    /// ([`SyncMode::Serial`]: for the oldest, completed now, as fio reaps libaio's events after
    /// the submissions that did the I/O).
    pub fn reap(&mut self, mut f: impl FnMut(u32, i32, Instant)) -> usize {
        if let Some((_, done)) = &mut self.serial {
            return match done.pop_front() {
                Some(d) => {
                    self.bufs[d.slot as usize] = Some(d.buf);
                    f(d.slot, d.res, Instant::now());
                    1
                }
                None => 0,
            };
        }
        let n = self.ready.len();
        for (slot, res, at) in self.ready.drain(..) {
            f(slot, res, at);
        }
        n
    }
}

impl Drop for SyncBackend {
    fn drop(&mut self) {
        self.txs.clear();
        self.queue = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn serial_and_queue_modes_complete_in_order() {
        for mode in [SyncMode::Serial, SyncMode::Queue] {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&vec![7u8; 1 << 16]).unwrap();
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(f.path())
                .unwrap();
            let mut b = SyncBackend::with_mode(file, 4, 4096, 4096, mode).unwrap();
            for slot in 0..4 {
                b.push(slot, Dir::Read, slot as u64 * 4096, 4096).unwrap();
                assert!(b.buffer(slot).is_none(), "busy until reaped");
            }
            let mut got = Vec::new();
            while got.len() < 4 {
                b.wait(1, Duration::from_secs(1));
                let n = b.reap(|slot, res, _| got.push((slot, res)));
                if mode == SyncMode::Serial {
                    assert!(n <= 1, "serial completions are reaped one at a time");
                }
            }
            assert_eq!(
                got,
                vec![(0, 4096), (1, 4096), (2, 4096), (3, 4096)],
                "{mode:?}"
            );
            assert!(b.buffer(2).unwrap().iter().all(|&x| x == 7));
        }
    }

    #[test]
    fn one_slot_inline_and_a_pool_move_the_same_bytes() {
        for slots in [1u32, 3] {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&vec![9u8; 1 << 16]).unwrap();
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(f.path())
                .unwrap();
            let mut b = SyncBackend::new(file, slots, 4096, 4096).unwrap();
            assert_eq!(b.threads.len(), if slots == 1 { 0 } else { 3 });
            b.buffer(0).unwrap().fill(0x11);
            b.push(0, Dir::Write, 4096, 4096).unwrap();
            assert!(b.buffer(0).is_none(), "busy until completed");
            assert!(b.push(0, Dir::Read, 0, 512).is_err(), "one I/O per slot");
            let mut got = Vec::new();
            while got.is_empty() {
                b.wait(1, Duration::from_secs(1));
                b.reap(|slot, res, _| got.push((slot, res)));
            }
            assert_eq!(got, vec![(0, 4096)]);
            b.push(0, Dir::Read, 4096, 4096).unwrap();
            got.clear();
            while got.is_empty() {
                b.wait(1, Duration::from_secs(1));
                b.reap(|slot, res, _| got.push((slot, res)));
            }
            assert!(b.buffer(0).unwrap().iter().all(|&x| x == 0x11));
        }
    }

    /// Runs one I/O on slot 0 and returns its result.
    fn one(b: &mut SyncBackend, dir: Dir, offset: u64, len: u32) -> i32 {
        b.push(0, dir, offset, len).unwrap();
        let mut got = Vec::new();
        while got.is_empty() {
            b.wait(1, Duration::from_secs(1));
            b.reap(|_, res, _| got.push(res));
        }
        got[0]
    }

    /// A new empty temporary file, and a read-write handle on it.
    fn scratch() -> (tempfile::NamedTempFile, File) {
        let f = tempfile::NamedTempFile::new().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap();
        (f, file)
    }

    /// Bytes of `path` that are allocated (from its block count).
    fn allocated(path: &std::path::Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().blocks() * 512
    }

    #[test]
    fn fallocate_ops_allocate_keep_the_size_and_punch_holes() {
        let (f, file) = scratch();
        let punch = file.try_clone().unwrap();
        let mut b = SyncBackend::new(file, 1, 1 << 16, 4096)
            .unwrap()
            .with_file_op(FileOp::Fallocate);
        // a write allocates its range and extends the file; no byte is written
        assert_eq!(one(&mut b, Dir::Write, 0, 1 << 16), 1 << 16);
        assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 1 << 16);
        assert!(allocated(f.path()) >= 1 << 16);
        assert!(std::fs::read(f.path()).unwrap().iter().all(|&x| x == 0));
        // a read allocates past the end without growing the file
        assert_eq!(one(&mut b, Dir::Read, 1 << 16, 1 << 16), 1 << 16);
        assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 1 << 16);
        assert!(allocated(f.path()) >= 2 << 16);
        // a trim punches a hole and keeps the length
        punch_hole(&punch, 0, 1 << 16).unwrap();
        assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 1 << 16);
        assert!(allocated(f.path()) < 2 << 16);
    }

    #[test]
    fn ftruncate_writes_set_the_length_and_reads_fail() {
        let (f, file) = scratch();
        let mut b = SyncBackend::new(file, 1, 4096, 4096)
            .unwrap()
            .with_file_op(FileOp::Ftruncate);
        assert_eq!(one(&mut b, Dir::Write, 12288, 4096), 4096);
        assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 12288);
        assert_eq!(one(&mut b, Dir::Write, 4096, 4096), 4096);
        assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 4096);
        assert_eq!(one(&mut b, Dir::Read, 0, 4096), -libc::EINVAL);
    }

    /// Runs one I/O on file `file` of a backend made on paths and returns its result.
    fn on(b: &mut SyncBackend, file: usize) -> i32 {
        b.push_to(0, file, Dir::Read, 0, 4096).unwrap();
        let mut got = Vec::new();
        while got.is_empty() {
            b.wait(1, Duration::from_secs(1));
            b.reap(|_, res, _| got.push(res));
        }
        got[0]
    }

    #[test]
    fn path_ops_stat_create_and_unlink_by_name() {
        for (slots, mode) in [
            (1, SyncMode::Threads),
            (2, SyncMode::Threads),
            (1, SyncMode::Serial),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (a, b) = (dir.path().join("a"), dir.path().join("b"));
            std::fs::write(&a, [1u8; 100]).unwrap();
            let paths = vec![a.clone(), b.clone()];
            let backend = |op| {
                SyncBackend::on_paths(paths.clone(), slots, 4096, 4096, mode)
                    .unwrap()
                    .with_file_op(op)
            };
            for call in [StatCall::Stat, StatCall::Lstat, StatCall::Statx] {
                let mut s = backend(FileOp::Stat(call));
                assert_eq!(on(&mut s, 0), 4096, "{call:?}: done in full");
                assert_eq!(on(&mut s, 1), -libc::ENOENT, "{call:?}: b is not there");
            }
            let mut c = backend(FileOp::Create);
            assert_eq!(on(&mut c, 1), 4096);
            let meta = std::fs::metadata(&b).unwrap();
            assert_eq!(meta.len(), 0, "created empty");
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
            assert_eq!(on(&mut c, 0), 4096, "an existing file opens");
            assert_eq!(std::fs::read(&a).unwrap(), [1u8; 100], "and keeps its data");
            let mut u = backend(FileOp::Unlink);
            assert_eq!(on(&mut u, 0), 4096);
            assert!(!a.exists());
            assert_eq!(on(&mut u, 0), -libc::ENOENT);
            assert_eq!(
                on(&mut backend(FileOp::Data), 1),
                -libc::EINVAL,
                "no descriptors"
            );
        }
    }
}
