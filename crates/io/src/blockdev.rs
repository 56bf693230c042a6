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
