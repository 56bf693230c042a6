//! Block-device ioctls that rustix does not wrap.

use rustix::io::Errno;
use std::os::fd::AsFd;

/// `ioctl(BLKGETSIZE64)`: the size of the block device behind `fd` in bytes.
pub fn size_bytes(fd: impl AsFd) -> Result<u64, Errno> {
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<usize>(0x12, 114);
    // SAFETY: BLKGETSIZE64 is a getter ioctl that writes exactly one `u64` (the kernel's
    // `put_u64`) into the pointed-to output, which `Getter` provides as `MaybeUninit<u64>`.
    unsafe {
        let getter = rustix::ioctl::Getter::<BLKGETSIZE64, u64>::new();
        rustix::ioctl::ioctl(fd, getter)
    }
}

/// `ioctl(BLKFLSBUF)`: writes back and drops the page cache of the block device behind `fd`
/// (fio's `blockdev_invalidate_cache`; needs CAP_SYS_ADMIN).
pub fn flush_buffers(fd: impl AsFd) -> Result<(), Errno> {
    // BLKFLSBUF = _IO(0x12, 97)
    const BLKFLSBUF: rustix::ioctl::Opcode = rustix::ioctl::opcode::none(0x12, 97);
    // SAFETY: BLKFLSBUF takes no argument and writes nothing to user memory.
    unsafe {
        let call = rustix::ioctl::NoArg::<BLKFLSBUF>::new();
        rustix::ioctl::ioctl(fd, call)
    }
}

/// `ioctl(BLKDISCARD)`: discards `len` bytes at `offset` of the block device behind `fd`
/// (fio's trims: `os_trim`, one call per trim). A regular file does not take it (`ENOTTY`).
pub fn discard(fd: impl AsFd, offset: u64, len: u64) -> Result<(), Errno> {
    // BLKDISCARD = _IO(0x12, 119); its argument points to { start, length } in bytes.
    const BLKDISCARD: rustix::ioctl::Opcode = rustix::ioctl::opcode::none(0x12, 119);
    // SAFETY: BLKDISCARD reads two `u64`s (start, length) from the pointed-to memory, which
    // `Setter` passes as a pointer to its `[u64; 2]`; it writes nothing back.
    unsafe {
        let call = rustix::ioctl::Setter::<BLKDISCARD, [u64; 2]>::new([offset, len]);
        rustix::ioctl::ioctl(fd, call)
    }
}
