//! The simulator: N drives in one event queue behind one host adapter.

use crate::config::{ConfigError, DriveConfig};
use crate::drive::{Drive, Shared};
use crate::events::EventQueue;
use crate::SimError;
use crate::{AdapterConfig, DriveCounters, HostCmd, OpKind, Precondition};

/// A set of simulated drives sharing one event queue and host adapter. Cloning gives an
/// independent copy (e.g. of a preconditioned state, to run several workloads from it).
#[derive(Clone)]
pub struct Simulator {
    drives: Vec<Drive>,
    sh: Shared,
    adapter_overhead: u64,
    adapter_free: u64,
    trim_passthrough: bool,
    seq: u64,
    last_now: u64,
    pending: usize,
}

impl Simulator {
    /// Build `n_drives` identical drives, preconditioned to `pre` (drive i uses `seed + i`).
    pub fn new(
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        pre: Precondition,
        seed: u64,
    ) -> Result<Self, SimError> {
        Self::build(drive, n_drives, adapter, pre, seed, false)
    }

    /// Bytes of memory `n_drives` drives of `drive` take (see [`DriveConfig::memory_estimate`]),
    /// plus the shared event queue.
    pub fn memory_estimate(drive: &DriveConfig, n_drives: usize) -> u64 {
        let per = drive.memory_estimate();
        let queue = (drive.host.queue_depth as u64 * 4 + 256) * 24;
        (per + queue).saturating_mul(n_drives as u64)
    }

    /// Like [`Simulator::new`] but keeps a per-sector data version for
    /// [`Simulator::read_version`] (slower, more memory; for tests).
    pub fn with_tracking(
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        pre: Precondition,
        seed: u64,
    ) -> Result<Self, SimError> {
        Self::build(drive, n_drives, adapter, pre, seed, true)
    }

    fn build(
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        pre: Precondition,
        seed: u64,
        tracking: bool,
    ) -> Result<Self, SimError> {
        drive.validate()?;
        if n_drives == 0 {
            return Err(ConfigError::new("n_drives", "must be at least 1").into());
        }
        if adapter.uplink_bytes_per_sec == Some(0) {
            return Err(ConfigError::new("adapter.uplink_bytes_per_sec", "must be > 0").into());
        }
        let mut drives = Vec::new();
        drives
            .try_reserve_exact(n_drives)
            .map_err(|_| crate::drive::AllocError {
                what: "drive list",
                bytes: n_drives.saturating_mul(size_of::<Drive>()),
            })?;
        for i in 0..n_drives {
            let mut d = Drive::try_new(drive, tracking)?;
            d.precondition(pre, seed.wrapping_add(i as u64));
            drives.push(d);
        }
        let cap = n_drives * (drive.host.queue_depth as usize * 4 + 256);
        Ok(Simulator {
            drives,
            sh: Shared {
                heap: EventQueue::with_capacity(cap),
                uplink_free: 0,
                uplink_bps: adapter.uplink_bytes_per_sec.unwrap_or(0),
            },
            adapter_overhead: adapter.per_request_overhead_ns,
            adapter_free: 0,
            trim_passthrough: adapter.trim_passthrough,
            seq: 0,
            last_now: 0,
            pending: 0,
        })
    }

    /// Number of drives.
    pub fn drives(&self) -> usize {
        self.drives.len()
    }

    /// Submit a command to `drive` at virtual time `now_ns` (non-decreasing across calls; an
    /// earlier time is treated as the latest one seen).
    pub fn submit(&mut self, now_ns: u64, tag: u64, drive: usize, cmd: HostCmd) {
        assert!(
            drive < self.drives.len(),
            "drive index {drive} out of range"
        );
        let now = now_ns.max(self.last_now);
        self.last_now = now;
        self.seq += 1;
        self.pending += 1;
        let mut t = now;
        if self.adapter_overhead > 0 {
            let s = t.max(self.adapter_free);
            self.adapter_free = s + self.adapter_overhead;
            t = s + self.adapter_overhead;
        }
        if cmd.kind == OpKind::Trim && !self.trim_passthrough {
            self.sh.heap.push(t, self.seq, tag);
            return;
        }
        self.drives[drive].submit(&mut self.sh, t, tag, self.seq, cmd);
    }

    /// Performance hint: `cmd` will be submitted to `drive` soon (typically the next command of
    /// a closed loop, known one request ahead). Starts fetching the drive's mapping entries for
    /// it into the CPU cache; has no effect on results. Out-of-range drives are ignored.
    #[inline]
    pub fn prefetch(&self, drive: usize, cmd: &HostCmd) {
        if let Some(d) = self.drives.get(drive) {
            d.prefetch(cmd.offset);
        }
    }

    /// Earliest pending completion `(tag, time_ns)`, ties in submission order.
    #[inline]
    pub fn next_completion(&mut self) -> Option<(u64, u64)> {
        loop {
            // the drive whose pending (partly filled) host pages are due first, if any: they
            // are programmed first when due no later than the earliest completion
            let mut due: Option<(u64, usize)> = None;
            for (i, d) in self.drives.iter().enumerate() {
                if let Some(dl) = d.pending_deadline() {
                    if due.is_none_or(|(b, _)| dl < b) {
                        due = Some((dl, i));
                    }
                }
            }
            if let Some((dl, i)) = due {
                if self.sh.heap.peek_time().is_none_or(|t| dl <= t) {
                    self.drives[i].flush_pending(&mut self.sh.heap);
                    continue;
                }
            }
            let (t, tag) = self.sh.heap.pop()?;
            self.pending -= 1;
            return Some((tag, t));
        }
    }

    /// Commands submitted and not yet returned by `next_completion`.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// One counter set per drive.
    pub fn counters(&self) -> Vec<DriveCounters> {
        self.drives.iter().map(|d| d.counters()).collect()
    }

    /// Check FTL consistency of every drive (map ↔ reverse map, valid counts, free lists).
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, d) in self.drives.iter().enumerate() {
            d.check_invariants()
                .map_err(|e| format!("drive {i}: {e}"))?;
        }
        Ok(())
    }

    /// Data version stored for a logical sector (512 B) of `drive`, when built with
    /// [`Simulator::with_tracking`]: the 1-based index of the write command (per drive, in
    /// submission order) that last wrote it; `None` when unmapped, trimmed, never written or
    /// tracking is off. Preconditioning data reads as `None`.
    pub fn read_version(&self, drive: usize, sector: u64) -> Option<u32> {
        self.drives.get(drive)?.read_version(sector)
    }

    /// Write commands submitted to `drive` so far (the version the next write gets, minus 1).
    pub fn write_count(&self, drive: usize) -> u32 {
        self.drives[drive].write_seq()
    }
}
