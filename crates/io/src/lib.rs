//! Kernel I/O for ssdlab: the io_uring ring, the portable sync pool (a thread per outstanding
//! I/O), aligned buffers, block-device ioctls and CPU accounting (`getrusage`).
//!
//! This crate knows nothing about targets or safety (that is `ssdlab-target`) nor about
//! workloads (that is `ssdlab-engine`): it moves bytes between buffers and file descriptors.
//! All kernel-facing `unsafe` code of the workspace lives here.

pub mod blockdev;
pub mod buf;
pub mod cache;
pub mod cpu;
pub mod memory;
pub mod numa;
pub mod ring;
pub mod sync;

pub use buf::AlignedBuf;
pub use ring::{FixedBufs, RingOptions, UringBackend};
pub use sync::{FileOp, StatCall, SyncBackend, SyncMode};

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
