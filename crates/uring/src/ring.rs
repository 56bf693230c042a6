//! The io_uring backend: one ring per worker, one registered buffer per slot, the target registered
//! as a fixed file, batched submission, and exactly as many I/Os in flight as the caller pushes.

use crate::buf::AlignedBuf;
use crate::Dir;
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// An io_uring submission/completion pair over one or more files (registered as fixed files
/// 0, 1, …) with `slots` fixed buffers.
pub struct UringBackend {
    ring: IoUring,
    bufs: AlignedBuf,
    buf_len: usize,
    slots: u32,
    _files: Vec<File>,
    queued: usize,
    submit_batch: usize,
}

impl UringBackend {
    /// Creates a ring for `slots` outstanding I/Os of up to `buf_len` bytes each, buffers aligned to
    /// `align` bytes. The file is registered; the buffers are registered as fixed buffers.
    pub fn new(file: File, slots: u32, buf_len: usize, align: usize) -> io::Result<Self> {
        Self::with_files(vec![file], slots, slots, buf_len, align)
    }

    /// Like [`new`](Self::new) for several files; `max_inflight` bounds the SQEs in flight at once
    /// (more than `slots` when one slot's I/O is split into pieces).
    pub fn with_files(
        files: Vec<File>,
        slots: u32,
        max_inflight: u32,
        buf_len: usize,
        align: usize,
    ) -> io::Result<Self> {
        let entries = max_inflight.max(slots).max(1).next_power_of_two().max(8);
        let mut builder = IoUring::builder();
        builder
            .setup_cqsize(entries * 2)
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_submit_all();
        let ring = match builder.build(entries) {
            Ok(r) => r,
            // Older kernels lack DEFER_TASKRUN / SINGLE_ISSUER: fall back to a plain ring.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::builder()
                .setup_cqsize(entries * 2)
                .build(entries)?,
            Err(e) => return Err(e),
        };
        let buf_len = buf_len.max(1);
        let mut bufs = AlignedBuf::new(buf_len * slots as usize, align.max(4096));
        let base = bufs.as_mut_ptr();
        let iovecs: Vec<libc::iovec> = (0..slots as usize)
            .map(|i| libc::iovec {
                // SAFETY: i * buf_len stays inside the allocation of slots * buf_len bytes.
                iov_base: unsafe { base.add(i * buf_len) }.cast(),
                iov_len: buf_len,
            })
            .collect();
        // SAFETY: the iovecs point into `bufs`, which lives as long as the ring (both are fields of
        // self, and the ring is dropped before the buffers since it is declared first).
        unsafe { ring.submitter().register_buffers(&iovecs)? };
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        ring.submitter().register_files(&fds)?;
        Ok(UringBackend {
            ring,
            bufs,
            buf_len,
            slots,
            _files: files,
            queued: 0,
            submit_batch: 1,
        })
    }

    /// Number of slots (the most I/Os that can be in flight).
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The buffer of `slot`; only touch it while the slot is idle.
    #[inline]
    pub fn buffer(&mut self, slot: u32) -> &mut [u8] {
        let start = slot as usize * self.buf_len;
        &mut self.bufs.as_mut_slice()[start..start + self.buf_len]
    }

    /// Queues one I/O of `len` bytes at `offset` using `slot`'s buffer. Nothing reaches the kernel
    /// until [`submit_and_wait`](Self::submit_and_wait).
    #[inline]
    pub fn push(&mut self, slot: u32, dir: Dir, offset: u64, len: u32) {
        self.push_piece(slot as u64, 0, slot, 0, dir, offset, len);
    }

    /// Queues a transfer between file `file` at `offset` and `slot`'s buffer starting at `buf_off`;
    /// its completion carries `user_data`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn push_piece(
        &mut self,
        user_data: u64,
        file: u32,
        slot: u32,
        buf_off: usize,
        dir: Dir,
        offset: u64,
        len: u32,
    ) {
        assert!(slot < self.slots && buf_off + len as usize <= self.buf_len);
        let ptr = self.buffer(slot)[buf_off..].as_mut_ptr();
        let entry = match dir {
            Dir::Read => opcode::ReadFixed::new(types::Fixed(file), ptr, len, slot as u16)
                .offset(offset)
                .build(),
            Dir::Write => opcode::WriteFixed::new(types::Fixed(file), ptr, len, slot as u16)
                .offset(offset)
                .build(),
        }
        .user_data(user_data);
        if self.submit_batch > 0 && self.queued >= self.submit_batch {
            // A full batch is waiting and another I/O is coming: hand the batch to the kernel now
            // (fio's iodepth_batch_submit), so the device starts on it without waiting for the
            // rest to be prepared. The last I/O of a refill stays queued and goes in with the
            // wait, in one system call.
            if self.ring.submitter().submit().is_ok() {
                self.queued = 0;
            }
        }
        // SAFETY: the buffer stays valid and untouched until the completion for this slot is reaped;
        // the SQ has room because at most `slots` entries are ever outstanding and the SQ holds at
        // least that many.
        unsafe {
            if self.ring.submission().push(&entry).is_err() {
                // The SQ is full only if the caller queued more than `slots` entries: submit first.
                self.ring.submit().expect("io_uring submit");
                self.ring
                    .submission()
                    .push(&entry)
                    .expect("submission queue has room after submit");
            }
        }
        self.queued += 1;
    }

    /// Submit as soon as `n` SQEs are queued (0: only in [`submit_and_wait`](Self::submit_and_wait),
    /// one system call per batch). Default 1, like fio's `iodepth_batch_submit`.
    pub fn set_submit_batch(&mut self, n: u32) {
        self.submit_batch = n as usize;
    }

    /// Submits everything queued and waits until at least `min` completions are available.
    /// One system call.
    ///
    /// No timeout is armed: a timed wait costs an hrtimer per call (measurable at QD 1), and the
    /// engine does not need one, since every in-flight I/O completes and wakes the wait. (A device
    /// that never completes an I/O cannot be drained anyway; a second Ctrl-C exits at once.)
    pub fn submit_and_wait(&mut self, min: usize) -> io::Result<()> {
        loop {
            match self.ring.submitter().submit_and_wait(min) {
                Ok(_) => break,
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // EBUSY / EAGAIN: the CQ is full; the caller will reap and come back.
                    Some(libc::EBUSY) | Some(libc::EAGAIN) => break,
                    _ => return Err(e),
                },
            }
        }
        self.queued = 0;
        Ok(())
    }

    /// Calls `f(user_data, result)` for every available completion (user data is the slot for
    /// [`push`](Self::push)); `result` is bytes moved or -errno.
    #[inline]
    pub fn reap(&mut self, mut f: impl FnMut(u64, i32)) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion() {
            f(cqe.user_data(), cqe.result());
            n += 1;
        }
        n
    }
}
