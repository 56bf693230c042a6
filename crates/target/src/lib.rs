//! Real targets for ssdlab: everything about *where* real I/O goes, before any I/O happens.
//!
//! - [`probe`](mod@probe): what a path is (regular file, block device, or a file to be created), its size,
//!   logical block size and direct-I/O alignment, without side effects.
//! - [`safety`]: the block-device write checks (mounted, swap, holders, partitions, on-disk
//!   signatures, exclusive open). ssdlab never writes to a block device without
//!   `--allow-destroy`, and never to one that holds data or is in use.
//! - [`signature`]: the built-in on-disk signature detector (filesystems, partition tables,
//!   volumes, RAID members).
//! - [`blkid`]: util-linux's `blkid` as the authority on signatures (read-only probe with a
//!   timeout; the built-in detector is the fallback and runs as well).
//! - [`fill`]: laying out regular files (create with `O_EXCL`, extend with real data, never
//!   truncate or shrink what was there; interruptible, and undone when the run cannot go on).
//! - [`plan`](mod@plan): a run's targets checked as a whole before the first byte is written (region,
//!   direct-I/O alignment, duplicate members, free space), then laid out.
//! - [`diskstats`]: the kernel's I/O counters of the block devices under the targets (fio's
//!   `disk_util`).
//! - [`identity`]: "is this the same file", so no output ever names an input; whether an output
//!   can be written where it is named.
//! - [`written`]: the written-map of verifying runs (which sectors were written, by which seed),
//!   so a later verifying read catches lost or zeroed data.
//!
//! The rules this crate enforces:
//!
//! - It never creates, truncates or deletes anything that is not a regular file;
//!   [`probe::open_target`] never creates or truncates.
//! - Bad input gives one clear error line naming the path and the reason.

pub mod blkid;
pub mod diskstats;
pub mod error;
pub mod fill;
pub mod identity;
pub mod outfile;
pub mod plan;
pub mod probe;
pub mod safety;
pub mod signature;
pub mod written;

pub use blkid::Blkid;
pub use error::{DeviceError, Refusal};
pub use fill::{lay_out, lay_out_with, Cleanup, Fill, Laid, LayoutData, LayoutError, Undo};
pub use identity::{
    check_file_or_new, check_outputs, check_writable, resolve_output, Named, OutputPathError,
    PathId, SameFile,
};
pub use plan::{
    check_free_space, fs_size, plan, LaidOut, Member, Plan, PlanError, PlanOptions, PlannedPath,
    RealTarget,
};
pub use probe::{
    device_node, is_block_device, missing_dirs, open_target, open_target_shared, polled_io, probe,
    probe_creating_dirs, FileId, PathKind, TargetInfo,
};
pub use safety::{
    check_block_device_writable, check_block_device_writable_with, parse_mountinfo_line,
    unescape_proc_field, DeviceCheck,
};
pub use signature::{
    detect_signature, signature_for_blkid_pttype, signature_for_blkid_type, Signature,
    SignatureClass, SIGNATURE_HEAD_LEN, SIGNATURE_TAIL_LEN,
};
