//! What the engine needs from a place to send I/O.

use ssdlab_stats::MemberStats;
use ssdlab_workload::Op;
use std::io;

/// One completed operation.
#[derive(Debug, Clone, Copy)]
pub struct Cqe {
    pub slot: u32,
    /// Bytes transferred, or a negative errno.
    pub res: i64,
    /// Completion time on the backend's clock, ns.
    pub t_ns: u64,
}

/// A place that accepts operations into numbered slots and reports their completions.
///
/// The engine pushes at most one operation per idle slot, then calls [`Backend::submit_wait`] and
/// [`Backend::reap`]. Implementations must not allocate per operation.
pub trait Backend {
    /// The backend's clock in ns (wall clock for real targets, virtual time for simulated ones).
    fn now(&mut self) -> u64;
    /// The data buffer of an idle slot, when the backend carries data (`None` for backends
    /// without data, and for a slot whose I/O is in flight).
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]>;
    /// Queues `op` on `slot`. An error means the backend refused the operation (not an I/O error
    /// of the target, which comes back as a negative completion): the run stops and drains.
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()>;
    /// Submits what was queued and waits until at least `min` completions are ready or
    /// `timeout_ns` of wall time passed.
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()>;
    /// Appends ready completions to `out`.
    fn reap(&mut self, out: &mut Vec<Cqe>);
    /// Called once when the measured part of the run starts (after the ramp), so backends that
    /// keep their own counters can reset them.
    fn mark_measurement_start(&mut self) {}
    /// How pushed operations reach the kernel, for fio's `iodepth_submit`: in batches of this
    /// many as they are pushed (the rest with the next wait); 0 = all with the next wait.
    fn submit_batch(&self) -> u32 {
        0
    }
    /// Per-member statistics of a stripe set (empty for single targets).
    fn member_stats(&mut self) -> Vec<MemberStats> {
        Vec::new()
    }
}
