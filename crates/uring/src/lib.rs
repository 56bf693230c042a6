//! Real I/O for ssdlab: targets (file, block device, null), io_uring and sync backends,
//! aligned buffers, device probing and the safety checks that keep user data safe.
//! All `unsafe` code of the workspace lives in this crate.

pub mod buf;
pub mod cpu;
pub mod device;
pub mod ring;
pub mod sync;

pub use buf::AlignedBuf;
pub use ring::UringBackend;
pub use sync::SyncBackend;

/// Direction of a data transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

/// True when this kernel lets us create an io_uring (it may be disabled by sysctl or seccomp).
pub fn io_uring_available() -> bool {
    io_uring::IoUring::new(2).is_ok()
}
